// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * KUnit tests for the export side (amdgpu_ualink_export.c) on an
 * in-memory pod of whole devices: handles, grants, pins, the page tables
 * behind a grant, releases, revocation and the end of a connection.
 */

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/sched/task.h>
#include <linux/wait_bit.h>

#include <drm/drm_print.h>

#include "amdgpu_ualink_test_pod.h"
#include "../amdgpu_ualink_npa.h"

#define A	3
#define B	40
#define C	513
#define D	1000	/* another virtual pod */
#define R	77	/* played by the test */

static const u16 ids[] = { A, B, C, D, R };
static const enum tpod_kind kinds[] = {
	TPOD_DEV, TPOD_DEV, TPOD_DEV, TPOD_DEV, TPOD_RAW,
};

static struct tpod *pod_create(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, ARRAY_SIZE(ids), ids, kinds);

	tpod_node(pod, D)->vpod = 1;
	tpod_node(pod, R)->vpod = 2;
	return pod;
}

static struct amdgpu_ualink_mbox_stats *stats_of(struct tpod *pod, u16 id)
{
	struct amdgpu_ualink_mbox_stats *s = kunit_kzalloc(pod->test, sizeof(*s), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(pod->test, s);
	amdgpu_ualink_mbox_stats(tpod_node(pod, id)->mbox, -1, s);
	return s;
}

/* Handles: our ID in the low bits, never zero, unique, stable per buffer. */
static void export_handles(struct kunit *test)
{
	struct tpod *pod = pod_create(test);
	struct tobj *objs = kunit_kcalloc(test, 1000, sizeof(*objs), GFP_KERNEL);
	u64 (*h)[2] = kunit_kcalloc(test, 1000, sizeof(*h), GFP_KERNEL);
	u64 again[2];
	unsigned int i, j;

	KUNIT_ASSERT_NOT_NULL(test, objs);
	KUNIT_ASSERT_NOT_NULL(test, h);
	for (i = 0; i < 1000; i++) {
		objs[i].size = SZ_4K;
		tpod_export(pod, A, &objs[i], h[i]);
		KUNIT_EXPECT_EQ(test, h[i][0] & 0x3ff, A);
		KUNIT_EXPECT_TRUE(test, h[i][0] >> 10 || h[i][1]);
	}
	for (i = 0; i < 1000; i++)
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_FALSE(test, h[i][0] == h[j][0] && h[i][1] == h[j][1]);
	/* the same buffer, the same handle */
	tpod_export(pod, A, &objs[7], again);
	KUNIT_EXPECT_EQ(test, again[0], h[7][0]);
	KUNIT_EXPECT_EQ(test, again[1], h[7][1]);
	KUNIT_EXPECT_EQ(test, tpod_dev(pod, A)->num_exports, 1000);
	KUNIT_EXPECT_PTR_EQ(test, amdgpu_ualink_export_lookup(tpod_dev(pod, A), h[7]), &objs[7]);
	again[1] ^= 1;
	KUNIT_EXPECT_NULL(test, amdgpu_ualink_export_lookup(tpod_dev(pod, A), again));

	for (i = 0; i < 1000; i++)
		amdgpu_ualink_export_destroy(tpod_dev(pod, A), &objs[i].slot);
	KUNIT_EXPECT_NULL(test, amdgpu_ualink_export_lookup(tpod_dev(pod, A), h[7]));
	KUNIT_EXPECT_EQ(test, tpod_dev(pod, A)->num_exports, 0);
	/* a buffer never exported, or destroyed twice: nothing */
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &objs[0].slot);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_export_create(tpod_dev(pod, A), &objs[0], 0,
							  &objs[0].slot, again), -EINVAL);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_export_create(tpod_dev(pod, A), &objs[0], 100,
							  &objs[0].slot, again), -EINVAL);
}

/*
 * Detaching: the buffer's next export is a new one with a new handle, the
 * old one lives until destroyed through the detached pointer.
 */
