// SPDX-License-Identifier: GPL-2.0 OR MIT

#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/err.h>
#include <linux/export.h>
#include <linux/fs.h>

#include <drm/amdgpu_drm.h>
#include <drm/drm_device.h>
#include <drm/drm_drv.h>
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
 *   dma-buf warns), and CPU access fails with -EPERM, as does pinning it;
 * - an import can be revoked at any time, so only an importer that
 *   implements dma-buf's revoke sequence may attach
 *   (dma_buf_attach_revocable(): it has &dma_buf_attach_ops.invalidate_mappings
 *   and unmaps in bounded time); a static or non-revocable attachment is
 *   refused with -EPERM;
 * - revocation, a TTM move of the buffer to a dead resource (see the NPA
 *   pool), reaches every attachment through dma_buf_invalidate_mappings()
 *   from the driver's move notification
 *   (amdgpu_ualink_dmabuf_move_notify()), under the buffer's reservation.
 *   That is the first step of dma-buf's revoke sequence; the second, the
 *   wait for fences, is the core's: the exporter hears NPA_RELEASE once
 *   the fences the driver's revoke op returned have signalled, or after
 *   ``revoke_timeout_ms``. It goes
 *   beyond that sequence in one way: the memory is another accelerator's,
 *   so the exporter also denies the importer at the fabric, and a
 *   translation that survived anywhere faults instead of reaching memory.
 *
 * One import has one dma-buf at a time, however many times it is imported
 * or exported through PRIME: the driver's buffer object keeps it in a
 * &struct amdgpu_ualink_dmabuf_slot, weakly, and amdgpu_ualink_dmabuf_get()
 * hands out that dma-buf while it lives (PRIME's own cache,
 * &drm_gem_object.dma_buf, lasts only while GEM handles exist, and an
 * import may have only fds). A file has one GEM handle of it: the import
 * ioctl's handles are those PRIME gives that dma-buf
 * (amdgpu_ualink_dmabuf_handle()), so that importing the UALink handle
 * again, or a file descriptor of the import through PRIME, gives the
 * handle the file has, and one GEM_CLOSE closes it.
 *
 * The driver's &drm_driver.gem_prime_import calls
 * amdgpu_ualink_dmabuf_import() first and its own import otherwise.
 */

static struct drm_gem_object *slot_obj(struct dma_buf *dma_buf)
{
	struct amdgpu_ualink_dmabuf_slot *slot = dma_buf->priv;

	return slot->obj;
}

static int ualink_attach(struct dma_buf *dma_buf,
			 struct dma_buf_attachment *attach)
{
	if (attach->dev != slot_obj(dma_buf)->dev->dev)
		return -EXDEV;
	/* an import is revoked when its exporter says so: no pinned users */
	return dma_buf_attach_revocable(attach) ? 0 : -EPERM;
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

/*
 * A reference to @dma_buf if its file is still live. The slot's lock keeps
 * @dma_buf itself from being freed, but not its file: once the file's
 * count reached zero the file may be freed and its memory reused for
 * another file (files are SLAB_TYPESAFE_BY_RCU) before our release runs,
 * so the file we got must still be this dma-buf's.
 */
static bool dmabuf_get_live(struct dma_buf *dma_buf)
{
	struct file *file = get_file_active(&dma_buf->file);

	if (!file)
		return false;
	if (file->private_data == dma_buf)
		return true;
	fput(file);
	return false;
}

/*
 * The slot's live dma-buf with a reference, or NULL. One whose file is
 * gone is no longer published: its file's memory may be reused (by the
 * next dma-buf's, made right after this) before its release runs.
 */
static struct dma_buf *slot_get(struct amdgpu_ualink_dmabuf_slot *slot)
{
	struct dma_buf *dma_buf;

