#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# The series as it would be posted, from the prepared tree:
#
#   format-patch.sh            `make format-patch`: v$V (default 1) of the
#                              series in $UALINK_WORK/series, signed off by
#                              the git identity of whoever runs it
#   format-patch.sh --check    the same series with a check-only identity
#                              when no git identity is configured (CI), in
#                              $RES/series, then checkpatch --strict and
#                              get_maintainer.pl on every patch of it
#
# The prepared tree's commits are made by prepare-tree.sh's neutral
# identity; that identity never reaches a patch: the series is committed
# again here, tree for tree, as the poster, with a Signed-off-by line.
# Nothing here invents a person: without user.name and user.email in git's
# configuration, `make format-patch` refuses, and the check-only identity
# of --check has an address under .invalid, which `make format-patch`
# would refuse too.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

mode=post
[ "${1:-}" != --check ] || mode=check
V=${V:-1}
case "$V" in ''|*[!0-9]*|0) echo "format-patch: V must be a version number >= 1" >&2; exit 2 ;; esac
g() { git -C "$TREE" "$@"; }
die() { echo "format-patch: $*" >&2; exit 1; }

name=$(git -C "$REPO" config user.name || true)
email=$(git -C "$REPO" config user.email || true)
# an address no Signed-off-by can rest on
invented() {
	case "$1" in
	*@*.invalid|*@localhost|*@*.localdomain|*@example.*|*@*.example|*@*.example.*) return 0 ;;
	esac
	return 1
}
if [ "$mode" = post ]; then
	[ -n "$name" ] && [ -n "$email" ] ||
		die "no git identity: set git config user.name and user.email;" \
		    "the series is authored and signed off by whoever posts it"
	! invented "$email" ||
		die "$email is not an address a Signed-off-by can rest on"
	out=$W/series
else
	# the poster's identity where it is one `make format-patch` would
	# post with; otherwise (none, as in CI, or an invented one) a
	# check-only identity that it refuses
	if [ -z "$name" ] || [ -z "$email" ] || invented "$email"; then
		name="UALink check-only identity"
		email="check-only@ualink.invalid"
	fi
	out=$RES/series
fi
ident="$name <$email>"

base_version=$(cat "$W/base/version" 2>/dev/null || echo unknown)
commits=$(g rev-list --reverse ualink-base..ualink) || die "no prepared tree (make tree)"
[ -n "$commits" ] || die "the prepared tree has no commit on its base"

# The series again, as $ident: the same trees, each message signed off.
export GIT_AUTHOR_NAME="$name" GIT_AUTHOR_EMAIL="$email"
export GIT_COMMITTER_NAME="$name" GIT_COMMITTER_EMAIL="$email"
if [ "$mode" = check ]; then
	# reproducible: the same series gives the same patches
	export GIT_AUTHOR_DATE="2026-01-01T00:00:00Z" GIT_COMMITTER_DATE="2026-01-01T00:00:00Z"
fi
head=$(g rev-parse ualink-base)
for c in $commits; do
	head=$(g log -1 --format=%B "$c" |
	       git interpret-trailers --if-exists addIfDifferent \
		       --trailer "Signed-off-by: $ident" |
	       g commit-tree "$(g rev-parse "$c^{tree}")" -p "$head") ||
		die "could not commit $c again"
done
g update-ref refs/heads/ualink-posted "$head"

# To: the maintainers get_maintainer.pl names for the whole series; Cc:
# its lists. From the prepared tree, without git history (it has none).
rm -rf "$out"
mkdir -p "$out"
gm=(perl scripts/get_maintainer.pl --no-git --no-git-fallback --no-rolestats
    --no-tree)
g diff ualink-base ualink-posted > "$out/.all.diff"
(cd "$TREE" && "${gm[@]}" --no-l --no-s "$out/.all.diff") > "$out/.to" 2> "$out/.gm.err" ||
	die "get_maintainer.pl failed: $(cat "$out/.gm.err")"
(cd "$TREE" && "${gm[@]}" --no-m --no-r --no-s "$out/.all.diff") > "$out/.cc" 2>> "$out/.gm.err" ||
	die "get_maintainer.pl failed: $(cat "$out/.gm.err")"
rm -f "$out/.all.diff"
args=()
while read -r a; do [ -z "$a" ] || args+=("--to=$a"); done < "$out/.to"
while read -r a; do [ -z "$a" ] || args+=("--cc=$a"); done < "$out/.cc"

