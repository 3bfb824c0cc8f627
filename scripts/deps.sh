#!/bin/bash
# Install the Debian packages keyrouter's build, tests, benchmarks and demo need, when missing.
# Idempotent and quiet when everything is there.  Set KR_NO_APT=1 to only report.
set -eu
pkgs=(
	make gcc clang llvm pkg-config nettle-dev
	libbpf-dev libxdp-dev xdp-tools bpftool libelf-dev zlib1g-dev libjansson-dev libmicrohttpd-dev
	bats bats-assert bats-support
	iproute2 jq
	# end-to-end peers
	knot-dnsutils dnsutils unbound dnsperf memcached ngtcp2-client ngtcp2-server
	# the peers of the peer benchmark (scripts/bench.d/peers.sh, tests/bats/peers.bats)
	dnsdist nginx libnginx-mod-stream nftables conntrack
	# BGP: the routers' and the upstream's BIRD of tests/bats/e2e_bgp.bats (keyrouter announce)
	bird2
	# the QUIC-LB server of the end-to-end tests: ngtcp2's example server from Debian's
	# source package, built against Debian's libraries (tests/lib/quic_server_build.sh)
	g++ dpkg-dev patch libngtcp2-dev libngtcp2-crypto-gnutls-dev libnghttp3-dev libev-dev
	libgnutls28-dev python3-cryptography
	ethtool openssl python3
	# packaging (make deb, tests/bats/deb.bats), man pages, units, metrics tests
	debhelper dpkg-dev lintian go-md2man man-db systemd bash-completion strace psmisc curl
	# independent packet dissector of the oracle test (tests/oracle)
	python3-scapy
	# sanitizers, fuzzing, leak checks
	libclang-rt-14-dev valgrind
)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "${KR_NO_APT:-0}" = 1 ]; then
	echo "deps: missing packages: ${missing[*]}" >&2
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages: ${missing[*]} (run as root, or: sudo apt-get install ${missing[*]})" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
stamp=/var/lib/apt/periodic/update-success-stamp
if [ ! -d /var/lib/apt/lists ] || [ -z "$(ls /var/lib/apt/lists 2>/dev/null | grep -v -e lock -e partial)" ] || [ "${KR_APT_UPDATE:-1}" = 1 ]; then
	apt-get update -qq || { echo "deps: apt-get update failed" >&2; exit 1; }
fi
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || {
	echo "deps: apt-get install ${missing[*]} failed" >&2; exit 1; }
