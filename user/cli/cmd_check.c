// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* keyrouter check: one line and a Nagios/Icinga plugin's exit status for an instance. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "announce_out.h"
#include "cmd.h"
#include "log.h"
#include "ops.h"
#include "ops_backends.h"
#include "ops_find.h"
#include "ops_health.h"
#include "ops_kernel.h"
#include "health_out.h"
#include "opts.h"

/* The plugin conventions' exit statuses. */
enum { CHECK_OK = 0, CHECK_WARNING = 1, CHECK_CRITICAL = 2, CHECK_UNKNOWN = 3 };

static const char *const check_word[] = { "OK", "WARNING", "CRITICAL", "UNKNOWN" };

static int say(int rc, const char *perf, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int say(int rc, const char *perf, const char *fmt, ...)
{
	va_list ap;

	printf("KEYROUTER %s - ", check_word[rc]);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("%s%s\n", perf && perf[0] ? " | " : "", perf ? perf : "");
	return rc;
}

/* A re-attach by the checker's watchdog this recent is a WARNING (a monitoring system checks
 * every few minutes: the detach would go unseen otherwise). */
#define REATTACH_WINDOW_S	300

/* The health checker, where one ran on the instance (its heartbeat map exists): CRITICAL
 * when it is not running (stopped, killed, hung: a backend that dies meanwhile goes
 * unnoticed), WARNING when a ring is in panic or the watchdog re-attached the program
 * recently.  Its words are appended to what (size n); the verdict is returned. */
static int checker(const struct kr_inst *in, const struct kr_ops_maps *m, char *what, size_t n)
{
	struct kr_health_maps hm;
	struct kr_health_ck ck = {};
	struct kr_health_wd wd = {};
	__u64 now = kr_health_now_ns();
	__u32 zero = 0, panic = 0;
	size_t l = strlen(what);
	int rc = CHECK_OK;

	kr_health_maps_open(in, m, false, &hm);
	if (hm.ck < 0 || bpf_map_lookup_elem(hm.ck, &zero, &ck) || !ck.started_ns) {
		kr_health_maps_close(&hm);
		return CHECK_OK;	/* no checker configured (never ran here) */
	}
	if (!kr_health_checker_alive(&ck, now)) {
		rc = CHECK_CRITICAL;
		l += (size_t)snprintf(what + l, l < n ? n - l : 0, "; health checker NOT RUNNING "
				      "(%s, last heartbeat %.0f s ago): a backend that dies is not "
				      "noticed (systemctl status keyrouter-health@%s)",
				      ck.pid ? "killed or hung" : "stopped",
				      now > ck.beat_ns ? (now - ck.beat_ns) / 1e9 : 0.0, in->name);
	} else {
		l += (size_t)snprintf(what + l, l < n ? n - l : 0, "; health checker running "
				      "(pid %u)", ck.pid);
	}
	for (__u32 id = 0; hm.rings >= 0 && id < KR_MAX_RINGS; id++) {
		struct kr_health_ring r;

		panic += !bpf_map_lookup_elem(hm.rings, &id, &r) && r.total && r.panic;
	}
	if (panic) {
		rc = rc > CHECK_WARNING ? rc : CHECK_WARNING;
		l += (size_t)snprintf(what + l, l < n ? n - l : 0, "; PANIC in %u ring%s (a "
				      "failing backend kept up by the panic threshold)", panic,
				      panic == 1 ? "" : "s");
	}
	if (hm.wd >= 0 && !bpf_map_lookup_elem(hm.wd, &zero, &wd) && wd.last_ns &&
	    now - wd.last_ns <= REATTACH_WINDOW_S * 1000000000ull) {
		rc = rc > CHECK_WARNING ? rc : CHECK_WARNING;
		snprintf(what + l, l < n ? n - l : 0, "; the watchdog re-attached the program "
			 "%.0f s ago (detached behind keyrouter's back; %llu re-attaches)",
			 (now - wd.last_ns) / 1e9, (unsigned long long)wd.reattach_total);
	}
	kr_health_maps_close(&hm);
	return rc;
}

/* The backends' states: CRITICAL when none is up, WARNING when some are down or drain. */
static int backends(struct kr_inst *in, const char *where)
{
	struct kr_ops_maps m;
	struct kr_backend *all = NULL;
	unsigned n = 0, up = 0, down = 0, drain = 0;
	char perf[160], hc[512] = "", an[512];
	int rc, hrc, err, an_rc;

	err = kr_ops_maps_open(in, &m);
	if (err)
		return say(err == -EACCES || err == -EPERM ? CHECK_UNKNOWN : CHECK_CRITICAL, NULL,
			   "instance %s: %s; its maps cannot be opened (%s): run 'keyrouter "
			   "status --instance %s'", in->name, where, strerror(-err), in->name);
	err = kr_ops_backends_read(&m, &all);
	for (__u32 id = 0; !err && id < m.backends_max; id++) {
		if (!all[id].family)
			continue;
		n++;
		up += all[id].state == KR_BACKEND_UP;
		down += all[id].state == KR_BACKEND_DOWN;
		drain += all[id].state == KR_BACKEND_DRAIN;
	}
	free(all);
	hrc = err ? CHECK_OK : checker(in, &m, hc, sizeof(hc));
	kr_ops_maps_close(&m);
	if (err)
		return say(CHECK_UNKNOWN, NULL, "instance %s: %s; its backends cannot be read (%s)",
			   in->name, where, strerror(-err));
	snprintf(perf, sizeof(perf), "backends=%u backends_up=%u backends_down=%u "
		 "backends_drain=%u", n, up, down, drain);
	rc = !n ? CHECK_WARNING : !up ? CHECK_CRITICAL : up < n ? CHECK_WARNING : CHECK_OK;
	/* a VIP withdrawn from BGP for another reason than a drain: this router serves no
	 * traffic of it (`keyrouter announce`) */
	an_rc = kr_announce_check(in, an, sizeof(an));
	if (an_rc && rc == CHECK_OK)
		rc = CHECK_WARNING;
	return say(rc > hrc ? rc : hrc, perf, "instance %s: %s; backends %u up, %u down, %u "
		   "drain%s%s%s%s", in->name, where, up, down, drain, !n ? " (no backend configured)" :
		   !up ? " (no backend takes keys)" : "", hc, an_rc ? "; announce: " : "",
		   an_rc ? an : "");
}

static int check(const char *instance, const char *pin_dir)
{
	struct kr_ops_meta meta = {};
	struct kr_inst in;
	struct stat st;
	char where[192];
	__u32 key = 0;
	int err, rc;

	if (kr_ops_inst_path(&in, instance, pin_dir))
		return say(CHECK_UNKNOWN, NULL, "bad instance name or pin directory");
	if (stat(in.dir, &st))
		return errno == EACCES || errno == EPERM ?
		       say(CHECK_UNKNOWN, NULL, "instance %s: '%s' cannot be read (%s): the check "
			   "needs root", in.name, in.dir, strerror(errno)) :
		       say(CHECK_CRITICAL, NULL, "instance %s is not loaded (no '%s')", in.name,
			   in.dir);
	err = kr_ops_inst_open_reader(&in, instance, pin_dir);
	if (err)
		return say(err == -EACCES || err == -EPERM ? CHECK_UNKNOWN : CHECK_CRITICAL, NULL,
			   "instance %s: its pins cannot be opened (%s)", in.name, strerror(-err));
	if (in.meta_fd >= 0)
		bpf_map_lookup_elem(in.meta_fd, &key, &meta);
	if (meta.magic == KR_OPS_META_LOADING) {
		rc = kr_ops_inst_busy(&in) ?
		     say(CHECK_WARNING, NULL, "instance %s: a load on %s is under way", in.name,
			 meta.ifname) :
		     say(CHECK_CRITICAL, NULL, "instance %s: the load on %s did not finish: run "
			 "'keyrouter load %s -c CONFIG --instance %s' again", in.name, meta.ifname,
			 meta.ifname, in.name);
	} else if (meta.magic != KR_OPS_META_MAGIC) {
		rc = backends(&in, "maps without a record of an attachment (not checked)");
	} else {
		enum kr_ops_attach_state s = kr_ops_attach_state(&meta, NULL);

		snprintf(where, sizeof(where), "%s %s (%s mode, program %u)",
			 s == KR_ATTACHED ? "attached to" : "NOT attached to", meta.ifname,
			 kr_ops_mode_name(meta.mode), meta.prog_id);
		if (s == KR_ATTACHED)
			rc = backends(&in, where);
		else if (s == KR_OTHER_NETNS)
			rc = say(CHECK_UNKNOWN, NULL, "instance %s: on %s in another network "
				 "namespace, which this check cannot enter (needs root)", in.name,
				 meta.ifname);
		else
			rc = say(CHECK_CRITICAL, NULL, "instance %s: %s: %s; traffic bypasses "
				 "keyrouter: 'keyrouter apply -c CONFIG --instance %s' attaches it "
				 "again", in.name, where, kr_ops_attach_state_name(s), in.name);
	}
	kr_ops_inst_close(&in);
	return rc;
}

static void usage(FILE *f, const void *ctx)
{
	(void)ctx;
	fprintf(f,
		"Usage: keyrouter check [--instance NAME | --pin-dir DIR]\n\n"
		"Check an instance for a monitoring system (Nagios/Icinga plugin conventions):\n"
		"one line on standard output, 'KEYROUTER STATE - ...' with performance data\n"
		"after '|', and the exit status:\n"
		"  0 OK        the program is attached where `keyrouter load` attached it,\n"
		"              every backend is up, and the health checker (where one ran on\n"
		"              the instance) runs\n"
		"  1 WARNING   attached, but some backends are down or draining (or none is\n"
		"              configured), a load is under way, a ring is in PANIC (the\n"
		"              checker keeps a failing backend up: the panic threshold), the\n"
		"              checker's watchdog re-attached a detached program in the last\n"
		"              5 minutes, or `keyrouter announce` has withdrawn a VIP from BGP\n"
		"              for another reason than a drain (or is not running, or BIRD\n"
		"              refuses its routes)\n"
		"  2 CRITICAL  not loaded, a load that did not finish, the program not attached\n"
		"              any more or its interface gone (traffic bypasses keyrouter), the\n"
		"              maps missing, no backend up, or the health checker configured\n"
		"              (it ran on the instance: its heartbeat map exists) but stopped,\n"
		"              killed or hung (no heartbeat within 3 of its periods)\n"
		"  3 UNKNOWN   the state cannot be read (no privileges; another network\n"
		"              namespace that cannot be entered)\n"
		"It only reads (no lock, nothing changed). Run it as root, like status.\n\n"
		"  -i, --instance NAME  pins under /sys/fs/bpf/keyrouter/NAME (default \"default\")\n"
		"  -p, --pin-dir DIR    maps pinned in DIR instead\n");
}

static int cmd_check(int argc, char **argv)
{
	const char *instance = NULL, *pin_dir = NULL;
	const struct kr_opt opts[] = {
		KR_OPT_STR("instance", 'i', &instance),
		KR_OPT_STR("pin-dir", 'p', &pin_dir),
		KR_OPT_END
	};
	const struct kr_opts_cmd cmd = { .usage = usage };
	int first = kr_opts_parse(argc, argv, opts, &cmd);

	if (first < 0)
		return kr_opts_status(first);
	if (first != argc)
		return kr_usage_error("unexpected argument '%s'", argv[first]);
	if (instance && pin_dir)
		return kr_usage_error("give --instance NAME or --pin-dir DIR, not both");
	/* one line on standard output: the library's messages would add more */
	kr_log_set_level(KR_LOG_QUIET);
	return check(instance, pin_dir);
}
KR_COMMAND(check, "check", "monitoring check: one line, exit 0 ok, 1 warning, 2 critical",
	   cmd_check);
