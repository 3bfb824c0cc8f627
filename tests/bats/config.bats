#!/usr/bin/env bats
# `keyrouter config check|show`: the example passes, every error path fails with exit 1
# and a message naming file:line:col, the JSON path and what was expected.
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

setup() {
	cd "$BATS_TEST_DIRNAME/../.."
	K=${KEYROUTER:-./build/keyrouter}
	F=$BATS_TEST_TMPDIR/c.json
}

# ring R with the given backends JSON (one line), then a service when given.
ring1() {
	local svc=""

	[ -z "${2:-}" ] || svc=$',\n  "services": [ '"$2"' ]'
	cat > "$F" <<JSON
{
  "rings": [
    { "name": "r", "format": "v2",
      "backends": [ $1 ] }
  ]$svc
}
JSON
}

@test "example config passes, with its summary" {
	run -0 $K config check -c examples/keyrouter.json
	assert_line "examples/keyrouter.json: valid: 3 rings, 5 services, instance edge1"
	assert_line --regexp '^ring dns: format v2 point_multiple 160 backends 4 points 640 kernel [0-9.]+ KiB$'
	assert_line --regexp '^ring cache: format v1 point_multiple 160 backends 3 points 1280 '
	assert_line "service dns-secure: 192.0.2.54:53/udp key dns ring dns subset dnssec (2 of 4 backends) forward l2"
	assert_line "service memcache: *:11211/udp key memcache ring cache forward ipip"
	assert_line "service quic: [2001:db8::443]:443/udp key quic ring quic forward l2"
}

@test "config show prints the normalized config, which passes again" {
	run -0 $K config show -c examples/keyrouter.json
	echo "$output" > "$BATS_TEST_TMPDIR/n.json"
	run -0 jq -r '.services[2].forward.source6, .rings[0].backends[2].state, .services[0].policy.key_too_long, .services[4].key.delimiter, .rings[1].point_multiple' "$BATS_TEST_TMPDIR/n.json"
	assert_output $'2001:db8::1\ndrain\ndrop\n124\n160'
	run -0 $K config check -c "$BATS_TEST_TMPDIR/n.json"
	assert_line --partial "valid: 3 rings, 5 services"
	# and through standard input
	run -0 bash -c "$K config show -c examples/keyrouter.json | $K config check -c -"
	assert_line "<stdin>: valid: 3 rings, 5 services, instance edge1"
	run -1 bash -c "echo '{ \"rings\": 1 }' | $K config check -c -"
	assert_line "<stdin>:1:12: rings: expected an array, got an integer"
}

@test "--help explains; missing -c is a usage error" {
	run -0 $K config check --help
	assert_output --partial "Usage: keyrouter config check -c FILE"
	run -2 $K config check
	assert_output --partial "missing -c FILE"
}

@test "missing file" {
	run -1 $K config check -c "$BATS_TEST_TMPDIR/nope.json"
	assert_line "keyrouter: couldn't open configuration file '$BATS_TEST_TMPDIR/nope.json': No such file or directory"
	run -1 $K config check -c "$BATS_TEST_TMPDIR"
	assert_line "keyrouter: couldn't read configuration file '$BATS_TEST_TMPDIR': Is a directory"
}

@test "bad JSON: line and column" {
	printf '{\n  "rings": [\n    { "name": "x",, }\n  ]\n}\n' > "$F"
	run -1 $K config check -c "$F"
	assert_line "$F:3:19: invalid JSON: string or '}' expected near ','"
	assert_line "keyrouter: configuration '$F' is invalid"
}

@test "duplicate JSON key is an error" {
	printf '{ "rings": [], "rings": [] }\n' > "$F"
	run -1 $K config check -c "$F"
	assert_output --partial "$F:1:"
	assert_output --partial "duplicate object key"
}

