// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * PRIME on vgem: proves the test harness (IGT framework, libdrm, a DRM
 * device in the guest) and is the anchor later benchmarks compare the
 * UALink ioctls against, measured in the same run.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xf86drm.h>

#include "igt.h"

IGT_TEST_DESCRIPTION("PRIME round trips on vgem: harness check and anchor.");

/* Open the first DRM node of @type whose driver is vgem; -1 if none. */
static int open_vgem(const char *prefix)
{
	char path[64];
	int i, fd;

	for (i = 0; i < 256; i++) {
		drmVersionPtr v;

		snprintf(path, sizeof(path), "/dev/dri/%s%d", prefix,
			 i + (prefix[0] == 'r' ? 128 : 0));
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		v = drmGetVersion(fd);
		if (v && !strcmp(v->name, "vgem")) {
			drmFreeVersion(v);
			return fd;
		}
		if (v)
			drmFreeVersion(v);
		close(fd);
	}
	return -1;
}

static uint32_t dumb_create(int fd, uint32_t size, uint32_t *pitch)
{
	struct drm_mode_create_dumb arg = {
		.width = size / 4, .height = 1, .bpp = 32,
	};

	igt_assert_eq(drmIoctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &arg), 0);
	*pitch = arg.pitch;
	return arg.handle;
}

static void *dumb_map(int fd, uint32_t handle, size_t size)
{
	struct drm_mode_map_dumb arg = { .handle = handle };
	void *ptr;

	igt_assert_eq(drmIoctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &arg), 0);
	ptr = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   arg.offset);
	igt_assert(ptr != MAP_FAILED);
	return ptr;
}

igt_main
{
	const uint32_t size = 64 * 1024;
	int card = -1, render = -1;

	igt_fixture {
		card = open_vgem("card");
		igt_require_f(card >= 0, "no vgem device (load vgem)\n");
		render = open_vgem("renderD");
		igt_require_f(render >= 0, "no vgem render node\n");
	}

	igt_describe("handle -> fd -> handle on one file gives the same handle");
	igt_subtest("prime-self-round-trip") {
		uint32_t pitch, handle, back;
		int fd;

		handle = dumb_create(card, size, &pitch);
		igt_assert_eq(drmPrimeHandleToFD(card, handle, DRM_CLOEXEC, &fd), 0);
		igt_assert_eq(drmPrimeFDToHandle(card, fd, &back), 0);
		igt_assert_eq_u32(back, handle);
		close(fd);
		igt_assert_eq(drmCloseBufferHandle(card, handle), 0);
	}

	igt_describe("data written through one file reads back through the "
		     "dma-buf imported on the render node");
	igt_subtest("prime-cross-file-data") {
		uint32_t pitch, handle, imported, *src, *dst, i;
		int fd;

		handle = dumb_create(card, size, &pitch);
		src = dumb_map(card, handle, size);
		for (i = 0; i < size / 4; i++)
			src[i] = i * 2654435761u;
		igt_assert_eq(drmPrimeHandleToFD(card, handle,
						 DRM_CLOEXEC | DRM_RDWR, &fd), 0);
		igt_assert_eq(drmPrimeFDToHandle(render, fd, &imported), 0);
		dst = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
		igt_assert(dst != MAP_FAILED);
		for (i = 0; i < size / 4; i++)
			igt_assert_eq_u32(dst[i], i * 2654435761u);
		munmap(dst, size);
		munmap(src, size);
		close(fd);
		igt_assert_eq(drmCloseBufferHandle(render, imported), 0);
		igt_assert_eq(drmCloseBufferHandle(card, handle), 0);
	}

	igt_describe("importing a closed fd fails with EBADF");
	igt_subtest("prime-bad-fd") {
		uint32_t handle;

		igt_assert_eq(drmPrimeFDToHandle(render, -1, &handle), -1);
		igt_assert_eq(errno, EBADF);
	}

	igt_fixture {
		close(render);
		close(card);
	}
}
