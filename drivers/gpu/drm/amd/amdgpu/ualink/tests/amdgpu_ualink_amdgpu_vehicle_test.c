// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The test vehicle: KUnit cases that run amdgpu's own code on imports and
 * exports, on fake amdgpu_devices without hardware. Each device has:
 *
 * - amdgpu's TTM device, from amdgpu_ttm_init() itself (amdgpu_bo_driver,
 *   the VRAM buddy manager over 64 MiB of fake VRAM, the GTT and preempt
 *   managers), with the CPU's view of VRAM (the aperture) in vmalloc'd
 *   memory: page tables and buffers in VRAM are written and read there;
 * - gmc_v9's GMC functions (GFX 9.0.1, as on Vega10), so that GPUVM page
 *   tables are encoded by the code a Vega10 uses;
 * - amdgpu's VM manager in CPU-update mode, and the seq64 area that
 *   opening a file maps;
 * - the UALink IP block with the fake IP of amdgpu_ualink_amdgpu_test.c,
 *   two devices talking through each other's interrupt source;
 * - files opened through amdgpu_driver_open_kms() (mock_drm_getfile()), so
 *   that GEM handles, VMs and ioctl handlers are amdgpu's.
 *
 * What is fake: no ring, no SDMA, no GART table (GTT buffers get no GART
 * address), no display, no interrupt handler other than the UALink
 * source, VRAM that is kernel memory. CPU faults on VRAM mappings must
 * not happen here (amdgpu would map the aperture's physical address).
 * Included at the end of amdgpu_ualink_amdgpu.c, after
 * amdgpu_ualink_amdgpu_test.c, whose fake IP it uses.
 */

#include <linux/fdtable.h>
#include <linux/mman.h>
#include <linux/pm_runtime.h>
#include <linux/vmalloc.h>

#include <drm/drm_prime.h>

#include "amdgpu_drv.h"
#include "amdgpu_gem.h"
#include "amdgpu_reset.h"
#include "amdgpu_seq64.h"
#include "amdgpu_vm.h"
#include "gmc_v9_0.h"

#define VEHICLE_VRAM		SZ_64M

static void vehicle_flush_hdp(struct amdgpu_device *adev,
			      struct amdgpu_ring *ring)
{
}

static const struct amdgpu_asic_funcs vehicle_asic = {
	.flush_hdp = vehicle_flush_hdp,
	.invalidate_hdp = vehicle_flush_hdp,
};

static void vehicle_delayed_init(struct work_struct *work)
{
}

/* amdgpu's driver, without the release that tears down a real device */
static struct drm_driver vehicle_driver;

/* What amdgpu_device_init() sets up before any IP block, for these paths. */
static void vehicle_adev_init(struct amdgpu_device *adev, struct device *dev)
{
	adev->dev = dev;
	adev->asic_type = CHIP_VEGA10;
	adev->family = AMDGPU_FAMILY_AI;
	adev->ip_versions[GC_HWIP][0] = IP_VERSION(9, 0, 1);
	adev->asic_funcs = &vehicle_asic;
	mutex_init(&adev->notifier_lock);
	mutex_init(&adev->srbm_mutex);
	mutex_init(&adev->mn_lock);
	spin_lock_init(&adev->mm_stats.lock);
	spin_lock_init(&adev->wb.lock);
	INIT_DELAYED_WORK(&adev->delayed_init_work, vehicle_delayed_init);
	RCU_INIT_POINTER(adev->gang_submit, dma_fence_get_stub());
}

static void vehicle_teardown(void *data)
{
	struct amdgpu_device *adev = data;

	amdgpu_seq64_fini(adev);
	amdgpu_vm_manager_fini(adev);
	flush_workqueue(adev->mman.bdev.wq);
	/* not an ioremap: amdgpu_ttm_fini() must not unmap it */
	vfree((void __force *)adev->mman.aper_base_kaddr);
	adev->mman.aper_base_kaddr = NULL;
	amdgpu_ttm_fini(adev);
	amdgpu_reset_put_reset_domain(adev->reset_domain);
	dma_fence_put(rcu_dereference_protected(adev->gang_submit, true));
}

/* Both out of the pod before either goes: each talks to the other. */
static void vehicle_pair_fini(void *data)
{
	struct fake_node *a = data, *b = a->peer;

	fake_ip(a)->hw_fini(&a->adev);
	fake_ip(b)->hw_fini(&b->adev);
	fake_ip(a)->sw_fini(&a->adev);
	fake_ip(b)->sw_fini(&b->adev);
}

/*
 * A fake device with amdgpu's TTM, GMC functions, VM manager and the
 * UALink IP block, up to hw_init. Torn down when the test ends.
 */
static struct fake_node *vehicle_create(struct kunit *test, const char *name,
					u16 id)
{
	struct amdgpu_ip_block gmc = { .version = &gmc_v9_0_ip_block };
	struct device *dev = kunit_device_register(test, name);
	struct amdgpu_device *adev;
	struct fake_node *node;
	struct drm_device *drm;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dev);
	dev->dma_parms = kunit_kzalloc(test, sizeof(*dev->dma_parms), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, dev->dma_parms);
	dev->coherent_dma_mask = DMA_BIT_MASK(64);
	dev->dma_mask = &dev->coherent_dma_mask;
	/* opening a file takes a runtime-PM reference */
	pm_runtime_no_callbacks(dev);
	KUNIT_ASSERT_EQ(test, pm_runtime_set_active(dev), 0);
	KUNIT_ASSERT_EQ(test, devm_pm_runtime_enable(dev), 0);

	vehicle_driver = amdgpu_partition_driver;
	vehicle_driver.release = NULL;
	drm = __drm_kunit_helper_alloc_drm_device_with_driver(test, dev,
							      sizeof(*node),
							      offsetof(struct fake_node, adev.ddev),
							      &vehicle_driver);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, drm);
	node = container_of(drm, struct fake_node, adev.ddev);
	node->id = id;
	adev = &node->adev;
	vehicle_adev_init(adev, dev);
	spin_lock_init(&adev->irq.lock);
	adev->irq.installed = true;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, fake_node_fini,
							adev), 0);
	adev->reset_domain = amdgpu_reset_create_reset_domain(SINGLE_DEVICE,
							      "ualink-vehicle");
	KUNIT_ASSERT_NOT_NULL(test, adev->reset_domain);

	/* a Vega10's memory controller functions, 64 MiB of VRAM */
	gmc.adev = adev;
	KUNIT_ASSERT_EQ(test, gmc_v9_0_ip_block.funcs->early_init(&gmc), 0);
	adev->gmc.mc_vram_size = VEHICLE_VRAM;
	adev->gmc.real_vram_size = VEHICLE_VRAM;
	adev->gmc.gart_size = SZ_512M;
	/* no aperture for amdgpu_ttm_init() to ioremap: ours follows */
	adev->gmc.visible_vram_size = 0;
	KUNIT_ASSERT_EQ(test, amdgpu_ttm_init(adev), 0);
	adev->gmc.visible_vram_size = VEHICLE_VRAM;
	adev->mman.aper_base_kaddr = (void __iomem __force *)vzalloc(VEHICLE_VRAM);
	if (!adev->mman.aper_base_kaddr) {
		vehicle_teardown(adev);
		KUNIT_FAIL_AND_ABORT(test, "no memory for the fake VRAM");
	}
	amdgpu_vm_adjust_size(adev, 256 * 1024, 9, 3, 48);
	amdgpu_vm_manager_init(adev);
	adev->vm_manager.vm_update_mode = AMDGPU_VM_USE_CPU_FOR_GFX |
					  AMDGPU_VM_USE_CPU_FOR_COMPUTE;
	if (amdgpu_seq64_init(adev)) {
		vehicle_teardown(adev);
		KUNIT_FAIL_AND_ABORT(test, "amdgpu_seq64_init");
	}
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, vehicle_teardown,
							adev), 0);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_ip_block_add(adev, &fake_hw), 0);
	return node;
}

