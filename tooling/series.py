#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
"""Build the series' history in the prepared tree (called by prepare-tree.sh).

    series.py REPO TREE

patches/series lists the commits in order. A line is either

  NNNN-name.patch   an edit to existing kernel files, one commit
  @unit NAME        one commit of this repository's own files, described by
                    patches/units/NAME:

                      Subject: <the commit's subject>
                      <blank line>
                      <the commit message's body>
                      Files:
                      <paths or globs of owned files, one a line>
                      Patches:
                      <NNNN-name.patch files applied in the same commit>

                    (the Patches: part is optional).

Every owned file belongs to exactly one unit. A unit's commit adds its files
and brings the files that grow with the series up to date: an owned
Makefile names only the objects whose sources are in the tree so far, the
owned Kconfig has only the symbols that something in the tree uses, the
.kunitconfig only those symbols, and an #include of an owned file that is
not in the tree yet is left out (with an #if block left empty by that).
After the last unit every owned file is exactly the repository's: this is
checked, so that what is tested is what the last commit holds.

The commits are made by a neutral identity that never reaches a patch
(tooling/format-patch.sh commits the series again as whoever posts it).
Prints the new head's id. Fails, naming the patch and the base, when a
patch does not apply.
"""

import fnmatch
import os
import re
import subprocess
import sys

OWNED = ['drivers/gpu/drm/amd/amdgpu/ualink',
         'include/uapi/drm/amdgpu_ualink_vpod.h',
         'Documentation/gpu/amdgpu/ualink.rst',
         'Documentation/ABI/testing/sysfs-driver-amdgpu-ualink']

IDENT = {
    'GIT_AUTHOR_NAME': 'UALink prepare-tree',
    'GIT_AUTHOR_EMAIL': 'prepare-tree@ualink.invalid',
    'GIT_COMMITTER_NAME': 'UALink prepare-tree',
    'GIT_COMMITTER_EMAIL': 'prepare-tree@ualink.invalid',
    'GIT_AUTHOR_DATE': '2026-01-01T00:00:00Z',
    'GIT_COMMITTER_DATE': '2026-01-01T00:00:00Z',
}


def die(msg):
    sys.stderr.write('prepare-tree: error: %s\n' % msg)
    sys.exit(1)


