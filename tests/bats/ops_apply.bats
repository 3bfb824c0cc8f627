#!/usr/bin/env bats
# apply as plan, then execute (docs/operations.md "apply"), with a real router in a
# namespace (tests/bats/ops_helpers.bash: client -> r0 -> 2 backends), and the bugs of
# issue 12 it fixed, one test each:
#   1. apply --dry-run of a config that removes services returned never (100 % CPU)
#   3. a backend "dev" that does not exist was accepted (kr_backends got ifindex 0)
#   6. a dry run said it published
#   8. a slot's counters survived re-staging (generation 3 showed generation 1's packets)

bats_require_minimum_version 1.5.0

setup_file() {
	load ops_helpers
	kr_prereq
	export P="kr-ops-$$-ap"
	kr_topo_up 2 || { kr_topo_down; return 1; }
	kr_recv_start
	kr_config "$KR_TMP/ab.json" 160 1 2
	kr_config "$KR_TMP/a.json" 160 1
	kr_config "$KR_TMP/ab16.json" 16 1 2
	# ab.json with two services more (ports 7001, 7002)
	jq '.services += [(.services[0] | .name = "web2" | .port = 7001),
			  (.services[0] | .name = "web3" | .port = 7002)]' "$KR_TMP/ab.json" \
		> "$KR_TMP/ab3svc.json"
	# ab.json whose first backend names an egress device that does not exist
	# these tests move half of the ring's keys in one apply on purpose (2 backends -> 1,
	# point_multiple 160 -> 16): the guard against that (max_move) has a test of its own,
	# with its default
	for c in ab a ab16 ab3svc; do
		jq '.max_move = 1' "$KR_TMP/$c.json" > "$KR_TMP/$c.tmp" && mv "$KR_TMP/$c.tmp" "$KR_TMP/$c.json"
	done
	export NODEV="krnodev$$" NEWDEV="krdev$$"
	jq --arg d "$NODEV" '.rings[0].backends[0].dev = $d' "$KR_TMP/ab.json" \
		> "$KR_TMP/nodev.json"
}

teardown_file() {
	load ops_helpers
	kr_topo_down
}

setup() {
	load ops_helpers
	kr_prereq
	[ -n "${KR_TMP:-}" ] || skip "no topology"
}

teardown() {
	kr unload r0 >/dev/null 2>&1 || true
	return 0
}

pins() { echo "/sys/fs/bpf/keyrouter/$P"; }
nservices() { bpftool map dump pinned "$(pins)/kr_services" -j | jq length; }

@test "apply --dry-run of a config that removes services: 'would remove 2 services', exit 0, nothing removed (issue 12 #1)" {
	run -0 kr load r0 -c "$KR_TMP/ab3svc.json" --mode generic --instance "$P"
	[ "$(nservices)" = 3 ]
	# before the fix this looped forever in the kr_services scan: bound it
	run -0 timeout 30 nsenter --net="/run/netns/$P-r" "$KR_BIN" apply --dry-run \
		-c "$KR_TMP/ab.json" --instance "$P"
	assert_output --partial "would remove 2 services"
	assert_line --regexp "^service 10\.77\.1\.1:7001/udp: would remove"
	assert_line --regexp "^service 10\.77\.1\.1:7002/udp: would remove"
	[ "$(nservices)" = 3 ]
	run -0 kr apply -c "$KR_TMP/ab.json" --instance "$P"
	assert_output --partial "services 0 added, 0 changed, 2 removed, 1 unchanged"
	[ "$(nservices)" = 1 ]
}

@test "a dry run says what it would publish, never that it published; it writes nothing (issue 12 #6)" {
	run -0 kr load r0 -c "$KR_TMP/ab.json" --mode generic --instance "$P"
	run -0 kr apply --dry-run -c "$KR_TMP/a.json" --instance "$P"
	assert_line --regexp "^ring 'web' \(id 0\): would publish digest [0-9a-f]{8}, 160 points into slot 0 \(replacing digest [0-9a-f]{8}: the config's version differs\)$"
	assert_output --partial "apply (dry run): would publish 1 rings"
	assert_output --partial "would release 1 backends"
	refute_output --partial "publishing"
	refute_output --partial "published"
	# nothing was written: the loaded config is still what the maps say
	run -0 kr apply -c "$KR_TMP/ab.json" --instance "$P"
	assert_output "apply: nothing changed (1 rings, 1 services, 2 backends up to date)"
	# the real apply says it published
	run -0 kr apply -c "$KR_TMP/a.json" --instance "$P"
	assert_output --partial "publishing digest"
	assert_output --partial "rings 1 published"
	run -0 kr apply --dry-run -c "$KR_TMP/a.json" --instance "$P"
	assert_output "$(printf "ring 'web' (id 0): unchanged (digest %s)\napply (dry run): nothing would change (1 rings, 1 services, 1 backends up to date)" \
		"$(kr ring status web --instance "$P" --json | jq -r '.[0].slots[0].digest')")"
}

