// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ualinkctl: look at and use the UALink of this host's accelerators.
 * Run "ualinkctl --help" for the manual.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "amdgpu_ualink_vpod.h"
#include "libualink.h"

#ifndef UALINK_VERSION
#define UALINK_VERSION "unknown"
#endif

static const char manual[] =
"NAME\n"
"    ualinkctl - look at and use the UALink of this host's accelerators\n"
"\n"
"SYNOPSIS\n"
"    ualinkctl [--json] list\n"
"    ualinkctl [--json] show DEVICE\n"
"    ualinkctl [--json] probe DEVICE\n"
"    ualinkctl export DEVICE SIZE\n"
"    ualinkctl [--json] import DEVICE HANDLE\n"
"    ualinkctl trace COMMAND [ARG...]\n"
"    ualinkctl --help | --version\n"
"\n"
"DESCRIPTION\n"
"    DEVICE is a render node: renderD128 or /dev/dri/renderD128. list and\n"
"    show read the device's ualink/ directory in sysfs\n"
"    (Documentation/ABI/testing/sysfs-driver-amdgpu-ualink) and open no\n"
"    device: any user may run them. The other commands open DEVICE and\n"
"    use DRM_IOCTL_AMDGPU_UALINK.\n"
"\n"
"OPTIONS\n"
"    -j, --json     Print the result as one JSON value (list: an array of\n"
"                   objects; show, probe, import: an object).\n"
"    -h, --help     This manual.\n"
"    -V, --version  The version of ualinkctl.\n"
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
"             K, M or G), export it and print its 128-bit handle (32 hex\n"
"             digits). The export lives as long as the buffer: ualinkctl\n"
"             keeps it until it is interrupted (SIGINT or SIGTERM) or its\n"
"             standard input ends. Emulated pod only: buffers are made\n"
"             with its GEM ioctl, which amdgpu does not have (on amdgpu,\n"
"             export from your own program); refused on another driver.\n"
"    import   Import HANDLE on DEVICE as a GEM handle (a batch of one)\n"
"             and say what came of it; the import is released on exit.\n"
"    trace    Run COMMAND with the amdgpu_ualink trace events recorded\n"
"             (trace-cmd record -e amdgpu_ualink, into a temporary\n"
"             directory in $TMPDIR or /tmp), then print them (trace-cmd\n"
"             report). Needs the right to trace, and trace-cmd.\n"
"\n"
"EXIT STATUS\n"
"    0 on success; 1 when the operation failed (the reason is printed,\n"
"    with what the errno means for UALink); 2 on a usage error.\n"
"\n"
"FILES\n"
"    /sys/class/drm/renderD*/device/ualink/\n";

/* --json */
static bool json;

static int usage(void)
{
	fputs("usage: ualinkctl [--json] list | show DEVICE | probe DEVICE |\n"
	      "       export DEVICE SIZE | import DEVICE HANDLE |\n"
	      "       trace COMMAND... | --help | --version\n", stderr);
	return 2;
}

/* The node name of DEVICE ("renderD128" of "/dev/dri/renderD128"). */
static const char *node_name(const char *dev)
{
	const char *slash = strrchr(dev, '/');

	return slash ? slash + 1 : dev;
}

