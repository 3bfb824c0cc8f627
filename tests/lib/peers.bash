# shellcheck shell=bash
# keyrouter and what an operator would deploy instead, on the same topology (topo.sh) and the
# same backends (unbound on every backend, answers naming the backend): sourced by the peer
# benchmark (scripts/bench.d/peers.sh) and tests/bats/peers.bats.
#
#   peers_setup PREFIX         topology with 5 backends (4 serve, the 5th is the one added
#                              by the consistency check), unbound, keyrouter configs
#   peers_up SYSTEM N          SYSTEM routes the VIP (10.200.0.1:53/udp) to backends 1..N
#   peers_resize SYSTEM N      the same SYSTEM, now to backends 1..N (a fifth backend added)
#   peers_down SYSTEM          SYSTEM gone; the router drops VIP packets again
#   peers_probe names FILE | tuples PORT0 COUNT
#                              from the client: which backend answers each name / each
#                              source port ("KEY I" lines, tests/lib/peers_probe.py)
#   peers_moved OLD NEW        "moved M of K, to_new T": keys of OLD answered by another
#                              backend in NEW, and how many of those went to backend 5
#
# Systems (all in the router's network namespace; the client sends to the VIP):
#   direct        no router: plain kernel forwarding, the VIP routed per source port
#                 (ip rule by source port range: dnsperf -x PEERS_PORT0 gives its sockets
#                 consecutive ports, each thread a run of them; 4 ranges per thread, one
#                 per backend)
#   keyrouter     `dns` key, ring v2 (160 points per backend), forward l2, native XDP on
#                 the router's ingress veth: direct server return (replies do not pass
#                 keyrouter, only the router's kernel forwarding)
#   keyrouter-tuple  the same with the `tuple` key and a v1 ring (nginx's placement)
#   dnsdist       dnsdist 1.7, chashed (consistent hash of the query name), every server a
#                 fixed id and weight 1000 (chashed places weight points per server by its
#                 id); an L7 proxy on the VIP: it receives each query and sends it from its
#                 own address to the backend, the reply comes back through it
#   nginx         nginx 1.22 stream, `hash $remote_addr$remote_port consistent`; an L4 UDP
#                 proxy on the VIP, two workers (reuseport): replies come back through it.
#                 A client's UDP session (its address and port) lasts until 2 s without
#                 traffic: the upstream socket is reused for all its queries
#   nginx-r1      the same with `proxy_responses 1` (the DNS example of NGINX's admin guide): a session
#                 ends once it has as many answers as queries, so a busy client socket
#                 opens upstream sessions again and again
#   nftables      in-kernel DNAT `jhash ip saddr . udp sport mod N map {...}` with
#                 conntrack: replies are un-NATed on their way back through the router

PEERS_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=e2e_common.bash
source "$PEERS_LIB/e2e_common.bash"

PEERS_SYSTEMS="direct keyrouter keyrouter-tuple dnsdist nginx nginx-r1 nftables"
PEERS_PORT0=${PEERS_PORT0:-40000}	# dnsperf's first local port (-x)
PEERS_SOCKETS=${PEERS_SOCKETS:-64}	# dnsperf -c: sockets, consecutive ports from PEERS_PORT0
PEERS_THREADS=${PEERS_THREADS:-2}	# dnsperf -T
PEERS_PY=/usr/bin/python3

# What the peers need on this machine; prints what is missing.
peers_missing() {
	local t miss=()
	read -r -a miss <<<"$(e2e_missing)"
	for t in dnsdist nginx nft conntrack; do
		command -v "$t" >/dev/null 2>&1 || miss+=("$t")
	done
	[ -f /usr/lib/nginx/modules/ngx_stream_module.so ] || miss+=("libnginx-mod-stream")
	echo "${miss[*]}"
}

peers_setup() {
	topo_init "$1" 5 || return 1
	topo_create && topo_start_dns || return 1
	topo_vip_route blackhole || return 1
	local n list
	for n in 4 5; do
		list=$(seq -s' ' 1 $n)
		e2e_config "$TOPO_DIR/keyrouter$n.json" l2 "$list" dns:dns:53
		E2E_FORMAT=v1 e2e_config "$TOPO_DIR/keyrouter-tuple$n.json" l2 "$list" tup:tuple:53
	done
}

