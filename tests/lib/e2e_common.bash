# shellcheck shell=bash
# Shared by tests/bats/e2e_*.bats (bats `load ../lib/e2e_common`) and scripts/demo.sh:
# the topology (topo.sh) plus real-traffic helpers.

E2E_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
E2E_ROOT=$(cd "$E2E_LIB/../.." && pwd)
# shellcheck source=topo.sh
source "$E2E_LIB/topo.sh"

# What an end-to-end test needs from the machine; prints what is missing.
e2e_missing() {
	local t miss=()
	[ "$(id -u)" = 0 ] || miss+=("root")
	for t in ip nsenter ethtool unbound memcached gtlsserver gtlsclient dig kdig dnsperf \
		python3 openssl ss; do
		command -v "$t" >/dev/null 2>&1 || miss+=("$t")
	done
	[ -x "$TOPO_KEYROUTER" ] || miss+=("$TOPO_KEYROUTER (make)")
	[ -r "$TOPO_DECAP_OBJ" ] || miss+=("$TOPO_DECAP_OBJ (make)")
	echo "${miss[*]}"
}

# bats setup_file: a fresh topology with N backends (state exported for the tests).
e2e_setup_file() {
	local miss
	miss=$(e2e_missing)
	[ -z "$miss" ] || { echo "e2e: missing: $miss (scripts/deps.sh installs the packages)" >&2; return 1; }
	TOPO_QUIET=1 topo_init "kr-e2e-$$" "${1:-4}" || return 1
	topo_create || return 1
}

e2e_teardown_file() {
	if [ -n "${TOPO_PREFIX:-}" ] && [ -d "${TOPO_DIR:-}" ]; then
		topo_attach && topo_teardown
	fi
	return 0
}

# bats setup (per test): the topology's variables in this process.
e2e_setup() {
	[ -z "${E2E_SKIP:-}" ] || skip "$E2E_SKIP"
	topo_attach
}

# e2e_names N [PREFIX]: N distinct names under the zone, mixed case and trailing dots so the
# extractor's normalisation is exercised too.
e2e_names() {
	local n=$1 p=${2:-n} i
	for ((i = 0; i < n; i++)); do
		case $((i % 4)) in
		0) echo "$p$i.$TOPO_DNS_ZONE" ;;
		1) echo "Www.$p$i.$TOPO_DNS_ZONE" ;;
		2) echo "$p$i.Sub.KR.Test." ;;
		3) echo "a.b.$p$i.$TOPO_DNS_ZONE" ;;
		esac
	done
}

# e2e_dns_batch SERVER NAMESFILE: one query per name (A record, one try), from the client.
# Prints "NAME BACKEND_INDEX" per answer, names as given (the answer section is lowercased).
e2e_dns_batch() {
	local server=$1 file=$2
	awk -v s="$server" '{ print "@" s " +noall +answer +time=1 +tries=1 " $1 " A" }' "$file" \
		>"$TOPO_DIR/dig.batch"
	topo_exec "$TOPO_C" dig -f "$TOPO_DIR/dig.batch" 2>/dev/null |
		awk '$4 == "A" && $5 ~ /^10\.250\.0\./ { split($5, a, "."); n = tolower($1); sub(/\.$/, "", n); print n, a[4] }' \
		>"$TOPO_DIR/dig.answers"
	awk 'NR == FNR { n = tolower($1); sub(/\.$/, "", n); ans[n] = $2; next }
	     { n = tolower($1); sub(/\.$/, "", n); if (n in ans) print $1, ans[n] }' \
		"$TOPO_DIR/dig.answers" "$file"
}

# e2e_dnsperf SERVER QUERYNAMES RUNS [extra dnsperf args]: RUNS passes over the names file
# through the router.  Prints "sent S lost L" and returns non-zero when L > 0.
e2e_dnsperf() {
	local server=$1 file=$2 runs=$3 out sent lost
	shift 3
	awk '{ print $1 " A" }' "$file" >"$TOPO_DIR/dnsperf.in"
	out=$(topo_exec "$TOPO_C" dnsperf -s "$server" -d "$TOPO_DIR/dnsperf.in" -n "$runs" \
		-c 8 -q 64 -t 3 "$@" 2>&1)
	sent=$(awk '/Queries sent:/ { print $3 }' <<<"$out")
	lost=$(awk '/Queries lost:/ { print $3 }' <<<"$out")
	grep -E 'Queries (sent|completed|lost)|Run time|Queries per second|Response codes' <<<"$out" | sed 's/^ */  dnsperf: /'
	echo "sent ${sent:-?} lost ${lost:-?}"
	[ -n "$sent" ] && [ "$sent" -gt 0 ] && [ "$lost" = 0 ]
}

# ---- keyrouter ---------------------------------------------------------------------------

