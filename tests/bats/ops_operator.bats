#!/usr/bin/env bats
# What a new operator hits first (issue 12): lookup answering what the data path does,
# --watch, instance selection, unload from the wrong network namespace, quiet loads,
# usage and wording, nonsense in configurations, status after faults.  One regression
# test (or more) per item; each failed before its fix.
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load kr_instance

setup() {
	kr_instance_setup
}

teardown() {
	kr_instance_teardown
	for n in ${EXTRA_NS:-}; do
		rm -rf "/sys/fs/bpf/keyrouter/$n"
		ip netns del "$n" 2>/dev/null
	done
	return 0
}

needs_root() {
	[ "$(id -u)" = 0 ] || skip "needs root"
	[ -f "${OUT:-build}/bpf/keyrouter.bpf.o" ] || skip "no BPF object"
}

# Ring "web" of six backends with tags and states; services over the whole ring, a subset
# that shares the ring ("ssd") and one small enough for a dedicated ring ("gpu").
subset_config() {
	cat > "$T/s.json" <<'JSON'
{ "rings": [ { "name": "web", "format": "v2", "point_multiple": 160, "backends": [
    { "address": "10.9.0.1:80", "weight": 2, "tags": ["eu", "ssd"] },
    { "address": "10.9.0.2:80", "weight": 1, "tags": ["eu"] },
    { "address": "10.9.0.3:80", "weight": 1, "tags": ["eu", "ssd"], "state": "drain" },
    { "address": "10.9.0.4:80", "weight": 3, "tags": ["us", "ssd"] },
    { "address": "10.9.0.5:80", "weight": 1, "tags": ["us", "ssd"], "state": "down" },
    { "address": "10.9.0.6:80", "weight": 1, "tags": ["eu", "ssd", "gpu"] } ] } ],
  "services": [
    { "name": "all", "vip": "10.1.0.1", "port": 80, "key": { "type": "payload" }, "ring": "web",
      "forward": { "mode": "ipip", "source4": "10.0.0.9" } },
    { "name": "ssd", "vip": "10.1.0.2", "port": 80, "key": { "type": "payload" }, "ring": "web",
      "subset": ["ssd"], "forward": { "mode": "ipip", "source4": "10.0.0.9" } },
    { "name": "gpu", "vip": "10.1.0.3", "port": 80, "key": { "type": "payload" }, "ring": "web",
      "subset": ["gpu"], "forward": { "mode": "ipip", "source4": "10.0.0.9" } } ] }
JSON
	seq 1 400 | sed 's/^/key-/' > "$T/keys"
}

# The routed backend's address of each line of `lookup --service ... --addr`.
routed() { awk '{ for (i = 1; i < NF; i++) if ($i == "route") { print $(i + 2); next } print "?" }'; }

# ---- 4: lookup --service answers what the data path does ----------------------------

@test "4: lookup --service skips backends outside the subset, down and draining: the ring of the eligible backends agrees" {
	subset_config
	# eligible (up, in the subset) backends of each service, weight
	declare -A elig=([all]="10.9.0.1:80 2|10.9.0.2:80 1|10.9.0.4:80 3|10.9.0.6:80 1"
			 [ssd]="10.9.0.1:80 2|10.9.0.4:80 3|10.9.0.6:80 1"
			 [gpu]="10.9.0.6:80 1")
	for s in all ssd gpu; do
		tr '|' '\n' <<<"${elig[$s]}" > "$T/$s.backends"
		run -0 $K lookup --backends "$T/$s.backends" --version v2 --point-multiple 160 \
			--key-type payload --keys-file "$T/keys" --addr
		echo "$output" | awk '{ print $NF }' > "$T/$s.expected"
		run -0 $K lookup -c "$T/s.json" --service "$s" --keys-file "$T/keys" --addr
		echo "$output" > "$T/$s.out"
		routed < "$T/$s.out" > "$T/$s.got"
		diff "$T/$s.expected" "$T/$s.got"
	done
	# the walks really happened (and the key's own point is still shown)
	grep -q 'walk [0-9]* (backend 2: drain)' "$T/all.out"
	grep -q 'walk [0-9]* (backend 4: down)' "$T/all.out"
	grep -q "walk [0-9]* (backend 1: not in the service's subset)" "$T/ssd.out"
	! grep -q 'route [124] ' "$T/ssd.out"
}

@test "4: lookup --service on the example: dns-secure never answers a backend without the dnssec tag or a draining one" {
	run -0 $K lookup -c examples/keyrouter.json --service dns-secure www.Example.COM. example.org --addr
	assert_line --index 0 --regexp '^03777777076578616d706c6503636f6d00 f5eb180f [0-9]+ 1 .* route 0 10\.0\.1\.1:53 walk '
	assert_line --index 1 --regexp ' route 0 10\.0\.1\.1:53 walk [0-9]+ \(backend 2: drain\)$'
	# a service with no eligible backend: its no-route policy
	sed 's/"state": "drain"/"state": "down"/; s/"tags": \["eu", "dnssec"\]/"tags": ["eu", "dnssec"], "state": "down"/' \
		examples/keyrouter.json > "$T/down.json"
	run -0 $K lookup -c "$T/down.json" --service dns-secure www.Example.COM.
	assert_output --regexp 'route none \(no backend up: the service.s no-route policy, pass\)'
}

@test "4: lookup --service --via-kernel: the program with the service's subset and states agrees line for line" {
	needs_root
	subset_config
	for s in all ssd gpu; do
		run -0 $K lookup -c "$T/s.json" --service "$s" --keys-file "$T/keys" --addr
		user=$output
		run -0 $K lookup -c "$T/s.json" --service "$s" --keys-file "$T/keys" --addr --via-kernel
		[ "$output" = "$user" ] || { diff <(echo "$user") <(echo "$output") | head; false; }
	done
	run -0 $K lookup -c examples/keyrouter.json --service dns-secure www.Example.COM. example.org --via-kernel
	assert_line --index 0 --regexp ' route 0 walk '
}
