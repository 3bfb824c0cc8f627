// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Configuration of QUIC-LB (docs/quic.md): "quic_lb" of a quic service and
 * "quic_lb_server_ids" of its backends; the parsed values, config show, and every error
 * with its file:line:col and path. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/stat.h>
#include "tap.h"
#include "config.h"

static char dir[64], cfgpath[128];

static struct kr_config *parse(const char *text, char **errs)
{
	*errs = NULL;
	return kr_config_parse(cfgpath, text, strlen(text), errs);
}

static void write_file(const char *name, const char *content, mode_t mode)
{
	char p[256];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	unlink(p);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (fd >= 0) {
		if (write(fd, content, strlen(content)) < 0)
			perror("write");
		fchmod(fd, mode);
		close(fd);
	}
}

/* A config: ring "r" with three backends (server IDs in sids0/1/2), a quic service with
 * the given quic_lb array. */
static char *mk(const char *qlb, const char *sids0, const char *sids1, const char *sids2)
{
	char *t = malloc(4096);

	snprintf(t, 4096,
		 "{ \"rings\": [ { \"name\": \"r\", \"format\": \"v2\", \"backends\": [\n"
		 "    { \"address\": \"10.0.0.1:443\", \"mac\": \"02:00:00:00:00:01\"%s%s },\n"
		 "    { \"address\": \"10.0.0.2:443\", \"mac\": \"02:00:00:00:00:02\"%s%s },\n"
		 "    { \"address\": \"10.0.0.3:443\", \"mac\": \"02:00:00:00:00:03\"%s%s } ] } ],\n"
		 "  \"services\": [ { \"name\": \"q\", \"vip\": \"10.0.0.100\", \"port\": 443,\n"
		 "    \"key\": { \"type\": \"quic\", \"cid_length\": 8 }, \"ring\": \"r\",\n"
		 "    \"forward\": { \"mode\": \"l2\" }%s%s } ] }\n",
		 sids0 ? ", \"quic_lb_server_ids\": " : "", sids0 ? sids0 : "",
		 sids1 ? ", \"quic_lb_server_ids\": " : "", sids1 ? sids1 : "",
		 sids2 ? ", \"quic_lb_server_ids\": " : "", sids2 ? sids2 : "",
		 qlb ? ",\n    \"quic_lb\": " : "", qlb ? qlb : "");
	return t;
}

/* The config must fail with an error containing `want` (and a position). */
static void bad(const char *name, char *text, const char *want)
{
	char *errs = NULL;
	struct kr_config *c = parse(text, &errs);
	char pos[160];

	snprintf(pos, sizeof(pos), "%s:", cfgpath);
	CHECK(!c && errs && strstr(errs, want) && strstr(errs, pos), "%s: error '%s'", name, want);
	if (c || !errs || !strstr(errs, want))
		DIAG("got: %s", errs ? errs : "(parsed)");
	else
		DIAG("%s", errs);
	kr_config_free(c);
	free(errs);
	free(text);
}

