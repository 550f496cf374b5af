// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The rare UALink errnos of amdgpu_drm.h, each forced through the uAPI on the
 * emulated pod: EREMOTEIO (the exporter's IP refuses the grant), ENETDOWN (in
 * the middle of a GPU reset, which the emulated pod can hold), EINTR (a
 * signal during the wait), ENOLINK (the exporter goes offline during the
 * call), ENOSPC (the exporter's NPA window is used up), ENOENT
 * (a GEM handle closed while its export waits), EFAULT (the result cannot
 * be copied back), ENOMEM (every allocation of the call failed in turn
 * with the kernel's failslab and /proc/thread-self/fail-nth), EMFILE
 * (RLIMIT_NOFILE), ENFILE (fs.file-max, in a process without
 * CAP_SYS_ADMIN) and ENOBUFS (the queue of imports waiting for one
 * exporter full). Each subtest checks the errno, that the device still
 * works afterwards, and that nothing is left held on any node; the harness
 * checks kmemleak at the end.
 *
 * ESHUTDOWN is not among them: it cannot reach userspace (a node is
 * destroyed only once its last file is closed; see ENODEV in the errno
 * table of amdgpu_drm.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xf86drm.h>

#include "igt.h"
#include "vpod_lib.h"

IGT_TEST_DESCRIPTION("The rare UALink errnos, forced through the uAPI on the emulated pod.");

#define SIZE		(64 * 1024ull)
#define SUBTEST_TIMEOUT	300
/* a sweep stops here even if the call still reached its n-th allocation */
#define MAX_NTH		1000

#define FAILSLAB	"/sys/kernel/debug/failslab/"
#define FILE_MAX	"/proc/sys/fs/file-max"

/* the one ioctl, without libdrm's retry on EINTR */
static int raw_ualink(int fd, struct drm_amdgpu_ualink *args)
{
	return ioctl(fd, DRM_IOCTL_AMDGPU_UALINK, args) ? -errno : 0;
}

static int raw_import(int fd, struct drm_amdgpu_ualink_handle h, int *dmabuf)
{
	struct drm_amdgpu_ualink args = { .op = AMDGPU_UALINK_OP_IMPORT };
	int ret;

	args.u.imp.handle = h;
	ret = raw_ualink(fd, &args);
	*dmabuf = ret ? -1 : args.u.imp.fd;
	return ret;
}

static int raw_batch(int fd, struct drm_amdgpu_ualink_batch_entry *e,
		     uint32_t count, uint32_t flags)
{
	struct drm_amdgpu_ualink args = { .op = AMDGPU_UALINK_OP_IMPORT_BATCH };

	args.u.batch.entries = (uintptr_t)e;
	args.u.batch.count = count;
	args.u.batch.flags = flags;
	return raw_ualink(fd, &args);
}

/* the entries' results closed, then the entries ready for another call */
static void batch_close(int fd, struct drm_amdgpu_ualink_batch_entry *e,
			int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (e[i].gem_handle)
			gem_close(fd, e[i].gem_handle);
		if (e[i].fd >= 0)
			close(e[i].fd);
		e[i].gem_handle = 0;
		e[i].fd = 0;
		e[i].error = 0;
	}
}

/* a batch of one imports @h, without fds */
static void batch_works(int fd, struct drm_amdgpu_ualink_handle h,
			uint32_t seed)
{
	struct drm_amdgpu_ualink_batch_entry e[1] = { { .handle = h } };

	igt_assert_eq(raw_batch(fd, e, 1, 0), 0);
	igt_assert_eq(e[0].error, 0);
	gpu_expect(fd, e[0].gem_handle, 0, 4096, seed);
	gem_close(fd, e[0].gem_handle);
}

/* the exporter's buffer and a first import already done: connected */
static void connected(int fd0, int fd1, struct drm_amdgpu_ualink_handle *h,
		      uint32_t seed)
{
	exported_buffer(fd1, SIZE, seed, h);
	import_works(fd0, *h, seed);
	wait_count(0, C_IMPORTS, 0, VPOD_ASYNC_MS);
}

/*
 * EREMOTEIO: the exporter's IP refuses to let us in (its access table
 * update fails). The import fails with EREMOTEIO (not EIO: our device is
 * fine), the exporter keeps no grant and no mapping made for us, and the
 * next import succeeds; in a batch only the refused entry fails.
 */
static void test_eremoteio(void)
{
	int fd0 = vpod_open(0), fd1 = vpod_open(1);
	struct drm_amdgpu_ualink_batch_entry e[2] = {};
	struct drm_amdgpu_ualink_handle h, h2;
	char buf[32];
	int i, refused = 0;

	connected(fd0, fd1, &h, 40);
	exported_buffer(fd1, SIZE, 41, &h2);
	set_refuse_access(1, 1);
	expect_import_error(fd0, h, EREMOTEIO);
	igt_assert_lt(0, dbg_read("node1/refuse_access", buf, sizeof(buf)));
	igt_assert_eq(atoi(buf), 0);
	igt_assert_eq_u64(count_of(1, C_GRANTS), 0);
	igt_assert_eq_u64(count_of(1, C_NPA_BYTES), 0);
	import_works(fd0, h, 40);

	set_refuse_access(1, 1);
	e[0].handle = h;
	e[1].handle = h2;
	igt_assert_eq(ualink_import_batch(fd0, e, 2, 0), 0);
	for (i = 0; i < 2; i++) {
		igt_info("batch entry %d: %s\n", i, strerror(-e[i].error));
		if (e[i].error == -EREMOTEIO) {
			refused++;
			igt_assert_eq_u32(e[i].gem_handle, 0);
		} else {
			igt_assert_eq(e[i].error, 0);
			gpu_expect(fd0, e[i].gem_handle, 0, 4096, 40 + i);
		}
	}
	igt_assert_eq(refused, 1);
	batch_close(fd0, e, 2);
	vpod_cleanup();
	wait_no_leaks(VPOD_ASYNC_MS);
}

/*
 * ENETDOWN while resetting: accelerator 1 held in the middle of a GPU
 * reset ("reset-begin") says so (INFO) and refuses an export, an import
 * and a batch as a whole; once the reset ends, the same calls succeed,
 * and its export from before the reset still imports elsewhere.
 */
static void test_enetdown_resetting(void)
{
	int fd0 = vpod_open(0), fd1 = vpod_open(1), dmabuf, ret;
	struct drm_amdgpu_ualink_handle h0, h1, out;
	struct drm_amdgpu_ualink_batch_entry e = {};
	struct drm_amdgpu_ualink_info info;
	uint32_t later;

	exported_buffer(fd0, SIZE, 45, &h0);
	exported_buffer(fd1, SIZE, 46, &h1);
	later = vram_create(fd1, SIZE);
	gpu_fill(fd1, later, 0, SIZE, 47);

	set_control(1, "reset-begin");
	igt_assert_eq(ualink_info(fd1, &info), 0);
	igt_assert_eq_u32(info.state, AMDGPU_UALINK_STATE_RESETTING);
	igt_assert_eq(ualink_export(fd1, later, &out), -ENETDOWN);
	dmabuf = -1;
	ret = ualink_import(fd1, h0, 0, &dmabuf);
	if (!ret)
		vpod_track_fd(dmabuf);
	igt_assert_eq(ret, -ENETDOWN);
	e.handle = h0;
	igt_assert_eq(ualink_import_batch(fd1, &e, 1, 0), -ENETDOWN);
	igt_assert_eq_u32(e.gem_handle, 0);

	set_control(1, "reset-end");
	igt_assert_eq(ualink_info(fd1, &info), 0);
	igt_assert_eq_u32(info.state, AMDGPU_UALINK_STATE_ACTIVE);
	out = export_ok(fd1, later);
	import_works(fd0, out, 47);
	import_works(fd1, h0, 45);
	memset(&e, 0, sizeof(e));
	e.handle = h0;
	igt_assert_eq(ualink_import_batch(fd1, &e, 1, 0), 0);
	igt_assert_eq(e.error, 0);
	gpu_expect(fd1, e.gem_handle, 0, 4096, 45);
	batch_close(fd1, &e, 1);
	import_works(fd0, h1, 46);
	vpod_cleanup();
	wait_no_leaks(VPOD_ASYNC_MS);
}

static volatile sig_atomic_t signals;

static void on_signal(int sig)
{
	signals++;
}

/* a trigger's action: SIGUSR1 to the thread that waits in the kernel */
static void signal_waiter(void *arg)
{
	pthread_kill(*(pthread_t *)arg, SIGUSR1);
}

/* a trigger's action: write a control command to node 1 */
static void control_node1(void *arg)
{
	char rel[32];

	snprintf(rel, sizeof(rel), "node%u/control", 1);
	dbg_write(rel, arg);
}

/* how long the exporter's answers are held back, when they are */
#define HOLD_MS		4000

/*
 * EINTR: the exporter's answers are held back HOLD_MS; once the answer to
 * an import is known to be held (the fault counts it), a signal ends the
 * import with EINTR, and, once the answer to the batch's request for
 * another handle is held too, the whole batch, marked for its restart,
 * its entries untouched. No retransmission (no retries): one answer per
 * request, so the count says which calls wait. The batch, submitted again
 * as it is, joins the requests of the interrupted calls (no new answer is
 * held) and imports both; once all is closed, nothing stays held.
 */
static void test_eintr(void)
{
	int fd0 = vpod_open(0), fd1 = vpod_open(1), dmabuf, i;
	struct drm_amdgpu_ualink args = { .op = AMDGPU_UALINK_OP_IMPORT_BATCH };
	struct drm_amdgpu_ualink_batch_entry e[2] = {};
	struct drm_amdgpu_ualink_handle h, h2;
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART */
	int64_t held;
	pthread_t self = pthread_self();
	struct vpod_trigger t = {
		.id = 1, .kind = "delay", .timeout_ms = HOLD_MS,
		.action = signal_waiter, .arg = &self,
	};
	char rule[96];
	uint64_t start, took;

	connected(fd0, fd1, &h, 50);
	exported_buffer(fd1, SIZE, 51, &h2);
	set_timeout(0, 60000, 0);
	igt_assert_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	snprintf(rule, sizeof(rule), "delay rate=1000000 types=0x10 delay_ms=%u",
		 HOLD_MS);
	set_fault(1, rule);

	signals = 0;
	t.n = 1;
	vpod_trigger_start(&t);
	start = vpod_now_ms();
	igt_assert_eq(raw_import(fd0, h, &dmabuf), -EINTR);
	took = vpod_now_ms() - start;
	igt_assert(vpod_trigger_join(&t));
	igt_info("import interrupted after %llu ms\n", (unsigned long long)took);
	igt_assert_eq(signals, 1);
	igt_assert_lt_u64(took, HOLD_MS);

	/*
	 * h2 first: its answer, held, says the batch waits; h's request is
	 * still out (the interrupted import parked it), and the batch joins it
	 */
	held = fault_injected(1, "delay") + 1;
	t.n = held;
	vpod_trigger_start(&t);
	e[0].handle = h2;
	e[1].handle = h;
	args.u.batch.entries = (uintptr_t)e;
	args.u.batch.count = 2;
	args.u.batch.flags = AMDGPU_UALINK_IMPORT_FDS;
	igt_assert_eq(raw_ualink(fd0, &args), -EINTR);
	igt_assert(vpod_trigger_join(&t));
	igt_assert_eq(signals, 2);
	igt_assert_eq_u32(args.u.batch.flags,
			  AMDGPU_UALINK_IMPORT_FDS | AMDGPU_UALINK_IMPORT_RESTART);
	for (i = 0; i < 2; i++) {
		igt_assert_eq(e[i].error, 0);
		igt_assert_eq_u32(e[i].gem_handle, 0);
		igt_assert_eq(e[i].fd, 0);
	}
	signal(SIGUSR1, SIG_DFL);

	/* the restart, as it is: no new request, both imported */
	igt_assert_eq(raw_ualink(fd0, &args), 0);
	for (i = 0; i < 2; i++)	/* closed by the clean-up too */
		if (e[i].fd > 0)
			vpod_track_fd(e[i].fd);
	igt_assert_eq(fault_injected(1, "delay"), held);
	for (i = 0; i < 2; i++) {
		igt_assert_eq(e[i].error, 0);
		igt_assert_neq_u32(e[i].gem_handle, 0);
		igt_assert_lte(0, e[i].fd);
		gpu_expect(fd0, e[i].gem_handle, 0, 4096, i ? 50 : 51);
	}
	for (i = 0; i < 2; i++) {
		gem_close(fd0, e[i].gem_handle);
		vpod_close(e[i].fd);
	}

	/* nothing stays held once all is closed */
	clear_faults();
	wait_count(0, C_IMPORTS, 0, VPOD_FAULT_ASYNC_MS);
	wait_count(1, C_GRANTS, 0, VPOD_FAULT_ASYNC_MS);
	import_works(fd0, h, 50);
	import_works(fd0, h2, 51);
	vpod_cleanup();
	wait_no_leaks(VPOD_ASYNC_MS);
}

/* imports of a storm's batch: one exporter's requests in flight at once */
#define STORM_N		16
/* how long the exporter's answers are held back in a storm */
#define STORM_HOLD_MS	300
/* a signal every this many microseconds */
#define STORM_US	5000

struct storm {
	pthread_t target;
	bool stop;	/* __atomic accesses */
	pthread_t thread;
};

static void *storm_thread(void *arg)
{
	struct storm *st = arg;

	while (!__atomic_load_n(&st->stop, __ATOMIC_RELAXED)) {
		pthread_kill(st->target, SIGUSR1);
		usleep(STORM_US);
	}
	return NULL;
}

/*
 * The NPA_REQs node @importer asked @exporter, each once however often it
 * was retransmitted: its mailbox's "sent" less "retransmitted" for that
 * peer (node@importer/state). A delayed answer cannot count them: a
 * request answered late is retransmitted, and its answer again delayed.
 */
static int64_t npa_reqs_asked(unsigned int importer, unsigned int exporter)
{
	static char buf[65536];
	unsigned long long sent, received, again;
	char rel[64], peer[32], *at, *end;

	snprintf(rel, sizeof(rel), "node%u/state", importer);
	igt_assert_lte(0, dbg_read(rel, buf, sizeof(buf)));
	snprintf(peer, sizeof(peer), "\npeer %u: ", exporter);
	at = strstr(buf, peer);
	igt_assert_f(at, "no peer %u in %s\n", exporter, rel);
	end = strstr(at + 1, "\npeer ");
	if (end)
		*end = '\0';
	at = strstr(at, "\n  npa_req ");
	if (!at)
		return 0;
	igt_assert_eq(sscanf(at, "\n  npa_req sent %llu received %llu retransmitted %llu",
			     &sent, &received, &again), 3);
	return sent - again;
}

/*
 * One batch of STORM_N imports, the exporter's answers held STORM_HOLD_MS,
 * under signals every STORM_US: resubmitted as it is after each EINTR (as
 * drmIoctl() does), it ends with every entry imported, each handle once,
 * on STORM_N requests (the restarts join them); then a batch of STORM_N
 * other handles with an SA_RESTART handler: one call, restarted by the
 * kernel. Anchored: the storm interrupts the call (EINTR seen, signals
 * handled during the restarted call).
 */
static void test_eintr_restart_storm(void)
{
	struct drm_amdgpu_ualink_batch_entry e[2][STORM_N] = {};
	struct drm_amdgpu_ualink_handle h[2][STORM_N], h0;
	int fd0 = vpod_open(0), fd1 = vpod_open(1), i, j, ret;
	struct sigaction sa = { .sa_handler = on_signal };
	struct storm st = { .target = pthread_self() };
	unsigned int eintr = 0, calls = 0;
	int64_t held, asked;
	char rule[96];

	connected(fd0, fd1, &h0, 60);
	for (j = 0; j < 2; j++)
		for (i = 0; i < STORM_N; i++)
			exported_buffer(fd1, SIZE, 61 + j * STORM_N + i, &h[j][i]);
	snprintf(rule, sizeof(rule), "delay rate=1000000 types=0x10 delay_ms=%u",
		 STORM_HOLD_MS);
	set_fault(1, rule);

	for (j = 0; j < 2; j++) {
		struct drm_amdgpu_ualink args = { .op = AMDGPU_UALINK_OP_IMPORT_BATCH };

		calls = eintr = 0;
		for (i = 0; i < STORM_N; i++)
			e[j][i].handle = h[j][i];
		args.u.batch.entries = (uintptr_t)e[j];
		args.u.batch.count = STORM_N;
		args.u.batch.flags = AMDGPU_UALINK_IMPORT_FDS;
		sa.sa_flags = j ? SA_RESTART : 0;
		igt_assert_eq(sigaction(SIGUSR1, &sa, NULL), 0);
		held = fault_injected(1, "delay");
		asked = npa_reqs_asked(0, 1);
		signals = 0;
		__atomic_store_n(&st.stop, false, __ATOMIC_RELAXED);
		igt_assert_eq(pthread_create(&st.thread, NULL, storm_thread, &st), 0);
		do {
			ret = raw_ualink(fd0, &args);
			calls++;
			eintr += ret == -EINTR;
		} while (ret == -EINTR && calls < 100000);
		__atomic_store_n(&st.stop, true, __ATOMIC_RELAXED);
		pthread_join(st.thread, NULL);
		signal(SIGUSR1, SIG_IGN);
		for (i = 0; i < STORM_N; i++)	/* closed by the clean-up too */
			if (e[j][i].fd > 0)
				vpod_track_fd(e[j][i].fd);
		igt_info("batch %d: %u calls, %d signals, restart mark %s, %lld requests, %lld delayed answers\n",
			 j, calls, (int)signals,
			 args.u.batch.flags & AMDGPU_UALINK_IMPORT_RESTART ? "set" : "clear",
			 (long long)(npa_reqs_asked(0, 1) - asked),
			 (long long)(fault_injected(1, "delay") - held));
		igt_assert_eq(ret, 0);
		igt_assert_lt(0, signals);
		/* interrupted, and restarted from where it stopped */
		igt_assert(args.u.batch.flags & AMDGPU_UALINK_IMPORT_RESTART);
		if (!j)
			igt_assert_lt(0, eintr);
		else
			igt_assert_eq(calls, eintr + 1);
		/* one request per handle: the restarts joined them */
		igt_assert_eq(npa_reqs_asked(0, 1) - asked, STORM_N);
		for (i = 0; i < STORM_N; i++) {
			int k;

			igt_assert_eq(e[j][i].error, 0);
			igt_assert_lte(0, e[j][i].fd);
			for (k = 0; k < i; k++)
				igt_assert_neq_u32(e[j][i].gem_handle,
						   e[j][k].gem_handle);
			gpu_expect(fd0, e[j][i].gem_handle, 0, 4096,
				   61 + j * STORM_N + i);
		}
	}
	signal(SIGUSR1, SIG_DFL);
	for (j = 0; j < 2; j++) {
		for (i = 0; i < STORM_N; i++) {
			gem_close(fd0, e[j][i].gem_handle);
			vpod_close(e[j][i].fd);
		}
	}
	clear_faults();
	wait_count(0, C_IMPORTS, 0, VPOD_FAULT_ASYNC_MS);
	wait_count(1, C_GRANTS, 0, VPOD_FAULT_ASYNC_MS);
	vpod_cleanup();
	wait_no_leaks(VPOD_ASYNC_MS);
}

/*
 * ENOLINK: the exporter goes offline (@control "offline"), or resets
 * ("reset"), while an import waits for its answer (held back, and known
 * to be held when the control is written). The import fails with ENOLINK
 * at once, not at the timeout; the same import succeeds before (the
 * anchor) and once the exporter is back. A reset ends the connection with
 * its new generation; the export stays, so ENOENT, which says the export
 * went, would be wrong.
 */
static void test_enolink_mid_call(const char *control)
{
	int fd0 = vpod_open(0), fd1 = vpod_open(1), dmabuf;
	struct drm_amdgpu_ualink_handle h;
	struct vpod_trigger t = {
		.id = 1, .kind = "delay", .n = 1, .timeout_ms = VPOD_FAULT_ASYNC_MS,
		.action = control_node1, .arg = (void *)control,
	};
	bool offline = !strcmp(control, "offline");
	uint64_t start, took;

	connected(fd0, fd1, &h, 52);
	set_timeout(0, 60000, 0);
	vpod_mark_dirty(1);	/* the trigger writes its control */
	set_fault(1, "delay rate=1000000 types=0x10 delay_ms=60000");
	vpod_trigger_start(&t);
	start = vpod_now_ms();
	igt_assert_eq(raw_import(fd0, h, &dmabuf), -ENOLINK);
	took = vpod_now_ms() - start;
	igt_assert(vpod_trigger_join(&t));
	igt_info("%s mid-call: ENOLINK after %llu ms\n", control,
		 (unsigned long long)took);
	clear_faults();
	if (offline)
		set_control(1, "online");
	wait_state(1, "active", VPOD_FAULT_ASYNC_MS);
	wait_count(0, C_IMPORTS, 0, VPOD_FAULT_ASYNC_MS);
	import_works(fd0, h, 52);
	vpod_cleanup();
	wait_no_leaks(VPOD_FAULT_ASYNC_MS);
}

/*
 * EFAULT on the way back: the import is made, its fd installed, and only
 * then does DRM's copy of the result to userspace fail (the argument is on
 * a read-only page). The fd stays open in the process, unknown to the
 * caller, as the header says: it is the lowest free one, and it is the
 * import (its buffer reads the exporter's data). The same call with a
 * writable argument succeeds.
 */
static void test_efault_copy_back(void)
{
	int fd0 = vpod_open(0), fd1 = vpod_open(1), lost;
	struct drm_amdgpu_ualink_handle h;
	struct drm_amdgpu_ualink *args;
	uint32_t g;

	exported_buffer(fd1, SIZE, 53, &h);
	args = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	igt_assert(args != MAP_FAILED);
	args->op = AMDGPU_UALINK_OP_IMPORT;
	args->u.imp.handle = h;

	/* the anchor: writable, it works */
	igt_assert_eq(raw_ualink(fd0, args), 0);
	vpod_track_fd(args->u.imp.fd);
	import_works(fd0, h, 53);
	vpod_close(args->u.imp.fd);
	wait_count(0, C_IMPORTS, 0, VPOD_ASYNC_MS);

	args->u.imp.fd = 0;
	igt_assert_eq(mprotect(args, 4096, PROT_READ), 0);
	lost = dup(0);
	igt_assert_lte(0, lost);
	close(lost);
	igt_assert_eq(raw_ualink(fd0, args), -EFAULT);
	igt_assert_eq(args->u.imp.fd, 0);	/* nothing written back */
	igt_assert_lte(0, fcntl(lost, F_GETFD));
	vpod_track_fd(lost);
	igt_assert_eq_u64(count_of(0, C_IMPORTS), 1);
	igt_assert_eq(drmPrimeFDToHandle(fd0, lost, &g), 0);
	gpu_expect(fd0, g, 0, 4096, 53);
	gem_close(fd0, g);
	vpod_close(lost);
	wait_count(0, C_IMPORTS, 0, VPOD_ASYNC_MS);
	munmap(args, 4096);
	vpod_cleanup();
	wait_no_leaks(VPOD_ASYNC_MS);
}

/*
 * ENOBUFS: the imports waiting to be sent to one exporter are at the
 * kernel's bound (4,096 queued behind the 16 a connection has in flight:
 * AMDGPU_UALINK_REQ_QUEUED and AMDGPU_UALINK_IN_FLIGHT). Accelerator 1
 * answers nothing (its messages dropped); threads of this process, whose
 * quota is raised above the bound, fill the queue with imports of handles
 * naming 1; then every entry of one more batch fails alone with ENOBUFS,
 * at once. Once 1 goes offline, the waiting imports end (they are never
 * answered); back online and heard again, the same batch's entries are
 * sent and answered (ENOENT: the handles name nothing), and a real
 * handle imports: the anchor.
 */
#define NOBUFS_QUEUE	(4096 + 16)
#define NOBUFS_THREADS	5

struct nobufs_batch {
	int fd, n, ret;
	struct drm_amdgpu_ualink_batch_entry *e;
};

static void *nobufs_thread(void *arg)
{
	struct nobufs_batch *b = arg;

	b->ret = ualink_import_batch(b->fd, b->e, b->n, 0);
	return NULL;
}

/* @n handles naming accelerator 1 that nothing exports */
static struct drm_amdgpu_ualink_batch_entry *nobufs_entries(int n)
{
	struct drm_amdgpu_ualink_batch_entry *e = calloc(n, sizeof(*e));
	int i;

	igt_assert(e);
	for (i = 0; i < n; i++) {
		e[i].handle.lo = (rand64() << 10) | 1;
		e[i].handle.hi = rand64() | 1;
	}
	return e;
}

static void test_enobufs_queue_full(void)
{
	int fd0 = vpod_open(0), fd1 = vpod_open(1), i, j, left = NOBUFS_QUEUE;
	struct nobufs_batch b[NOBUFS_THREADS];
	struct drm_amdgpu_ualink_batch_entry *more;
	pthread_t thread[NOBUFS_THREADS];
	struct drm_amdgpu_ualink_handle h;

	connected(fd0, fd1, &h, 70);
	set_import_quota(2 * NOBUFS_QUEUE);
	/* no request of 0 times out, and 1 is not found lost, meanwhile */
	set_timeout(0, 120000, 0);
	set_fault(1, "drop rate=1000000");
	for (i = 0; i < NOBUFS_THREADS; i++) {
		b[i].fd = vpod_open(0);
		b[i].n = left < AMDGPU_UALINK_BATCH_MAX ? left : AMDGPU_UALINK_BATCH_MAX;
		b[i].e = nobufs_entries(b[i].n);
		left -= b[i].n;
		igt_assert_eq(pthread_create(&thread[i], NULL, nobufs_thread, &b[i]), 0);
	}
	igt_assert_eq(left, 0);
	/* every one of them waits: the queue is full */
	wait_count(0, C_IMPORTS, NOBUFS_QUEUE, 60000);

	more = nobufs_entries(8);
	igt_assert_eq(ualink_import_batch(fd0, more, 8, 0), 0);
	for (i = 0; i < 8; i++) {
		igt_assert_eq(more[i].error, -ENOBUFS);
		igt_assert_eq_u32(more[i].gem_handle, 0);
	}
	igt_assert_eq_u64(count_of(0, C_IMPORTS), NOBUFS_QUEUE);

	/* the waiting imports end with 1's link: none was ever granted */
	set_control(1, "offline");
	for (i = 0; i < NOBUFS_THREADS; i++) {
		igt_assert_eq(pthread_join(thread[i], NULL), 0);
		igt_assert_eq(b[i].ret, 0);
		for (j = 0; j < b[i].n; j++) {
			igt_assert_neq(b[i].e[j].error, 0);
			igt_assert_eq_u32(b[i].e[j].gem_handle, 0);
		}
		free(b[i].e);
	}
	set_control(1, "online");
	clear_faults();
	wait_count(0, C_IMPORTS, 0, VPOD_ASYNC_MS);

	/* the anchor: sent and answered now (the entries as new) */
	for (i = 0; i < 8; i++) {
		more[i].error = 0;
		more[i].fd = 0;
		more[i].gem_handle = 0;
	}
	igt_assert_eq(ualink_import_batch(fd0, more, 8, 0), 0);
	for (i = 0; i < 8; i++)
		igt_assert_eq(more[i].error, -ENOENT);
	free(more);
	import_works(fd0, h, 70);
	vpod_cleanup();
	wait_no_leaks(VPOD_ASYNC_MS);
}

/*
 * ENOSPC: the exporter's NPA window is used up (the emulated pod takes
 * every free range of it), so its core finds no room for our range: the
 * import fails with ENOSPC, the exporter keeps no grant, and a batch
 * entry fails alone. With the window given back the same import succeeds
 * (and did before: the anchor).
 */
static void test_enospc_window_full(void)
{
	int fd0 = vpod_open(0), fd1 = vpod_open(1), fd2 = vpod_open(2);
	struct drm_amdgpu_ualink_batch_entry e[2] = {};
	struct drm_amdgpu_ualink_handle h, h2;
	char buf[32];

	exported_buffer(fd1, SIZE, 54, &h);
	exported_buffer(fd2, SIZE, 55, &h2);
	import_works(fd0, h, 54);
	wait_count(1, C_GRANTS, 0, VPOD_ASYNC_MS);

	set_window_full(1);
	igt_assert_lt(0, dbg_read("node1/window_fill", buf, sizeof(buf)));
	igt_info("node 1's window: %s bytes taken\n", strtok(buf, "\n"));
	expect_import_error(fd0, h, ENOSPC);
	igt_assert_eq_u64(count_of(1, C_GRANTS), 0);
	e[0].handle = h;
	e[1].handle = h2;
	igt_assert_eq(ualink_import_batch(fd0, e, 2, 0), 0);
	igt_assert_eq(e[0].error, -ENOSPC);
	igt_assert_eq(e[1].error, 0);
	gpu_expect(fd0, e[1].gem_handle, 0, 4096, 55);
	batch_close(fd0, e, 2);

	clear_faults();
	import_works(fd0, h, 54);
	vpod_cleanup();
	wait_no_leaks(VPOD_ASYNC_MS);
}

struct exporter {
	int fd;
	uint32_t gem;
	pthread_t thread;
	struct drm_amdgpu_ualink_handle h;
	int ret;
};

static void *export_thread(void *arg)
{
	struct exporter *x = arg;

	x->ret = ualink_export(x->fd, x->gem, &x->h);
	return NULL;
}

/* an export of @gem started in a thread, known to wait in its pin */
static void export_waiting(struct exporter *x, int fd, uint32_t gem)
{
	uint64_t deadline = vpod_now_ms() + VPOD_ASYNC_MS;

	x->fd = fd;
	x->gem = gem;
	igt_assert_eq(pthread_create(&x->thread, NULL, export_thread, x), 0);
	while (!pin_waiters(0)) {
		igt_assert_f(vpod_now_ms() < deadline,
			     "the export never reached its pin\n");
		usleep(1000);
	}
}

static int export_finish(struct exporter *x)
{
	set_pin_hold(0, false);
	igt_assert_eq(pthread_join(x->thread, NULL), 0);
	return x->ret;
}

/*
 * ENOENT for a GEM handle closed while its export was being made: the
 * export waits in its pin (the emulated pod's pin_hold, as a pin waiting
 * for an eviction would), the handle is closed, and the export then fails
 * with ENOENT, leaving nothing exported or pinned. The anchor: the same
 * wait without the close ends in an export that imports.
 */
static void test_enoent_closed_mid_export(void)
{
	int fd0 = vpod_open(0), fd1 = vpod_open(1);
	struct exporter x = {};
	uint32_t gem;

	gem = vram_create(fd0, SIZE);
	gpu_fill(fd0, gem, 0, SIZE, 56);
	set_pin_hold(0, true);
	export_waiting(&x, fd0, gem);
	igt_assert_eq(export_finish(&x), 0);
	import_works(fd1, x.h, 56);
	gem_close(fd0, gem);
	wait_count(0, C_EXPORTS, vpod.baseline[0].v[C_EXPORTS], VPOD_ASYNC_MS);

	gem = vram_create(fd0, SIZE);
	set_pin_hold(0, true);
	export_waiting(&x, fd0, gem);
	gem_close(fd0, gem);
	igt_assert_eq(export_finish(&x), -ENOENT);
	igt_assert_eq_u64(count_of(0, C_EXPORTS), vpod.baseline[0].v[C_EXPORTS]);
	wait_count(0, C_PINS, vpod.baseline[0].v[C_PINS], VPOD_ASYNC_MS);
	vpod_cleanup();
	wait_no_leaks(VPOD_ASYNC_MS);
}

/* failslab: fail-nth only, every GFP_KERNEL allocation counted, quiet */
static char failslab_saved[2][16];
static const char *const failslab_knobs[2] = { "ignore-gfp-wait", "verbose" };

/* write @text to @path with a fresh open: some debugfs files cannot seek */
static int knob_write(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		ret = -errno;
	close(fd);
	return ret;
}

static void failslab_restore(int sig)
{
	char path[96];
	int i;

	for (i = 0; i < 2; i++) {
		if (!failslab_saved[i][0])
			continue;
		snprintf(path, sizeof(path), FAILSLAB "%s", failslab_knobs[i]);
		if (knob_write(path, failslab_saved[i]))
			igt_warn("restoring %s failed\n", path);
		failslab_saved[i][0] = 0;
	}
}

static void failslab_setup(void)
{
	static const char *const values[2] = { "N", "0" };
	char path[96];
	ssize_t len;
	int i, fd;

	igt_install_exit_handler(failslab_restore);
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), FAILSLAB "%s", failslab_knobs[i]);
		fd = open(path, O_RDONLY);
		igt_assert_f(fd >= 0, "%s: %m (CONFIG_FAILSLAB?)\n", path);
		len = read(fd, failslab_saved[i], sizeof(failslab_saved[i]) - 1);
		close(fd);
		igt_assert_lt(0, len);
		failslab_saved[i][len] = 0;
		igt_assert_f(knob_write(path, values[i]) == 0, "%s: %m\n", path);
	}
}

