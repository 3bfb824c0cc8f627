// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * apply's plan (user/core/apply_plan.c) on hand-made live states, without a kernel: what is
 * published and why, ids kept and released, services and rings removed, migrating rings
 * left alone, health state kept, a missing device refused, and ring stage's outcomes.
 * One backend id per server: ids shared across rings, a forwarding change in place, the
 * config's state merged over rings, release, the per-ring ids of an older keyrouter
 * converging, and running out of ids.  A ring's "hot_keys" against kr_hot_keys.
 * The live state after a plan is made here the way the executor changes the maps, so a
 * second plan of the same configuration must be empty (apply is idempotent).
 */
#include <errno.h>
#include <stdlib.h>
#include <arpa/inet.h>
#include <string.h>
#include "tap.h"
#include "apply_plan.h"

#define CFG_HEAD "{ \"instance\": \"t\", \"rings\": [ "
#define WEB3                                                                                \
	"{ \"name\": \"web\", \"format\": \"v2\", \"point_multiple\": 16, \"backends\": [ "  \
	"{ \"address\": \"10.0.0.1:53\", \"mac\": \"02:00:00:00:00:01\" }, "                \
	"{ \"address\": \"10.0.0.2:53\", \"mac\": \"02:00:00:00:00:02\" }, "                \
	"{ \"address\": \"10.0.0.3:53\", \"mac\": \"02:00:00:00:00:03\" } ] }"
#define WEB2                                                                                \
	"{ \"name\": \"web\", \"format\": \"v2\", \"point_multiple\": 16, \"backends\": [ "  \
	"{ \"address\": \"10.0.0.1:53\", \"mac\": \"02:00:00:00:00:01\" }, "                \
	"{ \"address\": \"10.0.0.3:53\", \"mac\": \"02:00:00:00:00:03\" } ] }"
#define SVC(name, port)                                                                     \
	"{ \"name\": \"" name "\", \"vip\": \"10.9.0.1\", \"port\": " #port ", "            \
	"\"key\": { \"type\": \"payload\" }, \"ring\": \"web\", \"forward\": { \"mode\": \"l2\" } }"

/* Canonical ids in the tests' 1024 ids: the servers' homes (backend_ids.h; known answers
 * of tests/bats/backend_ids_ref.py home ADDR 1024). */
#define H1 568u		/* 10.0.0.1:53 */
#define H2 271u		/* 10.0.0.2:53 */
#define H3 609u		/* 10.0.0.3:53 */
#define H4 718u		/* 10.0.0.4:53 */
#define H5 13u		/* 10.0.0.5:53, and 10.0.0.12:53 too */
#define HAPI 540u	/* 10.0.1.1:80 */

static struct kr_config *cfg_of(const char *text)
{
	char *errs = NULL;
	struct kr_config *c = kr_config_parse("t.json", text, strlen(text), &errs);

	if (!c)
		DIAG("config: %s", errs);
	free(errs);
	return c;
}

static struct kr_live *live_new(void)
{
	struct kr_live *lv = calloc(1, sizeof(*lv));

	lv->backends_max = 1024;
	return lv;
}

static void live_backend_set(struct kr_live *lv, uint32_t id, const struct kr_backend *v)
{
	uint32_t i = 0;

	while (i < lv->nbackends && lv->backends[i].id < id)
		i++;
	if (i < lv->nbackends && lv->backends[i].id == id) {
		lv->backends[i].v = *v;
		return;
	}
	lv->backends = realloc(lv->backends, (lv->nbackends + 1) * sizeof(*lv->backends));
	memmove(&lv->backends[i + 1], &lv->backends[i], (lv->nbackends - i) * sizeof(*lv->backends));
	lv->backends[i].id = id;
	lv->backends[i].v = *v;
	lv->nbackends++;
}

static void slot_set(struct kr_live_slot *s, const struct kr_plan_ring *pr)
{
	free(s->bt);
	memset(s, 0, sizeof(*s));
	s->present = true;
	s->hdr.digest = pr->ring->digest;
	s->hdr.ring_version = pr->ring->version;
	s->hdr.point_multiple = pr->ring->point_multiple;
	s->hdr.nbackends = pr->ring->nbackends;
	s->hdr.npoints = pr->ring->npoints + pr->ring->ndups;
	s->bt = malloc(pr->unit->n * sizeof(uint32_t));
	memcpy(s->bt, pr->unit->gid, pr->unit->n * sizeof(uint32_t));
}

/* kr_hot_keys[e->k] = e->v, or removed. */
static void live_hot_set(struct kr_live *lv, const struct kr_hot_ent *e, bool del)
{
	uint32_t j = 0;

	while (j < lv->nhot && memcmp(&lv->hot[j].k, &e->k, sizeof(e->k)))
		j++;
	if (del) {
		if (j < lv->nhot)
			lv->hot[j] = lv->hot[--lv->nhot];
		return;
	}
	if (j == lv->nhot)
		lv->hot = realloc(lv->hot, ++lv->nhot * sizeof(*lv->hot));
	lv->hot[j] = *e;
}

/* What the executor does to the maps, done to the live state. */
static void live_apply(struct kr_live *lv, const struct kr_apply_plan *p)
{
	for (uint32_t i = 0; i < p->nrings; i++) {
		const struct kr_plan_ring *pr = &p->rings[i];
		struct kr_live_ring *lr = &lv->ring[pr->ring_id];

		if (pr->new_id)
			snprintf(lr->name, sizeof(lr->name), "%s", pr->unit->name);
		if (pr->act == KR_PLAN_PUBLISH || pr->act == KR_PLAN_STAGE)
			slot_set(&lr->slot[pr->slot], pr);
		if (pr->act == KR_PLAN_STAGE)
			lr->ctl = kr_ctl_make(pr->active, 0, KR_RING_STAGED);
	}
	for (uint32_t i = 0; i < p->nbackends; i++)
		live_backend_set(lv, p->backends[i].id, &p->backends[i].v);
	for (uint32_t i = 0; i < p->nservices; i++) {
		uint32_t j = 0;

		while (j < lv->nservices && memcmp(&lv->services[j].k, &p->services[i].k,
						   sizeof(p->services[i].k)))
			j++;
		if (j == lv->nservices)
			lv->services = realloc(lv->services, ++lv->nservices * sizeof(*lv->services));
		lv->services[j].k = p->services[i].k;
		lv->services[j].v = p->services[i].v;
	}
	for (uint32_t i = 0; i < p->nservices_del; i++)
		for (uint32_t j = 0; j < lv->nservices; j++)
			if (!memcmp(&lv->services[j].k, &p->services_del[i], sizeof(p->services_del[i])))
				lv->services[j] = lv->services[--lv->nservices];
	for (uint32_t i = 0; i < p->nrings_del; i++) {
		struct kr_live_ring *lr = &lv->ring[p->rings_del[i].id];

		free(lr->slot[0].bt);
		free(lr->slot[1].bt);
		memset(lr, 0, sizeof(*lr));
	}
	for (uint32_t i = 0; i < p->nbackends_release; i++) {
		struct kr_backend unused = { .state = KR_BACKEND_UNUSED };

		live_backend_set(lv, p->backends_release[i], &unused);
	}
	for (uint32_t i = 0; lv->has_svc_names && i < p->nsvc_names; i++)
		lv->svc_names[p->svc_names[i].id] = p->svc_names[i].v;
	for (uint32_t i = 0; lv->has_svc_names && i < p->nsvc_names_del; i++)
		memset(&lv->svc_names[p->svc_names_del[i]], 0, sizeof(lv->svc_names[0]));
	for (uint32_t i = 0; i < p->nhot; i++)
		live_hot_set(lv, &p->hot[i].e, p->hot[i].act == KR_PLAN_HOT_DEL);
}

