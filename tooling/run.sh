#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# `make run`: build what is missing, boot the guest with the emulated pod
# and run the narrated tour of the uAPI (tests/demo/ualink_demo.c).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

"$REPO/tooling/vm-kernel.sh" || exit 1
echo "run: building libualink, ualinkctl, the symmetric-heap example and the demo"
make -s -C "$REPO/tools/ualink" UAPI="$OUT/uapi" OUT="$OUT/tools" || exit 1
mkdir -p "$OUT/demo"
cc -O2 -Wall -Wextra -Werror -I"$OUT/uapi" -I"$REPO/tools/ualink" \
	$(pkg-config --cflags libdrm) -o "$OUT/demo/ualink_demo" \
	"$REPO/tests/demo/ualink_demo.c" "$OUT/tools/libualink.a" \
	$(pkg-config --libs libdrm) || exit 1
echo "run: booting the guest under QEMU (TCG, 2 vCPUs; about two minutes)"
"$REPO/tooling/vm-run.sh" "$OUT/vm/arch/x86/boot/bzImage" "$OUT/run" \
	"sh $REPO/tooling/guest-demo.sh $OUT/vm $OUT/demo/ualink_demo $OUT/tools" \
	> "$OUT/run.console" 2>&1
rc=$?
# The narration is the command's output; the boot log stays in the file.
cat "$OUT/run/share/output.log" 2>/dev/null
tail -n 1 "$OUT/run.console"
if [ "$rc" -eq 0 ]; then
	echo "run: SUCCESS"
else
	echo "run: FAILED (exit $rc); guest console in $OUT/run.console"
fi
exit "$rc"
