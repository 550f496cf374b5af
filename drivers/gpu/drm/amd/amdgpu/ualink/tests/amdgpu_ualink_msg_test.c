// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * KUnit tests for the mailbox wire format (amdgpu_ualink_msg.c).
 *
 * The golden test spells a message out byte by byte from the documented
 * layout, so that encode and decode cannot agree on a wrong layout.
 */

#include <kunit/test.h>
#include <linux/crc32.h>
#include <linux/random.h>

#include "../amdgpu_ualink_msg.h"
#include "../amdgpu_ualink_npa.h"

#define RESERVE		(8ULL << 20)

/* A valid message of each type from 5 to 9 about a handle exported by 9. */
static struct amdgpu_ualink_msg sample(u16 type)
{
	struct amdgpu_ualink_msg m = {
		.type = type, .version = AMDGPU_UALINK_PROTO_VERSION,
		.sender = 5, .receiver = 9, .txn = 0x1234,
	};

	switch (type) {
	case AMDGPU_UALINK_MSG_HELLO:
	case AMDGPU_UALINK_MSG_HELLO_ACK:
		m.generation = 0x0102030405060708ULL;
		break;
	case AMDGPU_UALINK_MSG_NPA_FAIL:
		m.reason = AMDGPU_UALINK_FAIL_INVALID_HANDLE;
		fallthrough;
	case AMDGPU_UALINK_MSG_NPA_REQ:
		m.handle[0] = 0xabcdef0000000000ULL | 9;
		m.handle[1] = 0x1122334455667788ULL;
		break;
	default:	/* NPA_RSP, NPA_REVOKE, NPA_RELEASE */
		m.handle[0] = 0xabcdef0000000000ULL | 9;
		m.handle[1] = 0x1122334455667788ULL;
		m.npa = (9ULL << 41) + RESERVE + SZ_2M;
		m.size = SZ_4M;
		break;
	}
	if (type == AMDGPU_UALINK_MSG_HELLO_ACK || type == AMDGPU_UALINK_MSG_NPA_RSP ||
	    type == AMDGPU_UALINK_MSG_NPA_FAIL)
		m.flags = AMDGPU_UALINK_MSG_F_RESPONSE;
	/* grants and revocations come from the exporter, 9 */
	if (type == AMDGPU_UALINK_MSG_NPA_RSP || type == AMDGPU_UALINK_MSG_NPA_FAIL ||
	    type == AMDGPU_UALINK_MSG_NPA_REVOKE)
		swap(m.sender, m.receiver);
	return m;
}

/* Field by field: the struct has padding, which memcmp would compare. */
static void expect_msg_eq(struct kunit *test, const struct amdgpu_ualink_msg *a,
			  const struct amdgpu_ualink_msg *b)
{
	KUNIT_EXPECT_EQ(test, a->type, b->type);
	KUNIT_EXPECT_EQ(test, a->version, b->version);
	KUNIT_EXPECT_EQ(test, a->sender, b->sender);
	KUNIT_EXPECT_EQ(test, a->receiver, b->receiver);
	KUNIT_EXPECT_EQ(test, a->txn, b->txn);
	KUNIT_EXPECT_EQ(test, a->reason, b->reason);
	KUNIT_EXPECT_EQ(test, a->handle[0], b->handle[0]);
	KUNIT_EXPECT_EQ(test, a->handle[1], b->handle[1]);
	KUNIT_EXPECT_EQ(test, a->npa, b->npa);
	KUNIT_EXPECT_EQ(test, a->size, b->size);
	KUNIT_EXPECT_EQ(test, a->generation, b->generation);
}

static void put_le(u8 *b, unsigned int off, u64 v, unsigned int bytes)
{
	unsigned int i;

	for (i = 0; i < bytes; i++)
		b[off + i] = v >> (8 * i);
}

static void recrc(u8 *b)
{
	put_le(b, 60, ~crc32_le(~0U, b, 60), 4);
}