static int plan(const char *text, struct kr_live *lv, const char *stage,
		struct kr_apply_plan *p, struct kr_config **cfg, struct kr_err *err)
{
	*cfg = cfg_of(text);
	memset(err, 0, sizeof(*err));
	if (!*cfg) {
		memset(p, 0, sizeof(*p));
		return -1;
	}
	return kr_apply_plan(*cfg, lv, stage, p, err);
}

static void done(struct kr_apply_plan *p, struct kr_config *cfg)
{
	kr_apply_plan_free(p);
	kr_config_free(cfg);
}

static const char cfg3[] = CFG_HEAD WEB3 " ], \"services\": [ " SVC("dns", 53) " ] }";
static const char cfg2[] = CFG_HEAD WEB2 " ], \"services\": [ " SVC("dns", 53) " ] }";

/* The plan writes entry id for 10.0.0.LAST. */
static bool planned_id(const struct kr_apply_plan *p, uint32_t id, uint8_t last)
{
	for (uint32_t i = 0; i < p->nbackends; i++)
		if (p->backends[i].id == id)
			return p->backends[i].v.family == 4 && p->backends[i].v.addr[3] == last;
	return false;
}

/* Nothing published: everything new; the same config again: nothing to do. */
static struct kr_live *test_first_apply(void)
{
	struct kr_live *lv = live_new();
	struct kr_apply_plan p;
	struct kr_config *c;
	struct kr_err e;
	int rc = plan(cfg3, lv, NULL, &p, &c, &e);

	CHECK(rc == 0, "first apply: plans (%s)", e.msg);
	if (rc)
		return lv;
	CHECK(p.nrings == 1 && p.rings[0].new_id && p.rings[0].ring_id == 0,
	      "first apply: ring 'web' gets the new ring id 0");
	CHECK(p.rings[0].act == KR_PLAN_PUBLISH && p.rings[0].why == KR_PLAN_WHY_NEW &&
	      p.rings[0].slot == 0 && !p.rings[0].was_present,
	      "first apply: published because nothing is published yet");
	CHECK_EQ_U(p.n.backends_added, 3, "first apply: 3 backends added");
	CHECK(p.nbackends == 3 && planned_id(&p, H1, 1) && planned_id(&p, H2, 2) &&
	      planned_id(&p, H3, 3), "first apply: ids = the servers' homes, entries carry the "
	      "addresses");
	CHECK(p.nservices == 1 && p.services[0].added && p.services[0].v.ring_id == 0 &&
	      p.services[0].v.key_type == KR_KEY_PAYLOAD, "first apply: service 'dns' added");
	CHECK(!p.nservices_del && !p.nrings_del && !p.nbackends_release,
	      "first apply: nothing to remove");
	CHECK(kr_apply_plan_changes(&p), "first apply: changes");
	live_apply(lv, &p);
	done(&p, c);

	rc = plan(cfg3, lv, NULL, &p, &c, &e);
	CHECK(rc == 0 && !kr_apply_plan_changes(&p) && p.rings[0].act == KR_PLAN_SAME &&
	      !p.nbackends && !p.nservices && p.n.backends_same == 3 && p.n.services_same == 1,
	      "the same config again: nothing changes (idempotent)");
	done(&p, c);
	return lv;
}

/* One backend less: the ring changes, the others keep their ids, the third id is released. */
static void test_remove_backend(struct kr_live *lv)
{
	struct kr_apply_plan p;
	struct kr_config *c;
	struct kr_err e;
	int rc = plan(cfg2, lv, NULL, &p, &c, &e);

	CHECK(rc == 0, "one backend less: plans (%s)", e.msg);
	if (rc)
		return;
	CHECK(p.rings[0].act == KR_PLAN_PUBLISH && p.rings[0].why == KR_PLAN_WHY_CHANGED &&
	      p.rings[0].was_present && !p.rings[0].new_id,
	      "one backend less: the ring is republished because it changed");
	CHECK(p.rings[0].unit->gid[0] == H1 && p.rings[0].unit->gid[1] == H3,
	      "the remaining backends keep their ids");
	CHECK(p.nbackends_release == 1 && p.backends_release[0] == H2,
	      "10.0.0.2's id is released: no image references it afterwards");
	CHECK(!p.nbackends && p.n.backends_same == 2, "no kr_backends entry rewritten");
	live_apply(lv, &p);
	done(&p, c);
}

/* A service the config no longer has: removed (the dry run of issue 12 item 1). */
static void test_remove_services(struct kr_live *lv)
{
	static const char two[] = CFG_HEAD WEB2 " ], \"services\": [ " SVC("dns", 53) ", "
				  SVC("dns2", 54) ", " SVC("dns3", 55) " ] }";
	struct kr_apply_plan p;
	struct kr_config *c;
	struct kr_err e;
	int rc = plan(two, lv, NULL, &p, &c, &e);

	CHECK(rc == 0 && p.n.services_added == 2 && p.n.services_same == 1,
	      "two services more: 2 added, 1 unchanged");
	live_apply(lv, &p);
	done(&p, c);
	rc = plan(cfg2, lv, NULL, &p, &c, &e);
	CHECK(rc == 0 && p.nservices_del == 2 && p.n.services_removed == 2 &&
	      p.n.services_same == 1, "back to one service: 2 services to remove");
	CHECK(p.nservices_del == 2 && ntohs(p.services_del[0].port) + ntohs(p.services_del[1].port)
	      == 54 + 55, "the removed ones are ports 54 and 55");
	live_apply(lv, &p);
	done(&p, c);
}

/* Health state is runtime state: a backend `backend set` marked down stays down while the
 * config says up; the config saying drain changes it. */
static void test_health(struct kr_live *lv)
{
	static const char drain[] = CFG_HEAD
		"{ \"name\": \"web\", \"format\": \"v2\", \"point_multiple\": 16, \"backends\": [ "
		"{ \"address\": \"10.0.0.1:53\", \"mac\": \"02:00:00:00:00:01\" }, "
		"{ \"address\": \"10.0.0.3:53\", \"mac\": \"02:00:00:00:00:03\", \"state\": "
		"\"drain\" } ] } ], \"services\": [ " SVC("dns", 53) " ] }";
	struct kr_backend b = lv->backends[0].v;
	struct kr_apply_plan p;
	struct kr_config *c;
	struct kr_err e;
	int rc;

	b.state = KR_BACKEND_DOWN;
	live_backend_set(lv, lv->backends[0].id, &b);
	rc = plan(cfg2, lv, NULL, &p, &c, &e);
	CHECK(rc == 0 && !p.nbackends && !kr_apply_plan_changes(&p),
	      "a backend set down at runtime stays down when the config says up");
	done(&p, c);
	rc = plan(drain, lv, NULL, &p, &c, &e);
	CHECK(rc == 0 && p.nbackends == 1 && p.backends[0].id == H3 && !p.backends[0].added &&
	      p.backends[0].v.state == KR_BACKEND_DRAIN, "the config saying drain changes it");
	done(&p, c);
	b.state = KR_BACKEND_UP;
	live_backend_set(lv, lv->backends[0].id, &b);
}

