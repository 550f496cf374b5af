/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Helpers of the IGT tests of the emulated UALink pod (vpod): finding its
 * render nodes, the UALink and vpod ioctls (returning 0 or -errno), its
 * debugfs files (counts, control, vpod, timeout, fault), polling with a
 * deadline, and the clean-up every subtest relies on.
 *
 * Clean-up: every fd a test opens through these helpers is tracked, and
 * every debugfs setting it changes is recorded. vpod_cleanup() closes those
 * fds (which closes their GEM handles and imports) and restores the
 * settings (faults cleared, timeout "5000 3", vpod 0, online). Subtests are
 * written with vpod_subtest(), which calls it before the body (undoing
 * what a failed subtest left behind) and after it; an exit handler calls
 * it once more.
 */
#ifndef VPOD_LIB_H
#define VPOD_LIB_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "igt.h"
#include "amdgpu_ualink_vpod.h"
#include "libualink.h"

#define VPOD_MAX_ACCELS		AMDGPU_UALINK_MAX_ACCELERATORS
#define VPOD_MIN_DRM_NODES	4
#define VPOD_DEBUGFS		"/sys/kernel/debug/amdgpu_ualink_vpod"

/* mailbox message types, for the fault rules' types= mask */
#define MSG_HELLO		1
#define MSG_HELLO_ACK		2
#define MSG_NPA_REQ		3
#define MSG_NPA_RSP		4
#define MSG_NPA_FAIL		5
#define MSG_NPA_REVOKE		6
#define MSG_NPA_RELEASE		7
#define MSG_BIT(t)		(1u << (t))
#define MSG_ALL			0xfeu	/* BIT(1) .. BIT(7) */

/* default mailbox timeout of a node, as written to its timeout file */
#define VPOD_TIMEOUT_DEFAULT	"5000 3"

/* how long asynchronous effects (revocation, releases, clean-up) may take */
#define VPOD_ASYNC_MS		5000
#define VPOD_FAULT_ASYNC_MS	10000

/* the gauges of node<ID>/counts, in this order */
enum vpod_count {
	C_EXPORTS,
	C_GRANTS,
	C_PINS,
	C_IMPORTS,
	C_NPA_BYTES,
	C_PT_TABLES,
	C_TLB_ENTRIES,
	C_NUM,
};

struct vpod_counts {
	uint64_t v[C_NUM];
};

extern const char *const vpod_count_names[C_NUM];

/* one line of the debugfs file nodes */
struct vpod_accel {
	unsigned int id;
	unsigned int vpod;
	char state[16];		/* active, resetting, offline */
	char drm[32];		/* renderD<minor>, or "-" for fabric-only */
};

/* one line of the debugfs file handles: a fabric-only node's heap */
struct vpod_fabric_heap {
	unsigned int id;
	struct drm_amdgpu_ualink_handle handle;
};

#define VPOD_FABRIC_HEAP_SIZE	(64 * 1024)

struct vpod {
	/* DRM nodes: render node path by accelerator ID, 0 .. n_drm - 1 */
	int n_drm;
	char path[VPOD_MAX_ACCELS][32];
	/* every accelerator, from <debugfs>/nodes at start */
	int n_accel;
	struct vpod_accel accel[VPOD_MAX_ACCELS];
	/* the fabric-only nodes' heaps, from <debugfs>/handles */
	int n_fabric;
	struct vpod_fabric_heap fabric[VPOD_MAX_ACCELS];
	/* counts at start; fabric-only nodes keep their heap's export */
	struct vpod_counts baseline[VPOD_MAX_ACCELS];
};

extern struct vpod vpod;

/*
 * vpod_subtest(name) { body }: a subtest that starts from a clean state and
 * cleans up after itself; a failed assert skips the trailing clean-up,
 * which the next subtest's (or the exit handler's) then does.
 */
#define vpod_subtest(name) \
	igt_subtest(name) \
		for (int igt_unique(__vpod) = (vpod_cleanup(), 0); \
		     igt_unique(__vpod) < 1; \
		     igt_unique(__vpod)++, vpod_cleanup())

/* set-up, in the first fixture: finds the nodes, skips when absent */
void vpod_init(void);

/* fds: tracked so that vpod_cleanup() closes them */
int vpod_open(unsigned int accel_id);
void vpod_track_fd(int fd);
void vpod_close(int fd);
void vpod_cleanup(void);

