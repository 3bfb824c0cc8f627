// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The field tables of the configuration's objects (config_int.h: the parser's field check,
 * config show and the docs check read them) and the normalized configuration as JSON: every
 * default filled in (`config show`), each object's fields in its table's order.  The health
 * check's table is in config_health.c.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "config_int.h"

/* A field's dump function fn returning expr, with o = obj as type and u = up as utype. */
#define DUMP(fn, type, utype, expr)                                                         \
	static json_t *fn(const struct kr_cfg_field *f, const void *obj, const void *up,    \
			  unsigned v)                                                       \
	{                                                                                   \
		const type *o = obj;                                                        \
		const utype *u = up;                                                        \
		(void)f; (void)o; (void)u; (void)v;                                         \
		return expr;                                                                \
	}

json_t *cfg_fields_json(enum kr_cfg_obj t, unsigned v, const void *obj, const void *up)
{
	json_t *o = json_object(), *x;

	for (const struct kr_cfg_field *f = kr_cfg_objects[t].fields; f->name; f++) {
		if (!f->dump || (v && f->only && !(f->only & v)))
			continue;
		x = f->dump(f, obj, up, v);
		if (x)
			json_object_set_new(o, f->name, x);
	}
	return o;
}

static json_t *ip_json(const struct kr_sockaddr *a)
{
	char buf[KR_IP_STRLEN];

	kr_ip_format(a, buf);
	return json_string(buf);
}

static json_t *ip_bytes_json(unsigned family, const uint8_t *ip)
{
	struct kr_sockaddr a = { .family = (uint8_t)family };

	memcpy(a.ip, ip, family == 4 ? 4 : 16);
	return ip_json(&a);
}

/* ---- backends ---------------------------------------------------------------------- */

static json_t *be_address(const struct kr_cfg_field *f, const void *obj, const void *up,
			  unsigned v)
{
	const struct kr_cfg_backend *b = obj;
	char buf[KR_SOCKADDR_STRLEN];

	(void)f; (void)up; (void)v;
	kr_sockaddr_format(&b->addr, buf);
	return json_string(buf);
}

static json_t *be_mac(const struct kr_cfg_field *f, const void *obj, const void *up,
		      unsigned v)
{
	const struct kr_cfg_backend *b = obj;
	char buf[18];

	(void)f; (void)up; (void)v;
	if (!b->has_mac)
		return NULL;
	snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", b->mac[0], b->mac[1],
		 b->mac[2], b->mac[3], b->mac[4], b->mac[5]);
	return json_string(buf);
}

static json_t *be_tags(const struct kr_cfg_field *f, const void *obj, const void *up,
		       unsigned v)
{
	const struct kr_cfg_backend *b = obj;
	const struct kr_cfg_ring *r = up;
	json_t *tags = json_array();

	(void)f; (void)v;
	for (uint32_t t = 0; t < r->ntags; t++)
		if (b->tags & (1ull << t))
			json_array_append_new(tags, json_string(r->tags[t]));
	return tags;
}

static json_t *be_qlb_sids(const struct kr_cfg_field *f, const void *obj, const void *up,
			   unsigned v)
{
	const struct kr_cfg_backend *b = obj;
	char h[32], k[2] = { 0, 0 };
	json_t *m;

	(void)f; (void)up; (void)v;
	if (!b->nqlb_sids)
		return NULL;
	m = json_object();
	for (unsigned cr = 0; cr < KR_QLB_MAX_CONFIGS; cr++) {
		json_t *a = json_array();

		for (uint32_t i = 0; i < b->nqlb_sids; i++)
			if (b->qlb_sids[i].cr == cr) {
				cfg_qlb_hex(b->qlb_sids[i].id, b->qlb_sids[i].len, h);
				json_array_append_new(a, json_string(h));
			}
		k[0] = (char)('0' + cr);
		if (json_array_size(a))
			json_object_set_new(m, k, a);
		else
			json_decref(a);
	}
	return m;
}

static const char *const state_names[] = { "up", "down", "drain", "unused" };

DUMP(be_weight, struct kr_cfg_backend, void, json_integer(o->weight))
DUMP(be_state, struct kr_cfg_backend, void, json_string(state_names[o->state & 3]))
DUMP(be_dev, struct kr_cfg_backend, void, o->dev[0] ? json_string(o->dev) : NULL)
DUMP(be_ifindex, struct kr_cfg_backend, void, o->ifindex ? json_integer(o->ifindex) : NULL)
DUMP(be_id, struct kr_cfg_backend, void, o->has_id ? json_integer(o->id) : NULL)
DUMP(be_health, struct kr_cfg_backend, void,
     o->health ? cfg_fields_json(KR_CFG_OBJ_HEALTH, KR_CFG_V_BACKEND, o->health, o) : NULL)

