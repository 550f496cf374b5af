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
#include <sys/stat.h>
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

/* Run @cmd as nobody, without any group; its exit status. */
static int run_nobody(const char *cmd)
{
	char line[1024];

	snprintf(line, sizeof(line),
		 "setpriv --reuid=65534 --regid=65534 --clear-groups sh -c '%s'", cmd);
	return run(line);
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
 * The example built against the installed libualink (tooling/lib-install.sh
 * installed it and built it against that copy through pkg-config), run
 * with the installed shared library: the same start-up as above.
 */
static void test_symheap_installed(void)
{
	char cmd[768], libdir[256] = "";
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s/pkg/libdir", tools());
	f = fopen(cmd, "r");
	igt_assert_f(f, "no installed libualink in %s/pkg\n", tools());
	igt_assert(fgets(libdir, sizeof(libdir), f));
	fclose(f);
	libdir[strcspn(libdir, "\n")] = '\0';
	/* the program needs the shared library, found there and only there */
	snprintf(cmd, sizeof(cmd), "%s/pkg/ualink_symheap 262144 2>&1", tools());
	igt_assert_neq(run(cmd), 0);
	snprintf(cmd, sizeof(cmd), "LD_LIBRARY_PATH=%s %s/pkg/ualink_symheap 262144 2>&1",
		 libdir, tools());
	igt_assert_eq(run(cmd), 0);
	igt_assert_f(strstr(out, "PASS: every rank read all"), "no PASS line\n");
	wait_no_leaks(VPOD_ASYNC_MS);
}

static void test_ualinkctl(void)
{
	const char *render = strrchr(vpod.path[1], '/') + 1;
	char cmd[512], handle[64], line[128], tmp[] = "/tmp/ualinkctl-igt.XXXXXX";
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
	/* the same under trace: its request recorded, then reported */
	snprintf(cmd, sizeof(cmd), "%s/ualinkctl trace %s/ualinkctl import %s %s 2>&1",
		 tools(), tools(), strrchr(vpod.path[0], '/') + 1, handle);
	igt_assert_eq(run(cmd), 0);
	igt_assert(strstr(out, "imported the buffer of accelerator 1 as GEM handle"));
	igt_assert(strstr(out, " amdgpu_ualink_import_request: "));
	/*
	 * trace-cmd fails for a user who may not trace: so does trace (its
	 * record in a directory that user may write)
	 */
	igt_assert(mkdtemp(tmp));
	igt_assert_eq(chmod(tmp, 01777), 0);
	snprintf(cmd, sizeof(cmd), "TMPDIR=%s %s/ualinkctl trace true 2>&1",
		 tmp, tools());
	igt_assert_eq(run_nobody(cmd), 1);
	igt_assert(strstr(out, "trace-cmd record failed"));
	igt_assert_eq(rmdir(tmp), 0);	/* and it left nothing there */

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
	snprintf(cmd, sizeof(cmd), "%s/ualinkctl --frobnicate list 2>&1", tools());
	igt_assert_eq(run(cmd), 2);
	/* sizes: negative, past 64 bits, with or without a suffix */
	for (i = 0; i < 4; i++) {
		static const char *const bad[] = {
			"-1", "17179869184G", "0x10000000000000000", "1T",
		};

		snprintf(cmd, sizeof(cmd), "%s/ualinkctl export %s %s 2>&1",
			 tools(), render, bad[i]);
		igt_assert_eq(run(cmd), 2);
		igt_assert(strstr(out, "not a size"));
	}
	igt_assert_eq_u64(count_of(1, C_EXPORTS), 0);

	snprintf(cmd, sizeof(cmd), "%s/ualinkctl --version", tools());
	igt_assert_eq(run(cmd), 0);
	igt_assert(!strncmp(out, "ualinkctl ", 10));
}

/*
 * ualinkctl list and show read sysfs alone: they work for a user who may
 * not open the device (anchored: that user's open fails), and --json
 * gives what jq reads back. Export refuses a driver other than the pod's.
 */
static void test_ualinkctl_json(void)
{
	const char *render = strrchr(vpod.path[1], '/') + 1;
	char cmd[512], line[128], vgem[32];
	mode_t mode[VPOD_MAX_ACCELS];
	struct stat st;
	int i, fd;

	igt_assert(vpod.n_drm <= VPOD_MAX_ACCELS);
	for (i = 0; i < vpod.n_drm; i++) {
		igt_assert_eq(stat(vpod.path[i], &st), 0);
		mode[i] = st.st_mode & 07777;
		igt_assert_eq(chmod(vpod.path[i], 0600), 0);
	}
	snprintf(cmd, sizeof(cmd), "exec 3<>%s", vpod.path[1]);
	igt_assert_neq(run_nobody(cmd), 0);

	snprintf(cmd, sizeof(cmd),
		 "out=$(%s/ualinkctl --json list) && printf %%s \"$out\" | jq -r \".[] | \\\"\\(.device) \\(.accel_id) \\(.accel_state)\\\"\"",
		 tools());
	igt_assert_eq(run_nobody(cmd), 0);
	for (i = 0; i < vpod.n_drm; i++) {
		snprintf(line, sizeof(line), "%s %d ready\n",
			 strrchr(vpod.path[i], '/') + 1, i);
		igt_assert_f(strstr(out, line), "no %s", line);
	}
	snprintf(cmd, sizeof(cmd),
		 "%s/ualinkctl --json show %s | jq -e \".accel_id == 1 and .accel_state == \\\"ready\\\" and (.exports | type) == \\\"number\\\" and .link_type == \\\"emulated\\\" and .ppod_size == %d and .bandwidth == \\\"unknown\\\" and (.timeouts | type) == \\\"number\\\" and (.fabric_refusals | type) == \\\"number\\\"\"",
		 tools(), render, vpod.n_accel);
	igt_assert_eq(run_nobody(cmd), 0);
	igt_assert(strstr(out, "true"));
	for (i = 0; i < vpod.n_drm; i++)
		igt_assert_eq(chmod(vpod.path[i], mode[i]), 0);

	snprintf(cmd, sizeof(cmd),
		 "%s/ualinkctl --json probe %s | jq -e \".batch_flags == [\\\"cloexec\\\", \\\"fds\\\", \\\"restart\\\"] and .batch_max == %d\"",
		 tools(), render, AMDGPU_UALINK_BATCH_MAX);
	igt_assert_eq(run(cmd), 0);

	fd = open_render("vgem", vgem, sizeof(vgem));
	igt_assert_f(fd >= 0, "no vgem render node\n");
	close(fd);
	snprintf(cmd, sizeof(cmd), "%s/ualinkctl export %s 64K 2>&1 </dev/null",
		 tools(), vgem);
	igt_assert_eq(run(cmd), 1);
	igt_assert(strstr(out, "export needs the emulated pod"));
	igt_assert(strstr(out, "the driver here is vgem"));
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

	igt_describe("the symmetric heap built against the installed libualink.so");
	vpod_subtest("symmetric-heap-installed")
		test_symheap_installed();

	igt_describe("ualinkctl: manual, list, show, export, import, errors");
	vpod_subtest("ualinkctl")
		test_ualinkctl();

	igt_describe("ualinkctl --json: list and show from sysfs alone, as a user who cannot open the device");
	vpod_subtest("ualinkctl-json")
		test_ualinkctl_json();

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
