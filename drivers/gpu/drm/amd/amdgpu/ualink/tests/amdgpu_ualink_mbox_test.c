// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * KUnit tests for the mailbox rings and transport (amdgpu_ualink_mbox.c)
 * on the in-memory pod: back-pressure and queued answers, one case per
 * reason an inbound entry is dropped, a burst of doorbells, a fuzz run,
 * and the figures of the in-memory transport.
 */

#include <kunit/test.h>
#include <linux/crc32.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/prandom.h>
#include <linux/random.h>
#include <linux/slab.h>

#include <drm/drm_print.h>

#include "amdgpu_ualink_test_pod.h"
#include "../amdgpu_ualink_npa.h"

MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING");

#define A	5
#define B	900
#define R	77	/* played by the test */

static u64 sum(const u64 *v, unsigned int n)
{
	u64 total = 0;

	while (n--)
		total += v[n];
	return total;
}

static void put_le32(u8 *e, unsigned int off, u32 v)
{
	e[off] = v;
	e[off + 1] = v >> 8;
	e[off + 2] = v >> 16;
	e[off + 3] = v >> 24;
}

static void recrc(u8 *e)
{
	put_le32(e, 60, ~crc32_le(~0U, e, 60));
}

static bool a_ring_full(void *arg)
{
	struct tpod *pod = arg;

	return tpod_stats(pod, A, B)->ring_full > 0;
}

/*
 * B stops reading while A has 16 requests in flight (its window) and
 * retransmits them every few milliseconds: A's ring at B fills and further
 * retransmissions wait in A's queue. Once B reads again, every request
 * completes, each handled once: the retransmissions are answered from B's
 * cache. The other 84 requests waited, unsent, for room in the window.
 */
static void mbox_backpressure(struct kunit *test)
{
	static const u16 ids[] = { A, B };
	struct tpod *pod = tpod_create(test, 2, ids, NULL);
	struct amdgpu_ualink_req *ra = tpod_reqs(pod, 100);
	struct amdgpu_ualink_mbox_stats *sa, *sb;
	unsigned int i, sent;

	tpod_node(pod, B)->grant = true;
	/* 30 s for each request; the first retransmission after 15 ms */
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_set_timeout(tpod_mbox(pod, A), 30000, 10), 0);
	tpod_req_init(&ra[0], A, B, 1000);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_call(tpod_mbox(pod, A), B, &ra[0]), 0);

	tpod_pause(pod, B, true);
	for (i = 0; i < 100; i++) {
		tpod_req_init(&ra[i], A, B, i);
		KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_submit(tpod_mbox(pod, A), B, &ra[i]), 0);
	}
	/* 16 on the wire (retransmitted or not yet), 84 not sent at all */
	for (i = 0, sent = 0; i < 100; i++)
		sent += ra[i].sent;
	KUNIT_EXPECT_EQ(test, sent, 16);
	KUNIT_EXPECT_TRUE(test, tpod_wait_for(a_ring_full, pod, 20000));
	tpod_pause(pod, B, false);

	for (i = 0; i < 100; i++)
		KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_wait(tpod_mbox(pod, A), &ra[i]), 0);
	sa = tpod_stats(pod, A, B);
	sb = tpod_stats(pod, B, A);
	kunit_info(test, "A: %llu requests written, %llu waited for ring space; B: %llu answered from cache\n",
		   sa->sent[AMDGPU_UALINK_MSG_NPA_REQ], sa->ring_full, sb->duplicate_requests);
	KUNIT_EXPECT_GT(test, sa->ring_full, 0);
	KUNIT_EXPECT_GT(test, sb->duplicate_requests, 0);
	KUNIT_EXPECT_EQ(test, tpod_handled(pod, B), 101);
	KUNIT_EXPECT_EQ(test, sa->timeouts, 0);
	KUNIT_EXPECT_EQ(test, tpod_events(pod, A, AMDGPU_UALINK_PEER_LOST, 0), 0);
}

/*
 * R asks 384 questions and never reads the answers: 63 fit in A's ring
 * after the HELLO_ACK, 256 wait in A's queue without blocking A's worker,
 * the other 65 are lost like dropped messages, and once the queue has waited
 * a timeout (made short only after the counts) R is declared lost and the
 * queue freed.
 */