static int fail_nth_fd = -1;

/* the n-th allocation of this thread from now on fails */
static void fail_nth(unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	igt_assert_eq(pwrite(fail_nth_fd, buf, len, 0), len);
}

/* true when the failure set by fail_nth() was injected (and disarm it) */
static bool fail_nth_hit(void)
{
	char buf[16] = {};

	igt_assert_lt(0, pread(fail_nth_fd, buf, sizeof(buf) - 1, 0));
	if (atoi(buf) == 0)
		return true;
	fail_nth(0);
	return false;
}

enum sweep_op { SWEEP_EXPORT, SWEEP_IMPORT_FIRST, SWEEP_IMPORT_AGAIN,
		SWEEP_BATCH, SWEEP_OPS };

static const char *const sweep_names[SWEEP_OPS] = {
	"export", "first import", "repeated import", "batch with fds",
};

/*
 * One call of @op with its n-th allocation failed: the result is success
 * or ENOMEM (per entry in a batch, where an fd may also come back -1 with
 * its GEM handle made), everything made is closed again, and the device
 * must then still work. Returns whether the failure was injected; counts
 * the ENOMEMs seen in @enomem.
 */
static bool sweep_one(enum sweep_op op, unsigned int n, int fd0, int fd1,
		      const struct drm_amdgpu_ualink_handle *h, int *enomem)
{
	struct drm_amdgpu_ualink_batch_entry e[2] = {};
	struct drm_amdgpu_ualink_handle out;
	int ret, dmabuf, i;
	uint32_t gem = 0;
	bool hit;

	if (op == SWEEP_EXPORT)
		gem = vram_create(fd1, SIZE);
	for (i = 0; i < 2; i++)
		e[i].handle = h[i];

	fail_nth(n);
	switch (op) {
	case SWEEP_EXPORT:
		ret = ualink_export(fd1, gem, &out);
		break;
	case SWEEP_BATCH:
		ret = raw_batch(fd0, e, 2, AMDGPU_UALINK_IMPORT_FDS);
		break;
	default:
		ret = raw_import(fd0, h[0], &dmabuf);
		break;
	}
	hit = fail_nth_hit();

	igt_assert_f(ret == 0 || ret == -ENOMEM,
		     "%s, allocation %u failed: %s\n", sweep_names[op], n,
		     strerror(-ret));
	if (ret)
		(*enomem)++;
	switch (op) {
	case SWEEP_EXPORT:
		gem_close(fd1, gem);
		break;
	case SWEEP_BATCH:
		for (i = 0; !ret && i < 2; i++) {
			igt_assert_f(e[i].error == 0 || e[i].error == -ENOMEM,
				     "batch entry %d, allocation %u failed: %s\n",
				     i, n, strerror(-e[i].error));
			if (e[i].error)
				(*enomem)++;
			else
				igt_assert_neq_u32(e[i].gem_handle, 0);
		}
		batch_close(fd0, e, ret ? 0 : 2);
		break;
	default:
		if (!ret)
			close(dmabuf);
		break;
	}
	return hit;
}

