/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The UALink mailbox: receive rings, per-peer connections, requests and
 * their responses. See amdgpu_ualink_mbox.c and amdgpu_ualink_conn.c.
 */
#ifndef __AMDGPU_UALINK_MBOX_H__
#define __AMDGPU_UALINK_MBOX_H__

#include <linux/completion.h>
#include <linux/list.h>
#include <linux/types.h>

#include "amdgpu_ualink_fault.h"
#include "amdgpu_ualink_msg.h"

struct amdgpu_ualink_mbox;
struct amdgpu_ualink_peer;
struct drm_printer;
struct lock_class_key;

/* entries of one receive ring */
#define AMDGPU_UALINK_RING_ENTRIES	64

/* default time a request may take, retransmissions included */
#define AMDGPU_UALINK_MBOX_TIMEOUT_MS	5000
/* default retransmissions of a request before its peer is declared lost */
#define AMDGPU_UALINK_MBOX_RETRIES	3
/* default time a connected peer may stay silent before it is probed */
#define AMDGPU_UALINK_MBOX_KEEPALIVE_MS	2000
/* the shortest keepalive time: the work then runs every 25 ms */
#define AMDGPU_UALINK_MBOX_KEEPALIVE_MIN_MS	100

/**
 * struct amdgpu_ualink_mbox_ops - the transport, provided by the backend
 *
 * Each sender has one ring of %AMDGPU_UALINK_RING_ENTRIES entries at each
 * receiver. Indices are free-running u32 counts; the slot of index i is
 * i % %AMDGPU_UALINK_RING_ENTRIES. The sender owns the producer index, the
 * receiver the consumer index; each publishes its own to the other side.
 * A new producer index rings the receiver's doorbell, which makes the
 * backend call amdgpu_ualink_mbox_doorbell() on it; a new consumer index
 * needs to ring the sender's only once @peer_tail found the ring full (the
 * sender waits for room; its timer retries the queue anyway). All ops are
 * called in process context with a peer's lock held and may sleep, but not
 * allocate memory or wait for GPU work when the mailbox may be quiesced
 * from a GPU reset (amdgpu_ualink_mbox_quiesce() waits for the call in
 * progress inside the reset's dma-fence signalling section): amdgpu's
 * transport is registers. The emulated pod's allocates a ring on its first
 * post; it has no GPU reset, and its calls have a lockdep class of their
 * own (@hw_class).
 */
struct amdgpu_ualink_mbox_ops {
	/**
	 * @post: write the %AMDGPU_UALINK_MSG_SIZE bytes of @entry into slot
	 * @slot of our ring at @peer. The ring's memory may be allocated by
	 * the first post. Returns 0 or a negative errno.
	 */
	int (*post)(void *priv, u16 peer, unsigned int slot, const void *entry);
	/**
	 * @publish: make producer index @head of our ring at @peer visible
	 * to @peer, after the entries posted before it, and ring its doorbell.
	 */
	void (*publish)(void *priv, u16 peer, u32 head);
	/**
	 * @peer_tail: the consumer index @peer last returned for our ring;
	 * asked when the ring looks full, so the backend may take it as a
	 * request for a doorbell at the next consumer index
	 */
	u32 (*peer_tail)(void *priv, u16 peer);
	/** @rx_head: the producer index @sender published for its ring here */
	u32 (*rx_head)(void *priv, u16 sender);
	/** @rx_read: copy slot @slot of @sender's ring here into @entry */
	void (*rx_read)(void *priv, u16 sender, unsigned int slot, void *entry);
	/**
	 * @rx_ack: return consumer index @tail of @sender's ring here to
	 * @sender, and ring its doorbell if it waits for room (or always).
	 */
	void (*rx_ack)(void *priv, u16 sender, u32 tail);
	/**
	 * @hw_class: the lockdep class of the calls into this transport (of
	 * the rw_semaphore they hold), or NULL for the core's. A transport
	 * whose calls may allocate, having no GPU reset, gives its own:
	 * lockdep would otherwise join its allocations to amdgpu's resets,
	 * which quiesce the mailbox of another device, and still checks
	 * amdgpu's calls against its resets.
	 */
	struct lock_class_key *hw_class;
};

