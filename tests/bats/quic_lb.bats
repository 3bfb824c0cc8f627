#!/usr/bin/env bats
# QUIC-LB through the CLI (docs/quic.md): every line of tests/data/quic_lb_vectors.txt
# encodes to its CID (`quic-lb encode`) and decodes to its server ID (`quic-lb decode`), in
# userspace and through the kernel's program (`--via-kernel`, BPF_PROG_TEST_RUN); the
# unroutable verdicts (config rotation 7, too short, longer than 20) are the same in both;
# usage errors are clear.
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

setup() {
	cd "$BATS_TEST_DIRNAME/../.."
	K=${KEYROUTER:-./build/keyrouter}
	V=tests/data/quic_lb_vectors.txt
}

# Runs `quic-lb decode` (extra flags in $@) for every vector; counts exact lines.
decode_all() {
	local n=0 bad=0 cr sl nl key sid nonce cid kf
	while read -r cr sl nl key sid nonce cid; do
		case "$cr" in '#'*|'') continue ;; esac
		kf=(); [ "$key" = - ] || kf=(--key "$key")
		out=$($K quic-lb decode --server-id-len "$sl" --nonce-len "$nl" "${kf[@]}" "$@" "$cid")
		n=$((n + 1))
		if [ "$out" != "$cid $sid" ]; then
			echo "decode $*: got '$out', want '$cid $sid'"
			bad=$((bad + 1))
		fi
	done < "$V"
	echo "$n vectors decoded, $bad wrong"
	[ "$n" -ge 40 ] && [ "$bad" = 0 ]
}

@test "quic-lb encode: every vector's server ID and nonce give exactly its CID" {
	local n=0 bad=0
	while read -r cr sl nl key sid nonce cid; do
		case "$cr" in '#'*|'') continue ;; esac
		kf=(); [ "$key" = - ] || kf=(--key "$key")
		out=$($K quic-lb encode --config-rotation "$cr" --server-id "$sid" --nonce "$nonce" "${kf[@]}")
		n=$((n + 1))
		if [ "$out" != "$cid" ]; then
			echo "encode $cr $sid $nonce: got $out want $cid"
			bad=$((bad + 1))
		fi
	done < "$V"
	echo "$n vectors encoded, $bad wrong"
	[ "$n" -ge 40 ] && [ "$bad" = 0 ]
}

@test "quic-lb decode: every vector's CID gives exactly its server ID (userspace)" {
	decode_all
}

@test "quic-lb decode --via-kernel: every vector's CID gives exactly its server ID (BPF program)" {
	[ "$(id -u)" = 0 ] || skip "needs root (loads a BPF program)"
	decode_all --via-kernel
}

@test "quic-lb decode: unroutable CIDs, the same verdicts in userspace and in the kernel" {
	local key=8f95f09245765f80256934e50c66207f
	# rotation 7; 7 octets for 1 + 3 + 4; 21 octets; a good one among them
	local cids=(e720b1d07b359d3c 0720b1d07b359d 0720b1d07b359d3c0720b1d07b359d3c0720b1d07b 0720b1d07b359d3c)
	run -0 $K quic-lb decode --server-id-len 3 --nonce-len 4 --key $key "${cids[@]}"
	assert_line -n 0 "e720b1d07b359d3c unroutable config rotation 7 (reserved for unroutable CIDs)"
	assert_line -n 1 "0720b1d07b359d unroutable 7 octets: too short for 1 + 3 + 4"
	assert_line -n 2 "0720b1d07b359d3c0720b1d07b359d3c0720b1d07b unroutable 21 octets: longer than 20"
	assert_line -n 3 "0720b1d07b359d3c ed793a"
	user=$output
	[ "$(id -u)" = 0 ] || skip "needs root for --via-kernel"
	run -0 $K quic-lb decode --server-id-len 3 --nonce-len 4 --key $key --via-kernel "${cids[@]}"
	[ "$output" = "$user" ]
}

@test "quic-lb: usage errors" {
	run -2 $K quic-lb decode --server-id-len 16 --nonce-len 4 00
	assert_output --partial "--server-id-len: expected 1..15"
	run -2 $K quic-lb decode --server-id-len 10 --nonce-len 10 00
	assert_output --partial "exceed 19 octets"
	run -2 $K quic-lb decode --server-id-len 3 --nonce-len 4 --key 00 0720b1d07b359d3c
	assert_output --partial "--key: expected 32 hex digits"
	run -2 $K quic-lb decode --server-id-len 3 --nonce-len 4 zz
	assert_output --partial "bad CID 'zz'"
	run -2 $K quic-lb decode --server-id-len 3 --nonce-len 4
	assert_output --partial "no CIDs"
	run -2 $K quic-lb encode --config-rotation 7 --server-id 01 --nonce 01020304
	assert_output --partial "--config-rotation: expected 0..6"
	run -2 $K quic-lb encode --config-rotation 0 --server-id 01 --nonce 010203
	assert_output --partial "--nonce: expected 4..18 octets"
	run -2 $K quic-lb encode --config-rotation 0 --server-id 0102030405060708090a --nonce 0102030405060708090a
	assert_output --partial "exceed 19 octets"
	run -0 $K quic-lb decode --help
	assert_output --partial "<cid hex> unroutable <reason>"
}
