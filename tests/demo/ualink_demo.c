// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * `make run`: a short narrated tour of the UALink uAPI on the emulated pod.
 * Export on one accelerator, import on two others, write and read through
 * the fabric, revoke, reset an accelerator, and show the counters. Exits
 * non-zero at the first result that is not the expected one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <xf86drm.h>

#include "amdgpu_ualink_vpod.h"
#include "libualink.h"

#define DBG "/sys/kernel/debug/amdgpu_ualink_vpod"
#define NODES 4

static int fd[NODES];

static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

static void expect(int ok, const char *what)
{
	if (ok)
		return;
	say("demo: FAILED: %s\n", what);
	exit(1);
}

static int ioc(int f, unsigned long req, void *arg)
{
	return drmIoctl(f, req, arg) ? -errno : 0;
}

static void open_nodes(void)
{
	int found = 0, i;

	for (i = 128; i < 192 && found < NODES; i++) {
		struct drm_amdgpu_ualink_info info;
		char path[32];
		drmVersionPtr v;
		int f;

		snprintf(path, sizeof(path), "/dev/dri/renderD%d", i);
		f = open(path, O_RDWR | O_CLOEXEC);
		if (f < 0)
			continue;
		v = drmGetVersion(f);
		if (!v || strcmp(v->name, AMDGPU_UALINK_VPOD_DRIVER_NAME) ||
		    ualink_info(f, &info) || info.accel_id >= NODES) {
			if (v)
				drmFreeVersion(v);
			close(f);
			continue;
		}
		drmFreeVersion(v);
		fd[info.accel_id] = f;
		say("  accelerator %u: %s, virtual pod %u of %u accelerators, %s\n",
		    info.accel_id, path, info.vpod_id, info.vpod_size,
		    ualink_ready(f) ? "ready" : "not ready");
		found++;
	}
	expect(found == NODES, "four emulated accelerators with render nodes");
}

static uint32_t create(int node, uint64_t size)
{
	struct drm_amdgpu_ualink_vpod_gem_create c = {
		.size = size, .domain = AMDGPU_UALINK_VPOD_DOMAIN_VRAM,
	};

	expect(!ioc(fd[node], DRM_IOCTL_AMDGPU_UALINK_VPOD_GEM_CREATE, &c),
	       "create a buffer in device memory");
	return c.handle;
}

static int access_(int node, uint32_t handle, uint64_t offset, void *buf,
		   size_t size, int write)
{
	struct drm_amdgpu_ualink_vpod_gpu_access a = {
		.handle = handle, .offset = offset, .size = size,
		.data = (uintptr_t)buf,
		.flags = write ? AMDGPU_UALINK_VPOD_ACCESS_WRITE : 0,
	};

	return ioc(fd[node], DRM_IOCTL_AMDGPU_UALINK_VPOD_GPU_ACCESS, &a);
}

static struct drm_amdgpu_ualink_handle export(int node, uint32_t handle)
{
	struct drm_amdgpu_ualink_handle h;

	expect(!ualink_export(fd[node], handle, &h), "export");
	return h;
}

/* Import on @node: returns a GEM handle, made from the dma-buf fd. */
static uint32_t import(int node, struct drm_amdgpu_ualink_handle h, int *dmabuf)
{
	uint32_t gem;

	expect(!ualink_import(fd[node], h, AMDGPU_UALINK_IMPORT_CLOEXEC, dmabuf),
	       "import");
	expect(!drmPrimeFDToHandle(fd[node], *dmabuf, &gem),
	       "PRIME fd to handle on the importing accelerator");
	return gem;
}

static void gem_close(int node, uint32_t handle)
{
	struct drm_gem_close c = { .handle = handle };

	expect(!ioc(fd[node], DRM_IOCTL_GEM_CLOSE, &c), "close a GEM handle");
}

static long count(int node, const char *key)
{
	char path[96], k[32];
	long v, ret = -1;
	FILE *f;

	snprintf(path, sizeof(path), DBG "/node%d/counts", node);
	f = fopen(path, "r");
	expect(!!f, "read the debugfs counts");
	while (fscanf(f, "%31s %ld", k, &v) == 2)
		if (!strcmp(k, key))
			ret = v;
	fclose(f);
	return ret;
}

static void show_counts(void)
{
	int n;

	say("  %-14s %8s %7s %5s %8s %10s %10s %4s\n", "", "exports", "grants",
	    "pins", "imports", "npa_bytes", "pt_tables", "tlb");
	for (n = 0; n < NODES; n++)
		say("  accelerator %d %8ld %7ld %5ld %8ld %10ld %10ld %4ld\n", n,
		    count(n, "exports"), count(n, "grants"), count(n, "pins"),
		    count(n, "imports"), count(n, "npa_bytes"),
		    count(n, "pt_tables"), count(n, "tlb_entries"));
}

/* Releases and revocations finish asynchronously: wait up to 10 s. */
static int settle(int node, const char *key, long want)
{
	int i;

	for (i = 0; i < 1000; i++) {
		if (count(node, key) == want)
			return 1;
		usleep(10000);
	}
	return 0;
}

static void control(int node, const char *what)
{
	char path[96];
	FILE *f;

	snprintf(path, sizeof(path), DBG "/node%d/control", node);
	f = fopen(path, "w");
	expect(f && fputs(what, f) >= 0 && !fclose(f), "write the debugfs control");
}

