// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * KUnit tests for connections and requests (amdgpu_ualink_conn.c), on the
 * in-memory pod: the handshake, requests and responses across 16 nodes,
 * timeouts, resets, offline peers, the crossed handshake, and each kind of
 * injected fault with the outcome the mailbox promises for it.
 */

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/slab.h>

#include "amdgpu_ualink_test_pod.h"
#include "../amdgpu_ualink_mbox_internal.h"
#include "../amdgpu_ualink_npa.h"

#define A	5
#define B	900

static const u16 two[] = { A, B };
static const enum tpod_kind mbox_raw[] = { TPOD_MBOX, TPOD_RAW };

static u64 total_dropped(const struct amdgpu_ualink_mbox_stats *s)
{
	u64 sum = 0;
	unsigned int i;

	for (i = 0; i < AMDGPU_UALINK_DROP_REASONS; i++)
		sum += s->dropped[i];
	return sum;
}

static int call(struct tpod *pod, u16 from, u16 to, u64 tag,
		struct amdgpu_ualink_req *req)
{
	tpod_req_init(req, from, to, tag);
	return amdgpu_ualink_mbox_call(tpod_mbox(pod, from), to, req);
}

static enum amdgpu_ualink_conn_state state(struct tpod *pod, u16 id, u16 peer,
					   u64 *gen)
{
	enum amdgpu_ualink_conn_state st = -1;
	u64 g = 0;

	amdgpu_ualink_mbox_peer_state(tpod_mbox(pod, id), peer, &st, &g);
	if (gen)
		*gen = g;
	return st;
}

static void set_fault(struct kunit *test, struct tpod *pod, u16 id,
		      enum amdgpu_ualink_fault_kind kind, u32 types, u32 rate,
		      u32 count, u32 delay_ms)
{
	struct amdgpu_ualink_fault_rule rule = {
		.types = types, .rate = rate, .count = count, .delay_ms = delay_ms,
	};

	KUNIT_ASSERT_EQ(test, amdgpu_ualink_fault_set(amdgpu_ualink_mbox_fault(tpod_mbox(pod, id)),
						      kind, &rule), 0);
}

/* First request: HELLO/HELLO_ACK with generations, then NPA_REQ/NPA_RSP. */
static void conn_handshake(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, 2, two, NULL);
	struct amdgpu_ualink_mbox_stats *sa, *sb;
	struct amdgpu_ualink_req req;
	u64 gen;

	tpod_node(pod, B)->grant = true;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_peers(tpod_mbox(pod, A)), 0);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_peer_bytes(tpod_mbox(pod, A), B), 0);

	KUNIT_ASSERT_EQ(test, call(pod, A, B, 1, &req), 0);
	KUNIT_EXPECT_EQ(test, req.rsp.type, AMDGPU_UALINK_MSG_NPA_RSP);
	KUNIT_EXPECT_EQ(test, req.rsp.handle[0], req.msg.handle[0]);
	KUNIT_EXPECT_EQ(test, req.rsp.npa,
			amdgpu_ualink_npa_build(B, AMDGPU_UALINK_NPA_RESERVE + A * SZ_2M));

	KUNIT_EXPECT_EQ(test, state(pod, A, B, &gen), AMDGPU_UALINK_CONN_ESTABLISHED);
	KUNIT_EXPECT_EQ(test, gen, amdgpu_ualink_mbox_generation(tpod_mbox(pod, B)));
	KUNIT_EXPECT_EQ(test, state(pod, B, A, &gen), AMDGPU_UALINK_CONN_ESTABLISHED);
	KUNIT_EXPECT_EQ(test, gen, amdgpu_ualink_mbox_generation(tpod_mbox(pod, A)));

	sa = tpod_stats(pod, A, B);
	sb = tpod_stats(pod, B, A);
	KUNIT_EXPECT_EQ(test, sa->sent[AMDGPU_UALINK_MSG_HELLO], 1);
	KUNIT_EXPECT_EQ(test, sa->sent[AMDGPU_UALINK_MSG_NPA_REQ], 1);
	KUNIT_EXPECT_EQ(test, sa->received[AMDGPU_UALINK_MSG_HELLO_ACK], 1);
	KUNIT_EXPECT_EQ(test, sa->received[AMDGPU_UALINK_MSG_NPA_RSP], 1);
	KUNIT_EXPECT_EQ(test, sb->received[AMDGPU_UALINK_MSG_HELLO], 1);
	KUNIT_EXPECT_EQ(test, sb->sent[AMDGPU_UALINK_MSG_NPA_RSP], 1);
	KUNIT_EXPECT_EQ(test, total_dropped(sa) + total_dropped(sb), 0);
	KUNIT_EXPECT_EQ(test, tpod_handled(pod, B), 1);

	/* the second request needs no handshake */
	KUNIT_ASSERT_EQ(test, call(pod, A, B, 2, &req), 0);
	KUNIT_EXPECT_EQ(test, tpod_stats(pod, A, B)->sent[AMDGPU_UALINK_MSG_HELLO], 1);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_peers(tpod_mbox(pod, A)), 1);
	KUNIT_EXPECT_GT(test, amdgpu_ualink_mbox_peer_bytes(tpod_mbox(pod, A), B), 0);
	/* the default answer of a handler that knows no handle */
	tpod_node(pod, B)->grant = false;
	KUNIT_ASSERT_EQ(test, call(pod, A, B, 3, &req), 0);
	KUNIT_EXPECT_EQ(test, req.rsp.type, AMDGPU_UALINK_MSG_NPA_FAIL);
	KUNIT_EXPECT_EQ(test, req.rsp.reason, AMDGPU_UALINK_FAIL_INVALID_HANDLE);
}

/* Sixteen nodes, every one asks every other at once. */
static void conn_pod_of_16(struct kunit *test)
{
	static const u16 ids[16] = { 0, 1, 2, 63, 64, 100, 255, 256, 511, 512,
				     700, 900, 1000, 1021, 1022, 1023 };
	struct amdgpu_ualink_req *reqs;
	struct tpod *pod = tpod_create(test, 16, ids, NULL);
	unsigned int i, j, k = 0;

	reqs = tpod_reqs(pod, 16 * 16);
	for (i = 0; i < 16; i++)
		tpod_node(pod, ids[i])->grant = true;
	for (i = 0; i < 16; i++) {
		struct amdgpu_ualink_mbox *mbox = tpod_mbox(pod, ids[i]);

		for (j = 0; j < 16; j++) {
			struct amdgpu_ualink_req *r = &reqs[i * 16 + j];

			if (i == j)
				continue;
			tpod_req_init(r, ids[i], ids[j], k++);
			KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_submit(mbox, ids[j], r), 0);
		}
	}
	for (i = 0; i < 16; i++) {
		struct amdgpu_ualink_mbox *mbox = tpod_mbox(pod, ids[i]);

		for (j = 0; j < 16; j++) {
			struct amdgpu_ualink_req *r = &reqs[i * 16 + j];

			if (i == j)
				continue;
			KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_wait(mbox, r), 0);
			KUNIT_EXPECT_EQ(test, r->rsp.type, AMDGPU_UALINK_MSG_NPA_RSP);
			KUNIT_EXPECT_EQ(test, r->rsp.npa,
					amdgpu_ualink_npa_build(ids[j], AMDGPU_UALINK_NPA_RESERVE +
								ids[i] * (u64)SZ_2M));
		}
		KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_peers(tpod_mbox(pod, ids[i])), 15);
	}
	/* only now has every node answered every other */
	for (i = 0; i < 16; i++)
		KUNIT_EXPECT_EQ(test, tpod_handled(pod, ids[i]), 15);
	KUNIT_EXPECT_EQ(test, k, 240);
}

/* Bad arguments are refused before anything is sent. */
static void conn_submit_rejects(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, 2, two, NULL);
	struct amdgpu_ualink_req req = {};

	tpod_req_init(&req, A, B, 1);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_submit(tpod_mbox(pod, A), A, &req), -EINVAL);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_submit(tpod_mbox(pod, A), 1024, &req), -EINVAL);
	req.msg.type = AMDGPU_UALINK_MSG_HELLO;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_submit(tpod_mbox(pod, A), B, &req), -EINVAL);
	req.msg.type = AMDGPU_UALINK_MSG_NPA_RSP;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_submit(tpod_mbox(pod, A), B, &req), -EINVAL);
	/* a field NPA_REQ does not use */
	req.msg.type = AMDGPU_UALINK_MSG_NPA_REQ;
	req.msg.generation = 1;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_submit(tpod_mbox(pod, A), B, &req), -EINVAL);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_set_timeout(tpod_mbox(pod, A), 0, 3), -EINVAL);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_set_timeout(tpod_mbox(pod, A), 100, 17), -EINVAL);
	KUNIT_EXPECT_EQ(test, tpod_stats(pod, A, -1)->sent[AMDGPU_UALINK_MSG_HELLO], 0);
}

