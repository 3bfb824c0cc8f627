/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one definition of kr_backends, for the data path (kr_maps.h) and the test and bench
 * programs of the ring stage (tests/bpf/progs/).  A program that needs more entries by default defines
 * KR_BACKENDS_MAX_ENTRIES first; the tool may resize the map before loading
 * (bpf_map__set_max_entries) up to KR_MAX_BACKEND_IDS.
 */
#ifndef KR_BACKEND_MAP_H
#define KR_BACKEND_MAP_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "kr_datapath_kern_user.h"

#ifndef KR_BACKENDS_MAX_ENTRIES
#define KR_BACKENDS_MAX_ENTRIES	KR_DEFAULT_BACKEND_IDS
#endif

/* Backends of every ring: global backend id -> address, MAC, egress device, state.
 * Written by the tool (apply; health changes write one entry); read by the programs
 * (forwarding data here, the failover walk in kr_ring.h reads .state). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KR_BACKENDS_MAX_ENTRIES);
	__type(key, __u32);
	__type(value, struct kr_backend);
} KR_MAP_NAME_BACKENDS SEC(".maps");

#endif /* KR_BACKEND_MAP_H */
