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

/* amdgpu_ualink_export_request(), called as the mailbox would */
MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING");

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
	amdgpu_ualink_mbox_get_stats(tpod_node(pod, id)->mbox, -1, s);
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

/* A grants nothing, and its window is empty (the range goes last). */
static bool a_idle(void *arg)
{
	struct amdgpu_ualink_dev *a = tpod_dev(arg, A);
	unsigned int ranges;
	u64 allocated;
	bool idle;

	mutex_lock(&a->lock);
	idle = !a->num_grants;
	mutex_unlock(&a->lock);
	amdgpu_ualink_window_usage(&a->window, &allocated, &ranges);
	return idle && !ranges;
}

/*
 * An export is pinned from its creation to its end, by the exporter's
 * process; a failed pin fails the export. A suspend unpins it after the
 * device left the pod (the handle still resolves, importers are refused
 * with -EREMOTEIO meanwhile) and the resume pins it again (a signal may end
 * the wait of the first pin, not that of the resume); one that cannot be
 * pinned again keeps refusing, and its end does not unpin it twice.
 */
static void export_pinned_at_export(struct kunit *test)
{
	struct tpod *pod = pod_create(test);
	struct tobj *o = tpod_obj(pod, 0, SZ_2M), *o2 = tpod_obj(pod, SZ_2M, SZ_2M);
	struct amdgpu_ualink_dev *a = tpod_dev(pod, A);
	struct amdgpu_ualink_import *ib;
	u64 h[2], h2[2];

	o->pin_error = -ENOSPC;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_export_create(a, o, o->size, &o->slot, h),
			-ENOSPC);
	KUNIT_EXPECT_NULL(test, o->slot);
	KUNIT_EXPECT_EQ(test, o->refs, 0);
	KUNIT_EXPECT_EQ(test, a->num_exports, 0);
	o->pin_error = 0;
	tpod_export(pod, A, o, h);
	KUNIT_EXPECT_TRUE(test, o->pin_intr);	/* in the exporter's process */
	tpod_export(pod, A, o2, h2);
	KUNIT_EXPECT_EQ(test, o->pins, 1);
	KUNIT_EXPECT_EQ(test, o->refs, 1);
	KUNIT_EXPECT_EQ(test, a->num_pins, 2);
	/* the same buffer again: the same export, pinned once */
	tpod_export(pod, A, o, h);
	KUNIT_EXPECT_EQ(test, o->pins, 1);
	KUNIT_EXPECT_EQ(test, a->num_exports, 2);

	/* suspend: once no importer is left (the device left the pod), unpinned */
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &ib), 0);
	amdgpu_ualink_import_put(ib);
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));
	amdgpu_ualink_export_unpin_all(a);
	KUNIT_EXPECT_EQ(test, o->pins, 0);
	KUNIT_EXPECT_EQ(test, o2->pins, 0);
	KUNIT_EXPECT_EQ(test, a->num_pins, 0);
	KUNIT_EXPECT_EQ(test, o->refs, 1);	/* the export's */
	KUNIT_EXPECT_EQ(test, atomic_read(&tpod_node(pod, A)->bad_unpins), 0);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &ib), -EREMOTEIO);

	/* resume: pinned again, but o2, which cannot be */
	o2->pin_error = -ENOMEM;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_export_repin_all(a), 1);
	KUNIT_EXPECT_FALSE(test, o->pin_intr);	/* a resume is not interrupted */
	KUNIT_EXPECT_EQ(test, o->pins, 1);
	KUNIT_EXPECT_EQ(test, o2->pins, 0);
	KUNIT_EXPECT_EQ(test, a->num_pins, 1);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &ib), 0);
	amdgpu_ualink_import_put(ib);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, C), h2, &ib), -EREMOTEIO);
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));
	amdgpu_ualink_export_destroy(a, &o->slot);
	amdgpu_ualink_export_destroy(a, &o2->slot);
	KUNIT_EXPECT_EQ(test, o->pins, 0);
	KUNIT_EXPECT_EQ(test, o->refs, 0);
	KUNIT_EXPECT_EQ(test, o2->refs, 0);
	KUNIT_EXPECT_EQ(test, a->num_pins, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&tpod_node(pod, A)->bad_unpins), 0);
}

/*
 * An export whose pin a resume could not take back (no memory) refuses
 * its importers (-EREMOTEIO), and an importer's ask has the exporter try
 * the pin again, on its workqueue, at most once per interval: once there
 * is memory, the ask after is granted. While suspended, an ask pins
 * nothing, not even for an export a resume failed to pin before.
 */
static void export_repin_retried(struct kunit *test)
{
	struct tpod *pod = pod_create(test);
	struct tobj *o = tpod_obj(pod, 0, SZ_2M);
	struct amdgpu_ualink_dev *a = tpod_dev(pod, A);
	struct amdgpu_ualink_import *ib;
	u64 h[2];

	tpod_export(pod, A, o, h);
	amdgpu_ualink_export_unpin_all(a);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &ib), -EREMOTEIO);
	amdgpu_ualink_dev_flush(a);
	KUNIT_EXPECT_EQ(test, o->pins, 0);
	KUNIT_EXPECT_EQ(test, o->pin_calls, 1);	/* the export's own */

	o->pin_error = -ENOMEM;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_export_repin_all(a), 1);
	KUNIT_EXPECT_EQ(test, o->pin_calls, 2);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &ib), -EREMOTEIO);
	amdgpu_ualink_dev_flush(a);
	KUNIT_EXPECT_EQ(test, o->pin_calls, 3);	/* tried again: still no memory */
	/* within the interval (a second), asks try nothing */
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &ib), -EREMOTEIO);
	amdgpu_ualink_dev_flush(a);
	KUNIT_EXPECT_EQ(test, o->pin_calls, 3);
	a->repin_interval = 0;	/* from here, every ask */
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &ib), -EREMOTEIO);
	amdgpu_ualink_dev_flush(a);
	KUNIT_EXPECT_EQ(test, o->pin_calls, 4);
	KUNIT_EXPECT_EQ(test, o->pins, 0);

	/* suspended again, with memory: an ask tries nothing */
	o->pin_error = 0;
	amdgpu_ualink_export_unpin_all(a);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &ib), -EREMOTEIO);
	amdgpu_ualink_dev_flush(a);
	KUNIT_EXPECT_EQ(test, o->pin_calls, 4);
	KUNIT_EXPECT_EQ(test, o->pins, 0);
	o->pin_error = -ENOMEM;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_export_repin_all(a), 1);

	o->pin_error = 0;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &ib), -EREMOTEIO);
	amdgpu_ualink_dev_flush(a);
	KUNIT_EXPECT_EQ(test, o->pins, 1);
	KUNIT_EXPECT_EQ(test, a->num_pins, 1);
	KUNIT_EXPECT_FALSE(test, o->pin_intr);	/* on a worker */
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &ib), 0);
	amdgpu_ualink_import_put(ib);
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));
	amdgpu_ualink_export_destroy(a, &o->slot);
	KUNIT_EXPECT_EQ(test, o->pins, 0);
	KUNIT_EXPECT_EQ(test, o->refs, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&tpod_node(pod, A)->bad_unpins), 0);
}

/*
 * Two importers: pinned at export, mapped once into one range they share,
 * each let in by the fabric; a release shuts its importer out (the other
 * still reaches the buffer), the last one unmaps; the end unpins.
 */
static void export_grant_and_release(struct kunit *test)
{
	struct tpod *pod = pod_create(test);
	struct tobj *o = tpod_obj(pod, SZ_1G, 4 * SZ_2M);
	struct tpod_node *a = tpod_node(pod, A);
	struct amdgpu_ualink_import *ib, *ic;
	u64 h[2], addr, leaf, allocated, npa;
	unsigned int ranges;
	unsigned long tables;

	tpod_export(pod, A, o, h);
	KUNIT_EXPECT_EQ(test, o->pins, 1);	/* at export */
	KUNIT_EXPECT_EQ(test, tpod_dev(pod, A)->num_pins, 1);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &ib), 0);
	tables = a->dev->pt->tables;
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, C), h, &ic), 0);
	KUNIT_EXPECT_EQ(test, o->pins, 1);
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 2);
	KUNIT_EXPECT_EQ(test, ib->npa, ic->npa);
	KUNIT_EXPECT_EQ(test, ib->size, o->size);
	/* one range, one set of tables, whoever imports */
	amdgpu_ualink_window_usage(&a->dev->window, &allocated, &ranges);
	KUNIT_EXPECT_EQ(test, ranges, 1);
	KUNIT_EXPECT_EQ(test, allocated, o->size);
	KUNIT_EXPECT_EQ(test, a->dev->pt->tables, tables);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->allows), 2);

	/* A's page tables take the range to the buffer, for B and C only */
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_pt_translate(&a->pt,
							 ib->npa - amdgpu_ualink_npa_build(A, 0) +
							 SZ_2M + 5, &addr, &leaf), 0);
	KUNIT_EXPECT_EQ(test, addr, o->addr + SZ_2M + 5);
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, B, ib->npa + SZ_2M + 5, &addr), 0);
	KUNIT_EXPECT_EQ(test, addr, o->addr + SZ_2M + 5);
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, C, ic->npa, &addr), 0);
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, R, ib->npa, &addr), -EACCES);

	KUNIT_EXPECT_EQ(test, o->refs, 1);	/* the pin's */

	amdgpu_ualink_import_put(ib);
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 1);
	KUNIT_EXPECT_EQ(test, o->pins, 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->shootdowns), 1);
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, B, ic->npa, &addr), -EACCES);
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, C, ic->npa, &addr), 0);
	npa = ic->npa;
	amdgpu_ualink_import_put(ic);
	amdgpu_ualink_dev_flush(tpod_dev(pod, C));
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 0);
	KUNIT_EXPECT_EQ(test, o->pins, 1);	/* till the export ends */
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, C, npa, &addr), -EACCES);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->shootdowns), 2);
	amdgpu_ualink_window_usage(&a->dev->window, &allocated, &ranges);
	KUNIT_EXPECT_EQ(test, allocated, 0);
	KUNIT_EXPECT_EQ(test, a->dev->pt->tables, 1);	/* the root */
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o->slot);
	KUNIT_EXPECT_EQ(test, o->pins, 0);
	KUNIT_EXPECT_EQ(test, o->refs, 0);
	KUNIT_EXPECT_EQ(test, tpod_dev(pod, A)->num_pins, 0);
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
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 0);
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o->slot);
}

