// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * KUnit tests for the ualink/ sysfs directory (amdgpu_ualink_sysfs.c): the
 * files it creates and leaves out, what each reads, and that it goes.
 * Files are found and read through kernfs and the directory's sysfs_ops,
 * as a read(2) of them would be served.
 */

#include <kunit/device.h>
#include <kunit/test.h>
#include <linux/device.h>
#include <linux/kernfs.h>
#include <linux/kobject.h>
#include <linux/sysfs.h>
#include <linux/uuid.h>

#include "amdgpu_ualink_test_pod.h"
#include "../amdgpu_ualink_msg.h"
#include "../amdgpu_ualink_npa.h"
#include "../amdgpu_ualink_sysfs.h"

#define A	3
#define B	40
#define R	41

static const u16 ids[] = { A, B, R };
static const enum tpod_kind kinds[ARRAY_SIZE(ids)] = { TPOD_DEV, TPOD_DEV, TPOD_RAW };

MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING");

/* What the fake driver says. */
struct fake {
	struct drm_amdgpu_ualink_info info;
	DECLARE_BITMAP(active, AMDGPU_UALINK_MAX_ACCELS);
	struct amdgpu_ualink_sysfs_link link;
	u64 refusals;
};

static void fake_info(void *priv, struct drm_amdgpu_ualink_info *info)
{
	struct fake *f = priv;

	info->vpod_id = f->info.vpod_id;
	info->vpod_size = f->info.vpod_size;
	info->state = f->info.state;
}

static void fake_active(void *priv, unsigned long *mask)
{
	struct fake *f = priv;

	bitmap_copy(mask, f->active, AMDGPU_UALINK_MAX_ACCELS);
}

static void fake_link(void *priv, struct amdgpu_ualink_sysfs_link *link)
{
	struct fake *f = priv;

	*link = f->link;
}

static u64 fake_refusals(void *priv)
{
	struct fake *f = priv;

	return f->refusals;
}

static const struct amdgpu_ualink_sysfs_ops fake_ops = {
	.info = fake_info,
	.active = fake_active,
};

/* A driver that also knows its link and counts fabric refusals. */
static const struct amdgpu_ualink_sysfs_ops fake_link_ops = {
	.info = fake_info,
	.active = fake_active,
	.link = fake_link,
	.fabric_refusals = fake_refusals,
};

struct sysfs_test {
	struct device *dev;
	struct amdgpu_ualink_sysfs *sysfs;
	struct fake fake;
	char *buf;
};

static void destroy_action(void *sysfs)
{
	amdgpu_ualink_sysfs_destroy(sysfs);
}

/* A directory on a new device, removed when the test ends. */
static struct sysfs_test *setup_ops(struct kunit *test,
				    struct amdgpu_ualink_dev *udev,
				    const char *name,
				    const struct amdgpu_ualink_sysfs_ops *ops)
{
	struct sysfs_test *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	t->buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->buf);
	t->dev = kunit_device_register(test, name);
	KUNIT_ASSERT_FALSE(test, IS_ERR(t->dev));
	t->fake.info.vpod_id = 7;
	t->fake.info.vpod_size = 2;
	t->fake.info.state = AMDGPU_UALINK_STATE_ACTIVE;
	t->sysfs = amdgpu_ualink_sysfs_create(t->dev, udev, ops, &t->fake);
	KUNIT_ASSERT_FALSE(test, IS_ERR(t->sysfs));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, destroy_action,
							t->sysfs), 0);
	return t;
}

static struct sysfs_test *setup(struct kunit *test, struct amdgpu_ualink_dev *udev,
				const char *name)
{
	return setup_ops(test, udev, name, &fake_ops);
}

static struct kernfs_node *ualink_dir(struct sysfs_test *t)
{
	return kernfs_find_and_get(t->dev->kobj.sd, "ualink");
}

/* The file's contents, or NULL when there is no such file. */
static const char *read_attr(struct kunit *test, struct sysfs_test *t,
			     const char *name)
{
	struct kernfs_node *dir = ualink_dir(t), *file;
	struct kobject *kobj;
	ssize_t len;

	KUNIT_ASSERT_NOT_NULL(test, dir);
	file = kernfs_find_and_get(dir, name);
	kobj = dir->priv;
	if (!file) {
		kernfs_put(dir);
		return NULL;
	}
	memset(t->buf, 0, PAGE_SIZE);
	len = kobj->ktype->sysfs_ops->show(kobj, file->priv, t->buf);
	kernfs_put(file);
	kernfs_put(dir);
	KUNIT_ASSERT_GT(test, len, 0);
	KUNIT_EXPECT_EQ(test, len, strlen(t->buf));
	return t->buf;
}

