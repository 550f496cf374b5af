// SPDX-License-Identifier: GPL-2.0 OR MIT

#include <kunit/visibility.h>
#include <linux/export.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/lockdep.h>
#include <linux/moduleparam.h>
#include <linux/random.h>
#include <linux/slab.h>

#include <drm/drm_print.h>

#include "amdgpu_ualink_mbox_internal.h"

static unsigned int mbox_keepalive_ms = AMDGPU_UALINK_MBOX_KEEPALIVE_MS;
module_param(mbox_keepalive_ms, uint, 0644);
MODULE_PARM_DESC(mbox_keepalive_ms,
		 "Time a connected peer may stay silent before it is probed, 0 for never, for nodes created afterwards (default 2000)");

/**
 * DOC: Connections and requests
 *
 * Two nodes talk only over an established connection. The first request to
 * a peer starts the handshake: HELLO carries our generation, HELLO_ACK the
 * peer's. Each node starts with a random generation and advances it at
 * every reset (amdgpu_ualink_mbox_reset()), after which it greets every
 * peer it knew, so peers notice at once. A connection is::
 *
 *	NOT_READY --request--> HELLO_SENT --HELLO_ACK--> ESTABLISHED
 *	    ^  \____________peer's HELLO__________________^   |
 *	    |                                                  |
 *	    +-- timeout, ring full too long, peer's HELLO -----+
 *	OFFLINE <-- amdgpu_ualink_mbox_peer_offline(), from any state
 *
 * A HELLO on an established connection means the peer restarted: it reset
 * (its generation changed) or ended the connection on its side. The
 * connection ends (%AMDGPU_UALINK_PEER_RESET) and a new one starts. The
 * one exception is a crossed handshake (both sides sent HELLO at once and
 * a fault reordered the messages): a HELLO with an unchanged generation on
 * a connection that has not yet carried an NPA message is only answered.
 * A request that arrives outside a connection is dropped
 * (%AMDGPU_UALINK_DROP_UNCONNECTED) and, unless we are greeting the peer
 * already or it is offline, answered with a HELLO, so that a peer that
 * still believes in a connection we ended learns of it. A node that ends a
 * connection because of a HELLO greets back, so that both ends always
 * start the new connection together, even when the HELLO was a stale copy.
 *
 * When a connection ends, its outstanding requests fail (-ENOLINK for a
 * reset or an offline peer, -ETIMEDOUT when the peer was lost), queued
 * messages are dropped, and the export/import layer's peer_event callback
 * is called outside any mailbox lock to clean up what it held for the peer.
 *
 * Requests (amdgpu_ualink_mbox_submit()) carry a transaction number unique
 * on the node; a response carries its request's. A request without a
 * response is retransmitted with the same number after a gap that doubles
 * each time, the last gap ending at the timeout (default 5 s, 3
 * retransmissions), counted from when it was first sent: one that waits
 * for room (more than %AMDGPU_UALINK_IN_FLIGHT ahead of it) has not
 * started its time. A request still unanswered then fails alone with
 * -ETIMEDOUT if the peer sent us anything since its first send; only a
 * peer silent for a whole timeout, that is one that answered nothing and
 * sent nothing, is declared lost, and its connection ends. So one slow or
 * lost answer, or a queue of many requests, fails no one else's.
 *
 * Requests not sent yet wait on two lanes: NPA_REVOKE and NPA_RELEASE, in
 * order, go before any NPA_REQ, so that taking access away never waits
 * behind imports; the NPA_REQs are queued per owner
 * (&amdgpu_ualink_req.owner, a process) and sent one owner at a time, in
 * turn. At most %AMDGPU_UALINK_REQ_QUEUED NPA_REQs wait for one peer
 * (-ENOBUFS past it), and one that waited a whole timeout for room on an
 * established connection (counted from the later of its submission and
 * the handshake) fails with -ETIMEDOUT without being sent. An owner with
 * a quota (&amdgpu_ualink_req.quota) has that many requests outstanding
 * on the node at most, each counted from its submission to its end
 * (-EDQUOT past it).
 * Keepalive: a peer silent for the keepalive time (module parameter
 * ``mbox_keepalive_ms``, default 2 s, at least 100 ms, 0 for never;
 * amdgpu_ualink_mbox_set_keepalive() per node) on an established
 * connection is probed with a HELLO that carries
 * %AMDGPU_UALINK_MSG_F_PROBE. A peer whose side of the connection stands
 * answers HELLO_ACK and nothing changes on either side; a peer without it
 * (it declared us lost, or never had it) drops the probe as
 * %AMDGPU_UALINK_DROP_UNCONNECTED and greets us (unless it is greeting
 * us already): on a connection that carried traffic the greeting ends our
 * side, on one that carried none (nothing was held) it only completes the
 * peer's handshake. Probe answers are not kept in the answer cache. The
 * probe is retransmitted and timed as a request: a peer that sends nothing
 * at all for its timeout is declared lost, one that sent anything is alive.
 * So a dead or hung peer that nobody was talking to is declared lost at
 * most keepalive + keepalive / 4 + timeout after its last message (7.5 s
 * by default), and one that comes back after that finds its connections
 * ended: a new connection starts, as for a peer that restarted, with
 * nothing of its old one. Probes only go to a peer that went quiet, so a
 * node busy talking sends none; an idle node sends one HELLO per connected
 * peer and keepalive period, and answers as many.
 *
 * Responses that match no outstanding request (duplicate, late,
 * unsolicited) are dropped as %AMDGPU_UALINK_DROP_UNMATCHED, those whose
 * type or handle do not fit their request as %AMDGPU_UALINK_DROP_MISMATCH.
 *
 * The receiving side is idempotent: the answers to the last
 * %AMDGPU_UALINK_REPLY_CACHE requests of each peer are kept, and a request
 * with the same transaction number, type, handle and generation is
 * answered from there. A requester keeps at most %AMDGPU_UALINK_IN_FLIGHT
 * requests in flight to one peer (more wait, unsent), so the cache always
 * still holds the answer a retransmission asks for: a retransmitted
 * NPA_REQ never maps memory twice. Transaction numbers start at a random
 * value on every node, so a reloaded peer's requests do not hit answers
 * cached for its previous life.
 *
 * This layer sits on the transport (amdgpu_ualink_mbox.c), which calls it
 * only through &struct amdgpu_ualink_link_events; it owns the node's life
 * (amdgpu_ualink_mbox_create() sets the transport up below it).
 *
 * Locking: each peer's mutex protects its connection, its requests and its
 * queues. The export/import layer's callbacks run without it, from the
 * node's worker only (an end found elsewhere is handed to the worker), so
 * they never run concurrently; a request's answer is sent only if the
 * connection that asked still exists, and otherwise the end's event follows
 * the handler.
 */

static u32 next_txn(struct amdgpu_ualink_mbox *mbox)
{
	return (u32)atomic_inc_return(&mbox->next_txn);
}

/* After a request's completion: count it, wake who waits for any. */
static void req_ended(struct amdgpu_ualink_mbox *mbox)
{
	/* the completion before the count: amdgpu_ualink_mbox_ended() */
	smp_mb__before_atomic();
	atomic_inc(&mbox->ended);
	/* pairs with the barrier of wait_event's prepare_to_wait */
	if (wq_has_sleeper(&mbox->ended_wq))
		wake_up_all(&mbox->ended_wq);
}

/* The requests @owner has outstanding on the node, counted for its quota. */
static unsigned long owner_count(struct amdgpu_ualink_mbox *mbox, u32 owner)
{
	void *entry = xa_load(&mbox->owners, owner);

	lockdep_assert_held(&mbox->owners_lock);
	return entry ? xa_to_value(entry) : 0;
}

/* Count one request of @owner's: 0, -EDQUOT at @quota, or -ENOMEM. */
static int owner_charge(struct amdgpu_ualink_mbox *mbox, u32 owner,
			unsigned int quota)
{
	unsigned long n;
	int ret;

	mutex_lock(&mbox->owners_lock);
	n = owner_count(mbox, owner);
	if (n >= quota)
		ret = -EDQUOT;
	else
		ret = xa_err(xa_store(&mbox->owners, owner, xa_mk_value(n + 1),
				      GFP_KERNEL_ACCOUNT));
	mutex_unlock(&mbox->owners_lock);
	return ret;
}

