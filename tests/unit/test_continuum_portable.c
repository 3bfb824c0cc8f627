// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_continuum against the portable build of the engine: KR_NO_CLMUL compiles out the
 * carry-less-multiply digest, so every digest is the table one, as on x86-64 CPUs without
 * PCLMULQDQ/SSE4.1 and on other architectures.  The engine's own definitions come first,
 * so the archive's continuum.o is never linked in.
 */
#define KR_NO_CLMUL 1
#include "../../user/core/continuum.c"
#include "test_continuum.c"
