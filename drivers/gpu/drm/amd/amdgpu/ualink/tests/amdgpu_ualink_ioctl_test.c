// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * KUnit tests for the UALink ioctl (amdgpu_ualink_ioctl.c): every
 * malformed argument, the errnos of each operation, and a batched import
 * through user memory, with a fake driver side on the in-memory pod.
 */

#include <kunit/test.h>
#include <linux/kthread.h>
#include <linux/mman.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/uaccess.h>

#include "amdgpu_ualink_test_pod.h"
#include "../amdgpu_ualink_ioctl.h"
#include "../amdgpu_ualink_ioctl_check.h"
#include "../amdgpu_ualink_mbox_internal.h"

#define A	3
#define B	40
#define C	7
#define D	1000	/* another virtual pod */

static const u16 ids[] = { A, B, D };
static const enum tpod_kind kinds[] = { TPOD_DEV, TPOD_DEV, TPOD_DEV };

/* The driver's side: GEM handle n names objs[n - 1]. */
struct fake_drv {
	struct tpod *pod;
	u16 id;
	u32 state;
	struct tobj *objs[4];
	bool refused[4];
	struct amdgpu_ualink_import *held[64];
	void *local[64];
	unsigned int n;
	bool no_fds;	/* the fd table is full */
	bool closing;	/* the last handle goes while an export looks it up */
	bool closed[4];	/* handles closed */
	int pins_locked[4];	/* the buffer's pins when the handle lock was taken */
	struct mutex handle_lock;	/* object_name_lock */
};

static void f_info(void *priv, struct drm_amdgpu_ualink_info *info)
{
	struct fake_drv *f = priv;
	struct tpod_node *self = tpod_node(f->pod, f->id);
	unsigned int i;

	info->vpod_id = self->vpod;
	for (i = 0; i < f->pod->n; i++)
		info->vpod_size += f->pod->node[i].vpod == self->vpod;
	info->state = f->state;
}

static int f_export_obj(void *priv, struct drm_file *file, u32 gem_handle,
			void **obj, u64 *size, void ***slot)
{
	struct fake_drv *f = priv;
	struct tobj *o;

	if (!gem_handle || gem_handle > ARRAY_SIZE(f->objs) || !f->objs[gem_handle - 1])
		return -ENOENT;
	if (f->refused[gem_handle - 1])
		return -EPERM;
	o = f->objs[gem_handle - 1];
	*obj = o;
	*size = o->size;
	*slot = &o->slot;
	/* another thread's GEM_CLOSE, after the lookup, before the export */
	if (f->closing)
		f->closed[gem_handle - 1] = true;
	return 0;
}

static bool f_lock_handles(void *priv, void *obj)
{
	struct fake_drv *f = priv;
	unsigned int i;

	mutex_lock(&f->handle_lock);
	for (i = 0; i < ARRAY_SIZE(f->objs); i++) {
		if (f->objs[i] == obj) {
			f->pins_locked[i] = f->objs[i]->pins;
			return !f->closed[i];
		}
	}
	return false;
}

static void f_unlock_handles(void *priv, void *obj)
{
	struct fake_drv *f = priv;

	mutex_unlock(&f->handle_lock);
}

static void f_put(void *priv, void *obj)
{
}

/*
 * The fake's errnos (-ENOMEM here, -EMFILE with @no_fds below) are its
 * own: the cases that provoke them check only that the core passes a
 * driver's answer through and undoes what it did; the kernel's own
 * ENOMEM and EMFILE are the IGT errnos programs'.
 */
static int f_keep(struct fake_drv *f, struct amdgpu_ualink_import *imp, void *local)
{
	if (f->n == ARRAY_SIZE(f->held)) {
		amdgpu_ualink_import_put(imp);
		return -ENOMEM;
	}
	f->held[f->n] = imp;
	f->local[f->n] = local;
	return f->n++;
}

static int f_import_fd(void *priv, struct drm_file *file,
		       struct amdgpu_ualink_import *imp, void *local, u32 flags)
{
	struct fake_drv *f = priv;
	int n;

	if (f->no_fds || (flags & ~AMDGPU_UALINK_IMPORT_CLOEXEC)) {
		/* the reference is taken over in all cases */
		if (imp)
			amdgpu_ualink_import_put(imp);
		else
			((struct tobj *)local)->refs--;
		return f->no_fds ? -EMFILE : -EINVAL;
	}
	n = f_keep(priv, imp, local);

	return n < 0 ? n : 100 + n;
}

static int f_import_handle(void *priv, struct drm_file *file,
			   struct amdgpu_ualink_import *imp, void *local,
			   u32 *gem_handle)
{
	int n = f_keep(priv, imp, local);

	if (n < 0)
		return n;
	*gem_handle = 1000 + n;
	return 0;
}

static const struct amdgpu_ualink_gem_ops fake_gops = {
	.info = f_info,
	.export_obj = f_export_obj,
	.lock_handles = f_lock_handles,
	.unlock_handles = f_unlock_handles,
	.put = f_put,
	.import_fd = f_import_fd,
	.import_handle = f_import_handle,
};

static void fake_release(void *data)
{
	struct fake_drv *f = data;
	unsigned int i;

	for (i = 0; i < f->n; i++) {
		amdgpu_ualink_import_put(f->held[i]);
		if (f->local[i])
			((struct tobj *)f->local[i])->refs--;
	}
	f->n = 0;
	amdgpu_ualink_dev_flush(tpod_node(f->pod, f->id)->dev);
}

static struct fake_drv *fake(struct kunit *test, struct tpod *pod, u16 id)
{
	struct fake_drv *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, f);
	f->pod = pod;
	f->id = id;
	mutex_init(&f->handle_lock);
	f->state = AMDGPU_UALINK_STATE_ACTIVE;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, fake_release, f), 0);
	return f;
}

static int ioctl(struct fake_drv *f, struct drm_amdgpu_ualink *args)
{
	return amdgpu_ualink_ioctl(tpod_node(f->pod, f->id)->dev, f->state,
				   &fake_gops, f, NULL, args);
}

/*
 * @unused: when not 0, the word u.raw[@unused] is made non-zero as well
 * (an initializer cannot set it: naming a second member of the union
 * would drop what @args says for the first).
 */
struct bad_case {
	const char *name;
	struct drm_amdgpu_ualink args;
	unsigned int unused;
};

