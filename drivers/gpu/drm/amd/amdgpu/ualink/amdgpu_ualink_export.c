// SPDX-License-Identifier: GPL-2.0 OR MIT

#include <linux/export.h>
#include <linux/random.h>
#include <linux/rhashtable.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>

#include <drm/drm_print.h>

#include "amdgpu_ualink_dev.h"
#include "amdgpu_ualink_npa.h"

/**
 * DOC: Export
 *
 * amdgpu_ualink_export_create() gives a buffer a 128-bit handle: our
 * accelerator ID in the low 10 bits, the other 118 bits from the kernel's
 * CSPRNG, never 0 and unique among our live exports. The driver keeps the
 * export in a slot of its buffer, so the same buffer always yields the same
 * handle, also under concurrent calls (the device lock serialises them).
 *
 * An importer's NPA_REQ must present all 128 bits and come from an active
 * member of our virtual pod; anything else gets NPA_FAIL "invalid handle",
 * the same answer for both, so that no one learns which handles exist. The
 * first importer pins the buffer, each gets its own range of our NPA window
 * mapped onto the buffer's pages, and memory per export grows with its
 * importers (a list of grants), not with the pod. A second NPA_REQ from an
 * importer that holds a grant already gets the same range again.
 *
 * An importer's NPA_RELEASE, or the end of its connection, drops its grant:
 * the range is unmapped, the importer's cached translations shot down, the
 * table pages freed after that, and the buffer unpinned once the last grant
 * is undone (not merely unlinked). The export holds a reference to the
 * buffer (&amdgpu_ualink_dev_ops.get) for as long as it pins it, so a grant
 * being undone never reaches a freed buffer, whatever the driver does.
 *
 * amdgpu_ualink_export_destroy() ends an export: no new importer finds it,
 * every importer is sent NPA_REVOKE and answers with NPA_RELEASE once its
 * buffer is dead (or its connection ends, or the request times out); then
 * every range is dropped as above. Grants that the mailbox's worker is
 * undoing at the same time (a release, a lost peer) are waited for until
 * the worker is done with them, unpin and reference included: the wait
 * ends on a count the undoer drops last, and it is read under the lock the
 * undoer holds while it drops it.
 *
 * amdgpu_ualink_export_end() does the same in two halves: under the lock,
 * at once, the handle stops resolving and the grants are taken out; the
 * revocations, the waits and the unpinning follow on the device's
 * workqueue. It is for a driver whose last-handle callback runs where no
 * one may wait for other accelerators (amdgpu's runs in framebuffer
 * teardown as well); amdgpu_ualink_dev_flush() waits for the second half.
 */

struct amdgpu_ualink_export {
	struct rhash_head node;
	/* in amdgpu_ualink_dev.export_list */
	struct list_head link;
	u64 handle[2];
	void *obj;
	u64 size;
	/* the rest under the device lock */
	struct list_head grants;
	/* grants linked, or unlinked and not yet undone: the pin stays */
	unsigned int nr_grants;
	/*
	 * grants unlinked and not yet undone, unpin and put included; the
	 * destroyer frees the export once it reads 0 here under the lock
	 */
	unsigned int nr_undoing;
	/* pinned for importers, with a reference to @obj (ops->get) */
	bool pinned;
	/* ending: the grants export_unlink() took, and their number */
	struct list_head gone;
	unsigned int nr_gone;
	/* amdgpu_ualink_export_end(): export_finish() on the device's wq */
	struct work_struct end_work;
	struct amdgpu_ualink_dev *dev;
};

struct amdgpu_ualink_grant {
	struct list_head link;
	struct amdgpu_ualink_export *exp;
	u16 peer;
	struct amdgpu_ualink_npa_range range;
};

static void export_end_work(struct work_struct *work);

static const struct rhashtable_params export_params = {
	.key_len = sizeof_field(struct amdgpu_ualink_export, handle),
	.key_offset = offsetof(struct amdgpu_ualink_export, handle),
	.head_offset = offsetof(struct amdgpu_ualink_export, node),
	.automatic_shrinking = true,
};

/**
 * amdgpu_ualink_export_init - set up the table of exports
 * @dev: the device
 *
 * Returns: 0 or -ENOMEM.
 */
int amdgpu_ualink_export_init(struct amdgpu_ualink_dev *dev)
{
	INIT_LIST_HEAD(&dev->export_list);
	return rhashtable_init(&dev->exports, &export_params);
}

