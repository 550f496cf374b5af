// SPDX-License-Identifier: GPL-2.0 OR MIT

#include <asm/barrier.h>
#include <linux/align.h>
#include <linux/bitmap.h>
#include <linux/bug.h>
#include <linux/compiler.h>
#include <linux/err.h>
#include <linux/errno.h>
#include <linux/export.h>
#include <linux/lockdep.h>
#include <linux/log2.h>
#include <linux/overflow.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include "amdgpu_ualink_npa.h"
#include "amdgpu_ualink_pt.h"

/**
 * DOC: NPA page tables
 *
 * An exporter maps discontiguous local memory into a contiguous range of its
 * NPA window through page tables of its own, much like GPUVM maps a
 * process's virtual addresses. &struct amdgpu_ualink_pt manages one
 * accelerator's tables: four levels of 512 64-bit entries, each table one
 * 4 KiB page, covering the 2 TiB window::
 *
 *	level 0 (root)   window offset bits 40..39   512 GiB per entry
 *	level 1          bits 38..30                   1 GiB per entry, or leaf
 *	level 2          bits 29..21                   2 MiB per entry, or leaf
 *	level 3          bits 20..12                   4 KiB leaves
 *
 * A 1 GiB or 2 MiB leaf is used wherever the NPA range and the local memory
 * are both aligned to it and one chunk of the cursor covers it (adjacent
 * chunks are not merged: a cursor should yield maximal contiguous chunks).
 *
 * The backend (&struct amdgpu_ualink_pt_ops) allocates and frees table pages
 * and says how its hardware reads an entry (&struct
 * amdgpu_ualink_pte_format): amdgpu keeps tables in VRAM in GPUVM's format,
 * the emulated pod in kernel memory. The manager keeps a shadow tree of
 * &struct amdgpu_ualink_pt_node with the children of each directory and
 * which entries it wrote, so it never reads the tables back: not their
 * addresses from the hardware's format, nor whether an entry is in use.
 * What a table holds may have been written by someone else (in a pod that
 * spans kernels, the tables are in memory every kernel can write); it is
 * only ever overwritten.
 *
 * Local memory is described by a cursor (&struct amdgpu_ualink_pt_cursor)
 * that yields contiguous chunks, never by an array of pages.
 *
 * Mapping either maps the whole range or, on any error, leaves the tables
 * as they were: what it wrote is cleared and tables it allocated are freed
 * at once. That is safe because the range has not been handed to anyone
 * yet (it comes fresh from the window allocator, and its previous user shot
 * it down before freeing it), so no remote walker can hold those tables.
 * Unmapping clears the entries at once but only detaches the tables that
 * became empty: remote TLBs may still cache the range and walkers may still
 * read those tables until the caller's shootdown completes, after which
 * amdgpu_ualink_pt_unmap_done() frees them, or keeps a few for the next
 * map (amdgpu_ualink_pt_keep_spares()).
 *
 * Locking: &amdgpu_ualink_pt.lock serialises map, unmap, unmap_done and
 * translate of one manager, so callers may map and unmap disjoint ranges
 * from several CPUs. The backend's callbacks run under it, so they must
 * not wait for an unmap of the same manager (for instance by evicting
 * memory whose export is being revoked). A walker that reads the tables
 * without the lock, as hardware or an emulator of it does, sees a new
 * table only after its zeroed contents: directory entries are published
 * with a write barrier.
 */

#define PT_LAST		(AMDGPU_UALINK_PT_LEVELS - 1)
#define PT_ENTRIES	AMDGPU_UALINK_PT_ENTRIES
#define PT_PAGE		AMDGPU_UALINK_NPA_PAGE_SIZE

static_assert(12 + 9 * PT_LAST + 2 == AMDGPU_UALINK_NPA_WINDOW_SHIFT);

/**
 * struct amdgpu_ualink_pt_node - the manager's view of one table
 * @table: the backend's table
 * @link: in &amdgpu_ualink_pt_detached.tables once detached
 * @level: 0 (root) to %PT_LAST
 * @used: entries in @set
 * @children: for directory levels, the node each directory entry points to
 *	(a page of its own: with the header it would take an 8 KiB slab)
 * @set: the entries of @table we wrote a valid entry into; whether an
 *	entry is in use is never read from @table
 */