static void mbox_ring_stuck(struct kunit *test)
{
	static const u16 ids[] = { A, R };
	static const enum tpod_kind kinds[] = { TPOD_MBOX, TPOD_RAW };
	struct tpod *pod = tpod_create(test, 2, ids, kinds);
	struct amdgpu_ualink_msg hello = {
		.type = AMDGPU_UALINK_MSG_HELLO, .version = AMDGPU_UALINK_PROTO_VERSION,
		.sender = R, .receiver = A, .txn = 1, .generation = 1,
	};
	struct amdgpu_ualink_mbox_stats *s;
	struct amdgpu_ualink_msg m;
	unsigned int i;
	u8 e[AMDGPU_UALINK_MSG_SIZE];

	/* no timeout while the counts are made, however slow the machine */
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_set_timeout(tpod_mbox(pod, A), 600000, 0), 0);
	tpod_send(pod, R, A, &hello);
	for (i = 0; i < 6 * AMDGPU_UALINK_RING_ENTRIES; i++) {
		m = tpod_npa_req(R, A, i);
		m.txn = 100 + i;
		KUNIT_ASSERT_EQ(test, amdgpu_ualink_msg_encode(&m, e), 0);
		tpod_inject(pod, R, A, e);
		if (i % AMDGPU_UALINK_RING_ENTRIES == AMDGPU_UALINK_RING_ENTRIES - 1) {
			tpod_publish(pod, R, A);
			KUNIT_ASSERT_TRUE(test, tpod_wait_consumed(pod, R, A));
		}
	}
	s = tpod_stats(pod, A, R);
	KUNIT_EXPECT_EQ(test, s->received[AMDGPU_UALINK_MSG_NPA_REQ], 384);
	KUNIT_EXPECT_EQ(test, s->sent[AMDGPU_UALINK_MSG_NPA_FAIL], 63);
	KUNIT_EXPECT_EQ(test, s->ring_full, 256);
	KUNIT_EXPECT_EQ(test, s->replies_lost, 65);
	KUNIT_EXPECT_EQ(test, tpod_events(pod, A, AMDGPU_UALINK_PEER_LOST, 0), 0);
	/* the queue has now waited longer than a 100 ms timeout */
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_set_timeout(tpod_mbox(pod, A), 100, 0), 0);
	KUNIT_EXPECT_EQ(test, tpod_events(pod, A, AMDGPU_UALINK_PEER_LOST, 1), 1);
	KUNIT_EXPECT_EQ(test, tpod_stats(pod, A, R)->sent[AMDGPU_UALINK_MSG_NPA_FAIL], 63);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_peers(tpod_mbox(pod, A)), 1);
}

struct reject_case {
	const char *name;
	enum amdgpu_ualink_drop drop;
};

static const struct reject_case reject_cases[] = {
	{ "crc", AMDGPU_UALINK_DROP_CRC },
	{ "version", AMDGPU_UALINK_DROP_VERSION },
	{ "type", AMDGPU_UALINK_DROP_TYPE },
	{ "reserved", AMDGPU_UALINK_DROP_RESERVED },
	{ "sender", AMDGPU_UALINK_DROP_SENDER },
	{ "receiver", AMDGPU_UALINK_DROP_RECEIVER },
	{ "handle", AMDGPU_UALINK_DROP_HANDLE },
	{ "range", AMDGPU_UALINK_DROP_RANGE },
	{ "reason", AMDGPU_UALINK_DROP_REASON },
	{ "flags", AMDGPU_UALINK_DROP_FLAGS },
	{ "unconnected", AMDGPU_UALINK_DROP_UNCONNECTED },
	{ "unmatched", AMDGPU_UALINK_DROP_UNMATCHED },
	{ "mismatch", AMDGPU_UALINK_DROP_MISMATCH },
	{ "ring", AMDGPU_UALINK_DROP_RING },
};

static_assert(ARRAY_SIZE(reject_cases) == AMDGPU_UALINK_DROP_REASONS);

