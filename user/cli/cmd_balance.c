// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * keyrouter balance: the bounded-load controller of one ring (docs/operations.md "Hot
 * keys: spill and replicas").  Each round it takes the view `keyrouter top` computes
 * (top_view.c: the backends' packets between two rounds, the ring's active image, the
 * hottest keys from the sampled trace), hands it to the controller's arithmetic
 * (user/core/balance.c) and, by mode, prints what it would do (advise) or also publishes
 * it (on): one write of each changed backend's kr_backends entry (its spill), and the
 * replica entries of kr_hot_keys it manages.  off takes back everything it manages.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <jansson.h>
#include "balance.h"
#include "cmd.h"
#include "keyform.h"
#include "log.h"
#include "ops.h"
#include "ops_backends.h"
#include "ops_hot.h"
#include "ops_find.h"
#include "spill_price.h"
#include "ops_kernel.h"
#include "opts.h"
#include "top_view.h"
#include "trace_out.h"
#include "util.h"

static const char usage_text[] =
	"Usage: keyrouter balance --ring NAME [--mode off|advise|on] [--bound C]\n"
	"                         [--hysteresis H] [--max-step F] [--interval S]\n"
	"                         [--rounds N | --once] [--sample N] [--no-replicas]\n"
	"                         [--min-packets N] [--json] [--instance NAME | --pin-dir DIR]\n\n"
	"The bounded-load controller of one ring: it keeps every backend under C x its\n"
	"weighted fair share of the ring's real traffic. Every interval it reads each\n"
	"backend's packets (kr_backend_stats) and the hottest keys (the sampled decision\n"
	"trace, as `keyrouter top`), then computes the spill fractions (a fixed subset of an\n"
	"overloaded backend's keys walks on to the backends after it on the ring) and the\n"
	"hot-key replicas (a key above (C - 1) x its backend's share is spread over several\n"
	"backends) that bring every backend under the bound while moving as few keys as it\n"
	"can. Backends whose spill the configuration or an operator set (`backend set\n"
	"--spill`) are left alone, as are replicas it did not add.\n\n"
	"  -r, --ring NAME      the ring to balance (required)\n"
	"  -m, --mode MODE      advise (default): print what it would do, the backends'\n"
	"                       loads before and after and the share of keys that would\n"
	"                       move, and publish nothing; on: publish it too; off: set the\n"
	"                       spill it manages back to 0 and remove the replicas it added\n"
	"                       (every key goes back to its backend), then exit\n"
	"  -C, --bound C        every backend under C x its fair share (default 1.25)\n"
	"  -H, --hysteresis H   spill rises when a backend would pass C - H, falls only when\n"
	"                       it would stay under C - 3H, and lands at C - 2H: a margin H\n"
	"                       under the bound for the measurement's noise (default 0.05;\n"
	"                       0 <= 3H < C - 1)\n"
	"  -S, --max-step F     the largest change of a backend's spill per round (default\n"
	"                       0.25, 0 < F <= 1)\n"
	"  -I, --interval S     seconds between rounds (default 5)\n"
	"  -R, --rounds N       stop after N rounds (default: until interrupted)\n"
	"  -1, --once           one round (--rounds 1)\n"
	"  -n, --sample N       trace 1 in N packets for the hot keys (default 100)\n"
	"      --no-replicas    propose no replicas (spill only; no trace)\n"
	"      --min-packets N  rounds with fewer packets change nothing (default 200)\n"
	"  -j, --json           one JSON object per round\n"
	"  -i, --instance NAME  pins under /sys/fs/bpf/keyrouter/NAME (default \"default\")\n"
	"  -p, --pin-dir DIR    maps pinned in DIR instead\n\n"
	"It holds the instance's trace while it runs (one trace or top at a time; with\n"
	"--no-replicas it does not trace). Several rings sharing a backend share its spill and\n"
	"its counter: balance one of them. QUIC connection-id services ignore spill and\n"
	"replicas. A fleet whose routers each run it can differ (each sees its own traffic):\n"
	"see docs/operations.md for central values from the configuration.\n\n"
	"It runs in the network namespace of its instance (elsewhere it refuses, as apply).\n"
	"It follows the instance: an `upgrade` keeps its maps and it goes on; after an\n"
	"`unload` or a new `load` it stops, publishing nothing more, and exits 1 with a\n"
	"message (its unit restarts it on the new instance).\n";

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

