// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Health checks: defaults, probes, the rise/fall state machine (see health.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "health.h"
#include "keyform.h"

const char *kr_probe_name(uint8_t probe)
{
	static const char *const n[] = { "auto", "none", "dns", "memcached", "quic", "udp" };

	return probe < sizeof(n) / sizeof(n[0]) ? n[probe] : "?";
}

void kr_cfg_health_free(struct kr_cfg_health *h)
{
	if (!h)
		return;
	free(h->name);
	free(h->request);
	free(h->expect);
	memset(h, 0, sizeof(*h));
}

/* The fields of h that were given, over out. */
static void overlay(struct kr_health_eff *out, const struct kr_cfg_health *h)
{
	if (!h)
		return;
	if (h->set & KR_HC_PROBE)
		out->probe = h->probe;
	if (h->set & KR_HC_NAME)
		snprintf(out->name, sizeof(out->name), "%s", h->name);
	if (h->set & KR_HC_RCODES)
		out->rcodes = h->rcodes;
	if (h->set & KR_HC_REQUEST) {
		memcpy(out->request, h->request, h->request_len);
		out->request_len = h->request_len;
	}
	if (h->set & KR_HC_EXPECT) {
		memcpy(out->expect, h->expect, h->expect_len);
		out->expect_len = h->expect_len;
	}
	if (h->set & KR_HC_INTERVAL)
		out->interval_ms = h->interval_ms;
	if (h->set & KR_HC_TIMEOUT)
		out->timeout_ms = h->timeout_ms;
	if (h->set & KR_HC_JITTER)
		out->jitter_ms = h->jitter_ms;
	if (h->set & KR_HC_RISE)
		out->rise = h->rise;
	if (h->set & KR_HC_FALL)
		out->fall = h->fall;
	if (h->set & KR_HC_PANIC)
		out->panic = h->panic;
	if (h->set & KR_HC_DAMP_SUPPRESS)
		out->damp.suppress = h->damp_suppress;
	if (h->set & KR_HC_DAMP_REUSE)
		out->damp.reuse = h->damp_reuse;
	if (h->set & KR_HC_DAMP_HALF_LIFE)
		out->damp.half_life_ms = h->damp_half_life_ms;
	if (h->set & KR_HC_DAMP_MAX_HOLD)
		out->damp.max_hold_ms = h->damp_max_hold_ms;
}

void kr_health_resolve(const struct kr_config *cfg, uint32_t ri, uint32_t bi, uint32_t si,
		       struct kr_health_eff *out)
{
	const struct kr_cfg_ring *r = &cfg->rings[ri];
	bool jitter_given;

	memset(out, 0, sizeof(*out));
	out->probe = KR_PROBE_AUTO;
	snprintf(out->name, sizeof(out->name), "%s", KR_HC_DEF_DNS_NAME);
	out->interval_ms = KR_HC_DEF_INTERVAL_MS;
	out->timeout_ms = KR_HC_DEF_TIMEOUT_MS;
	out->rise = KR_HC_DEF_RISE;
	out->fall = KR_HC_DEF_FALL;
	out->panic = KR_HC_DEF_PANIC;
	out->damp = (struct kr_damp_params){ KR_HC_DEF_DAMP_SUPPRESS, KR_HC_DEF_DAMP_REUSE,
					     KR_HC_DEF_DAMP_HALF_LIFE_MS,
					     KR_HC_DEF_DAMP_MAX_HOLD_MS };
	overlay(out, &r->health);
	overlay(out, r->backends[bi].health);
	jitter_given = (r->health.set & KR_HC_JITTER) ||
		       (r->backends[bi].health && (r->backends[bi].health->set & KR_HC_JITTER));
	if (!jitter_given)
		out->jitter_ms = out->interval_ms * KR_HC_DEF_JITTER_PCT / 100;
	if (out->timeout_ms > out->interval_ms)	/* an interval given without a timeout */
		out->timeout_ms = out->interval_ms;
	if (out->jitter_ms * 2 > out->interval_ms)	/* the ring's jitter, a backend's interval */
		out->jitter_ms = out->interval_ms / 2;
	if (out->probe == KR_PROBE_AUTO) {
		switch (si < cfg->nservices ? cfg->services[si].key.type : 0) {
		case KR_KEY_DNS: out->probe = KR_PROBE_DNS; break;
		case KR_KEY_MEMCACHE: out->probe = KR_PROBE_MEMCACHED; break;
		case KR_KEY_QUIC: out->probe = KR_PROBE_QUIC; break;
		default: out->probe = out->request_len ? KR_PROBE_UDP : KR_PROBE_NONE; break;
		}
	}
}