static void reject_desc(const struct reject_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(reject, reject_cases, reject_desc);

/*
 * One bad entry from R, for each reason: dropped and counted for that
 * reason alone, and A stays usable.
 */
static void mbox_rejects(struct kunit *test)
{
	static const u16 ids[] = { A, R };
	static const enum tpod_kind kinds[] = { TPOD_MBOX, TPOD_RAW };
	const struct reject_case *c = test->param_value;
	struct tpod *pod = tpod_create(test, 2, ids, kinds);
	struct tpod_node *a = tpod_node(pod, A);
	struct amdgpu_ualink_msg hello = {
		.type = AMDGPU_UALINK_MSG_HELLO, .version = AMDGPU_UALINK_PROTO_VERSION,
		.sender = R, .receiver = A, .txn = 1, .generation = 1,
	};
	struct amdgpu_ualink_msg m = tpod_npa_req(R, A, 1), got;
	struct amdgpu_ualink_req *req = tpod_reqs(pod, 1);
	struct amdgpu_ualink_mbox_stats *s;
	u64 expected = 1;
	u32 next = 0;
	u8 e[AMDGPU_UALINK_MSG_SIZE];

	if (c->drop != AMDGPU_UALINK_DROP_UNCONNECTED) {
		tpod_send(pod, R, A, &hello);
		KUNIT_ASSERT_EQ(test, tpod_read(pod, A, R, &next, &got), 0);
		KUNIT_ASSERT_EQ(test, got.type, AMDGPU_UALINK_MSG_HELLO_ACK);
	}
	m.txn = 77;

	switch (c->drop) {
	case AMDGPU_UALINK_DROP_VERSION:
		m.version = 2;
		break;
	case AMDGPU_UALINK_DROP_SENDER:
		m.sender = B;
		break;
	case AMDGPU_UALINK_DROP_RECEIVER:
		m.receiver = B;
		break;
	case AMDGPU_UALINK_DROP_HANDLE:
		m.handle[0] = (1 << AMDGPU_UALINK_ACCEL_ID_BITS) | R;
		break;
	case AMDGPU_UALINK_DROP_RANGE:		/* a release of R's memory to A */
		m.type = AMDGPU_UALINK_MSG_NPA_RELEASE;
		m.npa = amdgpu_ualink_npa_build(R, AMDGPU_UALINK_NPA_RESERVE);
		m.size = SZ_4K;
		break;
	case AMDGPU_UALINK_DROP_REASON:
	case AMDGPU_UALINK_DROP_UNMATCHED:
		m.type = AMDGPU_UALINK_MSG_NPA_FAIL;
		m.flags = AMDGPU_UALINK_MSG_F_RESPONSE;
		m.handle[0] = (1 << AMDGPU_UALINK_ACCEL_ID_BITS) | R;
		m.reason = AMDGPU_UALINK_FAIL_ERROR;
		break;
	case AMDGPU_UALINK_DROP_MISMATCH:	/* A asks; R answers about another handle */
		tpod_req_init(req, A, R, 5);
		KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_submit(tpod_mbox(pod, A), R, req), 0);
		KUNIT_ASSERT_EQ(test, tpod_read(pod, A, R, &next, &got), 0);
		KUNIT_ASSERT_EQ(test, got.type, AMDGPU_UALINK_MSG_NPA_REQ);
		m = got;
		swap(m.sender, m.receiver);
		m.type = AMDGPU_UALINK_MSG_NPA_FAIL;
		m.flags = AMDGPU_UALINK_MSG_F_RESPONSE;
		m.reason = AMDGPU_UALINK_FAIL_ERROR;
		m.handle[1] ^= 1;
		break;
	default:
		break;
	}
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_msg_encode(&m, e), 0);

	switch (c->drop) {
	case AMDGPU_UALINK_DROP_CRC:
		e[20] ^= 0x10;
		break;
	case AMDGPU_UALINK_DROP_TYPE:
		put_le32(e, 0, 9 | AMDGPU_UALINK_PROTO_VERSION << 16);
		recrc(e);
		break;
	case AMDGPU_UALINK_DROP_RESERVED:
		put_le32(e, 56, 1);
		recrc(e);
		break;
	case AMDGPU_UALINK_DROP_REASON:
		put_le32(e, 12, 9);
		recrc(e);
		break;
	case AMDGPU_UALINK_DROP_FLAGS:		/* an NPA_REQ marked as response */
		e[3] = AMDGPU_UALINK_MSG_F_RESPONSE;
		recrc(e);
		break;
	default:
		break;
	}

	if (c->drop == AMDGPU_UALINK_DROP_RING) {
		/* a producer index 65 entries ahead */
		tpod_inject(pod, R, A, e);
		tpod_ring(pod, A, R)->staged += AMDGPU_UALINK_RING_ENTRIES;
		expected = AMDGPU_UALINK_RING_ENTRIES + 1;
	} else {
		tpod_inject(pod, R, A, e);
	}
	tpod_publish(pod, R, A);
	KUNIT_ASSERT_TRUE(test, tpod_wait_consumed(pod, R, A));

	s = tpod_stats(pod, A, R);
	KUNIT_EXPECT_EQ(test, s->dropped[c->drop], expected);
	KUNIT_EXPECT_EQ(test, sum(s->dropped, AMDGPU_UALINK_DROP_REASONS), expected);
	KUNIT_EXPECT_EQ(test, tpod_handled(pod, A), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->requests[AMDGPU_UALINK_MSG_NPA_RELEASE]), 0);
	if (c->drop == AMDGPU_UALINK_DROP_MISMATCH)
		amdgpu_ualink_mbox_cancel(tpod_mbox(pod, A), req);

	/* still answering */
	if (c->drop != AMDGPU_UALINK_DROP_UNCONNECTED) {
		m = tpod_npa_req(R, A, 2);
		m.txn = 78;
		tpod_send(pod, R, A, &m);
		do {
			KUNIT_ASSERT_EQ(test, tpod_read(pod, A, R, &next, &got), 0);
		} while (got.type != AMDGPU_UALINK_MSG_NPA_FAIL);
		KUNIT_EXPECT_EQ(test, got.txn, 78);
	}
}

