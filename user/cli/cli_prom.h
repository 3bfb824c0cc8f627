/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* `status --prometheus` / `stats --prometheus` (user/cli/cmd_exporter.c). */
#ifndef KR_CLI_PROM_H
#define KR_CLI_PROM_H

/* Print (or with output, write FILE atomically: temporary file + rename) the exposition
 * of one instance (instance or pin_dir) or of every instance (both NULL); with watch > 0
 * again every watch seconds until SIGINT/SIGTERM.  Returns the exit status. */
int kr_cli_prom_status(const char *instance, const char *pin_dir, const char *output,
		       double watch);

#endif
