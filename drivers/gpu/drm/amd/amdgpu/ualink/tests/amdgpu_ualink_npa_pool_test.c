// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * KUnit tests for the TTM placement of imported memory
 * (amdgpu_ualink_npa_pool.c), on TTM's KUnit test device (UML only).
 */

#include <kunit/test.h>
#include <drm/ttm/ttm_bo.h>
#include <drm/ttm/ttm_placement.h>

#include "../../../../ttm/tests/ttm_kunit_helpers.h"
#include "../amdgpu_ualink_npa.h"
#include "../amdgpu_ualink_npa_pool.h"

#define NPA_PL		(TTM_PL_PRIV + 1)

/* The driver's buffer object: a TTM object with the range it was granted. */
struct tbo {
	struct ttm_buffer_object tbo;
	u64 npa;
	u64 size;
	bool revoked;
	int moves;	/* the driver's move notifications */
};

static int tbo_range(struct ttm_buffer_object *bo, u64 *npa, u64 *size)
{
	struct tbo *t = container_of(bo, struct tbo, tbo);

	if (t->revoked)
		return -ENODEV;
	/*
	 * never granted: a driver may well say -ENOSPC, which the pool must
	 * not pass on (TTM would evict to make room)
	 */
	if (!t->size)
		return -ENOSPC;
	*npa = t->npa;
	*size = t->size;
	return 0;
}

struct pool_test {
	struct ttm_test_devices *devs;
	struct amdgpu_ualink_npa_pool pool;
	struct ttm_place place;
};

static int pool_test_init(struct kunit *test)
{
	struct pool_test *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);

	if (!p)
		return -ENOMEM;
	p->devs = ttm_test_devices_all(test);
	p->place.mem_type = NPA_PL;
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_npa_pool_init(&p->pool, p->devs->ttm_dev,
							  NPA_PL, tbo_range), 0);
	test->priv = p;
	return 0;
}

static void pool_test_exit(struct kunit *test)
{
	struct pool_test *p = test->priv;

	KUNIT_EXPECT_EQ(test, amdgpu_ualink_npa_pool_fini(&p->pool, p->devs->ttm_dev,
							  NPA_PL), 0);
	ttm_test_devices_put(test, p->devs);
}

static void tbo_release(void *data)
{
	drm_gem_object_release(data);
}

/*
 * A buffer object as far as the pool sees it: a GEM object of the test
 * device (no shmem behind it) on the TTM device. @owned: TTM releases it.
 */
static struct tbo *tbo_new(struct kunit *test, u64 size, u64 npa, u64 granted,
			   bool owned)
{
	struct pool_test *p = test->priv;
	struct tbo *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	drm_gem_private_object_init(p->devs->drm, &t->tbo.base, size);
	t->tbo.bdev = p->devs->ttm_dev;
	t->npa = npa;
	t->size = granted;
	if (!owned)
		KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, tbo_release,
								&t->tbo.base), 0);
	return t;
}

/* A granted range becomes the resource: no allocation, the NPA recorded. */
static void pool_places_granted_range(struct kunit *test)
{
	struct pool_test *p = test->priv;
	u64 npa = amdgpu_ualink_npa_build(700, AMDGPU_UALINK_NPA_RESERVE + SZ_1T);
	struct tbo *t = tbo_new(test, SZ_2M, npa, SZ_2M, false);
	struct ttm_resource_manager *man;
	struct ttm_resource *res;

	KUNIT_ASSERT_EQ(test, ttm_resource_alloc(&t->tbo, &p->place, &res, NULL), 0);
	KUNIT_EXPECT_EQ(test, res->mem_type, NPA_PL);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_npa_res_npa(res), npa);
	KUNIT_EXPECT_EQ(test, (u64)res->start << PAGE_SHIFT, npa);
	KUNIT_EXPECT_EQ(test, ttm_resource_manager_usage(&p->pool.manager), SZ_2M);
	/* busy while a buffer is placed there: it cannot be evicted */
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_npa_pool_fini(&p->pool, p->devs->ttm_dev,
							  NPA_PL), -EBUSY);
	man = &p->pool.manager;
	KUNIT_EXPECT_FALSE(test, man->func->intersects(man, res, &p->place, SZ_2M));
	KUNIT_EXPECT_FALSE(test, p->pool.manager.use_tt);
	ttm_resource_free(&t->tbo, &res);
	KUNIT_EXPECT_EQ(test, ttm_resource_manager_usage(&p->pool.manager), 0);
}