# peers_list N TEMPLATE: TEMPLATE once per backend 1..N, with @I@ = i, @J@ = i - 1 and
# @A@ = its IPv4 address
peers_list() {
	local i t
	for ((i = 1; i <= $1; i++)); do
		t=${2//@I@/$i}; t=${t//@J@/$((i - 1))}; echo "${t//@A@/${TOPO_B4[i]}}"
	done
}

peers_dnsdist_conf() { # N
	cat <<-EOF
	-- two listeners (SO_REUSEPORT): two receiving threads for the two cores
	setLocal('$TOPO_VIP4:53', { reusePort = true })
	addLocal('$TOPO_VIP4:53', { reusePort = true })
	setACL({ '0.0.0.0/0' })
	setServerPolicy(chashed)
	-- chashed hashes the query name with a perturbation that is random at each start
	-- otherwise (and the same on every instance of a fleet only when fixed)
	setWHashedPertubation(0)
	EOF
	# a fixed id per server: chashed places a server's points by hashing its id (a random
	# UUID at each start otherwise); weight = the number of points (1 by default)
	peers_list "$1" "newServer({ address = '@A@:53', name = 'b@I@', id = '00000000-0000-0000-0000-00000000000@I@', weight = 1000, checkName = 'health.$TOPO_DNS_ZONE.' })"
}

peers_nginx_conf() { # N DIR [DIRECTIVE]
	cat <<-EOF
	load_module /usr/lib/nginx/modules/ngx_stream_module.so;
	daemon off;
	worker_processes 2;
	worker_rlimit_nofile 65536;
	pid $2/nginx.pid;
	error_log $2/error.log warn;
	events { worker_connections 32768; }
	stream {
	    upstream backends {
	        hash \$remote_addr\$remote_port consistent;
	$(peers_list "$1" '	        server @A@:53;')
	    }
	    server {
	        listen $TOPO_VIP4:53 udp reuseport;
	        proxy_pass backends;
	        ${3:-}
	        proxy_timeout 2s;
	    }
	}
	EOF
}

peers_nft_conf() { # N
	cat <<-EOF
	table ip kr_peers {
	    chain pre {
	        type nat hook prerouting priority dstnat; policy accept;
	        ip daddr $TOPO_VIP4 udp dport 53 dnat to jhash ip saddr . udp sport mod $1 map { $(peers_list "$1" '@J@ : @A@,' | paste -sd' ' | sed 's/,$//') }
	    }
	}
	EOF
}

peers_direct_rules() { # add|del
	local i r per nr=$((4 * PEERS_THREADS))
	# dnsperf gives its sockets consecutive ports from PEERS_PORT0, each thread a run of
	# them: 4 ranges per thread, range r to backend r mod 4 + 1, so that every thread's
	# sockets cover the four backends alike
	per=$(( (PEERS_SOCKETS + nr - 1) / nr ))
	for ((r = 0; r < nr; r++)); do
		ip -n "$TOPO_R" rule "$1" pref $((1000 + r)) iif "$TOPO_R_IN" ipproto udp \
			sport $((PEERS_PORT0 + r * per))-$((PEERS_PORT0 + (r + 1) * per - 1)) \
			lookup $((101 + r % 4)) || return 1
	done
	[ "$1" = add ] || return 0
	for ((i = 1; i <= 4; i++)); do
		ip -n "$TOPO_R" route replace "$TOPO_VIP4/32" via "${TOPO_B4[i]}" dev "$TOPO_R_LAN" \
			table $((100 + i)) || return 1
	done
}

# the VIP as a local address of the router (for the proxies that listen on it)
peers_vip_local() { ip -n "$TOPO_R" addr "$1" "$TOPO_VIP4/32" dev lo; }

peers_start_nginx-r1() { peers_start_nginx "$1" "proxy_responses 1;"; }

peers_start_dnsdist() { # N
	local d=$TOPO_DIR/dnsdist
	mkdir -p "$d"
	peers_dnsdist_conf "$1" >"$d/dnsdist.conf"
	topo_spawn "$TOPO_R" "$d/dnsdist.log" dnsdist --supervised --disable-syslog -C "$d/dnsdist.conf" || return 1
	topo_wait_listen "$TOPO_R" udp 53 || { cat "$d/dnsdist.log" >&2; return 1; }
	peers_wait_answer
}

peers_start_nginx() { # N [DIRECTIVE]
	local d=$TOPO_DIR/nginx
	mkdir -p "$d"
	peers_nginx_conf "$1" "$d" "${2:-}" >"$d/nginx.conf"
	topo_spawn "$TOPO_R" "$d/nginx.log" nginx -e stderr -p "$d" -c "$d/nginx.conf" || return 1
	topo_wait_listen "$TOPO_R" udp 53 || { cat "$d/nginx.log" "$d/error.log" >&2; return 1; }
	peers_wait_answer
}

# the VIP answers (a proxy has found its backends up): at most ~5 s
peers_wait_answer() {
	local n
	for ((n = 0; n < 50; n++)); do
		topo_exec "$TOPO_C" dig +short +time=1 +tries=1 "@$TOPO_VIP4" "up.$TOPO_DNS_ZONE" A 2>/dev/null |
			grep -q '^10\.250\.0\.' && return 0
		sleep 0.1
	done
	topo_die "no answer on $TOPO_VIP4:53 through the router"
}

# kill the processes a system started in the router's namespace
peers_stop_router_procs() {
	local pids
	pids=$(ip netns pids "$TOPO_R")
	[ -z "$pids" ] && return 0
	# shellcheck disable=SC2086
	kill $pids 2>/dev/null || :	# (one may be gone already: not an error)
	topo_kill_ns "$TOPO_R"
}

peers_up() { # SYSTEM N
	local sys=$1 n=$2
	case "$sys" in
	direct)
		peers_direct_rules add ;;
	keyrouter | keyrouter-tuple)
		topo_kr load "$TOPO_R_IN" -c "$TOPO_DIR/$sys$n.json" --mode native \
			--instance "$TOPO_INSTANCE" >"$TOPO_DIR/load.log" 2>&1 ||
			{ cat "$TOPO_DIR/load.log" >&2; return 1; } ;;
	dnsdist | nginx | nginx-r1)
		peers_vip_local add && "peers_start_$sys" "$n" ;;
	nftables)
		peers_nft_conf "$n" | ip netns exec "$TOPO_R" nft -f - ;;
	*) topo_die "peers_up: no system '$sys' (one of: $PEERS_SYSTEMS)" ;;
	esac
}

