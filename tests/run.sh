#!/bin/bash
# Runs every test of keyrouter and ends with one line "N passed, N failed".
#   C test programs in build/tests/ (TAP on stdout), then the bats files in tests/bats/.
# A program that crashes or exits non-zero without reporting a failure counts as one failure.
# TESTS=pattern runs only the programs / bats files whose name matches.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build}
pat=${TESTS:-}
log=$(mktemp -d /tmp/kr-test.XXXXXX)
trap 'rm -rf "$log"' EXIT
passed=0 failed=0 skipped=0

count() { # file -> updates counters; sets $f to its failures (no subshell: the
	  # counters must survive)
	local p s
	p=$(grep -cE '^ok ' "$1")
	s=$(grep -cE '^ok .*# ?(skip|SKIP)' "$1")
	f=$(grep -cE '^not ok ' "$1")
	passed=$((passed + p - s)); skipped=$((skipped + s)); failed=$((failed + f))
}

for t in "$OUT"/tests/*; do
	[ -x "$t" ] && [ -f "$t" ] || continue
	case "$t" in *.d) continue;; esac
	name=$(basename "$t")
	[ -n "$pat" ] && [[ "$name" != *$pat* ]] && continue
	echo "# == $name"
	"$t" 2>&1 | tee "$log/$name.tap" | grep -E '^(not ok|# )' | grep -v '^# ok' | awk 'NR <= 200'
	rc=${PIPESTATUS[0]}
	count "$log/$name.tap"
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "not ok - $name exited with status $rc"
		failed=$((failed + 1))
	fi
	echo "# $name: $(grep -cE '^ok ' "$log/$name.tap") ok, $f not ok"
done

if ls tests/bats/*.bats >/dev/null 2>&1; then
	for b in tests/bats/*.bats; do
		name=$(basename "$b" .bats)
		[ -n "$pat" ] && [[ "$name" != *$pat* ]] && continue
		echo "# == bats $name"
		bats --tap "$b" > "$log/bats-$name.tap" 2>&1
		rc=$?
		grep -E '^(not ok|#)' "$log/bats-$name.tap" | awk 'NR <= 200'
		count "$log/bats-$name.tap"
		if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
			echo "not ok - bats $name exited with status $rc"
			tail -20 "$log/bats-$name.tap"
			failed=$((failed + 1))
		fi
		echo "# bats $name: $(grep -cE '^ok ' "$log/bats-$name.tap") ok, $f not ok"
	done
fi

[ "$skipped" -gt 0 ] && echo "# $skipped skipped"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
