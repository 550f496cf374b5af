// SPDX-License-Identifier: GPL-2.0 OR MIT

#include <linux/err.h>
#include <linux/export.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>

#include <drm/drm_print.h>

#include "amdgpu_ualink_dev.h"
#include "amdgpu_ualink_npa.h"

/**
 * DOC: Device
 *
 * &struct amdgpu_ualink_dev is one accelerator's UALink state in the core:
 * its mailbox, the allocator of its NPA window, its NPA page tables (set up
 * by the driver with its own backend), and the tables of what it exports
 * and imports. amdgpu and the emulated pod each embed one per accelerator
 * and provide &struct amdgpu_ualink_dev_ops for their buffers; every line
 * of protocol and lifetime logic is here, shared.
 *
 * The mailbox's handlers dispatch here: NPA_REQ and an importer's
 * NPA_RELEASE go to the export side, an exporter's NPA_REVOKE to the import
 * side, and the end of a connection to both, which drop everything held
 * for or from that peer.
 */

static void dev_request(void *priv, u16 peer, const struct amdgpu_ualink_msg *req,
			struct amdgpu_ualink_msg *rsp)
{
	struct amdgpu_ualink_dev *dev = priv;

	if (req->type == AMDGPU_UALINK_MSG_NPA_REVOKE)
		amdgpu_ualink_import_revoke(dev, peer, req, rsp);
	else
		amdgpu_ualink_export_request(dev, peer, req, rsp);
}

static void dev_peer_event(void *priv, u16 peer,
			   enum amdgpu_ualink_peer_event event)
{
	struct amdgpu_ualink_dev *dev = priv;

	amdgpu_ualink_import_peer_gone(dev, peer);
	amdgpu_ualink_export_peer_gone(dev, peer);
}

static const struct amdgpu_ualink_mbox_handlers dev_handlers = {
	.request = dev_request,
	.peer_event = dev_peer_event,
};

/**
 * amdgpu_ualink_dev_init - set up an accelerator's UALink state
 * @dev: the state, zeroed
 * @id: the accelerator's ID
 * @ops: the driver's buffer callbacks
 * @priv: passed to @ops
 * @mbox_ops: the mailbox transport
 * @mbox_priv: passed to @mbox_ops
 * @pt: the accelerator's NPA page tables, initialised; used until
 *	amdgpu_ualink_dev_fini()
 *
 * Returns: 0, -EINVAL for a bad ID, or -ENOMEM.
 */
int amdgpu_ualink_dev_init(struct amdgpu_ualink_dev *dev, u16 id,
			   const struct amdgpu_ualink_dev_ops *ops, void *priv,
			   const struct amdgpu_ualink_mbox_ops *mbox_ops,
			   void *mbox_priv, struct amdgpu_ualink_pt *pt)
{
	unsigned int i;
	int ret;

	dev->id = id;
	dev->ops = ops;
	dev->priv = priv;
	dev->pt = pt;
	mutex_init(&dev->lock);
	mutex_init(&dev->revoke_lock);
	init_waitqueue_head(&dev->gone);
	dev->peer_refs = kvcalloc(AMDGPU_UALINK_MAX_ACCELS,
				  sizeof(*dev->peer_refs), GFP_KERNEL);
	if (!dev->peer_refs) {
		ret = -ENOMEM;
		goto err_lock;
	}
	for (i = 0; i < AMDGPU_UALINK_MAX_ACCELS; i++)
		xa_init(&dev->peer_refs[i].exports);
	ret = amdgpu_ualink_window_init(&dev->window, id);
	if (ret)
		goto err_refs;
	dev->wq = alloc_workqueue("amdgpu_ualink_dev%u", WQ_UNBOUND, 0, id);
	if (!dev->wq) {
		ret = -ENOMEM;
		goto err_window;
	}
	ret = amdgpu_ualink_export_init(dev);
	if (ret)
		goto err_wq;
	ret = amdgpu_ualink_import_init(dev);
	if (ret)
		goto err_export;
	dev->mbox = amdgpu_ualink_mbox_create(id, mbox_ops, mbox_priv,
					      &dev_handlers, dev);
	if (IS_ERR(dev->mbox)) {
		ret = PTR_ERR(dev->mbox);
		dev->mbox = NULL;
		goto err_import;
	}
	return 0;

err_import:
	amdgpu_ualink_import_fini(dev);
err_export:
	amdgpu_ualink_export_fini(dev);
err_wq:
	destroy_workqueue(dev->wq);
err_window:
	amdgpu_ualink_window_fini(&dev->window);
err_refs:
	kvfree(dev->peer_refs);
err_lock:
	mutex_destroy(&dev->revoke_lock);
	mutex_destroy(&dev->lock);
	return ret;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_dev_init);