static void export_detach(struct kunit *test)
{
	struct tpod *pod = pod_create(test);
	struct amdgpu_ualink_dev *dev = tpod_dev(pod, A);
	struct tobj *o = tpod_obj(pod, 0, SZ_4K);
	u64 h[2], again[2];
	void *old;

	tpod_export(pod, A, o, h);
	old = amdgpu_ualink_export_detach(dev, &o->slot);
	KUNIT_EXPECT_NOT_NULL(test, old);
	KUNIT_EXPECT_NULL(test, o->slot);
	KUNIT_EXPECT_PTR_EQ(test, amdgpu_ualink_export_lookup(dev, h), o);
	tpod_export(pod, A, o, again);
	KUNIT_EXPECT_FALSE(test, again[0] == h[0] && again[1] == h[1]);
	KUNIT_EXPECT_EQ(test, dev->num_exports, 2);

	amdgpu_ualink_export_destroy(dev, &old);
	KUNIT_EXPECT_NULL(test, old);
	KUNIT_EXPECT_NULL(test, amdgpu_ualink_export_lookup(dev, h));
	KUNIT_EXPECT_PTR_EQ(test, amdgpu_ualink_export_lookup(dev, again), o);
	amdgpu_ualink_export_destroy(dev, &o->slot);
	KUNIT_EXPECT_EQ(test, dev->num_exports, 0);
	/* nothing to detach */
	KUNIT_EXPECT_NULL(test, amdgpu_ualink_export_detach(dev, &o->slot));
}

struct racer {
	struct tpod *pod;
	struct tobj *obj;
	u64 handle[2];
	struct completion go;
	struct completion done;
	int ret;
};

static int export_racer(void *data)
{
	struct racer *r = data;

	wait_for_completion(&r->go);
	r->ret = amdgpu_ualink_export_create(tpod_dev(r->pod, A), r->obj, r->obj->size,
					     &r->obj->slot, r->handle);
	complete(&r->done);
	return 0;
}

/* Concurrent exports of one buffer: one export, one handle. */
static void export_concurrent(struct kunit *test)
{
	struct tpod *pod = pod_create(test);
	struct tobj *o = tpod_obj(pod, 0, SZ_2M);
	struct racer *r = kunit_kcalloc(test, 8, sizeof(*r), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, r);
	for (i = 0; i < 8; i++) {
		r[i].pod = pod;
		r[i].obj = o;
		init_completion(&r[i].go);
		init_completion(&r[i].done);
		KUNIT_ASSERT_FALSE(test, IS_ERR(kthread_run(export_racer, &r[i],
							    "ualink_export%u", i)));
	}
	for (i = 0; i < 8; i++)
		complete(&r[i].go);
	for (i = 0; i < 8; i++) {
		wait_for_completion(&r[i].done);
		KUNIT_EXPECT_EQ(test, r[i].ret, 0);
		KUNIT_EXPECT_EQ(test, r[i].handle[0], r[0].handle[0]);
		KUNIT_EXPECT_EQ(test, r[i].handle[1], r[0].handle[1]);
	}
	KUNIT_EXPECT_EQ(test, tpod_dev(pod, A)->num_exports, 1);
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o->slot);
}

/* A holds no grant and no pin (the pin goes last, after the unmap). */
static bool a_idle(void *arg)
{
	struct amdgpu_ualink_dev *a = tpod_dev(arg, A);
	bool idle;

	mutex_lock(&a->lock);
	idle = !a->num_grants && !a->num_pins;
	mutex_unlock(&a->lock);
	return idle;
}

/*
 * Two importers: pinned once, a range each, mapped onto the buffer; each
 * release drops its range, the last the pin.
 */
