// SPDX-License-Identifier: GPL-2.0 OR MIT

#include <linux/bitmap.h>
#include <linux/delay.h>
#include <linux/io.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "amdgpu_ualink_npa.h"
#include "amdgpu_ualink_vpod.h"
#include "amdgpu_ualink_vpod_shm.h"

/**
 * DOC: A pod of several kernels
 *
 * With the module parameter ``shm``, the emulated pod spans kernels: each
 * QEMU guest loads the vpod with the accelerators it hosts (``first_id``
 * and ``nodes``) out of a pod of ``pod_nodes``, and the fabric between
 * guests is a memory region they all map: an ivshmem-plain device (PCI
 * 1af4:1110) backed by one host file. The region holds what hardware
 * would make reachable across the fabric:
 *
 * - a **header** (page 0): magic, layout version, the pod's size, its
 *   virtual pods' size and each accelerator's device memory size, and per
 *   accelerator the region
 *   offset of its root page table, a boot counter (``boots``, bumped
 *   each time a kernel brings the accelerator up, as firmware counts
 *   link-ups) and a refusal counter (``refused``: accesses from other
 *   kernels its access table refused, counted by the requester's kernel
 *   as the owner's fabric port would count them), and the accelerator's
 *   **access in flight** (``access_seq``, odd while one of its accesses
 *   to another kernel's memory runs, and ``access_owner``, whose memory
 *   it is);
 * - the **rings**: one per (receiver, sender) pair, as
 *   &struct amdgpu_ualink_vpod_ring, from page 1 on;
 * - per accelerator, its **page-table pool**
 *   (%AMDGPU_UALINK_VPOD_SHM_PT_PAGES pages; directory entries hold region
 *   offsets), its **access table** (%AMDGPU_UALINK_VPOD_SHM_ACL_PAGES
 *   pages of &struct vpod_shm_acl_slot: which accelerators may reach which
 *   pages of its window, as an owner's fabric port holds it) and its
 *   **device memory**.
 *
 * A guest writes the header fields, tables, access tables and memory of
 * the accelerators it hosts; the slots and producer indices of their rings at others; the
 * consumer indices of others' rings at them; and the ``waiting`` flag of
 * their rings at others (set when a ring is full, cleared by its poller
 * when it rings the sender's doorbell). All guests share the host's byte order. A file QEMU
 * creates is zeroed, which every part of the layout takes as empty; the
 * first kernel writes the header (a kernel killed while doing so leaves
 * the region unusable: ``EBUSY``, make a new file). ivshmem needs a power
 * of two: four accelerators of 4 MiB need 20.1 MiB, so 32 MiB. The
 * region names no owner: two kernels told to host the same accelerator
 * both do, and break it. There is no interrupt between guests (Debian
 * has no ivshmem-server): a thread polls the rings whose receiver is here
 * and whose sender is elsewhere, every 200 to 400 µs, and rings the
 * receiver's doorbell when a producer index moved; it also rings a sender
 * of ours that waits for room at another kernel's receiver when the
 * consumer index there moved.
 *
 * Nothing tells a guest that another died or came back: the mailbox's own
 * timeouts find a peer that stopped answering, and the generation in a
 * restarted peer's HELLO tells that it is new. A kernel bringing up an
 * accelerator takes the indices it finds in the region as its starting
 * point (entries a dead predecessor left unread here are dropped). Entries
 * it left unread at a live receiver still count: a receiver slow to drain
 * them may see the new sender overrun its ring once, which the mailbox
 * counts as a ring drop and heals by retransmission. Every value read
 * from the region is bounded before use (slots modulo the ring, tables
 * within their owner's pool, leaves within its memory) or only compared;
 * and since any guest can write any ring, the poller writes back the
 * indices of ours it finds changed, which the ring's own traffic would
 * never repair.
 *
 * Every access to another kernel's accelerator is checked against that
 * owner's access table in the region before the walk, as the owner's
 * fabric port would check the requester: an accelerator that was never
 * granted the range, whose grant was revoked, or that holds an import of
 * the owner's previous life (a new life starts with an empty table) is
 * refused with the fault a GPU would see. Only the owner's kernel writes
 * its table, one slot per granted range, under the owner's
 * &amdgpu_ualink_vpod_node.access_lock; a slot's sequence count is odd
 * while it is rewritten, so that a reader in another kernel never takes
 * half of one range and half of the next for a grant. Whatever a reader
 * finds there is only compared, never followed.
 *
 * An accelerator caches no translation of another kernel's memory: every
 * access walks the owner's tables in the region. What a shootdown must
 * still wait for is an access in flight: one that passed the owner's
 * check, or walked its tables, just before the grant was revoked would
 * otherwise read or write the memory, or follow the tables, after the
 * owner freed them for another range. So each access to another kernel's
 * memory is announced in the requester's slot of the header
 * (amdgpu_ualink_vpod_shm_access_begin(), one at a time per accelerator)
 * before the owner's table is read, and the owner's shootdown of a
 * requester in another kernel, which follows the deny that rewrote its
 * table, waits until an access of it to the owner's memory that it finds
 * in flight has ended (amdgpu_ualink_vpod_shm_access_wait()): either the
 * access saw the table without the grant, or the owner sees the access.
 * The wait is bounded by a quarter of the owner's mailbox timeout (the
 * mailbox's worker, which answers the owner's peers, runs the shootdowns
 * of a release or a lost peer, and must answer well within the peers'
 * own timeout): a requester whose access outlives it (its kernel hangs,
 * or lies in its slot) fails the shootdown, which the core counts, and
 * its connection ends; the range stays out of the window until then.
 * The memory does not: should that access ever go on, it reaches
 * whatever the owner put there since. No kernel can stop another's copy;
 * hardware bounds an access in flight by its completion timeout instead.
 *
 * A kernel that brings an accelerator up again empties its access table
 * first (amdgpu_ualink_vpod_shm_start()): every access that starts later
 * is refused. It then waits, the same way, for each access to the
 * previous life's memory it finds in flight, up to 10 s each (nothing
 * else runs on the accelerator yet), and only then zeroes the memory for
 * the new life: an access under an old grant reads or writes the old
 * life's bytes, never the new life's. One that outlives the wait (its
 * kernel hangs, or lies in its slot) is counted and given up on, as
 * above.
 */

