// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The shipped data path program with a 16-point window (include/kr_lookup.h KR_WINDOW) instead
 * of 32: the same answers, fewer loads and compares behind the points read, more keys that
 * need the second window.  Measured beside the shipped program by tests/bench/xdp_forward.c. */
#define KR_WINDOW 16
#include "keyrouter.bpf.c"