/*
 * What the pool refuses, always with -EINVAL (never -ENOSPC, which would
 * make TTM evict): no grant (revoked), a grant of another size, or a range
 * outside any window or in a ring reserve.
 */
static void pool_refusals(struct kunit *test)
{
	struct pool_test *p = test->priv;
	u64 good = amdgpu_ualink_npa_build(5, AMDGPU_UALINK_NPA_RESERVE);
	static const struct {
		u64 npa_off;	/* added to good */
		u64 granted;
	} bad[] = {
		{ 0, 0 },			/* no grant */
		{ 0, SZ_4M },			/* not the object's size */
		{ 0, SZ_1M },
		{ 1, SZ_2M },			/* misaligned */
		{ -AMDGPU_UALINK_NPA_RESERVE, SZ_2M },	/* the ring reserve */
		{ BIT_ULL(51), SZ_2M },		/* beyond the pod */
	};
	struct ttm_resource *res;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		struct tbo *t = tbo_new(test, SZ_2M, good + bad[i].npa_off,
				       bad[i].granted, false);

		KUNIT_EXPECT_EQ_MSG(test, ttm_resource_alloc(&t->tbo, &p->place, &res, NULL),
				    -EINVAL, "case %u", i);
	}
	KUNIT_EXPECT_EQ(test, ttm_resource_manager_usage(&p->pool.manager), 0);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_npa_pool_init(&p->pool, p->devs->ttm_dev,
							  TTM_PL_VRAM, tbo_range), -EINVAL);
}

/* A driver's move: notify, then take the new resource (nothing to copy). */
static int tbo_move(struct ttm_buffer_object *bo, bool evict,
		    struct ttm_operation_ctx *ctx, struct ttm_resource *new_mem,
		    struct ttm_place *hop)
{
	if (bo->resource)
		container_of(bo, struct tbo, tbo)->moves++;
	ttm_bo_move_null(bo, new_mem);
	return 0;
}

/*
 * Through TTM's own path: a buffer object created in the pool, then revoked
 * by a move to a dead resource, which reaches the driver's move callback.
 */
static void pool_bo_init(struct kunit *test)
{
	struct pool_test *p = test->priv;
	u64 npa = amdgpu_ualink_npa_build(1, AMDGPU_UALINK_NPA_RESERVE);
	struct tbo *t = tbo_new(test, SZ_4M, npa, SZ_4M, true);
	struct ttm_placement placement = { .num_placement = 1, .placement = &p->place };
	const struct ttm_device_funcs *funcs = p->devs->ttm_dev->funcs;
	struct ttm_device_funcs mover = *funcs;
	struct ttm_operation_ctx ctx = {};
	int ret;

	mover.move = tbo_move;
	p->devs->ttm_dev->funcs = &mover;
	ret = ttm_bo_init_reserved(p->devs->ttm_dev, &t->tbo, ttm_bo_type_device,
				   &placement, PAGE_SIZE, &ctx, NULL, NULL,
				   &dummy_ttm_bo_destroy);
	KUNIT_ASSERT_EQ(test, ret, 0);
	dma_resv_unlock(t->tbo.base.resv);
	KUNIT_EXPECT_EQ(test, t->tbo.resource->mem_type, NPA_PL);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_npa_res_npa(t->tbo.resource), npa);
	KUNIT_EXPECT_NULL(test, t->tbo.ttm);	/* no pages behind it */
	KUNIT_EXPECT_EQ(test, ttm_resource_manager_usage(&p->pool.manager), SZ_4M);
	KUNIT_EXPECT_EQ(test, t->moves, 0);
	/* validating it again while granted: it stays, no move */
	KUNIT_ASSERT_EQ(test, ttm_bo_reserve(&t->tbo, false, false, NULL), 0);
	KUNIT_EXPECT_EQ(test, ttm_bo_validate(&t->tbo, &placement, &ctx), 0);
	KUNIT_EXPECT_EQ(test, t->moves, 0);
	/* revoked: it moves to a dead resource of the pool, the driver hears */
	t->revoked = true;
	KUNIT_EXPECT_EQ(test, ttm_bo_validate(&t->tbo, &placement, &ctx), 0);
	KUNIT_EXPECT_EQ(test, t->moves, 1);
	KUNIT_EXPECT_EQ(test, t->tbo.resource->mem_type, NPA_PL);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_npa_res_npa(t->tbo.resource), 0);
	/* and stays dead */
	KUNIT_EXPECT_EQ(test, ttm_bo_validate(&t->tbo, &placement, &ctx), 0);
	KUNIT_EXPECT_EQ(test, t->moves, 1);
	ttm_bo_unreserve(&t->tbo);

	ttm_bo_fini(&t->tbo);
	p->devs->ttm_dev->funcs = funcs;
	KUNIT_EXPECT_EQ(test, ttm_resource_manager_usage(&p->pool.manager), 0);
}

