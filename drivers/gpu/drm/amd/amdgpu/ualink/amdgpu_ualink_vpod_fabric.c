// SPDX-License-Identifier: GPL-2.0 OR MIT

#include <linux/gfp.h>
#include <linux/hardirq.h>
#include <linux/io.h>
#include <linux/ktime.h>
#include <linux/maple_tree.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "amdgpu_ualink_mbox.h"
#include "amdgpu_ualink_npa.h"
#include "amdgpu_ualink_vpod.h"
#include "amdgpu_ualink_vpod_shm.h"

/**
 * DOC: Emulated pod (vpod)
 *
 * The vpod is to UALink what vgem is to PRIME: accelerators without
 * hardware, so that the whole uAPI runs and is tested anywhere. It uses the
 * core exactly as amdgpu does (mailbox, NPA window and page tables,
 * export/import, the NPA pool, the dma-buf, the ioctl) and emulates only
 * what hardware would do:
 *
 * - **Fabric and rings.** Each sender's message ring at a receiver stands
 *   for the 4 KiB the receiver's NPA window reserves for it
 *   (amdgpu_ualink_npa_ring()) and is allocated by the sender's first
 *   message; producer and consumer indices sit beside it. Publishing a
 *   producer index rings the receiver's doorbell, which raises its
 *   "interrupt": amdgpu_ualink_mbox_doorbell(), which only marks the
 *   sender and kicks the node's worker, as an interrupt handler would. A
 *   consumer index rings the sender's doorbell only when the sender
 *   found the ring full and flagged that it waits for room (its timer
 *   retries the queue in any case).
 * - **NPA page tables** live in kernel pages; entries hold physical
 *   addresses of tables and offsets in the owner's device memory, in the
 *   vpod's entry format.
 * - **GPU access** through the fabric: an access to an imported buffer
 *   resolves the NPA to its owner, where the fabric first checks the
 *   requester against the **access set** of the range it falls in (what
 *   &amdgpu_ualink_dev_ops.allow and &amdgpu_ualink_dev_ops.deny set; the
 *   design assumes hardware checks every access that arrives at an
 *   exporter the same way, by requester ID and range). A refused access
 *   faults and is counted at the owner (``faults``), TLB or not. An
 *   allowed one walks the owner's tables as the hardware would (reading
 *   the entries, not the core's bookkeeping), through the requester's
 *   **TLB**, which keeps translations until the exporter shoots them
 *   down. A shootdown waits for a walk or access in
 *   progress, as hardware does; tables or memory freed before the
 *   shootdown completed would be read by a later access (stale data, or a
 *   KASAN report for a freed table). Hardware sends shootdowns through the shootdown rings;
 *   the vpod invalidates the importer's TLB directly.
 * - **Device memory** is a fixed amount of kernel memory per accelerator.
 *   Accelerators with a DRM device manage it with TTM; fabric-only
 *   accelerators (many, for scale) export one 64 KiB heap at load, whose
 *   bytes are their ID as little-endian u32s.
 * - **Pod membership** comes from configuration (the module parameter
 *   ``vpod_size``, or debugfs), where hardware has firmware.
 * - **Reset and offline**, from debugfs: a reset starts a new generation
 *   and drops what the fabric held (amdgpu_ualink_dev_reset()); offline
 *   stops the fabric carrying doorbells to and from the accelerator and
 *   tells every mailbox, as a firmware link-down event would.
 * - **Several kernels**: with a shared region (amdgpu_ualink_vpod_shm.c)
 *   the rings, page tables and device memory live there, and the
 *   accelerators other kernels host are *remote* here. A shootdown of a
 *   remote importer waits, through the region, for its access to our
 *   memory in flight.
 */

struct amdgpu_ualink_vpod *amdgpu_ualink_vpod;

/* the vpod's page-table entries */
#define VPOD_PTE_VALID	BIT_ULL(0)
#define VPOD_PTE_READ	BIT_ULL(1)
#define VPOD_PTE_WRITE	BIT_ULL(2)
#define VPOD_PTE_FABRIC	BIT_ULL(3)
#define VPOD_PTE_HUGE	BIT_ULL(7)
#define VPOD_PTE_ADDR	GENMASK_ULL(51, 12)

static const struct amdgpu_ualink_pte_format vpod_pte_format = {
	.valid = VPOD_PTE_VALID,
	.huge = VPOD_PTE_HUGE,
	.leaf = VPOD_PTE_READ | VPOD_PTE_WRITE | VPOD_PTE_FABRIC,
	.addr_mask = VPOD_PTE_ADDR,
};

/**
 * amdgpu_ualink_vpod_node - an accelerator of the pod
 * @id: its ID
 *
 * Returns: the node, or NULL when the pod has no accelerator @id.
 */
struct amdgpu_ualink_vpod_node *amdgpu_ualink_vpod_node(u16 id)
{
	struct amdgpu_ualink_vpod *pod = amdgpu_ualink_vpod;

	return id < pod->num_nodes ? pod->nodes[id] : NULL;
}

/*
 * The fabric carries nothing to or from an accelerator that is offline.
 * Only the receiver's lock is taken: senders to different accelerators
 * never wait for each other. The check and the doorbell are one RCU
 * read-side critical section, which set_state() waits for.
 */
static void ring_doorbell(struct amdgpu_ualink_vpod_node *from, u16 to)
{
	struct amdgpu_ualink_vpod_node *peer = amdgpu_ualink_vpod_node(to);
	/* what the emulation costs a caller of the uAPI: make bench */
	bool timed = in_task() && !(current->flags & PF_WQ_WORKER);
	unsigned long flags;
	u64 start = 0;

	/* another kernel's accelerator polls its rings */
	if (!peer || peer->remote)
		return;
	if (timed)
		start = ktime_get_ns();
	guard(rcu)();
	spin_lock_irqsave(&peer->doorbell_lock, flags);
	/*
	 * What the caller wrote (a new ring, a producer index) before the
	 * states are read: pairs with the barrier after an accelerator comes
	 * back online, which writes its state before it looks for rings. One
	 * of the two sees the other's write, so no doorbell is lost.
	 */
	smp_mb__after_spinlock();
	if (READ_ONCE(from->state) != AMDGPU_UALINK_VPOD_OFFLINE &&
	    READ_ONCE(peer->state) != AMDGPU_UALINK_VPOD_OFFLINE &&
	    !peer->stopped)
		amdgpu_ualink_mbox_doorbell(peer->udev.mbox, from->id);
	spin_unlock_irqrestore(&peer->doorbell_lock, flags);
	if (timed) {
		atomic64_inc(&from->bell_calls);
		atomic64_add(ktime_get_ns() - start, &from->bell_ns);
	}
}

static struct amdgpu_ualink_vpod_ring *ring_at(u16 receiver, u16 sender)
{
	struct amdgpu_ualink_vpod_node *rx = amdgpu_ualink_vpod_node(receiver);

	if (!rx)
		return NULL;
	if (amdgpu_ualink_vpod->shm) {
		/* the region has a ring for every pair of the pod, no more */
		if (sender >= amdgpu_ualink_vpod->num_nodes || sender == receiver)
			return NULL;
		return amdgpu_ualink_vpod_shm_ring(amdgpu_ualink_vpod->shm,
						   receiver, sender);
	}
	return xa_load(&rx->rings, sender);
}

/* Where the mailbox's index 0 is in a ring (always 0 in one kernel). */
static u32 base(const u32 *bases, u16 id)
{
	return bases ? bases[id] : 0;
}

