/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Messages: pr_warn() always, pr_info() unless -q, pr_debug() with -v (libbpf's too). */
#ifndef KR_LOG_H
#define KR_LOG_H

enum kr_log_level { KR_LOG_QUIET = 0, KR_LOG_WARN, KR_LOG_INFO, KR_LOG_DEBUG };

void kr_log_set_level(enum kr_log_level lvl);
enum kr_log_level kr_log_get_level(void);
void kr_log(enum kr_log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Route libbpf's own messages through kr_log (warnings always, debug with -v). */
void kr_log_libbpf(void);

#define pr_warn(...)  kr_log(KR_LOG_WARN, __VA_ARGS__)
#define pr_info(...)  kr_log(KR_LOG_INFO, __VA_ARGS__)
#define pr_debug(...) kr_log(KR_LOG_DEBUG, __VA_ARGS__)

#endif