#define VPOD_SHM_MAGIC		0x6b6c6175	/* "ualk" */
#define VPOD_SHM_INIT		0x74696e69	/* "init": being written */
#define VPOD_SHM_VERSION	5

/* The region's page 0; all guests share the host's byte order. */
struct vpod_shm_header {
	u32 magic;
	u32 version;
	u32 num_nodes;
	u32 pt_pages;
	u32 vpod_size;
	u32 pad;
	u64 vram_size;
	struct {
		/* region offset of the root table, 0 while there is none */
		u64 root;
		/* times a kernel brought the accelerator up */
		u32 boots;
		/*
		 * accesses its access table refused, counted by the refused
		 * requester's kernel, as the owner's fabric port would
		 */
		u32 refused;
		/*
		 * odd while an access of the accelerator to another kernel's
		 * memory is in flight; written by the kernel that hosts it
		 */
		u32 access_seq;
		/* whose memory that access is, valid while @access_seq is odd */
		u32 access_owner;
	} node[AMDGPU_UALINK_VPOD_SHM_MAX_NODES];
};

/*
 * One range of an owner's window and the accelerators it lets through; all
 * zero is a free slot (no pages).
 */
struct vpod_shm_acl_slot {
	/* odd while the owner rewrites @first, @pages and @allowed */
	u32 seq;
	u32 pad;
	/* the range, in pages of the window */
	u64 first;
	u64 pages;
	/* bit n: accelerator n may access the range */
	u64 allowed[AMDGPU_UALINK_MAX_ACCELS / 64];
};

#define VPOD_SHM_ACL_SLOTS \
	(AMDGPU_UALINK_VPOD_SHM_ACL_PAGES * PAGE_SIZE / sizeof(struct vpod_shm_acl_slot))

/**
 * struct amdgpu_ualink_vpod_shm - this kernel's view of the shared region
 */
