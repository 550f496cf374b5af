#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# `make kcsan`: the kernel's data-race detector on the lockless paths (the
# repeated import, the dma-buf slot, counters, the fabric's access sets).
# Boots the KCSAN guest (vm-kernel.sh kcsan; it cannot share a kernel with
# KASAN), runs the core's KUnit suites there on two CPUs and every IGT
# program (guest-tests.sh, without amdgpu), then KCSAN's own test_basic as
# the anchor: the detector must report its race. Lists each data race
# reported while our code ran once, by the pair of functions, with its
# count. Fails on any such race, a failed KUnit case or IGT program, or an
# anchor that saw no race. Not part of check: the cold build (some 13
# minutes) does not fit check's budget. Warm: about 6 minutes.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

run=$OUT/kcsan
"$REPO/tooling/vm-kernel.sh" kcsan || exit 1
rm -rf "$OUT/igt-kcsan" "$run"
make -s -j"$JOBS" -C "$REPO/tests/igt" UAPI="$OUT/uapi" OUT="$OUT/igt-kcsan" CC="ccache gcc" || exit 1
make -s -C "$REPO/tools/ualink" UAPI="$OUT/uapi" OUT="$OUT/tools" CC="ccache gcc" || exit 1
# the example built against an installed libualink, which IGT tools runs
"$REPO/tooling/lib-install.sh" "$OUT/tools" > "$OUT/lib-install.log" 2>&1 || exit 1

VM_KMEMLEAK=0 "$REPO/tooling/vm-run.sh" "$OUT/vm-kcsan/arch/x86/boot/bzImage" "$run" \
	"UALINK_GUEST_AMDGPU=0 UALINK_GUEST_KCSAN=1 UALINK_GUEST_FUZZ_SECONDS=60 sh $REPO/tooling/guest-tests.sh $OUT/vm-kcsan $OUT/igt-kcsan $OUT/tools" \
	> "$run.console" 2>&1
rc=$?
share=$run/share
dmesg=$share/dmesg.txt
mkdir -p "$RES"
# our part of the log, and the anchor's
sed -n '1,/ualink: kcsan anchor begins/p' "$dmesg" > "$run/ours.dmesg" 2>/dev/null
sed -n '/ualink: kcsan anchor begins/,$p' "$dmesg" > "$run/anchor.dmesg" 2>/dev/null
ours=$(grep -ac 'BUG: KCSAN:' "$run/ours.dmesg")
anchor=$(grep -ac 'BUG: KCSAN:' "$run/anchor.dmesg")
out=$RES/kcsan.txt
{
	echo "KCSAN guest: guest status $(cat "$share/rc" 2>/dev/null || echo none), vm-run exit $rc"
	# "BUG: KCSAN: data-race in f1 / f2", each pair once with its count
	grep -aoE 'BUG: KCSAN: [a-z-]+ in [^ ]+( / [^ ]+)?' "$run/ours.dmesg" |
		sort | uniq -c | sort -rn
	echo "races reported while the UALink tests ran: $ours"
	echo "races reported by KCSAN's own test_basic (the anchor): $anchor"
} > "$out"
# every report of ours in full, for the fix
grep -aB2 -A40 'BUG: KCSAN:' "$run/ours.dmesg" > "$RES/kcsan-reports.txt"
cat "$out"

fail=0
[ -f "$dmesg" ] && [ "$(cat "$share/rc" 2>/dev/null)" = 0 ] ||
	{ echo "kcsan: the guest did not finish its programs cleanly, see $run.console" >&2; fail=1; }
ktap() {	# ktap NAME SED-RANGE: the KTAP of one module, every case ok
	sed -n "$2" "$dmesg" > "$run/$1.dmesg"
	if (cd "$TREE" && python3 tools/testing/kunit/kunit.py parse "$run/$1.dmesg") \
		> "$run/$1.log" 2>&1; then
		tail -n 1 "$run/$1.log"
	else
		echo "kcsan: $1: a KUnit case failed or none ran, see $run/$1.log" >&2
		fail=1
	fi
}
ktap kunit '/ualink: kunit module begins/,/ualink: kunit amdgpu begins/p'
ktap anchor '/ualink: kcsan anchor begins/,$p'
for f in "$share"/igt-*.rc; do
	[ "$(cat "$f")" = 0 ] && continue
	echo "kcsan: IGT $(basename "$f" .rc | sed 's/^igt-//') exited with $(cat "$f")" >&2
	fail=1
done
[ "$ours" = 0 ] || { echo "kcsan: $ours data races while the UALink tests ran (see $RES/kcsan-reports.txt)" >&2; fail=1; }
[ "$anchor" -gt 0 ] || { echo "kcsan: KCSAN's own test reported no race: the detector did not run" >&2; fail=1; }
exit $fail
