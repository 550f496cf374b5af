// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Benchmarks of the UALink uAPI on the emulated pod (`make bench`). Every
 * figure is a ratio to a PRIME figure on vgem measured in the same run,
 * printed with its goal and whether it is met; nothing is asserted (the
 * program fails only when an operation itself fails).
 *
 * Figures (the letters are issue #18's):
 *  (g) PRIME handle->fd and fd->handle apart, fresh (the buffer's first
 *      export: a new dma-buf) and cached (the dma-buf exists: an fd
 *      install, and a lookup of the handle the importer has);
 *  (a) the fixed cost of the ioctl: OP_INFO alone; and back to back, with
 *      our 56-byte argument and with PRIME's 12 bytes (what the size of
 *      the argument costs);
 *      export of a fresh buffer, first import, repeated import (right
 *      after the first, and back to back alternated with PRIME's cached
 *      export back to back);
 *  (b) the importing thread's CPU time per first import beside its wall
 *      time: on an emulator whose two vCPUs run every accelerator, the
 *      wall time also holds the exporter's work and the scheduler's;
 *  (c) the exporter's time in its request handler per request, and the
 *      mailbox worker's executions per import (both sides);
 *  (d) wake-up latency: doorbell -> start of the receiving worker;
 *  (e) a batch T(N) = a + b N, N = 1...1,023, from one exporter and from
 *      N exporters, wall and importer CPU time, against as many fresh
 *      PRIME round trips timed beside each batch, and that CPU time less
 *      what the emulated fabric took to deliver the doorbells the
 *      importing thread rang (debugfs fabric_bell_ns: waking another
 *      accelerator's mailbox worker, one MMIO write on hardware; counted
 *      per accelerator, and this program is the only thread outside the
 *      workers that rings accelerator 0's doorbells);
 *  (f) release: close -> the exporter's grants back to 0, timed alone;
 *      and the emulator's floor for a first import: a round trip between
 *      two threads through pipes.
 *
 * Files written to the current directory for the plot: lat-<figure>.dat
 * (sorted samples, us), tn-one.dat and tn-many.dat (N, wall us, CPU us,
 * CPU less doorbells us, PRIME's wall us and CPU us),
 * fit.dat (the fitted lines), table.txt (the table).
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <xf86drm.h>

#include "amdgpu_ualink_vpod.h"
#include "libualink.h"

#define DBG "/sys/kernel/debug/amdgpu_ualink_vpod"
#define N 400		/* samples of each single operation */
#define BATCH_RUNS 5	/* samples of each batch size */
#define MAX_BATCH 1023	/* every other accelerator of the pod */
#define EXPORTER 1	/* accelerator of the single-exporter figures */

static FILE *table;

static void die(const char *what)
{
	fprintf(stderr, "bench: FAILED: %s (%s)\n", what, strerror(errno));
	exit(1);
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* the calling thread's CPU time, user and system */
static uint64_t cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A file for the plot in the current directory: <@prefix><@tag>.<@ext> */
static FILE *data_file(const char *prefix, const char *tag, const char *ext)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s.%s", prefix, tag, ext);
	f = fopen(path, "w");
	if (!f)
		die(path);
	return f;
}

struct figure {
	const char *name;
	double median_us, p99_us;
};

/* Sorts @ns; with @tag, writes the samples to lat-<tag>.dat. */
static struct figure stats(const char *name, const char *tag, uint64_t *ns,
			   int n)
{
	struct figure f = { .name = name };

	qsort(ns, n, sizeof(*ns), cmp_u64);
	f.median_us = ns[n / 2] / 1000.0;
	f.p99_us = ns[(n * 99 + 99) / 100 - 1] / 1000.0;
	if (tag) {
		FILE *o = data_file("lat-", tag, "dat");
		int i;

		for (i = 0; i < n; i++)
			fprintf(o, "%.3f %.4f\n", ns[i] / 1000.0, (i + 1.0) / n);
		fclose(o);
	}
	return f;
}

/* Print to stdout and to table.txt. */
static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	va_start(ap, fmt);
	vfprintf(table, fmt, ap);
	va_end(ap);
}

static void row(const char *name, double us, double p99, const char *anchor_name,
		double anchor, double goal)
{
	double ratio = us / anchor;

	out("%-42s %9.2f %9.2f  %7.2f x %-26s", name, us, p99, ratio, anchor_name);
	if (goal > 0 && us < 0)	/* a fitted intercept */
		out("  goal <= %-4.1f n/a: T(N) is not linear\n", goal);
	else if (goal > 0)
		out("  goal <= %-4.1f %s\n", goal, ratio <= goal ? "met" : "NOT MET");
	else
		out("  (no goal)\n");
}

static void figure_row(struct figure f, struct figure anchor,
		       const char *anchor_name, double goal)
{
	row(f.name, f.median_us, f.p99_us, anchor_name, anchor.median_us, goal);
}

static void anchor_row(struct figure f)
{
	out("%-42s %9.2f %9.2f\n", f.name, f.median_us, f.p99_us);
}

struct fit {
	double a, b;	/* us, us per handle */
};

/*
 * A batch's fitted lines, and those of as many fresh PRIME round trips
 * timed in the same sweep, each run next to the batch's
 */
struct tn {
	struct fit wall, cpu, own, prime_wall, prime_cpu;
};

/*
 * T(N)'s intercept against a first import; its slopes against the slopes
 * of PRIME's round trips timed in the same sweep (wall against wall, CPU
 * against CPU), and against the fresh round trip timed at the start
 */
static void batch_rows(const char *who, struct tn tn, struct figure first,
		       struct figure prime)
{
	char name[64];

	snprintf(name, sizeof(name), "PRIME in the %s sweep: b, wall", who);
	out("%-42s %9.2f\n", name, tn.prime_wall.b);
	snprintf(name, sizeof(name), "PRIME in the %s sweep: b, CPU", who);
	out("%-42s %9.2f\n", name, tn.prime_cpu.b);
	snprintf(name, sizeof(name), "batch, %s: intercept a", who);
	row(name, tn.wall.a, 0, "first import", first.median_us, 2);
	snprintf(name, sizeof(name), "batch, %s: slope b, wall", who);
	row(name, tn.wall.b, 0, "PRIME b, wall, same sweep", tn.prime_wall.b, 0);
	snprintf(name, sizeof(name), "batch, %s: slope b, importer CPU", who);
	row(name, tn.cpu.b, 0, "PRIME b, CPU, same sweep", tn.prime_cpu.b, 1);
	snprintf(name, sizeof(name), "  same, less emulated doorbells");
	row(name, tn.own.b, 0, "PRIME b, CPU, same sweep", tn.prime_cpu.b, 0);
	snprintf(name, sizeof(name), "  importer CPU, against the start's");
	row(name, tn.cpu.b, 0, "fresh round trip", prime.median_us, 0);
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

static int open_accel(int nth)
{
	return open_node(AMDGPU_UALINK_VPOD_DRIVER_NAME, nth, 0);
}

static void ioc(int fd, unsigned long req, void *arg, const char *what)
{
	if (drmIoctl(fd, req, arg))
		die(what);
}

/*
 * One OP_INFO through an argument of @size bytes, of which DRM copies that
 * many in and out (the ioctl's size field); returns its time in ns.
 */
static uint64_t info_call(int fd, unsigned int size)
{
	struct drm_amdgpu_ualink args = { .op = AMDGPU_UALINK_OP_INFO };
	unsigned long req = _IOC(_IOC_READ | _IOC_WRITE, DRM_IOCTL_BASE,
				 DRM_COMMAND_BASE + DRM_AMDGPU_UALINK, size);
	uint64_t t = now_ns();
	int ret;

	do {
		ret = ioctl(fd, req, &args);
	} while (ret == -1 && errno == EINTR);
	if (ret)
		die("INFO");
	return now_ns() - t;
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

struct prime {
	struct figure h2fd, fd2h, round, h2fd_cached, fd2h_cached, h2fd_b2b;
};

/*
 * PRIME on vgem between two files of the device (its primary node: dumb
 * buffers are not made on render nodes): the buffer's first export, then
 * the same buffer again while the importer holds it.
 */
static struct prime prime_anchor(void)
{
	static uint64_t h2fd[N], fd2h[N], round[N], h2fd_c[N], fd2h_c[N];
	int a = open_node("vgem", 0, 1), b = open_node("vgem", 0, 1);
	struct prime p;
	int i;

	for (i = 0; i < N; i++) {
		struct drm_mode_create_dumb c = { .width = 1024, .height = 16, .bpp = 32 };
		uint64_t t0, t1, t2;
		uint32_t h2, h3;
		int fd;

		ioc(a, DRM_IOCTL_MODE_CREATE_DUMB, &c, "vgem dumb create");
		t0 = now_ns();
		if (drmPrimeHandleToFD(a, c.handle, DRM_CLOEXEC, &fd))
			die("PRIME handle->fd");
		t1 = now_ns();
		if (drmPrimeFDToHandle(b, fd, &h2))
			die("PRIME fd->handle");
		t2 = now_ns();
		h2fd[i] = t1 - t0;
		fd2h[i] = t2 - t1;
		round[i] = t2 - t0;
		close(fd);
		/* cached: the dma-buf lives on in @b's import */
		t0 = now_ns();
		if (drmPrimeHandleToFD(a, c.handle, DRM_CLOEXEC, &fd))
			die("PRIME handle->fd again");
		t1 = now_ns();
		if (drmPrimeFDToHandle(b, fd, &h3) || h3 != h2)
			die("PRIME fd->handle again");
		t2 = now_ns();
		h2fd_c[i] = t1 - t0;
		fd2h_c[i] = t2 - t1;
		close(fd);
		gem_close(b, h2);
		gem_close(a, c.handle);
	}
	close(a);
	close(b);
	p.h2fd = stats("PRIME handle->fd, fresh", "prime-h2fd", h2fd, N);
	p.fd2h = stats("PRIME fd->handle, fresh", "prime-fd2h", fd2h, N);
	p.round = stats("PRIME handle->fd->handle, fresh", "prime-fresh", round, N);
	p.h2fd_cached = stats("PRIME handle->fd, cached", "prime-cached", h2fd_c, N);
	p.fd2h_cached = stats("PRIME fd->handle, cached", NULL, fd2h_c, N);
	return p;
}

/*
 * The emulator's floor for any request and answer between two threads:
 * one byte to a thread that sends it back through a second pipe, back to
 * back. A first import needs at least these two wake-ups (the exporter's
 * worker, then the importer's side) and has a third. After idling, the
 * same round trip measured anywhere from 34 us to 2.3 ms in the guests of
 * 2026-12-03 (QEMU waking halted vCPUs), too erratic for a floor.
 */
static int pipe_to[2], pipe_back[2];

static void *pipe_echo(void *arg)
{
	char c;

	while (read(pipe_to[0], &c, 1) == 1 && write(pipe_back[1], &c, 1) == 1)
		;
	return arg;
}

static void pipe_anchor(struct figure *wall, struct figure *cpu)
{
	static uint64_t w[N], c[N];
	pthread_t echo;
	char byte = 0;
	int i;

	if (pipe(pipe_to) || pipe(pipe_back))
		die("pipe");
	errno = pthread_create(&echo, NULL, pipe_echo, NULL);
	if (errno)
		die("thread");
	for (i = 0; i < N; i++) {
		uint64_t t, tc;

		tc = cpu_ns();
		t = now_ns();
		if (write(pipe_to[1], &byte, 1) != 1 || read(pipe_back[0], &byte, 1) != 1)
			die("pipe round trip");
		w[i] = now_ns() - t;
		c[i] = cpu_ns() - tc;
	}
	close(pipe_to[1]);
	pthread_join(echo, NULL);
	close(pipe_to[0]);
	close(pipe_back[0]);
	close(pipe_back[1]);
	*wall = stats("thread round trip (pipe)", "pipe", w, N);
	*cpu = stats("thread round trip, caller CPU", NULL, c, N);
}

static uint32_t vpod_create(int fd, uint64_t size)
{
	struct drm_amdgpu_ualink_vpod_gem_create c = {
		.size = size, .domain = AMDGPU_UALINK_VPOD_DOMAIN_VRAM,
	};

	ioc(fd, DRM_IOCTL_AMDGPU_UALINK_VPOD_GEM_CREATE, &c, "vpod create");
	return c.handle;
}

/* A counter of debugfs node<id>/counts. */
static uint64_t count(int node, const char *key)
{
	char path[96], k[32];
	unsigned long long v;
	uint64_t ret = 0;
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), DBG "/node%d/counts", node);
	f = fopen(path, "r");
	if (!f)
		die("debugfs counts");
	while (fscanf(f, "%31s %llu", k, &v) == 2)
		if (!strcmp(k, key)) {
			ret = v;
			found = 1;
		}
	fclose(f);
	if (!found) {
		errno = ENOENT;
		die(key);
	}
	return ret;
}

static void settle(int node, const char *key, uint64_t want)
{
	int i;

	for (i = 0; i < 3000 && count(node, key) != want; i++)
		usleep(1000);
	if (count(node, key) != want)
		die("releases did not finish");
}

struct worker {
	uint64_t runs, woken, wake_ns, wake_max_ns, requests, request_ns;
};

static struct worker worker_read(int node)
{
	struct worker w = {
		.runs = count(node, "mbox_runs"),
		.woken = count(node, "mbox_woken"),
		.wake_ns = count(node, "mbox_wake_ns"),
		.wake_max_ns = count(node, "mbox_wake_max_ns"),
		.requests = count(node, "mbox_requests"),
		.request_ns = count(node, "mbox_request_ns"),
	};
	return w;
}

static struct fit fit_line(const double *x, const double *y, int n)
{
	double sx = 0, sy = 0, sxx = 0, sxy = 0;
	struct fit f;
	int i;

	for (i = 0; i < n; i++) {
		sx += x[i];
		sy += y[i];
		sxx += x[i] * x[i];
		sxy += x[i] * y[i];
	}
	f.b = (n * sxy - sx * sy) / (n * sxx - sx * sx);
	f.a = (sy - f.b * sx) / n;
	return f;
}

static const int sizes[] = { 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, MAX_BATCH };
#define NSIZES (int)(sizeof(sizes) / sizeof(sizes[0]))

/*
 * @n fresh PRIME round trips on vgem, as prime_anchor() times one: @n new
 * buffers of @a, each exported (handle -> fd) and imported into @b (fd ->
 * handle), timed as one loop, wall and CPU, like a batch of @n. The fds
 * are closed and the buffers freed after the loop, as a batch's GEM
 * handles are.
 */
static void prime_run(int a, int b, int n, uint64_t *wall, uint64_t *cpu)
{
	static uint32_t ha[MAX_BATCH], hb[MAX_BATCH];
	static int fds[MAX_BATCH];
	uint64_t t, tc;
	int i;

	for (i = 0; i < n; i++) {
		struct drm_mode_create_dumb c = { .width = 1024, .height = 16, .bpp = 32 };

		ioc(a, DRM_IOCTL_MODE_CREATE_DUMB, &c, "vgem dumb create");
		ha[i] = c.handle;
	}
	tc = cpu_ns();
	t = now_ns();
	for (i = 0; i < n; i++) {
		if (drmPrimeHandleToFD(a, ha[i], DRM_CLOEXEC, &fds[i]))
			die("PRIME handle->fd in a sweep");
		if (drmPrimeFDToHandle(b, fds[i], &hb[i]))
			die("PRIME fd->handle in a sweep");
	}
	*wall = now_ns() - t;
	*cpu = cpu_ns() - tc;
	for (i = 0; i < n; i++) {
		close(fds[i]);
		gem_close(b, hb[i]);
		gem_close(a, ha[i]);
	}
}

/*
 * T(N) over the batch sizes: the first @n entries of @e, BATCH_RUNS times
 * each, released (and the releases finished) between runs; next to each
 * run, after it on even runs and before it on odd ones, @n fresh PRIME
 * round trips between the vgem files @a and @b. The emulator's speed
 * moves during a sweep, by up to half on this machine: the slopes are
 * compared with PRIME's timed within the same few milliseconds, not with a
 * figure timed minutes before. PRIME's thread does both sides of its
 * round trips; a batch's importing thread does not do the exporters'
 * work (nor, from one exporter, most of the sends, which the mailbox
 * worker makes): the goal is the importer's side.
 */
static struct tn batch_curve(int i0, struct drm_amdgpu_ualink_batch_entry *e,
			     int a, int b, const char *tag)
{
	double x[NSIZES], wall[NSIZES], cpu[NSIZES], own[NSIZES];
	double pwall[NSIZES], pcpu[NSIZES];
	FILE *o = data_file("tn-", tag, "dat");
	struct tn tn;
	int s;

	for (s = 0; s < NSIZES; s++) {
		uint64_t w[BATCH_RUNS], c[BATCH_RUNS], m[BATCH_RUNS];
		uint64_t pw[BATCH_RUNS], pc[BATCH_RUNS];
		int n = sizes[s], r, i;

		for (r = 0; r < BATCH_RUNS; r++) {
			uint64_t t, tc, bells;
			int ret;

			if (r & 1)
				prime_run(a, b, n, &pw[r], &pc[r]);

			for (i = 0; i < n; i++) {
				e[i].gem_handle = 0;
				e[i].fd = 0;
				e[i].error = 0;
			}
			/* the doorbells this thread rang, delivered by the emulator */
			bells = count(0, "fabric_bell_ns");
			tc = cpu_ns();
			t = now_ns();
			ret = ualink_import_batch(i0, e, n, 0);
			w[r] = now_ns() - t;
			c[r] = cpu_ns() - tc;
			bells = count(0, "fabric_bell_ns") - bells;
			m[r] = c[r] > bells ? c[r] - bells : 0;
			lib_check(ret, "batched import");
			for (i = 0; i < n; i++) {
				if (e[i].error) {
					errno = -e[i].error;
					die("an entry of the batch");
				}
				gem_close(i0, e[i].gem_handle);
			}
			settle(0, "imports", 0);
			if (!(r & 1))
				prime_run(a, b, n, &pw[r], &pc[r]);
		}
		qsort(w, BATCH_RUNS, sizeof(*w), cmp_u64);
		qsort(c, BATCH_RUNS, sizeof(*c), cmp_u64);
		qsort(m, BATCH_RUNS, sizeof(*m), cmp_u64);
		qsort(pw, BATCH_RUNS, sizeof(*pw), cmp_u64);
		qsort(pc, BATCH_RUNS, sizeof(*pc), cmp_u64);
		x[s] = n;
		wall[s] = w[BATCH_RUNS / 2] / 1000.0;
		cpu[s] = c[BATCH_RUNS / 2] / 1000.0;
		own[s] = m[BATCH_RUNS / 2] / 1000.0;
		pwall[s] = pw[BATCH_RUNS / 2] / 1000.0;
		pcpu[s] = pc[BATCH_RUNS / 2] / 1000.0;
		fprintf(o, "%d %.1f %.1f %.1f %.1f %.1f\n", n, wall[s], cpu[s],
			own[s], pwall[s], pcpu[s]);
	}
	fclose(o);
	tn.wall = fit_line(x, wall, NSIZES);
	tn.cpu = fit_line(x, cpu, NSIZES);
	tn.own = fit_line(x, own, NSIZES);
	tn.prime_wall = fit_line(x, pwall, NSIZES);
	tn.prime_cpu = fit_line(x, pcpu, NSIZES);
	return tn;
}

/* Import @e (all of it) once, so that every connection is up. */
static void batch_warm(int i0, struct drm_amdgpu_ualink_batch_entry *e, int n)
{
	int i;

	lib_check(ualink_import_batch(i0, e, n, 0), "warm-up batch");
	for (i = 0; i < n; i++) {
		if (e[i].error) {
			errno = -e[i].error;
			die("an entry of the warm-up batch");
		}
		gem_close(i0, e[i].gem_handle);
		e[i].gem_handle = 0;
		e[i].error = 0;
		e[i].fd = 0;
	}
	settle(0, "imports", 0);
}

int main(void)
{
	static uint64_t info_ns[N], exp_ns[N], first_ns[N], first_cpu[N],
			again_ns[N], again_b2b_ns[N], prime_b2b_ns[N], release_ns[N],
			info_b2b_ns[N], info12_ns[N];
	static struct drm_amdgpu_ualink_handle h[N];
	static uint32_t gem[N];
	static struct drm_amdgpu_ualink_batch_entry one[MAX_BATCH], many[MAX_BATCH];
	int e0 = open_accel(EXPORTER), i0 = open_accel(0);
	struct figure info, exp, first, firstc, again, again_b2b, release, rt, rtc,
		      info_b2b, info12;
	struct worker w0a, w0b, w1a, w1b;
	uint32_t *batch_gem;
	struct tn tn1, tnn;
	char line[128];
	struct prime p;
	int n = 0, i, peers[4];
	FILE *hf, *o;

	table = data_file("", "table", "txt");
	p = prime_anchor();
	pipe_anchor(&rt, &rtc);

	/* (a) the fixed cost of the ioctl */
	for (i = 0; i < N; i++) {
		struct drm_amdgpu_ualink_info in;
		uint64_t t = now_ns();

		lib_check(ualink_info(i0, &in), "info");
		info_ns[i] = now_ns() - t;
	}

	/* export: the first export of a fresh buffer, on accelerator 1 */
	for (i = 0; i < N; i++) {
		uint64_t t;
		int ret;

		gem[i] = vpod_create(e0, 64 << 10);
		t = now_ns();
		ret = ualink_export(e0, gem[i], &h[i]);
		exp_ns[i] = now_ns() - t;
		lib_check(ret, "export");
	}

	/*
	 * First import on accelerator 0 (one NPA_REQ round trip), then the
	 * live handle again (a lookup and an fd), then the release timed
	 * alone: close -> the exporter's grants back to 0, waited for before
	 * the next sample.
	 */
	w0a = worker_read(0);
	w1a = worker_read(EXPORTER);
	for (i = 0; i < N; i++) {
		uint64_t t, tc;
		int fd, fd2, ret;

		tc = cpu_ns();
		t = now_ns();
		ret = ualink_import(i0, h[i], AMDGPU_UALINK_IMPORT_CLOEXEC, &fd);
		first_ns[i] = now_ns() - t;
		first_cpu[i] = cpu_ns() - tc;
		lib_check(ret, "import");
		t = now_ns();
		ret = ualink_import(i0, h[i], AMDGPU_UALINK_IMPORT_CLOEXEC, &fd2);
		again_ns[i] = now_ns() - t;
		lib_check(ret, "import again");
		close(fd2);
		t = now_ns();
		close(fd);
		while (count(EXPORTER, "grants"))
			;
		release_ns[i] = now_ns() - t;
		settle(0, "imports", 0);
	}
	w0b = worker_read(0);
	w1b = worker_read(EXPORTER);

	/*
	 * The repeated import back to back, and PRIME's cached export back to
	 * back beside it: one live import and one vgem buffer with a live
	 * dma-buf, then the two alternated N times in one loop, so that both
	 * are measured under the same state of the emulator (run apart, on
	 * this machine they moved by up to half from one run to the next).
	 * Right after a first import (above), the importing thread has just
	 * slept through the round trip and its worker may still be finishing;
	 * in a row, neither.
	 *
	 * In the same loop, OP_INFO twice: with the uAPI's 56-byte argument,
	 * and with a 12-byte one, PRIME's size (DRM copies a shorter argument
	 * in, zero-fills the rest and copies as much back out: the handler's
	 * work is the same). Their difference is what the size of our
	 * argument costs any of our operations against PRIME's.
	 */
	{
		struct drm_mode_create_dumb c = { .width = 1024, .height = 16, .bpp = 32 };
		int a = open_node("vgem", 0, 1), held, vheld, fd;

		ioc(a, DRM_IOCTL_MODE_CREATE_DUMB, &c, "vgem dumb create");
		if (drmPrimeHandleToFD(a, c.handle, DRM_CLOEXEC, &vheld))
			die("PRIME handle->fd");
		lib_check(ualink_import(i0, h[0], AMDGPU_UALINK_IMPORT_CLOEXEC, &held),
			  "import");
		for (i = 0; i < N; i++) {
			uint64_t t = now_ns();

			if (drmPrimeHandleToFD(a, c.handle, DRM_CLOEXEC, &fd))
				die("PRIME handle->fd, back to back");
			prime_b2b_ns[i] = now_ns() - t;
			close(fd);
			t = now_ns();
			lib_check(ualink_import(i0, h[0], AMDGPU_UALINK_IMPORT_CLOEXEC, &fd),
				  "import back to back");
			again_b2b_ns[i] = now_ns() - t;
			close(fd);
			/* each first in turn: the position after close() is no factor */
			if (i & 1) {
				info_b2b_ns[i] = info_call(i0, sizeof(struct drm_amdgpu_ualink));
				info12_ns[i] = info_call(i0, sizeof(struct drm_prime_handle));
			} else {
				info12_ns[i] = info_call(i0, sizeof(struct drm_prime_handle));
				info_b2b_ns[i] = info_call(i0, sizeof(struct drm_amdgpu_ualink));
			}
		}
		close(held);
		close(vheld);
		gem_close(a, c.handle);
		close(a);
		settle(0, "imports", 0);
	}
	for (i = 0; i < N; i++)
		gem_close(e0, gem[i]);
	settle(EXPORTER, "exports", 0);

	/*
	 * The batches: MAX_BATCH buffers of accelerator 1; and a buffer of
	 * each other DRM accelerator with the heap of every fabric-only one.
	 */
	batch_gem = calloc(MAX_BATCH, sizeof(*batch_gem));
	if (!batch_gem)
		die("memory");
	for (i = 0; i < MAX_BATCH; i++) {
		batch_gem[i] = vpod_create(e0, 4096);
		lib_check(ualink_export(e0, batch_gem[i], &one[i].handle), "export");
	}
	for (i = 1; i < 4; i++) {
		int fd = open_accel(i);

		lib_check(ualink_export(fd, vpod_create(fd, 64 << 10),
					&many[n++].handle), "export");
		peers[i] = fd;	/* the buffers live as long as the file */
	}
	hf = fopen(DBG "/handles", "r");
	if (!hf)
		die("the fabric's handles");
	while (n < MAX_BATCH && fgets(line, sizeof(line), hf)) {
		unsigned long long lo, hi;
		unsigned int id;

		if (sscanf(line, "%u 0x%llx 0x%llx", &id, &lo, &hi) != 3)
			continue;
		many[n].handle.lo = lo;
		many[n].handle.hi = hi;
		n++;
	}
	fclose(hf);
	if (n != MAX_BATCH) {
		errno = ENODEV;
		die("a pod of 1,024 accelerators");
	}
	batch_warm(i0, one, MAX_BATCH);
	batch_warm(i0, many, MAX_BATCH);
	{
		/* PRIME's sweeps hold up to MAX_BATCH dma-buf fds at once */
		const rlim_t need = 4 * MAX_BATCH;
		int a = open_node("vgem", 0, 1), b = open_node("vgem", 0, 1);
		struct rlimit rl;

		if (getrlimit(RLIMIT_NOFILE, &rl))
			die("RLIMIT_NOFILE");
		if (rl.rlim_cur < need) {
			rl.rlim_cur = need;
			if (rl.rlim_max < need)
				rl.rlim_max = need;	/* the guest runs this as root */
			if (setrlimit(RLIMIT_NOFILE, &rl))
				die("RLIMIT_NOFILE");
		}
		tn1 = batch_curve(i0, one, a, b, "one");
		tnn = batch_curve(i0, many, a, b, "many");
		close(a);
		close(b);
	}

	info = stats("INFO alone (fixed cost of the ioctl)", "info", info_ns, N);
	exp = stats("export (fresh buffer)", "export", exp_ns, N);
	first = stats("first import, wall (NPA_REQ round trip)", "first", first_ns, N);
	firstc = stats("first import, importer CPU", "first-cpu", first_cpu, N);
	again = stats("repeated import, after a first import", "again", again_ns, N);
	again_b2b = stats("repeated import, back to back", "again-b2b", again_b2b_ns, N);
	p.h2fd_b2b = stats("PRIME handle->fd, cached, back to back", "prime-b2b",
			   prime_b2b_ns, N);
	release = stats("release (close -> exporter grants 0)", "release", release_ns, N);
	info_b2b = stats("INFO, back to back, 56-byte argument", NULL, info_b2b_ns, N);
	info12 = stats("INFO, back to back, 12-byte argument", NULL, info12_ns, N);

	out("\nUALink uAPI on the emulated pod: %ld vCPUs, %d samples each (batches: %d runs per size)\n",
	    sysconf(_SC_NPROCESSORS_ONLN), N, BATCH_RUNS);
	out("%-42s %9s %9s  %s\n", "figure", "median us", "p99 us", "ratio to the PRIME figure of this run");
	anchor_row(p.h2fd);
	anchor_row(p.fd2h);
	anchor_row(p.round);
	anchor_row(p.h2fd_cached);
	anchor_row(p.fd2h_cached);
	anchor_row(p.h2fd_b2b);
	figure_row(rt, p.round, "fresh round trip", 0);
	figure_row(rtc, p.round, "fresh round trip", 0);
	figure_row(info, p.fd2h_cached, "cached fd->handle", 0);
	figure_row(exp, p.round, "fresh round trip", 1.5);
	figure_row(first, p.round, "fresh round trip", 3);
	figure_row(firstc, p.round, "fresh round trip", 3);
	figure_row(first, rt, "thread round trip", 0);
	figure_row(firstc, rtc, "its caller CPU", 0);
	figure_row(again, p.h2fd_cached, "cached handle->fd", 1);
	figure_row(again_b2b, p.h2fd_b2b, "b2b cached handle->fd", 1);
	figure_row(info_b2b, p.h2fd_b2b, "b2b cached handle->fd", 0);
	figure_row(info12, p.h2fd_b2b, "b2b cached handle->fd", 0);
	figure_row(release, p.round, "fresh round trip", 0);
	batch_rows("1 exporter", tn1, first, p.round);
	batch_rows("N exporters", tnn, first, p.round);

	out("\nMailbox, over the %d first imports and their releases (NPA_REQ and NPA_RELEASE):\n", N);
	out("  exporter's handler: %.1f us per request (%llu requests)\n",
	    (double)(w1b.request_ns - w1a.request_ns) / 1000.0 /
	    (double)(w1b.requests - w1a.requests ?: 1),
	    (unsigned long long)(w1b.requests - w1a.requests));
	out("  worker executions per import: %.2f importer, %.2f exporter\n",
	    (double)(w0b.runs - w0a.runs) / N, (double)(w1b.runs - w1a.runs) / N);
	out("  wake-up, doorbell -> worker start: mean %.1f us importer, %.1f us exporter; max %.1f us\n",
	    (double)(w0b.wake_ns - w0a.wake_ns) / 1000.0 / (double)(w0b.woken - w0a.woken ?: 1),
	    (double)(w1b.wake_ns - w1a.wake_ns) / 1000.0 / (double)(w1b.woken - w1a.woken ?: 1),
	    (w0b.wake_max_ns > w1b.wake_max_ns ? w0b.wake_max_ns : w1b.wake_max_ns) / 1000.0);
	out("T(N) = a + b N (us), fitted over N = 1...%d, connections up:\n", MAX_BATCH);
	out("  1 exporter:  wall %.1f + %.2f N, importer CPU %.1f + %.2f N (%.2f N less doorbells)\n",
	    tn1.wall.a, tn1.wall.b, tn1.cpu.a, tn1.cpu.b, tn1.own.b);
	out("    PRIME beside it: wall %.1f + %.2f N, CPU %.1f + %.2f N\n",
	    tn1.prime_wall.a, tn1.prime_wall.b, tn1.prime_cpu.a, tn1.prime_cpu.b);
	out("  N exporters: wall %.1f + %.2f N, importer CPU %.1f + %.2f N (%.2f N less doorbells)\n",
	    tnn.wall.a, tnn.wall.b, tnn.cpu.a, tnn.cpu.b, tnn.own.b);
	out("    PRIME beside it: wall %.1f + %.2f N, CPU %.1f + %.2f N\n",
	    tnn.prime_wall.a, tnn.prime_wall.b, tnn.prime_cpu.a, tnn.prime_cpu.b);

	o = data_file("", "fit", "dat");
	fprintf(o, "a1=%f\nb1=%f\nan=%f\nbn=%f\nprime=%f\n", tn1.wall.a,
		tn1.wall.b, tnn.wall.a, tnn.wall.b, p.round.median_us);
	fclose(o);
	fclose(table);
	for (i = 1; i < 4; i++)
		close(peers[i]);
	for (i = 0; i < MAX_BATCH; i++)
		gem_close(e0, batch_gem[i]);
	free(batch_gem);
	return 0;
}