/**
 * amdgpu_ualink_export_fini - free the table of exports
 * @dev: the device; every export destroyed
 */
void amdgpu_ualink_export_fini(struct amdgpu_ualink_dev *dev)
{
	WARN_ON(dev->num_exports);
	rhashtable_destroy(&dev->exports);
}

static struct amdgpu_ualink_export *export_find(struct amdgpu_ualink_dev *dev,
						const u64 handle[2])
{
	lockdep_assert_held(&dev->lock);

	return rhashtable_lookup_fast(&dev->exports, handle, export_params);
}

/**
 * amdgpu_ualink_export_create - give a buffer a UALink handle
 * @dev: the exporting device
 * @obj: the buffer, which the driver keeps alive until
 *	 amdgpu_ualink_export_destroy()
 * @size: its size, a non-zero multiple of 4 KiB
 * @slot: the driver's place in @obj for the export, NULL while it has none
 * @handle: the handle, set on success
 *
 * Context: not with @obj reserved (pinning for importers reserves it), not
 * from the mailbox's callbacks.
 * Returns: 0; -EINVAL for a bad size; -ENOMEM; an error of the handle
 * table (-EBUSY, -E2BIG) when it cannot grow.
 */
int amdgpu_ualink_export_create(struct amdgpu_ualink_dev *dev, void *obj,
				u64 size, void **slot, u64 handle[2])
{
	struct amdgpu_ualink_export *exp;
	int ret = 0;

	if (!size || !IS_ALIGNED(size, AMDGPU_UALINK_NPA_PAGE_SIZE))
		return -EINVAL;

	mutex_lock(&dev->lock);
	exp = *slot;
	if (exp)
		goto out;

	exp = kzalloc(sizeof(*exp), GFP_KERNEL);
	if (!exp) {
		ret = -ENOMEM;
		goto unlock;
	}
	exp->obj = obj;
	exp->size = size;
	exp->dev = dev;
	INIT_LIST_HEAD(&exp->grants);
	INIT_LIST_HEAD(&exp->gone);
	INIT_WORK(&exp->end_work, export_end_work);
	do {	/* 118 random bits: a repeat is all but impossible */
		exp->handle[0] = (get_random_u64() &
				  ~(u64)(AMDGPU_UALINK_MAX_ACCELS - 1)) | dev->id;
		exp->handle[1] = get_random_u64();
	} while ((!exp->handle[0] && !exp->handle[1]) ||
		 export_find(dev, exp->handle));
	ret = rhashtable_insert_fast(&dev->exports, &exp->node, export_params);
	if (ret) {
		kfree(exp);
		goto unlock;
	}
	list_add_tail(&exp->link, &dev->export_list);
	dev->num_exports++;
	*slot = exp;
out:
	handle[0] = exp->handle[0];
	handle[1] = exp->handle[1];
unlock:
	mutex_unlock(&dev->lock);
	return ret;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_export_create);

/**
 * amdgpu_ualink_export_lookup - find the buffer behind one of our handles
 * @dev: the device
 * @handle: a handle of ours
 *
 * For importing our own handle, which gives our own buffer back.
 * Returns: the buffer with a reference taken by &amdgpu_ualink_dev_ops.get,
 * or NULL when no live export has @handle (or its buffer is going away).
 */
void *amdgpu_ualink_export_lookup(struct amdgpu_ualink_dev *dev,
				  const u64 handle[2])
{
	struct amdgpu_ualink_export *exp;
	void *obj = NULL;

	mutex_lock(&dev->lock);
	exp = export_find(dev, handle);
	if (exp && dev->ops->get(dev->priv, exp->obj))
		obj = exp->obj;
	mutex_unlock(&dev->lock);
	return obj;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_export_lookup);

/**
 * amdgpu_ualink_export_bytes - kernel memory an export takes
 * @dev: the device
 * @handle: one of its handles
 *
 * For the figures and debugfs: the export and its grants, not the page
 * tables behind the grants (which depend on the layout of the buffer).
 * Returns: bytes, or 0 when no live export has @handle.
 */
