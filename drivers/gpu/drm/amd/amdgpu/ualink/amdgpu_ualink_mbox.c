// SPDX-License-Identifier: GPL-2.0 OR MIT

#include <kunit/visibility.h>
#include <linux/export.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/lockdep.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>

#include "amdgpu_ualink_mbox_internal.h"
#include "amdgpu_ualink_npa.h"
#include "amdgpu_ualink_trace.h"

/**
 * DOC: Mailbox rings and transport
 *
 * Each node (&struct amdgpu_ualink_mbox) has, at every other node, one
 * receive ring of %AMDGPU_UALINK_RING_ENTRIES 64-byte entries in the
 * reserved head of that node's NPA window (amdgpu_ualink_npa_ring()). The
 * ring a message arrives in names its sender. A sender writes entries and
 * then publishes its producer index and rings the receiver's doorbell; the
 * receiver reads the entries, returns its consumer index and rings the
 * sender's doorbell in turn. How the bytes move is the backend's business
 * (&struct amdgpu_ualink_mbox_ops): the emulated pod copies memory, a
 * hardware backend would use its copy engine and doorbell registers.
 *
 * amdgpu_ualink_mbox_doorbell() only sets the peer's bit in a bitmap of
 * every possible sender (128 bytes a node, so no doorbell is ever lost) and
 * queues the node's receive work; it may be called from hard interrupt
 * context. The work, on an ordered workqueue of the node, reads every new
 * entry of each ringing peer's ring, decodes and validates it
 * (amdgpu_ualink_msg_decode(), amdgpu_ualink_msg_validate()), hands it to
 * the connection layer and counts it as received or as dropped for one
 * reason. It then returns the consumer index and writes whatever waits for
 * space in our ring at that peer, since a doorbell also means "I consumed
 * your entries". It yields after %AMDGPU_UALINK_RX_BATCH peers so that the
 * timer work is not starved by a peer that keeps ringing.
 *
 * The receive path never waits for ring space: an answer that does not fit
 * is queued and written when the peer frees entries. A message that waits
 * longer than the request timeout means the peer stopped consuming: its
 * connection ends (%AMDGPU_UALINK_PEER_LOST). At most
 * %AMDGPU_UALINK_TX_QUEUED answers wait for one peer; more are lost like
 * dropped messages, so a peer that asks faster than it reads cannot make us
 * allocate without bound. A producer index more than a ring ahead of what
 * was consumed cannot come from a correct sender (nor from one whose ring
 * the backend did not reset with it after a reload): the entries are
 * skipped and counted (%AMDGPU_UALINK_DROP_RING).
 *
 * Fault injection (amdgpu_ualink_fault.c) sits where a message is written:
 * it can be dropped, corrupted, written twice, or held back for a delay or
 * until the next message to the same peer has been written.
 *
 * Peer state is allocated the first time a peer rings us, we send to it or
 * the backend reports it offline, so the 1,024 possible peers of a pod cost
 * nothing until then. The
 * timer work, on the same ordered workqueue, runs while anything is in
 * flight: retransmissions, timeouts, held messages, full rings.
 *
 * This file is the lower of the mailbox's two layers. The connection layer
 * (amdgpu_ualink_conn.c) creates the node and calls down into it; the
 * transport calls up only through the &struct amdgpu_ualink_link_events
 * the connection layer registered: when a peer's state is allocated and
 * freed, and from its worker, before each look at a peer's ring, for each
 * valid message received (the connection layer calls the export/import
 * layer and sends the answer back down) and at each run of the timer.
 */

static unsigned int mbox_timeout_ms = AMDGPU_UALINK_MBOX_TIMEOUT_MS;
module_param(mbox_timeout_ms, uint, 0644);
MODULE_PARM_DESC(mbox_timeout_ms,
		 "Time a mailbox request may take, retransmissions included, for nodes created afterwards (default 5000)");

static unsigned int mbox_retries = AMDGPU_UALINK_MBOX_RETRIES;
module_param(mbox_retries, uint, 0644);
MODULE_PARM_DESC(mbox_retries,
		 "Retransmissions of a mailbox request within its time, for nodes created afterwards (default 3)");

#ifdef CONFIG_LOCKDEP
/* held, for reading, by the worker: what may block must not run there */
static struct lockdep_map mbox_worker_map = {
	.name = "amdgpu_ualink_mbox_worker",
};

#define worker_begin()	lock_map_acquire_read(&mbox_worker_map)
#define worker_end()	lock_map_release(&mbox_worker_map)
#else
#define worker_begin()	do { } while (0)
#define worker_end()	do { } while (0)
#endif

/**
 * amdgpu_ualink_might_block - about to wait for a user or the GPU
 *
 * The mailbox's worker answers every peer of a node and runs its timers:
 * it must never wait for anything a user or GPU work decides the length
 * of (a buffer's reservation, a fence, pinning that may evict), or one
 * user's job could make the node fall silent for the whole pod. The core
 * calls this before such waits; lockdep reports a call from the worker,
 * and from under a lock the worker takes, which would make it wait as well.
 *
 * Context: process context.
 */
