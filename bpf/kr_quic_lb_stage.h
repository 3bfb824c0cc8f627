/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The QUIC-LB stage of keyrouter.bpf.c (docs/quic.md): for a `quic` service with
 * KR_SVC_F_QUIC_LB, after the DCID was extracted (and hashed for the ring) and before the
 * ring stage.  A DCID whose config-rotation bits name one of the service's configurations
 * and that is long enough is decoded (include/kr_quic_lb.h: plaintext, single-pass or
 * four-pass AES-128 with T-tables in .rodata); a server ID of one of the service's
 * backends that is not down routes the packet to that backend with no ring lookup.
 * Anything else goes on to the ring on the DCID, counted by why (kr_qlb_stats).
 *
 * Header parsing is version-invariant (RFC 8999): first bit 1 = long header (any version,
 * version negotiation included), DCID length at octet 5, DCID from octet 6; first bit 0 =
 * short header, DCID from octet 1, its length is the configuration's (1 + server ID +
 * nonce octets are decoded; server-use octets after them are not needed).
 */
#ifndef KR_QUIC_LB_STAGE_H
#define KR_QUIC_LB_STAGE_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "kr_datapath_kern_user.h"
#include "kr_quic_lb_kern_user.h"
#include "kr_quic_lb_aes.h"
#include "kr_key.h"
#include "kr_backend_map.h"
#include "kr_key_trace.h"	/* kr_cfg_trace: the stage traces too */

/* QUIC-LB configurations: qlb_id * 8 + config rotation.  Written by the tool (apply). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KR_QLB_MAX_SERVICES * KR_QLB_CONF_SLOTS);
	__type(key, __u32);
	__type(value, struct kr_qlb_conf);
} KR_MAP_NAME_QLB_CONFIGS SEC(".maps");

/* Server IDs: (qlb_id, rotation, server ID) -> global backend id.  Written by apply. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KR_QLB_MAX_SERVERS);
	__type(key, struct kr_qlb_sid_key);
	__type(value, struct kr_qlb_sid_val);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} KR_MAP_NAME_QLB_SERVERS SEC(".maps");

/* Outcomes per QUIC-LB id.  Written by the programs; read by `status`. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KR_QLB_MAX_SERVICES);
	__type(key, __u32);
	__type(value, struct kr_qlb_counters);
} KR_MAP_NAME_QLB_STATS SEC(".maps");

/* Per-CPU work buffers of the codec and the server-ID lookup key.  Programs only. */
struct kr_qlb_scratch {
	struct kr_qlb_work w;
	struct kr_qlb_sid_key k;
	__u8 pad[4];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kr_qlb_scratch);
} KR_MAP_NAME_QLB_SCRATCH_BUF SEC(".maps");

/* With kr_cfg_trace: the last decode (quic-lb decode --via-kernel). */
struct kr_qlb_trace kr_qlb_trace_last = {};

/*
 * The stage, a global function (verified once).  win: the payload window (wlen valid
 * octets, the UDP payload is pl_len long); svc_word = qlb_id | qlb_tag << 16.  Returns
 * the outcome (enum kr_qlb_outcome); with KR_QLB_ROUTED the backend id is in
 * out->backend_id.
 */
__noinline int kr_quic_lb(const struct kr_scratch *s, __u32 wlen, __u32 svc_word,
			  struct kr_route *out)
{
	__u32 qlb_id = svc_word & 0xffff, tag = svc_word >> 16, zero = 0, start, len, need, cr = 0, i;
	const struct kr_qlb_sid_val *sv;
	const struct kr_backend *be;
	const struct kr_qlb_conf *c;
	struct kr_qlb_counters *cnt;
	struct kr_qlb_scratch *x;
	int outcome, rc = -1;

