// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * KUnit tests for the import side (amdgpu_ualink_import.c) on an
 * in-memory pod of whole devices: the weak table, one request for
 * concurrent imports, every errno, batches, release on the last reference
 * and what the end of the exporter's connection does to imports.
 */

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/sched/task.h>

#include "amdgpu_ualink_test_pod.h"
#include "../amdgpu_ualink_npa.h"

#define A	3
#define B	40
#define D	1000	/* another virtual pod */
#define R	77	/* a member that never answers */
#define NX	13	/* exporters of the batch */

static const u16 ids[] = { A, B, D, R, 100, 101, 102, 103, 104, 105, 106, 107,
			   108, 109, 110, 111, 112 };
static const enum tpod_kind kinds[ARRAY_SIZE(ids)] = {
	TPOD_DEV, TPOD_DEV, TPOD_DEV, TPOD_RAW, TPOD_DEV, TPOD_DEV, TPOD_DEV,
	TPOD_DEV, TPOD_DEV, TPOD_DEV, TPOD_DEV, TPOD_DEV, TPOD_DEV, TPOD_DEV,
	TPOD_DEV, TPOD_DEV, TPOD_DEV,
};

static_assert(4 + NX == ARRAY_SIZE(ids));

MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING");

static struct tpod *pod_create(struct kunit *test, unsigned int n)
{
	struct tpod *pod = tpod_create(test, n, ids, kinds);

	tpod_node(pod, D)->vpod = 1;
	return pod;
}

static u64 received(struct tpod *pod, u16 id, u16 type)
{
	struct amdgpu_ualink_mbox_stats s;

	amdgpu_ualink_mbox_get_stats(tpod_node(pod, id)->mbox, -1, &s);
	return s.received[type];
}

static u64 sent(struct tpod *pod, u16 id, u16 type)
{
	struct amdgpu_ualink_mbox_stats s;

	amdgpu_ualink_mbox_get_stats(tpod_node(pod, id)->mbox, -1, &s);
	return s.sent[type];
}

/* A second import of a live handle is the same import; one request. */
static void import_basic_and_twice(struct kunit *test)
{
	struct tpod *pod = pod_create(test, 4);
	struct tobj *o = tpod_obj(pod, 0, SZ_2M);
	struct amdgpu_ualink_import *i1, *i2;
	u16 owner;
	u64 h[2], off;

	tpod_export(pod, A, o, h);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &i1), 0);
	KUNIT_EXPECT_EQ(test, i1->state, AMDGPU_UALINK_IMPORT_READY);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_npa_split(i1->npa, &owner, &off), 0);
	KUNIT_EXPECT_EQ(test, owner, A);
	KUNIT_EXPECT_GE(test, off, AMDGPU_UALINK_NPA_RESERVE);
	KUNIT_EXPECT_EQ(test, i1->size, SZ_2M);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &i2), 0);
	KUNIT_EXPECT_PTR_EQ(test, i1, i2);
	KUNIT_EXPECT_EQ(test, received(pod, A, AMDGPU_UALINK_MSG_NPA_REQ), 1);

	/* the table does not keep it: the last put releases */
	amdgpu_ualink_import_put(i2);
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 1);
	amdgpu_ualink_import_put(i1);
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 0);
	KUNIT_EXPECT_EQ(test, received(pod, A, AMDGPU_UALINK_MSG_NPA_RELEASE), 1);
	KUNIT_EXPECT_EQ(test, tpod_dev(pod, B)->num_imports, 0);
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o->slot);
}

/*
 * The table compares the whole handle: handles that differ from a live
 * one in one word only, the exporter's bits kept, find nothing. 1,024 of
 * each kind: a fresh table has 64 buckets, so about 16 of each share the
 * live one's and are compared with it.
 */
static void import_lookup_whole_handle(struct kunit *test)
{
	struct tpod *pod = pod_create(test, 4);
	struct tobj *o = tpod_obj(pod, 0, SZ_2M);
	struct amdgpu_ualink_dev *dev;
	struct amdgpu_ualink_import *imp, *found;
	unsigned int k, wrong = 0;
	u64 h[2], other[2];

	tpod_export(pod, A, o, h);
	dev = tpod_dev(pod, B);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(dev, h, &imp), 0);
	for (k = 1; k <= 1024; k++) {
		other[0] = h[0] ^ ((u64)k << AMDGPU_UALINK_ACCEL_ID_BITS);
		other[1] = h[1];
		found = amdgpu_ualink_import_live(dev, other);
		wrong += !!found;
		amdgpu_ualink_import_put(found);
		other[0] = h[0];
		other[1] = h[1] ^ k;
		found = amdgpu_ualink_import_live(dev, other);
		wrong += !!found;
		amdgpu_ualink_import_put(found);
	}
	KUNIT_EXPECT_EQ(test, wrong, 0);
	found = amdgpu_ualink_import_live(dev, h);
	KUNIT_EXPECT_PTR_EQ(test, found, imp);
	amdgpu_ualink_import_put(found);
	amdgpu_ualink_import_put(imp);
	amdgpu_ualink_dev_flush(dev);
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 0);
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o->slot);
}

