// SPDX-License-Identifier: GPL-2.0 OR MIT

#include <linux/bitmap.h>
#include <linux/device.h>
#include <linux/err.h>
#include <linux/export.h>
#include <linux/kobject.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
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
 *   knows them (the emulated pod).
 * - ``exports``, ``imports``, ``grants``, ``pins``, ``peers_connected``:
 *   what the device holds right now; all of them are 0 on an idle device.
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

struct amdgpu_ualink_sysfs {
	struct kobject kobj;
	struct device *dev;
	struct amdgpu_ualink_dev *udev;
	const struct amdgpu_ualink_sysfs_ops *ops;
	void *priv;
	/* tells pollers and udev of a change of accel_state */
	struct work_struct state_work;
};

static struct amdgpu_ualink_sysfs *to_sysfs(struct kobject *kobj)
{
	return container_of(kobj, struct amdgpu_ualink_sysfs, kobj);
}

static void sysfs_info(struct kobject *kobj, struct drm_amdgpu_ualink_info *info)
{
	struct amdgpu_ualink_sysfs *s = to_sysfs(kobj);

	memset(info, 0, sizeof(*info));
	info->accel_id = s->udev->id;
	s->ops->info(s->priv, info);
}

/* What accel_state reads now. */
static const char *accel_state_name(struct kobject *kobj)
{
	static const char *const names[] = {
		[AMDGPU_UALINK_STATE_ACTIVE] = "ready",
		[AMDGPU_UALINK_STATE_RESETTING] = "configured",
		[AMDGPU_UALINK_STATE_OFFLINE] = "unconfigured",
	};
	struct drm_amdgpu_ualink_info info;

	sysfs_info(kobj, &info);
	if (info.state >= ARRAY_SIZE(names) || !names[info.state])
		return "error";
	return names[info.state];
}

static ssize_t accel_state_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", accel_state_name(kobj));
}

static ssize_t accel_id_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "%u\n", to_sysfs(kobj)->udev->id);
}

static ssize_t vpod_id_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	struct drm_amdgpu_ualink_info info;

	sysfs_info(kobj, &info);
	return sysfs_emit(buf, "%u\n", info.vpod_id);
}

static ssize_t vpod_size_show(struct kobject *kobj,
			      struct kobj_attribute *attr, char *buf)
{
	struct drm_amdgpu_ualink_info info;

	sysfs_info(kobj, &info);
	return sysfs_emit(buf, "%u\n", info.vpod_size);
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

static ssize_t vpod_active_accels_show(struct kobject *kobj,
				       struct kobj_attribute *attr, char *buf)
{
	struct amdgpu_ualink_sysfs *s = to_sysfs(kobj);
	DECLARE_BITMAP(mask, AMDGPU_UALINK_MAX_ACCELS);

	bitmap_zero(mask, AMDGPU_UALINK_MAX_ACCELS);
	s->ops->active(s->priv, mask);
	return emit_ids(buf, mask);
}

static ssize_t local_accels_show(struct kobject *kobj,
				 struct kobj_attribute *attr, char *buf)
{
	struct amdgpu_ualink_sysfs *s = to_sysfs(kobj);
	DECLARE_BITMAP(mask, AMDGPU_UALINK_MAX_ACCELS);

	bitmap_zero(mask, AMDGPU_UALINK_MAX_ACCELS);
	s->ops->local(s->priv, mask);
	return emit_ids(buf, mask);
}

/* One of the unsigned counters of &struct amdgpu_ualink_dev_counts. */
static ssize_t count_show(struct kobject *kobj, char *buf, size_t offset)
{
	struct amdgpu_ualink_dev_counts c;

	amdgpu_ualink_dev_get_counts(to_sysfs(kobj)->udev, &c);
	return sysfs_emit(buf, "%u\n", *(unsigned int *)((char *)&c + offset));
}

static ssize_t exports_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return count_show(kobj, buf, offsetof(struct amdgpu_ualink_dev_counts, exports));
}

static ssize_t imports_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return count_show(kobj, buf, offsetof(struct amdgpu_ualink_dev_counts, imports));
}