static void export_grant_and_release(struct kunit *test)
{
	struct tpod *pod = pod_create(test);
	struct tobj *o = tpod_obj(pod, SZ_1G, 4 * SZ_2M);
	struct amdgpu_ualink_import *ib, *ic;
	u64 h[2], addr, leaf, allocated;
	unsigned int ranges;

	tpod_export(pod, A, o, h);
	KUNIT_EXPECT_EQ(test, o->pins, 0);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &ib), 0);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, C), h, &ic), 0);
	KUNIT_EXPECT_EQ(test, o->pins, 1);
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 2);
	KUNIT_EXPECT_NE(test, ib->npa, ic->npa);
	KUNIT_EXPECT_EQ(test, ib->size, o->size);

	/* A's page tables take B's range to the buffer */
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_pt_translate(&tpod_node(pod, A)->pt,
							 ib->npa - amdgpu_ualink_npa_build(A, 0) +
							 SZ_2M + 5, &addr, &leaf), 0);
	KUNIT_EXPECT_EQ(test, addr, o->addr + SZ_2M + 5);

	KUNIT_EXPECT_EQ(test, o->refs, 1);	/* the pin's */

	amdgpu_ualink_import_put(ib);
	flush_workqueue(tpod_dev(pod, B)->wq);
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 1);
	KUNIT_EXPECT_EQ(test, o->pins, 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&tpod_node(pod, A)->shootdowns), 1);
	amdgpu_ualink_import_put(ic);
	flush_workqueue(tpod_dev(pod, C)->wq);
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 0);
	KUNIT_EXPECT_EQ(test, o->pins, 0);
	KUNIT_EXPECT_EQ(test, o->refs, 0);
	amdgpu_ualink_window_usage(&tpod_dev(pod, A)->window, &allocated, &ranges);
	KUNIT_EXPECT_EQ(test, allocated, 0);
	KUNIT_EXPECT_EQ(test, tpod_dev(pod, A)->pt->tables, 1);	/* the root */
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o->slot);
}

/*
 * Who may not import: a node of another virtual pod (refused locally, and
 * by the exporter when it asks anyway), and anyone without all 128 bits.
 */
static void export_refusals(struct kunit *test)
{
	struct tpod *pod = pod_create(test);
	struct tobj *o = tpod_obj(pod, 0, SZ_4K);
	struct amdgpu_ualink_msg m = tpod_npa_req(R, A, 0), hello = {
		.type = AMDGPU_UALINK_MSG_HELLO, .version = AMDGPU_UALINK_PROTO_VERSION,
		.sender = R, .receiver = A, .txn = 1, .generation = 1,
	};
	struct amdgpu_ualink_import *imp;
	u32 next = 0;
	u64 h[2], wrong[2];

	tpod_export(pod, A, o, h);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, D), h, &imp), -EACCES);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_peers(tpod_node(pod, D)->mbox), 0);

	wrong[0] = h[0];
	wrong[1] = h[1] ^ BIT_ULL(63);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), wrong, &imp), -ENOENT);

	/* R is not a member of A's pod: the same answer as a wrong handle */
	tpod_send(pod, R, A, &hello);
	KUNIT_ASSERT_EQ(test, tpod_read(pod, A, R, &next, &m), 0);
	m = tpod_npa_req(R, A, 0);
	m.handle[0] = h[0];
	m.handle[1] = h[1];
	m.txn = 2;
	tpod_send(pod, R, A, &m);
	KUNIT_ASSERT_EQ(test, tpod_read(pod, A, R, &next, &m), 0);
	KUNIT_EXPECT_EQ(test, m.type, AMDGPU_UALINK_MSG_NPA_FAIL);
	KUNIT_EXPECT_EQ(test, m.reason, AMDGPU_UALINK_FAIL_INVALID_HANDLE);
	KUNIT_EXPECT_EQ(test, o->pins, 0);
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 0);
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o->slot);
}

/* The exporter's window is full: -ENOSPC, and nothing stays pinned. */
static void export_no_space(struct kunit *test)
{
	struct tpod *pod = pod_create(test);
	struct tobj *o = tpod_obj(pod, 0, SZ_1T);
	struct amdgpu_ualink_import *ib;
	u64 h[2];

	tpod_export(pod, A, o, h);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &ib), 0);
	/* 2 TiB minus the ring reserve holds one 1 TiB range */
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, C), h, &ib), -ENOSPC);
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 1);
	KUNIT_EXPECT_EQ(test, o->pins, 1);
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o->slot);
	KUNIT_EXPECT_EQ(test, o->pins, 0);
	/* B's import was revoked */
	KUNIT_EXPECT_EQ(test, ib->state, AMDGPU_UALINK_IMPORT_DEAD);
	amdgpu_ualink_import_put(ib);
}

/*
 * Destroying an export revokes every import: the importers' buffers die,
 * they answer, and the exporter unmaps and unpins.
 */
