// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Where the libraries' diagnostics and libbpf's/libxdp's own messages go (output.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "log.h"
#include "output.h"

#define HELD_MAX (64 << 10)

static char *held;		/* libbpf/libxdp messages not shown (yet) */
static size_t held_len;

static void to_stderr(enum kr_log_level lvl, const char *fmt, va_list ap)
{
	(void)lvl;
	vfprintf(stderr, fmt, ap);
}

/* A libbpf/libxdp message at level l: shown with -v, else kept for a failure. */
static int lib_message(enum kr_log_level l, const char *fmt, va_list ap)
{
	char line[1024];
	int n;

	if (kr_log_get_level() >= KR_LOG_DEBUG)
		return l <= KR_LOG_DEBUG ? vfprintf(stderr, fmt, ap) : 0;
	if (l > KR_LOG_WARN)
		return 0;
	n = vsnprintf(line, sizeof(line), fmt, ap);
	if (n <= 0)
		return 0;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	if (!held)
		held = malloc(HELD_MAX);
	if (held && held_len + (size_t)n < HELD_MAX) {
		memcpy(held + held_len, line, (size_t)n);
		held_len += (size_t)n;
	}
	return n;
}

static int libbpf_print(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	return lib_message(lvl == LIBBPF_WARN ? KR_LOG_WARN :
			   lvl == LIBBPF_INFO ? KR_LOG_DEBUG : KR_LOG_DEBUG + 1, fmt, ap);
}

static int libxdp_print(enum libxdp_print_level lvl, const char *fmt, va_list ap)
{
	return lib_message(lvl == LIBXDP_WARN ? KR_LOG_WARN :
			   lvl == LIBXDP_INFO ? KR_LOG_DEBUG : KR_LOG_DEBUG + 1, fmt, ap);
}

void kr_output_init(void)
{
	kr_log_set_handler(to_stderr);
	libbpf_set_print(libbpf_print);
	libxdp_set_print(libxdp_print);
}

void kr_output_forget_held(void)
{
	held_len = 0;
}

void kr_output_finish(int status)
{
	if (status == 1 && held_len)
		fprintf(stderr, "keyrouter: libbpf/libxdp said (shown because the command "
			"failed; -v shows them as they come):\n%.*s", (int)held_len, held);
	free(held);
	held = NULL;
	held_len = 0;
}
