#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Tier 3: boot the debug SMP guest (KASAN, lockdep, kmemleak, UBSAN, KFENCE,
# debug objects), run the core's KUnit suites as a module there and every
# IGT program, and fail on any kernel report. Cold: the debug kernel (see
# vm-kernel.sh); warm: about 6 minutes, the guest's run under TCG.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

run=$OUT/vm-test
T=vm-test
rm -f "$RES/$T.tests"
# r STATUS KIND ID [NOTE]: one result of this tier
r() { result "$T" "$@"; }
# Whatever did not build, every expected test below fails by name.
built=1
"$REPO/tooling/vm-kernel.sh" || { r fail static "build: debug guest kernel"; built=0; }
# Only the programs of this checkout: no stale binaries of removed tests.
rm -rf "$OUT/igt" "$run"
make -s -j"$JOBS" -C "$REPO/tests/igt" UAPI="$OUT/uapi" OUT="$OUT/igt" CC="ccache gcc" ||
	r fail static "build: IGT programs"
# libualink, ualinkctl and the symmetric-heap example (IGT tools runs them)
rm -rf "$OUT/tools"
make -s -C "$REPO/tools/ualink" UAPI="$OUT/uapi" OUT="$OUT/tools" CC="ccache gcc" ||
	r fail static "build: tools/ualink"
# libualink installed as a package would be, checked, and the example
# built against the installed copy (IGT tools runs it)
"$REPO/tooling/lib-install.sh" "$OUT/tools" > "$OUT/lib-install.log" 2>&1
grep -E '^(pass|fail) ' "$OUT/lib-install.log" | while read -r st name note; do
	r "$st" test "lib-install:$name" "$note"
done
grep -q '^pass ' "$OUT/lib-install.log" || r fail test lib-install "see $OUT/lib-install.log"

rc=1
if [ "$built" = 1 ]; then
	"$REPO/tooling/vm-run.sh" "$OUT/vm/arch/x86/boot/bzImage" "$run" \
		"sh $REPO/tooling/guest-tests.sh $OUT/vm $OUT/igt $OUT/tools"
	rc=$?
fi
share=$run/share
mkdir -p "$share"

# The guest's own checks (modules load, layout readable, modules unload).
if [ -f "$share/rc" ] && [ "$(cat "$share/rc")" = 0 ]; then
	r pass test vm-test:modules-load-and-unload
else
	echo "vm-test: FAIL: loading or unloading the core in the guest" >&2
	r fail test vm-test:modules-load-and-unload
fi

# The kernel log: any report fails (vm-run.sh wrote reports.txt).
if [ "$rc" -eq 2 ] || [ -s "$run/reports.txt" ] || [ "$built" = 0 ]; then
	echo "vm-test: FAIL: kernel reports or guest did not finish" >&2
	r fail test vm-test:kernel-log-clean
else
	r pass test vm-test:kernel-log-clean
fi

# KUnit suites, from the KTAP each module printed: the core's test module,
# then amdgpu's (its UALink glue's suite), each after its marker; every
# case against its list in tests/expected/ (a guest that died fails each
# case it did not report, by name).
ktap() {	# ktap NAME SED-RANGE
	local name=$1 range=$2
	sed -n "$range" "$share/dmesg.txt" > "$run/$name.dmesg" 2>/dev/null
	rm -f "$run/$name.json"
	(cd "$TREE" && python3 tools/testing/kunit/kunit.py parse \
		--json="$run/$name.json" "$run/$name.dmesg") > "$run/$name.log" 2>&1
	cat "$run/$name.log"
	"$REPO/tooling/results.py" kunit "$run/$name.json" \
		"$REPO/tests/expected/$name.list" >> "$RES/$T.tests"
}
ktap vm-kunit '/ualink: kunit module begins/,/ualink: kunit amdgpu begins/p'
ktap vm-kunit-amdgpu '/ualink: kunit amdgpu begins/,$p'

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
	local list=$1 name lg want got res trc p=0 f=0 n kind=test
	name=$(basename "$list" .subtests)
	# vgem's PRIME program is an anchor
	[ "$name" = vgem_prime_anchor ] && kind=anchor
	lg=$share/igt-$name.log
	n=$(grep -c . "$list")
	[ -x "$OUT/igt/$name" ] && [ -f "$lg" ] ||
		echo "vm-test: FAIL: IGT $name was not built or did not run: its $n subtests fail" >&2
	while read -r want; do
		[ -n "$want" ] || continue
		res=$(igt_result "$lg" "$want" 2>/dev/null)
		case $res in
		SUCCESS) p=$((p + 1)); r pass $kind "igt:$name.$want" ;;
		"") echo "vm-test: FAIL: IGT $name: $want did not run" >&2
		    f=$((f + 1)); r fail $kind "igt:$name.$want" "did not run" ;;
		*) echo "vm-test: FAIL: IGT $name: $want: $res" >&2
		   f=$((f + 1)); r fail $kind "igt:$name.$want" "$res" ;;
		esac
	done < "$list"
	[ -f "$lg" ] || return
	for got in $(awk '$1 == "Subtest" { sub(/:$/, "", $2); print $2 }' "$lg" | sort -u); do
		grep -qxF "$got" "$list" && continue
		echo "vm-test: FAIL: IGT $name: subtest $got is not in $list" >&2
		f=$((f + 1)); r fail $kind "igt:$name.$got" "not in $list"
	done
	# a program that fails outside its subtests (a fixture, the exit
	# handler that checks nothing is left held) is a failure of its own
	trc=$(cat "$share/igt-$name.rc" 2>/dev/null || echo none)
	if [ "$trc" != 0 ] && [ "$f" -eq 0 ]; then
		echo "vm-test: FAIL: IGT $name exited with $trc" >&2
		f=1; r fail $kind "igt:$name:exit" "exited with $trc"
	fi
	echo "IGT $name: $p of $n passed, $f failed (exit $trc)"
}
lists=("$REPO"/tests/igt/*.subtests)
[ -f "${lists[0]}" ] || { echo "vm-test: FAIL: no tests/igt/*.subtests" >&2; r fail test igt:lists; lists=(); }
for l in "${lists[@]}"; do
	igt_program "$l"
done
for t in "$OUT"/igt/*; do
	[ -x "$t" ] || continue
	[ -f "$REPO/tests/igt/$(basename "$t").subtests" ] && continue
	echo "vm-test: FAIL: IGT $(basename "$t") has no tests/igt/$(basename "$t").subtests" >&2
	r fail test "igt:$(basename "$t")" "no .subtests list"
done

# The pod once the programs are done: every accelerator back in its initial
# state (active, in virtual pod 0), or a clean-up failed where nothing
# could report it (an exit handler).
if [ ! -s "$share/pod-after.txt" ]; then
	echo "vm-test: FAIL: the pod's state after the IGT programs was not read" >&2
	r fail test vm-test:pod-state-restored "not read"
elif awk '$2 != 0 || $3 != "active" {
		print "vm-test: FAIL: after the IGT programs, node" $1 " is " \
		      $3 " in vpod " $2 > "/dev/stderr"; bad = 1
	} END { exit bad }' "$share/pod-after.txt"; then
	r pass test vm-test:pod-state-restored
else
	r fail test vm-test:pod-state-restored
fi

tier_done "$T"
