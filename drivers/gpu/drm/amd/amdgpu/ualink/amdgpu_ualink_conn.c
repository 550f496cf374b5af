// SPDX-License-Identifier: GPL-2.0 OR MIT

#include <linux/export.h>
#include <linux/jiffies.h>
#include <linux/slab.h>

#include "amdgpu_ualink_mbox_internal.h"

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

static void req_finish(struct amdgpu_ualink_peer *peer,
		       struct amdgpu_ualink_req *req, int status)
{
	lockdep_assert_held(&peer->lock);

	list_del_init(&req->link);
	list_del_init(&req->tx.link);
	if (status == -ETIMEDOUT)
		peer->stats.timeouts++;
	req->status = status;
	complete_all(&req->done);
	req_ended(peer->mbox);
}

/* Send or resend a request. */
static void req_send(struct amdgpu_ualink_peer *peer,
		     struct amdgpu_ualink_req *req)
{
	struct amdgpu_ualink_mbox *mbox = peer->mbox;

	lockdep_assert_held(&peer->lock);

	if (!req->sent) {
		/* its time starts now, and what the peer says from now on */
		req->deadline = jiffies + READ_ONCE(mbox->timeout);
		req->rx_seq = peer->rx_seq;
		if (!req->internal)
			req->seq = peer->tx_seq++;
	}
	req->sent = true;
	/* one still waiting for ring space stays so, and loses no attempt */
	if (!list_empty(&req->tx.link)) {
		req->next_try = jiffies + READ_ONCE(mbox->first_try);
		return;
	}
	req->next_try = jiffies + (READ_ONCE(mbox->first_try) << req->tries);
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

/*
 * Greet the peer: from NOT_READY this starts the handshake; on an
 * established connection it only tells the peer our generation again.
 */
static void conn_hello(struct amdgpu_ualink_peer *peer)
{
	struct amdgpu_ualink_req *hello = &peer->hello;

	lockdep_assert_held(&peer->lock);

	if (!list_empty(&hello->link))	/* greeting already */
		return;
	hello->msg = (struct amdgpu_ualink_msg) {
		.type = AMDGPU_UALINK_MSG_HELLO,
		.generation = amdgpu_ualink_mbox_generation(peer->mbox),
	};
	if (WARN_ON(req_prepare(peer, hello)))
		return;
	hello->internal = true;
	list_add_tail(&hello->link, &peer->reqs);
	if (peer->state == AMDGPU_UALINK_CONN_NOT_READY)
		peer->state = AMDGPU_UALINK_CONN_HELLO_SENT;
	req_send(peer, hello);
}

/*
 * Move requests on as far as the connection allows. At most
 * %AMDGPU_UALINK_IN_FLIGHT are in flight, counted in the order they were
 * first sent, so that the peer's answer cache covers every retransmission.
 */
static void conn_kick(struct amdgpu_ualink_peer *peer)
{
	struct amdgpu_ualink_req *req, *next, *oldest = NULL;

	lockdep_assert_held(&peer->lock);

	switch (peer->state) {
	case AMDGPU_UALINK_CONN_NOT_READY:
		if (!list_empty(&peer->reqs))
			conn_hello(peer);
		break;
	case AMDGPU_UALINK_CONN_ESTABLISHED:
		list_for_each_entry_safe(req, next, &peer->reqs, link) {
			if (req->internal)
				continue;
			if (req->sent) {
				oldest = oldest ?: req;
				continue;
			}
			if (oldest && peer->tx_seq - oldest->seq >= AMDGPU_UALINK_IN_FLIGHT)
				break;
			req_send(peer, req);
			oldest = oldest ?: req;
		}
		break;
	default:
		break;
	}
}

/**
 * amdgpu_ualink_conn_end - end a peer's connection
 * @peer: the peer, locked
 * @why: the reason, reported to the export/import layer
 * @err: the status outstanding requests fail with
 *
 * Returns: the event for amdgpu_ualink_peer_notify(), to be called once
 * the peer is unlocked.
 */
int amdgpu_ualink_conn_end(struct amdgpu_ualink_peer *peer,
			   enum amdgpu_ualink_peer_event why, int err)
{
	struct amdgpu_ualink_req *req, *next;

	lockdep_assert_held(&peer->lock);

	list_for_each_entry_safe(req, next, &peer->reqs, link)
		req_finish(peer, req, err);
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
	if (changed)
		peer->stats.generation_changes++;
	restart = peer->state == AMDGPU_UALINK_CONN_ESTABLISHED &&
		  (changed || peer->traffic);
	if (restart)
		*event = amdgpu_ualink_conn_end(peer, AMDGPU_UALINK_PEER_RESET,
						-ENOLINK);
	peer->generation = msg->generation;
	peer->generation_known = true;
	peer->state = AMDGPU_UALINK_CONN_ESTABLISHED;
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
		*event = amdgpu_ualink_conn_end(peer, AMDGPU_UALINK_PEER_RESET,
						-ENOLINK);
	else
		req_finish(peer, req, 0);
	peer->generation = msg->generation;
	peer->generation_known = true;
	peer->state = AMDGPU_UALINK_CONN_ESTABLISHED;
	conn_kick(peer);
	return 0;
}

/**
 * amdgpu_ualink_conn_receive - act on a validated message from a peer
 * @peer: the sender, locked
 * @msg: the message
 * @rsp: for a request to pass to the handler: the default answer
 * @event: set to the event to report when the message ended the connection
 * @why: the drop reason when -EBADMSG is returned
 *
 * Returns: 0 when handled, 1 when @msg is a new request for the
 * export/import layer (then answer it with amdgpu_ualink_conn_answer()),
 * -EBADMSG when it is dropped.
 */
int amdgpu_ualink_conn_receive(struct amdgpu_ualink_peer *peer,
			       const struct amdgpu_ualink_msg *msg,
			       struct amdgpu_ualink_msg *rsp, int *event,
			       enum amdgpu_ualink_drop *why)
{
	struct amdgpu_ualink_reply *cached;

