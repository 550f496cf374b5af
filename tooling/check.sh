#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# `make check`: all four tiers, each run even when an earlier one failed,
# then one line "N passed, N failed, N skipped". Exit status 0 only when
# nothing failed and every tier reported.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

tiers=(kunit-uml amdgpu vm-test pod-test)
start=$(date +%s)
# names this run: what one tier built for the next is not built again
export UALINK_CHECK_RUN="$$.$(date +%s%N)"
declare -A took rcs
for t in "${tiers[@]}"; do
	rm -f "$RES/$t" "$RES/$t.anchors"
	s=$(date +%s)
	case $t in
	kunit-uml) "$REPO/tooling/kunit-uml.sh" ;;
	amdgpu) "$REPO/tooling/amdgpu-check.sh" ;;
	vm-test) "$REPO/tooling/vm-test.sh" ;;
	pod-test) "$REPO/tooling/pod-test.sh" ;;
	esac
	rcs[$t]=$?
	took[$t]=$(($(date +%s) - s))
done

P=0 F=0 S=0 AP=0 AF=0 AS=0
echo
echo "== make check summary"
for t in "${tiers[@]}"; do
	if [ -f "$RES/$t" ]; then
		read -r p f s < "$RES/$t"
	else
		p=0 f=1 s=0	# a tier that reported nothing failed
	fi
	# a tier that failed without counting a failure still failed
	[ "${rcs[$t]}" -eq 0 ] || [ "$f" -gt 0 ] || f=1
	printf '   %-10s %4d passed, %d failed, %d skipped  (%ds)\n' \
		"$t" "$p" "$f" "$s" "${took[$t]}"
	P=$((P + p)) F=$((F + f)) S=$((S + s))
	if [ -f "$RES/$t.anchors" ]; then
		read -r p f s < "$RES/$t.anchors"
		AP=$((AP + p)) AF=$((AF + f)) AS=$((AS + s))
	fi
done
echo "   total time $(($(date +%s) - start))s"
echo "   ours:    $((P - AP)) passed, $((F - AF)) failed, $((S - AS)) skipped"
echo "   anchors: $AP passed, $AF failed, $AS skipped (TTM's KUnit suites, vgem PRIME)"
# A skipped test of ours proved nothing: make check fails on it.
[ $((S - AS)) -eq 0 ] ||
	echo "make check: $((S - AS)) of our tests skipped; a skip is not a pass" >&2
echo "$P passed, $F failed, $S skipped"
[ "$F" -eq 0 ] && [ $((S - AS)) -eq 0 ]
