// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * KUnit tests of UALink in amdgpu on minimally initialised fake
 * amdgpu_devices (as Xe's xe_pci_fake_device_init() does for Xe): no PCI
 * device, no TTM device, no other IP block. Included at the end of
 * amdgpu_ualink_amdgpu.c, so that they reach its static functions; they
 * run when amdgpu.ko is loaded.
 *
 * What they cover: the ioctl's answers on a device without UALink (every
 * GPU this kernel supports); the export refusal list; the AMDGPU_PL_NPA
 * placement of patches/ (domain, GPU offset, resource cursor, page
 * directory flags of a live and of a revoked import, no CPU access); the
 * parameters of an import's buffer and the NPA pool's question about it;
 * and the UALink IP block's life cycle on two fake devices whose
 * &struct amdgpu_ualink_hw_funcs carry mailbox messages between them by
 * raising each other's interrupt source, as a UALink IP would.
 *
 * What needs amdgpu's TTM device (amdgpu_bo_create() of an import, its
 * dma-buf and GPUVM mapping, exports of real buffers: pin, VRAM walk) runs
 * in the test vehicle that follows (amdgpu_ualink_amdgpu_vehicle_test.c);
 * what needs a GPU (the reset path that calls the reset hooks, command
 * submission) only compiles: see the coverage table in ualink.rst.
 */

#include <kunit/device.h>
#include <kunit/test.h>
#include <linux/kernfs.h>

#include <drm/drm_ioctl.h>
#include <drm/drm_kunit_helpers.h>

#include "amdgpu_drv.h"

#include "../amdgpu_ualink_sysfs.h"
#include "amdgpu_ualink_test_pt.h"

/* amdgpu_ualink_mbox_tick_now() */
MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING");

/*
 * A DRM device embedded at @offset of a zeroed struct of @size, on a
 * device of its own called @name. The container is found with
 * container_of(): in 6.12, drm_kunit_helper_alloc_drm_device() returns the
 * &struct drm_device cast to the container type, right only at offset 0,
 * and &amdgpu_device.ddev is not there.
 */
static struct drm_device *fake_drm(struct kunit *test, const char *name,
				   size_t size, size_t offset)
{
	struct device *dev = kunit_device_register(test, name);
	struct drm_device *drm;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dev);
	drm = __drm_kunit_helper_alloc_drm_device(test, dev, size, offset,
						  DRIVER_GEM);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, drm);
	return drm;
}

static struct amdgpu_device *fake_adev(struct kunit *test)
{
	struct drm_device *drm = fake_drm(test, "ualink-fake",
					  sizeof(struct amdgpu_device),
					  offsetof(struct amdgpu_device, ddev));

	return container_of(drm, struct amdgpu_device, ddev);
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
	/* what amdgpu built without UALink answers: the same */
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_ioctl_unsupported(&args), -EOPNOTSUPP);
	args.pad = 1;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_ioctl_unsupported(&args), -EINVAL);
}

/*
 * The provisional ioctl index is one no other amdgpu ioctl has, in 7.3,
 * or in series posted to amd-gfx (see amdgpu_drm.h), and the
 * device's ioctl table has it there.
 */
static void ualink_amdgpu_ioctl_index(struct kunit *test)
{
	static const unsigned int taken[] = {
		/* Linux 7.3: USERQ, _SIGNAL, _WAIT, GEM_LIST_HANDLES, PROC_OPTIONS */
		0x16, 0x17, 0x18, 0x19, 0x1a,
		/* posted to amd-gfx: CWSR, EVENTFD, WAIT_EVENT, and two more */
		0x1b, 0x1c, 0x1d, 0x20, 0x21,
	};
	unsigned int nr = DRM_IOCTL_NR(DRM_IOCTL_AMDGPU_UALINK) - DRM_COMMAND_BASE;
	const struct drm_ioctl_desc *desc;
	unsigned int i;

	KUNIT_EXPECT_GT(test, nr, DRM_AMDGPU_SCHED);
	for (i = 0; i < ARRAY_SIZE(taken); i++)
		KUNIT_EXPECT_NE_MSG(test, nr, taken[i], "index %#x is taken", nr);
	KUNIT_ASSERT_LT(test, nr, amdgpu_partition_driver.num_ioctls);
	desc = &amdgpu_partition_driver.ioctls[nr];
	KUNIT_EXPECT_EQ(test, desc->cmd, DRM_IOCTL_AMDGPU_UALINK);
	KUNIT_EXPECT_TRUE(test, desc->func == amdgpu_ualink_ioctl_amdgpu);
}

