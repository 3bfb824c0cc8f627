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

# ---- 9: usage and wording ----------------------------------------------------------

@test "9: keyrouter ring / ring --help give ring's usage; --version works; usage errors name the full command" {
	run -0 $K ring --help
	assert_line --index 0 "Usage: keyrouter ring COMMAND [ARGS]"
	assert_output --partial "ring migrate"
	assert_output --partial "ring build"
	run -2 $K ring
	assert_output --partial "Usage: keyrouter ring COMMAND [ARGS]"
	run -2 $K ring frobnicate
	assert_output --partial "unknown command 'ring frobnicate'"
	run -0 $K config --help
	assert_output --partial "config check"
	run -0 $K --version
	assert_output --regexp '^keyrouter [0-9]+\.[0-9]+'
	run -2 $K ring build --bogus
	assert_line --index 0 "keyrouter: ring build: unrecognized option '--bogus'"
	run -2 $K ring build --backends
	assert_line --index 0 "keyrouter: ring build: option '--backends' needs a value"
	run -2 $K backend set -x
	assert_line --index 0 "keyrouter: backend set: unrecognized option '-x'"
	run -2 $K ring migrate web --percent
	assert_line --index 0 "keyrouter: ring migrate: option '--percent' needs a value"
}

@test "9: plan says which point_multiple to use; diff says what the minimum is of, in percentage points" {
	run -0 $K plan --backends tests/data/bench2048.backends.txt --target-cv 2% --no-table
	assert_line --regexp '^use         point_multiple [0-9]+: '
	c=$(echo "$output" | sed -n 's/^confirmed   on a built ring: point_multiple \([0-9]*\).*/\1/p')
	assert_line --regexp "^use         point_multiple $c: "
	sed '/^10.0.0.17:443 /d' tests/data/bench2048.backends.txt > "$T/minus17.txt"
	run -0 $K diff --version v2 --point-multiple 160 --old-backends tests/data/bench2048.backends.txt \
		--new-backends "$T/minus17.txt" --top 1
	assert_line --regexp '^overhead  [0-9.]+x the minimum of the weight change \([-+][0-9.]+ percentage points of the key space\)'
}

# ---- 10: nonsense in configurations -----------------------------------------------

@test "10: addresses no host has are refused with file:line:col" {
	bad() { # backend-address mac vip source4 -> runs config check on it
		cat > "$T/n.json" <<JSON
{ "rings": [ { "name": "r", "format": "v2", "backends": [ { "address": "10.0.0.1:80" },
    { "address": "$1", "mac": "$2" } ] } ],
  "services": [ { "name": "s", "vip": "$3", "port": 53, "key": { "type": "dns" }, "ring": "r",
    "forward": { "mode": "ipip", "source4": "$4" } } ] }
JSON
		run -1 $K config check -c "$T/n.json"
	}
	bad 0.0.0.0:0 02:00:00:00:00:01 192.0.2.1 10.0.0.9
	assert_line "$T/n.json:2:18: rings[0].backends[1].address: 0.0.0.0 is the unspecified address: a backend must be a unicast address"
	bad '[::]:80' 02:00:00:00:00:01 192.0.2.1 10.0.0.9
	assert_output --partial "backends[1].address: :: is the unspecified address"
	bad 255.255.255.255:80 02:00:00:00:00:01 192.0.2.1 10.0.0.9
	assert_output --partial "backends[1].address: 255.255.255.255 is the broadcast address"
	bad 239.1.2.3:80 02:00:00:00:00:01 192.0.2.1 10.0.0.9
	assert_output --partial "backends[1].address: 239.1.2.3 is a multicast address"
	bad '[ff05::2]:80' 02:00:00:00:00:01 192.0.2.1 10.0.0.9
	assert_output --partial "backends[1].address: ff05::2 is a multicast address"
	bad 10.0.0.2:80 ff:ff:ff:ff:ff:ff 192.0.2.1 10.0.0.9
	assert_output --regexp "n.json:2:[0-9]+: rings\[0\].backends\[1\].mac: ff:ff:ff:ff:ff:ff is a broadcast MAC address"
	bad 10.0.0.2:80 01:00:5e:00:00:01 192.0.2.1 10.0.0.9
	assert_output --partial "01:00:5e:00:00:01 is a multicast MAC address"
	bad 10.0.0.2:80 02:00:00:00:00:01 ff02::1 10.0.0.9
	assert_output --regexp "n.json:3:[0-9]+: services\[0\].vip: ff02::1 is a multicast address"
	bad 10.0.0.2:80 02:00:00:00:00:01 ::ffff:192.0.2.1 10.0.0.9
	assert_output --partial "services[0].vip: ::ffff:192.0.2.1 is an IPv4-mapped IPv6 address: as a VIP it can never match an IPv4 packet"
	assert_output --partial "write 192.0.2.1"
	bad 10.0.0.2:80 02:00:00:00:00:01 192.0.2.1 0.0.0.0
	assert_output --regexp "n.json:4:[0-9]+: services\[0\].forward.source4: 0.0.0.0 is the unspecified address"
	# the same host twice, once IPv4-mapped: ipip cannot reach it (an error), and the
	# ring hashes it as written (pingora-ketama does too): warnings say what it is
	bad '[::ffff:10.0.0.1]:80' 02:00:00:00:00:01 192.0.2.1 10.0.0.9
	assert_output --partial "services[0].forward: mode \"ipip\" cannot reach rings[0].backends[1] ([::ffff:10.0.0.1]:80, an IPv4-mapped IPv6 address)"
	assert_output --partial "rings[0].backends[1].address: warning: ::ffff:10.0.0.1 is an IPv4-mapped IPv6 address: the IPv4 host 10.0.0.1:80"
	assert_output --partial "rings[0].backends[1].address: warning: [::ffff:10.0.0.1]:80 is the same host as backends[0] in ring 'r'"
	# an l2 service (the address only names the host) keeps the configuration valid
	sed 's/"mode": "ipip", "source4": "[^"]*"/"mode": "l2"/; s/{ "address": "10.0.0.1:80" }/{ "address": "10.0.0.1:80", "mac": "02:00:00:00:00:02" }/' \
		"$T/n.json" > "$T/l2.json"
	run -0 --separate-stderr $K config check -c "$T/l2.json"
	[[ "$stderr" == *"is the same host as backends[0]"* ]]
	# wildcard VIPs stay valid
	sed 's/"vip": "[^"]*"/"vip": "0.0.0.0"/; s/"address": "[^"]*", "mac"/"address": "10.0.0.2:80", "mac"/' \
		"$T/n.json" > "$T/ok.json"
	sed -i 's/"source4": "[^"]*"/"source4": "10.0.0.9"/' "$T/ok.json"
	run -0 $K config check -c "$T/ok.json"
}

