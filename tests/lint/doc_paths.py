#!/usr/bin/env python3
"""Paths of the repository that the documentation names must exist.

Usage: doc_paths.py [--comments] FILE...  (run from the top of the repository)
With --comments (C sources, shell, Makefile) only the comments are read: a comment that
names a file the tree no longer has misleads as much as a document does.
Every word that starts with a top-level folder of the repository (tests/, scripts/, docs/,
user/, include/, bpf/, dist/, man/, examples/, debian/, vmlinux/) and is not part of a
longer path (/sys/fs/bpf/..., build/tests/...) is checked: the file or folder must exist.
`user/core/addr.{c,h}` and `user/core/analytics.[ch]` are checked as their first
alternative; a path followed by '<' (`user/cli/cmd_<name>.c`) or '*' is a pattern, not
checked.  Prints "file:line: path" for each missing one and exits 1 if there is any.
"""
import os
import re
import sys

TOP = r"(?:tests|scripts|docs|user|include|bpf|dist|man|examples|debian|vmlinux)"
PATH = re.compile(r"(?<![\w/.@$~-])(" + TOP + r"/[\w./@-]*)(\{[^}]*\}|\[[^\]]*\]|[<*])?([\w./-]*)")

def comment_lines(f):
    """(line number, comment text of that line) of a C file (/* */ and //), or of a
    shell/Makefile/Python file (# to the end of the line, outside quotes)."""
    text = open(f, encoding="utf-8", errors="replace").read().split("\n")
    c_like = f.endswith((".c", ".h"))
    in_block = False
    for n, line in enumerate(text, 1):
        out, i, q = [], 0, None
        while i < len(line):
            ch = line[i]
            if in_block:
                end = line.find("*/", i)
                if end < 0:
                    out.append(line[i:])
                    break
                out.append(line[i:end])
                in_block, i = False, end + 2
                continue
            if q:
                if ch == "\\":
                    i += 2
                    continue
                if ch == q:
                    q = None
                i += 1
                continue
            if ch in "\"'":
                q = ch
            elif c_like and line.startswith("/*", i):
                in_block, i = True, i + 2
                continue
            elif c_like and line.startswith("//", i):
                out.append(line[i + 2:])
                break
            elif not c_like and ch == "#":
                out.append(line[i + 1:])
                break
            i += 1
        if out:
            yield n, " ".join(out)

def main(args):
    bad = 0
    comments = args[:1] == ["--comments"]
    files = args[1:] if comments else args
    for f in files:
        lines = comment_lines(f) if comments else \
            enumerate(open(f, encoding="utf-8", errors="replace"), 1)
        for n, line in lines:
            for m in PATH.finditer(line):
                path, suffix = m.group(1), m.group(2) or ""
                if suffix in ("<", "*"):
                    continue
                if suffix.startswith("{"):
                    path += suffix[1:-1].split(",")[0]
                elif suffix.startswith("["):
                    path += suffix[1]
                if suffix:
                    path += m.group(3)
                path = path.rstrip(".")
                if path and not os.path.exists(path):
                    print("%s:%d: %s" % (f, n, path))
                    bad += 1
    return 1 if bad else 0

sys.exit(main(sys.argv[1:]))