/*
 * Only device-memory buffers of our own can be exported: the predicate
 * alone, on hand-built buffers, for what the vehicle cannot make (a
 * doorbell buffer, a PRIME import). The refusal through amdgpu's ioctl,
 * on buffers amdgpu made, is ualink_vehicle_export_refusals.
 */
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

	abo->flags = AMDGPU_GEM_CREATE_VM_ALWAYS_VALID;		/* PRIME says no */
	KUNIT_EXPECT_FALSE(test, amdgpu_ualink_exportable(abo));
	abo->flags = AMDGPU_GEM_CREATE_ENCRYPTED;		/* TMZ */
	KUNIT_EXPECT_FALSE(test, amdgpu_ualink_exportable(abo));
	abo->flags = AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED;
	KUNIT_EXPECT_TRUE(test, amdgpu_ualink_exportable(abo));
	abo->flags = 0;

	res.mem_type = AMDGPU_PL_NPA;				/* a UALink import */
	abo->tbo.resource = &res;
	KUNIT_EXPECT_FALSE(test, amdgpu_ualink_exportable(abo));
	res.mem_type = TTM_PL_VRAM;
	KUNIT_EXPECT_TRUE(test, amdgpu_ualink_exportable(abo));
	abo->allowed_domains |= AMDGPU_GEM_DOMAIN_NPA;		/* the same */
	KUNIT_EXPECT_FALSE(test, amdgpu_ualink_exportable(abo));
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

/*
 * The buffer of an import: a user buffer in the NPA domain that the CPU
 * may not access, whose range the NPA pool gets from its import until it
 * is revoked.
 */
static void ualink_amdgpu_import_bo(struct kunit *test)
{
	struct amdgpu_device *adev = fake_adev(test);
	struct amdgpu_bo *abo = kunit_kzalloc(test, sizeof(*abo), GFP_KERNEL);
	struct amdgpu_ualink_import imp = { .npa = 0x7000000000ULL,
					    .size = SZ_2M };
	struct amdgpu_ualink_bo ub = { .imp = &imp };
	struct amdgpu_bo_param bp;
	u64 npa = 0, size = 0;

	KUNIT_ASSERT_NOT_NULL(test, abo);
	amdgpu_ualink_import_bo_param(&bp, &ub);
	KUNIT_EXPECT_EQ(test, bp.size, SZ_2M);
	KUNIT_EXPECT_EQ(test, bp.domain, AMDGPU_GEM_DOMAIN_NPA);
	KUNIT_EXPECT_EQ(test, bp.preferred_domain, 0);
	/* a user buffer: amdgpu's GEM ioctls expect one behind a handle */
	KUNIT_EXPECT_EQ(test, bp.type, ttm_bo_type_device);
	KUNIT_EXPECT_TRUE(test, bp.flags & AMDGPU_GEM_CREATE_NO_CPU_ACCESS);
	KUNIT_EXPECT_PTR_EQ(test, bp.ualink, &ub);
	/* userspace can neither ask for the domain nor move into it */
	KUNIT_EXPECT_FALSE(test, AMDGPU_GEM_DOMAIN_NPA & AMDGPU_GEM_DOMAIN_MASK);
	KUNIT_EXPECT_EQ(test, amdgpu_mem_type_to_domain(AMDGPU_PL_NPA),
			AMDGPU_GEM_DOMAIN_NPA);

	/* what amdgpu_bo_create() does with them before TTM places it */
	abo->tbo.bdev = &adev->mman.bdev;
	abo->flags = bp.flags;
	abo->preferred_domains = bp.domain;
	abo->allowed_domains = bp.domain;
	kref_init(&ub.ref);
	amdgpu_ualink_bo_init(abo, &bp);
	KUNIT_EXPECT_PTR_EQ(test, abo->ualink, &ub);
	KUNIT_EXPECT_EQ(test, kref_read(&ub.ref), 2);
	amdgpu_bo_placement_from_domain(abo, bp.domain);
	KUNIT_EXPECT_EQ(test, abo->placement.num_placement, 1);
	KUNIT_EXPECT_EQ(test, abo->placements[0].mem_type, AMDGPU_PL_NPA);

	/*
	 * That the CPU cannot reach it (kmap, mmap) and that it cannot be
	 * exported again is checked on a real import, made by
	 * amdgpu_bo_create(): ualink_vehicle_gem_ioctls and
	 * ualink_vehicle_export_refusals.
	 */

	/* the pool's question, under the reservation */
	abo->tbo.base.resv = &abo->tbo.base._resv;
	dma_resv_init(abo->tbo.base.resv);
	KUNIT_ASSERT_EQ(test, dma_resv_lock(abo->tbo.base.resv, NULL), 0);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_bo_range(&abo->tbo, &npa, &size), 0);
	KUNIT_EXPECT_EQ(test, npa, imp.npa);
	KUNIT_EXPECT_EQ(test, size, imp.size);
	ub.revoked = true;
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_bo_range(&abo->tbo, &npa, &size),
			-ENODEV);
	abo->ualink = NULL;	/* not an import */
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_bo_range(&abo->tbo, &npa, &size),
			-EINVAL);
	dma_resv_unlock(abo->tbo.base.resv);
	dma_resv_fini(abo->tbo.base.resv);

	/* the buffer's reference goes with it, the maker's stays */
	abo->ualink = &ub;
	amdgpu_ualink_bo_destroy(abo);
	KUNIT_EXPECT_EQ(test, kref_read(&ub.ref), 1);
}

