#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Build an x86_64 guest kernel and its modules:
#   vm-kernel.sh        the debug guest (vm-guest.config + vm-debug.config)
#                       in $OUT/vm, for `make vm-test` and `make run`
#   vm-kernel.sh bench  the benchmark guest (vm-guest.config alone: no
#                       sanitizers, no lockdep) in $OUT/vm-bench
# Cold: about 7 minutes on 2 cores (ccache empty); warm: seconds.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

case "${1:-debug}" in
debug)	o=$OUT/vm
	frags=("$REPO/configs/vm-guest.config" "$REPO/configs/vm-debug.config") ;;
bench)	o=$OUT/vm-bench
	frags=("$REPO/configs/vm-guest.config") ;;
*)	echo "usage: vm-kernel.sh [debug|bench]" >&2; exit 2 ;;
esac
kconfigure "$o" "${frags[@]}"
echo "vm-kernel: building the ${1:-debug} guest kernel in $o (cold: ~7 min)"
# vmlinux and modules together: modpost needs the built-in GPU_BUDDY.
if ! progress vm-kernel "$o" "$o/build.log" kmake "$o" -s bzImage modules; then
	grep -E 'error|Error' "$o/build.log" | head -n 30 >&2
	echo "vm-kernel: build failed, full log in $o/build.log" >&2
	exit 1
fi
echo "vm-kernel: $(kmake "$o" -s kernelrelease) ready"
