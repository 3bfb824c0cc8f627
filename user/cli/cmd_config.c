// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `keyrouter config check|show -c FILE`: validate a configuration without the kernel. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "opts.h"
#include "config.h"
#include "image.h"
#include "log.h"
#include "ops.h"
#include "ops_find.h"
#include "ops_lint.h"

static void check_usage(FILE *f, const char *name)
{
	fprintf(f,
		"Usage: keyrouter config %s -c FILE %s\n\n"
		"%s\n\n"
		"Options:\n"
		"  -c, --config FILE  the configuration (JSON with // and # comments,\n"
		"                     see docs/config.md); '-' = standard input\n"
		"%s"
		"  -h, --help         this text\n\n"
		"Exit status: 0 valid, 1 invalid (every error printed as\n"
		"FILE:LINE:COL: JSON.PATH: message), 2 usage error.\n",
		name, !strcmp(name, "show") ? "[--json]" :
			"[--build] [--live [--instance NAME] [--strict]]",
		!strcmp(name, "show") ?
			"Validates the configuration and prints it normalized (every default\n"
			"filled in, addresses in canonical form) as JSON." :
			"Validates the configuration without touching the kernel and prints a\n"
			"summary: rings (backends, points, estimated kernel memory) and services.",
		!strcmp(name, "show") ? "      --json         JSON output (the default)\n" :
		"      --build        also build every ring and its kernel image (in memory):\n"
		"                     points after dedup, ring digest, exact image size\n"
		"      --live         also compare it with this network namespace, as apply\n"
		"                     does (warnings): a backend MAC other than the router's\n"
		"                     neighbour entry for its address; an l2 backend without\n"
		"                     \"dev\" that the router routes through another device than\n"
		"                     the instance's ingress (with --instance: the interface it\n"
		"                     is loaded on); a VIP that is one of the router's addresses\n"
		"      --instance NAME  with --live: the loaded instance whose interface is the\n"
		"                     ingress (default: the config's \"instance\", if loaded)\n"
		"      --strict       with --live: a warning fails the check (exit 1)\n");
}

/* "12.0 KiB", "1.50 MiB", "2.25 GiB" */
static const char *human_bytes(uint64_t b, char *buf, size_t n)
{
	if (b < (1ull << 20))
		snprintf(buf, n, "%.1f KiB", (double)b / 1024.0);
	else if (b < (1ull << 30))
		snprintf(buf, n, "%.2f MiB", (double)b / (1024.0 * 1024.0));
	else
		snprintf(buf, n, "%.2f GiB", (double)b / (1024.0 * 1024.0 * 1024.0));
	return buf;
}

static void print_summary(const struct kr_config *cfg)
{
	uint64_t total = 0;
	char hb[32];

	printf("%s: valid: %u ring%s, %u service%s%s%s\n", cfg->file, cfg->nrings,
	       cfg->nrings == 1 ? "" : "s", cfg->nservices, cfg->nservices == 1 ? "" : "s",
	       cfg->instance ? ", instance " : "", cfg->instance ? cfg->instance : "");
	for (uint32_t i = 0; i < cfg->nrings; i++) {
		const struct kr_cfg_ring *r = &cfg->rings[i];
		uint64_t mem = kr_cfg_ring_image_bytes(r);

		total += mem;
		printf("ring %s: format v%u point_multiple %u%s backends %u points %llu "
		       "kernel %s\n", r->name, r->format, r->point_multiple,
		       r->pm_auto ? " (auto)" : "", r->nbackends,
		       (unsigned long long)r->npoints, human_bytes(mem, hb, sizeof(hb)));
	}
	for (uint32_t i = 0; i < cfg->nservices; i++) {
		const struct kr_cfg_service *s = &cfg->services[i];
		char ip[KR_IP_STRLEN], vip[KR_IP_STRLEN + 2];

		kr_ip_format(&s->vip, ip);
		if (s->vip_any)
			snprintf(vip, sizeof(vip), "*");
		else
			snprintf(vip, sizeof(vip), s->vip.family == 6 ? "[%s]" : "%s", ip);
		printf("service %s: %s:%u/udp key %s ring %s", s->name, vip, s->port,
		       kr_key_type_name(s->key.type), cfg->rings[s->ring].name);
		if (s->nsubset) {
			const struct kr_cfg_ring *r = &cfg->rings[s->ring];
			uint32_t in = 0;

			for (uint32_t t = 0; t < s->nsubset; t++)
				printf("%s%s", t ? "," : " subset ", s->subset[t]);
			for (uint32_t b = 0; b < r->nbackends; b++)
				in += kr_cfg_in_subset(s, &r->backends[b]);
			printf(" (%u of %u backends)", in, r->nbackends);
		}
		printf(" forward %s\n", s->fwd.mode == KR_FWD_L2 ? "l2" : "ipip");
	}
	printf("kernel memory of the ring images (estimate, before dedup): %s\n",
	       human_bytes(total, hb, sizeof(hb)));
}