/*
 * Two vehicles, A exporting and B importing, that know each other, with
 * their UALink IP blocks up (sw_init, hw_init).
 */
static void vehicle_pair(struct kunit *test, struct fake_node **a,
			 struct fake_node **b)
{
	*a = vehicle_create(test, "ualink-vehicle-a", FAKE_A);
	*b = vehicle_create(test, "ualink-vehicle-b", FAKE_B);
	(*a)->peer = *b;
	(*b)->peer = *a;
	KUNIT_ASSERT_EQ(test, fake_ip(*a)->sw_init(&(*a)->adev), 0);
	if (fake_ip(*b)->sw_init(&(*b)->adev)) {
		fake_ip(*a)->sw_fini(&(*a)->adev);
		KUNIT_FAIL_AND_ABORT(test, "UALink sw_init");
	}
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, vehicle_pair_fini,
							*a), 0);
	KUNIT_ASSERT_EQ(test, fake_ip(*a)->hw_init(&(*a)->adev), 0);
	KUNIT_ASSERT_EQ(test, fake_ip(*b)->hw_init(&(*b)->adev), 0);
}

static void vehicle_file_close(void *data)
{
	__fput_sync(data);
}

/* A file of @node's render node, opened by amdgpu_driver_open_kms(). */
static struct drm_file *vehicle_open(struct kunit *test, struct fake_node *node)
{
	struct file *f = mock_drm_getfile(node->adev.ddev.render, O_RDWR);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, f);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, vehicle_file_close,
							f), 0);
	KUNIT_ASSERT_NOT_NULL(test, ((struct drm_file *)f->private_data)->driver_priv);
	return f->private_data;
}

