/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * UALink inside amdgpu: the UALink IP block, the device's UALink state,
 * the ioctl, and exports and imports in amdgpu_bo terms. See
 * amdgpu_ualink_amdgpu.c.
 */
#ifndef __AMDGPU_UALINK_AMDGPU_H__
#define __AMDGPU_UALINK_AMDGPU_H__

#include <linux/err.h>
#include <linux/errno.h>
#include <linux/types.h>

#include "amdgpu_ualink_ioctl_check.h"

struct amdgpu_bo;
struct amdgpu_bo_param;
struct amdgpu_device;
struct amdgpu_ualink_mbox_ops;
struct amdgpu_ualink_pt_ops;
struct amdgpu_ualink_pte_format;
struct amdgpu_ualink_sysfs_link;
struct dma_buf;
struct drm_device;
struct drm_file;
struct drm_gem_object;

/**
 * enum amdgpu_ualink_iv - what a UALink interrupt reports
 * @AMDGPU_UALINK_IV_MESSAGE: a mailbox message from the accelerator in
 *	the entry's src_data[0] is in its ring here
 * @AMDGPU_UALINK_IV_SHOOTDOWN: the exporter in src_data[0] asks us to
 *	forget translations (&amdgpu_ualink_hw_funcs.shootdown_request)
 * @AMDGPU_UALINK_IV_MEMBERSHIP: our virtual pod's membership changed
 *	(&amdgpu_ualink_hw_funcs.member answers anew); src_data[0] unused
 * @AMDGPU_UALINK_IV_PEER_OFFLINE: the accelerator in src_data[0] went
 *	offline (reset, link down): its connection ends, requests to it
 *	fail with -ENOLINK, and what it held of ours, or we of its, goes
 * @AMDGPU_UALINK_IV_PEER_ONLINE: the accelerator in src_data[0] is back
 *
 * The kind is in src_data[1] of the IV entry (&struct amdgpu_iv_entry) of
 * an interrupt from the IP's IH client and source ID
 * (&amdgpu_ualink_hw_funcs.irq_client, &amdgpu_ualink_hw_funcs.irq_src).
 * Any other kind is logged and ignored.
 */
enum amdgpu_ualink_iv {
	AMDGPU_UALINK_IV_MESSAGE,
	AMDGPU_UALINK_IV_SHOOTDOWN,
	AMDGPU_UALINK_IV_MEMBERSHIP,
	AMDGPU_UALINK_IV_PEER_OFFLINE,
	AMDGPU_UALINK_IV_PEER_ONLINE,
};

/**
 * struct amdgpu_ualink_hw_funcs - what a UALink IP's enablement provides
 *
 * Everything register-level: the core and this glue do the rest.
 */
struct amdgpu_ualink_hw_funcs {
	/**
	 * @mbox: the mailbox transport: receive rings in the reserved head
	 * of the NPA windows, producer and consumer indices, doorbells
	 */
	const struct amdgpu_ualink_mbox_ops *mbox;
	/** @pt: where NPA page tables live and how updates reach the IP */
	const struct amdgpu_ualink_pt_ops *pt;
	/** @pte: the IP's page-table entry format */
	const struct amdgpu_ualink_pte_format *pte;
	/**
	 * @hw_init: optional; program the IP (page-table root, receive
	 * rings, interrupt routing) at init, on resume and after a reset
	 */
	int (*hw_init)(struct amdgpu_device *adev);
	/** @hw_fini: optional; quiesce the IP before suspend or teardown */
	void (*hw_fini)(struct amdgpu_device *adev);
	/** @accel_id: our accelerator ID, from firmware */
	u16 (*accel_id)(struct amdgpu_device *adev);
	/**
	 * @vpod: our virtual pod and its size, from firmware; false when we
	 * are in none
	 */
	bool (*vpod)(struct amdgpu_device *adev, u32 *vpod_id, u32 *vpod_size);
	/** @member: is @peer an active member of our virtual pod? */
	bool (*member)(struct amdgpu_device *adev, u16 peer);
	/**
	 * @link: optional; what firmware says of the link and the physical
	 * pod, for the ``ualink/`` sysfs directory (@link is zeroed: what
	 * is left zero reads ``unknown``)
	 */
	void (*link)(struct amdgpu_device *adev,
		     struct amdgpu_ualink_sysfs_link *link);
	/**
	 * @allow: let @importer reach our range @npa, @size: add it to the
	 * range's access set, which the IP checks against the requester of
	 * every access arriving at us; 0 or -errno (the import then fails)
	 */
	int (*allow)(struct amdgpu_device *adev, u16 importer, u64 npa,
		     u64 size);
	/**
	 * @deny: take @importer out of the range's access set: from the
	 * return on, its new accesses to the range fault at our port
	 */
	void (*deny)(struct amdgpu_device *adev, u16 importer, u64 npa,
		     u64 size);
	/**
	 * @shootdown: make @importer forget its translations of our range
	 * @npa, @size (or of our whole window, see
	 * &amdgpu_ualink_dev_ops.shootdown); returns 0 once the importer
	 * acknowledged, or
	 * -ETIMEDOUT when it did not within a bounded wait of the IP's own
	 * (the core then relies on @deny, done before)
	 */
	int (*shootdown)(struct amdgpu_device *adev, u16 importer, u64 npa,
			 u64 size);
	/** @shootdown_request: serve a shootdown request from @exporter */
	void (*shootdown_request)(struct amdgpu_device *adev, u16 exporter);
	/**
	 * @irq_set: enable or disable the UALink interrupt, from
	 * &amdgpu_irq_src_funcs.set (a spinlock is held)
	 */
	int (*irq_set)(struct amdgpu_device *adev, bool enable);
	/** @irq_client: the IH client ID of the UALink interrupt */
	unsigned int irq_client;
	/** @irq_src: its source ID */
	unsigned int irq_src;
	/**
	 * @gpuvm_addr: how GPUVM page-table entries reach the NPA range
	 * @npa, @size of an import: the address they carry for its first
	 * byte, in @addr (the range's bytes follow from there), and the
	 * entry bits that mark them as fabric addresses, in @pte. An NPA
	 * has 51 bits and a GPUVM entry's address field fewer (bits 47:12
	 * on GFX9 to GFX12): how the IP routes such an address to its
	 * fabric port is its business, and an address is never masked to
	 * fit. Returns 0, or -ERANGE when this GPU's page tables cannot
	 * reach the range. The import also fails with -ERANGE when the
	 * range's addresses do not fit the entries' address field
	 * (&amdgpu_gmc.pte_addr_mask) or @pte has a bit outside
	 * @gpuvm_pte_mask.
	 */
	int (*gpuvm_addr)(struct amdgpu_device *adev, u64 npa, u64 size,
			  u64 *addr, u64 *pte);
	/**
	 * @gpuvm_pte_mask: the bits of a GPUVM entry the IP decides for an
	 * imported buffer: its fabric marker, and the memory type (MTYPE)
	 * and snoop bits, which the GMC would otherwise set as for system
	 * memory. They replace what the GMC's get_vm_pte() put there. The
	 * bits amdgpu owns (valid, system, TMZ, access, fragment, the
	 * address field, PRT, PDE-as-PTE) are refused by
	 * amdgpu_ualink_ip_block_add().
	 */
	u64 gpuvm_pte_mask;
};

