/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The keyrouter configuration: one JSON file (docs/config.md), parsed with jansson and
 * validated completely before anything touches the kernel.
 *
 *   struct kr_config *cfg = kr_config_load("keyrouter.json", &errs);
 *   if (!cfg) { fputs(errs, stderr); free(errs); return 1; }
 *   ... cfg->rings[i], cfg->services[j] ...
 *   kr_config_free(cfg);
 *
 * `//` line comments and lines whose first non-blank character is `#` are allowed: they are
 * blanked out (same length) before jansson parses the text, so its line:column positions
 * stay exact.  Every error names the file, the line:column where known and the JSON path
 * (rings[1].backends[3].address), and what was expected.  All errors are reported, not
 * just the first (up to KR_CFG_MAX_ERRORS).
 */
#ifndef KR_CONFIG_H
#define KR_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kr_datapath_kern_user.h"
#include "keyform.h"
#include "addr.h"
#include "continuum.h"
#include "err.h"
#include "health.h"

#define KR_CFG_NAME_MAX		63	/* ring/service/instance names: [A-Za-z0-9_.-] */
#define KR_CFG_MAX_TAGS		64	/* distinct tags per ring (a 64-bit mask) */
#define KR_CFG_MAX_SERVICES	KR_MAX_SERVICES	/* = the kernel map kr_services (1024) */
#define KR_CFG_MAX_ERRORS	50
#define KR_CFG_DEFAULT_PM	160	/* points per weight unit: v1 always, v2 default */
#define KR_CFG_IFNAMSIZ		16

/* enum kr_fwd_mode (KR_FWD_L2, KR_FWD_IPIP) and enum kr_policy (KR_POLICY_PASS, _DROP)
 * are the data path's, in kr_datapath_kern_user.h. */

/* A server ID of a backend for one QUIC-LB config rotation ("quic_lb_server_ids"). */
struct kr_cfg_qlb_sid {
	uint8_t cr;			/* config rotation 0..6 */
	uint8_t len;			/* 1..15 */
	uint8_t id[15];
};

/* One QUIC-LB configuration of a quic service ("quic_lb", docs/quic.md). */
struct kr_cfg_qlb {
	uint8_t cr;			/* config rotation 0..6 */
	uint8_t sid_len;		/* 1..15 */
	uint8_t nonce_len;		/* 4..18 */
	uint8_t su_len;			/* server-use octets (0..) */
	bool has_key;			/* keyed (single/four pass), else plaintext */
	uint8_t key[16];		/* never printed */
	char *key_file;			/* resolved path (config show) */
};

struct kr_cfg_backend {
	struct kr_sockaddr addr;	/* ip + port (engine's parser, user/core/addr.h) */
	uint32_t weight;		/* 0 = drained: no points */
	uint8_t state;			/* enum kr_backend_state: UP, DOWN or DRAIN */
	bool has_mac;
	uint8_t mac[6];			/* l2 forwarding: the backend's MAC */
	char dev[KR_CFG_IFNAMSIZ];	/* l2 egress device name ("" = not given) */
	uint32_t ifindex;		/* l2 egress ifindex (0 = not given / resolve dev) */
	bool has_id;			/* "id": the server's backend id is pinned ... */
	uint32_t id;			/* ... to this one (in every ring that lists it) */
	uint64_t tags;			/* bit i set = carries ring->tags[i] */
	struct kr_cfg_qlb_sid *qlb_sids;	/* QUIC-LB server IDs (any rotation) */
	uint32_t nqlb_sids;
	struct kr_cfg_health *health;	/* "health": overrides the ring's; NULL: none */
	bool has_spill;			/* "spill" given: fixed (KR_BACKEND_F_SPILL_FIXED) */
	uint16_t spill;			/* its fraction in units of 2^-16 (kr_backend.spill) */
};

/* A hot key of a ring ("hot_keys"): its hash (the key text hashed as the ring's services
 * hash their keys, or given as "hash") and its replicas. */
struct kr_cfg_hot_key {
	char *key;			/* as given; NULL with "hash" */
	uint32_t hash;
	uint32_t replicas;		/* KR_MIN_REPLICAS..KR_MAX_REPLICAS */
};

#define KR_SPILL_MAX		0.99	/* largest "spill" / --spill */
/* A spill fraction 0..KR_SPILL_MAX -> units of 2^-16 (rounded). */
static inline uint16_t kr_spill_units(double f)
{
	return (uint16_t)(f * 65536.0 + 0.5);
}

struct kr_cfg_ring {
	char *name;
	uint32_t format;		/* 1 (ketama v1) or 2 (v2) */
	uint32_t point_multiple;	/* points per weight unit (v1: 160) */
	bool pm_auto;			/* "point_multiple": "auto" (set by the planner hook) */
	double target_cv;		/* with pm_auto: the target imbalance */
	struct kr_cfg_backend *backends;	/* file order = ring-local index */
	uint32_t nbackends;
	char *tags[KR_CFG_MAX_TAGS];	/* distinct tags of the backends, first-seen order */
	uint32_t ntags;
	uint64_t npoints;		/* sum of weight * point_multiple (before dedup) */
	struct kr_cfg_health health;	/* "health" (set = 0: every default) */
	struct kr_cfg_hot_key *hot_keys;	/* "hot_keys" */
	uint32_t nhot_keys;
};

