// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Imports through a faulty mailbox on the emulated pod: messages dropped,
 * corrupted, duplicated, delayed and reordered by the nodes' fault rules
 * (<debugfs>/amdgpu_ualink_vpod/node<ID>/fault). Every subtest clears its
 * rules, closes everything and checks that no node holds anything after.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xf86drm.h>

#include "igt.h"
#include "vpod_lib.h"

IGT_TEST_DESCRIPTION("UALink imports through a faulty mailbox on the emulated pod.");

#define SIZE		(64 * 1024ull)
#define N_BUF		32
/* no subtest may take longer than this, a hung ioctl included */
#define SUBTEST_TIMEOUT	180
/*
 * How much earlier than its nominal time a kernel timeout or delay may end
 * as measured here: the kernel counts from the jiffy it started in, which
 * began up to one jiffy (4 ms in the test guest, HZ=250) before, and our
 * clock reads whole milliseconds.
 */
#define TICK_SLACK_MS	5

/* kind rate=<ppm> count=<n> types=<mask> delay_ms=<ms>, zero keys left out */
static void fault(unsigned int id, const char *kind, unsigned int rate,
		  unsigned int count, unsigned int types, unsigned int delay_ms)
{
	char rule[160];
	int len;

	len = snprintf(rule, sizeof(rule), "%s", kind);
	if (rate)
		len += snprintf(rule + len, sizeof(rule) - len, " rate=%u", rate);
	if (count)
		len += snprintf(rule + len, sizeof(rule) - len, " count=%u", count);
	if (types)
		len += snprintf(rule + len, sizeof(rule) - len, " types=0x%x", types);
	if (delay_ms)
		snprintf(rule + len, sizeof(rule) - len, " delay_ms=%u", delay_ms);
	set_fault(id, rule);
	igt_debug("node%u fault: %s\n", id, rule);
}

/*
 * How many faults of @kind node @id injected so far, from its fault file:
 * one line per kind, "<kind> rate=.. count=.. types=.. delay_ms=..
 * injected=<n>". The counts survive "clear": compare before and after.
 */
static uint64_t injected(unsigned int id, const char *kind)
{
	char rel[32], buf[8192], *line, *save = NULL;
	size_t len = strlen(kind);
	int ret;

	snprintf(rel, sizeof(rel), "node%u/fault", id);
	ret = dbg_read(rel, buf, sizeof(buf));
	igt_assert_f(ret >= 0, "reading %s: %s\n", rel, strerror(-ret));
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long n;
		char *p;

		if (strncmp(line, kind, len) || line[len] != ' ')
			continue;
		p = strstr(line, "injected=");
		igt_assert_f(p && sscanf(p, "injected=%llu", &n) == 1,
			     "%s: no injected=<n> in \"%s\"\n", rel, line);
		return n;
	}
	igt_assert_f(false, "%s has no line for %s\n", rel, kind);
	return 0;
}

static void fault_show(unsigned int id)
{
	char rel[32], buf[8192];

	snprintf(rel, sizeof(rel), "node%u/fault", id);
	if (dbg_read(rel, buf, sizeof(buf)) >= 0)
		igt_info("%s:\n%s", rel, buf);
}

/* clear the rules, close everything: no node may hold anything after */
static void fault_finish(void)
{
	clear_faults();
	vpod_cleanup();
	wait_no_leaks(VPOD_FAULT_ASYNC_MS);
}

static void make_buffers(int fd, struct drm_amdgpu_ualink_handle *h, int n,
			 uint32_t seed)
{
	int i;

	for (i = 0; i < n; i++)
		exported_buffer(fd, SIZE, seed + i, &h[i]);
}

static uint32_t import_verify(int fd, struct drm_amdgpu_ualink_handle h,
			      uint32_t seed)
{
	uint32_t gem = import_gem(fd, h, NULL);

	gpu_expect(fd, gem, 0, SIZE, seed);
	return gem;
}

