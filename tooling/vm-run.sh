#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Boot a test kernel in QEMU and run one command in it.
#
#   tooling/vm-run.sh KERNEL OUTDIR COMMAND...
#
# The guest's root file system is the host's, shared read-only over 9p, so
# the command can use any program installed here (paths as on the host).
# OUTDIR/share is the guest's writable /tmp/out and its working directory.
# Exit status: the command's when non-zero; 1 when the kernel log shows any
# report (KASAN, UBSAN, KFENCE, lockdep, kmemleak, BUG, WARNING, Oops, ...);
# 2 when the guest did not finish; otherwise 0.
#
# Environment: VM_KMEMLEAK=0 for a kernel without kmemleak (the benchmark
# guest); VM_SMP (default 2), VM_MEM (default 2G), VM_TIMEOUT in seconds
# (default 1800), VM_MACHINE (default q35: with "pc" each virtio device
# takes 25 s to probe under TCG with this debug kernel), VM_APPEND (extra
# kernel parameters), VM_ACCEL (default tcg: KVM guests hang on these
# machines, which have no nested virtualisation; use kvm only where a probe
# boots), VM_QEMU_ARGS (more QEMU arguments, split at spaces: the pod test's
# shared region and exchange directory), VM_PIDFILE (where QEMU writes its
# pid; default OUTDIR/qemu.pid), VM_BOOT_DEADLINE (seconds, default 120:
# init starts after 15 to 35 s here, four guests booting at once).
#
# A guest whose init has not started within VM_BOOT_DEADLINE (no
# "vm-init:" line on the console) is taken for a boot that hung before any
# code of ours ran (seen once: a TCG guest stopped in SMP bring-up, right
# after "mtrr: your CPUs had inconsistent ... settings", on a loaded host):
# it is killed and booted once more, which the output says. A second hang
# fails the run as any guest that did not finish.
set -euo pipefail

kernel=$1 out=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
smp=${VM_SMP:-2} mem=${VM_MEM:-2G} timeout=${VM_TIMEOUT:-1800}
accel=${VM_ACCEL:-tcg}

[ -f "$kernel" ] || { echo "vm-run: no kernel at $kernel" >&2; exit 2; }
rm -rf "$out"
mkdir -p "$out/share"
printf '%s\n' "$*" > "$out/share/cmd"

cmdline="console=ttyS0 loglevel=5 log_buf_len=8M root=hostroot rootfstype=9p"
# cache=loose: the guest keeps what it read of the host's root in its page
# cache. Without it every page fault on a program or library is a 9p round
# trip: starting an IGT program took 6 s (986 major faults), 1.2 s with it;
# reading amdgpu.ko, 9 s and 0.4 s. The root is read-only and nothing on the
# host changes what the guest reads while it runs (the out share, which the
# guest writes, stays uncached).
cmdline+=" rootflags=trans=virtio,version=9p2000.L,msize=262144,cache=loose ro"
cmdline+=" init=$here/vm-init.sh panic=-1 oops=continue ${VM_APPEND:-}"

# -cpu max without LA57: with 5-level paging, Linux 7.3 reads
# pgtable_l5_enabled() from the CPU's feature bits, which identify_cpu()
# clears and refills with interrupts on during boot; KASAN then takes an
# interrupt's access to the direct map for a wild one and reports it (seen
# once in about 70 boots, at 0.006 s, before any code of this project).
pidfile=${VM_PIDFILE:-$out/qemu.pid} deadline=${VM_BOOT_DEADLINE:-120}

# boot_watch: kill the guest unless its init starts within the deadline
boot_watch() {
	local i
	for ((i = 0; i < deadline; i++)); do
		sleep 1
		grep -aq '^vm-init:' "$out/console.log" 2>/dev/null && return 0
	done
	: > "$out/boot-hung"
	kill -KILL "$(cat "$pidfile" 2>/dev/null)" 2>/dev/null || true
}

for attempt in 1 2; do
	rm -f "$out/boot-hung" "$pidfile"
	: > "$out/console.log"
	boot_watch & watch=$!
	status=0
	timeout --foreground -k 10 "$timeout" \
		qemu-system-x86_64 -accel "$accel" -machine "${VM_MACHINE:-q35}" \
		-cpu max,la57=off -smp "$smp" -m "$mem" \
		-nographic -no-reboot -nodefaults -serial stdio \
		-kernel "$kernel" -append "$cmdline" -pidfile "$pidfile" \
		-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
		-virtfs local,path="$out/share",mount_tag=out,security_model=none,multidevs=remap \
		${VM_QEMU_ARGS:-} < /dev/null 2>&1 | tee "$out/console.log" || status=$?
	kill "$watch" 2>/dev/null || true
	wait "$watch" 2>/dev/null || true
	[ -e "$out/boot-hung" ] && [ "$attempt" = 1 ] || break
	echo "vm-run: no init within $deadline s, the console stopped at: $(grep -a . "$out/console.log" | tail -n 1 | tr -d '\r'); booting again" >&2
	mv "$out/console.log" "$out/console-hung.log"
done
# A guest that hung after writing rc (in the kmemleak scan, say) fails too.

share=$out/share

# Every kind of kernel report fails the run, whatever the command said:
# in the kernel log, in kmemleak's report, and in timestamped kernel lines
# of the console (a test program's own "WARNING:" output does not count).
# Also written for a guest that did not finish (the pod test kills one).
reports='BUG:|BUG [^ ]+ \(|kernel BUG at|WARNING:|Oops|UBSAN:|KFENCE:|unreferenced object|kmemleak: .*(disabled|[Pp]ool empty)|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|rcu: INFO:|self-detected stall|DEBUG_LOCKS_WARN_ON|ODEBUG:|Kernel panic|general protection fault|blocked for more than|list_add corruption|list_del corruption|refcount_t:|Call Trace:'
{
	cat "$share/dmesg.txt" "$share/kmemleak.txt" 2>/dev/null
	grep -aE '^\[ *[0-9]+\.[0-9]+\]' "$out/console.log"
} | grep -aE "$reports" > "$out/reports.txt" || true

if [ "$status" -ne 0 ] || [ ! -f "$share/rc" ] || [ ! -f "$share/dmesg.txt" ]; then
	echo "vm-run: the guest did not finish (qemu/timeout status $status); see $out/console.log" >&2
	exit 2
fi
rc=$(cat "$share/rc")
if [ ! -f "$share/kmemleak-scanned" ] && [ "${VM_KMEMLEAK:-1}" = 1 ]; then
	echo "kmemleak did not scan (not built in, or disabled at run time)" >> "$out/reports.txt"
fi
# Any taint but TAINT_TEST (KUnit ran, 0x40000) means the kernel complained.
if [ $(($(cat "$share/tainted") & ~0x40000)) -ne 0 ]; then
	echo "kernel tainted: $(cat "$share/tainted")" >> "$out/reports.txt"
fi
if [ -s "$out/reports.txt" ]; then
	echo "vm-run: the kernel log shows reports:" >&2
	head -n 40 "$out/reports.txt" >&2
	[ "$rc" -ne 0 ] || rc=1
else
	echo "vm-run: kernel log clean (no KASAN/UBSAN/KFENCE/lockdep/kmemleak/BUG/WARNING/Oops, not tainted)"
fi
exit "$rc"
