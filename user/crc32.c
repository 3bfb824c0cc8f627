// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* CRC-32 (IEEE), slice-by-8; tables built once at program start. */
#include "crc32.h"

uint32_t kr_crc32_tab[8][256];

__attribute__((constructor)) static void kr_crc32_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xEDB88320u & -(c & 1));
		kr_crc32_tab[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			kr_crc32_tab[t][i] = (kr_crc32_tab[t - 1][i] >> 8) ^
					     kr_crc32_tab[0][kr_crc32_tab[t - 1][i] & 0xff];
}

static inline uint32_t load_le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint32_t kr_crc32_update(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint32_t c = ~crc;

	while (len && ((uintptr_t)p & 7)) {
		c = kr_crc32_tab[0][(c ^ *p++) & 0xff] ^ (c >> 8);
		len--;
	}
	while (len >= 8) {
		uint32_t lo = load_le32(p) ^ c, hi = load_le32(p + 4);

		c = kr_crc32_tab[7][lo & 0xff] ^ kr_crc32_tab[6][(lo >> 8) & 0xff] ^
		    kr_crc32_tab[5][(lo >> 16) & 0xff] ^ kr_crc32_tab[4][lo >> 24] ^
		    kr_crc32_tab[3][hi & 0xff] ^ kr_crc32_tab[2][(hi >> 8) & 0xff] ^
		    kr_crc32_tab[1][(hi >> 16) & 0xff] ^ kr_crc32_tab[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		c = kr_crc32_tab[0][(c ^ *p++) & 0xff] ^ (c >> 8);
	return ~c;
}