@test "a backend dev that does not exist: load and apply fail naming the backend and the device (issue 12 #3)" {
	run -1 kr load r0 -c "$KR_TMP/nodev.json" --mode generic --instance "$P"
	assert_output --partial "ring 'web': backend 10.77.0.11:7000: device '$NODEV' does not exist"
	assert_output --partial "nothing was left attached or pinned"
	refute_output --partial "stopped"	# refused before anything was attached
	[ ! -e "$(pins)" ]
	run -0 kr load r0 -c "$KR_TMP/ab.json" --mode generic --instance "$P"
	run -1 kr apply -c "$KR_TMP/nodev.json" --instance "$P"
	assert_output --partial "device '$NODEV' does not exist"
	# nothing was written: no kr_backends entry with the device's (missing) ifindex
	run -0 kr apply -c "$KR_TMP/ab.json" --instance "$P"
	assert_output --partial "nothing changed"
	run -1 kr apply --dry-run -c "$KR_TMP/nodev.json" --instance "$P"
	assert_output --partial "device '$NODEV' does not exist"
	# the device exists: its ifindex is written
	kr_ns r ip link add "$NEWDEV" type veth peer name "${NEWDEV}p"
	jq --arg d "$NEWDEV" '.rings[0].backends[0].dev = $d' "$KR_TMP/ab.json" > "$KR_TMP/dev.json"
	run -0 kr apply -c "$KR_TMP/dev.json" --instance "$P"
	want=$(kr_ns r ip -j link show "$NEWDEV" | jq ".[0].ifindex")
	run -0 bpftool map dump pinned "$(pins)/kr_backends" -j
	echo "$output" | jq -e --argjson i "$want" '[.[] | select(.formatted.value.ifindex == $i)] | length == 1'
	kr_ns r ip link del "$NEWDEV"
}

# packets routed by slot S (ring web), and its generation
slot_packets() { kr ring status web --instance "$P" --json | jq ".[0].slots[$1].packets"; }
slot_gen() { kr ring status web --instance "$P" --json | jq ".[0].slots[$1].generation"; }

@test "a slot's counters belong to the image it holds: re-staging resets them (issue 12 #8)" {
	run -0 kr load r0 -c "$KR_TMP/ab.json" --mode generic --instance "$P"
	[ "$(slot_gen 0)" = 1 ]
	for i in 1 2; do : > "$KR_TMP/b$i.log"; done
	kr_send g 0 50
	kr_wait_recv g 50
	[ "$(slot_packets 0)" = 50 ]		# generation 1 routed 50
	run -0 kr ring stage web -c "$KR_TMP/a.json" --instance "$P"
	run -0 kr ring migrate web --percent 100 --instance "$P"
	run -0 kr ring commit web --instance "$P"
	[ "$(slot_gen 1)" = 2 ]
	[ "$(slot_packets 1)" = 0 ]
	run -0 kr ring stage web -c "$KR_TMP/ab16.json" --instance "$P"
	assert_output --regexp "staged digest [0-9a-f]{8} \(32 points, generation 3\) in slot 0"
	[ "$(slot_gen 0)" = 3 ]
	[ "$(slot_packets 0)" = 0 ]		# not generation 1's 50
	for i in 1 2; do : > "$KR_TMP/b$i.log"; done
	kr_send h 0 20
	kr_wait_recv h 20
	[ "$(slot_packets 1)" = 20 ]		# the active generation 2 routes them
	[ "$(slot_packets 0)" = 0 ]
	# apply republishing the active slot resets it too
	run -0 kr ring rollback web --instance "$P"
	run -0 kr apply -c "$KR_TMP/ab16.json" --instance "$P"
	assert_output --partial "rings 1 published"
	[ "$(slot_gen 1)" = 4 ]
	[ "$(slot_packets 1)" = 0 ]
}

