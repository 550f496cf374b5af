// SPDX-License-Identifier: GPL-2.0 OR MIT

#include <kunit/visibility.h>
#include <linux/dma-fence.h>
#include <linux/dma-fence-unwrap.h>
#include <linux/export.h>
#include <linux/moduleparam.h>
#include <linux/rcupdate.h>
#include <linux/rhashtable.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>

#include <drm/amdgpu_drm.h>
#include <drm/drm_print.h>

#include "amdgpu_ualink_dev.h"
#include "amdgpu_ualink_dmabuf.h"
#include "amdgpu_ualink_npa.h"
#include "amdgpu_ualink_trace.h"

/**
 * DOC: Import
 *
 * amdgpu_ualink_import_get() turns a handle into a reference to a
 * &struct amdgpu_ualink_import. A handle of ours gives back our own buffer
 * (%AMDGPU_UALINK_IMPORT_LOCAL); one whose accelerator is not a member of
 * our virtual pod (&amdgpu_ualink_dev_ops.member) fails with -EACCES
 * before anything is sent, one whose accelerator is offline with -ENOLINK
 * (the mailbox sends nothing to it).
 *
 * The device's table maps handles to imports and holds them weakly: it
 * never keeps one alive. A second import of a live handle gets the same
 * import, and concurrent imports of one handle all wait for the single
 * NPA_REQ in flight and get its result. A waiter interrupted by a signal
 * returns -ERESTARTSYS and parks its reference for the restart of its
 * call, which joins the request or finds it granted; the parked reference
 * goes a second or two after the request ended, and if it was the last,
 * the release below gives a granted range back.
 *
 * The exporter's answer makes the import READY, with the granted range,
 * or FAILED: -ENOENT for an unknown or unauthorised handle, -ENOSPC when
 * the exporter's window is full, -EREMOTEIO for any other refusal, -ETIMEDOUT
 * when the exporter stays silent, -ENOLINK when its connection ended.
 *
 * When the last reference goes, a READY import (or a PENDING one whose
 * request turns out granted) becomes RELEASING and sends NPA_RELEASE
 * unasked from the device's workqueue; it leaves the table only once the
 * exporter answered or the request failed. No work item waits for an
 * exporter: the release starts once the import's request ended too, and
 * each request of a release or a kill queues the work's next step when
 * it ends, so that a silent exporter holds none of the workqueue's
 * workers (amdgpu_ualink_dev_flush() waits for those under way).
 *
 * An import whose request timed out after it was sent (alone: the
 * connection lives on) may have been granted all the same, its answer
 * lost: it stays in the table, and its last reference asks the exporter
 * again and releases what the answer names. An import of the same handle
 * meanwhile waits for that, and revocations leave a releasing import
 * alone, so a release never takes a new grant away.
 *
 * The exporter's NPA_REVOKE, or the end of its connection, makes an import
 * DEAD: it leaves the table (a later import of the handle asks anew). The
 * mailbox's worker only marks it and answers; the rest is the import's
 * kill work on the device's workqueue: the driver's revoke callback turns
 * its buffer dead without waiting (no GPU work submitted from then on
 * reaches the range) and hands back a fence for the work submitted before.
 * After an NPA_REVOKE, NPA_RELEASE goes to the exporter once that fence
 * signals, or after at most ``revoke_timeout_ms`` (a module parameter,
 * 10 s by default) if it does not: the exporter keeps the memory for us
 * until then, and then denies us at its fabric whether or not we released
 * (see the Export DOC), so that GPU work still running after the bound
 * faults at the fabric instead of reaching memory that moved on. After the
 * end of a connection nothing is sent. A revocation that overtakes the
 * grant it revokes (the answer was queued behind it, or lost and answered
 * again from the exporter's cache) marks the import, which then fails with
 * -ENOENT. The revoke callback and amdgpu_ualink_import_set_obj() are
 * serialised, so the driver can free its buffer once it detached it.
 */

static void import_kill_work(struct work_struct *work);

/* The exporter's accelerator ID, from the handle's low bits. */
static u16 import_exporter(const struct amdgpu_ualink_import *imp)
{
	return imp->handle[0] & (AMDGPU_UALINK_MAX_ACCELS - 1);
}

static unsigned int revoke_timeout_ms = 10000;
module_param(revoke_timeout_ms, uint, 0644);
MODULE_PARM_DESC(revoke_timeout_ms,
		 "Longest time GPU work on a revoked import may keep its exporter's memory (default 10000)");

static unsigned int import_quota = AMDGPU_UALINK_BATCH_MAX;
module_param(import_quota, uint, 0644);
MODULE_PARM_DESC(import_quota,
		 "Imports one process may have waiting for their exporters' answers on a device (default 1024)");

/**
 * amdgpu_ualink_import_quota - a process's quota of imports in flight
 * @dev: the importing device
 *
 * The NPA_REQs one owner (the @owner of amdgpu_ualink_import_start())
 * may have outstanding on @dev, each from its submission to its end.
 *
 * Returns: &amdgpu_ualink_dev.import_quota, or when that is 0 the
 * ``import_quota`` module parameter.
 */
unsigned int amdgpu_ualink_import_quota(struct amdgpu_ualink_dev *dev)
{
	return READ_ONCE(dev->import_quota) ?: READ_ONCE(import_quota);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_import_quota);

/**
 * amdgpu_ualink_revoke_timeout - how long a revoked import may stay in use
 * @dev: the device
 *
 * An importer sends NPA_RELEASE at the latest this long after an
 * NPA_REVOKE; an exporter waits for it this long plus one mailbox timeout.
 *
 * Returns: &amdgpu_ualink_dev.revoke_timeout, or when that is 0 the
 * ``revoke_timeout_ms`` module parameter, in jiffies.
 */
