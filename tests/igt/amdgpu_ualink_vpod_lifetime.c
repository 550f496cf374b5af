// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Lifetime of UALink exports and imports on the emulated pod: revocation
 * when the exporter closes its buffer, release when the importer closes
 * its import, and the clean-up when a node resets or goes offline.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <xf86drm.h>

#include "igt.h"
#include "vpod_lib.h"

IGT_TEST_DESCRIPTION("Revocation, release, reset and offline on the emulated UALink pod.");

#define SIZE		(256 * 1024ull)

/*
 * What an import on a node whose exporter is offline fails with, as the
 * header says: the exporter stays a member of the virtual pod (EACCES is
 * for non-members), and the mailbox refuses to send to it.
 */
#define OFFLINE_IMPORT_ERRNO	ENOLINK

static void expect_state(int fd, uint32_t state)
{
	struct drm_amdgpu_ualink_info info;

	igt_assert_eq(ualink_info(fd, &info), 0);
	igt_assert_eq_u32(info.state, state);
}

/*
 * The exporter holds nothing for anyone any more: no grant, no range; its
 * live exports stay pinned, nothing else.
 */
static void wait_exporter_clean(unsigned int id, unsigned int timeout_ms)
{
	wait_count(id, C_GRANTS, 0, timeout_ms);
	wait_count(id, C_NPA_BYTES, 0, timeout_ms);
	wait_count(id, C_PINS, count_of(id, C_EXPORTS), timeout_ms);
}

static void test_exporter_close_revokes(void)
{
	static const unsigned int importers[] = { 0, 2, 3 };
	int fd1 = vpod_open(1), fd[3];
	struct drm_amdgpu_ualink_handle h;
	uint32_t exp, imp[3], word = 0x12345678;
	unsigned int i;

	exp = exported_buffer(fd1, SIZE, 71, &h);
	for (i = 0; i < 3; i++) {
		fd[i] = vpod_open(importers[i]);
		imp[i] = import_gem(fd[i], h, NULL);
		gpu_expect(fd[i], imp[i], 0, SIZE, 71);
	}
	igt_assert_eq_u64(count_of(1, C_GRANTS), 3);

	/* the last GEM handle of the exporter goes: every importer loses it */
	gem_close(fd1, exp);
	for (i = 0; i < 3; i++) {
		wait_access_error(fd[i], imp[i], ENODEV, VPOD_ASYNC_MS);
		igt_assert_eq(gpu_access(fd[i], imp[i],
					 AMDGPU_UALINK_VPOD_ACCESS_WRITE, 0,
					 &word, 4), -ENODEV);
	}
	expect_import_error(fd[0], h, ENOENT);
	wait_exporter_clean(1, VPOD_ASYNC_MS);
	wait_count(1, C_EXPORTS, 0, VPOD_ASYNC_MS);

	/* the importers' dead buffers close cleanly */
	for (i = 0; i < 3; i++)
		gem_close(fd[i], imp[i]);
	vpod_cleanup();
	wait_no_leaks(VPOD_ASYNC_MS);
}

static void test_importer_close_releases(void)
{
	int fd0 = vpod_open(0), fd1 = vpod_open(1), fd0b, d;
	struct drm_amdgpu_ualink_handle h;
	uint32_t exp, imp;

	exp = exported_buffer(fd1, SIZE, 72, &h);
	imp = import_gem(fd0, h, &d);
	gpu_expect(fd0, imp, 0, SIZE, 72);
	igt_assert_eq_u64(count_of(1, C_GRANTS), 1);
	igt_assert_lte(1, count_of(1, C_PINS));
	igt_assert_eq_u64(count_of(0, C_IMPORTS), 1);

	/* the GEM handle alone keeps the import */
	vpod_close(d);
	gpu_expect(fd0, imp, 0, 4096, 72);
	igt_assert_eq_u64(count_of(1, C_GRANTS), 1);

	gem_close(fd0, imp);
	wait_count(0, C_IMPORTS, 0, VPOD_ASYNC_MS);
	wait_exporter_clean(1, VPOD_ASYNC_MS);
	wait_count(1, C_NPA_BYTES, 0, VPOD_ASYNC_MS);
	wait_count(1, C_PT_TABLES, 0, VPOD_ASYNC_MS);
	wait_count(0, C_TLB_ENTRIES, 0, VPOD_ASYNC_MS);
	wait_count(0, C_NPA_BYTES, 0, VPOD_ASYNC_MS);
	/* the export itself stays, untouched */
	igt_assert_eq_u64(count_of(1, C_EXPORTS), 1);
	gpu_expect(fd1, exp, 0, SIZE, 72);

	/* closing the importer's file releases too */
	fd0b = vpod_open(0);
	imp = import_gem(fd0b, h, &d);
	gpu_expect(fd0b, imp, 0, SIZE, 72);
	vpod_close(d);
	vpod_close(fd0b);
	wait_count(0, C_IMPORTS, 0, VPOD_ASYNC_MS);
	wait_exporter_clean(1, VPOD_ASYNC_MS);

	/* and the handle imports again */
	imp = import_gem(fd0, h, NULL);
	gpu_expect(fd0, imp, 0, SIZE, 72);
	vpod_cleanup();
	wait_no_leaks(VPOD_ASYNC_MS);
}

