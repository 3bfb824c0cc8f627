#!/bin/bash
# Generate the man pages from their sources, so they cannot drift from the tool:
#   keyrouter(8)       man/keyrouter.8.md + every command's own `keyrouter CMD --help`
#                      (the command list is `keyrouter --help`'s)
#   keyrouter.json(5)  man/keyrouter.json.5.md + docs/config.md (the configuration reference)
# through go-md2man (Debian's go-md2man).
#   scripts/man.sh KEYROUTER OUTDIR     -> OUTDIR/keyrouter.8, OUTDIR/keyrouter.json.5
set -euo pipefail
cd "$(dirname "$0")/.."
kr=$1 out=$2
mkdir -p "$out"
command -v go-md2man >/dev/null || { echo "man.sh: go-md2man missing (apt-get install go-md2man)" >&2; exit 1; }
version=$("$kr" version | awk '{ print $2 }')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the commands: the lines of `keyrouter --help` between "Commands:" and the next blank line
"$kr" --help | awk '/^Commands:/ { on = 1; next } on && /^$/ { exit }
	on { line = $0; sub(/^  /, "", line); n = index(line, "  "); print substr(line, 1, n - 1) "\t" substr(line, n) }' |
	sed 's/\t */\t/' >"$tmp/cmds"
[ -s "$tmp/cmds" ] || { echo "man.sh: no commands in '$kr --help'" >&2; exit 1; }
while IFS=$'\t' read -r cmd summary; do
	printf '## keyrouter %s\n%s\n\n' "$cmd" "$summary"
	# shellcheck disable=SC2086
	"$kr" $cmd --help | sed 's/^/    /'
	printf '\n'
done <"$tmp/cmds" >"$tmp/commands.md"

# @COMMANDS@ / @CONFIG@ replaced by the generated text; @VERSION@ by the version
awk -v f="$tmp/commands.md" '$0 == "@COMMANDS@" { while ((getline l < f) > 0) print l; next } { print }' \
	man/keyrouter.8.md | sed "s/@VERSION@/$version/" >"$tmp/keyrouter.8.md"
# docs/config.md without its title, its sections one level up; links shown as text
sed '1{/^# /d}' docs/config.md | sed 's/^##/#/; s/\[\([^]]*\)\]([^)]*)/\1/g' >"$tmp/config.md"
awk -v f="$tmp/config.md" '$0 == "@CONFIG@" { while ((getline l < f) > 0) print l; next } { print }' \
	man/keyrouter.json.5.md | sed "s/@VERSION@/$version/" >"$tmp/keyrouter.json.5.md"
go-md2man -in "$tmp/keyrouter.8.md" -out "$out/keyrouter.8"
go-md2man -in "$tmp/keyrouter.json.5.md" -out "$out/keyrouter.json.5"
