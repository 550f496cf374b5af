// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A symmetric heap on the emulated pod, started the way ROCm's
 * symmetric-memory libraries start one: one process per accelerator
 * ("rank"), each exports a heap of the same size, the handles are
 * all-gathered over Unix sockets, each rank imports every other rank's heap
 * in one batch (GEM handles, no fds), then each writes its rank into its
 * slot of every peer's heap through the emulated GPU access (across the
 * fabric) and checks what every peer wrote into its own heap.
 *
 *   ualink_symheap [HEAP_BYTES]
 *
 * Prints the time of each start-up phase (the slowest rank's) and exits 0
 * when every rank saw every peer's write.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "amdgpu_ualink_vpod.h"
#include "libualink.h"

#define MAX_RANKS	64
#define MAGIC		0x5e11000000000000ull

enum phase { P_EXPORT, P_GATHER, P_IMPORT, P_WRITE, P_VERIFY, P_NUM };
static const char *const phase_names[P_NUM] = {
	"export", "all-gather", "batch import", "write peers", "verify own",
};

struct report {
	int32_t ok;
	int32_t errors;
	double ms[P_NUM];
};

static int n_ranks;
static char devices[MAX_RANKS][32];

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * The accelerators with UALink that are active and import batches, in
 * accelerator ID order: every render node is probed (a driver without the
 * ioctl, or a device without UALink, is skipped).
 */
static void find_ranks(void)
{
	struct drm_amdgpu_ualink_info info;
	int minor, by_id[1024];
	unsigned int a;
	char path[32];

	memset(by_id, -1, sizeof(by_id));
	for (minor = 128; minor < 192; minor++) {
		int fd;

		snprintf(path, sizeof(path), "/dev/dri/renderD%d", minor);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!ualink_probe(fd, &info) &&
		    info.state == AMDGPU_UALINK_STATE_ACTIVE &&
		    info.ops & 1u << AMDGPU_UALINK_OP_IMPORT_BATCH &&
		    info.accel_id < 1024)
			by_id[info.accel_id] = minor;
		close(fd);
	}
	for (a = 0; a < 1024 && n_ranks < MAX_RANKS; a++)
		if (by_id[a] >= 0)
			snprintf(devices[n_ranks++], sizeof(devices[0]),
				 "/dev/dri/renderD%d", by_id[a]);
}

static int gpu_access(int fd, uint32_t gem, uint64_t offset, void *data,
		      uint64_t size, bool write)
{
	struct drm_amdgpu_ualink_vpod_gpu_access a = {
		.handle = gem,
		.flags = write ? AMDGPU_UALINK_VPOD_ACCESS_WRITE : 0,
		.offset = offset,
		.size = size,
		.data = (uintptr_t)data,
	};

	return ioctl(fd, DRM_IOCTL_AMDGPU_UALINK_VPOD_GPU_ACCESS, &a) ? -errno : 0;
}

static void xfer(int sock, void *buf, size_t len, bool out)
{
	ssize_t r = out ? write(sock, buf, len) : read(sock, buf, len);

	if (r != (ssize_t)len) {
		fprintf(stderr, "symheap: socket %s failed\n", out ? "write" : "read");
		exit(1);
	}
}

static int fail(struct report *rep, int rank, const char *what, int err)
{
	fprintf(stderr, "symheap: rank %d: %s: %s\n", rank, what, ualink_strerror(err));
	rep->errors++;
	return 1;
}

