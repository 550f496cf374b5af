/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What amdgpu_ualink_mbox.c (rings, transport, workers) and
 * amdgpu_ualink_conn.c (connections and requests) above it share. Not for
 * other users of the mailbox.
 */
#ifndef __AMDGPU_UALINK_MBOX_INTERNAL_H__
#define __AMDGPU_UALINK_MBOX_INTERNAL_H__

#include <linux/bitmap.h>
#include <linux/jiffies.h>
#include <linux/mutex.h>
#include <linux/ratelimit.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "amdgpu_ualink_fault.h"
#include "amdgpu_ualink_mbox.h"
#include "amdgpu_ualink_npa.h"

/*
 * Requests of ours in flight to one peer, and answers to one peer's requests
 * remembered for its retransmissions. A retransmitted request is at most
 * IN_FLIGHT - 1 requests older than the newest one its sender sent, so an
 * answer cache twice that size always still holds its answer (HELLOs,
 * rare, take the slack).
 */
#define AMDGPU_UALINK_IN_FLIGHT		16
#define AMDGPU_UALINK_REPLY_CACHE	(2 * AMDGPU_UALINK_IN_FLIGHT)
/* answers allowed to wait for one peer's ring (and held by faults) */
#define AMDGPU_UALINK_TX_QUEUED		256
/* NPA_REQs allowed to wait, unsent, for one peer: -ENOBUFS past it */
#define AMDGPU_UALINK_REQ_QUEUED	4096
/* doorbells handled by one run of the receive work before it yields */
#define AMDGPU_UALINK_RX_BATCH		16

/* the answer to a request from the peer, kept for its retransmissions */
struct amdgpu_ualink_reply {
	u64 handle[2];
	u64 generation;
	u32 txn;
	u8 type;
	u8 rsp_type;
	bool valid;
	u8 wire[AMDGPU_UALINK_MSG_SIZE];
};

/*
 * What one node knows of one other node. Allocated when the peer first
 * talks to us or we to it, freed with the node.
 */
struct amdgpu_ualink_peer {
	struct amdgpu_ualink_mbox *mbox;
	u16 id;

	/* protects every field below */
	struct mutex lock;
	enum amdgpu_ualink_conn_state state;
	/* the peer's generation, valid when generation_known */
	u64 generation;
	bool generation_known;
	/* the connection carried NPA traffic: a HELLO now means a restart */
	bool traffic;
	/* a connection end the export/import layer has yet to hear of, or -1 */
	int pending_event;
	/* requests sent, counted when first sent; and the oldest one's count */
	u32 tx_seq;
	/* messages received from the peer, of any kind: it is alive */
	u32 rx_seq;
	/* the mailbox's clock when the last of them arrived */
	unsigned long heard;
	/* the handshake request, sent by the mailbox itself */
	struct amdgpu_ualink_req hello;
	/* our requests to the peer sent and not ended, in the order first sent */
	struct list_head reqs;
	/* NPA_REVOKE and NPA_RELEASE not sent yet: they go first, in order */
	struct list_head ctl;
	/* owners with NPA_REQs not sent yet (&struct amdgpu_ualink_flow), in turn */
	struct list_head flows;
	/* owner -> its &struct amdgpu_ualink_flow, while it has one */
	struct xarray flow_of;
	/* NPA_REQs not sent yet, at most %AMDGPU_UALINK_REQ_QUEUED */
	unsigned int queued;
	/* the mailbox's clock when the connection was last established */
	unsigned long established;
	/* messages waiting for space in our ring at the peer */
	struct list_head txq;
	/* messages held back by the DELAY and REORDER faults */
	struct list_head held;
	/* allocated messages (answers, held copies) in txq and held */
	unsigned int owned;
	/* our ring at the peer: next index to write, last consumer index */
	u32 tx_head;
	u32 tx_tail;
	/* the peer's ring here: next index to read, last index acknowledged */
	u32 rx_tail;
	u32 rx_acked;
	/* answers to the peer's recent requests, allocated on the first */
	struct amdgpu_ualink_reply *replies;
	unsigned int reply_next;
	struct amdgpu_ualink_mbox_stats stats;
	/*
	 * an established connection ended (logged unless the rate limit
	 * held it back): the next one is logged as the peer coming back
	 */
	bool ended;
};

