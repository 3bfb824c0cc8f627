#!/usr/bin/env bats
# QUIC-LB end to end: Debian's ngtcp2 example server patched to issue routable connection
# IDs (tests/lib/quic_server_build.sh) on 4 backends (IPv4 and IPv6 VIP), Debian's
# unmodified gtlsclient on the client, keyrouter in native XDP on the router.  The `quic`
# services carry a QUIC-LB configuration (IPv4: four-pass AES, IPv6: single-pass AES) and
# each backend its server IDs (tests/lib/e2e_quic_lb.bash).
#
#  1. 24 concurrent connections per family and forwarding mode (l2, ipip): every one
#     completes, on the backend `keyrouter lookup` gives for its initial DCID (the ring: the
#     client chose that DCID); every server CID the client used decodes (an independent
#     decoder) to that backend's server ID; the service's QUIC-LB counters rose by exactly
#     the client's datagrams: "routed by CID" by those carrying a server CID, the fallbacks
#     by those carrying the initial DCID.
#  2. 24 long transfers (12 per family) while the rings are staged with a 4th backend,
#     migrated 0 -> 50 -> 100 % and committed: none breaks, every connection is still
#     running at the commit; connections opened afterwards land where the new ring says.
#     The 4th backend was registered first (applied at weight 0 with its server IDs): the
#     server-ID table is written by `apply`, and a backend must be in it before a ring
#     sends it connections, or the CIDs it issues fall back to the ring (docs/quic.md).
#     The same in `tuple` mode: exactly the connections whose 4-tuple moved break.
#  3. NAT rebinding (gtlsclient --change-local-addr --nat-rebinding) in the middle of 12
#     long transfers, ipip: none breaks; in `tuple` mode exactly those whose new port maps
#     to another backend break.
#  4. A backend set to drain in the middle of 12 long transfers keeps its connections (their
#     CIDs still route to it) while new connections avoid it; set down, its connections
#     break (their state was on it) and only those.
#  5. One summary line (the figures of 1-3).
# During 2-4 every connection's download (and in 3 its upload) is limited to a rate of its
# own (htb per client port, qlb_flow_limit), so that each long transfer lasts several
# seconds however fast the machine is and whenever its client got to start.

load ../lib/e2e_common
load ../lib/e2e_quic_lb

QLB_CONC=24
QLB_FLOW_RATE=2mbit	# per connection: 1 MiB in >= 4.2 s
QLB_REBIND_RATE=2mbit	# per connection, both ways: 512 KiB up >= 2 s, then 1 MiB down

setup_file() {
	e2e_require_keyrouter "ring stage" "ring migrate" "ring commit" diff "quic-lb decode" || return 0
	qlb_build_server || return 1
	e2e_setup_file 4 || return 1
	topo_decap || return 1
	qlb_port_range || return 1
	qlb_start_servers || return 1
	# the rings before the change list backend 4 at weight 0: it is registered (its server
	# IDs known to keyrouter) but owns no keys -- the placement is that of b1 b2 b3 alone
	qlb_config "$TOPO_DIR/cid3-l2.json" l2 "1 2 3 4" quic "4" || return 1
	qlb_config "$TOPO_DIR/cid4-l2.json" l2 "1 2 3 4" quic || return 1
	qlb_config "$TOPO_DIR/cid3-ipip.json" ipip "1 2 3" quic || return 1
	qlb_config "$TOPO_DIR/tuple3-l2.json" l2 "1 2 3 4" tuple "4" || return 1
	qlb_config "$TOPO_DIR/tuple4-l2.json" l2 "1 2 3 4" tuple || return 1
	qlb_config "$TOPO_DIR/tuple3-ipip.json" ipip "1 2 3" tuple || return 1
	: >"$TOPO_DIR/summary"
	head -c 262144 /dev/urandom >"$TOPO_DIR/upload"
	e2e_load "$TOPO_DIR/cid3-l2.json" >"$TOPO_DIR/load.log" 2>&1 || { cat "$TOPO_DIR/load.log" >&2; return 1; }
}

