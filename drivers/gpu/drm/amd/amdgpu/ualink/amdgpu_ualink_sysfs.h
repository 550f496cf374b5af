/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The read-only ualink/ directory of a device with UALink, for
 * administrators and for userspace that asks whether the device is ready.
 * See amdgpu_ualink_sysfs.c.
 */
#ifndef __AMDGPU_UALINK_SYSFS_H__
#define __AMDGPU_UALINK_SYSFS_H__

#include <linux/types.h>
#include <linux/uuid.h>

#include <drm/amdgpu_drm.h>

struct amdgpu_ualink_dev;
struct amdgpu_ualink_sysfs;
struct device;

/**
 * struct amdgpu_ualink_sysfs_link - the link and the physical pod
 *
 * What firmware says of them; a zero or NULL member reads ``unknown``.
 */
struct amdgpu_ualink_sysfs_link {
	/** @link_type: ``UALink``, ``UALoE``, or ``emulated`` */
	const char *link_type;
	/** @addr_mode: ``source-aliasing`` or ``source-identification`` */
	const char *addr_mode;
	/** @bandwidth_mbytes: the link's bandwidth, in MB/s each way */
	u32 bandwidth_mbytes;
	/** @latency_ns: the link's latency, in nanoseconds */
	u32 latency_ns;
	/** @ppod_size: accelerators in the physical pod */
	u32 ppod_size;
	/** @ppod_id: the physical pod's UUID */
	uuid_t ppod_id;
};

/**
 * struct amdgpu_ualink_sysfs_ops - what the driver tells the directory
 *
 * Called from sysfs reads, in process context, without core locks held.
 * An attribute whose callback is NULL is not created: what the device
 * cannot know is left out, not made up.
 */
struct amdgpu_ualink_sysfs_ops {
	/**
	 * @info: fill in vpod_id, vpod_size and state, as for
	 * AMDGPU_UALINK_OP_INFO
	 */
	void (*info)(void *priv, struct drm_amdgpu_ualink_info *info);
	/**
	 * @active: set in @mask (AMDGPU_UALINK_MAX_ACCELERATORS bits, zeroed)
	 * the accelerators of our virtual pod that are active, us included
	 * when we are
	 */
	void (*active)(void *priv, unsigned long *mask);
	/**
	 * @local: set in @mask (zeroed) the accelerators this host drives,
	 * us included
	 */
	void (*local)(void *priv, unsigned long *mask);
	/**
	 * @link: fill in what is known of the link and the physical pod
	 * (@link is zeroed); without it every such attribute reads
	 * ``unknown``
	 */
	void (*link)(void *priv, struct amdgpu_ualink_sysfs_link *link);
	/**
	 * @fabric_refusals: accesses to our window that the fabric refused
	 * since set-up (a requester outside the range's access set, or an
	 * address nothing maps)
	 */
	u64 (*fabric_refusals)(void *priv);
};

struct amdgpu_ualink_sysfs *
amdgpu_ualink_sysfs_create(struct device *dev, struct amdgpu_ualink_dev *udev,
			   const struct amdgpu_ualink_sysfs_ops *ops, void *priv);
void amdgpu_ualink_sysfs_destroy(struct amdgpu_ualink_sysfs *sysfs);
void amdgpu_ualink_sysfs_state_changed(struct amdgpu_ualink_sysfs *sysfs);

#endif /* __AMDGPU_UALINK_SYSFS_H__ */