unsigned long amdgpu_ualink_revoke_timeout(struct amdgpu_ualink_dev *dev)
{
	return READ_ONCE(dev->revoke_timeout) ?:
	       msecs_to_jiffies(READ_ONCE(revoke_timeout_ms));
}

/* Both words compared in line, not memcmp() called for 16 bytes */
static int import_cmp(struct rhashtable_compare_arg *arg, const void *obj)
{
	const struct amdgpu_ualink_import *imp = obj;
	const u64 *handle = arg->key;

	return imp->handle[0] != handle[0] || imp->handle[1] != handle[1];
}

/*
 * Not shrunk when imports go: a batch of a thousand imports would grow the
 * table through eight resizes (inserts and lookups taking the slow way
 * meanwhile) every time, only for it to shrink again once they are
 * released. The table stays at what the most imports at once needed.
 */
static const struct rhashtable_params import_params = {
	.key_len = sizeof_field(struct amdgpu_ualink_import, handle),
	.key_offset = offsetof(struct amdgpu_ualink_import, handle),
	.head_offset = offsetof(struct amdgpu_ualink_import, node),
	.obj_cmpfn = import_cmp,
};

/*
 * An interrupted waiter's reference outlives the end of its request by one
 * to two of these, for the restart of the call (an import dropped at once
 * would be released, and its restart would wait for that and ask anew:
 * under a storm of signals, faster than the exporter answers, for ever).
 */
#define IMPORT_PARK_TICK	HZ

/* &amdgpu_ualink_import.parked */
enum {
	IMPORT_UNPARKED,
	IMPORT_PARKED,		/* in &amdgpu_ualink_dev.parked */
	IMPORT_PARK_AGED,	/* and its request ended a tick ago at least */
};

/* Keep an interrupted waiter's reference to @imp for the call's restart. */
static void import_park(struct amdgpu_ualink_import *imp)
{
	struct amdgpu_ualink_dev *dev = imp->dev;
	bool held;

	mutex_lock(&dev->lock);
	held = imp->parked != IMPORT_UNPARKED;
	if (!held)
		list_add_tail(&imp->park, &dev->parked);
	imp->parked = IMPORT_PARKED;	/* a new interruption: a new hold */
	mutex_unlock(&dev->lock);
	if (held)	/* one parked reference is enough; not the last */
		amdgpu_ualink_import_put(imp);
	else
		queue_delayed_work(dev->wq, &dev->park_work, IMPORT_PARK_TICK);
}

/* Every tick: drop the parked references whose request ended a tick ago. */
static void import_park_work(struct work_struct *work)
{
	struct amdgpu_ualink_dev *dev =
		container_of(to_delayed_work(work), struct amdgpu_ualink_dev,
			     park_work);
	struct amdgpu_ualink_import *imp, *next;
	bool more;

	mutex_lock(&dev->lock);
	list_for_each_entry_safe(imp, next, &dev->parked, park) {
		if (!completion_done(&imp->req.done))
			continue;
		if (imp->parked == IMPORT_PARKED) {
			imp->parked = IMPORT_PARK_AGED;
			continue;
		}
		list_del(&imp->park);
		imp->parked = IMPORT_UNPARKED;
		amdgpu_ualink_import_put(imp);	/* never takes @lock */
	}
	more = !list_empty(&dev->parked);
	mutex_unlock(&dev->lock);
	if (more)
		queue_delayed_work(dev->wq, &dev->park_work, IMPORT_PARK_TICK);
}

/**
 * amdgpu_ualink_import_init - set up the table of imports
 * @dev: the device
 *
 * Returns: 0 or -ENOMEM.
 */
int amdgpu_ualink_import_init(struct amdgpu_ualink_dev *dev)
{
	INIT_LIST_HEAD(&dev->parked);
	INIT_DELAYED_WORK(&dev->park_work, import_park_work);
	return rhashtable_init(&dev->imports, &import_params);
}

/**
 * amdgpu_ualink_import_fini - free the table of imports
 * @dev: the device; every import put and released
 */
void amdgpu_ualink_import_fini(struct amdgpu_ualink_dev *dev)
{
	WARN_ON(!list_empty(&dev->parked));
	WARN_ON(dev->num_imports);
	rhashtable_destroy(&dev->imports);
}

/**
 * amdgpu_ualink_import_unpark - drop the references parked for restarts
 * @dev: the device, whose last file was closed: no call will restart
 *
 * Context: process context; not on the device's workqueue.
 */
void amdgpu_ualink_import_unpark(struct amdgpu_ualink_dev *dev)
{
	struct amdgpu_ualink_import *imp, *next;

	cancel_delayed_work_sync(&dev->park_work);
	mutex_lock(&dev->lock);
	list_for_each_entry_safe(imp, next, &dev->parked, park) {
		list_del(&imp->park);
		imp->parked = IMPORT_UNPARKED;
		amdgpu_ualink_import_put(imp);	/* never takes @lock */
	}
	mutex_unlock(&dev->lock);
}

static void import_unlist(struct amdgpu_ualink_dev *dev,
			  struct amdgpu_ualink_import *imp)
{
	lockdep_assert_held(&dev->lock);

	if (!imp->in_table)
		return;
	rhashtable_remove_fast(&dev->imports, &imp->node, import_params);
	imp->in_table = false;
	dev->peer_refs[import_exporter(imp)].imports--;
	dev->unlisted++;
	wake_up_all(&dev->gone);
}

static int fail_errno(u32 reason)
{
	switch (reason) {
	case AMDGPU_UALINK_FAIL_INVALID_HANDLE:
		return -ENOENT;
	case AMDGPU_UALINK_FAIL_NO_SPACE:
		return -ENOSPC;
	default:	/* EIO is for a dead device: the exporter is alive */
		return -EREMOTEIO;
	}
}