/*
 * The exporter's window is full: -ENOSPC for the export that does not fit,
 * which stays unmapped; importers of the one that fits are not affected.
 */
static void export_no_space(struct kunit *test)
{
	struct tpod *pod = pod_create(test);
	struct tobj *o = tpod_obj(pod, 0, SZ_1T), *o2 = tpod_obj(pod, 0, SZ_1T);
	struct amdgpu_ualink_import *ib, *ic, *none;
	u64 h[2], h2[2];

	tpod_export(pod, A, o, h);
	tpod_export(pod, A, o2, h2);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &ib), 0);
	/* a second importer shares the range */
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, C), h, &ic), 0);
	/* 2 TiB minus the ring reserve holds one 1 TiB range */
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, C), h2, &none), -ENOSPC);
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 2);
	KUNIT_EXPECT_EQ(test, o->pins, 1);
	KUNIT_EXPECT_EQ(test, o2->pins, 1);
	KUNIT_EXPECT_EQ(test, o2->refs, 1);	/* the export's */
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o->slot);
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o2->slot);
	KUNIT_EXPECT_EQ(test, o->pins, 0);
	/* the imports were revoked */
	KUNIT_EXPECT_EQ(test, ib->state, AMDGPU_UALINK_IMPORT_DEAD);
	KUNIT_EXPECT_EQ(test, ic->state, AMDGPU_UALINK_IMPORT_DEAD);
	amdgpu_ualink_import_put(ib);
	amdgpu_ualink_import_put(ic);
}

/*
 * A granted range is always aligned as its size says: amdgpu's GPUVM
 * refuses (-ERANGE) one that is not, for as long as it lives. A's only
 * hole large enough for a 1 GiB + 2 MiB range has room for it at 2 MiB
 * alignment only: B's import is refused for want of space (-ENOSPC), not
 * granted a misaligned range. Once a 1 GiB-aligned hole is large enough,
 * the same import is granted there.
 */
static void export_range_aligned_or_refused(struct kunit *test)
{
	struct tpod *pod = pod_create(test);
	struct tobj *o = tpod_obj(pod, SZ_1G, SZ_1G + SZ_2M);
	struct amdgpu_ualink_window *win = &tpod_dev(pod, A)->window;
	u64 base = amdgpu_ualink_npa_build(A, 0);
	struct amdgpu_ualink_npa_range r0, r1, rest;
	struct amdgpu_ualink_import *ib;
	u64 h[2];

	/* [1 GiB, 2 GiB), [2 GiB, 3 GiB), then all up to the window's end */
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_window_alloc(win, SZ_1G, &r0), 0);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_window_alloc(win, SZ_1G, &r1), 0);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_window_alloc(win, AMDGPU_UALINK_NPA_WINDOW_SIZE -
							 3ULL * SZ_1G, &rest), 0);
	KUNIT_ASSERT_EQ(test, r1.node.start, base + SZ_2G);
	/* free: from the ring reserve to 2 GiB, 1 GiB-aligned only at 1 GiB */
	amdgpu_ualink_window_free(win, &r0);
	tpod_export(pod, A, o, h);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &ib), -ENOSPC);
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 0);

	amdgpu_ualink_window_free(win, &r1);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &ib), 0);
	KUNIT_EXPECT_EQ(test, ib->npa, base + SZ_1G);
	KUNIT_EXPECT_EQ(test, ib->size, SZ_1G + SZ_2M);
	amdgpu_ualink_import_put(ib);
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));
	amdgpu_ualink_window_free(win, &rest);
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o->slot);
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
	/* each importer answered the revocation, then released */
	KUNIT_EXPECT_EQ(test, stats_of(pod, A)->received[AMDGPU_UALINK_MSG_NPA_RELEASE], 4);
	KUNIT_EXPECT_EQ(test, stats_of(pod, A)->timeouts, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&tpod_dev(pod, A)->release_timeouts), 0);

	/* the handle is gone */
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &again), -ENOENT);
	/* dead imports hold nothing: their last put sends no release */
	amdgpu_ualink_import_put(ib);
	amdgpu_ualink_import_put(ic);
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));
	amdgpu_ualink_dev_flush(tpod_dev(pod, C));
	KUNIT_EXPECT_EQ(test, tpod_dev(pod, B)->num_imports, 0);
	KUNIT_EXPECT_EQ(test, tpod_dev(pod, C)->num_imports, 0);
	KUNIT_EXPECT_EQ(test, stats_of(pod, A)->received[AMDGPU_UALINK_MSG_NPA_RELEASE], 4);
}

/* Has @id sent @n NPA_REVOKE messages (revocations and answers) by now? */
struct revokes_at {
	struct tpod *pod;
	u16 id;
	u64 n;
};

static bool revokes_sent(void *arg)
{
	struct revokes_at *r = arg;
	struct amdgpu_ualink_mbox_stats st;

	amdgpu_ualink_mbox_get_stats(tpod_node(r->pod, r->id)->mbox, -1, &st);
	return st.sent[AMDGPU_UALINK_MSG_NPA_REVOKE] >= r->n;
}

/*
 * Without memory for an ending export's revocations (the test makes the
 * allocation fail), the importers are told one at a time: each answers
 * and releases as in export_destroy_revokes, the anchor, and none loses
 * its connection, nor anything else it holds of A's, for A's want of
 * memory.
 */
static void export_revocations_without_memory(struct kunit *test)
{
	struct tpod *pod = pod_create(test);
	struct tobj *o = tpod_obj(pod, SZ_2M, SZ_2M), *o2 = tpod_obj(pod, SZ_4M, SZ_2M);
	struct tobj *bb = tpod_obj(pod, 0, 0), *cb = tpod_obj(pod, 0, 0);
	struct amdgpu_ualink_import *ib, *ic, *ib2;
	struct revokes_at rs = { .pod = pod, .id = A, .n = 4 };
	static const u16 importers[] = { B, C };
	enum amdgpu_ualink_conn_state state;
	u64 h[2], h2[2], gen;
	unsigned int i;

	tpod_export(pod, A, o, h);
	tpod_export(pod, A, o2, h2);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &ib), 0);
	amdgpu_ualink_import_set_obj(ib, bb);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, C), h, &ic), 0);
	amdgpu_ualink_import_set_obj(ic, cb);
	/* what B holds of A besides: another import */
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h2, &ib2), 0);

	tpod_dev(pod, A)->fail_revocations = true;
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o->slot);
	KUNIT_EXPECT_TRUE(test, bb->dead);
	KUNIT_EXPECT_TRUE(test, cb->dead);
	KUNIT_EXPECT_EQ(test, o->pins, 0);
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 1);
	/*
	 * two revocations, and the answers to the two releases: the last
	 * answer may leave after the release let the wait end
	 */
	KUNIT_EXPECT_TRUE(test, tpod_wait_for(revokes_sent, &rs, 10000));
	KUNIT_EXPECT_EQ(test, stats_of(pod, A)->sent[AMDGPU_UALINK_MSG_NPA_REVOKE], 4);
	/* each importer answered the revocation, then released */
	KUNIT_EXPECT_EQ(test, stats_of(pod, A)->received[AMDGPU_UALINK_MSG_NPA_RELEASE], 4);
	KUNIT_EXPECT_EQ(test, atomic_read(&tpod_dev(pod, A)->release_timeouts), 0);
	for (i = 0; i < ARRAY_SIZE(importers); i++) {
		KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_peer_state(tpod_mbox(pod, A), importers[i],
								    &state, &gen), 0);
		KUNIT_EXPECT_EQ(test, state, AMDGPU_UALINK_CONN_ESTABLISHED);
		KUNIT_EXPECT_EQ(test, stats_of(pod, importers[i])->resets, 0);
	}
	KUNIT_EXPECT_EQ(test, stats_of(pod, A)->resets, 0);
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));
	KUNIT_EXPECT_EQ(test, ib2->state, AMDGPU_UALINK_IMPORT_READY);

	amdgpu_ualink_import_put(ib);
	amdgpu_ualink_import_put(ic);
	amdgpu_ualink_import_put(ib2);
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));
	amdgpu_ualink_dev_flush(tpod_dev(pod, C));
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o2->slot);
}