	lockdep_assert_held(&peer->lock);

	peer->rx_seq++;
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
 * amdgpu_ualink_conn_answer - send the export/import layer's answer
 * @peer: the requester, locked
 * @req: its request, as passed to the handler
 * @rsp: the answer the handler made of the default
 *
 * An answer of a type the request does not allow, or that would not pass
 * the requester's validation, is a bug of the handler: it is replaced by
 * NPA_FAIL "error" (or the default for NPA_REVOKE and NPA_RELEASE).
 */
void amdgpu_ualink_conn_answer(struct amdgpu_ualink_peer *peer,
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
 * amdgpu_ualink_conn_tick - retransmit, and time out, a peer's requests
 * @peer: the peer, locked
 * @now: jiffies
 * @event: set to the event to report when the peer was declared lost
 *
 * A request whose time is up fails alone when the peer sent anything since
 * it was first sent; the handshake's, or any request of a peer silent all
 * that time, ends the connection.
 *
 * Returns: true while requests are outstanding.
 */
bool amdgpu_ualink_conn_tick(struct amdgpu_ualink_peer *peer,
			     unsigned long now, int *event)
{
	unsigned int retries = READ_ONCE(peer->mbox->retries);
	struct amdgpu_ualink_req *req, *next;
	bool room = false;

	lockdep_assert_held(&peer->lock);

	list_for_each_entry_safe(req, next, &peer->reqs, link) {
		if (!req->sent)
			continue;	/* waits for room; its time has not started */
		if (time_after_eq(now, req->deadline)) {
			if (!req->internal && peer->rx_seq != req->rx_seq) {
				req_finish(peer, req, -ETIMEDOUT);
				room = true;
				continue;
			}
			*event = amdgpu_ualink_conn_end(peer, AMDGPU_UALINK_PEER_LOST,
							-ETIMEDOUT);
			return false;
		}
		if (req->tries <= retries && time_after_eq(now, req->next_try))
			req_send(peer, req);
	}
	if (room)
		conn_kick(peer);
	return !list_empty(&peer->reqs);
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
 * when the peer is offline, -ENOMEM, -ESHUTDOWN when the node is being
 * destroyed.
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
	mutex_lock(&p->lock);
	ret = req_prepare(p, req);
	if (!ret && p->state == AMDGPU_UALINK_CONN_OFFLINE)
		ret = -ENOLINK;
	if (!ret) {
		list_add_tail(&req->link, &p->reqs);
		conn_kick(p);
		amdgpu_ualink_tick_arm(mbox);
	}
	mutex_unlock(&p->lock);
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
 * (amdgpu_ualink_mbox_wait_ended()), sees it end as the mailbox's own do.
 */
void amdgpu_ualink_mbox_fail(struct amdgpu_ualink_mbox *mbox,
			     struct amdgpu_ualink_req *req, int status)
{
	req->status = status;
	complete_all(&req->done);
	req_ended(mbox);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_mbox_fail);

/**
 * amdgpu_ualink_mbox_ended - how many of this node's requests have ended
 * @mbox: our node
 *
 * A count that each request's end (answered, failed, timed out, cancelled)
 * increments after completing it. A caller waiting for any of many
 * requests reads it, then looks at its requests, and when none is done
 * sleeps in amdgpu_ualink_mbox_wait_ended() with what it read: an end
 * between the two is not missed.
 *
 * Returns: the count.
 */
u32 amdgpu_ualink_mbox_ended(struct amdgpu_ualink_mbox *mbox)
{
	return atomic_read_acquire(&mbox->ended);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_mbox_ended);

/**
 * amdgpu_ualink_mbox_wait_ended - sleep until a request of this node ends
 * @mbox: our node
 * @seen: what amdgpu_ualink_mbox_ended() returned before the caller looked
 *
 * Returns: 0 once a request ended since @seen; -ERESTARTSYS on a signal.
 */
int amdgpu_ualink_mbox_wait_ended(struct amdgpu_ualink_mbox *mbox, u32 seen)
{
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
 * -ESHUTDOWN; or -ERESTARTSYS when interrupted.
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
	WRITE_ONCE(mbox->generation, mbox->generation + 1 ?: 1);
	xa_for_each(&mbox->peers, index, peer) {
		mutex_lock(&peer->lock);
		was = peer->state;
		if (was != AMDGPU_UALINK_CONN_OFFLINE) {
			amdgpu_ualink_conn_end(peer, AMDGPU_UALINK_PEER_RESET,
					       -ENOLINK);
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
		amdgpu_ualink_peer_defer_event(p,
					       amdgpu_ualink_conn_end(p, AMDGPU_UALINK_PEER_OFFLINE,
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
		amdgpu_ualink_peer_defer_event(p,
					       amdgpu_ualink_conn_end(p, AMDGPU_UALINK_PEER_LOST,
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