/* The request finished: take its result, once. Device lock held. */
static void import_settle(struct amdgpu_ualink_dev *dev,
			  struct amdgpu_ualink_import *imp)
{
	const struct amdgpu_ualink_msg *rsp = &imp->req.rsp;

	lockdep_assert_held(&dev->lock);

	if (imp->state != AMDGPU_UALINK_IMPORT_PENDING ||
	    !completion_done(&imp->req.done))
		return;
	if (!imp->req.status && rsp->type == AMDGPU_UALINK_MSG_NPA_RSP &&
	    !imp->revoked) {
		imp->npa = rsp->npa;
		imp->size = rsp->size;
		WRITE_ONCE(imp->state, AMDGPU_UALINK_IMPORT_READY);
		trace_amdgpu_ualink_import_ready(dev->id, import_exporter(imp),
						 imp->handle[0], imp->npa,
						 imp->size, 0);
		return;
	}
	/* a revocation that overtook the grant: the export is gone */
	imp->error = imp->revoked ? -ENOENT :
		     imp->req.status ?: fail_errno(rsp->reason);
	WRITE_ONCE(imp->state, AMDGPU_UALINK_IMPORT_FAILED);
	trace_amdgpu_ualink_import_failed(dev->id, import_exporter(imp),
					  imp->handle[0], 0, 0, imp->error);
	/*
	 * No answer in time: the exporter may have granted it all the same.
	 * It stays listed until its release work asked (a new import of the
	 * handle waits for that, so a give-back never takes its grant away).
	 */
	imp->unsure = !imp->revoked && imp->req.status == -ETIMEDOUT &&
		      amdgpu_ualink_req_sent(&imp->req);
	if (!imp->unsure)
		import_unlist(dev, imp);
}

/* What the release of an import (import_release_work()) waits for next. */
enum import_release_step {
	IMPORT_RELEASE_SETTLE,	/* the import's own request */
	IMPORT_RELEASE_ASKED,	/* the give-back's NPA_REQ */
	IMPORT_RELEASE_SENT,	/* the NPA_RELEASE */
};

/*
 * One of the two things the release waits for to start: the last reference
 * went, or the import's request ended. The second to come queues it.
 */
static bool import_gate_pass(struct amdgpu_ualink_import *imp)
{
	return atomic_inc_return(&imp->gate) == 2;
}

/* The import's request ended: with the mailbox's locks held, never sleeps. */
static void import_req_ended(struct amdgpu_ualink_req *req)
{
	struct amdgpu_ualink_import *imp =
		container_of(req, struct amdgpu_ualink_import, req);

	if (import_gate_pass(imp))
		queue_work(imp->dev->wq, &imp->release);
}

/* A request of the release ended: its next step. Never sleeps. */
static void import_release_req_ended(struct amdgpu_ualink_req *req)
{
	struct amdgpu_ualink_import *imp =
		container_of(req, struct amdgpu_ualink_import, release_req);

	queue_work(imp->dev->wq, &imp->release);
}

/* A request of the kill work ended: the kill goes on. Never sleeps. */
static void import_kill_req_ended(struct amdgpu_ualink_req *req)
{
	struct amdgpu_ualink_import *imp =
		container_of(req, struct amdgpu_ualink_import, release_req);

	queue_work(imp->dev->wq, &imp->kill);
}

/*
 * Send a request of the release or the kill (@type, and for an NPA_RELEASE
 * the range @npa, @size) whose end queues the work's next step, @ended.
 * Returns false when the mailbox refused it: the work goes on at once.
 */
static bool import_send(struct amdgpu_ualink_dev *dev,
			struct amdgpu_ualink_import *imp,
			void (*ended)(struct amdgpu_ualink_req *req), u8 type,
			u64 npa, u64 size)
{
	struct amdgpu_ualink_req *req = &imp->release_req;

	memset(req, 0, sizeof(*req));
	req->msg.type = type;
	req->msg.handle[0] = imp->handle[0];
	req->msg.handle[1] = imp->handle[1];
	req->msg.npa = npa;
	req->msg.size = size;
	req->ended = ended;
	return !amdgpu_ualink_mbox_submit(dev->mbox, import_exporter(imp), req);
}

/*
 * The release, once the last reference went and the import's request
 * ended: a step per run, each started by the end of the request before it,
 * so that it never waits on the workqueue. A granted import sends
 * NPA_RELEASE; one whose request timed out after it was sent may hold a
 * grant the exporter's lost answer made, so it asks again (the exporter
 * gives a member the same range) and gives back what the answer names.
 * Then it leaves the table and is freed.
 */
static void import_release_work(struct work_struct *work)
{
	struct amdgpu_ualink_import *imp =
		container_of(work, struct amdgpu_ualink_import, release);
	struct amdgpu_ualink_dev *dev = imp->dev;
	const struct amdgpu_ualink_msg *rsp = &imp->release_req.rsp;
	bool release, unsure;

	switch (imp->release_step) {
	case IMPORT_RELEASE_SETTLE:
		mutex_lock(&dev->lock);
		import_settle(dev, imp);
		release = imp->state == AMDGPU_UALINK_IMPORT_READY;
		if (release)	/* revocations leave it alone from here on */
			WRITE_ONCE(imp->state, AMDGPU_UALINK_IMPORT_RELEASING);
		unsure = imp->state == AMDGPU_UALINK_IMPORT_FAILED && imp->unsure;
		mutex_unlock(&dev->lock);
		if (unsure) {
			imp->release_step = IMPORT_RELEASE_ASKED;
			if (import_send(dev, imp, import_release_req_ended,
					AMDGPU_UALINK_MSG_NPA_REQ, 0, 0))
				return;
		} else if (release) {
			imp->release_step = IMPORT_RELEASE_SENT;
			if (import_send(dev, imp, import_release_req_ended,
					AMDGPU_UALINK_MSG_NPA_RELEASE, imp->npa,
					imp->size))
				return;
		}
		break;
	case IMPORT_RELEASE_ASKED:
		if (imp->release_req.status || rsp->type != AMDGPU_UALINK_MSG_NPA_RSP)
			break;
		imp->release_step = IMPORT_RELEASE_SENT;
		if (import_send(dev, imp, import_release_req_ended,
				AMDGPU_UALINK_MSG_NPA_RELEASE, rsp->npa, rsp->size))
			return;
		break;
	default:	/* IMPORT_RELEASE_SENT: answered or not, done */
		break;
	}

	mutex_lock(&dev->lock);
	import_unlist(dev, imp);
	dev->num_imports--;
	mutex_unlock(&dev->lock);
	dma_fence_put(imp->busy);
	kfree_rcu(imp, rcu);	/* import_find_ready() may be looking at it */
	if (atomic_dec_and_test(&dev->releasing))
		wake_up_var(&dev->releasing);
}