/*
 * A peer that never answers: HELLO is retransmitted 3 times, then the call
 * fails with -ETIMEDOUT no earlier than the timeout and well within a bound,
 * and the peer is reported lost.
 */
static void conn_timeout(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, 2, two, mbox_raw);
	struct amdgpu_ualink_mbox_stats *s;
	struct amdgpu_ualink_req req;
	unsigned long t0;
	unsigned int ms;

	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_set_timeout(tpod_mbox(pod, A), 300, 3), 0);
	t0 = jiffies;
	KUNIT_EXPECT_EQ(test, call(pod, A, B, 1, &req), -ETIMEDOUT);
	ms = jiffies_to_msecs(jiffies - t0);
	kunit_info(test, "timed out after %u ms (timeout 300 ms)\n", ms);
	KUNIT_EXPECT_GE(test, ms, 300 - jiffies_to_msecs(1));
	KUNIT_EXPECT_LT(test, ms, 300 + 5000);

	s = tpod_stats(pod, A, B);
	KUNIT_EXPECT_EQ(test, s->sent[AMDGPU_UALINK_MSG_HELLO], 4);
	KUNIT_EXPECT_EQ(test, s->retransmitted[AMDGPU_UALINK_MSG_HELLO], 3);
	KUNIT_EXPECT_EQ(test, s->sent[AMDGPU_UALINK_MSG_NPA_REQ], 0);
	KUNIT_EXPECT_GE(test, s->timeouts, 1);
	KUNIT_EXPECT_EQ(test, state(pod, A, B, NULL), AMDGPU_UALINK_CONN_NOT_READY);
	KUNIT_EXPECT_EQ(test, tpod_events(pod, A, AMDGPU_UALINK_PEER_LOST, 1), 1);
}

/* As B: answer request @m (read from A) with NPA_FAIL "invalid handle". */
static void answer_fail(struct tpod *pod, struct amdgpu_ualink_msg m)
{
	m.type = AMDGPU_UALINK_MSG_NPA_FAIL;
	m.flags = AMDGPU_UALINK_MSG_F_RESPONSE;
	m.reason = AMDGPU_UALINK_FAIL_INVALID_HANDLE;
	swap(m.sender, m.receiver);
	tpod_send(pod, B, A, &m);
}

/* As B: greet back A's HELLO, then read its next message, a request. */
static void greet_and_read(struct kunit *test, struct tpod *pod, u32 *next,
			   struct amdgpu_ualink_msg *m)
{
	KUNIT_ASSERT_EQ(test, tpod_read(pod, A, B, next, m), 0);
	KUNIT_ASSERT_EQ(test, m->type, AMDGPU_UALINK_MSG_HELLO);
	tpod_hello_ack(pod, B, A, m->txn, 77);
	KUNIT_ASSERT_EQ(test, tpod_read(pod, A, B, next, m), 0);
	KUNIT_ASSERT_EQ(test, m->type, AMDGPU_UALINK_MSG_NPA_REQ);
}

/*
 * B answers one request and never the other: that one fails alone with
 * -ETIMEDOUT, and the connection, which B showed alive, carries on.
 */
static void conn_request_fails_alone(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, 2, two, mbox_raw);
	struct amdgpu_ualink_req *reqs = tpod_reqs(pod, 3);
	struct amdgpu_ualink_msg m1, m2;
	u32 next = 0;

	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_set_timeout(tpod_mbox(pod, A), 300, 0), 0);
	tpod_req_init(&reqs[0], A, B, 1);
	tpod_req_init(&reqs[1], A, B, 2);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_submit(tpod_mbox(pod, A), B, &reqs[0]), 0);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_submit(tpod_mbox(pod, A), B, &reqs[1]), 0);
	greet_and_read(test, pod, &next, &m1);
	KUNIT_ASSERT_EQ(test, tpod_read(pod, A, B, &next, &m2), 0);
	answer_fail(pod, m2);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_wait(tpod_mbox(pod, A), &reqs[1]), 0);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_wait(tpod_mbox(pod, A), &reqs[0]), -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, tpod_stats(pod, A, B)->timeouts, 1);
	KUNIT_EXPECT_EQ(test, state(pod, A, B, NULL), AMDGPU_UALINK_CONN_ESTABLISHED);
	KUNIT_EXPECT_EQ(test, tpod_events(pod, A, AMDGPU_UALINK_PEER_LOST, 0), 0);

	/* the next request goes out on the same connection, no new HELLO */
	tpod_req_init(&reqs[2], A, B, 3);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_submit(tpod_mbox(pod, A), B, &reqs[2]), 0);
	KUNIT_ASSERT_EQ(test, tpod_read(pod, A, B, &next, &m1), 0);
	KUNIT_ASSERT_EQ(test, m1.type, AMDGPU_UALINK_MSG_NPA_REQ);
	answer_fail(pod, m1);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_wait(tpod_mbox(pod, A), &reqs[2]), 0);
	KUNIT_EXPECT_EQ(test, tpod_stats(pod, A, B)->sent[AMDGPU_UALINK_MSG_HELLO], 1);
}

/*
 * A request's time starts when it is first sent, not while it waits for
 * room: 32 requests, 16 in flight, a 60 s timeout. The mailbox's clock is
 * moved on 40 s before B answers each batch, so the second batch is
 * answered 80 s after it was submitted but 40 s after it was sent, and
 * nothing fails; one more request left unanswered for 60 s then does (the
 * clock the deadlines read is the one moved). No sleep: the machine's
 * speed decides nothing.
 */
static void conn_queue_waits_unsent(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, 2, two, mbox_raw);
	struct amdgpu_ualink_mbox *ma = tpod_mbox(pod, A);
	struct amdgpu_ualink_req *reqs = tpod_reqs(pod, 2 * AMDGPU_UALINK_IN_FLIGHT + 1);
	struct amdgpu_ualink_req *last = &reqs[2 * AMDGPU_UALINK_IN_FLIGHT];
	struct amdgpu_ualink_msg m[AMDGPU_UALINK_IN_FLIGHT];
	unsigned int i, batch;
	u32 next = 0;

	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_set_timeout(ma, 60000, 0), 0);
	for (i = 0; i < 2 * AMDGPU_UALINK_IN_FLIGHT; i++) {
		tpod_req_init(&reqs[i], A, B, i + 1);
		KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_submit(ma, B, &reqs[i]), 0);
	}
	greet_and_read(test, pod, &next, &m[0]);
	for (batch = 0; batch < 2; batch++) {
		for (i = !batch; i < AMDGPU_UALINK_IN_FLIGHT; i++) {
			KUNIT_ASSERT_EQ(test, tpod_read(pod, A, B, &next, &m[i]), 0);
			KUNIT_ASSERT_EQ(test, m[i].type, AMDGPU_UALINK_MSG_NPA_REQ);
		}
		amdgpu_ualink_mbox_advance(ma, 40000);
		/* the timer ran: no more than that in flight meanwhile */
		KUNIT_EXPECT_EQ(test, smp_load_acquire(&tpod_ring(pod, B, A)->head), next);
		KUNIT_EXPECT_EQ(test, tpod_stats(pod, A, B)->timeouts, 0);
		for (i = 0; i < AMDGPU_UALINK_IN_FLIGHT; i++)
			answer_fail(pod, m[i]);
		for (i = 0; i < AMDGPU_UALINK_IN_FLIGHT; i++) {
			struct amdgpu_ualink_req *r = &reqs[batch * AMDGPU_UALINK_IN_FLIGHT + i];

			KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_wait(ma, r), 0);
		}
	}
	KUNIT_EXPECT_EQ(test, tpod_stats(pod, A, B)->timeouts, 0);
	KUNIT_EXPECT_EQ(test, tpod_events(pod, A, AMDGPU_UALINK_PEER_LOST, 0), 0);

	/* the anchor: 60 s of the same clock without an answer is too long */
	tpod_req_init(last, A, B, 2 * AMDGPU_UALINK_IN_FLIGHT + 1);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_submit(ma, B, last), 0);
	KUNIT_ASSERT_EQ(test, tpod_read(pod, A, B, &next, &m[0]), 0);
	amdgpu_ualink_mbox_advance(ma, 40000);
	KUNIT_EXPECT_FALSE(test, completion_done(&last->done));
	amdgpu_ualink_mbox_advance(ma, 20000);
	/* ended by that tick, not by waiting a minute for the real clock */
	KUNIT_EXPECT_TRUE(test, completion_done(&last->done));
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_wait(ma, last), -ETIMEDOUT);
}

/* @req, an NPA_REQ for owner @owner, tagged @tag, submitted from A to B. */
static int submit_owned(struct tpod *pod, struct amdgpu_ualink_req *req,
			u32 owner, u64 tag)
{
	tpod_req_init(req, A, B, tag);
	req->owner = owner;
	return amdgpu_ualink_mbox_submit(tpod_mbox(pod, A), B, req);
}