static void test_importer_reset(void)
{
	int fd0 = vpod_open(0), fd1 = vpod_open(1), d;
	struct drm_amdgpu_ualink_handle h;
	uint32_t imp, word;

	exported_buffer(fd1, SIZE, 73, &h);
	imp = import_gem(fd0, h, &d);
	gpu_expect(fd0, imp, 0, SIZE, 73);

	set_control(0, "reset");
	wait_access_error(fd0, imp, ENODEV, VPOD_ASYNC_MS);
	wait_state(0, "active", VPOD_ASYNC_MS);
	expect_state(fd0, AMDGPU_UALINK_STATE_ACTIVE);
	/* the exporter dropped what it held for the reset node */
	wait_exporter_clean(1, VPOD_FAULT_ASYNC_MS);
	igt_assert_eq_u64(count_of(1, C_EXPORTS), 1);

	/* the dead import stays dead; a new import of the live handle works */
	igt_assert_eq(gpu_access(fd0, imp, 0, 0, &word, 4), -ENODEV);
	gpu_expect(fd0, import_gem(fd0, h, NULL), 0, SIZE, 73);
	igt_assert_eq_u64(count_of(1, C_GRANTS), 1);

	vpod_cleanup();
	wait_no_leaks(VPOD_FAULT_ASYNC_MS);
}

static void test_exporter_reset(void)
{
	int fd0 = vpod_open(0), fd1 = vpod_open(1), fd2 = vpod_open(2);
	struct drm_amdgpu_ualink_handle h, h2;
	uint32_t exp, imp0, imp2;

	exp = exported_buffer(fd1, SIZE, 74, &h);
	imp0 = import_gem(fd0, h, NULL);
	imp2 = import_gem(fd2, h, NULL);
	gpu_expect(fd0, imp0, 0, SIZE, 74);
	gpu_expect(fd2, imp2, 0, SIZE, 74);

	set_control(1, "reset");
	wait_access_error(fd0, imp0, ENODEV, VPOD_FAULT_ASYNC_MS);
	wait_access_error(fd2, imp2, ENODEV, VPOD_FAULT_ASYNC_MS);
	wait_state(1, "active", VPOD_ASYNC_MS);
	expect_state(fd1, AMDGPU_UALINK_STATE_ACTIVE);
	/* its grants are gone */
	wait_exporter_clean(1, VPOD_FAULT_ASYNC_MS);

	/* exports survive a reset: the old handle imports again */
	imp0 = import_gem(fd0, h, NULL);
	gpu_fill(fd0, imp0, 0, 4096, 78);
	gpu_expect(fd1, exp, 0, 4096, 78);

	/* and new exports work */
	exported_buffer(fd1, SIZE, 75, &h2);
	gpu_expect(fd0, import_gem(fd0, h2, NULL), 0, SIZE, 75);
	gpu_expect(fd2, import_gem(fd2, h2, NULL), 0, SIZE, 75);
	igt_assert_eq_u64(count_of(1, C_GRANTS), 3);

	vpod_cleanup();
	wait_no_leaks(VPOD_FAULT_ASYNC_MS);
}

