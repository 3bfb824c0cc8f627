// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdio.h>
#include "cmd.h"

#ifndef KR_VERSION
#define KR_VERSION "0.1.0"
#endif

static int cmd_version(int argc, char **argv)
{
	(void)argc, (void)argv;
	printf("keyrouter %s\n", KR_VERSION);
	return 0;
}
KR_COMMAND(version, "version", "print the version", cmd_version);
