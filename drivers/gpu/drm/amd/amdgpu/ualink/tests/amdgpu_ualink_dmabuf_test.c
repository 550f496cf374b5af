// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * KUnit tests for the dma-buf of an imported buffer
 * (amdgpu_ualink_dmabuf.c), on KUnit DRM devices.
 */

#include <kunit/device.h>
#include <kunit/test.h>
#include <linux/anon_inodes.h>
#include <linux/dcache.h>
#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/fcntl.h>
#include <linux/file.h>
#include <linux/iosys-map.h>

#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_kunit_helpers.h>
#include <drm/drm_prime.h>

#include "../amdgpu_ualink_dmabuf.h"

MODULE_IMPORT_NS("DMA_BUF");

/* an import's buffer object, as far as its dma-buf is concerned */
struct tgem {
	struct drm_gem_object base;
	struct amdgpu_ualink_dmabuf_slot slot;
};

struct dmabuf_test {
	struct device *dev, *other_dev;
	struct drm_device *drm, *other;
	struct drm_gem_object *obj;
	struct amdgpu_ualink_dmabuf_slot *slot;
	struct dma_buf *dma_buf;
};

static void tgem_free(struct drm_gem_object *obj)
{
	struct tgem *g = container_of(obj, struct tgem, base);

	amdgpu_ualink_dmabuf_slot_fini(&g->slot);
	drm_gem_object_release(obj);
	kfree(g);
}

static struct dma_buf *tgem_export(struct drm_gem_object *obj, int flags)
{
	return amdgpu_ualink_dmabuf_get(&container_of(obj, struct tgem, base)->slot,
					flags);
}

static const struct drm_gem_object_funcs tgem_funcs = {
	.free = tgem_free,
	.export = tgem_export,
};

static struct tgem *tgem_new(struct kunit *test, struct drm_device *drm)
{
	struct tgem *g = kzalloc_obj(*g, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, g);
	g->base.funcs = &tgem_funcs;
	drm_gem_private_object_init(drm, &g->base, SZ_2M);
	amdgpu_ualink_dmabuf_slot_init(&g->slot, &g->base, NULL);
	return g;
}

static int dmabuf_test_init(struct kunit *test)
{
	struct dmabuf_test *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	struct tgem *g;

	KUNIT_ASSERT_NOT_NULL(test, t);
	t->dev = drm_kunit_helper_alloc_device(test);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, t->dev);
	/* the helper's device has a fixed name: the other one needs another */
	t->other_dev = kunit_device_register(test, "amdgpu-ualink-other");
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, t->other_dev);
	t->drm = __drm_kunit_helper_alloc_drm_device(test, t->dev, sizeof(*t->drm), 0,
						     DRIVER_GEM);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, t->drm);
	t->other = __drm_kunit_helper_alloc_drm_device(test, t->other_dev,
						       sizeof(*t->other), 0, DRIVER_GEM);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, t->other);

	g = tgem_new(test, t->drm);
	t->obj = &g->base;
	t->slot = &g->slot;
	t->dma_buf = amdgpu_ualink_dmabuf_get(t->slot, O_RDWR);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, t->dma_buf);
	test->priv = t;
	return 0;
}

static void dmabuf_test_exit(struct kunit *test)
{
	struct dmabuf_test *t = test->priv;

	if (!t)		/* init stopped early */
		return;
	dma_buf_put(t->dma_buf);
	drm_gem_object_put(t->obj);
	/*
	 * A kthread's fput is deferred: release the dma-bufs now, while the
	 * DRM devices they hold and this module's ops are still there.
	 */
	flush_delayed_fput();
}

/*
 * Nothing a CPU could map: every CPU path is refused. vmap and mmap are
 * refused by dma-buf itself, for any exporter without those ops: what is
 * ours is that our ops have neither (checked first); the refusal of CPU
 * access is our own op's.
 */