@test "comments keep line and column numbers" {
	cat > "$F" <<'JSON'
// a comment with "quotes" and { braces
# a hash comment
{ "rings": [ { "name": "r", "format": "v2", // trailing comment
   "backends": [ { "address": "http://x", "weight": 1 } ] } ] }  # end
JSON
	run -1 $K config check -c "$F"
	assert_line "$F:4:31: rings[0].backends[0].address: bad address 'http://x': 'http' is not an IPv4 address (expected <IPv4>:<port> or [<IPv6>]:<port>)"
}

@test "unknown field names the field and the allowed ones" {
	ring1 '{ "address": "10.0.0.1:80", "wieght": 2 }'
	run -1 $K config check -c "$F"
	assert_line "$F:4:49: rings[0].backends[0].wieght: unknown field 'wieght' in a backend (allowed: address, weight, state, mac, dev, ifindex, id, tags, quic_lb_server_ids, health, spill)"
	echo '{ "rings": [], "ringz": 1 }' > "$F"
	run -1 $K config check -c "$F"
	assert_line "$F:1:16: ringz: unknown field 'ringz' in the configuration (allowed: instance, hash, max_move, rings, services)"
}

@test "bad address" {
	ring1 '{ "address": "10.0.0.256:80" }'
	run -1 $K config check -c "$F"
	assert_line "$F:4:34: rings[0].backends[0].address: bad address '10.0.0.256:80': '10.0.0.256' is not an IPv4 address (expected <IPv4>:<port> or [<IPv6>]:<port>)"
	ring1 '{ "address": "2001:db8::1:80" }'
	run -1 $K config check -c "$F"
	assert_output --partial "rings[0].backends[0].address: bad address '2001:db8::1:80': IPv6 addresses need brackets"
	ring1 '{ "address": 42 }'
	run -1 $K config check -c "$F"
	assert_line "$F:4:34: rings[0].backends[0].address: expected a string, got an integer"
	ring1 '{ "weight": 1 }'
	run -1 $K config check -c "$F"
	assert_line "$F:4:21: rings[0].backends[0].address: missing: expected \"<IPv4>:<port>\" or \"[<IPv6>]:<port>\""
}

@test "bad port" {
	ring1 '{ "address": "10.0.0.1:65536" }'
	run -1 $K config check -c "$F"
	assert_line "$F:4:34: rings[0].backends[0].address: bad port '65536' in '10.0.0.1:65536': expected a number 0..65535"
	ring1 '{ "address": "10.0.0.1:-1" }'
	run -1 $K config check -c "$F"
	assert_output --partial "rings[0].backends[0].address: bad port '-1' in '10.0.0.1:-1': expected a number 0..65535"
	ring1 '{ "address": "10.0.0.1:" }'
	run -1 $K config check -c "$F"
	assert_output --partial "rings[0].backends[0].address: bad address '10.0.0.1:': missing port after ':'"
	ring1 '{ "address": "10.0.0.1:1", "mac": "02:00:00:00:00:01" }' '{ "name": "s", "vip": "10.1.1.1", "port": 70000, "key": { "type": "dns" }, "ring": "r", "forward": { "mode": "l2" } }'
	run -1 $K config check -c "$F"
	assert_line "$F:6:59: services[0].port: 70000 is out of range: expected 1..65535"
}

@test "bad MAC" {
	for mac in 02:00:00:00:00 02:00:00:00:00:0g 02-00-00-00-00-01 020000000001 02:00:00:00:00:001; do
		ring1 "{ \"address\": \"10.0.0.1:80\", \"mac\": \"$mac\" }"
		run -1 $K config check -c "$F"
		assert_line "$F:4:56: rings[0].backends[0].mac: '$mac' is not a MAC address: expected six hex bytes separated by ':' (02:00:00:00:00:0a)"
	done
}

