#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Install from Debian whatever the build and the tests need and is missing.
# Quiet and quick when everything is there; safe to run again.
set -euo pipefail

pkgs=(
	linux-source-6.12	# the pinned base tree
	gcc make libc6-dev bc bison flex libelf-dev libssl-dev
	cpio kmod xz-utils rsync perl python3 python3-ply python3-git git util-linux
	ccache sparse
	coccinelle ocaml-nox clang lld llvm	# make coccicheck, LLVM=1 build of our objects
	libdrm-dev intel-gpu-tools pkg-config
	qemu-system-x86
	trace-cmd	# records the amdgpu_ualink trace events in the debug guest
)
# `deps.sh bench`: also what `make bench` alone needs
[ "${1:-}" != bench ] || pkgs+=(gnuplot-nox)	# the benchmark's plot

missing=()
for p in "${pkgs[@]}"; do
	case "$p" in '#'*) continue ;; esac
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps: installing from Debian: ${missing[*]}"
[ "$(id -u)" -eq 0 ] || { echo "deps: need root for apt-get" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" > /tmp/ualink-deps.log 2>&1 ||
	{ tail -n 30 /tmp/ualink-deps.log >&2; exit 1; }
echo "deps: done"
