/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Diagnostics of the library layers: pr_warn() (always shown), pr_info() (unless -q),
 * pr_debug() (with -v).  The libraries never write to a stream themselves: a message goes
 * to the handler the command-line layer installs (user/cli/output.c writes it to stderr);
 * with no handler it is dropped.  Results are returned, not printed.
 */
#ifndef KR_LOG_H
#define KR_LOG_H

#include <stdarg.h>

enum kr_log_level { KR_LOG_QUIET = 0, KR_LOG_WARN, KR_LOG_INFO, KR_LOG_DEBUG };

typedef void (*kr_log_fn)(enum kr_log_level lvl, const char *fmt, va_list ap);

void kr_log_set_handler(kr_log_fn fn);
void kr_log_set_level(enum kr_log_level lvl);
enum kr_log_level kr_log_get_level(void);
void kr_log(enum kr_log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define pr_warn(...)  kr_log(KR_LOG_WARN, __VA_ARGS__)
#define pr_info(...)  kr_log(KR_LOG_INFO, __VA_ARGS__)
#define pr_debug(...) kr_log(KR_LOG_DEBUG, __VA_ARGS__)

#endif
