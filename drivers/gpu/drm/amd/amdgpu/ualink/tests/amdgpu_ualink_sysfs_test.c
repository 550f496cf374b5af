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

#include "amdgpu_ualink_test_pod.h"
#include "../amdgpu_ualink_npa.h"
#include "../amdgpu_ualink_sysfs.h"

#define A	3
#define B	40

static const u16 ids[] = { A, B };
static const enum tpod_kind kinds[ARRAY_SIZE(ids)] = { TPOD_DEV, TPOD_DEV };

MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING");

/* What the fake driver says. */
struct fake {
	struct drm_amdgpu_ualink_info info;
	DECLARE_BITMAP(active, AMDGPU_UALINK_MAX_ACCELS);
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

static const struct amdgpu_ualink_sysfs_ops fake_ops = {
	.info = fake_info,
	.active = fake_active,
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
static struct sysfs_test *setup(struct kunit *test, struct amdgpu_ualink_dev *udev,
				const char *name)
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
	t->sysfs = amdgpu_ualink_sysfs_create(t->dev, udev, &fake_ops, &t->fake);
	KUNIT_ASSERT_FALSE(test, IS_ERR(t->sysfs));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, destroy_action,
							t->sysfs), 0);
	return t;
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
	KUNIT_EXPECT_NULL(test, read_attr(test, t, "link_type"));
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
	KUNIT_CASE(sysfs_ids_whole_pod),
	KUNIT_CASE(sysfs_destroy_removes),
	{}
};

static struct kunit_suite amdgpu_ualink_sysfs_suite = {
	.name = "amdgpu_ualink_sysfs",
	.test_cases = amdgpu_ualink_sysfs_cases,
};

kunit_test_suite(amdgpu_ualink_sysfs_suite);
