// SPDX-License-Identifier: GPL-2.0 OR MIT

#include <kunit/visibility.h>
#include <linux/export.h>
#include <linux/random.h>
#include <linux/rhashtable.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>

#include <drm/drm_print.h>

#include "amdgpu_ualink_dev.h"
#include "amdgpu_ualink_npa.h"
#include "amdgpu_ualink_trace.h"

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
 * the same answer for both, so that no one learns which handles exist.
 *
 * **Pinned from export to end.** amdgpu_ualink_export_create() pins the
 * buffer (&amdgpu_ualink_dev_ops.pin), in the exporter's process (the
 * ioctl pins it with amdgpu_ualink_export_pin() before the driver's handle
 * lock, and amdgpu_ualink_export_install() makes the export under it),
 * and the end of the export unpins it: exported memory stays where importers
 * find it, and the mailbox's worker, which answers importers, never waits
 * for a reservation or an eviction. The export holds a reference to the
 * buffer (&amdgpu_ualink_dev_ops.get) for as long, so a removal being
 * undone never reaches a freed buffer, whatever the driver does.
 *
 * **One range per export.** The first importer maps the buffer once, into
 * one range of our NPA window that every later importer shares: window use
 * and page tables grow with the exports, not with the importers, so a
 * symmetric heap fits in a pod of 1,024 (a 64 GiB heap takes one 64 GiB
 * range, whoever imports it). Mapping at the first import rather than at
 * export keeps buffers that nobody imports out of the window. Who may
 * reach the range is the export's **access set**, a bitmap of accelerator
 * IDs (one bit per importer, 128 bytes per export): an importer joins it
 * on NPA_REQ (&amdgpu_ualink_dev_ops.allow, which tells the fabric) and a
 * second NPA_REQ from a member gets the same range again.
 *
 * **Leaving the access set.** An importer's NPA_RELEASE, the end of its
 * connection (it reset or went offline), or its leaving our virtual pod
 * (amdgpu_ualink_export_revoke_nonmembers()) takes it out: the fabric
 * stops it at once (&amdgpu_ualink_dev_ops.deny), then its cached
 * translations of the range are shot down. Ended exports, whether waiting
 * for the end work or being revoked by it, lose importers the same way.
 * The buffer stays pinned while the export lives.
 *
 * **A range outlives every removal from it.** Each importer in the access
 * set and each removal not yet undone holds the range; whoever drops the
 * last hold, after its own deny and shootdown, unmaps it and frees its
 * tables, so no range returns to the window while an importer taken out
 * of it may still be let through by the fabric. An export whose set became
 * empty maps a new range for its next importer, whatever its old one is
 * still waiting for. An importer that did not acknowledge its shootdown
 * (&amdgpu_ualink_dev_ops.shootdown failed) may still cache translations
 * of the range, which would reach whatever the range holds next once the
 * fabric lets it in again: the range stays out of the window, unmapped,
 * until that importer's connection has ended (we end it at once,
 * amdgpu_ualink_mbox_peer_forget(), and its next HELLO makes it drop all
 * it holds of ours).
 *
 * amdgpu_ualink_export_destroy() ends an export: no new importer finds it,
 * every member of the access set is sent NPA_REVOKE and answers at once.
 * An importer whose GPU work still uses the range says it will release
 * later (%AMDGPU_UALINK_MSG_F_LATER) and does so with an NPA_RELEASE
 * request of its own once that work is done; the memory stays pinned and
 * mapped for it until then, or for ``revoke_timeout_ms`` plus one mailbox
 * timeout at most. Then every member still in the set is denied and shot
 * down as above, the range unmapped and the buffer unpinned: GPU work of
 * an importer that outlives the bound faults at our fabric. An importer
 * that did not answer its NPA_REVOKE at all may still believe its import
 * ready, and the range may later hold another export it imports: its
 * connection is ended (amdgpu_ualink_mbox_peer_forget()), so that the
 * HELLO of the next contact makes it drop everything it holds of ours
 * before it can be let into any range again. The revocations are sent
 * all at once; without memory for them, one importer at a time (each
 * still hears of it, none loses its connection for our want of memory,
 * and one that left before its turn is not told). Releases and
 * lost peers still take importers out of an ending export (it stays in
 * the table for them, and on &amdgpu_ualink_dev.draining). Removals that
 * the mailbox's worker is undoing at the same time are waited for until
 * the worker is done with them: the wait ends on a count the undoer drops
 * last, and it is read under the lock the undoer holds while it drops it.
 *
 * amdgpu_ualink_export_end() does the same in two halves: under the lock,
 * at once, the handle stops resolving and the access set becomes the
 * ender's; the revocations, the waits and the unpinning follow on the
 * device's workqueue. It is for a driver whose last-handle callback runs
 * where no one may wait for other accelerators (amdgpu's runs in
 * framebuffer teardown as well); amdgpu_ualink_dev_flush() waits for the
 * second half.
 */

struct amdgpu_ualink_export {
	struct rhash_head node;
	/*
	 * in amdgpu_ualink_dev.export_list; once ended by
	 * amdgpu_ualink_export_end(), in amdgpu_ualink_dev.ended
	 */
	struct list_head link;
	u64 handle[2];
	void *obj;
	u64 size;
	/* its key in amdgpu_ualink_dev.export_ids and .peer_refs[].exports */
	u32 id;
	/* the rest under the device lock */
	/* the range every importer shares, mapped onto @obj; NULL when none */
	struct export_range *range;
	/* the access set: importers that may reach @range */
	DECLARE_BITMAP(access, AMDGPU_UALINK_MAX_ACCELS);
	/* bits set in @access */
	unsigned int nr_access;
	/*
	 * ranges of @obj mapped: @range, and earlier ones whose last
	 * removals are being undone
	 */
	unsigned int nr_ranges;
	/*
	 * removals from @access not yet undone; the destroyer frees the
	 * export once it reads 0 here under the lock
	 */
	unsigned int nr_undoing;
	/* ended: found by importers' releases only, no longer granted */
	bool ended;
	/* pinned (all but while the device is suspended), with @obj's reference */
	bool pinned;
	/* export_repin() tried it since the resume, or since an importer asked */
	bool repin_tried;
};

/*
 * A range of our window mapped onto an export's buffer. It lives by its own
 * counts, not by its export's access set: unmapped once no importer is in
 * it and every removal of one was denied and shot down, given back to the
 * window once, besides, every importer that did not acknowledge its
 * shootdown has lost its connection (see the Export DOC).
 */