struct amdgpu_ualink_pt_node {
	struct amdgpu_ualink_pt_table table;
	struct list_head link;
	unsigned int level;
	unsigned int used;
	struct amdgpu_ualink_pt_node **children;
	DECLARE_BITMAP(set, PT_ENTRIES);
};

/* The state of one map call, passed down the levels. */
struct pt_map {
	struct amdgpu_ualink_pt_cursor *cur;
	u64 offset;	/* next window offset to map */
	u64 end;	/* end of the range */
	u64 mask;	/* &amdgpu_ualink_pte_format.addr_mask */
	u64 dir;	/* bits of a directory entry besides the address */
	u64 leaf;	/* bits of a 4 KiB leaf besides the address */
	u64 huge;	/* bits of a large leaf besides the address; 0: none */
	u64 limit;	/* the highest local address an entry can hold */
};

static unsigned int pt_shift(unsigned int level)
{
	return 12 + 9 * (PT_LAST - level);
}

static unsigned int pt_index(u64 offset, unsigned int level)
{
	return (offset >> pt_shift(level)) & (PT_ENTRIES - 1);
}

static struct amdgpu_ualink_pt_node *pt_node_alloc(struct amdgpu_ualink_pt *pt,
						   unsigned int level)
{
	struct amdgpu_ualink_pt_node *node;
	int ret;

	lockdep_assert_held(&pt->lock);
	/* an empty table of an earlier mapping: all zero, no child */
	node = list_first_entry_or_null(&pt->spare[level],
					struct amdgpu_ualink_pt_node, link);
	if (node) {
		list_del_init(&node->link);
		pt->spares--;
		pt->tables++;
		return node;
	}
	node = kzalloc_obj(*node, GFP_KERNEL);
	if (!node)
		return ERR_PTR(-ENOMEM);
	if (level < PT_LAST) {
		node->children = kcalloc(PT_ENTRIES, sizeof(*node->children),
					 GFP_KERNEL);
		if (!node->children) {
			kfree(node);
			return ERR_PTR(-ENOMEM);
		}
	}

	ret = pt->ops->alloc_table(pt->priv, level, &node->table);
	if (ret) {
		kfree(node->children);
		kfree(node);
		return ERR_PTR(ret);
	}
	node->level = level;
	INIT_LIST_HEAD(&node->link);
	pt->tables++;
	return node;
}

/* Free a table, or keep it for reuse: it is empty (@used 0, no child). */
static void pt_node_free(struct amdgpu_ualink_pt *pt,
			 struct amdgpu_ualink_pt_node *node)
{
	lockdep_assert_held(&pt->lock);
	pt->tables--;
	if (pt->spares < pt->max_spares && pt->ops->recycle && node->level &&
	    !WARN_ON(node->used)) {
		pt->ops->recycle(pt->priv, node->level, &node->table);
		list_add(&node->link, &pt->spare[node->level]);
		pt->spares++;
		return;
	}
	pt->ops->free_table(pt->priv, node->level, &node->table);
	kfree(node->children);
	kfree(node);
}

static void pt_free_list(struct amdgpu_ualink_pt *pt, struct list_head *list)
{
	struct amdgpu_ualink_pt_node *node, *tmp;

	list_for_each_entry_safe(node, tmp, list, link) {
		list_del(&node->link);
		pt_node_free(pt, node);
	}
}

static void pt_commit(struct amdgpu_ualink_pt *pt,
		      struct amdgpu_ualink_pt_node *node,
		      unsigned int first, unsigned int count)
{
	if (count && pt->ops->commit)
		pt->ops->commit(pt->priv, &node->table, first, count);
}

/* Is the cursor's chunk 4 KiB aligned, with no byte above @limit? */
static __always_inline bool
pt_chunk_ok(const struct amdgpu_ualink_pt_cursor *cur, u64 limit)
{
	return IS_ALIGNED(cur->addr | cur->size, PT_PAGE) && cur->addr <= limit &&
	       (!cur->size || cur->size - 1 <= limit - cur->addr);
}

/*
 * Move the cursor to a chunk with bytes left; -EINVAL if there is none or
 * it is misaligned or above what an entry can hold.
 */
static __always_inline int
pt_cursor_next(struct amdgpu_ualink_pt_cursor *cur, u64 limit)
{
	while (!cur->size)
		if (!cur->next || !cur->next(cur))
			return -EINVAL;
	return pt_chunk_ok(cur, limit) ? 0 : -EINVAL;
}

