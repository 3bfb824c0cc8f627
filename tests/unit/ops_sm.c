// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The ring migration state machine and --percent parsing (user/core/ring_sm.c). */
#include <string.h>
#include "tap.h"
#include "kr_image_kern_user.h"
#include "ring_sm.h"

static void test_transitions(void)
{
	const char *why = NULL;
	__u64 c = kr_ctl_make(0, 0, KR_RING_IDLE), n;

	CHECK(kr_sm_next(c, KR_SM_MIGRATE, 5, &n, &why) < 0 && why != NULL,
	      "migrate refused when idle");
	CHECK(kr_sm_next(c, KR_SM_COMMIT, 0, &n, &why) < 0, "commit refused when idle");
	CHECK(kr_sm_next(c, KR_SM_ROLLBACK, 0, &n, &why) < 0, "rollback refused when idle");
	CHECK(kr_sm_next(c, KR_SM_STAGE, 0, &n, &why) == 0, "stage from idle");
	CHECK_EQ_U(kr_ctl_state(n), KR_RING_STAGED, "staged state");
	CHECK_EQ_U(kr_ctl_frac(n), 0, "staged: fraction 0");
	CHECK_EQ_U(kr_ctl_active(n), 0, "staged: active unchanged");
	c = n;
	CHECK(kr_sm_next(c, KR_SM_STAGE, 0, &n, &why) < 0,
	      "a third version cannot be staged while one is staged");
	CHECK(kr_sm_next(c, KR_SM_MIGRATE, KR_CTL_FRAC_ONE / 4, &n, &why) == 0, "migrate 25%%");
	CHECK_EQ_U(kr_ctl_state(n), KR_RING_MIGRATING, "migrating state");
	CHECK_EQ_U(kr_ctl_frac(n), KR_CTL_FRAC_ONE / 4, "fraction 25%%");
	c = n;
	CHECK(kr_sm_next(c, KR_SM_STAGE, 0, &n, &why) < 0, "no stage while migrating");
	CHECK(kr_sm_next(c, KR_SM_MIGRATE, KR_CTL_FRAC_ONE + 1, &n, &why) < 0,
	      "fraction above 100%% refused");
	CHECK(kr_sm_next(c, KR_SM_MIGRATE, KR_CTL_FRAC_ONE, &n, &why) == 0 &&
	      kr_ctl_frac(n) == KR_CTL_FRAC_ONE, "migrate 100%% representable");
	CHECK(kr_sm_next(c, KR_SM_MIGRATE, 0, &n, &why) == 0 &&
	      kr_ctl_state(n) == KR_RING_STAGED, "migrate 0 goes back to staged");
	CHECK(kr_sm_next(c, KR_SM_COMMIT, 0, &n, &why) == 0, "commit");
	CHECK(kr_ctl_active(n) == 1 && kr_ctl_frac(n) == 0 && kr_ctl_state(n) == KR_RING_IDLE,
	      "commit flips the active slot, fraction 0, idle");
	CHECK(kr_sm_next(c, KR_SM_ROLLBACK, 0, &n, &why) == 0, "rollback");
	CHECK(kr_ctl_active(n) == 0 && kr_ctl_frac(n) == 0 && kr_ctl_state(n) == KR_RING_IDLE,
	      "rollback keeps the active slot, fraction 0, idle");
	c = kr_ctl_make(1, 0, KR_RING_IDLE);
	CHECK(kr_sm_next(c, KR_SM_STAGE, 0, &n, &why) == 0 && kr_ctl_active(n) == 1,
	      "stage after a commit keeps slot 1 active");
	CHECK(kr_sm_next(kr_ctl_make(0, 0, 7), KR_SM_STAGE, 0, &n, &why) < 0,
	      "unknown state refused");
}

/* Every key goes to the standby slot iff mix32(hash) < fraction: check the share. */
static void test_slot_share(void)
{
	__u64 frac;
	unsigned other = 0, n = 1u << 20;

	kr_percent_parse("12.34", &frac);
	for (unsigned h = 0; h < n; h++)
		other += kr_ctl_slot(kr_ctl_make(0, frac, KR_RING_MIGRATING), h * 2654435761u);
	CHECK(other > n * 0.1214 && other < n * 0.1254, "12.34%% of keys on the standby (%u/%u)",
	      other, n);
}

