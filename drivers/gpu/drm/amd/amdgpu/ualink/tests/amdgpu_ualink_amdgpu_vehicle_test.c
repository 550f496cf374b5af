// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The test vehicle: KUnit cases that run amdgpu's own code on imports and
 * exports, on fake amdgpu_devices without hardware. Each device has:
 *
 * - amdgpu's TTM device, from amdgpu_ttm_init() itself (amdgpu_bo_driver,
 *   the VRAM buddy manager over 1.5 GiB of fake VRAM, the GTT and preempt
 *   managers), with the CPU's view of VRAM (the aperture) vmapped: its
 *   top 64 MiB, where page tables and CPU-visible buffers go, are real
 *   pages, the rest one shared page (nothing is read back from there);
 * - gmc_v9's GMC functions (GFX 9.0.1, as on Vega10), so that GPUVM page
 *   tables are encoded by the code a Vega10 uses;
 * - amdgpu's VM manager in CPU-update mode, and the seq64 area that
 *   opening a file maps;
 * - the UALink IP block with the fake IP of amdgpu_ualink_amdgpu_test.c,
 *   two devices talking through each other's interrupt source;
 * - files opened through amdgpu_driver_open_kms() (mock_drm_getfile()), so
 *   that GEM handles, VMs and ioctl handlers are amdgpu's.
 *
 * What is fake: no ring, no SDMA (the page-table entities' scheduler
 * fails any job), no GART table (GTT buffers get no GART
 * address), no display, no interrupt handler other than the UALink
 * source, VRAM that is kernel memory, GPUVM TLB flushes (by PASID, which
 * compute VMs ask for through a fence) that are counted, not done. CPU faults on VRAM mappings must
 * not happen here (amdgpu would map the aperture's physical address).
 * Included at the end of amdgpu_ualink_amdgpu.c, after
 * amdgpu_ualink_amdgpu_test.c, whose fake IP it uses.
 */

#include <linux/delay.h>
#include <linux/dma-fence.h>
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/kthread.h>
#include <linux/mman.h>
#include <linux/pm_runtime.h>
#include <linux/sched/signal.h>
#include <linux/vmalloc.h>

#include <kunit/test-bug.h>

#include <drm/drm_prime.h>
#include <drm/gpu_scheduler.h>

#include "amdgpu_amdkfd.h"
#include "amdgpu_drv.h"
#include "amdgpu_gem.h"
#include "amdgpu_job.h"
#include "amdgpu_reset.h"
#include "amdgpu_seq64.h"
#include "amdgpu_vm.h"
#include "gmc_v9_0.h"
#if IS_ENABLED(CONFIG_HSA_AMD)
#include "kfd_priv.h"
#endif

/*
 * VRAM as the memory manager sees it, and the part of it the CPU's view
 * (the aperture) really holds: its top, where amdgpu places page tables
 * and other buffers the CPU writes (top-down). Buffers below are never
 * touched by the CPU here (created without CPU access), and that part of
 * the view is one shared page.
 */
#define VEHICLE_VRAM		(SZ_1G + SZ_512M)
#define VEHICLE_VRAM_HELD	SZ_64M
#define VEHICLE_VRAM_PAGES	(VEHICLE_VRAM >> PAGE_SHIFT)
/* the first held page; the one before it is the shared page */
#define VEHICLE_VRAM_FIRST	((VEHICLE_VRAM - VEHICLE_VRAM_HELD) >> PAGE_SHIFT)

static void vehicle_flush_hdp(struct amdgpu_device *adev,
			      struct amdgpu_ring *ring)
{
}

/* A GPUVM TLB flush by PASID: gmc_v9's writes registers, here only counted. */
static void vehicle_flush_tlb_pasid(struct amdgpu_device *adev, u16 pasid,
				    u32 flush_type, bool all_hub, u32 inst)
{
	atomic_inc(&fake_node(adev)->tlb_flushes);
}

static const struct amdgpu_asic_funcs vehicle_asic = {
	.flush_hdp = vehicle_flush_hdp,
	.invalidate_hdp = vehicle_flush_hdp,
};

static void vehicle_delayed_init(struct work_struct *work)
{
}

/*
 * The scheduler of the page-table entities every VM opens (7.3's
 * drm_sched_entity_init() refuses an empty list). The VM manager updates
 * page tables with the CPU here, so no job may ever reach it: one that
 * does fails the test.
 */
static struct dma_fence *vehicle_run_job(struct drm_sched_job *s_job)
{
	kunit_fail_current_test("a job reached the vehicle's scheduler");
	return ERR_PTR(-ENODEV);
}

static void vehicle_free_job(struct drm_sched_job *s_job)
{
	amdgpu_job_free(to_amdgpu_job(s_job));
}

static const struct drm_sched_backend_ops vehicle_sched_ops = {
	.run_job = vehicle_run_job,
	.free_job = vehicle_free_job,
};

static int vehicle_sched_init(struct kunit *test, struct amdgpu_device *adev)
{
	const struct drm_sched_init_args args = {
		.ops = &vehicle_sched_ops,
		.num_rqs = DRM_SCHED_PRIORITY_COUNT,
		.credit_limit = 1,
		.timeout = MAX_SCHEDULE_TIMEOUT,
		.name = "ualink-vehicle-pte",
		.dev = adev->dev,
	};
	struct drm_gpu_scheduler *sched;
	int r;

	sched = kunit_kzalloc(test, sizeof(*sched), GFP_KERNEL);
	if (!sched)
		return -ENOMEM;
	r = drm_sched_init(sched, &args);
	if (r)
		return r;
	adev->vm_manager.vm_pte_scheds[0] = sched;
	adev->vm_manager.vm_pte_num_scheds = 1;
	return 0;
}

static void vehicle_sched_fini(struct amdgpu_device *adev)
{
	if (!adev->vm_manager.vm_pte_num_scheds)
		return;
	drm_sched_fini(adev->vm_manager.vm_pte_scheds[0]);
	adev->vm_manager.vm_pte_num_scheds = 0;
}

/* amdgpu's driver, without the release that tears down a real device */
static struct drm_driver vehicle_driver;

/* What amdgpu_device_init() sets up before any IP block, for these paths. */
static void vehicle_adev_init(struct amdgpu_device *adev, struct device *dev)
{
	adev->dev = dev;
	/*
	 * 7.3's amdgpu_gmc_init_vga_resv_regions() reads the PCI subsystem
	 * vendor: a zeroed pci_dev, never registered, freed with @dev.
	 */
	adev->pdev = devm_kzalloc(dev, sizeof(*adev->pdev), GFP_KERNEL);
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

static void vehicle_vram_free(struct fake_node *node)
{
	unsigned long i;

	if (!node->vram)
		return;
	for (i = VEHICLE_VRAM_FIRST - 1; i < VEHICLE_VRAM_PAGES; i++)
		if (node->vram[i])
			__free_page(node->vram[i]);
	kvfree(node->vram);
	node->vram = NULL;
}

/* The CPU's view of the VRAM, see VEHICLE_VRAM_HELD. */
static void __iomem *vehicle_vram_map(struct fake_node *node)
{
	unsigned long i;
	void *view;

	node->vram = kvcalloc(VEHICLE_VRAM_PAGES, sizeof(*node->vram),
			      GFP_KERNEL);
	if (!node->vram)
		return NULL;
	/* the shared page, then the held ones */
	for (i = VEHICLE_VRAM_FIRST - 1; i < VEHICLE_VRAM_PAGES; i++) {
		node->vram[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!node->vram[i])
			goto err;
	}
	for (i = 0; i < VEHICLE_VRAM_FIRST - 1; i++)
		node->vram[i] = node->vram[VEHICLE_VRAM_FIRST - 1];
	view = vmap(node->vram, VEHICLE_VRAM_PAGES, VM_MAP, PAGE_KERNEL);
	if (view)
		return (void __iomem __force *)view;
err:
	vehicle_vram_free(node);
	return NULL;
}

static void vehicle_teardown(void *data)
{
	struct fake_node *node = data;
	struct amdgpu_device *adev = &node->adev;

	amdgpu_seq64_fini(adev);
	amdgpu_vm_manager_fini(adev);
	flush_workqueue(adev->mman.bdev.wq);
	/* not an ioremap: amdgpu_ttm_fini() must not unmap it */
	if (adev->mman.aper_base_kaddr)
		vunmap((void __force *)adev->mman.aper_base_kaddr);
	adev->mman.aper_base_kaddr = NULL;
	vehicle_vram_free(node);
	amdgpu_ttm_fini(adev);
	vehicle_sched_fini(adev);
	amdgpu_reset_put_reset_domain(adev->reset_domain);
	dma_fence_put(rcu_dereference_protected(adev->gang_submit, true));
}

/* Both out of the pod before either goes: each talks to the other. */
static void vehicle_pair_fini(void *data)
{
	struct fake_node *a = data, *b = a->peer;

	fake_ip(a)->hw_fini(&a->adev.ip_blocks[0]);
	fake_ip(b)->hw_fini(&b->adev.ip_blocks[0]);
	fake_ip(a)->sw_fini(&a->adev.ip_blocks[0]);
	fake_ip(b)->sw_fini(&b->adev.ip_blocks[0]);
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

	/* a Vega10's memory controller functions and VM manager */
	gmc.adev = adev;
	KUNIT_ASSERT_EQ(test, gmc_v9_0_ip_block.funcs->early_init(&gmc), 0);
	node->gmc_funcs = *adev->gmc.gmc_funcs;
	node->gmc_funcs.flush_gpu_tlb_pasid = vehicle_flush_tlb_pasid;
	adev->gmc.gmc_funcs = &node->gmc_funcs;
	/* the address masks gmc_v9_0's sw_init sets, which cannot run here */
	adev->gmc.mc_mask = 0xffffffffffffULL;
	adev->gmc.pte_addr_mask = 0x0000fffffffff000ULL;
	amdgpu_vm_adjust_size(adev, 256 * 1024, 9, 3, 48);
	amdgpu_vm_manager_init(adev);
	adev->vm_manager.vm_update_mode = AMDGPU_VM_USE_CPU_FOR_GFX |
					  AMDGPU_VM_USE_CPU_FOR_COMPUTE;
	/* before the teardown, which finishes it: kunit frees in reverse */
	KUNIT_ASSERT_EQ(test, vehicle_sched_init(test, adev), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, vehicle_teardown,
							node), 0);

	/* amdgpu's TTM device over the fake VRAM */
	adev->gmc.mc_vram_size = VEHICLE_VRAM;
	adev->gmc.real_vram_size = VEHICLE_VRAM;
	adev->gmc.gart_size = SZ_512M;
	/* no aperture for amdgpu_ttm_init() to ioremap: ours follows */
	adev->gmc.visible_vram_size = 0;
	KUNIT_ASSERT_EQ(test, amdgpu_ttm_init(adev), 0);
	adev->gmc.visible_vram_size = VEHICLE_VRAM;
	adev->mman.aper_base_kaddr = vehicle_vram_map(node);
	KUNIT_ASSERT_NOT_NULL_MSG(test, (void __force *)adev->mman.aper_base_kaddr,
				  "no memory for the fake VRAM");
	KUNIT_ASSERT_EQ(test, amdgpu_seq64_init(adev), 0);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_ip_block_add(adev, &fake_hw), 0);
	return node;
}

/*
 * Two vehicles, A exporting and B importing, with accelerator IDs @ida and
 * @idb, that know each other, with their UALink IP blocks up (sw_init,
 * hw_init).
 */
static void vehicle_pair_ids(struct kunit *test, struct fake_node **a,
			     struct fake_node **b, u16 ida, u16 idb)
{
	*a = vehicle_create(test, "ualink-vehicle-a", ida);
	*b = vehicle_create(test, "ualink-vehicle-b", idb);
	(*a)->peer = *b;
	(*b)->peer = *a;
	KUNIT_ASSERT_EQ(test, fake_ip(*a)->sw_init(&(*a)->adev.ip_blocks[0]), 0);
	if (fake_ip(*b)->sw_init(&(*b)->adev.ip_blocks[0])) {
		fake_ip(*a)->sw_fini(&(*a)->adev.ip_blocks[0]);
		KUNIT_FAIL_AND_ABORT(test, "UALink sw_init");
	}
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, vehicle_pair_fini,
							*a), 0);
	KUNIT_ASSERT_EQ(test, fake_ip(*a)->hw_init(&(*a)->adev.ip_blocks[0]), 0);
	KUNIT_ASSERT_EQ(test, fake_ip(*b)->hw_init(&(*b)->adev.ip_blocks[0]), 0);
}