@test "duplicate backend in a ring" {
	ring1 '{ "address": "10.0.0.1:80" }, { "address": "10.0.0.2:80" }, { "address": "10.0.0.1:80", "weight": 3 }'
	run -1 $K config check -c "$F"
	assert_output --partial "rings[0].backends[2].address: duplicate backend 10.0.0.1:80 in ring 'r' (first at backends[0]): a ring lists each address once"
	# the same IPv6 address written two ways
	ring1 '{ "address": "[2001:db8::1]:80" }, { "address": "[2001:DB8:0::0:1]:80" }'
	run -1 $K config check -c "$F"
	assert_output --partial "rings[0].backends[1].address: duplicate backend [2001:db8::1]:80"
	# same IP, other port: fine
	ring1 '{ "address": "10.0.0.1:80" }, { "address": "10.0.0.1:81" }'
	run -0 $K config check -c "$F"
}

@test "duplicate ring and service names, duplicate (vip, port, protocol)" {
	cat > "$F" <<'JSON'
{ "rings": [
    { "name": "a", "format": "v1", "backends": [ { "address": "10.0.0.1:80", "mac": "02:00:00:00:00:01" } ] },
    { "name": "a", "format": "v2", "backends": [ { "address": "10.0.0.2:80" } ] } ],
  "services": [
    { "name": "s", "vip": "*", "port": 53, "key": { "type": "dns" }, "ring": "a", "forward": { "mode": "l2" } },
    { "name": "s", "vip": "10.9.9.9", "port": 53, "key": { "type": "dns" }, "ring": "a", "forward": { "mode": "l2" } },
    { "name": "t", "vip": "::", "port": 53, "key": { "type": "dns" }, "ring": "a", "forward": { "mode": "l2" } },
    { "name": "u", "vip": "10.9.9.9", "port": 54, "key": { "type": "dns" }, "ring": "a", "forward": { "mode": "l2" } },
    { "name": "v", "vip": "10.9.9.9", "port": 54, "key": { "type": "dns" }, "ring": "a", "forward": { "mode": "l2" } } ] }
JSON
	run -1 $K config check -c "$F"
	assert_line "$F:3:15: rings[1].name: duplicate ring name 'a' (also rings[0])"
	assert_line "$F:6:15: services[1].name: duplicate service name 's' (also services[0])"
	assert_line "$F:7:27: services[2].vip: service 't' uses the same address, port 53 and protocol udp as services[0] 's' (\"*\", \"0.0.0.0\" and \"::\" are the same wildcard: any address of either family)"
	assert_line "$F:9:27: services[4].vip: service 'v' uses the same address, port 54 and protocol udp as services[3] 'u'"
}

@test "service referencing a missing ring, subset tag nobody carries" {
	ring1 '{ "address": "10.0.0.1:80", "mac": "02:00:00:00:00:01", "tags": ["eu"] }' \
		'{ "name": "s", "vip": "10.1.1.1", "port": 53, "key": { "type": "dns" }, "ring": "nosuch", "forward": { "mode": "l2" } },
		 { "name": "t", "vip": "10.1.1.1", "port": 54, "key": { "type": "dns" }, "ring": "r", "subset": ["eu", "us"], "forward": { "mode": "l2" } }'
	run -1 $K config check -c "$F"
	assert_line "$F:6:97: services[0].ring: no ring named 'nosuch' in \"rings\""
	assert_output --partial "services[1].subset[1]: tag 'us': no backend of ring 'r' carries it"
}

@test "65536 backends pass, 65537 are an error" {
	python3 - "$F" 65536 <<'PY'
import json, sys
n = int(sys.argv[2])
b = [{"address": "10.%d.%d.%d:80" % (i >> 16, (i >> 8) & 255, i & 255)} for i in range(n)]
json.dump({"rings": [{"name": "big", "format": "v2", "point_multiple": 1, "backends": b}]}, open(sys.argv[1], "w"))
PY
	run -0 $K config check -c "$F"
	assert_line --regexp '^ring big: format v2 point_multiple 1 backends 65536 points 65536 '
	python3 - "$F" 65537 <<'PY'
import json, sys
n = int(sys.argv[2])
b = [{"address": "10.%d.%d.%d:80" % (i >> 16, (i >> 8) & 255, i & 255)} for i in range(n)]
json.dump({"rings": [{"name": "big", "format": "v2", "backends": b}]}, open(sys.argv[1], "w"))
PY
	run -1 $K config check -c "$F"
	assert_output --partial "rings[0].backends: 65537 backends: at most 65536 per ring (the ring-local backend index is 16 bits)"
}