static void test_good(void)
{
	char *errs, *t = mk("[ { \"config_rotation\": 0, \"server_id_length\": 2, \"nonce_length\": 6 },\n"
			    "      { \"config_rotation\": 1, \"server_id_length\": 3, \"nonce_length\": 12,"
			    " \"key_file\": \"k1.hex\", \"server_use_length\": 2 } ]",
			    "{ \"0\": \"0a01\", \"1\": [\"0b0001\", \"0b0011\"] }",
			    "{ \"0\": \"0a02\", \"1\": \"0b0002\" }", NULL);
	struct kr_config *c = parse(t, &errs);
	const struct kr_cfg_service *s;
	const struct kr_cfg_backend *b;
	char *js;

	CHECK(c != NULL, "valid QUIC-LB config parses");
	if (!c) {
		DIAG("%s", errs);
		free(errs);
		free(t);
		return;
	}
	s = &c->services[0];
	CHECK(s->nqlb == 2 && kr_cfg_qlb_find(s, 0) && kr_cfg_qlb_find(s, 1) && !kr_cfg_qlb_find(s, 2),
	      "two configurations, found by rotation");
	CHECK(s->qlb[0].sid_len == 2 && s->qlb[0].nonce_len == 6 && !s->qlb[0].has_key &&
	      s->qlb[0].su_len == 0, "rotation 0: 2 + 6, plaintext");
	CHECK(s->qlb[1].sid_len == 3 && s->qlb[1].nonce_len == 12 && s->qlb[1].has_key &&
	      s->qlb[1].su_len == 2 && s->qlb[1].key[0] == 0x8f && s->qlb[1].key[15] == 0x7f,
	      "rotation 1: 3 + 12 + 2, key read from the key file");
	b = &c->rings[0].backends[0];
	CHECK(b->nqlb_sids == 3 && b->qlb_sids[0].cr == 0 && b->qlb_sids[0].len == 2 &&
	      b->qlb_sids[0].id[1] == 1 && b->qlb_sids[2].id[2] == 0x11,
	      "backend 0: one ID for rotation 0, two for rotation 1");
	CHECK(c->rings[0].backends[2].nqlb_sids == 0, "backend without server IDs");
	js = kr_config_dump_json(c);
	CHECK(js && strstr(js, "\"quic_lb\"") && strstr(js, "\"server_use_length\": 2") &&
	      strstr(js, "\"0b0011\"") && strstr(js, "k1.hex") && !strstr(js, "8f95"),
	      "config show: configurations, server IDs, key file path, never the key");
	free(js);
	kr_config_free(c);
	free(t);
}

