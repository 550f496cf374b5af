// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Benchmarks of the UALink uAPI on the emulated pod (`make bench`): export,
 * first import, repeated import and a batched import of every other
 * accelerator's heap, each against a PRIME handle -> fd -> handle round trip
 * on vgem measured in the same run. Prints figures; asserts nothing about
 * them (it fails only when an operation itself fails).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xf86drm.h>

#include "amdgpu_ualink_vpod.h"
#include "libualink.h"

#define DBG "/sys/kernel/debug/amdgpu_ualink_vpod"
#define N 400		/* samples of each single operation */
#define BATCH_RUNS 15	/* samples of the batched import */

static void die(const char *what)
{
	fprintf(stderr, "bench: FAILED: %s (%s)\n", what, strerror(errno));
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct figure {
	const char *name;
	double median_us, p99_us;
};

static struct figure stats(const char *name, uint64_t *ns, int n)
{
	struct figure f = { .name = name };

	qsort(ns, n, sizeof(*ns), cmp_u64);
	f.median_us = ns[n / 2] / 1000.0;
	f.p99_us = ns[(n * 99 + 99) / 100 - 1] / 1000.0;
	return f;
}

/* The @nth render node (or primary node, @card) of driver @name. */
static int open_node(const char *name, int nth, int card)
{
	int i, seen = 0;

	for (i = 0; i < 64; i++) {
		char path[32];
		drmVersionPtr v;
		int fd;

		if (card)
			snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		else
			snprintf(path, sizeof(path), "/dev/dri/renderD%d", 128 + i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		v = drmGetVersion(fd);
		if (v && !strcmp(v->name, name) && seen++ == nth) {
			drmFreeVersion(v);
			return fd;
		}
		if (v)
			drmFreeVersion(v);
		close(fd);
	}
	errno = ENODEV;
	die(name);
	return -1;
}

static int open_driver(const char *name, int nth)
{
	return open_node(name, nth, 0);
}

static void ioc(int fd, unsigned long req, void *arg, const char *what)
{
	if (drmIoctl(fd, req, arg))
		die(what);
}

/* a libualink call's result: 0, or -errno, which ends the run */
static void lib_check(int ret, const char *what)
{
	if (ret) {
		errno = -ret;
		die(what);
	}
}

static void gem_close(int fd, uint32_t h)
{
	struct drm_gem_close c = { .handle = h };

	ioc(fd, DRM_IOCTL_GEM_CLOSE, &c, "GEM close");
}

/*
 * PRIME handle -> fd -> handle on vgem, between two files of the device
 * (its primary node: dumb buffers are not created on render nodes).
 */
static struct figure prime_anchor(void)
{
	int a = open_node("vgem", 0, 1), b = open_node("vgem", 0, 1);
	static uint64_t ns[N];
	int i;
	for (i = 0; i < N; i++) {
		struct drm_mode_create_dumb c = { .width = 1024, .height = 16, .bpp = 32 };
		uint32_t h2;
		uint64_t t;
		int fd;

		ioc(a, DRM_IOCTL_MODE_CREATE_DUMB, &c, "vgem dumb create");
		t = now_ns();
		if (drmPrimeHandleToFD(a, c.handle, DRM_CLOEXEC, &fd) ||
		    drmPrimeFDToHandle(b, fd, &h2))
			die("PRIME round trip on vgem");
		ns[i] = now_ns() - t;
		close(fd);
		gem_close(b, h2);
		gem_close(a, c.handle);
	}
	close(a);
	close(b);
	return stats("PRIME handle->fd->handle (vgem)", ns, N);
}

static uint32_t vpod_create(int fd, uint64_t size)
{
	struct drm_amdgpu_ualink_vpod_gem_create c = {
		.size = size, .domain = AMDGPU_UALINK_VPOD_DOMAIN_VRAM,
	};

	ioc(fd, DRM_IOCTL_AMDGPU_UALINK_VPOD_GEM_CREATE, &c, "vpod create");
	return c.handle;
}

static struct drm_amdgpu_ualink_handle export(int fd, uint32_t gem, uint64_t *ns)
{
	struct drm_amdgpu_ualink_handle h;
	uint64_t t;
	int ret;

	t = now_ns();
	ret = ualink_export(fd, gem, &h);
	if (ns)
		*ns = now_ns() - t;
	lib_check(ret, "export");
	return h;
}

static int import(int fd, struct drm_amdgpu_ualink_handle h, uint64_t *ns)
{
	uint64_t t;
	int ret, dmabuf;

	t = now_ns();
	ret = ualink_import(fd, h, AMDGPU_UALINK_IMPORT_CLOEXEC, &dmabuf);
	*ns = now_ns() - t;
	lib_check(ret, "import");
	return dmabuf;
}

static long count(int node, const char *key)
{
	char path[96], k[32];
	long v, ret = -1;
	FILE *f;

	snprintf(path, sizeof(path), DBG "/node%d/counts", node);
	f = fopen(path, "r");
	if (!f)
		die("debugfs counts");
	while (fscanf(f, "%31s %ld", k, &v) == 2)
		if (!strcmp(k, key))
			ret = v;
	fclose(f);
	return ret;
}

static void settle(int node, const char *key, long want)
{
	int i;

	for (i = 0; i < 3000 && count(node, key) != want; i++)
		usleep(1000);
	if (count(node, key) != want)
		die("releases did not finish");
}

static void print(struct figure f, struct figure anchor, int per)
{
	printf("%-44s median %9.1f us  p99 %9.1f us  = %7.1f x PRIME", f.name,
	       f.median_us, f.p99_us, f.median_us / anchor.median_us);
	if (per > 1)
		printf("  (%.2f us = %.2f x PRIME per handle)", f.median_us / per,
		       f.median_us / per / anchor.median_us);
	printf("\n");
}

int main(void)
{
	static uint64_t exp_ns[N], first_ns[N], again_ns[N], batch_ns[BATCH_RUNS];
	static struct drm_amdgpu_ualink_handle h[N];
	static uint32_t gem[N];
	struct drm_amdgpu_ualink_batch_entry *e;
	struct figure anchor, f;
	int e0 = open_driver(AMDGPU_UALINK_VPOD_DRIVER_NAME, 1);
	int i0 = open_driver(AMDGPU_UALINK_VPOD_DRIVER_NAME, 0);
	int n = 0, i, r, peers[4];
	char line[128];
	FILE *hf;

	anchor = prime_anchor();

	/* export: the first export of a fresh buffer, on accelerator 1 */
	for (i = 0; i < N; i++) {
		gem[i] = vpod_create(e0, 64 << 10);
		h[i] = export(e0, gem[i], &exp_ns[i]);
	}
	/* first import on accelerator 0: one NPA_REQ round trip each */
	for (i = 0; i < N; i++) {
		int fd = import(i0, h[i], &first_ns[i]);

		/* repeated import of the live handle: the table's hit */
		close(import(i0, h[i], &again_ns[i]));
		close(fd);
	}
	settle(0, "imports", 0);
	for (i = 0; i < N; i++)
		gem_close(e0, gem[i]);
	settle(1, "exports", 0);

	/*
	 * Batched import of every other accelerator's memory: a buffer of
	 * each other DRM accelerator, the heap of each fabric-only one.
	 */
	e = calloc(1024, sizeof(*e));
	hf = fopen(DBG "/handles", "r");
	if (!e || !hf)
		die("the fabric's handles");
	for (i = 1; i < 4; i++) {
		int fd = open_driver(AMDGPU_UALINK_VPOD_DRIVER_NAME, i);

		e[n++].handle = export(fd, vpod_create(fd, 64 << 10), NULL);
		peers[i] = fd;	/* the buffers live as long as the file */
	}
	while (n < 1024 && fgets(line, sizeof(line), hf)) {
		unsigned long long lo, hi;
		unsigned int id;

		if (sscanf(line, "%u 0x%llx 0x%llx", &id, &lo, &hi) != 3)
			continue;
		e[n].handle.lo = lo;
		e[n].handle.hi = hi;
		n++;
	}
	fclose(hf);
	for (r = 0; r < BATCH_RUNS; r++) {
		uint64_t t;
		int ret;

		for (i = 0; i < n; i++) {
			e[i].gem_handle = 0;
			e[i].fd = 0;
			e[i].error = 0;
		}
		t = now_ns();
		ret = ualink_import_batch(i0, e, n, 0);
		batch_ns[r] = now_ns() - t;
		lib_check(ret, "batched import");
		for (i = 0; i < n; i++) {
			if (e[i].error) {
				errno = -e[i].error;
				die("an entry of the batch");
			}
			gem_close(i0, e[i].gem_handle);
		}
		settle(0, "imports", 0);
	}

	printf("\nUALink uAPI on the emulated pod, %d samples each (batch: %d runs of %d handles)\n",
	       N, BATCH_RUNS, n);
	printf("%-44s median %9.1f us  p99 %9.1f us\n", anchor.name,
	       anchor.median_us, anchor.p99_us);
	print(stats("export (fresh buffer)", exp_ns, N), anchor, 1);
	print(stats("first import (NPA_REQ round trip)", first_ns, N), anchor, 1);
	print(stats("repeated import (live handle)", again_ns, N), anchor, 1);
	f = stats("batched import", batch_ns, BATCH_RUNS);
	print(f, anchor, n);
	for (i = 1; i < 4; i++)
		close(peers[i]);
	return 0;
}
