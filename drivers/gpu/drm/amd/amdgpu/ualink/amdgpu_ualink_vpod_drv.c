// SPDX-License-Identifier: GPL-2.0 OR MIT

#include <linux/dma-buf.h>
#include <linux/dma-fence.h>
#include <linux/dma-mapping.h>
#include <linux/fcntl.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_gem_ttm_helper.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_prime.h>
#include <drm/ttm/ttm_bo.h>
#include <drm/ttm/ttm_device.h>
#include <drm/ttm/ttm_placement.h>
#include <drm/ttm/ttm_range_manager.h>
#include <drm/ttm/ttm_tt.h>
#include <uapi/drm/amdgpu_ualink_vpod.h>

#include "amdgpu_ualink_dmabuf.h"
#include "amdgpu_ualink_ioctl.h"
#include "amdgpu_ualink_npa_pool.h"
#include "amdgpu_ualink_sysfs.h"
#include "amdgpu_ualink_vpod.h"

/**
 * DOC: Emulated pod: DRM devices
 *
 * The first accelerators of the pod (module parameter ``nodes``, default 4)
 * each have a DRM device with a render node, a TTM device whose VRAM is the
 * accelerator's emulated memory (``vram_mb``, default 16 MiB) and the NPA
 * pool of the core as memory type %TTM_PL_PRIV. Buffers:
 *
 * - VRAM buffers (DRM_IOCTL_AMDGPU_UALINK_VPOD_GEM_CREATE): exportable,
 *   CPU-mappable; they never move (TTM never evicts them: the pod has no
 *   second place for device memory), so an export pins nothing that could
 *   have moved, and creating one in full memory fails with -ENOSPC (TTM
 *   says -ENOMEM; kernel memory running out while placing a buffer is
 *   reported as -ENOSPC too);
 * - system buffers: TTM pages, CPU-mappable, refused for export (-EPERM);
 * - imports: kernel buffer objects (no mmap offset exists) in the NPA pool,
 *   each holding its &struct amdgpu_ualink_import. Their revocation is the
 *   pool's move to a dead resource; the move callback flushes the
 *   accelerator's TLB for the range and notifies the dma-buf's attachments.
 *
 * Emulated GPU work (DRM_IOCTL_AMDGPU_UALINK_VPOD_GPU_JOB) is a fence in a
 * buffer's reservation that signals when the user ends it or after its
 * timeout, so that tests can keep an import busy while its exporter
 * revokes it, as a long-running kernel would.
 *
 * An export ends when the buffer's last GEM handle is closed: the DRM core
 * calls &drm_gem_object_funcs.handles_gone (patch "drm/gem: tell the
 * driver when an object's last handle is gone"), and the driver ends the
 * export there (amdgpu_ualink_export_end(): the handle stops resolving at
 * once, the importers are revoked on the core's workqueue). If a new
 * handle is made for the buffer later (its dma-buf is imported again), it
 * has no export until it is exported again, under a new UALink handle.
 */

#define VPOD_PL_NPA	TTM_PL_PRIV

/**
 * struct amdgpu_ualink_vpod_drm - the DRM device of an accelerator
 */
struct amdgpu_ualink_vpod_drm {
	/** @drm: the DRM device */
	struct drm_device drm;
	/** @bdev: its TTM device */
	struct ttm_device bdev;
	/** @pool: the placement of imports */
	struct amdgpu_ualink_npa_pool pool;
	/** @node: the accelerator */
	struct amdgpu_ualink_vpod_node *node;
	/** @pdev: the platform device it hangs off */
	struct platform_device *pdev;
	/**
	 * @import_lock: serialises finding or making the buffer object of an
	 * import against attaching and detaching it (&amdgpu_ualink_import.obj)
	 */
	struct mutex import_lock;
	/** @job_lock: protects @jobs and every buffer's &vpod_bo.job */
	struct mutex job_lock;
	/** @jobs: &struct vpod_job running on the device's buffers */
	struct list_head jobs;
	/**
	 * @sysfs: the ualink/ directory of @pdev, set and cleared under the
	 * node's control_lock, under which its state changes
	 */
	struct amdgpu_ualink_sysfs *sysfs;
};

/* a buffer object of the emulated pod */
struct vpod_bo {
	struct ttm_buffer_object tbo;
	struct ttm_place place;
	struct ttm_placement placement;
	u32 domain;		/* AMDGPU_UALINK_VPOD_DOMAIN_*, or 0: an import */
	void *export;		/* the core's export of it */
	struct amdgpu_ualink_import *imp;	/* an import: what it is */
	bool revoked;		/* an import: revoked, under the reservation */
	struct vpod_job *job;	/* running on it, under the device's job_lock */
	struct amdgpu_ualink_dmabuf_slot slot;	/* an import: its dma-buf */
};

/*
 * Emulated GPU work on a buffer: a fence in its reservation, signalled by
 * DRM_IOCTL_AMDGPU_UALINK_VPOD_GPU_JOB's END, its timeout, or the device's
 * removal. Listed while it runs; holds a reference to the buffer.
 */
struct vpod_job {
	struct dma_fence base;	/* first: the fence's release frees the job */
	spinlock_t lock;	/* the fence's */
	struct delayed_work timeout;
	struct vpod_bo *bo;
	struct list_head link;	/* in amdgpu_ualink_vpod_drm.jobs */
};

static struct vpod_bo *to_bo(struct drm_gem_object *obj)
{
	return container_of(obj, struct vpod_bo, tbo.base);
}

