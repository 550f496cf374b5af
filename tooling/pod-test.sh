#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# `make pod-test`: a pod of emulated accelerators across two kernels. Two
# debug guests (TCG) boot at once, each with the same host file as an
# ivshmem-plain device's memory: the fabric (rings, page tables and device
# memory; see amdgpu_ualink_vpod_shm.c). Guest A hosts accelerators 0-1,
# guest B 2-3. Each runs its part of tests/pod/ualink_pod.c; they pass
# handles through a host directory both mount. Fails unless both parts
# pass and both kernel logs are clean.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

run=$OUT/pod-test
"$REPO/tooling/vm-kernel.sh" || exit 1
make -s -C "$REPO/tools/ualink" OUT="$OUT/tools" CC="ccache gcc" || exit 1
mkdir -p "$OUT/pod"
ccache gcc -O2 -g -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE \
	-I"$REPO/tools/ualink" -I"$REPO/include/uapi/drm" \
	$(pkg-config --cflags libdrm) -o "$OUT/pod/ualink_pod" \
	"$REPO/tests/pod/ualink_pod.c" "$OUT/tools/libualink.a" \
	$(pkg-config --libs libdrm) || exit 1

rm -rf "$run"
mkdir -p "$run/xchg"
region=/dev/shm/ualink-pod-$$
trap 'rm -f "$region"' EXIT
truncate -s 32M "$region"	# zeroed: an empty fabric

guest() {	# guest ROLE FIRST_ID
	VM_QEMU_ARGS="-object memory-backend-file,id=fabric,share=on,mem-path=$region,size=32M
		-device ivshmem-plain,memdev=fabric
		-virtfs local,path=$run/xchg,mount_tag=pod,security_model=none,multidevs=remap" \
	VM_TIMEOUT=${POD_TIMEOUT:-600} \
		"$REPO/tooling/vm-run.sh" "$OUT/vm/arch/x86/boot/bzImage" "$run/$1" \
		"sh $REPO/tooling/guest-pod.sh $OUT/vm $OUT/pod/ualink_pod $1 $2" \
		> "$run/$1.log" 2>&1
}

start=$(date +%s)
guest a 0 & pa=$!
guest b 2 & pb=$!
wait $pa; ra=$?
wait $pb; rb=$?
end=$(date +%s)
for g in a b; do
	echo "=== guest $g"
	grep -aE '^(pod:|guest [ab]:|vm-run:|vm-init:)' "$run/$g.log"
done
echo "pod-test: guest A exit $ra, guest B exit $rb, $((end - start)) s for both (boot, test, shutdown)"
[ "$ra" = 0 ] && [ "$rb" = 0 ] || { echo "pod-test: FAIL (logs in $run)"; exit 1; }
echo "pod-test: PASS"
