#!/usr/bin/env bats
# `keyrouter analyze`, `diff`, `plan` and `"point_multiple": "auto"`: figures that must agree
# with each other and with the engine, and every error path (exit status + message).
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

setup() {
	cd "$BATS_TEST_DIRNAME/../.."
	K=${KEYROUTER:-./build/keyrouter}
	T=$BATS_TEST_TMPDIR
	# 10 backends, weights 1..5 (as the vectors' b_v1_10mixed)
	for i in $(seq 1 10); do echo "10.0.0.$i:443 $(( (i - 1) % 5 + 1 ))"; done > "$T/b10.txt"
	# the same without 10.0.0.4, and with 10.0.0.11 added
	grep -v '^10.0.0.4:' "$T/b10.txt" > "$T/b9.txt"
	{ cat "$T/b10.txt"; echo "10.0.0.11:443 3"; } > "$T/b11.txt"
}

# synthetic backends as plan makes them: 10.0.0.1 + i, port 443, weights cycled
synth() { # N "w1 w2 ..."
	local n=$1 i=0 ip w
	local -a ws=($2)
	while [ $i -lt "$n" ]; do
		ip=$((0x0a000001 + i))
		w=${ws[$((i % ${#ws[@]}))]}
		echo "$((ip >> 24)).$(((ip >> 16) & 255)).$(((ip >> 8) & 255)).$((ip & 255)):443 $w"
		i=$((i + 1))
	done
}

@test "analyze --help explains the command" {
	run -0 $K analyze --help
	assert_line --partial "Usage: keyrouter analyze --backends FILE"
	assert_output --partial "sqrt((N-1)/(N k + 1))"
}

@test "analyze: points, balance, memory (text)" {
	run -0 $K analyze --backends "$T/b10.txt" --version v1
	assert_line --regexp '^backends    10 \(10 with weight > 0\), total weight 30$'
	assert_line --regexp '^points      4800 generated, 4800 in the ring, 0 removed by 32-bit hash collisions'
	assert_line --regexp '^  CV        measured [0-9.]+%   theory 5.1432% \(random placement\)'
	assert_line --regexp '^memory      v1 \(8 B/point\) 37.5 KiB, v2 \(6 B/point\) 28.1 KiB, kernel image 60.0 KiB = 12.800 B/point$'
	# every backend listed (10 <= 20)
	assert_line --regexp '^ +9 10.0.0.10:443 +5 +[0-9]+ '
}

@test "analyze --json: shares sum to 2^32, memory agrees with the engine's image" {
	run -0 $K analyze --backends "$T/b10.txt" --version v2 --point-multiple 100 --json
	echo "$output" > "$T/a.json"
	[ "$(jq '[.per_backend[].share_keys] | add' "$T/a.json")" = 4294967296 ]
	[ "$(jq '[.per_backend[].points] | add' "$T/a.json")" = "$(jq .points.ring "$T/a.json")" ]
	[ "$(jq .memory.v1_bytes "$T/a.json")" = $((8 * 3000)) ]
	[ "$(jq .memory.v2_bytes "$T/a.json")" = $((6 * 3000)) ]
	chunks=$(jq .memory.image_chunks "$T/a.json")
	run -0 $K ring build --backends "$T/b10.txt" --version v2 --point-multiple 100
	assert_output --partial "image $chunks chunks"
	# CV measured = sqrt(mean (ratio - 1)^2) from the per-backend ratios
	jq -e '(.balance.cv - ([.per_backend[] | (.ratio - 1) * (.ratio - 1)] | add / length | sqrt)) | fabs < 1e-9' "$T/a.json"
	# theory: equal formula's generalisation, per backend sqrt((H-k)/(k(H+1)))
	jq -e '.per_backend[0] | (.cv_theory - (((3000 - 100) / (100 * 3001)) | sqrt)) | fabs < 1e-9' "$T/a.json"
}

@test "analyze: errors name what is wrong" {
	run -2 $K analyze --version v1
	assert_output --partial "keyrouter: analyze: ring: missing --backends FILE (with --version) or -c CONFIG"
	run -2 $K analyze --backends "$T/b10.txt"
	assert_output --partial "--backends needs --version v1|v2"
	run -2 $K analyze --backends "$T/b10.txt" --version v3
	assert_output --partial "bad --version 'v3': expected v1 or v2"
	run -2 $K analyze --backends "$T/b10.txt" --version v1 --point-multiple 16
	assert_output --partial "--point-multiple applies to v2 only"
	run -2 $K analyze --backends "$T/b10.txt" --version v2 --point-multiple 0
	assert_output --partial "bad --point-multiple '0': expected an integer 1..4294967295"
	run -2 $K analyze --backends "$T/b10.txt" -c x.json --version v2
	assert_output --partial "give either --backends FILE or -c CONFIG, not both"
	run -1 $K analyze --backends "$T/nope.txt" --version v2
	assert_output --partial "nope.txt"
	echo "10.0.0.1:443 1x" > "$T/bad.txt"
	run -1 $K analyze --backends "$T/bad.txt" --version v2
	assert_output --partial "bad.txt:1"
	echo "10.0.0.1:443 0" > "$T/zero.txt"
	run -1 $K analyze --backends "$T/zero.txt" --version v2
	assert_output --regexp "keyrouter: analyze: .*zero.txt"
}

@test "analyze -c: config rings, --ring required with several, auto point_multiple" {
	cat > "$T/c.json" <<'JSON'
{ "rings": [
  { "name": "auto", "format": "v2", "point_multiple": "auto", "target_cv": 0.02,
    "backends": [ { "address": "10.0.0.1:443", "weight": 1 }, { "address": "10.0.0.2:443", "weight": 2 },
                  { "address": "10.0.0.3:443", "weight": 3 }, { "address": "10.0.0.4:443", "weight": 4 } ] },
  { "name": "fixed", "format": "v2", "point_multiple": 160,
    "backends": [ { "address": "10.0.0.1:443", "weight": 1 }, { "address": "10.0.0.2:443", "weight": 2 },
                  { "address": "10.0.0.3:443", "weight": 3 } ] } ] }
JSON
	run -1 $K analyze -c "$T/c.json"
	assert_output --partial "c.json: 2 rings: name one with --ring NAME"
	run -1 $K analyze -c "$T/c.json" --ring nope
	assert_output --partial "c.json: no ring named 'nope' (2 rings in the file)"
	run -0 $K analyze -c "$T/c.json" --ring auto --json
	pm=$(echo "$output" | jq .point_multiple)
	echo "$output" | jq -e '.point_multiple_auto == true and .target_cv == 0.02'
	# the same number as plan's theory answer for the same backends, and the smallest
	synth 4 "1 2 3 4" > "$T/b4.txt"
	run -0 $K plan --backends "$T/b4.txt" --target-cv 2% --no-measure --no-table --json
	[ "$(echo "$output" | jq .point_multiple)" = "$pm" ]
	echo "$output" | jq -e '.cv_theory_collisions <= 0.02'
	run -0 $K analyze --backends "$T/b4.txt" --version v2 --point-multiple $((pm - 1)) --json
	echo "$output" | jq -e '.balance.cv_theory_collisions > 0.02'
	# the same config gives the same ring (digest) twice
	a=$($K ring build --backends "$T/b4.txt" --version v2 --point-multiple "$pm")
	run -0 $K analyze -c "$T/c.json" --ring auto
	assert_line "            point_multiple \"auto\" for target_cv 0.02: $pm"
	# a target no point_multiple reaches is a config error that says how close it gets
	sed 's/"target_cv": 0.02/"target_cv": 0.00001/' "$T/c.json" > "$T/c3.json"
	run -1 $K analyze -c "$T/c3.json" --ring auto
	assert_output --regexp 'c3.json:2:[0-9]+: rings\[0\].point_multiple: "auto": target_cv 1e-05 cannot be reached by this ring: the best is 0\.[0-9]+ at point_multiple [0-9]+'
}

@test "diff of a ring with itself, and v1 vs v2 at 160 without collisions, is 0" {
	run -0 $K diff --backends "$T/b10.txt" --version v2 --json
	echo "$output" | jq -e '.moved_keys == 0 and (.backends | length) == 0'
	run -0 $K diff --backends "$T/b10.txt" --old-version v1 --new-version v2
	assert_line --regexp '^moved     0.000000% of the key space \(0 of 2\^32'
}

@test "diff: removing a backend moves exactly its share, and only its keys" {
	run -0 $K analyze --backends "$T/b10.txt" --version v2 --json
	share=$(echo "$output" | jq '.per_backend[3].share_keys')
	run -0 $K diff --version v2 --old-backends "$T/b10.txt" --new-backends "$T/b9.txt" --json
	echo "$output" > "$T/d.json"
	[ "$(jq .moved_keys "$T/d.json")" = "$share" ]
	jq -e '[.backends[] | select(.lost_keys > 0)] | length == 1' "$T/d.json"
	jq -e '.backends[] | select(.address == "10.0.0.4:443") | .new_weight == null and .lost_keys > 0' "$T/d.json"
	# minimum for removing weight 4 of 30: 4/30
	jq -e '(.min_moved_weights - 4/30) | fabs < 1e-12' "$T/d.json"
	# lost = gained = moved
	jq -e '([.backends[].lost_keys] | add) == .moved_keys and ([.backends[].gained_keys] | add) == .moved_keys' "$T/d.json"
}

@test "diff: adding a backend (text), two rings of one config" {
	run -0 $K diff --version v2 --old-backends "$T/b10.txt" --new-backends "$T/b11.txt"
	assert_line --regexp '^minimum   9.090909% for this membership/weight change'
	assert_line --regexp '^  10.0.0.11:443 +- +3 +0.00000% '
	cat > "$T/c2.json" <<'JSON'
{ "rings": [
  { "name": "a", "format": "v2", "point_multiple": 100,
    "backends": [ { "address": "10.0.0.1:443", "weight": 1 }, { "address": "10.0.0.2:443", "weight": 1 } ] },
  { "name": "b", "format": "v2", "point_multiple": 100,
    "backends": [ { "address": "10.0.0.2:443", "weight": 1 }, { "address": "10.0.0.1:443", "weight": 1 } ] } ] }
JSON
	# same backends in another order: same points, the owner is matched by address
	run -0 $K diff -c "$T/c2.json" --old-ring a --new-ring b --json
	echo "$output" | jq -e '.moved_keys == 0'
}

@test "diff: errors" {
	run -2 $K diff --old-backends "$T/b10.txt" --version v2
	assert_output --partial "keyrouter: diff: new ring: missing --backends FILE (with --version) or -c CONFIG"
	run -2 $K diff --backends "$T/b10.txt" --old-version v2
	assert_output --partial "new ring: --backends needs --version v1|v2"
	run -2 $K diff --backends "$T/b10.txt" --version v2 --new-version v9
	assert_output --partial "bad --new-version 'v9': expected v1 or v2"
	run -2 $K diff --backends "$T/b10.txt" --version v2 --top -1
	assert_output --partial "bad --top '-1'"
	run -1 $K diff --old-backends "$T/b10.txt" --new-backends "$T/none.txt" --version v2
	assert_output --partial "new ring:"
	assert_output --partial "none.txt"
}

@test "plan: the answer meets its target on a built ring; the table" {
	run -0 $K plan --servers 200 --weights 1..4 --target-cv 5% --json --kmax 1000
	echo "$output" > "$T/p.json"
	pm=$(jq .point_multiple "$T/p.json")
	jq -e '.confirmed == 1 and .measured_cv <= 0.05 and .cv_theory_collisions <= 0.05' "$T/p.json"
	jq -e '[.table[].k] | index(1) != null and index(1000) != null' "$T/p.json"
	# measured rows agree with analyze on the same ring
	synth 200 "1 2 3 4" > "$T/b200.txt"
	run -0 $K analyze --backends "$T/b200.txt" --version v2 --point-multiple 100 --json
	cv=$(echo "$output" | jq .balance.cv)
	jq -e --argjson cv "$cv" '.table[] | select(.k == 100) | (.cv_measured - $cv) | fabs < 1e-12' "$T/p.json"
	conf=$(jq .confirmed_point_multiple "$T/p.json")
	run -0 $K analyze --backends "$T/b200.txt" --version v2 --point-multiple "$conf" --json
	echo "$output" | jq -e '.balance.cv <= 0.05'
	# the smallest: one less does not meet it in theory
	run -0 $K analyze --backends "$T/b200.txt" --version v2 --point-multiple $((pm - 1)) --json
	echo "$output" | jq -e '.balance.cv_theory_collisions > 0.05'
}

@test "plan: text output, max/mean target, budget, plot" {
	run -0 $K plan --servers 50 --weights 1,2 --target-max-over-mean 1.2 --rings 10 --point-budget 100000 --plot "$T/p.svg"
	assert_line --regexp '^answer      point_multiple [0-9]+ \(theory: CV .*E\[max/mean\] 1\.[12][0-9]+\)$'
	assert_line --regexp '^confirmed   on a built ring: point_multiple [0-9]+ gives max/mean 1\.[01][0-9]+'
	assert_line --regexp '^memory      kernel image [0-9.]+ KiB per ring, [0-9.]+ KiB for 10 rings \(v2 points alone'
	assert_line --regexp '^ +100000 +7500000 .* \(budget\) '
	assert_line "plot        $T/p.svg"
	grep -q '^<svg ' "$T/p.svg"
	grep -q '</svg>$' "$T/p.svg"
	[ "$(grep -c '<circle' "$T/p.svg")" -ge 10 ]
}

@test "plan: unreachable targets and errors" {
	run -1 $K plan --servers 2048 --weights 1..8 --target-cv 0.001 --no-table --no-measure
	assert_line --regexp '^answer      unreachable: the best this ring can do is CV 0\.[0-9]+% at point_multiple [0-9]+ \(32-bit collisions'
	run -2 $K plan --servers 10
	assert_output --partial "keyrouter: plan: missing target: --target-cv X or --target-max-over-mean Y"
	run -2 $K plan --target-cv 1%
	assert_output --partial "missing --servers N (or --backends FILE, or -c CONFIG --ring NAME)"
	run -2 $K plan --servers 10 --target-cv 1% --target-max-over-mean 1.1
	assert_output --partial "give one target"
	run -2 $K plan --servers 10 --target-cv 2
	assert_output --partial "bad --target-cv '2': expected a fraction between 0 and 1"
	run -2 $K plan --servers 10 --target-max-over-mean 0.9
	assert_output --partial "bad --target-max-over-mean '0.9': expected a number above 1"
	run -2 $K plan --servers 0 --target-cv 1%
	assert_output --partial "bad --servers '0'"
	run -2 $K plan --servers 65537 --target-cv 1%
	assert_output --partial "at most 65536 backends per ring"
	run -2 $K plan --servers 10 --weights 1..x --target-cv 1%
	assert_output --partial "bad --weights '1..x'"
	run -1 $K plan --servers 10 --weights 0 --target-cv 1% --no-table
	assert_output --partial "every weight is 0"
	run -2 $K plan --backends "$T/b10.txt" --weights 1 --target-cv 1%
	assert_output --partial "--weights and --backends exclude each other"
	run -1 $K plan --backends "$T/b10.txt" --servers 11 --target-cv 1%
	assert_output --partial "--servers 11 but"
	run -1 $K plan --servers 10 --target-cv 5% --plot /nonexistent/dir/p.svg --no-table
	assert_output --partial "couldn't write the plot '/nonexistent/dir/p.svg'"
}

# ---- diff against what is published (a real instance: XDP generic on a veth in a netns) --

pub_up() {
	[ "$(id -u)" = 0 ] || skip "needs root"
	[ -f build/bpf/keyrouter.bpf.o ] || skip "no build/bpf/keyrouter.bpf.o"
	NS=kr-an-$$-$BATS_TEST_NUMBER
	INST=kr-an-$$-$BATS_TEST_NUMBER
	ip netns add "$NS"
	ip -n "$NS" link add d0 type veth peer name d1
	ip -n "$NS" link set d0 up
	ip -n "$NS" link set d1 up
	cat > "$T/pub.json" <<JSON
{ "instance": "$INST",
  "rings": [ { "name": "web", "format": "v2", "point_multiple": 100, "backends": [
    { "address": "10.0.0.1:443", "weight": 1 }, { "address": "10.0.0.2:443", "weight": 2 },
    { "address": "10.0.0.3:443", "weight": 3 }, { "address": "10.0.0.4:443", "weight": 4 } ] } ],
  "services": [ { "name": "s", "vip": "10.9.9.9", "port": 53, "key": { "type": "payload" },
    "ring": "web", "forward": { "mode": "ipip", "source4": "10.9.9.1" } } ] }
JSON
	nsenter --net="/run/netns/$NS" $K load d0 -c "$T/pub.json" --mode generic 3>&-
}

pub_down() {
	[ -n "${NS:-}" ] || return 0
	nsenter --net="/run/netns/$NS" $K unload d0 --instance "$INST" >/dev/null 2>&1 3>&-
	ip netns del "$NS" 2>/dev/null
	[ -z "${INST:-}" ] || rm -rf "/sys/fs/bpf/keyrouter/$INST"
}

teardown() {
	pub_down
}

@test "diff --old-published: the bill of applying a config, before applying it" {
	pub_up
	# what is published = the config: nothing moves
	run -0 $K diff --old-published -c "$T/pub.json" --instance "$INST"
	assert_line --regexp "^old       published ring web of instance $INST \(slot [01], generation [0-9]+, v2 point_multiple=100\): 4 backends, 1000 points$"
	assert_line --regexp '^moved     0.000000% of the key space'
	# a fifth backend: the same bill as config against config, to the key
	sed 's/{ "address": "10.0.0.4:443", "weight": 4 }/&, { "address": "10.0.0.5:443", "weight": 2 }/' \
		"$T/pub.json" > "$T/pub2.json"
	run -0 $K diff --old-config "$T/pub.json" --new-config "$T/pub2.json" --json
	want=$(echo "$output" | jq .moved_keys)
	[ "$want" -gt 0 ]
	run -0 $K diff --old-published -c "$T/pub2.json" --instance "$INST" --json
	[ "$(echo "$output" | jq .moved_keys)" = "$want" ]
	echo "$output" | jq -e '(.min_moved_weights - 2/12) | fabs < 1e-12'
	run -1 $K diff --old-published -c "$T/pub2.json" --instance "$INST" --old-ring nope
	assert_output --partial "old ring: instance '$INST' has no ring named 'nope'"
}

@test "diff --old-published: errors" {
	run -1 $K diff --old-published --backends "$T/b10.txt" --version v2 --instance kr-an-none-$$ --ring web
	assert_output --partial "keyrouter: diff: old ring: couldn't open the instance 'kr-an-none-$$'"
	run -1 $K diff --old-published --backends "$T/b10.txt" --version v2 --instance kr-an-none-$$
	assert_output --partial "old ring: the published ring needs a name: --ring NAME"
	run -2 $K diff --backends "$T/b10.txt" --version v2 --instance x
	assert_output --partial "--instance and --pin-dir apply to --old-published only"
	run -2 $K diff --old-published --old-backends "$T/b10.txt" --new-backends "$T/b10.txt" --version v2
	assert_output --partial "old ring: the published ring excludes --backends and -c"
}

@test "plan -c CONFIG --ring NAME: the ring's backends and weights, the same answer as --backends with them (issue 26 #11)" {
	printf '10.0.0.1:53 1\n10.0.0.2:53 2\n10.0.0.3:53 1\n' >"$BATS_TEST_TMPDIR/b.txt"
	printf '{ "rings": [ { "name": "r", "format": "v2", "point_multiple": 160, "backends": [ { "address": "10.0.0.1:53" }, { "address": "10.0.0.2:53", "weight": 2 }, { "address": "10.0.0.3:53" } ] } ] }\n' >"$BATS_TEST_TMPDIR/c.json"
	run -0 $K plan --backends "$BATS_TEST_TMPDIR/b.txt" --target-cv 2% --no-table --json
	a=$(jq -c 'del(.servers_desc)' <<<"$output")
	run -0 $K plan -c "$BATS_TEST_TMPDIR/c.json" --ring r --target-cv 2% --no-table --json
	[ "$(jq -r .servers_desc <<<"$output")" = "3 servers of ring r in $BATS_TEST_TMPDIR/c.json" ]
	[ "$(jq -c 'del(.servers_desc)' <<<"$output")" = "$a" ]
	run -2 $K plan -c "$BATS_TEST_TMPDIR/c.json" --target-cv 2%
	assert_output --partial "go together"
	run -1 $K plan -c "$BATS_TEST_TMPDIR/c.json" --ring nope --target-cv 2%
	assert_output --partial "has no ring 'nope'"
	run -2 $K plan -c "$BATS_TEST_TMPDIR/c.json" --ring r --weights 1,2 --target-cv 2%
	assert_output --partial "exclude each other"
}
