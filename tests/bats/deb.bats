#!/usr/bin/env bats
# The Debian package, for real: built with dpkg-buildpackage (scripts/deb.sh, from a copy of
# the tree; lintian must report no error), installed on this machine with dpkg, then the
# installed files are used as an operator would: the installed keyrouter (lookup, config
# check, and the systemd unit's own start/reload/stop commands -- load, apply, upgrade,
# unload -- and the postinst's in-place upgrade in
# a namespace with the installed BPF object, under exactly the unit's capability bounding
# set), the installed units through `systemd-analyze verify`, man pages, bash completion;
# finally `dpkg --purge` must leave nothing behind.  (~1 minute, most of it the build.)
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

UNIT=/lib/systemd/system/keyrouter@.service

# dpkg waits for no one: other package operations on the machine may hold its lock
dpkg_retry() {
	local i
	for i in $(seq 60); do
		dpkg "$@" && return 0
		fuser /var/lib/dpkg/lock-frontend /var/lib/dpkg/lock >/dev/null 2>&1 || return 1
		sleep 2
	done
	return 1
}

setup_file() {
	cd "$BATS_TEST_DIRNAME/../.."
	export DEB_SKIP=
	if dpkg-query -W -f='${Status}' keyrouter 2>/dev/null | grep -q 'ok installed'; then
		# someone's own installation: not ours to replace and purge
		export DEB_SKIP="the keyrouter package is already installed on this machine"
		return 0
	fi
	if [ -n "${KR_DEB_PREBUILT:-}" ]; then
		# tests/run.sh builds the package of this tree in the background, holding the
		# lock until it is done: the same scripts/deb.sh, its log and its exit status
		export DEB_DIR=$KR_DEB_PREBUILT
		flock "$DEB_DIR.lock" true
		cp "$DEB_DIR.log" "$BATS_FILE_TMPDIR/deb.log" 2>/dev/null
		[ "$(cat "$DEB_DIR.status" 2>/dev/null)" = 0 ] || {
			cat "$BATS_FILE_TMPDIR/deb.log" >&2
			echo "scripts/deb.sh (run by tests/run.sh) did not succeed" >&2; return 1; }
	else
		export DEB_DIR=$BATS_FILE_TMPDIR/deb
		OUT=$DEB_DIR scripts/deb.sh >"$BATS_FILE_TMPDIR/deb.log" 2>&1 || {
			cat "$BATS_FILE_TMPDIR/deb.log" >&2; return 1; }
	fi
	dpkg_retry -i "$DEB_DIR"/deb/keyrouter_*_amd64.deb >"$BATS_FILE_TMPDIR/install.log" 2>&1 || {
		cat "$BATS_FILE_TMPDIR/install.log" >&2; return 1; }
}

teardown_file() {
	[ -n "${DEB_SKIP:-}" ] && return 0
	dpkg-query -W -f='${Status}' keyrouter 2>/dev/null | grep -q 'ok installed' &&
		dpkg_retry --purge keyrouter >/dev/null 2>&1
	return 0
}

# A failed test leaves nothing: its namespace (the program goes with the interface), pins,
# and configuration files.
teardown() {
	if [ -n "${ns:-}" ]; then
		ip netns del "$ns" 2>/dev/null
		rm -rf "/sys/fs/bpf/keyrouter/$ns"
	fi
	if [ -n "${IF:-}" ]; then
		rm -rf "/sys/fs/bpf/keyrouter/$IF"
		rm -f /etc/keyrouter/"$IF".json /etc/keyrouter/"$IF".env /run/keyrouter/bird/"$IF".conf
	fi
	return 0
}

setup() {
	[ -z "${DEB_SKIP:-}" ] || skip "$DEB_SKIP"
	cd "$BATS_TEST_DIRNAME/../.."
	T=$BATS_TEST_TMPDIR
}

@test "deb: built with dpkg-buildpackage; lintian reports no errors" {
	run -0 cat "$BATS_FILE_TMPDIR/deb.log"
	echo "$output"
	assert_output --partial "deb: "
	assert_line --regexp '^lintian: 0 errors, [0-9]+ warnings, [0-9]+ info$'
}

