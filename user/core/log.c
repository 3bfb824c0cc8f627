// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The diagnostics sink of the library layers (log.h). */
#include <stddef.h>
#include "log.h"

static enum kr_log_level kr_level = KR_LOG_INFO;
static kr_log_fn kr_handler;

void kr_log_set_handler(kr_log_fn fn) { kr_handler = fn; }
void kr_log_set_level(enum kr_log_level lvl) { kr_level = lvl; }
enum kr_log_level kr_log_get_level(void) { return kr_level; }

void kr_log(enum kr_log_level lvl, const char *fmt, ...)
{
	va_list ap;

	if (lvl > kr_level || !kr_handler)
		return;
	va_start(ap, fmt);
	kr_handler(lvl, fmt, ap);
	va_end(ap);
}