struct amdgpu_ualink_vpod_shm {
	/** @pdev: the ivshmem device */
	struct pci_dev *pdev;
	/** @base: the region, mapped write-back */
	void *base;
	/** @phys: its physical address (BAR 2) */
	phys_addr_t phys;
	/** @hdr: page 0 */
	struct vpod_shm_header *hdr;
	/** @num_nodes: accelerators of the pod */
	unsigned int num_nodes;
	/** @ring_stride: bytes from one ring to the next */
	u64 ring_stride;
	/** @node_off: where the first accelerator's area starts */
	u64 node_off;
	/** @node_stride: bytes of an accelerator's area */
	u64 node_stride;
	/** @lock: protects the bits of @pt_used */
	spinlock_t lock;
	/** @pt_used: per accelerator, its pool's pages in use (ours only) */
	unsigned long *pt_used[AMDGPU_UALINK_VPOD_SHM_MAX_NODES];
	/**
	 * @acl_used: per accelerator, its access table's slots in use (ours
	 * only); changed under the owner's access_lock
	 */
	DECLARE_BITMAP(acl_used[AMDGPU_UALINK_VPOD_SHM_MAX_NODES], VPOD_SHM_ACL_SLOTS);
	/**
	 * @access_seq: per accelerator hosted here, what its
	 * &vpod_shm_header.node access_seq was last set to (the region's
	 * copy is only written); under the accelerator's remote_lock
	 */
	u32 access_seq[AMDGPU_UALINK_VPOD_SHM_MAX_NODES];
	/**
	 * @stuck: by owner hosted here and requester elsewhere, BIT(32) |
	 * the requester's access_seq that outlived a shootdown's wait: the
	 * next shootdown fails at once while it stays so
	 */
	u64 stuck[AMDGPU_UALINK_VPOD_SHM_MAX_NODES][AMDGPU_UALINK_VPOD_SHM_MAX_NODES];
	/** @poller: the thread that polls remote senders' rings */
	struct task_struct *poller;
	/** @poll: what it calls */
	void (*poll)(void);
};

static u64 pt_off(struct amdgpu_ualink_vpod_shm *shm, u16 id)
{
	return shm->node_off + id * shm->node_stride;
}

/* An accelerator's access table: right after its page-table pool. */
static struct vpod_shm_acl_slot *acl(struct amdgpu_ualink_vpod_shm *shm, u16 id)
{
	return shm->base + pt_off(shm, id) +
		AMDGPU_UALINK_VPOD_SHM_PT_PAGES * PAGE_SIZE;
}

/*
 * The first kernel writes the header (returns 1); the others wait for it
 * (0). The header names no writer: its layout is written once, its
 * per-accelerator fields by whichever kernel hosts the accelerator.
 */
static int header_init(struct vpod_shm_header *hdr, unsigned int num_nodes,
		       unsigned int vpod_size, u64 vram_size)
{
	unsigned int i;

	if (!cmpxchg(&hdr->magic, 0, VPOD_SHM_INIT)) {
		hdr->version = VPOD_SHM_VERSION;
		hdr->num_nodes = num_nodes;
		hdr->pt_pages = AMDGPU_UALINK_VPOD_SHM_PT_PAGES;
		hdr->vpod_size = vpod_size;
		hdr->vram_size = vram_size;
		/* the fields before the magic that says they are there */
		smp_store_release(&hdr->magic, VPOD_SHM_MAGIC);
		return 1;
	}
	for (i = 0;; i++) {
		/* pairs with the release above, in whichever kernel wrote it */
		u32 magic = smp_load_acquire(&hdr->magic);

		if (magic == VPOD_SHM_MAGIC)
			break;
		if (magic != VPOD_SHM_INIT)
			return -EINVAL;
		if (i == 50)	/* a second */
			return -EBUSY;
		msleep(20);
	}
	if (hdr->version != VPOD_SHM_VERSION || hdr->num_nodes != num_nodes ||
	    hdr->pt_pages != AMDGPU_UALINK_VPOD_SHM_PT_PAGES ||
	    hdr->vpod_size != vpod_size || hdr->vram_size != vram_size)
		return -EINVAL;
	return 0;
}

/**
 * amdgpu_ualink_vpod_shm_map - map the region the pod's kernels share
 * @num_nodes: accelerators of the pod, all kernels together
 * @vram_size: device memory of each
 * @vpod_size: accelerators per virtual pod (the module parameter)
 *
 * Takes the first ivshmem-plain device and its BAR 2. A region nobody used
 * (all zero) gets the header; one in use must have the same layout and
 * virtual pods.
 *
 * Returns: the region, or an ERR_PTR(): -ENODEV no ivshmem device, -EBUSY
 * its memory is taken, or its header was left half written, -ENOSPC it is
 * too small, -EINVAL another layout, -ENOMEM.
 */
