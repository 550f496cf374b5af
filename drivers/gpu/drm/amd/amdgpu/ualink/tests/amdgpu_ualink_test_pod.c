// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The in-memory pod of the mailbox tests. Rings are kernel memory at the
 * receiving node, allocated by the sender's first post; publishing and
 * acknowledging ring the other node's doorbell synchronously (the mailbox
 * defers the work to its worker, as it would from an interrupt). A node can
 * be paused: its doorbells are then held and rung on resume, which is how
 * the tests fill rings. Raw nodes have no mailbox: the test plays them by
 * writing entries into their rings by hand and reading what they were sent.
 */

#include <linux/bitmap.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>

#include <drm/drm_print.h>

#include "amdgpu_ualink_test_pod.h"
#include "amdgpu_ualink_test_pt.h"
#include "../amdgpu_ualink_npa.h"

/* amdgpu_ualink_mbox_tick_now() */
MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING");

/*
 * The cases at pod scale (the symmetric heap, the mailbox benchmark) run
 * whole by default, as KUnit under UML runs them. The debug guest, where
 * KASAN and lockdep under TCG make every call some twenty times slower,
 * loads this module with full_scale=0: the same paths, on a share of the
 * pod (a minute less there).
 */
bool tpod_full_scale = true;
module_param_named(full_scale, tpod_full_scale, bool, 0444);
MODULE_PARM_DESC(full_scale,
		 "run the pod-scale cases whole (default) or on a share of the pod");

struct tpod_node *tpod_node(struct tpod *pod, u16 id)
{
	return id < TPOD_MAX_NODES ? pod->by_id[id] : NULL;
}

struct tpod_ring *tpod_ring(struct tpod *pod, u16 receiver, u16 sender)
{
	struct tpod_node *node = tpod_node(pod, receiver);

	return node ? xa_load(&node->rings, sender) : NULL;
}

/* Ring @to's doorbell for @from, unless @to is paused or gone. */
static void bell(struct tpod *pod, u16 from, u16 to)
{
	struct tpod_node *node = tpod_node(pod, to);
	unsigned long flags;

	if (!node)
		return;
	spin_lock_irqsave(&pod->lock, flags);
	if (pod->alive) {
		if (node->paused)
			__set_bit(from, node->held_bells);
		else if (node->mbox)
			amdgpu_ualink_mbox_doorbell(node->mbox, from);
	}
	spin_unlock_irqrestore(&pod->lock, flags);
	wake_up_all(&pod->bell);
}

/* @sender's ring at @to, allocated on first use. */
static struct tpod_ring *ring_get(struct tpod_node *to, u16 sender)
{
	struct tpod_ring *ring = xa_load(&to->rings, sender);

	if (ring)
		return ring;
	ring = kzalloc_obj(*ring, GFP_KERNEL);
	if (!ring)
		return NULL;
	if (xa_err(xa_store(&to->rings, sender, ring, GFP_KERNEL))) {
		kfree(ring);
		return NULL;
	}
	return ring;
}

static int t_post(void *priv, u16 peer, unsigned int slot, const void *entry)
{
	struct tpod_node *self = priv;
	struct tpod_node *to = tpod_node(self->pod, peer);
	struct tpod_ring *ring;

	atomic_inc(&self->hw_calls);
	if (!to)
		return -ENODEV;
	ring = ring_get(to, self->id);
	if (!ring)
		return -ENOMEM;
	memcpy(ring->slot[slot], entry, AMDGPU_UALINK_MSG_SIZE);
	return 0;
}

static void t_publish(void *priv, u16 peer, u32 head)
{
	struct tpod_node *self = priv;
	struct tpod_ring *ring = tpod_ring(self->pod, peer, self->id);
	struct tpod_node *to = tpod_node(self->pod, peer);

	atomic_inc(&self->hw_calls);
	if (!ring)
		return;
	/* the entries before the index that makes them visible */
	smp_store_release(&ring->head, head);
	if (to->kind == TPOD_SINK)
		WRITE_ONCE(ring->tail, head);
	bell(self->pod, self->id, peer);
}

