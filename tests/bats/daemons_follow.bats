#!/usr/bin/env bats
# The long-running processes follow their instance (docs/operations.md "Long-running
# processes"): the exporter and `status --watch` (text and --prometheus --output) keep their
# descriptors over hundreds of scrapes and rounds, hold none of an unloaded instance's maps
# or program (read from /proc/PID/fdinfo: map_id, prog_id), which therefore leave the kernel
# (bpftool), keep exporting it as keyrouter_up 0, and show a new load's maps; balance
# follows a reload.  A real instance (generic XDP on a veth) in a namespace of its own.
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load kr_instance

PORT=9437

setup() {
	kr_instance_setup
	needs_root
	N=kr-dmn-$$-$BATS_TEST_NUMBER
	PIDS=()
	instance
}

teardown() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	[ -n "${N:-}" ] && kr unload kre0 --instance "$N" >/dev/null 2>&1
	kr_instance_teardown
}

kr() { nsenter --net="/run/netns/$N" "$KK" "$@"; }

# A namespace with the veth pair kre0 (keyrouter, generic XDP) -- kre1, and a configuration
# of SERVICES (1 or 2) payload-keyed services on 10.99.1.1:7000.. whose two backends are
# reached over kre0 (l2: sent back out of kre0, where kre1 drops them).
config() {
	local svc='{ "name": "p", "vip": "10.99.1.1", "port": 7000, "key": { "type": "payload" },
	    "ring": "pool", "forward": { "mode": "l2" } }'
	[ "$1" = 2 ] && svc="$svc, "'{ "name": "q", "vip": "10.99.1.1", "port": 7001,
	    "key": { "type": "payload" }, "ring": "pool", "forward": { "mode": "l2" } }'
	cat >"$T/c$1.json" <<-EOF
	{ "instance": "$N",
	  "rings": [ { "name": "pool", "format": "v2", "point_multiple": 40, "backends": [
	      { "address": "10.99.0.11:7000", "mac": "02:00:00:00:99:11", "dev": "kre0" },
	      { "address": "10.99.0.12:7000", "mac": "02:00:00:00:99:12", "dev": "kre0" } ] } ],
	  "services": [ $svc ] }
	EOF
}

instance() {
	ip netns add "$N"
	ip netns exec "$N" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 net.ipv6.conf.all.disable_ipv6=1
	ip -n "$N" link add kre0 type veth peer name kre1
	ip -n "$N" addr add 10.99.0.1/24 dev kre0
	ip -n "$N" addr add 10.99.0.2/24 dev kre1
	ip -n "$N" link set lo up
	ip -n "$N" link set kre0 up
	ip -n "$N" link set kre1 up
	ip -n "$N" route add 10.99.1.1/32 via 10.99.0.1 dev kre1
	ip -n "$N" neigh replace 10.99.0.1 lladdr "$(ip -n "$N" -br link show kre0 | awk '{ print $3 }')" dev kre1 nud permanent
	config 1
	config 2
	kr load kre0 -c "$T/c1.json" --mode generic >/dev/null 2>&1
}

# send COUNT: COUNT UDP datagrams to the VIP's port 7000, each its own payload
send() {
	nsenter --net="/run/netns/$N" /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(int(sys.argv[1])):
    s.sendto(b"key-%d" % i, ("10.99.1.1", 7000))' "$1"
}

# scrape [COUNT [PORT]]: GET /metrics COUNT times (one client), the last body on stdout
scrape() {
	nsenter --net="/run/netns/$N" /usr/bin/python3 -c '
import http.client, sys
for i in range(int(sys.argv[1])):
    c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[2]), timeout=10)
    c.request("GET", "/metrics")
    r = c.getresponse()
    body = r.read()
    c.close()
    assert r.status == 200, r.status
sys.stdout.write(body.decode())' "${1:-1}" "${2:-$PORT}"
}

# The kernel ids of the instance: its program, the maps it uses and the tool's own.
ids() {
	local prog
	prog=$(kr status --json --instance "$N" | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["instance"]["prog_id"])')
	echo "prog $prog"
	bpftool -j prog show id "$prog" | /usr/bin/python3 -c 'import json, sys; [print("map", m) for m in json.load(sys.stdin)["map_ids"]]'
	for f in kr_ops_meta kr_ops_rings; do
		bpftool -j map show pinned "/sys/fs/bpf/keyrouter/$N/$f" | /usr/bin/python3 -c 'import json, sys; print("map", json.load(sys.stdin)["id"])'
	done
}