void amdgpu_ualink_might_block(void)
{
	might_sleep();
#ifdef CONFIG_LOCKDEP
	lock_map_acquire(&mbox_worker_map);
	lock_map_release(&mbox_worker_map);
#endif
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_might_block);

/*
 * May the transport be used? Holds hw_sem for reading until hw_end() if
 * so; not while the mailbox is quiesced. Held around single calls into the
 * transport only, never across an allocation: a GPU reset quiesces the
 * mailbox inside a dma-fence signalling section.
 */
static bool hw_begin(struct amdgpu_ualink_mbox *mbox)
{
	down_read(&mbox->hw_sem);
	if (!mbox->quiesced)
		return true;
	up_read(&mbox->hw_sem);
	return false;
}

static void hw_end(struct amdgpu_ualink_mbox *mbox)
{
	up_read(&mbox->hw_sem);
}

/* Room in our ring at the peer? None while quiesced. */
static bool tx_room(struct amdgpu_ualink_peer *peer)
{
	struct amdgpu_ualink_mbox *mbox = peer->mbox;

	lockdep_assert_held(&peer->lock);

	if (peer->tx_head - peer->tx_tail < AMDGPU_UALINK_RING_ENTRIES)
		return true;
	/*
	 * Looks full: read what the peer consumed. An index that claims
	 * more than we wrote is nonsense and leaves the ring full.
	 */
	if (!hw_begin(mbox))
		return false;
	peer->tx_tail = mbox->ops->peer_tail(mbox->ops_priv, peer->id);
	hw_end(mbox);
	return peer->tx_head - peer->tx_tail < AMDGPU_UALINK_RING_ENTRIES;
}

/* Write one entry into our ring at the peer, if there is room. */
static bool tx_write(struct amdgpu_ualink_peer *peer, const u8 *wire, u8 type)
{
	struct amdgpu_ualink_mbox *mbox = peer->mbox;
	int ret;

	if (!tx_room(peer) || !hw_begin(mbox))
		return false;
	ret = mbox->ops->post(mbox->ops_priv, peer->id,
			      peer->tx_head % AMDGPU_UALINK_RING_ENTRIES, wire);
	hw_end(mbox);
	if (ret)
		return false;
	peer->tx_head++;
	peer->stats.sent[type]++;
	trace_amdgpu_ualink_msg_send(mbox->self, peer->id, type,
				     amdgpu_ualink_msg_wire_txn(wire));
	return true;
}

static void tx_done(struct amdgpu_ualink_peer *peer, struct amdgpu_ualink_tx *tx)
{
	list_del_init(&tx->link);
	if (tx->owned) {
		peer->owned--;
		kfree(tx);
	}
}

/*
 * Hold a copy of @tx back, as if it were slow on the wire: the original may
 * belong to a request that completes (and is freed) before the copy lands.
 */
static bool tx_hold(struct amdgpu_ualink_peer *peer,
		    struct amdgpu_ualink_tx *tx, u32 delay_ms, bool reorder)
{
	struct amdgpu_ualink_tx *copy = kmemdup(tx, sizeof(*tx), GFP_KERNEL);

	if (!copy)
		return false;
	INIT_LIST_HEAD(&copy->link);
	copy->owned = true;
	peer->owned++;
	copy->due = amdgpu_ualink_mbox_now(peer->mbox) + msecs_to_jiffies(delay_ms);
	copy->reorder = reorder;
	list_add_tail(&copy->link, &peer->held);
	amdgpu_ualink_tick_arm(peer->mbox);
	tx_done(peer, tx);
	return true;
}

/* Messages held for reordering go right after the one just written. */
static void tx_release_reordered(struct amdgpu_ualink_peer *peer)
{
	struct amdgpu_ualink_tx *tx, *next;

	list_for_each_entry_safe(tx, next, &peer->held, link)
		if (tx->reorder)
			list_move(&tx->link, &peer->txq);
}

/*
 * Carry out the fault decided for @tx, the head of the queue. Returns false
 * when the ring is full and the queue must wait.
 */
