#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# `make check`: all four tiers, each run even when an earlier one failed,
# then what they add up to (tooling/results.py summary): distinct tests
# (a KUnit case of the core runs on UML and in the debug guest: one test),
# the static checks on a line of their own, and last the line
# "N passed, N failed, N skipped" over distinct tests. Exit status 0 only
# when nothing failed, nothing of ours was skipped and every tier reported.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

tiers=(kunit-uml amdgpu vm-test pod-test)
start=$(date +%s)
# names this run: what one tier built for the next is not built again
export UALINK_CHECK_RUN="$$.$(date +%s%N)"
for t in "${tiers[@]}"; do
	rm -f "$RES/$t.tests" "$RES/$t.rc"
	s=$(date +%s)
	case $t in
	amdgpu) "$REPO/tooling/amdgpu-check.sh" ;;
	*) "$REPO/tooling/$t.sh" ;;
	esac
	echo $? > "$RES/$t.rc"
	echo "== $t took $(($(date +%s) - s)) s"
done
echo
echo "   total time $(($(date +%s) - start))s"
"$REPO/tooling/results.py" summary "$RES" "${tiers[@]}"