static void vehicle_pair(struct kunit *test, struct fake_node **a,
			 struct fake_node **b)
{
	vehicle_pair_ids(test, a, b, FAKE_A, FAKE_B);
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
 * No KUnit assertion: a thread of the test's own may call it.
 */
static int vehicle_gem_make(struct drm_file *file, u64 size, u32 domain,
			    u64 flags, u32 *handle)
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
	struct amdgpu_bo *root = fpriv->vm.root.bo;
	struct amdgpu_bo_user *ubo;
	int ret;

	/* as the ioctl does: a per-VM buffer shares the VM's reservation */
	if (flags & AMDGPU_GEM_CREATE_VM_ALWAYS_VALID) {
		ret = amdgpu_bo_reserve(root, false);
		if (ret)
			return ret;
		bp.resv = root->tbo.base.resv;
	}
	ret = amdgpu_bo_create_user(drm_to_adev(file->minor->dev), &bp, &ubo);
	if (flags & AMDGPU_GEM_CREATE_VM_ALWAYS_VALID) {
		if (!ret)
			ubo->bo.parent = amdgpu_bo_ref(root);
		amdgpu_bo_unreserve(root);
	}
	if (ret)
		return ret;
	ret = drm_gem_handle_create(file, &ubo->bo.tbo.base, handle);
	drm_gem_object_put(&ubo->bo.tbo.base);
	return ret;
}

/*
 * GEM_CLOSE: the handle goes, and with it what it held. The last put of an
 * import's dma-buf (PRIME's cache of it, &drm_gem_object.dma_buf) is an
 * fput(), which a process runs before the ioctl returns to it and a
 * kernel thread such as this test's only later: run it now, as the
 * process would.
 */
static int vehicle_close(struct drm_file *file, u32 handle)
{
	int ret = drm_gem_handle_delete(file, handle);

	flush_delayed_fput();
	return ret;
}

static u32 vehicle_gem_create(struct kunit *test, struct drm_file *file,
			      u64 size, u32 domain, u64 flags)
{
	u32 handle;

	KUNIT_ASSERT_EQ(test, vehicle_gem_make(file, size, domain, flags,
					       &handle), 0);
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
 * buffer of amdgpu's VRAM manager, from the export to its end.
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
	KUNIT_EXPECT_EQ(test, exp->tbo.pin_count, 1);

	KUNIT_ASSERT_EQ(test, vehicle_import(test, fb, h, &gb), 0);
	imp = vehicle_bo(test, fb, gb);
	KUNIT_EXPECT_EQ(test, imp->tbo.resource->mem_type, AMDGPU_PL_NPA);
	KUNIT_EXPECT_EQ(test, amdgpu_bo_gpu_offset_no_check(imp) &
			~(AMDGPU_UALINK_NPA_WINDOW_SIZE - 1), amdgpu_ualink_npa_build(FAKE_A, 0));
	KUNIT_EXPECT_EQ(test, amdgpu_bo_size(imp), SZ_2M);
	/* A's buffer stays pinned in VRAM, and its IP lets B in */
	KUNIT_EXPECT_EQ(test, exp->tbo.pin_count, 1);
	KUNIT_EXPECT_EQ(test, exp->tbo.resource->mem_type, TTM_PL_VRAM);
	KUNIT_EXPECT_TRUE(test, test_bit(FAKE_B, a->allowed));
	KUNIT_EXPECT_EQ(test, atomic_read(&a->allows), 1);

	/* B lets go, then A: B is shut out, then nothing stays pinned */
	KUNIT_EXPECT_EQ(test, vehicle_close(fb, gb), 0);
	flush_workqueue(b->adev.mman.bdev.wq);
	amdgpu_ualink_dev_flush(&b->adev.ualink->udev);
	amdgpu_ualink_dev_flush(&a->adev.ualink->udev);
	KUNIT_EXPECT_FALSE(test, test_bit(FAKE_B, a->allowed));
	KUNIT_EXPECT_EQ(test, atomic_read(&a->denies), 1);
	KUNIT_EXPECT_EQ(test, exp->tbo.pin_count, 1);
	drm_gem_object_get(&exp->tbo.base);
	KUNIT_EXPECT_EQ(test, vehicle_close(fa, ga), 0);
	amdgpu_ualink_dev_flush(&a->adev.ualink->udev);
	KUNIT_EXPECT_EQ(test, exp->tbo.pin_count, 0);
	drm_gem_object_put(&exp->tbo.base);
}

KUNIT_DEFINE_ACTION_WRAPPER(vehicle_gem_put, drm_gem_object_put,
			    struct drm_gem_object *);

/* A's export of a 2 MiB VRAM buffer, imported by B, with a reference. */
static struct amdgpu_bo *vehicle_exported(struct kunit *test, struct fake_node **a,
					  struct fake_node **b, struct drm_file **fa,
					  struct drm_file **fb, u32 *ga, u32 *gb,
					  struct drm_amdgpu_ualink_handle *h)
{
	struct amdgpu_bo *exp;

	vehicle_pair(test, a, b);
	*fa = vehicle_open(test, *a);
	*fb = vehicle_open(test, *b);
	*ga = vehicle_gem_create(test, *fa, SZ_2M, AMDGPU_GEM_DOMAIN_VRAM,
				 AMDGPU_GEM_CREATE_NO_CPU_ACCESS);
	exp = vehicle_bo(test, *fa, *ga);
	drm_gem_object_get(&exp->tbo.base);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, vehicle_gem_put,
							&exp->tbo.base), 0);
	*h = vehicle_export(test, *fa, *ga);
	KUNIT_ASSERT_EQ(test, vehicle_import(test, *fb, *h, gb), 0);
	return exp;
}

/* B's import of a 2 MiB VRAM buffer of A: its GEM handle in @fb. */
static u32 vehicle_imported(struct kunit *test, struct fake_node **a,
			    struct fake_node **b, struct drm_file **fa,
			    struct drm_file **fb)
{
	struct drm_amdgpu_ualink_handle h;
	u32 ga, gb;

	vehicle_exported(test, a, b, fa, fb, &ga, &gb, &h);
	return gb;
}

/*
 * amdgpu's refusals, through its ioctl handler, of buffers amdgpu's own
 * create path made as DRM_IOCTL_AMDGPU_GEM_CREATE asks: a VRAM buffer
 * exports (the anchor, in vehicle_exported()); a GTT-only one, one that
 * shares its VM's reservation, an encrypted one and a UALink import get
 * EPERM, and none of them is pinned for it.
 */
static void ualink_vehicle_export_refusals(struct kunit *test)
{
	static const struct {
		u32 domain;
		u64 flags;
		const char *what;
	} refused[] = {
		{ AMDGPU_GEM_DOMAIN_GTT, 0, "GTT only" },
		{ AMDGPU_GEM_DOMAIN_VRAM, AMDGPU_GEM_CREATE_VM_ALWAYS_VALID,
		  "VM_ALWAYS_VALID" },
		{ AMDGPU_GEM_DOMAIN_VRAM, AMDGPU_GEM_CREATE_ENCRYPTED, "TMZ" },
	};
	struct drm_amdgpu_ualink args = { .op = AMDGPU_UALINK_OP_EXPORT };
	struct drm_amdgpu_ualink_handle h;
	struct drm_file *fa, *fb;
	struct fake_node *a, *b;
	struct amdgpu_bo *exp;
	unsigned int i;
	u32 ga, gb;

	exp = vehicle_exported(test, &a, &b, &fa, &fb, &ga, &gb, &h);
	KUNIT_EXPECT_EQ(test, exp->tbo.pin_count, 1);

	for (i = 0; i < ARRAY_SIZE(refused); i++) {
		u32 g;

		KUNIT_ASSERT_EQ_MSG(test, vehicle_gem_make(fa, SZ_2M,
							   refused[i].domain,
							   refused[i].flags, &g),
				    0, "making the %s buffer", refused[i].what);
		args.u.exp.gem_handle = g;
		memset(&args.u.exp.handle, 0, sizeof(args.u.exp.handle));
		KUNIT_EXPECT_EQ_MSG(test, amdgpu_ualink_ioctl_amdgpu(&a->adev.ddev,
								     &args, fa),
				    -EPERM, "%s", refused[i].what);
		KUNIT_EXPECT_EQ_MSG(test, vehicle_bo(test, fa, g)->tbo.pin_count,
				    0, "%s", refused[i].what);
	}

	/* B's import of A's buffer, exported again by B */
	args.u.exp.gem_handle = gb;
	memset(&args.u.exp.handle, 0, sizeof(args.u.exp.handle));
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_ioctl_amdgpu(&b->adev.ddev, &args, fb),
			-EPERM);
	KUNIT_EXPECT_EQ(test, vehicle_bo(test, fb, gb)->tbo.pin_count, 0);
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
	struct drm_amdgpu_ualink args = {};
	struct drm_amdgpu_gem_op op = {};
	struct drm_amdgpu_ualink_handle h;
	struct drm_file *fa, *fb;
	struct fake_node *a, *b;
	struct file *f1, *f2;
	struct drm_device *drm;
	struct amdgpu_bo *imp;
	u32 ga, gb, again;
	void *ptr;
	int fd;

	vehicle_exported(test, &a, &b, &fa, &fb, &ga, &gb, &h);
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

	/*
	 * PRIME's rules for the import's GEM handles, through amdgpu's own
	 * ioctl and PRIME import: a second batch gives the handle B has, and
	 * so does a PRIME import of the import op's fd, before any PRIME
	 * export of the handle (which would make PRIME remember it anyway)
	 */
	KUNIT_EXPECT_EQ(test, vehicle_import(test, fb, h, &again), 0);
	KUNIT_EXPECT_EQ(test, again, gb);
	args.op = AMDGPU_UALINK_OP_IMPORT;
	args.u.imp.handle = h;
	args.u.imp.flags = AMDGPU_UALINK_IMPORT_CLOEXEC;
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_ioctl_amdgpu(drm, &args, fb), 0);
	KUNIT_EXPECT_EQ(test, drm_gem_prime_fd_to_handle(drm, fb, args.u.imp.fd,
							 &again), 0);
	KUNIT_EXPECT_EQ(test, again, gb);
	KUNIT_EXPECT_EQ(test, close_fd(args.u.imp.fd), 0);
	memset(&args, 0, sizeof(args));

	/* PRIME: the import's own dma-buf, and the same handle back */
	KUNIT_ASSERT_EQ(test, drm_gem_prime_handle_to_fd(drm, fb, gb, DRM_CLOEXEC |
							 DRM_RDWR, &fd), 0);
	KUNIT_EXPECT_EQ(test, drm_gem_prime_fd_to_handle(drm, fb, fd, &again), 0);
	KUNIT_EXPECT_EQ(test, again, gb);
	/* not into A: another device has no way to its fabric port */
	KUNIT_EXPECT_EQ(test, drm_gem_prime_fd_to_handle(&a->adev.ddev, fa, fd,
							 &again), -EXDEV);
	/* the handle imported again while that dma-buf lives: it, no lock */
	args.op = AMDGPU_UALINK_OP_IMPORT;
	args.u.imp.handle = h;
	args.u.imp.flags = AMDGPU_UALINK_IMPORT_CLOEXEC;
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_ioctl_amdgpu(drm, &args, fb), 0);
	f1 = fget(fd);
	f2 = fget(args.u.imp.fd);
	KUNIT_EXPECT_NOT_NULL(test, f2);
	KUNIT_EXPECT_PTR_EQ(test, f1, f2);
	if (f1)
		fput(f1);
	if (f2)
		fput(f2);
	KUNIT_EXPECT_EQ(test, close_fd(args.u.imp.fd), 0);
	KUNIT_EXPECT_EQ(test, close_fd(fd), 0);
}

/*
 * The entry GPUVM's walk uses for @va in @vm: from the root down through
 * the page directories to the first entry that is a PTE (one of a page
 * table, or a huge one of a directory, marked AMDGPU_PDE_PTE), with its
 * level. Tables are read where the CPU update wrote them (the aperture).
 * Returns false when a table is missing or outside the part of the fake
 * VRAM that holds memory. Not a KUnit check: the deny probe below runs it
 * on the exporter's mailbox worker.
 */
