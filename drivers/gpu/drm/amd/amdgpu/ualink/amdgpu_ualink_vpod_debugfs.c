// SPDX-License-Identifier: GPL-2.0 OR MIT

#include <linux/debugfs.h>
#include <linux/kstrtox.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include <drm/drm_print.h>

#include "amdgpu_ualink_fault.h"
#include "amdgpu_ualink_npa.h"
#include "amdgpu_ualink_vpod.h"
#include "amdgpu_ualink_vpod_shm.h"
#include "amdgpu_ualink_window.h"

/**
 * DOC: Emulated pod: debugfs
 *
 * ``/sys/kernel/debug/amdgpu_ualink_vpod/``:
 *
 * ``nodes``
 *	one line per accelerator: ``<id> <vpod> <state> <render node or ->``,
 *	state ``active``, ``resetting`` or ``offline``; in a pod that spans
 *	kernels, the device of another kernel's accelerator reads
 *	``remote``, and a fifth field counts the times a kernel brought the
 *	accelerator up (from the shared region); only the accelerators this
 *	kernel hosts have a ``node<id>`` directory
 * ``handles``
 *	one line per fabric-only accelerator: ``<id> 0x<lo> 0x<hi>``, the
 *	UALink handle of its 64 KiB heap, whose bytes are its ID as
 *	little-endian u32s
 * ``rings_healed``
 *	in a pod that spans kernels, the ring indices of this kernel's
 *	accelerators that another kernel overwrote and the poller wrote
 *	back (see "A pod of several kernels")
 * ``node<id>/counts``
 *	gauges, ``<key> <value>`` per line: ``exports grants pins imports
 *	npa_bytes pt_tables tlb_entries fabric_faults``; all 0 when the
 *	accelerator exports and imports nothing (a fabric-only accelerator's
 *	heap counts as one export and one pin: an export is pinned from its
 *	creation to its end), but the counters after them:
 *	``fabric_faults``, the accesses to its window the fabric refused so
 *	far (across kernels, those other kernels' accesses too, which they
 *	count in the region); ``revoke_timeouts``, revoked imports released while GPU work on
 *	them still ran (after ``revoke_timeout_ms``); ``release_timeouts``,
 *	ended exports whose importers did not all release in time;
 *	``shootdown_waits``, in a pod that spans kernels, shootdowns of
 *	another kernel's accelerator that found one of its accesses to this
 *	accelerator's memory in flight and waited for it (counted as the
 *	wait starts), and
 *	``shootdown_timeouts``, those that gave up (after a quarter of the
 *	mailbox timeout: the shootdown fails);
 *	``start_waits``, accesses of another kernel's accelerator to the
 *	memory of this accelerator's previous life that its start found in
 *	flight and waited for before zeroing the memory, and
 *	``start_timeouts``, those that had not ended after 10 s; then
 *	the mailbox worker's figures for ``make bench`` (&struct
 *	amdgpu_ualink_mbox_work_stats, ``mbox_`` and its member names):
 *	``mbox_runs``, ``mbox_woken``, ``mbox_wake_ns``,
 *	``mbox_wake_max_ns``, ``mbox_busy_ns``, ``mbox_requests`` and
 *	``mbox_request_ns``; last ``fabric_bell_calls`` and
 *	``fabric_bell_ns``, the doorbells this accelerator rang from a
 *	calling thread rather than a worker and the time the emulated
 *	fabric took to deliver them (waking the receiver's worker), what
 *	``make bench`` takes out of the importer's CPU time
 * ``node<id>/npa``
 *	write ``<npa> <bytes>`` (up to 4096) to read that many bytes at that
 *	NPA through the fabric as this accelerator, with no import involved:
 *	what a buggy or hostile peer kernel that kept or guessed an address
 *	reaches. The write fails with ENODEV when the fabric refuses or
 *	nothing maps the address; a read of the same open file then returns
 *	the bytes
 * ``node<id>/state``
 *	exports with their importers, imports, peers with connection state
 *	and generation, mailbox counters, NPA use, pins, TLB
 * ``node<id>/control``
 *	write ``reset`` (GPU reset), ``offline`` or ``online``; or
 *	``reset-begin``, which leaves the accelerator ``resetting`` (its
 *	uAPI answers ENETDOWN, peers are refused) until ``reset-end``
 *	finishes the reset; ``reset`` and ``reset-begin`` fail with EBUSY
 *	unless it is active, ``reset-end`` with EINVAL unless it is
 *	resetting; or ``unplug`` (a DRM accelerator): DRM's unplug of its
 *	device, as amdgpu's PCI remove does (every ioctl of its open files
 *	then fails with ENODEV), then it goes offline for good (``reset``,
 *	``reset-begin`` and ``online`` fail with ENODEV); EBUSY while it is
 *	resetting, ENODEV for a fabric-only accelerator
 * ``node<id>/vpod``
 *	the accelerator's virtual pod number, 0 to 1023; write to move it
 *	(a larger number fails with EINVAL; in a pod that spans kernels,
 *	where ``vpod_size`` alone sets virtual pods, any other write fails
 *	with EOPNOTSUPP)
 * ``node<id>/timeout``
 *	``<ms> <retries>``: the mailbox timeout of requests it sends (the
 *	time rounded to the timer's resolution); write to change it
 * ``node<id>/keepalive``
 *	write ``<ms>``: how long a connected peer may stay silent before the
 *	accelerator's mailbox probes it, 0 for never (below 100 ms or above
 *	an hour fails with EINVAL)
 * ``node<id>/fault``
 *	write ``<kind> [rate=<per million>] [count=<n>] [types=<mask>]
 *	[delay_ms=<ms>]`` (kind ``drop``, ``corrupt``, ``duplicate``,
 *	``delay`` or ``reorder``; types a mask of BIT(message type)) to set
 *	the rule for messages the accelerator sends, or ``clear``; read the
 *	rules and what they injected
 * ``node<id>/refuse_access``
 *	the next this many updates of the accelerator's access table (a
 *	grant to an importer) fail, as an IP that rejects one would: the
 *	importer's call fails with EREMOTEIO; counts down to 0
 * ``node<id>/window_fill``
 *	write ``fill`` to take every range of the accelerator's NPA window
 *	that is free, as if other exports used it all up: its core then has
 *	no room for an importer's range, and the importer's call fails with
 *	ENOSPC; ``clear`` gives them back. Reads the bytes taken
 * ``node<id>/pin_hold``
 *	write 1 to make the pins of exports made from now on wait, as a pin
 *	that waits for an eviction would (interruptibly), until 0 is
 *	written; reads ``<hold> <pins waiting>``. For what happens to an
 *	export meanwhile: its GEM handle closed (ENOENT), or a signal
 *	(the wait is interruptible)
 * ``node<id>/access_hold``
 *	in a pod that spans kernels, write 1 to make the accelerator's
 *	accesses to another kernel's memory wait once they have passed the
 *	owner's check and walked its tables, before they copy (an access in
 *	flight), until 0 is written; reads ``<hold> <accesses waiting>``.
 *	For the owner's revocation meanwhile: its shootdown waits for the
 *	access (``shootdown_waits``), up to a quarter of its mailbox timeout
 */