/* fail each allocation of one call of @op in turn, until none is left */
static void sweep(enum sweep_op op, int fd0, int fd1,
		  const struct drm_amdgpu_ualink_handle *h, uint32_t seed)
{
	unsigned int n;
	int enomem = 0;

	for (n = 1; n <= MAX_NTH; n++) {
		bool hit = sweep_one(op, n, fd0, fd1, h, &enomem);

		/* the next call is a first import again */
		if (op == SWEEP_IMPORT_FIRST || op == SWEEP_BATCH)
			wait_count(0, C_IMPORTS, 0, VPOD_ASYNC_MS);
		if (!hit)
			break;
	}
	igt_info("%s: %u allocations failed in turn, %d ENOMEM\n",
		 sweep_names[op], n - 1, enomem);
	igt_assert_f(n <= MAX_NTH, "%s: still allocating at %u\n",
		     sweep_names[op], n);
	if (op == SWEEP_IMPORT_AGAIN) {
		/* a lookup and an fd install: nothing to fail, nothing failed */
		igt_assert_eq(n - 1, 0);
		igt_assert_eq(enomem, 0);
	} else {
		igt_assert_lt(0, enomem);
	}
	import_works(fd0, h[0], seed);
	import_works(fd0, h[1], seed + 1);
}

/*
 * ENOMEM: for an export, a first import, a repeated import and a batch
 * with fds, fail the calling thread's 1st, 2nd, ... allocation until the
 * call no longer reaches the n-th one. Each call succeeds or fails with
 * ENOMEM only, and nothing leaks. A repeated import of a granted handle
 * allocates nothing (the import is found under RCU, the dma-buf exists),
 * so it must never fail.
 */