struct racer {
	struct amdgpu_ualink_dev *dev;
	const u64 *handle;
	struct amdgpu_ualink_import *imp;
	struct completion go, done;
	int ret;
};

static int import_racer(void *data)
{
	struct racer *r = data;

	wait_for_completion(&r->go);
	r->ret = amdgpu_ualink_import_get(r->dev, r->handle, &r->imp);
	complete(&r->done);
	return 0;
}

/* requests of @type sent by @id, each counted once (no retransmissions) */
static u64 requests_sent(struct tpod *pod, u16 id, u16 type)
{
	struct amdgpu_ualink_mbox_stats s;

	amdgpu_ualink_mbox_get_stats(tpod_node(pod, id)->mbox, -1, &s);
	return s.sent[type] - s.retransmitted[type];
}

/*
 * Concurrent imports of one handle: one NPA_REQ, all get its result. The
 * exporter is paused until every racer waits for the answer, so they are
 * all in flight together: one request on the wire for the eight of them.
 */
static void import_concurrent(struct kunit *test)
{
	struct tpod *pod = pod_create(test, 4);
	struct tobj *o = tpod_obj(pod, 0, SZ_4K), *warm = tpod_obj(pod, SZ_4K, SZ_4K);
	struct racer *r = kunit_kcalloc(test, 8, sizeof(*r), GFP_KERNEL);
	struct task_struct *task[8];
	struct amdgpu_ualink_import *imp;
	unsigned int i;
	u64 h[2], hw[2];

	KUNIT_ASSERT_NOT_NULL(test, r);
	tpod_export(pod, A, o, h);
	/* the connection first, so that the racers' request goes out at once */
	tpod_export(pod, A, warm, hw);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), hw, &imp), 0);
	KUNIT_ASSERT_EQ(test, requests_sent(pod, B, AMDGPU_UALINK_MSG_NPA_REQ), 1);

	tpod_pause(pod, A, true);
	for (i = 0; i < 8; i++) {
		r[i].dev = tpod_dev(pod, B);
		r[i].handle = h;
		init_completion(&r[i].go);
		init_completion(&r[i].done);
		task[i] = kthread_run(import_racer, &r[i], "ualink_import%u", i);
		KUNIT_ASSERT_FALSE(test, IS_ERR(task[i]));
		get_task_struct(task[i]);
	}
	for (i = 0; i < 8; i++)
		complete(&r[i].go);
	for (i = 0; i < 8; i++)
		KUNIT_EXPECT_TRUE(test, tpod_wait_waiting(task[i], &r[i].done));
	/* all eight wait, and one request is on the wire */
	KUNIT_EXPECT_EQ(test, requests_sent(pod, B, AMDGPU_UALINK_MSG_NPA_REQ), 2);
	KUNIT_EXPECT_EQ(test, tpod_dev(pod, B)->num_imports, 2);
	tpod_pause(pod, A, false);

	for (i = 0; i < 8; i++) {
		wait_for_completion(&r[i].done);
		kthread_stop(task[i]);
		put_task_struct(task[i]);
		KUNIT_EXPECT_EQ(test, r[i].ret, 0);
		KUNIT_EXPECT_PTR_EQ(test, r[i].imp, r[0].imp);
	}
	/* handled once each (a retransmission is answered from the cache) */
	KUNIT_EXPECT_EQ(test, received(pod, A, AMDGPU_UALINK_MSG_NPA_REQ) -
			      tpod_stats(pod, A, B)->duplicate_requests, 2);
	for (i = 0; i < 8; i++)
		if (!r[i].ret)
			amdgpu_ualink_import_put(r[i].imp);
	amdgpu_ualink_import_put(imp);
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 0);
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o->slot);
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &warm->slot);
}

/* Every errno of an import, one case each. */
static void import_errors(struct kunit *test)
{
	struct tpod *pod = pod_create(test, 4);
	struct tobj *o = tpod_obj(pod, 0, SZ_4K), *mine = tpod_obj(pod, 0, SZ_4K);
	struct amdgpu_ualink_import *imp;
	u64 h[2], hb[2], bad[2], zero[2] = {};

	tpod_export(pod, A, o, h);
	tpod_export(pod, B, mine, hb);
	/* R never answers: 2 s, not 5 */
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_set_timeout(tpod_dev(pod, B)->mbox, 2000, 3), 0);

	KUNIT_EXPECT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), zero, &imp), -EINVAL);
	/* our own handle: our own buffer */
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), hb, &imp),
			AMDGPU_UALINK_IMPORT_LOCAL);
	KUNIT_EXPECT_PTR_EQ(test, amdgpu_ualink_export_lookup(tpod_dev(pod, B), hb), mine);
	/* another virtual pod: refused before anything is sent */
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, D), h, &imp), -EACCES);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_peers(tpod_node(pod, D)->mbox), 0);
	/* unknown handle */
	bad[0] = h[0];
	bad[1] = ~h[1];
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), bad, &imp), -ENOENT);
	/* an exporter that never answers */
	bad[0] = (h[0] & ~0x3ffULL) | R;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), bad, &imp), -ETIMEDOUT);
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));
	KUNIT_EXPECT_EQ(test, tpod_dev(pod, B)->num_imports, 0);
	/* none of it left anything behind at A but the export's own pin */
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 0);
	KUNIT_EXPECT_EQ(test, o->pins, 1);
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o->slot);
	amdgpu_ualink_export_destroy(tpod_dev(pod, B), &mine->slot);
}

