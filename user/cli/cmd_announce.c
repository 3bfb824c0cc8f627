// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* keyrouter announce: the instance's VIPs over BGP through BIRD (user/daemon/announce.c). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include "announce.h"
#include "apply_out.h"
#include "cmd.h"
#include "lock_wait.h"
#include "log.h"
#include "opts.h"

#define DEF_INTERVAL_S		1.0
#define DEF_QUIET_S		1.0
#define DEF_DRAIN_TIMEOUT_S	30.0

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: keyrouter announce -c CONFIG [--instance NAME | --pin-dir DIR]\n"
		"                          [--bird-socket PATH] [--bird-file PATH] [--interval S]\n"
		"                          [--min-up N] [--drain-quiet S] [--drain-timeout S]\n"
		"       keyrouter announce --drain | --undrain [--instance NAME] [--wait S]\n\n"
		"Announce the VIPs of the instance over BGP through this router's BIRD 2, only\n"
		"while this router can serve them (docs/deploy.md \"Joining the fleet: BGP\"). It\n"
		"runs until stopped, one per instance (unit keyrouter-announce@INSTANCE). Every\n"
		"round (--interval, default 1 s) each VIP (an address: every service of CONFIG on\n"
		"it, any port; wildcard services have none) is announced only when all hold:\n"
		"  - the instance is loaded and its program is attached where `load` attached it\n"
		"    (what `status` checks: exit 3 otherwise);\n"
		"  - its published state is what CONFIG asks: `apply --dry-run -c CONFIG` would\n"
		"    change nothing (apply's own plan). A router that joins with older rings is\n"
		"    announced once `apply` made it current. CONFIG is read again when the file\n"
		"    changes: between an edit and its apply the VIPs are withdrawn (the unit\n"
		"    keyrouter-apply@.path applies at once);\n"
		"  - every service on the VIP has at least --min-up backends up in its ring (its\n"
		"    subset); default: the ring's health panic threshold (0.5) of its backends,\n"
		"    rounded up, at least 1;\n"
		"  - no `unload` is withdrawing it and the router is not drained.\n"
		"A failure of the first three withdraws the VIP at the round that sees it. A drain\n"
		"(--drain) or an unload first marks the routes with the GRACEFUL_SHUTDOWN\n"
		"community (65535:0, RFC 8326; the upstream lowers their preference and moves the\n"
		"traffic to the other routers while this one stays a backup), then withdraws them\n"
		"once this router's routed+dropped counters stood still for --drain-quiet (default\n"
		"1 s), or after --drain-timeout (default 30 s). While a drain runs, rounds are\n"
		"0.1 s apart. A command holding the instance's lock (apply, upgrade, backend set)\n"
		"keeps the last round's decision: `upgrade` never withdraws.\n\n"
		"BIRD: the routes are written into --bird-file (default\n"
		"" KR_ANNOUNCE_BIRD_DIR "/INSTANCE.conf): one `protocol static` per family named\n"
		"keyrouter_INSTANCE_4 / _6, each route a blackhole with the attribute keyrouter_vip\n"
		"= 1; then BIRD is told `configure` on --bird-socket (default " KR_ANNOUNCE_BIRD_SOCKET ").\n"
		"The router's BIRD configuration must declare `attribute int keyrouter_vip;`,\n"
		"include the file at the top level and export the routes that carry it: the\n"
		"template /usr/share/keyrouter/bird/keyrouter-router.conf does (with BFD). A\n"
		"configure BIRD refuses is logged and tried again every round.\n\n"
		"Killed or stopped, the announcer leaves the routes as they are: the data path\n"
		"still routes, systemd restarts it; but a failure meanwhile (the program\n"
		"detached, backends down) is not withdrawn until it runs again. `status`,\n"
		"`status --json`, `--prometheus` and `check` show each VIP's route and reason,\n"
		"the BGP sessions BIRD reports, and whether the announcer runs.\n\n"
		"  -c, --config FILE       the configuration (JSON)\n"
		"  -i, --instance NAME     the instance (default: the config's \"instance\", else\n"
		"                          \"default\")\n"
		"  -p, --pin-dir DIR       maps pinned in DIR instead\n"
		"      --bird-socket PATH  BIRD's control socket\n"
		"      --bird-file PATH    the include file written\n"
		"  -I, --interval S        seconds between rounds (0.1 .. 60; default 1)\n"
		"      --min-up N          backends each service needs up (default: see above)\n"
		"      --drain-quiet S     a drain withdraws after S s without traffic (default 1)\n"
		"      --drain-timeout S   ... or after S s in any case (default 30)\n"
		"      --drain             drain this router: the running announcer withdraws every\n"
		"                          VIP gracefully (as above); waits until it did, at most\n"
		"                          --wait S (default 35). Kept until --undrain (an unload\n"
		"                          forgets it)\n"
		"      --undrain           announce again (as soon as the conditions hold); also\n"
		"                          after an unload that failed once the VIPs were\n"
		"                          withdrawn (they stay withdrawn: \"unloading\")\n"
		"      --wait S            (with --drain) how long to wait\n\n"
		"Exit status: the announcer runs until SIGTERM/SIGINT (0), 1 when CONFIG cannot be\n"
		"read at the start; --drain: 0 withdrawn, 1 not within --wait or no announcer runs\n"
		"(the drain is recorded: a starting announcer does not announce).\n");
}