static void test_enomem(void)
{
	int fd0 = vpod_open(0), fd1 = vpod_open(1), fd2 = vpod_open(2);
	struct drm_amdgpu_ualink_handle h[2];
	int held;

	exported_buffer(fd1, SIZE, 60, &h[0]);
	exported_buffer(fd2, SIZE, 61, &h[1]);
	import_works(fd0, h[0], 60);
	import_works(fd0, h[1], 61);
	wait_count(0, C_IMPORTS, 0, VPOD_ASYNC_MS);

	failslab_setup();
	fail_nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
	igt_assert_f(fail_nth_fd >= 0, "fail-nth: %m (CONFIG_FAULT_INJECTION?)\n");

	sweep(SWEEP_EXPORT, fd0, fd1, h, 60);
	sweep(SWEEP_IMPORT_FIRST, fd0, fd1, h, 60);
	sweep(SWEEP_BATCH, fd0, fd1, h, 60);
	held = import_ok(fd0, h[0]);
	sweep(SWEEP_IMPORT_AGAIN, fd0, fd1, h, 60);
	vpod_close(held);

	close(fail_nth_fd);
	fail_nth_fd = -1;
	failslab_restore(0);
	vpod_cleanup();
	wait_no_leaks(VPOD_ASYNC_MS);
}

