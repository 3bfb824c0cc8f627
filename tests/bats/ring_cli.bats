#!/usr/bin/env bats
# `keyrouter ring dump|build` and `keyrouter lookup` against the ketama vectors (whole
# files diffed), and every error path: exit status AND message.
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

VECTORS="a_v1_3x1 b_v1_10mixed c_v2pm16_10mixed e_v1_ipv6 e_v2pm160_ipv6 f_v2pm160_collide f_v2pm16_collide"

setup() {
	cd "$BATS_TEST_DIRNAME/../.."
	K=${KEYROUTER:-./build/keyrouter}
	V=tests/vectors
	B=$BATS_TEST_TMPDIR/b.txt
}

# version flags of vector $1, from its continuum header
vflags() {
	local h
	h=$(grep -m1 'continuum dump, version:' "$V/$1.continuum.txt")
	case "$h" in
	*"version: v1"*) echo "--version v1" ;;
	*point_multiple=*) echo "--version v2 --point-multiple ${h##*point_multiple=}" ;;
	esac
}

@test "ring dump = every vector's continuum.txt (all points, count, digest)" {
	for n in $VECTORS; do
		run -0 $K ring dump --backends "$V/$n.backends.txt" $(vflags $n)
		diff <(grep -v '^#' <<<"$output") <(grep -v '^#' "$V/$n.continuum.txt")
		diff <(grep -E '^# (points after dedup|ring digest)' <<<"$output") \
		     <(grep -E '^# (points after dedup|ring digest)' "$V/$n.continuum.txt")
	done
}

@test "ring dump --no-header prints only points" {
	run -0 $K ring dump --no-header --backends "$V/a_v1_3x1.backends.txt" --version v1
	refute_output --partial '#'
	assert_line --index 0 --regexp '^0 [0-9a-f]{8} [0-2]$'
	assert_equal "${#lines[@]}" 480
}

@test "ring build: one line with points and digest of every vector" {
	for n in $VECTORS; do
		pts=$(sed -n 's/^# points after dedup: //p' "$V/$n.continuum.txt")
		dg=$(sed -n 's/^# ring digest:.* = //p' "$V/$n.continuum.txt")
		run -0 $K ring build --backends "$V/$n.backends.txt" $(vflags $n)
		assert_equal "${#lines[@]}" 1
		assert_output --partial "points $pts,"
		assert_output --partial "digest $dg,"
		assert_output --regexp 'build [0-9.]+ ms'
	done
}

@test "lookup --keys-file = every vector's keys.txt (7 columns, whole file)" {
	for n in $VECTORS; do
		run -0 $K lookup --backends "$V/$n.backends.txt" $(vflags $n) --keys-file "$V/$n.keys.txt"
		diff <(echo "$output") <(grep -v '^#' "$V/$n.keys.txt")
	done
}

@test "lookup --image (kernel image, bucket index) = keys.txt too" {
	for n in $VECTORS; do
		run -0 $K lookup --image --backends "$V/$n.backends.txt" $(vflags $n) \
			--keys-file "$V/$n.keys.txt"
		diff <(echo "$output") <(grep -v '^#' "$V/$n.keys.txt")
	done
}

@test "lookup with keys as arguments, '-' = empty key, --addr" {
	run -0 $K lookup --backends "$V/b_v1_10mixed.backends.txt" --version v1 6b65792d30 - 6B65792D31
	assert_line --index 0 "$(grep -m1 '^6b65792d30 ' "$V/b_v1_10mixed.keys.txt")"
	assert_line --index 1 "$(grep -m1 '^- ' "$V/b_v1_10mixed.keys.txt")"
	assert_line --index 2 "$(grep -m1 '^6b65792d31 ' "$V/b_v1_10mixed.keys.txt")"
	run -0 $K lookup --addr --backends "$V/b_v1_10mixed.backends.txt" --version v1 6b65792d30
	# backend 5 = line 6 = 10.0.0.6:443
	assert_output "6b65792d30 79eb8fec 2314 5 8 3 3 10.0.0.6:443"
}

@test "--help on every command" {
	for c in "ring dump" "ring build" "lookup"; do
		run -0 $K $c --help
		assert_line --index 0 --partial "Usage: keyrouter $c"
		assert_output --partial "--backends FILE"
		assert_output --partial "--point-multiple N"
	done
}

# ---- runtime errors: exit 1, message names file:line, value, what was expected ----------

@test "missing backends file" {
	run -1 $K ring dump --backends /nonexistent/b.txt --version v1
	assert_output "keyrouter: couldn't open backends file '/nonexistent/b.txt': No such file or directory"
}