static bool tx_one(struct amdgpu_ualink_peer *peer, struct amdgpu_ualink_tx *tx)
{
	struct amdgpu_ualink_mbox *mbox = peer->mbox;
	enum amdgpu_ualink_fault_kind kind = AMDGPU_UALINK_FAULT_NONE;
	u8 bad[AMDGPU_UALINK_MSG_SIZE];
	u32 delay_ms = 0;

	/* decide nothing before there is room to carry it out */
	if (!tx_room(peer))
		return false;
	if (!tx->faulted) {
		kind = amdgpu_ualink_fault_decide(&mbox->fault, tx->type,
						  &delay_ms);
		tx->faulted = true;
		if (kind != AMDGPU_UALINK_FAULT_NONE)
			peer->stats.faults[kind]++;
	}

	switch (kind) {
	case AMDGPU_UALINK_FAULT_DROP:
		tx_done(peer, tx);
		return true;
	case AMDGPU_UALINK_FAULT_DELAY:
	case AMDGPU_UALINK_FAULT_REORDER:
		if (tx_hold(peer, tx, delay_ms,
			    kind == AMDGPU_UALINK_FAULT_REORDER))
			return true;
		/* without memory for the copy, no fault */
		if (!tx_write(peer, tx->wire, tx->type))
			goto full;
		break;
	case AMDGPU_UALINK_FAULT_CORRUPT:
		memcpy(bad, tx->wire, sizeof(bad));
		amdgpu_ualink_fault_corrupt(&mbox->fault, bad, sizeof(bad));
		if (!tx_write(peer, bad, tx->type))
			goto full;
		break;
	case AMDGPU_UALINK_FAULT_DUPLICATE:
		if (!tx_write(peer, tx->wire, tx->type))
			goto full;
		/* the copy only if there is room for it */
		tx_write(peer, tx->wire, tx->type);
		break;
	default:
		if (!tx_write(peer, tx->wire, tx->type))
			goto full;
		break;
	}
	tx_done(peer, tx);
	tx_release_reordered(peer);
	return true;

full:
	/* the backend could not write it: retry later, without a fault */
	return false;
}

/**
 * amdgpu_ualink_tx_flush - write what waits for our ring at a peer
 * @peer: the peer, locked
 *
 * Writes queued messages in order while the ring has room, then publishes
 * the new producer index once.
 */
void amdgpu_ualink_tx_flush(struct amdgpu_ualink_peer *peer)
{
	struct amdgpu_ualink_mbox *mbox = peer->mbox;
	u32 head = peer->tx_head;
	struct amdgpu_ualink_tx *tx;

	lockdep_assert_held(&peer->lock);

	/* quiesced: the queue waits for amdgpu_ualink_mbox_resume() */
	if (READ_ONCE(mbox->quiesced))
		return;
	while ((tx = list_first_entry_or_null(&peer->txq,
					      struct amdgpu_ualink_tx, link)))
		if (!tx_one(peer, tx))
			break;
	if (peer->tx_head != head && hw_begin(mbox)) {
		mbox->ops->publish(mbox->ops_priv, peer->id, peer->tx_head);
		hw_end(mbox);
	}
	if (!list_empty(&peer->txq))
		amdgpu_ualink_tick_arm(mbox);
}

/**
 * amdgpu_ualink_tx_queue - send a message to a peer
 * @peer: the peer, locked
 * @tx: the encoded message, not queued already
 *
 * Writes it at once if the ring has room and nothing waits before it,
 * otherwise it waits its turn.
 */
void amdgpu_ualink_tx_queue(struct amdgpu_ualink_peer *peer,
			    struct amdgpu_ualink_tx *tx)
{
	lockdep_assert_held(&peer->lock);

	tx->since = amdgpu_ualink_mbox_now(peer->mbox);
	tx->faulted = false;
	tx->reorder = false;
	if (!list_empty(&peer->txq) ||
	    peer->tx_head - peer->tx_tail >= AMDGPU_UALINK_RING_ENTRIES)
		peer->stats.ring_full++;
	list_add_tail(&tx->link, &peer->txq);
	amdgpu_ualink_tx_flush(peer);
}

/**
 * amdgpu_ualink_tx_reply - send an answer to a peer
 * @peer: the peer, locked
 * @wire: the encoded answer
 * @type: its type
 *
 * Never waits. The answer is lost, like a dropped message, without memory
 * for the queue entry or when %AMDGPU_UALINK_TX_QUEUED answers already wait
 * for a peer that asks faster than it reads; the peer's retransmission asks
 * again.
 */
void amdgpu_ualink_tx_reply(struct amdgpu_ualink_peer *peer, const u8 *wire,
			    u8 type)
{
	struct amdgpu_ualink_tx *tx, now = { .type = type };
	bool tried = list_empty(&peer->txq);

	lockdep_assert_held(&peer->lock);

	if (peer->owned >= AMDGPU_UALINK_TX_QUEUED) {
		peer->stats.replies_lost++;
		return;
	}
	/*
	 * Nothing waits before it: straight into the ring from here. Only an
	 * answer that has to wait for room is copied for the queue.
	 */
	memcpy(now.wire, wire, sizeof(now.wire));
	if (tried) {
		amdgpu_ualink_tx_queue(peer, &now);
		if (list_empty(&now.link))	/* written, dropped or held */
			return;
		list_del_init(&now.link);
	}
	tx = kmemdup(&now, sizeof(now), GFP_KERNEL);
	if (!tx) {
		peer->stats.replies_lost++;
		return;
	}
	tx->owned = true;
	peer->owned++;
	if (!tried) {
		amdgpu_ualink_tx_queue(peer, tx);
		return;
	}
	/* back in its place (the queue was empty), any fault decided */
	list_add_tail(&tx->link, &peer->txq);
	amdgpu_ualink_tick_arm(peer->mbox);
}