enum mode { MODE_ADVISE, MODE_ON, MODE_OFF };

struct bal {
	struct kr_top v;
	const char *ring, *instance, *pin_dir;
	int ring_id;
	enum mode mode;
	struct kr_bal_params pr;
	uint32_t min_packets;
	bool json, trace;
	struct kr_trace_session *ses;	/* the maps it reads and writes */
};

static __u16 be_spill(const struct kr_backend *be)
{
	return be->spill;
}

static void be_spill_set(struct kr_backend *be, __u16 v)
{
	be->spill = v;
}

static bool be_fixed(const struct kr_backend *be)
{
	return be->flags & KR_BACKEND_F_SPILL_FIXED;
}

/* The ring's backends (of its first service: every service of the ring has the same). */
static struct kr_top_svc *ring_svc(struct bal *c)
{
	return c->v.nsvc ? &c->v.svc[0] : NULL;
}

/* Local index of global backend id in s->be, or -1. */
static int local_of(const struct kr_top_svc *s, __u32 id)
{
	for (unsigned i = 0; i < s->nbe; i++)
		if (s->be[i].id == id)
			return (int)i;
	return -1;
}

/* The image's points with local owners (an index into s->be). */
static int local_ring(const struct kr_top_svc *s, struct kr_an_ring *r)
{
	if (kr_an_ring_borrow(r, s->an.hash, s->an.npoints, s->nbe))
		return -ENOMEM;
	for (uint32_t j = 0; j < s->an.npoints; j++)
		r->owner[j] = (uint32_t)local_of(s, s->an.owner[j]);
	return 0;
}

struct hot_list {
	struct kr_bal_hot *h;
	char (*nm)[64];		/* each key as its key type prints it */
	bool *keep;		/* vouched for by one backend's counters, or in the map */
	uint32_t n, cap;
};

/* The entry of hash in l (a new, zeroed one if it has none), or UINT32_MAX (no memory). */
static uint32_t hot_slot(struct hot_list *l, uint32_t hash)
{
	uint32_t x;

	for (x = 0; x < l->n && l->h[x].hash != hash; x++)
		;
	if (x < l->n)
		return x;
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? 2 * l->cap : 64;
		struct kr_bal_hot *h = realloc(l->h, cap * sizeof(*h));
		char (*nm)[64] = h ? realloc(l->nm, cap * sizeof(*nm)) : NULL;
		bool *keep = nm ? realloc(l->keep, cap * sizeof(*keep)) : NULL;

		if (h)
			l->h = h;
		if (nm)
			l->nm = nm;
		if (!keep)
			return UINT32_MAX;
		l->keep = keep;
		l->cap = cap;
	}
	memset(&l->h[x], 0, sizeof(l->h[x]));
	l->nm[x][0] = 0;
	l->keep[x] = false;
	l->h[x].hash = hash;
	l->n++;
	return x;
}

/* The hot keys: every counter of every backend of the ring's services, merged by hash,
 * and the ring's entries of kr_hot_keys. */
static struct kr_bal_hot *hot_keys(struct bal *c, double dt, uint32_t *n, char (**names)[64])
{
	struct hot_list hk = { 0 };
	struct kr_hot_ent *ents = NULL;
	uint32_t nents = 0;

