// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * KUnit tests for the NPA page-table manager (amdgpu_ualink_pt.c).
 *
 * The tests give the manager a backend of their own: tables are kernel
 * pages named by an ID, entries use the format below. Each table has a CPU
 * copy, which the manager writes, and a "hardware" copy, which only the
 * commit callback updates. Mappings are checked by decode(), which reads
 * the hardware copies level by level from the root the way a hardware
 * walker would; it shares no code with the manager, so an encoding bug
 * cannot hide behind a matching decoding bug, and a missing commit shows.
 */

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/sort.h>
#include <linux/vmalloc.h>
#include <linux/xarray.h>

#include "../amdgpu_ualink_npa.h"
#include "../amdgpu_ualink_pt.h"

/* The test hardware's entry format. */
#define E_VALID		BIT_ULL(0)
#define E_HUGE		BIT_ULL(1)
#define E_READ		BIT_ULL(2)
#define E_FABRIC	BIT_ULL(63)
#define E_ADDR		GENMASK_ULL(51, 12)

static const struct amdgpu_ualink_pte_format test_fmt = {
	.valid = E_VALID,
	.huge = E_HUGE,
	.leaf = E_READ | E_FABRIC,
	.addr_mask = E_ADDR,
};

struct tb_table {
	u64 *cpu;		/* what the manager writes */
	u64 *hw;		/* what the hardware reads: updated by commit */
};

struct tb {			/* the test backend */
	struct xarray tables;	/* table ID -> struct tb_table */
	u32 next_id;
	u64 root;		/* address of the level 0 table */
	int live;		/* tables allocated and not freed */
	int allocs;		/* allocations attempted */
	int fail_at;		/* fail the allocation with this index; -1: none */
	unsigned long committed;	/* entries passed to commit */
	int recycled;		/* tables kept as spares */
	u64 alloc_ns;		/* time spent allocating tables */
	bool one_copy;		/* hardware reads the CPU copy: no commit */
};

static int tb_alloc(void *priv, unsigned int level,
		    struct amdgpu_ualink_pt_table *t)
{
	struct tb *b = priv;
	u64 t0 = ktime_get_ns();
	struct tb_table *tt;
	int ret;

	if (b->allocs++ == b->fail_at)
		return -ENOMEM;
	tt = kzalloc_obj(*tt, GFP_KERNEL);
	if (!tt)
		return -ENOMEM;
	tt->cpu = (u64 *)get_zeroed_page(GFP_KERNEL);
	tt->hw = b->one_copy ? tt->cpu : (u64 *)get_zeroed_page(GFP_KERNEL);
	ret = tt->cpu && tt->hw ? 0 : -ENOMEM;
	if (!ret)
		ret = xa_err(xa_store(&b->tables, ++b->next_id, tt, GFP_KERNEL));
	if (ret) {
		if (tt->hw != tt->cpu)
			free_page((unsigned long)tt->hw);
		free_page((unsigned long)tt->cpu);
		kfree(tt);
		return ret;
	}
	b->alloc_ns += ktime_get_ns() - t0;
	t->cpu = tt->cpu;
	t->addr = (u64)b->next_id << 12;
	t->priv = tt;
	if (!level)
		b->root = t->addr;
	b->live++;
	return 0;
}

static void tb_free(void *priv, unsigned int level,
		    struct amdgpu_ualink_pt_table *t)
{
	struct tb_table *tt = t->priv;
	struct tb *b = priv;

	WARN_ON(xa_erase(&b->tables, t->addr >> 12) != tt);
	if (tt->hw != tt->cpu)
		free_page((unsigned long)tt->hw);
	free_page((unsigned long)tt->cpu);
	kfree(tt);
	b->live--;
}

static void tb_commit(void *priv, struct amdgpu_ualink_pt_table *t,
		      unsigned int first, unsigned int count)
{
	struct tb_table *tt = t->priv;
	struct tb *b = priv;

	if (WARN_ON(first + count > AMDGPU_UALINK_PT_ENTRIES))
		return;
	memcpy(tt->hw + first, tt->cpu + first, count * sizeof(u64));
	b->committed += count;
}

/* A spare must be empty in the hardware's copy too. */
static void tb_recycle(void *priv, unsigned int level,
		       struct amdgpu_ualink_pt_table *t)
{
	struct tb_table *tt = t->priv;
	struct tb *b = priv;

	WARN_ON(memchr_inv(tt->hw, 0, PAGE_SIZE) || memchr_inv(tt->cpu, 0, PAGE_SIZE));
	b->recycled++;
}

static const struct amdgpu_ualink_pt_ops tb_ops = {
	.alloc_table = tb_alloc,
	.free_table = tb_free,
	.commit = tb_commit,
	.recycle = tb_recycle,
};

/* Tables in memory the walker reads directly, as in the emulated pod. */
static const struct amdgpu_ualink_pt_ops tb_ops_one_copy = {
	.alloc_table = tb_alloc,
	.free_table = tb_free,
};

struct ctx {
	struct amdgpu_ualink_pt pt;
	struct tb b;
};

static int pt_test_init(struct kunit *test)
{
	struct ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, c);
	xa_init(&c->b.tables);
	c->b.fail_at = -1;
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_pt_init(&c->pt, &tb_ops, &test_fmt, &c->b), 0);
	KUNIT_ASSERT_EQ(test, c->b.live, 1);
	test->priv = c;
	return 0;
}

static void pt_test_exit(struct kunit *test)
{
	struct ctx *c = test->priv;

	amdgpu_ualink_pt_fini(&c->pt);
	KUNIT_EXPECT_EQ(test, c->b.live, 0);
	KUNIT_EXPECT_TRUE(test, xa_empty(&c->b.tables));
	xa_destroy(&c->b.tables);
}

/* --- local memory described as chunks, and the cursor over them --- */

struct chunk {
	u64 addr, size;
};

struct chunks {
	struct amdgpu_ualink_pt_cursor cur;
	const struct chunk *c;
	unsigned int n, i;
};

static bool chunks_next(struct amdgpu_ualink_pt_cursor *cur)
{
	struct chunks *s = container_of(cur, struct chunks, cur);

	if (++s->i >= s->n)
		return false;
	cur->addr = s->c[s->i].addr;
	cur->size = s->c[s->i].size;
	return true;
}

static struct amdgpu_ualink_pt_cursor *chunks_cursor(struct chunks *s,
						     const struct chunk *c,
						     unsigned int n)
{
	s->c = c;
	s->n = n;
	s->i = 0;
	s->cur.addr = c[0].addr;
	s->cur.size = c[0].size;
	s->cur.next = chunks_next;
	s->cur.sg = NULL;
	return &s->cur;
}

static int map_chunks(struct ctx *c, u64 offset, const struct chunk *ch,
		      unsigned int n)
{
	struct chunks s;
	u64 size = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		size += ch[i].size;
	return amdgpu_ualink_pt_map(&c->pt, offset, size, chunks_cursor(&s, ch, n));
}

static void unmap_all(struct kunit *test, struct ctx *c, u64 offset, u64 size)
{
	struct amdgpu_ualink_pt_detached u;

	KUNIT_EXPECT_EQ(test, amdgpu_ualink_pt_unmap(&c->pt, offset, size, &u), 0);
	amdgpu_ualink_pt_unmap_done(&c->pt, &u);
}