/* A ring being migrated is left alone; ring stage's outcomes. */
static void test_migrating_and_stage(struct kr_live *lv)
{
	struct kr_apply_plan p;
	struct kr_config *c;
	struct kr_err e;
	int rc;

	rc = plan(cfg3, lv, "web", &p, &c, &e);
	CHECK(rc == 0 && p.nrings == 1 && p.rings[0].act == KR_PLAN_STAGE && p.rings[0].slot == 1,
	      "ring stage of a new version: into the standby slot 1");
	CHECK(p.nbackends == 1 && p.backends[0].added && !p.nservices && !p.nbackends_release,
	      "ring stage writes the new backend only (no services, no garbage)");
	live_apply(lv, &p);
	done(&p, c);
	rc = plan(cfg3, lv, "web", &p, &c, &e);
	CHECK(rc == 0 && p.rings[0].act == KR_PLAN_STAGED_ALREADY,
	      "staging the staged version again: already staged, nothing to do");
	done(&p, c);
	rc = plan(cfg2, lv, "web", &p, &c, &e);
	CHECK(rc == -EBUSY && strstr(e.msg, "state staged"),
	      "staging a third version while staged: refused (%s)", e.msg);
	done(&p, c);
	lv->ring[0].ctl = kr_ctl_make(0, 1ull << 30, KR_RING_MIGRATING);
	rc = plan(cfg3, lv, NULL, &p, &c, &e);
	CHECK(rc == 0 && p.rings[0].act == KR_PLAN_SKIP && p.n.rings_skipped == 1, "apply of a migrating ring: left alone");
	CHECK(!p.nbackends_release, "nothing the standby slot references is released");
	done(&p, c);
	lv->ring[0].ctl = kr_ctl_make(0, 0, KR_RING_IDLE);
	rc = plan(cfg2, lv, "web", &p, &c, &e);
	CHECK(rc == 0 && p.rings[0].act == KR_PLAN_STAGE_SAME,
	      "staging the active version: nothing to stage");
	done(&p, c);
	rc = plan(cfg2, lv, "nope", &p, &c, &e);
	CHECK(rc == -ENOENT && strstr(e.msg, "no ring 'nope'"), "staging an unknown ring: %s",
	      e.msg);
	done(&p, c);
}

/* A ring the config no longer has: removed, its ids released; a new ring takes a free id. */
static void test_ring_removed(struct kr_live *lv)
{
	static const char other[] = CFG_HEAD
		"{ \"name\": \"api\", \"format\": \"v1\", \"backends\": [ "
		"{ \"address\": \"10.0.1.1:80\", \"mac\": \"02:00:00:00:01:01\" } ] } ], "
		"\"services\": [ { \"name\": \"a\", \"vip\": \"10.9.0.2\", \"port\": 80, "
		"\"key\": { \"type\": \"payload\" }, \"ring\": \"api\", \"forward\": { \"mode\": "
		"\"l2\" } } ] }";
	struct kr_apply_plan p;
	struct kr_config *c;
	struct kr_err e;
	int rc = plan(other, lv, NULL, &p, &c, &e);

	CHECK(rc == 0, "another ring: plans (%s)", e.msg);
	if (rc)
		return;
	CHECK(p.rings[0].new_id && p.rings[0].ring_id == 1,
	      "ring 'api' takes id 1 (id 0 is still named 'web' until the garbage step)");
	CHECK(p.nrings_del == 1 && p.rings_del[0].id == 0 && !strcmp(p.rings_del[0].name, "web"),
	      "ring 'web' (id 0) is removed");
	CHECK(p.nservices == 1 && p.nservices_del == 1, "service 'a' added, 'dns' removed");
	CHECK_EQ_U(p.nbackends_release, 3, "the ids of both of web's slots are released");
	CHECK(p.rings[0].unit->gid[0] == HAPI, "the new backend takes its home (%u)",
	      p.rings[0].unit->gid[0]);
	done(&p, c);
}

/* A backend whose "dev" does not exist: no plan, an error naming both (issue 12 item 3). */
static void test_missing_dev(void)
{
	static const char dev[] = CFG_HEAD
		"{ \"name\": \"web\", \"format\": \"v1\", \"backends\": [ "
		"{ \"address\": \"10.0.0.1:53\", \"mac\": "
		"\"02:00:00:00:00:01\", \"dev\": \"eth1\" } ] } ], \"services\": [ " SVC("dns", 53)
		" ] }";
	struct kr_live *lv = live_new();
	struct kr_apply_plan p;
	struct kr_config *c;
	struct kr_err e;
	int rc;

	lv->devices = calloc(1, sizeof(*lv->devices));
	snprintf(lv->devices[0].name, sizeof(lv->devices[0].name), "eth1");
	lv->ndevices = 1;		/* looked up: ifindex 0, no such device */
	rc = plan(dev, lv, NULL, &p, &c, &e);
	CHECK(rc == -ENODEV && strstr(e.msg, "10.0.0.1:53") && strstr(e.msg, "'eth1'"),
	      "a missing device: refused, naming the backend and the device (%s)", e.msg);
	done(&p, c);
	lv->devices[0].ifindex = 7;
	lv->has_devices = true;
	lv->devices = realloc(lv->devices, 2 * sizeof(*lv->devices));
	memset(&lv->devices[1], 0, sizeof(lv->devices[1]));
	lv->devices[1].ifindex = 7;
	lv->devices[1].has_mac = true;
	memcpy(lv->devices[1].mac, "\x02\xaa\xbb\xcc\xdd\xee", 6);
	lv->ndevices = 2;
	rc = plan(dev, lv, NULL, &p, &c, &e);
	CHECK(rc == 0 && p.nbackends == 1 && p.backends[0].v.ifindex == 7,
	      "the device exists: the backend's egress ifindex is 7");
	CHECK(p.ndevices == 1 && p.devices[0].ifindex == 7 && p.devices[0].v.mac[5] == 0xee,
	      "kr_devices[7] gets the device's MAC");
	done(&p, c);
	kr_live_free(lv);
	free(lv);
}

/* ---- one backend id per server (issue 16) ---------------------------------------------- */

/* A backend entry: 10.0.0.LAST:53, MAC 02:00:00:00:00:MAC, state STATE ("" = up). */
#define BE(last, mac, state)                                                                \
	"{ \"address\": \"10.0.0." #last ":53\", \"mac\": \"02:00:00:00:00:" #mac "\"" state " }"
#define DOWN ", \"state\": \"down\""
#define DRAIN ", \"state\": \"drain\""
#define RING(name, backends)                                                                \
	"{ \"name\": \"" name "\", \"format\": \"v2\", \"point_multiple\": 16, \"backends\": [ " \
	backends " ] }"
#define CFG(rings) CFG_HEAD rings " ], \"services\": [ " SVC("dns", 53) " ] }"

static const struct kr_backend *live_get(const struct kr_live *lv, uint32_t id)
{
	for (uint32_t i = 0; i < lv->nbackends; i++)
		if (lv->backends[i].id == id && lv->backends[i].v.family)
			return &lv->backends[i].v;
	return NULL;
}

static const struct kr_plan_ring *ring_of(const struct kr_apply_plan *p, const char *name)
{
	for (uint32_t i = 0; i < p->nrings; i++)
		if (!strcmp(p->rings[i].unit->name, name))
			return &p->rings[i];
	return NULL;
}

