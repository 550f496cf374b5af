// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The UALink uAPI on the emulated pod: INFO, export, import, batched
 * import, their errors, PRIME and CPU access of imports, and data moved
 * through the fabric by the emulated GPU access.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xf86drm.h>

#include "igt.h"
#include "vpod_lib.h"

IGT_TEST_DESCRIPTION("UALink export/import on the emulated pod (vpod).");

#define SZ_4K	4096ull
#define SZ_64K	(64 * 1024ull)
#define SZ_1M	(1024 * 1024ull)
#define SZ_2M	(2 * SZ_1M)
#define SZ_4M	(4 * SZ_1M)

/* a handle that differs from @h in random bits of @hi (@lo kept) */
static struct drm_amdgpu_ualink_handle flip_hi(struct drm_amdgpu_ualink_handle h)
{
	uint64_t m;

	do {
		m = rand64();
	} while (!m);
	h.hi ^= m;
	return h;
}

/* a handle that differs from @h in random bits of @lo above the ID */
static struct drm_amdgpu_ualink_handle flip_lo(struct drm_amdgpu_ualink_handle h)
{
	uint64_t m;

	do {
		m = rand64() << AMDGPU_UALINK_HANDLE_ACCEL_ID_BITS;
	} while (!m);
	h.lo ^= m;
	return h;
}

static void fill_u32(int fd, uint32_t gem, uint64_t size, uint32_t value)
{
	uint32_t *buf = malloc(size);
	uint64_t i;

	igt_assert(buf);
	for (i = 0; i < size / 4; i++)
		buf[i] = value;
	gpu_write(fd, gem, 0, buf, size);
	free(buf);
}

static bool cloexec(int fd)
{
	int flags = fcntl(fd, F_GETFD);

	igt_assert(flags >= 0);
	return flags & FD_CLOEXEC;
}

static bool same_file(int a, int b)
{
	struct stat sa, sb;

	igt_assert_eq(fstat(a, &sa), 0);
	igt_assert_eq(fstat(b, &sb), 0);
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static uint64_t vram_bytes(void)
{
	FILE *f = fopen("/sys/module/amdgpu_ualink_vpod/parameters/vram_mb", "r");
	unsigned int mb = 16;

	if (f) {
		if (fscanf(f, "%u", &mb) != 1)
			mb = 16;
		fclose(f);
	}
	return (uint64_t)mb << 20;
}

static bool accel_exists(unsigned int id)
{
	return accel_find(vpod.accel, vpod.n_accel, id);
}

/* an accelerator ID that no accelerator has, @want if possible */
static unsigned int absent_accel(unsigned int want)
{
	int id;

	if (!accel_exists(want))
		return want;
	for (id = VPOD_MAX_ACCELS - 1; id >= 0; id--)
		if (!accel_exists(id))
			return id;
	igt_skip("every accelerator ID is in use\n");
}

/* INFO */

/* "@first @first+1 ... @last", or the IDs of vPod 0's active nodes */
static void ids_text(char *out, size_t size, const struct vpod_accel *accel,
		     int n, int below)
{
	size_t len = 0;
	int i;

	out[0] = '\0';
	for (i = 0; i < n; i++) {
		bool in = below >= 0 ? accel[i].id < (unsigned int)below :
			  accel[i].vpod == 0 && !strcmp(accel[i].state, "active");

		if (in)
			len += snprintf(out + len, size - len, "%s%u",
					len ? " " : "", accel[i].id);
		igt_assert(len < size);
	}
}

static void expect_sysfs_u64(unsigned int id, const char *attr, uint64_t want)
{
	char text[32];

	snprintf(text, sizeof(text), "%" PRIu64, want);
	expect_sysfs(id, attr, text);
}

/*
 * The ualink/ directory of each render node's device, read as libhsakmt
 * reads accel_state: "ready" on every active accelerator; the IDs as INFO
 * and debugfs give them; the counters follow an export and its import.
 */
static void test_sysfs(void)
{
	static struct vpod_accel accel[VPOD_MAX_ACCELS];
	static char want[8192];
	struct drm_amdgpu_ualink_handle h;
	struct drm_amdgpu_ualink_info info;
	int i, n, fd0, fd1;
	char buf[64];

	vpod_read_nodes(accel, &n);
	for (i = 0; i < vpod.n_drm; i++) {
		int fd = vpod_open(i);

		igt_assert_eq(ualink_info(fd, &info), 0);
		expect_sysfs(i, "accel_state", "ready");
		expect_sysfs_u64(i, "accel_id", i);
		expect_sysfs_u64(i, "vpod_id", info.vpod_id);
		expect_sysfs_u64(i, "vpod_size", info.vpod_size);
		ids_text(want, sizeof(want), accel, n, -1);
		expect_sysfs(i, "vpod_active_accels", want);
		ids_text(want, sizeof(want), accel, n, vpod.n_drm);
		expect_sysfs(i, "local_accels", want);
		expect_sysfs_u64(i, "exports", count_of(i, C_EXPORTS));
		expect_sysfs_u64(i, "imports", count_of(i, C_IMPORTS));
		/* the link is emulated; what the emulator cannot know says so */
		expect_sysfs(i, "link_type", "emulated");
		expect_sysfs_u64(i, "ppod_size", n);
		expect_sysfs(i, "bandwidth", "unknown");
		expect_sysfs(i, "ppod_id", "unknown");
		expect_sysfs_u64(i, "fabric_refusals", fabric_faults(i));
		/* and what only amdgpu's IP could say is not there */
		igt_assert_eq(sysfs_read(i, "no_such_attribute", buf, sizeof(buf)), -ENOENT);
		vpod_close(fd);
	}

	fd0 = vpod_open(0);
	fd1 = vpod_open(1);
	exported_buffer(fd1, SZ_64K, 5, &h);
	expect_sysfs_u64(1, "exports", 1);
	expect_sysfs_u64(1, "pins", 1);
	expect_sysfs_u64(1, "grants", 0);
	import_gem(fd0, h, NULL);
	expect_sysfs_u64(1, "grants", 1);
	expect_sysfs_u64(0, "imports", 1);
	igt_assert(sysfs_read(0, "peers_connected", buf, sizeof(buf)) > 0);
	igt_assert_f(atoi(buf) >= 1, "node 0: peers_connected %s after an import\n", buf);
	vpod_cleanup();
	wait_no_leaks(VPOD_ASYNC_MS);
	expect_sysfs_u64(1, "exports", 0);
	expect_sysfs_u64(0, "imports", 0);
}

static void test_info(void)
{
	static struct vpod_accel accel[VPOD_MAX_ACCELS];
	struct drm_amdgpu_ualink_info info;
	struct drm_amdgpu_ualink args;
	unsigned int in_vpod0 = 0;
	int i, n, drm = 0, fd;

	vpod_read_nodes(accel, &n);
	for (i = 0; i < n; i++) {
		in_vpod0 += accel[i].vpod == 0;
		if (strcmp(accel[i].drm, "-"))
			drm++;
		else
			igt_assert_f(accel[i].id >= (unsigned int)vpod.n_drm,
				     "fabric-only node %u has the ID of a DRM node\n",
				     accel[i].id);
	}
	igt_assert_eq(drm, vpod.n_drm);

	for (i = 0; i < vpod.n_drm; i++) {
		const struct vpod_accel *a = accel_find(accel, n, i);

		fd = vpod_open(i);
		memset(&info, 0xff, sizeof(info));
		igt_assert_eq(ualink_info(fd, &info), 0);
		igt_assert_eq_u32(info.accel_id, i);
		igt_assert_eq_u32(info.vpod_id, 0);
		igt_assert_eq_u32(info.vpod_size, in_vpod0);
		igt_assert_eq_u32(info.state, AMDGPU_UALINK_STATE_ACTIVE);
		igt_assert_f(a, "node %d is missing from nodes\n", i);
		igt_assert_eq_u32(a->vpod, 0);
		igt_assert(!strcmp(a->state, "active"));
		igt_assert_f(!strcmp(a->drm, strrchr(vpod.path[i], '/') + 1),
			     "nodes says node %d is %s, it is %s\n", i, a->drm,
			     vpod.path[i]);

		memset(&args, 0, sizeof(args));
		args.op = AMDGPU_UALINK_OP_INFO;
		args.pad = 1;
		igt_assert_eq(ualink_ioctl(fd, &args), -EINVAL);

		memset(&args, 0, sizeof(args));
		args.op = AMDGPU_UALINK_OP_INFO;
		args.u.info.accel_id = 1;
		igt_assert_eq(ualink_ioctl(fd, &args), -EINVAL);

		memset(&args, 0, sizeof(args));
		args.op = AMDGPU_UALINK_OP_INFO;
		args.u.raw[5] = 1;
		igt_assert_eq(ualink_ioctl(fd, &args), -EINVAL);
		vpod_close(fd);
	}
}

/* export */

static void test_export_basic(void)
{
	struct drm_amdgpu_ualink_handle h;
	int fd0 = vpod_open(0), fd1 = vpod_open(1);
	uint32_t gem;

	gem = vram_create(fd0, SZ_64K);
	igt_assert_eq_u64(count_of(0, C_EXPORTS), 0);
	h = export_ok(fd0, gem);
	igt_assert(h.lo || h.hi);
	igt_assert_eq_u32(handle_accel(h), 0);
	igt_assert_eq_u64(count_of(0, C_EXPORTS), 1);

	gem_close(fd0, gem);
	wait_count(0, C_EXPORTS, 0, VPOD_ASYNC_MS);
	expect_import_error(fd1, h, ENOENT);
}

static void test_export_same_handle(void)
{
	struct drm_amdgpu_ualink_handle h1, h2, h3;
	int fd = vpod_open(0);
	uint32_t a, b;

	a = vram_create(fd, SZ_64K);
	b = vram_create(fd, SZ_64K);
	h1 = export_ok(fd, a);
	h2 = export_ok(fd, a);
	igt_assert_f(handle_eq(h1, h2),
		     "second export gave %016llx:%016llx, first %016llx:%016llx\n",
		     (unsigned long long)h2.hi, (unsigned long long)h2.lo,
		     (unsigned long long)h1.hi, (unsigned long long)h1.lo);
	h3 = export_ok(fd, b);
	igt_assert(!handle_eq(h1, h3));
	igt_assert(handle_eq(export_ok(fd, b), h3));
	igt_assert(handle_eq(export_ok(fd, a), h1));
	igt_assert_eq_u64(count_of(0, C_EXPORTS), 2);
}

static void test_export_handle_accel_id(void)
{
	struct drm_amdgpu_ualink_handle h[VPOD_MIN_DRM_NODES * 4];
	int i, j, k, n = 0;

	for (i = 0; i < VPOD_MIN_DRM_NODES; i++) {
		int fd = vpod_open(i);

		for (j = 0; j < 4; j++) {
			h[n] = export_ok(fd, vram_create(fd, SZ_4K));
			igt_assert_eq_u32(handle_accel(h[n]), i);
			/* the other 118 bits are random, not zero */
			igt_assert(h[n].hi ||
				   h[n].lo >> AMDGPU_UALINK_HANDLE_ACCEL_ID_BITS);
			for (k = 0; k < n; k++)
				igt_assert(!handle_eq(h[k], h[n]));
			n++;
		}
	}
	for (i = 0; i < vpod.n_fabric; i++) {
		igt_assert_eq_u32(handle_accel(vpod.fabric[i].handle),
				  vpod.fabric[i].id);
		igt_assert(vpod.fabric[i].id >= (unsigned int)vpod.n_drm);
	}
}

static void test_export_invalid_args(void)
{
	static const uint32_t bad_ops[] = { 0, 5, 0x80000002, 0xffffffff };
	struct drm_amdgpu_ualink_handle h;
	struct drm_amdgpu_ualink args;
	int fd = vpod_open(0);
	unsigned int i;
	uint32_t gem;

	gem = vram_create(fd, SZ_64K);

	igt_assert_eq(ualink_export(fd, gem + 1000, &h), -ENOENT);
	igt_assert_eq(ualink_export(fd, 0, &h), -ENOENT);

#define EXPORT_ARGS() do { \
		memset(&args, 0, sizeof(args)); \
		args.op = AMDGPU_UALINK_OP_EXPORT; \
		args.u.exp.gem_handle = gem; \
	} while (0)

	EXPORT_ARGS();
	args.pad = 1;
	igt_assert_eq(ualink_ioctl(fd, &args), -EINVAL);

	EXPORT_ARGS();
	args.u.exp.pad = 1;
	igt_assert_eq(ualink_ioctl(fd, &args), -EINVAL);

	EXPORT_ARGS();
	args.u.exp.handle.lo = 1;
	igt_assert_eq(ualink_ioctl(fd, &args), -EINVAL);

	EXPORT_ARGS();
	args.u.exp.handle.hi = 1ull << 63;
	igt_assert_eq(ualink_ioctl(fd, &args), -EINVAL);

	EXPORT_ARGS();
	args.u.raw[5] = 1;	/* past struct drm_amdgpu_ualink_export */
	igt_assert_eq(ualink_ioctl(fd, &args), -EINVAL);

	for (i = 0; i < sizeof(bad_ops) / sizeof(bad_ops[0]); i++) {
		EXPORT_ARGS();
		args.op = bad_ops[i];
		igt_assert_eq(ualink_ioctl(fd, &args), -EINVAL);
	}
#undef EXPORT_ARGS

	/* nothing was exported by the calls above; a good one works */
	igt_assert_eq_u64(count_of(0, C_EXPORTS), 0);
	h = export_ok(fd, gem);
	igt_assert_eq_u32(handle_accel(h), 0);
}

