/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef KR_JSON_OUT_H
#define KR_JSON_OUT_H

#include <jansson.h>

/* Prints a command's --json result (2-space indent, exact reals) and releases it.
 * o == NULL (the object could not be built) is reported.  Returns the exit status. */
int kr_an_json_print(json_t *o, const char *cmd);

#endif