/* As B: read A's next message, which must be an NPA_REQ; its tag. */
static u64 read_req_tag(struct kunit *test, struct tpod *pod, u32 *next,
			struct amdgpu_ualink_msg *m)
{
	KUNIT_ASSERT_EQ(test, tpod_read(pod, A, B, next, m), 0);
	return m->type == AMDGPU_UALINK_MSG_NPA_REQ ?
	       m->handle[0] >> AMDGPU_UALINK_ACCEL_ID_BITS : 0;
}

/*
 * A release waits behind no queue of requests: with 16 NPA_REQs in flight
 * to B and 16 more waiting, an NPA_RELEASE submitted last is the next
 * message B reads once it answered one request.
 */
static void conn_release_lane(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, 2, two, mbox_raw);
	struct amdgpu_ualink_req *reqs = tpod_reqs(pod, 2 * AMDGPU_UALINK_IN_FLIGHT + 1);
	struct amdgpu_ualink_req *rel = &reqs[2 * AMDGPU_UALINK_IN_FLIGHT];
	struct amdgpu_ualink_msg m, sent[AMDGPU_UALINK_IN_FLIGHT];
	unsigned int i;
	u32 next = 0;

	/* no retransmission comes between the messages read */
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_set_timeout(tpod_mbox(pod, A), 60000, 0), 0);
	for (i = 0; i < 2 * AMDGPU_UALINK_IN_FLIGHT; i++)
		KUNIT_ASSERT_EQ(test, submit_owned(pod, &reqs[i], 1, i + 1), 0);
	greet_and_read(test, pod, &next, &sent[0]);
	for (i = 1; i < AMDGPU_UALINK_IN_FLIGHT; i++)
		KUNIT_ASSERT_EQ(test, read_req_tag(test, pod, &next, &sent[i]), i + 1);
	tpod_req_init(rel, A, B, 99);
	rel->msg.type = AMDGPU_UALINK_MSG_NPA_RELEASE;
	rel->msg.npa = amdgpu_ualink_npa_build(B, AMDGPU_UALINK_NPA_RESERVE);
	rel->msg.size = SZ_4K;
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_submit(tpod_mbox(pod, A), B, rel), 0);
	/* the window is full: nothing more until B answers */
	KUNIT_EXPECT_EQ(test, smp_load_acquire(&tpod_ring(pod, B, A)->head), next);
	answer_fail(pod, sent[0]);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_wait(tpod_mbox(pod, A), &reqs[0]), 0);
	KUNIT_ASSERT_EQ(test, tpod_read(pod, A, B, &next, &m), 0);
	KUNIT_EXPECT_EQ(test, m.type, AMDGPU_UALINK_MSG_NPA_RELEASE);
	m.type = AMDGPU_UALINK_MSG_NPA_REVOKE;
	m.flags = AMDGPU_UALINK_MSG_F_RESPONSE;
	swap(m.sender, m.receiver);
	tpod_send(pod, B, A, &m);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_wait(tpod_mbox(pod, A), rel), 0);
	/* the anchor: the requests go on after it, in order, as room comes */
	answer_fail(pod, sent[1]);
	KUNIT_EXPECT_EQ(test, read_req_tag(test, pod, &next, &m),
			AMDGPU_UALINK_IN_FLIGHT + 1);
}

/*
 * NPA_REQs waiting for one peer are sent one owner at a time: owner 1
 * queued 32 before owner 2 queued 2, and both of owner 2's are among the
 * first 16 B reads, interleaved with owner 1's; owner 1's keep their order.
 */
static void conn_owners_in_turn(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, 2, two, mbox_raw);
	struct amdgpu_ualink_req *reqs = tpod_reqs(pod, 2 * AMDGPU_UALINK_IN_FLIGHT + 2);
	unsigned int i, seen2 = 0, last1 = 0;
	struct amdgpu_ualink_msg m;
	u32 next = 0;
	u64 tag;

	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_set_timeout(tpod_mbox(pod, A), 60000, 0), 0);
	for (i = 0; i < 2 * AMDGPU_UALINK_IN_FLIGHT; i++)
		KUNIT_ASSERT_EQ(test, submit_owned(pod, &reqs[i], 1, i + 1), 0);
	for (i = 0; i < 2; i++)
		KUNIT_ASSERT_EQ(test, submit_owned(pod, &reqs[2 * AMDGPU_UALINK_IN_FLIGHT + i],
						   2, 1000 + i), 0);
	KUNIT_ASSERT_EQ(test, tpod_read(pod, A, B, &next, &m), 0);
	KUNIT_ASSERT_EQ(test, m.type, AMDGPU_UALINK_MSG_HELLO);
	tpod_hello_ack(pod, B, A, m.txn, 77);
	for (i = 0; i < AMDGPU_UALINK_IN_FLIGHT; i++) {
		tag = read_req_tag(test, pod, &next, &m);
		if (tag >= 1000) {
			KUNIT_EXPECT_EQ(test, tag, 1000 + seen2);
			seen2++;
		} else {
			KUNIT_EXPECT_EQ(test, tag, last1 + 1);
			last1 = tag;
		}
	}
	kunit_info(test, "first %u sent: %u of owner 1, %u of owner 2\n",
		   AMDGPU_UALINK_IN_FLIGHT, last1, seen2);
	KUNIT_EXPECT_EQ(test, seen2, 2);
	KUNIT_EXPECT_EQ(test, last1, AMDGPU_UALINK_IN_FLIGHT - 2);
}

/*
 * At most %AMDGPU_UALINK_REQ_QUEUED NPA_REQs wait for one peer: the next
 * is refused with -ENOBUFS, while a release is still queued; once the
 * handshake let 16 go, 16 more are accepted, and not one more.
 */
static void conn_queue_bound(struct kunit *test)
{
	const unsigned int n = AMDGPU_UALINK_REQ_QUEUED;
	struct tpod *pod = tpod_create(test, 2, two, mbox_raw);
	struct amdgpu_ualink_req *reqs = tpod_reqs(pod, n + AMDGPU_UALINK_IN_FLIGHT + 2);
	struct amdgpu_ualink_req *rel = &reqs[n + AMDGPU_UALINK_IN_FLIGHT + 1];
	struct amdgpu_ualink_msg m;
	unsigned int i;
	u32 next = 0;

	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_set_timeout(tpod_mbox(pod, A), 60000, 0), 0);
	for (i = 0; i < n; i++)
		KUNIT_ASSERT_EQ(test, submit_owned(pod, &reqs[i], 1 + i % 3, i + 1), 0);
	KUNIT_EXPECT_EQ(test, submit_owned(pod, &reqs[n], 4, n + 1), -ENOBUFS);
	tpod_req_init(rel, A, B, 99);
	rel->msg.type = AMDGPU_UALINK_MSG_NPA_RELEASE;
	rel->msg.npa = amdgpu_ualink_npa_build(B, AMDGPU_UALINK_NPA_RESERVE);
	rel->msg.size = SZ_4K;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_submit(tpod_mbox(pod, A), B, rel), 0);

	KUNIT_ASSERT_EQ(test, tpod_read(pod, A, B, &next, &m), 0);
	KUNIT_ASSERT_EQ(test, m.type, AMDGPU_UALINK_MSG_HELLO);
	tpod_hello_ack(pod, B, A, m.txn, 77);
	KUNIT_ASSERT_EQ(test, tpod_read(pod, A, B, &next, &m), 0);
	KUNIT_EXPECT_EQ(test, m.type, AMDGPU_UALINK_MSG_NPA_RELEASE);
	for (i = 1; i < AMDGPU_UALINK_IN_FLIGHT; i++)
		read_req_tag(test, pod, &next, &m);
	for (i = 0; i < AMDGPU_UALINK_IN_FLIGHT - 1; i++)
		KUNIT_EXPECT_EQ(test, submit_owned(pod, &reqs[n + i], 4, n + i + 1), 0);
	KUNIT_EXPECT_EQ(test, submit_owned(pod, &reqs[n + i], 4, n + i + 1), -ENOBUFS);
}

/*
 * A request waits for room at most a timeout: 32 NPA_REQs, 16 in flight, a
 * 60 s timeout. After 30 s B answers 8, and 8 more go out; at 60 s the 8
 * unanswered of the first 16 time out alone (B is alive), and so do the 8
 * that were never sent, without being sent; the 8 sent at 30 s live on.
 */
