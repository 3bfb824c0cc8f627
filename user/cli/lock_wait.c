// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* --wait SECONDS (lock_wait.h). */
#include <stdlib.h>
#include "lock_wait.h"
#include "opts.h"
#include "ops.h"

int kr_lock_wait_opt(const char *arg, int def_ms)
{
	char *end;
	double s;

	if (!arg) {
		kr_ops_set_lock_wait(def_ms);
		return 0;
	}
	s = strtod(arg, &end);
	if (end == arg || *end || !(s >= 0 && s <= 86400))
		return kr_usage_error("bad --wait '%s': expected seconds, 0..86400", arg);
	kr_ops_set_lock_wait((int)(s * 1000.0 + 0.5));
	return 0;
}