static void test_export_refused(void)
{
	struct drm_amdgpu_ualink_handle h, out;
	int fd0 = vpod_open(0), fd1 = vpod_open(1);
	uint32_t sys, imported;

	sys = bo_create(fd0, SZ_64K, AMDGPU_UALINK_VPOD_DOMAIN_SYSTEM);
	igt_assert_eq(ualink_export(fd0, sys, &out), -EPERM);

	exported_buffer(fd0, SZ_64K, 1, &h);
	imported = import_gem(fd1, h, NULL);
	igt_assert_eq(ualink_export(fd1, imported, &out), -EPERM);
	igt_assert_eq_u64(count_of(1, C_EXPORTS), 0);
	igt_assert_eq_u64(count_of(0, C_EXPORTS), 1);
}

/* import */

static void test_import_basic(void)
{
	struct drm_amdgpu_ualink_handle h;
	int fd0 = vpod_open(0), fd1 = vpod_open(1), d0, d1;
	uint32_t exp, imp;

	exp = vram_create(fd1, SZ_64K);
	h = export_ok(fd1, exp);

	igt_assert_eq(ualink_import(fd0, h, 0, &d0), 0);
	vpod_track_fd(d0);
	igt_assert(!cloexec(d0));
	igt_assert_eq(ualink_import(fd0, h, AMDGPU_UALINK_IMPORT_CLOEXEC, &d1), 0);
	vpod_track_fd(d1);
	igt_assert(cloexec(d1));

	imp = prime_handle(fd0, d1);
	/* zeroed at creation */
	gpu_expect_u32(fd0, imp, 0, SZ_64K, 0);
	/* what the exporter writes, the importer reads */
	gpu_fill(fd1, exp, 0, SZ_64K, 7);
	gpu_expect(fd0, imp, 0, SZ_64K, 7);

	igt_assert_lte(1, count_of(0, C_IMPORTS));
	igt_assert_lte(1, count_of(1, C_GRANTS));
	igt_assert_lte(1, count_of(1, C_PINS));

	gem_close(fd0, imp);
	vpod_close(d0);
	vpod_close(d1);
	wait_count(0, C_IMPORTS, 0, VPOD_ASYNC_MS);
	wait_count(1, C_GRANTS, 0, VPOD_ASYNC_MS);
	wait_count(1, C_NPA_BYTES, 0, VPOD_ASYNC_MS);
	/* an export is pinned until it ends, importers or not */
	igt_assert_eq_u64(count_of(1, C_PINS), count_of(1, C_EXPORTS));
}