static u32 t_peer_tail(void *priv, u16 peer)
{
	struct tpod_node *self = priv;
	struct tpod_ring *ring = tpod_ring(self->pod, peer, self->id);

	atomic_inc(&self->hw_calls);
	return ring ? READ_ONCE(ring->tail) : 0;
}

static u32 t_rx_head(void *priv, u16 sender)
{
	struct tpod_node *self = priv;
	struct tpod_ring *ring = xa_load(&self->rings, sender);

	atomic_inc(&self->hw_calls);
	/* pairs with the release in t_publish(): entries after the index */
	return ring ? smp_load_acquire(&ring->head) : 0;
}

static void t_rx_read(void *priv, u16 sender, unsigned int slot, void *entry)
{
	struct tpod_node *self = priv;
	struct tpod_ring *ring = xa_load(&self->rings, sender);

	atomic_inc(&self->hw_calls);
	memcpy(entry, ring->slot[slot], AMDGPU_UALINK_MSG_SIZE);
}

static void t_rx_ack(void *priv, u16 sender, u32 tail)
{
	struct tpod_node *self = priv;
	struct tpod_ring *ring = xa_load(&self->rings, sender);

	atomic_inc(&self->hw_calls);
	WRITE_ONCE(ring->tail, tail);
	bell(self->pod, self->id, sender);
}

static const struct amdgpu_ualink_mbox_ops tpod_ops = {
	.post = t_post,
	.publish = t_publish,
	.peer_tail = t_peer_tail,
	.rx_head = t_rx_head,
	.rx_read = t_rx_read,
	.rx_ack = t_rx_ack,
};

static void t_request(void *priv, u16 peer, const struct amdgpu_ualink_msg *req,
		      struct amdgpu_ualink_msg *rsp)
{
	struct tpod_node *self = priv;
	int n;

	atomic_inc(&self->requests[req->type]);
	if (req->type != AMDGPU_UALINK_MSG_NPA_REQ)
		return;
	n = atomic_inc_return(&self->logged) - 1;
	if (n < TPOD_LOG)
		self->log[n] = req->txn;
	if (self->grant) {
		rsp->type = AMDGPU_UALINK_MSG_NPA_RSP;
		rsp->npa = amdgpu_ualink_npa_build(self->id, AMDGPU_UALINK_NPA_RESERVE +
						   (u64)peer * SZ_2M);
		rsp->size = SZ_2M;
	}
}

static void t_peer_event(void *priv, u16 peer, enum amdgpu_ualink_peer_event ev)
{
	struct tpod_node *self = priv;

	atomic_inc(&self->events[ev]);
}

static const struct amdgpu_ualink_mbox_handlers tpod_handlers = {
	.request = t_request,
	.peer_event = t_peer_event,
};

/* --- holds: a callback stopped until the test lets it go --- */

static void tpod_hold_init(struct tpod_hold *hold)
{
	init_completion(&hold->entered);
	init_completion(&hold->go);
}

/* Stop the next callback that reaches @hold. */
void tpod_hold_arm(struct tpod_hold *hold)
{
	reinit_completion(&hold->entered);
	reinit_completion(&hold->go);
	WRITE_ONCE(hold->armed, true);
}

/* In a callback: stop here if armed, once. */
static void tpod_hold_here(struct tpod_hold *hold)
{
	if (!READ_ONCE(hold->armed))
		return;
	WRITE_ONCE(hold->armed, false);
	complete(&hold->entered);
	wait_for_completion(&hold->go);
}

/* Wait until a callback stopped at @hold (10 s at most). */
bool tpod_hold_reached(struct tpod_hold *hold)
{
	return wait_for_completion_timeout(&hold->entered, 10 * HZ);
}

/* Let the callback stopped at @hold go on. */
void tpod_hold_release(struct tpod_hold *hold)
{
	complete(&hold->go);
}

/*
 * Wait until @task, which completes @done when it finishes, either has
 * finished or sleeps in @state: 10 s at most. A wake-up makes a sleeping
 * task runnable before it returns, so after one this sees the task's next
 * sleep, not the one it was woken from.
 */