static void pt_cursor_advance(struct pt_map *m, u64 size)
{
	m->cur->addr += size;
	m->cur->size -= size;
	m->offset += size;
}

static bool pt_can_huge(const struct pt_map *m, u64 size)
{
	return m->huge && IS_ALIGNED(m->offset, size) &&
	       m->end - m->offset >= size && IS_ALIGNED(m->cur->addr, size) &&
	       m->cur->size >= size;
}

/*
 * Write 4 KiB leaves into a last-level table: the hot loop. The cursor is
 * kept in locals so that the stores to the table, which may alias it as far
 * as the compiler knows, do not force it through memory. Every address is
 * at most &pt_map.limit and no flag bit lies in the address bits
 * (amdgpu_ualink_pt_init()), so the leaves of one chunk are an arithmetic
 * progression, written four at a time.
 */
static int pt_map_ptes(struct amdgpu_ualink_pt *pt,
		       struct amdgpu_ualink_pt_node *node, struct pt_map *m)
{
	struct amdgpu_ualink_pt_cursor *cur = m->cur;
	unsigned int first = pt_index(m->offset, PT_LAST), i = first, last;
	const u64 mask = m->mask, leaf = m->leaf;
	u64 addr = cur->addr, left = cur->size, pte;
	u64 *cpu = node->table.cpu, *p;
	bool empty = !node->used;
	int ret = 0;

	lockdep_assert_held(&pt->lock);
	last = first + min_t(u64, PT_ENTRIES - first,
			     (m->end - m->offset) / PT_PAGE);
	/*
	 * An empty table (a new one, most of the time) has nothing to
	 * collide with: write each chunk's run of entries without looking.
	 */
	while (empty && i < last) {
		unsigned int n, k;

		if (unlikely(!left)) {
			cur->addr = addr;
			cur->size = 0;
			ret = pt_cursor_next(cur, m->limit);
			if (ret)
				goto out;
			addr = cur->addr;
			left = cur->size;
		}
		n = min_t(u64, last - i, left / PT_PAGE);
		pte = (addr & mask) | leaf;
		p = cpu + i;
		for (k = 0; k + 4 <= n; k += 4, pte += 4 * PT_PAGE) {
			p[k] = pte;
			p[k + 1] = pte + PT_PAGE;
			p[k + 2] = pte + 2 * PT_PAGE;
			p[k + 3] = pte + 3 * PT_PAGE;
		}
		for (; k < n; k++, pte += PT_PAGE)
			p[k] = pte;
		i += n;
		addr += (u64)n * PT_PAGE;
		left -= (u64)n * PT_PAGE;
	}
	for (; i < last; i++) {
		if (unlikely(test_bit(i, node->set))) {
			ret = -EEXIST;
			break;
		}
		if (unlikely(!left)) {
			cur->addr = addr;
			cur->size = 0;
			ret = pt_cursor_next(cur, m->limit);
			if (ret)
				break;
			addr = cur->addr;
			left = cur->size;
		}
		cpu[i] = (addr & mask) | leaf;
		__set_bit(i, node->set);
		addr += PT_PAGE;
		left -= PT_PAGE;
	}
out:
	/* the loop without looking wrote [first, i), or the other one nothing */
	if (empty)
		bitmap_set(node->set, first, i - first);
	cur->addr = addr;
	cur->size = left;
	m->offset += (u64)(i - first) * PT_PAGE;
	node->used += i - first;
	pt_commit(pt, node, first, i - first);
	return ret;
}

static int pt_map_dir(struct amdgpu_ualink_pt *pt,
		      struct amdgpu_ualink_pt_node *node, struct pt_map *m)
{
	unsigned int level = node->level, first = pt_index(m->offset, level);
	u64 span = BIT_ULL(pt_shift(level)), *cpu = node->table.cpu;
	unsigned int i = first;
	int ret = 0;

