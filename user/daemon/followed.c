// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* An instance followed across unload, load and upgrade (followed.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "follow.h"
#include "followed.h"
#include "watchdog.h"

int kr_followed_init(struct kr_followed *f, const char *instance, const char *pin_dir)
{
	int err;

	memset(f, 0, sizeof(*f));
	f->instance = instance;
	f->pin_dir = pin_dir;
	f->hm.set = f->hm.be = f->hm.ck = f->hm.rings = f->hm.damp = f->hm.wd = -1;
	err = kr_ops_inst_path(&f->in, instance, pin_dir);
	if (!err)
		snprintf(f->dir, sizeof(f->dir), "%s", f->in.dir);
	return err;
}

int kr_followed_open(struct kr_followed *f, __u32 *netns_ino)
{
	struct kr_inst lk;
	int err;

	*netns_ino = 0;
	if ((err = kr_ops_inst_open_reader(&f->in, f->instance, f->pin_dir)))
		return err;
	if ((err = kr_follow_netns(&f->in, netns_ino)) ||
	    (err = kr_follow_read(f->dir, &f->gen)))
		goto out_in;
	/* the lock only while the tool's maps are created where they are missing */
	if ((err = kr_ops_inst_open(&lk, f->instance, f->pin_dir)))
		goto out_in;
	if ((err = kr_ops_maps_open(&lk, &f->m)))
		goto out_lk;
	if ((err = kr_health_maps_open(&lk, &f->m, true, &f->hm))) {
		kr_ops_maps_close(&f->m);
		goto out_lk;
	}
	kr_ops_inst_close(&lk);
	f->open = true;
	return 0;
out_lk:
	kr_ops_inst_close(&lk);
out_in:
	kr_ops_inst_close(&f->in);
	return err;
}

void kr_followed_close(struct kr_followed *f)
{
	if (!f->open)
		return;
	kr_health_maps_close(&f->hm);
	kr_ops_maps_close(&f->m);
	kr_ops_inst_close(&f->in);
	f->open = false;
}

enum kr_follow_change kr_followed_poll(struct kr_followed *f, struct kr_follow_id *now)
{
	int err = kr_follow_read(f->dir, now);
	enum kr_follow_change ch;

	if (!f->open)
		return err ? KR_FOLLOW_GONE : KR_FOLLOW_RELOADED;
	ch = kr_follow_compare(&f->gen, err, now);
	if (ch == KR_FOLLOW_UPGRADED)
		f->gen = *now;
	else if (ch != KR_FOLLOW_SAME)
		kr_followed_close(f);
	return ch;
}

bool kr_followed_current(const struct kr_followed *f)
{
	struct kr_follow_id now;
	int err = kr_follow_read(f->dir, &now);
	enum kr_follow_change ch = kr_follow_compare(&f->gen, err, &now);

	return f->open && (ch == KR_FOLLOW_SAME || ch == KR_FOLLOW_UPGRADED);
}