@test "weight x point_multiple overflow, ring too large, no points" {
	cat > "$F" <<'JSON'
{ "rings": [ { "name": "r", "format": "v2", "point_multiple": 100000,
  "backends": [ { "address": "10.0.0.1:80", "weight": 42950 } ] } ] }
JSON
	run -1 $K config check -c "$F"
	assert_line "$F:2:55: rings[0].backends[0].weight: weight 42950 x point_multiple 100000 = 4295000000 points: more than 4294967295 points for one backend (overflow); lower the weight or the point_multiple"
	cat > "$F" <<'JSON'
{ "rings": [ { "name": "r", "format": "v2", "point_multiple": 100000,
  "backends": [ { "address": "10.0.0.1:80", "weight": 2000 }, { "address": "10.0.0.2:80", "weight": 2000 } ] } ] }
JSON
	run -1 $K config check -c "$F"
	assert_line "$F:1:14: rings[0]: 400000000 points (sum of weight x point_multiple): more than 268435456, the largest ring the kernel image holds; lower the weights or the point_multiple"
	ring1 '{ "address": "10.0.0.1:80", "weight": 0 }'
	run -1 $K config check -c "$F"
	assert_output --partial "rings[0]: the ring has no points: every backend has weight 0"
	ring1 '{ "address": "10.0.0.1:80", "weight": 4294967296 }'
	run -1 $K config check -c "$F"
	assert_output --partial "rings[0].backends[0].weight: 4294967296 is out of range: expected 0..4294967295"
	ring1 '{ "address": "10.0.0.1:80", "weight": 1.5 }'
	run -1 $K config check -c "$F"
	assert_output --partial "rings[0].backends[0].weight: expected an integer 0..4294967295, got a number with a fraction"
}

@test "ring format and point_multiple rules; auto goes through the planner hook" {
	echo '{ "rings": [ { "name": "r", "format": "v1", "point_multiple": 16, "backends": [ { "address": "10.0.0.1:80" } ] } ] }' > "$F"
	run -1 $K config check -c "$F"
	assert_output --partial "rings[0].point_multiple: 16: format \"v1\" always uses 160 points per weight unit"
	echo '{ "rings": [ { "name": "r", "backends": [ { "address": "10.0.0.1:80" } ] } ] }' > "$F"
	run -1 $K config check -c "$F"
	assert_output --partial "rings[0].format: missing: expected \"v1\" or \"v2\""
	echo '{ "rings": [ { "name": "r", "format": "v2", "point_multiple": "auto", "target_cv": 0.01, "backends": [ { "address": "10.0.0.1:80" } ] } ] }' > "$F"
	run -0 $K config check -c "$F"
	assert_line --regexp '^ring r: format v2 point_multiple [0-9]+ \(auto\) backends 1 points [0-9]+ '
	echo '{ "rings": [ { "name": "r", "format": "v1", "point_multiple": "auto", "target_cv": 0.01, "backends": [ { "address": "10.0.0.1:80" } ] } ] }' > "$F"
	run -1 $K config check -c "$F"
	assert_output --partial "rings[0].point_multiple: \"auto\" needs format \"v2\""
	echo '{ "rings": [ { "name": "r", "format": "v2", "point_multiple": "auto", "target_cv": 1.5, "backends": [ { "address": "10.0.0.1:80" } ] } ] }' > "$F"
	run -1 $K config check -c "$F"
	assert_output --partial "rings[0].target_cv: expected a number between 0 and 1 (exclusive)"
	echo '{ "rings": [ { "name": "r", "format": "v2", "point_multiple": "auto", "backends": [ { "address": "10.0.0.1:80" } ] } ] }' > "$F"
	run -1 $K config check -c "$F"
	assert_output --partial "rings[0].target_cv: missing"
	echo '{ "rings": [ { "name": "bad/name", "format": "v2", "backends": [ { "address": "10.0.0.1:80" } ] } ] }' > "$F"
	run -1 $K config check -c "$F"
	assert_output --partial "rings[0].name: 'bad/name' is not a valid name"
}

