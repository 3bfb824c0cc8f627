// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The normalized configuration as JSON: every default filled in (`config show`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "config_int.h"

/* ---- normalized JSON -------------------------------------------------------------- */

static json_t *ip_json(const struct kr_sockaddr *a)
{
	char buf[KR_IP_STRLEN];

	kr_ip_format(a, buf);
	return json_string(buf);
}

static json_t *backend_json(const struct kr_cfg_ring *r, const struct kr_cfg_backend *b)
{
	static const char *const st[] = { "up", "down", "drain", "unused" };
	char buf[KR_SOCKADDR_STRLEN];
	json_t *o = json_object(), *tags = json_array();

	kr_sockaddr_format(&b->addr, buf);
	json_object_set_new(o, "address", json_string(buf));
	json_object_set_new(o, "weight", json_integer(b->weight));
	json_object_set_new(o, "state", json_string(st[b->state & 3]));
	if (b->has_mac) {
		snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", b->mac[0], b->mac[1],
			 b->mac[2], b->mac[3], b->mac[4], b->mac[5]);
		json_object_set_new(o, "mac", json_string(buf));
	}
	if (b->dev[0])
		json_object_set_new(o, "dev", json_string(b->dev));
	if (b->ifindex)
		json_object_set_new(o, "ifindex", json_integer(b->ifindex));
	if (b->has_id)
		json_object_set_new(o, "id", json_integer(b->id));
	for (uint32_t t = 0; t < r->ntags; t++)
		if (b->tags & (1ull << t))
			json_array_append_new(tags, json_string(r->tags[t]));
	json_object_set_new(o, "tags", tags);
	if (b->nqlb_sids) {
		json_t *m = json_object();
		char h[32], k[2] = { 0, 0 };

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
		json_object_set_new(o, "quic_lb_server_ids", m);
	}
	if (b->health)
		json_object_set_new(o, "health", cfg_health_json(b->health, false));
	if (b->has_spill)	/* the units as a fraction that rounds back to them */
		json_object_set_new(o, "spill", json_real(b->spill / 65536.0));
	return o;
}

static json_t *ring_json(const struct kr_cfg_ring *r)
{
	json_t *o = json_object(), *bs = json_array();

	json_object_set_new(o, "name", json_string(r->name));
	json_object_set_new(o, "format", json_string(r->format == 1 ? "v1" : "v2"));
	/* "auto": the planner's answer, pinned (target_cv is only valid next to "auto", and
	 * the normalized file must load again and give the very same ring). */
	json_object_set_new(o, "point_multiple", json_integer(r->point_multiple));
	for (uint32_t i = 0; i < r->nbackends; i++)
		json_array_append_new(bs, backend_json(r, &r->backends[i]));
	json_object_set_new(o, "backends", bs);
	json_object_set_new(o, "health", cfg_health_json(&r->health, true));
	if (r->nhot_keys) {
		json_t *hs = json_array();
		char h[16];

		for (uint32_t i = 0; i < r->nhot_keys; i++) {
			snprintf(h, sizeof(h), "0x%08x", r->hot_keys[i].hash);
			json_array_append_new(hs, json_pack("{s:s,s:i}", "hash", h, "replicas",
							    (int)r->hot_keys[i].replicas));
		}
		json_object_set_new(o, "hot_keys", hs);
	}
	return o;
}

static json_t *key_json(const struct kr_keyspec *k)
{
	json_t *o = json_object();

	json_object_set_new(o, "type", json_string(kr_key_type_name(k->type)));
	if (k->type == KR_KEY_PAYLOAD) {
		json_object_set_new(o, "offset", json_integer(k->offset));
		if (k->length)
			json_object_set_new(o, "length", json_integer(k->length));
		if (k->delimiter >= 0)
			json_object_set_new(o, "delimiter", json_integer(k->delimiter));
	}
	if (k->type == KR_KEY_QUIC)
		json_object_set_new(o, "cid_length", json_integer(k->cid_length));
	return o;
}

static json_t *service_json(const struct kr_config *cfg, const struct kr_cfg_service *s)
{
	static const char *const pol[] = { "pass", "drop" };
	json_t *o = json_object(), *f = json_object(), *p = json_object(), *sub;
	struct kr_sockaddr a = { .family = 4 };

	json_object_set_new(o, "name", json_string(s->name));
	if (s->vip_any)
		json_object_set_new(o, "vip", json_string("*"));
	else
		json_object_set_new(o, "vip", ip_json(&s->vip));
	json_object_set_new(o, "port", json_integer(s->port));
	json_object_set_new(o, "protocol", json_string("udp"));
	json_object_set_new(o, "key", key_json(&s->key));
	json_object_set_new(o, "ring", json_string(cfg->rings[s->ring].name));
	if (s->nsubset) {
		sub = json_array();
		for (uint32_t i = 0; i < s->nsubset; i++)
			json_array_append_new(sub, json_string(s->subset[i]));
		json_object_set_new(o, "subset", sub);
	}
	json_object_set_new(f, "mode", json_string(s->fwd.mode == KR_FWD_L2 ? "l2" : "ipip"));
	if (s->fwd.has_source4) {
		memcpy(a.ip, s->fwd.source4, 4);
		json_object_set_new(f, "source4", ip_json(&a));
	}
	if (s->fwd.has_source6) {
		a.family = 6;
		memcpy(a.ip, s->fwd.source6, 16);
		json_object_set_new(f, "source6", ip_json(&a));
	}
	json_object_set_new(o, "forward", f);
	json_object_set_new(p, "no_key", json_string(pol[s->policy.no_key & 1]));
	json_object_set_new(p, "key_too_long", json_string(pol[s->policy.key_too_long & 1]));
	json_object_set_new(p, "all_down", json_string(pol[s->policy.all_down & 1]));
	json_object_set_new(o, "policy", p);
	if (s->nqlb) {
		json_t *a = json_array();

		for (uint32_t i = 0; i < s->nqlb; i++) {
			json_t *q = json_object();

			json_object_set_new(q, "config_rotation", json_integer(s->qlb[i].cr));
			json_object_set_new(q, "server_id_length", json_integer(s->qlb[i].sid_len));
			json_object_set_new(q, "nonce_length", json_integer(s->qlb[i].nonce_len));
			json_object_set_new(q, "server_use_length", json_integer(s->qlb[i].su_len));
			if (s->qlb[i].has_key)	/* the key stays in its file */
				json_object_set_new(q, "key_file", json_string(s->qlb[i].key_file));
			json_array_append_new(a, q);
		}
		json_object_set_new(o, "quic_lb", a);
	}
	return o;
}

char *kr_config_dump_json(const struct kr_config *cfg)
{
	json_t *root = json_object(), *rings = json_array(), *svcs = json_array();
	char *out;

	if (cfg->instance)
		json_object_set_new(root, "instance", json_string(cfg->instance));
	if (cfg->hash.keyed) {	/* the secret stays in its file */
		json_t *h = json_object();

		json_object_set_new(h, "function", json_string("siphash13"));
		json_object_set_new(h, "secret_file", json_string(cfg->hash.secret_file ?
								  cfg->hash.secret_file : ""));
		json_object_set_new(root, "hash", h);
	}
	for (uint32_t i = 0; i < cfg->nrings; i++)
		json_array_append_new(rings, ring_json(&cfg->rings[i]));
	for (uint32_t i = 0; i < cfg->nservices; i++)
		json_array_append_new(svcs, service_json(cfg, &cfg->services[i]));
	json_object_set_new(root, "rings", rings);
	json_object_set_new(root, "services", svcs);
	out = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	return out;
}

