# shellcheck shell=bash
# A keyrouter fleet behind a BGP upstream, in network namespaces (tests/bats/e2e_bgp.bats):
# topo.sh's switch and backends, its router as router 1 and its client namespace as the
# upstream, two more routers, and a client behind the upstream.
#
#   client cl0 10.208.0.2 -- ucl 10.208.0.1  UPSTREAM ($TOPO_C, BIRD: multipath into its FIB,
#                                            fib_multipath_hash_policy 1)
#                                c0 10.201.0.2 -- r0 10.201.0.1 router 1 ($TOPO_R)
#                                cB 10.203.0.2 -- r0 10.203.0.1 router 2 ($TOPO_PREFIX-r2)
#                                cC 10.204.0.2 -- r0 10.204.0.1 router 3 ($TOPO_PREFIX-r3)
#                                usw 10.202.0.254 -- the backends' bridge (their way back)
#   each router: r1 on the backends' bridge, BIRD from dist/bird/keyrouter-router.conf (BGP
#   AS 65011 to the upstream's AS 65000, BFD 100 ms x 3), keyrouter instance
#   $TOPO_INSTANCE-K on r0, `keyrouter announce`.
# Backends answer from the VIP straight to the client through the upstream (DSR), so a
# router's death costs only the queries the upstream still sends it.
#
#   bgp_create                   namespaces, links, addresses (after topo_init)
#   bgp_bird_start               BIRD on the upstream and on every router
#   bgp_kr K args...             build/keyrouter in router K's network namespace
#   bgp_announce_start K CONFIG  the announcer of router K (its log: $TOPO_DIR/announce-K.log)
#   bgp_nexthops                 the upstream's next hops for the VIP, one per line, sorted
#   bgp_wait_nexthops "A B" S    until the next hops are exactly A B (S seconds at most);
#                                prints the seconds it took
#   bgp_ns K                     router K's namespace

BGP_CLIENT=10.208.0.2
BGP_UP_AS=65000
BGP_R_AS=65011

bgp_ns() { if [ "$1" = 1 ]; then echo "$TOPO_R"; else echo "$TOPO_PREFIX-r$1"; fi; }
bgp_cl() { echo "$TOPO_PREFIX-cl"; }
# router K's address on its link to the upstream, and the upstream's
bgp_r_addr() { case $1 in 1) echo 10.201.0.1 ;; 2) echo 10.203.0.1 ;; 3) echo 10.204.0.1 ;; esac; }
bgp_u_addr() { case $1 in 1) echo 10.201.0.2 ;; 2) echo 10.203.0.2 ;; 3) echo 10.204.0.2 ;; esac; }

bgp_kr() { local k=$1; shift; topo_netexec "$(bgp_ns "$k")" "$TOPO_KEYROUTER" "$@"; }

