#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# `make series-check` (and part of `make check`): every commit of the series
# builds what it adds. Checks out each commit of the prepared tree in turn
# and builds it with UALink enabled (configs/amdgpu.config: amdgpu, the core,
# its KUnit suites and the emulated pod as modules; symbols a commit does
# not have yet are left out) and W=1, in a build directory of its own:
#
# - a commit that edits existing kernel files (a patch of patches/, alone
#   or in a unit), the configuration or the amdgpu glue (which amdgpu's
#   Makefile builds into amdgpu.ko) builds vmlinux and the modules;
# - a commit of our own files only builds their directory as modules
#   (M=, with modpost: a symbol that nothing defines yet fails the commit);
# - sparse does not run: Linux 7.3 refuses bookworm's sparse 0.6.4 (see
#   amdgpu-check.sh), so each commit gets W=1 only, and W=1 without its
#   kernel-doc pass over every file compiled
#   (tooling/series-kernel-doc-off.py says why);
# - every .c file a commit adds must have produced an object in that
#   build (or, for a KUnit file included by another .c, that file's
#   object was built again), or the commit fails; the one exception is
#   the NPA pool's suite, which needs TTM's KUnit helpers and so builds
#   on UML only (make kunit builds it, at the last commit);
# - any warning that names one of our files or a line the commit adds
#   fails it.
#
# Prints a table: commit, lines changed, seconds, objects built for the .c
# files it adds.
#
# The commits are checked out in a worktree of the prepared tree's history
# of its own ($UALINK_WORK/series-tree), not in the prepared tree: going
# from commit to commit rewrites files, and in the prepared tree that would
# make the other tiers' builds compile again what those files reach.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

o=$OUT/series
log=$RES/series-check.d
ualink=drivers/gpu/drm/amd/amdgpu/ualink
rm -rf "$log"
mkdir -p "$log" "$o"
pass=0 fail=0
head=$(git -C "$TREE" rev-parse ualink)
st=$W/series-tree
if ! git -C "$st" rev-parse --git-dir > /dev/null 2>&1; then
	# none yet, or one of a prepared tree unpacked again since
	git -C "$TREE" worktree prune
	rm -rf "$st"
	git -C "$TREE" worktree add -q --detach "$st" "$head" ||
		{ echo "series-check: cannot make the worktree $st"; exit 1; }
fi
TREE=$st
g() { git -C "$TREE" "$@"; }

# configure LOG: the configuration of the commit checked out, asked of
# Kconfig only when a Kconfig file changed; .config is only written when it
# changed, so that builds stay incremental. Sets $reconfigured.
configure() {
	reconfigured=0
	[ -f "$o/.config" ] && ! g diff --name-only "$c^" "$c" | grep -q 'Kconfig$' &&
		return 0
	cat "$TREE/kernel/configs/tiny.config" "$TREE/arch/x86/configs/tiny.config" \
	    "$REPO/configs/amdgpu.config" > "$o/.config.frag"
	kmake "$o" -s KCONFIG_CONFIG=.config.next \
		KCONFIG_ALLCONFIG="$o/.config.frag" allnoconfig > "$1" 2>&1 || return 1
	if ! cmp -s "$o/.config.next" "$o/.config"; then
		cp "$o/.config.next" "$o/.config"
		reconfigured=1
	fi
}

