#!/usr/bin/env bats
# The userspace unit tests (tests/unit/*.c) built with -fsanitize=address,undefined
# (`make OUT=build/asan SAN=1 san-tests`) and run with leak detection: any heap/stack
# overflow, use-after-free, leak or undefined behaviour aborts the program and fails here.
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

setup_file() {
	cd "$BATS_TEST_DIRNAME/../.."
	export ASAN_OUT=${OUT:-build}/asan
	# Incremental: only what changed since the last run is rebuilt.
	mkdir -p "$ASAN_OUT"
	make -s -j"$(nproc)" OUT="$ASAN_OUT" SAN=1 san-tests > "$ASAN_OUT/build.log" 2>&1 ||
		sed 's/^/# /' "$ASAN_OUT/build.log" >&3
}

setup() {
	cd "$BATS_TEST_DIRNAME/../.."
	export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=0:exitcode=86:strict_string_checks=1:detect_stack_use_after_return=1
	export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=87
}

unit_tests() {
	local s

	for s in tests/unit/*.c; do
		basename "$s" .c
	done
}

@test "every unit test is built with ASan and UBSan" {
	local t n=0

	for t in $(unit_tests); do
		[ -x "$ASAN_OUT/tests/$t" ] ||
			fail "$ASAN_OUT/tests/$t was not built (see $ASAN_OUT/build.log)"
		nm "$ASAN_OUT/tests/$t" | grep -q ' __asan_report_load' ||
			fail "$t: no ASan instrumentation"
		nm "$ASAN_OUT/tests/$t" | grep -q ' __ubsan_handle_' ||
			fail "$t: no UBSan instrumentation"
		n=$((n + 1))
	done
	[ "$n" -gt 0 ]
}

@test "the sanitizer build catches a heap overflow and a leak (the checks are live)" {
	local c=$BATS_TEST_TMPDIR/bug.c

	printf '#include <stdlib.h>\nint main(int c, char **v) { char *p = malloc(4); (void)v;\n'\
'if (c > 1) return p[c + 3]; p = 0; return 0; }\n' > "$c"
	${CC:-cc} -fsanitize=address,undefined -fno-sanitize-recover=all -g "$c" -o "$c.bin"
	run -86 "$c.bin" overflow
	assert_output --partial "heap-buffer-overflow"
	run -86 "$c.bin"
	assert_output --partial "detected memory leaks"
}

@test "unit tests pass under ASan + UBSan with leak detection" {
	local t bad=""

	for t in $(unit_tests); do
		if ! "$ASAN_OUT/tests/$t" > "$BATS_TEST_TMPDIR/$t.out" 2>&1; then
			bad="$bad $t"
			echo "# == $t (status $?)"
			grep -E -A30 '^not ok|ERROR: (Address|Leak)Sanitizer|runtime error' \
				"$BATS_TEST_TMPDIR/$t.out" | head -60
		elif grep -qE '^not ok|runtime error|Sanitizer' "$BATS_TEST_TMPDIR/$t.out"; then
			bad="$bad $t"
			grep -E '^not ok|runtime error|Sanitizer' "$BATS_TEST_TMPDIR/$t.out" | head
		fi
	done
	[ -z "$bad" ] || fail "failed under sanitizers:$bad"
}