/*
 * Told one at a time (no memory for the revocations), an importer that
 * released meanwhile is not told at all: A's revocation to B waits, B's
 * mailbox paused, while C lets go of its import; then B answers, and C,
 * out of the access set by then, hears nothing but the answer to its
 * release. In export_revocations_without_memory, the anchor, C is told.
 */
static void export_revocations_without_memory_skip_gone(struct kunit *test)
{
	struct tpod *pod = pod_create(test);
	struct tobj *o = tpod_obj(pod, SZ_2M, SZ_2M), *bb = tpod_obj(pod, 0, 0);
	struct revokes_at rs = { .pod = pod, .id = A, .n = 1 };
	struct amdgpu_ualink_import *ib, *ic;
	u64 h[2];

	tpod_export(pod, A, o, h);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &ib), 0);
	amdgpu_ualink_import_set_obj(ib, bb);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, C), h, &ic), 0);

	tpod_dev(pod, A)->fail_revocations = true;
	tpod_pause(pod, B, true);
	amdgpu_ualink_export_end(tpod_dev(pod, A), &o->slot);
	/* B's revocation is on its way, B does not answer yet */
	KUNIT_EXPECT_TRUE(test, tpod_wait_for(revokes_sent, &rs, 10000));
	amdgpu_ualink_import_put(ic);
	amdgpu_ualink_dev_flush(tpod_dev(pod, C));
	KUNIT_EXPECT_EQ(test, tpod_dev(pod, C)->num_imports, 0);
	tpod_pause(pod, B, false);
	amdgpu_ualink_dev_flush(tpod_dev(pod, A));

	KUNIT_EXPECT_TRUE(test, bb->dead);
	KUNIT_EXPECT_EQ(test, o->pins, 0);
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 0);
	/* C's only NPA_REVOKE is A's answer to its release */
	KUNIT_EXPECT_EQ(test, stats_of(pod, C)->received[AMDGPU_UALINK_MSG_NPA_REVOKE], 1);
	KUNIT_EXPECT_EQ(test, stats_of(pod, B)->received[AMDGPU_UALINK_MSG_NPA_REVOKE], 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&tpod_dev(pod, A)->release_timeouts), 0);
	KUNIT_EXPECT_EQ(test, stats_of(pod, A)->timeouts, 0);
	amdgpu_ualink_import_put(ib);
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));
}

static bool dead_at(void *arg)
{
	return READ_ONCE(((struct tobj *)arg)->dead);
}

struct grants_at {
	struct tpod *pod;
	u16 id;
};

static bool no_grants(void *arg)
{
	struct grants_at *g = arg;

	return !tpod_grants(g->pod, g->id);
}

static bool revoke_answered(void *arg)
{
	struct grants_at *g = arg;
	struct amdgpu_ualink_mbox_stats st;

	amdgpu_ualink_mbox_get_stats(tpod_node(g->pod, g->id)->mbox, -1, &st);
	return st.received[AMDGPU_UALINK_MSG_NPA_RELEASE] >= 1;
}

/*
 * B's GPU work runs on its import when A's export ends. B's mailbox
 * answers at once and its buffer dies at once (no new work reaches the
 * range); A keeps the memory mapped for B until that work is done, and B's
 * worker serves other requests meanwhile; then B releases and A lets go.
 */
static void export_revoke_waits_for_gpu_work(struct kunit *test)
{
	struct tpod *pod = pod_create(test);
	struct tobj *o = tpod_obj(pod, SZ_2M, SZ_2M), *o2 = tpod_obj(pod, SZ_4M, SZ_4K);
	struct tobj *bb = tpod_obj(pod, 0, 0);
	struct grants_at ga = { .pod = pod, .id = A };
	struct amdgpu_ualink_import *ib, *ib2;
	u64 h[2], h2[2], addr, npa;

	tpod_export(pod, A, o, h);
	tpod_export(pod, A, o2, h2);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &ib), 0);
	amdgpu_ualink_import_set_obj(ib, bb);
	bb->job = tpod_job(pod);
	npa = ib->npa;

	amdgpu_ualink_export_end(tpod_dev(pod, A), &o->slot);
	KUNIT_EXPECT_TRUE(test, tpod_wait_for(dead_at, bb, 10000));
	KUNIT_EXPECT_EQ(test, ib->state, AMDGPU_UALINK_IMPORT_DEAD);
	/* B's worker is free: a new import round trip completes */
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h2, &ib2), 0);
	amdgpu_ualink_import_put(ib2);
	/*
	 * A heard B's answer ("release later"): from here only B's release,
	 * or A's bound of seconds, lets A go. It still holds the memory.
	 */
	KUNIT_EXPECT_TRUE(test, tpod_wait_for(revoke_answered, &ga, 10000));
	KUNIT_EXPECT_EQ(test, o->pins, 1);
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, B, npa, &addr), 0);
	KUNIT_EXPECT_EQ(test, addr, o->addr);

	dma_fence_signal(bb->job);
	KUNIT_EXPECT_TRUE(test, tpod_wait_for(no_grants, &ga, 10000));
	amdgpu_ualink_dev_flush(tpod_dev(pod, A));
	KUNIT_EXPECT_EQ(test, o->pins, 0);
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, B, npa, &addr), -EACCES);
	KUNIT_EXPECT_EQ(test, atomic_read(&tpod_dev(pod, A)->release_timeouts), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&tpod_dev(pod, B)->revoke_timeouts), 0);
	KUNIT_EXPECT_EQ(test, stats_of(pod, A)->timeouts, 0);
	amdgpu_ualink_import_put(ib);
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));
	KUNIT_EXPECT_EQ(test, tpod_dev(pod, B)->num_imports, 0);
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o2->slot);
}

/*
 * GPU work that never ends holds nothing for long: the importer releases
 * after its bound (and counts it); an exporter whose importer does not
 * release within its own bound shuts it out at the fabric all the same.
 */
static void export_revoke_bounded(struct kunit *test)
{
	struct tpod *pod = pod_create(test);
	struct tobj *o = tpod_obj(pod, SZ_2M, SZ_2M), *bb = tpod_obj(pod, 0, 0);
	struct amdgpu_ualink_dev *a = tpod_dev(pod, A), *b = tpod_dev(pod, B);
	struct amdgpu_ualink_import *ib;
	u64 h[2], addr, npa;

	/* the importer's bound is shorter than the exporter's */
	b->revoke_timeout = msecs_to_jiffies(200);
	a->revoke_timeout = msecs_to_jiffies(5000);
	tpod_export(pod, A, o, h);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(b, h, &ib), 0);
	amdgpu_ualink_import_set_obj(ib, bb);
	bb->job = tpod_job(pod);	/* never signalled before the test ends */
	npa = ib->npa;
	amdgpu_ualink_export_destroy(a, &o->slot);
	KUNIT_EXPECT_EQ(test, atomic_read(&b->revoke_timeouts), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->release_timeouts), 0);
	KUNIT_EXPECT_EQ(test, o->pins, 0);
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, B, npa, &addr), -EACCES);
	amdgpu_ualink_import_set_obj(ib, NULL);
	amdgpu_ualink_import_put(ib);

	/* now the exporter's is: it stops waiting, the fabric refuses B */
	b->revoke_timeout = msecs_to_jiffies(60000);
	a->revoke_timeout = msecs_to_jiffies(100);
	bb = tpod_obj(pod, 0, 0);
	tpod_export(pod, A, o, h);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(b, h, &ib), 0);
	amdgpu_ualink_import_set_obj(ib, bb);
	bb->job = tpod_job(pod);
	npa = ib->npa;
	amdgpu_ualink_export_destroy(a, &o->slot);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->release_timeouts), 1);
	KUNIT_EXPECT_EQ(test, o->pins, 0);
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 0);
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, B, npa, &addr), -EACCES);
	/* the work ends: B's late release finds nothing, harmlessly */
	dma_fence_signal(bb->job);
	amdgpu_ualink_dev_flush(b);
	KUNIT_EXPECT_EQ(test, atomic_read(&b->revoke_timeouts), 1);
	amdgpu_ualink_import_set_obj(ib, NULL);
	amdgpu_ualink_import_put(ib);
}

/* An importer resets: the exporter drops its grants; the pin stays. */
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
	KUNIT_EXPECT_EQ(test, o->pins, 1);
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
	snprintf(want, sizeof(want), "  npa %#llx size %u, to: %u\n", ib->npa, SZ_2M, B);
	KUNIT_EXPECT_NOT_NULL(test, strstr(ta.buf, want));
	snprintf(want, sizeof(want), "import ...%08x from %u: ready", lower_32_bits(h[1]), A);
	KUNIT_EXPECT_NOT_NULL(test, strstr(tb.buf, want));
	/* never the whole handle */
	snprintf(want, sizeof(want), "%08x", upper_32_bits(h[1]));
	KUNIT_EXPECT_NULL(test, strstr(ta.buf, want));

	amdgpu_ualink_import_put(ib);
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o->slot);
}