	if (!s || !out || qlb_id >= KR_QLB_MAX_SERVICES || wlen > KR_PAYLOAD_WINDOW)
		return KR_QLB_FB_UNKNOWN_CONFIG;
	x = bpf_map_lookup_elem(&kr_qlb_scratch_buf, &zero);
	if (!x)
		return KR_QLB_FB_UNKNOWN_CONFIG;
	/* the extractor found a DCID, so wlen >= 2 (short) or >= 7 (long) */
	if (s->win[0] & 0x80) {
		start = 6;
		len = s->win[5];
	} else {
		start = 1;
		len = wlen - 1;
		if (len > KR_QLB_MAX_CID_LEN)
			len = KR_QLB_MAX_CID_LEN;
	}
	if (wlen < start + 1) {
		outcome = KR_QLB_FB_TOO_SHORT;
		goto done;
	}
	cr = kr_qlb_config_rotation(KR_WIN(s, start));
	x->k.cr = cr;
	x->k.sid_len = 0;
	if (cr == KR_QLB_CR_UNROUTABLE) {
		outcome = KR_QLB_FB_UNROUTABLE;
		goto done;
	}
	c = bpf_map_lookup_elem(&kr_qlb_configs, &(__u32){ kr_qlb_conf_index(qlb_id, cr) });
	if (!c || !c->valid || c->tag != tag) {
		outcome = KR_QLB_FB_UNKNOWN_CONFIG;
		goto done;
	}
	if (len > KR_QLB_MAX_CID_LEN) {
		outcome = KR_QLB_FB_TOO_LONG;
		goto done;
	}
	need = kr_qlb_min_cid(c);
	if (len < need || start + need > wlen) {
		outcome = KR_QLB_FB_TOO_SHORT;
		goto done;
	}
	for (i = 0; i < KR_QLB_MAX_CID_LEN; i++)
		x->w.cid[i] = i < need ? KR_WIN(s, start + i) : 0;
	rc = kr_qlb_decode(c, &x->w, need);
	if (rc != KR_QLB_OK) {
		outcome = rc == KR_QLB_TOO_SHORT ? KR_QLB_FB_TOO_SHORT : KR_QLB_FB_UNKNOWN_CONFIG;
		goto done;
	}
	x->k.qlb_id = qlb_id;
	x->k.sid_len = c->sid_len;
	for (i = 0; i < 16; i++)
		x->k.sid[i] = i < c->sid_len ? x->w.pt[i] : 0;
	sv = bpf_map_lookup_elem(&kr_qlb_servers, &x->k);
	if (!sv || sv->tag != tag) {
		outcome = KR_QLB_FB_UNKNOWN_SID;
		goto done;
	}
	be = bpf_map_lookup_elem(&kr_backends, &(__u32){ sv->backend_id });
	/* drain keeps its connections: only new keys avoid it, and a CID is an old one */
	if (!be || be->state == KR_BACKEND_DOWN || be->state == KR_BACKEND_UNUSED) {
		outcome = KR_QLB_FB_BACKEND_DOWN;
		goto done;
	}
	out->backend_id = sv->backend_id;
	out->walk = 0;
	out->image_index = 0;
	out->first_index = 0;
	outcome = KR_QLB_ROUTED;
done:
	cnt = bpf_map_lookup_elem(&kr_qlb_stats, &qlb_id);
	if (cnt) {
		cnt->n[outcome & 7]++;
		if (outcome == KR_QLB_ROUTED)
			cnt->routed_cr[cr & 7]++;
	}
	if (kr_cfg_trace) {
		kr_qlb_trace_last.seq++;
		kr_qlb_trace_last.outcome = outcome;
		kr_qlb_trace_last.decode_rc = rc;
		kr_qlb_trace_last.backend_id = outcome == KR_QLB_ROUTED ? out->backend_id : 0;
		kr_qlb_trace_last.cr = x->k.cr;
		kr_qlb_trace_last.sid_len = x->k.sid_len;
		for (i = 0; i < 16; i++)
			kr_qlb_trace_last.sid[i] = x->k.sid[i];
	}
	return outcome;
}

#endif /* KR_QUIC_LB_STAGE_H */