/*
 * A user buffer as DRM_IOCTL_AMDGPU_GEM_CREATE makes it
 * (amdgpu_gem_object_create()), and its GEM handle, but for the clearing of
 * VRAM at creation and at release, which needs a ring this device has not.
 */
static u32 vehicle_gem_create(struct kunit *test, struct drm_file *file,
			      u64 size, u32 domain, u64 flags)
{
	struct amdgpu_fpriv *fpriv = file->driver_priv;
	struct amdgpu_bo_param bp = {
		.size = size,
		.byte_align = PAGE_SIZE,
		.domain = domain,
		.preferred_domain = domain,
		.flags = flags,
		.type = ttm_bo_type_device,
		.bo_ptr_size = sizeof(struct amdgpu_bo),
		.xcp_id_plus1 = fpriv->xcp_id + 1,
	};
	struct amdgpu_bo_user *ubo;
	u32 handle;

	KUNIT_ASSERT_EQ(test, amdgpu_bo_create_user(drm_to_adev(file->minor->dev),
						    &bp, &ubo), 0);
	KUNIT_EXPECT_EQ(test, drm_gem_handle_create(file, &ubo->bo.tbo.base,
						    &handle), 0);
	drm_gem_object_put(&ubo->bo.tbo.base);
	return handle;
}

static struct amdgpu_bo *vehicle_bo(struct kunit *test, struct drm_file *file,
				    u32 handle)
{
	struct drm_gem_object *obj = drm_gem_object_lookup(file, handle);

	KUNIT_ASSERT_NOT_NULL(test, obj);
	drm_gem_object_put(obj);	/* the handle keeps it */
	return gem_to_amdgpu_bo(obj);
}

static struct drm_amdgpu_ualink_handle vehicle_export(struct kunit *test,
						      struct drm_file *file,
						      u32 gem)
{
	struct drm_amdgpu_ualink args = {
		.op = AMDGPU_UALINK_OP_EXPORT,
		.u.exp.gem_handle = gem,
	};

	KUNIT_ASSERT_EQ(test, amdgpu_ualink_ioctl_amdgpu(file->minor->dev,
							 &args, file), 0);
	return args.u.exp.handle;
}

/* User memory for the ioctls that copy to or from userspace. */
static void __user *vehicle_user_page(struct kunit *test)
{
	unsigned long addr = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE,
					   PROT_READ | PROT_WRITE,
					   MAP_ANONYMOUS | MAP_PRIVATE, 0);

	KUNIT_ASSERT_NE_MSG(test, addr, 0, "no user memory");
	return (void __user *)addr;
}

/* A batch of one: the import's GEM handle in @file, or a negative errno. */
static int vehicle_import(struct kunit *test, struct drm_file *file,
			  struct drm_amdgpu_ualink_handle h, u32 *gem)
{
	struct drm_amdgpu_ualink_batch_entry e = { .handle = h },
		__user *ue = vehicle_user_page(test);
	struct drm_amdgpu_ualink args = {
		.op = AMDGPU_UALINK_OP_IMPORT_BATCH,
		.u.batch = { .entries = (uintptr_t)ue, .count = 1 },
	};
	int ret;

	KUNIT_ASSERT_EQ(test, copy_to_user(ue, &e, sizeof(e)), 0);
	ret = amdgpu_ualink_ioctl_amdgpu(file->minor->dev, &args, file);
	if (ret)
		return ret;
	KUNIT_ASSERT_EQ(test, copy_from_user(&e, ue, sizeof(e)), 0);
	*gem = e.gem_handle;
	return e.error;
}

/*
 * The vehicle itself: amdgpu's GEM create makes a VRAM buffer on A, the
 * UALink ioctl exports it, B's import is a buffer amdgpu_bo_create()
 * placed in AMDGPU_PL_NPA at the NPA A granted, and A's export pinned a
 * buffer of amdgpu's VRAM manager.
 */
