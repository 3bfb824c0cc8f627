#!/usr/bin/env bats
# The Prometheus exposition (`status --prometheus`, `status --prometheus --output FILE`,
# `exporter --listen` over HTTP), checked by Prometheus' own promtool (Debian's package,
# only the binary extracted: scripts/promtool.sh) and by what it must say: one group per
# family, HELP and TYPE for each, outcome counters that add up to the packets sent,
# backend state as a value (the series keeps its labels), label values escaped (the
# interface is named q"\z), a valid document when nothing is loaded, and an exporter that
# a client holding many slow connections (tests/bats/exporter_slow.py) cannot silence.
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load kr_instance

IFACE='q"\z'
PORT=9437

setup_file() {
	cd "$BATS_TEST_DIRNAME/../.."
	PROMTOOL=$(scripts/promtool.sh) || return 1
	export PROMTOOL
}

setup() {
	kr_instance_setup
	N=kr-prom-$$-$BATS_TEST_NUMBER
}

teardown() {
	[ -n "${EXPORTER_PID:-}" ] && kill "$EXPORTER_PID" 2>/dev/null
	[ -n "${SLOW_PID:-}" ] && kill "$SLOW_PID" 2>/dev/null
	[ -n "${PROM_PID:-}" ] && kill "$PROM_PID" 2>/dev/null
	if [ -n "${N:-}" ]; then
		nsenter --net="/run/netns/$N" "$KK" unload "$IFACE" --instance "$N" >/dev/null 2>&1
	fi
	kr_instance_teardown
}

kr() { nsenter --net="/run/netns/$N" "$KK" "$@"; }

# A namespace with the veth pair IFACE (keyrouter, generic XDP) -- v1 (the sender), a
# payload-keyed service on 10.99.1.1:7000 whose two backends are reached over IFACE (l2:
# the program sends them back out of IFACE, where v1 drops them), and one VIP port
# (7001) whose key is the payload at offset 64: short packets have no key and are dropped
# by the service's policy.
instance() {
	ip netns add "$N"
	# no IPv6 on the links: their router solicitations and MLD reports would reach the
	# program at any moment (passed, no_service) and break "no traffic since" comparisons
	ip netns exec "$N" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 net.ipv6.conf.all.disable_ipv6=1
	ip -n "$N" link add "$IFACE" type veth peer name v1
	ip -n "$N" addr add 10.99.0.1/24 dev "$IFACE"
	ip -n "$N" addr add 10.99.0.2/24 dev v1
	ip -n "$N" link set lo up
	ip -n "$N" link set "$IFACE" up
	ip -n "$N" link set v1 up
	cat >"$T/c.json" <<-EOF
	{ "instance": "$N",
	  "rings": [ { "name": "pool", "format": "v2", "point_multiple": 40, "backends": [
	      { "address": "10.99.0.11:7000", "mac": "02:00:00:00:99:11", "dev": "$(printf '%s' "$IFACE" | sed 's/\\/\\\\/g; s/"/\\"/g')" },
	      { "address": "10.99.0.12:7000", "mac": "02:00:00:00:99:12", "dev": "$(printf '%s' "$IFACE" | sed 's/\\/\\\\/g; s/"/\\"/g')" } ] } ],
	  "services": [
	    { "name": "p", "vip": "10.99.1.1", "port": 7000, "key": { "type": "payload" },
	      "ring": "pool", "forward": { "mode": "l2" } },
	    { "name": "q", "vip": "10.99.1.1", "port": 7001,
	      "key": { "type": "payload", "offset": 64, "length": 8 },
	      "ring": "pool", "forward": { "mode": "l2" }, "policy": { "no_key": "drop" } } ] }
	EOF
	kr load "$IFACE" -c "$T/c.json" --mode generic
	# the sender reaches the VIP through IFACE
	ip -n "$N" route add 10.99.1.1/32 via 10.99.0.1 dev v1
	ip -n "$N" neigh replace 10.99.0.1 lladdr "$(ip -n "$N" -br link show "$IFACE" | awk '{ print $3 }')" dev v1 nud permanent
}