/* --- figures: printed, never asserted --- */

/*
 * Kernel memory per export with 0, 1 and 16 importers, and per import: an
 * importer costs the exporter one bit of the access set, nothing more.
 */
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
	size_t none, one, sixteen;
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
	kunit_info(test, "export: %zu bytes with no importer, %zu with 1, %zu with 16: %zu per importer after the first\n",
		   none, one, sixteen, (sixteen - one) / 15);
	kunit_info(test, "import: %zu bytes\n", ksize(imps[0]));
	/*
	 * The first importer brings the range; later ones nothing but a bit
	 * (exact sizes vary: KFENCE reports the requested size of the
	 * objects it samples).
	 */
	KUNIT_EXPECT_GT(test, one, none);
	KUNIT_EXPECT_EQ(test, sixteen, one);
	for (i = 0; i < 16; i++)
		amdgpu_ualink_import_put(imps[i]);
	for (i = 0; i < 16; i++)
		amdgpu_ualink_dev_flush(tpod_dev(pod, many[1 + i]));
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o->slot);
}

/*
 * The @i-th shootdown @exporter asked for went to @importer, for @npa and
 * @size (a range, or the whole window when the importer was taken out of
 * everything).
 */
static void expect_shot(struct kunit *test, struct tpod *pod, u16 exporter,
			int i, u16 importer, u64 npa, u64 size)
{
	struct tpod_node *node = tpod_node(pod, exporter);

	KUNIT_ASSERT_GT(test, atomic_read(&node->shots), i);
	KUNIT_EXPECT_EQ(test, node->shot[i].importer, importer);
	KUNIT_EXPECT_EQ(test, node->shot[i].npa, npa);
	KUNIT_EXPECT_EQ(test, node->shot[i].size, size);
}

struct reach {
	struct tpod *pod;
	u16 who;
	u64 npa;
};

static bool refused(void *arg)
{
	struct reach *r = arg;
	u64 addr;

	return tpod_fabric(r->pod, r->who, r->npa, &addr) == -EACCES;
}

/*
 * Unreachable at the fabric, whatever takes an importer out: its release,
 * the export's end, the range reused by another export, the importer's
 * reset, the exporter's reset, a change of virtual pod. Each time the old
 * importer and R, which never imported, are refused by the exporter's
 * access check, and the shootdowns go to exactly the importers taken out:
 * for the range they held when they let go or the export ended, for the
 * whole window when they were taken out of every export at once (a lost
 * or reset peer, a change of virtual pod, our reset).
 */
static void export_unreachable(struct kunit *test)
{
	struct tpod *pod = pod_create(test);
	struct tobj *o = tpod_obj(pod, SZ_1G, SZ_2M), *o2 = tpod_obj(pod, SZ_2G, SZ_2M);
	struct tpod_node *a = tpod_node(pod, A);
	struct amdgpu_ualink_import *ib, *ic;
	struct reach rb = { .pod = pod, .who = B };
	u64 h[2], h2[2], addr, npa, window = amdgpu_ualink_npa_build(A, 0);
	const u64 all = AMDGPU_UALINK_NPA_WINDOW_SIZE;

	tpod_export(pod, A, o, h);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &ib), 0);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, C), h, &ic), 0);
	npa = ib->npa;
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, R, npa, &addr), -EACCES);

	/* B's release */
	amdgpu_ualink_import_put(ib);
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, B, npa, &addr), -EACCES);
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, C, npa, &addr), 0);
	KUNIT_EXPECT_EQ(test, addr, o->addr);
	expect_shot(test, pod, A, 0, B, npa, SZ_2M);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->shots), 1);

	/* the export ends: C is revoked, answers, and is shut out */
	amdgpu_ualink_export_destroy(a->dev, &o->slot);
	KUNIT_EXPECT_EQ(test, ic->state, AMDGPU_UALINK_IMPORT_DEAD);
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, C, npa, &addr), -EACCES);
	expect_shot(test, pod, A, 1, C, npa, SZ_2M);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->shots), 2);
	amdgpu_ualink_import_put(ic);

	/* the range goes to another export: only its importer reaches it */
	tpod_export(pod, A, o2, h2);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, C), h2, &ic), 0);
	KUNIT_ASSERT_EQ(test, ic->npa, npa);	/* reused */
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, C, npa, &addr), 0);
	KUNIT_EXPECT_EQ(test, addr, o2->addr);
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, B, npa, &addr), -EACCES);
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, R, npa, &addr), -EACCES);

	/* B imports it and resets: the end of its connection shuts it out */
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h2, &ib), 0);
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, B, npa, &addr), 0);
	rb.npa = npa;
	amdgpu_ualink_mbox_reset(tpod_dev(pod, B)->mbox);
	KUNIT_EXPECT_TRUE(test, tpod_wait_for(refused, &rb, 10000));
	expect_shot(test, pod, A, 2, B, window, all);
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, C, npa, &addr), 0);
	amdgpu_ualink_import_put(ib);

	/* C leaves A's virtual pod */
	tpod_node(pod, C)->vpod = 5;
	amdgpu_ualink_export_revoke_nonmembers(a->dev);
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, C, npa, &addr), -EACCES);
	expect_shot(test, pod, A, 3, C, window, all);
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 0);
	KUNIT_EXPECT_EQ(test, o2->pins, 1);	/* the export's, till it ends */
	tpod_node(pod, C)->vpod = 0;
	amdgpu_ualink_import_put(ic);
	amdgpu_ualink_dev_flush(tpod_dev(pod, C));

	/* C imports again; A resets (leaving its pod meanwhile) */
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, C), h2, &ic), 0);
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, C, ic->npa, &addr), 0);
	npa = ic->npa;
	a->vpod = 3;
	amdgpu_ualink_dev_reset(a->dev);
	a->vpod = 0;
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, C, npa, &addr), -EACCES);
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, R, npa, &addr), -EACCES);
	expect_shot(test, pod, A, 4, C, window, all);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->shots), 5);
	/* every refusal above was counted where it arrived */
	KUNIT_EXPECT_EQ(test, atomic_read(&a->faults), 9);
	amdgpu_ualink_import_put(ic);
	amdgpu_ualink_dev_flush(tpod_dev(pod, C));
	amdgpu_ualink_export_destroy(a->dev, &o2->slot);
}

static bool dropped_one(void *arg)
{
	struct amdgpu_ualink_fault *fault = arg;

	return READ_ONCE(fault->injected[AMDGPU_UALINK_FAULT_DROP]) > 0;
}

/*
 * An importer that never hears its revocation (the NPA_REVOKE is dropped)
 * while it talks to us about another export: the revocation fails alone,
 * the importer still believes its import ready, and the range goes to the
 * next export here. Its connection was ended, so the importer's next
 * request brings a HELLO that kills the stale import before the importer
 * is let into the range again; otherwise the stale import would reach the
 * new export's memory.
 */
static void export_unanswered_revoke(struct kunit *test)
{
	struct tpod *pod = pod_create(test);
	struct tobj *o = tpod_obj(pod, SZ_1G, SZ_2M), *o2 = tpod_obj(pod, SZ_2G, SZ_2M);
	struct tobj *o3 = tpod_obj(pod, SZ_4G, SZ_2M);
	struct amdgpu_ualink_fault_rule drop = {
		.types = BIT(AMDGPU_UALINK_MSG_NPA_REVOKE),
		.rate = AMDGPU_UALINK_FAULT_RATE_ONE,
	};
	struct amdgpu_ualink_fault *fault = amdgpu_ualink_mbox_fault(tpod_mbox(pod, A));
	struct amdgpu_ualink_import *ib, *ib2 = NULL, *ib3;
	enum amdgpu_ualink_conn_state state;
	u64 h[2], h2[2], h3[2], addr, npa, gen;
	int ret, tries;

	tpod_export(pod, A, o, h);
	tpod_export(pod, A, o3, h3);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &ib), 0);
	npa = ib->npa;
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_set_timeout(tpod_mbox(pod, A), 1000, 1), 0);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_fault_set(fault, AMDGPU_UALINK_FAULT_DROP, &drop), 0);

	amdgpu_ualink_export_end(tpod_dev(pod, A), &o->slot);
	/* the revocation is on its way (and lost): B asks about another export */
	KUNIT_ASSERT_TRUE(test, tpod_wait_for(dropped_one, fault, 10000));
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h3, &ib3), 0);
	amdgpu_ualink_dev_flush(tpod_dev(pod, A));
	amdgpu_ualink_fault_clear(fault);

	KUNIT_EXPECT_EQ(test, ib->state, AMDGPU_UALINK_IMPORT_READY);	/* stale */
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, B, npa, &addr), -EACCES);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_peer_state(tpod_mbox(pod, A), B, &state, &gen), 0);
	KUNIT_EXPECT_NE(test, state, AMDGPU_UALINK_CONN_ESTABLISHED);

	/* the range goes to the next export, which B imports */
	tpod_export(pod, A, o2, h2);
	for (tries = 0; tries < 3; tries++) {
		ret = amdgpu_ualink_import_get(tpod_dev(pod, B), h2, &ib2);
		if (ret != -ENOLINK)
			break;
	}
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, ib2->npa, npa);		/* reused */
	/* the stale import is dead before B could reach o2 through it */
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));
	KUNIT_EXPECT_EQ(test, ib->state, AMDGPU_UALINK_IMPORT_DEAD);

	amdgpu_ualink_import_put(ib);
	amdgpu_ualink_import_put(ib2);
	amdgpu_ualink_import_put(ib3);
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o2->slot);
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o3->slot);
}

