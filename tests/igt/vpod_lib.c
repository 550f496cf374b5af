// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Helpers of the IGT tests of the emulated UALink pod; see vpod_lib.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <xf86drm.h>

#include "vpod_lib.h"

struct vpod vpod;

const char *const vpod_count_names[C_NUM] = {
	[C_EXPORTS] = "exports",
	[C_GRANTS] = "grants",
	[C_PINS] = "pins",
	[C_IMPORTS] = "imports",
	[C_NPA_BYTES] = "npa_bytes",
	[C_PT_TABLES] = "pt_tables",
	[C_TLB_ENTRIES] = "tlb_entries",
};

/* fds to close and settings to restore in vpod_cleanup() */
#define MAX_TRACKED 4096
static int tracked[MAX_TRACKED];
static int n_tracked;
static bool fault_dirty[VPOD_MAX_ACCELS];	/* fault rules, refuse_access, window_fill, pin_hold */
static bool timeout_dirty[VPOD_MAX_ACCELS];
static bool vpod_dirty[VPOD_MAX_ACCELS];
static bool offline_dirty[VPOD_MAX_ACCELS];
static bool reset_dirty[VPOD_MAX_ACCELS];
/* left resetting by "reset-begin": the clean-up writes "reset-end" */
static bool reset_held[VPOD_MAX_ACCELS];
static bool initialised;

/* time */

uint64_t vpod_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void vpod_sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* debugfs */

/* The contents of @path, NUL-terminated: bytes read or -errno. */
static int file_read(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len + 1 < size) {
		ssize_t r = read(fd, buf + len, size - 1 - len);

		if (r < 0) {
			int err = -errno;

			close(fd);
			return err;
		}
		if (!r)
			break;
		len += r;
	}
	buf[len] = '\0';
	close(fd);
	return len;
}

int dbg_read(const char *rel, char *buf, size_t size)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", VPOD_DEBUGFS, rel);
	return file_read(path, buf, size);
}

int sysfs_read(unsigned int id, const char *attr, char *buf, size_t size)
{
	const char *render = strrchr(vpod.path[id], '/');
	char path[256];
	int ret;

	igt_assert_f(render, "accelerator %u has no render node\n", id);
	snprintf(path, sizeof(path), "/sys/class/drm%s/device/ualink/%s",
		 render, attr);
	ret = file_read(path, buf, size);
	if (ret > 0 && buf[ret - 1] == '\n')
		buf[--ret] = '\0';
	return ret;
}

/* The path of ualink/@attr of accelerator @id's device, in @buf. */
static void sysfs_path(unsigned int id, const char *attr, char *buf,
		       size_t size)
{
	const char *render = strrchr(vpod.path[id], '/');

	igt_assert_f(render, "accelerator %u has no render node\n", id);
	snprintf(buf, size, "/sys/class/drm%s/device/ualink/%s", render, attr);
}

