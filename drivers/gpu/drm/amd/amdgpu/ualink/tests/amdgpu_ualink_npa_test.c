// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * KUnit tests for the NPA layout helpers (amdgpu_ualink_npa.c).
 *
 * The expected values are written out from the layout the UALink pod uses
 * (owner ID in bits 50..41, 2 TiB windows, an 8 MiB ring reserve at the
 * head of each), not derived from the code under test.
 */

#include <kunit/test.h>
#include <linux/random.h>

#include "../amdgpu_ualink_npa.h"

#define TIB		BIT_ULL(40)
#define WINDOW		(2 * TIB)
#define RESERVE		(8ULL << 20)

static const u16 boundary_ids[] = { 0, 1, 511, 512, 1022, 1023 };

/* Short names keep each expectation on one line. */
static int range(u16 id, u64 npa, u64 size)
{
	return amdgpu_ualink_npa_check_range(id, npa, size);
}

static u64 ring(u16 receiver, u16 sender, enum amdgpu_ualink_ring_kind kind)
{
	return amdgpu_ualink_npa_ring(receiver, sender, kind);
}

static int owner(u16 receiver, u64 npa, u16 *sender,
		 enum amdgpu_ualink_ring_kind *kind)
{
	return amdgpu_ualink_npa_ring_owner(receiver, npa, sender, kind);
}

/* The layout's constants, checked where they are compiled. */
static_assert(AMDGPU_UALINK_MAX_ACCELS == 1024);
static_assert(AMDGPU_UALINK_NPA_WINDOW_SIZE == WINDOW);
static_assert(AMDGPU_UALINK_NPA_RESERVE == RESERVE);
static_assert(AMDGPU_UALINK_NPA_BITS == 51);
/* 64 entries of 64 bytes */
static_assert(AMDGPU_UALINK_RING_SIZE == 64 * 64);

static void npa_build_places_id_in_bits_50_41(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_npa_build(0, 0), 0ULL);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_npa_build(1, 0), 1ULL << 41);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_npa_build(1023, 0),
			0x3ffULL << 41);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_npa_build(1023, WINDOW - 1),
			(1ULL << 51) - 1);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_npa_build(0x155, 0x1234000),
			(0x155ULL << 41) | 0x1234000);
}

static void npa_build_rejects(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_npa_build(1024, 0),
			AMDGPU_UALINK_NPA_INVALID);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_npa_build(U16_MAX, 0),
			AMDGPU_UALINK_NPA_INVALID);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_npa_build(0, WINDOW),
			AMDGPU_UALINK_NPA_INVALID);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_npa_build(1023, U64_MAX),
			AMDGPU_UALINK_NPA_INVALID);
}

static void npa_split_round_trip(struct kunit *test)
{
	const u64 offsets[] = { 0, 1, RESERVE - 1, RESERVE, TIB,
				WINDOW - 4096, WINDOW - 1 };
	unsigned int i, j, k;
	u64 offset, npa;
	u16 id;

	for (i = 0; i < ARRAY_SIZE(boundary_ids); i++) {
		for (j = 0; j < ARRAY_SIZE(offsets); j++) {
			npa = amdgpu_ualink_npa_build(boundary_ids[i], offsets[j]);
			KUNIT_ASSERT_EQ(test,
					amdgpu_ualink_npa_split(npa, &id, &offset), 0);
			KUNIT_EXPECT_EQ(test, id, boundary_ids[i]);
			KUNIT_EXPECT_EQ(test, offset, offsets[j]);
		}
	}

	for (k = 0; k < 1000; k++) {
		u16 rid = get_random_u32_below(AMDGPU_UALINK_MAX_ACCELS);
		u64 roff = get_random_u64() & (WINDOW - 1);

		npa = amdgpu_ualink_npa_build(rid, roff);
		KUNIT_ASSERT_EQ(test, amdgpu_ualink_npa_split(npa, &id, &offset), 0);
		KUNIT_EXPECT_EQ(test, id, rid);
		KUNIT_EXPECT_EQ(test, offset, roff);
	}
}

static void npa_split_rejects_high_bits(struct kunit *test)
{
	u64 offset = 0xabc;
	u16 id = 0x77;
	int bit;

	for (bit = 51; bit < 64; bit++) {
		KUNIT_EXPECT_EQ(test, amdgpu_ualink_npa_split(BIT_ULL(bit), &id,
							      &offset), -EINVAL);
		/* outputs untouched on error */
		KUNIT_EXPECT_EQ(test, id, 0x77);
		KUNIT_EXPECT_EQ(test, offset, 0xabcULL);
	}
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_npa_split(U64_MAX, &id, &offset),
			-EINVAL);
}

static void npa_range_boundaries(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(boundary_ids); i++) {
		u16 id = boundary_ids[i];
		u64 base = (u64)id << 41;

		/* first and last usable pages, and the whole usable part */
		KUNIT_EXPECT_EQ(test, range(id, base + RESERVE, SZ_4K), 0);
		KUNIT_EXPECT_EQ(test, range(id, base + WINDOW - SZ_4K, SZ_4K), 0);
		KUNIT_EXPECT_EQ(test, range(id, base + RESERVE, WINDOW - RESERVE), 0);

		/* one page into the reserve, at either end of the range */
		KUNIT_EXPECT_EQ(test, range(id, base + RESERVE - SZ_4K, SZ_4K), -ERANGE);
		KUNIT_EXPECT_EQ(test, range(id, base + RESERVE - SZ_4K, SZ_8K), -ERANGE);
		KUNIT_EXPECT_EQ(test, range(id, base, SZ_4K), -ERANGE);

		/* one page past the window's end */
		KUNIT_EXPECT_EQ(test, range(id, base + WINDOW - SZ_4K, SZ_8K), -ERANGE);
		KUNIT_EXPECT_EQ(test, range(id, base + RESERVE,
					    WINDOW - RESERVE + SZ_4K), -ERANGE);
	}
}

