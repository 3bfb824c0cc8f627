/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* JSON output: every JSON the CLI writes is built with jansson (strings escaped by it). */
#ifndef KR_JSON_OUT_H
#define KR_JSON_OUT_H

#include <linux/types.h>
#include <jansson.h>

/* Prints a command's --json result (2-space indent, exact reals) and releases it.
 * o == NULL (the object could not be built) is reported.  Returns the exit status. */
int kr_an_json_print(json_t *o, const char *cmd);
/* The same on one line (status, stats, ring status: one object per --watch round), reals
 * with 15 significant digits. */
int kr_json_print_line(json_t *o, const char *cmd);

/* A string of the system's (an interface name, a path): escaped by jansson; one that is
 * not UTF-8 has its bytes above 0x7f replaced by '?' (JSON strings are Unicode). */
json_t *kr_json_str(const char *s);
/* x rounded to that many decimals (a time in seconds to the ms, a percentage). */
json_t *kr_json_fixed(double x, int decimals);
/* A counter (clamped to 2^63 - 1: jansson's integers are signed). */
json_t *kr_json_u64(__u64 v);
/* A time in ns since the epoch into o: NAME_ns, exact as a string (above 2^53, a double
 * would lose its last digits), and NAME_s, seconds with 3 decimals. */
void kr_json_set_time(json_t *o, const char *name, __u64 ns);

#endif
