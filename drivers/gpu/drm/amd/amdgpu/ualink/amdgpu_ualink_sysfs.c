// SPDX-License-Identifier: GPL-2.0 OR MIT

#include <linux/bitmap.h>
#include <linux/device.h>
#include <linux/err.h>
#include <linux/export.h>
#include <linux/kobject.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/uuid.h>
#include <linux/workqueue.h>

#include "amdgpu_ualink_dev.h"
#include "amdgpu_ualink_npa.h"
#include "amdgpu_ualink_sysfs.h"

/**
 * DOC: sysfs
 *
 * A device with UALink has a read-only directory ``ualink/`` beside its
 * other attributes: ``/sys/class/drm/renderD<N>/device/ualink/`` (the
 * PCI device for amdgpu, the platform device of an accelerator of the
 * emulated pod). Its attributes, one value each, are documented in
 * ``Documentation/ABI/testing/sysfs-driver-amdgpu-ualink``:
 *
 * - ``accel_state``: ``ready`` exactly when exports and imports work
 *   (the ioctl's INFO says %AMDGPU_UALINK_STATE_ACTIVE); ``configured``
 *   while the device resets (it is in its virtual pod, not usable now);
 *   ``unconfigured`` while it is offline (out of the pod for now);
 *   ``error`` for a state this driver does not know. Userspace that
 *   advertises fabric handles only when it reads ``ready`` (as libhsakmt
 *   does) is right with this driver.
 * - ``accel_id``, ``vpod_id``, ``vpod_size``: as INFO gives them.
 * - ``vpod_active_accels``, ``local_accels``: accelerator IDs, in
 *   ascending order, separated by spaces; only on devices whose driver
 *   knows them (both for the emulated pod; the active ones for amdgpu).
 * - ``link_type``, ``bandwidth``, ``latency``, ``ppod_id``, ``ppod_size``,
 *   ``addr_mode``: the link and the physical pod, as AMD's UALink code
 *   names them, from what the driver's firmware interface says
 *   (&amdgpu_ualink_sysfs_ops.link); each reads ``unknown`` where it says
 *   nothing.
 * - ``exports``, ``imports``, ``grants``, ``pins``, ``peers_connected``:
 *   what the device holds right now; all of them are 0 on an idle device.
 * - ``timeouts``, ``retransmissions``, ``drops``, ``connection_ends``,
 *   ``shootdown_errors``, ``revoke_timeouts``, ``release_timeouts`` and,
 *   where the driver counts them, ``fabric_refusals``: what went wrong
 *   since the device's UALink set-up (amdgpu_ualink_dev_get_errors());
 *   they only grow.
 *
 * The directory is a named attribute group of the device: its files are
 * made for each device (they carry the device's state), so that a read
 * needs nothing of the driver's data behind the device.
 *
 * When ``accel_state`` changes, the driver says so
 * (amdgpu_ualink_sysfs_state_changed()): pollers of the attribute wake
 * (``POLLPRI``, as sysfs_notify() makes it) and the device sends a
 * ``change`` uevent with ``UALINK_ACCEL_STATE=`` and the new value, for
 * udev rules and monitors. Changes in quick succession may come as one
 * event, which always names the state at the time it is sent.
 *
 * The directory lives from the device's UALink set-up to its teardown;
 * a read that races the teardown finishes before the state it reads goes
 * (sysfs drains readers when the directory is removed).
 */

/* One file of the directory, made for one device. */
struct ualink_attr {
	struct device_attribute dattr;
	struct amdgpu_ualink_sysfs *s;
};

enum ualink_attr_id {
	ATTR_ACCEL_STATE,
	ATTR_ACCEL_ID,
	ATTR_VPOD_ID,
	ATTR_VPOD_SIZE,
	ATTR_VPOD_ACTIVE_ACCELS,
	ATTR_LOCAL_ACCELS,
	ATTR_LINK_TYPE,
	ATTR_BANDWIDTH,
	ATTR_LATENCY,
	ATTR_PPOD_ID,
	ATTR_PPOD_SIZE,
	ATTR_ADDR_MODE,
	ATTR_EXPORTS,
	ATTR_IMPORTS,
	ATTR_GRANTS,
	ATTR_PINS,
	ATTR_PEERS_CONNECTED,
	ATTR_TIMEOUTS,
	ATTR_RETRANSMISSIONS,
	ATTR_DROPS,
	ATTR_CONNECTION_ENDS,
	ATTR_SHOOTDOWN_ERRORS,
	ATTR_REVOKE_TIMEOUTS,
	ATTR_RELEASE_TIMEOUTS,
	ATTR_FABRIC_REFUSALS,
	NUM_ATTRS
};