/*
 * A batch: every request is on the wire before the first wait, and one
 * import per exporter results.
 */
static void import_batch(struct kunit *test)
{
	struct tpod *pod = pod_create(test, ARRAY_SIZE(ids));
	struct amdgpu_ualink_import *imps[NX];
	struct amdgpu_ualink_mbox_stats s;
	struct tobj *objs[NX];
	u64 h[NX][2];
	unsigned int i;

	for (i = 0; i < NX; i++) {
		objs[i] = tpod_obj(pod, 0, SZ_4K);
		tpod_export(pod, ids[4 + i], objs[i], h[i]);
	}
	tpod_pause(pod, B, true);	/* no answer gets in before all left */
	for (i = 0; i < NX; i++)
		KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_start(tpod_dev(pod, B),
								 h[i], 0, &imps[i]), 0);
	/* every exporter has been written to before the first wait */
	for (i = 0; i < NX; i++) {
		amdgpu_ualink_mbox_get_stats(tpod_dev(pod, B)->mbox, ids[4 + i], &s);
		KUNIT_EXPECT_GE(test, s.sent[AMDGPU_UALINK_MSG_HELLO], 1);
	}
	tpod_pause(pod, B, false);
	for (i = 0; i < NX; i++) {
		KUNIT_EXPECT_EQ(test, amdgpu_ualink_import_finish(imps[i]), 0);
		KUNIT_EXPECT_EQ(test, tpod_grants(pod, ids[4 + i]), 1);
	}
	for (i = 0; i < NX; i++)
		amdgpu_ualink_import_put(imps[i]);
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));
	for (i = 0; i < NX; i++) {
		KUNIT_EXPECT_EQ(test, tpod_grants(pod, ids[4 + i]), 0);
		amdgpu_ualink_export_destroy(tpod_dev(pod, ids[4 + i]), &objs[i]->slot);
	}
}

static bool b_revoked(void *arg)
{
	return atomic_read(&tpod_node(arg, B)->revokes) > 0;
}

/* The exporter resets: imports from it die and leave the table. */
static void import_exporter_reset(struct kunit *test)
{
	struct tpod *pod = pod_create(test, 4);
	struct tobj *o = tpod_obj(pod, 0, SZ_4K), *buf = tpod_obj(pod, 0, 0);
	struct amdgpu_ualink_import *imp, *again;
	u64 h[2];

	tpod_export(pod, A, o, h);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &imp), 0);
	amdgpu_ualink_import_set_obj(imp, buf);
	amdgpu_ualink_mbox_reset(tpod_dev(pod, A)->mbox);
	KUNIT_EXPECT_TRUE(test, tpod_wait_for(b_revoked, pod, 10000));
	KUNIT_EXPECT_TRUE(test, buf->dead);
	KUNIT_EXPECT_EQ(test, imp->state, AMDGPU_UALINK_IMPORT_DEAD);
	/* a new import asks anew, and A (its export alive) grants again */
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &again), 0);
	KUNIT_EXPECT_PTR_NE(test, again, imp);
	amdgpu_ualink_import_put(imp);
	amdgpu_ualink_import_put(again);
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o->slot);
	KUNIT_EXPECT_EQ(test, o->pins, 0);
}

static bool no_grants_at_100(void *arg)
{
	return !tpod_grants(arg, 100);
}

/*
 * A GPU reset of A (amdgpu_ualink_dev_reset()): A drops the grant it gave
 * B at once (the export stays pinned), its own import from 100 dies at
 * once, B's import of A dies and 100 drops its grant to A when they hear
 * A's new generation; A's export stays and B imports it again.
 */