	for (unsigned i = 0; i < c->v.nsvc; i++) {
		struct kr_top_svc *s = &c->v.svc[i];

		for (unsigned j = 0; j < s->nbe; j++) {
			struct kr_top_be *b = &s->be[j];

			for (unsigned q = 0; q < b->nss; q++) {
				struct kr_top_counter *ct = &b->ss[q];
				double rate = (double)(ct->count - ct->err) * c->v.sample / dt;
				uint32_t x;

				if (ct->count <= ct->err)
					continue;
				x = hot_slot(&hk, ct->hash);
				if (x == UINT32_MAX)
					goto oom;
				/* a key Space-Saving vouches for: above 1/KR_TOP_SLOTS of the
				 * backend's sampled packets, and sampled a few times at least */
				hk.keep[x] |= ct->count - ct->err >= 4 &&
					      (ct->count - ct->err) * KR_TOP_SLOTS >= b->sampled;
				if (!hk.nm[x][0])
					kr_key_print((enum kr_key_type)s->key_type, ct->key, ct->len,
						     hk.nm[x], sizeof(hk.nm[x]));
				hk.h[x].rate += rate;
			}
		}
	}
	/* the map's entries of this ring: replicas in effect (others' are fixed) */
	if (kr_ops_hot_list(c->v.m, c->ring_id, &ents, &nents) && nents)
		goto oom;
	for (uint32_t e = 0; e < nents; e++) {
		uint32_t x = hot_slot(&hk, ents[e].k.key_hash);

		if (x == UINT32_MAX)
			goto oom;
		if (!hk.nm[x][0])
			snprintf(hk.nm[x], sizeof(hk.nm[x]), "hash %08x", ents[e].k.key_hash);
		hk.h[x].replicas = ents[e].v.replicas;
		hk.h[x].fixed = !(ents[e].v.flags & KR_HOT_F_CONTROLLER);
		hk.keep[x] = true;	/* its packets summed over its replicas */
	}
	free(ents);
	ents = NULL;
	*n = 0;
	for (uint32_t x = 0; x < hk.n; x++)
		if (hk.keep[x]) {
			hk.h[*n] = hk.h[x];
			memcpy(hk.nm[*n], hk.nm[x], sizeof(hk.nm[x]));
			(*n)++;
		}
	*names = hk.nm;
	free(hk.keep);
	return hk.h ? hk.h : calloc(1, sizeof(*hk.h));
oom:
	free(ents);
	free(hk.h);
	free(hk.nm);
	free(hk.keep);
	*n = 0;
	*names = NULL;
	return NULL;
}

static const char *be_name(struct bal *c, __u32 id, char *buf, size_t len)
{
	return kr_trace_backend(c->v.names, id, buf, len);
}

/* Under the caller's lock: each backend's spill to want[i] (NULL: 0), the entry re-read
 * first so a state the health checker wrote meanwhile stays; fixed ones are left alone
 * (*nfixed, when not NULL, counts those with a spill).  0 or -errno. */
static int write_spill(struct bal *c, const struct kr_top_svc *s, const uint16_t *want,
		       uint32_t *nspill, uint32_t *nfixed)
{
	for (unsigned i = 0; i < s->nbe; i++) {
		struct kr_backend be;
		__u32 id = s->be[i].id;
		__u16 to = want ? want[i] : 0;

		if (bpf_map_lookup_elem(c->v.m->backends, &id, &be))
			return -errno;
		if (be_fixed(&be)) {
			if (nfixed)
				*nfixed += be_spill(&be) != 0;
			continue;
		}
		if (be_spill(&be) == to)
			continue;
		be_spill_set(&be, to);
		if (bpf_map_update_elem(c->v.m->backends, &id, &be, BPF_EXIST))
			return -errno;
		(*nspill)++;
	}
	return 0;
}

/* Publishes the plan under the instance lock: each changed backend's spill (the entry
 * re-read under the lock, so a state the health checker wrote meanwhile stays), and the
 * replicas.  0 or -errno. */
static int publish(struct bal *c, const struct kr_top_svc *s, const struct kr_bal_plan *p,
		   const struct kr_bal_hot *h, uint32_t nh, uint32_t *nspill, uint32_t *nrep)
{
	struct kr_inst lk;
	int err = 0;

	*nspill = *nrep = 0;
	if (kr_ops_inst_open(&lk, c->instance, c->pin_dir))
		return -EAGAIN;
	/* under the lock no load or unload runs: the maps held are the instance's, or nothing
	 * is written (the next round stops) */
	if (kr_trace_session_lost(c->ses, "balance")) {
		kr_ops_inst_close(&lk);
		return -ESTALE;
	}
	err = write_spill(c, s, p->spill, nspill, NULL);
	for (uint32_t i = 0; i < nh && !err; i++) {
		struct kr_hot_ent e = { .k = { .ring_id = (__u32)c->ring_id, .key_hash = h[i].hash },
					.v = { .replicas = h[i].replicas_new,
					       .flags = KR_HOT_F_CONTROLLER } };
		uint32_t now = h[i].replicas >= 2 ? h[i].replicas : 0;

		if (h[i].fixed || now == h[i].replicas_new)
			continue;
		if (h[i].replicas_new >= 2)
			err = kr_ops_hot_put(c->v.m, &e);
		else if ((err = kr_ops_hot_del(c->v.m, e.k.ring_id, e.k.key_hash)) == -ENOENT)
			err = 0;
		*nrep += !err;
	}
	kr_ops_inst_close(&lk);
	return err;
}