@test "10: a weight making a huge ring is valid but warned about, at its position" {
	printf '{ "rings": [ { "name": "r", "format": "v2",\n  "backends": [ { "address": "10.0.0.1:80", "weight": 1000000 }, { "address": "10.0.0.2:80" } ] } ] }\n' > "$T/big.json"
	run -0 --separate-stderr $K config check -c "$T/big.json"
	[[ "$stderr" == "$T/big.json:2:55: rings[0].backends[0].weight: warning: ring 'r' has 160000160 points, ~919 MiB of kernel memory; its largest backend, weight 1000000 x point_multiple 160"* ]]
	# no backend stands out: point_multiple is named, at its position (issue 26 #11)
	jq -n '{ rings: [ { name: "r", format: "v2", point_multiple: 4000000,
		backends: [ range(1; 21) | { address: "10.0.0.\(.):80" } ] } ] }' > "$T/pm.json"
	run -0 --separate-stderr $K config check -c "$T/pm.json"
	echo "$stderr"
	[[ "$stderr" == "$T/pm.json:"*": rings[0].point_multiple: warning: ring 'r' has 80000000 points, ~459 MiB of kernel memory: point_multiple 4000000 x a total weight of 20, no backend holding more than 5% of them. Is the point_multiple meant?"* ]]
	# a normal ring: no warning
	printf '{ "rings": [ { "name": "r", "format": "v2", "backends": [ { "address": "10.0.0.1:80", "weight": 10 } ] } ] }\n' > "$T/small.json"
	run -0 --separate-stderr $K config check -c "$T/small.json"
	[ -z "$stderr" ]
}

@test "10: ring migrate --percent finer than 2^-32 is refused (it would be 0 % while migrating)" {
	run -2 $K ring migrate web --percent 0.00000000001
	assert_output --partial "bad --percent '0.00000000001': closer to 0 or 100 than the fraction's resolution"
	run -2 $K ring migrate web --percent 99.999999999999
	assert_output --partial "closer to 0 or 100"
}

@test "10: lookup -c - --keys-file - is refused (both read standard input)" {
	run -2 $K lookup -c - --ring dns --keys-file - < examples/keyrouter.json
	assert_output --partial "-c - and --keys-file - both read standard input"
	# either alone works
	run -0 $K lookup -c - --ring dns 00 < examples/keyrouter.json
	[ "${#lines[@]}" = 1 ]
}