static bool wait_sleeping(struct task_struct *task, struct completion *done,
			  unsigned int state)
{
	unsigned long timeout = jiffies + 10 * HZ;

	while (!completion_done(done) && READ_ONCE(task->__state) != state) {
		if (time_after(jiffies, timeout))
			return false;
		usleep_range(500, 1000);
	}
	return true;
}

/* ... sleeps uninterruptibly (on a lock or a wait) */
bool tpod_wait_blocked(struct task_struct *task, struct completion *done)
{
	return wait_sleeping(task, done, TASK_UNINTERRUPTIBLE);
}

/*
 * The same for an interruptible sleep (an import's wait for its answer);
 * false also when @task finished.
 */
bool tpod_wait_waiting(struct task_struct *task, struct completion *done)
{
	return wait_sleeping(task, done, TASK_INTERRUPTIBLE) &&
	       !completion_done(done);
}

/* --- TPOD_DEV nodes: buffers and page tables in kernel memory --- */

static bool d_get(void *priv, void *obj)
{
	struct tpod_node *self = priv;

	spin_lock(&self->obj_lock);
	((struct tobj *)obj)->refs++;
	spin_unlock(&self->obj_lock);
	return true;
}

static void d_put(void *priv, void *obj)
{
	struct tpod_node *self = priv;
	struct tobj *o = obj;

	spin_lock(&self->obj_lock);
	/* a reference the core never took */
	if (o->refs <= 0)
		atomic_inc(&self->bad_unpins);
	o->refs--;
	spin_unlock(&self->obj_lock);
}

static int d_pin(void *priv, void *obj, bool intr)
{
	struct tpod_node *self = priv;
	struct tobj *o = obj;

	o->pin_intr = intr;
	WRITE_ONCE(o->pin_calls, o->pin_calls + 1);
	if (o->pin_error)
		return o->pin_error;
	spin_lock(&self->obj_lock);
	/* the core holds a reference for as long as it pins */
	if (o->refs <= o->pins)
		atomic_inc(&self->bad_unpins);
	if (!o->pins++)
		self->pinned++;
	spin_unlock(&self->obj_lock);
	return 0;
}

static void d_unpin(void *priv, void *obj)
{
	struct tpod_node *self = priv;
	struct tobj *o = obj;
	unsigned int ranges;
	u64 bytes;

	/*
	 * the last pin: the other pinned buffers may have a range each, this
	 * one none (an export's pin taken again and dropped leaves it one)
	 */
	amdgpu_ualink_window_usage(&self->dev->window, &bytes, &ranges);
	spin_lock(&self->obj_lock);
	if (o->pins == 1 && ranges >= self->pinned)
		atomic_inc(&self->bad_unpins);
	if (o->refs < o->pins)
		atomic_inc(&self->bad_unpins);
	spin_unlock(&self->obj_lock);
	tpod_hold_here(&self->unpin_hold);
	spin_lock(&self->obj_lock);
	if (!--o->pins)
		self->pinned--;
	spin_unlock(&self->obj_lock);
}

static bool d_no_next(struct amdgpu_ualink_pt_cursor *cur)
{
	return false;
}

static void d_cursor(void *priv, void *obj, struct amdgpu_ualink_pt_cursor *cur)
{
	struct tobj *o = obj;

	cur->addr = o->addr;
	cur->size = o->size;
	cur->next = d_no_next;
}

static bool d_member(void *priv, u16 peer)
{
	struct tpod_node *self = priv;
	struct tpod_node *node = tpod_node(self->pod, peer);

	/* the op may sleep (amdgpu's asks its IP): the debug guest checks */
	might_sleep();
	return node && node->vpod == self->vpod;
}

static void d_pages(struct tpod_node *self, u64 npa, u64 size,
		    unsigned long *first, unsigned long *last)
{
	u64 offset = npa - amdgpu_ualink_npa_build(self->id, 0);

	*first = offset >> PAGE_SHIFT;
	*last = (offset + size - 1) >> PAGE_SHIFT;
}