static void test_peer_offline(void)
{
	int fd0 = vpod_open(0), fd1 = vpod_open(1), d, ret;
	struct drm_amdgpu_ualink_handle h, h2, out;
	uint32_t imp, later;

	exported_buffer(fd1, SIZE, 76, &h);
	later = vram_create(fd1, SIZE);
	gpu_fill(fd1, later, 0, SIZE, 77);
	imp = import_gem(fd0, h, NULL);
	gpu_expect(fd0, imp, 0, SIZE, 76);

	set_control(1, "offline");
	wait_state(1, "offline", VPOD_ASYNC_MS);
	expect_state(fd1, AMDGPU_UALINK_STATE_OFFLINE);
	wait_access_error(fd0, imp, ENODEV, VPOD_FAULT_ASYNC_MS);

	/*
	 * an offline node neither exports nor imports, and says it is not
	 * ready, where libhsakmt looks
	 */
	igt_assert_eq(ualink_export(fd1, later, &out), -ENETDOWN);
	d = -1;
	ret = ualink_import(fd1, h, 0, &d);
	if (!ret)
		vpod_track_fd(d);
	igt_assert_eq(ret, -ENETDOWN);
	expect_sysfs(1, "accel_state", "unconfigured");
	/* and nobody imports from it */
	expect_import_error(fd0, h, OFFLINE_IMPORT_ERRNO);

	set_control(1, "online");
	wait_state(1, "active", VPOD_ASYNC_MS);
	expect_state(fd1, AMDGPU_UALINK_STATE_ACTIVE);
	expect_sysfs(1, "accel_state", "ready");
	wait_exporter_clean(1, VPOD_FAULT_ASYNC_MS);

	/*
	 * the calls it refused while offline now succeed (its own handle:
	 * its own buffer); a new export imports; so does the old one, still
	 * exported
	 */
	h2 = export_ok(fd1, later);
	gpu_expect(fd1, import_gem(fd1, h, NULL), 0, SIZE, 76);
	gpu_expect(fd0, import_gem(fd0, h2, NULL), 0, SIZE, 77);
	gpu_expect(fd0, import_gem(fd0, h, NULL), 0, SIZE, 76);
	igt_assert_eq_u64(count_of(1, C_GRANTS), 2);

	vpod_cleanup();
	wait_no_leaks(VPOD_FAULT_ASYNC_MS);
}

/*
 * The importer goes offline while it holds an import: the exporter drops
 * it from the access set (its grant goes, with nothing said), its accesses
 * fault, and once back it imports again.
 */
static void test_importer_offline(void)
{
	int fd0 = vpod_open(0), fd1 = vpod_open(1);
	struct drm_amdgpu_ualink_handle h;
	uint32_t imp;

	exported_buffer(fd1, SIZE, 78, &h);
	imp = import_gem(fd0, h, NULL);
	gpu_expect(fd0, imp, 0, SIZE, 78);
	igt_assert_eq_u64(count_of(1, C_GRANTS), 1);

	set_control(0, "offline");
	wait_state(0, "offline", VPOD_ASYNC_MS);
	wait_count(1, C_GRANTS, 0, VPOD_FAULT_ASYNC_MS);
	wait_access_error(fd0, imp, ENODEV, VPOD_FAULT_ASYNC_MS);
	expect_import_error(fd0, h, ENETDOWN);
	expect_sysfs(0, "accel_state", "unconfigured");

	set_control(0, "online");
	wait_state(0, "active", VPOD_ASYNC_MS);
	gem_close(fd0, imp);
	gpu_expect(fd0, import_gem(fd0, h, NULL), 0, SIZE, 78);
	igt_assert_eq_u64(count_of(1, C_GRANTS), 1);

	vpod_cleanup();
	wait_no_leaks(VPOD_FAULT_ASYNC_MS);
}

/*
 * Export, import, read through the fabric and close both sides right away,
 * many times: the importer's release is undone on the exporter's mailbox
 * worker while the exporter's last close destroys the export. The debug
 * guest's KASAN and TTM's warnings catch a buffer freed before the worker
 * is done with it (a use-after-free seen within 25 to 200 rounds before the
 * export held a reference for its pin and its destroyer waited under the
 * worker's lock).
 */
#define CLOSE_RACE_ROUNDS	400

enum close_order {
	CLOSE_FILES,	/* the importer's file, then the exporter's */
	CLOSE_HANDLES,	/* the import's GEM handle, then the export's */
};

