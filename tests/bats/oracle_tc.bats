#!/usr/bin/env bats
# The data path's own notes on TC, settled through the oracle (tests/oracle/kr_oracle.py)
# on real veths:
#  - TC pulls 256 bytes into the linear part before parsing; frames whose headers lie
#    deeper (IPv6 extension headers of 300..3000 bytes) in a non-linear skb (an AF_PACKET
#    send of a frame longer than a page) must still give the verdict and the key XDP gives
#    (the program pulls what the parser can read and parses again).  Checked by the
#    backends the frames reach: the oracle's key of each, placed on the ring by `lookup`,
#    against keyrouter's per-backend counters, for TC and for XDP (generic: the MTU of
#    these frames is beyond native XDP on veth).
bats_require_minimum_version 1.5.0

setup_file() {
	export OT_ROOT OT_BIN OT_ORACLE OT_P OT_TMP
	OT_ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	OT_BIN=$OT_ROOT/${OUT:-build}/keyrouter
	OT_ORACLE=$OT_ROOT/tests/oracle/kr_oracle.py
	OT_P=kr-ot-$$
	OT_TMP=$(mktemp -d /tmp/kr-ot.XXXXXX)
}

teardown_file() {
	local ns
	for ns in c r; do ip netns del "$OT_P-$ns" 2>/dev/null; done
	rm -rf "/sys/fs/bpf/keyrouter/$OT_P"; [ -n "${OT_KEEP:-}" ] || rm -rf "$OT_TMP"
}

setup() {
	[ "$(id -u)" = 0 ] || skip "needs root"
	[ -x "$OT_BIN" ] || skip "no $OT_BIN (run make)"
	/usr/bin/python3 -c 'import scapy' 2>/dev/null || skip "needs python3-scapy"
}

kr() { nsenter --net="/run/netns/$OT_P-r" "$OT_BIN" "$@"; }

# client c0 -- r0 router, MTU 9000, r0 with the MAC the oracle's frames are sent to
topo() {
	ip netns add "$OT_P-c" && ip netns add "$OT_P-r" || return 1
	ip -n "$OT_P-c" link add c0 mtu 9000 type veth peer name r0 mtu 9000 netns "$OT_P-r" ||
		return 1
	ip -n "$OT_P-r" link set r0 address 02:00:00:00:00:aa || return 1
	ip -n "$OT_P-c" link set c0 up && ip -n "$OT_P-r" link set r0 up
}

# ring "web" of 4 backends (l2), payload key bytes [3, 19) of port 9001 at 2001:db8::53:
# the oracle's service of port 9001
config() {
	cat > "$1" <<-EOS
	{ "rings": [ { "name": "web", "format": "v2", "point_multiple": 160, "backends": [
	    { "address": "10.88.0.11:9001", "weight": 1, "mac": "02:88:00:00:00:11" },
	    { "address": "10.88.0.12:9001", "weight": 1, "mac": "02:88:00:00:00:12" },
	    { "address": "10.88.0.13:9001", "weight": 2, "mac": "02:88:00:00:00:13" },
	    { "address": "10.88.0.14:9001", "weight": 1, "mac": "02:88:00:00:00:14" } ] } ],
	  "services": [ { "name": "web", "vip": "2001:db8::53", "port": 9001,
	    "key": { "type": "payload", "offset": 3, "length": 16 }, "ring": "web",
	    "forward": { "mode": "l2" } } ] }
	EOS
}

# per-backend packet counts "address count" of the loaded instance
backend_counts() {
	jq -r '.backends[] | select(.packets > 0) | "\(.address) \(.packets)"' "$1" | sort
}

@test "TC = XDP on frames whose headers lie beyond the first 256 bytes of a non-linear skb" {
	local mode
	run -0 topo
	config "$OT_TMP/c.json"
	/usr/bin/python3 "$OT_ORACLE" deep 200 7 > "$OT_TMP/frames"
	# the oracle routes every one of them; its keys on the ring give the expected counts
	run -0 awk '$2 != 9 { n++ } END { print n + 0 }' "$OT_TMP/frames"
	[ "$output" = 0 ]
	awk '{ print $3 }' "$OT_TMP/frames" > "$OT_TMP/keys"
	"$OT_BIN" lookup -c "$OT_TMP/c.json" --ring web --keys-file "$OT_TMP/keys" |
		awk '!/^#/ { n[$4]++ } END { for (b in n) printf "10.88.0.%d:9001 %d\n", 11 + b, n[b] }' |
		sort > "$OT_TMP/want"
	echo "# expected per backend (oracle keys on the ring): $(tr '\n' ' ' < "$OT_TMP/want")" >&3
	for mode in tc generic; do
		run -0 kr load r0 -c "$OT_TMP/c.json" --mode "$mode" --instance "$OT_P"
		run -0 nsenter --net="/run/netns/$OT_P-c" /usr/bin/python3 "$OT_ORACLE" send c0 \
			"$OT_TMP/frames"
		sleep 0.5
		run -0 kr stats --json --instance "$OT_P"
		echo "$output" > "$OT_TMP/stats.$mode"
		run -0 jq -r '"\(.counters.routed) routed, \(.counters.parse_error) parse errors"' \
			"$OT_TMP/stats.$mode"
		echo "# $mode: $output" >&3
		[ "$output" = "200 routed, 0 parse errors" ]
		backend_counts "$OT_TMP/stats.$mode" > "$OT_TMP/got.$mode"
		run -0 diff "$OT_TMP/want" "$OT_TMP/got.$mode"
		run -0 kr unload r0 --instance "$OT_P"
	done
}