@test "bad address" {
	printf '10.0.0.1:80 1\n10.0.0:80 1\n' > "$B"
	run -1 $K ring build --backends "$B" --version v1
	assert_output --partial "$B:2: bad address '10.0.0:80': '10.0.0' is not an IPv4 address"
	printf '# c\n\n[2001:db8::zz]:80 1\n' > "$B"
	run -1 $K ring build --backends "$B" --version v1
	assert_output --partial "$B:3: bad address '[2001:db8::zz]:80': '2001:db8::zz' is not an IPv6 address"
	printf '2001:db8::1:80 1\n' > "$B"
	run -1 $K ring build --backends "$B" --version v1
	assert_output --partial "$B:1: bad address '2001:db8::1:80': IPv6 addresses need brackets"
	printf '10.0.0.1 1\n' > "$B"
	run -1 $K ring build --backends "$B" --version v1
	assert_output --partial "$B:1: bad address '10.0.0.1': missing ':<port>'"
}

@test "bad port" {
	printf '10.0.0.1:70000 1\n' > "$B"
	run -1 $K ring dump --backends "$B" --version v1
	assert_output --partial "$B:1: bad port '70000' in '10.0.0.1:70000': expected a number 0..65535"
	printf '[::1]:http 1\n' > "$B"
	run -1 $K ring dump --backends "$B" --version v1
	assert_output --partial "$B:1: bad port 'http' in '[::1]:http'"
}

@test "bad weight: not a number, negative, over 32 bits; missing weight" {
	for w in x1 -1 4294967296 1.5; do
		printf '10.0.0.1:80 %s\n' "$w" > "$B"
		run -1 $K ring build --backends "$B" --version v1
		assert_output --partial "$B:1: bad weight '$w' for 10.0.0.1:80: expected an integer 0..4294967295"
	done
	printf '10.0.0.1:80\n' > "$B"
	run -1 $K ring build --backends "$B" --version v1
	assert_output --partial "$B:1: expected '<SocketAddr> <weight>'"
	printf '10.0.0.1:80 1 2\n' > "$B"
	run -1 $K ring build --backends "$B" --version v1
	assert_output --partial "$B:1: expected '<SocketAddr> <weight>'"
}

@test "weight x point_multiple overflow and ring too large name the cause" {
	printf '10.0.0.1:80 1\n10.0.0.2:80 4294967295\n' > "$B"
	run -1 $K ring build --backends "$B" --version v2 --point-multiple 16
	assert_output --partial "backend 1 (10.0.0.2:80): weight 4294967295 x point_multiple 16 = 68719476720 points, more than a ring may hold (268435456)"
	printf '10.0.0.1:80 1677722\n' > "$B"
	run -1 $K ring build --backends "$B" --version v1
	assert_output --partial "weight 1677722 x point_multiple 160 = 268435520 points"
	printf '10.0.0.1:80 134217728\n10.0.0.2:80 134217728\n10.0.0.3:80 1\n' > "$B"
	run -1 $K ring build --backends "$B" --version v2 --point-multiple 1
	assert_output --partial "ring too large: 3 backends give 268435457 points"
}

@test "duplicate backend names both lines" {
	printf '10.0.0.1:80 1\n10.0.0.2:80 1\n# x\n10.0.0.1:80 2\n' > "$B"
	run -1 $K ring dump --backends "$B" --version v1
	assert_output "keyrouter: $B:4: duplicate backend 10.0.0.1:80 (already on line 1)"
	printf '[2001:db8::1]:80 1\n[2001:DB8:0::1]:80 1\n' > "$B"
	run -1 $K ring dump --backends "$B" --version v1
	assert_output "keyrouter: $B:2: duplicate backend [2001:db8::1]:80 (already on line 1)"
}

@test "65536 backends build; 65537 is an error, not a wrap" {
	awk 'BEGIN { for (i = 0; i < 65536; i++) printf "10.%d.%d.%d:80 1\n", i / 65536, (i / 256) % 256, i % 256 }' > "$B"
	run -0 $K ring build --backends "$B" --version v2 --point-multiple 1
	assert_output --partial "backends 65536,"
	echo "10.1.0.0:80 1" >> "$B"
	run -1 $K ring build --backends "$B" --version v2 --point-multiple 1
	assert_output "keyrouter: $B:65537: too many backends: a ring holds at most 65536 (the backend index is 16 bits)"
}

@test "weight 0 is drained; all weights 0 or no backends is an error" {
	printf '10.0.0.1:80 1\n10.0.0.2:80 0\n' > "$B"
	run -0 $K ring dump --no-header --backends "$B" --version v1
	assert_equal "${#lines[@]}" 160
	refute_output --regexp ' 1$'
	printf '10.0.0.1:80 0\n' > "$B"
	run -1 $K ring build --backends "$B" --version v1
	assert_output "keyrouter: $B: ring has no points: every backend has weight 0"
	printf '# nothing\n\n' > "$B"
	run -1 $K ring build --backends "$B" --version v1
	assert_output "keyrouter: $B: no backends (expected lines '<SocketAddr> <weight>')"
}

@test "keys file: missing, bad hex (line named)" {
	run -1 $K lookup --backends "$V/a_v1_3x1.backends.txt" --version v1 --keys-file /nonexistent/k
	assert_output "keyrouter: couldn't open keys file '/nonexistent/k': No such file or directory"
	printf '6b6579\nxyz1\n' > "$BATS_TEST_TMPDIR/k"
	run -1 $K lookup --backends "$V/a_v1_3x1.backends.txt" --version v1 --keys-file "$BATS_TEST_TMPDIR/k"
	assert_line --regexp '^6b6579 [0-9a-f]{8} '
	assert_line --partial "$BATS_TEST_TMPDIR/k:2: bad key 'xyz1': 'x' at character 1 is not a hex digit"
}

