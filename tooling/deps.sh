#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Install from Debian whatever the build and the tests need and is missing,
# and fetch the base tree (linux-source-7.3). Quiet and quick when
# everything is there; safe to run again.
#
# linux-source-7.3 is in trixie-backports, a suite these bookworm machines
# do not list. It is fetched through apt with a private sources list and
# state directory under $UALINK_WORK/apt that reuse the Debian mirror the
# machine already has configured: the system's apt configuration is never
# changed, and the package is only unpacked (dpkg -x), not installed.
set -euo pipefail

W=${UALINK_WORK:-/var/tmp/ualink}
base_pkg=linux-source-7.3
base_suite=trixie-backports

pkgs=(
	gcc make libc6-dev bc bison flex libelf-dev libssl-dev
	cpio kmod xz-utils rsync perl python3 python3-ply python3-git git util-linux
	ccache sparse
	# make coccicheck; the LLVM build of our objects: Linux 7.3 needs
	# LLVM >= 17.0.1, bookworm's default clang is 14, so LLVM=-19
	coccinelle ocaml-nox clang-19 lld-19 llvm-19
	libdrm-dev intel-gpu-tools pkg-config
	libjson-c-dev jq	# ualinkctl --json, and its check in IGT tools
	qemu-system-x86
	trace-cmd	# records the amdgpu_ualink trace events in the debug guest
	python3-sphinx	# renders ualink.rst with the kernel's kernel-doc extension
)
# `deps.sh bench`: also what `make bench` alone needs
[ "${1:-}" != bench ] || pkgs+=(gnuplot-nox)	# the benchmark's plot

missing=()
for p in "${pkgs[@]}"; do
	case "$p" in '#'*) continue ;; esac
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "deps: installing from Debian: ${missing[*]}"
	[ "$(id -u)" -eq 0 ] || { echo "deps: need root for apt-get" >&2; exit 1; }
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" > /tmp/ualink-deps.log 2>&1 ||
		{ tail -n 30 /tmp/ualink-deps.log >&2; exit 1; }
	echo "deps: done"
fi

# The base tree: $W/base/$base_pkg.tar.xz and its version in
# $W/base/version, fetched once (and again only when asked: rm -r $W/base).
b=$W/base
[ -f "$b/version" ] && [ -f "$b/$base_pkg.tar.xz" ] && exit 0
a=$W/apt
# The mirror the machine already uses for Debian (the first deb.debian.org
# or other URI of a bookworm source), and its keyring, which on bookworm
# (debian-archive-keyring 2023.3+deb12u1 and later) has trixie's keys.
mirror=$(apt-get indextargets --format '$(REPO_URI)' 'Created-By: Packages' 2>/dev/null |
	grep -m1 -E '/debian/?$' || true)
[ -n "$mirror" ] || mirror=$(grep -rhoE 'https?://[^ ]+/debian/?( |$)' \
	/etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null | head -n 1 | tr -d ' ')
[ -n "$mirror" ] || { echo "deps: no Debian mirror configured in apt" >&2; exit 1; }
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
echo "deps: fetching $base_pkg from $base_suite (private apt state in $a)"
rm -rf "$a" "$b.new"
mkdir -p "$a/lists/partial" "$a/cache/archives/partial" "$b.new"
echo "deb [signed-by=$keyring] ${mirror%/} $base_suite main" > "$a/sources.list"
aptopts=(-o Dir::Etc::sourcelist="$a/sources.list" -o Dir::Etc::sourceparts=/dev/null
	 -o Dir::State::Lists="$a/lists" -o Dir::Cache="$a/cache"
	 -o Dir::State::status=/dev/null -o Acquire::Languages=none
	 -o APT::Sandbox::User=root)
apt-get "${aptopts[@]}" -qq update
version=$(apt-cache "${aptopts[@]}" show --no-all-versions "$base_pkg" |
	sed -n 's/^Version: //p' | head -n 1)
[ -n "$version" ] || { echo "deps: $base_pkg not found in $base_suite" >&2; exit 1; }
(cd "$b.new" && apt-get "${aptopts[@]}" -qq download "$base_pkg")
dpkg -x "$b.new"/"${base_pkg}"_*.deb "$b.new/x"
mv "$b.new/x/usr/src/$base_pkg.tar.xz" "$b.new/"
rm -rf "$b.new/x" "$b.new"/*.deb
echo "$version" > "$b.new/version"
rm -rf "$b"
mv "$b.new" "$b"
echo "deps: $base_pkg $version in $b"