/*
 * A producer index that goes backwards (a sender starting over, or one
 * writing garbage into its ring's index) is one ring drop, not the 2^32
 * entries its distance says; the receiver goes on from there.
 */
static void mbox_ring_backwards(struct kunit *test)
{
	static const u16 ids[] = { A, R };
	static const enum tpod_kind kinds[] = { TPOD_MBOX, TPOD_RAW };
	struct tpod *pod = tpod_create(test, 2, ids, kinds);
	struct amdgpu_ualink_msg hello = {
		.type = AMDGPU_UALINK_MSG_HELLO, .version = AMDGPU_UALINK_PROTO_VERSION,
		.sender = R, .receiver = A, .txn = 1, .generation = 1,
	};
	struct amdgpu_ualink_msg m = tpod_npa_req(R, A, 2), got;
	struct amdgpu_ualink_mbox_stats *s;
	u32 next = 0;

	tpod_send(pod, R, A, &hello);
	KUNIT_ASSERT_EQ(test, tpod_read(pod, A, R, &next, &got), 0);
	KUNIT_ASSERT_EQ(test, got.type, AMDGPU_UALINK_MSG_HELLO_ACK);

	tpod_ring(pod, A, R)->staged -= 3;
	tpod_publish(pod, R, A);
	KUNIT_ASSERT_TRUE(test, tpod_wait_consumed(pod, R, A));
	s = tpod_stats(pod, A, R);
	KUNIT_EXPECT_EQ(test, s->dropped[AMDGPU_UALINK_DROP_RING], 1);
	KUNIT_EXPECT_EQ(test, sum(s->dropped, AMDGPU_UALINK_DROP_REASONS), 1);

	/* still answering, from the index the sender went back to */
	m.txn = 78;
	tpod_send(pod, R, A, &m);
	do {
		KUNIT_ASSERT_EQ(test, tpod_read(pod, A, R, &next, &got), 0);
	} while (got.type != AMDGPU_UALINK_MSG_NPA_FAIL);
	KUNIT_EXPECT_EQ(test, got.txn, 78);
	KUNIT_EXPECT_EQ(test, s->dropped[AMDGPU_UALINK_DROP_RING], 1);
}

/*
 * A burst of doorbells for one entry: it is handled once; doorbells that
 * name no possible peer, or the node itself, are ignored.
 */