static void conn_unsent_expire(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, 2, two, mbox_raw);
	struct amdgpu_ualink_mbox *ma = tpod_mbox(pod, A);
	struct amdgpu_ualink_req *reqs = tpod_reqs(pod, 2 * AMDGPU_UALINK_IN_FLIGHT);
	struct amdgpu_ualink_msg m[AMDGPU_UALINK_IN_FLIGHT];
	const unsigned int h = AMDGPU_UALINK_IN_FLIGHT / 2;
	unsigned int i;
	u32 next = 0;

	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_set_timeout(ma, 60000, 0), 0);
	for (i = 0; i < 2 * AMDGPU_UALINK_IN_FLIGHT; i++)
		KUNIT_ASSERT_EQ(test, submit_owned(pod, &reqs[i], 1, i + 1), 0);
	greet_and_read(test, pod, &next, &m[0]);
	for (i = 1; i < AMDGPU_UALINK_IN_FLIGHT; i++)
		KUNIT_ASSERT_EQ(test, read_req_tag(test, pod, &next, &m[i]), i + 1);
	amdgpu_ualink_mbox_advance(ma, 30000);
	for (i = 0; i < h; i++)
		answer_fail(pod, m[i]);
	for (i = 0; i < h; i++) {
		KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_wait(ma, &reqs[i]), 0);
		KUNIT_ASSERT_EQ(test, read_req_tag(test, pod, &next, &m[i]),
				AMDGPU_UALINK_IN_FLIGHT + i + 1);
	}
	amdgpu_ualink_mbox_advance(ma, 30000);
	for (i = h; i < AMDGPU_UALINK_IN_FLIGHT; i++)
		KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_wait(ma, &reqs[i]), -ETIMEDOUT);
	for (i = AMDGPU_UALINK_IN_FLIGHT + h; i < 2 * AMDGPU_UALINK_IN_FLIGHT; i++) {
		KUNIT_EXPECT_TRUE(test, completion_done(&reqs[i].done));
		KUNIT_EXPECT_EQ(test, reqs[i].status, -ETIMEDOUT);
	}
	/* the 8 left waiting were never written to B's ring */
	KUNIT_EXPECT_EQ(test, smp_load_acquire(&tpod_ring(pod, B, A)->head), next);
	KUNIT_EXPECT_EQ(test, tpod_stats(pod, A, B)->sent[AMDGPU_UALINK_MSG_NPA_REQ],
			AMDGPU_UALINK_IN_FLIGHT + h);
	/* the anchor: those sent at 30 s are still waiting, and answered */
	for (i = AMDGPU_UALINK_IN_FLIGHT; i < AMDGPU_UALINK_IN_FLIGHT + h; i++)
		KUNIT_EXPECT_FALSE(test, completion_done(&reqs[i].done));
	for (i = 0; i < h; i++)
		answer_fail(pod, m[i]);
	for (i = AMDGPU_UALINK_IN_FLIGHT; i < AMDGPU_UALINK_IN_FLIGHT + h; i++)
		KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_wait(ma, &reqs[i]), 0);
	KUNIT_EXPECT_EQ(test, state(pod, A, B, NULL), AMDGPU_UALINK_CONN_ESTABLISHED);
}

/* Every message dropped: the same outcome, and nothing reaches the ring. */
static void conn_fault_drop_all(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, 2, two, NULL);
	struct amdgpu_ualink_mbox_stats *s;
	struct amdgpu_ualink_req req;

	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_set_timeout(tpod_mbox(pod, A), 200, 3), 0);
	set_fault(test, pod, A, AMDGPU_UALINK_FAULT_DROP, 0,
		  AMDGPU_UALINK_FAULT_RATE_ONE, 0, 0);
	KUNIT_EXPECT_EQ(test, call(pod, A, B, 1, &req), -ETIMEDOUT);
	s = tpod_stats(pod, A, B);
	KUNIT_EXPECT_EQ(test, s->faults[AMDGPU_UALINK_FAULT_DROP], 4);
	KUNIT_EXPECT_EQ(test, s->sent[AMDGPU_UALINK_MSG_HELLO], 0);
	KUNIT_EXPECT_EQ(test, state(pod, A, B, NULL), AMDGPU_UALINK_CONN_NOT_READY);
	KUNIT_EXPECT_EQ(test, state(pod, B, A, NULL), -1);	/* B never heard of A */
	KUNIT_EXPECT_EQ(test, tpod_events(pod, A, AMDGPU_UALINK_PEER_LOST, 1), 1);

	/* with the fault gone the next call connects */
	amdgpu_ualink_fault_clear(amdgpu_ualink_mbox_fault(tpod_mbox(pod, A)));
	KUNIT_EXPECT_EQ(test, call(pod, A, B, 2, &req), 0);
}

/*
 * 20% of every message dropped in both directions: every request still
 * completes through retransmission, and each is mapped exactly once.
 */
static void conn_fault_drop_20(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, 2, two, NULL);
	struct amdgpu_ualink_mbox_stats *sa, *sb;
	struct amdgpu_ualink_req req;
	unsigned int i, ok = 0;

	tpod_node(pod, B)->grant = true;
	for (i = 0; i < 2; i++) {
		struct amdgpu_ualink_mbox *mbox = tpod_mbox(pod, two[i]);

		KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_set_timeout(mbox, 5000, 12), 0);
		set_fault(test, pod, two[i], AMDGPU_UALINK_FAULT_DROP, 0, 200000, 0, 0);
	}
	for (i = 0; i < 20; i++)
		ok += call(pod, A, B, i, &req) == 0;
	sa = tpod_stats(pod, A, B);
	sb = tpod_stats(pod, B, A);
	kunit_info(test, "20 requests: %u completed, %llu+%llu dropped, %llu retransmitted\n",
		   ok, sa->faults[AMDGPU_UALINK_FAULT_DROP], sb->faults[AMDGPU_UALINK_FAULT_DROP],
		   sa->retransmitted[AMDGPU_UALINK_MSG_NPA_REQ] +
		   sa->retransmitted[AMDGPU_UALINK_MSG_HELLO]);
	KUNIT_EXPECT_EQ(test, ok, 20);
	KUNIT_EXPECT_GT(test, sa->faults[AMDGPU_UALINK_FAULT_DROP] +
			sb->faults[AMDGPU_UALINK_FAULT_DROP], 0);
	KUNIT_EXPECT_GT(test, sa->retransmitted[AMDGPU_UALINK_MSG_NPA_REQ] +
			sa->retransmitted[AMDGPU_UALINK_MSG_HELLO], 0);
	/* retransmissions were answered from the cache, never mapped again */
	KUNIT_EXPECT_EQ(test, tpod_handled(pod, B), 20);
	KUNIT_EXPECT_EQ(test, sa->timeouts, 0);
}

static bool dup_seen(void *arg)
{
	struct tpod *pod = arg;

	return tpod_stats(pod, A, B)->dropped[AMDGPU_UALINK_DROP_UNMATCHED] >= 1;
}

/* A duplicated NPA_REQ is answered twice but handled once. */
static void conn_fault_duplicate(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, 2, two, NULL);
	struct amdgpu_ualink_req req;

	tpod_node(pod, B)->grant = true;
	set_fault(test, pod, A, AMDGPU_UALINK_FAULT_DUPLICATE,
		  BIT(AMDGPU_UALINK_MSG_NPA_REQ), 0, 1, 0);
	KUNIT_ASSERT_EQ(test, call(pod, A, B, 1, &req), 0);
	/* the second answer arrives after the first completed the call */
	KUNIT_EXPECT_TRUE(test, tpod_wait_for(dup_seen, pod, 5000));
	KUNIT_EXPECT_EQ(test, tpod_stats(pod, A, B)->faults[AMDGPU_UALINK_FAULT_DUPLICATE], 1);
	KUNIT_EXPECT_EQ(test, tpod_stats(pod, B, A)->received[AMDGPU_UALINK_MSG_NPA_REQ], 2);
	KUNIT_EXPECT_EQ(test, tpod_stats(pod, B, A)->duplicate_requests, 1);
	KUNIT_EXPECT_EQ(test, tpod_handled(pod, B), 1);
	KUNIT_EXPECT_EQ(test, tpod_stats(pod, A, B)->dropped[AMDGPU_UALINK_DROP_UNMATCHED], 1);
}

/* A corrupted message is a CRC drop; the retransmission gets through. */
static void conn_fault_corrupt(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, 2, two, NULL);
	struct amdgpu_ualink_req req;

	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_set_timeout(tpod_mbox(pod, A), 2000, 3), 0);
	set_fault(test, pod, A, AMDGPU_UALINK_FAULT_CORRUPT,
		  BIT(AMDGPU_UALINK_MSG_NPA_REQ), 0, 1, 0);
	KUNIT_ASSERT_EQ(test, call(pod, A, B, 1, &req), 0);
	KUNIT_EXPECT_EQ(test, tpod_stats(pod, B, A)->dropped[AMDGPU_UALINK_DROP_CRC], 1);
	KUNIT_EXPECT_GE(test, tpod_stats(pod, A, B)->retransmitted[AMDGPU_UALINK_MSG_NPA_REQ], 1);
	KUNIT_EXPECT_EQ(test, tpod_handled(pod, B), 1);
}

/*
 * A request delayed past its first retransmission: the retransmission is
 * answered, the late original is answered from the cache and its answer
 * dropped as unmatched. One mapping.
 */