static void import_dev_reset(struct kunit *test)
{
	struct tpod *pod = pod_create(test, 5);
	struct tobj *o = tpod_obj(pod, 0, SZ_4K), *oc = tpod_obj(pod, 0, SZ_4K);
	struct tobj *buf = tpod_obj(pod, 0, 0), *abuf = tpod_obj(pod, 0, 0);
	struct amdgpu_ualink_import *imp, *aimp, *again;
	u64 h[2], hc[2];

	tpod_export(pod, A, o, h);
	tpod_export(pod, 100, oc, hc);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &imp), 0);
	amdgpu_ualink_import_set_obj(imp, buf);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, A), hc, &aimp), 0);
	amdgpu_ualink_import_set_obj(aimp, abuf);
	KUNIT_EXPECT_EQ(test, o->pins, 1);
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, 100), 1);

	amdgpu_ualink_dev_reset(tpod_dev(pod, A));
	/* A's own side, before the call returns */
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 0);
	KUNIT_EXPECT_EQ(test, o->pins, 1);
	KUNIT_EXPECT_TRUE(test, abuf->dead);
	KUNIT_EXPECT_EQ(test, aimp->state, AMDGPU_UALINK_IMPORT_DEAD);
	/* the peers', once they hear of it */
	KUNIT_EXPECT_TRUE(test, tpod_wait_for(b_revoked, pod, 10000));
	KUNIT_EXPECT_TRUE(test, buf->dead);
	KUNIT_EXPECT_TRUE(test, tpod_wait_for(no_grants_at_100, pod, 10000));
	KUNIT_EXPECT_EQ(test, oc->pins, 1);
	/* the export survived */
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &again), 0);
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 1);
	KUNIT_EXPECT_EQ(test, o->pins, 1);

	amdgpu_ualink_import_set_obj(imp, NULL);
	amdgpu_ualink_import_set_obj(aimp, NULL);
	amdgpu_ualink_import_put(imp);
	amdgpu_ualink_import_put(aimp);
	amdgpu_ualink_import_put(again);
	amdgpu_ualink_dev_flush(tpod_dev(pod, A));
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o->slot);
	amdgpu_ualink_export_destroy(tpod_dev(pod, 100), &oc->slot);
	KUNIT_EXPECT_EQ(test, o->pins, 0);
}

/*
 * Import, put, import at once: the new import waits for the release of the
 * old one, so the release cannot take the new grant away.
 */
static void import_release_then_again(struct kunit *test)
{
	struct tpod *pod = pod_create(test, 4);
	struct tobj *o = tpod_obj(pod, 0, SZ_4K);
	struct amdgpu_ualink_import *imp;
	unsigned int i;
	u64 h[2];

	tpod_export(pod, A, o, h);
	for (i = 0; i < 50; i++) {
		KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &imp), 0);
		amdgpu_ualink_import_put(imp);
	}
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &imp), 0);
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 1);
	KUNIT_EXPECT_EQ(test, o->pins, 1);
	KUNIT_EXPECT_EQ(test, received(pod, A, AMDGPU_UALINK_MSG_NPA_REQ), 51);
	KUNIT_EXPECT_EQ(test, received(pod, A, AMDGPU_UALINK_MSG_NPA_RELEASE), 50);
	amdgpu_ualink_import_put(imp);
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 0);
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o->slot);
}

/* B starts importing @h of R; R greets back and reads the NPA_REQ */
static void import_from_r(struct kunit *test, struct tpod *pod, const u64 h[2],
			  struct amdgpu_ualink_import **imp, u32 *next,
			  struct amdgpu_ualink_msg *req)
{
	struct amdgpu_ualink_msg m;

	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_start(tpod_dev(pod, B), h, 0, imp), 0);
	KUNIT_ASSERT_EQ(test, tpod_read(pod, B, R, next, &m), 0);
	KUNIT_ASSERT_EQ(test, m.type, AMDGPU_UALINK_MSG_HELLO);
	tpod_hello_ack(pod, R, B, m.txn, 5);
	KUNIT_ASSERT_EQ(test, tpod_read(pod, B, R, next, req), 0);
	KUNIT_ASSERT_EQ(test, req->type, AMDGPU_UALINK_MSG_NPA_REQ);
}

/*
 * A revocation that overtakes the grant it revokes: the import fails with
 * -ENOENT and never uses the range, and gives nothing back but the answer
 * to the revocation.
 */
static void import_revoke_overtakes_grant(struct kunit *test)
{
	struct tpod *pod = pod_create(test, 4);
	struct amdgpu_ualink_import *imp;
	struct amdgpu_ualink_msg m, req;
	u64 h[2] = { (0xabcULL << 10) | R, 7 };
	u32 next = 0;

	import_from_r(test, pod, h, &imp, &next, &req);

	m = (struct amdgpu_ualink_msg) {
		.type = AMDGPU_UALINK_MSG_NPA_REVOKE, .version = AMDGPU_UALINK_PROTO_VERSION,
		.sender = R, .receiver = B, .txn = 900,
		.handle = { h[0], h[1] },
		.npa = amdgpu_ualink_npa_build(R, AMDGPU_UALINK_NPA_RESERVE), .size = SZ_4K,
	};
	tpod_send(pod, R, B, &m);
	KUNIT_ASSERT_EQ(test, tpod_read(pod, B, R, &next, &req), 0);
	KUNIT_EXPECT_EQ(test, req.type, AMDGPU_UALINK_MSG_NPA_RELEASE);
	KUNIT_EXPECT_TRUE(test, amdgpu_ualink_msg_is_response(&req));

	/* the grant, late */
	m.type = AMDGPU_UALINK_MSG_NPA_RSP;
	m.flags = AMDGPU_UALINK_MSG_F_RESPONSE;
	m.txn = imp->req.msg.txn;
	tpod_send(pod, R, B, &m);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_import_finish(imp), -ENOENT);
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));
	KUNIT_EXPECT_EQ(test, tpod_dev(pod, B)->num_imports, 0);
	/* one NPA_RELEASE: the answer to the revocation, no release of its own */
	KUNIT_EXPECT_EQ(test, sent(pod, B, AMDGPU_UALINK_MSG_NPA_RELEASE), 1);
}

