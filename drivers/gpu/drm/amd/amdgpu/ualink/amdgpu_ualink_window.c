// SPDX-License-Identifier: GPL-2.0 OR MIT

#include <linux/align.h>
#include <linux/bug.h>
#include <linux/errno.h>
#include <linux/export.h>
#include <linux/sizes.h>

#include "amdgpu_ualink_npa.h"
#include "amdgpu_ualink_window.h"

/**
 * DOC: Window allocator
 *
 * Each accelerator exports memory only into its own NPA window. The window
 * allocator hands out contiguous NPA ranges of the part above the ring
 * reserve, using &drm_mm. A range is aligned to the largest page-table leaf
 * it can hold (1 GiB for ranges of at least 1 GiB, 2 MiB for ranges of at
 * least 2 MiB, 4 KiB otherwise), so that memory which is contiguous and
 * aligned on the exporter can be mapped with large leaf entries, and so
 * that an importer can map it with such entries too: amdgpu's GPUVM picks
 * 2 MiB and 1 GiB entries from the virtual address alone and refuses a
 * range not aligned as its size says (-ERANGE). When no hole fits at that
 * alignment the allocation fails (-ENOSPC, NPA_FAIL "no space" to the
 * importer), and never falls back to a smaller alignment: such a range
 * would be granted, and then refused by every amdgpu importer for as long
 * as it lives.
 *
 * Locking: &amdgpu_ualink_window.lock serialises every allocation and free
 * and protects the accounting; the functions take it themselves.
 */

/**
 * amdgpu_ualink_window_init - set up the allocator of a local window
 * @win: the allocator
 * @id: the local accelerator's ID
 *
 * Returns: 0, or -EINVAL when @id is not an accelerator ID.
 */
int amdgpu_ualink_window_init(struct amdgpu_ualink_window *win, u16 id)
{
	u64 base = amdgpu_ualink_npa_build(id, AMDGPU_UALINK_NPA_RESERVE);

	if (base == AMDGPU_UALINK_NPA_INVALID)
		return -EINVAL;

	win->id = id;
	win->allocated = 0;
	win->ranges = 0;
	mutex_init(&win->lock);
	drm_mm_init(&win->mm, base,
		    AMDGPU_UALINK_NPA_WINDOW_SIZE - AMDGPU_UALINK_NPA_RESERVE);
	return 0;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_window_init);

/**
 * amdgpu_ualink_window_fini - tear down the allocator of a local window
 * @win: the allocator; every range must have been freed
 *
 * Warns when ranges are still allocated: that is a leak in the caller.
 */
void amdgpu_ualink_window_fini(struct amdgpu_ualink_window *win)
{
	WARN_ON(win->ranges);
	drm_mm_takedown(&win->mm);
	mutex_destroy(&win->lock);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_window_fini);

/**
 * amdgpu_ualink_window_alignment - the alignment the allocator uses for a size
 * @size: the size of the range
 *
 * Returns: 1 GiB, 2 MiB or 4 KiB: the largest page-table leaf that fits in
 * @size.
 */
u64 amdgpu_ualink_window_alignment(u64 size)
{
	if (size >= SZ_1G)
		return SZ_1G;
	if (size >= SZ_2M)
		return SZ_2M;
	return AMDGPU_UALINK_NPA_PAGE_SIZE;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_window_alignment);

/**
 * amdgpu_ualink_window_alloc - allocate a contiguous NPA range
 * @win: the allocator
 * @size: the size in bytes, a multiple of %AMDGPU_UALINK_NPA_PAGE_SIZE
 * @range: the range to fill in; must not be allocated already
 *
 * The range is aligned as amdgpu_ualink_window_alignment() says, always.
 *
 * Returns: 0, with the NPA in @range->node.start; -EINVAL when @size is zero
 * or not a multiple of the NPA page size; -ENOSPC when no free part of the
 * window is large enough at that alignment (the window is exhausted or too
 * fragmented).
 */
int amdgpu_ualink_window_alloc(struct amdgpu_ualink_window *win, u64 size,
			       struct amdgpu_ualink_npa_range *range)
{
	int ret;

	if (!size || !IS_ALIGNED(size, AMDGPU_UALINK_NPA_PAGE_SIZE))
		return -EINVAL;

	memset(&range->node, 0, sizeof(range->node));
	mutex_lock(&win->lock);
	ret = drm_mm_insert_node_generic(&win->mm, &range->node, size,
					 amdgpu_ualink_window_alignment(size), 0,
					 DRM_MM_INSERT_BEST);
	if (!ret) {
		win->allocated += size;
		win->ranges++;
	}
	mutex_unlock(&win->lock);
	return ret;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_window_alloc);

/**
 * amdgpu_ualink_window_free - give a range back
 * @win: the allocator it came from
 * @range: the range, allocated by amdgpu_ualink_window_alloc()
 */
void amdgpu_ualink_window_free(struct amdgpu_ualink_window *win,
			       struct amdgpu_ualink_npa_range *range)
{
	if (WARN_ON(!drm_mm_node_allocated(&range->node)))
		return;

	mutex_lock(&win->lock);
	win->allocated -= range->node.size;
	win->ranges--;
	drm_mm_remove_node(&range->node);
	mutex_unlock(&win->lock);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_window_free);

/**
 * amdgpu_ualink_window_usage - what is allocated now
 * @win: the allocator
 * @allocated: returns the bytes allocated
 * @ranges: returns the number of ranges allocated
 */
void amdgpu_ualink_window_usage(struct amdgpu_ualink_window *win,
				u64 *allocated, unsigned int *ranges)
{
	mutex_lock(&win->lock);
	*allocated = win->allocated;
	*ranges = win->ranges;
	mutex_unlock(&win->lock);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_window_usage);
