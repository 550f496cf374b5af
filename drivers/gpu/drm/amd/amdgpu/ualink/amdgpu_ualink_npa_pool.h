/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The TTM placement of imported UALink memory. See amdgpu_ualink_npa_pool.c.
 */
#ifndef __AMDGPU_UALINK_NPA_POOL_H__
#define __AMDGPU_UALINK_NPA_POOL_H__

#include <linux/container_of.h>

#include <drm/ttm/ttm_resource.h>

struct ttm_buffer_object;
struct ttm_device;

/**
 * struct amdgpu_ualink_npa_pool - TTM manager of imported NPA ranges
 */
struct amdgpu_ualink_npa_pool {
	/** @manager: the TTM resource manager */
	struct ttm_resource_manager manager;
	/**
	 * @range: the range an exporter granted for @bo, from the driver's
	 * buffer object; 0, -ENODEV when the grant was revoked (@bo then
	 * moves to a dead resource), -EINVAL when @bo never had one
	 */
	int (*range)(struct ttm_buffer_object *bo, u64 *npa, u64 *size);
	/** @mem_type: the driver's memory type for the pool */
	u32 mem_type;
};

/**
 * struct amdgpu_ualink_npa_res - a buffer object's place in the pool
 */
struct amdgpu_ualink_npa_res {
	/** @base: the TTM resource; @base.start is the NPA in pages */
	struct ttm_resource base;
	/** @npa: the first address of the granted range; 0 when dead */
	u64 npa;
};

int amdgpu_ualink_npa_pool_init(struct amdgpu_ualink_npa_pool *pool,
				struct ttm_device *bdev, u32 mem_type,
				int (*range)(struct ttm_buffer_object *bo,
					     u64 *npa, u64 *size));
int amdgpu_ualink_npa_pool_fini(struct amdgpu_ualink_npa_pool *pool,
				struct ttm_device *bdev, u32 mem_type);
struct amdgpu_ualink_npa_res *amdgpu_ualink_npa_pool_dead_alloc(void);
struct ttm_resource *amdgpu_ualink_npa_pool_dead(struct amdgpu_ualink_npa_pool *pool,
						 struct ttm_buffer_object *bo,
						 struct amdgpu_ualink_npa_res *mem);
/**
 * amdgpu_ualink_npa_res_npa - the NPA behind a resource of the pool
 * @res: a resource the pool allocated
 *
 * Inline, so that amdgpu's placement code reads it without depending on
 * the core module when UALink is not built.
 *
 * Returns: the first address of the granted range; 0 for the dead
 * resource of a revoked buffer (an NPA is never 0: window 0 starts with
 * its ring reserve).
 */
static inline u64 amdgpu_ualink_npa_res_npa(const struct ttm_resource *res)
{
	return container_of(res, struct amdgpu_ualink_npa_res, base)->npa;
}

#endif /* __AMDGPU_UALINK_NPA_POOL_H__ */
