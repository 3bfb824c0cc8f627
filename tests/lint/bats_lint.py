#!/usr/bin/env python3
"""Lint of the bats files: checks that cannot fail.

Bats runs a test with `set -e`, which ignores the status of some commands.  Flagged:
  bang      `! cmd` on a line that is not the last command of a test or function:
            its status never fails the test (bash's errexit ignores `!`).
  and       a line of checks joined by `&&` (`[ a ] && [ b ]`, `[[ x ]] && grep -q y f`)
            that is not the last command: errexit ignores a failing `&&` list, so
            none of them can fail the test.
  or        `[ ... ] || echo ...` (or printf, true, `:`): the failing check is only
            printed, never fails the test.
  run       `run cmd` (no -N status, no `!`) with no status check before the next `run`
            or the end of the block: `$status`, assert_success, assert_failure,
            assert_equal ... $status, or `(( status ...))`.
  runbang   `run !cmd` (no space): a command named `!cmd`, not a negated check.
  loopi     `run -N` or `run !` inside a loop over `$i`: bats 1.8 checks run's flags with
            bats_version_lt, which sets a non-local `i` (0..2), so the loop's `$i` changes
            under it (a check after it then tests the wrong value): name the variable
            otherwise.
  wait      a bare `wait`: under BATS_TEST_TIMEOUT (tests/run.sh sets it) bats runs a
            watchdog in the background of the test, so `wait` with no job waits for it
            and the test hangs until its timeout: wait for the jobs by pid.
A line may opt out with a trailing comment `# lint: ok (reason)`.
Usage: bats_lint.py FILE... ; prints "file:line: rule: text" and exits 1 on findings.
"""
import re
import sys

START = re.compile(r'^(@test\s+.*\{|[A-Za-z_][A-Za-z0-9_:-]*\s*\(\)\s*\{)\s*$')
STATUS = re.compile(r'\$status\b|\$\{status\}|assert_success|assert_failure|\bstatus\s*[!=<>-]|'
                    r'\(\(\s*status')
CHECK = re.compile(r'^(\[\[?\s.*\]\]?|test\s.*|grep\s+-[a-zA-Z]*q.*|cmp\s.*|diff\s.*)$')
SWALLOW = re.compile(r'^(\{\s*)?(echo|printf|true|:)(\s|;|$)(?!.*\b(return|exit|fail|false)\b)')
RUN = re.compile(r'^\s*run(\s+--separate-stderr)?\s+(?!-[0-9]|!|--keep)(.*)$')


def split_unquoted(text, sep):
    """text split at sep outside single and double quotes."""
    parts, cur, q, i = [], '', None, 0
    while i < len(text):
        c = text[i]
        if q:
            if c == '\\' and q == '"' and i + 1 < len(text):
                cur += text[i:i + 2]
                i += 2
                continue
            if c == q:
                q = None
        elif c in '"\'':
            q = c
        elif text.startswith(sep, i):
            parts.append(cur)
            cur, i = '', i + len(sep)
            continue
        cur += c
        i += 1
    return parts + [cur]


def logical_lines(lines, lo, hi):
    """(first line number, text) of each command line in [lo, hi), continuations joined,
    comments, blank lines and here-documents skipped."""
    out, i = [], lo
    while i < hi:
        raw = lines[i]
        s = raw.strip()
        if not s or s.startswith('#'):
            i += 1
            continue
        first, text = i, s
        while i + 1 < hi and (text.endswith('\\') or text.endswith('||') or
                              text.endswith('&&') or text.endswith('|')):
            i += 1
            text = (text[:-1] if text.endswith('\\') else text) + ' ' + lines[i].strip()
        m = re.search(r'<<-?\s*[\'"]?([A-Za-z_]+)[\'"]?', text)
        out.append((first, text))
        i += 1
        if m and not text.lstrip().startswith('#'):
            tag = m.group(1)
            while i < hi and lines[i].strip() != tag:
                i += 1
            i += 1
    return out


def blocks(lines):
    """(kind, start index, end index) of each test or function body (closing `}` at column 0)."""
    i, n = 0, len(lines)
    while i < n:
        if START.match(lines[i]):
            j = i + 1
            while j < n and not lines[j].startswith('}'):
                j += 1
            yield ('test' if lines[i].startswith('@test') else 'function', i + 1, j)
            i = j
        i += 1


def lint(path):
    lines = open(path).read().split('\n')
    found = []
    for kind, lo, hi in blocks(lines):
        cmds = logical_lines(lines, lo, hi)
        last = cmds[-1][0] if cmds else -1
        pending = None          # (line, text) of a `run` without a status check yet
        loops = []              # the variables of the enclosing for loops
        for ln, text in cmds:
            m = re.match(r'^for\s+([A-Za-z_]\w*)\s+in\b|^for\s*\(\(\s*([A-Za-z_]\w*)\s*=', text)
            if m and not re.search(r'(;|\bdo)\s*done\b', text) and not text.endswith(':'):
                loops.append(m.group(1) or m.group(2))
            elif re.match(r'^done\b', text) and loops:
                loops.pop()
            if re.match(r'^run\s+(-[0-9]|!\s)', text) and 'i' in loops and 'lint: ok' not in text:
                found.append((ln, 'loopi', text))
            if 'lint: ok' in text:
                if RUN.match(text):
                    pending = None
                continue
            body = text
            if body.startswith('! ') and ln != last and '||' not in body:
                found.append((ln, 'bang', text))
            ands = split_unquoted(body, '&&')
            if len(ands) > 1 and len(split_unquoted(body, '||')) == 1 and ln != last and \
                    all(CHECK.match(part.strip()) for part in ands):
                found.append((ln, 'and', text))
            ors = split_unquoted(body, '||')
            if len(ors) == 2 and CHECK.match(ors[0].strip()) and SWALLOW.match(ors[1].strip()):
                found.append((ln, 'or', text))
            if re.match(r'^wait\s*(;|$)', body):
                found.append((ln, 'wait', text))
            if re.match(r'^run\s+!\S', body):
                found.append((ln, 'runbang', text))
            if RUN.match(text):
                if pending:
                    found.append((pending[0], 'run', pending[1]))
                pending = (ln, text)
                continue
            if pending and STATUS.search(text):
                pending = None
        if pending:
            found.append((pending[0], 'run', pending[1]))
    return [(path, ln + 1, rule, text) for ln, rule, text in found]


def main():
    bad = []
    for p in sys.argv[1:]:
        bad += lint(p)
    for path, ln, rule, text in bad:
        print('%s:%d: %s: %s' % (path, ln, rule, text))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