static const struct bad_case bad_cases[] = {
	{ "op 0", { .op = 0 } },
	{ "op 5", { .op = 5 } },
	{ "pad", { .op = AMDGPU_UALINK_OP_INFO, .pad = 1 } },
	{ "info output not zero", { .op = AMDGPU_UALINK_OP_INFO, .u.info.state = 1 } },
	{ "export pad", { .op = AMDGPU_UALINK_OP_EXPORT, .u.exp = { 1, 1 } } },
	{ "export handle not zero",
	  { .op = AMDGPU_UALINK_OP_EXPORT, .u.exp = { 1, 0, { 3, 0 } } } },
	{ "export unused bytes", { .op = AMDGPU_UALINK_OP_EXPORT, .u.raw[5] = 1 } },
	{ "import zero handle", { .op = AMDGPU_UALINK_OP_IMPORT } },
	{ "import unknown flag",
	  { .op = AMDGPU_UALINK_OP_IMPORT, .u.imp = { { 3, 1 }, 1 << 1 } } },
	{ "import fd not zero",
	  { .op = AMDGPU_UALINK_OP_IMPORT, .u.imp = { { 3, 1 }, 0, 5 } } },
	{ "import unused bytes",
	  { .op = AMDGPU_UALINK_OP_IMPORT, .u.imp = { { 3, 1 } } }, 4 },
	{ "batch count 0", { .op = AMDGPU_UALINK_OP_IMPORT_BATCH } },
	{ "batch count 1025",
	  { .op = AMDGPU_UALINK_OP_IMPORT_BATCH, .u.batch = { 0, 1025 } } },
	{ "batch unknown flag",
	  { .op = AMDGPU_UALINK_OP_IMPORT_BATCH, .u.batch = { 0, 1, 1 << 3 } } },
	{ "batch unused bytes",
	  { .op = AMDGPU_UALINK_OP_IMPORT_BATCH, .u.batch = { 0, 1 } }, 2 },
};

static void bad_desc(const struct bad_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(bad, bad_cases, bad_desc);

/* Each malformed argument is -EINVAL, with or without UALink. */
static void ioctl_malformed(struct kunit *test)
{
	const struct bad_case *c = test->param_value;
	struct drm_amdgpu_ualink args = c->args;

	if (c->unused)
		args.u.raw[c->unused] = 1;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_ioctl_check(&args), -EINVAL);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_ioctl(NULL, AMDGPU_UALINK_STATE_ACTIVE,
						  &fake_gops, NULL, NULL, &args),
			-EINVAL);
	/* amdgpu built without UALink answers with this */
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_ioctl_unsupported(&args), -EINVAL);
}

/*
 * No UALink: -EOPNOTSUPP, INFO too. Not active: -ENETDOWN; INFO still
 * answers when active or not.
 */
static void ioctl_not_available(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, ARRAY_SIZE(ids), ids, kinds);
	struct fake_drv *f = fake(test, pod, A);
	struct drm_amdgpu_ualink args = { .op = AMDGPU_UALINK_OP_INFO };

	KUNIT_EXPECT_EQ(test, amdgpu_ualink_ioctl(NULL, AMDGPU_UALINK_STATE_ACTIVE,
						  &fake_gops, f, NULL, &args),
			-EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_ioctl_unsupported(&args), -EOPNOTSUPP);
	tpod_node(pod, D)->vpod = 1;
	KUNIT_ASSERT_EQ(test, ioctl(f, &args), 0);
	KUNIT_EXPECT_EQ(test, args.u.info.accel_id, A);
	KUNIT_EXPECT_EQ(test, args.u.info.vpod_id, 0);
	KUNIT_EXPECT_EQ(test, args.u.info.vpod_size, 2);
	KUNIT_EXPECT_EQ(test, args.u.info.state, AMDGPU_UALINK_STATE_ACTIVE);

	f->state = AMDGPU_UALINK_STATE_RESETTING;
	args = (struct drm_amdgpu_ualink) { .op = AMDGPU_UALINK_OP_INFO };
	KUNIT_ASSERT_EQ(test, ioctl(f, &args), 0);
	KUNIT_EXPECT_EQ(test, args.u.info.state, AMDGPU_UALINK_STATE_RESETTING);
	args = (struct drm_amdgpu_ualink) {
		.op = AMDGPU_UALINK_OP_EXPORT, .u.exp.gem_handle = 1,
	};
	KUNIT_EXPECT_EQ(test, ioctl(f, &args), -ENETDOWN);
	f->state = AMDGPU_UALINK_STATE_OFFLINE;
	args = (struct drm_amdgpu_ualink) {
		.op = AMDGPU_UALINK_OP_IMPORT, .u.imp.handle.lo = 1,
	};
	KUNIT_EXPECT_EQ(test, ioctl(f, &args), -ENETDOWN);
}

/*
 * An otherwise well-formed argument of @op with @flags: does the check
 * accept it (the device without UALink then says -EOPNOTSUPP) or refuse
 * it (-EINVAL)?
 */
static bool accepted(u32 op, u32 flags, u32 count)
{
	struct drm_amdgpu_ualink args = { .op = op };

	if (op == AMDGPU_UALINK_OP_IMPORT) {
		args.u.imp.handle.lo = 3;
		args.u.imp.flags = flags;
	} else if (op == AMDGPU_UALINK_OP_IMPORT_BATCH) {
		args.u.batch.count = count;
		args.u.batch.flags = flags;
	}
	return amdgpu_ualink_ioctl_unsupported(&args) == -EOPNOTSUPP;
}

/*
 * Discovery: INFO lists exactly the operations and flags that the ioctl
 * accepts, and the largest batch; each bit of each mask both ways.
 */
static void ioctl_info_caps(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, ARRAY_SIZE(ids), ids, kinds);
	struct fake_drv *f = fake(test, pod, A);
	struct drm_amdgpu_ualink args = { .op = AMDGPU_UALINK_OP_INFO };
	const struct drm_amdgpu_ualink_info *info = &args.u.info;
	unsigned int bit;

	KUNIT_ASSERT_EQ(test, ioctl(f, &args), 0);
	KUNIT_EXPECT_NE(test, info->ops, 0);
	for (bit = 0; bit < 32; bit++) {
		KUNIT_EXPECT_EQ_MSG(test, accepted(bit, 0, 1),
				    !!(info->ops & BIT(bit)), "op %u", bit);
		KUNIT_EXPECT_EQ_MSG(test,
				    accepted(AMDGPU_UALINK_OP_IMPORT, BIT(bit), 1),
				    !!(info->import_flags & BIT(bit)),
				    "import flag %u", bit);
		KUNIT_EXPECT_EQ_MSG(test,
				    accepted(AMDGPU_UALINK_OP_IMPORT_BATCH, BIT(bit), 1),
				    !!(info->batch_flags & BIT(bit)),
				    "batch flag %u", bit);
	}
	/* and every flag at once */
	KUNIT_EXPECT_TRUE(test, accepted(AMDGPU_UALINK_OP_IMPORT,
					 info->import_flags, 1));
	KUNIT_EXPECT_TRUE(test, accepted(AMDGPU_UALINK_OP_IMPORT_BATCH,
					 info->batch_flags, 1));
	KUNIT_EXPECT_TRUE(test, accepted(AMDGPU_UALINK_OP_IMPORT_BATCH, 0,
					 info->batch_max));
	KUNIT_EXPECT_FALSE(test, accepted(AMDGPU_UALINK_OP_IMPORT_BATCH, 0,
					  info->batch_max + 1));
}

