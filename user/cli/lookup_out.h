/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What `lookup --via-kernel` prints for one key. */
#ifndef KR_LOOKUP_OUT_H
#define KR_LOOKUP_OUT_H

#include "kernel_lookup.h"

/* One output line, the format of `lookup` (key crc ring_index backend b1 b2 b3): ring
 * index, backend and crc from the kernel; b1..b3 are the image's points after the
 * kernel's point.  A key the program does not route (longer than 255 bytes: the service's
 * policy) is printed as "<key> <crc> policy <what the program did>".  0 or -1 (err). */
int kr_klookup_print(struct kr_klookup *kl, const struct kr_image *img, const uint8_t *key,
		     size_t len, struct kr_err *err);

#endif