/* Known answers computed by tests/unit/ctl_slot_ref.py from the definitions of fmix32 and
 * the slot rule, not from this code: a change of kr_mix32 or kr_ctl_slot (which routers of
 * a fleet, and the kernel, must agree on) fails here. */
static void test_slot_known_answers(void)
{
	static const struct { __u32 h, mix; } mix[] = {
	{ 0x00000000u, 0x00000000u },
	{ 0x00000001u, 0x514e28b7u },
	{ 0x00000002u, 0x30f4c306u },
	{ 0x7fffffffu, 0xf9cc0ea8u },
	{ 0x80000000u, 0x6d3c65a0u },
	{ 0xffffffffu, 0x81f16f39u },
	{ 0xdeadbeefu, 0x0de5c6a9u },
	{ 0x12345678u, 0xe37cd1bcu },
	{ 0xf5eb180fu, 0x1f372261u },
	{ 0x575b89a0u, 0x79954f6au },
	};
	static const struct { __u32 h; __u64 frac; __u32 active, slot; } slot[] = {
	{ 0x00000000u, 0x000000000ull, 0, 0 },
	{ 0x00000000u, 0x000000001ull, 1, 0 },
	{ 0x00000000u, 0x080000000ull, 0, 1 },
	{ 0x00000000u, 0x0ffffffffull, 1, 0 },
	{ 0x00000000u, 0x100000000ull, 0, 1 },
	{ 0x00000000u, 0x03b851eb8ull, 1, 0 },
	{ 0x00000001u, 0x000000000ull, 0, 0 },
	{ 0x00000001u, 0x000000001ull, 1, 1 },
	{ 0x00000001u, 0x080000000ull, 0, 1 },
	{ 0x00000001u, 0x0ffffffffull, 1, 0 },
	{ 0x00000001u, 0x100000000ull, 0, 1 },
	{ 0x00000001u, 0x03b851eb8ull, 1, 1 },
	{ 0x00000002u, 0x000000000ull, 0, 0 },
	{ 0x00000002u, 0x000000001ull, 1, 1 },
	{ 0x00000002u, 0x080000000ull, 0, 1 },
	{ 0x00000002u, 0x0ffffffffull, 1, 0 },
	{ 0x00000002u, 0x100000000ull, 0, 1 },
	{ 0x00000002u, 0x03b851eb8ull, 1, 0 },
	{ 0x7fffffffu, 0x000000000ull, 0, 0 },
	{ 0x7fffffffu, 0x000000001ull, 1, 1 },
	{ 0x7fffffffu, 0x080000000ull, 0, 0 },
	{ 0x7fffffffu, 0x0ffffffffull, 1, 0 },
	{ 0x7fffffffu, 0x100000000ull, 0, 1 },
	{ 0x7fffffffu, 0x03b851eb8ull, 1, 1 },
	{ 0x80000000u, 0x000000000ull, 0, 0 },
	{ 0x80000000u, 0x000000001ull, 1, 1 },
	{ 0x80000000u, 0x080000000ull, 0, 1 },
	{ 0x80000000u, 0x0ffffffffull, 1, 0 },
	{ 0x80000000u, 0x100000000ull, 0, 1 },
	{ 0x80000000u, 0x03b851eb8ull, 1, 1 },
	{ 0xffffffffu, 0x000000000ull, 0, 0 },
	{ 0xffffffffu, 0x000000001ull, 1, 1 },
	{ 0xffffffffu, 0x080000000ull, 0, 0 },
	{ 0xffffffffu, 0x0ffffffffull, 1, 0 },
	{ 0xffffffffu, 0x100000000ull, 0, 1 },
	{ 0xffffffffu, 0x03b851eb8ull, 1, 1 },
	{ 0xdeadbeefu, 0x000000000ull, 0, 0 },
	{ 0xdeadbeefu, 0x000000001ull, 1, 1 },
	{ 0xdeadbeefu, 0x080000000ull, 0, 1 },
	{ 0xdeadbeefu, 0x0ffffffffull, 1, 0 },
	{ 0xdeadbeefu, 0x100000000ull, 0, 1 },
	{ 0xdeadbeefu, 0x03b851eb8ull, 1, 0 },
	{ 0x12345678u, 0x000000000ull, 0, 0 },
	{ 0x12345678u, 0x000000001ull, 1, 1 },
	{ 0x12345678u, 0x080000000ull, 0, 0 },
	{ 0x12345678u, 0x0ffffffffull, 1, 0 },
	{ 0x12345678u, 0x100000000ull, 0, 1 },
	{ 0x12345678u, 0x03b851eb8ull, 1, 1 },
	{ 0xf5eb180fu, 0x000000000ull, 0, 0 },
	{ 0xf5eb180fu, 0x000000001ull, 1, 1 },
	{ 0xf5eb180fu, 0x080000000ull, 0, 1 },
	{ 0xf5eb180fu, 0x0ffffffffull, 1, 0 },
	{ 0xf5eb180fu, 0x100000000ull, 0, 1 },
	{ 0xf5eb180fu, 0x03b851eb8ull, 1, 0 },
	{ 0x575b89a0u, 0x000000000ull, 0, 0 },
	{ 0x575b89a0u, 0x000000001ull, 1, 1 },
	{ 0x575b89a0u, 0x080000000ull, 0, 1 },
	{ 0x575b89a0u, 0x0ffffffffull, 1, 0 },
	{ 0x575b89a0u, 0x100000000ull, 0, 1 },
	{ 0x575b89a0u, 0x03b851eb8ull, 1, 1 },
	};

	for (unsigned i = 0; i < sizeof(mix) / sizeof(mix[0]); i++)
		CHECK_EQ_U(kr_mix32(mix[i].h), mix[i].mix, "mix32(0x%08x)", mix[i].h);
	for (unsigned i = 0; i < sizeof(slot) / sizeof(slot[0]); i++)
		CHECK_EQ_U(kr_ctl_slot(kr_ctl_make(slot[i].active, slot[i].frac, KR_RING_MIGRATING),
				       slot[i].h), slot[i].slot,
			   "slot of hash 0x%08x at fraction 0x%09llx, active %u", slot[i].h,
			   (unsigned long long)slot[i].frac, slot[i].active);
}

