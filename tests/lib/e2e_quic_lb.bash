# shellcheck shell=bash
# QUIC-LB end to end (tests/bats/e2e_quic_lb.bats): the QUIC-LB-aware server
# (tests/lib/quic_server_build.sh) on every backend, Debian's gtlsclient on the client,
# and the bookkeeping of every connection.  Sourced after e2e_common.bash.
#
# QUIC-LB configurations (one per service; the servers get the same by QUIC_LB):
#   quic4 (IPv4 VIP): config rotation 1, server ID 2 octets, nonce 15: four-pass AES, CIDs of 18
#   quic6 (IPv6 VIP): config rotation 2, server ID 2 octets, nonce 14: single-pass AES, CIDs of 17
# Backend I's server IDs: 04 0I (IPv4 ring) and 06 0I (IPv6 ring).
#
# Each backend serves /id ("bI"), /blob (64 KiB) and /long ($QLB_LONG_SIZE octets), the
# last two made of the line "keyrouter e2e blob served by backend bI".

QLB_CR4=1 QLB_NONCE4=15 QLB_CIDLEN4=18
QLB_CR6=2 QLB_NONCE6=14 QLB_CIDLEN6=17
QLB_SIDLEN=2
QLB_LONG_SIZE=${QLB_LONG_SIZE:-1048576}
QLB_ORACLE=$E2E_LIB/quic_lb_oracle.py

qlb_sid() { printf '%02x%02x' "$1" "$2"; }	# FAMILY(4|6) I

# The client's UDP ports (IPv4 and IPv6 sockets, rebinding included) come from this range,
# so that each can have a rate limit of its own (qlb_flow_limit).
QLB_PORTS_LO=40000 QLB_PORTS_N=128

qlb_port_range() {
	topo_sysctl "$TOPO_C" net.ipv4.ip_local_port_range="$QLB_PORTS_LO $((QLB_PORTS_LO + QLB_PORTS_N - 1))"
}

# qlb_flow_limit NS DEV dport|sport RATE: on NS's DEV, the UDP packets to (dport) or from
# (sport) each client port get a rate limit of their own (htb, one class per port, u32 on
# the port, IPv4 and IPv6): a connection's transfer lasts at least size / RATE however the
# machine schedules the clients, and no connection can finish early by starting first.
# Anything else passes unlimited.
qlb_flow_limit() {
	local ns=$1 dev=$2 dir=$3 rate=$4 i
	{
		echo "qdisc replace dev $dev root handle 1: htb default ffff"
		echo "class add dev $dev parent 1: classid 1:ffff htb rate 10gbit quantum 60000"
		for ((i = 1; i <= QLB_PORTS_N; i++)); do
			printf 'class add dev %s parent 1: classid 1:%x htb rate %s ceil %s burst 16k\n' "$dev" "$i" "$rate" "$rate"
			printf 'filter add dev %s parent 1: protocol ip prio 1 u32 match ip protocol 17 0xff match ip %s %d 0xffff flowid 1:%x\n' \
				"$dev" "$dir" $((QLB_PORTS_LO + i - 1)) "$i"
			printf 'filter add dev %s parent 1: protocol ipv6 prio 2 u32 match ip6 protocol 17 0xff match ip6 %s %d 0xffff flowid 1:%x\n' \
				"$dev" "$dir" $((QLB_PORTS_LO + i - 1)) "$i"
		done
	} | ip netns exec "$ns" tc -batch -
}

qlb_flow_limit_off() { ip netns exec "$1" tc qdisc del dev "$2" root 2>/dev/null; return 0; }

# The server, built (or found in the cache) by quic_server_build.sh.
qlb_build_server() {
	local err
	err=$(mktemp)
	QLB_SERVER=$("$E2E_LIB/quic_server_build.sh" "$E2E_ROOT/build" 2>"$err") || { cat "$err" >&2; rm -f "$err"; return 1; }
	# a fresh build says how long it took: on bats' TAP stream (fd 3) when there is one
	if [ -s "$err" ] && { true >&3; } 2>/dev/null; then sed 's/^/# /' "$err" >&3; else cat "$err" >&2; fi
	rm -f "$err"
	export QLB_SERVER
}

