// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_point_gen on the KR_PORTABLE build of the engine (no GFNI code, as on other
 * architectures): scalar and lanes4 run, gfni is refused with the reason and SKIPped.
 * The engine's own definitions come first, so the archive's continuum.o is not linked in.
 */
#define KR_PORTABLE 1
#include "../../user/core/continuum.c"
#include "test_point_gen.c"