# send COUNT PORT: COUNT UDP datagrams to the VIP, each its own payload
send() {
	nsenter --net="/run/netns/$N" /usr/bin/python3 - "$1" "$2" <<-'EOF'
	import socket, sys
	s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
	for i in range(int(sys.argv[1])):
	    s.sendto(b"key-%d" % i, ("10.99.1.1", int(sys.argv[2])))
	EOF
}

# value FILE 'SERIES' -> the sample's value (exact series text, labels included)
value() { awk -v s="$2" 'index($0, s " ") == 1 { print $NF }' "$1"; }

# Every sample's family has exactly one HELP and one TYPE, before its samples, and its
# samples are one contiguous group.
grouped() {
	awk '
	/^# HELP / { help[$3]++; next }
	/^# TYPE / { if (type[$3]++) { print "second TYPE for " $3; bad = 1 }
		     if ($3 in done) { print "family " $3 " split"; bad = 1 }
		     if (cur != "") done[cur] = 1; cur = $3; next }
	/^#/ { next }
	{ name = $0; sub(/[{ ].*/, "", name)
	  if (name != cur) { print "sample " name " outside its family group (" cur ")"; bad = 1 }
	  if (!help[name]) { print "no HELP for " name; bad = 1 } }
	END { exit bad }' "$1"
}

@test "nothing loaded: status --prometheus prints keyrouter_up 0 (exit 0) and promtool accepts it" {
	run -0 $K status --prometheus --instance "kr-prom-none-$$"
	assert_output --partial "keyrouter_up{keyrouter_instance=\"kr-prom-none-$$\"} 0"
	assert_output --partial '# TYPE keyrouter_up gauge'
	$K status --prometheus --instance "kr-prom-none-$$" | "$PROMTOOL" check metrics
	# a pin directory that holds no keyrouter maps is "not loaded" too, not an error
	mkdir -p "$T/empty"
	run -0 $K status --prometheus --pin-dir "$T/empty"
	assert_output --partial '} 0'
}

