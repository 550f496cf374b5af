#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Tier 3: boot the debug SMP guest (KASAN, lockdep, kmemleak, UBSAN, KFENCE,
# debug objects), run the core's KUnit suites as a module there and every
# IGT program, and fail on any kernel report. Cold: ~7 minutes of kernel
# build; warm: about 70 s, most of it the boot and run under TCG.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

pass=0 fail=0 skip=0
run=$OUT/vm-test

"$REPO/tooling/vm-kernel.sh" || { counts vm-test 0 1 0; exit 1; }
# Only the programs of this checkout: no stale binaries of removed tests.
rm -rf "$OUT/igt"
make -s -C "$REPO/tests/igt" OUT="$OUT/igt" || { counts vm-test 0 1 0; exit 1; }

"$REPO/tooling/vm-run.sh" "$OUT/vm/arch/x86/boot/bzImage" "$run" \
	"sh $REPO/tooling/guest-tests.sh $OUT/vm $OUT/igt"
rc=$?
share=$run/share

# The guest's own checks (modules load, layout readable, modules unload).
if [ -f "$share/rc" ] && [ "$(cat "$share/rc")" = 0 ]; then
	pass=$((pass + 1))
else
	echo "vm-test: FAIL: loading or unloading the core in the guest" >&2
	fail=$((fail + 1))
fi

# The kernel log: any report fails (vm-run.sh wrote reports.txt).
if [ "$rc" -eq 2 ] || [ -s "$run/reports.txt" ]; then
	echo "vm-test: FAIL: kernel reports or guest did not finish" >&2
	fail=$((fail + 1))
else
	pass=$((pass + 1))
fi

# KUnit suites, from the KTAP each module printed: the core's test module,
# then amdgpu's (its UALink glue's suite), each after its marker.
ktap() {	# ktap NAME SED-RANGE
	local name=$1 range=$2 krc
	sed -n "$range" "$share/dmesg.txt" > "$run/$name.dmesg"
	(cd "$TREE" && python3 tools/testing/kunit/kunit.py parse "$run/$name.dmesg") \
		> "$run/$name.log" 2>&1
	krc=$?
	cat "$run/$name.log"
	rm -f "$RES/$name"
	"$REPO/tooling/ktap-counts.sh" "$name" "$run/$name.log" "$krc"
	read -r p f s < "$RES/$name"
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
}
if [ -f "$share/dmesg.txt" ]; then
	ktap vm-kunit '/ualink: kunit module begins/,/ualink: kunit amdgpu begins/p'
	ktap vm-kunit-amdgpu '/ualink: kunit amdgpu begins/,$p'
else
	fail=$((fail + 1))
fi

# IGT: one count per subtest; a program that failed without saying which
# subtest failed (a crash, an abort) counts as one failure more.
for t in "$OUT"/igt/*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	lg=$share/igt-$name.log
	if [ ! -f "$lg" ]; then
		echo "vm-test: FAIL: $name did not run" >&2
		fail=$((fail + 1))
		continue
	fi
	p=$(grep -cE '^Subtest .*: SUCCESS' "$lg")
	f=$(grep -cE '^Subtest .*: (FAIL|CRASH|TIMEOUT)' "$lg")
	s=$(grep -cE '^Subtest .*: SKIP' "$lg")
	trc=$(cat "$share/igt-$name.rc")
	case "$trc" in
	0|77) ;;
	*) [ "$f" -gt 0 ] || f=1 ;;
	esac
	# A program that reported no subtest at all did not test anything.
	[ $((p + f + s)) -gt 0 ] || f=1
	echo "IGT $name: $p passed, $f failed, $s skipped (exit $trc)"
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
done

counts vm-test "$pass" "$fail" "$skip"
[ "$fail" -eq 0 ]
