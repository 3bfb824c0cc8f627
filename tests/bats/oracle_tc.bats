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
#  - ipip in TC: IPv4 in IPv6 and IPv6 in IPv4 must leave with skb->protocol of the outer
#    header (the egress device's qdiscs, offloads and filters go by it); a packet socket on
#    the egress device reads it (sll_protocol of each outgoing frame).
bats_require_minimum_version 1.5.0

setup_file() {
	export OT_ROOT OT_BIN OT_ORACLE OT_P OT_TMP
	OT_ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	OT_BIN=$OT_ROOT/${OUT:-build}/keyrouter
	OT_ORACLE=$OT_ROOT/tests/oracle/kr_oracle.py
	OT_P=kr-ot-$$
	OT_TMP=$(mktemp -d /tmp/kr-ot.XXXXXX)
}

teardown() {
	local ns
	for ns in c r b; do ip netns del "$OT_P-$ns" 2>/dev/null; done
	rm -rf "/sys/fs/bpf/keyrouter/$OT_P"
}

teardown_file() {
	[ -n "${OT_KEEP:-}" ] || rm -rf "$OT_TMP"
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

# client c0 -- r0 router r1 -- b0 backend, both families, forwarding on, static neighbours
topo_ipip() {
	local ns
	for ns in c r b; do ip netns add "$OT_P-$ns" || return 1; done
	ip -n "$OT_P-c" link add c0 type veth peer name r0 netns "$OT_P-r" || return 1
	ip -n "$OT_P-r" link add r1 mtu 1600 type veth peer name b0 mtu 1600 netns "$OT_P-b" ||
		return 1
	ip -n "$OT_P-c" link set c0 address 02:89:00:00:00:02
	ip -n "$OT_P-r" link set r0 address 02:89:00:00:00:01
	ip -n "$OT_P-r" link set r1 address 02:90:00:00:00:01
	ip -n "$OT_P-b" link set b0 address 02:90:00:00:00:02
	ip -n "$OT_P-c" addr add 10.89.0.2/24 dev c0
	ip -n "$OT_P-c" addr add 2001:db8:89::2/64 dev c0 nodad
	ip -n "$OT_P-r" addr add 10.89.0.1/24 dev r0
	ip -n "$OT_P-r" addr add 2001:db8:89::1/64 dev r0 nodad
	ip -n "$OT_P-r" addr add 10.90.0.1/24 dev r1
	ip -n "$OT_P-r" addr add 2001:db8:90::1/64 dev r1 nodad
	ip -n "$OT_P-b" addr add 10.90.0.2/24 dev b0
	ip -n "$OT_P-b" addr add 2001:db8:90::2/64 dev b0 nodad
	for ns in c r b; do ip -n "$OT_P-$ns" link set lo up; done
	ip -n "$OT_P-c" link set c0 up && ip -n "$OT_P-r" link set r0 up &&
		ip -n "$OT_P-r" link set r1 up && ip -n "$OT_P-b" link set b0 up || return 1
	ip netns exec "$OT_P-r" sysctl -qw net.ipv4.conf.all.forwarding=1 \
		net.ipv4.conf.r0.forwarding=1 net.ipv6.conf.all.forwarding=1 || return 1
	ip -n "$OT_P-c" route add 10.89.1.1/32 via 10.89.0.1 || return 1
	ip -n "$OT_P-c" -6 route add 2001:db8:89:1::1/128 via 2001:db8:89::1 || return 1
	ip -n "$OT_P-c" neigh replace 10.89.0.1 lladdr 02:89:00:00:00:01 dev c0
	ip -n "$OT_P-c" neigh replace 2001:db8:89::1 lladdr 02:89:00:00:00:01 dev c0
	ip -n "$OT_P-r" neigh replace 10.90.0.2 lladdr 02:90:00:00:00:02 dev r1
	ip -n "$OT_P-r" neigh replace 2001:db8:90::2 lladdr 02:90:00:00:00:02 dev r1
}

# 4in6: an IPv4 VIP on a ring whose backend is IPv6; 6in4: the other way round
config_ipip() {
	cat > "$1" <<-EOS
	{ "rings": [
	    { "name": "to6", "format": "v2", "point_multiple": 160, "backends": [
	      { "address": "[2001:db8:90::2]:9100", "weight": 1 } ] },
	    { "name": "to4", "format": "v2", "point_multiple": 160, "backends": [
	      { "address": "10.90.0.2:9101", "weight": 1 } ] } ],
	  "services": [
	    { "name": "v4", "vip": "10.89.1.1", "port": 9100, "key": { "type": "tuple" },
	      "ring": "to6", "forward": { "mode": "ipip", "source6": "2001:db8:90::1" } },
	    { "name": "v6", "vip": "2001:db8:89:1::1", "port": 9101, "key": { "type": "tuple" },
	      "ring": "to4", "forward": { "mode": "ipip", "source4": "10.90.0.1" } } ] }
	EOS
}

# What r1 transmits, as a packet socket sees it: "skb-protocol frame-ethertype ip-protocol"
# per outgoing IP-in-IP frame (sll_protocol of a PACKET_OUTGOING frame is skb->protocol);
# stops after $1 frames or 5 seconds.  Prints "ready" first.
sniff() {
	nsenter --net="/run/netns/$OT_P-r" /usr/bin/python3 -c '
import socket, struct, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind(("r1", 0))
s.settimeout(0.2)
print("ready", flush=True)
n, end = 0, time.time() + 5
while n < int(sys.argv[1]) and time.time() < end:
    try:
        f, a = s.recvfrom(2048)
    except socket.timeout:
        continue
    et = struct.unpack("!H", f[12:14])[0]
    ipp = f[14 + 6] if et == 0x86dd else f[14 + 9] if et == 0x0800 else -1
    if a[2] == socket.PACKET_OUTGOING and ipp in (4, 41):
        print("%04x %04x %d" % (a[1], et, ipp), flush=True)
        n += 1' "$1"
}

@test "TC ipip: 4in6 and 6in4 leave with the skb protocol of the outer header (packet socket on the egress device)" {
	local w sp
	run -0 topo_ipip
	config_ipip "$OT_TMP/ipip.json"
	run -0 kr load r0 -c "$OT_TMP/ipip.json" --mode tc --instance "$OT_P"
	sniff 100 > "$OT_TMP/sniff" &
	sp=$!
	for w in $(seq 1 50); do grep -q ready "$OT_TMP/sniff" && break; sleep 0.1; done
	run -0 nsenter --net="/run/netns/$OT_P-c" /usr/bin/python3 -c '
import socket
for fam, vip, port in ((socket.AF_INET, "10.89.1.1", 9100), (socket.AF_INET6, "2001:db8:89:1::1", 9101)):
    s = socket.socket(fam, socket.SOCK_DGRAM)
    for i in range(50):
        s.sendto(b"k%d" % i, (vip, port))'
	# the sniffer only: a bare `wait` also waits for the per-test timeout's own sleep
	wait "$sp"
	run -0 jq -r '"\(.counters.routed) routed, \(.counters.fwd_error) forwarding errors"' \
		<(kr stats --json --instance "$OT_P")
	echo "# tc: $output" >&3
	[ "$output" = "100 routed, 0 forwarding errors" ]
	# skb protocol, frame ethertype, inner protocol: 4in6 and 6in4 both labelled as sent
	run -0 sort "$OT_TMP/sniff"
	echo "# r1 transmits (skb protocol, ethertype, inner): $(uniq -c <<< "$output" | tr -s ' \n' ' ')" >&3
	[ "$(grep -c '^86dd 86dd 4$' <<< "$output")" = 50 ]
	[ "$(grep -c '^0800 0800 41$' <<< "$output")" = 50 ]
	[ "$(wc -l <<< "$output")" = 101 ]   # and the "ready" line
	run -0 kr unload r0 --instance "$OT_P"
}
