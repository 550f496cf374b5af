// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libualink: thin wrappers of DRM_IOCTL_AMDGPU_UALINK and of the ualink/
 * sysfs directory. See libualink.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "amdgpu_ualink_vpod.h"
#include "libualink.h"

/* One call, restarted after a signal (as drmIoctl() does). */
static int call(int fd, struct drm_amdgpu_ualink *args)
{
	int ret;

	do {
		ret = ioctl(fd, DRM_IOCTL_AMDGPU_UALINK, args);
	} while (ret == -1 && errno == EINTR);
	return ret ? -errno : 0;
}

/*
 * Does @fd's driver have DRM_IOCTL_AMDGPU_UALINK? Its name and version
 * say so; the ioctl cannot, since DRM answers EINVAL to a number a driver
 * lacks, as ours does to a malformed argument.
 */
static bool has_ioctl(int fd)
{
	char name[32] = "";
	struct drm_version v = { .name_len = sizeof(name) - 1, .name = name };

	if (ioctl(fd, DRM_IOCTL_VERSION, &v))
		return false;
	if (v.name_len >= sizeof(name))	/* cut: neither name */
		return false;
	if (!strcmp(name, AMDGPU_UALINK_VPOD_DRIVER_NAME))
		return true;
	return !strcmp(name, "amdgpu") &&
	       (v.version_major > UALINK_AMDGPU_MAJOR ||
		(v.version_major == UALINK_AMDGPU_MAJOR &&
		 v.version_minor >= UALINK_AMDGPU_MINOR));
}

int ualink_probe(int fd, struct drm_amdgpu_ualink_info *info)
{
	if (!has_ioctl(fd))
		return -ENOTTY;
	return ualink_info(fd, info);
}

int ualink_info(int fd, struct drm_amdgpu_ualink_info *info)
{
	struct drm_amdgpu_ualink args = { .op = AMDGPU_UALINK_OP_INFO };
	int ret = call(fd, &args);

	if (!ret)
		*info = args.u.info;
	return ret;
}

int ualink_export(int fd, uint32_t gem, struct drm_amdgpu_ualink_handle *handle)
{
	struct drm_amdgpu_ualink args = {
		.op = AMDGPU_UALINK_OP_EXPORT,
		.u.exp.gem_handle = gem,
	};
	int ret = call(fd, &args);

	if (!ret)
		*handle = args.u.exp.handle;
	return ret;
}

int ualink_import(int fd, struct drm_amdgpu_ualink_handle handle, uint32_t flags,
		  int *dmabuf)
{
	struct drm_amdgpu_ualink args = {
		.op = AMDGPU_UALINK_OP_IMPORT,
		.u.imp.handle = handle,
		.u.imp.flags = flags,
	};
	int ret = call(fd, &args);

	if (!ret)
		*dmabuf = args.u.imp.fd;
	return ret;
}

int ualink_import_batch(int fd, struct drm_amdgpu_ualink_batch_entry *entries,
			uint32_t count, uint32_t flags)
{
	struct drm_amdgpu_ualink args = {
		.op = AMDGPU_UALINK_OP_IMPORT_BATCH,
		.u.batch.entries = (uintptr_t)entries,
		.u.batch.count = count,
		.u.batch.flags = flags,
	};
	return call(fd, &args);
}

const char *ualink_strerror(int err)
{
	switch (err < 0 ? -err : err) {
	case 0: return "success";
	case EINVAL: return "malformed argument, or an operation or flag this kernel does not know";
	case ENOTTY:
		return "the driver has no UALink ioctl (not amdgpu 3.65 or later, nor the emulated pod)";
	case EFAULT: return "bad address";
	case ENOENT: return "unknown GEM handle or UALink handle, or the export is gone";
	case EACCES: return "the exporter is outside our virtual pod";
	case EOPNOTSUPP: return "the device has no UALink";
	case ENETDOWN: return "UALink is not active on this device now (resetting or offline)";
	case ETIMEDOUT: return "the exporter did not answer in time";
	case ENOSPC: return "no room: the exporter's NPA window, or device memory to pin";
	case ENOLINK: return "the exporter is offline, or reset during the call";
	case EREMOTEIO: return "the exporter refused";
	case ERANGE: return "this GPU cannot address the granted range";
	case EPERM: return "this buffer cannot be exported";
	case ENOMEM: return "out of memory";
	case EMFILE: case ENFILE: return "out of file descriptors";
	case ENODEV: return "the device was unplugged";
	case EINTR: return "interrupted by a signal";
	case EDQUOT: return "too many imports in flight from this process; retry";
	case ENOBUFS: return "too many imports wait for this exporter; retry later";
	default: return strerror(err < 0 ? -err : err);
	}
}

void ualink_handle_format(struct drm_amdgpu_ualink_handle h,
			  char buf[UALINK_HANDLE_STRLEN])
{
	snprintf(buf, UALINK_HANDLE_STRLEN, "%016" PRIx64 "%016" PRIx64,
		 (uint64_t)h.hi, (uint64_t)h.lo);
}

int ualink_handle_parse(const char *text, struct drm_amdgpu_ualink_handle *h)
{
	char hi[17], *end;

	if (strlen(text) != UALINK_HANDLE_STRLEN - 1 ||
	    strspn(text, "0123456789abcdefABCDEF") != UALINK_HANDLE_STRLEN - 1)
		return -EINVAL;
	memcpy(hi, text, 16);
	hi[16] = '\0';
	h->hi = strtoull(hi, &end, 16);
	h->lo = strtoull(text + 16, &end, 16);
	return h->hi || h->lo ? 0 : -EINVAL;
}

unsigned int ualink_handle_accel(struct drm_amdgpu_ualink_handle h)
{
	return h.lo & AMDGPU_UALINK_HANDLE_ACCEL_ID_MASK;
}

/* Read the sysfs file @path into @buf, without its newline. */
static int read_attr(const char *path, char *buf, size_t size)
{
	ssize_t len;
	int f;

	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return -errno;
	len = read(f, buf, size - 1);
	close(f);
	if (len < 0)
		return -errno;
	buf[len] = '\0';
	if (len && buf[len - 1] == '\n')
		buf[--len] = '\0';
	return len;
}

int ualink_sysfs_read(int fd, const char *attr, char *buf, size_t size)
{
	char path[128];
	struct stat st;

	if (fstat(fd, &st) || !S_ISCHR(st.st_mode))
		return -ENODEV;
	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/device/ualink/%s",
		 major(st.st_rdev), minor(st.st_rdev), attr);
	return read_attr(path, buf, size);
}

int ualink_sysfs_read_node(const char *node, const char *attr, char *buf,
			   size_t size)
{
	char path[256];

	if (!*node || strchr(node, '/') || node[0] == '.' ||
	    strchr(attr, '/') ||
	    snprintf(path, sizeof(path), "/sys/class/drm/%s/device/ualink/%s",
		     node, attr) >= (int)sizeof(path))
		return -EINVAL;
	return read_attr(path, buf, size);
}

bool ualink_ready(int fd)
{
	char state[32];

	return ualink_sysfs_read(fd, "accel_state", state, sizeof(state)) > 0 &&
	       !strcmp(state, "ready");
}
