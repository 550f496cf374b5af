// SPDX-License-Identifier: GPL-2.0 OR MIT

#include <linux/err.h>
#include <linux/export.h>
#include <linux/pid.h>
#include <linux/sched.h>
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
 * it can do with its GEM objects (&struct amdgpu_ualink_gem_ops) and,
 * with each call, the device's state, which every operation but INFO
 * checks (-ENETDOWN unless active). So both answer every malformed
 * argument, and every failure, with the same errno.
 *
 * A batched import copies the entries in, starts every import (all
 * requests on the wire, first-contact handshakes included), then finishes
 * them as their answers arrive (an entry whose exporter is slow holds up
 * no other) and copies the per-entry results out. A signal fails it with
 * -ERESTARTSYS (-EINTR, or restarted by SA_RESTART) after it copied out
 * what it finished and set AMDGPU_UALINK_IMPORT_RESTART in the argument,
 * which drm_ioctl() copies back whatever the result: the same argument,
 * submitted again, does only the entries left untouched, and finds their
 * requests still in flight or granted (an interrupted waiter parks its
 * reference, see amdgpu_ualink_import_finish()), so that a storm of
 * signals cannot keep a batch from ending.
 *
 * **Fair sharing.** Each import is its calling process's (its thread group,
 * whatever file it calls through): its NPA_REQ counts against the
 * process's quota of imports in flight on the device (``import_quota``, a
 * parameter of ``amdgpu_ualink.ko``, 1,024 by default: one batch of the
 * largest size) from its submission until it ends, even when the caller
 * stopped waiting for it (a signal); an import past the quota fails with
 * -EDQUOT without sending anything, and a batch larger than the quota
 * fails whole. The NPA_REQs waiting for one exporter are sent one process
 * at a time, in turn, behind the node's revocations and releases, at most
 * %AMDGPU_UALINK_REQ_QUEUED of them waiting (-ENOBUFS past it), each at
 * most a mailbox timeout (-ETIMEDOUT). An import of a handle the device
 * holds granted already (a lookup, under RCU) sends nothing and takes no
 * quota. What an import allocates for the caller is charged to its memory
 * cgroup (``__GFP_ACCOUNT``); the imports a process holds are GEM handles
 * and fds like any other, bounded by those limits.
 */

/*
 * Whom an import through the ioctl is for: the calling process, whichever
 * of its threads and files it calls through.
 */
static u32 import_owner(void)
{
	return task_tgid_nr(current);
}

static int do_export(struct amdgpu_ualink_dev *udev,
		     const struct amdgpu_ualink_gem_ops *gops, void *gpriv,
		     struct drm_file *file, struct drm_amdgpu_ualink_export *e)
{
	u64 size, handle[2];
	bool pinned;
	void **slot;
	void *obj;
	int ret;

	ret = gops->export_obj(gpriv, file, e->gem_handle, &obj, &size, &slot);
	if (ret)
		return ret;
	/*
	 * Pinned first, outside the handle lock, which every GEM handle
	 * operation of the device takes: a pin waits for the buffer's
	 * reservation and may evict. The export takes the pin over, or it is
	 * dropped when the buffer has one, after the lock.
	 */
	ret = amdgpu_ualink_export_pin(udev, obj);
	if (!ret) {
		pinned = true;
		if (gops->lock_handles(gpriv, obj))
			ret = amdgpu_ualink_export_install(udev, obj, size, slot,
							   handle, &pinned);
		else
			ret = -ENOENT;	/* its last handle went meanwhile */
		gops->unlock_handles(gpriv, obj);
		if (pinned)
			amdgpu_ualink_export_unpin(udev, obj);
	}
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
	struct amdgpu_ualink_import *imp;
	void *local = NULL;
	int ret;