@test "ring status takes the moved share ring stage noted in the staged image (no diff of two 2M-point images per call): diff's exact figure, a fraction of the images' memory" {
	kr_config "$KR_TMP/big.json" 1000000 1 2
	run -0 kr load r0 -c "$KR_TMP/a.json" --mode generic --instance "$P"
	run -0 kr ring stage web -c "$KR_TMP/big.json" --instance "$P"
	want=$("$KR_BIN" diff --old-config "$KR_TMP/a.json" --new-config "$KR_TMP/big.json" --ring web --json | jq -r .moved)
	/usr/bin/time -f '%M' -o "$KR_TMP/rss" "$KR_BIN" ring status web --instance "$P" --json >"$KR_TMP/rs.json"
	got=$(jq -r '.[0].moved_share' "$KR_TMP/rs.json")
	kib=$(jq '[.[0].slots[].memlock // 0] | add / 1024 | floor' "$KR_TMP/rs.json")
	echo "moved: ring status $got, diff $want; ring status max RSS $(cat "$KR_TMP/rss") KiB, images $kib KiB"
	awk -v a="$got" -v b="$want" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d < 1e-9) }'
	# reading both images (12 MB) and diffing them takes more than the images' size
	[ "$(cat "$KR_TMP/rss")" -lt "$kib" ]
	run -0 kr ring rollback web --instance "$P"
	run -0 kr unload r0 --instance "$P"
}

@test "ring migrate/commit/rollback --json: the control word written, parsed by jq; an option of another verb (stage --percent) is refused, nothing changed (issue 26 #11)" {
	run -0 kr load r0 -c "$KR_TMP/a.json" --mode generic --instance "$P"
	run -2 kr ring stage web -c "$KR_TMP/ab.json" --percent 5 --instance "$P"
	assert_output --partial "unrecognized option '--percent'"
	[ "$(kr ring status web --instance "$P" --json | jq -r '.[0].state')" = idle ]
	run -2 kr ring commit web --config "$KR_TMP/ab.json" --instance "$P"
	run -0 kr ring stage web -c "$KR_TMP/ab.json" --instance "$P"
	run -0 kr ring migrate web --percent 37 --json --instance "$P"
	echo "$output"
	[ "$(jq -r '.done + " " + .state + " " + (.percent * 1e6 | round | tostring) + " " + (.staged.slot | tostring)' <<<"$output")" = "migrate migrating 37000000 1" ]
	[ "$(jq -r .fraction <<<"$output")" = $(( 37 * 4294967296 / 100 + 1 )) ] ||
		[ "$(jq -r .fraction <<<"$output")" = $(( 37 * 4294967296 / 100 )) ]
	gen=$(jq -r .staged.generation <<<"$output")
	[ "$gen" = "$(kr ring status web --instance "$P" --json | jq '.[0].slots[1].generation')" ]
	run -0 kr ring commit web --json --instance "$P"
	[ "$(jq -r '.state + " " + (.active_slot | tostring) + " " + (.staged.generation | tostring)' <<<"$output")" = "idle 1 $gen" ]
	run -1 kr ring rollback web --json --instance "$P"
	run -0 kr unload r0 --instance "$P"
}

