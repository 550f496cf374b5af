#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# `make series-check`: every commit of the series builds. Checks out each
# commit of the prepared tree in turn (base, then patches/ and our files in
# the order of patches/series) and builds vmlinux and modules with the
# amdgpu configuration (configs/amdgpu.config; symbols a commit does not
# have yet are ignored), incrementally in the amdgpu tier's build
# directory; then puts the tree back. Not part of `make check`: a run costs
# about 20 minutes on 2 cores, most of it the DRM and TTM header changes.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

o=$OUT/amdgpu
log=$RES/series-check.d
rm -rf "$log"
mkdir -p "$log" "$o"
pass=0 fail=0
restore() { "$REPO/tooling/prepare-tree.sh" "$REPO" "$TREE" > /dev/null; }
trap restore EXIT

for c in $(git -C "$TREE" rev-list --reverse ualink-base..ualink); do
	subject=$(git -C "$TREE" log -1 --format=%s "$c")
	git -C "$TREE" checkout -q -f "$c" || { echo "checkout of $c failed"; exit 1; }
	cat "$TREE/kernel/configs/tiny.config" "$TREE/arch/x86/configs/tiny.config" \
	    "$REPO/configs/amdgpu.config" > "$o/.config.frag"
	kmake "$o" -s KCONFIG_ALLCONFIG="$o/.config.frag" allnoconfig \
		> "$log/$c.config" 2>&1
	if progress series "$o" "$log/$c.build" kmake "$o" -s; then
		pass=$((pass + 1))
		echo "series-check: builds: $subject"
	else
		fail=$((fail + 1))
		echo "series-check: FAILS: $subject"
		grep -E 'error' "$log/$c.build" | head -n 10
	fi
done
counts series-check "$pass" "$fail" 0
[ "$fail" -eq 0 ]