struct amdgpu_ualink_sysfs {
	struct device *dev;
	struct amdgpu_ualink_dev *udev;
	const struct amdgpu_ualink_sysfs_ops *ops;
	void *priv;
	/* tells pollers and udev of a change of accel_state */
	struct work_struct state_work;
	struct ualink_attr attrs[NUM_ATTRS];
	struct attribute *ptrs[NUM_ATTRS + 1];	/* NULL-terminated */
	struct attribute_group group;
};

static void sysfs_info(struct amdgpu_ualink_sysfs *s,
		       struct drm_amdgpu_ualink_info *info)
{
	memset(info, 0, sizeof(*info));
	info->accel_id = s->udev->id;
	s->ops->info(s->priv, info);
}

/* What accel_state reads now. */
static const char *accel_state_name(struct amdgpu_ualink_sysfs *s)
{
	static const char *const names[] = {
		[AMDGPU_UALINK_STATE_ACTIVE] = "ready",
		[AMDGPU_UALINK_STATE_RESETTING] = "configured",
		[AMDGPU_UALINK_STATE_OFFLINE] = "unconfigured",
	};
	struct drm_amdgpu_ualink_info info;

	sysfs_info(s, &info);
	if (info.state >= ARRAY_SIZE(names) || !names[info.state])
		return "error";
	return names[info.state];
}

/* The IDs of @mask, space-separated: at most 4,010 characters for 1,024. */
static ssize_t emit_ids(char *buf, const unsigned long *mask)
{
	unsigned int id;
	int len = 0;

	for_each_set_bit(id, mask, AMDGPU_UALINK_MAX_ACCELS)
		len += sysfs_emit_at(buf, len, "%s%u", len ? " " : "", id);
	return len + sysfs_emit_at(buf, len, "\n");
}

static ssize_t emit_link(struct amdgpu_ualink_sysfs *s, enum ualink_attr_id id,
			 char *buf)
{
	struct amdgpu_ualink_sysfs_link link = {};

	if (s->ops->link)
		s->ops->link(s->priv, &link);
	switch (id) {
	case ATTR_LINK_TYPE:
		return sysfs_emit(buf, "%s\n", link.link_type ?: "unknown");
	case ATTR_ADDR_MODE:
		return sysfs_emit(buf, "%s\n", link.addr_mode ?: "unknown");
	case ATTR_BANDWIDTH:
		if (!link.bandwidth_mbytes)
			break;
		return sysfs_emit(buf, "%u\n", link.bandwidth_mbytes);
	case ATTR_LATENCY:
		if (!link.latency_ns)
			break;
		return sysfs_emit(buf, "%u\n", link.latency_ns);
	case ATTR_PPOD_ID:
		if (uuid_is_null(&link.ppod_id))
			break;
		return sysfs_emit(buf, "%pUb\n", &link.ppod_id);
	default:	/* ATTR_PPOD_SIZE */
		if (!link.ppod_size)
			break;
		return sysfs_emit(buf, "%u\n", link.ppod_size);
	}
	return sysfs_emit(buf, "unknown\n");
}

static ssize_t emit_count(struct amdgpu_ualink_sysfs *s, enum ualink_attr_id id,
			  char *buf)
{
	struct amdgpu_ualink_mbox *mbox = s->udev->mbox;
	struct amdgpu_ualink_dev_counts c;
	enum amdgpu_ualink_conn_state state;
	unsigned int n = 0, peer;
	u64 generation;

	if (id == ATTR_PEERS_CONNECTED) {
		for (peer = 0; peer < AMDGPU_UALINK_MAX_ACCELS; peer++)
			n += !amdgpu_ualink_mbox_peer_state(mbox, peer, &state,
							    &generation) &&
			     state == AMDGPU_UALINK_CONN_ESTABLISHED;
		return sysfs_emit(buf, "%u\n", n);
	}
	amdgpu_ualink_dev_get_counts(s->udev, &c);
	switch (id) {
	case ATTR_EXPORTS:
		n = c.exports;
		break;
	case ATTR_IMPORTS:
		n = c.imports;
		break;
	case ATTR_GRANTS:
		n = c.grants;
		break;
	default:	/* ATTR_PINS */
		n = c.pins;
		break;
	}
	return sysfs_emit(buf, "%u\n", n);
}