/* The last reference went on the device's workqueue: release now. */
static void import_last_put_here(struct kref *ref)
{
	struct amdgpu_ualink_import *imp =
		container_of(ref, struct amdgpu_ualink_import, ref);

	atomic_inc(&imp->dev->releasing);
	if (import_gate_pass(imp))
		import_release_work(&imp->release);
}

static void import_last_put(struct kref *ref)
{
	struct amdgpu_ualink_import *imp =
		container_of(ref, struct amdgpu_ualink_import, ref);

	atomic_inc(&imp->dev->releasing);
	if (import_gate_pass(imp))
		queue_work(imp->dev->wq, &imp->release);
}

/**
 * amdgpu_ualink_import_put - drop a reference to an import
 * @imp: the import, or NULL
 *
 * The last one gives the exporter its range back, asynchronously.
 */
void amdgpu_ualink_import_put(struct amdgpu_ualink_import *imp)
{
	if (imp)
		kref_put(&imp->ref, import_last_put);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_import_put);

/**
 * amdgpu_ualink_import_ref - take another reference to an import
 * @imp: an import the caller holds a reference to
 *
 * Returns: @imp.
 */
struct amdgpu_ualink_import *amdgpu_ualink_import_ref(struct amdgpu_ualink_import *imp)
{
	kref_get(&imp->ref);
	return imp;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_import_ref);

/**
 * amdgpu_ualink_import_set_obj - attach the driver's buffer to an import
 * @imp: a READY or DEAD import the caller holds a reference to
 * @obj: the driver's NPA buffer for it, which the revoke callback gets; or
 *	 NULL to detach it, which the driver must do before freeing it
 *
 * Waits for a revoke callback in progress. If the import died before the
 * buffer was attached, the buffer is revoked here.
 *
 * Context: process context, not with @obj reserved.
 */
void amdgpu_ualink_import_set_obj(struct amdgpu_ualink_import *imp, void *obj)
{
	struct amdgpu_ualink_dev *dev = imp->dev;
	bool dead;

	mutex_lock(&dev->revoke_lock);
	mutex_lock(&dev->lock);
	imp->obj = obj;
	dead = imp->state == AMDGPU_UALINK_IMPORT_DEAD;
	mutex_unlock(&dev->lock);
	if (dead && obj) {
		struct dma_fence *fence;

		/* a buffer made for a dead import has no GPU work yet */
		amdgpu_ualink_might_block();
		fence = dev->ops->revoke(dev->priv, obj);
		if (!IS_ERR_OR_NULL(fence))
			dma_fence_put(fence);
	}
	mutex_unlock(&dev->revoke_lock);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_import_set_obj);

/**
 * amdgpu_ualink_import_detach - detach a buffer that is freed once idle
 * @imp: the import the caller holds a reference to, with a buffer attached
 * @busy: the GPU work that may still use the buffer, or NULL when none; an
 *	  error pointer when it is not known. The import takes its own
 *	  reference.
 *
 * As amdgpu_ualink_import_set_obj(@imp, NULL), for a buffer whose memory
 * the driver frees only once its GPU work is done (TTM's delayed
 * destruction): the range stays reachable until then, so a revocation of
 * @imp waits for @busy too, at most amdgpu_ualink_revoke_timeout(), before
 * it gives the range back, as it waits for the revoke callback's fence of
 * an attached buffer; for the fences of every buffer so detached.
 *
 * A buffer whose work is not known (@busy an error pointer, or no memory
 * to merge its fence with the others) counts as busy until the driver
 * calls amdgpu_ualink_import_detached_idle() for it, once it is idle, or
 * until the bound.
 *
 * Context: process context, not with the buffer reserved.
 * Returns: true when the driver must call
 * amdgpu_ualink_import_detached_idle() for this buffer.
 */
bool amdgpu_ualink_import_detach(struct amdgpu_ualink_import *imp,
				 struct dma_fence *busy)
{
	struct amdgpu_ualink_dev *dev = imp->dev;
	struct dma_fence *old = NULL, *merged;
	bool unknown = false;

	mutex_lock(&dev->revoke_lock);
	mutex_lock(&dev->lock);
	imp->obj = NULL;
	mutex_unlock(&dev->lock);
	if (IS_ERR(busy)) {
		unknown = true;
	} else if (busy && !dma_fence_is_signaled(busy)) {
		old = imp->busy;
		if (!old || dma_fence_is_signaled(old))
			merged = dma_fence_get(busy);
		else	/* a buffer of the import before, still busy */
			merged = dma_fence_unwrap_merge(old, busy);
		if (merged) {
			imp->busy = merged;	/* a reference of its own */
		} else {
			unknown = true;
			old = NULL;	/* stays */
		}
	}
	if (unknown)
		imp->busy_unknown++;
	mutex_unlock(&dev->revoke_lock);
	dma_fence_put(old);
	return unknown;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_import_detach);