int sysfs_open(unsigned int id, const char *attr)
{
	char path[256];
	int fd;

	sysfs_path(id, attr, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	igt_assert_f(fd >= 0, "%s: %s\n", path, strerror(errno));
	return fd;
}

void sysfs_devpath(unsigned int id, char *buf, size_t size)
{
	char path[256], real[PATH_MAX];

	sysfs_path(id, "..", path, sizeof(path));
	igt_assert_f(realpath(path, real), "%s: %s\n", path, strerror(errno));
	igt_assert(!strncmp(real, "/sys/", 5));
	snprintf(buf, size, "%s", real + 4);	/* as DEVPATH: from /devices */
}

void expect_sysfs(unsigned int id, const char *attr, const char *want)
{
	char buf[8192];
	int ret = sysfs_read(id, attr, buf, sizeof(buf));

	igt_assert_f(ret >= 0, "accelerator %u: ualink/%s: %s\n", id, attr,
		     strerror(-ret));
	igt_assert_f(!strcmp(buf, want),
		     "accelerator %u: ualink/%s reads \"%s\", not \"%s\"\n",
		     id, attr, buf, want);
}

int dbg_write(const char *rel, const char *text)
{
	size_t len = strlen(text);
	char path[256];
	ssize_t w;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", VPOD_DEBUGFS, rel);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	w = write(fd, text, len);
	if (w < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	close(fd);
	return (size_t)w == len ? 0 : -EIO;
}

static int node_vwrite(unsigned int id, const char *file, const char *fmt,
		       va_list ap)
{
	char rel[64], text[256];

	snprintf(rel, sizeof(rel), "node%u/%s", id, file);
	vsnprintf(text, sizeof(text) - 1, fmt, ap);
	strcat(text, "\n");
	return dbg_write(rel, text);
}

/* like node_write() but returns 0 or -errno, for the clean-up */
static int node_try_write(unsigned int id, const char *file,
			  const char *fmt, ...) igt_printf_fmt(3, 4);
static int node_try_write(unsigned int id, const char *file,
			  const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = node_vwrite(id, file, fmt, ap);
	va_end(ap);
	return ret;
}

void node_write(unsigned int id, const char *file, const char *fmt, ...)
{
	char text[256];
	va_list ap;
	int ret;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	ret = node_try_write(id, file, "%s", text);
	igt_assert_f(ret == 0, "writing \"%s\" to node%u/%s: %s\n", text, id,
		     file, strerror(-ret));
}

void node_dump(unsigned int id)
{
	static const char *const files[] = { "counts", "state", "fault" };
	static char buf[65536];
	char rel[64];
	unsigned int i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(rel, sizeof(rel), "node%u/%s", id, files[i]);
		if (dbg_read(rel, buf, sizeof(buf)) >= 0)
			igt_info("--- node%u/%s ---\n%s", id, files[i], buf);
	}
}

void vpod_read_nodes(struct vpod_accel *accel, int *n)
{
	static char buf[1 << 17];
	char *line, *save = NULL;
	int ret;

	ret = dbg_read("nodes", buf, sizeof(buf));
	igt_assert_f(ret >= 0, "reading %s/nodes: %s\n", VPOD_DEBUGFS,
		     strerror(-ret));
	*n = 0;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		struct vpod_accel a = {};

		igt_assert_f(sscanf(line, "%u %u %15s %31s", &a.id, &a.vpod,
				    a.state, a.drm) == 4,
			     "bad line in nodes: \"%s\"\n", line);
		igt_assert_f(a.id < VPOD_MAX_ACCELS && *n < VPOD_MAX_ACCELS,
			     "bad line in nodes: \"%s\"\n", line);
		accel[(*n)++] = a;
	}
}

const struct vpod_accel *accel_find(const struct vpod_accel *a, int n,
				    unsigned int id)
{
	int i;

	for (i = 0; i < n; i++)
		if (a[i].id == id)
			return &a[i];
	return NULL;
}

static void read_fabric_heaps(void)
{
	static char buf[1 << 17];
	char *line, *save = NULL;
	int ret;

	ret = dbg_read("handles", buf, sizeof(buf));
	igt_assert_f(ret >= 0, "reading %s/handles: %s\n", VPOD_DEBUGFS,
		     strerror(-ret));
	vpod.n_fabric = 0;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		struct vpod_fabric_heap f = {};
		unsigned long long lo, hi;

		igt_assert_f(sscanf(line, "%u 0x%llx 0x%llx", &f.id, &lo,
				    &hi) == 3,
			     "bad line in handles: \"%s\"\n", line);
		igt_assert(vpod.n_fabric < VPOD_MAX_ACCELS);
		f.handle.lo = lo;
		f.handle.hi = hi;
		vpod.fabric[vpod.n_fabric++] = f;
	}
}

void counts_read(unsigned int id, struct vpod_counts *c)
{
	char rel[64], buf[4096], *line, *save = NULL;
	bool seen[C_NUM] = {};
	int ret, i;

	snprintf(rel, sizeof(rel), "node%u/counts", id);
	ret = dbg_read(rel, buf, sizeof(buf));
	igt_assert_f(ret >= 0, "reading %s: %s\n", rel, strerror(-ret));
	memset(c, 0, sizeof(*c));
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long value;
		char key[64];

		if (sscanf(line, "%63s %llu", key, &value) != 2)
			continue;
		for (i = 0; i < C_NUM; i++) {
			if (!strcmp(key, vpod_count_names[i])) {
				c->v[i] = value;
				seen[i] = true;
			}
		}
	}
	for (i = 0; i < C_NUM; i++)
		igt_assert_f(seen[i], "%s has no line \"%s <value>\"\n", rel,
			     vpod_count_names[i]);
}

uint64_t count_of(unsigned int id, enum vpod_count which)
{
	struct vpod_counts c;

	counts_read(id, &c);
	return c.v[which];
}

void wait_count(unsigned int id, enum vpod_count which, uint64_t value,
		unsigned int timeout_ms)
{
	uint64_t deadline = vpod_now_ms() + timeout_ms, now;

	for (;;) {
		now = count_of(id, which);
		if (now == value)
			return;
		if (vpod_now_ms() > deadline)
			break;
		vpod_sleep_ms(20);
	}
	node_dump(id);
	igt_assert_f(false, "node%u: %s is %llu, not %llu, after %u ms\n", id,
		     vpod_count_names[which], (unsigned long long)now,
		     (unsigned long long)value, timeout_ms);
}