/* Every file reads its value; a file the driver cannot fill is absent. */
static void sysfs_attributes(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, 2, ids, kinds);
	struct sysfs_test *t = setup(test, tpod_dev(pod, A), "ualink-sysfs-a");
	struct sysfs_test *tb = setup(test, tpod_dev(pod, B), "ualink-sysfs-b");
	struct tobj *o = tpod_obj(pod, 0, SZ_2M);
	struct amdgpu_ualink_import *imp;
	u64 h[2];

	__set_bit(A, t->fake.active);
	__set_bit(B, t->fake.active);
	KUNIT_EXPECT_STREQ(test, read_attr(test, t, "accel_state"), "ready\n");
	KUNIT_EXPECT_STREQ(test, read_attr(test, t, "accel_id"), "3\n");
	KUNIT_EXPECT_STREQ(test, read_attr(test, t, "vpod_id"), "7\n");
	KUNIT_EXPECT_STREQ(test, read_attr(test, t, "vpod_size"), "2\n");
	KUNIT_EXPECT_STREQ(test, read_attr(test, t, "vpod_active_accels"), "3 40\n");
	KUNIT_EXPECT_NULL(test, read_attr(test, t, "local_accels"));
	KUNIT_EXPECT_NULL(test, read_attr(test, t, "fabric_refusals"));
	KUNIT_EXPECT_STREQ(test, read_attr(test, t, "exports"), "0\n");
	KUNIT_EXPECT_STREQ(test, read_attr(test, t, "peers_connected"), "0\n");

	/* the counters follow an export and its import */
	tpod_export(pod, A, o, h);
	KUNIT_EXPECT_STREQ(test, read_attr(test, t, "exports"), "1\n");
	KUNIT_EXPECT_STREQ(test, read_attr(test, t, "pins"), "1\n");
	KUNIT_EXPECT_STREQ(test, read_attr(test, t, "grants"), "0\n");
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &imp), 0);
	KUNIT_EXPECT_STREQ(test, read_attr(test, t, "grants"), "1\n");
	KUNIT_EXPECT_STREQ(test, read_attr(test, t, "peers_connected"), "1\n");
	KUNIT_EXPECT_STREQ(test, read_attr(test, tb, "imports"), "1\n");
	KUNIT_EXPECT_STREQ(test, read_attr(test, tb, "peers_connected"), "1\n");
	KUNIT_EXPECT_STREQ(test, read_attr(test, tb, "exports"), "0\n");

	/* and go back to 0 once the import and the export are gone */
	amdgpu_ualink_import_put(imp);
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o->slot);
	KUNIT_EXPECT_STREQ(test, read_attr(test, t, "exports"), "0\n");
	KUNIT_EXPECT_STREQ(test, read_attr(test, t, "grants"), "0\n");
	KUNIT_EXPECT_STREQ(test, read_attr(test, t, "pins"), "0\n");
	KUNIT_EXPECT_STREQ(test, read_attr(test, tb, "imports"), "0\n");
}

static const char *const link_attrs[] = {
	"link_type", "bandwidth", "latency", "ppod_id", "ppod_size", "addr_mode",
};

/*
 * AMD's link attributes read what the driver says, and "unknown" for what
 * it does not: all of them without the callback, the zero ones with it.
 */