/* The id of backend index i of ring NAME in the plan (UINT32_MAX: none). */
static uint32_t gid(const struct kr_apply_plan *p, const char *name, uint32_t i)
{
	const struct kr_plan_ring *pr = ring_of(p, name);

	return pr && i < pr->unit->n ? pr->unit->gid[i] : UINT32_MAX;
}

static const struct kr_plan_backend *planned(const struct kr_apply_plan *p, uint32_t id)
{
	for (uint32_t i = 0; i < p->nbackends; i++)
		if (p->backends[i].id == id)
			return &p->backends[i];
	return NULL;
}

static bool released(const struct kr_apply_plan *p, uint32_t id)
{
	for (uint32_t i = 0; i < p->nbackends_release; i++)
		if (p->backends_release[i] == id)
			return true;
	return false;
}

/* Plan, check that it plans, apply it to the live state, and check that the same config
 * again plans nothing (every case converges in one apply). */
static bool apply_converges(const char *text, struct kr_live *lv, const char *what)
{
	struct kr_apply_plan p;
	struct kr_config *c;
	struct kr_err e;
	int rc = plan(text, lv, NULL, &p, &c, &e);

	if (rc) {
		DIAG("%s: %s", what, e.msg);
		done(&p, c);
		return false;
	}
	live_apply(lv, &p);
	done(&p, c);
	rc = plan(text, lv, NULL, &p, &c, &e);
	rc = rc || kr_apply_plan_changes(&p) || p.nbackends;
	done(&p, c);
	return !rc;
}

/* Two rings over three servers, two of them in both: one id per server, one entry each. */
static void test_shared_ids(void)
{
	static const char two[] = CFG(RING("web", BE(1, 01, "") ", " BE(2, 02, "") ", "
					  BE(3, 03, "")) ", "
				      RING("api", BE(3, 03, "") ", " BE(2, 02, "") ", "
					  BE(4, 04, "")));
	static const char two_less[] = CFG(RING("web", BE(1, 01, "") ", " BE(3, 03, "")) ", "
					   RING("api", BE(3, 03, "") ", " BE(4, 04, "")));
	static const char one[] = CFG(RING("web", BE(1, 01, "") ", " BE(3, 03, "")));
	struct kr_live *lv = live_new();
	struct kr_apply_plan p;
	struct kr_config *c;
	struct kr_err e;
	int rc = plan(two, lv, NULL, &p, &c, &e);

	CHECK(rc == 0, "shared: plans (%s)", e.msg);
	if (rc) {
		done(&p, c);
		goto out;
	}
	CHECK(gid(&p, "web", 0) == H1 && gid(&p, "web", 1) == H2 && gid(&p, "web", 2) == H3,
	      "shared: web's servers take their homes (%u %u %u)", gid(&p, "web", 0),
	      gid(&p, "web", 1), gid(&p, "web", 2));
	CHECK(gid(&p, "api", 0) == H3 && gid(&p, "api", 1) == H2 && gid(&p, "api", 2) == H4,
	      "shared: api keeps its own order over the same ids and 10.0.0.4 takes its home "
	      "(%u %u %u)", gid(&p, "api", 0), gid(&p, "api", 1), gid(&p, "api", 2));
	CHECK(p.nbackends == 4 && p.n.backends_added == 4 && !p.n.backends_same,
	      "shared: 4 entries written for 4 servers in 6 ring places (%u)", p.nbackends);
	CHECK(ring_of(&p, "web")->act == KR_PLAN_PUBLISH && ring_of(&p, "api")->act ==
	      KR_PLAN_PUBLISH, "shared: both rings published");
	live_apply(lv, &p);
	done(&p, c);
	rc = plan(two, lv, NULL, &p, &c, &e);
	CHECK(rc == 0 && !kr_apply_plan_changes(&p) && p.n.backends_same == 4,
	      "shared: the same config again: nothing changes, 4 entries up to date (%u)",
	      p.n.backends_same);
	done(&p, c);

	/* 10.0.0.2 leaves both rings: released; 10.0.0.3 stays in both: kept */
	rc = plan(two_less, lv, NULL, &p, &c, &e);
	CHECK(rc == 0 && p.nbackends_release == 1 && released(&p, H2),
	      "release: the server that left both rings (10.0.0.2) is released, nothing else");
	CHECK(gid(&p, "web", 1) == H3 && gid(&p, "api", 0) == H3,
	      "release: 10.0.0.3 keeps id 2 in both rings");
	live_apply(lv, &p);
	done(&p, c);
	/* api goes: 10.0.0.4 (only in api) released, 10.0.0.3 (also in web) kept */
	rc = plan(one, lv, NULL, &p, &c, &e);
	CHECK(rc == 0 && p.nrings_del == 1 && p.nbackends_release == 1 && released(&p, H4) &&
	      !released(&p, H3), "release: ring api removed: its own server (10.0.0.4) "
	      "released, the one web shares (10.0.0.3) kept");
	live_apply(lv, &p);
	done(&p, c);
	/* an entry nothing references (what a killed apply may leave): released */
	{
		struct kr_backend stray = *live_get(lv, H1);

		stray.addr[3] = 99;
		live_backend_set(lv, 9, &stray);
	}
	rc = plan(one, lv, NULL, &p, &c, &e);
	CHECK(rc == 0 && p.nbackends_release == 1 && released(&p, 9) &&
	      kr_apply_plan_changes(&p), "release: an entry no image references (id 9) is "
	      "released");
	done(&p, c);
out:
	kr_live_free(lv);
	free(lv);
}

/* A server whose MAC changes keeps its id: the entry changes in place, no ring changes. */
static void test_in_place(void)
{
	static const char a[] = CFG(RING("web", BE(1, 01, "") ", " BE(2, 02, "")) ", "
				    RING("api", BE(2, 02, "") ", " BE(3, 03, "")));
	static const char moved[] = CFG(RING("web", BE(1, 01, "") ", " BE(2, 22, "")) ", "
					RING("api", BE(2, 22, "") ", " BE(3, 03, "")));
	/* both forwardings at once: two backends; the one kept keeps its id */
	static const char both[] = CFG(RING("web", BE(1, 01, "") ", " BE(2, 02, "")) ", "
				       RING("api", BE(2, 22, "") ", " BE(3, 03, "")));
	struct kr_live *lv = live_new();
	struct kr_apply_plan p;
	struct kr_config *c;
	struct kr_err e;
	const struct kr_plan_backend *b;
	int rc;

	CHECK(apply_converges(a, lv, "in place: first apply"), "in place: first apply");
	rc = plan(moved, lv, NULL, &p, &c, &e);
	b = rc ? NULL : planned(&p, H2);
	CHECK(rc == 0 && gid(&p, "web", 1) == H2 && gid(&p, "api", 0) == H2,
	      "in place: 10.0.0.2 keeps its id in both rings after its MAC changed");
	CHECK(p.nbackends == 1 && b && b->in_place && !b->added && b->v.mac[5] == 0x22 &&
	      p.n.backends_changed == 1, "in place: one entry (10.0.0.2's) changes its MAC, in place");
	CHECK(!p.n.rings_published && p.n.rings_same == 2 && !p.nbackends_release,
	      "in place: no ring is published, nothing released");
	live_apply(lv, &p);
	done(&p, c);
	rc = plan(moved, lv, NULL, &p, &c, &e);
	CHECK(rc == 0 && !kr_apply_plan_changes(&p), "in place: converged");
	done(&p, c);

	CHECK(apply_converges(a, lv, "in place: back"), "in place: back to MAC :02");
	rc = plan(both, lv, NULL, &p, &c, &e);
	CHECK(rc == 0 && gid(&p, "web", 1) == H2 && gid(&p, "api", 0) == H2 + 1,
	      "two forwardings: web's 10.0.0.2/:02 keeps its home (exact first, whatever the "
	      "ring order), api's 10.0.0.2/:22 takes the next id (%u %u)", gid(&p, "web", 1),
	      gid(&p, "api", 0));
	b = rc ? NULL : planned(&p, H2 + 1);
	CHECK(p.nbackends == 1 && b && b->added && !b->in_place,
	      "two forwardings: one entry added, nothing changed in place");
	CHECK(ring_of(&p, "api")->act == KR_PLAN_PUBLISH && ring_of(&p, "web")->act ==
	      KR_PLAN_SAME, "two forwardings: only api is published");
	done(&p, c);
	/* ring stage api with the new MAC while web (not staged) keeps the old one: a new id,
	 * web's server is not changed under it */
	rc = plan(both, lv, "api", &p, &c, &e);
	b = rc ? NULL : planned(&p, H2 + 1);
	CHECK(rc == 0 && gid(&p, "api", 0) == H2 + 1 && p.nbackends == 1 && b && b->added &&
	      !b->in_place && p.rings[0].act == KR_PLAN_STAGE,
	      "ring stage of the new MAC: a new id (%u), web's kept", gid(&p, "api", 0));
	done(&p, c);
	kr_live_free(lv);
	free(lv);
}