static void export_destroy_revokes(struct kunit *test)
{
	struct tpod *pod = pod_create(test);
	struct tobj *o = tpod_obj(pod, SZ_2M, SZ_2M);
	struct tobj *bb = tpod_obj(pod, 0, 0), *cb = tpod_obj(pod, 0, 0);
	struct amdgpu_ualink_import *ib, *ic, *again;
	u64 h[2];

	tpod_export(pod, A, o, h);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &ib), 0);
	amdgpu_ualink_import_set_obj(ib, bb);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, C), h, &ic), 0);
	amdgpu_ualink_import_set_obj(ic, cb);

	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o->slot);
	KUNIT_EXPECT_TRUE(test, bb->dead);
	KUNIT_EXPECT_TRUE(test, cb->dead);
	KUNIT_EXPECT_EQ(test, ib->state, AMDGPU_UALINK_IMPORT_DEAD);
	KUNIT_EXPECT_EQ(test, o->pins, 0);
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&tpod_node(pod, A)->shootdowns), 2);
	/* each importer answered the revocation */
	KUNIT_EXPECT_EQ(test, stats_of(pod, A)->received[AMDGPU_UALINK_MSG_NPA_RELEASE], 2);
	KUNIT_EXPECT_EQ(test, stats_of(pod, A)->timeouts, 0);

	/* the handle is gone */
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &again), -ENOENT);
	/* dead imports hold nothing: their last put sends no release */
	amdgpu_ualink_import_put(ib);
	amdgpu_ualink_import_put(ic);
	flush_workqueue(tpod_dev(pod, B)->wq);
	flush_workqueue(tpod_dev(pod, C)->wq);
	KUNIT_EXPECT_EQ(test, tpod_dev(pod, B)->num_imports, 0);
	KUNIT_EXPECT_EQ(test, tpod_dev(pod, C)->num_imports, 0);
	KUNIT_EXPECT_EQ(test, stats_of(pod, A)->received[AMDGPU_UALINK_MSG_NPA_RELEASE], 2);
}

/* An importer resets: the exporter drops its grants and pins. */
static void export_importer_reset(struct kunit *test)
{
	struct tpod *pod = pod_create(test);
	struct tobj *o = tpod_obj(pod, 0, SZ_4K);
	struct amdgpu_ualink_import *ib;
	u64 h[2];

	tpod_export(pod, A, o, h);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &ib), 0);
	KUNIT_EXPECT_EQ(test, o->pins, 1);
	amdgpu_ualink_mbox_reset(tpod_dev(pod, B)->mbox);
	KUNIT_EXPECT_TRUE(test, tpod_wait_for(a_idle, pod, 10000));
	KUNIT_EXPECT_EQ(test, o->pins, 0);
	/* B's side: its import is from a connection that ended */
	amdgpu_ualink_import_put(ib);
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o->slot);
}

/* What debugfs will show: exports with their importers, imports, counts. */
static void export_print(struct kunit *test)
{
	struct tpod *pod = pod_create(test);
	struct tobj *o = tpod_obj(pod, 0, SZ_2M);
	struct tpod_text ta = { .buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL) };
	struct tpod_text tb = { .buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL) };
	struct drm_printer pa = { .printfn = tpod_text_printfn, .arg = &ta };
	struct drm_printer pb = { .printfn = tpod_text_printfn, .arg = &tb };
	struct amdgpu_ualink_import *ib;
	char want[64];
	u64 h[2];

	KUNIT_ASSERT_NOT_NULL(test, ta.buf);
	KUNIT_ASSERT_NOT_NULL(test, tb.buf);
	tpod_export(pod, A, o, h);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &ib), 0);
	amdgpu_ualink_dev_print(tpod_dev(pod, A), &pa);
	amdgpu_ualink_dev_print(tpod_dev(pod, B), &pb);
	kunit_info(test, "%s%s", ta.buf, tb.buf);

	KUNIT_EXPECT_NOT_NULL(test, strstr(ta.buf, "exports 1 grants 1 pins 1 imports 0"));
	snprintf(want, sizeof(want), "export ...%08x size %u pinned, 1 importers",
		 lower_32_bits(h[1]), SZ_2M);
	KUNIT_EXPECT_NOT_NULL(test, strstr(ta.buf, want));
	snprintf(want, sizeof(want), "  to %u: npa %#llx size %u", B, ib->npa, SZ_2M);
	KUNIT_EXPECT_NOT_NULL(test, strstr(ta.buf, want));
	snprintf(want, sizeof(want), "import ...%08x from %u: ready", lower_32_bits(h[1]), A);
	KUNIT_EXPECT_NOT_NULL(test, strstr(tb.buf, want));
	/* never the whole handle */
	snprintf(want, sizeof(want), "%08x", upper_32_bits(h[1]));
	KUNIT_EXPECT_NULL(test, strstr(ta.buf, want));

	amdgpu_ualink_import_put(ib);
	flush_workqueue(tpod_dev(pod, B)->wq);
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o->slot);
}