struct export_range {
	struct amdgpu_ualink_npa_range npa;
	/* the rest under the device lock */
	/* importers in the access set, and removals not yet undone */
	unsigned int holds;
	/* &struct range_unacked naming it */
	unsigned int unacked;
	/* its page tables are in place */
	bool mapped;
	/* the export it maps */
	struct amdgpu_ualink_export *exp;
	/* removals of an export_remove_where() walk not yet done, and its list */
	unsigned int batched;
	struct list_head batch;
};

/*
 * An importer that did not acknowledge the shootdown of @range, in
 * &amdgpu_ualink_dev.unacked until its connection ends.
 */
struct range_unacked {
	struct list_head link;
	struct export_range *range;
	u16 peer;
};

static u64 range_start(const struct export_range *range)
{
	return range->npa.node.start;
}

static u64 range_size(const struct export_range *range)
{
	return range->npa.node.size;
}

/* One importer taken out of an access set, to undo without the lock. */
struct access_removal {
	struct amdgpu_ualink_export *exp;
	u16 peer;
	struct export_range *range;
};

static void export_end_work(struct work_struct *work);
static void export_repin_work(struct work_struct *work);
static void unacked_end(struct amdgpu_ualink_dev *dev, int peer);

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
	INIT_LIST_HEAD(&dev->ended);
	INIT_LIST_HEAD(&dev->draining);
	INIT_LIST_HEAD(&dev->unacked);
	xa_init_flags(&dev->export_ids, XA_FLAGS_ALLOC);
	mutex_init(&dev->walk_lock);
	INIT_WORK(&dev->end_work, export_end_work);
	INIT_WORK(&dev->repin_work, export_repin_work);
	dev->repin_interval = msecs_to_jiffies(AMDGPU_UALINK_REPIN_INTERVAL_MS);
	dev->repin_last = jiffies - dev->repin_interval;
	return rhashtable_init(&dev->exports, &export_params);
}

/**
 * amdgpu_ualink_export_fini - free the table of exports
 * @dev: the device; every export destroyed
 */
void amdgpu_ualink_export_fini(struct amdgpu_ualink_dev *dev)
{
	WARN_ON(dev->num_exports);
	/* no connection is left to end: the ranges kept for one go */
	unacked_end(dev, -1);
	mutex_destroy(&dev->walk_lock);
	WARN_ON(!xa_empty(&dev->export_ids));
	xa_destroy(&dev->export_ids);
	rhashtable_destroy(&dev->exports);
}

/* A live export, or (@ended) one whose importers are still leaving. */
static struct amdgpu_ualink_export *__export_find(struct amdgpu_ualink_dev *dev,
						  const u64 handle[2], bool ended)
{
	struct amdgpu_ualink_export *exp;

	lockdep_assert_held(&dev->lock);

	exp = rhashtable_lookup_fast(&dev->exports, handle, export_params);
	return exp && (ended || !exp->ended) ? exp : NULL;
}

static struct amdgpu_ualink_export *export_find(struct amdgpu_ualink_dev *dev,
						const u64 handle[2])
{
	return __export_find(dev, handle, false);
}

/**
 * amdgpu_ualink_export_pin - pin a buffer for its export, ahead of it
 * @dev: the exporting device
 * @obj: the buffer
 *
 * Takes a reference (&amdgpu_ualink_dev_ops.get) and a pin
 * (&amdgpu_ualink_dev_ops.pin) that amdgpu_ualink_export_install() takes
 * over, or that amdgpu_ualink_export_unpin() drops. Pinning comes first so
 * that it happens outside the locks the export is made under: it waits for
 * the buffer's reservation and may evict other buffers.
 *
 * Context: process context, not with @obj reserved, not from the mailbox's
 * callbacks.
 * Returns: 0; -ENOENT when @obj is being freed; the driver's pin error
 * (-ENOMEM, -ENOSPC, -EINTR, -ERESTARTSYS, ...).
 */
int amdgpu_ualink_export_pin(struct amdgpu_ualink_dev *dev, void *obj)
{
	int ret;

	/*
	 * Pinned from here to the end of the export, in the caller's
	 * process: never on the mailbox's worker, which must not wait for a
	 * reservation or an eviction.
	 */
	if (!dev->ops->get(dev->priv, obj))
		return -ENOENT;
	amdgpu_ualink_might_block();
	ret = dev->ops->pin(dev->priv, obj, true);
	if (ret)
		dev->ops->put(dev->priv, obj);
	return ret;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_export_pin);

/**
 * amdgpu_ualink_export_unpin - drop a pin the export did not take over
 * @dev: the exporting device
 * @obj: the buffer amdgpu_ualink_export_pin() pinned
 *
 * Context: process context, not with @obj reserved (unpinning reserves it).
 */
void amdgpu_ualink_export_unpin(struct amdgpu_ualink_dev *dev, void *obj)
{
	dev->ops->unpin(dev->priv, obj);
	dev->ops->put(dev->priv, obj);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_export_unpin);

/**
 * amdgpu_ualink_export_install - give a pinned buffer a UALink handle
 * @dev: the exporting device
 * @obj: the buffer, pinned by amdgpu_ualink_export_pin()
 * @size: its size, a non-zero multiple of 4 KiB
 * @slot: the driver's place in @obj for the export, NULL while it has none
 * @handle: the handle, set on success
 * @pinned: true on entry; cleared when a new export took the pin over
 *
 * The handle of the buffer's export, made now if it has none. The export
 * keeps @obj pinned until it ends; when the buffer had an export already,
 * or on an error, @pinned stays set and the caller drops its pin with
 * amdgpu_ualink_export_unpin(), after the locks it holds.
 *
 * Context: process context; waits for nothing but the device lock, so the
 * driver may hold a lock of its own (the one under which a buffer's last
 * handle goes).
 * Returns: 0; -EINVAL for a bad size; -ENOMEM; an error of the handle
 * table (-EBUSY, -E2BIG) when it cannot grow.
 */