# diagnostics (gcc's and sparse's "file:line:col: warning|error") in our
# files, or in lines the commit adds to other files
findings() {	# findings COMMIT OUTPUT
	local c=$1 out=$2
	grep -E '^[^ :]+:[0-9]+:([0-9]+:)? (warning|error):' "$out" |
	while IFS=: read -r f l rest; do
		# gcc names a file relative to the build directory or absolute
		case "$f" in /*) ;; *) f=$o/$f ;; esac
		f=$(realpath -m --relative-to="$TREE" "$f")
		case "$f" in
		$ualink/*|include/uapi/drm/amdgpu_ualink*) echo "$f:$l:$rest"; continue ;;
		esac
		# a line this commit added?
		g diff -U0 "$c^" "$c" -- "$f" 2>/dev/null |
			awk -v l="$l" '/^@@/ { split($3, a, ","); s = substr(a[1], 2);
				n = (a[2] == "" ? 1 : a[2]); if (l >= s && l < s + n) found = 1 }
				END { exit !found }' && echo "$f:$l:$rest"
	done
}

printf '%-4s %6s %5s  %-60s %s\n' "#" lines secs commit "objects built for added .c files" \
	| tee "$log/table"
n=0
start=$(date +%s)
for c in $(g rev-list --reverse ualink-base..ualink); do
	n=$((n + 1))
	subject=$(g log -1 --format=%s "$c")
	lines=$(g show --format= --numstat "$c" | awk '{ a += $1 + $2 } END { print a + 0 }')
	t0=$(date +%s)
	g checkout -q -f --detach "$c" || { echo "series-check: checkout of $c failed"; exit 1; }
	cl=$log/$n
	ok=1 why=""
	marker=$o/.series-marker
	touch "$marker"	# objects built from here on are newer (ns mtimes)
	if ! configure "$cl.config"; then
		ok=0 why="configuration failed"
	elif [ "$reconfigured" -eq 1 ] || [ ! -f "$o/Module.symvers" ] ||
	     g diff --name-only "$c^" "$c" | grep -qvE "^($ualink/|include/uapi/drm/amdgpu_ualink|Documentation/)" ||
	     g diff --name-only "$c^" "$c" | grep -qE "^$ualink/(tests/)?amdgpu_ualink_amdgpu"; then
		# a commit that edits kernel files, the configuration, or
		# the glue (amdgpu's Makefile builds it into amdgpu.ko):
		# everything
		kmake "$o" -s W=1 KERNELDOC="$REPO/tooling/series-kernel-doc-off.py" \
			> "$cl.build" 2>&1 || { ok=0 why="build failed"; }
	else
		# our files only: their directory, as modules, with modpost
		# (against the Module.symvers of the last full build)
		kmake "$o" -s W=1 M="$TREE/$ualink" MO="$o/$ualink" \
			> "$cl.build" 2>&1 || { ok=0 why="build failed"; }
	fi
	built=()
	for f in $(g diff --name-only --diff-filter=A "$c^" "$c" -- '*.c'); do
		obj=$o/${f%.c}.o
		if [ -f "$obj" ] && [ "$obj" -nt "$marker" ]; then
			built+=("$(basename "${f%.c}.o")")
			continue
		fi
		# a KUnit file included at the end of the file it tests
		inc=$(grep -lF "#include \"${f#"$ualink"/}\"" "$TREE/$ualink"/*.c 2>/dev/null | head -n 1)
		if [ -n "$inc" ] && [ "$o/$ualink/$(basename "${inc%.c}").o" -nt "$marker" ]; then
			built+=("$(basename "${inc%.c}").o<-$(basename "$f")")
			continue
		fi
		# built on UML only (TTM's KUnit helpers are UML's): the UML
		# tier builds it, at the last commit only
		if [ "$f" = "$ualink/tests/amdgpu_ualink_npa_pool_test.c" ] &&
		   ! grep -q '^CONFIG_DRM_TTM_KUNIT_TEST=' "$o/.config"; then
			built+=("(UML only: $(basename "$f"))")
			continue
		fi
		ok=0 why="${why:+$why; }$f produced no object"
	done
	if [ "$ok" -eq 1 ]; then
		findings "$c" "$cl.build" > "$cl.findings"
		[ ! -s "$cl.findings" ] || { ok=0 why="warnings in its lines"; }
	fi
	printf '%-4s %6s %5s  %-60.60s %s\n' "$n" "$lines" "$(($(date +%s) - t0))" "$subject" \
		"${built[*]:--}" |
		tee -a "$log/table"
	if [ "$ok" -eq 1 ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "series-check: FAILS: $subject: $why"
		{ cat "$cl.findings" 2>/dev/null; grep -E 'error|warning' "$cl.build"; } | head -n 15 | sed 's/^/    /'
	fi
done
rm -f "$o/.series-marker"
echo "series-check: $pass of $n commits build what they add ($(($(date +%s) - start)) s)"
counts series-check "$pass" "$fail" 0
[ "$fail" -eq 0 ]