static int vpod_post(void *priv, u16 peer, unsigned int slot, const void *entry)
{
	struct amdgpu_ualink_vpod_node *node = priv;
	struct amdgpu_ualink_vpod_node *rx = amdgpu_ualink_vpod_node(peer);
	struct amdgpu_ualink_vpod_ring *ring;
	int ret;

	if (!rx)
		return -ENODEV;
	ring = ring_at(peer, node->id);
	if (!ring && amdgpu_ualink_vpod->shm)
		return -ENODEV;	/* the region has every ring there is */
	if (!ring) {	/* the sender's first message: back its ring */
		ring = kzalloc_obj(*ring, GFP_KERNEL);
		if (!ring)
			return -ENOMEM;
		ret = xa_err(xa_store(&rx->rings, node->id, ring, GFP_KERNEL));
		if (ret) {
			kfree(ring);
			return ret;
		}
	}
	slot = (slot + base(node->tx_base, peer)) % AMDGPU_UALINK_RING_ENTRIES;
	memcpy(ring->slot[slot], entry, AMDGPU_UALINK_MSG_SIZE);
	return 0;
}

static void vpod_publish(void *priv, u16 peer, u32 head)
{
	struct amdgpu_ualink_vpod_node *node = priv;
	struct amdgpu_ualink_vpod_ring *ring = ring_at(peer, node->id);

	if (!ring)
		return;
	head += base(node->tx_base, peer);
	if (node->tx_own)	/* after the entries, before the index: heal() */
		smp_store_release(&node->tx_own[peer], head);
	/* after the entries */
	smp_store_release(&ring->head, head);
	ring_doorbell(node, peer);
}

static u32 vpod_peer_tail(void *priv, u16 peer)
{
	struct amdgpu_ualink_vpod_node *node = priv;
	struct amdgpu_ualink_vpod_ring *ring = ring_at(peer, node->id);

	if (!ring)
		return 0;
	/*
	 * The mailbox asks only when the ring looks full: ask for a doorbell
	 * at the next consumer index. The barrier pairs with the one in
	 * vpod_rx_ack(): either we see its new index or it sees our flag.
	 */
	WRITE_ONCE(ring->waiting, 1);
	smp_mb();	/* the flag before reading the index */
	/* pairs with the release in vpod_rx_ack(): the slots are free */
	return smp_load_acquire(&ring->tail) - base(node->tx_base, peer);
}

static u32 vpod_rx_head(void *priv, u16 sender)
{
	struct amdgpu_ualink_vpod_node *node = priv;
	struct amdgpu_ualink_vpod_ring *ring = ring_at(node->id, sender);

	/* pairs with the release in vpod_publish(): the entries are there */
	return ring ? smp_load_acquire(&ring->head) -
		base(node->rx_base, sender) : 0;
}

static void vpod_rx_read(void *priv, u16 sender, unsigned int slot, void *entry)
{
	struct amdgpu_ualink_vpod_node *node = priv;
	struct amdgpu_ualink_vpod_ring *ring = ring_at(node->id, sender);

	slot = (slot + base(node->rx_base, sender)) % AMDGPU_UALINK_RING_ENTRIES;
	if (ring)
		memcpy(entry, ring->slot[slot], AMDGPU_UALINK_MSG_SIZE);
	else
		memset(entry, 0, AMDGPU_UALINK_MSG_SIZE);
}

static void vpod_rx_ack(void *priv, u16 sender, u32 tail)
{
	struct amdgpu_ualink_vpod_node *node = priv;
	struct amdgpu_ualink_vpod_ring *ring = ring_at(node->id, sender);

	if (!ring)
		return;
	tail += base(node->rx_base, sender);
	if (node->rx_own)	/* after the slots, before the index: heal() */
		smp_store_release(&node->rx_own[sender], tail);
	/* after reading the slots */
	smp_store_release(&ring->tail, tail);
	smp_mb();	/* see vpod_peer_tail() */
	/*
	 * A sender that does not wait for room needs no interrupt. One in
	 * another kernel is rung by its poller, which clears the flag.
	 */
	if (amdgpu_ualink_vpod_node(sender)->remote)
		return;
	if (READ_ONCE(ring->waiting) && xchg(&ring->waiting, 0))
		ring_doorbell(node, sender);
}

/* Our posts allocate rings (see &amdgpu_ualink_mbox_ops.hw_class). */
static struct lock_class_key vpod_hw_class;

static const struct amdgpu_ualink_mbox_ops vpod_mbox_ops = {
	.hw_class = &vpod_hw_class,
	.post = vpod_post,
	.publish = vpod_publish,
	.peer_tail = vpod_peer_tail,
	.rx_head = vpod_rx_head,
	.rx_read = vpod_rx_read,
	.rx_ack = vpod_rx_ack,
};

static int vpod_alloc_table(void *priv, unsigned int level,
			    struct amdgpu_ualink_pt_table *table)
{
	struct amdgpu_ualink_vpod_node *node = priv;
	struct page *page;

	if (amdgpu_ualink_vpod->shm) {	/* where other kernels walk them */
		table->priv = NULL;
		return amdgpu_ualink_vpod_shm_alloc_table(amdgpu_ualink_vpod->shm,
							  node->id, !level,
							  &table->cpu,
							  &table->addr);
	}
	page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!page)
		return -ENOMEM;
	table->cpu = page_address(page);
	table->addr = page_to_phys(page);
	table->priv = page;
	if (!level)
		node->root = table->cpu;
	return 0;
}

/*
 * Nothing points at @table any more (the unmap cleared its parent's entry
 * and shot down the grantee's TLB), but an accelerator that held no grant
 * may be walking through it still: wait for that walk.
 */
/* A walk that read the entry pointing to @table before it was cleared ends. */
static void vpod_recycle_table(void *priv, unsigned int level,
			       struct amdgpu_ualink_pt_table *table)
{
	struct amdgpu_ualink_vpod_node *node = priv;

	spin_lock(&node->walk_lock);
	spin_unlock(&node->walk_lock);
}

static void vpod_free_table(void *priv, unsigned int level,
			    struct amdgpu_ualink_pt_table *table)
{
	struct amdgpu_ualink_vpod_node *node = priv;

	vpod_recycle_table(priv, level, table);
	if (amdgpu_ualink_vpod->shm)
		amdgpu_ualink_vpod_shm_free_table(amdgpu_ualink_vpod->shm,
						  node->id, table->addr);
	else
		__free_page(table->priv);
}

/* the hardware reads the tables the CPU writes: nothing to commit */
static const struct amdgpu_ualink_pt_ops vpod_pt_ops = {
	.alloc_table = vpod_alloc_table,
	.free_table = vpod_free_table,
	.recycle = vpod_recycle_table,
};

/*
 * The hardware's walk of @owner's tables for window offset @offset, reading
 * the entries as they are in memory. Returns 0 and the address in
 * @owner's memory, or -ENODEV when nothing valid maps @offset. The tables
 * of a pod that spans kernels are in the shared region, where another
 * kernel may be writing them: only pages of @owner's pool are followed.
 */
static int walk(struct amdgpu_ualink_vpod_node *owner, u64 offset, u64 *addr)
{
	struct amdgpu_ualink_vpod_shm *shm = amdgpu_ualink_vpod->shm;
	const u64 *table = shm ? amdgpu_ualink_vpod_shm_root(shm, owner->id) :
				 owner->root;
	unsigned int level;

	if (!table)
		return -ENODEV;

	for (level = 0; level < AMDGPU_UALINK_PT_LEVELS; level++) {
		unsigned int shift = 39 - 9 * level;
		u64 e = READ_ONCE(table[(offset >> shift) %
					AMDGPU_UALINK_PT_ENTRIES]);

		if (!(e & VPOD_PTE_VALID))
			return -ENODEV;
		if (level == AMDGPU_UALINK_PT_LEVELS - 1 ||
		    (level && (e & VPOD_PTE_HUGE))) {
			*addr = (e & VPOD_PTE_ADDR) + (offset & (BIT_ULL(shift) - 1));
			return 0;
		}
		table = shm ? amdgpu_ualink_vpod_shm_table(shm, owner->id,
							   e & VPOD_PTE_ADDR) :
			      phys_to_virt(e & VPOD_PTE_ADDR);
		if (!table)
			return -ENODEV;
	}
	return -ENODEV;
}