static void conn_fault_delay(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, 2, two, NULL);
	struct amdgpu_ualink_req req;

	tpod_node(pod, B)->grant = true;
	/* first retransmission after 1000 / 15 = 66 ms, the delay is 300 ms */
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_set_timeout(tpod_mbox(pod, A), 1000, 3), 0);
	set_fault(test, pod, A, AMDGPU_UALINK_FAULT_DELAY,
		  BIT(AMDGPU_UALINK_MSG_NPA_REQ), 0, 1, 300);
	KUNIT_ASSERT_EQ(test, call(pod, A, B, 1, &req), 0);
	KUNIT_EXPECT_EQ(test, req.rsp.type, AMDGPU_UALINK_MSG_NPA_RSP);
	KUNIT_EXPECT_TRUE(test, tpod_wait_for(dup_seen, pod, 5000));
	KUNIT_EXPECT_EQ(test, tpod_stats(pod, A, B)->faults[AMDGPU_UALINK_FAULT_DELAY], 1);
	/* a slow machine may retransmit more than once: all but one are cached */
	KUNIT_EXPECT_GE(test, tpod_stats(pod, B, A)->received[AMDGPU_UALINK_MSG_NPA_REQ], 2);
	KUNIT_EXPECT_EQ(test, tpod_stats(pod, B, A)->duplicate_requests,
			tpod_stats(pod, B, A)->received[AMDGPU_UALINK_MSG_NPA_REQ] - 1);
	KUNIT_EXPECT_EQ(test, tpod_handled(pod, B), 1);
}

/* A request held back arrives after the next one; both complete. */
static void conn_fault_reorder(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, 2, two, NULL);
	struct amdgpu_ualink_req *req = tpod_reqs(pod, 2);
	struct tpod_node *b = tpod_node(pod, B);
	unsigned int i;

	/* connect first, so that both requests go out back to back */
	KUNIT_ASSERT_EQ(test, call(pod, A, B, 9, &req[0]), 0);
	set_fault(test, pod, A, AMDGPU_UALINK_FAULT_REORDER,
		  BIT(AMDGPU_UALINK_MSG_NPA_REQ), 0, 1, 2000);
	for (i = 0; i < 2; i++) {
		struct amdgpu_ualink_msg m = tpod_npa_req(A, B, i);

		memset(&req[i], 0, sizeof(req[i]));
		req[i].msg.type = m.type;
		memcpy(req[i].msg.handle, m.handle, sizeof(m.handle));
		KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_submit(tpod_mbox(pod, A), B, &req[i]), 0);
	}
	for (i = 0; i < 2; i++)
		KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_wait(tpod_mbox(pod, A), &req[i]), 0);
	KUNIT_EXPECT_EQ(test, tpod_stats(pod, A, B)->faults[AMDGPU_UALINK_FAULT_REORDER], 1);
	KUNIT_ASSERT_EQ(test, atomic_read(&b->logged), 3);
	KUNIT_EXPECT_EQ(test, b->log[1], req[1].msg.txn);
	KUNIT_EXPECT_EQ(test, b->log[2], req[0].msg.txn);
}

static bool b_saw_request(void *arg)
{
	struct tpod *pod = arg;

	return tpod_handled(pod, B) >= 1;
}

/*
 * B resets while A waits for an answer B will never send: B's HELLO with
 * its new generation ends the connection, A's request fails with -ENOLINK
 * at once and A's export/import layer hears of the reset.
 */
static void conn_peer_reset_mid_request(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, 2, two, NULL);
	struct amdgpu_ualink_req first, *req = tpod_reqs(pod, 1);
	u64 old = amdgpu_ualink_mbox_generation(tpod_mbox(pod, B)), gen;

	KUNIT_ASSERT_EQ(test, call(pod, A, B, 1, &first), 0);
	set_fault(test, pod, B, AMDGPU_UALINK_FAULT_DROP,
		  BIT(AMDGPU_UALINK_MSG_NPA_FAIL), AMDGPU_UALINK_FAULT_RATE_ONE, 0, 0);
	atomic_set(&tpod_node(pod, B)->requests[AMDGPU_UALINK_MSG_NPA_REQ], 0);
	tpod_req_init(req, A, B, 2);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_submit(tpod_mbox(pod, A), B, req), 0);
	KUNIT_ASSERT_TRUE(test, tpod_wait_for(b_saw_request, pod, 5000));

	amdgpu_ualink_mbox_reset(tpod_mbox(pod, B));
	KUNIT_EXPECT_NE(test, amdgpu_ualink_mbox_generation(tpod_mbox(pod, B)), old);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_wait(tpod_mbox(pod, A), req), -ENOLINK);
	/* the callback runs once the peer's lock is dropped, just after */
	KUNIT_EXPECT_EQ(test, tpod_events(pod, A, AMDGPU_UALINK_PEER_RESET, 1), 1);
	KUNIT_EXPECT_EQ(test, tpod_stats(pod, A, B)->generation_changes, 1);
	KUNIT_EXPECT_EQ(test, tpod_stats(pod, A, B)->timeouts, 0);
	/* A answered B's HELLO: a new connection with the new generation */
	KUNIT_EXPECT_EQ(test, state(pod, A, B, &gen), AMDGPU_UALINK_CONN_ESTABLISHED);
	KUNIT_EXPECT_EQ(test, gen, amdgpu_ualink_mbox_generation(tpod_mbox(pod, B)));
	amdgpu_ualink_fault_clear(amdgpu_ualink_mbox_fault(tpod_mbox(pod, B)));
	KUNIT_EXPECT_EQ(test, call(pod, A, B, 3, req), 0);
}

/* As R: read A's greeting after it ended a connection, and answer it. */
static void answer_greeting(struct kunit *test, struct tpod *pod, u32 *next,
			    u64 generation)
{
	struct amdgpu_ualink_msg m;

	KUNIT_ASSERT_EQ(test, tpod_read(pod, A, B, next, &m), 0);
	KUNIT_ASSERT_EQ(test, m.type, AMDGPU_UALINK_MSG_HELLO);
	KUNIT_EXPECT_EQ(test, m.generation, amdgpu_ualink_mbox_generation(tpod_mbox(pod, A)));
	tpod_hello_ack(pod, B, A, m.txn, generation);
}

/*
 * R is played by the test: HELLO, traffic, then HELLOs old and new. Each
 * HELLO that ends the connection is answered and followed by A's own.
 */
static void conn_generation_mismatch(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, 2, two, mbox_raw);
	struct amdgpu_ualink_msg hello = {
		.type = AMDGPU_UALINK_MSG_HELLO,
		.version = AMDGPU_UALINK_PROTO_VERSION,
		.sender = B, .receiver = A, .txn = 100, .generation = 7,
	};
	struct amdgpu_ualink_msg req = tpod_npa_req(B, A, 1), m;
	u32 next = 0;
	u64 gen;

	tpod_send(pod, B, A, &hello);
	KUNIT_ASSERT_EQ(test, tpod_read(pod, A, B, &next, &m), 0);
	KUNIT_EXPECT_EQ(test, m.type, AMDGPU_UALINK_MSG_HELLO_ACK);
	KUNIT_EXPECT_EQ(test, m.txn, 100);
	KUNIT_EXPECT_EQ(test, m.generation, amdgpu_ualink_mbox_generation(tpod_mbox(pod, A)));
	KUNIT_EXPECT_EQ(test, state(pod, A, B, &gen), AMDGPU_UALINK_CONN_ESTABLISHED);
	KUNIT_EXPECT_EQ(test, gen, 7);

	/* the same HELLO again (a retransmission): answered, nothing reset */
	tpod_send(pod, B, A, &hello);
	KUNIT_ASSERT_EQ(test, tpod_read(pod, A, B, &next, &m), 0);
	KUNIT_EXPECT_EQ(test, m.type, AMDGPU_UALINK_MSG_HELLO_ACK);
	KUNIT_EXPECT_EQ(test, tpod_stats(pod, A, B)->duplicate_requests, 1);

	req.txn = 101;
	tpod_send(pod, B, A, &req);
	KUNIT_ASSERT_EQ(test, tpod_read(pod, A, B, &next, &m), 0);
	KUNIT_EXPECT_EQ(test, m.type, AMDGPU_UALINK_MSG_NPA_FAIL);

	/*
	 * R rebooted: new generation, and its first HELLO's transaction
	 * number again, which must not hit the answer cached for the old one.
	 * A ends the connection and greets back.
	 */
	hello.generation = 8;
	tpod_send(pod, B, A, &hello);
	KUNIT_ASSERT_EQ(test, tpod_read(pod, A, B, &next, &m), 0);
	KUNIT_EXPECT_EQ(test, m.type, AMDGPU_UALINK_MSG_HELLO_ACK);
	KUNIT_EXPECT_EQ(test, tpod_events(pod, A, AMDGPU_UALINK_PEER_RESET, 0), 1);
	KUNIT_EXPECT_EQ(test, tpod_stats(pod, A, B)->generation_changes, 1);
	KUNIT_EXPECT_EQ(test, state(pod, A, B, &gen), AMDGPU_UALINK_CONN_ESTABLISHED);
	KUNIT_EXPECT_EQ(test, gen, 8);
	answer_greeting(test, pod, &next, 8);

	/* a HELLO with the same generation before any traffic: crossed */
	hello.txn = 2;
	tpod_send(pod, B, A, &hello);
	KUNIT_ASSERT_EQ(test, tpod_read(pod, A, B, &next, &m), 0);
	KUNIT_EXPECT_EQ(test, m.type, AMDGPU_UALINK_MSG_HELLO_ACK);
	KUNIT_EXPECT_EQ(test, tpod_events(pod, A, AMDGPU_UALINK_PEER_RESET, 0), 1);

	/* after traffic, the same generation means R restarted the connection */
	req.txn = 3;
	tpod_send(pod, B, A, &req);
	KUNIT_ASSERT_EQ(test, tpod_read(pod, A, B, &next, &m), 0);
	hello.txn = 4;
	tpod_send(pod, B, A, &hello);
	KUNIT_ASSERT_EQ(test, tpod_read(pod, A, B, &next, &m), 0);
	KUNIT_EXPECT_EQ(test, m.type, AMDGPU_UALINK_MSG_HELLO_ACK);
	KUNIT_EXPECT_EQ(test, tpod_events(pod, A, AMDGPU_UALINK_PEER_RESET, 0), 2);
	KUNIT_EXPECT_EQ(test, tpod_stats(pod, A, B)->generation_changes, 1);
	answer_greeting(test, pod, &next, 8);
	KUNIT_EXPECT_EQ(test, tpod_stats(pod, A, B)->dropped[AMDGPU_UALINK_DROP_UNMATCHED], 0);
}