/**
 * enum amdgpu_ualink_peer_event - why a peer's connection ended
 * @AMDGPU_UALINK_PEER_RESET: the peer started a new connection: it reset
 *	(its generation changed) or dropped the old connection itself
 * @AMDGPU_UALINK_PEER_LOST: the peer stopped answering or consuming within
 *	the timeout
 * @AMDGPU_UALINK_PEER_OFFLINE: the backend reported the peer offline
 */
enum amdgpu_ualink_peer_event {
	AMDGPU_UALINK_PEER_RESET,
	AMDGPU_UALINK_PEER_LOST,
	AMDGPU_UALINK_PEER_OFFLINE,
};

/**
 * struct amdgpu_ualink_mbox_handlers - the export/import layer's callbacks
 *
 * Both are called from the node's mailbox worker, never concurrently with
 * each other for one node, and without mailbox locks held. They may sleep
 * but must not wait for a mailbox response: the worker that would deliver it
 * is the one running them.
 */
struct amdgpu_ualink_mbox_handlers {
	/**
	 * @request: answer @req (NPA_REQ, or NPA_REVOKE or NPA_RELEASE that
	 * is not a response) from @peer. @rsp is prefilled with the default
	 * answer: NPA_FAIL "invalid handle" for NPA_REQ, the release or
	 * revocation of the same range otherwise. For NPA_REQ the handler
	 * may make it NPA_RSP (with npa and size) or NPA_FAIL (with a
	 * reason); other answers are fixed. A retransmitted request (same
	 * transaction number, type and handle) is answered from a cache
	 * without calling the handler again. If the connection ended while
	 * the handler ran, its answer is not sent and @peer_event follows.
	 */
	void (*request)(void *priv, u16 peer,
			const struct amdgpu_ualink_msg *req,
			struct amdgpu_ualink_msg *rsp);
	/**
	 * @peer_event: the connection with @peer ended: forget everything
	 * held for it or from it. Its outstanding requests have failed.
	 */
	void (*peer_event)(void *priv, u16 peer,
			   enum amdgpu_ualink_peer_event event);
};

/**
 * enum amdgpu_ualink_conn_state - a connection as one side sees it
 * @AMDGPU_UALINK_CONN_NOT_READY: no connection; the next request starts
 *	the handshake
 * @AMDGPU_UALINK_CONN_HELLO_SENT: HELLO sent, HELLO_ACK awaited
 * @AMDGPU_UALINK_CONN_ESTABLISHED: generations exchanged; requests flow
 * @AMDGPU_UALINK_CONN_OFFLINE: the backend reported the peer offline;
 *	requests fail with -ENOLINK until it is back
 */
enum amdgpu_ualink_conn_state {
	AMDGPU_UALINK_CONN_NOT_READY,
	AMDGPU_UALINK_CONN_HELLO_SENT,
	AMDGPU_UALINK_CONN_ESTABLISHED,
	AMDGPU_UALINK_CONN_OFFLINE,
};

/**
 * struct amdgpu_ualink_mbox_stats - counters of one peer, or of all
 *
 * Arrays by message type are indexed by &enum amdgpu_ualink_msg_type.
 */
struct amdgpu_ualink_mbox_stats {
	/** @sent: messages written into the peer's ring (retransmissions too) */
	u64 sent[AMDGPU_UALINK_MSG_TYPES];
	/** @received: messages accepted from the peer's ring */
	u64 received[AMDGPU_UALINK_MSG_TYPES];
	/** @retransmitted: requests sent again for want of a response */
	u64 retransmitted[AMDGPU_UALINK_MSG_TYPES];
	/** @dropped: inbound entries dropped, per &enum amdgpu_ualink_drop */
	u64 dropped[AMDGPU_UALINK_DROP_REASONS];
	/** @faults: faults injected into messages to the peer, per kind */
	u64 faults[AMDGPU_UALINK_FAULT_KINDS];
	/** @timeouts: requests that failed for want of a response */
	u64 timeouts;
	/** @resets: connections that ended, for any reason */
	u64 resets;
	/** @generation_changes: HELLOs showing that the peer had reset */
	u64 generation_changes;
	/** @duplicate_requests: retransmitted requests answered from cache */
	u64 duplicate_requests;
	/** @ring_full: messages that waited in a queue for ring space */
	u64 ring_full;
	/** @replies_lost: answers not sent: too many queued, or no memory */
	u64 replies_lost;
	/** @probes: keepalive probes sent to a peer that had gone quiet */
	u64 probes;
};