int amdgpu_ualink_export_install(struct amdgpu_ualink_dev *dev, void *obj,
				 u64 size, void **slot, u64 handle[2],
				 bool *pinned)
{
	struct amdgpu_ualink_export *exp;
	int ret = 0;

	if (WARN_ON(!*pinned))
		return -EINVAL;
	if (!size || !IS_ALIGNED(size, AMDGPU_UALINK_NPA_PAGE_SIZE))
		return -EINVAL;

	mutex_lock(&dev->lock);
	exp = *slot;
	if (exp)	/* the buffer's export: the caller's pin is not needed */
		goto out;
	mutex_unlock(&dev->lock);
	exp = kzalloc_obj(*exp, GFP_KERNEL_ACCOUNT);
	if (!exp)
		return -ENOMEM;
	mutex_lock(&dev->lock);
	if (*slot) {	/* made meanwhile */
		kfree(exp);
		exp = *slot;
		goto out;
	}
	exp->obj = obj;
	exp->size = size;
	exp->pinned = true;
	do {	/* 118 random bits: a repeat is all but impossible */
		exp->handle[0] = (get_random_u64() &
				  ~(u64)(AMDGPU_UALINK_MAX_ACCELS - 1)) | dev->id;
		exp->handle[1] = get_random_u64();
	} while ((!exp->handle[0] && !exp->handle[1]) ||
		 __export_find(dev, exp->handle, true));
	/* IDs from 0, dense, so that each peer's index stays shallow */
	ret = xa_alloc(&dev->export_ids, &exp->id, exp, xa_limit_32b,
		       GFP_KERNEL_ACCOUNT);
	if (ret) {
		mutex_unlock(&dev->lock);
		kfree(exp);
		return ret;
	}
	ret = rhashtable_insert_fast(&dev->exports, &exp->node, export_params);
	if (ret) {
		xa_erase(&dev->export_ids, exp->id);
		mutex_unlock(&dev->lock);
		kfree(exp);
		return ret;
	}
	list_add_tail(&exp->link, &dev->export_list);
	dev->num_exports++;
	dev->num_pins++;
	*slot = exp;
	*pinned = false;	/* the export's from now on */
	trace_amdgpu_ualink_export_create(dev->id, exp->handle[0], size);
out:
	handle[0] = exp->handle[0];
	handle[1] = exp->handle[1];
	mutex_unlock(&dev->lock);
	return ret;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_export_install);

/**
 * amdgpu_ualink_export_create - give a buffer a UALink handle
 * @dev: the exporting device
 * @obj: the buffer; the export takes a reference of its own
 * @size: its size, a non-zero multiple of 4 KiB
 * @slot: the driver's place in @obj for the export, NULL while it has none
 * @handle: the handle, set on success
 *
 * amdgpu_ualink_export_pin() and amdgpu_ualink_export_install() in one,
 * for a caller that holds no lock the pin must stay out of: a new export
 * pins @obj until it ends (&amdgpu_ualink_dev_ops.pin).
 *
 * Context: process context, not with @obj reserved (pinning reserves it),
 * not from the mailbox's callbacks; may wait for @obj's reservation and
 * for the driver to make room for it.
 * Returns: 0; -EINVAL for a bad size; -ENOENT when @obj is being freed;
 * -ENOMEM; the driver's pin error (-ENOMEM, -ENOSPC, -EINTR,
 * -ERESTARTSYS, ...); an error of the handle table (-EBUSY, -E2BIG) when
 * it cannot grow.
 */
