// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Ring reports for `ring status`, `status`, `stats` (see ops_report.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include "analytics.h"
#include "json_out.h"
#include "ops_publish.h"
#include "ops_report.h"
#include "ops_hot.h"
#include "ring_sm.h"

void kr_ops_fmt_time(__u64 ns, char *buf, size_t len)
{
	time_t t = ns / 1000000000ull;
	struct tm tm;

	if (!ns || !gmtime_r(&t, &tm)) {
		snprintf(buf, len, "-");
		return;
	}
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void kr_ops_fmt_bytes(__u64 b, char *buf, size_t len)
{
	if (b >= 10ull << 20)
		snprintf(buf, len, "%.1f MiB", b / 1048576.0);
	else if (b >= 10ull << 10)
		snprintf(buf, len, "%.1f KiB", b / 1024.0);
	else
		snprintf(buf, len, "%llu B", (unsigned long long)b);
}

double kr_ops_slots_moved(const struct kr_ops_maps *m, __u32 id, const struct kr_ops_slot s[2],
			  bool recompute)
{
	uint64_t moved;

	/* the note ring stage wrote (kr_image_hdr.moved): no diff of two images per call */
	for (int k = 0; k < 2 && !recompute; k++)
		if (s[k].hdr.moved_vs && s[k].hdr.moved_vs == s[!k].hdr.generation)
			return (double)s[k].hdr.moved / (double)KR_AN_SPACE;
	if (kr_ops_slot_images_moved(m, id, &moved))
		return -1;
	return (double)moved / (double)KR_AN_SPACE;
}

/* The shared subsets of ring id: from the services that walk it with a subset_id. */
static void report_subsets(const struct kr_ops_maps *m, __u32 id, struct kr_ops_ring_report *r)
{
	struct kr_service_key k, *pk = NULL;
	struct kr_subset_key mk, *pmk = NULL;
	struct kr_service v;

	while (!bpf_map_get_next_key(m->services, pk, &k)) {
		__u32 i;

		pk = &k;
		if (bpf_map_lookup_elem(m->services, &k, &v) || v.ring_id != id || !v.subset_id)
			continue;
		for (i = 0; i < r->nsub && r->sub[i].id != v.subset_id; i++)
			;
		if (i == r->nsub) {
			if (r->nsub == sizeof(r->sub) / sizeof(r->sub[0]))
				continue;
			r->sub[r->nsub++].id = v.subset_id;
		}
		r->sub[i].services++;
	}
	while (m->members >= 0 && !bpf_map_get_next_key(m->members, pmk, &mk)) {
		pmk = &mk;
		for (__u32 i = 0; i < r->nsub; i++)
			r->sub[i].members += r->sub[i].id == mk.subset_id;
	}
}

int kr_ops_ring_report(struct kr_inst *in, const struct kr_ops_maps *m, __u32 id,
		       int with_diff, struct kr_ops_ring_report *r)
{
	int err;

	memset(r, 0, sizeof(*r));
	r->id = id;
	err = kr_ops_ring_get(in, id, &r->meta);
	if (!err)
		err = kr_ops_ctl_read(m, id, &r->ctl);
	for (__u32 s = 0; s < 2 && !err; s++) {
		struct kr_slot_stats st;

		err = kr_ops_slot_read(m, id, s, false, &r->slot[s]);
		if (!err && !kr_ops_percpu_sum(m, m->slot_stats, id * 2 + s, &st, sizeof(st)))
			r->st[s] = st;
		struct kr_slot_hot sh;

		if (!err && m->slot_hot >= 0 &&
		    !kr_ops_percpu_sum(m, m->slot_hot, id * 2 + s, &sh, sizeof(sh))) {
			r->spilled[s] = sh.spilled;
			r->replica[s] = sh.replica;
		}
	}
	if (!err && m->hot_keys >= 0) {
		struct kr_hot_ent *hk = NULL;

		kr_ops_hot_list(m, (int)id, &hk, &r->hot_keys);
		free(hk);
	}
	if (!err)
		report_subsets(m, id, r);
	if (!err && with_diff && r->slot[0].present && r->slot[1].present) {
		r->moved = kr_ops_slots_moved(m, id, r->slot,
					      with_diff == KR_REPORT_DIFF_RECOMPUTE);
		r->have_moved = r->moved >= 0;
	}
	return err;
}

void kr_ops_ring_report_free(struct kr_ops_ring_report *r)
{
	kr_ops_slot_free(&r->slot[0]);
	kr_ops_slot_free(&r->slot[1]);
}

void kr_ops_ring_report_text(FILE *f, const struct kr_ops_ring_report *r)
{
	__u32 active = kr_ctl_active(r->ctl);

	fprintf(f, "ring %s (id %u%s): %s, active slot %u, fraction %.7f%% on slot %u\n",
		r->meta.name, r->id, r->meta.flags & KR_RING_DEDICATED ? ", subset" : "",
		kr_sm_state_name(kr_ctl_state(r->ctl)), active,
		kr_frac_percent(kr_ctl_frac(r->ctl)), active ^ 1);
	for (__u32 s = 0; s < 2; s++) {
		const struct kr_ops_slot *sl = &r->slot[s];
		char t[32], mem[32];

		if (!sl->present) {
			fprintf(f, "  slot %u (%s): empty, packets %llu\n", s,
				s == active ? "active" : "standby", (unsigned long long)r->st[s].packets);
			continue;
		}
		kr_ops_fmt_time(sl->hdr.published_ns, t, sizeof(t));
		kr_ops_fmt_bytes(sl->memlock, mem, sizeof(mem));
		fprintf(f, "  slot %u (%s): digest %08x, %u points (+%u kept duplicates), %u "
			"backends, v%u pm %u, kernel memory %s, generation %llu, published %s, "
			"packets %llu\n", s, s == active ? "active" : "standby", sl->hdr.digest,
			sl->hdr.npoints - sl->hdr.ndups, sl->hdr.ndups, sl->hdr.nbackends,
			sl->hdr.ring_version, sl->hdr.point_multiple, mem,
			(unsigned long long)sl->hdr.generation, t, (unsigned long long)r->st[s].packets);
	}
	if (r->spilled[0] || r->spilled[1] || r->replica[0] || r->replica[1] || r->hot_keys)
		fprintf(f, "  spill and hot keys: packets spilled %llu, to a replica %llu; hot "
			"keys %u (QUIC keys take neither)\n",
			(unsigned long long)(r->spilled[0] + r->spilled[1]),
			(unsigned long long)(r->replica[0] + r->replica[1]), r->hot_keys);
	{
		const struct kr_slot_stats *a = &r->st[0], *b = &r->st[1];
		__u64 fo = a->failover + b->failover, nr = a->no_ring + b->no_ring,
		      bi = a->bad_image + b->bad_image, ad = a->all_down + b->all_down,
		      wl = a->walk_limit + b->walk_limit;

		if (fo || nr || bi || ad || wl)
			fprintf(f, "  failover walk: %llu packets routed past a down point; not "
				"routed (the service's no-route policy applied): no ring %llu, bad "
				"image %llu, all down %llu, walk limit %llu\n",
				(unsigned long long)fo, (unsigned long long)nr,
				(unsigned long long)bi, (unsigned long long)ad,
				(unsigned long long)wl);
	}
	if (r->have_moved)
		fprintf(f, "  key space owned differently by the two slots: %.4f%%\n",
			r->moved * 100.0);
	for (__u32 i = 0; i < r->nsub; i++)
		fprintf(f, "  shared subset %08x: %u members (kr_subset_members, both slots' "
			"ids), %u service%s\n", r->sub[i].id, r->sub[i].members,
			r->sub[i].services, r->sub[i].services == 1 ? "" : "s");
}

json_t *kr_ops_ring_report_json(const struct kr_ops_ring_report *r)
{
	json_t *o = json_pack("{s:s,s:I,s:b,s:s,s:I,s:I,s:f}", "name", r->meta.name, "id",
			      (json_int_t)r->id, "dedicated_subset_ring",
			      !!(r->meta.flags & KR_RING_DEDICATED), "state",
			      kr_sm_state_name(kr_ctl_state(r->ctl)), "active",
			      (json_int_t)kr_ctl_active(r->ctl), "fraction",
			      (json_int_t)kr_ctl_frac(r->ctl), "percent",
			      kr_frac_percent(kr_ctl_frac(r->ctl)));
	json_t *slots = json_array(), *subs = json_array();

	for (__u32 s = 0; s < 2; s++) {
		const struct kr_ops_slot *sl = &r->slot[s];
		const struct kr_image_hdr *h = &sl->hdr;
		json_t *j = json_pack("{s:I,s:b}", "slot", (json_int_t)s, "present", sl->present);
		char dg[9];

		if (sl->present) {
			snprintf(dg, sizeof(dg), "%08x", h->digest);
			json_object_update_new(j, json_pack(
				"{s:s,s:I,s:I,s:I,s:I,s:I,s:o,s:o}", "digest", dg, "points",
				(json_int_t)(h->npoints - h->ndups), "kept_duplicates",
				(json_int_t)h->ndups, "backends", (json_int_t)h->nbackends, "version",
				(json_int_t)h->ring_version, "point_multiple",
				(json_int_t)h->point_multiple, "memlock", kr_json_u64(sl->memlock),
				"generation", kr_json_u64(h->generation)));
			kr_json_set_time(j, "published", h->published_ns);
		}
		json_object_set_new(j, "packets", kr_json_u64(r->st[s].packets));
		json_object_set_new(j, "bytes", kr_json_u64(r->st[s].bytes));
		json_object_set_new(j, "failover", kr_json_u64(r->st[s].failover));
		json_object_set_new(j, "no_ring", kr_json_u64(r->st[s].no_ring));
		json_object_set_new(j, "bad_image", kr_json_u64(r->st[s].bad_image));
		json_object_set_new(j, "all_down", kr_json_u64(r->st[s].all_down));
		json_object_set_new(j, "walk_limit", kr_json_u64(r->st[s].walk_limit));
		json_object_set_new(j, "spilled", kr_json_u64(r->spilled[s]));
		json_object_set_new(j, "replica", kr_json_u64(r->replica[s]));
		json_array_append_new(slots, j);
	}
	json_object_set_new(o, "slots", slots);
	json_object_set_new(o, "hot_keys", json_integer(r->hot_keys));
	if (r->have_moved)
		json_object_set_new(o, "moved_share", json_real(r->moved));
	for (__u32 i = 0; i < r->nsub; i++)
		json_array_append_new(subs, json_pack("{s:I,s:I,s:I}", "subset_id",
						      (json_int_t)r->sub[i].id, "members",
						      (json_int_t)r->sub[i].members, "services",
						      (json_int_t)r->sub[i].services));
	json_object_set_new(o, "shared_subsets", subs);
	return o;
}

/* ---- shared subsets: memory saved ---------------------------------------------- */

/* Points of an image whose backend (global id) is a member of subset sid. */
static __u64 subset_points(const struct kr_ops_maps *m, const void *buf, __u32 sid)
{
	const struct kr_image_hdr *h = buf;
	const char *base = buf;
	const __u32 *bt = (const __u32 *)(base + kr_image_bt_off(h));
	const struct kr_point *pt = (const void *)(base + (size_t)h->pt_chunk * KR_CHUNK_BYTES);
	uint8_t *in = calloc(h->nbackends ? h->nbackends : 1, 1);
	__u64 n = 0;
	__u32 one;

	if (!in)
		return 0;
	for (__u32 b = 0; b < h->nbackends; b++) {
		struct kr_subset_key k = { .subset_id = sid, .backend_id = bt[b] };

		in[b] = !bpf_map_lookup_elem(m->members, &k, &one);
	}
	for (__u32 i = 0; i < h->npoints; i++)
		n += pt[i].backend < h->nbackends && in[pt[i].backend];
	free(in);
	return n;
}

/* Dedicated-ring estimate of subset sid on ring_id: the ring's memory x the subset's share
 * of its points (index and points scale with the points). */
static __u64 subset_dedicated(const struct kr_ops_maps *m, __u32 ring_id, __u32 sid)
{
	struct kr_ops_slot s = {};
	__u64 ctl = 0, est = 0, pts;
	size_t size = 0;
	void *buf = NULL;
	__u32 slot;

	if (kr_ops_ctl_read(m, ring_id, &ctl))
		return 0;
	slot = kr_ctl_active(ctl);
	if (kr_ops_slot_read(m, ring_id, slot, false, &s) || !s.present ||
	    kr_ops_slot_image(m, ring_id, slot, &buf, &size) || !s.hdr.npoints)
		goto out;
	pts = subset_points(m, buf, sid);
	est = (__u64)((double)s.memlock * pts / s.hdr.npoints);
out:
	free(buf);
	kr_ops_slot_free(&s);
	return est;
}

void kr_ops_subsets_report_text(FILE *f, const struct kr_ops_maps *m)
{
	struct kr_service_key k, *pk = NULL;
	__u32 sids[KR_MAX_SERVICES], nsid = 0;
	struct kr_subset_key mk, *pmk = NULL;
	__u64 dedicated = 0, members = 0, mem;
	struct kr_service v;
	char a[32], b[32];

	if (m->members < 0)
		return;
	while (!bpf_map_get_next_key(m->services, pk, &k) && nsid < KR_MAX_SERVICES) {
		bool seen = false;

		pk = &k;
		if (bpf_map_lookup_elem(m->services, &k, &v) || !v.subset_id)
			continue;
		for (__u32 i = 0; i < nsid && !seen; i++)
			seen = sids[i] == v.subset_id;
		if (seen)
			continue;
		sids[nsid++] = v.subset_id;
		dedicated += subset_dedicated(m, v.ring_id, v.subset_id);
	}
	while (!bpf_map_get_next_key(m->members, pmk, &mk)) {
		pmk = &mk;
		members++;
	}
	if (!nsid)
		return;
	mem = kr_ops_fd_memlock(m->members);
	kr_ops_fmt_bytes(dedicated, a, sizeof(a));
	kr_ops_fmt_bytes(mem, b, sizeof(b));
	fprintf(f, "subsets: %u sharing their rings (%llu members in kr_subset_members, %s); "
		"one dedicated ring each would take ~%s (estimate: ring memory x the subset's "
		"share of its points): ", nsid, (unsigned long long)members, b, a);
	kr_ops_fmt_bytes(dedicated > mem ? dedicated - mem : mem - dedicated, a, sizeof(a));
	fprintf(f, "%s %s\n", dedicated > mem ? "saved" : "costs", a);
}
