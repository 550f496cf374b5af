// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * KUnit tests for the fault-injection rules (amdgpu_ualink_fault.c). What
 * each fault does to the protocol is tested in amdgpu_ualink_conn_test.c.
 */

#include <kunit/test.h>
#include <linux/bitops.h>

#include "../amdgpu_ualink_fault.h"
#include "../amdgpu_ualink_msg.h"

static enum amdgpu_ualink_fault_kind decide(struct amdgpu_ualink_fault *f,
					    u16 type)
{
	u32 delay;

	return amdgpu_ualink_fault_decide(f, type, &delay);
}

static void fault_off_by_default(struct kunit *test)
{
	struct amdgpu_ualink_fault f;
	unsigned int i;

	amdgpu_ualink_fault_init(&f, 1);
	for (i = 0; i < 1000; i++)
		KUNIT_EXPECT_EQ(test, decide(&f, 1 + i % 7), AMDGPU_UALINK_FAULT_NONE);
}

/* A count rule faults exactly the next N matching messages. */
static void fault_count_then_spent(struct kunit *test)
{
	struct amdgpu_ualink_fault_rule rule = {
		.types = BIT(AMDGPU_UALINK_MSG_NPA_REQ), .count = 3,
	}, left;
	struct amdgpu_ualink_fault f;
	unsigned int i, hits = 0;

	amdgpu_ualink_fault_init(&f, 1);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_fault_set(&f, AMDGPU_UALINK_FAULT_DROP, &rule), 0);
	/* other types pass untouched and do not use the count up */
	for (i = 0; i < 10; i++)
		KUNIT_EXPECT_EQ(test, decide(&f, AMDGPU_UALINK_MSG_HELLO),
				AMDGPU_UALINK_FAULT_NONE);
	for (i = 0; i < 10; i++)
		hits += decide(&f, AMDGPU_UALINK_MSG_NPA_REQ) == AMDGPU_UALINK_FAULT_DROP;
	KUNIT_EXPECT_EQ(test, hits, 3);
	KUNIT_EXPECT_EQ(test, f.injected[AMDGPU_UALINK_FAULT_DROP], 3);
	amdgpu_ualink_fault_get(&f, AMDGPU_UALINK_FAULT_DROP, &left);
	KUNIT_EXPECT_EQ(test, left.count, 0);
}

/* A rate rule fires at about its rate (seeded: the same every run). */
static void fault_rate(struct kunit *test)
{
	struct amdgpu_ualink_fault_rule rule = { .rate = 200000 };
	struct amdgpu_ualink_fault f;
	unsigned int i, hits = 0;

	amdgpu_ualink_fault_init(&f, 42);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_fault_set(&f, AMDGPU_UALINK_FAULT_CORRUPT, &rule), 0);
	for (i = 0; i < 100000; i++)
		hits += decide(&f, 1 + i % 7) == AMDGPU_UALINK_FAULT_CORRUPT;
	/* 20% of 100000: the standard deviation is 126 */
	KUNIT_EXPECT_GT(test, hits, 19000);
	KUNIT_EXPECT_LT(test, hits, 21000);

	rule.rate = AMDGPU_UALINK_FAULT_RATE_ONE;
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_fault_set(&f, AMDGPU_UALINK_FAULT_CORRUPT, &rule), 0);
	for (i = 0; i < 1000; i++)
		KUNIT_EXPECT_EQ(test, decide(&f, 3), AMDGPU_UALINK_FAULT_CORRUPT);
	amdgpu_ualink_fault_clear(&f);
	KUNIT_EXPECT_EQ(test, decide(&f, 3), AMDGPU_UALINK_FAULT_NONE);
}

