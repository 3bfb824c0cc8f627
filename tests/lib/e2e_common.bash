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
	topo_attach 2>/dev/null || return 0
	topo_teardown
}

# bats setup (per test): the topology's variables in this process.
e2e_setup() { topo_attach; }

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

# e2e_quic_fetch VIP [gtlsclient args]: one QUIC connection from the client fetching /id and
# /blob.  Prints "bI PORT BLOB_OK|BLOB_BAD" (the serving backend, the client's UDP port);
# non-zero status when the handshake or a transfer failed.  The client's log stays in
# $TOPO_DIR/quic-client.log.
e2e_quic_fetch() {
	local vip=$1 url dl=$TOPO_DIR/dl port id blob=BLOB_BAD rc
	shift
	rm -rf "$dl"; mkdir -p "$dl"
	case "$vip" in *:*) url="https://[$vip]:$TOPO_QUIC_PORT" ;; *) url="https://$vip:$TOPO_QUIC_PORT" ;; esac
	timeout 20 ip netns exec "$TOPO_C" gtlsclient --no-quic-dump --no-http-dump --timeout=3s \
		--exit-on-all-streams-close --download "$dl" "$@" "$vip" $TOPO_QUIC_PORT \
		"$url/id" "$url/blob" >"$TOPO_DIR/quic-client.log" 2>&1
	rc=$?
	port=$(grep -m1 -o 'Sent packet: local=[^ ]*' "$TOPO_DIR/quic-client.log" | sed 's/.*://')
	id=$(cat "$dl/id" 2>/dev/null)
	if [ -n "$id" ] && [ -s "$dl/blob" ] &&
		cmp -s "$dl/blob" <(yes "keyrouter e2e blob served by backend $id" | head -c 65536); then
		blob=BLOB_OK
	fi
	echo "${id:-none} ${port:-0} $blob"
	[ "$rc" = 0 ] && [ -n "$id" ] && [ "$blob" = BLOB_OK ]
}