/* The config's state of a server merged over its rings: down wins, then drain. */
static void test_state_merge(void)
{
	static const char up[] = CFG(RING("web", BE(1, 01, "") ", " BE(2, 02, "")) ", "
				     RING("api", BE(2, 02, "") ", " BE(1, 01, "")) ", "
				     RING("dns", BE(1, 01, "") ", " BE(2, 02, "")));
	static const char mixed[] = CFG(RING("web", BE(1, 01, DRAIN) ", " BE(2, 02, "")) ", "
					RING("api", BE(2, 02, DOWN) ", " BE(1, 01, "")) ", "
					RING("dns", BE(1, 01, "") ", " BE(2, 02, DRAIN)));
	struct kr_live *lv = live_new();
	struct kr_apply_plan p;
	struct kr_config *c;
	struct kr_err e;
	int rc;

	rc = plan(mixed, lv, NULL, &p, &c, &e);
	CHECK(rc == 0 && p.nbackends == 2 && planned(&p, H1) && planned(&p, H2),
	      "merge: two servers in three rings: two entries, each written once (%u)",
	      p.nbackends);
	CHECK(planned(&p, H1) && planned(&p, H1)->v.state == KR_BACKEND_DRAIN,
	      "merge: 10.0.0.1 drain in one ring, up in two: drain");
	CHECK(planned(&p, H2) && planned(&p, H2)->v.state == KR_BACKEND_DOWN,
	      "merge: 10.0.0.2 down in one ring, drain in one, up in one: down");
	done(&p, c);
	CHECK(apply_converges(up, lv, "merge: all up"), "merge: all up, applied");
	rc = plan(mixed, lv, NULL, &p, &c, &e);
	CHECK(rc == 0 && p.nbackends == 2 && p.n.backends_changed == 2 &&
	      planned(&p, H1)->v.state == KR_BACKEND_DRAIN &&
	      planned(&p, H2)->v.state == KR_BACKEND_DOWN,
	      "merge: on a running instance too (2 entries changed)");
	done(&p, c);
	kr_live_free(lv);
	free(lv);
}

/* An instance an older keyrouter left with per-ring ids (the same server under several
 * ids): one apply republishes the rings whose ids change, releases the extra ids, and the
 * next apply has nothing to do. */
static void test_per_ring_ids_converge(void)
{
	static const char two[] = CFG(RING("web", BE(1, 01, "") ", " BE(2, 02, "")) ", "
				      RING("api", BE(2, 02, "") ", " BE(1, 01, "")));
	struct kr_live *lv = live_new();
	struct kr_apply_plan p;
	struct kr_config *c;
	struct kr_err e;
	int rc = plan(two, lv, NULL, &p, &c, &e);

	CHECK(rc == 0, "per-ring ids: plans");
	if (rc) {
		done(&p, c);
		goto out;
	}
	/* what the old code did: api got ids of its own (5, 4) for the same two servers */
	p.rings[1].unit->gid[0] = 5;
	p.rings[1].unit->gid[1] = 4;
	live_apply(lv, &p);
	for (uint32_t i = 0; i < 2; i++) {
		struct kr_backend v = *live_get(lv, i ? H2 : H1);

		live_backend_set(lv, i == 0 ? 4 : 5, &v);
	}
	done(&p, c);

	rc = plan(two, lv, NULL, &p, &c, &e);
	CHECK(rc == 0 && gid(&p, "api", 0) == H2 && gid(&p, "api", 1) == H1,
	      "per-ring ids: api's servers take the id of their identity nearest after their "
	      "home (their home)");
	CHECK(ring_of(&p, "api")->act == KR_PLAN_PUBLISH && ring_of(&p, "api")->why ==
	      KR_PLAN_WHY_CHANGED && ring_of(&p, "web")->act == KR_PLAN_SAME,
	      "per-ring ids: api is republished (its ids changed), web is not");
	CHECK(p.nbackends_release == 2 && released(&p, 4) && released(&p, 5) && !p.nbackends,
	      "per-ring ids: the extra ids 4 and 5 are released, no entry written");
	live_apply(lv, &p);
	done(&p, c);
	rc = plan(two, lv, NULL, &p, &c, &e);
	CHECK(rc == 0 && !kr_apply_plan_changes(&p), "per-ring ids: converged in one apply");
	done(&p, c);
out:
	kr_live_free(lv);
	free(lv);
}

/* Out of ids: refused before anything is planned; a migrating ring's new server gets no
 * entry (nothing publishes it). */
static void test_no_ids_and_migrating(void)
{
	static const char three[] = CFG(RING("web", BE(1, 01, "") ", " BE(2, 02, "")) ", "
					RING("api", BE(2, 02, "") ", " BE(3, 03, "")));
	static const char four[] = CFG(RING("web", BE(1, 01, "") ", " BE(2, 02, "")) ", "
				       RING("api", BE(2, 02, "") ", " BE(3, 03, "") ", "
					   BE(4, 04, "")));
	struct kr_live *lv = live_new();
	struct kr_apply_plan p;
	struct kr_config *c;
	struct kr_err e;
	int rc;

	lv->backends_max = 3;
	CHECK(apply_converges(three, lv, "3 ids"), "3 servers in 3 ids: applied");
	rc = plan(four, lv, NULL, &p, &c, &e);
	CHECK(rc == -ENOSPC && strstr(e.msg, "no free backend ids left") &&
	      strstr(e.msg, "nothing was changed"), "a 4th server in 3 ids: refused (%s)", e.msg);
	done(&p, c);
	lv->backends_max = 1024;
	lv->ring[1].ctl = kr_ctl_make(0, 1ull << 30, KR_RING_MIGRATING);
	rc = plan(four, lv, NULL, &p, &c, &e);
	CHECK(rc == 0 && ring_of(&p, "api")->act == KR_PLAN_SKIP && gid(&p, "api", 2) == H4,
	      "api migrating: left alone (its new server would take its home)");
	CHECK(!p.nbackends && !p.nbackends_release && !kr_apply_plan_changes(&p),
	      "api migrating: no entry written for a server no image will reference");
	done(&p, c);
	kr_live_free(lv);
	free(lv);
}