static int d_allow(void *priv, u16 importer, u64 npa, u64 size)
{
	struct tpod_node *self = priv;
	unsigned long first, last, *set;
	int ret = 0;

	lockdep_assert_held(&self->dev->lock);
	d_pages(self, npa, size, &first, &last);
	mutex_lock(&self->access_lock);
	set = mtree_load(&self->access, first);
	if (!set) {
		set = bitmap_zalloc(AMDGPU_UALINK_MAX_ACCELS, GFP_KERNEL);
		ret = set ? mtree_store_range(&self->access, first, last, set,
					      GFP_KERNEL) : -ENOMEM;
		if (ret)
			bitmap_free(set);
	}
	if (!ret) {
		/* one allow per importer of a range */
		if (test_and_set_bit(importer, set))
			atomic_inc(&self->bad_unpins);
		atomic_inc(&self->allows);
	}
	mutex_unlock(&self->access_lock);
	return ret;
}

static void d_deny(void *priv, u16 importer, u64 npa, u64 size)
{
	struct tpod_node *self = priv;
	unsigned long first, last, *set;

	lockdep_assert_not_held(&self->dev->lock);
	tpod_hold_here(&self->deny_hold);
	d_pages(self, npa, size, &first, &last);
	mutex_lock(&self->access_lock);
	set = mtree_load(&self->access, first);
	/* a deny without its allow */
	if (!set || !test_and_clear_bit(importer, set)) {
		atomic_inc(&self->bad_unpins);
	} else if (bitmap_empty(set, AMDGPU_UALINK_MAX_ACCELS)) {
		mtree_erase(&self->access, first);
		bitmap_free(set);
	}
	atomic_inc(&self->denies);
	mutex_unlock(&self->access_lock);
}

/*
 * An access by @requester to @npa, as the fabric would check and translate
 * it at the owner: 0 and the owner's local address, -EACCES when the
 * owner's access set refuses @requester (counted), -ENODEV when nothing
 * maps @npa or no TPOD_DEV node owns it.
 */
int tpod_fabric(struct tpod *pod, u16 requester, u64 npa, u64 *addr)
{
	struct tpod_node *owner;
	unsigned long *set;
	u64 offset, leaf;
	bool allowed;
	u16 id;

	if (amdgpu_ualink_npa_split(npa, &id, &offset))
		return -ENODEV;
	owner = tpod_node(pod, id);
	if (!owner || !owner->dev)
		return -ENODEV;
	mutex_lock(&owner->access_lock);
	set = mtree_load(&owner->access, offset >> PAGE_SHIFT);
	allowed = set && test_bit(requester, set);
	mutex_unlock(&owner->access_lock);
	if (!allowed) {
		atomic_inc(&owner->faults);
		return -EACCES;
	}
	return amdgpu_ualink_pt_translate(&owner->pt, offset, addr, &leaf);
}

static int d_shootdown(void *priv, u16 importer, u64 npa, u64 size)
{
	struct tpod_node *self = priv;
	int i = atomic_fetch_inc(&self->shots);

	if (i < TPOD_LOG) {
		self->shot[i].importer = importer;
		self->shot[i].npa = npa;
		self->shot[i].size = size;
	}
	tpod_hold_here(&self->shootdown_hold);
	if (READ_ONCE(self->shootdown_us))
		fsleep(READ_ONCE(self->shootdown_us));
	atomic_inc(&self->shootdowns);
	/* an importer that does not acknowledge */
	return READ_ONCE(self->shootdown_fails) ? -ETIMEDOUT : 0;
}

static struct dma_fence *d_revoke(void *priv, void *obj)
{
	struct tobj *o = obj;

	o->dead = true;
	atomic_inc(&((struct tpod_node *)priv)->revokes);
	return o->job ? dma_fence_get(o->job) : NULL;
}

static const struct amdgpu_ualink_dev_ops tpod_dev_ops = {
	.get = d_get,
	.put = d_put,
	.pin = d_pin,
	.unpin = d_unpin,
	.cursor = d_cursor,
	.member = d_member,
	.allow = d_allow,
	.deny = d_deny,
	.shootdown = d_shootdown,
	.revoke = d_revoke,
};

struct tpod_job {
	struct dma_fence base;
	spinlock_t lock;	/* the fence's */
};