static void msg_golden_layout(struct kunit *test)
{
	struct amdgpu_ualink_msg m = sample(AMDGPU_UALINK_MSG_NPA_RSP), back;
	enum amdgpu_ualink_drop drop;
	u8 want[64] = {}, got[64];

	put_le(want, 0, 4 | 1 << 16 | 1 << 24, 4);	/* NPA_RSP, v1, response */
	put_le(want, 4, 9 | 5 << 16, 4);		/* 9 to 5 */
	put_le(want, 8, 0x1234, 4);
	put_le(want, 16, 0xabcdef0000000009ULL, 8);
	put_le(want, 24, 0x1122334455667788ULL, 8);
	put_le(want, 32, (9ULL << 41) + RESERVE + SZ_2M, 8);
	put_le(want, 40, SZ_4M, 8);
	recrc(want);

	KUNIT_ASSERT_EQ(test, amdgpu_ualink_msg_encode(&m, got), 0);
	KUNIT_EXPECT_MEMEQ(test, got, want, sizeof(want));
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_msg_decode(want, &back, &drop), 0);
	expect_msg_eq(test, &back, &m);
}

static void msg_round_trip_every_type(struct kunit *test)
{
	enum amdgpu_ualink_drop drop;
	unsigned int i;
	u16 type;

	for (type = AMDGPU_UALINK_MSG_HELLO; type <= AMDGPU_UALINK_MSG_NPA_RELEASE; type++) {
		for (i = 0; i < 100; i++) {
			struct amdgpu_ualink_msg m = sample(type), back;
			u8 buf[64 + 1];

			m.sender = get_random_u32_below(1024);
			m.receiver = get_random_u32_below(1024);
			m.txn = get_random_u32();
			if (m.generation)
				m.generation = get_random_u64();
			if (m.handle[1])
				m.handle[1] = get_random_u64();
			/* unaligned buffers are fine */
			KUNIT_ASSERT_EQ(test, amdgpu_ualink_msg_encode(&m, buf + 1), 0);
			KUNIT_ASSERT_EQ(test, amdgpu_ualink_msg_decode(buf + 1, &back, &drop), 0);
			expect_msg_eq(test, &back, &m);
		}
	}
}

