/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Inside the configuration loader (not for other users): the parse context -- the JSON
 * path of the value being checked, the collected errors and warnings -- shared by
 *   config.c         the schema walk: rings, backends, services, the top level
 *   config_pos.c     comments, the JSON path, line:column positions, the messages
 *   config_secret.c  the keyed-hash secret file
 *   config_dump.c    the normalized configuration as JSON, the field tables
 *   config_ids.c     backend "id" pins: one id per server, one server per id
 */
#ifndef KR_CONFIG_INT_H
#define KR_CONFIG_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "config.h"

#define CFG_MAX_DEPTH 12

struct seg {
	const char *key;	/* object member, or NULL: array index */
	size_t idx;
};

struct cfg_msg {
	unsigned line, col, seq;	/* line 0: no position (sorted first) */
	char *text;
};

struct ctx {
	const char *file;
	const char *text;	/* comment-stripped JSON, for positions */
	size_t len;
	struct seg path[CFG_MAX_DEPTH];
	int depth;
	struct cfg_msg *msgs;	/* the errors, sorted by position at the end */
	unsigned nmsgs, nerr;
	struct cfg_msg *wmsgs;	/* the warnings */
	unsigned nwmsgs;
	struct kr_config *cfg;
};

/* The path: push a member name or an array index while descending, pop after. */
void cfg_push_key(struct ctx *c, const char *key);
void cfg_push_idx(struct ctx *c, size_t idx);
void cfg_pop(struct ctx *c);
/* "rings[1].backends[3].address" */
void cfg_path_str(const struct ctx *c, char *buf, size_t n);
/* line:column of the value at the path (at_name: of its member name); false if unknown. */
bool cfg_locate(const struct ctx *c, bool at_name, unsigned *line, unsigned *col);

/* Messages "FILE:LINE:COL: PATH: message", sorted by position when joined. */
void cfg_add_msg(struct ctx *c, unsigned line, unsigned col, const char *text);
/* All messages in file order, one per line; frees them.  malloc'd. */
char *cfg_msgs_join(struct ctx *c);
/* An error about the value at the current path. */
void cfg_err(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An error about the member name at the current path (points at the name). */
void cfg_nerr(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An error about member KEY of the object at the current path. */
void cfg_kerr(struct ctx *c, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A warning about member KEY: does not fail the load (cfg->warnings). */
void cfg_kwarn(struct ctx *c, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* "hash": {"secret_file": ...}: reads the secret into c->cfg->hash.secret (config_secret.c). */
void cfg_load_secret(struct ctx *c, const char *given);
/* A 128-bit key file given in member FIELD (the secret's checks): 0, or -1 (reported);
 * *resolved = the path (malloc'd, for config show). */
int cfg_load_key_file(struct ctx *c, const char *field, const char *given, uint8_t out[16],
		      char **resolved);

/*
 * The fields of each object of the configuration: one table per object, which the parser's
 * field check (cfg_check_fields), the dump (cfg_fields_json: config show writes the fields
 * in the table's order) and the documentation check (tests/unit/test_config_fields.c: the
 * first table under the heading `doc` of docs/config.md names exactly these fields) read.
 * Adding a field is a row: its name, the variants of the object that have it, how config
 * show writes it and, for a field the object's own parse function does not read, how it is
 * parsed (the table parses those after the object's own fields: cfg_fields_parse).
 */
struct kr_cfg_field {
	const char *name;
	unsigned only;		/* the object's variants that have it (a mask); 0: every one */
	/* its value in the normalized configuration, or NULL: not written.  obj: the object's
	 * struct (struct kr_cfg_backend, ...); up: its parent's (the ring, the configuration);
	 * v: the variant */
	json_t *(*dump)(const struct kr_cfg_field *f, const void *obj, const void *up, unsigned v);
	/* reads member f->name of o into obj (reporting errors), or NULL: the object's parse
	 * function reads it */
	void (*parse)(struct ctx *c, json_t *o, const struct kr_cfg_field *f, void *obj, void *up);
	size_t off;		/* for typed dumps and parsers: the member's offset in obj */
};

/* A row whose dump and parse functions are its own (no offset). */
#define KR_CFG_FIELD(name_, only_, dump_) { .name = (name_), .only = (only_), .dump = (dump_) }

enum kr_cfg_obj {
	KR_CFG_OBJ_TOP, KR_CFG_OBJ_HASH, KR_CFG_OBJ_RING, KR_CFG_OBJ_BACKEND, KR_CFG_OBJ_HEALTH,
	KR_CFG_OBJ_SERVICE, KR_CFG_OBJ_KEY, KR_CFG_OBJ_FORWARD, KR_CFG_OBJ_POLICY,
	KR_CFG_OBJ_QUIC_LB, KR_CFG_OBJ_HOT_KEY, KR_CFG_NOBJ,
};

struct kr_cfg_object {
	const char *doc;			/* its heading in docs/config.md */
	const struct kr_cfg_field *fields;	/* ends with a NULL name */
};

extern const struct kr_cfg_object kr_cfg_objects[KR_CFG_NOBJ];
extern const struct kr_cfg_field cfg_health_fields[];	/* config_health.c */

/* Variants (the `only` masks): a health check's owner, a key's type, a forwarding mode. */
#define KR_CFG_V_RING		1u	/* health */
#define KR_CFG_V_BACKEND	2u
#define KR_CFG_V_KEY(type)	(1u << (type))	/* enum kr_key_type */
#define KR_CFG_V_L2		1u	/* forward */
#define KR_CFG_V_IPIP		2u

/* Every member of obj must be a field of object t for variant v (0: any field): an error
 * per unknown member, naming what ("a backend") and the fields allowed. */
void cfg_check_fields(struct ctx *c, json_t *obj, enum kr_cfg_obj t, unsigned v, const char *what);
/* The fields of t (variant v) that the table parses (their parse function), in order. */
void cfg_fields_parse(struct ctx *c, enum kr_cfg_obj t, unsigned v, json_t *o, void *obj,
		      void *up);
/* A JSON object of the fields of t (variant v) that have a value, in the table's order. */
json_t *cfg_fields_json(enum kr_cfg_obj t, unsigned v, const void *obj, const void *up);

/* The typed getters of config.c, for the other parts of the loader: 1 absent, 0 ok, -1
 * error (reported). */
int cfg_get_str(struct ctx *c, json_t *obj, const char *key, const char **out);
int cfg_get_uint(struct ctx *c, json_t *obj, const char *key, uint64_t min, uint64_t max,
		 uint64_t *out);
int cfg_get_enum(struct ctx *c, json_t *obj, const char *key, const char *const *names, int *out);
const char *cfg_jtype(const json_t *v);

/* "health" of a ring (ring = true: panic_threshold allowed) or of a backend, in o
 * (config_health.c); *out zeroed first.  Returns 1 absent, 0 parsed (errors reported). */
int cfg_parse_health(struct ctx *c, json_t *o, bool ring, struct kr_cfg_health *out);

/* The backends' "id" pins over every ring (config_ids.c): conflicts reported, a server's
 * pin copied to its other rings. */
void cfg_check_backend_ids(struct ctx *c);

/* A QUIC-LB server ID in hex (2 * n + 1 bytes of out). */
void cfg_qlb_hex(const uint8_t *p, unsigned n, char *out);

/* Every ring's "hot_keys" (config_hot.c), after the services. */
void cfg_parse_hot_keys(struct ctx *c, json_t *root);

#endif