static void test_import_twice(void)
{
	struct drm_amdgpu_ualink_handle h;
	int fd0 = vpod_open(0), fd1 = vpod_open(1), a, b;
	uint32_t ga, gb;

	exported_buffer(fd1, SZ_64K, 3, &h);
	a = import_ok(fd0, h);
	b = import_ok(fd0, h);
	igt_assert_neq(a, b);
	igt_assert_f(same_file(a, b), "two imports of a live handle are two dma-bufs\n");
	ga = prime_handle(fd0, a);
	gb = prime_handle(fd0, b);
	igt_assert_eq_u32(ga, gb);
	gpu_expect(fd0, ga, 0, SZ_64K, 3);

	/* one import, one grant */
	igt_assert_eq_u64(count_of(0, C_IMPORTS), 1);
	igt_assert_eq_u64(count_of(1, C_GRANTS), 1);

	/* still imported while one fd is left */
	gem_close(fd0, ga);
	vpod_close(a);
	ga = prime_handle(fd0, b);
	gpu_expect(fd0, ga, 0, SZ_64K, 3);
	igt_assert_eq_u64(count_of(1, C_GRANTS), 1);
}

/* GEM_CLOSE's errno, or 0 */
static int gem_close_errno(int fd, uint32_t handle)
{
	struct drm_gem_close arg = { .handle = handle };

	return drmIoctl(fd, DRM_IOCTL_GEM_CLOSE, &arg) ? -errno : 0;
}

/*
 * PRIME's rules for the GEM handles of imports: a file has one handle per
 * buffer, whichever call made it. A batch naming a handle twice, a second
 * batch, and a PRIME import of AMDGPU_UALINK_OP_IMPORT's fd all give the
 * same handle, as libdrm's amdgpu_bo_import() (one table entry per GEM
 * handle) expects; another file has its own; one GEM_CLOSE closes it (a
 * second finds no such handle), and the next import makes one anew. Our
 * own handle gets the handle PRIME knows for our buffer. Anchored by
 * PRIME's own rule on the same driver: a buffer's fd comes back as its
 * handle.
 */
static void test_import_prime_handles(void)
{
	int fd0 = vpod_open(0), fd1 = vpod_open(1), fd0b = vpod_open(0), d;
	struct drm_amdgpu_ualink_batch_entry e[3] = {};
	struct drm_amdgpu_ualink_handle h, own;
	uint32_t g, mine, again;

	/* the anchor: PRIME of our own buffer, out and back */
	mine = exported_buffer(fd0, SZ_64K, 31, &own);
	igt_assert_eq(drmPrimeHandleToFD(fd0, mine, DRM_CLOEXEC, &d), 0);
	igt_assert_eq_u32(prime_handle(fd0, d), mine);
	vpod_close(d);

	exported_buffer(fd1, SZ_64K, 32, &h);
	e[0].handle = h;
	e[1].handle = h;
	e[2].handle = own;
	igt_assert_eq(ualink_import_batch(fd0, e, 3, 0), 0);
	igt_assert_eq(e[0].error, 0);
	igt_assert_eq(e[1].error, 0);
	igt_assert_eq(e[2].error, 0);
	g = e[0].gem_handle;
	igt_assert_eq_u32(e[1].gem_handle, g);
	igt_assert_eq_u32(e[2].gem_handle, mine);
	igt_assert_neq_u32(g, mine);
	gpu_expect(fd0, g, 0, SZ_64K, 32);

	/* a second batch, and the import op's fd through PRIME */
	memset(e, 0, sizeof(e));
	e[0].handle = h;
	igt_assert_eq(ualink_import_batch(fd0, e, 1, 0), 0);
	igt_assert_eq(e[0].error, 0);
	igt_assert_eq_u32(e[0].gem_handle, g);
	d = import_ok(fd0, h);
	igt_assert_eq_u32(prime_handle(fd0, d), g);
	/* another file: a handle of its own, to the same memory */
	again = prime_handle(fd0b, d);
	gpu_expect(fd0b, again, 0, SZ_64K, 32);
	igt_assert_eq_u64(count_of(0, C_IMPORTS), 1);

	/* one GEM_CLOSE closes it; the fd keeps the import */
	igt_assert_eq(gem_close_errno(fd0, g), 0);
	igt_assert_eq(gem_close_errno(fd0, g), -EINVAL);
	memset(e, 0, sizeof(e));
	e[0].handle = h;
	igt_assert_eq(ualink_import_batch(fd0, e, 1, 0), 0);
	igt_assert_eq(e[0].error, 0);
	g = e[0].gem_handle;
	gpu_expect(fd0, g, 0, SZ_64K, 32);
	igt_assert_eq_u32(prime_handle(fd0, d), g);

	vpod_close(d);
	gem_close(fd0, g);
	gem_close(fd0b, again);
	vpod_cleanup();
	wait_no_leaks(VPOD_ASYNC_MS);
}

static void test_import_concurrent(void)
{
	const int children = 8, rounds = 4;
	const uint64_t size = 256 * 1024;
	struct drm_amdgpu_ualink_handle h;
	int fd1 = vpod_open(1);
	uint64_t start;

	exported_buffer(fd1, size, 11, &h);
	start = vpod_now_ms() + 500;
	igt_fork(child, children) {
		int fd = open(vpod.path[0], O_RDWR | O_CLOEXEC);
		int r;

		igt_assert_fd(fd);
		while (vpod_now_ms() < start)
			;
		for (r = 0; r < rounds; r++) {
			uint32_t gem;
			int dmabuf, ret;

			ret = ualink_import(fd, h, AMDGPU_UALINK_IMPORT_CLOEXEC,
					    &dmabuf);
			igt_assert_f(ret == 0, "child %d round %d: import: %s\n",
				     child, r, strerror(-ret));
			igt_assert_eq(drmPrimeFDToHandle(fd, dmabuf, &gem), 0);
			gpu_expect(fd, gem, 0, size, 11);
			gem_close(fd, gem);
			close(dmabuf);
		}
		close(fd);
	}
	igt_waitchildren();
	wait_count(0, C_IMPORTS, 0, VPOD_ASYNC_MS);
	wait_count(1, C_GRANTS, 0, VPOD_ASYNC_MS);
	wait_count(1, C_NPA_BYTES, 0, VPOD_ASYNC_MS);
	/* an export is pinned until it ends, importers or not */
	igt_assert_eq_u64(count_of(1, C_PINS), count_of(1, C_EXPORTS));
}

static void test_import_unknown_handle(void)
{
	struct drm_amdgpu_ualink_handle h1, h0, dead;
	int fd0 = vpod_open(0), fd1 = vpod_open(1), i;
	uint32_t gem;

	exported_buffer(fd1, SZ_64K, 1, &h1);
	exported_buffer(fd0, SZ_64K, 2, &h0);

	for (i = 0; i < 4; i++) {
		/* a live exporter that does not know the handle */
		expect_import_error(fd0, flip_hi(h1), ENOENT);
		expect_import_error(fd0, flip_lo(h1), ENOENT);
		/* our own accelerator ID, unknown handle */
		expect_import_error(fd0, flip_hi(h0), ENOENT);
		expect_import_error(fd0, flip_lo(h0), ENOENT);
	}
	for (i = 0; i < vpod.n_fabric; i++)
		expect_import_error(fd0, flip_hi(vpod.fabric[i].handle), ENOENT);

	/* a handle that died with its buffer's last GEM handle */
	gem = vram_create(fd1, SZ_4K);
	dead = export_ok(fd1, gem);
	gem_close(fd1, gem);
	expect_import_error(fd0, dead, ENOENT);
	expect_import_error(fd1, dead, ENOENT);

	/* the real handle still works; the failed imports are gone */
	gpu_expect(fd0, import_gem(fd0, h1, NULL), 0, SZ_64K, 1);
	wait_count(0, C_IMPORTS, 1, VPOD_ASYNC_MS);
}