# e2e_config OUT MODE "I J K" NAME:KEYTYPE:PORT[:CID_LEN] ...
# A keyrouter configuration for this topology: per NAME, ring NAME4 (the backends I J K by
# their IPv4 addresses, in that order) and ring NAME6 (by their IPv6 addresses), service
# NAME4 on the IPv4 VIP with ring NAME4 and service NAME6 on the IPv6 VIP with ring NAME6,
# all forwarded in MODE (l2: the backends' MACs on the router's LAN device; ipip: outer
# source = the router's LAN address, IPv4 backends for IPv4 clients, IPv6 for IPv6).
# E2E_FORMAT (v2) and E2E_PM (160) choose the ring format and points per weight.
e2e_config() {
	local out=$1 mode=$2 list=$3 spec name ktype port cid i fam sep rsep=""
	shift 3
	{
		printf '{\n  "instance": "%s",\n  "rings": [\n' "$TOPO_INSTANCE"
		for spec in "$@"; do
			IFS=: read -r name ktype port cid <<<"$spec"
			for fam in 4 6; do
				printf '%s    { "name": "%s%s", "format": "%s",' "$rsep" "$name" "$fam" "${E2E_FORMAT:-v2}"
				[ "${E2E_FORMAT:-v2}" = v2 ] && printf ' "point_multiple": %s,' "${E2E_PM:-160}"
				printf '\n      "backends": [\n'
				sep=""
				for i in $list; do
					local addr
					if [ $fam = 4 ]; then addr="${TOPO_B4[i]}:$port"; else addr="[${TOPO_B6[i]}]:$port"; fi
					printf '%s        { "address": "%s", "weight": 1' "$sep" "$addr"
					[ "$mode" = l2 ] && printf ', "mac": "%s", "dev": "%s"' "${TOPO_BMAC[i]}" "$TOPO_R_LAN"
					printf ' }'
					sep=$',\n'
				done
				printf '\n      ] }'
				rsep=$',\n'
			done
		done
		printf '\n  ],\n  "services": [\n'
		rsep=""
		for spec in "$@"; do
			IFS=: read -r name ktype port cid <<<"$spec"
			for fam in 4 6; do
				local vip=$TOPO_VIP4
				[ $fam = 6 ] && vip=$TOPO_VIP6
				printf '%s    { "name": "%s%s", "vip": "%s", "port": %s, "protocol": "udp",\n' \
					"$rsep" "$name" "$fam" "$vip" "$port"
				printf '      "key": { "type": "%s"%s }, "ring": "%s%s",\n' "$ktype" \
					"${cid:+, \"cid_length\": $cid}" "$name" "$fam"
				if [ "$mode" = ipip ]; then
					printf '      "forward": { "mode": "ipip", "source4": "%s", "source6": "%s" },\n' \
						"$TOPO_R_LAN4" "$TOPO_R_LAN6"
				else
					printf '      "forward": { "mode": "l2" },\n'
				fi
				printf '      "policy": { "no_key": "drop", "key_too_long": "drop", "all_down": "drop" } }'
				rsep=$',\n'
			done
		done
		printf '\n  ]\n}\n'
	} >"$out"
}

# e2e_predict CONFIG SERVICE KEYSFILE [LOOKUP ARGS]: "KEY I" per line of KEYSFILE (human key forms), I the
# topology's backend index that `keyrouter lookup` predicts for the key.
e2e_predict() {
	local cfg=$1 svc=$2 keys=$3 out i map=""
	shift 3
	out=$("$TOPO_KEYROUTER" lookup -c "$cfg" --service "$svc" --addr --keys-file "$keys" "$@") || return 1
	for ((i = 1; i <= TOPO_N; i++)); do map+="${TOPO_B4[i]} $i ${TOPO_B6[i]} $i "; done
	# the routed backend's address: the field after "route <index>"
	paste -d' ' <(awk '{ print $1 }' "$keys") \
		<(awk '{ for (i = 1; i < NF; i++) if ($i == "route") { print $(i + 2); next } print "?" }' <<<"$out") |
	awk -v map="$map" 'BEGIN { n = split(map, m, " "); for (j = 1; j < n; j += 2) idx[m[j]] = m[j + 1] }
		{ a = $2; sub(/^\[/, "", a); if (a ~ /\]:[0-9]+$/) sub(/\]:[0-9]+$/, "", a); else sub(/:[0-9]+$/, "", a)
		  print $1, (a in idx) ? idx[a] : "?" }'
}

# e2e_load CONFIG [MODE]: load keyrouter on the router's ingress interface (native XDP
# unless MODE), VIP packets it does not route are dropped by the router's kernel.
e2e_load() {
	topo_vip_route blackhole || return 1
	topo_kr load "$TOPO_R_IN" -c "$1" --mode "${2:-native}" --instance "$TOPO_INSTANCE"
}

