#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Tier 3: boot the debug SMP guest (KASAN, lockdep, kmemleak, UBSAN, KFENCE,
# debug objects), run the core's KUnit suites as a module there and every
# IGT program, and fail on any kernel report. Cold: the debug kernel (see
# vm-kernel.sh); warm: about 6 minutes, the guest's run under TCG.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

pass=0 fail=0 skip=0
run=$OUT/vm-test

"$REPO/tooling/vm-kernel.sh" || { counts vm-test 0 1 0; exit 1; }
# Only the programs of this checkout: no stale binaries of removed tests.
rm -rf "$OUT/igt"
make -s -j"$JOBS" -C "$REPO/tests/igt" OUT="$OUT/igt" CC="ccache gcc" || { counts vm-test 0 1 0; exit 1; }
# libualink, ualinkctl and the symmetric-heap example (IGT tools runs them)
rm -rf "$OUT/tools"
make -s -C "$REPO/tools/ualink" OUT="$OUT/tools" CC="ccache gcc" || { counts vm-test 0 1 0; exit 1; }

"$REPO/tooling/vm-run.sh" "$OUT/vm/arch/x86/boot/bzImage" "$run" \
	"sh $REPO/tooling/guest-tests.sh $OUT/vm $OUT/igt $OUT/tools"
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

# IGT: what each program must run is listed next to it
# (tests/igt/PROGRAM.subtests). A listed subtest counts as passed only when
# it reported SUCCESS; skipped, failed, crashed, never reported, or its
# program not built or not run: each is a failure. A subtest a program
# reports but its list lacks fails too (the list is updated with the test),
# as does a program without a list and one that exited non-zero.
igt_result() {	# igt_result LOG SUBTEST: SUCCESS, SKIP, FAIL, ... or nothing
	awk -v t="$2:" '$1 == "Subtest" && $2 == t { r = $3 } END { print r }' "$1"
}
igt_program() {	# igt_program LIST
	local list=$1 name lg want got res trc p=0 f=0 n
	name=$(basename "$list" .subtests)
	lg=$share/igt-$name.log
	n=$(grep -c . "$list")
	if [ ! -x "$OUT/igt/$name" ] || [ ! -f "$lg" ]; then
		echo "vm-test: FAIL: IGT $name was not built or did not run: its $n subtests fail" >&2
		igt_add "$name" 0 "$n"
		return
	fi
	while read -r want; do
		[ -n "$want" ] || continue
		res=$(igt_result "$lg" "$want")
		case $res in
		SUCCESS) p=$((p + 1)) ;;
		"") echo "vm-test: FAIL: IGT $name: $want did not run" >&2
		    f=$((f + 1)) ;;
		*) echo "vm-test: FAIL: IGT $name: $want: $res" >&2
		   f=$((f + 1)) ;;
		esac
	done < "$list"
	for got in $(awk '$1 == "Subtest" { sub(/:$/, "", $2); print $2 }' "$lg" | sort -u); do
		grep -qxF "$got" "$list" && continue
		echo "vm-test: FAIL: IGT $name: subtest $got is not in $list" >&2
		f=$((f + 1))
	done
	trc=$(cat "$share/igt-$name.rc" 2>/dev/null || echo none)
	if [ "$trc" != 0 ] && [ "$f" -eq 0 ]; then
		echo "vm-test: FAIL: IGT $name exited with $trc" >&2
		f=1
	fi
	echo "IGT $name: $p of $n passed, $f failed (exit $trc)"
	igt_add "$name" "$p" "$f"
}
igt_add() {	# igt_add PROGRAM PASSED FAILED: vgem's PRIME program is an anchor
	if [ "$1" = vgem_prime_anchor ]; then
		apass=$((apass + $2)) afail=$((afail + $3))
	else
		pass=$((pass + $2)) fail=$((fail + $3))
	fi
}
apass=0 afail=0
lists=("$REPO"/tests/igt/*.subtests)
[ -f "${lists[0]}" ] || { echo "vm-test: FAIL: no tests/igt/*.subtests" >&2; fail=$((fail + 1)); lists=(); }
for l in "${lists[@]}"; do
	igt_program "$l"
done
for t in "$OUT"/igt/*; do
	[ -x "$t" ] || continue
	[ -f "$REPO/tests/igt/$(basename "$t").subtests" ] && continue
	echo "vm-test: FAIL: IGT $(basename "$t") has no tests/igt/$(basename "$t").subtests" >&2
	fail=$((fail + 1))
done

# The pod once the programs are done: every accelerator back in its initial
# state (active, in virtual pod 0), or a clean-up failed where nothing
# could report it (an exit handler).
if [ ! -s "$share/pod-after.txt" ]; then
	echo "vm-test: FAIL: the pod's state after the IGT programs was not read" >&2
	fail=$((fail + 1))
elif awk '$2 != 0 || $3 != "active" {
		print "vm-test: FAIL: after the IGT programs, node" $1 " is " \
		      $3 " in vpod " $2 > "/dev/stderr"; bad = 1
	} END { exit bad }' "$share/pod-after.txt"; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
fi

counts vm-test $((pass + apass)) $((fail + afail)) "$skip"
anchors vm-test "$apass" "$afail" 0
[ $((fail + afail)) -eq 0 ]
