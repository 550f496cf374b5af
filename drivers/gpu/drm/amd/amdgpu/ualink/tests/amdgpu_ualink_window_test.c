// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * KUnit tests for the NPA window allocator (amdgpu_ualink_window.c).
 */

#include <kunit/test.h>
#include <linux/slab.h>

#include "../amdgpu_ualink_npa.h"
#include "../amdgpu_ualink_window.h"

#define RESERVE		(8ULL << 20)
#define WINDOW		BIT_ULL(41)
/* 1 GiB ranges that fit above the reserve: the first starts at 1 GiB. */
#define GIB_RANGES	(WINDOW / SZ_1G - 1)

static void window_init_rejects_bad_id(struct kunit *test)
{
	struct amdgpu_ualink_window win;

	KUNIT_EXPECT_EQ(test, amdgpu_ualink_window_init(&win, 1024), -EINVAL);
}

static void window_alignment_policy(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_window_alignment(SZ_4K), SZ_4K);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_window_alignment(SZ_2M - SZ_4K), SZ_4K);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_window_alignment(SZ_2M), SZ_2M);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_window_alignment(SZ_1G - SZ_4K), SZ_2M);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_window_alignment(SZ_1G), SZ_1G);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_window_alignment(WINDOW), SZ_1G);
}

/* Ranges land in the window of the ID given, above the reserve, aligned. */
static void window_alloc_in_own_window(struct kunit *test)
{
	static const u16 ids[] = { 0, 1, 1023 };
	const u64 sizes[] = { SZ_4K, SZ_64K, SZ_2M, SZ_2M + SZ_4K, SZ_1G };
	struct amdgpu_ualink_npa_range r[ARRAY_SIZE(sizes)];
	struct amdgpu_ualink_window win;
	unsigned int i, j, n;
	u64 bytes;

	for (i = 0; i < ARRAY_SIZE(ids); i++) {
		KUNIT_ASSERT_EQ(test, amdgpu_ualink_window_init(&win, ids[i]), 0);
		for (j = 0; j < ARRAY_SIZE(sizes); j++) {
			u64 npa, align;

			KUNIT_ASSERT_EQ(test, amdgpu_ualink_window_alloc(&win, sizes[j], &r[j]), 0);
			npa = r[j].node.start;
			KUNIT_EXPECT_EQ(test, r[j].node.size, sizes[j]);
			KUNIT_EXPECT_EQ(test, amdgpu_ualink_npa_check_range(ids[i], npa,
									    sizes[j]), 0);
			align = amdgpu_ualink_window_alignment(sizes[j]);
			KUNIT_EXPECT_TRUE(test, IS_ALIGNED(npa, align));
		}
		amdgpu_ualink_window_usage(&win, &bytes, &n);
		KUNIT_EXPECT_EQ(test, n, ARRAY_SIZE(sizes));
		KUNIT_EXPECT_EQ(test, bytes, (u64)SZ_4K + SZ_64K + SZ_2M + SZ_2M +
				SZ_4K + SZ_1G);
		for (j = 0; j < ARRAY_SIZE(sizes); j++)
			amdgpu_ualink_window_free(&win, &r[j]);
		amdgpu_ualink_window_usage(&win, &bytes, &n);
		KUNIT_EXPECT_EQ(test, n, 0);
		KUNIT_EXPECT_EQ(test, bytes, 0);
		amdgpu_ualink_window_fini(&win);
	}
}

static void window_alloc_rejects_bad_size(struct kunit *test)
{
	struct amdgpu_ualink_npa_range r;
	struct amdgpu_ualink_window win;

	KUNIT_ASSERT_EQ(test, amdgpu_ualink_window_init(&win, 9), 0);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_window_alloc(&win, 0, &r), -EINVAL);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_window_alloc(&win, SZ_4K + 1, &r), -EINVAL);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_window_alloc(&win, 100, &r), -EINVAL);
	/* larger than the whole usable window */
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_window_alloc(&win, WINDOW - RESERVE + SZ_4K, &r),
			-ENOSPC);
	amdgpu_ualink_window_fini(&win);
}

/*
 * The whole usable part can be had in two ranges, each aligned as its size
 * says, and then nothing more; the usable part in one range cannot: no
 * 1 GiB-aligned hole is that large, and the alignment never falls back.
 */
