#!/usr/bin/env bats
# Bugs the fuzzers and sanitizers found, one test each (the inputs are also kept as seeds
# in tests/fuzz/corpus/).
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

setup() {
	cd "$BATS_TEST_DIRNAME/../.."
	K=${KEYROUTER:-./build/keyrouter}
	T=$BATS_TEST_TMPDIR
}

@test "config show of a \"point_multiple\": \"auto\" ring loads again, same ring (fuzz_config)" {
	cat > "$T/c.json" <<'JSON'
{ "rings": [ { "name": "b", "format": "v2", "point_multiple": "auto", "target_cv": 0.2,
    "backends": [ { "address": "10.0.0.2:80" }, { "address": "10.0.0.3:80", "weight": 2 } ] } ] }
JSON
	run -0 $K config show -c "$T/c.json"
	echo "$output" > "$T/n.json"
	run -0 jq -e '.rings[0].point_multiple | numbers' "$T/n.json"
	run -0 $K config check -c "$T/n.json"
	run -0 $K ring build -c "$T/c.json" --ring b
	a=$(echo "$output" | grep -o 'digest [0-9a-f]*')
	[[ "$a" =~ ^digest\ [0-9a-f]{8}$ ]]	# an empty $a would match anything below
	run -0 $K ring build -c "$T/n.json" --ring b
	assert_output --partial "$a"
}
