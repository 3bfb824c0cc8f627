// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The data path program with one map's layout changed (kr_backends: 4096 entries instead of
 * KR_DEFAULT_BACKEND_IDS): tests/bats/ops_upgrade.bats checks that `keyrouter upgrade`
 * refuses it, says why, and leaves the running instance as it was. */
#define KR_BACKENDS_MAX_ENTRIES 4096
#include "keyrouter.bpf.c"