static bool vehicle_walk_raw(struct amdgpu_device *adev, struct amdgpu_vm *vm,
			     u64 va, unsigned int *level, u64 *entry)
{
	struct amdgpu_bo *bo = vm->root.bo;
	unsigned int l, shift, idx;
	u64 *table, e;

	for (l = adev->vm_manager.root_level; ; l++) {
		shift = l == AMDGPU_VM_PTB ? 0 :
			9 * (AMDGPU_VM_PDB0 - l) + adev->vm_manager.block_size;
		idx = (va >> AMDGPU_GPU_PAGE_SHIFT >> shift) & 511;
		table = amdgpu_bo_kptr(bo);
		if (!table || amdgpu_bo_gpu_offset_no_check(bo) -
		    adev->gmc.vram_start < (u64)VEHICLE_VRAM - VEHICLE_VRAM_HELD)
			return false;
		e = READ_ONCE(table[idx]);
		*level = l;
		*entry = e;
		if (l == AMDGPU_VM_PTB || (e & AMDGPU_PDE_PTE) ||
		    !(e & AMDGPU_PTE_VALID))
			return true;
		bo = to_amdgpu_bo_vm(bo)->entries[idx].bo;
		if (!bo)
			return false;
	}
}

static u64 vehicle_walk(struct kunit *test, struct amdgpu_device *adev,
			struct amdgpu_vm *vm, u64 va, unsigned int *level)
{
	u64 e = 0;

	KUNIT_ASSERT_TRUE_MSG(test, vehicle_walk_raw(adev, vm, va, level, &e),
			      "GPUVM walk of %#llx", va);
	return e;
}

/*
 * What the importer's GPUVM maps at @va when its exporter denies it, that
 * is after the importer sent NPA_RELEASE: from then on the exporter may
 * give the range to another export.
 */
struct vehicle_deny_probe {
	struct fake_node *importer;
	struct amdgpu_vm *vm;
	u64 va;
	atomic_t denies;	/* of the importer */
	atomic_t valid;		/* of those, with a valid entry at @va */
	atomic_t unwalked;	/* of those, with a walk that failed */
	atomic_t flushes;	/* the importer's TLB flushes at the last */
};

static void vehicle_deny_probe(struct fake_node *self, u16 importer)
{
	struct vehicle_deny_probe *p = self->on_deny_data;
	unsigned int level;
	u64 e;

	if (importer != p->importer->id)
		return;
	atomic_set(&p->flushes, atomic_read(&p->importer->tlb_flushes));
	atomic_inc(&p->denies);
	if (!vehicle_walk_raw(&p->importer->adev, p->vm, p->va, &level, &e))
		atomic_inc(&p->unwalked);
	else if (e & AMDGPU_PTE_VALID)
		atomic_inc(&p->valid);
}

/* Look at @va from now on, with the counts at zero. */
static void vehicle_probe_reset(struct vehicle_deny_probe *p, u64 va)
{
	p->va = va;
	atomic_set(&p->denies, 0);
	atomic_set(&p->valid, 0);
	atomic_set(&p->unwalked, 0);
}

/* Until @count reaches @n. */
static void vehicle_wait_count(struct kunit *test, atomic_t *count, int n)
{
	unsigned long end = jiffies + 10 * HZ;

	while (atomic_read(count) < n && time_before(jiffies, end))
		usleep_range(5000, 10000);
	KUNIT_EXPECT_EQ(test, atomic_read(count), n);
}

/* Until the exporter denied the importer @n times since the probe was reset. */
static void vehicle_wait_denied(struct kunit *test, struct vehicle_deny_probe *p,
				int n)
{
	vehicle_wait_count(test, &p->denies, n);
}

static void vehicle_deny_probe_off(void *data)
{
	struct fake_node *a = data;

	WRITE_ONCE(a->on_deny, NULL);
	amdgpu_ualink_dev_flush(&a->adev.ualink->udev);
}

/* @exporter's look at @importer's @vm when it denies it, until the test ends. */
static struct vehicle_deny_probe *vehicle_deny_probe_on(struct kunit *test,
							struct fake_node *exporter,
							struct fake_node *importer,
							struct amdgpu_vm *vm)
{
	/* the test's memory: the probe outlives the caller */
	struct vehicle_deny_probe *probe = kunit_kzalloc(test, sizeof(*probe),
							 GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, probe);
	probe->importer = importer;
	probe->vm = vm;
	exporter->on_deny_data = probe;
	WRITE_ONCE(exporter->on_deny, vehicle_deny_probe);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							vehicle_deny_probe_off,
							exporter), 0);
	return probe;
}

struct vehicle_gpuvm_case {
	u16 exporter;
	bool reachable;	/* by the fake IP's GPUVM addresses */
};

static const struct vehicle_gpuvm_case vehicle_gpuvm_cases[] = {
	{ 0, true }, { 127, true }, { 128, false }, { 1023, false },
};

static void vehicle_gpuvm_desc(const struct vehicle_gpuvm_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "exporter %u", c->exporter);
}

KUNIT_ARRAY_PARAM(vehicle_gpuvm, vehicle_gpuvm_cases, vehicle_gpuvm_desc);

/* Map @handle of @file at @va, @size, readable and writeable. */
static void vehicle_va_map(struct kunit *test, struct fake_node *node,
			   struct drm_file *file, u32 handle, u64 va, u64 size)
{
	struct drm_amdgpu_gem_va args = {
		.handle = handle,
		.operation = AMDGPU_VA_OP_MAP,
		.flags = AMDGPU_VM_PAGE_READABLE | AMDGPU_VM_PAGE_WRITEABLE,
		.va_address = va,
		.map_size = size,
	};

	KUNIT_EXPECT_EQ(test, amdgpu_gem_va_ioctl(&node->adev.ddev, &args,
						  file), 0);
}

/*
 * GPUVM maps imports the way Mesa and ROCm map buffers, with amdgpu's VA
 * ioctl on a CPU-updated VM: 4 KiB, 2 MiB and 1 GiB mappings, each aligned
 * as its size, so that the last two are huge entries in page directories.
 * Every entry carries the address the IP gives for the NPA, never a
 * masked one, or the import is refused with -ERANGE when the IP cannot
 * reach the exporter (an NPA of an accelerator from 128 on sets bits 48
 * to 50, above GFX9's address field).
 *
 * Revocation takes the import out of every VM of the importing device
 * before the exporter hears NPA_RELEASE: when the exporter denies the
 * importer (which it does on that message), the importer's entry is
 * already invalid, with nothing in the test running GPUVM's update for
 * it. The exporter then gives the range to its next export, which the
 * same importer maps elsewhere: the new mapping reaches the range, the
 * revoked one does not.
 */
static void ualink_vehicle_gpuvm(struct kunit *test)
{
	static const struct {
		u64 size;
		u64 va;
		unsigned int level;
	} maps[] = {
		{ SZ_4K, 0x100003000ULL, AMDGPU_VM_PTB },
		{ SZ_2M, 0x200000000ULL, AMDGPU_VM_PDB0 },
		{ SZ_1G, 0x400000000ULL, AMDGPU_VM_PDB1 },
	};
	/* where the range's next exports are mapped, 1 GiB apart */
	const u64 va_next = 0x1000000000ULL;
	const struct vehicle_gpuvm_case *c = test->param_value;
	struct vehicle_deny_probe *probe;
	struct drm_amdgpu_ualink_handle h;
	struct drm_file *fa, *fb;
	struct fake_node *a, *b;
	struct amdgpu_fpriv *fpriv;
	struct amdgpu_bo *imp;
	unsigned int i, level;
	u32 ga, gb, ga2, gb2;
	int ret, denies;
	u64 npa, e;

	vehicle_pair_ids(test, &a, &b, c->exporter, 5);
	fa = vehicle_open(test, a);
	fb = vehicle_open(test, b);
	fpriv = fb->driver_priv;
	probe = vehicle_deny_probe_on(test, a, b, &fpriv->vm);
	for (i = 0; i < ARRAY_SIZE(maps); i++) {
		ga = vehicle_gem_create(test, fa, maps[i].size,
					AMDGPU_GEM_DOMAIN_VRAM,
					AMDGPU_GEM_CREATE_NO_CPU_ACCESS);
		h = vehicle_export(test, fa, ga);
		if (c->reachable && !i) {
			/*
			 * B's IP gives a bit outside its mask: refused, the
			 * grant given back (A denies B), then imported
			 */
			denies = atomic_read(&a->denies);
			WRITE_ONCE(b->gpuvm_pte_extra, AMDGPU_PTE_SYSTEM);
			KUNIT_EXPECT_EQ(test, vehicle_import(test, fb, h, &gb),
					-ERANGE);
			WRITE_ONCE(b->gpuvm_pte_extra, 0);
			vehicle_wait_count(test, &a->denies, denies + 1);
		}
		denies = atomic_read(&a->denies);
		ret = vehicle_import(test, fb, h, &gb);
		if (!c->reachable) {
			/* refused, and the grant A made given back */
			KUNIT_EXPECT_EQ(test, ret, -ERANGE);
			vehicle_wait_count(test, &a->denies, denies + 1);
			continue;
		}
		KUNIT_ASSERT_EQ(test, ret, 0);
		imp = vehicle_bo(test, fb, gb);
		npa = amdgpu_bo_gpu_offset_no_check(imp);
		KUNIT_EXPECT_TRUE(test, IS_ALIGNED(npa, maps[i].size));

		vehicle_va_map(test, b, fb, gb, maps[i].va, maps[i].size);
		e = vehicle_walk(test, &b->adev, &fpriv->vm, maps[i].va, &level);
		kunit_info(test, "%llu KiB at %#llx: level %u entry %#llx, NPA %#llx\n",
			   maps[i].size >> 10, maps[i].va, level, e, npa);
		KUNIT_EXPECT_EQ(test, level, maps[i].level);
		KUNIT_EXPECT_TRUE(test, e & AMDGPU_PTE_VALID);
		KUNIT_EXPECT_TRUE(test, e & AMDGPU_PTE_READABLE);
		KUNIT_EXPECT_TRUE(test, e & AMDGPU_PTE_WRITEABLE);
		/* the IP's address and bits, not the NPA and the GMC's */
		KUNIT_EXPECT_EQ(test, e & 0x0000fffffffff000ULL,
				npa + FAKE_GPUVM_OFFSET);
		KUNIT_EXPECT_EQ(test, e & FAKE_GPUVM_MASK, FAKE_GPUVM_PTE);

		/* A's buffer goes: B's import is revoked, and so its entry */
		vehicle_probe_reset(probe, maps[i].va);
		KUNIT_EXPECT_EQ(test, vehicle_close(fa, ga), 0);
		vehicle_wait_denied(test, probe, 1);
		KUNIT_EXPECT_EQ(test, imp->tbo.resource->mem_type, AMDGPU_PL_NPA);
		KUNIT_EXPECT_EQ(test, amdgpu_ualink_npa_res_npa(imp->tbo.resource), 0);
		KUNIT_EXPECT_EQ(test, atomic_read(&probe->unwalked), 0);
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&probe->valid), 0,
				    "B's GPUVM still mapped the range when A heard NPA_RELEASE");
		e = vehicle_walk(test, &b->adev, &fpriv->vm, maps[i].va, &level);
		KUNIT_EXPECT_FALSE(test, e & AMDGPU_PTE_VALID);

		/* the range goes to A's next export, which B maps elsewhere */
		ga2 = vehicle_gem_create(test, fa, maps[i].size,
					 AMDGPU_GEM_DOMAIN_VRAM,
					 AMDGPU_GEM_CREATE_NO_CPU_ACCESS);
		KUNIT_ASSERT_EQ(test, vehicle_import(test, fb,
						     vehicle_export(test, fa, ga2),
						     &gb2), 0);
		KUNIT_ASSERT_EQ_MSG(test,
				    amdgpu_bo_gpu_offset_no_check(vehicle_bo(test, fb, gb2)),
				    npa, "the next export got another range");
		vehicle_va_map(test, b, fb, gb2, va_next + (u64)i * SZ_1G,
			       maps[i].size);
		e = vehicle_walk(test, &b->adev, &fpriv->vm,
				 va_next + (u64)i * SZ_1G, &level);
		KUNIT_EXPECT_TRUE(test, e & AMDGPU_PTE_VALID);
		KUNIT_EXPECT_EQ(test, e & 0x0000fffffffff000ULL,
				npa + FAKE_GPUVM_OFFSET);
		e = vehicle_walk(test, &b->adev, &fpriv->vm, maps[i].va, &level);
		KUNIT_EXPECT_FALSE(test, e & AMDGPU_PTE_VALID);

		/* and goes too, so that the next size starts from an empty window */
		vehicle_probe_reset(probe, va_next + (u64)i * SZ_1G);
		KUNIT_EXPECT_EQ(test, vehicle_close(fa, ga2), 0);
		vehicle_wait_denied(test, probe, 1);
		KUNIT_EXPECT_EQ(test, atomic_read(&probe->unwalked), 0);
		KUNIT_EXPECT_EQ(test, atomic_read(&probe->valid), 0);
		e = vehicle_walk(test, &b->adev, &fpriv->vm, probe->va, &level);
		KUNIT_EXPECT_FALSE(test, e & AMDGPU_PTE_VALID);
	}
}