/* The accelerators a range of an owner's window lets through. */
struct amdgpu_ualink_vpod_access {
	DECLARE_BITMAP(allowed, AMDGPU_UALINK_MAX_ACCELS);
	/* in a pod across kernels: its slot in the region's access table */
	unsigned int slot;
};

/* May @requester reach window offset @offset of @owner? Under walk_lock. */
static bool access_allowed(struct amdgpu_ualink_vpod_node *owner, u64 offset,
			   u16 requester)
{
	struct amdgpu_ualink_vpod_access *a;

	lockdep_assert_held(&owner->walk_lock);

	a = mtree_load(&owner->access, offset >> PAGE_SHIFT);
	return a && test_bit(requester, a->allowed);
}

static void window_pages(struct amdgpu_ualink_vpod_node *node, u64 npa,
			 u64 size, unsigned long *first, unsigned long *last)
{
	u64 offset = npa - amdgpu_ualink_npa_build(node->id, 0);

	*first = offset >> PAGE_SHIFT;
	*last = (offset + size - 1) >> PAGE_SHIFT;
}

/**
 * amdgpu_ualink_vpod_allow - &amdgpu_ualink_dev_ops.allow
 * @node: the exporter
 * @importer: the accelerator let in
 * @npa: the first address of the range, in @node's window
 * @size: its size
 *
 * In a pod across kernels, the range and @importer go to @node's access
 * table in the shared region too, which the other kernels check.
 *
 * Returns: 0, -ENOMEM, -ENOSPC when the region's access table of @node is
 * full, or -EIO when the test asked for a refusal
 * (&amdgpu_ualink_vpod_node.refuse_access).
 */
int amdgpu_ualink_vpod_allow(struct amdgpu_ualink_vpod_node *node,
			     u16 importer, u64 npa, u64 size)
{
	struct amdgpu_ualink_vpod_shm *shm = amdgpu_ualink_vpod->shm;
	struct amdgpu_ualink_vpod_access *a;
	unsigned long first, last;
	bool fresh = false;
	int ret = 0;

	window_pages(node, npa, size, &first, &last);
	mutex_lock(&node->access_lock);
	if (node->refuse_access) {
		node->refuse_access--;
		ret = -EIO;
		goto out;
	}
	a = mtree_load(&node->access, first);
	if (!a) {
		a = kzalloc_obj(*a, GFP_KERNEL);
		if (!a) {
			ret = -ENOMEM;
			goto out;
		}
		/* our own record first, letting nobody in yet */
		ret = mtree_store_range(&node->access, first, last, a, GFP_KERNEL);
		if (ret) {
			kfree(a);
			goto out;
		}
		/*
		 * then what the other kernels' requesters are checked
		 * against: nothing reached the region when this fails
		 */
		ret = shm ? amdgpu_ualink_vpod_shm_acl_add(shm, node->id, first,
							   last - first + 1,
							   importer) : 0;
		if (ret < 0) {
			mtree_erase(&node->access, first);
			/* a check that found @a is over once we get the lock */
			spin_lock(&node->walk_lock);
			spin_unlock(&node->walk_lock);
			kfree(a);
			goto out;
		}
		a->slot = ret;
		ret = 0;
		fresh = true;	/* the region's slot names @importer already */
	}
	spin_lock(&node->walk_lock);
	__set_bit(importer, a->allowed);
	spin_unlock(&node->walk_lock);
	if (shm && !fresh)
		amdgpu_ualink_vpod_shm_acl_set(shm, node->id, a->slot, importer,
					       a->allowed);
out:
	mutex_unlock(&node->access_lock);
	return ret;
}

/**
 * amdgpu_ualink_vpod_deny - &amdgpu_ualink_dev_ops.deny
 * @node: the exporter
 * @importer: the accelerator shut out
 * @npa: the first address of the range, in @node's window
 * @size: its size
 *
 * Once this returns no access of @importer to the range passes the check;
 * one past it already finishes under @importer's TLB lock, which the
 * shootdown that follows waits for.
 */
void amdgpu_ualink_vpod_deny(struct amdgpu_ualink_vpod_node *node,
			     u16 importer, u64 npa, u64 size)
{
	struct amdgpu_ualink_vpod_shm *shm = amdgpu_ualink_vpod->shm;
	struct amdgpu_ualink_vpod_access *a;
	unsigned long first, last;
	bool empty;

	window_pages(node, npa, size, &first, &last);
	mutex_lock(&node->access_lock);
	a = mtree_load(&node->access, first);
	if (WARN_ON_ONCE(!a))
		goto out;
	spin_lock(&node->walk_lock);
	__clear_bit(importer, a->allowed);
	empty = bitmap_empty(a->allowed, AMDGPU_UALINK_MAX_ACCELS);
	spin_unlock(&node->walk_lock);
	if (shm && empty)
		amdgpu_ualink_vpod_shm_acl_del(shm, node->id, a->slot);
	else if (shm)
		amdgpu_ualink_vpod_shm_acl_set(shm, node->id, a->slot, importer,
					       a->allowed);
	if (empty) {
		mtree_erase(&node->access, first);
		/* a check that found @a is over once we get the lock */
		spin_lock(&node->walk_lock);
		spin_unlock(&node->walk_lock);
		kfree(a);
	}
out:
	mutex_unlock(&node->access_lock);
}

/*
 * The owner's check of @node in its access table in the shared region, a
 * walk of its tables there, whatever they hold, and the copy; announced in
 * the region by the caller.
 */
static int remote_access_announced(struct amdgpu_ualink_vpod_node *node,
				   struct amdgpu_ualink_vpod_node *owner,
				   u64 offset, void *buf, size_t n, bool write)
{
	u64 addr;
	int ret;

	if (!amdgpu_ualink_vpod_shm_acl_allows(amdgpu_ualink_vpod->shm, owner->id,
					       offset >> PAGE_SHIFT, node->id)) {
		amdgpu_ualink_vpod_shm_refused(amdgpu_ualink_vpod->shm, owner->id);
		return -ENODEV;
	}
	atomic64_inc(&node->walks);
	if (walk(owner, offset & PAGE_MASK, &addr))
		return -ENODEV;
	addr += offset_in_page(offset);
	if (addr >= owner->vram_size || n > owner->vram_size - addr)
		return -ENODEV;	/* garbage from a kernel starting over */
	/* debugfs access_hold: an access in flight, translated, not done */
	ret = amdgpu_ualink_vpod_hold_wait(&node->access_hold);
	if (ret)
		return ret;
	if (write)
		memcpy(owner->vram + addr, buf, n);
	else
		memcpy(buf, owner->vram + addr, n);
	return 0;
}

/*
 * One page's worth of an access to memory another kernel hosts, announced
 * in @node's slot of the region from before the owner's check to after
 * the copy: the owner's shootdown of @node waits for it (see "A pod of
 * several kernels").
 */
