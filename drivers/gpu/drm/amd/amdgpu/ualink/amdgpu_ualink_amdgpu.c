// SPDX-License-Identifier: GPL-2.0 OR MIT

#include <linux/cleanup.h>
#include <linux/dma-resv.h>
#include <linux/llist.h>
#include <linux/pm_runtime.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include <drm/drm_exec.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_managed.h>
#include <drm/ttm/ttm_bo.h>

#include "amdgpu.h"
#include "amdgpu_irq.h"
#include "amdgpu_object.h"
#include "amdgpu_res_cursor.h"
#include "amdgpu_ttm.h"
#include "amdgpu_vm.h"

#include "amdgpu_ualink_amdgpu.h"
#include "amdgpu_ualink_dev.h"
#include "amdgpu_ualink_dmabuf.h"
#include "amdgpu_ualink_ioctl.h"
#include "amdgpu_ualink_npa.h"
#include "amdgpu_ualink_npa_pool.h"
#include "amdgpu_ualink_pt.h"
#include "amdgpu_ualink_sysfs.h"

/**
 * DOC: UALink in amdgpu
 *
 * The UALink IP block: an IP enablement that finds a UALink IP adds it
 * with amdgpu_ualink_ip_block_add() and the IP's &struct
 * amdgpu_ualink_hw_funcs, after the GMC block (the NPA placement needs
 * TTM) and the IH block (suspend waits for shootdown acknowledgements).
 * That allocates the device's &struct amdgpu_ualink and points
 * &amdgpu_device.ualink at it; every other device keeps the pointer NULL,
 * allocates nothing, and answers the UALink ioctl with -EOPNOTSUPP after
 * the shared argument checks. No GPU this kernel supports has a UALink IP,
 * and the register-level programming of one is not public: what the IP
 * must provide is exactly &struct amdgpu_ualink_hw_funcs, everything above
 * it is here.
 *
 * Life cycle, as amdgpu's IP blocks have it: sw_init sets up the core (NPA
 * page tables, mailbox, the %AMDGPU_PL_NPA manager), registers the
 * interrupt source and keeps the device from runtime suspend (peers use
 * its memory unseen); hw_init has the IP programmed
 * (&amdgpu_ualink_hw_funcs.hw_init), enables the interrupt and lets the
 * device take part (peers re-handshake with the mailbox generation it
 * started when it left); hw_fini and suspend take it out of the pod (a
 * new mailbox generation, every grant dropped and unpinned, every import
 * revoked: amdgpu_ualink_dev_reset(); peers clean up when they hear of
 * it) and disable the interrupt; resume is hw_init; sw_fini takes the core
 * down. System suspend leaves the pod earlier, before VRAM is evicted, and
 * unpins the exports (amdgpu_ualink_suspend()), so that their contents
 * are saved; system resume pins them again (amdgpu_ualink_resume()), and
 * only then does the device take part again: between the IP block's
 * resume and that, peers' requests wait in its rings, where they would
 * otherwise be refused for a pin that is only late. A GPU
 * reset refuses peers from amdgpu_ualink_pre_reset() on, beside amdkfd's
 * hook, and quiesces the mailbox so that nothing touches the IP while the
 * ASIC resets; it leaves the pod from a worker queued once the reset is
 * over (leaving takes buffers' reservations, which nothing may wait for
 * inside the reset's dma-fence signalling section) and takes part
 * again after that worker. Exports survive all of these; imports do not.
 *
 * Locking: &amdgpu_ualink.state_lock, which the reset path takes, is never
 * held while leaving the pod, which takes buffers' reservations; the
 * KUnit suite runs the reset path inside a dma-fence signalling section
 * after leaving the pod revoked an import with GPU work pending, so that
 * lockdep would report the dependency. hw_fini quiesces the mailbox (amdgpu_ualink_mbox_quiesce():
 * no call into the IP's transport from then on) and hw_init resumes it
 * and writes the NPA page tables to the IP again
 * (amdgpu_ualink_pt_restore()), as a reset may have lost them; after a
 * reset that waits for the worker, outside the signalling section.
 *
 * Interrupts: the IP raises one interrupt source for incoming mailbox
 * messages and shootdown requests; its handler, in hard-IRQ context, only
 * marks the sender (amdgpu_ualink_mbox_doorbell() is IRQ-safe) or queues
 * the shootdown work.
 *
 * Export side: a GEM handle names an &amdgpu_bo; userptr, imported,
 * doorbell, GTT-only, UALink-imported, VM_ALWAYS_VALID and encrypted (TMZ)
 * buffers are refused with -EPERM; an export is made under
 * &drm_device.object_name_lock while the buffer has a handle, after the
 * buffer was pinned outside that lock (every GEM handle operation of the
 * device takes it; a pin waits for the reservation, interruptibly, and may
 * evict); an exported
 * buffer is pinned in VRAM (not moved into its CPU-visible part) from its
 * export to its end (but across a system suspend), in the exporting
 * process, and its VRAM is walked with amdgpu_res_first() and
 * amdgpu_res_next() for the NPA page tables, once, into the one range all
 * its importers share; the IP lets each importer in and out of that
 * range's access set (&amdgpu_ualink_hw_funcs.allow and
 * &amdgpu_ualink_hw_funcs.deny) as the core says; the export ends when
 * the last handle goes (&drm_gem_object_funcs.handles_gone), its importers
 * revoked on the core's workqueue.
 *
 * Import side: an import is a user &amdgpu_bo (&struct amdgpu_bo_user, as
 * every buffer behind a GEM handle) in %AMDGPU_GEM_DOMAIN_NPA, created with
 * %AMDGPU_GEM_CREATE_NO_CPU_ACCESS (so amdgpu_bo_kmap(), GEM mmap and
 * %AMDGPU_GEM_MMAP refuse it with -EPERM, and a CPU fault on a guessed
 * mmap offset gets nothing: TTM cannot reserve CPU access to
 * %AMDGPU_PL_NPA) and holding its &struct amdgpu_ualink_import. One buffer per
 * import and device, one dma-buf per buffer (the core's, with dynamic
 * attachments; PRIME export of the buffer returns it and PRIME import of
 * it gives the buffer back). GPUVM maps it at the address the IP gives
 * for its NPA (&amdgpu_ualink_hw_funcs.gpuvm_addr), with the IP's
 * &amdgpu_ualink_hw_funcs.gpuvm_pte_flags. Revocation does not wait for
 * the GPU work on the buffer (it runs on the core's workqueue, never the
 * mailbox's worker; the core releases the range to its exporter once the
 * buffer's fences signal, or after ``revoke_timeout_ms``): it moves the
 * buffer at once to a dead resource of the NPA pool
 * whose memory was set aside at import, so that it allocates nothing and
 * cannot fail, through amdgpu_bo_move_notify(): VM mappings are
 * invalidated and the dma-buf's importers hear invalidate_mappings. Then
 * every VM of the device that maps the buffer, render and KFD alike, gets
 * invalid entries for it (as amdgpu's dma-buf invalidation does, but
 * skipping no VM), and the core sends NPA_RELEASE
 * only after those updates' fences signalled: user queues, which submit
 * without the kernel, cannot reach the range either. The range goes back
 * to the exporter when TTM frees the buffer, that is once it is idle.
 */

/**
 * struct amdgpu_ualink - a device's UALink state, &amdgpu_device.ualink
 *
 * Allocated with the DRM device's managed memory when the IP block is
 * added, so that the interrupt source outlives amdgpu_irq_fini_sw().
 */