static struct drm_amdgpu_ualink_handle unknown(struct drm_amdgpu_ualink_handle h)
{
	h.hi = ~h.hi;
	return h;
}

/* import @n handles in one batch on @fd and check each buffer's data */
static void batch_verify(int fd, const struct drm_amdgpu_ualink_handle *h,
			 int n, uint32_t seed)
{
	struct drm_amdgpu_ualink_batch_entry e[N_BUF] = {};
	int i;

	igt_assert(n <= N_BUF);
	for (i = 0; i < n; i++)
		e[i].handle = h[i];
	igt_assert_eq(ualink_import_batch(fd, e, n, 0), 0);
	for (i = 0; i < n; i++) {
		igt_assert_f(e[i].error == 0, "batch entry %d: %s\n", i,
			     strerror(-e[i].error));
		gpu_expect(fd, e[i].gem_handle, 0, SIZE, seed + i);
	}
}

static void test_drop_rate(void)
{
	struct drm_amdgpu_ualink_handle h[N_BUF];
	int fd0 = vpod_open(0), fd1 = vpod_open(1), fd2 = vpod_open(2), i;
	uint64_t before;

	make_buffers(fd1, h, N_BUF, 100);
	/*
	 * 30% of one side's messages lost. With the default 3 retransmissions
	 * a request would fail 0.3^4 of the time; with 16 (in the same 5 s,
	 * the first after a few ms) about 0.3^11.
	 */
	set_timeout(0, 5000, 16);
	set_timeout(1, 5000, 16);
	set_timeout(2, 5000, 16);

	/* the exporter's answers are lost */
	before = injected(1, "drop");
	fault(1, "drop", 300000, 0, MSG_ALL, 0);
	for (i = 0; i < N_BUF; i++)
		import_verify(fd0, h[i], 100 + i);
	expect_import_error(fd0, unknown(h[0]), ENOENT);
	fault_show(1);
	igt_assert_lt_u64(before, injected(1, "drop"));
	clear_faults();

	/* the importers' requests are lost */
	before = injected(2, "drop");
	fault(0, "drop", 300000, 0, MSG_ALL, 0);
	fault(2, "drop", 300000, 0, MSG_ALL, 0);
	batch_verify(fd2, h, N_BUF, 100);
	expect_import_error(fd0, unknown(h[1]), ENOENT);
	fault_show(2);
	igt_assert_lt_u64(before, injected(2, "drop"));

	/* each import was granted once */
	igt_assert_eq_u64(count_of(1, C_GRANTS), 2 * N_BUF);
	fault_finish();
}

static void test_drop_all_timeout(void)
{
	struct drm_amdgpu_ualink_batch_entry e = {};
	struct drm_amdgpu_ualink_handle h;
	int fd0 = vpod_open(0), fd1 = vpod_open(1), d = -1, ret;
	uint64_t start, took, before;
	uint32_t gem;

	exported_buffer(fd1, SIZE, 200, &h);
	/* connected first: the request itself goes unanswered */
	gem = import_verify(fd0, h, 200);
	gem_close(fd0, gem);
	wait_count(1, C_GRANTS, 0, VPOD_ASYNC_MS);

	set_timeout(0, 300, 2);
	before = injected(1, "drop");
	fault(1, "drop", 1000000, 0, MSG_ALL, 0);

	igt_set_timeout(60, "import from an exporter whose answers are all lost");
	start = vpod_now_ms();
	ret = ualink_import(fd0, h, AMDGPU_UALINK_IMPORT_CLOEXEC, &d);
	took = vpod_now_ms() - start;
	if (!ret)
		vpod_track_fd(d);
	igt_assert_f(ret == -ETIMEDOUT, "import: %s, expected %s\n",
		     ret ? strerror(-ret) : "success", strerror(ETIMEDOUT));
	igt_info("import timed out after %llu ms\n", (unsigned long long)took);
	igt_assert_f(took + TICK_SLACK_MS >= 300,
		     "timed out after %llu ms, before the 300 ms timeout\n",
		     (unsigned long long)took);
	igt_assert_f(took < 5000, "timed out only after %llu ms\n",
		     (unsigned long long)took);

	/* a batch reports the timeout in its entry */
	e.handle = h;
	start = vpod_now_ms();
	igt_assert_eq(ualink_import_batch(fd0, &e, 1, 0), 0);
	took = vpod_now_ms() - start;
	igt_assert_eq(e.error, -ETIMEDOUT);
	igt_assert_eq_u32(e.gem_handle, 0);
	igt_assert_eq(e.fd, -1);
	igt_assert_f(took < 5000, "batch timed out only after %llu ms\n",
		     (unsigned long long)took);
	igt_reset_timeout();
	fault_show(1);
	igt_assert_lt_u64(before, injected(1, "drop"));

	/* the fabric heals: the same handle imports again */
	clear_faults();
	set_timeout(0, 5000, 3);
	import_verify(fd0, h, 200);
	fault_finish();
}