/* the units as a fraction that rounds back to them */
DUMP(be_spill, struct kr_cfg_backend, void, o->has_spill ? json_real(o->spill / 65536.0) : NULL)

static const struct kr_cfg_field backend_fields[] = {
	KR_CFG_FIELD("address", 0, be_address),
	KR_CFG_FIELD("weight", 0, be_weight),
	KR_CFG_FIELD("state", 0, be_state),
	KR_CFG_FIELD("mac", 0, be_mac),
	KR_CFG_FIELD("dev", 0, be_dev),
	KR_CFG_FIELD("ifindex", 0, be_ifindex),
	KR_CFG_FIELD("id", 0, be_id),
	KR_CFG_FIELD("tags", 0, be_tags),
	KR_CFG_FIELD("quic_lb_server_ids", 0, be_qlb_sids),
	KR_CFG_FIELD("health", 0, be_health),
	KR_CFG_FIELD("spill", 0, be_spill),
	{ .name = NULL },
};

/* ---- rings ------------------------------------------------------------------------- */

static json_t *ring_backends(const struct kr_cfg_field *f, const void *obj, const void *up,
			     unsigned v)
{
	const struct kr_cfg_ring *r = obj;
	json_t *bs = json_array();

	(void)f; (void)up; (void)v;
	for (uint32_t i = 0; i < r->nbackends; i++)
		json_array_append_new(bs, cfg_fields_json(KR_CFG_OBJ_BACKEND, 0, &r->backends[i], r));
	return bs;
}

DUMP(ring_name, struct kr_cfg_ring, void, json_string(o->name))
DUMP(ring_format, struct kr_cfg_ring, void, json_string(o->format == 1 ? "v1" : "v2"))
/* "auto": the planner's answer, pinned (target_cv is only valid next to "auto", and the
 * normalized file must load again and give the very same ring) */
DUMP(ring_pm, struct kr_cfg_ring, void, json_integer(o->point_multiple))
DUMP(ring_health, struct kr_cfg_ring, void,
     cfg_fields_json(KR_CFG_OBJ_HEALTH, KR_CFG_V_RING, &o->health, o))

static json_t *ring_hot_keys(const struct kr_cfg_field *f, const void *obj, const void *up,
			     unsigned v)
{
	const struct kr_cfg_ring *r = obj;
	json_t *hs;
	char h[16];

	(void)f; (void)up; (void)v;
	if (!r->nhot_keys)
		return NULL;
	hs = json_array();
	for (uint32_t i = 0; i < r->nhot_keys; i++) {
		snprintf(h, sizeof(h), "0x%08x", r->hot_keys[i].hash);
		json_array_append_new(hs, json_pack("{s:s,s:i}", "hash", h, "replicas",
						    (int)r->hot_keys[i].replicas));
	}
	return hs;
}

static const struct kr_cfg_field ring_fields[] = {
	KR_CFG_FIELD("name", 0, ring_name),
	KR_CFG_FIELD("format", 0, ring_format),
	KR_CFG_FIELD("point_multiple", 0, ring_pm),
	KR_CFG_FIELD("target_cv", 0, NULL),		/* written as the point_multiple it gave */
	KR_CFG_FIELD("backends", 0, ring_backends),
	KR_CFG_FIELD("health", 0, ring_health),
	KR_CFG_FIELD("hot_keys", 0, ring_hot_keys),
	{ .name = NULL },
};

/* ---- services ---------------------------------------------------------------------- */

#define KEY_PAYLOAD	KR_CFG_V_KEY(KR_KEY_PAYLOAD)

DUMP(key_type, struct kr_keyspec, void, json_string(kr_key_type_name(o->type)))
DUMP(key_offset, struct kr_keyspec, void, json_integer(o->offset))
DUMP(key_length, struct kr_keyspec, void, o->length ? json_integer(o->length) : NULL)
DUMP(key_delimiter, struct kr_keyspec, void, o->delimiter >= 0 ? json_integer(o->delimiter) : NULL)
DUMP(key_cid_length, struct kr_keyspec, void, json_integer(o->cid_length))

static const struct kr_cfg_field key_fields[] = {
	KR_CFG_FIELD("type", 0, key_type),
	KR_CFG_FIELD("offset", KEY_PAYLOAD, key_offset),
	KR_CFG_FIELD("length", KEY_PAYLOAD, key_length),
	KR_CFG_FIELD("delimiter", KEY_PAYLOAD, key_delimiter),
	KR_CFG_FIELD("cid_length", KR_CFG_V_KEY(KR_KEY_QUIC), key_cid_length),
	{ .name = NULL },
};

DUMP(fwd_mode, struct kr_cfg_service, void, json_string(o->fwd.mode == KR_FWD_L2 ? "l2" : "ipip"))
DUMP(fwd_source4, struct kr_cfg_service, void,
     o->fwd.has_source4 ? ip_bytes_json(4, o->fwd.source4) : NULL)
