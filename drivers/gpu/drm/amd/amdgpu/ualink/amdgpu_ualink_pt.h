/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The per-GPU NPA page-table manager: maps contiguous ranges of the local
 * NPA window onto discontiguous local memory.
 */
#ifndef __AMDGPU_UALINK_PT_H__
#define __AMDGPU_UALINK_PT_H__

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/types.h>

struct scatterlist;
struct amdgpu_ualink_pt_node;

/* Levels: root (512 GiB entries), 1 GiB, 2 MiB and 4 KiB entries. */
#define AMDGPU_UALINK_PT_LEVELS		4
#define AMDGPU_UALINK_PT_ENTRIES	512

/**
 * struct amdgpu_ualink_pt_table - one page of page-table entries
 *
 * Filled in by &amdgpu_ualink_pt_ops.alloc_table.
 */
struct amdgpu_ualink_pt_table {
	/**
	 * @cpu: the %AMDGPU_UALINK_PT_ENTRIES 64-bit entries as the CPU
	 * writes them, all zero when allocated
	 */
	u64 *cpu;
	/** @addr: the address of the table, as directory entries hold it */
	u64 addr;
	/** @priv: the backend's own data */
	void *priv;
};

/**
 * struct amdgpu_ualink_pte_format - how the backend's hardware reads entries
 *
 * An entry is valid when all bits of @valid are set. A directory entry is
 * (table address & @addr_mask) | @valid. A leaf entry is (local address &
 * @addr_mask) | @valid | @leaf, plus @huge on the 1 GiB and 2 MiB levels.
 * A zero entry must be invalid.
 */
struct amdgpu_ualink_pte_format {
	/** @valid: bits set in every valid entry */
	u64 valid;
	/** @huge: bits that make an entry of the 1 GiB or 2 MiB level a leaf */
	u64 huge;
	/** @leaf: bits set in every leaf entry (access flags, fabric bits) */
	u64 leaf;
	/**
	 * @addr_mask: the bits of an entry that hold a 4 KiB-aligned address,
	 * bit 12 and every bit above it up to the highest:
	 * GENMASK_ULL(h, 12), with no bit of @valid, @huge or @leaf in it; an
	 * address above @addr_mask | 0xfff cannot be mapped
	 */
	u64 addr_mask;
};

/**
 * struct amdgpu_ualink_pt_ops - what the backend provides
 *
 * The callbacks are called with &amdgpu_ualink_pt.lock held and may sleep,
 * but must not wait for an unmap of the same manager.
 */
struct amdgpu_ualink_pt_ops {
	/**
	 * @alloc_table: allocate a zeroed table for @level; return 0 or a
	 * negative errno, which map passes on
	 */
	int (*alloc_table)(void *priv, unsigned int level,
			   struct amdgpu_ualink_pt_table *table);
	/** @free_table: free a table allocated by @alloc_table */
	void (*free_table)(void *priv, unsigned int level,
			   struct amdgpu_ualink_pt_table *table);
	/**
	 * @recycle: optional; an empty table is kept for reuse where
	 * @free_table would have freed it: wait as @free_table would until
	 * no walker can still be reading it. Without it, no table is kept
	 * (amdgpu_ualink_pt_keep_spares())
	 */
	void (*recycle)(void *priv, unsigned int level,
			struct amdgpu_ualink_pt_table *table);
	/**
	 * @commit: optional; entries @first to @first + @count - 1 of @table
	 * were written through &amdgpu_ualink_pt_table.cpu and must reach
	 * the hardware's copy
	 */
	void (*commit)(void *priv, struct amdgpu_ualink_pt_table *table,
		       unsigned int first, unsigned int count);
};

/**
 * struct amdgpu_ualink_pt - the NPA page tables of one accelerator
 */
