#!/usr/bin/env bats
# libFuzzer harnesses (tests/fuzz/fuzz_*.c, clang -fsanitize=fuzzer,address,undefined) as
# regression tests: each one runs every seed of tests/fuzz/corpus/<harness>/ (the inputs
# that once found a bug are among them), then fuzzes a few seconds more.  Any crash,
# sanitizer report, leak or broken property fails the test.  `make fuzz DURATION=...`
# runs them for longer (scripts/fuzz.sh).
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

setup_file() {
	cd "$BATS_TEST_DIRNAME/../.."
	export FZ=${OUT:-build}/libfuzzer
	mkdir -p "$FZ"
	make -s -j"$(nproc)" OUT="$FZ" FUZZ=1 fuzz-bins > "$FZ/build.log" 2>&1 ||
		sed 's/^/# /' "$FZ/build.log" >&3
}

setup() {
	cd "$BATS_TEST_DIRNAME/../.."
}

# fuzz HARNESS SECONDS
fuzz() {
	local h=fuzz_$1 n

	[ -x "$FZ/fuzz/$h" ] || fail "$FZ/fuzz/$h was not built (see $FZ/build.log)"
	n=$(ls tests/fuzz/corpus/$h | wc -l)
	[ "$n" -gt 0 ] || fail "no seeds in tests/fuzz/corpus/$h"
	mkdir -p "$BATS_TEST_TMPDIR/new"
	# The repository's seeds (read only: new inputs go to the temporary directory).
	run "$FZ/fuzz/$h" -max_total_time="$2" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$BATS_TEST_TMPDIR/" \
		"$BATS_TEST_TMPDIR/new" "tests/fuzz/corpus/$h"
	if [ "$status" != 0 ]; then
		# the finding first (a command's own usage messages can be many lines)
		echo "$output" | grep -E 'ERROR|SUMMARY|^ +#[0-9]+ |FUZZ_ASSERT|Test unit written' | head -60
		ls "$BATS_TEST_TMPDIR"/crash-* "$BATS_TEST_TMPDIR"/leak-* 2>/dev/null || true
		fail "$h found a problem (status $status)"
	fi
	echo "$output" | grep -qE 'INITED .* corp: [1-9]' || fail "the seeds were not loaded"
	echo "# $h: $(echo "$output" | sed -n 's/^stat::number_of_executed_units: //p') executions" >&3
}

@test "fuzz: JSON configuration loader (normalized form loads again, fixed point)" {
	fuzz config 4
}

@test "fuzz: backends file parser (+ ring build, image lookup = binary search)" {
	fuzz backends 4
}

@test "fuzz: socket address parser (Rust Display form round-trips)" {
	fuzz addr 3
}

@test "fuzz: key forms (tuple, dns, memcache, quic, payload rules, hex)" {
	fuzz keyform 3
}

@test "fuzz: the lookup command's key parsers (keys files, arguments, every key type)" {
	fuzz lookup 4
}

@test "fuzz: QUIC-LB codec (decode/encode permutation, lengths) and server configuration strings" {
	fuzz quic_lb 3
}

@test "fuzz: packet parser and every key extractor (userspace build; window past the load poisoned)" {
	fuzz packet 4
}