/* One request of @owner's ended; an entry replaced in place allocates nothing. */
static void owner_uncharge(struct amdgpu_ualink_mbox *mbox, u32 owner)
{
	unsigned long n;

	mutex_lock(&mbox->owners_lock);
	n = owner_count(mbox, owner);
	if (n > 1)
		xa_store(&mbox->owners, owner, xa_mk_value(n - 1), GFP_KERNEL);
	else if (!WARN_ON(!n))
		xa_erase(&mbox->owners, owner);
	mutex_unlock(&mbox->owners_lock);
}

/*
 * Queue a request not sent yet: NPA_REVOKE and NPA_RELEASE on their own
 * lane, an NPA_REQ at the end of its owner's flow (made, and put last in
 * the round, when the owner has none). Returns 0, -ENOBUFS when
 * %AMDGPU_UALINK_REQ_QUEUED NPA_REQs wait already, or -ENOMEM.
 */
static int req_queue(struct amdgpu_ualink_peer *peer,
		     struct amdgpu_ualink_req *req)
{
	struct amdgpu_ualink_flow *flow;
	int ret;

	lockdep_assert_held(&peer->lock);

	/* it waits for a whole timeout at most before it is sent */
	req->deadline = amdgpu_ualink_mbox_now(peer->mbox) +
			READ_ONCE(peer->mbox->timeout);
	if (req->msg.type != AMDGPU_UALINK_MSG_NPA_REQ) {
		list_add_tail(&req->link, &peer->ctl);
		return 0;
	}
	if (peer->queued >= AMDGPU_UALINK_REQ_QUEUED)
		return -ENOBUFS;
	flow = xa_load(&peer->flow_of, req->owner);
	if (!flow) {
		flow = kzalloc_obj(*flow, GFP_KERNEL_ACCOUNT);
		if (!flow)
			return -ENOMEM;
		ret = xa_err(xa_store(&peer->flow_of, req->owner, flow,
				      GFP_KERNEL_ACCOUNT));
		if (ret) {
			kfree(flow);
			return ret;
		}
		flow->owner = req->owner;
		INIT_LIST_HEAD(&flow->reqs);
		list_add_tail(&flow->turn, &peer->flows);
	}
	list_add_tail(&req->link, &flow->reqs);
	req->flow = flow;
	peer->queued++;
	return 0;
}

/* Take a request off whichever list it is on; an emptied flow goes. */
static void req_unqueue(struct amdgpu_ualink_peer *peer,
			struct amdgpu_ualink_req *req)
{
	struct amdgpu_ualink_flow *flow = req->flow;

	lockdep_assert_held(&peer->lock);

	list_del_init(&req->link);
	if (!flow)
		return;
	req->flow = NULL;
	peer->queued--;
	if (list_empty(&flow->reqs)) {
		list_del(&flow->turn);
		xa_erase(&peer->flow_of, flow->owner);
		kfree(flow);
	}
}

/*
 * The next request to send, taken off its queue: revocations and releases
 * first, then the first NPA_REQ of the owner whose turn it is, whose flow
 * goes last in the round. NULL when none waits.
 */
static struct amdgpu_ualink_req *req_next(struct amdgpu_ualink_peer *peer)
{
	struct amdgpu_ualink_flow *flow;
	struct amdgpu_ualink_req *req;

	lockdep_assert_held(&peer->lock);

	req = list_first_entry_or_null(&peer->ctl, struct amdgpu_ualink_req,
				       link);
	if (!req) {
		flow = list_first_entry_or_null(&peer->flows,
						struct amdgpu_ualink_flow, turn);
		if (!flow)
			return NULL;
		req = list_first_entry(&flow->reqs, struct amdgpu_ualink_req,
				       link);
		list_rotate_left(&peer->flows);
	}
	req_unqueue(peer, req);
	return req;
}

static bool req_waiting(struct amdgpu_ualink_peer *peer)
{
	return !list_empty(&peer->ctl) || !list_empty(&peer->flows);
}

static void req_finish(struct amdgpu_ualink_peer *peer,
		       struct amdgpu_ualink_req *req, int status)
{
	/* a waiter may free @req once it completed: read this before */
	void (*ended)(struct amdgpu_ualink_req *req) = req->ended;

	lockdep_assert_held(&peer->lock);

	req_unqueue(peer, req);
	list_del_init(&req->tx.link);
	if (req->charged) {
		req->charged = false;
		owner_uncharge(peer->mbox, req->owner);
	}
	if (status == -ETIMEDOUT)
		peer->stats.timeouts++;
	req->status = status;
	complete_all(&req->done);
	if (ended)	/* the end's only user: @req lives until it returns */
		ended(req);
	req_ended(peer->mbox);
}

/* Fail every request not sent yet. */
static void req_fail_queued(struct amdgpu_ualink_peer *peer, int status)
{
	struct amdgpu_ualink_req *req;

	lockdep_assert_held(&peer->lock);

	while ((req = req_next(peer)))
		req_finish(peer, req, status);
}

/*
 * Fail the requests that waited a whole timeout for room without being
 * sent: on an established connection, counted from the later of their
 * submission and the handshake (while it lasts, the handshake's own
 * timeout ends them all).
 */
static void req_expire_queued(struct amdgpu_ualink_peer *peer,
			      unsigned long now)
{
	struct amdgpu_ualink_flow *flow, *fnext;
	struct amdgpu_ualink_req *req, *next;
	bool last;

	lockdep_assert_held(&peer->lock);

	if (peer->state != AMDGPU_UALINK_CONN_ESTABLISHED ||
	    time_before(now, peer->established + READ_ONCE(peer->mbox->timeout)))
		return;
	list_for_each_entry_safe(req, next, &peer->ctl, link) {
		if (time_before(now, req->deadline))
			break;
		req_finish(peer, req, -ETIMEDOUT);
	}
	/* each flow is in submission order: only its heads can be due */
	list_for_each_entry_safe(flow, fnext, &peer->flows, turn) {
		do {
			req = list_first_entry(&flow->reqs,
					       struct amdgpu_ualink_req, link);
			if (time_before(now, req->deadline))
				break;
			last = list_is_singular(&flow->reqs);
			req_finish(peer, req, -ETIMEDOUT);	/* may free flow */
		} while (!last);
	}
}

/* Send or resend a request. */
static void req_send(struct amdgpu_ualink_peer *peer,
		     struct amdgpu_ualink_req *req)
{
	struct amdgpu_ualink_mbox *mbox = peer->mbox;
	unsigned long now = amdgpu_ualink_mbox_now(mbox);

	lockdep_assert_held(&peer->lock);

	if (!req->sent) {
		/* its time starts now, and what the peer says from now on */
		req->deadline = now + READ_ONCE(mbox->timeout);
		req->rx_seq = peer->rx_seq;
		if (!req->internal)
			req->seq = peer->tx_seq++;
	}
	req->sent = true;
	/* one still waiting for ring space stays so, and loses no attempt */
	if (!list_empty(&req->tx.link)) {
		req->next_try = now + READ_ONCE(mbox->first_try);
		return;
	}
	req->next_try = now + (READ_ONCE(mbox->first_try) << req->tries);
	if (req->tries++)
		peer->stats.retransmitted[req->tx.type]++;
	amdgpu_ualink_tx_queue(peer, &req->tx);
	amdgpu_ualink_tick_arm(mbox);
}

static int req_prepare(struct amdgpu_ualink_peer *peer,
		       struct amdgpu_ualink_req *req)
{
	struct amdgpu_ualink_mbox *mbox = peer->mbox;

	req->msg.version = AMDGPU_UALINK_PROTO_VERSION;
	req->msg.sender = mbox->self;
	req->msg.receiver = peer->id;
	req->msg.txn = next_txn(mbox);
	if (amdgpu_ualink_msg_encode(&req->msg, req->tx.wire))
		return -EINVAL;
	req->tx.type = req->msg.type;
	req->tx.owned = false;
	INIT_LIST_HEAD(&req->tx.link);
	INIT_LIST_HEAD(&req->link);
	init_completion(&req->done);
	req->status = -EINPROGRESS;
	req->peer = peer;
	req->tries = 0;
	req->sent = false;
	return 0;
}

/* The handshake's request, made a HELLO with @flags and linked; or false. */
static bool hello_prepare(struct amdgpu_ualink_peer *peer, u8 flags)
{
	struct amdgpu_ualink_req *hello = &peer->hello;

	hello->msg = (struct amdgpu_ualink_msg) {
		.type = AMDGPU_UALINK_MSG_HELLO,
		.flags = flags,
		.generation = amdgpu_ualink_mbox_generation(peer->mbox),
	};
	if (WARN_ON(req_prepare(peer, hello)))
		return false;
	hello->internal = true;
	list_add_tail(&hello->link, &peer->reqs);
	return true;
}