/**
 * struct amdgpu_ualink_mbox_work_stats - what a node's worker spent
 *
 * For benchmarks (``make bench`` reads them from the emulated pod's
 * debugfs): how often the receive work ran, how long after the doorbell
 * that queued it, and how long the request handler (an exporter answering
 * NPA_REQ, say) took.
 */
struct amdgpu_ualink_mbox_work_stats {
	/** @runs: executions of the receive work */
	u64 runs;
	/** @woken: those a doorbell queued (not a requeue of the work itself) */
	u64 woken;
	/** @wake_ns: sum over @woken of doorbell -> start of the work */
	u64 wake_ns;
	/** @wake_max_ns: the longest of them */
	u64 wake_max_ns;
	/** @busy_ns: time spent in the receive work */
	u64 busy_ns;
	/** @requests: requests handed to the node's request handler */
	u64 requests;
	/** @request_ns: time spent in that handler */
	u64 request_ns;
};

/**
 * struct amdgpu_ualink_tx - an encoded message on its way into a ring
 *
 * Private to the mailbox: replies are allocated, requests embed theirs so
 * that a retransmission needs no allocation.
 */
struct amdgpu_ualink_tx {
	/** @link: in the peer's transmit queue or list of held messages */
	struct list_head link;
	/** @since: jiffies when queued, to find a ring that stays full */
	unsigned long since;
	/** @due: jiffies when a held message is released */
	unsigned long due;
	/** @owned: freed once written (a reply) */
	bool owned;
	/** @faulted: fault injection has decided about it already */
	bool faulted;
	/** @reorder: held until the next message to the peer is written */
	bool reorder;
	/** @type: its &enum amdgpu_ualink_msg_type, for counters and faults */
	u8 type;
	/** @wire: the encoded message */
	u8 wire[AMDGPU_UALINK_MSG_SIZE];
};

/**
 * struct amdgpu_ualink_req - a request and, when it is done, its response
 *
 * The caller fills @msg's type and payload; the mailbox fills its header.
 * The structure must stay valid until amdgpu_ualink_mbox_wait() or
 * amdgpu_ualink_mbox_cancel() returns.
 */
struct amdgpu_ualink_req {
	/** @msg: the request: HELLO is sent by the mailbox itself */
	struct amdgpu_ualink_msg msg;
	/** @rsp: the response, valid when @status is 0 */
	struct amdgpu_ualink_msg rsp;
	/**
	 * @status: -EINPROGRESS until done, then 0 once answered; -ETIMEDOUT
	 * no answer within the timeout from the first send (the peer may
	 * have handled it) or not sent within a timeout of its submission
	 * (it may not have), -ENOLINK the peer reset or went offline,
	 * -ECANCELED cancelled, -ESHUTDOWN the node is going away
	 */
	int status;
	/** @done: completed when @status is final */
	struct completion done;
	/**
	 * @owner: for an NPA_REQ, whom it is for (a process; 0 for the
	 * kernel's own): the NPA_REQs waiting for one peer are sent one
	 * owner at a time, in turn
	 */
	u32 owner;
	/**
	 * @quota: when not 0 (with @owner), the most requests @owner may
	 * have outstanding on the node, this one included, each from its
	 * submission to its end (answered, failed or cancelled)
	 */
	unsigned int quota;
	/**
	 * @ended: when not NULL, called once @status is final, after @done
	 * completed, with the mailbox's locks held: it may only queue work
	 * (which may free @req). A request with one must not be freed by a
	 * waiter on @done, which may wake before the call
	 */
	void (*ended)(struct amdgpu_ualink_req *req);

	/* private: owned by the mailbox */
	struct list_head link;
	struct amdgpu_ualink_peer *peer;
	struct amdgpu_ualink_flow *flow;
	bool charged;
	unsigned long deadline;
	unsigned long next_try;
	unsigned int tries;
	u32 seq;
	u32 rx_seq;
	bool sent;
	bool internal;
	struct amdgpu_ualink_tx tx;
};

/**
 * amdgpu_ualink_req_sent - whether a request may have reached its peer
 * @req: an ended request
 *
 * Returns: false for one that ended before it was first sent (it waited
 * for room, or for the handshake, until it failed): the peer never saw it.
 */
static inline bool amdgpu_ualink_req_sent(const struct amdgpu_ualink_req *req)
{
	return req->sent;
}