/* Export and import through the ioctl, with each errno. */
static void ioctl_export_import(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, ARRAY_SIZE(ids), ids, kinds);
	struct fake_drv *fa = fake(test, pod, A), *fb = fake(test, pod, B);
	struct fake_drv *fd = fake(test, pod, D);
	struct drm_amdgpu_ualink args = {}, imp;

	tpod_node(pod, D)->vpod = 1;
	fa->objs[0] = tpod_obj(pod, 0, SZ_2M);
	fa->objs[1] = tpod_obj(pod, 0, SZ_4K);
	fa->refused[1] = true;

	args.op = AMDGPU_UALINK_OP_EXPORT;
	args.u.exp.gem_handle = 1;
	KUNIT_ASSERT_EQ(test, ioctl(fa, &args), 0);
	KUNIT_EXPECT_EQ(test, args.u.exp.handle.lo & AMDGPU_UALINK_HANDLE_ACCEL_ID_MASK, A);
	/* pinned before the handle lock, the pin the export's */
	KUNIT_EXPECT_EQ(test, fa->pins_locked[0], 1);
	KUNIT_EXPECT_EQ(test, fa->objs[0]->pins, 1);
	/* again: the same export, the new pin taken and dropped */
	args.u.exp.handle.lo = 0;
	args.u.exp.handle.hi = 0;
	KUNIT_ASSERT_EQ(test, ioctl(fa, &args), 0);
	KUNIT_EXPECT_EQ(test, fa->pins_locked[0], 2);
	KUNIT_EXPECT_EQ(test, fa->objs[0]->pins, 1);
	KUNIT_EXPECT_EQ(test, tpod_node(pod, A)->dev->num_exports, 1);

	imp = (struct drm_amdgpu_ualink) { .op = AMDGPU_UALINK_OP_IMPORT };
	imp.u.imp.handle = args.u.exp.handle;
	KUNIT_ASSERT_EQ(test, ioctl(fb, &imp), 0);
	KUNIT_EXPECT_EQ(test, imp.u.imp.fd, 100);
	KUNIT_EXPECT_EQ(test, fb->held[0]->size, SZ_2M);
	/* our own handle: our own buffer */
	imp.u.imp.fd = 0;
	KUNIT_ASSERT_EQ(test, ioctl(fa, &imp), 0);
	KUNIT_EXPECT_NULL(test, fa->held[0]);
	KUNIT_EXPECT_PTR_EQ(test, fa->local[0], fa->objs[0]);
	/* another virtual pod */
	imp.u.imp.fd = 0;
	KUNIT_EXPECT_EQ(test, ioctl(fd, &imp), -EACCES);
	/* an unknown handle */
	imp.u.imp.handle.hi ^= 1;
	KUNIT_EXPECT_EQ(test, ioctl(fb, &imp), -ENOENT);
	KUNIT_EXPECT_EQ(test, ioctl(fa, &imp), -ENOENT);

	args.u.exp = (struct drm_amdgpu_ualink_export) { .gem_handle = 9 };
	KUNIT_EXPECT_EQ(test, ioctl(fa, &args), -ENOENT);
	/*
	 * The fake driver refuses it itself: this checks only that the core
	 * passes a driver's refusal through, unchanged and without a pin
	 * left (which rules refuse is amdgpu's, tested by its glue's suite).
	 */
	args.u.exp = (struct drm_amdgpu_ualink_export) { .gem_handle = 2 };
	KUNIT_EXPECT_EQ(test, ioctl(fa, &args), -EPERM);
	KUNIT_EXPECT_EQ(test, fa->objs[1]->pins, 0);

	fake_release(fb);
	fake_release(fa);
	KUNIT_EXPECT_EQ(test, fa->objs[0]->refs, 1);	/* the export's */
	amdgpu_ualink_export_destroy(tpod_node(pod, A)->dev, &fa->objs[0]->slot);
	KUNIT_EXPECT_EQ(test, fa->objs[0]->refs, 0);
}

/*
 * An export racing the buffer's last GEM_CLOSE: the handle was looked up,
 * then closed before the export was made. The export is refused as if the
 * handle had never been there, and the buffer has none.
 */
static void ioctl_export_after_close(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, ARRAY_SIZE(ids), ids, kinds);
	struct fake_drv *fa = fake(test, pod, A);
	struct drm_amdgpu_ualink args = {
		.op = AMDGPU_UALINK_OP_EXPORT, .u.exp.gem_handle = 1,
	};

	fa->objs[0] = tpod_obj(pod, 0, SZ_2M);
	fa->closing = true;
	KUNIT_EXPECT_EQ(test, ioctl(fa, &args), -ENOENT);
	KUNIT_EXPECT_NULL(test, fa->objs[0]->slot);
	KUNIT_EXPECT_EQ(test, tpod_node(pod, A)->dev->num_exports, 0);
	KUNIT_EXPECT_EQ(test, args.u.exp.handle.lo, 0);
	/* pinned before the handle lock, and the pin dropped with the export */
	KUNIT_EXPECT_EQ(test, fa->pins_locked[0], 1);
	KUNIT_EXPECT_EQ(test, fa->objs[0]->pins, 0);
	KUNIT_EXPECT_EQ(test, fa->objs[0]->refs, 0);
	amdgpu_ualink_export_destroy(tpod_node(pod, A)->dev, &fa->objs[0]->slot);
}

static int ioctl_file(struct fake_drv *f, struct drm_file *file,
		      struct drm_amdgpu_ualink *args)
{
	return amdgpu_ualink_ioctl(tpod_node(f->pod, f->id)->dev, f->state,
				   &fake_gops, f, file, args);
}

struct quota_racer {
	struct fake_drv *f;
	struct drm_file *file;
	struct drm_amdgpu_ualink args;
	int ret;
	struct completion done;
};

static int quota_racer_fn(void *data)
{
	struct quota_racer *r = data;

	r->ret = ioctl_file(r->f, r->file, &r->args);
	complete(&r->done);
	return 0;
}

/* The calling thread's next interruptible wait ends at once. */
static void signal_self(void)
{
	allow_signal(SIGUSR1);
	send_sig(SIGUSR1, current, 1);
}

static void unsignal_self(void)
{
	flush_signals(current);
	disallow_signal(SIGUSR1);
}

/* An entry an interrupted batch left for its restart. */
static bool untouched(const struct drm_amdgpu_ualink_batch_entry *e)
{
	return !e->gem_handle && !e->fd && !e->error;
}

static bool no_owner_charged(void *arg)
{
	struct amdgpu_ualink_mbox *mbox = arg;
	bool empty;

	mutex_lock(&mbox->owners_lock);
	empty = xa_empty(&mbox->owners);
	mutex_unlock(&mbox->owners_lock);
	return empty;
}

/*
 * A process's quota of imports in flight, with B's at 1. Its import of
 * A's handle on file f1 is interrupted at once (a signal is pending) while
 * A is paused: the request stays outstanding, and the quota with it, so
 * its import of D's handle on another file (f2, as a reopened render node
 * would be) fails with -EDQUOT, sending nothing. Another process (a kernel
 * thread) imports D's handle on f1 meanwhile; then the first process may
 * import that granted handle (nothing in flight, nothing sent). A batch
 * larger than the quota fails whole. Once A answered, the process
 * imports again.
 */