/*
 * Greet the peer: from NOT_READY this starts the handshake; on an
 * established connection it only tells the peer our generation again.
 */
static void conn_hello(struct amdgpu_ualink_peer *peer)
{
	lockdep_assert_held(&peer->lock);

	if (!list_empty(&peer->hello.link))	/* greeting already */
		return;
	if (!hello_prepare(peer, 0))
		return;
	if (peer->state == AMDGPU_UALINK_CONN_NOT_READY)
		peer->state = AMDGPU_UALINK_CONN_HELLO_SENT;
	req_send(peer, &peer->hello);
}

/*
 * Ask an established connection's peer whether it still has the
 * connection: a HELLO with the probe flag, on the handshake's request,
 * which no other greeting uses while the connection stands.
 */
static void conn_probe(struct amdgpu_ualink_peer *peer)
{
	lockdep_assert_held(&peer->lock);

	if (peer->state != AMDGPU_UALINK_CONN_ESTABLISHED ||
	    !list_empty(&peer->hello.link))
		return;
	if (!hello_prepare(peer, AMDGPU_UALINK_MSG_F_PROBE))
		return;
	peer->stats.probes++;
	req_send(peer, &peer->hello);
}

/* The handshake is done; the time requests wait for room starts. */
static void conn_established(struct amdgpu_ualink_peer *peer)
{
	lockdep_assert_held(&peer->lock);

	if (peer->state != AMDGPU_UALINK_CONN_ESTABLISHED)
		peer->established = amdgpu_ualink_mbox_now(peer->mbox);
	if (peer->state != AMDGPU_UALINK_CONN_ESTABLISHED && peer->ended &&
	    __ratelimit(&peer->mbox->log_rs))
		pr_info("amdgpu_ualink: accelerator %u: peer %u back, generation %llu\n",
			peer->mbox->self, peer->id, peer->generation);
	peer->ended = false;
	peer->state = AMDGPU_UALINK_CONN_ESTABLISHED;
}

/*
 * Move requests on as far as the connection allows. At most
 * %AMDGPU_UALINK_IN_FLIGHT are in flight, counted in the order they were
 * first sent, so that the peer's answer cache covers every retransmission.
 */
static void conn_kick(struct amdgpu_ualink_peer *peer)
{
	struct amdgpu_ualink_req *req, *oldest = NULL;

	lockdep_assert_held(&peer->lock);

	switch (peer->state) {
	case AMDGPU_UALINK_CONN_NOT_READY:
		if (req_waiting(peer))
			conn_hello(peer);
		break;
	case AMDGPU_UALINK_CONN_ESTABLISHED:
		list_for_each_entry(req, &peer->reqs, link) {
			if (!req->internal) {
				oldest = req;
				break;
			}
		}
		while (!oldest || peer->tx_seq - oldest->seq < AMDGPU_UALINK_IN_FLIGHT) {
			req = req_next(peer);
			if (!req)
				break;
			list_add_tail(&req->link, &peer->reqs);
			req_send(peer, req);
			oldest = oldest ?: req;
		}
		break;
	default:
		break;
	}
}

/*
 * Tell the export/import layer that a connection ended (@event: an &enum
 * amdgpu_ualink_peer_event, or negative for none). From the node's worker
 * only, with the peer unlocked: its callbacks never run concurrently.
 */
static void conn_notify(struct amdgpu_ualink_peer *peer, int event)
{
	struct amdgpu_ualink_mbox *mbox = peer->mbox;

	lockdep_assert_not_held(&peer->lock);

	if (event >= 0 && mbox->handlers && mbox->handlers->peer_event)
		mbox->handlers->peer_event(mbox->handlers_priv, peer->id, event);
}

/* conn_notify() from the transport's events, which hold the peer's lock */
static void conn_notify_locked(struct amdgpu_ualink_peer *peer, int event)
{
	lockdep_assert_held(&peer->lock);

	if (event < 0)
		return;
	mutex_unlock(&peer->lock);
	conn_notify(peer, event);
	mutex_lock(&peer->lock);
}

/*
 * A connection end found outside the node's worker: the worker reports it
 * (conn_visit()) before it next reads the peer's ring, so that an answer
 * dropped because the connection ended is always followed by the event.
 */
static void conn_defer_event(struct amdgpu_ualink_peer *peer, int event)
{
	lockdep_assert_held(&peer->lock);

	if (event < 0)
		return;
	peer->pending_event = event;
	amdgpu_ualink_mbox_doorbell(peer->mbox, peer->id);
}

/**
 * conn_end - end a peer's connection
 * @peer: the peer, locked
 * @why: the reason, reported to the export/import layer
 * @err: the status outstanding requests fail with
 *
 * Returns: the event for conn_notify(), to be called once the peer is
 * unlocked.
 */
static int conn_end(struct amdgpu_ualink_peer *peer,
		    enum amdgpu_ualink_peer_event why, int err)
{
	struct amdgpu_ualink_req *req, *next;

	lockdep_assert_held(&peer->lock);

	list_for_each_entry_safe(req, next, &peer->reqs, link)
		req_finish(peer, req, err);
	req_fail_queued(peer, err);
	amdgpu_ualink_tx_forget(peer);
	if (peer->replies)
		memset(peer->replies, 0,
		       sizeof(*peer->replies) * AMDGPU_UALINK_REPLY_CACHE);
	if (peer->state == AMDGPU_UALINK_CONN_HELLO_SENT ||
	    peer->state == AMDGPU_UALINK_CONN_ESTABLISHED)
		peer->stats.resets++;
	peer->traffic = false;
	peer->state = why == AMDGPU_UALINK_PEER_OFFLINE ?
		      AMDGPU_UALINK_CONN_OFFLINE : AMDGPU_UALINK_CONN_NOT_READY;
	return why;
}

/*
 * conn_end() for an end the peer caused, or our view of it: the end of an
 * established connection is logged (a handshake nobody answered is not:
 * nothing was held), and so is the connection that follows, as the peer
 * coming back. A node logs at most
 * DEFAULT_RATELIMIT_BURST lines in DEFAULT_RATELIMIT_INTERVAL, whatever
 * the number of its peers, as printk_ratelimited() would for one call
 * site. Our own reset is one line of amdgpu_ualink_mbox_reset(); teardown
 * ends connections quietly.
 */
static int conn_end_told(struct amdgpu_ualink_peer *peer,
			 enum amdgpu_ualink_peer_event why, int err)
{
	static const char *const what[] = {
		[AMDGPU_UALINK_PEER_RESET] = "reset",
		[AMDGPU_UALINK_PEER_LOST] = "lost",
		[AMDGPU_UALINK_PEER_OFFLINE] = "offline",
	};
	lockdep_assert_held(&peer->lock);

	if (peer->state != AMDGPU_UALINK_CONN_ESTABLISHED)
		return conn_end(peer, why, err);	/* nothing held */
	if (__ratelimit(&peer->mbox->log_rs)) {
		if (why == AMDGPU_UALINK_PEER_LOST)
			pr_warn("amdgpu_ualink: accelerator %u: peer %u lost, what it held and granted is dropped\n",
				peer->mbox->self, peer->id);
		else
			pr_info("amdgpu_ualink: accelerator %u: peer %u %s, what it held and granted is dropped\n",
				peer->mbox->self, peer->id, what[why]);
	}
	peer->ended = true;
	return conn_end(peer, why, err);
}

static struct amdgpu_ualink_reply *reply_find(struct amdgpu_ualink_peer *peer,
					      const struct amdgpu_ualink_msg *msg)
{
	unsigned int i;

	for (i = 0; peer->replies && i < AMDGPU_UALINK_REPLY_CACHE; i++) {
		struct amdgpu_ualink_reply *r = &peer->replies[i];

		if (r->valid && r->txn == msg->txn && r->type == msg->type &&
		    r->handle[0] == msg->handle[0] &&
		    r->handle[1] == msg->handle[1] &&
		    r->generation == msg->generation)
			return r;
	}
	return NULL;
}