static void test_corrupt(void)
{
	struct drm_amdgpu_ualink_handle h[2];
	int fd0 = vpod_open(0), fd2 = vpod_open(2);
	uint64_t before;

	make_buffers(fd2, h, 2, 300);
	/* retransmit soon: 4 retransmissions in 2 s, the first after 65 ms */
	set_timeout(0, 2000, 4);

	/* the importer's request is corrupted once */
	before = injected(0, "corrupt");
	fault(0, "corrupt", 0, 1, MSG_BIT(MSG_NPA_REQ), 0);
	import_verify(fd0, h[0], 300);
	fault_show(0);
	igt_assert_eq_u64(injected(0, "corrupt"), before + 1);
	clear_faults();

	/* the exporter's answer is corrupted once */
	before = injected(2, "corrupt");
	fault(2, "corrupt", 0, 1, MSG_BIT(MSG_NPA_RSP), 0);
	import_verify(fd0, h[1], 301);
	fault_show(2);
	igt_assert_eq_u64(injected(2, "corrupt"), before + 1);
	igt_assert_eq_u64(count_of(2, C_GRANTS), 2);
	fault_finish();
}

static void test_duplicate(void)
{
	struct drm_amdgpu_ualink_handle h[4];
	int fd0 = vpod_open(0), fd3 = vpod_open(3), i;
	uint64_t before0, before3;

	make_buffers(fd3, h, 4, 400);
	before0 = injected(0, "duplicate");
	before3 = injected(3, "duplicate");
	fault(0, "duplicate", 1000000, 0, MSG_ALL, 0);
	fault(3, "duplicate", 1000000, 0, MSG_ALL, 0);

	for (i = 0; i < 4; i++)
		import_verify(fd0, h[i], 400 + i);
	/* a refusal, duplicated, is still one refusal */
	expect_import_error(fd0, unknown(h[0]), ENOENT);
	/* each request was handled once: one grant per import */
	igt_assert_eq_u64(count_of(3, C_GRANTS), 4);
	/* the refused import goes asynchronously, like every last put */
	wait_count(0, C_IMPORTS, 4, VPOD_ASYNC_MS);

	fault_show(0);
	fault_show(3);
	igt_assert_lt_u64(before0, injected(0, "duplicate"));
	igt_assert_lt_u64(before3, injected(3, "duplicate"));
	fault_finish();
}