	/* a granted import again, whose dma-buf lives: an fd of it */
	ret = amdgpu_ualink_import_again(udev, handle, i->flags);
	if (ret >= 0) {
		i->fd = ret;
		return 0;
	}
	if (ret != -ENOENT)
		return ret;
	/* granted, without a dma-buf now: nothing goes in flight */
	ret = 0;
	imp = amdgpu_ualink_import_live(udev, handle);
	if (!imp) {
		ret = amdgpu_ualink_import_start(udev, handle, import_owner(),
						 &imp);
		if (!ret)
			ret = amdgpu_ualink_import_finish(imp);
	}
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

/* A batch looks at its entries again once this share of those left ended. */
#define BATCH_LOOK_SHARE	8

/* An entry that can be finished without waiting. */
static bool batch_entry_ready(const struct drm_amdgpu_ualink_batch_entry *e,
			      struct amdgpu_ualink_import *imp)
{
	return e->error || READ_ONCE(imp->state) == AMDGPU_UALINK_IMPORT_READY ||
	       completion_done(&imp->req.done);
}

/* An entry a batch has not done: its outputs as userspace passes them. */
static bool batch_entry_untouched(const struct drm_amdgpu_ualink_batch_entry *e)
{
	return !e->gem_handle && !e->fd && !e->error;
}

/* An entry a batch finished, as an interrupted call left it for its restart. */
static bool batch_entry_finished(const struct drm_amdgpu_ualink_batch_entry *e,
				 u32 flags)
{
	if (!e->error)
		return e->gem_handle &&
		       (e->fd == -1 ||
			(e->fd >= 0 && (flags & AMDGPU_UALINK_IMPORT_FDS)));
	return e->error < 0 && e->error >= -MAX_ERRNO && !e->gem_handle &&
	       e->fd == -1;
}

/*
 * Finish one started entry: wait for its answer, make its handle and fd.
 * Returns false when a signal interrupted the wait: the entry is left
 * untouched, for the call's restart.
 */
static bool batch_finish(struct amdgpu_ualink_dev *udev,
			 const struct amdgpu_ualink_gem_ops *gops, void *gpriv,
			 struct drm_file *file,
			 struct drm_amdgpu_ualink_batch_entry *e,
			 struct amdgpu_ualink_import *imp, u32 flags)
{
	const u64 handle[2] = { e->handle.lo, e->handle.hi };
	bool fd = flags & AMDGPU_UALINK_IMPORT_FDS;
	void *local = NULL;
	int ret = e->error;

	if (!ret) {
		ret = amdgpu_ualink_import_finish(imp);
	} else if (ret == AMDGPU_UALINK_IMPORT_LOCAL) {
		imp = NULL;
		local = amdgpu_ualink_export_lookup(udev, handle);
		ret = local ? 0 : -ENOENT;
	}
	if (ret == -ERESTARTSYS) {
		e->fd = 0;
		e->error = 0;
		return false;
	}
	if (ret) {
		e->error = ret;
		return true;
	}
	/*
	 * The fd's reference is taken while we still hold the first: once
	 * the GEM handle exists, another thread may close it.
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
		return true;
	}
	e->error = 0;
	if (fd) {
		/* without an fd the entry keeps its GEM handle, fd -1 */
		ret = gops->import_fd(gpriv, file, imp, local,
				      flags & AMDGPU_UALINK_IMPORT_CLOEXEC);
		if (ret >= 0)
			e->fd = ret;
	}
	return true;
}

/**
 * amdgpu_ualink_import_batch - import many handles, one round trip
 * @udev: the importing device
 * @gops: the driver's side
 * @gpriv: passed to @gops
 * @file: the calling file, which gets the GEM handles
 * @entries: the entries, copied in and checked; results written in place
 * @count: their number
 * @flags: AMDGPU_UALINK_IMPORT_FDS, AMDGPU_UALINK_IMPORT_CLOEXEC;
 *	   AMDGPU_UALINK_IMPORT_RESTART to do only the untouched entries
 *	   (outputs zero), leaving the others as they are
 *
 * Every import is started before the first is waited for, and the entries
 * are finished in the order their answers arrive: each pass finishes all
 * those answered (failed starts and local handles included), then the
 * call sleeps until an eighth of those left (at least one) may have been
 * answered, or a tick after the first answer. An entry whose GEM handle
 * was made but whose fd could not be keeps the handle, fd -1. A signal
 * ends the wait: the entries answered by then are finished, the others
 * left untouched, their imports parked for the restart
 * (amdgpu_ualink_import_finish()).
 *
 * Returns: 0, or -ERESTARTSYS when a signal left entries untouched.
 */