/**
 * amdgpu_ualink_import_detached_idle - a buffer of unknown work is idle
 * @imp: the import a buffer was detached from while its work was unknown
 *	 (amdgpu_ualink_import_detach() returned true)
 *
 * A revocation waiting for that buffer stops waiting for it.
 *
 * Context: any context that may take a mutex.
 */
void amdgpu_ualink_import_detached_idle(struct amdgpu_ualink_import *imp)
{
	struct amdgpu_ualink_dev *dev = imp->dev;

	mutex_lock(&dev->revoke_lock);
	if (!WARN_ON(!imp->busy_unknown))
		imp->busy_unknown--;
	mutex_unlock(&dev->revoke_lock);
	wake_up_var(&imp->busy_unknown);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_import_detached_idle);

static struct amdgpu_ualink_import *import_new(struct amdgpu_ualink_dev *dev,
					       const u64 handle[2])
{
	struct amdgpu_ualink_import *imp = kzalloc_obj(*imp, GFP_KERNEL_ACCOUNT);

	if (!imp)
		return NULL;
	imp->dev = dev;
	imp->handle[0] = handle[0];
	imp->handle[1] = handle[1];
	kref_init(&imp->ref);
	INIT_WORK(&imp->release, import_release_work);
	INIT_WORK(&imp->kill, import_kill_work);
	/* a submission that fails completes it without the mailbox */
	init_completion(&imp->req.done);
	imp->req.ended = import_req_ended;
	imp->req.msg.type = AMDGPU_UALINK_MSG_NPA_REQ;
	imp->req.msg.handle[0] = handle[0];
	imp->req.msg.handle[1] = handle[1];
	return imp;
}

/*
 * The import of @handle if it is READY, with a reference: no lock taken,
 * so that importing a live handle again costs a lookup, as PRIME's
 * re-export of a buffer does. NULL sends the caller the locked way.
 */
static struct amdgpu_ualink_import *import_find_ready(struct amdgpu_ualink_dev *dev,
						      const u64 handle[2])
{
	struct amdgpu_ualink_import *imp;

	if (!handle[0] && !handle[1])
		return NULL;
	rcu_read_lock();
	imp = rhashtable_lookup(&dev->imports, handle, import_params);
	if (imp && (READ_ONCE(imp->state) != AMDGPU_UALINK_IMPORT_READY ||
		    !kref_get_unless_zero(&imp->ref)))
		imp = NULL;
	rcu_read_unlock();
	return imp;
}

/**
 * amdgpu_ualink_import_live - the import of a handle, if it is granted
 * @dev: the importing device
 * @handle: the handle
 *
 * The lookup a repeated import needs when the import's dma-buf is gone
 * (amdgpu_ualink_import_again() found none), and no more: no request, no
 * lock.
 *
 * Returns: the READY import of @handle with a reference, or NULL (no
 * import of it, one not granted yet or dying, or an exporter that is not
 * a member of our virtual pod): amdgpu_ualink_import_get() then says why.
 */
struct amdgpu_ualink_import *amdgpu_ualink_import_live(struct amdgpu_ualink_dev *dev,
						       const u64 handle[2])
{
	u16 exporter = handle[0] & (AMDGPU_UALINK_MAX_ACCELS - 1);

	if (exporter == dev->id || !dev->ops->member(dev->priv, exporter))
		return NULL;
	return import_find_ready(dev, handle);
}
EXPORT_SYMBOL_IF_KUNIT(amdgpu_ualink_import_live);

/**
 * amdgpu_ualink_import_again - another fd of a live import, without a lock
 * @dev: the importing device
 * @handle: the handle
 * @flags: %AMDGPU_UALINK_IMPORT_CLOEXEC or 0
 *
 * A handle imported before, granted, whose dma-buf lives: an fd of that
 * dma-buf, as PRIME's export of a buffer that has one. Neither a lock nor
 * a reference to the import: it and the slot's published file are looked
 * at under RCU (the import is freed after a grace period).
 *
 * Returns: the file descriptor; -ENOENT when there is no such import (the
 * caller takes the way that makes one, and says why); another negative
 * errno when an fd could not be had.
 */
int amdgpu_ualink_import_again(struct amdgpu_ualink_dev *dev,
			       const u64 handle[2], u32 flags)
{
	u16 exporter = handle[0] & (AMDGPU_UALINK_MAX_ACCELS - 1);
	struct amdgpu_ualink_import *imp;
	struct dma_buf *dma_buf = NULL;

	if (exporter == dev->id || !dev->ops->member(dev->priv, exporter))
		return -ENOENT;
	rcu_read_lock();
	imp = rhashtable_lookup(&dev->imports, handle, import_params);
	if (imp && READ_ONCE(imp->state) == AMDGPU_UALINK_IMPORT_READY)
		dma_buf = amdgpu_ualink_dmabuf_cached(&imp->file);
	rcu_read_unlock();
	return dma_buf ? amdgpu_ualink_dmabuf_install_fd(dma_buf, flags) : -ENOENT;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_import_again);

/**
 * amdgpu_ualink_import_start - start importing the memory behind a handle
 * @dev: the importing device
 * @handle: the handle
 * @owner: the process importing (its thread group ID), or 0 for the kernel
 * @out: the import, with a reference, when 0 is returned; pass it to
 *	 amdgpu_ualink_import_finish()
 *
 * Puts the NPA_REQ on the wire, or joins the one in flight, without
 * waiting for the answer, so that a batch of imports costs one round trip.
 * A new NPA_REQ is @owner's: it waits for the exporter in turn with other
 * owners' (&struct amdgpu_ualink_req.owner), and counts against @owner's
 * amdgpu_ualink_import_quota() until it ends, whoever still waits for it;
 * past the quota, or when the exporter's queue is full, the import fails
 * (amdgpu_ualink_import_finish() says -EDQUOT or -ENOBUFS).
 *
 * Returns: 0; %AMDGPU_UALINK_IMPORT_LOCAL for a handle of ours (see
 * amdgpu_ualink_export_lookup()); -EINVAL for a zero handle; -EACCES when
 * its accelerator is not in our virtual pod; -ENOMEM; -ERESTARTSYS when
 * interrupted waiting for a previous import of the handle to be released.
 */