static const char *const state_names[] = {
	[AMDGPU_UALINK_VPOD_ACTIVE] = "active",
	[AMDGPU_UALINK_VPOD_RESETTING] = "resetting",
	[AMDGPU_UALINK_VPOD_OFFLINE] = "offline",
};

static int nodes_show(struct seq_file *m, void *data)
{
	struct amdgpu_ualink_vpod *pod = amdgpu_ualink_vpod;
	unsigned int i;

	for (i = 0; i < pod->num_nodes; i++) {
		struct amdgpu_ualink_vpod_node *node = pod->nodes[i];
		u32 vpod, size;

		amdgpu_ualink_vpod_info(node, &vpod, &size);
		seq_printf(m, "%u %u %s %s", node->id, vpod,
			   state_names[amdgpu_ualink_vpod_state(node)],
			   amdgpu_ualink_vpod_drm_name(node));
		/* a pod that spans kernels: times each was brought up */
		if (pod->shm)
			seq_printf(m, " %u",
				   amdgpu_ualink_vpod_shm_boots(pod->shm, node->id));
		seq_putc(m, '\n');
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(nodes);

static int handles_show(struct seq_file *m, void *data)
{
	struct amdgpu_ualink_vpod *pod = amdgpu_ualink_vpod;
	unsigned int i;

	for (i = 0; i < pod->num_nodes; i++) {
		struct amdgpu_ualink_vpod_node *node = pod->nodes[i];

		if (!node->heap)
			continue;
		seq_printf(m, "%u 0x%016llx 0x%016llx\n", node->id,
			   node->heap_handle[0], node->heap_handle[1]);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(handles);

static int counts_show(struct seq_file *m, void *data)
{
	struct amdgpu_ualink_vpod_node *node = m->private;
	struct amdgpu_ualink_mbox_work_stats w;
	struct amdgpu_ualink_dev_counts c;
	unsigned long tables;

	amdgpu_ualink_dev_get_counts(&node->udev, &c);
	amdgpu_ualink_mbox_get_work_stats(node->udev.mbox, &w);
	mutex_lock(&node->pt.lock);
	tables = node->pt.tables - 1;	/* not the root */
	mutex_unlock(&node->pt.lock);
	seq_printf(m, "exports %u\ngrants %u\npins %u\nimports %u\n",
		   c.exports, c.grants, c.pins, c.imports);
	seq_printf(m, "npa_bytes %llu\npt_tables %lu\ntlb_entries %u\n",
		   c.npa_bytes, tables, amdgpu_ualink_vpod_tlb_entries(node));
	seq_printf(m, "fabric_faults %llu\n", amdgpu_ualink_vpod_faults(node));
	seq_printf(m, "revoke_timeouts %d\nrelease_timeouts %d\n",
		   atomic_read(&node->udev.revoke_timeouts),
		   atomic_read(&node->udev.release_timeouts));
	seq_printf(m, "shootdown_waits %lld\nshootdown_timeouts %lld\n",
		   atomic64_read(&node->shootdown_waits),
		   atomic64_read(&node->shootdown_timeouts));
	seq_printf(m, "start_waits %lld\nstart_timeouts %lld\n",
		   atomic64_read(&node->start_waits),
		   atomic64_read(&node->start_timeouts));
	/* figures for benchmarks: they only grow */
	seq_printf(m, "mbox_runs %llu\nmbox_woken %llu\nmbox_wake_ns %llu\n",
		   w.runs, w.woken, w.wake_ns);
	seq_printf(m, "mbox_wake_max_ns %llu\nmbox_busy_ns %llu\n",
		   w.wake_max_ns, w.busy_ns);
	seq_printf(m, "mbox_requests %llu\nmbox_request_ns %llu\n",
		   w.requests, w.request_ns);
	seq_printf(m, "fabric_bell_calls %lld\nfabric_bell_ns %lld\n",
		   atomic64_read(&node->bell_calls), atomic64_read(&node->bell_ns));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(counts);

static int state_show(struct seq_file *m, void *data)
{
	struct amdgpu_ualink_vpod_node *node = m->private;
	struct drm_printer p = drm_seq_file_printer(m);
	u32 vpod, size;

	amdgpu_ualink_vpod_info(node, &vpod, &size);
	seq_printf(m, "vpod %u (%u accelerators), %s, device %s\n", vpod, size,
		   state_names[amdgpu_ualink_vpod_state(node)],
		   amdgpu_ualink_vpod_drm_name(node));
	seq_printf(m, "tlb: %u entries, %lld walks, %lld shootdowns; %llu accesses refused\n",
		   amdgpu_ualink_vpod_tlb_entries(node),
		   atomic64_read(&node->walks), atomic64_read(&node->shootdowns),
		   amdgpu_ualink_vpod_faults(node));
	amdgpu_ualink_dev_print(&node->udev, &p);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(state);

/* Copy a short command from userspace, without its trailing newline. */
static char *get_cmd(const char __user *ubuf, size_t len)
{
	char *cmd;

	if (len > 128)
		return ERR_PTR(-EINVAL);
	cmd = memdup_user_nul(ubuf, len);
	if (!IS_ERR(cmd))
		strim(cmd);
	return cmd;
}

static ssize_t control_write(struct file *file, const char __user *ubuf,
			     size_t len, loff_t *pos)
{
	struct amdgpu_ualink_vpod_node *node = file_inode(file)->i_private;
	char *cmd = get_cmd(ubuf, len);
	int ret;

	if (IS_ERR(cmd))
		return PTR_ERR(cmd);
	if (!strcmp(cmd, "reset"))
		ret = amdgpu_ualink_vpod_reset(node, AMDGPU_UALINK_VPOD_RESET_WHOLE);
	else if (!strcmp(cmd, "reset-begin"))
		ret = amdgpu_ualink_vpod_reset(node, AMDGPU_UALINK_VPOD_RESET_BEGIN);
	else if (!strcmp(cmd, "reset-end"))
		ret = amdgpu_ualink_vpod_reset(node, AMDGPU_UALINK_VPOD_RESET_END);
	else if (!strcmp(cmd, "offline"))
		ret = amdgpu_ualink_vpod_set_offline(node, true);
	else if (!strcmp(cmd, "online"))
		ret = amdgpu_ualink_vpod_set_offline(node, false);
	else if (!strcmp(cmd, "unplug"))
		ret = amdgpu_ualink_vpod_drm_unplug(node);
	else
		ret = -EINVAL;
	kfree(cmd);
	return ret ?: len;
}

static const struct file_operations control_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = control_write,
};

static int vpod_get(void *data, u64 *val)
{
	struct amdgpu_ualink_vpod_node *node = data;
	u32 size, vpod;

	amdgpu_ualink_vpod_info(node, &vpod, &size);
	*val = vpod;
	return 0;
}

static int vpod_set(void *data, u64 val)
{
	/* as many virtual pods as accelerators at most */
	if (val >= AMDGPU_UALINK_MAX_ACCELS)
		return -EINVAL;
	/* the other kernels would not hear of it, as they would of firmware */
	if (amdgpu_ualink_vpod->shm)
		return -EOPNOTSUPP;
	amdgpu_ualink_vpod_set_vpod(data, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(vpod_fops, vpod_get, vpod_set, "%llu\n");

static ssize_t timeout_write(struct file *file, const char __user *ubuf,
			     size_t len, loff_t *pos)
{
	struct amdgpu_ualink_vpod_node *node = file_inode(file)->i_private;
	char *cmd = get_cmd(ubuf, len);
	unsigned int ms, retries;
	int ret = -EINVAL;

	if (IS_ERR(cmd))
		return PTR_ERR(cmd);
	if (sscanf(cmd, "%u %u", &ms, &retries) == 2)
		ret = amdgpu_ualink_mbox_set_timeout(node->udev.mbox, ms, retries);
	kfree(cmd);
	return ret ?: len;
}

static int keepalive_set(void *data, u64 val)
{
	struct amdgpu_ualink_vpod_node *node = data;

	if (val > UINT_MAX)
		return -EINVAL;
	return amdgpu_ualink_mbox_set_keepalive(node->udev.mbox, val);
}
DEFINE_DEBUGFS_ATTRIBUTE(keepalive_fops, NULL, keepalive_set, "%llu\n");

/* What one open file of npa read last. */
struct npa_peek {
	struct amdgpu_ualink_vpod_node *node;
	size_t len;
	u8 buf[AMDGPU_UALINK_VPOD_PEEK_MAX];
};

static int npa_open(struct inode *inode, struct file *file)
{
	struct npa_peek *peek = kzalloc_obj(*peek, GFP_KERNEL);

	if (!peek)
		return -ENOMEM;
	peek->node = inode->i_private;
	file->private_data = peek;
	return nonseekable_open(inode, file);
}

static int npa_release(struct inode *inode, struct file *file)
{
	kfree(file->private_data);
	return 0;
}

/* "<npa> <bytes>": read them through the fabric, as the node's GPU would. */
static ssize_t npa_write(struct file *file, const char __user *ubuf,
			 size_t len, loff_t *pos)
{
	struct npa_peek *peek = file->private_data;
	char *cmd = get_cmd(ubuf, len);
	size_t n;
	u64 npa;
	int ret = -EINVAL;

	if (IS_ERR(cmd))
		return PTR_ERR(cmd);
	peek->len = 0;
	if (sscanf(cmd, "%lli %zu", &npa, &n) == 2 && n &&
	    n <= AMDGPU_UALINK_VPOD_PEEK_MAX)
		ret = amdgpu_ualink_vpod_fabric_access(peek->node, npa, peek->buf,
						       n, false);
	if (!ret)
		peek->len = n;
	kfree(cmd);
	return ret ?: len;
}

static ssize_t npa_read(struct file *file, char __user *ubuf, size_t len,
			loff_t *pos)
{
	struct npa_peek *peek = file->private_data;
	loff_t off = 0;

	return simple_read_from_buffer(ubuf, len, &off, peek->buf, peek->len);
}

static const struct file_operations npa_fops = {
	.owner = THIS_MODULE,
	.open = npa_open,
	.release = npa_release,
	.read = npa_read,
	.write = npa_write,
};

static int timeout_show(struct seq_file *m, void *data)
{
	struct amdgpu_ualink_vpod_node *node = m->private;
	unsigned int ms, retries;

	amdgpu_ualink_mbox_get_timeout(node->udev.mbox, &ms, &retries);
	seq_printf(m, "%u %u\n", ms, retries);
	return 0;
}

static int timeout_open(struct inode *inode, struct file *file)
{
	return single_open(file, timeout_show, inode->i_private);
}

static const struct file_operations timeout_fops = {
	.owner = THIS_MODULE,
	.open = timeout_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = timeout_write,
};

static int fault_show(struct seq_file *m, void *data)
{
	struct amdgpu_ualink_vpod_node *node = m->private;
	struct amdgpu_ualink_fault *fault = amdgpu_ualink_mbox_fault(node->udev.mbox);
	enum amdgpu_ualink_fault_kind kind;

	for (kind = 0; kind < AMDGPU_UALINK_FAULT_KINDS; kind++) {
		struct amdgpu_ualink_fault_rule r;
		u64 injected;

		amdgpu_ualink_fault_get(fault, kind, &r);
		spin_lock(&fault->lock);
		injected = fault->injected[kind];
		spin_unlock(&fault->lock);
		seq_printf(m, "%s rate=%u count=%u types=0x%x delay_ms=%u injected=%llu\n",
			   amdgpu_ualink_fault_name(kind), r.rate, r.count,
			   r.types, r.delay_ms, injected);
	}
	return 0;
}

static int fault_parse(char *cmd, enum amdgpu_ualink_fault_kind *kind,
		       struct amdgpu_ualink_fault_rule *r)
{
	char *word = strsep(&cmd, " ");
	int ret = 0;

	for (*kind = 0; *kind < AMDGPU_UALINK_FAULT_KINDS; (*kind)++)
		if (!strcmp(word, amdgpu_ualink_fault_name(*kind)))
			break;
	if (*kind == AMDGPU_UALINK_FAULT_KINDS)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	while (!ret && (word = strsep(&cmd, " "))) {
		char *val = strchr(word, '=');

		if (!*word)
			continue;
		if (!val)
			return -EINVAL;
		*val++ = 0;
		if (!strcmp(word, "rate"))
			ret = kstrtou32(val, 0, &r->rate);
		else if (!strcmp(word, "count"))
			ret = kstrtou32(val, 0, &r->count);
		else if (!strcmp(word, "types"))
			ret = kstrtou32(val, 0, &r->types);
		else if (!strcmp(word, "delay_ms"))
			ret = kstrtou32(val, 0, &r->delay_ms);
		else
			ret = -EINVAL;
	}
	return ret;
}

static ssize_t fault_write(struct file *file, const char __user *ubuf,
			   size_t len, loff_t *pos)
{
	struct seq_file *m = file->private_data;
	struct amdgpu_ualink_vpod_node *node = m->private;
	struct amdgpu_ualink_fault *fault = amdgpu_ualink_mbox_fault(node->udev.mbox);
	struct amdgpu_ualink_fault_rule rule;
	enum amdgpu_ualink_fault_kind kind;
	char *cmd = get_cmd(ubuf, len);
	int ret;

	if (IS_ERR(cmd))
		return PTR_ERR(cmd);
	if (!strcmp(cmd, "clear")) {
		amdgpu_ualink_fault_clear(fault);
		ret = 0;
	} else {
		ret = fault_parse(cmd, &kind, &rule) ?:
		      amdgpu_ualink_fault_set(fault, kind, &rule);
	}
	kfree(cmd);
	return ret ?: len;
}

static int fault_open(struct inode *inode, struct file *file)
{
	return single_open(file, fault_show, inode->i_private);
}

static const struct file_operations fault_fops = {
	.owner = THIS_MODULE,
	.open = fault_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = fault_write,
};

/**
 * struct amdgpu_ualink_vpod_fill - a range ``window_fill`` took
 * @link: in &amdgpu_ualink_vpod_node.fill
 * @range: the range, of the node's window
 */
struct amdgpu_ualink_vpod_fill {
	struct list_head link;
	struct amdgpu_ualink_npa_range range;
};

/* Take the largest free ranges until not even a page fits. */
static int window_fill(struct amdgpu_ualink_vpod_node *node)
{
	u64 size = AMDGPU_UALINK_NPA_WINDOW_SIZE / 2;

	lockdep_assert_held(&node->fill_lock);

	while (size >= PAGE_SIZE) {
		struct amdgpu_ualink_vpod_fill *f = kzalloc_obj(*f, GFP_KERNEL);
		int ret;

		if (!f)
			return -ENOMEM;
		ret = amdgpu_ualink_window_alloc(&node->udev.window, size,
						 &f->range);
		if (ret) {
			kfree(f);
			if (ret != -ENOSPC)
				return ret;
			size /= 2;
			continue;
		}
		list_add(&f->link, &node->fill);
	}
	return 0;
}

/**
 * amdgpu_ualink_vpod_window_clear - give back what ``window_fill`` took
 * @node: the accelerator
 */
void amdgpu_ualink_vpod_window_clear(struct amdgpu_ualink_vpod_node *node)
{
	struct amdgpu_ualink_vpod_fill *f, *next;

	mutex_lock(&node->fill_lock);
	list_for_each_entry_safe(f, next, &node->fill, link) {
		amdgpu_ualink_window_free(&node->udev.window, &f->range);
		list_del(&f->link);
		kfree(f);
	}
	mutex_unlock(&node->fill_lock);
}

static int window_fill_show(struct seq_file *m, void *data)
{
	struct amdgpu_ualink_vpod_node *node = m->private;
	struct amdgpu_ualink_vpod_fill *f;
	u64 bytes = 0;

	mutex_lock(&node->fill_lock);
	list_for_each_entry(f, &node->fill, link)
		bytes += f->range.node.size;
	mutex_unlock(&node->fill_lock);
	seq_printf(m, "%llu\n", bytes);
	return 0;
}

static int window_fill_open(struct inode *inode, struct file *file)
{
	return single_open(file, window_fill_show, inode->i_private);
}

static ssize_t window_fill_write(struct file *file, const char __user *ubuf,
				 size_t len, loff_t *pos)
{
	struct amdgpu_ualink_vpod_node *node = file_inode(file)->i_private;
	char *cmd = get_cmd(ubuf, len);
	int ret = 0;

	if (IS_ERR(cmd))
		return PTR_ERR(cmd);
	if (!strcmp(cmd, "fill")) {
		mutex_lock(&node->fill_lock);
		ret = window_fill(node);
		mutex_unlock(&node->fill_lock);
	} else if (!strcmp(cmd, "clear")) {
		amdgpu_ualink_vpod_window_clear(node);
	} else {
		ret = -EINVAL;
	}
	kfree(cmd);
	return ret ?: len;
}

static const struct file_operations window_fill_fops = {
	.owner = THIS_MODULE,
	.open = window_fill_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = window_fill_write,
};

/* pin_hold, access_hold: "<on> <operations waiting>" */
static int hold_show(struct seq_file *m, void *data)
{
	struct amdgpu_ualink_vpod_hold *hold = m->private;

	seq_printf(m, "%u %d\n", READ_ONCE(hold->on),
		   atomic_read(&hold->waiters));
	return 0;
}

static int hold_open(struct inode *inode, struct file *file)
{
	return single_open(file, hold_show, inode->i_private);
}

static ssize_t hold_write(struct file *file, const char __user *ubuf,
			  size_t len, loff_t *pos)
{
	struct amdgpu_ualink_vpod_hold *hold = file_inode(file)->i_private;
	bool on;
	int ret;

	ret = kstrtobool_from_user(ubuf, len, &on);
	if (ret)
		return ret;
	WRITE_ONCE(hold->on, on);
	if (!on)
		wake_up_all(&hold->wq);
	return len;
}

static const struct file_operations hold_fops = {
	.owner = THIS_MODULE,
	.open = hold_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = hold_write,
};

/**
 * amdgpu_ualink_vpod_debugfs_init - the pod's debugfs files
 *
 * Removed with the pod's directory (&amdgpu_ualink_vpod.debugfs).
 */
void amdgpu_ualink_vpod_debugfs_init(void)
{
	struct amdgpu_ualink_vpod *pod = amdgpu_ualink_vpod;
	struct dentry *root = debugfs_create_dir("amdgpu_ualink_vpod", NULL);
	unsigned int i;

	pod->debugfs = root;
	debugfs_create_file("nodes", 0444, root, NULL, &nodes_fops);
	debugfs_create_file("handles", 0444, root, NULL, &handles_fops);
	debugfs_create_atomic_t("rings_healed", 0444, root, &pod->healed);
	for (i = 0; i < pod->num_nodes; i++) {
		struct amdgpu_ualink_vpod_node *node = pod->nodes[i];
		char name[16];
		struct dentry *dir;

		if (node->remote)	/* another kernel's */
			continue;
		snprintf(name, sizeof(name), "node%u", node->id);
		dir = debugfs_create_dir(name, root);
		node->debugfs = dir;
		debugfs_create_file("counts", 0444, dir, node, &counts_fops);
		debugfs_create_file("state", 0444, dir, node, &state_fops);
		debugfs_create_file("control", 0200, dir, node, &control_fops);
		debugfs_create_file_unsafe("vpod", 0644, dir, node, &vpod_fops);
		debugfs_create_file("timeout", 0644, dir, node, &timeout_fops);
		debugfs_create_file_unsafe("keepalive", 0200, dir, node,
					   &keepalive_fops);
		debugfs_create_file("npa", 0600, dir, node, &npa_fops);
		debugfs_create_file("fault", 0644, dir, node, &fault_fops);
		debugfs_create_u32("refuse_access", 0644, dir,
				   &node->refuse_access);
		debugfs_create_file("window_fill", 0644, dir, node,
				    &window_fill_fops);
		debugfs_create_file("pin_hold", 0644, dir, &node->pin_hold,
				    &hold_fops);
		debugfs_create_file("access_hold", 0644, dir,
				    &node->access_hold, &hold_fops);
	}
}