	lockdep_assert_held(&pt->lock);
	while (m->offset < m->end && i < PT_ENTRIES) {
		struct amdgpu_ualink_pt_node *child = node->children[i];

		if (!child) {
			if (test_bit(i, node->set)) {	/* a large leaf is there */
				ret = -EEXIST;
				break;
			}
			if (!m->cur->size) {
				ret = pt_cursor_next(m->cur, m->limit);
				if (ret)
					break;
			}
			if (level && pt_can_huge(m, span)) {
				cpu[i] = (m->cur->addr & m->mask) | m->huge;
				__set_bit(i++, node->set);
				node->used++;
				pt_cursor_advance(m, span);
				continue;
			}
			child = pt_node_alloc(pt, level + 1);
			if (IS_ERR(child)) {
				ret = PTR_ERR(child);
				break;
			}
			node->children[i] = child;
			/* the zeroed table before the entry that points to it */
			smp_wmb();
			WRITE_ONCE(cpu[i], (child->table.addr & m->mask) | m->dir);
			__set_bit(i, node->set);
			node->used++;
		}
		/* Children are committed before the entry that points to them. */
		if (child->level == PT_LAST)
			ret = pt_map_ptes(pt, child, m);
		else
			ret = pt_map_dir(pt, child, m);
		i++;
		if (ret)
			break;
	}
	pt_commit(pt, node, first, i - first);
	return ret;
}

/* Clear the 4 KiB leaves of a last-level table in [start, end). */
static unsigned long pt_clear_ptes(struct amdgpu_ualink_pt *pt,
				   struct amdgpu_ualink_pt_node *node,
				   u64 base, u64 start, u64 end)
{
	unsigned int first, last, i, cleared = 0;
	u64 *cpu = node->table.cpu;

	lockdep_assert_held(&pt->lock);
	if (end <= base)
		return 0;
	first = start > base ? pt_index(start, PT_LAST) : 0;
	last = end - base >= BIT_ULL(pt_shift(PT_LAST - 1)) ?
	       PT_ENTRIES : pt_index(end, PT_LAST);
	if (first >= last)
		return 0;
	if (first == 0 && last == PT_ENTRIES && node->used == PT_ENTRIES) {
		memset(cpu, 0, PT_ENTRIES * sizeof(*cpu));
		bitmap_zero(node->set, PT_ENTRIES);
		cleared = PT_ENTRIES;
	} else {
		for (i = first; i < last; i++) {
			cleared += __test_and_clear_bit(i, node->set);
			cpu[i] = 0;
		}
	}
	node->used -= cleared;
	pt_commit(pt, node, first, last - first);
	return cleared;
}

/*
 * Clear the leaves that lie wholly in [start, clear_end) and detach the
 * tables in [start, prune_end) that end up empty onto @empty. Returns the
 * number of leaves cleared.
 */
static unsigned long pt_clear(struct amdgpu_ualink_pt *pt,
			      struct amdgpu_ualink_pt_node *node,
			      u64 base, u64 start, u64 clear_end, u64 prune_end,
			      struct list_head *empty)
{
	unsigned int level = node->level, shift = pt_shift(level);
	u64 span = BIT_ULL(shift), *cpu = node->table.cpu;
	unsigned int i, first = PT_ENTRIES, last = 0;
	unsigned long cleared = 0;

	lockdep_assert_held(&pt->lock);
	for (i = pt_index(max(start, base), level); i < PT_ENTRIES; i++) {
		u64 e_start = base + ((u64)i << shift), e_end = e_start + span;
		struct amdgpu_ualink_pt_node *child = node->children[i];

		if (e_start >= prune_end)
			break;
		if (!test_bit(i, node->set))
			continue;
		if (child) {
			if (child->level == PT_LAST)
				cleared += pt_clear_ptes(pt, child, e_start, start,
							 clear_end);
			else
				cleared += pt_clear(pt, child, e_start, start,
						    clear_end, prune_end, empty);
			if (child->used)
				continue;
			node->children[i] = NULL;
			list_add_tail(&child->link, empty);
		} else if (e_start < start || e_end > clear_end) {
			continue;	/* a large leaf that is not wholly ours */
		} else {
			cleared++;
		}
		cpu[i] = 0;
		__clear_bit(i, node->set);
		node->used--;
		first = min(first, i);
		last = i;
	}
	if (first <= last)
		pt_commit(pt, node, first, last - first + 1);
	return cleared;
}

/* Does a large leaf cover @offset without starting there? */
static bool pt_leaf_straddles(struct amdgpu_ualink_pt *pt, u64 offset)
{
	struct amdgpu_ualink_pt_node *node = pt->root;

	lockdep_assert_held(&pt->lock);
	while (node->level < PT_LAST) {
		unsigned int i = pt_index(offset, node->level);

		if (!node->children[i])
			return test_bit(i, node->set) &&
			       !IS_ALIGNED(offset, BIT_ULL(pt_shift(node->level)));
		node = node->children[i];
	}
	return false;
}

