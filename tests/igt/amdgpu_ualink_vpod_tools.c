// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The userspace in tools/ualink/ against the emulated pod: the
 * symmetric-heap example (every rank reads every peer's write through the
 * fabric) and ualinkctl (list, show, export, import, and its errors). The
 * harness builds them and names their directory in UALINK_TOOLS.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xf86drm.h>

#include "igt.h"
#include "vpod_lib.h"

IGT_TEST_DESCRIPTION("libualink, ualinkctl and the symmetric-heap example on the emulated pod.");

static char out[1 << 16];

/* Run @cmd (a shell command line); its output in out[], its exit status. */
static int run(const char *cmd)
{
	size_t len = 0;
	FILE *f;
	int st;

	igt_info("$ %s\n", cmd);
	f = popen(cmd, "r");
	igt_assert(f);
	while (len + 1 < sizeof(out) && fgets(out + len, sizeof(out) - len, f))
		len += strlen(out + len);
	out[len] = '\0';
	st = pclose(f);
	igt_info("%s", out);
	igt_assert(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static const char *tools(void)
{
	const char *dir = getenv("UALINK_TOOLS");

	igt_assert_f(dir && *dir, "UALINK_TOOLS does not name the tools' directory\n");
	return dir;
}

static void test_symheap(void)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "%s/ualink_symheap 262144 2>&1", tools());
	igt_assert_eq(run(cmd), 0);
	igt_assert_f(strstr(out, "PASS: every rank read all"), "no PASS line\n");
	snprintf(cmd, sizeof(cmd), "symheap: %d ranks", vpod.n_drm);
	igt_assert_f(strstr(out, cmd), "not one rank per accelerator\n");
	wait_no_leaks(VPOD_ASYNC_MS);
}

static void test_ualinkctl(void)
{
	const char *render = strrchr(vpod.path[1], '/') + 1;
	char cmd[512], handle[64], line[128];
	int i, to_child[2];
	FILE *exp;

	snprintf(cmd, sizeof(cmd), "%s/ualinkctl --help", tools());
	igt_assert_eq(run(cmd), 0);
	igt_assert(strstr(out, "SYNOPSIS") && strstr(out, "EXIT STATUS"));

	/* one line per accelerator, ready */
	snprintf(cmd, sizeof(cmd), "%s/ualinkctl list", tools());
	igt_assert_eq(run(cmd), 0);
	for (i = 0; i < vpod.n_drm; i++) {
		snprintf(line, sizeof(line), "%-12s %5d ", strrchr(vpod.path[i], '/') + 1, i);
		igt_assert_f(strstr(out, line), "no line for accelerator %d\n", i);
	}
	igt_assert_eq(strstr(out, " ready ") != NULL, true);

	snprintf(cmd, sizeof(cmd), "%s/ualinkctl show %s", tools(), render);
	igt_assert_eq(run(cmd), 0);
	igt_assert(strstr(out, "accel_state         ready\n"));
	igt_assert(strstr(out, "accel_id            1\n"));

	/* export on node 1, held by a ualinkctl that waits on its stdin */
	igt_assert(pipe(to_child) == 0);
	/* ualinkctl gets the read end as stdin; only we hold the write end */
	igt_assert(fcntl(to_child[1], F_SETFD, FD_CLOEXEC) == 0);
	snprintf(cmd, sizeof(cmd), "%s/ualinkctl export %s 64K <&%d", tools(),
		 render, to_child[0]);
	exp = popen(cmd, "r");
	igt_assert(exp);
	close(to_child[0]);
	igt_assert(fgets(handle, sizeof(handle), exp));
	handle[strcspn(handle, "\n")] = '\0';
	igt_info("exported: %s\n", handle);
	igt_assert_eq(strlen(handle), 32);
	igt_assert_eq_u64(count_of(1, C_EXPORTS), 1);

	snprintf(cmd, sizeof(cmd), "%s/ualinkctl import %s %s",
		 tools(), strrchr(vpod.path[0], '/') + 1, handle);
	igt_assert_eq(run(cmd), 0);
	igt_assert(strstr(out, "imported the buffer of accelerator 1 as GEM handle"));

	/* the export ends with ualinkctl; then the handle is unknown */
	close(to_child[1]);
	igt_assert_eq(pclose(exp), 0);
	wait_no_leaks(VPOD_ASYNC_MS);
	snprintf(cmd, sizeof(cmd), "%s/ualinkctl import %s %s 2>&1",
		 tools(), strrchr(vpod.path[0], '/') + 1, handle);
	igt_assert_eq(run(cmd), 1);
	igt_assert(strstr(out, "unknown GEM handle or UALink handle"));

	/* usage errors */
	snprintf(cmd, sizeof(cmd), "%s/ualinkctl import %s nothex 2>&1", tools(), render);
	igt_assert_eq(run(cmd), 2);
	snprintf(cmd, sizeof(cmd), "%s/ualinkctl frobnicate 2>&1", tools());
	igt_assert_eq(run(cmd), 2);
}

