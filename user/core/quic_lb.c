// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* QUIC-LB decode in userspace: the load balancer's verdict on one CID (see quic_lb.h). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "crc32.h"
#include "quic_lb.h"

void kr_qlb_user_decode(const struct kr_qlb_conf *conf, const uint8_t *cid, size_t len,
			struct kr_qlb_verdict *v)
{
	struct kr_qlb_work w;

	memset(v, 0, sizeof(*v));
	if (len == 0) {
		v->outcome = KR_QLB_FB_TOO_SHORT;
		return;
	}
	v->cr = (uint8_t)kr_qlb_config_rotation(cid[0]);
	if (v->cr == KR_QLB_CR_UNROUTABLE) {
		v->outcome = KR_QLB_FB_UNROUTABLE;
		return;
	}
	if (len > KR_QLB_MAX_CID_LEN) {
		v->outcome = KR_QLB_FB_TOO_LONG;
		return;
	}
	memset(&w, 0, sizeof(w));
	memcpy(w.cid, cid, len);
	if (kr_qlb_decode(conf, &w, (__u32)len) != KR_QLB_OK) {
		v->outcome = KR_QLB_FB_TOO_SHORT;
		return;
	}
	v->routable = true;
	v->outcome = KR_QLB_FB_UNKNOWN_SID;	/* decoded; no server table here */
	v->sid_len = conf->sid_len;
	memcpy(v->sid, w.pt, conf->sid_len);
	memset(&w, 0, sizeof(w));
}

const char *kr_qlb_reason(const struct kr_qlb_verdict *v, const struct kr_qlb_conf *conf,
			  size_t len, char *buf, size_t n)
{
	switch (v->outcome) {
	case KR_QLB_FB_UNROUTABLE:
		snprintf(buf, n, "config rotation 7 (reserved for unroutable CIDs)");
		break;
	case KR_QLB_FB_TOO_LONG:
		snprintf(buf, n, "%zu octets: longer than 20", len);
		break;
	case KR_QLB_FB_TOO_SHORT:
		snprintf(buf, n, "%zu octets: too short for 1 + %u + %u", len, conf->sid_len,
			 conf->nonce_len);
		break;
	case KR_QLB_FB_UNKNOWN_CONFIG:
		snprintf(buf, n, "config rotation %u not configured", v->cr);
		break;
	default:
		snprintf(buf, n, "%s", kr_qlb_outcome_name(v->outcome));
		break;
	}
	return buf;
}

const char *kr_qlb_outcome_name(unsigned outcome)
{
	static const char *const names[] = {
		[KR_QLB_ROUTED] = "routed",
		[KR_QLB_FB_UNROUTABLE] = "unroutable",
		[KR_QLB_FB_UNKNOWN_CONFIG] = "unknown_config",
		[KR_QLB_FB_UNKNOWN_SID] = "unknown_server_id",
		[KR_QLB_FB_TOO_SHORT] = "too_short",
		[KR_QLB_FB_BACKEND_DOWN] = "backend_down",
		[KR_QLB_FB_TOO_LONG] = "too_long",
	};

	return outcome < KR_QLB_NOUTCOMES ? names[outcome] : "?";
}


void kr_qlb_cfg_route(const struct kr_config *cfg, const struct kr_cfg_service *s,
		      const uint8_t *cid, size_t len, struct kr_qlb_verdict *v, uint32_t *backend)
{
	const struct kr_cfg_ring *r = &cfg->rings[s->ring];
	const struct kr_cfg_qlb *q;
	struct kr_qlb_conf conf;

	memset(v, 0, sizeof(*v));
	*backend = 0;
	if (len == 0) {
		v->outcome = KR_QLB_FB_TOO_SHORT;
		return;
	}
	v->cr = (uint8_t)kr_qlb_config_rotation(cid[0]);
	if (v->cr == KR_QLB_CR_UNROUTABLE) {
		v->outcome = KR_QLB_FB_UNROUTABLE;
		return;
	}
	q = kr_cfg_qlb_find(s, v->cr);
	if (!q) {
		v->outcome = KR_QLB_FB_UNKNOWN_CONFIG;
		return;
	}
	kr_qlb_conf_init(&conf, q->sid_len, q->nonce_len, q->su_len, q->has_key ? q->key : NULL);
	kr_qlb_user_decode(&conf, cid, len, v);
	memset(&conf, 0, sizeof(conf));
	if (!v->routable)
		return;
	v->routable = false;
	v->outcome = KR_QLB_FB_UNKNOWN_SID;
	for (uint32_t i = 0; i < r->nbackends; i++) {
		const struct kr_cfg_backend *b = &r->backends[i];

		if (!kr_cfg_in_subset(s, b))
			continue;
		for (uint32_t k = 0; k < b->nqlb_sids; k++)
			if (b->qlb_sids[k].cr == v->cr && b->qlb_sids[k].len == v->sid_len &&
			    !memcmp(b->qlb_sids[k].id, v->sid, v->sid_len)) {
				*backend = i;
				/* drain keeps its connections (as the data path) */
				if (b->state == KR_BACKEND_DOWN) {
					v->outcome = KR_QLB_FB_BACKEND_DOWN;
				} else {
					v->outcome = KR_QLB_ROUTED;
					v->routable = true;
				}
				return;
			}
	}
}

uint16_t kr_qlb_service_id(const struct kr_config *cfg, uint32_t si)
{
	uint32_t id = 0;

	if (si >= cfg->nservices || !cfg->services[si].nqlb)
		return 0;
	for (uint32_t i = 0; i <= si; i++)
		id += cfg->services[i].nqlb > 0;
	return (uint16_t)id;
}

uint16_t kr_qlb_service_tag(const char *name)
{
	uint32_t c = kr_crc32(name, strlen(name));
	uint16_t t = (uint16_t)(c ^ (c >> 16));

	return t ? t : 1;
}

void kr_qlb_service_entry(const struct kr_config *cfg, uint32_t si, struct kr_service *v)
{
	uint16_t id = kr_qlb_service_id(cfg, si);

	if (!id)
		return;
	v->flags |= KR_SVC_F_QUIC_LB;
	v->qlb_id = id;
	v->qlb_tag = kr_qlb_service_tag(cfg->services[si].name);
}

void kr_qlb_conf_from_cfg(const struct kr_cfg_qlb *q, uint16_t tag, struct kr_qlb_conf *out)
{
	kr_qlb_conf_init(out, q->sid_len, q->nonce_len, q->su_len, q->has_key ? q->key : NULL);
	out->tag = tag;
}