size_t amdgpu_ualink_export_bytes(struct amdgpu_ualink_dev *dev,
				  const u64 handle[2])
{
	struct amdgpu_ualink_export *exp;
	struct amdgpu_ualink_grant *grant;
	size_t bytes = 0;

	mutex_lock(&dev->lock);
	exp = export_find(dev, handle);
	if (exp) {
		bytes = ksize(exp);
		list_for_each_entry(grant, &exp->grants, link)
			bytes += ksize(grant);
	}
	mutex_unlock(&dev->lock);
	return bytes;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_export_bytes);

/**
 * amdgpu_ualink_export_print - print the exports and their importers
 * @dev: the device
 * @p: where to print
 *
 * Handles are shown by their last 32 bits only: all 128 are the
 * authorisation to import.
 */
void amdgpu_ualink_export_print(struct amdgpu_ualink_dev *dev,
				struct drm_printer *p)
{
	struct amdgpu_ualink_export *exp;
	struct amdgpu_ualink_grant *grant;

	mutex_lock(&dev->lock);
	list_for_each_entry(exp, &dev->export_list, link) {
		drm_printf(p, "export ...%08x size %llu %s, %u importers\n",
			   lower_32_bits(exp->handle[1]), exp->size,
			   exp->pinned ? "pinned" : "not pinned", exp->nr_grants);
		list_for_each_entry(grant, &exp->grants, link)
			drm_printf(p, "  to %u: npa %#llx size %llu\n", grant->peer,
				   grant->range.node.start, grant->range.node.size);
	}
	mutex_unlock(&dev->lock);
}

static u64 window_offset(struct amdgpu_ualink_dev *dev, u64 npa)
{
	return npa - amdgpu_ualink_npa_build(dev->id, 0);
}

/*
 * Take a grant out of its export; it is then private to the caller, and
 * still counted (and the buffer pinned) until grant_undo().
 */
static void grant_unlink(struct amdgpu_ualink_dev *dev,
			 struct amdgpu_ualink_grant *grant)
{
	lockdep_assert_held(&dev->lock);

	list_del_init(&grant->link);
	grant->exp->nr_undoing++;
}

/*
 * Unpin once no grant needs the pin. Returns the buffer whose reference
 * the caller drops with export_put_obj() after the lock: that may be the
 * last reference, and the driver's free may take the lock.
 */
static void *export_unpin_idle(struct amdgpu_ualink_dev *dev,
			       struct amdgpu_ualink_export *exp)
{
	lockdep_assert_held(&dev->lock);

	if (!exp->pinned || exp->nr_grants)
		return NULL;
	dev->ops->unpin(dev->priv, exp->obj);
	exp->pinned = false;
	dev->num_pins--;
	return exp->obj;
}

/*
 * Wait until @count, which its last user drops under the device lock and
 * then wakes @var, reads 0 under the lock: that user is done with whatever
 * it dropped the count for. A wake-up alone proves nothing (any user of
 * @var may wake it), hence the loop.
 */
static void wait_zero(struct amdgpu_ualink_dev *dev, void *var,
		      unsigned int *count)
{
	mutex_lock(&dev->lock);
	while (*count) {
		mutex_unlock(&dev->lock);
		wait_var_event(var, !READ_ONCE(*count));
		mutex_lock(&dev->lock);
	}
	mutex_unlock(&dev->lock);
}

static void export_put_obj(struct amdgpu_ualink_dev *dev, void *obj)
{
	lockdep_assert_not_held(&dev->lock);

	if (obj)
		dev->ops->put(dev->priv, obj);
}

/*
 * Undo an unlinked grant: unmap, make the importer forget its translations,
 * and only then free the table pages, the range, and with the last grant
 * the pin and its reference. The export is not touched after the count its
 * destroyer waits for drops, under the lock; the buffer only through the
 * pin's own reference.
 */
static void grant_undo(struct amdgpu_ualink_dev *dev,
		       struct amdgpu_ualink_grant *grant)
{
	struct amdgpu_ualink_export *exp = grant->exp;
	u64 npa = grant->range.node.start, size = grant->range.node.size;
	struct amdgpu_ualink_pt_unmap unmap;
	void *obj;

	if (!amdgpu_ualink_pt_unmap(dev->pt, window_offset(dev, npa), size, &unmap)) {
		if (dev->ops->shootdown)
			dev->ops->shootdown(dev->priv, grant->peer, npa, size);
		amdgpu_ualink_pt_unmap_done(dev->pt, &unmap);
	}
	amdgpu_ualink_window_free(&dev->window, &grant->range);
	kfree(grant);