static struct amdgpu_ualink_vpod_drm *to_vdev(struct ttm_device *bdev)
{
	return container_of(bdev, struct amdgpu_ualink_vpod_drm, bdev);
}

static struct amdgpu_ualink_vpod_drm *bo_vdev(struct vpod_bo *bo)
{
	return to_vdev(bo->tbo.bdev);
}

static struct ttm_tt *vpod_tt_create(struct ttm_buffer_object *tbo, u32 page_flags)
{
	struct ttm_tt *tt = kzalloc_obj(*tt, GFP_KERNEL);

	if (!tt)
		return NULL;
	if (ttm_tt_init(tt, tbo, page_flags, ttm_cached, 0)) {
		kfree(tt);
		return NULL;
	}
	return tt;
}

static void vpod_tt_destroy(struct ttm_device *bdev, struct ttm_tt *tt)
{
	ttm_tt_fini(tt);
	kfree(tt);
}

/* Nothing is ever evicted: device memory has no second place here. */
static bool vpod_eviction_valuable(struct ttm_buffer_object *tbo,
				   const struct ttm_place *place)
{
	return false;
}

static void vpod_evict_flags(struct ttm_buffer_object *tbo,
			     struct ttm_placement *placement)
{
	placement->num_placement = 0;
}

/*
 * An import moved (revoked): the GPU must forget its translations and the
 * dma-buf's attachments hear of it, before the new resource is taken.
 */
static void vpod_move_notify(struct vpod_bo *bo)
{
	struct ttm_resource *res = bo->tbo.resource;
	u64 npa = amdgpu_ualink_npa_res_npa(res);

	if (npa)
		amdgpu_ualink_vpod_tlb_flush(bo_vdev(bo)->node, npa, bo->tbo.base.size);
	amdgpu_ualink_dmabuf_move_notify(&bo->slot);
}

static int vpod_move(struct ttm_buffer_object *tbo, bool evict,
		     struct ttm_operation_ctx *ctx, struct ttm_resource *new_mem,
		     struct ttm_place *hop)
{
	struct ttm_resource *old = tbo->resource;

	if (!old || (old->mem_type == TTM_PL_SYSTEM && !tbo->ttm)) {
		ttm_bo_move_null(tbo, new_mem);	/* a new buffer */
		return 0;
	}
	if (old->mem_type == VPOD_PL_NPA && new_mem->mem_type == VPOD_PL_NPA) {
		vpod_move_notify(to_bo(&tbo->base));
		ttm_bo_move_null(tbo, new_mem);
		return 0;
	}
	return -EINVAL;	/* nothing else moves */
}

static int vpod_io_mem_reserve(struct ttm_device *bdev, struct ttm_resource *res)
{
	switch (res->mem_type) {
	case TTM_PL_SYSTEM:
		return 0;
	case TTM_PL_VRAM:
		/*
		 * Kernel memory standing for VRAM: TTM's kmap and copy paths
		 * use @addr; faults go through vpod_io_mem_pfn().
		 */
		res->bus.offset = (u64)res->start << PAGE_SHIFT;
		res->bus.addr = to_vdev(bdev)->node->vram + res->bus.offset;
		res->bus.is_iomem = true;
		res->bus.caching = ttm_cached;
		return 0;
	default:	/* another accelerator's memory: no CPU access */
		return -EPERM;
	}
}

static unsigned long vpod_io_mem_pfn(struct ttm_buffer_object *tbo,
				     unsigned long page_offset)
{
	struct amdgpu_ualink_vpod_node *node = to_vdev(tbo->bdev)->node;
	u64 offset = tbo->resource->bus.offset + (page_offset << PAGE_SHIFT);

	/* in the region kernels share, or kernel memory */
	if (node->vram_phys)
		return PHYS_PFN(node->vram_phys + offset);
	return vmalloc_to_pfn(node->vram + offset);
}

static const struct ttm_device_funcs vpod_ttm_funcs = {
	.ttm_tt_create = vpod_tt_create,
	.ttm_tt_destroy = vpod_tt_destroy,
	.eviction_valuable = vpod_eviction_valuable,
	.evict_flags = vpod_evict_flags,
	.move = vpod_move,
	.io_mem_reserve = vpod_io_mem_reserve,
	.io_mem_pfn = vpod_io_mem_pfn,
};

/* The NPA pool's question: what range was this import granted? */
static int vpod_bo_range(struct ttm_buffer_object *tbo, u64 *npa, u64 *size)
{
	struct vpod_bo *bo = to_bo(&tbo->base);

	if (bo->revoked)
		return -ENODEV;
	if (!bo->imp)
		return -EINVAL;
	*npa = bo->imp->npa;
	*size = bo->imp->size;
	return 0;
}

static void vpod_bo_destroy(struct ttm_buffer_object *tbo)
{
	struct vpod_bo *bo = to_bo(&tbo->base);

	amdgpu_ualink_dmabuf_slot_fini(&bo->slot);
	drm_gem_object_release(&tbo->base);
	kfree(bo);
}

/* The last GEM reference: undo the export and the import, then free. */
static void vpod_gem_free(struct drm_gem_object *obj)
{
	struct vpod_bo *bo = to_bo(obj);
	struct amdgpu_ualink_vpod_drm *vdev = bo_vdev(bo);

	if (bo->export)	/* exported after its last handle went */
		amdgpu_ualink_export_end(&vdev->node->udev, &bo->export);
	if (bo->imp) {
		mutex_lock(&vdev->import_lock);
		if (bo->imp->obj == bo)
			amdgpu_ualink_import_set_obj(bo->imp, NULL);
		mutex_unlock(&vdev->import_lock);
		amdgpu_ualink_import_put(bo->imp);
	}
	ttm_bo_fini(&bo->tbo);
}