/* A request outside a connection is dropped and answered with a HELLO. */
static void conn_unconnected_request(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, 2, two, mbox_raw);
	struct amdgpu_ualink_msg req = tpod_npa_req(B, A, 1), m;
	u32 next = 0;

	req.txn = 55;
	tpod_send(pod, B, A, &req);
	KUNIT_EXPECT_EQ(test, tpod_stats(pod, A, B)->dropped[AMDGPU_UALINK_DROP_UNCONNECTED], 1);
	KUNIT_EXPECT_EQ(test, tpod_handled(pod, A), 0);
	KUNIT_ASSERT_EQ(test, tpod_read(pod, A, B, &next, &m), 0);
	KUNIT_EXPECT_EQ(test, m.type, AMDGPU_UALINK_MSG_HELLO);
	KUNIT_EXPECT_EQ(test, m.generation, amdgpu_ualink_mbox_generation(tpod_mbox(pod, A)));
	KUNIT_EXPECT_EQ(test, state(pod, A, B, NULL), AMDGPU_UALINK_CONN_HELLO_SENT);
}

/*
 * Both sides greet at once and the peer's HELLO arrives after its
 * HELLO_ACK: answered without ending the connection, and the request that
 * waited for the handshake goes out.
 */
static void conn_crossed_handshake(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, 2, two, mbox_raw);
	struct amdgpu_ualink_req *req = tpod_reqs(pod, 1);
	struct amdgpu_ualink_msg m, hello, rsp;
	u32 next = 0;

	tpod_req_init(req, A, B, 1);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_submit(tpod_mbox(pod, A), B, req), 0);
	KUNIT_ASSERT_EQ(test, tpod_read(pod, A, B, &next, &hello), 0);
	KUNIT_ASSERT_EQ(test, hello.type, AMDGPU_UALINK_MSG_HELLO);

	tpod_hello_ack(pod, B, A, hello.txn, 42);
	m = (struct amdgpu_ualink_msg) {
		.type = AMDGPU_UALINK_MSG_HELLO, .version = AMDGPU_UALINK_PROTO_VERSION,
		.sender = B, .receiver = A, .txn = 9, .generation = 42,
	};
	tpod_send(pod, B, A, &m);

	/* A's NPA_REQ and its HELLO_ACK, in either order */
	KUNIT_ASSERT_EQ(test, tpod_read(pod, A, B, &next, &m), 0);
	if (m.type == AMDGPU_UALINK_MSG_HELLO_ACK)
		KUNIT_ASSERT_EQ(test, tpod_read(pod, A, B, &next, &m), 0);
	else
		KUNIT_ASSERT_EQ(test, tpod_read(pod, A, B, &next, &rsp), 0);
	KUNIT_ASSERT_EQ(test, m.type, AMDGPU_UALINK_MSG_NPA_REQ);
	KUNIT_EXPECT_EQ(test, tpod_events(pod, A, AMDGPU_UALINK_PEER_RESET, 0), 0);

	rsp = (struct amdgpu_ualink_msg) {
		.type = AMDGPU_UALINK_MSG_NPA_FAIL, .flags = AMDGPU_UALINK_MSG_F_RESPONSE,
		.version = AMDGPU_UALINK_PROTO_VERSION, .sender = B, .receiver = A,
		.txn = m.txn, .handle = { m.handle[0], m.handle[1] },
		.reason = AMDGPU_UALINK_FAIL_NO_SPACE,
	};
	tpod_send(pod, B, A, &rsp);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_wait(tpod_mbox(pod, A), req), 0);
	KUNIT_EXPECT_EQ(test, req->rsp.reason, AMDGPU_UALINK_FAIL_NO_SPACE);
}

/*
 * Both sides greet at once and A's HELLO is lost: A, connected by R's
 * HELLO, stops resending its own, so no stale HELLO can reach R after the
 * connection carried traffic and end it on R's side only.
 */
static void conn_lost_hello_crossed(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, 2, two, mbox_raw);
	struct amdgpu_ualink_req *req = tpod_reqs(pod, 2);
	struct amdgpu_ualink_msg m, hello = {
		.type = AMDGPU_UALINK_MSG_HELLO, .version = AMDGPU_UALINK_PROTO_VERSION,
		.sender = B, .receiver = A, .txn = 50, .generation = 9,
	};
	unsigned int tries;
	u32 next = 0;

	/* first retransmission after 20 ms */
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_set_timeout(tpod_mbox(pod, A), 300, 3), 0);
	tpod_req_init(req, A, B, 1);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_submit(tpod_mbox(pod, A), B, req), 0);
	KUNIT_ASSERT_EQ(test, tpod_read(pod, A, B, &next, &m), 0);	/* "lost" */
	KUNIT_ASSERT_EQ(test, m.type, AMDGPU_UALINK_MSG_HELLO);
	tpod_send(pod, B, A, &hello);

	KUNIT_ASSERT_EQ(test, tpod_read(pod, A, B, &next, &m), 0);
	KUNIT_EXPECT_EQ(test, m.type, AMDGPU_UALINK_MSG_HELLO_ACK);
	KUNIT_ASSERT_EQ(test, tpod_read(pod, A, B, &next, &m), 0);
	KUNIT_ASSERT_EQ(test, m.type, AMDGPU_UALINK_MSG_NPA_REQ);
	m.type = AMDGPU_UALINK_MSG_NPA_FAIL;
	m.flags = AMDGPU_UALINK_MSG_F_RESPONSE;
	m.reason = AMDGPU_UALINK_FAIL_INVALID_HANDLE;
	swap(m.sender, m.receiver);
	tpod_send(pod, B, A, &m);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_wait(tpod_mbox(pod, A), req), 0);

	/*
	 * A later request's first retransmission: a HELLO still pending,
	 * sent before it on the same schedule, would have been resent by
	 * then, and would be in the ring before it. The timeout is longer
	 * now, so the answer comes well before the request's time is up.
	 */
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_set_timeout(tpod_mbox(pod, A), 2000, 3), 0);
	tpod_req_init(&req[1], A, B, 2);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_submit(tpod_mbox(pod, A), B, &req[1]), 0);
	for (tries = 0; tries < 2;) {
		KUNIT_ASSERT_EQ(test, tpod_read(pod, A, B, &next, &m), 0);
		KUNIT_ASSERT_NE(test, m.type, AMDGPU_UALINK_MSG_HELLO);
		if (m.type == AMDGPU_UALINK_MSG_NPA_REQ && m.txn == req[1].msg.txn)
			tries++;
	}
	m.type = AMDGPU_UALINK_MSG_NPA_FAIL;
	m.flags = AMDGPU_UALINK_MSG_F_RESPONSE;
	m.reason = AMDGPU_UALINK_FAIL_INVALID_HANDLE;
	swap(m.sender, m.receiver);
	tpod_send(pod, B, A, &m);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_wait(tpod_mbox(pod, A), &req[1]), 0);
	KUNIT_EXPECT_EQ(test, tpod_stats(pod, A, B)->sent[AMDGPU_UALINK_MSG_HELLO], 1);
	KUNIT_EXPECT_EQ(test, state(pod, A, B, NULL), AMDGPU_UALINK_CONN_ESTABLISHED);
}