/* The most loaded backend / its fair share, and which. */
static double busiest(const double *load, const double *fair, uint32_t n, uint32_t *arg)
{
	double m = 0;

	*arg = 0;
	for (uint32_t i = 0; i < n; i++)
		if (fair[i] > 0 && load[i] / fair[i] > m) {
			m = load[i] / fair[i];
			*arg = i;
		}
	return m;
}

static void print_round(struct bal *c, const struct kr_top_svc *s, const struct kr_bal_plan *p,
			const struct kr_bal_backend *b, const struct kr_bal_hot *h, char (*hn)[64],
			uint32_t nh, double dt, const char *what, double model_moved)
{
	char tm[32], nb[64];
	time_t now = time(NULL);
	struct tm g;
	double *rate = calloc(p->n ? p->n : 1, sizeof(*rate)), b0, b1;
	uint32_t a0, a1;

	if (!rate)
		return;
	for (uint32_t i = 0; i < p->n; i++)
		rate[i] = b[i].rate;
	b0 = busiest(rate, p->fair, p->n, &a0);
	b1 = busiest(p->model_new, p->fair, p->n, &a1);
	gmtime_r(&now, &g);
	strftime(tm, sizeof(tm), "%H:%M:%SZ", &g);
	if (c->json) {
		json_t *jb = json_array(), *jh = json_array(), *o;
		char *txt;

		for (uint32_t i = 0; i < p->n; i++)
			json_array_append_new(jb, json_pack(
				"{s:s,s:i,s:b,s:b,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "backend",
				be_name(c, s->be[i].id, nb, sizeof(nb)), "id", (int)s->be[i].id,
				"up", b[i].up, "fixed", b[i].fixed, "packets_per_s", rate[i],
				"fair_per_s", p->fair[i], "spill", b[i].spill / KR_BAL_ONE,
				"spill_new", p->spill[i] / KR_BAL_ONE, "model_per_s",
				p->model_new[i], "native_per_s", p->native[i], "lost", p->lost[i],
				"gained", p->gained[i]));
		for (uint32_t i = 0; i < nh; i++) {
			snprintf(nb, sizeof(nb), "%08x", h[i].hash);
			json_array_append_new(jh, json_pack("{s:s,s:s,s:f,s:i,s:i,s:b}", "key",
				hn[i], "hash", nb, "packets_per_s", h[i].rate, "replicas",
				(int)(h[i].replicas >= 2 ? h[i].replicas : 0), "replicas_new",
				(int)h[i].replicas_new, "fixed", h[i].fixed));
		}
		o = json_pack("{s:s,s:s,s:s,s:f,s:f,s:f,s:f,s:f,s:f,s:b,s:f,s:i,s:i,s:s,s:o,s:o}",
			      "time", tm, "ring", c->ring, "mode", c->mode == MODE_ON ? "on" :
			      "advise", "interval_s", dt, "packets_per_s", p->total, "bound",
			      c->pr.bound, "busiest_before", b0, "busiest_after", b1, "moved",
			      p->moved, "moved_exact", model_moved >= 0, "moved_model",
			      model_moved >= 0 ? model_moved : p->moved, "changed", (int)p->changed,
			      "replicas_changed", (int)p->replicas_changed, "action", what,
			      "backends", jb, "hot_keys", jh);
		txt = o ? json_dumps(o, JSON_COMPACT) : NULL;
		if (txt)
			puts(txt);
		free(txt);
		json_decref(o);
		fflush(stdout);
		free(rate);
		return;
	}
	printf("keyrouter balance: ring %s, %s, interval %.1f s: %.1f packets/s over %u backends\n",
	       c->ring, tm, dt, p->total, p->n);
	printf("  busiest %s at %.2f x its share (bound %.2f); with the new values %.2f x "
	       "(model)\n", be_name(c, s->be[a0].id, nb, sizeof(nb)), b0, c->pr.bound, b1);
	printf("  %-24s %7s %11s %7s %7s %7s %8s %8s\n", "backend", "id", "packets/s", "x fair",
	       "spill", "new", "model x", "keys");
	for (uint32_t i = 0; i < p->n; i++)
		printf("  %-24s %7u %11.1f %7.2f %7.4f %7.4f %8.2f %+7.2f%%%s\n",
		       be_name(c, s->be[i].id, nb, sizeof(nb)), s->be[i].id, rate[i],
		       p->fair[i] > 0 ? rate[i] / p->fair[i] : 0, b[i].spill / KR_BAL_ONE,
		       p->spill[i] / KR_BAL_ONE, p->fair[i] > 0 ? p->model_new[i] / p->fair[i] : 0,
		       100 * (p->gained[i] - p->lost[i]), !b[i].up ? " (down)" : b[i].fixed ?
		       " (fixed)" : "");
	for (uint32_t i = 0; i < nh; i++) {
		uint32_t k = h[i].replicas >= 2 ? h[i].replicas : 0;

		if (!k && !h[i].replicas_new)
			continue;
		printf("  hot key %s (hash %08x) %.1f packets/s: replicas %u -> %u%s\n", hn[i],
		       h[i].hash, h[i].rate, k, h[i].replicas_new, h[i].fixed ? " (fixed)" : "");
	}
	if (model_moved >= 0)
		printf("  price: %.3f%% of the keys move (exact; the model said %.3f%%); spill of %u "
		       "backends and replicas of %u keys change: %s\n\n", 100 * p->moved,
		       100 * model_moved, p->changed, p->replicas_changed, what);
	else
		printf("  price: %.3f%% of the keys move (model); spill of %u backends and replicas "
		       "of %u keys change: %s\n\n", 100 * p->moved, p->changed, p->replicas_changed,
		       what);
	fflush(stdout);
	free(rate);
}