	mutex_lock(&dev->lock);
	exp->nr_grants--;
	dev->num_grants--;
	obj = export_unpin_idle(dev, exp);
	if (!--exp->nr_undoing)
		wake_up_var(exp);
	if (!dev->num_grants)
		wake_up_var(&dev->num_grants);
	mutex_unlock(&dev->lock);
	/*
	 * The export may be freed by now; the buffer is held by the pin's
	 * reference, which may be its last (its free may end an export of
	 * it, so not before the count above dropped).
	 */
	export_put_obj(dev, obj);
}

static struct amdgpu_ualink_grant *grant_find(struct amdgpu_ualink_export *exp,
					      u16 peer)
{
	struct amdgpu_ualink_grant *grant;

	list_for_each_entry(grant, &exp->grants, link)
		if (grant->peer == peer)
			return grant;
	return NULL;
}

/* NPA_REQ: authorise, pin once, map a range for @peer. */
static void export_grant(struct amdgpu_ualink_dev *dev, u16 peer,
			 const struct amdgpu_ualink_msg *req,
			 struct amdgpu_ualink_msg *rsp)
{
	struct amdgpu_ualink_pt_cursor cur;
	struct amdgpu_ualink_export *exp;
	struct amdgpu_ualink_grant *grant;
	void *unpinned = NULL;
	int ret;

	mutex_lock(&dev->lock);
	exp = export_find(dev, req->handle);
	if (!exp || !dev->ops->member(dev->priv, peer))
		goto unlock;	/* the default answer: invalid handle */

	grant = grant_find(exp, peer);
	if (grant)
		goto granted;

	rsp->reason = AMDGPU_UALINK_FAIL_ERROR;
	grant = kzalloc(sizeof(*grant), GFP_KERNEL);
	if (!grant)
		goto unlock;
	grant->exp = exp;
	grant->peer = peer;
	if (!exp->pinned) {
		/* the pin holds a reference; none left: the buffer is going */
		if (!dev->ops->get(dev->priv, exp->obj)) {
			rsp->reason = AMDGPU_UALINK_FAIL_INVALID_HANDLE;
			goto free;
		}
		if (dev->ops->pin(dev->priv, exp->obj)) {
			unpinned = exp->obj;
			goto free;
		}
		exp->pinned = true;
		dev->num_pins++;
	}
	ret = amdgpu_ualink_window_alloc(&dev->window, exp->size, &grant->range);
	if (ret) {
		if (ret == -ENOSPC)
			rsp->reason = AMDGPU_UALINK_FAIL_NO_SPACE;
		goto unpin;
	}
	dev->ops->cursor(dev->priv, exp->obj, &cur);
	if (amdgpu_ualink_pt_map(dev->pt, window_offset(dev, grant->range.node.start),
				 exp->size, &cur))
		goto free_range;
	list_add_tail(&grant->link, &exp->grants);
	exp->nr_grants++;
	dev->num_grants++;
granted:
	rsp->type = AMDGPU_UALINK_MSG_NPA_RSP;
	rsp->reason = 0;
	rsp->npa = grant->range.node.start;
	rsp->size = grant->range.node.size;
	goto unlock;

free_range:
	amdgpu_ualink_window_free(&dev->window, &grant->range);
unpin:
	unpinned = export_unpin_idle(dev, exp);
free:
	kfree(grant);
unlock:
	mutex_unlock(&dev->lock);
	export_put_obj(dev, unpinned);
}

/* NPA_RELEASE from @peer: it no longer uses its range. */
static void export_release(struct amdgpu_ualink_dev *dev, u16 peer,
			   const struct amdgpu_ualink_msg *req)
{
	struct amdgpu_ualink_export *exp;
	struct amdgpu_ualink_grant *grant = NULL;

	mutex_lock(&dev->lock);
	exp = export_find(dev, req->handle);
	if (exp)
		grant = grant_find(exp, peer);
	if (grant && (grant->range.node.start != req->npa ||
		      grant->range.node.size != req->size))
		grant = NULL;
	if (grant)
		grant_unlink(dev, grant);
	mutex_unlock(&dev->lock);
	if (grant)
		grant_undo(dev, grant);
}

