# shellcheck shell=bash
# The health checker of an e2e topology, detached like the servers (its pid in
# $TOPO_DIR/health.pid, its log $TOPO_DIR/health.log); shared by e2e_health.bats and
# health_follow.bats (load after e2e_common).
#   health_start [CONFIG]   keyrouter health -c CONFIG (default $TOPO_DIR/h.json); with
#                           HEALTH_UNIT_CAPS=1 under exactly the bounding set of
#                           dist/systemd/keyrouter-health@.service (the watchdog's attach
#                           needs CAP_NET_ADMIN: the unit must give it); with
#                           HEALTH_LOG_FRESH=1 the log starts empty at each start (else
#                           appended: a restarted checker's lines after the first's)
#   health_stop
health_start() {
	local cfg=${1:-$TOPO_DIR/h.json} caps n pre=()
	if [ "${HEALTH_UNIT_CAPS:-0}" = 1 ]; then
		caps=$(sed -n 's/^CapabilityBoundingSet=//p' \
			"$E2E_ROOT/dist/systemd/keyrouter-health@.service" |
			tr ' ' '\n' | sed 's/^CAP_//' | tr 'A-Z' 'a-z' | sed 's/^/+/' | paste -sd,)
		pre=(setpriv --inh-caps=-all --ambient-caps=-all --bounding-set=-all,"$caps" --)
	fi
	[ "${HEALTH_LOG_FRESH:-0}" = 1 ] && : >"$TOPO_DIR/health.log"
	# nsenter execs the checker: $! is its pid
	nsenter --net="/run/netns/$TOPO_R" -- "${pre[@]}" "$TOPO_KEYROUTER" health -c "$cfg" \
		</dev/null >>"$TOPO_DIR/health.log" 2>&1 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
	echo $! >"$TOPO_DIR/health.pid"
	disown $!
	for ((n = 0; n < 100; n++)); do
		grep -q '^health: checking' "$TOPO_DIR/health.log" && return 0
		sleep 0.1
	done
	cat "$TOPO_DIR/health.log" >&2
	return 1
}

health_stop() {
	[ -s "${TOPO_DIR:-/nonexistent}/health.pid" ] || return 0
	kill "$(cat "$TOPO_DIR/health.pid")" 2>/dev/null
	rm -f "$TOPO_DIR/health.pid"
}
