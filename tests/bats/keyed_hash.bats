#!/usr/bin/env bats
# The opt-in keyed hash ("hash": { "function": "siphash13", "secret_file": ... }):
# the secret file's checks, the secret never printed, lookup hashing with it, and apply
# writing it into the kernel (kr_hash_key) with the services flagged.  That the data path
# then routes by SipHash-1-3 exactly as userspace computes it is checked packet by packet by
# tests/bpf/test_packet_fuzz.c; that it defeats crafted CRC collisions by
# tests/unit/test_siphash.c.
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load kr_instance

SECRET=00112233445566778899aabbccddeeff

# Kernel tests: the instance and the namespace go away even when the test fails.
teardown() {
	kr_instance_teardown
}

setup() {
	kr_instance_setup
	printf '%s\n' "$SECRET" > "$T/hash.key"
	chmod 600 "$T/hash.key"
	cat > "$T/k.json" <<'JSON'
{ "hash": { "function": "siphash13", "secret_file": "hash.key" },
  "rings": [ { "name": "r", "format": "v2", "point_multiple": 16,
    "backends": [ { "address": "10.0.0.1:1" }, { "address": "10.0.0.2:1" }, { "address": "10.0.0.3:1" },
                  { "address": "10.0.0.4:1" } ] } ],
  "services": [ { "name": "p", "vip": "10.1.0.1", "port": 9, "key": { "type": "payload" }, "ring": "r",
                  "forward": { "mode": "ipip", "source4": "10.0.0.9" } } ] }
JSON
	sed 's/"hash": { "function": "siphash13", "secret_file": "hash.key" },//' "$T/k.json" > "$T/c.json"
}

@test "keyed config: valid; config show names the secret file, never the secret" {
	run -0 $K config check -c "$T/k.json"
	assert_output --partial "valid: 1 ring, 1 service"
	run -0 $K config show -c "$T/k.json"
	assert_output --partial '"function": "siphash13"'
	assert_output --partial "\"secret_file\": \"$T/hash.key\""
	refute_output --partial "$SECRET"
	refute_output --partial "0011223344"
	# the normalized form loads again (absolute path)
	echo "$output" > "$T/n.json"
	run -0 $K config check -c "$T/n.json"
}

@test "secret file checks: mode, missing, content, function; messages never show the secret" {
	chmod 644 "$T/hash.key"
	run -1 $K config check -c "$T/k.json"
	assert_output --partial "hash.secret_file: '$T/hash.key' has mode 0644: a secret must not be readable or writable by group or others"
	refute_output --partial "$SECRET"
	chmod 600 "$T/hash.key"
	printf 'xyz%s\n' "$SECRET" > "$T/hash.key"
	run -1 $K config check -c "$T/k.json"
	assert_output --partial "expected exactly 32 hex digits"
	refute_output --partial "$SECRET"
	printf '%s00\n' "$SECRET" > "$T/hash.key"
	run -1 $K config check -c "$T/k.json"
	assert_output --partial "expected exactly 32 hex digits"
	rm "$T/hash.key"
	run -1 $K config check -c "$T/k.json"
	assert_output --partial "hash.secret_file: couldn't open '$T/hash.key': No such file or directory"
	sed 's/, "secret_file": "hash.key"//' "$T/k.json" > "$T/nofile.json"
	run -1 $K config check -c "$T/nofile.json"
	assert_output --partial '"siphash13" needs "secret_file"'
	sed 's/siphash13/md5/' "$T/k.json" > "$T/md5.json"
	run -1 $K config check -c "$T/md5.json"
	assert_output --partial "'md5': expected \"crc32\""
	ln -s /dev/null "$T/link.key"
	sed 's/hash.key/link.key/' "$T/k.json" > "$T/link.json"
	run -1 $K config check -c "$T/link.json"
	assert_output --partial "link.key"
}

@test "lookup hashes with the secret: other placement than CRC-32, stable, another secret moves keys" {
	keys=$(seq 1 200 | sed 's/^/key-/')
	run -0 $K lookup -c "$T/k.json" --service p $keys
	keyed=$output
	run -0 $K lookup -c "$T/c.json" --service p $keys
	crc=$output
	# CRC column = crc32 of the key without the secret
	[ "$(echo "$crc" | head -1 | cut -d' ' -f2)" = "$(printf 'key-1' | gzip -c | tail -c8 | head -c4 | od -An -tx4 | tr -d ' ')" ]
	# a different hash for every key (collisions of 32-bit values among 200: ~0)
	[ "$(paste -d' ' <(echo "$keyed" | cut -d' ' -f2) <(echo "$crc" | cut -d' ' -f2) | awk '$1 == $2' | wc -l)" -eq 0 ]
	run -0 $K lookup -c "$T/k.json" --service p $keys
	[ "$output" = "$keyed" ]
	printf 'ffeeddccbbaa99887766554433221100\n' > "$T/hash.key"
	run -0 $K lookup -c "$T/k.json" --service p $keys
	moved=$(paste -d' ' <(echo "$keyed" | cut -d' ' -f4) <(echo "$output" | cut -d' ' -f4) | awk '$1 != $2' | wc -l)
	[ "$moved" -gt 100 ] || fail "only $moved of 200 keys moved with another secret"
	run -2 $K lookup -c "$T/k.json" --service p --via-kernel key-1
	assert_output --partial "--via-kernel: not supported with a keyed hash"
}

@test "kernel: apply writes the secret into kr_hash_key and flags the services; a CRC config clears the flag" {
	[ "$(id -u)" = 0 ] || skip "needs root"
	[ -f "${OUT:-build}/bpf/keyrouter.bpf.o" ] || skip "no BPF object"
	N=kr-keyed-$$
	ip netns add "$N"
	ip -n "$N" link add v0 type veth peer name v1
	ip -n "$N" link set v0 up
	ip -n "$N" link set v1 up
	run nsenter --net="/run/netns/$N" "$KK" load v0 -c "$T/k.json" --mode generic --instance "$N"
	local st=$status out=$output key="" flags="" flags2=""
	if [ "$st" = 0 ]; then
		key=$(bpftool -j map dump pinned "/sys/fs/bpf/keyrouter/$N/kr_hash_key" |
		      jq -r '.[0].value | if type == "object" then (.k0, .k1) else . end' | tr -d '\n')
		raw=$(bpftool -j map dump pinned "/sys/fs/bpf/keyrouter/$N/kr_hash_key" | jq -c '.')
		flags=$(bpftool -j map dump pinned "/sys/fs/bpf/keyrouter/$N/kr_services" | jq '.[0].formatted.value.flags // .[0].value.flags')
		nsenter --net="/run/netns/$N" "$KK" apply -c "$T/c.json" --instance "$N" >/dev/null 2>&1 || true
		flags2=$(bpftool -j map dump pinned "/sys/fs/bpf/keyrouter/$N/kr_services" | jq '.[0].formatted.value.flags // .[0].value.flags')
	fi
	[ "$st" = 0 ] || fail "load: $out"
	echo "kr_hash_key: $raw"
	# k0 = bytes 00..77 little-endian = 0x7766554433221100, k1 = 0xffeeddccbbaa9988
	[[ "$raw" == *"8603657889270100224"* || "$raw" == *"0x7766554433221100"* || "$raw" == *'"0x00","0x11","0x22"'* ]] ||
		fail "kr_hash_key does not hold the secret: $raw"
	[ "$flags" = 2 ] || fail "service flags $flags, expected KR_SVC_F_KEYED_HASH (2)"
	[ "$flags2" = 0 ] || fail "after applying the CRC config: flags $flags2, expected 0"
}