static void msg_encode_rejects(struct kunit *test)
{
	struct amdgpu_ualink_msg m;
	u8 buf[64];

	m = sample(AMDGPU_UALINK_MSG_NPA_REQ);
	m.type = 0;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_msg_encode(&m, buf), -EINVAL);
	m.type = 8;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_msg_encode(&m, buf), -EINVAL);
	m = sample(AMDGPU_UALINK_MSG_NPA_REQ);
	m.sender = 1024;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_msg_encode(&m, buf), -EINVAL);
	m = sample(AMDGPU_UALINK_MSG_NPA_REQ);
	m.receiver = 1024;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_msg_encode(&m, buf), -EINVAL);
	/* a field the type does not use */
	m = sample(AMDGPU_UALINK_MSG_NPA_REQ);
	m.npa = SZ_4K;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_msg_encode(&m, buf), -EINVAL);
	m = sample(AMDGPU_UALINK_MSG_HELLO);
	m.handle[1] = 1;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_msg_encode(&m, buf), -EINVAL);
	/* flags: unknown, or the response flag where the type forbids it */
	m = sample(AMDGPU_UALINK_MSG_NPA_REVOKE);
	m.flags = 2;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_msg_encode(&m, buf), -EINVAL);
	m = sample(AMDGPU_UALINK_MSG_NPA_REQ);
	m.flags = AMDGPU_UALINK_MSG_F_RESPONSE;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_msg_encode(&m, buf), -EINVAL);
	m = sample(AMDGPU_UALINK_MSG_HELLO_ACK);
	m.flags = 0;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_msg_encode(&m, buf), -EINVAL);
	/* REVOKE and RELEASE may be either */
	m = sample(AMDGPU_UALINK_MSG_NPA_RELEASE);
	m.flags = AMDGPU_UALINK_MSG_F_RESPONSE;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_msg_encode(&m, buf), 0);
	KUNIT_EXPECT_TRUE(test, amdgpu_ualink_msg_is_response(&m));
	/* "release later": on an NPA_RELEASE answer, and nowhere else */
	m.flags = AMDGPU_UALINK_MSG_F_RESPONSE | AMDGPU_UALINK_MSG_F_LATER;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_msg_encode(&m, buf), 0);
	m.flags = AMDGPU_UALINK_MSG_F_LATER;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_msg_encode(&m, buf), -EINVAL);
	m.flags = AMDGPU_UALINK_MSG_F_RESPONSE | 4;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_msg_encode(&m, buf), -EINVAL);
	m = sample(AMDGPU_UALINK_MSG_NPA_RSP);
	m.flags = AMDGPU_UALINK_MSG_F_RESPONSE | AMDGPU_UALINK_MSG_F_LATER;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_msg_encode(&m, buf), -EINVAL);
	m = sample(AMDGPU_UALINK_MSG_NPA_REVOKE);
	m.flags = AMDGPU_UALINK_MSG_F_RESPONSE | AMDGPU_UALINK_MSG_F_LATER;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_msg_encode(&m, buf), -EINVAL);
	/* the keepalive probe: on a HELLO, and nowhere else */
	m = sample(AMDGPU_UALINK_MSG_HELLO);
	m.flags = AMDGPU_UALINK_MSG_F_PROBE;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_msg_encode(&m, buf), 0);
	m = sample(AMDGPU_UALINK_MSG_HELLO_ACK);
	m.flags = AMDGPU_UALINK_MSG_F_RESPONSE | AMDGPU_UALINK_MSG_F_PROBE;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_msg_encode(&m, buf), -EINVAL);
	m = sample(AMDGPU_UALINK_MSG_NPA_REQ);
	m.flags = AMDGPU_UALINK_MSG_F_PROBE;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_msg_encode(&m, buf), -EINVAL);
	m = sample(AMDGPU_UALINK_MSG_NPA_REVOKE);
	m.flags = AMDGPU_UALINK_MSG_F_PROBE;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_msg_encode(&m, buf), -EINVAL);
}

/* CRC-32 catches every single-bit error, in every bit of the entry. */
static void msg_every_bit_flip_is_caught(struct kunit *test)
{
	struct amdgpu_ualink_msg m = sample(AMDGPU_UALINK_MSG_NPA_RSP), back;
	enum amdgpu_ualink_drop drop;
	unsigned int bit, caught = 0;
	u8 buf[64];

	KUNIT_ASSERT_EQ(test, amdgpu_ualink_msg_encode(&m, buf), 0);
	for (bit = 0; bit < 64 * 8; bit++) {
		buf[bit / 8] ^= BIT(bit % 8);
		if (amdgpu_ualink_msg_decode(buf, &back, &drop) == -EBADMSG &&
		    drop == AMDGPU_UALINK_DROP_CRC)
			caught++;
		buf[bit / 8] ^= BIT(bit % 8);
	}
	KUNIT_EXPECT_EQ(test, caught, 64 * 8);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_msg_decode(buf, &back, &drop), 0);
}