static int open_device(const char *name)
{
	char path[PATH_MAX];
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

/* Print @obj, the command's whole result, and drop it. */
static void json_print(struct json_object *obj)
{
	puts(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY |
					    JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(obj);
}

/* An attribute's text as JSON: a number when it is one, else a string. */
static struct json_object *json_value(const char *text)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(text, &end, 10);
	if (*text >= '0' && *text <= '9' && !*end && !errno && v <= INT64_MAX)
		return json_object_new_int64(v);
	return json_object_new_string(text);
}

/* The columns of list; show has these and more */
static const char *const list_attrs[] = {
	"accel_id", "vpod_id", "vpod_size", "accel_state", "exports",
	"imports", "peers_connected",
};

static int cmd_list(void)
{
	struct json_object *all = json ? json_object_new_array() : NULL;
	struct dirent **names;
	int i, n, found = 0;

	n = scandir("/sys/class/drm", &names, NULL, versionsort);
	if (n < 0) {
		perror("ualinkctl: /sys/class/drm");
		json_object_put(all);
		return 1;
	}
	if (!json)
		printf("%-12s %5s %5s %5s %-13s %7s %7s %5s\n", "DEVICE",
		       "ACCEL", "VPOD", "SIZE", "STATE", "EXPORTS", "IMPORTS",
		       "PEERS");
	for (i = 0; i < n; i++) {
		const char *node = names[i]->d_name;
		char val[7][32];
		unsigned int a;

		if (strncmp(node, "renderD", 7) ||
		    ualink_sysfs_read_node(node, "accel_state", val[3],
					   sizeof(val[3])) < 0)
			continue;
		for (a = 0; a < 7; a++)
			if (a != 3 &&
			    ualink_sysfs_read_node(node, list_attrs[a], val[a],
						   sizeof(val[a])) < 0)
				snprintf(val[a], sizeof(val[a]), "-");
		found++;
		if (json) {
			struct json_object *o = json_object_new_object();

			json_object_object_add(o, "device",
					       json_object_new_string(node));
			for (a = 0; a < 7; a++)
				json_object_object_add(o, list_attrs[a],
						       strcmp(val[a], "-") ?
						       json_value(val[a]) : NULL);
			json_object_array_add(all, o);
			continue;
		}
		printf("%-12s %5s %5s %5s %-13s %7s %7s %5s\n", node, val[0],
		       val[1], val[2], val[3], val[4], val[5], val[6]);
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (json)
		json_print(all);
	else if (!found)
		printf("(no render node with UALink)\n");
	return 0;
}

static int cmd_show(const char *dev)
{
	static const char *const attrs[] = {
		"accel_state", "accel_id", "vpod_id", "vpod_size",
		"vpod_active_accels", "local_accels", "link_type",
		"bandwidth", "latency", "ppod_id", "ppod_size", "addr_mode",
		"exports", "imports", "grants", "pins", "peers_connected",
		"timeouts", "retransmissions", "drops", "connection_ends",
		"shootdown_errors", "revoke_timeouts", "release_timeouts",
		"fabric_refusals",
	};
	struct json_object *o = json ? json_object_new_object() : NULL;
	const char *node = node_name(dev);
	unsigned int i, found = 0;
	char buf[8192];

	for (i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		int ret = ualink_sysfs_read_node(node, attrs[i], buf, sizeof(buf));

		if (ret == -ENOENT)
			continue;	/* the driver does not know it */
		found++;
		if (json)
			json_object_object_add(o, attrs[i], ret < 0 ? NULL :
					       json_value(buf));
		else
			printf("%-19s %s\n", attrs[i],
			       ret < 0 ? strerror(-ret) : buf);
	}
	if (!found) {
		fprintf(stderr, "ualinkctl: %s: no UALink (no ualink/ directory in sysfs)\n",
			node);
		json_object_put(o);
		return 1;
	}
	if (json)
		json_print(o);
	return 0;
}

/* The names of the bits of @mask, from @names; unknown ones in hex. */
static struct json_object *bits(const char *what, uint32_t mask,
				const char *const *names, unsigned int n)
{
	struct json_object *a = json ? json_object_new_array() : NULL;
	char hex[16];
	unsigned int i;

	if (!json)
		printf("%-19s", what);
	for (i = 0; i < 32; i++) {
		const char *name = i < n ? names[i] : NULL;

		if (!(mask & (1u << i)))
			continue;
		if (!name) {
			snprintf(hex, sizeof(hex), "0x%x", 1u << i);
			name = hex;
		}
		if (json)
			json_object_array_add(a, json_object_new_string(name));
		else
			printf(" %s", name);
	}
	if (!json)
		printf("\n");
	return a;
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
	struct json_object *o, *v[3];
	int fd = open_device(dev), ret;

	if (fd < 0)
		return 1;
	ret = ualink_probe(fd, &info);
	close(fd);
	if (ret) {
		fprintf(stderr, "ualinkctl: %s: %s\n", node_name(dev),
			ualink_strerror(ret));
		return 1;
	}
	v[0] = bits("ops", info.ops, ops, sizeof(ops) / sizeof(ops[0]));
	v[1] = bits("import_flags", info.import_flags, flags, 1);
	v[2] = bits("batch_flags", info.batch_flags, flags, 3);
	if (!json) {
		printf("%-19s %u\n", "batch_max", info.batch_max);
		return 0;
	}
	o = json_object_new_object();
	json_object_object_add(o, "ops", v[0]);
	json_object_object_add(o, "import_flags", v[1]);
	json_object_object_add(o, "batch_flags", v[2]);
	json_object_object_add(o, "batch_max",
			       json_object_new_int64(info.batch_max));
	json_print(o);
	return 0;
}

/*
 * SIZE: a positive decimal (or 0x hex) count of bytes, optionally ending
 * in K, M or G; 0 for anything else, an overflow included.
 */
static uint64_t parse_size(const char *text)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (*text < '0' || *text > '9')	/* strtoull takes "-1" and " 1" */
		return 0;
	errno = 0;
	v = strtoull(text, &end, 0);
	if (errno)
		return 0;
	switch (*end) {
	case 'K': case 'k':
		shift = 10, end++;
		break;
	case 'M': case 'm':
		shift = 20, end++;
		break;
	case 'G': case 'g':
		shift = 30, end++;
		break;
	}
	if (*end || v > UINT64_MAX >> shift)
		return 0;
	return (uint64_t)v << shift;
}

/* Is @fd's driver the emulated pod (whose GEM ioctl export needs)? */
static bool is_vpod(int fd, char *name, size_t size)
{
	struct drm_version v = { .name_len = size - 1, .name = name };

	memset(name, 0, size);
	if (ioctl(fd, DRM_IOCTL_VERSION, &v)) {
		snprintf(name, size, "not DRM");
		return false;
	}
	return v.name_len < size && !strcmp(name, AMDGPU_UALINK_VPOD_DRIVER_NAME);
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
	char text[UALINK_HANDLE_STRLEN], c, driver[64];
	struct sigaction sa = { .sa_handler = on_signal };
	int fd, ret;

	create.size = parse_size(size_text);
	if (!create.size) {
		fprintf(stderr, "ualinkctl: %s: not a size\n", size_text);
		return usage();
	}
	fd = open_device(dev);
	if (fd < 0)
		return 1;
	if (!is_vpod(fd, driver, sizeof(driver))) {
		fprintf(stderr, "ualinkctl: %s: export needs the emulated pod, whose GEM ioctl makes the buffer; the driver here is %s (on amdgpu, export from your own program)\n",
			node_name(dev), driver);
		close(fd);
		return 1;
	}
	if (ioctl(fd, DRM_IOCTL_AMDGPU_UALINK_VPOD_GEM_CREATE, &create)) {
		fprintf(stderr, "ualinkctl: making a buffer on %s: %s\n", dev,
			strerror(errno));
		close(fd);
		return 1;
	}
	ret = ualink_export(fd, create.handle, &h);
	if (ret) {
		fprintf(stderr, "ualinkctl: export: %s\n", ualink_strerror(ret));
		close(fd);
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

	if (ualink_handle_parse(handle_text, &e.handle)) {
		fprintf(stderr, "ualinkctl: %s: not a handle (32 hex digits)\n",
			handle_text);
		return usage();
	}
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
	if (json) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "accel_id",
				       json_object_new_int(ualink_handle_accel(e.handle)));
		json_object_object_add(o, "gem_handle",
				       json_object_new_int64(e.gem_handle));
		json_print(o);
	} else {
		printf("imported the buffer of accelerator %u as GEM handle %u\n",
		       ualink_handle_accel(e.handle), e.gem_handle);
	}
	close(fd);
	return 0;
}