/*
 * Two fake devices with a UALink IP each. Their mailbox rings live in the
 * receiver's struct; a publish raises the receiver's interrupt, which goes
 * to the source the IP block registered, as the IH would route it.
 */
#define FAKE_IRQ_CLIENT		0
#define FAKE_IRQ_SRC		0xf0
/*
 * The fake IP's GPUVM side: addresses 64 GiB above the NPAs (never the
 * identity, so that an entry that carries the NPA is seen), a fabric
 * marker in bit 52 (free on GFX9), memory type UC (3) and no snoop, which
 * the GMC would set otherwise for a placement that is not VRAM.
 */
#define FAKE_GPUVM_OFFSET	BIT_ULL(36)
#define FAKE_GPUVM_FABRIC	BIT_ULL(52)
#define FAKE_GPUVM_MASK		(FAKE_GPUVM_FABRIC | AMDGPU_PTE_SNOOPED | \
				 AMDGPU_PTE_MTYPE_VG10_MASK)
#define FAKE_GPUVM_PTE		(FAKE_GPUVM_FABRIC | AMDGPU_PTE_MTYPE_VG10_SHIFT(3ULL))
#define FAKE_A			3
#define FAKE_B			700

struct fake_ring {
	u32 head;
	u32 tail;
	u8 slot[AMDGPU_UALINK_RING_ENTRIES][AMDGPU_UALINK_MSG_SIZE];
};

struct fake_node {
	struct amdgpu_device adev;
	struct fake_node *peer;
	u16 id;
	bool irq_on;
	bool expelled;		/* our IP says the peer left our virtual pod */
	u64 gpuvm_pte_extra;	/* ORed into the entry bits our IP gives */
	int irq_sets;
	int hw_inits;
	int hw_finis;
	int messages;
	bool hw_on;		/* between the IP's hw_init and hw_fini */
	atomic_t hw_off_calls;	/* transport calls outside of that */
	atomic_t shootdown_requests;
	unsigned long last_exporter;
	/* the access set of our one exported range, as the IP keeps it */
	DECLARE_BITMAP(allowed, AMDGPU_UALINK_MAX_ACCELS);
	atomic_t allows;
	atomic_t denies;
	struct fake_ring rx;	/* the peer's ring here */
	struct page **vram;	/* the vehicle's view of its VRAM */
	/* the vehicle's GMC: gmc_v9's, but for the TLB flushes it counts */
	struct amdgpu_gmc_funcs gmc_funcs;
	atomic_t tlb_flushes;
	/*
	 * the vehicle's look at the importer when we deny it, that is once
	 * it released the range: called from our mailbox's worker
	 */
	void (*on_deny)(struct fake_node *self, u16 importer);
	void *on_deny_data;
};

static struct fake_node *fake_node(void *adev)
{
	return container_of((struct amdgpu_device *)adev, struct fake_node, adev);
}

/* A call into the transport, which the IP serves only while it is up. */
static struct fake_ring *fake_ring_at(void *priv, u16 peer)
{
	struct fake_node *self = fake_node(priv);

	if (!READ_ONCE(self->hw_on))
		atomic_inc(&self->hw_off_calls);
	return peer == self->peer->id ? &self->peer->rx : NULL;
}

static void fake_raise(struct fake_node *to, u16 sender, u32 kind)
{
	struct amdgpu_irq_src *src =
		to->adev.irq.client[FAKE_IRQ_CLIENT].sources[FAKE_IRQ_SRC];
	struct amdgpu_iv_entry entry = {
		.client_id = FAKE_IRQ_CLIENT,
		.src_id = FAKE_IRQ_SRC,
		.src_data = { sender, kind },
	};

	if (src && READ_ONCE(to->irq_on))
		src->funcs->process(&to->adev, src, &entry);
}

static int fake_post(void *priv, u16 peer, unsigned int slot, const void *entry)
{
	struct fake_ring *ring = fake_ring_at(priv, peer);

	if (!ring)
		return -ENODEV;
	memcpy(ring->slot[slot], entry, AMDGPU_UALINK_MSG_SIZE);
	return 0;
}

