#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Tier 2: amdgpu.ko with the UALink glue on x86_64, W=1 (sparse where it
# can run: not on 7.3 with bookworm's sparse 0.6.4, see targeted()) on our
# objects and on the C files patches/ touches, the kernel's UAPI header
# test on amdgpu_drm.h and our header, kernel-doc on the UALink uAPI in
# amdgpu_drm.h, checkpatch --strict and kernel-doc on every file we own,
# checkpatch on the generated series; an LLVM=-19 build of our objects and the kernel's Coccinelle scripts on our files.
# amdgpu.ko with UALink is checked in the debug guest's tree ($OUT/vm,
# configs/vm-guest.config + vm-debug.config, built with W=1 by
# vm-kernel.sh), which `make vm-test` boots next: one x86_64 kernel build
# instead of two (a cold build of its own took 17 minutes). Without UALink
# (configs/amdgpu.config + amdgpu-no-ualink.config) only amdgpu.ko is built.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

o=$OUT/vm
log=$RES/amdgpu.d
rm -rf "$log" "$RES/amdgpu.tests"
mkdir -p "$log"
pass=0 fail=0
exec 3>&1	# the terminal, for progress from inside check()

logname() { echo "$log/$(echo "$1" | tr '/ ' '__').log"; }

check() {	# check NAME CMD...: one counted check, output kept in the log dir
	local name=$1 f
	shift
	f=$(logname "$name")
	"$@" > "$f" 2>&1
	counted "$name" $?
}

# The checks that run one process each (checkpatch, kernel-doc, spatch)
# run $JOBS at a time, beside the single-job LLVM build: background_check
# starts one, collect waits for all of them and counts them in the order
# they were started.
queued=()
background_check() {	# background_check NAME CMD...
	local name=$1 f
	shift
	f=$(logname "$name")
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
	{ "$@" > "$f" 2>&1; echo $? > "$f.rc"; } &
	queued+=("$name")
}

collect() {
	local name
	wait
	for name in "${queued[@]}"; do
		counted "$name" "$(cat "$(logname "$name").rc" 2>/dev/null || echo 1)"
	done
	queued=()
}

# Every check of this tier is a static one: make check reports them on a
# line of their own, not as tests.
counted() {	# counted NAME STATUS
	local f
	f=$(logname "$1")
	if [ "$2" -eq 0 ]; then
		pass=$((pass + 1))
		result amdgpu pass static "$1"
	else
		fail=$((fail + 1))
		result amdgpu fail static "$1"
		echo "FAIL: $1"
		sed 's/^/    /' "$f" | head -n 25
	fi
}

build() {
	# Force the header test to run again: it only runs when stale.
	rm -f "$o"/usr/include/drm/amdgpu_drm.hdrtest "$o"/usr/include/drm/amdgpu_ualink*.hdrtest
	"$REPO/tooling/vm-kernel.sh" debug >&3 || return 1
	[ -f "$o/drivers/gpu/drm/amd/amdgpu/amdgpu.ko" ] &&
	[ -f "$o/drivers/gpu/drm/amd/amdgpu/ualink/amdgpu_ualink.ko" ] ||
		{ echo "amdgpu.ko or amdgpu_ualink.ko was not built"; return 1; }
}

