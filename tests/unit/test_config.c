// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Configuration parser: the parsed values and defaults, comment blanking, error reports.
 * (Every error path of the CLI is in tests/bats/config.bats.) */
#include <stdlib.h>
#include <string.h>
#include "tap.h"
#include "config.h"

static struct kr_config *parse(const char *text, char **errs)
{
	return kr_config_parse("t.json", text, strlen(text), errs);
}

static void test_comments(void)
{
	char t[] = "{ \"a\": \"http://x#y\", // c \"q\"\n# whole line\n \"b\": 1 } # end";
	const char *want = "{ \"a\": \"http://x#y\",         \n            \n \"b\": 1 }      ";

	kr_config_strip_comments(t, strlen(t));
	CHECK(!strcmp(t, want), "comments blanked, strings and newlines kept");
	if (strcmp(t, want))
		DIAG("got '%s'", t);
	char e[] = "{ \"a\\\"//\": 1 }";
	kr_config_strip_comments(e, strlen(e));
	CHECK(!strcmp(e, "{ \"a\\\"//\": 1 }"), "escaped quote does not end the string");
}

static const char good[] =
	"// test\n"
	"{ \"instance\": \"i1\",\n"
	"  \"rings\": [\n"
	"   { \"name\": \"r\", \"format\": \"v2\", \"point_multiple\": 16, \"backends\": [\n"
	"     { \"address\": \"10.0.0.1:53\", \"weight\": 3, \"mac\": \"02:00:0A:00:00:01\",\n"
	"       \"tags\": [\"eu\", \"ssd\"], \"dev\": \"veth0\" },\n"
	"     { \"address\": \"[2001:db8::2]:53\", \"weight\": 0, \"state\": \"drain\",\n"
	"       \"mac\": \"02:00:00:00:00:02\", \"tags\": [\"ssd\"], \"ifindex\": 7 },\n"
	"     { \"address\": \"10.0.0.3:53\", \"state\": \"down\", \"mac\": \"02:00:00:00:00:03\",\n"
	"       \"tags\": [\"eu\"] } ] },\n"
	"   { \"name\": \"v1ring\", \"format\": \"v1\", \"backends\": [ { \"address\": \"10.1.0.1:1\" } ] } ],\n"
	"  \"services\": [\n"
	"   { \"name\": \"s\", \"vip\": \"::\", \"port\": 53, \"key\": { \"type\": \"payload\", \"offset\": 4,\n"
	"     \"delimiter\": \"|\" }, \"ring\": \"r\", \"subset\": [\"ssd\", \"eu\"], \"forward\": { \"mode\": \"l2\" },\n"
	"     \"policy\": { \"key_too_long\": \"drop\" } },\n"
	"   { \"name\": \"q\", \"vip\": \"2001:db8::53\", \"port\": 443, \"key\": { \"type\": \"quic\",\n"
	"     \"cid_length\": 8 }, \"ring\": \"v1ring\", \"forward\": { \"mode\": \"ipip\", \"source4\": \"192.0.2.1\" } } ] }\n";