/*
 * Wait for the releases of imports under way, each bounded by the mailbox
 * (a request's end starts its next step, on the workqueue), then for the
 * rest of the work queued so far.
 */
static void dev_wait_released(struct amdgpu_ualink_dev *dev)
{
	amdgpu_ualink_import_unpark(dev);	/* no call will restart */
	do {
		wait_var_event(&dev->releasing, !atomic_read(&dev->releasing));
		flush_workqueue(dev->wq);	/* a kill may start one more */
	} while (atomic_read(&dev->releasing));
}

/**
 * amdgpu_ualink_dev_fini - tear an accelerator's UALink state down
 * @dev: the state
 *
 * The driver has destroyed every export and put every import first. The
 * releases of imports still on their way are waited for (each bounded by
 * the mailbox timeout); then the mailbox goes.
 */
void amdgpu_ualink_dev_fini(struct amdgpu_ualink_dev *dev)
{
	unsigned int i;

	dev_wait_released(dev);
	amdgpu_ualink_mbox_destroy(dev->mbox);
	amdgpu_ualink_import_fini(dev);
	amdgpu_ualink_export_fini(dev);
	destroy_workqueue(dev->wq);
	amdgpu_ualink_window_fini(&dev->window);
	for (i = 0; i < AMDGPU_UALINK_MAX_ACCELS; i++)
		WARN_ON(!xa_empty(&dev->peer_refs[i].exports));
	kvfree(dev->peer_refs);
	mutex_destroy(&dev->revoke_lock);
	mutex_destroy(&dev->lock);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_dev_fini);

/**
 * amdgpu_ualink_dev_flush - wait for the work the core has queued so far
 * @dev: the state
 *
 * The releases of imports (each until its last request ended, bounded by
 * the mailbox), the revocations of imports and the ends of exports
 * (amdgpu_ualink_export_end(), which drop the last reference to an
 * exported buffer) run on the device's workqueue: a driver calls this
 * after its last file closed and before it tears down its memory manager.
 * The references that interrupted imports parked for their restart go
 * first (amdgpu_ualink_import_unpark()).
 *
 * Context: process context; not from the core's callbacks.
 */
void amdgpu_ualink_dev_flush(struct amdgpu_ualink_dev *dev)
{
	dev_wait_released(dev);
	amdgpu_ualink_mbox_flush(dev->mbox);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_dev_flush);

/**
 * amdgpu_ualink_dev_reset - our accelerator reset: drop what the fabric held
 * @dev: the state
 *
 * For the driver's GPU reset, after it stopped granting (its
 * &amdgpu_ualink_dev_ops.member answers false while it resets). The
 * mailbox starts a new generation and greets every peer it knew, so that
 * each cleans up what it held from us and for us; here every range we
 * granted is shot down and unmapped, and every import dies (its buffer is
 * revoked; GPU access to it fails from then on). Grants that the
 * mailbox's worker was undoing meanwhile (a release) are undone too when
 * this returns. Exports stay, pinned: their handles remain valid and peers
 * may import them again.
 *
 * Context: process context; not from the mailbox's worker.
 */
