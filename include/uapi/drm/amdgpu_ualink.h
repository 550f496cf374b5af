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

/*
 * The UALink ioctl. PROVISIONAL index in amdgpu's command space, until
 * upstream assigns one: Linux 7.3 ends at 0x1a (PROC_OPTIONS); series
 * posted to amd-gfx use 0x1b (CWSR), 0x1c (EVENTFD), 0x1d (WAIT_EVENT),
 * 0x20 and 0x21. 0x1e is used by none of them. It changes if upstream
 * assigns another one.
 */
#define DRM_AMDGPU_UALINK		0x1e

#define DRM_IOCTL_AMDGPU_UALINK \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_AMDGPU_UALINK, struct drm_amdgpu_ualink)

/* &drm_amdgpu_ualink.op */
#define AMDGPU_UALINK_OP_INFO		1
#define AMDGPU_UALINK_OP_EXPORT		2
#define AMDGPU_UALINK_OP_IMPORT		3
#define AMDGPU_UALINK_OP_IMPORT_BATCH	4

/* &drm_amdgpu_ualink_info.state */
#define AMDGPU_UALINK_STATE_ACTIVE	1	/* imports and exports work */
#define AMDGPU_UALINK_STATE_RESETTING	2	/* the device is being reset */
#define AMDGPU_UALINK_STATE_OFFLINE	3	/* out of the pod for now */

/**
 * struct drm_amdgpu_ualink_info - AMDGPU_UALINK_OP_INFO: who we are, what we know
 *
 * All fields are written by the kernel; userspace passes them zero.
 *
 * Discovery: a driver that has this ioctl says so by its version
 * (DRM_IOCTL_VERSION): amdgpu from 3.65.0 on, and the emulated pod. A
 * driver without it answers ``EINVAL`` to any argument, as DRM does for
 * every ioctl number a driver lacks, so ask the version first; then INFO
 * tells ``EOPNOTSUPP`` (the device has no UALink) from a device that has,
 * and says which operations and flags this kernel knows: a later kernel
 * adds bits, and an operation or flag that is not listed fails with
 * ``EINVAL``.
 */
struct drm_amdgpu_ualink_info {
	/** @accel_id: our accelerator ID, 0 to 1023 */
	__u32 accel_id;
	/** @vpod_id: the virtual pod we belong to */
	__u32 vpod_id;
	/**
	 * @vpod_size: accelerators configured in our virtual pod, us and
	 * any that are offline for now included (an import from an offline
	 * one fails with ENOLINK)
	 */
	__u32 vpod_size;
	/** @state: an AMDGPU_UALINK_STATE_* value */
	__u32 state;
	/**
	 * @ops: the operations this kernel knows, bit
	 * (1 << AMDGPU_UALINK_OP_*) each, INFO's own included: never zero
	 */
	__u32 ops;
	/** @import_flags: the &drm_amdgpu_ualink_import.flags it knows */
	__u32 import_flags;
	/** @batch_flags: the &drm_amdgpu_ualink_import_batch.flags it knows */
	__u32 batch_flags;
	/** @batch_max: the largest &drm_amdgpu_ualink_import_batch.count */
	__u32 batch_max;
};

/**
 * struct drm_amdgpu_ualink_export - AMDGPU_UALINK_OP_EXPORT
 *
 * Gives the buffer of a GEM handle of the calling file a UALink handle. The
 * same buffer always gets the same handle; the handle dies when the
 * buffer's last GEM handle is closed, and importers then lose access.
 * Exported memory is pinned in device memory from the export until the
 * handle dies (a system suspend unpins it, resume pins it again): the
 * export fails when there is no room (ENOSPC or ENOMEM).
 */
struct drm_amdgpu_ualink_export {
	/** @gem_handle: in: the buffer */
	__u32 gem_handle;
	/** @pad: must be zero */
	__u32 pad;
	/** @handle: out: its UALink handle */
	struct drm_amdgpu_ualink_handle handle;
};

/* &drm_amdgpu_ualink_import.flags and &drm_amdgpu_ualink_import_batch.flags */
#define AMDGPU_UALINK_IMPORT_CLOEXEC	0x1	/* fds are close-on-exec */
#define AMDGPU_UALINK_IMPORT_FDS	0x2	/* batch: fds too */
#define AMDGPU_UALINK_IMPORT_RESTART	0x4	/* batch: entries partly done */

/**
 * struct drm_amdgpu_ualink_import - AMDGPU_UALINK_OP_IMPORT
 *
 * Imports the buffer behind a UALink handle as a dma-buf. A second import
 * of a live handle returns a new fd for the same dma-buf; importing a
 * handle of our own device returns our own buffer, as our own dma-buf. The
 * memory of another accelerator is never CPU-mappable: mmap of its dma-buf
 * or of a GEM handle made from it fails. The fd is installed before the
 * result is copied back, as DRM's PRIME_HANDLE_TO_FD does: when that copy
 * fails (EFAULT) the fd stays open in the process, unknown to the caller.
 */
