// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "err.h"

int kr_errf(struct kr_err *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

int kr_err_prefix(struct kr_err *err, const char *fmt, ...)
{
	char pre[KR_ERR_MAX], old[KR_ERR_MAX];
	va_list ap;

	if (!err)
		return -1;
	memcpy(old, err->msg, sizeof(old));
	va_start(ap, fmt);
	vsnprintf(pre, sizeof(pre), fmt, ap);
	va_end(ap);
	snprintf(err->msg, sizeof(err->msg), "%.200s: %.300s", pre, old);
	return -1;
}
