// SPDX-License-Identifier: GPL-2.0 OR MIT

#include <linux/slab.h>
#include <linux/workqueue.h>

#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/ttm/ttm_bo.h>

#include "amdgpu.h"
#include "amdgpu_irq.h"
#include "amdgpu_object.h"
#include "amdgpu_res_cursor.h"
#include "amdgpu_ttm.h"

#include "amdgpu_ualink_amdgpu.h"
#include "amdgpu_ualink_dev.h"
#include "amdgpu_ualink_ioctl.h"
#include "amdgpu_ualink_npa.h"
#include "amdgpu_ualink_npa_pool.h"
#include "amdgpu_ualink_pt.h"

/**
 * DOC: UALink in amdgpu
 *
 * A device with a UALink IP gets a &struct amdgpu_ualink in
 * &amdgpu_device.ualink from amdgpu_ualink_init(), which the IP's block
 * calls from its sw_init with the IP's &struct amdgpu_ualink_hw_funcs; every
 * other device keeps the pointer NULL, allocates nothing, and answers the
 * UALink ioctl with -EOPNOTSUPP after the shared argument checks. No GPU
 * this kernel supports has a UALink IP, and the register-level programming
 * of one is not public: what the IP must provide is exactly
 * &struct amdgpu_ualink_hw_funcs, and everything above it is here.
 *
 * Life cycle: suspend and a GPU reset (amdgpu_ualink_pre_reset(), beside
 * amdkfd's pre-reset hook) take the device out of the pod: a new mailbox
 * generation, every grant dropped and unpinned, every import revoked
 * (amdgpu_ualink_dev_reset()); peers clean up when they hear of it. Resume
 * and the end of the reset (amdgpu_ualink_post_reset()) make it active
 * again. Exports survive both.
 *
 * Interrupts: the IP raises one interrupt source for incoming mailbox
 * messages and shootdown requests; its handler, in hard-IRQ context, only
 * marks the sender (amdgpu_ualink_mbox_doorbell() is IRQ-safe) or queues
 * the shootdown work.
 *
 * Export side: a GEM handle names an &amdgpu_bo; userptr, imported,
 * doorbell, GTT-only and UALink-imported buffers are refused with -EPERM;
 * an exported buffer is pinned in VRAM while it has importers and its
 * VRAM is walked with amdgpu_res_first()/amdgpu_res_next() for the NPA
 * page tables; the export ends in &drm_gem_object_funcs.handles_gone.
 *
 * Not written yet: the import side in amdgpu terms (the &amdgpu_bo of an
 * import in %AMDGPU_PL_NPA, its dma-buf, its GPUVM mapping with the
 * fabric's PTE flags); until then the import operations fail with
 * -EOPNOTSUPP on a device that has UALink, which none has.
 */

/* &amdgpu_iv_entry.src_data[1] of a UALink interrupt */
#define AMDGPU_UALINK_IV_MESSAGE	0
#define AMDGPU_UALINK_IV_SHOOTDOWN	1

/**
 * struct amdgpu_ualink - a device's UALink state, &amdgpu_device.ualink
 */
struct amdgpu_ualink {
	/** @adev: the device */
	struct amdgpu_device *adev;
	/** @hw: the IP's functions */
	const struct amdgpu_ualink_hw_funcs *hw;
	/** @udev: the core's state */
	struct amdgpu_ualink_dev udev;
	/** @pt: the NPA page tables */
	struct amdgpu_ualink_pt pt;
	/** @pool: the manager of %AMDGPU_PL_NPA */
	struct amdgpu_ualink_npa_pool pool;
	/** @irq: incoming messages and shootdown requests */
	struct amdgpu_irq_src irq;
	/** @shootdown_work: serves the senders in @shootdowns */
	struct work_struct shootdown_work;
	/** @shootdowns: exporters with a pending shootdown request */
	unsigned long *shootdowns;
	/** @state: an AMDGPU_UALINK_STATE_* value */
	u32 state;
	/**
	 * @res_cur: the VRAM walk of the export being mapped, between the
	 * core's cursor call and the end of its map, under @udev.lock
	 */
	struct amdgpu_res_cursor res_cur;
};

