#!/usr/bin/env bats
# A fleet operator new to keyrouter tries it: the mistakes and interruptions of a first
# day (an interrupted load, leftovers, a driver without native XDP, an invalid config on
# a running instance, commands run twice, docs against the tool).  One regression test
# (or more) per problem found; each failed before its fix.
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load kr_instance

setup() {
	kr_instance_setup
	PY=/usr/bin/python3
	[ -x "$PY" ] || PY=$(command -v python3)
}

teardown() {
	exec 8<&-	# a lock a failed test still holds (it would block the unload)
	kr_instance_teardown
	[ -z "${NK:-}" ] || rm -rf "$NK"
}

nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

# NKK: a copy of the tool that user nobody can run (the tree may lie under a directory only
# root may enter, such as a CI clone made by mktemp -d); teardown removes it.
nobody_tool() {
	NK=$(mktemp -d /tmp/kr-nobody.XXXXXX)
	chmod 755 "$NK"
	cp "$KK" "$NK/keyrouter"
	chmod 755 "$NK/keyrouter"
	NKK=$NK/keyrouter
	nobody test -x "$NKK" || fail "nobody cannot run $NKK"
}

# An instance $N loaded in its namespace, and user nobody (who cannot see the pins) with a
# copy of the tool it can run ($NKK).
loaded_unseen_by_nobody() {
	needs_root
	command -v setpriv >/dev/null || skip "no setpriv"
	if nobody test -x /sys/fs/bpf/keyrouter; then skip "the bpf filesystem is open to everyone here"; fi
	nobody_tool
	netns_up
	small_config
	run -0 kr load v0 -c "$T/c.json" --mode generic --instance "$N"
}

# A namespace $N with a veth pair v0/v1, both up.
netns_up() {
	N=krtrial-$$-$BATS_TEST_NUMBER
	ip netns add "$N"
	ip -n "$N" link add v0 type veth peer name v1
	ip -n "$N" link set v0 up
	ip -n "$N" link set v1 up
}

kr() { nsenter --net="/run/netns/$N" "$KK" "$@"; }

# Neither a pin directory of instance $N nor an XDP program on v0.
nothing_left() {
	[ ! -e "/sys/fs/bpf/keyrouter/$N" ] || return 1
	! ip -n "$N" -d link show v0 | grep -q "prog/xdp"
}

small_config() {
	cat > "$T/c.json" <<'JSON'
{ "rings": [ { "name": "r", "format": "v2", "backends": [ { "address": "10.0.0.1:1" }, { "address": "10.0.0.2:1" } ] } ],
  "services": [ { "name": "p", "vip": "10.1.0.1", "port": 9, "key": { "type": "payload" }, "ring": "r",
                  "forward": { "mode": "ipip", "source4": "10.0.0.9" } } ] }
JSON
}

@test "Ctrl-C (SIGINT) or SIGTERM during load: the load is undone, nothing left attached or pinned" {
	needs_root
	netns_up
	small_config
	for sig in INT TERM; do
		# SIGNAL arrives once the program is attached and its maps pinned (the apply's
		# first line on standard error), not by timing
		run -1 nsenter --net="/run/netns/$N" "$PY" tests/bats/ops_interrupt.py $sig \
			"$KK" load v0 -c "$T/c.json" --mode generic --instance "$N"
		assert_output --partial "keyrouter: load on 'v0' interrupted"
		assert_output --partial "keyrouter: load on 'v0' failed; nothing was left attached or pinned"
		# libxdp's probe messages of the attach, which succeeded, are not the failure's
		refute_output --partial "libbpf"
		nothing_left
		# and a load after it works as on a fresh interface
		run -0 kr load v0 -c "$T/c.json" --mode generic --instance "$N"
		refute_output --partial "leftovers"
		run -0 kr unload v0 --instance "$N"
	done
}

