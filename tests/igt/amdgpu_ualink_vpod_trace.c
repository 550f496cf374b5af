// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The amdgpu_ualink trace events, recorded with trace-cmd (as an amdgpu
 * developer would) around one export, its import and their end on the
 * emulated pod: every step of the protocol shows up, in order, naming the
 * right accelerators, handle, transaction and range.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "igt.h"
#include "vpod_lib.h"

IGT_TEST_DESCRIPTION("The UALink trace events, recorded with trace-cmd during an import.");

#define SIZE		(64 * 1024ull)
#define TRACE_CMD	"/usr/bin/trace-cmd"
#define EVENTS		"/sys/kernel/tracing/events/amdgpu_ualink"
#define TRACE_DAT	"ualink-trace.dat"
#define MAX_LINES	4096

static char *lines[MAX_LINES];
static int n_lines;

/* Run a shell command; its output goes to the log. */
static void run(const char *cmd)
{
	int ret = system(cmd);

	igt_assert_f(ret != -1 && WIFEXITED(ret) && !WEXITSTATUS(ret),
		     "'%s' failed (status %d)\n", cmd, ret);
}

/* trace-cmd report's lines, kept in order */
static void read_report(void)
{
	char line[1024];
	FILE *f;

	n_lines = 0;
	f = popen(TRACE_CMD " report -i " TRACE_DAT " 2>/dev/null", "r");
	igt_assert(f);
	while (fgets(line, sizeof(line), f) && n_lines < MAX_LINES)
		if (strstr(line, " amdgpu_ualink_"))
			lines[n_lines++] = strdup(line);
	igt_assert_eq(pclose(f), 0);
	igt_info("trace-cmd report: %d amdgpu_ualink events\n", n_lines);
}

/*
 * The first line from @from on of event @event with every field of @fields
 * ("key=value" words, space-separated) in it; its index, or -1.
 */
static int find(int from, const char *event, const char *fields)
{
	char ev[96], want[512], *save = NULL, *word;
	int i;

	snprintf(ev, sizeof(ev), " %s: ", event);
	for (i = from; i < n_lines; i++) {
		bool all = true;

		if (!strstr(lines[i], ev))
			continue;
		snprintf(want, sizeof(want), "%s", fields);
		for (word = strtok_r(want, " ", &save); word && all;
		     word = strtok_r(NULL, " ", &save)) {
			char padded[128];
			const char *at = strstr(lines[i], word);

			/* a whole field: "importer=1" is not in "importer=12" */
			snprintf(padded, sizeof(padded), "%s ", word);
			all = at && (strstr(lines[i], padded) ||
				     !strcmp(at + strlen(word), "\n"));
		}
		if (all)
			return i;
	}
	return -1;
}

/* Step @event with @fields must come after step *@at. */
static int expect_after(int *at, const char *event, const char *fields)
{
	int i = find(*at + 1, event, fields);
	int j;

	if (i < 0) {
		for (j = 0; j < n_lines; j++)
			igt_info("%s", lines[j]);
		igt_assert_f(false, "no %s with %s after line %d of the report\n",
			     event, fields, *at);
	}
	*at = i;
	return i;
}

static uint64_t field_u64(int line, const char *key)
{
	const char *at = strstr(lines[line], key);

	igt_assert_f(at, "no %s in: %s", key, lines[line]);
	return strtoull(at + strlen(key), NULL, 0);
}

/*
 * Node 0 imports a buffer of node 1 and lets it go; node 1 then ends the
 * export. The trace must show, in this order: the export; the import
 * request; NPA_REQ sent by 0 and received by 1 (same txn); the grant;
 * NPA_RSP sent by 1; then, in either order, NPA_RSP received by 0 (same
 * txn) and the import ready with the granted range; NPA_RELEASE; the
 * release and the shootdown of 0; the export's end.
 */