/*
 * An importer that never hears its revocation (its mailbox is paused, as
 * if the message were dropped) still believes its import ready, and keeps
 * whatever it cached: once the exporter gave up waiting and ended the
 * export, the fabric refuses it all the same.
 */
static void export_stale_importer(struct kunit *test)
{
	struct tpod *pod = pod_create(test);
	struct tobj *o = tpod_obj(pod, SZ_1G, SZ_2M);
	struct amdgpu_ualink_import *ib;
	u64 h[2], addr;

	tpod_export(pod, A, o, h);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &ib), 0);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_set_timeout(tpod_mbox(pod, A), 100, 1), 0);
	tpod_pause(pod, B, true);
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o->slot);
	KUNIT_EXPECT_EQ(test, stats_of(pod, A)->received[AMDGPU_UALINK_MSG_NPA_RELEASE], 0);
	KUNIT_EXPECT_EQ(test, ib->state, AMDGPU_UALINK_IMPORT_READY);
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, B, ib->npa, &addr), -EACCES);
	KUNIT_EXPECT_EQ(test, o->pins, 0);
	tpod_pause(pod, B, false);
	amdgpu_ualink_import_put(ib);
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));
}

/*
 * An importer that does not acknowledge its shootdown (the driver's bounded
 * wait ran out): the removal goes on, since the fabric refuses the importer
 * already; the range is unmapped and the failure counted.
 */
static void export_shootdown_unacknowledged(struct kunit *test)
{
	struct tpod *pod = pod_create(test);
	struct tobj *o = tpod_obj(pod, SZ_1G, SZ_2M);
	struct tpod_node *a = tpod_node(pod, A);
	struct amdgpu_ualink_import *ib;
	u64 h[2], addr, npa, allocated;
	unsigned int ranges;

	tpod_export(pod, A, o, h);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &ib), 0);
	npa = ib->npa;
	WRITE_ONCE(a->shootdown_fails, true);
	amdgpu_ualink_import_put(ib);
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));
	KUNIT_EXPECT_EQ(test, atomic_read(&a->dev->shootdown_errors), 1);
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, B, npa, &addr), -EACCES);
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 0);
	KUNIT_EXPECT_EQ(test, o->pins, 1);	/* the export's, till it ends */
	amdgpu_ualink_window_usage(&a->dev->window, &allocated, &ranges);
	KUNIT_EXPECT_EQ(test, ranges, 0);
	amdgpu_ualink_export_destroy(a->dev, &o->slot);
}

/* A bare NPA_REQ or NPA_RELEASE from @from, as the mailbox hands it over. */
static void heap_request(struct amdgpu_ualink_dev *exporter, u16 from, u8 type,
			 const u64 h[2], u64 npa, u64 size,
			 struct amdgpu_ualink_msg *rsp)
{
	struct amdgpu_ualink_msg req = {
		.type = type, .handle = { h[0], h[1] }, .npa = npa, .size = size,
	};

	memset(rsp, 0, sizeof(*rsp));
	rsp->type = AMDGPU_UALINK_MSG_NPA_FAIL;
	rsp->reason = AMDGPU_UALINK_FAIL_INVALID_HANDLE;
	amdgpu_ualink_export_request(exporter, from, &req, rsp);
}

#define HEAP_NODES	AMDGPU_UALINK_MAX_ACCELS
#define HEAP_SIZE	(64ULL << 30)

/*
 * A symmetric heap at pod scale: 1,024 accelerators, each exports a heap of
 * 64 GiB (emulated: every heap maps the same made-up device addresses) and
 * grants it to all 1,023 others, through the exporter's NPA_REQ handler
 * (accelerator 0 imports every heap through the whole mailbox path too).
 * Every grant succeeds, each exporter's window holds one range, and the
 * exporter's memory does not grow with its importers. The figures are
 * printed. At full_scale=0 (the debug guest) every accelerator still
 * exports and accelerator 0 still imports every heap, but only every 64th
 * exporter and the last are asked by all the others: 17,000 requests
 * instead of a million, through the same code.
 */
static bool heap_fan_in(unsigned int e)
{
	return tpod_full_scale || e % 64 == 0 || e == HEAP_NODES - 1;
}

static void export_symmetric_heap(struct kunit *test)
{
	u16 *ids = kunit_kcalloc(test, HEAP_NODES, sizeof(*ids), GFP_KERNEL);
	enum tpod_kind *devs = kunit_kcalloc(test, HEAP_NODES, sizeof(*devs), GFP_KERNEL);
	struct amdgpu_ualink_import **imps;
	size_t first = 0, all = 0, max_bytes = 0;
	struct amdgpu_ualink_msg rsp;
	unsigned long tables = 0;
	unsigned int e, i, bad = 0, fanned = 0;
	struct tobj *heaps;
	u64 (*h)[2], *npa;
	struct tpod *pod;

	KUNIT_ASSERT_NOT_NULL(test, ids);
	KUNIT_ASSERT_NOT_NULL(test, devs);
	for (i = 0; i < HEAP_NODES; i++) {
		ids[i] = i;
		devs[i] = TPOD_DEV;
	}
	pod = tpod_create(test, HEAP_NODES, ids, devs);
	heaps = kunit_kcalloc(test, HEAP_NODES, sizeof(*heaps), GFP_KERNEL);
	h = kunit_kcalloc(test, HEAP_NODES, sizeof(*h), GFP_KERNEL);
	npa = kunit_kcalloc(test, HEAP_NODES, sizeof(*npa), GFP_KERNEL);
	imps = kunit_kcalloc(test, HEAP_NODES, sizeof(*imps), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, heaps);
	KUNIT_ASSERT_NOT_NULL(test, h);
	KUNIT_ASSERT_NOT_NULL(test, npa);
	KUNIT_ASSERT_NOT_NULL(test, imps);

	for (e = 0; e < HEAP_NODES; e++) {
		heaps[e].size = HEAP_SIZE;
		tpod_export(pod, e, &heaps[e], h[e]);
	}
	/* accelerator 0 imports every heap, mailbox and all */
	for (e = 1; e < HEAP_NODES; e++)
		KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, 0), h[e],
							       &imps[e]), 0);
	for (e = 0; e < HEAP_NODES; e++) {
		struct amdgpu_ualink_dev *dev = tpod_dev(pod, e);
		u64 allocated;
		unsigned int ranges;

		if (!heap_fan_in(e)) {
			/* granted to accelerator 0 alone: one range all the same */
			amdgpu_ualink_window_usage(&dev->window, &allocated, &ranges);
			if (ranges != 1 || tpod_grants(pod, e) != 1)
				bad++;
			continue;
		}
		fanned++;
		for (i = 0; i < HEAP_NODES; i++) {
			if (i == e)
				continue;
			heap_request(dev, i, AMDGPU_UALINK_MSG_NPA_REQ, h[e], 0, 0, &rsp);
			if (rsp.type != AMDGPU_UALINK_MSG_NPA_RSP || rsp.size != HEAP_SIZE ||
			    (npa[e] && rsp.npa != npa[e]))
				bad++;
			npa[e] = rsp.npa;
			if (i == !e)
				first = amdgpu_ualink_export_bytes(dev, h[e]);
		}
		all = amdgpu_ualink_export_bytes(dev, h[e]);
		amdgpu_ualink_window_usage(&dev->window, &allocated, &ranges);
		if (ranges != 1 || allocated != HEAP_SIZE || all != first ||
		    tpod_grants(pod, e) != HEAP_NODES - 1)
			bad++;
		max_bytes = max(max_bytes, all);
		tables = max(tables, dev->pt->tables);
	}
	KUNIT_EXPECT_EQ(test, bad, 0);
	/* the last exporter is asked by all at any scale */
	KUNIT_EXPECT_EQ(test, imps[HEAP_NODES - 1]->npa, npa[HEAP_NODES - 1]);
	kunit_info(test, "1,024 exporters of 64 GiB, %u of them with 1,023 importers: one range of %llu GiB per window, %zu bytes per export, %zu per importer, at most %lu page tables per exporter\n",
		   fanned, HEAP_SIZE >> 30, max_bytes, (all - first) / (HEAP_NODES - 2),
		   tables);
	/* the budget: one bit per importer, at most 512 bytes per export */
	KUNIT_EXPECT_LE(test, max_bytes, 512);
	KUNIT_EXPECT_EQ(test, all, first);

	for (e = 1; e < HEAP_NODES; e++)
		amdgpu_ualink_import_put(imps[e]);
	amdgpu_ualink_dev_flush(tpod_dev(pod, 0));
	for (e = 0; e < HEAP_NODES; e++) {
		for (i = 1; i < HEAP_NODES && heap_fan_in(e); i++)
			if (i != e)
				heap_request(tpod_dev(pod, e), i, AMDGPU_UALINK_MSG_NPA_RELEASE,
					     h[e], npa[e], HEAP_SIZE, &rsp);
		KUNIT_EXPECT_EQ(test, tpod_grants(pod, e), 0);
		KUNIT_EXPECT_EQ(test, heaps[e].pins, 1);
		amdgpu_ualink_export_destroy(tpod_dev(pod, e), &heaps[e].slot);
		KUNIT_EXPECT_EQ(test, heaps[e].pins, 0);
	}
}

