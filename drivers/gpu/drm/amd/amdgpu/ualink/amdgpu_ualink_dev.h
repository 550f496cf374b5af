/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * One accelerator's UALink state in the core: its mailbox, NPA window and
 * page tables, the memory it exports and the memory it imports. See
 * amdgpu_ualink_export.c and amdgpu_ualink_import.c.
 */
#ifndef __AMDGPU_UALINK_DEV_H__
#define __AMDGPU_UALINK_DEV_H__

#include <linux/completion.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rhashtable-types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "amdgpu_ualink_mbox.h"
#include "amdgpu_ualink_pt.h"
#include "amdgpu_ualink_window.h"

struct dma_fence;
struct drm_printer;
struct file;

/**
 * struct amdgpu_ualink_dev_ops - what the core needs of the driver's buffers
 *
 * Buffers are opaque to the core (``void *obj``). All callbacks may sleep.
 * @cursor, @allow and (sometimes) @get and @member are called with
 * &amdgpu_ualink_dev.lock held, @pin, @unpin, @put, @deny, @shootdown and
 * @revoke without it. None may import, export or destroy an export.
 *
 * The mailbox's worker calls only those bounded by the driver and the
 * fabric, never by a user or by GPU work: @cursor, @member, @allow, @deny
 * and @shootdown. @pin runs at export, in the exporter's process, and at
 * amdgpu_ualink_export_repin_all(); @unpin at the end of an export (on the
 * device's workqueue after amdgpu_ualink_export_end()) and at
 * amdgpu_ualink_export_unpin_all(); @revoke on the device's workqueue.
 * They may wait for a buffer's reservation or for room in device memory:
 * the core calls amdgpu_ualink_might_block() before @pin and @revoke,
 * which lockdep reports on the worker.
 *
 * An export holds a reference (@get) to its buffer from its creation to
 * its end, and pins it for as long (but across a suspend, see
 * amdgpu_ualink_export_unpin_all()); it drops the reference (@put) last,
 * which may free the buffer, on the device's workqueue when the export was
 * ended with amdgpu_ualink_export_end(): the driver flushes it
 * (amdgpu_ualink_dev_flush()) before it tears down what freeing a buffer
 * needs.
 */
struct amdgpu_ualink_dev_ops {
	/**
	 * @get: take a reference on exported @obj; false if it is going
	 * away. Called with &amdgpu_ualink_dev.lock held, or while the
	 * caller holds a reference already.
	 */
	bool (*get)(void *priv, void *obj);
	/**
	 * @put: drop a reference taken by @get. Called without
	 * &amdgpu_ualink_dev.lock: it may be the last one and free @obj.
	 */
	void (*put)(void *priv, void *obj);
	/**
	 * @pin: keep @obj resident in device memory while it is exported; 0
	 * or -errno. The core holds a reference to @obj from before @pin
	 * until after @unpin. With @intr (at export, in the exporter's
	 * process) a signal may end the wait for @obj (-EINTR or
	 * -ERESTARTSYS); not when the device resumes.
	 */
	int (*pin)(void *priv, void *obj, bool intr);
	/** @unpin: undo @pin */
	void (*unpin)(void *priv, void *obj);
	/** @cursor: start @cur at the first chunk of pinned @obj's memory */
	void (*cursor)(void *priv, void *obj, struct amdgpu_ualink_pt_cursor *cur);
	/** @member: is @peer an active member of our virtual pod? */
	bool (*member)(void *priv, u16 peer);
	/**
	 * @allow: add @importer to the accelerators the fabric lets reach
	 * our range @npa, @size (the range's access set, checked by the
	 * hardware against the requester of every access that arrives at
	 * us); 0 or -errno. Called with &amdgpu_ualink_dev.lock held, once
	 * per importer of a range; the range is mapped before the first.
	 */
	int (*allow)(void *priv, u16 importer, u64 npa, u64 size);
	/**
	 * @deny: undo @allow: from its return on, the fabric refuses every
	 * new access of @importer to the range (an access already past the
	 * check may finish; @shootdown, which follows, waits for it). Called
	 * without the lock; must not fail.
	 */
	void (*deny)(void *priv, u16 importer, u64 npa, u64 size);
	/**
	 * @shootdown: @importer must forget every translation of the range
	 * @npa, @size of our window it may cache (the whole window, from
	 * amdgpu_ualink_npa_build(id, 0) for %AMDGPU_UALINK_NPA_WINDOW_SIZE,
	 * when the importer was taken out of every range at once: a lost
	 * peer, a change of virtual pod, our reset); returns 0 once it has and
	 * no access of it through an old translation is in flight, or a
	 * negative errno when it did not acknowledge within a bounded time
	 * (the driver's). Must not depend on this node's mailbox worker.
	 * On an error the core goes on all the same: @deny shut the importer
	 * out before, so the fabric refuses whatever it still caches; the
	 * failure is counted (&amdgpu_ualink_dev.shootdown_errors).
	 */
	int (*shootdown)(void *priv, u16 importer, u64 npa, u64 size);
	/**
	 * @revoke: the memory behind imported @obj is withdrawn (the
	 * exporter revoked it, reset or went away, or we did): turn @obj
	 * dead without waiting for the GPU, so that no GPU work submitted
	 * from now on reaches the range (invalidate its GPU mappings and
	 * attachments). Returns, with a reference, a fence that signals once
	 * the work submitted before is done, NULL when there is none, or an
	 * ERR_PTR when that cannot be known (the core then assumes work runs
	 * until its bound, see amdgpu_ualink_import_revoke()). Called on the
	 * device's workqueue, never the mailbox's worker, under
	 * &amdgpu_ualink_dev.revoke_lock, which amdgpu_ualink_import_set_obj()
	 * takes too, so @obj is valid until the driver detached it from its
	 * import.
	 */
	struct dma_fence *(*revoke)(void *priv, void *obj);
};

