/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Allocator of NPA ranges in the local accelerator's window.
 */
#ifndef __AMDGPU_UALINK_WINDOW_H__
#define __AMDGPU_UALINK_WINDOW_H__

#include <drm/drm_mm.h>
#include <linux/mutex.h>
#include <linux/types.h>

/**
 * struct amdgpu_ualink_window - the local window's NPA allocator
 *
 * Hands out ranges of the part of one accelerator's window that lies above
 * the ring reserve, as full NPAs.
 */
struct amdgpu_ualink_window {
	/** @id: the accelerator that owns the window */
	u16 id;
	/** @lock: protects @mm, @allocated and @ranges */
	struct mutex lock;
	/** @mm: the ranges, keyed by NPA */
	struct drm_mm mm;
	/** @allocated: bytes currently allocated */
	u64 allocated;
	/** @ranges: ranges currently allocated */
	unsigned int ranges;
};

/**
 * struct amdgpu_ualink_npa_range - one allocated range of NPA space
 *
 * Embedded by the user (an export); valid between a successful
 * amdgpu_ualink_window_alloc() and amdgpu_ualink_window_free().
 */
struct amdgpu_ualink_npa_range {
	/** @node: the allocation; @node.start is the NPA, @node.size its size */
	struct drm_mm_node node;
};

int amdgpu_ualink_window_init(struct amdgpu_ualink_window *win, u16 id);
void amdgpu_ualink_window_fini(struct amdgpu_ualink_window *win);
int amdgpu_ualink_window_alloc(struct amdgpu_ualink_window *win, u64 size,
			       struct amdgpu_ualink_npa_range *range);
void amdgpu_ualink_window_free(struct amdgpu_ualink_window *win,
			       struct amdgpu_ualink_npa_range *range);
u64 amdgpu_ualink_window_alignment(u64 size);
void amdgpu_ualink_window_usage(struct amdgpu_ualink_window *win,
				u64 *allocated, unsigned int *ranges);

#endif /* __AMDGPU_UALINK_WINDOW_H__ */
