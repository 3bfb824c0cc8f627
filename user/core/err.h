/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Error messages from the library: functions never print or exit; they fill a struct
 * kr_err (may be NULL) with one line naming the file/field/value and what was expected,
 * and the command prints it ("keyrouter: <msg>").
 */
#ifndef KR_ERR_H
#define KR_ERR_H

#include <stddef.h>

#define KR_ERR_MAX 512

struct kr_err {
	char msg[KR_ERR_MAX];
};

/* Sets err->msg (printf format); no-op when err is NULL.  Returns -1 for `return kr_errf(...)`. */
int kr_errf(struct kr_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prefixes the current message: "<prefix>: <old msg>". */
int kr_err_prefix(struct kr_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
