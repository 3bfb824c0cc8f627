#!/usr/bin/env bats
# The layers (docs/design.md): only the command-line layer prints.  The library archives
# must not call any stdio output function nor name stdout/stderr; their diagnostics go
# through log.h's handler (installed by user/cli/output.c) and their results are returned.
# Checked on the built objects (what the compiler emitted, so printf turned into puts or
# fwrite counts too, and comments do not).
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

setup() {
	cd "$BATS_TEST_DIRNAME/../.."
	OUTD=${OUT:-build}
}

PRINTERS='printf|fprintf|vprintf|vfprintf|dprintf|vdprintf|puts|fputs|putchar|putc|fputc|perror|fwrite|putchar_unlocked|fputc_unlocked|fputs_unlocked|fwrite_unlocked|__printf_chk|__fprintf_chk|__vprintf_chk|__vfprintf_chk|__dprintf_chk|stdout|stderr'

@test "only user/cli prints: libkrcore.a and libkrkernel.a call no printf/fprintf/puts/fputs/putchar/perror/vprintf" {
	for lib in libkrcore.a libkrkernel.a; do
		[ -f "$OUTD/$lib" ] || fail "no $OUTD/$lib (run make)"
		run -0 nm -A -u "$OUTD/$lib"
		[ "${#lines[@]}" -gt 10 ] || fail "nm listed nothing for $lib"
		run -1 grep -E " U ($PRINTERS)\$" <<< "$output"
	done
}

@test "the check sees a printing call (it would fail on one)" {
	# the command library prints, so the same check finds its calls
	run -0 nm -A -u "$OUTD/libkrcli.a"
	run -0 grep -E " U ($PRINTERS)\$" <<< "$output"
}
