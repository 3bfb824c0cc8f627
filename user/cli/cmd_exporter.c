// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * keyrouter exporter: /metrics over HTTP (libmicrohttpd), and the writer behind
 * `status --prometheus [--output FILE]` (cli_prom.h).  Both render the exposition of
 * prom.h; neither keeps any state of its own: every scrape reads the pinned maps again.
 */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <microhttpd.h>
#include "cli_prom.h"
#include "cmd.h"
#include "opts.h"
#include "log.h"
#include "prom.h"
#include "follow.h"
#include "ops.h"
#include "util.h"

#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* ---- status --prometheus ------------------------------------------------------------ */

/* Write buf to path atomically: a temporary file in the same directory, fsync, rename. */
static int write_atomic(const char *path, const char *buf, size_t len)
{
	char tmp[4096];
	FILE *f;
	int err = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	if (fwrite(buf, 1, len, f) != len || fflush(f) || fsync(fileno(f)))
		err = -errno;
	if (fclose(f) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err ? err : 0;
}

static volatile sig_atomic_t stop;

/* What a long-running writer of the exposition follows: the one instance it was told
 * (--instance, --pin-dir), whose unload, load and upgrade it logs, and the instances it
 * has exported (kept as keyrouter_up 0 once unloaded). */
struct prom_follow {
	const char *who;
	bool one;		/* follow.dir is the instance's */
	struct kr_follow follow;
	struct kr_follow_names seen;
};

static void prom_follow_init(struct prom_follow *pf, const char *who, const char *instance,
			     const char *pin_dir)
{
	struct kr_inst in;

	memset(pf, 0, sizeof(*pf));
	pf->who = who;
	if ((instance || pin_dir) && !kr_ops_inst_path(&in, instance, pin_dir)) {
		pf->one = true;
		kr_follow_init(&pf->follow, in.dir);
	}
}

/* Once a scrape or a round, before rendering: nothing is held between them (every render
 * opens the pins again), so following is saying what changed. */
static void prom_follow_round(struct prom_follow *pf)
{
	enum kr_follow_change c;
	bool was_gone;

	if (!pf->one)
		return;
	was_gone = pf->follow.err != 0;
	c = kr_follow_round(&pf->follow);
	if (c == KR_FOLLOW_SAME || (c == KR_FOLLOW_GONE && was_gone))
		return;
	if (c == KR_FOLLOW_GONE)
		pr_warn("%s: %s: not loaded any more (unloaded): keyrouter_up 0 until it is "
			"loaded again\n", pf->who, pf->follow.dir);
	else if (c == KR_FOLLOW_UPGRADED)
		pr_info("%s: %s: upgraded (program id %u)\n", pf->who, pf->follow.dir,
			pf->follow.id.prog_id);
	else
		pr_info("%s: %s: loaded%s (program id %u): exporting its maps\n", pf->who,
			pf->follow.dir, was_gone ? "" : " again", pf->follow.id.prog_id);
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int kr_cli_prom_status(const char *instance, const char *pin_dir, const char *output,
		       double watch)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct prom_follow pf;
	int rc = 0;

	prom_follow_init(&pf, "keyrouter: status", instance, pin_dir);
	if (watch > 0) {
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	for (;;) {
		char *buf;
		size_t len;
		int loaded, err;

		if (watch > 0)
			prom_follow_round(&pf);
		err = kr_prom_render(instance, pin_dir, &pf.seen, &buf, &len, &loaded);
		if (err) {
			if (err != -EINVAL)
				pr_warn("keyrouter: status: couldn't render the exposition: %s\n",
					strerror(-err));
			rc = 1;
			break;
		}
		if (output) {
			err = write_atomic(output, buf, len);
			if (err) {
				pr_warn("keyrouter: status: couldn't write '%s': %s\n", output,
					strerror(-err));
				free(buf);
				rc = 1;
				break;
			}
		} else {
			fwrite(buf, 1, len, stdout);
			fflush(stdout);
		}
		free(buf);
		if (watch <= 0 || stop)
			break;
		usleep((useconds_t)(watch * 1e6));
		if (stop)
			break;
	}
	kr_follow_names_free(&pf.seen);
	return rc;
}

/* ---- exporter ----------------------------------------------------------------------- */

/* Connection limits.  A Prometheus server scrapes over one connection at a time; the
 * per-address bound keeps a client that opens many connections and trickles their headers
 * (each stays "active", so the idle timeout never fires) from filling the global bound. */
#define EXPORTER_MAX_CONN	512u
#define EXPORTER_PER_ADDR	8u
#define EXPORTER_TIMEOUT	10u

struct exporter {
	const char *instance, *pin_dir;
	unsigned long scrapes;
	struct prom_follow pf;	/* only the HTTP library's one thread touches it */
};

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int code, const char *type,
			     char *body, size_t len, bool owned)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, body,
					    owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	if (!r) {
		if (owned)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **state)
{
	static char index[] = "<html><head><title>keyrouter exporter</title></head><body>"
			      "<h1>keyrouter exporter</h1><p><a href=\"/metrics\">/metrics</a>"
			      "</p></body></html>\n";
	static char notfound[] = "not found: the metrics are at /metrics\n";
	static char notallowed[] = "only GET and HEAD\n";
	static char failed[] = "keyrouter: couldn't read the instances\n";
	struct exporter *ex = cls;
	static int first;
	char *buf;
	size_t len;
	int loaded;

	(void)version, (void)upload;
	if (*state == NULL) {	/* headers only so far; answer on the next call */
		*state = &first;
		return MHD_YES;
	}
	if (*upload_size)	/* a body nobody asked for: read and ignore it */
		return *upload_size = 0, MHD_YES;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", notallowed,
			     strlen(notallowed), false);
	if (!strcmp(url, "/"))
		return reply(c, MHD_HTTP_OK, "text/html", index, strlen(index), false);
	if (strcmp(url, "/metrics"))
		return reply(c, MHD_HTTP_NOT_FOUND, "text/plain", notfound, strlen(notfound),
			     false);
	ex->scrapes++;
	prom_follow_round(&ex->pf);
	if (kr_prom_render(ex->instance, ex->pin_dir, &ex->pf.seen, &buf, &len, &loaded))
		return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain", failed,
			     strlen(failed), false);
	return reply(c, MHD_HTTP_OK, PROM_CONTENT_TYPE, buf, len, true);
}

