// SPDX-License-Identifier: GPL-2.0 OR MIT

#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/err.h>
#include <linux/export.h>

#include <drm/drm_device.h>
#include <drm/drm_gem.h>
#include <drm/drm_prime.h>

#include "amdgpu_ualink_dmabuf.h"

/**
 * DOC: dma-buf of an import
 *
 * An imported UALink buffer reaches userspace as a dma-buf, whose
 * &dma_buf_ops are the core's, so that both amdgpu and the emulated pod
 * refuse the same things with the same errnos:
 *
 * - its memory is reachable only through the importing GPU's fabric port,
 *   so no other device can attach: -EXDEV; the importing device itself
 *   gets its GEM object back from amdgpu_ualink_dmabuf_import() without an
 *   attachment, as for PRIME between files of one device;
 * - there is nothing a CPU could map: the ops have no mmap and no vmap, for
 *   which dma-buf answers -EINVAL (an exporter may not fail vmap itself:
 *   dma-buf warns), and CPU access fails with -EPERM, as does pinning it
 *   for an attachment;
 * - the exporter is dynamic (it has pin and unpin), so revocation
 *   (amdgpu_ualink_dmabuf_revoke()) reaches any attachment through
 *   dma_buf_move_notify(), the path TTM moves use.
 *
 * The driver's &drm_driver.gem_prime_import calls
 * amdgpu_ualink_dmabuf_import() first and its own import otherwise.
 */

static int ualink_attach(struct dma_buf *dma_buf,
			 struct dma_buf_attachment *attach)
{
	struct drm_gem_object *obj = dma_buf->priv;

	return attach->dev == obj->dev->dev ? 0 : -EXDEV;
}

static int ualink_pin(struct dma_buf_attachment *attach)
{
	return -EPERM;
}

static void ualink_unpin(struct dma_buf_attachment *attach)
{
}

static struct sg_table *ualink_map(struct dma_buf_attachment *attach,
				   enum dma_data_direction dir)
{
	/* the memory is another accelerator's: no DMA address for it */
	return ERR_PTR(-EPERM);
}

static void ualink_unmap(struct dma_buf_attachment *attach,
			 struct sg_table *sgt, enum dma_data_direction dir)
{
}

static int ualink_cpu_access(struct dma_buf *dma_buf,
			     enum dma_data_direction dir)
{
	return -EPERM;
}

static const struct dma_buf_ops ualink_dmabuf_ops = {
	.attach = ualink_attach,
	.pin = ualink_pin,
	.unpin = ualink_unpin,
	.map_dma_buf = ualink_map,
	.unmap_dma_buf = ualink_unmap,
	.release = drm_gem_dmabuf_release,
	.begin_cpu_access = ualink_cpu_access,
	/* no mmap, no vmap: dma-buf answers -EINVAL for them */
};

/**
 * amdgpu_ualink_dmabuf_export - the dma-buf of an imported buffer
 * @obj: the GEM object of an import
 * @flags: flags of the dma-buf's file (O_CLOEXEC, O_RDWR...)
 *
 * For the driver's &drm_gem_object_funcs.export of import objects.
 * Returns: the dma-buf, holding a reference to @obj, or an ERR_PTR().
 */
struct dma_buf *amdgpu_ualink_dmabuf_export(struct drm_gem_object *obj,
					    int flags)
{
	DEFINE_DMA_BUF_EXPORT_INFO(info);

	info.exp_name = "amdgpu_ualink";
	info.owner = THIS_MODULE;
	info.ops = &ualink_dmabuf_ops;
	info.size = obj->size;
	info.flags = flags;
	info.priv = obj;
	info.resv = obj->resv;
	return drm_gem_dmabuf_export(obj->dev, &info);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_dmabuf_export);

/**
 * amdgpu_ualink_dmabuf_import - PRIME import of an imported buffer's dma-buf
 * @dev: the importing DRM device
 * @dma_buf: any dma-buf
 *
 * Returns: the GEM object, with a reference, when @dma_buf is one of ours
 * from @dev; ERR_PTR(-EXDEV) when it is one of ours from another device;
 * NULL when it is not ours, for the driver's own import to handle.
 */
struct drm_gem_object *amdgpu_ualink_dmabuf_import(struct drm_device *dev,
						   struct dma_buf *dma_buf)
{
	struct drm_gem_object *obj = dma_buf->priv;

	if (dma_buf->ops != &ualink_dmabuf_ops)
		return NULL;
	if (obj->dev != dev)
		return ERR_PTR(-EXDEV);
	drm_gem_object_get(obj);
	return obj;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_dmabuf_import);

/**
 * amdgpu_ualink_dmabuf_revoke - tell attachments an import is gone
 * @dma_buf: the dma-buf of an import that was revoked, on which the
 *	     caller holds a reference (the driver tracks its imports'
 *	     dma-bufs itself: &drm_gem_object.dma_buf is PRIME's, under its
 *	     own lock, and unset when only an fd is left)
 *
 * Calls dma_buf_move_notify() under the dma-buf's reservation lock, as a
 * TTM move would.
 */
void amdgpu_ualink_dmabuf_revoke(struct dma_buf *dma_buf)
{
	dma_resv_lock(dma_buf->resv, NULL);
	dma_buf_move_notify(dma_buf);
	dma_resv_unlock(dma_buf->resv);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_dmabuf_revoke);
