#!/usr/bin/env bats
# The QUIC-LB-aware QUIC server of the end-to-end tests (tests/lib/quic_server_build.sh:
# Debian's ngtcp2 example server with tests/lib/ngtcp2-quic-lb.patch), on its own, without
# keyrouter: Debian's gtlsclient talks to it over loopback in a network namespace, and every
# connection ID the server issued (the SCID of its first packets, every NEW_CONNECTION_ID)
# is taken from the client's log and decoded by tests/lib/quic_lb_oracle.py, a decoder
# written from the draft on python3-cryptography's AES (no keyrouter code), which first
# proves itself on every line of tests/data/quic_lb_vectors.txt.

setup_file() {
	ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	export ROOT
	export QS_DIR=$(mktemp -d "/tmp/kr-qlbs-$$.XXXXXX")
	export QS_NS=kr-e2e-$$-qlbs
	local t0=$SECONDS
	QS_BIN=$("$ROOT/tests/lib/quic_server_build.sh" 2>"$QS_DIR/build.err") || {
		cat "$QS_DIR/build.err" >&2; return 1; }
	export QS_BIN
	# a fresh build says how long it took (cached: nothing)
	sed 's/^/# /' "$QS_DIR/build.err" >&3
	echo "# server: $QS_BIN ($((SECONDS - t0)) s including the cache check)" >&3
	ip netns add "$QS_NS" && ip -n "$QS_NS" link set lo up || return 1
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj "/CN=keyrouter-qlbs" -addext "subjectAltName=IP:127.0.0.1" \
		-keyout "$QS_DIR/key.pem" -out "$QS_DIR/cert.pem" 2>/dev/null || return 1
	mkdir -p "$QS_DIR/www"
	echo served >"$QS_DIR/www/id"
	head -c 200000 /dev/urandom >"$QS_DIR/www/blob"
}