static void test_close_race(enum close_order order)
{
	int fd0 = -1, fd1 = -1, i;
	struct drm_amdgpu_ualink_handle h;
	uint32_t exp, imp, word;

	if (order == CLOSE_HANDLES) {
		fd0 = vpod_open(0);
		fd1 = vpod_open(1);
	}
	for (i = 0; i < CLOSE_RACE_ROUNDS; i++) {
		if (order == CLOSE_FILES) {
			fd0 = vpod_open(0);
			fd1 = vpod_open(1);
		}
		exp = vram_create(fd1, 64 * 1024);
		word = i;
		gpu_write(fd1, exp, 0, &word, 4);
		h = export_ok(fd1, exp);
		imp = import_gem(fd0, h, NULL);
		word = ~0u;
		gpu_read(fd0, imp, 0, &word, 4);
		igt_assert_eq_u32(word, i);
		if (order == CLOSE_FILES) {
			vpod_close(fd0);
			vpod_close(fd1);
		} else {
			gem_close(fd0, imp);
			gem_close(fd1, exp);
		}
	}
	vpod_cleanup();
	wait_no_leaks(VPOD_ASYNC_MS);
}

/* @accel reads @size bytes at @npa and finds the pattern of @seed */
/* A number in the ualink/ directory of accelerator @id's device. */
static uint64_t sysfs_u64(unsigned int id, const char *attr)
{
	char buf[32];

	igt_assert_lt(0, sysfs_read(id, attr, buf, sizeof(buf)));
	return strtoull(buf, NULL, 10);
}

static void peek_expect(unsigned int accel, uint64_t npa, uint32_t seed)
{
	uint8_t buf[4096];

	igt_assert_eq(npa_peek(accel, npa, buf, sizeof(buf)), 0);
	igt_assert_eq(pattern_check(buf, sizeof(buf), seed, 0), -1);
}

/*
 * The fabric is where memory stops being reachable: after each way an
 * importer can lose a range, its raw read of the NPA (no import involved,
 * what a hostile or buggy peer kernel that kept the address can do) and
 * that of node 3, which never imported, fault at the exporter; the
 * importers that keep the range still read it, and a range reused by
 * another export shows its data to that export's importers only.
 */
static void test_fabric_unreachable(void)
{
	int fd0 = vpod_open(0), fd1 = vpod_open(1), fd2 = vpod_open(2);
	struct drm_amdgpu_ualink_handle h, h2;
	uint64_t npa, faults;
	uint32_t exp, exp2, imp0, imp2;
	uint8_t byte;

	exp = exported_buffer(fd1, SIZE, 81, &h);
	imp0 = import_gem(fd0, h, NULL);
	imp2 = import_gem(fd2, h, NULL);
	npa = export_npa(h);
	igt_assert(npa);
	/* one range for both importers, read by each through the fabric */
	peek_expect(0, npa, 81);
	peek_expect(2, npa, 81);
	faults = fabric_faults(1);
	igt_assert_eq_u64(sysfs_u64(1, "fabric_refusals"), faults);
	igt_assert_eq(npa_peek(3, npa, &byte, 1), -ENODEV);
	igt_assert_eq_u64(fabric_faults(1), faults + 1);
	/* where an operator looks too */
	igt_assert_eq_u64(sysfs_u64(1, "fabric_refusals"), faults + 1);

	/* node 0 releases */
	gem_close(fd0, imp0);
	wait_peek_error(0, npa, ENODEV, VPOD_ASYNC_MS);
	peek_expect(2, npa, 81);
	gpu_expect(fd2, imp2, 0, SIZE, 81);

	/* the exporter frees its buffer */
	gem_close(fd1, exp);
	wait_peek_error(2, npa, ENODEV, VPOD_ASYNC_MS);
	wait_exporter_clean(1, VPOD_ASYNC_MS);
	gem_close(fd2, imp2);

	/* the range is reused for a new export, imported by node 2 only */
	exp2 = exported_buffer(fd1, SIZE, 82, &h2);
	imp2 = import_gem(fd2, h2, NULL);
	igt_assert_eq_u64(export_npa(h2), npa);
	peek_expect(2, npa, 82);
	igt_assert_eq(npa_peek(0, npa, &byte, 1), -ENODEV);
	igt_assert_eq(npa_peek(3, npa, &byte, 1), -ENODEV);

	/* node 0 imports it and resets */
	imp0 = import_gem(fd0, h2, NULL);
	peek_expect(0, npa, 82);
	set_control(0, "reset");
	wait_peek_error(0, npa, ENODEV, VPOD_FAULT_ASYNC_MS);
	wait_state(0, "active", VPOD_ASYNC_MS);
	peek_expect(2, npa, 82);

	/* node 2 leaves the virtual pod: shut out when the write returns */
	set_vpod(2, 1);
	igt_assert_eq(npa_peek(2, npa, &byte, 1), -ENODEV);
	igt_assert_eq_u64(count_of(1, C_GRANTS), 0);
	set_vpod(2, 0);
	gem_close(fd2, imp2);
	wait_count(2, C_IMPORTS, 0, VPOD_ASYNC_MS);

	/* node 2 imports again, and the exporter resets */
	imp2 = import_gem(fd2, h2, NULL);
	npa = export_npa(h2);
	peek_expect(2, npa, 82);
	set_control(1, "reset");
	wait_state(1, "active", VPOD_ASYNC_MS);
	igt_assert_eq(npa_peek(2, npa, &byte, 1), -ENODEV);
	igt_assert_eq(npa_peek(3, npa, &byte, 1), -ENODEV);
	gem_close(fd1, exp2);
	vpod_cleanup();
	wait_no_leaks(VPOD_ASYNC_MS);
}