@test "service key, forward and policy errors" {
	ring1 '{ "address": "10.0.0.1:80" }, { "address": "[2001:db8::2]:80" }' \
		'{ "name": "a", "vip": "10.1.1.1", "port": 1, "key": { "type": "sha1" }, "ring": "r", "forward": { "mode": "ipip" } },
		 { "name": "b", "vip": "10.1.1.1", "port": 2, "key": { "type": "payload", "length": 4, "delimiter": "|" }, "ring": "r", "forward": { "mode": "ipip" } },
		 { "name": "c", "vip": "10.1.1.1", "port": 3, "key": { "type": "quic", "cid_length": 21 }, "ring": "r", "forward": { "mode": "ipip", "source4": "2001:db8::1" } },
		 { "name": "d", "vip": "10.1.1.1", "port": 4, "key": { "type": "dns" }, "ring": "r", "forward": { "mode": "ipip", "source4": "10.0.0.9" } },
		 { "name": "e", "vip": "10.1.1.1", "port": 5, "key": { "type": "dns" }, "ring": "r", "forward": { "mode": "l2" } },
		 { "name": "f", "vip": "10.1.1.1", "port": 6, "protocol": "tcp", "key": { "type": "dns" }, "ring": "r", "forward": { "mode": "ipip", "source4": "10.0.0.9", "source6": "::9" }, "policy": { "no_key": "reject" } }'
	run -1 $K config check -c "$F"
	assert_output --partial "services[0].key.type: 'sha1' is not valid: expected one of \"tuple\", \"payload\", \"dns\", \"memcache\", \"quic\""
	assert_output --partial "services[1].key.delimiter: give either 'length' or 'delimiter', not both"
	assert_output --partial "services[2].key.cid_length: 21 is out of range: expected 1..20"
	assert_output --partial "services[2].forward.source4: '2001:db8::1' is an IPv6 address: expected an IPv4 address"
	assert_output --partial "services[3].forward: mode \"ipip\" needs \"source6\" (outer IPv6 source): ring 'r' has IPv6 backends"
	assert_output --partial "services[4].forward: mode \"l2\" needs the MAC of every backend: rings[0].backends[0] (10.0.0.1:80) has no \"mac\""
	assert_output --partial "services[5].protocol: 'tcp' is not supported: expected \"udp\""
	assert_output --partial "services[5].policy.no_key: 'reject' is not valid: expected one of \"pass\", \"drop\""
}

@test "hash: crc32 by default; siphash13 needs a secret_file; unknown fields are errors" {
	echo '{ "hash": { "function": "siphash13", "key": "00" }, "rings": [ { "name": "r", "format": "v2", "backends": [ { "address": "10.0.0.1:80" } ] } ] }' > "$F"
	run -1 $K config check -c "$F"
	assert_output --partial 'hash.function: "siphash13" needs "secret_file"'
	assert_output --partial "hash.key: unknown field 'key' in hash (allowed: function, secret_file)"
	echo '{ "hash": { "function": "crc32" }, "rings": [ { "name": "r", "format": "v2", "backends": [ { "address": "10.0.0.1:80" } ] } ] }' > "$F"
	run -0 $K config check -c "$F"
	# the keyed hash itself: tests/bats/keyed_hash.bats
}

# backends file of a vector -> a one-ring configuration with the same backends in order
vector_config() { # NAME FORMAT PM
	python3 - "tests/vectors/$1.backends.txt" "$2" "$3" > "$F" <<'PY'
import json, sys
bs = []
for ln in open(sys.argv[1]):
    ln = ln.split('#')[0].split()
    if ln:
        bs.append({"address": ln[0], "weight": int(ln[1])})
ring = {"name": "v", "format": sys.argv[2], "backends": bs}
if sys.argv[2] == "v2":
    ring["point_multiple"] = int(sys.argv[3])
print(json.dumps({"rings": [ring]}, indent=1))
PY
}

