// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `lookup --via-kernel` output (see lookup_out.h). */
#include <stdio.h>
#include "kr_datapath_kern_user.h"
#include "lookup_out.h"

static const char *status_name(uint32_t st)
{
	switch (st) {
	case KR_KEY_TOO_LONG:
		return "key longer than 255 bytes: outside the kernel's range";
	case KR_KEY_NOT_FOUND:
		return "no key in the packet";
	default:
		return "bad service";
	}
}

static const char *verdict_name(uint32_t v)
{
	return v == 1 ? "drop" : v == 2 ? "pass" : v == 3 ? "tx" : v == 4 ? "redirect" : "aborted";
}

int kr_klookup_print(struct kr_klookup *kl, const struct kr_image *img, const uint8_t *key,
		     size_t len, struct kr_err *err)
{
	struct kr_kanswer a;

	if (kr_klookup_answer(kl, img, key, len, &a, err))
		return -1;
	fputs(len ? "" : "-", stdout);
	for (size_t i = 0; i < len; i++)
		printf("%02x", key[i]);
	if (a.r.status != KR_KEY_OK)
		printf(" %08x policy %s (%s)\n", a.key_hash, verdict_name(a.r.verdict),
		       status_name(a.r.status));
	else
		printf(" %08x %u %u %u %u %u\n", a.r.key_hash, a.ring_index, a.r.backend_id,
		       a.next[0], a.next[1], a.next[2]);
	return 0;
}
