#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# `make bench`: the uAPI's figures on the emulated pod, from the benchmark
# guest (no sanitizers, no lockdep; clocksource tsc) with a whole pod of
# 1,024 accelerators (4 with a DRM device). Prints the figures and keeps
# them in $RES/bench.txt; fails only when an operation fails, never on a
# figure. Cold: about 7 minutes of kernel build; warm: about 2 minutes.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

"$REPO/tooling/vm-kernel.sh" bench || exit 1
mkdir -p "$OUT/bench"
make -s -C "$REPO/tools/ualink" OUT="$OUT/tools" "$OUT/tools/libualink.a" || exit 1
cc -O2 -Wall -Wextra -Werror -I"$REPO/include/uapi/drm" -I"$REPO/tools/ualink" \
	$(pkg-config --cflags libdrm) -o "$OUT/bench/ualink_bench" \
	"$REPO/tests/bench/ualink_bench.c" "$OUT/tools/libualink.a" \
	$(pkg-config --libs libdrm) || exit 1
echo "bench: booting the benchmark guest (TCG, 2 vCPUs)"
VM_APPEND="clocksource=tsc tsc=reliable" VM_KMEMLEAK=0 \
"$REPO/tooling/vm-run.sh" "$OUT/vm-bench/arch/x86/boot/bzImage" "$OUT/bench/run" \
	"sh $REPO/tooling/guest-bench.sh $OUT/vm-bench $OUT/bench/ualink_bench" \
	> "$OUT/bench/console" 2>&1
rc=$?
cat "$OUT/bench/run/share/output.log" 2>/dev/null | tee "$RES/bench.txt"
[ "$rc" -eq 0 ] && echo "bench: done" || echo "bench: FAILED (exit $rc); console in $OUT/bench/console"
exit "$rc"
