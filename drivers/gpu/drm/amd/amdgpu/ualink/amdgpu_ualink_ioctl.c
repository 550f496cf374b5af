// SPDX-License-Identifier: GPL-2.0 OR MIT

#include <linux/export.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "amdgpu_ualink_ioctl.h"
#include "amdgpu_ualink_ioctl_check.h"
#include "amdgpu_ualink_npa.h"

/**
 * DOC: The UALink ioctl
 *
 * amdgpu and the emulated pod implement DRM_IOCTL_AMDGPU_UALINK with one
 * call to amdgpu_ualink_ioctl(), which checks the argument
 * (amdgpu_ualink_ioctl_check(), inline in amdgpu_ualink_ioctl_check.h so
 * that amdgpu without UALink support checks the same way) and hands the
 * operation to the export/import engine; the driver provides what only
 * it can do with its GEM objects (&struct amdgpu_ualink_gem_ops). So both
 * answer every malformed argument, and every failure, with the same errno.
 *
 * A batched import copies the entries in, starts every import (all
 * requests on the wire, first-contact handshakes included), then finishes
 * them in order and copies the per-entry results out.
 */

static int do_export(struct amdgpu_ualink_dev *udev,
		     const struct amdgpu_ualink_gem_ops *gops, void *gpriv,
		     struct drm_file *file, struct drm_amdgpu_ualink_export *e)
{
	u64 size, handle[2];
	void **slot;
	void *obj;
	int ret;

	ret = gops->export_obj(gpriv, file, e->gem_handle, &obj, &size, &slot);
	if (ret)
		return ret;
	if (gops->lock_handles(gpriv, obj))
		ret = amdgpu_ualink_export_create(udev, obj, size, slot, handle);
	else
		ret = -ENOENT;	/* its last handle went meanwhile */
	gops->unlock_handles(gpriv, obj);
	gops->put(gpriv, obj);
	if (ret)
		return ret;
	e->handle.lo = handle[0];
	e->handle.hi = handle[1];
	return 0;
}

static int do_import(struct amdgpu_ualink_dev *udev,
		     const struct amdgpu_ualink_gem_ops *gops, void *gpriv,
		     struct drm_file *file, struct drm_amdgpu_ualink_import *i)
{
	const u64 handle[2] = { i->handle.lo, i->handle.hi };
	struct amdgpu_ualink_import *imp = NULL;
	void *local = NULL;
	int ret;

	ret = amdgpu_ualink_import_get(udev, handle, &imp);
	if (ret == AMDGPU_UALINK_IMPORT_LOCAL) {
		local = amdgpu_ualink_export_lookup(udev, handle);
		if (!local)
			return -ENOENT;
		imp = NULL;
	} else if (ret) {
		return ret;
	}
	ret = gops->import_fd(gpriv, file, imp, local, i->flags);
	if (ret < 0)
		return ret;
	i->fd = ret;
	return 0;
}

/**
 * amdgpu_ualink_import_batch - import many handles, one round trip
 * @udev: the importing device
 * @gops: the driver's side
 * @gpriv: passed to @gops
 * @file: the calling file, which gets the GEM handles
 * @entries: the entries, copied in and checked; results written in place
 * @count: their number
 * @flags: AMDGPU_UALINK_IMPORT_FDS, AMDGPU_UALINK_IMPORT_CLOEXEC
 *
 * Every import is started before the first is waited for. An entry whose
 * GEM handle was made but whose fd could not be keeps the handle, fd -1.
 */
