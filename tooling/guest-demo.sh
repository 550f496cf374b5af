#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# `make run` inside the guest: load the UALink core and show what it offers.
#   guest-demo.sh MODULE_DIR
ualink=$1/drivers/gpu/drm/amd/amdgpu/ualink
set -e
echo
echo "=== UALink core on $(uname -r), $(nproc) CPUs"
echo "--- modinfo"
modinfo "$ualink/amdgpu_ualink.ko" | grep -E '^(filename|description|license|vermagic)'
ttm=$1/drivers/gpu/drm/ttm/ttm.ko
if [ -f "$ttm" ]; then
	echo "--- insmod ttm.ko (the core's NPA pool is a TTM placement)"
	insmod "$ttm"
fi
echo "--- insmod amdgpu_ualink.ko"
insmod "$ualink/amdgpu_ualink.ko"
grep amdgpu_ualink /proc/modules
echo "--- NPA layout (/sys/kernel/debug/amdgpu_ualink/npa_layout)"
cat /sys/kernel/debug/amdgpu_ualink/npa_layout
echo "--- what the core exports to amdgpu and the vpod"
nm "$ualink/amdgpu_ualink.ko" | awk '$3 ~ /^__ksymtab_/ { sub("__ksymtab_", "", $3); print "   " $3 }' | sort
echo "--- rmmod amdgpu_ualink"
rmmod amdgpu_ualink
[ ! -f "$ttm" ] || rmmod ttm
echo "=== done"