static void sysfs_link(struct kunit *test)
{
	static const uuid_t id = UUID_INIT(0x12345678, 0x9abc, 0xdef0, 0x01, 0x23,
					   0x45, 0x67, 0x89, 0xab, 0xcd, 0xef);
	struct tpod *pod = tpod_create(test, 2, ids, kinds);
	struct sysfs_test *t = setup(test, tpod_dev(pod, A), "ualink-sysfs-nolink");
	struct sysfs_test *tl = setup_ops(test, tpod_dev(pod, B), "ualink-sysfs-link",
					  &fake_link_ops);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(link_attrs); i++)
		KUNIT_EXPECT_STREQ_MSG(test, read_attr(test, t, link_attrs[i]),
				       "unknown\n", "%s", link_attrs[i]);

	/* told nothing, the other driver's files say the same */
	for (i = 0; i < ARRAY_SIZE(link_attrs); i++)
		KUNIT_EXPECT_STREQ_MSG(test, read_attr(test, tl, link_attrs[i]),
				       "unknown\n", "%s", link_attrs[i]);
	tl->fake.link.link_type = "UALink";
	tl->fake.link.addr_mode = "source-identification";
	tl->fake.link.bandwidth_mbytes = 100000;
	tl->fake.link.ppod_size = 1024;
	tl->fake.link.ppod_id = id;
	KUNIT_EXPECT_STREQ(test, read_attr(test, tl, "link_type"), "UALink\n");
	KUNIT_EXPECT_STREQ(test, read_attr(test, tl, "addr_mode"),
			   "source-identification\n");
	KUNIT_EXPECT_STREQ(test, read_attr(test, tl, "bandwidth"), "100000\n");
	KUNIT_EXPECT_STREQ(test, read_attr(test, tl, "latency"), "unknown\n");
	KUNIT_EXPECT_STREQ(test, read_attr(test, tl, "ppod_size"), "1024\n");
	KUNIT_EXPECT_STREQ(test, read_attr(test, tl, "ppod_id"),
			   "12345678-9abc-def0-0123-456789abcdef\n");
	tl->fake.link.latency_ns = 250;
	KUNIT_EXPECT_STREQ(test, read_attr(test, tl, "latency"), "250\n");

	/* and the refusals the driver counts */
	KUNIT_EXPECT_STREQ(test, read_attr(test, tl, "fabric_refusals"), "0\n");
	tl->fake.refusals = 5000000000ULL;
	KUNIT_EXPECT_STREQ(test, read_attr(test, tl, "fabric_refusals"), "5000000000\n");
}

static const char *const error_attrs[] = {
	"timeouts", "retransmissions", "drops", "connection_ends",
	"shootdown_errors", "revoke_timeouts", "release_timeouts",
};

static void expect_errors(struct kunit *test, struct sysfs_test *t,
			  const unsigned int *want)
{
	char s[24];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(error_attrs); i++) {
		snprintf(s, sizeof(s), "%u\n", want[i]);
		KUNIT_EXPECT_STREQ_MSG(test, read_attr(test, t, error_attrs[i]), s,
				       "%s", error_attrs[i]);
	}
}

/*
 * The error counters start at 0, count a message dropped on receipt, an
 * import whose exporter never answered (its retransmissions, its timeout,
 * and the end of the connection to the exporter, lost), and keep counting
 * once everything works again and the gauges are back to 0.
 */
static void sysfs_errors_grow(struct kunit *test)
{
	static const unsigned int none[ARRAY_SIZE(error_attrs)];
	static const unsigned int dropped[ARRAY_SIZE(error_attrs)] = { 0, 0, 1 };
	/* A, paused, consumed nothing either: B found it lost */
	static const unsigned int timed_out[ARRAY_SIZE(error_attrs)] = { 1, 2, 0, 1 };
	struct tpod *pod = tpod_create(test, 3, ids, kinds);
	struct sysfs_test *ta = setup(test, tpod_dev(pod, A), "ualink-sysfs-err-a");
	struct sysfs_test *tb = setup(test, tpod_dev(pod, B), "ualink-sysfs-err-b");
	struct tobj *o = tpod_obj(pod, 0, SZ_2M), *warm = tpod_obj(pod, SZ_2M, SZ_4K);
	struct amdgpu_ualink_import *imp, *other;
	struct amdgpu_ualink_msg m = tpod_npa_req(R, A, 1);
	u8 e[AMDGPU_UALINK_MSG_SIZE];
	u64 h[2], hw[2];

	expect_errors(test, ta, none);
	expect_errors(test, tb, none);

	/* a request from R, which never greeted A: dropped */
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_msg_encode(&m, e), 0);
	tpod_inject(pod, R, A, e);
	tpod_publish(pod, R, A);
	KUNIT_ASSERT_TRUE(test, tpod_wait_consumed(pod, R, A));
	expect_errors(test, ta, dropped);

	/* B imports from A once A answers, then not while A is paused */
	tpod_export(pod, A, warm, hw);
	tpod_export(pod, A, o, h);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), hw, &imp), 0);
	expect_errors(test, tb, none);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_set_timeout(tpod_mbox(pod, B), 300, 2), 0);
	tpod_pause(pod, A, true);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &other),
			-ETIMEDOUT);
	expect_errors(test, tb, timed_out);
	tpod_pause(pod, A, false);

	/*
	 * all gone: the gauges are back to 0, the counters are not (A's
	 * late answer may still add a drop at B: none is asked of drops)
	 */
	amdgpu_ualink_import_put(imp);
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o->slot);
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &warm->slot);
	KUNIT_EXPECT_STREQ(test, read_attr(test, tb, "imports"), "0\n");
	KUNIT_EXPECT_STREQ(test, read_attr(test, ta, "exports"), "0\n");
	KUNIT_EXPECT_STREQ(test, read_attr(test, tb, "timeouts"), "1\n");
	KUNIT_EXPECT_STREQ(test, read_attr(test, tb, "retransmissions"), "2\n");
	KUNIT_EXPECT_STREQ(test, read_attr(test, ta, "timeouts"), "0\n");
	KUNIT_EXPECT_NE(test, strcmp(read_attr(test, ta, "drops"), "0\n"), 0);
}

