// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * JSON configuration loader (user/core/config.c) fuzzer.
 *  - any bytes -> kr_config_parse: never crashes or leaks; failure = a non-empty message;
 *  - success -> the normalized form (`config show`) must load again, and normalizing that
 *    gives the very same text (normalization is a fixed point), with the same counts.
 */
#include "fuzz.h"
#include "config.h"
#include "log.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	kr_log_set_level(KR_LOG_QUIET);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kr_config *cfg, *cfg2 = NULL;
	char *errs = NULL, *j1 = NULL, *j2 = NULL;

	if (size > 1 << 16)
		return 0;
	cfg = kr_config_parse("fuzz.json", (const char *)data, size, &errs);
	if (!cfg) {
		FUZZ_ASSERT(errs && errs[0], "no config and no error message");
		free(errs);
		return 0;
	}
	FUZZ_ASSERT(!errs, "config and error messages: %s", errs);
	j1 = kr_config_dump_json(cfg);
	FUZZ_ASSERT(j1, "dump failed");
	cfg2 = kr_config_parse("normalized.json", j1, strlen(j1), &errs);
	FUZZ_ASSERT(cfg2, "the normalized config does not load again:\n%s\n--- errors:\n%s", j1, errs);
	FUZZ_ASSERT(cfg2->nrings == cfg->nrings && cfg2->nservices == cfg->nservices,
		    "counts differ after normalization");
	for (uint32_t i = 0; i < cfg->nrings; i++)
		FUZZ_ASSERT(cfg2->rings[i].npoints == cfg->rings[i].npoints &&
			    cfg2->rings[i].nbackends == cfg->rings[i].nbackends,
			    "ring %u differs after normalization", i);
	j2 = kr_config_dump_json(cfg2);
	FUZZ_ASSERT(j2 && !strcmp(j1, j2), "normalization is not a fixed point:\n%s\n---\n%s", j1, j2);
	free(j1);
	free(j2);
	kr_config_free(cfg2);
	kr_config_free(cfg);
	return 0;
}
