#!/usr/bin/env bats
# kr_service_ports: `keyrouter apply` marks the UDP ports without an exact-VIP service, so
# that the data path skips the exact (VIP, port) lookup there; a port that gets an exact
# service loses its mark (the data path's side, "exact, else the port's wildcard" with the
# marks set, is checked packet by packet against a model by test_packet_fuzz).
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

# config FILE "PORT:VIP ..." (VIP * = the wildcard)
config() {
	python3 - "$@" <<'PY'
import json, sys
svcs = []
for i, s in enumerate(sys.argv[2].split()):
    port, vip = s.split(":", 1)
    # named by what they match: a service keeps its name (and so its per-service counter
    # id, kr_service.stats_id) from one configuration to the next
    name = "s%d_%s" % (int(port), vip.replace("*", "any").replace(":", "_"))
    svcs.append({"name": name, "vip": vip, "port": int(port), "key": {"type": "payload"},
                 "ring": "r", "forward": {"mode": "l2"}})
cfg = {"rings": [{"name": "r", "format": "v2", "point_multiple": 16,
                  "backends": [{"address": "10.0.0.1:1", "mac": "02:00:00:00:00:01"},
                               {"address": "10.0.0.2:1", "mac": "02:00:00:00:00:02"}]}],
       "services": svcs}
open(sys.argv[1], "w").write(json.dumps(cfg))
PY
}

# marks PORT... -> "PORT=0|1 ..." (1: no exact service, the exact lookup is skipped)
marks() {
	bpftool -j map lookup pinned "/sys/fs/bpf/keyrouter/$N/kr_service_ports" key 0 0 0 0 |
		python3 -c '
import json, sys
v = json.load(sys.stdin)["value"]
b = [int(x, 16) for x in v]
print(" ".join("%s=%d" % (p, (b[int(p) >> 3] >> (int(p) & 7)) & 1) for p in sys.argv[1:]))
' "$@"
}

# ns_load CONFIG: namespace $N with a veth pair, keyrouter loaded on v0 (generic XDP)
ns_load() {
	ip netns add "$N"
	ip -n "$N" link add v0 type veth peer name v1
	ip -n "$N" link set v0 up
	ip -n "$N" link set v1 up
	run -0 nsenter --net="/run/netns/$N" "$KK" load v0 -c "$1" --mode generic --instance "$N"
}

@test "kernel: apply marks the ports without an exact VIP, and unmarks a port that gets one" {
	[ "$(id -u)" = 0 ] || skip "needs root"
	[ -f "${OUT:-build}/bpf/keyrouter.bpf.o" ] || skip "no BPF object"
	N=kr-sp-$$
	config "$T/a.json" "53:192.0.2.53 53:* 11211:* 9000:*"
	config "$T/b.json" "53:* 11211:* 9000:192.0.2.9 9000:2001:db8::9"
	ns_load "$T/a.json"
	run -0 marks 53 11211 9000 1234 0 65535
	assert_output "53=0 11211=1 9000=1 1234=1 0=1 65535=1"
	run -0 nsenter --net="/run/netns/$N" "$KK" apply -c "$T/b.json" --instance "$N"
	run -0 marks 53 11211 9000 1234
	assert_output "53=1 11211=1 9000=0 1234=1"
	# a dry run writes nothing
	run -0 nsenter --net="/run/netns/$N" "$KK" apply -c "$T/a.json" --instance "$N" --dry-run
	assert_output --partial "would remove 2 services"
	run -0 marks 53 9000
	assert_output "53=1 9000=0"
}

# wild PORT... -> "PORT=H/same ..." per port: H the half of kr_wild_svcs its entry points
# into (- : no entry), same: the copy there equals the port's wildcard in kr_services
wild() {
	local p w
	for p in "$@"; do
		w=$(bpftool -j map lookup pinned "/sys/fs/bpf/keyrouter/$N/kr_port_wild" \
			key $((p & 255)) $((p >> 8)) 0 0 | python3 -c '
import json, sys
v = json.load(sys.stdin)["value"]
print(sum(int(x, 16) << (8 * i) for i, x in enumerate(v)))')
		if [ "$w" = 0 ]; then
			printf '%s=- ' "$p"
			continue
		fi
		i=$((w - 1))
		copy=$(bpftool -j map lookup pinned "/sys/fs/bpf/keyrouter/$N/kr_wild_svcs" \
			key $((i & 255)) $((i >> 8)) 0 0 | python3 -c 'import json,sys; print(json.load(sys.stdin)["value"])')
		orig=$(bpftool -j map lookup pinned "/sys/fs/bpf/keyrouter/$N/kr_services" \
			key $(printf '0 %.0s' $(seq 16)) $((p >> 8)) $((p & 255)) 17 0 |
			python3 -c 'import json,sys; print(json.load(sys.stdin)["value"])')
		printf '%s=%d/%s ' "$p" $((i / 1024)) "$([ "$copy" = "$orig" ] && echo same || echo differs)"
	done
	echo
}

@test "kernel: apply copies the wildcard services by port (kr_port_wild), into the half no port uses" {
	[ "$(id -u)" = 0 ] || skip "needs root"
	[ -f "${OUT:-build}/bpf/keyrouter.bpf.o" ] || skip "no BPF object"
	N=kr-pw-$$
	config "$T/a.json" "53:192.0.2.53 53:* 11211:* 9000:*"
	config "$T/b.json" "53:* 11211:* 9000:192.0.2.9 9000:2001:db8::9"
	ns_load "$T/a.json"
	run -0 wild 53 11211 9000 1234
	assert_output "53=0/same 11211=0/same 9000=0/same 1234=- "
	# 9000 loses its wildcard; the others are copied into the other half
	run -0 nsenter --net="/run/netns/$N" "$KK" apply -c "$T/b.json" --instance "$N"
	run -0 wild 53 11211 9000
	assert_output "53=1/same 11211=1/same 9000=- "
	run -0 nsenter --net="/run/netns/$N" "$KK" apply -c "$T/a.json" --instance "$N"
	run -0 wild 53 11211 9000
	assert_output "53=0/same 11211=0/same 9000=0/same "
}