static struct amdgpu_ualink *to_ualink(void *priv)
{
	return priv;
}

/* The NPA pool asks for the range granted to an import. */
static int amdgpu_ualink_bo_range(struct ttm_buffer_object *tbo, u64 *npa,
				  u64 *size)
{
	struct amdgpu_bo *abo = ttm_to_amdgpu_bo(tbo);

	if (abo->ualink_revoked)
		return -ENODEV;
	return -EINVAL;	/* no import buffer is made yet */
}

static bool amdgpu_ualink_get(void *priv, void *obj)
{
	struct amdgpu_bo *abo = obj;

	return kref_get_unless_zero(&abo->tbo.base.refcount);
}

static int amdgpu_ualink_pin(void *priv, void *obj)
{
	struct amdgpu_bo *abo = obj;
	int ret;

	ret = amdgpu_bo_reserve(abo, true);
	if (ret)
		return ret;
	ret = amdgpu_bo_pin(abo, AMDGPU_GEM_DOMAIN_VRAM);
	amdgpu_bo_unreserve(abo);
	return ret;
}

static void amdgpu_ualink_unpin(void *priv, void *obj)
{
	struct amdgpu_bo *abo = obj;

	WARN_ON(amdgpu_bo_reserve(abo, true));
	amdgpu_bo_unpin(abo);
	amdgpu_bo_unreserve(abo);
}

static bool amdgpu_ualink_cursor_next(struct amdgpu_ualink_pt_cursor *cur)
{
	struct amdgpu_res_cursor *res = cur->priv;

	amdgpu_res_next(res, res->size);
	if (!res->remaining)
		return false;
	cur->addr = res->start;
	cur->size = res->size;
	return true;
}

/* The VRAM of a pinned export, chunk by chunk, for the NPA page tables. */
static void amdgpu_ualink_cursor(void *priv, void *obj,
				 struct amdgpu_ualink_pt_cursor *cur)
{
	struct amdgpu_ualink *ualink = to_ualink(priv);
	struct amdgpu_bo *abo = obj;

	lockdep_assert_held(&ualink->udev.lock);
	amdgpu_res_first(abo->tbo.resource, 0, amdgpu_bo_size(abo),
			 &ualink->res_cur);
	cur->priv = &ualink->res_cur;
	cur->addr = ualink->res_cur.start;
	cur->size = ualink->res_cur.size;
	cur->next = amdgpu_ualink_cursor_next;
}

static bool amdgpu_ualink_member(void *priv, u16 peer)
{
	struct amdgpu_ualink *ualink = to_ualink(priv);

	return READ_ONCE(ualink->state) == AMDGPU_UALINK_STATE_ACTIVE &&
	       ualink->hw->member(ualink->adev, peer);
}

static void amdgpu_ualink_shootdown(void *priv, u16 importer, u64 npa, u64 size)
{
	struct amdgpu_ualink *ualink = to_ualink(priv);

	ualink->hw->shootdown(ualink->adev, importer, npa, size);
}

/* Revocation: the NPA pool's move to a dead resource. */
static void amdgpu_ualink_revoke(void *priv, void *obj)
{
	struct ttm_operation_ctx ctx = {};
	struct amdgpu_bo *abo = obj;

	WARN_ON(amdgpu_bo_reserve(abo, true));
	abo->ualink_revoked = true;
	WARN_ON(ttm_bo_validate(&abo->tbo, &abo->placement, &ctx));
	amdgpu_bo_unreserve(abo);
}