/* --- figures: printed, never asserted --- */

/* Kernel memory per export with 0, 1 and 16 importers, and per import. */
static void export_memory(struct kunit *test)
{
	static const u16 many[17] = { A, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
				      20, 21, 22, 23, 24, 25 };
	static const enum tpod_kind devs[17] = {
		[0 ... 16] = TPOD_DEV,
	};
	struct amdgpu_ualink_import *imps[16];
	struct tpod *pod = tpod_create(test, 17, many, devs);
	struct tobj *o = tpod_obj(pod, 0, SZ_2M);
	size_t none, one, sixteen, grant;
	unsigned int i;
	u64 h[2];

	tpod_export(pod, A, o, h);
	none = amdgpu_ualink_export_bytes(tpod_dev(pod, A), h);
	for (i = 0; i < 16; i++) {
		struct amdgpu_ualink_dev *importer = tpod_dev(pod, many[1 + i]);

		KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(importer, h, &imps[i]), 0);
		if (!i)
			one = amdgpu_ualink_export_bytes(tpod_dev(pod, A), h);
	}
	sixteen = amdgpu_ualink_export_bytes(tpod_dev(pod, A), h);
	grant = (sixteen - one) / 15;
	kunit_info(test, "export: %zu bytes with no importer, %zu with 1, %zu with 16; %zu per importer, so %zu with 1,023\n",
		   none, one, sixteen, grant, none + 1023 * grant);
	kunit_info(test, "import: %zu bytes\n", ksize(imps[0]));
	/*
	 * Only that importers cost something: exact sizes vary (KFENCE
	 * reports the requested size of the objects it samples).
	 */
	KUNIT_EXPECT_GT(test, one, none);
	KUNIT_EXPECT_GT(test, sixteen, one);
	for (i = 0; i < 16; i++)
		amdgpu_ualink_import_put(imps[i]);
	for (i = 0; i < 16; i++)
		flush_workqueue(tpod_dev(pod, many[1 + i])->wq);
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o->slot);
}

/* A thread that destroys an export, or resets its device. */
struct destroyer {
	struct amdgpu_ualink_dev *dev;
	struct tobj *o;
	bool reset;
	struct completion done;
	int pins;	/* the buffer's, when the destroyer returned */
};

static int destroyer_fn(void *arg)
{
	struct destroyer *d = arg;

	if (d->reset)
		amdgpu_ualink_dev_reset(d->dev);
	else
		amdgpu_ualink_export_destroy(d->dev, &d->o->slot);
	d->pins = d->o->pins;
	complete(&d->done);
	return 0;
}

static struct task_struct *destroyer_start(struct kunit *test, struct destroyer *d)
{
	struct task_struct *task;

	init_completion(&d->done);
	task = kthread_run(destroyer_fn, d, "ualink-destroyer");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	get_task_struct(task);
	return task;
}

static void destroyer_end(struct kunit *test, struct destroyer *d,
			  struct task_struct *task)
{
	KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&d->done, 10 * HZ));
	kthread_stop(task);
	put_task_struct(task);
	/* the buffer was unpinned before the destroyer (or reset) returned */
	KUNIT_EXPECT_EQ(test, d->pins, 0);
	KUNIT_EXPECT_EQ(test, d->dev->num_pins, 0);
	/* the pin's reference, dropped by the worker after the unpin */
	amdgpu_ualink_dev_flush(d->dev);
	KUNIT_EXPECT_EQ(test, d->o->refs, 0);
}

/*
 * An importer's release undone on the exporter's worker while the export
 * is destroyed: the destroyer must not return, and so let the driver free
 * the buffer, before the worker is done with it. The worker is held before
 * it drops the last grant and again inside the unpin, after the count of
 * grants reached 0; there the destroyer, asleep since before the drop, is
 * woken as any other grant's undo may wake it (wait_var_event() on the
 * export). It must go back to sleep and return only after the unpin and
 * the count drop; the pin's reference, which the core holds until then,
 * goes right after.
 */