static void test_values(void)
{
	char *errs = NULL;
	struct kr_config *c = parse(good, &errs);
	const struct kr_cfg_ring *r;
	const struct kr_cfg_service *s;

	CHECK(c && !errs, "valid config parses");
	if (!c) {
		DIAG("%s", errs);
		free(errs);
		return;
	}
	CHECK(!strcmp(c->instance, "i1") && c->nrings == 2 && c->nservices == 2, "counts");
	r = &c->rings[0];
	CHECK_EQ_U(r->format, 2, "format v2");
	CHECK_EQ_U(r->point_multiple, 16, "point_multiple");
	CHECK_EQ_U(r->nbackends, 3, "3 backends");
	CHECK_EQ_U(r->npoints, 3 * 16 + 0 + 1 * 16, "points = sum weight x pm");
	CHECK(r->backends[0].addr.family == 4 && r->backends[0].addr.port == 53 &&
	      r->backends[0].addr.ip[0] == 10 && r->backends[0].addr.ip[3] == 1, "address 0");
	CHECK(r->backends[1].addr.family == 6 && r->backends[1].addr.ip[15] == 2, "address 1 v6");
	CHECK_EQ_U(r->backends[0].weight, 3, "weight");
	CHECK_EQ_U(r->backends[2].weight, 1, "default weight 1");
	CHECK_EQ_U(r->backends[0].state, KR_BACKEND_UP, "default state up");
	CHECK_EQ_U(r->backends[1].state, KR_BACKEND_DRAIN, "drain");
	CHECK_EQ_U(r->backends[2].state, KR_BACKEND_DOWN, "down");
	CHECK(r->backends[0].has_mac && r->backends[0].mac[2] == 0x0a && r->backends[0].mac[5] == 1,
	      "mac (uppercase accepted)");
	CHECK(!strcmp(r->backends[0].dev, "veth0") && r->backends[0].ifindex == 0, "dev");
	CHECK(r->backends[1].ifindex == 7 && !r->backends[1].dev[0], "ifindex");
	CHECK(r->ntags == 2 && !strcmp(r->tags[0], "eu") && !strcmp(r->tags[1], "ssd"),
	      "ring tags in first-seen order");
	CHECK_EQ_U(r->backends[0].tags, 3, "backend 0 tags eu+ssd");
	CHECK_EQ_U(r->backends[1].tags, 2, "backend 1 tag ssd");
	CHECK_EQ_U(r->backends[2].tags, 1, "backend 2 tag eu");
	CHECK(c->rings[1].format == 1 && c->rings[1].point_multiple == 160, "v1: 160 per weight");

	s = &c->services[0];
	CHECK(s->vip_any && s->vip.family == 0 && s->port == 53 &&
	      s->protocol == KR_CFG_PROTO_UDP,
	      "'::' is the wildcard, udp default");
	CHECK(s->key.type == KR_KEY_PAYLOAD && s->key.offset == 4 && s->key.length == 0 &&
	      s->key.delimiter == '|', "payload key spec");
	CHECK(s->ring == 0 && s->nsubset == 2 && s->subset_mask == 3, "subset mask");
	CHECK(kr_cfg_in_subset(s, &r->backends[0]) && !kr_cfg_in_subset(s, &r->backends[1]) &&
	      !kr_cfg_in_subset(s, &r->backends[2]), "subset = backends with ALL the tags");
	CHECK(s->fwd.mode == KR_FWD_L2 && !s->fwd.has_source4, "l2");
	CHECK(s->policy.no_key == KR_POLICY_PASS && s->policy.key_too_long == KR_POLICY_DROP &&
	      s->policy.all_down == KR_POLICY_PASS, "policy defaults pass");
	s = &c->services[1];
	CHECK(!s->vip_any && s->vip.family == 6 && s->vip.ip[15] == 0x53 && s->vip.port == 443,
	      "exact IPv6 VIP");
	CHECK(s->key.type == KR_KEY_QUIC && s->key.cid_length == 8 && s->key.delimiter == -1,
	      "quic key spec");
	CHECK(s->ring == 1 && s->subset_mask == 0 && kr_cfg_in_subset(s, &c->rings[1].backends[0]),
	      "no subset: whole ring");
	CHECK(s->fwd.mode == KR_FWD_IPIP && s->fwd.has_source4 && s->fwd.source4[0] == 192 &&
	      s->fwd.source4[3] == 1 && !s->fwd.has_source6, "ipip source4");
	CHECK(kr_config_ring(c, "v1ring") == 1 && kr_config_ring(c, "x") == -1 &&
	      kr_config_service(c, "q") == 1, "lookups by name");

	/* the ring built from the config: same as the engine builds from the backends */
	{
		struct kr_ring *ring = NULL;
		struct kr_err e;

		CHECK(kr_config_ring_build(c, 0, &ring, &e) == 0 && ring && ring->nbackends == 3 &&
		      ring->npoints + ring->ndups == 64 && ring->version == KR_RING_V2 &&
		      ring->point_multiple == 16, "kr_config_ring_build");
		kr_ring_free(ring);
	}
	/* normalized JSON parses again to the same values */
	{
		char *j = kr_config_dump_json(c), *e2 = NULL;
		struct kr_config *c2 = j ? parse(j, &e2) : NULL;

		CHECK(c2 && c2->rings[0].backends[1].state == KR_BACKEND_DRAIN &&
		      c2->services[0].key.delimiter == '|' && c2->services[0].vip_any &&
		      c2->services[0].subset_mask == 3 && c2->rings[0].npoints == 64,
		      "config show output parses back to the same values");
		if (!c2)
			DIAG("%s", e2 ? e2 : "no json");
		kr_config_free(c2);
		free(e2);
		free(j);
	}
	kr_config_free(c);
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; s && *s; s++)
		n += *s == '\n';
	return n;
}

