#!/usr/bin/env bats
# The CLI commands under valgrind (memcheck): no invalid read/write, no use of
# uninitialised values, no definitely lost memory, on the success paths AND the error
# paths (bad files, bad options).  A memcheck error makes valgrind exit 99
# (--error-exitcode), which is never a status the tool uses itself.
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

setup() {
	cd "$BATS_TEST_DIRNAME/../.."
	K=${KEYROUTER:-./build/keyrouter}
	V=tests/vectors
	command -v valgrind >/dev/null || skip "valgrind is not installed (scripts/deps.sh)"
}

# vg STATUS ARGS...: runs `keyrouter ARGS` under memcheck; its status must be STATUS and
# memcheck must report nothing.
vg() {
	local want=$1

	shift
	run valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
		--show-leak-kinds=definite --log-file="$BATS_TEST_TMPDIR/vg.log" \
		"$K" "$@"
	if [ -s "$BATS_TEST_TMPDIR/vg.log" ] || [ "$status" = 99 ]; then
		cat "$BATS_TEST_TMPDIR/vg.log"
		fail "memcheck errors in: keyrouter $* (status $status)"
	fi
	[ "$status" = "$want" ] || fail "keyrouter $*: status $status, expected $want: $output"
}

# has CMD...: is this command registered in this build?
has() {
	"$K" "$@" --help >/dev/null 2>&1
}

@test "valgrind: ring dump / ring build (v1, v2, IPv6, collisions) and their errors" {
	vg 0 ring dump --backends $V/b_v1_10mixed.backends.txt --version v1
	vg 0 ring dump --backends $V/e_v2pm160_ipv6.backends.txt --version v2 --no-header
	vg 0 ring build --backends $V/f_v2pm16_collide.backends.txt --version v2 --point-multiple 16
	vg 1 ring dump --backends "$BATS_TEST_TMPDIR/missing.txt" --version v1
	printf '10.0.0.1:80 1\n10.0.0.1:80 2\n' > "$BATS_TEST_TMPDIR/dup.txt"
	vg 1 ring build --backends "$BATS_TEST_TMPDIR/dup.txt" --version v2
	printf '10.0.0.1:80 1\n[::1:80 1\n300.1.1.1:1 1\n' > "$BATS_TEST_TMPDIR/bad.txt"
	vg 1 ring build --backends "$BATS_TEST_TMPDIR/bad.txt" --version v2
	vg 2 ring dump --backends $V/a_v1_3x1.backends.txt --version v3
	vg 2 ring build --bogus
	vg 0 ring dump --help
}

@test "valgrind: lookup (binary search and kernel image) and its errors" {
	vg 0 lookup --backends $V/c_v2pm16_10mixed.backends.txt --version v2 --point-multiple 16 \
		--keys-file $V/c_v2pm16_10mixed.keys.txt
	vg 0 lookup --backends $V/e_v1_ipv6.backends.txt --version v1 --image --addr \
		--keys-file $V/e_v1_ipv6.keys.txt - 00 6b6579
	vg 2 lookup --backends $V/a_v1_3x1.backends.txt --version v1 zz
	vg 1 lookup --backends $V/a_v1_3x1.backends.txt --version v1 --keys-file "$BATS_TEST_TMPDIR/none"
	vg 2 lookup --version v1 00
	vg 0 lookup -c examples/keyrouter.json --service dns www.Example.COM. .
	vg 0 lookup -c examples/keyrouter.json --service memcache 'get user:42' user:43
	vg 0 lookup -c examples/keyrouter.json --service quic 0a0b0c0d0e0f1011
	vg 0 lookup -c examples/keyrouter.json --ring cache --key-type tuple 10.0.0.1:5353 '[2001:db8::1]:443'
	vg 0 lookup -c examples/keyrouter.json --service telemetry hex:00000001736b7c78
	vg 2 lookup -c examples/keyrouter.json --service dns 'a..b'
	vg 1 lookup -c examples/keyrouter.json --service nope x
	# keyed hash (secret file read, never printed)
	printf '00112233445566778899aabbccddeeff\n' > "$BATS_TEST_TMPDIR/hash.key"
	chmod 600 "$BATS_TEST_TMPDIR/hash.key"
	sed "s|^{|{ \"hash\": { \"function\": \"siphash13\", \"secret_file\": \"$BATS_TEST_TMPDIR/hash.key\" },|" \
		examples/keyrouter.json > "$BATS_TEST_TMPDIR/keyed.json"
	vg 0 lookup -c "$BATS_TEST_TMPDIR/keyed.json" --service dns www.Example.COM.
	vg 0 config show -c "$BATS_TEST_TMPDIR/keyed.json"
	chmod 644 "$BATS_TEST_TMPDIR/hash.key"
	vg 1 config check -c "$BATS_TEST_TMPDIR/keyed.json"
}

@test "valgrind: config check / show, valid and invalid" {
	vg 0 config check -c examples/keyrouter.json
	vg 0 config show -c examples/keyrouter.json
	printf '{ "rings": [ { "name": "r", "format": "v9", "backends": [ { "address": "1.2.3.4" } ] } ],\n'\
'  "services": [ { "name": "s", "vip": "x", "port": 70000, "ring": "nope", "key": { "type": "dns" } } ] }\n' \
		> "$BATS_TEST_TMPDIR/bad.json"
	vg 1 config check -c "$BATS_TEST_TMPDIR/bad.json"
	printf '{ "rings": [ { "name": ' > "$BATS_TEST_TMPDIR/trunc.json"
	vg 1 config show -c "$BATS_TEST_TMPDIR/trunc.json"
	vg 1 config check -c "$BATS_TEST_TMPDIR/missing.json"
	vg 2 config check
}

@test "valgrind: analyze / diff" {
	has analyze || skip "no analyze command in this build"
	vg 0 analyze --backends $V/b_v1_10mixed.backends.txt --version v1
	vg 0 analyze --backends $V/f_v2pm160_collide.backends.txt --version v2 --json --all
	vg 0 analyze -c examples/keyrouter.json --ring cache
	vg 1 analyze -c examples/keyrouter.json --ring nope
	has diff || skip "no diff command in this build"
	vg 0 diff --version v2 --old-backends $V/c_v2pm16_10mixed.backends.txt \
		--new-backends $V/b_v1_10mixed.backends.txt --point-multiple 16
	vg 0 diff --backends $V/b_v1_10mixed.backends.txt --old-version v1 --new-version v2 \
		--new-point-multiple 16 --json
	vg 0 diff -c examples/keyrouter.json --old-ring dns --new-ring quic --top 0
	vg 2 diff --version v2 --old-backends $V/a_v1_3x1.backends.txt
}

@test "valgrind: plan" {
	has plan || skip "no plan command in this build"
	vg 0 plan --servers 10 --weights 1,2 --target-cv 0.05 --kmax 2000 --point-budget 200000
	vg 0 plan --backends $V/b_v1_10mixed.backends.txt --target-max-over-mean 1.2 --no-measure --json
	vg 2 plan --servers 10
	vg 2 plan --bogus
}