int amdgpu_ualink_import_start(struct amdgpu_ualink_dev *dev,
			       const u64 handle[2], u32 owner,
			       struct amdgpu_ualink_import **out)
{
	u16 exporter = handle[0] & (AMDGPU_UALINK_MAX_ACCELS - 1);
	struct amdgpu_ualink_import *imp, *fresh = NULL;
	int ret;

	if (!handle[0] && !handle[1])
		return -EINVAL;
	if (exporter == dev->id)
		return AMDGPU_UALINK_IMPORT_LOCAL;
	if (!dev->ops->member(dev->priv, exporter))
		return -EACCES;
	imp = import_find_ready(dev, handle);
	if (imp) {
		*out = imp;
		return 0;
	}

again:
	mutex_lock(&dev->lock);
	imp = rhashtable_lookup_fast(&dev->imports, handle, import_params);
	if (imp && !kref_get_unless_zero(&imp->ref)) {
		/* its release is on the way: wait until an import leaves */
		unsigned long unlisted = dev->unlisted;

		mutex_unlock(&dev->lock);
		ret = wait_event_interruptible(dev->gone,
					       READ_ONCE(dev->unlisted) != unlisted);
		if (ret) {
			kfree(fresh);
			return ret;
		}
		goto again;
	}
	if (!imp) {
		if (!fresh) {
			mutex_unlock(&dev->lock);
			fresh = import_new(dev, handle);
			if (!fresh)
				return -ENOMEM;
			goto again;
		}
		imp = fresh;
		fresh = NULL;
		ret = rhashtable_insert_fast(&dev->imports, &imp->node, import_params);
		if (ret) {
			mutex_unlock(&dev->lock);
			kfree(imp);
			return ret;
		}
		imp->in_table = true;
		dev->peer_refs[exporter].imports++;
		dev->num_imports++;
		trace_amdgpu_ualink_import_request(dev->id, exporter,
						   imp->handle[0], 0, 0, 0);
		imp->req.owner = owner;
		imp->req.quota = owner ? amdgpu_ualink_import_quota(dev) : 0;
		ret = amdgpu_ualink_mbox_submit(dev->mbox, exporter, &imp->req);
		if (ret)	/* settled as failed by whoever looks */
			amdgpu_ualink_mbox_fail(dev->mbox, &imp->req, ret);
	}
	mutex_unlock(&dev->lock);
	kfree(fresh);
	*out = imp;
	return 0;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_import_start);

/**
 * amdgpu_ualink_import_finish - wait for an import started before
 * @imp: the import from amdgpu_ualink_import_start(); its reference is
 *	 dropped unless 0 is returned
 *
 * Waits, interruptibly, for the exporter's answer, at most the mailbox
 * timeout. A signal parks the caller's reference instead of dropping it,
 * for the restart of the call: the request stays in flight, and what it is
 * granted stays held one to two seconds after it ended, so that the
 * restart joins it or finds it READY rather than wait for its release
 * and ask anew; amdgpu_ualink_import_unpark() drops what is parked.
 *
 * Returns: 0 when the range is granted; -ENOENT (unknown handle, or the
 * export went meanwhile), -ENOSPC, -EREMOTEIO, -ETIMEDOUT, -ENOLINK (the
 * exporter's connection ended) as the exporter answered or not;
 * -EDQUOT (the owner's quota), -ENOBUFS (the exporter's queue),
 * -ESHUTDOWN, -ENOMEM from the mailbox; -ERESTARTSYS when interrupted.
 */
int amdgpu_ualink_import_finish(struct amdgpu_ualink_import *imp)
{
	struct amdgpu_ualink_dev *dev = imp->dev;
	int ret;

	/* settled and granted: nothing to wait for or take */
	if (READ_ONCE(imp->state) == AMDGPU_UALINK_IMPORT_READY)
		return 0;
	if (wait_for_completion_interruptible(&imp->req.done)) {
		import_park(imp);
		return -ERESTARTSYS;
	}
	mutex_lock(&dev->lock);
	import_settle(dev, imp);
	switch (imp->state) {
	case AMDGPU_UALINK_IMPORT_READY:
		ret = 0;
		break;
	default:	/* FAILED, DEAD */
		ret = imp->error;
		break;
	}
	mutex_unlock(&dev->lock);
	if (ret)
		amdgpu_ualink_import_put(imp);
	return ret;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_import_finish);

/**
 * amdgpu_ualink_import_get - import the memory behind a handle
 * @dev: the importing device
 * @handle: the handle
 * @out: the import, with a reference, when 0 is returned
 *
 * amdgpu_ualink_import_start() for the kernel (no owner, no quota), then
 * amdgpu_ualink_import_finish().
 *
 * Returns: as those two.
 */
int amdgpu_ualink_import_get(struct amdgpu_ualink_dev *dev,
			     const u64 handle[2],
			     struct amdgpu_ualink_import **out)
{
	struct amdgpu_ualink_import *imp;
	int ret;

	ret = amdgpu_ualink_import_start(dev, handle, 0, &imp);
	if (ret)
		return ret;
	ret = amdgpu_ualink_import_finish(imp);
	if (!ret)
		*out = imp;
	return ret;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_import_get);

/*
 * Make a READY import dead (one whose request was answered is settled
 * first) and queue its kill work, which holds a reference; @tell: send
 * NPA_RELEASE once its GPU work is done. Device lock held. Not one being
 * released (no reference left): its release answers for it. Returns true
 * when it was killed here.
 */
