/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A page-table backend for tests of the UALink core and of the amdgpu
 * glue: tables in zeroed kernel pages, a made-up entry format. Static, so
 * that each test module has its own copy.
 */
#ifndef __AMDGPU_UALINK_TEST_PT_H__
#define __AMDGPU_UALINK_TEST_PT_H__

#include <linux/bits.h>
#include <linux/gfp.h>

#include "../amdgpu_ualink_pt.h"

static inline int ualink_test_pt_alloc(void *priv, unsigned int level,
				       struct amdgpu_ualink_pt_table *t)
{
	unsigned long page = get_zeroed_page(GFP_KERNEL);

	if (!page)
		return -ENOMEM;
	t->cpu = (u64 *)page;
	t->addr = __pa(page);
	return 0;
}

static inline void ualink_test_pt_free(void *priv, unsigned int level,
				       struct amdgpu_ualink_pt_table *t)
{
	free_page((unsigned long)t->cpu);
}

static const struct amdgpu_ualink_pt_ops ualink_test_pt_ops = {
	.alloc_table = ualink_test_pt_alloc,
	.free_table = ualink_test_pt_free,
};

static const struct amdgpu_ualink_pte_format ualink_test_pte = {
	.valid = BIT_ULL(0),
	.huge = BIT_ULL(1),
	.leaf = BIT_ULL(2),
	.addr_mask = GENMASK_ULL(51, 12),
};

#endif /* __AMDGPU_UALINK_TEST_PT_H__ */