static int remote_access(struct amdgpu_ualink_vpod_node *node,
			 struct amdgpu_ualink_vpod_node *owner, u64 offset,
			 void *buf, size_t n, bool write)
{
	struct amdgpu_ualink_vpod_shm *shm = amdgpu_ualink_vpod->shm;
	int ret;

	ret = mutex_lock_interruptible(&node->remote_lock);
	if (ret)
		return ret;
	amdgpu_ualink_vpod_shm_access_begin(shm, node->id, owner->id);
	ret = remote_access_announced(node, owner, offset, buf, n, write);
	amdgpu_ualink_vpod_shm_access_end(shm, node->id);
	mutex_unlock(&node->remote_lock);
	return ret;
}

/**
 * amdgpu_ualink_vpod_faults - accesses to an accelerator's window refused
 * @node: the accelerator, hosted here
 *
 * Returns: the refusals of this kernel's fabric, and in a pod that spans
 * kernels those of other kernels' accesses, which they count in the
 * region for it.
 */
u64 amdgpu_ualink_vpod_faults(struct amdgpu_ualink_vpod_node *node)
{
	struct amdgpu_ualink_vpod_shm *shm = amdgpu_ualink_vpod->shm;

	return atomic64_read(&node->faults) +
	       (shm ? amdgpu_ualink_vpod_shm_refusals(shm, node->id) : 0);
}

/**
 * amdgpu_ualink_vpod_fabric_access - a GPU access through the fabric
 * @node: the accessing accelerator
 * @npa: the first address, in another accelerator's window
 * @buf: the bytes to write, or where to read into
 * @size: their number
 * @write: write, else read
 *
 * Each page is checked against the owner's access set for @node (a
 * refusal is counted in the owner's @faults), translated by @node's TLB,
 * or by a walk of the owner's tables that fills it, and copied under the
 * TLB's lock, so that a shootdown returns only once no access through the
 * old translation is in flight.
 *
 * The memory of an accelerator another kernel hosts is reached through
 * the shared region: each page is checked against the owner's access
 * table there and its tables are walked (no TLB entry is kept), the
 * access announced in the region until its copy is done, which the
 * owner's shootdown waits for (see amdgpu_ualink_vpod_shm.c). @node's
 * accesses to other kernels' memory go one at a time.
 *
 * Returns: 0, or -ENODEV when the owner is unreachable, refuses @node or
 * a page is not mapped (what a GPU would see as a fabric fault); for
 * memory another kernel hosts, -ERESTARTSYS when a signal came while the
 * access waited for @node's previous one or for debugfs ``access_hold``.
 */
int amdgpu_ualink_vpod_fabric_access(struct amdgpu_ualink_vpod_node *node,
				     u64 npa, void *buf, size_t size,
				     bool write)
{
	while (size) {
		size_t n = min_t(size_t, size, PAGE_SIZE - offset_in_page(npa));
		struct amdgpu_ualink_vpod_tlb_entry *e;
		struct amdgpu_ualink_vpod_node *owner;
		u64 page = npa & PAGE_MASK, offset, addr;
		u16 id;
		int ret = 0;

		if (amdgpu_ualink_npa_split(npa, &id, &offset))
			return -ENODEV;
		owner = amdgpu_ualink_vpod_node(id);
		if (!owner || READ_ONCE(owner->state) == AMDGPU_UALINK_VPOD_OFFLINE ||
		    READ_ONCE(node->state) == AMDGPU_UALINK_VPOD_OFFLINE)
			return -ENODEV;

		if (owner->remote) {
			ret = remote_access(node, owner, offset, buf, n, write);
			if (ret)
				return ret;
			goto next;
		}
		spin_lock(&node->tlb_lock);
		e = &node->tlb[(page >> PAGE_SHIFT) % AMDGPU_UALINK_VPOD_TLB_ENTRIES];
		spin_lock(&owner->walk_lock);
		if (!access_allowed(owner, offset, node->id)) {
			atomic64_inc(&owner->faults);
			ret = -ENODEV;
		} else if (e->npa != page) {
			atomic64_inc(&node->walks);
			ret = walk(owner, offset & PAGE_MASK, &addr);
			if (!ret) {
				e->npa = page;
				e->addr = addr;
			}
		}
		spin_unlock(&owner->walk_lock);
		addr = e->addr + offset_in_page(npa);
		if (!ret && addr + n > owner->vram_size) {
			/*
			 * A table pointing outside memory: a bug of ours, or
			 * in a pod across kernels, the region scribbled on.
			 */
			WARN_ON_ONCE(!amdgpu_ualink_vpod->shm);
			ret = -EIO;
		}
		if (!ret && write)
			memcpy(owner->vram + addr, buf, n);
		else if (!ret)
			memcpy(buf, owner->vram + addr, n);
		/*
		 * Only now: a shootdown waits for the access in flight, not
		 * just for the walk, as the exporter's unmap relies on.
		 */
		spin_unlock(&node->tlb_lock);
		if (ret)
			return ret;
next:
		buf += n;
		npa += n;
		size -= n;
	}
	return 0;
}

/**
 * amdgpu_ualink_vpod_hold_wait - wait while a debugfs hold is on
 * @hold: the hold
 *
 * Context: process context, may sleep.
 *
 * Returns: 0, or -ERESTARTSYS when a signal ended the wait.
 */
int amdgpu_ualink_vpod_hold_wait(struct amdgpu_ualink_vpod_hold *hold)
{
	int ret;

	if (!READ_ONCE(hold->on))
		return 0;
	atomic_inc(&hold->waiters);
	ret = wait_event_interruptible(hold->wq, !READ_ONCE(hold->on));
	atomic_dec(&hold->waiters);
	return ret;
}

/**
 * amdgpu_ualink_vpod_tlb_flush - forget translations of an NPA range
 * @node: the accelerator whose TLB
 * @npa: the first address
 * @size: the range's size; U64_MAX with @npa 0 for everything
 *
 * Waits for a walk in progress.
 */
void amdgpu_ualink_vpod_tlb_flush(struct amdgpu_ualink_vpod_node *node,
				  u64 npa, u64 size)
{
	unsigned int i;

	spin_lock(&node->tlb_lock);
	for (i = 0; i < AMDGPU_UALINK_VPOD_TLB_ENTRIES; i++) {
		u64 page = node->tlb[i].npa;

		if (page && page - npa < size)
			node->tlb[i].npa = 0;
	}
	spin_unlock(&node->tlb_lock);
}

/**
 * amdgpu_ualink_vpod_tlb_entries - translations an accelerator caches
 * @node: the accelerator
 *
 * Returns: the number of valid TLB entries.
 */
unsigned int amdgpu_ualink_vpod_tlb_entries(struct amdgpu_ualink_vpod_node *node)
{
	unsigned int i, n = 0;

	spin_lock(&node->tlb_lock);
	for (i = 0; i < AMDGPU_UALINK_VPOD_TLB_ENTRIES; i++)
		n += !!node->tlb[i].npa;
	spin_unlock(&node->tlb_lock);
	return n;
}

/**
 * amdgpu_ualink_vpod_shootdown - &amdgpu_ualink_dev_ops.shootdown
 * @node: the exporter
 * @importer: the accelerator that must forget the range
 * @npa: the first address of the range, in @node's window
 * @size: its size
 *
 * An importer in this kernel forgets its translations, and an access
 * through one that is in flight ends first. One in another kernel keeps
 * no translation of ours, but may have an access to our memory in
 * flight, which passed our check before the deny that precedes this:
 * that one is waited for, up to a quarter of @node's mailbox timeout (the
 * mailbox's worker may be the caller, and must go on answering peers
 * well within their own timeout).
 *
 * Returns: 0, or -ETIMEDOUT when an access of an importer in another
 * kernel did not end in time.
 */