static void help(FILE *f, const void *ctx)
{
	(void)ctx;
	usage(f);
}

static int seconds(const char *arg, const char *opt, double lo, double hi, double *out)
{
	char *end;
	double v;

	if (!arg)
		return 0;
	v = strtod(arg, &end);
	if (end == arg || *end || !(v >= lo && v <= hi)) {
		kr_usage_error("%s: expected seconds %g .. %g, not '%s'", opt, lo, hi, arg);
		return -1;
	}
	*out = v;
	return 0;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void vip_text(const struct kr_announce_vip *v, char *ip)
{
	inet_ntop(v->family == 4 ? AF_INET : AF_INET6, v->ip, ip, INET6_ADDRSTRLEN);
}

/* --drain / --undrain: record it, then (drain) wait for the announcer to withdraw. */
static int drain(const char *instance, bool on, double wait_s)
{
	struct kr_announce_view v;
	struct kr_inst in;
	char ip[INET6_ADDRSTRLEN];
	time_t t0 = time(NULL);
	int err;

	if (kr_ops_inst_open(&in, instance, NULL))
		return 1;
	err = kr_announce_set_drain(&in, on);
	kr_ops_inst_close(&in);
	if (err) {
		pr_warn("keyrouter: couldn't record the drain: %s\n", strerror(-err));
		return 1;
	}
	if (kr_ops_inst_open_reader(&in, instance, NULL))
		return 1;
	for (;;) {
		bool done = true;

		err = kr_announce_view_read(&in, &v);
		if (err || !v.running) {
			pr_warn("keyrouter: instance '%s' %s, but no announcer runs: nothing is "
				"withdrawn or announced until `keyrouter announce` runs\n",
				in.name, on ? "is drained" : "is undrained");
			kr_ops_inst_close(&in);
			return on ? 1 : 0;
		}
		for (__u32 i = 0; i < v.ck.nvips; i++)
			if (on ? v.vip[i].route != KR_VIP_WITHDRAWN : v.vip[i].why == KR_VIP_DRAINED)
				done = false;
		if (done || difftime(time(NULL), t0) > wait_s)
			break;
		usleep(100000);
	}
	kr_ops_inst_close(&in);
	for (__u32 i = 0; i < v.ck.nvips; i++) {
		vip_text(&v.vip[i], ip);
		printf("announce: VIP %s %s (%s)\n", ip, kr_vip_route_name(v.vip[i].route),
		       kr_vip_why_name(v.vip[i].why));
	}
	for (__u32 i = 0; i < v.ck.nvips; i++)
		if (on && v.vip[i].route != KR_VIP_WITHDRAWN) {
			pr_warn("keyrouter: not every VIP of '%s' was withdrawn within %.1f s\n",
				in.name, wait_s);
			return 1;
		}
	return 0;
}

static int cmd_announce(int argc, char **argv)
{
	const char *interval = NULL, *min_up = NULL, *quiet = NULL, *timeout = NULL,
		   *wait = NULL;
	struct kr_announcer a = { .bird_socket = KR_ANNOUNCE_BIRD_SOCKET, .min_up = -1 };
	bool on = false, off = false;
	const struct kr_opt opts[] = {
		KR_OPT_STR("config", 'c', &a.config),
		KR_OPT_STR("instance", 'i', &a.instance),
		KR_OPT_STR("pin-dir", 'p', &a.pin_dir),
		KR_OPT_STR("bird-socket", 0, &a.bird_socket),
		KR_OPT_STR("bird-file", 0, &a.bird_file),
		KR_OPT_STR("interval", 'I', &interval),
		KR_OPT_STR("min-up", 0, &min_up),
		KR_OPT_STR("drain-quiet", 0, &quiet),
		KR_OPT_STR("drain-timeout", 0, &timeout),
		KR_OPT_FLAG("drain", 0, &on),
		KR_OPT_FLAG("undrain", 0, &off),
		KR_OPT_STR("wait", 0, &wait),
		KR_OPT_END
	};
	const struct kr_opts_cmd cmd = { .usage = help, .no_args = true };
	struct sigaction sa = { .sa_handler = on_signal };
	double ival = DEF_INTERVAL_S, q = DEF_QUIET_S, to = DEF_DRAIN_TIMEOUT_S, w = -1;
	char file[4200];
	int rc, first = kr_opts_parse(argc, argv, opts, &cmd);

	if (first < 0)
		return kr_opts_status(first);
	if (seconds(interval, "--interval", 0.1, 60, &ival) || seconds(quiet, "--drain-quiet", 0,
	    600, &q) || seconds(timeout, "--drain-timeout", 0, 3600, &to) ||
	    seconds(wait, "--wait", 0, 3600, &w))
		return 2;
	if (min_up) {
		char *end;
		long v = strtol(min_up, &end, 10);

		if (end == min_up || *end || v < 0 || v > 65535)
			return kr_usage_error("--min-up: expected a number of backends, not '%s'",
					      min_up);
		a.min_up = (int)v;
	}
	if (on && off)
		return kr_usage_error("--drain or --undrain, not both");
	if (on || off) {
		struct kr_config *cfg = NULL;
		const char *inst = a.instance;

		if (a.pin_dir)
			return kr_usage_error("--drain/--undrain: --instance, not --pin-dir");
		if (!inst && a.config && (cfg = kr_cli_config_load(a.config)))
			inst = cfg->instance;
		rc = drain(inst ? inst : "default", on, w >= 0 ? w : to + 5);
		kr_config_free(cfg);
		return rc;
	}
	if (!a.config || (a.instance && a.pin_dir))
		return kr_usage_error("expected -c CONFIG (and at most one of --instance, "
				      "--pin-dir)");
	a.interval_ms = (unsigned)(ival * 1000 + 0.5);
	a.timing.quiet_ns = (__u64)(q * 1e9);
	a.timing.timeout_ns = (__u64)(to * 1e9);
	{
		struct kr_config *cfg = kr_cli_config_load(a.config);

		if (!cfg)
			return 1;
		if (!a.instance && !a.pin_dir)
			a.instance = cfg->instance ? strdup(cfg->instance) : "default";
		kr_config_free(cfg);
	}
	if (!a.bird_file) {
		snprintf(file, sizeof(file), "%s/%s.conf", KR_ANNOUNCE_BIRD_DIR,
			 a.instance ? a.instance : "pindir");
		a.bird_file = file;
	}
	if (kr_announce_init(&a)) {
		kr_announce_free(&a);
		return 1;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	pr_info("announce: instance '%s': %u VIPs through BIRD at %s (file %s), every %.1f s\n",
		a.instance ? a.instance : a.pin_dir, a.nvips, a.bird_socket, a.bird_file, ival);
	rc = kr_announce_run(&a, &stop);
	kr_announce_free(&a);
	return rc;
}
KR_COMMAND(announce, "announce", "announce the VIPs over BGP through BIRD while this router "
	   "can serve them; --drain", cmd_announce);