static void dmabuf_no_cpu_access(struct kunit *test)
{
	struct dmabuf_test *t = test->priv;
	struct vm_area_struct vma = {};
	struct iosys_map map;

	KUNIT_EXPECT_FALSE(test, t->dma_buf->ops->vmap);
	KUNIT_EXPECT_FALSE(test, t->dma_buf->ops->mmap);
	KUNIT_EXPECT_TRUE(test, t->dma_buf->ops->begin_cpu_access);
	KUNIT_EXPECT_EQ(test, dma_buf_vmap_unlocked(t->dma_buf, &map), -EINVAL);
	KUNIT_EXPECT_EQ(test, dma_buf_mmap(t->dma_buf, &vma, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, dma_buf_begin_cpu_access(t->dma_buf, DMA_BIDIRECTIONAL),
			-EPERM);
}

static void moved(struct dma_buf_attachment *attach)
{
	(*(int *)attach->importer_priv)++;
}

static const struct dma_buf_attach_ops importer_ops = {
	.allow_peer2peer = true,
	.invalidate_mappings = moved,
};

/* dynamic, but cannot be told of a revocation */
static const struct dma_buf_attach_ops unrevocable_ops = {
	.allow_peer2peer = true,
};

/*
 * Attachments: another device is refused, and so is an attachment of the
 * device itself that cannot be revoked (static, or dynamic without
 * invalidate_mappings); a revocable one cannot map the import and hears
 * of its revocation.
 */
static void dmabuf_attachments(struct kunit *test)
{
	struct dmabuf_test *t = test->priv;
	struct dma_buf_attachment *attach;
	struct sg_table *sgt;
	int moves = 0;

	attach = dma_buf_attach(t->dma_buf, t->other_dev);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(attach), -EXDEV);
	if (!IS_ERR(attach))
		dma_buf_detach(t->dma_buf, attach);
	attach = dma_buf_attach(t->dma_buf, t->dev);	/* static: pins */
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(attach), -EPERM);
	if (!IS_ERR(attach))
		dma_buf_detach(t->dma_buf, attach);
	attach = dma_buf_dynamic_attach(t->dma_buf, t->dev, &unrevocable_ops, &moves);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(attach), -EPERM);
	if (!IS_ERR(attach))
		dma_buf_detach(t->dma_buf, attach);

	attach = dma_buf_dynamic_attach(t->dma_buf, t->dev, &importer_ops, &moves);
	KUNIT_ASSERT_FALSE(test, IS_ERR(attach));
	dma_resv_lock(t->dma_buf->resv, NULL);
	sgt = dma_buf_map_attachment(attach, DMA_BIDIRECTIONAL);
	dma_resv_unlock(t->dma_buf->resv);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(sgt), -EPERM);

	/* the driver's move notification, reservation held */
	dma_resv_lock(t->dma_buf->resv, NULL);
	amdgpu_ualink_dmabuf_move_notify(t->slot);
	dma_resv_unlock(t->dma_buf->resv);
	KUNIT_EXPECT_EQ(test, moves, 1);
	dma_buf_detach(t->dma_buf, attach);
}

static struct sg_table *plain_map(struct dma_buf_attachment *attach,
				  enum dma_data_direction dir)
{
	return ERR_PTR(-ENOMEM);
}

static void plain_unmap(struct dma_buf_attachment *attach, struct sg_table *sgt,
			enum dma_data_direction dir)
{
}

static void plain_release(struct dma_buf *dma_buf)
{
}

static const struct dma_buf_ops plain_ops = {
	.map_dma_buf = plain_map,
	.unmap_dma_buf = plain_unmap,
	.release = plain_release,
};

/*
 * PRIME import: our own device gets the object back, another is refused.
 * The object of a dma-buf of ours is known whatever the device (for KFD).
 */
