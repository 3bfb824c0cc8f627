// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The counters' names for status / stats (ops_stats.h). */
#include "ops_stats.h"

#define C_(m) KR_OPS_FIELD(kr_counters, m)
const struct kr_ops_field kr_ops_counters_fields[] = {
	C_(seen), C_(passed), C_(routed), C_(dropped), C_(passed_nomatch), C_(parse_error),
	C_(fragment), C_(no_key), C_(key_too_long), C_(no_ring), C_(bad_image), C_(all_down),
	C_(walk_limit), C_(failover_walks), C_(fwd_error), C_(bad_service), C_(dropped_no_key),
	C_(dropped_key_too_long), C_(dropped_no_route),
};
#undef C_
const size_t kr_ops_counters_nfields = KR_OPS_NFIELDS(kr_ops_counters_fields);
/* a field added to the struct is added here too (pad is the last member) */
_Static_assert(KR_OPS_NFIELDS(kr_ops_counters_fields) * 8 == offsetof(struct kr_counters, pad),
	       "kr_ops_counters_fields: every u64 of struct kr_counters before pad");

#define S_(m) KR_OPS_FIELD(kr_svc_stats, m)
const struct kr_ops_field kr_ops_svc_fields[] = {
	S_(packets), S_(routed), S_(passed), S_(dropped), S_(bytes), S_(no_key),
	S_(key_too_long), S_(no_route), S_(fwd_error), S_(bad_service), S_(failover_walks),
	S_(quic_lb_routed), S_(dropped_no_key), S_(dropped_key_too_long), S_(dropped_no_route),
};
#undef S_
const size_t kr_ops_svc_nfields = KR_OPS_NFIELDS(kr_ops_svc_fields);
_Static_assert(KR_OPS_NFIELDS(kr_ops_svc_fields) * 8 == offsetof(struct kr_svc_stats, pad),
	       "kr_ops_svc_fields: every u64 of struct kr_svc_stats before pad");