/* --- the decoder: reads raw tables like a hardware walker --- */

struct expect {
	u64 offset;			/* where the chunks are mapped */
	const struct chunk *c;
	unsigned int n;
};

struct decoded {
	struct kunit *test;
	struct tb *b;
	const struct expect *x;		/* mappings expected, by offset */
	unsigned int nx;
	unsigned int xg, xi;		/* current mapping and chunk in it */
	u64 xoff;			/* window offset where chunk xi starts */
	u64 bytes;			/* bytes found mapped */
	u64 next;			/* lowest offset the next leaf may have */
	unsigned long leaves[3];	/* 4 KiB, 2 MiB, 1 GiB leaves found */
	unsigned int tables;		/* tables reached */
	bool bad;
};

static void leaf_found(struct decoded *d, u64 off, u64 size, u64 addr)
{
	const struct expect *x;
	u64 want;

	d->bytes += size;
	d->leaves[size == SZ_4K ? 0 : size == SZ_2M ? 1 : 2]++;
	if (off < d->next)
		d->bad = true;		/* leaves out of order: a walker bug */
	d->next = off + size;
	/* find the chunk that should back @off; leaves come in order */
	for (;;) {
		if (d->xg >= d->nx) {
			d->bad = true;	/* mapped, but nothing should be */
			return;
		}
		x = &d->x[d->xg];
		if (d->xi < x->n && off >= d->xoff + x->c[d->xi].size) {
			d->xoff += x->c[d->xi].size;
			d->xi++;
		} else if (d->xi >= x->n) {
			d->xg++;
			d->xi = 0;
			d->xoff = d->xg < d->nx ? d->x[d->xg].offset : 0;
		} else {
			break;
		}
	}
	if (off < d->xoff) {
		d->bad = true;		/* in a gap between mappings */
		return;
	}
	want = x->c[d->xi].addr + (off - d->xoff);
	/* a leaf maps memory that is contiguous within one chunk */
	if (addr != want || off + size > d->xoff + x->c[d->xi].size)
		d->bad = true;
}

static void decode_table(struct decoded *d, u64 taddr, unsigned int level,
			 u64 base)
{
	unsigned int shift = 12 + 9 * (3 - level), i;
	struct tb_table *tt = xa_load(&d->b->tables, taddr >> 12);

	d->tables++;
	if (!tt || taddr & ~E_ADDR) {
		d->bad = true;		/* points to no live table */
		return;
	}
	for (i = 0; i < 512; i++) {
		u64 e = tt->hw[i], off = base + ((u64)i << shift);

		if (!e)
			continue;
		if (!(e & E_VALID) || (level == 0 && i >= 4) ||
		    (e & ~(E_ADDR | E_VALID | E_HUGE | E_READ | E_FABRIC))) {
			d->bad = true;
			continue;
		}
		if (level == 3 || (e & E_HUGE)) {
			/* a leaf: 4 KiB at level 3, 2 MiB at 2, 1 GiB at 1 */
			if (level == 0 || (level == 3 && (e & E_HUGE)) ||
			    (e & (E_READ | E_FABRIC)) != (E_READ | E_FABRIC) ||
			    !IS_ALIGNED(e & E_ADDR, BIT_ULL(shift)))
				d->bad = true;
			leaf_found(d, off, BIT_ULL(shift), e & E_ADDR);
		} else {
			if (e & (E_READ | E_FABRIC))
				d->bad = true;	/* a directory with leaf bits */
			decode_table(d, e & E_ADDR, level + 1, off);
		}
	}
}

/*
 * Decode everything; check it maps exactly the @nx mappings of @x, sorted
 * by offset (nothing when @nx is 0).
 */
static struct decoded decode_n(struct kunit *test, struct ctx *c,
			       const struct expect *x, unsigned int nx)
{
	struct decoded d = { .test = test, .b = &c->b, .x = x, .nx = nx };
	u64 total = 0;
	unsigned int g, i;

	for (g = 0; g < nx; g++)
		for (i = 0; i < x[g].n; i++)
			total += x[g].c[i].size;
	d.xoff = nx ? x[0].offset : 0;
	decode_table(&d, c->b.root, 0, 0);
	KUNIT_EXPECT_FALSE_MSG(test, d.bad, "tables do not map what was asked");
	KUNIT_EXPECT_EQ(test, d.bytes, total);
	KUNIT_EXPECT_EQ(test, d.tables, c->b.live - (int)c->pt.spares);
	return d;
}

static struct decoded decode(struct kunit *test, struct ctx *c,
			     const struct expect *x)
{
	return decode_n(test, c, x, x ? 1 : 0);
}

/* --- cases --- */

static void pt_rejects_bad_arguments(struct kunit *test)
{
	struct ctx *c = test->priv;
	struct chunk ch = { SZ_1M, SZ_64K };
	struct amdgpu_ualink_pt_detached u;
	struct chunks s;
	u64 addr;

	KUNIT_EXPECT_EQ(test, amdgpu_ualink_pt_map(&c->pt, 0, 0, chunks_cursor(&s, &ch, 1)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_pt_map(&c->pt, 100, SZ_4K, chunks_cursor(&s, &ch, 1)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_pt_map(&c->pt, 0, 100, chunks_cursor(&s, &ch, 1)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_pt_map(&c->pt, BIT_ULL(41) - SZ_4K, SZ_64K,
						   chunks_cursor(&s, &ch, 1)), -EINVAL);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_pt_map(&c->pt, BIT_ULL(41), SZ_4K,
						   chunks_cursor(&s, &ch, 1)), -EINVAL);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_pt_unmap(&c->pt, 0, 0, &u), -EINVAL);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_pt_unmap(&c->pt, SZ_4K + 8, SZ_4K, &u), -EINVAL);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_pt_unmap(&c->pt, BIT_ULL(41), SZ_4K, &u), -EINVAL);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_pt_translate(&c->pt, BIT_ULL(41), &addr, NULL),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_pt_translate(&c->pt, 0, &addr, NULL), -ENOENT);
	decode(test, c, NULL);
	KUNIT_EXPECT_EQ(test, c->b.live, 1);
}

/* Memory that is too short, or misaligned, maps nothing. */
static void pt_rejects_bad_memory(struct kunit *test)
{
	struct ctx *c = test->priv;
	struct chunk short_mem[] = { { SZ_1M, SZ_64K }, { SZ_4M, SZ_4K } };
	struct chunk odd_mem[] = { { SZ_1M, SZ_64K }, { SZ_4M + 512, SZ_4K } };
	struct chunks s;

	KUNIT_EXPECT_EQ(test, amdgpu_ualink_pt_map(&c->pt, SZ_2M, SZ_128K,
						   chunks_cursor(&s, short_mem, 2)), -EINVAL);
	decode(test, c, NULL);
	KUNIT_EXPECT_EQ(test, map_chunks(c, SZ_2M, odd_mem, 2), -EINVAL);
	decode(test, c, NULL);
	KUNIT_EXPECT_EQ(test, c->b.live, 1);
}