static void mbox_doorbell_burst(struct kunit *test)
{
	static const u16 ids[] = { A, R };
	static const enum tpod_kind kinds[] = { TPOD_MBOX, TPOD_RAW };
	struct tpod *pod = tpod_create(test, 2, ids, kinds);
	struct amdgpu_ualink_msg hello = {
		.type = AMDGPU_UALINK_MSG_HELLO, .version = AMDGPU_UALINK_PROTO_VERSION,
		.sender = R, .receiver = A, .txn = 1, .generation = 1,
	};
	unsigned int i;
	u8 e[AMDGPU_UALINK_MSG_SIZE];

	tpod_send(pod, R, A, &hello);
	hello.txn = 2;
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_msg_encode(&hello, e), 0);
	tpod_inject(pod, R, A, e);
	/* published without a doorbell: the burst below rings it */
	smp_store_release(&tpod_ring(pod, A, R)->head, tpod_ring(pod, A, R)->staged);
	for (i = 0; i < 1000; i++)
		amdgpu_ualink_mbox_doorbell(tpod_mbox(pod, A), R);
	KUNIT_EXPECT_TRUE(test, tpod_wait_consumed(pod, R, A));
	KUNIT_EXPECT_EQ(test, tpod_stats(pod, A, R)->received[AMDGPU_UALINK_MSG_HELLO], 2);
	/* doorbells of nodes that do not exist, or of ourselves, are ignored */
	amdgpu_ualink_mbox_doorbell(tpod_mbox(pod, A), 1024);
	amdgpu_ualink_mbox_doorbell(tpod_mbox(pod, A), A);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_peers(tpod_mbox(pod, A)), 1);
}

/* A message for the fuzzer: random bytes, or a mutated real message. */
static void fuzz_entry(struct rnd_state *rnd, u8 *e)
{
	u32 pick = prandom_u32_state(rnd);
	struct amdgpu_ualink_msg m = {
		.type = 1 + pick % 7,
		.version = AMDGPU_UALINK_PROTO_VERSION,
		.sender = pick & BIT(8) ? R : prandom_u32_state(rnd) % 1024,
		.receiver = pick & BIT(9) ? A : prandom_u32_state(rnd) % 1024,
		.txn = prandom_u32_state(rnd) % 64,
	};
	unsigned int i;

	if (pick % 4 == 0) {
		prandom_bytes_state(rnd, e, AMDGPU_UALINK_MSG_SIZE);
		return;
	}
	switch (m.type) {
	case AMDGPU_UALINK_MSG_HELLO:
	case AMDGPU_UALINK_MSG_HELLO_ACK:
		m.generation = prandom_u32_state(rnd) % 4;
		break;
	case AMDGPU_UALINK_MSG_NPA_FAIL:
		m.reason = 1 + prandom_u32_state(rnd) % 4;
		fallthrough;
	default:
		m.handle[0] = (u64)prandom_u32_state(rnd) << 10 |
			      (pick & BIT(10) ? A : R);
		m.handle[1] = prandom_u32_state(rnd) % 4;
		if (m.type >= AMDGPU_UALINK_MSG_NPA_RSP && m.type != AMDGPU_UALINK_MSG_NPA_FAIL) {
			m.npa = amdgpu_ualink_npa_build(pick & BIT(11) ? A : R,
							AMDGPU_UALINK_NPA_RESERVE +
							(prandom_u32_state(rnd) % 1024) * SZ_4K);
			m.size = (1 + prandom_u32_state(rnd) % 16) * SZ_4K;
		}
		break;
	}
	if (m.type == AMDGPU_UALINK_MSG_HELLO_ACK || m.type == AMDGPU_UALINK_MSG_NPA_RSP ||
	    m.type == AMDGPU_UALINK_MSG_NPA_FAIL || (pick & BIT(12) &&
	    m.type >= AMDGPU_UALINK_MSG_NPA_REVOKE))
		m.flags = AMDGPU_UALINK_MSG_F_RESPONSE;
	if (amdgpu_ualink_msg_encode(&m, e))
		prandom_bytes_state(rnd, e, AMDGPU_UALINK_MSG_SIZE);
	/* mutate half of them, and fix the CRC of most of those */
	if (pick & BIT(13)) {
		for (i = 0; i <= pick % 3; i++)
			e[prandom_u32_state(rnd) % 60] ^= BIT(prandom_u32_state(rnd) % 8);
		if (pick & (BIT(14) | BIT(15)))
			recrc(e);
	}
}