/* The exact price of the plan's spill (hot's floor sums, spill_price.h) in place of the
 * model's: the share of the key space that moves, and per backend what it loses and gains.
 * 0, or -1 (out of memory: the model's figures stay). */
static int exact_price(const struct kr_an_ring *lr, const struct kr_bal_backend *b,
		       struct kr_bal_plan *p)
{
	uint32_t n = p->n;
	uint16_t *bk = malloc((lr->npoints ? lr->npoints : 1) * sizeof(*bk));
	uint16_t *s0 = malloc((n ? n : 1) * sizeof(*s0));
	uint8_t *up = malloc(n ? n : 1);
	struct kr_spill_price pr = { 0 };
	int rc = -1;

	if (bk && s0 && up) {
		struct kr_ring r = { .npoints = lr->npoints, .nbackends = n, .hash = lr->hash,
				     .backend = bk };
		struct kr_spill_side before = { up, s0 }, after = { up, p->spill };

		for (uint32_t j = 0; j < lr->npoints; j++)
			bk[j] = (uint16_t)lr->owner[j];
		for (uint32_t i = 0; i < n; i++) {
			up[i] = b[i].up;
			s0[i] = b[i].spill;
		}
		if (!kr_spill_price(&r, &before, &after, 0, 1ull << 32, &pr)) {
			p->moved = (double)pr.moved / KR_AN_SPACE;
			for (uint32_t i = 0; i < n; i++) {
				p->lost[i] = (double)pr.lost[i] / KR_AN_SPACE;
				p->gained[i] = (double)pr.gained[i] / KR_AN_SPACE;
			}
			kr_spill_price_free(&pr);
			rc = 0;
		}
	}
	free(bk);
	free(s0);
	free(up);
	return rc;
}