/* Remember the answer to @req, then send it. */
static void reply_send(struct amdgpu_ualink_peer *peer,
		       const struct amdgpu_ualink_msg *req,
		       const struct amdgpu_ualink_msg *rsp)
{
	struct amdgpu_ualink_reply *r;
	u8 wire[AMDGPU_UALINK_MSG_SIZE];

	if (WARN_ON_ONCE(amdgpu_ualink_msg_encode(rsp, wire)))
		return;
	if (!peer->replies)
		peer->replies = kcalloc(AMDGPU_UALINK_REPLY_CACHE,
					sizeof(*peer->replies), GFP_KERNEL);
	if (peer->replies) {	/* without, retransmissions ask again */
		r = &peer->replies[peer->reply_next++ % AMDGPU_UALINK_REPLY_CACHE];
		r->valid = true;
		r->txn = req->txn;
		r->type = req->type;
		r->handle[0] = req->handle[0];
		r->handle[1] = req->handle[1];
		r->generation = req->generation;
		r->rsp_type = rsp->type;
		memcpy(r->wire, wire, sizeof(wire));
	}
	amdgpu_ualink_tx_reply(peer, wire, rsp->type);
}

/* A response's header, echoing the request. */
static struct amdgpu_ualink_msg
rsp_header(struct amdgpu_ualink_peer *peer, const struct amdgpu_ualink_msg *req)
{
	return (struct amdgpu_ualink_msg) {
		.version = AMDGPU_UALINK_PROTO_VERSION,
		.flags = AMDGPU_UALINK_MSG_F_RESPONSE,
		.sender = peer->mbox->self,
		.receiver = peer->id,
		.txn = req->txn,
	};
}

static int conn_on_hello(struct amdgpu_ualink_peer *peer,
			 const struct amdgpu_ualink_msg *msg, int *event,
			 enum amdgpu_ualink_drop *why)
{
	struct amdgpu_ualink_reply *cached;
	u8 wire[AMDGPU_UALINK_MSG_SIZE];
	struct amdgpu_ualink_msg ack;
	bool changed, restart;

	if (peer->state == AMDGPU_UALINK_CONN_OFFLINE) {
		*why = AMDGPU_UALINK_DROP_UNCONNECTED;
		return -EBADMSG;
	}
	cached = reply_find(peer, msg);
	if (cached) {
		peer->stats.duplicate_requests++;
		amdgpu_ualink_tx_reply(peer, cached->wire, AMDGPU_UALINK_MSG_HELLO_ACK);
		return 0;
	}

	changed = peer->generation_known && peer->generation != msg->generation;
	if ((msg->flags & AMDGPU_UALINK_MSG_F_PROBE) && !changed) {
		/* a keepalive: answered only on the connection it asks about */
		if (peer->state != AMDGPU_UALINK_CONN_ESTABLISHED) {
			if (peer->state == AMDGPU_UALINK_CONN_NOT_READY)
				conn_hello(peer);
			*why = AMDGPU_UALINK_DROP_UNCONNECTED;
			return -EBADMSG;
		}
		/*
		 * Not kept in the answer cache: answering a probe twice is
		 * harmless, and probes must not push out the answers that
		 * retransmitted NPA_REQs need
		 */
		ack = rsp_header(peer, msg);
		ack.type = AMDGPU_UALINK_MSG_HELLO_ACK;
		ack.generation = amdgpu_ualink_mbox_generation(peer->mbox);
		if (!WARN_ON_ONCE(amdgpu_ualink_msg_encode(&ack, wire)))
			amdgpu_ualink_tx_reply(peer, wire, AMDGPU_UALINK_MSG_HELLO_ACK);
		return 0;
	}
	if (changed)
		peer->stats.generation_changes++;
	restart = peer->state == AMDGPU_UALINK_CONN_ESTABLISHED &&
		  (changed || peer->traffic);
	if (restart)
		*event = conn_end_told(peer, AMDGPU_UALINK_PEER_RESET, -ENOLINK);
	peer->generation = msg->generation;
	peer->generation_known = true;
	conn_established(peer);
	/* a handshake of ours that crossed this one is done: stop resending */
	if (!list_empty(&peer->hello.link))
		req_finish(peer, &peer->hello, 0);

	ack = rsp_header(peer, msg);
	ack.type = AMDGPU_UALINK_MSG_HELLO_ACK;
	ack.generation = amdgpu_ualink_mbox_generation(peer->mbox);
	reply_send(peer, msg, &ack);
	/*
	 * Greet back after ending a connection, so that the peer ends its
	 * side too even if this HELLO was a stale copy: both ends then start
	 * the new connection together. On a connection without traffic the
	 * greeting is only answered, so this does not bounce back and forth.
	 */
	if (restart)
		conn_hello(peer);
	conn_kick(peer);
	return 0;
}

/* Does @rsp answer @req? */
static bool rsp_fits(const struct amdgpu_ualink_msg *req,
		     const struct amdgpu_ualink_msg *rsp)
{
	bool same_handle = req->handle[0] == rsp->handle[0] &&
			   req->handle[1] == rsp->handle[1];
	bool same_range = req->npa == rsp->npa && req->size == rsp->size;

	switch (req->type) {
	case AMDGPU_UALINK_MSG_HELLO:
		return rsp->type == AMDGPU_UALINK_MSG_HELLO_ACK;
	case AMDGPU_UALINK_MSG_NPA_REQ:
		return same_handle && (rsp->type == AMDGPU_UALINK_MSG_NPA_RSP ||
				       rsp->type == AMDGPU_UALINK_MSG_NPA_FAIL);
	case AMDGPU_UALINK_MSG_NPA_REVOKE:
		return same_handle && same_range &&
		       rsp->type == AMDGPU_UALINK_MSG_NPA_RELEASE;
	case AMDGPU_UALINK_MSG_NPA_RELEASE:
		return same_handle && same_range &&
		       rsp->type == AMDGPU_UALINK_MSG_NPA_REVOKE;
	default:
		return false;
	}
}

static int conn_on_response(struct amdgpu_ualink_peer *peer,
			    const struct amdgpu_ualink_msg *msg, int *event,
			    enum amdgpu_ualink_drop *why)
{
	struct amdgpu_ualink_req *req;
	bool changed;

	list_for_each_entry(req, &peer->reqs, link)
		if (req->sent && req->msg.txn == msg->txn)
			goto found;
	*why = AMDGPU_UALINK_DROP_UNMATCHED;
	return -EBADMSG;

found:
	if (!rsp_fits(&req->msg, msg)) {
		*why = AMDGPU_UALINK_DROP_MISMATCH;
		return -EBADMSG;
	}
	req->rsp = *msg;
	if (!req->internal) {
		peer->traffic = true;
		req_finish(peer, req, 0);
		conn_kick(peer);	/* room in the window */
		return 0;
	}

	/* HELLO_ACK */
	changed = peer->generation_known && peer->generation != msg->generation;
	if (changed)
		peer->stats.generation_changes++;
	if (changed && peer->state == AMDGPU_UALINK_CONN_ESTABLISHED &&
	    peer->traffic)	/* it reset since its HELLO crossed ours */
		*event = conn_end_told(peer, AMDGPU_UALINK_PEER_RESET, -ENOLINK);
	else
		req_finish(peer, req, 0);
	peer->generation = msg->generation;
	peer->generation_known = true;
	conn_established(peer);
	conn_kick(peer);
	return 0;
}

/**
 * conn_receive - act on a validated message from a peer
 * @peer: the sender, locked
 * @msg: the message
 * @rsp: for a request to pass to the handler: the default answer
 * @event: set to the event to report when the message ended the connection
 * @why: the drop reason when -EBADMSG is returned
 *
 * Returns: 0 when handled, 1 when @msg is a new request for the
 * export/import layer (then answer it with conn_answer()),
 * -EBADMSG when it is dropped.
 */
static int conn_receive(struct amdgpu_ualink_peer *peer,
			const struct amdgpu_ualink_msg *msg,
			struct amdgpu_ualink_msg *rsp, int *event,
			enum amdgpu_ualink_drop *why)
{
	struct amdgpu_ualink_reply *cached;

	lockdep_assert_held(&peer->lock);

	peer->rx_seq++;
	peer->heard = amdgpu_ualink_mbox_now(peer->mbox);
	if (msg->type == AMDGPU_UALINK_MSG_HELLO)
		return conn_on_hello(peer, msg, event, why);
	if (amdgpu_ualink_msg_is_response(msg))
		return conn_on_response(peer, msg, event, why);

	/* NPA_REQ, or an NPA_REVOKE or NPA_RELEASE that asks for an answer */
	if (peer->state != AMDGPU_UALINK_CONN_ESTABLISHED) {
		if (peer->state == AMDGPU_UALINK_CONN_NOT_READY)
			conn_hello(peer);
		*why = AMDGPU_UALINK_DROP_UNCONNECTED;
		return -EBADMSG;
	}
	cached = reply_find(peer, msg);
	if (cached) {
		peer->stats.duplicate_requests++;
		amdgpu_ualink_tx_reply(peer, cached->wire, cached->rsp_type);
		return 0;
	}
	peer->traffic = true;

