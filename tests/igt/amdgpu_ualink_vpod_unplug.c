// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ENODEV, the errno of amdgpu_drm.h for a device that was unplugged, forced
 * through the uAPI on the emulated pod: debugfs ``control`` ``unplug`` does
 * what amdgpu's PCI remove does, DRM's unplug of the device and then its
 * UALink IP leaving the pod. There is no replug, so this program runs on a
 * pod loaded for it alone (tooling/guest-tests.sh), after every other one,
 * and the module is unloaded with the device unplugged.
 *
 * Every call is first shown to succeed on the device, then to fail with
 * ENODEV once it is unplugged; the peers drop what they held from and for
 * it, and the others keep working.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <xf86drm.h>

#include "igt.h"
#include "vpod_lib.h"

IGT_TEST_DESCRIPTION("ENODEV from every UALink call of an unplugged device, on the emulated pod.");

#define SIZE		(64 * 1024ull)
#define SUBTEST_TIMEOUT	300
#define GONE		3	/* the accelerator unplugged */

/* the vpod's own ioctl, not UALink's: DRM answers every ioctl alike */
static int raw_gem_create(int fd)
{
	struct drm_amdgpu_ualink_vpod_gem_create c = {
		.size = SIZE, .domain = AMDGPU_UALINK_VPOD_DOMAIN_VRAM,
	};

	return ioctl(fd, DRM_IOCTL_AMDGPU_UALINK_VPOD_GEM_CREATE, &c) ? -errno : 0;
}

/*
 * Accelerator 3 exports a buffer that 0 imports, and imports one of 0's;
 * each call of 3's file works. Then 3 is unplugged: INFO, EXPORT, IMPORT
 * and IMPORT_BATCH on its open file fail with ENODEV (a batch leaves its
 * entries alone), its render node is gone, it is offline and cannot come
 * back; 0 loses its access to 3's buffer, 0's grant to 3 is dropped, and 0
 * and 1 still export and import between them.
 */
static void test_enodev_unplugged(void)
{
	int fd0 = vpod_open(0), fd1 = vpod_open(1), fd3 = vpod_open(GONE);
	struct drm_amdgpu_ualink_handle h0, h1, h3, out;
	struct drm_amdgpu_ualink_batch_entry e = {};
	struct drm_amdgpu_ualink_info info;
	uint32_t g0, g3, before, after;
	int dmabuf0, dmabuf3, dmabuf, fd, ret;

	exported_buffer(fd0, SIZE, 60, &h0);
	exported_buffer(fd1, SIZE, 61, &h1);
	exported_buffer(fd3, SIZE, 63, &h3);
	before = vram_create(fd3, SIZE);
	after = vram_create(fd3, SIZE);

	/* the positives: every call of 3's file, and 0 reading 3's memory */
	igt_assert_eq(ualink_info(fd3, &info), 0);
	igt_assert_eq_u32(info.state, AMDGPU_UALINK_STATE_ACTIVE);
	igt_assert_eq(raw_gem_create(fd3), 0);
	out = export_ok(fd3, before);
	igt_assert(!handle_eq(out, h3));
	g3 = import_gem(fd3, h0, &dmabuf3);
	gpu_expect(fd3, g3, 0, 4096, 60);
	e.handle = h1;
	igt_assert_eq(ualink_import_batch(fd3, &e, 1, 0), 0);
	igt_assert_eq(e.error, 0);
	gpu_expect(fd3, e.gem_handle, 0, 4096, 61);
	gem_close(fd3, e.gem_handle);
	g0 = import_gem(fd0, h3, &dmabuf0);
	gpu_expect(fd0, g0, 0, 4096, 63);
	igt_assert_eq_u64(count_of(0, C_GRANTS), 1);	/* h0, to 3 */

	node_write(GONE, "control", "unplug");

	igt_assert_eq(ualink_info(fd3, &info), -ENODEV);
	igt_assert_eq(raw_gem_create(fd3), -ENODEV);
	igt_assert_eq(ualink_export(fd3, after, &out), -ENODEV);
	dmabuf = -1;
	ret = ualink_import(fd3, h0, 0, &dmabuf);
	if (!ret)
		vpod_track_fd(dmabuf);
	igt_assert_eq(ret, -ENODEV);
	memset(&e, 0, sizeof(e));
	e.handle = h1;
	igt_assert_eq(ualink_import_batch(fd3, &e, 1, 0), -ENODEV);
	igt_assert_eq(e.error, 0);
	igt_assert_eq_u32(e.gem_handle, 0);

	/* the device is gone: no new file, no way back into the pod */
	fd = open(vpod.path[GONE], O_RDWR | O_CLOEXEC);
	if (fd >= 0)
		close(fd);
	igt_assert_f(fd < 0 && (errno == ENOENT || errno == ENODEV),
		     "%s opened after the unplug (%s)\n", vpod.path[GONE],
		     fd < 0 ? strerror(errno) : "no error");
	wait_state(GONE, "offline", VPOD_ASYNC_MS);
	igt_assert_eq(dbg_write("node3/control", "online"), -ENODEV);
	igt_assert_eq(dbg_write("node3/control", "reset"), -ENODEV);
	igt_assert_eq(dbg_write("node3/control", "unplug"), 0);

	/* its peers drop what they held from and for it */
	wait_access_error(fd0, g0, ENODEV, VPOD_ASYNC_MS);
	wait_count(0, C_GRANTS, 0, VPOD_ASYNC_MS);

	/* the others keep working */
	import_works(fd0, h1, 61);
	import_works(fd1, h0, 60);

	/* 3's handles go with its file (GEM_CLOSE is an ioctl: ENODEV) */
	gem_close(fd0, g0);
	vpod_close(dmabuf0);
	vpod_close(dmabuf3);
	vpod_cleanup();
	wait_no_leaks(VPOD_ASYNC_MS);
}

igt_main
{
	igt_fixture
		vpod_init();

	igt_describe("an unplugged device: ENODEV for every call, its peers clean up");
	vpod_subtest("errno-enodev-unplugged") {
		igt_set_timeout(SUBTEST_TIMEOUT, "errno-enodev-unplugged");
		test_enodev_unplugged();
	}

	/* nothing may stay held once it is all closed: exit 98 otherwise */
	igt_fixture
		vpod_fini(VPOD_ASYNC_MS);
}