static void test_trace_import(void)
{
	char f[256], exp_h[64], imp_f[128];
	struct drm_amdgpu_ualink_handle h;
	int fd0 = vpod_open(0), fd1 = vpod_open(1);
	int at = -1, i, grant, recv;
	uint32_t buf, imp;
	struct stat st;

	igt_assert_f(stat(EVENTS, &st) == 0 || (run("mount -t tracefs nodev /sys/kernel/tracing"),
						 stat(EVENTS, &st) == 0),
		     "no %s: the kernel has no amdgpu_ualink trace events\n", EVENTS);
	igt_assert_f(access(TRACE_CMD, X_OK) == 0, "no %s (Debian's trace-cmd)\n",
		     TRACE_CMD);
	run(TRACE_CMD " reset > /dev/null");
	run(TRACE_CMD " start -e amdgpu_ualink > /dev/null");

	buf = exported_buffer(fd1, SIZE, 31, &h);
	imp = import_gem(fd0, h, NULL);
	gpu_expect(fd0, imp, 0, SIZE, 31);
	gem_close(fd0, imp);
	wait_count(1, C_GRANTS, 0, VPOD_ASYNC_MS);
	gem_close(fd1, buf);
	wait_no_leaks(VPOD_ASYNC_MS);

	run(TRACE_CMD " stop > /dev/null");
	run(TRACE_CMD " extract -o " TRACE_DAT " > /dev/null");
	run(TRACE_CMD " reset > /dev/null");
	read_report();

	snprintf(exp_h, sizeof(exp_h), "handle=0x%016" PRIx64, (uint64_t)h.lo);
	snprintf(f, sizeof(f), "accel=1 %s size=0x%llx", exp_h, SIZE);
	expect_after(&at, "amdgpu_ualink_export_create", f);
	snprintf(imp_f, sizeof(imp_f), "importer=0 exporter=1 %s", exp_h);
	expect_after(&at, "amdgpu_ualink_import_request", imp_f);

	/* the request, sent and received under one transaction number */
	i = expect_after(&at, "amdgpu_ualink_msg_send", "accel=0 peer=1 type=npa_req");
	snprintf(f, sizeof(f), "accel=1 peer=0 type=npa_req txn=%u",
		 (unsigned int)field_u64(i, "txn="));
	expect_after(&at, "amdgpu_ualink_msg_recv", f);
	snprintf(f, sizeof(f), "exporter=1 importer=0 %s", exp_h);
	grant = expect_after(&at, "amdgpu_ualink_grant", f);

	/* the answer, the same transaction */
	snprintf(f, sizeof(f), "accel=1 peer=0 type=npa_rsp txn=%u",
		 (unsigned int)field_u64(i, "txn="));
	expect_after(&at, "amdgpu_ualink_msg_send", f);
	/*
	 * Received by node 0's worker, and the range the exporter granted
	 * ready on the importing thread: both after the send, in either
	 * order, since msg_recv is traced once the connection layer took the
	 * answer, which wakes the importer (amdgpu_ualink_trace.h). What
	 * follows comes after the import returned, not after the receipt.
	 */
	recv = at;
	snprintf(f, sizeof(f), "accel=0 peer=1 type=npa_rsp txn=%u",
		 (unsigned int)field_u64(i, "txn="));
	expect_after(&recv, "amdgpu_ualink_msg_recv", f);
	snprintf(f, sizeof(f), "%s npa=0x%" PRIx64 " size=0x%" PRIx64 " error=0",
		 imp_f, field_u64(grant, "npa="), field_u64(grant, "size="));
	expect_after(&at, "amdgpu_ualink_import_ready", f);

	/* the last reference: the range goes back, and node 0 is shot down */
	expect_after(&at, "amdgpu_ualink_msg_send", "accel=0 peer=1 type=npa_release");
	snprintf(f, sizeof(f), "exporter=1 importer=0 %s", exp_h);
	expect_after(&at, "amdgpu_ualink_release", f);
	expect_after(&at, "amdgpu_ualink_shootdown", "exporter=1 importer=0");
	snprintf(f, sizeof(f), "accel=1 %s", exp_h);
	expect_after(&at, "amdgpu_ualink_export_destroy", f);

	/* nothing went wrong on the way */
	igt_assert_eq(find(0, "amdgpu_ualink_msg_drop", ""), -1);
	igt_assert_eq(find(0, "amdgpu_ualink_import_failed", ""), -1);
	igt_assert_eq(find(0, "amdgpu_ualink_import_dead", ""), -1);
	for (i = 0; i < n_lines; i++)
		free(lines[i]);
	unlink(TRACE_DAT);
}

igt_main
{
	igt_fixture
		vpod_init();

	igt_describe("export, import and their end, as trace-cmd records them");
	vpod_subtest("trace-import") {
		igt_set_timeout(300, "trace-import");
		test_trace_import();
	}

	/*
	 * Not a subtest: whatever ran, nothing may stay held once it is all
	 * closed; a leak fails the program (exit 98), which vm-test reports
	 * by the program's name.
	 */
	igt_fixture
		vpod_fini(VPOD_ASYNC_MS);
}