DUMP(fwd_source6, struct kr_cfg_service, void,
     o->fwd.has_source6 ? ip_bytes_json(6, o->fwd.source6) : NULL)

static const struct kr_cfg_field forward_fields[] = {
	KR_CFG_FIELD("mode", 0, fwd_mode),
	KR_CFG_FIELD("source4", KR_CFG_V_IPIP, fwd_source4),
	KR_CFG_FIELD("source6", KR_CFG_V_IPIP, fwd_source6),
	{ .name = NULL },
};

/* A typed field: "pass" or "drop" (enum kr_policy) in the uint8_t at f->off. */
static const char *const pass_drop[] = { "pass", "drop", NULL };

static json_t *dump_pass_drop(const struct kr_cfg_field *f, const void *obj, const void *up,
			      unsigned v)
{
	(void)up; (void)v;
	return json_string(pass_drop[*((const uint8_t *)obj + f->off) & 1]);
}

static void parse_pass_drop(struct ctx *c, json_t *o, const struct kr_cfg_field *f, void *obj,
			    void *up)
{
	int v;

	(void)f; (void)up;
	if (!cfg_get_enum(c, o, f->name, pass_drop, &v))
		*((uint8_t *)obj + f->off) = (uint8_t)v;
}

#define POLICY(name, member)                                                               \
	{ name, 0, dump_pass_drop, parse_pass_drop, offsetof(struct kr_cfg_service, policy.member) }

static const struct kr_cfg_field policy_fields[] = {
	POLICY("no_key", no_key),
	POLICY("key_too_long", key_too_long),
	POLICY("all_down", all_down),
	{ .name = NULL },
};

DUMP(qlb_cr, struct kr_cfg_qlb, void, json_integer(o->cr))
DUMP(qlb_sid_len, struct kr_cfg_qlb, void, json_integer(o->sid_len))
DUMP(qlb_nonce_len, struct kr_cfg_qlb, void, json_integer(o->nonce_len))
DUMP(qlb_su_len, struct kr_cfg_qlb, void, json_integer(o->su_len))
/* the key stays in its file */
DUMP(qlb_key_file, struct kr_cfg_qlb, void, o->has_key ? json_string(o->key_file) : NULL)

static const struct kr_cfg_field quic_lb_fields[] = {
	KR_CFG_FIELD("config_rotation", 0, qlb_cr),
	KR_CFG_FIELD("server_id_length", 0, qlb_sid_len),
	KR_CFG_FIELD("nonce_length", 0, qlb_nonce_len),
	KR_CFG_FIELD("server_use_length", 0, qlb_su_len),
	KR_CFG_FIELD("key_file", 0, qlb_key_file),
	{ .name = NULL },
};

static json_t *svc_subset(const struct kr_cfg_field *f, const void *obj, const void *up,
			  unsigned v)
{
	const struct kr_cfg_service *s = obj;
	json_t *sub;

	(void)f; (void)up; (void)v;
	if (!s->nsubset)
		return NULL;
	sub = json_array();
	for (uint32_t i = 0; i < s->nsubset; i++)
		json_array_append_new(sub, json_string(s->subset[i]));
	return sub;
}

static json_t *svc_quic_lb(const struct kr_cfg_field *f, const void *obj, const void *up,
			   unsigned v)
{
	const struct kr_cfg_service *s = obj;
	json_t *a;

	(void)f; (void)up; (void)v;
	if (!s->nqlb)
		return NULL;
	a = json_array();
	for (uint32_t i = 0; i < s->nqlb; i++)
		json_array_append_new(a, cfg_fields_json(KR_CFG_OBJ_QUIC_LB, 0, &s->qlb[i], s));
	return a;
}

DUMP(svc_name, struct kr_cfg_service, void, json_string(o->name))
DUMP(svc_vip, struct kr_cfg_service, void, o->vip_any ? json_string("*") : ip_json(&o->vip))
DUMP(svc_port, struct kr_cfg_service, void, json_integer(o->port))
DUMP(svc_protocol, struct kr_cfg_service, void, json_string("udp"))
DUMP(svc_key, struct kr_cfg_service, void,
     cfg_fields_json(KR_CFG_OBJ_KEY, KR_CFG_V_KEY(o->key.type), &o->key, o))
DUMP(svc_ring, struct kr_cfg_service, struct kr_config, json_string(u->rings[o->ring].name))
DUMP(svc_forward, struct kr_cfg_service, void,
     cfg_fields_json(KR_CFG_OBJ_FORWARD, o->fwd.mode == KR_FWD_L2 ? KR_CFG_V_L2 : KR_CFG_V_IPIP,
		     o, NULL))
DUMP(svc_policy, struct kr_cfg_service, void, cfg_fields_json(KR_CFG_OBJ_POLICY, 0, o, NULL))