/* Run @argv and wait for it: its exit status, or -1. */
static int run(char **argv)
{
	pid_t pid = fork();
	int st;

	if (pid < 0) {
		perror("ualinkctl: fork");
		return -1;
	}
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "ualinkctl: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static int cmd_trace(char **argv)
{
	const char *tmp = getenv("TMPDIR");
	char dir[PATH_MAX], dat[PATH_MAX + 16];
	char *record[64] = { "trace-cmd", "record", "-q", "-e", "amdgpu_ualink",
			     "-o", dat };
	char *report[] = { "trace-cmd", "report", "-q", "-i", dat, NULL };
	int i, n = 7, ret;

	snprintf(dir, sizeof(dir), "%s/ualinkctl-trace.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");

	for (i = 0; argv[i]; i++) {
		if (n == 63) {
			fprintf(stderr, "ualinkctl: trace: too many arguments\n");
			return 2;
		}
		record[n++] = argv[i];
	}
	record[n] = NULL;
	if (!mkdtemp(dir)) {
		perror("ualinkctl: trace");
		return 1;
	}
	snprintf(dat, sizeof(dat), "%s/trace.dat", dir);
	ret = run(record);
	if (ret) {
		fprintf(stderr, "ualinkctl: trace-cmd record failed (%d)\n", ret);
	} else {
		ret = run(report);
		if (ret)
			fprintf(stderr, "ualinkctl: trace-cmd report failed (%d)\n",
				ret);
	}
	unlink(dat);
	rmdir(dir);
	return ret ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'j' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	const char *cmd;
	int c, n;

	/* "+": options end at the command (trace's COMMAND has its own) */
	while ((c = getopt_long(argc, argv, "+hjV", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(manual, stdout);
			return 0;
		case 'j':
			json = true;
			break;
		case 'V':
			printf("ualinkctl %s\n", UALINK_VERSION);
			return 0;
		default:
			return usage();
		}
	}
	if (optind >= argc)
		return usage();
	cmd = argv[optind];
	n = argc - optind - 1;	/* the command's arguments */
	argv += optind + 1;
	if (!strcmp(cmd, "list") && n == 0)
		return cmd_list();
	if (!strcmp(cmd, "show") && n == 1)
		return cmd_show(argv[0]);
	if (!strcmp(cmd, "probe") && n == 1)
		return cmd_probe(argv[0]);
	if (!strcmp(cmd, "export") && n == 2 && !json)
		return cmd_export(argv[0], argv[1]);
	if (!strcmp(cmd, "import") && n == 2)
		return cmd_import(argv[0], argv[1]);
	if (!strcmp(cmd, "trace") && n >= 1 && !json)
		return cmd_trace(argv);
	return usage();
}
