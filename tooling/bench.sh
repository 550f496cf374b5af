#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# `make bench`: the uAPI's figures on the emulated pod, from the benchmark
# guest (no sanitizers, no lockdep; clocksource tsc) with a whole pod of
# 1,024 accelerators (4 with a DRM device), booted with 2 and then 4 vCPUs.
# Prints each run's table and keeps it, the samples and a plot in
# $RES/bench/ (table-<n>cpu.txt, bench-<n>cpu.png); fails only when an
# operation fails, never on a figure. BENCH_PERF=1 also profiles each run
# (perf.txt beside its samples); BENCH_CPUS=2 boots only that one. Cold:
# about 13 minutes of kernel build; warm: about 2 minutes per boot.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

"$REPO/tooling/vm-kernel.sh" bench || exit 1
mkdir -p "$OUT/bench" "$RES/bench"
make -s -C "$REPO/tools/ualink" UAPI="$OUT/uapi" OUT="$OUT/tools" "$OUT/tools/libualink.a" || exit 1
cc -O2 -pthread -Wall -Wextra -Werror -I"$OUT/uapi" -I"$REPO/tools/ualink" \
	$(pkg-config --cflags libdrm) -o "$OUT/bench/ualink_bench" \
	"$REPO/tests/bench/ualink_bench.c" "$OUT/tools/libualink.a" \
	$(pkg-config --libs libdrm) || exit 1

rc=0
for cpus in ${BENCH_CPUS:-2 4}; do
	run=$OUT/bench/run-$cpus
	echo "bench: booting the benchmark guest (TCG, $cpus vCPUs)"
	VM_SMP=$cpus VM_APPEND="clocksource=tsc tsc=reliable" VM_KMEMLEAK=0 \
	"$REPO/tooling/vm-run.sh" "$OUT/vm-bench/arch/x86/boot/bzImage" "$run" \
		"BENCH_PERF=${BENCH_PERF:-0} sh $REPO/tooling/guest-bench.sh $OUT/vm-bench $OUT/bench/ualink_bench" \
		> "$OUT/bench/console-$cpus" 2>&1
	r=$?
	cat "$run/share/output.log" 2>/dev/null
	if [ "$r" -ne 0 ]; then
		echo "bench: FAILED with $cpus vCPUs (exit $r); console in $OUT/bench/console-$cpus"
		rc=$r
		continue
	fi
	dir=$RES/bench/$cpus-cpu
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$run/share/"*.dat "$run/share/table.txt" "$dir/"
	cp "$run/share/"perf*.txt "$dir/" 2>/dev/null || true
	{ echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc)-core host, $(uname -m), QEMU TCG"
	  cat "$dir/table.txt"; } > "$RES/bench/table-${cpus}cpu.txt"
	gnuplot -e "dir='$dir'; out='$RES/bench/bench-${cpus}cpu.png'; cpus=$cpus" \
		"$REPO/tests/bench/bench.gp" || rc=1
done
[ "$rc" -eq 0 ] && echo "bench: done; tables and plots in $RES/bench/" ||
	echo "bench: FAILED"
exit "$rc"