class Git:
    def __init__(self, tree, index):
        self.tree = tree
        self.env = dict(os.environ, GIT_INDEX_FILE=index, **IDENT)

    def run(self, *args, data=None, check=True, work_tree=None):
        cmd = ['git', '-C', self.tree]
        if work_tree:
            cmd += ['--work-tree', work_tree]
        p = subprocess.run(cmd + list(args), input=data, env=self.env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if check and p.returncode:
            die('git %s: %s' % (' '.join(args), p.stderr.decode().strip()))
        return p

    def out(self, *args, data=None):
        return self.run(*args, data=data).stdout.decode().strip()


def owned_files(repo):
    p = subprocess.run(['git', '-C', repo, 'ls-files', '-z', '--cached',
                        '--others', '--exclude-standard', '--'] + OWNED,
                       stdout=subprocess.PIPE, check=True)
    return sorted(f for f in p.stdout.decode().split('\0')
                  if f and os.path.exists(os.path.join(repo, f)))


def parse_unit(path):
    """(subject, body, file patterns, patches) of patches/units/NAME."""
    text = open(path).read()
    m = re.match(r'Subject: (.+)\n\n', text)
    if not m:
        die('%s: must begin with "Subject: ..." and a blank line' % path)
    rest = text[m.end():]
    if '\nFiles:\n' not in '\n' + rest:
        die('%s: has no "Files:" section' % path)
    body, _, lists = ('\n' + rest).partition('\nFiles:\n')
    files, _, patches = lists.partition('\nPatches:\n')
    clean = lambda s: [l.strip() for l in s.splitlines()
                       if l.strip() and not l.startswith('#')]
    return m.group(1), body.strip('\n'), clean(files), clean(patches)


# --- files that grow with the series ------------------------------------

def makefile_filter(path, text, present):
    """Keep only the objects whose sources are in the tree."""
    d = os.path.dirname(path)
    lines = text.split('\n')
    # logical lines: [first, last] physical indices
    logical, i = [], 0
    while i < len(lines):
        j = i
        while lines[j].endswith('\\') and j + 1 < len(lines):
            j += 1
        logical.append((i, j))
        i = j + 1

    def src(obj):
        return os.path.join(d, obj[:-2] + '.c')

    # composites: name-y / name-$(CONFIG_...) lists, resolved until stable
    comp = {}
    assign = re.compile(r'^([A-Za-z0-9_]+)-(y|\$\(CONFIG_[A-Za-z0-9_]+\))\s*[:+]?=')
    for a, b in logical:
        m = assign.match(lines[a])
        if m and m.group(1) != 'obj':
            toks = ' '.join(lines[a:b + 1]).replace('\\', ' ').split('=', 1)[1].split()
            comp.setdefault(m.group(1), []).extend(toks)

    def alive(tok):
        if tok.endswith('/'):
            return os.path.join(d, tok, 'Makefile') in present
        if not tok.endswith('.o'):
            return True
        if src(tok) in present:
            return True
        name = tok[:-2]
        return name in comp and any(alive(t) for t in comp[name])

    keep = [True] * len(lines)
    for a, b in logical:
        first = lines[a]
        m = assign.match(first)
        c = re.match(r'^CFLAGS_([A-Za-z0-9_]+\.o)\s*:?=', first)
        if c:
            if not alive(c.group(1)):
                keep[a:b + 1] = [False] * (b - a + 1)
            continue
        if not m:
            continue
        # one token per physical line after the first, or all on one line
        dead_all = True
        for k in range(a, b + 1):
            part = lines[k].split('=', 1)[1] if k == a else lines[k]
            toks = part.replace('\\', ' ').split()
            if toks and not all(alive(t) for t in toks):
                if k == a:
                    # tokens on the first line: drop the whole assignment
                    # only if none of them lives
                    if not any(alive(t) for t in toks):
                        continue
                    die('%s: mixed dead and live objects on one line' % path)
                keep[k] = False
            elif toks:
                dead_all = False
        if dead_all:
            keep[a:b + 1] = [False] * (b - a + 1)
    return drop_lines(lines, keep, '#')


def drop_lines(lines, keep, comment):
    """Drop lines not kept, the comment block right above a dropped block,
    runs of blank lines left behind, and a trailing backslash left on the
    last kept line of a list."""
    n = len(lines)
    for i in range(n):
        if not keep[i] and (i == 0 or keep[i - 1]):
            j = i - 1
            while j >= 0 and keep[j] and lines[j].startswith(comment):
                j -= 1
            # a comment that opens the file (its header) stays
            if j >= 0:
                for k in range(j + 1, i):
                    keep[k] = False
    out = []
    for i, l in enumerate(lines):
        if not keep[i]:
            continue
        if l == '' and out and out[-1] == '':
            continue
        out.append(l)
    for i in range(len(out)):
        if out[i].endswith('\\') and (i + 1 == len(out) or
                                      not out[i + 1].startswith('\t') or
                                      out[i + 1].strip() == ''):
            out[i] = out[i].rstrip('\\').rstrip()
    while len(out) > 1 and out[-1] == '' and out[-2] == '':
        out.pop()
    return '\n'.join(out)


def kconfig_filter(text, used):
    """Keep the config blocks whose symbol something in the tree uses."""
    lines = text.split('\n')
    keep = [True] * len(lines)
    i = 0
    while i < len(lines):
        m = re.match(r'^config ([A-Za-z0-9_]+)$', lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not re.match(r'^(config|menu|endmenu|if|endif|source) ', lines[j] + ' '):
            j += 1
        # the block's trailing blank lines are the separator
        e = j
        while e > i + 1 and lines[e - 1] == '':
            e -= 1
        if m.group(1) not in used:
            keep[i:e] = [False] * (e - i)
        i = j
    return drop_lines(lines, keep, '#')


def kunitconfig_filter(text, defined):
    out = []
    for l in text.split('\n'):
        m = re.match(r'^CONFIG_([A-Za-z0-9_]+)=', l)
        if m and m.group(1).startswith('DRM_AMDGPU_UALINK') and m.group(1) not in defined:
            continue
        out.append(l)
    return '\n'.join(out)


def c_filter(path, text, present, owned):
    """Leave out #includes of owned .c files not in the tree yet (KUnit
    suites included at the end of the file they test); a missing header
    is an error the build reports, not something to hide."""
    d = os.path.dirname(path)
    lines = text.split('\n')
    keep = [True] * len(lines)
    for i, l in enumerate(lines):
        m = re.match(r'^#include "([^"]+)"', l)
        if m:
            p = os.path.normpath(os.path.join(d, m.group(1)))
            if p.endswith('.c') and p in owned and p not in present:
                keep[i] = False
    # an #if block whose every line was left out goes too
    stack = []
    for i, l in enumerate(lines):
        if re.match(r'^#\s*if', l):
            stack.append(i)
        elif re.match(r'^#\s*endif', l) and stack:
            a = stack.pop()
            inner = range(a + 1, i)
            if inner and not any(keep[k] and lines[k].strip() for k in inner) and \
               any(not keep[k] for k in inner):
                keep[a] = keep[i] = False
    return drop_lines(lines, keep, '//')


def configs_used(texts):
    used = set()
    for t in texts:
        used |= set(re.findall(r'CONFIG_([A-Za-z0-9_]+)', t))
        # Kconfig lines of non-owned files (patches): select/depends on
        used |= set(re.findall(r'(?:select|depends on|imply)\s+([A-Z0-9_]+)', t))
    return used


def contents(repo, owned, present, patch_texts):
    """The content of each present owned file at this point of the series."""
    final = {f: open(os.path.join(repo, f), encoding='utf-8', errors='surrogateescape').read()
             for f in present}
    cur = {}
    for f, t in final.items():
        base = os.path.basename(f)
        if base == 'Makefile':
            cur[f] = makefile_filter(f, t, present)
        elif f.endswith(('.c', '.h')):
            cur[f] = c_filter(f, t, present, owned)
        else:
            cur[f] = t
    kconfigs = [f for f in present if os.path.basename(f) == 'Kconfig']
    used = configs_used([t for f, t in cur.items()
                         if os.path.basename(f) not in ('Kconfig', '.kunitconfig')] +
                        patch_texts)
    # a kept block keeps what it selects or depends on, until stable
    while True:
        kept = {f: kconfig_filter(final[f], used) for f in kconfigs}
        more = configs_used(kept.values()) - used
        more = {s for s in more if s.startswith('DRM_AMDGPU_UALINK')}
        if not more:
            break
        used |= more
    cur.update(kept)
    defined = set()
    for t in kept.values():
        defined |= set(re.findall(r'^config ([A-Za-z0-9_]+)$', t, re.M))
    for f in present:
        if os.path.basename(f) == '.kunitconfig':
            cur[f] = kunitconfig_filter(final[f], defined)
    return cur, final


def main():
    repo, tree = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    git = Git(tree, os.path.join(tree, '.git', 'ualink-scratch-index'))
    series = os.path.join(repo, 'patches', 'series')
    owned = owned_files(repo)
    owned_set = set(owned)
    base_version = open(os.path.join(tree, '.git', 'ualink-base-version')).read().split()[0]

    entries = []
    for l in open(series):
        l = l.split('#', 1)[0].strip()
        if not l:
            continue
        if l.startswith('@unit '):
            name = l.split()[1]
            p = os.path.join(repo, 'patches', 'units', name)
            if not os.path.isfile(p):
                die('patches/series names unit %s, which has no patches/units/%s' % (name, name))
            entries.append(('unit', name, parse_unit(p)))
        elif l.startswith('@'):
            die('patches/series: unknown line "%s"' % l)
        else:
            entries.append(('patch', l, None))

    # every owned file in exactly one unit
    where = {}
    for kind, name, u in entries:
        if kind != 'unit':
            continue
        for pat in u[2]:
            hits = [f for f in owned if fnmatch.fnmatchcase(f, pat)]
            if not hits:
                die('unit %s: "%s" names no file of the repository' % (name, pat))
            for f in hits:
                if f in where:
                    die('%s is in unit %s and in unit %s' % (f, where[f], name))
                where[f] = name
    missing = [f for f in owned if f not in where]
    if missing:
        die('in no unit of patches/series: %s' % ' '.join(missing))
    used_units = {name for kind, name, _ in entries if kind == 'unit'}
    for n in os.listdir(os.path.join(repo, 'patches', 'units')):
        if n not in used_units:
            die('patches/units/%s is not in patches/series' % n)

    git.run('read-tree', 'ualink-base')
    head = git.out('rev-parse', 'ualink-base')
    present, patch_texts, written = set(), [], {}
    msgfile = os.path.join(tree, '.git', 'ualink-msg')
    patchfile = os.path.join(tree, '.git', 'ualink-patch')

    def apply(pname):
        f = os.path.join(repo, 'patches', pname)
        if not os.path.isfile(f):
            die('patches/series names %s, which does not exist' % pname)
        p = git.run('apply', '--cached', '--whitespace=nowarn', f, check=False)
        if p.returncode:
            sys.stderr.write(p.stderr.decode())
            die('patches/%s does not apply to Debian linux-source-7.3 %s. If Debian '
                'updated the package since the series was last rebased, refresh '
                'patches/ against this version.' % (pname, base_version))
        patch_texts.append(open(f, encoding='utf-8', errors='surrogateescape').read())
        return f

    def commit(msg):
        nonlocal head
        head = git.out('commit-tree', git.out('write-tree'), '-p', head,
                       data=msg.encode())

    for kind, name, u in entries:
        if kind == 'patch':
            f = apply(name)
            info = git.run('mailinfo', msgfile, patchfile,
                           data=open(f, 'rb').read()).stdout.decode()
            m = re.search(r'^Subject: (.*)$', info, re.M)
            if not m or not m.group(1):
                die('patches/%s has no Subject: line' % name)
            commit(m.group(1) + '\n\n' + open(msgfile).read().strip('\n') + '\n')
            continue
        subject, body, _, patches = u
        for pname in patches:
            apply(pname)
        present |= {f for f in owned if where[f] == name}
        cur, _ = contents(repo, owned_set, present, patch_texts)
        for f in sorted(cur):
            if written.get(f) == cur[f]:
                continue
            data = cur[f].encode('utf-8', errors='surrogateescape')
            sha = git.out('hash-object', '-w', '--stdin', data=data)
            mode = '100755' if os.access(os.path.join(repo, f), os.X_OK) else '100644'
            git.run('update-index', '--add', '--cacheinfo', '%s,%s,%s' % (mode, sha, f))
            written[f] = cur[f]
        commit(subject + '\n\n' + body + '\n')

    # what the last commit holds is exactly the repository's files
    cur, final = contents(repo, owned_set, present, patch_texts)
    for f in owned:
        if cur[f] != final[f]:
            die('%s at the end of the series differs from the repository: '
                'the growth rules changed it (check patches/units)' % f)
    print(head)


if __name__ == '__main__':
    main()