static bool is_fabric_only(const struct vpod_accel *a)
{
	return !strcmp(a->drm, "-");
}

uint64_t node_counter(unsigned int id, const char *name)
{
	char rel[64], buf[4096], key[64], *line;
	unsigned long long value;

	snprintf(rel, sizeof(rel), "node%u/counts", id);
	snprintf(key, sizeof(key), "\n%s ", name);
	igt_assert_lte(0, dbg_read(rel, buf, sizeof(buf)));
	line = strstr(buf, key);
	igt_assert_f(line && sscanf(line + strlen(key), "%llu", &value) == 1,
		     "%s has no %s line\n", rel, name);
	return value;
}

uint64_t fabric_faults(unsigned int id)
{
	return node_counter(id, "fabric_faults");
}

uint64_t export_npa(struct drm_amdgpu_ualink_handle h)
{
	static char buf[65536];
	unsigned long long npa = 0;
	char rel[64], want[32], *line;

	snprintf(rel, sizeof(rel), "node%u/state", handle_accel(h));
	igt_assert_lte(0, dbg_read(rel, buf, sizeof(buf)));
	snprintf(want, sizeof(want), "export ...%08x ", (uint32_t)h.hi);
	line = strstr(buf, want);
	if (!line)
		return 0;
	line = strchr(line, '\n');
	if (line && sscanf(line + 1, "  npa %llx", &npa) != 1)
		npa = 0;
	return npa;
}

int npa_peek(unsigned int accel, uint64_t npa, void *buf, size_t n)
{
	char path[256], cmd[64];
	ssize_t r;
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/node%u/npa", VPOD_DEBUGFS, accel);
	fd = open(path, O_RDWR | O_CLOEXEC);
	igt_assert_f(fd >= 0, "opening %s: %s\n", path, strerror(errno));
	snprintf(cmd, sizeof(cmd), "%#llx %zu", (unsigned long long)npa, n);
	if (write(fd, cmd, strlen(cmd)) < 0)
		ret = -errno;
	if (!ret) {
		r = read(fd, buf, n);
		igt_assert_f(r == (ssize_t)n, "reading %s: %zd of %zu bytes\n",
			     path, r, n);
	}
	close(fd);
	return ret;
}

void wait_peek_error(unsigned int accel, uint64_t npa, int err,
		     unsigned int timeout_ms)
{
	uint64_t deadline = vpod_now_ms() + timeout_ms;
	uint32_t word;
	int ret;

	for (;;) {
		ret = npa_peek(accel, npa, &word, sizeof(word));
		if (ret == -err)
			return;
		igt_assert_f(ret == 0, "accelerator %u's read of NPA %#llx failed with %s while waiting for %s\n",
			     accel, (unsigned long long)npa, strerror(-ret), strerror(err));
		if (vpod_now_ms() > deadline)
			break;
		vpod_sleep_ms(20);
	}
	igt_assert_f(false, "accelerator %u still reads NPA %#llx %u ms later, expected %s\n",
		     accel, (unsigned long long)npa, timeout_ms, strerror(err));
}

/* Does node @a hold more than its baseline? */
static bool leaks(const struct vpod_accel *a, const struct vpod_counts *c)
{
	int i;

	for (i = 0; i < C_NUM; i++) {
		uint64_t expect = 0;

		/* a fabric-only node keeps its heap exported from load on */
		if (is_fabric_only(a) && (i == C_EXPORTS || i == C_PINS))
			expect = vpod.baseline[a->id].v[i];
		if (c->v[i] != expect)
			return true;
	}
	return false;
}

void wait_no_leaks(unsigned int timeout_ms)
{
	uint64_t deadline = vpod_now_ms() + timeout_ms;
	struct vpod_counts c;
	int i, bad;

	for (;;) {
		bad = -1;
		for (i = 0; i < vpod.n_accel && bad < 0; i++) {
			counts_read(vpod.accel[i].id, &c);
			if (leaks(&vpod.accel[i], &c))
				bad = i;
		}
		if (bad < 0)
			return;
		if (vpod_now_ms() > deadline)
			break;
		vpod_sleep_ms(50);
	}
	for (i = 0; i < vpod.n_accel; i++) {
		counts_read(vpod.accel[i].id, &c);
		if (leaks(&vpod.accel[i], &c))
			node_dump(vpod.accel[i].id);
	}
	igt_assert_f(false,
		     "node%u still holds references %u ms after everything was closed\n",
		     vpod.accel[bad].id, timeout_ms);
}

void vpod_fini(unsigned int timeout_ms)
{
	vpod_cleanup();
	wait_no_leaks(timeout_ms);
}

