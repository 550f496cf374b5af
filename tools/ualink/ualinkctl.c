// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ualinkctl: look at and use the UALink of this host's accelerators.
 * Run "ualinkctl --help" for the manual.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "amdgpu_ualink_vpod.h"
#include "libualink.h"

static const char manual[] =
"NAME\n"
"    ualinkctl - look at and use the UALink of this host's accelerators\n"
"\n"
"SYNOPSIS\n"
"    ualinkctl list\n"
"    ualinkctl show DEVICE\n"
"    ualinkctl probe DEVICE\n"
"    ualinkctl export DEVICE SIZE\n"
"    ualinkctl import DEVICE HANDLE\n"
"    ualinkctl trace COMMAND [ARG...]\n"
"    ualinkctl --help\n"
"\n"
"DESCRIPTION\n"
"    DEVICE is a render node: renderD128 or /dev/dri/renderD128. What is\n"
"    shown comes from the device's ualink/ directory in sysfs\n"
"    (Documentation/ABI/testing/sysfs-driver-amdgpu-ualink) and from\n"
"    DRM_IOCTL_AMDGPU_UALINK.\n"
"\n"
"COMMANDS\n"
"    list     One line per render node with UALink: its accelerator ID,\n"
"             virtual pod and size, state (\"ready\" when exports and\n"
"             imports work), exports, imports and connected peers.\n"
"    show     Every attribute of the device's ualink/ directory.\n"
"    probe    Whether the device's driver has the UALink ioctl (amdgpu\n"
"             3.65 or later, or the emulated pod; from its name and\n"
"             version) and the device UALink; then the operations and\n"
"             flags the kernel knows, from INFO. Fails on any other\n"
"             device, saying which of the two is missing.\n"
"    export   Make a SIZE-byte buffer in device memory (SIZE may end in\n"
"             K or M), export it and print its 128-bit handle (32 hex\n"
"             digits). The export lives as long as the buffer: ualinkctl\n"
"             keeps it until it is interrupted (SIGINT or SIGTERM) or its\n"
"             standard input ends. Buffers are made with the emulated\n"
"             pod's GEM ioctl: on amdgpu, export from your own program.\n"
"    import   Import HANDLE on DEVICE as a GEM handle (a batch of one)\n"
"             and say what came of it; the import is released on exit.\n"
"    trace    Run COMMAND with the amdgpu_ualink trace events recorded\n"
"             (trace-cmd record -e amdgpu_ualink), then print them\n"
"             (trace-cmd report). Needs root and trace-cmd.\n"
"\n"
"EXIT STATUS\n"
"    0 on success; 1 when the operation failed (the reason is printed,\n"
"    with what the errno means for UALink); 2 on a usage error.\n"
"\n"
"FILES\n"
"    /sys/class/drm/renderD*/device/ualink/\n";

static int usage(void)
{
	fputs("usage: ualinkctl list | show DEVICE | probe DEVICE |\n"
	      "       export DEVICE SIZE |\n"
	      "       import DEVICE HANDLE | trace COMMAND... | --help\n", stderr);
	return 2;
}