/*
 * A request that timed out alone (R showed it is alive meanwhile) may have
 * been granted, its answer lost: the import fails with -ETIMEDOUT, the
 * connection stays, and the import's last put asks R again and gives back
 * the range R's answer names.
 */
static void import_timeout_gives_back(struct kunit *test)
{
	struct tpod *pod = pod_create(test, 4);
	u64 h[2] = { (0xabdULL << 10) | R, 9 };
	u64 npa = amdgpu_ualink_npa_build(R, AMDGPU_UALINK_NPA_RESERVE);
	enum amdgpu_ualink_conn_state st = -1;
	struct amdgpu_ualink_import *imp;
	struct amdgpu_ualink_msg m, req;
	u32 next = 0;
	u64 gen;

	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_set_timeout(tpod_mbox(pod, B), 300, 0), 0);
	import_from_r(test, pod, h, &imp, &next, &req);

	/* R never answers, but shows it is alive: a request B answers */
	m = tpod_npa_req(R, B, 5);
	m.txn = 901;
	tpod_send(pod, R, B, &m);
	KUNIT_ASSERT_EQ(test, tpod_read(pod, B, R, &next, &m), 0);
	KUNIT_EXPECT_EQ(test, m.type, AMDGPU_UALINK_MSG_NPA_FAIL);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_import_finish(imp), -ETIMEDOUT);
	amdgpu_ualink_mbox_peer_state(tpod_mbox(pod, B), R, &st, &gen);
	KUNIT_EXPECT_EQ(test, st, AMDGPU_UALINK_CONN_ESTABLISHED);

	/* the last put asks again... */
	KUNIT_ASSERT_EQ(test, tpod_read(pod, B, R, &next, &req), 0);
	KUNIT_ASSERT_EQ(test, req.type, AMDGPU_UALINK_MSG_NPA_REQ);
	KUNIT_EXPECT_EQ(test, req.handle[0], h[0]);
	KUNIT_EXPECT_EQ(test, req.handle[1], h[1]);
	m = req;
	m.type = AMDGPU_UALINK_MSG_NPA_RSP;
	m.flags = AMDGPU_UALINK_MSG_F_RESPONSE;
	swap(m.sender, m.receiver);
	m.npa = npa;
	m.size = SZ_4K;
	tpod_send(pod, R, B, &m);
	/* ...and gives back what the answer names */
	KUNIT_ASSERT_EQ(test, tpod_read(pod, B, R, &next, &req), 0);
	KUNIT_EXPECT_EQ(test, req.type, AMDGPU_UALINK_MSG_NPA_RELEASE);
	KUNIT_EXPECT_FALSE(test, amdgpu_ualink_msg_is_response(&req));
	KUNIT_EXPECT_EQ(test, req.npa, npa);
	KUNIT_EXPECT_EQ(test, req.size, SZ_4K);
	m = req;
	m.type = AMDGPU_UALINK_MSG_NPA_REVOKE;
	m.flags = AMDGPU_UALINK_MSG_F_RESPONSE;
	swap(m.sender, m.receiver);
	tpod_send(pod, R, B, &m);
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));
	KUNIT_EXPECT_EQ(test, tpod_dev(pod, B)->num_imports, 0);
}

/* As R: answer @req (read from B) with @type, a response. */
static void r_answer(struct tpod *pod, struct amdgpu_ualink_msg req, u8 type)
{
	req.type = type;
	req.flags = AMDGPU_UALINK_MSG_F_RESPONSE;
	swap(req.sender, req.receiver);
	tpod_send(pod, R, B, &req);
}

/*
 * The kill of a revoked import holds no worker while the exporter has not
 * answered its NPA_RELEASE: with it outstanding, the device's workqueue is
 * idle (a flush returns) and the release is still counted under way,
 * which amdgpu_ualink_dev_flush() waits for; once R answers, the import
 * goes.
 */
