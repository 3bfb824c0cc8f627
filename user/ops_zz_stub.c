#include "ops_apply.h"
int kr_ops_apply_check(const char *config) { (void)config; return 0; }
int kr_ops_apply(struct kr_inst *in, const char *config, const struct kr_ops_apply_opts *o) { (void)in; (void)config; (void)o; return 0; }
