#!/usr/bin/env bats
# Faults under a running router (the kill -9 during apply/stage/commit tests belong to the
# operations tests).  Each: the data path keeps its state, the tool fails clearly or
# cleans up, nothing is left behind.
#   - the attached interface is removed
#   - bpffs is unmounted (in a private mount namespace, so the host's pins stay): the
#     attached program keeps running with its maps, the tool refuses to act
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load kr_instance

teardown() {
	kr_instance_teardown
}

setup() {
	kr_instance_setup
	[ "$(id -u)" = 0 ] || skip "needs root"
	[ -f "${OUT:-build}/bpf/keyrouter.bpf.o" ] || skip "no BPF object"
	cat > "$T/c.json" <<'JSON'
{ "rings": [ { "name": "r", "format": "v2", "backends": [ { "address": "10.0.0.1:1" }, { "address": "10.0.0.2:1" } ] } ],
  "services": [ { "name": "p", "vip": "10.1.0.1", "port": 9, "key": { "type": "payload" }, "ring": "r",
                  "forward": { "mode": "ipip", "source4": "10.0.0.9" } } ] }
JSON
	N=kr-fault-$$-$BATS_TEST_NUMBER
	ip netns add "$N"
	ip -n "$N" link add v0 type veth peer name v1
	ip -n "$N" link set v0 up
	ip -n "$N" link set v1 up
	run -0 kr load v0 -c "$T/c.json" --mode generic
	PROG=$(ip -n "$N" -d link show v0 | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p')
	[ -n "$PROG" ]
}

kr() { nsenter --net="/run/netns/$N" "$KK" "$@" --instance "$N"; }

@test "fault: the attached interface is removed -- state readable, status 3, apply refuses (then re-attaches once it is back), unload cleans up" {
	ip -n "$N" link del v0
	# readable, but not attached: status says so and exits 3
	run -3 kr status
	assert_output --partial "ring r (id 0)"
	assert_output --partial "its interface 'v0' (index"
	# apply cannot attach it anywhere: it fails, says why, changes nothing
	run -1 kr apply -c "$T/c.json"
	assert_output --partial "its interface 'v0' is gone, so its program cannot be attached again"
	refute_output --partial "nothing changed"
	# the interface made again under its name: apply attaches the (pinned) program to it
	ip -n "$N" link add v0 type veth peer name v1
	ip -n "$N" link set v0 up
	run -0 kr apply -c "$T/c.json"
	assert_output --partial "attached it again (generic mode)"
	run -0 kr status
	assert_line --index 0 --partial "v0 (attached)"
	[ "$(ip -n "$N" -d link show v0 | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p')" = "$PROG" ]
	ip -n "$N" link del v0
	run -0 kr unload v0
	assert_output --partial "interface 'v0'"
	assert_output --partial "is gone; only the pins are removed"
	[ ! -e "/sys/fs/bpf/keyrouter/$N" ]
	# its pin was the last reference: the kernel frees the program (asynchronously)
	for _ in $(seq 1 50); do
		bpftool prog show id "$PROG" >/dev/null 2>&1 || break
		sleep 0.1
	done
	! bpftool prog show id "$PROG" >/dev/null 2>&1 || fail "program $PROG still exists"
}

@test "fault: bpffs unmounted -- the program keeps routing with its maps; the tool refuses clearly" {
	# a UDP packet for the service (payload "key")
	python3 -c '
import struct, sys
pl = b"key"
udp = struct.pack("!HHHH", 1234, 9, 8 + len(pl), 0) + pl
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0, bytes([10,0,0,7]), bytes([10,1,0,1]))
sys.stdout.buffer.write(b"\x02\x00\x00\x00\x00\xaa" + b"\x02\x00\x00\x00\x00\xcc" + b"\x08\x00" + ip + udp)' > "$T/pkt"
	run -0 unshare -m --propagation private sh -c "
		umount /sys/fs/bpf || exit 9
		nsenter --net=/run/netns/$N $KK status --instance $N; echo status=\$?
		nsenter --net=/run/netns/$N $KK apply -c $T/c.json --instance $N; echo apply=\$?
		bpftool prog run id $PROG data_in $T/pkt repeat 1 >/dev/null 2>&1; echo run=\$?
		ip -n $N -d link show v0 | grep -o 'prog/xdp id [0-9]*'"
	assert_line "status=1"
	assert_line "apply=1"
	assert_line "run=0"
	assert_line "prog/xdp id $PROG"
	assert_output --partial "/sys/fs/bpf/keyrouter/$N"
	# back in the host's mount namespace: the same instance, and the packet the program
	# ran while bpffs was gone was counted in its (pinned) maps and went through the
	# published ring (its slot counter; the ipip forward itself needs a route test_run
	# does not have)
	run -0 kr status
	assert_output --regexp "seen [1-9]"
	assert_line --regexp 'slot 0 \(active\): digest .* packets [1-9][0-9]*$'
	[ "$(ip -n "$N" -d link show v0 | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p')" = "$PROG" ]
}
