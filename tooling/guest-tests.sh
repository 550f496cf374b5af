#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Runs inside the debug guest (see vm-test.sh), and the KCSAN guest
# (kcsan.sh): loads the core, runs its KUnit suites as a module (on SMP,
# which UML is not), unloads it again, then runs every IGT program. Results go to the current directory (the guest's
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
# guest has no AMD GPU, so amdgpu binds to nothing). The KCSAN guest
# (UALINK_GUEST_AMDGPU=0) has no amdgpu.
echo "ualink: kunit amdgpu begins" > /dev/kmsg
if [ "${UALINK_GUEST_AMDGPU:-1}" = 1 ]; then
	echo "guest: loading amdgpu and the KUnit tests of its UALink glue"
	load "$mods/drivers/gpu/drm/amd/amdgpu/amdgpu.ko" || status=1
	rmmod amdgpu || status=1
	rmmod amdgpu_ualink || status=1
fi

# The emulated pod for the IGT suite: 4 DRM accelerators and 60 fabric-only
# ones (a whole pod of 1,024 exhausts lockdep's chains in this debug guest;
# the benchmark guest has no lockdep and runs the full pod).
echo "guest: loading the emulated pod"
load "$ualink/amdgpu_ualink_vpod.ko" nodes=4 fabric_nodes=60 || status=1

# one IGT program: its log and exit code for the host (vm-test.sh)
igt_run() {	# igt_run PROGRAM
	name=$(basename "$1")
	echo "guest: IGT $name"
	# the fuzzer: a fixed budget and seed here (make fuzz: any)
	UALINK_FUZZ_SECONDS=${UALINK_GUEST_FUZZ_SECONDS:-90} UALINK_FUZZ_SEED=0x5eed \
		"$1" > "igt-$name.log" 2>&1
	echo "$?" > "igt-$name.rc"
	cat "igt-$name.log"
}

# the unplug program leaves a device unplugged for good: it runs last, on
# a pod of its own
unplug=amdgpu_ualink_vpod_unplug
for t in "$igt"/*; do
	[ -x "$t" ] || continue
	[ "$(basename "$t")" = "$unplug" ] && continue
	igt_run "$t"
done

# the host checks that every node is back in its initial state
cat /sys/kernel/debug/amdgpu_ualink_vpod/nodes > pod-after.txt || status=1

echo "guest: unloading the emulated pod"
rmmod amdgpu_ualink_vpod || status=1
rmmod amdgpu_ualink || status=1

# A pod for the unplug program, then unloaded with a device unplugged.
if [ -x "$igt/$unplug" ]; then
	echo "guest: loading the emulated pod for $unplug"
	load "$ualink/amdgpu_ualink_vpod.ko" nodes=4 fabric_nodes=4 || status=1
	igt_run "$igt/$unplug"
	echo "guest: unloading the emulated pod, a device unplugged"
	rmmod amdgpu_ualink_vpod || status=1
	rmmod amdgpu_ualink || status=1
fi

# The KCSAN guest's anchor: KCSAN's own test of a race it must report
# (after our code, so that its reports are told apart from any of ours).
if [ "${UALINK_GUEST_KCSAN:-0}" = 1 ]; then
	echo "guest: KCSAN's own test_basic, the anchor"
	echo "ualink: kcsan anchor begins" > /dev/kmsg
	# no newline: the parameter keeps it, and no test name would match
	printf %s 'kcsan.test_basic*' > /sys/module/kunit/parameters/filter_glob
	load "$mods/kernel/kcsan/kcsan_test.ko" || status=1
	rmmod kcsan_test || status=1
fi
exit $status