static ssize_t grants_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	return count_show(kobj, buf, offsetof(struct amdgpu_ualink_dev_counts, grants));
}

static ssize_t pins_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	return count_show(kobj, buf, offsetof(struct amdgpu_ualink_dev_counts, pins));
}

static ssize_t peers_connected_show(struct kobject *kobj,
				    struct kobj_attribute *attr, char *buf)
{
	struct amdgpu_ualink_mbox *mbox = to_sysfs(kobj)->udev->mbox;
	enum amdgpu_ualink_conn_state state;
	unsigned int id, n = 0;
	u64 generation;

	for (id = 0; id < AMDGPU_UALINK_MAX_ACCELS; id++)
		n += !amdgpu_ualink_mbox_peer_state(mbox, id, &state, &generation) &&
		     state == AMDGPU_UALINK_CONN_ESTABLISHED;
	return sysfs_emit(buf, "%u\n", n);
}

static struct kobj_attribute accel_state_attr = __ATTR_RO(accel_state);
static struct kobj_attribute accel_id_attr = __ATTR_RO(accel_id);
static struct kobj_attribute vpod_id_attr = __ATTR_RO(vpod_id);
static struct kobj_attribute vpod_size_attr = __ATTR_RO(vpod_size);
static struct kobj_attribute vpod_active_accels_attr = __ATTR_RO(vpod_active_accels);
static struct kobj_attribute local_accels_attr = __ATTR_RO(local_accels);
static struct kobj_attribute peers_connected_attr = __ATTR_RO(peers_connected);
static struct kobj_attribute exports_attr = __ATTR_RO(exports);
static struct kobj_attribute imports_attr = __ATTR_RO(imports);
static struct kobj_attribute grants_attr = __ATTR_RO(grants);
static struct kobj_attribute pins_attr = __ATTR_RO(pins);

static struct attribute *ualink_attrs[] = {
	&accel_state_attr.attr,
	&accel_id_attr.attr,
	&vpod_id_attr.attr,
	&vpod_size_attr.attr,
	&vpod_active_accels_attr.attr,
	&local_accels_attr.attr,
	&exports_attr.attr,
	&imports_attr.attr,
	&grants_attr.attr,
	&pins_attr.attr,
	&peers_connected_attr.attr,
	NULL
};

static umode_t ualink_attr_visible(struct kobject *kobj, struct attribute *attr,
				   int n)
{
	const struct amdgpu_ualink_sysfs_ops *ops = to_sysfs(kobj)->ops;

	if (attr == &vpod_active_accels_attr.attr && !ops->active)
		return 0;
	if (attr == &local_accels_attr.attr && !ops->local)
		return 0;
	return attr->mode;
}

static const struct attribute_group ualink_group = {
	.attrs = ualink_attrs,
	.is_visible = ualink_attr_visible,
};
__ATTRIBUTE_GROUPS(ualink);

static void state_work(struct work_struct *work)
{
	struct amdgpu_ualink_sysfs *s =
		container_of(work, struct amdgpu_ualink_sysfs, state_work);
	char env[48];
	char *envp[2] = { env };	/* NULL-terminated */

	snprintf(env, sizeof(env), "UALINK_ACCEL_STATE=%s",
		 accel_state_name(&s->kobj));
	sysfs_notify(&s->kobj, NULL, "accel_state");
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

static void ualink_sysfs_release(struct kobject *kobj)
{
	kfree(to_sysfs(kobj));
}

static const struct kobj_type ualink_ktype = {
	.release = ualink_sysfs_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = ualink_groups,
};

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
	int ret;

	s = kzalloc_obj(*s, GFP_KERNEL);
	if (!s)
		return ERR_PTR(-ENOMEM);
	s->dev = dev;
	s->udev = udev;
	s->ops = ops;
	s->priv = priv;
	INIT_WORK(&s->state_work, state_work);
	ret = kobject_init_and_add(&s->kobj, &ualink_ktype, &dev->kobj, "ualink");
	if (ret) {
		kobject_put(&s->kobj);
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
	kobject_del(&sysfs->kobj);
	kobject_put(&sysfs->kobj);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_sysfs_destroy);