static void ualink_vehicle_export_import(struct kunit *test)
{
	struct drm_file *fa, *fb;
	struct fake_node *a, *b;
	struct amdgpu_bo *exp, *imp;
	struct drm_amdgpu_ualink_handle h;
	u32 ga, gb;

	vehicle_pair(test, &a, &b);
	fa = vehicle_open(test, a);
	fb = vehicle_open(test, b);

	ga = vehicle_gem_create(test, fa, SZ_2M, AMDGPU_GEM_DOMAIN_VRAM,
				AMDGPU_GEM_CREATE_NO_CPU_ACCESS);
	exp = vehicle_bo(test, fa, ga);
	KUNIT_EXPECT_EQ(test, exp->tbo.resource->mem_type, TTM_PL_VRAM);
	h = vehicle_export(test, fa, ga);
	KUNIT_EXPECT_EQ(test, h.lo & AMDGPU_UALINK_HANDLE_ACCEL_ID_MASK, FAKE_A);
	KUNIT_EXPECT_EQ(test, exp->tbo.pin_count, 0);

	KUNIT_ASSERT_EQ(test, vehicle_import(test, fb, h, &gb), 0);
	imp = vehicle_bo(test, fb, gb);
	KUNIT_EXPECT_EQ(test, imp->tbo.resource->mem_type, AMDGPU_PL_NPA);
	KUNIT_EXPECT_EQ(test, amdgpu_bo_gpu_offset_no_check(imp) &
			~(AMDGPU_UALINK_NPA_WINDOW_SIZE - 1), amdgpu_ualink_npa_build(FAKE_A, 0));
	KUNIT_EXPECT_EQ(test, amdgpu_bo_size(imp), SZ_2M);
	/* A pinned its buffer for B, in VRAM */
	KUNIT_EXPECT_EQ(test, exp->tbo.pin_count, 1);
	KUNIT_EXPECT_EQ(test, exp->tbo.resource->mem_type, TTM_PL_VRAM);

	/* B lets go, then A: nothing stays pinned */
	KUNIT_EXPECT_EQ(test, drm_gem_handle_delete(fb, gb), 0);
	flush_workqueue(b->adev.mman.bdev.wq);
	amdgpu_ualink_dev_flush(&b->adev.ualink->udev);
	amdgpu_ualink_dev_flush(&a->adev.ualink->udev);
	KUNIT_EXPECT_EQ(test, exp->tbo.pin_count, 0);
	KUNIT_EXPECT_EQ(test, drm_gem_handle_delete(fa, ga), 0);
}

/* B's import of a 2 MiB VRAM buffer of A: its GEM handle in @fb. */
static u32 vehicle_imported(struct kunit *test, struct fake_node **a,
			    struct fake_node **b, struct drm_file **fa,
			    struct drm_file **fb)
{
	struct drm_amdgpu_ualink_handle h;
	u32 ga, gb;

	vehicle_pair(test, a, b);
	*fa = vehicle_open(test, *a);
	*fb = vehicle_open(test, *b);
	ga = vehicle_gem_create(test, *fa, SZ_2M, AMDGPU_GEM_DOMAIN_VRAM,
				AMDGPU_GEM_CREATE_NO_CPU_ACCESS);
	h = vehicle_export(test, *fa, ga);
	KUNIT_ASSERT_EQ(test, vehicle_import(test, *fb, h, &gb), 0);
	return gb;
}

/*
 * What Mesa and ROCm do with any buffer they receive, done with amdgpu's
 * own GEM ioctl handlers on an import's GEM handle: each works as on any
 * buffer or answers a defined errno, and none gives the CPU a way in.
 */