@test "deb: installs the tool, only the production BPF object, units, man pages, completion, example" {
	run -0 dpkg -L keyrouter
	echo "$output"
	assert_line /usr/sbin/keyrouter
	assert_line /usr/lib/keyrouter/keyrouter.bpf.o
	assert_line /lib/systemd/system/keyrouter@.service
	assert_line /lib/systemd/system/keyrouter-health@.service
	assert_line /lib/systemd/system/keyrouter-balance@.service
	assert_line /lib/systemd/system/keyrouter-apply@.path
	assert_line /lib/systemd/system/keyrouter-apply@.service
	assert_line /lib/systemd/system/keyrouter-exporter.service
	assert_line /lib/systemd/system/keyrouter-announce@.service
	assert_line /usr/share/keyrouter/bird/keyrouter-router.conf
	assert_line /usr/lib/tmpfiles.d/keyrouter.conf
	assert_line /usr/share/man/man8/keyrouter.8.gz
	assert_line /usr/share/man/man5/keyrouter.json.5.gz
	assert_line /usr/share/bash-completion/completions/keyrouter
	assert_line /usr/share/doc/keyrouter/examples/keyrouter.json
	assert_line /usr/share/doc/keyrouter/deploy.md
	assert_line /usr/share/doc/keyrouter/quic.md.gz
	# every file the installed units name as their documentation exists
	for f in $(sed -n 's|^Documentation=.*file://\([^ ]*\).*|\1|p' /lib/systemd/system/keyrouter*); do
		[ -r "$f" ] || fail "a unit's Documentation= names $f, which the package does not install"
	done
	# one BPF object, the production one (no test or benchmark programs)
	[ "$(grep -c '\.bpf\.o$' <<<"$output")" = 1 ]
	[ "$(ls /usr/lib/keyrouter)" = keyrouter.bpf.o ]
	# nothing enabled or started by the installation
	[ ! -e /etc/systemd/system/multi-user.target.wants/keyrouter-exporter.service ]
	# man finds both pages; keyrouter(8) has every command's usage, as --help prints it
	man -w keyrouter >/dev/null
	man -w 5 keyrouter.json >/dev/null
	MANWIDTH=200 man keyrouter 2>/dev/null >"$T/man8"
	/usr/sbin/keyrouter --help | awk '/^Commands:/ { on = 1; next } on && /^$/ { exit }
		on { sub(/^  /, ""); n = index($0, "  "); print substr($0, 1, n - 1) }' >"$T/cmds"
	[ "$(wc -l <"$T/cmds")" -ge 15 ]
	while read -r c; do
		u=$(/usr/sbin/keyrouter $c --help | grep -m1 '^Usage:' | tr -s ' ')
		tr -s ' ' <"$T/man8" | grep -qF -- "$u" || { echo "man page lacks: $u"; false; }
	done <"$T/cmds"
}

@test "deb: the installed keyrouter: version, lookup and config check on the shipped example" {
	cd "$T"
	run -0 /usr/sbin/keyrouter version
	assert_output --regexp '^keyrouter [0-9]'
	ex=/usr/share/doc/keyrouter/examples/keyrouter.json
	run -0 /usr/sbin/keyrouter config check -c "$ex"
	echo "$output"
	# the same answers as the tool built in the tree
	run -0 /usr/sbin/keyrouter lookup -c "$ex" --ring dns --key-type dns www.example.com example.org --addr
	inst=$output
	run -0 "$BATS_TEST_DIRNAME/../../build/keyrouter" lookup -c "$BATS_TEST_DIRNAME/../../examples/keyrouter.json" \
		--ring dns --key-type dns www.example.com example.org --addr
	[ "$inst" = "$output" ]
	[ "$(wc -l <<<"$inst")" = 2 ]
}