/**
 * amdgpu_ualink_tx_forget - drop everything waiting for a peer's ring
 * @peer: the peer, locked
 *
 * For the end of a connection: answers are freed, requests unlinked.
 */
void amdgpu_ualink_tx_forget(struct amdgpu_ualink_peer *peer)
{
	struct amdgpu_ualink_tx *tx, *next;

	lockdep_assert_held(&peer->lock);

	list_for_each_entry_safe(tx, next, &peer->txq, link)
		tx_done(peer, tx);
	list_for_each_entry_safe(tx, next, &peer->held, link)
		tx_done(peer, tx);
}

/* Release held messages that are due. Returns true if some remain. */
static bool tx_release_due(struct amdgpu_ualink_peer *peer, unsigned long now)
{
	struct amdgpu_ualink_tx *tx, *next;
	bool moved = false;

	list_for_each_entry_safe(tx, next, &peer->held, link) {
		if (time_before(now, tx->due))
			continue;
		tx->since = now;	/* it waits for the ring from now on */
		list_move_tail(&tx->link, &peer->txq);
		moved = true;
	}
	if (moved)
		amdgpu_ualink_tx_flush(peer);
	return !list_empty(&peer->held);
}

/* Has the ring at the peer stayed full for a whole timeout? */
static bool tx_stuck(struct amdgpu_ualink_peer *peer, unsigned long now)
{
	struct amdgpu_ualink_tx *tx;

	tx = list_first_entry_or_null(&peer->txq, struct amdgpu_ualink_tx, link);
	return tx && time_after_eq(now, tx->since + peer->mbox->timeout);
}

/**
 * amdgpu_ualink_peer_get - find a peer, allocating it on first contact
 * @mbox: the node
 * @id: the peer's accelerator ID, not ours
 *
 * Returns: the peer, or NULL for a bad ID or without memory.
 */
struct amdgpu_ualink_peer *amdgpu_ualink_peer_get(struct amdgpu_ualink_mbox *mbox,
						  u16 id)
{
	struct amdgpu_ualink_peer *peer, *old;

	if (id >= AMDGPU_UALINK_MAX_ACCELS || id == mbox->self)
		return NULL;
	peer = xa_load(&mbox->peers, id);
	if (peer)
		return peer;

	peer = kzalloc_obj(*peer, GFP_KERNEL);
	if (!peer)
		return NULL;
	peer->mbox = mbox;
	peer->id = id;
	mutex_init(&peer->lock);
	INIT_LIST_HEAD(&peer->txq);
	INIT_LIST_HEAD(&peer->held);
	mbox->events->peer_init(peer);

	old = xa_cmpxchg(&mbox->peers, id, NULL, peer, GFP_KERNEL);
	if (old) {	/* lost a race, or no memory for the entry */
		mutex_destroy(&peer->lock);
		kfree(peer);
		return xa_is_err(old) ? NULL : old;
	}
	return peer;
}

/**
 * amdgpu_ualink_rx_drop - count a message dropped on receipt
 * @peer: its sender, locked
 * @msg: what was decoded of it, NULL when nothing was
 * @why: the reason
 */
void amdgpu_ualink_rx_drop(struct amdgpu_ualink_peer *peer,
			   const struct amdgpu_ualink_msg *msg,
			   enum amdgpu_ualink_drop why)
{
	lockdep_assert_held(&peer->lock);

	peer->stats.dropped[why]++;
	trace_amdgpu_ualink_msg_drop(peer->mbox->self, peer->id,
				     msg ? msg->type : 0, msg ? msg->txn : 0,
				     amdgpu_ualink_drop_name(why));
}

/**
 * amdgpu_ualink_rx_received - count a message the connection layer took
 * @peer: its sender, locked
 * @msg: the message
 */
void amdgpu_ualink_rx_received(struct amdgpu_ualink_peer *peer,
			       const struct amdgpu_ualink_msg *msg)
{
	lockdep_assert_held(&peer->lock);

	peer->stats.received[msg->type]++;
	trace_amdgpu_ualink_msg_recv(peer->mbox->self, peer->id, msg->type,
				     msg->txn);
}

/* Handle one entry of the peer's ring. Called with the peer locked. */
static void rx_entry(struct amdgpu_ualink_peer *peer, const u8 *entry)
{
	struct amdgpu_ualink_mbox *mbox = peer->mbox;
	struct amdgpu_ualink_msg msg;
	enum amdgpu_ualink_drop why;

	if (amdgpu_ualink_msg_decode(entry, &msg, &why))
		return amdgpu_ualink_rx_drop(peer, NULL, why);
	if (amdgpu_ualink_msg_validate(&msg, peer->id, mbox->self, &why))
		return amdgpu_ualink_rx_drop(peer, &msg, why);
	mbox->events->receive(peer, &msg);
}