/* The live id of 10.0.0.LAST:53 (UINT32_MAX: none). */
static uint32_t live_id(const struct kr_live *lv, uint8_t last)
{
	for (uint32_t i = 0; i < lv->nbackends; i++)
		if (lv->backends[i].v.family == 4 && lv->backends[i].v.addr[3] == last &&
		    lv->backends[i].v.state <= KR_BACKEND_DRAIN)
			return lv->backends[i].id;
	return UINT32_MAX;
}

/* Canonical ids (issue 23 point 4): the same config in another order of rings and backends
 * (another router) gives every server the same id on empty maps; 10.0.0.5 and 10.0.0.12
 * share home 13: the lower address takes it.  An apply history keeps live ids; where a new
 * server's home was held when it came, a fresh load gives the canonical ids. */
static void test_canonical(void)
{
	static const char a[] = CFG(RING("web", BE(1, 01, "") ", " BE(5, 05, "") ", "
					 BE(12, 0c, "") ", " BE(2, 02, "")) ", "
				    RING("api", BE(12, 0c, "") ", " BE(3, 03, "")));
	static const char b[] = CFG(RING("api", BE(3, 03, "") ", " BE(12, 0c, "")) ", "
				    RING("web", BE(12, 0c, "") ", " BE(2, 02, "") ", "
					 BE(5, 05, "") ", " BE(1, 01, "")));
	static const char only12[] = CFG(RING("web", BE(1, 01, "") ", " BE(12, 0c, "")));
	static const char h1[] = CFG(RING("web", BE(1, 01, "") ", " BE(2, 02, "")));
	static const char h2[] = CFG(RING("web", BE(1, 01, "") ", " BE(2, 02, "") ", "
					  BE(3, 03, "") ", " BE(4, 04, "")));
	static const char h3[] = CFG(RING("web", BE(4, 04, "") ", " BE(1, 01, "")) ", "
				     RING("api", BE(3, 03, "")));
	static const uint8_t last[] = { 1, 2, 3, 4, 5, 12 };
	static const uint32_t want[] = { H1, H2, H3, UINT32_MAX, H5, H5 + 1 };
	struct kr_live *la = live_new(), *lb = live_new(), *lh = live_new(), *lf = live_new();
	bool same = true, canon = true;

	CHECK(apply_converges(a, la, "canonical: a") && apply_converges(b, lb, "canonical: b"),
	      "canonical: the config and its reordering applied on two fresh instances");
	for (uint32_t i = 0; i < sizeof(last); i++) {
		same = same && live_id(la, last[i]) == live_id(lb, last[i]);
		canon = canon && live_id(la, last[i]) == want[i];
	}
	CHECK(same, "canonical: every server has the same id on both");
	CHECK(canon, "canonical: the known answers (homes; 10.0.0.5 %u, 10.0.0.12 %u)",
	      live_id(la, 5), live_id(la, 12));

	/* history: 10.0.0.12 came first and holds 13; 10.0.0.5 comes later: 14; kept */
	CHECK(apply_converges(only12, lh, "history: .12") && apply_converges(a, lh, "history: a"),
	      "history: 10.0.0.12 first, then the whole config");
	CHECK(live_id(lh, 12) == H5 && live_id(lh, 5) == H5 + 1,
	      "history: the live id of 10.0.0.12 is kept (%u), 10.0.0.5 the next free (%u)",
	      live_id(lh, 12), live_id(lh, 5));
	CHECK(apply_converges(b, lh, "history: b") && live_id(lh, 12) == H5,
	      "history: applying the reordered config renumbers nothing");
	kr_live_free(lh);	/* unload: empty maps */
	lh->backends_max = 1024;
	CHECK(apply_converges(a, lh, "reload: a") && live_id(lh, 5) == H5 &&
	      live_id(lh, 12) == H5 + 1, "reload (empty maps): the canonical ids again");

	/* history without a held home: add, remove, reorder -> the ids of a fresh instance */
	CHECK(apply_converges(h1, lf, "h1") && apply_converges(h2, lf, "h2") &&
	      apply_converges(h3, lf, "h3"), "history: 2 servers, then 4, then 3 in two rings");
	kr_live_free(la);	/* another fresh instance */
	la->backends_max = 1024;
	CHECK(apply_converges(h3, la, "fresh h3"), "fresh: the last config of the history");
	CHECK(live_id(lf, 1) == live_id(la, 1) && live_id(lf, 3) == live_id(la, 3) &&
	      live_id(lf, 4) == live_id(la, 4) && live_id(lf, 4) == H4 && live_id(lf, 2) ==
	      UINT32_MAX, "history: the ids of a fresh instance (10.0.0.4 %u)", live_id(lf, 4));
	kr_live_free(la);
	kr_live_free(lb);
	kr_live_free(lh);
	kr_live_free(lf);
	free(la);
	free(lb);
	free(lh);
	free(lf);
}

/* Pinned ids (the configuration's "id"): taken first (10.0.0.2 pinned to 10.0.0.5's home:
 * 10.0.0.5 the next id; known answers: backend_ids_ref.py ids CONFIG 1024), the same in a
 * ring that does not give it; a changed pin moves a live server (its rings republished, the
 * old id released); a pin another live server holds, or beyond kr_backends: refused. */