struct drm_amdgpu_ualink_import {
	/** @handle: in: the UALink handle */
	struct drm_amdgpu_ualink_handle handle;
	/** @flags: in: AMDGPU_UALINK_IMPORT_CLOEXEC or 0 */
	__u32 flags;
	/** @fd: out: the dma-buf */
	__s32 fd;
};

/**
 * struct drm_amdgpu_ualink_batch_entry - one handle of a batched import
 */
struct drm_amdgpu_ualink_batch_entry {
	/** @handle: in: the UALink handle */
	struct drm_amdgpu_ualink_handle handle;
	/** @gem_handle: out: a GEM handle of the calling file, when @error is 0 */
	__u32 gem_handle;
	/**
	 * @fd: out: the dma-buf with AMDGPU_UALINK_IMPORT_FDS, else -1; also
	 * -1 when the fd could not be made (the GEM handle stays valid)
	 */
	__s32 fd;
	/**
	 * @error: out: 0, or the negative errno of this entry alone (never
	 * -EINTR: a signal fails the whole batch, see
	 * &drm_amdgpu_ualink_import_batch)
	 */
	__s32 error;
	/** @pad: must be zero */
	__u32 pad;
};

/* the most entries of one batch: a whole pod */
#define AMDGPU_UALINK_BATCH_MAX		AMDGPU_UALINK_MAX_ACCELERATORS

/**
 * struct drm_amdgpu_ualink_import_batch - AMDGPU_UALINK_OP_IMPORT_BATCH
 *
 * Imports many handles in one call, for symmetric-heap start-up where every
 * rank imports every other rank's heap: every request is on the wire before
 * the first wait, so the call costs about one round trip, and entries are
 * finished as their answers arrive: an exporter slow to answer holds up no
 * other entry. Results come back
 * per entry, as GEM handles of the calling file (fds only on request: a
 * whole pod's worth would exceed the default limit of open files; an entry
 * whose GEM handle was made but whose fd could not be keeps its GEM handle
 * and gets fd -1). Each entry says how it went.
 *
 * GEM handles follow PRIME's rules: a file has one GEM handle per imported
 * buffer. A handle named twice, in one batch or in two, gets the same GEM
 * handle, and so does a PRIME import (DRM_IOCTL_PRIME_FD_TO_HANDLE) of the
 * buffer's dma-buf fd, from AMDGPU_UALINK_OP_IMPORT or from a batch; the
 * handle is not counted: one GEM_CLOSE closes it, as for PRIME, and the
 * next import makes it anew. Userspace that keeps one entry per GEM handle
 * (libdrm's amdgpu_bo_import(), Mesa) finds the buffer it has already. A
 * handle of our own buffer gets PRIME's handle of it: the handle the file
 * made the buffer with only if it made a PRIME fd of it, as with PRIME.
 *
 * A signal during the wait fails the call with EINTR and sets
 * AMDGPU_UALINK_IMPORT_RESTART in @flags: the entries finished by then
 * carry their results, the others are left as they came (outputs zero),
 * and the argument, submitted again as it is (as libdrm's drmIoctl() and
 * SA_RESTART do), finishes those others and leaves the finished ones
 * alone. The requests of an interrupted batch stay in flight for its
 * restart, and what they are granted is held for it a second or two.
 * With AMDGPU_UALINK_IMPORT_RESTART an entry is either untouched (outputs
 * zero) or finished: error 0 with a GEM handle and fd -1 (or an fd with
 * AMDGPU_UALINK_IMPORT_FDS), or a negative errno with GEM handle 0 and fd
 * -1; anything else is EINVAL.
 */
struct drm_amdgpu_ualink_import_batch {
	/** @entries: in: user pointer to @count &struct drm_amdgpu_ualink_batch_entry */
	__u64 entries;
	/** @count: in: 1 to AMDGPU_UALINK_BATCH_MAX */
	__u32 count;
	/**
	 * @flags: in: AMDGPU_UALINK_IMPORT_CLOEXEC, AMDGPU_UALINK_IMPORT_FDS,
	 * AMDGPU_UALINK_IMPORT_RESTART; out: AMDGPU_UALINK_IMPORT_RESTART
	 * set when a signal interrupted the call
	 */
	__u32 flags;
};