static void test_delay(void)
{
	const unsigned int delay = 200;
	struct drm_amdgpu_ualink_handle h[2];
	int fd0 = vpod_open(0), fd1 = vpod_open(1);
	uint64_t start, took, before;

	make_buffers(fd1, h, 2, 500);
	igt_set_timeout(60, "delayed import");

	/* the exporter's messages are late */
	before = injected(1, "delay");
	fault(1, "delay", 1000000, 0, MSG_ALL, delay);
	start = vpod_now_ms();
	import_verify(fd0, h[0], 500);
	took = vpod_now_ms() - start;
	igt_info("import with delayed answers took %llu ms\n",
		 (unsigned long long)took);
	igt_assert_lte_u64(delay, took + TICK_SLACK_MS);
	fault_show(1);
	igt_assert_lt_u64(before, injected(1, "delay"));
	clear_faults();

	/* the importer's requests are late */
	before = injected(0, "delay");
	fault(0, "delay", 1000000, 0, MSG_BIT(MSG_NPA_REQ), delay);
	start = vpod_now_ms();
	import_verify(fd0, h[1], 501);
	took = vpod_now_ms() - start;
	igt_assert_lte_u64(delay, took + TICK_SLACK_MS);
	fault_show(0);
	igt_assert_lt_u64(before, injected(0, "delay"));
	igt_reset_timeout();
	fault_finish();
}

static void test_reorder(void)
{
	struct drm_amdgpu_ualink_handle h[5];
	int fd0 = vpod_open(0), fd1 = vpod_open(1);
	uint64_t before0, before1;

	make_buffers(fd1, h, 5, 600);
	set_timeout(0, 2000, 4);
	before0 = injected(0, "reorder");
	before1 = injected(1, "reorder");
	/* each held until the next message to the peer, 100 ms at most */
	fault(0, "reorder", 1000000, 0, MSG_BIT(MSG_NPA_REQ), 100);
	fault(1, "reorder", 1000000, 0, MSG_BIT(MSG_NPA_RSP), 100);

	/* requests in flight together, each answer matched to its request */
	batch_verify(fd0, h, 4, 600);
	/* a lone request */
	import_verify(fd0, h[4], 604);
	igt_assert_eq_u64(count_of(1, C_GRANTS), 5);

	fault_show(0);
	fault_show(1);
	igt_assert_lt_u64(before0, injected(0, "reorder"));
	igt_assert_lt_u64(before1, injected(1, "reorder"));
	fault_finish();
}

/* node @id's count of connection @what ("timeouts", "resets") with @peer */
static uint64_t peer_stat(unsigned int id, unsigned int peer, const char *what)
{
	static char buf[65536];
	char rel[32], want[32], key[40], *p;
	unsigned long long n;

	snprintf(rel, sizeof(rel), "node%u/state", id);
	igt_assert_lte(0, dbg_read(rel, buf, sizeof(buf)));
	snprintf(want, sizeof(want), "peer %u: ", peer);
	p = strstr(buf, want);
	igt_assert_f(p, "%s has no line \"%s\"\n", rel, want);
	snprintf(key, sizeof(key), " %s ", what);
	p = strstr(p, key);
	igt_assert_f(p && sscanf(p + strlen(key), "%llu", &n) == 1,
		     "%s: no %s for peer %u\n", rel, what, peer);
	return n;
}

/*
 * An exporter whose every message is late by most of the importer's
 * timeout: requests complete (each within its own deadline, however many
 * retransmissions it took), nothing is declared lost.
 */
static void test_slow_exporter(void)
{
	const unsigned int timeout = 1000, delay = 700;
	struct drm_amdgpu_ualink_handle h[3];
	int fd0 = vpod_open(0), fd1 = vpod_open(1);
	uint64_t timeouts, resets, start, took;
	int i;

	make_buffers(fd1, h, 3, 700);
	gem_close(fd0, import_verify(fd0, h[0], 700));	/* connected */
	set_timeout(0, timeout, 3);
	set_timeout(1, timeout, 3);
	timeouts = peer_stat(0, 1, "timeouts");
	resets = peer_stat(0, 1, "resets");
	fault(1, "delay", 1000000, 0, MSG_ALL, delay);
	for (i = 1; i < 3; i++) {
		start = vpod_now_ms();
		gem_close(fd0, import_verify(fd0, h[i], 700 + i));
		took = vpod_now_ms() - start;
		igt_info("import %d with answers %u ms late (timeout %u ms): %llu ms\n",
			 i, delay, timeout, (unsigned long long)took);
		igt_assert_lte_u64(delay, took + TICK_SLACK_MS);
	}
	fault_show(1);
	igt_assert_eq_u64(peer_stat(0, 1, "timeouts"), timeouts);
	igt_assert_eq_u64(peer_stat(0, 1, "resets"), resets);
	fault_finish();
}

