/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * An in-memory pod for the mailbox tests: nodes whose rings are kernel
 * memory and whose doorbells call the receiving node's mailbox directly.
 */
#ifndef __AMDGPU_UALINK_TEST_POD_H__
#define __AMDGPU_UALINK_TEST_POD_H__

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/dma-fence.h>
#include <linux/maple_tree.h>
#include <linux/sched.h>
#include <linux/wait.h>

#include "../amdgpu_ualink_dev.h"
#include "../amdgpu_ualink_mbox.h"
#include "../amdgpu_ualink_npa.h"

/* a whole pod; DRM devices are not involved */
#define TPOD_MAX_NODES	AMDGPU_UALINK_MAX_ACCELS
#define TPOD_LOG	256
#define TPOD_ALLOCS	4

struct tpod;

/* one sender's ring at one receiver */
struct tpod_ring {
	u32 head;
	u32 tail;
	u32 staged;	/* raw senders: head once published */
	u8 slot[AMDGPU_UALINK_RING_ENTRIES][AMDGPU_UALINK_MSG_SIZE];
};

enum tpod_kind {
	TPOD_MBOX,	/* a node with a mailbox */
	TPOD_RAW,	/* no mailbox: the test reads and writes its rings */
	TPOD_SINK,	/* no mailbox: consumes whatever it is sent */
	TPOD_DEV,	/* a whole device: mailbox, window, page tables */
};

/*
 * A callback that stops, once, until the test lets it go: to force an
 * interleaving of the mailbox's worker and another thread.
 */
struct tpod_hold {
	bool armed;
	struct completion entered;
	struct completion go;
};

/* A buffer of a TPOD_DEV node: "device memory" at a made-up address. */
struct tobj {
	u64 addr;
	u64 size;
	int pins;
	/* taken by the core's get: for a pin, and for imports of our own */
	int refs;
	int pin_error;	/* what pinning it returns, when not 0 */
	bool pin_intr;	/* the last pin could be interrupted by a signal */
	int pin_calls;	/* pins asked for, failed ones too */
	bool dead;	/* an import's buffer, revoked */
	/* an import's buffer: GPU work on it, from tpod_job(), or NULL */
	struct dma_fence *job;
	void *slot;	/* the core's export */
};

struct tpod_node {
	struct tpod *pod;
	u16 id;
	enum tpod_kind kind;
	struct amdgpu_ualink_mbox *mbox;
	/* sender ID -> struct tpod_ring, allocated by the sender's first post */
	struct xarray rings;
	/* doorbells held while paused, one bit per sender */
	unsigned long *held_bells;
	bool paused;

	/* what the handlers saw */
	atomic_t requests[AMDGPU_UALINK_MSG_TYPES];
	atomic_t events[3];
	/* calls into its transport (post, publish, peer_tail, rx_*) */
	atomic_t hw_calls;
	/* answer NPA_REQ with NPA_RSP instead of the default NPA_FAIL */
	bool grant;
	/* transaction numbers of the NPA_REQs handled, in order */
	u32 log[TPOD_LOG];
	atomic_t logged;

	/* TPOD_DEV */
	struct amdgpu_ualink_dev *dev;
	struct amdgpu_ualink_pt pt;
	/* nodes of the same virtual pod may import from each other */
	u8 vpod;
	atomic_t shootdowns;
	/* shootdowns return -ETIMEDOUT */
	bool shootdown_fails;
	/* each shootdown takes this long, as an importer's acknowledgment */
	unsigned int shootdown_us;
	struct tpod_hold shootdown_hold;
	struct tpod_hold unpin_hold;
	/* stops a deny before the fabric shuts the importer out */
	struct tpod_hold deny_hold;
	atomic_t revokes;
	/* unpins with a range still mapped, pins and puts without a reference */
	atomic_t bad_unpins;
	/*
	 * protects the refs and pins of this node's buffers, which the core
	 * takes and drops from several threads at once, as a driver's kref
	 * and reservation would
	 */
	spinlock_t obj_lock;
	/* buffers pinned, under @obj_lock */
	unsigned int pinned;
	/*
	 * the fabric's access sets of our ranges, as allow and deny set them:
	 * window page range -> unsigned long bitmap of accelerator IDs
	 */
	struct maple_tree access;
	/* serialises allow, deny and tpod_fabric()'s look at @access */
	struct mutex access_lock;
	atomic_t allows;
	atomic_t denies;
	/* accesses to our window that tpod_fabric() refused */
	atomic_t faults;
	/* the shootdowns we asked for, in order: importer and range */
	struct tpod_shot {
		u16 importer;
		u64 npa;
		u64 size;
	} shot[TPOD_LOG];
	atomic_t shots;
};

