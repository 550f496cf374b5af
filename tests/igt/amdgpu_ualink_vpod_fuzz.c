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
 * between ranks of a job.
 *
 * The fuzzer judges each call against its own model of the pod. The chaos
 * worker works in episodes, each undone before it ends (faults cleared,
 * timeout restored, back online, back in vPod 0, active again); a shared
 * counter is odd during an episode. A call that began and ended with the
 * same even count ran in a calm window, and there the model is strict:
 *  - an import of a live export made in the same calm window must succeed,
 *    and a read through it must return the exporter's data;
 *  - an import of an ended export succeeds (a local import keeps the
 *    buffer alive) or fails with ENOENT;
 *  - a random handle fails with ENOENT when its accelerator is in the pod,
 *    with EACCES when it is not;
 *  - create, export and a batch as a whole succeed.
 * Outside a calm window (or for state older than it) any errno the uAPI
 * documents for the call is allowed, and a read returns the exporter's
 * data or fails with ENODEV. Always: a random handle never imports; once
 * its exporter ended an export, a read through an import of it fails
 * within the revocation bound (checked by a worker on an export it never
 * published, imported on another node); at the end, with everything
 * closed, every node is back at zero and active (the harness then checks
 * the kernel log and kmemleak).
 *
 * Coverage: each call is counted by operation and model state; the table
 * is printed, and every pair the model defines must have been reached.
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
 * is stale, torn or new, each of which imports its own data or fails. The
 * owner makes @ver odd while it changes a slot, so a reader knows whether
 * what it read held still.
 */
struct shared_export {
	volatile uint32_t ver;
	volatile int state;	/* 0 free, 1 live, 2 ended, 3 being filled */
	volatile uint64_t made;	/* the calm window it was made in */
	struct drm_amdgpu_ualink_handle handle;
};

/* the model's states of a call, by operation */
enum { OP_CREATE, OP_IMPORT, OP_BATCH, OP_ENTRY, OP_READ, OP_NUM };
enum {
	S_CALM,		/* create, batch, read: in a calm window */
	S_STIRRED,	/* create, batch, read, import: chaos, or older state */
	S_LIVE_CALM,	/* import: live export made in this calm window */
	S_ENDED_CALM,	/* import: ended export, calm */
	S_UNKNOWN_POD,	/* import: random handle, accelerator in the pod, calm */
	S_UNKNOWN_OUT,	/* import: random handle, accelerator absent, calm */
	S_NUM,
};

static const char *const op_names[OP_NUM] = {
	"create+export", "import", "batch", "batch entry", "read",
};
static const char *const state_names[S_NUM] = {
	"calm", "stirred", "live (calm)", "ended (calm)", "unknown, in pod (calm)",
	"unknown, absent (calm)",
};

/* which pairs the model defines, and so must be reached */
static const bool reachable[OP_NUM][S_NUM] = {
	[OP_CREATE] = { [S_CALM] = true, [S_STIRRED] = true },
	[OP_IMPORT] = { [S_STIRRED] = true, [S_LIVE_CALM] = true,
			[S_ENDED_CALM] = true, [S_UNKNOWN_POD] = true,
			[S_UNKNOWN_OUT] = true },
	[OP_BATCH] = { [S_CALM] = true, [S_STIRRED] = true },
	[OP_ENTRY] = { [S_STIRRED] = true, [S_LIVE_CALM] = true,
		       [S_ENDED_CALM] = true, [S_UNKNOWN_POD] = true,
		       [S_UNKNOWN_OUT] = true },
	[OP_READ] = { [S_CALM] = true, [S_STIRRED] = true },
};