static ssize_t emit_error(struct amdgpu_ualink_sysfs *s, enum ualink_attr_id id,
			  char *buf)
{
	struct amdgpu_ualink_dev_errors e;
	u64 n;

	if (id == ATTR_FABRIC_REFUSALS)
		return sysfs_emit(buf, "%llu\n", s->ops->fabric_refusals(s->priv));
	amdgpu_ualink_dev_get_errors(s->udev, &e);
	switch (id) {
	case ATTR_TIMEOUTS:
		n = e.timeouts;
		break;
	case ATTR_RETRANSMISSIONS:
		n = e.retransmissions;
		break;
	case ATTR_DROPS:
		n = e.drops;
		break;
	case ATTR_CONNECTION_ENDS:
		n = e.connection_ends;
		break;
	case ATTR_SHOOTDOWN_ERRORS:
		n = e.shootdown_errors;
		break;
	case ATTR_REVOKE_TIMEOUTS:
		n = e.revoke_timeouts;
		break;
	default:	/* ATTR_RELEASE_TIMEOUTS */
		n = e.release_timeouts;
		break;
	}
	return sysfs_emit(buf, "%llu\n", n);
}

static ssize_t ualink_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	struct ualink_attr *a = container_of(attr, struct ualink_attr, dattr);
	struct amdgpu_ualink_sysfs *s = a->s;
	enum ualink_attr_id id = a - s->attrs;
	struct drm_amdgpu_ualink_info info;
	DECLARE_BITMAP(mask, AMDGPU_UALINK_MAX_ACCELS);

	switch (id) {
	case ATTR_ACCEL_STATE:
		return sysfs_emit(buf, "%s\n", accel_state_name(s));
	case ATTR_ACCEL_ID:
		return sysfs_emit(buf, "%u\n", s->udev->id);
	case ATTR_VPOD_ID:
		sysfs_info(s, &info);
		return sysfs_emit(buf, "%u\n", info.vpod_id);
	case ATTR_VPOD_SIZE:
		sysfs_info(s, &info);
		return sysfs_emit(buf, "%u\n", info.vpod_size);
	case ATTR_VPOD_ACTIVE_ACCELS:
	case ATTR_LOCAL_ACCELS:
		bitmap_zero(mask, AMDGPU_UALINK_MAX_ACCELS);
		if (id == ATTR_LOCAL_ACCELS)
			s->ops->local(s->priv, mask);
		else
			s->ops->active(s->priv, mask);
		return emit_ids(buf, mask);
	case ATTR_LINK_TYPE ... ATTR_ADDR_MODE:
		return emit_link(s, id, buf);
	case ATTR_EXPORTS ... ATTR_PEERS_CONNECTED:
		return emit_count(s, id, buf);
	default:
		return emit_error(s, id, buf);
	}
}

static const char *const attr_names[NUM_ATTRS] = {
	[ATTR_ACCEL_STATE] = "accel_state",
	[ATTR_ACCEL_ID] = "accel_id",
	[ATTR_VPOD_ID] = "vpod_id",
	[ATTR_VPOD_SIZE] = "vpod_size",
	[ATTR_VPOD_ACTIVE_ACCELS] = "vpod_active_accels",
	[ATTR_LOCAL_ACCELS] = "local_accels",
	[ATTR_LINK_TYPE] = "link_type",
	[ATTR_BANDWIDTH] = "bandwidth",
	[ATTR_LATENCY] = "latency",
	[ATTR_PPOD_ID] = "ppod_id",
	[ATTR_PPOD_SIZE] = "ppod_size",
	[ATTR_ADDR_MODE] = "addr_mode",
	[ATTR_EXPORTS] = "exports",
	[ATTR_IMPORTS] = "imports",
	[ATTR_GRANTS] = "grants",
	[ATTR_PINS] = "pins",
	[ATTR_PEERS_CONNECTED] = "peers_connected",
	[ATTR_TIMEOUTS] = "timeouts",
	[ATTR_RETRANSMISSIONS] = "retransmissions",
	[ATTR_DROPS] = "drops",
	[ATTR_CONNECTION_ENDS] = "connection_ends",
	[ATTR_SHOOTDOWN_ERRORS] = "shootdown_errors",
	[ATTR_REVOKE_TIMEOUTS] = "revoke_timeouts",
	[ATTR_RELEASE_TIMEOUTS] = "release_timeouts",
	[ATTR_FABRIC_REFUSALS] = "fabric_refusals",
};