int amdgpu_ualink_vpod_shootdown(struct amdgpu_ualink_vpod_node *node,
				 u16 importer, u64 npa, u64 size)
{
	struct amdgpu_ualink_vpod_node *imp = amdgpu_ualink_vpod_node(importer);
	struct amdgpu_ualink_vpod_shm *shm = amdgpu_ualink_vpod->shm;
	unsigned int timeout_ms, retries;
	u32 seq;
	int ret;

	if (!imp)
		return 0;
	if (!imp->remote) {
		atomic64_inc(&imp->shootdowns);
		amdgpu_ualink_vpod_tlb_flush(imp, npa, size);
		return 0;
	}
	if (!amdgpu_ualink_vpod_shm_access_in_flight(shm, importer, node->id, &seq))
		return 0;
	atomic64_inc(&node->shootdown_waits);
	amdgpu_ualink_mbox_get_timeout(node->udev.mbox, &timeout_ms, &retries);
	ret = amdgpu_ualink_vpod_shm_access_wait(shm, importer, node->id, seq,
						 timeout_ms / 4);
	if (ret)
		atomic64_inc(&node->shootdown_timeouts);
	return ret;
}

/**
 * amdgpu_ualink_vpod_member - &amdgpu_ualink_dev_ops.member
 * @priv: the accelerator asking, a &struct amdgpu_ualink_vpod_node (the
 *	  ops' private data on its DRM device and on a fabric-only one)
 * @peer: the accelerator asked about
 *
 * The op itself, not a wrapper's callee: a repeated import asks it on
 * every call.
 *
 * Returns: true when @peer exists and is in the asking accelerator's
 * virtual pod, and that one is not resetting (it grants and imports
 * nothing then).
 */
bool amdgpu_ualink_vpod_member(void *priv, u16 peer)
{
	struct amdgpu_ualink_vpod_node *node = priv;
	struct amdgpu_ualink_vpod_node *p = amdgpu_ualink_vpod_node(peer);
	unsigned int seq;
	bool same;

	if (!p || READ_ONCE(node->state) == AMDGPU_UALINK_VPOD_RESETTING)
		return false;
	/*
	 * No lock: both pods as of one instant, between moves. The answer
	 * may be stale once returned, as it was with a lock; a move cleans
	 * up after itself once it is visible.
	 */
	do {
		seq = read_seqcount_begin(&amdgpu_ualink_vpod->seq);
		same = READ_ONCE(p->vpod) == READ_ONCE(node->vpod);
	} while (read_seqcount_retry(&amdgpu_ualink_vpod->seq, seq));
	return same;
}

/**
 * amdgpu_ualink_vpod_set_vpod - move an accelerator to another virtual pod
 * @node: the accelerator
 * @vpod: the virtual pod's number
 *
 * As firmware would: every exporter of the pod then takes the importers
 * that are no longer members out of its access sets, and every importer
 * drops its imports from accelerators that are no longer members.
 */
void amdgpu_ualink_vpod_set_vpod(struct amdgpu_ualink_vpod_node *node,
				 u32 vpod)
{
	struct amdgpu_ualink_vpod *pod = amdgpu_ualink_vpod;
	unsigned int i, size;
	unsigned long flags;
	u32 old;

	spin_lock_irqsave(&pod->lock, flags);
	write_seqcount_begin(&pod->seq);
	old = node->vpod;
	for (i = 0, size = 1; old != vpod && i < pod->num_nodes; i++) {
		struct amdgpu_ualink_vpod_node *p = pod->nodes[i];

		if (p == node)
			continue;
		if (p->vpod == old)
			WRITE_ONCE(p->vpod_size, p->vpod_size - 1);
		else if (p->vpod == vpod)
			WRITE_ONCE(p->vpod_size, p->vpod_size + 1);
		if (p->vpod == vpod)
			size++;
	}
	if (old != vpod) {
		WRITE_ONCE(node->vpod, vpod);
		WRITE_ONCE(node->vpod_size, size);
	}
	write_seqcount_end(&pod->seq);
	spin_unlock_irqrestore(&pod->lock, flags);
	for (i = 0; i < pod->num_nodes; i++) {
		if (pod->nodes[i]->remote)
			continue;
		amdgpu_ualink_export_revoke_nonmembers(&pod->nodes[i]->udev);
		amdgpu_ualink_import_drop_nonmembers(&pod->nodes[i]->udev);
	}
}

/**
 * amdgpu_ualink_vpod_info - an accelerator's virtual pod
 * @node: the accelerator
 * @vpod: returns the number of its virtual pod
 * @size: returns the accelerators in it
 */
void amdgpu_ualink_vpod_info(struct amdgpu_ualink_vpod_node *node, u32 *vpod,
			     u32 *size)
{
	unsigned int seq;

	/* every ioctl asks: no lock, both as of one instant between moves */
	do {
		seq = read_seqcount_begin(&amdgpu_ualink_vpod->seq);
		*vpod = READ_ONCE(node->vpod);
		*size = READ_ONCE(node->vpod_size);
	} while (read_seqcount_retry(&amdgpu_ualink_vpod->seq, seq));
}

/**
 * amdgpu_ualink_vpod_active - the active accelerators of a virtual pod
 * @node: an accelerator of it
 * @mask: set for every active accelerator of @node's virtual pod, @node
 *	  included when it is active (bits of others are left alone)
 */
void amdgpu_ualink_vpod_active(struct amdgpu_ualink_vpod_node *node,
			       unsigned long *mask)
{
	struct amdgpu_ualink_vpod *pod = amdgpu_ualink_vpod;
	unsigned long flags;
	unsigned int i;

	spin_lock_irqsave(&pod->lock, flags);
	for (i = 0; i < pod->num_nodes; i++)
		if (pod->nodes[i]->vpod == node->vpod &&
		    pod->nodes[i]->state == AMDGPU_UALINK_VPOD_ACTIVE)
			__set_bit(i, mask);
	spin_unlock_irqrestore(&pod->lock, flags);
}

/*
 * Once an accelerator is offline, the fabric carries no more doorbells to
 * or from it: wait for those that read the old state (ring_doorbell()
 * checks and rings in one RCU read-side critical section).
 */
static void set_state(struct amdgpu_ualink_vpod_node *node, int state)
{
	unsigned long flags;

	lockdep_assert_held(&node->control_lock);
	spin_lock_irqsave(&amdgpu_ualink_vpod->lock, flags);
	WRITE_ONCE(node->state, state);
	spin_unlock_irqrestore(&amdgpu_ualink_vpod->lock, flags);
	if (state == AMDGPU_UALINK_VPOD_OFFLINE)
		synchronize_rcu();
	amdgpu_ualink_vpod_drm_state_changed(node);
}

/* the end of a reset: what the fabric held dropped, the accelerator back */
static void reset_finish(struct amdgpu_ualink_vpod_node *node)
{
	lockdep_assert_held(&node->control_lock);
	amdgpu_ualink_dev_reset(&node->udev);
	amdgpu_ualink_vpod_tlb_flush(node, 0, U64_MAX);
	set_state(node, AMDGPU_UALINK_VPOD_ACTIVE);
}

/**
 * amdgpu_ualink_vpod_reset - a GPU reset of an accelerator
 * @node: the accelerator
 * @phase: %AMDGPU_UALINK_VPOD_RESET_WHOLE for the whole of it;
 *	%AMDGPU_UALINK_VPOD_RESET_BEGIN to enter it and stay there (the state
 *	``resetting``, in which the uAPI answers ENETDOWN and peers are
 *	refused), %AMDGPU_UALINK_VPOD_RESET_END to finish it
 *
 * Returns: 0; -EBUSY when it is offline, or already resetting (BEGIN,
 * WHOLE); -ENODEV when its DRM device was unplugged (BEGIN, WHOLE);
 * -EINVAL for END when it is not resetting.
 */
