// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Key files of a configuration: the keyed-hash secret (SECURITY.md "Hash flooding") and
 * the QUIC-LB keys (docs/quic.md). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "config_int.h"

/* A 128-bit key file (config.h): a regular file, not readable or writable by group/others,
 * owned by root or by us, holding 32 hex digits (blanks around them allowed).  Messages
 * never quote the content. */
int kr_key_file_read(const char *path, uint8_t out[16], struct kr_err *err)
{
	char buf[128];
	struct stat st;
	ssize_t n;
	int fd, k = 0, ret = -1;

	memset(out, 0, 16);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return kr_errf(err, "couldn't open '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		kr_errf(err, "'%s' is not a regular file", path);
		goto out;
	}
	if (st.st_mode & 077) {
		kr_errf(err, "'%s' has mode %04o: a secret must not be readable or writable by "
			"group or others (chmod 600 '%s')", path, (unsigned)(st.st_mode & 07777),
			path);
		goto out;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		kr_errf(err, "'%s' is owned by uid %u: expected root or uid %u", path,
			(unsigned)st.st_uid, (unsigned)geteuid());
		goto out;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		kr_errf(err, "couldn't read '%s': %s", path, strerror(errno));
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
		out[k / 2] = (uint8_t)(out[k / 2] << 4 | v);
		k++;
	}
	if (k != 32) {
		kr_errf(err, "'%s': expected exactly 32 hex digits (a 128-bit secret, e.g. from: "
			"head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \\n')", path);
		memset(out, 0, 16);
	} else {
		ret = 0;
	}
	memset(buf, 0, sizeof(buf));
out:
	close(fd);
	return ret;
}

/* A key file named by member `field` of the configuration: relative to the
 * configuration's directory; the error positioned at the member. */
int cfg_load_key_file(struct ctx *c, const char *field, const char *given, uint8_t out[16],
		      char **resolved)
{
	char path[4096];
	const char *slash = strrchr(c->file, '/');
	struct kr_err err;

	if (given[0] == '/' || !slash)
		snprintf(path, sizeof(path), "%s", given);
	else
		snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - c->file), c->file, given);
	free(*resolved);
	*resolved = strdup(path);	/* config show: the resolved path */
	if (kr_key_file_read(path, out, &err) == 0)
		return 0;
	cfg_kerr(c, field, "%s", err.msg);
	return -1;
}

/* The keyed-hash secret ("hash": {"secret_file": ...}). */
void cfg_load_secret(struct ctx *c, const char *given)
{
	cfg_load_key_file(c, "secret_file", given, c->cfg->hash.secret, &c->cfg->hash.secret_file);
}