@test "apply --json, apply --dry-run --json, ring stage --json: one object each (jq), the same counts as the summary lines; nothing written by the dry run" {
	run -0 kr load r0 -c "$KR_TMP/a.json" --mode generic --instance "$P"
	run -0 kr apply -c "$KR_TMP/ab.json" --dry-run --json --instance "$P"
	echo "$output"
	[ "$(jq -r '.ok, .dry_run, .changed' <<<"$output" | tr '\n' ' ')" = "true true true " ]
	[ "$(jq -r '.rings[0].action + " " + .rings[0].why' <<<"$output")" = "publish changed" ]
	[ "$(jq '.plan.backends | map(select(.change == "add")) | length' <<<"$output")" = 1 ]
	text=$(kr apply -c "$KR_TMP/ab.json" --dry-run --instance "$P" | tail -1)
	[[ "$text" == *"would publish $(jq .counts.rings_published <<<"$output") rings"* ]]
	[[ "$text" == *"would add $(jq .counts.backends_added <<<"$output") backends"* ]]
	# the dry run wrote nothing: the apply still has the ring to publish
	kr apply -c "$KR_TMP/ab.json" --json --instance "$P" >"$KR_TMP/apply.json"
	output=$(cat "$KR_TMP/apply.json")
	echo "$output"
	[ "$(jq -r '.ok, .dry_run, .changed, .rings[0].done, .counts.rings_published' <<<"$output" | tr '\n' ' ')" = "true false true true 1 " ]
	digest=$(jq -r .rings[0].digest <<<"$output")
	[ "$digest" = "$(kr ring status web --instance "$P" --json | jq -r '.[0].slots[0].digest')" ]
	run -0 kr apply -c "$KR_TMP/ab.json" --json --instance "$P"
	[ "$(jq -r '.changed, .rings[0].action, .counts.rings_unchanged' <<<"$output" | tr '\n' ' ')" = "false unchanged 1 " ]
	run -0 kr ring stage web -c "$KR_TMP/a.json" --json --instance "$P"
	[ "$(jq -r '.done + " " + .state + " " + (.slot | tostring)' <<<"$output")" = "stage staged 1" ]
	run -0 kr ring stage web -c "$KR_TMP/a.json" --json --instance "$P"
	[ "$(jq -r .done <<<"$output")" = staged_already ]
	run -0 kr ring rollback web --instance "$P"
	run -0 kr unload r0 --instance "$P"
}

@test "apply --strict during a migration: the ring it would skip fails it before anything is written; without --strict it is skipped, exit 0 (issue 26 #11)" {
	kr_config "$KR_TMP/b.json" 160 2
	jq '.max_move = 1' "$KR_TMP/b.json" > "$KR_TMP/b.tmp" && mv "$KR_TMP/b.tmp" "$KR_TMP/b.json"
	run -0 kr load r0 -c "$KR_TMP/a.json" --mode generic --instance "$P"
	run -0 kr ring stage web -c "$KR_TMP/ab.json" --instance "$P"
	before=$(kr status --json --instance "$P" | jq -c '[.rings, .backends]')
	run -1 kr apply -c "$KR_TMP/b.json" --strict --instance "$P"
	assert_output --partial "ring 'web' differs but is staged (--strict): nothing was changed"
	refute_output --partial "stopped"
	[ "$(kr status --json --instance "$P" | jq -c '[.rings, .backends]')" = "$before" ]
	run -0 kr apply -c "$KR_TMP/b.json" --instance "$P"
	assert_output --partial "apply leaves it alone"
	run -0 kr ring rollback web --instance "$P"
	run -0 kr apply -c "$KR_TMP/b.json" --strict --instance "$P"
	run -0 kr unload r0 --instance "$P"
}

@test "backend set --json: one object (jq): each matching backend, whether it changed, what it was" {
	run -0 kr load r0 -c "$KR_TMP/ab.json" --mode generic --instance "$P"
	b=$(jq -r '.rings[0].backends[0].address' "$KR_TMP/ab.json")
	run -0 kr backend set "$b" drain --json --instance "$P"
	echo "$output"
	[ "$(jq -r '.state + " " + (.backends | length | tostring) + " " + .backends[0].address + " " + (.backends[0].changed | tostring) + " " + .backends[0].was' <<<"$output")" = "drain 1 $b true up" ]
	[ "$(jq -r .backends[0].id <<<"$output")" = "$(kr status --json --instance "$P" | jq -r --arg a "$b" '.backends[] | select(.address == $a) | .id')" ]
	run -0 kr backend set "$b" drain --json --instance "$P"
	[ "$(jq -r '.backends[0].changed' <<<"$output")" = false ]
	run -0 kr backend set "${b%:*}" up --json --instance "$P"
	[ "$(jq -r '.backends[0].state + " " + .backends[0].was' <<<"$output")" = "up drain" ]
	run -0 kr unload r0 --instance "$P"
}

# "name" of each backend of CONFIG's ring web, in ring order (the dump's backend index)
ring_names() { jq -r '.rings[0].backends[].address' "$1"; }