/*
 * Memory above what an entry can hold is rejected, never truncated to an
 * address the exporter did not mean (1 TiB here wraps to 0), wherever the
 * chunk is met: first, next into an empty or a used table, or as a large
 * leaf. A format whose address bits are not one run from bit 12, or hold
 * a flag bit, is refused at init.
 */
static void pt_address_limit(struct kunit *test)
{
	static const struct amdgpu_ualink_pte_format narrow = {
		.valid = E_VALID, .huge = E_HUGE, .leaf = E_READ,
		.addr_mask = GENMASK_ULL(39, 12),
	};
	static const struct amdgpu_ualink_pte_format bad[] = {
		{ .valid = E_VALID, .addr_mask = 0 },
		{ .valid = E_VALID, .addr_mask = GENMASK_ULL(20, 12) | GENMASK_ULL(39, 30) },
		{ .valid = E_VALID, .addr_mask = GENMASK_ULL(39, 13) },
		{ .valid = E_VALID, .addr_mask = GENMASK_ULL(39, 11) },
		{ .valid = E_VALID, .leaf = BIT_ULL(20), .addr_mask = GENMASK_ULL(39, 12) },
		{ .valid = BIT_ULL(12), .addr_mask = GENMASK_ULL(39, 12) },
		{ .valid = E_VALID, .huge = BIT_ULL(39), .addr_mask = GENMASK_ULL(39, 12) },
	};
	struct chunk top[] = { { SZ_1M, SZ_4K }, { SZ_1T - SZ_8K, SZ_8K } };
	struct chunk across[] = { { SZ_1M, SZ_4K }, { SZ_1T - SZ_4K, SZ_8K } };
	struct chunk above[] = { { SZ_1T, SZ_4K } };
	struct chunk huge_top[] = { { SZ_1T - SZ_2M, SZ_2M } };
	struct chunk huge_above[] = { { SZ_1T, SZ_2M } };
	struct chunk huge_next[] = { { SZ_1M, SZ_2M }, { SZ_1T, SZ_2M } };
	struct chunk other[] = { { SZ_8M, SZ_4K } };
	struct ctx *c = test->priv;
	struct amdgpu_ualink_pt pt;
	u64 addr, leaf;
	unsigned int i;

	c->pt.fmt = &narrow;
	KUNIT_ASSERT_EQ(test, map_chunks(c, SZ_2M, top, 2), 0);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_pt_translate(&c->pt, SZ_2M + SZ_8K, &addr, NULL), 0);
	KUNIT_EXPECT_EQ(test, addr, SZ_1T - SZ_4K);
	unmap_all(test, c, SZ_2M, 3 * SZ_4K);
	KUNIT_EXPECT_EQ(test, map_chunks(c, SZ_2M, across, 2), -EINVAL);
	KUNIT_EXPECT_EQ(test, map_chunks(c, SZ_2M, above, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_pt_translate(&c->pt, SZ_2M, &addr, NULL), -ENOENT);
	KUNIT_ASSERT_EQ(test, map_chunks(c, SZ_4M, huge_top, 1), 0);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_pt_translate(&c->pt, SZ_4M, &addr, &leaf), 0);
	KUNIT_EXPECT_EQ(test, addr, SZ_1T - SZ_2M);
	KUNIT_EXPECT_EQ(test, leaf, SZ_2M);
	unmap_all(test, c, SZ_4M, SZ_2M);
	KUNIT_EXPECT_EQ(test, map_chunks(c, SZ_4M, huge_above, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_pt_translate(&c->pt, SZ_4M, &addr, NULL), -ENOENT);
	/* the large leaf's chunk comes from next() */
	KUNIT_EXPECT_EQ(test, map_chunks(c, SZ_2M, huge_next, 2), -EINVAL);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_pt_translate(&c->pt, SZ_2M, &addr, NULL), -ENOENT);
	/* the chunk comes from next() into a table that has entries */
	KUNIT_ASSERT_EQ(test, map_chunks(c, SZ_2M + SZ_64K, other, 1), 0);
	KUNIT_EXPECT_EQ(test, map_chunks(c, SZ_2M, across, 2), -EINVAL);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_pt_translate(&c->pt, SZ_2M, &addr, NULL), -ENOENT);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_pt_translate(&c->pt, SZ_2M + SZ_64K, &addr, NULL), 0);
	KUNIT_EXPECT_EQ(test, addr, SZ_8M);
	unmap_all(test, c, SZ_2M + SZ_64K, SZ_4K);
	c->pt.fmt = &test_fmt;
	KUNIT_EXPECT_EQ(test, c->b.live, 1);

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		int ret;

		ret = amdgpu_ualink_pt_init(&pt, &tb_ops, &bad[i], &c->b);
		KUNIT_EXPECT_EQ(test, ret, -EINVAL);
		if (!ret)
			amdgpu_ualink_pt_fini(&pt);
	}
	KUNIT_EXPECT_EQ(test, c->b.live, 1);
}

/*
 * Large leaves: an aligned contiguous 1 GiB is one 1 GiB leaf; memory off
 * by 2 MiB gives 2 MiB leaves, memory off by 4 KiB only 4 KiB leaves; an
 * NPA off by 2 MiB cannot use 1 GiB leaves either.
 */
static void pt_large_leaf_selection(struct kunit *test)
{
	static const struct {
		u64 offset, addr, size;
		unsigned long l4k, l2m, l1g;
		u64 last_leaf;
	} cases[] = {
		{ SZ_1G, 3ULL * SZ_1G, SZ_1G, 0, 0, 1, SZ_1G },
		{ SZ_1G, 3ULL * SZ_1G + SZ_2M, SZ_1G, 0, 512, 0, SZ_2M },
		{ SZ_1G, 3ULL * SZ_1G + SZ_4K, SZ_1G, 262144, 0, 0, SZ_4K },
		{ SZ_1G + SZ_2M, 3ULL * SZ_1G + SZ_2M, SZ_1G, 0, 512, 0, SZ_2M },
		/* 2 GiB + 6 MiB: two 1 GiB, three 2 MiB */
		{ 4ULL * SZ_1G, 8ULL * SZ_1G, 2ULL * SZ_1G + 3 * SZ_2M, 0, 3, 2, SZ_2M },
		/* 4 KiB in front of an aligned 2 MiB */
		{ SZ_2M - SZ_4K, 5ULL * SZ_2M - SZ_4K, SZ_2M + SZ_4K, 1, 1, 0, SZ_2M },
		/* an aligned 2 MiB, then 4 KiB */
		{ SZ_4M, SZ_8M, SZ_2M + SZ_4K, 1, 1, 0, SZ_4K },
		/* the last 1 GiB of the window */
		{ BIT_ULL(41) - SZ_1G, SZ_1G, SZ_1G, 0, 0, 1, SZ_1G },
	};
	struct ctx *c = test->priv;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct chunk ch = { cases[i].addr, cases[i].size };
		struct expect x = { cases[i].offset, &ch, 1 };
		struct decoded d;
		u64 addr, leaf, last;

		KUNIT_ASSERT_EQ(test, map_chunks(c, cases[i].offset, &ch, 1), 0);
		d = decode(test, c, &x);
		KUNIT_EXPECT_EQ_MSG(test, d.leaves[0], cases[i].l4k, "case %u", i);
		KUNIT_EXPECT_EQ_MSG(test, d.leaves[1], cases[i].l2m, "case %u", i);
		KUNIT_EXPECT_EQ_MSG(test, d.leaves[2], cases[i].l1g, "case %u", i);
		/* the manager's own walker agrees at the last byte's page */
		last = cases[i].offset + cases[i].size - SZ_4K;
		KUNIT_EXPECT_EQ(test, amdgpu_ualink_pt_translate(&c->pt, last, &addr, &leaf), 0);
		KUNIT_EXPECT_EQ(test, addr, cases[i].addr + cases[i].size - SZ_4K);
		KUNIT_EXPECT_EQ_MSG(test, leaf, cases[i].last_leaf, "case %u", i);
		unmap_all(test, c, cases[i].offset, cases[i].size);
		decode(test, c, NULL);
		KUNIT_EXPECT_EQ(test, c->b.live, 1);
	}
}