/*
 * Publish a producer index that no sender could have written: more than a
 * ring ahead of what A consumed (or, modulo 2^32, behind it). A drops what
 * it claims to hold without reading it. Returns the ring drops A counts
 * for it: the entries an index ahead claims, one for an index behind.
 */
static u32 fuzz_head(struct tpod *pod, struct rnd_state *rnd)
{
	struct tpod_ring *ring = tpod_ring(pod, A, R);
	u32 jump = AMDGPU_UALINK_RING_ENTRIES + 1 +
		   prandom_u32_state(rnd) % (U32_MAX - AMDGPU_UALINK_RING_ENTRIES);

	ring->staged = READ_ONCE(ring->tail) + jump;
	tpod_publish(pod, R, A);
	return (s32)jump > 0 ? jump : 1;
}

/*
 * Random and mutated messages from R to A, with now and then a producer
 * index out of range: nothing crashes or hangs, every message is counted
 * once as received or as dropped for one reason, every claimed entry of a
 * bad index as a ring drop, and A still answers B's request afterwards.
 * Two seeds: a fixed one and a fresh one each run, both printed (rerun one
 * by putting it in @seeds).
 */
static void mbox_fuzz(struct kunit *test)
{
	static const u16 ids[] = { A, R, B };
	static const enum tpod_kind kinds[] = { TPOD_MBOX, TPOD_SINK, TPOD_MBOX };
	const u64 n = IS_ENABLED(CONFIG_UML) ? 500000 : 50000;
	struct tpod *pod = tpod_create(test, 3, ids, kinds);
	u32 seeds[2] = { 0x5eed, get_random_u32() };
	struct amdgpu_ualink_mbox_stats *s;
	u64 fed = 0, received, dropped, claimed = 0, batches = 0;
	struct amdgpu_ualink_req *req = tpod_reqs(pod, 1);
	u8 e[AMDGPU_UALINK_MSG_SIZE];
	ktime_t t0 = ktime_get();
	struct rnd_state rnd;
	unsigned int i, k;

	for (k = 0; k < ARRAY_SIZE(seeds); k++) {
		u64 end = fed + n;

		kunit_info(test, "seed %#x\n", seeds[k]);
		prandom_seed_state(&rnd, seeds[k]);
		while (fed < end) {
			if (++batches % 16 == 0) {
				claimed += fuzz_head(pod, &rnd);
				KUNIT_ASSERT_TRUE_MSG(test, tpod_wait_consumed(pod, R, A),
						      "stuck on a bad index, seed %#x", seeds[k]);
			}
			for (i = 0; i < AMDGPU_UALINK_RING_ENTRIES && fed < end; i++, fed++) {
				fuzz_entry(&rnd, e);
				tpod_inject(pod, R, A, e);
			}
			tpod_publish(pod, R, A);
			KUNIT_ASSERT_TRUE_MSG(test, tpod_wait_consumed(pod, R, A),
					      "stuck after %llu messages, seed %#x", fed,
					      seeds[k]);
		}
	}
	s = tpod_stats(pod, A, R);
	received = sum(s->received, AMDGPU_UALINK_MSG_TYPES);
	dropped = sum(s->dropped, AMDGPU_UALINK_DROP_REASONS);
	kunit_info(test, "%llu messages and %llu bad indices in %lld ms: %llu received, %llu dropped (crc %llu, unmatched %llu), %llu connection resets\n",
		   fed, batches / 16, ktime_ms_delta(ktime_get(), t0), received,
		   dropped, s->dropped[AMDGPU_UALINK_DROP_CRC],
		   s->dropped[AMDGPU_UALINK_DROP_UNMATCHED], s->resets);
	KUNIT_EXPECT_EQ(test, received + dropped, fed + claimed);
	KUNIT_EXPECT_EQ(test, s->dropped[AMDGPU_UALINK_DROP_RING], claimed);
	KUNIT_EXPECT_GT(test, received, 0);
	/*
	 * The mutations reach every check of the message itself, and the
	 * matching of responses. (Outside a connection and mismatched
	 * responses need requests of A's own: their cases are above.)
	 */
	for (i = 0; i <= AMDGPU_UALINK_DROP_FLAGS; i++)
		KUNIT_EXPECT_GT_MSG(test, s->dropped[i], 0, "reason %s",
				    amdgpu_ualink_drop_name(i));
	KUNIT_EXPECT_GT(test, s->dropped[AMDGPU_UALINK_DROP_UNMATCHED], 0);

	/* A still works: B's request is answered */
	tpod_req_init(req, B, A, 1);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_call(tpod_mbox(pod, B), A, req), 0);
	KUNIT_EXPECT_EQ(test, req->rsp.type, AMDGPU_UALINK_MSG_NPA_FAIL);
}