static void test_import_other_vpod(void)
{
	struct drm_amdgpu_ualink_info info0, info3;
	struct drm_amdgpu_ualink_handle h0, h3;
	static struct vpod_accel accel[VPOD_MAX_ACCELS];
	const struct vpod_accel *a;
	int fd0 = vpod_open(0), fd3 = vpod_open(3), n;
	uint32_t size0;

	exported_buffer(fd0, SZ_64K, 5, &h0);
	exported_buffer(fd3, SZ_64K, 6, &h3);
	igt_assert_eq(ualink_info(fd0, &info0), 0);
	size0 = info0.vpod_size;

	set_vpod(3, 1);
	vpod_read_nodes(accel, &n);
	a = accel_find(accel, n, 3);
	igt_assert(a);
	igt_assert_eq_u32(a->vpod, 1);
	igt_assert_eq(ualink_info(fd3, &info3), 0);
	igt_assert_eq_u32(info3.vpod_id, 1);
	igt_assert_eq_u32(info3.vpod_size, 1);
	igt_assert_eq(ualink_info(fd0, &info0), 0);
	igt_assert_eq_u32(info0.vpod_id, 0);
	igt_assert_eq_u32(info0.vpod_size, size0 - 1);

	expect_import_error(fd0, h3, EACCES);
	expect_import_error(fd3, h0, EACCES);
	igt_assert_eq_u64(count_of(3, C_GRANTS), 0);
	igt_assert_eq_u64(count_of(0, C_GRANTS), 0);

	set_vpod(3, 0);
	igt_assert_eq(ualink_info(fd0, &info0), 0);
	igt_assert_eq_u32(info0.vpod_size, size0);
	gpu_expect(fd0, import_gem(fd0, h3, NULL), 0, SZ_64K, 6);
	gpu_expect(fd3, import_gem(fd3, h0, NULL), 0, SZ_64K, 5);
}

static void test_import_nonexistent_accel(void)
{
	/* 1000, and the ID just past the last accelerator */
	unsigned int ids[2] = { absent_accel(1000), absent_accel(vpod.n_accel) };
	struct drm_amdgpu_ualink_handle h;
	int fd0 = vpod_open(0), i;

	for (i = 0; i < 2; i++) {
		h.lo = rand64() << AMDGPU_UALINK_HANDLE_ACCEL_ID_BITS | ids[i];
		h.hi = rand64();
		expect_import_error(fd0, h, EACCES);
	}
	igt_assert_eq_u64(count_of(0, C_IMPORTS), 0);
}

static void test_import_own_handle(void)
{
	struct drm_amdgpu_ualink_handle h;
	int fdA = vpod_open(0), fdB = vpod_open(0), fd1 = vpod_open(1), d, d1;
	uint32_t gemA, gA2, gB, g1;

	gemA = exported_buffer(fdA, SZ_64K, 21, &h);
	d = import_ok(fdA, h);
	/* our own buffer, not an import through the fabric */
	igt_assert_eq_u64(count_of(0, C_IMPORTS), 0);
	igt_assert_eq_u64(count_of(0, C_GRANTS), 0);

	gA2 = prime_handle(fdA, d);
	gpu_expect(fdA, gA2, 0, SZ_64K, 21);
	gB = prime_handle(fdB, d);
	gpu_expect(fdB, gB, 0, SZ_64K, 21);
	/* the same memory, not a copy */
	gpu_fill(fdB, gB, 0, SZ_64K, 22);
	gpu_expect(fdA, gemA, 0, SZ_64K, 22);
	/* the same GEM object: the same UALink handle */
	igt_assert(handle_eq(export_ok(fdB, gB), h));
	igt_assert_eq_u64(count_of(0, C_EXPORTS), 1);

	/* the handle lives while any GEM handle of the buffer does */
	vpod_close(d);
	if (gA2 != gemA)
		gem_close(fdA, gA2);
	gem_close(fdA, gemA);
	g1 = import_gem(fd1, h, &d1);
	gpu_expect(fd1, g1, 0, SZ_64K, 22);
	gem_close(fd1, g1);
	vpod_close(d1);
	wait_count(0, C_GRANTS, 0, VPOD_ASYNC_MS);

	gem_close(fdB, gB);
	expect_import_error(fd1, h, ENOENT);
	wait_count(0, C_EXPORTS, 0, VPOD_ASYNC_MS);
}

static void test_import_invalid_args(void)
{
	struct drm_amdgpu_ualink_handle h;
	struct drm_amdgpu_ualink args;
	int fd0 = vpod_open(0), fd1 = vpod_open(1);

	exported_buffer(fd1, SZ_64K, 1, &h);

#define IMPORT_ARGS() do { \
		memset(&args, 0, sizeof(args)); \
		args.op = AMDGPU_UALINK_OP_IMPORT; \
		args.u.imp.handle = h; \
	} while (0)

	IMPORT_ARGS();
	args.pad = 1;
	igt_assert_eq(ualink_ioctl(fd0, &args), -EINVAL);

	IMPORT_ARGS();
	args.u.imp.flags = AMDGPU_UALINK_IMPORT_FDS;	/* batch only */
	igt_assert_eq(ualink_ioctl(fd0, &args), -EINVAL);

	IMPORT_ARGS();
	args.u.imp.flags = 0x80000000;
	igt_assert_eq(ualink_ioctl(fd0, &args), -EINVAL);

	IMPORT_ARGS();
	args.u.imp.fd = -1;		/* an output: must be zero */
	igt_assert_eq(ualink_ioctl(fd0, &args), -EINVAL);

	IMPORT_ARGS();
	args.u.imp.fd = 3;
	igt_assert_eq(ualink_ioctl(fd0, &args), -EINVAL);

	IMPORT_ARGS();
	args.u.imp.handle.lo = 0;
	args.u.imp.handle.hi = 0;
	igt_assert_eq(ualink_ioctl(fd0, &args), -EINVAL);

	IMPORT_ARGS();
	args.u.raw[3] = 1;	/* past struct drm_amdgpu_ualink_import */
	igt_assert_eq(ualink_ioctl(fd0, &args), -EINVAL);

	IMPORT_ARGS();
	args.u.raw[5] = 1ull << 63;
	igt_assert_eq(ualink_ioctl(fd0, &args), -EINVAL);
#undef IMPORT_ARGS

	igt_assert_eq_u64(count_of(0, C_IMPORTS), 0);
	igt_assert_eq_u64(count_of(1, C_GRANTS), 0);
	gpu_expect(fd0, import_gem(fd0, h, NULL), 0, SZ_64K, 1);
}

/* batch */

struct batch_case {
	struct drm_amdgpu_ualink_batch_entry *e;
	uint32_t *expect;	/* the u32 each buffer holds; unused if bad */
	uint64_t *size;
	int n, bad, own;
};

/*
 * On node 0: node 0's own export, one export of every other DRM node, every
 * fabric heap and one unknown handle. A fabric heap holds its accelerator's
 * ID in every word; a DRM node's buffer 0x5a5a0000 | ID.
 */
static void batch_prepare(struct batch_case *b, int fd0)
{
	int max = vpod.n_drm + vpod.n_fabric + 1, i;

	b->e = calloc(max, sizeof(*b->e));
	b->expect = calloc(max, sizeof(*b->expect));
	b->size = calloc(max, sizeof(*b->size));
	igt_assert(b->e && b->expect && b->size);
	b->n = 0;
	for (i = 0; i < vpod.n_drm; i++) {
		int fd = i ? vpod_open(i) : fd0;
		uint32_t gem = vram_create(fd, SZ_64K);

		fill_u32(fd, gem, SZ_64K, 0x5a5a0000 | i);
		b->e[b->n].handle = export_ok(fd, gem);
		b->expect[b->n] = 0x5a5a0000 | i;
		b->size[b->n++] = SZ_64K;
	}
	b->own = 0;
	for (i = 0; i < vpod.n_fabric; i++) {
		b->e[b->n].handle = vpod.fabric[i].handle;
		b->expect[b->n] = vpod.fabric[i].id;
		b->size[b->n++] = VPOD_FABRIC_HEAP_SIZE;
	}
	b->bad = b->n;
	b->e[b->n++].handle = flip_hi(b->e[1].handle);
}

static void batch_free(struct batch_case *b)
{
	free(b->e);
	free(b->expect);
	free(b->size);
}

