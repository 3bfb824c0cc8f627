#!/bin/bash
# Print the path of a promtool binary (or, `promtool.sh prometheus`, of the Prometheus
# server), fetching it when needed: the one on PATH, else build/tools/NAME, extracted
# (dpkg -x) from Debian's `prometheus` package downloaded with `apt-get download` -- only
# the binary is kept, nothing is installed (no unit, no user, nothing started).
# Cached under build/tools/ (OUT=... moves it).  Tests call it; so may anyone.
set -eu
cd "$(dirname "$0")/.."
OUT=${OUT:-build}
name=${1:-promtool}
case "$name" in promtool|prometheus) ;; *) echo "promtool.sh: promtool or prometheus, not '$name'" >&2; exit 2 ;; esac
if command -v "$name" >/dev/null 2>&1; then
	command -v "$name"
	exit 0
fi
bin=$OUT/tools/$name
if [ ! -x "$bin" ]; then
	mkdir -p "$OUT/tools"
	tmp=$(mktemp -d "$OUT/tools/promtool.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	if ! (cd "$tmp" && apt-get download -qq prometheus >/dev/null 2>&1); then
		# the package lists may be missing on a fresh machine
		apt-get update -qq >/dev/null 2>&1 || true
		(cd "$tmp" && apt-get download -qq prometheus >/dev/null) || {
			echo "promtool.sh: apt-get download prometheus failed" >&2; exit 1; }
	fi
	dpkg -x "$tmp"/prometheus_*.deb "$tmp/x"
	[ -x "$tmp/x/usr/bin/$name" ] || { echo "promtool.sh: no usr/bin/$name in the package" >&2; exit 1; }
	mv "$tmp/x/usr/bin/$name" "$bin.new" && mv "$bin.new" "$bin"
fi
echo "$(pwd)/$bin"