void amdgpu_ualink_dev_reset(struct amdgpu_ualink_dev *dev)
{
	unsigned int peer;

	amdgpu_ualink_mbox_reset(dev->mbox);
	for (peer = 0; peer < AMDGPU_UALINK_MAX_ACCELS; peer++) {
		amdgpu_ualink_export_peer_gone(dev, peer);
		amdgpu_ualink_import_peer_gone(dev, peer);
	}
	amdgpu_ualink_export_wait_ungranted(dev);
	/* the imports' buffers are dead (their kill work revoked them) */
	mutex_lock(&dev->lock);
	while (dev->revoking) {
		mutex_unlock(&dev->lock);
		wait_var_event(&dev->revoking, !READ_ONCE(dev->revoking));
		mutex_lock(&dev->lock);
	}
	mutex_unlock(&dev->lock);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_dev_reset);

/**
 * amdgpu_ualink_dev_get_counts - the gauges of an accelerator's UALink state
 * @dev: the state
 * @counts: filled in
 */
void amdgpu_ualink_dev_get_counts(struct amdgpu_ualink_dev *dev,
				  struct amdgpu_ualink_dev_counts *counts)
{
	unsigned int ranges;

	amdgpu_ualink_window_usage(&dev->window, &counts->npa_bytes, &ranges);
	mutex_lock(&dev->lock);
	counts->exports = dev->num_exports;
	counts->grants = dev->num_grants;
	counts->pins = dev->num_pins;
	counts->imports = dev->num_imports;
	mutex_unlock(&dev->lock);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_dev_get_counts);

/**
 * amdgpu_ualink_dev_get_errors - the error counters of an accelerator
 * @dev: the state
 * @errors: filled in
 *
 * Sums the mailbox's counters over every peer that ever talked (a peer's
 * counters outlive its connections) and adds the export and import
 * sides' own.
 */
void amdgpu_ualink_dev_get_errors(struct amdgpu_ualink_dev *dev,
				  struct amdgpu_ualink_dev_errors *errors)
{
	struct amdgpu_ualink_mbox_stats st;
	unsigned int i;

	memset(errors, 0, sizeof(*errors));
	amdgpu_ualink_mbox_get_stats(dev->mbox, -1, &st);
	errors->timeouts = st.timeouts;
	for (i = 0; i < AMDGPU_UALINK_MSG_TYPES; i++)
		errors->retransmissions += st.retransmitted[i];
	for (i = 0; i < AMDGPU_UALINK_DROP_REASONS; i++)
		errors->drops += st.dropped[i];
	errors->connection_ends = st.resets;
	/* atomic_t counters: unsigned, they wrap at 2^32 rather than go negative */
	errors->shootdown_errors = (u32)atomic_read(&dev->shootdown_errors);
	errors->revoke_timeouts = (u32)atomic_read(&dev->revoke_timeouts);
	errors->release_timeouts = (u32)atomic_read(&dev->release_timeouts);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_dev_get_errors);

/**
 * amdgpu_ualink_dev_print - print an accelerator's UALink state
 * @dev: the state
 * @p: where to print, e.g. a debugfs file
 */
void amdgpu_ualink_dev_print(struct amdgpu_ualink_dev *dev,
			     struct drm_printer *p)
{
	u64 allocated;
	unsigned int ranges;

	amdgpu_ualink_window_usage(&dev->window, &allocated, &ranges);
	mutex_lock(&dev->lock);
	drm_printf(p, "accelerator %u: exports %u grants %u pins %u imports %u",
		   dev->id, dev->num_exports, dev->num_grants, dev->num_pins,
		   dev->num_imports);
	drm_printf(p, " shootdown_errors %d\n", atomic_read(&dev->shootdown_errors));
	mutex_unlock(&dev->lock);
	drm_printf(p, "npa window: %llu bytes in %u ranges\n", allocated, ranges);
	amdgpu_ualink_export_print(dev, p);
	amdgpu_ualink_import_print(dev, p);
	amdgpu_ualink_mbox_print(dev->mbox, p);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_dev_print);