static void dmabuf_prime_import(struct kunit *test)
{
	struct dmabuf_test *t = test->priv;
	DEFINE_DMA_BUF_EXPORT_INFO(info);
	struct drm_gem_object *obj;
	struct dma_buf *other;

	obj = amdgpu_ualink_dmabuf_import(t->drm, t->dma_buf);
	KUNIT_EXPECT_PTR_EQ(test, obj, t->obj);
	if (!IS_ERR_OR_NULL(obj))
		drm_gem_object_put(obj);
	KUNIT_EXPECT_EQ(test, PTR_ERR(amdgpu_ualink_dmabuf_import(t->other, t->dma_buf)),
			-EXDEV);
	KUNIT_EXPECT_PTR_EQ(test, amdgpu_ualink_dmabuf_obj(t->dma_buf), t->obj);

	/* a dma-buf that is not an import's: for the driver's own import */
	info.ops = &plain_ops;
	info.priv = t;
	info.size = SZ_4K;
	info.flags = O_RDWR;
	other = dma_buf_export(&info);
	KUNIT_ASSERT_FALSE(test, IS_ERR(other));
	KUNIT_EXPECT_NULL(test, amdgpu_ualink_dmabuf_import(t->drm, other));
	KUNIT_EXPECT_NULL(test, amdgpu_ualink_dmabuf_obj(other));
	dma_buf_put(other);
}

/*
 * One dma-buf per import while it lives, however often it is asked for;
 * the slot does not keep it alive, and a released one is forgotten.
 */
static void dmabuf_one_per_import(struct kunit *test)
{
	struct dmabuf_test *t = test->priv;
	struct dma_buf *again;

	again = amdgpu_ualink_dmabuf_get(t->slot, O_RDWR);
	KUNIT_EXPECT_PTR_EQ(test, again, t->dma_buf);
	if (!IS_ERR(again))
		dma_buf_put(again);
	KUNIT_EXPECT_PTR_EQ(test, t->slot->dma_buf, t->dma_buf);

	dma_buf_put(t->dma_buf);
	flush_delayed_fput();
	KUNIT_EXPECT_NULL(test, t->slot->dma_buf);
	t->dma_buf = amdgpu_ualink_dmabuf_get(t->slot, O_RDWR);
	KUNIT_ASSERT_FALSE(test, IS_ERR(t->dma_buf));
	KUNIT_EXPECT_PTR_EQ(test, t->slot->dma_buf, t->dma_buf);
}

static const struct file_operations not_a_dmabuf_fops;

/*
 * The repeated import's lock-free path: the slot publishes its live
 * dma-buf's file, its release takes it back, and a file there that is not
 * a live dma-buf of that slot is not handed out.
 */
static void dmabuf_cached(struct kunit *test)
{
	struct amdgpu_ualink_dmabuf_slot fake = {};
	struct dmabuf_test *t = test->priv;
	DEFINE_DMA_BUF_EXPORT_INFO(info);
	struct dma_buf *made, *got, *plain;
	struct file *cache = NULL;
	struct file *other;
	struct tgem *g;

	g = tgem_new(test, t->drm);
	amdgpu_ualink_dmabuf_slot_init(&g->slot, &g->base, &cache);
	KUNIT_EXPECT_NULL(test, amdgpu_ualink_dmabuf_cached(&cache));

	made = amdgpu_ualink_dmabuf_get(&g->slot, O_RDWR);
	KUNIT_ASSERT_FALSE(test, IS_ERR(made));
	KUNIT_EXPECT_PTR_EQ(test, cache, made->file);
	got = amdgpu_ualink_dmabuf_cached(&cache);
	KUNIT_EXPECT_PTR_EQ(test, got, made);
	if (got) {
		KUNIT_EXPECT_EQ(test, file_count(made->file), 2);
		dma_buf_put(got);
	}

	/* a dma-buf of ours, of another slot: not this import's */
	cache = t->dma_buf->file;
	KUNIT_EXPECT_NULL(test, amdgpu_ualink_dmabuf_cached(&cache));
	/* a live file of another kind, which a freed file's memory may be */
	other = anon_inode_getfile("ualink-test", &not_a_dmabuf_fops, t->dma_buf,
				   O_RDWR);
	KUNIT_ASSERT_FALSE(test, IS_ERR(other));
	cache = other;
	KUNIT_EXPECT_NULL(test, amdgpu_ualink_dmabuf_cached(&cache));
	KUNIT_EXPECT_EQ(test, file_count(other), 1);
	fput(other);
	/* a live dma-buf of other ops, whose priv looks like our slot */
	info.ops = &plain_ops;
	info.priv = &fake;
	info.size = SZ_4K;
	info.flags = O_RDWR;
	plain = dma_buf_export(&info);
	KUNIT_ASSERT_FALSE(test, IS_ERR(plain));
	fake.cache = &cache;
	cache = plain->file;
	KUNIT_EXPECT_NULL(test, amdgpu_ualink_dmabuf_cached(&cache));
	dma_buf_put(plain);

	/* the release takes back only its own file, then there is none */
	cache = made->file;
	dma_buf_put(made);
	drm_gem_object_put(&g->base);
	flush_delayed_fput();
	KUNIT_EXPECT_NULL(test, cache);
	KUNIT_EXPECT_NULL(test, amdgpu_ualink_dmabuf_cached(&cache));
}