@test "max_move: an apply that would move half of a ring's keys is refused with the staging commands, nothing written; --dry-run and --json state the share (an independent model's); --force and a larger max_move publish it (issue 36 #2)" {
	for c in ab a; do jq 'del(.max_move)' "$KR_TMP/$c.json" > "$KR_TMP/mm-$c.json"; done
	run -0 kr load r0 -c "$KR_TMP/mm-ab.json" --mode generic --instance "$P"
	before=$(kr ring status web --instance "$P" --json | jq -r '.[0].slots[] | select(.active) | .digest')
	# the share a.json moves, from both rings' points by a model apart from the engine
	for c in ab a; do
		"$KR_BIN" ring dump -c "$KR_TMP/$c.json" --ring web > "$KR_TMP/$c.dump"
		ring_names "$KR_TMP/$c.json" > "$KR_TMP/$c.names"
	done
	want=$($KR_PY tests/lib/moved_share.py "$KR_TMP/ab.dump" "$KR_TMP/ab.names" \
		"$KR_TMP/a.dump" "$KR_TMP/a.names")
	awk -v w="$want" 'BEGIN { exit !(w > 0.25 && w < 0.75) }'
	run -1 kr apply -c "$KR_TMP/mm-a.json" --instance "$P"
	echo "$output"
	pct=$(awk -v w="$want" 'BEGIN { printf "%.1f", 100 * w }')
	assert_output --partial "ring 'web' would move $pct% of its keys at once, more than max_move 25%: nothing was changed"
	assert_output --partial "'keyrouter ring stage web -c $KR_TMP/mm-a.json', then 'keyrouter ring migrate web --percent P'"
	assert_output --partial "'keyrouter ring commit web'"
	refute_output --partial "publishing"
	refute_output --partial "apply of"
	[ "$(kr ring status web --instance "$P" --json | jq -r '.[0].slots[] | select(.active) | .digest')" = "$before" ]
	# the dry run prints the plan with the share and the refusal, exit 1
	run -1 kr apply --dry-run -c "$KR_TMP/mm-a.json" --instance "$P"
	assert_line --regexp "^  it moves [0-9.]+% of the ring's keys to another backend at once \(max_move 25%: refused without --force\)$"
	got=$(sed -nE "s/^  it moves ([0-9.]+)% .*/\1/p" <<<"$output")
	awk -v g="$got" -v w="$want" 'BEGIN { d = g / 100 - w; if (d < 0) d = -d; exit !(d < 0.00006) }'
	# --json: the share exactly (the model's, to 1e-9) and what refused it
	run -1 kr apply --dry-run --json -c "$KR_TMP/mm-a.json" --instance "$P"
	j=$(kr apply --dry-run --json -c "$KR_TMP/mm-a.json" --instance "$P" 2>/dev/null) || true
	[ "$(jq -r '.ok, .refused, .max_move' <<<"$j" | xargs)" = "false max_move 0.25" ]
	awk -v g="$(jq -r '.rings[0].moved' <<<"$j")" -v w="$want" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d < 1e-8) }'
	# a ring stage of the same version is the way round, and is not refused
	run -0 kr ring stage web -c "$KR_TMP/mm-a.json" --instance "$P"
	run -0 kr ring rollback web --instance "$P"
	# a max_move above the share: published, the share said
	jq '.max_move = 0.8' "$KR_TMP/mm-a.json" > "$KR_TMP/a80.json"
	run -0 kr apply -c "$KR_TMP/a80.json" --instance "$P"
	assert_output --partial "publishing digest"
	assert_output --partial "ring 'web': $(awk -v w="$want" 'BEGIN { printf "%.2f", 100 * w }')% of its keys moved to another backend"
	# back to two backends: the same share again, so refused again; --force publishes it
	run -1 kr apply -c "$KR_TMP/mm-ab.json" --instance "$P"
	run -0 kr apply --force -c "$KR_TMP/mm-ab.json" --instance "$P"
	assert_output --partial "publishing digest"
	[ "$(kr ring status web --instance "$P" --json | jq -r '.[0].slots[] | select(.active) | .digest')" = "$before" ]
	# a bad max_move is a configuration error, nothing changed
	jq '.max_move = 0' "$KR_TMP/mm-a.json" > "$KR_TMP/a0.json"
	run -1 kr apply -c "$KR_TMP/a0.json" --instance "$P"
	assert_output --partial "max_move: expected a share 0..1 (above 0)"
}