/* A thread that destroys an export, or resets its device. */
struct destroyer {
	struct amdgpu_ualink_dev *dev;
	struct tobj *o;
	bool reset;
	struct completion done;
	int pins;	/* the buffer's, when the destroyer returned */
	int want_pins;	/* what they must be: 1 after a reset, 0 after a destroy */
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
	/* a destroyed export was unpinned before the destroyer returned */
	KUNIT_EXPECT_EQ(test, d->pins, d->want_pins);
	KUNIT_EXPECT_EQ(test, d->dev->num_pins, d->want_pins);
	/* and its reference dropped; a reset keeps the export */
	KUNIT_EXPECT_EQ(test, d->o->refs, d->want_pins);
}

/*
 * An importer's release undone on the exporter's worker while the export
 * is destroyed: the destroyer must not unpin and return, and so let the
 * driver free the buffer, before the worker is done with the range. The
 * worker is held before it drops the last grant; the destroyer, asleep
 * since before the drop, is woken as any other grant's undo may wake it
 * (wait_var_event() on the export) and must go back to sleep. Once the
 * worker let go, the destroyer unpins (it stops in the unpin: the worker
 * never gets there) and returns with the export's reference dropped.
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
	wake_up_var(exp);
	KUNIT_EXPECT_TRUE(test, tpod_wait_blocked(task, &d.done));
	KUNIT_EXPECT_FALSE(test, completion_done(&d.done));
	KUNIT_EXPECT_EQ(test, o->pins, 1);

	/* the worker drops the grant; then the destroyer unpins */
	tpod_hold_release(&a->shootdown_hold);
	KUNIT_EXPECT_TRUE(test, tpod_hold_reached(&a->unpin_hold));
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 0);
	KUNIT_EXPECT_EQ(test, o->refs, 1);	/* still held for the unpin */
	KUNIT_EXPECT_TRUE(test, tpod_wait_blocked(task, &d.done));
	KUNIT_EXPECT_FALSE(test, completion_done(&d.done));

	tpod_hold_release(&a->unpin_hold);
	destroyer_end(test, &d, task);
}

/*
 * The same for a reset of the exporter, which leaves the pod (suspend, GPU
 * reset): what the worker was undoing is undone when the reset returns,
 * before the driver unpins (suspend), evicts or resets the memory. The
 * export stays, pinned.
 */
static void export_reset_waits_for_undo(struct kunit *test)
{
	struct tpod *pod = pod_create(test);
	struct tobj *o = tpod_obj(pod, SZ_2M, SZ_2M);
	struct destroyer d = {
		.dev = tpod_dev(pod, A), .o = o, .reset = true, .want_pins = 1,
	};
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

/* Do two NPA ranges share an address? */
static bool overlap(u64 npa, u64 size, u64 npa2, u64 size2)
{
	return npa < npa2 + size2 && npa2 < npa + size;
}

/* A thread that takes the importers out of the pod from the access sets. */
struct remover {
	struct amdgpu_ualink_dev *dev;
	struct completion done;
};

static int remover_fn(void *arg)
{
	struct remover *r = arg;

	amdgpu_ualink_export_revoke_nonmembers(r->dev);
	complete(&r->done);
	return 0;
}

/*
 * Two importers of one range leave at once: B's removal (B left the pod)
 * is stopped before the fabric denies it, while C, the last importer,
 * lets go and is undone in full. The range must outlive B's removal: were
 * it freed with C's, the next export mapped would land in it, and B, not
 * yet denied there, would reach memory it was never granted. Once B's
 * deny ran, the range goes.
 */
static void export_range_outlives_removals(struct kunit *test)
{
	struct tpod *pod = pod_create(test);
	struct tobj *o = tpod_obj(pod, SZ_1G, SZ_2M);
	struct tobj *o2 = tpod_obj(pod, 2ULL * SZ_1G, SZ_2M);
	struct tpod_node *a = tpod_node(pod, A);
	struct amdgpu_ualink_import *ib, *ic, *ic2;
	struct remover r = { .dev = a->dev };
	struct task_struct *task;
	u64 h[2], h2[2], addr, npa, size, allocated;
	unsigned int ranges;

	tpod_export(pod, A, o, h);
	tpod_export(pod, A, o2, h2);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &ib), 0);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, C), h, &ic), 0);
	npa = ib->npa;
	size = ib->size;

	/* B leaves A's pod: its removal stops before the fabric denies it */
	tpod_hold_arm(&a->deny_hold);
	tpod_node(pod, B)->vpod = 1;
	init_completion(&r.done);
	task = kthread_run(remover_fn, &r, "ualink-remover");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	get_task_struct(task);
	KUNIT_ASSERT_TRUE(test, tpod_hold_reached(&a->deny_hold));
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, B, npa, &addr), 0);

	/* C, the last importer in the set, lets go: undone in full */
	amdgpu_ualink_import_put(ic);
	amdgpu_ualink_dev_flush(tpod_dev(pod, C));
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, C, npa, &addr), -EACCES);

	/* the next range mapped is another: B can reach only its own */
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, C), h2, &ic2), 0);
	KUNIT_EXPECT_FALSE(test, overlap(npa, size, ic2->npa, ic2->size));
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, C, ic2->npa, &addr), 0);
	KUNIT_EXPECT_EQ(test, addr, o2->addr);
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, B, ic2->npa, &addr), -EACCES);
	amdgpu_ualink_window_usage(&a->dev->window, &allocated, &ranges);
	KUNIT_EXPECT_EQ(test, ranges, 2);

	/* B's removal finishes: denied, and the range goes with it */
	tpod_hold_release(&a->deny_hold);
	KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&r.done, 10 * HZ));
	kthread_stop(task);
	put_task_struct(task);
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, B, npa, &addr), -EACCES);
	amdgpu_ualink_window_usage(&a->dev->window, &allocated, &ranges);
	KUNIT_EXPECT_EQ(test, ranges, 1);
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 1);

	tpod_node(pod, B)->vpod = 0;
	amdgpu_ualink_import_put(ib);
	amdgpu_ualink_import_put(ic2);
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));
	amdgpu_ualink_dev_flush(tpod_dev(pod, C));
	amdgpu_ualink_export_destroy(a->dev, &o->slot);
	amdgpu_ualink_export_destroy(a->dev, &o2->slot);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->bad_unpins), 0);
}

/*
 * An importer that did not acknowledge its shootdown may still cache
 * translations of the range: nobody is given the range again until that
 * importer's connection ended (its next HELLO makes it drop everything of
 * ours). R, played by the test, has no connection, so the range waits for
 * amdgpu_ualink_export_peer_gone(); B's, through the mailbox, is ended by
 * the exporter at once. The same when the shootdown that fails is the one
 * for the whole window, after R left the pod.
 */
