/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * apply, step 1: the plan.  A pure function of the configuration and of the live state of
 * the instance (read once by the kernel layer, user/kernel/ops_apply.c, or written by hand
 * in a test): which ring ids and backend ids (one per server, backend_ids.h) to assign,
 * which kr_backends entries to write, which rings to
 * publish (and why), which subset members, devices, services and hot keys to write, and
 * what to remove.  Nothing here touches the kernel; the executor (kr_ops_apply_exec) applies the
 * list in the safe order (ops_apply.h) and `apply --dry-run` prints it and stops.
 */
#ifndef KR_APPLY_PLAN_H
#define KR_APPLY_PLAN_H

#include <stdbool.h>
#include <stdint.h>
#include "kr_datapath_kern_user.h"
#include "kr_siphash.h"
#include "backend_ids.h"
#include "config.h"
#include "continuum.h"
#include "err.h"
#include "hot_ent.h"
#include "units.h"

/* ---- the live state (input) ----------------------------------------------------------- */

/* One slot of a ring id: the header of the published image and its backend table. */
struct kr_live_slot {
	bool present;
	struct kr_image_hdr hdr;
	uint32_t *bt;			/* [hdr.nbackends] global backend ids */
};

/* One ring id: its name in kr_ops_rings ("" = free), control word, both slots. */
struct kr_live_ring {
	char name[KR_NAME_MAX];
	uint32_t flags;			/* KR_OPS_RING_* */
	__u64 ctl;
	struct kr_live_slot slot[2];
};

struct kr_live_backend {		/* a kr_backends entry in use (family set) */
	uint32_t id;
	struct kr_backend v;
};

struct kr_live_service {		/* a kr_services entry */
	struct kr_service_key k;
	struct kr_service v;
};

/* An egress device the configuration names (a backend's "dev"/"ifindex", or the loaded
 * interface): ifindex 0 = no such device. */
struct kr_live_device {
	char name[KR_CFG_IFNAMSIZ];	/* "" when named by ifindex */
	uint32_t ifindex;
	bool has_mac;			/* its MAC is known (mac) */
	uint8_t mac[6];
	bool has_entry;			/* kr_devices[ifindex] exists (entry) */
	struct kr_device entry;
};

struct kr_live {
	struct kr_live_ring ring[KR_MAX_RINGS];
	struct kr_live_backend *backends;	/* all of kr_backends in use, sorted by id */
	uint32_t nbackends;
	uint32_t backends_max;			/* max_entries of kr_backends */
	struct kr_live_service *services;
	uint32_t nservices;
	bool has_members;			/* the data path has kr_subset_members */
	struct kr_subset_key *members;
	uint32_t nmembers;
	bool has_devices;			/* the data path has kr_devices */
	struct kr_live_device *devices;
	uint32_t ndevices;
	uint32_t loaded_ifindex;		/* the interface `load` attached to (0: none) */
	bool has_hash_key;			/* the data path has kr_hash_key */
	struct kr_hash_secret hash_key;		/* its value */
	bool has_svc_names;			/* the data path has kr_svc_names ... */
	struct kr_svc_name *svc_names;		/* ... [KR_MAX_SVC_STATS]: stats id -> name */
	bool has_hot;				/* the data path has kr_hot_keys ... */
	struct kr_hot_ent *hot;			/* ... its entries (every ring) */
	uint32_t nhot;
};

void kr_live_free(struct kr_live *lv);
/* The device entry of NAME (a "dev") or of IFINDEX (name NULL), or NULL. */
const struct kr_live_device *kr_live_device(const struct kr_live *lv, const char *name,
					    uint32_t ifindex);

/* ---- the plan (output) ---------------------------------------------------------------- */

enum kr_plan_act {
	KR_PLAN_SAME = 0,	/* the active slot holds this version: nothing to do */
	KR_PLAN_PUBLISH,	/* publish into the active slot (why: enum kr_plan_why) */
	KR_PLAN_SKIP,		/* differs, but the ring is staged or migrating: left alone */
	KR_PLAN_STAGE,		/* ring stage: into the standby slot, control word -> staged */
	KR_PLAN_STAGED_ALREADY,	/* ring stage: the standby slot holds this version already */
	KR_PLAN_STAGE_SAME,	/* ring stage: the version equals the active one */
};

enum kr_plan_why {
	KR_PLAN_WHY_NEW = 1,	/* nothing is published for the ring yet */
	KR_PLAN_WHY_CHANGED,	/* digest, format, point count or backend ids differ */
};

struct kr_plan_ring {
	struct kr_unit *unit;	/* in plan->units; unit->gid = ids */
	uint32_t ring_id;
	bool new_id;			/* record the name in kr_ops_rings[ring_id] first */
	uint32_t flags;			/* KR_OPS_RING_* of a new id */
	enum kr_plan_act act;
	enum kr_plan_why why;
	uint32_t active, slot;		/* active slot; the slot written (PUBLISH/STAGE) */
	uint32_t state;			/* enum kr_ring_state of the control word */
	bool was_present;		/* the active slot held a version ... */
	uint32_t was_digest;		/* ... with this digest */
	struct kr_ring *ring;		/* the built ring */
	uint64_t build_ns;		/* time the build took */
	/* set by the kernel layer for a PUBLISH over an active version (the guard against
	 * big moves, docs/operations.md "apply"): the share of the key space (units of
	 * 2^-32) that changes backend between the active version and the built ring */
	bool has_moved;
	uint64_t moved;
	/* set by the executor */
	bool done;
	uint64_t encode_ns, publish_ns;
	uint64_t generation;		/* of the image it published (0: unknown) */
};