/* One round: the view of the interval -> the plan -> printed (and published). */
static int round_once(struct bal *c, double dt)
{
	struct kr_top_svc *s = ring_svc(c);
	struct kr_bal_backend *b = calloc(s->nbe ? s->nbe : 1, sizeof(*b));
	struct kr_an_ring lr = { 0 };
	struct kr_bal_hot *h = NULL;
	char (*hn)[64] = NULL;
	struct kr_bal_plan p = { 0 };
	struct kr_err err = { "" };
	uint32_t nh = 0, nspill, nrep;
	__u64 pk = 0;
	const char *what;
	char msg[160];
	double model_moved;
	bool exact;
	int rc = -1;

	if (!b)
		return -1;
	if (s->migrating) {
		printf("keyrouter balance: ring %s is migrating: nothing changes until the "
		       "migration ends\n", c->ring);
		rc = 0;
		goto out;
	}
	for (unsigned i = 0; i < s->nbe; i++) {
		struct kr_backend be;
		__u64 d = s->be[i].pk1 - s->be[i].pk0;

		if (bpf_map_lookup_elem(c->v.m->backends, &s->be[i].id, &be)) {
			pr_warn("keyrouter: balance: couldn't read backend id %u: %s\n",
				s->be[i].id, strerror(errno));
			goto out;
		}
		b[i].weight = (double)s->be[i].points;
		b[i].rate = d / dt;
		b[i].spill = be_spill(&be);
		b[i].up = be.state == KR_BACKEND_UP;
		b[i].fixed = be_fixed(&be);
		pk += d;
	}
	if (pk < c->min_packets) {
		printf("keyrouter balance: ring %s: %llu packets in %.1f s (fewer than "
		       "--min-packets %u): nothing changes\n", c->ring, (unsigned long long)pk, dt,
		       c->min_packets);
		rc = 0;
		goto out;
	}
	h = hot_keys(c, dt, &nh, &hn);
	if (!h || local_ring(s, &lr) || kr_bal_plan_alloc(&p, s->nbe)) {
		pr_warn("keyrouter: balance: out of memory\n");
		goto out;
	}
	if (kr_bal_compute(&lr, b, s->nbe, h, nh, &c->pr, &p, &err)) {
		pr_warn("keyrouter: balance: ring %s: %s\n", c->ring, err.msg);
		goto out;
	}
	model_moved = p.moved;
	exact = !exact_price(&lr, b, &p);
	if (c->mode == MODE_ADVISE) {
		what = p.changed || p.replicas_changed ? "advise: nothing published (--mode on "
							 "publishes it)" : "nothing to change";
	} else if (!p.changed && !p.replicas_changed) {
		what = "nothing to change";
	} else {
		int e = publish(c, s, &p, h, nh, &nspill, &nrep);

		if (e == -EOPNOTSUPP)
			snprintf(msg, sizeof(msg), "published the spill of %u backends; the program "
				 "has no hot-key map for replicas ('keyrouter upgrade')", nspill);
		else if (e)
			snprintf(msg, sizeof(msg), "publishing failed after %u backends and %u "
				 "keys: %s", nspill, nrep, strerror(-e));
		else
			snprintf(msg, sizeof(msg), "published: spill of %u backends, replicas of "
				 "%u keys", nspill, nrep);
		what = msg;
	}
	print_round(c, s, &p, b, h, hn, nh, dt, what, exact ? model_moved : -1);
	rc = 0;
out:
	kr_bal_plan_free(&p);
	kr_an_ring_free(&lr);
	free(h);
	free(hn);
	free(b);
	kr_top_reset(&c->v);
	return rc;
}

/* off: the spill it manages back to 0, the replicas it added removed. */
static int balance_off(struct bal *c)
{
	struct kr_top_svc *s = ring_svc(c);
	struct kr_hot_ent *ents = NULL;
	struct kr_inst lk;
	uint32_t nspill = 0, nrep = 0, nfixed = 0, nents = 0;
	int err = 0;

	if (kr_ops_inst_open(&lk, c->instance, c->pin_dir))
		return 1;
	err = write_spill(c, s, NULL, &nspill, &nfixed);
	if (!err && !kr_ops_hot_list(c->v.m, c->ring_id, &ents, &nents)) {
		for (uint32_t e = 0; e < nents && !err; e++) {
			if (!(ents[e].v.flags & KR_HOT_F_CONTROLLER))
				continue;
			err = kr_ops_hot_del(c->v.m, ents[e].k.ring_id, ents[e].k.key_hash);
			if (err == -ENOENT)
				err = 0;
			else if (!err)
				nrep++;
		}
		free(ents);
	}
	kr_ops_inst_close(&lk);
	if (err) {
		pr_warn("keyrouter: balance: ring %s: off stopped after %u backends, %u keys: %s\n",
			c->ring, nspill, nrep, strerror(-err));
		return 1;
	}
	if (c->json) {
		json_t *o = json_pack("{s:s,s:s,s:i,s:i,s:i}", "ring", c->ring, "mode", "off",
				      "spill_reset", (int)nspill, "replicas_removed", (int)nrep,
				      "fixed_kept", (int)nfixed);
		char *txt = o ? json_dumps(o, JSON_COMPACT) : NULL;

		if (txt)
			puts(txt);
		free(txt);
		json_decref(o);
	} else
		printf("keyrouter balance: ring %s off: spill of %u backends back to 0, %u replica "
		       "entries removed%s\n", c->ring, nspill, nrep, nfixed ?
		       "; backends with a fixed spill (configuration, operator) keep it" :
		       ": every key is back on its backend");
	return 0;
}

/* balance runs where its instance runs, as apply does: from another network namespace it
 * would balance an instance whose devices and checker it does not see. */
