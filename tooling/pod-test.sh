#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# `make pod-test`: pods of emulated accelerators across kernels. Debug
# guests (TCG) boot, each with the same host file as an ivshmem-plain
# device's memory: the fabric (rings, page tables and device memory; see
# amdgpu_ualink_vpod_shm.c). In the first pod guest A hosts accelerators
# 0-1, guest B 2-3 (B is stopped, killed and booted again); in the second
# four guests W, X, Y, Z host one each (W and X are killed together, Y is
# stopped and continued, then tooling/region-fuzz.py writes garbage into
# the region). Each
# runs its part of tests/pod/ualink_pod.c; they pass handles through a
# host directory all mount. Fails unless every part passes and every
# kernel log is clean.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

run=$OUT/pod-test
rm -f "$RES/pod-test.tests"
fail_all() {	# fail_all WHAT: every expected assertion fails
	echo "pod-test: FAIL: $1" >&2
	: > "$OUT/pod-none"
	"$REPO/tooling/results.py" expect "$REPO/tests/expected/pod-test.list" pod: \
		"$OUT/pod-none" > "$RES/pod-test.tests"
	result pod-test fail static "build: $1"
	tier_done pod-test
	exit 1
}
"$REPO/tooling/vm-kernel.sh" || fail_all "the debug guest kernel did not build"
make -s -C "$REPO/tools/ualink" UAPI="$OUT/uapi" OUT="$OUT/tools" CC="ccache gcc" || fail_all "tools/ualink did not build"
mkdir -p "$OUT/pod"
ccache gcc -O2 -g -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE \
	-I"$REPO/tools/ualink" -I"$OUT/uapi" \
	$(pkg-config --cflags libdrm) -o "$OUT/pod/ualink_pod" \
	"$REPO/tests/pod/ualink_pod.c" "$OUT/tools/libualink.a" \
	$(pkg-config --libs libdrm) || fail_all "ualink_pod did not build"

rm -rf "$run"
mkdir -p "$run/xchg"
region=/dev/shm/ualink-pod-$$ qregion=/dev/shm/ualink-quad-$$
# an interrupted run leaves no guest behind
trap 'kill -KILL $(cat "$run"/*.pid 2>/dev/null) 2>/dev/null; rm -f "$region" "$qregion"' EXIT
truncate -s 32M "$region"	# zeroed: an empty fabric

# guest ROLE FIRST_ID [NODES REGION]: NODES (2) of a pod of 4, one CPU
# each (the second pod's four guests share this machine's two cores)
guest() {
	VM_QEMU_ARGS="-object memory-backend-file,id=fabric,share=on,mem-path=${4:-$region},size=32M
		-device ivshmem-plain,memdev=fabric
		-virtfs local,path=$run/xchg,mount_tag=pod,security_model=none,multidevs=remap" \
	VM_PIDFILE=$run/$1.pid VM_TIMEOUT=${POD_TIMEOUT:-600} VM_SMP=${3:-2} \
		"$REPO/tooling/vm-run.sh" "$OUT/vm/arch/x86/boot/bzImage" "$run/$1" \
		"sh $REPO/tooling/guest-pod.sh $OUT/vm $OUT/pod/ualink_pod $1 $2 ${3:-2} 4" \
		> "$run/$1.log" 2>&1
}