struct kr_plan_backend {
	uint32_t id;
	struct kr_backend v;
	bool added;			/* a new id (else a changed entry) */
	bool in_place;			/* changed: the server's forwarding (MAC, device) */
	uint32_t unit;			/* index into plan->units.u: the first ring that has it */
};

struct kr_plan_service {
	struct kr_service_key k;
	struct kr_service v;
	bool added;			/* else changed */
	const char *name;		/* the config's service name */
};

/* A kr_svc_names entry to write (before the services): a service's stats id. */
struct kr_plan_svc_name {
	uint32_t id;
	struct kr_svc_name v;
	bool fresh;			/* a new id: its counters are zeroed first */
};

struct kr_plan_member {
	struct kr_subset_key k;
	const char *subset;		/* "RING[tag,...]" */
};

struct kr_plan_device {
	uint32_t ifindex;
	struct kr_device v;
};

/* A kr_hot_keys entry to write or remove: the configuration's "hot_keys" of a planned
 * ring (flags 0); an entry of the ring that the configuration does not name goes, unless
 * the controller (`keyrouter balance`, KR_HOT_F_CONTROLLER) put it there and the ring
 * had the id before this plan; every entry of a removed ring, or of an id no ring holds,
 * goes. */
enum kr_plan_hot_act {
	KR_PLAN_HOT_ADD = 1,	/* a hash the ring has no entry for */
	KR_PLAN_HOT_CHANGE,	/* its entry differs (replicas, or the controller's flag) */
	KR_PLAN_HOT_DEL,	/* not in the configuration */
};

struct kr_plan_hot {
	struct kr_hot_ent e;		/* the entry written (DEL: the live one) */
	enum kr_plan_hot_act act;
	struct kr_hot_val was;		/* CHANGE: the live value */
	const char *ring;		/* the ring's name; NULL: an id no ring holds */
};

struct kr_plan_ring_rm {
	uint32_t id;
	char name[KR_NAME_MAX];
};

/* What an apply does (or would do). */
struct kr_apply_counts {
	unsigned rings_published, rings_same, rings_skipped, rings_removed;
	unsigned services_added, services_changed, services_removed, services_same;
	unsigned backends_added, backends_changed, backends_removed, backends_same;
	unsigned devices_changed;
	unsigned hot_keys_added, hot_keys_changed, hot_keys_removed;
};

struct kr_apply_plan {
	const struct kr_config *cfg;	/* the configuration planned (QUIC-LB entries) */
	/* set by the kernel layer: the configuration's slips the router's network stack
	 * shows (user/kernel/ops_lint.h), one "FILE: PATH: warning: ..." line each */
	char *live_warnings;
	unsigned nlive_warnings;
	const char *stage;		/* ring stage of this unit; NULL: a whole apply */
	bool write_hash_key;
	struct kr_hash_secret hash_key;
	struct kr_units units;
	struct kr_plan_ring *rings;	/* in unit order (a stage: the one unit) */
	uint32_t nrings;
	struct kr_plan_backend *backends;	/* kr_backends entries to write */
	uint32_t nbackends;
	struct kr_plan_device *devices;
	uint32_t ndevices;
	struct kr_plan_member *members_add;
	uint32_t nmembers_add;
	struct kr_plan_service *services;	/* kr_services entries to add / change */
	uint32_t nservices;
	struct kr_plan_member *members_del;
	uint32_t nmembers_del;
	struct kr_service_key *services_del;
	uint32_t nservices_del;
	struct kr_plan_svc_name *svc_names;	/* stats ids to name (new, or a new key) */
	uint32_t nsvc_names;
	uint32_t *svc_names_del;	/* stats ids of removed services (after the services) */
	uint32_t nsvc_names_del;
	struct kr_plan_ring_rm *rings_del;
	uint32_t nrings_del;
	uint32_t *backends_release;	/* ids nothing references afterwards */
	uint32_t nbackends_release;
	struct kr_plan_hot *hot;	/* kr_hot_keys writes, ring by ring: puts, then dels */
	uint32_t nhot;
	struct kr_apply_counts n;
};

/*
 * The plan of `apply` (stage NULL) or of `ring stage STAGE` for CFG on the live state LV.
 * 0, or -errno with err set (nothing may be executed then): e.g. a backend's device does
 * not exist, no free ring or backend id, the ring to stage is not idle.
 * Free with kr_apply_plan_free() (also after an error).
 */
int kr_apply_plan(const struct kr_config *cfg, const struct kr_live *lv, const char *stage,
		  struct kr_apply_plan *p, struct kr_err *err);
void kr_apply_plan_free(struct kr_apply_plan *p);

/* Any change at all (what "nothing changed" is decided on). */
bool kr_apply_plan_changes(const struct kr_apply_plan *p);

/* The kr_services entry of config service S on ring RING_ID (subset and keyed flag not
 * included). */
void kr_service_entry(const struct kr_cfg_service *s, uint32_t ring_id, struct kr_service_key *k,
		      struct kr_service *v);

#endif