static int open_device(const char *name)
{
	char path[64];
	int fd;

	if (strchr(name, '/'))
		snprintf(path, sizeof(path), "%s", name);
	else
		snprintf(path, sizeof(path), "/dev/dri/%s", name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		fprintf(stderr, "ualinkctl: %s: %s\n", path, strerror(errno));
	return fd;
}

static void attr(int fd, const char *name, char *buf, size_t size)
{
	if (ualink_sysfs_read(fd, name, buf, size) < 0)
		snprintf(buf, size, "-");
}

static int cmd_list(void)
{
	char state[32], id[8], vpod[16], size[16], exp[16], imp[16], peers[16];
	struct dirent *de;
	int found = 0;
	DIR *d;

	d = opendir("/dev/dri");
	if (!d) {
		perror("ualinkctl: /dev/dri");
		return 1;
	}
	printf("%-12s %5s %5s %5s %-13s %7s %7s %5s\n", "DEVICE", "ACCEL",
	       "VPOD", "SIZE", "STATE", "EXPORTS", "IMPORTS", "PEERS");
	while ((de = readdir(d))) {
		int fd;

		if (strncmp(de->d_name, "renderD", 7))
			continue;
		fd = open_device(de->d_name);
		if (fd < 0)
			continue;
		if (ualink_sysfs_read(fd, "accel_state", state, sizeof(state)) >= 0) {
			attr(fd, "accel_id", id, sizeof(id));
			attr(fd, "vpod_id", vpod, sizeof(vpod));
			attr(fd, "vpod_size", size, sizeof(size));
			attr(fd, "exports", exp, sizeof(exp));
			attr(fd, "imports", imp, sizeof(imp));
			attr(fd, "peers_connected", peers, sizeof(peers));
			printf("%-12s %5s %5s %5s %-13s %7s %7s %5s\n", de->d_name,
			       id, vpod, size, state, exp, imp, peers);
			found++;
		}
		close(fd);
	}
	closedir(d);
	if (!found)
		printf("(no render node with UALink)\n");
	return 0;
}

static int cmd_show(const char *dev)
{
	static const char *const attrs[] = {
		"accel_state", "accel_id", "vpod_id", "vpod_size",
		"vpod_active_accels", "local_accels", "exports", "imports",
		"grants", "pins", "peers_connected",
	};
	char buf[8192];
	unsigned int i;
	int fd = open_device(dev);

	if (fd < 0)
		return 1;
	for (i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		int ret = ualink_sysfs_read(fd, attrs[i], buf, sizeof(buf));

		if (ret == -ENOENT)
			continue;	/* the driver does not know it */
		printf("%-19s %s\n", attrs[i], ret < 0 ? strerror(-ret) : buf);
	}
	close(fd);
	return 0;
}

/* The names of the bits of @mask, from @names; unknown ones in hex. */
static void bits(const char *what, uint32_t mask, const char *const *names,
		 unsigned int n)
{
	unsigned int i;

	printf("%-19s", what);
	for (i = 0; i < 32; i++) {
		if (!(mask & (1u << i)))
			continue;
		if (i < n && names[i])
			printf(" %s", names[i]);
		else
			printf(" 0x%x", 1u << i);
	}
	printf("\n");
}

static int cmd_probe(const char *dev)
{
	static const char *const ops[] = {
		[AMDGPU_UALINK_OP_INFO] = "info",
		[AMDGPU_UALINK_OP_EXPORT] = "export",
		[AMDGPU_UALINK_OP_IMPORT] = "import",
		[AMDGPU_UALINK_OP_IMPORT_BATCH] = "import-batch",
	};
	static const char *const flags[] = {
		"cloexec", "fds", "restart",	/* AMDGPU_UALINK_IMPORT_* */
	};
	struct drm_amdgpu_ualink_info info;
	int fd = open_device(dev), ret;

	if (fd < 0)
		return 1;
	ret = ualink_probe(fd, &info);
	close(fd);
	if (ret) {
		fprintf(stderr, "ualinkctl: %s: %s\n", dev, ualink_strerror(ret));
		return 1;
	}
	bits("ops", info.ops, ops, sizeof(ops) / sizeof(ops[0]));
	bits("import_flags", info.import_flags, flags, 1);
	bits("batch_flags", info.batch_flags, flags, 3);
	printf("%-19s %u\n", "batch_max", info.batch_max);
	return 0;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static int cmd_export(const char *dev, const char *size_text)
{
	struct drm_amdgpu_ualink_vpod_gem_create create = {
		.domain = AMDGPU_UALINK_VPOD_DOMAIN_VRAM,
	};
	struct drm_amdgpu_ualink_handle h;
	char text[UALINK_HANDLE_STRLEN], c, *end;
	struct sigaction sa = { .sa_handler = on_signal };
	int fd, ret;

	create.size = strtoull(size_text, &end, 0);
	if (*end == 'K' || *end == 'k')
		create.size <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		create.size <<= 20, end++;
	if (*end || !create.size)
		return usage();
	fd = open_device(dev);
	if (fd < 0)
		return 1;
	if (ioctl(fd, DRM_IOCTL_AMDGPU_UALINK_VPOD_GEM_CREATE, &create)) {
		fprintf(stderr, "ualinkctl: making a buffer on %s: %s\n", dev,
			strerror(errno));
		return 1;
	}
	ret = ualink_export(fd, create.handle, &h);
	if (ret) {
		fprintf(stderr, "ualinkctl: export: %s\n", ualink_strerror(ret));
		return 1;
	}
	ualink_handle_format(h, text);
	printf("%s\n", text);
	fflush(stdout);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	while (!stop && read(STDIN_FILENO, &c, 1) > 0)
		;
	close(fd);	/* the buffer's last handle: the export ends */
	return 0;
}

static int cmd_import(const char *dev, const char *handle_text)
{
	struct drm_amdgpu_ualink_batch_entry e = {};
	int fd, ret;

	if (ualink_handle_parse(handle_text, &e.handle))
		return usage();
	fd = open_device(dev);
	if (fd < 0)
		return 1;
	ret = ualink_import_batch(fd, &e, 1, 0);
	if (!ret)
		ret = e.error;
	if (ret) {
		fprintf(stderr, "ualinkctl: import of a handle of accelerator %u: %s\n",
			ualink_handle_accel(e.handle), ualink_strerror(ret));
		close(fd);
		return 1;
	}
	printf("imported the buffer of accelerator %u as GEM handle %u\n",
	       ualink_handle_accel(e.handle), e.gem_handle);
	close(fd);
	return 0;
}

static int cmd_trace(char **argv)
{
	char *record[64] = { "trace-cmd", "record", "-q", "-e", "amdgpu_ualink",
			     "-o", "/tmp/ualinkctl-trace.dat" };
	int i, n = 7;

	for (i = 0; argv[i] && n < 63; i++)
		record[n++] = argv[i];
	record[n] = NULL;
	if (fork() == 0) {
		execvp(record[0], record);
		perror("ualinkctl: trace-cmd");
		_exit(127);
	}
	if (wait(NULL) < 0)
		return 1;
	execlp("trace-cmd", "trace-cmd", "report", "-q", "-i",
	       "/tmp/ualinkctl-trace.dat", (char *)NULL);
	perror("ualinkctl: trace-cmd");
	return 1;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(manual, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "list") && argc == 2)
		return cmd_list();
	if (!strcmp(argv[1], "show") && argc == 3)
		return cmd_show(argv[2]);
	if (!strcmp(argv[1], "probe") && argc == 3)
		return cmd_probe(argv[2]);
	if (!strcmp(argv[1], "export") && argc == 4)
		return cmd_export(argv[2], argv[3]);
	if (!strcmp(argv[1], "import") && argc == 4)
		return cmd_import(argv[2], argv[3]);
	if (!strcmp(argv[1], "trace") && argc >= 3)
		return cmd_trace(argv + 2);
	return usage();
}
