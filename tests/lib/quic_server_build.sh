#!/bin/bash
# Builds the QUIC-LB-aware QUIC server of the end-to-end tests: the gtlsserver example of
# Debian's ngtcp2 source package (`apt-get source ngtcp2`), with tests/lib/ngtcp2-quic-lb.patch
# applied to its connection-ID generation, linked against Debian's libngtcp2,
# libngtcp2-crypto-gnutls, libnghttp3, libev and GnuTLS of the same release.  The patched
# server encodes its server ID into every connection ID it issues (QUIC-LB), with the
# encoder of include/quic_lb_server.h, configured by the environment variable
# KEYROUTER_QUIC_LB (see tests/lib/ngtcp2_quic_lb.c).
#
#   tests/lib/quic_server_build.sh [OUT]     OUT: the build directory (default build)
#
# Prints the server's path.  The result is cached in OUT/quic-lb-server/: a second run
# with the same patch, glue, headers and source version only prints the path.  On a fresh
# machine it adds a deb-src entry for the Debian archive apt already uses (when apt has no
# source entry for ngtcp2), installs the build dependencies (scripts/deps.sh lists them),
# fetches the source and compiles the 10 files of the example (about 10 s on 2 cores).
set -eu
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=${1:-$ROOT/build}
case "$OUT" in /*) ;; *) OUT=$ROOT/$OUT ;; esac
DIR=$OUT/quic-lb-server
BIN=$DIR/gtlsserver
PATCH=$ROOT/tests/lib/ngtcp2-quic-lb.patch
GLUE=$ROOT/tests/lib/ngtcp2_quic_lb.c

die() { echo "quic_server_build: $*" >&2; exit 1; }

mkdir -p "$DIR"
# One build at a time (two test files may ask at once).
exec 9>"$DIR/.lock"
flock 9

for h in "$PATCH" "$GLUE"; do
	[ -r "$h" ] || die "missing $h"
done
# The project's headers the glue compiles in (include/quic_lb_server.h and what it
# includes): part of the cache key.
deps=$(gcc -MM -I"$ROOT/include" "$GLUE" 2>&1) || die "$GLUE: $deps"
mapfile -t HEADERS < <(tr ' \\' '\n\n' <<<"$deps" | grep '\.h$' | sort -u)
[ ${#HEADERS[@]} -gt 0 ] || die "$GLUE includes no project header"

# The library's Debian version: the source must be the same release (same headers, same
# ABI); it is what the client package (ngtcp2-client) was built from too.
srcver() { dpkg-query -W -f='${source:Version}' libngtcp2-dev 2>/dev/null || true; }

stamp() {
	{
		srcver
		cat "${BASH_SOURCE[0]}" "$PATCH" "$GLUE" "${HEADERS[@]}"
	} | sha256sum | cut -d' ' -f1
}

if [ -x "$BIN" ] && [ -s "$DIR/stamp" ] && [ "$(cat "$DIR/stamp")" = "$(stamp)" ]; then
	echo "$BIN"
	exit 0
fi

t0=$(date +%s.%N)
log=$DIR/build.log
: >"$log"

# Build dependencies (the example's own: C++ compiler, libngtcp2 and its GnuTLS crypto
# helper, nghttp3, libev, GnuTLS; dpkg-dev for apt-get source).
"$ROOT/scripts/deps.sh" >>"$log" 2>&1 || { cat "$log" >&2; die "scripts/deps.sh failed"; }
ver=$(srcver)
[ -n "$ver" ] || die "libngtcp2-dev is not installed (scripts/deps.sh)"

# apt update, retried while another apt holds the lists lock.
apt_update() {
	local _
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		apt-get update -qq >>"$log" 2>&1 && return 0
		sleep 3
	done
	return 1
}

# deb-src entries for the Debian archive(s) apt already uses: every enabled "deb" entry
# (deb822 .sources stanzas and one-line .list entries) whose URI is a Debian archive,
# repeated as "deb-src".  Written once, to a file of its own.
ensure_deb_src() {
	apt-cache showsrc ngtcp2 2>/dev/null | grep -q '^Package: ngtcp2$' && return 0
	local f=/etc/apt/sources.list.d/keyrouter-deb-src.sources l=/etc/apt/sources.list.d/keyrouter-deb-src.list
	local srcs=() s
	for s in /etc/apt/sources.list.d/*.sources; do
		[ -e "$s" ] && [ "$s" != "$f" ] && srcs+=("$s")
	done
	if [ ${#srcs[@]} -gt 0 ]; then
		awk 'function flush() {
			if (deb && debian && enabled) { print "Types: deb-src"; printf "%s", body; print "" }
			deb = debian = 0; enabled = 1; body = ""
		     }
		     BEGIN { enabled = 1 }
		     /^[ \t]*$/ { flush(); next }
		     /^#/ { next }
		     /^Types:/ { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1; next }
		     /^Enabled:/ { if (tolower($2) == "no") enabled = 0; next }
		     /^URIs:/ { if ($0 ~ /debian/) debian = 1 }
		     { body = body $0 "\n" }
		     END { flush() }' "${srcs[@]}" >"$f.new"
		if [ -s "$f.new" ]; then mv "$f.new" "$f"; else rm -f "$f.new"; fi
	fi
	local lists=()
	[ -e /etc/apt/sources.list ] && lists+=(/etc/apt/sources.list)
	for s in /etc/apt/sources.list.d/*.list; do
		[ -e "$s" ] && [ "$s" != "$l" ] && lists+=("$s")
	done
	if [ ${#lists[@]} -gt 0 ]; then
		awk '/^deb[ \t]/ && /debian/ { sub(/^deb/, "deb-src"); print }' "${lists[@]}" >"$l.new"
		if [ -s "$l.new" ]; then mv "$l.new" "$l"; else rm -f "$l.new"; fi
	fi
	[ -e "$f" ] || [ -e "$l" ] || die "no Debian archive among apt's sources to add deb-src for"
	echo "quic_server_build: added deb-src entries ($(ls "$f" "$l" 2>/dev/null | tr '\n' ' ')), apt-get update" >&2
	apt_update || die "apt-get update failed (see $log)"
	apt-cache showsrc ngtcp2 2>/dev/null | grep -q '^Package: ngtcp2$' ||
		die "apt knows no source package ngtcp2 after adding deb-src entries"
}
ensure_deb_src

# The source of the installed library's version (falls back to the archive's current one,
# which a security update may have replaced).
src=$DIR/src
rm -rf "$src" "$DIR/obj"
mkdir -p "$src" "$DIR/obj"
(cd "$src" && { apt-get source -qq "ngtcp2=$ver" || apt-get source -qq ngtcp2; }) >>"$log" 2>&1 ||
	{ tail -20 "$log" >&2; die "apt-get source ngtcp2 failed"; }
top=$(find "$src" -mindepth 1 -maxdepth 1 -type d -name 'ngtcp2-*' | head -1)
if [ -z "$top" ] || [ ! -f "$top/examples/server.cc" ]; then die "no examples/server.cc in the ngtcp2 source"; fi
patch -d "$top" -p1 --no-backup-if-mismatch <"$PATCH" >>"$log" 2>&1 ||
	{ tail -20 "$log" >&2; die "tests/lib/ngtcp2-quic-lb.patch does not apply to ngtcp2 $ver"; }

# What the package's configure finds on Linux (the example's sources test only these).
CXXFLAGS=(-std=c++20 -O2 -g0 -w -DENABLE_EXAMPLE_GNUTLS -DWITH_EXAMPLE_GNUTLS -DHAVE_ARPA_INET_H
	-DHAVE_ASM_TYPES_H -DHAVE_LINUX_NETLINK_H -DHAVE_LINUX_RTNETLINK_H -DHAVE_NETINET_IN_H
	-DHAVE_SYS_SOCKET_H -I"$top/third-party")
read -r -a PKGFLAGS <<<"$(pkg-config --cflags libngtcp2 libngtcp2_crypto_gnutls libnghttp3 gnutls)"
SRCS=(server.cc server_base.cc debug.cc util.cc util_gnutls.cc shared.cc http.cc
	tls_server_context_gnutls.cc tls_server_session_gnutls.cc tls_session_base_gnutls.cc)
jobs=$(nproc 2>/dev/null || echo 2)
pids=() fail=0
for f in "${SRCS[@]}"; do
	g++ "${CXXFLAGS[@]}" "${PKGFLAGS[@]}" -c "$top/examples/$f" -o "$DIR/obj/${f%.cc}.o" >>"$log" 2>&1 &
	pids+=($!)
	if [ ${#pids[@]} -ge "$jobs" ]; then
		wait "${pids[0]}" || fail=1
		pids=("${pids[@]:1}")
	fi
done
for p in "${pids[@]}"; do wait "$p" || fail=1; done
[ $fail = 0 ] || { grep -m20 -E 'error' "$log" >&2; die "compiling the example failed (see $log)"; }
gcc -O2 -w -c "$top/third-party/http-parser/http_parser.c" -o "$DIR/obj/http_parser.o" >>"$log" 2>&1 ||
	die "compiling http_parser.c failed (see $log)"
gcc -O2 -Wall -Wextra -std=gnu11 -I"$ROOT/include" -c "$GLUE" -o "$DIR/obj/ngtcp2_quic_lb.o" >>"$log" 2>&1 ||
	{ cat "$log" >&2; die "compiling $GLUE failed"; }
# shellcheck disable=SC2046
g++ -o "$BIN.new" "$DIR"/obj/*.o $(pkg-config --libs libngtcp2 libngtcp2_crypto_gnutls libnghttp3 gnutls) -lev \
	>>"$log" 2>&1 || { tail -20 "$log" >&2; die "linking failed"; }
mv "$BIN.new" "$BIN"
stamp >"$DIR/stamp"
t1=$(date +%s.%N)
echo "quic_server_build: built $BIN from ngtcp2 $ver in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s" >&2
echo "$BIN"