static void test_errors(void)
{
	bad("sum 20", mk("[ { \"config_rotation\": 0, \"server_id_length\": 10, \"nonce_length\": 10 } ]",
			 NULL, NULL, NULL), "the connection ID would be 21 octets");
	bad("sum with server use", mk("[ { \"config_rotation\": 0, \"server_id_length\": 8, "
				      "\"nonce_length\": 8, \"server_use_length\": 4 } ]", NULL, NULL, NULL),
	    "+ server_use_length 4 = 20 octets");
	bad("sid 16", mk("[ { \"config_rotation\": 0, \"server_id_length\": 16, \"nonce_length\": 4 } ]",
			 NULL, NULL, NULL), "quic_lb[0].server_id_length: 16 is out of range: expected 1..15");
	bad("nonce 3", mk("[ { \"config_rotation\": 0, \"server_id_length\": 1, \"nonce_length\": 3 } ]",
			  NULL, NULL, NULL), "nonce_length: 3 is out of range: expected 4..18");
	bad("rotation 7", mk("[ { \"config_rotation\": 7, \"server_id_length\": 1, \"nonce_length\": 4 } ]",
			     NULL, NULL, NULL), "config_rotation: 7 is out of range: expected 0..6");
	bad("missing nonce", mk("[ { \"config_rotation\": 0, \"server_id_length\": 1 } ]", NULL, NULL, NULL),
	    "nonce_length: missing");
	bad("rotation twice", mk("[ { \"config_rotation\": 2, \"server_id_length\": 1, \"nonce_length\": 4 },"
				 " { \"config_rotation\": 2, \"server_id_length\": 2, \"nonce_length\": 4 } ]",
				 NULL, NULL, NULL), "config rotation 2 is configured twice");
	bad("empty list", mk("[]", NULL, NULL, NULL), "0 configurations: expected 1..7");
	bad("unknown field", mk("[ { \"config_rotation\": 0, \"server_id_length\": 1, \"nonce_length\": 4,"
				" \"nonse\": 1 } ]", NULL, NULL, NULL), "unknown field 'nonse'");
	bad("key file missing", mk("[ { \"config_rotation\": 0, \"server_id_length\": 1, \"nonce_length\": 4,"
				   " \"key_file\": \"nope.hex\" } ]", NULL, NULL, NULL),
	    "key_file: couldn't open");
	bad("key file mode", mk("[ { \"config_rotation\": 0, \"server_id_length\": 1, \"nonce_length\": 4,"
				" \"key_file\": \"open.hex\" } ]", NULL, NULL, NULL), "has mode 0644");
	bad("key file short", mk("[ { \"config_rotation\": 0, \"server_id_length\": 1, \"nonce_length\": 4,"
				 " \"key_file\": \"short.hex\" } ]", NULL, NULL, NULL),
	    "expected exactly 32 hex digits");
	bad("wrong length ID", mk("[ { \"config_rotation\": 0, \"server_id_length\": 2, \"nonce_length\": 6 } ]",
				  "{ \"0\": \"0a01\" }", "{ \"0\": \"0a0203\" }", NULL),
	    "rings[0].backends[1].quic_lb_server_ids.0: server ID '0a0203' is 3 octets: config "
	    "rotation 0 of service 'q' has \"server_id_length\": 2");
	bad("duplicate ID", mk("[ { \"config_rotation\": 0, \"server_id_length\": 2, \"nonce_length\": 6 } ]",
			       "{ \"0\": \"0a01\" }", "{ \"0\": \"0a02\" }", "{ \"0\": [\"0a03\", \"0A01\"] }"),
	    "rings[0].backends[2].quic_lb_server_ids.0: duplicate server ID '0a01' for config "
	    "rotation 0 (also rings[0].backends[0])");
	bad("same ID twice on a backend", mk("[ { \"config_rotation\": 0, \"server_id_length\": 2, "
					     "\"nonce_length\": 6 } ]", "{ \"0\": [\"0a01\", \"0a01\"] }",
					     NULL, NULL), "'0a01': listed twice for config rotation 0");
	bad("ID for unconfigured rotation", mk("[ { \"config_rotation\": 0, \"server_id_length\": 2, "
					       "\"nonce_length\": 6 } ]", "{ \"0\": \"0a01\", \"3\": \"0a01\" }",
					       NULL, NULL), "has no quic_lb configuration with "
	    "\"config_rotation\": 3");
	bad("rotation key 7", mk("[ { \"config_rotation\": 0, \"server_id_length\": 2, \"nonce_length\": 6 } ]",
				 "{ \"7\": \"0a01\" }", NULL, NULL), "'7' is not a config rotation");
	bad("bad hex", mk("[ { \"config_rotation\": 0, \"server_id_length\": 2, \"nonce_length\": 6 } ]",
			  "{ \"0\": \"0x01\" }", NULL, NULL), "'0x01': not hex");
	bad("ID too long", mk("[ { \"config_rotation\": 0, \"server_id_length\": 2, \"nonce_length\": 6 } ]",
			      "{ \"0\": \"000102030405060708090a0b0c0d0e0f\" }", NULL, NULL),
	    "a server ID is 1..15 octets in hex");
	{
		char *t = mk("[ { \"config_rotation\": 0, \"server_id_length\": 2, \"nonce_length\": 6 } ]",
			     NULL, NULL, NULL);
		char *p = strstr(t, "\"type\": \"quic\", \"cid_length\": 8");

		memcpy(p, "\"type\": \"tuple\"                 ", strlen("\"type\": \"tuple\"                 "));
		bad("not a quic service", t, "QUIC-LB needs \"key\": {\"type\": \"quic\"");
	}
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/kr-qlbcfg.%d", (int)getpid());
	mkdir(dir, 0700);
	snprintf(cfgpath, sizeof(cfgpath), "%s/t.json", dir);
	write_file("k1.hex", "8f95f09245765f80256934e50c66207f\n", 0600);
	write_file("open.hex", "8f95f09245765f80256934e50c66207f\n", 0644);
	write_file("short.hex", "8f95f09245765f80\n", 0600);
	test_good();
	test_errors();
	unlink("k1.hex");
	{
		char p[256];

		snprintf(p, sizeof(p), "rm -rf '%s'", dir);
		if (system(p))
			DIAG("couldn't remove %s", dir);
	}
	return tap_done();
}