static const struct kr_cfg_field service_fields[] = {
	KR_CFG_FIELD("name", 0, svc_name),
	KR_CFG_FIELD("vip", 0, svc_vip),
	KR_CFG_FIELD("port", 0, svc_port),
	KR_CFG_FIELD("protocol", 0, svc_protocol),
	KR_CFG_FIELD("key", 0, svc_key),
	KR_CFG_FIELD("ring", 0, svc_ring),
	KR_CFG_FIELD("subset", 0, svc_subset),
	KR_CFG_FIELD("forward", 0, svc_forward),
	KR_CFG_FIELD("policy", 0, svc_policy),
	KR_CFG_FIELD("quic_lb", 0, svc_quic_lb),
	{ .name = NULL },
};

/* ---- the top level ----------------------------------------------------------------- */

static json_t *top_rings(const struct kr_cfg_field *f, const void *obj, const void *up,
			 unsigned v)
{
	const struct kr_config *cfg = obj;
	json_t *a = json_array();

	(void)f; (void)up; (void)v;
	for (uint32_t i = 0; i < cfg->nrings; i++)
		json_array_append_new(a, cfg_fields_json(KR_CFG_OBJ_RING, 0, &cfg->rings[i], cfg));
	return a;
}

static json_t *top_services(const struct kr_cfg_field *f, const void *obj, const void *up,
			    unsigned v)
{
	const struct kr_config *cfg = obj;
	json_t *a = json_array();

	(void)f; (void)up; (void)v;
	for (uint32_t i = 0; i < cfg->nservices; i++)
		json_array_append_new(a, cfg_fields_json(KR_CFG_OBJ_SERVICE, 0, &cfg->services[i],
							 cfg));
	return a;
}

/* the secret stays in its file */
DUMP(hash_function, struct kr_cfg_hash, void, json_string("siphash13"))
DUMP(hash_secret_file, struct kr_cfg_hash, void,
     json_string(o->secret_file ? o->secret_file : ""))

static const struct kr_cfg_field hash_fields[] = {
	KR_CFG_FIELD("function", 0, hash_function),
	KR_CFG_FIELD("secret_file", 0, hash_secret_file),
	{ .name = NULL },
};

DUMP(top_instance, struct kr_config, void, o->instance ? json_string(o->instance) : NULL)
DUMP(top_hash, struct kr_config, void,
     o->hash.keyed ? cfg_fields_json(KR_CFG_OBJ_HASH, 0, &o->hash, o) : NULL)

DUMP(top_max_move, struct kr_config, void, json_real(o->max_move))

static const struct kr_cfg_field top_fields[] = {
	KR_CFG_FIELD("instance", 0, top_instance),
	KR_CFG_FIELD("hash", 0, top_hash),
	KR_CFG_FIELD("max_move", 0, top_max_move),
	KR_CFG_FIELD("rings", 0, top_rings),
	KR_CFG_FIELD("services", 0, top_services),
	{ .name = NULL },
};

/* a ring's "hot_keys" entries (config_hot.c parses them; the ring's dump writes them as
 * their hashes) */
static const struct kr_cfg_field hot_key_fields[] = {
	KR_CFG_FIELD("key", 0, NULL),
	KR_CFG_FIELD("hash", 0, NULL),
	KR_CFG_FIELD("replicas", 0, NULL),
	{ .name = NULL },
};

const struct kr_cfg_object kr_cfg_objects[KR_CFG_NOBJ] = {
	[KR_CFG_OBJ_TOP] = { "## Top level", top_fields },
	[KR_CFG_OBJ_HASH] = { "## Keyed hash", hash_fields },
	[KR_CFG_OBJ_RING] = { "## Rings", ring_fields },
	[KR_CFG_OBJ_BACKEND] = { "### Backends", backend_fields },
	[KR_CFG_OBJ_HEALTH] = { "### Health checks (`health`)", cfg_health_fields },
	[KR_CFG_OBJ_SERVICE] = { "## Services", service_fields },
	[KR_CFG_OBJ_KEY] = { "### Key extractors (`key`)", key_fields },
	[KR_CFG_OBJ_FORWARD] = { "### Forwarding (`forward`)", forward_fields },
	[KR_CFG_OBJ_POLICY] = { "### Policies (`policy`)", policy_fields },
	[KR_CFG_OBJ_QUIC_LB] = { "### QUIC-LB (`quic_lb`)", quic_lb_fields },
	[KR_CFG_OBJ_HOT_KEY] = { "### Hot keys (`hot_keys`)", hot_key_fields },
};

char *kr_config_dump_json(const struct kr_config *cfg)
{
	json_t *root = cfg_fields_json(KR_CFG_OBJ_TOP, 0, cfg, NULL);
	char *out = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	json_decref(root);
	return out;
}