static void rx_drain(struct amdgpu_ualink_peer *peer)
{
	struct amdgpu_ualink_mbox *mbox = peer->mbox;
	u8 entry[AMDGPU_UALINK_MSG_SIZE];
	u32 head, tail;

	mutex_lock(&peer->lock);
	/* before the ring: what the connection layer deferred comes first */
	mbox->events->visit(peer);
	/* quiesced: the ring is read again on resume */
	if (!hw_begin(mbox))
		goto unlock;
	head = mbox->ops->rx_head(mbox->ops_priv, peer->id);
	hw_end(mbox);
	tail = peer->rx_tail;
	if (head - tail > AMDGPU_UALINK_RING_ENTRIES) {
		/*
		 * Overrun: what the producer wrote is lost. An index that
		 * went backwards (a producer starting over, or one that
		 * writes garbage) loses nothing we could count: once.
		 */
		peer->stats.dropped[AMDGPU_UALINK_DROP_RING] +=
			(s32)(head - tail) > 0 ? head - tail : 1;
		trace_amdgpu_ualink_msg_drop(mbox->self, peer->id, 0, 0,
					     amdgpu_ualink_drop_name(AMDGPU_UALINK_DROP_RING));
		tail = head;
	}
	peer->rx_tail = tail;
	/* a callback may run for long: the mailbox may be quiesced meanwhile */
	while (peer->rx_tail != head && hw_begin(mbox)) {
		mbox->ops->rx_read(mbox->ops_priv, peer->id,
				   peer->rx_tail % AMDGPU_UALINK_RING_ENTRIES,
				   entry);
		hw_end(mbox);
		peer->rx_tail++;
		rx_entry(peer, entry);
	}
	if (peer->rx_acked != peer->rx_tail && hw_begin(mbox)) {
		peer->rx_acked = peer->rx_tail;
		mbox->ops->rx_ack(mbox->ops_priv, peer->id, peer->rx_acked);
		hw_end(mbox);
	}
	/* the doorbell may mean the peer consumed our entries */
	amdgpu_ualink_tx_flush(peer);
unlock:
	mutex_unlock(&peer->lock);
}

static void rx_work(struct work_struct *work)
{
	struct amdgpu_ualink_mbox *mbox =
		container_of(work, struct amdgpu_ualink_mbox, rx_work);
	struct amdgpu_ualink_mbox_work_stats *st = &mbox->work;
	u64 start = ktime_get_ns(), bell_at;
	struct amdgpu_ualink_peer *peer;
	unsigned int n = 0;
	unsigned long id;

	spin_lock_irq(&mbox->bell_lock);
	bell_at = mbox->bell_at;
	mbox->bell_at = 0;
	spin_unlock_irq(&mbox->bell_lock);
	WRITE_ONCE(st->runs, st->runs + 1);
	if (bell_at && start > bell_at) {
		WRITE_ONCE(st->woken, st->woken + 1);
		WRITE_ONCE(st->wake_ns, st->wake_ns + start - bell_at);
		if (start - bell_at > st->wake_max_ns)
			WRITE_ONCE(st->wake_max_ns, start - bell_at);
	}
	worker_begin();
	for_each_set_bit(id, mbox->bells, AMDGPU_UALINK_MAX_ACCELS) {
		clear_bit(id, mbox->bells);
		/*
		 * Clear the bit before reading the ring: a doorbell rung for
		 * entries we miss sets it again and requeues this work.
		 */
		smp_mb__after_atomic();
		peer = amdgpu_ualink_peer_get(mbox, id);
		if (!peer) {	/* no memory: leave the bell for the next run */
			set_bit(id, mbox->bells);
			break;
		}
		rx_drain(peer);
		/* let the timer work of this ordered queue run between batches */
		if (++n == AMDGPU_UALINK_RX_BATCH)
			break;
	}
	if (!bitmap_empty(mbox->bells, AMDGPU_UALINK_MAX_ACCELS))
		queue_work(mbox->wq, &mbox->rx_work);
	worker_end();
	WRITE_ONCE(st->busy_ns, st->busy_ns + ktime_get_ns() - start);
}

/**
 * amdgpu_ualink_mbox_doorbell - a peer rang our doorbell
 * @mbox: our node
 * @peer: the peer whose doorbell it is, as the backend knows it
 *
 * The peer wrote entries into its ring here, or consumed entries of ours.
 * No doorbell is lost: one bit per possible sender records it until the
 * receive work looks at that peer.
 *
 * Context: any, including hard interrupt; the work is done later.
 */