/*
 * The dead resource from memory set aside: what a driver that must not fail
 * to revoke moves the buffer to by itself. It is the same as the one TTM's
 * path gives (TTM keeps it: no further move), and the pool frees it.
 */
static void pool_dead_set_aside(struct kunit *test)
{
	struct pool_test *p = test->priv;
	u64 npa = amdgpu_ualink_npa_build(2, AMDGPU_UALINK_NPA_RESERVE);
	struct tbo *t = tbo_new(test, SZ_2M, npa, SZ_2M, true);
	struct ttm_placement placement = { .num_placement = 1, .placement = &p->place };
	const struct ttm_device_funcs *funcs = p->devs->ttm_dev->funcs;
	struct ttm_device_funcs mover = *funcs;
	struct ttm_operation_ctx ctx = {};
	struct amdgpu_ualink_npa_res *mem;
	struct ttm_resource *dead;

	mover.move = tbo_move;
	p->devs->ttm_dev->funcs = &mover;
	KUNIT_ASSERT_EQ(test, ttm_bo_init_reserved(p->devs->ttm_dev, &t->tbo,
						   ttm_bo_type_device, &placement,
						   PAGE_SIZE, &ctx, NULL, NULL,
						   &dummy_ttm_bo_destroy), 0);
	mem = amdgpu_ualink_npa_pool_dead_alloc();
	KUNIT_ASSERT_NOT_NULL(test, mem);

	t->revoked = true;
	dead = amdgpu_ualink_npa_pool_dead(&p->pool, &t->tbo, mem);
	KUNIT_EXPECT_PTR_EQ(test, dead, &mem->base);
	KUNIT_EXPECT_EQ(test, dead->mem_type, NPA_PL);
	KUNIT_EXPECT_EQ(test, dead->size, SZ_2M);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_npa_res_npa(dead), 0);
	/* the live resource and the dead one, until the move frees the first */
	KUNIT_EXPECT_EQ(test, ttm_resource_manager_usage(&p->pool.manager), SZ_4M);
	ttm_bo_move_null(&t->tbo, dead);
	KUNIT_EXPECT_EQ(test, ttm_resource_manager_usage(&p->pool.manager), SZ_2M);
	KUNIT_EXPECT_EQ(test, ttm_bo_validate(&t->tbo, &placement, &ctx), 0);
	KUNIT_EXPECT_EQ(test, t->moves, 0);
	KUNIT_EXPECT_PTR_EQ(test, t->tbo.resource, dead);
	dma_resv_unlock(t->tbo.base.resv);

	ttm_bo_fini(&t->tbo);
	p->devs->ttm_dev->funcs = funcs;
	KUNIT_EXPECT_EQ(test, ttm_resource_manager_usage(&p->pool.manager), 0);
}

static struct kunit_case amdgpu_ualink_npa_pool_cases[] = {
	KUNIT_CASE(pool_places_granted_range),
	KUNIT_CASE(pool_refusals),
	KUNIT_CASE(pool_bo_init),
	KUNIT_CASE(pool_dead_set_aside),
	{}
};

static struct kunit_suite amdgpu_ualink_npa_pool_suite = {
	.name = "amdgpu_ualink_npa_pool",
	.init = pool_test_init,
	.exit = pool_test_exit,
	.test_cases = amdgpu_ualink_npa_pool_cases,
};

kunit_test_suite(amdgpu_ualink_npa_pool_suite);
