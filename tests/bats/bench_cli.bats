#!/usr/bin/env bats
# The benchmarks' command line (tests/bench/bench_args.h): --help says what a benchmark
# measures and exits 0; an unknown option or a surplus argument is an error (status 2)
# before anything runs (no figure, no load average line: the run never started).
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

setup() {
	cd "$BATS_TEST_DIRNAME/../.."
	OUT=${OUT:-build}
}

benches() {
	local b
	for b in "$OUT"/bench/*; do
		[ -f "$b" ] && [ -x "$b" ] && echo "$b"
	done
	return 0
}

@test "make bench's programs are all built (9 or more)" {
	run -0 benches
	[ "${#lines[@]}" -ge 9 ]
}

@test "every benchmark's --help names it, says what it measures, and runs nothing" {
	local b n
	for b in $(benches); do
		n=$(basename "$b")
		run -0 --separate-stderr "$b" --help
		assert_line --index 0 --regexp "^usage: $n "
		[ "${#lines[@]}" -ge 3 ] || fail "$n --help: only ${#lines[@]} lines"
		refute_output --partial "load average"
		run -0 "$b" -h
		assert_line --index 0 --regexp "^usage: $n "
	done
}

@test "an unknown option or a surplus argument is an error, before the benchmark runs" {
	local b n
	for b in $(benches); do
		n=$(basename "$b")
		run -2 --separate-stderr "$b" --no-such-option
		assert_equal "$output" ""
		assert_equal "$stderr" "$n: unknown option '--no-such-option' (see $n --help)"
		run -2 --separate-stderr "$b" one two
		assert_equal "$output" ""
		# ring_build and ring_lookup take one argument (a backends file): 'two' is surplus
		[[ "$stderr" =~ ^$n:\ unexpected\ argument\ \'(one|two)\'\ \(see\ $n\ --help\)$ ]] ||
			fail "$n one two: '$stderr'"
	done
}
