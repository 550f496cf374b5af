/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * uAPI of the emulated UALink pod (vpod), the virtual device that runs the
 * UALink uAPI of amdgpu without hardware, as vgem does for PRIME. Besides
 * DRM_IOCTL_AMDGPU_UALINK (include/uapi/drm/amdgpu_drm.h), which it
 * implements with the same number, structs and errnos as amdgpu, it has a
 * buffer create ioctl, a mmap offset ioctl, an emulated GPU access ioctl
 * and an emulated GPU job ioctl.
 * See Documentation/gpu/amdgpu/ualink.rst.
 */
#ifndef __AMDGPU_UALINK_VPOD_H__
#define __AMDGPU_UALINK_VPOD_H__

#include "drm.h"
#include "amdgpu_drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

/* the DRM driver name of the emulated pod's devices */
#define AMDGPU_UALINK_VPOD_DRIVER_NAME	"amdgpu_ualink_vpod"

#define DRM_AMDGPU_UALINK_VPOD_GEM_CREATE	0x00
#define DRM_AMDGPU_UALINK_VPOD_GEM_MMAP		0x01
#define DRM_AMDGPU_UALINK_VPOD_GPU_ACCESS	0x02
#define DRM_AMDGPU_UALINK_VPOD_GPU_JOB		0x03

#define DRM_IOCTL_AMDGPU_UALINK_VPOD_GEM_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_AMDGPU_UALINK_VPOD_GEM_CREATE, \
		 struct drm_amdgpu_ualink_vpod_gem_create)
#define DRM_IOCTL_AMDGPU_UALINK_VPOD_GEM_MMAP \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_AMDGPU_UALINK_VPOD_GEM_MMAP, \
		 struct drm_amdgpu_ualink_vpod_gem_mmap)
#define DRM_IOCTL_AMDGPU_UALINK_VPOD_GPU_ACCESS \
	DRM_IOW(DRM_COMMAND_BASE + DRM_AMDGPU_UALINK_VPOD_GPU_ACCESS, \
		struct drm_amdgpu_ualink_vpod_gpu_access)
#define DRM_IOCTL_AMDGPU_UALINK_VPOD_GPU_JOB \
	DRM_IOW(DRM_COMMAND_BASE + DRM_AMDGPU_UALINK_VPOD_GPU_JOB, \
		struct drm_amdgpu_ualink_vpod_gpu_job)

/* &drm_amdgpu_ualink_vpod_gem_create.domain */
#define AMDGPU_UALINK_VPOD_DOMAIN_VRAM		1	/* device memory: exportable */
#define AMDGPU_UALINK_VPOD_DOMAIN_SYSTEM	2	/* system memory: not exportable */

/**
 * struct drm_amdgpu_ualink_vpod_gem_create - DRM_IOCTL_AMDGPU_UALINK_VPOD_GEM_CREATE
 *
 * Creates a zeroed buffer. Device memory ("VRAM") is the accelerator's
 * emulated memory, a fixed amount of kernel memory per accelerator; its
 * buffers never move. Errors: ``EINVAL`` size 0 or above the device
 * memory, an unknown domain, @handle not zero; ``ENOSPC`` the device memory
 * is full (also when kernel memory ran out while placing the buffer: TTM
 * does not tell the two apart); ``ENOMEM``.
 */
struct drm_amdgpu_ualink_vpod_gem_create {
	/** @size: in: bytes, rounded up to 4 KiB */
	__u64 size;
	/** @domain: in: an AMDGPU_UALINK_VPOD_DOMAIN_* value */
	__u32 domain;
	/** @handle: out: the GEM handle */
	__u32 handle;
};

/**
 * struct drm_amdgpu_ualink_vpod_gem_mmap - DRM_IOCTL_AMDGPU_UALINK_VPOD_GEM_MMAP
 *
 * The offset to mmap() a buffer at on the DRM file. Errors: ``EINVAL``
 * non-zero @pad or @offset; ``ENOENT`` unknown handle; ``EPERM`` the
 * buffer is a UALink import (another accelerator's memory, which the CPU
 * cannot reach).
 */
struct drm_amdgpu_ualink_vpod_gem_mmap {
	/** @handle: in: the GEM handle */
	__u32 handle;
	/** @pad: must be zero */
	__u32 pad;
	/** @offset: out: the fake offset for mmap() */
	__u64 offset;
};