/* What the driver cannot know is left out, not made up. */
static umode_t ualink_attr_visible(struct kobject *kobj, struct attribute *attr,
				   int n)
{
	struct ualink_attr *a = container_of(attr, struct ualink_attr, dattr.attr);
	const struct amdgpu_ualink_sysfs_ops *ops = a->s->ops;

	if ((n == ATTR_VPOD_ACTIVE_ACCELS && !ops->active) ||
	    (n == ATTR_LOCAL_ACCELS && !ops->local) ||
	    (n == ATTR_FABRIC_REFUSALS && !ops->fabric_refusals))
		return 0;
	return attr->mode;
}

static void state_work(struct work_struct *work)
{
	struct amdgpu_ualink_sysfs *s =
		container_of(work, struct amdgpu_ualink_sysfs, state_work);
	char env[48];
	char *envp[2] = { env };	/* NULL-terminated */

	snprintf(env, sizeof(env), "UALINK_ACCEL_STATE=%s", accel_state_name(s));
	sysfs_notify(&s->dev->kobj, s->group.name, attr_names[ATTR_ACCEL_STATE]);
	kobject_uevent_env(&s->dev->kobj, KOBJ_CHANGE, envp);
}

/**
 * amdgpu_ualink_sysfs_state_changed - the device's accel_state changed
 * @sysfs: what amdgpu_ualink_sysfs_create() returned; NULL or an ERR_PTR
 *	   is ignored
 *
 * Wakes pollers of ``accel_state`` and sends the device's ``change``
 * uevent, from a work item: callable in any context, a reset's included
 * (nothing is allocated here).
 */
void amdgpu_ualink_sysfs_state_changed(struct amdgpu_ualink_sysfs *sysfs)
{
	if (!IS_ERR_OR_NULL(sysfs))
		schedule_work(&sysfs->state_work);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_sysfs_state_changed);

/**
 * amdgpu_ualink_sysfs_create - add the ualink/ directory to a device
 * @dev: the device (amdgpu's PCI device, the emulated accelerator's
 *	 platform device)
 * @udev: its UALink state, which must outlive the directory
 * @ops: what the driver tells; @ops->info is required
 * @priv: passed to @ops
 *
 * Returns: the directory, for amdgpu_ualink_sysfs_destroy(), or an
 * ERR_PTR.
 */
struct amdgpu_ualink_sysfs *
amdgpu_ualink_sysfs_create(struct device *dev, struct amdgpu_ualink_dev *udev,
			   const struct amdgpu_ualink_sysfs_ops *ops, void *priv)
{
	struct amdgpu_ualink_sysfs *s;
	unsigned int i;
	int ret;

	s = kzalloc_obj(*s, GFP_KERNEL);
	if (!s)
		return ERR_PTR(-ENOMEM);
	s->dev = dev;
	s->udev = udev;
	s->ops = ops;
	s->priv = priv;
	INIT_WORK(&s->state_work, state_work);
	for (i = 0; i < NUM_ATTRS; i++) {
		struct ualink_attr *a = &s->attrs[i];

		sysfs_attr_init(&a->dattr.attr);
		a->dattr.attr.name = attr_names[i];
		a->dattr.attr.mode = 0444;
		a->dattr.show = ualink_show;
		a->s = s;
		s->ptrs[i] = &a->dattr.attr;
	}
	s->group.name = "ualink";
	s->group.attrs = s->ptrs;
	s->group.is_visible = ualink_attr_visible;
	ret = sysfs_create_group(&dev->kobj, &s->group);
	if (ret) {
		kfree(s);
		return ERR_PTR(ret);
	}
	return s;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_sysfs_create);

/**
 * amdgpu_ualink_sysfs_destroy - remove the ualink/ directory
 * @sysfs: what amdgpu_ualink_sysfs_create() returned; NULL or an ERR_PTR
 *	   is ignored
 *
 * Returns once no read of it runs any more, and no notification of a
 * change: the driver calls amdgpu_ualink_sysfs_state_changed() no more.
 */
void amdgpu_ualink_sysfs_destroy(struct amdgpu_ualink_sysfs *sysfs)
{
	if (IS_ERR_OR_NULL(sysfs))
		return;
	cancel_work_sync(&sysfs->state_work);
	sysfs_remove_group(&sysfs->dev->kobj, &sysfs->group);
	kfree(sysfs);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_sysfs_destroy);