static void export_destroy_waits_for_undo(struct kunit *test)
{
	struct tpod *pod = pod_create(test);
	struct tobj *o = tpod_obj(pod, SZ_2M, SZ_2M);
	struct destroyer d = { .dev = tpod_dev(pod, A), .o = o };
	struct tpod_node *a = tpod_node(pod, A);
	struct amdgpu_ualink_import *ib;
	struct task_struct *task;
	void *exp;
	u64 h[2];

	tpod_export(pod, A, o, h);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &ib), 0);
	KUNIT_EXPECT_EQ(test, o->pins, 1);
	KUNIT_EXPECT_EQ(test, o->refs, 1);	/* the pin's */
	exp = o->slot;

	/* B lets go: A's worker stops before dropping the grant */
	tpod_hold_arm(&a->shootdown_hold);
	tpod_hold_arm(&a->unpin_hold);
	amdgpu_ualink_import_put(ib);
	KUNIT_ASSERT_TRUE(test, tpod_hold_reached(&a->shootdown_hold));

	/* the destroyer finds no grant of its own and waits for the worker's */
	task = destroyer_start(test, &d);
	KUNIT_EXPECT_TRUE(test, tpod_wait_blocked(task, &d.done));
	KUNIT_EXPECT_FALSE(test, completion_done(&d.done));

	/* the worker drops the grant and stops in the unpin, under A's lock */
	tpod_hold_release(&a->shootdown_hold);
	KUNIT_EXPECT_TRUE(test, tpod_hold_reached(&a->unpin_hold));
	KUNIT_EXPECT_EQ(test, o->refs, 1);	/* still held for the unpin */
	wake_up_var(exp);
	KUNIT_EXPECT_TRUE(test, tpod_wait_blocked(task, &d.done));
	KUNIT_EXPECT_FALSE(test, completion_done(&d.done));

	tpod_hold_release(&a->unpin_hold);
	destroyer_end(test, &d, task);
}

/*
 * The same for a reset of the exporter, which leaves the pod (suspend, GPU
 * reset): what the worker was undoing is unpinned when the reset returns,
 * before the driver evicts or resets the memory.
 */
static void export_reset_waits_for_undo(struct kunit *test)
{
	struct tpod *pod = pod_create(test);
	struct tobj *o = tpod_obj(pod, SZ_2M, SZ_2M);
	struct destroyer d = { .dev = tpod_dev(pod, A), .o = o, .reset = true };
	struct tpod_node *a = tpod_node(pod, A);
	struct amdgpu_ualink_import *ib;
	struct task_struct *task;
	u64 h[2];

	tpod_export(pod, A, o, h);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &ib), 0);
	tpod_hold_arm(&a->shootdown_hold);
	amdgpu_ualink_import_put(ib);
	KUNIT_ASSERT_TRUE(test, tpod_hold_reached(&a->shootdown_hold));

	/* A resets (leaves its pod): nothing granted is left for it to drop */
	a->vpod = 3;
	task = destroyer_start(test, &d);
	KUNIT_EXPECT_TRUE(test, tpod_wait_blocked(task, &d.done));
	KUNIT_EXPECT_FALSE(test, completion_done(&d.done));
	KUNIT_EXPECT_EQ(test, o->pins, 1);

	tpod_hold_release(&a->shootdown_hold);
	destroyer_end(test, &d, task);
	a->vpod = 0;
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o->slot);
}

static struct kunit_case amdgpu_ualink_export_cases[] = {
	KUNIT_CASE(export_handles),
	KUNIT_CASE(export_detach),
	KUNIT_CASE(export_concurrent),
	KUNIT_CASE(export_grant_and_release),
	KUNIT_CASE(export_refusals),
	KUNIT_CASE(export_no_space),
	KUNIT_CASE(export_destroy_revokes),
	KUNIT_CASE(export_destroy_waits_for_undo),
	KUNIT_CASE(export_reset_waits_for_undo),
	KUNIT_CASE(export_importer_reset),
	KUNIT_CASE(export_print),
	KUNIT_CASE(export_memory),
	{}
};

static struct kunit_suite amdgpu_ualink_export_suite = {
	.name = "amdgpu_ualink_export",
	.test_cases = amdgpu_ualink_export_cases,
};

kunit_test_suite(amdgpu_ualink_export_suite);