# ---- usage errors: exit 2 ---------------------------------------------------------------

@test "bad --version and --point-multiple" {
	run -2 $K ring dump --backends "$V/a_v1_3x1.backends.txt" --version v3
	assert_line --index 0 "keyrouter: ring dump: bad --version 'v3': expected v1 or v2"
	for pm in 0 abc -1 4294967296; do
		run -2 $K ring build --backends "$V/a_v1_3x1.backends.txt" --version v2 --point-multiple "$pm"
		assert_line --index 0 "keyrouter: ring build: bad --point-multiple '$pm': expected an integer 1..4294967295"
	done
	run -2 $K ring build --backends "$V/a_v1_3x1.backends.txt" --version v1 --point-multiple 16
	assert_line --index 0 --partial "--point-multiple applies to v2 only"
	run -2 $K ring build --backends "$V/a_v1_3x1.backends.txt"
	assert_line --index 0 "keyrouter: ring build: missing --version v1|v2"
	run -2 $K lookup --version v1 6b
	assert_line --index 0 "keyrouter: lookup: missing --backends FILE"
}

@test "bad key arguments, no keys, unknown options" {
	run -2 $K lookup --backends "$V/a_v1_3x1.backends.txt" --version v1 6b6
	assert_line --index 0 --partial "keyrouter: lookup: bad key '6b6': expected hex bytes (an even number of hex digits"
	run -2 $K lookup --backends "$V/a_v1_3x1.backends.txt" --version v1 zz
	assert_line --index 0 --partial "bad key 'zz': 'z' at character 1 is not a hex digit"
	run -2 $K lookup --backends "$V/a_v1_3x1.backends.txt" --version v1
	assert_line --index 0 "keyrouter: lookup: no keys: give --keys-file KEYS and/or keys as hex arguments"
	run -2 $K ring dump --bogus
	assert_output --partial "unrecognized option '--bogus'"
	run -2 $K ring dump --backends "$V/a_v1_3x1.backends.txt" --version v1 extra
	assert_line --index 0 "keyrouter: ring dump: unexpected argument 'extra'"
}

@test "backends file: comments, blank lines, tabs, CRLF, trailing comments are accepted" {
	printf '# header\r\n\r\n  10.0.0.1:443\t1   # first\r\n\t[2001:db8::1]:443 2\r\n' > "$B"
	run -0 $K ring build --backends "$B" --version v2 --point-multiple 16
	assert_output --partial "backends 2, points 48,"
	printf '10.0.0.1:443 1\n[2001:db8::1]:443 2\n' > "$BATS_TEST_TMPDIR/plain.txt"
	run -0 $K ring dump --no-header --backends "$B" --version v2 --point-multiple 16
	a=$output
	run -0 $K ring dump --no-header --backends "$BATS_TEST_TMPDIR/plain.txt" --version v2 --point-multiple 16
	assert_equal "$output" "$a"
}

@test "keys from standard input (--keys-file -)" {
	run -0 bash -c "grep -v '^#' $V/a_v1_3x1.keys.txt | head -5 | $K lookup --backends $V/a_v1_3x1.backends.txt --version v1 --keys-file -"
	assert_equal "$output" "$(grep -v '^#' $V/a_v1_3x1.keys.txt | head -5)"
}

@test "ring build: KEYROUTER_POINT_GEN forces each point generator, -v and analyze --json name it, same digest" {
	n=b_v1_10mixed
	dg=$(sed -n 's/^# ring digest:.* = //p' "$V/$n.continuum.txt")
	run -1 env KEYROUTER_POINT_GEN=lanes8 $K ring build --backends "$V/$n.backends.txt" --version v1
	assert_output --partial "KEYROUTER_POINT_GEN=lanes8: expected auto, scalar, lanes4 or gfni"
	for g in scalar lanes4 gfni; do
		if [ "$g" = gfni ] && ! { grep -qw gfni /proc/cpuinfo && grep -qw avx512f /proc/cpuinfo &&
					  grep -qw avx512bw /proc/cpuinfo; }; then
			run -1 env KEYROUTER_POINT_GEN=gfni $K ring build --backends "$V/$n.backends.txt" --version v1
			assert_output --partial "KEYROUTER_POINT_GEN=gfni: this CPU lacks GFNI"
			skip "gfni: this CPU lacks GFNI/AVX-512 (refused with that message)"
		fi
		run -0 env KEYROUTER_POINT_GEN=$g $K -v ring build --backends "$V/$n.backends.txt" --version v1
		assert_output --partial "(point generator $g)"
		assert_output --partial "digest $dg,"
		run -0 env KEYROUTER_POINT_GEN=$g $K analyze --backends "$V/$n.backends.txt" --version v1 --json
		assert_equal "$(jq -r .points.generator <<< "$output")" "$g"
	done
}
