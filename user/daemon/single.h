/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One long-running process of a kind per instance (the health checker: two of them would
 * fight over the same backends' states, docs/operations.md "Health checking").  The token is
 * an abstract unix socket named after the kind and the instance's pin directory: bound by the
 * holder, gone with it (a kill -9 leaves nothing behind to clean up), and never in the way of
 * the commands, which lock the pin directory itself (kr_ops_inst_open).  A second process
 * learns who holds it by connecting: the kernel gives the listener's pid (SO_PEERCRED).
 * Abstract sockets belong to the network namespace: the processes that must not run twice
 * are those in the instance's namespace (the others refuse to run: kr_daemon_netns_ok).
 */
#ifndef KR_SINGLE_H
#define KR_SINGLE_H

#include <sys/types.h>

/* Take the token of KIND for the instance in DIR: its fd (>= 0), -EEXIST when another
 * process holds it (*holder: its pid, 0 when it cannot be told), or -errno. */
int kr_single_take(const char *kind, const char *dir, pid_t *holder);
/* Answer (close) the connections of processes that asked who holds it: call it now and
 * then, so the listen queue never fills. */
void kr_single_serve(int fd);

#endif