# The AES key (32 hex digits, mode 0600: what keyrouter's key files must be) and the
# servers on every backend, IPv4 and IPv6.
qlb_start_servers() {
	local i d www key=$TOPO_DIR/qlb.key
	d=$TOPO_DIR/tls
	mkdir -p "$d"
	(umask 077; od -An -N16 -tx1 /dev/urandom | tr -d ' \n' >"$key")
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj "/CN=keyrouter-e2e" -addext "subjectAltName=IP:$TOPO_VIP4,IP:$TOPO_VIP6" \
		-keyout "$d/key.pem" -out "$d/cert.pem" 2>/dev/null || {
		topo_die "openssl could not make a self-signed certificate"; return 1; }
	for ((i = 1; i <= TOPO_N; i++)); do
		www=$TOPO_DIR/www-b$i
		mkdir -p "$www"
		printf 'b%d\n' "$i" >"$www/id"
		yes "keyrouter e2e blob served by backend b$i" | head -c 65536 >"$www/blob"
		yes "keyrouter e2e blob served by backend b$i" | head -c "$QLB_LONG_SIZE" >"$www/long"
		topo_spawn "${TOPO_B[i]}" "$TOPO_DIR/qlb4-b$i.log" env \
			QUIC_LB="cr=$QLB_CR4,sid=$(qlb_sid 4 "$i"),nonce=$QLB_NONCE4,key_file=$key" \
			"$QLB_SERVER" -q -d "$www" "$TOPO_VIP4" "$TOPO_QUIC_PORT" "$d/key.pem" "$d/cert.pem" || return 1
		topo_spawn "${TOPO_B[i]}" "$TOPO_DIR/qlb6-b$i.log" env \
			QUIC_LB="cr=$QLB_CR6,sid=$(qlb_sid 6 "$i"),nonce=$QLB_NONCE6,key_file=$key" \
			"$QLB_SERVER" -q -d "$www" "$TOPO_VIP6" "$TOPO_QUIC_PORT" "$d/key.pem" "$d/cert.pem" || return 1
	done
	for ((i = 1; i <= TOPO_N; i++)); do
		topo_wait_listen "${TOPO_B[i]}" udp "$TOPO_QUIC_PORT" || return 1
	done
	# every server says it issues routable CIDs (QUIC_LB accepted)
	for ((i = 1; i <= TOPO_N; i++)); do
		grep -q '^QUIC-LB: config rotation' "$TOPO_DIR/qlb4-b$i.log" &&
		grep -q '^QUIC-LB: config rotation' "$TOPO_DIR/qlb6-b$i.log" || {
			cat "$TOPO_DIR/qlb4-b$i.log" "$TOPO_DIR/qlb6-b$i.log" >&2
			topo_die "backend $i: the QUIC-LB server did not start"; return 1; }
	done
}