static void batch_check(struct batch_case *b, int fd0, bool fds)
{
	uint32_t word;
	int i, j;

	for (i = 0; i < b->n; i++) {
		struct drm_amdgpu_ualink_batch_entry *e = &b->e[i];

		igt_assert_eq(e->pad, 0);
		if (i == b->bad) {
			igt_assert_eq(e->error, -ENOENT);
			igt_assert_eq_u32(e->gem_handle, 0);
			igt_assert_eq(e->fd, -1);
			continue;
		}
		igt_assert_f(e->error == 0, "entry %d (accelerator %u): %s\n",
			     i, handle_accel(e->handle), strerror(-e->error));
		igt_assert_neq_u32(e->gem_handle, 0);
		if (!fds) {
			igt_assert_eq(e->fd, -1);
		} else {
			igt_assert_fd(e->fd);
			vpod_track_fd(e->fd);
		}
		gpu_expect_u32(fd0, e->gem_handle, 0, b->size[i], b->expect[i]);
		igt_assert_eq(gpu_access(fd0, e->gem_handle, 0, b->size[i] - 4,
					 &word, 4), 0);
		igt_assert_eq(gpu_access(fd0, e->gem_handle, 0, b->size[i],
					 &word, 4), -EINVAL);
		for (j = 0; j < i; j++)
			if (j != b->own && i != b->own && j != b->bad)
				igt_assert_neq_u32(e->gem_handle,
						   b->e[j].gem_handle);
	}
}

static void test_import_batch(void)
{
	struct batch_case b;
	int fd0 = vpod_open(0), i;

	batch_prepare(&b, fd0);
	igt_assert_eq(ualink_import_batch(fd0, b.e, b.n, 0), 0);
	batch_check(&b, fd0, false);
	/* every entry but our own and the unknown one is an import (the
	 * refused one goes asynchronously, like every last put) */
	wait_count(0, C_IMPORTS, b.n - 2, VPOD_ASYNC_MS);

	for (i = 0; i < b.n; i++)
		if (i != b.bad)
			gem_close(fd0, b.e[i].gem_handle);
	batch_free(&b);
	vpod_cleanup();
	wait_no_leaks(VPOD_ASYNC_MS);
}

static void test_import_batch_fds(void)
{
	struct drm_amdgpu_ualink_batch_entry one = {};
	struct batch_case b;
	int fd0 = vpod_open(0), i;

	batch_prepare(&b, fd0);
	igt_assert_eq(ualink_import_batch(fd0, b.e, b.n,
					  AMDGPU_UALINK_IMPORT_FDS |
					  AMDGPU_UALINK_IMPORT_CLOEXEC), 0);
	batch_check(&b, fd0, true);
	for (i = 0; i < b.n; i++) {
		uint32_t gem;

		if (i == b.bad)
			continue;
		igt_assert(cloexec(b.e[i].fd));
		/* the fd is the same buffer as the GEM handle */
		gem = prime_handle(fd0, b.e[i].fd);
		gpu_expect_u32(fd0, gem, 0, b.size[i], b.expect[i]);
		if (i != b.own) {
			uint32_t word = 0xdead0000 | i;

			gpu_write(fd0, gem, 8, &word, 4);
			word = 0;
			gpu_read(fd0, b.e[i].gem_handle, 8, &word, 4);
			igt_assert_eq_u32(word, 0xdead0000 | i);
		}
	}

	/* without CLOEXEC */
	one.handle = b.e[1].handle;
	igt_assert_eq(ualink_import_batch(fd0, &one, 1,
					  AMDGPU_UALINK_IMPORT_FDS), 0);
	igt_assert_eq(one.error, 0);
	igt_assert_fd(one.fd);
	vpod_track_fd(one.fd);
	igt_assert(!cloexec(one.fd));
	igt_assert(same_file(one.fd, b.e[1].fd));

	batch_free(&b);
	vpod_cleanup();
	wait_no_leaks(VPOD_ASYNC_MS);
}

static void test_import_batch_invalid_args(void)
{
	const uint32_t n_big = AMDGPU_UALINK_BATCH_MAX + 1;
	struct drm_amdgpu_ualink_batch_entry e[2], *big, *ro;
	struct drm_amdgpu_ualink_handle h;
	struct drm_amdgpu_ualink args;
	int fd0 = vpod_open(0), fd1 = vpod_open(1);
	uint32_t i;
	void *none;

	exported_buffer(fd1, SZ_64K, 1, &h);

#define ENTRIES() do { \
		memset(e, 0, sizeof(e)); \
		e[0].handle = h; \
		e[1].handle = h; \
	} while (0)

	ENTRIES();
	igt_assert_eq(ualink_import_batch(fd0, e, 0, 0), -EINVAL);

	big = calloc(n_big, sizeof(*big));
	igt_assert(big);
	for (i = 0; i < n_big; i++)
		big[i].handle = h;
	igt_assert_eq(ualink_import_batch(fd0, big, n_big, 0), -EINVAL);
	igt_assert_eq(ualink_import_batch(fd0, big, 0xffffffff, 0), -EINVAL);
	free(big);

	ENTRIES();
	igt_assert_eq(ualink_import_batch(fd0, e, 2, 0x8), -EINVAL);
	igt_assert_eq(ualink_import_batch(fd0, e, 2, 0x80000000), -EINVAL);

	memset(&args, 0, sizeof(args));
	args.op = AMDGPU_UALINK_OP_IMPORT_BATCH;
	args.u.batch.entries = (uintptr_t)e;
	args.u.batch.count = 2;
	args.pad = 1;
	igt_assert_eq(ualink_ioctl(fd0, &args), -EINVAL);
	args.pad = 0;
	args.u.raw[2] = 1;	/* past struct drm_amdgpu_ualink_import_batch */
	igt_assert_eq(ualink_ioctl(fd0, &args), -EINVAL);

	/* a malformed second entry fails the whole call: nothing imported */
	ENTRIES();
	e[1].pad = 1;
	igt_assert_eq(ualink_import_batch(fd0, e, 2, 0), -EINVAL);
	igt_assert_eq_u32(e[0].gem_handle, 0);
	ENTRIES();
	e[1].gem_handle = 1;
	igt_assert_eq(ualink_import_batch(fd0, e, 2, 0), -EINVAL);
	ENTRIES();
	e[1].fd = -1;
	igt_assert_eq(ualink_import_batch(fd0, e, 2, 0), -EINVAL);
	ENTRIES();
	e[1].fd = 3;
	igt_assert_eq(ualink_import_batch(fd0, e, 2, 0), -EINVAL);
	ENTRIES();
	e[1].error = -ENOENT;
	igt_assert_eq(ualink_import_batch(fd0, e, 2, 0), -EINVAL);
	ENTRIES();
	e[1].handle.lo = e[1].handle.hi = 0;
	igt_assert_eq(ualink_import_batch(fd0, e, 2, 0), -EINVAL);
	igt_assert_eq_u64(count_of(0, C_IMPORTS), 0);
	igt_assert_eq_u64(count_of(1, C_GRANTS), 0);

	/* entries that cannot be read */
	igt_assert_eq(ualink_import_batch(fd0, NULL, 1, 0), -EFAULT);
	none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	igt_assert(none != MAP_FAILED);
	igt_assert_eq(ualink_import_batch(fd0, none, 1, 0), -EFAULT);
	munmap(none, 4096);
	igt_assert_eq_u64(count_of(0, C_IMPORTS), 0);
	/* an array running off the end of the mapping */
	none = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	igt_assert(none != MAP_FAILED);
	igt_assert_eq(munmap((char *)none + 4096, 4096), 0);
	ro = (struct drm_amdgpu_ualink_batch_entry *)((char *)none + 4096) - 1;
	memset(ro, 0, sizeof(*ro));
	ro->handle = h;
	igt_assert_eq(ualink_import_batch(fd0, ro, 2, 0), -EFAULT);
	munmap(none, 4096);
	igt_assert_eq_u64(count_of(0, C_IMPORTS), 0);

	/*
	 * Entries that can be read but not written: the imports are made
	 * and stay as GEM handles of the file, which its close releases.
	 */
	ro = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	igt_assert(ro != MAP_FAILED);
	memset(ro, 0, sizeof(*ro));
	ro->handle = h;
	igt_assert_eq(mprotect(ro, 4096, PROT_READ), 0);
	igt_assert_eq(ualink_import_batch(fd0, ro, 1, 0), -EFAULT);
	munmap(ro, 4096);
	/* the import stayed, with its grant, until the file closes */
	igt_assert_eq_u64(count_of(0, C_IMPORTS), 1);
	igt_assert_eq_u64(count_of(1, C_GRANTS), 1);
	vpod_close(fd0);
	wait_count(0, C_IMPORTS, 0, VPOD_ASYNC_MS);
	wait_count(1, C_GRANTS, 0, VPOD_ASYNC_MS);
	wait_count(1, C_NPA_BYTES, 0, VPOD_ASYNC_MS);
	/* an export is pinned until it ends, importers or not */
	igt_assert_eq_u64(count_of(1, C_PINS), count_of(1, C_EXPORTS));