static void ioctl_quota(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, ARRAY_SIZE(ids), ids, kinds);
	struct fake_drv *fa = fake(test, pod, A), *fb = fake(test, pod, B);
	struct fake_drv *fd = fake(test, pod, D);
	struct drm_file *f1 = kunit_kzalloc(test, sizeof(long), GFP_KERNEL);
	struct drm_file *f2 = kunit_kzalloc(test, sizeof(long), GFP_KERNEL);
	struct drm_amdgpu_ualink_batch_entry e[2] = {}, __user *ue;
	struct drm_amdgpu_ualink args = {}, ha, hd, try;
	struct quota_racer *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	struct amdgpu_ualink_mbox_stats st;
	struct task_struct *task;
	unsigned long addr;
	u64 sent;

	KUNIT_ASSERT_NOT_NULL(test, r);
	fa->objs[0] = tpod_obj(pod, 0, SZ_4K);
	fd->objs[0] = tpod_obj(pod, 0, SZ_4K);
	args.op = AMDGPU_UALINK_OP_EXPORT;
	args.u.exp.gem_handle = 1;
	KUNIT_ASSERT_EQ(test, ioctl(fa, &args), 0);
	ha = (struct drm_amdgpu_ualink) { .op = AMDGPU_UALINK_OP_IMPORT };
	ha.u.imp.handle = args.u.exp.handle;
	args.u.exp = (struct drm_amdgpu_ualink_export) { .gem_handle = 1 };
	KUNIT_ASSERT_EQ(test, ioctl(fd, &args), 0);
	hd = (struct drm_amdgpu_ualink) { .op = AMDGPU_UALINK_OP_IMPORT };
	hd.u.imp.handle = args.u.exp.handle;
	tpod_dev(pod, B)->import_quota = 1;

	/* the import of A's handle stops waiting at once; its request stays */
	tpod_pause(pod, A, true);
	signal_self();
	try = ha;
	KUNIT_EXPECT_EQ(test, ioctl_file(fb, f1, &try), -ERESTARTSYS);
	unsignal_self();
	KUNIT_EXPECT_FALSE(test, no_owner_charged(tpod_mbox(pod, B)));

	amdgpu_ualink_mbox_get_stats(tpod_mbox(pod, B), -1, &st);
	sent = st.sent[AMDGPU_UALINK_MSG_NPA_REQ];
	try = hd;
	KUNIT_EXPECT_EQ(test, ioctl_file(fb, f2, &try), -EDQUOT);
	amdgpu_ualink_mbox_get_stats(tpod_mbox(pod, B), -1, &st);
	KUNIT_EXPECT_EQ(test, st.sent[AMDGPU_UALINK_MSG_NPA_REQ], sent);
	/* another process is not affected */
	r->f = fb;
	r->file = f1;
	r->args = hd;
	init_completion(&r->done);
	task = kthread_run(quota_racer_fn, r, "ualink_quota");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	get_task_struct(task);
	wait_for_completion(&r->done);
	kthread_stop(task);
	put_task_struct(task);
	KUNIT_EXPECT_EQ(test, r->ret, 0);
	amdgpu_ualink_mbox_get_stats(tpod_mbox(pod, B), -1, &st);
	KUNIT_EXPECT_EQ(test, st.sent[AMDGPU_UALINK_MSG_NPA_REQ], sent + 1);
	/* D's handle is granted now: importing it again sends nothing */
	try = hd;
	KUNIT_EXPECT_EQ(test, ioctl_file(fb, f2, &try), 0);
	amdgpu_ualink_mbox_get_stats(tpod_mbox(pod, B), -1, &st);
	KUNIT_EXPECT_EQ(test, st.sent[AMDGPU_UALINK_MSG_NPA_REQ], sent + 1);
	/* a batch above the quota, whatever else is in flight */
	addr = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE, PROT_READ | PROT_WRITE,
			     MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE_MSG(test, addr, 0, "no user memory");
	ue = (struct drm_amdgpu_ualink_batch_entry __user *)addr;
	e[0].handle = hd.u.imp.handle;
	e[1].handle = hd.u.imp.handle;
	KUNIT_ASSERT_EQ(test, copy_to_user(ue, e, sizeof(e)), 0);
	args = (struct drm_amdgpu_ualink) { .op = AMDGPU_UALINK_OP_IMPORT_BATCH };
	args.u.batch.entries = addr;
	args.u.batch.count = 2;
	KUNIT_EXPECT_EQ(test, ioctl_file(fb, f2, &args), -EDQUOT);
	args.u.batch.count = 1;
	KUNIT_EXPECT_EQ(test, ioctl_file(fb, f2, &args), 0);

	/* A answers the request nobody waits for: the quota is back */
	tpod_pause(pod, A, false);
	KUNIT_EXPECT_TRUE(test, tpod_wait_for(no_owner_charged, tpod_mbox(pod, B), 10000));
	try = ha;
	KUNIT_EXPECT_EQ(test, ioctl_file(fb, f2, &try), 0);

	fake_release(fb);
	amdgpu_ualink_export_destroy(tpod_node(pod, A)->dev, &fa->objs[0]->slot);
	amdgpu_ualink_export_destroy(tpod_node(pod, D)->dev, &fd->objs[0]->slot);
}

struct batch_run {
	struct amdgpu_ualink_dev *dev;
	struct fake_drv *f;
	struct drm_amdgpu_ualink_batch_entry e[32];
	unsigned int count;
	s64 us;		/* how long the batch took */
	struct completion done;
};

static int batch_thread(void *arg)
{
	struct batch_run *r = arg;
	ktime_t t0 = ktime_get();

	allow_signal(SIGKILL);	/* a test that gives up on it */
	amdgpu_ualink_import_batch(r->dev, &fake_gops, r->f, NULL, r->e,
				   r->count, 0);
	r->us = ktime_us_delta(ktime_get(), t0);
	complete(&r->done);
	return 0;
}

static bool one_handle(void *arg)
{
	return READ_ONCE(((struct fake_drv *)arg)->n) == 1;
}

/*
 * A batch finishes its entries as their answers arrive: while the exporter
 * of the first entry is held, the second entry, answered, has its GEM
 * handle already; the first gets its own once its exporter answers.
 */
static void ioctl_batch_completion_order(struct kunit *test)
{
	static const u16 abc[] = { A, B, C };
	struct tpod *pod = tpod_create(test, ARRAY_SIZE(abc), abc, kinds);
	struct tobj *oa = tpod_obj(pod, 0, SZ_4K), *oc = tpod_obj(pod, 0, SZ_4K);
	struct batch_run *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	struct task_struct *t;
	u64 ha[2], hc[2];

	KUNIT_ASSERT_NOT_NULL(test, r);
	r->dev = tpod_dev(pod, B);
	r->f = fake(test, pod, B);
	r->count = 2;
	init_completion(&r->done);
	/* held for as long as the test likes: no retransmission gives up */
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_set_timeout(tpod_mbox(pod, B),
							     60000, 3), 0);
	tpod_export(pod, A, oa, ha);
	tpod_export(pod, C, oc, hc);
	r->e[0].handle = (struct drm_amdgpu_ualink_handle) { ha[0], ha[1] };
	r->e[1].handle = (struct drm_amdgpu_ualink_handle) { hc[0], hc[1] };

	tpod_pause(pod, A, true);
	t = kthread_run(batch_thread, r, "ualink-batch");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	/* C's entry is finished while A's request waits in A's ring */
	KUNIT_EXPECT_TRUE(test, tpod_wait_for(one_handle, r->f, 10000));
	KUNIT_EXPECT_FALSE(test, completion_done(&r->done));
	KUNIT_EXPECT_PTR_EQ(test, r->f->held[0] ? r->f->held[0]->dev : NULL, r->dev);
	tpod_pause(pod, A, false);
	wait_for_completion(&r->done);
	KUNIT_EXPECT_EQ(test, r->e[0].error, 0);
	KUNIT_EXPECT_EQ(test, r->e[1].error, 0);
	KUNIT_EXPECT_EQ(test, r->e[1].gem_handle, 1000);	/* the first made */
	KUNIT_EXPECT_EQ(test, r->e[0].gem_handle, 1001);

	fake_release(r->f);
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 0);
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, C), 0);
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &oa->slot);
	amdgpu_ualink_export_destroy(tpod_dev(pod, C), &oc->slot);
}

