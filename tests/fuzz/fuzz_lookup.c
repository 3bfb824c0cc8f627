// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The `lookup` command's key parsers, end to end: the command itself (found in the
 * kr_cmds section, as main() finds it) runs on a keys file made of the fuzz input, with
 * hex keys (--keys-file), with each service's human key form (-c CONFIG --service S:
 * dns, memcache, quic, tuple, payload with offset+delimiter and offset+length), and with
 * keys as arguments.  Properties: no crash, no leak (LeakSanitizer), exit status 0, 1 or
 * 2 only.  Output goes to /dev/null.
 * Input: [mode] then the keys file (or, in argument mode, newline-separated arguments).
 */
#include <unistd.h>
#include "fuzz.h"
#include "cmd.h"
#include "log.h"

extern const struct kr_cmd __start_kr_cmds[], __stop_kr_cmds[];

static const struct kr_cmd *lookup;
static char dir[64], cfg[96], keys[96];

static const char config[] =
	"{ \"rings\": [ { \"name\": \"r\", \"format\": \"v2\", \"point_multiple\": 8,\n"
	"    \"backends\": [ { \"address\": \"10.0.0.1:53\" }, { \"address\": \"10.0.0.2:53\", \"weight\": 2 },\n"
	"                  { \"address\": \"[2001:db8::3]:53\" } ] } ],\n"
	"  \"services\": [\n"
	"    { \"name\": \"dns\", \"vip\": \"192.0.2.1\", \"port\": 53, \"ring\": \"r\", \"key\": { \"type\": \"dns\" } },\n"
	"    { \"name\": \"mc\", \"vip\": \"192.0.2.1\", \"port\": 11211, \"ring\": \"r\", \"key\": { \"type\": \"memcache\" } },\n"
	"    { \"name\": \"quic\", \"vip\": \"192.0.2.1\", \"port\": 443, \"ring\": \"r\", \"key\": { \"type\": \"quic\", \"cid_length\": 8 } },\n"
	"    { \"name\": \"tuple\", \"vip\": \"192.0.2.1\", \"port\": 1000, \"ring\": \"r\", \"key\": { \"type\": \"tuple\" } },\n"
	"    { \"name\": \"pd\", \"vip\": \"192.0.2.1\", \"port\": 1001, \"ring\": \"r\", \"key\": { \"type\": \"payload\", \"offset\": 2, \"delimiter\": \"|\" } },\n"
	"    { \"name\": \"pl\", \"vip\": \"192.0.2.1\", \"port\": 1002, \"ring\": \"r\", \"key\": { \"type\": \"payload\", \"offset\": 1, \"length\": 4 } }\n"
	"  ] }\n";

static void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "w");

	if (!f || fwrite(p, 1, n, f) != n || fclose(f))
		abort();
}

static void cleanup(void)
{
	unlink(cfg);
	unlink(keys);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	for (const struct kr_cmd *c = __start_kr_cmds; c < __stop_kr_cmds; c++)
		if (!strcmp(c->name, "lookup"))
			lookup = c;
	if (!lookup)
		abort();
	snprintf(dir, sizeof(dir), "/tmp/kr-fuzz-lookup.XXXXXX");
	if (!mkdtemp(dir))
		abort();
	snprintf(cfg, sizeof(cfg), "%s/c.json", dir);
	snprintf(keys, sizeof(keys), "%s/keys", dir);
	write_file(cfg, config, sizeof(config) - 1);
	atexit(cleanup);
	if (!freopen("/dev/null", "w", stdout))
		abort();
	kr_log_set_level(KR_LOG_QUIET);
	return 0;
}

static int run(char **argv)
{
	int argc = 0, r;

	while (argv[argc])
		argc++;
	optind = 0;	/* glibc: a full getopt reset */
	r = lookup->fn(argc, argv);
	FUZZ_ASSERT(r == 0 || r == 1 || r == 2, "exit status %d", r);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const svc[] = { "dns", "mc", "quic", "tuple", "pd", "pl" };
	char *args[16], *text, *p;
	int na = 0;

	if (size < 1 || size > 4096)
		return 0;
	if (data[0] < 0x80) {	/* a keys file */
		write_file(keys, data + 1, size - 1);
		if (data[0] % 7 == 6) {
			char *argv[] = { "lookup", "-c", cfg, "--ring", "r", "--image",
					 "--keys-file", keys, NULL };
			run(argv);
		} else {
			char *argv[] = { "lookup", "-c", cfg, "--service", (char *)svc[data[0] % 7 % 6],
					 "--keys-file", keys, "--addr", NULL };
			if (data[0] & 0x40)
				argv[3] = "--ring", argv[4] = "r", argv[5] = "--keys-file";
			run(argv);
		}
		return 0;
	}
	/* arguments: newline-separated */
	text = fuzz_cstr(data + 1, size - 1);
	args[na++] = "lookup";
	args[na++] = "-c";
	args[na++] = cfg;
	args[na++] = "--service";
	args[na++] = (char *)svc[data[0] % 6];
	if (data[0] & 0x40)
		args[3] = "--ring", args[4] = "r";
	for (p = text; p && na < 15; ) {
		args[na++] = p;
		p = strchr(p, '\n');
		if (p)
			*p++ = 0;
	}
	args[na] = NULL;
	run(args);
	free(text);
	return 0;
}