static int netns_refused(const struct kr_inst *in, const char *ring)
{
	char hint[320];
	__u32 ino;

	if (!kr_follow_netns(in, &ino))
		return 0;
	kr_ops_netns_hint(ino, hint, sizeof(hint));
	pr_warn("keyrouter: balance: instance '%s' is loaded in another network namespace "
		"(net:[%u]; balance runs in net:[%u]): run it there, as apply: '%s keyrouter "
		"balance --ring %s --instance %s'; nothing was changed\n", in->name, ino,
		kr_ops_netns_ino(), hint[0] ? hint : "nsenter --net=<its namespace>", ring,
		in->name);
	return 1;
}

static int parse_frac(const char *s, const char *opt, double lo, double hi, double *v)
{
	char *end;

	*v = strtod(s, &end);
	if (end == s || *end || !(*v >= lo) || !(*v <= hi))
		return kr_usage_error("bad %s '%s': expected a number in %g..%g", opt, s, lo, hi);
	return 0;
}

static int cmd_balance(int argc, char **argv)
{
	const char *mode = NULL, *bound = NULL, *hyst = NULL, *step = NULL, *interval = NULL;
	const char *rounds = NULL, *sample = NULL, *minp = NULL;
	bool json = false, once = false, norep = false;
	struct bal c = { .v = { .only = -1, .sample = 100, .keep_ring = true },
			 .min_packets = 200,
			 .pr = { .bound = KR_BAL_DEFAULT_BOUND,
				 .hysteresis = KR_BAL_DEFAULT_HYSTERESIS,
				 .max_step = KR_BAL_DEFAULT_MAX_STEP,
				 .spill_max = KR_BAL_DEFAULT_SPILL_MAX, .replicas = true } };
	const struct kr_opt opts[] = {
		KR_OPT_STR("ring", 'r', &c.ring),
		KR_OPT_STR("mode", 'm', &mode),
		KR_OPT_STR("bound", 'C', &bound),
		KR_OPT_STR("hysteresis", 'H', &hyst),
		KR_OPT_STR("max-step", 'S', &step),
		KR_OPT_STR("interval", 'I', &interval),
		KR_OPT_STR("rounds", 'R', &rounds),
		KR_OPT_FLAG("once", '1', &once),
		KR_OPT_STR("sample", 'n', &sample),
		KR_OPT_FLAG("no-replicas", 0, &norep),
		KR_OPT_STR("min-packets", 0, &minp),
		KR_OPT_FLAG("json", 'j', &json),
		KR_OPT_STR("instance", 'i', &c.instance),
		KR_OPT_STR("pin-dir", 'p', &c.pin_dir),
		KR_OPT_END
	};
	struct kr_trace_session ses;
	struct kr_trace_ctl ctl = { 0 };
	struct kr_trace_stats ts;
	struct kr_err err;
	double ival = 5;
	uint32_t nrounds = 0;
	int first = kr_opts_parse(argc, argv, opts, &(struct kr_opts_cmd){ .help = usage_text,
									   .no_args = true });
	int rc = 1;
	bool all_quic = true;

	if (first < 0)
		return kr_opts_status(first);
	c.json = json;
	if (!c.ring)
		return kr_usage_error("give the ring to balance: --ring NAME ('keyrouter status' "
				      "lists the rings)");
	if (c.instance && c.pin_dir)
		return kr_usage_error("give --instance NAME or --pin-dir DIR, not both");
	if (!mode || !strcmp(mode, "advise"))
		c.mode = MODE_ADVISE;
	else if (!strcmp(mode, "on"))
		c.mode = MODE_ON;
	else if (!strcmp(mode, "off"))
		c.mode = MODE_OFF;
	else
		return kr_usage_error("bad --mode '%s': expected off, advise or on", mode);
	if ((bound && parse_frac(bound, "--bound", 1, 100, &c.pr.bound)) ||
	    (hyst && parse_frac(hyst, "--hysteresis", 0, 1, &c.pr.hysteresis)) ||
	    (step && parse_frac(step, "--max-step", 0, 1, &c.pr.max_step)) ||
	    (interval && parse_frac(interval, "--interval", 0.1, 3600, &ival)))
		return 2;
	if (kr_bal_params_check(&c.pr, &err))
		return kr_usage_error("%s", err.msg);
	if (rounds && kr_parse_u32(rounds, 1, &nrounds))
		return kr_usage_error("bad --rounds '%s': expected N >= 1", rounds);
	if (once)
		nrounds = 1;
	if (sample && kr_parse_u32(sample, 1, &c.v.sample))
		return kr_usage_error("bad --sample '%s': expected N >= 1 (1 in N packets)", sample);
	if (minp && kr_parse_u32(minp, 0, &c.min_packets))
		return kr_usage_error("bad --min-packets '%s': expected N >= 0", minp);
	c.pr.replicas = !norep;
	c.trace = !norep && c.mode != MODE_OFF;

	if (kr_trace_session_open(&ses, c.instance, c.pin_dir))
		return 1;
	if (netns_refused(&ses.in, c.ring))
		goto out;
	c.ses = &ses;
	c.v.in = &ses.in;
	c.v.m = &ses.m;
	c.v.t = &ses.t;
	if (kr_trace_session_names(&ses))
		goto out;
	c.v.names = ses.names;
	c.ring_id = kr_ops_ring_find(&ses.in, c.ring);
	if (c.ring_id < 0) {
		pr_warn("keyrouter: balance: no ring '%s' in instance '%s' ('keyrouter status' "
			"lists them)\n", c.ring, ses.in.name);
		goto out;
	}
	c.v.only_ring = c.ring_id;
	if (kr_top_services_load(&c.v))
		goto out;
	if (!c.v.nsvc || !c.v.svc[0].nbe) {
		pr_warn("keyrouter: balance: no service routes with ring '%s' (or nothing is "
			"published in it): nothing to balance\n", c.ring);
		goto out;
	}
	for (unsigned i = 0; i < c.v.nsvc; i++)
		all_quic &= c.v.svc[i].key_type == KR_KEY_QUIC;
	if (all_quic && c.mode != MODE_OFF) {
		pr_warn("keyrouter: balance: ring '%s' routes QUIC connection ids only: spill "
			"and replicas do not apply to them (a connection must not move)\n", c.ring);
		goto out;
	}
	if (c.v.svc[0].nbe > KR_BAL_MAX_BACKENDS) {
		pr_warn("keyrouter: balance: ring '%s' has %u backends: the controller handles "
			"at most %u\n", c.ring, c.v.svc[0].nbe, KR_BAL_MAX_BACKENDS);
		goto out;
	}
	if (c.mode == MODE_OFF) {
		rc = balance_off(&c);
		goto out;
	}
	for (unsigned i = 0; i < c.v.svc[0].nbe; i++)
		if (c.v.svc[0].be[i].nrings > 1) {
			pr_warn("keyrouter: balance: backend id %u is in %u rings: its counter and "
				"its spill are shared by them\n", c.v.svc[0].be[i].id,
				c.v.svc[0].be[i].nrings);
			break;
		}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, on_signal);
	if (c.trace) {
		ctl.sample = c.v.sample;
		ctl.verdicts = 1u << KR_TV_ROUTED;
		if (c.v.nsvc == 1) {
			ctl.flags |= KR_TRACE_F_SERVICE;
			ctl.stats_id = c.v.svc[0].stats_id;
		}
		if (kr_top_start(&c.v, &ctl))
			goto out;
	} else {
		kr_top_counters_read(&c.v);
	}
	for (uint32_t r = 0; !stop && (!nrounds || r < nrounds); r++) {
		double dt, t0 = kr_trace_mono_s();

		if (c.trace) {
			dt = kr_top_round(&c.v, ival, &stop, &ts);
		} else {
			while (!stop && kr_trace_mono_s() - t0 < ival) {
				struct timespec w = { 0, 50 * 1000 * 1000 };

				nanosleep(&w, NULL);
			}
			kr_top_counters_read(&c.v);
			dt = kr_trace_mono_s() - t0;
		}
		if (stop && r)
			break;
		if (kr_trace_session_lost(&ses, "balance")) {
			rc = KR_EXIT_LOST;	/* nothing published into maps not the instance's */
			goto out;
		}
		if (round_once(&c, dt))
			goto out_trace;
	}
	rc = 0;
out_trace:
	if (c.trace && !ses.lost)	/* (not maps that are not the instance's) */
		kr_ops_trace_stop(&ses.t);
out:
	kr_top_free(&c.v);
	kr_trace_session_close(&ses);
	return rc;
}

KR_COMMAND(balance, "balance", "the bounded-load controller of a ring: spill and hot-key "
	   "replicas (off, advise, on)", cmd_balance);