void wait_state(unsigned int id, const char *state, unsigned int timeout_ms)
{
	static struct vpod_accel accel[VPOD_MAX_ACCELS];
	uint64_t deadline = vpod_now_ms() + timeout_ms;
	const struct vpod_accel *a;
	int n;

	for (;;) {
		vpod_read_nodes(accel, &n);
		a = accel_find(accel, n, id);
		igt_assert_f(a, "node %u is missing from nodes\n", id);
		if (!strcmp(a->state, state))
			return;
		if (vpod_now_ms() > deadline)
			break;
		vpod_sleep_ms(20);
	}
	node_dump(id);
	igt_assert_f(false, "node%u is %s, not %s, after %u ms\n", id,
		     a->state, state, timeout_ms);
}

/* settings */

void set_fault(unsigned int id, const char *rule)
{
	fault_dirty[id] = true;
	node_write(id, "fault", "%s", rule);
}

void set_refuse_access(unsigned int id, unsigned int n)
{
	fault_dirty[id] = true;
	node_write(id, "refuse_access", "%u", n);
}

void set_pin_hold(unsigned int id, bool hold)
{
	fault_dirty[id] = true;
	node_write(id, "pin_hold", "%d", hold);
}

unsigned int pin_waiters(unsigned int id)
{
	char rel[32], buf[64];
	unsigned int hold, n;

	snprintf(rel, sizeof(rel), "node%u/pin_hold", id);
	igt_assert_lt(0, dbg_read(rel, buf, sizeof(buf)));
	igt_assert_eq(sscanf(buf, "%u %u", &hold, &n), 2);
	return n;
}

void set_window_full(unsigned int id)
{
	fault_dirty[id] = true;
	node_write(id, "window_fill", "fill");
}

void clear_faults(void)
{
	unsigned int id;

	for (id = 0; id < VPOD_MAX_ACCELS; id++) {
		if (!fault_dirty[id])
			continue;
		node_write(id, "fault", "clear");
		node_write(id, "refuse_access", "0");
		node_write(id, "window_fill", "clear");
		node_write(id, "pin_hold", "0");
		fault_dirty[id] = false;
	}
}

void set_timeout(unsigned int id, unsigned int ms, unsigned int retries)
{
	timeout_dirty[id] = true;
	node_write(id, "timeout", "%u %u", ms, retries);
}

void set_vpod(unsigned int id, unsigned int vpod_nr)
{
	vpod_dirty[id] = true;
	node_write(id, "vpod", "%u", vpod_nr);
}

void set_control(unsigned int id, const char *what)
{
	bool offline = !strcmp(what, "offline"), online = !strcmp(what, "online");

	if (offline)
		offline_dirty[id] = true;
	else if (!online)
		reset_dirty[id] = true;
	if (!strcmp(what, "reset-begin"))
		reset_held[id] = true;
	node_write(id, "control", "%s", what);
	if (online)
		offline_dirty[id] = false;
	if (!strcmp(what, "reset-end"))
		reset_held[id] = false;
}

void vpod_mark_dirty(unsigned int id)
{
	fault_dirty[id] = timeout_dirty[id] = vpod_dirty[id] = true;
	reset_dirty[id] = offline_dirty[id] = true;
}

/* fds and clean-up */

void vpod_track_fd(int fd)
{
	igt_assert(fd >= 0);
	igt_assert(n_tracked < MAX_TRACKED);
	tracked[n_tracked++] = fd;
}

void vpod_close(int fd)
{
	int i;

	for (i = 0; i < n_tracked; i++) {
		if (tracked[i] == fd) {
			tracked[i] = tracked[--n_tracked];
			break;
		}
	}
	igt_assert_eq(close(fd), 0);
}

int vpod_open(unsigned int accel_id)
{
	int fd;

	igt_assert_f(accel_id < (unsigned int)vpod.n_drm && vpod.path[accel_id][0],
		     "no DRM node with accelerator ID %u\n", accel_id);
	fd = open(vpod.path[accel_id], O_RDWR | O_CLOEXEC);
	igt_assert_f(fd >= 0, "open %s: %s\n", vpod.path[accel_id],
		     strerror(errno));
	vpod_track_fd(fd);
	return fd;
}

/* Reports a clean-up step that failed; counts it in *@failed. */
static void warn_on(int ret, unsigned int id, const char *what, int *failed)
{
	if (!ret)
		return;
	igt_warn("clean-up: node%u: %s: %s\n", id, what, strerror(-ret));
	(*failed)++;
}

/* Is node @id active? Without asserting: also called from the exit handler. */
static bool node_active(unsigned int id)
{
	static char buf[1 << 17];
	char *line, *save = NULL;

	if (dbg_read("nodes", buf, sizeof(buf)) < 0)
		return false;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned int nid, nr;
		char state[16];

		if (sscanf(line, "%u %u %15s", &nid, &nr, state) == 3 &&
		    nid == id)
			return !strcmp(state, "active");
	}
	return false;
}