static void export_unacknowledged_range_kept(struct kunit *test)
{
	struct tpod *pod = pod_create(test);
	struct tobj *o = tpod_obj(pod, SZ_1G, SZ_2M);
	struct tobj *o2 = tpod_obj(pod, 2ULL * SZ_1G, SZ_2M);
	struct tobj *o3 = tpod_obj(pod, 3ULL * SZ_1G, SZ_2M);
	struct tpod_node *a = tpod_node(pod, A);
	struct amdgpu_ualink_mbox_stats *s;
	struct amdgpu_ualink_import *ib;
	struct amdgpu_ualink_msg rsp;
	u64 h[2], h2[2], h3[2], npa, size, addr, allocated;
	unsigned int ranges;

	tpod_node(pod, R)->vpod = 0;
	tpod_export(pod, A, o, h);
	tpod_export(pod, A, o2, h2);
	tpod_export(pod, A, o3, h3);
	heap_request(a->dev, R, AMDGPU_UALINK_MSG_NPA_REQ, h, 0, 0, &rsp);
	KUNIT_ASSERT_EQ(test, rsp.type, AMDGPU_UALINK_MSG_NPA_RSP);
	npa = rsp.npa;
	size = rsp.size;

	WRITE_ONCE(a->shootdown_fails, true);
	heap_request(a->dev, R, AMDGPU_UALINK_MSG_NPA_RELEASE, h, npa, size, &rsp);
	WRITE_ONCE(a->shootdown_fails, false);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->dev->shootdown_errors), 1);
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, R, npa, &addr), -EACCES);
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 0);

	/* neither R nor anyone else gets the range meanwhile */
	heap_request(a->dev, R, AMDGPU_UALINK_MSG_NPA_REQ, h2, 0, 0, &rsp);
	KUNIT_ASSERT_EQ(test, rsp.type, AMDGPU_UALINK_MSG_NPA_RSP);
	KUNIT_EXPECT_FALSE(test, overlap(npa, size, rsp.npa, rsp.size));
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h3, &ib), 0);
	KUNIT_EXPECT_FALSE(test, overlap(npa, size, ib->npa, ib->size));
	amdgpu_ualink_window_usage(&a->dev->window, &allocated, &ranges);
	KUNIT_EXPECT_EQ(test, ranges, 3);

	/* R's connection ends: its grant goes, and the range is free again */
	amdgpu_ualink_export_peer_gone(a->dev, R);
	amdgpu_ualink_window_usage(&a->dev->window, &allocated, &ranges);
	KUNIT_EXPECT_EQ(test, ranges, 1);
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 1);

	/* B, through the mailbox: the exporter ends B's connection itself */
	npa = ib->npa;
	WRITE_ONCE(a->shootdown_fails, true);
	amdgpu_ualink_import_put(ib);
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));
	amdgpu_ualink_dev_flush(a->dev);
	WRITE_ONCE(a->shootdown_fails, false);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->dev->shootdown_errors), 2);
	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	amdgpu_ualink_mbox_get_stats(a->mbox, B, s);
	KUNIT_EXPECT_EQ(test, s->resets, 1);
	amdgpu_ualink_window_usage(&a->dev->window, &allocated, &ranges);
	KUNIT_EXPECT_EQ(test, ranges, 0);
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, B, npa, &addr), -EACCES);

	/*
	 * R leaves the pod and does not acknowledge the shootdown of the
	 * whole window that takes it out of everything: its range is kept
	 * too, until its connection ends.
	 */
	heap_request(a->dev, R, AMDGPU_UALINK_MSG_NPA_REQ, h, 0, 0, &rsp);
	KUNIT_ASSERT_EQ(test, rsp.type, AMDGPU_UALINK_MSG_NPA_RSP);
	npa = rsp.npa;
	size = rsp.size;
	tpod_node(pod, R)->vpod = 5;
	WRITE_ONCE(a->shootdown_fails, true);
	amdgpu_ualink_export_revoke_nonmembers(a->dev);
	WRITE_ONCE(a->shootdown_fails, false);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->dev->shootdown_errors), 3);
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, R, npa, &addr), -EACCES);
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 0);
	amdgpu_ualink_window_usage(&a->dev->window, &allocated, &ranges);
	KUNIT_EXPECT_EQ(test, ranges, 1);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h2, &ib), 0);
	KUNIT_EXPECT_FALSE(test, overlap(npa, size, ib->npa, ib->size));
	amdgpu_ualink_export_peer_gone(a->dev, R);
	amdgpu_ualink_window_usage(&a->dev->window, &allocated, &ranges);
	KUNIT_EXPECT_EQ(test, ranges, 1);	/* B's */
	amdgpu_ualink_import_put(ib);
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));

	amdgpu_ualink_export_destroy(a->dev, &o->slot);
	amdgpu_ualink_export_destroy(a->dev, &o2->slot);
	amdgpu_ualink_export_destroy(a->dev, &o3->slot);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->bad_unpins), 0);
}

/*
 * An ended export whose second half waits on the device's workqueue (behind
 * another one's) is revoked like a live one: an importer that leaves the
 * pod is shut out at the fabric when amdgpu_ualink_export_revoke_nonmembers()
 * returns, not once the end work reaches the export.
 */
static void export_ended_revoked_at_once(struct kunit *test)
{
	struct tpod *pod = pod_create(test);
	struct tobj *o = tpod_obj(pod, SZ_1G, SZ_2M);
	struct tobj *o2 = tpod_obj(pod, 2ULL * SZ_1G, SZ_2M);
	struct tpod_node *a = tpod_node(pod, A);
	struct amdgpu_ualink_import *ic;
	u64 h[2], h2[2], addr;

	tpod_export(pod, A, o, h);
	tpod_export(pod, A, o2, h2);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, C), h2, &ic), 0);

	/* the end work stops in the first export's unpin; the second waits */
	tpod_hold_arm(&a->unpin_hold);
	amdgpu_ualink_export_end(a->dev, &o->slot);
	KUNIT_ASSERT_TRUE(test, tpod_hold_reached(&a->unpin_hold));
	amdgpu_ualink_export_end(a->dev, &o2->slot);
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, C, ic->npa, &addr), 0);

	/* C leaves the pod: shut out now */
	tpod_node(pod, C)->vpod = 1;
	amdgpu_ualink_export_revoke_nonmembers(a->dev);
	KUNIT_EXPECT_EQ(test, tpod_fabric(pod, C, ic->npa, &addr), -EACCES);
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 0);
	tpod_node(pod, C)->vpod = 0;

	tpod_hold_release(&a->unpin_hold);
	amdgpu_ualink_dev_flush(a->dev);
	KUNIT_EXPECT_EQ(test, o->pins, 0);
	KUNIT_EXPECT_EQ(test, o2->pins, 0);
	amdgpu_ualink_import_put(ic);
	amdgpu_ualink_dev_flush(tpod_dev(pod, C));
}

#define LOSS_EXPORTS	100000
#define LOSS_SHARE	1000	/* at full_scale=0: the debug guest */

/* Requests to A from B's mailbox, timed, until told to stop. */
struct prober {
	struct amdgpu_ualink_mbox *mbox;
	bool stop;
	unsigned int probes;
	unsigned int failures;
	u64 max_ns;
	struct completion done;
};

static int prober_fn(void *arg)
{
	struct prober *p = arg;
	struct amdgpu_ualink_req req;
	u64 tag = 1;

	while (!READ_ONCE(p->stop)) {
		u64 start = ktime_get_ns();

		/* a handle A never made: answered NPA_FAIL by A's worker */
		tpod_req_init(&req, B, A, tag++);
		if (amdgpu_ualink_mbox_call(p->mbox, A, &req) ||
		    req.rsp.type != AMDGPU_UALINK_MSG_NPA_FAIL)
			p->failures++;
		p->max_ns = max(p->max_ns, ktime_get_ns() - start);
		WRITE_ONCE(p->probes, p->probes + 1);
		usleep_range(1000, 2000);
	}
	complete(&p->done);
	return 0;
}

static void kvfree_action(void *ptr)
{
	kvfree(ptr);
}

/*
 * As R: greet A with @gen and, when that ends a connection (@restart),
 * answer A's greeting back.
 */
static void greet(struct kunit *test, struct tpod *pod, u32 *next, u32 txn,
		  u64 gen, bool restart)
{
	struct amdgpu_ualink_msg hello = {
		.type = AMDGPU_UALINK_MSG_HELLO, .version = AMDGPU_UALINK_PROTO_VERSION,
		.sender = R, .receiver = A, .txn = txn, .generation = gen,
	}, m;
	bool acked = false, greeted = !restart;

	tpod_send(pod, R, A, &hello);
	while (!acked || !greeted) {
		KUNIT_ASSERT_EQ(test, tpod_read(pod, A, R, next, &m), 0);
		if (m.type == AMDGPU_UALINK_MSG_HELLO_ACK && m.txn == txn) {
			acked = true;
		} else if (m.type == AMDGPU_UALINK_MSG_HELLO) {
			tpod_hello_ack(pod, R, A, m.txn, gen);
			greeted = true;
		}
	}
}

/* As R: a request A answers at once; every entry before it is handled. */
static void sync_with(struct kunit *test, struct tpod *pod, u32 *next, u32 txn)
{
	struct amdgpu_ualink_msg m = tpod_npa_req(R, A, 1);

	m.txn = txn;
	tpod_send(pod, R, A, &m);
	do {
		KUNIT_ASSERT_EQ(test, tpod_read(pod, A, R, next, &m), 0);
	} while (m.type != AMDGPU_UALINK_MSG_NPA_FAIL || m.txn != txn);
}

#define FLOOD_EXPORTS	512
#define FLOOD_IMPORTS	8
#define FLOOD_HELLOS	64
#define FLOOD_HELD_RESTARTS	16

/*
 * A peer that greets with a new generation again and again (each HELLO
 * ends its connection with A) while A holds nothing of it and it nothing
 * of A's costs A no walk of its exports or imports, however many A has
 * (here 512 exports, all granted to C, and 8 imports from C). While R
 * holds one grant, each such greeting visits that one export and takes R
 * out of it, not the 512.
 */