struct amdgpu_ualink_vpod_shm *
amdgpu_ualink_vpod_shm_map(unsigned int num_nodes, u64 vram_size,
			   unsigned int vpod_size)
{
	struct amdgpu_ualink_vpod_shm *shm;
	unsigned int i;
	u64 need, len;
	int ret;

	if (!num_nodes || num_nodes > AMDGPU_UALINK_VPOD_SHM_MAX_NODES ||
	    !PAGE_ALIGNED(vram_size))
		return ERR_PTR(-EINVAL);
	shm = kzalloc_obj(*shm, GFP_KERNEL);
	if (!shm)
		return ERR_PTR(-ENOMEM);
	for (i = 0; i < num_nodes; i++) {
		shm->pt_used[i] = bitmap_zalloc(AMDGPU_UALINK_VPOD_SHM_PT_PAGES,
						GFP_KERNEL);
		if (!shm->pt_used[i]) {
			ret = -ENOMEM;
			goto err_free;
		}
	}
	spin_lock_init(&shm->lock);
	shm->num_nodes = num_nodes;
	shm->ring_stride = round_up(sizeof(struct amdgpu_ualink_vpod_ring), 64);
	shm->node_off = PAGE_SIZE + round_up(num_nodes * num_nodes *
					     shm->ring_stride, PAGE_SIZE);
	shm->node_stride = (AMDGPU_UALINK_VPOD_SHM_PT_PAGES +
			    AMDGPU_UALINK_VPOD_SHM_ACL_PAGES) * PAGE_SIZE + vram_size;
	need = shm->node_off + num_nodes * shm->node_stride;

	shm->pdev = pci_get_device(PCI_VENDOR_ID_REDHAT_QUMRANET, 0x1110, NULL);
	if (!shm->pdev) {
		ret = -ENODEV;
		goto err_free;
	}
	ret = pci_enable_device_mem(shm->pdev);
	if (ret)
		goto err_put;
	/* nobody else's: a driver bound to it fails this */
	ret = pci_request_region(shm->pdev, 2, KBUILD_MODNAME);
	if (ret) {
		ret = -EBUSY;
		goto err_disable;
	}
	shm->phys = pci_resource_start(shm->pdev, 2);
	len = pci_resource_len(shm->pdev, 2);
	if (len < need) {
		pci_err(shm->pdev, "vpod: region of %llu bytes, the pod needs %llu\n",
			len, need);
		ret = -ENOSPC;
		goto err_release;
	}
	shm->base = memremap(shm->phys, need, MEMREMAP_WB);
	if (!shm->base) {
		ret = -ENOMEM;
		goto err_release;
	}
	shm->hdr = shm->base;
	ret = header_init(shm->hdr, num_nodes, vpod_size, vram_size);
	if (ret < 0) {
		pci_err(shm->pdev, "vpod: %s\n", ret == -EBUSY ?
			"the region's header was left half written" :
			"the region holds another pod's layout");
		goto err_unmap;
	}
	pci_info(shm->pdev, "vpod: pod of %u accelerators across kernels, %llu of %llu bytes; %s\n",
		 num_nodes, need, len, ret ? "wrote the region's header" :
		 "the header was there");
	return shm;

err_unmap:
	memunmap(shm->base);
err_release:
	pci_release_region(shm->pdev, 2);
err_disable:
	pci_disable_device(shm->pdev);
err_put:
	pci_dev_put(shm->pdev);
err_free:
	for (i = 0; i < num_nodes; i++)
		bitmap_free(shm->pt_used[i]);
	kfree(shm);
	return ERR_PTR(ret);
}

/**
 * amdgpu_ualink_vpod_shm_unmap - let go of the region
 * @shm: the region; its poller stopped
 */
void amdgpu_ualink_vpod_shm_unmap(struct amdgpu_ualink_vpod_shm *shm)
{
	unsigned int i;

	for (i = 0; i < AMDGPU_UALINK_VPOD_SHM_MAX_NODES; i++)
		bitmap_free(shm->pt_used[i]);
	memunmap(shm->base);
	pci_release_region(shm->pdev, 2);
	pci_disable_device(shm->pdev);
	pci_dev_put(shm->pdev);
	kfree(shm);
}

/**
 * amdgpu_ualink_vpod_shm_ring - a sender's ring at a receiver
 * @shm: the region
 * @receiver: its accelerator ID
 * @sender: the sender's
 *
 * Returns: the ring, in the region.
 */
struct amdgpu_ualink_vpod_ring *
amdgpu_ualink_vpod_shm_ring(struct amdgpu_ualink_vpod_shm *shm, u16 receiver,
			    u16 sender)
{
	return shm->base + PAGE_SIZE +
		(receiver * shm->num_nodes + sender) * shm->ring_stride;
}