/**
 * struct drm_amdgpu_ualink - the argument of DRM_IOCTL_AMDGPU_UALINK
 *
 * Errors, one meaning each (reviewed against the DRM uAPI guidelines,
 * Documentation/gpu/drm-uapi.rst; "ops" says where each can come from):
 *
 * ==============  ===========  ============================================
 * errno           ops          meaning
 * ==============  ===========  ============================================
 * EINVAL          all          malformed argument: unknown @op, non-zero @pad,
 *                              padding or union bytes the operation does not
 *                              use, output fields not zero on input (export
 *                              handle; import fd; a batch entry's
 *                              gem_handle, fd, error, unless it is a
 *                              finished entry of a restarted batch), unknown
 *                              flags, a zero UALink handle, a batch count of
 *                              0 or above the maximum. Also DRM's answer on
 *                              a driver without this ioctl (see INFO)
 * EFAULT          all          the argument, or a batch's entries, cannot
 *                              be read or written (imports a batch made
 *                              then stay, as GEM handles and fds of the
 *                              calling file)
 * ENOENT          export,      what the call names does not exist: the GEM
 *                 import       handle (export; also one closed while the
 *                              export was made), or the UALink handle
 *                              (import: its exporter knows no such export,
 *                              or it was unexported while the import was
 *                              under way)
 * EACCES          import       the handle names an accelerator outside our
 *                              virtual pod
 * EOPNOTSUPP      all          the device has no UALink (INFO too: nothing
 *                              to say); look no further on this device
 * ENETDOWN        all but      the device has UALink but is not active in
 *                 INFO         its pod now (resetting or offline: INFO's
 *                              state says which, and sysfs ``accel_state``
 *                              does not read ``ready``), or it stopped
 *                              during the call; retry once it is active.
 *                              Not EAGAIN, which libdrm's drmIoctl() retries
 *                              at once, in a loop, as long as a reset lasts
 * ETIMEDOUT       import       the exporter did not answer in time (the
 *                              mailbox timeout, counted from when the
 *                              request was first sent), or the request
 *                              waited that long for its turn; it fails
 *                              alone, other imports from the exporter go on
 * ENOSPC          import,      no room: the exporter's NPA window is full
 *                 export       (import); device memory to pin the buffer
 *                              for its importers (export)
 * ENOLINK         import       the exporter is offline, or it reset or went
 *                              offline during the call
 * EREMOTEIO       import       the exporter refused for another reason (its
 *                              fabric port would not let us in, its buffer
 *                              could not be pinned again after a resume)
 * ERANGE          import       this device's GPU page tables cannot address
 *                              the range the exporter granted; nothing is
 *                              imported
 * EPERM           export       the buffer cannot be exported (not in device
 *                              memory, userptr, imported, itself a UALink
 *                              import, sharing its VM's reservation
 *                              (VM_ALWAYS_VALID) or encrypted (TMZ))
 * ENOMEM          all          out of memory
 * EMFILE          import       out of file descriptors (the import op;
 *                              a batch with AMDGPU_UALINK_IMPORT_FDS)
 * ENFILE          import       the system is out of files: an import's
 *                              dma-buf is one, with or without an fd, as
 *                              its GEM handle is PRIME's handle of it
 * ENODEV          all          the device was unplugged (DRM's own answer
 *                              to every ioctl then). The UALink state is
 *                              torn down only once the last file is closed,
 *                              so no call sees it go
 * EINTR           export,      a signal interrupted the wait (for the pin,
 *                 import       for the exporter); the call may
 *                              be restarted as it is (a batch keeps what it
 *                              finished, see &drm_amdgpu_ualink_import_batch)
 * ENOBUFS         import       too many imports, of all processes, wait for
 *                              their turn to be sent to this exporter (4,096
 *                              in the kernel); nothing was sent, retry later
 * EDQUOT          import       the call would take the calling process past
 *                              its quota of imports in flight on the device
 *                              (``import_quota`` of amdgpu_ualink.ko, 1,024
 *                              by default, whichever files and threads they
 *                              come from; one whose caller stopped waiting
 *                              counts until the exporter answered); nothing
 *                              was sent, retry once others are done. A batch
 *                              larger than the quota fails whole; a handle
 *                              the device holds granted already is never
 *                              refused so
 * ==============  ===========  ============================================
 *
 * EIO is not among them: as drm-uapi.rst has it, EIO says the GPU is dead,
 * and nothing of this ioctl reports that (an exporter that refuses is
 * alive: EREMOTEIO). EDQUOT is a quota per process, as the keyrings' per
 * user quota is: strerror() calls it "Disk quota exceeded", so say
 * ualink_strerror() or the table above to users. It is not EAGAIN, which
 * drmIoctl() retries at once, in a loop, nor ENOSPC, which says the
 * exporter's window is full. ENOENT is the one answer to "no such name",
 * as GEM's own lookups give it; the operation says which name.
 *
 * A batch reports the errnos of imports per entry and fails as a whole
 * only with ``EINVAL``, ``EFAULT``, ``ENOMEM``, ``EOPNOTSUPP``,
 * ``ENETDOWN``, ``EDQUOT`` or ``EINTR``.
 */
struct drm_amdgpu_ualink {
	/** @op: in: an AMDGPU_UALINK_OP_* value */
	__u32 op;
	/** @pad: must be zero */
	__u32 pad;
	/** @u: the operation's argument; bytes it does not use must be zero */
	union {
		/** @u.info: AMDGPU_UALINK_OP_INFO */
		struct drm_amdgpu_ualink_info info;
		/** @u.exp: AMDGPU_UALINK_OP_EXPORT ("export" is a C++ keyword) */
		struct drm_amdgpu_ualink_export exp;
		/** @u.imp: AMDGPU_UALINK_OP_IMPORT */
		struct drm_amdgpu_ualink_import imp;
		/** @u.batch: AMDGPU_UALINK_OP_IMPORT_BATCH */
		struct drm_amdgpu_ualink_import_batch batch;
		/** @u.raw: the union's size, fixed */
		__u64 raw[6];
	} u;
};

#if defined(__cplusplus)
}
#endif

#endif /* __AMDGPU_UALINK_H__ */
