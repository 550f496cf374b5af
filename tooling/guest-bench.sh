#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# `make bench` inside the benchmark guest: a whole pod (4 DRM accelerators,
# 1,020 fabric-only), then the benchmark program.
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
"$bench"
rmmod amdgpu_ualink_vpod
rmmod amdgpu_ualink
