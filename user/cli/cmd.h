/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Subcommands register themselves with KR_COMMAND() in their own file; main() finds them
 * in the "kr_cmds" section, so adding a command never touches main.c.
 *
 *   KR_COMMAND(ring_dump, "ring dump", "print every point of a ring", cmd_ring_dump);
 *
 * The name may be one or two words ("lookup", "ring dump").  The handler gets argc/argv
 * starting at the command name (argv[0] = last word of the name), parses its options
 * with an option table (opts.h), and returns the process exit status (0 ok, 1 error,
 * 2 usage).  main() sets the full name (kr_cmd_current()) for messages; `keyrouter ring`
 * alone lists the commands whose name starts with "ring".
 */
#ifndef KR_CMD_H
#define KR_CMD_H

struct kr_cmd {
	const char *name;
	const char *summary;
	int (*fn)(int argc, char **argv);
};

#define KR_COMMAND(id, name_, summary_, fn_)                                             \
	static const struct kr_cmd kr_cmd_##id                                             \
		__attribute__((used, section("kr_cmds"), aligned(sizeof(void *)))) = {    \
		.name = name_, .summary = summary_, .fn = fn_ }

#endif