/* time */
uint64_t vpod_now_ms(void);
void vpod_sleep_ms(unsigned int ms);

/*
 * DRM_IOCTL_AMDGPU_UALINK with any argument, malformed ones included: 0
 * or -errno. The operations themselves come from libualink
 * (tools/ualink/libualink.h): ualink_info(), ualink_export(),
 * ualink_import(), ualink_import_batch().
 */
int ualink_ioctl(int fd, struct drm_amdgpu_ualink *args);

/* asserting versions */
struct drm_amdgpu_ualink_handle export_ok(int fd, uint32_t gem);
/* import + tracked dma-buf fd */
int import_ok(int fd, struct drm_amdgpu_ualink_handle h);
/* an import that must fail with @err (a dma-buf it made anyway is tracked) */
void expect_import_error(int fd, struct drm_amdgpu_ualink_handle h, int err);
/* import, then the PRIME GEM handle of the fd on the same file */
uint32_t import_gem(int fd, struct drm_amdgpu_ualink_handle h, int *dmabuf);
/* import, read @seed's pattern through the import, close: it works */
void import_works(int fd, struct drm_amdgpu_ualink_handle h, uint32_t seed);
uint32_t prime_handle(int fd, int dmabuf);

/* vpod GEM ioctls */
int __bo_create(int fd, uint64_t size, uint32_t domain, uint32_t *handle);
uint32_t bo_create(int fd, uint64_t size, uint32_t domain);
uint32_t vram_create(int fd, uint64_t size);
void gem_close(int fd, uint32_t handle);
int __gem_mmap_offset(int fd, uint32_t handle, uint64_t *offset);
int gpu_access(int fd, uint32_t handle, uint32_t flags, uint64_t offset,
	       void *data, uint64_t size);
/* DRM_IOCTL_AMDGPU_UALINK_VPOD_GPU_JOB: 0 or -errno */
int gpu_job(int fd, uint32_t handle, uint32_t op, uint32_t timeout_ms);
void gpu_write(int fd, uint32_t handle, uint64_t offset, const void *data,
	       uint64_t size);
void gpu_read(int fd, uint32_t handle, uint64_t offset, void *data,
	      uint64_t size);

/* patterns: byte i of a buffer filled with @seed is pattern_byte(seed, i) */
uint8_t pattern_byte(uint32_t seed, uint64_t i);
void pattern_fill(void *buf, uint64_t size, uint32_t seed, uint64_t first);
/* first index where @buf differs from the pattern, or -1 */
int64_t pattern_check(const void *buf, uint64_t size, uint32_t seed,
		      uint64_t first);
/* write the pattern through GPU access, bytes offset .. offset + size */
void gpu_fill(int fd, uint32_t h, uint64_t offset, uint64_t size,
	      uint32_t seed);
/* read through GPU access and assert the pattern */
void gpu_expect(int fd, uint32_t h, uint64_t offset, uint64_t size,
		uint32_t seed);
/* read through GPU access and assert every 32-bit word is @value */
void gpu_expect_u32(int fd, uint32_t h, uint64_t offset, uint64_t size,
		    uint32_t value);
/* poll a 4-byte read until it fails with @err (a positive errno) */
void wait_access_error(int fd, uint32_t h, int err, unsigned int timeout_ms);

/* a VRAM buffer of @size on @fd, filled with @seed, exported */
uint32_t exported_buffer(int fd, uint64_t size, uint32_t seed,
			 struct drm_amdgpu_ualink_handle *out);

/* handles */
uint32_t handle_accel(struct drm_amdgpu_ualink_handle h);
bool handle_eq(struct drm_amdgpu_ualink_handle a,
	       struct drm_amdgpu_ualink_handle b);
uint64_t rand64(void);

/* debugfs */
int dbg_read(const char *rel, char *buf, size_t size);	/* bytes or -errno */
int dbg_write(const char *rel, const char *text);	/* 0 or -errno */

/* sysfs: the ualink/ directory of a DRM accelerator's device */
int sysfs_read(unsigned int id, const char *attr, char *buf, size_t size);
/* @attr reads @want, without its newline */
void expect_sysfs(unsigned int id, const char *attr, const char *want);
/* ualink/@attr of accelerator @id, opened read-only */
int sysfs_open(unsigned int id, const char *attr);
/* the DEVPATH of accelerator @id's device, as its uevents name it */
void sysfs_devpath(unsigned int id, char *buf, size_t size);
void node_write(unsigned int id, const char *file, const char *fmt, ...)
	igt_printf_fmt(3, 4);