void amdgpu_ualink_import_batch(struct amdgpu_ualink_dev *udev,
				const struct amdgpu_ualink_gem_ops *gops,
				void *gpriv, struct drm_file *file,
				struct drm_amdgpu_ualink_batch_entry *entries,
				unsigned int count, u32 flags)
{
	struct amdgpu_ualink_import **imps;
	unsigned int n;

	imps = kvcalloc(count, sizeof(*imps), GFP_KERNEL_ACCOUNT);
	for (n = 0; n < count; n++) {
		struct drm_amdgpu_ualink_batch_entry *e = &entries[n];
		const u64 handle[2] = { e->handle.lo, e->handle.hi };

		e->gem_handle = 0;
		e->fd = -1;
		e->error = imps ? amdgpu_ualink_import_start(udev, handle, &imps[n]) : -ENOMEM;
	}
	for (n = 0; n < count; n++) {
		struct drm_amdgpu_ualink_batch_entry *e = &entries[n];
		const u64 handle[2] = { e->handle.lo, e->handle.hi };
		bool fd = flags & AMDGPU_UALINK_IMPORT_FDS;
		struct amdgpu_ualink_import *imp = NULL;
		void *local = NULL;
		int ret = e->error;

		if (!ret) {
			imp = imps[n];
			ret = amdgpu_ualink_import_finish(imp);
		} else if (ret == AMDGPU_UALINK_IMPORT_LOCAL) {
			local = amdgpu_ualink_export_lookup(udev, handle);
			ret = local ? 0 : -ENOENT;
		}
		if (ret) {
			/* a signal: the entry was not waited for */
			e->error = ret == -ERESTARTSYS ? -EINTR : ret;
			continue;
		}
		/*
		 * The fd's reference is taken while we still hold the first:
		 * once the GEM handle exists, another thread may close it.
		 */
		if (fd && imp)
			amdgpu_ualink_import_ref(imp);
		else if (fd && WARN_ON(!udev->ops->get(udev->priv, local)))
			fd = false;
		ret = gops->import_handle(gpriv, file, imp, local, &e->gem_handle);
		if (ret) {
			if (fd && imp)
				amdgpu_ualink_import_put(imp);
			else if (fd)
				gops->put(gpriv, local);
			e->gem_handle = 0;
			e->error = ret;
			continue;
		}
		e->error = 0;
		if (fd) {
			/* without an fd the entry keeps its GEM handle, fd -1 */
			ret = gops->import_fd(gpriv, file, imp, local,
					      flags & AMDGPU_UALINK_IMPORT_CLOEXEC);
			if (ret >= 0)
				e->fd = ret;
		}
	}
	kvfree(imps);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_import_batch);

static int do_batch(struct amdgpu_ualink_dev *udev,
		    const struct amdgpu_ualink_gem_ops *gops, void *gpriv,
		    struct drm_file *file,
		    const struct drm_amdgpu_ualink_import_batch *b)
{
	struct drm_amdgpu_ualink_batch_entry __user *uptr = u64_to_user_ptr(b->entries);
	struct drm_amdgpu_ualink_batch_entry *entries;
	size_t size = array_size(b->count, sizeof(*entries));
	unsigned int n;
	int ret = 0;

	entries = kvmalloc(size, GFP_KERNEL_ACCOUNT);
	if (!entries)
		return -ENOMEM;
	if (copy_from_user(entries, uptr, size)) {
		ret = -EFAULT;
		goto out;
	}
	for (n = 0; n < b->count; n++) {
		const struct drm_amdgpu_ualink_batch_entry *e = &entries[n];

		if (e->pad || e->gem_handle || e->fd || e->error ||
		    (!e->handle.lo && !e->handle.hi)) {
			ret = -EINVAL;
			goto out;
		}
	}
	amdgpu_ualink_import_batch(udev, gops, gpriv, file, entries, b->count,
				   b->flags);
	if (copy_to_user(uptr, entries, size))
		ret = -EFAULT;	/* the imports stay, as GEM handles of @file */
out:
	kvfree(entries);
	return ret;
}

/**
 * amdgpu_ualink_ioctl - DRM_IOCTL_AMDGPU_UALINK
 * @udev: the device's UALink state, NULL when it has none
 * @gops: the driver's side
 * @gpriv: passed to @gops
 * @file: the calling file
 * @args: the argument, copied in; results are written into it
 *
 * Returns: 0 or a negative errno as documented for &struct drm_amdgpu_ualink.
 */
int amdgpu_ualink_ioctl(struct amdgpu_ualink_dev *udev,
			const struct amdgpu_ualink_gem_ops *gops, void *gpriv,
			struct drm_file *file, struct drm_amdgpu_ualink *args)
{
	struct drm_amdgpu_ualink_info info = {};
	int ret;

	if (!udev)
		return amdgpu_ualink_ioctl_unsupported(args);
	ret = amdgpu_ualink_ioctl_check(args);
	if (ret)
		return ret;
	info.accel_id = udev->id;
	gops->info(gpriv, &info);
	if (args->op == AMDGPU_UALINK_OP_INFO) {
		args->u.info = info;
		return 0;
	}
	if (info.state != AMDGPU_UALINK_STATE_ACTIVE)
		return -EOPNOTSUPP;

	switch (args->op) {
	case AMDGPU_UALINK_OP_EXPORT:
		return do_export(udev, gops, gpriv, file, &args->u.exp);
	case AMDGPU_UALINK_OP_IMPORT:
		return do_import(udev, gops, gpriv, file, &args->u.imp);
	default:
		return do_batch(udev, gops, gpriv, file, &args->u.batch);
	}
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_ioctl);
