/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * libualink: the UALink uAPI of amdgpu and of the emulated pod
 * (include/uapi/drm/amdgpu_drm.h) for programs, and what sysfs says of a
 * device's UALink. Every function returns 0 (or a count) on success and a
 * negative errno on failure; ualink_strerror() says what an errno means
 * for UALink. A call interrupted by a signal is restarted, as libdrm's
 * drmIoctl() does. See Documentation/gpu/amdgpu/ualink.rst.
 *
 * The uAPI is amdgpu_drm.h's, installed beside this header until the
 * kernel headers and libdrm of distributions have the UALink ioctl: build
 * with this header's directory before libdrm's on the include path
 * (pkg-config's --cflags for libualink does so), since libdrm's older copy
 * has the same include guard.
 */
#ifndef LIBUALINK_H
#define LIBUALINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "amdgpu_drm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* a handle as text: 32 hex digits, the high 64 bits first, plus a NUL */
#define UALINK_HANDLE_STRLEN	33

/* the first amdgpu version with DRM_IOCTL_AMDGPU_UALINK */
#define UALINK_AMDGPU_MAJOR	3
#define UALINK_AMDGPU_MINOR	65

/*
 * Discovery, once per device: does @fd's driver have the UALink ioctl
 * (amdgpu from UALINK_AMDGPU_MAJOR.UALINK_AMDGPU_MINOR on, or the emulated
 * pod), and does the device have UALink? 0 and INFO's answer in *@info
 * (which operations and flags the kernel knows: info->ops, ...); -ENOTTY
 * when the driver has no such ioctl (another driver, an older amdgpu, not
 * a DRM device: the ioctl itself would say EINVAL there); -EOPNOTSUPP
 * when the device has no UALink
 */
int ualink_probe(int fd, struct drm_amdgpu_ualink_info *info);
/* INFO: our accelerator ID, virtual pod, state and what the kernel knows */
int ualink_info(int fd, struct drm_amdgpu_ualink_info *info);
/* the UALink handle of GEM handle @gem of @fd */
int ualink_export(int fd, uint32_t gem, struct drm_amdgpu_ualink_handle *handle);
/* import @handle as a dma-buf; *@dmabuf gets its fd */
int ualink_import(int fd, struct drm_amdgpu_ualink_handle handle, uint32_t flags,
		  int *dmabuf);
/*
 * import @count handles in one call (about one round trip); each entry's
 * gem_handle, fd and error, zero going in, are filled in; returns 0 when
 * the call as a whole worked (entries may still have failed: see their
 * error)
 */
int ualink_import_batch(int fd, struct drm_amdgpu_ualink_batch_entry *entries,
			uint32_t count, uint32_t flags);

/* what @err (positive or negative) means for a UALink call */
const char *ualink_strerror(int err);

void ualink_handle_format(struct drm_amdgpu_ualink_handle h,
			  char buf[UALINK_HANDLE_STRLEN]);
int ualink_handle_parse(const char *text, struct drm_amdgpu_ualink_handle *h);
/* the accelerator that exported @h */
unsigned int ualink_handle_accel(struct drm_amdgpu_ualink_handle h);

/*
 * the value of @attr in the ualink/ sysfs directory of @fd's device,
 * without its newline; -ENOENT when the device has no UALink or no such
 * attribute
 */
int ualink_sysfs_read(int fd, const char *attr, char *buf, size_t size);
/*
 * the same by the name of the device's DRM node ("renderD128"), without
 * opening it: -ENOENT also for no such node, -EINVAL for a name that is
 * not one
 */
int ualink_sysfs_read_node(const char *node, const char *attr, char *buf,
			   size_t size);
/* accel_state reads "ready": exports and imports work now */
bool ualink_ready(int fd);

#ifdef __cplusplus
}
#endif

#endif /* LIBUALINK_H */