void amdgpu_ualink_mbox_doorbell(struct amdgpu_ualink_mbox *mbox, u16 peer)
{
	unsigned long flags;

	if (peer >= AMDGPU_UALINK_MAX_ACCELS || peer == mbox->self)
		return;
	set_bit(peer, mbox->bells);
	spin_lock_irqsave(&mbox->bell_lock, flags);
	if (!mbox->dead && queue_work(mbox->wq, &mbox->rx_work) &&
	    !mbox->bell_at)
		mbox->bell_at = ktime_get_ns();
	spin_unlock_irqrestore(&mbox->bell_lock, flags);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_mbox_doorbell);

/**
 * amdgpu_ualink_tick_arm - make sure the timer work will run
 * @mbox: the node
 */
void amdgpu_ualink_tick_arm(struct amdgpu_ualink_mbox *mbox)
{
	queue_delayed_work(mbox->wq, &mbox->tick, mbox->period);
}

static void tick_work(struct work_struct *work)
{
	struct amdgpu_ualink_mbox *mbox =
		container_of(work, struct amdgpu_ualink_mbox, tick.work);
	unsigned long now = amdgpu_ualink_mbox_now(mbox), index;
	struct amdgpu_ualink_peer *peer;
	bool busy = false;

	/* quiesced: no transport; what waits on it ends (resume re-arms us) */
	if (READ_ONCE(mbox->quiesced)) {
		xa_for_each(&mbox->peers, index, peer) {
			mutex_lock(&peer->lock);
			mbox->events->quiesce(peer);
			mutex_unlock(&peer->lock);
		}
		return;
	}
	worker_begin();
	xa_for_each(&mbox->peers, index, peer) {
		mutex_lock(&peer->lock);
		/* a consume doorbell may be late, or a post may have failed */
		if (!list_empty(&peer->txq))
			amdgpu_ualink_tx_flush(peer);
		busy |= tx_release_due(peer, now);
		busy |= mbox->events->tick(peer, now, tx_stuck(peer, now));
		busy |= !list_empty(&peer->txq);
		mutex_unlock(&peer->lock);
	}
	if (busy)
		amdgpu_ualink_tick_arm(mbox);
	worker_end();
}

/**
 * amdgpu_ualink_mbox_set_timeout - configure how long requests may take
 * @mbox: the node
 * @timeout_ms: time for a request, retransmissions included (default
 *	%AMDGPU_UALINK_MBOX_TIMEOUT_MS)
 * @retries: retransmissions within it (default %AMDGPU_UALINK_MBOX_RETRIES);
 *	the gaps double each time, the last ending at the timeout
 *
 * The deadline of a request is set when it is first sent; the
 * retransmission gaps follow the values in force when each is sent.
 *
 * Returns: 0, or -EINVAL for a timeout of 0 or above one hour, or more
 * than 16 retries.
 */
int amdgpu_ualink_mbox_set_timeout(struct amdgpu_ualink_mbox *mbox,
				   unsigned int timeout_ms,
				   unsigned int retries)
{
	unsigned long timeout, first;

	if (!timeout_ms || timeout_ms > 3600 * MSEC_PER_SEC || retries > 16)
		return -EINVAL;

	timeout = max(msecs_to_jiffies(timeout_ms), 1UL);
	/* first + 2 first + ... + 2^retries first = timeout */
	first = max(timeout / ((2UL << retries) - 1), 1UL);
	WRITE_ONCE(mbox->timeout, timeout);
	WRITE_ONCE(mbox->first_try, first);
	WRITE_ONCE(mbox->retries, retries);
	WRITE_ONCE(mbox->period, clamp(first / 4, 1UL, (unsigned long)HZ / 10));
	return 0;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_mbox_set_timeout);

/**
 * amdgpu_ualink_mbox_get_timeout - how long requests may take
 * @mbox: the node
 * @timeout_ms: returns the timeout, rounded to the timer's resolution
 * @retries: returns the retransmissions within it
 */
void amdgpu_ualink_mbox_get_timeout(struct amdgpu_ualink_mbox *mbox,
				    unsigned int *timeout_ms,
				    unsigned int *retries)
{
	*timeout_ms = jiffies_to_msecs(READ_ONCE(mbox->timeout));
	*retries = READ_ONCE(mbox->retries);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_mbox_get_timeout);

/**
 * amdgpu_ualink_link_init - set up a node's transport
 * @mbox: the node, zeroed
 * @self: our accelerator ID, checked by the caller
 * @ops: how the bytes move
 * @ops_priv: passed to @ops
 * @events: the connection layer's callbacks
 *
 * Requests time out after the module parameters ``mbox_timeout_ms`` and
 * ``mbox_retries`` (default 5 s and 3), or the defaults when those are out
 * of range; amdgpu_ualink_mbox_set_timeout() changes them per node.
 *
 * Returns: 0 or -ENOMEM.
 */