int main(void)
{
	const char hello[] = "Hello from accelerator 0, through the fabric";
	const char reply[] = "Accelerator 2 was here";
	const uint64_t size = 4 << 20, at = (2 << 20) + 123, at2 = 3 << 20;
	struct drm_amdgpu_ualink_vpod_gem_mmap m = { 0 };
	struct drm_amdgpu_ualink_handle h;
	uint32_t buf, imp1, imp2, imp3;
	int dmabuf1, dmabuf2, dmabuf3;
	char got[64];
	int ret, i;

	say("\n== 1. The pod: four emulated accelerators, one virtual pod\n");
	open_nodes();

	say("\n== 2. Accelerator 0 writes into a 4 MiB buffer of its memory and exports it\n");
	buf = create(0, size);
	expect(!access_(0, buf, at, (void *)hello, sizeof(hello), 1), "write locally");
	h = export(0, buf);
	say("  UALink handle 0x%016llx%016llx (low 10 bits: accelerator %llu)\n",
	    (unsigned long long)h.hi, (unsigned long long)h.lo,
	    (unsigned long long)(h.lo & AMDGPU_UALINK_HANDLE_ACCEL_ID_MASK));
	expect((h.lo & AMDGPU_UALINK_HANDLE_ACCEL_ID_MASK) == 0, "the handle names accelerator 0");
	expect(h.lo || h.hi, "a non-zero handle");

	say("\n== 3. Accelerators 1 and 2 import it (NPA_REQ -> NPA_RSP over the mailbox)\n");
	imp1 = import(1, h, &dmabuf1);
	imp2 = import(2, h, &dmabuf2);
	say("  accelerator 1: dma-buf fd %d, GEM handle %u\n", dmabuf1, imp1);
	say("  accelerator 2: dma-buf fd %d, GEM handle %u\n", dmabuf2, imp2);

	say("\n== 4. Loads and stores through the fabric (importer TLB -> exporter NPA page tables)\n");
	memset(got, 0, sizeof(got));
	expect(!access_(1, imp1, at, got, sizeof(hello), 0), "read through the fabric");
	say("  accelerator 1 reads at 2 MiB + 123: \"%s\"\n", got);
	expect(!strcmp(got, hello), "accelerator 1 reads what accelerator 0 wrote");
	expect(!access_(2, imp2, at2, (void *)reply, sizeof(reply), 1), "write through the fabric");
	memset(got, 0, sizeof(got));
	expect(!access_(0, buf, at2, got, sizeof(reply), 0), "read locally");
	say("  accelerator 2 wrote at 3 MiB, accelerator 0 reads locally: \"%s\"\n", got);
	expect(!strcmp(got, reply), "accelerator 0 reads what accelerator 2 wrote");
	show_counts();

	say("\n== 5. Imported memory is never CPU-mappable\n");
	ret = mmap(NULL, 4096, PROT_READ, MAP_SHARED, dmabuf1, 0) == MAP_FAILED ? -errno : 0;
	say("  mmap of the dma-buf on accelerator 1: %s\n", strerror(-ret));
	expect(ret == -EINVAL, "mmap of an import's dma-buf fails with EINVAL");
	m.handle = imp1;
	ret = ioc(fd[1], DRM_IOCTL_AMDGPU_UALINK_VPOD_GEM_MMAP, &m);
	say("  mmap offset of the imported GEM handle: %s\n", strerror(-ret));
	expect(ret == -EPERM, "mmap offset of an import fails with EPERM");

	say("\n== 6. Revocation: accelerator 0 closes its last GEM handle\n");
	gem_close(0, buf);
	/* the export ends on the exporter's worker, a moment later */
	for (i = 0; i < 200; i++) {
		ret = access_(1, imp1, at, got, 8, 0);
		if (ret)
			break;
		usleep(10000);
	}
	say("  accelerator 1 reads again: %s\n", strerror(-ret));
	expect(ret == -ENODEV, "access to a revoked import fails with ENODEV");
	close(dmabuf1);
	close(dmabuf2);
	gem_close(1, imp1);
	gem_close(2, imp2);
	expect(settle(1, "imports", 0) && settle(2, "imports", 0) &&
	       settle(0, "grants", 0), "everything released");
	show_counts();

	say("\n== 7. A GPU reset of accelerator 3 while it imports\n");
	buf = create(0, size);
	h = export(0, buf);
	imp3 = import(3, h, &dmabuf3);
	expect(!access_(3, imp3, 0, got, 8, 0), "accelerator 3 reads before the reset");
	say("  before: accelerator 0 has %ld grant(s), accelerator 3 %ld import(s)\n",
	    count(0, "grants"), count(3, "imports"));
	control(3, "reset");
	ret = access_(3, imp3, 0, got, 8, 0);
	say("  after the reset accelerator 3 reads: %s\n", strerror(-ret));
	expect(ret == -ENODEV, "an import of a reset accelerator is dead");
	expect(settle(0, "grants", 0), "the exporter dropped the reset importer's grant");
	say("  accelerator 0 dropped the grant and its pin (grants %ld, pins %ld)\n",
	    count(0, "grants"), count(0, "pins"));
	close(dmabuf3);
	gem_close(3, imp3);
	imp3 = import(3, h, &dmabuf3);
	expect(!access_(3, imp3, 0, got, 8, 0), "accelerator 3 imports again after the reset");
	say("  accelerator 3 imports the same handle again and reads: ok\n");
	close(dmabuf3);
	gem_close(3, imp3);
	gem_close(0, buf);

	say("\n== 8. Everything is given back\n");
	expect(settle(0, "exports", 0) && settle(0, "grants", 0) &&
	       settle(3, "imports", 0), "all counts back to zero");
	show_counts();
	say("\ndemo: SUCCESS\n");
	return 0;
}
