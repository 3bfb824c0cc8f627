/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef KR_OUTPUT_H
#define KR_OUTPUT_H

/* Send the libraries' diagnostics (log.h) and libbpf's messages to stderr, filtered by
 * the level -q / -v chose. */
void kr_output_init(void);

#endif