/**
 * amdgpu_ualink_vpod_shm_vram - an accelerator's device memory
 * @shm: the region
 * @id: the accelerator
 * @phys: returns its physical address, for CPU mappings
 *
 * Returns: its mapping.
 */
void *amdgpu_ualink_vpod_shm_vram(struct amdgpu_ualink_vpod_shm *shm, u16 id,
				  phys_addr_t *phys)
{
	u64 off = pt_off(shm, id) + (AMDGPU_UALINK_VPOD_SHM_PT_PAGES +
				     AMDGPU_UALINK_VPOD_SHM_ACL_PAGES) * PAGE_SIZE;

	*phys = shm->phys + off;
	return shm->base + off;
}

/**
 * amdgpu_ualink_vpod_shm_start - this kernel brings an accelerator up
 * @shm: the region
 * @id: the accelerator, hosted here
 *
 * Counts the boot and forgets the page tables and grants a predecessor
 * left: the new life lets nobody in until it grants.
 */
void amdgpu_ualink_vpod_shm_start(struct amdgpu_ualink_vpod_shm *shm, u16 id)
{
	/*
	 * No access in flight; past whatever a predecessor left, so that an
	 * owner that gave up on its last access does not take ours for it.
	 */
	shm->access_seq[id] = (READ_ONCE(shm->hdr->node[id].access_seq) | 1) + 1;
	WRITE_ONCE(shm->hdr->node[id].access_seq, shm->access_seq[id]);
	WRITE_ONCE(shm->hdr->node[id].root, 0);
	WRITE_ONCE(shm->hdr->node[id].refused, 0);
	memset(acl(shm, id), 0, AMDGPU_UALINK_VPOD_SHM_ACL_PAGES * PAGE_SIZE);
	bitmap_zero(shm->acl_used[id], VPOD_SHM_ACL_SLOTS);
	/* the empty table before the boot count that says it is a new life */
	smp_wmb();
	WRITE_ONCE(shm->hdr->node[id].boots, shm->hdr->node[id].boots + 1);
}

/**
 * amdgpu_ualink_vpod_shm_boots - how often an accelerator was brought up
 * @shm: the region
 * @id: the accelerator
 *
 * Returns: its boot counter.
 */
u32 amdgpu_ualink_vpod_shm_boots(struct amdgpu_ualink_vpod_shm *shm, u16 id)
{
	return READ_ONCE(shm->hdr->node[id].boots);
}

/**
 * amdgpu_ualink_vpod_shm_alloc_table - a zeroed page-table page
 * @shm: the region
 * @id: the accelerator whose pool, hosted here
 * @root: it is the root table, which the header then names
 * @cpu: returns its mapping
 * @addr: returns its region offset, as directory entries hold it
 *
 * Returns: 0, or -ENOMEM when the pool is used up.
 */
int amdgpu_ualink_vpod_shm_alloc_table(struct amdgpu_ualink_vpod_shm *shm,
				       u16 id, bool root, u64 **cpu, u64 *addr)
{
	unsigned long *used = shm->pt_used[id];
	unsigned int i;

	spin_lock(&shm->lock);
	i = find_first_zero_bit(used, AMDGPU_UALINK_VPOD_SHM_PT_PAGES);
	if (i < AMDGPU_UALINK_VPOD_SHM_PT_PAGES)
		__set_bit(i, used);
	spin_unlock(&shm->lock);
	if (i >= AMDGPU_UALINK_VPOD_SHM_PT_PAGES)
		return -ENOMEM;
	*addr = pt_off(shm, id) + i * PAGE_SIZE;
	*cpu = shm->base + *addr;
	memset(*cpu, 0, PAGE_SIZE);
	if (root)	/* the zeroed table before its name */
		smp_store_release(&shm->hdr->node[id].root, *addr);
	return 0;
}

/**
 * amdgpu_ualink_vpod_shm_free_table - give a page-table page back
 * @shm: the region
 * @id: the accelerator whose pool
 * @addr: the table's region offset
 */
void amdgpu_ualink_vpod_shm_free_table(struct amdgpu_ualink_vpod_shm *shm,
				       u16 id, u64 addr)
{
	if (READ_ONCE(shm->hdr->node[id].root) == addr)
		WRITE_ONCE(shm->hdr->node[id].root, 0);
	spin_lock(&shm->lock);
	__clear_bit((addr - pt_off(shm, id)) / PAGE_SIZE, shm->pt_used[id]);
	spin_unlock(&shm->lock);
}

