#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
"""The results of `make check`, one line per test, and what they add up to.

Each tier writes $RES/TIER.tests, one line per result:

    STATUS <tab> KIND <tab> ID <tab> NOTE

STATUS is pass, fail or skip; KIND is test (ours), anchor (another
subsystem's test that runs beside ours: TTM's KUnit suites, vgem's PRIME
program) or static (a build, checkpatch, kernel-doc...: reported on a
line of its own, never as a test). ID names the test wherever it runs:
kunit:SUITE.CASE[.PARAM], igt:PROGRAM.SUBTEST, pod:GUEST.CHECK, or a
tier's own check. A KUnit case that runs in two tiers (the core's suites
run on UML and in the debug guest) has one ID and counts once: failed if
it failed in either.

    results.py kunit JSON LIST [ANCHOR-RE]
        kunit.py's --json report checked against LIST (tests/expected/):
        a listed case that did not report (not built, renamed, or its
        kernel died first) fails by name, as does a case the list lacks.
        A line SUITE.* of LIST stands for every case of an anchor suite
        (at least one must report). Prints result lines.
    results.py expect LIST PREFIX REPORTED
        the same for other tiers: REPORTED holds "STATUS ID" lines
        (ID without PREFIX); prints result lines for LIST.
    results.py ids JSON
        the IDs a kunit.py --json report holds, one per line: a new
        list's starting point (read it before committing it).
    results.py cases LIST... -- SOURCE...
        the KUNIT_CASE names of SOURCEs against the case names of the
        lists: a case in the sources no list names, or one a list names
        that no source has, is printed; exit 1 if any.
    results.py summary RESDIR TIER...
        the per-tier table, the distinct counts and the last line
        "N passed, N failed, N skipped" over distinct tests (ours and the
        anchors); exit 1 on any failure, or a skip of ours.
"""
import json
import os
import re
import sys

WORST = {'pass': 0, 'skip': 1, 'fail': 2}


def read_list(path):
    """The IDs of an expected list, in order (comments and blanks dropped)."""
    ids = []
    with open(path) as f:
        for line in f:
            line = line.split('#', 1)[0].strip()
            if line:
                ids.append(line)
    return ids


def line(status, kind, ident, note=''):
    print('\t'.join((status, kind, ident, note.replace('\t', ' '))))


def warn(msg):
    print(msg, file=sys.stderr)


def kunit_leaves(group, prefix, out):
    """(id, status) of every leaf of a kunit_json group, in order."""
    for case in group.get('test_cases', []):
        out.append((prefix + case['name'], case['status']))
    for sub in group.get('sub_groups', []):
        kunit_leaves(sub, prefix + sub['name'] + '.', out)


def merge(reported, ident, status):
    if ident in reported and WORST[reported[ident]] >= WORST[status]:
        return
    reported[ident] = status


def judge(expected, reported, prefix, tier, anchor=None):
    """Result lines for LIST's IDs given {id: status}; unlisted ones fail."""
    seen = set()
    for want in expected:
        kind = 'anchor' if anchor and anchor.fullmatch(want.split('.')[0]) \
            else 'test'
        if want.endswith('.*'):
            suite = want[:-1]
            got = [i for i in reported if i.startswith(suite)]
            if not got:
                warn(f'{tier}: FAIL: no case of {want[:-2]} reported')
                line('fail', kind, prefix + want, 'no case reported')
            for ident in got:
                seen.add(ident)
                line(reported[ident], kind, prefix + ident)
            continue
        seen.add(want)
        status = reported.get(want)
        if status is None:
            warn(f'{tier}: FAIL: {want} did not report')
            line('fail', kind, prefix + want, 'did not report')
        else:
            if status != 'pass':
                warn(f'{tier}: {status.upper()}: {want}')
            line(status, kind, prefix + want)
    for ident in reported:
        if ident not in seen:
            warn(f'{tier}: FAIL: {ident} is not in the expected list')
            line('fail', 'test', prefix + ident, 'not in the expected list')


def cmd_kunit(args):
    path, lst = args[0], args[1]
    anchor = re.compile(args[2]) if len(args) > 2 else None
    tier = os.path.basename(lst).split('.')[0]
    status_of = {'PASS': 'pass', 'SKIP': 'skip'}
    reported = {}
    try:
        with open(path) as f:
            top = json.load(f)
        leaves = []
        kunit_leaves(top, '', leaves)
        for ident, status in leaves:
            merge(reported, ident, status_of.get(status, 'fail'))
    except (OSError, ValueError) as e:
        warn(f'{tier}: no KUnit report ({e}): every listed case fails')
    judge(read_list(lst), reported, 'kunit:', tier, anchor)


def cmd_expect(args):
    lst, prefix, path = args
    tier = os.path.basename(lst).split('.')[0]
    reported = {}
    with open(path) as f:
        for raw in f:
            parts = raw.rstrip('\n').split(' ', 1)
            if len(parts) == 2 and parts[0] in WORST:
                merge(reported, parts[1], parts[0])
    judge(read_list(lst), reported, prefix, tier)