teardown_file() {
	local p
	for p in $(ip netns pids "$QS_NS" 2>/dev/null); do kill "$p" 2>/dev/null; done
	sleep 0.2
	for p in $(ip netns pids "$QS_NS" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	ip netns del "$QS_NS" 2>/dev/null
	rm -rf "$QS_DIR"
}

# qs_run PORT SPEC CONNECTIONS: the server with QUIC_LB=SPEC (empty: unset) on 127.0.0.1:PORT,
# CONNECTIONS clients one after the other, each fetching /id and a 200 kB /blob.  Prints the
# server's CIDs the clients saw, one per line, "CONN CID"; fails when a download fails.
qs_run() {
	local port=$1 spec=$2 n=$3 k pid d rc=0
	if [ -n "$spec" ]; then
		ip netns exec "$QS_NS" env QUIC_LB="$spec" "$QS_BIN" -q -d "$QS_DIR/www" 127.0.0.1 "$port" \
			"$QS_DIR/key.pem" "$QS_DIR/cert.pem" >"$QS_DIR/srv$port.log" 2>&1 3>&- &
	else
		ip netns exec "$QS_NS" "$QS_BIN" -q -d "$QS_DIR/www" 127.0.0.1 "$port" \
			"$QS_DIR/key.pem" "$QS_DIR/cert.pem" >"$QS_DIR/srv$port.log" 2>&1 3>&- &
	fi
	pid=$!
	for ((k = 0; k < 50; k++)); do
		ip netns exec "$QS_NS" ss -Hlnu "sport = :$port" | grep -q . && break
		sleep 0.1
	done
	for ((k = 0; k < n; k++)); do
		d=$QS_DIR/c$port-$k
		mkdir -p "$d/dl"
		timeout 20 ip netns exec "$QS_NS" gtlsclient --no-quic-dump --no-http-dump --timeout=3s \
			--exit-on-all-streams-close --download "$d/dl" 127.0.0.1 "$port" \
			"https://127.0.0.1:$port/id" "https://127.0.0.1:$port/blob" </dev/null >"$d/log" 2>&1 3>&-
		if ! cmp -s "$d/dl/blob" "$QS_DIR/www/blob" || [ "$(cat "$d/dl/id" 2>/dev/null)" != served ]; then
			echo "connection $k: download failed" >&2
			tail -5 "$d/log" >&2
			rc=1
		fi
		# the SCID of the server's packets, and the CIDs of its NEW_CONNECTION_ID frames
		{ grep -o 'pkt rx pkn=[0-9]* dcid=0x[0-9a-f]* scid=0x[0-9a-f]*' "$d/log" | sed 's/.*scid=0x//'
		  grep 'frm rx .* NEW_CONNECTION_ID' "$d/log" | grep -o ' cid=0x[0-9a-f]*' | sed 's/.*0x//'
		} | sort -u | sed "s/^/$k /"
	done
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return $rc
}

# qs_check CR SID NONCE_LEN KEY|- PORT: 4 connections through a server configured so; every
# CID it issued has the configured length and first octet, decodes to its server ID, and
# none repeats (each connection: its first SCID and the NEW_CONNECTION_ID CIDs, 7 here).
qs_check() {
	local cr=$1 sid=$2 nl=$3 key=$4 port=$5 sl spec len
	sl=$((${#sid} / 2))
	len=$((1 + sl + nl))
	spec="cr=$cr,sid=$sid,nonce=$nl"
	[ "$key" = - ] || spec+=",key=$key"
	qs_run "$port" "$spec" 4 >"$QS_DIR/cids$port" || return 1
	head -1 "$QS_DIR/srv$port.log"
	/usr/bin/python3 "$ROOT/tests/lib/quic_lb_oracle.py" decode "$sl" "$nl" "$key" \
		$(awk '{ print $2 }' "$QS_DIR/cids$port") >"$QS_DIR/dec$port" || return 1
	awk -v cr="$cr" -v sid="$sid" -v len="$len" '
		{ n++; seen[$1]++
		  first = substr($1, 1, 2)
		  want = sprintf("%02x", cr * 32 + len - 1)
		  if (length($1) != 2 * len) { bad++; printf "  %s: %d octets, not %d\n", $1, length($1) / 2, len }
		  else if (first != want) { bad++; printf "  %s: first octet %s, not %s\n", $1, first, want }
		  else if ($2 != cr || $3 != sid) { bad++; printf "  %s: decodes to config %s server %s\n", $1, $2, $3 } }
		END { for (c in seen) if (seen[c] > 1) { bad++; printf "  %s issued %d times\n", c, seen[c] }
		      printf "%d CIDs issued over 4 connections, every one %d octets, config rotation %s, server ID %s: %s\n", n, len, cr, sid, bad ? "NO" : "yes"
		      exit (bad > 0 || n < 4 * 2) }' "$QS_DIR/dec$port"
}

@test "oracle: the independent QUIC-LB decoder reproduces every test vector" {
	run /usr/bin/python3 "$ROOT/tests/lib/quic_lb_oracle.py" selftest "$ROOT/tests/data/quic_lb_vectors.txt"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "plaintext CIDs (config 1, 3-octet server ID, 8-octet nonce): every CID the server issues carries its ID" {
	run qs_check 1 0a0b0c 8 - 4501
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "single-pass AES CIDs (config 2, server ID 3 + nonce 13 = 16 octets)" {
	run qs_check 2 c0ffee 13 8f95f09245765f80256934e50c66207f 4502
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "four-pass AES CIDs, odd length (config 0, server ID 4 + nonce 7), and server ID longer than the nonce (config 6, 6 + 5)" {
	run qs_check 0 01020304 7 fdf726a9893ec05c0632d3956680baf0 4503
	echo "$output"
	[ "$status" -eq 0 ]
	run qs_check 6 a1b2c3d4e5f6 5 89185d950ee8813609166f6b113d178d 4504
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "without QUIC_LB the patched server is the example server: 18-octet random CIDs" {
	run qs_run 4505 "" 2
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(awk '{ print length($2) }' <<<"$output" | sort -u)" = 36 ]
}

@test "an invalid QUIC_LB stops the server with a clear error" {
	run ip netns exec "$QS_NS" env QUIC_LB="cr=7,sid=01,nonce=8" "$QS_BIN" -q 127.0.0.1 4506 \
		"$QS_DIR/key.pem" "$QS_DIR/cert.pem"
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"QUIC_LB: cr: config rotation 0..6"* ]]
	run ip netns exec "$QS_NS" env QUIC_LB="cr=0,sid=0102030405060708090a,nonce=12" "$QS_BIN" -q \
		127.0.0.1 4506 "$QS_DIR/key.pem" "$QS_DIR/cert.pem"
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"exceed 19"* ]]
}
