// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * KUnit tests of UALink in amdgpu on a minimally initialised fake
 * amdgpu_device (as Xe's xe_pci_fake_device_init() does for Xe): no PCI
 * device, no IP block, no TTM device. Included at the end of
 * amdgpu_ualink_amdgpu.c, so that they reach its static functions; they
 * run when amdgpu.ko is loaded.
 *
 * What they cover: the ioctl's answers on a device without UALink (every
 * GPU this kernel supports), the export refusal list, and the
 * AMDGPU_PL_NPA placement of patches/ (GPU offset, resource cursor, page
 * directory flags of a live and of a revoked import, no CPU access). What
 * needs a UALink IP (init, the mailbox, interrupts) only compiles here.
 */

#include <kunit/test.h>

#include <drm/drm_kunit_helpers.h>

static struct amdgpu_device *fake_adev(struct kunit *test)
{
	struct amdgpu_device *adev;
	struct device *dev;

	dev = drm_kunit_helper_alloc_device(test);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dev);
	adev = drm_kunit_helper_alloc_drm_device(test, dev, struct amdgpu_device,
						 ddev, DRIVER_GEM);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, adev);
	return adev;
}

/* No UALink: malformed arguments are EINVAL, the rest EOPNOTSUPP. */
static void ualink_amdgpu_ioctl_without_ualink(struct kunit *test)
{
	struct amdgpu_device *adev = fake_adev(test);
	struct drm_amdgpu_ualink args = { .op = AMDGPU_UALINK_OP_INFO };

	KUNIT_EXPECT_NULL(test, adev->ualink);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_ioctl_amdgpu(&adev->ddev, &args, NULL),
			-EOPNOTSUPP);
	args.op = AMDGPU_UALINK_OP_EXPORT;
	args.u.exp.gem_handle = 1;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_ioctl_amdgpu(&adev->ddev, &args, NULL),
			-EOPNOTSUPP);
	args.pad = 1;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_ioctl_amdgpu(&adev->ddev, &args, NULL),
			-EINVAL);
	args.pad = 0;
	args.op = 99;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_ioctl_amdgpu(&adev->ddev, &args, NULL),
			-EINVAL);
	args.op = AMDGPU_UALINK_OP_IMPORT;
	memset(&args.u, 0, sizeof(args.u));
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_ioctl_amdgpu(&adev->ddev, &args, NULL),
			-EINVAL);	/* a zero handle */
	args.u.imp.handle.lo = 5;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_ioctl_amdgpu(&adev->ddev, &args, NULL),
			-EOPNOTSUPP);
	/* the device's ioctl table has it, at amdgpu's provisional number */
	KUNIT_EXPECT_EQ(test, DRM_IOCTL_NR(DRM_IOCTL_AMDGPU_UALINK) - DRM_COMMAND_BASE,
			0x1b);
}

/* Only device-memory buffers of our own can be exported. */
static void ualink_amdgpu_export_refusals(struct kunit *test)
{
	struct amdgpu_bo *abo = kunit_kzalloc(test, sizeof(*abo), GFP_KERNEL);
	struct dma_buf_attachment attach = {};
	struct ttm_resource res = {};

	KUNIT_ASSERT_NOT_NULL(test, abo);
	abo->preferred_domains = AMDGPU_GEM_DOMAIN_VRAM;
	abo->allowed_domains = AMDGPU_GEM_DOMAIN_VRAM | AMDGPU_GEM_DOMAIN_GTT;
	KUNIT_EXPECT_TRUE(test, amdgpu_ualink_exportable(abo));

	abo->allowed_domains = AMDGPU_GEM_DOMAIN_GTT;		/* GTT only */
	KUNIT_EXPECT_FALSE(test, amdgpu_ualink_exportable(abo));
	abo->allowed_domains = AMDGPU_GEM_DOMAIN_VRAM;

	abo->preferred_domains = AMDGPU_GEM_DOMAIN_DOORBELL;	/* doorbell */
	KUNIT_EXPECT_FALSE(test, amdgpu_ualink_exportable(abo));
	abo->preferred_domains = AMDGPU_GEM_DOMAIN_VRAM;

	abo->tbo.base.import_attach = &attach;			/* imported */
	KUNIT_EXPECT_FALSE(test, amdgpu_ualink_exportable(abo));
	abo->tbo.base.import_attach = NULL;

	res.mem_type = AMDGPU_PL_NPA;				/* a UALink import */
	abo->tbo.resource = &res;
	KUNIT_EXPECT_FALSE(test, amdgpu_ualink_exportable(abo));
	res.mem_type = TTM_PL_VRAM;
	KUNIT_EXPECT_TRUE(test, amdgpu_ualink_exportable(abo));
}

