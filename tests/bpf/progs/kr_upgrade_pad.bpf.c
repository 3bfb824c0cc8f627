// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The data path program as builds before spill had it: kr_backend's bytes 26..27 are a
 * member named `pad` (now `spill`).  tests/bats/hot_keys.bats loads it and upgrades to the
 * current build: `keyrouter upgrade` must take the pinned kr_backends (its pad is zero,
 * spill's "none"). */
#define spill pad
#include "keyrouter.bpf.c"