static const char *tpod_job_name(struct dma_fence *f)
{
	return "tpod";
}

static const struct dma_fence_ops tpod_job_ops = {
	.get_driver_name = tpod_job_name,
	.get_timeline_name = tpod_job_name,
};

static void tpod_job_end(void *data)
{
	struct dma_fence *f = data;

	dma_fence_signal(f);
	dma_fence_put(f);
}

struct dma_fence *tpod_job(struct tpod *pod)
{
	struct tpod_job *job = kzalloc_obj(*job, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(pod->test, job);
	spin_lock_init(&job->lock);
	dma_fence_init(&job->base, &tpod_job_ops, &job->lock,
		       dma_fence_context_alloc(1), 1);
	KUNIT_ASSERT_EQ(pod->test, kunit_add_action_or_reset(pod->test, tpod_job_end,
							     &job->base), 0);
	return &job->base;
}

/* A buffer freed with the test. */
struct tobj *tpod_obj(struct tpod *pod, u64 addr, u64 size)
{
	struct tobj *o = kunit_kzalloc(pod->test, sizeof(*o), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(pod->test, o);
	o->addr = addr;
	o->size = size;
	return o;
}

static void tpod_destroy(void *data)
{
	struct tpod *pod = data;
	struct tpod_ring *ring;
	unsigned long index;
	unsigned int i;

	/* a test that failed while a callback was held lets it go */
	for (i = 0; i < pod->n; i++) {
		WRITE_ONCE(pod->node[i].shootdown_hold.armed, false);
		complete_all(&pod->node[i].shootdown_hold.go);
		WRITE_ONCE(pod->node[i].unpin_hold.armed, false);
		complete_all(&pod->node[i].unpin_hold.go);
		WRITE_ONCE(pod->node[i].deny_hold.armed, false);
		complete_all(&pod->node[i].deny_hold.go);
	}
	/* releases of imports still talk to their exporters */
	for (i = 0; i < pod->n; i++)
		if (pod->node[i].dev && pod->node[i].dev->wq)
			amdgpu_ualink_dev_flush(pod->node[i].dev);
	spin_lock_irq(&pod->lock);
	pod->alive = false;
	spin_unlock_irq(&pod->lock);
	for (i = 0; i < pod->n; i++) {
		struct tpod_node *node = &pod->node[i];

		if (node->dev) {
			unsigned long index = 0, *set;

			/* unpinned while a range still mapped it */
			KUNIT_EXPECT_EQ(pod->test, atomic_read(&node->bad_unpins), 0);
			/* every export ended, so every importer was denied */
			KUNIT_EXPECT_EQ(pod->test, atomic_read(&node->allows),
					atomic_read(&node->denies));
			mt_for_each(&node->access, set, index, ULONG_MAX) {
				KUNIT_FAIL(pod->test, "accelerator %u: a range still allowed",
					   node->id);
				bitmap_free(set);
			}
			mtree_destroy(&node->access);
			if (node->dev->mbox) {
				amdgpu_ualink_dev_fini(node->dev);
				amdgpu_ualink_pt_fini(&node->pt);
			}
			kfree(node->dev);
		} else {
			amdgpu_ualink_mbox_destroy(node->mbox);
		}
	}
	for (i = 0; i < pod->n; i++) {
		xa_for_each(&pod->node[i].rings, index, ring)
			kfree(ring);
		xa_destroy(&pod->node[i].rings);
		bitmap_free(pod->node[i].held_bells);
	}
	for (i = 0; i < TPOD_ALLOCS; i++)
		kfree(pod->allocs[i]);
	kvfree(pod->node);
	kfree(pod);
}

/*
 * A pod of @n nodes with IDs @ids; @kinds may be NULL for mailboxes only.
 * Torn down when the test ends.
 */
struct tpod *tpod_create(struct kunit *test, unsigned int n, const u16 *ids,
			 const enum tpod_kind *kinds)
{
	struct tpod *pod;
	unsigned int i;

	KUNIT_ASSERT_LE(test, n, TPOD_MAX_NODES);
	pod = kzalloc_obj(*pod, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pod);
	pod->test = test;
	spin_lock_init(&pod->lock);
	init_waitqueue_head(&pod->bell);
	pod->alive = true;
	pod->node = kvcalloc(n, sizeof(*pod->node), GFP_KERNEL);
	if (!pod->node) {
		kfree(pod);
		KUNIT_FAIL_AND_ABORT(test, "no memory for %u nodes", n);
	}
	for (i = 0; i < n; i++) {
		struct tpod_node *node = &pod->node[i];

		KUNIT_ASSERT_LT(test, ids[i], TPOD_MAX_NODES);
		pod->by_id[ids[i]] = node;
		node->pod = pod;
		node->id = ids[i];
		node->kind = kinds ? kinds[i] : TPOD_MBOX;
		xa_init(&node->rings);
		mt_init(&node->access);
		mutex_init(&node->access_lock);
		spin_lock_init(&node->obj_lock);
		tpod_hold_init(&node->shootdown_hold);
		tpod_hold_init(&node->unpin_hold);
		tpod_hold_init(&node->deny_hold);
	}
	pod->n = n;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, tpod_destroy, pod), 0);