static void import_kill_waits_for_no_one(struct kunit *test)
{
	struct tpod *pod = pod_create(test, 4);
	struct amdgpu_ualink_dev *b = tpod_dev(pod, B);
	u64 h[2] = { (0xabeULL << 10) | R, 11 };
	u64 npa = amdgpu_ualink_npa_build(R, AMDGPU_UALINK_NPA_RESERVE);
	struct amdgpu_ualink_msg m, req, rel = {};
	struct amdgpu_ualink_import *imp;
	unsigned int i;
	u32 next = 0;

	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_set_timeout(b->mbox, 20000, 0), 0);
	import_from_r(test, pod, h, &imp, &next, &req);
	req.npa = npa;
	req.size = SZ_4K;
	r_answer(pod, req, AMDGPU_UALINK_MSG_NPA_RSP);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_finish(imp), 0);

	/* R revokes: B answers "later", and its kill sends NPA_RELEASE */
	m = (struct amdgpu_ualink_msg) {
		.type = AMDGPU_UALINK_MSG_NPA_REVOKE, .version = AMDGPU_UALINK_PROTO_VERSION,
		.sender = R, .receiver = B, .txn = 902,
		.handle = { h[0], h[1] }, .npa = npa, .size = SZ_4K,
	};
	tpod_send(pod, R, B, &m);
	for (i = 0; i < 2; i++) {	/* the answer and the kill's request race */
		KUNIT_ASSERT_EQ(test, tpod_read(pod, B, R, &next, &req), 0);
		KUNIT_EXPECT_EQ(test, req.type, AMDGPU_UALINK_MSG_NPA_RELEASE);
		if (!amdgpu_ualink_msg_is_response(&req))
			rel = req;
	}
	KUNIT_ASSERT_EQ(test, rel.type, AMDGPU_UALINK_MSG_NPA_RELEASE);
	KUNIT_EXPECT_EQ(test, rel.npa, npa);

	/* unanswered, and no work item waits for it */
	flush_workqueue(b->wq);
	KUNIT_EXPECT_EQ(test, atomic_read(&b->releasing), 1);
	KUNIT_EXPECT_EQ(test, b->num_imports, 1);
	KUNIT_EXPECT_EQ(test, imp->state, AMDGPU_UALINK_IMPORT_DEAD);

	r_answer(pod, rel, AMDGPU_UALINK_MSG_NPA_REVOKE);
	amdgpu_ualink_import_put(imp);
	amdgpu_ualink_dev_flush(b);
	KUNIT_EXPECT_EQ(test, atomic_read(&b->releasing), 0);
	KUNIT_EXPECT_EQ(test, b->num_imports, 0);
	KUNIT_EXPECT_EQ(test, sent(pod, B, AMDGPU_UALINK_MSG_NPA_RELEASE), 2);
}

/*
 * The end of the exporter's connection is reported a moment after it
 * failed the requests it carried; an import started in that moment asked
 * on the next connection and must complete, not die from the late report
 * (IGT fault-drop-all-timeout: a batch after a timed-out import got
 * -ENOENT on a slow machine).
 */
static void import_peer_gone_spares_newer(struct kunit *test)
{
	struct tpod *pod = pod_create(test, 4);
	struct tobj *o = tpod_obj(pod, 0, SZ_4K);
	struct amdgpu_ualink_import *imp;
	u64 h[2];

	tpod_export(pod, A, o, h);
	tpod_pause(pod, A, true);	/* the request waits for its answer */
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_start(tpod_dev(pod, B), h, 0, &imp), 0);
	/* the report of an end that came before this request */
	amdgpu_ualink_import_peer_gone(tpod_dev(pod, B), A);
	tpod_pause(pod, A, false);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_import_finish(imp), 0);
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, A), 1);

	/* a real end, reported after it: the ready import dies */
	amdgpu_ualink_import_peer_gone(tpod_dev(pod, B), A);
	KUNIT_EXPECT_EQ(test, imp->state, AMDGPU_UALINK_IMPORT_DEAD);
	amdgpu_ualink_import_put(imp);
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));
	KUNIT_EXPECT_EQ(test, tpod_dev(pod, B)->num_imports, 0);
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o->slot);
}

/*
 * A whole pod, the way symmetric-heap libraries start: the last node
 * imports the heaps of the 1,023 others in one batch, every request on the
 * wire before the first wait; then all 1,023 import node 0's heap, whose
 * export then has 1,023 importers. Under lockdep (the debug guest) the pod
 * has 128 nodes: lockdep gives each workqueue a lock class of its own, and
 * the 2,048 of a whole pod exhaust MAX_LOCKDEP_CHAINS.
 */