/*
 * A reset lost the hardware's copy of every table: restore writes it all
 * again from the CPU's copy, and the hardware's walk finds the mapping.
 */
static void pt_restore_after_reset(struct kunit *test)
{
	static const struct chunk ch[] = {
		{ 5ULL * SZ_1G, SZ_1G }, { SZ_8M, SZ_2M }, { SZ_16M, SZ_4K },
	};
	struct expect x = { SZ_1G, ch, ARRAY_SIZE(ch) };
	struct ctx *c = test->priv;
	unsigned long id, committed;
	struct tb_table *tt;

	KUNIT_ASSERT_EQ(test, map_chunks(c, SZ_1G, ch, ARRAY_SIZE(ch)), 0);
	xa_for_each(&c->b.tables, id, tt)
		memset(tt->hw, 0xa5, PAGE_SIZE);
	committed = c->b.committed;
	amdgpu_ualink_pt_restore(&c->pt);
	decode(test, c, &x);
	/* every entry of every table, once */
	KUNIT_EXPECT_EQ(test, c->b.committed - committed,
			(unsigned long)c->b.live * AMDGPU_UALINK_PT_ENTRIES);
	unmap_all(test, c, SZ_1G, SZ_1G + SZ_2M + SZ_4K);
}

/* A backend without large leaves gets only 4 KiB ones. */
static void pt_no_huge_format(struct kunit *test)
{
	static const struct amdgpu_ualink_pte_format fmt = {
		.valid = E_VALID, .leaf = E_READ | E_FABRIC, .addr_mask = E_ADDR,
	};
	struct chunk ch = { SZ_1G, SZ_4M };
	struct expect x = { SZ_1G, &ch, 1 };
	struct ctx *c = test->priv;
	struct decoded d;

	c->pt.fmt = &fmt;
	KUNIT_ASSERT_EQ(test, map_chunks(c, SZ_1G, &ch, 1), 0);
	d = decode(test, c, &x);
	KUNIT_EXPECT_EQ(test, d.leaves[0], 1024);
	KUNIT_EXPECT_EQ(test, d.leaves[1], 0);
	unmap_all(test, c, SZ_1G, SZ_4M);
	c->pt.fmt = &test_fmt;
}

/* Random chunks: 4 KiB-aligned small ones, sometimes 2 MiB-aligned large. */
static u64 random_chunks(struct chunk *ch, unsigned int n)
{
	unsigned int i;
	u64 size = 0;

	for (i = 0; i < n; i++) {
		if (get_random_u32_below(4)) {
			ch[i].size = (1 + get_random_u32_below(64)) * SZ_4K;
			ch[i].addr = (u64)get_random_u32_below(1 << 24) << 12;
		} else {
			ch[i].size = (1 + get_random_u32_below(4)) * SZ_2M;
			ch[i].addr = (u64)get_random_u32_below(1 << 15) << 21;
		}
		size += ch[i].size;
	}
	return size;
}

/* A random offset for @size bytes, anywhere in the window below @limit. */
static u64 random_offset(u64 size, u64 limit)
{
	u64 room = (limit - size) >> 12;

	if (get_random_u32_below(2))
		return (get_random_u64() % (room >> 9 ? room >> 9 : 1)) << 21;
	return (get_random_u64() % (room + 1)) << 12;
}

/*
 * Two mappings of random discontiguous memory at random offsets anywhere in
 * the window, checked by the decoder; unmapped in random order, the other
 * one checked again after the first unmap.
 */
static void pt_random_round_trips(struct kunit *test)
{
	struct ctx *c = test->priv;
	struct chunk *ch[2];
	unsigned int iter, k;

	for (k = 0; k < 2; k++) {
		ch[k] = kunit_kcalloc(test, 64, sizeof(*ch[k]), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, ch[k]);
	}
	for (iter = 0; iter < 200; iter++) {
		unsigned int n[2], i, first;
		struct expect x[2];
		u64 size[2], off[2], addr, got, pos;

		for (k = 0; k < 2; k++) {
			n[k] = 1 + get_random_u32_below(64);
			size[k] = random_chunks(ch[k], n[k]);
		}
		/* the first below a random split, the second above it */
		pos = (BIT_ULL(41) - size[0] - size[1]) >> 12;
		pos = size[0] + (get_random_u64() % pos << 12);
		off[0] = random_offset(size[0], pos);
		off[1] = pos + random_offset(size[1], BIT_ULL(41) - pos);
		for (k = 0; k < 2; k++) {
			x[k] = (struct expect){ off[k], ch[k], n[k] };
			KUNIT_ASSERT_EQ(test, map_chunks(c, off[k], ch[k], n[k]), 0);
		}
		decode_n(test, c, x, 2);

		/* spot-check the manager's walker on a random page of each */
		for (k = 0; k < 2; k++) {
			addr = get_random_u64() % (size[k] / SZ_4K) * SZ_4K;
			KUNIT_EXPECT_EQ(test, amdgpu_ualink_pt_translate(&c->pt, off[k] + addr,
									 &got, NULL), 0);
			for (i = 0; addr >= ch[k][i].size; i++)
				addr -= ch[k][i].size;
			KUNIT_EXPECT_EQ(test, got, ch[k][i].addr + addr);
		}

		first = get_random_u32_below(2);
		unmap_all(test, c, off[first], size[first]);
		decode(test, c, &x[!first]);
		unmap_all(test, c, off[!first], size[!first]);
		decode(test, c, NULL);
		KUNIT_ASSERT_EQ(test, c->b.live, 1);
		KUNIT_ASSERT_EQ(test, c->pt.tables, 1);
	}
}

/*
 * Fail every table allocation of a map in turn: each failure leaves the
 * tables exactly as before (another mapping that shares tables intact),
 * and nothing leaks.
 */
