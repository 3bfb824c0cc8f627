#!/usr/bin/env bats
# QUIC-LB through the CLI (docs/quic.md): every line of tests/data/quic_lb_vectors.txt
# encodes to its CID (`quic-lb encode`) and decodes to its server ID (`quic-lb decode`), in
# userspace and through the kernel's program (`--via-kernel`, BPF_PROG_TEST_RUN); the
# unroutable verdicts (config rotation 7, too short, longer than 20) are the same in both;
# the key from a file (--key-file) and the lengths and keys of a configured service
# (-c FILE --service NAME) give the same CIDs; usage errors are clear.
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

setup() {
	cd "$BATS_TEST_DIRNAME/../.."
	K=${KEYROUTER:-./build/keyrouter}
	V=tests/data/quic_lb_vectors.txt
}

# decode_part I J FLAGS...: `quic-lb decode` (extra flags FLAGS) of the vectors I, I + J,
# I + 2J, ...; prints each wrong line, then "N BAD" (vectors decoded, wrong ones).
decode_part() {
	local i=$1 j=$2 v=0 n=0 bad=0 cr sl nl key sid nonce cid kf
	shift 2
	while read -r cr sl nl key sid nonce cid; do
		case "$cr" in '#'*|'') continue ;; esac
		v=$((v + 1))
		[ $(((v - 1) % j)) = "$i" ] || continue
		kf=(); [ "$key" = - ] || kf=(--key "$key")
		out=$($K quic-lb decode --server-id-len "$sl" --nonce-len "$nl" "${kf[@]}" "$@" "$cid")
		n=$((n + 1))
		if [ "$out" != "$cid $sid" ]; then
			echo "decode $*: got '$out', want '$cid $sid'"
			bad=$((bad + 1))
		fi
	done < "$V"
	echo "$n $bad"
}

# Runs `quic-lb decode` (extra flags in $@) for every vector; counts exact lines.  With
# DECODE_JOBS=J, J processes at once, each every J-th vector.
decode_all() {
	local jobs=${DECODE_JOBS:-1} i n=0 bad=0 pn pb pids=()
	for ((i = 0; i < jobs; i++)); do
		decode_part "$i" "$jobs" "$@" >"$BATS_TEST_TMPDIR/decode.$i" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i"; done
	for ((i = 0; i < jobs; i++)); do
		sed '$d' "$BATS_TEST_TMPDIR/decode.$i"
		read -r pn pb < <(tail -1 "$BATS_TEST_TMPDIR/decode.$i")
		n=$((n + pn)) bad=$((bad + pb))
	done
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
	# each decode loads the program (the verifier's work: CPU): two at a time on 2 cores
	DECODE_JOBS=$(nproc) decode_all --via-kernel
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

@test "quic-lb --key-file: the key from a mode-600 file gives every keyed vector's CID and server ID; a readable file is refused" {
	local n=0 bad=0 cr sl nl key sid nonce cid last= kf=$BATS_TEST_TMPDIR/k
	while read -r cr sl nl key sid nonce cid; do
		case "$cr" in '#'*|'') continue ;; esac
		[ "$key" = - ] && continue
		(umask 077; echo "$key" >"$kf")
		last=$key
		out=$($K quic-lb encode --config-rotation "$cr" --server-id "$sid" --nonce "$nonce" --key-file "$kf")
		if [ "$out" != "$cid" ]; then echo "encode $cid: got $out"; bad=$((bad + 1)); fi
		out=$($K quic-lb decode --server-id-len "$sl" --nonce-len "$nl" --key-file "$kf" "$cid")
		if [ "$out" != "$cid $sid" ]; then echo "decode $cid: got $out"; bad=$((bad + 1)); fi
		n=$((n + 1))
	done < "$V"
	echo "$n keyed vectors, $bad wrong"
	[ "$n" -ge 20 ]
	[ "$bad" = 0 ]
	chmod 644 "$kf"
	run -1 $K quic-lb decode --server-id-len 3 --nonce-len 4 --key-file "$kf" 0720b1d07b359d3c
	assert_output --partial "has mode 0644"
	refute_output --partial "$last"
	run -2 $K quic-lb decode --server-id-len 3 --nonce-len 4 --key-file "$kf" --key "$last" 0720b1d07b359d3c
	assert_output --partial "exclude each other"
}

