// SPDX-License-Identifier: GPL-2.0 OR MIT

#include <linux/export.h>
#include <linux/slab.h>

#include <drm/drm_print.h>
#include <drm/ttm/ttm_bo.h>
#include <drm/ttm/ttm_device.h>
#include <drm/ttm/ttm_placement.h>

#include "amdgpu_ualink_npa.h"
#include "amdgpu_ualink_npa_pool.h"

/**
 * DOC: NPA pool
 *
 * An imported buffer is backed by a range of another accelerator's NPA
 * window, which that accelerator chose: the TTM placement of imports,
 * &struct amdgpu_ualink_npa_pool, allocates nothing. Its alloc callback
 * asks the driver for the range granted to the buffer object (the range is
 * taken from the buffer object, not from the &struct ttm_place, whose page
 * numbers are 32-bit and cannot express a 51-bit NPA), checks it, and
 * records it in the resource (``start`` holds the NPA in CPU pages, for
 * information: the NPA itself is in &amdgpu_ualink_npa_res). A buffer stays
 * in the pool only while its grant is the one its resource records
 * (&ttm_resource_manager_func.compatible asks the driver again).
 *
 * Revocation is a TTM move: once the driver's @range answers -ENODEV for a
 * buffer (its grant was revoked), validating it for the pool again finds
 * its resource incompatible and allocates a *dead* resource in the same
 * pool, with no range behind it (amdgpu_ualink_npa_res_npa() returns 0).
 * TTM then calls the driver's &ttm_device_funcs.move from the live resource
 * to the dead one: the move notification every driver already has
 * invalidates the GPU mappings of the buffer and its dma-buf attachments,
 * with no invalidation path of its own. The buffer stays alive, dead: its
 * memory is gone for good.
 *
 * ttm_bo_validate() may allocate (the resource, a fence slot) and so fail.
 * A driver that must not fail to revoke (the exporter reuses the range as
 * soon as it hears it was given up) sets the memory of the dead resource
 * aside beforehand (amdgpu_ualink_npa_pool_dead_alloc()) and moves the
 * buffer itself: amdgpu_ualink_npa_pool_dead() makes that memory the dead
 * resource without allocating, for the driver's move notification and
 * ttm_bo_move_null().
 *
 * The pool never evicts: a buffer in it has no other place to go, so the
 * pool's resources neither intersect nor stand in the way of anything, and
 * it never answers -ENOSPC, which would make TTM evict to make room. A
 * buffer that never had a grant cannot be placed there: @range fails with
 * -EINVAL.
 *
 * The pool has no CPU mapping (&ttm_resource_manager.use_tt is false and
 * there is nothing behind the range to map): the driver's io_mem_reserve,
 * mmap and kmap paths refuse the pool's memory type.
 */

static struct amdgpu_ualink_npa_pool *to_pool(struct ttm_resource_manager *man)
{
	return container_of(man, struct amdgpu_ualink_npa_pool, manager);
}

static int npa_pool_alloc(struct ttm_resource_manager *man,
			  struct ttm_buffer_object *bo,
			  const struct ttm_place *place,
			  struct ttm_resource **res)
{
	struct amdgpu_ualink_npa_pool *pool = to_pool(man);
	struct amdgpu_ualink_npa_res *r;
	u64 npa, size;
	u16 owner;
	u64 offset;
	int ret;

	ret = pool->range(bo, &npa, &size);
	if (ret == -ENODEV) {
		/* revoked: a dead resource, nothing behind it */
		npa = 0;
	} else if (ret) {
		return ret == -ENOSPC ? -EINVAL : ret;	/* never evict */
	} else if (size != bo->base.size ||
		   /* the object's size, in a real window (4 KiB units) */
		   amdgpu_ualink_npa_split(npa, &owner, &offset) ||
		   amdgpu_ualink_npa_check_range(owner, npa, size)) {
		return -EINVAL;
	}

	r = kzalloc_obj(*r, GFP_KERNEL_ACCOUNT);
	if (!r)
		return -ENOMEM;
	ttm_resource_init(bo, place, &r->base);
	r->base.start = npa >> PAGE_SHIFT;
	r->npa = npa;
	*res = &r->base;
	return 0;
}

static void npa_pool_free(struct ttm_resource_manager *man,
			  struct ttm_resource *res)
{
	ttm_resource_fini(man, res);
	kfree(container_of(res, struct amdgpu_ualink_npa_res, base));
}

/* Nothing is ever evicted for, or from, the pool. */
static bool npa_pool_intersects(struct ttm_resource_manager *man,
				struct ttm_resource *res,
				const struct ttm_place *place, size_t size)
{
	return false;
}

/*
 * A buffer already in the pool stays only while its grant is the one its
 * resource records: otherwise (revoked, granted anew) TTM allocates again,
 * and the pool's alloc decides. A dead resource stays dead.
 */