static void test_pins(void)
{
#define PIN(n) ", \"id\": " #n
	static const char a[] = CFG(RING("web", BE(1, 01, PIN(7)) ", " BE(2, 02, PIN(13)) ", "
					 BE(5, 05, "")) ", "
				    RING("api", BE(1, 01, "") ", " BE(3, 03, "")));
	static const char moved[] = CFG(RING("web", BE(1, 01, PIN(9)) ", " BE(2, 02, PIN(13)) ", "
					     BE(5, 05, "")) ", "
					RING("api", BE(1, 01, "") ", " BE(3, 03, "")));
	static const char busy[] = CFG(RING("web", BE(1, 01, PIN(14)) ", " BE(2, 02, PIN(13)) ", "
					    BE(5, 05, "")) ", "
				       RING("api", BE(1, 01, "") ", " BE(3, 03, "")));
	static const char far[] = CFG(RING("web", BE(1, 01, PIN(2000)) ", " BE(2, 02, PIN(13)) ", "
					   BE(5, 05, "")));
	/* web (not staged) pins a new 10.0.0.6 to 10.0.0.4's home; api is staged with 10.0.0.4 */
	static const char stage[] = CFG(RING("web", BE(1, 01, PIN(9)) ", " BE(2, 02, PIN(13)) ", "
					     BE(5, 05, "") ", " BE(6, 06, PIN(718))) ", "
					RING("api", BE(1, 01, "") ", " BE(3, 03, "") ", "
					     BE(4, 04, "")));
#undef PIN
	struct kr_live *lv = live_new();
	struct kr_apply_plan p;
	struct kr_config *c;
	struct kr_err e;
	int rc;

	CHECK(apply_converges(a, lv, "pins"), "pins: applied, converged");
	CHECK(live_id(lv, 1) == 7 && live_id(lv, 2) == 13 && live_id(lv, 5) == 14 &&
	      live_id(lv, 3) == H3, "pins: 7, 13; 10.0.0.5 (home 13) 14; 10.0.0.3 its home "
	      "(%u %u %u %u)", live_id(lv, 1), live_id(lv, 2), live_id(lv, 5), live_id(lv, 3));
	rc = plan(a, lv, NULL, &p, &c, &e);
	CHECK(rc == 0 && gid(&p, "api", 0) == 7, "pins: api (no \"id\" there) has 10.0.0.1 at 7");
	done(&p, c);
	rc = plan(moved, lv, NULL, &p, &c, &e);
	CHECK(rc == 0 && gid(&p, "web", 0) == 9 && gid(&p, "api", 0) == 9 && planned(&p, 9) &&
	      planned(&p, 9)->added && released(&p, 7) && p.n.rings_published == 2,
	      "pin 7 -> 9: a new entry 9, both rings republished, 7 released (%s)", e.msg);
	live_apply(lv, &p);
	done(&p, c);
	rc = plan(busy, lv, NULL, &p, &c, &e);
	CHECK(rc == -EBUSY && strstr(e.msg, "backend 10.0.0.1:53: \"id\" 14 is in use by the "
				     "live backend 10.0.0.5:53") && strstr(e.msg, "nothing was changed"),
	      "a pin another live server holds: refused (%s)", e.msg);
	done(&p, c);
	rc = plan(stage, lv, "api", &p, &c, &e);
	CHECK(rc == 0 && gid(&p, "api", 2) == H4 + 1 && gid(&p, "api", 0) == 9 &&
	      p.nbackends == 1 && planned(&p, H4 + 1),
	      "ring stage: a pin of a ring not staged is kept free: 10.0.0.4 takes %u, not its "
	      "home %u", gid(&p, "api", 2), H4);
	done(&p, c);
	rc = plan(far, lv, NULL, &p, &c, &e);
	CHECK(rc == -ERANGE && strstr(e.msg, "\"id\" 2000 is beyond this instance's kr_backends "
				      "(1024 ids)"), "a pin beyond kr_backends: refused (%s)", e.msg);
	done(&p, c);
	kr_live_free(lv);
	free(lv);
}

/* Per-service counter ids (kr_svc_names): kept by name, new names the lowest free id, ids
 * of removed services released after them (not reused by the same apply); none without the
 * map. */
static void test_svc_ids(void)
{
	static const char two[] = CFG_HEAD WEB2 " ], \"services\": [ " SVC("dns", 53) ", "
				  SVC("dns2", 54) " ] }";
	static const char swap[] = CFG_HEAD WEB2 " ], \"services\": [ " SVC("dns4", 56) ", "
				   SVC("dns2", 54) " ] }";
	struct kr_live *lv = live_new();
	struct kr_apply_plan p;
	struct kr_config *c;
	struct kr_err e;
	int rc;

	rc = plan(two, lv, NULL, &p, &c, &e);
	CHECK(rc == 0 && p.nservices == 2 && !p.services[0].v.stats_id && !p.nsvc_names,
	      "no kr_svc_names (an older program): stats id 0, no names written");
	done(&p, c);
	lv->has_svc_names = true;
	lv->svc_names = calloc(KR_MAX_SVC_STATS, sizeof(*lv->svc_names));
	rc = plan(two, lv, NULL, &p, &c, &e);
	CHECK(rc == 0 && p.nservices == 2 && p.services[0].v.stats_id == 1 &&
	      p.services[1].v.stats_id == 2, "services 'dns', 'dns2': stats ids 1 and 2");
	CHECK(p.nsvc_names == 2 && p.svc_names[0].fresh && !strcmp(p.svc_names[1].v.name, "dns2") &&
	      ntohs(p.svc_names[1].v.key.port) == 54, "both names written, fresh (counters zeroed)");
	live_apply(lv, &p);
	done(&p, c);
	rc = plan(two, lv, NULL, &p, &c, &e);
	CHECK(rc == 0 && !p.nservices && !p.nsvc_names && !p.nsvc_names_del,
	      "the same services again: nothing written");
	done(&p, c);
	rc = plan(swap, lv, NULL, &p, &c, &e);
	CHECK(rc == 0 && p.nsvc_names == 1 && p.svc_names[0].id == 3 && p.svc_names[0].fresh &&
	      !strcmp(p.svc_names[0].v.name, "dns4"),
	      "a new service takes id 3: id 1 of the removed 'dns' is not reused by this apply");
	CHECK(p.nsvc_names_del == 1 && p.svc_names_del[0] == 1, "id 1 ('dns') released");
	CHECK(p.n.services_same == 1, "'dns2' keeps id 2 (its entry unchanged)");
	done(&p, c);
	kr_live_free(lv);
	free(lv);
}

#define WEB_HOT(hot, more)                                                                  \
	"{ \"name\": \"web\", \"format\": \"v2\", \"point_multiple\": 16, \"hot_keys\": " \
	hot ", \"backends\": [ " more                                                      \
	"{ \"address\": \"10.0.0.1:53\", \"mac\": \"02:00:00:00:00:01\" }, "                \
	"{ \"address\": \"10.0.0.3:53\", \"mac\": \"02:00:00:00:00:03\" } ] }"
#define CFG_HOT_MORE(hot, more)                                                             \
	CFG_HEAD WEB_HOT(hot, more) " ], \"services\": [ " SVC("dns", 53) " ] }"
#define CFG_HOT(hot) CFG_HOT_MORE(hot, "")

/* The planned write of hot key HASH, or NULL. */
static const struct kr_plan_hot *hot_planned(const struct kr_apply_plan *p, uint32_t hash)
{
	for (uint32_t i = 0; i < p->nhot; i++)
		if (p->hot[i].e.k.key_hash == hash)
			return &p->hot[i];
	return NULL;
}

/* A ring's "hot_keys" against kr_hot_keys: added, changed, removed, the controller's kept;
 * the entries of an id no ring holds removed; a plan of hot keys alone is a change; a
 * second plan is empty; a removed ring's entries go with it, the controller's too. */