	mutex_lock(&slot->lock);
	dma_buf = slot->dma_buf;
	if (dma_buf && !dmabuf_get_live(dma_buf)) {
		dma_buf = NULL;
		if (slot->cache)
			WRITE_ONCE(*slot->cache, NULL);
	}
	mutex_unlock(&slot->lock);
	return dma_buf;
}

/* The dma-buf goes: forget it, then drop what it held. */
static void ualink_release(struct dma_buf *dma_buf)
{
	struct amdgpu_ualink_dmabuf_slot *slot = dma_buf->priv;
	struct drm_gem_object *obj = slot->obj;
	struct drm_device *dev = obj->dev;

	mutex_lock(&slot->lock);
	/*
	 * Only the slot's current dma-buf is published. One released late
	 * (another holder of its dentry) may have been replaced, and the
	 * file published since may sit where its file was.
	 */
	if (slot->dma_buf == dma_buf) {
		slot->dma_buf = NULL;
		if (slot->cache)
			WRITE_ONCE(*slot->cache, NULL);
	}
	mutex_unlock(&slot->lock);
	drm_gem_object_put(obj);	/* may free @slot */
	drm_dev_put(dev);
}

static const struct dma_buf_ops ualink_dmabuf_ops = {
	.attach = ualink_attach,
	.pin = ualink_pin,
	.unpin = ualink_unpin,
	.map_dma_buf = ualink_map,
	.unmap_dma_buf = ualink_unmap,
	.release = ualink_release,
	.begin_cpu_access = ualink_cpu_access,
	/* no mmap, no vmap: dma-buf answers -EINVAL for them */
};

/* The &file_operations of every dma-buf's file, once one was made here. */
static const struct file_operations *dma_buf_fops;

/**
 * amdgpu_ualink_dmabuf_slot_init - set up the dma-buf slot of an import
 * @slot: the slot, in the driver's buffer object
 * @obj: the buffer object's GEM object
 * @cache: where to publish the file of the live dma-buf for
 *	   amdgpu_ualink_dmabuf_cached(), in something that outlives the
 *	   buffer object (the import's &amdgpu_ualink_import.file), or NULL
 */
void amdgpu_ualink_dmabuf_slot_init(struct amdgpu_ualink_dmabuf_slot *slot,
				    struct drm_gem_object *obj,
				    struct file **cache)
{
	slot->obj = obj;
	slot->dma_buf = NULL;
	slot->cache = cache;
	mutex_init(&slot->lock);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_dmabuf_slot_init);

/**
 * amdgpu_ualink_dmabuf_slot_fini - tear the slot down
 * @slot: the slot; no dma-buf can be left (each holds the buffer object)
 */
void amdgpu_ualink_dmabuf_slot_fini(struct amdgpu_ualink_dmabuf_slot *slot)
{
	WARN_ON(slot->dma_buf);
	mutex_destroy(&slot->lock);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_dmabuf_slot_fini);

/**
 * amdgpu_ualink_dmabuf_get - the dma-buf of an import
 * @slot: the import's slot
 * @flags: flags of the dma-buf's file when a new one is made (O_RDWR...)
 *
 * Returns the dma-buf the import already has, if it still lives, or a new
 * one holding a reference to the GEM object. Also the driver's
 * &drm_gem_object_funcs.export for import objects, so that PRIME hands out
 * the same dma-buf.
 *
 * Returns: the dma-buf with a reference for the caller, or an ERR_PTR().
 */
struct dma_buf *amdgpu_ualink_dmabuf_get(struct amdgpu_ualink_dmabuf_slot *slot,
					 int flags)
{
	const struct file_operations *fops = slot->obj->dev->driver->fops;
	struct drm_gem_object *obj = slot->obj;
	DEFINE_DMA_BUF_EXPORT_INFO(info);
	struct dma_buf *dma_buf, *made;

	/*
	 * A dma-buf whose file reached its last reference is being released
	 * (its release waits for @lock to forget it): make another. Made
	 * without @lock, which a revocation takes (move_notify) and so must
	 * not be held across an allocation.
	 */
	dma_buf = slot_get(slot);
	if (dma_buf)
		return dma_buf;
	info.exp_name = "amdgpu_ualink";
	/* the driver owns the dma-buf: its callbacks run at release */
	info.owner = fops ? fops->owner : THIS_MODULE;
	info.ops = &ualink_dmabuf_ops;
	info.size = obj->size;
	info.flags = flags;
	info.priv = slot;
	info.resv = obj->resv;
	made = dma_buf_export(&info);
	if (IS_ERR(made))
		return made;
	drm_dev_get(obj->dev);
	drm_gem_object_get(obj);

	mutex_lock(&slot->lock);
	dma_buf = slot->dma_buf;
	if (dma_buf && dmabuf_get_live(dma_buf)) {
		/* another caller's came first: one dma-buf per import */
		mutex_unlock(&slot->lock);
		dma_buf_put(made);
		return dma_buf;
	}
	slot->dma_buf = made;
	if (slot->cache) {
		WRITE_ONCE(dma_buf_fops, made->file->f_op);
		/* published whole: amdgpu_ualink_dmabuf_cached() */
		smp_store_release(slot->cache, made->file);
	}
	mutex_unlock(&slot->lock);
	return made;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_dmabuf_get);

/**
 * amdgpu_ualink_dmabuf_install_fd - a new fd of the caller for a dma-buf
 * @dma_buf: the dma-buf; the caller's reference goes to the fd, or is
 *	     dropped on failure
 * @flags: %AMDGPU_UALINK_IMPORT_CLOEXEC or 0
 *
 * Returns: the file descriptor, or a negative errno.
 */
int amdgpu_ualink_dmabuf_install_fd(struct dma_buf *dma_buf, u32 flags)
{
	int fd = dma_buf_fd(dma_buf, flags & AMDGPU_UALINK_IMPORT_CLOEXEC ? O_CLOEXEC : 0);

	if (fd < 0)
		dma_buf_put(dma_buf);
	return fd;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_dmabuf_install_fd);

/**
 * amdgpu_ualink_dmabuf_fd - a file descriptor of an import's dma-buf
 * @slot: the import's slot
 * @flags: %AMDGPU_UALINK_IMPORT_CLOEXEC or 0
 *
 * For the UALink import ioctl: the dma-buf of amdgpu_ualink_dmabuf_get(),
 * read-write, in a new file descriptor of the caller.
 *
 * Returns: the file descriptor, or a negative errno.
 */
int amdgpu_ualink_dmabuf_fd(struct amdgpu_ualink_dmabuf_slot *slot, u32 flags)
{
	struct dma_buf *dma_buf = amdgpu_ualink_dmabuf_get(slot, O_RDWR);

	if (IS_ERR(dma_buf))
		return PTR_ERR(dma_buf);
	return amdgpu_ualink_dmabuf_install_fd(dma_buf, flags);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_dmabuf_fd);

/**
 * amdgpu_ualink_dmabuf_cached - an import's live dma-buf, without a lock
 * @cache: the import's published file (&amdgpu_ualink_dmabuf_slot.cache);
 *	   the caller keeps what holds it from being freed
 *
 * What an import of a handle imported before needs when its dma-buf still
 * lives: a file reference, without a lock and without the buffer object,
 * as PRIME's export of a buffer that has a dma-buf already. Files are freed
 * SLAB_TYPESAFE_BY_RCU, and a dma-buf's release, which clears @cache, may
 * come after its file was freed (another holder of its dentry): so the
 * file found must be a live dma-buf's, of our ops, whose slot publishes to
 * @cache.
 *
 * Context: any but NMI; under rcu_read_lock() when that is what keeps
 * @cache.
 * Returns: the dma-buf with a reference for the caller, or NULL when there
 * is none (the caller makes one through its slot).
 */
struct dma_buf *amdgpu_ualink_dmabuf_cached(struct file **cache)
{
	struct amdgpu_ualink_dmabuf_slot *slot;
	struct dma_buf *dma_buf;
	struct file *file;

