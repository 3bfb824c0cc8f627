/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Analytics sources that need the kernel: the ring an instance has published. */
#ifndef KR_AN_PUBLISHED_H
#define KR_AN_PUBLISHED_H

#include "an_source.h"

/* kr_an_src_build(), and with s->published the active slot of the named ring of the
 * instance, read back from its pinned maps. */
int kr_ops_an_src_build(const struct kr_an_src *s, struct kr_an_built *out, struct kr_err *err);

#endif