teardown_file() { e2e_teardown_file; }
setup() { e2e_setup; }

# nstatus STATUS RESULTS...: how many connections ended with STATUS (OK, BROKEN).
nstatus() { local s=$1; shift; awk -v s="$s" '$3 == s { n++ } END { print n + 0 }' "$@"; }

fam_vip() { if [ "$1" = 4 ]; then echo "$TOPO_VIP4"; else echo "$TOPO_VIP6"; fi; }
fam_client() { if [ "$1" = 4 ]; then echo "$TOPO_CLIENT4:$2"; else echo "[$TOPO_CLIENT6]:$2"; fi; }

# served_as_predicted RESULTS PREDICTIONS: every connection completed on its predicted backend.
served_as_predicted() {
	paste -d' ' "$1" "$2" | awk '
		{ n++; if ($3 == "OK") ok++
		  if ($3 != "OK" || $2 != "b" $11) { bad++; if (bad <= 5) printf "  connection %s: %s, served by %s, predicted b%s\n", $1, $3, $2, $11 } }
		END { printf "%d connections, %d completed, %d on the predicted backend\n", n, ok, n - bad; exit bad > 0 }'
}

# batch TAG CONFIG FAMILY: QLB_CONC concurrent connections (/id and a 64 KiB /blob) through
# service quicFAMILY, checked as described in the header.
batch() {
	local tag=$1 cfg=$2 fam=$3 svc=quic$3 before after res=$TOPO_DIR/$1.res
	before=$(qlb_counters "$fam") && [ -n "$before" ] || { echo "no QUIC-LB counters for $svc"; return 1; }
	qlb_start "$tag" "$(fam_vip "$fam")" $QLB_CONC /id /blob
	qlb_wait "$tag"
	qlb_results "$tag" >"$res"
	after=$(qlb_counters_settled "$fam")
	qlb_predict "$cfg" "$svc" "$res" >"$res.pred" || return 1
	echo "$tag:"
	served_as_predicted "$res" "$res.pred" || return 1
	qlb_check_cids "$fam" "$res" || return 1
	awk -v b="$before" -v a="$after" '{ ni += $7; nc += $8 }
		END { split(b, x, " "); split(a, y, " ")
		      printf "client datagrams with a server CID %d, routed by CID %d; with the initial DCID %d, ring fallback %d\n", nc, y[1] - x[1], ni, y[2] - x[2]
		      exit !(nc > 0 && y[1] - x[1] == nc && y[2] - x[2] == ni) }' "$res" || return 1
	echo "conn $(wc -l <"$res") $(nstatus OK "$res")" >>"$TOPO_DIR/summary"
}

@test "quic-lb: 24 concurrent connections per family, l2 and ipip: all complete on the ring's backend for their first Initial, every later datagram routed by its CID" {
	run qlb_apply "$TOPO_DIR/cid3-l2.json"
	[ "$status" -eq 0 ]
	run batch l2v4 "$TOPO_DIR/cid3-l2.json" 4
	echo "$output"
	[ "$status" -eq 0 ]
	run batch l2v6 "$TOPO_DIR/cid3-l2.json" 6
	echo "$output"
	[ "$status" -eq 0 ]
	run qlb_apply "$TOPO_DIR/cid3-ipip.json"
	[ "$status" -eq 0 ]
	run batch ipipv4 "$TOPO_DIR/cid3-ipip.json" 4
	echo "$output"
	[ "$status" -eq 0 ]
	run batch ipipv6 "$TOPO_DIR/cid3-ipip.json" 6
	echo "$output"
	[ "$status" -eq 0 ]
}