/*
 * An importer that never hears its revocation (every NPA_REVOKE of the
 * exporter dropped) keeps its address; once the exporter gave up waiting
 * and ended the export, the fabric refuses it.
 */
static void test_fabric_revoke_dropped(void)
{
	int fd0 = vpod_open(0), fd1 = vpod_open(1);
	struct drm_amdgpu_ualink_handle h;
	uint64_t npa, faults;
	uint32_t exp;
	uint8_t byte;

	exp = exported_buffer(fd1, SIZE, 83, &h);
	import_gem(fd0, h, NULL);
	npa = export_npa(h);
	peek_expect(0, npa, 83);
	set_timeout(1, 300, 1);
	set_fault(1, "drop rate=1000000 types=0x40");	/* NPA_REVOKE */
	gem_close(fd1, exp);
	wait_count(1, C_EXPORTS, 0, VPOD_FAULT_ASYNC_MS);
	wait_exporter_clean(1, VPOD_FAULT_ASYNC_MS);
	faults = fabric_faults(1);
	igt_assert_eq(npa_peek(0, npa, &byte, 1), -ENODEV);
	igt_assert_eq_u64(fabric_faults(1), faults + 1);
	vpod_cleanup();
	wait_no_leaks(VPOD_FAULT_ASYNC_MS);
}

#define JOB_MS		10000

/*
 * Node 0 (X) runs a 10 s job on its import from node 1 (Y) when Y's owner
 * closes the export's file. The close returns at once; X's import dies at
 * once (new work and accesses fail); Y keeps its memory for X's job, and
 * releases it only when the job ended. Meanwhile node 2 keeps importing
 * from X and from Y, and X keeps reading another import from Y: nobody
 * waits for the job and no connection is reset (a reset would kill X's
 * other import). No bound is hit on either side.
 */