struct shared {
	struct shared_export exp[TABLE];
	volatile int stop;
	/* chaos episodes begun and ended: odd while one runs */
	volatile uint64_t chaos;
	volatile uint64_t episodes;
	volatile uint64_t ops[MAX_WORKERS + 1];
	volatile uint64_t errors[MAX_WORKERS + 1];
	volatile uint64_t checked[MAX_WORKERS + 1];
	volatile uint64_t revoked[MAX_WORKERS + 1];
	volatile uint64_t cover[MAX_WORKERS + 1][OP_NUM][S_NUM];
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

/* errno sets, as amdgpu_drm.h and amdgpu_ualink_vpod.h document them */
static const int create_errnos[] = { ENOSPC, ENOMEM, 0 };
static const int export_errnos[] = { ENETDOWN, ENOSPC, ENOMEM, 0 };
static const int import_errnos[] = {
	ENOENT, EACCES, ENETDOWN, ETIMEDOUT, ENOSPC, ENOLINK, EREMOTEIO, ENOMEM, 0
};
static const int batch_errnos[] = { ENETDOWN, ENOMEM, 0 };
static const int access_errnos[] = { ENODEV, 0 };

static uint64_t fuzz_seed;
static unsigned int me;

static bool documented(int ret, const int *allowed)
{
	const int *a;

	if (!ret)
		return true;
	for (a = allowed; *a; a++)
		if (-ret == *a)
			return true;
	return false;
}

/* the chaos count now: odd while an episode runs */
static uint64_t window(void)
{
	uint64_t g = sh->chaos;

	__sync_synchronize();
	return g;
}

/* did a call that saw @g0 before and @g1 after run in one calm window? */
static bool calm(uint64_t g0, uint64_t g1)
{
	return g0 == g1 && !(g0 & 1);
}

/* never a window: (uint64_t)-1 is odd */
#define NOT_CALM	UINT64_MAX

/*
 * Judge a call's result by the model's state @st: what must come back
 * (0, ENOENT, EACCES) in a calm window, any documented errno outside it.
 */
static void judge(const char *what, int op, int st, int ret,
		  const int *allowed)
{
	bool ok;

	sh->cover[me][op][st]++;
	switch (st) {
	case S_CALM:
	case S_LIVE_CALM:
		ok = !ret;
		break;
	case S_ENDED_CALM:
		ok = !ret || ret == -ENOENT;
		break;
	case S_UNKNOWN_POD:
		ok = ret == -ENOENT;
		break;
	case S_UNKNOWN_OUT:
		ok = ret == -EACCES;
		break;
	default:
		ok = documented(ret, allowed);
		break;
	}
	igt_assert_f(ok, "%s, model state %s: %s (seed %#llx, worker %u)\n",
		     what, state_names[st], ret ? strerror(-ret) : "success",
		     (unsigned long long)fuzz_seed, me);
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
	int slot;	/* its export's table slot, or -1 */
	uint32_t ver;	/* the slot's version when imported */
	uint64_t made;	/* the calm window it was imported in, or NOT_CALM */
};

/*
 * A handle to import, and what the model knows of it: from the table (a
 * snapshot of its slot), or random.
 */
struct hpick {
	struct drm_amdgpu_ualink_handle h;
	uint32_t seed;
	int slot;	/* table slot, or -1 */
	bool known;	/* an export made it (the table, or one of ours) */
	bool live;	/* live when picked */
	uint32_t ver;	/* the slot's version when picked */
	uint64_t made;	/* the calm window its export was made in */
	bool in_pod;	/* random: its accelerator is in the pod */
};

static int files[VPOD_MAX_ACCELS];
static struct my_export mexp[MY_EXPORTS];
static int n_mexp;
static struct my_import mimp[MY_IMPORTS];
static int n_mimp;

static void count_op(int ret)
{
	sh->ops[me]++;
	if (ret)
		sh->errors[me]++;
}

/* a snapshot of slot @s; false when the owner was changing it */
static bool slot_read(int s, struct hpick *p)
{
	struct shared_export *e = &sh->exp[s];
	uint32_t v = e->ver;

	__sync_synchronize();
	p->live = e->state == 1;
	p->known = e->state == 1 || e->state == 2;
	p->made = e->made;
	p->h = e->handle;
	__sync_synchronize();
	p->ver = v;
	return !(v & 1) && e->ver == v;
}

/* has slot @s changed since version @ver? */
static bool slot_changed(int s, uint32_t ver)
{
	__sync_synchronize();
	return sh->exp[s].ver != ver;
}

static void slot_begin(int s)
{
	sh->exp[s].ver++;
	__sync_synchronize();
}

static void slot_end(int s)
{
	__sync_synchronize();
	sh->exp[s].ver++;
}

/* the model's state of an import of @p that saw @g0 before, @g1 after */
static int import_state(const struct hpick *p, uint64_t g0, uint64_t g1)
{
	bool quiet = calm(g0, g1);

	if (!quiet)
		return S_STIRRED;
	if (!p->known)
		return p->in_pod ? S_UNKNOWN_POD : S_UNKNOWN_OUT;
	if (!p->live || (p->slot >= 0 && slot_changed(p->slot, p->ver)))
		return S_ENDED_CALM;
	return p->made == g0 ? S_LIVE_CALM : S_STIRRED;
}

/* read 256 bytes through @m's buffer: the exporter's data, or ENODEV */
static void check_read(const struct my_import *m, const char *what)
{
	uint64_t off = pick(SIZE / 256) * 256, g0 = window(), g1;
	uint8_t buf[256];
	int64_t bad;
	int ret, st;

	ret = gpu_access(m->fd, m->gem, 0, off, buf, sizeof(buf));
	g1 = window();
	count_op(ret);
	/* strict when it, the import and the export all lie in one window */
	st = calm(g0, g1) && m->made == g0 &&
	     (m->slot < 0 || !slot_changed(m->slot, m->ver)) ? S_CALM : S_STIRRED;
	judge(what, OP_READ, st, ret, access_errnos);
	if (ret)
		return;
	bad = pattern_check(buf, sizeof(buf), m->seed, off);
	igt_assert_f(bad < 0, "%s: byte %lld at offset %llu is not the exporter's (seed %#llx)\n",
		     what, (long long)bad, (unsigned long long)off,
		     (unsigned long long)fuzz_seed);
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
 * anyone learns the handle. Returns 0, or the documented errno it got;
 * @made is the calm window it was made in, or NOT_CALM.
 */
static int create_export(int fd, uint32_t *gem,
			 struct drm_amdgpu_ualink_handle *h, uint64_t *made)
{
	uint64_t g0 = window(), g1;
	const int *allowed = create_errnos;
	int ret = __bo_create(fd, SIZE, AMDGPU_UALINK_VPOD_DOMAIN_VRAM, gem);

	count_op(ret);
	if (!ret) {
		allowed = export_errnos;
		ret = ualink_export(fd, *gem, h);
		count_op(ret);
		if (ret)
			gem_close(fd, *gem);
	}
	g1 = window();
	judge("create and export", OP_CREATE, calm(g0, g1) ? S_CALM : S_STIRRED,
	      ret, allowed);
	if (ret)
		return ret;
	gpu_fill(fd, *gem, 0, SIZE, seed_of(*h));
	*made = calm(g0, window()) ? g0 : NOT_CALM;
	return 0;
}

static void op_export(void)
{
	struct drm_amdgpu_ualink_handle h;
	int fd = files[pick(n_nodes)], slot;
	uint64_t made;
	uint32_t gem;

	if (n_mexp == MY_EXPORTS || create_export(fd, &gem, &h, &made))
		return;
	slot = free_slot();
	if (slot < 0) {
		gem_close(fd, gem);
		return;
	}
	slot_begin(slot);
	sh->exp[slot].handle = h;
	sh->exp[slot].made = made;
	sh->exp[slot].state = 1;
	slot_end(slot);
	mexp[n_mexp++] = (struct my_export){ fd, gem, slot, h };
}

/* End one of our exports: close its GEM handle (it may live on elsewhere). */
static void op_end_export(void)
{
	int i;

	if (!n_mexp)
		return;
	i = pick(n_mexp);
	slot_begin(mexp[i].slot);
	sh->exp[mexp[i].slot].state = 2;
	slot_end(mexp[i].slot);
	gem_close(mexp[i].fd, mexp[i].gem);
	mexp[i] = mexp[--n_mexp];
}

/* is accelerator @id in the pod (vPod 0, where every node starts)? */
static bool in_pod(unsigned int id)
{
	int i;

	for (i = 0; i < vpod.n_accel; i++)
		if (vpod.accel[i].id == id)
			return !vpod.accel[i].vpod;
	return false;
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
	struct hpick p = { .slot = -1, .known = true, .live = true };
	struct my_import mi = { .fd = other, .slot = -1 };
	uint64_t deadline, g0, g1;
	uint32_t gem, word;

	if (create_export(fd, &gem, &p.h, &p.made))
		return;
	g0 = window();
	ret = ualink_import(other, p.h, 0, &dmabuf);
	g1 = window();
	count_op(ret);
	judge("import to revoke", OP_IMPORT, import_state(&p, g0, g1), ret,
	      import_errnos);
	if (ret) {
		gem_close(fd, gem);
		return;
	}
	igt_assert_f(!drmPrimeFDToHandle(other, dmabuf, &mi.gem),
		     "PRIME of an import: %s\n", strerror(errno));
	close(dmabuf);
	mi.seed = seed_of(p.h);
	mi.made = import_state(&p, g0, g1) == S_LIVE_CALM ? g0 : NOT_CALM;
	check_read(&mi, "read before the end");
	gem_close(fd, gem);
	deadline = vpod_now_ms() + REVOKE_MS;
	while (!gpu_access(other, mi.gem, 0, 0, &word, 4)) {
		if (vpod_now_ms() >= deadline) {
			node_dump(n);
			node_dump(m);
		}
		igt_assert_f(vpod_now_ms() < deadline,
			     "an ended export of node %u is still readable through its import on node %u after %u ms\n",
			     n, m, REVOKE_MS);
		vpod_sleep_ms(10);
	}
	sh->revoked[me]++;
	if (!kept(other, mi.gem))
		gem_close(other, mi.gem);
}

/*
 * A live or ended handle from the table, or a random one: half of those
 * name an accelerator of the pod, the others any ID.
 */
static struct hpick some_handle(void)
{
	struct hpick p = { .slot = -1 };
	int s = pick(TABLE + 8);

	if (s < TABLE && slot_read(s, &p) && p.known) {
		p.slot = s;
	} else {
		p.known = p.live = false;
		p.h.lo = next();
		p.h.hi = next() | 1;	/* never all zero */
		if (pick(2)) {
			p.h.lo &= ~(uint64_t)AMDGPU_UALINK_HANDLE_ACCEL_ID_MASK;
			p.h.lo |= vpod.accel[pick(vpod.n_accel)].id;
		}
		p.in_pod = in_pod(handle_accel(p.h));
	}
	p.seed = seed_of(p.h);
	return p;
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

static void keep_import(const struct my_import *m)
{
	if (kept(m->fd, m->gem)) {
		if (m->dmabuf >= 0)
			close(m->dmabuf);
		return;
	}
	if (n_mimp == MY_IMPORTS) {
		gem_close(m->fd, m->gem);
		if (m->dmabuf >= 0)
			close(m->dmabuf);
		return;
	}
	mimp[n_mimp++] = *m;
}

/* what we keep of a successful import of @p, judged in state @st */
static struct my_import imported(int fd, uint32_t gem, int dmabuf,
				 const struct hpick *p, int st, uint64_t g0)
{
	return (struct my_import){
		.fd = fd, .gem = gem, .dmabuf = dmabuf, .seed = p->seed,
		.slot = p->slot, .ver = p->ver,
		.made = st == S_LIVE_CALM ? g0 : NOT_CALM,
	};
}

static void op_import(void)
{
	int fd = files[pick(n_nodes)], dmabuf, ret, st;
	struct hpick p = some_handle();
	struct my_import m;
	uint64_t g0, g1;
	uint32_t gem;

	g0 = window();
	ret = ualink_import(fd, p.h, pick(2) ? AMDGPU_UALINK_IMPORT_CLOEXEC : 0,
			    &dmabuf);
	g1 = window();
	count_op(ret);
	st = import_state(&p, g0, g1);
	judge("import", OP_IMPORT, st, ret, import_errnos);
	if (ret)
		return;
	igt_assert_f(p.known, "a random handle was imported\n");
	ret = drmPrimeFDToHandle(fd, dmabuf, &gem) ? -errno : 0;
	count_op(ret);
	igt_assert_f(!ret, "PRIME of an import on its file: %s\n", strerror(-ret));
	m = imported(fd, gem, pick(2) ? dmabuf : (close(dmabuf), -1), &p, st, g0);
	check_read(&m, "read through an import");
	keep_import(&m);
}

static void op_batch(void)
{
	struct drm_amdgpu_ualink_batch_entry e[BATCH] = {};
	int fd = files[pick(n_nodes)], n = 1 + pick(BATCH), i, ret, st;
	struct hpick p[BATCH];
	int sts[BATCH];
	uint32_t flags = 0;
	uint64_t g0, g1;

	for (i = 0; i < n; i++) {
		p[i] = some_handle();
		e[i].handle = p[i].h;
	}
	if (pick(2))
		flags |= AMDGPU_UALINK_IMPORT_FDS;
	g0 = window();
	ret = ualink_import_batch(fd, e, n, flags);
	g1 = window();
	count_op(ret);
	judge("batch", OP_BATCH, calm(g0, g1) ? S_CALM : S_STIRRED, ret,
	      batch_errnos);
	if (ret)
		return;
	for (i = 0; i < n; i++) {
		struct my_import m;
		int j;

		st = import_state(&p[i], g0, g1);
		sts[i] = st;
		judge("batch entry", OP_ENTRY, st, e[i].error, import_errnos);
		if (e[i].error)
			continue;
		igt_assert_f(p[i].known, "a random handle was imported in a batch\n");
		igt_assert_neq_u32(e[i].gem_handle, 0);
		if (flags & AMDGPU_UALINK_IMPORT_FDS)
			igt_assert_lte(0, e[i].fd);
		else
			igt_assert_eq(e[i].fd, -1);
		/* PRIME's rule: a handle named twice, one GEM handle */
		for (j = 0; j < i; j++)
			igt_assert_f(e[j].error || e[j].handle.lo != e[i].handle.lo ||
				     e[j].handle.hi != e[i].handle.hi ||
				     e[j].gem_handle == e[i].gem_handle,
				     "a handle named twice in a batch got GEM handles %u and %u (seed %#llx)\n",
				     e[j].gem_handle, e[i].gem_handle,
				     (unsigned long long)fuzz_seed);
		m = imported(fd, e[i].gem_handle, e[i].fd, &p[i], st, g0);
		check_read(&m, "read through a batch import");
	}
	/*
	 * kept once all are read: a handle named twice got one GEM handle,
	 * which keep_import() may close when the table is full
	 */
	for (i = 0; i < n; i++) {
		struct my_import m;
		int j;

		if (e[i].error)
			continue;
		for (j = 0; j < i; j++)
			if (!e[j].error && e[j].gem_handle == e[i].gem_handle)
				break;
		if (j < i) {	/* the same buffer, kept (or not) already */
			if (e[i].fd >= 0)
				close(e[i].fd);
			continue;
		}
		m = imported(fd, e[i].gem_handle, e[i].fd, &p[i], sts[i], g0);
		keep_import(&m);
	}
}

static void op_read(void)
{
	if (!n_mimp)
		return;
	check_read(&mimp[pick(n_mimp)], "read through a kept import");
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

/*
 * A child that imports on a file of its own, reads, and exits holding it;
 * judged loosely (what it is for is what its exit leaves behind).
 */
static void op_fork(void)
{
	pid_t pid;
	int status;

	pid = fork();
	igt_assert_lte(0, pid);
	if (!pid) {
		/* no IGT asserts here: exit codes say what went wrong */
		int fd = open(vpod.path[pick(n_nodes)], O_RDWR), dmabuf, ret;
		struct hpick p;
		uint8_t buf[256];
		uint32_t gem;

		if (fd < 0)
			_exit(10);
		p = some_handle();
		ret = ualink_import(fd, p.h, 0, &dmabuf);
		if (ret)
			_exit(documented(ret, import_errnos) ? 0 : 11);
		if (!p.known || drmPrimeFDToHandle(fd, dmabuf, &gem))
			_exit(12);
		ret = gpu_access(fd, gem, 0, 0, buf, sizeof(buf));
		if (ret && ret != -ENODEV)
			_exit(13);
		if (!ret && pattern_check(buf, sizeof(buf), p.seed, 0) >= 0)
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

/*
 * The chaos worker: the pod changes under the others' feet, one episode
 * at a time, each undone before it ends (see the top of the file), with a
 * calm window after each.
 */
static void chaos(unsigned int w, uint64_t seed)
{
	me = w;
	seed_worker(seed, w);
	while (!sh->stop) {
		unsigned int id = pick(n_nodes);

		__sync_synchronize();
		sh->chaos++;	/* odd: an episode runs */
		__sync_synchronize();
		switch (pick(4)) {
		case 0:
			set_fault(id, fault_rules[pick(5)]);
			set_timeout(id, 200 + pick(800), 1 + pick(3));
			vpod_sleep_ms(100 + pick(400));
			break;
		case 1:
			set_control(id, "reset");
			break;
		case 2:
			set_control(id, "offline");
			vpod_sleep_ms(50 + pick(200));
			set_control(id, "online");
			break;
		default:
			set_vpod(id, 1);
			vpod_sleep_ms(50 + pick(200));
			set_vpod(id, 0);
			break;
		}
		node_write(id, "fault", "clear");
		node_write(id, "timeout", "%s", VPOD_TIMEOUT_DEFAULT);
		wait_state(id, "active", VPOD_FAULT_ASYNC_MS);
		__sync_synchronize();
		sh->chaos++;	/* even: calm */
		__sync_synchronize();
		sh->episodes++;
		count_op(0);
		vpod_sleep_ms(200 + pick(600));
	}
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : dflt;
}

/* the coverage table, summed over workers; every defined pair reached */
static void coverage(void)
{
	uint64_t sum[OP_NUM][S_NUM] = {};
	unsigned int w, op, st, missing = 0;

	for (w = 0; w <= MAX_WORKERS; w++)
		for (op = 0; op < OP_NUM; op++)
			for (st = 0; st < S_NUM; st++)
				sum[op][st] += sh->cover[w][op][st];
	igt_info("fuzz: coverage, calls judged by operation and model state:\n");
	for (op = 0; op < OP_NUM; op++)
		for (st = 0; st < S_NUM; st++) {
			if (!reachable[op][st]) {
				igt_assert_eq_u64(sum[op][st], 0);
				continue;
			}
			igt_info("fuzz:   %-14s %-24s %8llu%s\n", op_names[op],
				 state_names[st], (unsigned long long)sum[op][st],
				 sum[op][st] ? "" : "  NOT REACHED");
			missing += !sum[op][st];
		}
	igt_assert_f(!missing, "%u operation/state pairs of the model not reached (seed %#llx)\n",
		     missing, (unsigned long long)fuzz_seed);
}

static void test_fuzz(void)
{
	uint64_t seed = env_u64("UALINK_FUZZ_SEED", 0);
	unsigned int seconds = env_u64("UALINK_FUZZ_SECONDS", 60);
	unsigned int workers = env_u64("UALINK_FUZZ_WORKERS", 3);
	uint64_t total = 0, errors = 0, checked = 0, revoked = 0;
	unsigned int w, id;

	if (!seed)
		seed = vpod_now_ms() * 0x100000001b3ull ^ getpid();
	fuzz_seed = seed;
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
		revoked += sh->revoked[w];
	}
	igt_info("fuzz: seed %#llx: %llu calls, %llu failed with an errno the model allowed, %llu data checks and %llu revocation checks passed, %llu chaos episodes\n",
		 (unsigned long long)seed, (unsigned long long)total,
		 (unsigned long long)errors, (unsigned long long)checked,
		 (unsigned long long)revoked, (unsigned long long)sh->episodes);
	coverage();
	igt_assert_lt_u64(0, checked);
	igt_assert_lt_u64(0, revoked);
	igt_assert_lt_u64(0, sh->episodes);
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