	file = get_file_active(cache);
	if (!file)
		return NULL;
	/* a file being made has neither its dma-buf nor the dma-buf its file */
	dma_buf = file->private_data;
	if (file->f_op != READ_ONCE(dma_buf_fops) || !dma_buf ||
	    READ_ONCE(dma_buf->file) != file || dma_buf->ops != &ualink_dmabuf_ops)
		goto stale;
	slot = dma_buf->priv;
	if (slot->cache == cache)
		return dma_buf;
stale:
	fput(file);
	return NULL;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_dmabuf_cached);

/**
 * amdgpu_ualink_dmabuf_handle - the GEM handle of an import in a file
 * @file: the caller's DRM file
 * @slot: the import's slot
 * @handle: set to the handle
 *
 * For the UALink import ioctl: the handle PRIME gives the import's dma-buf
 * in @file (drm_gem_prime_dmabuf_to_handle()), so that a file has one
 * handle per imported buffer, whether it imports the UALink handle again
 * or a file descriptor of the import through PRIME, and one GEM_CLOSE
 * closes it. The dma-buf is made if the import has none.
 *
 * Returns: 0, or a negative errno.
 */
int amdgpu_ualink_dmabuf_handle(struct drm_file *file,
				struct amdgpu_ualink_dmabuf_slot *slot, u32 *handle)
{
	struct dma_buf *dma_buf = amdgpu_ualink_dmabuf_get(slot, O_RDWR);
	int ret;

	if (IS_ERR(dma_buf))
		return PTR_ERR(dma_buf);
	ret = drm_gem_prime_dmabuf_to_handle(slot->obj->dev, file, dma_buf,
					     handle);
	dma_buf_put(dma_buf);
	return ret;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_dmabuf_handle);

/*
 * The PRIME dma-buf of a buffer of our own, read-write: the one PRIME
 * caches in &drm_gem_object.dma_buf while the buffer has GEM handles, or a
 * new one cached there, as drm_gem_prime_handle_to_dmabuf() makes it, under
 * the same lock, but without a GEM handle of the caller's: a handle made
 * for the purpose would be in the file's PRIME table for a moment, where a
 * concurrent import of the same buffer by the file could find it and keep
 * it after it was closed. -ENOENT when the buffer has no handle left (its
 * export ended): PRIME would not clean a dma-buf cached then.
 */
static struct dma_buf *gem_dmabuf(struct drm_gem_object *obj, u32 flags)
{
	struct drm_device *dev = obj->dev;
	struct dma_buf *dma_buf;