/* &drm_amdgpu_ualink_vpod_gpu_access.flags */
#define AMDGPU_UALINK_VPOD_ACCESS_WRITE	0x1	/* write, else read */

/* the most bytes one access moves */
#define AMDGPU_UALINK_VPOD_ACCESS_MAX	(64ULL << 20)

/**
 * struct drm_amdgpu_ualink_vpod_gpu_access - DRM_IOCTL_AMDGPU_UALINK_VPOD_GPU_ACCESS
 *
 * Reads or writes bytes of a buffer the way the accelerator's GPU would: a
 * buffer in our device memory directly; an imported buffer through the
 * fabric: its NPA is resolved to the exporting accelerator, whose NPA page
 * tables are walked to its memory, through our emulated TLB, which keeps
 * translations until the exporter shoots them down. Errors: ``EINVAL``
 * unknown flags, size 0 or above %AMDGPU_UALINK_VPOD_ACCESS_MAX, a range
 * outside the buffer; ``ENOENT`` unknown handle; ``EOPNOTSUPP`` a system
 * memory buffer (the emulated GPU reaches device memory and the fabric
 * only); ``ENODEV`` the memory behind an import is gone (revoked, or its
 * exporter reset or went offline); ``EFAULT`` @data cannot be read or
 * written; ``EINTR`` a signal came while waiting for the buffer. A failed
 * write may have written a part of the range.
 */
struct drm_amdgpu_ualink_vpod_gpu_access {
	/** @handle: in: the GEM handle */
	__u32 handle;
	/** @flags: in: AMDGPU_UALINK_VPOD_ACCESS_WRITE or 0 */
	__u32 flags;
	/** @offset: in: first byte of the buffer */
	__u64 offset;
	/** @size: in: bytes */
	__u64 size;
	/** @data: in: user pointer to @size bytes */
	__u64 data;
};

/* &drm_amdgpu_ualink_vpod_gpu_job.op */
#define AMDGPU_UALINK_VPOD_JOB_START	1	/* a job starts on the buffer */
#define AMDGPU_UALINK_VPOD_JOB_END	2	/* the buffer's job ends now */

/* the longest a job may run */
#define AMDGPU_UALINK_VPOD_JOB_MAX_MS	600000

/**
 * struct drm_amdgpu_ualink_vpod_gpu_job - DRM_IOCTL_AMDGPU_UALINK_VPOD_GPU_JOB
 *
 * Emulated GPU work that keeps a buffer busy, as a long-running kernel
 * would: %AMDGPU_UALINK_VPOD_JOB_START adds an unsignalled fence to the
 * buffer's reservation (as a write), which signals after @timeout_ms or at
 * %AMDGPU_UALINK_VPOD_JOB_END, whichever comes first; a buffer runs one job
 * at a time. Closing the file does not end a job. The job moves no data
 * (DRM_IOCTL_AMDGPU_UALINK_VPOD_GPU_ACCESS does): it is what revoking an
 * import waits for before the importer releases the range. Errors:
 * ``EINVAL`` unknown @op, non-zero @pad, @timeout_ms 0 or above
 * %AMDGPU_UALINK_VPOD_JOB_MAX_MS at START or non-zero at END; ``ENOENT``
 * unknown handle; ``EOPNOTSUPP`` a system memory buffer; ``EBUSY`` START
 * on a buffer whose job runs; ``ESRCH`` END on a buffer with no job
 * running; ``ENODEV`` START on an import whose memory is gone (revoked:
 * no new work reaches it); ``EINTR`` a signal came while waiting for the
 * buffer; ``ENOMEM``.
 */
struct drm_amdgpu_ualink_vpod_gpu_job {
	/** @handle: in: the GEM handle */
	__u32 handle;
	/** @op: in: AMDGPU_UALINK_VPOD_JOB_START or AMDGPU_UALINK_VPOD_JOB_END */
	__u32 op;
	/** @timeout_ms: in: START: how long the job runs unless ended */
	__u32 timeout_ms;
	/** @pad: must be zero */
	__u32 pad;
};

#if defined(__cplusplus)
}
#endif

#endif /* __AMDGPU_UALINK_VPOD_H__ */