@test "ring dump/build/lookup -c CONFIG --ring NAME: the same ring as --backends (vectors)" {
	for v in "e_v2pm160_ipv6 v2 160" "b_v1_10mixed v1 160" "c_v2pm16_10mixed v2 16" "f_v2pm16_collide v2 16"; do
		set -- $v
		vector_config "$1" "$2" "$3"
		flags="--version $2"
		[ "$2" = v1 ] || flags="$flags --point-multiple $3"
		run -0 $K ring dump -c "$F" --ring v --no-header
		from_cfg=$output
		run -0 $K ring dump --backends "tests/vectors/$1.backends.txt" $flags --no-header
		[ "$output" = "$from_cfg" ]
		run -0 $K lookup -c "$F" --ring v --keys-file "tests/vectors/$1.keys.txt"
		diff <(echo "$output") <(grep -v '^#' "tests/vectors/$1.keys.txt" | cut -d' ' -f1-7)
		run -0 $K ring build -c "$F" --ring v
		assert_output --regexp "digest $(awk '/digest/ { print $NF; exit }' "tests/vectors/$1.continuum.txt" | grep -o '[0-9a-f]\{8\}$')"
	done
}

@test "lookup human key forms: the key bytes column, and --service picks ring and key type" {
	run -0 $K lookup -c examples/keyrouter.json --service dns www.Example.COM. www.example.com .
	assert_line --index 0 --regexp '^03777777076578616d706c6503636f6d00 f5eb180f [0-9]+ [0-9]+ [0-9]+ [0-9]+ [0-9]+ route [0-9]+( walk .*)?$'
	[ "${lines[0]}" = "${lines[1]}" ]
	assert_line --index 2 --regexp '^00 d202ef8d '
	# the same key in hex through the plain form gives the same line
	run -0 $K lookup -c examples/keyrouter.json --ring dns 03777777076578616d706c6503636f6d00
	first=$output
	run -0 $K lookup -c examples/keyrouter.json --ring dns --key-type dns WWW.EXAMPLE.COM
	[ "$output" = "$first" ]
	run -0 $K lookup -c examples/keyrouter.json --ring cache --key-type tuple '[2001:db8::1]:5353' 10.0.0.1:53
	assert_line --index 0 --regexp '^20010db800000000000000000000000114e9 '
	assert_line --index 1 --regexp '^0a0000010035 '
	run -0 $K lookup -c examples/keyrouter.json --service quic 0A0b0c0d0e0f1011
	assert_line --index 0 --regexp '^0a0b0c0d0e0f1011 '
	run -0 $K lookup -c examples/keyrouter.json --ring dns --key-type payload ''
	assert_line --index 0 --regexp '^- 00000000 '
	# telemetry: offset 4, up to '|'
	run -0 $K lookup -c examples/keyrouter.json --service telemetry "hex:00000001$(printf 'sensor-17|rest' | od -An -tx1 | tr -d ' \n')"
	assert_output --regexp '^73656e736f722d3137 '
	run -0 $K lookup -c examples/keyrouter.json --ring cache --key-type memcache 'get user:42 other' user:42
	[ "${lines[0]}" = "${lines[1]}" ]
	assert_line --index 0 --regexp '^757365723a3432 '
	# a keys file of human forms: whole lines
	printf '# names\nwww.example.com\n\nWWW.EXAMPLE.COM.\n' > "$BATS_TEST_TMPDIR/k"
	run -0 $K lookup -c examples/keyrouter.json --service dns --keys-file "$BATS_TEST_TMPDIR/k"
	[ "${#lines[@]}" = 2 ] && [ "${lines[0]}" = "${lines[1]}" ]
}