/* What debugfs will print: peers, their state and their counters. */
static void mbox_print(struct kunit *test)
{
	static const u16 ids[] = { A, B };
	struct tpod *pod = tpod_create(test, 2, ids, NULL);
	struct tpod_text t = { .buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL) };
	struct drm_printer p = { .printfn = tpod_text_printfn, .arg = &t };
	struct amdgpu_ualink_req req;

	KUNIT_ASSERT_NOT_NULL(test, t.buf);
	tpod_req_init(&req, A, B, 1);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_call(tpod_mbox(pod, A), B, &req), 0);
	amdgpu_ualink_mbox_print(tpod_mbox(pod, A), &p);
	kunit_info(test, "%s", t.buf);
	KUNIT_EXPECT_NOT_NULL(test, strstr(t.buf, "node 5 generation "));
	KUNIT_EXPECT_NOT_NULL(test, strstr(t.buf, "peer 900: established"));
	KUNIT_EXPECT_NOT_NULL(test, strstr(t.buf, "npa_req     sent 1 received 0"));
	KUNIT_EXPECT_NOT_NULL(test, strstr(t.buf, "npa_fail    sent 0 received 1"));
	KUNIT_EXPECT_NOT_NULL(test, strstr(t.buf, "timeouts 0 resets 0"));
}

/* --- figures: printed, never asserted --- */

/* Requests per second with up to @depth in flight, A to B. */
static u64 rate(struct kunit *test, struct tpod *pod, struct amdgpu_ualink_req *reqs,
		unsigned int n, unsigned int depth)
{
	ktime_t t0 = ktime_get();
	unsigned int i;
	s64 ns;

	for (i = 0; i < n; i++) {
		struct amdgpu_ualink_req *req = &reqs[i % depth];

		/* the slot's previous request, depth requests ago */
		if (i >= depth)
			KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_wait(tpod_mbox(pod, A), req), 0);
		tpod_req_init(req, A, B, i);
		KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_submit(tpod_mbox(pod, A), B, req), 0);
	}
	for (i = n - min(n, depth); i < n; i++) {
		struct amdgpu_ualink_req *req = &reqs[i % depth];

		KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_wait(tpod_mbox(pod, A), req), 0);
	}
	ns = ktime_to_ns(ktime_sub(ktime_get(), t0));
	return div64_u64((u64)n * NSEC_PER_SEC, max_t(s64, ns, 1));
}

static void mbox_benchmark(struct kunit *test)
{
	static const u16 ids[] = { A, B };
	struct tpod *pod = tpod_create(test, 2, ids, NULL);
	unsigned int rounds = tpod_full_scale ? 5000 : 500;
	struct amdgpu_ualink_req *reqs;
	u64 one, many;

	reqs = tpod_reqs(pod, 32);
	tpod_node(pod, B)->grant = true;
	rate(test, pod, reqs, 100, 1);			/* connect, warm up */
	one = rate(test, pod, reqs, rounds, 1);
	many = rate(test, pod, reqs, 10 * rounds, 32);
	kunit_info(test, "round trip (NPA_REQ/NPA_RSP, one at a time): %llu/s = %llu ns\n",
		   one, div64_u64(NSEC_PER_SEC, max(one, 1ULL)));
	kunit_info(test, "32 in flight: %llu requests/s = %llu messages/s\n",
		   many, 2 * many);
	kunit_info(test, "memory: a peer that never talked %zu bytes, a connected peer %zu bytes (%zu with the answers to its requests), a node %zu bytes\n",
		   amdgpu_ualink_mbox_peer_bytes(tpod_mbox(pod, A), 1),
		   amdgpu_ualink_mbox_peer_bytes(tpod_mbox(pod, A), B),
		   amdgpu_ualink_mbox_peer_bytes(tpod_mbox(pod, B), A),
		   ksize(tpod_mbox(pod, A)));
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_peer_bytes(tpod_mbox(pod, A), 1), 0);
}