/* Bits 12 and up to some bit, all of them: GENMASK_ULL(h, 12). */
static bool pt_addr_mask_ok(u64 mask)
{
	return mask && !(mask & (PT_PAGE - 1)) &&
	       is_power_of_2((mask >> 12) + 1);
}

static bool pt_range_ok(u64 offset, u64 size)
{
	return size && IS_ALIGNED(offset | size, PT_PAGE) &&
	       offset < AMDGPU_UALINK_NPA_WINDOW_SIZE &&
	       size <= AMDGPU_UALINK_NPA_WINDOW_SIZE - offset;
}

/**
 * amdgpu_ualink_pt_init - set up the NPA page tables of an accelerator
 * @pt: the manager
 * @ops: the backend
 * @fmt: how the backend's hardware reads entries; @fmt->valid must not be 0,
 *	 @fmt->addr_mask must be GENMASK_ULL(h, 12) for some h, and no bit of
 *	 @fmt->valid, @fmt->huge or @fmt->leaf may lie in it
 * @priv: passed to the backend's callbacks
 *
 * Allocates the root table.
 *
 * Returns: 0; -EINVAL for a format without valid bits, with another
 * address mask or with flag bits in it; or the error of
 * &amdgpu_ualink_pt_ops.alloc_table, or -ENOMEM.
 */
int amdgpu_ualink_pt_init(struct amdgpu_ualink_pt *pt,
			  const struct amdgpu_ualink_pt_ops *ops,
			  const struct amdgpu_ualink_pte_format *fmt,
			  void *priv)
{
	struct amdgpu_ualink_pt_node *root;
	unsigned int level;

	if (!fmt->valid || !pt_addr_mask_ok(fmt->addr_mask) ||
	    (fmt->valid | fmt->huge | fmt->leaf) & fmt->addr_mask)
		return -EINVAL;

	pt->ops = ops;
	pt->fmt = fmt;
	pt->priv = priv;
	pt->tables = 0;
	for (level = 0; level < AMDGPU_UALINK_PT_LEVELS; level++)
		INIT_LIST_HEAD(&pt->spare[level]);
	pt->spares = 0;
	pt->max_spares = 0;
	mutex_init(&pt->lock);

	mutex_lock(&pt->lock);
	root = pt_node_alloc(pt, 0);
	mutex_unlock(&pt->lock);
	if (IS_ERR(root)) {
		mutex_destroy(&pt->lock);
		return PTR_ERR(root);
	}
	pt->root = root;
	return 0;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_pt_init);

/**
 * amdgpu_ualink_pt_fini - free every table
 * @pt: the manager
 *
 * The caller guarantees no hardware walks the tables any more and has
 * completed every unmap with amdgpu_ualink_pt_unmap_done(); a table still
 * pending from an unmap is a leak and warns.
 */
void amdgpu_ualink_pt_fini(struct amdgpu_ualink_pt *pt)
{
	LIST_HEAD(empty);

	mutex_lock(&pt->lock);
	pt_clear(pt, pt->root, 0, 0, AMDGPU_UALINK_NPA_WINDOW_SIZE,
		 AMDGPU_UALINK_NPA_WINDOW_SIZE, &empty);
	pt_free_list(pt, &empty);
	pt_node_free(pt, pt->root);
	pt->root = NULL;
	WARN_ON(pt->tables);
	mutex_unlock(&pt->lock);
	amdgpu_ualink_pt_keep_spares(pt, 0);
	mutex_destroy(&pt->lock);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_pt_fini);

/**
 * amdgpu_ualink_pt_keep_spares - reuse empty tables instead of freeing them
 * @pt: the manager
 * @max: at most this many tables (of all levels but the root) are kept; 0
 *	 frees those kept and keeps none, as after amdgpu_ualink_pt_init()
 *
 * An export whose importers all left is unmapped, and mapped again by the
 * next grant: with a few spares, that costs no allocation and no zeroing.
 * A table becomes a spare only once amdgpu_ualink_pt_unmap_done() would
 * free it (after the shootdown), with every entry zero in both copies, so
 * a spare is as safe to hand out as a new table.
 */
