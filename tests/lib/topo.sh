# shellcheck shell=bash
# Reusable end-to-end topology for keyrouter, in network namespaces (sourced by the bats
# tests in tests/bats/e2e_*.bats and by scripts/demo.sh).
#
#   client ns           router ns                 switch ns (bridge br0)       backend ns i
#   c0 ----------------- r0 (ingress, keyrouter)
#                          r1 ------------------- sr   \
#                                                 s1 .. sN ------------------- eth0 (+ VIP on lo)
#
#   client   c0  10.201.0.2/24  fd00:201::2/64    default via the router
#   router   r0  10.201.0.1/24  fd00:201::1/64    forwarding on, rp_filter off
#            r1  10.202.0.1/24  fd00:202::1/64
#   backend  eth0 10.202.0.(10+i)/24  fd00:202::(10+i)/64, default via the router (replies
#            go to the client directly: DSR); VIP 10.200.0.1/32 and fd00:200::1/128 on lo
#
# Every link lives inside a namespace created here (nothing in the host's namespace).
# Names start with the caller's prefix (topo_init kr-e2e-$$), so parallel runs do not clash.
# Namespaces of earlier runs that died (their lock is free) are removed by topo_init.
#
#   topo_init PREFIX [NBACKENDS]    variables, stale cleanup (NBACKENDS 1..16, default 4)
#   topo_trap                       teardown on EXIT/INT/TERM/HUP (scripts; bats uses
#                                   teardown_file)
#   topo_create                     namespaces, veths, bridge, addresses, neighbours
#   topo_decap                      ipip decapsulation on every backend (tunnel devices,
#                                   or build/tests/progs/decap.bpf.o where the kernel has none)
#   topo_vip_route backend I|blackhole   what the router's kernel does with VIP packets
#   topo_start_dns | topo_start_memcached | topo_start_quic   servers on every backend
#   topo_exec NS cmd...             run in a namespace (ip netns exec: own /sys)
#   topo_netexec NS cmd...          run in a namespace's network only (host mounts, so
#                                   pins under the host's /sys/fs/bpf are shared)
#   topo_kr args...                 build/keyrouter in the router's network namespace
#   topo_teardown                   processes, XDP programs, pins, namespaces; idempotent
#
# NS names: $TOPO_C (client), $TOPO_R (router), $TOPO_SW (switch), ${TOPO_B[i]} (backend i,
# 1-based).  Addresses: $TOPO_VIP4 $TOPO_VIP6 $TOPO_CLIENT4 $TOPO_CLIENT6
# ${TOPO_B4[i]} ${TOPO_B6[i]} ${TOPO_BMAC[i]}; the router's egress device to the backends is
# $TOPO_R_LAN (r1), its ingress device $TOPO_R_IN (r0).

