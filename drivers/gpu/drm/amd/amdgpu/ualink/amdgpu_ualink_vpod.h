/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The emulated UALink pod (vpod): accelerators, the fabric between them
 * and the DRM devices of some of them. See amdgpu_ualink_vpod_fabric.c.
 */
#ifndef __AMDGPU_UALINK_VPOD_INTERNAL_H__
#define __AMDGPU_UALINK_VPOD_INTERNAL_H__

#include <linux/maple_tree.h>
#include <linux/mutex.h>
#include <linux/seqlock.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/xarray.h>

#include "amdgpu_ualink_dev.h"
#include "amdgpu_ualink_pt.h"

struct amdgpu_ualink_vpod_drm;
struct amdgpu_ualink_vpod_shm;
struct dentry;

/* DRM devices at most: DRM has 64 render minors before extended ones */
#define AMDGPU_UALINK_VPOD_MAX_DRM	16
/* what a fabric-only accelerator exports at load */
#define AMDGPU_UALINK_VPOD_HEAP_SIZE	SZ_64K
/* entries of an accelerator's emulated TLB, direct-mapped by NPA page */
#define AMDGPU_UALINK_VPOD_TLB_ENTRIES	64
/*
 * how long an accelerator's start waits, at most, for each access of
 * another kernel's accelerator to its previous life's memory in flight
 */
#define AMDGPU_UALINK_VPOD_START_WAIT_MS	10000
/* the most bytes one raw NPA read from debugfs reads */
#define AMDGPU_UALINK_VPOD_PEEK_MAX	SZ_4K

/**
 * enum amdgpu_ualink_vpod_state - where an accelerator is
 * @AMDGPU_UALINK_VPOD_ACTIVE: taking part
 * @AMDGPU_UALINK_VPOD_RESETTING: in a GPU reset; grants nothing
 * @AMDGPU_UALINK_VPOD_OFFLINE: out of the pod: the fabric carries nothing
 *	to or from it (in a pod across kernels, the other kernels' accesses
 *	to its memory still go through: they do not see its state)
 */
enum amdgpu_ualink_vpod_state {
	AMDGPU_UALINK_VPOD_ACTIVE,
	AMDGPU_UALINK_VPOD_RESETTING,
	AMDGPU_UALINK_VPOD_OFFLINE,
};

/**
 * struct amdgpu_ualink_vpod_tlb_entry - one cached translation
 */
struct amdgpu_ualink_vpod_tlb_entry {
	/** @npa: the NPA page it translates, 0 when empty */
	u64 npa;
	/** @addr: the page's address in the owner's memory */
	u64 addr;
};

/**
 * struct amdgpu_ualink_vpod_ring - one sender's message ring at a receiver
 *
 * Stands for the 4 KiB of the receiver's NPA window reserved for the
 * sender (amdgpu_ualink_npa_ring()) and the two index registers beside it.
 */
struct amdgpu_ualink_vpod_ring {
	/** @head: producer index, written by the sender */
	u32 head;
	/** @tail: consumer index, written by the receiver */
	u32 tail;
	/**
	 * @waiting: set by the sender when it found the ring full; the
	 * receiver rings the sender's doorbell for a new @tail only then (a
	 * sender in another kernel is rung by that kernel's poller)
	 */
	u32 waiting;
	/** @slot: the entries */
	u8 slot[AMDGPU_UALINK_RING_ENTRIES][AMDGPU_UALINK_MSG_SIZE];
};

/**
 * struct amdgpu_ualink_vpod_hold - a debugfs switch that makes an operation wait
 *
 * For tests: an operation that meets the switch on waits, interruptibly,
 * until it is turned off (amdgpu_ualink_vpod_hold_wait()).
 */
struct amdgpu_ualink_vpod_hold {
	/**
	 * @on: written by debugfs, read without a lock; turned off with a
	 * wake-up of @wq
	 */
	u32 on;
	/** @waiters: operations waiting now */
	atomic_t waiters;
	/** @wq: where they wait */
	wait_queue_head_t wq;
};

/**
 * struct amdgpu_ualink_vpod_node - one emulated accelerator
 */