/* ---- probes ---------------------------------------------------------------------------- */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* The connection IDs of a QUIC probe: 8 bytes from seq, so a reply can be matched. */
static void quic_cid(uint32_t seq, uint8_t cid[8], uint8_t tag)
{
	for (int i = 0; i < 4; i++)
		cid[i] = (uint8_t)(seq >> (24 - 8 * i));
	cid[4] = 'k';
	cid[5] = 'r';
	cid[6] = 'h';
	cid[7] = tag;
}

#define QUIC_PROBE_VERSION	0x1a2a3a4au	/* reserved for greasing (RFC 9000 §15) */
#define QUIC_MIN_INITIAL	1200		/* a server ignores shorter datagrams */

int kr_probe_build(const struct kr_health_eff *h, uint32_t seq, uint8_t *buf, size_t cap)
{
	struct kr_key k;
	bool chaos;
	size_t n;

	switch (h->probe) {
	case KR_PROBE_DNS:
		if (kr_keyform_dns(h->name, &k, NULL) || 12 + k.len + 4 > cap)
			return -1;
		/* the default, id.server CH TXT, is answered by the server itself (no
		 * recursion, no zone needed); any other name: IN A, recursion desired */
		chaos = !strcmp(h->name, KR_HC_DEF_DNS_NAME);
		memset(buf, 0, 12);
		put16(buf, (uint16_t)seq);	/* ID */
		buf[2] = chaos ? 0 : 0x01;	/* RD */
		put16(buf + 4, 1);		/* QDCOUNT */
		memcpy(buf + 12, k.b, k.len);
		put16(buf + 12 + k.len, chaos ? 16 : 1);	/* QTYPE TXT / A */
		put16(buf + 14 + k.len, chaos ? 3 : 1);		/* QCLASS CH / IN */
		return (int)(16 + k.len);
	case KR_PROBE_MEMCACHED:
		/* UDP frame header: request id, sequence 0, 1 datagram, reserved */
		if (cap < 8 + 9)
			return -1;
		memset(buf, 0, 8);
		put16(buf, (uint16_t)seq);
		put16(buf + 4, 1);
		memcpy(buf + 8, "version\r\n", 9);
		return 17;
	case KR_PROBE_QUIC: {
		uint8_t cid[8];

		if (cap < QUIC_MIN_INITIAL)
			return -1;
		memset(buf, 0, QUIC_MIN_INITIAL);
		buf[0] = 0xc0;			/* long header, fixed bit */
		buf[1] = QUIC_PROBE_VERSION >> 24;
		buf[2] = (QUIC_PROBE_VERSION >> 16) & 0xff;
		buf[3] = (QUIC_PROBE_VERSION >> 8) & 0xff;
		buf[4] = QUIC_PROBE_VERSION & 0xff;
		buf[5] = 8;
		quic_cid(seq, cid, 'd');
		memcpy(buf + 6, cid, 8);
		buf[14] = 8;
		quic_cid(seq, cid, 's');
		memcpy(buf + 15, cid, 8);
		return QUIC_MIN_INITIAL;
	}
	case KR_PROBE_UDP:
		n = h->request_len < cap ? h->request_len : cap;
		memcpy(buf, h->request, n);
		return (int)n;
	default:
		return -1;
	}
}

bool kr_probe_match(const struct kr_health_eff *h, uint32_t seq, const uint8_t *r, size_t len)
{
	switch (h->probe) {
	case KR_PROBE_DNS:
		if (len < 12 || get16(r) != (uint16_t)seq || !(r[2] & 0x80))
			return false;
		return !h->rcodes || (h->rcodes & (1u << (r[3] & 0x0f)));
	case KR_PROBE_MEMCACHED:
		return len >= 8 + 8 && get16(r) == (uint16_t)seq && !memcmp(r + 8, "VERSION ", 8);
	case KR_PROBE_QUIC: {
		uint8_t cid[8];

		/* Version Negotiation: long header, version 0, DCID = our SCID, SCID = our
		 * DCID (RFC 9000 §17.2.1), then supported versions */
		if (len < 1 + 4 + 1 + 8 + 1 + 8 + 4 || !(r[0] & 0x80) || r[1] || r[2] || r[3] ||
		    r[4] || r[5] != 8)
			return false;
		quic_cid(seq, cid, 's');
		if (memcmp(r + 6, cid, 8) || r[14] != 8)
			return false;
		quic_cid(seq, cid, 'd');
		return !memcmp(r + 15, cid, 8);
	}
	case KR_PROBE_UDP:
		return len >= h->expect_len && !memcmp(r, h->expect, h->expect_len);
	default:
		return false;
	}
}