@test "lookup human key forms: errors" {
	run -2 $K lookup -c examples/keyrouter.json --service dns a..b
	assert_output --partial "keyrouter: lookup: bad dns key: DNS name 'a..b': empty label at character 3"
	run -2 $K lookup -c examples/keyrouter.json --ring dns --key-type quic 000102030405060708090a0b0c0d0e0f1011121314
	assert_output --partial "bad quic key: QUIC connection ID '000102030405060708090a0b0c0d0e0f1011121314': more than 20 bytes"
	run -2 $K lookup -c examples/keyrouter.json --ring dns --key-type tuple 10.0.0.1
	assert_output --partial "bad tuple key: tuple: bad address '10.0.0.1': missing ':<port>'"
	run -2 $K lookup -c examples/keyrouter.json --ring dns --key-type payload "$(printf 'x%.0s' {1..256})"
	assert_output --partial "bad payload key: payload key is 256 bytes long: keys are at most 255 bytes"
	run -2 $K lookup -c examples/keyrouter.json --service telemetry 'abcd-no-delimiter'
	assert_output --partial "payload has no delimiter byte 0x7c after offset 4 (no key: the service's no_key policy applies)"
	run -2 $K lookup -c examples/keyrouter.json --service telemetry 'abc'
	assert_output --partial "payload of 3 bytes ends before the key offset 4 (no key: the service's no_key policy applies)"
	run -2 $K lookup -c examples/keyrouter.json --service quic ''
	assert_output --partial "bad quic key: QUIC connection ID '': empty"
	run -2 $K lookup -c examples/keyrouter.json --ring dns --key-type sha1 x
	assert_output --partial "bad --key-type 'sha1': expected one of tuple, payload, dns, memcache, quic"
	run -2 $K lookup -c examples/keyrouter.json --service dns --key-type quic 00
	assert_output --partial "--key-type quic differs from service 'dns' (key type dns)"
	run -1 $K lookup -c examples/keyrouter.json --service nosuch x
	assert_output --partial "keyrouter: examples/keyrouter.json: no service named 'nosuch'"
	run -2 $K ring dump -c examples/keyrouter.json
	assert_output --partial "-c CONFIG needs --ring NAME or --service NAME"
	run -2 $K ring dump -c examples/keyrouter.json --ring dns --version v2
	assert_output --partial "no --backends, --version or --point-multiple with it"
	run -1 $K ring build -c examples/keyrouter.json --ring nope
	assert_output --partial "keyrouter: examples/keyrouter.json: no ring named 'nope'"
	printf '{ "rings": [ { "name": "r", "format": "v2", "backends": [ { "address": "1.2.3.4" }, { "address": "x" } ] } ] }\n' > "$F"
	run -1 $K ring dump -c "$F" --ring r
	assert_output --partial "keyrouter: $F:1:72: rings[0].backends[0].address: bad address '1.2.3.4': missing ':<port>'"
	assert_output --partial "(and more errors: run 'keyrouter config check -c CONFIG')"
}

@test "config check --build: every ring built; digests as ring build; the memory estimate is the image size" {
	run -0 $K config check -c examples/keyrouter.json --build
	for r in dns cache quic; do
		line=$(grep "^built $r: " <<< "$output")
		est=$(grep "^ring $r: " <<< "$output" | sed 's/.* kernel //')
		[ "${line##* image }" != "$line" ]
		size=$(sed 's/.* image \(.*\) build .*/\1/' <<< "$line")
		[ "$size" = "$est" ] || { echo "ring $r: estimate $est, image $size"; false; }
		digest=$(sed 's/.* digest \([0-9a-f]*\) .*/\1/' <<< "$line")
		run -0 $K ring build -c examples/keyrouter.json --ring $r
		assert_output --partial "digest $digest,"
		run -0 $K config check -c examples/keyrouter.json --build
	done
	run -2 $K config show -c examples/keyrouter.json --build
	assert_output --partial "config show has no --build"
}