static void ualink_vehicle_gem_ioctls(struct kunit *test)
{
	struct drm_amdgpu_gem_create_in __user *uinfo = vehicle_user_page(test);
	struct drm_amdgpu_gem_create_in info;
	struct drm_amdgpu_gem_metadata meta = {};
	union drm_amdgpu_gem_wait_idle idle = {};
	union drm_amdgpu_gem_mmap mmap = {};
	struct drm_amdgpu_gem_op op = {};
	struct drm_file *fa, *fb;
	struct fake_node *a, *b;
	struct drm_device *drm;
	struct amdgpu_bo *imp;
	u32 gb, again;
	void *ptr;
	int fd;

	gb = vehicle_imported(test, &a, &b, &fa, &fb);
	drm = &b->adev.ddev;
	imp = vehicle_bo(test, fb, gb);
	/*
	 * A kernel buffer here would BUG() in the metadata ioctl below
	 * (amdgpu_bo_get_tiling_flags()): stop before that.
	 */
	KUNIT_ASSERT_EQ(test, imp->tbo.type, ttm_bo_type_device);

	/* libdrm's amdgpu_bo_query_info(): metadata, then the create info */
	meta.handle = gb;
	meta.op = AMDGPU_GEM_METADATA_OP_SET_METADATA;
	meta.data.tiling_info = 0x1234;
	meta.data.data_size_bytes = 8;
	meta.data.data[1] = 0xabcd;
	KUNIT_EXPECT_EQ(test, amdgpu_gem_metadata_ioctl(drm, &meta, fb), 0);
	memset(&meta.data, 0, sizeof(meta.data));
	meta.op = AMDGPU_GEM_METADATA_OP_GET_METADATA;
	KUNIT_EXPECT_EQ(test, amdgpu_gem_metadata_ioctl(drm, &meta, fb), 0);
	KUNIT_EXPECT_EQ(test, meta.data.tiling_info, 0x1234);
	KUNIT_EXPECT_EQ(test, meta.data.data_size_bytes, 8);
	KUNIT_EXPECT_EQ(test, meta.data.data[1], 0xabcd);

	op.handle = gb;
	op.op = AMDGPU_GEM_OP_GET_GEM_CREATE_INFO;
	op.value = (uintptr_t)uinfo;
	KUNIT_EXPECT_EQ(test, amdgpu_gem_op_ioctl(drm, &op, fb), 0);
	KUNIT_ASSERT_EQ(test, copy_from_user(&info, uinfo, sizeof(info)), 0);
	KUNIT_EXPECT_EQ(test, info.bo_size, SZ_2M);
	/* no kernel-internal domain reaches userspace */
	KUNIT_EXPECT_EQ(test, info.domains & ~AMDGPU_GEM_DOMAIN_MASK, 0);
	KUNIT_EXPECT_TRUE(test, info.domain_flags & AMDGPU_GEM_CREATE_NO_CPU_ACCESS);

	/* it stays where it is, and the CPU never reaches it */
	op.op = AMDGPU_GEM_OP_SET_PLACEMENT;
	op.value = AMDGPU_GEM_DOMAIN_VRAM;
	KUNIT_EXPECT_EQ(test, amdgpu_gem_op_ioctl(drm, &op, fb), -EPERM);
	KUNIT_EXPECT_EQ(test, imp->tbo.resource->mem_type, AMDGPU_PL_NPA);
	mmap.in.handle = gb;
	KUNIT_EXPECT_EQ(test, amdgpu_gem_mmap_ioctl(drm, &mmap, fb), -EPERM);
	KUNIT_EXPECT_EQ(test, amdgpu_bo_kmap(imp, &ptr), -EPERM);
	KUNIT_ASSERT_EQ(test, amdgpu_bo_reserve(imp, false), 0);
	KUNIT_EXPECT_EQ(test, amdgpu_bo_pin(imp, AMDGPU_GEM_DOMAIN_VRAM), -EINVAL);
	amdgpu_bo_unreserve(imp);

	idle.in.handle = gb;
	KUNIT_EXPECT_EQ(test, amdgpu_gem_wait_idle_ioctl(drm, &idle, fb), 0);
	KUNIT_EXPECT_EQ(test, idle.out.status, 0);

	/* PRIME: the import's own dma-buf, and the same handle back */
	KUNIT_ASSERT_EQ(test, drm_gem_prime_handle_to_fd(drm, fb, gb, DRM_CLOEXEC |
							 DRM_RDWR, &fd), 0);
	KUNIT_EXPECT_EQ(test, drm_gem_prime_fd_to_handle(drm, fb, fd, &again), 0);
	KUNIT_EXPECT_EQ(test, again, gb);
	/* not into A: another device has no way to its fabric port */
	KUNIT_EXPECT_EQ(test, drm_gem_prime_fd_to_handle(&a->adev.ddev, fa, fd,
							 &again), -EXDEV);
	KUNIT_EXPECT_EQ(test, close_fd(fd), 0);
}

static struct kunit_case amdgpu_ualink_vehicle_cases[] = {
	KUNIT_CASE(ualink_vehicle_export_import),
	KUNIT_CASE(ualink_vehicle_gem_ioctls),
	{}
};

static struct kunit_suite amdgpu_ualink_vehicle_suite = {
	.name = "amdgpu_ualink_vehicle",
	.test_cases = amdgpu_ualink_vehicle_cases,
};

kunit_test_suite(amdgpu_ualink_vehicle_suite);