/**
 * amdgpu_ualink_export_request - answer an importer's request
 * @dev: the exporting device
 * @peer: the importer
 * @req: NPA_REQ, or NPA_RELEASE
 * @rsp: the default answer, to complete
 */
void amdgpu_ualink_export_request(struct amdgpu_ualink_dev *dev, u16 peer,
				  const struct amdgpu_ualink_msg *req,
				  struct amdgpu_ualink_msg *rsp)
{
	if (req->type == AMDGPU_UALINK_MSG_NPA_REQ)
		export_grant(dev, peer, req, rsp);
	else if (req->type == AMDGPU_UALINK_MSG_NPA_RELEASE)
		export_release(dev, peer, req);
}

/**
 * amdgpu_ualink_export_peer_gone - drop every grant of a peer
 * @dev: the exporting device
 * @peer: the importer whose connection ended
 */
void amdgpu_ualink_export_peer_gone(struct amdgpu_ualink_dev *dev, u16 peer)
{
	struct amdgpu_ualink_grant *grant, *next;
	struct amdgpu_ualink_export *exp;
	LIST_HEAD(gone);

	mutex_lock(&dev->lock);
	list_for_each_entry(exp, &dev->export_list, link) {
		grant = grant_find(exp, peer);
		if (grant) {
			grant_unlink(dev, grant);
			list_add_tail(&grant->link, &gone);
		}
	}
	mutex_unlock(&dev->lock);
	list_for_each_entry_safe(grant, next, &gone, link) {
		list_del(&grant->link);
		grant_undo(dev, grant);
	}
}

/**
 * amdgpu_ualink_export_wait_ungranted - wait until no range is granted
 * @dev: the exporting device, which grants nothing new (its
 *	 &amdgpu_ualink_dev_ops.member answers false) and whose grants are
 *	 all unlinked
 *
 * For a reset: grants the mailbox's worker is undoing (a release, a lost
 * peer) are unmapped and unpinned when this returns. The count is dropped
 * under the lock in the same section as the unpin and read here under it.
 */
void amdgpu_ualink_export_wait_ungranted(struct amdgpu_ualink_dev *dev)
{
	wait_zero(dev, &dev->num_grants, &dev->num_grants);
}

/**
 * amdgpu_ualink_export_detach - take an export out of its buffer's slot
 * @dev: the exporting device
 * @slot: the driver's place for the export in the buffer; emptied
 *
 * For a driver that decides under a lock of its own that the export ends
 * (&drm_device.object_name_lock, say, where it sees the buffer's handle
 * count at zero) but must not wait for the importers there: from here on
 * an export of the buffer makes a new handle, and the caller ends the old
 * one with amdgpu_ualink_export_destroy() on the returned pointer's
 * address, without the lock.
 *
 * Context: takes &amdgpu_ualink_dev.lock.
 * Returns: the export, or NULL when the buffer had none.
 */
void *amdgpu_ualink_export_detach(struct amdgpu_ualink_dev *dev, void **slot)
{
	void *exp;

	mutex_lock(&dev->lock);
	exp = *slot;
	*slot = NULL;
	mutex_unlock(&dev->lock);
	return exp;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_export_detach);

/*
 * The first half of ending an export, under the lock: its handle no longer
 * resolves, and its grants are the ender's. Returns NULL when the buffer
 * had no export.
 */
static struct amdgpu_ualink_export *export_unlink(struct amdgpu_ualink_dev *dev,
						  void **slot)
{
	struct amdgpu_ualink_grant *grant, *next;
	struct amdgpu_ualink_export *exp;

	lockdep_assert_held(&dev->lock);

	exp = *slot;
	*slot = NULL;
	if (!exp)
		return NULL;
	rhashtable_remove_fast(&dev->exports, &exp->node, export_params);
	list_del(&exp->link);
	dev->num_exports--;
	list_for_each_entry_safe(grant, next, &exp->grants, link) {
		grant_unlink(dev, grant);
		list_add_tail(&grant->link, &exp->gone);
		exp->nr_gone++;
	}
	return exp;
}

/* The second half, without the lock: revoke, wait, undo, free. */
static void export_finish(struct amdgpu_ualink_dev *dev,
			  struct amdgpu_ualink_export *exp)
{
	struct amdgpu_ualink_grant *grant, *next;
	struct amdgpu_ualink_req *reqs;
	unsigned int n = exp->nr_gone, i;