/*
 * EMFILE: no fd left under RLIMIT_NOFILE. An import fails with EMFILE; a
 * batch with fds keeps its GEM handles and returns fd -1 per entry. In a
 * child, whose limit dies with it.
 */
static void test_emfile(void)
{
	int fd0 = vpod_open(0), fd1 = vpod_open(1);
	struct drm_amdgpu_ualink_handle h;

	connected(fd0, fd1, &h, 70);
	igt_fork(child, 1) {
		struct drm_amdgpu_ualink_batch_entry e[1] = {};
		struct rlimit rl;
		int next = dup(fd0), dmabuf;

		igt_assert_lte(0, next);
		close(next);
		igt_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
		rl.rlim_cur = next;	/* every fd below is taken */
		igt_assert_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
		igt_assert_eq(dup(fd0), -1);
		igt_assert_eq(errno, EMFILE);

		igt_assert_eq(raw_import(fd0, h, &dmabuf), -EMFILE);
		e[0].handle = h;
		igt_assert_eq(raw_batch(fd0, e, 1, AMDGPU_UALINK_IMPORT_FDS), 0);
		igt_assert_eq(e[0].error, 0);
		igt_assert_neq_u32(e[0].gem_handle, 0);
		igt_assert_eq(e[0].fd, -1);
		gpu_expect(fd0, e[0].gem_handle, 0, 4096, 70);
		gem_close(fd0, e[0].gem_handle);
	}
	igt_waitchildren();
	wait_count(0, C_IMPORTS, 0, VPOD_ASYNC_MS);
	import_works(fd0, h, 70);
	vpod_cleanup();
	wait_no_leaks(VPOD_ASYNC_MS);
}

