/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The dma-buf of an imported UALink buffer. See amdgpu_ualink_dmabuf.c.
 */
#ifndef __AMDGPU_UALINK_DMABUF_H__
#define __AMDGPU_UALINK_DMABUF_H__

#include <linux/mutex.h>

struct dma_buf;
struct drm_device;
struct drm_file;
struct drm_gem_object;
struct file;

/**
 * struct amdgpu_ualink_dmabuf_slot - the dma-buf of an import, held weakly
 *
 * Embedded in the driver's buffer object of an import. Every fd of the
 * import is an fd of one dma-buf while that dma-buf lives; the slot does
 * not keep it alive (the dma-buf holds the buffer object, not the reverse).
 */
struct amdgpu_ualink_dmabuf_slot {
	/** @obj: the GEM object of the import */
	struct drm_gem_object *obj;
	/**
	 * @lock: protects @dma_buf; never held across an allocation, since a
	 * revocation (amdgpu_ualink_dmabuf_move_notify()) takes it
	 */
	struct mutex lock;
	/** @dma_buf: the live dma-buf, or NULL; cleared by its release */
	struct dma_buf *dma_buf;
	/**
	 * @cache: where the file of the live dma-buf is published for
	 * amdgpu_ualink_dmabuf_cached(), or NULL: set under @lock when a
	 * dma-buf is made, cleared under it by that dma-buf's release or
	 * once its file is found gone (it may name a freed file until then)
	 */
	struct file **cache;
};

void amdgpu_ualink_dmabuf_slot_init(struct amdgpu_ualink_dmabuf_slot *slot,
				    struct drm_gem_object *obj,
				    struct file **cache);
void amdgpu_ualink_dmabuf_slot_fini(struct amdgpu_ualink_dmabuf_slot *slot);
struct dma_buf *amdgpu_ualink_dmabuf_get(struct amdgpu_ualink_dmabuf_slot *slot,
					 int flags);
int amdgpu_ualink_dmabuf_fd(struct amdgpu_ualink_dmabuf_slot *slot, u32 flags);
struct dma_buf *amdgpu_ualink_dmabuf_cached(struct file **cache);
int amdgpu_ualink_dmabuf_install_fd(struct dma_buf *dma_buf, u32 flags);
int amdgpu_ualink_dmabuf_handle(struct drm_file *file,
				struct amdgpu_ualink_dmabuf_slot *slot, u32 *handle);
int amdgpu_ualink_gem_handle(struct drm_file *file, struct drm_gem_object *obj,
			     u32 *handle);
int amdgpu_ualink_gem_fd(struct drm_file *file, struct drm_gem_object *obj,
			 u32 flags);
struct drm_gem_object *amdgpu_ualink_dmabuf_obj(struct dma_buf *dma_buf);
struct drm_gem_object *amdgpu_ualink_dmabuf_import(struct drm_device *dev,
						   struct dma_buf *dma_buf);
void amdgpu_ualink_dmabuf_move_notify(struct amdgpu_ualink_dmabuf_slot *slot);

#endif /* __AMDGPU_UALINK_DMABUF_H__ */