static void test_errors(void)
{
	char *errs = NULL, *big;
	struct kr_config *c;
	size_t o = 0;

	c = parse("{ \"rings\": [ { \"name\": \"r\", \"format\": \"v9\", \"backends\": [ { \"address\": \"x\" } ] } ],\n"
		  "  \"bogus\": 1 }", &errs);
	CHECK(!c && errs && count_lines(errs) == 3, "all errors reported (3)");
	CHECK(errs && strstr(errs, "t.json:1:39: rings[0].format: 'v9' is not valid") &&
	      strstr(errs, "t.json:2:3: bogus: unknown field 'bogus'") &&
	      strstr(errs, "rings[0].format") < strstr(errs, "backends[0].address") &&
	      strstr(errs, "backends[0].address") < strstr(errs, "bogus"), "in file order, positioned");
	free(errs);

	c = parse("[1, 2]", &errs);
	CHECK(!c && errs && strstr(errs, "t.json:1:1: expected an object"), "top level not an object");
	free(errs);

	c = parse("", &errs);
	CHECK(!c && errs && strstr(errs, "t.json:1:0: invalid JSON"), "empty file");
	free(errs);

	/* many errors: capped */
	big = malloc(200 * 64 + 128);
	o += sprintf(big + o, "{ \"rings\": [ { \"name\": \"r\", \"format\": \"v2\", \"backends\": [");
	for (int i = 0; i < 200; i++)
		o += sprintf(big + o, "%s{ \"address\": \"bad%d\" }", i ? "," : "", i);
	sprintf(big + o, "] } ] }");
	c = parse(big, &errs);
	CHECK(!c && count_lines(errs) == KR_CFG_MAX_ERRORS + 1 &&
	      strstr(errs, "too many errors, stopping after 50"), "errors capped at 50");
	free(errs);
	free(big);
}

/* Backend "id" pins (user/core/config_ids.c): range, one id per server over the rings (and
 * copied to the rings that do not give it), one server per id, positioned errors. */
static void test_backend_ids(void)
{
#define R2(a, b) "{ \"rings\": [ { \"name\": \"a\", \"format\": \"v2\", \"backends\": [ " a " ] },\n" \
		 "  { \"name\": \"b\", \"format\": \"v2\", \"backends\": [ " b " ] } ] }"
	char *errs = NULL;
	struct kr_config *c;

	c = parse(R2("{ \"address\": \"10.0.0.1:53\", \"id\": 7 }, { \"address\": \"10.0.0.2:53\" }",
		     "{ \"address\": \"10.0.0.1:53\" }"), &errs);
	CHECK(c && c->rings[0].backends[0].has_id && c->rings[0].backends[0].id == 7 &&
	      !c->rings[0].backends[1].has_id, "id: parsed; a backend without one has none");
	CHECK(c && c->rings[1].backends[0].has_id && c->rings[1].backends[0].id == 7,
	      "id: the server's pin holds in the ring that does not give it");
	kr_config_free(c);
	free(errs);
	c = parse(R2("{ \"address\": \"10.0.0.1:53\", \"id\": 65536 }",
		     "{ \"address\": \"10.0.0.2:53\", \"id\": \"3\" }"), &errs);
	CHECK(!c && errs && strstr(errs, "t.json:1:93: rings[0].backends[0].id: 65536 is out of "
				   "range: expected 0..65535") &&
	      strstr(errs, "rings[1].backends[0].id: expected an integer 0..65535, got a string"),
	      "id: out of range, not an integer");
	free(errs);
	c = parse(R2("{ \"address\": \"10.0.0.1:53\", \"id\": 7 }, { \"address\": \"10.0.0.2:53\", "
		     "\"id\": 7 }", "{ \"address\": \"10.0.0.1:53\", \"id\": 8 }"), &errs);
	CHECK(!c && errs && count_lines(errs) == 2, "id: two conflicts, two errors");
	CHECK(errs && strstr(errs, "t.json:2:82: rings[1].backends[0].id: backend 10.0.0.1:53 has "
			     "id 8 here and id 7 in ring 'a' (rings[0].backends[0])"),
	      "id: one server, two ids: refused, both places named");
	CHECK(errs && strstr(errs, "rings[0].backends[1].id: id 7 of backend 10.0.0.2:53 is also "
			     "the id of 10.0.0.1:53 in ring 'a' (rings[0].backends[0]): each server "
			     "needs an id of its own"), "id: one id, two servers: refused");
	free(errs);
	c = parse(R2("{ \"address\": \"10.0.0.1:53\", \"mac\": \"02:00:00:00:00:01\", \"id\": 7 }",
		     "{ \"address\": \"10.0.0.1:53\", \"mac\": \"02:00:00:00:00:02\", \"id\": 7 }"),
		  &errs);
	CHECK(!c && errs && strstr(errs, "(another forwarding: another server)"),
	      "id: the same address under two MACs is two servers: one id is refused");
	free(errs);
#undef R2
}

int main(void)
{
	test_comments();
	test_values();
	test_errors();
	test_backend_ids();
	return tap_done();
}