@test "loaded: promtool check metrics passes; families grouped with HELP/TYPE; outcomes add up to the packets sent" {
	t0=$(date +%s)
	instance
	t1=$(date +%s)
	kr status --prometheus --instance "$N" >"$T/m0"
	cat "$T/m0"
	"$PROMTOOL" check metrics <"$T/m0"
	grouped "$T/m0"
	i='keyrouter_instance="'$N'"'
	[ "$(value "$T/m0" "keyrouter_up{$i}")" = 1 ]
	[ "$(value "$T/m0" "keyrouter_read_errors{$i}")" = 0 ]
	[ "$(value "$T/m0" "keyrouter_services{$i}")" = 2 ]
	[ "$(value "$T/m0" "keyrouter_ring_slot_backends{$i,ring=\"pool\",slot=\"0\"}")" = 2 ]
	[ "$(value "$T/m0" "keyrouter_ring_slot_points{$i,ring=\"pool\",slot=\"0\"}")" = 80 ]
	# the load time to the millisecond, between the clock before and after the load
	ts=$(value "$T/m0" "keyrouter_loaded_timestamp_seconds{$i}")
	[[ $ts =~ ^[0-9]{10}\.[0-9]{3}$ ]]
	[ "${ts%.*}" -ge "$t0" ]
	[ "${ts%.*}" -le "$t1" ]
	# the interface name q"\z, escaped as the format wants
	grep -F "keyrouter_info{$i,interface=\"q\\\"\\\\z\",mode=\"generic\",version=" "$T/m0"
	# and status --json is JSON with that name in it (jq reads it back, loaded_ns exact)
	kr status --json --instance "$N" >"$T/s.json"
	[ "$(jq -r .instance.interface "$T/s.json")" = "$IFACE" ]
	[ "$(jq -r '.instance.loaded_ns | length' "$T/s.json")" = 19 ]
	[ "$(jq -r '.instance.loaded_s | floor' "$T/s.json")" = "${ts%.*}" ]

	send 200 7000
	send 30 7001
	kr status --prometheus --instance "$N" >"$T/m1"
	"$PROMTOOL" check metrics <"$T/m1"
	d() { echo $(( $(value "$T/m1" "$1") - $(value "$T/m0" "$1") )); }
	routed=$(d "keyrouter_packets_total{$i,outcome=\"routed\"}")
	dropped=$(d "keyrouter_packets_total{$i,outcome=\"dropped\"}")
	nokey=$(d "keyrouter_dropped_packets_total{$i,reason=\"no_key\"}")
	unrouted=$(d "keyrouter_unrouted_packets_total{$i,reason=\"no_key\"}")
	echo "routed +$routed dropped +$dropped (no_key +$nokey, unrouted no_key +$unrouted)"
	[ "$routed" = 200 ]
	[ "$dropped" = 30 ]
	[ "$nokey" = 30 ]
	[ "$unrouted" = 30 ]
	# per backend: the two backends' packets add up to the routed ones
	be=$(awk -v i="$i" 'index($0, "keyrouter_backend_packets_total{" i) == 1 { s += $NF } END { print s }' "$T/m1")
	[ "$be" = 200 ]
	# sum() over outcomes = every packet the program saw (the stack's own packets too)
	seen=$(awk -v i="$i" 'index($0, "keyrouter_packets_total{" i) == 1 { s += $NF } END { print s }' "$T/m1")
	[ "$seen" -ge 230 ]
	# the reasons add up to their outcome: unrouted = passed + dropped, dropped reasons = dropped
	fam() { awk -v p="$1{$i," 'index($0, p) == 1 { s += $NF } END { print s + 0 }' "$T/m1"; }
	passed=$(value "$T/m1" "keyrouter_packets_total{$i,outcome=\"passed\"}")
	dropped=$(value "$T/m1" "keyrouter_packets_total{$i,outcome=\"dropped\"}")
	echo "unrouted $(fam keyrouter_unrouted_packets_total) = passed $passed + dropped $dropped; dropped reasons $(fam keyrouter_dropped_packets_total)"
	[ "$(fam keyrouter_unrouted_packets_total)" = $((passed + dropped)) ]
	[ "$(fam keyrouter_dropped_packets_total)" = "$dropped" ]
}

@test "packets a ring slot could not route are counted by reason in the slot: ring status, --json and keyrouter_ring_slot_unrouted_packets_total agree with the program's own counters" {
	instance
	i='keyrouter_instance="'$N'"'
	send 20 7000
	kr backend set 10.99.0.11:7000 down --instance "$N"
	kr backend set 10.99.0.12:7000 down --instance "$N"
	kr status --prometheus --instance "$N" >"$T/m0"
	send 40 7000
	kr status --prometheus --instance "$N" >"$T/m1"
	"$PROMTOOL" check metrics <"$T/m1"
	grouped "$T/m1"
	d() { echo $(( $(value "$T/m1" "$1") - $(value "$T/m0" "$1") )); }
	s='ring="pool",slot="0"'
	[ "$(d "keyrouter_unrouted_packets_total{$i,reason=\"all_down\"}")" = 40 ]
	[ "$(d "keyrouter_ring_slot_unrouted_packets_total{$i,$s,reason=\"all_down\"}")" = 40 ]
	[ "$(value "$T/m1" "keyrouter_ring_slot_unrouted_packets_total{$i,$s,reason=\"all_down\"}")" = 40 ]
	for r in no_ring bad_image walk_limit; do
		[ "$(value "$T/m1" "keyrouter_ring_slot_unrouted_packets_total{$i,$s,reason=\"$r\"}")" = 0 ]
	done
	[ "$(value "$T/m1" "keyrouter_ring_slot_packets_total{$i,$s}")" = 20 ]
	run -0 kr ring status pool --instance "$N"
	assert_output --partial "not routed (the service's no-route policy applied): no ring 0, bad image 0, all down 40, walk limit 0"
	run -0 kr ring status pool --json --instance "$N"
	[ "$(jq -r '.[0].slots[0] | [.all_down, .no_ring, .bad_image, .walk_limit, .packets] | join(" ")' <<<"$output")" = "40 0 0 0 20" ]
}

@test "backend state is a value: down changes keyrouter_backend_state/up, not the series' labels" {
	instance
	# its id: the canonical one, its home (docs/operations.md "Backend identity")
	id=$(/usr/bin/python3 "$BATS_TEST_DIRNAME/backend_ids_ref.py" home 10.99.0.11:7000)
	s='keyrouter_backend_state{keyrouter_instance="'$N'",backend="10.99.0.11:7000",id="'$id'"}'
	u='keyrouter_backend_up{keyrouter_instance="'$N'",backend="10.99.0.11:7000",id="'$id'"}'
	r='keyrouter_backend_rings{keyrouter_instance="'$N'",backend="10.99.0.11:7000",id="'$id'"}'
	kr status --prometheus --instance "$N" >"$T/a"
	[ "$(value "$T/a" "$s")" = 0 ]
	[ "$(value "$T/a" "$u")" = 1 ]
	[ "$(value "$T/a" "$r")" = 1 ]
	kr backend set 10.99.0.11:7000 down --instance "$N"
	kr status --prometheus --instance "$N" >"$T/b"
	[ "$(value "$T/b" "$s")" = 1 ]
	[ "$(value "$T/b" "$u")" = 0 ]
	kr backend set 10.99.0.11:7000 drain --instance "$N"
	kr status --prometheus --instance "$N" >"$T/c"
	[ "$(value "$T/c" "$s")" = 2 ]
	# same series, same count: nothing appeared or disappeared
	diff <(sed 's/ [^ ]*$//' "$T/a" | grep -v '^#' | sort) <(sed 's/ [^ ]*$//' "$T/c" | grep -v '^#' | sort)
}

@test "without CAP_SYS_ADMIN the ring images cannot be read: keyrouter_read_errors says so (and promtool still accepts the rest)" {
	instance
	nsenter --net="/run/netns/$N" setpriv --inh-caps=-all --ambient-caps=-all --bounding-set=-all,+bpf -- \
		"$KK" status --prometheus --instance "$N" >"$T/m"
	"$PROMTOOL" check metrics <"$T/m"
	[ "$(value "$T/m" "keyrouter_up{keyrouter_instance=\"$N\"}")" = 1 ]
	[ "$(value "$T/m" "keyrouter_read_errors{keyrouter_instance=\"$N\"}")" -gt 0 ]
}

@test "a read-only /sys/fs/bpf (the exporter unit's ProtectKernelTunables) still reads everything" {
	instance
	kr status --prometheus --instance "$N" >"$T/rw"
	run -0 unshare -m sh -c 'mount --make-rprivate / && mount --bind /sys/fs/bpf /sys/fs/bpf &&
		mount -o remount,bind,ro /sys/fs/bpf && ! touch /sys/fs/bpf/kr-ro-probe 2>/dev/null &&
		exec "$1" status --prometheus --instance "$2"' sh "$KK" "$N"
	echo "$output" >"$T/ro"
	grep -Fx "keyrouter_read_errors{keyrouter_instance=\"$N\"} 0" "$T/ro"
	# the same series (no traffic in between)
	diff <(grep -v '^#' "$T/rw" | sed 's/ [^ ]*$//') <(grep -v '^#' "$T/ro" | sed 's/ [^ ]*$//')
}

@test "status --prometheus --output FILE: written atomically (a new file renamed over the old), no temporary left" {
	instance
	out=$T/tf/keyrouter.prom
	mkdir -p "$T/tf"
	run -0 kr status --prometheus --instance "$N" --output "$out"
	assert_output ''
	"$PROMTOOL" check metrics <"$out"
	ino1=$(stat -c %i "$out")
	kr status --prometheus --instance "$N" --output "$out"
	ino2=$(stat -c %i "$out")
	[ "$ino1" != "$ino2" ]
	[ "$(ls "$T/tf")" = keyrouter.prom ]
	# --watch keeps rewriting it (a new inode each time) until SIGTERM, which ends it with 0
	nsenter --net="/run/netns/$N" "$KK" status --prometheus --instance "$N" --output "$out" --watch=0.1 3>&- &
	wpid=$!
	seen=$ino2 changes=0
	for _ in $(seq 100); do
		ino=$(stat -c %i "$out")
		[ "$ino" != "$seen" ] && { changes=$((changes + 1)); seen=$ino; }
		[ "$changes" -ge 2 ] && break
		sleep 0.05
	done
	kill -TERM "$wpid"
	wait "$wpid"
	[ "$changes" -ge 2 ]
	"$PROMTOOL" check metrics <"$out"
	[ "$(ls "$T/tf")" = keyrouter.prom ]
	# a directory that does not exist: a clear error, exit 1
	run -1 kr status --prometheus --instance "$N" --output "$T/nope/x.prom"
	assert_output --partial "couldn't write '$T/nope/x.prom'"
	run -2 kr status --output "$out" --instance "$N"
	assert_output --partial -- '--output goes with --prometheus'
}

@test "exporter: /metrics over HTTP (curl) passes promtool; 404, 405; SIGTERM stops it; routing untouched" {
	instance
	nsenter --net="/run/netns/$N" "$KK" exporter --listen "127.0.0.1:$PORT" 3>&- &
	EXPORTER_PID=$!
	for _ in $(seq 50); do
		nsenter --net="/run/netns/$N" curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break
		sleep 0.1
	done
	send 50 7000
	nsenter --net="/run/netns/$N" curl -sS -D "$T/h" "http://127.0.0.1:$PORT/metrics" >"$T/scrape"
	cat "$T/h"
	grep -i '^content-type: text/plain; version=0.0.4' "$T/h"
	"$PROMTOOL" check metrics <"$T/scrape"
	grouped "$T/scrape"
	[ "$(value "$T/scrape" "keyrouter_packets_total{keyrouter_instance=\"$N\",outcome=\"routed\"}")" = 50 ]
	# the exporter serves every instance: the one of this test is among them, and equal
	# (no traffic since) to what status prints for it
	kr status --prometheus --instance "$N" >"$T/status"
	diff <(grep "keyrouter_instance=\"$N\"" "$T/status") <(grep "keyrouter_instance=\"$N\"" "$T/scrape")
	run -0 nsenter --net="/run/netns/$N" curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/nope"
	assert_output 404
	run -0 nsenter --net="/run/netns/$N" curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$PORT/metrics"
	assert_output 405
	kill -TERM "$EXPORTER_PID"
	wait "$EXPORTER_PID"
	EXPORTER_PID=
	# killing the exporter changed nothing: packets are still routed
	send 10 7000
	kr status --prometheus --instance "$N" >"$T/after"
	[ "$(value "$T/after" "keyrouter_packets_total{keyrouter_instance=\"$N\",outcome=\"routed\"}")" = 60 ]
	run -2 $K exporter --listen 127.0.0.1
	assert_output --partial "bad --listen '127.0.0.1'"
}

@test "exporter: 200 connections held open from one address, trickling their headers, do not stop a scrape from another" {
	ip netns add "$N"
	ip -n "$N" link set lo up
	# an instance of its own, not loaded: other suites on the machine may have loaded some
	nsenter --net="/run/netns/$N" "$KK" exporter --listen "127.0.0.1:$PORT" --instance "$N" 2>"$T/exporter.err" 3>&- &
	EXPORTER_PID=$!
	for _ in $(seq 50); do
		nsenter --net="/run/netns/$N" curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break
		sleep 0.1
	done
	mkfifo "$T/hold"
	nsenter --net="/run/netns/$N" /usr/bin/python3 "$BATS_TEST_DIRNAME/exporter_slow.py" \
		127.0.0.2 127.0.0.1 "$PORT" 200 2 <"$T/hold" >"$T/slow" 3>&- &
	SLOW_PID=$!
	exec 4>"$T/hold"
	for _ in $(seq 100); do [ -s "$T/slow" ] && break; sleep 0.1; done
	cat "$T/slow"
	# the exporter kept only its per-address bound of them (8 by default) ...
	run -0 cat "$T/slow"
	assert_output "held 8 of 200"
	# ... so a scrape from elsewhere is served while they are held
	run -0 nsenter --net="/run/netns/$N" curl -sS -m 5 -o "$T/scrape" -w '%{http_code}' "http://127.0.0.1:$PORT/metrics"
	assert_output 200
	grep -q '^keyrouter_up{.*} 0$' "$T/scrape"
	exec 4>&-
	wait "$SLOW_PID"
	# the refusals are logged once, with their count, not once per connection
	cat "$T/exporter.err"
	[ "$(grep -c 'connection limit' "$T/exporter.err")" = 1 ]
	# a per-address bound of 1 turns the slow client's second connection away at once
	kill -TERM "$EXPORTER_PID"; wait "$EXPORTER_PID" || true
	nsenter --net="/run/netns/$N" "$KK" exporter --listen "127.0.0.1:$PORT" --per-address 1 2>/dev/null 3>&- &
	EXPORTER_PID=$!
	for _ in $(seq 50); do
		nsenter --net="/run/netns/$N" curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break
		sleep 0.1
	done
	run -0 bash -c "nsenter --net=/run/netns/$N /usr/bin/python3 $BATS_TEST_DIRNAME/exporter_slow.py 127.0.0.2 127.0.0.1 $PORT 5 1 </dev/null"
	assert_output "held 1 of 5"
	run -2 $K exporter --listen "127.0.0.1:$PORT" --per-address 0
	assert_output --partial "bad --per-address '0'"
	run -2 $K exporter --listen "127.0.0.1:$PORT" --max-connections 4 --per-address 8
	assert_output --partial "expected 1..4"
	run -2 $K exporter --listen "127.0.0.1:$PORT" --timeout 0
	assert_output --partial "bad --timeout '0'"
}

@test "a real Prometheus (Debian's 2.42, loopback) scrapes the exporter: stored series carry instance = the target and keyrouter_instance = the router's; info metrics for a fleet" {
	PROMETHEUS=$(scripts/promtool.sh prometheus) || skip "no prometheus binary (scripts/promtool.sh prometheus)"
	instance
	send 20 7000
	nsenter --net="/run/netns/$N" "$KK" exporter --listen "127.0.0.1:$PORT" --instance "$N" 3>&- &
	EXPORTER_PID=$!
	# no series of ours has a label named instance: that one is the scrape target's
	for _ in $(seq 50); do
		nsenter --net="/run/netns/$N" curl -s -o "$T/scrape" "http://127.0.0.1:$PORT/metrics" && break
		sleep 0.1
	done
	run -1 grep -E '[{,]instance=' "$T/scrape"
	grep -E "^keyrouter_info\{keyrouter_instance=\"$N\",interface=.*,version=\"[^\"]+\",program_tag=\"[0-9a-f]{16}\"\} 1$" "$T/scrape"
	grep -E "^keyrouter_config_info\{keyrouter_instance=\"$N\",digest=\"[0-9a-f]{16}\"\} 1$" "$T/scrape"
	digest=$(grep '^keyrouter_ring_slot_info' "$T/scrape" | sed -E 's/.*digest="([0-9a-f]{8})".*/\1/')
	[ "$digest" = "$(kr ring status pool --instance "$N" --json | jq -r '.[0].slots[0].digest')" ]
	# the program tag is the attached program's (bpftool's view)
	tag=$(grep '^keyrouter_info' "$T/scrape" | sed -E 's/.*program_tag="([0-9a-f]+)".*/\1/')
	id=$(kr status --json --instance "$N" | jq -r .instance.prog_id)
	[ "$(bpftool prog show id "$id" --json | jq -r .tag)" = "$tag" ]
	cat >"$T/prom.yml" <<-EOF
	global: { scrape_interval: 1s, evaluation_interval: 1s }
	scrape_configs:
	  - job_name: keyrouter
	    static_configs: [ { targets: ['127.0.0.1:$PORT'] } ]
	EOF
	nsenter --net="/run/netns/$N" "$PROMETHEUS" --config.file="$T/prom.yml" \
		--storage.tsdb.path="$T/tsdb" --web.listen-address="127.0.0.1:$((PORT + 1))" \
		>"$T/prometheus.log" 2>&1 3>&- &
	PROM_PID=$!
	q="http://127.0.0.1:$((PORT + 1))/api/v1/query?query=keyrouter_packets_total%7Boutcome%3D%22routed%22%7D"
	for _ in $(seq 150); do
		nsenter --net="/run/netns/$N" curl -s "$q" >"$T/q.json" 2>/dev/null &&
			[ "$(jq '.data.result | length' "$T/q.json" 2>/dev/null)" = 1 ] && break
		sleep 0.2
	done
	kill "$PROM_PID"; wait "$PROM_PID" || true; PROM_PID=
	cat "$T/q.json"
	[ "$(jq -r '.data.result[0].metric.instance' "$T/q.json")" = "127.0.0.1:$PORT" ]
	[ "$(jq -r '.data.result[0].metric.keyrouter_instance' "$T/q.json")" = "$N" ]
	[ "$(jq -r '.data.result[0].metric | has("exported_instance")' "$T/q.json")" = false ]
	[ "$(jq -r '.data.result[0].value[1]' "$T/q.json")" = 20 ]
}
