#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Build an x86_64 guest kernel and its modules:
#   vm-kernel.sh        the debug guest (vm-guest.config + vm-debug.config)
#                       in $OUT/vm, for `make vm-test` and `make run`
#   vm-kernel.sh bench  the benchmark guest (vm-guest.config and
#                       vm-bench.config: no sanitizers, no lockdep) in
#                       $OUT/vm-bench
#   vm-kernel.sh kcsan  the data-race guest (vm-guest.config and
#                       vm-kcsan.config) in $OUT/vm-kcsan, for `make kcsan`
# Cold (ccache empty, 2 cores): the debug guest about 17 minutes, the
# benchmark guest about 13; warm: seconds.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# The debug guest's tree is also the one `make amdgpu` checks amdgpu.ko,
# W=1 and sparse in (one x86_64 build instead of two): it is built with
# W=1, so that the W=1 objects of that check are this build's own and
# neither build makes the other compile them again.
case "${1:-debug}" in
debug)	o=$OUT/vm wflags=(W=1)
	frags=("$REPO/configs/vm-guest.config" "$REPO/configs/vm-debug.config") ;;
bench)	o=$OUT/vm-bench wflags=()
	frags=("$REPO/configs/vm-guest.config" "$REPO/configs/vm-bench.config") ;;
kcsan)	o=$OUT/vm-kcsan wflags=()
	frags=("$REPO/configs/vm-guest.config" "$REPO/configs/vm-kcsan.config") ;;
*)	echo "usage: vm-kernel.sh [debug|bench|kcsan]" >&2; exit 2 ;;
esac
# make check builds the debug guest for the amdgpu tier and boots it in
# vm-test: the second call finds the first one's stamp and builds nothing
# (the tree cannot change in between: make check holds the lock). A no-op
# make of the whole tree costs 20 s.
stamp=$o/.ualink-check-run
if [ -n "${UALINK_CHECK_RUN:-}" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$UALINK_CHECK_RUN" ]; then
	echo "vm-kernel: the ${1:-debug} guest kernel was built earlier in this make check"
	exit 0
fi
rm -f "$stamp"
kconfigure "$o" "${frags[@]}"
echo "vm-kernel: building the ${1:-debug} guest kernel in $o (cold: the debug one about 17 min, the benchmark one about 13)"
# vmlinux and modules together: modpost needs the built-in GPU_BUDDY.
if ! progress vm-kernel "$o" "$o/build.log" kmake "$o" -s "${wflags[@]}" bzImage modules; then
	grep -E 'error|Error' "$o/build.log" | head -n 30 >&2
	echo "vm-kernel: build failed, full log in $o/build.log" >&2
	exit 1
fi
echo "vm-kernel: $(kmake "$o" -s kernelrelease) ready"
[ -z "${UALINK_CHECK_RUN:-}" ] || echo "$UALINK_CHECK_RUN" > "$stamp"
