#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Runs inside the debug guest (see vm-test.sh): loads the core, runs its
# KUnit suites as a module (on SMP, which UML is not), unloads it again, then
# runs every IGT program. Results go to the current directory (the guest's
# /tmp/out); the host counts them.
#
#   guest-tests.sh MODULE_DIR IGT_DIR TOOLS_DIR
mods=$1 igt=$2
# tools/ualink's programs, for IGT amdgpu_ualink_vpod_tools
export UALINK_TOOLS=$3
ualink=$mods/drivers/gpu/drm/amd/amdgpu/ualink
status=0

. "$(dirname "$0")/guest-lib.sh"

echo "guest: loading the UALink core and its KUnit tests"
load "$ualink/amdgpu_ualink.ko" || status=1
cat /sys/kernel/debug/amdgpu_ualink/npa_layout || status=1
# The host parses the KTAP the module prints from this marker on (the
# built-in KUnit prints an empty KTAP document at boot).
echo "ualink: kunit module begins" > /dev/kmsg
# full_scale=0: the pod-scale cases on a share of the pod (UML runs them
# whole; here each of their million calls is ~20 times slower)
load "$ualink/tests/amdgpu_ualink_test.ko" full_scale=0 || status=1
rmmod amdgpu_ualink_test || status=1
rmmod amdgpu_ualink || status=1

# amdgpu itself, with its UALink glue's KUnit suite (a fake device; the
# guest has no AMD GPU, so amdgpu binds to nothing).
echo "guest: loading amdgpu and the KUnit tests of its UALink glue"
echo "ualink: kunit amdgpu begins" > /dev/kmsg
load "$mods/drivers/gpu/drm/amd/amdgpu/amdgpu.ko" || status=1
rmmod amdgpu || status=1
rmmod amdgpu_ualink || status=1

# The emulated pod for the IGT suite: 4 DRM accelerators and 60 fabric-only
# ones (a whole pod of 1,024 exhausts lockdep's chains in this debug guest;
# the benchmark guest has no lockdep and runs the full pod).
echo "guest: loading the emulated pod"
load "$ualink/amdgpu_ualink_vpod.ko" nodes=4 fabric_nodes=60 || status=1

for t in "$igt"/*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	echo "guest: IGT $name"
	# the fuzzer: a fixed budget and seed here (make fuzz: any)
	UALINK_FUZZ_SECONDS=90 UALINK_FUZZ_SEED=0x5eed \
		"$t" > "igt-$name.log" 2>&1
	rc=$?
	cat "igt-$name.log"
	echo "$rc" > "igt-$name.rc"
done

# the host checks that every node is back in its initial state
cat /sys/kernel/debug/amdgpu_ualink_vpod/nodes > pod-after.txt || status=1

echo "guest: unloading the emulated pod"
rmmod amdgpu_ualink_vpod || status=1
rmmod amdgpu_ualink || status=1
exit $status
