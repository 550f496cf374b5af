#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
"""Keep the compiler/sparse diagnostics that our change is answerable for.

    added-lines.py TREE OWNED_PREFIX... < LOG

A diagnostic ("path:line[:col]: warning|error: ...") is kept when its file is
one we own (any line), or when its line was added by patches/ (the diff from
the tag ualink-base to HEAD in TREE). Diagnostics without a position are kept
when they name one of our files or directories by its tree path. Kept lines are printed; exit status 1 if any.
"""
import os
import re
import subprocess
import sys

tree = sys.argv[1]
owned = sys.argv[2:]

added = {}
diff = subprocess.run(['git', '-C', tree, 'diff', '-U0', 'ualink-base', 'HEAD'],
                      capture_output=True, text=True, check=True).stdout
cur = None
for line in diff.splitlines():
    if line.startswith('+++ '):
        cur = line[6:] if line.startswith('+++ b/') else None
    elif line.startswith('@@') and cur:
        m = re.match(r'@@ -\S+ \+(\d+)(?:,(\d+))? @@', line)
        start, count = int(m.group(1)), int(m.group(2) or 1)
        added.setdefault(cur, set()).update(range(start, start + count))


ROOT = os.path.realpath(tree) + os.sep


def relative(path):
    """Tree-relative path; kbuild prints sources with symlinks resolved."""
    if os.path.isabs(path):
        path = os.path.realpath(path)
        return path[len(ROOT):] if path.startswith(ROOT) else path
    return os.path.normpath(path)


def ours(path):
    return any(path == o or path.startswith(o.rstrip('/') + '/') for o in owned)


diag = re.compile(r'^(\S+?):(\d+):(?:\d+:)? (warning|error)\b')
kept = []
for line in sys.stdin:
    line = line.rstrip('\n')
    m = diag.match(line)
    if m:
        path = relative(m.group(1))
        if ours(path) or int(m.group(2)) in added.get(path, ()):
            kept.append(line)
    elif re.search(r'\b(warning|error|WARNING|ERROR)\b', line) and \
            any(o.rstrip('/') in line for o in owned):
        # the whole path: a bare directory name would also match the
        # build directory's, in lines of other files' diagnostics
        kept.append(line)

for line in kept:
    print(line)
sys.exit(1 if kept else 0)
