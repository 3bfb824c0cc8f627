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
	int prog_fd;		/* the attached program (owned by obj or xdp), -1 before */
};

/* Open OBJ_PATH, load the program of meta->mode and attach it to meta->ifindex; fills
 * meta (prog id, TC handle, time; not magic).  On error the caller still calls _close. */
int kr_ops_attach(struct kr_ops_attach *a, const char *obj_path, struct kr_ops_meta *meta);
int kr_ops_pin_maps(struct kr_ops_attach *a, const char *dir);
/* Pin the attached program as DIR/KR_OPS_PIN_PROG. */
int kr_ops_pin_prog(struct kr_ops_attach *a, const char *dir);
/* Pin program FD as DIR/KR_OPS_PIN_PROG (replace: over the pin there, e.g. an upgrade's). */
int kr_ops_pin_prog_fd(const char *dir, int fd, bool replace);
/* Attach the program pinned as DIR/KR_OPS_PIN_PROG again where meta says (mode, ifindex);
 * meta's prog id (and TC fields) are updated.  -errno (with a message) when it cannot. */
int kr_ops_reattach(const char *dir, struct kr_ops_meta *meta);
void kr_ops_attach_close(struct kr_ops_attach *a);
/* Undo kr_ops_attach() of this command (its program handle first, else as kr_ops_detach);
 * 0 when the program is no longer attached. */
int kr_ops_attach_undo(struct kr_ops_attach *a, const struct kr_ops_meta *meta);
/* The BPF object: OBJ_PATH, or the one built into the tool when NULL (NULL + errno). */
struct bpf_object *kr_ops_object_open(const char *obj_path);
/* The program of MODE in OBJ, the only one to be loaded (NULL: the object has none). */
struct bpf_program *kr_ops_select_prog(struct bpf_object *obj, enum kr_ops_mode mode);
/* Detach what meta describes (-ENOENT: not attached any more, -ENODEV: no interface).
 * prog_id 0 (a load killed between its attach and recording the id): keyrouter's program
 * on meta's interface, by name (XDP) or keyrouter's TC handle. */
int kr_ops_detach(const struct kr_ops_meta *meta);
/* The same for what an interrupted command left: 1 detached, 0 nothing there (no message),
 * -errno (with a message) when it could not be detached. */
int kr_ops_detach_leftover(const struct kr_ops_meta *meta);

#endif
