#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# `make run` inside the guest: load the emulated pod (4 accelerators) on the
# UALink core and run the narrated tour of the uAPI.
#   guest-demo.sh MODULE_DIR DEMO_PROGRAM TOOLS_DIR
mods=$1 demo=$2 tools=$3
ualink=$mods/drivers/gpu/drm/amd/amdgpu/ualink
set -e

. "$(dirname "$0")/guest-lib.sh"

echo
echo "=== UALink on $(uname -r), $(nproc) CPUs: the emulated pod"
echo "--- insmod amdgpu_ualink_vpod.ko nodes=4 (loads the core, TTM, ...)"
load "$ualink/amdgpu_ualink_vpod.ko" nodes=4
echo "--- /sys/kernel/debug/amdgpu_ualink_vpod/nodes (id, virtual pod, state, render node)"
cat /sys/kernel/debug/amdgpu_ualink_vpod/nodes
"$demo"
# the first render node with UALink (vgem, built in, may come first)
first=$(ls -d /sys/class/drm/renderD*/device/ualink | head -n 1 | cut -d/ -f5)
echo "--- what an administrator sees: ualinkctl list, ualinkctl show $first"
"$tools/ualinkctl" list
"$tools/ualinkctl" show "$first"
echo "--- a symmetric heap over the 4 accelerators (tools/ualink/ualink_symheap.c)"
"$tools/ualink_symheap"
echo "--- mailbox of accelerator 0 after the tour (/sys/kernel/debug/amdgpu_ualink_vpod/node0/state)"
sed -n '/^node /,$p' /sys/kernel/debug/amdgpu_ualink_vpod/node0/state | head -n 20
echo "--- rmmod amdgpu_ualink_vpod amdgpu_ualink"
rmmod amdgpu_ualink_vpod
rmmod amdgpu_ualink
echo "=== done"