	for (i = 0; i < n; i++) {
		struct tpod_node *node = &pod->node[i];

		node->held_bells = bitmap_zalloc(AMDGPU_UALINK_MAX_ACCELS, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, node->held_bells);
		if (node->kind == TPOD_DEV) {
			node->dev = kzalloc_obj(*node->dev, GFP_KERNEL);
			KUNIT_ASSERT_NOT_NULL(test, node->dev);
			KUNIT_ASSERT_EQ(test, amdgpu_ualink_pt_init(&node->pt, &ualink_test_pt_ops,
								    &ualink_test_pte, node), 0);
			if (amdgpu_ualink_dev_init(node->dev, node->id, &tpod_dev_ops, node,
						   &tpod_ops, node, &node->pt)) {
				amdgpu_ualink_pt_fini(&node->pt);
				KUNIT_FAIL_AND_ABORT(test, "amdgpu_ualink_dev_init");
			}
			node->mbox = node->dev->mbox;
		} else if (node->kind == TPOD_MBOX) {
			node->mbox = amdgpu_ualink_mbox_create(node->id, &tpod_ops,
							       node, &tpod_handlers,
							       node);
			KUNIT_ASSERT_NOT_ERR_OR_NULL(test, node->mbox);
		} else {
			continue;
		}
		/*
		 * Probes are sent when the keepalive tests say so, not when
		 * the real clock happens to fire in the middle of a test that
		 * moved the mailbox's clock on.
		 */
		KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_set_keepalive(node->mbox, 0), 0);
	}
	return pod;
}

/*
 * @n zeroed requests that outlive the pod's mailboxes: a test that stops at
 * a failed assertion may leave them submitted, and tearing the mailboxes
 * down completes them.
 */
struct amdgpu_ualink_req *tpod_reqs(struct tpod *pod, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < TPOD_ALLOCS && pod->allocs[i]; i++)
		;
	KUNIT_ASSERT_LT(pod->test, i, TPOD_ALLOCS);
	pod->allocs[i] = kcalloc(n, sizeof(struct amdgpu_ualink_req), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(pod->test, pod->allocs[i]);
	return pod->allocs[i];
}

/*
 * Hold @id's doorbells (on return its receive work is idle: nothing sent
 * to it is read until it is resumed), or ring the held ones and stop
 * holding.
 */
void tpod_pause(struct tpod *pod, u16 id, bool paused)
{
	struct tpod_node *node = tpod_node(pod, id);
	unsigned long from;

	spin_lock_irq(&pod->lock);
	node->paused = paused;
	if (!paused) {
		for_each_set_bit(from, node->held_bells, AMDGPU_UALINK_MAX_ACCELS)
			if (node->mbox)
				amdgpu_ualink_mbox_doorbell(node->mbox, from);
		bitmap_zero(node->held_bells, AMDGPU_UALINK_MAX_ACCELS);
	}
	spin_unlock_irq(&pod->lock);
	/*
	 * A doorbell rung before the pause may have queued the node's
	 * receive work already: let it finish, or it would read what is sent
	 * to the paused node from now on.
	 */
	if (paused && node->mbox)
		amdgpu_ualink_mbox_flush(node->mbox);
}