struct quota_batch {
	int fd;
	struct drm_amdgpu_ualink_handle *h;
	int ret;
	int errors[4];
};

static void *quota_batch_thread(void *arg)
{
	struct quota_batch *q = arg;
	struct drm_amdgpu_ualink_batch_entry e[4] = {};
	int i;

	for (i = 0; i < 4; i++)
		e[i].handle = q->h[i];
	q->ret = ualink_import_batch(q->fd, e, 4, 0);
	for (i = 0; i < 4; i++)
		q->errors[i] = e[i].error;
	return NULL;
}

/*
 * One process over its quota of imports in flight: a thread's batch of 4,
 * with the process's quota at 4, waits for a slow exporter; meanwhile an
 * import by another thread of the process fails with EDQUOT at once, even
 * on a file opened afterwards (a new file is no new quota); the same
 * import by another process (a child) succeeds. The batch completes, and
 * then the process imports again.
 */
static void test_process_quota(void)
{
	struct drm_amdgpu_ualink_handle h[4], other;
	int fd0 = vpod_open(0), fd1 = vpod_open(1), fd2 = vpod_open(2);
	struct quota_batch q = { .fd = fd0, .h = h };
	pthread_t thread;
	int fd0b, i;
	uint32_t g;

	make_buffers(fd1, h, 4, 800);
	exported_buffer(fd2, SIZE, 810, &other);
	gem_close(fd0, import_verify(fd0, h[0], 800));	/* connected */
	wait_count(0, C_IMPORTS, 0, VPOD_ASYNC_MS);
	set_import_quota(4);
	fault(1, "delay", 1000000, 0, MSG_ALL, 1500);

	igt_assert_eq(pthread_create(&thread, NULL, quota_batch_thread, &q), 0);
	/* the batch's four imports are in flight */
	wait_count(0, C_IMPORTS, 4, VPOD_ASYNC_MS);
	fd0b = vpod_open(0);
	expect_import_error(fd0b, other, EDQUOT);
	expect_import_error(fd0, other, EDQUOT);
	igt_fork(child, 1) {
		uint32_t c = import_gem(fd0b, other, NULL);

		gpu_expect(fd0b, c, 0, 4096, 810);
	}
	igt_waitchildren();
	igt_assert_eq(pthread_join(thread, NULL), 0);
	igt_assert_eq(q.ret, 0);
	for (i = 0; i < 4; i++)
		igt_assert_eq(q.errors[i], 0);
	/* the quota is back: the process imports again */
	g = import_gem(fd0b, other, NULL);
	gpu_expect(fd0b, g, 0, 4096, 810);
	fault_finish();
}

#define RANDOM_BATCH	1024

/*
 * One process on node 0 imports a batch of 1,024 random handles naming
 * node 1 while another keeps importing a real handle of node 1; node 0's
 * requests time out after 200 ms, less than the batch's queue takes. Each
 * random entry fails alone with ENOENT, the real imports never fail, and
 * the connection between the two is never reset or timed out.
 */