/*
 * Faults and timeouts first, so that the releases of the closes below go
 * over a sound fabric; then the fds, which close every GEM handle and
 * import the subtest made. A step that fails, or a node that does not come
 * back to active, fails the subtest it runs in (a later subtest would
 * otherwise run on a pod that is not in its initial state); from the exit
 * handler, where nothing can fail any more, it warns, and the harness
 * checks the pod's state once the programs are done.
 */
#define CORE_PARAMS	"/sys/module/amdgpu_ualink/parameters/"

/* the core's parameters tests change, and their values before, 0 if untouched */
static const char *const core_params[] = { "revoke_timeout_ms", "import_quota" };
#define N_CORE_PARAMS	(sizeof(core_params) / sizeof(core_params[0]))
static unsigned int core_saved[N_CORE_PARAMS];

static int param_write(const char *path, unsigned int value)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -errno;
	ret = fprintf(f, "%u\n", value) < 0 ? -EIO : 0;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

static void set_core_param(unsigned int i, unsigned int value)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), CORE_PARAMS "%s", core_params[i]);
	if (!core_saved[i]) {
		f = fopen(path, "r");
		igt_assert_f(f, "%s: %s\n", path, strerror(errno));
		igt_assert_eq(fscanf(f, "%u", &core_saved[i]), 1);
		fclose(f);
		igt_assert_lt(0, core_saved[i]);
	}
	igt_assert_eq(param_write(path, value), 0);
}

void set_revoke_timeout(unsigned int ms)
{
	set_core_param(0, ms);
}

void set_import_quota(unsigned int n)
{
	set_core_param(1, n);
}

static void cleanup(bool in_subtest)
{
	unsigned int id;
	int failed = 0;

	if (!initialised)
		return;
	if (in_subtest)
		igt_reset_timeout();
	for (id = 0; id < N_CORE_PARAMS; id++) {
		char path[128];

		if (!core_saved[id])
			continue;
		snprintf(path, sizeof(path), CORE_PARAMS "%s", core_params[id]);
		warn_on(param_write(path, core_saved[id]), 0, core_params[id],
			&failed);
		core_saved[id] = 0;
	}
	for (id = 0; id < VPOD_MAX_ACCELS; id++) {
		if (fault_dirty[id]) {
			warn_on(node_try_write(id, "fault", "clear"), id,
				"fault clear", &failed);
			warn_on(node_try_write(id, "refuse_access", "0"), id,
				"refuse_access 0", &failed);
			warn_on(node_try_write(id, "window_fill", "clear"), id,
				"window_fill clear", &failed);
			warn_on(node_try_write(id, "pin_hold", "0"), id,
				"pin_hold 0", &failed);
		}
		if (timeout_dirty[id])
			warn_on(node_try_write(id, "timeout", "%s",
					       VPOD_TIMEOUT_DEFAULT),
				id, "timeout", &failed);
		if (vpod_dirty[id])
			warn_on(node_try_write(id, "vpod", "0"), id, "vpod 0",
				&failed);
		if (reset_held[id])
			warn_on(node_try_write(id, "control", "reset-end"), id,
				"reset-end", &failed);
		if (offline_dirty[id])
			warn_on(node_try_write(id, "control", "online"), id,
				"online", &failed);
	}
	for (id = 0; id < VPOD_MAX_ACCELS; id++) {
		uint64_t deadline = vpod_now_ms() + VPOD_ASYNC_MS;

		if (!offline_dirty[id] && !reset_dirty[id])
			continue;
		/* back to active before the next subtest uses the node */
		while (!node_active(id) && vpod_now_ms() < deadline)
			vpod_sleep_ms(20);
		warn_on(node_active(id) ? 0 : -ETIMEDOUT, id,
			"back to active", &failed);
	}
	memset(fault_dirty, 0, sizeof(fault_dirty));
	memset(timeout_dirty, 0, sizeof(timeout_dirty));
	memset(vpod_dirty, 0, sizeof(vpod_dirty));
	memset(offline_dirty, 0, sizeof(offline_dirty));
	memset(reset_dirty, 0, sizeof(reset_dirty));
	memset(reset_held, 0, sizeof(reset_held));
	while (n_tracked)
		close(tracked[--n_tracked]);
	if (in_subtest)
		igt_assert_f(!failed,
			     "clean-up could not bring the pod back: %d steps failed\n",
			     failed);
}

void vpod_cleanup(void)
{
	cleanup(true);
}

static void vpod_exit_handler(int sig)
{
	cleanup(false);
}