/*
 * A dma-buf released after its file was freed (someone else held its
 * dentry) and replaced meanwhile: its release leaves the new one
 * published, though the new file likely sits where the old one was.
 */
static void dmabuf_cached_late_release(struct kunit *test)
{
	struct dmabuf_test *t = test->priv;
	struct dma_buf *old, *made, *got;
	struct file *cache = NULL;
	struct dentry *dentry;
	struct tgem *g;

	g = tgem_new(test, t->drm);
	amdgpu_ualink_dmabuf_slot_init(&g->slot, &g->base, &cache);
	old = amdgpu_ualink_dmabuf_get(&g->slot, O_RDWR);
	KUNIT_ASSERT_FALSE(test, IS_ERR(old));
	dentry = dget(old->file->f_path.dentry);
	dma_buf_put(old);
	flush_delayed_fput();
	/* the file is freed, its release has not run */
	KUNIT_EXPECT_PTR_EQ(test, g->slot.dma_buf, old);
	KUNIT_EXPECT_NULL(test, amdgpu_ualink_dmabuf_cached(&cache));

	made = amdgpu_ualink_dmabuf_get(&g->slot, O_RDWR);
	KUNIT_ASSERT_FALSE(test, IS_ERR(made));
	KUNIT_EXPECT_PTR_NE(test, made, old);
	KUNIT_EXPECT_PTR_EQ(test, cache, made->file);
	dput(dentry);	/* the old one's release */
	KUNIT_EXPECT_PTR_EQ(test, cache, made->file);
	got = amdgpu_ualink_dmabuf_cached(&cache);
	KUNIT_EXPECT_PTR_EQ(test, got, made);
	if (got)
		dma_buf_put(got);
	dma_buf_put(made);
	drm_gem_object_put(&g->base);
	flush_delayed_fput();
	KUNIT_EXPECT_NULL(test, cache);
}

static struct kunit_case amdgpu_ualink_dmabuf_cases[] = {
	KUNIT_CASE(dmabuf_one_per_import),
	KUNIT_CASE(dmabuf_cached),
	KUNIT_CASE(dmabuf_cached_late_release),
	KUNIT_CASE(dmabuf_no_cpu_access),
	KUNIT_CASE(dmabuf_attachments),
	KUNIT_CASE(dmabuf_prime_import),
	{}
};

static struct kunit_suite amdgpu_ualink_dmabuf_suite = {
	.name = "amdgpu_ualink_dmabuf",
	.init = dmabuf_test_init,
	.exit = dmabuf_test_exit,
	.test_cases = amdgpu_ualink_dmabuf_cases,
};

kunit_test_suite(amdgpu_ualink_dmabuf_suite);
