/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef KR_OPS_ATTACH_H
#define KR_OPS_ATTACH_H

#include "ops.h"

struct bpf_object;
struct bpf_program;
struct xdp_program;

struct kr_ops_attach {
	struct bpf_object *obj;
	struct xdp_program *xdp;
};

/* Open OBJ_PATH, load the program of meta->mode and attach it to meta->ifindex; fills
 * meta (prog id, TC handle, time, magic).  On error the caller still calls _close. */
int kr_ops_attach(struct kr_ops_attach *a, const char *obj_path, struct kr_ops_meta *meta);
int kr_ops_pin_maps(struct kr_ops_attach *a, const char *dir);
void kr_ops_attach_close(struct kr_ops_attach *a);
/* Undo kr_ops_attach() of this command (its program handle first, else as kr_ops_detach);
 * 0 when the program is no longer attached. */
int kr_ops_attach_undo(struct kr_ops_attach *a, const struct kr_ops_meta *meta);
/* The BPF object: OBJ_PATH, or the one built into the tool when NULL (NULL + errno). */
struct bpf_object *kr_ops_object_open(const char *obj_path);
/* The program of MODE in OBJ, the only one to be loaded (NULL: the object has none). */
struct bpf_program *kr_ops_select_prog(struct bpf_object *obj, enum kr_ops_mode mode);
/* Detach what meta describes (-ENOENT: not attached any more, -ENODEV: no interface). */
int kr_ops_detach(const struct kr_ops_meta *meta);

#endif
