#!/bin/bash
# make bench: every benchmark program in build/bench/ and every script in scripts/bench.d/,
# in name order.  Each prints its own figures and the ratios against the baseline it
# measures in the same run, and the load average before and after it (the machine may be
# shared: compare only ratios of one run).  Nothing here asserts a time.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build}
status=0
for b in "$OUT"/bench/* scripts/bench.d/*.sh; do
	[ -x "$b" ] && [ -f "$b" ] || continue
	case "$b" in *.d) continue;; esac
	echo "=== $(basename "$b")"
	"$b"
	rc=$?
	[ "$rc" = 0 ] || { echo "bench $(basename "$b") failed (status $rc)"; status=1; }
	echo
done
exit $status