/* "ADDR:PORT", ADDR an IPv4 address or an IPv6 address in brackets. */
/* Can ADDR be bound here?  0, or the errno (the HTTP library's own message says only
 * "Failed to bind to port 0"): the address is not on this host (a fresh network namespace's
 * lo is down), the port is taken, or a privileged port. */
static int bind_probe(const struct sockaddr_storage *ss, socklen_t sl)
{
	int one = 1, zero = 0, err = 0;
	int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss->ss_family == AF_INET6)	/* as MHD_USE_DUAL_STACK */
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, (const struct sockaddr *)ss, sl))
		err = errno;
	close(fd);
	return err;
}

static int parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *sl)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *res;
	char host[128];
	const char *colon = strrchr(s, ':'), *h = s;
	size_t hl;

	if (!colon || !colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1) ||
	    atoi(colon + 1) < 1 || atoi(colon + 1) > 65535)
		return -EINVAL;
	hl = colon - s;
	if (hl >= 2 && s[0] == '[' && s[hl - 1] == ']')
		h++, hl -= 2;
	else if (memchr(s, ':', hl))
		return -EINVAL;	/* an IPv6 address needs brackets */
	if (hl == 0 || hl >= sizeof(host))
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = 0;
	if (getaddrinfo(host, colon + 1, &hints, &res))
		return -EINVAL;
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*sl = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: keyrouter exporter --listen ADDR:PORT [--instance NAME | --pin-dir DIR]\n"
		"                          [--max-connections N] [--per-address N] [--timeout S]\n\n"
		"Serve the Prometheus exposition of `keyrouter status --prometheus` over HTTP at\n"
		"/metrics, read from the pinned maps at every scrape. The exporter keeps no state,\n"
		"changes nothing and takes no lock: it can run beside applies and be killed or\n"
		"restarted at any time without touching routing. It runs until SIGINT or SIGTERM.\n"
		"It follows its instances: every scrape opens the pins again (nothing is held in\n"
		"between), so an `unload` + `load` or an `upgrade` is exported at the next scrape,\n"
		"and an instance it has exported (or was told with --instance) that is unloaded\n"
		"stays as keyrouter_up{keyrouter_instance=NAME} 0 rather than vanishing.\n\n"
		"  -l, --listen ADDR:PORT  where to listen: 127.0.0.1:9437, [::1]:9437, 0.0.0.0:9437\n"
		"                          or [::]:9437 (IPv6 and IPv4)\n"
		"  -i, --instance NAME     only the instance NAME (default: every instance under\n"
		"                          /sys/fs/bpf/keyrouter; none loaded: keyrouter_up 0)\n"
		"  -p, --pin-dir DIR       only the maps pinned in DIR\n"
		"      --max-connections N connections open at once, all clients (default %u)\n"
		"      --per-address N     connections open at once from one client address\n"
		"                          (default %u): a client that holds connections open and\n"
		"                          trickles its requests cannot take the others' places\n"
		"      --timeout S         close a connection idle for S seconds (default %u)\n"
		"  -h, --help              this text\n\n"
		"GET / is a page that links /metrics; other paths answer 404, other methods 405.\n"
		"A connection beyond a limit is closed at once (the client sees a reset); the\n"
		"exporter raises its open-files limit to fit --max-connections when it can.\n"
		"Capabilities needed: CAP_BPF (CAP_SYS_ADMIN on older kernels) to open the pins,\n"
		"and read access to the bpf filesystem; nothing to bind ports >= 1024.\n",
		EXPORTER_MAX_CONN, EXPORTER_PER_ADDR, EXPORTER_TIMEOUT);
}