/* Offline: outstanding requests fail, new ones are refused, until online. */
static void conn_peer_offline(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, 2, two, NULL);
	struct amdgpu_ualink_req *req = tpod_reqs(pod, 1), req2;

	KUNIT_ASSERT_EQ(test, call(pod, A, B, 1, &req2), 0);
	set_fault(test, pod, B, AMDGPU_UALINK_FAULT_DROP,
		  BIT(AMDGPU_UALINK_MSG_NPA_FAIL), AMDGPU_UALINK_FAULT_RATE_ONE, 0, 0);
	tpod_req_init(req, A, B, 2);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_submit(tpod_mbox(pod, A), B, req), 0);
	amdgpu_ualink_mbox_peer_offline(tpod_mbox(pod, A), B);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_wait(tpod_mbox(pod, A), req), -ENOLINK);
	KUNIT_EXPECT_EQ(test, state(pod, A, B, NULL), AMDGPU_UALINK_CONN_OFFLINE);
	KUNIT_EXPECT_EQ(test, call(pod, A, B, 3, &req2), -ENOLINK);
	/* the event comes from A's worker, shortly */
	KUNIT_EXPECT_EQ(test, tpod_events(pod, A, AMDGPU_UALINK_PEER_OFFLINE, 1), 1);
	/* a second report changes nothing */
	amdgpu_ualink_mbox_peer_offline(tpod_mbox(pod, A), B);

	amdgpu_ualink_fault_clear(amdgpu_ualink_mbox_fault(tpod_mbox(pod, B)));
	amdgpu_ualink_mbox_peer_online(tpod_mbox(pod, A), B);
	KUNIT_EXPECT_EQ(test, call(pod, A, B, 4, req), 0);
	KUNIT_EXPECT_EQ(test, tpod_events(pod, A, AMDGPU_UALINK_PEER_OFFLINE, 0), 1);
	/* B saw a HELLO on a connection with traffic: A restarted it */
	KUNIT_EXPECT_EQ(test, tpod_events(pod, B, AMDGPU_UALINK_PEER_RESET, 1), 1);
}

/* Keepalive probes @id sent to @peer. */
static u64 probes(struct tpod *pod, u16 id, u16 peer)
{
	return tpod_stats(pod, id, peer)->probes;
}

struct acks_wait {
	struct tpod *pod;
	u16 id, peer;
	u64 n;
};

static bool acks_seen(void *arg)
{
	struct acks_wait *w = arg;

	return tpod_stats(w->pod, w->id, w->peer)->received[AMDGPU_UALINK_MSG_HELLO_ACK] >= w->n;
}

/*
 * A and B connected, A with a timeout of 5 s and a keepalive of 2 s (the
 * bounds of which it checks first); the mailbox clock not moved yet.
 */
static struct tpod *keepalive_pod(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, 2, two, NULL);
	struct amdgpu_ualink_mbox *ma = tpod_mbox(pod, A);
	struct amdgpu_ualink_req req;

	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_set_timeout(ma, 5000, 3), 0);
	/* before any connection, which nothing could probe: the bounds */
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_set_keepalive(ma, 99), -EINVAL);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_set_keepalive(ma, 100), 0);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_set_keepalive(ma, 3600 * MSEC_PER_SEC + 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_set_keepalive(ma, 0), 0);
	KUNIT_ASSERT_EQ(test, call(pod, A, B, 1, &req), 0);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_set_keepalive(ma, 2000), 0);
	return pod;
}

/* @ms more on @mbox's clock, then the keepalive work as it would run then. */
static void quiet_for(struct amdgpu_ualink_mbox *mbox, unsigned int ms)
{
	amdgpu_ualink_mbox_advance(mbox, ms);
	amdgpu_ualink_mbox_keepalive_now(mbox);
}

/*
 * Keepalive: a quiet peer is probed once the keepalive time has passed and
 * not before; a peer that answers keeps its connection on both sides, and
 * nothing of it is dropped. A peer that hangs is declared lost a timeout
 * after the probe, though nobody had a request for it. When it comes back
 * it still believes in the connection: its own probe finds it gone, and it
 * drops what it held (a reset event) before a new connection starts.
 */
static void conn_keepalive(struct kunit *test)
{
	struct tpod *pod = keepalive_pod(test);
	struct amdgpu_ualink_mbox *ma = tpod_mbox(pod, A), *mb = tpod_mbox(pod, B);
	struct acks_wait w = { .pod = pod, .id = A, .peer = B };
	struct amdgpu_ualink_req req;

	w.n = tpod_stats(pod, A, B)->received[AMDGPU_UALINK_MSG_HELLO_ACK] + 1;

	quiet_for(ma, 1500);
	KUNIT_EXPECT_EQ(test, probes(pod, A, B), 0);
	quiet_for(ma, 1000);
	KUNIT_EXPECT_EQ(test, probes(pod, A, B), 1);
	KUNIT_EXPECT_TRUE(test, tpod_wait_for(acks_seen, &w, 5000));
	/* just heard from: not probed again */
	amdgpu_ualink_mbox_keepalive_now(ma);
	KUNIT_EXPECT_EQ(test, probes(pod, A, B), 1);
	amdgpu_ualink_mbox_flush(mb);
	KUNIT_EXPECT_EQ(test, state(pod, A, B, NULL), AMDGPU_UALINK_CONN_ESTABLISHED);
	KUNIT_EXPECT_EQ(test, state(pod, B, A, NULL), AMDGPU_UALINK_CONN_ESTABLISHED);
	KUNIT_EXPECT_EQ(test, tpod_stats(pod, B, A)->received[AMDGPU_UALINK_MSG_HELLO], 2);
	KUNIT_EXPECT_EQ(test, tpod_stats(pod, B, A)->resets, 0);
	KUNIT_EXPECT_EQ(test, tpod_events(pod, A, AMDGPU_UALINK_PEER_LOST, 0), 0);
	KUNIT_EXPECT_EQ(test, tpod_events(pod, B, AMDGPU_UALINK_PEER_RESET, 0), 0);

	/* B hangs: probed once quiet, declared lost a whole timeout later */
	tpod_pause(pod, B, true);
	quiet_for(ma, 2500);
	KUNIT_EXPECT_EQ(test, probes(pod, A, B), 2);
	amdgpu_ualink_mbox_advance(ma, 4900);
	KUNIT_EXPECT_EQ(test, state(pod, A, B, NULL), AMDGPU_UALINK_CONN_ESTABLISHED);
	KUNIT_EXPECT_GE(test, tpod_stats(pod, A, B)->retransmitted[AMDGPU_UALINK_MSG_HELLO], 1);
	amdgpu_ualink_mbox_advance(ma, 100);
	KUNIT_EXPECT_EQ(test, tpod_events(pod, A, AMDGPU_UALINK_PEER_LOST, 1), 1);
	KUNIT_EXPECT_EQ(test, state(pod, A, B, NULL), AMDGPU_UALINK_CONN_NOT_READY);
	/* lost: nobody is probed any more */
	quiet_for(ma, 2500);
	KUNIT_EXPECT_EQ(test, probes(pod, A, B), 2);

	/* B is back, with A's old probe waiting for it; its own probe learns */
	tpod_pause(pod, B, false);
	amdgpu_ualink_mbox_flush(mb);
	KUNIT_EXPECT_EQ(test, state(pod, B, A, NULL), AMDGPU_UALINK_CONN_ESTABLISHED);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_set_keepalive(mb, 2000), 0);
	quiet_for(mb, 2500);
	KUNIT_EXPECT_EQ(test, probes(pod, B, A), 1);
	KUNIT_EXPECT_EQ(test, tpod_events(pod, B, AMDGPU_UALINK_PEER_RESET, 1), 1);
	KUNIT_EXPECT_GE(test, tpod_stats(pod, A, B)->dropped[AMDGPU_UALINK_DROP_UNCONNECTED], 1);
	/* and the two talk again, on a new connection */
	KUNIT_EXPECT_EQ(test, call(pod, A, B, 2, &req), 0);
	KUNIT_EXPECT_EQ(test, req.rsp.type, AMDGPU_UALINK_MSG_NPA_FAIL);
	KUNIT_EXPECT_EQ(test, state(pod, B, A, NULL), AMDGPU_UALINK_CONN_ESTABLISHED);
	KUNIT_EXPECT_EQ(test, tpod_events(pod, A, AMDGPU_UALINK_PEER_LOST, 0), 1);
}

/*
 * A probe whose answers are all lost, from a peer that goes on talking:
 * the peer is alive, so the probe ends quietly at its deadline and the
 * connection stands. The anchor is conn_keepalive, where the same probe
 * from a silent peer ends the connection.
 */
