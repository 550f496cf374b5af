#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Build the debug x86_64 guest kernel (configs/vm-debug.config) and its
# modules. Cold: about 7 minutes on 2 cores (ccache empty); warm: seconds.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

o=$OUT/vm
kconfigure "$o" "$REPO/configs/vm-debug.config"
echo "vm-kernel: building the debug guest kernel in $o (cold: ~7 min)"
# vmlinux and modules together: modpost needs the built-in GPU_BUDDY.
if ! progress vm-kernel "$o" "$o/build.log" kmake "$o" -s bzImage modules; then
	grep -E 'error|Error' "$o/build.log" | head -n 30 >&2
	echo "vm-kernel: build failed, full log in $o/build.log" >&2
	exit 1
fi
echo "vm-kernel: $(kmake "$o" -s kernelrelease) ready"