static bool npa_pool_compatible(struct ttm_resource_manager *man,
				struct ttm_resource *res,
				const struct ttm_place *place, size_t size)
{
	struct amdgpu_ualink_npa_pool *pool = to_pool(man);
	u64 npa, granted;
	int ret;

	if (!res->bo)
		return false;
	ret = pool->range(res->bo, &npa, &granted);
	if (!amdgpu_ualink_npa_res_npa(res))
		return ret == -ENODEV;
	return !ret &&
	       npa == amdgpu_ualink_npa_res_npa(res) && granted == res->size;
}

static void npa_pool_debug(struct ttm_resource_manager *man,
			   struct drm_printer *printer)
{
	drm_printf(printer, "  imported NPA bytes: %llu\n",
		   ttm_resource_manager_usage(man));
}

static const struct ttm_resource_manager_func npa_pool_func = {
	.alloc = npa_pool_alloc,
	.free = npa_pool_free,
	.intersects = npa_pool_intersects,
	.compatible = npa_pool_compatible,
	.debug = npa_pool_debug,
};

/**
 * amdgpu_ualink_npa_pool_init - set up the placement of imported memory
 * @pool: the pool
 * @bdev: the TTM device
 * @mem_type: the driver's memory type for it
 * @range: how to find the range granted to a buffer object: 0 with the
 *	   range, -ENODEV when the grant was revoked, another errno when
 *	   there is none
 *
 * amdgpu on 6.12 uses all of TTM's memory types already: it needs a TTM
 * patch raising TTM_NUM_MEM_TYPES before it can have one for the pool.
 *
 * Returns: 0, -EINVAL for a memory type out of range, -EBUSY when the
 * type has a manager already.
 */
int amdgpu_ualink_npa_pool_init(struct amdgpu_ualink_npa_pool *pool,
				struct ttm_device *bdev, u32 mem_type,
				int (*range)(struct ttm_buffer_object *bo,
					     u64 *npa, u64 *size))
{
	struct ttm_resource_manager *man = &pool->manager;

	if (mem_type < TTM_PL_PRIV || mem_type >= TTM_NUM_MEM_TYPES)
		return -EINVAL;
	if (WARN_ON(ttm_manager_type(bdev, mem_type)))
		return -EBUSY;

	pool->range = range;
	pool->mem_type = mem_type;
	man->use_tt = false;
	man->func = &npa_pool_func;
	/* the whole pod's address space, in pages: usage is all it is for */
	ttm_resource_manager_init(man, bdev,
				  BIT_ULL(AMDGPU_UALINK_NPA_BITS - PAGE_SHIFT));
	ttm_set_driver_manager(bdev, mem_type, man);
	ttm_resource_manager_set_used(man, true);
	return 0;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_npa_pool_init);

/**
 * amdgpu_ualink_npa_pool_fini - take the placement of imports down
 * @pool: the pool
 * @bdev: the TTM device
 * @mem_type: its memory type
 *
 * Returns: 0, or -EBUSY while buffers are still placed in it (imports
 * must be gone first: the pool cannot evict them anywhere).
 */
int amdgpu_ualink_npa_pool_fini(struct amdgpu_ualink_npa_pool *pool,
				struct ttm_device *bdev, u32 mem_type)
{
	struct ttm_resource_manager *man = &pool->manager;

	/* no new buffer gets in while we look */
	ttm_resource_manager_set_used(man, false);
	if (ttm_resource_manager_usage(man)) {
		ttm_resource_manager_set_used(man, true);
		return -EBUSY;
	}
	ttm_resource_manager_cleanup(man);
	ttm_set_driver_manager(bdev, mem_type, NULL);
	return 0;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_npa_pool_fini);

/**
 * amdgpu_ualink_npa_pool_dead_alloc - memory for a dead resource, set aside
 *
 * For a buffer that may have to be revoked where nothing may fail: see
 * amdgpu_ualink_npa_pool_dead(). Freed with kfree() when it was not used.
 *
 * Returns: the memory, or NULL.
 */
struct amdgpu_ualink_npa_res *amdgpu_ualink_npa_pool_dead_alloc(void)
{
	return kzalloc_obj(struct amdgpu_ualink_npa_res, GFP_KERNEL_ACCOUNT);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_npa_pool_dead_alloc);

/**
 * amdgpu_ualink_npa_pool_dead - the dead resource of a buffer, allocating nothing
 * @pool: the pool
 * @bo: the buffer, reserved, idle, to be revoked
 * @mem: from amdgpu_ualink_npa_pool_dead_alloc(); the resource takes it
 *	 over and the pool frees it with the resource
 *
 * The same resource as the pool's alloc gives a revoked buffer, with no
 * range behind it. The driver moves @bo to it: its move notification,
 * then ttm_bo_move_null(). Callable where allocating is not allowed
 * (a dma-fence signalling section, say).
 *
 * Returns: the resource.
 */
struct ttm_resource *amdgpu_ualink_npa_pool_dead(struct amdgpu_ualink_npa_pool *pool,
						 struct ttm_buffer_object *bo,
						 struct amdgpu_ualink_npa_res *mem)
{
	const struct ttm_place place = { .mem_type = pool->mem_type };

	dma_resv_assert_held(bo->base.resv);
	ttm_resource_init(bo, &place, &mem->base);
	mem->npa = 0;
	return &mem->base;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_npa_pool_dead);
