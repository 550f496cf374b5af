# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Shared settings of the tooling scripts; sourced, not run.
#
# UALINK_WORK holds everything that outlives a clone: the prepared tree, the
# build directories and ccache. It is outside the work tree on purpose: CI
# clones afresh, and a build directory that survives makes its build
# incremental.

# Diagnostics are matched in English ("warning:", "error:").
export LC_ALL=C

W=${UALINK_WORK:-/var/tmp/ualink}
TREE=$W/linux
OUT=$W/out
RES=$W/results
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JOBS=${JOBS:-$(nproc)}
export CCACHE_DIR=${CCACHE_DIR:-$W/ccache}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-20G}
# Depend mode: on a miss ccache does not run the preprocessor before the
# compiler (the kernel's -Wp,-MMD gives it the included files). Measured
# on 2026-12-02 for amdgpu_vm.o of the debug guest: 1.73 s without ccache,
# 2.25 s for a miss in the default mode, 1.85 s in depend mode, 0.05 s for
# a hit. A cold make check compiles everything once, so the default mode
# cost it a quarter more time. What depend mode gives up: a header edit
# that leaves the preprocessed output the same (a comment, an unrelated
# config symbol) is a miss.
export CCACHE_DEPEND=${CCACHE_DEPEND:-1}
# Reproducible objects, so that ccache hits across rebuilds.
export KBUILD_BUILD_TIMESTAMP="2026-01-01"
export KBUILD_BUILD_USER=ualink KBUILD_BUILD_HOST=ualink

# Paths in the kernel tree that this repository owns (tooling/series.py has
# the same list).
OWNED_DIRS="drivers/gpu/drm/amd/amdgpu/ualink"
OWNED_FILES="include/uapi/drm/amdgpu_ualink_vpod.h Documentation/gpu/amdgpu/ualink.rst Documentation/ABI/testing/sysfs-driver-amdgpu-ualink"

# kbuild and the guest's command line cannot take paths with spaces: say so.
case "$REPO$W" in
*[[:space:]]*)
	echo "ualink: the work tree ($REPO) and UALINK_WORK ($W) must not contain spaces" >&2
	exit 1 ;;
esac

mkdir -p "$OUT" "$RES"

# kmake OUTDIR ARGS...: make in the prepared tree, with ccache.
kmake() {
	local o=$1
	shift
	make -C "$TREE" O="$o" CC="ccache gcc" HOSTCC="ccache gcc" \
		-j"$JOBS" "$@"
}

# kconfigure OUTDIR FRAGMENT...: tinyconfig with the FRAGMENTs on top, written
# to OUTDIR/.config only when it changed (so unchanged builds stay warm);
# fails when a line of a FRAGMENT did not survive Kconfig's dependency
# resolution.
kconfigure() {
	local o=$1 want=$1/.config.want line sym val key
	shift
	mkdir -p "$o"
	# Kconfig's answer depends on the tree, the compiler and the fragments
	# alone: when none changed since it last succeeded, it is not asked
	# again (each time costs a make and some 9 s).
	key=$( { git -C "$TREE" rev-parse 'HEAD^{tree}'; gcc --version | head -n 1
		 cat "$@"; } | sha256sum | cut -d' ' -f1)
	if [ -f "$want" ] && [ "$(cat "$o/.config.key" 2>/dev/null)" = "$key" ]; then
		cmp -s "$want" "$o/.config" || cp "$want" "$o/.config"
		return 0
	fi
	rm -f "$o/.config.key"
	cat "$TREE/kernel/configs/tiny.config" \
	    "$TREE/arch/x86/configs/tiny.config" "$@" > "$o/.config.frag"
	kmake "$o" -s KCONFIG_CONFIG=.config.want \
		KCONFIG_ALLCONFIG="$o/.config.frag" allnoconfig > "$o/.config.log" 2>&1 ||
		{ cat "$o/.config.log" >&2; return 1; }
	# every symbol's last value in the fragments (later ones override)
	cat "$@" | awk -F= '/^CONFIG_[A-Za-z0-9_]+=/ { v[$1] = $0; o[$1] = NR }
		END { for (k in v) print o[k], v[k] }' | sort -n | cut -d' ' -f2- |
	while read -r line; do
		sym=${line%%=*} val=${line#*=}
		if [ "$val" = n ]; then
			grep -qE "^$sym=" "$want" || continue
		else
			grep -qxF "$line" "$want" && continue
		fi
		echo "kconfig: $line did not take (unmet dependency?)" >&2
		exit 1
	done || return 1
	cmp -s "$want" "$o/.config" || cp "$want" "$o/.config"
	echo "$key" > "$o/.config.key"
}

# progress LABEL OUTDIR LOG CMD...: run CMD with its output in LOG, saying
# every minute how long it has run and how many objects OUTDIR holds, so a
# cold build is not silent.
progress() {
	local label=$1 dir=$2 log=$3 pid rc start=$SECONDS
	shift 3
	"$@" > "$log" 2>&1 &
	pid=$!
	while ! wait_for "$pid" 60; do
		echo "$label: still building, $(((SECONDS - start) / 60)) min," \
		     "$(find "$dir" -name '*.o' 2>/dev/null | wc -l) objects"
	done
	wait "$pid"
	rc=$?
	return $rc
}

# wait_for PID SECONDS: true once PID has exited, false after SECONDS.
wait_for() {
	local i
	for ((i = 0; i < $2; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 1
	done
	! kill -0 "$1" 2>/dev/null
}

# counts TIER PASSED FAILED SKIPPED: record the result of a tool that is
# not a tier of `make check` (series-check).
counts() {
	echo "$2 $3 $4" > "$RES/$1"
	echo "== $1: $2 passed, $3 failed, $4 skipped"
}

# The tiers of `make check` record one line per result in $RES/TIER.tests
# (tooling/results.py says what the fields are); make check adds them up.
# result TIER STATUS KIND ID [NOTE]: append one.
result() {
	printf '%s\t%s\t%s\t%s\n' "$2" "$3" "$4" "${5:-}" >> "$RES/$1.tests"
}

# tier_done TIER: print what TIER recorded; true when nothing failed and
# nothing of ours was skipped.
tier_done() {
	awk -F'\t' -v t="$1" '{ n[$1]++; k[$2 == "static" ? "static" : "tests"]++ }
		$1 == "skip" && $2 == "test" { bad = 1 }
		END {
			printf "== %s: %d passed, %d failed, %d skipped (%d tests, %d static checks)\n",
			       t, n["pass"], n["fail"], n["skip"], k["tests"], k["static"]
			exit (n["fail"] > 0 || bad || NR == 0)
		}' "$RES/$1.tests" 2>/dev/null ||
		{ [ -s "$RES/$1.tests" ] || echo "== $1: recorded nothing"; return 1; }
}

# owned_sources: the C sources and headers we own, relative to the tree.
owned_sources() {
	(cd "$REPO" && find $OWNED_DIRS -name '*.[ch]' | sort
	 echo include/uapi/drm/amdgpu_ualink_vpod.h)
}

# owned_files: every file we own in the tree (for checkpatch).
owned_files() {
	(cd "$REPO" && find $OWNED_DIRS -type f ! -name .kunitconfig | sort
	 echo include/uapi/drm/amdgpu_ualink_vpod.h)
}