/* The HTTP library's messages (MHD_USE_ERROR_LOG), one line each, but a message repeated
 * within a minute (a client held beyond a limit gets "reached connection limit" for every
 * connection it opens) only once, with the count of repeats when it changes. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	static char last[256];
	static unsigned long repeats;
	static time_t last_at;
	time_t now = time(NULL);
	char msg[512];
	size_t len;

	(void)cls;
	if (!strcmp(fmt, last) && now - last_at < 60) {
		repeats++;
		return;
	}
	if (repeats)
		pr_warn("keyrouter exporter: (the last message %lu more times)\n", repeats);
	repeats = 0;
	last_at = now;
	snprintf(last, sizeof(last), "%s", fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	len = strlen(msg);
	pr_warn("keyrouter exporter: %s%s", msg, len && msg[len - 1] == '\n' ? "" : "\n");
}

/* Room for max connections, the listening socket, the pins a scrape opens and stdio:
 * raise the soft open-files limit (up to the hard one) when it is lower. */
static void files_fit(uint32_t max)
{
	struct rlimit rl;
	rlim_t want = (rlim_t)max + 256;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < want)
		pr_warn("keyrouter exporter: open files limited to %llu (hard limit): fewer than "
			"--max-connections %u connections may be served\n",
			(unsigned long long)rl.rlim_cur, max);
}

static void help(FILE *f, const void *ctx)
{
	(void)ctx;
	usage(f);
}