static const struct amdgpu_ualink_dev_ops amdgpu_ualink_dev_ops = {
	.get = amdgpu_ualink_get,
	.pin = amdgpu_ualink_pin,
	.unpin = amdgpu_ualink_unpin,
	.cursor = amdgpu_ualink_cursor,
	.member = amdgpu_ualink_member,
	.shootdown = amdgpu_ualink_shootdown,
	.revoke = amdgpu_ualink_revoke,
};

static void amdgpu_ualink_info(void *priv, struct drm_amdgpu_ualink_info *info)
{
	struct amdgpu_ualink *ualink = to_ualink(priv);

	if (!ualink->hw->vpod(ualink->adev, &info->vpod_id, &info->vpod_size)) {
		info->vpod_id = 0;
		info->vpod_size = 0;
	}
	info->state = READ_ONCE(ualink->state);
}

/* What cannot be exported: only VRAM-capable buffers of our own. */
static bool amdgpu_ualink_exportable(struct amdgpu_bo *abo)
{
	return !amdgpu_ttm_tt_get_usermm(abo->tbo.ttm) &&
	       !abo->tbo.base.import_attach &&
	       !(abo->preferred_domains & AMDGPU_GEM_DOMAIN_DOORBELL) &&
	       (abo->allowed_domains & AMDGPU_GEM_DOMAIN_VRAM) &&
	       !(abo->tbo.resource &&
		 abo->tbo.resource->mem_type == AMDGPU_PL_NPA);
}

static int amdgpu_ualink_export_obj(void *priv, struct drm_file *file,
				    u32 gem_handle, void **obj, u64 *size,
				    void ***slot)
{
	struct drm_gem_object *gobj = drm_gem_object_lookup(file, gem_handle);
	struct amdgpu_bo *abo;

	if (!gobj)
		return -ENOENT;
	abo = gem_to_amdgpu_bo(gobj);
	if (!amdgpu_ualink_exportable(abo)) {
		drm_gem_object_put(gobj);
		return -EPERM;
	}
	*obj = abo;
	*size = amdgpu_bo_size(abo);
	*slot = &abo->ualink_export;
	return 0;
}

static void amdgpu_ualink_put(void *priv, void *obj)
{
	struct amdgpu_bo *abo = obj;

	drm_gem_object_put(&abo->tbo.base);
}

/* The import side in amdgpu terms is not written yet (see the DOC). */
static int amdgpu_ualink_import_fd(void *priv, struct drm_file *file,
				   struct amdgpu_ualink_import *imp, void *local,
				   u32 flags)
{
	if (imp)
		amdgpu_ualink_import_put(imp);
	else
		amdgpu_ualink_put(priv, local);
	return -EOPNOTSUPP;
}

static int amdgpu_ualink_import_handle(void *priv, struct drm_file *file,
				       struct amdgpu_ualink_import *imp,
				       void *local, u32 *gem_handle)
{
	return amdgpu_ualink_import_fd(priv, file, imp, local, 0);
}

static const struct amdgpu_ualink_gem_ops amdgpu_ualink_gem_ops = {
	.info = amdgpu_ualink_info,
	.export_obj = amdgpu_ualink_export_obj,
	.put = amdgpu_ualink_put,
	.import_fd = amdgpu_ualink_import_fd,
	.import_handle = amdgpu_ualink_import_handle,
};

/**
 * amdgpu_ualink_ioctl_amdgpu - DRM_IOCTL_AMDGPU_UALINK in amdgpu
 * @dev: the DRM device
 * @data: &struct drm_amdgpu_ualink, copied in
 * @filp: the calling file
 *
 * Returns: as amdgpu_ualink_ioctl(): on a device without UALink, -EINVAL
 * for a malformed argument and -EOPNOTSUPP otherwise.
 */
int amdgpu_ualink_ioctl_amdgpu(struct drm_device *dev, void *data,
			       struct drm_file *filp)
{
	struct amdgpu_ualink *ualink = drm_to_adev(dev)->ualink;

	return amdgpu_ualink_ioctl(ualink ? &ualink->udev : NULL,
				   &amdgpu_ualink_gem_ops, ualink, filp, data);
}

