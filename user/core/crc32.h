/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, init/xorout 0xFFFFFFFF): the same
 * values as zlib's crc32().  Slice-by-8, on the tables and the 8-byte step of
 * include/kr_crc32.h (the data path's): one CRC-32 in the kernel and in userspace.
 *
 *   kr_crc32(buf, len)                  crc of buf
 *   kr_crc32_update(crc, buf, len)      crc of (earlier bytes || buf), crc = their crc
 *                                       (zlib's crc32(crc, buf, len)); crc 0 = nothing yet
 *
 * Ketama points chain 4 bytes onto a fixed base string: kr_crc32_le32(base_crc, v) is
 * kr_crc32_update(base_crc, le32(v), 4) in a few table lookups.
 */
#ifndef KR_CRC32_USER_H
#define KR_CRC32_USER_H

#include <stddef.h>
#include <stdint.h>
#include "kr_crc32.h"

#define kr_crc32_tab kr_crc32_key_table

uint32_t kr_crc32_update(uint32_t crc, const void *buf, size_t len);

static inline uint32_t kr_crc32(const void *buf, size_t len)
{
	return kr_crc32_update(0, buf, len);
}

/* crc of (earlier bytes || v as 4 little-endian bytes). */
static inline uint32_t kr_crc32_le32(uint32_t crc, uint32_t v)
{
	uint32_t c = ~crc ^ v;

	c = kr_crc32_tab[3][c & 0xff] ^ kr_crc32_tab[2][(c >> 8) & 0xff] ^
	    kr_crc32_tab[1][(c >> 16) & 0xff] ^ kr_crc32_tab[0][c >> 24];
	return ~c;
}

/* crc of (earlier bytes || lo as le32 || hi as le32). */
static inline uint32_t kr_crc32_le32x2(uint32_t crc, uint32_t lo, uint32_t hi)
{
	uint32_t c = ~crc ^ lo;

	c = kr_crc32_tab[7][c & 0xff] ^ kr_crc32_tab[6][(c >> 8) & 0xff] ^
	    kr_crc32_tab[5][(c >> 16) & 0xff] ^ kr_crc32_tab[4][c >> 24] ^
	    kr_crc32_tab[3][hi & 0xff] ^ kr_crc32_tab[2][(hi >> 8) & 0xff] ^
	    kr_crc32_tab[1][(hi >> 16) & 0xff] ^ kr_crc32_tab[0][hi >> 24];
	return ~c;
}

#endif
