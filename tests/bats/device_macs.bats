#!/usr/bin/env bats
# kr_device_macs: `keyrouter apply` writes every device entry of kr_devices (the loaded
# interface, the backends' "dev") also into the ARRAY kr_device_macs[ifindex], which l2
# forwarding reads instead of the hash map; an entry that differs between the two (here: a
# device whose MAC changed, and an array entry cleared by hand) is rewritten in both by the
# next apply.  (The data path's side, array entry first, else kr_devices, else the frame's
# own destination MAC, is checked packet by packet by test_packets.)
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load kr_instance

teardown() {
	kr_instance_teardown
}

setup() {
	kr_instance_setup
}

# config FILE DEV: one l2 service, two backends, the second leaving by DEV
config() {
	cat >"$1" <<JSON
{ "rings": [ { "name": "r", "format": "v2", "point_multiple": 16, "backends": [
    { "address": "10.0.0.1:1", "mac": "02:00:00:00:00:01" },
    { "address": "10.0.0.2:1", "mac": "02:00:00:00:00:02", "dev": "$2" } ] } ],
  "services": [ { "name": "s", "vip": "*", "port": 9000, "key": { "type": "payload" },
                  "ring": "r", "forward": { "mode": "l2" } } ] }
JSON
}

# entry MAP IFINDEX -> "aa:bb:cc:dd:ee:ff/FLAGS", or "none"
entry() {
	bpftool -j map lookup pinned "/sys/fs/bpf/keyrouter/$N/$1" \
		key $(printf '%d %d %d %d' $(($2 & 255)) $(($2 >> 8 & 255)) $(($2 >> 16 & 255)) 0) \
		2>/dev/null | python3 -c '
import json, sys
t = sys.stdin.read()
if not t.strip():
    print("none"); sys.exit(0)
v = [int(x, 16) for x in json.loads(t)["value"]]
print(":".join("%02x" % b for b in v[:6]) + "/%d" % v[6])'
}

ifindex() {
	ip -n "$N" -j link show "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["ifindex"])'
}

mac() {
	ip -n "$N" -j link show "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])'
}

@test "kernel: apply writes the devices into kr_device_macs too, and rewrites an entry that differs" {
	[ "$(id -u)" = 0 ] || skip "needs root"
	[ -f "${OUT:-build}/bpf/keyrouter.bpf.o" ] || skip "no BPF object"
	N=kr-dm-$$
	ip netns add "$N"
	ip -n "$N" link add v0 type veth peer name v1
	ip -n "$N" link add e0 type veth peer name e1
	for d in v0 v1 e0 e1; do ip -n "$N" link set "$d" up; done
	ip -n "$N" link set e0 address 02:00:00:00:0e:00
	config "$T/a.json" e0
	run -0 nsenter --net="/run/netns/$N" "$KK" load v0 -c "$T/a.json" --mode generic --instance "$N"
	v0=$(ifindex v0) e0=$(ifindex e0)
	run -0 entry kr_device_macs "$v0"
	assert_output "$(mac v0)/1"
	run -0 entry kr_devices "$v0"
	assert_output "$(mac v0)/1"
	run -0 entry kr_device_macs "$e0"
	assert_output "02:00:00:00:0e:00/1"
	run -0 entry kr_devices "$e0"
	assert_output "02:00:00:00:0e:00/1"
	# the device's MAC changes: the next apply rewrites both entries
	ip -n "$N" link set e0 address 02:00:00:00:0e:01
	run -0 nsenter --net="/run/netns/$N" "$KK" apply -c "$T/a.json" --instance "$N"
	run -0 entry kr_device_macs "$e0"
	assert_output "02:00:00:00:0e:01/1"
	run -0 entry kr_devices "$e0"
	assert_output "02:00:00:00:0e:01/1"
	# an array slot emptied by hand (kr_devices still right): apply writes it again
	bpftool map update pinned "/sys/fs/bpf/keyrouter/$N/kr_device_macs" \
		key $(printf '%d %d %d %d' $((e0 & 255)) $((e0 >> 8 & 255)) 0 0) value 0 0 0 0 0 0 0 0
	run -0 entry kr_device_macs "$e0"
	assert_output "00:00:00:00:00:00/0"
	run -0 nsenter --net="/run/netns/$N" "$KK" apply -c "$T/a.json" --instance "$N"
	run -0 entry kr_device_macs "$e0"
	assert_output "02:00:00:00:0e:01/1"
}