/*
 * The AMDGPU_PL_NPA placement: the GPU offset is the NPA itself (above bit
 * 47, not sign-extended), the cursor one range, the PDE valid while the
 * import lives and not once revoked, and no CPU access.
 */
static void ualink_amdgpu_npa_placement(struct kunit *test)
{
	struct amdgpu_device *adev = fake_adev(test);
	struct amdgpu_bo *abo = kunit_kzalloc(test, sizeof(*abo), GFP_KERNEL);
	u64 npa = amdgpu_ualink_npa_build(700, AMDGPU_UALINK_NPA_RESERVE + SZ_1G);
	struct amdgpu_ualink_npa_res npa_res = {};
	struct amdgpu_res_cursor cur;

	KUNIT_ASSERT_NOT_NULL(test, abo);
	KUNIT_ASSERT_GT(test, npa, BIT_ULL(47));
	npa_res.base.mem_type = AMDGPU_PL_NPA;
	npa_res.base.size = SZ_4M;
	npa_res.npa = npa;
	abo->tbo.bdev = &adev->mman.bdev;
	abo->tbo.resource = &npa_res.base;

	KUNIT_EXPECT_EQ(test, amdgpu_bo_gpu_offset_no_check(abo), npa);

	amdgpu_res_first(&npa_res.base, SZ_1M, SZ_2M, &cur);
	KUNIT_EXPECT_EQ(test, cur.start, npa + SZ_1M);
	KUNIT_EXPECT_EQ(test, cur.size, SZ_2M);
	KUNIT_EXPECT_EQ(test, cur.remaining, SZ_2M);
	amdgpu_res_next(&cur, SZ_2M);
	KUNIT_EXPECT_EQ(test, cur.remaining, 0);

	KUNIT_EXPECT_TRUE(test, amdgpu_ttm_tt_pde_flags(NULL, &npa_res.base) &
				AMDGPU_PTE_VALID);
	KUNIT_EXPECT_FALSE(test, amdgpu_ttm_tt_pde_flags(NULL, &npa_res.base) &
				 AMDGPU_PTE_SYSTEM);
	KUNIT_EXPECT_FALSE(test, amdgpu_res_cpu_visible(adev, &npa_res.base));

	npa_res.npa = 0;	/* revoked: the pool's dead resource */
	KUNIT_EXPECT_FALSE(test, amdgpu_ttm_tt_pde_flags(NULL, &npa_res.base) &
				 AMDGPU_PTE_VALID);
	KUNIT_EXPECT_FALSE(test, amdgpu_res_cpu_visible(adev, &npa_res.base));
}

static struct kunit_case amdgpu_ualink_amdgpu_cases[] = {
	KUNIT_CASE(ualink_amdgpu_ioctl_without_ualink),
	KUNIT_CASE(ualink_amdgpu_export_refusals),
	KUNIT_CASE(ualink_amdgpu_npa_placement),
	{}
};

static struct kunit_suite amdgpu_ualink_amdgpu_suite = {
	.name = "amdgpu_ualink_amdgpu",
	.test_cases = amdgpu_ualink_amdgpu_cases,
};

kunit_test_suite(amdgpu_ualink_amdgpu_suite);