/* ---- state machine --------------------------------------------------------------------- */

enum kr_hsm_event kr_hsm_result(struct kr_hsm *s, bool ok, uint32_t rise, uint32_t fall)
{
	if (ok) {
		s->fail_run = 0;
		if (s->ok_run < UINT32_MAX)
			s->ok_run++;
		return !s->up && s->ok_run >= rise ? KR_HSM_WANT_UP : KR_HSM_NONE;
	}
	s->ok_run = 0;
	if (s->fail_run < UINT32_MAX)
		s->fail_run++;
	return s->up && s->fail_run >= fall ? KR_HSM_WANT_DOWN : KR_HSM_NONE;
}

void kr_hsm_set(struct kr_hsm *s, bool up)
{
	s->up = up;
}

bool kr_health_panic(uint32_t up, uint32_t total, double panic)
{
	return up == 0 || (double)(up - 1) < panic * (double)total;
}

bool kr_health_overridden(uint8_t state, uint8_t owner)
{
	return state != KR_BACKEND_UP && owner != KR_OWNER_CHECKER;
}

uint32_t kr_health_watchdog_ms(const struct kr_config *cfg)
{
	uint32_t ms = UINT32_MAX;

	for (uint32_t ri = 0; ri < cfg->nrings; ri++)
		if ((cfg->rings[ri].health.set & KR_HC_WATCHDOG) &&
		    cfg->rings[ri].health.watchdog_ms < ms)
			ms = cfg->rings[ri].health.watchdog_ms;
	return ms == UINT32_MAX ? KR_HC_DEF_WATCHDOG_MS : ms;
}

/* ---- flap damping ------------------------------------------------------------------------ */

double kr_damp_penalty(const struct kr_damp *d, const struct kr_damp_params *p, uint64_t now_ms)
{
	double dt = now_ms > d->at_ms ? (double)(now_ms - d->at_ms) : 0;

	if (!p->half_life_ms)
		return 0;
	return d->penalty * exp2(-dt / p->half_life_ms);
}

static bool damp_add(struct kr_damp *d, const struct kr_damp_params *p, uint64_t now_ms,
		     double add)
{
	double ceiling = (double)p->reuse * exp2((double)p->max_hold_ms / p->half_life_ms);

	d->flaps++;
	d->seen_up = false;
	if (!p->suppress || !p->half_life_ms)
		return false;	/* no damping */
	d->penalty = kr_damp_penalty(d, p, now_ms) + add;
	if (d->penalty > ceiling)
		d->penalty = ceiling;
	d->at_ms = now_ms;
	if (d->penalty > p->suppress)
		d->held = true;
	return d->held;
}

bool kr_damp_flap(struct kr_damp *d, const struct kr_damp_params *p, uint64_t now_ms)
{
	return damp_add(d, p, now_ms, KR_DAMP_PENALTY);
}

bool kr_damp_blip(struct kr_damp *d, const struct kr_damp_params *p, uint64_t now_ms)
{
	return damp_add(d, p, now_ms, KR_DAMP_BLIP);
}

bool kr_damp_may_up(struct kr_damp *d, const struct kr_damp_params *p, uint64_t now_ms)
{
	if (!d->held)
		return true;
	if (kr_damp_penalty(d, p, now_ms) >= p->reuse)
		return false;
	d->held = false;
	d->seen_up = false;
	return true;
}

uint64_t kr_damp_release_ms(const struct kr_damp *d, const struct kr_damp_params *p,
			    uint64_t now_ms)
{
	double pen = kr_damp_penalty(d, p, now_ms);

	if (!d->held || pen < p->reuse || !p->reuse)
		return 0;
	return (uint64_t)ceil(p->half_life_ms * log2(pen / p->reuse));
}

uint32_t kr_csum_add(uint32_t sum, const void *p, size_t len)
{
	const uint8_t *b = p;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(b[i] << 8 | b[i + 1]);
	if (len & 1)
		sum += (uint32_t)b[len - 1] << 8;
	return sum;
}

uint16_t kr_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}