/*
 * The handle count reached zero. A handle made since (PRIME import of a
 * dma-buf still around) keeps the export: it is decided under the lock
 * that handle creation takes. The importers are revoked on the core's
 * workqueue, so that closing a file never waits for another accelerator's
 * GPU work (amdgpu_ualink_export_end()).
 */
static void vpod_gem_handles_gone(struct drm_gem_object *obj)
{
	struct amdgpu_ualink_dev *udev = &bo_vdev(to_bo(obj))->node->udev;

	mutex_lock(&obj->dev->object_name_lock);
	if (!obj->handle_count)
		amdgpu_ualink_export_end(udev, &to_bo(obj)->export);
	mutex_unlock(&obj->dev->object_name_lock);
}

static struct dma_buf *vpod_gem_export(struct drm_gem_object *obj, int flags)
{
	struct vpod_bo *bo = to_bo(obj);

	if (bo->imp)
		return amdgpu_ualink_dmabuf_get(&bo->slot, flags);
	return drm_gem_prime_export(obj, flags);
}

static const struct drm_gem_object_funcs vpod_gem_funcs = {
	.free = vpod_gem_free,
	.handles_gone = vpod_gem_handles_gone,
	.export = vpod_gem_export,
	.mmap = drm_gem_ttm_mmap,
};

/*
 * A new buffer object; for an import, @imp is its import (the caller keeps
 * its reference until the object exists). Zeroed, in VRAM.
 */
static struct vpod_bo *vpod_bo_create(struct amdgpu_ualink_vpod_drm *vdev,
				      u64 size, u32 domain,
				      struct amdgpu_ualink_import *imp)
{
	struct amdgpu_ualink_vpod_node *node = vdev->node;
	enum ttm_bo_type type = ttm_bo_type_device;
	struct vpod_bo *bo;
	int ret;

	bo = kzalloc_obj(*bo, GFP_KERNEL_ACCOUNT);
	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->tbo.base.funcs = &vpod_gem_funcs;
	drm_gem_private_object_init(&vdev->drm, &bo->tbo.base, size);
	amdgpu_ualink_dmabuf_slot_init(&bo->slot, &bo->tbo.base,
				       imp ? &imp->file : NULL);
	bo->domain = domain;
	bo->imp = imp;
	switch (domain) {
	case AMDGPU_UALINK_VPOD_DOMAIN_VRAM:
		bo->place.mem_type = TTM_PL_VRAM;
		break;
	case AMDGPU_UALINK_VPOD_DOMAIN_SYSTEM:
		bo->place.mem_type = TTM_PL_SYSTEM;
		break;
	default:	/* an import: no mmap offset, ever */
		bo->place.mem_type = VPOD_PL_NPA;
		type = ttm_bo_type_kernel;
		break;
	}
	bo->placement.num_placement = 1;
	bo->placement.placement = &bo->place;
	/* on failure TTM calls vpod_bo_destroy() */
	ret = ttm_bo_init_validate(&vdev->bdev, &bo->tbo, type, &bo->placement,
				   0, true, NULL, NULL, vpod_bo_destroy);
	if (ret)
		return ERR_PTR(ret);
	if (domain == AMDGPU_UALINK_VPOD_DOMAIN_VRAM)
		memset(node->vram + ((u64)bo->tbo.resource->start << PAGE_SHIFT),
		       0, size);
	return bo;
}

/*
 * The buffer object of an import: the one it has, or a new one. Takes over
 * the caller's reference to @imp in all cases.
 */
static struct vpod_bo *vpod_import_bo(struct amdgpu_ualink_vpod_drm *vdev,
				      struct amdgpu_ualink_import *imp)
{
	struct vpod_bo *bo;

	mutex_lock(&vdev->import_lock);
	bo = imp->obj;
	if (bo && kref_get_unless_zero(&bo->tbo.base.refcount)) {
		mutex_unlock(&vdev->import_lock);
		amdgpu_ualink_import_put(imp);
		return bo;
	}
	bo = vpod_bo_create(vdev, imp->size, 0, imp);
	if (IS_ERR(bo)) {
		mutex_unlock(&vdev->import_lock);
		amdgpu_ualink_import_put(imp);
		return bo;
	}
	/* revokes it at once if the import died meanwhile */
	amdgpu_ualink_import_set_obj(imp, bo);
	mutex_unlock(&vdev->import_lock);
	return bo;
}

static bool vpod_bo_get(void *priv, void *obj)
{
	struct vpod_bo *bo = obj;

	return kref_get_unless_zero(&bo->tbo.base.refcount);
}

static void vpod_bo_put(void *priv, void *obj)
{
	struct vpod_bo *bo = obj;

	drm_gem_object_put(&bo->tbo.base);
}

static int vpod_bo_pin(void *priv, void *obj, bool intr)
{
	struct amdgpu_ualink_vpod_node *node = priv;
	struct vpod_bo *bo = obj;
	int ret;

	/* debugfs pin_hold: an export's pin that waits, as for an eviction */
	if (intr) {
		ret = amdgpu_ualink_vpod_hold_wait(&node->pin_hold);
		if (ret)
			return ret;
	}
	ret = ttm_bo_reserve(&bo->tbo, intr, false, NULL);
	if (ret)
		return ret;
	ttm_bo_pin(&bo->tbo);
	ttm_bo_unreserve(&bo->tbo);
	return 0;
}