#undef ENTRIES
}

/* CPU access */

static void test_no_cpu_access(void)
{
	struct drm_amdgpu_ualink_handle h;
	int fd0 = vpod_open(0), fd1 = vpod_open(1), d;
	uint32_t exp, imp;
	uint64_t offset = 0;
	void *p;

	exp = exported_buffer(fd1, SZ_64K, 31, &h);
	d = import_ok(fd0, h);
	p = mmap(NULL, SZ_64K, PROT_READ, MAP_SHARED, d, 0);
	igt_assert_f(p == MAP_FAILED, "mmap of an import's dma-buf worked\n");
	p = mmap(NULL, SZ_64K, PROT_READ | PROT_WRITE, MAP_SHARED, d, 0);
	igt_assert(p == MAP_FAILED);

	imp = prime_handle(fd0, d);
	igt_assert_eq(__gem_mmap_offset(fd0, imp, &offset), -EPERM);

	/* local device memory is CPU-mappable and shows the GPU's writes */
	igt_assert_eq(__gem_mmap_offset(fd1, exp, &offset), 0);
	p = mmap(NULL, SZ_64K, PROT_READ | PROT_WRITE, MAP_SHARED, fd1, offset);
	igt_assert(p != MAP_FAILED);
	igt_assert_eq(pattern_check(p, SZ_64K, 31, 0), -1);
	gpu_fill(fd1, exp, 100, 5000, 32);
	igt_assert_eq(pattern_check((char *)p + 100, 5000, 32, 100), -1);
	igt_assert_eq(pattern_check(p, 100, 31, 0), -1);
	/* the importer's writes too */
	gpu_fill(fd0, imp, 8192, 8192, 33);
	igt_assert_eq(pattern_check((char *)p + 8192, 8192, 33, 8192), -1);
	munmap(p, SZ_64K);
}

/* data */

static void test_data_import_reads_export(void)
{
	const uint64_t size = SZ_1M;
	struct drm_amdgpu_ualink_handle h;
	int fd0 = vpod_open(0), fd2 = vpod_open(2);
	uint32_t exp, imp;

	exp = exported_buffer(fd2, size, 41, &h);
	imp = import_gem(fd0, h, NULL);
	gpu_expect(fd0, imp, 0, size, 41);
	gpu_expect(fd0, imp, 4096 + 17, 3 * 4096, 41);
	/* later writes of the exporter are seen, not a stale copy */
	gpu_fill(fd2, exp, 65536, 65536, 42);
	gpu_expect(fd0, imp, 65536, 65536, 42);
	gpu_expect(fd0, imp, 0, 65536, 41);
	gpu_expect(fd0, imp, 131072, size - 131072, 41);
}

static void test_data_export_reads_import(void)
{
	const uint64_t size = SZ_1M;
	struct drm_amdgpu_ualink_handle h;
	int fd0 = vpod_open(0), fd2 = vpod_open(2), fd3 = vpod_open(3);
	uint32_t exp, imp, imp3;

	exp = exported_buffer(fd2, size, 0, &h);
	imp = import_gem(fd0, h, NULL);
	gpu_fill(fd0, imp, 0, size, 43);
	gpu_expect(fd2, exp, 0, size, 43);
	/* and another importer sees it too */
	imp3 = import_gem(fd3, h, NULL);
	gpu_expect(fd3, imp3, 0, size, 43);
	gpu_fill(fd3, imp3, 4000, 200, 44);
	gpu_expect(fd2, exp, 4000, 200, 44);
	gpu_expect(fd0, imp, 4000, 200, 44);
}

static void test_data_offsets(void)
{
	static const struct { uint64_t offset, size; } cases[] = {
		{ 0, 1 },
		{ 1, 3 },
		{ 4095, 2 },			/* across a 4 KiB page */
		{ 4093, 7 },
		{ 8191, 8193 },
		{ SZ_2M - 5, 10 },		/* across 2 MiB */
		{ SZ_2M - 4097, 4098 },
		{ 12345, 3 * SZ_1M },		/* many pages, unaligned */
		{ SZ_4M - 4096, 4096 },
		{ SZ_4M - 1, 1 },		/* the last byte */
		{ 0, SZ_4M },			/* all of it */
	};
	static const struct { uint64_t offset, size; } bad[] = {
		{ SZ_4M, 1 },
		{ SZ_4M - 1, 2 },
		{ 0, SZ_4M + 1 },
		{ SZ_4M + 4096, 4096 },
		{ ~0ull - 3, 8 },		/* wraps around */
		{ ~0ull, 1 },
	};
	const uint64_t size = SZ_4M;
	struct drm_amdgpu_ualink_handle h;
	int fd0 = vpod_open(0), fd1 = vpod_open(1);
	uint8_t *shadow, *buf;
	uint32_t exp, imp;
	unsigned int i, pass;

	igt_require_f(vram_bytes() >= size + SZ_1M,
		      "needs more than 4 MiB of device memory (vram_mb)\n");
	shadow = malloc(size);
	buf = malloc(size + 64);
	igt_assert(shadow && buf);
	exp = exported_buffer(fd1, size, 50, &h);
	pattern_fill(shadow, size, 50, 0);
	imp = import_gem(fd0, h, NULL);

	for (pass = 0; pass < 2; pass++) {
		/* pass 0: the importer writes; pass 1: the exporter writes */
		int wfd = pass ? fd1 : fd0, rfd = pass ? fd0 : fd1;
		uint32_t wh = pass ? exp : imp, rh = pass ? imp : exp;

		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			uint64_t off = cases[i].offset, len = cases[i].size;
			uint64_t lo = off > 16 ? off - 16 : 0;
			uint64_t hi = off + len + 16 < size ? off + len + 16 : size;
			uint32_t seed = 100 + pass * 50 + i;

			pattern_fill(shadow + off, len, seed, off);
			gpu_write(wfd, wh, off, shadow + off, len);
			/* the range and its neighbours, from both sides */
			gpu_read(rfd, rh, lo, buf, hi - lo);
			igt_assert_f(!memcmp(buf, shadow + lo, hi - lo),
				     "pass %u: %llu bytes at %llu read back wrong\n",
				     pass, (unsigned long long)len,
				     (unsigned long long)off);
			gpu_read(wfd, wh, lo, buf, hi - lo);
			igt_assert(!memcmp(buf, shadow + lo, hi - lo));
		}
	}
	gpu_read(fd0, imp, 0, buf, size);
	igt_assert(!memcmp(buf, shadow, size));

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		igt_assert_eq(gpu_access(fd0, imp, 0, bad[i].offset, buf,
					 bad[i].size), -EINVAL);
		igt_assert_eq(gpu_access(fd0, imp, AMDGPU_UALINK_VPOD_ACCESS_WRITE,
					 bad[i].offset, buf, bad[i].size), -EINVAL);
		igt_assert_eq(gpu_access(fd1, exp, 0, bad[i].offset, buf,
					 bad[i].size), -EINVAL);
		igt_assert_eq(gpu_access(fd1, exp, AMDGPU_UALINK_VPOD_ACCESS_WRITE,
					 bad[i].offset, buf, bad[i].size), -EINVAL);
	}
	/* the refused writes changed nothing */
	gpu_read(fd1, exp, 0, buf, size);
	igt_assert(!memcmp(buf, shadow, size));
	free(shadow);
	free(buf);
}

/* the vpod ioctls' own errors */