g format-patch -q -o "$out" -v"$V" --cover-letter --thread=shallow \
	--no-signature "${args[@]}" ualink-base..ualink-posted ||
	die "git format-patch failed"

# The cover letter's subject and text: patches/cover-letter (its first line
# is the subject), then the base it applies to.
cover=$(ls "$out"/v"$V"-0000-cover-letter.patch)
{
	sed -n '2,$p' "$REPO/patches/cover-letter"
	echo
	echo "The series applies to Linux v7.3.4 as Debian ships it"
	echo "(linux-source-7.3 $base_version), from which it was generated."
} > "$out/.blurb"
python3 - "$cover" "$REPO/patches/cover-letter" "$out/.blurb" <<'EOF'
import sys
cover, subj, blurb = sys.argv[1:]
s = open(cover).read()
s = s.replace('*** SUBJECT HERE ***', open(subj).readline().strip(), 1)
s = s.replace('*** BLURB HERE ***', open(blurb).read().rstrip('\n'), 1)
open(cover, 'w').write(s)
EOF
rm -f "$out/.blurb"
n=$(ls "$out"/v"$V"-0*.patch | wc -l)
echo "format-patch: $((n - 1)) patches and a cover letter in $out, from $ident"
[ "$mode" = post ] && exit 0

# --check: what a maintainer would run on what is posted.
pass=0 fail=0
: > "$out/.checkpatch"
for p in "$out"/v"$V"-0*.patch; do
	b=$(basename "$p")
	case "$b" in *-0000-cover-letter.patch) continue ;; esac
	# FILE_PATH_CHANGES asks whether MAINTAINERS needs updating for the
	# files a patch adds; get_maintainer.pl answers it below (every file
	# the series adds must be covered by the UALink entry).
	if env PATH="/usr/bin:$PATH" perl "$TREE/scripts/checkpatch.pl" --strict \
		--quiet --no-summary --terse --ignore FILE_PATH_CHANGES \
		--root="$TREE" "$p" > "$out/$b.checkpatch" 2>&1 &&
	   [ ! -s "$out/$b.checkpatch" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL: checkpatch --strict $b"
		head -n 20 "$out/$b.checkpatch" | sed 's/^/    /'
	fi
done
# no identity in the series but the one it was made with (prepare-tree's
# neutral committer, or anyone else, would be an identity no one gave)
others=$(grep -h -E '^(From|Signed-off-by|Co-developed-by|Reviewed-by|Acked-by|Tested-by): ' \
	"$out"/v"$V"-0*.patch | grep -vF "$ident" | sort -u)
if [ -z "$others" ]; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
	echo "FAIL: identities in the series other than $ident:"
	echo "$others" | sed 's/^/    /'
fi
# every mail's To: and Cc: are lists of addresses a mailer takes
if python3 - "$out"/v"$V"-0*.patch <<'PY'
import email, email.policy, sys
from email.utils import getaddresses
bad = 0
for path in sys.argv[1:]:
    with open(path, 'rb') as f:
        msg = email.message_from_binary_file(f, policy=email.policy.compat32)
    fields = [v for k in ('To', 'Cc') for v in msg.get_all(k, [])]
    addrs = getaddresses(fields)
    if not addrs or any('@' not in a or '\\' in a or ' ' in a for _, a in addrs):
        print('FAIL: To/Cc of', path.rsplit('/', 1)[-1], 'are not a list of addresses:', fields[:1])
        bad += 1
sys.exit(bad != 0)
PY
then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
fi
# every file the series adds has the UALink entry among its maintainers
uncovered=0
for f in $(g diff --name-only --diff-filter=A ualink-base ualink-posted); do
	# (the whole output first: grep -q would stop reading early, and
	# get_maintainer.pl's SIGPIPE would fail the pipeline)
	sections=$(cd "$TREE" && "${gm[@]}" --no-l --no-m --no-r --no-s --sections -f "$f" 2>/dev/null)
	grep -qx 'AMD UALINK SUPPORT IN AMDGPU' <<< "$sections" ||
		{ echo "FAIL: get_maintainer.pl: $f is in no UALink MAINTAINERS entry"; uncovered=$((uncovered + 1)); }
done
if [ "$uncovered" -eq 0 ] && grep -q 'amd-gfx@lists.freedesktop.org' "$out/.cc"; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
	echo "FAIL: get_maintainer.pl: $uncovered added files uncovered, or amd-gfx not in Cc"
fi
echo "format-patch --check: $((n - 1)) patches: $pass checks passed, $fail failed"
echo "$pass $fail" > "$out/.counts"
[ "$fail" -eq 0 ]