/* One rank: its process, talking to the launcher over @sock. */
static void rank_main(int rank, int sock, uint64_t heap_size)
{
	struct drm_amdgpu_ualink_vpod_gem_create create = {
		.size = heap_size, .domain = AMDGPU_UALINK_VPOD_DOMAIN_VRAM,
	};
	static struct drm_amdgpu_ualink_handle handles[MAX_RANKS];
	static struct drm_amdgpu_ualink_batch_entry e[MAX_RANKS];
	struct report rep = {};
	uint64_t word, go;
	int fd, p, n = 0, ret;
	double t;

	fd = open(devices[rank], O_RDWR | O_CLOEXEC);
	if (fd < 0)
		exit(1);

	t = now_ms();
	if (ioctl(fd, DRM_IOCTL_AMDGPU_UALINK_VPOD_GEM_CREATE, &create))
		fail(&rep, rank, "heap", -errno);
	ret = ualink_export(fd, create.handle, &handles[rank]);
	if (ret)
		fail(&rep, rank, "export", ret);
	rep.ms[P_EXPORT] = now_ms() - t;

	/* all-gather: ours to the launcher, everybody's back */
	t = now_ms();
	xfer(sock, &handles[rank], sizeof(handles[rank]), true);
	xfer(sock, handles, sizeof(handles[0]) * n_ranks, false);
	rep.ms[P_GATHER] = now_ms() - t;

	t = now_ms();
	for (p = 0; p < n_ranks; p++)
		if (p != rank)
			e[n++].handle = handles[p];
	ret = ualink_import_batch(fd, e, n, 0);
	if (ret)
		fail(&rep, rank, "batch import", ret);
	for (p = 0; p < n; p++)
		if (e[p].error)
			fail(&rep, rank, "import of a peer's heap", e[p].error);
	rep.ms[P_IMPORT] = now_ms() - t;

	/* our rank into our slot of every peer's heap, through the fabric */
	t = now_ms();
	word = MAGIC | rank;
	for (p = 0; p < n && !rep.errors; p++) {
		ret = gpu_access(fd, e[p].gem_handle, rank * sizeof(word), &word,
				 sizeof(word), true);
		if (ret)
			fail(&rep, rank, "write to a peer's heap", ret);
	}
	rep.ms[P_WRITE] = now_ms() - t;

	/* a barrier: every rank wrote */
	xfer(sock, &rep.errors, sizeof(rep.errors), true);
	xfer(sock, &go, sizeof(go), false);

	t = now_ms();
	for (p = 0; p < n_ranks; p++) {
		if (p == rank)
			continue;
		ret = gpu_access(fd, create.handle, p * sizeof(word), &word,
				 sizeof(word), false);
		if (ret) {
			fail(&rep, rank, "read of our own heap", ret);
		} else if (word != (MAGIC | p)) {
			fprintf(stderr, "symheap: rank %d: slot %d holds %#" PRIx64
				", not rank %d's write\n", rank, p, word, p);
			rep.errors++;
		}
	}
	rep.ms[P_VERIFY] = now_ms() - t;
	rep.ok = !rep.errors;
	xfer(sock, &rep, sizeof(rep), true);
	/* the heap and the imports go with the file */
	close(fd);
	exit(rep.ok ? 0 : 1);
}

int main(int argc, char **argv)
{
	uint64_t heap_size = argc > 1 ? strtoull(argv[1], NULL, 0) : 1 << 20;
	static struct drm_amdgpu_ualink_handle handles[MAX_RANKS];
	int socks[MAX_RANKS], r, ok = 1, status;
	struct report rep, worst = {};
	int32_t errors, total = 0;
	uint64_t go = 1;
	unsigned int i;
	double t = now_ms();

	find_ranks();
	if (n_ranks < 2) {
		fprintf(stderr, "symheap: needs 2 ready accelerators with UALink, found %d\n",
			n_ranks);
		return 1;
	}
	printf("symheap: %d ranks, a %" PRIu64 " KiB heap each\n", n_ranks,
	       heap_size >> 10);
	fflush(stdout);
	for (r = 0; r < n_ranks; r++) {
		int sv[2];

		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
			return 1;
		if (fork() == 0) {
			close(sv[0]);
			rank_main(r, sv[1], heap_size);
		}
		close(sv[1]);
		socks[r] = sv[0];
	}
	/* the all-gather and the barrier, through the launcher */
	for (r = 0; r < n_ranks; r++)
		xfer(socks[r], &handles[r], sizeof(handles[r]), false);
	for (r = 0; r < n_ranks; r++)
		xfer(socks[r], handles, sizeof(handles[0]) * n_ranks, true);
	for (r = 0; r < n_ranks; r++) {
		xfer(socks[r], &errors, sizeof(errors), false);
		total += errors;
	}
	for (r = 0; r < n_ranks; r++)
		xfer(socks[r], &go, sizeof(go), true);
	for (r = 0; r < n_ranks; r++) {
		xfer(socks[r], &rep, sizeof(rep), false);
		ok &= rep.ok;
		for (i = 0; i < P_NUM; i++)
			if (rep.ms[i] > worst.ms[i])
				worst.ms[i] = rep.ms[i];
	}
	while (wait(&status) > 0)
		ok &= WIFEXITED(status) && !WEXITSTATUS(status);
	for (i = 0; i < P_NUM; i++)
		printf("symheap: %-13s %8.2f ms (slowest rank)\n", phase_names[i],
		       worst.ms[i]);
	printf("symheap: start-up %.2f ms in all; %s: every rank read all %d peers' writes\n",
	       now_ms() - t, ok && !total ? "PASS" : "FAIL", n_ranks - 1);
	return ok && !total ? 0 : 1;
}
