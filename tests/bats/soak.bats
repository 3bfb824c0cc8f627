#!/usr/bin/env bats
# The soak test, short (docs/operations.md "Soak test"; `make soak DURATION=3600` runs it for
# an hour): scripts/soak.sh for 180 s of events (at least 20) under DNS and memcached traffic,
# with the checker, balance, the exporter (scraped every 100 ms) and status --watch running
# as their units would.  Its one line must show the long-running processes' descriptors
# back within 5 of their start, the instance's programs and maps in the kernel as many as at
# the start, and no query lost outside the events' documented bounds.  run.sh runs this file
# beside the foreground (KR_BATS_SIDE): it lasts as long as the clock says.
bats_require_minimum_version 1.5.0

setup() {
	[ "$(id -u)" = 0 ] || skip "needs root"
	[ -x "$BATS_TEST_DIRNAME/../../build/keyrouter" ] || skip "no build/keyrouter (run make)"
}

@test "soak 180 s, >= 20 events: fds F1 - F0 <= 5, kernel progs and maps as at the start, nothing lost outside the events' bounds" {
	cd "$BATS_TEST_DIRNAME/../.."
	# (no descriptor of bats' own goes to the processes the soak leaves running meanwhile)
	run env SOAK_MIN_EVENTS=20 scripts/soak.sh 180 3>&-
	echo "$output"
	local line
	line=$(grep '^soak: [0-9]* minutes' <<<"$output")
	echo "# $line ($(uptime | sed 's/.*load/load/'))" >&3
	local n='([0-9]+)' re
	re="^soak: $n minutes, $n events, $n scrapes; fds $n -> $n, rss $n -> $n KiB, "
	re+="kernel progs $n -> $n, maps $n -> $n; lost outside bounds $n\$"
	[[ "$line" =~ $re ]]
	local m=${BASH_REMATCH[1]} e=${BASH_REMATCH[2]} s=${BASH_REMATCH[3]}
	local f0=${BASH_REMATCH[4]} f1=${BASH_REMATCH[5]} p0=${BASH_REMATCH[8]} p1=${BASH_REMATCH[9]}
	local m0=${BASH_REMATCH[10]} m1=${BASH_REMATCH[11]} l=${BASH_REMATCH[12]}
	[ "$m" -ge 3 ]
	[ "$e" -ge 20 ]
	# 10 scrapes a second for 3 minutes, less the exporter's restarts
	[ "$s" -ge 1000 ]
	[ "$p0" -ge 1 ]
	[ "$m0" -ge 1 ]
	[ $((f1 - f0)) -le 5 ]
	[ "$p1" = "$p0" ]
	[ "$m1" = "$m0" ]
	[ "$l" = 0 ]
	# and whatever else the driver checks (RSS, pins, every event's commands succeeded)
	[ "$status" = 0 ]
}