/* A release waits on the peer's release lane. */
static bool release_waiting(void *arg)
{
	struct amdgpu_ualink_peer *peer = arg;
	bool waiting;

	mutex_lock(&peer->lock);
	waiting = !list_empty(&peer->ctl);
	mutex_unlock(&peer->lock);
	return waiting;
}

static bool no_grants_a(void *arg)
{
	return tpod_grants(arg, A) == 0;
}

static bool a_granted(void *arg)
{
	return tpod_grants(arg, A) == 1;
}

/* B's imports all gone: released after the grant went back at A */
static bool no_imports_b(void *arg)
{
	return READ_ONCE(tpod_dev(arg, B)->num_imports) == 0;
}

#define TIMED_IMPORTS	8

/* Another process's imports of @h, one by one: how long each took, on average. */
static s64 timed_imports(struct kunit *test, struct batch_run *r, u64 (*h)[2])
{
	struct task_struct *t;
	s64 us = 0;
	unsigned int i;

	for (i = 0; i < TIMED_IMPORTS; i++) {
		r->count = 1;
		r->e[0] = (struct drm_amdgpu_ualink_batch_entry) {};
		r->e[0].handle = (struct drm_amdgpu_ualink_handle) { h[i][0], h[i][1] };
		reinit_completion(&r->done);
		t = kthread_run(batch_thread, r, "ualink-timed");
		KUNIT_ASSERT_FALSE(test, IS_ERR(t));
		wait_for_completion(&r->done);
		KUNIT_EXPECT_EQ(test, r->e[0].error, 0);
		us += r->us;
	}
	return us / TIMED_IMPORTS;
}

#define FLOOD_FILES	64
#define FLOOD_BATCH	16

/*
 * One process floods a paused exporter (A) through 64 files, a batch of 16
 * handles on each, stopping to wait at once (a signal is pending): its
 * 1,024 requests stay outstanding, its whole quota, and a 65th batch gets
 * -EDQUOT in every entry. Meanwhile another process's import from a
 * healthy exporter (C) completes; both its times, unloaded and during the
 * flood, are printed. The flooder's release of an import it held from A
 * waits ahead of the flood, on the release lane, not behind it; once A
 * answers, it is answered and every flooded request ends (unknown handles:
 * A never exported them), the quota with them.
 */
static void ioctl_flood_fair(struct kunit *test)
{
	static const u16 abc[] = { A, B, C };
	struct tpod *pod = tpod_create(test, ARRAY_SIZE(abc), abc, kinds);
	struct tobj *oa = tpod_obj(pod, 0, SZ_4K);
	struct tobj *oc[3 * TIMED_IMPORTS];
	struct drm_amdgpu_ualink_batch_entry *e;
	struct batch_run *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	struct amdgpu_ualink_dev *b = tpod_dev(pod, B);
	struct fake_drv *fb = fake(test, pod, B);
	struct amdgpu_ualink_peer *peer;
	s64 unloaded, loaded, released, drained;
	u64 ha[2], hc[3 * TIMED_IMPORTS][2];
	unsigned int i, j, held, intr = 0, quota = 0;
	ktime_t t0;

	e = kunit_kcalloc(test, FLOOD_BATCH, sizeof(*e), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	KUNIT_ASSERT_NOT_NULL(test, e);
	init_completion(&r->done);
	r->dev = b;
	r->f = fb;
	b->import_quota = FLOOD_FILES * FLOOD_BATCH;
	tpod_export(pod, A, oa, ha);
	for (i = 0; i < ARRAY_SIZE(oc); i++) {
		oc[i] = tpod_obj(pod, 0, SZ_4K);
		tpod_export(pod, C, oc[i], hc[i]);
	}
	timed_imports(test, r, hc);	/* connected to C */
	unloaded = timed_imports(test, r, hc + TIMED_IMPORTS);
	/* the flooder holds an import from A */
	e[0].handle = (struct drm_amdgpu_ualink_handle) { ha[0], ha[1] };
	amdgpu_ualink_import_batch(b, &fake_gops, fb, NULL, e, 1, 0);
	KUNIT_ASSERT_EQ(test, e[0].error, 0);
	held = fb->n - 1;

	tpod_pause(pod, A, true);
	signal_self();
	for (i = 0; i <= FLOOD_FILES; i++) {
		struct drm_file *file = kunit_kzalloc(test, sizeof(long), GFP_KERNEL);

		for (j = 0; j < FLOOD_BATCH; j++)
			e[j] = (struct drm_amdgpu_ualink_batch_entry) {
				.handle.lo = ((u64)(i * FLOOD_BATCH + j + 1) <<
					      AMDGPU_UALINK_ACCEL_ID_BITS) | A,
				.handle.hi = 0xf100d,
			};
		KUNIT_EXPECT_EQ(test, amdgpu_ualink_import_batch(b, &fake_gops, fb, file,
								 e, FLOOD_BATCH, 0),
				i < FLOOD_FILES ? -ERESTARTSYS : 0);
		for (j = 0; j < FLOOD_BATCH; j++) {
			intr += untouched(&e[j]);
			quota += e[j].error == -EDQUOT;
		}
	}
	unsignal_self();
	KUNIT_EXPECT_EQ(test, intr, FLOOD_FILES * FLOOD_BATCH);
	KUNIT_EXPECT_EQ(test, quota, FLOOD_BATCH);

	loaded = timed_imports(test, r, hc + 2 * TIMED_IMPORTS);
	kunit_info(test, "imports from a healthy exporter: %lld us each unloaded, %lld us with %u requests of another process waiting (%lld.%02lldx)\n",
		   unloaded, loaded, intr, loaded / max(unloaded, 1LL),
		   (loaded * 100 / max(unloaded, 1LL)) % 100);

	/* the import from A goes: its release waits ahead of the flood */
	amdgpu_ualink_import_put(fb->held[held]);
	fb->held[held] = NULL;
	peer = xa_load(&tpod_mbox(pod, B)->peers, A);
	KUNIT_ASSERT_NOT_NULL(test, peer);
	KUNIT_EXPECT_TRUE(test, tpod_wait_for(release_waiting, peer, 10000));
	mutex_lock(&peer->lock);
	KUNIT_EXPECT_EQ(test, peer->queued,
			FLOOD_FILES * FLOOD_BATCH - AMDGPU_UALINK_IN_FLIGHT);
	mutex_unlock(&peer->lock);

	t0 = ktime_get();
	tpod_pause(pod, A, false);
	KUNIT_EXPECT_TRUE(test, tpod_wait_for(no_grants_a, pod, 10000));
	released = ktime_us_delta(ktime_get(), t0);
	KUNIT_EXPECT_TRUE(test, tpod_wait_for(no_owner_charged, tpod_mbox(pod, B), 30000));
	drained = ktime_us_delta(ktime_get(), t0);
	kunit_info(test, "once the exporter answers: the release done in %lld us, the %u flooded requests in %lld us\n",
		   released, intr, drained);

	fake_release(fb);
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &oa->slot);
	for (i = 0; i < ARRAY_SIZE(oc); i++)
		amdgpu_ualink_export_destroy(tpod_dev(pod, C), &oc[i]->slot);
}

