#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# `make bench` inside the benchmark guest: a whole pod (4 DRM accelerators,
# 1,020 fabric-only), then the benchmark program. With BENCH_PERF=1, the
# program runs under `perf record` (software clock, every CPU) and the
# report lands beside its figures (perf.txt).
#   guest-bench.sh MODULE_DIR BENCH_PROGRAM
mods=$1 bench=$2
ualink=$mods/drivers/gpu/drm/amd/amdgpu/ualink
set -e

. "$(dirname "$0")/guest-lib.sh"

echo "guest: $(uname -r), $(nproc) CPUs, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
[ "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)" = tsc ] ||
	{ echo "guest: the clocksource is not tsc: figures would be jiffies-grade"; exit 1; }
start=$(date +%s%N)
load "$ualink/amdgpu_ualink_vpod.ko" nodes=4 fabric_nodes=1020 vram_mb=64
echo "guest: a pod of 1,024 accelerators up in $(( ($(date +%s%N) - start) / 1000000 )) ms"
if [ "${BENCH_PERF:-0}" = 1 ]; then
	echo 0 > /proc/sys/kernel/kptr_restrict
	echo -1 > /proc/sys/kernel/perf_event_paranoid
	perf record -q -a -g -e cpu-clock -F 2000 -o /tmp/perf.data "$bench"
	perf report -q -i /tmp/perf.data --stdio --no-children --sort sym \
		--percent-limit 0.5 -g none > perf.txt 2>/dev/null || true
	perf report -q -i /tmp/perf.data --stdio --children --sort sym \
		--percent-limit 2 -g none > perf-children.txt 2>/dev/null || true
	# the benchmark's own thread: what an ioctl costs its caller
	perf report -q -i /tmp/perf.data --stdio --children --sort sym \
		--comms "$(basename "$bench")" --percent-limit 1 -g none \
		> perf-caller.txt 2>/dev/null || true
else
	"$bench"
fi
rmmod amdgpu_ualink_vpod
rmmod amdgpu_ualink