static void pt_alloc_failure_at_every_step(struct kunit *test)
{
	/* 4 KiB pages across a 1 GiB boundary: three new tables */
	static const struct chunk other = { SZ_1G, SZ_64K };
	struct chunk frag[4];
	struct ctx *c = test->priv;
	struct expect xo = { SZ_1G - SZ_4M, &other, 1 };
	u64 offset = SZ_1G - SZ_2M - SZ_1M, size = 0;
	int k, live, ret;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(frag); i++) {
		frag[i].addr = (u64)(17 + 4 * i) << 20;
		frag[i].size = SZ_1M;
		size += frag[i].size;
	}
	/* another mapping in the same 1 GiB: it shares the level 1 table */
	KUNIT_ASSERT_EQ(test, map_chunks(c, SZ_1G - SZ_4M, &other, 1), 0);
	live = c->b.live;

	for (k = 0; ; k++) {
		struct expect xf = { offset, frag, ARRAY_SIZE(frag) };

		c->b.allocs = 0;
		c->b.fail_at = k;
		ret = map_chunks(c, offset, frag, ARRAY_SIZE(frag));
		c->b.fail_at = -1;
		if (!ret) {
			struct expect both[] = { xo, xf };

			decode_n(test, c, both, 2);
			break;
		}
		KUNIT_ASSERT_EQ(test, ret, -ENOMEM);
		KUNIT_EXPECT_EQ(test, c->b.live, live);
		decode(test, c, &xo);
	}
	/* a 4 KiB-level table before 1 GiB, a 2 MiB- and a 4 KiB-level after */
	KUNIT_EXPECT_EQ(test, c->b.live - live, 3);
	KUNIT_EXPECT_EQ(test, k, 3);
	unmap_all(test, c, offset, size);
	decode(test, c, &xo);
	unmap_all(test, c, SZ_1G - SZ_4M, SZ_64K);
	KUNIT_EXPECT_EQ(test, c->b.live, 1);
}

/*
 * Unmap clears entries at once but frees the tables that became empty only
 * in unmap_done, after the caller's shootdown; tables still used by another
 * mapping stay.
 */
static void pt_unmap_frees_after_shootdown(struct kunit *test)
{
	static const struct chunk a = { SZ_1G, SZ_1M }, b = { SZ_2G, SZ_64K };
	struct ctx *c = test->priv;
	struct expect xa = { SZ_2G, &a, 1 }, xb = { SZ_2G + SZ_1M, &b, 1 };
	struct amdgpu_ualink_pt_detached u;
	u64 addr;

	/* a: [2 GiB, +1 MiB); b: [2 GiB + 1 MiB, +64 KiB), one 4 KiB table */
	KUNIT_ASSERT_EQ(test, map_chunks(c, SZ_2G, &a, 1), 0);
	KUNIT_ASSERT_EQ(test, map_chunks(c, SZ_2G + SZ_1M, &b, 1), 0);
	KUNIT_EXPECT_EQ(test, c->b.live, 4);

	/* unmapping a frees nothing: b still uses every table */
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_pt_unmap(&c->pt, SZ_2G, SZ_1M, &u), 0);
	KUNIT_EXPECT_EQ(test, u.start, SZ_2G);
	KUNIT_EXPECT_EQ(test, u.size, SZ_1M);
	KUNIT_EXPECT_EQ(test, u.num_tables, 0);
	amdgpu_ualink_pt_unmap_done(&c->pt, &u);
	decode(test, c, &xb);

	/* unmapping b empties three tables: detached now, freed later */
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_pt_unmap(&c->pt, SZ_2G + SZ_1M, SZ_64K, &u), 0);
	KUNIT_EXPECT_EQ(test, u.size, SZ_64K);
	KUNIT_EXPECT_EQ(test, u.num_tables, 3);
	KUNIT_EXPECT_EQ(test, c->b.live, 4);
	KUNIT_EXPECT_EQ(test, c->pt.tables, 4);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_pt_translate(&c->pt, SZ_2G + SZ_1M, &addr, NULL),
			-ENOENT);
	amdgpu_ualink_pt_unmap_done(&c->pt, &u);
	KUNIT_EXPECT_EQ(test, c->b.live, 1);
	KUNIT_EXPECT_EQ(test, c->pt.tables, 1);
	decode(test, c, NULL);

	/* b again, then unmap it while a, just below it, stays */
	KUNIT_ASSERT_EQ(test, map_chunks(c, SZ_2G, &a, 1), 0);
	KUNIT_ASSERT_EQ(test, map_chunks(c, SZ_2G + SZ_1M, &b, 1), 0);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_pt_unmap(&c->pt, SZ_2G + SZ_1M, SZ_64K, &u), 0);
	KUNIT_EXPECT_EQ(test, u.num_tables, 0);
	amdgpu_ualink_pt_unmap_done(&c->pt, &u);
	decode(test, c, &xa);
	unmap_all(test, c, SZ_2G, SZ_1M);

	/* unmapping what is not mapped has nothing to shoot down */
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_pt_unmap(&c->pt, SZ_2G, SZ_4M, &u), 0);
	KUNIT_EXPECT_EQ(test, u.size, 0);
	KUNIT_EXPECT_EQ(test, u.num_tables, 0);
	amdgpu_ualink_pt_unmap_done(&c->pt, &u);
}

/* Mapping over a mapping fails and changes nothing. */
static void pt_overlap_rejected(struct kunit *test)
{
	static const struct chunk a = { 7ULL * SZ_1G, SZ_1G }, b = { SZ_4G, SZ_4M },
				  p = { SZ_4G, SZ_64K };
	struct ctx *c = test->priv;
	struct expect xa = { SZ_1G, &a, 1 }, xp = { 5ULL * SZ_1G, &p, 1 };
	int live;

	KUNIT_ASSERT_EQ(test, map_chunks(c, SZ_1G, &a, 1), 0);
	live = c->b.live;
	/* runs from below into the 1 GiB leaf, and starts inside it */
	KUNIT_EXPECT_EQ(test, map_chunks(c, SZ_1G - SZ_2M, &b, 1), -EEXIST);
	KUNIT_EXPECT_EQ(test, map_chunks(c, SZ_1G + SZ_2M, &b, 1), -EEXIST);
	KUNIT_EXPECT_EQ(test, c->b.live, live);
	decode(test, c, &xa);
	unmap_all(test, c, SZ_1G, SZ_1G);

	/* 4 KiB leaves: the same page twice */
	KUNIT_ASSERT_EQ(test, map_chunks(c, 5ULL * SZ_1G, &p, 1), 0);
	live = c->b.live;
	KUNIT_EXPECT_EQ(test, map_chunks(c, 5ULL * SZ_1G + SZ_32K, &p, 1), -EEXIST);
	KUNIT_EXPECT_EQ(test, map_chunks(c, 5ULL * SZ_1G - SZ_32K, &p, 1), -EEXIST);
	/* runs into it from the same table: what it wrote there is undone */
	KUNIT_EXPECT_EQ(test, map_chunks(c, 5ULL * SZ_1G - SZ_32K + SZ_1M, &p, 1), 0);
	KUNIT_EXPECT_EQ(test, map_chunks(c, 5ULL * SZ_1G - SZ_64K + SZ_1M, &p, 1), -EEXIST);
	unmap_all(test, c, 5ULL * SZ_1G - SZ_32K + SZ_1M, SZ_64K);
	KUNIT_EXPECT_EQ(test, c->b.live, live);
	decode(test, c, &xp);
	unmap_all(test, c, 5ULL * SZ_1G, SZ_64K);
}

/*
 * Tables in memory others can write (a pod across kernels): the manager
 * goes by what it wrote itself. A garbage entry in a free slot does not
 * make the next map fail (it is overwritten), and an entry of ours zeroed
 * behind our back is still cleared, counted and its table freed.
 */