/*
 * One owner's NPA_REQs waiting for one peer, oldest first; in the peer's
 * round while it has any, freed when it has none.
 */
struct amdgpu_ualink_flow {
	struct list_head turn;
	struct list_head reqs;
	u32 owner;
};

/**
 * struct amdgpu_ualink_link_events - what the transport tells the connections
 *
 * amdgpu_ualink_mbox.c (rings, doorbells, the worker) is the lower layer and
 * amdgpu_ualink_conn.c (connections, requests, the export/import layer's
 * callbacks) the upper one: the connection layer calls the transport's
 * functions, and the transport reaches the connection layer only through
 * these, registered by amdgpu_ualink_link_init(). Every one but @peer_init
 * and @peer_fini runs on the node's worker with the peer locked, and may
 * unlock it for a while (to call the export/import layer) as long as it
 * returns with the peer locked again.
 */
struct amdgpu_ualink_link_events {
	/**
	 * @peer_init: a peer's state was just allocated, not yet visible:
	 * set up the connection's part of it
	 */
	void (*peer_init)(struct amdgpu_ualink_peer *peer);
	/** @peer_fini: the node is being freed; the workers are stopped */
	void (*peer_fini)(struct amdgpu_ualink_peer *peer);
	/**
	 * @visit: the worker looks at the peer, before reading its ring
	 * (which it does not while the mailbox is quiesced)
	 */
	void (*visit)(struct amdgpu_ualink_peer *peer);
	/** @receive: a message from the peer that decoded and is valid */
	void (*receive)(struct amdgpu_ualink_peer *peer,
			const struct amdgpu_ualink_msg *msg);
	/**
	 * @tick: the timer work's look at the peer; @stuck when our ring at
	 * the peer stayed full for a whole timeout. Returns true while it
	 * needs the timer.
	 */
	bool (*tick)(struct amdgpu_ualink_peer *peer, unsigned long now,
		     bool stuck);
	/**
	 * @quiesce: the timer work's look at the peer while the mailbox is
	 * quiesced: end what waits on the transport for it
	 */
	void (*quiesce)(struct amdgpu_ualink_peer *peer);
};

struct amdgpu_ualink_mbox {
	u16 self;
	const struct amdgpu_ualink_mbox_ops *ops;
	void *ops_priv;
	/* the connection layer above the transport */
	const struct amdgpu_ualink_link_events *events;
	const struct amdgpu_ualink_mbox_handlers *handlers;
	void *handlers_priv;

	/* ordered: the receive and timer work never run concurrently */
	struct workqueue_struct *wq;
	struct work_struct rx_work;
	struct delayed_work tick;

	/*
	 * One bit per possible sender whose doorbell rang: 128 bytes, set
	 * from any context, cleared by the receive work.
	 */
	DECLARE_BITMAP(bells, AMDGPU_UALINK_MAX_ACCELS);
	/* set once by amdgpu_ualink_link_stop(); no doorbell queues work afterwards */
	bool dead;
	/* protects dead against doorbells; taken from any context */
	spinlock_t bell_lock;
	/* ktime of the doorbell that queued the receive work, under bell_lock */
	u64 bell_at;
	/* written by the receive work only, read with READ_ONCE */
	struct amdgpu_ualink_mbox_work_stats work;

	/* u16 ID -> struct amdgpu_ualink_peer; entries live until destroy */
	struct xarray peers;