static void test_revoke_waits_for_job(void)
{
	int fd0 = vpod_open(0), fd1 = vpod_open(1), fd2 = vpod_open(2), fd1b;
	struct drm_amdgpu_ualink_handle hy, hx, hy2;
	uint64_t start, t, lat, worst = 0, total = 0, closed, released;
	uint64_t revoke_to, release_to;
	uint32_t imp, other, g;
	unsigned int n = 0;

	/* the importer's bound far above the job: the job decides */
	set_revoke_timeout(3 * JOB_MS);
	revoke_to = node_counter(0, "revoke_timeouts");
	release_to = node_counter(1, "release_timeouts");
	fd1b = vpod_open(1);
	exported_buffer(fd1b, SIZE, 91, &hy);
	exported_buffer(fd0, SIZE, 92, &hx);
	exported_buffer(fd1, SIZE, 93, &hy2);
	imp = import_gem(fd0, hy, NULL);
	other = import_gem(fd0, hy2, NULL);
	gpu_expect(fd0, imp, 0, SIZE, 91);

	start = vpod_now_ms();
	igt_assert_eq(gpu_job(fd0, imp, AMDGPU_UALINK_VPOD_JOB_START, JOB_MS), 0);
	igt_assert_eq(gpu_job(fd0, imp, AMDGPU_UALINK_VPOD_JOB_START, JOB_MS), -EBUSY);

	/* Y's owner goes: its close does not wait for X's job */
	vpod_close(fd1b);
	closed = vpod_now_ms() - start;
	igt_info("exporter's close took %llu ms with a %u ms job on the import\n",
		 (unsigned long long)closed, JOB_MS);
	igt_assert_lt_u64(closed, JOB_MS / 2);
	/* X's buffer is dead at once: no access gets through it */
	wait_access_error(fd0, imp, ENODEV, VPOD_ASYNC_MS);

	/*
	 * While the job runs: Y holds the memory for X; node 2 imports from
	 * X and from Y; X's other import from Y stays alive.
	 */
	do {
		/*
		 * Y's two exports stay pinned: X's grant on the first lives
		 * (checked before 9 s of the 10 s job, however slow a round)
		 */
		igt_assert_eq_u64(count_of(1, C_PINS), 2);
		t = vpod_now_ms();
		g = import_gem(fd2, hx, NULL);
		gpu_expect(fd2, g, 0, 4096, 92);
		gem_close(fd2, g);
		g = import_gem(fd2, hy2, NULL);
		gpu_expect(fd2, g, 0, 4096, 93);
		gem_close(fd2, g);
		lat = vpod_now_ms() - t;
		worst = lat > worst ? lat : worst;
		total += lat;
		n++;
		gpu_expect(fd0, other, 0, 4096, 93);
		vpod_sleep_ms(100);
	} while (vpod_now_ms() - start < JOB_MS - 1000);
	igt_info("%u rounds of two imports from X and Y during the job: mean %llu ms, worst %llu ms\n",
		 n, (unsigned long long)(total / n), (unsigned long long)worst);

	/* the job ends by itself: X releases, Y lets go */
	wait_count(1, C_PINS, 1, JOB_MS);
	released = vpod_now_ms() - start;
	igt_info("Y's grant to X went %llu ms after the job started\n",
		 (unsigned long long)released);
	igt_assert_lte_u64(JOB_MS, released);
	gpu_expect(fd0, other, 0, SIZE, 93);
	igt_assert_eq_u64(node_counter(0, "revoke_timeouts"), revoke_to);
	igt_assert_eq_u64(node_counter(1, "release_timeouts"), release_to);

	/* no new job on a dead import */
	igt_assert_eq(gpu_job(fd0, imp, AMDGPU_UALINK_VPOD_JOB_START, JOB_MS), -ENODEV);
	vpod_cleanup();
	wait_no_leaks(VPOD_ASYNC_MS);
}

/* A socket that receives the kernel's uevents (root only). */
static int uevent_socket(void)
{
	struct sockaddr_nl addr = { .nl_family = AF_NETLINK, .nl_groups = 1 };
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
			NETLINK_KOBJECT_UEVENT);

	igt_assert_f(fd >= 0, "uevent socket: %s\n", strerror(errno));
	igt_assert_eq(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	return fd;
}

/* Whether a uevent message (NUL-separated KEY=value) has @key=@value. */
static bool uevent_has(const char *msg, size_t len, const char *key,
		       const char *value)
{
	size_t klen = strlen(key), off;

	for (off = 0; off < len; off += strlen(msg + off) + 1)
		if (!strncmp(msg + off, key, klen) && msg[off + klen] == '=' &&
		    !strcmp(msg + off + klen + 1, value))
			return true;
	return false;
}

/*
 * Wait up to @ms for the change uevent of the device at @devpath naming
 * accel_state @state; false when none came.
 */
static bool wait_state_uevent(int sock, const char *devpath,
			      const char *state, unsigned int ms)
{
	uint64_t end = vpod_now_ms() + ms;
	char msg[8192];
	ssize_t len;

	for (;;) {
		struct pollfd p = { .fd = sock, .events = POLLIN };
		int64_t left = end - vpod_now_ms();

		if (left <= 0 || poll(&p, 1, left) <= 0)
			return false;
		len = recv(sock, msg, sizeof(msg) - 1, 0);
		if (len <= 0)
			continue;
		msg[len] = '\0';
		if (uevent_has(msg, len, "ACTION", "change") &&
		    uevent_has(msg, len, "DEVPATH", devpath) &&
		    uevent_has(msg, len, "UALINK_ACCEL_STATE", state))
			return true;
	}
}

