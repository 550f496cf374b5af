#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# `make fuzz`: the stateful uAPI fuzzer (tests/igt/amdgpu_ualink_vpod_fuzz.c)
# alone in the debug guest, for FUZZ_SECONDS (default 600) with FUZZ_SEED
# (default: a new one, printed; give it to replay a run's calls). Fails on
# a broken invariant, an undocumented errno or any kernel report. `make
# check` runs the same program for a short budget among the IGT programs.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

seconds=${FUZZ_SECONDS:-600} seed=${FUZZ_SEED:-0}
run=$OUT/fuzz

"$REPO/tooling/vm-kernel.sh" || exit 1
make -s -C "$REPO/tests/igt" UAPI="$OUT/uapi" OUT="$OUT/igt-fuzz" || exit 1

VM_TIMEOUT=$((seconds + 1200)) "$REPO/tooling/vm-run.sh" \
	"$OUT/vm/arch/x86/boot/bzImage" "$run" \
	"sh $REPO/tooling/guest-fuzz.sh $OUT/vm $OUT/igt-fuzz/amdgpu_ualink_vpod_fuzz $seconds $seed"
rc=$?
grep -E '^fuzz:|^Subtest' "$run/share/igt-fuzz.log" 2>/dev/null
trc=$(cat "$run/share/igt-fuzz.rc" 2>/dev/null || echo none)
if [ "$rc" -ne 0 ] || [ "$trc" != 0 ]; then
	echo "fuzz: FAILED (guest $rc, fuzzer $trc); log in $run/share/igt-fuzz.log" >&2
	exit 1
fi
echo "fuzz: passed; kernel log clean"