# qlb_config OUT MODE "I J K" quic|tuple ["L ..."]: e2e_config's service "quic" (rings
# quic4/quic6, services quic4/quic6) with, in quic mode, the QUIC-LB configuration of each
# service and the server IDs of each backend.  Backends L... get weight 0: registered (their
# server IDs are published) but without points, so the ring places keys exactly as without
# them.
qlb_config() {
	local out=$1 mode=$2 list=$3 ktype=$4 zero=${5:-} i sids4="{}" sids6="{}" spec=quic:tuple:$TOPO_QUIC_PORT
	local z4="[]" z6="[]"
	[ "$ktype" = tuple ] || spec=quic:quic:$TOPO_QUIC_PORT:$QLB_CIDLEN4
	e2e_config "$out.base" "$mode" "$list" "$spec"
	for i in $zero; do
		z4=$(jq -c --arg a "${TOPO_B4[i]}:$TOPO_QUIC_PORT" '. + [$a]' <<<"$z4")
		z6=$(jq -c --arg a "[${TOPO_B6[i]}]:$TOPO_QUIC_PORT" '. + [$a]' <<<"$z6")
	done
	jq --argjson z "$(jq -c -n --argjson a "$z4" --argjson b "$z6" '$a + $b')" \
		'.rings |= map(.backends |= map(if (.address as $x | $z | index($x)) != null then .weight = 0 else . end))' \
		"$out.base" >"$out.w" && mv "$out.w" "$out.base" || return 1
	if [ "$ktype" = tuple ]; then
		mv "$out.base" "$out"
		return
	fi
	for i in $list; do
		sids4=$(jq -c --arg a "${TOPO_B4[i]}:$TOPO_QUIC_PORT" --arg s "$(qlb_sid 4 "$i")" \
			--arg cr "$QLB_CR4" '. + {($a): {($cr): $s}}' <<<"$sids4")
		sids6=$(jq -c --arg a "[${TOPO_B6[i]}]:$TOPO_QUIC_PORT" --arg s "$(qlb_sid 6 "$i")" \
			--arg cr "$QLB_CR6" '. + {($a): {($cr): $s}}' <<<"$sids6")
	done
	jq --argjson s4 "$sids4" --argjson s6 "$sids6" --arg key "$TOPO_DIR/qlb.key" \
		--argjson cr4 "$QLB_CR4" --argjson n4 "$QLB_NONCE4" --argjson l4 "$QLB_CIDLEN4" \
		--argjson cr6 "$QLB_CR6" --argjson n6 "$QLB_NONCE6" --argjson l6 "$QLB_CIDLEN6" \
		--argjson sl "$QLB_SIDLEN" '
		.rings |= map(.backends |= map(. + { quic_lb_server_ids: ($s4[.address] // $s6[.address]) })) |
		.services |= map(
			if .name == "quic4" then
				.key.cid_length = $l4 |
				.quic_lb = [{ config_rotation: $cr4, server_id_length: $sl, nonce_length: $n4, key_file: $key }]
			else
				.key.cid_length = $l6 |
				.quic_lb = [{ config_rotation: $cr6, server_id_length: $sl, nonce_length: $n6, key_file: $key }]
			end)' "$out.base" >"$out" || return 1
	rm -f "$out.base"
}

# qlb_apply CONFIG: publish CONFIG on the loaded instance.  Forced: the tests add a 4th
# backend (a quarter of the keys, a little more than max_move) in one apply on purpose, to
# see exactly which connections a ring change breaks.
qlb_apply() {
	topo_kr apply --force -c "$1" --instance "$TOPO_INSTANCE" >"$TOPO_DIR/apply.log" 2>&1 || {
		cat "$TOPO_DIR/apply.log" >&2; return 1; }
}

# qlb_counters FAMILY: "ROUTED FALLBACK" -- the QUIC-LB counters of the service on the
# FAMILY's VIP (`stats --json`): packets routed by the server ID of their DCID, and packets
# that went to the ring (every fallback reason).
qlb_counters() {
	local vip=$TOPO_VIP4:$TOPO_QUIC_PORT
	[ "$1" = 6 ] && vip="[$TOPO_VIP6]:$TOPO_QUIC_PORT"
	topo_kr stats --json --instance "$TOPO_INSTANCE" | jq -r --arg v "$vip" '
		.quic_lb[] | select(.vip == $v) |
		"\(.routed) \([.unroutable, .unknown_config, .unknown_server_id, .too_short,
			      .backend_down, .too_long] | add)"'
}

# qlb_counters_settled FAMILY: qlb_counters once two reads 0.1 s apart agree (the clients
# have exited, but their last datagrams may still be in the router's NAPI poll).
qlb_counters_settled() {
	local a b t
	a=$(qlb_counters "$1")
	for ((t = 0; t < 30; t++)); do
		sleep 0.1
		b=$(qlb_counters "$1")
		[ "$a" = "$b" ] && break
		a=$b
	done
	echo "$b"
}

# qlb_start TAG VIP N PATH... [-- gtlsclient args]: N gtlsclient connections at once from the
# client, each with a random 18-octet initial DCID and its own UDP port, fetching the PATHs;
# their pids go to $TOPO_DIR/TAG/pids.  Must be called in the test's own shell (not `run`),
# which later calls qlb_wait.  With QLB_GATE=FILE the connections start together, when FILE
# appears (so that they share the router's rate limit evenly from the start).
qlb_start() {
	local tag=$1 vip=$2 n=$3 url k d dcid urls=() args=()
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do urls+=("$1"); shift; done
	[ "${1:-}" = -- ] && { shift; args=("$@"); }
	case "$vip" in *:*) url="https://[$vip]:$TOPO_QUIC_PORT" ;; *) url="https://$vip:$TOPO_QUIC_PORT" ;; esac
	rm -rf "${TOPO_DIR:?}/$tag"
	mkdir -p "$TOPO_DIR/$tag"
	printf '%s\n' "${urls[@]}" >"$TOPO_DIR/$tag/paths"
	echo "$vip" >"$TOPO_DIR/$tag/vip"
	for ((k = 0; k < n; k++)); do
		d=$TOPO_DIR/$tag/$k
		mkdir -p "$d/dl"
		dcid=$(od -An -N18 -tx1 /dev/urandom | tr -d ' \n')
		echo "$dcid" >"$d/dcid"
		(
			# in the client's network namespace first, then (with a gate) wait for it:
			# only the exec of gtlsclient is left between the gate and the first packet
			timeout 60 nsenter --net="/run/netns/$TOPO_C" bash -c '
				if [ -n "$1" ]; then
					for ((t = 0; t < 3000; t++)); do [ -e "$1" ] && break; sleep 0.01; done
				fi
				shift
				exec gtlsclient "$@"' gate "${QLB_GATE:-}" --no-quic-dump --no-http-dump \
				--timeout=3s --no-pmtud --exit-on-all-streams-close --download "$d/dl" \
				--dcid "$dcid" "${args[@]}" "$vip" "$TOPO_QUIC_PORT" "${urls[@]/#/$url}" \
				</dev/null >"$d/log" 2>&1
			echo $? >"$d/rc"
			date +%s.%N >"$d/end"
		) 3>&- &
		echo $! >>"$TOPO_DIR/$tag/pids"
	done
}