void vpod_init(void)
{
	struct drm_amdgpu_ualink_info info;
	struct stat st;
	int minor, i;

	srandom(getpid() ^ (unsigned int)vpod_now_ms());
	memset(&vpod, 0, sizeof(vpod));
	for (minor = 128; minor < 192; minor++) {
		char path[32];
		drmVersionPtr v;
		bool ours;
		int fd;

		snprintf(path, sizeof(path), "/dev/dri/renderD%d", minor);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		v = drmGetVersion(fd);
		ours = v && !strcmp(v->name, AMDGPU_UALINK_VPOD_DRIVER_NAME);
		if (v)
			drmFreeVersion(v);
		if (ours && !ualink_info(fd, &info) &&
		    info.accel_id < VPOD_MAX_ACCELS) {
			igt_assert_f(!vpod.path[info.accel_id][0],
				     "%s and %s both have accelerator ID %u\n",
				     vpod.path[info.accel_id], path,
				     info.accel_id);
			strcpy(vpod.path[info.accel_id], path);
			vpod.n_drm++;
		}
		close(fd);
	}
	igt_require_f(vpod.n_drm >= VPOD_MIN_DRM_NODES,
		      "needs %d render nodes of %s, found %d (modprobe amdgpu_ualink_vpod)\n",
		      VPOD_MIN_DRM_NODES, AMDGPU_UALINK_VPOD_DRIVER_NAME,
		      vpod.n_drm);
	for (i = 0; i < vpod.n_drm; i++)
		igt_assert_f(vpod.path[i][0],
			     "%d DRM nodes but none has accelerator ID %d\n",
			     vpod.n_drm, i);
	igt_require_f(stat(VPOD_DEBUGFS, &st) == 0,
		      "%s is missing (debugfs mounted? root?)\n", VPOD_DEBUGFS);

	vpod_read_nodes(vpod.accel, &vpod.n_accel);
	read_fabric_heaps();
	for (i = 0; i < vpod.n_accel; i++) {
		const struct vpod_accel *a = &vpod.accel[i];

		/* a pod left in another state is a failure, not a skip */
		igt_assert_f(!strcmp(a->state, "active") && a->vpod == 0,
			     "node%u is %s in vpod %u, not active in vpod 0\n",
			     a->id, a->state, a->vpod);
		counts_read(a->id, &vpod.baseline[a->id]);
	}
	initialised = true;
	igt_install_exit_handler(vpod_exit_handler);
}

/* ioctls */

int ualink_ioctl(int fd, struct drm_amdgpu_ualink *args)
{
	return drmIoctl(fd, DRM_IOCTL_AMDGPU_UALINK, args) ? -errno : 0;
}

struct drm_amdgpu_ualink_handle export_ok(int fd, uint32_t gem)
{
	struct drm_amdgpu_ualink_handle h = {};
	int ret = ualink_export(fd, gem, &h);

	igt_assert_f(ret == 0, "export of GEM handle %u: %s\n", gem,
		     strerror(-ret));
	igt_assert(h.lo || h.hi);
	return h;
}

void expect_import_error(int fd, struct drm_amdgpu_ualink_handle h, int err)
{
	int dmabuf = -1, ret;

	ret = ualink_import(fd, h, AMDGPU_UALINK_IMPORT_CLOEXEC, &dmabuf);
	if (!ret)
		vpod_track_fd(dmabuf);
	igt_assert_f(ret == -err,
		     "import of %016llx:%016llx: %s, expected %s\n",
		     (unsigned long long)h.hi, (unsigned long long)h.lo,
		     ret ? strerror(-ret) : "success", strerror(err));
}

int import_ok(int fd, struct drm_amdgpu_ualink_handle h)
{
	int ret, dmabuf = -1;

	ret = ualink_import(fd, h, AMDGPU_UALINK_IMPORT_CLOEXEC, &dmabuf);
	igt_assert_f(ret == 0, "import of %016llx:%016llx: %s\n",
		     (unsigned long long)h.hi, (unsigned long long)h.lo,
		     strerror(-ret));
	igt_assert_fd(dmabuf);
	vpod_track_fd(dmabuf);
	return dmabuf;
}

uint32_t prime_handle(int fd, int dmabuf)
{
	uint32_t gem = 0;

	igt_assert_f(drmPrimeFDToHandle(fd, dmabuf, &gem) == 0,
		     "PRIME import of a UALink import on its node: %s\n",
		     strerror(errno));
	igt_assert_neq_u32(gem, 0);
	return gem;
}