/**
 * struct amdgpu_ualink_dev - one accelerator's UALink state
 */
struct amdgpu_ualink_dev {
	/** @id: our accelerator ID */
	u16 id;
	/** @ops: the driver's callbacks */
	const struct amdgpu_ualink_dev_ops *ops;
	/** @priv: passed to @ops */
	void *priv;
	/** @mbox: our mailbox, created by amdgpu_ualink_dev_init() */
	struct amdgpu_ualink_mbox *mbox;
	/** @pt: our NPA page tables, set up by the driver */
	struct amdgpu_ualink_pt *pt;
	/** @window: allocator of our NPA window */
	struct amdgpu_ualink_window window;
	/** @wq: releases of imports, which wait for the exporter */
	struct workqueue_struct *wq;
	/** @gone: woken when an import leaves @imports */
	wait_queue_head_t gone;
	/** @unlisted: imports that left @imports so far, under @lock */
	unsigned long unlisted;
	/** @revoke_lock: serialises the revoke callback and import buffers */
	struct mutex revoke_lock;
	/**
	 * @import_quota: imports a process may have in flight, see
	 * amdgpu_ualink_import_quota(); 0 for the module parameter
	 */
	unsigned int import_quota;
	/**
	 * @revoke_timeout: jiffies, see amdgpu_ualink_revoke_timeout(); 0 for
	 * the module parameter
	 */
	unsigned long revoke_timeout;
	/**
	 * @revoking: imports killed whose buffer is not yet revoked, under
	 * @lock; amdgpu_ualink_dev_reset() waits for 0
	 */
	unsigned int revoking;
	/**
	 * @walk_lock: serialises the walks that take importers out of every
	 * access set (a lost peer, a change of virtual pod, a reset); taken
	 * before @lock
	 */
	struct mutex walk_lock;
	/**
	 * @lock: protects @exports, @export_ids, @export_list, @ended,
	 * @draining, @unacked, @imports, every export's access set and
	 * ranges, every import's state, @peer_refs and the counters below
	 */
	struct mutex lock;
	/** @exports: &struct amdgpu_ualink_export by handle */
	struct rhashtable exports;
	/**
	 * @export_ids: the same exports by a small ID of their own, which
	 * @peer_refs indexes them by
	 */
	struct xarray export_ids;
	/** @export_list: the same exports, to walk */
	struct list_head export_list;
	/** @ended: exports amdgpu_ualink_export_end() left to @end_work */
	struct list_head ended;
	/** @draining: ending exports whose importers are being revoked */
	struct list_head draining;
	/**
	 * @unacked: importers that did not acknowledge the shootdown of a
	 * range, each keeping it out of the window's free space until its
	 * connection ends
	 */
	struct list_head unacked;
	/**
	 * @export_moves: exports that left a list or changed lists, so that
	 * a walk that dropped @lock knows whether its place is still valid
	 */
	unsigned long export_moves;
	/** @end_work: finishes the exports in @ended, on @wq */
	struct work_struct end_work;
	/**
	 * @repin_work: on @wq, pins again the exports whose pin a resume
	 * could not take back, when an importer asks for one of them
	 */
	struct work_struct repin_work;
	/**
	 * @suspended: between amdgpu_ualink_export_unpin_all() and
	 * amdgpu_ualink_export_repin_all(), when nothing is pinned again
	 */
	bool suspended;
	/**
	 * @repin_last: when an importer's ask last queued @repin_work, in
	 * jiffies: a pin that fails may have evicted other buffers first,
	 * and peers must not make us do that at their rate
	 */
	unsigned long repin_last;
	/**
	 * @repin_interval: the least time between two such retries, in
	 * jiffies (%AMDGPU_UALINK_REPIN_INTERVAL_MS; tests change it)
	 */
	unsigned long repin_interval;
	/** @imports: &struct amdgpu_ualink_import by handle */
	struct rhashtable imports;
	/** @num_exports: live exports */
	unsigned int num_exports;
	/**
	 * @num_grants: importers in the access sets of our exports, plus
	 * those being taken out (not yet denied and shot down)
	 */
	unsigned int num_grants;
	/** @num_pins: exports pinned: the live ones and those ending */
	unsigned int num_pins;
	/** @num_imports: imports alive, in any state */
	unsigned int num_imports;
	/**
	 * @peer_refs: per accelerator, what it holds of ours and we of it:
	 * @peer_refs.grants, the access sets it is in; @peer_refs.exports,
	 * those exports by their ID in @export_ids; @peer_refs.imports, our
	 * imports of its exports in @imports. A connection that ends costs
	 * a visit of each export the peer was in, and no walk of our imports
	 * when it held none of them, however often a peer restarts.
	 */
	struct amdgpu_ualink_peer_refs {
		unsigned int grants;
		unsigned int imports;
		struct xarray exports;
	} *peer_refs;
	/**
	 * @walk_visits: exports and imports the walks that revoke and kill
	 * visited; for the tests
	 */
	unsigned long walk_visits;
	/**
	 * @releasing: imports whose last reference went and whose release
	 * has not finished; amdgpu_ualink_dev_flush() waits for 0
	 */
	atomic_t releasing;
	/** @shootdown_errors: shootdowns an importer did not acknowledge */
	atomic_t shootdown_errors;
	/**
	 * @revoke_timeouts: revoked imports released while GPU work on them
	 * still ran, after amdgpu_ualink_revoke_timeout()
	 */
	atomic_t revoke_timeouts;
	/**
	 * @release_timeouts: ended exports whose importers did not all
	 * release in time after NPA_REVOKE, and were shut out at the fabric
	 */
	atomic_t release_timeouts;
	/**
	 * @parked: imports whose waiter a signal interrupted, each holding
	 * one reference for the restart of the call, under @lock (see
	 * amdgpu_ualink_import_finish())
	 */
	struct list_head parked;
	/** @park_work: drops the references in @parked that aged, on @wq */
	struct delayed_work park_work;
#if IS_ENABLED(CONFIG_KUNIT)
	/**
	 * @fail_revocations: for tests, the allocation of an ending export's
	 * revocations fails (as it may under memory pressure)
	 */
	bool fail_revocations;
#endif
};