static void conn_keepalive_answer_lost(struct kunit *test)
{
	struct tpod *pod = keepalive_pod(test);
	struct amdgpu_ualink_mbox *ma = tpod_mbox(pod, A);
	struct amdgpu_ualink_req req;

	set_fault(test, pod, B, AMDGPU_UALINK_FAULT_DROP,
		  BIT(AMDGPU_UALINK_MSG_HELLO_ACK), AMDGPU_UALINK_FAULT_RATE_ONE, 0, 0);
	quiet_for(ma, 2500);
	KUNIT_EXPECT_EQ(test, probes(pod, A, B), 1);
	/* B talks: a request of its own, which A answers */
	KUNIT_EXPECT_EQ(test, call(pod, B, A, 2, &req), 0);
	amdgpu_ualink_mbox_advance(ma, 5000);
	KUNIT_EXPECT_GE(test, tpod_stats(pod, B, A)->faults[AMDGPU_UALINK_FAULT_DROP], 1);
	KUNIT_EXPECT_EQ(test, state(pod, A, B, NULL), AMDGPU_UALINK_CONN_ESTABLISHED);
	KUNIT_EXPECT_EQ(test, tpod_events(pod, A, AMDGPU_UALINK_PEER_LOST, 0), 0);
	KUNIT_EXPECT_EQ(test, tpod_stats(pod, A, B)->timeouts, 0);
	/* the probe ended: the next quiet spell sends a new one */
	quiet_for(ma, 2500);
	KUNIT_EXPECT_EQ(test, probes(pod, A, B), 2);
}

/*
 * A probe caught by a quiesce (a reset, a suspend) ends there: the silence
 * that follows is ours. Resumed after more than the timeout, with the peer
 * still silent, the node does not declare it lost for that probe. The
 * anchor is conn_keepalive, where the same unanswered probe of a node that
 * was not quiesced ends the connection.
 */
static void conn_keepalive_quiesced(struct kunit *test)
{
	struct tpod *pod = keepalive_pod(test);
	struct amdgpu_ualink_mbox *ma = tpod_mbox(pod, A);

	tpod_pause(pod, B, true);
	quiet_for(ma, 2500);
	KUNIT_EXPECT_EQ(test, probes(pod, A, B), 1);
	amdgpu_ualink_mbox_quiesce(ma);
	amdgpu_ualink_mbox_advance(ma, 6000);
	amdgpu_ualink_mbox_resume(ma);
	amdgpu_ualink_mbox_tick_now(ma);
	KUNIT_EXPECT_EQ(test, state(pod, A, B, NULL), AMDGPU_UALINK_CONN_ESTABLISHED);
	KUNIT_EXPECT_EQ(test, tpod_events(pod, A, AMDGPU_UALINK_PEER_LOST, 0), 0);
	tpod_pause(pod, B, false);
}

static bool all_acks(void *arg)
{
	struct acks_wait *w = arg;
	struct amdgpu_ualink_mbox_stats s;

	amdgpu_ualink_mbox_get_stats(tpod_mbox(w->pod, w->id), -1, &s);
	return s.received[AMDGPU_UALINK_MSG_HELLO_ACK] >= w->n;
}

/*
 * What the keepalive costs an idle node connected to every other node of
 * a 1,024-node pod: one round of probes and their answers, timed, and
 * what that makes per second at the default keepalive time. A figure,
 * not a pass mark; the test checks that every peer was probed once.
 */
static void conn_keepalive_cost(struct kunit *test)
{
	unsigned int n = tpod_full_scale ? AMDGPU_UALINK_MAX_ACCELS : 64, i;
	struct amdgpu_ualink_mbox_stats s;
	struct amdgpu_ualink_mbox *m0;
	struct acks_wait w = {};
	struct amdgpu_ualink_req *reqs;
	u64 ns, per_s;
	struct tpod *pod;
	ktime_t t0;
	u16 *ids;

	ids = kunit_kcalloc(test, n, sizeof(*ids), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ids);
	for (i = 0; i < n; i++)
		ids[i] = i;
	pod = tpod_create(test, n, ids, NULL);
	m0 = tpod_mbox(pod, 0);
	reqs = tpod_reqs(pod, n);
	for (i = 1; i < n; i++) {
		tpod_req_init(&reqs[i], 0, i, i);
		KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_submit(m0, i, &reqs[i]), 0);
	}
	for (i = 1; i < n; i++)
		KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_wait(m0, &reqs[i]), 0);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_set_keepalive(m0,
							       AMDGPU_UALINK_MBOX_KEEPALIVE_MS),
			0);
	amdgpu_ualink_mbox_get_stats(m0, -1, &s);
	w.pod = pod;
	w.n = s.received[AMDGPU_UALINK_MSG_HELLO_ACK] + n - 1;

	amdgpu_ualink_mbox_advance(m0, AMDGPU_UALINK_MBOX_KEEPALIVE_MS);
	t0 = ktime_get();
	amdgpu_ualink_mbox_keepalive_now(m0);
	KUNIT_EXPECT_TRUE(test, tpod_wait_for(all_acks, &w, 30000));
	ns = ktime_to_ns(ktime_sub(ktime_get(), t0));
	amdgpu_ualink_mbox_get_stats(m0, -1, &s);
	KUNIT_EXPECT_EQ(test, s.probes, n - 1);
	for (i = 1; i < n; i++)
		KUNIT_EXPECT_EQ(test, state(pod, 0, i, NULL), AMDGPU_UALINK_CONN_ESTABLISHED);
	/* each node of an idle pod does this once per keepalive period */
	per_s = div64_u64(ns * MSEC_PER_SEC, AMDGPU_UALINK_MBOX_KEEPALIVE_MS);
	kunit_info(test, "keepalive: %u peers probed and answered in %llu us (%llu ns a peer); every %u ms that is %llu us/s of one node, %llu probes + %llu answers/s sent per node, %llu bytes/s\n",
		   n - 1, div_u64(ns, NSEC_PER_USEC), div_u64(ns, n - 1),
		   AMDGPU_UALINK_MBOX_KEEPALIVE_MS, div_u64(per_s, NSEC_PER_USEC),
		   (u64)(n - 1) * MSEC_PER_SEC / AMDGPU_UALINK_MBOX_KEEPALIVE_MS,
		   (u64)(n - 1) * MSEC_PER_SEC / AMDGPU_UALINK_MBOX_KEEPALIVE_MS,
		   (u64)(n - 1) * 2 * AMDGPU_UALINK_MSG_SIZE * MSEC_PER_SEC /
		   AMDGPU_UALINK_MBOX_KEEPALIVE_MS);
}

/* A cancelled request's late answer is dropped as unmatched. */
static void conn_cancel(struct kunit *test)
{
	struct tpod *pod = tpod_create(test, 2, two, NULL);
	struct amdgpu_ualink_req *req = tpod_reqs(pod, 1), req2;

	KUNIT_ASSERT_EQ(test, call(pod, A, B, 1, &req2), 0);
	set_fault(test, pod, B, AMDGPU_UALINK_FAULT_DELAY,
		  BIT(AMDGPU_UALINK_MSG_NPA_FAIL), 0, 1, 200);
	tpod_req_init(req, A, B, 2);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_submit(tpod_mbox(pod, A), B, req), 0);
	amdgpu_ualink_mbox_cancel(tpod_mbox(pod, A), req);
	KUNIT_EXPECT_EQ(test, req->status, -ECANCELED);
	KUNIT_EXPECT_TRUE(test, tpod_wait_for(dup_seen, pod, 5000));
	KUNIT_EXPECT_EQ(test, state(pod, A, B, NULL), AMDGPU_UALINK_CONN_ESTABLISHED);
}

static struct kunit_case amdgpu_ualink_conn_cases[] = {
	KUNIT_CASE(conn_handshake),
	KUNIT_CASE(conn_pod_of_16),
	KUNIT_CASE(conn_submit_rejects),
	KUNIT_CASE(conn_timeout),
	KUNIT_CASE(conn_request_fails_alone),
	KUNIT_CASE_SLOW(conn_queue_waits_unsent),
	KUNIT_CASE(conn_release_lane),
	KUNIT_CASE(conn_owners_in_turn),
	KUNIT_CASE(conn_queue_bound),
	KUNIT_CASE(conn_unsent_expire),
	KUNIT_CASE(conn_fault_drop_all),
	KUNIT_CASE(conn_fault_drop_20),
	KUNIT_CASE(conn_fault_duplicate),
	KUNIT_CASE(conn_fault_corrupt),
	KUNIT_CASE(conn_fault_delay),
	KUNIT_CASE(conn_fault_reorder),
	KUNIT_CASE(conn_peer_reset_mid_request),
	KUNIT_CASE(conn_generation_mismatch),
	KUNIT_CASE(conn_unconnected_request),
	KUNIT_CASE(conn_crossed_handshake),
	KUNIT_CASE(conn_lost_hello_crossed),
	KUNIT_CASE(conn_peer_offline),
	KUNIT_CASE(conn_cancel),
	KUNIT_CASE(conn_keepalive),
	KUNIT_CASE(conn_keepalive_answer_lost),
	KUNIT_CASE(conn_keepalive_quiesced),
	KUNIT_CASE_SLOW(conn_keepalive_cost),
	{}
};

static struct kunit_suite amdgpu_ualink_conn_suite = {
	.name = "amdgpu_ualink_conn",
	.test_cases = amdgpu_ualink_conn_cases,
};

kunit_test_suite(amdgpu_ualink_conn_suite);
