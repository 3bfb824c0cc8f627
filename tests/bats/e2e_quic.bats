#!/usr/bin/env bats
# QUIC through keyrouter, end to end: ngtcp2's gtlsserver on the VIP of 3 backends (each
# serves /id = "bI" and a 64 KiB /blob naming itself), gtlsclient on the client, keyrouter
# in native XDP, forwarding l2 (direct server return).
#
# `tuple` key mode (client address + port): every connection is pinned to one backend for
# its whole life, so handshakes complete and files arrive, each from the predicted backend.
#
# `quic` key mode (the Destination Connection ID): the client's first Initial carries a
# DCID the client chose (--dcid); the server then picks its own connection ID (SCID of its
# first packet) and from then on the client sends every packet with DCID = that server CID,
# which keyrouter hashes to some other point of the ring.  gtlsserver knows nothing of the
# ring (it does not encode a routable server id into its CIDs, as QUIC-LB would), so a
# connection only survives when both CIDs happen to map to the same backend.  The test
# checks exactly that: a connection completes if and only if lookup(initial DCID) ==
# lookup(server CID), and then it is served by that backend.

bats_require_minimum_version 1.5.0
load ../lib/e2e_common

setup_file() {
	e2e_require_keyrouter || return 0
	e2e_setup_file 3 || return 1
	topo_start_quic || return 1
	e2e_config "$TOPO_DIR/tuple.json" l2 "1 2 3" quic:tuple:4433
	e2e_config "$TOPO_DIR/cid.json" l2 "1 2 3" quic:quic:4433:18
	e2e_load "$TOPO_DIR/tuple.json" >"$TOPO_DIR/load.log" 2>&1 || { cat "$TOPO_DIR/load.log" >&2; return 1; }
}

teardown_file() { e2e_teardown_file; }
setup() { e2e_setup; }

quic_tuple() { # VIP SERVICE CONNECTIONS CLIENT_ADDR FORMAT
	local vip=$1 svc=$2 n=$3 bad
	e2e_quic_many "$vip" "$n" >"$TOPO_DIR/qt.out"
	bad=$(grep -vc ' BLOB_OK ' "$TOPO_DIR/qt.out")
	[ "$bad" = 0 ] || { echo "$bad of $n connections failed:"; grep -v ' BLOB_OK ' "$TOPO_DIR/qt.out"; return 1; }
	awk -v f="$5" -v a="$4" '{ printf f "\n", a, $2 }' "$TOPO_DIR/qt.out" >"$TOPO_DIR/qt.keys"
	awk -v f="$5" -v a="$4" '{ printf f " %s\n", a, $2, substr($1, 2) }' "$TOPO_DIR/qt.out" >"$TOPO_DIR/qt.ans"
	echo "$n connections completed, /id and 64 KiB /blob intact; distinct client ports: $(sort -u "$TOPO_DIR/qt.keys" | wc -l)"
	[ "$(sort -u "$TOPO_DIR/qt.keys" | wc -l)" = "$n" ] || return 1
	e2e_predict "$TOPO_DIR/tuple.json" "$svc" "$TOPO_DIR/qt.keys" >"$TOPO_DIR/qt.pred" || return 1
	e2e_compare "$TOPO_DIR/qt.pred" "$TOPO_DIR/qt.ans"
}

@test "quic tuple IPv4: 16 concurrent connections from distinct client ports complete, 64 KiB files arrive, each from the predicted backend" {
	run quic_tuple "$TOPO_VIP4" quic4 16 "$TOPO_CLIENT4" '%s:%s'
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "quic tuple IPv6: 8 concurrent connections, each from the predicted backend" {
	run quic_tuple "$TOPO_VIP6" quic6 8 "$TOPO_CLIENT6" '[%s]:%s'
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "quic connection-ID mode: a connection completes iff its initial DCID and the server's CID map to the same backend" {
	run topo_kr apply -c "$TOPO_DIR/cid.json" --instance "$TOPO_INSTANCE"
	echo "$output"
	[ "$status" -eq 0 ]
	E2E_QUIC_ID_ONLY=1 e2e_quic_many "$TOPO_VIP4" 12 >"$TOPO_DIR/qc.out"
	# every connection got the server's first packet (the first Initial goes to lookup(DCID))
	run -1 grep -q ' -$' "$TOPO_DIR/qc.out"
	awk '{ print $4 }' "$TOPO_DIR/qc.out" >"$TOPO_DIR/qc.dcid"
	awk '{ print $5 }' "$TOPO_DIR/qc.out" >"$TOPO_DIR/qc.scid"
	e2e_predict "$TOPO_DIR/cid.json" quic4 "$TOPO_DIR/qc.dcid" >"$TOPO_DIR/qc.pd"
	e2e_predict "$TOPO_DIR/cid.json" quic4 "$TOPO_DIR/qc.scid" >"$TOPO_DIR/qc.ps"
	# fields: id port blob dcid scid | dcid pred(dcid) | scid pred(scid)
	run awk '{ same = ($7 == $9); ok = ($3 == "ID_OK")
		   printf "initial dcid %s -> b%s, server cid %s -> b%s: %s\n", substr($4, 1, 8), $7, substr($5, 1, 8), $9, ok ? "completed, served by " $1 : "failed"
		   if (same != ok || (ok && $1 != "b" $7)) { bad++; print "  ^ not as predicted" }
		   n++; good += ok }
		 END { printf "connections %d, completed %d: exactly those whose two CIDs map to one backend\n", n, good
		       exit bad > 0 }' <(paste -d' ' "$TOPO_DIR/qc.out" "$TOPO_DIR/qc.pd" "$TOPO_DIR/qc.ps")
	echo "$output"
	[ "$status" -eq 0 ]
}
