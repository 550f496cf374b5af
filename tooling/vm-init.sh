#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# PID 1 of the test guest (see vm-run.sh). The root file system is the host's,
# read-only over 9p; the "out" 9p share is the only writable host directory.
# Runs out/cmd, records its exit status in out/rc, runs a kmemleak scan,
# saves the kernel log and reboots (QEMU runs with -no-reboot, so it exits).
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH HOME=/tmp TERM=dumb

say() { echo "vm-init: [$(cut -d' ' -f1 /proc/uptime)s] $*"; }

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /run
mount -t debugfs debugfs /sys/kernel/debug
# A writable /tmp that still shows the host's: the work tree under test may
# live there (CI clones anywhere).
mkdir -p /run/tmp/upper /run/tmp/work
mount -t overlay overlay \
	-o lowerdir=/tmp,upperdir=/run/tmp/upper,workdir=/run/tmp/work /tmp
mkdir -p /tmp/out
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out /tmp/out

kml=/sys/kernel/debug/kmemleak
# Forget what boot itself left behind: only the test's leaks count.
if [ -w $kml ]; then
	echo scan > $kml
	echo clear > $kml
fi

say "running test command on $(uname -r), $(nproc) CPUs, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
(
	cd /tmp/out
	sh /tmp/out/cmd
	echo $? > /tmp/out/rc
) 2>&1 | tee /tmp/out/output.log
say "test command exited with status $(cat /tmp/out/rc)"

# kmemleak ignores objects younger than 5 s; scan twice, as its
# documentation recommends, to weed out transient false positives. The
# host fails the run unless kmemleak-scanned exists.
say "kmemleak scan"
sleep 6
if echo scan > $kml && echo scan > $kml && cat $kml > /tmp/out/kmemleak.txt; then
	: > /tmp/out/kmemleak-scanned
fi
cat /tmp/out/kmemleak.txt 2>/dev/null
cat /proc/sys/kernel/tainted > /tmp/out/tainted
dmesg > /tmp/out/dmesg.txt
say "done"
sync
umount /tmp/out
echo b > /proc/sysrq-trigger
