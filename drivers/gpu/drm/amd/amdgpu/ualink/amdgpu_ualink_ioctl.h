/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The UALink ioctl, shared by amdgpu and the emulated pod: argument checks
 * and dispatch to the export/import engine. See amdgpu_ualink_ioctl.c.
 */
#ifndef __AMDGPU_UALINK_IOCTL_H__
#define __AMDGPU_UALINK_IOCTL_H__

#include <drm/amdgpu_drm.h>

#include "amdgpu_ualink_dev.h"

struct drm_file;

/**
 * struct amdgpu_ualink_gem_ops - the driver's side of the ioctl
 *
 * Called without core locks held; each may sleep. A GEM handle made by
 * @import_handle may be closed by another thread as soon as it exists.
 */
struct amdgpu_ualink_gem_ops {
	/** @info: fill in vpod_id, vpod_size and state */
	void (*info)(void *priv, struct drm_amdgpu_ualink_info *info);
	/**
	 * @export_obj: the buffer of @gem_handle in @file, with a reference
	 * dropped by @put, its size and its slot for the core's export.
	 * Returns 0, -ENOENT for an unknown handle, -EPERM for a buffer that
	 * cannot be exported.
	 */
	int (*export_obj)(void *priv, struct drm_file *file, u32 gem_handle,
			  void **obj, u64 *size, void ***slot);
	/**
	 * @lock_handles: take the lock under which the last GEM handle of
	 * @obj goes (&drm_device.object_name_lock, the one
	 * &drm_gem_object_funcs.handles_gone decides under) and say whether
	 * @obj still has a handle. An export is made only under it, so that
	 * one racing the last GEM_CLOSE is refused rather than left on a
	 * buffer without handles; the buffer is pinned before, outside it
	 * (a pin waits for the buffer's reservation and may evict).
	 */
	bool (*lock_handles)(void *priv, void *obj);
	/** @unlock_handles: drop the lock @lock_handles took */
	void (*unlock_handles)(void *priv, void *obj);
	/**
	 * @put: drop the reference @export_obj took, or one that
	 * &amdgpu_ualink_dev_ops.get took
	 */
	void (*put)(void *priv, void *obj);
	/**
	 * @import_fd: a dma-buf fd in @file for @imp, or for our own buffer
	 * @local when @imp is NULL. Takes over the reference to @imp, or the
	 * one &amdgpu_ualink_dev_ops.get took on @local, in all cases.
	 * Returns the fd or a negative errno.
	 */
	int (*import_fd)(void *priv, struct drm_file *file,
			 struct amdgpu_ualink_import *imp, void *local,
			 u32 flags);
	/**
	 * @import_handle: a GEM handle of @file for @imp, or for @local when
	 * @imp is NULL, in @gem_handle: the one PRIME gives the buffer's
	 * dma-buf in @file (amdgpu_ualink_dmabuf_handle(),
	 * amdgpu_ualink_gem_handle()), the same on every call. Takes over the
	 * reference as @import_fd does. Returns 0 or a negative errno.
	 */
	int (*import_handle)(void *priv, struct drm_file *file,
			     struct amdgpu_ualink_import *imp, void *local,
			     u32 *gem_handle);
};

int amdgpu_ualink_ioctl(struct amdgpu_ualink_dev *udev, u32 state,
			const struct amdgpu_ualink_gem_ops *gops, void *gpriv,
			struct drm_file *file, struct drm_amdgpu_ualink *args);
int amdgpu_ualink_import_batch(struct amdgpu_ualink_dev *udev,
			       const struct amdgpu_ualink_gem_ops *gops,
			       void *gpriv, struct drm_file *file,
			       struct drm_amdgpu_ualink_batch_entry *entries,
			       unsigned int count, u32 flags);

#endif /* __AMDGPU_UALINK_IOCTL_H__ */