static void export_hello_flood(struct kunit *test)
{
	struct tpod *pod = pod_create(test);
	struct tpod_node *a = tpod_node(pod, A);
	struct amdgpu_ualink_import *imps[FLOOD_IMPORTS];
	struct tobj *c_objs[FLOOD_IMPORTS];
	unsigned long visits, flood, held;
	struct amdgpu_ualink_msg rsp;
	struct tobj *objs;
	u64 (*h)[2], hc[2];
	u32 next = 0, txn = 100;
	unsigned int i;

	objs = kvcalloc(FLOOD_EXPORTS, sizeof(*objs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, objs);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, kvfree_action, objs), 0);
	h = kvcalloc(FLOOD_EXPORTS, sizeof(*h), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, h);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, kvfree_action, h), 0);
	tpod_node(pod, R)->vpod = 0;
	for (i = 0; i < FLOOD_EXPORTS; i++) {
		objs[i].addr = (u64)i * SZ_4K;
		objs[i].size = SZ_4K;
		tpod_export(pod, A, &objs[i], h[i]);
		heap_request(a->dev, C, AMDGPU_UALINK_MSG_NPA_REQ, h[i], 0, 0, &rsp);
		KUNIT_ASSERT_EQ(test, rsp.type, AMDGPU_UALINK_MSG_NPA_RSP);
	}
	for (i = 0; i < FLOOD_IMPORTS; i++) {
		c_objs[i] = tpod_obj(pod, (u64)i * SZ_4K, SZ_4K);
		tpod_export(pod, C, c_objs[i], hc);
		KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(a->dev, hc, &imps[i]), 0);
	}

	greet(test, pod, &next, txn++, 1, false);
	visits = READ_ONCE(a->dev->walk_visits);
	for (i = 2; i <= FLOOD_HELLOS + 1; i++)
		greet(test, pod, &next, txn++, i, true);
	sync_with(test, pod, &next, txn++);
	KUNIT_EXPECT_EQ(test, tpod_stats(pod, A, R)->generation_changes, FLOOD_HELLOS);
	KUNIT_EXPECT_EQ(test, tpod_stats(pod, A, R)->resets, FLOOD_HELLOS);
	flood = READ_ONCE(a->dev->walk_visits) - visits;
	KUNIT_EXPECT_EQ(test, flood, 0);
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), FLOOD_EXPORTS);
	KUNIT_EXPECT_EQ(test, a->dev->num_imports, FLOOD_IMPORTS);

	/*
	 * R holds a grant: each next restart takes R out, visiting the one
	 * export R is in, not the FLOOD_EXPORTS that C is in
	 */
	for (i = 0; i < FLOOD_HELD_RESTARTS; i++) {
		heap_request(a->dev, R, AMDGPU_UALINK_MSG_NPA_REQ, h[i], 0, 0, &rsp);
		KUNIT_ASSERT_EQ(test, rsp.type, AMDGPU_UALINK_MSG_NPA_RSP);
		KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), FLOOD_EXPORTS + 1);
		greet(test, pod, &next, txn++, FLOOD_HELLOS + 2 + i, true);
		sync_with(test, pod, &next, txn++);
		KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), FLOOD_EXPORTS);
	}
	held = READ_ONCE(a->dev->walk_visits) - visits - flood;
	KUNIT_EXPECT_EQ(test, held, FLOOD_HELD_RESTARTS);
	kunit_info(test, "%u restarts of a peer holding nothing: %lu exports and imports visited; %u restarts holding one grant of %u: %lu\n",
		   FLOOD_HELLOS, flood, FLOOD_HELD_RESTARTS, FLOOD_EXPORTS + 1, held);

	for (i = 0; i < FLOOD_IMPORTS; i++) {
		amdgpu_ualink_import_put(imps[i]);
		amdgpu_ualink_export_destroy(tpod_dev(pod, C), &c_objs[i]->slot);
	}
	for (i = 0; i < FLOOD_EXPORTS; i++)
		amdgpu_ualink_export_destroy(a->dev, &objs[i].slot);
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 0);
}

/*
 * One user's exports must not cost the pod its liveness: 100,000 exports
 * (4 KiB buffers, what any render client can make) are granted to one
 * importer, R, whose connection to their exporter A then ends. Each
 * shootdown takes 1 ms, as an acknowledgment would. A's worker takes R
 * out of every access set while B keeps asking A for imports: R is shot
 * down once, for the whole window, every one of B's requests is answered,
 * none times out and B's connection to A never ends. The time the
 * removals took on A's worker and the longest round trip B saw meanwhile
 * are printed. At full_scale=0 (the debug guest), 1,000 exports.
 */
static void export_peer_loss_at_scale(struct kunit *test)
{
	unsigned int n = tpod_full_scale ? LOSS_EXPORTS : LOSS_SHARE, i, bad = 0;
	unsigned int timeout_ms, retries;
	struct tpod *pod = pod_create(test);
	int shots;
	struct tpod_node *a = tpod_node(pod, A);
	struct prober p = { .mbox = tpod_mbox(pod, B) };
	struct amdgpu_ualink_mbox_stats *s;
	struct amdgpu_ualink_msg rsp;
	struct task_struct *task;
	u64 (*h)[2], start, took;
	struct tobj *objs;

	objs = kvcalloc(n, sizeof(*objs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, objs);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, kvfree_action, objs), 0);
	h = kvcalloc(n, sizeof(*h), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, h);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, kvfree_action, h), 0);
	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);

	tpod_node(pod, R)->vpod = 0;
	for (i = 0; i < n; i++) {
		objs[i].addr = (u64)i * SZ_4K;
		objs[i].size = SZ_4K;
		tpod_export(pod, A, &objs[i], h[i]);
		heap_request(a->dev, R, AMDGPU_UALINK_MSG_NPA_REQ, h[i], 0, 0, &rsp);
		if (rsp.type != AMDGPU_UALINK_MSG_NPA_RSP)
			bad++;
	}
	KUNIT_ASSERT_EQ(test, bad, 0);
	KUNIT_ASSERT_EQ(test, tpod_grants(pod, A), n);

	/* B's requests are answered before the loss */
	init_completion(&p.done);
	task = kthread_run(prober_fn, &p, "ualink-prober");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	get_task_struct(task);
	while (READ_ONCE(p.probes) < 3)
		usleep_range(1000, 2000);

	/* R's connection ends: A's worker hears of it */
	shots = atomic_read(&a->shots);
	WRITE_ONCE(a->shootdown_us, 1000);
	start = ktime_get_ns();
	amdgpu_ualink_mbox_peer_offline(a->mbox, R);
	while (READ_ONCE(a->dev->num_grants) &&
	       ktime_get_ns() - start < 600ULL * NSEC_PER_SEC)
		usleep_range(1000, 2000);
	took = ktime_get_ns() - start;
	/* and after it */
	i = READ_ONCE(p.probes);
	while (READ_ONCE(p.probes) < i + 3)
		usleep_range(1000, 2000);
	WRITE_ONCE(p.stop, true);
	KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&p.done, 60 * HZ));
	kthread_stop(task);
	put_task_struct(task);

	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->shots), shots + 1);
	expect_shot(test, pod, A, shots, R, amdgpu_ualink_npa_build(A, 0),
		    AMDGPU_UALINK_NPA_WINDOW_SIZE);
	KUNIT_EXPECT_EQ(test, p.failures, 0);
	amdgpu_ualink_mbox_get_stats(p.mbox, A, s);
	KUNIT_EXPECT_EQ(test, s->timeouts, 0);
	KUNIT_EXPECT_EQ(test, s->resets, 0);
	amdgpu_ualink_mbox_get_timeout(p.mbox, &timeout_ms, &retries);
	kunit_info(test, "%u exports granted to one lost importer: taken out in %llu ms on the exporter's worker; another peer's requests meanwhile: %u, %u failed, the longest round trip %llu ms (mailbox timeout %u ms)\n",
		   n, took / NSEC_PER_MSEC, p.probes, p.failures,
		   p.max_ns / NSEC_PER_MSEC, timeout_ms);

	for (i = 0; i < n; i++)
		amdgpu_ualink_export_destroy(a->dev, &objs[i].slot);
	KUNIT_EXPECT_EQ(test, a->dev->num_pins, 0);
}

static struct kunit_case amdgpu_ualink_export_cases[] = {
	KUNIT_CASE(export_handles),
	KUNIT_CASE(export_detach),
	KUNIT_CASE(export_concurrent),
	KUNIT_CASE(export_pinned_at_export),
	KUNIT_CASE(export_repin_retried),
	KUNIT_CASE(export_grant_and_release),
	KUNIT_CASE(export_refusals),
	KUNIT_CASE(export_no_space),
	KUNIT_CASE(export_range_aligned_or_refused),
	KUNIT_CASE(export_destroy_revokes),
	KUNIT_CASE(export_revocations_without_memory),
	KUNIT_CASE(export_revocations_without_memory_skip_gone),
	KUNIT_CASE(export_revoke_waits_for_gpu_work),
	KUNIT_CASE_SLOW(export_revoke_bounded),
	KUNIT_CASE(export_destroy_waits_for_undo),
	KUNIT_CASE(export_reset_waits_for_undo),
	KUNIT_CASE(export_range_outlives_removals),
	KUNIT_CASE(export_unacknowledged_range_kept),
	KUNIT_CASE(export_ended_revoked_at_once),
	KUNIT_CASE_SLOW(export_peer_loss_at_scale),
	KUNIT_CASE(export_importer_reset),
	KUNIT_CASE(export_hello_flood),
	KUNIT_CASE(export_print),
	KUNIT_CASE(export_unreachable),
	KUNIT_CASE(export_stale_importer),
	KUNIT_CASE(export_unanswered_revoke),
	KUNIT_CASE(export_shootdown_unacknowledged),
	KUNIT_CASE(export_memory),
	KUNIT_CASE_SLOW(export_symmetric_heap),
	{}
};

static struct kunit_suite amdgpu_ualink_export_suite = {
	.name = "amdgpu_ualink_export",
	.test_cases = amdgpu_ualink_export_cases,
};

kunit_test_suite(amdgpu_ualink_export_suite);
