/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef KR_OUTPUT_H
#define KR_OUTPUT_H

/* Send the libraries' diagnostics (log.h) to stderr, filtered by the level -q / -v chose.
 * libbpf's and libxdp's own messages go to stderr as they come only with -v; otherwise
 * they are held back (a successful load makes several harmless ones: the libxdp
 * dispatcher probe, its fallback) and shown only if the command fails. */
void kr_output_init(void);
/* At exit with the command's status: a failed command (status 1) shows the held-back
 * libbpf/libxdp messages. */
void kr_output_finish(int status);
/* Forget the messages held back so far: the step that made them succeeded (load, once the
 * program is attached: the dispatcher probe's messages say nothing about a later failure). */
void kr_output_forget_held(void);

#endif