# ring_change KTYPE: 12 + 12 long transfers while quic4 and quic6 are staged with backend 4
# added, migrated to 50 and 100 %, and committed (configs KTYPE3-l2 -> KTYPE4-l2).  Results
# in $TOPO_DIR/rcKTYPE{4,6}.res; "running at commit" in $TOPO_DIR/rcKTYPE.running.
ring_change() {
	local k=$1 old=$TOPO_DIR/${1}3-l2.json new=$TOPO_DIR/${1}4-l2.json r fam kr=(--instance "$TOPO_INSTANCE")
	qlb_apply "$old" || return 1
	qlb_flow_limit "$TOPO_R" "$TOPO_R_IN" dport $QLB_FLOW_RATE || return 1
	if [ "$k" = cid ]; then { qlb_counters 4; qlb_counters 6; } >"$TOPO_DIR/rc$k.before"; fi
	rm -f "$TOPO_DIR/gate"
	QLB_GATE=$TOPO_DIR/gate qlb_start "rc${k}4" "$TOPO_VIP4" $((QLB_CONC / 2)) /id /long
	QLB_GATE=$TOPO_DIR/gate qlb_start "rc${k}6" "$TOPO_VIP6" $((QLB_CONC / 2)) /id /long
	touch "$TOPO_DIR/gate"
	date +%s.%N >"$TOPO_DIR/rc$k.start"
	qlb_receiving "rc${k}4" /long && qlb_receiving "rc${k}6" /long || { qlb_wait "rc${k}4"; qlb_wait "rc${k}6"; return 1; }
	date +%s.%N >"$TOPO_DIR/rc$k.stage"
	for r in quic4 quic6; do topo_kr ring stage $r -c "$new" "${kr[@]}" >/dev/null || return 1; done
	for r in quic4 quic6; do topo_kr ring migrate $r --percent 50 "${kr[@]}" >/dev/null || return 1; done
	for r in quic4 quic6; do topo_kr ring migrate $r --percent 100 "${kr[@]}" >/dev/null || return 1; done
	for r in quic4 quic6; do topo_kr ring commit $r "${kr[@]}" >/dev/null || return 1; done
	date +%s.%N >"$TOPO_DIR/rc$k.commit"
	echo $(($(qlb_running "rc${k}4") + $(qlb_running "rc${k}6"))) >"$TOPO_DIR/rc$k.running"
	qlb_wait "rc${k}4"
	qlb_wait "rc${k}6"
	qlb_flow_limit_off "$TOPO_R" "$TOPO_R_IN"
	for fam in 4 6; do qlb_results "rc$k$fam" >"$TOPO_DIR/rc$k$fam.res"; done
	if [ "$k" = cid ]; then { qlb_counters_settled 4; qlb_counters_settled 6; } >"$TOPO_DIR/rc$k.after"; fi
}

