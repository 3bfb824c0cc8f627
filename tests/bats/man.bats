#!/usr/bin/env bats
# The man pages are generated (scripts/man.sh) from the tool's own --help and from
# docs/config.md, so they cannot drift: keyrouter(8) holds every command of `keyrouter
# --help` with its usage and options as that command's --help prints them, keyrouter.json(5)
# every section of docs/config.md; groff renders keyrouter(8) without a warning.
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

setup_file() {
	cd "$BATS_TEST_DIRNAME/../.."
	export MAN_DIR=$BATS_FILE_TMPDIR/man
	scripts/man.sh build/keyrouter "$MAN_DIR"
}

setup() {
	cd "$BATS_TEST_DIRNAME/../.."
	K=build/keyrouter
}

render() { MANWIDTH=200 man -l "$1" 2>/dev/null | tr -s ' '; }

@test "keyrouter(8): every command, with its usage line and every long option of its --help" {
	render "$MAN_DIR/keyrouter.8" >"$BATS_TEST_TMPDIR/man"
	$K --help | awk '/^Commands:/ { on = 1; next } on && /^$/ { exit }
		on { sub(/^  /, ""); n = index($0, "  "); print substr($0, 1, n - 1) }' >"$BATS_TEST_TMPDIR/cmds"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/cmds")" -ge 15 ]
	grep -qx 'exporter' "$BATS_TEST_TMPDIR/cmds"
	n=0
	while read -r c; do
		grep -q "^keyrouter $c\$" "$BATS_TEST_TMPDIR/man" || { echo "no section for $c"; false; }
		# shellcheck disable=SC2086
		$K $c --help >"$BATS_TEST_TMPDIR/help"
		u=$(grep -m1 '^Usage:' "$BATS_TEST_TMPDIR/help" | tr -s ' ')
		grep -qF -- "$u" "$BATS_TEST_TMPDIR/man" || { echo "$c: no '$u'"; false; }
		for o in $(grep -oE -- '--[a-z][a-z0-9-]+' "$BATS_TEST_TMPDIR/help" | sort -u); do
			grep -qF -- "$o" "$BATS_TEST_TMPDIR/man" || { echo "$c: no $o"; false; }
			n=$((n + 1))
		done
	done <"$BATS_TEST_TMPDIR/cmds"
	echo "# $(wc -l <"$BATS_TEST_TMPDIR/cmds") commands, $n options" >&3
}

@test "keyrouter(8) renders without a groff warning; NAME, SYNOPSIS, FILES, SEE ALSO" {
	run -0 bash -c "LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l '$MAN_DIR/keyrouter.8' 2>&1 >/dev/null"
	assert_output ''
	render "$MAN_DIR/keyrouter.8" >"$BATS_TEST_TMPDIR/man"
	for s in NAME SYNOPSIS DESCRIPTION COMMANDS FILES 'SEE ALSO'; do
		grep -qx "$s" "$BATS_TEST_TMPDIR/man" || { echo "no $s"; false; }
	done
	head -1 "$BATS_TEST_TMPDIR/man" | grep -q '^KEYROUTER(8)'
}

@test "keyrouter.json(5): every section of docs/config.md, and its fields" {
	render "$MAN_DIR/keyrouter.json.5" >"$BATS_TEST_TMPDIR/man"
	head -1 "$BATS_TEST_TMPDIR/man" | grep -q '^KEYROUTER.JSON(5)'
	sed -n 's/^##* //p' docs/config.md | sed 1d | sed 's/`//g' | tr -s ' ' >"$BATS_TEST_TMPDIR/sections"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/sections")" -ge 5 ]
	while read -r s; do
		grep -qF -- "$s" "$BATS_TEST_TMPDIR/man" || { echo "no section '$s'"; false; }
	done <"$BATS_TEST_TMPDIR/sections"
	for f in instance rings services point_multiple backends weight policy; do
		grep -q -- "$f" "$BATS_TEST_TMPDIR/man" || { echo "no field $f"; false; }
	done
}

@test "keyrouter(8) OPTIONS: every option of \`keyrouter --help\`, with its text" {
	render "$MAN_DIR/keyrouter.8" | awk '/^OPTIONS$/ { on = 1; next } /^COMMANDS$/ { exit } on' |
		tr '\n' ' ' | tr -s ' ' >"$BATS_TEST_TMPDIR/opts"
	# "  -v, --verbose  text" lines and their continuation lines, one option per line
	$K --help | awk '/^Options:/ { on = 1; next } on && /^$/ { exit }
		on && /^  -/ { if (o) print o; o = $0; next } on { o = o " " $0 } END { if (o) print o }' |
		tr -s ' ' >"$BATS_TEST_TMPDIR/help"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/help")" -ge 3 ]
	while read -r opt; do
		for o in $(grep -oE -- '--?[a-z][a-z-]*' <<<"$opt" | head -2); do
			grep -qF -- "$o" "$BATS_TEST_TMPDIR/opts" || { echo "OPTIONS: no $o"; false; }
		done
		# the text: what follows the option names
		text=$(sed -E 's/^ ?(-[a-z], )?--[a-z-]+ //' <<<"$opt")
		grep -qF -- "$text" "$BATS_TEST_TMPDIR/opts" || { echo "OPTIONS: not '$text'"; false; }
	done <"$BATS_TEST_TMPDIR/help"
}