/* --build: every ring through the engine and the image encoder, as apply would. */
static int build_rings(const struct kr_config *cfg)
{
	struct kr_image img = { 0 };
	struct kr_ring *r = NULL;
	struct kr_err err;
	char hb[32];

	for (uint32_t i = 0; i < cfg->nrings; i++) {
		if (kr_config_ring_build(cfg, i, &r, &err)) {
			fprintf(stderr, "keyrouter: %s\n", err.msg);
			return 1;
		}
		if (kr_image_encode(&img, r, NULL, &err)) {
			fprintf(stderr, "keyrouter: %s: ring '%s': %s\n", cfg->file,
				cfg->rings[i].name, err.msg);
			kr_ring_free(r);
			return 1;
		}
		printf("built %s: points %u (duplicates %u) digest %08x image %s "
		       "build %.3f ms\n", cfg->rings[i].name, r->npoints, r->ndups, r->digest,
		       human_bytes(img.size, hb, sizeof(hb)), r->stats.build_ns / 1e6);
		kr_image_free(&img);
		kr_ring_free(r);
		r = NULL;
	}
	return 0;
}

/* --live: the checks apply makes against this network namespace (ops_lint.h); the ingress
 * is the interface the instance is loaded on, when it is loaded here. */
static int check_live(const struct kr_config *cfg, const char *instance, bool strict)
{
	const char *name = instance ? instance : cfg->instance;
	struct kr_ops_meta meta = {};
	uint32_t ingress = 0;
	char *text = NULL;
	int n;

	if (name && !kr_ops_meta_read(name, &meta) && meta.magic == KR_OPS_META_MAGIC &&
	    (!meta.netns_ino || meta.netns_ino == kr_ops_netns_ino()))
		ingress = meta.ifindex;
	else if (instance) {
		fprintf(stderr, "keyrouter: config check --live: instance '%s' is not loaded in "
			"this network namespace: its ingress device is unknown\n", instance);
		return 1;
	}
	n = kr_ops_lint(cfg, ingress, &text);
	if (n < 0) {
		fprintf(stderr, "keyrouter: config check --live: out of memory\n");
		return 1;
	}
	if (text)
		fputs(text, stderr);
	free(text);
	printf("live: %d warning%s in this network namespace%s\n", n, n == 1 ? "" : "s",
	       ingress ? "" : " (no loaded instance: the ingress device check was left out)");
	return strict && n ? 1 : 0;
}

static void help(FILE *f, const void *ctx)
{
	check_usage(f, *(const bool *)ctx ? "show" : "check");
}

static int config_cmd(int argc, char **argv, bool show)
{
	const char *file = NULL, *instance = NULL;
	bool json = false, build = false, live = false, strict = false;
	const struct kr_opt opts[] = {
		KR_OPT_STR("config", 'c', &file),
		KR_OPT_FLAG("build", 0, &build),
		KR_OPT_FLAG("json", 0, &json),
		KR_OPT_FLAG("live", 0, &live),
		KR_OPT_STR("instance", 'i', &instance),
		KR_OPT_FLAG("strict", 0, &strict),
		KR_OPT_END
	};
	const struct kr_opts_cmd cmd = { .usage = help, .ctx = &show };
	struct kr_config *cfg;
	char *errs = NULL, *out;
	int ret = 0, first = kr_opts_parse(argc, argv, opts, &cmd);

	if (first < 0)
		return kr_opts_status(first);
	if (json && !show)
		return kr_usage_error("config check has no --json (use config show)");
	if (build && show)
		return kr_usage_error("config show has no --build (use config check)");
	if ((live || instance || strict) && show)
		return kr_usage_error("config show has no --live (use config check)");
	if ((instance || strict) && !live)
		return kr_usage_error("--instance and --strict go with --live");
	if (!file || first != argc)
		return kr_usage_error("%s", file ? "unexpected argument" : "missing -c FILE");
	cfg = kr_config_load(file, &errs);
	if (!cfg) {
		fputs(errs, stderr);
		fprintf(stderr, "keyrouter: configuration '%s' is invalid\n", file);
		free(errs);
		return 1;
	}
	if (cfg->warnings)
		fputs(cfg->warnings, stderr);
	if (show) {
		out = kr_config_dump_json(cfg);
		if (out)
			puts(out);
		free(out);
	} else {
		print_summary(cfg);
		if (build)
			ret = build_rings(cfg);
		if (live && !ret)
			ret = check_live(cfg, instance, strict);
	}
	kr_config_free(cfg);
	return ret;
}

static int cmd_config_check(int argc, char **argv)
{
	return config_cmd(argc, argv, false);
}

static int cmd_config_show(int argc, char **argv)
{
	return config_cmd(argc, argv, true);
}

KR_COMMAND(config_check, "config check", "validate a configuration file (no kernel)",
	   cmd_config_check);
KR_COMMAND(config_show, "config show", "print a configuration normalized, as JSON",
	   cmd_config_show);