#if IS_ENABLED(CONFIG_HSA_AMD)
/* A KFD process, as far as amdgpu's KFD functions look at it. */
struct vehicle_kfd {
	struct amdgpu_device *adev;
	struct kfd_process *p;
	struct drm_file *render;	/* the process's render node file */
	struct kgd_mem *mem[2];
	bool mapped[2];
};

/* What the process still holds when the test ends, as KFD frees it. */
static void vehicle_kfd_fini(void *data)
{
	struct vehicle_kfd *k = data;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(k->mem); i++) {
		if (!k->mem[i])
			continue;
		if (k->mapped[i])
			amdgpu_amdkfd_gpuvm_unmap_memory_from_gpu(k->adev, k->mem[i],
								  k->render);
		amdgpu_amdkfd_gpuvm_free_memory_of_gpu(k->adev, k->mem[i],
						       k->render, NULL);
	}
	flush_delayed_fput();
	dma_fence_put(rcu_dereference_protected(k->p->ef, true));
	/* KFD's DRM client goes with the device */
	k->adev->kfd.client.file = NULL;
}

/*
 * @node's KFD process, with @render's VM its compute VM, as KFD acquires
 * it when the process opens the render node through KFD (kfd_process.c),
 * and KFD's DRM client, whose file holds the GEM handles of what KFD
 * imports. That client is a drm_client of a modesetting device, which the
 * vehicle is not: another file of the device stands in for its file.
 */
static struct vehicle_kfd *vehicle_kfd(struct kunit *test,
				       struct fake_node *node,
				       struct drm_file *render)
{
	struct amdgpu_fpriv *fpriv = render->driver_priv;
	struct vehicle_kfd *k = kunit_kzalloc(test, sizeof(*k), GFP_KERNEL);
	struct dma_fence *ef = NULL;

	KUNIT_ASSERT_NOT_NULL(test, k);
	k->p = kunit_kzalloc(test, sizeof(*k->p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, k->p);
	/* the eviction fence holds the process's mm: the test's */
	vehicle_user_page(test);
	k->adev = &node->adev;
	k->render = render;
	k->adev->kfd.client.file = vehicle_open(test, node);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, vehicle_kfd_fini,
							k), 0);
	KUNIT_ASSERT_EQ(test, amdgpu_amdkfd_gpuvm_acquire_process_vm(k->adev,
								     &fpriv->vm,
								     &k->p->kgd_process_info,
								     &ef), 0);
	RCU_INIT_POINTER(k->p->ef, ef);
	KUNIT_EXPECT_TRUE(test, fpriv->vm.is_compute_context);
	return k;
}

/*
 * KFD_IOC_IMPORT_DMABUF and KFD_IOC_MAP_MEMORY_TO_GPU of @fd at @va, and
 * the wait ROCr makes after the map.
 */
static void vehicle_kfd_import_map(struct kunit *test, struct vehicle_kfd *k,
				   unsigned int i, int fd, u64 va)
{
	struct kgd_mem *mem;
	u64 size = 0, offset;

	/* KFD leaves @mem pointing at what it freed when the import fails */
	KUNIT_ASSERT_EQ(test, amdgpu_amdkfd_gpuvm_import_dmabuf_fd(k->adev, fd,
								   va, k->render,
								   &mem, &size,
								   &offset), 0);
	k->mem[i] = mem;
	KUNIT_EXPECT_EQ(test, size, SZ_2M);
	KUNIT_ASSERT_EQ(test, amdgpu_amdkfd_gpuvm_map_memory_to_gpu(k->adev,
								    k->mem[i],
								    k->render), 0);
	k->mapped[i] = true;
	KUNIT_EXPECT_EQ(test, amdgpu_amdkfd_gpuvm_sync_memory(k->adev, k->mem[i],
							      false), 0);
}

/* A file descriptor of the test's, closed when the test ends if not before. */
static void vehicle_fd_close(void *data)
{
	int *fd = data;

	if (*fd < 0)
		return;
	close_fd(*fd);
	*fd = -1;
	flush_delayed_fput();
}

/* The UALink import op: @file's import of @h, as a dma-buf fd. */
static int *vehicle_import_fd(struct kunit *test, struct fake_node *node,
			      struct drm_file *file,
			      struct drm_amdgpu_ualink_handle h)
{
	struct drm_amdgpu_ualink args = {
		.op = AMDGPU_UALINK_OP_IMPORT,
		.u.imp.handle = h,
		.u.imp.flags = AMDGPU_UALINK_IMPORT_CLOEXEC,
	};
	int *fd = kunit_kzalloc(test, sizeof(*fd), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, fd);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_ioctl_amdgpu(&node->adev.ddev,
							 &args, file), 0);
	*fd = args.u.imp.fd;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, vehicle_fd_close,
							fd), 0);
	return fd;
}

/*
 * ROCm's path to an import, run by amdgpu's KFD functions on a KFD
 * process of B whose compute VM is B's render file's. ROCr takes the
 * import's dma-buf fd from the UALink import op, asks KFD what it is
 * (AMDKFD_IOC_GET_DMABUF_INFO), imports it (AMDKFD_IOC_IMPORT_DMABUF) and
 * maps it (AMDKFD_IOC_MAP_MEMORY_TO_GPU): KFD reports B's VRAM, never
 * CPU-visible, and the entry is the IP's, as for a render-node mapping.
 * A compute VM of the same process on A, the exporter, cannot map it.
 *
 * A's buffer goes: the revocation takes the import out of the compute
 * VM, flushing its TLB (a compute VM's update fence is a TLB flush), and
 * asks KFD to evict the process (its eviction fence is on the buffer)
 * before A hears NPA_RELEASE. KFD's restore after an eviction then
 * validates and maps the process's buffers again: a live import is
 * mapped, the revoked one stays unmapped and in its dead resource.
 */
static void ualink_vehicle_kfd(struct kunit *test)
{
	const u64 va = 0x2000000000ULL, va_live = 0x2040000000ULL;
	struct drm_amdgpu_ualink_handle h, h_live;
	struct amdgpu_device *dmabuf_adev = NULL;
	struct vehicle_deny_probe *probe;
	struct drm_file *fa, *fb, *other;
	struct fake_node *a, *b;
	struct amdgpu_fpriv *fpriv, *fpriv_a;
	struct dma_fence *ef;
	struct vehicle_kfd *k;
	u32 ga, ga_live, flags = 0, level;
	int *fd, *fd_live, flushes;
	struct amdgpu_bo *imp;
	u64 size = 0, e;
	s8 xcp_id;

	vehicle_pair(test, &a, &b);
	fa = vehicle_open(test, a);
	fb = vehicle_open(test, b);
	fpriv = fb->driver_priv;
	k = vehicle_kfd(test, b, fb);
	probe = vehicle_deny_probe_on(test, a, b, &fpriv->vm);

	ga = vehicle_gem_create(test, fa, SZ_2M, AMDGPU_GEM_DOMAIN_VRAM,
				AMDGPU_GEM_CREATE_NO_CPU_ACCESS);
	h = vehicle_export(test, fa, ga);
	ga_live = vehicle_gem_create(test, fa, SZ_2M, AMDGPU_GEM_DOMAIN_VRAM,
				     AMDGPU_GEM_CREATE_NO_CPU_ACCESS);
	h_live = vehicle_export(test, fa, ga_live);
	fd = vehicle_import_fd(test, b, fb, h);
	fd_live = vehicle_import_fd(test, b, fb, h_live);

	/* GET_DMABUF_INFO: B's device memory, which no CPU reaches */
	KUNIT_ASSERT_EQ(test, amdgpu_amdkfd_get_dmabuf_info(&a->adev, *fd,
							    &dmabuf_adev, &size,
							    NULL, 0, NULL,
							    &flags, &xcp_id), 0);
	KUNIT_EXPECT_PTR_EQ(test, dmabuf_adev, &b->adev);
	KUNIT_EXPECT_EQ(test, size, SZ_2M);
	KUNIT_EXPECT_EQ(test, flags, KFD_IOC_ALLOC_MEM_FLAGS_VRAM);
	/* without partitions, KFD names the GPU by its node 0 */
	KUNIT_EXPECT_EQ(test, xcp_id, 0);

	vehicle_kfd_import_map(test, k, 0, *fd, va);
	vehicle_kfd_import_map(test, k, 1, *fd_live, va_live);
	/* ROCr may close them: KFD holds the imports */
	vehicle_fd_close(fd);
	vehicle_fd_close(fd_live);

	/*
	 * A process with both GPUs: only B, the importer, reaches the
	 * memory; KFD's map into A's compute VM attaches the dma-buf to A,
	 * which the core refuses
	 */
	other = vehicle_open(test, a);
	fpriv_a = other->driver_priv;
	KUNIT_ASSERT_EQ(test, amdgpu_amdkfd_gpuvm_acquire_process_vm(&a->adev,
								     &fpriv_a->vm,
								     &k->p->kgd_process_info,
								     NULL), 0);
	KUNIT_EXPECT_EQ(test, amdgpu_amdkfd_gpuvm_map_memory_to_gpu(&a->adev,
								    k->mem[0],
								    other),
			-EXDEV);
	imp = k->mem[0]->bo;
	KUNIT_EXPECT_EQ(test, imp->tbo.resource->mem_type, AMDGPU_PL_NPA);
	e = vehicle_walk(test, &b->adev, &fpriv->vm, va, &level);
	KUNIT_EXPECT_TRUE(test, e & AMDGPU_PTE_VALID);
	KUNIT_EXPECT_TRUE(test, e & AMDGPU_PTE_WRITEABLE);
	KUNIT_EXPECT_EQ(test, e & 0x0000fffffffff000ULL,
			amdgpu_bo_gpu_offset_no_check(imp) + FAKE_GPUVM_OFFSET);
	KUNIT_EXPECT_EQ(test, e & FAKE_GPUVM_MASK, FAKE_GPUVM_PTE);
	ef = rcu_dereference_protected(k->p->ef, true);
	KUNIT_EXPECT_FALSE(test, dma_fence_is_signaled(ef));

	/* A's buffer goes: out of the compute VM before A hears of it */
	flushes = atomic_read(&b->tlb_flushes);
	vehicle_probe_reset(probe, va);
	KUNIT_EXPECT_EQ(test, vehicle_close(fa, ga), 0);
	vehicle_wait_denied(test, probe, 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&probe->unwalked), 0);
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&probe->valid), 0,
			    "B's compute VM still mapped the range when A heard NPA_RELEASE");
	KUNIT_EXPECT_GT_MSG(test, atomic_read(&probe->flushes), flushes,
			    "no TLB flush of the compute VM before NPA_RELEASE");
	KUNIT_EXPECT_TRUE_MSG(test, dma_fence_is_signaled(ef),
			      "KFD was not asked to evict the process");

	/* KFD's restore: the live import mapped, the revoked one not */
	KUNIT_EXPECT_EQ(test, amdgpu_amdkfd_gpuvm_restore_process_bos(k->p->kgd_process_info,
								      &k->p->ef), 0);
	KUNIT_EXPECT_EQ(test, imp->tbo.resource->mem_type, AMDGPU_PL_NPA);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_npa_res_npa(imp->tbo.resource), 0);
	e = vehicle_walk(test, &b->adev, &fpriv->vm, va, &level);
	KUNIT_EXPECT_FALSE(test, e & AMDGPU_PTE_VALID);
	e = vehicle_walk(test, &b->adev, &fpriv->vm, va_live, &level);
	KUNIT_EXPECT_TRUE(test, e & AMDGPU_PTE_VALID);
	KUNIT_EXPECT_EQ(test, e & 0x0000fffffffff000ULL,
			amdgpu_bo_gpu_offset_no_check(k->mem[1]->bo) +
			FAKE_GPUVM_OFFSET);
	KUNIT_EXPECT_FALSE(test, dma_fence_is_signaled(rcu_dereference_protected(k->p->ef,
										 true)));
}
#endif

/* GPU work on a buffer: a fence that signals a while after it is armed. */
struct vehicle_job {
	struct dma_fence base;
	spinlock_t lock;	/* the fence's */
	struct delayed_work done;
};

static const char *vehicle_job_name(struct dma_fence *f)
{
	return "ualink-vehicle";
}

static const struct dma_fence_ops vehicle_job_ops = {
	.get_driver_name = vehicle_job_name,
	.get_timeline_name = vehicle_job_name,
};