	*rsp = rsp_header(peer, msg);
	rsp->handle[0] = msg->handle[0];
	rsp->handle[1] = msg->handle[1];
	switch (msg->type) {
	case AMDGPU_UALINK_MSG_NPA_REQ:
		rsp->type = AMDGPU_UALINK_MSG_NPA_FAIL;
		rsp->reason = AMDGPU_UALINK_FAIL_INVALID_HANDLE;
		break;
	case AMDGPU_UALINK_MSG_NPA_REVOKE:
		rsp->type = AMDGPU_UALINK_MSG_NPA_RELEASE;
		rsp->npa = msg->npa;
		rsp->size = msg->size;
		break;
	default:	/* NPA_RELEASE */
		rsp->type = AMDGPU_UALINK_MSG_NPA_REVOKE;
		rsp->npa = msg->npa;
		rsp->size = msg->size;
		break;
	}
	return 1;
}

/**
 * conn_answer - send the export/import layer's answer
 * @peer: the requester, locked
 * @req: its request, as passed to the handler
 * @rsp: the answer the handler made of the default
 *
 * An answer of a type the request does not allow, or that would not pass
 * the requester's validation, is a bug of the handler: it is replaced by
 * NPA_FAIL "error" (or the default for NPA_REVOKE and NPA_RELEASE).
 */
static void conn_answer(struct amdgpu_ualink_peer *peer,
			const struct amdgpu_ualink_msg *req,
			struct amdgpu_ualink_msg *rsp)
{
	struct amdgpu_ualink_msg hdr = rsp_header(peer, req);
	enum amdgpu_ualink_drop why;
	u8 wire[AMDGPU_UALINK_MSG_SIZE];
	bool ok;

	lockdep_assert_held(&peer->lock);

	/* the header is not the handler's to change, but for "release later" */
	rsp->version = hdr.version;
	rsp->flags = hdr.flags | (rsp->flags & AMDGPU_UALINK_MSG_F_LATER);
	rsp->sender = hdr.sender;
	rsp->receiver = hdr.receiver;
	rsp->txn = hdr.txn;
	rsp->handle[0] = req->handle[0];
	rsp->handle[1] = req->handle[1];
	if (rsp->type == AMDGPU_UALINK_MSG_NPA_FAIL) {
		rsp->npa = 0;
		rsp->size = 0;
	} else {
		rsp->reason = 0;
	}

	ok = rsp_fits(req, rsp) || (req->type == AMDGPU_UALINK_MSG_NPA_REQ &&
				    rsp->type == AMDGPU_UALINK_MSG_NPA_FAIL);
	ok = ok && !amdgpu_ualink_msg_encode(rsp, wire) &&
	     !amdgpu_ualink_msg_validate(rsp, hdr.sender, hdr.receiver, &why);
	if (WARN_ON_ONCE(!ok)) {
		*rsp = hdr;
		rsp->handle[0] = req->handle[0];
		rsp->handle[1] = req->handle[1];
		if (req->type == AMDGPU_UALINK_MSG_NPA_REQ) {
			rsp->type = AMDGPU_UALINK_MSG_NPA_FAIL;
			rsp->reason = AMDGPU_UALINK_FAIL_ERROR;
		} else {
			rsp->type = req->type == AMDGPU_UALINK_MSG_NPA_REVOKE ?
				    AMDGPU_UALINK_MSG_NPA_RELEASE :
				    AMDGPU_UALINK_MSG_NPA_REVOKE;
			rsp->npa = req->npa;
			rsp->size = req->size;
		}
	}
	/* the connection ended while the handler ran: nobody to answer */
	if (peer->state != AMDGPU_UALINK_CONN_ESTABLISHED)
		return;
	reply_send(peer, req, rsp);
}

/**
 * conn_tick - retransmit, and time out, a peer's requests
 * @peer: the peer, locked
 * @now: the mailbox's clock, amdgpu_ualink_mbox_now()
 * @event: set to the event to report when the peer was declared lost
 *
 * A request whose time is up fails alone when the peer sent anything since
 * it was first sent; the handshake's, or any request of a peer silent all
 * that time, ends the connection.
 *
 * Returns: true while requests are outstanding.
 */
static bool conn_tick(struct amdgpu_ualink_peer *peer,
		      unsigned long now, int *event)
{
	unsigned int retries = READ_ONCE(peer->mbox->retries);
	struct amdgpu_ualink_req *req, *next;
	bool room = false;

	lockdep_assert_held(&peer->lock);

	list_for_each_entry_safe(req, next, &peer->reqs, link) {
		if (!req->sent)
			continue;	/* the handshake, not sent yet */
		if (time_after_eq(now, req->deadline)) {
			if (req == &peer->hello &&
			    (req->msg.flags & AMDGPU_UALINK_MSG_F_PROBE) &&
			    peer->rx_seq != req->rx_seq) {
				/* its answer was lost, but the peer is alive */
				req_finish(peer, req, 0);
				continue;
			}
			if (!req->internal && peer->rx_seq != req->rx_seq) {
				req_finish(peer, req, -ETIMEDOUT);
				room = true;
				continue;
			}
			*event = conn_end_told(peer, AMDGPU_UALINK_PEER_LOST, -ETIMEDOUT);
			return false;
		}
		if (req->tries <= retries && time_after_eq(now, req->next_try))
			req_send(peer, req);
	}
	req_expire_queued(peer, now);
	if (room)
		conn_kick(peer);
	return !list_empty(&peer->reqs) || req_waiting(peer);
}

/**
 * amdgpu_ualink_mbox_submit - send a request to a peer
 * @mbox: our node
 * @peer: the peer's accelerator ID
 * @req: the request: @req->msg's type (NPA_REQ, NPA_REVOKE or NPA_RELEASE)
 *	and payload filled in, the rest zero
 *
 * Connects first if needed. Waiting for ring space and for the response is
 * bounded by the timeout. Wait for the result with amdgpu_ualink_mbox_wait().
 *
 * Returns: 0 when submitted; -EINVAL for a bad peer ID or request, -ENOLINK
 * when the peer is offline, -ENETDOWN while the node is quiesced, -ENOMEM,
 * -ESHUTDOWN when the node is being destroyed.
 */
int amdgpu_ualink_mbox_submit(struct amdgpu_ualink_mbox *mbox, u16 peer,
			      struct amdgpu_ualink_req *req)
{
	struct amdgpu_ualink_peer *p;
	int ret;

	if (READ_ONCE(mbox->dead))
		return -ESHUTDOWN;
	if (peer >= AMDGPU_UALINK_MAX_ACCELS || peer == mbox->self)
		return -EINVAL;
	if (req->msg.type != AMDGPU_UALINK_MSG_NPA_REQ &&
	    req->msg.type != AMDGPU_UALINK_MSG_NPA_REVOKE &&
	    req->msg.type != AMDGPU_UALINK_MSG_NPA_RELEASE)
		return -EINVAL;
	p = amdgpu_ualink_peer_get(mbox, peer);
	if (!p)
		return -ENOMEM;

	req->msg.flags = 0;
	req->internal = false;
	req->flow = NULL;
	req->charged = false;
	if (req->msg.type == AMDGPU_UALINK_MSG_NPA_REQ && req->owner &&
	    req->quota) {
		ret = owner_charge(mbox, req->owner, req->quota);
		if (ret)
			return ret;
		req->charged = true;
	}
	mutex_lock(&p->lock);
	ret = req_prepare(p, req);
	if (!ret && p->state == AMDGPU_UALINK_CONN_OFFLINE)
		ret = -ENOLINK;
	/*
	 * one queued before the flag was set is failed by the timer work
	 * that amdgpu_ualink_mbox_quiesce() queues after setting it
	 */
	if (!ret && READ_ONCE(mbox->quiesced))
		ret = -ENETDOWN;
	if (!ret)
		ret = req_queue(p, req);
	if (!ret) {
		conn_kick(p);
		amdgpu_ualink_tick_arm(mbox);
	}
	mutex_unlock(&p->lock);
	if (ret && req->charged) {
		req->charged = false;
		owner_uncharge(mbox, req->owner);
	}
	return ret;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_mbox_submit);

/**
 * amdgpu_ualink_mbox_fail - end a request that could not be submitted
 * @mbox: our node
 * @req: the request amdgpu_ualink_mbox_submit() refused
 * @status: its error, the one submit returned
 *
 * So that whoever waits for @req, or for any request of @mbox
 * (amdgpu_ualink_mbox_wait_ended()), sees it end as the mailbox's own do;
 * @req->ended is called as for those.
 */