static void pt_tables_scribbled(struct kunit *test)
{
	static const struct chunk p = { SZ_4G, SZ_64K };
	struct ctx *c = test->priv;
	struct expect x[] = { { SZ_1G, &p, 1 }, { SZ_1G + SZ_64K, &p, 1 } };
	struct tb_table *leaf;
	int live = c->b.live;

	KUNIT_ASSERT_EQ(test, map_chunks(c, SZ_1G, &p, 1), 0);
	/* the last table made holds the 4 KiB leaves: entries 0 to 15 */
	leaf = xa_load(&c->b.tables, c->b.next_id);
	KUNIT_ASSERT_NOT_NULL(test, leaf);
	KUNIT_ASSERT_NE(test, leaf->cpu[15], 0);
	KUNIT_ASSERT_EQ(test, leaf->cpu[16], 0);
	leaf->cpu[20] = E_VALID | E_READ | 0xdead000;
	leaf->cpu[5] = 0;

	KUNIT_EXPECT_EQ(test, map_chunks(c, SZ_1G + SZ_64K, &p, 1), 0);
	/* the hardware's copy, which commits write, has both mappings */
	decode_n(test, c, x, 2);
	unmap_all(test, c, SZ_1G, SZ_128K);
	KUNIT_EXPECT_EQ(test, c->b.live, live);
}

/* An unmap that would cut a large leaf in two is refused whole. */
static void pt_unmap_rejects_partial_leaf(struct kunit *test)
{
	static const struct chunk a = { SZ_2G, SZ_1G }, b = { SZ_4M, SZ_2M };
	struct ctx *c = test->priv;
	struct expect x[] = { { SZ_1G, &a, 1 }, { SZ_2G + SZ_2M, &b, 1 } };
	struct amdgpu_ualink_pt_detached u;

	KUNIT_ASSERT_EQ(test, map_chunks(c, SZ_1G, &a, 1), 0);
	KUNIT_ASSERT_EQ(test, map_chunks(c, SZ_2G + SZ_2M, &b, 1), 0);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_pt_unmap(&c->pt, SZ_1G, SZ_2M, &u), -EINVAL);
	KUNIT_EXPECT_EQ(test, u.size, 0);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_pt_unmap(&c->pt, SZ_1G + SZ_4K, SZ_1G, &u),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_pt_unmap(&c->pt, SZ_2G + SZ_2M + SZ_4K, SZ_4K,
						     &u), -EINVAL);
	decode_n(test, c, x, 2);
	unmap_all(test, c, SZ_1G, SZ_1G + SZ_4M);
	decode(test, c, NULL);
}

/* The scatterlist cursor maps real pages at their physical addresses. */
static void pt_sg_cursor(struct kunit *test)
{
	struct ctx *c = test->priv;
	struct amdgpu_ualink_pt_cursor cur;
	struct page *pages[3];
	struct sg_table sgt;
	struct scatterlist *sg;
	unsigned int i;
	u64 addr;

	KUNIT_ASSERT_EQ(test, sg_alloc_table(&sgt, ARRAY_SIZE(pages), GFP_KERNEL), 0);
	for_each_sgtable_sg(&sgt, sg, i) {
		pages[i] = alloc_page(GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, pages[i]);
		sg_set_page(sg, pages[i], PAGE_SIZE, 0);
	}
	amdgpu_ualink_pt_cursor_init_sg(&cur, sgt.sgl);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_pt_map(&c->pt, SZ_1G, 3 * PAGE_SIZE, &cur), 0);
	for (i = 0; i < ARRAY_SIZE(pages); i++) {
		u64 off = SZ_1G + i * PAGE_SIZE + 40;

		KUNIT_EXPECT_EQ(test, amdgpu_ualink_pt_translate(&c->pt, off, &addr, NULL), 0);
		KUNIT_EXPECT_EQ(test, addr, page_to_phys(pages[i]) + 40);
	}
	/* one page more than the list holds */
	amdgpu_ualink_pt_cursor_init_sg(&cur, sgt.sgl);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_pt_map(&c->pt, SZ_2G, 4 * PAGE_SIZE, &cur),
			-EINVAL);
	unmap_all(test, c, SZ_1G, 3 * PAGE_SIZE);
	for (i = 0; i < ARRAY_SIZE(pages); i++)
		__free_page(pages[i]);
	sg_free_table(&sgt);
	decode(test, c, NULL);
}

/* --- several CPUs mapping and unmapping disjoint ranges --- */

struct worker {
	struct ctx *c;
	u64 base;		/* own 256 KiB of a 2 MiB that all share */
	unsigned int errors;
	struct completion done;
};

static int worker_fn(void *data)
{
	struct worker *w = data;
	unsigned int iter, i;

	for (iter = 0; iter < 200; iter++) {
		struct chunk ch[4];
		struct amdgpu_ualink_pt_detached u;
		u64 size = 0, off, addr;

		for (i = 0; i < ARRAY_SIZE(ch); i++) {
			ch[i].addr = w->base + (u64)(i * 3 + iter % 5) * SZ_64K;
			ch[i].size = (i % 2 ? 4 : 8) * SZ_4K;
			size += ch[i].size;
		}
		/* iter % 2: [base, base + 96 KiB) or [base + 128 KiB, ...) */
		off = w->base + (iter % 2) * SZ_128K;
		if (map_chunks(w->c, off, ch, ARRAY_SIZE(ch)))
			w->errors++;
		if (amdgpu_ualink_pt_translate(&w->c->pt, off, &addr, NULL) ||
		    addr != ch[0].addr)
			w->errors++;
		if (amdgpu_ualink_pt_unmap(&w->c->pt, off, size, &u) || u.size != size)
			w->errors++;
		amdgpu_ualink_pt_unmap_done(&w->c->pt, &u);
		cond_resched();
	}
	complete(&w->done);
	return 0;
}

/*
 * Four threads map and unmap disjoint ranges of one 2 MiB, so they share
 * every table and keep emptying and re-creating the last-level one. On UML
 * they only interleave; the debug SMP guest runs them on two CPUs under
 * lockdep and KASAN.
 */
static void pt_concurrent_disjoint(struct kunit *test)
{
	struct ctx *c = test->priv;
	struct worker w[4];
	unsigned int i, started = 0;

	kunit_info(test, "%u CPUs online\n", num_online_cpus());
	for (i = 0; i < ARRAY_SIZE(w); i++) {
		struct task_struct *t;

		w[i].c = c;
		w[i].base = SZ_1G + (u64)i * SZ_256K;
		w[i].errors = 0;
		init_completion(&w[i].done);
		t = kthread_run(worker_fn, &w[i], "ualink-pt-%u", i);
		if (IS_ERR(t))
			break;
		started++;
	}
	for (i = 0; i < started; i++) {
		wait_for_completion(&w[i].done);
		KUNIT_EXPECT_EQ(test, w[i].errors, 0);
	}
	KUNIT_EXPECT_EQ(test, started, ARRAY_SIZE(w));
	decode(test, c, NULL);
	KUNIT_EXPECT_EQ(test, c->b.live, 1);
}

