/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The backends file: one backend per line, "<SocketAddr> <weight>" ("10.0.0.1:443 5",
 * "[2001:db8::1]:443 2"); '#' starts a comment (whole line or after the fields); blank
 * lines are skipped.  Line order (of backend lines) = backend index.
 * Errors name file:line, the value and what was expected: bad address, bad port, weight
 * not a number or above 4294967295, duplicate backend (with the line of the first), more
 * than KR_MAX_BACKENDS backends.
 */
#ifndef KR_BACKENDS_FILE_H
#define KR_BACKENDS_FILE_H

#include <stdint.h>
#include <stdio.h>
#include "continuum.h"
#include "err.h"

/* Reads `path` ("-" = stdin).  0 with *out (free()) and *n, or -1 with err set. */
int kr_backends_load(const char *path, struct kr_backend_spec **out, uint32_t *n,
		     struct kr_err *err);
/* Same from an open stream; `name` is used in messages. */
int kr_backends_read(FILE *f, const char *name, struct kr_backend_spec **out, uint32_t *n,
		     struct kr_err *err);

#endif