static void test_gem_create_invalid_args(void)
{
	struct drm_amdgpu_ualink_vpod_gem_create arg;
	int fd = vpod_open(0);
	uint32_t gem = 0;
	uint8_t byte = 0;

	igt_assert_eq(__bo_create(fd, 0, AMDGPU_UALINK_VPOD_DOMAIN_VRAM, &gem), -EINVAL);
	igt_assert_eq(__bo_create(fd, 0, AMDGPU_UALINK_VPOD_DOMAIN_SYSTEM, &gem), -EINVAL);
	igt_assert_eq(__bo_create(fd, vram_bytes() + 4096,
				  AMDGPU_UALINK_VPOD_DOMAIN_VRAM, &gem), -EINVAL);
	igt_assert_eq(__bo_create(fd, 4096, 0, &gem), -EINVAL);
	igt_assert_eq(__bo_create(fd, 4096, 3, &gem), -EINVAL);
	igt_assert_eq(__bo_create(fd, 4096, 0xffffffff, &gem), -EINVAL);

	memset(&arg, 0, sizeof(arg));
	arg.size = 4096;
	arg.domain = AMDGPU_UALINK_VPOD_DOMAIN_VRAM;
	arg.handle = 1;
	igt_assert_eq(drmIoctl(fd, DRM_IOCTL_AMDGPU_UALINK_VPOD_GEM_CREATE, &arg), -1);
	igt_assert_eq(errno, EINVAL);

	/* sizes are rounded up to 4 KiB */
	gem = vram_create(fd, 1);
	igt_assert_eq(gpu_access(fd, gem, 0, 4095, &byte, 1), 0);
	igt_assert_eq(byte, 0);
	igt_assert_eq(gpu_access(fd, gem, 0, 4096, &byte, 1), -EINVAL);
}

/* Device memory runs out: ENOSPC, and what was made stays usable. */
static void test_gem_create_full(void)
{
	const uint64_t chunk = 1 << 20;
	int fd = vpod_open(0), n, ret = 0;
	uint32_t gem[1100];
	uint8_t byte = 0x5a;

	for (n = 0; n < 1100; n++) {
		ret = __bo_create(fd, chunk, AMDGPU_UALINK_VPOD_DOMAIN_VRAM, &gem[n]);
		if (ret)
			break;
	}
	igt_info("%d buffers of 1 MiB in %llu MiB of device memory\n", n,
		 (unsigned long long)(vram_bytes() >> 20));
	igt_assert_eq(ret, -ENOSPC);
	igt_assert_lte(1, n);
	igt_assert_lte(n, (int)(vram_bytes() / chunk));
	igt_assert_eq(gpu_access(fd, gem[n - 1], 1, chunk - 1, &byte, 1), 0);
	/* system memory is another matter */
	igt_assert_eq(__bo_create(fd, chunk, AMDGPU_UALINK_VPOD_DOMAIN_SYSTEM, &gem[n]), 0);
	gem_close(fd, gem[n]);
	while (n--)
		gem_close(fd, gem[n]);
}

static void test_gem_mmap_invalid_args(void)
{
	struct drm_amdgpu_ualink_vpod_gem_mmap arg;
	int fd = vpod_open(0);
	uint64_t offset;
	uint32_t gem;

	gem = vram_create(fd, SZ_64K);
	igt_assert_eq(__gem_mmap_offset(fd, gem + 1000, &offset), -ENOENT);

	memset(&arg, 0, sizeof(arg));
	arg.handle = gem;
	arg.pad = 1;
	igt_assert_eq(drmIoctl(fd, DRM_IOCTL_AMDGPU_UALINK_VPOD_GEM_MMAP, &arg), -1);
	igt_assert_eq(errno, EINVAL);

	memset(&arg, 0, sizeof(arg));
	arg.handle = gem;
	arg.offset = 4096;
	igt_assert_eq(drmIoctl(fd, DRM_IOCTL_AMDGPU_UALINK_VPOD_GEM_MMAP, &arg), -1);
	igt_assert_eq(errno, EINVAL);

	igt_assert_eq(__gem_mmap_offset(fd, gem, &offset), 0);
}

static void test_gpu_access_invalid_args(void)
{
	int fd = vpod_open(0);
	uint32_t gem, sys;
	uint8_t buf[16];

	gem = vram_create(fd, SZ_64K);
	sys = bo_create(fd, SZ_64K, AMDGPU_UALINK_VPOD_DOMAIN_SYSTEM);

	igt_assert_eq(gpu_access(fd, gem, 0x2, 0, buf, 4), -EINVAL);
	igt_assert_eq(gpu_access(fd, gem, 0x80000000, 0, buf, 4), -EINVAL);
	igt_assert_eq(gpu_access(fd, gem, 0, 0, buf, 0), -EINVAL);
	igt_assert_eq(gpu_access(fd, gem, 0, 0, buf,
				 AMDGPU_UALINK_VPOD_ACCESS_MAX + 1), -EINVAL);
	igt_assert_eq(gpu_access(fd, gem + 1000, 0, 0, buf, 4), -ENOENT);
	igt_assert_eq(gpu_access(fd, sys, 0, 0, buf, 4), -EOPNOTSUPP);
	igt_assert_eq(gpu_access(fd, sys, AMDGPU_UALINK_VPOD_ACCESS_WRITE, 0,
				 buf, 4), -EOPNOTSUPP);
	igt_assert_eq(gpu_access(fd, gem, 0, 0, NULL, 4), -EFAULT);
	igt_assert_eq(gpu_access(fd, gem, AMDGPU_UALINK_VPOD_ACCESS_WRITE, 0,
				 NULL, 4), -EFAULT);
	igt_assert_eq(gpu_access(fd, gem, 0, 0, buf, 4), 0);
}

static int job_raw(int fd, uint32_t gem, uint32_t op, uint32_t ms, uint32_t pad)
{
	struct drm_amdgpu_ualink_vpod_gpu_job arg = {
		.handle = gem, .op = op, .timeout_ms = ms, .pad = pad,
	};

	return drmIoctl(fd, DRM_IOCTL_AMDGPU_UALINK_VPOD_GPU_JOB, &arg) ? -errno : 0;
}

/* One errno per failure of the job ioctl, then a job ended and reaped. */
static void test_gpu_job_errors(void)
{
	const uint32_t start = AMDGPU_UALINK_VPOD_JOB_START;
	const uint32_t end = AMDGPU_UALINK_VPOD_JOB_END;
	struct drm_amdgpu_ualink_handle h;
	int fd = vpod_open(0), fd1 = vpod_open(1);
	uint32_t gem, sys, exp, imp;

	gem = vram_create(fd, SZ_64K);
	sys = bo_create(fd, SZ_64K, AMDGPU_UALINK_VPOD_DOMAIN_SYSTEM);

	igt_assert_eq(job_raw(fd, gem, 0, 100, 0), -EINVAL);
	igt_assert_eq(job_raw(fd, gem, 3, 100, 0), -EINVAL);
	igt_assert_eq(job_raw(fd, gem, start, 100, 1), -EINVAL);
	igt_assert_eq(job_raw(fd, gem, start, 0, 0), -EINVAL);
	igt_assert_eq(job_raw(fd, gem, start, AMDGPU_UALINK_VPOD_JOB_MAX_MS + 1, 0),
		      -EINVAL);
	igt_assert_eq(job_raw(fd, gem, end, 1, 0), -EINVAL);
	igt_assert_eq(job_raw(fd, gem + 1000, start, 100, 0), -ENOENT);
	igt_assert_eq(job_raw(fd, sys, start, 100, 0), -EOPNOTSUPP);
	igt_assert_eq(job_raw(fd, gem, end, 0, 0), -ESRCH);

	igt_assert_eq(job_raw(fd, gem, start, AMDGPU_UALINK_VPOD_JOB_MAX_MS, 0), 0);
	igt_assert_eq(job_raw(fd, gem, start, 100, 0), -EBUSY);
	igt_assert_eq(job_raw(fd, gem, end, 0, 0), 0);
	igt_assert_eq(job_raw(fd, gem, end, 0, 0), -ESRCH);
	/* one that times out ends by itself */
	igt_assert_eq(job_raw(fd, gem, start, 50, 0), 0);
	vpod_sleep_ms(500);
	igt_assert_eq(job_raw(fd, gem, end, 0, 0), -ESRCH);

	/* an import whose memory is gone takes no new work */
	exp = exported_buffer(fd1, SZ_64K, 64, &h);
	imp = import_gem(fd, h, NULL);
	igt_assert_eq(job_raw(fd, imp, start, 100, 0), 0);
	igt_assert_eq(job_raw(fd, imp, end, 0, 0), 0);
	gem_close(fd1, exp);
	wait_access_error(fd, imp, ENODEV, VPOD_ASYNC_MS);
	igt_assert_eq(job_raw(fd, imp, start, 100, 0), -ENODEV);
}

