#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Tier 1: the core's KUnit suites on UML (kunit.py, the project's
# .kunitconfig). Cold: about 3 minutes; warm: under a minute. TTM's own
# suites are built too (the NPA pool's tests use their helpers) but only
# ours run and are counted.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

o=$OUT/kunit-uml
log=$RES/kunit-uml.log
mkdir -p "$o"
(cd "$TREE" && python3 tools/testing/kunit/kunit.py run \
	--kunitconfig=drivers/gpu/drm/amd/amdgpu/ualink/.kunitconfig \
	--build_dir="$o" --jobs="$JOBS" \
	--make_options "CC=ccache gcc" --make_options "HOSTCC=ccache gcc" \
	'amdgpu_ualink*') 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
"$REPO/tooling/ktap-counts.sh" kunit-uml "$log" "$rc"
