// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The data path program as another build for tests/bats/ops_upgrade.bats: the same source
 * with a 16-point lookup window instead of 32 (include/kr_lookup.h KR_WINDOW), so different
 * code (another program tag), the same maps and the same answers.  `keyrouter upgrade`
 * switches a loaded instance between this and the built-in program under traffic. */
#define KR_WINDOW 16
#include "keyrouter.bpf.c"