struct amdgpu_ualink {
	/** @adev: the device */
	struct amdgpu_device *adev;
	/** @hw: the IP's functions */
	const struct amdgpu_ualink_hw_funcs *hw;
	/** @udev: the core's state, from sw_init to sw_fini */
	struct amdgpu_ualink_dev udev;
	/** @pt: the NPA page tables */
	struct amdgpu_ualink_pt pt;
	/** @pool: the manager of %AMDGPU_PL_NPA */
	struct amdgpu_ualink_npa_pool pool;
	/** @irq: incoming messages and shootdown requests */
	struct amdgpu_irq_src irq;
	/** @shootdown_work: serves the senders in @shootdowns */
	struct work_struct shootdown_work;
	/** @shootdowns: exporters with a pending shootdown request */
	DECLARE_BITMAP(shootdowns, AMDGPU_UALINK_MAX_ACCELS);
	/**
	 * @event_work: serves the pod events the IP raised: @offline,
	 * @online, then @membership
	 */
	struct work_struct event_work;
	/**
	 * @event_lock: protects @offline, @online and @membership, which
	 * the interrupt handler sets
	 */
	spinlock_t event_lock;
	/** @offline: peers reported offline, not served yet */
	DECLARE_BITMAP(offline, AMDGPU_UALINK_MAX_ACCELS);
	/** @online: peers reported back online, after any @offline */
	DECLARE_BITMAP(online, AMDGPU_UALINK_MAX_ACCELS);
	/** @membership: our virtual pod's membership changed */
	bool membership;
	/**
	 * @import_lock: serialises finding or making the buffer of an import
	 * against its going (&amdgpu_ualink_import.obj)
	 */
	struct mutex import_lock;
	/** @leave_work: leaves the pod after a GPU reset, see @reset_leave */
	struct work_struct leave_work;
	/**
	 * @repin_work: pins the exports again and takes part in the pod
	 * (amdgpu_ualink_resume() runs it and waits for it), also after a
	 * GPU reset that ends a system resume that failed, see @resume_begun
	 */
	struct work_struct repin_work;
	/**
	 * @puts: imported buffers whose last reference a revocation held,
	 * for @put_work (lockless list)
	 */
	struct llist_head puts;
	/** @put_work: puts @puts on the core's workqueue */
	struct work_struct put_work;
	/**
	 * @state_lock: protects @hw_up, @in_reset, @leaving, @reset_leave,
	 * @repin_pending, @resume_begun and the changes of @state. Taken by
	 * the GPU reset path (amdgpu_ualink_pre_reset()): never held while
	 * leaving the pod or pinning, which take buffers' reservations.
	 */
	struct mutex state_lock;
	/** @hw_up: between hw_init (or resume) and hw_fini (or suspend) */
	bool hw_up;
	/** @in_reset: between amdgpu_ualink_pre_reset() and _post_reset() */
	bool in_reset;
	/** @leaving: leaving the pod is due or under way */
	bool leaving;
	/** @reset_leave: the leaving a reset defers to its end */
	bool reset_leave;
	/**
	 * @repin_pending: amdgpu_ualink_suspend() unpinned the exports and
	 * amdgpu_ualink_resume() has not pinned them again: the device stays
	 * out of the pod, its mailbox quiesced, so that no importer is
	 * refused for a pin that is only late
	 */
	bool repin_pending;
	/**
	 * @resume_begun: with @repin_pending, a system resume brought the IP
	 * back up (hw_init outside a reset). A GPU reset that ends before
	 * amdgpu_ualink_resume() ran is taken for a resume that failed on its
	 * way: the reset's end pins the exports itself, else nothing would
	 * until the next system resume. A reset while suspending, or after a
	 * resume that failed before the IP's resume, leaves them unpinned
	 * (the device out of the pod) until the next resume.
	 */
	bool resume_begun;
	/**
	 * @state: an AMDGPU_UALINK_STATE_* value; written under
	 * @state_lock, read without it
	 */
	u32 state;
	/** @sw_up: between sw_init and sw_fini */
	bool sw_up;
	/**
	 * @sysfs: the ualink/ directory of the PCI device, from sw_init to
	 * sw_fini; an ERR_PTR when it could not be made (UALink works
	 * without it). Set and cleared under @state_lock, under which
	 * changes of @state are told to it
	 */
	struct amdgpu_ualink_sysfs *sysfs;
	/**
	 * @res_cur: the VRAM walk of the export being mapped, between the
	 * core's cursor call and the end of its map, under @udev.lock
	 */
	struct amdgpu_res_cursor res_cur;
};

/**
 * struct amdgpu_ualink_bo - what an imported &amdgpu_bo has of UALink
 *
 * &amdgpu_bo.ualink. Made before the buffer, since the NPA placement asks
 * for the range while the buffer is created; freed with the last of the
 * maker's and the buffer's references.
 */
struct amdgpu_ualink_bo {
	/** @ref: the maker's and the buffer's */
	struct kref ref;
	/** @imp: the import */
	struct amdgpu_ualink_import *imp;
	/**
	 * @owns_imp: the buffer exists and holds the reference to @imp, put
	 * when TTM frees it: once the GPU is done with it
	 */
	bool owns_imp;
	/** @revoked: revoked; under the buffer's reservation */
	bool revoked;
	/**
	 * @busy_unknown: detached from @imp at its last GEM reference
	 * without its fences (no memory to gather them): TTM's freeing of
	 * it tells the core it is idle
	 */
	bool busy_unknown;
	/** @put: in &amdgpu_ualink.puts, with @abo */
	struct llist_node put;
	/** @abo: the buffer, while in &amdgpu_ualink.puts */
	struct amdgpu_bo *abo;
	/**
	 * @dead: the memory of the dead resource a revocation moves the
	 * buffer to, set aside so that revoking allocates nothing; NULL
	 * once used. Under the buffer's reservation.
	 */
	struct amdgpu_ualink_npa_res *dead;
	/**
	 * @gpuvm_offset: what GPUVM adds to the NPA of the import for the
	 * address in its entries (&amdgpu_ualink_hw_funcs.gpuvm_addr)
	 */
	u64 gpuvm_offset;
	/**
	 * @gpuvm_pte: the IP's bits in the entries that map the import
	 * (within &amdgpu_ualink_hw_funcs.gpuvm_pte_mask)
	 */
	u64 gpuvm_pte;
	/** @slot: the import's dma-buf */
	struct amdgpu_ualink_dmabuf_slot slot;
};

static struct amdgpu_ualink *to_ualink(void *priv)
{
	return priv;
}

static void amdgpu_ualink_bo_free(struct kref *ref)
{
	struct amdgpu_ualink_bo *ub = container_of(ref, struct amdgpu_ualink_bo, ref);

	kfree(ub->dead);
	kfree(ub);
}

/* The NPA pool asks for the range granted to an import. */
static int amdgpu_ualink_bo_range(struct ttm_buffer_object *tbo, u64 *npa,
				  u64 *size)
{
	struct amdgpu_ualink_bo *ub = ttm_to_amdgpu_bo(tbo)->ualink;

	dma_resv_assert_held(tbo->base.resv);
	if (!ub)
		return -EINVAL;
	if (ub->revoked)
		return -ENODEV;
	*npa = ub->imp->npa;
	*size = ub->imp->size;
	return 0;
}

static bool amdgpu_ualink_get(void *priv, void *obj)
{
	struct amdgpu_bo *abo = obj;

	return kref_get_unless_zero(&abo->tbo.base.refcount);
}

static void amdgpu_ualink_put(void *priv, void *obj)
{
	struct amdgpu_bo *abo = obj;

	drm_gem_object_put(&abo->tbo.base);
}

/*
 * Pinned in VRAM for importers, but not in the CPU-visible part of it
 * (amdgpu_bo_pin_no_cpu()): amdgpu_bo_pin() puts a buffer without
 * NO_CPU_ACCESS there for good, and that part is a few hundred MiB on GPUs
 * without a resizable BAR. A buffer with CPU_ACCESS_REQUIRED set at the
 * time (amdgpu sets it when a CPU fault needs the buffer there) is pinned
 * in the visible part. The buffer's flags are left alone (GEM mmap reads
 * them without the reservation); CPU faults on the pinned buffer outside
 * the visible part fail as for any pinned buffer.
 *
 * At export a signal ends the wait for the reservation (held by anyone
 * for as long as they like); amdgpu_bo_pin_no_cpu() itself moves the buffer
 * uninterruptibly, as every pin in amdgpu does.
 */
static int amdgpu_ualink_pin(void *priv, void *obj, bool intr)
{
	struct amdgpu_bo *abo = obj;
	int ret;

	/* not amdgpu_bo_reserve(): a signal is no error to log */
	ret = ttm_bo_reserve(&abo->tbo, intr, false, NULL);
	if (ret)
		return ret;
	ret = amdgpu_bo_pin_no_cpu(abo, AMDGPU_GEM_DOMAIN_VRAM);
	amdgpu_bo_unreserve(abo);
	return ret;
}

static void amdgpu_ualink_unpin(void *priv, void *obj)
{
	struct amdgpu_bo *abo = obj;

	WARN_ON(amdgpu_bo_reserve(abo, true));
	amdgpu_bo_unpin(abo);
	amdgpu_bo_unreserve(abo);
}

static bool amdgpu_ualink_cursor_next(struct amdgpu_ualink_pt_cursor *cur)
{
	struct amdgpu_res_cursor *res = cur->priv;

	amdgpu_res_next(res, res->size);
	if (!res->remaining)
		return false;
	cur->addr = res->start;
	cur->size = res->size;
	return true;
}

/* The VRAM of a pinned export, chunk by chunk, for the NPA page tables. */
static void amdgpu_ualink_cursor(void *priv, void *obj,
				 struct amdgpu_ualink_pt_cursor *cur)
{
	struct amdgpu_ualink *ualink = to_ualink(priv);
	struct amdgpu_bo *abo = obj;

	lockdep_assert_held(&ualink->udev.lock);
	amdgpu_res_first(abo->tbo.resource, 0, amdgpu_bo_size(abo),
			 &ualink->res_cur);
	cur->priv = &ualink->res_cur;
	cur->addr = ualink->res_cur.start;
	cur->size = ualink->res_cur.size;
	cur->next = amdgpu_ualink_cursor_next;
}

static bool amdgpu_ualink_member(void *priv, u16 peer)
{
	struct amdgpu_ualink *ualink = to_ualink(priv);

	return READ_ONCE(ualink->state) == AMDGPU_UALINK_STATE_ACTIVE &&
	       ualink->hw->member(ualink->adev, peer);
}