static void vehicle_job_done(struct work_struct *work)
{
	struct vehicle_job *job = container_of(work, struct vehicle_job, done.work);

	dma_fence_signal(&job->base);
}

static void vehicle_job_put(void *data)
{
	struct vehicle_job *job = data;

	cancel_delayed_work_sync(&job->done);
	dma_fence_signal(&job->base);
	dma_fence_put(&job->base);
}

/* A job of @ms on @bo, as a submission would leave its fence. */
static struct vehicle_job *vehicle_job(struct kunit *test, struct amdgpu_bo *bo,
				       unsigned int ms)
{
	struct vehicle_job *job = kzalloc_obj(*job, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, job);
	spin_lock_init(&job->lock);
	dma_fence_init(&job->base, &vehicle_job_ops, &job->lock,
		       dma_fence_context_alloc(1), 1);
	INIT_DELAYED_WORK(&job->done, vehicle_job_done);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, vehicle_job_put,
							job), 0);
	KUNIT_ASSERT_EQ(test, amdgpu_bo_reserve(bo, false), 0);
	KUNIT_ASSERT_EQ(test, dma_resv_reserve_fences(bo->tbo.base.resv, 1), 0);
	dma_resv_add_fence(bo->tbo.base.resv, &job->base, DMA_RESV_USAGE_BOOKKEEP);
	amdgpu_bo_unreserve(bo);
	schedule_delayed_work(&job->done, msecs_to_jiffies(ms));
	return job;
}

/*
 * Suspend while GPU work runs on an import: leaving the pod revokes the
 * import at once, without waiting for that work (its exporter is gone for
 * us: nothing is released). Then a GPU reset, whose path is a dma-fence
 * signalling section (the reset is what ends hung work): had leaving the
 * pod waited for the work, or taken a reservation, under a lock the reset
 * takes (the glue's state lock), lockdep would report the deadlock a hung
 * job makes of it, and the guest run fails on the report.
 */
static void ualink_vehicle_suspend_reset_locks(struct kunit *test)
{
	struct drm_file *fa, *fb;
	struct fake_node *a, *b;
	struct amdgpu_bo *imp;
	bool cookie;
	u32 gb;

	gb = vehicle_imported(test, &a, &b, &fa, &fb);
	imp = vehicle_bo(test, fb, gb);

	vehicle_job(test, imp, 60 * MSEC_PER_SEC);
	amdgpu_ualink_suspend(&b->adev);
	KUNIT_EXPECT_FALSE(test, dma_resv_test_signaled(imp->tbo.base.resv,
							DMA_RESV_USAGE_BOOKKEEP));
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_npa_res_npa(imp->tbo.resource), 0);

	cookie = dma_fence_begin_signalling();
	amdgpu_ualink_pre_reset(&b->adev);
	fake_ip(b)->suspend(&b->adev.ip_blocks[0]);
	fake_ip(b)->resume(&b->adev.ip_blocks[0]);
	amdgpu_ualink_post_reset(&b->adev);
	dma_fence_end_signalling(cookie);
	flush_work(&b->adev.ualink->leave_work);
	flush_work(&b->adev.ualink->repin_work);
	/* suspended, B takes part again only once its resume pinned exports */
	KUNIT_EXPECT_EQ(test, b->adev.ualink->state, AMDGPU_UALINK_STATE_OFFLINE);
	amdgpu_ualink_resume(&b->adev);
	KUNIT_EXPECT_EQ(test, b->adev.ualink->state, AMDGPU_UALINK_STATE_ACTIVE);
}

/*
 * While A resets it refuses importers: a handle of A's that imports before
 * and after the reset fails during it, once the reset brought A's IP back
 * up, with -ENOENT, A's answer to anyone it does not grant; before that
 * A's mailbox is quiet, and an import would time out. (The glue suite's
 * "A refuses" can only use an unknown handle, whose answer is the same.)
 */
static void ualink_vehicle_reset_refuses(struct kunit *test)
{
	struct drm_amdgpu_ualink_handle h;
	struct drm_file *fa, *fb;
	struct fake_node *a, *b;
	u32 ga, gb, again;

	vehicle_exported(test, &a, &b, &fa, &fb, &ga, &gb, &h);
	/* B lets go, so that its next import asks A */
	KUNIT_EXPECT_EQ(test, vehicle_close(fb, gb), 0);
	flush_workqueue(b->adev.mman.bdev.wq);
	amdgpu_ualink_dev_flush(&b->adev.ualink->udev);
	amdgpu_ualink_dev_flush(&a->adev.ualink->udev);

	/* as amdgpu_device_gpu_recover() does: the IP blocks go down and up */
	amdgpu_ualink_pre_reset(&a->adev);
	KUNIT_EXPECT_EQ(test, fake_ip(a)->suspend(&a->adev.ip_blocks[0]), 0);
	KUNIT_EXPECT_EQ(test, fake_ip(a)->resume(&a->adev.ip_blocks[0]), 0);
	KUNIT_EXPECT_EQ(test, vehicle_import(test, fb, h, &again), -ENOENT);
	amdgpu_ualink_post_reset(&a->adev);
	flush_work(&a->adev.ualink->leave_work);
	KUNIT_EXPECT_EQ(test, a->adev.ualink->state, AMDGPU_UALINK_STATE_ACTIVE);
	/* the export outlived the reset: the same handle imports again */
	KUNIT_ASSERT_EQ(test, vehicle_import(test, fb, h, &again), 0);
	KUNIT_EXPECT_EQ(test, vehicle_close(fb, again), 0);
	flush_workqueue(b->adev.mman.bdev.wq);
	amdgpu_ualink_dev_flush(&b->adev.ualink->udev);
	amdgpu_ualink_dev_flush(&a->adev.ualink->udev);
}

/*
 * Revocation allocates nothing, so it cannot fail: the move of an idle
 * import to its dead resource runs in a dma-fence signalling section,
 * where lockdep reports any allocation that may recurse into reclaim
 * (ttm_bo_validate() allocates a resource and may allocate a fence slot).
 */
static void ualink_vehicle_revoke_allocates_nothing(struct kunit *test)
{
	struct drm_file *fa, *fb;
	struct fake_node *a, *b;
	struct amdgpu_bo *imp;
	bool cookie;
	u32 gb;

	gb = vehicle_imported(test, &a, &b, &fa, &fb);
	imp = vehicle_bo(test, fb, gb);
	KUNIT_ASSERT_NE(test, amdgpu_ualink_npa_res_npa(imp->tbo.resource), 0);

	KUNIT_ASSERT_EQ(test, amdgpu_bo_reserve(imp, true), 0);
	cookie = dma_fence_begin_signalling();
	amdgpu_ualink_revoke_locked(b->adev.ualink, imp);
	dma_fence_end_signalling(cookie);
	KUNIT_EXPECT_EQ(test, imp->tbo.resource->mem_type, AMDGPU_PL_NPA);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_npa_res_npa(imp->tbo.resource), 0);
	KUNIT_EXPECT_NULL(test, imp->ualink->dead);
	/* again: nothing left to do, nothing set aside needed */
	amdgpu_ualink_revoke_locked(b->adev.ualink, imp);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_npa_res_npa(imp->tbo.resource), 0);
	amdgpu_bo_unreserve(imp);
}

/* Poll, as the core revokes on its workqueue. */
static void vehicle_wait_dead(struct kunit *test, struct amdgpu_bo *imp)
{
	unsigned long end = jiffies + 10 * HZ;

	while (amdgpu_ualink_npa_res_npa(READ_ONCE(imp->tbo.resource)) &&
	       time_before(jiffies, end))
		usleep_range(5000, 10000);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_npa_res_npa(imp->tbo.resource), 0);
}

/* Until @a received the answer to its NPA_REVOKE. */
static void vehicle_wait_answered(struct kunit *test, struct fake_node *a)
{
	struct amdgpu_ualink_mbox_stats st;
	unsigned long end = jiffies + 10 * HZ;

	do {
		amdgpu_ualink_mbox_get_stats(a->adev.ualink->udev.mbox, -1, &st);
		if (st.received[AMDGPU_UALINK_MSG_NPA_RELEASE])
			break;
		usleep_range(5000, 10000);
	} while (time_before(jiffies, end));
	KUNIT_EXPECT_GE(test, st.received[AMDGPU_UALINK_MSG_NPA_RELEASE], 1);
}

/*
 * The last GEM handle of an export goes where nothing may wait for another
 * accelerator (framebuffer teardown drops handles too): the handle stops
 * resolving at once, the revocation runs later on the core's workqueue.
 * The importer's buffer dies at once, without waiting for its GPU work,
 * but the exporter keeps its buffer pinned until that work is done and
 * the importer's release came.
 */
static void ualink_vehicle_export_ends_later(struct kunit *test)
{
	struct drm_amdgpu_ualink_handle h;
	struct drm_file *fa, *fb;
	struct fake_node *a, *b;
	struct amdgpu_bo *exp, *imp;
	struct vehicle_job *job;
	u32 ga, gb, g;

	exp = vehicle_exported(test, &a, &b, &fa, &fb, &ga, &gb, &h);
	imp = vehicle_bo(test, fb, gb);
	job = vehicle_job(test, imp, 60 * MSEC_PER_SEC);	/* till we say */
	KUNIT_EXPECT_EQ(test, exp->tbo.pin_count, 1);

	KUNIT_EXPECT_EQ(test, vehicle_close(fa, ga), 0);
	/* the handle is gone at once */
	KUNIT_EXPECT_EQ(test, a->adev.ualink->udev.num_exports, 0);
	KUNIT_EXPECT_EQ(test, vehicle_import(test, fa, h, &g), -ENOENT);
	/* B's buffer dies without waiting for its work */
	vehicle_wait_dead(test, imp);
	KUNIT_EXPECT_FALSE(test, dma_fence_is_signaled(&job->base));
	/* A heard B's "release later" and keeps the memory for B's work */
	vehicle_wait_answered(test, a);
	KUNIT_EXPECT_EQ(test, exp->tbo.pin_count, 1);

	mod_delayed_work(system_percpu_wq, &job->done, 0);
	amdgpu_ualink_dev_flush(&b->adev.ualink->udev);
	amdgpu_ualink_dev_flush(&a->adev.ualink->udev);
	KUNIT_EXPECT_TRUE(test, dma_fence_is_signaled(&job->base));
	KUNIT_EXPECT_EQ(test, exp->tbo.pin_count, 0);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_npa_res_npa(imp->tbo.resource), 0);
}

/*
 * An import's last handle went while GPU work still used it: TTM frees the
 * buffer once that work is done, and a revocation meanwhile waits for the
 * same work before the range goes back to the exporter, as it would for a
 * buffer with a handle. The anchor: once the work is done, it goes back.
 */
static void ualink_vehicle_revoke_delayed_destroy(struct kunit *test)
{
	struct amdgpu_ualink_mbox_stats st;
	struct drm_amdgpu_ualink_handle h;
	struct drm_file *fa, *fb;
	struct fake_node *a, *b;
	struct amdgpu_bo *exp, *imp;
	struct vehicle_job *job;
	unsigned long end;
	u32 ga, gb;

	exp = vehicle_exported(test, &a, &b, &fa, &fb, &ga, &gb, &h);
	imp = vehicle_bo(test, fb, gb);
	job = vehicle_job(test, imp, 60 * MSEC_PER_SEC);	/* till we say */
	/* B's last handle goes: the buffer lives on for the job */
	KUNIT_EXPECT_EQ(test, vehicle_close(fb, gb), 0);
	KUNIT_EXPECT_EQ(test, kref_read(&imp->tbo.base.refcount), 0);
	KUNIT_EXPECT_EQ(test, exp->tbo.pin_count, 1);

	/* A's last handle goes: B hears NPA_REVOKE and answers "later" */
	KUNIT_EXPECT_EQ(test, vehicle_close(fa, ga), 0);
	vehicle_wait_answered(test, a);
	/* for a second of the job: no release, A's memory stays pinned */
	end = jiffies + HZ;
	do {
		amdgpu_ualink_mbox_get_stats(a->adev.ualink->udev.mbox, -1, &st);
		if (st.received[AMDGPU_UALINK_MSG_NPA_RELEASE] > 1)
			break;
		usleep_range(5000, 10000);
	} while (time_before(jiffies, end));
	KUNIT_EXPECT_EQ(test, st.received[AMDGPU_UALINK_MSG_NPA_RELEASE], 1);
	KUNIT_EXPECT_EQ(test, exp->tbo.pin_count, 1);

	/* the job ends: the release comes, A unpins, TTM frees the buffer */
	mod_delayed_work(system_percpu_wq, &job->done, 0);
	flush_workqueue(b->adev.mman.bdev.wq);
	amdgpu_ualink_dev_flush(&b->adev.ualink->udev);
	amdgpu_ualink_dev_flush(&a->adev.ualink->udev);
	amdgpu_ualink_mbox_get_stats(a->adev.ualink->udev.mbox, -1, &st);
	KUNIT_EXPECT_EQ(test, st.received[AMDGPU_UALINK_MSG_NPA_RELEASE], 2);
	KUNIT_EXPECT_EQ(test, exp->tbo.pin_count, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&b->adev.ualink->udev.revoke_timeouts), 0);
}