/**
 * enum amdgpu_ualink_import_state - what an import is
 * @AMDGPU_UALINK_IMPORT_PENDING: NPA_REQ in flight, or answered and not
 *	yet looked at
 * @AMDGPU_UALINK_IMPORT_READY: the exporter granted a range
 * @AMDGPU_UALINK_IMPORT_FAILED: the request failed; out of the table
 * @AMDGPU_UALINK_IMPORT_DEAD: revoked, or its exporter reset or went
 *	offline; out of the table
 * @AMDGPU_UALINK_IMPORT_RELEASING: the last reference went and the range is
 *	being given back; in the table until the exporter answered
 */
enum amdgpu_ualink_import_state {
	AMDGPU_UALINK_IMPORT_PENDING,
	AMDGPU_UALINK_IMPORT_READY,
	AMDGPU_UALINK_IMPORT_FAILED,
	AMDGPU_UALINK_IMPORT_DEAD,
	AMDGPU_UALINK_IMPORT_RELEASING,
};

/**
 * struct amdgpu_ualink_import - memory of another accelerator, imported
 *
 * Reference-counted; the device's table holds it weakly, so a second import
 * of a live handle finds it and one whose last reference went does not.
 */
struct amdgpu_ualink_import {
	/** @handle: the 128-bit handle */
	u64 handle[2];
	/** @npa: first address of the granted range, when READY */
	u64 npa;
	/** @size: its size */
	u64 size;
	/**
	 * @state: &enum amdgpu_ualink_import_state, written under the
	 * device lock; read without it (READ_ONCE) by the lookup of a live
	 * import, which finds it under RCU
	 */
	enum amdgpu_ualink_import_state state;
	/** @obj: the driver's buffer for it, see amdgpu_ualink_import_set_obj() */
	void *obj;
	/**
	 * @busy: GPU work of buffers detached from it while still busy
	 * (amdgpu_ualink_import_detach()), or NULL; under
	 * &amdgpu_ualink_dev.revoke_lock
	 */
	struct dma_fence *busy;
	/**
	 * @busy_unknown: buffers detached while their work was not known,
	 * not yet idle (amdgpu_ualink_import_detached_idle()); under
	 * &amdgpu_ualink_dev.revoke_lock
	 */
	unsigned int busy_unknown;
	/**
	 * @file: the file of the live dma-buf of @obj, or NULL; the
	 * driver's &struct amdgpu_ualink_dmabuf_slot publishes it, and a
	 * repeated import gets its fd from it without a lock
	 * (amdgpu_ualink_import_again()). It may name a file already freed
	 * until that dma-buf's release or the next one's making clears it:
	 * amdgpu_ualink_dmabuf_cached() checks what it finds there
	 */
	struct file *file;