static int amdgpu_ualink_allow(void *priv, u16 importer, u64 npa, u64 size)
{
	struct amdgpu_ualink *ualink = to_ualink(priv);

	return ualink->hw->allow(ualink->adev, importer, npa, size);
}

static void amdgpu_ualink_deny(void *priv, u16 importer, u64 npa, u64 size)
{
	struct amdgpu_ualink *ualink = to_ualink(priv);

	ualink->hw->deny(ualink->adev, importer, npa, size);
}

static int amdgpu_ualink_shootdown(void *priv, u16 importer, u64 npa, u64 size)
{
	struct amdgpu_ualink *ualink = to_ualink(priv);

	return ualink->hw->shootdown(ualink->adev, importer, npa, size);
}

/*
 * The move of an idle import to its dead resource, which cannot fail: the
 * exporter hears we let go once the revocation returns, and may then
 * unmap the range and hand it to another export, so GPUVM must no longer
 * map it whatever memory is left. Not ttm_bo_validate(), which may allocate (a resource,
 * a fence slot): the resource's memory was set aside at import
 * (amdgpu_ualink_npa_pool_dead()), and the move is amdgpu's own
 * notification, which invalidates the VM mappings and the dma-buf's
 * attachments, then a null move. There is no CPU mapping to take down:
 * the NPA domain has none.
 */
static void amdgpu_ualink_revoke_locked(struct amdgpu_ualink *ualink,
					struct amdgpu_bo *abo)
{
	struct amdgpu_ualink_bo *ub = abo->ualink;
	struct ttm_resource *dead;

	dma_resv_assert_held(abo->tbo.base.resv);
	ub->revoked = true;
	if (!amdgpu_ualink_npa_res_npa(abo->tbo.resource) || WARN_ON(!ub->dead))
		return;		/* dead already */
	dead = amdgpu_ualink_npa_pool_dead(&ualink->pool, &abo->tbo, ub->dead);
	ub->dead = NULL;
	amdgpu_bo_move_notify(&abo->tbo, false, dead);
	ttm_bo_move_null(&abo->tbo, dead);
}

/*
 * Lock @abo and the root of every VM of this device that maps it (render
 * and KFD VMs alike), with room for a fence per VM on @abo and for two
 * page-table updates on each root. Returns 0 or -ENOMEM (the locks are
 * taken uninterruptibly).
 */
static int amdgpu_ualink_lock_vms(struct drm_exec *exec, struct amdgpu_bo *abo)
{
	struct amdgpu_vm_bo_base *base;
	unsigned int nr_vms = 0;
	int ret;

	drm_exec_until_all_locked(exec) {
		ret = drm_exec_lock_obj(exec, &abo->tbo.base);
		drm_exec_retry_on_contention(exec);
		if (ret)
			return ret;
		/* the buffer's reservation protects its list of VMs */
		nr_vms = 0;
		for (base = abo->vm_bo; base; base = base->next) {
			ret = drm_exec_prepare_obj(exec,
						   &base->vm->root.bo->tbo.base, 2);
			drm_exec_retry_on_contention(exec);
			if (ret)
				return ret;
			nr_vms++;
		}
	}
	/* an import only a dma-buf holds is in no VM: nothing to reserve */
	return nr_vms ? dma_resv_reserve_fences(abo->tbo.base.resv, nr_vms) : 0;
}

/*
 * Write invalid entries for @abo, revoked, into every VM that maps it:
 * the range goes back to its exporter, who may give it to another export.
 * Not amdgpu_vm_handle_moved(), which amdgpu's dma-buf invalidation uses
 * and which skips a VM whose lock is contended and stops at the first
 * buffer of the VM it fails to update, whichever buffer that is: only this
 * buffer's mappings, in every VM. A CPU-updated VM has invalid entries when
 * this returns; an SDMA update, and the TLB flush of a VM that needs one,
 * end with the VM's last update fence, which goes on the buffer as
 * bookkeeping, so that the core waits for it before NPA_RELEASE. @abo and
 * the VMs' roots are locked (amdgpu_ualink_lock_vms()). Returns 0, or the
 * error of a VM that still maps the range.
 */
static int amdgpu_ualink_revoke_vms(struct amdgpu_ualink *ualink,
				    struct amdgpu_bo *abo)
{
	struct amdgpu_vm_bo_base *base;
	int ret, err = 0;

	dma_resv_assert_held(abo->tbo.base.resv);
	for (base = abo->vm_bo; base; base = base->next) {
		struct amdgpu_bo_va *bo_va = container_of(base, typeof(*bo_va),
							  base);

		dma_resv_assert_held(base->vm->root.bo->tbo.base.resv);
		ret = amdgpu_vm_bo_update(ualink->adev, bo_va, true);
		if (ret) {
			dev_err_ratelimited(ualink->adev->dev,
					    "UALink: a revoked import stays in a VM (%d)\n",
					    ret);
			err = ret;
			continue;
		}
		dma_resv_add_fence(abo->tbo.base.resv, base->vm->last_update,
				   DMA_RESV_USAGE_BOOKKEEP);
	}
	return err;
}

/* @puts' buffers, put outside of the core's revoke lock */
static void amdgpu_ualink_put_work(struct work_struct *work)
{
	struct amdgpu_ualink *ualink = container_of(work, typeof(*ualink),
						    put_work);
	struct amdgpu_ualink_bo *ub, *next;

	llist_for_each_entry_safe(ub, next, llist_del_all(&ualink->puts), put)
		drm_gem_object_put(&ub->abo->tbo.base);
}

/*
 * Drop the reference a revocation took. The last one frees the buffer,
 * whose end takes the core's revoke lock (amdgpu_ualink_gem_free()), held
 * around the revocation: that one is put on the core's workqueue, which
 * amdgpu_ualink_dev_flush() waits for. Only the holder of the last
 * reference queues it, so a buffer is queued once.
 */
static void amdgpu_ualink_put_later(struct amdgpu_ualink *ualink,
				    struct amdgpu_bo *abo)
{
	if (refcount_dec_not_one(&abo->tbo.base.refcount.refcount))
		return;
	abo->ualink->abo = abo;
	llist_add(&abo->ualink->put, &ualink->puts);
	queue_work(ualink->udev.wq, &ualink->put_work);
}

/*
 * Revoke under the buffer's reservation alone: its GPUVM mappings only
 * marked moved. The buffer then has no GEM reference left (so no VM maps
 * it) or there was no memory to lock its VMs.
 */
static struct dma_fence *amdgpu_ualink_revoke_alone(struct amdgpu_ualink *ualink,
						    struct amdgpu_bo *abo)
{
	struct dma_fence *fence;
	int ret;

	WARN_ON(amdgpu_bo_reserve(abo, true));
	amdgpu_ualink_revoke_locked(ualink, abo);
	ret = dma_resv_get_singleton(abo->tbo.base.resv, DMA_RESV_USAGE_BOOKKEEP,
				     &fence);
	amdgpu_bo_unreserve(abo);
	return ret ? ERR_PTR(ret) : fence;
}

/*
 * Revocation moves the buffer to its dead resource at once, which marks
 * its VM mappings moved, then writes invalid entries for it into every VM
 * that maps it: no submission from now on, nor a user queue that submits
 * without the kernel, reaches the range. Work submitted before may still
 * do; its fences and those of the page-table updates go to the core, which
 * releases the range once they signalled (bounded). A buffer whose last
 * GEM reference went is in no VM (its handles took its mappings with
 * them). When a VM could not be updated, or there was no memory to lock
 * the VMs, the core gets an error and assumes the range in use until its
 * bound; this is logged.
 */
static struct dma_fence *amdgpu_ualink_revoke(void *priv, void *obj)
{
	struct amdgpu_ualink *ualink = to_ualink(priv);
	struct amdgpu_bo *abo = obj;
	struct dma_fence *fence;
	struct drm_exec exec;
	int ret;

	/* the buffer's end waits for the core's revoke lock, held here */
	if (!kref_get_unless_zero(&abo->tbo.base.refcount))
		return amdgpu_ualink_revoke_alone(ualink, abo);
	drm_exec_init(&exec, DRM_EXEC_IGNORE_DUPLICATES, 0);
	ret = amdgpu_ualink_lock_vms(&exec, abo);
	if (ret) {
		drm_exec_fini(&exec);
		dev_err_ratelimited(ualink->adev->dev,
				    "UALink: no memory to take a revoked import out of its VMs\n");
		fence = amdgpu_ualink_revoke_alone(ualink, abo);
		if (!IS_ERR_OR_NULL(fence))
			dma_fence_put(fence);
		fence = ERR_PTR(ret);
	} else {
		amdgpu_ualink_revoke_locked(ualink, abo);
		ret = amdgpu_ualink_revoke_vms(ualink, abo);
		if (!ret)
			ret = dma_resv_get_singleton(abo->tbo.base.resv,
						     DMA_RESV_USAGE_BOOKKEEP,
						     &fence);
		drm_exec_fini(&exec);
		if (ret)
			fence = ERR_PTR(ret);
	}
	amdgpu_ualink_put_later(ualink, abo);
	return fence;
}