/* As raw node @from: write @entry into the next slot of its ring at @to. */
void tpod_inject(struct tpod *pod, u16 from, u16 to, const void *entry)
{
	struct tpod_ring *ring = ring_get(tpod_node(pod, to), from);

	KUNIT_ASSERT_NOT_NULL(pod->test, ring);
	memcpy(ring->slot[ring->staged++ % AMDGPU_UALINK_RING_ENTRIES], entry,
	       AMDGPU_UALINK_MSG_SIZE);
}

/* As raw node @from: publish what was injected and ring @to's doorbell. */
void tpod_publish(struct tpod *pod, u16 from, u16 to)
{
	struct tpod_ring *ring = tpod_ring(pod, to, from);

	/* as in t_publish() */
	smp_store_release(&ring->head, ring->staged);
	bell(pod, from, to);
}

/* Wait until @to consumed everything @from published. */
bool tpod_wait_consumed(struct tpod *pod, u16 from, u16 to)
{
	struct tpod_ring *ring = tpod_ring(pod, to, from);

	return wait_event_timeout(pod->bell,
				  READ_ONCE(ring->tail) == READ_ONCE(ring->head),
				  10 * HZ) > 0;
}

/* As raw node @to: decode the next message @from sent; 0 or -errno. */
int tpod_read(struct tpod *pod, u16 from, u16 to, u32 *next,
	      struct amdgpu_ualink_msg *msg)
{
	struct tpod_ring *ring;
	enum amdgpu_ualink_drop why;
	unsigned long timeout = jiffies + 10 * HZ;
	int ret;

	for (;;) {
		ring = tpod_ring(pod, to, from);
		/* as in t_rx_head() */
		if (ring && smp_load_acquire(&ring->head) != *next)
			break;
		if (time_after(jiffies, timeout))
			return -ETIMEDOUT;
		usleep_range(500, 1000);
	}
	ret = amdgpu_ualink_msg_decode(ring->slot[*next % AMDGPU_UALINK_RING_ENTRIES],
				       msg, &why);
	/* consumed: the sender sees the room when it next looks */
	WRITE_ONCE(ring->tail, ++*next);
	return ret;
}

/* As raw node @from: send @msg to @to now. */
void tpod_send(struct tpod *pod, u16 from, u16 to,
	       const struct amdgpu_ualink_msg *msg)
{
	u8 entry[AMDGPU_UALINK_MSG_SIZE];

	KUNIT_ASSERT_EQ(pod->test, amdgpu_ualink_msg_encode(msg, entry), 0);
	tpod_inject(pod, from, to, entry);
	tpod_publish(pod, from, to);
	KUNIT_ASSERT_TRUE(pod->test, tpod_wait_consumed(pod, from, to));
}

/* An NPA_REQ for a handle of @exporter, distinguished by @tag. */
struct amdgpu_ualink_msg tpod_npa_req(u16 from, u16 exporter, u64 tag)
{
	return (struct amdgpu_ualink_msg) {
		.type = AMDGPU_UALINK_MSG_NPA_REQ,
		.version = AMDGPU_UALINK_PROTO_VERSION,
		.sender = from,
		.receiver = exporter,
		.handle = { (tag << AMDGPU_UALINK_ACCEL_ID_BITS) | exporter,
			    0x5eed0000ULL | from },
	};
}

/* @req, an NPA_REQ for a handle of @exporter, ready to submit. */
void tpod_req_init(struct amdgpu_ualink_req *req, u16 from, u16 exporter,
		   u64 tag)
{
	struct amdgpu_ualink_msg m = tpod_npa_req(from, exporter, tag);

	memset(req, 0, sizeof(*req));
	req->msg.type = m.type;
	req->msg.handle[0] = m.handle[0];
	req->msg.handle[1] = m.handle[1];
}