struct tpod {
	struct kunit *test;
	unsigned int n;
	/* protects alive and every node's paused and held_bells */
	spinlock_t lock;
	bool alive;
	/* woken whenever a doorbell rings */
	wait_queue_head_t bell;
	/* freed after the mailboxes: requests may still be linked in them */
	void *allocs[TPOD_ALLOCS];
	struct tpod_node *node;
	/* accelerator ID -> node */
	struct tpod_node *by_id[TPOD_MAX_NODES];
};

/* false: the pod-scale cases run on a share of the pod (module parameter) */
extern bool tpod_full_scale;

struct tpod *tpod_create(struct kunit *test, unsigned int n, const u16 *ids,
			 const enum tpod_kind *kinds);
struct tpod_node *tpod_node(struct tpod *pod, u16 id);
struct amdgpu_ualink_req *tpod_reqs(struct tpod *pod, unsigned int n);
struct tpod_ring *tpod_ring(struct tpod *pod, u16 receiver, u16 sender);
void tpod_pause(struct tpod *pod, u16 id, bool paused);
void tpod_inject(struct tpod *pod, u16 from, u16 to, const void *entry);
void tpod_publish(struct tpod *pod, u16 from, u16 to);
bool tpod_wait_consumed(struct tpod *pod, u16 from, u16 to);
int tpod_read(struct tpod *pod, u16 from, u16 to, u32 *next,
	      struct amdgpu_ualink_msg *msg);
void tpod_send(struct tpod *pod, u16 from, u16 to,
	       const struct amdgpu_ualink_msg *msg);
struct amdgpu_ualink_msg tpod_npa_req(u16 from, u16 exporter, u64 tag);
int tpod_events(struct tpod *pod, u16 id, enum amdgpu_ualink_peer_event ev,
		int n);
void tpod_req_init(struct amdgpu_ualink_req *req, u16 from, u16 exporter,
		   u64 tag);
/* What a drm_printer printed, up to a page. */
struct tpod_text {
	char *buf;
	size_t len;
};

struct drm_printer;
struct va_format;
void tpod_text_printfn(struct drm_printer *p, struct va_format *vaf);
/* GPU work that lasts until the test signals it (or the test ends) */
struct dma_fence *tpod_job(struct tpod *pod);
struct tobj *tpod_obj(struct tpod *pod, u64 addr, u64 size);
struct amdgpu_ualink_mbox *tpod_mbox(struct tpod *pod, u16 id);
struct amdgpu_ualink_dev *tpod_dev(struct tpod *pod, u16 id);
struct amdgpu_ualink_mbox_stats *tpod_stats(struct tpod *pod, u16 id, int peer);
int tpod_handled(struct tpod *pod, u16 id);
unsigned int tpod_grants(struct tpod *pod, u16 id);
void tpod_export(struct tpod *pod, u16 id, struct tobj *o, u64 handle[2]);
void tpod_hello_ack(struct tpod *pod, u16 from, u16 to, u32 txn, u64 gen);
bool tpod_wait_for(bool (*cond)(void *), void *arg, unsigned int ms);
void tpod_hold_arm(struct tpod_hold *hold);
bool tpod_hold_reached(struct tpod_hold *hold);
void tpod_hold_release(struct tpod_hold *hold);
bool tpod_wait_blocked(struct task_struct *task, struct completion *done);
bool tpod_wait_waiting(struct task_struct *task, struct completion *done);
int tpod_fabric(struct tpod *pod, u16 requester, u64 npa, u64 *addr);

#endif /* __AMDGPU_UALINK_TEST_POD_H__ */
