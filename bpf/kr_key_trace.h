/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The last-key trace of the data path (`lookup --via-kernel`, `quic-lb decode --via-kernel`,
 * tests/bpf/test_oracle.c): kr_cfg_trace, set before load (skeleton .rodata), makes the
 * program record the last key in kr_trace_last (.bss; the pipeline, kr_datapath.h) and the
 * last QUIC-LB decode in kr_qlb_trace_last (kr_quic_lb_stage.h).  When 0 the verifier
 * removes the tracing code.
 */
#ifndef KR_KEY_TRACE_H
#define KR_KEY_TRACE_H

#include "vmlinux.h"
#include "kr_datapath_kern_user.h"

const volatile __u32 kr_cfg_trace = 0;
struct kr_trace kr_trace_last = {};

#endif /* KR_KEY_TRACE_H */