void amdgpu_ualink_mbox_fail(struct amdgpu_ualink_mbox *mbox,
			     struct amdgpu_ualink_req *req, int status)
{
	void (*ended)(struct amdgpu_ualink_req *req) = req->ended;

	req->status = status;
	req->sent = false;
	complete_all(&req->done);
	if (ended)
		ended(req);
	req_ended(mbox);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_mbox_fail);

/**
 * amdgpu_ualink_mbox_ended - how many of this node's requests have ended
 * @mbox: our node
 *
 * A count that each request's end (answered, failed, timed out, cancelled)
 * increments after completing it. A caller waiting for any of many
 * requests reads it, then looks at its requests, then sleeps in
 * amdgpu_ualink_mbox_wait_ended() with what it read: an end between the
 * two is not missed.
 *
 * Returns: the count.
 */
u32 amdgpu_ualink_mbox_ended(struct amdgpu_ualink_mbox *mbox)
{
	return atomic_read_acquire(&mbox->ended);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_mbox_ended);

/**
 * amdgpu_ualink_mbox_wait_ended - sleep until requests of this node end
 * @mbox: our node
 * @seen: what amdgpu_ualink_mbox_ended() returned before the caller looked
 * @want: how many ends since @seen to wait for, at least 1
 *
 * For a caller whose every look at its requests costs: it looks again once
 * @want of them may have ended, not after every end. Ends are not told
 * apart (some may be other callers' requests, and one request may be the
 * caller's several times), so past @want == 1 the wait also ends no later
 * than a tick after the first end.
 *
 * Returns: 0 once @want requests ended since @seen, or one did and a tick
 * passed since the call; -ERESTARTSYS on a signal.
 */
int amdgpu_ualink_mbox_wait_ended(struct amdgpu_ualink_mbox *mbox, u32 seen,
				  u32 want)
{
	long ret;

	if (want > 1) {
		ret = wait_event_interruptible_timeout(mbox->ended_wq,
						       atomic_read(&mbox->ended) - seen >= want,
						       1);
		if (ret)
			return ret < 0 ? ret : 0;
	}
	return wait_event_interruptible(mbox->ended_wq,
					atomic_read(&mbox->ended) != seen);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_mbox_wait_ended);

/**
 * amdgpu_ualink_mbox_cancel - give up on a request
 * @mbox: our node
 * @req: a submitted request
 *
 * A response arriving later is dropped as unmatched. Afterwards @req may be
 * freed; its status is -ECANCELED unless it had finished.
 */
void amdgpu_ualink_mbox_cancel(struct amdgpu_ualink_mbox *mbox,
			       struct amdgpu_ualink_req *req)
{
	struct amdgpu_ualink_peer *peer = req->peer;

	mutex_lock(&peer->lock);
	if (!completion_done(&req->done)) {
		req_finish(peer, req, -ECANCELED);
		conn_kick(peer);
	}
	mutex_unlock(&peer->lock);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_mbox_cancel);

/**
 * amdgpu_ualink_mbox_wait - wait for a submitted request
 * @mbox: our node
 * @req: the request
 *
 * The wait is interruptible; an interrupted request is cancelled. It is
 * bounded by the timeout in force when the request was submitted.
 *
 * Returns: @req->status: 0 with @req->rsp filled in, -ETIMEDOUT, -ENOLINK,
 * -ENETDOWN (the node was quiesced), -ESHUTDOWN; or -ERESTARTSYS when
 * interrupted.
 */
int amdgpu_ualink_mbox_wait(struct amdgpu_ualink_mbox *mbox,
			    struct amdgpu_ualink_req *req)
{
	if (wait_for_completion_interruptible(&req->done)) {
		amdgpu_ualink_mbox_cancel(mbox, req);
		if (req->status == -ECANCELED)
			return -ERESTARTSYS;
	}
	return req->status;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_mbox_wait);

/**
 * amdgpu_ualink_mbox_call - send a request and wait for its response
 * @mbox: our node
 * @peer: the peer's accelerator ID
 * @req: the request, as for amdgpu_ualink_mbox_submit()
 *
 * Returns: as amdgpu_ualink_mbox_submit(), then as amdgpu_ualink_mbox_wait().
 */
int amdgpu_ualink_mbox_call(struct amdgpu_ualink_mbox *mbox, u16 peer,
			    struct amdgpu_ualink_req *req)
{
	int ret = amdgpu_ualink_mbox_submit(mbox, peer, req);

	return ret ?: amdgpu_ualink_mbox_wait(mbox, req);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_mbox_call);

/**
 * amdgpu_ualink_mbox_reset - our node reset: start a new generation
 * @mbox: our node
 *
 * Every connection ends (outstanding requests fail with -ENOLINK; no
 * callback, since the caller is resetting everything anyway) and every peer
 * we were connected to or greeting is greeted with the new generation, so
 * that it cleans up what it held from us or for us.
 */
void amdgpu_ualink_mbox_reset(struct amdgpu_ualink_mbox *mbox)
{
	struct amdgpu_ualink_peer *peer;
	enum amdgpu_ualink_conn_state was;
	unsigned long index;

	mutex_lock(&mbox->reset_lock);
	if (__ratelimit(&mbox->log_rs))
		pr_info("amdgpu_ualink: accelerator %u: new generation (reset, suspend or leaving), its peers are told and its grants and imports dropped\n",
			mbox->self);
	WRITE_ONCE(mbox->generation, mbox->generation + 1 ?: 1);
	xa_for_each(&mbox->peers, index, peer) {
		mutex_lock(&peer->lock);
		was = peer->state;
		if (was != AMDGPU_UALINK_CONN_OFFLINE) {
			conn_end(peer, AMDGPU_UALINK_PEER_RESET, -ENOLINK);
			if (was != AMDGPU_UALINK_CONN_NOT_READY)
				conn_hello(peer);
		}
		mutex_unlock(&peer->lock);
	}
	mutex_unlock(&mbox->reset_lock);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_mbox_reset);

/**
 * amdgpu_ualink_mbox_peer_offline - the backend reports a peer offline
 * @mbox: our node
 * @peer: the peer's accelerator ID
 *
 * Its connection ends: outstanding requests fail with -ENOLINK at once, and
 * so do new ones until amdgpu_ualink_mbox_peer_online(). The export/import
 * layer hears of it (%AMDGPU_UALINK_PEER_OFFLINE) from the node's worker
 * shortly after this returns.
 */
void amdgpu_ualink_mbox_peer_offline(struct amdgpu_ualink_mbox *mbox, u16 peer)
{
	struct amdgpu_ualink_peer *p = amdgpu_ualink_peer_get(mbox, peer);

	if (!p)
		return;
	mutex_lock(&p->lock);
	if (p->state != AMDGPU_UALINK_CONN_OFFLINE)
		conn_defer_event(p, conn_end_told(p, AMDGPU_UALINK_PEER_OFFLINE,
						  -ENOLINK));
	mutex_unlock(&p->lock);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_mbox_peer_offline);

/* A peer we have heard of, or NULL: unlike amdgpu_ualink_peer_get(), no new one. */
static struct amdgpu_ualink_peer *peer_known(struct amdgpu_ualink_mbox *mbox,
					     u16 peer)
{
	return peer < AMDGPU_UALINK_MAX_ACCELS ? xa_load(&mbox->peers, peer) : NULL;
}

/**
 * amdgpu_ualink_mbox_peer_forget - end a connection on our side
 * @mbox: our node
 * @peer: the peer's accelerator ID
 *
 * For a peer that may hold state we could not tell it to drop (an
 * NPA_REVOKE it never answered): the connection ends as if the peer were
 * lost (%AMDGPU_UALINK_PEER_LOST), and the next message either side sends
 * starts a new one, whose HELLO makes the peer end its side too, and so
 * drop what it held of ours, before anything else passes.
 */
void amdgpu_ualink_mbox_peer_forget(struct amdgpu_ualink_mbox *mbox, u16 peer)
{
	struct amdgpu_ualink_peer *p = peer_known(mbox, peer);

	if (!p)
		return;
	mutex_lock(&p->lock);
	if (p->state == AMDGPU_UALINK_CONN_ESTABLISHED ||
	    p->state == AMDGPU_UALINK_CONN_HELLO_SENT)
		conn_defer_event(p, conn_end_told(p, AMDGPU_UALINK_PEER_LOST,
						  -ENOLINK));
	mutex_unlock(&p->lock);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_mbox_peer_forget);