int amdgpu_ualink_vpod_reset(struct amdgpu_ualink_vpod_node *node,
			     enum amdgpu_ualink_vpod_reset_phase phase)
{
	int ret = 0;

	mutex_lock(&node->control_lock);
	if (phase == AMDGPU_UALINK_VPOD_RESET_END) {
		if (node->state != AMDGPU_UALINK_VPOD_RESETTING)
			ret = -EINVAL;
		else
			reset_finish(node);
		goto out;
	}
	if (node->unplugged || node->state != AMDGPU_UALINK_VPOD_ACTIVE) {
		ret = node->unplugged ? -ENODEV : -EBUSY;
		goto out;
	}
	set_state(node, AMDGPU_UALINK_VPOD_RESETTING);
	if (phase == AMDGPU_UALINK_VPOD_RESET_WHOLE)
		reset_finish(node);
out:
	mutex_unlock(&node->control_lock);
	return ret;
}

/**
 * amdgpu_ualink_vpod_set_offline - take an accelerator out of the pod, or back
 * @node: the accelerator
 * @offline: out, else back
 *
 * Every mailbox of the pod hears of it, as from a firmware event: peers
 * drop what they held from and for @node, and @node what it held of them.
 *
 * Returns: 0, -EBUSY when it is resetting, or -ENODEV when it is to come
 * back but its DRM device was unplugged.
 */
int amdgpu_ualink_vpod_set_offline(struct amdgpu_ualink_vpod_node *node,
				   bool offline)
{
	struct amdgpu_ualink_vpod *pod = amdgpu_ualink_vpod;
	unsigned int i;
	int ret = 0;
	bool was;

	mutex_lock(&node->control_lock);
	if (!offline && node->unplugged) {
		ret = -ENODEV;
		goto out;
	}
	was = node->state == AMDGPU_UALINK_VPOD_OFFLINE;
	if (node->state == AMDGPU_UALINK_VPOD_RESETTING || offline == was) {
		ret = node->state == AMDGPU_UALINK_VPOD_RESETTING ? -EBUSY : 0;
		goto out;
	}
	if (offline)
		set_state(node, AMDGPU_UALINK_VPOD_OFFLINE);
	for (i = 0; i < pod->num_nodes; i++) {
		struct amdgpu_ualink_vpod_node *peer = pod->nodes[i];

		if (peer == node)
			continue;
		/*
		 * Another kernel's accelerator is not told: it finds out by
		 * the mailbox's timeouts, as it would of a kernel that died.
		 */
		if (offline) {
			if (!peer->remote)
				amdgpu_ualink_mbox_peer_offline(peer->udev.mbox,
								node->id);
			amdgpu_ualink_mbox_peer_offline(node->udev.mbox, peer->id);
		} else {
			if (!peer->remote)
				amdgpu_ualink_mbox_peer_online(peer->udev.mbox,
							       node->id);
			amdgpu_ualink_mbox_peer_online(node->udev.mbox, peer->id);
		}
	}
	if (offline) {
		amdgpu_ualink_vpod_tlb_flush(node, 0, U64_MAX);
		goto out;
	}
	set_state(node, AMDGPU_UALINK_VPOD_ACTIVE);
	smp_mb();	/* the state before the rings: see ring_doorbell() */
	/* what was published while the link was down is read now */
	for (i = 0; i < pod->num_nodes; i++) {
		if (i == node->id)
			continue;
		if (ring_at(node->id, i))
			ring_doorbell(pod->nodes[i], node->id);
		if (ring_at(i, node->id))
			ring_doorbell(node, i);
	}
out:
	mutex_unlock(&node->control_lock);
	return ret;
}

/* A fabric-only accelerator's heap, the only buffer it has. */
static bool heap_get(void *priv, void *obj)
{
	return true;	/* lives as long as the node */
}

static void heap_put(void *priv, void *obj)
{
}

static int heap_pin(void *priv, void *obj, bool intr)
{
	struct amdgpu_ualink_vpod_node *node = priv;

	guard(mutex)(&node->udev.lock);
	node->heap_pins++;
	return 0;
}

static void heap_unpin(void *priv, void *obj)
{
	struct amdgpu_ualink_vpod_node *node = priv;

	guard(mutex)(&node->udev.lock);
	WARN_ON(node->heap_pins <= 0);
	node->heap_pins--;
}

static bool heap_next(struct amdgpu_ualink_pt_cursor *cur)
{
	return false;
}

static void heap_cursor(void *priv, void *obj, struct amdgpu_ualink_pt_cursor *cur)
{
	cur->addr = 0;
	cur->size = AMDGPU_UALINK_VPOD_HEAP_SIZE;
	cur->next = heap_next;
}

static int node_allow(void *priv, u16 importer, u64 npa, u64 size)
{
	return amdgpu_ualink_vpod_allow(priv, importer, npa, size);
}

static void node_deny(void *priv, u16 importer, u64 npa, u64 size)
{
	amdgpu_ualink_vpod_deny(priv, importer, npa, size);
}

static int node_shootdown(void *priv, u16 importer, u64 npa, u64 size)
{
	return amdgpu_ualink_vpod_shootdown(priv, importer, npa, size);
}

static struct dma_fence *heap_revoke(void *priv, void *obj)
{
	/* fabric-only accelerators import nothing */
	return NULL;
}

static const struct amdgpu_ualink_dev_ops heap_ops = {
	.get = heap_get,
	.put = heap_put,
	.pin = heap_pin,
	.unpin = heap_unpin,
	.cursor = heap_cursor,
	.member = amdgpu_ualink_vpod_member,
	.allow = node_allow,
	.deny = node_deny,
	.shootdown = node_shootdown,
	.revoke = heap_revoke,
};

static void node_free(struct amdgpu_ualink_vpod_node *node)
{
	struct amdgpu_ualink_vpod_access *a;
	struct amdgpu_ualink_vpod_ring *ring;
	unsigned long index;

	xa_for_each(&node->rings, index, ring)
		kfree(ring);
	xa_destroy(&node->rings);
	/* every export ended: its importers were all denied */
	index = 0;
	mt_for_each(&node->access, a, index, ULONG_MAX) {
		WARN_ON_ONCE(1);
		kfree(a);
	}
	mtree_destroy(&node->access);
	mutex_destroy(&node->access_lock);
	mutex_destroy(&node->remote_lock);
	if (!node->vram_phys)
		vfree(node->vram);
	kfree(node->tx_base);
	kfree(node->rx_base);
	kfree(node->tx_own);
	kfree(node->rx_own);
	mutex_destroy(&node->control_lock);
	kfree(node);
}

/*
 * A fabric-only accelerator's memory holds its ID; the others' is zeroed.
 * In a pod that spans kernels the memory is in the shared region, and the
 * accelerators other kernels host are only known by their ID and memory.
 */