/*
 * Spares: with three kept, an unmapped chain of tables is reused whole by
 * the next mapping (no allocation, the walker finds it right), a mapping
 * elsewhere while none is left allocates, and keeping none frees them.
 */
static void pt_spares_reused(struct kunit *test)
{
	struct ctx *c = test->priv;
	const struct chunk a = { SZ_1G, SZ_64K }, b = { 3ULL * SZ_1G, SZ_64K };
	const struct expect xa = { SZ_2M, &a, 1 }, xb = { 5ULL * SZ_1G, &b, 1 };
	const struct expect both[] = { xa, xb };
	int allocs;

	amdgpu_ualink_pt_keep_spares(&c->pt, 3);
	KUNIT_ASSERT_EQ(test, map_chunks(c, xa.offset, &a, 1), 0);
	KUNIT_EXPECT_EQ(test, c->b.live, 4);
	unmap_all(test, c, xa.offset, SZ_64K);
	/* kept, not freed, not counted as tables in use */
	KUNIT_EXPECT_EQ(test, c->b.recycled, 3);
	KUNIT_EXPECT_EQ(test, c->b.live, 4);
	KUNIT_EXPECT_EQ(test, c->pt.spares, 3);
	KUNIT_EXPECT_EQ(test, c->pt.tables, 1);
	decode(test, c, NULL);

	allocs = c->b.allocs;
	KUNIT_ASSERT_EQ(test, map_chunks(c, xb.offset, &b, 1), 0);
	KUNIT_EXPECT_EQ(test, c->b.allocs, allocs);
	KUNIT_EXPECT_EQ(test, c->pt.spares, 0);
	decode(test, c, &xb);
	KUNIT_ASSERT_EQ(test, map_chunks(c, xa.offset, &a, 1), 0);
	/* the 1 GiB-level table is shared: two new tables */
	KUNIT_EXPECT_EQ(test, c->b.allocs, allocs + 2);
	decode_n(test, c, both, 2);

	unmap_all(test, c, xa.offset, SZ_64K);
	unmap_all(test, c, xb.offset, SZ_64K);
	KUNIT_EXPECT_EQ(test, c->pt.spares, 3);
	KUNIT_EXPECT_EQ(test, c->b.live, 4);	/* three of five kept */
	amdgpu_ualink_pt_keep_spares(&c->pt, 0);
	KUNIT_EXPECT_EQ(test, c->b.live, 1);
	KUNIT_EXPECT_EQ(test, c->pt.spares, 0);
}

/* --- benchmark: printed, never asserted --- */

struct synth {			/* generated memory, no array */
	struct amdgpu_ualink_pt_cursor cur;
	u64 stride, chunk;
};

static bool synth_next(struct amdgpu_ualink_pt_cursor *cur)
{
	struct synth *s = container_of(cur, struct synth, cur);

	cur->addr += s->stride - s->chunk;
	cur->size = s->chunk;
	return true;
}

static u64 bench_map(struct kunit *test, struct ctx *c, u64 chunk, u64 stride,
		     u64 skew, u64 *unmap_ns, u64 *alloc_ns, unsigned long *tables)
{
	struct amdgpu_ualink_pt_detached u;
	struct synth s = {
		.cur = { .addr = 64ULL * SZ_1G + skew, .size = chunk, .next = synth_next },
		.stride = stride, .chunk = chunk,
	};
	u64 t0, t1;

	c->b.alloc_ns = 0;
	t0 = ktime_get_ns();
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_pt_map(&c->pt, SZ_1G, SZ_1G, &s.cur), 0);
	t1 = ktime_get_ns();
	*alloc_ns = c->b.alloc_ns;
	*tables = c->b.live;
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_pt_unmap(&c->pt, SZ_1G, SZ_1G, &u), 0);
	amdgpu_ualink_pt_unmap_done(&c->pt, &u);
	*unmap_ns = ktime_get_ns() - t1;
	return t1 - t0;
}

/* 1 GiB as a scatterlist of 4 KiB entries: one page again and again. */
static u64 bench_map_sg(struct kunit *test, struct ctx *c, struct sg_table *sgt,
			u64 *unmap_ns, u64 *alloc_ns, unsigned long *tables)
{
	struct amdgpu_ualink_pt_cursor cur;
	struct amdgpu_ualink_pt_detached u;
	u64 t0, t1;

	amdgpu_ualink_pt_cursor_init_sg(&cur, sgt->sgl);
	c->b.alloc_ns = 0;
	t0 = ktime_get_ns();
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_pt_map(&c->pt, SZ_1G, SZ_1G, &cur), 0);
	t1 = ktime_get_ns();
	*alloc_ns = c->b.alloc_ns;
	*tables = c->b.live;
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_pt_unmap(&c->pt, SZ_1G, SZ_1G, &u), 0);
	amdgpu_ualink_pt_unmap_done(&c->pt, &u);
	*unmap_ns = ktime_get_ns() - t1;
	return t1 - t0;
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

#define BENCH_RUNS 7
#define BENCH_PTES (SZ_1G / SZ_4K)

static u64 bench_median(u64 *v)
{
	sort(v, BENCH_RUNS, sizeof(u64), cmp_u64, NULL);
	return max(v[BENCH_RUNS / 2], 1ULL);
}

/*
 * The floors a map is compared with: what writing 2 MiB of entries, or
 * only reading the description of the memory, costs with no table, no
 * tree and no cursor state. Each is the median of BENCH_RUNS runs.
 */
enum bench_floor {
	FLOOR_MEMSET,	/* memset() of 2 MiB: the reference */
	FLOOR_STORES,	/* 262,144 computed 64-bit stores, one by one */
	FLOOR_ARRAY,	/* entries from an array of 262,144 addresses */
	FLOOR_CALLS,	/* 262,144 calls of a cursor's next(), nothing else */
	FLOOR_SG,	/* a walk of a 262,144-entry scatterlist, nothing else */
	FLOOR_COUNT
};

static const char *const floor_names[FLOOR_COUNT] = {
	[FLOOR_MEMSET] = "memset of 2 MiB",
	[FLOOR_STORES] = "262,144 stores of computed entries",
	[FLOOR_ARRAY] = "entries from an array of addresses",
	[FLOOR_CALLS] = "262,144 calls of the callback alone",
	[FLOOR_SG] = "scatterlist walk alone",
};