static bool import_kill(struct amdgpu_ualink_dev *dev,
			struct amdgpu_ualink_import *imp, int error, bool tell)
{
	lockdep_assert_held(&dev->lock);

	import_settle(dev, imp);
	if (imp->state != AMDGPU_UALINK_IMPORT_READY ||
	    !kref_get_unless_zero(&imp->ref))
		return false;
	WRITE_ONCE(imp->state, AMDGPU_UALINK_IMPORT_DEAD);
	imp->error = error;
	trace_amdgpu_ualink_import_dead(dev->id, import_exporter(imp),
					imp->handle[0], imp->npa, imp->size,
					error);
	imp->tell = tell;
	import_unlist(dev, imp);
	dev->revoking++;
	atomic_inc(&dev->releasing);	/* for amdgpu_ualink_dev_flush() */
	queue_work(dev->wq, &imp->kill);
	return true;
}

/* The kill is over: its reference goes, and the release may start. */
static void import_kill_done(struct amdgpu_ualink_import *imp)
{
	struct amdgpu_ualink_dev *dev = imp->dev;

	/*
	 * The last reference goes here, on the device's workqueue: release
	 * at once rather than queue the release behind this work, which a
	 * flush of the workqueue that started before it would not wait for.
	 */
	kref_put(&imp->ref, import_last_put_here);
	if (atomic_dec_and_test(&dev->releasing))
		wake_up_var(&dev->releasing);
}

/*
 * Wait for @fence (NULL: idle; an error pointer: unknown, as if busy till
 * the bound) at most @left jiffies. Returns what is left of them, 0 when
 * they ran out.
 */
static long import_wait(struct dma_fence *fence, long left)
{
	if (IS_ERR(fence))
		return schedule_timeout_uninterruptible(left);
	if (fence)
		return dma_fence_wait_timeout(fence, false, left);
	return left;
}

/* Wait at most @left jiffies for @imp's detached buffers of unknown work. */
static long import_wait_unknown(struct amdgpu_ualink_import *imp, long left)
{
	if (!READ_ONCE(imp->busy_unknown))
		return left;
	return wait_var_event_timeout(&imp->busy_unknown,
				      !READ_ONCE(imp->busy_unknown), left);
}

/*
 * The kill work: revoke the buffer without waiting, then (after an
 * NPA_REVOKE) wait for the GPU work submitted before, at most the bound,
 * and send NPA_RELEASE, whose end runs the work again to finish. Never on
 * the mailbox's worker: the revoke callback may wait for the buffer's
 * reservation, and the fence for the GPU; never waits for the exporter.
 */
static void import_kill_work(struct work_struct *work)
{
	struct amdgpu_ualink_import *imp =
		container_of(work, struct amdgpu_ualink_import, kill);
	struct amdgpu_ualink_dev *dev = imp->dev;
	struct dma_fence *fence = NULL, *busy;
	long left;

	if (imp->release_step == IMPORT_RELEASE_SENT)	/* answered or not */
		return import_kill_done(imp);
	amdgpu_ualink_might_block();
	mutex_lock(&dev->revoke_lock);
	if (imp->obj)
		fence = dev->ops->revoke(dev->priv, imp->obj);
	/* and buffers detached while busy, which the driver frees once idle */
	busy = dma_fence_get(imp->busy);
	mutex_unlock(&dev->revoke_lock);
	mutex_lock(&dev->lock);
	if (!--dev->revoking)
		wake_up_var(&dev->revoking);
	mutex_unlock(&dev->lock);

	if (imp->tell) {
		left = import_wait(fence, amdgpu_ualink_revoke_timeout(dev));
		if (left)
			left = import_wait(busy, left);
		if (left)
			left = import_wait_unknown(imp, left);
		if (!left) {
			atomic_inc(&dev->revoke_timeouts);
			pr_warn_ratelimited("amdgpu_ualink: accelerator %u: GPU work on a revoked import outlived revoke_timeout_ms\n",
					    dev->id);
		}
	}
	if (!IS_ERR_OR_NULL(fence))
		dma_fence_put(fence);
	dma_fence_put(busy);
	if (imp->tell) {
		imp->release_step = IMPORT_RELEASE_SENT;
		if (import_send(dev, imp, import_kill_req_ended,
				AMDGPU_UALINK_MSG_NPA_RELEASE, imp->npa, imp->size))
			return;
	}
	import_kill_done(imp);
}

/**
 * amdgpu_ualink_import_revoke - the exporter withdraws a range
 * @dev: the importing device
 * @peer: the exporter
 * @req: its NPA_REVOKE
 * @rsp: the answer (NPA_RELEASE of the range), sent at once by the mailbox
 *
 * Marks the import dead and queues its kill work, which releases the range
 * once the GPU is done with it (bounded, see the Import DOC); the answer
 * then says so (%AMDGPU_UALINK_MSG_F_LATER). Never waits.
 * An import still waiting for its grant is marked instead: the revocation
 * overtook the grant, which then fails the import with -ENOENT.
 */
void amdgpu_ualink_import_revoke(struct amdgpu_ualink_dev *dev, u16 peer,
				 const struct amdgpu_ualink_msg *req,
				 struct amdgpu_ualink_msg *rsp)
{
	struct amdgpu_ualink_import *imp;

	mutex_lock(&dev->lock);
	imp = rhashtable_lookup_fast(&dev->imports, req->handle, import_params);
	if (imp)
		import_settle(dev, imp);
	if (imp && imp->state == AMDGPU_UALINK_IMPORT_PENDING)
		imp->revoked = true;	/* the grant it waits for turns it dead */
	else if (imp && imp->npa == req->npa && imp->size == req->size &&
		 import_kill(dev, imp, -ENOENT, true))
		rsp->flags |= AMDGPU_UALINK_MSG_F_LATER;
	mutex_unlock(&dev->lock);
}

