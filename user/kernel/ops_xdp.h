/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libxdp's view of an interface's XDP hook, without its descriptor leak.  libxdp before
 * 1.4.1 (Debian's 1.3.1) gets the attached program by id, keeps a duplicate of that fd in
 * the xdp_multiprog and never closes the original (fixed upstream in xdp-tools 48ad94b):
 * every xdp_multiprog__get_from_ifindex() leaks one program fd, which keeps the program
 * alive in the kernel after it is detached or replaced.  A one-shot command does not care;
 * the exporter, the checker and `status --watch` ask once a round and ran out of files.
 */
#ifndef KR_OPS_XDP_H
#define KR_OPS_XDP_H

struct xdp_multiprog;

/* xdp_multiprog__get_from_ifindex(ifindex), closing the program fds libxdp opened and does
 * not own (none with a fixed libxdp): a program fd another thread opens meanwhile would be
 * taken for one, so call it where no other thread opens programs (the exporter answers
 * scrapes in one thread).  Close the result with xdp_multiprog__close(). */
struct xdp_multiprog *kr_ops_xdp_multiprog(int ifindex);

#endif