static void import_batch_whole_pod(struct kunit *test)
{
	const unsigned int n = IS_ENABLED(CONFIG_LOCKDEP) ? 128 : AMDGPU_UALINK_MAX_ACCELS;
	const unsigned int me = n - 1;
	struct amdgpu_ualink_import **imps;
	struct amdgpu_ualink_mbox_stats s;
	enum tpod_kind *all;
	unsigned int i, hello = 0;
	struct tobj **objs;
	struct tpod *pod;
	u16 *everyone;
	u64 (*h)[2];
	ktime_t t0;

	everyone = kunit_kcalloc(test, n, sizeof(*everyone), GFP_KERNEL);
	all = kunit_kcalloc(test, n, sizeof(*all), GFP_KERNEL);
	imps = kunit_kcalloc(test, n, sizeof(*imps), GFP_KERNEL);
	objs = kunit_kcalloc(test, n, sizeof(*objs), GFP_KERNEL);
	h = kunit_kcalloc(test, n, sizeof(*h), GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, everyone && all && imps && objs && h);
	for (i = 0; i < n; i++) {
		everyone[i] = i;
		all[i] = TPOD_DEV;
	}
	pod = tpod_create(test, n, everyone, all);
	for (i = 0; i < n; i++) {
		/* a KASAN guest on 2 emulated CPUs is slow: figures, not timeouts */
		KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_set_timeout(tpod_mbox(pod, i),
								     60000, 3), 0);
		if (i == me)
			continue;
		objs[i] = tpod_obj(pod, 0, SZ_4K);
		tpod_export(pod, i, objs[i], h[i]);
	}

	t0 = ktime_get();
	tpod_pause(pod, me, true);	/* no answer gets in before all left */
	for (i = 0; i < me; i++)
		KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_start(tpod_dev(pod, me), h[i],
								 0, &imps[i]), 0);
	for (i = 0; i < me; i++) {
		amdgpu_ualink_mbox_get_stats(tpod_mbox(pod, me), i, &s);
		hello += s.sent[AMDGPU_UALINK_MSG_HELLO] >= 1;
	}
	KUNIT_EXPECT_EQ(test, hello, me);
	tpod_pause(pod, me, false);
	for (i = 0; i < me; i++) {
		/* a failed finish dropped the reference */
		if (amdgpu_ualink_import_finish(imps[i])) {
			KUNIT_FAIL(test, "import %u failed", i);
			imps[i] = NULL;
		}
	}
	kunit_info(test, "%u imports from %u exporters in one batch: %lld ms\n",
		   me, me, ktime_ms_delta(ktime_get(), t0));
	for (i = 0; i < me; i++) {
		KUNIT_EXPECT_EQ(test, tpod_grants(pod, i), 1);
		amdgpu_ualink_import_put(imps[i]);	/* NULL is fine */
	}
	amdgpu_ualink_dev_flush(tpod_dev(pod, me));

	/* node 0's heap, imported by everyone else */
	for (i = 1; i < n; i++)
		KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_start(tpod_dev(pod, i), h[0],
								 0, &imps[i]), 0);
	for (i = 1; i < n; i++) {
		if (amdgpu_ualink_import_finish(imps[i])) {
			KUNIT_FAIL(test, "import of node 0's heap by %u failed", i);
			imps[i] = NULL;
		}
	}
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, 0), n - 1);
	kunit_info(test, "an export with %u importers: %zu bytes\n", me,
		   amdgpu_ualink_export_bytes(tpod_dev(pod, 0), h[0]));
	for (i = 1; i < n; i++)
		amdgpu_ualink_import_put(imps[i]);
	for (i = 1; i < n; i++)
		amdgpu_ualink_dev_flush(tpod_dev(pod, i));
	KUNIT_EXPECT_EQ(test, tpod_grants(pod, 0), 0);
	for (i = 0; i < me; i++)
		amdgpu_ualink_export_destroy(tpod_dev(pod, i), &objs[i]->slot);
}

/*
 * The exporter leaves our virtual pod: our import of its memory dies at
 * once (no message comes: it takes us out of its access sets on its side),
 * and once it is back, importing the handle asks it anew.
 */
static void import_drop_nonmembers(struct kunit *test)
{
	struct tpod *pod = pod_create(test, 4);
	struct tobj *o = tpod_obj(pod, 0, SZ_2M);
	struct amdgpu_ualink_import *i1, *i2;
	u64 h[2];

	tpod_export(pod, A, o, h);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &i1), 0);
	amdgpu_ualink_import_drop_nonmembers(tpod_dev(pod, B));	/* no change */
	KUNIT_EXPECT_EQ(test, i1->state, AMDGPU_UALINK_IMPORT_READY);

	tpod_node(pod, A)->vpod = 7;
	amdgpu_ualink_import_drop_nonmembers(tpod_dev(pod, B));
	KUNIT_EXPECT_EQ(test, i1->state, AMDGPU_UALINK_IMPORT_DEAD);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &i2), -EACCES);

	tpod_node(pod, A)->vpod = 0;
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(tpod_dev(pod, B), h, &i2), 0);
	KUNIT_EXPECT_PTR_NE(test, i1, i2);
	KUNIT_EXPECT_EQ(test, received(pod, A, AMDGPU_UALINK_MSG_NPA_REQ), 2);
	amdgpu_ualink_import_put(i1);
	amdgpu_ualink_import_put(i2);
	amdgpu_ualink_dev_flush(tpod_dev(pod, B));
	KUNIT_EXPECT_EQ(test, tpod_dev(pod, B)->num_imports, 0);
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o->slot);
}

static bool imp_dead(void *arg)
{
	struct amdgpu_ualink_import *imp = arg;

	return READ_ONCE(imp->state) == AMDGPU_UALINK_IMPORT_DEAD;
}

static bool unpinned(void *arg)
{
	struct tobj *o = arg;

	return !READ_ONCE(o->pins);
}

/*
 * Two buffers of one import detached in turn, each while its job runs
 * (their driver frees them once idle); A ends its export. B gives the
 * range back only once both jobs are done, whichever ends first.
 */