/**
 * amdgpu_ualink_vpod_shm_table - a table a directory entry points to
 * @shm: the region
 * @id: the accelerator whose tables are walked
 * @addr: the address in the entry
 *
 * What the entry holds was written by another kernel, which may be
 * starting over: only a page of @id's pool is followed.
 *
 * Returns: the table, or NULL when @addr is not a page of the pool.
 */
const u64 *amdgpu_ualink_vpod_shm_table(struct amdgpu_ualink_vpod_shm *shm,
					u16 id, u64 addr)
{
	u64 first = pt_off(shm, id);

	if (addr < first || addr - first >=
	    AMDGPU_UALINK_VPOD_SHM_PT_PAGES * PAGE_SIZE || !PAGE_ALIGNED(addr))
		return NULL;
	return shm->base + addr;
}

/**
 * amdgpu_ualink_vpod_shm_root - where a walk of an accelerator's tables starts
 * @shm: the region
 * @id: the accelerator
 *
 * Returns: its root table, or NULL while it has none.
 */
const u64 *amdgpu_ualink_vpod_shm_root(struct amdgpu_ualink_vpod_shm *shm,
				       u16 id)
{
	/* pairs with the release in amdgpu_ualink_vpod_shm_alloc_table() */
	u64 root = smp_load_acquire(&shm->hdr->node[id].root);

	return amdgpu_ualink_vpod_shm_table(shm, id, root);
}

/*
 * Make a slot's count odd for a rewrite, and return it. The count is in
 * the region, where any kernel can write: one left odd by another would
 * make ours even while we rewrite, and then odd for good, the slot never
 * read again. Odd from whatever is there, then one more, is right either
 * way.
 */
static u32 acl_seq_odd(struct vpod_shm_acl_slot *slot)
{
	u32 seq = READ_ONCE(slot->seq) | 1;

	WRITE_ONCE(slot->seq, seq);
	return seq;
}

/**
 * amdgpu_ualink_vpod_shm_acl_add - publish a range of an owner's window
 * @shm: the region
 * @id: the owner, hosted here; the caller holds its access_lock
 * @first: the range's first page in the window
 * @pages: its number of pages
 * @importer: the first accelerator it lets through
 *
 * Returns: the slot, or -ENOSPC when the owner's table is full.
 */
int amdgpu_ualink_vpod_shm_acl_add(struct amdgpu_ualink_vpod_shm *shm, u16 id,
				   u64 first, u64 pages, u16 importer)
{
	struct vpod_shm_acl_slot *slot;
	unsigned int i;
	u32 seq;

	i = find_first_zero_bit(shm->acl_used[id], VPOD_SHM_ACL_SLOTS);
	if (i >= VPOD_SHM_ACL_SLOTS)
		return -ENOSPC;
	__set_bit(i, shm->acl_used[id]);
	slot = &acl(shm, id)[i];
	seq = acl_seq_odd(slot);
	smp_wmb();	/* odd before the rewrite */
	WRITE_ONCE(slot->first, first);
	WRITE_ONCE(slot->pages, pages);
	memset(slot->allowed, 0, sizeof(slot->allowed));
	WRITE_ONCE(slot->allowed[importer / 64], BIT_ULL(importer % 64));
	smp_wmb();	/* the rewrite before even */
	WRITE_ONCE(slot->seq, seq + 1);
	return i;
}

/**
 * amdgpu_ualink_vpod_shm_acl_set - let an accelerator in or out of a range
 * @shm: the region
 * @id: the owner, hosted here; the caller holds its access_lock
 * @slot: the range's slot, from amdgpu_ualink_vpod_shm_acl_add()
 * @importer: the accelerator let in or out
 * @allowed: the owner's own record of who may reach the range, with
 *	     @importer in or out already
 *
 * The word of the slot that holds @importer's bit is written whole from
 * @allowed, never read back from the region: a bit another kernel wrote
 * there does not survive it.
 */
void amdgpu_ualink_vpod_shm_acl_set(struct amdgpu_ualink_vpod_shm *shm, u16 id,
				    unsigned int slot, u16 importer,
				    const unsigned long *allowed)
{
	unsigned int first = round_down(importer, 64);
	/* in halves: bitmap_read() reads at most a long */
	u64 word = bitmap_read(allowed, first, 32) |
		   (u64)bitmap_read(allowed, first + 32, 32) << 32;

	WRITE_ONCE(acl(shm, id)[slot].allowed[first / 64], word);
}