# ---- live instances -------------------------------------------------------------------

# load_ns NAME CONFIG [MODE]: namespace NAME, veth v0/v1, keyrouter on v0 as instance NAME
load_ns() {
	ip netns add "$1" || return 1
	ip -n "$1" link add v0 type veth peer name v1 && ip -n "$1" link set v0 up &&
		ip -n "$1" link set v1 up || return 1
	nsenter --net="/run/netns/$1" "$KK" -q load v0 -c "$2" --mode "${3:-generic}" --instance "$1"
}
kn() { local n=$1; shift; nsenter --net="/run/netns/$n" "$KK" "$@"; }
prog_of() { ip -n "$1" -d link show v0 | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p'; }

@test "9: load is quiet about libbpf/libxdp unless -v; a failing load still shows them" {
	needs_root
	subset_config
	N=kr-op-$$-$BATS_TEST_NUMBER
	ip netns add "$N"
	ip -n "$N" link add v0 type veth peer name v1
	ip -n "$N" link set v0 up && ip -n "$N" link set v1 up
	run -0 --separate-stderr kn "$N" load v0 -c "$T/s.json" --instance "$N"
	! grep -E 'libbpf|libxdp|ulimit' <<<"$stderr" || fail "noise on a successful load: $stderr"
	run -0 kn "$N" unload v0 --instance "$N"
	run -0 --separate-stderr kn "$N" -v load v0 -c "$T/s.json" --instance "$N"
	grep -q '^libbpf: ' <<<"$stderr"
	run -0 kn "$N" unload v0 --instance "$N"
	# a real error: the held-back messages come out with the failure
	run -1 kn "$N" load v0 -c "$T/s.json" --instance "$N" --object /bin/true
	assert_output --partial "libbpf/libxdp said"
	assert_output --partial "libbpf: "
	[ ! -e "/sys/fs/bpf/keyrouter/$N" ]
}

@test "5: --watch SECONDS as a separate argument; text watch writes no clear-screen codes into a file" {
	needs_root
	subset_config
	N=kr-op-$$-$BATS_TEST_NUMBER
	load_ns "$N" "$T/s.json"
	run -124 timeout 2.5 nsenter --net="/run/netns/$N" "$KK" stats --json --watch 1 --instance "$N"
	[ "${#lines[@]}" -ge 2 ]
	for l in "${lines[@]}"; do jq -e .counters >/dev/null <<<"$l"; done
	run -124 timeout 2.5 nsenter --net="/run/netns/$N" "$KK" status -w 1 --instance "$N"
	! grep -q $'\033' <<<"$output" || fail "escape codes written into a pipe"
	[ "$(grep -c '^instance ' <<<"$output")" -ge 2 ]
	# on a terminal the screen is redrawn
	command -v script >/dev/null || skip "no script(1)"
	run -124 script -qec "timeout 1.5 nsenter --net=/run/netns/$N $KK status --watch 1 --instance $N" /dev/null
	grep -q $'\033\[H\033\[2J' <<<"$output"
}

@test "7: one instance rule: no --instance means \"default\" (or the config's), errors list what is loaded" {
	needs_root
	subset_config
	N=kr-op-$$-$BATS_TEST_NUMBER
	N2=kr-op2-$$-$BATS_TEST_NUMBER
	EXTRA_NS=$N2
	load_ns "$N" "$T/s.json"
	[ ! -e /sys/fs/bpf/keyrouter/default ] || skip "an instance named 'default' is loaded on this machine"
	# one instance loaded: not silently used
	run -1 kn "$N" status
	assert_output --partial "instance 'default' is not loaded"
	assert_output --partial "'$N' (v0)"
	assert_output --partial "choose one with --instance NAME"
	run -1 kn "$N" backend set 10.9.0.1:80 down
	assert_output --partial "'$N' (v0)"
	# a config without "instance" does not apply itself to it
	sed 's/10.9.0.6:80/10.9.0.7:80/' "$T/s.json" > "$T/other.json"
	run -0 kn "$N" ring status web --json --instance "$N"
	before=$(jq -r '.[0].slots[] | select(.present) | .digest' <<<"$output")
	run -1 kn "$N" apply -c "$T/other.json"
	assert_output --partial "instance 'default' is not loaded"
	run -0 kn "$N" ring status web --json --instance "$N"
	[ "$(jq -r '.[0].slots[] | select(.present) | .digest' <<<"$output")" = "$before" ]
	# two loaded: both listed; from another network namespace it says so
	load_ns "$N2" "$T/s.json"
	run -1 kn "$N" ring status
	assert_output --partial "'$N' (v0)"
	assert_output --partial "'$N2' (v0, another network namespace)"
	# the config's "instance" chooses for apply (and ring stage)
	jq --arg i "$N" '. + {instance: $i}' "$T/other.json" > "$T/named.json"
	run -0 kn "$N" apply --force -c "$T/named.json"
	run -0 kn "$N" ring status web --json --instance "$N"
	[ "$(jq -r '.[0].slots[] | select(.present) | .digest' <<<"$output")" != "$before" ]
	kn "$N2" unload v0 --instance "$N2"
}

@test "2: unload from the wrong network namespace refuses, says how to get there, keeps the pins" {
	needs_root
	subset_config
	N=kr-op-$$-$BATS_TEST_NUMBER
	load_ns "$N" "$T/s.json"
	PROG=$(prog_of "$N")
	[ -n "$PROG" ]
	run -1 "$KK" unload v0 --instance "$N"
	assert_output --partial "instance '$N' is attached to 'v0' in another network namespace"
	assert_output --partial "nsenter --net=/run/netns/$N keyrouter unload v0 --instance $N"
	[ -e "/sys/fs/bpf/keyrouter/$N/kr_ops_meta" ]
	[ "$(prog_of "$N")" = "$PROG" ]
	# without --instance, from the host: not here, but there
	run -1 "$KK" unload v0
	assert_output --partial "keyrouter is not loaded on 'v0' in this network namespace"
	assert_output --partial "instance '$N' is loaded on 'v0' in another network namespace: run 'nsenter --net=/run/netns/$N keyrouter unload v0 --instance $N'"
	# ip netns exec: a /sys of its own, no pins: say why
	run -1 ip netns exec "$N" "$KK" unload v0
	assert_output --partial "ip netns exec"
	assert_output --partial "nsenter --net=/run/netns/NAME"
	[ "$(prog_of "$N")" = "$PROG" ]
	[ -e "/sys/fs/bpf/keyrouter/$N/kr_ops_meta" ]
	# detached behind keyrouter's back while the program lives on (a pin holds it):
	# nothing to detach, the pins stay
	bpftool prog pin id "$PROG" "/sys/fs/bpf/kr-op-hold-$$"
	ip -n "$N" link set v0 xdpgeneric off
	run -1 kn "$N" unload v0 --instance "$N"
	assert_output --partial "nothing was detached and program $PROG still exists"
	[ -e "/sys/fs/bpf/keyrouter/$N/kr_ops_meta" ]
	rm -f "/sys/fs/bpf/kr-op-hold-$$"
	# the program gone: the pins are only leftovers, unload removes them
	for i in $(seq 1 30); do
		bpftool prog show id "$PROG" >/dev/null 2>&1 || break
		sleep 0.1
	done
	run -0 kn "$N" unload v0 --instance "$N"
	[ ! -e "/sys/fs/bpf/keyrouter/$N" ]
}

@test "11: status after the interface is removed does not say attached; bpffs unmounted: what is really there" {
	needs_root
	subset_config
	N=kr-op-$$-$BATS_TEST_NUMBER
	load_ns "$N" "$T/s.json"
	PROG=$(prog_of "$N")
	run -0 kn "$N" status --instance "$N"
	assert_line --index 0 --regexp "^instance $N: v0 \(attached\), generic mode, program id $PROG"
	# bpffs unmounted (a private mount namespace): the program is found on v0
	run -1 unshare -m --propagation private sh -c "umount /sys/fs/bpf &&
		nsenter --net=/run/netns/$N $KK status --instance $N"
	assert_output --partial "no bpf filesystem was mounted at /sys/fs/bpf here"
	assert_output --partial "a keyrouter XDP program (kr_xdp, program id $PROG) is attached to 'v0' in this network namespace"
	ip -n "$N" link del v0
	run -3 kn "$N" status --instance "$N"
	assert_line --index 0 --regexp "^instance $N: v0 \(interface gone"
	refute_output --partial "(attached)"
	run -3 --separate-stderr kn "$N" status --json --instance "$N"
	[ "$(jq -r .instance.attached <<<"$output")" = interface-gone ]
}

@test "11: ring stage writes the staged version's subset members; ring status --json has the subset fields" {
	needs_root
	subset_config
	N=kr-op-$$-$BATS_TEST_NUMBER
	load_ns "$N" "$T/s.json"
	run -0 kn "$N" ring status web --json --instance "$N"
	jq -e '.[0].shared_subsets | length == 1 and .[0].members == 5 and .[0].services == 1' <<<"$output"
	jq -e '.[0].dedicated_subset_ring == false' <<<"$output"
	run -0 kn "$N" ring status --json --instance "$N"
	jq -e 'map(select(.name == "web[gpu]"))[0].dedicated_subset_ring' <<<"$output"
	# a new version with one more ssd backend, staged
	jq '.rings[0].backends += [{ "address": "10.9.0.7:80", "tags": ["ssd"] }]' "$T/s.json" > "$T/new.json"
	run -0 kn "$N" ring stage web -c "$T/new.json" --instance "$N"
	run -0 kn "$N" status --json --instance "$N"
	id=$(jq -r '.backends[] | select(.address == "10.9.0.7:80") | .id' <<<"$output")
	[ -n "$id" ]
	run -0 bpftool -j map dump pinned "/sys/fs/bpf/keyrouter/$N/kr_subset_members"
	jq -e --argjson id "$id" 'map(select(.formatted.key.backend_id == $id)) | length == 1' <<<"$output"
	run -0 kn "$N" ring status web --json --instance "$N"
	jq -e '.[0].shared_subsets[0].members == 6' <<<"$output"
}

@test "11: health state: backend set owns it; apply sets it only for new backends and when the config says down or drain" {
	needs_root
	subset_config
	N=kr-op-$$-$BATS_TEST_NUMBER
	load_ns "$N" "$T/s.json"
	state() { kn "$N" status --json --instance "$N" | jq -r --arg a "$1" '[.backends[] | select(.address == $a) | .state] | unique | join(",")'; }
	[ "$(state 10.9.0.1:80)" = up ]
	[ "$(state 10.9.0.5:80)" = down ]	# the config says down
	run -0 kn "$N" backend set 10.9.0.1:80 down --instance "$N"
	run -0 kn "$N" apply -c "$T/s.json" --instance "$N"	# config: up -> runtime state kept
	[ "$(state 10.9.0.1:80)" = down ]
	run -0 kn "$N" backend set 10.9.0.5:80 up --instance "$N"
	run -0 kn "$N" apply -c "$T/s.json" --instance "$N"	# config: down -> config wins
	[ "$(state 10.9.0.5:80)" = down ]
	# lookup --live follows the live states; the config-based lookup does not
	run -0 kn "$N" lookup -c "$T/s.json" --service all --keys-file "$T/keys" --live --instance "$N" --addr
	live=$output
	[ "$(routed <<<"$live" | grep -cx 10.9.0.1:80)" = 0 ]
	sed 's/"address": "10.9.0.1:80", "weight": 2, "tags": \["eu", "ssd"\] }/&/; s/\("address": "10.9.0.1:80", "weight": 2, "tags": \["eu", "ssd"\]\)/\1, "state": "down"/' "$T/s.json" > "$T/down1.json"
	grep -q '"10.9.0.1:80", "weight": 2, "tags": \["eu", "ssd"\], "state": "down"' "$T/down1.json"
	run -0 $K lookup -c "$T/down1.json" --service all --keys-file "$T/keys" --addr
	[ "$(routed <<<"$output")" = "$(routed <<<"$live")" ]
	run -0 $K lookup -c "$T/s.json" --service all --keys-file "$T/keys" --addr
	routed <<<"$output" | grep -qx 10.9.0.1:80
}

@test "9: status names services' key type, subset, forward mode and policies (JSON too) and explains down/drain" {
	needs_root
	subset_config
	N=kr-op-$$-$BATS_TEST_NUMBER
	load_ns "$N" "$T/s.json"
	run -0 kn "$N" status --instance "$N"
	assert_line "service all 10.1.0.1:80/udp: key payload, ring web, forward ipip, policy no_key pass, key_too_long pass, all_down pass"
	assert_line --regexp '^service ssd 10\.1\.0\.2:80/udp: key payload, ring web subset [0-9a-f]{8} \(5 members\), forward ipip, '
	assert_line --regexp '^service gpu 10\.1\.0\.3:80/udp: key payload, ring web\[gpu\], forward ipip, '
	refute_output --partial "key type"
	assert_output --partial "(down, drain: the failover walk skips the backend"
	run -0 kn "$N" status --json --instance "$N"
	jq -e '.services | map(select(.vip == "10.1.0.2:80"))[0] | .key_type == "payload" and .forward == "ipip"
		and .subset_members == 5 and .policy.all_down == "pass"' <<<"$output"
	run -0 kn "$N" backend set 10.9.0.1:80 drain --instance "$N"
	assert_output --partial "(drain: the failover walk skips it"
}