int amdgpu_ualink_link_init(struct amdgpu_ualink_mbox *mbox, u16 self,
			    const struct amdgpu_ualink_mbox_ops *ops,
			    void *ops_priv,
			    const struct amdgpu_ualink_link_events *events)
{
	/*
	 * High priority: a message waits for the worker only as long as the
	 * scheduler makes it, not behind the caller that sent it.
	 */
	mbox->wq = alloc_ordered_workqueue("amdgpu_ualink_mbox%u", WQ_HIGHPRI,
					   self);
	if (!mbox->wq)
		return -ENOMEM;
	mbox->self = self;
	mbox->ops = ops;
	mbox->ops_priv = ops_priv;
	mbox->events = events;
	INIT_WORK(&mbox->rx_work, rx_work);
	INIT_DELAYED_WORK(&mbox->tick, tick_work);
	spin_lock_init(&mbox->bell_lock);
	xa_init(&mbox->peers);
	init_rwsem(&mbox->hw_sem);
	if (ops->hw_class)
		lockdep_set_class(&mbox->hw_sem, ops->hw_class);
	amdgpu_ualink_fault_init(&mbox->fault, self);
	if (amdgpu_ualink_mbox_set_timeout(mbox, READ_ONCE(mbox_timeout_ms),
					   READ_ONCE(mbox_retries)))
		amdgpu_ualink_mbox_set_timeout(mbox, AMDGPU_UALINK_MBOX_TIMEOUT_MS,
					       AMDGPU_UALINK_MBOX_RETRIES);
	return 0;
}

/**
 * amdgpu_ualink_link_stop - stop the workers for good
 * @mbox: the node
 *
 * No doorbell queues the receive work afterwards. The timer work may still
 * be queued again (by what the connection layer does meanwhile), until
 * amdgpu_ualink_link_fini().
 */
void amdgpu_ualink_link_stop(struct amdgpu_ualink_mbox *mbox)
{
	spin_lock_irq(&mbox->bell_lock);
	mbox->dead = true;
	spin_unlock_irq(&mbox->bell_lock);
	cancel_work_sync(&mbox->rx_work);
	cancel_delayed_work_sync(&mbox->tick);
}

/**
 * amdgpu_ualink_link_fini - free what amdgpu_ualink_link_init() set up
 * @mbox: the node, stopped by amdgpu_ualink_link_stop()
 *
 * Frees every peer, after &amdgpu_ualink_link_events.peer_fini; not @mbox.
 */
void amdgpu_ualink_link_fini(struct amdgpu_ualink_mbox *mbox)
{
	struct amdgpu_ualink_peer *peer;
	unsigned long index;

	/* the connection layer may have queued it since link_stop() */
	cancel_delayed_work_sync(&mbox->tick);
	destroy_workqueue(mbox->wq);
	xa_for_each(&mbox->peers, index, peer) {
		mbox->events->peer_fini(peer);
		mutex_destroy(&peer->lock);
		kfree(peer);
	}
	xa_destroy(&mbox->peers);
}

/**
 * amdgpu_ualink_mbox_quiesce - stop using the transport
 * @mbox: the node
 *
 * For a device going to sleep or being reset: when this returns, no call
 * into &amdgpu_ualink_mbox_ops is in progress and none is made until
 * amdgpu_ualink_mbox_resume(). Nothing waits on the transport meanwhile,
 * since a device may stay quiesced for good (a failed reset, a teardown):
 * amdgpu_ualink_mbox_submit() refuses new requests with -ENETDOWN, and
 * those in flight fail with -ENETDOWN on the timer work queued here (a
 * GPU reset may call this, where the peers' locks, held across
 * allocations, must not be taken). Answers to peers wait in their queues,
 * doorbells are remembered. Does not wait for the export/import layer's
 * callbacks, which may wait for GPU work (a revocation) that a reset has
 * to end first.
 *
 * Context: process context; not from the mailbox's callbacks.
 */
void amdgpu_ualink_mbox_quiesce(struct amdgpu_ualink_mbox *mbox)
{
	down_write(&mbox->hw_sem);
	WRITE_ONCE(mbox->quiesced, true);
	up_write(&mbox->hw_sem);
	mod_delayed_work(mbox->wq, &mbox->tick, 0);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_mbox_quiesce);

/**
 * amdgpu_ualink_mbox_resume - use the transport again
 * @mbox: the node, quiesced or not
 *
 * The worker then reads every peer's ring and writes what waited, and
 * retransmissions go on. Takes no lock that is held across an allocation
 * or a wait, so that a GPU reset may call it.
 */
void amdgpu_ualink_mbox_resume(struct amdgpu_ualink_mbox *mbox)
{
	struct amdgpu_ualink_peer *peer;
	unsigned long index;

	down_write(&mbox->hw_sem);
	WRITE_ONCE(mbox->quiesced, false);
	up_write(&mbox->hw_sem);
	/* a look at every peer: its ring, and our queue for it */
	xa_for_each(&mbox->peers, index, peer)
		amdgpu_ualink_mbox_doorbell(mbox, index);
	amdgpu_ualink_tick_arm(mbox);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_mbox_resume);

