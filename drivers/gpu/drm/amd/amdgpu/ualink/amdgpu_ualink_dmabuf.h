/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The dma-buf of an imported UALink buffer. See amdgpu_ualink_dmabuf.c.
 */
#ifndef __AMDGPU_UALINK_DMABUF_H__
#define __AMDGPU_UALINK_DMABUF_H__

struct dma_buf;
struct drm_device;
struct drm_gem_object;

struct dma_buf *amdgpu_ualink_dmabuf_export(struct drm_gem_object *obj,
					    int flags);
struct drm_gem_object *amdgpu_ualink_dmabuf_import(struct drm_device *dev,
						   struct dma_buf *dma_buf);
void amdgpu_ualink_dmabuf_revoke(struct dma_buf *dma_buf);

#endif /* __AMDGPU_UALINK_DMABUF_H__ */