/* accel_state names each state of INFO; "ready" only when active. */
static void sysfs_states(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, 1, ids, kinds);
	struct sysfs_test *t = setup(test, tpod_dev(pod, A), "ualink-sysfs-states");
	static const struct {
		u32 state;
		const char *name;
	} cases[] = {
		{ AMDGPU_UALINK_STATE_ACTIVE, "ready\n" },
		{ AMDGPU_UALINK_STATE_RESETTING, "configured\n" },
		{ AMDGPU_UALINK_STATE_OFFLINE, "unconfigured\n" },
		{ 0, "error\n" },
		{ 99, "error\n" },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		t->fake.info.state = cases[i].state;
		KUNIT_EXPECT_STREQ_MSG(test, read_attr(test, t, "accel_state"),
				       cases[i].name, "state %u", cases[i].state);
	}
}

/* A whole pod's IDs fit one page; none is active: an empty line. */
static void sysfs_ids_whole_pod(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, 1, ids, kinds);
	struct sysfs_test *t = setup(test, tpod_dev(pod, A), "ualink-sysfs-ids");
	const char *s;

	KUNIT_EXPECT_STREQ(test, read_attr(test, t, "vpod_active_accels"), "\n");
	bitmap_fill(t->fake.active, AMDGPU_UALINK_MAX_ACCELS);
	s = read_attr(test, t, "vpod_active_accels");
	KUNIT_EXPECT_EQ(test, strlen(s), 4010);
	KUNIT_EXPECT_EQ(test, strncmp(s, "0 1 2 3 ", 8), 0);
	KUNIT_EXPECT_STREQ(test, s + strlen(s) - 10, "1022 1023\n");
}

/* Destroy removes the directory; the device and its other files stay. */
static void sysfs_destroy_removes(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, 1, ids, kinds);
	struct sysfs_test *t = setup(test, tpod_dev(pod, A), "ualink-sysfs-gone");
	struct kernfs_node *dir = ualink_dir(t);

	KUNIT_EXPECT_NOT_NULL(test, dir);
	kernfs_put(dir);
	kunit_release_action(test, destroy_action, t->sysfs);
	KUNIT_EXPECT_NULL(test, ualink_dir(t));
	KUNIT_EXPECT_NOT_NULL(test, t->dev->kobj.sd);
	/* and what is not a directory is ignored */
	amdgpu_ualink_sysfs_destroy(NULL);
	amdgpu_ualink_sysfs_destroy(ERR_PTR(-ENOMEM));
}

static struct kunit_case amdgpu_ualink_sysfs_cases[] = {
	KUNIT_CASE(sysfs_attributes),
	KUNIT_CASE(sysfs_states),
	KUNIT_CASE(sysfs_link),
	KUNIT_CASE(sysfs_errors_grow),
	KUNIT_CASE(sysfs_ids_whole_pod),
	KUNIT_CASE(sysfs_destroy_removes),
	{}
};

static struct kunit_suite amdgpu_ualink_sysfs_suite = {
	.name = "amdgpu_ualink_sysfs",
	.test_cases = amdgpu_ualink_sysfs_cases,
};

kunit_test_suite(amdgpu_ualink_sysfs_suite);