struct amdgpu_ualink_vpod_node {
	/** @id: accelerator ID */
	u16 id;
	/**
	 * @vpod: the virtual pod it belongs to; written under the fabric's
	 * lock and its seqcount, read without a lock under the seqcount by
	 * the membership check every import makes and by INFO
	 */
	u32 vpod;
	/**
	 * @vpod_size: accelerators in @vpod, written and read as @vpod: kept
	 * up to date by a move, so that INFO costs the same in a pod of 1,024
	 * as in a pod of 2
	 */
	u32 vpod_size;
	/**
	 * @state: &enum amdgpu_ualink_vpod_state, written under
	 * @control_lock and the fabric's lock, read without a lock; a change
	 * to offline waits for every doorbell that may have read the old
	 * state (set_state())
	 */
	int state;
	/** @udev: the core's state of the accelerator */
	struct amdgpu_ualink_dev udev;
	/** @pt: its NPA page tables, in kernel pages */
	struct amdgpu_ualink_pt pt;
	/** @root: the root table, where the emulated walker starts */
	u64 *root;
	/**
	 * @walk_lock: held by any accelerator's walk of @pt, and taken
	 * before a table of it is freed, so that a walker that missed a
	 * shootdown (it held no grant) never reads a freed table; nests
	 * inside the walker's @tlb_lock
	 */
	spinlock_t walk_lock;
	/** @vram: its device memory */
	void *vram;
	/** @vram_size: bytes of @vram */
	u64 vram_size;
	/**
	 * @vram_phys: physical address of @vram when it lies in the region
	 * kernels share, else 0 (vmalloc memory)
	 */
	phys_addr_t vram_phys;
	/**
	 * @remote: hosted by another kernel of a pod that spans kernels:
	 * only its ID, pod and memory (in the shared region) are known here
	 */
	bool remote;
	/** @heap: a fabric-only accelerator, exporting its heap */
	bool heap;
	/**
	 * @tx_base: in a pod that spans kernels, by receiver, the producer
	 * index our ring there had when we came up: the mailbox counts
	 * from 0, the ring goes on from where a predecessor left it
	 */
	u32 *tx_base;
	/** @rx_base: by sender, the same for its ring here */
	u32 *rx_base;
	/**
	 * @tx_own: in a pod that spans kernels, by receiver, the producer
	 * index we last wrote in our ring there; @rx_own, by sender, the
	 * consumer index we last wrote in its ring here. The poller writes
	 * them again over whatever another kernel wrote there
	 * (heal() in amdgpu_ualink_vpod_fabric.c)
	 */
	u32 *tx_own;
	/** @rx_own: see @tx_own */
	u32 *rx_own;
	/** @rings: sender ID -> &struct amdgpu_ualink_vpod_ring */
	struct xarray rings;
	/** @tlb_lock: protects @tlb; held across a walk */
	spinlock_t tlb_lock;
	/** @tlb: cached translations of other accelerators' NPAs */
	struct amdgpu_ualink_vpod_tlb_entry tlb[AMDGPU_UALINK_VPOD_TLB_ENTRIES];
	/** @shootdowns: shootdowns received */
	atomic64_t shootdowns;
	/** @walks: page-table walks (TLB misses) */
	atomic64_t walks;
	/**
	 * @access: the fabric's per-requester check of accesses that arrive
	 * at us: window page range -> &struct amdgpu_ualink_vpod_access,
	 * changed under @access_lock, read and freed under @walk_lock
	 */
	struct maple_tree access;
	/** @access_lock: serialises changes of @access */
	struct mutex access_lock;
	/**
	 * @refuse_access: the next this many programmings of @access fail
	 * (-EIO; the importer gets EREMOTEIO), as an IP that rejects an
	 * access-table update would;
	 * debugfs ``refuse_access``, read and decremented under @access_lock
	 */
	u32 refuse_access;
	/**
	 * @remote_lock: in a pod that spans kernels, held across each of
	 * our accesses to another kernel's memory: one at a time, as the
	 * region's slot that announces it holds one
	 * (amdgpu_ualink_vpod_shm_access_begin())
	 */
	struct mutex remote_lock;
	/**
	 * @access_hold: debugfs ``access_hold``: an access of ours to
	 * another kernel's memory that passed the owner's check and walked
	 * its tables waits before it copies, as one in flight would
	 */
	struct amdgpu_ualink_vpod_hold access_hold;
	/**
	 * @shootdown_waits: our shootdowns of another kernel's accelerator
	 * that found one of its accesses to our memory in flight and waited
	 * for its end (counted when the wait starts)
	 */
	atomic64_t shootdown_waits;
	/** @shootdown_timeouts: those of them that gave up waiting */
	atomic64_t shootdown_timeouts;
	/**
	 * @start_waits: in a pod that spans kernels, accesses of another
	 * kernel's accelerator to our previous life's memory that our start
	 * found in flight and waited for before zeroing it
	 */
	atomic64_t start_waits;
	/** @start_timeouts: those of them that did not end in time */
	atomic64_t start_timeouts;
	/** @faults: accesses to our window the fabric refused */
	atomic64_t faults;
	/**
	 * @bell_calls: doorbells this accelerator rang from a calling
	 * thread (not a workqueue worker), for ``make bench``
	 */
	atomic64_t bell_calls;
	/**
	 * @bell_ns: the time those took: the fabric waking the receiver's
	 * mailbox worker, which on hardware is one MMIO write
	 */
	atomic64_t bell_ns;
	/** @drm: its DRM device, or NULL for a fabric-only accelerator */
	struct amdgpu_ualink_vpod_drm *drm;
	/** @heap_slot: a fabric-only accelerator's export of its memory */
	void *heap_slot;
	/** @heap_handle: its handle */
	u64 heap_handle[2];
	/** @heap_pins: pins of it, under &amdgpu_ualink_dev.lock of @udev */
	int heap_pins;
	/**
	 * @doorbell_lock: held across a doorbell rung at this accelerator,
	 * and to set @stopped, so that no doorbell reaches a mailbox being
	 * destroyed; one per accelerator, so that senders to different
	 * accelerators never wait for each other
	 */
	spinlock_t doorbell_lock;
	/** @stopped: its mailbox is going, under @doorbell_lock */
	bool stopped;
	/** @debugfs: the node's debugfs directory */
	struct dentry *debugfs;
	/** @control_lock: serialises reset, offline, online and unplug */
	struct mutex control_lock;
	/**
	 * @unplugged: its DRM device was unplugged (debugfs ``control``
	 * ``unplug``), for good: no reset or online any more; under
	 * @control_lock
	 */
	bool unplugged;
	/**
	 * @fill: debugfs ``window_fill``: ranges of @udev's window taken so
	 * that nothing else fits (&struct amdgpu_ualink_vpod_fill), under
	 * @fill_lock
	 */
	struct list_head fill;
	/** @fill_lock: protects @fill */
	struct mutex fill_lock;
	/**
	 * @pin_hold: debugfs ``pin_hold``: a pin for an export waits, as one
	 * waiting for an eviction would
	 */
	struct amdgpu_ualink_vpod_hold pin_hold;
};