static void fake_publish(void *priv, u16 peer, u32 head)
{
	struct fake_ring *ring = fake_ring_at(priv, peer);

	if (!ring)
		return;
	/* the entries before the index that makes them visible */
	smp_store_release(&ring->head, head);
	fake_node(priv)->peer->messages++;
	fake_raise(fake_node(priv)->peer, fake_node(priv)->id,
		   AMDGPU_UALINK_IV_MESSAGE);
}

static u32 fake_peer_tail(void *priv, u16 peer)
{
	struct fake_ring *ring = fake_ring_at(priv, peer);

	return ring ? READ_ONCE(ring->tail) : 0;
}

static u32 fake_rx_head(void *priv, u16 sender)
{
	struct fake_node *self = fake_node(priv);

	if (!READ_ONCE(self->hw_on))
		atomic_inc(&self->hw_off_calls);
	/* pairs with the release in fake_publish(): entries after the index */
	return sender == self->peer->id ? smp_load_acquire(&self->rx.head) : 0;
}

static void fake_rx_read(void *priv, u16 sender, unsigned int slot, void *entry)
{
	if (!READ_ONCE(fake_node(priv)->hw_on))
		atomic_inc(&fake_node(priv)->hw_off_calls);
	memcpy(entry, fake_node(priv)->rx.slot[slot], AMDGPU_UALINK_MSG_SIZE);
}

static void fake_rx_ack(void *priv, u16 sender, u32 tail)
{
	if (!READ_ONCE(fake_node(priv)->hw_on))
		atomic_inc(&fake_node(priv)->hw_off_calls);
	WRITE_ONCE(fake_node(priv)->rx.tail, tail);
}

static const struct amdgpu_ualink_mbox_ops fake_mbox = {
	.post = fake_post,
	.publish = fake_publish,
	.peer_tail = fake_peer_tail,
	.rx_head = fake_rx_head,
	.rx_read = fake_rx_read,
	.rx_ack = fake_rx_ack,
};

static int fake_hw_init(struct amdgpu_device *adev)
{
	fake_node(adev)->hw_inits++;
	WRITE_ONCE(fake_node(adev)->hw_on, true);
	return 0;
}

static void fake_hw_fini(struct amdgpu_device *adev)
{
	fake_node(adev)->hw_finis++;
	WRITE_ONCE(fake_node(adev)->hw_on, false);
}

static u16 fake_accel_id(struct amdgpu_device *adev)
{
	return fake_node(adev)->id;
}

static bool fake_vpod(struct amdgpu_device *adev, u32 *vpod_id, u32 *vpod_size)
{
	*vpod_id = 9;
	*vpod_size = 2;
	return true;
}

static bool fake_member(struct amdgpu_device *adev, u16 peer)
{
	struct fake_node *self = fake_node(adev);

	return peer == self->peer->id && !READ_ONCE(self->expelled);
}

/* Firmware tells the link's type and the physical pod's size, no more. */
static void fake_link(struct amdgpu_device *adev,
		      struct amdgpu_ualink_sysfs_link *link)
{
	link->link_type = "UALink";
	link->ppod_size = 1024;
}

static int fake_allow(struct amdgpu_device *adev, u16 importer, u64 npa,
		      u64 size)
{
	struct fake_node *self = fake_node(adev);

	set_bit(importer, self->allowed);
	atomic_inc(&self->allows);
	return 0;
}

static void fake_deny(struct amdgpu_device *adev, u16 importer, u64 npa,
		      u64 size)
{
	struct fake_node *self = fake_node(adev);
	void (*probe)(struct fake_node *self, u16 importer);

	clear_bit(importer, self->allowed);
	atomic_inc(&self->denies);
	probe = READ_ONCE(self->on_deny);
	if (probe)
		probe(self, importer);
}

static int fake_shootdown(struct amdgpu_device *adev, u16 importer, u64 npa,
			  u64 size)
{
	fake_raise(fake_node(adev)->peer, fake_node(adev)->id,
		   AMDGPU_UALINK_IV_SHOOTDOWN);
	return 0;
}

static void fake_shootdown_request(struct amdgpu_device *adev, u16 exporter)
{
	struct fake_node *self = fake_node(adev);

	WRITE_ONCE(self->last_exporter, exporter);
	atomic_inc(&self->shootdown_requests);
}

static int fake_irq_set(struct amdgpu_device *adev, bool enable)
{
	struct fake_node *self = fake_node(adev);

	lockdep_assert_held(&adev->irq.lock);	/* amdgpu_irq_update()'s */
	WRITE_ONCE(self->irq_on, enable);
	self->irq_sets++;
	return 0;
}