static void test_percent(void)
{
	__u64 f;

	CHECK(kr_percent_parse("0", &f) == 0 && f == 0, "0%%");
	CHECK(kr_percent_parse("100", &f) == 0 && f == KR_CTL_FRAC_ONE, "100%%");
	CHECK(kr_percent_parse("50", &f) == 0 && f == KR_CTL_FRAC_ONE / 2, "50%%");
	CHECK(kr_percent_parse("0.01", &f) == 0 && f == 429497, "0.01%% = 429497/2^32");
	CHECK(kr_percent_parse("0.0001", &f) == 0 && f == 4295, "0.0001%% resolves");
	CHECK(kr_percent_parse("100.0001", &f) < 0, "above 100 refused");
	CHECK(kr_percent_parse("-1", &f) < 0, "negative refused");
	CHECK(kr_percent_parse("5%", &f) < 0, "trailing garbage refused");
	CHECK(kr_percent_parse("", &f) < 0, "empty refused");
	CHECK(kr_percent_parse("0.00000000001", &f) == -2, "a share that would round to 0%% refused");
	CHECK(kr_percent_parse("99.999999999999", &f) == -2, "a share that would round to 100%% refused");
	CHECK(kr_percent_parse("0.00000002", &f) == 0 && f == 1, "the smallest share: 1/2^32");
	CHECK(kr_percent_parse("nan", &f) < 0, "nan refused");
}

int main(void)
{
	test_transitions();
	test_percent();
	test_slot_share();
	test_slot_known_answers();
	return tap_done();
}
