#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# One guest of `make pod-test` (pod-test.sh): the emulated pod's module
# with the accelerators this guest hosts, the fabric being the ivshmem
# region the guests share; then this guest's part of the test program.
#   guest-pod.sh MODULE_DIR PROGRAM ROLE FIRST_ID [NODES POD_NODES]
# ROLE is a, b or b2 (B booted again) of the first pod, w, x, y or z of
# the second; this guest hosts NODES accelerators (2) from FIRST_ID of a
# pod of POD_NODES (4). The exchange directory is the host's, mounted as
# "pod".
mods=$1 prog=$2 role=$3 first=$4 nodes=${5:-2} pod_nodes=${6:-4}
ualink=$mods/drivers/gpu/drm/amd/amdgpu/ualink

. "$(dirname "$0")/guest-lib.sh"

say() { echo "guest $role: [$(cut -d' ' -f1 /proc/uptime)s] $*"; }
mkdir -p /tmp/pod
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 pod /tmp/pod || exit 1
say "up: $(nproc) CPUs, $(grep -l 0x1110 /sys/bus/pci/devices/*/device | wc -l) ivshmem device(s)"
load "$ualink/amdgpu_ualink.ko" || exit 1
load "$ualink/amdgpu_ualink_vpod.ko" shm=1 pod_nodes="$pod_nodes" first_id="$first" \
	nodes="$nodes" vram_mb=4 || exit 1
ids=$(seq "$first" $((first + nodes - 1)))
say "accelerators" $ids "up (ID, virtual pod, state, device, boots in the region):"
sed "s/^/guest $role: nodes: /" /sys/kernel/debug/amdgpu_ualink_vpod/nodes
"$prog" "$role" /tmp/pod
status=$?
say "test program exited with $status"
for id in $ids; do
	echo "--- node$id state"
	cat /sys/kernel/debug/amdgpu_ualink_vpod/node$id/state
done
rmmod amdgpu_ualink_vpod || status=1
rmmod amdgpu_ualink || status=1
say "modules unloaded"
exit $status
