#!/bin/bash
# `make mutate`: a mutation check of the test suite (not part of `make test`).
# Applies each small deliberate bug of the list below -- in the parser, the key extractors,
# the CRC-32, the ring lookup, the failover walk, the slot choice, the forwarding, the
# QUIC-LB stage and codec -- one at a time to a scratch copy of the tree, rebuilds, runs the
# tests named for it, and reports which tests kill it (fail).  Every mutation must be
# killed: the script exits 1 when one survives (or no longer applies: the list must follow
# the code).  A mutation must change behaviour: one that only removes a guard another
# guard makes redundant (e.g. QUIC's "start + len > pl_len" next to "> wlen",
# wlen <= pl_len) cannot be killed and does not belong in the list.
#   scripts/mutate.sh [NAME...]     only the named mutations
#   KEEP=1                          keep the scratch copy (/tmp/kr-mutate.PID)
#   ALL=1                           run every test named for a mutation, not only until
#                                   the first one that kills it
# Prints one line per mutation (the tests that killed it), then
# "mutation score: K/N killed".
set -u
cd "$(dirname "$0")/.."
OUT=build
scratch=/tmp/kr-mutate.$$
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$scratch"' EXIT

# name ~~ file ~~ tests (run.sh patterns) ~~ old text ~~ new text  ({T} tab, {N} newline;
# the old text must occur exactly once in the file)
mutations=$(cat <<'EOF'
parse-vlan-one ~~ include/kr_parse.h ~~ test_oracle test_parity test_packets test_packet_fuzz ~~ for (i = 0; i < KR_MAX_VLANS; i++) { ~~ for (i = 0; i < KR_MAX_VLANS - 1; i++) {
parse-ipv4-ihl ~~ include/kr_parse.h ~~ test_oracle test_parity test_packets test_packet_fuzz ~~ ihl = (__u32)(ip[0] & 0x0f) * 4; ~~ ihl = 20;
parse-ipv4-first-fragment ~~ include/kr_parse.h ~~ test_oracle test_parity test_packets test_packet_fuzz ~~ if (frag & 0x1fff) ~~ if (frag & 0x3fff)
parse-ipv4-total-length ~~ include/kr_parse.h ~~ test_oracle test_parity test_packets test_packet_fuzz ~~ pkt->l3_off + tot > kr_frame_len(c)) ~~ pkt->l3_off + tot > kr_frame_len(c) + 4)
parse-ipv6-fragment ~~ include/kr_parse.h ~~ test_oracle test_parity test_packets test_packet_fuzz ~~ if (KR_BE16(h + 2) & 0xfff8) ~~ if (KR_BE16(h + 2) & 0xfff0)
parse-ipv6-ext-length ~~ include/kr_parse.h ~~ test_oracle test_parity test_packets test_packet_fuzz ~~ *off += ((__u32)h[1] + 1) * 8; ~~ *off += ((__u32)h[1] + 1) * 8 - 8 * (h[1] > 1);
parse-ipv6-ext-count ~~ include/kr_datapath_kern_user.h ~~ test_oracle test_parity test_packets test_packet_fuzz ~~ #define KR_MAX_IPV6_EXT{T}{T}8 ~~ #define KR_MAX_IPV6_EXT{T}{T}7
parse-udp-length ~~ include/kr_parse.h ~~ test_oracle test_parity test_packets test_packet_fuzz ~~ pkt->pl_len = ulen - KR_UDP_HLEN; ~~ pkt->pl_len = l3_end - pkt->pl_off;
dns-lowercase ~~ include/kr_key.h ~~ test_oracle test_parity test_packets test_packet_fuzz ~~ b += 'a' - 'A'; ~~ b += 0;
dns-label-63 ~~ include/kr_key.h ~~ test_oracle test_parity test_packets test_packet_fuzz ~~ if (b > 63){N}{T}{T}{T}{T}return KR_KEY_NOT_FOUND; ~~ if (b > 64){N}{T}{T}{T}{T}return KR_KEY_NOT_FOUND;
dns-response ~~ include/kr_key.h ~~ test_oracle test_parity test_packets test_packet_fuzz ~~ (s->win[2] & 0x80) ~~ (s->win[2] & 0x40)
dns-too-long ~~ include/kr_key.h ~~ test_oracle test_parity test_packets test_packet_fuzz ~~ {T}{T}if (i >= KR_MAX_KEY_LEN){N}{T}{T}{T}return KR_KEY_TOO_LONG;{N}{T}{T}b = KR_WIN(s, pos); ~~ {T}{T}if (i > KR_MAX_KEY_LEN){N}{T}{T}{T}return KR_KEY_TOO_LONG;{N}{T}{T}b = KR_WIN(s, pos);
memcache-gat-skip ~~ include/kr_key.h ~~ test_oracle test_parity test_packets test_packet_fuzz ~~ {T}{T}return 1;{N}{T}default:{N}{T}{T}return -1; ~~ {T}{T}return 0;{N}{T}default:{N}{T}{T}return -1;
memcache-tab ~~ include/kr_key.h ~~ test_oracle test_parity test_packets test_packet_fuzz ~~ return b == ' ' || b == '\t';{N}} ~~ return b == ' ';{N}}
memcache-key-end-cr ~~ include/kr_key.h ~~ test_oracle test_parity test_packets test_packet_fuzz ~~ return b == ' ' || b == '\t' || b == '\r' || b == '\n'; ~~ return b == ' ' || b == '\t' || b == '\n';
memcache-stride-separators ~~ include/kr_key.h ~~ test_oracle test_parity test_packets test_packet_fuzz ~~ sc->adv += 7;{T}{T}/* 8 separators in one step */ ~~ sc->adv += 8;{T}{T}/* 8 separators in one step */
memcache-stride-key ~~ include/kr_key.h ~~ test_oracle test_parity test_packets test_packet_fuzz ~~ sc->klen = k + 8; ~~ sc->klen = k + 7;
memcache-nul-command ~~ include/kr_key.h ~~ test_oracle test_parity test_packets test_packet_fuzz ~~ if (kr_mc_is_end(b) || b == 0 || i == 15) ~~ if (kr_mc_is_end(b) || i == 15)
quic-short-dcid-offset ~~ include/kr_key.h ~~ test_oracle test_parity test_packets test_packet_fuzz ~~ __u32 start = 1, len = svc->quic_cid_len; ~~ __u32 start = 2, len = svc->quic_cid_len;
quic-long-dcid-length ~~ include/kr_key.h ~~ test_oracle test_parity test_packets test_packet_fuzz ~~ len = s->win[5]; ~~ len = s->win[5] & 0x7f;
quic-empty-dcid ~~ include/kr_key.h ~~ test_oracle test_parity test_packets test_packet_fuzz ~~ if (len == 0 || start + len > wlen || start + len > pkt->pl_len) ~~ if (start + len > wlen || start + len > pkt->pl_len)
payload-delimiter-first ~~ include/kr_key.h ~~ test_oracle test_parity test_packets test_packet_fuzz ~~ if (b == delim) { ~~ if (b == delim && i > 0) {
payload-length-past-end ~~ include/kr_key.h ~~ test_oracle test_parity test_packets test_packet_fuzz ~~ if (o + l > pkt->pl_len) ~~ if (o + l > pkt->pl_len + 1)
tuple-port ~~ include/kr_key.h ~~ test_oracle test_parity test_packets test_packet_fuzz ~~ KR_KEY(s, (n + 1)) = pkt->sport[1]; ~~ KR_KEY(s, (n + 1)) = pkt->dport[1];
crc-step-bytes ~~ include/kr_crc32.h ~~ test_oracle test_hash_bpf test_parity test_packet_fuzz ~~ KR_CRC_T(3, (w >> 30) & 0x3fc) ^ KR_CRC_T(2, (w >> 38) & 0x3fc) ^ ~~ KR_CRC_T(3, (w >> 38) & 0x3fc) ^ KR_CRC_T(2, (w >> 30) & 0x3fc) ^
crc-tail ~~ include/kr_crc32.h ~~ test_oracle test_hash_bpf test_parity test_packet_fuzz ~~ for (j = 0; j < 7; j++) { ~~ for (j = 0; j < 6; j++) {
crc-table-entry ~~ include/kr_crc32.h ~~ test_oracle test_hash_bpf test_parity test_packet_fuzz ~~ 0xeae10678u, 0x264b06e6u, ~~ 0xeae10678u, 0x264b06e7u,
lookup-window-count ~~ include/kr_lookup.h ~~ test_ring test_image test_packet_fuzz test_oracle ~~ {T}*out = a + c;{N} ~~ {T}*out = a + c + (c == 1);{N}
lookup-second-window-gap ~~ include/kr_lookup.h ~~ test_ring test_image test_packet_fuzz test_oracle ~~ {T}{T}a += w1;{N} ~~ {T}{T}a += w1 + 1;{N}
lookup-window-cut-side ~~ include/kr_lookup.h ~~ test_ring test_image test_packet_fuzz test_oracle ~~ {T}{T}{T}w1 = ce - a;{N} ~~ {T}{T}{T}w1 = ce - a - 1;{N}
lookup-contiguous-last-chunk ~~ include/kr_lookup.h ~~ sanitizers ~~ {T}if (hdr->pt_chunk + (a >> KR_PTS_SHIFT) + 1 < hdr->nchunks){N} ~~ {T}if (hdr->pt_chunk + (a >> KR_PTS_SHIFT) < hdr->nchunks){N}
lookup-upper-bound ~~ include/kr_lookup.h ~~ test_ring test_image test_packet_fuzz test_oracle ~~ return b + kr_lt_bit(kr_chunk_hash(pts, base + b), h); ~~ return b + kr_lt_bit(kr_chunk_hash(pts, base + b), h + 1);
ring-subset-own-point ~~ bpf/kr_ring.h ~~ test_ring test_packet_fuzz test_oracle ~~ if (!out->subset.subset_id && kr_backend_id_up(&id)) { ~~ if (kr_backend_id_up(&id)) {
walk-one-short ~~ bpf/kr_ring.h ~~ test_ring test_packet_fuzz test_oracle ~~ {T}for (i = 1; i <= KR_MAX_WALK; i++) { ~~ {T}for (i = 1; i < KR_MAX_WALK; i++) {
slot-mix ~~ include/kr_image_kern_user.h ~~ test_ring test_packet_fuzz ops_swap ~~ {T}h *= 0x85ebca6bu; ~~ {T}h *= 0x85ebca6du;
slot-active-ignored ~~ include/kr_image_kern_user.h ~~ test_ring test_packet_fuzz ops_swap ~~ {T}__u32 slot = kr_ctl_active(ctl); ~~ {T}__u32 slot = 0;
fwd-l2-source-mac ~~ bpf/kr_fwd.h ~~ test_packets test_oracle test_packet_fuzz ~~ kr_mac_put(data + 6, data);{T}/* we were the destination */ ~~ ;{T}/* we were the destination */
qlb-too-short-off-by-one ~~ bpf/kr_quic_lb_stage.h ~~ test_oracle test_quic_lb_packets ~~ if (len < need || start + need > wlen) { ~~ if (len + 1 < need || start + need > wlen + 1) {
qlb-route-down-backend ~~ bpf/kr_quic_lb_stage.h ~~ test_oracle test_quic_lb_packets ~~ if (!be || be->state == KR_BACKEND_DOWN || be->state == KR_BACKEND_UNUSED) { ~~ if (!be || be->state == KR_BACKEND_UNUSED) {
qlb-drain-falls-back ~~ bpf/kr_quic_lb_stage.h ~~ test_oracle test_quic_lb_packets ~~ if (!be || be->state == KR_BACKEND_DOWN || be->state == KR_BACKEND_UNUSED) { ~~ if (!be || be->state != KR_BACKEND_UP) {
qlb-too-long-bound ~~ bpf/kr_quic_lb_stage.h ~~ test_oracle test_quic_lb_packets ~~ if (len > KR_QLB_MAX_CID_LEN) {{N}{T}{T}outcome = KR_QLB_FB_TOO_LONG; ~~ if (len > KR_QLB_MAX_CID_LEN + 1) {{N}{T}{T}outcome = KR_QLB_FB_TOO_LONG;
qlb-unroutable-rotation ~~ bpf/kr_quic_lb_stage.h ~~ test_oracle test_quic_lb_packets ~~ if (cr == KR_QLB_CR_UNROUTABLE) { ~~ if (cr == KR_QLB_CR_UNROUTABLE && wlen > KR_PAYLOAD_WINDOW) {
qlb-four-pass-decode-rounds ~~ include/kr_quic_lb.h ~~ test_oracle test_quic_lb_packets test_quic_lb ~~ {T}{T}kr_qlb_round(c, w, 3, plen);{N}{T}{T}kr_qlb_round(c, w, 2, plen);{N}{T}{T}if ~~ {T}{T}kr_qlb_round(c, w, 3, plen);{N}{T}{T}if
EOF
)

names=("$@")
want() { # name: is it selected?
	[ ${#names[@]} = 0 ] && return 0
	local n
	for n in "${names[@]}"; do [ "$n" = "$1" ] && return 0; done
	return 1
}

main() {
echo "mutate: scratch copy $scratch"
mkdir -p "$scratch/src" "$scratch/orig"
# the tree as it is (tracked and new files): a pristine copy to restore each file from, and
# the copy that is mutated, with the current build to start from
git ls-files -co --exclude-standard -z | tar --null -T - -cf "$scratch/tree.tar"
tar -xf "$scratch/tree.tar" -C "$scratch/src"
tar -xf "$scratch/tree.tar" -C "$scratch/orig"
[ -d "$OUT" ] && cp -a "$OUT" "$scratch/src/$OUT"
root=$scratch/orig
cd "$scratch/src" || exit 1
if ! make -s -j2 all > "$scratch/build.log" 2>&1; then
	echo "mutate: the unmutated tree does not build (see $scratch/build.log)"
	KEEP=1
	exit 1
fi

killed=0 total=0 bad=0
while IFS= read -r line; do
	[ -n "$line" ] || continue
	name=${line%% ~~ *}; line=${line#* ~~ }
	file=${line%% ~~ *}; line=${line#* ~~ }
	tests=${line%% ~~ *}; line=${line#* ~~ }
	old=${line%% ~~ *}; new=${line#* ~~ }
	want "$name" || continue
	total=$((total + 1))
	cp "$root/$file" "$file"
	if ! /usr/bin/python3 - "$file" "$old" "$new" <<'PY'
import sys
path, old, new = sys.argv[1:]
dec = lambda s: s.replace('{N}', '\n').replace('{T}', '\t')
old, new = dec(old), dec(new)
text = open(path).read()
if text.count(old) != 1:
    sys.exit("%d matches" % text.count(old))
open(path, "w").write(text.replace(old, new))
PY
	then
		printf '%-28s NOT APPLIED (%s no longer holds the text: fix the list)\n' "$name" "$file"
		bad=$((bad + 1))
		continue
	fi
	# what the tests need: the BPF objects, the tool (bats) and the test programs named
	targets="$(ls bpf/*.bpf.c | sed "s|^bpf/\(.*\)\.c$|$OUT/bpf/\1.o|")"
	targets="$targets $(ls tests/bpf/progs/*.bpf.c | sed "s|^tests/bpf/progs/\(.*\)\.c$|$OUT/tests/progs/\1.o|")"
	targets="$targets $OUT/keyrouter"
	for t in $tests; do [ -f "tests/bpf/$t.c" ] || [ -f "tests/unit/$t.c" ] && targets="$targets $OUT/tests/$t"; done
	if ! make -s -j2 $targets > "$scratch/$name.build" 2>&1; then
		printf '%-28s DOES NOT BUILD (see %s)\n' "$name" "$scratch/$name.build"
		bad=$((bad + 1))
		cp "$root/$file" "$file"
		continue
	fi
	# the tests in order, until one fails (ALL=1: every one, to see who else kills it)
	by=()
	for t in $tests; do
		if ! TESTS=$t tests/run.sh > "$scratch/$name.$t.log" 2>&1; then
			by+=("$t")
			[ "${ALL:-0}" = 1 ] || break
		fi
	done
	cp "$root/$file" "$file"
	if [ ${#by[@]} -gt 0 ]; then
		killed=$((killed + 1))
		printf '%-28s killed by %s\n' "$name" "$(IFS=,; echo "${by[*]}")"
	else
		printf '%-28s SURVIVED %s\n' "$name" "$tests"
	fi
done <<< "$mutations"
# leave the scratch build matching the tree again (for KEEP=1)
make -s -j2 all > /dev/null 2>&1
echo "mutation score: $killed/$total killed"
[ "$killed" = "$total" ] && [ "$bad" = 0 ]
}

# (one function, read whole before it runs, and the call and the exit on one line: editing
# this file while it runs changes nothing)
main "$@"; exit $?
