// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Where the libraries' diagnostics and libbpf's own messages go: stderr, by level. */
#include <stdarg.h>
#include <stdio.h>
#include <bpf/libbpf.h>
#include "log.h"
#include "output.h"

static void to_stderr(enum kr_log_level lvl, const char *fmt, va_list ap)
{
	(void)lvl;
	vfprintf(stderr, fmt, ap);
}

static int libbpf_print(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	enum kr_log_level l = lvl == LIBBPF_WARN ? KR_LOG_WARN :
			      lvl == LIBBPF_INFO ? KR_LOG_DEBUG : KR_LOG_DEBUG + 1;

	if (l > kr_log_get_level())
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void kr_output_init(void)
{
	kr_log_set_handler(to_stderr);
	libbpf_set_print(libbpf_print);
}
