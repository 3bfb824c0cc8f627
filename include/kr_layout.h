/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Layout checks of the structs that cross the kernel/user boundary or live in a pinned map.
 * The BPF programs (clang -target bpf) and the tool (gcc or clang, any architecture) compile
 * the same headers; each struct states its size and the offset of every field, so a field
 * added, reordered or padded differently by one compiler fails the build of both:
 *
 *   KR_LAYOUT_SIZE(kr_backend, 36);
 *   KR_LAYOUT_AT(kr_backend, port, 16);
 */
#ifndef KR_LAYOUT_H
#define KR_LAYOUT_H

#define KR_LAYOUT_SIZE(type, size)                                                          \
	_Static_assert(sizeof(struct type) == (size), "struct " #type ": size " #size)
#define KR_LAYOUT_AT(type, field, off)                                                      \
	_Static_assert(__builtin_offsetof(struct type, field) == (off),                     \
		       "struct " #type ": " #field " at offset " #off)

#endif