static void vpod_bo_unpin(void *priv, void *obj)
{
	struct vpod_bo *bo = obj;

	WARN_ON(ttm_bo_reserve(&bo->tbo, false, false, NULL));
	ttm_bo_unpin(&bo->tbo);
	ttm_bo_unreserve(&bo->tbo);
}

static bool vpod_bo_next(struct amdgpu_ualink_pt_cursor *cur)
{
	return false;	/* VRAM buffers are contiguous */
}

static void vpod_bo_cursor(void *priv, void *obj, struct amdgpu_ualink_pt_cursor *cur)
{
	struct vpod_bo *bo = obj;

	cur->addr = (u64)bo->tbo.resource->start << PAGE_SHIFT;
	cur->size = bo->tbo.base.size;
	cur->next = vpod_bo_next;
}

static int vpod_bo_allow(void *priv, u16 importer, u64 npa, u64 size)
{
	return amdgpu_ualink_vpod_allow(priv, importer, npa, size);
}

static void vpod_bo_deny(void *priv, u16 importer, u64 npa, u64 size)
{
	amdgpu_ualink_vpod_deny(priv, importer, npa, size);
}

static int vpod_bo_shootdown(void *priv, u16 importer, u64 npa, u64 size)
{
	return amdgpu_ualink_vpod_shootdown(priv, importer, npa, size);
}

/*
 * Revocation: a TTM move to the pool's dead resource, at once; the jobs
 * that use the buffer (DRM_IOCTL_AMDGPU_UALINK_VPOD_GPU_JOB) go to the
 * core, which releases the range when they are done.
 */
static struct dma_fence *vpod_bo_revoke(void *priv, void *obj)
{
	struct ttm_operation_ctx ctx = {};
	struct vpod_bo *bo = obj;
	struct dma_fence *fence;
	int ret;

	WARN_ON(ttm_bo_reserve(&bo->tbo, false, false, NULL));
	bo->revoked = true;
	WARN_ON(ttm_bo_validate(&bo->tbo, &bo->placement, &ctx));
	ret = dma_resv_get_singleton(bo->tbo.base.resv, DMA_RESV_USAGE_BOOKKEEP,
				     &fence);
	ttm_bo_unreserve(&bo->tbo);
	return ret ? ERR_PTR(ret) : fence;
}

/* The core's callbacks for the buffers of accelerators with a DRM device. */
const struct amdgpu_ualink_dev_ops amdgpu_ualink_vpod_bo_ops = {
	.get = vpod_bo_get,
	.put = vpod_bo_put,
	.pin = vpod_bo_pin,
	.unpin = vpod_bo_unpin,
	.cursor = vpod_bo_cursor,
	.member = amdgpu_ualink_vpod_member,
	.allow = vpod_bo_allow,
	.deny = vpod_bo_deny,
	.shootdown = vpod_bo_shootdown,
	.revoke = vpod_bo_revoke,
};

/* The uAPI's state of the accelerator: INFO's, and the ioctl's check */
static u32 vpod_state(const struct amdgpu_ualink_vpod_drm *vdev)
{
	static const u32 states[] = {
		[AMDGPU_UALINK_VPOD_ACTIVE] = AMDGPU_UALINK_STATE_ACTIVE,
		[AMDGPU_UALINK_VPOD_RESETTING] = AMDGPU_UALINK_STATE_RESETTING,
		[AMDGPU_UALINK_VPOD_OFFLINE] = AMDGPU_UALINK_STATE_OFFLINE,
	};

	return states[amdgpu_ualink_vpod_state(vdev->node)];
}

static void vpod_info(void *priv, struct drm_amdgpu_ualink_info *info)
{
	struct amdgpu_ualink_vpod_drm *vdev = priv;

	amdgpu_ualink_vpod_info(vdev->node, &info->vpod_id, &info->vpod_size);
	info->state = vpod_state(priv);
}

static void vpod_active(void *priv, unsigned long *mask)
{
	struct amdgpu_ualink_vpod_drm *vdev = priv;

	amdgpu_ualink_vpod_active(vdev->node, mask);
}

/* This kernel drives the accelerators with a DRM device. */
static void vpod_local(void *priv, unsigned long *mask)
{
	bitmap_set(mask, amdgpu_ualink_vpod->first_drm,
		   amdgpu_ualink_vpod->num_drm);
}

/*
 * The emulated fabric is no UALink or UALoE link: it says so, and how many
 * accelerators the pod has; it has no speed or identity of its own.
 */
static void vpod_link(void *priv, struct amdgpu_ualink_sysfs_link *link)
{
	link->link_type = "emulated";
	link->ppod_size = amdgpu_ualink_vpod->num_nodes;
}

/* Accesses to our window the emulated fabric refused (its ``faults``). */
static u64 vpod_fabric_refusals(void *priv)
{
	struct amdgpu_ualink_vpod_drm *vdev = priv;

	return amdgpu_ualink_vpod_faults(vdev->node);
}

static const struct amdgpu_ualink_sysfs_ops vpod_sysfs_ops = {
	.info = vpod_info,
	.active = vpod_active,
	.local = vpod_local,
	.link = vpod_link,
	.fabric_refusals = vpod_fabric_refusals,
};

static int vpod_export_obj(void *priv, struct drm_file *file, u32 gem_handle,
			   void **obj, u64 *size, void ***slot)
{
	struct drm_gem_object *gobj = drm_gem_object_lookup(file, gem_handle);
	struct vpod_bo *bo;

	if (!gobj)
		return -ENOENT;
	bo = to_bo(gobj);
	if (bo->domain != AMDGPU_UALINK_VPOD_DOMAIN_VRAM) {
		drm_gem_object_put(gobj);
		return -EPERM;
	}
	*obj = bo;
	*size = gobj->size;
	*slot = &bo->export;
	return 0;
}