/**
 * amdgpu_ualink_vpod_state - where an accelerator is
 * @node: the accelerator
 *
 * Inline: every ioctl asks it.
 *
 * Returns: its &enum amdgpu_ualink_vpod_state.
 */
static inline int amdgpu_ualink_vpod_state(const struct amdgpu_ualink_vpod_node *node)
{
	return READ_ONCE(node->state);
}

/**
 * struct amdgpu_ualink_vpod - the whole emulated pod
 */
struct amdgpu_ualink_vpod {
	/**
	 * @lock: serialises changes of every node's vpod, vpod_size and
	 * state, and reads that need them together (the active set)
	 */
	spinlock_t lock;
	/**
	 * @seq: bumped around a move (every vpod and vpod_size it changes),
	 * under @lock, so that readers without the lock see them as of one
	 * instant
	 */
	seqcount_spinlock_t seq;
	/** @num_nodes: accelerators, IDs 0 to @num_nodes - 1 */
	unsigned int num_nodes;
	/**
	 * @num_drm: those with a DRM device in this kernel, IDs @first_drm
	 * to @first_drm + @num_drm - 1
	 */
	unsigned int num_drm;
	/** @first_drm: ID of the first of them */
	unsigned int first_drm;
	/** @nodes: by ID */
	struct amdgpu_ualink_vpod_node **nodes;
	/**
	 * @shm: the region the kernels of a pod that spans kernels share,
	 * or NULL when the whole pod is in this kernel
	 */
	struct amdgpu_ualink_vpod_shm *shm;
	/**
	 * @seen: with @shm, by receiver here and sender elsewhere, the
	 * producer index the poller last rang a doorbell for; only the
	 * poller uses it
	 */
	u32 *seen;
	/**
	 * @seen_tail: with @shm, by sender here and receiver elsewhere, the
	 * consumer index the poller last rang a waiting sender for; only
	 * the poller uses it
	 */
	u32 *seen_tail;
	/**
	 * @suspect: with @shm, by receiver here and sender elsewhere, two
	 * per pair (its ring's consumer index here, ours' producer index
	 * there): the difference from what we wrote the poller saw last,
	 * see heal() in amdgpu_ualink_vpod_fabric.c; only the poller uses it
	 */
	u64 *suspect;
	/**
	 * @healed: with @shm, ring indices of ours the poller found changed
	 * by another kernel and wrote again
	 */
	atomic_t healed;
	/** @debugfs: the pod's debugfs directory */
	struct dentry *debugfs;
};