static int cmd_exporter(int argc, char **argv)
{
	struct exporter ex = {};
	const char *listen = NULL, *max_s = NULL, *per_s = NULL, *timeout_s = NULL;
	uint32_t max_conn = EXPORTER_MAX_CONN, per_addr = EXPORTER_PER_ADDR,
		 timeout = EXPORTER_TIMEOUT;
	const struct kr_opt opts[] = {
		KR_OPT_STR("listen", 'l', &listen),
		KR_OPT_STR("max-connections", 0, &max_s),
		KR_OPT_STR("per-address", 0, &per_s),
		KR_OPT_STR("timeout", 0, &timeout_s),
		KR_OPT_STR("instance", 'i', &ex.instance),
		KR_OPT_STR("pin-dir", 'p', &ex.pin_dir),
		KR_OPT_END
	};
	const struct kr_opts_cmd cmd = { .usage = help, .no_args = true };
	struct sockaddr_storage ss = {};
	struct sigaction sa = { .sa_handler = on_signal };
	struct MHD_Daemon *d;
	unsigned int flags;
	socklen_t sl = 0;
	sigset_t set, old;
	int err, first = kr_opts_parse(argc, argv, opts, &cmd);

	if (first < 0)
		return kr_opts_status(first);
	if (!listen)
		return kr_usage_error("--listen ADDR:PORT is required");
	if (ex.instance && ex.pin_dir)
		return kr_usage_error("--instance and --pin-dir exclude each other");
	if (max_s && (kr_parse_u32(max_s, 1, &max_conn) || max_conn > 65536))
		return kr_usage_error("bad --max-connections '%s': expected 1..65536", max_s);
	if (per_s && (kr_parse_u32(per_s, 1, &per_addr) || per_addr > max_conn))
		return kr_usage_error("bad --per-address '%s': expected 1..%u (--max-connections)",
				      per_s, max_conn);
	if (timeout_s && (kr_parse_u32(timeout_s, 1, &timeout) || timeout > 3600))
		return kr_usage_error("bad --timeout '%s': expected 1..3600 seconds", timeout_s);
	if (parse_listen(listen, &ss, &sl))
		return kr_usage_error("bad --listen '%s': expected ADDR:PORT, e.g. 127.0.0.1:9437 "
				      "or [::]:9437", listen);
	err = bind_probe(&ss, sl);
	if (err) {
		pr_warn("keyrouter exporter: couldn't listen on %s: %s%s\n", listen, strerror(err),
			err == EADDRNOTAVAIL ? " (no such address on this host; in a network "
			"namespace of its own, is lo up?)" : err == EADDRINUSE ? " (another "
			"process listens there: 'ss -ltnp' shows which)" : "");
		return 1;
	}
	prom_follow_init(&ex.pf, "keyrouter exporter", ex.instance, ex.pin_dir);
	/* The daemon's thread must not take our signals: block them before it starts. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	files_fit(max_conn);
	/* epoll: select() would stop at descriptor 1023 whatever the limits say */
	flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_DUAL_STACK;
	d = MHD_start_daemon(flags, 0, NULL, NULL, handle, &ex,
			     MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
			     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)timeout,
			     MHD_OPTION_CONNECTION_LIMIT, (unsigned int)max_conn,
			     MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)per_addr,
			     MHD_OPTION_END);
	if (!d) {
		pr_warn("keyrouter exporter: couldn't listen on %s (address in use, or not on "
			"this host?)\n", listen);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return 1;
	}
	pr_info("keyrouter exporter: serving /metrics on %s (at most %u connections, %u per "
		"client address, idle timeout %u s)\n", listen, max_conn, per_addr, timeout);
	while (!stop)
		sigsuspend(&old);
	MHD_stop_daemon(d);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pr_info("keyrouter exporter: stopped after %lu scrapes\n", ex.scrapes);
	kr_follow_names_free(&ex.pf.seen);
	return 0;
}
KR_COMMAND(exporter, "exporter", "serve the Prometheus metrics over HTTP (/metrics)",
	   cmd_exporter);