/**
 * amdgpu_ualink_gem_handles_gone - &drm_gem_object_funcs.handles_gone
 * @obj: an amdgpu GEM object whose handle count reached zero
 *
 * Ends its export, unless a handle was made again meanwhile.
 */
void amdgpu_ualink_gem_handles_gone(struct drm_gem_object *obj)
{
	struct amdgpu_ualink *ualink = drm_to_adev(obj->dev)->ualink;
	struct amdgpu_bo *abo = gem_to_amdgpu_bo(obj);
	void *exp = NULL;

	if (!ualink)
		return;
	mutex_lock(&obj->dev->object_name_lock);
	if (!obj->handle_count)
		exp = amdgpu_ualink_export_detach(&ualink->udev, &abo->ualink_export);
	mutex_unlock(&obj->dev->object_name_lock);
	amdgpu_ualink_export_destroy(&ualink->udev, &exp);
}

static int amdgpu_ualink_irq_set(struct amdgpu_device *adev,
				 struct amdgpu_irq_src *src, unsigned int type,
				 enum amdgpu_interrupt_state state)
{
	return adev->ualink->hw->irq_set(adev, state == AMDGPU_IRQ_STATE_ENABLE);
}

/* Hard-IRQ context: mark the sender, nothing more. */
static int amdgpu_ualink_irq_process(struct amdgpu_device *adev,
				     struct amdgpu_irq_src *src,
				     struct amdgpu_iv_entry *entry)
{
	struct amdgpu_ualink *ualink = adev->ualink;
	u16 sender = entry->src_data[0] & (AMDGPU_UALINK_MAX_ACCELS - 1);

	if (entry->src_data[1] == AMDGPU_UALINK_IV_SHOOTDOWN) {
		set_bit(sender, ualink->shootdowns);
		schedule_work(&ualink->shootdown_work);
	} else {
		amdgpu_ualink_mbox_doorbell(ualink->udev.mbox, sender);
	}
	return 1;
}

static const struct amdgpu_irq_src_funcs amdgpu_ualink_irq_funcs = {
	.set = amdgpu_ualink_irq_set,
	.process = amdgpu_ualink_irq_process,
};

static void amdgpu_ualink_shootdown_work(struct work_struct *work)
{
	struct amdgpu_ualink *ualink =
		container_of(work, struct amdgpu_ualink, shootdown_work);
	unsigned long exporter;

	for_each_set_bit(exporter, ualink->shootdowns, AMDGPU_UALINK_MAX_ACCELS)
		if (test_and_clear_bit(exporter, ualink->shootdowns))
			ualink->hw->shootdown_request(ualink->adev, exporter);
}

/**
 * amdgpu_ualink_init - give a device with a UALink IP its UALink state
 * @adev: the device
 * @hw: the IP's functions
 *
 * From the UALink IP block's sw_init, after TTM is up.
 *
 * Returns: 0 or a negative errno.
 */