static const struct amdgpu_ualink_dev_ops amdgpu_ualink_dev_ops = {
	.get = amdgpu_ualink_get,
	.put = amdgpu_ualink_put,
	.pin = amdgpu_ualink_pin,
	.unpin = amdgpu_ualink_unpin,
	.cursor = amdgpu_ualink_cursor,
	.member = amdgpu_ualink_member,
	.allow = amdgpu_ualink_allow,
	.deny = amdgpu_ualink_deny,
	.shootdown = amdgpu_ualink_shootdown,
	.revoke = amdgpu_ualink_revoke,
};

static void amdgpu_ualink_info(void *priv, struct drm_amdgpu_ualink_info *info)
{
	struct amdgpu_ualink *ualink = to_ualink(priv);

	if (!ualink->hw->vpod(ualink->adev, &info->vpod_id, &info->vpod_size)) {
		info->vpod_id = 0;
		info->vpod_size = 0;
	}
	info->state = READ_ONCE(ualink->state);
}

/*
 * What cannot be exported: only VRAM-capable buffers of our own, and as
 * for PRIME, not one that shares its VM's reservation (VM_ALWAYS_VALID);
 * not encrypted (TMZ) memory either, which no other GPU may read.
 */
static bool amdgpu_ualink_exportable(struct amdgpu_bo *abo)
{
	return !(abo->flags & (AMDGPU_GEM_CREATE_VM_ALWAYS_VALID |
			       AMDGPU_GEM_CREATE_ENCRYPTED)) &&
	       !amdgpu_ttm_tt_get_usermm(abo->tbo.ttm) &&
	       !abo->tbo.base.import_attach &&
	       !(abo->preferred_domains & AMDGPU_GEM_DOMAIN_DOORBELL) &&
	       (abo->allowed_domains & AMDGPU_GEM_DOMAIN_VRAM) &&
	       !(abo->allowed_domains & AMDGPU_GEM_DOMAIN_NPA) &&
	       !(abo->tbo.resource &&
		 abo->tbo.resource->mem_type == AMDGPU_PL_NPA);
}

static int amdgpu_ualink_export_obj(void *priv, struct drm_file *file,
				    u32 gem_handle, void **obj, u64 *size,
				    void ***slot)
{
	struct drm_gem_object *gobj = drm_gem_object_lookup(file, gem_handle);
	struct amdgpu_bo *abo;

	if (!gobj)
		return -ENOENT;
	abo = gem_to_amdgpu_bo(gobj);
	if (!amdgpu_ualink_exportable(abo)) {
		drm_gem_object_put(gobj);
		return -EPERM;
	}
	*obj = abo;
	*size = amdgpu_bo_size(abo);
	*slot = &abo->ualink_export;
	return 0;
}

static bool amdgpu_ualink_lock_handles(void *priv, void *obj)
{
	struct drm_gem_object *gobj = &((struct amdgpu_bo *)obj)->tbo.base;

	mutex_lock(&gobj->dev->object_name_lock);
	return gobj->handle_count;
}

static void amdgpu_ualink_unlock_handles(void *priv, void *obj)
{
	struct drm_gem_object *gobj = &((struct amdgpu_bo *)obj)->tbo.base;

	mutex_unlock(&gobj->dev->object_name_lock);
}

/*
 * The parameters of an import's buffer: a user buffer, as every buffer
 * behind a GEM handle must be (amdgpu's GEM paths, metadata and tiling
 * among them, take a handle's buffer for an &amdgpu_bo_user), in the NPA
 * domain, which the CPU may not access.
 */
static void amdgpu_ualink_import_bo_param(struct amdgpu_bo_param *bp,
					  struct amdgpu_ualink_bo *ub)
{
	memset(bp, 0, sizeof(*bp));
	bp->size = ub->imp->size;
	bp->byte_align = PAGE_SIZE;
	bp->bo_ptr_size = sizeof(struct amdgpu_bo);
	bp->domain = AMDGPU_GEM_DOMAIN_NPA;
	bp->flags = AMDGPU_GEM_CREATE_NO_CPU_ACCESS;
	bp->type = ttm_bo_type_device;
	bp->ualink = ub;
}

/*
 * Can GPUVM map the range of @imp? The IP gives the address its entries
 * carry. The range must also be aligned as the exporter's allocator aligns
 * whole ranges (amdgpu_ualink_window_alignment()): GPUVM picks 2 MiB and
 * 1 GiB entries from the virtual address alone, and such an entry needs an
 * address aligned as well. The entries' address field must hold every
 * address of the range as it is (amdgpu_gmc_set_pte_pde() would mask the
 * rest away, and so reach other memory), and the IP may set only its own
 * bits. Returns 0, the offset from NPA to address and the IP's entry
 * bits, or -ERANGE.
 */
static int amdgpu_ualink_gpuvm_range(struct amdgpu_ualink *ualink,
				     struct amdgpu_ualink_import *imp,
				     struct amdgpu_ualink_bo *ub)
{
	u64 align = amdgpu_ualink_window_alignment(imp->size);
	u64 field = ualink->adev->gmc.pte_addr_mask | AMDGPU_GPU_PAGE_MASK;
	u64 addr, last, pte = 0;
	int ret;

	if (!IS_ALIGNED(imp->npa, align))
		return -ERANGE;
	ret = ualink->hw->gpuvm_addr(ualink->adev, imp->npa, imp->size, &addr,
				     &pte);
	if (ret)
		return ret;
	if (check_add_overflow(addr, imp->size - 1, &last) ||
	    !IS_ALIGNED(addr, align) || (last & ~field) ||
	    (pte & ~ualink->hw->gpuvm_pte_mask))
		return -ERANGE;
	ub->gpuvm_offset = addr - imp->npa;
	ub->gpuvm_pte = pte;
	return 0;
}

/*
 * The buffer of an import: the one it has, or a new one. Takes over the
 * caller's reference to @imp in all cases.
 */
static struct amdgpu_bo *amdgpu_ualink_import_bo(struct amdgpu_ualink *ualink,
						 struct amdgpu_ualink_import *imp)
{
	struct amdgpu_ualink_bo *ub;
	struct amdgpu_bo_user *ubo;
	struct amdgpu_bo_param bp;
	struct amdgpu_bo *abo;
	int ret;

	mutex_lock(&ualink->import_lock);
	abo = imp->obj;
	if (abo && kref_get_unless_zero(&abo->tbo.base.refcount))
		goto out_put;
	ub = kzalloc_obj(*ub, GFP_KERNEL_ACCOUNT);
	if (!ub) {
		abo = ERR_PTR(-ENOMEM);
		goto out_put;
	}
	kref_init(&ub->ref);
	ub->imp = imp;
	ub->dead = amdgpu_ualink_npa_pool_dead_alloc();
	ret = ub->dead ? amdgpu_ualink_gpuvm_range(ualink, imp, ub) :
			 -ENOMEM;
	if (ret) {
		kref_put(&ub->ref, amdgpu_ualink_bo_free);
		abo = ERR_PTR(ret);
		goto out_put;
	}
	amdgpu_ualink_import_bo_param(&bp, ub);
	ret = amdgpu_bo_create_user(ualink->adev, &bp, &ubo);
	kref_put(&ub->ref, amdgpu_ualink_bo_free);
	if (ret) {
		abo = ERR_PTR(ret);
		goto out_put;
	}
	abo = &ubo->bo;
	amdgpu_ualink_dmabuf_slot_init(&ub->slot, &abo->tbo.base, &imp->file);
	ub->owns_imp = true;
	/* the buffer holds @imp from here; revoked at once if it died */
	amdgpu_ualink_import_set_obj(imp, abo);
	mutex_unlock(&ualink->import_lock);
	return abo;

out_put:
	mutex_unlock(&ualink->import_lock);
	amdgpu_ualink_import_put(imp);
	return abo;
}

static int amdgpu_ualink_import_fd(void *priv, struct drm_file *file,
				   struct amdgpu_ualink_import *imp, void *local,
				   u32 flags)
{
	struct amdgpu_bo *abo = local;
	int fd;

	if (!imp)
		return amdgpu_ualink_gem_fd(file, &abo->tbo.base, flags);
	abo = amdgpu_ualink_import_bo(to_ualink(priv), imp);
	if (IS_ERR(abo))
		return PTR_ERR(abo);
	fd = amdgpu_ualink_dmabuf_fd(&abo->ualink->slot, flags);
	drm_gem_object_put(&abo->tbo.base);
	return fd;
}

/* PRIME's handle of the import's dma-buf: one per buffer and file */
static int amdgpu_ualink_import_handle(void *priv, struct drm_file *file,
				       struct amdgpu_ualink_import *imp,
				       void *local, u32 *gem_handle)
{
	struct amdgpu_bo *abo = local;
	int ret;

	if (!imp)
		return amdgpu_ualink_gem_handle(file, &abo->tbo.base, gem_handle);
	abo = amdgpu_ualink_import_bo(to_ualink(priv), imp);
	if (IS_ERR(abo))
		return PTR_ERR(abo);
	ret = amdgpu_ualink_dmabuf_handle(file, &abo->ualink->slot, gem_handle);
	drm_gem_object_put(&abo->tbo.base);
	return ret;
}