void amdgpu_ualink_pt_keep_spares(struct amdgpu_ualink_pt *pt, unsigned int max)
{
	struct amdgpu_ualink_pt_node *node, *tmp;
	LIST_HEAD(gone);
	unsigned int level;

	mutex_lock(&pt->lock);
	pt->max_spares = max;
	for (level = 1; level < AMDGPU_UALINK_PT_LEVELS; level++)
		list_for_each_entry_safe(node, tmp, &pt->spare[level], link) {
			if (pt->spares <= max)
				break;
			list_move(&node->link, &gone);
			pt->spares--;
		}
	list_for_each_entry_safe(node, tmp, &gone, link) {
		pt->ops->free_table(pt->priv, node->level, &node->table);
		kfree(node->children);
		kfree(node);
	}
	mutex_unlock(&pt->lock);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_pt_keep_spares);

static void pt_restore(struct amdgpu_ualink_pt *pt,
		       struct amdgpu_ualink_pt_node *node)
{
	unsigned int i;

	pt_commit(pt, node, 0, AMDGPU_UALINK_PT_ENTRIES);
	if (node->level == PT_LAST)
		return;
	for (i = 0; i < AMDGPU_UALINK_PT_ENTRIES; i++)
		if (node->children[i])
			pt_restore(pt, node->children[i]);
}

/**
 * amdgpu_ualink_pt_restore - write every table to the hardware again
 * @pt: the manager
 *
 * After a reset that may have lost the hardware's copy of the tables:
 * every entry of every table is committed again (&amdgpu_ualink_pt_ops
 * .commit) from the CPU's copy, the root first. Nothing without a commit
 * callback (the hardware reads the CPU's copy).
 */
void amdgpu_ualink_pt_restore(struct amdgpu_ualink_pt *pt)
{
	if (!pt->ops->commit)
		return;
	mutex_lock(&pt->lock);
	pt_restore(pt, pt->root);
	mutex_unlock(&pt->lock);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_pt_restore);

/**
 * amdgpu_ualink_pt_map - map a range of the window onto local memory
 * @pt: the manager
 * @offset: window offset of the range, 4 KiB aligned
 * @size: size of the range, 4 KiB aligned, not 0
 * @cur: the local memory, at least @size bytes; advanced past what was used
 *
 * All or nothing: on error nothing of the range is mapped and every table
 * this call allocated is freed again.
 *
 * Returns: 0; -EINVAL when the range is malformed or leaves the window, or
 * the memory is shorter than @size, not 4 KiB aligned or above the highest
 * address an entry can hold (&amdgpu_ualink_pte_format.addr_mask: no
 * address is truncated); -EEXIST when part of the range is mapped already;
 * -ENOMEM or the backend's error when a table cannot be allocated. When
 * several of these apply, the first one met walking the range upwards is
 * returned.
 */
int amdgpu_ualink_pt_map(struct amdgpu_ualink_pt *pt, u64 offset, u64 size,
			 struct amdgpu_ualink_pt_cursor *cur)
{
	const struct amdgpu_ualink_pte_format *fmt = pt->fmt;
	struct pt_map m = {
		.cur = cur,
		.offset = offset,
		.end = offset + size,
		.mask = fmt->addr_mask,
		.dir = fmt->valid,
		.leaf = fmt->valid | fmt->leaf,
		.huge = fmt->huge ? fmt->valid | fmt->leaf | fmt->huge : 0,
		.limit = fmt->addr_mask | (PT_PAGE - 1),
	};
	LIST_HEAD(empty);
	int ret;

	if (!pt_range_ok(offset, size) || !pt_chunk_ok(cur, m.limit))
		return -EINVAL;

	mutex_lock(&pt->lock);
	ret = pt_map_dir(pt, pt->root, &m);
	if (ret) {
		pt_clear(pt, pt->root, 0, offset, m.offset, offset + size,
			 &empty);
		pt_free_list(pt, &empty);
	}
	mutex_unlock(&pt->lock);
	return ret;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_pt_map);

/**
 * amdgpu_ualink_pt_unmap - unmap a range of the window
 * @pt: the manager
 * @offset: window offset of the range, 4 KiB aligned
 * @size: size of the range, 4 KiB aligned, not 0
 * @unmap: filled in with what the caller must shoot down and the tables
 *	   to free after that, with amdgpu_ualink_pt_unmap_done()
 *
 * Parts of the range that are not mapped are skipped. A large leaf must lie
 * wholly inside or wholly outside the range.
 *
 * Returns: 0; -EINVAL when the range is malformed, leaves the window or cuts
 * a large leaf in two (then nothing is unmapped). @unmap is valid either way.
 */