static int vpod_import_fd(void *priv, struct drm_file *file,
			  struct amdgpu_ualink_import *imp, void *local,
			  u32 flags)
{
	struct vpod_bo *bo = local;
	int fd;

	if (!imp)
		return amdgpu_ualink_gem_fd(file, &bo->tbo.base, flags);
	bo = vpod_import_bo(priv, imp);
	if (IS_ERR(bo))
		return PTR_ERR(bo);
	fd = amdgpu_ualink_dmabuf_fd(&bo->slot, flags);
	drm_gem_object_put(&bo->tbo.base);
	return fd;
}

/* PRIME's handle of the import's dma-buf: one per buffer and file */
static int vpod_import_handle(void *priv, struct drm_file *file,
			      struct amdgpu_ualink_import *imp, void *local,
			      u32 *gem_handle)
{
	struct vpod_bo *bo = local;
	int ret;

	if (!imp)
		return amdgpu_ualink_gem_handle(file, &bo->tbo.base, gem_handle);
	bo = vpod_import_bo(priv, imp);
	if (IS_ERR(bo))
		return PTR_ERR(bo);
	ret = amdgpu_ualink_dmabuf_handle(file, &bo->slot, gem_handle);
	drm_gem_object_put(&bo->tbo.base);
	return ret;
}

static bool vpod_lock_handles(void *priv, void *obj)
{
	struct drm_gem_object *gobj = &((struct vpod_bo *)obj)->tbo.base;

	mutex_lock(&gobj->dev->object_name_lock);
	return gobj->handle_count;
}

static void vpod_unlock_handles(void *priv, void *obj)
{
	struct drm_gem_object *gobj = &((struct vpod_bo *)obj)->tbo.base;

	mutex_unlock(&gobj->dev->object_name_lock);
}

static const struct amdgpu_ualink_gem_ops vpod_gem_ops = {
	.info = vpod_info,
	.export_obj = vpod_export_obj,
	.lock_handles = vpod_lock_handles,
	.unlock_handles = vpod_unlock_handles,
	.put = vpod_bo_put,
	.import_fd = vpod_import_fd,
	.import_handle = vpod_import_handle,
};

static struct amdgpu_ualink_vpod_drm *drm_vdev(struct drm_device *drm)
{
	return container_of(drm, struct amdgpu_ualink_vpod_drm, drm);
}

static int vpod_ualink_ioctl(struct drm_device *drm, void *data,
			     struct drm_file *file)
{
	struct amdgpu_ualink_vpod_drm *vdev = drm_vdev(drm);

	return amdgpu_ualink_ioctl(&vdev->node->udev, vpod_state(vdev),
				   &vpod_gem_ops, vdev, file, data);
}

static int vpod_gem_create_ioctl(struct drm_device *drm, void *data,
				 struct drm_file *file)
{
	struct amdgpu_ualink_vpod_drm *vdev = drm_vdev(drm);
	struct drm_amdgpu_ualink_vpod_gem_create *args = data;
	struct vpod_bo *bo;
	u64 size;
	int ret;

	if (args->handle || !args->size || args->size > vdev->node->vram_size ||
	    (args->domain != AMDGPU_UALINK_VPOD_DOMAIN_VRAM &&
	     args->domain != AMDGPU_UALINK_VPOD_DOMAIN_SYSTEM))
		return -EINVAL;
	size = PAGE_ALIGN(args->size);
	bo = vpod_bo_create(vdev, size, args->domain, NULL);
	/*
	 * TTM reports a full memory type as -ENOMEM ("for backward
	 * compatibility", ttm_bo_validate()): VRAM is what ran out.
	 */
	if (bo == ERR_PTR(-ENOMEM) && args->domain == AMDGPU_UALINK_VPOD_DOMAIN_VRAM)
		return -ENOSPC;
	if (IS_ERR(bo))
		return PTR_ERR(bo);
	ret = drm_gem_handle_create(file, &bo->tbo.base, &args->handle);
	drm_gem_object_put(&bo->tbo.base);
	return ret;
}

static int vpod_gem_mmap_ioctl(struct drm_device *drm, void *data,
			       struct drm_file *file)
{
	struct drm_amdgpu_ualink_vpod_gem_mmap *args = data;
	struct drm_gem_object *obj;
	int ret = 0;

	if (args->pad || args->offset)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	if (to_bo(obj)->imp)
		ret = -EPERM;	/* another accelerator's memory */
	else
		args->offset = drm_vma_node_offset_addr(&obj->vma_node);
	drm_gem_object_put(obj);
	return ret;
}

/* One chunk of a GPU access, to or from @buf. */
static int vpod_access(struct vpod_bo *bo, u64 offset, void *buf, size_t size,
		       bool write)
{
	struct amdgpu_ualink_vpod_node *node = bo_vdev(bo)->node;
	void *vram;
	u64 npa;
	int ret;

	if (!bo->imp) {
		/* VRAM: never moves */
		vram = node->vram + ((u64)bo->tbo.resource->start << PAGE_SHIFT) + offset;
		if (write)
			memcpy(vram, buf, size);
		else
			memcpy(buf, vram, size);
		return 0;
	}
	ret = dma_resv_lock_interruptible(bo->tbo.base.resv, NULL);
	if (ret)
		return ret;
	/*
	 * Whatever the import's state: an NPA still in its resource goes to
	 * the fabric, which decides (a revoked import's move to the dead
	 * resource took the NPA away; if that move failed, the exporter's
	 * access check stops it, or in another kernel its tables only).
	 */
	npa = amdgpu_ualink_npa_res_npa(bo->tbo.resource);
	ret = npa ? amdgpu_ualink_vpod_fabric_access(node, npa + offset, buf,
						     size, write) : -ENODEV;
	dma_resv_unlock(bo->tbo.base.resv);
	return ret;
}