@test "quic-lb -c FILE --service NAME: lengths and keys of the service's configurations, each CID by its own rotation, with the backend of its server ID" {
	local d=$BATS_TEST_TMPDIR key=8f95f09245765f80256934e50c66207f
	(umask 077; echo "$key" >"$d/qlb1.key")
	cat >"$d/c.json" <<-'EOF'
	{ "rings": [ { "name": "web", "format": "v2", "point_multiple": 40, "backends": [
	    { "address": "10.2.0.11:443", "mac": "02:00:00:00:00:11", "quic_lb_server_ids": { "0": "0a01", "1": "0b0001" } },
	    { "address": "10.2.0.13:443", "mac": "02:00:00:00:00:13", "quic_lb_server_ids": { "0": "0a03", "1": "0b0003" } } ] } ],
	  "services": [ { "name": "web", "vip": "10.2.0.100", "port": 443, "ring": "web",
	    "key": { "type": "quic", "cid_length": 9 }, "forward": { "mode": "l2" },
	    "quic_lb": [ { "config_rotation": 0, "server_id_length": 2, "nonce_length": 6 },
	                 { "config_rotation": 1, "server_id_length": 3, "nonce_length": 8, "key_file": "qlb1.key" } ] },
	    { "name": "plain", "vip": "10.2.0.101", "port": 53, "ring": "web", "key": { "type": "dns" }, "forward": { "mode": "l2" } } ] }
	EOF
	# rotation 1 is keyed: the same CID as with the key given by hand
	run -0 $K quic-lb encode -c "$d/c.json" --service web --config-rotation 1 --server-id 0b0003 --nonce 1122334455667788
	assert_output "$($K quic-lb encode --config-rotation 1 --server-id 0b0003 --nonce 1122334455667788 --key $key)"
	c1=$output
	run -0 $K quic-lb encode -c "$d/c.json" --service web --config-rotation 0 --server-id 0a01 --nonce 112233445566
	assert_output "$($K quic-lb encode --config-rotation 0 --server-id 0a01 --nonce 112233445566)"
	c0=$output
	# a rotation-2 CID: no configuration for it
	run -0 $K quic-lb decode -c "$d/c.json" --service web "$c1" "$c0" 4b0102030405060708 e720b1d07b359d3c
	assert_line -n 0 "$c1 0b0003 backend 10.2.0.13:443"
	assert_line -n 1 "$c0 0a01 backend 10.2.0.11:443"
	assert_line -n 2 "4b0102030405060708 unroutable config rotation 2: service web has no configuration for it"
	assert_line -n 3 "e720b1d07b359d3c unroutable config rotation 7 (reserved for unroutable CIDs)"
	user=$output
	if [ "$(id -u)" = 0 ]; then
		run -0 $K quic-lb decode -c "$d/c.json" --service web --via-kernel "$c1" "$c0" 4b0102030405060708 e720b1d07b359d3c
		[ "$output" = "$user" ]
	fi
	run -1 $K quic-lb encode -c "$d/c.json" --service web --config-rotation 1 --server-id 0b03 --nonce 1122334455667788
	assert_output --partial "takes a 3-octet server ID and a 8-octet nonce (given: 2 and 8)"
	run -1 $K quic-lb encode -c "$d/c.json" --service web --config-rotation 2 --server-id 0b03 --nonce 11223344
	assert_output --partial "no QUIC-LB configuration for config rotation 2"
	run -2 $K quic-lb decode -c "$d/c.json" --service web --server-id-len 2 "$c0"
	assert_output --partial "come from the service's QUIC-LB configurations"
	run -2 $K quic-lb decode --service web --server-id-len 2 --nonce-len 6 "$c0"
	assert_output --partial "-c FILE and --service NAME go together"
	run -1 $K quic-lb decode -c "$d/c.json" --service nope "$c0"
	assert_output --partial "no service 'nope'"
	run -1 $K quic-lb decode -c "$d/c.json" --service plain "$c0"
	assert_output --partial "has no \"quic_lb\" configuration"
}
