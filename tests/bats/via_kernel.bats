#!/usr/bin/env bats
# `keyrouter lookup --via-kernel`: every ketama vector through the real data path program
# (BPF_PROG_TEST_RUN, a `payload` service, the ring published in the kernel).  Every line
# must equal the vector exactly (crc, ring index, backend, walk), except keys longer than
# 255 bytes, which the kernel does not route: those must be reported as the service's
# policy, and only those.
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

setup() {
	cd "$BATS_TEST_DIRNAME/../.."
	K=${KEYROUTER:-./build/keyrouter}
	[ "$(id -u)" = 0 ] || skip "needs root (loads a BPF program)"
}

# vector name -> version flags
flags() {
	case "$1" in
	*_v1_*) echo "--version v1" ;;
	*_v2pm*) local pm=${1#*_v2pm}; echo "--version v2 --point-multiple ${pm%%_*}" ;;
	esac
}

check_vector() {
	local v=tests/vectors/$1 out=$BATS_TEST_TMPDIR/$1.out exp=$BATS_TEST_TMPDIR/$1.exp
	run -0 $K lookup --backends "$v.backends.txt" $(flags "$1") --via-kernel \
		--keys-file "$v.keys.txt"
	printf '%s\n' "$output" > "$out"
	grep -v '^#' "$v.keys.txt" > "$exp"
	# same number of lines, in order
	[ "$(wc -l < "$out")" = "$(wc -l < "$exp")" ]
	# every key of at most 255 bytes: identical line; longer: policy, same key and crc
	run -0 awk 'NR == FNR { e[FNR] = $0; next }
		{ split(e[FNR], x, " ");
		  if (length(x[1]) <= 510) { if ($0 != e[FNR]) { print "line " FNR ": " $0 " != " e[FNR]; bad++ } else ok++ }
		  else if ($1 != x[1] || $2 != x[2] || $3 != "policy") { print "line " FNR ": long key not reported as policy: " $0; bad++ }
		  else pol++ }
		END { printf "%d exact, %d policy\n", ok, pol; exit bad > 0 }' "$exp" "$out"
	echo "$output"
	assert_output --regexp '^[0-9]+ exact, [0-9]+ policy$'
	[ "${output%% *}" -gt 1000 ]
}

@test "via-kernel: a_v1_3x1 matches the vectors" { check_vector a_v1_3x1; }
@test "via-kernel: b_v1_10mixed matches the vectors" { check_vector b_v1_10mixed; }
@test "via-kernel: c_v2pm16_10mixed matches the vectors" { check_vector c_v2pm16_10mixed; }
@test "via-kernel: e_v1_ipv6 matches the vectors" { check_vector e_v1_ipv6; }
@test "via-kernel: e_v2pm160_ipv6 matches the vectors" { check_vector e_v2pm160_ipv6; }
@test "via-kernel: f_v2pm16_collide matches the vectors" { check_vector f_v2pm16_collide; }
@test "via-kernel: f_v2pm160_collide matches the vectors" { check_vector f_v2pm160_collide; }

@test "via-kernel: a key over 255 bytes is reported as the service's policy" {
	long=$(printf '61%.0s' $(seq 256))
	run -0 $K lookup --backends tests/vectors/a_v1_3x1.backends.txt --version v1 \
		--via-kernel "$long" 6b6579
	assert_line --index 0 --regexp "^${long} [0-9a-f]{8} policy pass \(key longer than 255 bytes"
	# the short key: the same line as the userspace lookup
	exp=$($K lookup --backends tests/vectors/a_v1_3x1.backends.txt --version v1 6b6579)
	assert_line --index 1 "$exp"
}

@test "via-kernel: --help explains it" {
	run -0 $K lookup --help
	assert_output --partial "--via-kernel"
}
