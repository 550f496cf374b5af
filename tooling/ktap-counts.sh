#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# ktap-counts.sh TIER LOG RC [ANCHORS]: record the counts kunit.py printed
# in LOG ("Testing complete. Ran N tests: passed: P, failed: F, skipped: S,
# ..."). A run that printed no such line, or whose runner failed with
# nothing counted as failed, counts as one failure: a crash is never a
# pass. ANCHORS, a regular expression, names the top-level suites that are
# not ours; their part of the counts is recorded apart (ktap-split.py).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

tier=$1 log=$2 rc=$3 anchor_re=${4:-}
line=$(grep -a 'Testing complete\. Ran' "$log" | tail -n 1)
num() { echo "$line" | grep -oE "$1: [0-9]+" | grep -oE '[0-9]+' || echo 0; }
p=$(num passed) f=$(num failed) s=$(num skipped)
c=$(num crashed) e=$(num errors)
f=$((f + c + e))
if [ -z "$line" ] || { [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; }; then
	echo "$tier: kunit.py failed (exit $rc) without a test failure to show; see $log" >&2
	f=$((f + 1))
fi
counts "$tier" "$p" "$f" "$s"
if [ -n "$anchor_re" ]; then
	read -r ap af as < <("$REPO/tooling/ktap-split.py" "$log" "$anchor_re")
	anchors "$tier" "${ap:-0}" "${af:-0}" "${as:-0}"
fi
[ "$f" -eq 0 ]