static const struct amdgpu_ualink_gem_ops amdgpu_ualink_gem_ops = {
	.info = amdgpu_ualink_info,
	.export_obj = amdgpu_ualink_export_obj,
	.lock_handles = amdgpu_ualink_lock_handles,
	.unlock_handles = amdgpu_ualink_unlock_handles,
	.put = amdgpu_ualink_put,
	.import_fd = amdgpu_ualink_import_fd,
	.import_handle = amdgpu_ualink_import_handle,
};

/*
 * The active accelerators of our virtual pod, asked of the IP one by one;
 * none while we are not active ourselves.
 */
static void amdgpu_ualink_active(void *priv, unsigned long *mask)
{
	struct amdgpu_ualink *ualink = to_ualink(priv);
	unsigned int peer;

	for (peer = 0; peer < AMDGPU_UALINK_MAX_ACCELS; peer++)
		if (peer == ualink->udev.id ?
		    READ_ONCE(ualink->state) == AMDGPU_UALINK_STATE_ACTIVE :
		    amdgpu_ualink_member(priv, peer))
			__set_bit(peer, mask);
}

static void amdgpu_ualink_link(void *priv, struct amdgpu_ualink_sysfs_link *link)
{
	struct amdgpu_ualink *ualink = to_ualink(priv);

	if (ualink->hw->link)
		ualink->hw->link(ualink->adev, link);
}

/* The IP knows no list of the accelerators this host drives. */
static const struct amdgpu_ualink_sysfs_ops amdgpu_ualink_sysfs_ops = {
	.info = amdgpu_ualink_info,
	.active = amdgpu_ualink_active,
	.link = amdgpu_ualink_link,
};

/**
 * amdgpu_ualink_ioctl_amdgpu - DRM_IOCTL_AMDGPU_UALINK in amdgpu
 * @dev: the DRM device
 * @data: &struct drm_amdgpu_ualink, copied in
 * @filp: the calling file
 *
 * Returns: as amdgpu_ualink_ioctl(): on a device without UALink, -EINVAL
 * for a malformed argument and -EOPNOTSUPP otherwise.
 */
int amdgpu_ualink_ioctl_amdgpu(struct drm_device *dev, void *data,
			       struct drm_file *filp)
{
	struct amdgpu_ualink *ualink = drm_to_adev(dev)->ualink;

	if (!ualink || !ualink->sw_up)
		return amdgpu_ualink_ioctl_unsupported(data);
	return amdgpu_ualink_ioctl(&ualink->udev, READ_ONCE(ualink->state),
				   &amdgpu_ualink_gem_ops, ualink, filp, data);
}

/**
 * amdgpu_ualink_gem_handles_gone - &drm_gem_object_funcs.handles_gone
 * @obj: an amdgpu GEM object whose handle count reached zero
 *
 * Ends its export, unless a handle was made again meanwhile: its handle
 * stops resolving at once, under the lock that handle creation takes; the
 * importers are revoked and the buffer unpinned on the core's workqueue
 * (amdgpu_ualink_export_end()), since this runs in framebuffer teardown as
 * well, where nothing may wait for other accelerators.
 */
void amdgpu_ualink_gem_handles_gone(struct drm_gem_object *obj)
{
	struct amdgpu_ualink *ualink = drm_to_adev(obj->dev)->ualink;
	struct amdgpu_bo *abo = gem_to_amdgpu_bo(obj);

	if (!ualink || !READ_ONCE(abo->ualink_export))
		return;
	mutex_lock(&obj->dev->object_name_lock);
	if (!obj->handle_count)
		amdgpu_ualink_export_end(&ualink->udev, &abo->ualink_export);
	mutex_unlock(&obj->dev->object_name_lock);
}

/**
 * amdgpu_ualink_gem_free - the last GEM reference to a buffer is gone
 * @abo: the buffer
 *
 * Ends an export made after the last handle went. An import forgets the
 * buffer, so that importing the handle again makes a new one; the import
 * itself is let go when TTM frees the buffer (amdgpu_ualink_bo_destroy()),
 * after the GPU work still using it, and a revocation until then waits
 * for that work too (the buffer's fences, which dma_resv_get_singleton()
 * reads without the reservation; or, without memory to gather them, until
 * TTM frees the buffer).
 */
void amdgpu_ualink_gem_free(struct amdgpu_bo *abo)
{
	struct amdgpu_ualink_bo *ub = abo->ualink;
	struct amdgpu_ualink *ualink;
	struct dma_fence *busy;

	if (!abo->ualink_export && !ub)
		return;
	ualink = amdgpu_ttm_adev(abo->tbo.bdev)->ualink;
	if (abo->ualink_export)
		amdgpu_ualink_export_destroy(&ualink->udev, &abo->ualink_export);
	if (!ub)
		return;
	if (dma_resv_get_singleton(abo->tbo.base.resv, DMA_RESV_USAGE_BOOKKEEP,
				   &busy))
		busy = ERR_PTR(-ENOMEM);	/* busy till TTM frees it */
	mutex_lock(&ualink->import_lock);
	if (ub->imp->obj == abo)
		ub->busy_unknown = amdgpu_ualink_import_detach(ub->imp, busy);
	mutex_unlock(&ualink->import_lock);
	if (!IS_ERR(busy))
		dma_fence_put(busy);
}

/**
 * amdgpu_ualink_bo_init - amdgpu_bo_create() makes the buffer of an import
 * @abo: the new buffer, before TTM places it
 * @bp: its parameters; &amdgpu_bo_param.ualink is set for an import
 */
void amdgpu_ualink_bo_init(struct amdgpu_bo *abo,
			   const struct amdgpu_bo_param *bp)
{
	if (!bp->ualink)
		return;
	kref_get(&bp->ualink->ref);
	abo->ualink = bp->ualink;
}

/**
 * amdgpu_ualink_bo_destroy - TTM frees a buffer
 * @abo: the buffer, idle
 *
 * An import's range goes back to its exporter here (NPA_RELEASE).
 */
void amdgpu_ualink_bo_destroy(struct amdgpu_bo *abo)
{
	struct amdgpu_ualink_bo *ub = abo->ualink;

	if (!ub)
		return;
	if (ub->busy_unknown)
		amdgpu_ualink_import_detached_idle(ub->imp);
	if (ub->owns_imp)
		amdgpu_ualink_import_put(ub->imp);
	if (ub->slot.obj)
		amdgpu_ualink_dmabuf_slot_fini(&ub->slot);
	kref_put(&ub->ref, amdgpu_ualink_bo_free);
}

/**
 * amdgpu_ualink_bo_move_notify - an imported buffer moves (is revoked)
 * @abo: the buffer, reserved
 *
 * From amdgpu_bo_move_notify(), which invalidated its VM mappings: the
 * attachments of its dma-buf hear of it too.
 */
void amdgpu_ualink_bo_move_notify(struct amdgpu_bo *abo)
{
	if (abo->ualink && abo->ualink->slot.obj)
		amdgpu_ualink_dmabuf_move_notify(&abo->ualink->slot);
}

/**
 * amdgpu_ualink_gem_prime_export - PRIME export of an imported buffer
 * @abo: the buffer
 * @flags: the dma-buf file's flags
 *
 * Returns: the import's one dma-buf, with a new reference, or an ERR_PTR.
 */
struct dma_buf *amdgpu_ualink_gem_prime_export(struct amdgpu_bo *abo, int flags)
{
	if (!abo->ualink || !abo->ualink->slot.obj)
		return ERR_PTR(-EPERM);
	return amdgpu_ualink_dmabuf_get(&abo->ualink->slot, flags);
}

/**
 * amdgpu_ualink_gem_prime_import - PRIME import of a UALink dma-buf
 * @dev: the importing device
 * @dma_buf: any dma-buf
 *
 * Returns: with a new reference, the buffer @dma_buf is the dma-buf of if
 * it is an import of @dev; ERR_PTR(-EXDEV) if it is an import of another
 * device; NULL if it is no import's.
 */
struct drm_gem_object *amdgpu_ualink_gem_prime_import(struct drm_device *dev,
						      struct dma_buf *dma_buf)
{
	return amdgpu_ualink_dmabuf_import(dev, dma_buf);
}

/**
 * amdgpu_ualink_dmabuf_gem - the buffer of a UALink import's dma-buf
 * @dma_buf: any dma-buf; the caller holds a reference
 *
 * For KFD, which asks amdgpu what a dma-buf is before it imports it
 * (amdgpu_amdkfd_get_dmabuf_info()): an import's dma-buf has the UALink
 * core's &dma_buf_ops, not amdgpu's. The buffer may be of any device, and
 * of any driver using the core: the caller checks the driver.
 *
 * Returns: the GEM object, which @dma_buf holds a reference to, or NULL
 * if @dma_buf is no UALink import's.
 */