void node_dump(unsigned int id);
void vpod_read_nodes(struct vpod_accel *accel, int *n);
const struct vpod_accel *accel_find(const struct vpod_accel *a, int n,
				    unsigned int id);
void counts_read(unsigned int id, struct vpod_counts *c);
uint64_t count_of(unsigned int id, enum vpod_count which);
void wait_count(unsigned int id, enum vpod_count which, uint64_t value,
		unsigned int timeout_ms);
/* node<ID>/counts' fabric_faults: accesses to its window it refused */
uint64_t fabric_faults(unsigned int id);
/* a counter of node<ID>/counts after the gauges, by name */
uint64_t node_counter(unsigned int id, const char *name);
/*
 * The NPA of the range behind @h on its exporter (from its debugfs state,
 * as a hostile peer could know or guess it), 0 when nothing is mapped
 */
uint64_t export_npa(struct drm_amdgpu_ualink_handle h);
/* read @n bytes at @npa through the fabric as accelerator @accel: 0/-errno */
int npa_peek(unsigned int accel, uint64_t npa, void *buf, size_t n);
/* poll npa_peek() of 4 bytes until it fails with @err (a positive errno) */
void wait_peek_error(unsigned int accel, uint64_t npa, int err,
		     unsigned int timeout_ms);
/* every node back to its baseline (0 for DRM nodes) within @timeout_ms */
void wait_no_leaks(unsigned int timeout_ms);
/*
 * the last fixture of every program: clean up what its subtests left, then
 * wait_no_leaks(@timeout_ms)
 */
void vpod_fini(unsigned int timeout_ms);
void wait_state(unsigned int id, const char *state, unsigned int timeout_ms);

/* recorded settings, restored by vpod_cleanup() */
void set_fault(unsigned int id, const char *rule);
/* the next @n grants of node @id fail in its access table (EREMOTEIO) */
void set_refuse_access(unsigned int id, unsigned int n);
/* node @id's NPA window used up: nothing more fits in it (ENOSPC) */
void set_window_full(unsigned int id);
/* node @id's export pins wait while @hold (as for an eviction) */
void set_pin_hold(unsigned int id, bool hold);
/* how many export pins of node @id wait on it now */
unsigned int pin_waiters(unsigned int id);
/* undoes set_fault(), set_refuse_access(), set_window_full(), set_pin_hold() */
void clear_faults(void);
void set_timeout(unsigned int id, unsigned int ms, unsigned int retries);
void set_vpod(unsigned int id, unsigned int vpod_nr);
/* "reset", "offline", "online", "reset-begin", "reset-end" (undone by clean-up) */
void set_control(unsigned int id, const char *what);
/*
 * Settings of node @id that another process (or thread) may change: the
 * next clean-up clears its faults, restores its timeout and vPod, brings
 * it online and waits until it is active
 */
void vpod_mark_dirty(unsigned int id);
/*
 * How often node @id's fault rule @kind ("delay", "drop", ...) has been
 * applied since it was set, or -1 when it is not set. No assertion: a
 * trigger's thread calls it.
 */
int64_t fault_injected(unsigned int id, const char *kind);

/*
 * A trigger: once node @id's fault rule @kind has been applied @n times,
 * a helper thread runs @action(@arg), so that a test acts while a call is
 * known to wait (its answer held back by the fault), not after a guessed
 * delay. @action must not assert. vpod_trigger_join() says whether it ran
 * within @timeout_ms.
 */
struct vpod_trigger {
	unsigned int id;
	const char *kind;
	uint64_t n;
	unsigned int timeout_ms;
	void (*action)(void *arg);
	void *arg;
	/* private */
	pthread_t thread;
	bool fired;	/* read after the join */
};

void vpod_trigger_start(struct vpod_trigger *t);
bool vpod_trigger_join(struct vpod_trigger *t);

/* the core's revoke_timeout_ms module parameter (all nodes) */
void set_revoke_timeout(unsigned int ms);
/* the core's import_quota module parameter (all nodes) */
void set_import_quota(unsigned int n);

#endif /* VPOD_LIB_H */