#define VPOD_ACCESS_CHUNK	SZ_64K

static int vpod_gpu_access_ioctl(struct drm_device *drm, void *data,
				 struct drm_file *file)
{
	struct drm_amdgpu_ualink_vpod_gpu_access *args = data;
	bool write = args->flags & AMDGPU_UALINK_VPOD_ACCESS_WRITE;
	u8 __user *user = u64_to_user_ptr(args->data);
	struct drm_gem_object *obj;
	struct vpod_bo *bo;
	u64 done;
	void *buf;
	int ret = 0;

	if (args->flags & ~AMDGPU_UALINK_VPOD_ACCESS_WRITE || !args->size ||
	    args->size > AMDGPU_UALINK_VPOD_ACCESS_MAX)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	bo = to_bo(obj);
	if (args->offset > obj->size || args->size > obj->size - args->offset) {
		ret = -EINVAL;
		goto out;
	}
	if (bo->domain == AMDGPU_UALINK_VPOD_DOMAIN_SYSTEM) {
		ret = -EOPNOTSUPP;
		goto out;
	}
	buf = kvmalloc(min_t(u64, args->size, VPOD_ACCESS_CHUNK), GFP_KERNEL_ACCOUNT);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	/* no reservation is held while user memory faults */
	for (done = 0; !ret && done < args->size; done += VPOD_ACCESS_CHUNK) {
		size_t n = min_t(u64, args->size - done, VPOD_ACCESS_CHUNK);

		if (write && copy_from_user(buf, user + done, n)) {
			ret = -EFAULT;
			break;
		}
		ret = vpod_access(bo, args->offset + done, buf, n, write);
		if (!ret && !write && copy_to_user(user + done, buf, n))
			ret = -EFAULT;
	}
	kvfree(buf);
out:
	drm_gem_object_put(obj);
	return ret;
}

static const char *vpod_job_name(struct dma_fence *f)
{
	return AMDGPU_UALINK_VPOD_DRIVER_NAME;
}

static const struct dma_fence_ops vpod_job_ops = {
	.get_driver_name = vpod_job_name,
	.get_timeline_name = vpod_job_name,
};

/* End a running job: signal it, unlist it. The device's job_lock held. */
static void vpod_job_end_locked(struct amdgpu_ualink_vpod_drm *vdev,
				struct vpod_job *job)
{
	lockdep_assert_held(&vdev->job_lock);
	list_del_init(&job->link);
	job->bo->job = NULL;
	dma_fence_signal(&job->base);
}

/* After vpod_job_end_locked(), without the lock: drop what it held. */
static void vpod_job_put(struct vpod_job *job)
{
	drm_gem_object_put(&job->bo->tbo.base);
	dma_fence_put(&job->base);
}

static void vpod_job_timeout(struct work_struct *work)
{
	struct vpod_job *job = container_of(work, struct vpod_job, timeout.work);
	struct amdgpu_ualink_vpod_drm *vdev = bo_vdev(job->bo);
	bool ended = false;

	mutex_lock(&vdev->job_lock);
	if (!list_empty(&job->link)) {
		vpod_job_end_locked(vdev, job);
		ended = true;
	}
	mutex_unlock(&vdev->job_lock);
	if (ended)	/* else whoever ended it puts it, after cancelling us */
		vpod_job_put(job);
}

/* End @job, ended already under the lock by the caller: then put it. */
static void vpod_job_reap(struct vpod_job *job)
{
	cancel_delayed_work_sync(&job->timeout);
	vpod_job_put(job);
}

static int vpod_job_start(struct amdgpu_ualink_vpod_drm *vdev,
			  struct vpod_bo *bo, unsigned int timeout_ms)
{
	struct vpod_job *job;
	int ret;

	job = kzalloc_obj(*job, GFP_KERNEL_ACCOUNT);
	if (!job)
		return -ENOMEM;
	spin_lock_init(&job->lock);
	dma_fence_init(&job->base, &vpod_job_ops, &job->lock,
		       dma_fence_context_alloc(1), 1);
	INIT_DELAYED_WORK(&job->timeout, vpod_job_timeout);
	INIT_LIST_HEAD(&job->link);
	job->bo = bo;

	mutex_lock(&vdev->job_lock);
	ret = -EBUSY;
	if (bo->job)
		goto unlock;
	ret = ttm_bo_reserve(&bo->tbo, true, false, NULL);
	if (ret)
		goto unlock;
	ret = -ENODEV;
	if (bo->revoked)
		goto unreserve;
	ret = dma_resv_reserve_fences(bo->tbo.base.resv, 1);
	if (ret)
		goto unreserve;
	dma_resv_add_fence(bo->tbo.base.resv, &job->base, DMA_RESV_USAGE_WRITE);
	drm_gem_object_get(&bo->tbo.base);
	bo->job = job;
	list_add_tail(&job->link, &vdev->jobs);
	schedule_delayed_work(&job->timeout, msecs_to_jiffies(timeout_ms));
unreserve:
	ttm_bo_unreserve(&bo->tbo);
unlock:
	mutex_unlock(&vdev->job_lock);
	if (ret) {
		dma_fence_signal(&job->base);
		dma_fence_put(&job->base);
	}
	return ret;
}