static void test_hot_keys(void)
{
	static const char two[] = CFG_HOT("[ { \"hash\": \"0x00000011\", \"replicas\": 3 }, "
					  "{ \"hash\": \"0x00000022\", \"replicas\": 2 } ]");
	static const char one[] = CFG_HOT("[ { \"hash\": \"0x00000011\", \"replicas\": 4 } ]");
	static const char ctl[] = CFG_HOT("[ { \"hash\": \"0x00000011\", \"replicas\": 4 }, "
					  "{ \"hash\": \"0x00000033\", \"replicas\": 5 } ]");
	static const char two3[] = CFG_HOT_MORE("[ { \"hash\": \"0x00000011\", \"replicas\": "
						"3 }, { \"hash\": \"0x00000022\", \"replicas\": 2 } ]",
						"{ \"address\": \"10.0.0.2:53\", \"mac\": "
						"\"02:00:00:00:00:02\" }, ");
	struct kr_hot_ent extra[] = {
		{ { 0, 0x33 }, { 5, KR_HOT_F_CONTROLLER } },	/* the controller's: stays */
		{ { 0, 0x44 }, { 2, 0 } },			/* `hotkey add`: goes */
		{ { 7, 0x11 }, { 2, 0 } },			/* an id no ring holds: goes */
	};
	struct kr_live *lv = live_new();
	const struct kr_plan_hot *h;
	struct kr_apply_plan p;
	struct kr_config *c;
	struct kr_err e;
	int rc;

	rc = plan(two, lv, NULL, &p, &c, &e);
	CHECK(rc == -EOPNOTSUPP && strstr(e.msg, "no hot keys (map kr_hot_keys)") &&
	      strstr(e.msg, "nothing was changed"),
	      "hot keys on a program without kr_hot_keys: refused before anything (%s)", e.msg);
	done(&p, c);
	lv->has_hot = true;
	rc = plan(two, lv, NULL, &p, &c, &e);
	CHECK(rc == 0 && p.nhot == 2 && p.n.hot_keys_added == 2 && !p.n.hot_keys_changed &&
	      !p.n.hot_keys_removed, "first apply: both hot keys added (%s)", e.msg);
	h = hot_planned(&p, 0x22);
	CHECK(h && h->act == KR_PLAN_HOT_ADD && h->e.k.ring_id == p.rings[0].ring_id &&
	      h->e.v.replicas == 2 && !h->e.v.flags && !strcmp(h->ring, "web"),
	      "hot key 0x22: ring web's id, replicas 2, flags 0");
	live_apply(lv, &p);
	done(&p, c);
	rc = plan(two, lv, NULL, &p, &c, &e);
	CHECK(rc == 0 && !p.nhot && !kr_apply_plan_changes(&p),
	      "the same hot keys again: nothing changes");
	done(&p, c);
	for (uint32_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++)
		live_hot_set(lv, &extra[i], false);
	rc = plan(one, lv, NULL, &p, &c, &e);
	CHECK(rc == 0 && p.rings[0].act == KR_PLAN_SAME && !p.nbackends && !p.nservices &&
	      kr_apply_plan_changes(&p), "only hot keys differ: the ring is unchanged, the plan "
	      "is a change all the same");
	h = hot_planned(&p, 0x11);
	CHECK(h && h->act == KR_PLAN_HOT_CHANGE && h->e.k.ring_id == 0 && h->was.replicas == 3 &&
	      h->e.v.replicas == 4, "0x11: replicas 3 -> 4");
	CHECK(p.n.hot_keys_changed == 1 && p.n.hot_keys_removed == 3 && !p.n.hot_keys_added &&
	      p.nhot == 4, "1 changed, 3 removed (0x22, 0x44, and id 7's 0x11)");
	CHECK(hot_planned(&p, 0x44) && hot_planned(&p, 0x44)->act == KR_PLAN_HOT_DEL &&
	      !hot_planned(&p, 0x33), "an entry the config doesn't name goes, the controller's "
	      "stays");
	for (uint32_t i = 0; i < p.nhot; i++)
		CHECK(p.hot[i].e.k.ring_id == 0 ||
		      (p.hot[i].e.k.ring_id == 7 && p.hot[i].act == KR_PLAN_HOT_DEL &&
		       !p.hot[i].ring),
		      "hot write %u: ring id 0, or the delete of id 7's entry (no ring: NULL)",
		      i);
	live_apply(lv, &p);
	done(&p, c);
	CHECK(apply_converges(one, lv, "hot keys"), "the same again: nothing changes");
	rc = plan(ctl, lv, NULL, &p, &c, &e);
	h = hot_planned(&p, 0x33);
	CHECK(rc == 0 && p.nhot == 1 && h && h->act == KR_PLAN_HOT_CHANGE &&
	      h->was.flags == KR_HOT_F_CONTROLLER && !h->e.v.flags,
	      "the config names the controller's key: its entry becomes the config's (flag off)");
	done(&p, c);
	lv->ring[0].ctl = kr_ctl_make(0, 1ull << 30, KR_RING_MIGRATING);
	rc = plan(two3, lv, NULL, &p, &c, &e);
	CHECK(rc == 0 && p.rings[0].act == KR_PLAN_SKIP && p.n.hot_keys_added == 1 &&
	      p.n.hot_keys_changed == 1, "a migrating ring is left alone, its hot keys are "
	      "written all the same");
	done(&p, c);
	lv->ring[0].ctl = kr_ctl_make(0, 0, KR_RING_IDLE);
	rc = plan(two3, lv, "web", &p, &c, &e);
	CHECK(rc == 0 && p.rings[0].act == KR_PLAN_STAGE && !p.nhot && !p.n.hot_keys_added,
	      "ring stage of a new version writes no hot keys");
	done(&p, c);
	{	/* a ring the config no longer has: its entries go with it, the controller's too
		 * (a ring that later gets id 9 must not inherit them) */
		struct kr_hot_ent old[] = { { { 9, 0x55 }, { 3, KR_HOT_F_CONTROLLER } },
					    { { 9, 0x66 }, { 2, 0 } } };
		const struct kr_plan_hot *h5, *h6;

		snprintf(lv->ring[9].name, sizeof(lv->ring[9].name), "old");
		for (uint32_t i = 0; i < 2; i++)
			live_hot_set(lv, &old[i], false);
		rc = plan(one, lv, NULL, &p, &c, &e);
		h5 = hot_planned(&p, 0x55);
		h6 = hot_planned(&p, 0x66);
		CHECK(rc == 0 && p.nrings_del == 1 && p.rings_del[0].id == 9 && h5 && h6 &&
		      h5->act == KR_PLAN_HOT_DEL && h6->act == KR_PLAN_HOT_DEL &&
		      h5->e.k.ring_id == 9 && !strcmp(h5->ring, "old") && !strcmp(h6->ring, "old"),
		      "ring 'old' (id 9) removed: both its hot keys removed, named by it (%s)",
		      e.msg);
		CHECK(!hot_planned(&p, 0x11) || hot_planned(&p, 0x11)->e.k.ring_id != 9,
		      "nothing else of id 9 planned");
		done(&p, c);
	}
	kr_live_free(lv);
	free(lv);
	{	/* leftovers at an id no ring holds, and a ring new in this apply takes the id:
		 * it does not inherit the controller's entry; an id past the rings is left */
		struct kr_hot_ent left[] = { { { 0, 0x77 }, { 4, KR_HOT_F_CONTROLLER } },
					     { { 300, 0x88 }, { 2, 0 } } };
		const struct kr_plan_hot *h7;

		lv = live_new();
		lv->has_hot = true;
		for (uint32_t i = 0; i < 2; i++)
			live_hot_set(lv, &left[i], false);
		rc = plan(two, lv, NULL, &p, &c, &e);
		h7 = hot_planned(&p, 0x77);
		CHECK(rc == 0 && p.rings[0].ring_id == 0 && p.rings[0].new_id && h7 &&
		      h7->act == KR_PLAN_HOT_DEL && h7->ring && !strcmp(h7->ring, "web") &&
		      p.n.hot_keys_added == 2 && p.n.hot_keys_removed == 1 && !hot_planned(&p, 0x88),
		      "a new ring on id 0: the controller's leftover 0x77 removed, its own 2 added, "
		      "id 300's entry left alone (%s)", e.msg);
		done(&p, c);
	}
	kr_live_free(lv);
	free(lv);
}

int main(void)
{
	struct kr_live *lv = test_first_apply();

	test_remove_backend(lv);
	test_remove_services(lv);
	test_health(lv);
	test_migrating_and_stage(lv);
	test_ring_removed(lv);
	kr_live_free(lv);
	free(lv);
	test_missing_dev();
	test_shared_ids();
	test_in_place();
	test_state_merge();
	test_per_ring_ids_converge();
	test_no_ids_and_migrating();
	test_canonical();
	test_pins();
	test_svc_ids();
	test_hot_keys();
	return tap_done();
}