static void window_exhaustion(struct kunit *test)
{
	struct amdgpu_ualink_npa_range all, head, more;
	struct amdgpu_ualink_window win;

	KUNIT_ASSERT_EQ(test, amdgpu_ualink_window_init(&win, 1023), 0);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_window_alloc(&win, WINDOW - RESERVE, &all), -ENOSPC);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_window_alloc(&win, WINDOW - SZ_1G, &all), 0);
	KUNIT_EXPECT_EQ(test, all.node.start, (1023ULL << 41) + SZ_1G);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_window_alloc(&win, SZ_1G - RESERVE, &head), 0);
	KUNIT_EXPECT_EQ(test, head.node.start, (1023ULL << 41) + RESERVE);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_window_alloc(&win, SZ_4K, &more), -ENOSPC);
	amdgpu_ualink_window_free(&win, &all);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_window_alloc(&win, SZ_4K, &more), 0);
	amdgpu_ualink_window_free(&win, &more);
	amdgpu_ualink_window_free(&win, &head);
	amdgpu_ualink_window_fini(&win);
}

/*
 * Fill the window with 1 GiB ranges, free every other one: half the space
 * is free but no 2 GiB hole exists, so a 2 GiB range fails while 1 GiB
 * ranges still fit exactly in the holes.
 */
static void window_fragmentation(struct kunit *test)
{
	struct amdgpu_ualink_npa_range *r, big;
	struct amdgpu_ualink_window win;
	unsigned int i, n;
	u64 bytes;

	r = kunit_kcalloc(test, GIB_RANGES, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_window_init(&win, 2), 0);
	for (i = 0; i < GIB_RANGES; i++)
		KUNIT_ASSERT_EQ(test, amdgpu_ualink_window_alloc(&win, SZ_1G, &r[i]), 0);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_window_alloc(&win, SZ_1G, &big), -ENOSPC);
	/* what is left is below the first 1 GiB boundary */
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_window_alloc(&win, SZ_1G - RESERVE, &big), 0);
	amdgpu_ualink_window_free(&win, &big);

	for (i = 0; i < GIB_RANGES; i += 2)
		amdgpu_ualink_window_free(&win, &r[i]);
	amdgpu_ualink_window_usage(&win, &bytes, &n);
	KUNIT_EXPECT_EQ(test, n, GIB_RANGES / 2);
	KUNIT_EXPECT_EQ(test, bytes, (u64)(GIB_RANGES / 2) * SZ_1G);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_window_alloc(&win, SZ_2G, &big), -ENOSPC);
	/*
	 * 1 GiB + 2 MiB would fit in the hole at the head of the window only
	 * 2 MiB-aligned, which no amdgpu importer could map: refused, until a
	 * 1 GiB-aligned hole is large enough.
	 */
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_window_alloc(&win, SZ_1G + SZ_2M, &big), -ENOSPC);
	amdgpu_ualink_window_free(&win, &r[1]);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_window_alloc(&win, SZ_1G + SZ_2M, &big), 0);
	KUNIT_EXPECT_EQ(test, big.node.start, (2ULL << 41) + SZ_1G);
	amdgpu_ualink_window_free(&win, &big);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_window_alloc(&win, SZ_1G, &r[1]), 0);
	for (i = 0; i < GIB_RANGES; i += 2)
		KUNIT_EXPECT_EQ(test, amdgpu_ualink_window_alloc(&win, SZ_1G, &r[i]), 0);

	for (i = 0; i < GIB_RANGES; i++)
		amdgpu_ualink_window_free(&win, &r[i]);
	amdgpu_ualink_window_usage(&win, &bytes, &n);
	KUNIT_EXPECT_EQ(test, n, 0);
	KUNIT_EXPECT_EQ(test, bytes, 0);
	amdgpu_ualink_window_fini(&win);
}

static struct kunit_case amdgpu_ualink_window_cases[] = {
	KUNIT_CASE(window_init_rejects_bad_id),
	KUNIT_CASE(window_alignment_policy),
	KUNIT_CASE(window_alloc_in_own_window),
	KUNIT_CASE(window_alloc_rejects_bad_size),
	KUNIT_CASE(window_exhaustion),
	KUNIT_CASE(window_fragmentation),
	{}
};

static struct kunit_suite amdgpu_ualink_window_suite = {
	.name = "amdgpu_ualink_window",
	.test_cases = amdgpu_ualink_window_cases,
};

kunit_test_suite(amdgpu_ualink_window_suite);