/*
 * An export is made under the lock DRM drops a buffer's last handle under,
 * and only while the buffer has a handle: the glue's side of
 * ioctl_export_after_close in the core's suite.
 */
static void ualink_vehicle_export_needs_handle(struct kunit *test)
{
	struct fake_node *a, *b;
	struct amdgpu_bo *abo;
	struct drm_file *fa;
	bool live;
	u32 ga;

	vehicle_pair(test, &a, &b);
	fa = vehicle_open(test, a);
	ga = vehicle_gem_create(test, fa, SZ_2M, AMDGPU_GEM_DOMAIN_VRAM, 0);
	abo = vehicle_bo(test, fa, ga);
	drm_gem_object_get(&abo->tbo.base);

	live = amdgpu_ualink_gem_ops.lock_handles(a->adev.ualink, abo);
	KUNIT_EXPECT_TRUE(test, mutex_is_locked(&a->adev.ddev.object_name_lock));
	amdgpu_ualink_gem_ops.unlock_handles(a->adev.ualink, abo);
	KUNIT_EXPECT_TRUE(test, live);

	KUNIT_EXPECT_EQ(test, vehicle_close(fa, ga), 0);
	live = amdgpu_ualink_gem_ops.lock_handles(a->adev.ualink, abo);
	amdgpu_ualink_gem_ops.unlock_handles(a->adev.ualink, abo);
	KUNIT_EXPECT_FALSE(test, live);
	KUNIT_EXPECT_NULL(test, abo->ualink_export);
	drm_gem_object_put(&abo->tbo.base);
}

/*
 * A call of a client of the device on a thread of its own, which a signal
 * may interrupt: an export, or a GEM handle made and closed.
 */
struct vehicle_caller {
	struct fake_node *node;
	struct drm_file *file;
	u32 gem;	/* to export; 0: make and close a handle instead */
	int ret;
	struct completion done;
	struct task_struct *task;
};

static int vehicle_caller_fn(void *data)
{
	struct vehicle_caller *c = data;
	struct drm_amdgpu_ualink args = {
		.op = AMDGPU_UALINK_OP_EXPORT,
		.u.exp.gem_handle = c->gem,
	};
	u32 handle;

	allow_signal(SIGKILL);
	if (c->gem) {
		c->ret = amdgpu_ualink_ioctl_amdgpu(&c->node->adev.ddev, &args,
						    c->file);
	} else {
		c->ret = vehicle_gem_make(c->file, SZ_4K,
					  AMDGPU_GEM_DOMAIN_VRAM, 0, &handle);
		if (!c->ret)
			c->ret = drm_gem_handle_delete(c->file, handle);
	}
	complete_all(&c->done);	/* waited for more than once */
	return 0;
}

/* Waits for the call however long it takes: the test ends no earlier. */
static void vehicle_caller_end(void *data)
{
	struct vehicle_caller *c = data;

	wait_for_completion(&c->done);
	put_task_struct(c->task);
}

static struct vehicle_caller *vehicle_call(struct kunit *test,
					   struct fake_node *node,
					   struct drm_file *file, u32 gem)
{
	struct vehicle_caller *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	struct task_struct *t;

	KUNIT_ASSERT_NOT_NULL(test, c);
	c->node = node;
	c->file = file;
	c->gem = gem;
	init_completion(&c->done);
	t = kthread_create(vehicle_caller_fn, c, "ualink-caller");
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, t);
	c->task = get_task_struct(t);
	wake_up_process(t);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, vehicle_caller_end,
							c), 0);
	return c;
}

/*
 * An export pins its buffer before it takes the lock under which DRM makes
 * and drops every GEM handle of the device, and waits for the buffer's
 * reservation interruptibly: while someone holds that reservation (for as
 * long as they like), another client of the device still makes and closes
 * handles, and a signal ends the export with nothing pinned or exported.
 * The same export then succeeds once the reservation is free.
 */
static void ualink_vehicle_export_pin_unlocked(struct kunit *test)
{
	struct vehicle_caller *exp, *other;
	struct drm_file *fa, *fo;
	struct fake_node *a, *b;
	unsigned long end;
	struct amdgpu_bo *abo;
	u32 ga;

	vehicle_pair(test, &a, &b);
	fa = vehicle_open(test, a);
	fo = vehicle_open(test, a);	/* another client of A */
	ga = vehicle_gem_create(test, fa, SZ_2M, AMDGPU_GEM_DOMAIN_VRAM,
				AMDGPU_GEM_CREATE_NO_CPU_ACCESS);
	abo = vehicle_bo(test, fa, ga);

	/* no KUnit assertion until the reservation is free again */
	dma_resv_lock(abo->tbo.base.resv, NULL);
	exp = vehicle_call(test, a, fa, ga);
	end = jiffies + 10 * HZ;	/* until the export sleeps */
	while (task_is_running(exp->task) && !completion_done(&exp->done) &&
	       time_before(jiffies, end))
		usleep_range(1000, 2000);
	KUNIT_EXPECT_FALSE(test, completion_done(&exp->done));

	other = vehicle_call(test, a, fo, 0);
	KUNIT_EXPECT_TRUE_MSG(test, wait_for_completion_timeout(&other->done,
								10 * HZ),
			      "a GEM handle call waited for another client's export");
	KUNIT_EXPECT_EQ(test, other->ret, 0);

	send_sig(SIGKILL, exp->task, 1);
	KUNIT_EXPECT_TRUE_MSG(test, wait_for_completion_timeout(&exp->done,
								10 * HZ),
			      "a signal did not end the export's wait");
	KUNIT_EXPECT_TRUE_MSG(test, exp->ret == -EINTR || exp->ret == -ERESTARTSYS,
			      "export: %d", exp->ret);
	KUNIT_EXPECT_EQ(test, abo->tbo.pin_count, 0);
	KUNIT_EXPECT_NULL(test, abo->ualink_export);
	dma_resv_unlock(abo->tbo.base.resv);

	wait_for_completion(&exp->done);
	vehicle_export(test, fa, ga);
	KUNIT_EXPECT_EQ(test, abo->tbo.pin_count, 1);
	KUNIT_EXPECT_EQ(test, a->adev.ualink->udev.num_exports, 1);
}

/*
 * Pinned for importers, an export stays where it is in VRAM: it is not
 * moved into (nor marked for) the CPU-visible part, a few hundred MiB on
 * GPUs without a resizable BAR, as amdgpu_bo_pin() would do for a buffer
 * without NO_CPU_ACCESS.
 */
static void ualink_vehicle_pin_invisible(struct kunit *test)
{
	struct drm_amdgpu_ualink_handle h;
	struct drm_file *fa, *fb;
	struct fake_node *a, *b;
	struct amdgpu_bo *exp;
	s64 visible_pins;
	u32 ga, gb;

	vehicle_pair(test, &a, &b);
	fa = vehicle_open(test, a);
	fb = vehicle_open(test, b);
	a->adev.gmc.visible_vram_size = SZ_256M;
	/* no NO_CPU_ACCESS: placed top-down, outside the visible part */
	ga = vehicle_gem_create(test, fa, SZ_2M, AMDGPU_GEM_DOMAIN_VRAM, 0);
	exp = vehicle_bo(test, fa, ga);
	KUNIT_ASSERT_FALSE(test, amdgpu_res_cpu_visible(&a->adev, exp->tbo.resource));
	visible_pins = atomic64_read(&a->adev.visible_pin_size);

	h = vehicle_export(test, fa, ga);
	KUNIT_ASSERT_EQ(test, vehicle_import(test, fb, h, &gb), 0);
	KUNIT_EXPECT_EQ(test, exp->tbo.pin_count, 1);
	KUNIT_EXPECT_EQ(test, exp->tbo.resource->mem_type, TTM_PL_VRAM);
	KUNIT_EXPECT_FALSE(test, amdgpu_res_cpu_visible(&a->adev, exp->tbo.resource));
	KUNIT_EXPECT_FALSE(test, exp->flags & AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED);
	KUNIT_EXPECT_FALSE(test, exp->flags & AMDGPU_GEM_CREATE_NO_CPU_ACCESS);
	KUNIT_EXPECT_EQ(test, atomic64_read(&a->adev.visible_pin_size), visible_pins);

	KUNIT_EXPECT_EQ(test, vehicle_close(fb, gb), 0);
	flush_workqueue(b->adev.mman.bdev.wq);
	amdgpu_ualink_dev_flush(&b->adev.ualink->udev);
	amdgpu_ualink_dev_flush(&a->adev.ualink->udev);
	KUNIT_EXPECT_EQ(test, exp->tbo.pin_count, 1);	/* till the export ends */
	drm_gem_object_get(&exp->tbo.base);
	KUNIT_EXPECT_EQ(test, vehicle_close(fa, ga), 0);
	amdgpu_ualink_dev_flush(&a->adev.ualink->udev);
	KUNIT_EXPECT_EQ(test, exp->tbo.pin_count, 0);
	drm_gem_object_put(&exp->tbo.base);
}

/* Does anyone wait for @job (a dma_fence_default_wait() callback)? */
static bool vehicle_job_waited(struct vehicle_job *job)
{
	bool waited;

	spin_lock_irq(&job->lock);
	waited = !list_empty(&job->base.cb_list);
	spin_unlock_irq(&job->lock);
	return waited;
}

/*
 * An export's pin leaves the buffer's flags alone: a GEM mmap while the
 * pin is under way, which reads them without the reservation, is not
 * refused. The pin is held where amdgpu's move of the buffer back into
 * VRAM waits for GPU work on it. Had the glue lent the buffer
 * NO_CPU_ACCESS for the pin, that mmap would fail with -EPERM. The
 * anchor: the same mmap before the export.
 */
static void ualink_vehicle_pin_mmap(struct kunit *test)
{
	struct ttm_operation_ctx ctx = { false, false };
	union drm_amdgpu_gem_mmap mmap = {};
	struct vehicle_caller *exp;
	struct fake_node *a, *b;
	struct vehicle_job *job;
	struct amdgpu_bo *abo;
	struct drm_file *fa;
	unsigned long end;
	int ret;
	u32 ga;

	vehicle_pair(test, &a, &b);
	fa = vehicle_open(test, a);
	ga = vehicle_gem_create(test, fa, SZ_2M, AMDGPU_GEM_DOMAIN_VRAM, 0);
	abo = vehicle_bo(test, fa, ga);
	mmap.in.handle = ga;
	KUNIT_EXPECT_EQ(test, amdgpu_gem_mmap_ioctl(&a->adev.ddev, &mmap, fa), 0);

	/* evicted, with GPU work on it that the move back waits for */
	KUNIT_ASSERT_EQ(test, amdgpu_bo_reserve(abo, false), 0);
	amdgpu_bo_placement_from_domain(abo, AMDGPU_GEM_DOMAIN_CPU);
	ret = ttm_bo_validate(&abo->tbo, &abo->placement, &ctx);
	amdgpu_bo_unreserve(abo);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_ASSERT_EQ(test, abo->tbo.resource->mem_type, TTM_PL_SYSTEM);
	/* under TTM's 15 s bound for that wait, should the test stop early */
	job = vehicle_job(test, abo, 10 * MSEC_PER_SEC);

	exp = vehicle_call(test, a, fa, ga);
	end = jiffies + 10 * HZ;	/* until the pin waits for the job */
	while (!vehicle_job_waited(job) && !completion_done(&exp->done) &&
	       time_before(jiffies, end))
		usleep_range(1000, 2000);
	KUNIT_EXPECT_TRUE(test, vehicle_job_waited(job));
	KUNIT_EXPECT_FALSE(test, completion_done(&exp->done));
	memset(&mmap, 0, sizeof(mmap));
	mmap.in.handle = ga;
	KUNIT_EXPECT_EQ(test, amdgpu_gem_mmap_ioctl(&a->adev.ddev, &mmap, fa), 0);

	mod_delayed_work(system_percpu_wq, &job->done, 0);
	wait_for_completion(&exp->done);
	KUNIT_EXPECT_EQ(test, exp->ret, 0);
	KUNIT_EXPECT_EQ(test, abo->tbo.pin_count, 1);
	KUNIT_EXPECT_EQ(test, abo->tbo.resource->mem_type, TTM_PL_VRAM);
	KUNIT_EXPECT_FALSE(test, abo->flags & AMDGPU_GEM_CREATE_NO_CPU_ACCESS);
}