struct kr_cfg_service {
	char *name;
	/* VIP: vip_any = the wildcard ("*", "0.0.0.0" or "::": any local address of
	 * either family, one wildcard per port in the data path; vip.family 0); else
	 * vip.family/vip.ip.  vip.port = port. */
	bool vip_any;
	struct kr_sockaddr vip;
	uint16_t port;			/* host order, 1..65535 */
	uint8_t protocol;		/* IPPROTO_UDP */
	struct kr_keyspec key;
	uint32_t ring;			/* index into kr_config.rings */
	char **subset;			/* tags a backend must ALL carry; NULL = whole ring */
	uint32_t nsubset;
	uint64_t subset_mask;		/* the same as bits of ring->tags */
	struct {
		uint8_t mode;		/* enum kr_fwd_mode */
		bool has_source4, has_source6;
		uint8_t source4[4];	/* ipip: outer source for IPv4 backends */
		uint8_t source6[16];	/* ipip: outer source for IPv6 backends */
	} fwd;
	struct {
		uint8_t no_key;		/* enum kr_policy: the key cannot be found */
		uint8_t key_too_long;	/* the key is longer than KR_MAX_KEY_LEN */
		uint8_t all_down;	/* no route: every backend the walk reaches is down
					 * (kr_service.policy_no_route) */
	} policy;
	struct kr_cfg_qlb *qlb;		/* quic: QUIC-LB configurations ("quic_lb"), any order */
	uint32_t nqlb;
};

/* "hash": how keys are hashed onto the rings (SECURITY.md "Hash flooding"). */
struct kr_cfg_hash {
	bool keyed;			/* "siphash13" (else "crc32": the ketama hash) */
	char *secret_file;		/* as given (relative: to the configuration's directory) */
	uint8_t secret[16];		/* never printed */
};

/* The share of a ring's keys one apply may move at once (docs/config.md "max_move"). */
#define KR_CFG_DEFAULT_MAX_MOVE	0.25

struct kr_config {
	char *file;
	char *instance;			/* NULL: not given (the tool's default applies) */
	struct kr_cfg_hash hash;
	struct kr_cfg_ring *rings;
	uint32_t nrings;
	struct kr_cfg_service *services;
	uint32_t nservices;
	double max_move;		/* apply refuses to move more of a ring's keys at once
					 * (0..1; KR_CFG_DEFAULT_MAX_MOVE when not given) */
	bool has_max_move;
	char *warnings;			/* NULL, or one warning per line (the error format,
					 * "warning: " before the message): nonsense that can
					 * be meant, e.g. a ring of gigabytes */
};

/*
 * Load and validate FILE ("-" = standard input).  On success returns the configuration and *errs = NULL.
 * On failure returns NULL and *errs = a malloc'd text, one error per line:
 *   FILE:LINE:COL: PATH: message        (or FILE: message when nothing is positioned)
 */
struct kr_config *kr_config_load(const char *file, char **errs);
/* The same from a string (file is only used in messages). */
struct kr_config *kr_config_parse(const char *file, const char *text, size_t len,
				  char **errs);
void kr_config_free(struct kr_config *cfg);

/* Lookups by name: index, or -1. */
int kr_config_ring(const struct kr_config *cfg, const char *name);
int kr_config_service(const struct kr_config *cfg, const char *name);

/* Is backend b of a service's ring in the service's subset? */
static inline bool kr_cfg_in_subset(const struct kr_cfg_service *s,
				    const struct kr_cfg_backend *b)
{
	return (b->tags & s->subset_mask) == s->subset_mask;
}

/* The service's QUIC-LB configuration for config rotation cr, or NULL. */
static inline const struct kr_cfg_qlb *kr_cfg_qlb_find(const struct kr_cfg_service *s,
						       unsigned cr)
{
	for (uint32_t i = 0; i < s->nqlb; i++)
		if (s->qlb[i].cr == cr)
			return &s->qlb[i];
	return NULL;
}

/* Builds ring ri of the configuration (its backends in file order, format, point_multiple)
 * with the continuum engine.  0, or -1 with err set.  Free with kr_ring_free(). */
int kr_config_ring_build(const struct kr_config *cfg, uint32_t ri, struct kr_ring **out,
			 struct kr_err *err);

/* The normalized configuration as JSON (every default filled in); malloc'd. */
char *kr_config_dump_json(const struct kr_config *cfg);

/* Hot keys: KEY's hash as the services of ring ri hash their keys (their key type and
 * spec; the configuration's "hash").  0, or -1 with err (no service, QUIC, services that
 * disagree, a key their form refuses). */
int kr_cfg_hot_hash(const struct kr_config *cfg, uint32_t ri, const char *key, uint32_t *hash,
		    struct kr_err *err);
/* Does a QUIC service use ring ri (then no spill and no hot keys apply to its keys)? */
int kr_cfg_ring_has_quic(const struct kr_config *cfg, uint32_t ri);

/* Estimated kernel memory of a ring's image (bytes), from its point count before dedup. */
uint64_t kr_cfg_ring_image_bytes(const struct kr_cfg_ring *ring);

/*
 * `"point_multiple": "auto"`: the analytics planner's theory answer (config_auto.c), called
 * by the loader once per "auto" ring after its backends are parsed; sets *pm to the
 * point_multiple reaching target_cv.  Returns 0, or -1 with err set.
 */
int kr_config_auto_point_multiple(const struct kr_cfg_ring *ring, double target_cv,
				  uint32_t *pm, struct kr_err *err);

/* Read a 128-bit key file (the keyed hash's secret_file, QUIC-LB key_file, `quic-lb
 * --key-file`): a regular file of root or the caller, mode without group/other bits, 32
 * hex digits.  0, or -1 with err set (never quoting the content). */
int kr_key_file_read(const char *path, uint8_t out[16], struct kr_err *err);

/* Blank `//` comments and `#` comment lines (outside strings) in place, keeping every
 * other byte and every newline where it is. */
void kr_config_strip_comments(char *text, size_t len);

#endif /* KR_CONFIG_H */
