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
#include "ops_kernel.h"
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

/* The backends' states: CRITICAL when none is up, WARNING when some are down or drain. */
static int backends(struct kr_inst *in, const char *where)
{
	struct kr_ops_maps m;
	struct kr_backend *all = NULL;
	unsigned n = 0, up = 0, down = 0, drain = 0;
	char perf[160], an[512];
	int rc, err, an_rc;

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
	return say(rc, perf, "instance %s: %s; backends %u up, %u down, %u drain%s%s%s", in->name,
		   where, up, down, drain, !n ? " (no backend configured)" :
		   !up ? " (no backend takes keys)" : "", an_rc ? "; announce: " : "",
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
		"  0 OK        the program is attached where `keyrouter load` attached it, and\n"
		"              every backend is up\n"
		"  1 WARNING   attached, but some backends are down or draining (or none is\n"
		"              configured), or a load is under way, or `keyrouter announce`\n"
		"              has withdrawn a VIP from BGP for another reason than a drain\n"
		"              (or is not running, or BIRD refuses its routes)\n"
		"  2 CRITICAL  not loaded, a load that did not finish, the program not attached\n"
		"              any more or its interface gone (traffic bypasses keyrouter), the\n"
		"              maps missing, or no backend up\n"
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