int amdgpu_ualink_import_batch(struct amdgpu_ualink_dev *udev,
			       const struct amdgpu_ualink_gem_ops *gops,
			       void *gpriv, struct drm_file *file,
			       struct drm_amdgpu_ualink_batch_entry *entries,
			       unsigned int count, u32 flags)
{
	bool restart = flags & AMDGPU_UALINK_IMPORT_RESTART;
	struct amdgpu_ualink_import **imps;
	unsigned int n, i, left = 0, kept;
	u32 owner = import_owner();
	bool done = true;
	u32 *pending;

	/* the imports, then the indices of the entries not finished yet */
	imps = kvcalloc(count, sizeof(*imps) + sizeof(*pending), GFP_KERNEL_ACCOUNT);
	pending = imps ? (u32 *)(imps + count) : NULL;
	for (n = 0; n < count; n++) {
		struct drm_amdgpu_ualink_batch_entry *e = &entries[n];
		const u64 handle[2] = { e->handle.lo, e->handle.hi };

		if (restart && !batch_entry_untouched(e))
			continue;	/* finished before the call's restart */
		e->gem_handle = 0;
		e->fd = -1;
		e->error = imps ? amdgpu_ualink_import_start(udev, handle, owner,
							     &imps[n]) : -ENOMEM;
		if (pending)
			pending[left++] = n;
	}
	if (!imps)
		return 0;
	for (; left; left = kept) {
		u32 seen = amdgpu_ualink_mbox_ended(udev->mbox);

		kept = 0;
		for (i = 0; i < left; i++) {
			n = pending[i];
			if (batch_entry_ready(&entries[n], imps[n]))
				done &= batch_finish(udev, gops, gpriv, file,
						     &entries[n], imps[n], flags);
			else
				pending[kept++] = n;
		}
		if (!kept)
			break;
		/*
		 * A look is O(entries left): look again once a share of them
		 * may have ended, not after every answer (a batch from one
		 * exporter gets its answers one by one, and looking after
		 * each kept the calling thread busy for the whole batch).
		 */
		if (!amdgpu_ualink_mbox_wait_ended(udev->mbox, seen,
						   max(1U, kept / BATCH_LOOK_SHARE)))
			continue;
		/* a signal: those not answered stay untouched, not waited for */
		for (i = 0; i < kept; i++)
			done &= batch_finish(udev, gops, gpriv, file,
					     &entries[pending[i]],
					     imps[pending[i]], flags);
		break;
	}
	kvfree(imps);
	return done ? 0 : -ERESTARTSYS;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_import_batch);

static int do_batch(struct amdgpu_ualink_dev *udev,
		    const struct amdgpu_ualink_gem_ops *gops, void *gpriv,
		    struct drm_file *file,
		    struct drm_amdgpu_ualink_import_batch *b)
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

		if (e->pad || (!e->handle.lo && !e->handle.hi) ||
		    !(batch_entry_untouched(e) ||
		      ((b->flags & AMDGPU_UALINK_IMPORT_RESTART) &&
		       batch_entry_finished(e, b->flags)))) {
			ret = -EINVAL;
			goto out;
		}
	}
	/* it could never be in flight whole */
	if (b->count > amdgpu_ualink_import_quota(udev)) {
		ret = -EDQUOT;
		goto out;
	}
	ret = amdgpu_ualink_import_batch(udev, gops, gpriv, file, entries,
					 b->count, b->flags);
	/* interrupted: drm_ioctl() copies the flag out, for the restart */
	if (ret)
		b->flags |= AMDGPU_UALINK_IMPORT_RESTART;
	if (copy_to_user(uptr, entries, size))
		ret = -EFAULT;	/* the imports stay, as GEM handles of @file */
out:
	kvfree(entries);
	return ret;
}

/**
 * amdgpu_ualink_ioctl - DRM_IOCTL_AMDGPU_UALINK
 * @udev: the device's UALink state, NULL when it has none
 * @state: the device's state now, an ``AMDGPU_UALINK_STATE_*`` as INFO
 *	   gives it, read by the driver's ioctl handler from its own field:
 *	   every operation but INFO needs %AMDGPU_UALINK_STATE_ACTIVE
 * @gops: the driver's side
 * @gpriv: passed to @gops
 * @file: the calling file
 * @args: the argument, copied in; results are written into it
 *
 * Returns: 0 or a negative errno as documented for &struct drm_amdgpu_ualink.
 */
int amdgpu_ualink_ioctl(struct amdgpu_ualink_dev *udev, u32 state,
			const struct amdgpu_ualink_gem_ops *gops, void *gpriv,
			struct drm_file *file, struct drm_amdgpu_ualink *args)
{
	int ret;

	if (!udev)
		return amdgpu_ualink_ioctl_unsupported(args);
	ret = amdgpu_ualink_ioctl_check(args);
	if (ret)
		return ret;
	if (args->op == AMDGPU_UALINK_OP_INFO) {
		struct drm_amdgpu_ualink_info *info = &args->u.info;

		info->accel_id = udev->id;
		gops->info(gpriv, info);
		info->ops = AMDGPU_UALINK_IOCTL_OPS;
		info->import_flags = AMDGPU_UALINK_IOCTL_IMPORT_FLAGS;
		info->batch_flags = AMDGPU_UALINK_IOCTL_BATCH_FLAGS;
		info->batch_max = AMDGPU_UALINK_BATCH_MAX;
		return 0;
	}
	if (state != AMDGPU_UALINK_STATE_ACTIVE)
		return -ENETDOWN;	/* UALink is there, not usable now */

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