/*
 * At most AMDGPU_UALINK_REQ_QUEUED imports wait for one exporter, whoever
 * makes them: one process with a quota larger than that fills the queue of
 * a paused exporter (16 in flight, 4,096 waiting, each batch stopping to
 * wait at once); the 32 imports after those fail with -ENOBUFS, sending
 * nothing.
 */
static void ioctl_queue_full(struct kunit *test)
{
	const unsigned int batch = AMDGPU_UALINK_BATCH_MAX;
	const unsigned int full = AMDGPU_UALINK_REQ_QUEUED + AMDGPU_UALINK_IN_FLIGHT;
	static const u16 ab[] = { A, B };
	struct tpod *pod = tpod_create(test, ARRAY_SIZE(ab), ab, kinds);
	struct amdgpu_ualink_dev *b = tpod_dev(pod, B);
	struct fake_drv *fb = fake(test, pod, B);
	struct drm_amdgpu_ualink_batch_entry *e;
	unsigned int i, n = 0, intr = 0, nobufs = 0;
	u64 tag = 1;

	e = kunit_kcalloc(test, batch, sizeof(*e), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, e);
	b->import_quota = 2 * full;
	/* connected, with a timeout no step of the test comes near */
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_set_timeout(b->mbox, 60000, 0), 0);
	e[0].handle.lo = (tag++ << AMDGPU_UALINK_ACCEL_ID_BITS) | A;
	e[0].handle.hi = 1;
	amdgpu_ualink_import_batch(b, &fake_gops, fb, NULL, e, 1, 0);
	KUNIT_ASSERT_EQ(test, e[0].error, -ENOENT);

	tpod_pause(pod, A, true);
	signal_self();
	while (n < full + 2 * AMDGPU_UALINK_IN_FLIGHT) {
		unsigned int count = min(batch, full + 2 * AMDGPU_UALINK_IN_FLIGHT - n);

		for (i = 0; i < count; i++)
			e[i] = (struct drm_amdgpu_ualink_batch_entry) {
				.handle.lo = (tag++ << AMDGPU_UALINK_ACCEL_ID_BITS) | A,
				.handle.hi = 0xb0f,
			};
		amdgpu_ualink_import_batch(b, &fake_gops, fb, NULL, e, count, 0);
		for (i = 0; i < count; i++) {
			intr += untouched(&e[i]);
			nobufs += e[i].error == -ENOBUFS;
		}
		n += count;
	}
	unsignal_self();
	KUNIT_EXPECT_EQ(test, intr, full);
	KUNIT_EXPECT_EQ(test, nobufs, 2 * AMDGPU_UALINK_IN_FLIGHT);
	KUNIT_EXPECT_EQ(test, tpod_stats(pod, B, A)->sent[AMDGPU_UALINK_MSG_NPA_REQ],
			1 + AMDGPU_UALINK_IN_FLIGHT);
	tpod_pause(pod, A, false);
	KUNIT_EXPECT_TRUE(test, tpod_wait_for(no_owner_charged, b->mbox, 30000));
}

static bool batch_asleep(void *arg)
{
	return wq_has_sleeper(&((struct amdgpu_ualink_mbox *)arg)->ended_wq);
}

/*
 * One handle named 32 times: one request for all the entries. The batch
 * sleeps until an eighth of those left (4) may have ended, and only one
 * end comes: it looks again a tick after it, and finishes them all.
 */
static void ioctl_batch_one_request(struct kunit *test)
{
	static const u16 ab[] = { A, B };
	struct tpod *pod = tpod_create(test, ARRAY_SIZE(ab), ab, kinds);
	struct batch_run *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	struct tobj *oa = tpod_obj(pod, 0, SZ_4K);
	struct task_struct *t;
	unsigned int i;
	u64 ha[2];

	KUNIT_ASSERT_NOT_NULL(test, r);
	r->dev = tpod_dev(pod, B);
	r->f = fake(test, pod, B);
	r->count = ARRAY_SIZE(r->e);
	init_completion(&r->done);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_set_timeout(tpod_mbox(pod, B),
							     60000, 3), 0);
	tpod_export(pod, A, oa, ha);
	for (i = 0; i < r->count; i++)
		r->e[i].handle = (struct drm_amdgpu_ualink_handle) { ha[0], ha[1] };

	tpod_pause(pod, A, true);
	t = kthread_run(batch_thread, r, "ualink-batch");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	/* asleep with all 32 entries left */
	KUNIT_EXPECT_TRUE(test, tpod_wait_for(batch_asleep, tpod_mbox(pod, B), 10000));
	KUNIT_EXPECT_EQ(test, READ_ONCE(r->f->n), 0);
	tpod_pause(pod, A, false);
	if (!wait_for_completion_timeout(&r->done, 10 * HZ)) {
		KUNIT_FAIL(test, "the batch did not end after its one answer");
		send_sig(SIGKILL, t, 1);
		wait_for_completion(&r->done);
	}
	for (i = 0; i < r->count; i++)
		KUNIT_EXPECT_EQ(test, r->e[i].error, 0);
	KUNIT_EXPECT_EQ(test, r->f->n, r->count);

	fake_release(r->f);
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 0);
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &oa->slot);
}

/*
 * A batch interrupted by a signal, restarted as it is (the argument as the
 * interrupted call left it, as SA_RESTART or drmIoctl() submit it again).
 * C's handle is granted already and A is paused: the first call finishes
 * C's entry, leaves A's two untouched and fails with -ERESTARTSYS, its
 * argument marked AMDGPU_UALINK_IMPORT_RESTART. Without the mark the
 * partly done entries are malformed; with it, once A answers, the restart
 * makes the GEM handles of A's entries only, and joins the requests of
 * the interrupted call (parked for it) rather than send new ones. Entries
 * a restart cannot have left are refused.
 */