extern struct amdgpu_ualink_vpod *amdgpu_ualink_vpod;

/* fabric: amdgpu_ualink_vpod_fabric.c */
int amdgpu_ualink_vpod_fabric_init(unsigned int num_nodes,
				   unsigned int first_drm, unsigned int num_drm,
				   u64 vram_size, unsigned int vpod_size,
				   const struct amdgpu_ualink_dev_ops *drm_ops,
				   struct amdgpu_ualink_vpod_shm *shm);
void amdgpu_ualink_vpod_fabric_fini(void);
struct amdgpu_ualink_vpod_node *amdgpu_ualink_vpod_node(u16 id);
bool amdgpu_ualink_vpod_member(void *priv, u16 peer);
void amdgpu_ualink_vpod_active(struct amdgpu_ualink_vpod_node *node,
			       unsigned long *mask);
int amdgpu_ualink_vpod_hold_wait(struct amdgpu_ualink_vpod_hold *hold);
int amdgpu_ualink_vpod_shootdown(struct amdgpu_ualink_vpod_node *node,
				 u16 importer, u64 npa, u64 size);
int amdgpu_ualink_vpod_allow(struct amdgpu_ualink_vpod_node *node,
			     u16 importer, u64 npa, u64 size);
void amdgpu_ualink_vpod_deny(struct amdgpu_ualink_vpod_node *node,
			     u16 importer, u64 npa, u64 size);
void amdgpu_ualink_vpod_set_vpod(struct amdgpu_ualink_vpod_node *node,
				 u32 vpod);
void amdgpu_ualink_vpod_tlb_flush(struct amdgpu_ualink_vpod_node *node,
				  u64 npa, u64 size);
unsigned int amdgpu_ualink_vpod_tlb_entries(struct amdgpu_ualink_vpod_node *node);
u64 amdgpu_ualink_vpod_faults(struct amdgpu_ualink_vpod_node *node);
int amdgpu_ualink_vpod_fabric_access(struct amdgpu_ualink_vpod_node *node,
				     u64 npa, void *buf, size_t size,
				     bool write);
/* what amdgpu_ualink_vpod_reset() does: all of a reset, or one end of it */
enum amdgpu_ualink_vpod_reset_phase {
	AMDGPU_UALINK_VPOD_RESET_WHOLE,
	AMDGPU_UALINK_VPOD_RESET_BEGIN,
	AMDGPU_UALINK_VPOD_RESET_END,
};

int amdgpu_ualink_vpod_reset(struct amdgpu_ualink_vpod_node *node,
			     enum amdgpu_ualink_vpod_reset_phase phase);
int amdgpu_ualink_vpod_set_offline(struct amdgpu_ualink_vpod_node *node,
				   bool offline);
void amdgpu_ualink_vpod_info(struct amdgpu_ualink_vpod_node *node, u32 *vpod,
			     u32 *size);

/* DRM devices: amdgpu_ualink_vpod_drv.c */
int amdgpu_ualink_vpod_drm_init(struct amdgpu_ualink_vpod_node *node);
void amdgpu_ualink_vpod_drm_fini(struct amdgpu_ualink_vpod_node *node);
int amdgpu_ualink_vpod_drm_unplug(struct amdgpu_ualink_vpod_node *node);
void amdgpu_ualink_vpod_drm_state_changed(struct amdgpu_ualink_vpod_node *node);
const char *amdgpu_ualink_vpod_drm_name(struct amdgpu_ualink_vpod_node *node);
extern const struct amdgpu_ualink_dev_ops amdgpu_ualink_vpod_bo_ops;

/* debugfs: amdgpu_ualink_vpod_debugfs.c */
void amdgpu_ualink_vpod_debugfs_init(void);
void amdgpu_ualink_vpod_window_clear(struct amdgpu_ualink_vpod_node *node);

#endif /* __AMDGPU_UALINK_VPOD_INTERNAL_H__ */