uint32_t import_gem(int fd, struct drm_amdgpu_ualink_handle h, int *dmabuf)
{
	int d = import_ok(fd, h);
	uint32_t gem = prime_handle(fd, d);

	/* without a caller for it, the GEM handle alone holds the import */
	if (dmabuf)
		*dmabuf = d;
	else
		vpod_close(d);
	return gem;
}

void import_works(int fd, struct drm_amdgpu_ualink_handle h, uint32_t seed)
{
	int dmabuf;
	uint32_t g = import_gem(fd, h, &dmabuf);

	gpu_expect(fd, g, 0, 4096, seed);
	gem_close(fd, g);
	vpod_close(dmabuf);
}

int __bo_create(int fd, uint64_t size, uint32_t domain, uint32_t *handle)
{
	struct drm_amdgpu_ualink_vpod_gem_create arg = {
		.size = size, .domain = domain,
	};

	if (drmIoctl(fd, DRM_IOCTL_AMDGPU_UALINK_VPOD_GEM_CREATE, &arg))
		return -errno;
	*handle = arg.handle;
	return 0;
}

uint32_t bo_create(int fd, uint64_t size, uint32_t domain)
{
	uint32_t handle = 0;
	int ret = __bo_create(fd, size, domain, &handle);

	igt_assert_f(ret == 0, "GEM create of %llu bytes in domain %u: %s\n",
		     (unsigned long long)size, domain, strerror(-ret));
	igt_assert_neq_u32(handle, 0);
	return handle;
}

uint32_t vram_create(int fd, uint64_t size)
{
	return bo_create(fd, size, AMDGPU_UALINK_VPOD_DOMAIN_VRAM);
}

void gem_close(int fd, uint32_t handle)
{
	struct drm_gem_close arg = { .handle = handle };

	igt_assert_f(drmIoctl(fd, DRM_IOCTL_GEM_CLOSE, &arg) == 0,
		     "GEM close of %u: %s\n", handle, strerror(errno));
}

int __gem_mmap_offset(int fd, uint32_t handle, uint64_t *offset)
{
	struct drm_amdgpu_ualink_vpod_gem_mmap arg = { .handle = handle };

	if (drmIoctl(fd, DRM_IOCTL_AMDGPU_UALINK_VPOD_GEM_MMAP, &arg))
		return -errno;
	*offset = arg.offset;
	return 0;
}

int gpu_access(int fd, uint32_t handle, uint32_t flags, uint64_t offset,
	       void *data, uint64_t size)
{
	struct drm_amdgpu_ualink_vpod_gpu_access arg = {
		.handle = handle, .flags = flags, .offset = offset,
		.size = size, .data = (uintptr_t)data,
	};

	return drmIoctl(fd, DRM_IOCTL_AMDGPU_UALINK_VPOD_GPU_ACCESS, &arg) ?
	       -errno : 0;
}

int gpu_job(int fd, uint32_t handle, uint32_t op, uint32_t timeout_ms)
{
	struct drm_amdgpu_ualink_vpod_gpu_job arg = {
		.handle = handle, .op = op, .timeout_ms = timeout_ms,
	};

	return drmIoctl(fd, DRM_IOCTL_AMDGPU_UALINK_VPOD_GPU_JOB, &arg) ? -errno : 0;
}

void gpu_write(int fd, uint32_t handle, uint64_t offset, const void *data,
	       uint64_t size)
{
	int ret = gpu_access(fd, handle, AMDGPU_UALINK_VPOD_ACCESS_WRITE,
			     offset, (void *)data, size);

	igt_assert_f(ret == 0, "GPU write of %llu bytes at %llu to %u: %s\n",
		     (unsigned long long)size, (unsigned long long)offset,
		     handle, strerror(-ret));
}

void gpu_read(int fd, uint32_t handle, uint64_t offset, void *data,
	      uint64_t size)
{
	int ret = gpu_access(fd, handle, 0, offset, data, size);

	igt_assert_f(ret == 0, "GPU read of %llu bytes at %llu from %u: %s\n",
		     (unsigned long long)size, (unsigned long long)offset,
		     handle, strerror(-ret));
}

/* patterns */

uint8_t pattern_byte(uint32_t seed, uint64_t i)
{
	uint32_t x = (uint32_t)i * 2654435761u ^ (uint32_t)(i >> 32) ^
		     (seed + 1) * 0x85ebca6bu;

	x ^= x >> 15;
	x *= 0x2c1b3c6du;
	x ^= x >> 12;
	return x >> 24;
}

void pattern_fill(void *buf, uint64_t size, uint32_t seed, uint64_t first)
{
	uint8_t *p = buf;
	uint64_t i;

	for (i = 0; i < size; i++)
		p[i] = pattern_byte(seed, first + i);
}

