// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_continuum against the portable build of the engine: KR_PORTABLE compiles out the
 * GFNI/AVX-512 chains and the carry-less-multiply digest, so the chains run in 4 scalar
 * lanes and every digest is the table one, as on x86-64 CPUs without those extensions
 * and on other architectures.  The engine's own definitions come first,
 * so the archive's continuum.o is never linked in.
 */
#define KR_PORTABLE 1
#include "../../user/core/continuum.c"
#include "test_continuum.c"