static struct amdgpu_ualink_vpod_node *node_new(u16 id, bool drm, bool remote,
						u64 vram_size, u32 vpod)
{
	struct amdgpu_ualink_vpod_shm *shm = amdgpu_ualink_vpod->shm;
	struct amdgpu_ualink_vpod_node *node = kzalloc_obj(*node, GFP_KERNEL);
	u32 *words;
	size_t i;

	if (!node)
		return NULL;
	node->id = id;
	node->vpod = vpod;
	node->vram_size = vram_size;
	node->remote = remote;
	node->heap = !drm && !remote;
	xa_init(&node->rings);
	spin_lock_init(&node->tlb_lock);
	spin_lock_init(&node->walk_lock);
	spin_lock_init(&node->doorbell_lock);
	mt_init(&node->access);
	mutex_init(&node->access_lock);
	mutex_init(&node->remote_lock);
	init_waitqueue_head(&node->access_hold.wq);
	mutex_init(&node->control_lock);
	INIT_LIST_HEAD(&node->fill);
	mutex_init(&node->fill_lock);
	init_waitqueue_head(&node->pin_hold.wq);
	if (shm) {
		node->vram = amdgpu_ualink_vpod_shm_vram(shm, id, &node->vram_phys);
		if (remote)
			return node;
		/* zeroed by node_start(), once no access reaches it */
		node->tx_base = kcalloc(amdgpu_ualink_vpod->num_nodes,
					sizeof(u32), GFP_KERNEL);
		node->rx_base = kcalloc(amdgpu_ualink_vpod->num_nodes,
					sizeof(u32), GFP_KERNEL);
		node->tx_own = kcalloc(amdgpu_ualink_vpod->num_nodes,
				       sizeof(u32), GFP_KERNEL);
		node->rx_own = kcalloc(amdgpu_ualink_vpod->num_nodes,
				       sizeof(u32), GFP_KERNEL);
		if (!node->tx_base || !node->rx_base || !node->tx_own ||
		    !node->rx_own) {
			node_free(node);
			return NULL;
		}
		return node;
	}
	node->vram = vzalloc(vram_size);
	if (!node->vram) {
		node_free(node);
		return NULL;
	}
	words = node->vram;
	for (i = 0; node->heap && i < vram_size / sizeof(*words); i++)
		words[i] = (__force u32)cpu_to_le32(id);
	return node;
}

/*
 * Going on from where the rings of a pod that spans kernels are: what a
 * predecessor of ours left unread here is dropped (its senders' requests
 * time out, or they see our new generation first); what it left unread at
 * others is theirs to read. Before the mailbox exists.
 */
static void node_take_rings(struct amdgpu_ualink_vpod_node *node)
{
	struct amdgpu_ualink_vpod *pod = amdgpu_ualink_vpod;
	unsigned int i;

	for (i = 0; i < pod->num_nodes; i++) {
		struct amdgpu_ualink_vpod_ring *ring;

		if (i == node->id)
			continue;
		ring = ring_at(node->id, i);
		/* as vpod_rx_head() and vpod_rx_ack() do */
		node->rx_base[i] = smp_load_acquire(&ring->head);
		node->rx_own[i] = node->rx_base[i];
		/* all of it consumed: the sender may reuse the slots */
		smp_store_release(&ring->tail, node->rx_base[i]);
		ring = ring_at(i, node->id);
		node->tx_base[i] = READ_ONCE(ring->head);
		node->tx_own[i] = node->tx_base[i];
		WRITE_ONCE(ring->waiting, 0);
	}
}

/*
 * A new life of an accelerator in a pod that spans kernels: its access
 * table in the region is empty (amdgpu_ualink_vpod_shm_start()), so no
 * access of another kernel's accelerator starts any more; one that passed
 * the previous life's table before may still be in flight, and is waited
 * for, bounded, before the memory is zeroed for the new life. Nothing
 * else runs on the accelerator yet.
 */
static void node_new_life(struct amdgpu_ualink_vpod_node *node)
{
	struct amdgpu_ualink_vpod *pod = amdgpu_ualink_vpod;
	unsigned int i;
	u32 seq;

	amdgpu_ualink_vpod_shm_start(pod->shm, node->id);
	for (i = 0; i < pod->num_nodes; i++) {
		if (!pod->nodes[i]->remote ||
		    !amdgpu_ualink_vpod_shm_access_in_flight(pod->shm, i, node->id,
							     &seq))
			continue;
		atomic64_inc(&node->start_waits);
		if (amdgpu_ualink_vpod_shm_access_wait(pod->shm, i, node->id, seq,
						       AMDGPU_UALINK_VPOD_START_WAIT_MS))
			atomic64_inc(&node->start_timeouts);
	}
	memset(node->vram, 0, node->vram_size);
}

/* Take one accelerator's core state up; the node is in the pod already. */
static int node_start(struct amdgpu_ualink_vpod_node *node,
		      const struct amdgpu_ualink_dev_ops *ops)
{
	struct amdgpu_ualink_vpod_shm *shm = amdgpu_ualink_vpod->shm;
	int ret;

	if (shm) {
		node_new_life(node);
		node_take_rings(node);
	}
	ret = amdgpu_ualink_pt_init(&node->pt, &vpod_pt_ops, &vpod_pte_format, node);
	if (ret)
		return ret;
	/* one chain below the root: an export mapped again allocates nothing */
	amdgpu_ualink_pt_keep_spares(&node->pt, AMDGPU_UALINK_PT_LEVELS - 1);
	ret = amdgpu_ualink_dev_init(&node->udev, node->id, ops, node,
				     &vpod_mbox_ops, node, &node->pt);
	if (ret)
		amdgpu_ualink_pt_fini(&node->pt);
	return ret;
}

static void node_stop(struct amdgpu_ualink_vpod_node *node)
{
	unsigned long flags;

	/* no doorbell reaches the mailbox from now on */
	spin_lock_irqsave(&node->doorbell_lock, flags);
	node->stopped = true;
	spin_unlock_irqrestore(&node->doorbell_lock, flags);
	amdgpu_ualink_vpod_window_clear(node);
	amdgpu_ualink_dev_fini(&node->udev);
	amdgpu_ualink_pt_fini(&node->pt);
}

/*
 * Write @own, the index we last wrote at @index, back when another kernel
 * wrote something else there: a consumer index that claims more than its
 * producer wrote leaves the producer waiting for room forever, and a
 * producer index that went somewhere else makes the consumer drop what it
 * reads up to there and then claim that much; neither heals from the
 * ring's traffic alone. Only a difference seen on two polls in a row,
 * with @own the same, is taken for another kernel's: one of ours in
 * flight (@own written, @index not yet) lasts less than a poll. @suspect
 * is the poller's memory of the last difference. @own is released after
 * the entries (or the reads of the slots) and acquired here, and the
 * exchange is a full barrier, so that whoever reads the index written
 * here sees what it stands for. What remains: a value another kernel
 * writes that equals the index we are about to write can be put back one
 * step by the exchange, for one poll.
 */
static void heal(u32 *index, const u32 *own, u64 *suspect)
{
	/* pairs with the release of @own: what it stands for is seen */
	u32 want = smp_load_acquire(own);
	u32 now = READ_ONCE(*index);
	u64 seen = (u64)want << 32 | now;

	if (now == want) {
		*suspect = 0;
		return;
	}
	if (*suspect != seen) {
		*suspect = seen;
		return;
	}
	*suspect = 0;
	if (cmpxchg(index, now, want) == now)
		atomic_inc(&amdgpu_ualink_vpod->healed);
}

/*
 * The poller of a pod that spans kernels rings the doorbells another
 * kernel's interrupts would have: a producer index a remote accelerator
 * moved at one of ours, and a consumer index it moved at a ring where one
 * of ours waits for room (vpod_peer_tail() flagged it).
 */
