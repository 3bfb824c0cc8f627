#!/usr/bin/env bats
# Limits, each at the limit and one past it: the limit works, one more is a clear error
# that names the limit (before anything touches the kernel).
#   backends per ring 65536 | points per ring 2^28 | key 255 bytes (256: the service's
#   policy in the kernel) | services 1024 (= the kernel map) | rings 256
# The largest ring (2^28 points, a 1.6 GB image) is only checked, not built: building it
# takes ~3 GB and 15 s (`keyrouter ring build` with one backend of weight 268435456 and
# --point-multiple 1 does it by hand).
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load kr_instance

# Kernel tests: the instance and the namespace go away even when the test fails.
teardown() {
	kr_instance_teardown
}

setup() {
	kr_instance_setup
}

# backends N > file: 10.a.b.c:1 weight 1
backends() {
	awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++)
		printf "10.%d.%d.%d:1 1\n", int(i / 65536) + 1, int(i / 256) % 256, i % 256 }'
}

# config NSERVICES NRINGS > file (python: 1024 services written by hand would be a lot)
config() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
ns, nr = int(sys.argv[1]), int(sys.argv[2])
rings = [{"name": "r%d" % i, "format": "v2", "point_multiple": 1,
          "backends": [{"address": "10.0.%d.%d:1" % (i // 256, i % 256)}]} for i in range(nr)]
svcs = [{"name": "s%d" % i, "vip": "10.1.0.1", "port": 1 + i, "key": {"type": "tuple"},
         "ring": "r%d" % (i % nr), "forward": {"mode": "ipip", "source4": "10.0.0.9"}}
        for i in range(ns)]
print(json.dumps({"rings": rings, "services": svcs}))
EOF
}

@test "65536 backends in a ring build; 65537 is an error naming the limit" {
	backends 65536 > "$T/b.txt"
	run -0 $K ring build --backends "$T/b.txt" --version v2 --point-multiple 1
	assert_output --partial "backends 65536, points 65536"
	backends 65537 > "$T/b1.txt"
	run -1 $K ring build --backends "$T/b1.txt" --version v2 --point-multiple 1
	assert_output --partial "b1.txt:65537: too many backends: a ring holds at most 65536"
	# the same through a configuration
	awk 'BEGIN { printf "{ \"rings\": [ { \"name\": \"r\", \"format\": \"v2\", \"point_multiple\": 1, \"backends\": [" }
	     { if (NR > 1) printf ", "; printf "{ \"address\": \"%s\" }", $1 } END { print "] } ] }" }' \
		"$T/b1.txt" > "$T/c1.json"
	run -1 $K config check -c "$T/c1.json"
	assert_output --partial "65537"
	assert_output --partial "65536"
}

@test "2^28 points is the largest ring; one more point is an error (config and ring build)" {
	echo '{ "rings": [ { "name": "big", "format": "v2", "point_multiple": 1, "backends": [ { "address": "10.0.0.1:1", "weight": 268435456 } ] } ] }' > "$T/big.json"
	run -0 $K config check -c "$T/big.json"
	assert_line --regexp '^ring big: format v2 point_multiple 1 backends 1 points 268435456 kernel 1\.[0-9]+ GiB$'
	echo '{ "rings": [ { "name": "big", "format": "v2", "point_multiple": 1, "backends": [ { "address": "10.0.0.1:1", "weight": 268435457 } ] } ] }' > "$T/big1.json"
	run -1 $K config check -c "$T/big1.json"
	assert_output --partial "268435456"
	printf '10.0.0.1:1 268435457\n' > "$T/big1.txt"
	run -1 $K ring build --backends "$T/big1.txt" --version v2 --point-multiple 1
	assert_output --partial "268435457 points, more than a ring may hold (268435456)"
	# two backends whose sum passes the limit
	printf '10.0.0.1:1 134217728\n10.0.0.2:1 134217729\n' > "$T/big2.txt"
	run -1 $K ring build --backends "$T/big2.txt" --version v2 --point-multiple 1
	assert_output --partial "268435457"
}

@test "a 255-byte key is routed; 256 bytes: an error in userspace, the policy in the kernel" {
	printf '10.0.0.1:1 1\n10.0.0.2:1 1\n' > "$T/b.txt"
	k255=$(head -c 255 /dev/zero | tr '\0' 'k' | od -An -v -tx1 | tr -d ' \n')
	run -0 $K lookup --backends "$T/b.txt" --version v2 "$k255"
	assert_output --regexp "^${k255} [0-9a-f]{8} [0-9]+ [01] "
	echo '{ "rings": [ { "name": "r", "format": "v2", "backends": [ { "address": "10.0.0.1:1" } ] } ], "services": [ { "name": "p", "vip": "10.1.0.1", "port": 9, "key": { "type": "payload" }, "ring": "r", "forward": { "mode": "ipip", "source4": "10.0.0.9" } } ] }' > "$T/p.json"
	run -0 $K lookup -c "$T/p.json" --service p "$(head -c 255 /dev/zero | tr '\0' 'k')"
	run -2 $K lookup -c "$T/p.json" --service p "$(head -c 256 /dev/zero | tr '\0' 'k')"
	assert_output --partial "payload key is 256 bytes long: keys are at most 255 bytes"
	[ "$(id -u)" = 0 ] || skip "the kernel half needs root"
	run -0 $K lookup --backends "$T/b.txt" --version v2 --via-kernel "$k255" "${k255}6b"
	assert_line --regexp "^${k255} [0-9a-f]{8} [0-9]+ [01] "
	assert_line --regexp "^${k255}6b [0-9a-f]{8} policy pass \(key longer than 255 bytes"
}

@test "1024 services and 256 rings are valid; 1025 services or 257 rings are errors" {
	command -v python3 >/dev/null || skip "needs python3"
	config 1024 256 > "$T/max.json"
	run -0 $K config check -c "$T/max.json"
	assert_line --partial "valid: 256 rings, 1024 services"
	config 1025 1 > "$T/s1.json"
	run -1 $K config check -c "$T/s1.json"
	assert_output --partial "services: 1025 services: at most 1024"
	config 0 257 > "$T/r1.json"
	run -1 $K config check -c "$T/r1.json"
	assert_output --partial "rings: 257 rings: expected 1..256"
}

@test "kernel: 1024 services and 256 rings apply; 1025 services are refused before the kernel, nothing changes" {
	[ "$(id -u)" = 0 ] || skip "needs root"
	[ -f "${OUT:-build}/bpf/keyrouter.bpf.o" ] || skip "no BPF object"
	command -v python3 >/dev/null || skip "needs python3"
	N=kr-lim-$$
	config 1024 256 > "$T/max.json"
	config 1025 1 > "$T/s1.json"
	ip netns add "$N"
	ip -n "$N" link add v0 type veth peer name v1
	ip -n "$N" link set v0 up
	ip -n "$N" link set v1 up
	run nsenter --net="/run/netns/$N" "$KK" load v0 -c "$T/max.json" --mode generic --instance "$N"
	local st=$status out=$output
	if [ "$st" = 0 ]; then
		n=$(bpftool -j map dump pinned "/sys/fs/bpf/keyrouter/$N/kr_services" | jq length)
		rings=$(bpftool -j map dump pinned "/sys/fs/bpf/keyrouter/$N/kr_rings" | jq '[.[] | select(.value != null)] | length')
		run nsenter --net="/run/netns/$N" "$KK" apply -c "$T/s1.json" --instance "$N"
		st2=$status out2=$output
		n2=$(bpftool -j map dump pinned "/sys/fs/bpf/keyrouter/$N/kr_services" | jq length)
	fi
	[ "$st" = 0 ] || fail "load with 1024 services and 256 rings failed: $out"
	[ "$n" = 1024 ] || fail "kr_services holds $n entries, expected 1024"
	[ "$rings" -ge 256 ] || fail "kr_rings holds $rings published images, expected 256"
	[ "$st2" = 1 ] || fail "apply of 1025 services: status $st2: $out2"
	[[ "$out2" == *"1025 services: at most 1024"* ]] || fail "unclear error: $out2"
	[ "$n2" = 1024 ] || fail "the refused apply changed kr_services ($n2 entries)"
}
