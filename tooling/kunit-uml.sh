#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Tier 1: the core's KUnit suites on UML (kunit.py, the project's
# .kunitconfig), and TTM's own suites, which the NPA pool's tests need for
# their helpers and which must still pass with patches/ (the TTM patch
# raises TTM_NUM_MEM_TYPES). Cold: 9 minutes on a new machine; warm: under a minute.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

o=$OUT/kunit-uml
log=$RES/kunit-uml.log
mkdir -p "$o"
(cd "$TREE" && python3 tools/testing/kunit/kunit.py run \
	--kunitconfig=drivers/gpu/drm/amd/amdgpu/ualink/.kunitconfig \
	--build_dir="$o" --jobs="$JOBS" \
	--make_options "CC=ccache gcc" --make_options "HOSTCC=ccache gcc") \
	2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
# TTM's suites are counted apart from ours
"$REPO/tooling/ktap-counts.sh" kunit-uml "$log" "$rc" 'ttm_.*'