static void test_batch_fails_alone(void)
{
	struct drm_amdgpu_ualink_handle h;
	int fd1 = vpod_open(1), fd0 = vpod_open(0);
	uint64_t timeouts, resets;
	volatile int *shared;

	exported_buffer(fd1, SIZE, 95, &h);
	/* the connection is up before the counts are read */
	gem_close(fd0, import_verify(fd0, h, 95));
	set_timeout(0, 200, 1);
	timeouts = peer_stat(0, 1, "timeouts");
	resets = peer_stat(0, 1, "resets");
	shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	igt_assert(shared != MAP_FAILED);
	shared[0] = shared[1] = shared[2] = 0;

	igt_fork(child, 2) {
		int fd = vpod_open(0);

		if (child == 0) {
			struct drm_amdgpu_ualink_batch_entry *e;
			int i, bad = 0;

			e = calloc(RANDOM_BATCH, sizeof(*e));
			igt_assert(e);
			for (i = 0; i < RANDOM_BATCH; i++) {
				e[i].handle.lo = (rand64() << 10) | 1;
				e[i].handle.hi = rand64();
			}
			igt_assert_eq(ualink_import_batch(fd, e, RANDOM_BATCH, 0), 0);
			for (i = 0; i < RANDOM_BATCH; i++)
				if (e[i].error != -ENOENT && !bad++)
					igt_warn("entry %d: %s\n", i, strerror(-e[i].error));
			shared[0] = 1;
			igt_assert_eq(bad, 0);
		} else {
			do {	/* at least once, however fast the batch */
				struct drm_amdgpu_ualink_batch_entry one = { .handle = h };

				igt_assert_eq(ualink_import_batch(fd, &one, 1, 0), 0);
				if (one.error) {
					shared[2]++;
					igt_warn("a real import failed: %s\n", strerror(-one.error));
					break;
				}
				gem_close(fd, one.gem_handle);
				shared[1]++;
			} while (!shared[0]);
		}
	}
	igt_waitchildren();
	igt_info("%d real imports while the batch ran\n", shared[1]);
	igt_assert_eq(shared[2], 0);
	igt_assert_lt(0, shared[1]);
	igt_assert_eq_u64(peer_stat(0, 1, "timeouts"), timeouts);
	igt_assert_eq_u64(peer_stat(0, 1, "resets"), resets);
	munmap((void *)shared, 4096);
	fault_finish();
}

igt_main
{
	igt_fixture
		vpod_init();

	igt_describe("30% of the messages lost both ways: imports complete");
	vpod_subtest("fault-drop-rate") {
		igt_set_timeout(SUBTEST_TIMEOUT, "fault-drop-rate");
		test_drop_rate();
	}

	igt_describe("every answer lost: the import fails with ETIMEDOUT, in time");
	vpod_subtest("fault-drop-all-timeout")
		test_drop_all_timeout();

	igt_describe("a corrupted request or answer is retransmitted");
	vpod_subtest("fault-corrupt") {
		igt_set_timeout(SUBTEST_TIMEOUT, "fault-corrupt");
		test_corrupt();
	}

	igt_describe("duplicated messages are handled once");
	vpod_subtest("fault-duplicate") {
		igt_set_timeout(SUBTEST_TIMEOUT, "fault-duplicate");
		test_duplicate();
	}

	igt_describe("delayed messages: imports complete, later");
	vpod_subtest("fault-delay")
		test_delay();

	igt_describe("reordered requests and answers: imports complete");
	vpod_subtest("fault-reorder") {
		igt_set_timeout(SUBTEST_TIMEOUT, "fault-reorder");
		test_reorder();
	}

	igt_describe("answers late by most of the timeout: requests complete, no one lost");
	vpod_subtest("slow-exporter") {
		igt_set_timeout(SUBTEST_TIMEOUT, "slow-exporter");
		test_slow_exporter();
	}

	igt_describe("a process past its import quota gets EDQUOT on any file, others do not");
	vpod_subtest("process-quota") {
		igt_set_timeout(SUBTEST_TIMEOUT, "process-quota");
		test_process_quota();
	}

	igt_describe("1,024 unknown handles in a batch fail alone, no one else");
	vpod_subtest("batch-fails-alone") {
		igt_set_timeout(SUBTEST_TIMEOUT, "batch-fails-alone");
		test_batch_fails_alone();
	}

	/*
	 * Not a subtest: whatever ran, nothing may stay held once it is all
	 * closed; a leak fails the program (exit 98), which vm-test reports
	 * by the program's name.
	 */
	igt_fixture
		vpod_fini(VPOD_FAULT_ASYNC_MS);
}
