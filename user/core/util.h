/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Small helpers every layer uses: clocks and a strict unsigned integer parser. */
#ifndef KR_UTIL_H
#define KR_UTIL_H

#include <stdint.h>

/* CPU time of the calling thread, ns: what a computation costs on a shared machine. */
uint64_t kr_cpu_ns(void);
/* CLOCK_REALTIME, ns since the epoch: timestamps kept in maps (publish, load). */
uint64_t kr_wall_ns(void);

/* Decimal digits only (no sign, no space, no base prefix), value in [min, UINT32_MAX].
 * 0, or -1 (*v untouched). */
int kr_parse_u32(const char *s, uint32_t min, uint32_t *v);

#endif