struct drm_gem_object *amdgpu_ualink_dmabuf_gem(struct dma_buf *dma_buf)
{
	return amdgpu_ualink_dmabuf_obj(dma_buf);
}

/**
 * amdgpu_ualink_gpuvm_pte - the UALink IP's bits in an import's entries
 * @abo: an imported buffer, in %AMDGPU_PL_NPA
 * @flags: the entry flags amdgpu_vm_bo_update() computed, the GMC's
 *	get_vm_pte() included
 *
 * Replaces the bits of &amdgpu_ualink_hw_funcs.gpuvm_pte_mask in @flags
 * by those the IP gave for the import: its fabric marker, and the memory
 * type and snoop bits, which the GMC sets as for system memory.
 */
void amdgpu_ualink_gpuvm_pte(struct amdgpu_bo *abo, u64 *flags)
{
	struct amdgpu_device *adev = amdgpu_ttm_adev(abo->tbo.bdev);

	if (!adev->ualink || !abo->ualink)
		return;
	*flags = (*flags & ~adev->ualink->hw->gpuvm_pte_mask) |
		 abo->ualink->gpuvm_pte;
}

/**
 * amdgpu_ualink_gpuvm_offset - from an import's NPA to its GPUVM address
 * @abo: an imported buffer, in %AMDGPU_PL_NPA
 *
 * For amdgpu_vm_bo_update(), in place of the VRAM base: the resource
 * cursor of %AMDGPU_PL_NPA walks NPAs, GPUVM entries carry the address the
 * UALink IP gave for them (&amdgpu_ualink_hw_funcs.gpuvm_addr).
 *
 * Returns: the offset, modulo 2^64.
 */
u64 amdgpu_ualink_gpuvm_offset(struct amdgpu_bo *abo)
{
	return abo->ualink ? abo->ualink->gpuvm_offset : 0;
}

static int amdgpu_ualink_irq_set(struct amdgpu_device *adev,
				 struct amdgpu_irq_src *src, unsigned int type,
				 enum amdgpu_interrupt_state state)
{
	return adev->ualink->hw->irq_set(adev, state == AMDGPU_IRQ_STATE_ENABLE);
}

/*
 * A pod event, from the interrupt handler: recorded for the event work.
 * A peer's last report wins, an offline one still served before a later
 * online one.
 */
static void amdgpu_ualink_event(struct amdgpu_ualink *ualink, u32 kind,
				u16 peer)
{
	unsigned long flags;

	spin_lock_irqsave(&ualink->event_lock, flags);
	switch (kind) {
	case AMDGPU_UALINK_IV_PEER_OFFLINE:
		__set_bit(peer, ualink->offline);
		__clear_bit(peer, ualink->online);
		break;
	case AMDGPU_UALINK_IV_PEER_ONLINE:
		__set_bit(peer, ualink->online);
		break;
	default:	/* AMDGPU_UALINK_IV_MEMBERSHIP */
		ualink->membership = true;
		break;
	}
	spin_unlock_irqrestore(&ualink->event_lock, flags);
	if (READ_ONCE(ualink->hw_up))
		schedule_work(&ualink->event_work);
}

/* Hard-IRQ context: mark the sender or the event, nothing more. */
static int amdgpu_ualink_irq_process(struct amdgpu_device *adev,
				     struct amdgpu_irq_src *src,
				     struct amdgpu_iv_entry *entry)
{
	struct amdgpu_ualink *ualink = container_of(src, struct amdgpu_ualink, irq);
	u16 sender = entry->src_data[0] & (AMDGPU_UALINK_MAX_ACCELS - 1);
	u32 kind = entry->src_data[1];

	if (!READ_ONCE(ualink->sw_up))
		return 0;
	switch (kind) {
	case AMDGPU_UALINK_IV_MESSAGE:
		amdgpu_ualink_mbox_doorbell(ualink->udev.mbox, sender);
		break;
	case AMDGPU_UALINK_IV_SHOOTDOWN:
		set_bit(sender, ualink->shootdowns);
		schedule_work(&ualink->shootdown_work);
		break;
	case AMDGPU_UALINK_IV_MEMBERSHIP:
	case AMDGPU_UALINK_IV_PEER_OFFLINE:
	case AMDGPU_UALINK_IV_PEER_ONLINE:
		amdgpu_ualink_event(ualink, kind, sender);
		break;
	default:
		dev_warn_ratelimited(adev->dev, "UALink: unknown interrupt %u\n",
				     kind);
		return 0;
	}
	return 1;
}

static const struct amdgpu_irq_src_funcs amdgpu_ualink_irq_funcs = {
	.set = amdgpu_ualink_irq_set,
	.process = amdgpu_ualink_irq_process,
};

/*
 * The pod events, in process context: peers offline and back online reach
 * the mailbox (whose worker then has the export and import sides drop
 * what the peer held, or held for it), and a membership change takes
 * every accelerator that left our virtual pod out of our access sets and
 * kills our imports from it, as amdgpu_ualink_export_revoke_nonmembers()
 * and amdgpu_ualink_import_drop_nonmembers() ask of the driver.
 */
static void amdgpu_ualink_event_work(struct work_struct *work)
{
	struct amdgpu_ualink *ualink =
		container_of(work, struct amdgpu_ualink, event_work);
	struct amdgpu_ualink_dev *udev = &ualink->udev;
	bool membership;
	unsigned long peer;

	/* raced with hw_fini: the events stay for hw_init */
	if (!READ_ONCE(ualink->hw_up))
		return;
	for_each_set_bit(peer, ualink->offline, AMDGPU_UALINK_MAX_ACCELS) {
		scoped_guard(spinlock_irqsave, &ualink->event_lock)
			if (!__test_and_clear_bit(peer, ualink->offline))
				continue;
		amdgpu_ualink_mbox_peer_offline(udev->mbox, peer);
	}
	for_each_set_bit(peer, ualink->online, AMDGPU_UALINK_MAX_ACCELS) {
		scoped_guard(spinlock_irqsave, &ualink->event_lock) {
			/* offline again meanwhile: that one first */
			if (test_bit(peer, ualink->offline) ||
			    !__test_and_clear_bit(peer, ualink->online))
				continue;
		}
		amdgpu_ualink_mbox_peer_online(udev->mbox, peer);
	}
	scoped_guard(spinlock_irqsave, &ualink->event_lock) {
		membership = ualink->membership;
		ualink->membership = false;
	}
	if (membership) {
		amdgpu_ualink_export_revoke_nonmembers(udev);
		amdgpu_ualink_import_drop_nonmembers(udev);
	}
}

static bool amdgpu_ualink_events_pending(struct amdgpu_ualink *ualink)
{
	guard(spinlock_irqsave)(&ualink->event_lock);
	return ualink->membership ||
	       !bitmap_empty(ualink->offline, AMDGPU_UALINK_MAX_ACCELS) ||
	       !bitmap_empty(ualink->online, AMDGPU_UALINK_MAX_ACCELS);
}

static void amdgpu_ualink_shootdown_work(struct work_struct *work)
{
	struct amdgpu_ualink *ualink =
		container_of(work, struct amdgpu_ualink, shootdown_work);
	unsigned long exporter;

	for_each_set_bit(exporter, ualink->shootdowns, AMDGPU_UALINK_MAX_ACCELS)
		if (test_and_clear_bit(exporter, ualink->shootdowns))
			ualink->hw->shootdown_request(ualink->adev, exporter);
}

/*
 * The device's state, as INFO and sysfs give it; a change is told to the
 * ualink/ directory (pollers of accel_state, the device's uevent).
 */
static void amdgpu_ualink_set_state(struct amdgpu_ualink *ualink, u32 state)
{
	lockdep_assert_held(&ualink->state_lock);
	if (ualink->state == state)
		return;
	WRITE_ONCE(ualink->state, state);
	amdgpu_ualink_sysfs_state_changed(ualink->sysfs);
}

/*
 * Refuse peers from now on, as @state (OFFLINE; RESETTING is kept). Returns
 * true when the device was active: the caller then leaves the pod with
 * amdgpu_ualink_leave(), without @state_lock.
 */
static bool amdgpu_ualink_refuse(struct amdgpu_ualink *ualink, u32 state)
{
	u32 old = ualink->state;

	lockdep_assert_held(&ualink->state_lock);
	if (old != AMDGPU_UALINK_STATE_RESETTING)
		amdgpu_ualink_set_state(ualink, state);
	if (old != AMDGPU_UALINK_STATE_ACTIVE)
		return false;
	ualink->leaving = true;
	return true;
}

/* What a device takes part as once nothing keeps it out. */
static void amdgpu_ualink_settle(struct amdgpu_ualink *ualink)
{
	lockdep_assert_held(&ualink->state_lock);
	if (ualink->state == AMDGPU_UALINK_STATE_RESETTING &&
	    !ualink->in_reset && !ualink->leaving)
		amdgpu_ualink_set_state(ualink,
					ualink->hw_up && !ualink->repin_pending ?
					AMDGPU_UALINK_STATE_ACTIVE :
					AMDGPU_UALINK_STATE_OFFLINE);
}