peers_resize() { # SYSTEM N
	local sys=$1 n=$2
	case "$sys" in
	keyrouter | keyrouter-tuple)
		topo_kr apply -c "$TOPO_DIR/$sys$n.json" --instance "$TOPO_INSTANCE" >/dev/null 2>&1 ;;
	dnsdist | nginx | nginx-r1)
		# a restart with the new server list (fixed ids: the old servers keep their points)
		peers_stop_router_procs && "peers_start_$sys" "$n" ;;
	nftables)
		ip netns exec "$TOPO_R" nft delete table ip kr_peers &&
		peers_nft_conf "$n" | ip netns exec "$TOPO_R" nft -f - &&
		# the flows already in conntrack keep their old backend; a new key's first packet
		# is what the map decides
		ip netns exec "$TOPO_R" conntrack -F >/dev/null 2>&1 ;;
	*) topo_die "peers_resize: $sys has no backends to change" ;;
	esac
}

# peers_direct_answer: with `direct` up, a query from the first port of each of its first
# 4 port ranges is answered by the range's backend (A 10.250.0.I); prints what is not.
peers_direct_answer() {
	local r per nr=$((4 * PEERS_THREADS)) bad=0 p a
	per=$(( (PEERS_SOCKETS + nr - 1) / nr ))
	for ((r = 0; r < 4; r++)); do
		p=$((PEERS_PORT0 + r * per))
		a=$(topo_exec "$TOPO_C" dig +short +tries=3 +time=1 -b "$TOPO_CLIENT4#$p" \
			"@$TOPO_VIP4" "up.$TOPO_DNS_ZONE" A 2>&1)
		if [ "$a" != "10.250.0.$((r % 4 + 1))" ]; then
			echo "direct: a query from port $p: '$a', expected the answer of backend $((r % 4 + 1))"
			bad=$((bad + 1))
		fi
	done
	echo "direct: $((4 - bad)) of 4 port ranges answered by their backend"
	[ "$bad" = 0 ]
}

peers_down() { # SYSTEM
	case "$1" in
	direct) peers_direct_rules del ;;
	keyrouter | keyrouter-tuple)
		topo_kr unload "$TOPO_R_IN" --instance "$TOPO_INSTANCE" >/dev/null 2>&1 ;;
	dnsdist | nginx | nginx-r1) peers_stop_router_procs; peers_vip_local del ;;
	nftables)
		ip netns exec "$TOPO_R" nft delete table ip kr_peers
		ip netns exec "$TOPO_R" conntrack -F >/dev/null 2>&1 ;;
	esac
}