static void bench_floors(struct kunit *test, struct sg_table *sgt,
			 u64 floor_ns[FLOOR_COUNT])
{
	bool (*next)(struct amdgpu_ualink_pt_cursor *cur) = synth_next;
	u64 t[FLOOR_COUNT][BENCH_RUNS], sum = 0, *src, *dst;
	struct synth sy = { .stride = SZ_8K, .chunk = SZ_4K };
	struct scatterlist *sg;
	unsigned int r, i, f;

	src = vmalloc(BENCH_PTES * sizeof(u64));
	dst = vmalloc(BENCH_PTES * sizeof(u64));
	if (!src || !dst) {
		vfree(src);
		vfree(dst);
		KUNIT_FAIL_AND_ABORT(test, "no memory for the floors");
	}
	for (i = 0; i < BENCH_PTES; i++)
		src[i] = 64ULL * SZ_1G + (u64)i * SZ_8K;
	OPTIMIZER_HIDE_VAR(next);	/* an indirect call, as the map makes */
	for (r = 0; r < BENCH_RUNS; r++) {
		u64 t0 = ktime_get_ns(), v = E_VALID;

		memset(dst, r, BENCH_PTES * sizeof(u64));
		t[FLOOR_MEMSET][r] = ktime_get_ns() - t0;

		t0 = ktime_get_ns();
		for (i = 0; i < BENCH_PTES; i++, v += SZ_4K)
			dst[i] = v;
		t[FLOOR_STORES][r] = ktime_get_ns() - t0;

		t0 = ktime_get_ns();
		for (i = 0; i < BENCH_PTES; i++)
			dst[i] = (src[i] & E_ADDR) | E_VALID;
		t[FLOOR_ARRAY][r] = ktime_get_ns() - t0;

		sy.cur.addr = 0;
		t0 = ktime_get_ns();
		for (i = 0; i < BENCH_PTES; i++) {
			next(&sy.cur);
			sy.cur.size = 0;
		}
		t[FLOOR_CALLS][r] = ktime_get_ns() - t0;
		sum += sy.cur.addr;

		t0 = ktime_get_ns();
		for_each_sgtable_sg(sgt, sg, i)
			sum += sg_phys(sg) + sg->length;
		t[FLOOR_SG][r] = ktime_get_ns() - t0;
	}
	KUNIT_EXPECT_NE(test, sum, 0);
	KUNIT_EXPECT_EQ(test, dst[BENCH_PTES - 1],
			(src[BENCH_PTES - 1] & E_ADDR) | E_VALID);
	vfree(src);
	vfree(dst);
	for (f = 0; f < FLOOR_COUNT; f++) {
		floor_ns[f] = bench_median(t[f]);
		kunit_info(test, "floor: %s: %llu ns, %llu.%02llu x memset\n",
			   floor_names[f], floor_ns[f],
			   div64_u64(floor_ns[f], floor_ns[FLOOR_MEMSET]),
			   div64_u64(floor_ns[f] * 100, floor_ns[FLOOR_MEMSET]) % 100);
	}
}

static void pt_benchmark_1g(struct kunit *test)
{
	static const struct {
		const char *name;
		u64 chunk, stride, skew, ptes;
		/* the least its input costs; FLOOR_MEMSET: no floor of its own */
		enum bench_floor floor;
	} kinds[] = {
		{ "4 KiB discontiguous, scatterlist", 0, 0, 0, BENCH_PTES, FLOOR_SG },
		{ "4 KiB discontiguous, callback cursor", SZ_4K, SZ_8K, 0, BENCH_PTES,
		  FLOOR_CALLS },
		{ "2 MiB chunks, misaligned (4 KiB leaves)", SZ_2M, SZ_4M, SZ_4K,
		  BENCH_PTES, FLOOR_STORES },
		{ "2 MiB contiguous", SZ_2M, SZ_4M, 0, SZ_1G / SZ_2M, FLOOR_MEMSET },
		{ "1 GiB contiguous", SZ_1G, SZ_2G, 0, 1, FLOOR_MEMSET },
	};
	struct ctx *c = test->priv;
	u64 map[BENCH_RUNS], unmap[BENCH_RUNS], alloc[BENCH_RUNS], own[BENCH_RUNS];
	u64 floor_ns[FLOOR_COUNT], m, a, o, fl;
	struct scatterlist *sg;
	struct sg_table sgt;
	unsigned long tables;
	struct page *page;
	unsigned int k, r;

	/* Tables the walker reads directly: no commit copies to measure. */
	c->pt.ops = &tb_ops_one_copy;
	c->b.one_copy = true;

	page = alloc_page(GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, page);
	KUNIT_ASSERT_EQ(test, sg_alloc_table(&sgt, BENCH_PTES, GFP_KERNEL), 0);
	for_each_sgtable_sg(&sgt, sg, r)
		sg_set_page(sg, page, SZ_4K, 0);
	bench_floors(test, &sgt, floor_ns);

	for (k = 0; k < ARRAY_SIZE(kinds); k++) {
		for (r = 0; r < BENCH_RUNS; r++) {
			map[r] = kinds[k].chunk ?
				 bench_map(test, c, kinds[k].chunk, kinds[k].stride,
					   kinds[k].skew, &unmap[r], &alloc[r], &tables) :
				 bench_map_sg(test, c, &sgt, &unmap[r], &alloc[r], &tables);
			own[r] = map[r] - min(alloc[r], map[r]);
		}
		m = bench_median(map);
		a = bench_median(alloc);
		o = bench_median(own);
		kunit_info(test,
			   "1 GiB, %s: map %llu ns (test backend's table allocation %llu ns of it), unmap %llu ns (medians of %d), %llu PTEs, %llu PTEs/s, %lu table pages = %lu KiB, %llu.%02llu x memset\n",
			   kinds[k].name, m, a, bench_median(unmap),
			   BENCH_RUNS, kinds[k].ptes,
			   div64_u64(kinds[k].ptes * NSEC_PER_SEC, m),
			   tables, tables * 4,
			   div64_u64(m, floor_ns[FLOOR_MEMSET]),
			   div64_u64(m * 100, floor_ns[FLOOR_MEMSET]) % 100);
		if (kinds[k].floor == FLOOR_MEMSET)
			continue;
		fl = floor_ns[kinds[k].floor];
		kunit_info(test,
			   "1 GiB, %s: without the allocation (median of each run's difference) %llu ns, %llu.%02llu x its floor (%s)\n",
			   kinds[k].name, o, div64_u64(o, fl), div64_u64(o * 100, fl) % 100,
			   floor_names[kinds[k].floor]);
	}
	sg_free_table(&sgt);
	__free_page(page);
	c->pt.ops = &tb_ops;
	c->b.one_copy = false;
	KUNIT_EXPECT_EQ(test, c->b.live, 1);
}

static struct kunit_case amdgpu_ualink_pt_cases[] = {
	KUNIT_CASE(pt_rejects_bad_arguments),
	KUNIT_CASE(pt_rejects_bad_memory),
	KUNIT_CASE(pt_address_limit),
	KUNIT_CASE(pt_large_leaf_selection),
	KUNIT_CASE(pt_restore_after_reset),
	KUNIT_CASE(pt_no_huge_format),
	KUNIT_CASE_SLOW(pt_random_round_trips),
	KUNIT_CASE(pt_alloc_failure_at_every_step),
	KUNIT_CASE(pt_unmap_frees_after_shootdown),
	KUNIT_CASE(pt_overlap_rejected),
	KUNIT_CASE(pt_tables_scribbled),
	KUNIT_CASE(pt_unmap_rejects_partial_leaf),
	KUNIT_CASE(pt_sg_cursor),
	KUNIT_CASE(pt_spares_reused),
	KUNIT_CASE(pt_concurrent_disjoint),
	KUNIT_CASE_SLOW(pt_benchmark_1g),
	{}
};

static struct kunit_suite amdgpu_ualink_pt_suite = {
	.name = "amdgpu_ualink_pt",
	.init = pt_test_init,
	.exit = pt_test_exit,
	.test_cases = amdgpu_ualink_pt_cases,
};

kunit_test_suite(amdgpu_ualink_pt_suite);