#if IS_ENABLED(CONFIG_DRM_AMDGPU_UALINK)

int amdgpu_ualink_ip_block_add(struct amdgpu_device *adev,
			       const struct amdgpu_ualink_hw_funcs *hw);
void amdgpu_ualink_suspend(struct amdgpu_device *adev);
void amdgpu_ualink_resume(struct amdgpu_device *adev);
void amdgpu_ualink_pre_reset(struct amdgpu_device *adev);
void amdgpu_ualink_post_reset(struct amdgpu_device *adev);
int amdgpu_ualink_ioctl_amdgpu(struct drm_device *dev, void *data,
			       struct drm_file *filp);
void amdgpu_ualink_gem_handles_gone(struct drm_gem_object *obj);
void amdgpu_ualink_gem_free(struct amdgpu_bo *abo);
void amdgpu_ualink_bo_init(struct amdgpu_bo *abo,
			   const struct amdgpu_bo_param *bp);
void amdgpu_ualink_bo_destroy(struct amdgpu_bo *abo);
void amdgpu_ualink_bo_move_notify(struct amdgpu_bo *abo);
struct dma_buf *amdgpu_ualink_gem_prime_export(struct amdgpu_bo *abo,
					       int flags);
struct drm_gem_object *amdgpu_ualink_gem_prime_import(struct drm_device *dev,
						      struct dma_buf *dma_buf);
struct drm_gem_object *amdgpu_ualink_dmabuf_gem(struct dma_buf *dma_buf);
void amdgpu_ualink_gpuvm_pte(struct amdgpu_bo *abo, u64 *flags);
u64 amdgpu_ualink_gpuvm_offset(struct amdgpu_bo *abo);

#else

static inline void amdgpu_ualink_suspend(struct amdgpu_device *adev)
{
}

static inline void amdgpu_ualink_resume(struct amdgpu_device *adev)
{
}

static inline void amdgpu_ualink_pre_reset(struct amdgpu_device *adev)
{
}

static inline void amdgpu_ualink_post_reset(struct amdgpu_device *adev)
{
}

/* Without UALink support the ioctl exists, checks and says so. */
static inline int amdgpu_ualink_ioctl_amdgpu(struct drm_device *dev,
					     void *data, struct drm_file *filp)
{
	return amdgpu_ualink_ioctl_unsupported(data);
}

static inline void amdgpu_ualink_gem_free(struct amdgpu_bo *abo)
{
}

static inline void amdgpu_ualink_bo_init(struct amdgpu_bo *abo,
					 const struct amdgpu_bo_param *bp)
{
}

static inline void amdgpu_ualink_bo_destroy(struct amdgpu_bo *abo)
{
}

/* Only UALink creates buffers in AMDGPU_GEM_DOMAIN_NPA: not reached. */
static inline void amdgpu_ualink_bo_move_notify(struct amdgpu_bo *abo)
{
}

static inline struct dma_buf *
amdgpu_ualink_gem_prime_export(struct amdgpu_bo *abo, int flags)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static inline struct drm_gem_object *
amdgpu_ualink_gem_prime_import(struct drm_device *dev, struct dma_buf *dma_buf)
{
	return NULL;
}

static inline struct drm_gem_object *
amdgpu_ualink_dmabuf_gem(struct dma_buf *dma_buf)
{
	return NULL;
}

static inline void amdgpu_ualink_gpuvm_pte(struct amdgpu_bo *abo, u64 *flags)
{
}

static inline u64 amdgpu_ualink_gpuvm_offset(struct amdgpu_bo *abo)
{
	return 0;
}

#endif

#endif /* __AMDGPU_UALINK_AMDGPU_H__ */