int amdgpu_ualink_pt_unmap(struct amdgpu_ualink_pt *pt, u64 offset, u64 size,
			   struct amdgpu_ualink_pt_detached *unmap)
{
	struct amdgpu_ualink_pt_node *node;
	int ret = 0;

	INIT_LIST_HEAD(&unmap->tables);
	unmap->num_tables = 0;
	unmap->start = offset;
	unmap->size = 0;
	if (!pt_range_ok(offset, size))
		return -EINVAL;

	mutex_lock(&pt->lock);
	if (pt_leaf_straddles(pt, offset) ||
	    pt_leaf_straddles(pt, offset + size)) {
		ret = -EINVAL;
	} else if (pt_clear(pt, pt->root, 0, offset, offset + size,
			    offset + size, &unmap->tables)) {
		unmap->size = size;
	}
	mutex_unlock(&pt->lock);

	list_for_each_entry(node, &unmap->tables, link)
		unmap->num_tables++;
	return ret;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_pt_unmap);

/**
 * amdgpu_ualink_pt_unmap_done - free the tables an unmap detached
 * @pt: the manager
 * @unmap: what amdgpu_ualink_pt_unmap() filled in
 *
 * Call once the shootdown of @unmap's range has completed: no walker reads
 * the detached tables any more.
 */
void amdgpu_ualink_pt_unmap_done(struct amdgpu_ualink_pt *pt,
				 struct amdgpu_ualink_pt_detached *unmap)
{
	mutex_lock(&pt->lock);
	pt_free_list(pt, &unmap->tables);
	unmap->num_tables = 0;
	mutex_unlock(&pt->lock);
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_pt_unmap_done);

/**
 * amdgpu_ualink_pt_translate - walk the tables for one window offset
 * @pt: the manager
 * @offset: the window offset
 * @addr: returns the local address @offset maps to
 * @leaf_size: returns the size of the leaf that maps it (4 KiB, 2 MiB or
 *	       1 GiB); may be NULL
 *
 * Returns: 0; -EINVAL when @offset is outside the window; -ENOENT when it is
 * not mapped.
 */
int amdgpu_ualink_pt_translate(struct amdgpu_ualink_pt *pt, u64 offset,
			       u64 *addr, u64 *leaf_size)
{
	const struct amdgpu_ualink_pte_format *fmt = pt->fmt;
	struct amdgpu_ualink_pt_node *node;
	int ret = -ENOENT;

	if (offset >= AMDGPU_UALINK_NPA_WINDOW_SIZE)
		return -EINVAL;

	mutex_lock(&pt->lock);
	for (node = pt->root; node; ) {
		unsigned int i = pt_index(offset, node->level);
		u64 e = node->table.cpu[i], size;

		if ((e & fmt->valid) != fmt->valid)
			break;
		if (node->level < PT_LAST && node->children[i]) {
			node = node->children[i];
			continue;
		}
		size = BIT_ULL(pt_shift(node->level));
		*addr = (e & fmt->addr_mask) + (offset & (size - 1));
		if (leaf_size)
			*leaf_size = size;
		ret = 0;
		break;
	}
	mutex_unlock(&pt->lock);
	return ret;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_pt_translate);

static bool pt_cursor_sg_next(struct amdgpu_ualink_pt_cursor *cur)
{
	cur->sg = sg_next(cur->sg);
	if (!cur->sg)
		return false;
	cur->addr = sg_phys(cur->sg);
	cur->size = cur->sg->length;
	return true;
}

/**
 * amdgpu_ualink_pt_cursor_init_sg - a cursor over a scatterlist's pages
 * @cur: the cursor
 * @sgl: the first entry; the local addresses are the pages' physical
 *	 addresses (sg_phys()), not DMA addresses
 */
void amdgpu_ualink_pt_cursor_init_sg(struct amdgpu_ualink_pt_cursor *cur,
				     struct scatterlist *sgl)
{
	cur->sg = sgl;
	cur->addr = sg_phys(sgl);
	cur->size = sgl->length;
	cur->next = pt_cursor_sg_next;
}
EXPORT_SYMBOL_GPL(amdgpu_ualink_pt_cursor_init_sg);
