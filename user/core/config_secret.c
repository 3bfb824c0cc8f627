// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The keyed-hash secret file of a configuration (SECURITY.md "Hash flooding"). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "config_int.h"

/* The keyed-hash secret: a regular file, not readable or writable by group/others, owned
 * by root or by us, holding 32 hex digits (blanks around them allowed).  Messages never
 * quote the content. */
void cfg_load_secret(struct ctx *c, const char *given)
{
	char path[4096], buf[128];
	const char *slash = strrchr(c->file, '/');
	struct stat st;
	ssize_t n;
	int fd, k = 0;

	if (given[0] == '/' || !slash)
		snprintf(path, sizeof(path), "%s", given);
	else
		snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - c->file), c->file, given);
	c->cfg->hash.secret_file = strdup(path);	/* config show: the resolved path */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		cfg_kerr(c, "secret_file", "couldn't open '%s': %s", path, strerror(errno));
		return;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		cfg_kerr(c, "secret_file", "'%s' is not a regular file", path);
		goto out;
	}
	if (st.st_mode & 077) {
		cfg_kerr(c, "secret_file", "'%s' has mode %04o: a secret must not be readable or "
		     "writable by group or others (chmod 600 '%s')", path,
		     (unsigned)(st.st_mode & 07777), path);
		goto out;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		cfg_kerr(c, "secret_file", "'%s' is owned by uid %u: expected root or uid %u", path,
		     (unsigned)st.st_uid, (unsigned)geteuid());
		goto out;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		cfg_kerr(c, "secret_file", "couldn't read '%s': %s", path, strerror(errno));
		goto out;
	}
	for (ssize_t i = 0; i < n; i++) {
		int v = buf[i] >= '0' && buf[i] <= '9' ? buf[i] - '0' :
			buf[i] >= 'a' && buf[i] <= 'f' ? buf[i] - 'a' + 10 :
			buf[i] >= 'A' && buf[i] <= 'F' ? buf[i] - 'A' + 10 : -1;

		if (v < 0 && (buf[i] == ' ' || buf[i] == '\n' || buf[i] == '\t' || buf[i] == '\r'))
			continue;
		if (v < 0 || k >= 32) {
			k = -1;
			break;
		}
		c->cfg->hash.secret[k / 2] = (uint8_t)(c->cfg->hash.secret[k / 2] << 4 | v);
		k++;
	}
	if (k != 32)
		cfg_kerr(c, "secret_file", "'%s': expected exactly 32 hex digits (a 128-bit secret, "
		     "e.g. from: head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \\n')", path);
	memset(buf, 0, sizeof(buf));
out:
	close(fd);
}