/**
 * amdgpu_ualink_mbox_peer_online - the backend reports a peer back
 * @mbox: our node
 * @peer: the peer's accelerator ID
 *
 * The next request to it starts a new connection.
 */
void amdgpu_ualink_mbox_peer_online(struct amdgpu_ualink_mbox *mbox, u16 peer)
{
	struct amdgpu_ualink_peer *p = peer_known(mbox, peer);

	if (!p)
		return;
	mutex_lock(&p->lock);
	if (p->state == AMDGPU_UALINK_CONN_OFFLINE)
		p->state = AMDGPU_UALINK_CONN_NOT_READY;
	mutex_unlock(&p->lock);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_mbox_peer_online);

/**
 * amdgpu_ualink_mbox_peer_state - a connection's state
 * @mbox: our node
 * @peer: the peer's accelerator ID
 * @state: its state
 * @generation: the peer's generation, 0 if never learnt
 *
 * Returns: 0, or -ENOENT when the peer never talked to us nor we to it.
 */
int amdgpu_ualink_mbox_peer_state(struct amdgpu_ualink_mbox *mbox, u16 peer,
				  enum amdgpu_ualink_conn_state *state,
				  u64 *generation)
{
	struct amdgpu_ualink_peer *p = NULL;

	if (peer < AMDGPU_UALINK_MAX_ACCELS)
		p = xa_load(&mbox->peers, peer);
	if (!p)
		return -ENOENT;
	mutex_lock(&p->lock);
	*state = p->state;
	*generation = p->generation_known ? p->generation : 0;
	mutex_unlock(&p->lock);
	return 0;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_mbox_peer_state);

/* The transport's events (&struct amdgpu_ualink_link_events) */

static void conn_peer_init(struct amdgpu_ualink_peer *peer)
{
	INIT_LIST_HEAD(&peer->reqs);
	INIT_LIST_HEAD(&peer->ctl);
	INIT_LIST_HEAD(&peer->flows);
	xa_init(&peer->flow_of);
	INIT_LIST_HEAD(&peer->hello.link);
	INIT_LIST_HEAD(&peer->hello.tx.link);
	init_completion(&peer->hello.done);
	peer->hello.internal = true;
	peer->pending_event = -1;
}

static void conn_peer_fini(struct amdgpu_ualink_peer *peer)
{
	WARN_ON(req_waiting(peer));
	xa_destroy(&peer->flow_of);
	kfree(peer->replies);
}

static void conn_visit(struct amdgpu_ualink_peer *peer)
{
	int event;

	lockdep_assert_held(&peer->lock);

	event = peer->pending_event;
	peer->pending_event = -1;
	conn_notify_locked(peer, event);
}

static void conn_rx(struct amdgpu_ualink_peer *peer,
		    const struct amdgpu_ualink_msg *msg)
{
	struct amdgpu_ualink_mbox *mbox = peer->mbox;
	struct amdgpu_ualink_msg rsp;
	enum amdgpu_ualink_drop why;
	int event = -1;
	int ret;

	lockdep_assert_held(&peer->lock);

	ret = conn_receive(peer, msg, &rsp, &event, &why);
	if (ret < 0)
		return amdgpu_ualink_rx_drop(peer, msg, why);
	amdgpu_ualink_rx_received(peer, msg);
	if (event < 0 && !ret)
		return;
	/* callbacks run unlocked; the worker keeps them in order */
	mutex_unlock(&peer->lock);
	conn_notify(peer, event);
	if (ret && mbox->handlers && mbox->handlers->request) {
		u64 start = ktime_get_ns();

		mbox->handlers->request(mbox->handlers_priv, peer->id, msg, &rsp);
		WRITE_ONCE(mbox->work.requests, mbox->work.requests + 1);
		WRITE_ONCE(mbox->work.request_ns, mbox->work.request_ns +
			   ktime_get_ns() - start);
	}
	mutex_lock(&peer->lock);
	if (ret)
		conn_answer(peer, msg, &rsp);
}

static bool conn_on_tick(struct amdgpu_ualink_peer *peer, unsigned long now,
			 bool stuck)
{
	int event = -1;
	bool busy;

	lockdep_assert_held(&peer->lock);

	if (stuck)
		event = conn_end_told(peer, AMDGPU_UALINK_PEER_LOST, -ETIMEDOUT);
	busy = conn_tick(peer, now, &event);
	conn_notify_locked(peer, event);
	return busy;
}

/*
 * Our requests would wait on the transport for as long as the mailbox stays
 * quiesced, which may be for good: they fail instead. The handshake's own
 * wait, which nobody waits for, is redone on resume.
 */
static void conn_quiesce(struct amdgpu_ualink_peer *peer)
{
	struct amdgpu_ualink_req *req, *next;

	lockdep_assert_held(&peer->lock);

	list_for_each_entry_safe(req, next, &peer->reqs, link) {
		if (!req->internal)
			req_finish(peer, req, -ENETDOWN);
		/* the silence that follows is ours: a probe would misread it */
		else if (req->msg.flags & AMDGPU_UALINK_MSG_F_PROBE)
			req_finish(peer, req, 0);
	}
	req_fail_queued(peer, -ENETDOWN);
}

static void keepalive_arm(struct amdgpu_ualink_mbox *mbox)
{
	unsigned long every = READ_ONCE(mbox->keepalive);

	if (every && !READ_ONCE(mbox->dead))
		queue_delayed_work(mbox->wq, &mbox->keepalive_work,
				   max(every / 4, 1UL));
}

/*
 * Probe every connected peer that stayed silent for the keepalive time.
 * A probe is a request like any other from then on: the timer work
 * retransmits it and, if the peer stays silent, declares the peer lost.
 */
static void keepalive_work(struct work_struct *work)
{
	struct amdgpu_ualink_mbox *mbox =
		container_of(work, struct amdgpu_ualink_mbox, keepalive_work.work);
	unsigned long now = amdgpu_ualink_mbox_now(mbox), index;
	unsigned long every = READ_ONCE(mbox->keepalive);
	struct amdgpu_ualink_peer *peer;

	if (!every)
		return;
	/* quiesced: nothing can be sent, and the peers' silence is ours */
	if (!READ_ONCE(mbox->quiesced)) {
		xa_for_each(&mbox->peers, index, peer) {
			mutex_lock(&peer->lock);
			if (peer->state == AMDGPU_UALINK_CONN_ESTABLISHED &&
			    time_after_eq(now, peer->heard + every))
				conn_probe(peer);
			mutex_unlock(&peer->lock);
		}
	}
	keepalive_arm(mbox);
}

/**
 * amdgpu_ualink_mbox_set_keepalive - configure how a quiet peer is probed
 * @mbox: the node
 * @keepalive_ms: how long a connected peer may stay silent before it is
 *	probed, 0 for never, else at least
 *	%AMDGPU_UALINK_MBOX_KEEPALIVE_MIN_MS (default: the module parameter
 *	``mbox_keepalive_ms``, 2000)
 *
 * A peer that answers no probe, and sends nothing else, for the request
 * timeout (amdgpu_ualink_mbox_set_timeout()) is declared lost.
 *
 * Context: process context; not from the mailbox's callbacks.
 * Returns: 0, or -EINVAL below 100 ms (but for 0) or above one hour.
 */
int amdgpu_ualink_mbox_set_keepalive(struct amdgpu_ualink_mbox *mbox,
				     unsigned int keepalive_ms)
{
	if ((keepalive_ms && keepalive_ms < AMDGPU_UALINK_MBOX_KEEPALIVE_MIN_MS) ||
	    keepalive_ms > 3600 * MSEC_PER_SEC)
		return -EINVAL;
	cancel_delayed_work_sync(&mbox->keepalive_work);
	WRITE_ONCE(mbox->keepalive,
		   keepalive_ms ? max(msecs_to_jiffies(keepalive_ms), 1UL) : 0);
	keepalive_arm(mbox);
	return 0;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_mbox_set_keepalive);

#if IS_ENABLED(CONFIG_KUNIT)
/**
 * amdgpu_ualink_mbox_keepalive_now - run the keepalive work now and wait
 * @mbox: the node
 *
 * For tests, with amdgpu_ualink_mbox_advance(): the probes that are due by
 * the mailbox's clock go out before this returns.
 */
