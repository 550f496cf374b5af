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
rm -f "$RES/kunit-uml.tests" "$RES/kunit-uml.json"
(cd "$TREE" && python3 tools/testing/kunit/kunit.py run \
	--json="$RES/kunit-uml.json" \
	--kunitconfig=drivers/gpu/drm/amd/amdgpu/ualink/.kunitconfig \
	--build_dir="$o" --jobs="$JOBS" \
	--make_options "CC=ccache gcc" --make_options "HOSTCC=ccache gcc") \
	2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
# Every case against tests/expected/kunit-uml.list (TTM's suites, the
# anchors, by suite); kunit.py failing with no case failed is a failure.
"$REPO/tooling/results.py" kunit "$RES/kunit-uml.json" \
	"$REPO/tests/expected/kunit-uml.list" 'ttm_.*' > "$RES/kunit-uml.tests"
grep -q '^fail' "$RES/kunit-uml.tests" || [ "$rc" -eq 0 ] ||
	result kunit-uml fail test kunit-uml:kunit.py "kunit.py exited with $rc; see $log"
tier_done kunit-uml