@test "pins without an attachment record (a load that died early): unload or the next load removes them, and detaches keyrouter's program no instance records" {
	needs_root
	netns_up
	small_config
	# the pin directory of a load killed before it recorded anything
	mkdir "/sys/fs/bpf/keyrouter/$N"
	run -0 kr unload v0 --instance "$N"
	assert_output --partial "instance '$N' has pins in /sys/fs/bpf/keyrouter/$N but no record of an attachment"
	assert_output --partial "leftovers of instance '$N' removed"
	[ ! -e "/sys/fs/bpf/keyrouter/$N" ]
	# the next load removes them itself
	mkdir "/sys/fs/bpf/keyrouter/$N"
	run -0 kr load v0 -c "$T/c.json" --mode generic --instance "$N"
	assert_output --partial "removing the leftovers of an unfinished load"
	# a program attached whose record is lost (as an older keyrouter, which wrote the
	# record last, left it when killed between the attach and the record): unload, and
	# the next load, detach keyrouter's program that no instance records
	for next in unload load; do
		prog=$(ip -n "$N" -d link show v0 | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p')
		[ -n "$prog" ]
		size=$(bpftool -j map show pinned "/sys/fs/bpf/keyrouter/$N/kr_ops_meta" |
		       "$PY" -c 'import json, sys; print(json.load(sys.stdin)["bytes_value"])')
		bpftool map update pinned "/sys/fs/bpf/keyrouter/$N/kr_ops_meta" key 0 0 0 0 \
			value $(for ((b = 0; b < size; b++)); do printf '0 '; done)
		if [ $next = unload ]; then
			# without --instance no record names v0: say which instance to give
			run -1 kr unload v0
			assert_output --partial "keyrouter's XDP program $prog is attached to 'v0' and instance '$N' has pins without a record: 'keyrouter unload v0 --instance $N'"
			run -0 kr unload v0 --instance "$N"
			assert_output --partial "no record of an attachment"
			assert_output --partial "detached keyrouter's program left on 'v0'"
			nothing_left
			run -0 kr load v0 -c "$T/c.json" --mode generic --instance "$N"
		else
			run -0 kr load v0 -c "$T/c.json" --mode generic --instance "$N"
			assert_output --partial "removing the leftovers of an unfinished load"
			assert_output --partial "detached keyrouter's program left on 'v0'"
			run -0 kr status --instance "$N"
			refute_output --partial "program id $prog,"
		fi
	done
	run -0 kr unload v0 --instance "$N"
	nothing_left
}

@test "load --mode native on a driver without native XDP says which modes work" {
	needs_root
	netns_up
	small_config
	run -1 kr load lo -c "$T/c.json" --instance "$N"
	assert_output --partial "couldn't attach XDP (native mode) to 'lo'"
	assert_output --partial "the driver of 'lo' has no native XDP: load with --mode generic"
	assert_output --partial "load on 'lo' failed; nothing was left attached or pinned"
	[ ! -e "/sys/fs/bpf/keyrouter/$N" ]
}

@test "an invalid config given to apply, load or ring stage says that nothing was changed" {
	needs_root
	netns_up
	small_config
	run -0 kr load v0 -c "$T/c.json" --mode generic --instance "$N"
	run -0 kr ring status --instance "$N"
	before=$output
	sed 's/"format"/"fromat"/' "$T/c.json" > "$T/typo.json"
	run -1 kr apply -c "$T/typo.json" --instance "$N"
	assert_output --partial "rings[0].fromat: unknown field 'fromat'"
	assert_line "keyrouter: configuration '$T/typo.json' is invalid: nothing was changed"
	run -1 kr ring stage r -c "$T/typo.json" --instance "$N"
	assert_line "keyrouter: configuration '$T/typo.json' is invalid: nothing was changed"
	run -1 kr load v1 -c "$T/typo.json" --mode generic --instance "$N-2"
	assert_line "keyrouter: configuration '$T/typo.json' is invalid: nothing was changed"
	[ ! -e "/sys/fs/bpf/keyrouter/$N-2" ]
	run -1 kr apply -c "$T/nosuch.json" --instance "$N"
	assert_line --partial "couldn't open configuration file '$T/nosuch.json'"
	assert_line "keyrouter: configuration '$T/nosuch.json' is invalid: nothing was changed"
	run -0 kr ring status --instance "$N"
	assert_output "$before"
}

# Replace what differs from run to run: program ids, times, namespace inodes and names.
walk_norm() {
	sed -E 's/program id [0-9]+/program id N/g; s/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z/TIME/g;
		s/net:\[[0-9]+\]/net:[INO]/g; s|/run/netns/[A-Za-z0-9_.-]+|/run/netns/NS|g' "$@"
}

@test "docs/operations.md: the day-to-day walk-through is what the tool prints" {
	needs_root
	command -v unshare >/dev/null || skip "no unshare"
	N=krtrial-$$-$BATS_TEST_NUMBER
	ip netns add "$N"
	ip netns exec "$N" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
	ip -n "$N" link add eth1 type veth peer name eth2
	ip -n "$N" link set eth1 up
	ip -n "$N" link set eth2 up
	mkdir "$T/w"
	run -0 "$PY" tests/bats/doc_walk.py docs/operations.md "Operating it day to day" "$T/w"
	[ "$output" -ge 10 ]
	sed 's/"02:00:00:00:00:13" } ]/"02:00:00:00:00:13" },\n      { "address": "10.0.0.14:53", "mac": "02:00:00:00:00:14" } ]/' \
		"$T/w/config.json" > "$T/w/web2.json"
	cp "$T/w/config.json" "$T/w/web.json"
	# the instance is "default", as in the text: in a bpf filesystem of its own (a private
	# mount namespace), so that no other "default" is touched
	cat > "$T/w/run.sh" <<SH
set -u
mount -t bpf bpf /sys/fs/bpf
cd "$T/w"
for c in [0-9][0-9].cmd; do
	b=\${c%.cmd}
	set -- \$(cat "\$c")
	shift	# "keyrouter"
	if grep -q 'from the host' "\$b.note"; then
		"$KK" "\$@" > "\$b.got" 2>&1
	else
		nsenter --net="/run/netns/$N" "$KK" "\$@" > "\$b.got" 2>&1
	fi
done
nsenter --net="/run/netns/$N" "$KK" unload eth1 >/dev/null 2>&1
umount /sys/fs/bpf
SH
	run -0 unshare --mount --propagation private bash "$T/w/run.sh"
	bad=
	for c in "$T"/w/[0-9][0-9].cmd; do
		b=${c%.cmd}
		walk_norm "$b.out" > "$b.want"
		walk_norm "$b.got" > "$b.have"
		diff -u "$b.want" "$b.have" || bad="$bad '$(cat "$c")'"
	done
	[ -z "$bad" ] || fail "docs/operations.md: these print otherwise (-doc +tool):$bad"
}

@test "ring commit or rollback run twice: the second says which version is active, so the first one's effect is known" {
	needs_root
	netns_up
	small_config
	run -0 kr load v0 -c "$T/c.json" --mode generic --instance "$N"
	sed 's/{ "address": "10.0.0.2:1" }/{ "address": "10.0.0.2:1" }, { "address": "10.0.0.3:1" }/' \
		"$T/c.json" > "$T/c2.json"
	run -0 kr ring stage r -c "$T/c2.json" --instance "$N"
	digest=$(sed -n 's/.*staged digest \([0-9a-f]*\) .*/\1/p' <<<"$output")
	[ -n "$digest" ]
	run -0 kr ring commit r --instance "$N"
	assert_output "ring r: committed: slot 1 (generation 2, digest $digest) is active"
	run -1 kr ring commit r --instance "$N"
	assert_output "keyrouter: ring commit r: nothing is staged: nothing to commit (state idle; slot 1 is active: generation 2, digest $digest)"
	run -1 kr ring rollback r --instance "$N"
	assert_output --partial "(state idle; slot 1 is active: generation 2, digest $digest)"
	run -1 kr ring migrate r --percent 5 --instance "$N"
	assert_output --partial "nothing is staged: run 'ring stage' first (state idle; slot 1 is active"
}

@test "another command holds the instance: readers do not wait for it, a writer says what it waits for" {
	needs_root
	netns_up
	small_config
	run -0 kr load v0 -c "$T/c.json" --mode generic --instance "$N"
	# a hung or long apply: the instance's lock held (fd 8 of this shell)
	exec 8<"/sys/fs/bpf/keyrouter/$N"
	flock 8
	# readers answer at once (timeout: a hang guard only)
	run -0 timeout 60 nsenter --net="/run/netns/$N" "$KK" status --instance "$N" 8<&-
	assert_output --partial "ring r (id 0): idle"
	run -0 timeout 60 nsenter --net="/run/netns/$N" "$KK" ring status --instance "$N" 8<&-
	run -0 timeout 60 nsenter --net="/run/netns/$N" "$KK" lookup -c "$T/c.json" --service p --live --instance "$N" 6b6579 8<&-
	run -0 timeout 60 nsenter --net="/run/netns/$N" "$KK" diff --old-published -c "$T/c.json" --ring r --instance "$N" 8<&-
	# a writer says that it waits, and for what, then goes on once the lock is free
	nsenter --net="/run/netns/$N" "$KK" backend set 10.0.0.1:1 drain --instance "$N" \
		>"$T/w.out" 2>&1 8<&- &
	writer=$!
	for ((k = 0; k < 600; k++)); do
		grep -q "waiting for another keyrouter command on instance '$N'" "$T/w.out" && break
		sleep 0.1
	done
	flock -u 8
	exec 8<&-
	wait "$writer"
	run -0 cat "$T/w.out"
	assert_line "keyrouter: waiting for another keyrouter command on instance '$N' (it holds the lock of /sys/fs/bpf/keyrouter/$N; 'fuser -v /sys/fs/bpf/keyrouter/$N' shows which process)"
	assert_output --regexp "backend 10.0.0.1:1 \(id [0-9]+, 1 ring\): drain"
}

@test "the interface renamed after the load: status says attached and the new name; unload by either name" {
	needs_root
	netns_up
	small_config
	for name in w0 v0; do
		run -0 kr load v0 -c "$T/c.json" --mode generic --instance "$N"
		ip -n "$N" link set v0 down
		ip -n "$N" link set v0 name w0
		ip -n "$N" link set w0 up
		run -0 kr status --instance "$N"
		assert_line --regexp "^instance $N: v0 \(attached; the interface is now named 'w0'\), generic mode, program id [0-9]+, "
		run -0 kr status --json --instance "$N"
		assert_output --partial '"interface":"v0",'
		assert_output --partial '"attached":"yes","interface_now":"w0"}'
		# unload by the new name, then (loaded again) by the name it was loaded on
		run -0 kr unload "$name"
		assert_output --partial "unloaded from $name"
		[ ! -e "/sys/fs/bpf/keyrouter/$N" ]
		run -0 ip -n "$N" -d link show w0
		refute_output --partial "prog/xdp"
		ip -n "$N" link set w0 down
		ip -n "$N" link set w0 name v0
		ip -n "$N" link set v0 up
	done
}

@test "apply or ring stage from another network namespace than the instance's is refused: it would write that namespace's devices" {
	needs_root
	netns_up
	cat > "$T/l2.json" <<'JSON'
{ "rings": [ { "name": "r", "format": "v2", "backends": [
    { "address": "10.0.0.1:1", "mac": "02:00:00:00:00:01" }, { "address": "10.0.0.2:1", "mac": "02:00:00:00:00:02" } ] } ],
  "services": [ { "name": "p", "vip": "10.1.0.1", "port": 9, "key": { "type": "payload" }, "ring": "r",
                  "forward": { "mode": "l2" } } ] }
JSON
	run -0 kr load v0 -c "$T/l2.json" --mode generic --instance "$N"
	run -0 bpftool map dump pinned "/sys/fs/bpf/keyrouter/$N/kr_devices"
	devices=$output
	# from the host: the host's interface of v0's index (if any) is not v0
	run -1 "$KK" apply -c "$T/l2.json" --instance "$N"
	assert_output --partial "keyrouter: instance '$N' is attached to 'v0' in another network namespace"
	assert_output --partial "so it must run there: 'nsenter --net=/run/netns/$N keyrouter apply -c $T/l2.json --instance $N'; nothing was changed"
	run -1 "$KK" ring stage r -c "$T/l2.json" --instance "$N"
	assert_output --partial "'nsenter --net=/run/netns/$N keyrouter ring stage r -c $T/l2.json --instance $N'"
	run -0 bpftool map dump pinned "/sys/fs/bpf/keyrouter/$N/kr_devices"
	assert_output "$devices"
	# there, it runs
	run -0 kr apply -c "$T/l2.json" --instance "$N"
	assert_output "apply: nothing changed (1 rings, 1 services, 2 backends up to date)"
}

@test "load where an XDP program attached without libxdp runs: the error names it and the ways out" {
	needs_root
	obj=${OUT:-build}/tests/progs/decap.bpf.o
	[ -f "$obj" ] || skip "no $obj"
	netns_up
	small_config
	ip -n "$N" link set dev v0 xdpgeneric obj "$obj" sec xdp
	prog=$(ip -n "$N" -d link show v0 | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p')
	[ -n "$prog" ]
	run -1 kr load v0 -c "$T/c.json" --mode generic --instance "$N"
	assert_output --partial "couldn't attach XDP (generic mode) to 'v0': Device or resource busy"
	assert_output --partial "keyrouter: 'v0' already runs XDP program $prog ('kr_decap'), attached without libxdp's dispatcher"
	assert_output --partial "detach it ('ip link set dev v0 xdpgeneric off'), load it with xdp-loader so that both run, or load keyrouter with --mode tc"
	[ ! -e "/sys/fs/bpf/keyrouter/$N" ]
	# the way out given works
	ip -n "$N" link set dev v0 xdpgeneric off
	run -0 kr load v0 -c "$T/c.json" --mode generic --instance "$N"
}

@test "load under ip netns exec where keyrouter already runs: says it is keyrouter, never to detach it" {
	needs_root
	netns_up
	small_config
	run -0 kr load v0 -c "$T/c.json" --mode generic --instance "$N"
	prog=$(ip -n "$N" -d link show v0 | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p')
	run -0 bpftool prog show id "$prog"
	[[ "$output" == *"name kr_xdp"* ]] || skip "libxdp attached a dispatcher here (keyrouter stacks in it)"
	# ip netns exec: a /sys of its own, the pins out of sight
	run -1 ip netns exec "$N" "$KK" load v0 -c "$T/c.json" --mode generic --instance "$N-2"
	assert_output --partial "keyrouter: 'v0' already runs keyrouter's XDP program $prog (kr_xdp): one instance per interface"
	refute_output --partial "xdpgeneric off"
	run -0 ip -n "$N" -d link show v0
	assert_output --partial "prog/xdp id $prog"
}

@test "ring migrate/commit/rollback/status --help give their own --instance default, ring stage its own" {
	for c in migrate commit rollback status; do
		run -0 "$KK" ring $c --help
		assert_output --partial '--instance NAME  pins under /sys/fs/bpf/keyrouter/NAME (default "default")'
		refute_output --partial "ring stage:"
	done
	run -0 "$KK" ring stage --help
	assert_output --partial "(default: the config's"
	assert_output --partial '"instance", else "default")'
}

@test "exporter that cannot listen says why: no such address here, or the port taken" {
	[ "$(id -u)" = 0 ] || skip "needs root"
	netns_up
	# (with an IPv4 address somewhere: a namespace without any lets any address be bound)
	ip -n "$N" addr add 10.9.9.1/24 dev v0
	run -1 timeout 60 nsenter --net="/run/netns/$N" "$KK" exporter --listen 192.0.2.1:9437
	assert_output "keyrouter exporter: couldn't listen on 192.0.2.1:9437: Cannot assign requested address (no such address on this host; in a network namespace of its own, is lo up?)"
	ip -n "$N" link set lo up
	nsenter --net="/run/netns/$N" "$PY" -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 9437)); s.listen(); print("up", flush=True); time.sleep(600)' >"$T/l.out" &
	listener=$!
	for ((k = 0; k < 600; k++)); do grep -q up "$T/l.out" && break; sleep 0.1; done
	run -1 timeout 60 nsenter --net="/run/netns/$N" "$KK" exporter --listen 127.0.0.1:9437
	kill "$listener"
	assert_output --partial "couldn't listen on 127.0.0.1:9437: Address already in use (another process listens there"
}

@test "version --help explains the command (it printed the version); version takes no argument" {
	run -0 "$KK" version --help
	assert_line --index 0 "Usage: keyrouter version"
	run -0 "$KK" version
	assert_output --regexp '^keyrouter [0-9]+\.[0-9]+\.[0-9]+'
	run -0 "$KK" --version
	run -2 "$KK" version extra
	assert_output --partial "unexpected argument 'extra'"
}

@test "status by a user who cannot see the pins: permission denied, not 'not loaded'" {
	loaded_unseen_by_nobody
	for c in status "ring status" "backend set 10.0.0.1:1 down"; do
		run -1 nobody "$NKK" $c --instance "$N"
		assert_output --partial "keyrouter: couldn't look at '/sys/fs/bpf/keyrouter/$N': Permission denied (keyrouter needs root"
		refute_output --partial "is not loaded"
	done
}

@test "Prometheus exposition by a user who cannot see the pins: keyrouter_read_errors 1 with keyrouter_up 0, not a plain 'not loaded'" {
	loaded_unseen_by_nobody
	run -0 nobody "$NKK" stats --prometheus --instance "$N"
	assert_line "keyrouter_up{keyrouter_instance=\"$N\"} 0"
	assert_line "keyrouter_read_errors{keyrouter_instance=\"$N\"} 1"
	run -0 nobody "$NKK" stats --prometheus
	assert_line "keyrouter_up 0"
	assert_line "keyrouter_read_errors 1"
	# root sees it, and an instance that does not exist is only "not loaded"
	run -0 kr stats --prometheus --instance "$N"
	assert_line "keyrouter_up{keyrouter_instance=\"$N\"} 1"
	run -0 kr stats --prometheus --instance "$N-none"
	assert_line "keyrouter_up{keyrouter_instance=\"$N-none\"} 0"
	refute_output --partial "keyrouter_read_errors"
}
