/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * UALink uAPI for amdgpu and the emulated UALink pod (vpod).
 *
 * Userspace sees UALink memory only through opaque 128-bit handles: it never
 * sees a Network Physical Address. See Documentation/gpu/amdgpu/ualink.rst.
 */
#ifndef __AMDGPU_UALINK_H__
#define __AMDGPU_UALINK_H__

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

/*
 * The exporter's accelerator ID sits in the low bits of &drm_amdgpu_ualink_handle.lo;
 * a UALink pod has at most AMDGPU_UALINK_MAX_ACCELERATORS accelerators.
 */
#define AMDGPU_UALINK_HANDLE_ACCEL_ID_BITS	10
#define AMDGPU_UALINK_HANDLE_ACCEL_ID_MASK	0x3ffULL
#define AMDGPU_UALINK_MAX_ACCELERATORS		1024

/**
 * struct drm_amdgpu_ualink_handle - an opaque 128-bit UALink handle
 *
 * Names one exported buffer in a UALink pod. Bits 9..0 of @lo carry the
 * exporting accelerator's ID (%AMDGPU_UALINK_HANDLE_ACCEL_ID_MASK); all
 * other bits are random. A handle is never all zero. Importers must present
 * all 128 bits.
 */
struct drm_amdgpu_ualink_handle {
	/** @lo: low 64 bits; bits 9..0 are the exporter's accelerator ID */
	__u64 lo;
	/** @hi: high 64 bits */
	__u64 hi;
};

#if defined(__cplusplus)
}
#endif

#endif /* __AMDGPU_UALINK_H__ */