/* The first render node whose driver is @driver, its name in @name; or -1. */
static int open_render(const char *driver, char *name, size_t size)
{
	char path[32];
	int i, fd;

	for (i = 128; i < 256; i++) {
		drmVersionPtr v;
		bool match;

		snprintf(path, sizeof(path), "/dev/dri/renderD%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		v = drmGetVersion(fd);
		match = v && !strcmp(v->name, driver);
		drmFreeVersion(v);
		if (match) {
			snprintf(name, size, "renderD%d", i);
			return fd;
		}
		close(fd);
	}
	return -1;
}

/*
 * Discovery, through libualink and ualinkctl: the emulated pod's node has
 * the ioctl and lists what it knows, and what it lists works; vgem's, a
 * driver without the ioctl, answers EINVAL to the ioctl itself, which the
 * probe tells apart as ENOTTY.
 */
static void test_probe(void)
{
	struct drm_amdgpu_ualink args = { .op = AMDGPU_UALINK_OP_INFO };
	const char *render = strrchr(vpod.path[1], '/') + 1;
	struct drm_amdgpu_ualink_info info;
	char vgem[32], cmd[512];
	int fd;

	fd = vpod_open(1);
	igt_assert_eq(ualink_probe(fd, &info), 0);
	igt_assert_eq_u32(info.accel_id, 1);
	igt_assert_eq_u32(info.state, AMDGPU_UALINK_STATE_ACTIVE);
	igt_assert_eq_u32(info.ops, 1u << AMDGPU_UALINK_OP_INFO |
				    1u << AMDGPU_UALINK_OP_EXPORT |
				    1u << AMDGPU_UALINK_OP_IMPORT |
				    1u << AMDGPU_UALINK_OP_IMPORT_BATCH);
	igt_assert_eq_u32(info.import_flags, AMDGPU_UALINK_IMPORT_CLOEXEC);
	igt_assert_eq_u32(info.batch_flags, AMDGPU_UALINK_IMPORT_CLOEXEC |
					    AMDGPU_UALINK_IMPORT_FDS |
					    AMDGPU_UALINK_IMPORT_RESTART);
	igt_assert_eq_u32(info.batch_max, AMDGPU_UALINK_BATCH_MAX);
	vpod_close(fd);
	snprintf(cmd, sizeof(cmd), "%s/ualinkctl probe %s 2>&1", tools(), render);
	igt_assert_eq(run(cmd), 0);
	igt_assert(strstr(out, "ops                 info export import import-batch\n"));
	igt_assert(strstr(out, "batch_flags         cloexec fds restart\n"));

	fd = open_render("vgem", vgem, sizeof(vgem));
	igt_assert_f(fd >= 0, "no vgem render node\n");
	igt_assert_eq(ioctl(fd, DRM_IOCTL_AMDGPU_UALINK, &args), -1);
	igt_assert_eq(errno, EINVAL);
	igt_assert_eq(ualink_probe(fd, &info), -ENOTTY);
	close(fd);
	snprintf(cmd, sizeof(cmd), "%s/ualinkctl probe %s 2>&1", tools(), vgem);
	igt_assert_eq(run(cmd), 1);
	igt_assert(strstr(out, "the driver has no UALink ioctl"));
}

igt_main
{
	igt_fixture
		vpod_init();

	igt_describe("N processes start a symmetric heap: export, all-gather, batch import, write, verify");
	vpod_subtest("symmetric-heap")
		test_symheap();

	igt_describe("ualinkctl: manual, list, show, export, import, errors");
	vpod_subtest("ualinkctl")
		test_ualinkctl();

	igt_describe("discovery: the pod's node lists what it knows, vgem's has no ioctl");
	vpod_subtest("probe")
		test_probe();

	/*
	 * Not a subtest: whatever ran, nothing may stay held once it is all
	 * closed; a leak fails the program (exit 98), which vm-test reports
	 * by the program's name.
	 */
	igt_fixture
		vpod_fini(VPOD_ASYNC_MS);
}