@test "guard rails (issue 36 #1): a MAC other than the router's neighbour entry, one MAC for two backends, an l2 backend the router routes through another device, a VIP of the router's own: warnings naming the fields in config check (--live) and apply, --strict refuses, nothing changed" {
	run -0 kr load r0 -c "$KR_TMP/ab.json" --mode generic --instance "$P"
	before=$(kr status --json --instance "$P" | jq -c '[.rings, .backends]')
	b1=$(kr_bip 1) b2=$(kr_bip 2)
	# the router knows backend 1's real MAC (a permanent neighbour entry, as an operator's)
	ip -n "$P-r" neigh replace "$b1" lladdr "$(kr_bmac 1)" dev r0 nud permanent
	# backend 1 given backend 2's MAC: the copy-paste slip
	jq --arg m "$(kr_bmac 2)" '.rings[0].backends[0].mac = $m' "$KR_TMP/ab.json" > "$KR_TMP/slip.json"
	run -0 "$KR_BIN" config check -c "$KR_TMP/slip.json"
	assert_output --regexp "slip.json:[0-9]+:[0-9]+: rings\[0\]\.backends\[1\]\.mac: warning: backend $b2 has the MAC of backend $b1 \(rings\[0\]\.backends\[0\]\) on the same device"
	run -0 kr config check --live -c "$KR_TMP/slip.json" --instance "$P"
	assert_output --partial "slip.json: rings[0].backends[0].mac: warning: backend $b1 has MAC $(kr_bmac 2) here, but the router's neighbour entry for $b1 on r0 says $(kr_bmac 1)"
	assert_line "live: 1 warning in this network namespace"
	run -1 kr config check --live --strict -c "$KR_TMP/slip.json" --instance "$P"
	run -0 kr apply --dry-run -c "$KR_TMP/slip.json" --instance "$P"
	assert_output --partial "rings[0].backends[0].mac: warning: backend $b1 has MAC"
	run -1 kr apply --strict -c "$KR_TMP/slip.json" --instance "$P"
	assert_output --partial "1 warning about this router's network (above, --strict): nothing was changed"
	[ "$(kr status --json --instance "$P" | jq -c '[.rings, .backends]')" = "$before" ]
	# the same file's MACs right: no live warning
	run -0 kr config check --live -c "$KR_TMP/ab.json" --instance "$P"
	assert_line "live: 0 warnings in this network namespace"
	# a backend the router reaches through another device, with no "dev": its frames would
	# leave by the ingress r0
	ip -n "$P-r" link add "krg$$" type veth peer name "krh$$"
	ip -n "$P-r" link set "krg$$" up
	ip -n "$P-r" route add 10.78.0.0/24 dev "krg$$"
	jq '.rings[0].backends[1].address = "10.78.0.5:'"$PORT"'"' "$KR_TMP/ab.json" > "$KR_TMP/far.json"
	run -0 kr config check --live -c "$KR_TMP/far.json" --instance "$P"
	assert_output --partial "far.json: rings[0].backends[1].dev: warning: service 'web' forwards l2 and backend 10.78.0.5 names no \"dev\": its frames go back out of the ingress device r0, but the router reaches 10.78.0.5 through krg$$ (give it \"dev\": \"krg$$\")"
	# without the instance the ingress is unknown: that check is left out, and said so
	run -0 kr config check --live -c "$KR_TMP/far.json"
	assert_line "live: 0 warnings in this network namespace (no loaded instance: the ingress device check was left out)"
	# the VIP on the router itself
	ip -n "$P-r" addr add "$VIP/32" dev lo
	run -0 kr config check --live -c "$KR_TMP/ab.json" --instance "$P"
	assert_output --partial "ab.json: services[0].vip: warning: service 'web': $VIP is an address of this router"
	run -1 kr apply --strict -c "$KR_TMP/ab.json" --instance "$P"
	ip -n "$P-r" addr del "$VIP/32" dev lo
	ip -n "$P-r" link del "krg$$"
	[ "$(kr status --json --instance "$P" | jq -c '[.rings, .backends]')" = "$before" ]
	# and with nothing to warn about, --strict applies as before
	run -0 kr apply --strict -c "$KR_TMP/ab.json" --instance "$P"
	assert_output "apply: nothing changed (1 rings, 1 services, 2 backends up to date)"
}