/*
 * Leave the pod, after amdgpu_ualink_refuse() said so: every grant dropped
 * and unpinned, every import revoked, peers told. Unpinning and revoking
 * take buffers' reservations: never with @state_lock held, which the reset
 * path takes.
 */
static void amdgpu_ualink_leave(struct amdgpu_ualink *ualink)
{
	lockdep_assert_not_held(&ualink->state_lock);
	amdgpu_ualink_dev_reset(&ualink->udev);
	guard(mutex)(&ualink->state_lock);
	ualink->leaving = false;
	amdgpu_ualink_settle(ualink);
}

/*
 * A GPU reset's leaving, queued once the reset is over: the page tables go
 * to the IP again first (the reset may have lost them; doing it inside the
 * reset would take the tables' lock, which is held across allocations,
 * in the reset's dma-fence signalling section).
 */
static void amdgpu_ualink_leave_work(struct work_struct *work)
{
	struct amdgpu_ualink *ualink =
		container_of(work, struct amdgpu_ualink, leave_work);

	amdgpu_ualink_pt_restore(&ualink->pt);
	amdgpu_ualink_leave(ualink);
}

/*
 * Pin the exports again, then take part in the pod: from
 * amdgpu_ualink_resume(), or from the end of a GPU reset that ended a
 * failed system resume (@resume_begun). One work item, so that the two
 * never pin at the same time, nor the first to finish resume the mailbox
 * while the other still pins.
 */
static void amdgpu_ualink_repin_work(struct work_struct *work)
{
	struct amdgpu_ualink *ualink =
		container_of(work, struct amdgpu_ualink, repin_work);
	struct amdgpu_device *adev = ualink->adev;
	unsigned int failed;

	failed = amdgpu_ualink_export_repin_all(&ualink->udev);
	if (failed)
		drm_warn(adev_to_drm(adev),
			 "UALink: %u exports could not be pinned again; their importers are refused until a pin works\n",
			 failed);
	guard(mutex)(&ualink->state_lock);
	if (!ualink->repin_pending)
		return;
	ualink->repin_pending = false;
	ualink->resume_begun = false;
	if (!ualink->hw_up || ualink->in_reset)
		return;	/* hw_init or the reset's end resumes it */
	amdgpu_ualink_mbox_resume(ualink->udev.mbox);
	if (ualink->state == AMDGPU_UALINK_STATE_OFFLINE)
		amdgpu_ualink_set_state(ualink, AMDGPU_UALINK_STATE_ACTIVE);
}

static int amdgpu_ualink_sw_init(struct amdgpu_ip_block *ip_block)
{
	struct amdgpu_device *adev = ip_block->adev;
	struct amdgpu_ualink *ualink = adev->ualink;
	const struct amdgpu_ualink_hw_funcs *hw = ualink->hw;
	struct amdgpu_ualink_sysfs *sysfs;
	int ret;

	ret = amdgpu_ualink_pt_init(&ualink->pt, hw->pt, hw->pte, adev);
	if (ret)
		return ret;
	ret = amdgpu_ualink_dev_init(&ualink->udev, hw->accel_id(adev),
				     &amdgpu_ualink_dev_ops, ualink, hw->mbox,
				     adev, &ualink->pt);
	if (ret)
		goto err_pt;
	/* the IP is programmed by hw_init: no transport before that */
	amdgpu_ualink_mbox_quiesce(ualink->udev.mbox);
	ret = amdgpu_ualink_npa_pool_init(&ualink->pool, &adev->mman.bdev,
					  AMDGPU_PL_NPA, amdgpu_ualink_bo_range);
	if (ret)
		goto err_dev;
	ualink->irq.num_types = 1;
	ualink->irq.funcs = &amdgpu_ualink_irq_funcs;
	ret = amdgpu_irq_add_id(adev, hw->irq_client, hw->irq_src, &ualink->irq);
	if (ret)
		goto err_pool;
	/*
	 * Peers reach our memory without this kernel seeing it: a device in a
	 * pod must not runtime-suspend, which would take it out of the pod.
	 */
	pm_runtime_get_noresume(adev_to_drm(adev)->dev);
	sysfs = amdgpu_ualink_sysfs_create(adev->dev, &ualink->udev,
					   &amdgpu_ualink_sysfs_ops, ualink);
	if (IS_ERR(sysfs))
		drm_warn(adev_to_drm(adev), "UALink: no sysfs directory (%pe)\n",
			 sysfs);
	scoped_guard(mutex, &ualink->state_lock)
		ualink->sysfs = sysfs;
	WRITE_ONCE(ualink->sw_up, true);
	return 0;

err_pool:
	amdgpu_ualink_npa_pool_fini(&ualink->pool, &adev->mman.bdev, AMDGPU_PL_NPA);
err_dev:
	amdgpu_ualink_dev_fini(&ualink->udev);
err_pt:
	amdgpu_ualink_pt_fini(&ualink->pt);
	return ret;
}

/* Files are closed by now: nothing is exported or imported. */
static int amdgpu_ualink_sw_fini(struct amdgpu_ip_block *ip_block)
{
	struct amdgpu_device *adev = ip_block->adev;
	struct amdgpu_ualink *ualink = adev->ualink;
	struct amdgpu_ualink_sysfs *sysfs;

	WRITE_ONCE(ualink->sw_up, false);
	scoped_guard(mutex, &ualink->state_lock) {
		sysfs = ualink->sysfs;
		ualink->sysfs = NULL;
	}
	amdgpu_ualink_sysfs_destroy(sysfs);
	flush_work(&ualink->leave_work);
	flush_work(&ualink->repin_work);
	cancel_work_sync(&ualink->shootdown_work);
	cancel_work_sync(&ualink->event_work);
	/* a pin's last reference dropped on the mailbox's worker, releases */
	amdgpu_ualink_dev_flush(&ualink->udev);
	/* imports whose destruction TTM delayed until they were idle */
	if (adev->mman.bdev.wq)
		flush_workqueue(adev->mman.bdev.wq);
	pm_runtime_put_noidle(adev_to_drm(adev)->dev);
	WARN_ON(amdgpu_ualink_npa_pool_fini(&ualink->pool, &adev->mman.bdev,
					    AMDGPU_PL_NPA));
	amdgpu_ualink_dev_fini(&ualink->udev);
	amdgpu_ualink_pt_fini(&ualink->pt);
	return 0;
}

/*
 * Init, resume, and resume inside a GPU reset: the IP is programmed, the
 * page tables are written to it again (after a reset, by the worker that
 * leaves the pod: until then the IP must not translate what peers send),
 * the mailbox uses the transport again, and shootdown requests that
 * arrived before hw_fini are served.
 */
static int amdgpu_ualink_hw_init(struct amdgpu_ip_block *ip_block)
{
	struct amdgpu_device *adev = ip_block->adev;
	struct amdgpu_ualink *ualink = adev->ualink;
	int ret;

	guard(mutex)(&ualink->state_lock);
	if (ualink->hw_up)
		return 0;
	if (ualink->hw->hw_init) {
		ret = ualink->hw->hw_init(adev);
		if (ret)
			return ret;
	}
	/*
	 * inside a reset, the worker that leaves the pod does it; a device
	 * that left at suspend has nothing to leave, and no such worker
	 */
	if (!ualink->in_reset || ualink->repin_pending)
		amdgpu_ualink_pt_restore(&ualink->pt);
	ret = amdgpu_irq_get(adev, &ualink->irq, 0);
	if (ret) {
		if (ualink->hw->hw_fini)
			ualink->hw->hw_fini(adev);
		return ret;
	}
	WRITE_ONCE(ualink->hw_up, true);
	if (!bitmap_empty(ualink->shootdowns, AMDGPU_UALINK_MAX_ACCELS))
		schedule_work(&ualink->shootdown_work);
	if (amdgpu_ualink_events_pending(ualink))
		schedule_work(&ualink->event_work);
	/* a system resume takes part once its exports are pinned again */
	if (ualink->repin_pending) {
		if (!ualink->in_reset)
			ualink->resume_begun = true;
		return 0;
	}
	amdgpu_ualink_mbox_resume(ualink->udev.mbox);
	if (ualink->state != AMDGPU_UALINK_STATE_RESETTING)
		amdgpu_ualink_set_state(ualink, AMDGPU_UALINK_STATE_ACTIVE);
	return 0;
}

/*
 * Teardown, suspend, and suspend inside a GPU reset: out of the pod (not
 * inside a reset, which leaves afterwards), then nothing touches the
 * hardware any more: the mailbox is quiesced, the interrupt off, the
 * shootdown work stopped (its pending requests stay for hw_init).
 */