/*
 * System suspend of the exporter: it leaves the pod and unpins its export
 * before VRAM is evicted, so that the buffer is saved with the rest; the
 * export stays, and resume pins it again and lets importers in. Out of
 * the pod, its ioctl refuses every operation but INFO: here an export of
 * the exported buffer again, which asks no other accelerator and which
 * only the state amdgpu's ioctl handler passes the core refuses.
 */
static void ualink_vehicle_suspend_unpins(struct kunit *test)
{
	struct drm_amdgpu_ualink_handle h;
	struct drm_amdgpu_ualink args = { .op = AMDGPU_UALINK_OP_EXPORT };
	struct drm_file *fa, *fb;
	struct fake_node *a, *b;
	struct amdgpu_bo *exp, *imp;
	u32 ga, gb, again;

	exp = vehicle_exported(test, &a, &b, &fa, &fb, &ga, &gb, &h);
	imp = vehicle_bo(test, fb, gb);
	KUNIT_EXPECT_EQ(test, exp->tbo.pin_count, 1);
	amdgpu_ualink_suspend(&a->adev);
	KUNIT_EXPECT_EQ(test, exp->tbo.pin_count, 0);
	KUNIT_EXPECT_EQ(test, a->adev.ualink->udev.num_exports, 1);
	args.u.exp.gem_handle = ga;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_ioctl_amdgpu(fa->minor->dev, &args, fa),
			-ENETDOWN);
	KUNIT_EXPECT_EQ(test, fake_ip(a)->suspend(&a->adev.ip_blocks[0]), 0);
	KUNIT_EXPECT_EQ(test, fake_ip(a)->resume(&a->adev.ip_blocks[0]), 0);
	amdgpu_ualink_resume(&a->adev);
	KUNIT_EXPECT_EQ(test, exp->tbo.pin_count, 1);
	KUNIT_EXPECT_EQ(test, exp->tbo.resource->mem_type, TTM_PL_VRAM);
	/* the refused call again, back in the pod: the same handle, one pin */
	args.u.exp = (struct drm_amdgpu_ualink_export) { .gem_handle = ga };
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_ioctl_amdgpu(fa->minor->dev, &args, fa), 0);
	KUNIT_EXPECT_EQ(test, args.u.exp.handle.lo, h.lo);
	KUNIT_EXPECT_EQ(test, args.u.exp.handle.hi, h.hi);
	KUNIT_EXPECT_EQ(test, exp->tbo.pin_count, 1);
	/* B's import died with A's leaving; the handle imports again */
	vehicle_wait_dead(test, imp);
	KUNIT_EXPECT_EQ(test, vehicle_close(fb, gb), 0);
	flush_workqueue(b->adev.mman.bdev.wq);
	amdgpu_ualink_dev_flush(&b->adev.ualink->udev);
	KUNIT_ASSERT_EQ(test, vehicle_import(test, fb, h, &again), 0);
	KUNIT_EXPECT_EQ(test, vehicle_close(fb, again), 0);
	flush_workqueue(b->adev.mman.bdev.wq);
	amdgpu_ualink_dev_flush(&b->adev.ualink->udev);
	amdgpu_ualink_dev_flush(&a->adev.ualink->udev);
}

/* The core's import of a handle, in a thread of its own. */
struct vehicle_importer {
	struct amdgpu_ualink_dev *udev;
	u64 handle[2];
	struct amdgpu_ualink_import *imp;
	int ret;
	struct completion done;
	struct task_struct *task;
};

static int vehicle_importer_fn(void *data)
{
	struct vehicle_importer *c = data;

	c->ret = amdgpu_ualink_import_get(c->udev, c->handle, &c->imp);
	complete_all(&c->done);
	return 0;
}

static void vehicle_importer_end(void *data)
{
	struct vehicle_importer *c = data;

	wait_for_completion(&c->done);
	put_task_struct(c->task);
	if (!c->ret)
		amdgpu_ualink_import_put(c->imp);
	amdgpu_ualink_dev_flush(c->udev);
}

/* Requests @node's mailbox sent again for want of an answer. */
static u64 vehicle_retransmitted(struct fake_node *node)
{
	struct amdgpu_ualink_mbox_stats s;
	u64 n = 0;
	unsigned int i;

	amdgpu_ualink_mbox_get_stats(node->adev.ualink->udev.mbox, -1, &s);
	for (i = 0; i < AMDGPU_UALINK_MSG_TYPES; i++)
		n += s.retransmitted[i];
	return n;
}

/*
 * Between the IP block's resume and amdgpu_ualink_resume(), which pins the
 * exports again, A stays out of the pod: B's import of A's export waits
 * unanswered (its request is sent again) and is granted once the export
 * is pinned. It used to be refused at once for a pin that was only late
 * (-EREMOTEIO). The anchor is ualink_vehicle_suspend_unpins.
 */
static void ualink_vehicle_resume_waits_for_pins(struct kunit *test)
{
	struct vehicle_importer *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	struct drm_amdgpu_ualink_handle h;
	struct drm_file *fa, *fb;
	struct fake_node *a, *b;
	struct amdgpu_bo *exp, *imp;
	struct task_struct *t;
	unsigned long end;
	u32 ga, gb;
	u64 sent;

	KUNIT_ASSERT_NOT_NULL(test, c);
	exp = vehicle_exported(test, &a, &b, &fa, &fb, &ga, &gb, &h);
	imp = vehicle_bo(test, fb, gb);
	amdgpu_ualink_suspend(&a->adev);
	KUNIT_EXPECT_EQ(test, fake_ip(a)->suspend(&a->adev.ip_blocks[0]), 0);
	KUNIT_EXPECT_EQ(test, fake_ip(a)->resume(&a->adev.ip_blocks[0]), 0);
	KUNIT_EXPECT_EQ(test, exp->tbo.pin_count, 0);
	KUNIT_EXPECT_NE(test, a->adev.ualink->state, AMDGPU_UALINK_STATE_ACTIVE);
	/* B's import died with A's leaving */
	vehicle_wait_dead(test, imp);
	KUNIT_EXPECT_EQ(test, vehicle_close(fb, gb), 0);
	flush_workqueue(b->adev.mman.bdev.wq);
	amdgpu_ualink_dev_flush(&b->adev.ualink->udev);

	c->udev = &b->adev.ualink->udev;
	c->handle[0] = h.lo;
	c->handle[1] = h.hi;
	init_completion(&c->done);
	sent = vehicle_retransmitted(b);
	t = kthread_create(vehicle_importer_fn, c, "ualink-importer");
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, t);
	c->task = get_task_struct(t);
	wake_up_process(t);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, vehicle_importer_end, c), 0);
	end = jiffies + 10 * HZ;
	while (vehicle_retransmitted(b) == sent && !completion_done(&c->done) &&
	       time_before(jiffies, end))
		usleep_range(5000, 10000);
	KUNIT_EXPECT_FALSE_MSG(test, completion_done(&c->done),
			       "the import ended before A was resumed: %d", c->ret);
	KUNIT_EXPECT_GT(test, vehicle_retransmitted(b), sent);

	amdgpu_ualink_resume(&a->adev);
	KUNIT_EXPECT_EQ(test, a->adev.ualink->state, AMDGPU_UALINK_STATE_ACTIVE);
	KUNIT_EXPECT_EQ(test, exp->tbo.pin_count, 1);
	KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&c->done, 10 * HZ));
	KUNIT_EXPECT_EQ(test, c->ret, 0);
}

/*
 * A system resume fails after A's IP block resumed, before
 * amdgpu_ualink_resume(): A stays out of the pod, its export unpinned. The
 * GPU reset that follows (the recovery of a device whose resume failed)
 * pins it again and brings A back: B imports the same handle. A reset
 * while A is still suspending (ualink_vehicle_suspend_reset_locks, no IP
 * resume before it) leaves A out until its resume.
 */
static void ualink_vehicle_failed_resume_reset_repins(struct kunit *test)
{
	struct drm_amdgpu_ualink_handle h;
	struct drm_file *fa, *fb;
	struct fake_node *a, *b;
	struct amdgpu_bo *exp, *imp;
	u32 ga, gb, again;

	exp = vehicle_exported(test, &a, &b, &fa, &fb, &ga, &gb, &h);
	imp = vehicle_bo(test, fb, gb);
	amdgpu_ualink_suspend(&a->adev);
	KUNIT_EXPECT_EQ(test, fake_ip(a)->suspend(&a->adev.ip_blocks[0]), 0);
	KUNIT_EXPECT_EQ(test, fake_ip(a)->resume(&a->adev.ip_blocks[0]), 0);
	/* the resume fails here */
	vehicle_wait_dead(test, imp);
	KUNIT_EXPECT_EQ(test, vehicle_close(fb, gb), 0);
	flush_workqueue(b->adev.mman.bdev.wq);
	amdgpu_ualink_dev_flush(&b->adev.ualink->udev);
	KUNIT_EXPECT_EQ(test, a->adev.ualink->state, AMDGPU_UALINK_STATE_OFFLINE);
	KUNIT_EXPECT_EQ(test, exp->tbo.pin_count, 0);

	/* as amdgpu_device_gpu_recover() does: the IP blocks go down and up */
	amdgpu_ualink_pre_reset(&a->adev);
	KUNIT_EXPECT_EQ(test, fake_ip(a)->suspend(&a->adev.ip_blocks[0]), 0);
	KUNIT_EXPECT_EQ(test, fake_ip(a)->resume(&a->adev.ip_blocks[0]), 0);
	amdgpu_ualink_post_reset(&a->adev);
	flush_work(&a->adev.ualink->leave_work);
	flush_work(&a->adev.ualink->repin_work);
	KUNIT_EXPECT_EQ(test, a->adev.ualink->state, AMDGPU_UALINK_STATE_ACTIVE);
	KUNIT_EXPECT_EQ(test, exp->tbo.pin_count, 1);
	KUNIT_ASSERT_EQ(test, vehicle_import(test, fb, h, &again), 0);
	KUNIT_EXPECT_EQ(test, vehicle_close(fb, again), 0);
	flush_workqueue(b->adev.mman.bdev.wq);
	amdgpu_ualink_dev_flush(&b->adev.ualink->udev);
	/* the resume that comes late finds nothing left to do */
	amdgpu_ualink_resume(&a->adev);
	KUNIT_EXPECT_EQ(test, exp->tbo.pin_count, 1);
	KUNIT_EXPECT_EQ(test, a->adev.ualink->state, AMDGPU_UALINK_STATE_ACTIVE);
}

static bool vehicle_is_offline(enum amdgpu_ualink_conn_state st)
{
	return st == AMDGPU_UALINK_CONN_OFFLINE;
}

/* Until @node's connection to @peer is (@offline) or is not OFFLINE. */
static void vehicle_wait_offline(struct kunit *test, struct fake_node *node,
				 u16 peer, bool offline)
{
	unsigned long end = jiffies + 10 * HZ;
	enum amdgpu_ualink_conn_state st;
	u64 gen;

	do {
		KUNIT_ASSERT_EQ(test, amdgpu_ualink_mbox_peer_state(node->adev.ualink->udev.mbox,
								    peer, &st, &gen), 0);
		if (offline == vehicle_is_offline(st))
			return;
		usleep_range(5000, 10000);
	} while (time_before(jiffies, end));
	KUNIT_FAIL(test, "connection to %u: state %d", peer, st);
}

/* Until @node no longer lets @importer into its range. */
static void vehicle_wait_denied_bit(struct kunit *test, struct fake_node *node,
				    u16 importer)
{
	unsigned long end = jiffies + 10 * HZ;

	while (test_bit(importer, node->allowed) && time_before(jiffies, end))
		usleep_range(5000, 10000);
	KUNIT_EXPECT_FALSE(test, test_bit(importer, node->allowed));
}

static void vehicle_stay_members(void *data)
{
	struct fake_node *a = data;

	WRITE_ONCE(a->expelled, false);
	WRITE_ONCE(a->peer->expelled, false);
}

/*
 * Pod events reach the core only through the IP's interrupt, as the IP
 * raises them: a peer offline kills our imports from it and refuses new
 * ones with -ENOLINK until it is back online; a membership change takes an
 * importer that left our virtual pod out of our access set and kills our
 * imports from an exporter that left it. Each is shown working before.
 */
