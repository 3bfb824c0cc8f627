// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* One process of a kind per instance (single.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "single.h"

/* The abstract name: the kind and a hash of the directory's canonical path (a path can be
 * longer than sun_path, and --pin-dir can name one directory in several ways). */
static socklen_t token_addr(const char *kind, const char *dir, struct sockaddr_un *sa)
{
	char *real = realpath(dir, NULL);
	const char *p = real ? real : dir;
	uint64_t h = 1469598103934665603ull;
	int n;

	for (; *p; p++)
		h = (h ^ (uint8_t)*p) * 1099511628211ull;
	free(real);
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	n = snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1, "keyrouter/%s/%016llx", kind,
		     (unsigned long long)h);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/* The pid of the process listening on sa (0: cannot tell). */
static pid_t holder_pid(const struct sockaddr_un *sa, socklen_t len)
{
	struct ucred cr = {};
	socklen_t cl = sizeof(cr);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	pid_t pid = 0;

	if (fd < 0)
		return 0;
	if (!connect(fd, (const struct sockaddr *)sa, len) &&
	    !getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl))
		pid = cr.pid;
	close(fd);
	return pid;
}

int kr_single_take(const char *kind, const char *dir, pid_t *holder)
{
	struct sockaddr_un sa;
	socklen_t len = token_addr(kind, dir, &sa);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), err;

	*holder = 0;
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, len)) {
		err = -errno;
		close(fd);
		if (err == -EADDRINUSE) {
			*holder = holder_pid(&sa, len);
			return -EEXIST;
		}
		return err;
	}
	if (listen(fd, 8)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

void kr_single_serve(int fd)
{
	int c;

	while (fd >= 0 && (c = accept4(fd, NULL, NULL, SOCK_CLOEXEC)) >= 0)
		close(c);
}