/* At most one fault per message: the first kind that fires wins. */
static void fault_first_rule_wins(struct kunit *test)
{
	struct amdgpu_ualink_fault_rule one = { .count = 1 }, delay = {
		.count = 1, .delay_ms = 25,
	};
	struct amdgpu_ualink_fault f;
	u32 delay_ms = 0;

	amdgpu_ualink_fault_init(&f, 1);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_fault_set(&f, AMDGPU_UALINK_FAULT_DELAY, &delay), 0);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_fault_set(&f, AMDGPU_UALINK_FAULT_DROP, &one), 0);
	KUNIT_EXPECT_EQ(test, decide(&f, 1), AMDGPU_UALINK_FAULT_DROP);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_fault_decide(&f, 1, &delay_ms),
			AMDGPU_UALINK_FAULT_DELAY);
	KUNIT_EXPECT_EQ(test, delay_ms, 25);
	KUNIT_EXPECT_EQ(test, decide(&f, 1), AMDGPU_UALINK_FAULT_NONE);
}

static void fault_set_rejects(struct kunit *test)
{
	struct amdgpu_ualink_fault_rule rule = {};
	struct amdgpu_ualink_fault f;

	amdgpu_ualink_fault_init(&f, 1);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_fault_set(&f, AMDGPU_UALINK_FAULT_KINDS, &rule),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_fault_set(&f, -1, &rule), -EINVAL);
	rule.rate = AMDGPU_UALINK_FAULT_RATE_ONE + 1;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_fault_set(&f, AMDGPU_UALINK_FAULT_DROP, &rule),
			-EINVAL);
	rule.rate = 0;
	rule.types = BIT(0);	/* no message type 0 */
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_fault_set(&f, AMDGPU_UALINK_FAULT_DROP, &rule),
			-EINVAL);
	rule.types = BIT(AMDGPU_UALINK_MSG_TYPES);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_fault_set(&f, AMDGPU_UALINK_FAULT_DROP, &rule),
			-EINVAL);
	rule.types = BIT(AMDGPU_UALINK_MSG_HELLO) | BIT(AMDGPU_UALINK_MSG_NPA_RELEASE);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_fault_set(&f, AMDGPU_UALINK_FAULT_DROP, &rule), 0);
	KUNIT_EXPECT_STREQ(test, amdgpu_ualink_fault_name(AMDGPU_UALINK_FAULT_REORDER), "reorder");
	KUNIT_EXPECT_STREQ(test, amdgpu_ualink_fault_name(AMDGPU_UALINK_FAULT_NONE), "none");
}

/* Corruption flips exactly one bit, anywhere in the entry. */
static void fault_corrupt_one_bit(struct kunit *test)
{
	struct amdgpu_ualink_fault f;
	u8 seen[AMDGPU_UALINK_MSG_SIZE] = {};
	unsigned int i, j, bytes_hit = 0;

	amdgpu_ualink_fault_init(&f, 7);
	for (i = 0; i < 4096; i++) {
		u8 buf[AMDGPU_UALINK_MSG_SIZE] = {};
		unsigned int flipped = 0;

		amdgpu_ualink_fault_corrupt(&f, buf, sizeof(buf));
		for (j = 0; j < sizeof(buf); j++) {
			flipped += hweight8(buf[j]);
			seen[j] |= buf[j];
		}
		KUNIT_EXPECT_EQ(test, flipped, 1);
	}
	for (j = 0; j < sizeof(seen); j++)
		bytes_hit += seen[j] != 0;
	KUNIT_EXPECT_EQ(test, bytes_hit, AMDGPU_UALINK_MSG_SIZE);
}

static struct kunit_case amdgpu_ualink_fault_cases[] = {
	KUNIT_CASE(fault_off_by_default),
	KUNIT_CASE(fault_count_then_spent),
	KUNIT_CASE(fault_rate),
	KUNIT_CASE(fault_first_rule_wins),
	KUNIT_CASE(fault_set_rejects),
	KUNIT_CASE(fault_corrupt_one_bit),
	{}
};

static struct kunit_suite amdgpu_ualink_fault_suite = {
	.name = "amdgpu_ualink_fault",
	.test_cases = amdgpu_ualink_fault_cases,
};

kunit_test_suite(amdgpu_ualink_fault_suite);
