/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* --wait SECONDS of every command that takes the instance's lock (ops.h kr_ops_inst_open). */
#ifndef KR_CLI_LOCK_WAIT_H
#define KR_CLI_LOCK_WAIT_H

#define KR_WAIT_OPT_HELP \
	"  --wait SECONDS       wait at most this long for the instance's lock (another\n" \
	"                       keyrouter command holds it), then fail, changing nothing\n" \
	"                       (default: wait for ever; 0: do not wait)\n"

/* arg NULL: the default (for ever, or def_ms >= 0).  0, or a usage error (status 2). */
int kr_lock_wait_opt(const char *arg, int def_ms);

#endif