/*
 * A quiesced node (a device suspending, or being reset) makes no call into
 * its transport, and nothing waits on it for as long as it stays quiesced,
 * which may be for good (a failed reset, a device going away): a request
 * in flight when it quiesces fails with -ENETDOWN (its timeout is an
 * hour: the timer did it, not a deadline), and one
 * submitted while quiesced is refused with -ENETDOWN. Its peer's request
 * waits in the ring, doorbell rung. Resumed, that one is answered and new
 * requests complete.
 */
static void mbox_quiesce(struct kunit *test)
{
	static const u16 ids[] = { A, B };
	struct tpod *pod = tpod_create(test, 2, ids, NULL);
	struct amdgpu_ualink_req *r = tpod_reqs(pod, 5);
	struct amdgpu_ualink_mbox *ma = tpod_mbox(pod, A);
	int calls;

	tpod_node(pod, A)->grant = true;
	tpod_node(pod, B)->grant = true;
	tpod_req_init(&r[0], A, B, 1);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_call(ma, B, &r[0]), 0);

	/* in flight: B holds its answer back */
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_set_timeout(ma, 3600 * MSEC_PER_SEC, 0), 0);
	tpod_pause(pod, B, true);
	tpod_req_init(&r[1], A, B, 2);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_submit(ma, B, &r[1]), 0);
	KUNIT_EXPECT_FALSE(test, completion_done(&r[1].done));

	amdgpu_ualink_mbox_quiesce(ma);
	KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&r[1].done, 10 * HZ));
	KUNIT_EXPECT_EQ(test, r[1].status, -ENETDOWN);
	calls = atomic_read(&tpod_node(pod, A)->hw_calls);
	tpod_req_init(&r[3], A, B, 4);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_submit(ma, B, &r[3]), -ENETDOWN);
	tpod_pause(pod, B, false);
	tpod_req_init(&r[2], B, A, 3);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_submit(tpod_mbox(pod, B), A, &r[2]), 0);
	/*
	 * A's worker ran for the doorbell, and its timer work ran (made to,
	 * not waited for): neither called the transport.
	 */
	amdgpu_ualink_mbox_flush(ma);
	amdgpu_ualink_mbox_tick_now(ma);
	KUNIT_EXPECT_EQ(test, atomic_read(&tpod_node(pod, A)->hw_calls), calls);
	KUNIT_EXPECT_EQ(test, tpod_handled(pod, A), 0);

	amdgpu_ualink_mbox_resume(ma);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_wait(tpod_mbox(pod, B), &r[2]), 0);
	KUNIT_EXPECT_EQ(test, tpod_handled(pod, A), 1);
	KUNIT_EXPECT_GT(test, atomic_read(&tpod_node(pod, A)->hw_calls), calls);
	/* the same submission as the refused one, resumed */
	tpod_req_init(&r[4], A, B, 5);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_mbox_call(ma, B, &r[4]), 0);
	KUNIT_EXPECT_EQ(test, r[4].rsp.type, AMDGPU_UALINK_MSG_NPA_RSP);
}

static struct kunit_case amdgpu_ualink_mbox_cases[] = {
	KUNIT_CASE(mbox_backpressure),
	KUNIT_CASE(mbox_ring_stuck),
	KUNIT_CASE_PARAM(mbox_rejects, reject_gen_params),
	KUNIT_CASE(mbox_ring_backwards),
	KUNIT_CASE(mbox_doorbell_burst),
	KUNIT_CASE(mbox_quiesce),
	KUNIT_CASE_SLOW(mbox_fuzz),
	KUNIT_CASE(mbox_print),
	KUNIT_CASE_SLOW(mbox_benchmark),
	{}
};

static struct kunit_suite amdgpu_ualink_mbox_suite = {
	.name = "amdgpu_ualink_mbox",
	.test_cases = amdgpu_ualink_mbox_cases,
};

kunit_test_suite(amdgpu_ualink_mbox_suite);