int amdgpu_ualink_export_create(struct amdgpu_ualink_dev *dev, void *obj,
				u64 size, void **slot, u64 handle[2])
{
	bool pinned;
	int ret;

	if (!size || !IS_ALIGNED(size, AMDGPU_UALINK_NPA_PAGE_SIZE))
		return -EINVAL;
	ret = amdgpu_ualink_export_pin(dev, obj);
	if (ret)
		return ret;
	pinned = true;
	ret = amdgpu_ualink_export_install(dev, obj, size, slot, handle,
					   &pinned);
	if (pinned)
		amdgpu_ualink_export_unpin(dev, obj);
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
 * For the figures and debugfs: the export, its access set and its range,
 * not the page tables behind the range (which depend on the layout of the
 * buffer). It does not depend on the number of importers.
 * Returns: bytes, or 0 when no live export has @handle.
 */
size_t amdgpu_ualink_export_bytes(struct amdgpu_ualink_dev *dev,
				  const u64 handle[2])
{
	struct amdgpu_ualink_export *exp;
	size_t bytes = 0;

	mutex_lock(&dev->lock);
	exp = export_find(dev, handle);
	if (exp)
		bytes = ksize(exp) + (exp->range ? ksize(exp->range) : 0);
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
	unsigned int peer;

	mutex_lock(&dev->lock);
	list_for_each_entry(exp, &dev->export_list, link) {
		drm_printf(p, "export ...%08x size %llu pinned, %u importers\n",
			   lower_32_bits(exp->handle[1]), exp->size, exp->nr_access);
		if (!exp->range)
			continue;
		drm_printf(p, "  npa %#llx size %llu, to:", range_start(exp->range),
			   range_size(exp->range));
		for_each_set_bit(peer, exp->access, AMDGPU_UALINK_MAX_ACCELS)
			drm_printf(p, " %u", peer);
		drm_printf(p, "\n");
	}
	mutex_unlock(&dev->lock);
}

static u64 window_offset(struct amdgpu_ualink_dev *dev, u64 npa)
{
	return npa - amdgpu_ualink_npa_build(dev->id, 0);
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

/*
 * Clear a range's entries and free its tables. Every importer was denied
 * and shot down before: the fabric walks no table for anyone, so the
 * tables may go as soon as the entries are cleared.
 */
static void range_unmap(struct amdgpu_ualink_dev *dev,
			struct export_range *range)
{
	struct amdgpu_ualink_pt_detached unmap;

	if (!amdgpu_ualink_pt_unmap(dev->pt, window_offset(dev, range_start(range)),
				    range_size(range), &unmap))
		amdgpu_ualink_pt_unmap_done(dev->pt, &unmap);
}

/* Give an unmapped range that nobody may still reach back to the window. */
static void range_free(struct amdgpu_ualink_dev *dev, struct export_range *range)
{
	lockdep_assert_held(&dev->lock);

	amdgpu_ualink_window_free(&dev->window, &range->npa);
	kfree(range);
}

/*
 * Take @peer out of @exp's access set, under the lock. The caller undoes
 * it with access_undo() without the lock; until then the removal counts
 * (and keeps the export, the pin and the range). Once the set is empty,
 * the export has no range of its own: the next importer maps a new one.
 */
static void access_remove(struct amdgpu_ualink_dev *dev,
			  struct amdgpu_ualink_export *exp, u16 peer,
			  struct access_removal *r)
{
	lockdep_assert_held(&dev->lock);

	__clear_bit(peer, exp->access);
	dev->peer_refs[peer].grants--;
	xa_erase(&dev->peer_refs[peer].exports, exp->id);
	exp->nr_access--;
	exp->nr_undoing++;
	r->exp = exp;
	r->peer = peer;
	r->range = exp->range;
	if (!exp->nr_access)
		exp->range = NULL;
}

/*
 * Ask @peer to forget its translations of @npa, @size of our window;
 * bounded by the driver. Returns the driver's answer, counted when it is
 * an error.
 */
static int access_shoot(struct amdgpu_ualink_dev *dev, u16 peer, u64 npa,
			u64 size)
{
	int ret = 0;

	if (dev->ops->shootdown)
		ret = dev->ops->shootdown(dev->priv, peer, npa, size);
	trace_amdgpu_ualink_shootdown(dev->id, peer, npa, size, ret);
	if (ret) {
		atomic_inc(&dev->shootdown_errors);
		pr_warn_ratelimited("amdgpu_ualink: accelerator %u: shootdown by %u unacknowledged\n",
				    dev->id, peer);
	}
	return ret;
}

/*
 * @peer did not acknowledge the shootdown of @range, which a removal not
 * yet done still holds: the fabric refuses it, but it may still cache
 * translations of the range, and were it let into the range again for
 * another export, they would reach that memory. The range stays out of
 * the window until @peer's connection has ended (without memory for the
 * record, for the device's life).
 */
static void range_keep(struct amdgpu_ualink_dev *dev,
		       struct export_range *range, u16 peer)
{
	struct range_unacked *u = kmalloc_obj(*u, GFP_KERNEL);

	mutex_lock(&dev->lock);
	range->unacked++;
	if (u) {
		u->range = range;
		u->peer = peer;
		list_add_tail(&u->link, &dev->unacked);
	}
	mutex_unlock(&dev->lock);
}

/*
 * @n removals from @range, of @exp, denied and shot down: drop their holds.
 * Whoever drops the range's last hold unmaps it, and the range goes back to
 * the window once no importer that failed to acknowledge its shootdown
 * keeps it. The export is not touched after the count its destroyer waits
 * for drops, under the lock.
 */
static void access_done(struct amdgpu_ualink_dev *dev,
			struct amdgpu_ualink_export *exp,
			struct export_range *range, unsigned int n)
{
	bool unmap;

	mutex_lock(&dev->lock);
	range->holds -= n;
	unmap = !range->holds;
	mutex_unlock(&dev->lock);
	if (unmap)
		range_unmap(dev, range);

	mutex_lock(&dev->lock);
	if (unmap) {
		range->mapped = false;
		exp->nr_ranges--;
		if (!range->unacked)
			range_free(dev, range);
	}
	dev->num_grants -= n;
	exp->nr_undoing -= n;
	if (!exp->nr_undoing)
		wake_up_var(exp);
	if (!dev->num_grants)
		wake_up_var(&dev->num_grants);
	mutex_unlock(&dev->lock);
	/* the export may be freed by now */
}

/*
 * Undo a removal: the fabric refuses the importer, its translations of the
 * range are shot down, then access_done(). An importer that did not
 * acknowledge has its connection ended: its next HELLO makes it drop all
 * it holds of ours.
 */
static void access_undo(struct amdgpu_ualink_dev *dev, struct access_removal *r)
{
	struct export_range *range = r->range;
	u64 npa = range_start(range), size = range_size(range);
	int ret;

	dev->ops->deny(dev->priv, r->peer, npa, size);
	ret = access_shoot(dev, r->peer, npa, size);
	if (ret)
		range_keep(dev, range, r->peer);
	access_done(dev, r->exp, range, 1);
	if (ret)
		amdgpu_ualink_mbox_peer_forget(dev->mbox, r->peer);
}

/*
 * @peer's connection ended (-1: every peer's, the device goes away): it
 * drops everything it held of ours before anything else of its passes
 * again, so the ranges kept because it did not acknowledge their shootdown
 * may be handed out again.
 */
static void unacked_end(struct amdgpu_ualink_dev *dev, int peer)
{
	struct range_unacked *u, *next;

	mutex_lock(&dev->lock);
	list_for_each_entry_safe(u, next, &dev->unacked, link) {
		if (peer >= 0 && u->peer != peer)
			continue;
		list_del(&u->link);
		if (!--u->range->unacked && !u->range->mapped)
			range_free(dev, u->range);
		kfree(u);
	}
	mutex_unlock(&dev->lock);
}

/*
 * Map the pinned buffer into a new range of our window. Returns 0 or the
 * NPA_FAIL reason.
 */
static int export_map(struct amdgpu_ualink_dev *dev,
		      struct amdgpu_ualink_export *exp)
{
	struct export_range *range;
	struct amdgpu_ualink_pt_cursor cur;
	int reason = AMDGPU_UALINK_FAIL_ERROR, ret;

	lockdep_assert_held(&dev->lock);

	range = kzalloc_obj(*range, GFP_KERNEL);
	if (!range)
		return reason;
	ret = amdgpu_ualink_window_alloc(&dev->window, exp->size, &range->npa);
	if (ret) {
		if (ret == -ENOSPC)
			reason = AMDGPU_UALINK_FAIL_NO_SPACE;
		goto free;
	}
	dev->ops->cursor(dev->priv, exp->obj, &cur);
	if (amdgpu_ualink_pt_map(dev->pt, window_offset(dev, range_start(range)),
				 exp->size, &cur)) {
		amdgpu_ualink_window_free(&dev->window, &range->npa);
		goto free;
	}
	range->mapped = true;
	range->exp = exp;
	exp->range = range;
	exp->nr_ranges++;
	return 0;

free:
	kfree(range);
	return reason;
}

/* NPA_REQ: authorise, map once, add @peer to the access set. */
static void export_grant(struct amdgpu_ualink_dev *dev, u16 peer,
			 const struct amdgpu_ualink_msg *req,
			 struct amdgpu_ualink_msg *rsp)
{
	struct amdgpu_ualink_export *exp;
	struct export_range *range;
	int reason;

	mutex_lock(&dev->lock);
	exp = export_find(dev, req->handle);
	if (!exp || !dev->ops->member(dev->priv, peer))
		goto unlock;	/* the default answer: invalid handle */
	if (test_bit(peer, exp->access))
		goto granted;

	/*
	 * its pin was lost to a suspend and not taken back; once the resume
	 * tried and failed, an ask has it tried again, off the worker, at
	 * most once a repin_interval
	 */
	if (!exp->pinned) {
		rsp->reason = AMDGPU_UALINK_FAIL_ERROR;
		if (exp->repin_tried &&
		    time_after_eq(jiffies, dev->repin_last + dev->repin_interval)) {
			dev->repin_last = jiffies;
			queue_work(dev->wq, &dev->repin_work);
		}
		goto unlock;
	}
	if (!exp->range) {
		reason = export_map(dev, exp);
		if (reason) {
			rsp->reason = reason;
			goto unlock;
		}
	}
	range = exp->range;
	/* indexed before the fabric lets it in: an insert may fail, an erase not */
	if (xa_insert(&dev->peer_refs[peer].exports, exp->id, exp, GFP_KERNEL))
		goto refuse;
	if (dev->ops->allow(dev->priv, peer, range_start(range), range_size(range))) {
		xa_erase(&dev->peer_refs[peer].exports, exp->id);
		goto refuse;
	}
	__set_bit(peer, exp->access);
	dev->peer_refs[peer].grants++;
	exp->nr_access++;
	range->holds++;
	dev->num_grants++;
	trace_amdgpu_ualink_grant(dev->id, peer, exp->handle[0],
				  range_start(range), range_size(range));
granted:
	rsp->type = AMDGPU_UALINK_MSG_NPA_RSP;
	rsp->reason = 0;
	rsp->npa = range_start(exp->range);
	rsp->size = range_size(exp->range);
	goto unlock;
refuse:
	rsp->reason = AMDGPU_UALINK_FAIL_ERROR;
	if (!range->holds) {	/* mapped for this importer only */
		exp->range = NULL;
		exp->nr_ranges--;
		range_unmap(dev, range);
		range_free(dev, range);
	}
unlock:
	mutex_unlock(&dev->lock);
}

/*
 * NPA_RELEASE from @peer: it no longer uses the range, by its last
 * reference or, after our NPA_REVOKE, once its GPU work on it is done.
 */
static void export_release(struct amdgpu_ualink_dev *dev, u16 peer,
			   const struct amdgpu_ualink_msg *req)
{
	struct amdgpu_ualink_export *exp;
	struct access_removal r;
	bool found = false;

	mutex_lock(&dev->lock);
	exp = __export_find(dev, req->handle, true);
	if (exp && test_bit(peer, exp->access) &&
	    range_start(exp->range) == req->npa &&
	    range_size(exp->range) == req->size) {
		trace_amdgpu_ualink_release(dev->id, peer, exp->handle[0],
					    req->npa, req->size);
		access_remove(dev, exp, peer, &r);
		found = true;
	}
	mutex_unlock(&dev->lock);
	if (found)
		access_undo(dev, &r);
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
EXPORT_SYMBOL_IF_KUNIT(amdgpu_ualink_export_request);

/*
 * Take @peer out of @exp's access set for export_remove_where(), its range
 * on the walk's @batch, and have the fabric refuse it there, without the
 * lock. Returns true when an export left or changed its list meanwhile
 * (since @moves): the walk then starts over.
 */
static bool remove_one(struct amdgpu_ualink_dev *dev,
		       struct amdgpu_ualink_export *exp, u16 peer,
		       unsigned long moves, struct list_head *batch,
		       unsigned long *peers)
{
	struct export_range *range;
	struct access_removal r;

	lockdep_assert_held(&dev->lock);

	access_remove(dev, exp, peer, &r);
	range = r.range;
	if (!range->batched++)
		list_add_tail(&range->batch, batch);
	__set_bit(peer, peers);
	mutex_unlock(&dev->lock);
	dev->ops->deny(dev->priv, peer, range_start(range), range_size(range));
	mutex_lock(&dev->lock);
	return dev->export_moves != moves;
}

/*
 * Take out of every export's access set the importers @gone says go, live
 * exports and ended ones alike (those waiting for the end work and those
 * it is revoking). Walks are serialised (&amdgpu_ualink_dev.walk_lock).
 * With @only an accelerator's ID (the only one @gone can name), the walk
 * visits only the exports that accelerator is in, from its index
 * (&amdgpu_ualink_dev.peer_refs): a peer that restarts again and again
 * costs a visit of what it holds of ours, not a walk of all our exports.
 *
 * The fabric refuses each importer on each range as it is taken out (the
 * lock is dropped for each deny). The walk goes on from where it was
 * unless an export left or changed its list meanwhile
 * (&amdgpu_ualink_dev.export_moves), and starts over then: a removal keeps
 * its export alive, not its place in the list. So the walk is linear in
 * what it visits, not quadratic, when nothing ends beside it.
 *
 * Every importer taken out holds nothing of ours any more, so it is shot
 * down once, for the whole window, not once per range: a lost peer, which
 * answers no shootdown, costs the driver's bound once. Only then are the
 * removals done and the ranges nobody holds unmapped. An importer that did
 * not acknowledge keeps every range of the walk out of the window until
 * its connection has ended.
 */
static void export_remove_where(struct amdgpu_ualink_dev *dev,
				bool (*gone)(struct amdgpu_ualink_dev *dev,
					     unsigned long arg, u16 peer),
				unsigned long arg, int only)
{
	struct list_head *lists[] = {
		&dev->export_list, &dev->ended, &dev->draining,
	};
	DECLARE_BITMAP(peers, AMDGPU_UALINK_MAX_ACCELS);
	DECLARE_BITMAP(unacked, AMDGPU_UALINK_MAX_ACCELS);
	struct export_range *range, *next;
	struct amdgpu_ualink_export *exp;
	unsigned long moves, id;
	unsigned int peer, i, n;
	LIST_HEAD(batch);

	bitmap_zero(peers, AMDGPU_UALINK_MAX_ACCELS);
	bitmap_zero(unacked, AMDGPU_UALINK_MAX_ACCELS);
	mutex_lock(&dev->walk_lock);
	mutex_lock(&dev->lock);
	if (only >= 0 && !dev->peer_refs[only].grants) {
		/* in no access set: nothing to find (a peer greeting in a loop) */
		mutex_unlock(&dev->lock);
		mutex_unlock(&dev->walk_lock);
		return;
	}
again:
	moves = dev->export_moves;
	if (only >= 0) {
		xa_for_each(&dev->peer_refs[only].exports, id, exp) {
			dev->walk_visits++;
			if (gone(dev, arg, only) &&
			    remove_one(dev, exp, only, moves, &batch, peers))
				goto again;
		}
	}
	for (i = 0; only < 0 && i < ARRAY_SIZE(lists); i++) {
		list_for_each_entry(exp, lists[i], link) {
			dev->walk_visits++;
			for_each_set_bit(peer, exp->access, AMDGPU_UALINK_MAX_ACCELS)
				if (gone(dev, arg, peer) &&
				    remove_one(dev, exp, peer, moves, &batch, peers))
					goto again;
		}
	}
	mutex_unlock(&dev->lock);

	for_each_set_bit(peer, peers, AMDGPU_UALINK_MAX_ACCELS)
		if (access_shoot(dev, peer, amdgpu_ualink_npa_build(dev->id, 0),
				 AMDGPU_UALINK_NPA_WINDOW_SIZE))
			__set_bit(peer, unacked);

	/* the walk's own list: no other walk touches @batch meanwhile */
	list_for_each_entry_safe(range, next, &batch, batch) {
		mutex_lock(&dev->lock);
		list_del(&range->batch);
		n = range->batched;
		range->batched = 0;
		exp = range->exp;
		mutex_unlock(&dev->lock);
		for_each_set_bit(peer, unacked, AMDGPU_UALINK_MAX_ACCELS)
			range_keep(dev, range, peer);
		access_done(dev, exp, range, n);
	}
	for_each_set_bit(peer, unacked, AMDGPU_UALINK_MAX_ACCELS)
		amdgpu_ualink_mbox_peer_forget(dev->mbox, peer);
	mutex_unlock(&dev->walk_lock);
}

static bool is_peer(struct amdgpu_ualink_dev *dev, unsigned long arg, u16 peer)
{
	return peer == arg;
}

/**
 * amdgpu_ualink_export_peer_gone - drop a peer from every access set
 * @dev: the exporting device
 * @peer: the importer whose connection ended
 */
void amdgpu_ualink_export_peer_gone(struct amdgpu_ualink_dev *dev, u16 peer)
{
	export_remove_where(dev, is_peer, peer, peer);
	unacked_end(dev, peer);
}
EXPORT_SYMBOL_IF_KUNIT(amdgpu_ualink_export_peer_gone);

static bool not_member(struct amdgpu_ualink_dev *dev, unsigned long arg,
		       u16 peer)
{
	return !dev->ops->member(dev->priv, peer);
}

/**
 * amdgpu_ualink_export_revoke_nonmembers - a virtual pod changed
 * @dev: the exporting device
 *
 * Takes every importer that is no longer an active member of our virtual
 * pod (&amdgpu_ualink_dev_ops.member) out of the access sets: the fabric
 * refuses it and its translations are shot down before this returns. No
 * message is sent (the importer may be out of reach); its import keeps its
 * state until it is released, and any access through it faults at the
 * fabric. The driver calls this after its pod's membership changed.
 *
 * Context: process context; takes &amdgpu_ualink_dev.lock.
 */
void amdgpu_ualink_export_revoke_nonmembers(struct amdgpu_ualink_dev *dev)
{
	export_remove_where(dev, not_member, 0, -1);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_export_revoke_nonmembers);

/**
 * amdgpu_ualink_export_wait_ungranted - wait until no importer is granted
 * @dev: the exporting device, which grants nothing new (its
 *	 &amdgpu_ualink_dev_ops.member answers false) and whose access sets
 *	 are all empty
 *
 * For a reset: removals the mailbox's worker is undoing (a release, a lost
 * peer) are denied, shot down and unmapped when this returns. The count is
 * dropped under the lock once the range is unmapped and read here under
 * it.
 */
void amdgpu_ualink_export_wait_ungranted(struct amdgpu_ualink_dev *dev)
{
	wait_zero(dev, &dev->num_grants, &dev->num_grants);
}

/**
 * amdgpu_ualink_export_unpin_all - the device suspends: unpin its exports
 * @dev: the exporting device, out of the pod (amdgpu_ualink_dev_reset():
 *	 no importer left, none granted until it is back)
 *
 * So that the driver can save exported memory like any other across a
 * system suspend. The exports stay (their handles resolve), but grant
 * nothing until amdgpu_ualink_export_repin_all() pinned them again.
 *
 * Context: process context; takes &amdgpu_ualink_dev.lock.
 */
void amdgpu_ualink_export_unpin_all(struct amdgpu_ualink_dev *dev)
{
	struct amdgpu_ualink_export *exp;
	void *obj;

	/* no pin is taken again until the resume, which tries every one */
	scoped_guard(mutex, &dev->lock) {
		dev->suspended = true;
		list_for_each_entry(exp, &dev->export_list, link)
			exp->repin_tried = false;
	}
	cancel_work_sync(&dev->repin_work);
	for (;;) {
		obj = NULL;
		mutex_lock(&dev->lock);
		list_for_each_entry(exp, &dev->export_list, link) {
			if (!exp->pinned || WARN_ON(exp->nr_ranges))
				continue;
			exp->pinned = false;
			dev->num_pins--;
			obj = exp->obj;
			/* the export's own reference may go with it meanwhile */
			WARN_ON(!dev->ops->get(dev->priv, obj));
			break;
		}
		mutex_unlock(&dev->lock);
		if (!obj)
			break;
		dev->ops->unpin(dev->priv, obj);
		dev->ops->put(dev->priv, obj);
	}
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_export_unpin_all);

/*
 * Pin the exports that are not, each once (repin_tried), unless the
 * device suspends meanwhile. Returns how many pins failed.
 */
static unsigned int export_repin(struct amdgpu_ualink_dev *dev)
{
	struct amdgpu_ualink_export *exp;
	unsigned int failed = 0;
	u64 handle[2];
	void *obj;
	int ret;

	for (;;) {
		obj = NULL;
		mutex_lock(&dev->lock);
		list_for_each_entry(exp, &dev->export_list, link) {
			if (dev->suspended)
				break;
			if (exp->pinned || exp->repin_tried)
				continue;
			exp->repin_tried = true;
			obj = exp->obj;
			handle[0] = exp->handle[0];
			handle[1] = exp->handle[1];
			WARN_ON(!dev->ops->get(dev->priv, obj));
			break;
		}
		mutex_unlock(&dev->lock);
		if (!obj)
			break;
		amdgpu_ualink_might_block();
		ret = dev->ops->pin(dev->priv, obj, false);
		mutex_lock(&dev->lock);
		/* the export may have ended meanwhile: then the pin is not needed */
		exp = ret ? NULL : export_find(dev, handle);
		if (exp && exp->obj == obj && !exp->pinned) {
			exp->pinned = true;
			dev->num_pins++;
		} else if (!ret) {
			exp = NULL;
		}
		mutex_unlock(&dev->lock);
		if (ret)
			failed++;
		else if (!exp)
			dev->ops->unpin(dev->priv, obj);
		dev->ops->put(dev->priv, obj);
	}
	return failed;
}

/**
 * amdgpu_ualink_export_repin_all - the device resumed: pin its exports again
 * @dev: the exporting device
 *
 * Pins every export amdgpu_ualink_export_unpin_all() unpinned. One whose
 * pin fails stays unpinned, and its importers' NPA_REQ get NPA_FAIL
 * "error" (-EREMOTEIO for them) until a pin succeeds: their asks have the
 * pin tried again on the device's workqueue, at most once a second
 * (%AMDGPU_UALINK_REPIN_INTERVAL_MS).
 *
 * Context: process context, where the driver may move buffers; takes
 * &amdgpu_ualink_dev.lock.
 * Returns: the number of exports that could not be pinned again.
 */
unsigned int amdgpu_ualink_export_repin_all(struct amdgpu_ualink_dev *dev)
{
	scoped_guard(mutex, &dev->lock)
		dev->suspended = false;
	return export_repin(dev);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_export_repin_all);

/*
 * The pins a resume could not take back, tried again because an importer
 * asked for one of those exports (amdgpu_ualink_export_request()). Not
 * while the device is suspended: amdgpu_ualink_export_unpin_all() says so,
 * then waits for this. It holds a reference to the buffer it pins, which
 * amdgpu_ualink_export_destroy() waits for.
 */
static void export_repin_work(struct work_struct *work)
{
	struct amdgpu_ualink_dev *dev =
		container_of(work, struct amdgpu_ualink_dev, repin_work);
	struct amdgpu_ualink_export *exp;

	scoped_guard(mutex, &dev->lock) {
		if (dev->suspended)
			return;
		list_for_each_entry(exp, &dev->export_list, link)
			if (!exp->pinned)
				exp->repin_tried = false;
	}
	export_repin(dev);
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
 * resolves for imports, and no importer joins its access set again (it
 * stays in the table for the releases of those in it). It moves to @to in
 * the same step, so that revocations (export_remove_where()) always find
 * it. Returns NULL when the buffer had no export.
 */
static struct amdgpu_ualink_export *export_unlink(struct amdgpu_ualink_dev *dev,
						  void **slot,
						  struct list_head *to)
{
	struct amdgpu_ualink_export *exp;

	lockdep_assert_held(&dev->lock);

	exp = *slot;
	*slot = NULL;
	if (!exp)
		return NULL;
	exp->ended = true;
	list_move_tail(&exp->link, to);
	dev->export_moves++;
	dev->num_exports--;
	return exp;
}

/* An NPA_REVOKE to one importer of an ending export. */
struct revocation {
	struct amdgpu_ualink_req req;
	u16 peer;
};

/* Have all importers that said they release later (@later) released? */
static bool revoked_released(struct amdgpu_ualink_export *exp,
			     const unsigned long *later)
{
	return !bitmap_intersects(later, exp->access, AMDGPU_UALINK_MAX_ACCELS);
}

/*
 * An array for the revocations of @n importers; NULL without memory, or
 * when a test says so.
 */
static struct revocation *revocations_alloc(struct amdgpu_ualink_dev *dev,
					    unsigned int n)
{
#if IS_ENABLED(CONFIG_KUNIT)
	if (READ_ONCE(dev->fail_revocations))
		return NULL;
#endif
	return kvcalloc(n, sizeof(struct revocation), GFP_KERNEL);
}

/*
 * Send NPA_REVOKE to @n importers at once, and wait for their answers:
 * those that will release later are added to @later. An importer that did
 * not answer, and whose connection is not known to have ended (-ENOLINK),
 * may still believe its import ready, and would read whatever the range
 * holds next once it is let into it again: its connection ends, and the
 * next contact's HELLO makes it drop all it holds of ours.
 */
static void revoke_some(struct amdgpu_ualink_dev *dev,
			struct amdgpu_ualink_export *exp, u64 npa, u64 size,
			struct revocation *revs, unsigned int n,
			unsigned long *later)
{
	struct amdgpu_ualink_req *req;
	unsigned int i;
	int ret;

	/* every revocation on the wire before the first wait */
	for (i = 0; i < n; i++) {
		req = &revs[i].req;
		req->msg.type = AMDGPU_UALINK_MSG_NPA_REVOKE;
		req->msg.handle[0] = exp->handle[0];
		req->msg.handle[1] = exp->handle[1];
		req->msg.npa = npa;
		req->msg.size = size;
		trace_amdgpu_ualink_revoke(dev->id, revs[i].peer, exp->handle[0],
					   npa, size);
		/* one that cannot be sent is done at once */
		ret = amdgpu_ualink_mbox_submit(dev->mbox, revs[i].peer, req);
		if (ret) {
			req->status = ret;
			init_completion(&req->done);
			complete_all(&req->done);
		}
	}
	/* the answers say they heard it; their releases follow their GPU work */
	for (i = 0; i < n; i++) {
		req = &revs[i].req;
		wait_for_completion(&req->done);
		if (req->status && req->status != -ENOLINK)
			amdgpu_ualink_mbox_peer_forget(dev->mbox, revs[i].peer);
		else if (!req->status &&
			 (req->rsp.flags & AMDGPU_UALINK_MSG_F_LATER))
			__set_bit(revs[i].peer, later);
	}
}

/*
 * The second half, without the lock, for an export on
 * &amdgpu_ualink_dev.draining: revoke, wait for the releases, undo, unpin,
 * free.
 */
static void export_finish(struct amdgpu_ualink_dev *dev,
			  struct amdgpu_ualink_export *exp)
{
	DECLARE_BITMAP(members, AMDGPU_UALINK_MAX_ACCELS);
	DECLARE_BITMAP(later, AMDGPU_UALINK_MAX_ACCELS);
	unsigned int timeout_ms, retries, n, i, batch, peer;
	struct revocation one, *revs;
	struct access_removal r;
	u64 npa = 0, size = 0;
	bool pinned, gone;
	long left;

	mutex_lock(&dev->lock);
	/* releases and lost peers may take importers out meanwhile */
	n = exp->nr_access;
	bitmap_copy(members, exp->access, AMDGPU_UALINK_MAX_ACCELS);
	if (n) {
		npa = range_start(exp->range);
		size = range_size(exp->range);
	}
	mutex_unlock(&dev->lock);

	/*
	 * The requests are allocated only now, so that an importer costs one
	 * bit, all at once so that every revocation is on the wire before the
	 * first wait. Without memory for them the importers are told one at
	 * a time, with a request on the stack: slower, but each still hears
	 * of it, and none loses its connection (and all it holds of ours)
	 * for our want of memory; one that left meanwhile (a release, a lost
	 * peer) is not told.
	 */
	bitmap_zero(later, AMDGPU_UALINK_MAX_ACCELS);
	revs = n ? revocations_alloc(dev, n) : NULL;
	batch = revs ? n : 1;
	i = 0;
	for_each_set_bit(peer, members, AMDGPU_UALINK_MAX_ACCELS) {
		if (!revs) {
			scoped_guard(mutex, &dev->lock)
				gone = !test_bit(peer, exp->access);
			if (gone)
				continue;
			memset(&one, 0, sizeof(one));
			revs = &one;
		}
		revs[i++].peer = peer;
		if (i < batch)
			continue;
		revoke_some(dev, exp, npa, size, revs, i, later);
		i = 0;
		if (revs == &one)
			revs = NULL;
	}
	if (i)	/* the set had fewer members than counted: never so far */
		revoke_some(dev, exp, npa, size, revs, i, later);
	if (n) {
		amdgpu_ualink_mbox_get_timeout(dev->mbox, &timeout_ms, &retries);
		left = amdgpu_ualink_revoke_timeout(dev) + msecs_to_jiffies(timeout_ms);
		if (!wait_var_event_timeout(exp, revoked_released(exp, later), left))
			atomic_inc(&dev->release_timeouts);
	}
	if (revs != &one)
		kvfree(revs);
	/* whatever the answers, or none: the importers go */
	mutex_lock(&dev->lock);
	while (exp->nr_access) {
		access_remove(dev, exp,
			      find_first_bit(exp->access, AMDGPU_UALINK_MAX_ACCELS), &r);
		mutex_unlock(&dev->lock);
		access_undo(dev, &r);
		mutex_lock(&dev->lock);
	}
	list_del(&exp->link);
	dev->export_moves++;
	rhashtable_remove_fast(&dev->exports, &exp->node, export_params);
	xa_erase(&dev->export_ids, exp->id);
	mutex_unlock(&dev->lock);

	/*
	 * Removals the worker is undoing meanwhile (a release, a lost peer):
	 * the count is dropped last and under the lock, so once it reads 0
	 * here, under the lock, nobody touches the export or the buffer.
	 */
	wait_zero(dev, exp, &exp->nr_undoing);
	WARN_ON(exp->nr_ranges || exp->range);
	mutex_lock(&dev->lock);
	pinned = exp->pinned;
	if (pinned)
		dev->num_pins--;
	mutex_unlock(&dev->lock);
	/* no importer reaches it: the pin, and its reference (maybe the last) */
	if (pinned)
		dev->ops->unpin(dev->priv, exp->obj);
	dev->ops->put(dev->priv, exp->obj);
	trace_amdgpu_ualink_export_destroy(dev->id, exp->handle[0], exp->size);
	kfree(exp);
}

/* The second halves of amdgpu_ualink_export_end(), in order. */
static void export_end_work(struct work_struct *work)
{
	struct amdgpu_ualink_dev *dev =
		container_of(work, struct amdgpu_ualink_dev, end_work);
	struct amdgpu_ualink_export *exp;

	for (;;) {
		mutex_lock(&dev->lock);
		exp = list_first_entry_or_null(&dev->ended,
					       struct amdgpu_ualink_export, link);
		if (exp) {
			list_move_tail(&exp->link, &dev->draining);
			dev->export_moves++;
		}
		mutex_unlock(&dev->lock);
		if (!exp)
			break;
		export_finish(dev, exp);
	}
}

/**
 * amdgpu_ualink_export_end - end an export without waiting for importers
 * @dev: the exporting device
 * @slot: the driver's place for the export in the buffer; emptied
 *
 * As amdgpu_ualink_export_destroy(), in two halves: here, the handle stops
 * resolving (a new import of it fails with -ENOENT) and the access set
 * is taken over; the revocations, the waits for the importers' answers and
 * the unpinning follow on the device's workqueue, which
 * amdgpu_ualink_dev_flush() waits for. Allocates nothing. The buffer must
 * stay alive only as long as the driver's own use of @slot: the pin holds
 * a reference of its own.
 *
 * Context: takes &amdgpu_ualink_dev.lock; for a driver's last-handle
 * callback under &drm_device.object_name_lock, say.
 */
void amdgpu_ualink_export_end(struct amdgpu_ualink_dev *dev, void **slot)
{
	struct amdgpu_ualink_export *exp;

	mutex_lock(&dev->lock);
	exp = export_unlink(dev, slot, &dev->ended);
	if (exp)
		queue_work(dev->wq, &dev->end_work);
	mutex_unlock(&dev->lock);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_export_end);

/**
 * amdgpu_ualink_export_destroy - end an export
 * @dev: the exporting device
 * @slot: the driver's place for the export in the buffer; emptied
 *
 * Every importer is asked to drop the memory (NPA_REVOKE); the answers,
 * and the releases of importers whose GPU work still uses it, are awaited,
 * bounded (see the Export DOC) and not cut short by signals; then every
 * importer left is denied by the fabric and shot down, the range unmapped
 * and freed, and the buffer unpinned. Removals the mailbox's worker is
 * undoing meanwhile are waited for as well. When this returns, the buffer
 * is unpinned, the export's reference to it dropped (which may have freed
 * it) and the core no longer touches it. Nothing if the buffer was never
 * exported. A driver whose users must not wait for importers' GPU work
 * (a process exit, say) uses amdgpu_ualink_export_end().
 *
 * Context: process context, not with the buffer reserved, not from the
 * mailbox's callbacks; sleeps up to ``revoke_timeout_ms`` plus twice the
 * mailbox timeout.
 */
void amdgpu_ualink_export_destroy(struct amdgpu_ualink_dev *dev, void **slot)
{
	struct amdgpu_ualink_export *exp;

	mutex_lock(&dev->lock);
	exp = export_unlink(dev, slot, &dev->draining);
	mutex_unlock(&dev->lock);
	if (!exp)
		return;
	export_finish(dev, exp);
	/* a pin tried again at an importer's ask may hold the buffer still */
	flush_work(&dev->repin_work);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_export_destroy);