# qlb_wait TAG: wait for every connection of TAG to end.
qlb_wait() {
	local p
	for p in $(cat "$TOPO_DIR/$1/pids"); do wait "$p" 2>/dev/null; done
	return 0
}

# qlb_running TAG: how many connections of TAG are still running.
qlb_running() {
	local p n=0
	for p in $(cat "$TOPO_DIR/$1/pids"); do kill -0 "$p" 2>/dev/null && n=$((n + 1)); done
	echo $n
}

# qlb_receiving TAG PATH: wait (at most 30 s) until every connection of TAG has received
# part of PATH; fails when one has not.
qlb_receiving() {
	local tag=$1 f=${2#/} k n t
	n=$(wc -l <"$TOPO_DIR/$tag/pids")
	for ((t = 0; t < 300; t++)); do
		local ok=0
		for ((k = 0; k < n; k++)); do
			[ -s "$TOPO_DIR/$tag/$k/dl/$f" ] && ok=$((ok + 1))
		done
		[ $ok = "$n" ] && return 0
		sleep 0.1
	done
	echo "only $ok of $n connections of $tag started receiving $f" >&2
	return 1
}

# qlb_results TAG: one line per connection of TAG (after qlb_wait):
#   K ID STATUS PORT0 PORT1 DCID NI NC CIDS
# ID: backend whose /id arrived ("none"); STATUS: OK when gtlsclient exited 0 and every
# PATH arrived whole with the content of backend ID, else BROKEN; PORT0/PORT1: the client's
# first and last UDP port (they differ after a rebinding); DCID: the initial DCID; NI: the
# client's datagrams whose first packet carried the initial DCID (the ring routes them),
# NC: the other datagrams (they carry a CID the server issued); CIDS: those server CIDs,
# comma-separated ("-": none).
qlb_results() {
	local tag=$1 k d n id st p f
	n=$(wc -l <"$TOPO_DIR/$tag/pids")
	for ((k = 0; k < n; k++)); do
		d=$TOPO_DIR/$tag/$k
		id=$(cat "$d/dl/id" 2>/dev/null)
		st=OK
		[ "$(cat "$d/rc" 2>/dev/null)" = 0 ] && [ -n "$id" ] || st=BROKEN
		while read -r p; do
			f=${p#/}
			[ "$f" = id ] && continue
			[ "$st" = OK ] || break
			cmp -s "$d/dl/$f" <(yes "keyrouter e2e blob served by backend $id" |
				head -c "$(stat -c %s "$TOPO_DIR/www-b${id#b}/$f" 2>/dev/null || echo 0)") || st=BROKEN
		done <"$TOPO_DIR/$tag/paths"
		awk -v k="$k" -v id="${id:-none}" -v st="$st" -v dcid="$(cat "$d/dcid")" '
			/ pkt tx / { if (first == "") for (i = 1; i <= NF; i++) if ($i ~ /^dcid=0x/) first = substr($i, 8) }
			/^Sent packet: local=/ {
				split($3, a, "="); p = a[2]; sub(/.*:/, "", p)
				if (p0 == "") p0 = p
				p1 = p
				if (first == dcid) ni++
				else { nc++; if (!(first in seen)) { seen[first] = 1; cids = cids (cids == "" ? "" : ",") first } }
				first = ""
			}
			END { printf "%s %s %s %s %s %s %d %d %s\n", k, id, st, p0 == "" ? 0 : p0, p1 == "" ? 0 : p1, dcid, ni, nc, cids == "" ? "-" : cids }' "$d/log"
	done
}

# qlb_predict CONFIG SERVICE RESULTS: "K I" per connection, I = the backend `keyrouter
# lookup` gives for its initial DCID under CONFIG (for a QUIC-LB service lookup adds how it
# decided: "quic-lb ring fallback: <reason>", or the server ID that routed the CID).
qlb_predict() {
	local i map=""
	awk '{ print $6 }' "$3" >"$3.dcids"
	for ((i = 1; i <= TOPO_N; i++)); do map+="${TOPO_B4[i]} $i ${TOPO_B6[i]} $i "; done
	"$TOPO_KEYROUTER" lookup -c "$1" --service "$2" --addr --keys-file "$3.dcids" >"$3.lookup" || return 1
	awk -v map="$map" 'BEGIN { n = split(map, m, " "); for (j = 1; j < n; j += 2) idx[m[j]] = m[j + 1] }
		NR == FNR { k[NR] = $1; next }
		{ b = "?"
		  for (i = 2; i <= NF; i++) if ($i ~ /^(\[[0-9a-f:]+\]|[0-9.]+):[0-9]+$/) {
			a = $i; sub(/:[0-9]+$/, "", a); gsub(/[][]/, "", a); if (a in idx) b = idx[a]; break }
		  print k[FNR], b }' "$3" "$3.lookup"
}

# qlb_check_cids FAMILY RESULTS: every server CID a client sent to decodes (the independent
# oracle) to the server ID of the backend that served the connection.  Prints the count.
qlb_check_cids() {
	local fam=$1 res=$2 cr nonce
	if [ "$fam" = 4 ]; then cr=$QLB_CR4 nonce=$QLB_NONCE4; else cr=$QLB_CR6 nonce=$QLB_NONCE6; fi
	awk '$3 == "OK" && $9 != "-" { n = split($9, c, ","); for (i = 1; i <= n; i++) print $2, c[i] }' "$res" >"$res.cids"
	[ -s "$res.cids" ] || { echo "no server CIDs in $res"; return 1; }
	/usr/bin/python3 "$QLB_ORACLE" decode "$QLB_SIDLEN" "$nonce" "$(cat "$TOPO_DIR/qlb.key")" \
		$(awk '{ print $2 }' "$res.cids") >"$res.dec" || return 1
	paste -d' ' "$res.cids" "$res.dec" | awk -v fam="$fam" -v cr="$cr" '
		{ n++; want = sprintf("%02x%02x", fam, substr($1, 2))
		  if ($4 != cr || $5 != want) { bad++; if (bad <= 5) printf "  cid %s of a connection served by %s decodes to config %s server %s\n", $2, $1, $4, $5 } }
		END { printf "%d server CIDs, each decodes to the server ID of the backend that served it\n", n
		      exit bad > 0 }'
}
