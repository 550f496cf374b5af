#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# `make run` inside the guest: load the emulated pod (4 accelerators) on the
# UALink core and run the narrated tour of the uAPI.
#   guest-demo.sh MODULE_DIR DEMO_PROGRAM
mods=$1 demo=$2
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
echo "--- mailbox of accelerator 0 after the tour (/sys/kernel/debug/amdgpu_ualink_vpod/node0/state)"
sed -n '/^node /,$p' /sys/kernel/debug/amdgpu_ualink_vpod/node0/state | head -n 20
echo "--- rmmod amdgpu_ualink_vpod amdgpu_ualink"
rmmod amdgpu_ualink_vpod
rmmod amdgpu_ualink
echo "=== done"
