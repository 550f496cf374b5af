#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Prepare the kernel tree: Debian's linux-source-7.3 package (fetched by
# tooling/deps.sh into $UALINK_WORK/base), our patch series
# (patches/series) and our own files, as a git history from which
# tooling/format-patch.sh makes the upstream series.
#
#   tooling/prepare-tree.sh REPO_DIR TREE_DIR
#
# The tree is unpacked once and committed as the tag `ualink-base`. Every later
# run builds the wanted history in a scratch index (tooling/series.py: one
# commit per patch and per unit of our own files) and checks it out: only
# files whose content changed are rewritten, so incremental kernel builds
# stay incremental.
# Never edit TREE_DIR by hand: this script overwrites it.
set -euo pipefail

repo=$(cd "$1" && pwd)
tree=$2
pkg=linux-source-7.3
base=${UALINK_WORK:-/var/tmp/ualink}/base
tarball=$base/$pkg.tar.xz

die() { echo "prepare-tree: error: $*" >&2; exit 1; }
log() { echo "prepare-tree: $*"; }

version=$(cat "$base/version" 2>/dev/null) ||
	die "$pkg has not been fetched (run 'make deps')"
[ -f "$tarball" ] || die "$tarball missing (run 'make deps')"

# The tree's commits are made by a neutral identity (a .invalid address)
# that never reaches a patch: tooling/format-patch.sh commits the series
# again as whoever posts it.
export GIT_AUTHOR_NAME="UALink prepare-tree" GIT_AUTHOR_EMAIL="prepare-tree@ualink.invalid"
export GIT_COMMITTER_NAME="UALink prepare-tree" GIT_COMMITTER_EMAIL="prepare-tree@ualink.invalid"
export GIT_AUTHOR_DATE="2026-01-01T00:00:00Z" GIT_COMMITTER_DATE="2026-01-01T00:00:00Z"
g() { git -C "$tree" "$@"; }

# Debian's linux-source adds "/*" to the top-level .gitignore (its packaging
# repository ignores the kernel). With it every tracked file counts as
# ignored, and W=1's scripts/misc-check prints a warning for each of the
# ~87,000 files. The base commit drops those lines: they are Debian's, not
# the kernel's. Bump this when the base fix-up changes (ident-1: the base
# commit is made by the neutral identity below).
fixup=gitignore-2,ident-1
debian_fixup() {
	sed -i '/^# Debian packaging: ignore everything at the top level/,$d' \
		"$tree/.gitignore"
	sed -i '$ { /^#$/d }' "$tree/.gitignore"
	sed -i -e :a -e '/^\n*$/{$d;N;ba' -e '}' "$tree/.gitignore"
}

have=$(cat "$tree/.git/ualink-base-version" 2>/dev/null || true)
if [ "${have%% *}" = "$version" ] && [ "$have" != "$version $fixup" ]; then
	# A base from before this fix-up: amend it in place (no re-unpack).
	log "applying the base fix-up ($fixup) to the existing base"
	g checkout -q -f ualink-base
	debian_fixup
	g commit -q --amend -a --no-edit --reset-author
	g tag -f ualink-base >/dev/null
	echo "$version $fixup" > "$tree/.git/ualink-base-version"
	have="$version $fixup"
fi
if [ "$have" != "$version $fixup" ]; then
	[ -z "$have" ] || log "base $have is stale, package is now $version: unpacking again"
	log "unpacking $pkg $version into $tree (once; about a minute)"
	rm -rf "$tree" "$tree.unpack"
	mkdir -p "$tree.unpack"
	tar -C "$tree.unpack" -xJf "$tarball"
	mv "$tree.unpack/$pkg" "$tree"
	rmdir "$tree.unpack"
	debian_fixup
	g init -q -b ualink
	g config core.autocrlf false
	g config gc.auto 0
	g add -A -f .
	g commit -q -m "base: Debian $pkg $version" \
		-m "Debian's '/*' rule removed from .gitignore ($fixup)."
	g tag -f ualink-base >/dev/null
	echo "$version $fixup" > "$tree/.git/ualink-base-version"
fi

# The history of the series (tooling/series.py: patches/series, the
# patches and the units of our own files), built in a scratch index from
# the base, committed by a neutral identity that never reaches a patch.
head=$(python3 "$repo/tooling/series.py" "$repo" "$tree") || exit 1
rm -f "$tree/.git/ualink-scratch-index" "$tree/.git/ualink-msg" "$tree/.git/ualink-patch"
n=$(g rev-list --count "ualink-base..$head")

# Check the result out; only files that differ are written.
g checkout -q -f -B ualink "$head"

# Userspace here (tools/ualink, the tests, the demo, the benchmark) builds
# against the uAPI as the kernel installs it for userspace
# (headers_install): amdgpu_drm.h, which has the UALink ioctl, and the
# emulated pod's header, alone in $out/uapi. drm.h and the rest come from
# the system's libdrm, as for a program built against a distribution's
# headers. A header is rewritten only when it changed.
out=${UALINK_WORK:-/var/tmp/ualink}/out
make -s -C "$tree" O="$out/hdr-build" headers_install INSTALL_HDR_PATH="$out/hdr" >/dev/null ||
	die "make headers_install failed"
mkdir -p "$out/uapi"
for h in amdgpu_drm.h amdgpu_ualink_vpod.h; do
	cmp -s "$out/hdr/include/drm/$h" "$out/uapi/$h" ||
		cp "$out/hdr/include/drm/$h" "$out/uapi/$h"
done
log "tree ready: $tree (Debian $pkg $version, $n commits, $(g rev-parse --short HEAD))"