struct amdgpu_ualink_pt {
	/** @ops: the backend */
	const struct amdgpu_ualink_pt_ops *ops;
	/** @fmt: the backend's entry format */
	const struct amdgpu_ualink_pte_format *fmt;
	/** @priv: passed to every callback */
	void *priv;
	/**
	 * @lock: protects the tree below @root, the contents of its tables
	 * and @tables; held across the callbacks
	 */
	struct mutex lock;
	/** @root: the root table, allocated for the manager's lifetime */
	struct amdgpu_ualink_pt_node *root;
	/** @tables: tables allocated and not yet freed, pending ones included */
	unsigned long tables;
	/**
	 * @spare: per level, empty tables kept for the next map instead of
	 * freed (all entries zero, in the hardware's copy too), under @lock;
	 * not counted in @tables
	 */
	struct list_head spare[AMDGPU_UALINK_PT_LEVELS];
	/** @spares: tables in @spare, under @lock */
	unsigned int spares;
	/** @max_spares: see amdgpu_ualink_pt_keep_spares(), under @lock */
	unsigned int max_spares;
};

/**
 * struct amdgpu_ualink_pt_cursor - walks the local memory a range maps to
 *
 * The memory is a sequence of contiguous chunks. The cursor starts on the
 * first chunk; when a chunk is used up the manager calls @next. Addresses
 * and sizes must be multiples of 4 KiB.
 */
struct amdgpu_ualink_pt_cursor {
	/** @addr: local address of what is left of the current chunk */
	u64 addr;
	/** @size: bytes left in the current chunk */
	u64 size;
	/** @next: move to the next chunk; false when there is none */
	bool (*next)(struct amdgpu_ualink_pt_cursor *cur);
	/** @sg: the current entry, for amdgpu_ualink_pt_cursor_init_sg() */
	struct scatterlist *sg;
	/** @priv: the driver's own state for @next */
	void *priv;
};

/**
 * struct amdgpu_ualink_pt_detached - the outcome of an unmap
 *
 * Entries of the range are invalid when amdgpu_ualink_pt_unmap() returns,
 * but remote TLBs may still hold translations and walkers may still read
 * the tables that became empty. The caller shoots down @start to @start +
 * @size - 1, then calls amdgpu_ualink_pt_unmap_done() to free @tables.
 */
struct amdgpu_ualink_pt_detached {
	/** @start: window offset of the range to shoot down */
	u64 start;
	/** @size: size of the range to shoot down, 0 when nothing was mapped */
	u64 size;
	/** @tables: tables that became empty, freed after the shootdown */
	struct list_head tables;
	/** @num_tables: the number of entries of @tables */
	unsigned int num_tables;
};

int amdgpu_ualink_pt_init(struct amdgpu_ualink_pt *pt,
			  const struct amdgpu_ualink_pt_ops *ops,
			  const struct amdgpu_ualink_pte_format *fmt,
			  void *priv);
void amdgpu_ualink_pt_fini(struct amdgpu_ualink_pt *pt);
void amdgpu_ualink_pt_keep_spares(struct amdgpu_ualink_pt *pt,
				  unsigned int max);
void amdgpu_ualink_pt_restore(struct amdgpu_ualink_pt *pt);
int amdgpu_ualink_pt_map(struct amdgpu_ualink_pt *pt, u64 offset, u64 size,
			 struct amdgpu_ualink_pt_cursor *cur);
int amdgpu_ualink_pt_unmap(struct amdgpu_ualink_pt *pt, u64 offset, u64 size,
			   struct amdgpu_ualink_pt_detached *unmap);
void amdgpu_ualink_pt_unmap_done(struct amdgpu_ualink_pt *pt,
				 struct amdgpu_ualink_pt_detached *unmap);
int amdgpu_ualink_pt_translate(struct amdgpu_ualink_pt *pt, u64 offset,
			       u64 *addr, u64 *leaf_size);
void amdgpu_ualink_pt_cursor_init_sg(struct amdgpu_ualink_pt_cursor *cur,
				     struct scatterlist *sgl);

#endif /* __AMDGPU_UALINK_PT_H__ */