	struct amdgpu_ualink_fault fault;
	/*
	 * owner -> requests it has outstanding, as an xarray value, for the
	 * owners with a quota; protected by owners_lock
	 */
	struct xarray owners;
	/* protects owners; nests inside a peer's lock, never held taking one */
	struct mutex owners_lock;
	/* limits the node's log lines: peers that end, come back; its resets */
	struct ratelimit_state log_rs;
	atomic_t next_txn;
	/*
	 * Requests ended (answered or not), counted after each one's
	 * completion, and who sleeps until one does: amdgpu_ualink_mbox_ended()
	 */
	atomic_t ended;
	wait_queue_head_t ended_wq;
	/* our generation; written under reset_lock, read with READ_ONCE */
	u64 generation;
	/* serialises amdgpu_ualink_mbox_reset() against itself */
	struct mutex reset_lock;

	/*
	 * Every call into the transport (&amdgpu_ualink_mbox_ops) holds
	 * hw_sem for reading and checks quiesced, which changes under it
	 * held for writing: amdgpu_ualink_mbox_quiesce() returns with no
	 * call in progress and none to come.
	 */
	struct rw_semaphore hw_sem;
	bool quiesced;

	/* timing, written by amdgpu_ualink_mbox_set_timeout() */
	unsigned long timeout;	/* jiffies a request may take */
	unsigned long first_try;/* jiffies before the first retransmission */
	unsigned long period;	/* jiffies between two runs of the timer */
	unsigned int retries;
	/*
	 * jiffies a connected peer may stay silent before it is probed, 0
	 * for never; written by amdgpu_ualink_mbox_set_keepalive()
	 */
	unsigned long keepalive;
	/* probes the connected peers that went quiet, every keepalive / 4 */
	struct delayed_work keepalive_work;
#if IS_ENABLED(CONFIG_KUNIT)
	/* jiffies tests moved the clock on by, amdgpu_ualink_mbox_advance() */
	unsigned long skew;
#endif
};

/*
 * The mailbox's clock, in jiffies: deadlines, retransmissions and held
 * messages are all timed by it. Tests move it on instead of sleeping.
 */
static inline unsigned long amdgpu_ualink_mbox_now(const struct amdgpu_ualink_mbox *mbox)
{
#if IS_ENABLED(CONFIG_KUNIT)
	return jiffies + READ_ONCE(mbox->skew);
#else
	return jiffies;
#endif
}

/* amdgpu_ualink_mbox.c: transport */
int amdgpu_ualink_link_init(struct amdgpu_ualink_mbox *mbox, u16 self,
			    const struct amdgpu_ualink_mbox_ops *ops,
			    void *ops_priv,
			    const struct amdgpu_ualink_link_events *events);
void amdgpu_ualink_link_stop(struct amdgpu_ualink_mbox *mbox);
void amdgpu_ualink_link_fini(struct amdgpu_ualink_mbox *mbox);
struct amdgpu_ualink_peer *amdgpu_ualink_peer_get(struct amdgpu_ualink_mbox *mbox,
						  u16 id);
void amdgpu_ualink_rx_received(struct amdgpu_ualink_peer *peer,
			       const struct amdgpu_ualink_msg *msg);
void amdgpu_ualink_rx_drop(struct amdgpu_ualink_peer *peer,
			   const struct amdgpu_ualink_msg *msg,
			   enum amdgpu_ualink_drop why);
void amdgpu_ualink_tx_queue(struct amdgpu_ualink_peer *peer,
			    struct amdgpu_ualink_tx *tx);
void amdgpu_ualink_tx_flush(struct amdgpu_ualink_peer *peer);
void amdgpu_ualink_tx_forget(struct amdgpu_ualink_peer *peer);
void amdgpu_ualink_tx_reply(struct amdgpu_ualink_peer *peer, const u8 *wire,
			    u8 type);
void amdgpu_ualink_tick_arm(struct amdgpu_ualink_mbox *mbox);

#endif /* __AMDGPU_UALINK_MBOX_INTERNAL_H__ */
