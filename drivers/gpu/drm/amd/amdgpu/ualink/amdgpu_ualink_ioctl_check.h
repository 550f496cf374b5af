/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The argument check of the UALink ioctl. Inline, so that amdgpu built
 * without UALink support (and so without the core module) answers a
 * malformed argument with -EINVAL before it says -EOPNOTSUPP, as the uAPI
 * header promises, with the very code the core uses.
 */
#ifndef __AMDGPU_UALINK_IOCTL_CHECK_H__
#define __AMDGPU_UALINK_IOCTL_CHECK_H__

#include <linux/array_size.h>
#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/types.h>

#include <drm/amdgpu_drm.h>

/* What this kernel knows, as INFO reports it and the check below accepts. */
#define AMDGPU_UALINK_IOCTL_OPS	(BIT(AMDGPU_UALINK_OP_INFO) |		\
				 BIT(AMDGPU_UALINK_OP_EXPORT) |		\
				 BIT(AMDGPU_UALINK_OP_IMPORT) |		\
				 BIT(AMDGPU_UALINK_OP_IMPORT_BATCH))
#define AMDGPU_UALINK_IOCTL_IMPORT_FLAGS	AMDGPU_UALINK_IMPORT_CLOEXEC
#define AMDGPU_UALINK_IOCTL_BATCH_FLAGS	(AMDGPU_UALINK_IMPORT_CLOEXEC |	\
					 AMDGPU_UALINK_IMPORT_FDS |	\
					 AMDGPU_UALINK_IMPORT_RESTART)

static inline bool amdgpu_ualink_ioctl_zero(const void *p, size_t size)
{
	return !memchr_inv(p, 0, size);
}

/* every operation's argument ends on a word of the union */
static_assert(sizeof(struct drm_amdgpu_ualink_info) % sizeof(__u64) == 0);
static_assert(sizeof(struct drm_amdgpu_ualink_export) % sizeof(__u64) == 0);
static_assert(sizeof(struct drm_amdgpu_ualink_import) % sizeof(__u64) == 0);
static_assert(sizeof(struct drm_amdgpu_ualink_import_batch) % sizeof(__u64) == 0);

/*
 * Are the words of the union after the first @used bytes zero? Words, not
 * memchr_inv(): a repeated import is little more than this check and a
 * lookup, and the loop is a few loads.
 */
static __always_inline bool
amdgpu_ualink_ioctl_rest_zero(const struct drm_amdgpu_ualink *args,
			      size_t used)
{
	size_t i;

	for (i = used / sizeof(__u64); i < ARRAY_SIZE(args->u.raw); i++)
		if (args->u.raw[i])
			return false;
	return true;
}

/**
 * amdgpu_ualink_ioctl_check - is an argument well formed?
 * @args: the argument, copied in
 *
 * Returns: 0, or -EINVAL for an unknown op, non-zero padding or unused
 * bytes, output fields not zero, unknown flags, a zero UALink handle, or a
 * batch count of 0 or above %AMDGPU_UALINK_BATCH_MAX.
 */
static inline int amdgpu_ualink_ioctl_check(const struct drm_amdgpu_ualink *args)
{
	const struct drm_amdgpu_ualink_import_batch *b = &args->u.batch;
	const struct drm_amdgpu_ualink_import *i = &args->u.imp;
	const struct drm_amdgpu_ualink_export *e = &args->u.exp;

	if (args->pad)
		return -EINVAL;
	switch (args->op) {
	case AMDGPU_UALINK_OP_INFO:
		return amdgpu_ualink_ioctl_rest_zero(args, 0) ? 0 : -EINVAL;
	case AMDGPU_UALINK_OP_EXPORT:
		return !e->pad &&
		       amdgpu_ualink_ioctl_zero(&e->handle, sizeof(e->handle)) &&
		       amdgpu_ualink_ioctl_rest_zero(args, sizeof(*e)) ?
		       0 : -EINVAL;
	case AMDGPU_UALINK_OP_IMPORT:
		return !(i->flags & ~AMDGPU_UALINK_IOCTL_IMPORT_FLAGS) && !i->fd &&
		       (i->handle.lo || i->handle.hi) &&
		       amdgpu_ualink_ioctl_rest_zero(args, sizeof(*i)) ?
		       0 : -EINVAL;
	case AMDGPU_UALINK_OP_IMPORT_BATCH:
		return !(b->flags & ~AMDGPU_UALINK_IOCTL_BATCH_FLAGS) &&
		       b->count && b->count <= AMDGPU_UALINK_BATCH_MAX &&
		       amdgpu_ualink_ioctl_rest_zero(args, sizeof(*b)) ?
		       0 : -EINVAL;
	default:
		return -EINVAL;
	}
}

/**
 * amdgpu_ualink_ioctl_unsupported - the ioctl on a device without UALink
 * @args: the argument, copied in
 *
 * What amdgpu answers when it was built without UALink support, or its
 * device has no UALink IP.
 *
 * Returns: -EINVAL for a malformed argument, -EOPNOTSUPP otherwise.
 */
static inline int amdgpu_ualink_ioctl_unsupported(const struct drm_amdgpu_ualink *args)
{
	return amdgpu_ualink_ioctl_check(args) ?: -EOPNOTSUPP;
}

#endif /* __AMDGPU_UALINK_IOCTL_CHECK_H__ */
