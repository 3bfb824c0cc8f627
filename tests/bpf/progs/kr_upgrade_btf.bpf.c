// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The data path program with the variable of its .bss renamed (kr_trace_last ->
 * kr_trace_prev): the same sizes everywhere, another layout by name, which only the BTF
 * comparison of `keyrouter upgrade` sees (tests/bats/ops_upgrade.bats: refused). */
#define kr_trace_last kr_trace_prev
#include "keyrouter.bpf.c"