# Router K > 1 next to topo.sh's router: same device names (r0 ingress, r1 LAN), so one
# configuration serves every router.
bgp_router_add() {
	local k=$1 pid=${TOPO_PREFIX//[^0-9]/} ns i up
	ns=$(bgp_ns "$k")
	up=$([ "$k" = 2 ] && echo cB || echo cC)
	ip netns add "$ns" || return 1
	ip link add r0 netns "$ns" index $((1000000 * k + 100000 + pid % 100000)) \
		address "02:00:00:00:00:${k}1" type veth peer name "$up" address "02:00:00:00:00:${k}2" \
		netns "$TOPO_C" || return 1
	ip link add r1 netns "$ns" address "02:00:00:00:01:0$k" type veth peer name "sr$k" \
		netns "$TOPO_SW" || return 1
	ip -n "$TOPO_SW" link set "sr$k" master br0 up || return 1
	ip netns exec "$TOPO_SW" ethtool -K "sr$k" gro on >/dev/null || return 1
	topo_sysctl "$ns" net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
		net.ipv4.ip_forward=1 || return 1
	{
		echo "link set lo up"
		echo "addr add $(bgp_r_addr "$k")/24 dev r0"
		echo "addr add 10.202.0.$k/24 dev r1"
		echo "link set r0 up"
		echo "link set r1 up"
		for ((i = 1; i <= TOPO_N; i++)); do
			echo "neigh replace ${TOPO_B4[i]} lladdr ${TOPO_BMAC[i]} dev r1 nud permanent"
		done
		echo "route add blackhole $TOPO_VIP4/32"
	} | ip -n "$ns" -batch - || return 1
	ip -n "$TOPO_C" addr add "$(bgp_u_addr "$k")/24" dev "$up" && ip -n "$TOPO_C" link set "$up" up
}

bgp_create() {
	local i cl
	cl=$(bgp_cl)
	topo_create || return 1
	bgp_router_add 2 && bgp_router_add 3 || return 1
	# router 1: VIP packets its program does not route die in its kernel
	topo_vip_route blackhole || return 1
	# the upstream: no default route to router 1 (topo.sh's client had one), forwarding on,
	# a leg on the backends' bridge (their way back to the client), L4 multipath hashing
	ip -n "$TOPO_C" route del default 2>/dev/null
	ip -n "$TOPO_C" -6 route del default 2>/dev/null
	topo_sysctl "$TOPO_C" net.ipv4.ip_forward=1 net.ipv4.fib_multipath_hash_policy=1 || return 1
	ip netns add "$cl" || return 1
	ip link add cl0 netns "$cl" type veth peer name ucl netns "$TOPO_C" || return 1
	ip link add usw netns "$TOPO_C" type veth peer name su netns "$TOPO_SW" || return 1
	ip -n "$TOPO_SW" link set su master br0 up || return 1
	ip -n "$TOPO_C" -batch - <<-EOF || return 1
	addr add 10.208.0.1/24 dev ucl
	addr add 10.202.0.254/24 dev usw
	link set ucl up
	link set usw up
	EOF
	topo_sysctl "$cl" net.ipv4.conf.all.rp_filter=0 || return 1
	# complete checksums from the client: the routers' XDP programs see the frames as sent
	ip netns exec "$cl" ethtool -K cl0 tx off >/dev/null || return 1
	ip -n "$cl" -batch - <<-EOF || return 1
	link set lo up
	addr add $BGP_CLIENT/24 dev cl0
	link set cl0 up
	route add default via 10.208.0.1
	EOF
	for ((i = 1; i <= TOPO_N; i++)); do
		ip -n "${TOPO_B[i]}" route replace default via 10.202.0.254 || return 1
	done
}

# BIRD in namespace NS with configuration CONF (control socket $TOPO_DIR/NAME.ctl)
bgp_bird_spawn() {
	local ns=$1 name=$2
	# real-time priority: BFD (100 ms x 3) must not miss its beats on a busy machine
	ip netns exec "$ns" chrt -f 20 bird -f -c "$TOPO_DIR/$name.conf" -s "$TOPO_DIR/$name.ctl" \
		-P "$TOPO_DIR/$name.pid" </dev/null >"$TOPO_DIR/$name.log" 2>&1 3>&- 4>&- 5>&- 6>&- &
	echo "$! $ns bird" >>"$TOPO_DIR/pids"
	disown $!
}

# The upstream: a passive BGP session per router with BFD, GRACEFUL_SHUTDOWN honoured (local
# preference 0: such a path is left out of the multipath route while it stays a backup),
# the equal best paths merged into one multipath route in the kernel.
bgp_upstream_conf() {
	local k
	cat <<-EOF
	router id 10.201.0.2;
	protocol device { }
	protocol direct { ipv4; interface "ucl"; }
	protocol kernel {
		merge paths on;
		ipv4 { import none; export where source = RTS_BGP; };
	}
	protocol bfd {
		interface "*" { min rx interval 100 ms; min tx interval 100 ms; multiplier 3; };
	}
	filter from_routers {
		if (65535, 0) ~ bgp_community then bgp_local_pref = 0;
		accept;
	}
	template bgp routers {
		local as $BGP_UP_AS;
		bfd on;
		passive on;
		error wait time 1, 30;
		ipv4 { import filter from_routers; export none; };
	}
	EOF
	for k in 1 2 3; do
		echo "protocol bgp router$k from routers { neighbor $(bgp_r_addr "$k") as $BGP_R_AS; }"
	done
}

# Router K's BIRD: the shipped template, its defines set, the include pattern pointing at
# this run's directory.
bgp_router_conf() {
	local k=$1
	sed -e "s|^define KR_ROUTER_ID = .*|define KR_ROUTER_ID = $(bgp_r_addr "$k");|" \
	    -e "s|^define KR_LOCAL_AS = .*|define KR_LOCAL_AS = $BGP_R_AS;|" \
	    -e "s|^define KR_UPSTREAM = .*|define KR_UPSTREAM = $(bgp_u_addr "$k");|" \
	    -e "s|^define KR_UPSTREAM_AS = .*|define KR_UPSTREAM_AS = $BGP_UP_AS;|" \
	    -e "s|\"/run/keyrouter/bird/\*.conf\"|\"$TOPO_DIR/bird-r$k/*.conf\"|" \
	    "$TOPO_ROOT/dist/bird/keyrouter-router.conf"
}

bgp_bird_start() {
	local k
	bgp_upstream_conf >"$TOPO_DIR/upstream.conf" || return 1
	bgp_bird_spawn "$TOPO_C" upstream
	for k in 1 2 3; do
		mkdir -p "$TOPO_DIR/bird-r$k"
		bgp_router_conf "$k" >"$TOPO_DIR/r$k.conf" || return 1
		bird -p -c "$TOPO_DIR/r$k.conf" || return 1
		bgp_bird_spawn "$(bgp_ns "$k")" "r$k"
	done
}

bgp_birdc() { local name=$1; shift; birdc -s "$TOPO_DIR/$name.ctl" "$@"; }

# The announcer of router K, in the router's network namespace (nsenter: the host's bpffs)
bgp_announce_start() {
	local k=$1 cfg=$2
	shift 2
	nsenter --net="/run/netns/$(bgp_ns "$k")" -- "$TOPO_KEYROUTER" announce -c "$cfg" \
		--instance "$TOPO_INSTANCE-$k" --bird-socket "$TOPO_DIR/r$k.ctl" \
		--bird-file "$TOPO_DIR/bird-r$k/keyrouter.conf" "$@" </dev/null \
		>>"$TOPO_DIR/announce-$k.log" 2>&1 3>&- 4>&- 5>&- 6>&- &
	echo "$!" >"$TOPO_DIR/announce-$k.pid"
	echo "$! $(bgp_ns "$k") announce" >>"$TOPO_DIR/pids"
	disown $!
}

bgp_announce_stop() {
	local k=$1 pid
	pid=$(cat "$TOPO_DIR/announce-$k.pid" 2>/dev/null) || return 0
	kill "$pid" 2>/dev/null
	for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	rm -f "$TOPO_DIR/announce-$k.pid"
}

# The upstream's next hops for the VIP in its kernel FIB, one per line, sorted.
bgp_nexthops() {
	ip -n "$TOPO_C" route show "$TOPO_VIP4/32" 2>/dev/null |
		grep -o 'via [0-9.]*' | awk '{ print $2 }' | sort
}

# bgp_wait_nexthops "ADDR ..." SECONDS [T0]: until the next hops are exactly those (in any
# order); prints the time it took (s, 3 decimals) since T0 (a `date +%s.%N` taken before
# the event; default: now); status 1 when they were not within SECONDS.
bgp_wait_nexthops() {
	local want t0=${3:-} now
	want=$(tr ' ' '\n' <<<"$1" | grep . | sort)
	[ -n "$t0" ] || t0=$(date +%s.%N)
	while :; do
		now=$(date +%s.%N)
		if [ "$(bgp_nexthops)" = "$want" ]; then
			awk -v a="$t0" -v b="$now" 'BEGIN { printf "%.3f\n", b - a }'
			return 0
		fi
		awk -v a="$t0" -v b="$now" -v m="$2" 'BEGIN { exit !(b - a > m) }' && {
			echo "next hops now: $(bgp_nexthops | tr '\n' ' ') (wanted $1)" >&2
			bgp_birdc upstream show protocols >&2
			return 1
		}
		sleep 0.02
	done
}

# The upstream's next hop of each router K given
bgp_hops() { local k; for k in "$@"; do bgp_r_addr "$k"; done | tr '\n' ' '; }

bgp_teardown() {
	[ -n "${TOPO_PREFIX:-}" ] || return 0
	local k ns
	for k in 1 2 3; do
		ns=$(bgp_ns "$k")
		ip netns list 2>/dev/null | grep -qw "^$ns" || continue
		topo_kill_ns "$ns"
		nsenter --net="/run/netns/$ns" "$TOPO_KEYROUTER" unload r0 \
			--instance "$TOPO_INSTANCE-$k" >/dev/null 2>&1
		rm -rf "/sys/fs/bpf/keyrouter/$TOPO_INSTANCE-$k"
	done
	topo_kill_ns "$(bgp_cl)" "$TOPO_C"
	for k in 2 3; do ip netns del "$(bgp_ns "$k")" 2>/dev/null; done
	ip netns del "$(bgp_cl)" 2>/dev/null
	topo_teardown
}
