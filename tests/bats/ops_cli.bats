#!/usr/bin/env bats
# Operations CLI: --help of every command, usage errors (status 2), clear runtime errors
# (status 1) that leave nothing behind.  Needs no BPF object.

bats_require_minimum_version 1.5.0

setup_file() {
	export P="kr-ops-$$-cli"
}

setup() {
	load ops_helpers
	[ -x "$KR_BIN" ] || skip "no $KR_BIN"
}

teardown_file() {
	load ops_helpers
	kr_topo_down
}

@test "every operations command explains itself with --help" {
	for c in load unload apply status stats "ring stage" "ring migrate" "ring commit" \
		 "ring rollback" "ring status" "backend set" announce; do
		run -0 $KR_BIN $c --help
		assert_output --partial "Usage: keyrouter $c"
	done
}

@test "usage errors exit 2 and name what was expected" {
	run -2 $KR_BIN load
	assert_output --partial "expected one interface and -c CONFIG"
	run -2 $KR_BIN load eth0 -c x.json --mode turbo
	assert_output --partial "bad --mode 'turbo': expected native, generic or tc"
	run -2 $KR_BIN apply
	assert_output --partial "expected -c CONFIG"
	run -2 $KR_BIN ring migrate web --percent 100.5
	assert_output --partial "bad --percent '100.5': expected a number from 0 to 100"
	run -2 $KR_BIN ring migrate web --percent 5%
	assert_output --partial "bad --percent '5%'"
	run -2 $KR_BIN ring migrate
	assert_output --partial "expected one RING argument"
	run -2 $KR_BIN backend set 10.0.0.1:53 sideways
	assert_output --partial "bad state 'sideways': expected up, down or drain"
	run -2 $KR_BIN backend set 10.0.0.300 down
	assert_output --partial "bad address '10.0.0.300'"
	run -2 $KR_BIN status --watch=-1
	assert_output --partial "bad --watch"
	run -2 $KR_BIN announce
	assert_output --partial "expected -c CONFIG"
	run -2 $KR_BIN announce -c x.json --interval 0
	assert_output --partial "--interval: expected seconds 0.1 .. 60, not '0'"
	run -2 $KR_BIN announce -c x.json --min-up many
	assert_output --partial "--min-up: expected a number of backends, not 'many'"
	run -2 $KR_BIN announce --drain --undrain
	assert_output --partial "--drain or --undrain, not both"
	# a configuration that does not parse: exit 1 before anything runs
	run -1 $KR_BIN announce -c /nonexistent.json
	assert_output --partial "/nonexistent.json"
}

@test "load on a missing interface is a clear error and leaves no pins" {
	[ "$(id -u)" = 0 ] || skip "needs root"
	echo '{ "rings": [], "services": [] }' > "$BATS_TEST_TMPDIR/c.json"
	run -1 $KR_BIN load "$P-nope" -c "$BATS_TEST_TMPDIR/c.json" --instance "$P"
	assert_output --partial "no such interface '$P-nope'"
	[ ! -e "/sys/fs/bpf/keyrouter/$P" ]
}

@test "unload where nothing is loaded, apply/status on a missing instance: clear errors" {
	[ "$(id -u)" = 0 ] || skip "needs root"
	run -1 $KR_BIN unload lo
	assert_output --partial "keyrouter is not loaded on 'lo'"
	run -1 $KR_BIN status --instance "$P-none"
	assert_output --partial "instance '$P-none' is not loaded"
	run -1 $KR_BIN ring status --instance "$P-none"
	assert_output --partial "is not loaded"
	run -1 $KR_BIN backend set 10.0.0.1:53 down --instance "$P-none"
	assert_output --partial "is not loaded"
	run -1 $KR_BIN status --instance "bad/name"
	assert_output --partial "bad instance name 'bad/name'"
}

@test "an invalid config is refused before anything touches the kernel" {
	[ "$(id -u)" = 0 ] || skip "needs root"
	echo '{ "rings": [ { "name": "x", "bogus": 1 } ] }' > "$BATS_TEST_TMPDIR/bad.json"
	run -1 $KR_BIN load lo -c "$BATS_TEST_TMPDIR/bad.json" --instance "$P"
	assert_output --partial "bad.json"
	[ ! -e "/sys/fs/bpf/keyrouter/$P" ]
	run -1 $KR_BIN apply -c "$BATS_TEST_TMPDIR/bad.json" --instance "$P"
	assert_output --partial "bad.json"
}

@test "without privileges: a clear error" {
	[ "$(id -u)" = 0 ] || skip "needs root to drop privileges"
	command -v setpriv >/dev/null || skip "no setpriv"
	echo '{ "rings": [], "services": [] }' > "$BATS_TEST_TMPDIR/c.json"
	chmod 644 "$BATS_TEST_TMPDIR/c.json"
	chmod 755 "$BATS_TEST_TMPDIR"
	run -1 setpriv --reuid=65534 --regid=65534 --clear-groups $KR_BIN load lo \
		-c "$BATS_TEST_TMPDIR/c.json"
	assert_output --partial "needs root"
}
