// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * apply's plan (user/core/apply_plan.c) on hand-made live states, without a kernel: what is
 * published and why, ids kept and released, services and rings removed, migrating rings
 * left alone, health state kept, a missing device refused, and ring stage's outcomes.
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
	CHECK(p.nbackends == 3 && p.backends[0].id == 0 && p.backends[2].id == 2 &&
	      p.backends[1].v.addr[3] == 2 && p.backends[1].v.family == 4,
	      "first apply: ids 0..2, entries carry the addresses");
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
	CHECK(p.rings[0].unit->gid[0] == 0 && p.rings[0].unit->gid[1] == 2,
	      "the remaining backends keep ids 0 and 2");
	CHECK(p.nbackends_release == 1 && p.backends_release[0] == 1,
	      "id 1 (10.0.0.2) is released: no image references it afterwards");
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
	CHECK(rc == 0 && p.nbackends == 1 && p.backends[0].id == 2 && !p.backends[0].added &&
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
	CHECK(p.rings[0].unit->gid[0] == 3,
	      "the new backend takes the lowest id no image references before the apply (3)");
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
	return tap_done();
}