void amdgpu_ualink_mbox_keepalive_now(struct amdgpu_ualink_mbox *mbox)
{
	mod_delayed_work(mbox->wq, &mbox->keepalive_work, 0);
	flush_delayed_work(&mbox->keepalive_work);
}
EXPORT_SYMBOL_IF_KUNIT(amdgpu_ualink_mbox_keepalive_now);
#endif

static const struct amdgpu_ualink_link_events conn_events = {
	.peer_init = conn_peer_init,
	.peer_fini = conn_peer_fini,
	.visit = conn_visit,
	.receive = conn_rx,
	.tick = conn_on_tick,
	.quiesce = conn_quiesce,
};

/**
 * amdgpu_ualink_mbox_create - set up the mailbox of one node
 * @self: the node's accelerator ID
 * @ops: its transport
 * @ops_priv: passed to @ops
 * @handlers: the export/import layer's callbacks, or NULL: requests then get
 *	their default answer and connection ends are not reported
 * @handlers_priv: passed to @handlers
 *
 * Requests time out after the module parameters ``mbox_timeout_ms`` and
 * ``mbox_retries`` (default 5 s and 3), or the defaults when those are out
 * of range; amdgpu_ualink_mbox_set_timeout() changes them per node.
 *
 * Returns: the mailbox, or an ERR_PTR(): -EINVAL for a bad ID, -ENOMEM.
 */
struct amdgpu_ualink_mbox *
amdgpu_ualink_mbox_create(u16 self, const struct amdgpu_ualink_mbox_ops *ops,
			  void *ops_priv,
			  const struct amdgpu_ualink_mbox_handlers *handlers,
			  void *handlers_priv)
{
	struct amdgpu_ualink_mbox *mbox;
	int ret;

	if (self >= AMDGPU_UALINK_MAX_ACCELS)
		return ERR_PTR(-EINVAL);

	mbox = kzalloc_obj(*mbox, GFP_KERNEL);
	if (!mbox)
		return ERR_PTR(-ENOMEM);
	ret = amdgpu_ualink_link_init(mbox, self, ops, ops_priv, &conn_events);
	if (ret) {
		kfree(mbox);
		return ERR_PTR(ret);
	}
	mbox->handlers = handlers;
	mbox->handlers_priv = handlers_priv;
	init_waitqueue_head(&mbox->ended_wq);
	mutex_init(&mbox->reset_lock);
	xa_init(&mbox->owners);
	mutex_init(&mbox->owners_lock);
	ratelimit_state_init(&mbox->log_rs, DEFAULT_RATELIMIT_INTERVAL,
			     DEFAULT_RATELIMIT_BURST);
	/*
	 * A generation and transaction numbers nobody saw before, so that a
	 * reloaded node looks reset and its requests never match answers
	 * cached for its previous life.
	 */
	mbox->generation = get_random_u64() | 1;
	atomic_set(&mbox->next_txn, get_random_u32());
	INIT_DELAYED_WORK(&mbox->keepalive_work, keepalive_work);
	if (amdgpu_ualink_mbox_set_keepalive(mbox, READ_ONCE(mbox_keepalive_ms)))
		amdgpu_ualink_mbox_set_keepalive(mbox,
						 AMDGPU_UALINK_MBOX_KEEPALIVE_MS);
	return mbox;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_mbox_create);

/**
 * amdgpu_ualink_mbox_destroy - tear a node's mailbox down
 * @mbox: the node, or NULL
 *
 * Requests still outstanding fail with -ESHUTDOWN and no callback is
 * called. The caller guarantees that no other thread calls into @mbox
 * (submit, wait, cancel...) during or after this, and the backend that it
 * rings no doorbell of @mbox once this returns.
 */
void amdgpu_ualink_mbox_destroy(struct amdgpu_ualink_mbox *mbox)
{
	struct amdgpu_ualink_peer *peer;
	unsigned long index;

	if (!mbox)
		return;

	/* first: a probe it sends would queue the timer work again */
	cancel_delayed_work_sync(&mbox->keepalive_work);
	amdgpu_ualink_link_stop(mbox);
	xa_for_each(&mbox->peers, index, peer) {
		mutex_lock(&peer->lock);
		conn_end(peer, AMDGPU_UALINK_PEER_OFFLINE, -ESHUTDOWN);
		mutex_unlock(&peer->lock);
	}
	amdgpu_ualink_link_fini(mbox);
	WARN_ON(!xa_empty(&mbox->owners));
	xa_destroy(&mbox->owners);
	mutex_destroy(&mbox->owners_lock);
	mutex_destroy(&mbox->reset_lock);
	kfree(mbox);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_mbox_destroy);

/**
 * amdgpu_ualink_mbox_generation - the node's current generation
 * @mbox: the node
 *
 * Returns: the generation sent in HELLO; it changes at each reset.
 */
u64 amdgpu_ualink_mbox_generation(struct amdgpu_ualink_mbox *mbox)
{
	return READ_ONCE(mbox->generation);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_mbox_generation);

/**
 * amdgpu_ualink_mbox_peer_bytes - memory the node spends on one peer
 * @mbox: the node
 * @peer: the peer's ID
 *
 * Returns: bytes allocated for the peer's state (0 if it never talked),
 * not counting messages in flight.
 */
size_t amdgpu_ualink_mbox_peer_bytes(struct amdgpu_ualink_mbox *mbox, u16 peer)
{
	struct amdgpu_ualink_peer *p = xa_load(&mbox->peers, peer);
	size_t bytes;

	if (!p)
		return 0;
	mutex_lock(&p->lock);
	bytes = ksize(p) + (p->replies ? ksize(p->replies) : 0);
	mutex_unlock(&p->lock);
	return bytes;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_mbox_peer_bytes);

static const char *const conn_state_names[] = {
	[AMDGPU_UALINK_CONN_NOT_READY] = "not_ready",
	[AMDGPU_UALINK_CONN_HELLO_SENT] = "hello_sent",
	[AMDGPU_UALINK_CONN_ESTABLISHED] = "established",
	[AMDGPU_UALINK_CONN_OFFLINE] = "offline",
};

static void print_peer(struct drm_printer *p, struct amdgpu_ualink_peer *peer)
{
	const struct amdgpu_ualink_mbox_stats *s = &peer->stats;
	unsigned int i;

	lockdep_assert_held(&peer->lock);

	drm_printf(p, "peer %u: %s generation %#llx ring %u/%u queued %s\n",
		   peer->id, conn_state_names[peer->state],
		   peer->generation_known ? peer->generation : 0,
		   peer->tx_head - peer->tx_tail, AMDGPU_UALINK_RING_ENTRIES,
		   list_empty(&peer->txq) ? "no" : "yes");
	for (i = AMDGPU_UALINK_MSG_HELLO; i < AMDGPU_UALINK_MSG_TYPES; i++)
		if (s->sent[i] || s->received[i] || s->retransmitted[i])
			drm_printf(p, "  %-11s sent %llu received %llu retransmitted %llu\n",
				   amdgpu_ualink_msg_type_name(i), s->sent[i],
				   s->received[i], s->retransmitted[i]);
	for (i = 0; i < AMDGPU_UALINK_DROP_REASONS; i++)
		if (s->dropped[i])
			drm_printf(p, "  dropped %s %llu\n",
				   amdgpu_ualink_drop_name(i), s->dropped[i]);
	for (i = 0; i < AMDGPU_UALINK_FAULT_KINDS; i++)
		if (s->faults[i])
			drm_printf(p, "  injected %s %llu\n",
				   amdgpu_ualink_fault_name(i), s->faults[i]);
	drm_printf(p, "  timeouts %llu resets %llu generation_changes %llu",
		   s->timeouts, s->resets, s->generation_changes);
	drm_printf(p, " duplicate_requests %llu ring_full %llu replies_lost %llu probes %llu\n",
		   s->duplicate_requests, s->ring_full, s->replies_lost,
		   s->probes);
}

/**
 * amdgpu_ualink_mbox_print - print the node's peers and counters
 * @mbox: the node
 * @p: where to print, e.g. a debugfs file
 */
void amdgpu_ualink_mbox_print(struct amdgpu_ualink_mbox *mbox,
			      struct drm_printer *p)
{
	struct amdgpu_ualink_peer *peer;
	unsigned long index;

	drm_printf(p, "node %u generation %#llx peers %u\n", mbox->self,
		   amdgpu_ualink_mbox_generation(mbox),
		   amdgpu_ualink_mbox_peers(mbox));
	xa_for_each(&mbox->peers, index, peer) {
		mutex_lock(&peer->lock);
		print_peer(p, peer);
		mutex_unlock(&peer->lock);
	}
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_mbox_print);
