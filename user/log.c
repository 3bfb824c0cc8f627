// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdarg.h>
#include <stdio.h>
#include <bpf/libbpf.h>
#include "log.h"

static enum kr_log_level kr_level = KR_LOG_INFO;

void kr_log_set_level(enum kr_log_level lvl) { kr_level = lvl; }
enum kr_log_level kr_log_get_level(void) { return kr_level; }

void kr_log(enum kr_log_level lvl, const char *fmt, ...)
{
	va_list ap;

	if (lvl > kr_level)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

static int libbpf_print(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	enum kr_log_level l = lvl == LIBBPF_WARN ? KR_LOG_WARN :
			      lvl == LIBBPF_INFO ? KR_LOG_DEBUG : KR_LOG_DEBUG + 1;

	if (l > kr_level)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void kr_log_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}