@test "deb: the unit's start, reload (idempotent), start again, stop: the installed tool in a namespace under the unit's capability set" {
	IF=kd$$
	IF=${IF:0:15}
	ns=kr-deb-$$
	ip netns add "$ns"
	ip -n "$ns" link add "$IF" type veth peer name v1
	ip -n "$ns" link set "$IF" up
	ip -n "$ns" link set v1 up
	ip -n "$ns" addr add 10.0.0.9/24 dev "$IF"
	mkdir -p /etc/keyrouter
	cat >/etc/keyrouter/"$IF".json <<-EOF
	{ "rings": [ { "name": "r", "format": "v2", "point_multiple": 16,
	    "health": { "probe": "udp", "request": "ping" },
	    "backends": [ { "address": "10.0.0.1:1" }, { "address": "10.0.0.2:1" } ] } ],
	  "services": [ { "name": "p", "vip": "10.1.0.1", "port": 9, "key": { "type": "payload" },
	    "ring": "r", "forward": { "mode": "ipip", "source4": "10.0.0.9" } } ] }
	EOF
	echo "KEYROUTER_MODE=generic" >/etc/keyrouter/"$IF".env
	# the unit's commands and capability set, as installed
	caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT" | tr ' ' '\n' | sed 's/^CAP_//' | tr 'A-Z' 'a-z' | sed 's/^/+/' | paste -sd,)
	[ -n "$caps" ]
	echo "bounding set: $caps"
	# run the unit's ExecXXX line as systemd would: %i, the Environment= and the .env file
	unit() {
		local line
		line=$(sed -n "s/^$1=//p" "$UNIT")
		line=${line//%i/$IF}
		(
			cd /
			export KEYROUTER_IFACE=$IF KEYROUTER_MODE=native
			set -a; . /etc/keyrouter/"$IF".env; set +a
			line=${line//\$\{KEYROUTER_IFACE\}/$KEYROUTER_IFACE}
			eval "set -- $line"
			nsenter --net="/run/netns/$ns" setpriv --inh-caps=-all --ambient-caps=-all \
				--bounding-set=-all,"$caps" -- "$@"
		)
	}
	run unit ExecStart
	echo "$output"
	[ "$status" = 0 ]
	assert_output --partial "loaded on $IF (generic mode"
	# loaded and running, as status reports
	run -0 nsenter --net="/run/netns/$ns" /usr/sbin/keyrouter status --instance "$IF"
	assert_output --partial "instance $IF: $IF (attached), generic mode"
	# a restart's start (its stop kept the program: a restart job): ExecStartPre upgrades
	# the running program in place to the installed build; then the package's upgrade
	# (postinst configure OLD-VERSION) does the same for the instances loaded here
	run -0 unit ExecStartPre
	echo "$output"
	assert_output --regexp "upgraded instance '$IF' on $IF in place: program [0-9]+ .* -> [0-9]+"
	run -0 nsenter --net="/run/netns/$ns" /var/lib/dpkg/info/keyrouter.postinst configure 0.0.1
	echo "$output"
	assert_output --partial "upgraded instance '$IF' on $IF in place"
	run -0 nsenter --net="/run/netns/$ns" /usr/sbin/keyrouter status --instance "$IF"
	assert_output --partial "instance $IF: $IF (attached), generic mode"
	# the exporter unit's command under its own bounding set serves this instance
	ecaps=$(sed -n 's/^CapabilityBoundingSet=//p' /lib/systemd/system/keyrouter-exporter.service |
		tr ' ' '\n' | sed 's/^CAP_//' | tr 'A-Z' 'a-z' | sed 's/^/+/' | paste -sd,)
	eline=$(sed -n 's/^ExecStart=//p' /lib/systemd/system/keyrouter-exporter.service)
	eline=${eline//\$\{KEYROUTER_EXPORTER_LISTEN\}/127.0.0.1:9437}
	ip -n "$ns" link set lo up
	# shellcheck disable=SC2086
	nsenter --net="/run/netns/$ns" setpriv --inh-caps=-all --ambient-caps=-all \
		--bounding-set=-all,"$ecaps" -- $eline 3>&- &
	epid=$!
	for _ in $(seq 50); do
		nsenter --net="/run/netns/$ns" curl -s -o "$T/scrape" http://127.0.0.1:9437/metrics && break
		sleep 0.1
	done
	kill "$epid"
	wait "$epid" || true
	"$(scripts/promtool.sh)" check metrics <"$T/scrape"
	# the health checker's unit: its ExecStart under its own bounding set probes the ring's
	# backends (raw IPIP socket: CAP_NET_RAW) and beats; status sees it running
	hunit=/lib/systemd/system/keyrouter-health@.service
	hcaps=$(sed -n 's/^CapabilityBoundingSet=//p' "$hunit" | tr ' ' '\n' | sed 's/^CAP_//' |
		tr 'A-Z' 'a-z' | sed 's/^/+/' | paste -sd,)
	hline=$(sed -n 's/^ExecStart=//p' "$hunit")
	hline=${hline//%i/$IF}
	# shellcheck disable=SC2086
	nsenter --net="/run/netns/$ns" setpriv --inh-caps=-all --ambient-caps=-all \
		--bounding-set=-all,"$hcaps" -- $hline >"$T/health.log" 2>&1 3>&- &
	hpid=$!
	for _ in $(seq 50); do
		nsenter --net="/run/netns/$ns" /usr/sbin/keyrouter status --instance "$IF" |
			grep -q '^health checker: running, pid .*, 2 backends checked' && break
		sleep 0.1
	done
	run -0 nsenter --net="/run/netns/$ns" /usr/sbin/keyrouter status --instance "$IF"
	kill "$hpid"
	wait "$hpid" || true
	cat "$T/health.log"
	assert_output --partial "health checker: running, pid $hpid, 2 backends checked"
	grep -q '^health: checking 2 backends' "$T/health.log"
	# the controller's unit: its ExecStart, with the options its environment file gives,
	# under its own bounding set: one advise round over the ring
	bunit=/lib/systemd/system/keyrouter-balance@.service
	bcaps=$(sed -n 's/^CapabilityBoundingSet=//p' "$bunit" | tr ' ' '\n' | sed 's/^CAP_//' |
		tr 'A-Z' 'a-z' | sed 's/^/+/' | paste -sd,)
	bline=$(sed -n 's/^ExecStart=//p' "$bunit")
	bline=${bline//%i/$IF}
	bline=${bline//\$KEYROUTER_BALANCE_ARGS/--ring r --mode advise --once --interval 0.2 --no-replicas --min-packets 0}
	# shellcheck disable=SC2086
	run -0 nsenter --net="/run/netns/$ns" setpriv --inh-caps=-all --ambient-caps=-all \
		--bounding-set=-all,"$bcaps" -- $bline
	echo "$output"
	assert_output --partial "keyrouter balance: ring r,"
	assert_output --partial "nothing to change"
	# the announcer's unit: its ExecStart under its own bounding set (no BIRD here: its
	# socket is missing, which status reports) writes the BIRD include file into the
	# package's runtime directory (tmpfiles.d) and reports the VIP
	[ -d /run/keyrouter/bird ]
	aunit=/lib/systemd/system/keyrouter-announce@.service
	acaps=$(sed -n 's/^CapabilityBoundingSet=//p' "$aunit" | tr ' ' '\n' | sed 's/^CAP_//' |
		tr 'A-Z' 'a-z' | sed 's/^/+/' | paste -sd,)
	aline=$(sed -n 's/^ExecStart=//p' "$aunit")
	aline=${aline//%i/$IF}
	aline=${aline//\$KEYROUTER_ANNOUNCE_ARGS/--bird-socket $T/no-bird.ctl --interval 0.2}
	# shellcheck disable=SC2086
	nsenter --net="/run/netns/$ns" setpriv --inh-caps=-all --ambient-caps=-all \
		--bounding-set=-all,"$acaps" -- $aline >"$T/announce.log" 2>&1 3>&- &
	apid=$!
	for _ in $(seq 50); do
		nsenter --net="/run/netns/$ns" /usr/sbin/keyrouter status --instance "$IF" |
			grep -q "^announce: running, pid $apid, 1 VIPs; BIRD: " && break
		sleep 0.1
	done
	run -0 nsenter --net="/run/netns/$ns" /usr/sbin/keyrouter status --instance "$IF"
	kill "$apid"
	wait "$apid" || true
	cat "$T/announce.log"
	assert_output --partial "announce: running, pid $apid, 1 VIPs; BIRD: $T/no-bird.ctl: No such file or directory"
	assert_output --regexp "  vip 10\.1\.0\.1 +(announced|withdrawn) "
	grep -q '^protocol static keyrouter_.*_4 {' "/run/keyrouter/bird/$IF.conf"
	rm -f "/run/keyrouter/bird/$IF.conf"
	grep -Fx "keyrouter_up{keyrouter_instance=\"$IF\"} 1" "$T/scrape"
	grep -Fx "keyrouter_read_errors{keyrouter_instance=\"$IF\"} 0" "$T/scrape"
	grep -F "keyrouter_ring_slot_points{keyrouter_instance=\"$IF\",ring=\"r\",slot=\"0\"} 32" "$T/scrape"
	# reload = apply: the same file again changes nothing
	run -0 unit ExecReload
	echo "$output"
	assert_output --partial "apply: nothing changed"
	sed -i 's/"point_multiple": 16/"point_multiple": 20/' /etc/keyrouter/"$IF".json
	run -0 unit ExecReload
	echo "$output"
	assert_output --partial "rings 1 published"
	run -0 unit ExecReload
	assert_output --partial "apply: nothing changed"
	# start while loaded (e.g. a unit marked failed): applies instead of failing
	run -0 unit ExecStart
	echo "$output"
	assert_output --partial "apply: nothing changed"
	run -0 unit ExecStop
	echo "$output"
	[ ! -e "/sys/fs/bpf/keyrouter/$IF" ]
	run -0 ip -n "$ns" link show "$IF"
	refute_output --partial xdp
	rm -f /etc/keyrouter/"$IF".json /etc/keyrouter/"$IF".env
	ip netns del "$ns"
}

@test "deb: load --object with the installed BPF object (strace: the tool opens /usr/lib/keyrouter/keyrouter.bpf.o), apply, unload" {
	ns=kr-deb-o-$$
	ip netns add "$ns"
	ip -n "$ns" link add ko0 type veth peer name v1
	ip -n "$ns" link set ko0 up
	echo '{ "rings": [ { "name": "r", "format": "v2", "backends": [ { "address": "10.0.0.1:1" } ] } ] }' >"$T/c.json"
	cd /
	run strace -f -qq -e trace=openat -o "$T/trace" nsenter --net="/run/netns/$ns" \
		/usr/sbin/keyrouter load ko0 -c "$T/c.json" --mode generic --instance "$ns" \
		--object /usr/lib/keyrouter/keyrouter.bpf.o
	echo "$output"
	[ "$status" = 0 ]
	grep -F '"/usr/lib/keyrouter/keyrouter.bpf.o"' "$T/trace" | grep -v ENOENT
	run -0 nsenter --net="/run/netns/$ns" /usr/sbin/keyrouter apply -c "$T/c.json" --instance "$ns"
	assert_output --partial "apply: nothing changed"
	run -0 nsenter --net="/run/netns/$ns" /usr/sbin/keyrouter unload ko0 --instance "$ns"
	[ ! -e "/sys/fs/bpf/keyrouter/$ns" ]
}

@test "deb: the installed units pass systemd-analyze verify" {
	d=$T/units
	mkdir -p "$d"
	# templates are verified through an instance of each
	cp /lib/systemd/system/keyrouter@.service "$d/keyrouter@eth9.service"
	cp /lib/systemd/system/keyrouter-health@.service "$d/keyrouter-health@eth9.service"
	cp /lib/systemd/system/keyrouter-balance@.service "$d/keyrouter-balance@eth9.service"
	cp /lib/systemd/system/keyrouter-apply@.path "$d/keyrouter-apply@eth9.path"
	cp /lib/systemd/system/keyrouter-apply@.service "$d/keyrouter-apply@eth9.service"
	cp /lib/systemd/system/keyrouter-exporter.service "$d/"
	cp /lib/systemd/system/keyrouter-announce@.service "$d/keyrouter-announce@eth9.service"
	cd "$d"
	run systemd-analyze verify ./keyrouter@eth9.service ./keyrouter-health@eth9.service \
		./keyrouter-balance@eth9.service ./keyrouter-apply@eth9.path \
		./keyrouter-apply@eth9.service ./keyrouter-exporter.service \
		./keyrouter-announce@eth9.service
	echo "$output"
	[ "$status" = 0 ]
	[ -z "$output" ]
}

@test "deb: bash completion from the installed file completes commands, sub-commands and options" {
	[ -r /usr/share/bash-completion/bash_completion ] || skip "bash-completion is not installed"
	run -0 bash -c '
		source /usr/share/bash-completion/bash_completion
		source /usr/share/bash-completion/completions/keyrouter
		t() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
		      COMPREPLY=(); _keyrouter; echo "$*: ${COMPREPLY[*]}"; }
		t keyrouter ex; t keyrouter ring st; t keyrouter status --prom; t keyrouter load x --mode g'
	echo "$output"
	assert_line "keyrouter ex: exporter"
	assert_line "keyrouter ring st: stage status"
	assert_line "keyrouter status --prom: --prometheus"
	assert_line "keyrouter load x --mode g: generic"
}

@test "deb: dpkg --purge removes every file of the package" {
	dpkg -L keyrouter | grep -v '^/\.$' >"$T/files"
	dpkg_retry --purge keyrouter
	run dpkg-query -W -f='${Status}' keyrouter
	[ "$status" != 0 ] || refute_output --partial 'ok installed'
	left=$(while read -r f; do if [ -f "$f" ]; then echo "$f"; fi; done <"$T/files")
	[ -z "$left" ] || { echo "left behind: $left"; false; }
	[ ! -e /usr/sbin/keyrouter ] && [ ! -e /usr/lib/keyrouter ]
}