# e2e_compare PREDICTED ANSWERS: both "KEY I" files (same keys).  Prints a summary line
# "keys N answered A matching M lost L wrong W" and per-backend counts; status 0 only when
# every key was answered by its predicted backend.
e2e_compare() {
	awk 'NR == FNR { p[$1] = $2; n++; next }
	     { a[$1] = $2 }
	     END {
		for (k in p) {
			if (!(k in a)) { lost++; continue }
			ans++; per[a[k]]++; pred[p[k]]++
			if (a[k] == p[k]) ok++; else { wrong++; if (wrong <= 5) printf "  wrong: %s predicted b%s answered by b%s\n", k, p[k], a[k] }
		}
		for (b = 1; b <= 9; b++) if (b in per || b in pred) printf "  b%s answered %d (predicted %d)\n", b, per[b], pred[b]
		printf "keys %d answered %d matching %d lost %d wrong %d\n", n, ans, ok, lost + 0, wrong + 0
		exit !(n > 0 && ok == n)
	     }' "$1" "$2"
}

# e2e_quic_many VIP N [gtlsclient args]: N QUIC connections from the client at once, each
# with a random 18-byte initial DCID (--dcid) and its own ephemeral UDP port, each fetching
# /id and /blob (only /id with E2E_QUIC_ID_ONLY=1).  Prints per connection one line:
#   ID PORT BLOB DCID SCID
# ID: the backend whose /id arrived ("none": the connection failed); PORT: the client's UDP
# port; BLOB: BLOB_OK when the 64 KiB /blob arrived intact (ID_OK: /id only), else BLOB_BAD; DCID: the initial
# DCID; SCID: the source connection ID of the server's first packet ("-": none came).
e2e_quic_many() {
	local vip=$1 n=$2 url k pids=() dcid d urls
	shift 2
	case "$vip" in *:*) url="https://[$vip]:$TOPO_QUIC_PORT" ;; *) url="https://$vip:$TOPO_QUIC_PORT" ;; esac
	urls=("$url/id")
	[ "${E2E_QUIC_ID_ONLY:-0}" = 1 ] || urls+=("$url/blob")
	for ((k = 0; k < n; k++)); do
		d=$TOPO_DIR/quic$k
		dcid=$(od -An -N18 -tx1 /dev/urandom | tr -d ' \n')
		rm -rf "$d"; mkdir -p "$d/dl"
		echo "$dcid" >"$d/dcid"
		timeout 30 ip netns exec "$TOPO_C" gtlsclient --no-quic-dump --no-http-dump --timeout=3s \
			--exit-on-all-streams-close --download "$d/dl" --dcid "$dcid" "$@" \
			"$vip" $TOPO_QUIC_PORT "${urls[@]}" </dev/null >"$d/log" 2>&1 3>&- &
		pids+=($!)
	done
	wait "${pids[@]}"
	for ((k = 0; k < n; k++)); do
		local scid port id blob=BLOB_BAD
		d=$TOPO_DIR/quic$k
		scid=$(grep -m1 -o 'pkt rx pkn=[0-9]* dcid=0x[0-9a-f]* scid=0x[0-9a-f]*' "$d/log" | sed 's/.*scid=0x//')
		port=$(grep -m1 -o 'Sent packet: local=[^ ]*' "$d/log" | sed 's/.*://')
		id=$(cat "$d/dl/id" 2>/dev/null)
		if [ -n "$id" ] && [ "${E2E_QUIC_ID_ONLY:-0}" = 1 ]; then
			blob=ID_OK
		elif [ -n "$id" ] && cmp -s "$d/dl/blob" <(yes "keyrouter e2e blob served by backend $id" | head -c 65536); then
			blob=BLOB_OK
		fi
		echo "${id:-none} ${port:-0} $blob $(cat "$d/dcid") ${scid:--}"
	done
}

# While the keyrouter commands a test file needs are not built in (the data path and `load`
# are developed in parallel), its tests are skipped with the reason: setup_file calls
# `e2e_require_keyrouter [COMMAND...] || return 0`, and e2e_setup skips every test.
# (bats 1.8 does not support `skip` inside setup_file itself.)
e2e_require_keyrouter() {
	local c why=
	for c in "load" "apply" "lookup" "$@"; do
		# shellcheck disable=SC2086
		"$TOPO_KEYROUTER" $c --help >/dev/null 2>&1 || { why="keyrouter has no '$c' command yet"; break; }
	done
	if [ -z "$why" ] && ! "$TOPO_KEYROUTER" lookup --help 2>/dev/null | grep -q -- '--service'; then
		why="keyrouter lookup has no --service yet"
	fi
	if [ -z "$why" ] && [ ! -f "$E2E_ROOT"/build/bpf/keyrouter.bpf.o ]; then
		why="no keyrouter BPF object built yet"
	fi
	export E2E_SKIP=$why
	[ -z "$why" ]
}