/* Read accel_state from @fd (rewound), as poll() requires before it waits. */
static void read_state_fd(int fd, char *buf, size_t size)
{
	ssize_t len = pread(fd, buf, size - 1, 0);

	igt_assert_lt(0, len);
	buf[len] = '\0';
	if (buf[len - 1] == '\n')
		buf[len - 1] = '\0';
}

/*
 * Poll @fd until accel_state reads @want: each wake-up must come with a
 * change (a state between is fine, a wake-up for nothing is not).
 */
static void poll_state(int fd, const char *want)
{
	struct pollfd p = { .fd = fd, .events = POLLPRI | POLLERR };
	uint64_t end = vpod_now_ms() + VPOD_ASYNC_MS;
	char buf[32];

	for (;;) {
		int64_t left = end - vpod_now_ms();

		igt_assert_f(left > 0, "accel_state never read %s\n", want);
		igt_assert_eq(poll(&p, 1, left), 1);
		igt_assert(p.revents & POLLPRI);
		read_state_fd(fd, buf, sizeof(buf));
		if (!strcmp(buf, want))
			return;
	}
}

/*
 * A change of accel_state wakes its pollers and sends the device's change
 * uevent with the new value: offline, then online. Anchored by a poll that
 * sees nothing while the state stays, and by each event naming the state
 * the attribute then reads.
 */
static void test_state_notify(void)
{
	int sock = uevent_socket(), fd = sysfs_open(1, "accel_state");
	struct pollfd p = { .fd = fd, .events = POLLPRI | POLLERR };
	char devpath[512], buf[32];

	sysfs_devpath(1, devpath, sizeof(devpath));
	read_state_fd(fd, buf, sizeof(buf));
	igt_assert_f(!strcmp(buf, "ready"), "accel_state reads %s\n", buf);
	/* no change, no wake-up */
	igt_assert_eq(poll(&p, 1, 300), 0);

	set_control(1, "offline");
	poll_state(fd, "unconfigured");
	igt_assert_f(wait_state_uevent(sock, devpath, "unconfigured", VPOD_ASYNC_MS),
		     "no change uevent for %s going offline\n", devpath);

	set_control(1, "online");
	poll_state(fd, "ready");
	igt_assert_f(wait_state_uevent(sock, devpath, "ready", VPOD_ASYNC_MS),
		     "no change uevent for %s coming back\n", devpath);
	/*
	 * and quiet again once the last change was told: its uevent follows
	 * its wake-up of pollers (the same work), so that nothing is left to
	 * wake them once the read below has seen it
	 */
	read_state_fd(fd, buf, sizeof(buf));
	igt_assert_eq(poll(&p, 1, 300), 0);
	close(fd);
	close(sock);
	vpod_cleanup();
}

/* /dev/kmsg from now on: only lines logged after this call are read. */
static int kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	igt_assert_f(fd >= 0, "/dev/kmsg: %s\n", strerror(errno));
	igt_assert(lseek(fd, 0, SEEK_END) >= 0);
	return fd;
}

/*
 * Wait up to @timeout_ms for a kernel log line that contains @want, at
 * level @level or more urgent (KERN_INFO is 6, KERN_WARNING 4); one
 * read(2) of /dev/kmsg is one record, "level,seq,time,flags;text".
 */
static bool kmsg_wait(int fd, const char *want, int level, unsigned int timeout_ms)
{
	char rec[2048];
	unsigned int waited = 0;
	ssize_t n;

	for (;;) {
		n = read(fd, rec, sizeof(rec) - 1);
		if (n > 0) {
			rec[n] = '\0';
			if (strstr(rec, want) && (atoi(rec) & 7) <= level)
				return true;
			continue;
		}
		if (n < 0 && errno == EPIPE)	/* overwritten: read on */
			continue;
		igt_assert_f(n < 0 && errno == EAGAIN, "/dev/kmsg: %s\n",
			     strerror(errno));
		if (waited >= timeout_ms)
			return false;
		usleep(10 * 1000);
		waited += 10;
	}
}

/*
 * The kernel log tells an operator when a peer goes offline and comes
 * back, and when an accelerator resets and its peers see it: each line
 * read from /dev/kmsg after the event (the return only once the next
 * connection is up, not before).
 */