static int amdgpu_ualink_hw_fini(struct amdgpu_ip_block *ip_block)
{
	struct amdgpu_device *adev = ip_block->adev;
	struct amdgpu_ualink *ualink = adev->ualink;
	bool leave;

	scoped_guard(mutex, &ualink->state_lock)
		leave = amdgpu_ualink_refuse(ualink, AMDGPU_UALINK_STATE_OFFLINE);
	if (leave)
		amdgpu_ualink_leave(ualink);

	guard(mutex)(&ualink->state_lock);
	if (ualink->hw_up) {
		WRITE_ONCE(ualink->hw_up, false);
		amdgpu_ualink_mbox_quiesce(ualink->udev.mbox);
		WARN_ON(amdgpu_irq_put(adev, &ualink->irq, 0));
		cancel_work_sync(&ualink->shootdown_work);
		cancel_work_sync(&ualink->event_work);
		if (ualink->hw->hw_fini)
			ualink->hw->hw_fini(adev);
	}
	return 0;
}

static const struct amd_ip_funcs amdgpu_ualink_ip_funcs = {
	.name = "ualink",
	.sw_init = amdgpu_ualink_sw_init,
	.sw_fini = amdgpu_ualink_sw_fini,
	.hw_init = amdgpu_ualink_hw_init,
	.hw_fini = amdgpu_ualink_hw_fini,
	.suspend = amdgpu_ualink_hw_fini,
	.resume = amdgpu_ualink_hw_init,
};

static const struct amdgpu_ip_block_version amdgpu_ualink_ip_block = {
	.type = AMD_IP_BLOCK_TYPE_UALINK,
	.major = 1,
	.minor = 0,
	.rev = 0,
	.funcs = &amdgpu_ualink_ip_funcs,
};

/*
 * The bits of a GPUVM entry that amdgpu sets for every mapping, which the
 * IP may not decide: valid, system, TMZ, access, fragment, the address
 * field (bits 47:12 from GFX9 to GFX12), PRT and the PDE-as-PTE marker.
 */
static u64 amdgpu_ualink_amdgpu_pte_bits(struct amdgpu_device *adev)
{
	return AMDGPU_PTE_VALID | AMDGPU_PTE_SYSTEM | AMDGPU_PTE_TMZ |
	       AMDGPU_PTE_EXECUTABLE | AMDGPU_PTE_READABLE |
	       AMDGPU_PTE_WRITEABLE | AMDGPU_PTE_FRAG(0x1fULL) |
	       GENMASK_ULL(47, 12) | AMDGPU_PTE_PRT_FLAG(adev) |
	       AMDGPU_PDE_PTE_FLAG(adev);
}

/**
 * amdgpu_ualink_ip_block_add - add the UALink IP block to a device
 * @adev: a device whose IP discovery found a UALink IP
 * @hw: the IP's functions
 *
 * From the IP enablement, after the GMC block has been added. Gives the
 * device its &struct amdgpu_ualink, which lives as long as the DRM device.
 *
 * Returns: 0 or a negative errno.
 */
int amdgpu_ualink_ip_block_add(struct amdgpu_device *adev,
			       const struct amdgpu_ualink_hw_funcs *hw)
{
	struct amdgpu_ualink *ualink;
	int ret;

	if (adev->ualink)
		return -EEXIST;
	if (!hw->allow || !hw->deny || !hw->shootdown ||
	    (hw->gpuvm_pte_mask & amdgpu_ualink_amdgpu_pte_bits(adev)))
		return -EINVAL;
	ualink = drmm_kzalloc(adev_to_drm(adev), sizeof(*ualink), GFP_KERNEL);
	if (!ualink)
		return -ENOMEM;
	ret = drmm_mutex_init(adev_to_drm(adev), &ualink->import_lock);
	if (ret)
		return ret;
	ret = drmm_mutex_init(adev_to_drm(adev), &ualink->state_lock);
	if (ret)
		return ret;
	ualink->adev = adev;
	ualink->hw = hw;
	ualink->state = AMDGPU_UALINK_STATE_OFFLINE;
	INIT_WORK(&ualink->shootdown_work, amdgpu_ualink_shootdown_work);
	INIT_WORK(&ualink->event_work, amdgpu_ualink_event_work);
	spin_lock_init(&ualink->event_lock);
	INIT_WORK(&ualink->leave_work, amdgpu_ualink_leave_work);
	INIT_WORK(&ualink->repin_work, amdgpu_ualink_repin_work);
	INIT_WORK(&ualink->put_work, amdgpu_ualink_put_work);
	init_llist_head(&ualink->puts);
	ret = amdgpu_device_ip_block_add(adev, &amdgpu_ualink_ip_block);
	if (ret)
		return ret;
	adev->ualink = ualink;
	return 0;
}

/**
 * amdgpu_ualink_suspend - the device is about to suspend: leave the pod
 * @adev: the device
 *
 * From amdgpu_device_suspend(), before VRAM is evicted: the device leaves
 * the pod and its exports are unpinned, so that their contents are saved
 * with the rest of VRAM; the IP block's suspend comes later and finds the
 * device out of the pod already. amdgpu_ualink_resume() pins them again.
 */
void amdgpu_ualink_suspend(struct amdgpu_device *adev)
{
	struct amdgpu_ualink *ualink = adev->ualink;
	bool leave;

	if (!ualink || !ualink->sw_up)
		return;
	/* no reset from here on pins for a resume that failed before */
	scoped_guard(mutex, &ualink->state_lock)
		ualink->resume_begun = false;
	/* a GPU reset's leaving, and its pinning, go first */
	flush_work(&ualink->leave_work);
	flush_work(&ualink->repin_work);
	scoped_guard(mutex, &ualink->state_lock)
		leave = amdgpu_ualink_refuse(ualink, AMDGPU_UALINK_STATE_OFFLINE);
	if (leave)
		amdgpu_ualink_leave(ualink);
	scoped_guard(mutex, &ualink->state_lock)
		ualink->repin_pending = true;
	amdgpu_ualink_export_unpin_all(&ualink->udev);
}

/**
 * amdgpu_ualink_resume - the device resumed: pin the exports again
 * @adev: the device
 *
 * From amdgpu_device_resume(), once buffers can move again (the IB tests
 * flushed). Only then does the device take part in the pod again (its
 * IP block's resume left it out, mailbox quiesced): peers' requests wait
 * in its rings meanwhile instead of being refused. An export whose buffer
 * cannot be pinned again refuses its importers (-EREMOTEIO for them)
 * until a pin, tried again at each importer's request, works. When the
 * resume fails after the IP block's resume and a GPU reset follows, the
 * end of that reset does the same.
 */
void amdgpu_ualink_resume(struct amdgpu_device *adev)
{
	struct amdgpu_ualink *ualink = adev->ualink;

	if (!ualink || !ualink->sw_up)
		return;
	schedule_work(&ualink->repin_work);
	flush_work(&ualink->repin_work);
}

/**
 * amdgpu_ualink_pre_reset - a GPU reset begins: refuse peers, stop the mailbox
 * @adev: the device
 *
 * The device stops granting at once, and nothing touches the UALink IP
 * while the ASIC resets (the mailbox is quiesced until the reset's
 * hw_init). Leaving the pod (grants dropped, imports revoked, peers told)
 * waits for the end of the reset, as it takes buffers' reservations: it
 * runs from a worker queued by amdgpu_ualink_post_reset().
 */
void amdgpu_ualink_pre_reset(struct amdgpu_device *adev)
{
	struct amdgpu_ualink *ualink = adev->ualink;

	if (!ualink || !ualink->sw_up)
		return;
	guard(mutex)(&ualink->state_lock);
	ualink->in_reset = true;
	if (amdgpu_ualink_refuse(ualink, AMDGPU_UALINK_STATE_RESETTING))
		ualink->reset_leave = true;
	amdgpu_ualink_set_state(ualink, AMDGPU_UALINK_STATE_RESETTING);
	amdgpu_ualink_mbox_quiesce(ualink->udev.mbox);
}

/**
 * amdgpu_ualink_post_reset - the GPU reset is over: leave, then take part
 * @adev: the device; peers re-handshake with its new generation
 *
 * Active again once the worker that leaves the pod is done.
 */
void amdgpu_ualink_post_reset(struct amdgpu_device *adev)
{
	struct amdgpu_ualink *ualink = adev->ualink;

	if (!ualink || !ualink->sw_up)
		return;
	guard(mutex)(&ualink->state_lock);
	ualink->in_reset = false;
	if (ualink->hw_up && !ualink->repin_pending)
		amdgpu_ualink_mbox_resume(ualink->udev.mbox);
	if (ualink->reset_leave) {
		ualink->reset_leave = false;
		schedule_work(&ualink->leave_work);
	}
	/* a system resume that failed before amdgpu_ualink_resume() */
	if (ualink->repin_pending && ualink->resume_begun && ualink->hw_up)
		schedule_work(&ualink->repin_work);
	amdgpu_ualink_settle(ualink);
}

#if IS_ENABLED(CONFIG_DRM_AMDGPU_UALINK_AMDGPU_KUNIT_TEST)
#include "tests/amdgpu_ualink_amdgpu_test.c"
#include "tests/amdgpu_ualink_amdgpu_vehicle_test.c"
#endif