# ring_change_times KTYPE: when the steps happened and how long the transfers lasted.
ring_change_times() {
	cat "$TOPO_DIR/rc$1"[46]/*/end | awk -v s="$(cat "$TOPO_DIR/rc$1.start")" -v a="$(cat "$TOPO_DIR/rc$1.stage")" \
		-v c="$(cat "$TOPO_DIR/rc$1.commit")" '
		{ d = $1 - s; if (NR == 1 || d < lo) lo = d; if (d > hi) hi = d }
		END { printf "all receiving after %.1f s, stage .. commit %.1f .. %.1f s, transfers ended after %.1f .. %.1f s\n", a - s, a - s, c - s, lo, hi }'
}

# counters_agree BEFORE AFTER RESULTS4 RESULTS6: the QUIC-LB counters of quic4 and quic6
# (lines "ROUTED FALLBACK") rose by exactly the client datagrams that carried a server CID
# and those that carried the initial DCID.
counters_agree() {
	awk 'FILENAME == ARGV[1] { b[FNR] = $0; next }
	     FILENAME == ARGV[2] { a[FNR] = $0; next }
	     FILENAME == ARGV[3] { ni[1] += $7; nc[1] += $8; next }
	     { ni[2] += $7; nc[2] += $8 }
	     END { for (f = 1; f <= 2; f++) {
			split(b[f], x, " "); split(a[f], y, " ")
			printf "IPv%d: client datagrams with a server CID %d, routed by CID %d; with the initial DCID %d, ring fallback %d\n", f == 1 ? 4 : 6, nc[f], y[1] - x[1], ni[f], y[2] - x[2]
			if (!(nc[f] > 0 && y[1] - x[1] == nc[f] && y[2] - x[2] == ni[f])) bad++ }
		   exit bad > 0 }' "$@"
}

# moved_tuples FAMILY RESULTS OLDCFG NEWCFG: "K MOVED" per connection, MOVED = 1 when
# lookup(client address:port) differs between the two configurations (tuple mode), where
# the port is the client's first (PORT0, field 4) or, for a rebinding, its last and first.
moved_tuples() {
	local fam=$1 res=$2 svc=quic$1 k p0 p1 rest
	while read -r k _ _ p0 p1 rest; do
		fam_client "$fam" "$p0"
		fam_client "$fam" "$p1"
	done <"$res" >"$res.keys"
	if [ "$3" = "$4" ]; then	# rebinding: first port against last port, one config
		e2e_predict "$3" "$svc" "$res.keys" | awk '{ p[NR] = $2 } END { for (i = 1; i < NR; i += 2) print (i - 1) / 2, (p[i] != p[i + 1]) }'
	else
		paste -d' ' <(e2e_predict "$3" "$svc" "$res.keys") <(e2e_predict "$4" "$svc" "$res.keys") |
			awk 'NR % 2 == 1 { print (NR - 1) / 2, ($2 != $4) }'
	fi
}

@test "quic-lb: 24 long transfers across ring stage, migrate 0 -> 50 -> 100 %, commit with a 4th backend: 0 broken (tuple mode: exactly the moved ones break)" {
	local f4 f6 res p
	f4=$("$TOPO_KEYROUTER" diff --old-config "$TOPO_DIR/cid3-l2.json" --new-config "$TOPO_DIR/cid4-l2.json" --ring quic4 --json | jq -r .moved)
	f6=$("$TOPO_KEYROUTER" diff --old-config "$TOPO_DIR/cid3-l2.json" --new-config "$TOPO_DIR/cid4-l2.json" --ring quic6 --json | jq -r .moved)
	echo "keyrouter diff: the 4th backend moves $f4 (quic4) and $f6 (quic6) of the key space"
	awk -v a="$f4" -v b="$f6" 'BEGIN { exit !(a >= 0.2 && b >= 0.2) }'
	# backend 4 at weight 0 changes no placement: 2000 client 4-tuples map as with b1 b2 b3 alone
	qlb_config "$TOPO_DIR/tuple3only.json" l2 "1 2 3" tuple
	for ((p = 1024; p < 3024; p++)); do echo "$TOPO_CLIENT4:$p"; done >"$TOPO_DIR/w0.keys"
	run cmp <(e2e_predict "$TOPO_DIR/tuple3only.json" quic4 "$TOPO_DIR/w0.keys") \
		<(e2e_predict "$TOPO_DIR/tuple3-l2.json" quic4 "$TOPO_DIR/w0.keys")
	echo "backend 4 at weight 0: 2000 4-tuples placed as without it: $([ "$status" = 0 ] && echo yes || echo NO)"
	[ "$status" -eq 0 ]

	run ring_change cid
	echo "$output"
	[ "$status" -eq 0 ]
	echo "quic-lb: $(ring_change_times cid)"
	echo "quic-lb: running at the commit: $(cat "$TOPO_DIR/rccid.running") of $QLB_CONC"
	[ "$(cat "$TOPO_DIR/rccid.running")" = $QLB_CONC ]
	run counters_agree "$TOPO_DIR/rccid.before" "$TOPO_DIR/rccid.after" "$TOPO_DIR/rccid4.res" "$TOPO_DIR/rccid6.res"
	echo "$output"
	[ "$status" -eq 0 ]
	for fam in 4 6; do
		res=$TOPO_DIR/rccid$fam.res
		qlb_predict "$TOPO_DIR/cid3-l2.json" quic$fam "$res" >"$res.pred"
		run served_as_predicted "$res" "$res.pred"
		echo "IPv$fam long transfers: $output"
		[ "$status" -eq 0 ]
		run qlb_check_cids "$fam" "$res"
		echo "$output"
		[ "$status" -eq 0 ]
	done
	# new connections after the commit: the new ring (with backend 4) places them
	for fam in 4 6; do
		res=$TOPO_DIR/after$fam.res
		qlb_start "after$fam" "$(fam_vip $fam)" $((QLB_CONC / 2)) /id
		qlb_wait "after$fam"
		qlb_results "after$fam" >"$res"
		qlb_predict "$TOPO_DIR/cid4-l2.json" quic$fam "$res" >"$res.pred"
		run served_as_predicted "$res" "$res.pred"
		echo "IPv$fam connections opened after the commit: $output ($(awk '$2 == "b4"' "$res" | wc -l) on backend 4)"
		[ "$status" -eq 0 ]
	done
	local m mc
	m=$(cat "$TOPO_DIR"/rccid[46].res | wc -l)
	mc=$(nstatus OK "$TOPO_DIR"/rccid[46].res)

	run ring_change tuple
	echo "$output"
	[ "$status" -eq 0 ]
	echo "tuple: $(ring_change_times tuple)"
	echo "tuple: running at the commit: $(cat "$TOPO_DIR/rctuple.running") of $QLB_CONC"
	[ "$(cat "$TOPO_DIR/rctuple.running")" = $QLB_CONC ]
	local t=0 tp=0
	for fam in 4 6; do
		res=$TOPO_DIR/rctuple$fam.res
		moved_tuples $fam "$res" "$TOPO_DIR/tuple3-l2.json" "$TOPO_DIR/tuple4-l2.json" >"$res.moved"
		paste -d' ' "$res" "$res.moved" | awk -v f=$fam '{ printf "  tuple IPv%s connection %s: port %s %s, %s\n", f, $1, $4, $11 ? "moved" : "stayed", $3 }'
		t=$((t + $(nstatus BROKEN "$res")))
		tp=$((tp + $(awk '$2 == 1' "$res.moved" | wc -l)))
		# broken exactly when moved
		run awk '{ if (($3 == "BROKEN") != ($11 == 1)) bad++ } END { exit bad > 0 }' <(paste -d' ' "$res" "$res.moved")
		[ "$status" -eq 0 ]
	done
	echo "tuple mode: $t of $QLB_CONC broken, $tp of $QLB_CONC 4-tuples moved"
	echo "ring $m $mc $t" >>"$TOPO_DIR/summary"
	[ "$mc" = "$m" ]
}

# rebinding KTYPE: 6 + 6 long transfers over ipip whose client rebinds its port 1 s after
# the handshake (NAT rebinding: the client just sends from a new port; the server sees the
# new path and validates it).  Each request uploads 256 KiB (POST) before /long comes
# back: the client is sending when it rebinds (a client with nothing to send after the
# change would never tell the server its new port, with or without a load balancer), and
# the client's egress is limited too, so the upload is still running at the rebinding.
rebinding() {
	local k=$1 fam
	qlb_apply "$TOPO_DIR/${k}3-ipip.json" || return 1
	qlb_flow_limit "$TOPO_R" "$TOPO_R_IN" dport $QLB_REBIND_RATE || return 1
	qlb_flow_limit "$TOPO_C" c0 sport $QLB_REBIND_RATE || return 1
	rm -f "$TOPO_DIR/gate"
	for fam in 4 6; do
		QLB_GATE=$TOPO_DIR/gate qlb_start "rb$k$fam" "$(fam_vip $fam)" 6 /id /long -- \
			-m POST -d "$TOPO_DIR/upload" --change-local-addr=1s --nat-rebinding
	done
	touch "$TOPO_DIR/gate"
	qlb_wait "rb${k}4"
	qlb_wait "rb${k}6"
	qlb_flow_limit_off "$TOPO_R" "$TOPO_R_IN"
	qlb_flow_limit_off "$TOPO_C" c0
	for fam in 4 6; do qlb_results "rb$k$fam" >"$TOPO_DIR/rb$k$fam.res"; done
}

@test "quic-lb: NAT rebinding in the middle of 12 long transfers (ipip): 0 broken (tuple mode: exactly those rebound to another backend break)" {
	local fam res k kc u=0 up=0
	run rebinding cid
	echo "$output"
	[ "$status" -eq 0 ]
	for fam in 4 6; do
		res=$TOPO_DIR/rbcid$fam.res
		qlb_predict "$TOPO_DIR/cid3-ipip.json" quic$fam "$res" >"$res.pred"
		run served_as_predicted "$res" "$res.pred"
		echo "IPv$fam rebinding: $output"
		[ "$status" -eq 0 ]
		# every client changed its port during the transfer
		run awk '{ n++; if ($4 == $5) { bad++; print "  connection " $1 ": port " $4 " never changed" } }
			 END { printf "%d of %d clients sent from a new port after the rebinding\n", n - bad, n; exit bad > 0 }' "$res"
		echo "$output"
		[ "$status" -eq 0 ]
		run qlb_check_cids "$fam" "$res"
		echo "$output"
		[ "$status" -eq 0 ]
	done
	k=$(cat "$TOPO_DIR"/rbcid[46].res | wc -l)
	kc=$(nstatus OK "$TOPO_DIR"/rbcid[46].res)

	run rebinding tuple
	echo "$output"
	[ "$status" -eq 0 ]
	for fam in 4 6; do
		res=$TOPO_DIR/rbtuple$fam.res
		run awk '$4 == $5 { bad++ } END { exit bad > 0 }' "$res"
		[ "$status" -eq 0 ]
		moved_tuples $fam "$res" "$TOPO_DIR/tuple3-ipip.json" "$TOPO_DIR/tuple3-ipip.json" >"$res.moved"
		paste -d' ' "$res" "$res.moved" | awk -v f=$fam '{ printf "  tuple IPv%s connection %s: port %s -> %s %s, %s\n", f, $1, $4, $5, $11 ? "another backend" : "same backend", $3 }'
		u=$((u + $(nstatus BROKEN "$res")))
		up=$((up + $(awk '$2 == 1' "$res.moved" | wc -l)))
		run awk '{ if (($3 == "BROKEN") != ($11 == 1)) bad++ } END { exit bad > 0 }' <(paste -d' ' "$res" "$res.moved")
		[ "$status" -eq 0 ]
	done
	echo "tuple mode: $u of $k broken, $up of $k rebound to another backend"
	echo "rebind $k $kc $u" >>"$TOPO_DIR/summary"
	[ "$kc" = "$k" ]
}

# drain_or_down STATE TAG: 12 long IPv4 transfers; once all are receiving, the backend of
# connection 0 is set STATE; then 12 new connections (/id); then the long transfers end
# and the backend is set up again.  Prints that backend's index.
drain_or_down() {
	local state=$1 tag=$2 d
	qlb_apply "$TOPO_DIR/cid3-l2.json" || return 1
	qlb_flow_limit "$TOPO_R" "$TOPO_R_IN" dport $QLB_FLOW_RATE || return 1
	rm -f "$TOPO_DIR/gate"
	QLB_GATE=$TOPO_DIR/gate qlb_start "$tag" "$TOPO_VIP4" $((QLB_CONC / 2)) /id /long
	touch "$TOPO_DIR/gate"
	qlb_receiving "$tag" /long || { qlb_wait "$tag"; return 1; }
	d=$(cat "$TOPO_DIR/$tag/0/dl/id") && d=${d#b}
	topo_kr backend set "${TOPO_B4[d]}:$TOPO_QUIC_PORT" "$state" --instance "$TOPO_INSTANCE" >/dev/null || return 1
	qlb_start "$tag-new" "$TOPO_VIP4" $((QLB_CONC / 2)) /id
	qlb_wait "$tag-new"
	qlb_wait "$tag"
	qlb_flow_limit_off "$TOPO_R" "$TOPO_R_IN"
	topo_kr backend set "${TOPO_B4[d]}:$TOPO_QUIC_PORT" up --instance "$TOPO_INSTANCE" >/dev/null || return 1
	qlb_results "$tag" >"$TOPO_DIR/$tag.res"
	qlb_results "$tag-new" >"$TOPO_DIR/$tag-new.res"
	echo "$d" >"$TOPO_DIR/$tag.backend"
}

@test "quic-lb: a draining backend keeps its connections (routed by CID), a down one loses them; new connections avoid both" {
	local d
	run drain_or_down drain drain
	echo "$output"
	[ "$status" -eq 0 ]
	d=$(cat "$TOPO_DIR/drain.backend")
	run awk -v b="b$d" '$2 == b { on++; if ($3 == "OK") ok++ } $3 != "OK" { bad++ }
		END { printf "drain b%s during 12 long transfers: %d of its %d connections completed, %d broken in all\n", substr(b, 2), ok, on, bad
		      exit !(on > 0 && bad == 0) }' "$TOPO_DIR/drain.res"
	echo "$output"
	[ "$status" -eq 0 ]
	run awk -v b="b$d" '$3 == "OK" { ok++ } $2 == b { on++ } END { printf "  12 new connections while b%s drains: %d completed, %d on it\n", substr(b, 2), ok, on; exit !(ok == NR && on == 0) }' "$TOPO_DIR/drain-new.res"
	echo "$output"
	[ "$status" -eq 0 ]

	run drain_or_down down down
	echo "$output"
	[ "$status" -eq 0 ]
	d=$(cat "$TOPO_DIR/down.backend")
	run awk -v b="b$d" '$2 == b { on++; if ($3 == "OK") ok++ } $2 != b && $3 == "OK" { other++ } $2 != b { n++ }
		END { printf "down b%s during 12 long transfers: %d of its %d connections broke (their state was on it); the other %d: %d completed\n", substr(b, 2), on - ok, on, n, other
		      exit !(on > 0 && ok == 0 && other == n) }' "$TOPO_DIR/down.res"
	echo "$output"
	[ "$status" -eq 0 ]
	run awk -v b="b$d" '$3 == "OK" { ok++ } $2 == b { on++ } END { printf "  12 new connections while b%s is down: %d completed, %d on it\n", substr(b, 2), ok, on; exit !(ok == NR && on == 0) }' "$TOPO_DIR/down-new.res"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "quic-lb: summary" {
	run awk '$1 == "conn" { n += $2; c += $3; parts["conn"]++ }
		 $1 == "ring" { m = $2; mc = $3; t = $4; parts["ring"]++ }
		 $1 == "rebind" { k = $2; kc = $3; u = $4; parts["rebind"]++ }
		 END { printf "quic-lb e2e: connections %d completed %d broken %d; across ring change %d completed %d broken %d (tuple mode broken %d of %d); rebinding %d completed %d broken %d (tuple mode broken %d of %d)\n", n, c, n - c, m, mc, m - mc, t, m, k, kc, k - kc, u, k
		       exit !(parts["conn"] == 4 && parts["ring"] == 1 && parts["rebind"] == 1 && n == c && m == mc && k == kc) }' "$TOPO_DIR/summary"
	echo "# $output" >&3
	[ "$status" -eq 0 ]
}