# What process PID holds: "prog ID" / "map ID" lines (its BPF descriptors' fdinfo).
held() {
	awk '/^prog_id:/ { print "prog", $2 } /^map_id:/ { print "map", $2 }' /proc/"$1"/fdinfo/* 2>/dev/null | sort -u
}

# The descriptors of PID between its rounds: the fewest of 10 looks (a round opens pins).
nfds() {
	local n min=
	for _ in $(seq 10); do
		n=$(ls /proc/"$1"/fd | wc -l)
		[ -z "$min" ] || [ "$n" -lt "$min" ] && min=$n
		sleep 0.02
	done
	echo "$min"
}

rss() { awk '/^VmRSS:/ { print $2 }' /proc/"$1"/status; }

# start NAME CMD...: run CMD in the namespace in the background, its pid in PIDS and $NAME
start() {
	local var=$1
	shift
	nsenter --net="/run/netns/$N" "$@" 3>&- &
	PIDS+=("$!")
	printf -v "$var" %s "$!"
}

wait_http() {
	for _ in $(seq 100); do
		scrape 1 "$1" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

# None of the ids in file $1 is held by process $2, and none is left in the kernel.
released() {
	held "$2" >"$T/held"
	run comm -12 <(sort -u "$1") "$T/held"
	assert_output ''
	# the kernel frees them once the last reference goes (after an RCU grace period)
	for _ in $(seq 50); do
		{ bpftool -j prog show | /usr/bin/python3 -c 'import json, sys; [print("prog", p["id"]) for p in json.load(sys.stdin)]'
		  bpftool -j map show | /usr/bin/python3 -c 'import json, sys; [print("map", m["id"]) for m in json.load(sys.stdin)]'
		} | sort -u >"$T/kernel"
		[ -z "$(comm -12 <(sort -u "$1") "$T/kernel")" ] && break
		sleep 0.1
	done
	run comm -12 <(sort -u "$1") "$T/kernel"
	assert_output ''
}

@test "exporter: 200 scrapes keep its descriptors and memory; after upgrade the old program, after unload the instance's programs and maps are held by nobody and freed" {
	start EX "$KK" exporter --listen "127.0.0.1:$PORT" --instance "$N"
	start ALL "$KK" exporter --listen "127.0.0.1:$((PORT + 1))"
	wait_http "$PORT"
	wait_http "$((PORT + 1))"
	scrape 1 >/dev/null
	f0=$(nfds "$EX")
	r0=$(rss "$EX")
	fa0=$(nfds "$ALL")
	scrape 200 >/dev/null
	scrape 20 "$((PORT + 1))" >/dev/null
	f1=$(nfds "$EX")
	r1=$(rss "$EX")
	fa1=$(nfds "$ALL")
	echo "exporter fds: $f0 -> $f1, rss $r0 -> $r1 KiB after 200 scrapes; every instance's: fds $fa0 -> $fa1 after 20"
	[ "$f1" -le $((f0 + 2)) ]
	[ "$fa1" -le $((fa0 + 2)) ]
	[ "$r1" -le $((r0 + 2048)) ]
	# an upgrade (a new program, the same maps): the superseded program is held by nobody
	ids | grep '^prog' >"$T/old"
	kr upgrade kre0 --instance "$N" >/dev/null 2>&1
	scrape 3 >/dev/null
	scrape 3 "$((PORT + 1))" >/dev/null
	released "$T/old" "$EX"
	released "$T/old" "$ALL"
	ids >"$T/ids"
	[ "$(grep -c '^map' "$T/ids")" -ge 20 ]
	! cmp -s "$T/old" <(grep '^prog' "$T/ids")
	kr unload kre0 --instance "$N" >/dev/null 2>&1
	scrape 3 >/dev/null
	scrape 3 "$((PORT + 1))" >/dev/null
	released "$T/ids" "$EX"
	released "$T/ids" "$ALL"
}

@test "exporter: an unloaded instance stays as keyrouter_up 0 (--instance, and every instance it exported); a new load's series and counters" {
	start EX "$KK" exporter --listen "127.0.0.1:$PORT" --instance "$N" 2>"$T/ex.err"
	start ALL "$KK" exporter --listen "127.0.0.1:$((PORT + 1))"
	wait_http "$PORT"
	wait_http "$((PORT + 1))"
	run -0 scrape 1 "$((PORT + 1))"
	assert_line "keyrouter_up{keyrouter_instance=\"$N\"} 1"
	kr unload kre0 --instance "$N" >/dev/null 2>&1
	run -0 scrape
	assert_line "keyrouter_up{keyrouter_instance=\"$N\"} 0"
	# the exporter of every instance too: it exported this one, it keeps it as 0
	run -0 scrape 1 "$((PORT + 1))"
	assert_line "keyrouter_up{keyrouter_instance=\"$N\"} 0"
	# loaded again (2 services, new maps): the new instance's series and counters
	kr load kre0 -c "$T/c2.json" --mode generic >/dev/null 2>&1
	send 20
	for p in "$PORT" "$((PORT + 1))"; do
		run -0 scrape 1 "$p"
		assert_line "keyrouter_up{keyrouter_instance=\"$N\"} 1"
		assert_line "keyrouter_services{keyrouter_instance=\"$N\"} 2"
		routed=$(echo "$output" | awk -v i="$N" '$1 == "keyrouter_packets_total{keyrouter_instance=\"" i "\",outcome=\"routed\"}" { print $2 }')
		[ "${routed:-0}" -ge 20 ]
	done
	grep -q "not loaded any more (unloaded): keyrouter_up 0" "$T/ex.err"
	grep -q "loaded (program id [0-9]*): exporting its maps" "$T/ex.err"
}

# rounds FILE: the rounds of `status --watch` in FILE (one "instance NAME:" line each)
rounds() { grep -c "^instance $N:" "$1" || true; }
rounds_ge() { [ "$(rounds "$1")" -ge "$2" ]; }

wait_for() { # COMMAND...: until it succeeds (at most 10 s)
	for _ in $(seq 100); do
		"$@" && return 0
		sleep 0.1
	done
	"$@"
}

@test "status --watch and status --prometheus --output F --watch: descriptors stable over rounds; after unload nothing held, which leaves the kernel; a new load shown" {
	start W "$KK" status --watch 0.05 --instance "$N" >"$T/w.out" 2>"$T/w.err"
	start P "$KK" status --prometheus --output "$T/m.prom" --watch 0.05 --instance "$N" 2>"$T/p.err"
	wait_for rounds_ge "$T/w.out" 3
	fw0=$(nfds "$W")
	fp0=$(nfds "$P")
	wait_for rounds_ge "$T/w.out" 40
	fw1=$(nfds "$W")
	fp1=$(nfds "$P")
	echo "status --watch fds $fw0 -> $fw1, --prometheus --output --watch $fp0 -> $fp1 ($(rounds "$T/w.out") rounds)"
	[ "$fw1" -le $((fw0 + 1)) ]
	[ "$fp1" -le $((fp0 + 1)) ]
	ids >"$T/ids"
	kr unload kre0 --instance "$N" >/dev/null 2>&1
	wait_for grep -q "is not loaded any more (unloaded)" "$T/w.err"
	wait_for grep -qx "keyrouter_up{keyrouter_instance=\"$N\"} 0" "$T/m.prom"
	released "$T/ids" "$W"
	released "$T/ids" "$P"
	# loaded again with a second service: both show the new instance
	kr load kre0 -c "$T/c2.json" --mode generic >/dev/null 2>&1
	wait_for grep -q "was loaded again" "$T/w.err"
	wait_for grep -qx "keyrouter_services{keyrouter_instance=\"$N\"} 2" "$T/m.prom"
	n=$(rounds "$T/w.out")
	wait_for rounds_ge "$T/w.out" "$((n + 2))"
	tail -n 40 "$T/w.out" | grep -q "10.99.1.1:7001"
	[ "$(nfds "$W")" -le $((fw0 + 1)) ]
}

# exited PID: RC = PID's exit status once it exited (at most 10 s; 124: still running)
exited() {
	RC=0
	wait_for eval "! kill -0 $1 2>/dev/null" || { RC=124; return 0; }
	wait "$1" || RC=$?
}

@test "balance refuses another network namespace; balance, top and trace stop with a message and status 1 on unload + load" {
	run -1 "$KK" balance --ring pool --instance "$N" --once --no-replicas
	assert_output --partial "in another network namespace"
	assert_output --partial "nothing was changed"
	start B "$KK" balance --ring pool --instance "$N" --interval 0.2 --no-replicas >/dev/null 2>"$T/b.err"
	start TOP "$KK" top --interval 0.2 --instance "$N" >/dev/null 2>"$T/top.err"
	sleep 1
	kill -0 "$B"
	kill -0 "$TOP"
	kr unload kre0 --instance "$N" >/dev/null 2>&1
	kr load kre0 -c "$T/c2.json" --mode generic >/dev/null 2>&1
	exited "$B"
	[ "$RC" = 1 ]
	exited "$TOP"
	[ "$RC" = 1 ]
	cat "$T/b.err" "$T/top.err"
	grep -Eq "balance: instance '$N' was (unloaded|loaded again): .*stopping" "$T/b.err"
	grep -Eq "top: instance '$N' was (unloaded|loaded again): .*stopping" "$T/top.err"
	# trace: the same on an unload alone
	start TR "$KK" trace --instance "$N" 2>"$T/tr.err" >/dev/null
	sleep 0.5
	kr unload kre0 --instance "$N" >/dev/null 2>&1
	exited "$TR"
	[ "$RC" = 1 ]
	grep -q "trace: instance '$N' was unloaded" "$T/tr.err"
}