/**
 * amdgpu_ualink_mbox_flush - wait for the messages received so far
 * @mbox: the node
 *
 * The receive work queued when this is called has run when it returns,
 * with the handlers it called.
 */
void amdgpu_ualink_mbox_flush(struct amdgpu_ualink_mbox *mbox)
{
	flush_workqueue(mbox->wq);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_mbox_flush);

/**
 * amdgpu_ualink_mbox_tick_now - run the timer work now and wait for it
 * @mbox: the node
 *
 * For tests: what the timer work does once its period has passed
 * (retransmissions, timeouts, queued messages written), without waiting
 * for the period, so that a test can tell "nothing happened" from "nothing
 * was due yet".
 */
void amdgpu_ualink_mbox_tick_now(struct amdgpu_ualink_mbox *mbox)
{
	mod_delayed_work(mbox->wq, &mbox->tick, 0);
	flush_delayed_work(&mbox->tick);
}
EXPORT_SYMBOL_IF_KUNIT(amdgpu_ualink_mbox_tick_now);

#if IS_ENABLED(CONFIG_KUNIT)
/**
 * amdgpu_ualink_mbox_advance - move the mailbox's clock on, then tick
 * @mbox: the node
 * @ms: how far
 *
 * For tests: the node's deadlines, retransmissions and held messages see
 * @ms more time gone by than has, and the timer work then runs at once
 * (amdgpu_ualink_mbox_tick_now()), so that a test of timing is decided by
 * the test's own steps, not by how fast the machine is.
 */
void amdgpu_ualink_mbox_advance(struct amdgpu_ualink_mbox *mbox,
				unsigned int ms)
{
	WRITE_ONCE(mbox->skew, mbox->skew + msecs_to_jiffies(ms));
	amdgpu_ualink_mbox_tick_now(mbox);
}
EXPORT_SYMBOL_IF_KUNIT(amdgpu_ualink_mbox_advance);
#endif

/**
 * amdgpu_ualink_mbox_fault - the node's fault-injection rules
 * @mbox: the node
 *
 * Returns: the rules, to be set with amdgpu_ualink_fault_set().
 */
struct amdgpu_ualink_fault *amdgpu_ualink_mbox_fault(struct amdgpu_ualink_mbox *mbox)
{
	return &mbox->fault;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_mbox_fault);

static void stats_add(struct amdgpu_ualink_mbox_stats *sum,
		      const struct amdgpu_ualink_mbox_stats *s)
{
	const u64 *from = (const u64 *)s;
	u64 *to = (u64 *)sum;
	size_t i;

	/* the struct is nothing but u64 counters */
	static_assert(sizeof(*s) % sizeof(u64) == 0);
	for (i = 0; i < sizeof(*s) / sizeof(u64); i++)
		to[i] += from[i];
}

/**
 * amdgpu_ualink_mbox_get_stats - read counters
 * @mbox: the node
 * @peer: a peer's ID, or -1 for the sum over all peers
 * @stats: where to put them; all zero for a peer that never talked
 */
void amdgpu_ualink_mbox_get_stats(struct amdgpu_ualink_mbox *mbox, int peer,
				  struct amdgpu_ualink_mbox_stats *stats)
{
	struct amdgpu_ualink_peer *p;
	unsigned long index;

	memset(stats, 0, sizeof(*stats));
	xa_for_each(&mbox->peers, index, p) {
		if (peer >= 0 && index != peer)
			continue;
		mutex_lock(&p->lock);
		stats_add(stats, &p->stats);
		mutex_unlock(&p->lock);
	}
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_mbox_get_stats);

/**
 * amdgpu_ualink_mbox_get_work_stats - what the node's worker spent
 * @mbox: the node
 * @stats: where to put it
 *
 * Read without a lock: each figure is exact, together they may be a run
 * apart.
 */
void amdgpu_ualink_mbox_get_work_stats(struct amdgpu_ualink_mbox *mbox,
				       struct amdgpu_ualink_mbox_work_stats *stats)
{
	const struct amdgpu_ualink_mbox_work_stats *st = &mbox->work;

	stats->runs = READ_ONCE(st->runs);
	stats->woken = READ_ONCE(st->woken);
	stats->wake_ns = READ_ONCE(st->wake_ns);
	stats->wake_max_ns = READ_ONCE(st->wake_max_ns);
	stats->busy_ns = READ_ONCE(st->busy_ns);
	stats->requests = READ_ONCE(st->requests);
	stats->request_ns = READ_ONCE(st->request_ns);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_mbox_get_work_stats);

/**
 * amdgpu_ualink_mbox_peers - number of peers with state
 * @mbox: the node
 *
 * Returns: how many peers have talked to us or we to them.
 */
unsigned int amdgpu_ualink_mbox_peers(struct amdgpu_ualink_mbox *mbox)
{
	struct amdgpu_ualink_peer *p;
	unsigned long index;
	unsigned int n = 0;

	xa_for_each(&mbox->peers, index, p)
		n++;
	return n;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_mbox_peers);