peers_probe() { # names FILE | tuples PORT0 COUNT
	local mode=$1
	shift
	if [ "$mode" = names ]; then
		topo_exec "$TOPO_C" "$PEERS_PY" "$PEERS_LIB/peers_probe.py" names "$TOPO_VIP4" "$@"
	else
		topo_exec "$TOPO_C" "$PEERS_PY" "$PEERS_LIB/peers_probe.py" tuples "$TOPO_VIP4" \
			"$TOPO_CLIENT4" "$@"
	fi
}

# peers_kind SYSTEM: what its key is made of: "names" (the query name) or "tuples" (the
# client's address and port)
peers_kind() {
	case "$1" in keyrouter | dnsdist) echo names ;; *) echo tuples ;; esac
}

# peers_keys SYSTEM COUNT: which backend answers each of COUNT keys of the system's kind
# (names from $TOPO_DIR/keys.names, made here; tuples: source ports 20000 ..)
peers_keys() {
	if [ "$(peers_kind "$1")" = names ]; then
		if [ ! -f "$TOPO_DIR/keys.names" ] || [ "$(wc -l <"$TOPO_DIR/keys.names")" != "$2" ]; then
			e2e_names "$2" c >"$TOPO_DIR/keys.names"
		fi
		peers_probe names "$TOPO_DIR/keys.names"
	else
		peers_probe tuples 20000 "$2"
	fi
}

# peers_consistency SYSTEM COUNT: COUNT keys through SYSTEM with backends 1..4
# ($TOPO_DIR/SYSTEM.4), then with a fifth backend added ($TOPO_DIR/SYSTEM.5); prints
# peers_moved's line.  SYSTEM is down afterwards.
peers_consistency() {
	local sys=$1 n=$2 rc=0
	peers_up "$sys" 4 >/dev/null || return 1
	peers_keys "$sys" "$n" >"$TOPO_DIR/$sys.4" &&
	peers_resize "$sys" 5 >/dev/null &&
	peers_keys "$sys" "$n" >"$TOPO_DIR/$sys.5" || rc=1
	peers_down "$sys" >/dev/null
	[ $rc = 0 ] && peers_moved "$TOPO_DIR/$sys.4" "$TOPO_DIR/$sys.5"
}

# peers_moved OLD NEW: both "KEY I" files.  "keys K moved M to_new T lost L": of the K keys
# answered in both, M by another backend in NEW, T of those by backend 5; L keys of OLD
# without an answer in NEW.
peers_moved() {
	awk 'NR == FNR { o[$1] = $2; next }
	     { a[$1] = $2 }
	     END {
		for (k in o) {
			if (!(k in a)) { lost++; continue }
			n++
			if (a[k] != o[k]) { m++; if (a[k] == 5) t++ }
		}
		printf "keys %d moved %d to_new %d lost %d\n", n, m, t, lost
	     }' "$1" "$2"
}

# peers_agree A B: "keys K same S": keys answered in both files, and by the same backend
peers_agree() {
	awk 'NR == FNR { a[$1] = $2; next }
	     ($1 in a) { n++; if (a[$1] == $2) s++ }
	     END { printf "keys %d same %d\n", n, s }' "$1" "$2"
}

# peers_nginx_keys PORT0 COUNT: nginx's hash key for each source port of the client,
# $remote_addr$remote_port as text ("10.201.0.240000"), beside the tuple's own form
peers_nginx_keys() {
	local p
	for ((p = $1; p < $1 + $2; p++)); do echo "$TOPO_CLIENT4:$p $TOPO_CLIENT4$p"; done
}

# peers_predict CONFIG RING KEYTYPE KEYFILE: "KEY I" from keyrouter lookup, KEY the first
# field of KEYFILE, the looked-up key its last field (KEYFILE is read twice: a file)
peers_predict() {
	local cfg=$1 ring=$2 kt=$3 keys=$4 map="" i
	for ((i = 1; i <= TOPO_N; i++)); do map+="${TOPO_B4[i]}:53 $i "; done
	paste -d' ' <(awk '{ print $1 }' "$keys") \
		<("$TOPO_KEYROUTER" lookup -c "$cfg" --ring "$ring" --key-type "$kt" --addr \
			--keys-file <(awk '{ print $NF }' "$keys") | awk '{ print $NF }') |
	awk -v map="$map" 'BEGIN { n = split(map, m, " "); for (j = 1; j < n; j += 2) idx[m[j]] = m[j + 1] }
		{ print $1, ($2 in idx) ? idx[$2] : "?" }'
}