/* PRIME */

static void test_prime_same_node(void)
{
	struct drm_amdgpu_ualink_handle h;
	int fd0 = vpod_open(0), fd0b = vpod_open(0), fd1 = vpod_open(1), d;
	uint32_t g, g2, gb;

	exported_buffer(fd1, SZ_64K, 61, &h);
	d = import_ok(fd0, h);
	g = prime_handle(fd0, d);
	g2 = prime_handle(fd0, d);
	igt_assert_eq_u32(g, g2);
	gpu_expect(fd0, g, 0, SZ_64K, 61);

	/* another file of the same device */
	gb = prime_handle(fd0b, d);
	gpu_expect(fd0b, gb, 0, SZ_64K, 61);
	gpu_fill(fd0b, gb, 0, 4096, 62);
	gpu_expect(fd0, g, 0, 4096, 62);

	/* the GEM handles keep the import after the fd is closed */
	vpod_close(d);
	gpu_expect(fd0, g, 4096, SZ_64K - 4096, 61);
	gpu_expect(fd0b, gb, 0, 4096, 62);
}

static void test_prime_other_node_refused(void)
{
	struct drm_amdgpu_ualink_handle h;
	int fd0 = vpod_open(0), fd1 = vpod_open(1), fd2 = vpod_open(2), d;
	uint32_t g = 0;

	exported_buffer(fd1, SZ_64K, 63, &h);
	d = import_ok(fd0, h);
	igt_assert_eq(drmPrimeFDToHandle(fd2, d, &g), -1);
	igt_assert_eq(errno, EXDEV);
	/* the exporter is another device too */
	igt_assert_eq(drmPrimeFDToHandle(fd1, d, &g), -1);
	igt_assert_eq(errno, EXDEV);
	igt_assert_eq_u64(count_of(2, C_IMPORTS), 0);
	gpu_expect(fd0, prime_handle(fd0, d), 0, SZ_64K, 63);
}

/*
 * The emulated pod's debugfs settings read back what they hold and refuse
 * what they cannot be: the timeout reads "<ms> <retries>", a virtual pod
 * number from 1024 on is refused and changes nothing.
 */
static void test_debugfs_settings(void)
{
	char buf[64];
	unsigned int ms, retries, nr;

	igt_assert_lt(0, dbg_read("node0/timeout", buf, sizeof(buf)));
	igt_assert_eq(sscanf(buf, "%u %u", &ms, &retries), 2);
	igt_assert_eq_u32(ms, 5000);
	igt_assert_eq_u32(retries, 3);
	set_timeout(0, 700, 2);
	igt_assert_lt(0, dbg_read("node0/timeout", buf, sizeof(buf)));
	igt_assert_eq(sscanf(buf, "%u %u", &ms, &retries), 2);
	igt_assert_eq_u32(ms, 700);
	igt_assert_eq_u32(retries, 2);

	igt_assert_eq(dbg_write("node0/vpod", "1024"), -EINVAL);
	igt_assert_eq(dbg_write("node0/vpod", "4294967295"), -EINVAL);
	igt_assert_lt(0, dbg_read("node0/vpod", buf, sizeof(buf)));
	igt_assert_eq(sscanf(buf, "%u", &nr), 1);
	igt_assert_eq_u32(nr, 0);
	set_vpod(0, 1023);
	igt_assert_lt(0, dbg_read("node0/vpod", buf, sizeof(buf)));
	igt_assert_eq(sscanf(buf, "%u", &nr), 1);
	igt_assert_eq_u32(nr, 1023);
}

igt_main
{
	igt_fixture
		vpod_init();

	igt_describe("INFO gives each node its ID, pod size and state");
	vpod_subtest("info")
		test_info();

	igt_describe("a VRAM buffer exports; its handle dies with its last GEM handle");
	vpod_subtest("export-basic")
		test_export_basic();

	igt_describe("one buffer, one handle; two buffers, two handles");
	vpod_subtest("export-same-handle")
		test_export_same_handle();

	igt_describe("the low 10 bits of a handle are the exporter's ID");
	vpod_subtest("export-handle-accel-id")
		test_export_handle_accel_id();

	igt_describe("malformed exports fail with EINVAL, unknown GEM handles with ENOENT");
	vpod_subtest("export-invalid-args")
		test_export_invalid_args();

	igt_describe("system memory and imports cannot be exported (EPERM)");
	vpod_subtest("export-refused")
		test_export_refused();

	igt_describe("an import is a dma-buf of the exporter's memory");
	vpod_subtest("import-basic")
		test_import_basic();

	igt_describe("importing a live handle twice gives the same dma-buf");
	vpod_subtest("import-twice-same-object")
		test_import_twice();

	igt_describe("one GEM handle per imported buffer and file, as PRIME gives");
	vpod_subtest("import-prime-handles")
		test_import_prime_handles();

	igt_describe("concurrent imports of one handle all succeed");
	vpod_subtest("import-concurrent")
		test_import_concurrent();

	igt_describe("unknown and dead handles fail with ENOENT");
	vpod_subtest("import-unknown-handle")
		test_import_unknown_handle();

	igt_describe("a handle from another virtual pod fails with EACCES");
	vpod_subtest("import-other-vpod")
		test_import_other_vpod();

	igt_describe("a handle of an accelerator that does not exist fails with EACCES");
	vpod_subtest("import-nonexistent-accel")
		test_import_nonexistent_accel();

	igt_describe("importing our own handle gives our own buffer");
	vpod_subtest("import-own-handle")
		test_import_own_handle();

	igt_describe("malformed imports fail with EINVAL");
	vpod_subtest("import-invalid-args")
		test_import_invalid_args();

	igt_describe("one batch imports every peer's and fabric node's heap");
	vpod_subtest("import-batch")
		test_import_batch();

	igt_describe("a batch gives fds on request");
	vpod_subtest("import-batch-fds")
		test_import_batch_fds();

	igt_describe("malformed batches fail with EINVAL, unreadable ones with EFAULT");
	vpod_subtest("import-batch-invalid-args")
		test_import_batch_invalid_args();

	igt_describe("the CPU cannot map an import; it maps local VRAM");
	vpod_subtest("no-cpu-access")
		test_no_cpu_access();

	igt_describe("the importer reads what the exporter wrote");
	vpod_subtest("data-import-reads-export")
		test_data_import_reads_export();

	igt_describe("the exporter reads what importers wrote");
	vpod_subtest("data-export-reads-import")
		test_data_export_reads_import();

	igt_describe("unaligned and page-crossing accesses of a 4 MiB import");
	vpod_subtest("data-offsets")
		test_data_offsets();

	igt_describe("GEM create rejects malformed arguments");
	vpod_subtest("gem-create-invalid-args")
		test_gem_create_invalid_args();

	igt_describe("GEM create in full device memory fails with ENOSPC");
	vpod_subtest("gem-create-full")
		test_gem_create_full();

	igt_describe("GEM mmap offset rejects malformed arguments");
	vpod_subtest("gem-mmap-invalid-args")
		test_gem_mmap_invalid_args();

	igt_describe("GPU access rejects malformed arguments");
	vpod_subtest("gpu-access-invalid-args")
		test_gpu_access_invalid_args();

	igt_describe("the emulated GPU job rejects malformed arguments, one errno each");
	vpod_subtest("gpu-job-errors")
		test_gpu_job_errors();

	igt_describe("an import's dma-buf becomes GEM handles on its own node");
	vpod_subtest("prime-same-node")
		test_prime_same_node();

	igt_describe("an import's dma-buf is refused by other nodes (EXDEV)");
	vpod_subtest("prime-other-node-refused")
		test_prime_other_node_refused();

	igt_describe("debugfs timeout reads back, a vPod number past 1023 is refused");
	vpod_subtest("debugfs-settings")
		test_debugfs_settings();

	igt_describe("the ualink/ sysfs directory: ready, IDs, counters");
	vpod_subtest("sysfs")
		test_sysfs();

	/*
	 * Not a subtest: whatever ran, nothing may stay held once it is all
	 * closed; a leak fails the program (exit 98), which vm-test reports
	 * by the program's name.
	 */
	igt_fixture
		vpod_fini(VPOD_ASYNC_MS);
}
