/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `keyrouter quic-lb decode --via-kernel`: the QUIC-LB decode of the data path program
 * (bpf/kr_quic_lb_stage.h), loaded privately (not attached) with one quic service whose
 * QUIC-LB configurations 0..6 all are `conf` and which has no server IDs; each CID runs as
 * the DCID of a QUIC v1 long-header packet through BPF_PROG_TEST_RUN, and the program's
 * QUIC-LB trace gives the server ID it decoded (or why the CID is unroutable).
 */
#ifndef KR_KERNEL_QUIC_LB_H
#define KR_KERNEL_QUIC_LB_H

#include "quic_lb.h"

struct kr_kqlb;
int kr_kqlb_open(struct kr_kqlb **out, const struct kr_qlb_conf *conf, struct kr_err *err);
int kr_kqlb_decode(struct kr_kqlb *kq, const uint8_t *cid, size_t len, struct kr_qlb_verdict *v,
		   struct kr_err *err);
void kr_kqlb_close(struct kr_kqlb *kq);

#endif