/**
 * amdgpu_ualink_vpod_shm_acl_del - withdraw a range nobody may reach any more
 * @shm: the region
 * @id: the owner, hosted here; the caller holds its access_lock
 * @slot: the range's slot, free again once this returns
 */
void amdgpu_ualink_vpod_shm_acl_del(struct amdgpu_ualink_vpod_shm *shm, u16 id,
				    unsigned int slot)
{
	struct vpod_shm_acl_slot *s = &acl(shm, id)[slot];
	u32 seq = acl_seq_odd(s);

	smp_wmb();	/* odd before the range goes */
	WRITE_ONCE(s->pages, 0);
	smp_wmb();	/* gone before even */
	WRITE_ONCE(s->seq, seq + 1);
	__clear_bit(slot, shm->acl_used[id]);
}

/**
 * amdgpu_ualink_vpod_shm_refused - count a refusal at an owner's port
 * @shm: the region
 * @id: the owner, hosted by another kernel
 */
void amdgpu_ualink_vpod_shm_refused(struct amdgpu_ualink_vpod_shm *shm, u16 id)
{
	/* a locked add on memory every guest maps: no count is lost */
	atomic_inc((atomic_t *)&shm->hdr->node[id].refused);
}

/**
 * amdgpu_ualink_vpod_shm_refusals - accesses an owner's table refused
 * @shm: the region
 * @id: the owner, hosted here
 *
 * Returns: how many accesses from other kernels @id's access table refused
 * since it was brought up; only a count, whoever wrote it.
 */
u32 amdgpu_ualink_vpod_shm_refusals(struct amdgpu_ualink_vpod_shm *shm, u16 id)
{
	return READ_ONCE(shm->hdr->node[id].refused);
}

/**
 * amdgpu_ualink_vpod_shm_access_begin - an access to another kernel's memory
 * @shm: the region
 * @id: the accelerator accessing, hosted here; the caller serialises its
 *	accesses to other kernels' memory
 * @owner: the accelerator whose memory, hosted by another kernel
 *
 * Announces the access in @id's slot of the header, before the caller
 * reads @owner's access table: an owner that revokes @id's grant after
 * that read sees the access in flight
 * (amdgpu_ualink_vpod_shm_access_in_flight()).
 * amdgpu_ualink_vpod_shm_access_end() ends it.
 */
void amdgpu_ualink_vpod_shm_access_begin(struct amdgpu_ualink_vpod_shm *shm,
					 u16 id, u16 owner)
{
	u32 seq = shm->access_seq[id] | 1;

	/* the previous access's even count before the new owner */
	smp_wmb();
	WRITE_ONCE(shm->hdr->node[id].access_owner, owner);
	/* the owner before the odd count that makes it valid */
	smp_wmb();
	WRITE_ONCE(shm->hdr->node[id].access_seq, seq);
	/*
	 * The count before the owner's access table is read; pairs with the
	 * full barrier in amdgpu_ualink_vpod_shm_access_in_flight() between the
	 * owner's table write and its read of the count.
	 */
	smp_mb();
	shm->access_seq[id] = seq;
}

/**
 * amdgpu_ualink_vpod_shm_access_end - the access has ended
 * @shm: the region
 * @id: the accelerator of amdgpu_ualink_vpod_shm_access_begin()
 */
void amdgpu_ualink_vpod_shm_access_end(struct amdgpu_ualink_vpod_shm *shm,
				       u16 id)
{
	u32 seq = shm->access_seq[id] + 1;

	/* the access's reads and writes before the count that ends it */
	smp_store_release(&shm->hdr->node[id].access_seq, seq);
	shm->access_seq[id] = seq;
}

/**
 * amdgpu_ualink_vpod_shm_access_in_flight - is an access in flight?
 * @shm: the region
 * @id: the requester, hosted by another kernel
 * @owner: the accelerator whose memory, hosted here; the caller has just
 *	   taken @id out of @owner's access table
 * @seq: returns the count that announces the access
 *
 * Another kernel wrote @id's slot: its values are only compared.
 *
 * Returns: whether an access of @id to @owner's memory is in flight,
 * which amdgpu_ualink_vpod_shm_access_wait() then waits for.
 */