/* Well-formed CRC, wrong content: each is dropped for its own reason. */
static void msg_decode_rejects(struct kunit *test)
{
	static const struct {
		const char *what;
		unsigned int off, bytes;
		u64 value;
		enum amdgpu_ualink_drop drop;
	} cases[] = {
		{ "version 2", 0, 4, 4 | 2 << 16 | 1 << 24, AMDGPU_UALINK_DROP_VERSION },
		{ "version 0", 0, 4, 4 | 1 << 24, AMDGPU_UALINK_DROP_VERSION },
		{ "type 0", 0, 4, 1 << 16 | 1 << 24, AMDGPU_UALINK_DROP_TYPE },
		{ "type 8", 0, 4, 8 | 1 << 16 | 1 << 24, AMDGPU_UALINK_DROP_TYPE },
		{ "type 1023", 0, 4, 1023 | 1 << 16 | 1 << 24, AMDGPU_UALINK_DROP_TYPE },
		{ "type bit 10", 0, 4, 4 | BIT(10) | 1 << 16 | 1 << 24,
		  AMDGPU_UALINK_DROP_RESERVED },
		{ "type bit 15", 0, 4, 4 | BIT(15) | 1 << 16 | 1 << 24,
		  AMDGPU_UALINK_DROP_RESERVED },
		{ "unknown flag", 0, 4, 4 | 1 << 16 | 3 << 24, AMDGPU_UALINK_DROP_FLAGS },
		{ "response without flag", 0, 4, 4 | 1 << 16, AMDGPU_UALINK_DROP_FLAGS },
		{ "sender bit 10", 4, 4, 9 | BIT(10) | 5 << 16, AMDGPU_UALINK_DROP_RESERVED },
		{ "receiver bit 26", 4, 4, 9 | 5 << 16 | BIT(26), AMDGPU_UALINK_DROP_RESERVED },
		{ "reserved dword", 56, 4, 1, AMDGPU_UALINK_DROP_RESERVED },
		{ "reason on NPA_RSP", 12, 4, 1, AMDGPU_UALINK_DROP_RESERVED },
		{ "generation on NPA_RSP", 48, 8, 1, AMDGPU_UALINK_DROP_RESERVED },
	};
	struct amdgpu_ualink_msg m = sample(AMDGPU_UALINK_MSG_NPA_RSP), back;
	enum amdgpu_ualink_drop drop;
	unsigned int i;
	u8 buf[64];

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		KUNIT_ASSERT_EQ(test, amdgpu_ualink_msg_encode(&m, buf), 0);
		put_le(buf, cases[i].off, cases[i].value, cases[i].bytes);
		recrc(buf);
		drop = AMDGPU_UALINK_DROP_REASONS;
		KUNIT_EXPECT_EQ_MSG(test, amdgpu_ualink_msg_decode(buf, &back, &drop),
				    -EBADMSG, "%s", cases[i].what);
		KUNIT_EXPECT_EQ_MSG(test, drop, cases[i].drop, "%s", cases[i].what);
	}

	/* NPA_FAIL reasons outside 1..4; a range on NPA_FAIL */
	m = sample(AMDGPU_UALINK_MSG_NPA_FAIL);
	for (i = 0; i < 3; i++) {
		static const u32 bad[] = { 0, 5, U32_MAX };

		KUNIT_ASSERT_EQ(test, amdgpu_ualink_msg_encode(&m, buf), 0);
		put_le(buf, 12, bad[i], 4);
		recrc(buf);
		KUNIT_EXPECT_EQ(test, amdgpu_ualink_msg_decode(buf, &back, &drop), -EBADMSG);
		KUNIT_EXPECT_EQ(test, drop, AMDGPU_UALINK_DROP_REASON);
	}
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_msg_encode(&m, buf), 0);
	put_le(buf, 40, SZ_4K, 8);
	recrc(buf);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_msg_decode(buf, &back, &drop), -EBADMSG);
	KUNIT_EXPECT_EQ(test, drop, AMDGPU_UALINK_DROP_RESERVED);
}

static int check(struct amdgpu_ualink_msg m, u16 owner, u16 self,
		 enum amdgpu_ualink_drop *drop)
{
	return amdgpu_ualink_msg_validate(&m, owner, self, drop);
}