static int vpod_gpu_job_ioctl(struct drm_device *drm, void *data,
			      struct drm_file *file)
{
	struct amdgpu_ualink_vpod_drm *vdev = drm_vdev(drm);
	struct drm_amdgpu_ualink_vpod_gpu_job *args = data;
	struct vpod_job *job = NULL;
	struct drm_gem_object *obj;
	struct vpod_bo *bo;
	int ret = 0;

	if (args->pad ||
	    (args->op == AMDGPU_UALINK_VPOD_JOB_START &&
	     (!args->timeout_ms || args->timeout_ms > AMDGPU_UALINK_VPOD_JOB_MAX_MS)) ||
	    (args->op == AMDGPU_UALINK_VPOD_JOB_END && args->timeout_ms) ||
	    (args->op != AMDGPU_UALINK_VPOD_JOB_START &&
	     args->op != AMDGPU_UALINK_VPOD_JOB_END))
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	bo = to_bo(obj);
	if (bo->domain == AMDGPU_UALINK_VPOD_DOMAIN_SYSTEM) {
		ret = -EOPNOTSUPP;
	} else if (args->op == AMDGPU_UALINK_VPOD_JOB_START) {
		ret = vpod_job_start(vdev, bo, args->timeout_ms);
	} else {
		mutex_lock(&vdev->job_lock);
		job = bo->job;
		if (job)
			vpod_job_end_locked(vdev, job);
		else
			ret = -ESRCH;
		mutex_unlock(&vdev->job_lock);
	}
	drm_gem_object_put(obj);
	if (job)
		vpod_job_reap(job);
	return ret;
}

/* The device goes: every job ends now. */
static void vpod_jobs_end(struct amdgpu_ualink_vpod_drm *vdev)
{
	struct vpod_job *job;

	for (;;) {
		mutex_lock(&vdev->job_lock);
		job = list_first_entry_or_null(&vdev->jobs, struct vpod_job, link);
		if (job)
			vpod_job_end_locked(vdev, job);
		mutex_unlock(&vdev->job_lock);
		if (!job)
			break;
		vpod_job_reap(job);
	}
}

/* PRIME: imports of this device come back; other dma-bufs as PRIME does. */
static struct drm_gem_object *vpod_prime_import(struct drm_device *drm,
						struct dma_buf *dma_buf)
{
	struct drm_gem_object *obj = amdgpu_ualink_dmabuf_import(drm, dma_buf);

	return obj ?: drm_gem_prime_import(drm, dma_buf);
}