	flags = O_RDWR | (flags & AMDGPU_UALINK_IMPORT_CLOEXEC ? O_CLOEXEC : 0);
	mutex_lock(&dev->object_name_lock);
	if (!obj->handle_count) {
		dma_buf = ERR_PTR(-ENOENT);
	} else if (obj->dma_buf) {
		dma_buf = obj->dma_buf;
		get_dma_buf(dma_buf);
	} else {
		dma_buf = obj->funcs->export ? obj->funcs->export(obj, flags) :
					       drm_gem_prime_export(obj, flags);
		if (!IS_ERR(dma_buf)) {
			/* PRIME's cache, dropped with the last handle */
			obj->dma_buf = dma_buf;
			get_dma_buf(dma_buf);
		}
	}
	mutex_unlock(&dev->object_name_lock);
	return dma_buf;
}

/**
 * amdgpu_ualink_gem_fd - a PRIME file descriptor of a buffer of our own
 * @file: the caller's DRM file
 * @obj: the buffer; the caller's reference is consumed
 * @flags: %AMDGPU_UALINK_IMPORT_CLOEXEC or 0
 *
 * For the UALink import ioctl given a handle of an export of the same
 * device: the buffer's PRIME dma-buf, read-write.
 *
 * Returns: the file descriptor, or a negative errno.
 */
int amdgpu_ualink_gem_fd(struct drm_file *file, struct drm_gem_object *obj,
			 u32 flags)
{
	struct dma_buf *dma_buf = gem_dmabuf(obj, flags);

	drm_gem_object_put(obj);
	if (IS_ERR(dma_buf))
		return PTR_ERR(dma_buf);
	return amdgpu_ualink_dmabuf_install_fd(dma_buf, flags);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_gem_fd);

/**
 * amdgpu_ualink_gem_handle - the GEM handle of a buffer of our own in a file
 * @file: the caller's DRM file
 * @obj: the buffer; the caller's reference is consumed
 * @handle: set to the handle
 *
 * For the UALink import ioctl given a handle of an export of the same
 * device: the handle PRIME gives the buffer's dma-buf in @file, as for an
 * import (amdgpu_ualink_dmabuf_handle()): the same one each time, and the
 * handle @file exported the buffer from if it made a PRIME fd of it.
 *
 * Returns: 0, or a negative errno.
 */
int amdgpu_ualink_gem_handle(struct drm_file *file, struct drm_gem_object *obj,
			     u32 *handle)
{
	struct dma_buf *dma_buf = gem_dmabuf(obj, 0);
	int ret;

	if (IS_ERR(dma_buf)) {
		drm_gem_object_put(obj);
		return PTR_ERR(dma_buf);
	}
	ret = drm_gem_prime_dmabuf_to_handle(obj->dev, file, dma_buf, handle);
	dma_buf_put(dma_buf);
	drm_gem_object_put(obj);
	return ret;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_gem_handle);

/**
 * amdgpu_ualink_dmabuf_obj - the buffer of an imported buffer's dma-buf
 * @dma_buf: any dma-buf; the caller holds a reference
 *
 * Returns: the GEM object, which @dma_buf holds a reference to, when
 * @dma_buf is one of ours (of any device); NULL otherwise.
 */
struct drm_gem_object *amdgpu_ualink_dmabuf_obj(struct dma_buf *dma_buf)
{
	return dma_buf->ops == &ualink_dmabuf_ops ? slot_obj(dma_buf) : NULL;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_dmabuf_obj);

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
	struct drm_gem_object *obj = amdgpu_ualink_dmabuf_obj(dma_buf);

	if (!obj)
		return NULL;
	if (obj->dev != dev)
		return ERR_PTR(-EXDEV);
	drm_gem_object_get(obj);
	return obj;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_dmabuf_import);

/**
 * amdgpu_ualink_dmabuf_move_notify - tell attachments an import moved
 * @slot: the slot of an import that moved, revoked; the caller holds the
 *	  reservation of its buffer object (it is in the driver's
 *	  &ttm_device_funcs.move)
 *
 * Calls dma_buf_invalidate_mappings() on the import's dma-buf, if it has
 * one, as every TTM move of an exported buffer does.
 */
void amdgpu_ualink_dmabuf_move_notify(struct amdgpu_ualink_dmabuf_slot *slot)
{
	struct dma_buf *dma_buf;

	dma_resv_assert_held(slot->obj->resv);
	dma_buf = slot_get(slot);
	if (!dma_buf)
		return;
	dma_buf_invalidate_mappings(dma_buf);
	dma_buf_put(dma_buf);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_dmabuf_move_notify);