static void ioctl_batch_restart(struct kunit *test)
{
	static const u16 abc[] = { A, B, C };
	struct tpod *pod = tpod_create(test, ARRAY_SIZE(abc), abc, kinds);
	struct tobj *oa = tpod_obj(pod, 0, SZ_4K), *oa2 = tpod_obj(pod, 0, SZ_4K);
	struct tobj *oc = tpod_obj(pod, 0, SZ_4K);
	struct drm_amdgpu_ualink_batch_entry e[3] = {}, done[3], __user *ue;
	struct fake_drv *fb = fake(test, pod, B);
	struct drm_amdgpu_ualink args = {}, again;
	u64 ha[2], ha2[2], hc[2], sent;
	unsigned long addr;
	unsigned int i;

	tpod_export(pod, A, oa, ha);
	tpod_export(pod, A, oa2, ha2);
	tpod_export(pod, C, oc, hc);
	e[0].handle = (struct drm_amdgpu_ualink_handle) { ha[0], ha[1] };
	e[1].handle = (struct drm_amdgpu_ualink_handle) { hc[0], hc[1] };
	e[2].handle = (struct drm_amdgpu_ualink_handle) { ha2[0], ha2[1] };
	/* C's handle granted: held by another GEM handle */
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_batch(tpod_dev(pod, B), &fake_gops,
							 fb, NULL, &e[1], 1, 0), 0);
	KUNIT_ASSERT_EQ(test, e[1].error, 0);
	e[1] = (struct drm_amdgpu_ualink_batch_entry) { .handle = e[1].handle };
	addr = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE, PROT_READ | PROT_WRITE,
			     MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE_MSG(test, addr, 0, "no user memory");
	ue = (struct drm_amdgpu_ualink_batch_entry __user *)addr;
	KUNIT_ASSERT_EQ(test, copy_to_user(ue, e, sizeof(e)), 0);
	args.op = AMDGPU_UALINK_OP_IMPORT_BATCH;
	args.u.batch.entries = addr;
	args.u.batch.count = ARRAY_SIZE(e);
	args.u.batch.flags = AMDGPU_UALINK_IMPORT_FDS;

	tpod_pause(pod, A, true);
	sent = tpod_stats(pod, B, A)->sent[AMDGPU_UALINK_MSG_NPA_REQ];
	signal_self();
	KUNIT_EXPECT_EQ(test, ioctl(fb, &args), -ERESTARTSYS);
	unsignal_self();
	KUNIT_EXPECT_EQ(test, args.u.batch.flags,
			AMDGPU_UALINK_IMPORT_FDS | AMDGPU_UALINK_IMPORT_RESTART);
	KUNIT_ASSERT_EQ(test, copy_from_user(done, ue, sizeof(done)), 0);
	KUNIT_EXPECT_TRUE(test, untouched(&done[0]));
	KUNIT_EXPECT_TRUE(test, untouched(&done[2]));
	KUNIT_EXPECT_EQ(test, done[1].error, 0);
	KUNIT_EXPECT_EQ(test, done[1].gem_handle, 1001);
	KUNIT_EXPECT_EQ(test, done[1].fd, 102);
	KUNIT_EXPECT_EQ(test, fb->n, 3);

	/* the finished entry is malformed for a new call */
	again = args;
	again.u.batch.flags = AMDGPU_UALINK_IMPORT_FDS;
	KUNIT_EXPECT_EQ(test, ioctl(fb, &again), -EINVAL);

	/* the restart: A's entries only, on the requests already sent */
	tpod_pause(pod, A, false);
	KUNIT_ASSERT_EQ(test, ioctl(fb, &args), 0);
	KUNIT_ASSERT_EQ(test, copy_from_user(e, ue, sizeof(e)), 0);
	for (i = 0; i < ARRAY_SIZE(e); i++)
		KUNIT_EXPECT_EQ(test, e[i].error, 0);
	KUNIT_EXPECT_EQ(test, e[1].gem_handle, done[1].gem_handle);
	KUNIT_EXPECT_EQ(test, e[1].fd, done[1].fd);
	KUNIT_EXPECT_EQ(test, fb->n, 3 + 2 * 2);
	KUNIT_EXPECT_NE(test, e[0].gem_handle, e[2].gem_handle);
	KUNIT_EXPECT_NE(test, e[0].gem_handle, e[1].gem_handle);
	KUNIT_EXPECT_NE(test, e[2].gem_handle, e[1].gem_handle);
	/* one request per handle: the restart joined those in flight */
	KUNIT_EXPECT_EQ(test, tpod_stats(pod, B, A)->sent[AMDGPU_UALINK_MSG_NPA_REQ],
			sent + 2);

	/* what no call leaves: an fd without FDS, a failed entry's handle */
	again = args;
	again.u.batch.count = 1;
	again.u.batch.flags = AMDGPU_UALINK_IMPORT_RESTART;
	KUNIT_ASSERT_EQ(test, copy_to_user(ue, &e[1], sizeof(e[1])), 0);
	KUNIT_EXPECT_EQ(test, ioctl(fb, &again), -EINVAL);
	done[0] = e[1];
	done[0].fd = -1;	/* as without FDS: accepted, left alone */
	KUNIT_ASSERT_EQ(test, copy_to_user(ue, &done[0], sizeof(done[0])), 0);
	KUNIT_EXPECT_EQ(test, ioctl(fb, &again), 0);
	KUNIT_EXPECT_EQ(test, fb->n, 3 + 2 * 2);
	done[0].error = -ENOENT;
	KUNIT_ASSERT_EQ(test, copy_to_user(ue, &done[0], sizeof(done[0])), 0);
	KUNIT_EXPECT_EQ(test, ioctl(fb, &again), -EINVAL);
	done[0].gem_handle = 0;
	KUNIT_ASSERT_EQ(test, copy_to_user(ue, &done[0], sizeof(done[0])), 0);
	KUNIT_EXPECT_EQ(test, ioctl(fb, &again), 0);
	done[0].error = 1;
	KUNIT_ASSERT_EQ(test, copy_to_user(ue, &done[0], sizeof(done[0])), 0);
	KUNIT_EXPECT_EQ(test, ioctl(fb, &again), -EINVAL);
	done[0] = (struct drm_amdgpu_ualink_batch_entry) { .handle = e[1].handle,
							    .fd = -1 };
	KUNIT_ASSERT_EQ(test, copy_to_user(ue, &done[0], sizeof(done[0])), 0);
	KUNIT_EXPECT_EQ(test, ioctl(fb, &again), -EINVAL);
	KUNIT_EXPECT_EQ(test, fb->n, 3 + 2 * 2);

	fake_release(fb);
	KUNIT_EXPECT_EQ(test, tpod_dev(pod, B)->num_imports, 0);
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &oa->slot);
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &oa2->slot);
	amdgpu_ualink_export_destroy(tpod_dev(pod, C), &oc->slot);
}

/*
 * An interrupted import parks its reference for a restart that does not
 * come: the import is held, granted, until a second or two after its
 * answer, then released without anyone's help.
 */
static void ioctl_parked_released(struct kunit *test)
{
	static const u16 ab[] = { A, B };
	struct tpod *pod = tpod_create(test, ARRAY_SIZE(ab), ab, kinds);
	struct fake_drv *fb = fake(test, pod, B);
	struct tobj *oa = tpod_obj(pod, 0, SZ_4K);
	struct drm_amdgpu_ualink args = { .op = AMDGPU_UALINK_OP_IMPORT };
	u64 ha[2];

	tpod_export(pod, A, oa, ha);
	args.u.imp.handle = (struct drm_amdgpu_ualink_handle) { ha[0], ha[1] };
	tpod_pause(pod, A, true);
	signal_self();
	KUNIT_EXPECT_EQ(test, ioctl(fb, &args), -ERESTARTSYS);
	unsignal_self();
	tpod_pause(pod, A, false);
	KUNIT_EXPECT_TRUE(test, tpod_wait_for(a_granted, pod, 10000));
	KUNIT_EXPECT_EQ(test, fb->n, 0);
	KUNIT_EXPECT_TRUE(test, tpod_wait_for(no_grants_a, pod, 10000));
	KUNIT_EXPECT_TRUE(test, tpod_wait_for(no_imports_b, pod, 10000));
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &oa->slot);
}

