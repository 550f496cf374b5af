// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A stateful fuzzer of the UALink uAPI on the emulated pod.
 *
 * Several worker processes, each with its own files on the pod's DRM
 * nodes, perform random sequences of: create and export a buffer, end an
 * export (close its last GEM handle), import one handle or a batch (with
 * or without fds), PRIME the import's fd on the same file, read through an
 * import, close an import, and fork a short-lived child that imports, reads
 * and exits without closing anything. One more process, the chaos worker,
 * meanwhile sets random mailbox faults and short timeouts, resets nodes,
 * takes them offline and back, and moves them to another vPod and back.
 *
 * Handles travel between workers through a shared table, as they would
 * between ranks of a job. After each step the worker checks:
 *  - every errno is one the uAPI documents for that call;
 *  - a read through an import returns the exporter's data (written once,
 *    when the buffer was made) or fails with ENODEV;
 *  - once its exporter ended an export, a read through an import of it
 *    fails within the revocation bound (checked by a worker on an export
 *    it never published, imported on another node: a published one may
 *    be kept alive by another worker's local import, a GEM handle of the
 *    same buffer);
 * and at the end, with everything closed, every node is back at zero and
 * active (the harness then checks the kernel log and kmemleak).
 *
 * Seeds: UALINK_FUZZ_SEED (default: from the clock; always printed).
 * Worker w draws from its own generator seeded with (seed, w), so a seed
 * replays each worker's choices of calls and arguments; how the workers
 * interleave, and so which handles they find in the shared table, is the
 * scheduler's. UALINK_FUZZ_SECONDS is the budget (default 60),
 * UALINK_FUZZ_WORKERS the number of workers besides chaos (default 3).
 *
 * syzkaller users: amdgpu_ualink.syz.txt beside this file describes the
 * same calls in sys/linux syntax, with handles as resources (export
 * produces one, the imports consume it); the errno sets below are the
 * ones to assert.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xf86drm.h>

#include "igt.h"
#include "vpod_lib.h"

IGT_TEST_DESCRIPTION("A stateful fuzzer of the UALink uAPI on the emulated pod.");

#define SIZE		(16 * 1024ull)
#define MAX_WORKERS	8
#define TABLE		64	/* shared exports */
#define MY_EXPORTS	8
#define MY_IMPORTS	32
#define BATCH		8
/* a revoked import must fault within this (revocation over a faulty fabric) */
#define REVOKE_MS	30000

/*
 * The shared table of exports: written by the owner, read by everyone. A
 * buffer's contents are the pattern of its handle (seed_of()), so a reader
 * needs nothing but the handle: a slot reused under it gives a handle that
 * is stale, torn or new, each of which imports its own data or fails.
 */
struct shared_export {
	volatile int state;	/* 0 free, 1 live, 2 ended, 3 being filled */
	struct drm_amdgpu_ualink_handle handle;
};

struct shared {
	struct shared_export exp[TABLE];
	volatile int stop;
	volatile uint64_t ops[MAX_WORKERS + 1];
	volatile uint64_t errors[MAX_WORKERS + 1];
	volatile uint64_t checked[MAX_WORKERS + 1];
};

static struct shared *sh;
static int n_nodes;

/* xorshift64*, one per worker */
static uint64_t rng;

