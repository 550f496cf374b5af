#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Runs inside the debug guest (see fuzz.sh): loads the core and the emulated
# pod as guest-tests.sh does and runs the stateful uAPI fuzzer alone.
#
#   guest-fuzz.sh MODULE_DIR PROGRAM SECONDS SEED
mods=$1 prog=$2
ualink=$mods/drivers/gpu/drm/amd/amdgpu/ualink
status=0

. "$(dirname "$0")/guest-lib.sh"

load "$ualink/amdgpu_ualink.ko" || status=1
load "$ualink/amdgpu_ualink_vpod.ko" nodes=4 fabric_nodes=60 || status=1
UALINK_FUZZ_SECONDS=$3 UALINK_FUZZ_SEED=$4 "$prog" > igt-fuzz.log 2>&1
echo $? > igt-fuzz.rc
cat igt-fuzz.log
cat /sys/kernel/debug/amdgpu_ualink_vpod/nodes > pod-after.txt || status=1
rmmod amdgpu_ualink_vpod || status=1
rmmod amdgpu_ualink || status=1
exit $status