def cmd_ids(args):
    with open(args[0]) as f:
        top = json.load(f)
    leaves = []
    kunit_leaves(top, '', leaves)
    for ident, _ in leaves:
        print(ident)


CASE = re.compile(r'\bKUNIT_CASE(?:_SLOW|_PARAM|_PARAM_ATTR|_ATTR)?\(\s*(\w+)')


def cmd_cases(args):
    sep = args.index('--')
    listed = set()
    for lst in args[:sep]:
        for ident in read_list(lst):
            parts = ident.split('.')
            if len(parts) > 1 and parts[1] != '*':
                listed.add(parts[1])
    in_src = set()
    for src in args[sep + 1:]:
        with open(src, errors='replace') as f:
            in_src.update(CASE.findall(f.read()))
    bad = 0
    for name in sorted(in_src - listed):
        print(f'KUNIT_CASE {name} is in the sources but in no expected list')
        bad = 1
    for name in sorted(listed - in_src):
        print(f'{name} is in an expected list but no KUNIT_CASE of the sources')
        bad = 1
    return bad


def cmd_summary(args):
    resdir, tiers = args[0], args[1:]
    merged = {}     # (kind, id) -> [status, set of tiers, note]
    table = []
    for tier in tiers:
        n = {'pass': 0, 'fail': 0, 'skip': 0}
        rows = []
        try:
            with open(os.path.join(resdir, tier + '.tests')) as f:
                rows = [r.rstrip('\n').split('\t') for r in f if r.strip()]
        except OSError:
            rows = [['fail', 'test', tier + ':reported', 'no results']]
        rc_path = os.path.join(resdir, tier + '.rc')
        rc = open(rc_path).read().strip() if os.path.exists(rc_path) else '0'
        if rc != '0' and not any(r[0] == 'fail' for r in rows):
            rows.append(['fail', 'test', tier + ':exit', 'exit ' + rc])
        kinds = {}
        for r in rows:
            status, kind, ident = r[0], r[1], r[2]
            note = r[3] if len(r) > 3 else ''
            n[status] += 1
            kinds[kind] = kinds.get(kind, 0) + 1
            m = merged.setdefault((kind, ident), [status, set(), note])
            if WORST[status] > WORST[m[0]]:
                m[0], m[2] = status, note
            m[1].add(tier)
        table.append((tier, n, kinds))
    print('== make check summary')
    print('   results as each tier ran them (a case run in two tiers is'
          ' in both):')
    for tier, n, kinds in table:
        what = ', '.join(f'{v} {k}' for k, v in sorted(kinds.items()))
        print(f'   {tier:<10} {n["pass"]:4d} passed, {n["fail"]} failed, '
              f'{n["skip"]} skipped  ({what})')
    count = {}
    for (kind, ident), (status, where, note) in merged.items():
        c = count.setdefault(kind, {'pass': 0, 'fail': 0, 'skip': 0})
        c[status] += 1
        if status != 'pass':
            note = f': {note}' if note else ''
            print(f'   {status.upper()}: {ident} '
                  f'({", ".join(sorted(where))}){note}')
    z = {'pass': 0, 'fail': 0, 'skip': 0}
    ours, anch, stat = (count.get(k, z) for k in ('test', 'anchor', 'static'))
    twice = sum(1 for (k, _), (_, w, _) in merged.items()
                if k == 'test' and len(w) > 1)
    print(f'   distinct tests of ours: {ours["pass"]} passed, '
          f'{ours["fail"]} failed, {ours["skip"]} skipped '
          f'({twice} of them run in two tiers, counted once)')
    print(f'   anchors (TTM\'s KUnit suites, vgem PRIME): {anch["pass"]} '
          f'passed, {anch["fail"]} failed, {anch["skip"]} skipped')
    print(f'static checks (builds, checkpatch, kernel-doc, Sphinx, '
          f'coccicheck, LLVM, expected lists, the series commit by '
          f'commit): {stat["pass"]} passed, '
          f'{stat["fail"]} failed')
    if ours['skip']:
        warn(f'make check: {ours["skip"]} of our tests skipped; '
             'a skip is not a pass')
    p = ours['pass'] + anch['pass']
    f = ours['fail'] + anch['fail']
    s = ours['skip'] + anch['skip']
    print(f'{p} passed, {f} failed, {s} skipped')
    return 1 if f or stat['fail'] or stat['skip'] or ours['skip'] else 0


def main():
    cmds = {'kunit': cmd_kunit, 'expect': cmd_expect, 'ids': cmd_ids,
            'cases': cmd_cases, 'summary': cmd_summary}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        sys.exit(__doc__)
    sys.exit(cmds[sys.argv[1]](sys.argv[2:]) or 0)


if __name__ == '__main__':
    main()
