/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Global backend ids: one id per server, shared by every ring that has it.
 *
 * A backend is identified by what the data path needs to reach it: family, address, port,
 * and its forwarding (MAC, egress ifindex) -- the fields of struct kr_backend except state.
 * The same server in 40 rings is one id, one kr_backends entry (one health state, one
 * `backend set` write) and one kr_backend_stats entry.  Rings keep their ring-local backend
 * order (ketama input order); the image's backend table maps ring-local index -> id.
 *
 * Ids are canonical: a function of the configuration alone, the same on every router and
 * after any history (docs/operations.md "Backend identity").  A server's home is
 * kr_ids_home(): fmix64(FNV-1a-64(family | address | port)) mod the id space
 * (kr_backends' max_entries: KR_DEFAULT_BACKEND_IDS, fixed, whatever the history).  The
 * servers of a configuration take their ids in canonical order (kr_ids_cmp: family,
 * address, port, MAC, device), each its home or, when taken, the next free id after it
 * (linear probing, wrapping): a collision goes to the greater server, whatever the order
 * the configuration lists them in.  On kr_backends as it is at the start of an apply
 * (nothing else is needed, so a killed apply loses nothing), live ids are kept:
 *   1. a server whose identity is in kr_backends keeps that id;
 *   2. else a server whose address:port is in kr_backends under another forwarding takes
 *      that id (not yet taken by this configuration): its forwarding changes in place;
 *   3. else its home or the next id after it that is not in kr_backends, not referenced
 *      by a published image and not assigned now.
 * On empty maps (load) that is the canonical assignment; an apply history gives the same
 * ids except where a new server's canonical id was held when it came (then load again).
 * A pinned server (the configuration's "id", kr_ids_pin) takes its pin before all
 * that, moving if it was live under another id.  The caller gives rule 3's servers their
 * ids in canonical order, and clears entries no published image references after the
 * apply.
 */
#ifndef KR_BACKEND_IDS_H
#define KR_BACKEND_IDS_H

#include <stdbool.h>
#include <stdint.h>
#include "kr_datapath_kern_user.h"

struct kr_ids {
	uint32_t max;			/* ids 0..max-1 (kr_backends max_entries) */
	struct kr_backend *ent;		/* [max] identity of each id (family 0: none) */
	uint8_t *flag;			/* [max] KR_IDS_* */
	uint32_t *ht_full, *ht_ap;	/* open addressing, id + 1 (0 empty) */
	uint32_t hmask;
	uint32_t nclaimed;		/* distinct ids given to this configuration */
	uint32_t nin_place;		/* of which: forwarding changed in place */
};

#define KR_IDS_EXISTING		1u	/* in kr_backends at the start */
#define KR_IDS_REFERENCED	2u	/* referenced by a published image */
#define KR_IDS_CLAIMED		4u	/* given to a server of this configuration */

/* cur: kr_backends as read ([max] entries, copied; NULL = empty).  0 or -ENOMEM. */
int kr_ids_init(struct kr_ids *ids, const struct kr_backend *cur, uint32_t max);
void kr_ids_free(struct kr_ids *ids);
/* id's entry in kr_backends at the start (what kr_ids_init does for each entry of cur,
 * for a caller that holds kr_backends as a sparse list: init with cur NULL, then this for
 * each entry; unused entries and ids beyond max are ignored). */
void kr_ids_existing(struct kr_ids *ids, uint32_t id, const struct kr_backend *v);
/* id is referenced by a published image (never handed out as a new id). */
void kr_ids_reference(struct kr_ids *ids, uint32_t id);
/* The id of the server `want` (state ignored).  *in_place: its forwarding differs from the
 * entry in kr_backends (the caller rewrites the entry).  0, or -ENOSPC.  exact_only: only
 * rule 1 (-ENOENT otherwise): a caller first gives every server of the configuration its
 * exact id, so that rule 2 never moves an id another server of the configuration has. */
int kr_ids_get(struct kr_ids *ids, const struct kr_backend *want, bool exact_only,
		   uint32_t *id, bool *in_place);
/* A pinned id (the configuration's "id"): id for the server want, whatever id it has
 * elsewhere.  id's entry in kr_backends is want (kept), or want's address:port under another
 * forwarding (*in_place: changed in place), or id is free (a new entry): 0.  -EBUSY: id is
 * another server's (its kr_backends entry, a published image's, or claimed by another
 * server of this configuration): ids->ent[id] says whose when it has a family; -ERANGE: id
 * >= max. */
int kr_ids_pin(struct kr_ids *ids, const struct kr_backend *want, uint32_t id,
		   bool *in_place);
/* The home id of b's family, address and port in an id space of max ids (0 when max is 0). */
uint32_t kr_ids_home(const struct kr_backend *b, uint32_t max);
/* The canonical order of servers (<0, 0, >0): family, address, port (numeric), MAC,
 * ifindex; state ignored. */
int kr_ids_cmp(const struct kr_backend *a, const struct kr_backend *b);
/* Same identity (family, address, port, MAC, ifindex)? */
bool kr_ids_same(const struct kr_backend *a, const struct kr_backend *b);

#endif