/* A batch through user memory: per-entry results, and its own errnos. */
static void ioctl_batch(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, ARRAY_SIZE(ids), ids, kinds);
	struct fake_drv *fa = fake(test, pod, A), *fb = fake(test, pod, B);
	struct fake_drv *fd = fake(test, pod, D);
	struct drm_amdgpu_ualink_batch_entry e[4] = {}, __user *ue;
	struct drm_amdgpu_ualink args = {};
	unsigned long addr;

	fa->objs[0] = tpod_obj(pod, 0, SZ_4K);
	fd->objs[0] = tpod_obj(pod, 0, SZ_4K);
	tpod_node(pod, D)->vpod = 1;
	args.op = AMDGPU_UALINK_OP_EXPORT;
	args.u.exp.gem_handle = 1;
	KUNIT_ASSERT_EQ(test, ioctl(fa, &args), 0);
	e[0].handle = args.u.exp.handle;	/* A's */
	e[1].handle = args.u.exp.handle;
	e[1].handle.hi ^= 1;			/* unknown */
	args.u.exp = (struct drm_amdgpu_ualink_export) { .gem_handle = 1 };
	KUNIT_ASSERT_EQ(test, ioctl(fd, &args), 0);
	e[2].handle = args.u.exp.handle;	/* another pod's */
	e[3].handle = e[0].handle;		/* A's again: the same import */

	addr = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE, PROT_READ | PROT_WRITE,
			     MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE_MSG(test, addr, 0, "no user memory");
	ue = (struct drm_amdgpu_ualink_batch_entry __user *)addr;
	KUNIT_ASSERT_EQ(test, copy_to_user(ue, e, sizeof(e)), 0);

	args = (struct drm_amdgpu_ualink) { .op = AMDGPU_UALINK_OP_IMPORT_BATCH };
	args.u.batch.entries = addr;
	args.u.batch.count = 4;
	args.u.batch.flags = AMDGPU_UALINK_IMPORT_FDS;
	KUNIT_ASSERT_EQ(test, ioctl(fb, &args), 0);
	KUNIT_ASSERT_EQ(test, copy_from_user(e, ue, sizeof(e)), 0);
	/*
	 * entries 0 and 3 finish in the order their import is seen ready,
	 * either first: each a handle, then an fd, of the same import
	 */
	KUNIT_EXPECT_EQ(test, e[0].error, 0);
	KUNIT_EXPECT_EQ(test, e[3].error, 0);
	KUNIT_EXPECT_EQ(test, e[0].gem_handle + e[3].gem_handle, 1000 + 1002);
	KUNIT_EXPECT_TRUE(test, e[0].gem_handle == 1000 || e[0].gem_handle == 1002);
	KUNIT_EXPECT_EQ(test, e[0].fd, (s32)e[0].gem_handle - 1000 + 101);
	KUNIT_EXPECT_EQ(test, e[3].fd, (s32)e[3].gem_handle - 1000 + 101);
	KUNIT_EXPECT_EQ(test, e[1].error, -ENOENT);
	KUNIT_EXPECT_EQ(test, e[1].fd, -1);
	KUNIT_EXPECT_EQ(test, e[2].error, -EACCES);
	KUNIT_EXPECT_PTR_EQ(test, fb->held[2], fb->held[0]);

	/* without fds left: the entries keep their GEM handles, fd -1 */
	fb->no_fds = true;
	e[0] = (struct drm_amdgpu_ualink_batch_entry) { .handle = e[0].handle };
	KUNIT_ASSERT_EQ(test, copy_to_user(ue, e, sizeof(e[0])), 0);
	args.u.batch.count = 1;
	KUNIT_ASSERT_EQ(test, ioctl(fb, &args), 0);
	KUNIT_ASSERT_EQ(test, copy_from_user(e, ue, sizeof(e[0])), 0);
	KUNIT_EXPECT_EQ(test, e[0].error, 0);
	KUNIT_EXPECT_GE(test, e[0].gem_handle, 1000);
	KUNIT_EXPECT_EQ(test, e[0].fd, -1);
	fb->no_fds = false;

	/* an entry with padding or output fields set, a zero handle */
	e[0] = (struct drm_amdgpu_ualink_batch_entry) { .handle = e[0].handle, .pad = 1 };
	KUNIT_ASSERT_EQ(test, copy_to_user(ue, e, sizeof(e[0])), 0);
	KUNIT_EXPECT_EQ(test, ioctl(fb, &args), -EINVAL);
	e[0] = (struct drm_amdgpu_ualink_batch_entry) { .handle = e[0].handle, .fd = -1 };
	KUNIT_ASSERT_EQ(test, copy_to_user(ue, e, sizeof(e[0])), 0);
	KUNIT_EXPECT_EQ(test, ioctl(fb, &args), -EINVAL);
	e[0] = (struct drm_amdgpu_ualink_batch_entry) {};
	KUNIT_ASSERT_EQ(test, copy_to_user(ue, e, sizeof(e[0])), 0);
	KUNIT_EXPECT_EQ(test, ioctl(fb, &args), -EINVAL);
	args.u.batch.entries = addr + PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, ioctl(fb, &args), -EFAULT);

	/*
	 * A imports its own handle in a batch: a reference each for handle
	 * and fd, besides the export's
	 */
	e[0] = (struct drm_amdgpu_ualink_batch_entry) { .handle = e[3].handle };
	KUNIT_ASSERT_EQ(test, copy_to_user(ue, e, sizeof(e[0])), 0);
	args.u.batch.entries = addr;
	KUNIT_ASSERT_EQ(test, ioctl(fa, &args), 0);
	KUNIT_ASSERT_EQ(test, copy_from_user(e, ue, sizeof(e[0])), 0);
	KUNIT_EXPECT_EQ(test, e[0].error, 0);
	KUNIT_EXPECT_GE(test, e[0].fd, 100);
	KUNIT_EXPECT_EQ(test, fa->objs[0]->refs, 1 + 2);

	fake_release(fa);
	fake_release(fb);
	KUNIT_EXPECT_EQ(test, fa->objs[0]->refs, 1);	/* the export's */
	amdgpu_ualink_export_destroy(tpod_node(pod, A)->dev, &fa->objs[0]->slot);
	KUNIT_EXPECT_EQ(test, fa->objs[0]->refs, 0);
	amdgpu_ualink_export_destroy(tpod_node(pod, D)->dev, &fd->objs[0]->slot);
}

static struct kunit_case amdgpu_ualink_ioctl_cases[] = {
	KUNIT_CASE_PARAM(ioctl_malformed, bad_gen_params),
	KUNIT_CASE(ioctl_not_available),
	KUNIT_CASE(ioctl_info_caps),
	KUNIT_CASE(ioctl_export_import),
	KUNIT_CASE(ioctl_export_after_close),
	KUNIT_CASE(ioctl_batch),
	KUNIT_CASE(ioctl_batch_completion_order),
	KUNIT_CASE(ioctl_batch_one_request),
	KUNIT_CASE(ioctl_batch_restart),
	KUNIT_CASE_SLOW(ioctl_parked_released),
	KUNIT_CASE(ioctl_quota),
	KUNIT_CASE_SLOW(ioctl_flood_fair),
	KUNIT_CASE_SLOW(ioctl_queue_full),
	{}
};

static struct kunit_suite amdgpu_ualink_ioctl_suite = {
	.name = "amdgpu_ualink_ioctl",
	.test_cases = amdgpu_ualink_ioctl_cases,
};

kunit_test_suite(amdgpu_ualink_ioctl_suite);