struct amdgpu_ualink_mbox *
amdgpu_ualink_mbox_create(u16 self, const struct amdgpu_ualink_mbox_ops *ops,
			  void *ops_priv,
			  const struct amdgpu_ualink_mbox_handlers *handlers,
			  void *handlers_priv);
void amdgpu_ualink_mbox_destroy(struct amdgpu_ualink_mbox *mbox);
void amdgpu_ualink_might_block(void);
void amdgpu_ualink_mbox_doorbell(struct amdgpu_ualink_mbox *mbox, u16 peer);
void amdgpu_ualink_mbox_flush(struct amdgpu_ualink_mbox *mbox);
void amdgpu_ualink_mbox_tick_now(struct amdgpu_ualink_mbox *mbox);
void amdgpu_ualink_mbox_advance(struct amdgpu_ualink_mbox *mbox,
				unsigned int ms);
void amdgpu_ualink_mbox_keepalive_now(struct amdgpu_ualink_mbox *mbox);
void amdgpu_ualink_mbox_quiesce(struct amdgpu_ualink_mbox *mbox);
void amdgpu_ualink_mbox_resume(struct amdgpu_ualink_mbox *mbox);
int amdgpu_ualink_mbox_set_timeout(struct amdgpu_ualink_mbox *mbox,
				   unsigned int timeout_ms,
				   unsigned int retries);
void amdgpu_ualink_mbox_get_timeout(struct amdgpu_ualink_mbox *mbox,
				    unsigned int *timeout_ms,
				    unsigned int *retries);
int amdgpu_ualink_mbox_set_keepalive(struct amdgpu_ualink_mbox *mbox,
				     unsigned int keepalive_ms);
struct amdgpu_ualink_fault *
amdgpu_ualink_mbox_fault(struct amdgpu_ualink_mbox *mbox);
u64 amdgpu_ualink_mbox_generation(struct amdgpu_ualink_mbox *mbox);

int amdgpu_ualink_mbox_submit(struct amdgpu_ualink_mbox *mbox, u16 peer,
			      struct amdgpu_ualink_req *req);
int amdgpu_ualink_mbox_wait(struct amdgpu_ualink_mbox *mbox,
			    struct amdgpu_ualink_req *req);
void amdgpu_ualink_mbox_cancel(struct amdgpu_ualink_mbox *mbox,
			       struct amdgpu_ualink_req *req);
void amdgpu_ualink_mbox_fail(struct amdgpu_ualink_mbox *mbox,
			     struct amdgpu_ualink_req *req, int status);
u32 amdgpu_ualink_mbox_ended(struct amdgpu_ualink_mbox *mbox);
int amdgpu_ualink_mbox_wait_ended(struct amdgpu_ualink_mbox *mbox, u32 seen,
				  u32 want);
int amdgpu_ualink_mbox_call(struct amdgpu_ualink_mbox *mbox, u16 peer,
			    struct amdgpu_ualink_req *req);

void amdgpu_ualink_mbox_reset(struct amdgpu_ualink_mbox *mbox);
void amdgpu_ualink_mbox_peer_offline(struct amdgpu_ualink_mbox *mbox,
				     u16 peer);
void amdgpu_ualink_mbox_peer_online(struct amdgpu_ualink_mbox *mbox,
				    u16 peer);
void amdgpu_ualink_mbox_peer_forget(struct amdgpu_ualink_mbox *mbox,
				    u16 peer);

int amdgpu_ualink_mbox_peer_state(struct amdgpu_ualink_mbox *mbox, u16 peer,
				  enum amdgpu_ualink_conn_state *state,
				  u64 *generation);
void amdgpu_ualink_mbox_get_stats(struct amdgpu_ualink_mbox *mbox, int peer,
				  struct amdgpu_ualink_mbox_stats *stats);
void amdgpu_ualink_mbox_get_work_stats(struct amdgpu_ualink_mbox *mbox,
				       struct amdgpu_ualink_mbox_work_stats *stats);
unsigned int amdgpu_ualink_mbox_peers(struct amdgpu_ualink_mbox *mbox);
size_t amdgpu_ualink_mbox_peer_bytes(struct amdgpu_ualink_mbox *mbox,
				     u16 peer);
void amdgpu_ualink_mbox_print(struct amdgpu_ualink_mbox *mbox,
			      struct drm_printer *p);

#endif /* __AMDGPU_UALINK_MBOX_H__ */