/*
 * GPUVM reaches the fabric 64 GiB above the NPA, whatever the NPA: from
 * accelerator 128 on (bit 48 set) that does not fit GFX9's address field,
 * which only the glue checks.
 */
static int fake_gpuvm_addr(struct amdgpu_device *adev, u64 npa, u64 size,
			   u64 *addr, u64 *pte)
{
	*addr = npa + FAKE_GPUVM_OFFSET;
	*pte = FAKE_GPUVM_PTE | READ_ONCE(fake_node(adev)->gpuvm_pte_extra);
	return 0;
}

static const struct amdgpu_ualink_hw_funcs fake_hw = {
	.mbox = &fake_mbox,
	.pt = &ualink_test_pt_ops,
	.pte = &ualink_test_pte,
	.hw_init = fake_hw_init,
	.hw_fini = fake_hw_fini,
	.accel_id = fake_accel_id,
	.vpod = fake_vpod,
	.member = fake_member,
	.link = fake_link,
	.allow = fake_allow,
	.deny = fake_deny,
	.shootdown = fake_shootdown,
	.shootdown_request = fake_shootdown_request,
	.irq_set = fake_irq_set,
	.irq_client = FAKE_IRQ_CLIENT,
	.irq_src = FAKE_IRQ_SRC,
	.gpuvm_addr = fake_gpuvm_addr,
	.gpuvm_pte_mask = FAKE_GPUVM_MASK,
};

static void fake_node_fini(void *data)
{
	amdgpu_irq_fini_sw(data);
}

/* What amdgpu's early init would have set up for the IP block. */
static struct fake_node *fake_node_create(struct kunit *test, const char *name,
					  u16 id)
{
	struct drm_device *drm = fake_drm(test, name, sizeof(struct fake_node),
					  offsetof(struct fake_node, adev.ddev));
	struct fake_node *node = container_of(drm, struct fake_node, adev.ddev);

	node->id = id;
	node->adev.dev = drm->dev;
	spin_lock_init(&node->adev.irq.lock);
	node->adev.irq.installed = true;
	spin_lock_init(&node->adev.mman.bdev.lru_lock);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, fake_node_fini,
							&node->adev), 0);
	return node;
}

static const struct amd_ip_funcs *fake_ip(struct fake_node *node)
{
	return node->adev.ip_blocks[0].version->funcs;
}

static u32 fake_state(struct kunit *test, struct fake_node *node)
{
	struct drm_amdgpu_ualink args = { .op = AMDGPU_UALINK_OP_INFO };

	KUNIT_EXPECT_EQ(test, amdgpu_ualink_ioctl_amdgpu(&node->adev.ddev,
							 &args, NULL), 0);
	return args.u.info.state;
}

/*
 * The contents of ualink/@name of the node's device, read as read(2)
 * would be served (the directory's sysfs_ops); NULL when there is no such
 * file.
 */
static const char *fake_sysfs(struct kunit *test, struct fake_node *node,
			      const char *name)
{
	struct kernfs_node *dir, *file;
	struct kobject *kobj;
	char *buf;

	dir = kernfs_find_and_get(node->adev.dev->kobj.sd, "ualink");
	if (!dir)
		return NULL;
	file = kernfs_find_and_get(dir, name);
	kobj = dir->priv;
	buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	if (file)
		KUNIT_EXPECT_GT(test, kobj->ktype->sysfs_ops->show(kobj, file->priv, buf), 0);
	kernfs_put(file);
	kernfs_put(dir);
	return file ? buf : NULL;
}

/* An unknown handle of @exporter, imported on @importer. */
static int fake_import(struct fake_node *importer, struct fake_node *exporter)
{
	struct drm_amdgpu_ualink args = {
		.op = AMDGPU_UALINK_OP_IMPORT,
		.u.imp.handle = { .lo = (0x1234ULL << 10) | exporter->id,
				  .hi = 0x77 },
	};

	return amdgpu_ualink_ioctl_amdgpu(&importer->adev.ddev, &args, NULL);
}

/*
 * The UALink IP block through amdgpu's life cycle: added (not when the IP
 * claims GPUVM entry bits amdgpu sets), sw_init (core,
 * NPA manager, interrupt source), hw_init (interrupt enabled, active),
 * mailbox round trips between the two devices through their interrupt
 * sources, a shootdown request, suspend and resume, a GPU reset, hw_fini
 * and sw_fini.
 */
