#!/usr/bin/env python3
"""Paths of the repository that the documentation names must exist.

Usage: doc_paths.py FILE...  (run from the top of the repository)
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

def main(files):
    bad = 0
    for f in files:
        for n, line in enumerate(open(f, encoding="utf-8", errors="replace"), 1):
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