	/* private: */
	struct rhash_head node;
	struct amdgpu_ualink_dev *dev;
	struct kref ref;
	bool in_table;
	bool revoked;
	bool unsure;
	bool tell;
	u8 release_step;
	u8 parked;
	struct list_head park;
	int error;
	/* the last reference and the end of @req: the release needs both */
	atomic_t gate;
	struct amdgpu_ualink_req req;
	struct amdgpu_ualink_req release_req;
	struct work_struct release;
	struct work_struct kill;
	struct rcu_head rcu;
};

/**
 * struct amdgpu_ualink_dev_counts - what an accelerator holds right now
 */
struct amdgpu_ualink_dev_counts {
	/** @exports: live exports */
	unsigned int exports;
	/** @grants: importers in the access sets of our exports */
	unsigned int grants;
	/** @pins: exports pinned: the live ones and those ending */
	unsigned int pins;
	/** @imports: imports alive, in any state */
	unsigned int imports;
	/** @npa_bytes: bytes of our NPA window granted */
	u64 npa_bytes;
};

/**
 * struct amdgpu_ualink_dev_errors - what went wrong since the device's set-up
 *
 * Cumulative: each only grows, from amdgpu_ualink_dev_init() on, across
 * the device's resets, suspends and changes of virtual pod (the last three
 * wrap at 2^32).
 */
struct amdgpu_ualink_dev_errors {
	/** @timeouts: our requests that no peer answered in time */
	u64 timeouts;
	/** @retransmissions: our requests sent again for want of an answer */
	u64 retransmissions;
	/** @drops: messages from peers dropped on receipt, for any reason */
	u64 drops;
	/** @connection_ends: connections with peers that ended (reset, lost, offline) */
	u64 connection_ends;
	/** @shootdown_errors: shootdowns an importer did not acknowledge */
	u64 shootdown_errors;
	/**
	 * @revoke_timeouts: revoked imports released while GPU work on them
	 * still ran
	 */
	u64 revoke_timeouts;
	/**
	 * @release_timeouts: ended exports whose importers did not release
	 * in time and were shut out at the fabric
	 */
	u64 release_timeouts;
};

/* amdgpu_ualink_import_get() found our own handle */
#define AMDGPU_UALINK_IMPORT_LOCAL	1

/* the least time between two pins tried again at importers' asks */
#define AMDGPU_UALINK_REPIN_INTERVAL_MS	1000

unsigned long amdgpu_ualink_revoke_timeout(struct amdgpu_ualink_dev *dev);

int amdgpu_ualink_dev_init(struct amdgpu_ualink_dev *dev, u16 id,
			   const struct amdgpu_ualink_dev_ops *ops, void *priv,
			   const struct amdgpu_ualink_mbox_ops *mbox_ops,
			   void *mbox_priv, struct amdgpu_ualink_pt *pt);
void amdgpu_ualink_dev_fini(struct amdgpu_ualink_dev *dev);
void amdgpu_ualink_dev_reset(struct amdgpu_ualink_dev *dev);
void amdgpu_ualink_dev_flush(struct amdgpu_ualink_dev *dev);
void amdgpu_ualink_dev_get_counts(struct amdgpu_ualink_dev *dev,
				  struct amdgpu_ualink_dev_counts *counts);
void amdgpu_ualink_dev_get_errors(struct amdgpu_ualink_dev *dev,
				  struct amdgpu_ualink_dev_errors *errors);
