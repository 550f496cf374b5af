// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * One guest's part of `make pod-test` (tooling/pod-test.sh): a pod of
 * emulated accelerators spread over two kernels (QEMU guests) that share
 * only an ivshmem region, the fabric, then one over four. Guest A hosts
 * accelerators 0 and 1, guest B 2 and 3. The programs meet through files
 * in a directory the guests and the host mount (only UALink handles and
 * marks go through it, as a job launcher would pass them): every byte of
 * a buffer goes through the fabric.
 *
 *   ualink_pod a|b|b2|w|x|y|z DIR
 *
 * 1. A exports a buffer of accelerator 0 filled with a pattern. B imports
 *    it on accelerator 2, reads the pattern through the fabric (the
 *    exporter's page tables walked in the region, its memory read there),
 *    writes a second pattern into its upper half, and exports a buffer of
 *    accelerator 3. A finds B's bytes in its buffer, imports B's buffer on
 *    accelerator 1 and reads it through the fabric, and a buffer of
 *    accelerator 2, which it keeps. The owner's access table in the region
 *    lets accelerator 2 read the NPA of A's buffer, and refuses 3, which
 *    was never granted it.
 * 2. The host stops B's QEMU (SIGSTOP): a guest that hangs. Accelerator
 *    0's keepalive finds 2 lost and revokes its grant; then the host lets
 *    B go on (SIGCONT). Back, accelerator 2's own keepalive probe finds
 *    the connection gone: it ends its side, its import of A's buffer
 *    faults and A's access table refuses it; a new import of the same
 *    handle reads again.
 * 3. B imports and releases A's buffer on accelerator 3 in a loop, and the
 *    host kills B's QEMU (SIGKILL) in the middle of it. A is not told. Accelerator 0, whose keepalive probed the idle
 *    accelerator 2 while B lived without ending anything, asks B for
 *    nothing: its keepalive finds 2 and 3 lost and it revokes their
 *    grants. Accelerator 1 runs without keepalive: it asks 3 for a
 *    buffer, the mailbox's timeout finds 3 lost, and 1's import of 3's
 *    buffer is revoked (a GPU access to it faults); its import of 2
 *    stands, since nothing told it. Accelerators 0 and 1 keep working
 *    with each other meanwhile.
 * 3b. Accelerator 1's read of 2's old-life buffer waits in flight (debugfs
 *    access_hold) while the host boots B again: 2's new start empties its
 *    access table and waits for the read before it zeroes the memory, and
 *    the read gets the old life's bytes (restart_under_read()).
 * 4. The host boots B again (b2) on the same region: its accelerators come
 *    up with new generations. A exports a second buffer; B imports it on
 *    2 and 3, which ends accelerator 0's connections with their previous
 *    lives and drops the dead guest's grants of the first buffer: 0 then
 *    holds exactly the two new grants. A imports the new B's buffer and
 *    reads it. The new accelerator 2 exports a buffer at the NPA of its
 *    old life's, which accelerator 1 still imports, never told: its
 *    access through that import is refused by the new life's access
 *    table. Accelerator 2 releases its import of A's new buffer: its reads
 *    of that NPA are refused from then on, while 3, still granted, reads.
 *    Then, across kernels: A takes accelerator 0 offline, and 3's read of
 *    A's buffer that just worked is refused; back online, 0 has no
 *    connection with 3, whose keepalive learns it: its import faults,
 *    and a new import reads. A resets 0: its new generation reaches 3 at
 *    once, and 3's import faults.
 * 5. Everyone releases everything; each guest checks that its
 *    accelerators' counts (exports, grants, pins, imports) are back to 0.
 * 6. A second pod, on a region of its own, of four kernels with one
 *    accelerator each: w (0), x (1), y (2), z (3). W boots first and
 *    writes the region's header. Each exports a buffer, imports and reads
 *    the three others'; the host kills w and x at once. Y and z, in
 *    different kernels, find both lost, drop their grants to them, see
 *    their imports of them fault, keep reading each other's buffer and
 *    import each other's new ones. Z exports a third buffer, which y
 *    imports; y's read of it waits in flight past z's check (debugfs
 *    access_hold) while z ends the export, which waits for the read before
 *    the memory goes; the read gets the buffer's bytes and the next is
 *    refused (quad_owner_waits()). The host stops y's QEMU until z has
 *    found 2 lost; back, y learns it and imports again (quad_hang()).
 *    Then y and z, both alive, are partitioned (each drops every message it
 *    sends): each finds the other lost, drops its grant, and its import
 *    faults; healed, they import each other's buffer again
 *    (quad_partition()).
 *    Then the region is fuzzed, and they release everything
 *    (guest_quad()).
 *
 * Every step prints what it saw, counts before, during and after; the exit
 * status is 0 only when every check held.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <xf86drm.h>

#include "amdgpu_ualink_vpod.h"
#include "libualink.h"

#define BUF_SIZE	(64 * 1024)
#define WAIT_S		300
#define DEBUGFS		"/sys/kernel/debug/amdgpu_ualink_vpod"

static const char *dir;
static int failures;

/*
 * One assertion: "pod: ok: ID: what" or "pod: FAIL: ID: what". ID is
 * stable (no handle, no timing): the host matches each guest's IDs
 * against tests/expected/pod-test.list.
 */
static void __attribute__((format(printf, 3, 4)))
check(int ok, const char *id, const char *fmt, ...)
{
	va_list ap;

	printf("pod: %s: %s: ", ok ? "ok" : "FAIL", id);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	failures += !ok;
}

/* Write @text into accelerator @id's debugfs file @name. */
static void node_write(unsigned int id, const char *name, const char *text)
{
	char path[96];
	FILE *f;

	snprintf(path, sizeof(path), DEBUGFS "/node%u/%s", id, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		printf("pod: FAIL: %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

/* the mailbox timeout of accelerator @id: 2 s, 2 retransmissions */
static void short_timeout(unsigned int id)
{
	node_write(id, "timeout", "2000 2\n");
}

static void die(const char *what, int err)
{
	printf("pod: FAIL: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

/* The render node of accelerator @id, from the pod's debugfs "nodes". */
static int open_accel(unsigned int id)
{
	char line[256], name[64], path[96];
	unsigned int nid, vpod;
	FILE *f = fopen(DEBUGFS "/nodes", "r");
	int fd = -1;

	if (!f)
		die("open " DEBUGFS "/nodes", errno);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%u %u %*s %63s", &nid, &vpod, name) == 3 &&
		    nid == id && !strncmp(name, "renderD", 7)) {
			snprintf(path, sizeof(path), "/dev/dri/%s", name);
			fd = open(path, O_RDWR | O_CLOEXEC);
		}
	fclose(f);
	if (fd < 0)
		die("open the render node of an accelerator hosted here", ENODEV);
	return fd;
}

/* A counter of accelerator @id's debugfs "counts". */
static long count(unsigned int id, const char *name)
{
	char path[96], key[64];
	long value, found = -1;
	FILE *f;

	snprintf(path, sizeof(path), DEBUGFS "/node%u/counts", id);
	f = fopen(path, "r");
	if (!f)
		die(path, errno);
	while (fscanf(f, "%63s %ld", key, &value) == 2)
		if (!strcmp(key, name))
			found = value;
	fclose(f);
	return found;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* Wait up to 30 s for a count to reach @want; returns what it is then. */
static long wait_count(unsigned int id, const char *name, long want)
{
	double end = now_s() + 30;
	long v;

	while ((v = count(id, name)) != want && now_s() < end)
		usleep(100 * 1000);
	return v;
}

#define PEER_LINES	24

/*
 * The lines accelerator @id's debugfs "state" has on its connection with
 * @peer ("peer <n>: ..." and the counters below it); returns how many, 0
 * when there is no such section.
 */
static int peer_lines(unsigned int id, unsigned int peer,
		      char lines[PEER_LINES][256])
{
	char path[96], line[256], want[32];
	int on = 0, n = 0;
	FILE *f;

	snprintf(path, sizeof(path), DEBUGFS "/node%u/state", id);
	snprintf(want, sizeof(want), "peer %u:", peer);
	f = fopen(path, "r");
	if (!f)
		die(path, errno);
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "peer ", 5))
			on = !strncmp(line, want, strlen(want));
		if (on && n < PEER_LINES)
			memcpy(lines[n++], line, sizeof(line));
	}
	fclose(f);
	return n;
}

/*
 * A counter accelerator @id's mailbox keeps on its connection with @peer,
 * written "<name> <value>" in its state ("probes", "resets"...); -1 when
 * there is none.
 */
static long long peer_counter(unsigned int id, unsigned int peer,
			      const char *name)
{
	static char lines[PEER_LINES][256];
	int i, n = peer_lines(id, peer, lines);
	char *tok, *save;

	for (i = 0; i < n; i++)
		for (tok = strtok_r(lines[i], "\n ", &save); tok;
		     tok = strtok_r(NULL, "\n ", &save))
			if (!strcmp(tok, name) && (tok = strtok_r(NULL, "\n ", &save)))
				return strtoll(tok, NULL, 0);
	return -1;
}

/* Is accelerator @id's connection with @peer established? */
static int peer_established(unsigned int id, unsigned int peer)
{
	static char lines[PEER_LINES][256];
	char state[32];

	return peer_lines(id, peer, lines) &&
	       sscanf(lines[0], "peer %*u: %31s", state) == 1 &&
	       !strcmp(state, "established");
}

/*
 * Print what accelerator @id's mailbox says of its connection with @peer;
 * returns the entries it dropped from @peer's ring as an overflow, or -1
 * when it has no connection with @peer.
 */
static long long show_peer(unsigned int id, unsigned int peer)
{
	static char lines[PEER_LINES][256];
	int i, n = peer_lines(id, peer, lines);
	long long dropped = 0, v;

	for (i = 0; i < n; i++) {
		printf("pod: accelerator %u's %s", id, lines[i]);
		if (sscanf(lines[i], " dropped ring %lld", &v) == 1)
			dropped += v;
	}
	return n ? dropped : -1;
}

static void show_counts(const char *when, unsigned int id)
{
	printf("pod: counts of accelerator %u %s: exports %ld grants %ld pins %ld imports %ld pt_tables %ld\n",
	       id, when, count(id, "exports"), count(id, "grants"),
	       count(id, "pins"), count(id, "imports"), count(id, "pt_tables"));
}

static void check_zero(unsigned int id)
{
	static const char *const names[] = { "exports", "grants", "pins", "imports" };
	char tag[32];
	unsigned int i;

	for (i = 0; i < 4; i++) {
		snprintf(tag, sizeof(tag), "acc%u-%s-zero", id, names[i]);
		check(count(id, names[i]) == 0, tag,
		      "accelerator %u: %s back to 0", id, names[i]);
	}
}

static void put(const char *name, const char *text)
{
	char path[512], tmp[520];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) || rename(tmp, path))
		die(path, errno);
}

/* Wait for the other guest's file @name; its first line into @buf. */
static void get(const char *name, char *buf, size_t size)
{
	char path[512];
	time_t end = time(NULL) + WAIT_S;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	while (!(f = fopen(path, "r"))) {
		if (time(NULL) > end) {
			printf("pod: FAIL: no %s from the other guest within %d s\n",
			       name, WAIT_S);
			exit(1);
		}
		usleep(100 * 1000);
	}
	if (!fgets(buf, size, f))
		buf[0] = 0;
	buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

static unsigned int gem_create(int fd)
{
	struct drm_amdgpu_ualink_vpod_gem_create c = {
		.size = BUF_SIZE,
		.domain = AMDGPU_UALINK_VPOD_DOMAIN_VRAM,
	};

	if (drmIoctl(fd, DRM_IOCTL_AMDGPU_UALINK_VPOD_GEM_CREATE, &c))
		die("GEM_CREATE", errno);
	return c.handle;
}

/* What the accelerator's GPU does: direct, or through the fabric. */
static int gpu_access(int fd, unsigned int gem, unsigned long offset,
		      void *data, size_t size, int write)
{
	struct drm_amdgpu_ualink_vpod_gpu_access a = {
		.handle = gem,
		.flags = write ? AMDGPU_UALINK_VPOD_ACCESS_WRITE : 0,
		.offset = offset,
		.size = size,
		.data = (uintptr_t)data,
	};

	return drmIoctl(fd, DRM_IOCTL_AMDGPU_UALINK_VPOD_GPU_ACCESS, &a) ? -errno : 0;
}

/*
 * Read a page of import @gem until the access faults or 30 s pass (the
 * import dies on a worker once its end is known); returns the last
 * result, and the seconds it took in @took.
 */
static int until_fault(int fd, unsigned int gem, double *took)
{
	static unsigned int page[1024];
	double t = now_s();
	int ret;

	while (!(ret = gpu_access(fd, gem, 0, page, sizeof(page), 0)) &&
	       now_s() < t + 30)
		usleep(50 * 1000);
	*took = now_s() - t;
	return ret;
}

static void fill(unsigned int *words, size_t size, unsigned int seed)
{
	size_t i;

	for (i = 0; i < size / sizeof(*words); i++)
		words[i] = seed * 0x9e3779b9u + (unsigned int)i;
}

static size_t mismatch(const unsigned int *words, size_t size, unsigned int seed)
{
	size_t i, bad = 0;

	for (i = 0; i < size / sizeof(*words); i++)
		bad += words[i] != seed * 0x9e3779b9u + (unsigned int)i;
	return bad;
}

/*
 * A counter of a message type in accelerator @id's view of @peer: @what is
 * "sent", "received" or "retransmitted"; -1 when not found.
 */
static long long peer_stat(unsigned int id, unsigned int peer,
			   const char *type, const char *what)
{
	static char lines[PEER_LINES][256];
	char t[32], w[3][32];
	long long v[3];
	int i, k, n = peer_lines(id, peer, lines);

	for (i = 0; i < n; i++)
		/* "  npa_req     sent 0 received 172 retransmitted 0" */
		if (sscanf(lines[i], " %31s %31s %lld %31s %lld %31s %lld", t,
			   w[0], &v[0], w[1], &v[1], w[2], &v[2]) == 7 &&
		    !strcmp(t, type))
			for (k = 0; k < 3; k++)
				if (!strcmp(w[k], what))
					return v[k];
	return -1;
}

/* The generation accelerator @id knows of @peer's mailbox, 0 if none. */
static unsigned long long peer_generation(unsigned int id, unsigned int peer)
{
	static char lines[PEER_LINES][256];
	unsigned long long gen = 0;

	if (peer_lines(id, peer, lines) &&
	    sscanf(lines[0], "peer %*u: %*s generation %llx", &gen) != 1)
		gen = 0;
	return gen;
}

/* Times the region says accelerator @id was brought up (debugfs nodes). */
static int boots(unsigned int id)
{
	char line[256];
	unsigned int nid;
	int b, found = -1;
	FILE *f = fopen(DEBUGFS "/nodes", "r");

	if (!f)
		die(DEBUGFS "/nodes", errno);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%u %*u %*s %*s %d", &nid, &b) == 2 && nid == id)
			found = b;
	fclose(f);
	return found;
}

/* "pattern intact", or what went wrong */
static const char *verdict(int ret, const unsigned int *words, size_t size,
			   unsigned int seed)
{
	static char text[64];

	if (ret)
		return strerror(-ret);
	snprintf(text, sizeof(text), "%zu of %zu words differ",
		 mismatch(words, size, seed), size / sizeof(*words));
	return mismatch(words, size, seed) ? text : "pattern intact";
}

static int try_import(int fd, const char *text, int *dmabuf)
{
	struct drm_amdgpu_ualink_handle h;

	if (ualink_handle_parse(text, &h))
		die("a handle from the other guest", EINVAL);
	return ualink_import(fd, h, 0, dmabuf);
}

/* A buffer of our device memory, its words a pattern of @seed written by the GPU. */
static unsigned int filled_buffer(int fd, unsigned int seed)
{
	static unsigned int words[BUF_SIZE / 4];
	unsigned int gem = gem_create(fd);

	fill(words, BUF_SIZE, seed);
	if (gpu_access(fd, gem, 0, words, BUF_SIZE, 1))
		die("GPU write of our own buffer", errno);
	return gem;
}

/*
 * Import @text's handle on @fd, asserted as @tag; returns the GEM handle,
 * *@dmabuf its fd.
 */
static unsigned int import(int fd, const char *text, int *dmabuf,
			   const char *tag)
{
	struct drm_amdgpu_ualink_handle h;
	unsigned int gem;
	int ret;

	ualink_handle_parse(text, &h);
	ret = try_import(fd, text, dmabuf);
	check(!ret, tag, "import of %s (accelerator %u's): %s", text,
	      ualink_handle_accel(h), ret ? ualink_strerror(ret) : "done");
	if (ret)
		exit(1);
	if (drmPrimeFDToHandle(fd, *dmabuf, &gem))
		die("PRIME fd to handle", errno);
	return gem;
}

static unsigned int export(int fd, unsigned int gem, char text[UALINK_HANDLE_STRLEN])
{
	struct drm_amdgpu_ualink_handle h;
	int ret = ualink_export(fd, gem, &h);

	if (ret)
		die("export", ret);
	ualink_handle_format(h, text);
	return ualink_handle_accel(h);
}

/*
 * The NPA of the handle @text on accelerator @id, from its debugfs state:
 * as an export there ("export ...HANDLE" and, once an importer mapped it,
 * "  npa NPA" on the next line) or as an import ("import ...HANDLE from
 * ID: STATE npa NPA").
 */
static unsigned long long state_npa(unsigned int id, const char *kind,
				    const char *text)
{
	static char buf[65536];
	struct drm_amdgpu_ualink_handle h;
	unsigned long long npa = 0;
	char path[96], want[32], *line, *end;
	ssize_t n;
	int fd;

	if (ualink_handle_parse(text, &h))
		die("state_npa: a handle", EINVAL);
	snprintf(path, sizeof(path), DEBUGFS "/node%u/state", id);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		die(path, errno);
	close(fd);
	buf[n] = 0;
	snprintf(want, sizeof(want), "%s ...%08x ", kind, (unsigned int)h.hi);
	line = strstr(buf, want);
	end = line ? strchr(line, '\n') : NULL;
	if (end && !strcmp(kind, "export"))
		end = strchr(line = end + 1, '\n');
	if (end)
		*end = 0;
	line = end ? strstr(line, "npa 0x") : NULL;
	if (!line || sscanf(line + 4, "%llx", &npa) != 1)
		die("state_npa: no npa for the handle", ENOENT);
	return npa;
}

/*
 * A 4-byte read of @npa by accelerator @id's GPU, as the fabric carries it
 * (debugfs "npa", whatever the accelerator imported): 0 or -errno.
 */
static int npa_read(unsigned int id, unsigned long long npa, unsigned int *word)
{
	char path[96], cmd[64];
	int fd, ret = 0;

	snprintf(path, sizeof(path), DEBUGFS "/node%u/npa", id);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die(path, errno);
	snprintf(cmd, sizeof(cmd), "%#llx 4", npa);
	if (write(fd, cmd, strlen(cmd)) < 0)
		ret = -errno;
	else if (read(fd, word, 4) != 4)
		die("reading what the fabric read", EIO);
	close(fd);
	return ret;
}

/*
 * Check, as @tag, that accelerator @id reads through the fabric, at @npa,
 * the first word of the pattern of @seed (@why says why it may).
 */
static void check_npa_reads(unsigned int id, unsigned long long npa,
			    unsigned int seed, const char *tag, const char *why)
{
	unsigned int word, want;
	int ret = npa_read(id, npa, &word);

	fill(&want, sizeof(want), seed);
	check(!ret && word == want, tag, "accelerator %u reads NPA %#llx, %s: %s",
	      id, npa, why, ret ? strerror(-ret) : word == want ?
	      "the pattern" : "other bytes");
}

static void put_npa(const char *name, unsigned long long npa)
{
	char text[32];

	snprintf(text, sizeof(text), "%#llx", npa);
	put(name, text);
}

static unsigned long long get_npa(const char *name)
{
	char line[64];

	get(name, line, sizeof(line));
	return strtoull(line, NULL, 0);
}

/* Our device memory is in the region: the CPU maps it there too. */
static void cpu_check(int fd, unsigned int gem)
{
	struct drm_amdgpu_ualink_vpod_gem_mmap m = { .handle = gem };
	unsigned int *map;

	if (drmIoctl(fd, DRM_IOCTL_AMDGPU_UALINK_VPOD_GEM_MMAP, &m))
		die("GEM_MMAP", errno);
	map = mmap(NULL, BUF_SIZE, PROT_READ, MAP_SHARED, fd, m.offset);
	if (map == MAP_FAILED)
		die("mmap", errno);
	check(!mismatch(map + BUF_SIZE / 8, BUF_SIZE / 2, 0xb), "cpu-map-shows-peer-writes",
	      "a CPU mapping of our buffer shows B's bytes too: %s",
	      verdict(0, map + BUF_SIZE / 8, BUF_SIZE / 2, 0xb));
	munmap(map, BUF_SIZE);
}

static int vpod_move_refused(void)
{
	int fd = open(DEBUGFS "/node0/vpod", O_WRONLY);
	int ok = fd >= 0 && write(fd, "1\n", 2) < 0 && errno == EOPNOTSUPP;

	if (fd >= 0)
		close(fd);
	return ok;
}

/*
 * Accelerator @id's side of another kernel that hangs: the host stopped
 * the QEMU of the guest hosting @peer (the file @stopped says when).
 * @id's keepalive finds @peer lost and drops @peer's grants; then @saw
 * tells the host to let that guest go on.
 */
static void owner_finds_stopped(unsigned int id, unsigned int peer,
				const char *stopped, const char *saw)
{
	char line[128];
	double t;

	get(stopped, line, sizeof(line));
	printf("pod: %s\n", line);
	t = now_s();
	while (peer_established(id, peer) && now_s() < t + 30)
		usleep(100 * 1000);
	check(!peer_established(id, peer), "keepalive-finds-hung-guest",
	      "accelerator %u found the stopped accelerator %u lost %.1f s after it read of the stop",
	      id, peer, now_s() - t);
	check(wait_count(id, "grants", 0) == 0, "keepalive-drops-hung-grants",
	      "accelerator %u revoked the hung accelerator %u's grant: %ld left",
	      id, peer, count(id, "grants"));
	put(saw, "1");
}

/*
 * Accelerator @id's side of its own kernel's hang: @stop asks the host to
 * stop our QEMU until @peer has found us lost, @continued says we went
 * on. Back, our keepalive probes @peer, which no longer has the
 * connection and greets us: @id ends it on its side too, and @imp, an
 * import of @peer's buffer, faults.
 */
static void importer_back_from_stop(int fd, unsigned int id, unsigned int peer,
				    unsigned int imp, const char *stop,
				    const char *continued)
{
	long long probed = peer_counter(id, peer, "probes");
	long long resets = peer_counter(id, peer, "resets");
	char line[128];
	double t;
	int ret;

	put(stop, "1");
	get(continued, line, sizeof(line));
	printf("pod: %s\n", line);
	t = now_s();
	while (peer_counter(id, peer, "resets") == resets && now_s() < t + 30)
		usleep(100 * 1000);
	/* our probe did it: nobody else sends @peer anything */
	check(peer_counter(id, peer, "resets") > resets &&
	      peer_counter(id, peer, "probes") > probed, "hung-guest-learns-lost",
	      "accelerator %u, back, found its connection with accelerator %u ended %.1f s after it went on, after a probe (probes it sent: %lld, %lld before the hang)",
	      id, peer, now_s() - t, peer_counter(id, peer, "probes"), probed);
	ret = until_fault(fd, imp, &t);
	check(ret == -ENODEV, "hung-import-revoked",
	      "accelerator %u's import of accelerator %u's buffer, made before the hang, is revoked: the GPU access faults (%s)",
	      id, peer, ret ? strerror(-ret) : "it still reads");
}

/* Whether accelerator @id has @n accesses waiting on its access_hold. */
static int access_held(unsigned int id, int n)
{
	char path[96];
	int on = -1, waiting = -1;
	FILE *f;

	snprintf(path, sizeof(path), DEBUGFS "/node%u/access_hold", id);
	f = fopen(path, "r");
	if (!f)
		die(path, errno);
	if (fscanf(f, "%d %d", &on, &waiting) != 2)
		waiting = -1;
	fclose(f);
	return waiting == n;
}

/*
 * 3b: accelerator 1's read of the dead accelerator 2's buffer at @npa,
 * under the old life's grant, waits in flight (debugfs access_hold) until
 * B's new life has started: that start empties 2's access table, waits
 * for the read, and only then zeroes the memory. The read gets the old
 * life's bytes; had the start zeroed first, it would get zeroes. The host
 * boots B again once the read waits (a.held).
 */
static void restart_under_read(unsigned long long npa)
{
	unsigned int word = 0, want;
	int result[2], ret, status;
	double t;
	pid_t pid;

	node_write(1, "access_hold", "1\n");
	if (pipe(result))
		die("pipe", errno);
	pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (!pid) {
		close(result[0]);
		ret = npa_read(1, npa, &word);
		_exit(write(result[1], &ret, sizeof(ret)) != sizeof(ret) ||
		      write(result[1], &word, sizeof(word)) != sizeof(word));
	}
	close(result[1]);	/* a child that died makes the read below fail */
	t = now_s();
	while (!access_held(1, 1) && now_s() < t + 30)
		usleep(20 * 1000);
	check(access_held(1, 1), "restart-read-held",
	      "accelerator 1's read of the dead accelerator 2's buffer waits in flight");
	put("a.held", "1");
	t = now_s();
	while (boots(2) < 2 && now_s() < t + WAIT_S)
		usleep(10 * 1000);
	printf("pod: B's new life of accelerator 2 started %.1f s after the read was held\n",
	       now_s() - t);
	node_write(1, "access_hold", "0\n");
	if (read(result[0], &ret, sizeof(ret)) != sizeof(ret) ||
	    read(result[0], &word, sizeof(word)) != sizeof(word))
		die("the read in flight", EIO);
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid", errno);
	close(result[0]);
	fill(&want, sizeof(want), 0x2);
	check(!ret && word == want, "restart-read-gets-old-life",
	      "the read in flight across the restart gets the old life's bytes: %s",
	      ret ? strerror(-ret) : word == want ? "the pattern" :
	      word ? "other bytes" : "zeroes");
}

static void guest_a(void)
{
	static unsigned int buf[BUF_SIZE / 4];
	char text[UALINK_HANDLE_STRLEN], old[UALINK_HANDLE_STRLEN], line[128];
	int fd0 = open_accel(0), fd1 = open_accel(1), dmabuf, ret;
	unsigned int gem0, gem0b, imp, imp_old;
	int dmabuf2, dmabuf_old;
	unsigned long long npa_old, npa_new, gen_old[2], gen_new[2];
	long long d[2], probes[2], acks[2], hellos;
	long grants, imports, faults;
	double t;

	short_timeout(0);
	short_timeout(1);
	/*
	 * Accelerator 1 never probes its peers: its import of accelerator
	 * 2's old life then survives, unknown to it, until the new life
	 * exports at the same NPA, where the new access table, not the
	 * keepalive, must refuse it. Accelerator 0 keeps the default.
	 */
	node_write(1, "keepalive", "0\n");
	check(vpod_move_refused(), "move-vpod-refused",
	      "moving an accelerator to another virtual pod is refused (EOPNOTSUPP): the other kernel would not hear of it");
	show_counts("before", 0);
	gem0 = filled_buffer(fd0, 0xa);
	check(export(fd0, gem0, text) == 0, "export-0", "accelerator 0 exported %s", text);
	put("a.handle", text);

	/* 1: both ways through the fabric */
	get("b.handle", line, sizeof(line));
	show_counts("while B holds an import", 0);
	faults = count(0, "fabric_faults");
	put_npa("a.npa", state_npa(0, "export", text));
	check(count(0, "grants") == 1, "grant-to-b",
	      "accelerator 0 grants its buffer to B's importer");
	memset(buf, 0, sizeof(buf));
	ret = gpu_access(fd0, gem0, 0, buf, BUF_SIZE, 0);
	check(!ret && !mismatch(buf, BUF_SIZE / 2, 0xa), "own-lower-half-intact",
	      "lower half of our buffer still ours");
	check(!ret && !mismatch(buf + BUF_SIZE / 8, BUF_SIZE / 2, 0xb), "fabric-write-from-b",
	      "upper half of our buffer holds what guest B wrote through the fabric (%zu words differ)",
	      mismatch(buf + BUF_SIZE / 8, BUF_SIZE / 2, 0xb));
	cpu_check(fd0, gem0);
	imp = import(fd1, line, &dmabuf, "import-b");
	memset(buf, 0, sizeof(buf));
	ret = gpu_access(fd1, imp, 0, buf, BUF_SIZE, 0);
	check(!ret && !mismatch(buf, BUF_SIZE, 0xc), "acc1-reads-b",
	      "accelerator 1 reads guest B's buffer through the fabric: %s",
	      verdict(ret, buf, BUF_SIZE, 0xc));
	show_counts("holding B's buffer", 1);
	check(count(1, "imports") == 1, "acc1-holds-import", "accelerator 1 holds one import");
	/*
	 * An import of B's accelerator 2 that accelerator 1 keeps across B's
	 * death and new life without sending 2 anything: it still points at
	 * 2's window once the new life exports there.
	 */
	get("b.handle2", line, sizeof(line));
	imp_old = import(fd1, line, &dmabuf_old, "import-acc2-old-life");
	npa_old = state_npa(1, "import", line);
	ret = gpu_access(fd1, imp_old, 0, buf, 4096, 0);
	check(!ret, "acc1-reads-acc2-old-life",
	      "accelerator 1 reads accelerator 2's buffer while its grant holds: %s",
	      ret ? strerror(-ret) : "done");
	/*
	 * The anchor of the keepalive's verdict below: while B lives, the
	 * idle connection of accelerators 0 and 2 is probed (by whichever
	 * side's keepalive fires first: the other then hears from its peer
	 * and has no need to) and answered, and nothing ends. Up to 20 s:
	 * a probe goes out 2-2.5 s after the last message.
	 */
	hellos = peer_stat(0, 2, "hello", "received");
	acks[0] = peer_stat(0, 2, "hello_ack", "received");
	acks[1] = peer_stat(0, 2, "hello_ack", "sent");
	probes[0] = peer_counter(0, 2, "probes");
	t = now_s();
	while (peer_counter(0, 2, "probes") == probes[0] &&
	       peer_stat(0, 2, "hello", "received") == hellos && now_s() < t + 20)
		usleep(100 * 1000);
	/* the probe's answer (HELLO_ACK), whichever side probed */
	while (peer_stat(0, 2, "hello_ack", "received") == acks[0] &&
	       peer_stat(0, 2, "hello_ack", "sent") == acks[1] && now_s() < t + 25)
		usleep(50 * 1000);
	check((peer_counter(0, 2, "probes") > probes[0] ||
	       peer_stat(0, 2, "hello", "received") > hellos) &&
	      peer_established(0, 2) && peer_counter(0, 2, "resets") == 0 &&
	      count(0, "grants") >= 1,
	      "keepalive-live-peer-kept",
	      "accelerators 0 and 2 probed each other while idle (probes sent by 0: %lld, by 2: %lld); the connection stands, %ld grant(s) kept",
	      peer_counter(0, 2, "probes"), peer_stat(0, 2, "hello", "received") - 1,
	      count(0, "grants"));
	/* B's accelerator 3 was refused at our access table: we count it */
	get("b.refused", line, sizeof(line));
	check(count(0, "fabric_faults") == faults + 1, "owner-counts-remote-refusal",
	      "accelerator 0 counts the refusal of accelerator 3's read in another kernel: %ld -> %ld",
	      faults, count(0, "fabric_faults"));
	put("a.done", "1");

	/*
	 * 2: the host stops B's QEMU: a guest that hangs, and nobody tells
	 * us. Accelerator 0's keepalive finds 2 lost (3 had no connection
	 * with it yet) and revokes 2's grant; B comes back once we say so.
	 */
	owner_finds_stopped(0, 2, "b.stopped", "a.saw-lost");

	/* 3: B dies; nobody tells us */
	get("killed", line, sizeof(line));
	printf("pod: the host killed guest B (%s)\n", line);
	show_counts("after B died", 0);
	show_counts("after B died", 1);
	grants = count(0, "grants");
	/* 2's grant, and 3's if the loop held one when B died */
	printf("pod: covered: guest B's loop %s a grant of accelerator 0 at the kill\n",
	       grants >= 2 ? "held" : "did not hold");
	check(peer_stat(0, 3, "npa_req", "received") >= 4, "b-loop-reached-a",
	      "guest B's loop reached accelerator 0: %lld first imports from accelerator 3",
	      peer_stat(0, 3, "npa_req", "received"));
	gen_old[0] = peer_generation(0, 2);
	gen_old[1] = peer_generation(0, 3);
	printf("pod: accelerator 0 knows generations %#llx and %#llx of 2 and 3\n",
	       gen_old[0], gen_old[1]);
	/*
	 * Nothing tells accelerator 0 and it asks B for nothing: its
	 * keepalive finds both of B's accelerators lost, within the
	 * keepalive (2 s, probed within 2.5 s) and the timeout (2 s) after
	 * their last message, and their grants go.
	 */
	t = now_s();
	while ((peer_established(0, 2) || peer_established(0, 3)) &&
	       now_s() < t + 30)
		usleep(100 * 1000);
	check(!peer_established(0, 2) && !peer_established(0, 3),
	      "keepalive-finds-dead-guest",
	      "accelerator 0, asking nothing, found accelerators 2 and 3 lost %.1f s after it read of the kill (probes it sent them in all: %lld, %lld)",
	      now_s() - t, peer_counter(0, 2, "probes"), peer_counter(0, 3, "probes"));
	check(grants >= 1 && wait_count(0, "grants", 0) == 0,
	      "keepalive-drops-dead-grants",
	      "accelerator 0 revoked the dead guest's %ld grant(s) on its own: %ld left",
	      grants, count(0, "grants"));
	/*
	 * Until it learns of the loss, the import stands: the dead guest's
	 * memory and page tables are still in the region, and a read shows
	 * what B last wrote (the fault once it knows is asserted below).
	 */
	memset(buf, 0, sizeof(buf));
	ret = gpu_access(fd1, imp, 0, buf, 4096, 0);
	check(!ret && !mismatch(buf, 4096, 0xc), "dead-buffer-reads-until-known",
	      "accelerator 1's import of the dead guest's buffer, before it knows: %s",
	      verdict(ret, buf, 4096, 0xc));

	/* accelerator 0 asks the dead accelerator 2 for a buffer */
	get("b.handle2", line, sizeof(line));
	t = now_s();
	ret = try_import(fd0, line, &dmabuf2);
	check(ret == -ETIMEDOUT || ret == -ENOLINK, "import-from-dead-acc2-fails",
	      "accelerator 0: importing accelerator 2's buffer fails after %.1f s: %s",
	      now_s() - t, ret ? ualink_strerror(ret) : "it worked");
	if (!ret)
		close(dmabuf2);
	show_peer(0, 2);

	/* accelerator 1 asks the dead accelerator 3 for another buffer */
	get("b.handle3", line, sizeof(line));
	t = now_s();
	ret = try_import(fd1, line, &dmabuf2);
	check(ret == -ETIMEDOUT || ret == -ENOLINK, "import-from-dead-acc3-fails",
	      "accelerator 1: importing accelerator 3's second buffer fails after %.1f s: %s",
	      now_s() - t, ret ? ualink_strerror(ret) : "it worked");
	if (!ret)
		close(dmabuf2);
	/* the import is killed by a worker once the loss is known */
	ret = until_fault(fd1, imp, &t);
	check(ret == -ENODEV, "dead-import-faults",
	      "accelerator 1 found accelerator 3 lost and revoked its import: the GPU access faults (%s, %.1f s after the failed import)",
	      ret ? strerror(-ret) : "it still reads", t);
	show_peer(1, 3);
	drmCloseBufferHandle(fd1, imp);
	close(dmabuf);
	check(wait_count(1, "imports", 1) == 1, "dead-import-released",
	      "accelerator 1 holds no import of accelerator 3 any more (one of 2's left)");
	/* nothing told accelerator 1 that 2 died: its import of 2 stands */
	ret = gpu_access(fd1, imp_old, 0, buf, 4096, 0);
	check(!ret && !mismatch(buf, 4096, 0x2), "old-life-import-stands",
	      "accelerator 1 still reads the dead accelerator 2's buffer: %s",
	      verdict(ret, buf, 4096, 0x2));
	restart_under_read(npa_old);

	/* the survivors keep working with each other */
	get("a.handle", line, sizeof(line));
	imp = import(fd1, line, &dmabuf, "import-a");
	ret = gpu_access(fd1, imp, 0, buf, BUF_SIZE / 2, 0);
	check(!ret && !mismatch(buf, BUF_SIZE / 2, 0xa), "survivors-import-and-read",
	      "accelerator 1 imports and reads accelerator 0's buffer meanwhile: %s",
	      verdict(ret, buf, BUF_SIZE / 2, 0xa));
	drmCloseBufferHandle(fd1, imp);
	close(dmabuf);
	wait_count(1, "imports", 1);
	show_counts("after the timeouts", 0);
	show_counts("after the timeouts", 1);

	/* 4: B is back, with new generations; a new buffer for it */
	gem0b = filled_buffer(fd0, 0xe);
	export(fd0, gem0b, text);
	put("a.handle2", text);
	get("b2.handle", line, sizeof(line));
	put_npa("a.npa2", state_npa(0, "export", text));
	/*
	 * The new life of accelerator 2 exported a buffer at the NPA the old
	 * life's was at; its access table knows nothing of accelerator 1.
	 */
	gen_new[0] = peer_generation(0, 2);
	gen_new[1] = peer_generation(0, 3);
	check(gen_old[0] && gen_old[1] && gen_new[0] && gen_new[1] &&
	      gen_new[0] != gen_old[0] && gen_new[1] != gen_old[1],
	      "new-life-new-generation",
	      "accelerator 0 knows new generations of 2 and 3: %#llx -> %#llx, %#llx -> %#llx",
	      gen_old[0], gen_new[0], gen_old[1], gen_new[1]);
	/* a handle of accelerator 3's old life names nothing in the new one */
	get("b.handle", old, sizeof(old));
	ret = try_import(fd1, old, &dmabuf2);
	check(ret == -ENOENT, "old-life-handle-refused",
	      "accelerator 1 imports accelerator 3's old-life handle %s: %s",
	      old, ret ? ualink_strerror(ret) : "it worked");
	if (!ret)
		close(dmabuf2);
	npa_new = get_npa("b2.npa2");
	check(npa_old == npa_new, "old-life-npa-reused",
	      "accelerator 2's new life exported at the NPA of its old life's buffer (%#llx, %#llx)",
	      npa_old, npa_new);
	memset(buf, 0, 4096);
	imports = count(1, "imports");
	ret = gpu_access(fd1, imp_old, 0, buf, 4096, 0);
	check(ret == -ENODEV, "old-life-import-refused",
	      "accelerator 1's import of accelerator 2's old life (%s), at its new life's buffer: %s",
	      imports == 1 ? "still held" :
	      "already dropped", !ret && !mismatch(buf, 4096, 0xf) ?
	      "it reads the new life's buffer" : ret ? strerror(-ret) : "it reads");
	drmCloseBufferHandle(fd1, imp_old);
	close(dmabuf_old);
	wait_count(1, "imports", 0);
	check(boots(2) == 2 && boots(3) == 2, "second-boot-counted",
	      "the region counts a second boot of accelerators 2 and 3 (%d, %d)",
	      boots(2), boots(3));
	show_counts("after B came back and imported the new buffer on 2 and 3", 0);
	check(count(0, "grants") == 2, "dead-grants-dropped",
	      "accelerator 0 holds exactly the new guest's two grants: the dead guest's grants of the first buffer stay dropped (%s)",
	      grants >= 2 ? "the loop's among them" : "the loop held none at the kill");
	/* B's new lives went on from the ring indices its old ones left */
	d[0] = show_peer(0, 2);
	d[1] = show_peer(0, 3);
	check(!d[0] && !d[1], "restart-rings-no-drop",
	      "accelerator 0 dropped nothing of the restarted accelerators' rings (%lld, %lld)",
	      d[0], d[1]);
	imp = import(fd1, line, &dmabuf, "import-restarted");
	memset(buf, 0, sizeof(buf));
	ret = gpu_access(fd1, imp, 0, buf, BUF_SIZE, 0);
	check(!ret && !mismatch(buf, BUF_SIZE, 0xd), "acc1-reads-restarted",
	      "accelerator 1 reads the restarted guest's buffer through the fabric: %s",
	      verdict(ret, buf, BUF_SIZE, 0xd));
	put("a.done2", "1");

	/*
	 * 4b: across kernels, accelerator 0 goes offline and comes back,
	 * then resets, each when B says it is ready to look
	 */
	get("b2.offline-me", line, sizeof(line));
	node_write(0, "control", "offline\n");
	put("a.acc0-offline", "1");
	get("b2.offline-seen", line, sizeof(line));
	node_write(0, "control", "online\n");
	put("a.acc0-online", "1");
	get("b2.reset-me", line, sizeof(line));
	node_write(0, "control", "reset\n");
	put("a.acc0-reset", "1");

	/* 5: release everything */
	get("b2.released", line, sizeof(line));
	drmCloseBufferHandle(fd1, imp);
	close(dmabuf);
	drmCloseBufferHandle(fd0, gem0);
	drmCloseBufferHandle(fd0, gem0b);
	close(fd0);
	close(fd1);
	wait_count(0, "exports", 0);
	wait_count(1, "imports", 0);
	show_counts("after", 0);
	show_counts("after", 1);
	check_zero(0);
	check_zero(1);
	put("a.end", "1");
}

/* B's first life: it ends killed, in the loop. */
static void guest_b(void)
{
	static unsigned int buf[BUF_SIZE / 4];
	char text[UALINK_HANDLE_STRLEN], line[128];
	int fd2 = open_accel(2), fd3 = open_accel(3), dmabuf, ret;
	unsigned int imp, gem3, n, done, word;
	unsigned long long npa;

	show_counts("before", 2);
	get("a.handle", line, sizeof(line));
	imp = import(fd2, line, &dmabuf, "import-a");
	ret = gpu_access(fd2, imp, 0, buf, BUF_SIZE, 0);
	check(!ret && !mismatch(buf, BUF_SIZE, 0xa), "acc2-reads-a",
	      "accelerator 2 reads guest A's buffer through the fabric: %s",
	      verdict(ret, buf, BUF_SIZE, 0xa));
	fill(buf, BUF_SIZE / 2, 0xb);
	ret = gpu_access(fd2, imp, BUF_SIZE / 2, buf, BUF_SIZE / 2, 1);
	check(!ret, "acc2-writes-a", "accelerator 2 writes the upper half through the fabric");
	show_counts("holding A's buffer", 2);

	gem3 = filled_buffer(fd3, 0xc);
	check(export(fd3, gem3, text) == 3, "export-3", "accelerator 3 exported %s", text);
	put("b.handle", text);
	/* two more, which A asks for once we are dead */
	/* with bytes of its own: the old life's, which a restart must not zero under a read */
	check(export(fd2, filled_buffer(fd2, 0x2), text) == 2, "export-2-second",
	      "accelerator 2 exported %s", text);
	put("b.handle2", text);
	check(export(fd3, gem_create(fd3), text) == 3, "export-3-third",
	      "accelerator 3 exported %s", text);
	put("b.handle3", text);
	/* the owner's access table, read by another kernel's fabric */
	npa = get_npa("a.npa");
	check_npa_reads(2, npa, 0xa, "acc2-npa-granted", "which accelerator 0 granted it");
	ret = npa_read(3, npa, &word);
	check(ret == -ENODEV, "acc3-never-granted-refused",
	      "accelerator 3, never granted NPA %#llx, is refused: %s",
	      npa, ret ? strerror(-ret) : "it reads");
	put("b.refused", "1");
	get("a.done", line, sizeof(line));
	show_counts("while A holds an import", 3);
	check(count(3, "grants") == 1, "grant-to-a", "accelerator 3 grants its buffer to A's importer");

	/*
	 * 2: the host stops our QEMU until accelerator 0 has found us lost,
	 * then lets us go on. Coming back, our keepalive probes 0, which no
	 * longer has the connection and greets us: 2 ends it on its side
	 * too, and drops the import, which A's access table refuses already.
	 * A new import of the same handle works.
	 */
	importer_back_from_stop(fd2, 2, 0, imp, "b.stop-me", "b.continued");
	ret = npa_read(2, npa, &word);
	check(ret == -ENODEV, "hung-npa-refused",
	      "accelerator 0's access table refuses accelerator 2 the NPA %#llx it read before the hang: %s",
	      npa, ret ? strerror(-ret) : "it reads");
	drmCloseBufferHandle(fd2, imp);
	close(dmabuf);
	get("a.handle", line, sizeof(line));
	imp = import(fd2, line, &dmabuf, "hung-guest-reimports");
	ret = gpu_access(fd2, imp, 0, buf, BUF_SIZE / 2, 0);
	check(!ret && !mismatch(buf, BUF_SIZE / 2, 0xa), "hung-guest-reads-again",
	      "accelerator 2 reads A's buffer again through a new import: %s",
	      verdict(ret, buf, BUF_SIZE / 2, 0xa));

	/* 3: first imports and releases until the host kills us */
	get("a.handle", line, sizeof(line));
	for (n = 0, done = 0;; n++) {
		unsigned int g;

		ret = try_import(fd3, line, &dmabuf);
		if (ret) {
			printf("pod: import %u: %s\n", n, ualink_strerror(ret));
			continue;
		}
		if (!drmPrimeFDToHandle(fd3, dmabuf, &g))
			drmCloseBufferHandle(fd3, g);
		close(dmabuf);
		if (++done == 4)	/* it works: the host may kill us now */
			put("b.looping", "1");
		if (n % 16 == 0)
			printf("pod: import and release %u\n", n);
	}
}

/* B's second life, on the region its first left. */
static void guest_b2(void)
{
	static unsigned int buf[BUF_SIZE / 4];
	char text[UALINK_HANDLE_STRLEN], line[128], a2[sizeof(line)];
	int fd2 = open_accel(2), fd3 = open_accel(3), dmabuf2, dmabuf3, ret;
	int dmabuf2n;
	unsigned int imp2, imp3, imp2n, gem2, gem3, word;
	unsigned long long npa, gen;
	long long d[3];
	double t;

	short_timeout(2);
	short_timeout(3);
	show_counts("before", 2);
	show_counts("before", 3);
	/* A's read of our old life's memory, held in flight at our start */
	check(count(2, "start_waits") == 1 && count(2, "start_timeouts") == 0,
	      "restart-waited-for-read",
	      "accelerator 2's start waited for A's read of its old life's memory (%ld waited, %ld gave up)",
	      count(2, "start_waits"), count(2, "start_timeouts"));
	check(count(3, "start_waits") == 0, "restart-no-wait-without-read",
	      "accelerator 3's start found nothing in flight (%ld waited)",
	      count(3, "start_waits"));
	get("a.handle2", line, sizeof(line));
	memcpy(a2, line, sizeof(a2));
	imp2 = import(fd2, line, &dmabuf2, "import-a-new-on-2");
	imp3 = import(fd3, line, &dmabuf3, "import-a-new-on-3");
	ret = gpu_access(fd2, imp2, 0, buf, BUF_SIZE, 0);
	check(!ret && !mismatch(buf, BUF_SIZE, 0xe), "acc2-reads-a-new",
	      "accelerator 2 reads guest A's new buffer through the fabric: %s",
	      verdict(ret, buf, BUF_SIZE, 0xe));
	/*
	 * A buffer at the NPA of our old life's, which A still imports:
	 * mapped there once accelerator 3 imports it, and granted to 3 only.
	 */
	gem2 = filled_buffer(fd2, 0xf);
	check(export(fd2, gem2, text) == 2, "export-2-new-life",
	      "accelerator 2 exported %s", text);
	imp2n = import(fd3, text, &dmabuf2n, "import-2-new-life-on-3");
	put_npa("b2.npa2", state_npa(2, "export", text));
	gem3 = filled_buffer(fd3, 0xd);
	check(export(fd3, gem3, text) == 3, "export-3", "accelerator 3 exported %s", text);
	put("b2.handle", text);
	npa = get_npa("a.npa2");
	check_npa_reads(2, npa, 0xe, "acc2-npa-granted-new", "A's new buffer, while granted");
	get("a.done2", line, sizeof(line));
	show_counts("while A holds an import", 3);
	check(count(3, "grants") == 1, "grant-to-a", "accelerator 3 grants its buffer to A's importer");

	/* accelerator 2 lets go: its grant is revoked, 3's stays */
	drmCloseBufferHandle(fd2, imp2);
	close(dmabuf2);
	wait_count(2, "imports", 0);
	t = now_s();
	while (!(ret = npa_read(2, npa, &word)) && now_s() < t + 30)
		usleep(50 * 1000);
	check(ret == -ENODEV, "acc2-revoked-refused",
	      "accelerator 2's read of NPA %#llx after its release: %s (%.1f s)",
	      npa, ret ? strerror(-ret) : "it still reads", now_s() - t);
	check_npa_reads(3, npa, 0xe, "acc3-still-granted", "still granted");

	/*
	 * The owner, accelerator 0, goes offline in A's kernel: nobody tells
	 * us, but its side of the fabric drops every importer, so our read
	 * that just worked is refused.
	 */
	put("b2.offline-me", "1");
	get("a.acc0-offline", line, sizeof(line));
	t = now_s();
	while (!(ret = npa_read(3, npa, &word)) && now_s() < t + 10)
		usleep(50 * 1000);
	check(ret == -ENODEV, "owner-offline-refused",
	      "accelerator 3's read of NPA %#llx once accelerator 0 is offline: %s (%.1f s after A said so)",
	      npa, ret ? strerror(-ret) : "it still reads", now_s() - t);
	put("b2.offline-seen", "1");
	get("a.acc0-online", line, sizeof(line));
	/* back online, it has no connection with us: our keepalive learns */
	ret = until_fault(fd3, imp3, &t);
	check(ret == -ENODEV, "owner-offline-import-revoked",
	      "accelerator 3's import of A's buffer is revoked once its keepalive found accelerator 0's side gone: %s (%.1f s)",
	      ret ? strerror(-ret) : "it still reads", t);
	drmCloseBufferHandle(fd3, imp3);
	close(dmabuf3);
	imp3 = import(fd3, a2, &dmabuf3, "import-after-owner-online");
	ret = gpu_access(fd3, imp3, 0, buf, BUF_SIZE, 0);
	check(!ret && !mismatch(buf, BUF_SIZE, 0xe), "reads-after-owner-online",
	      "accelerator 3 reads A's buffer through a new import: %s",
	      verdict(ret, buf, BUF_SIZE, 0xe));
	/* the owner resets: it greets us with its new generation at once */
	gen = peer_generation(3, 0);
	put("b2.reset-me", "1");
	get("a.acc0-reset", line, sizeof(line));
	ret = until_fault(fd3, imp3, &t);
	check(ret == -ENODEV, "owner-reset-import-revoked",
	      "accelerator 3's import of A's buffer is revoked by accelerator 0's reset: %s (%.1f s)",
	      ret ? strerror(-ret) : "it still reads", t);
	check(gen && peer_generation(3, 0) && peer_generation(3, 0) != gen,
	      "owner-reset-new-generation",
	      "accelerator 3 knows accelerator 0's new generation: %#llx -> %#llx",
	      gen, peer_generation(3, 0));
	drmCloseBufferHandle(fd3, imp3);
	close(dmabuf3);
	drmCloseBufferHandle(fd3, imp2n);
	close(dmabuf2n);
	wait_count(3, "imports", 0);
	put("b2.released", "1");
	get("a.end", line, sizeof(line));
	drmCloseBufferHandle(fd3, gem3);
	drmCloseBufferHandle(fd2, gem2);
	close(fd2);
	close(fd3);
	wait_count(2, "exports", 0);
	wait_count(3, "exports", 0);
	d[0] = show_peer(2, 0);
	d[1] = show_peer(3, 0);
	d[2] = show_peer(3, 1);
	check(!d[0] && !d[1] && !d[2], "rings-no-drop",
	      "accelerators 2 and 3 dropped nothing of guest A's rings (%lld, %lld, %lld)",
	      d[0], d[1], d[2]);
	show_counts("after", 2);
	show_counts("after", 3);
	check_zero(2);
	check_zero(3);
}

/* Does this kernel's log say @text (the vpod's line on the region)? */
static int dmesg_says(const char *text)
{
	char line[512];
	FILE *p = popen("dmesg", "r");
	int found = 0;

	if (!p)
		die("dmesg", errno);
	while (fgets(line, sizeof(line), p))
		found |= !!strstr(line, text);
	pclose(p);
	return found;
}

static const char quad_roles[] = "wxyz";

/*
 * An access in flight when its grant goes, in the owner's kernel (z,
 * accelerator 3): it exports a buffer, which y imports; once y's read of
 * it waits in flight, z ends the export. The end must wait for that read
 * before the memory goes: the shootdown finds the read announced in the
 * region. Meanwhile z makes a new buffer, which would take the memory
 * were it free already, and y's read would return its bytes. Then a read
 * that does not end: z's wait gives up after a quarter of its mailbox
 * timeout, the shootdown fails and the export ends.
 */
/* A counter of the ualink/ sysfs directory of @fd's device. */
static long sysfs_count(int fd, const char *attr)
{
	char buf[64];
	int ret = ualink_sysfs_read(fd, attr, buf, sizeof(buf));

	if (ret < 0)
		die(attr, ret);
	return strtol(buf, NULL, 10);
}

static void quad_owner_waits(int fd)
{
	char text[UALINK_HANDLE_STRLEN], line[64];
	unsigned int gem = filled_buffer(fd, 0x63), gem4;
	long waits, now_waits, timeouts, pins, gaveup, left, errors;
	int status;
	double t;
	pid_t pid;

	check(export(fd, gem, text) == 3, "inflight-export",
	      "accelerator 3 exported %s", text);
	put("z.handle3", text);
	get("y.held", line, sizeof(line));
	waits = count(3, "shootdown_waits");
	timeouts = count(3, "shootdown_timeouts");
	pins = count(3, "pins");
	/* the export ends with its last handle; the close may wait for it */
	pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (!pid)
		_exit(drmCloseBufferHandle(fd, gem) ? 1 : 0);
	t = now_s();
	do {
		usleep(20 * 1000);
		now_waits = count(3, "shootdown_waits");
		left = count(3, "pins");
	} while (now_waits == waits && left == pins && now_s() < t + 30);
	check(now_waits == waits + 1 && left == pins, "inflight-revoke-waits",
	      "the end of accelerator 3's export waits for accelerator 2's read in flight, the buffer still pinned (shootdown waits %ld -> %ld, pins %ld -> %ld)",
	      waits, now_waits, pins, left);
	gem4 = filled_buffer(fd, 0x64);
	put("z.waiting", "1");
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid", errno);
	check(WIFEXITED(status) && !WEXITSTATUS(status), "inflight-handle-closed",
	      "the export's GEM handle is closed");
	left = wait_count(3, "pins", pins - 1);
	check(left == pins - 1, "inflight-unpinned",
	      "once the read ended, the export ends: %ld pins left of %ld",
	      left, pins);
	check(count(3, "shootdown_timeouts") == timeouts, "inflight-no-timeout",
	      "no shootdown of accelerator 3 gave up waiting (%ld)",
	      count(3, "shootdown_timeouts"));
	drmCloseBufferHandle(fd, gem4);

	/*
	 * The same with a read that does not end (y's kernel hung, or lying
	 * in the region): the wait is bounded by a quarter of the mailbox
	 * timeout (5 s here), then the shootdown fails and the export ends
	 * all the same.
	 */
	gem = filled_buffer(fd, 0x65);
	check(export(fd, gem, text) == 3, "stuck-export", "accelerator 3 exported %s", text);
	put("z.handle5", text);
	get("y.held5", line, sizeof(line));
	waits = count(3, "shootdown_waits");
	timeouts = count(3, "shootdown_timeouts");
	pins = count(3, "pins");
	errors = sysfs_count(fd, "shootdown_errors");
	pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (!pid)
		_exit(drmCloseBufferHandle(fd, gem) ? 1 : 0);
	check(wait_count(3, "shootdown_waits", waits + 1) == waits + 1, "stuck-revoke-waits",
	      "the end of the export waits for accelerator 2's read in flight");
	t = now_s();
	gaveup = wait_count(3, "shootdown_timeouts", timeouts + 1);
	t = now_s() - t;
	left = wait_count(3, "pins", pins - 1);
	/* a quarter of the 5 s timeout: well within the peers' own */
	check(gaveup == timeouts + 1 && t < 4 && left == pins - 1,
	      "stuck-wait-bounded",
	      "it gives up %.1f s later (a quarter of the 5 s timeout), and the export ends: %ld pins left of %ld",
	      t, left, pins);
	check(sysfs_count(fd, "shootdown_errors") == errors + 1, "stuck-shootdown-failed",
	      "the core counts the shootdown as unacknowledged (shootdown_errors %ld -> %ld)",
	      errors, sysfs_count(fd, "shootdown_errors"));
	put("z.gaveup", "1");
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid", errno);
}


/*
 * The importer's side of quad_owner_waits(), in y (accelerator 2): a read
 * in flight that ends when z waits for it, then one that outlives z's
 * wait.
 */
static void quad_access_in_flight(int fd)
{
	unsigned int gem, word = 0, want;
	unsigned long long npa;
	int dmabuf, result[2], ret;
	char line[128], path[512];
	int status;
	double t;
	pid_t pid;

	get("z.handle3", line, sizeof(line));
	gem = import(fd, line, &dmabuf, "inflight-import");
	npa = state_npa(2, "import", line);
	check_npa_reads(2, npa, 0x63, "inflight-reads-before", "granted");
	node_write(2, "access_hold", "1\n");
	if (pipe(result))
		die("pipe", errno);
	pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (!pid) {
		close(result[0]);
		ret = npa_read(2, npa, &word);
		_exit(write(result[1], &ret, sizeof(ret)) != sizeof(ret) ||
		      write(result[1], &word, sizeof(word)) != sizeof(word));
	}
	close(result[1]);	/* a child that died makes the read below fail */
	t = now_s();
	while (!access_held(2, 1) && now_s() < t + 30)
		usleep(20 * 1000);
	check(access_held(2, 1), "inflight-held",
	      "accelerator 2's read of accelerator 3's buffer passed the check and waits in flight");
	put("y.held", "1");
	/* z waits a quarter of its 5 s timeout for the read: poll quickly */
	snprintf(path, sizeof(path), "%s/z.waiting", dir);
	t = now_s();
	while (access(path, F_OK) && now_s() < t + WAIT_S)
		usleep(10 * 1000);
	node_write(2, "access_hold", "0\n");
	if (read(result[0], &ret, sizeof(ret)) != sizeof(ret) ||
	    read(result[0], &word, sizeof(word)) != sizeof(word))
		die("the read in flight", EIO);
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid", errno);
	close(result[0]);
	fill(&want, sizeof(want), 0x63);
	check(!ret && word == want, "inflight-read-completes",
	      "the read in flight gets the bytes of the buffer it was granted: %s",
	      ret ? strerror(-ret) : word == want ? "the pattern" : "other bytes");
	ret = npa_read(2, npa, &word);
	check(ret == -ENODEV, "inflight-then-refused",
	      "the next read of that NPA is refused: %s",
	      ret ? strerror(-ret) : "it reads");
	drmCloseBufferHandle(fd, gem);
	close(dmabuf);

	/* a read that outlives z's wait: whatever it reads is not checked */
	get("z.handle5", line, sizeof(line));
	gem = import(fd, line, &dmabuf, "stuck-import");
	npa = state_npa(2, "import", line);
	check_npa_reads(2, npa, 0x65, "stuck-reads-before", "granted");
	node_write(2, "access_hold", "1\n");
	pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (!pid)
		_exit(npa_read(2, npa, &word) == -ENODEV);
	t = now_s();
	while (!access_held(2, 1) && now_s() < t + 30)
		usleep(20 * 1000);
	check(access_held(2, 1), "stuck-held", "accelerator 2's read waits in flight");
	put("y.held5", "1");
	get("z.gaveup", line, sizeof(line));
	node_write(2, "access_hold", "0\n");
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid", errno);
	ret = npa_read(2, npa, &word);
	check(ret == -ENODEV, "stuck-then-refused",
	      "the next read of that NPA is refused: %s",
	      ret ? strerror(-ret) : "it reads");
	drmCloseBufferHandle(fd, gem);
	close(dmabuf);
}

/* Ring indices of ours another kernel overwrote, which the poller wrote back. */
static long rings_healed(void)
{
	FILE *f = fopen(DEBUGFS "/rings_healed", "r");
	long n = -1;

	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

/*
 * A hang in the pod of four: the host stops y's QEMU (SIGSTOP) while y
 * imports z's buffer. Z's keepalive finds accelerator 2 lost and drops
 * its grant; then the host lets y go on (SIGCONT). Back, y's keepalive
 * probe finds its connection with z ended: its import faults, and a new
 * import of the same handle reads.
 */
static void quad_hang(int fd, unsigned int me, const char *other_h2)
{
	static unsigned int buf[BUF_SIZE / 4];
	unsigned int imp;
	int dmabuf, ret;

	if (me == 3) {
		owner_finds_stopped(3, 2, "y.stopped", "z.saw-lost");
		return;
	}
	imp = import(fd, other_h2, &dmabuf, "stop-import");
	ret = gpu_access(fd, imp, 0, buf, BUF_SIZE, 0);
	check(!ret && !mismatch(buf, BUF_SIZE, 0x53), "stop-reads-before",
	      "accelerator 2 reads accelerator 3's buffer before the hang: %s",
	      verdict(ret, buf, BUF_SIZE, 0x53));
	importer_back_from_stop(fd, 2, 3, imp, "y.stop-me", "y.continued");
	drmCloseBufferHandle(fd, imp);
	close(dmabuf);
	imp = import(fd, other_h2, &dmabuf, "hung-guest-reimports");
	ret = gpu_access(fd, imp, 0, buf, BUF_SIZE, 0);
	check(!ret && !mismatch(buf, BUF_SIZE, 0x53), "hung-guest-reads-again",
	      "accelerator 2 reads accelerator 3's buffer again through a new import: %s",
	      verdict(ret, buf, BUF_SIZE, 0x53));
	drmCloseBufferHandle(fd, imp);
	close(dmabuf);
}

/*
 * In the pod of four, after an event that may have ended the connection
 * (@why): accelerator @me imports the other survivor's buffer @other_h2
 * again, retrying for a minute at most while the connection is made
 * again, and reads it; asserted as @id_import and @id_reads.
 */
static void reconnects(int fd, unsigned int me, const char *other_h2,
		       const char *id_import, const char *id_reads, const char *why)
{
	static unsigned int buf[BUF_SIZE / 4];
	unsigned int other = 5 - me, imp;
	int dmabuf, ret;
	double t = now_s();

	do {
		ret = try_import(fd, other_h2, &dmabuf);
		if (ret)
			usleep(200 * 1000);
	} while (ret && now_s() < t + 60);
	check(!ret, id_import, "accelerator %u imports accelerator %u's buffer %s: %s (%.1f s)",
	      me, other, why, ret ? ualink_strerror(ret) : "done", now_s() - t);
	if (ret)
		exit(1);
	if (drmPrimeFDToHandle(fd, dmabuf, &imp))
		die("PRIME fd to handle", errno);
	ret = gpu_access(fd, imp, 0, buf, BUF_SIZE, 0);
	check(!ret && !mismatch(buf, BUF_SIZE, 0x50 + other), id_reads,
	      "accelerator %u reads accelerator %u's buffer %s: %s",
	      me, other, why, verdict(ret, buf, BUF_SIZE, 0x50 + other));
	drmCloseBufferHandle(fd, imp);
	close(dmabuf);
	wait_count(me, "imports", 0);
}

/*
 * A partition in the pod of four: y and z, both alive, stop hearing each
 * other (each drops every message it sends: debugfs fault drop). Each
 * side's keepalive finds the other lost: its grant to the other is
 * dropped and its import of the other's buffer faults. Once the partition
 * heals, each imports the other's buffer again and reads it.
 */
static void quad_partition(int fd, unsigned int me, const char *other_h2)
{
	static unsigned int buf[BUF_SIZE / 4];
	unsigned int other = 5 - me, imp;
	char name[32], line[128];
	int dmabuf, ret;
	long grants;
	double t;

	/* both past the hang: a greeting of ours must not end its checks */
	snprintf(name, sizeof(name), "%c.partition-start", quad_roles[me]);
	put(name, "1");
	snprintf(name, sizeof(name), "%c.partition-start", quad_roles[other]);
	get(name, line, sizeof(line));
	imp = import(fd, other_h2, &dmabuf, "partition-import");
	ret = gpu_access(fd, imp, 0, buf, BUF_SIZE, 0);
	check(!ret && !mismatch(buf, BUF_SIZE, 0x50 + other), "partition-reads-before",
	      "accelerator %u reads accelerator %u's buffer before the partition: %s",
	      me, other, verdict(ret, buf, BUF_SIZE, 0x50 + other));
	snprintf(name, sizeof(name), "%c.partition-ready", quad_roles[me]);
	put(name, "1");
	snprintf(name, sizeof(name), "%c.partition-ready", quad_roles[other]);
	get(name, line, sizeof(line));
	/* the other holds its import of our buffer, made after the hang's */
	grants = wait_count(me, "grants", 1);
	check(grants == 1, "partition-grant-before",
	      "accelerator %u grants its buffer to accelerator %u (%ld)",
	      me, other, grants);

	node_write(me, "fault", "drop rate=1000000\n");
	t = now_s();
	while (peer_established(me, other) && now_s() < t + 40)
		usleep(100 * 1000);
	check(!peer_established(me, other), "partition-finds-peer-lost",
	      "accelerator %u found accelerator %u, alive across the partition, lost after %.1f s",
	      me, other, now_s() - t);
	grants = wait_count(me, "grants", 0);
	check(grants == 0, "partition-grant-dropped",
	      "accelerator %u's grant to accelerator %u is dropped (%ld left)",
	      me, other, grants);
	ret = until_fault(fd, imp, &t);
	check(ret == -ENODEV, "partition-import-faults",
	      "accelerator %u's import of accelerator %u's buffer is revoked: the GPU access faults (%s, %.1f s)",
	      me, other, ret ? strerror(-ret) : "it still reads", t);
	drmCloseBufferHandle(fd, imp);
	close(dmabuf);
	wait_count(me, "imports", 0);
	snprintf(name, sizeof(name), "%c.partitioned", quad_roles[me]);
	put(name, "1");
	snprintf(name, sizeof(name), "%c.partitioned", quad_roles[other]);
	get(name, line, sizeof(line));

	/* healed: the two find each other again */
	node_write(me, "fault", "clear\n");
	reconnects(fd, me, other_h2, "partition-healed-imports", "partition-healed-reads",
		   "once the partition healed");
}

/*
 * The second pod: four kernels, one accelerator each, w (0, which wrote
 * the region's header: the host starts it first), x (1), y (2), z (3).
 * Each exports a buffer and imports and reads everyone else's. Then the
 * host kills w and x at once: y and z, in different kernels, find both
 * lost (keepalive), drop their grants to them, their imports of them
 * fault, and they keep importing from each other.
 */
static void guest_quad(const char *role)
{
	static unsigned int buf[BUF_SIZE / 4];
	unsigned int me = strchr(quad_roles, role[0]) - quad_roles, other = 5 - me, j;
	char text[UALINK_HANDLE_STRLEN], line[128], name[32], tag[48];
	unsigned int gem, gem2, imp[4], imp2, worked = 0, failed = 0, word;
	int fd = open_accel(me), dmabuf[4], dmabuf2, ret;
	unsigned long long npa_dead = 0;
	char other_h2[128];
	double t;

	/* a peer lost within 2 + 0.5 + 5 s; none declared lost for a slow host */
	node_write(me, "timeout", "5000 2\n");
	if (me == 0)
		check(dmesg_says("wrote the region's header"), "wrote-header",
		      "this kernel wrote the region's header");
	else
		check(dmesg_says("the header was there"), "found-header",
		      "this kernel found the region's header written");
	gem = filled_buffer(fd, 0x40 + me);
	check(export(fd, gem, text) == me, "export", "accelerator %u exported %s", me, text);
	snprintf(name, sizeof(name), "%c.handle", role[0]);
	put(name, text);
	for (j = 0; j < 4; j++) {
		if (j == me)
			continue;
		snprintf(name, sizeof(name), "%c.handle", quad_roles[j]);
		get(name, line, sizeof(line));
		snprintf(tag, sizeof(tag), "import-%c", quad_roles[j]);
		imp[j] = import(fd, line, &dmabuf[j], tag);
		if (j == 0)	/* read again once its owner is dead */
			npa_dead = state_npa(me, "import", line);
		memset(buf, 0, sizeof(buf));
		ret = gpu_access(fd, imp[j], 0, buf, BUF_SIZE, 0);
		snprintf(tag, sizeof(tag), "reads-%c", quad_roles[j]);
		check(!ret && !mismatch(buf, BUF_SIZE, 0x40 + j), tag,
		      "accelerator %u reads accelerator %u's buffer in another kernel: %s",
		      me, j, verdict(ret, buf, BUF_SIZE, 0x40 + j));
	}
	check(wait_count(me, "grants", 3) == 3, "grants-to-all",
	      "accelerator %u grants its buffer to the three other kernels' accelerators (%ld)",
	      me, count(me, "grants"));
	snprintf(name, sizeof(name), "%c.ready", role[0]);
	put(name, "1");
	if (me < 2) {
		/* killed by the host; the wait ends (and fails) only if not */
		get("quad.never", line, sizeof(line));
		return;
	}

	get("quad.killed", line, sizeof(line));
	printf("pod: %s\n", line);
	t = now_s();
	while ((peer_established(me, 0) || peer_established(me, 1)) && now_s() < t + 40)
		usleep(100 * 1000);
	check(!peer_established(me, 0) && !peer_established(me, 1),
	      "finds-both-dead-lost",
	      "accelerator %u found accelerators 0 and 1 lost %.1f s after the host said they were killed",
	      me, now_s() - t);
	check(wait_count(me, "grants", 1) == 1, "dead-grants-dropped",
	      "accelerator %u's grants to the dead kernels are dropped: %ld left, the other survivor's",
	      me, count(me, "grants"));
	for (j = 0; j < 2; j++) {
		ret = until_fault(fd, imp[j], &t);
		snprintf(tag, sizeof(tag), "import-of-%c-faults", quad_roles[j]);
		check(ret == -ENODEV, tag,
		      "accelerator %u's import of dead accelerator %u's buffer is revoked: the GPU access faults (%s, %.1f s)",
		      me, j, ret ? strerror(-ret) : "it still reads", t);
		drmCloseBufferHandle(fd, imp[j]);
		close(dmabuf[j]);
	}
	/* the other survivor, in another kernel: what stood stands */
	ret = gpu_access(fd, imp[other], 0, buf, BUF_SIZE, 0);
	check(!ret && !mismatch(buf, BUF_SIZE, 0x40 + other), "survivor-import-stands",
	      "accelerator %u still reads accelerator %u's buffer: %s",
	      me, other, verdict(ret, buf, BUF_SIZE, 0x40 + other));
	/* and new imports work both ways, with the header's writer dead */
	gem2 = filled_buffer(fd, 0x50 + me);
	check(export(fd, gem2, text) == me, "export-after-kill",
	      "accelerator %u exported %s", me, text);
	snprintf(name, sizeof(name), "%c.handle2", role[0]);
	put(name, text);
	snprintf(name, sizeof(name), "%c.handle2", quad_roles[other]);
	get(name, other_h2, sizeof(other_h2));
	imp2 = import(fd, other_h2, &dmabuf2, "survivors-import-again");
	ret = gpu_access(fd, imp2, 0, buf, BUF_SIZE, 0);
	check(!ret && !mismatch(buf, BUF_SIZE, 0x50 + other), "survivors-read-again",
	      "accelerator %u reads accelerator %u's new buffer: %s",
	      me, other, verdict(ret, buf, BUF_SIZE, 0x50 + other));
	drmCloseBufferHandle(fd, imp2);
	close(dmabuf2);
	drmCloseBufferHandle(fd, imp[other]);
	close(dmabuf[other]);
	wait_count(me, "imports", 0);
	if (me == 3)
		quad_owner_waits(fd);
	else
		quad_access_in_flight(fd);
	wait_count(me, "imports", 0);
	quad_hang(fd, me, other_h2);
	quad_partition(fd, me, other_h2);

	/*
	 * The host writes garbage into the region (tooling/region-fuzz.py):
	 * every ring, the header's counters, and all of the dead
	 * accelerators' tables. Meanwhile we import, read and release the
	 * other survivor's buffer in a loop and read the dead accelerator 0's
	 * window through its garbage tables: errors are allowed, a kernel
	 * report (checked by the host) is not. Afterwards the pod recovers.
	 */
	snprintf(name, sizeof(name), "%c.fuzz-me", role[0]);
	put(name, "1");
	get("quad.fuzzing", line, sizeof(line));
	snprintf(name, sizeof(name), "%s/quad.fuzzed", dir);
	t = now_s();
	while (access(name, F_OK) && now_s() < t + 120) {
		ret = try_import(fd, other_h2, &dmabuf2);
		if (!ret) {
			if (drmPrimeFDToHandle(fd, dmabuf2, &imp2)) {
				ret = -errno;
			} else {
				ret = gpu_access(fd, imp2, 0, buf, 4096, 0);
				drmCloseBufferHandle(fd, imp2);
			}
			close(dmabuf2);
		}
		if (ret)
			failed++;
		else
			worked++;
		npa_read(me, npa_dead, &word);
		usleep(20 * 1000);
	}
	get("quad.fuzzed", line, sizeof(line));
	printf("pod: %s; meanwhile %u imports and reads worked, %u failed\n",
	       line, worked, failed);
	/* the fuzzer reached our rings: indices of ours were overwritten */
	check(rings_healed() > 0, "rings-healed",
	      "this kernel's poller wrote back %ld ring indices of ours another kernel changed",
	      rings_healed());
	/* a connection the garbage ended is made again: a minute at most */
	reconnects(fd, me, other_h2, "import-after-fuzz", "reads-after-fuzz",
		   "after the fuzzing");
	snprintf(name, sizeof(name), "%c.released", role[0]);
	put(name, "1");
	snprintf(name, sizeof(name), "%c.released", quad_roles[other]);
	get(name, line, sizeof(line));
	drmCloseBufferHandle(fd, gem2);
	drmCloseBufferHandle(fd, gem);
	close(fd);
	wait_count(me, "grants", 0);
	wait_count(me, "exports", 0);
	show_counts("after", me);
	check_zero(me);
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "a") && strcmp(argv[1], "b") &&
			  strcmp(argv[1], "b2") &&
			  (strlen(argv[1]) != 1 || !strchr(quad_roles, argv[1][0])))) {
		fprintf(stderr, "usage: ualink_pod a|b|b2|w|x|y|z DIR\n");
		return 2;
	}
	dir = argv[2];
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[1], "a"))
		guest_a();
	else if (!strcmp(argv[1], "b"))
		guest_b();
	else if (!strcmp(argv[1], "b2"))
		guest_b2();
	else
		guest_quad(argv[1]);
	printf("pod: guest %s: %s (%d failed checks)\n", argv[1],
	       failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