wait_file() {	# wait_file NAME PID TENTHS: NAME in the exchange directory
	for _ in $(seq "$3"); do
		[ -e "$run/xchg/$1" ] && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

start=$(date +%s)
guest a 0 & pa=$!
guest b 2 & pb=$!
# B hangs first: its QEMU stops (SIGSTOP) when B asks, and goes on
# (SIGCONT) once A has found it lost, or after 60 s
if wait_file b.stop-me $pb 3000 && kill -STOP "$(cat "$run/b.pid")"; then
	stopped=$(date +%s%N)
	echo "SIGSTOP to guest B's QEMU at $(($(date +%s) - start)) s" > "$run/xchg/b.stopped"
	wait_file a.saw-lost $pa 600
	kill -CONT "$(cat "$run/b.pid")"
	echo "SIGCONT to guest B's QEMU after $((($(date +%s%N) - stopped) / 1000000)) ms stopped" > "$run/xchg/b.continued"
	cat "$run/xchg/b.continued" > "$run/hung"
fi
# B's first life ends killed, while it imports and releases in a loop: at
# once when it says its loop works (four imports done), not after a guess
if wait_file b.looping $pb 3000; then
	kill -KILL "$(cat "$run/b.pid")" &&
		echo "SIGKILL to guest B's QEMU at $(($(date +%s) - start)) s" > "$run/xchg/killed"
fi
wait $pb; rb=$?
rm -f "$run/b.pid"	# its QEMU is gone and could not remove it
if [ -e "$run/xchg/killed" ]; then
	echo "pod-test: $(cat "$run/xchg/killed"); it exited with $rb"
	# A's read of B's old memory waits in flight across the new start
	wait_file a.held $pa 3000 ||
		echo "pod-test: A never held its read of B's old life (a.held)"
	echo "pod-test: booting B again"
	guest b2 2 & pb2=$!
	wait $pb2; rb2=$?
else
	echo "pod-test: guest B never reached its loop (exit $rb)"
	rb2=1
fi
wait $pa; ra=$?
rm -f "$run"/*.pid	# every guest is gone: the trap has nothing to kill

# The second pod: four kernels, one accelerator each (one CPU each: four
# guests share this machine). W starts first and writes the region's
# header; X, Y and Z join once W exported. When all four read each
# other's buffers, the host kills W and X at once: Y and Z, in different
# kernels, go on.
truncate -s 32M "$qregion"
guest w 0 1 "$qregion" & pw=$!
if wait_file w.handle $pw 3000; then
	guest x 1 1 "$qregion" & px=$!
	guest y 2 1 "$qregion" & py=$!
	guest z 3 1 "$qregion" & pz=$!
	if wait_file w.ready $pw 3000 && wait_file x.ready $px 3000 &&
	   wait_file y.ready $py 3000 && wait_file z.ready $pz 3000 &&
	   kill -KILL "$(cat "$run/w.pid")" "$(cat "$run/x.pid")"; then
		echo "SIGKILL to guests W's and X's QEMUs together at $(($(date +%s) - start)) s" \
			> "$run/xchg/quad.killed"
	else	# one never got ready: no point waiting for the others
		kill -KILL $(cat "$run"/[wxyz].pid 2>/dev/null) 2>/dev/null
	fi
	wait $pw $px
	rm -f "$run/w.pid" "$run/x.pid"
	# Y hangs: its QEMU stops when Y asks, and goes on once Z has found
	# it lost, or after 60 s
	if wait_file y.stop-me $py 3000 && kill -STOP "$(cat "$run/y.pid")"; then
		echo "SIGSTOP to guest Y's QEMU at $(($(date +%s) - start)) s" > "$run/xchg/y.stopped"
		wait_file z.saw-lost $pz 600
		kill -CONT "$(cat "$run/y.pid")"
		echo "SIGCONT to guest Y's QEMU" > "$run/xchg/y.continued"
		: > "$run/quad-hung"
	fi
	# the region fuzzer, while Y and Z import from each other
	if wait_file y.fuzz-me $py 3000 && wait_file z.fuzz-me $pz 3000; then
		echo "the host writes garbage into the region" > "$run/xchg/quad.fuzzing"
		python3 "$REPO/tooling/region-fuzz.py" "$qregion" 4 4 20 \
			"${POD_FUZZ_SEED:-0x5eed}" --dead 0,1 > "$run/fuzz.log" 2>&1 &&
			: > "$run/fuzzed"
		cat "$run/fuzz.log"
		echo "the region fuzzer made $(grep -o '[0-9]* writes' "$run/fuzz.log") (seed ${POD_FUZZ_SEED:-0x5eed})" \
			> "$run/xchg/quad.fuzzed"
	fi
	wait $py; ry=$?
	wait $pz; rz=$?
else
	kill -KILL "$(cat "$run/w.pid" 2>/dev/null)" 2>/dev/null
	wait $pw; rw=$?
	echo "pod-test: guest W never exported (exit $rw)"
	ry=1 rz=1
fi
end=$(date +%s)
rm -f "$run"/*.pid
for g in a b b2 w x y z; do
	[ -f "$run/$g.log" ] || continue
	echo "=== guest $g"
	# of B's loop, only the last line: where it was when it died
	grep -aE '^(pod:|guest [ab]2?:|vm-run:|vm-init:)' "$run/$g.log" |
		awk '/^pod: import and release/ { last = $0; next }
		     { if (last != "") print last; last = ""; print }
		     END { if (last != "") print last }'
done

# Results: every assertion a guest's program made ("pod: ok: ID: ..."),
# as GUEST.ID, and per guest that its kernel said nothing (B's first life:
# up to its death, from the console), each against
# tests/expected/pod-test.list: one that never printed (its guest died, its
# program stopped early) fails by name. An ID printed twice counts once.
# what each program printed: its own file (no kernel line can cut into it)
# when the guest finished, the console for the one that was killed
printed() {	# printed GUEST
	if [ -f "$run/$1/share/rc" ] && [ -f "$run/$1/share/output.log" ]; then
		cat "$run/$1/share/output.log"
	else
		# killed, or its tee could not create the file on the 9p share
		# (seen once: "No such file or directory"): the console has it too
		[ ! -f "$run/$1/share/rc" ] ||
			echo "pod-test: guest $1 left no output.log; reading its console" >&2
		cat "$run/$1.log" 2>/dev/null
	fi
}
rep=$run/reported
: > "$rep"
for g in a b b2 w x y z; do
	printed $g | awk -v g=$g '$1 == "pod:" && ($2 == "ok:" || $2 == "FAIL:") {
		id = $3; sub(/:$/, "", id)
		print ($2 == "ok:" ? "pass" : "fail"), g "." id }' >> "$rep"
	if [ -f "$run/$g/reports.txt" ] && [ ! -s "$run/$g/reports.txt" ]; then
		echo "pass $g.kernel-log-clean" >> "$rep"
	else
		echo "pod-test: FAIL: guest $g's kernel log shows reports (or it never booted)" >&2
		echo "fail $g.kernel-log-clean" >> "$rep"
	fi
done
[ -e "$run/hung" ] && echo "pass b.stopped-and-continued" >> "$rep" ||
	{ echo "pod-test: FAIL: guest B was not stopped and continued" >&2; echo "fail b.stopped-and-continued" >> "$rep"; }
[ -e "$run/xchg/killed" ] && echo "pass b.killed-mid-loop" >> "$rep" ||
	{ echo "pod-test: FAIL: guest B was not killed mid-loop" >&2; echo "fail b.killed-mid-loop" >> "$rep"; }
[ "$ra" = 0 ] && echo "pass a.exit-0" >> "$rep" ||
	{ echo "pod-test: FAIL: guest A exited with $ra" >&2; echo "fail a.exit-0" >> "$rep"; }
[ "$rb2" = 0 ] && echo "pass b2.exit-0" >> "$rep" ||
	{ echo "pod-test: FAIL: guest B's second life exited with $rb2" >&2; echo "fail b2.exit-0" >> "$rep"; }
[ -e "$run/fuzzed" ] && echo "pass quad.region-fuzzed" >> "$rep" ||
	{ echo "pod-test: FAIL: the region fuzzer did not run to its end" >&2; echo "fail quad.region-fuzzed" >> "$rep"; }
[ -e "$run/xchg/quad.killed" ] && echo "pass quad.two-killed-together" >> "$rep" ||
	{ echo "pod-test: FAIL: guests W and X were not killed" >&2; echo "fail quad.two-killed-together" >> "$rep"; }
[ -e "$run/quad-hung" ] && echo "pass quad.y-stopped-and-continued" >> "$rep" ||
	{ echo "pod-test: FAIL: guest Y was not stopped and continued" >&2; echo "fail quad.y-stopped-and-continued" >> "$rep"; }
for g in y z; do
	eval "rc=\$r$g"
	[ "$rc" = 0 ] && echo "pass $g.exit-0" >> "$rep" ||
		{ echo "pod-test: FAIL: guest ${g^^} exited with $rc" >&2; echo "fail $g.exit-0" >> "$rep"; }
done
echo "pod-test: guest A exit $ra, guest B killed (exit $rb), guest B again exit $rb2; W and X killed, Y exit $ry, Z exit $rz; $((end - start)) s in all"
rm -f "$RES/pod-test.tests"
"$REPO/tooling/results.py" expect "$REPO/tests/expected/pod-test.list" pod: "$rep" \
	> "$RES/pod-test.tests"
tier_done pod-test