static void detached_two(struct kunit *test, struct tpod *pod, bool first_ends_first)
{
	struct amdgpu_ualink_dev *b = tpod_dev(pod, B);
	struct tobj *o = tpod_obj(pod, 0, SZ_4K);
	struct tobj *b1 = tpod_obj(pod, 0, 0), *b2 = tpod_obj(pod, 0, 0);
	struct dma_fence *f1 = tpod_job(pod), *f2 = tpod_job(pod);
	struct amdgpu_ualink_import *imp;
	u64 h[2];

	tpod_export(pod, A, o, h);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(b, h, &imp), 0);
	amdgpu_ualink_import_set_obj(imp, b1);
	KUNIT_EXPECT_FALSE(test, amdgpu_ualink_import_detach(imp, f1));
	amdgpu_ualink_import_set_obj(imp, b2);
	KUNIT_EXPECT_FALSE(test, amdgpu_ualink_import_detach(imp, f2));
	amdgpu_ualink_export_end(tpod_dev(pod, A), &o->slot);
	KUNIT_EXPECT_TRUE(test, tpod_wait_for(imp_dead, imp, 10000));
	/* one job ends, the other runs on: A keeps its memory */
	dma_fence_signal(first_ends_first ? f1 : f2);
	KUNIT_EXPECT_FALSE(test, tpod_wait_for(unpinned, o, 500));
	/* the anchor: the other ends too, and B gives the range back */
	dma_fence_signal(first_ends_first ? f2 : f1);
	KUNIT_EXPECT_TRUE(test, tpod_wait_for(unpinned, o, 10000));
	amdgpu_ualink_import_put(imp);
}

/*
 * Buffers of an import detached while still busy: a revocation gives the
 * range back only once the work of each of them is done. A buffer whose
 * work is not known holds the range until its driver says it is idle, or
 * until the bound.
 */
static void import_detached_busy(struct kunit *test)
{
	struct tpod *pod = pod_create(test, 4);
	struct amdgpu_ualink_dev *b = tpod_dev(pod, B);
	struct tobj *o = tpod_obj(pod, 0, SZ_4K), *o2 = tpod_obj(pod, 0, SZ_4K);
	struct tobj *b1 = tpod_obj(pod, 0, 0);
	struct amdgpu_ualink_import *imp;
	u64 h[2];

	detached_two(test, pod, false);
	detached_two(test, pod, true);
	KUNIT_EXPECT_EQ(test, atomic_read(&b->revoke_timeouts), 0);

	/* work not known (no memory to gather the fences): until idle */
	tpod_export(pod, A, o, h);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(b, h, &imp), 0);
	amdgpu_ualink_import_set_obj(imp, b1);
	KUNIT_EXPECT_TRUE(test, amdgpu_ualink_import_detach(imp, ERR_PTR(-ENOMEM)));
	amdgpu_ualink_export_end(tpod_dev(pod, A), &o->slot);
	KUNIT_EXPECT_TRUE(test, tpod_wait_for(imp_dead, imp, 10000));
	KUNIT_EXPECT_FALSE(test, tpod_wait_for(unpinned, o, 500));
	amdgpu_ualink_import_detached_idle(imp);
	KUNIT_EXPECT_TRUE(test, tpod_wait_for(unpinned, o, 10000));
	KUNIT_EXPECT_EQ(test, atomic_read(&b->revoke_timeouts), 0);
	amdgpu_ualink_import_put(imp);

	/* ... or until the bound */
	b->revoke_timeout = msecs_to_jiffies(200);
	tpod_export(pod, A, o2, h);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_import_get(b, h, &imp), 0);
	amdgpu_ualink_import_set_obj(imp, b1);
	KUNIT_EXPECT_TRUE(test, amdgpu_ualink_import_detach(imp, ERR_PTR(-ENOMEM)));
	amdgpu_ualink_export_destroy(tpod_dev(pod, A), &o2->slot);
	KUNIT_EXPECT_EQ(test, o2->pins, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&b->revoke_timeouts), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&tpod_dev(pod, A)->release_timeouts), 0);
	amdgpu_ualink_import_detached_idle(imp);
	amdgpu_ualink_import_put(imp);
	amdgpu_ualink_dev_flush(b);
	KUNIT_EXPECT_EQ(test, b->num_imports, 0);
}

static struct kunit_case amdgpu_ualink_import_cases[] = {
	KUNIT_CASE(import_basic_and_twice),
	KUNIT_CASE(import_lookup_whole_handle),
	KUNIT_CASE(import_concurrent),
	KUNIT_CASE_SLOW(import_errors),
	KUNIT_CASE(import_batch),
	KUNIT_CASE(import_exporter_reset),
	KUNIT_CASE(import_dev_reset),
	KUNIT_CASE(import_release_then_again),
	KUNIT_CASE(import_revoke_overtakes_grant),
	KUNIT_CASE(import_timeout_gives_back),
	KUNIT_CASE(import_kill_waits_for_no_one),
	KUNIT_CASE(import_detached_busy),
	KUNIT_CASE(import_peer_gone_spares_newer),
	KUNIT_CASE(import_drop_nonmembers),
	KUNIT_CASE_SLOW(import_batch_whole_pod),
	{}
};

static struct kunit_suite amdgpu_ualink_import_suite = {
	.name = "amdgpu_ualink_import",
	.test_cases = amdgpu_ualink_import_cases,
};

kunit_test_suite(amdgpu_ualink_import_suite);