static void msg_validate_against_ring(struct kunit *test)
{
	struct amdgpu_ualink_msg m;
	enum amdgpu_ualink_drop drop;
	u16 type;

	for (type = AMDGPU_UALINK_MSG_HELLO; type <= AMDGPU_UALINK_MSG_NPA_RELEASE; type++) {
		m = sample(type);
		KUNIT_EXPECT_EQ(test, check(m, m.sender, m.receiver, &drop), 0);
		/* arrived in another sender's ring: a spoofed sender */
		KUNIT_EXPECT_EQ(test, check(m, m.sender ^ 1, m.receiver, &drop), -EBADMSG);
		KUNIT_EXPECT_EQ(test, drop, AMDGPU_UALINK_DROP_SENDER);
		KUNIT_EXPECT_EQ(test, check(m, m.sender, m.receiver ^ 1, &drop), -EBADMSG);
		KUNIT_EXPECT_EQ(test, drop, AMDGPU_UALINK_DROP_RECEIVER);
	}

	/* handles: never zero, and naming the exporter */
	m = sample(AMDGPU_UALINK_MSG_NPA_REQ);		/* 5 asks 9 */
	m.handle[0] = 0;
	m.handle[1] = 0;
	KUNIT_EXPECT_EQ(test, check(m, 5, 9, &drop), -EBADMSG);
	KUNIT_EXPECT_EQ(test, drop, AMDGPU_UALINK_DROP_HANDLE);
	m = sample(AMDGPU_UALINK_MSG_NPA_REQ);
	m.handle[0] = (m.handle[0] & ~0x3ffULL) | 5;	/* 5's own handle */
	KUNIT_EXPECT_EQ(test, check(m, 5, 9, &drop), -EBADMSG);
	KUNIT_EXPECT_EQ(test, drop, AMDGPU_UALINK_DROP_HANDLE);
	m = sample(AMDGPU_UALINK_MSG_NPA_RSP);		/* 9 grants 5 */
	m.handle[0] = (m.handle[0] & ~0x3ffULL) | 5;
	KUNIT_EXPECT_EQ(test, check(m, 9, 5, &drop), -EBADMSG);
	KUNIT_EXPECT_EQ(test, drop, AMDGPU_UALINK_DROP_HANDLE);
	/* a zero low word is fine when the exporter is 0 and the rest is not */
	m = sample(AMDGPU_UALINK_MSG_NPA_REQ);
	m.receiver = 0;
	m.handle[0] = 0;
	KUNIT_EXPECT_EQ(test, check(m, 5, 0, &drop), 0);
}

static void msg_validate_ranges(struct kunit *test)
{
	static const struct {
		u64 npa, size;
	} bad[] = {
		{ 9ULL << 41, SZ_4K },				/* ring reserve */
		{ (9ULL << 41) + RESERVE - SZ_4K, SZ_8K },	/* runs into it */
		{ (10ULL << 41) - SZ_4K, SZ_8K },		/* leaves the window */
		{ (5ULL << 41) + RESERVE, SZ_4K },		/* the importer's window */
		{ (9ULL << 41) + RESERVE + 1, SZ_4K },		/* misaligned */
		{ (9ULL << 41) + RESERVE, 0 },			/* empty */
	};
	static const u16 types[] = {
		AMDGPU_UALINK_MSG_NPA_RSP, AMDGPU_UALINK_MSG_NPA_REVOKE,
		AMDGPU_UALINK_MSG_NPA_RELEASE,
	};
	enum amdgpu_ualink_drop drop;
	unsigned int i, t;

	for (t = 0; t < ARRAY_SIZE(types); t++) {
		for (i = 0; i < ARRAY_SIZE(bad); i++) {
			struct amdgpu_ualink_msg m = sample(types[t]);

			m.npa = bad[i].npa;
			m.size = bad[i].size;
			KUNIT_EXPECT_EQ_MSG(test, check(m, m.sender, m.receiver, &drop),
					    -EBADMSG, "type %u case %u", types[t], i);
			KUNIT_EXPECT_EQ(test, drop, AMDGPU_UALINK_DROP_RANGE);
		}
	}
}

static struct kunit_case amdgpu_ualink_msg_cases[] = {
	KUNIT_CASE(msg_golden_layout),
	KUNIT_CASE(msg_round_trip_every_type),
	KUNIT_CASE(msg_encode_rejects),
	KUNIT_CASE(msg_every_bit_flip_is_caught),
	KUNIT_CASE(msg_decode_rejects),
	KUNIT_CASE(msg_validate_against_ring),
	KUNIT_CASE(msg_validate_ranges),
	{}
};

static struct kunit_suite amdgpu_ualink_msg_suite = {
	.name = "amdgpu_ualink_msg",
	.test_cases = amdgpu_ualink_msg_cases,
};

kunit_test_suite(amdgpu_ualink_msg_suite);