static const struct drm_ioctl_desc vpod_ioctls[] = {
	DRM_IOCTL_DEF_DRV(AMDGPU_UALINK_VPOD_GEM_CREATE, vpod_gem_create_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(AMDGPU_UALINK_VPOD_GEM_MMAP, vpod_gem_mmap_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(AMDGPU_UALINK_VPOD_GPU_ACCESS, vpod_gpu_access_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(AMDGPU_UALINK_VPOD_GPU_JOB, vpod_gpu_job_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(AMDGPU_UALINK, vpod_ualink_ioctl, DRM_RENDER_ALLOW),
};

DEFINE_DRM_GEM_FOPS(vpod_fops);

static const struct drm_driver vpod_driver = {
	.driver_features = DRIVER_GEM | DRIVER_RENDER,
	.ioctls = vpod_ioctls,
	.num_ioctls = ARRAY_SIZE(vpod_ioctls),
	.fops = &vpod_fops,
	.gem_prime_import = vpod_prime_import,
	.name = AMDGPU_UALINK_VPOD_DRIVER_NAME,
	.desc = "Emulated UALink pod",
	.major = 1,
	.minor = 0,
};

/* The ualink/ directory goes: no change of state is told to it any more. */
static void vpod_sysfs_remove(struct amdgpu_ualink_vpod_node *node)
{
	struct amdgpu_ualink_sysfs *sysfs;

	scoped_guard(mutex, &node->control_lock) {
		sysfs = node->drm->sysfs;
		node->drm->sysfs = NULL;
	}
	amdgpu_ualink_sysfs_destroy(sysfs);
}

/**
 * amdgpu_ualink_vpod_drm_init - give an accelerator its DRM device
 * @node: the accelerator, whose core state is up
 *
 * Returns: 0 or a negative errno.
 */
int amdgpu_ualink_vpod_drm_init(struct amdgpu_ualink_vpod_node *node)
{
	struct amdgpu_ualink_sysfs *sysfs;
	struct amdgpu_ualink_vpod_drm *vdev;
	struct platform_device *pdev;
	int ret;

	pdev = platform_device_register_simple(AMDGPU_UALINK_VPOD_DRIVER_NAME,
					       node->id, NULL, 0);
	if (IS_ERR(pdev))
		return PTR_ERR(pdev);
	if (!devres_open_group(&pdev->dev, NULL, GFP_KERNEL)) {
		ret = -ENOMEM;
		goto err_pdev;
	}
	dma_coerce_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	vdev = devm_drm_dev_alloc(&pdev->dev, &vpod_driver,
				  struct amdgpu_ualink_vpod_drm, drm);
	if (IS_ERR(vdev)) {
		ret = PTR_ERR(vdev);
		goto err_group;
	}
	vdev->node = node;
	vdev->pdev = pdev;
	mutex_init(&vdev->import_lock);
	mutex_init(&vdev->job_lock);
	INIT_LIST_HEAD(&vdev->jobs);
	ret = ttm_device_init(&vdev->bdev, &vpod_ttm_funcs, &pdev->dev,
			      vdev->drm.anon_inode->i_mapping,
			      vdev->drm.vma_offset_manager, 0);
	if (ret)
		goto err_group;
	ret = ttm_range_man_init(&vdev->bdev, TTM_PL_VRAM, false,
				 node->vram_size >> PAGE_SHIFT);
	if (ret)
		goto err_ttm;
	ret = amdgpu_ualink_npa_pool_init(&vdev->pool, &vdev->bdev, VPOD_PL_NPA,
					  vpod_bo_range);
	if (ret)
		goto err_vram;
	node->drm = vdev;
	sysfs = amdgpu_ualink_sysfs_create(&pdev->dev, &node->udev,
					   &vpod_sysfs_ops, vdev);
	if (IS_ERR(sysfs)) {
		ret = PTR_ERR(sysfs);
		goto err_pool;
	}
	scoped_guard(mutex, &node->control_lock)
		vdev->sysfs = sysfs;
	ret = drm_dev_register(&vdev->drm, 0);
	if (ret)
		goto err_sysfs;
	return 0;

err_sysfs:
	vpod_sysfs_remove(node);
err_pool:
	node->drm = NULL;
	amdgpu_ualink_npa_pool_fini(&vdev->pool, &vdev->bdev, VPOD_PL_NPA);
err_vram:
	ttm_range_man_fini(&vdev->bdev, TTM_PL_VRAM);
err_ttm:
	ttm_device_fini(&vdev->bdev);
err_group:
	devres_release_group(&pdev->dev, NULL);
err_pdev:
	platform_device_unregister(pdev);
	return ret;
}

/**
 * amdgpu_ualink_vpod_drm_state_changed - an accelerator's state changed
 * @node: the accelerator, its &amdgpu_ualink_vpod_node.control_lock held
 *
 * Tells its ``ualink/`` directory, which wakes pollers of ``accel_state``
 * and sends the device's uevent.
 */
void amdgpu_ualink_vpod_drm_state_changed(struct amdgpu_ualink_vpod_node *node)
{
	lockdep_assert_held(&node->control_lock);
	if (node->drm)
		amdgpu_ualink_sysfs_state_changed(node->drm->sysfs);
}

/**
 * amdgpu_ualink_vpod_drm_fini - remove an accelerator's DRM device
 * @node: the accelerator; no file of its device is open (the module is
 *	  going), so no buffer is left
 */
void amdgpu_ualink_vpod_drm_fini(struct amdgpu_ualink_vpod_node *node)
{
	struct amdgpu_ualink_vpod_drm *vdev = node->drm;
	struct platform_device *pdev = vdev->pdev;

	/* drm_dev_unplug() unregistered it already */
	if (!drm_dev_is_unplugged(&vdev->drm))
		drm_dev_unregister(&vdev->drm);
	vpod_sysfs_remove(node);
	/* what revocations wait for */
	vpod_jobs_end(vdev);
	/* a pin's last reference dropped on the mailbox's worker, releases */
	amdgpu_ualink_dev_flush(&node->udev);
	/* buffers whose destruction TTM delayed go first */
	flush_workqueue(vdev->bdev.wq);
	WARN_ON(amdgpu_ualink_npa_pool_fini(&vdev->pool, &vdev->bdev, VPOD_PL_NPA));
	ttm_range_man_fini(&vdev->bdev, TTM_PL_VRAM);
	ttm_device_fini(&vdev->bdev);
	mutex_destroy(&vdev->import_lock);
	mutex_destroy(&vdev->job_lock);
	node->drm = NULL;
	devres_release_group(&pdev->dev, NULL);
	platform_device_unregister(pdev);
}

/**
 * amdgpu_ualink_vpod_drm_unplug - unplug an accelerator's DRM device
 * @node: the accelerator
 *
 * What amdgpu's PCI remove does, in its order: DRM's unplug first, after
 * which every ioctl of the device's open files fails with -ENODEV
 * (drm_ioctl()) and its render node is gone; then the accelerator leaves
 * the pod, as its UALink IP block's hw_fini would make it, and its peers
 * drop what they held from and for it. The files stay open; what they
 * hold goes as they are closed, and the device itself with the module.
 * There is no replug. A second unplug does nothing.
 *
 * Returns: 0; -ENODEV for an accelerator without a DRM device here
 * (fabric-only, or another kernel's); -EBUSY while it is resetting.
 */
int amdgpu_ualink_vpod_drm_unplug(struct amdgpu_ualink_vpod_node *node)
{
	struct amdgpu_ualink_vpod_drm *vdev = node->drm;

	if (!vdev)
		return -ENODEV;
	scoped_guard(mutex, &node->control_lock) {
		if (node->state == AMDGPU_UALINK_VPOD_RESETTING)
			return -EBUSY;
		if (node->unplugged)
			return 0;
		/* from here on no reset begins and it does not come back */
		node->unplugged = true;
	}
	drm_dev_unplug(&vdev->drm);
	return amdgpu_ualink_vpod_set_offline(node, true);
}

/**
 * amdgpu_ualink_vpod_drm_name - the render node of an accelerator
 * @node: the accelerator
 *
 * Returns: "renderD<minor>", "-" for a fabric-only accelerator, or
 * "remote" for one another kernel hosts.
 */
const char *amdgpu_ualink_vpod_drm_name(struct amdgpu_ualink_vpod_node *node)
{
	if (node->remote)
		return "remote";
	if (!node->drm || !node->drm->drm.render)
		return "-";
	return node->drm->drm.render->kdev ? dev_name(node->drm->drm.render->kdev) : "-";
}