static char file_max_saved[32];

static void file_max_restore(int sig)
{
	int fd;

	if (!file_max_saved[0])
		return;
	fd = open(FILE_MAX, O_WRONLY);
	if (fd >= 0) {
		if (write(fd, file_max_saved, strlen(file_max_saved)) < 0)
			igt_warn("restoring " FILE_MAX ": %m\n");
		close(fd);
	}
	file_max_saved[0] = 0;
}

/*
 * ENFILE: the system is out of files (fs.file-max 1) for a process
 * without CAP_SYS_ADMIN. A first import, which makes a new dma-buf file,
 * fails with ENFILE, and so does a batch without fds: its GEM handle is
 * PRIME's handle of that dma-buf. Both work once the limit is back.
 */
static void test_enfile(void)
{
	int fd0 = vpod_open(0), fd1 = vpod_open(1), status, fd;
	struct drm_amdgpu_ualink_handle h;
	ssize_t len;
	pid_t pid;

	connected(fd0, fd1, &h, 80);
	fd = open(FILE_MAX, O_RDWR);
	igt_assert_lte(0, fd);
	len = read(fd, file_max_saved, sizeof(file_max_saved) - 1);
	igt_assert_lt(0, len);
	file_max_saved[len] = 0;
	igt_install_exit_handler(file_max_restore);

	igt_fork(child, 1) {
		struct drm_amdgpu_ualink_batch_entry e[1] = {};
		int dmabuf;

		/* no capabilities: the file limit applies to us */
		igt_assert_eq(setgroups(0, NULL), 0);
		igt_assert_eq(setresgid(65534, 65534, 65534), 0);
		igt_assert_eq(setresuid(65534, 65534, 65534), 0);
		/* the parent lowers the limit now */
		kill(getpid(), SIGSTOP);

		igt_assert_eq(raw_import(fd0, h, &dmabuf), -ENFILE);
		e[0].handle = h;
		igt_assert_eq(raw_batch(fd0, e, 1, 0), 0);
		igt_assert_eq(e[0].error, -ENFILE);
		igt_assert_eq_u32(e[0].gem_handle, 0);
	}
	/* wait until the child stopped itself, then lower the limit */
	pid = waitpid(-1, &status, WUNTRACED);
	igt_assert_lt(0, pid);
	igt_assert(WIFSTOPPED(status));
	igt_assert_eq(pwrite(fd, "1", 1, 0), 1);
	close(fd);
	igt_assert_eq(kill(pid, SIGCONT), 0);
	igt_waitchildren_timeout(60, "enfile child");
	file_max_restore(0);
	wait_count(0, C_IMPORTS, 0, VPOD_ASYNC_MS);
	import_works(fd0, h, 80);
	batch_works(fd0, h, 80);
	vpod_cleanup();
	wait_no_leaks(VPOD_ASYNC_MS);
}

