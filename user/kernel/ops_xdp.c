// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libxdp's multiprog of an interface without the descriptor it leaks (ops_xdp.h). */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xdp/libxdp.h>
#include "ops_xdp.h"

struct fdset {
	int *fd;
	size_t n, cap;
};

/* The open descriptors of this process (sorted by the kernel's listing: not relied on).
 * false when the list is not whole (out of memory): then nothing may be closed by it. */
static bool fds_list(struct fdset *s)
{
	bool whole = true;

	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	s->n = 0;
	while (d && (e = readdir(d))) {
		int fd = atoi(e->d_name);

		if (e->d_name[0] == '.' || fd == dirfd(d))
			continue;
		if (s->n == s->cap) {
			int *nf = realloc(s->fd, (s->cap = s->cap ? s->cap * 2 : 64) * sizeof(int));

			if (!nf) {
				whole = false;
				break;
			}
			s->fd = nf;
		}
		s->fd[s->n++] = fd;
	}
	if (d)
		closedir(d);
	return d && whole;
}

static bool fds_has(const struct fdset *s, int fd)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->fd[i] == fd)
			return true;
	return false;
}

static bool is_prog_fd(int fd)
{
	char path[64], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = 0;
	return !strcmp(link, "anon_inode:bpf-prog");
}

/* Does MP hold FD (its main program, a component, the offloaded one)? */
static bool mp_owns(struct xdp_multiprog *mp, int fd)
{
	struct xdp_program *p;

	if (xdp_program__fd(xdp_multiprog__main_prog(mp)) == fd ||
	    xdp_program__fd(xdp_multiprog__hw_prog(mp)) == fd)
		return true;
	for (p = xdp_multiprog__next_prog(NULL, mp); p; p = xdp_multiprog__next_prog(p, mp))
		if (xdp_program__fd(p) == fd)
			return true;
	return false;
}

struct xdp_multiprog *kr_ops_xdp_multiprog(int ifindex)
{
	struct fdset before = {}, after = {};
	struct xdp_multiprog *mp;

	bool whole = fds_list(&before);

	mp = xdp_multiprog__get_from_ifindex(ifindex);
	whole = fds_list(&after) && whole;
	/* a program fd that was not open before and that the multiprog does not hold is the
	 * original libxdp duplicated (on an error, libxdp closed what it opened) */
	for (size_t i = 0; whole && !libxdp_get_error(mp) && mp && i < after.n; i++)
		if (!fds_has(&before, after.fd[i]) && is_prog_fd(after.fd[i]) &&
		    !mp_owns(mp, after.fd[i]))
			close(after.fd[i]);
	free(before.fd);
	free(after.fd);
	return mp;
}
