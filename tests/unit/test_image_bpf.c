// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_image against the BPF branch of include/kr_lookup.h: KR_LOOKUP_AS_BPF compiles the
 * code the BPF programs run where it differs from userspace's -- the compares behind a
 * register barrier, the window counted point by point instead of binary-searched, and
 * windows cut at chunk boundaries (each chunk a map value of its own) instead of running
 * on through the one buffer -- into this program's lookups (kr_image_lookup, inline in
 * image.h), so both branches are checked against the plain lower bound without root.
 * The archive's kr_image_lookup_batch() keeps the userspace branch: check_batch() then
 * compares the two branches key by key too.
 */
#define KR_LOOKUP_AS_BPF 1
#include "test_image.c"

#ifndef KR_LOOKUP_BPF
#error "kr_lookup.h did not take its BPF branch"
#endif