int64_t pattern_check(const void *buf, uint64_t size, uint32_t seed,
		      uint64_t first)
{
	const uint8_t *p = buf;
	uint64_t i;

	for (i = 0; i < size; i++)
		if (p[i] != pattern_byte(seed, first + i))
			return i;
	return -1;
}

void gpu_fill(int fd, uint32_t h, uint64_t offset, uint64_t size,
	      uint32_t seed)
{
	void *buf = malloc(size);

	igt_assert(buf);
	pattern_fill(buf, size, seed, offset);
	gpu_write(fd, h, offset, buf, size);
	free(buf);
}

void gpu_expect(int fd, uint32_t h, uint64_t offset, uint64_t size,
		uint32_t seed)
{
	uint8_t *buf = malloc(size);
	int64_t bad;

	igt_assert(buf);
	memset(buf, 0, size);
	gpu_read(fd, h, offset, buf, size);
	bad = pattern_check(buf, size, seed, offset);
	igt_assert_f(bad < 0,
		     "GEM handle %u byte %llu is %#x, expected %#x (seed %u)\n",
		     h, (unsigned long long)(offset + bad), bad < 0 ? 0 : buf[bad],
		     pattern_byte(seed, offset + bad), seed);
	free(buf);
}

void gpu_expect_u32(int fd, uint32_t h, uint64_t offset, uint64_t size,
		    uint32_t value)
{
	uint32_t *buf = malloc(size);
	uint64_t i;

	igt_assert(buf && size % 4 == 0);
	memset(buf, 0xa5, size);
	gpu_read(fd, h, offset, buf, size);
	for (i = 0; i < size / 4; i++)
		igt_assert_f(buf[i] == value,
			     "GEM handle %u word at %llu is %#x, expected %#x\n",
			     h, (unsigned long long)(offset + 4 * i), buf[i],
			     value);
	free(buf);
}

void wait_access_error(int fd, uint32_t h, int err, unsigned int timeout_ms)
{
	uint64_t deadline = vpod_now_ms() + timeout_ms;
	uint32_t word;
	int ret;

	for (;;) {
		ret = gpu_access(fd, h, 0, 0, &word, sizeof(word));
		if (ret == -err)
			return;
		igt_assert_f(ret == 0,
			     "GPU access to %u failed with %s while waiting for %s\n",
			     h, strerror(-ret), strerror(err));
		if (vpod_now_ms() > deadline)
			break;
		vpod_sleep_ms(20);
	}
	igt_assert_f(false, "GPU access to %u still works %u ms later, expected %s\n",
		     h, timeout_ms, strerror(err));
}

uint32_t exported_buffer(int fd, uint64_t size, uint32_t seed,
			 struct drm_amdgpu_ualink_handle *out)
{
	uint32_t gem = vram_create(fd, size);

	gpu_fill(fd, gem, 0, size, seed);
	*out = export_ok(fd, gem);
	return gem;
}

/* handles */

uint32_t handle_accel(struct drm_amdgpu_ualink_handle h)
{
	return h.lo & AMDGPU_UALINK_HANDLE_ACCEL_ID_MASK;
}

bool handle_eq(struct drm_amdgpu_ualink_handle a,
	       struct drm_amdgpu_ualink_handle b)
{
	return a.lo == b.lo && a.hi == b.hi;
}

uint64_t rand64(void)
{
	return (uint64_t)random() << 42 ^ (uint64_t)random() << 21 ^
	       (uint64_t)random();
}

int64_t fault_injected(unsigned int id, const char *kind)
{
	char rel[64], buf[2048], key[32], *line, *save;
	unsigned long long n;

	snprintf(rel, sizeof(rel), "node%u/fault", id);
	snprintf(key, sizeof(key), "%s ", kind);
	if (dbg_read(rel, buf, sizeof(buf)) < 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *at = strstr(line, "injected=");

		if (!strncmp(line, key, strlen(key)) && at &&
		    sscanf(at, "injected=%llu", &n) == 1)
			return n;
	}
	return -1;
}

static void *trigger_thread(void *arg)
{
	struct vpod_trigger *t = arg;
	uint64_t end = vpod_now_ms() + t->timeout_ms;

	while (vpod_now_ms() < end) {
		if (fault_injected(t->id, t->kind) >= (int64_t)t->n) {
			t->action(t->arg);
			t->fired = true;
			break;
		}
		usleep(1000);
	}
	return NULL;
}

void vpod_trigger_start(struct vpod_trigger *t)
{
	t->fired = false;
	igt_assert_eq(pthread_create(&t->thread, NULL, trigger_thread, t), 0);
}

bool vpod_trigger_join(struct vpod_trigger *t)
{
	igt_assert_eq(pthread_join(t->thread, NULL), 0);
	return t->fired;
}