static void ualink_vehicle_pod_events(struct kunit *test)
{
	struct drm_amdgpu_ualink_handle h;
	struct drm_file *fa, *fb;
	struct fake_node *a, *b;
	struct amdgpu_bo *imp;
	int denies;
	u32 ga, gb;

	vehicle_pair(test, &a, &b);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							vehicle_stay_members,
							a), 0);
	fa = vehicle_open(test, a);
	fb = vehicle_open(test, b);
	ga = vehicle_gem_create(test, fa, SZ_2M, AMDGPU_GEM_DOMAIN_VRAM,
				AMDGPU_GEM_CREATE_NO_CPU_ACCESS);
	h = vehicle_export(test, fa, ga);

	/* A goes offline, as B's IP reports it */
	KUNIT_ASSERT_EQ(test, vehicle_import(test, fb, h, &gb), 0);
	imp = vehicle_bo(test, fb, gb);
	KUNIT_EXPECT_NE(test, amdgpu_ualink_npa_res_npa(imp->tbo.resource), 0);
	fake_raise(b, a->id, AMDGPU_UALINK_IV_PEER_OFFLINE);
	vehicle_wait_dead(test, imp);
	vehicle_wait_offline(test, b, a->id, true);
	KUNIT_EXPECT_EQ(test, vehicle_import(test, fb, h, &gb), -ENOLINK);

	/* and back */
	fake_raise(b, a->id, AMDGPU_UALINK_IV_PEER_ONLINE);
	vehicle_wait_offline(test, b, a->id, false);
	KUNIT_ASSERT_EQ(test, vehicle_import(test, fb, h, &gb), 0);
	imp = vehicle_bo(test, fb, gb);
	KUNIT_EXPECT_NE(test, amdgpu_ualink_npa_res_npa(imp->tbo.resource), 0);
	KUNIT_EXPECT_TRUE(test, test_bit(b->id, a->allowed));

	/* B leaves A's virtual pod, as A's IP reports it: A denies B */
	denies = atomic_read(&a->denies);
	WRITE_ONCE(a->expelled, true);
	fake_raise(a, b->id, AMDGPU_UALINK_IV_MEMBERSHIP);
	vehicle_wait_denied_bit(test, a, b->id);
	KUNIT_EXPECT_GT(test, atomic_read(&a->denies), denies);

	/* and A leaves B's, as B's IP reports it: B's import dies */
	KUNIT_EXPECT_NE(test, amdgpu_ualink_npa_res_npa(imp->tbo.resource), 0);
	WRITE_ONCE(b->expelled, true);
	fake_raise(b, a->id, AMDGPU_UALINK_IV_MEMBERSHIP);
	vehicle_wait_dead(test, imp);
}

/*
 * A revocation may hold an imported buffer's last GEM reference (its last
 * handle went while the revocation waited for the reservation), and the
 * buffer's end takes the core's revoke lock, which is held around the
 * revocation: that reference is dropped on the core's workqueue, and the
 * buffer then goes as it would have, its range released to the exporter.
 */
static void ualink_vehicle_revoke_last_reference(struct kunit *test)
{
	struct amdgpu_ualink_dev *udev;
	struct drm_file *fa, *fb;
	struct fake_node *a, *b;
	struct amdgpu_bo *imp;
	u32 ga, gb;

	vehicle_pair(test, &a, &b);
	udev = &b->adev.ualink->udev;
	fa = vehicle_open(test, a);
	fb = vehicle_open(test, b);
	ga = vehicle_gem_create(test, fa, SZ_2M, AMDGPU_GEM_DOMAIN_VRAM,
				AMDGPU_GEM_CREATE_NO_CPU_ACCESS);
	KUNIT_ASSERT_EQ(test, vehicle_import(test, fb, vehicle_export(test, fa, ga),
					     &gb), 0);
	imp = vehicle_bo(test, fb, gb);
	/* the revocation's reference, which its handle's going left last */
	drm_gem_object_get(&imp->tbo.base);
	KUNIT_EXPECT_EQ(test, vehicle_close(fb, gb), 0);
	KUNIT_ASSERT_EQ(test, kref_read(&imp->tbo.base.refcount), 1);
	KUNIT_EXPECT_TRUE(test, test_bit(b->id, a->allowed));

	mutex_lock(&udev->revoke_lock);
	amdgpu_ualink_put_later(b->adev.ualink, imp);
	mutex_unlock(&udev->revoke_lock);
	amdgpu_ualink_dev_flush(udev);
	vehicle_wait_denied_bit(test, a, b->id);
}

/*
 * An import that only its dma-buf fd holds (the import op's fd, never made
 * a GEM handle) is in no VM: its revocation has none to update, and must
 * not fail for it. It did: with no VM to reserve room in,
 * dma_resv_reserve_fences() warned about a count of 0, the revocation
 * failed, and the exporter waited revoke_timeout_ms for its release.
 */
static void ualink_vehicle_revoke_fd_only(struct kunit *test)
{
	struct drm_amdgpu_ualink args = { .op = AMDGPU_UALINK_OP_IMPORT };
	struct drm_file *fa, *fb;
	struct fake_node *a, *b;
	u32 ga;

	vehicle_pair(test, &a, &b);
	fa = vehicle_open(test, a);
	fb = vehicle_open(test, b);
	ga = vehicle_gem_create(test, fa, SZ_2M, AMDGPU_GEM_DOMAIN_VRAM,
				AMDGPU_GEM_CREATE_NO_CPU_ACCESS);
	args.u.imp.handle = vehicle_export(test, fa, ga);
	args.u.imp.flags = AMDGPU_UALINK_IMPORT_CLOEXEC;
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_ioctl_amdgpu(&b->adev.ddev, &args, fb), 0);
	KUNIT_EXPECT_TRUE(test, test_bit(b->id, a->allowed));

	/* A's last handle goes: the export ends, B's import is revoked */
	KUNIT_EXPECT_EQ(test, vehicle_close(fa, ga), 0);
	vehicle_wait_denied_bit(test, a, b->id);
	KUNIT_EXPECT_EQ(test, atomic_read(&b->adev.ualink->udev.revoke_timeouts), 0);
	KUNIT_EXPECT_EQ(test, close_fd(args.u.imp.fd), 0);
	flush_delayed_fput();
	flush_workqueue(b->adev.mman.bdev.wq);
	amdgpu_ualink_dev_flush(&b->adev.ualink->udev);
	amdgpu_ualink_dev_flush(&a->adev.ualink->udev);
}

/*
 * A pin of an import (a display's prepare_fb would ask for one) is refused
 * before amdgpu validates the buffer into VRAM: with VRAM full but for an
 * evictable buffer, that buffer stays where it is. The anchor: the same
 * pin of an ordinary buffer succeeds.
 */
static void ualink_vehicle_pin_import_refused(struct kunit *test)
{
	struct ttm_resource_manager *man;
	struct amdgpu_bo *imp, *filler, *big;
	struct drm_file *fa, *fb;
	struct fake_node *a, *b;
	u32 gb, gf, gbig;
	u64 used;
	int ret;

	gb = vehicle_imported(test, &a, &b, &fa, &fb);
	imp = vehicle_bo(test, fb, gb);
	KUNIT_ASSERT_EQ(test, imp->tbo.resource->mem_type, AMDGPU_PL_NPA);

	/*
	 * B's VRAM: what user buffers may take (all but the VMs' reserve)
	 * pinned but 3 MiB, of which a buffer takes 2
	 */
	man = ttm_manager_type(&b->adev.mman.bdev, TTM_PL_VRAM);
	used = ttm_resource_manager_usage(man);
	gbig = vehicle_gem_create(test, fb, man->size - AMDGPU_VM_RESERVED_VRAM -
				  used - SZ_2M - SZ_1M,
				  AMDGPU_GEM_DOMAIN_VRAM, AMDGPU_GEM_CREATE_NO_CPU_ACCESS);
	big = vehicle_bo(test, fb, gbig);
	KUNIT_ASSERT_EQ(test, amdgpu_bo_reserve(big, false), 0);
	ret = amdgpu_bo_pin(big, AMDGPU_GEM_DOMAIN_VRAM);
	amdgpu_bo_unreserve(big);
	KUNIT_ASSERT_EQ(test, ret, 0);
	gf = vehicle_gem_create(test, fb, SZ_2M, AMDGPU_GEM_DOMAIN_VRAM,
				AMDGPU_GEM_CREATE_NO_CPU_ACCESS);
	filler = vehicle_bo(test, fb, gf);
	KUNIT_ASSERT_EQ(test, filler->tbo.resource->mem_type, TTM_PL_VRAM);

	KUNIT_ASSERT_EQ(test, amdgpu_bo_reserve(imp, false), 0);
	ret = amdgpu_bo_pin(imp, AMDGPU_GEM_DOMAIN_VRAM);
	amdgpu_bo_unreserve(imp);
	KUNIT_EXPECT_EQ(test, ret, -EINVAL);
	KUNIT_EXPECT_EQ(test, imp->tbo.pin_count, 0);
	KUNIT_EXPECT_EQ(test, imp->tbo.resource->mem_type, AMDGPU_PL_NPA);
	KUNIT_EXPECT_EQ(test, filler->tbo.resource->mem_type, TTM_PL_VRAM);

	KUNIT_ASSERT_EQ(test, amdgpu_bo_reserve(filler, false), 0);
	KUNIT_EXPECT_EQ(test, amdgpu_bo_pin(filler, AMDGPU_GEM_DOMAIN_VRAM), 0);
	amdgpu_bo_unpin(filler);
	amdgpu_bo_unreserve(filler);

	KUNIT_ASSERT_EQ(test, amdgpu_bo_reserve(big, false), 0);
	amdgpu_bo_unpin(big);
	amdgpu_bo_unreserve(big);
	KUNIT_EXPECT_EQ(test, vehicle_close(fb, gbig), 0);
	KUNIT_EXPECT_EQ(test, vehicle_close(fb, gf), 0);
	KUNIT_EXPECT_EQ(test, vehicle_close(fb, gb), 0);
	flush_workqueue(b->adev.mman.bdev.wq);
	amdgpu_ualink_dev_flush(&b->adev.ualink->udev);
	amdgpu_ualink_dev_flush(&a->adev.ualink->udev);
}

static struct kunit_case amdgpu_ualink_vehicle_cases[] = {
	KUNIT_CASE_SLOW(ualink_vehicle_export_import),
	KUNIT_CASE_SLOW(ualink_vehicle_gem_ioctls),
	KUNIT_CASE_SLOW(ualink_vehicle_export_refusals),
	KUNIT_CASE_PARAM_ATTR(ualink_vehicle_gpuvm, vehicle_gpuvm_gen_params,
			      { .speed = KUNIT_SPEED_SLOW }),
	KUNIT_CASE_SLOW(ualink_vehicle_suspend_reset_locks),
	KUNIT_CASE_SLOW(ualink_vehicle_reset_refuses),
	KUNIT_CASE_SLOW(ualink_vehicle_revoke_allocates_nothing),
	KUNIT_CASE_SLOW(ualink_vehicle_export_ends_later),
	KUNIT_CASE_SLOW(ualink_vehicle_revoke_delayed_destroy),
	KUNIT_CASE_SLOW(ualink_vehicle_pin_import_refused),
	KUNIT_CASE_SLOW(ualink_vehicle_export_needs_handle),
	KUNIT_CASE_SLOW(ualink_vehicle_export_pin_unlocked),
	KUNIT_CASE_SLOW(ualink_vehicle_pin_invisible),
	KUNIT_CASE_SLOW(ualink_vehicle_pin_mmap),
	KUNIT_CASE_SLOW(ualink_vehicle_suspend_unpins),
	KUNIT_CASE_SLOW(ualink_vehicle_resume_waits_for_pins),
	KUNIT_CASE_SLOW(ualink_vehicle_failed_resume_reset_repins),
	KUNIT_CASE_SLOW(ualink_vehicle_pod_events),
	KUNIT_CASE_SLOW(ualink_vehicle_revoke_last_reference),
	KUNIT_CASE_SLOW(ualink_vehicle_revoke_fd_only),
#if IS_ENABLED(CONFIG_HSA_AMD)
	KUNIT_CASE_SLOW(ualink_vehicle_kfd),
#endif
	{}
};

static struct kunit_suite amdgpu_ualink_vehicle_suite = {
	.name = "amdgpu_ualink_vehicle",
	.test_cases = amdgpu_ualink_vehicle_cases,
};

kunit_test_suite(amdgpu_ualink_vehicle_suite);