static void test_events_logged(void)
{
	int fd0 = vpod_open(0), fd1 = vpod_open(1), k;
	struct drm_amdgpu_ualink_handle h;
	uint32_t imp;

	/*
	 * A node logs at most 10 lines in 5 s (DEFAULT_RATELIMIT_BURST in
	 * DEFAULT_RATELIMIT_INTERVAL), and the subtests before this one
	 * reset and unplug nodes: let that interval pass, so that what this
	 * test asks fits in a fresh one.
	 */
	sleep(6);
	exported_buffer(fd1, SIZE, 79, &h);
	imp = import_gem(fd0, h, NULL);		/* 0 is connected to 1 */
	gpu_expect(fd0, imp, 0, SIZE, 79);

	k = kmsg_open();
	set_control(1, "offline");
	igt_assert_f(kmsg_wait(k, "amdgpu_ualink: accelerator 0: peer 1 offline", 6,
			       VPOD_ASYNC_MS), "no line for peer 1 offline\n");
	set_control(1, "online");
	wait_state(1, "active", VPOD_ASYNC_MS);
	/* the line comes with the next connection, which an import makes */
	igt_assert(!kmsg_wait(k, "amdgpu_ualink: accelerator 0: peer 1 back", 7, 0));
	gpu_expect(fd0, import_gem(fd0, h, NULL), 0, SIZE, 79);
	igt_assert_f(kmsg_wait(k, "amdgpu_ualink: accelerator 0: peer 1 back", 6,
			       VPOD_ASYNC_MS), "no line for peer 1 back\n");

	set_control(1, "reset");
	igt_assert_f(kmsg_wait(k, "amdgpu_ualink: accelerator 1: new generation (reset", 6,
			       VPOD_ASYNC_MS), "no line for 1's reset\n");
	igt_assert_f(kmsg_wait(k, "amdgpu_ualink: accelerator 0: peer 1 reset", 6,
			       VPOD_ASYNC_MS), "no line for peer 1 reset\n");
	wait_state(1, "active", VPOD_ASYNC_MS);
	close(k);
	vpod_cleanup();
	wait_no_leaks(VPOD_FAULT_ASYNC_MS);
}

igt_main
{
	igt_fixture
		vpod_init();

	igt_describe("closing the exporter's last GEM handle revokes every import");
	vpod_subtest("exporter-close-revokes")
		test_exporter_close_revokes();

	igt_describe("closing an import gives the exporter's grant and pin back");
	vpod_subtest("importer-close-releases")
		test_importer_close_releases();

	igt_describe("an importer's reset kills its imports; the exporter cleans up");
	vpod_subtest("importer-reset")
		test_importer_reset();

	igt_describe("an exporter's reset revokes its grants from every importer");
	vpod_subtest("exporter-reset")
		test_exporter_reset();

	igt_describe("an offline exporter's imports die; online again, imports work");
	vpod_subtest("peer-offline")
		test_peer_offline();

	igt_describe("accel_state changes wake its pollers and send a change uevent");
	vpod_subtest("state-notify")
		test_state_notify();

	igt_describe("the kernel log tells a peer offline, back, and a reset");
	vpod_subtest("events-logged")
		test_events_logged();

	igt_describe("importer offline: the exporter drops its grant, its accesses fault");
	vpod_subtest("importer-offline")
		test_importer_offline();

	igt_describe("importer's file then exporter's file closed at once, repeatedly");
	vpod_subtest("close-race-files")
		test_close_race(CLOSE_FILES);

	igt_describe("import's then export's GEM handle closed at once, repeatedly");
	vpod_subtest("close-race-handles")
		test_close_race(CLOSE_HANDLES);

	igt_describe("release, free, reuse, resets, vPod change: the fabric refuses");
	vpod_subtest("fabric-unreachable")
		test_fabric_unreachable();

	igt_describe("an importer that missed its revocation is refused by the fabric");
	vpod_subtest("fabric-revoke-dropped")
		test_fabric_revoke_dropped();

	igt_describe("a 10 s job on an import: the exporter's close is prompt, its memory kept till the job ends");
	vpod_subtest("revoke-waits-for-job")
		test_revoke_waits_for_job();

	/*
	 * Not a subtest: whatever ran, nothing may stay held once it is all
	 * closed; a leak fails the program (exit 98), which vm-test reports
	 * by the program's name.
	 */
	igt_fixture
		vpod_fini(VPOD_ASYNC_MS);
}