static uint64_t next(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

static unsigned int pick(unsigned int n)
{
	return next() % n;
}

static void seed_worker(uint64_t seed, unsigned int w)
{
	rng = seed ^ (0x9e3779b97f4a7c15ull * (w + 1));
	if (!rng)
		rng = 1;
}

/* errno sets, as amdgpu_ualink.h and amdgpu_ualink_vpod.h document them */
static const int create_errnos[] = { ENOSPC, ENOMEM, 0 };
static const int export_errnos[] = { ENETDOWN, ENOSPC, ENOMEM, 0 };
static const int import_errnos[] = {
	ENOENT, EACCES, ENETDOWN, ETIMEDOUT, ENOSPC, ENOLINK, EIO, ENOMEM, 0
};
static const int batch_errnos[] = { ENETDOWN, ENOMEM, 0 };
static const int access_errnos[] = { ENODEV, 0 };

static void expect_errno(const char *what, int ret, const int *allowed)
{
	const int *a;

	if (!ret)
		return;
	for (a = allowed; *a; a++)
		if (-ret == *a)
			return;
	igt_assert_f(false, "%s: undocumented error %s\n", what, strerror(-ret));
}

/* one worker's own state */
struct my_export {
	int fd;
	uint32_t gem;
	int slot;
	struct drm_amdgpu_ualink_handle handle;
};

struct my_import {
	int fd;
	uint32_t gem;
	int dmabuf;	/* or -1 */
	uint32_t seed;
};

static int files[VPOD_MAX_ACCELS];
static struct my_export mexp[MY_EXPORTS];
static int n_mexp;
static struct my_import mimp[MY_IMPORTS];
static int n_mimp;
static unsigned int me;

static void count_op(int ret)
{
	sh->ops[me]++;
	if (ret)
		sh->errors[me]++;
}

/* read 256 bytes through @gem: the exporter's data, or ENODEV */
static void check_read(int fd, uint32_t gem, uint32_t seed, const char *what)
{
	uint8_t buf[256];
	uint64_t off = pick(SIZE / sizeof(buf)) * sizeof(buf);
	int64_t bad;
	int ret;

	ret = gpu_access(fd, gem, 0, off, buf,
			 sizeof(buf));
	count_op(ret);
	expect_errno(what, ret, access_errnos);
	if (ret)
		return;
	bad = pattern_check(buf, sizeof(buf), seed, off);
	igt_assert_f(bad < 0, "%s: byte %lld at offset %llu is not the exporter's\n",
		     what, (long long)bad, (unsigned long long)off);
	sh->checked[me]++;
}

static uint32_t seed_of(struct drm_amdgpu_ualink_handle h)
{
	return (uint32_t)(h.lo >> 10) ^ (uint32_t)h.hi ^ (uint32_t)(h.hi >> 32);
}

/* a free slot, or one whose export ended: reused */
static bool kept(int fd, uint32_t gem);

static int free_slot(void)
{
	int i, s = pick(TABLE);

	for (i = 0; i < TABLE; i++, s = (s + 1) % TABLE)
		if (__sync_bool_compare_and_swap(&sh->exp[s].state, 0, 3) ||
		    __sync_bool_compare_and_swap(&sh->exp[s].state, 2, 3))
			return s;
	return -1;
}

/*
 * A buffer on @fd, exported, holding the pattern of its handle before
 * anyone learns the handle. Returns 0, or the documented errno it got.
 */
static int create_export(int fd, uint32_t *gem,
			 struct drm_amdgpu_ualink_handle *h)
{
	int ret = __bo_create(fd, SIZE, AMDGPU_UALINK_VPOD_DOMAIN_VRAM, gem);

	count_op(ret);
	expect_errno("create", ret, create_errnos);
	if (ret)
		return ret;
	ret = ualink_export(fd, *gem, h);
	count_op(ret);
	expect_errno("export", ret, export_errnos);
	if (ret) {
		gem_close(fd, *gem);
		return ret;
	}
	gpu_fill(fd, *gem, 0, SIZE, seed_of(*h));
	return 0;
}

static void op_export(void)
{
	struct drm_amdgpu_ualink_handle h;
	int fd = files[pick(n_nodes)], slot;
	uint32_t gem;

	if (n_mexp == MY_EXPORTS || create_export(fd, &gem, &h))
		return;
	slot = free_slot();
	if (slot < 0) {
		gem_close(fd, gem);
		return;
	}
	sh->exp[slot].handle = h;
	__sync_synchronize();
	sh->exp[slot].state = 1;
	mexp[n_mexp++] = (struct my_export){ fd, gem, slot, h };
}

/* End one of our exports: close its GEM handle (it may live on elsewhere). */
static void op_end_export(void)
{
	int i;

	if (!n_mexp)
		return;
	i = pick(n_mexp);
	sh->exp[mexp[i].slot].state = 2;
	gem_close(mexp[i].fd, mexp[i].gem);
	mexp[i] = mexp[--n_mexp];
}

/*
 * Revocation, checked where only we know the handle: export a buffer
 * without publishing it, import it on another node, read, close the
 * export's only GEM handle, and the import must fault within the bound. (A
 * published export may be kept alive by another worker's local import of
 * it, a GEM handle of the same buffer, as the uAPI says it should.)
 */
static void op_revoke_check(void)
{
	unsigned int n = pick(n_nodes), m = (n + 1 + pick(n_nodes - 1)) % n_nodes;
	int fd = files[n], other = files[m], dmabuf, ret;
	struct drm_amdgpu_ualink_handle h;
	uint64_t deadline;
	uint32_t gem, imp, word;

	if (create_export(fd, &gem, &h))
		return;
	ret = ualink_import(other, h, 0, &dmabuf);
	count_op(ret);
	expect_errno("import to revoke", ret, import_errnos);
	if (ret) {
		gem_close(fd, gem);
		return;
	}
	igt_assert_f(!drmPrimeFDToHandle(other, dmabuf, &imp),
		     "PRIME of an import: %s\n", strerror(errno));
	close(dmabuf);
	check_read(other, imp, seed_of(h), "read before the end");
	gem_close(fd, gem);
	deadline = vpod_now_ms() + REVOKE_MS;
	while (!gpu_access(other, imp, 0, 0, &word, 4)) {
		if (vpod_now_ms() >= deadline) {
			node_dump(n);
			node_dump(m);
		}
		igt_assert_f(vpod_now_ms() < deadline,
			     "an ended export of node %u is still readable through its import on node %u after %u ms\n",
			     n, m, REVOKE_MS);
		vpod_sleep_ms(10);
	}
	sh->checked[me]++;
	if (!kept(other, imp))
		gem_close(other, imp);
}

/* a live or ended handle from the table, or a random one */
static struct drm_amdgpu_ualink_handle some_handle(uint32_t *seed, bool *known)
{
	struct drm_amdgpu_ualink_handle h;
	int s = pick(TABLE + 4);

	*known = s < TABLE && sh->exp[s].state >= 1 && sh->exp[s].state <= 2;
	if (*known) {
		h = sh->exp[s].handle;
	} else {
		h.lo = next();
		h.hi = next() | 1;	/* never all zero */
	}
	*seed = seed_of(h);
	return h;
}

/*
 * Is @gem of @fd kept already? PRIME gives one GEM handle per buffer and
 * file: importing a live handle again on the same file and PRIMEing its
 * fd there gives the handle kept before, which must be closed only once.
 */
static bool kept(int fd, uint32_t gem)
{
	int i;

	for (i = 0; i < n_mimp; i++)
		if (mimp[i].fd == fd && mimp[i].gem == gem)
			return true;
	return false;
}

static void keep_import(int fd, uint32_t gem, int dmabuf, uint32_t seed)
{
	if (kept(fd, gem)) {
		if (dmabuf >= 0)
			close(dmabuf);
		return;
	}
	if (n_mimp == MY_IMPORTS) {
		gem_close(fd, gem);
		if (dmabuf >= 0)
			close(dmabuf);
		return;
	}
	mimp[n_mimp++] = (struct my_import){ fd, gem, dmabuf, seed };
}

static void op_import(void)
{
	int fd = files[pick(n_nodes)], dmabuf, ret;
	uint32_t seed, gem;
	bool known;
	struct drm_amdgpu_ualink_handle h = some_handle(&seed, &known);

	ret = ualink_import(fd, h, pick(2) ? AMDGPU_UALINK_IMPORT_CLOEXEC : 0,
			    &dmabuf);
	count_op(ret);
	expect_errno("import", ret, import_errnos);
	if (ret)
		return;
	igt_assert_f(known, "a random handle was imported\n");
	ret = drmPrimeFDToHandle(fd, dmabuf, &gem) ? -errno : 0;
	count_op(ret);
	igt_assert_f(!ret, "PRIME of an import on its file: %s\n", strerror(-ret));
	check_read(fd, gem, seed, "read through an import");
	keep_import(fd, gem, pick(2) ? dmabuf : (close(dmabuf), -1), seed);
}

static void op_batch(void)
{
	struct drm_amdgpu_ualink_batch_entry e[BATCH] = {};
	uint32_t seed[BATCH], flags = 0;
	int fd = files[pick(n_nodes)], n = 1 + pick(BATCH), i, ret;
	bool known[BATCH];

	for (i = 0; i < n; i++)
		e[i].handle = some_handle(&seed[i], &known[i]);
	if (pick(2))
		flags |= AMDGPU_UALINK_IMPORT_FDS;
	ret = ualink_import_batch(fd, e, n, flags);
	count_op(ret);
	expect_errno("batch", ret, batch_errnos);
	if (ret)
		return;
	for (i = 0; i < n; i++) {
		expect_errno("batch entry", e[i].error, import_errnos);
		if (e[i].error)
			continue;
		igt_assert_f(known[i], "a random handle was imported in a batch\n");
		igt_assert_neq_u32(e[i].gem_handle, 0);
		if (flags & AMDGPU_UALINK_IMPORT_FDS)
			igt_assert_lte(0, e[i].fd);
		else
			igt_assert_eq(e[i].fd, -1);
		check_read(fd, e[i].gem_handle, seed[i], "read through a batch import");
		keep_import(fd, e[i].gem_handle, e[i].fd, seed[i]);
	}
}

static void op_read(void)
{
	struct my_import *m;

	if (!n_mimp)
		return;
	m = &mimp[pick(n_mimp)];
	check_read(m->fd, m->gem, m->seed, "read through a kept import");
}

static void op_close_import(void)
{
	int i;

	if (!n_mimp)
		return;
	i = pick(n_mimp);
	gem_close(mimp[i].fd, mimp[i].gem);
	if (mimp[i].dmabuf >= 0)
		close(mimp[i].dmabuf);
	mimp[i] = mimp[--n_mimp];
}

/* a child that imports on a file of its own, reads, and exits holding it */
static void op_fork(void)
{
	pid_t pid;
	int status;

	pid = fork();
	igt_assert_lte(0, pid);
	if (!pid) {
		/* no IGT asserts here: exit codes say what went wrong */
		int fd = open(vpod.path[pick(n_nodes)], O_RDWR), dmabuf, ret, i;
		struct drm_amdgpu_ualink_handle h;
		uint8_t buf[256];
		uint32_t seed, gem;
		bool known;

		if (fd < 0)
			_exit(10);
		h = some_handle(&seed, &known);
		ret = ualink_import(fd, h, 0, &dmabuf);
		if (ret) {
			for (i = 0; import_errnos[i]; i++)
				if (-ret == import_errnos[i])
					_exit(0);
			_exit(11);	/* undocumented */
		}
		if (!known || drmPrimeFDToHandle(fd, dmabuf, &gem))
			_exit(12);
		ret = gpu_access(fd, gem, 0, 0, buf, sizeof(buf));
		if (ret && ret != -ENODEV)
			_exit(13);
		if (!ret && pattern_check(buf, sizeof(buf), seed, 0) >= 0)
			_exit(14);	/* not the exporter's data */
		_exit(0);	/* the kernel closes everything */
	}
	igt_assert_eq(waitpid(pid, &status, 0), pid);
	igt_assert_f(WIFEXITED(status) && !WEXITSTATUS(status),
		     "forked child failed: status %#x\n", status);
	count_op(0);
}

static void worker(unsigned int w, uint64_t seed)
{
	unsigned int i;

	me = w;
	seed_worker(seed, w);
	for (i = 0; i < (unsigned int)n_nodes; i++) {
		files[i] = open(vpod.path[i], O_RDWR | O_CLOEXEC);
		igt_assert_lte(0, files[i]);
	}
	while (!sh->stop) {
		switch (pick(16)) {
		case 0: case 1: op_export(); break;
		case 2: op_end_export(); break;
		case 3: case 4: case 5: op_import(); break;
		case 6: case 7: op_batch(); break;
		case 8: case 9: case 10: op_read(); break;
		case 11: case 12: op_close_import(); break;
		case 13: op_fork(); break;
		case 14: op_revoke_check(); break;
		default: op_import(); break;
		}
	}
	/* close in a random order, exports included */
	while (n_mimp || n_mexp) {
		if (n_mimp && pick(2))
			op_close_import();
		else if (n_mexp)
			op_end_export();
		else
			op_close_import();
	}
	for (i = 0; i < (unsigned int)n_nodes; i++)
		close(files[i]);
}

static const char *const fault_rules[] = {
	"drop rate=20000",
	"delay rate=200000 delay_ms=50",
	"duplicate rate=50000",
	"reorder rate=50000 delay_ms=20",
	"corrupt rate=10000",
};

/* the chaos worker: the pod changes under the others' feet */
static void chaos(unsigned int w, uint64_t seed)
{
	me = w;
	seed_worker(seed, w);
	while (!sh->stop) {
		unsigned int id = pick(n_nodes);

		switch (pick(6)) {
		case 0:
			set_fault(id, fault_rules[pick(5)]);
			break;
		case 1:
			node_write(id, "fault", "clear");
			break;
		case 2:
			set_timeout(id, 200 + pick(800), 1 + pick(3));
			break;
		case 3:
			set_control(id, "reset");
			wait_state(id, "active", VPOD_FAULT_ASYNC_MS);
			break;
		case 4:
			set_control(id, "offline");
			vpod_sleep_ms(50 + pick(200));
			set_control(id, "online");
			wait_state(id, "active", VPOD_FAULT_ASYNC_MS);
			break;
		default:
			set_vpod(id, 1);
			vpod_sleep_ms(50 + pick(200));
			set_vpod(id, 0);
			break;
		}
		count_op(0);
		vpod_sleep_ms(100 + pick(400));
	}
	clear_faults();
	for (unsigned int id = 0; id < (unsigned int)n_nodes; id++) {
		node_write(id, "timeout", "%s", VPOD_TIMEOUT_DEFAULT);
		node_write(id, "vpod", "0");
		wait_state(id, "active", VPOD_FAULT_ASYNC_MS);
	}
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : dflt;
}

static void test_fuzz(void)
{
	uint64_t seed = env_u64("UALINK_FUZZ_SEED", 0);
	unsigned int seconds = env_u64("UALINK_FUZZ_SECONDS", 60);
	unsigned int workers = env_u64("UALINK_FUZZ_WORKERS", 3);
	uint64_t total = 0, errors = 0, checked = 0;
	unsigned int w, id;

	if (!seed)
		seed = vpod_now_ms() * 0x100000001b3ull ^ getpid();
	igt_assert(workers >= 1 && workers <= MAX_WORKERS);
	n_nodes = vpod.n_drm;
	igt_info("fuzz: seed %#llx, %u s, %u workers and chaos on %d nodes (replay: UALINK_FUZZ_SEED=%#llx)\n",
		 (unsigned long long)seed, seconds, workers, n_nodes,
		 (unsigned long long)seed);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	igt_assert(sh != MAP_FAILED);
	memset(sh, 0, sizeof(*sh));

	igt_fork(child, (int)workers + 1) {
		if (child == (int)workers)
			chaos(child, seed);
		else
			worker(child, seed);
	}
	/* the chaos worker's changes are undone by our clean-up too */
	for (id = 0; id < (unsigned int)n_nodes; id++)
		vpod_mark_dirty(id);
	vpod_sleep_ms(seconds * 1000);
	sh->stop = 1;
	igt_waitchildren_timeout(REVOKE_MS / 1000 * 4, "fuzz workers");
	for (w = 0; w <= workers; w++) {
		total += sh->ops[w];
		errors += sh->errors[w];
		checked += sh->checked[w];
	}
	igt_info("fuzz: seed %#llx: %llu calls, %llu failed with a documented errno, %llu data or revocation checks passed\n",
		 (unsigned long long)seed, (unsigned long long)total,
		 (unsigned long long)errors, (unsigned long long)checked);
	igt_assert_lt_u64(0, checked);
	munmap(sh, sizeof(*sh));
	vpod_cleanup();
	wait_no_leaks(VPOD_FAULT_ASYNC_MS);
}

igt_main
{
	igt_fixture
		vpod_init();

	igt_describe("random uAPI sequences from several processes, with chaos; invariants hold");
	vpod_subtest("fuzz") {
		igt_set_timeout(env_u64("UALINK_FUZZ_SECONDS", 60) + 300, "fuzz");
		test_fuzz();
	}

	/*
	 * Not a subtest: whatever ran, nothing may stay held once it is all
	 * closed; a leak fails the program (exit 98), which vm-test reports
	 * by the program's name.
	 */
	igt_fixture
		vpod_fini(VPOD_FAULT_ASYNC_MS);
}