static void ualink_amdgpu_ip_block(struct kunit *test)
{
	struct fake_node *a = fake_node_create(test, "ualink-fake-a", FAKE_A);
	struct fake_node *b = fake_node_create(test, "ualink-fake-b", FAKE_B);
	static const u64 owned[] = {
		AMDGPU_PTE_VALID, AMDGPU_PTE_SYSTEM, AMDGPU_PTE_TMZ,
		AMDGPU_PTE_EXECUTABLE, AMDGPU_PTE_READABLE,
		AMDGPU_PTE_WRITEABLE, AMDGPU_PTE_FRAG(1ULL), BIT_ULL(12),
		BIT_ULL(47), AMDGPU_PTE_PRT, AMDGPU_PDE_PTE,
	};
	struct drm_amdgpu_ualink args = { .op = AMDGPU_UALINK_OP_INFO };
	struct amdgpu_ualink_hw_funcs *bad;
	struct amdgpu_ualink *ualink;
	unsigned int i;
	int messages;

	a->peer = b;
	b->peer = a;

	/* an IP that claims GPUVM entry bits amdgpu sets is not added */
	bad = kunit_kmalloc(test, sizeof(*bad), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, bad);
	for (i = 0; i < ARRAY_SIZE(owned); i++) {
		*bad = fake_hw;
		bad->gpuvm_pte_mask |= owned[i];
		KUNIT_EXPECT_EQ_MSG(test, amdgpu_ualink_ip_block_add(&a->adev, bad),
				    -EINVAL, "mask %#llx", bad->gpuvm_pte_mask);
	}
	KUNIT_EXPECT_EQ(test, a->adev.num_ip_blocks, 0);
	KUNIT_EXPECT_NULL(test, a->adev.ualink);

	/* added: the state exists, the core does not yet */
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_ip_block_add(&a->adev, &fake_hw), 0);
	KUNIT_ASSERT_EQ(test, amdgpu_ualink_ip_block_add(&b->adev, &fake_hw), 0);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_ip_block_add(&a->adev, &fake_hw),
			-EEXIST);
	KUNIT_ASSERT_EQ(test, a->adev.num_ip_blocks, 1);
	KUNIT_EXPECT_EQ(test, a->adev.ip_blocks[0].version->type,
			AMD_IP_BLOCK_TYPE_UALINK);
	ualink = a->adev.ualink;
	KUNIT_ASSERT_NOT_NULL(test, ualink);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_ioctl_amdgpu(&a->adev.ddev, &args,
							 NULL), -EOPNOTSUPP);

	/* sw_init: the core, the NPA manager, the interrupt source */
	KUNIT_ASSERT_EQ(test, fake_ip(a)->sw_init(&a->adev.ip_blocks[0]), 0);
	KUNIT_ASSERT_EQ(test, fake_ip(b)->sw_init(&b->adev.ip_blocks[0]), 0);
	KUNIT_EXPECT_PTR_EQ(test,
			    a->adev.irq.client[FAKE_IRQ_CLIENT].sources[FAKE_IRQ_SRC],
			    &ualink->irq);
	KUNIT_EXPECT_PTR_EQ(test, ttm_manager_type(&a->adev.mman.bdev,
						   AMDGPU_PL_NPA),
			    &ualink->pool.manager);
	KUNIT_EXPECT_EQ(test, fake_state(test, a), AMDGPU_UALINK_STATE_OFFLINE);
	KUNIT_EXPECT_FALSE(test, a->irq_on);
	KUNIT_EXPECT_STREQ(test, fake_sysfs(test, a, "accel_state"), "unconfigured\n");
	/* not active: no active member of the pod, itself included */
	KUNIT_EXPECT_STREQ(test, fake_sysfs(test, a, "vpod_active_accels"), "\n");

	/* hw_init: interrupt on, active */
	KUNIT_ASSERT_EQ(test, fake_ip(a)->hw_init(&a->adev.ip_blocks[0]), 0);
	KUNIT_ASSERT_EQ(test, fake_ip(b)->hw_init(&b->adev.ip_blocks[0]), 0);
	KUNIT_EXPECT_TRUE(test, a->irq_on);
	KUNIT_EXPECT_EQ(test, a->irq_sets, 1);
	KUNIT_EXPECT_EQ(test, a->hw_inits, 1);
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_ioctl_amdgpu(&a->adev.ddev, &args,
							 NULL), 0);
	KUNIT_EXPECT_EQ(test, args.u.info.accel_id, FAKE_A);
	KUNIT_EXPECT_EQ(test, args.u.info.vpod_id, 9);
	KUNIT_EXPECT_EQ(test, args.u.info.vpod_size, 2);
	KUNIT_EXPECT_EQ(test, args.u.info.state, AMDGPU_UALINK_STATE_ACTIVE);
	/*
	 * the PCI device's ualink/ says the same; the active members are
	 * those the IP names, and A; the link is what firmware said; the IP
	 * lists no local accelerators and counts no fabric refusals
	 */
	KUNIT_EXPECT_STREQ(test, fake_sysfs(test, a, "accel_state"), "ready\n");
	KUNIT_EXPECT_STREQ(test, fake_sysfs(test, a, "accel_id"), "3\n");
	KUNIT_EXPECT_STREQ(test, fake_sysfs(test, a, "vpod_id"), "9\n");
	KUNIT_EXPECT_STREQ(test, fake_sysfs(test, a, "vpod_size"), "2\n");
	KUNIT_EXPECT_STREQ(test, fake_sysfs(test, a, "exports"), "0\n");
	KUNIT_EXPECT_STREQ(test, fake_sysfs(test, a, "vpod_active_accels"), "3 700\n");
	KUNIT_EXPECT_STREQ(test, fake_sysfs(test, a, "link_type"), "UALink\n");
	KUNIT_EXPECT_STREQ(test, fake_sysfs(test, a, "ppod_size"), "1024\n");
	KUNIT_EXPECT_STREQ(test, fake_sysfs(test, a, "bandwidth"), "unknown\n");
	KUNIT_EXPECT_STREQ(test, fake_sysfs(test, a, "timeouts"), "0\n");
	KUNIT_EXPECT_NULL(test, fake_sysfs(test, a, "local_accels"));
	KUNIT_EXPECT_NULL(test, fake_sysfs(test, a, "fabric_refusals"));

	/*
	 * B asks A for a handle A never made: the request reaches A and the
	 * answer reaches B only through their interrupt sources.
	 */
	KUNIT_EXPECT_EQ(test, fake_import(b, a), -ENOENT);
	KUNIT_EXPECT_GE(test, a->messages, 1);
	KUNIT_EXPECT_GE(test, b->messages, 1);

	/* a shootdown request: acknowledged in the handler, served in work */
	fake_shootdown(&b->adev, FAKE_A, 0, SZ_4K);
	flush_work(&ualink->shootdown_work);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->shootdown_requests), 1);
	KUNIT_EXPECT_EQ(test, READ_ONCE(a->last_exporter), FAKE_B);

	/* suspend: out of the pod, interrupt off; B's ioctl refuses imports */
	KUNIT_EXPECT_EQ(test, fake_ip(b)->suspend(&b->adev.ip_blocks[0]), 0);
	KUNIT_EXPECT_FALSE(test, b->irq_on);
	KUNIT_EXPECT_EQ(test, b->hw_finis, 1);
	KUNIT_EXPECT_EQ(test, fake_state(test, b), AMDGPU_UALINK_STATE_OFFLINE);
	KUNIT_EXPECT_EQ(test, fake_import(b, a), -ENETDOWN);
	KUNIT_EXPECT_STREQ(test, fake_sysfs(test, b, "accel_state"), "unconfigured\n");
	/*
	 * and nothing touches B's IP: a doorbell (a late interrupt) and the
	 * timer work, which retransmits what B sent while leaving (made to
	 * run, not waited for), find the mailbox quiesced
	 */
	amdgpu_ualink_mbox_doorbell(b->adev.ualink->udev.mbox, FAKE_A);
	amdgpu_ualink_mbox_flush(b->adev.ualink->udev.mbox);
	amdgpu_ualink_mbox_tick_now(b->adev.ualink->udev.mbox);
	KUNIT_EXPECT_EQ(test, atomic_read(&b->hw_off_calls), 0);
	/* resume: back, and round trips work again */
	KUNIT_EXPECT_EQ(test, fake_ip(b)->resume(&b->adev.ip_blocks[0]), 0);
	KUNIT_EXPECT_TRUE(test, b->irq_on);
	KUNIT_EXPECT_EQ(test, b->hw_inits, 2);
	KUNIT_EXPECT_EQ(test, fake_state(test, b), AMDGPU_UALINK_STATE_ACTIVE);
	messages = a->messages;
	KUNIT_EXPECT_EQ(test, fake_import(b, a), -ENOENT);
	KUNIT_EXPECT_GT(test, a->messages, messages);

	/*
	 * A GPU reset of A: it refuses peers at once, and the IP is not
	 * touched until the reset's resume; the IP blocks are suspended and
	 * resumed inside the reset; A leaves the pod from a worker once the
	 * reset is over, then takes part again.
	 */
	amdgpu_ualink_pre_reset(&a->adev);
	KUNIT_EXPECT_EQ(test, fake_state(test, a), AMDGPU_UALINK_STATE_RESETTING);
	WRITE_ONCE(a->hw_on, false);	/* the ASIC resets */
	amdgpu_ualink_mbox_doorbell(ualink->udev.mbox, FAKE_B);
	amdgpu_ualink_mbox_flush(ualink->udev.mbox);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->hw_off_calls), 0);
	KUNIT_EXPECT_EQ(test, fake_ip(a)->suspend(&a->adev.ip_blocks[0]), 0);
	KUNIT_EXPECT_EQ(test, fake_ip(a)->resume(&a->adev.ip_blocks[0]), 0);
	KUNIT_EXPECT_EQ(test, fake_state(test, a), AMDGPU_UALINK_STATE_RESETTING);
	/*
	 * A answers (the same as for the unknown handle this suite has; the
	 * vehicle's ualink_vehicle_reset_refuses shows it is the reset)
	 */
	messages = a->messages;
	KUNIT_EXPECT_EQ(test, fake_import(b, a), -ENOENT);
	KUNIT_EXPECT_GT(test, a->messages, messages);
	amdgpu_ualink_post_reset(&a->adev);
	flush_work(&ualink->leave_work);
	KUNIT_EXPECT_EQ(test, fake_state(test, a), AMDGPU_UALINK_STATE_ACTIVE);
	KUNIT_EXPECT_EQ(test, fake_import(b, a), -ENOENT);

	/* system suspend leaves the pod before the IP block's suspend */
	amdgpu_ualink_suspend(&a->adev);
	KUNIT_EXPECT_EQ(test, fake_state(test, a), AMDGPU_UALINK_STATE_OFFLINE);
	KUNIT_EXPECT_TRUE(test, a->irq_on);
	KUNIT_EXPECT_EQ(test, fake_ip(a)->suspend(&a->adev.ip_blocks[0]), 0);
	KUNIT_EXPECT_FALSE(test, a->irq_on);
	KUNIT_EXPECT_EQ(test, fake_ip(a)->resume(&a->adev.ip_blocks[0]), 0);
	/* it takes part once the device's resume pinned its exports again */
	KUNIT_EXPECT_EQ(test, fake_state(test, a), AMDGPU_UALINK_STATE_OFFLINE);
	amdgpu_ualink_resume(&a->adev);
	KUNIT_EXPECT_EQ(test, fake_state(test, a), AMDGPU_UALINK_STATE_ACTIVE);
	KUNIT_EXPECT_EQ(test, fake_import(b, a), -ENOENT);

	/* the end: interrupt off, the core and the NPA manager gone */
	KUNIT_EXPECT_EQ(test, fake_ip(a)->hw_fini(&a->adev.ip_blocks[0]), 0);
	KUNIT_EXPECT_EQ(test, fake_ip(b)->hw_fini(&b->adev.ip_blocks[0]), 0);
	KUNIT_EXPECT_FALSE(test, a->irq_on);
	/* the IPs were used only between their hw_init and hw_fini */
	KUNIT_EXPECT_EQ(test, atomic_read(&a->hw_off_calls), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&b->hw_off_calls), 0);
	KUNIT_EXPECT_EQ(test, a->hw_finis, a->hw_inits);
	KUNIT_EXPECT_EQ(test, fake_ip(a)->sw_fini(&a->adev.ip_blocks[0]), 0);
	KUNIT_EXPECT_EQ(test, fake_ip(b)->sw_fini(&b->adev.ip_blocks[0]), 0);
	KUNIT_EXPECT_NULL(test, ttm_manager_type(&a->adev.mman.bdev,
						 AMDGPU_PL_NPA));
	KUNIT_EXPECT_NULL(test, kernfs_find_and_get(a->adev.dev->kobj.sd, "ualink"));
	memset(&args.u, 0, sizeof(args.u));
	KUNIT_EXPECT_EQ(test, amdgpu_ualink_ioctl_amdgpu(&a->adev.ddev, &args,
							 NULL), -EOPNOTSUPP);
}

static struct kunit_case amdgpu_ualink_amdgpu_cases[] = {
	KUNIT_CASE(ualink_amdgpu_ioctl_without_ualink),
	KUNIT_CASE(ualink_amdgpu_ioctl_index),
	KUNIT_CASE(ualink_amdgpu_export_refusals),
	KUNIT_CASE(ualink_amdgpu_npa_placement),
	KUNIT_CASE(ualink_amdgpu_import_bo),
	KUNIT_CASE(ualink_amdgpu_ip_block),
	{}
};

static struct kunit_suite amdgpu_ualink_amdgpu_suite = {
	.name = "amdgpu_ualink_amdgpu",
	.test_cases = amdgpu_ualink_amdgpu_cases,
};

kunit_test_suite(amdgpu_ualink_amdgpu_suite);
