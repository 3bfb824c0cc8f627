// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A ring's "hot_keys" (docs/config.md): [{"key": "...", "replicas": K} or {"hash": "0x...",
 * "replicas": K}], parsed after the services, since a key's text is hashed as the ring's
 * services hash their keys (their key type and spec, and the configuration's "hash").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config_int.h"
#include "continuum.h"
#include "keyform.h"
#include "kr_siphash.h"

int kr_cfg_hot_hash(const struct kr_config *cfg, uint32_t ri, const char *text, uint32_t *hash,
		    struct kr_err *err)
{
	const char *ring = cfg->rings[ri].name;
	bool any = false;

	for (uint32_t i = 0; i < cfg->nservices; i++) {
		const struct kr_cfg_service *s = &cfg->services[i];
		struct kr_hash_secret sec;
		struct kr_err e = { "" };
		struct kr_key k;
		uint32_t h;

		if (s->ring != ri)
			continue;
		if (s->key.type == KR_KEY_QUIC)
			return kr_errf(err, "ring '%s' carries QUIC service '%s': a QUIC connection "
				       "ID must stay on its backend while the connection lives, so "
				       "QUIC rings take no hot keys (nor spill)", ring, s->name);
		if (kr_keyform(s->key.type, &s->key, text, &k, &e))
			return kr_errf(err, "key '%s' as service '%s' (%s) reads it: %s", text,
				       s->name, kr_key_type_name(s->key.type), e.msg);
		if (cfg->hash.keyed) {
			kr_hash_secret_from_bytes(&sec, cfg->hash.secret);
			h = kr_siphash13_32(k.b, k.len, &sec);
		} else {
			h = kr_key_hash(k.b, k.len);
		}
		if (any && h != *hash)
			return kr_errf(err, "key '%s': the services of ring '%s' hash it differently "
				       "(other key types or specs): give its \"hash\" instead", text,
				       ring);
		*hash = h;
		any = true;
	}
	if (!any)
		return kr_errf(err, "ring '%s' has no service to say how key '%s' is hashed: give "
			       "its \"hash\" (0x...) instead", ring, text);
	return 0;
}

int kr_cfg_ring_has_quic(const struct kr_config *cfg, uint32_t ri)
{
	for (uint32_t i = 0; i < cfg->nservices; i++)
		if (cfg->services[i].ring == ri && cfg->services[i].key.type == KR_KEY_QUIC)
			return 1;
	return 0;
}

static void parse_hot_key(struct ctx *c, json_t *o, uint32_t ri, struct kr_cfg_hot_key *hk)
{
	const char *key = NULL, *hs = NULL;
	struct kr_err e = { "" };
	uint64_t u;
	char *end;
	int rc;

	if (!json_is_object(o)) {
		cfg_err(c, "expected a hot key {\"key\": \"...\", \"replicas\": %d}, got %s",
			KR_MIN_REPLICAS + 1, cfg_jtype(o));
		return;
	}
	cfg_check_fields(c, o, KR_CFG_OBJ_HOT_KEY, 0, "a hot key");
	cfg_get_str(c, o, "key", &key);
	cfg_get_str(c, o, "hash", &hs);
	if (!key == !hs) {
		cfg_err(c, "give the key's text (\"key\") or its hash (\"hash\": \"0x...\"), one "
			"of them");
		return;
	}
	rc = cfg_get_uint(c, o, "replicas", KR_MIN_REPLICAS, KR_MAX_REPLICAS, &u);
	if (rc == 1)
		cfg_kerr(c, "replicas", "missing: the number of distinct backends to spread the "
			 "key over, %d..%d", KR_MIN_REPLICAS, KR_MAX_REPLICAS);
	if (rc)
		return;
	hk->replicas = (uint32_t)u;
	if (hs) {
		u = strtoull(hs, &end, 16);
		if (strncmp(hs, "0x", 2) || !hs[2] || *end || u > UINT32_MAX)
			cfg_kerr(c, "hash", "'%s' is not a 32-bit hash: expected 0x and 1..8 hex "
				 "digits", hs);
		else if (kr_cfg_ring_has_quic(c->cfg, ri))
			cfg_kerr(c, "hash", "ring '%s' carries a QUIC service: QUIC rings take no "
				 "hot keys", c->cfg->rings[ri].name);
		hk->hash = (uint32_t)u;
		return;
	}
	hk->key = strdup(key);
	if (kr_cfg_hot_hash(c->cfg, ri, key, &hk->hash, &e))
		cfg_kerr(c, "key", "%s", e.msg);
}

void cfg_parse_hot_keys(struct ctx *c, json_t *root)
{
	json_t *rings = json_object_get(root, "rings"), *o, *arr, *x;
	size_t i, j;

	json_array_foreach(rings, i, o) {
		struct kr_cfg_ring *r;

		if (i >= c->cfg->nrings || !(arr = json_object_get(o, "hot_keys")))
			continue;
		r = &c->cfg->rings[i];
		cfg_push_key(c, "rings");
		cfg_push_idx(c, i);
		cfg_push_key(c, "hot_keys");
		if (!json_is_array(arr) || json_array_size(arr) > KR_MAX_HOT_KEYS) {
			cfg_err(c, "expected an array of at most %d hot keys", KR_MAX_HOT_KEYS);
			goto next;
		}
		r->hot_keys = calloc(json_array_size(arr) + 1, sizeof(*r->hot_keys));
		if (!r->hot_keys) {
			cfg_err(c, "out of memory");
			goto next;
		}
		json_array_foreach(arr, j, x) {
			cfg_push_idx(c, j);
			parse_hot_key(c, x, (uint32_t)i, &r->hot_keys[r->nhot_keys++]);
			for (uint32_t k = 0; k + 1 < r->nhot_keys; k++)
				if (r->hot_keys[k].hash == r->hot_keys[r->nhot_keys - 1].hash)
					cfg_err(c, "the same hash (0x%08x) as hot_keys[%u]: one entry "
						"per hash", r->hot_keys[k].hash, k);
			cfg_pop(c);
		}
next:
		cfg_pop(c);
		cfg_pop(c);
		cfg_pop(c);
	}
}
