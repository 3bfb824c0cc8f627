// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* CRC-32 (IEEE) of any length, on the tables and the 8-byte step the data path uses
 * (include/kr_crc32.h): one CRC-32 for the kernel and userspace. */
#include "crc32.h"

uint32_t kr_crc32_update(uint32_t crc, const void *buf, size_t len)
{
	const __u8 *p = buf;
	uint32_t c = ~crc;

	for (; len >= 8; p += 8, len -= 8)
		c = kr_crc32_step8(c, p);
	while (len--)
		c = kr_crc32_key_table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
	return ~c;
}