static void npa_range_other_window(struct kunit *test)
{
	/* valid memory of accelerator 5 is not accelerator 4's or 6's */
	u64 npa = (5ULL << 41) + RESERVE;

	KUNIT_EXPECT_EQ(test, range(5, npa, SZ_4K), 0);
	KUNIT_EXPECT_EQ(test, range(4, npa, SZ_4K), -ERANGE);
	KUNIT_EXPECT_EQ(test, range(6, npa, SZ_4K), -ERANGE);
	/* the top of 1023's window does not wrap into 0's */
	KUNIT_EXPECT_EQ(test, range(0, (1023ULL << 41) + RESERVE, SZ_4K), -ERANGE);
}

static void npa_range_malformed(struct kunit *test)
{
	u64 good = (3ULL << 41) + RESERVE;

	KUNIT_EXPECT_EQ(test, range(3, good, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, range(3, good + 1, SZ_4K), -EINVAL);
	KUNIT_EXPECT_EQ(test, range(3, good, SZ_4K - 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, range(1024, good, SZ_4K), -EINVAL);
	KUNIT_EXPECT_EQ(test, range(3, good | BIT_ULL(51), SZ_4K), -EINVAL);
	/* sizes that would wrap a 64-bit end address, or exceed a window */
	KUNIT_EXPECT_EQ(test, range(3, good, U64_MAX - (SZ_4K - 1)), -EINVAL);
	KUNIT_EXPECT_EQ(test, range(3, good, WINDOW + SZ_4K), -EINVAL);
}

static void npa_ring_addresses(struct kunit *test)
{
	const enum amdgpu_ualink_ring_kind msg = AMDGPU_UALINK_RING_MESSAGE;
	const enum amdgpu_ualink_ring_kind sd = AMDGPU_UALINK_RING_SHOOTDOWN;
	enum amdgpu_ualink_ring_kind kind;
	u16 sender;

	/* message rings from the window's start, shootdown rings at 4 MiB */
	KUNIT_EXPECT_EQ(test, ring(7, 0, msg), 7ULL << 41);
	KUNIT_EXPECT_EQ(test, ring(7, 1, msg), (7ULL << 41) + SZ_4K);
	KUNIT_EXPECT_EQ(test, ring(7, 0, sd), (7ULL << 41) + SZ_4M);
	KUNIT_EXPECT_EQ(test, ring(7, 1023, sd), (7ULL << 41) + RESERVE - SZ_4K);

	/* every sender's rings round-trip, including the last entry of each */
	for (sender = 0; sender < 1024; sender++) {
		for (kind = 0; kind < AMDGPU_UALINK_RING_KINDS; kind++) {
			u64 npa = ring(1023, sender, kind);
			enum amdgpu_ualink_ring_kind got_kind;
			u16 got;

			KUNIT_ASSERT_EQ(test, npa >> 41, 1023ULL);
			KUNIT_ASSERT_EQ(test, owner(1023, npa + 63 * 64, &got,
						    &got_kind), 0);
			KUNIT_EXPECT_EQ(test, got, sender);
			KUNIT_EXPECT_EQ(test, got_kind, kind);
		}
	}

	KUNIT_EXPECT_EQ(test, ring(0, 1024, msg), AMDGPU_UALINK_NPA_INVALID);
	KUNIT_EXPECT_EQ(test, ring(1024, 0, msg), AMDGPU_UALINK_NPA_INVALID);
	KUNIT_EXPECT_EQ(test, ring(0, 0, AMDGPU_UALINK_RING_KINDS),
			AMDGPU_UALINK_NPA_INVALID);
}

static void npa_ring_owner_rejects(struct kunit *test)
{
	enum amdgpu_ualink_ring_kind kind = AMDGPU_UALINK_RING_SHOOTDOWN;
	u64 base = 2ULL << 41;
	u16 sender = 99;

	/* first byte past the reserve */
	KUNIT_EXPECT_EQ(test, owner(2, base + RESERVE, &sender, &kind), -ERANGE);
	/* a ring at another receiver */
	KUNIT_EXPECT_EQ(test, owner(2, 3ULL << 41, &sender, &kind), -ERANGE);
	/* not an NPA at all */
	KUNIT_EXPECT_EQ(test, owner(2, BIT_ULL(52) | base, &sender, &kind), -EINVAL);
	/* outputs untouched on error */
	KUNIT_EXPECT_EQ(test, sender, 99);
	KUNIT_EXPECT_EQ(test, kind, AMDGPU_UALINK_RING_SHOOTDOWN);
}

static struct kunit_case amdgpu_ualink_npa_cases[] = {
	KUNIT_CASE(npa_build_places_id_in_bits_50_41),
	KUNIT_CASE(npa_build_rejects),
	KUNIT_CASE(npa_split_round_trip),
	KUNIT_CASE(npa_split_rejects_high_bits),
	KUNIT_CASE(npa_range_boundaries),
	KUNIT_CASE(npa_range_other_window),
	KUNIT_CASE(npa_range_malformed),
	KUNIT_CASE(npa_ring_addresses),
	KUNIT_CASE(npa_ring_owner_rejects),
	{}
};

static struct kunit_suite amdgpu_ualink_npa_suite = {
	.name = "amdgpu_ualink_npa",
	.test_cases = amdgpu_ualink_npa_cases,
};

kunit_test_suite(amdgpu_ualink_npa_suite);

MODULE_DESCRIPTION("KUnit tests for the amdgpu UALink core");
MODULE_LICENSE("Dual MIT/GPL");