igt_main
{
	igt_fixture
		vpod_init();

	igt_describe("the exporter's IP refuses the grant: EREMOTEIO, alone in a batch");
	vpod_subtest("errno-eremoteio") {
		igt_set_timeout(SUBTEST_TIMEOUT, "errno-eremoteio");
		test_eremoteio();
	}

	igt_describe("in a GPU reset: ENETDOWN for export, import and batch, then success");
	vpod_subtest("errno-enetdown-resetting") {
		igt_set_timeout(SUBTEST_TIMEOUT, "errno-enetdown-resetting");
		test_enetdown_resetting();
	}

	igt_describe("a signal during the wait: EINTR; a batch, restarted as it is, finishes");
	vpod_subtest("errno-eintr") {
		igt_set_timeout(SUBTEST_TIMEOUT, "errno-eintr");
		test_eintr();
	}

	igt_describe("a storm of signals: a batch restarted as it is ends, each request sent once");
	vpod_subtest("errno-eintr-restart-storm") {
		igt_set_timeout(SUBTEST_TIMEOUT, "errno-eintr-restart-storm");
		test_eintr_restart_storm();
	}

	igt_describe("the exporter offline during an import: ENOLINK at once");
	vpod_subtest("errno-enolink-mid-call") {
		igt_set_timeout(SUBTEST_TIMEOUT, "errno-enolink-mid-call");
		test_enolink_mid_call("offline");
	}

	igt_describe("the exporter resets during an import: ENOLINK at once, not ENOENT");
	vpod_subtest("errno-enolink-reset-mid-call") {
		igt_set_timeout(SUBTEST_TIMEOUT, "errno-enolink-reset-mid-call");
		test_enolink_mid_call("reset");
	}

	igt_describe("the exporter's NPA window used up: ENOSPC, alone in a batch");
	vpod_subtest("errno-enospc-window-full") {
		igt_set_timeout(SUBTEST_TIMEOUT, "errno-enospc-window-full");
		test_enospc_window_full();
	}

	igt_describe("the queue of imports waiting for one exporter is full: ENOBUFS per entry");
	vpod_subtest("errno-enobufs-queue-full") {
		igt_set_timeout(SUBTEST_TIMEOUT, "errno-enobufs-queue-full");
		test_enobufs_queue_full();
	}

	igt_describe("a GEM handle closed while its export waits in the pin: ENOENT");
	vpod_subtest("errno-enoent-closed-mid-export") {
		igt_set_timeout(SUBTEST_TIMEOUT, "errno-enoent-closed-mid-export");
		test_enoent_closed_mid_export();
	}

	igt_describe("the result cannot be copied back: EFAULT, the import's fd stays");
	vpod_subtest("errno-efault-copy-back") {
		igt_set_timeout(SUBTEST_TIMEOUT, "errno-efault-copy-back");
		test_efault_copy_back();
	}

	igt_describe("each allocation of export, import and batch failed in turn: ENOMEM only, no leak");
	vpod_subtest("errno-enomem") {
		igt_set_timeout(SUBTEST_TIMEOUT, "errno-enomem");
		test_enomem();
	}

	igt_describe("out of fds under RLIMIT_NOFILE: EMFILE, a batch keeps its GEM handles");
	vpod_subtest("errno-emfile") {
		igt_set_timeout(SUBTEST_TIMEOUT, "errno-emfile");
		test_emfile();
	}

	igt_describe("out of files system-wide without CAP_SYS_ADMIN: ENFILE");
	vpod_subtest("errno-enfile") {
		igt_set_timeout(SUBTEST_TIMEOUT, "errno-enfile");
		test_enfile();
	}

	/*
	 * Not a subtest: whatever ran, nothing may stay held once it is all
	 * closed; a leak fails the program (exit 98), which vm-test reports
	 * by the program's name.
	 */
	igt_fixture
		vpod_fini(VPOD_ASYNC_MS);
}