TOPO_ROOT=${TOPO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
TOPO_KEYROUTER=${TOPO_KEYROUTER:-$TOPO_ROOT/build/keyrouter}
TOPO_DECAP_OBJ=${TOPO_DECAP_OBJ:-$TOPO_ROOT/build/tests/progs/decap.bpf.o}

TOPO_VIP4=10.200.0.1
TOPO_VIP6=fd00:200::1
TOPO_CLIENT4=10.201.0.2
TOPO_CLIENT6=fd00:201::2
TOPO_R_IN=r0
TOPO_R_LAN=r1
TOPO_R_IN4=10.201.0.1
TOPO_R_IN6=fd00:201::1
TOPO_R_LAN4=10.202.0.1
TOPO_R_LAN6=fd00:202::1
TOPO_R_IN_MAC=02:00:00:00:00:01
TOPO_C_MAC=02:00:00:00:00:02
TOPO_R_LAN_MAC=02:00:00:00:01:01
TOPO_DNS_ZONE=kr.test
TOPO_DNS_PORT=53
TOPO_MC_PORT=11211
TOPO_QUIC_PORT=4433

topo_log() { [ "${TOPO_QUIET:-0}" = 1 ] || echo "topo: $*" >&2; }
topo_die() { echo "topo: error: $*" >&2; return 1; }

# topo_vars PREFIX [NBACKENDS]: names and addresses.
topo_vars() {
	local prefix=${1:?topo_vars: PREFIX}
	local n=${2:-4} i
	[ "$n" -ge 1 ] && [ "$n" -le 16 ] || { topo_die "topo_init: 1..16 backends, not '$n'"; return 1; }
	TOPO_PREFIX=$prefix
	TOPO_N=$n
	TOPO_C=$prefix-c
	TOPO_R=$prefix-r
	TOPO_SW=$prefix-sw
	TOPO_B=() TOPO_B4=() TOPO_B6=() TOPO_BMAC=()
	for ((i = 1; i <= n; i++)); do
		TOPO_B[i]=$prefix-b$i
		TOPO_B4[i]=10.202.0.$((10 + i))
		TOPO_B6[i]=fd00:202::$((10 + i))
		TOPO_BMAC[i]=$(printf '02:00:00:00:02:%02x' "$i")
	done
	TOPO_INSTANCE=${prefix//[^A-Za-z0-9_.-]/_}
}

# topo_init PREFIX [NBACKENDS]: a new topology's variables and state directory.
topo_init() {
	topo_vars "$@" || return 1
	TOPO_DIR=$(mktemp -d "/tmp/$1.XXXXXX") || return 1
	TOPO_DECAP_KIND=
	export TOPO_PREFIX TOPO_N TOPO_DIR TOPO_DECAP_KIND
	topo_cleanup_stale
	# this run's lock, held by this process (and what it forks) while it lives
	mkdir -p "$TOPO_LOCKS" || return 1
	exec {TOPO_LOCK_FD}>"$TOPO_LOCKS/$TOPO_PREFIX.lock" && flock -n "$TOPO_LOCK_FD" || return 1
}

# topo_attach: the variables again from the exported TOPO_PREFIX, TOPO_N and TOPO_DIR (bats
# runs setup_file and each test in different processes; arrays are not exported).
topo_attach() {
	[ -n "${TOPO_PREFIX:-}" ] && [ -d "${TOPO_DIR:-}" ] || { topo_die "topo_attach: no topology"; return 1; }
	topo_vars "$TOPO_PREFIX" "$TOPO_N"
}

# The namespaces and pin dirs of a run that was killed with SIGKILL (it could not clean up
# after itself): each run holds a lock, $TOPO_LOCKS/PREFIX.lock, from topo_init on; a lock
# file nobody holds is a dead run's, whose PREFIX-* namespaces and PREFIX* pin dirs go.
# Never by the PID in a name: the machine is shared, and a run in another PID namespace
# (another session's, another CI job's) has a PID this one cannot see.  A namespace with no
# lock file is left alone.
TOPO_LOCKS=/run/keyrouter-topo
topo_cleanup_stale() {
	local l p ns
	for l in "$TOPO_LOCKS"/*.lock; do
		[ -e "$l" ] && flock -n "$l" true || continue
		p=$(basename "$l" .lock)
		for ns in $(ip netns list 2>/dev/null | awk '{print $1}'); do
			[[ $ns == "$p"-* ]] || continue
			topo_log "removing stale namespace $ns (its run is gone)"
			topo_kill_ns "$ns"
			ip netns del "$ns" 2>/dev/null
		done
		rm -rf "/sys/fs/bpf/keyrouter/$p" "/sys/fs/bpf/keyrouter/$p"-* "$l"
	done
}

topo_trap() {
	trap 'topo_teardown' EXIT
	trap 'topo_teardown; trap - INT; kill -INT $$' INT
	trap 'topo_teardown; exit 143' TERM HUP
}

topo_exec() { local ns=$1; shift; ip netns exec "$ns" "$@"; }
topo_netexec() { local ns=$1; shift; nsenter --net="/run/netns/$ns" -- "$@"; }
topo_kr() { topo_netexec "$TOPO_R" "$TOPO_KEYROUTER" "$@"; }
topo_sysctl() { local ns=$1; shift; ip netns exec "$ns" sysctl -qw "$@" >/dev/null; }

# Kill every process inside the namespaces NS... (all of them were started by this library):
# SIGTERM, and SIGKILL for what is still there half a second later.
topo_kill_ns() {
	local ns pids tries
	for tries in 1 2 3 4 5 6 7 8 9 10; do
		pids=$(for ns in "$@"; do ip netns pids "$ns" 2>/dev/null; done)
		[ -z "$pids" ] && return 0
		# shellcheck disable=SC2086
		# (a process may exit between the listing and the signal: kill then fails, which
		# under bats' errexit would fail the caller)
		if [ "$tries" = 1 ]; then kill $pids 2>/dev/null || :
		elif [ "$tries" -ge 6 ]; then kill -9 $pids 2>/dev/null || :; fi
		sleep 0.1
	done
}

topo_create() {
	local i ns b pid=${TOPO_PREFIX//[^0-9]/}
	# One `ip -batch` for the namespaces and links (each link is created directly in its
	# namespace: nothing appears in the host's), then one per namespace for its addresses,
	# routes and neighbours: a few processes instead of a hundred.
	{
		for ns in "$TOPO_C" "$TOPO_R" "$TOPO_SW" "${TOPO_B[@]}"; do echo "netns add $ns"; done
		# client <-> router (keyrouter's ingress).  Its ifindex is unique per run: ifindexes
		# are per namespace, and keyrouter instances recorded by other runs (pins in the
		# host's bpffs) must not make this one look "already loaded".
		echo "link add $TOPO_R_IN netns $TOPO_R index $((100000 + ${pid:-$$} % 1000000))" \
			"address $TOPO_R_IN_MAC type veth peer name c0 address $TOPO_C_MAC netns $TOPO_C"
		# the backends' L2 segment: a bridge in its own namespace
		echo "link add br0 netns $TOPO_SW type bridge"
		echo "link add $TOPO_R_LAN netns $TOPO_R address $TOPO_R_LAN_MAC type veth peer name sr netns $TOPO_SW"
		for ((i = 1; i <= TOPO_N; i++)); do
			echo "link add eth0 netns ${TOPO_B[i]} address ${TOPO_BMAC[i]} type veth peer name s$i netns $TOPO_SW"
		done
	} | ip -batch - || { topo_die "could not create the namespaces and links"; return 1; }

	for ns in "$TOPO_C" "$TOPO_R" "$TOPO_SW" "${TOPO_B[@]}"; do
		topo_sysctl "$ns" net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
			net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 || return 1
	done
	{
		echo "link set lo up"
		echo "link set br0 up"
		echo "link set sr master br0 up"
		for ((i = 1; i <= TOPO_N; i++)); do echo "link set s$i master br0 up"; done
	} | ip -n "$TOPO_SW" -batch - || return 1
	# Frames that XDP redirects or transmits into a veth are received by its peer only when
	# the peer runs NAPI: an XDP program, or GRO switched on.
	ip netns exec "$TOPO_SW" ethtool -K sr gro on >/dev/null || return 1
	# The client's packets leave with complete checksums: a veth's XDP program sees a
	# CHECKSUM_PARTIAL skb as a frame whose UDP checksum is not filled in yet, and once
	# redirected (or encapsulated) nothing would complete it.
	ip netns exec "$TOPO_C" ethtool -K c0 gro on tx off >/dev/null || return 1

	# permanent neighbours everywhere: no ARP/ND on the first packets (and bpf_fib_lookup,
	# used by ipip forwarding, finds its next hop at once)
	ip -n "$TOPO_C" -batch - <<-EOF || return 1
	link set lo up
	addr add $TOPO_CLIENT4/24 dev c0
	addr add $TOPO_CLIENT6/64 dev c0 nodad
	link set c0 up
	route add default via $TOPO_R_IN4
	route add default via $TOPO_R_IN6
	neigh replace $TOPO_R_IN4 lladdr $TOPO_R_IN_MAC dev c0 nud permanent
	neigh replace $TOPO_R_IN6 lladdr $TOPO_R_IN_MAC dev c0 nud permanent
	EOF
	topo_sysctl "$TOPO_R" net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 || return 1
	{
		echo "link set lo up"
		echo "addr add $TOPO_R_IN4/24 dev $TOPO_R_IN"
		echo "addr add $TOPO_R_IN6/64 dev $TOPO_R_IN nodad"
		echo "addr add $TOPO_R_LAN4/24 dev $TOPO_R_LAN"
		echo "addr add $TOPO_R_LAN6/64 dev $TOPO_R_LAN nodad"
		echo "link set $TOPO_R_IN up"
		echo "link set $TOPO_R_LAN up"
		echo "neigh replace $TOPO_CLIENT4 lladdr $TOPO_C_MAC dev $TOPO_R_IN nud permanent"
		echo "neigh replace $TOPO_CLIENT6 lladdr $TOPO_C_MAC dev $TOPO_R_IN nud permanent"
		for ((i = 1; i <= TOPO_N; i++)); do
			echo "neigh replace ${TOPO_B4[i]} lladdr ${TOPO_BMAC[i]} dev $TOPO_R_LAN nud permanent"
			echo "neigh replace ${TOPO_B6[i]} lladdr ${TOPO_BMAC[i]} dev $TOPO_R_LAN nud permanent"
		done
	} | ip -n "$TOPO_R" -batch - || return 1
	for ((i = 1; i <= TOPO_N; i++)); do
		b=${TOPO_B[i]}
		topo_sysctl "$b" net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2 \
			net.ipv4.conf.eth0.rp_filter=0 || return 1
		ip -n "$b" -batch - <<-EOF || return 1
		link set lo up
		addr add ${TOPO_B4[i]}/24 dev eth0
		addr add ${TOPO_B6[i]}/64 dev eth0 nodad
		addr add $TOPO_VIP4/32 dev lo
		addr add $TOPO_VIP6/128 dev lo nodad
		link set eth0 up
		route add default via $TOPO_R_LAN4
		route add default via $TOPO_R_LAN6
		neigh replace $TOPO_R_LAN4 lladdr $TOPO_R_LAN_MAC dev eth0 nud permanent
		neigh replace $TOPO_R_LAN6 lladdr $TOPO_R_LAN_MAC dev eth0 nud permanent
		EOF
	done
	topo_vip_route backend 1
	topo_log "created $TOPO_PREFIX: client, router, switch, $TOPO_N backends (state in $TOPO_DIR)"
}

# topo_vip_route backend I   the router's kernel forwards VIP packets to backend I (no keyrouter)
# topo_vip_route blackhole   VIP packets that keyrouter passes to the stack are dropped, so a
#                            packet keyrouter fails to route is lost (and noticed), not served
topo_vip_route() {
	case "$1" in
	backend)
		ip -n "$TOPO_R" route replace $TOPO_VIP4/32 via "${TOPO_B4[$2]}" dev "$TOPO_R_LAN" &&
		ip -n "$TOPO_R" -6 route replace $TOPO_VIP6/128 via "${TOPO_B6[$2]}" dev "$TOPO_R_LAN" ;;
	blackhole)
		ip -n "$TOPO_R" route replace blackhole $TOPO_VIP4/32 &&
		ip -n "$TOPO_R" -6 route replace blackhole $TOPO_VIP6/128 ;;
	*) topo_die "topo_vip_route: backend I | blackhole"; return 1 ;;
	esac
}

# ipip decapsulation on every backend: tunnel devices (ipip for 4in4, sit for 6in4, ip6tnl
# for 4in6/6in6) when the kernel has them, else the XDP decapsulator build/tests/progs/decap.bpf.o.
# Sets TOPO_DECAP_KIND to "tunnel" or "xdp".
topo_decap() {
	local i b
	b=${TOPO_B[1]}
	if ip -n "$b" link add kr-probe type ipip local "${TOPO_B4[1]}" 2>/dev/null; then
		ip -n "$b" link del kr-probe
		TOPO_DECAP_KIND=tunnel; export TOPO_DECAP_KIND
		for ((i = 1; i <= TOPO_N; i++)); do
			b=${TOPO_B[i]}
			ip -n "$b" link add tun4 type ipip local "${TOPO_B4[i]}" &&
			ip -n "$b" link add tun46 type sit mode ip6ip local "${TOPO_B4[i]}" &&
			ip -n "$b" link add tun6 type ip6tnl mode any local "${TOPO_B6[i]}" || return 1
			ip -n "$b" link set tun4 up && ip -n "$b" link set tun46 up &&
				ip -n "$b" link set tun6 up || return 1
			topo_sysctl "$b" net.ipv4.conf.tun4.rp_filter=0 net.ipv4.conf.tun46.rp_filter=0
		done
	else
		[ -r "$TOPO_DECAP_OBJ" ] || { topo_die "no ipip tunnel support in this kernel and no $TOPO_DECAP_OBJ (run make)"; return 1; }
		TOPO_DECAP_KIND=xdp; export TOPO_DECAP_KIND
		for ((i = 1; i <= TOPO_N; i++)); do
			ip -n "${TOPO_B[i]}" link set dev eth0 xdp obj "$TOPO_DECAP_OBJ" sec xdp || return 1
		done
	fi
	topo_log "ipip decapsulation on the backends: $TOPO_DECAP_KIND"
}

# Start a daemon in namespace NS, detached from the caller's file descriptors (bats waits for
# inherited descriptors); its pid goes to $TOPO_DIR/pids.
topo_spawn() {
	local ns=$1 log=$2; shift 2
	ip netns exec "$ns" "$@" </dev/null >"$log" 2>&1 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
	echo "$! $ns $1" >>"$TOPO_DIR/pids"
	disown $!
}

# Wait until something listens on PROTO PORT in NS (ss), at most ~10 s.
topo_wait_listen() {
	local ns=$1 proto=$2 port=$3 n
	for ((n = 0; n < 100; n++)); do
		ip netns exec "$ns" ss -Hln"${proto:0:1}" "sport = :$port" 2>/dev/null | grep -q . && return 0
		sleep 0.1
	done
	topo_die "nothing listens on $proto port $port in $ns"
}

# DNS: unbound on every backend, on the VIP (so answers leave from the VIP: DSR) and on its
# own address.  Any name under $TOPO_DNS_ZONE answers A 10.250.0.I and TXT "bI".
topo_start_dns() {
	local i d
	for ((i = 1; i <= TOPO_N; i++)); do
		d=$TOPO_DIR/dns-b$i
		mkdir -p "$d"
		cat >"$d/unbound.conf" <<-EOF
		server:
		    username: ""
		    chroot: ""
		    directory: "$d"
		    pidfile: "$d/unbound.pid"
		    use-syslog: no
		    logfile: ""
		    verbosity: 0
		    do-daemonize: no
		    num-threads: 1
		    so-reuseport: no
		    port: $TOPO_DNS_PORT
		    interface: $TOPO_VIP4
		    interface: $TOPO_VIP6
		    interface: ${TOPO_B4[i]}
		    interface: ${TOPO_B6[i]}
		    access-control: 0.0.0.0/0 allow
		    access-control: ::/0 allow
		    module-config: "iterator"
		    do-not-query-localhost: yes
		    so-rcvbuf: 4m
		    so-sndbuf: 4m
		    outgoing-range: 64
		    num-queries-per-thread: 4096
		    ip-ratelimit: 0
		    ratelimit: 0
		    local-zone: "$TOPO_DNS_ZONE." redirect
		    local-data: "$TOPO_DNS_ZONE. 60 IN A 10.250.0.$i"
		    local-data: '$TOPO_DNS_ZONE. 60 IN TXT "b$i"'
		remote-control:
		    control-enable: no
		EOF
		topo_spawn "${TOPO_B[i]}" "$d/unbound.log" unbound -d -c "$d/unbound.conf" || return 1
	done
	for ((i = 1; i <= TOPO_N; i++)); do
		topo_wait_listen "${TOPO_B[i]}" udp $TOPO_DNS_PORT || { cat "$TOPO_DIR/dns-b$i/unbound.log" >&2; return 1; }
	done
}

# memcached on every backend, TCP and UDP, on the VIP and the backend's own address.
topo_start_memcached() {
	local i
	for ((i = 1; i <= TOPO_N; i++)); do
		topo_spawn "${TOPO_B[i]}" "$TOPO_DIR/memcached-b$i.log" memcached -u root -m 16 -t 1 \
			-p $TOPO_MC_PORT -U $TOPO_MC_PORT \
			-l "$TOPO_VIP4,[$TOPO_VIP6],${TOPO_B4[i]},[${TOPO_B6[i]}]" || return 1
	done
	for ((i = 1; i <= TOPO_N; i++)); do
		topo_wait_listen "${TOPO_B[i]}" udp $TOPO_MC_PORT || return 1
	done
}

# QUIC: ngtcp2's gtlsserver on the VIP (IPv4 and IPv6) of every backend, serving
# $TOPO_DIR/www-bI: /id (the text "bI") and /blob (64 KiB naming the backend).
topo_start_quic() {
	local i d
	d=$TOPO_DIR/tls
	mkdir -p "$d"
	if [ ! -s "$d/cert.pem" ]; then
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
			-subj "/CN=keyrouter-e2e" -addext "subjectAltName=IP:$TOPO_VIP4,IP:$TOPO_VIP6" \
			-keyout "$d/key.pem" -out "$d/cert.pem" 2>/dev/null || {
			topo_die "openssl could not make a self-signed certificate"; return 1; }
	fi
	for ((i = 1; i <= TOPO_N; i++)); do
		local www=$TOPO_DIR/www-b$i
		mkdir -p "$www"
		printf 'b%d\n' "$i" >"$www/id"
		yes "keyrouter e2e blob served by backend b$i" | head -c 65536 >"$www/blob"
		topo_spawn "${TOPO_B[i]}" "$TOPO_DIR/quic4-b$i.log" gtlsserver -q -d "$www" \
			$TOPO_VIP4 $TOPO_QUIC_PORT "$d/key.pem" "$d/cert.pem" || return 1
		topo_spawn "${TOPO_B[i]}" "$TOPO_DIR/quic6-b$i.log" gtlsserver -q -d "$www" \
			$TOPO_VIP6 $TOPO_QUIC_PORT "$d/key.pem" "$d/cert.pem" || return 1
	done
	for ((i = 1; i <= TOPO_N; i++)); do
		topo_wait_listen "${TOPO_B[i]}" udp $TOPO_QUIC_PORT || return 1
	done
}

# The backend index (1..N) of a backend address (IPv4 or IPv6, with or without :port).
topo_backend_index() {
	local a=$1 i
	a=${a#[}
	case "$a" in
	*]:*) a=${a%]:*} ;;
	*.*:*) a=${a%:*} ;;
	esac
	a=${a%]}
	for ((i = 1; i <= TOPO_N; i++)); do
		[ "$a" = "${TOPO_B4[i]}" ] || [ "$a" = "${TOPO_B6[i]}" ] && { echo "$i"; return 0; }
	done
	return 1
}

# Ask backend I's memcached over TCP (on its own address, not the VIP) for KEY; prints the
# value or nothing.
topo_mc_get_direct() {
	local i=$1 key=$2
	ip netns exec "${TOPO_B[i]}" bash -c '
		exec 5<>/dev/tcp/$0/$1 || exit 1
		printf "get %s\r\n" "$2" >&5
		while IFS= read -r -t 2 line <&5; do
			line=${line%$'"'\r'"'}
			case "$line" in END) break ;; VALUE*) read -r -t 2 v <&5; echo "${v%$'"'\r'"'}" ;; esac
		done' "${TOPO_B4[i]}" $TOPO_MC_PORT "$key"
}

topo_teardown() {
	[ -n "${TOPO_PREFIX:-}" ] || return 0
	local ns i
	set +e
	if ip netns list 2>/dev/null | grep -qw "^$TOPO_R"; then
		if [ -x "$TOPO_KEYROUTER" ]; then
			topo_kr unload "$TOPO_R_IN" --instance "$TOPO_INSTANCE" >/dev/null 2>&1
		fi
		topo_netexec "$TOPO_R" xdp-loader unload "$TOPO_R_IN" --all >/dev/null 2>&1
		ip -n "$TOPO_R" link set dev "$TOPO_R_IN" xdp off 2>/dev/null
		ip netns exec "$TOPO_R" tc qdisc del dev "$TOPO_R_IN" clsact 2>/dev/null
	fi
	[ -n "${TOPO_INSTANCE:-}" ] && rm -rf "/sys/fs/bpf/keyrouter/$TOPO_INSTANCE"
	rmdir /sys/fs/bpf/keyrouter 2>/dev/null
	topo_kill_ns "${TOPO_B[@]}" "$TOPO_C" "$TOPO_R" "$TOPO_SW"
	if [ -s "${TOPO_DIR:-}/pids" ]; then
		local pid rest
		while read -r pid rest; do kill "$pid" 2>/dev/null; done <"$TOPO_DIR/pids"
	fi
	for ns in "${TOPO_B[@]}" "$TOPO_C" "$TOPO_R" "$TOPO_SW"; do echo "netns del $ns"; done |
		ip -force -batch - 2>/dev/null
	[ "${TOPO_KEEP_DIR:-0}" = 1 ] || rm -rf "$TOPO_DIR"
	rm -f "$TOPO_LOCKS/$TOPO_PREFIX.lock"
	TOPO_PREFIX=
	return 0
}