# amdgpu without UALink: the hooks of patches/ must build when
# CONFIG_DRM_AMDGPU_UALINK is not set (W=1), and need no symbol of the
# UALink core. Only the objects of amdgpu's C files that patches/ touches
# are built: amdgpu's other files do not name UALink (a file that calls
# into it includes our header, and that include is a hunk of patches/), so
# their objects are the same with the option on or off but for the
# #if'd fields of amdgpu_object.h, which only the patched files use.
# (Building all of amdgpu.ko here took 296 s cold; this, about 2 min.)
build_no_ualink() {
	local on=$OUT/amdgpu-no-ualink out=$log/no-ualink-build.out objs=() f
	kconfigure "$on" "$REPO/configs/amdgpu.config" \
		"$REPO/configs/amdgpu-no-ualink.config" || return 1
	for f in $(git -C "$TREE" diff --name-only ualink-base HEAD -- \
			'drivers/gpu/drm/amd/amdgpu/*.c'); do
		case "$f" in drivers/gpu/drm/amd/amdgpu/ualink/*) continue ;; esac
		rm -f "$on/${f%.c}.o"
		objs+=("${f%.c}.o")
	done
	[ ${#objs[@]} -gt 0 ] || { echo "patches/ touches no amdgpu C file?"; return 1; }
	echo "W=1, UALink off, on: ${objs[*]}"
	progress amdgpu-no-ualink "$on" "$out" \
		kmake "$on" W=1 -s "${objs[@]}" >&3 ||
		{ grep -E 'error|warning' "$out" | head -n 30; return 1; }
	[ ! -e "$on/drivers/gpu/drm/amd/amdgpu/ualink/amdgpu_ualink.o" ] ||
		{ echo "the core was built though UALink is off"; return 1; }
	for f in "${objs[@]}"; do
		[ -f "$on/$f" ] || { echo "$f was not built"; return 1; }
		! nm -u "$on/$f" | grep -w 'amdgpu_ualink_[a-z0-9_]*' ||
			{ echo "$f without UALink needs the UALink core"; return 1; }
	done
	! grep -E '^[^ ]+: warning:' "$out"
}

# Sparse cannot check Linux 7.3 with bookworm's sparse 0.6.4: 7.3 uses
# __typeof_unqual__ under __CHECKER__, which 0.6.4 does not know, and
# kbuild then turns C=1 off with a warning (scripts/checker-valid.sh).
# That warning is printed here and the check is named for what runs:
# W=1. Sparse needs a sparse newer than Debian has (trixie too has 0.6.4).
#
# W=1 and sparse on our objects and the .c files patches/ touches: remove
# their objects and build again with C=1, which runs sparse on what it
# compiles: just those objects, since build() left everything else up to
# date. Every diagnostic shows up even when nothing changed since last run
# (ccache replays the compiler's). Objects linked into vmlinux (drm_gem.o)
# are built as single targets instead and keep their time stamp when they
# come out the same, so that vmlinux is not linked again for nothing (it
# was, every run: 33 s).
targeted() {
	local objs=() builtin=() f rc
	for f in $(owned_sources | grep '\.c$') \
		 $(git -C "$TREE" diff --name-only ualink-base HEAD -- '*.c'); do
		f=${f%.c}.o
		case " ${objs[*]} ${builtin[*]} " in *" $f "*) continue ;; esac
		[ -f "$o/$f" ] || continue	# not in this configuration
		# a module's objects are listed in its .mod file
		if grep -rqxF --include='*.mod' "$f" "$o/$(dirname "$f")" \
				"$o/$(dirname "$(dirname "$f")")" 2>/dev/null; then
			objs+=("$f")
		else
			builtin+=("$f")
			mv "$o/$f" "$o/$f.prev"
		fi
		rm -f "$o/$f"
	done
	[ ${#objs[@]} -gt 0 ] || { echo "no objects to check"; return 1; }
	echo "W=1 C=1 on: ${objs[*]} ${builtin[*]}"
	: > "$log/targeted.out"
	if [ ${#builtin[@]} -gt 0 ]; then
		kmake "$o" W=1 C=1 "${builtin[@]}" >> "$log/targeted.out" 2>&1
		rc=$?
		for f in "${builtin[@]}"; do
			cmp -s "$o/$f" "$o/$f.prev" && touch -r "$o/$f.prev" "$o/$f"
			rm -f "$o/$f.prev"
		done
		[ $rc -eq 0 ] || { cat "$log/targeted.out"; return 1; }
	fi
	kmake "$o" W=1 C=1 >> "$log/targeted.out" 2>&1 ||
		{ cat "$log/targeted.out"; return 1; }
	grep -h 'is not available or not up to date' "$log/targeted.out" | sort -u
	"$REPO/tooling/added-lines.py" "$TREE" $OWNED_DIRS $OWNED_FILES \
		< "$log/targeted.out"
}

# The kernel's Coccinelle scripts on our directory (report mode): any
# report is a finding. Two scripts have OCaml parts, which spatch compiles
# when it runs them (Debian's ocaml-nox).
cocci() {
	local out=$log/coccicheck.out
	kmake "$o" coccicheck MODE=report M="$OWNED_DIRS" > "$out" 2>&1 ||
		{ tail -n 30 "$out"; return 1; }
	# the findings: lines naming one of our files with a line number
	! grep -E "^[^ ]*($OWNED_DIRS)/[^ :]+:[0-9]+" "$out"
}

# Our objects (the core, the glue, the emulated pod, the KUnit suites) and
# the .c files patches/ touches, built with LLVM=-19 (Debian's clang-19:
# Linux 7.3 needs LLVM 17 or later, bookworm's default clang is 14) and
# W=1: only those objects, in configs/amdgpu.config (no sanitizers:
# clang's KASAN makes frames of KUnit cases past 2 KiB, which
# -Wframe-larger-than reports, a cost of the instrumentation, not of the
# code). Any warning in our lines is a finding.
# kbuild builds a single object with the flags of its own directory, but
# amdgpu's Makefile builds the glue from ualink/: it gets the include
# paths its gcc build had (from that object's .cmd file). All objects are
# built by one make: each make runs kbuild's prepare, some 20 s even when
# nothing is to be done (three makes took 105 s, one takes about 35).
llvm_build() {
	local ol=$OUT/amdgpu-llvm objs=() f cmd incs="" out=$log/llvm-build.out
	# the configuration as gcc's Kconfig makes it, given to clang's only
	# when it changed (clang's olddefconfig rewrites it: CC_IS_CLANG, ...)
	kconfigure "$OUT/amdgpu-llvm-config" "$REPO/configs/amdgpu.config" || return 1
	mkdir -p "$ol"
	: > "$out"
	if ! cmp -s "$OUT/amdgpu-llvm-config/.config" "$ol/.config.gcc"; then
		cp "$OUT/amdgpu-llvm-config/.config" "$ol/.config"
		make -C "$TREE" O="$ol" LLVM=-19 CC="ccache clang-19" -s olddefconfig \
			>> "$out" 2>&1 || { tail -n 30 "$out"; return 1; }
		cp "$OUT/amdgpu-llvm-config/.config" "$ol/.config.gcc"
	fi
	for f in $(owned_sources | grep '\.c$') \
		 $(git -C "$TREE" diff --name-only ualink-base HEAD -- '*.c'); do
		f=${f%.c}.o
		case " ${objs[*]} " in *" $f "*) continue ;; esac
		cmd=$o/$(dirname "$f")/.$(basename "$f").cmd
		[ -f "$cmd" ] || continue	# not in this configuration
		rm -f "$ol/$f"
		objs+=("$f")
		if grep -q "KBUILD_MODNAME='\"amdgpu\"'" "$cmd" &&
		   [ "$(dirname "$f")" = "$OWNED_DIRS" ]; then
			incs+=" $(head -n 1 "$cmd" | tr ' ' '\n' | grep -E "^-I$TREE/drivers/" | tr '\n' ' ')"
		fi
	done
	incs=$(echo "$incs" | tr ' ' '\n' | sort -u | tr '\n' ' ')
	echo "LLVM=-19 W=1 on: ${objs[*]}"
	# One job: for a target in ualink/, kbuild descends into amdgpu/ as
	# well (its path matches that directory too), and two jobs would
	# build the same object at once and remove each other's .d files.
	# Built so, an object misses the CFLAGS_<object> of ualink/Makefile:
	# amdgpu_ualink_trace.o's -I of its own directory comes from KCFLAGS,
	# as do the glue's include paths (amdgpu's, which the core's objects
	# do not use: the gcc build, with its own flags, proves that).
	make -C "$TREE" O="$ol" LLVM=-19 CC="ccache clang-19" -j1 W=1 \
		KCFLAGS="-I$TREE/$OWNED_DIRS $incs" "${objs[@]}" >> "$out" 2>&1 ||
		{ grep -E 'error' "$out" | head -n 30; return 1; }
	for f in "${objs[@]}"; do
		[ -f "$ol/$f" ] || { echo "$f was not built"; return 1; }
	done
	"$REPO/tooling/added-lines.py" "$TREE" $OWNED_DIRS $OWNED_FILES < "$out"
}

# The guide as Sphinx renders it (Debian's python3-sphinx), alone, with the
# kernel's own kernel-doc extension pulling in the DOC sections and the
# kernel-doc of our files: any warning or error is a finding. (The whole of
# `make htmldocs` needs packages bookworm does not have in the versions
# 7.3 asks for, and takes far longer.)
sphinx_check() {
	local d=$OUT/sphinx out=$log/sphinx.out
	rm -rf "$d"
	mkdir -p "$d/src"
	cp "$TREE/Documentation/gpu/amdgpu/ualink.rst" "$d/src/index.rst"
	cat > "$d/src/conf.py" <<-EOF
	import os, sys
	sys.path.insert(0, os.path.join(os.environ['srctree'], 'Documentation/sphinx'))
	extensions = ['kerneldoc', 'rstFlatTable']
	kerneldoc_srctree = os.environ['srctree']
	primary_domain = 'c'
	highlight_language = 'none'
	project = 'amdgpu UALink'
	EOF
	(cd "$TREE" && env srctree="$TREE" PATH="/usr/bin:$PATH" \
		python3 -m sphinx -E -q -b html "$d/src" "$d/html") > "$out" 2>&1 ||
		{ cat "$out"; return 1; }
	[ -f "$d/html/index.html" ] || { echo "no HTML written"; return 1; }
	! grep -E 'WARNING|ERROR|CRITICAL' "$out"
}

hdrtest() {
	local h
	for h in amdgpu_drm amdgpu_ualink_vpod; do
		[ -f "$o/usr/include/drm/$h.hdrtest" ] ||
			{ echo "UAPI header test did not run for drm/$h.h"; return 1; }
		echo "HDRTEST usr/include/drm/$h.h: passed"
	done
}

# kernel-doc on the UALink part of amdgpu_drm.h, cut out into a file of
# its own: the rest of that file is amdgpu's, and not all of it is
# kernel-doc clean. The whole part is checked, not a list of structs that
# would miss a new one. Every struct of it documented, no warning.
uapi_kernel_doc() {
	local h=$TREE/include/uapi/drm/amdgpu_drm.h part=$log/amdgpu_drm-ualink.h s out n=0
	sed -n '/^ \* UALink: a GPU of a UALink pod/,/^#if defined(__cplusplus)$/p' "$h" |
		sed '1i /*' | sed '$d' > "$part"
	grep -q '^struct drm_amdgpu_ualink {$' "$part" ||
		{ echo "no UALink part in $h"; return 1; }
	out=$(cd "$TREE" && env PATH="/usr/bin:$PATH" scripts/kernel-doc -none -Wall "$part" 2>&1)
	[ -z "$out" ] || { echo "$out"; return 1; }
	out=$(cd "$TREE" && env PATH="/usr/bin:$PATH" scripts/kernel-doc -rst "$part" 2>&1)
	for s in $(sed -n 's/^struct \(drm_amdgpu_ualink[a-z0-9_]*\) {$/\1/p' "$part"); do
		n=$((n + 1))
		grep -q "^\.\. c:struct:: $s\$" <<< "$out" ||
			{ echo "no kernel-doc for struct $s in $h"; return 1; }
	done
	echo "kernel-doc: $n structs of the UALink part of amdgpu_drm.h, no warning"
}

# per_file LABEL LIST DIR CMD...: CMD over every file LIST names (one path
# per line, as CMD takes it, from DIR), split over $JOBS processes:
# a process per file was mostly start-up (127 of them took 74 s). One
# check "LABEL PATH" per file (PATH relative to the work tree if in it),
# passed when no line of the output begins with "PATH:"; output lines
# that name no file of LIST, or a process that failed without naming one,
# fail a check of their own.
per_file() {
	local label=$1 list=$2 dir=$3 tag n part f pids=() out named name
	shift 3
	tag=$log/$(echo "$label" | tr -c 'a-zA-Z0-9\n' '_')
	rm -f "$tag".part.*
	n=$(( ($(grep -c . "$list") + JOBS - 1) / JOBS ))
	split -l "$n" "$list" "$tag.part."
	for part in "$tag".part.*; do
		(cd "$dir" && xargs -d '\n' -a "$part" "$@" > "$part.out" 2>&1
		 echo $? > "$part.rc") &
		pids+=($!)
	done
	wait "${pids[@]}"
	out=$tag.out
	cat "$tag".part.*.out > "$out"
	while read -r f; do
		name="$label ${f#"$REPO"/}"
		awk -v p="$f:" 'index($0, p) == 1' "$out" > "$(logname "$name")"
		[ -s "$(logname "$name")" ]
		counted "$name" $((! $?))
	done < "$list"
	named=$(awk 'NR == FNR { p[$0 ":"]; next }
		{ for (f in p) if (index($0, f) == 1) next; print }' "$list" "$out" |
		tee "$(logname "$label, output naming no file")" | wc -l)
	if [ "$named" -eq 0 ] && [ "$(grep -c . "$out")" -eq 0 ] &&
	   grep -qvx 0 "$tag".part.*.rc; then
		echo "a run failed without output" > "$(logname "$label, output naming no file")"
		named=1
	fi
	counted "$label, output naming no file" $((named > 0))
}

echo "amdgpu: building the debug guest kernel, amdgpu.ko and the UALink core in $o"
check "amdgpu build (amdgpu.ko + core, W=1)" build
echo "amdgpu: building amdgpu's patched files without UALink (cold: ~2 min)"
check "amdgpu build with CONFIG_DRM_AMDGPU_UALINK=n (W=1)" build_no_ualink
echo "amdgpu: W=1 (sparse cannot run on 7.3 here), UAPI header test, checkpatch, kernel-doc"
if [ "$fail" -eq 0 ]; then
	check "W=1 on our objects and patched files (C=1: sparse 0.6.4 refused by 7.3)" targeted
	check "UAPI header test" hdrtest
	check "kernel-doc on the UALink uAPI in amdgpu_drm.h" uapi_kernel_doc
	check "Sphinx renders ualink.rst without a warning" sphinx_check
	echo "amdgpu: LLVM=-19 build of our objects, coccicheck (cold: ~4 min)"
	background_check "coccicheck on $OWNED_DIRS" cocci
	check "LLVM=-19 W=1 on our objects and patched files" llvm_build
fi
# checkpatch runs scripts/spdxcheck.py with "env python3": make that
# Debian's, which has python3-ply, rather than another python3 on PATH.
# --emacs --terse: one line per finding, beginning with the file's path.
cp_args=(env PATH="/usr/bin:$PATH" perl "$TREE/scripts/checkpatch.pl"
	 --strict --quiet --no-summary --emacs --terse)
owned_files > "$log/owned-files.list"
per_file "checkpatch --strict" "$log/owned-files.list" "$TREE" "${cp_args[@]}" -f
# kernel-doc -none: any output is a finding
owned_sources > "$log/owned-sources.list"
# (7.3's kernel-doc is Python: run as it is, with Debian's python3)
per_file "kernel-doc" "$log/owned-sources.list" "$TREE" env PATH="/usr/bin:$PATH" scripts/kernel-doc -none -Wall
# What would be posted: the series as `make format-patch` writes it (with a
# check-only identity where git has none, as in CI), checkpatch --strict on
# every patch and get_maintainer.pl on every file it adds. One check: the
# patches of patches/ are not checked on their own, since they are not
# what is posted (the series commits them again, signed off).
# The expected lists make check matches KUnit results against
# (tests/expected/): every KUNIT_CASE of our sources in one, and no case in
# one that no source defines (a renamed case fails here and in its tier).
kunit_lists() {
	"$REPO/tooling/results.py" cases "$REPO"/tests/expected/*kunit*.list -- \
		$(cd "$REPO" && find "$OWNED_DIRS" -name '*.c' | sed "s|^|$REPO/|")
}
check "tests/expected/ names every KUNIT_CASE of our sources" kunit_lists
check "format-patch --check: checkpatch --strict and get_maintainer.pl on the series" \
	"$REPO/tooling/format-patch.sh" --check
# Every commit of the series builds what it adds, with W=1
# (tooling/series-check.sh, in a worktree and a build directory of its
# own); its table is in the check's log.
echo "amdgpu: series-check, every commit of the series (cold: ~43 min, warm: ~8.5)"
check "series-check: every commit of the series builds what it adds (W=1)" \
	"$REPO/tooling/series-check.sh"
tail -n 1 "$(logname "series-check: every commit of the series builds what it adds (W=1)")"
collect

tier_done amdgpu
