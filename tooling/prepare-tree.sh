#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Prepare the kernel tree: Debian's linux-source-7.3 package (fetched by
# tooling/deps.sh into $UALINK_WORK/base), our
# patch series (patches/series) and our own files, as a git history so that
# `git format-patch ualink-base..ualink` emits the upstream series.
#
#   tooling/prepare-tree.sh REPO_DIR TREE_DIR
#
# The tree is unpacked once and committed as the tag `ualink-base`. Every later
# run builds the wanted history in a scratch index (one commit per patch, and
# one commit with our files where patches/series says "@owned") and checks it
# out: only files whose content changed are rewritten, so incremental kernel
# builds stay incremental.
# Never edit TREE_DIR by hand: this script overwrites it.
set -euo pipefail

repo=$(cd "$1" && pwd)
tree=$2
pkg=linux-source-7.3
base=${UALINK_WORK:-/var/tmp/ualink}/base
tarball=$base/$pkg.tar.xz
# What we copy into the tree: the in-tree paths this repository owns.
owned=(drivers/gpu/drm/amd/amdgpu/ualink include/uapi/drm/amdgpu_ualink.h
       include/uapi/drm/amdgpu_ualink_vpod.h
       Documentation/gpu/amdgpu/ualink.rst
       Documentation/ABI/testing/sysfs-driver-amdgpu-ualink)

die() { echo "prepare-tree: error: $*" >&2; exit 1; }
log() { echo "prepare-tree: $*"; }

version=$(cat "$base/version" 2>/dev/null) ||
	die "$pkg has not been fetched (run 'make deps')"
[ -f "$tarball" ] || die "$tarball missing (run 'make deps')"

export GIT_AUTHOR_NAME="ualink tree" GIT_AUTHOR_EMAIL="ualink@localhost"
export GIT_COMMITTER_NAME="ualink tree" GIT_COMMITTER_EMAIL="ualink@localhost"
export GIT_AUTHOR_DATE="2026-01-01T00:00:00Z" GIT_COMMITTER_DATE="2026-01-01T00:00:00Z"
g() { git -C "$tree" "$@"; }

# Debian's linux-source adds "/*" to the top-level .gitignore (its packaging
# repository ignores the kernel). With it every tracked file counts as
# ignored, and W=1's scripts/misc-check prints a warning for each of the
# ~87,000 files. The base commit drops those lines: they are Debian's, not
# the kernel's. Bump this when the base fix-up changes.
fixup=gitignore-2
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
	g commit -q --amend -a --no-edit
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

# Build the wanted history in a scratch index, starting from the base.
idx=$tree/.git/ualink-scratch-index
export GIT_INDEX_FILE=$idx
trap 'rm -f "$idx" "$tree/.git/ualink-msg" "$tree/.git/ualink-patch"' EXIT
g read-tree ualink-base
head=$(g rev-parse ualink-base)
# Our own files, at their in-tree paths: what the repository tracks or would
# track (not build outputs or other ignored files of the work tree), as one
# commit where patches/series says "@owned" (at the end if it does not).
add_owned() {
	local p
	for p in "${owned[@]}"; do
		g --work-tree="$repo" rm -r -q --cached --ignore-unmatch -- "$p" >/dev/null
	done
	git -C "$repo" ls-files -z --cached --others --exclude-standard -- "${owned[@]}" |
		while IFS= read -r -d '' f; do
			[ -e "$repo/$f" ] && printf '%s\0' "$f"
		done | g --work-tree="$repo" add -f --pathspec-from-file=- --pathspec-file-nul
	head=$(echo "drm/amdgpu/ualink: add the UALink core, the emulated pod, the uAPI and the guide" |
		g commit-tree "$(g write-tree)" -p "$head")
	owned_done=1
}

n=0 owned_done=0
if [ -f "$repo/patches/series" ]; then
	while read -r p _ || [ -n "${p:-}" ]; do
		case "$p" in ''|'#'*) continue ;; @owned) add_owned; continue ;; esac
		n=$((n + 1))
		f=$repo/patches/$p
		[ -f "$f" ] || die "patches/series names $p, which does not exist"
		if ! g apply --cached --whitespace=nowarn "$f" 2>"$tree/.git/ualink-msg"; then
			cat "$tree/.git/ualink-msg" >&2
			die "patches/$p does not apply to Debian $pkg $version." \
			    "If Debian updated the package since the series was last" \
			    "rebased, refresh patches/ against this version."
		fi
		g mailinfo "$tree/.git/ualink-msg" "$tree/.git/ualink-patch" < "$f" > "$tree/.git/ualink-info"
		subject=$(sed -n 's/^Subject: //p' "$tree/.git/ualink-info")
		[ -n "$subject" ] || die "patches/$p has no Subject: line"
		head=$( { echo "$subject"; echo; cat "$tree/.git/ualink-msg"; } |
			g commit-tree "$(g write-tree)" -p "$head")
	done < "$repo/patches/series"
fi
rm -f "$tree/.git/ualink-info"
[ "$owned_done" = 1 ] || add_owned
unset GIT_INDEX_FILE

# Check the result out; only files that differ are written.
g checkout -q -f -B ualink "$head"
log "tree ready: $tree (Debian $pkg $version, $n patches, $(g rev-parse --short HEAD))"