/*
 * Call @fn on every import in the table, under the device's lock and in
 * the walk's RCU read-side section: @fn must not sleep.
 */
static void import_for_each(struct amdgpu_ualink_dev *dev,
			    void (*fn)(struct amdgpu_ualink_dev *dev,
				       struct amdgpu_ualink_import *imp,
				       unsigned long arg),
			    unsigned long arg)
{
	struct amdgpu_ualink_import *imp;
	struct rhashtable_iter iter;

	mutex_lock(&dev->lock);
	rhashtable_walk_enter(&dev->imports, &iter);
	rhashtable_walk_start(&iter);
	while ((imp = rhashtable_walk_next(&iter))) {
		if (IS_ERR(imp))
			continue;
		dev->walk_visits++;
		fn(dev, imp, arg);
	}
	rhashtable_walk_stop(&iter);
	rhashtable_walk_exit(&iter);
	mutex_unlock(&dev->lock);
}

static void import_note_exporter(struct amdgpu_ualink_dev *dev,
				 struct amdgpu_ualink_import *imp,
				 unsigned long exporters)
{
	__set_bit(import_exporter(imp), (unsigned long *)exporters);
}

static void import_drop_if_from(struct amdgpu_ualink_dev *dev,
				struct amdgpu_ualink_import *imp,
				unsigned long exporters)
{
	if (!test_bit(import_exporter(imp), (const unsigned long *)exporters))
		return;
	import_settle(dev, imp);
	if (imp->state == AMDGPU_UALINK_IMPORT_PENDING)
		imp->revoked = true;
	else
		import_kill(dev, imp, -ENOENT, false);
}

/**
 * amdgpu_ualink_import_drop_nonmembers - our virtual pod changed
 * @dev: the importing device
 *
 * Every import from an accelerator that is no longer a member of our
 * virtual pod dies, without a message (the exporter takes us out of its
 * access sets on its side, amdgpu_ualink_export_revoke_nonmembers()): none
 * may outlive the range it names, which the exporter may give to another
 * export, and let us into again, once the pods change back. One still
 * waiting for its grant is marked: the grant then fails it with -ENOENT.
 */
void amdgpu_ualink_import_drop_nonmembers(struct amdgpu_ualink_dev *dev)
{
	DECLARE_BITMAP(gone, AMDGPU_UALINK_MAX_ACCELS);
	unsigned int peer;

	bitmap_zero(gone, AMDGPU_UALINK_MAX_ACCELS);
	import_for_each(dev, import_note_exporter, (unsigned long)gone);
	/* outside the walk's RCU read-side section: the op may sleep */
	for_each_set_bit(peer, gone, AMDGPU_UALINK_MAX_ACCELS)
		if (dev->ops->member(dev->priv, peer))
			__clear_bit(peer, gone);
	if (!bitmap_empty(gone, AMDGPU_UALINK_MAX_ACCELS))
		import_for_each(dev, import_drop_if_from, (unsigned long)gone);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_import_drop_nonmembers);

static void import_kill_if_from(struct amdgpu_ualink_dev *dev,
				struct amdgpu_ualink_import *imp,
				unsigned long peer)
{
	if (import_exporter(imp) == peer)
		import_kill(dev, imp, -ENOLINK, false);
}

/**
 * amdgpu_ualink_import_peer_gone - kill every import from a peer
 * @dev: the importing device
 * @peer: the exporter whose connection ended
 *
 * Its requests in flight have failed already (-ENOLINK, or -ETIMEDOUT when
 * it was lost), before this is called: an import still waiting for its
 * answer asked on the connection that followed (the report trails the end
 * by a moment, in which a new import may start) and is left alone.
 */
void amdgpu_ualink_import_peer_gone(struct amdgpu_ualink_dev *dev, u16 peer)
{
	bool held;

	/* a peer we import nothing from costs no walk of our imports */
	scoped_guard(mutex, &dev->lock)
		held = dev->peer_refs[peer].imports;
	if (held)
		import_for_each(dev, import_kill_if_from, peer);
}
EXPORT_SYMBOL_IF_KUNIT(amdgpu_ualink_import_peer_gone);

static const char *const import_states[] = {
	[AMDGPU_UALINK_IMPORT_PENDING] = "pending",
	[AMDGPU_UALINK_IMPORT_READY] = "ready",
	[AMDGPU_UALINK_IMPORT_FAILED] = "failed",
	[AMDGPU_UALINK_IMPORT_DEAD] = "dead",
	[AMDGPU_UALINK_IMPORT_RELEASING] = "releasing",
};

/**
 * amdgpu_ualink_import_print - print the imports in the table
 * @dev: the device
 * @p: where to print
 *
 * Dead imports still referenced are counted in the device's totals but
 * are no longer in the table. Handles are shown by their exporter and last
 * 32 bits only.
 */
void amdgpu_ualink_import_print(struct amdgpu_ualink_dev *dev,
				struct drm_printer *p)
{
	struct amdgpu_ualink_import *imp;
	struct rhashtable_iter iter;

	mutex_lock(&dev->lock);
	rhashtable_walk_enter(&dev->imports, &iter);
	rhashtable_walk_start(&iter);
	while ((imp = rhashtable_walk_next(&iter))) {
		if (IS_ERR(imp))
			continue;
		drm_printf(p, "import ...%08x from %u: %s npa %#llx size %llu\n",
			   lower_32_bits(imp->handle[1]),
			   import_exporter(imp),
			   import_states[imp->state], imp->npa, imp->size);
	}
	rhashtable_walk_stop(&iter);
	rhashtable_walk_exit(&iter);
	mutex_unlock(&dev->lock);
}
