#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
"""Split the leaf results of a kunit.py report between our suites and the
anchors (other subsystems' suites that run beside ours, such as TTM's).

    ktap-split.py LOG ANCHOR-REGEX

Prints "P F S" of the top-level suites whose name matches ANCHOR-REGEX (a
crashed case counts as failed). A leaf is a case without subcases, or one
parameter of a parameterised case, as kunit.py counts them.
"""
import re
import sys

HEAD = re.compile(r'^(?:\[[0-9:]+\] )?=+ (\S.*?) =+$')
LEAF = re.compile(r'^(?:\[[0-9:]+\] )?\[(PASSED|FAILED|SKIPPED|CRASHED)\] ')
END = re.compile(r'^\[(PASSED|FAILED|SKIPPED|CRASHED)\] ')


def main():
    anchor = re.compile(sys.argv[2])
    stack = []
    count = {'PASSED': 0, 'FAILED': 0, 'SKIPPED': 0}
    with open(sys.argv[1], errors='replace') as log:
        for line in log:
            line = line.rstrip('\n')
            head = HEAD.match(line)
            if head:
                inner = head.group(1)
                if END.match(inner):
                    if stack:
                        stack.pop()
                else:
                    stack.append(re.sub(r'\s*\(\d+ subtests\)$', '',
                                        inner).strip())
                continue
            leaf = LEAF.match(line)
            if leaf and stack and anchor.fullmatch(stack[0]):
                status = leaf.group(1)
                count['FAILED' if status == 'CRASHED' else status] += 1
    print(count['PASSED'], count['FAILED'], count['SKIPPED'])


if __name__ == '__main__':
    main()
