/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * UALink inside amdgpu: the device's UALink state, its life cycle, the
 * ioctl and the export side in amdgpu_bo terms. See amdgpu_ualink_amdgpu.c.
 */
#ifndef __AMDGPU_UALINK_AMDGPU_H__
#define __AMDGPU_UALINK_AMDGPU_H__

#include <linux/errno.h>
#include <linux/types.h>

struct amdgpu_device;
struct amdgpu_ualink_mbox_ops;
struct amdgpu_ualink_pt_ops;
struct amdgpu_ualink_pte_format;
struct drm_device;
struct drm_file;
struct drm_gem_object;

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
	 * @shootdown: make @importer forget its translations of our range
	 * @npa, @size; returns once the importer acknowledged
	 */
	void (*shootdown)(struct amdgpu_device *adev, u16 importer, u64 npa,
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
};

#if IS_ENABLED(CONFIG_DRM_AMDGPU_UALINK)

int amdgpu_ualink_init(struct amdgpu_device *adev,
		       const struct amdgpu_ualink_hw_funcs *hw);
void amdgpu_ualink_fini(struct amdgpu_device *adev);
int amdgpu_ualink_suspend(struct amdgpu_device *adev);
int amdgpu_ualink_resume(struct amdgpu_device *adev);
void amdgpu_ualink_pre_reset(struct amdgpu_device *adev);
void amdgpu_ualink_post_reset(struct amdgpu_device *adev);
int amdgpu_ualink_ioctl_amdgpu(struct drm_device *dev, void *data,
			       struct drm_file *filp);
void amdgpu_ualink_gem_handles_gone(struct drm_gem_object *obj);

#else

static inline void amdgpu_ualink_fini(struct amdgpu_device *adev)
{
}

static inline int amdgpu_ualink_suspend(struct amdgpu_device *adev)
{
	return 0;
}

static inline int amdgpu_ualink_resume(struct amdgpu_device *adev)
{
	return 0;
}

static inline void amdgpu_ualink_pre_reset(struct amdgpu_device *adev)
{
}

static inline void amdgpu_ualink_post_reset(struct amdgpu_device *adev)
{
}

/* Without UALink support the ioctl exists and says so. */
static inline int amdgpu_ualink_ioctl_amdgpu(struct drm_device *dev,
					     void *data, struct drm_file *filp)
{
	return -EOPNOTSUPP;
}

#endif

#endif /* __AMDGPU_UALINK_AMDGPU_H__ */