/* Poll @cond every millisecond for up to @ms; true once it holds. */
bool tpod_wait_for(bool (*cond)(void *), void *arg, unsigned int ms)
{
	unsigned long timeout = jiffies + msecs_to_jiffies(ms);

	while (!cond(arg)) {
		if (time_after(jiffies, timeout))
			return cond(arg);
		usleep_range(500, 1000);
	}
	return true;
}

/*
 * How many @ev events @id's export/import layer heard of, once it heard of
 * @n or 10 s passed: callbacks run just after the mailbox lock is dropped,
 * so they may trail the failure of a request by a moment. With @n 0 (none
 * expected), once @id's worker has run what is due: its timer work (made
 * to run now) and the work queued so far, where the callbacks run; a
 * count read at once could miss an event on its way.
 */
int tpod_events(struct tpod *pod, u16 id, enum amdgpu_ualink_peer_event ev,
		int n)
{
	atomic_t *count = &tpod_node(pod, id)->events[ev];
	unsigned long timeout = jiffies + 10 * HZ;

	if (!n && tpod_mbox(pod, id)) {
		amdgpu_ualink_mbox_tick_now(tpod_mbox(pod, id));
		amdgpu_ualink_mbox_flush(tpod_mbox(pod, id));
	}

	while (atomic_read(count) < n && time_before(jiffies, timeout))
		usleep_range(500, 1000);
	return atomic_read(count);
}

/* Node @id's mailbox. */
struct amdgpu_ualink_mbox *tpod_mbox(struct tpod *pod, u16 id)
{
	return tpod_node(pod, id)->mbox;
}

/* Node @id's device (TPOD_DEV). */
struct amdgpu_ualink_dev *tpod_dev(struct tpod *pod, u16 id)
{
	return tpod_node(pod, id)->dev;
}

/* The counters of @id about @peer (-1: all), freed with the test. */
struct amdgpu_ualink_mbox_stats *tpod_stats(struct tpod *pod, u16 id, int peer)
{
	struct amdgpu_ualink_mbox_stats *s;

	s = kunit_kzalloc(pod->test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(pod->test, s);
	amdgpu_ualink_mbox_get_stats(tpod_mbox(pod, id), peer, s);
	return s;
}

/* NPA_REQs @id's test handler saw (TPOD_MBOX). */
int tpod_handled(struct tpod *pod, u16 id)
{
	return atomic_read(&tpod_node(pod, id)->requests[AMDGPU_UALINK_MSG_NPA_REQ]);
}

/* Ranges @id's device grants to importers (TPOD_DEV). */
unsigned int tpod_grants(struct tpod *pod, u16 id)
{
	struct amdgpu_ualink_dev *dev = tpod_dev(pod, id);
	unsigned int n;

	mutex_lock(&dev->lock);
	n = dev->num_grants;
	mutex_unlock(&dev->lock);
	return n;
}

/* Export @o from @id's device. */
void tpod_export(struct tpod *pod, u16 id, struct tobj *o, u64 handle[2])
{
	KUNIT_ASSERT_EQ(pod->test, amdgpu_ualink_export_create(tpod_dev(pod, id), o, o->size,
							       &o->slot, handle), 0);
}

/* As raw node @from: answer @to's HELLO @txn with generation @gen. */
void tpod_hello_ack(struct tpod *pod, u16 from, u16 to, u32 txn, u64 gen)
{
	struct amdgpu_ualink_msg m = {
		.type = AMDGPU_UALINK_MSG_HELLO_ACK, .flags = AMDGPU_UALINK_MSG_F_RESPONSE,
		.version = AMDGPU_UALINK_PROTO_VERSION, .sender = from, .receiver = to,
		.txn = txn, .generation = gen,
	};

	tpod_send(pod, from, to, &m);
}

/* A drm_printer's printfn into a &struct tpod_text at p->arg. */
void tpod_text_printfn(struct drm_printer *p, struct va_format *vaf)
{
	struct tpod_text *t = p->arg;
	va_list va;

	va_copy(va, *vaf->va);
	t->len += vscnprintf(t->buf + t->len, PAGE_SIZE - t->len, vaf->fmt, va);
	va_end(va);
}