bool amdgpu_ualink_vpod_shm_access_in_flight(struct amdgpu_ualink_vpod_shm *shm,
					     u16 id, u16 owner, u32 *seq)
{
	/* the caller's table write before the slot is read; see _begin() */
	smp_mb();
	*seq = READ_ONCE(shm->hdr->node[id].access_seq);
	if (!(*seq & 1))
		return false;
	smp_rmb();	/* the count before the owner it makes valid */
	return READ_ONCE(shm->hdr->node[id].access_owner) == owner;
}

/**
 * amdgpu_ualink_vpod_shm_access_wait - wait for an access in flight
 * @shm: the region
 * @id: the requester of amdgpu_ualink_vpod_shm_access_in_flight()
 * @owner: the owner
 * @seq: the count it returned
 * @timeout_ms: how long to wait at most
 *
 * A count that does not change within @timeout_ms is given up on, and the
 * next wait for the same count of @id at @owner gives up at once.
 *
 * Returns: 0 once the access has ended, -ETIMEDOUT when it did not end in
 * time.
 */
int amdgpu_ualink_vpod_shm_access_wait(struct amdgpu_ualink_vpod_shm *shm,
				       u16 id, u16 owner, u32 seq,
				       unsigned int timeout_ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(timeout_ms);

	if (READ_ONCE(shm->stuck[owner][id]) == (BIT_ULL(32) | seq))
		return -ETIMEDOUT;
	/* pairs with the release in _end(): the access's copy is done */
	while (smp_load_acquire(&shm->hdr->node[id].access_seq) == seq) {
		if (time_after(jiffies, end)) {
			WRITE_ONCE(shm->stuck[owner][id], BIT_ULL(32) | seq);
			return -ETIMEDOUT;
		}
		usleep_range(100, 200);
	}
	return 0;
}

/**
 * amdgpu_ualink_vpod_shm_acl_allows - the owner's check of a requester
 * @shm: the region
 * @id: the owner, hosted by any kernel
 * @page: the page of its window accessed
 * @requester: the accelerator accessing it
 *
 * What the table holds was written by another kernel and is only
 * compared: a slot being rewritten is read again, a few times at most.
 *
 * Returns: whether a range of @id's table holding @page lets @requester in.
 */
bool amdgpu_ualink_vpod_shm_acl_allows(struct amdgpu_ualink_vpod_shm *shm,
				       u16 id, u64 page, u16 requester)
{
	const struct vpod_shm_acl_slot *slot = acl(shm, id);
	unsigned int i, tries;

	for (i = 0; i < VPOD_SHM_ACL_SLOTS; i++, slot++) {
		for (tries = 0; tries < 4; tries++) {
			/* pairs with the writers' smp_wmb() before even */
			u32 seq = smp_load_acquire(&slot->seq);
			u64 first, pages, word;

			if (seq & 1) {
				cpu_relax();
				continue;
			}
			first = READ_ONCE(slot->first);
			pages = READ_ONCE(slot->pages);
			word = READ_ONCE(slot->allowed[requester / 64]);
			smp_rmb();	/* the fields before the count again */
			if (READ_ONCE(slot->seq) != seq)
				continue;
			if (page - first >= pages)
				break;	/* not this slot's range */
			return word & BIT_ULL(requester % 64);
		}
	}
	return false;
}

static int poll_thread(void *data)
{
	struct amdgpu_ualink_vpod_shm *shm = data;

	while (!kthread_should_stop()) {
		shm->poll();
		usleep_range(200, 400);
	}
	return 0;
}

/**
 * amdgpu_ualink_vpod_shm_poll_start - start polling for other kernels' messages
 * @shm: the region
 * @poll: called every 200 to 400 µs, in process context
 *
 * Returns: 0 or a negative errno.
 */
int amdgpu_ualink_vpod_shm_poll_start(struct amdgpu_ualink_vpod_shm *shm,
				      void (*poll)(void))
{
	struct task_struct *t;

	shm->poll = poll;
	t = kthread_run(poll_thread, shm, "ualink-vpod-poll");
	if (IS_ERR(t))
		return PTR_ERR(t);
	shm->poller = t;
	return 0;
}

/**
 * amdgpu_ualink_vpod_shm_poll_stop - stop polling
 * @shm: the region
 */
void amdgpu_ualink_vpod_shm_poll_stop(struct amdgpu_ualink_vpod_shm *shm)
{
	if (shm->poller)
		kthread_stop(shm->poller);
	shm->poller = NULL;
}