static void poll_remote(void)
{
	struct amdgpu_ualink_vpod *pod = amdgpu_ualink_vpod;
	unsigned int id, peer;

	for (id = pod->first_drm; id < pod->first_drm + pod->num_drm; id++) {
		for (peer = 0; peer < pod->num_nodes; peer++) {
			u32 *seen = &pod->seen[id * pod->num_nodes + peer];
			struct amdgpu_ualink_vpod_ring *ring;
			u32 head;

			if (!pod->nodes[peer]->remote)
				continue;
			ring = ring_at(id, peer);
			heal(&ring->tail, &pod->nodes[id]->rx_own[peer],
			     &pod->suspect[2 * (id * pod->num_nodes + peer)]);
			heal(&ring_at(peer, id)->head, &pod->nodes[id]->tx_own[peer],
			     &pod->suspect[2 * (id * pod->num_nodes + peer) + 1]);
			head = READ_ONCE(ring->head);
			if (head != *seen) {
				*seen = head;
				ring_doorbell(pod->nodes[peer], id);
			}
			/* see vpod_rx_ack(), which leaves the flag to us */
			ring = ring_at(peer, id);
			if (READ_ONCE(ring->waiting) &&
			    READ_ONCE(ring->tail) != pod->seen_tail[id * pod->num_nodes + peer] &&
			    xchg(&ring->waiting, 0)) {
				pod->seen_tail[id * pod->num_nodes + peer] =
					READ_ONCE(ring->tail);
				ring_doorbell(pod->nodes[peer], id);
			}
		}
	}
}

/**
 * amdgpu_ualink_vpod_fabric_init - build the pod
 * @num_nodes: accelerators, 1 to 1,024 (with @shm: in all kernels, 1 to
 *	       %AMDGPU_UALINK_VPOD_SHM_MAX_NODES)
 * @first_drm: ID of the first accelerator with a DRM device; 0 without
 *	       @shm
 * @num_drm: how many get one: those this kernel hosts with @shm (the
 *	     others are remote), else the first (the others are fabric-only)
 * @vram_size: device memory of each of those (with @shm: of every
 *	       accelerator, remote ones too)
 * @vpod_size: accelerators per virtual pod, in ID order; 0 for one
 * @drm_ops: the core's callbacks for accelerators with a DRM device
 * @shm: the region the kernels of the pod share, or NULL for a pod in
 *	 this kernel only; the pod owns it from now on
 *
 * Returns: 0 or a negative errno.
 */
int amdgpu_ualink_vpod_fabric_init(unsigned int num_nodes,
				   unsigned int first_drm, unsigned int num_drm,
				   u64 vram_size, unsigned int vpod_size,
				   const struct amdgpu_ualink_dev_ops *drm_ops,
				   struct amdgpu_ualink_vpod_shm *shm)
{
	struct amdgpu_ualink_vpod *pod;
	unsigned int i, started = 0;
	int ret = -ENOMEM;

	pod = kzalloc_obj(*pod, GFP_KERNEL);
	if (!pod)
		goto err_shm;
	spin_lock_init(&pod->lock);
	seqcount_spinlock_init(&pod->seq, &pod->lock);
	pod->first_drm = first_drm;
	pod->num_drm = num_drm;
	pod->shm = shm;
	pod->num_nodes = num_nodes;
	pod->nodes = kcalloc(num_nodes, sizeof(*pod->nodes), GFP_KERNEL);
	if (shm) {
		pod->seen = kcalloc(num_nodes * num_nodes, sizeof(u32), GFP_KERNEL);
		pod->suspect = kcalloc(2 * num_nodes * num_nodes, sizeof(u64),
				       GFP_KERNEL);
		pod->seen_tail = kcalloc(num_nodes * num_nodes, sizeof(u32),
					 GFP_KERNEL);
	}
	if (!pod->nodes || (shm && (!pod->seen || !pod->seen_tail || !pod->suspect)))
		goto err;
	amdgpu_ualink_vpod = pod;
	for (i = 0; i < num_nodes; i++) {
		bool drm = i >= first_drm && i < first_drm + num_drm;

		pod->nodes[i] = node_new(i, drm, shm && !drm,
					 drm || shm ? vram_size :
					 AMDGPU_UALINK_VPOD_HEAP_SIZE,
					 vpod_size ? i / vpod_size : 0);
		if (!pod->nodes[i])
			goto err;
	}
	for (i = 0; i < num_nodes; i++)	/* the last virtual pod may be short */
		pod->nodes[i]->vpod_size = vpod_size ?
			min(vpod_size, num_nodes - i / vpod_size * vpod_size) :
			num_nodes;
	for (started = 0; started < num_nodes; started++) {
		struct amdgpu_ualink_vpod_node *node = pod->nodes[started];

		if (node->remote)
			continue;
		ret = node_start(node, node->heap ? &heap_ops : drm_ops);
		if (ret)
			goto err_stop;
	}
	for (i = 0; i < num_nodes; i++) {
		struct amdgpu_ualink_vpod_node *node = pod->nodes[i];

		if (!node->heap)
			continue;
		ret = amdgpu_ualink_export_create(&node->udev, node,
						  AMDGPU_UALINK_VPOD_HEAP_SIZE,
						  &node->heap_slot,
						  node->heap_handle);
		if (ret)
			goto err_stop;
	}
	if (shm) {
		ret = amdgpu_ualink_vpod_shm_poll_start(shm, poll_remote);
		if (ret)
			goto err_stop;
	}
	return 0;

err_stop:
	for (i = 0; i < num_nodes; i++)
		if (pod->nodes[i]->heap_slot)
			amdgpu_ualink_export_destroy(&pod->nodes[i]->udev,
						     &pod->nodes[i]->heap_slot);
	while (started) {
		started--;
		if (!pod->nodes[started]->remote)
			node_stop(pod->nodes[started]);
	}
err:
	amdgpu_ualink_vpod = NULL;
	for (i = 0; pod->nodes && i < num_nodes; i++)
		if (pod->nodes[i])
			node_free(pod->nodes[i]);
	kfree(pod->nodes);
	kfree(pod->seen);
	kfree(pod->seen_tail);
	kfree(pod->suspect);
	kfree(pod);
err_shm:
	if (shm)
		amdgpu_ualink_vpod_shm_unmap(shm);
	return ret;
}

/**
 * amdgpu_ualink_vpod_fabric_fini - take the pod down
 *
 * The DRM devices are gone, with every buffer: only the heaps are
 * exported, and releases of imports may still be on their way.
 */
void amdgpu_ualink_vpod_fabric_fini(void)
{
	struct amdgpu_ualink_vpod *pod = amdgpu_ualink_vpod;
	unsigned int i;

	for (i = 0; i < pod->num_nodes; i++)
		if (pod->nodes[i]->heap)
			amdgpu_ualink_export_destroy(&pod->nodes[i]->udev,
						     &pod->nodes[i]->heap_slot);
	/* releases on their way finish while every mailbox is still there */
	for (i = 0; i < pod->num_nodes; i++)
		if (!pod->nodes[i]->remote)
			flush_workqueue(pod->nodes[i]->udev.wq);
	for (i = 0; i < pod->num_nodes; i++)
		if (!pod->nodes[i]->remote)
			node_stop(pod->nodes[i]);
	/*
	 * Answers from other kernels reach the releases above through the
	 * poller; a doorbell it rings now finds every mailbox stopped.
	 */
	if (pod->shm)
		amdgpu_ualink_vpod_shm_poll_stop(pod->shm);
	for (i = 0; i < pod->num_nodes; i++)
		node_free(pod->nodes[i]);
	amdgpu_ualink_vpod = NULL;
	if (pod->shm)
		amdgpu_ualink_vpod_shm_unmap(pod->shm);
	kfree(pod->nodes);
	kfree(pod->seen);
	kfree(pod->seen_tail);
	kfree(pod->suspect);
	kfree(pod);
}