	/*
	 * Every revocation on the wire before the first wait. The requests
	 * are allocated only now, so that a grant stays small; without
	 * memory for them the ranges go unannounced, which is safe (they
	 * are unmapped and shot down all the same) but leaves the importers
	 * to find out at their next access.
	 */
	reqs = n ? kvcalloc(n, sizeof(*reqs), GFP_KERNEL) : NULL;
	i = 0;
	list_for_each_entry(grant, &exp->gone, link) {
		struct amdgpu_ualink_req *req = reqs ? &reqs[i++] : NULL;

		if (!req)
			break;
		req->msg.type = AMDGPU_UALINK_MSG_NPA_REVOKE;
		req->msg.handle[0] = exp->handle[0];
		req->msg.handle[1] = exp->handle[1];
		req->msg.npa = grant->range.node.start;
		req->msg.size = grant->range.node.size;
		/* one that cannot be sent is done at once */
		if (amdgpu_ualink_mbox_submit(dev->mbox, grant->peer, req)) {
			init_completion(&req->done);
			complete_all(&req->done);
		}
	}
	i = 0;
	list_for_each_entry_safe(grant, next, &exp->gone, link) {
		/* whatever the answer, or none: the range goes */
		if (reqs)
			wait_for_completion(&reqs[i++].done);
		list_del(&grant->link);
		grant_undo(dev, grant);
	}
	kvfree(reqs);

	/*
	 * Grants the worker is undoing meanwhile (a release, a lost peer):
	 * the count is dropped last and under the lock, so once it reads 0
	 * here, under the lock, nobody touches the export or the buffer.
	 */
	wait_zero(dev, exp, &exp->nr_undoing);
	WARN_ON(exp->nr_grants || exp->pinned);
	kfree(exp);
}

static void export_end_work(struct work_struct *work)
{
	struct amdgpu_ualink_export *exp =
		container_of(work, struct amdgpu_ualink_export, end_work);

	export_finish(exp->dev, exp);
}

/**
 * amdgpu_ualink_export_end - end an export without waiting for importers
 * @dev: the exporting device
 * @slot: the driver's place for the export in the buffer; emptied
 *
 * As amdgpu_ualink_export_destroy(), in two halves: here, the handle stops
 * resolving (a new import of it fails with -ENOENT) and the grants are
 * taken out; the revocations, the waits for the importers' answers and
 * the unpinning follow on the device's workqueue, which
 * amdgpu_ualink_dev_flush() waits for. Allocates nothing. The buffer must
 * stay alive only as long as the driver's own use of @slot: the pins of
 * the grants hold references of their own.
 *
 * Context: takes &amdgpu_ualink_dev.lock; for a driver's last-handle
 * callback under &drm_device.object_name_lock, say.
 */
void amdgpu_ualink_export_end(struct amdgpu_ualink_dev *dev, void **slot)
{
	struct amdgpu_ualink_export *exp;

	mutex_lock(&dev->lock);
	exp = export_unlink(dev, slot);
	if (exp)
		queue_work(dev->wq, &exp->end_work);
	mutex_unlock(&dev->lock);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_export_end);

/**
 * amdgpu_ualink_export_destroy - end an export
 * @dev: the exporting device
 * @slot: the driver's place for the export in the buffer; emptied
 *
 * Called when the buffer's last GEM handle goes. Every importer is asked to
 * drop the memory (NPA_REVOKE) and the answers are awaited, each bounded by
 * the mailbox timeout and not cut short by signals (this runs at process
 * exit too); then every range is unmapped, shot down and freed, and the
 * buffer unpinned. Grants the mailbox's worker is undoing meanwhile are
 * waited for as well. When this returns, the buffer is unpinned and the
 * core no longer touches it, but for dropping the pin's reference
 * (&amdgpu_ualink_dev_ops.put), which may then be the last one and free
 * the buffer on the worker. Nothing if the buffer was never exported.
 *
 * Context: process context, not with the buffer reserved, not from the
 * mailbox's callbacks; sleeps up to the mailbox timeout.
 */
void amdgpu_ualink_export_destroy(struct amdgpu_ualink_dev *dev, void **slot)
{
	struct amdgpu_ualink_export *exp;

	mutex_lock(&dev->lock);
	exp = export_unlink(dev, slot);
	mutex_unlock(&dev->lock);
	if (exp)
		export_finish(dev, exp);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_export_destroy);