void amdgpu_ualink_dev_print(struct amdgpu_ualink_dev *dev,
			     struct drm_printer *p);

int amdgpu_ualink_export_pin(struct amdgpu_ualink_dev *dev, void *obj);
void amdgpu_ualink_export_unpin(struct amdgpu_ualink_dev *dev, void *obj);
int amdgpu_ualink_export_install(struct amdgpu_ualink_dev *dev, void *obj,
				 u64 size, void **slot, u64 handle[2],
				 bool *pinned);
int amdgpu_ualink_export_create(struct amdgpu_ualink_dev *dev, void *obj,
				u64 size, void **slot, u64 handle[2]);
void *amdgpu_ualink_export_detach(struct amdgpu_ualink_dev *dev, void **slot);
void amdgpu_ualink_export_destroy(struct amdgpu_ualink_dev *dev, void **slot);
void amdgpu_ualink_export_end(struct amdgpu_ualink_dev *dev, void **slot);
void *amdgpu_ualink_export_lookup(struct amdgpu_ualink_dev *dev,
				  const u64 handle[2]);
size_t amdgpu_ualink_export_bytes(struct amdgpu_ualink_dev *dev,
				  const u64 handle[2]);
void amdgpu_ualink_export_print(struct amdgpu_ualink_dev *dev,
				struct drm_printer *p);
void amdgpu_ualink_export_revoke_nonmembers(struct amdgpu_ualink_dev *dev);
void amdgpu_ualink_export_unpin_all(struct amdgpu_ualink_dev *dev);
unsigned int amdgpu_ualink_export_repin_all(struct amdgpu_ualink_dev *dev);
void amdgpu_ualink_import_print(struct amdgpu_ualink_dev *dev,
				struct drm_printer *p);

struct amdgpu_ualink_import *amdgpu_ualink_import_live(struct amdgpu_ualink_dev *dev,
						       const u64 handle[2]);
int amdgpu_ualink_import_again(struct amdgpu_ualink_dev *dev,
			       const u64 handle[2], u32 flags);
unsigned int amdgpu_ualink_import_quota(struct amdgpu_ualink_dev *dev);
int amdgpu_ualink_import_start(struct amdgpu_ualink_dev *dev,
			       const u64 handle[2], u32 owner,
			       struct amdgpu_ualink_import **out);
int amdgpu_ualink_import_finish(struct amdgpu_ualink_import *imp);
int amdgpu_ualink_import_get(struct amdgpu_ualink_dev *dev,
			     const u64 handle[2],
			     struct amdgpu_ualink_import **out);
void amdgpu_ualink_import_set_obj(struct amdgpu_ualink_import *imp, void *obj);
bool amdgpu_ualink_import_detach(struct amdgpu_ualink_import *imp,
				 struct dma_fence *busy);
void amdgpu_ualink_import_detached_idle(struct amdgpu_ualink_import *imp);
void amdgpu_ualink_import_put(struct amdgpu_ualink_import *imp);
struct amdgpu_ualink_import *amdgpu_ualink_import_ref(struct amdgpu_ualink_import *imp);

/* for the mailbox handlers, amdgpu_ualink_dev.c */
void amdgpu_ualink_export_request(struct amdgpu_ualink_dev *dev, u16 peer,
				  const struct amdgpu_ualink_msg *req,
				  struct amdgpu_ualink_msg *rsp);
void amdgpu_ualink_export_peer_gone(struct amdgpu_ualink_dev *dev, u16 peer);
void amdgpu_ualink_export_wait_ungranted(struct amdgpu_ualink_dev *dev);
void amdgpu_ualink_import_revoke(struct amdgpu_ualink_dev *dev, u16 peer,
				 const struct amdgpu_ualink_msg *req,
				 struct amdgpu_ualink_msg *rsp);
void amdgpu_ualink_import_peer_gone(struct amdgpu_ualink_dev *dev, u16 peer);
void amdgpu_ualink_import_drop_nonmembers(struct amdgpu_ualink_dev *dev);
int amdgpu_ualink_export_init(struct amdgpu_ualink_dev *dev);
void amdgpu_ualink_export_fini(struct amdgpu_ualink_dev *dev);
int amdgpu_ualink_import_init(struct amdgpu_ualink_dev *dev);
void amdgpu_ualink_import_fini(struct amdgpu_ualink_dev *dev);
void amdgpu_ualink_import_unpark(struct amdgpu_ualink_dev *dev);

#endif /* __AMDGPU_UALINK_DEV_H__ */