int amdgpu_ualink_init(struct amdgpu_device *adev,
		       const struct amdgpu_ualink_hw_funcs *hw)
{
	struct amdgpu_ualink *ualink;
	int ret;

	ualink = kzalloc(sizeof(*ualink), GFP_KERNEL);
	if (!ualink)
		return -ENOMEM;
	ualink->shootdowns = bitmap_zalloc(AMDGPU_UALINK_MAX_ACCELS, GFP_KERNEL);
	if (!ualink->shootdowns) {
		ret = -ENOMEM;
		goto err_free;
	}
	ualink->adev = adev;
	ualink->hw = hw;
	ualink->state = AMDGPU_UALINK_STATE_ACTIVE;
	INIT_WORK(&ualink->shootdown_work, amdgpu_ualink_shootdown_work);
	ret = amdgpu_ualink_pt_init(&ualink->pt, hw->pt, hw->pte, adev);
	if (ret)
		goto err_bitmap;
	ret = amdgpu_ualink_dev_init(&ualink->udev, hw->accel_id(adev),
				     &amdgpu_ualink_dev_ops, ualink, hw->mbox,
				     adev, &ualink->pt);
	if (ret)
		goto err_pt;
	ret = amdgpu_ualink_npa_pool_init(&ualink->pool, &adev->mman.bdev,
					  AMDGPU_PL_NPA, amdgpu_ualink_bo_range);
	if (ret)
		goto err_dev;
	ualink->irq.num_types = 1;
	ualink->irq.funcs = &amdgpu_ualink_irq_funcs;
	ret = amdgpu_irq_add_id(adev, hw->irq_client, hw->irq_src, &ualink->irq);
	if (ret)
		goto err_pool;
	adev->ualink = ualink;
	return 0;

err_pool:
	amdgpu_ualink_npa_pool_fini(&ualink->pool, &adev->mman.bdev, AMDGPU_PL_NPA);
err_dev:
	amdgpu_ualink_dev_fini(&ualink->udev);
err_pt:
	amdgpu_ualink_pt_fini(&ualink->pt);
err_bitmap:
	bitmap_free(ualink->shootdowns);
err_free:
	kfree(ualink);
	return ret;
}

/**
 * amdgpu_ualink_fini - take a device's UALink state down
 * @adev: the device; its files are closed, so it exports and imports
 *	  nothing
 */
void amdgpu_ualink_fini(struct amdgpu_device *adev)
{
	struct amdgpu_ualink *ualink = adev->ualink;

	if (!ualink)
		return;
	cancel_work_sync(&ualink->shootdown_work);
	WARN_ON(amdgpu_ualink_npa_pool_fini(&ualink->pool, &adev->mman.bdev,
					    AMDGPU_PL_NPA));
	amdgpu_ualink_dev_fini(&ualink->udev);
	amdgpu_ualink_pt_fini(&ualink->pt);
	bitmap_free(ualink->shootdowns);
	adev->ualink = NULL;
	kfree(ualink);
}

/* Leave the pod: grants dropped, imports revoked, peers told. */
static void amdgpu_ualink_leave(struct amdgpu_ualink *ualink, u32 state)
{
	WRITE_ONCE(ualink->state, state);
	amdgpu_ualink_dev_reset(&ualink->udev);
}

/**
 * amdgpu_ualink_suspend - the device suspends: it leaves the pod
 * @adev: the device
 *
 * Returns: 0.
 */
int amdgpu_ualink_suspend(struct amdgpu_device *adev)
{
	if (adev->ualink)
		amdgpu_ualink_leave(adev->ualink, AMDGPU_UALINK_STATE_OFFLINE);
	return 0;
}

/**
 * amdgpu_ualink_resume - the device resumed: it takes part again
 * @adev: the device
 *
 * Returns: 0.
 */
int amdgpu_ualink_resume(struct amdgpu_device *adev)
{
	if (adev->ualink)
		WRITE_ONCE(adev->ualink->state, AMDGPU_UALINK_STATE_ACTIVE);
	return 0;
}

/**
 * amdgpu_ualink_pre_reset - a GPU reset begins: tell peers, revoke
 * @adev: the device
 */
void amdgpu_ualink_pre_reset(struct amdgpu_device *adev)
{
	if (adev->ualink)
		amdgpu_ualink_leave(adev->ualink, AMDGPU_UALINK_STATE_RESETTING);
}

/**
 * amdgpu_ualink_post_reset - the GPU reset is over: take part again
 * @adev: the device; peers re-handshake with its new generation
 */
void amdgpu_ualink_post_reset(struct amdgpu_device *adev)
{
	amdgpu_ualink_resume(adev);
}

#if IS_ENABLED(CONFIG_DRM_AMDGPU_UALINK_AMDGPU_KUNIT_TEST)
#include "tests/amdgpu_ualink_amdgpu_test.c"
#endif
