#!/usr/bin/env bats
# QUIC-LB operations (docs/quic.md): config check/show of "quic_lb", `lookup --service` on a
# QUIC-LB service (routed by CID, or the ring with why), and in the kernel: apply writes the
# configurations and server IDs, QUIC packets sent through a veth are routed by CID and
# counted by `stats`, a backend marked down and a removed server ID fall back to the ring
# with their counters, and an apply without quic_lb removes every entry.
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load kr_instance

KEY=8f95f09245765f80256934e50c66207f

teardown() {
	kr_instance_teardown
}

# config with backend states $1 $2 $3 and the server IDs of backend 2 ($4, "" = none)
mkconf() {
	local sid2=${4-\"0a02\"}
	cat > "$T/q.json" <<JSON
{ "rings": [ { "name": "r", "format": "v2", "point_multiple": 16, "backends": [
    { "address": "10.2.0.11:443", "mac": "02:00:00:00:00:11", "state": "$1",
      "quic_lb_server_ids": { "0": "0a01", "1": "0b0001" } },
    { "address": "10.2.0.12:443", "mac": "02:00:00:00:00:12", "state": "$2"
      $( [ -n "$sid2" ] && echo ", \"quic_lb_server_ids\": { \"0\": $sid2, \"1\": \"0b0002\" }" ) },
    { "address": "10.2.0.13:443", "mac": "02:00:00:00:00:13", "state": "$3",
      "quic_lb_server_ids": { "0": "0a03", "1": "0b0003" } } ] } ],
  "services": [ { "name": "web", "vip": "10.2.0.100", "port": 443, "ring": "r",
    "key": { "type": "quic", "cid_length": 9 }, "forward": { "mode": "l2" },
    "quic_lb": [ { "config_rotation": 0, "server_id_length": 2, "nonce_length": 6 },
                 { "config_rotation": 1, "server_id_length": 3, "nonce_length": 8,
                   "key_file": "qlb1.key" } ] } ] }
JSON
}

setup() {
	kr_instance_setup
	printf '%s\n' "$KEY" > "$T/qlb1.key"
	chmod 600 "$T/qlb1.key"
	mkconf up up up
}

@test "config check and show: QUIC-LB configurations and server IDs; the key stays in its file" {
	run -0 $K config check -c "$T/q.json"
	run -0 $K config show -c "$T/q.json"
	assert_output --partial '"quic_lb_server_ids"'
	assert_output --partial '"server_id_length": 3'
	assert_output --partial "\"key_file\": \"$T/qlb1.key\""
	refute_output --partial "$KEY"
	echo "$output" > "$T/n.json"
	run -0 $K config check -c "$T/n.json"
	sed 's/"0b0002"/"0b0001"/' "$T/q.json" > "$T/dup.json"
	run -1 $K config check -c "$T/dup.json"
	assert_output --regexp "dup.json:[0-9]+:[0-9]+: rings\[0\]\.backends\[1\]\.quic_lb_server_ids\.1: duplicate server ID '0b0001'"
}

@test "lookup --service: routable CIDs name their backend, others the ring and why" {
	c0=$($K quic-lb encode --config-rotation 0 --server-id 0a02 --nonce 010203040506)
	c1=$($K quic-lb encode --config-rotation 1 --server-id 0b0003 --nonce 0102030405060708 --key $KEY)
	run -0 $K lookup -c "$T/q.json" --service web --addr "$c0" "$c1" e1020304050607080900 4a0a0102030405060708 0a0901020304050607 0a02
	assert_line -n 0 "$c0 quic-lb config-rotation 0 server-id 0a02 route 1 10.2.0.12:443"
	assert_line -n 1 "$c1 quic-lb config-rotation 1 server-id 0b0003 route 2 10.2.0.13:443"
	assert_line -n 2 --regexp "^e1020304050607080900 [0-9a-f]{8} [0-9]+ [0-2] [0-2] [0-2] [0-2] route [0-2] 10\.2\.0\.1[123]:443 quic-lb ring fallback: unroutable \(config rotation 7\)$"
	assert_line -n 3 --regexp " quic-lb ring fallback: unknown_config \(config rotation 2 not configured\)$"
	assert_line -n 4 --regexp "^0a0901020304050607 .* route [0-2] .* quic-lb ring fallback: unknown_server_id$"
	assert_line -n 5 --regexp "^0a02 .* quic-lb ring fallback: too_short \(2 octets: too short for 1 \+ 2 \+ 6\)$"
	# backend 1 down: its CID goes to the ring, whose walk skips it
	mkconf up down up
	run -0 $K lookup -c "$T/q.json" --service web "$c0"
	assert_output --regexp "^$c0 [0-9a-f]{8} [0-9]+ [0-2] [0-2] [0-2] [0-2] route [02]( walk .*)? quic-lb ring fallback: backend_down$"
	mkconf up drain up
	run -0 $K lookup -c "$T/q.json" --service web "$c0"
	assert_output "$c0 quic-lb config-rotation 0 server-id 0a02 route 1"
}

# n QUIC short-header packets with DCID $1 from v1 to the VIP (through v0's program)
send_quic() {
	ip netns exec "$N" /usr/bin/python3 - "$1" "$2" <<'PY'
import socket, sys
cid = bytes.fromhex(sys.argv[1])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(int(sys.argv[2])):
    s.sendto(bytes([0x41]) + cid + bytes(24), ("10.2.0.100", 443))
PY
}

# namespace $N with a veth pair: keyrouter loaded on v0 with $T/q.json (instance $N, pins
# in $d), the VIP reached from v1 through it
qlb_instance() {
	local mac0
	ip netns add "$N"
	ip -n "$N" link add v0 type veth peer name v1
	ip -n "$N" link set v0 up
	ip -n "$N" link set v1 up
	ip -n "$N" addr add 10.2.0.2/24 dev v1
	mac0=$(ip -n "$N" -j link show v0 | jq -r '.[0].address')
	ip -n "$N" neigh add 10.2.0.100 lladdr "$mac0" dev v1 nud permanent
	nsenter --net="/run/netns/$N" "$KK" load v0 -c "$T/q.json" --mode generic --instance "$N"
	d=/sys/fs/bpf/keyrouter/$N
}

qstat() { # outcome -> its count in `stats --json`
	nsenter --net="/run/netns/$N" "$KK" stats --json --instance "$N" | jq ".quic_lb[0].$1"
}

@test "kernel: apply writes QUIC-LB maps; packets routed by CID; down backend and unknown server ID fall back, counted" {
	[ "$(id -u)" = 0 ] || skip "needs root"
	N=kr-qlb-$$
	qlb_instance
	# 3 backends x 2 rotations; configurations 0 and 1 of QUIC-LB id 1 valid
	[ "$(bpftool -j map dump pinned "$d/kr_qlb_servers" | jq length)" = 6 ]
	[ "$(bpftool -j map dump pinned "$d/kr_qlb_configs" | jq '[.[] | select((.formatted.value.valid // .value.valid) == 1)] | length')" = 2 ]
	flags=$(bpftool -j map dump pinned "$d/kr_services" | jq '.[0].formatted.value.flags')
	[ "$flags" = 4 ] || fail "service flags $flags, expected KR_SVC_F_QUIC_LB (4)"

	c0=$($K quic-lb encode --config-rotation 0 --server-id 0a02 --nonce 010203040506)
	c1=$($K quic-lb encode --config-rotation 1 --server-id 0b0003 --nonce 0102030405060708 --key $KEY)
	send_quic "$c0" 10
	send_quic "$c1" 5
	send_quic e10203040506070809 3
	run -0 nsenter --net="/run/netns/$N" "$KK" stats --instance "$N"
	echo "$output" | grep quic-lb
	[ "$(qstat routed)" = 15 ]
	[ "$(qstat unroutable)" = 3 ]
	[ "$(qstat routed_by_rotation | jq -c .)" = "[10,5,0,0,0,0,0]" ]

	# backend 1 down: its CIDs go to the ring
	mkconf up down up
	run -0 nsenter --net="/run/netns/$N" "$KK" apply -c "$T/q.json" --instance "$N"
	send_quic "$c0" 4
	[ "$(qstat backend_down)" = 4 ]
	[ "$(qstat routed)" = 15 ]
	# its server ID removed: unknown server ID; the stale entry is gone
	mkconf up up up '""'
	sed -i 's/"0": "", //' "$T/q.json"
	run -0 nsenter --net="/run/netns/$N" "$KK" apply -c "$T/q.json" --instance "$N"
	[ "$(bpftool -j map dump pinned "$d/kr_qlb_servers" | jq length)" = 5 ]
	send_quic "$c0" 2
	[ "$(qstat unknown_server_id)" = 2 ]
	run -0 nsenter --net="/run/netns/$N" "$KK" stats --prometheus --instance "$N"
	assert_output --partial "keyrouter_quic_lb_packets_total{keyrouter_instance=\"$N\",vip=\"10.2.0.100:443\",outcome=\"routed\"} 15"

	# without quic_lb: no server IDs, no valid configuration, the flag cleared
	jq 'del(.services[0].quic_lb)' "$T/q.json" > "$T/plain.json"
	run -0 nsenter --net="/run/netns/$N" "$KK" apply -c "$T/plain.json" --instance "$N"
	[ "$(bpftool -j map dump pinned "$d/kr_qlb_servers" | jq length)" = 0 ]
	[ "$(bpftool -j map dump pinned "$d/kr_qlb_configs" | jq '[.[] | select((.formatted.value.valid // .value.valid) == 1)] | length')" = 0 ]
	[ "$(bpftool -j map dump pinned "$d/kr_services" | jq '.[0].formatted.value.flags')" = 0 ]
}

@test "kernel: ring stage writes the server IDs of a backend new in the staged version (its connections are routed by CID before any apply)" {
	[ "$(id -u)" = 0 ] || skip "needs root"
	N=kr-qlbst-$$
	qlb_instance
	[ "$(bpftool -j map dump pinned "$d/kr_qlb_servers" | jq length)" = 6 ]
	# the staged version adds backend 10.2.0.14 with its server IDs
	jq '.rings[0].backends += [{ "address": "10.2.0.14:443", "mac": "02:00:00:00:00:14",
	      "quic_lb_server_ids": { "0": "0a04", "1": "0b0004" } }]' "$T/q.json" > "$T/q4.json"
	run -0 nsenter --net="/run/netns/$N" "$KK" ring stage r -c "$T/q4.json" --instance "$N"
	[ "$(bpftool -j map dump pinned "$d/kr_qlb_servers" | jq length)" = 8 ]
	# an apply of the old configuration keeps the table equal to it (docs/quic.md) ...
	run -0 nsenter --net="/run/netns/$N" "$KK" apply -c "$T/q.json" --instance "$N"
	[ "$(bpftool -j map dump pinned "$d/kr_qlb_servers" | jq length)" = 6 ]
	# ... and staging the same version again writes them back
	run -0 nsenter --net="/run/netns/$N" "$KK" ring stage r -c "$T/q4.json" --instance "$N"
	assert_output --partial "already staged"
	[ "$(bpftool -j map dump pinned "$d/kr_qlb_servers" | jq length)" = 8 ]
	# a CID the new server issued is routed by CID (to it) while the ring is only staged
	c4=$($K quic-lb encode --config-rotation 0 --server-id 0a04 --nonce 010203040506)
	send_quic "$c4" 3
	[ "$(qstat routed)" = 3 ]
	run -0 nsenter --net="/run/netns/$N" "$KK" ring migrate r --percent 100 --instance "$N"
	run -0 nsenter --net="/run/netns/$N" "$KK" ring commit r --instance "$N"
	send_quic "$c4" 2
	[ "$(qstat routed)" = 5 ]
	[ "$(qstat unknown_server_id)" = 0 ]
	# the same stage again changes nothing
	run -0 nsenter --net="/run/netns/$N" "$KK" apply -c "$T/q4.json" --instance "$N"
	[ "$(bpftool -j map dump pinned "$d/kr_qlb_servers" | jq length)" = 8 ]
}
