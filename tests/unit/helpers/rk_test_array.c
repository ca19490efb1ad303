/* rk_test_array.c: arrays for the suites, on member files through rk_create
 * or on memory members written directly, and their superblocks (contracts
 * in rk_test.h). */
#include "rk_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rk_geom.h"
#include "rk_vol.h"

void rk_test_create(int32_t level, uint32_t layout, uint64_t chunk, uint32_t n, uint64_t size,
                    struct rk_create_plan *plan)
{
	struct rk_create_opts o;
	memset(&o, 0, sizeof o);
	o.level = level;
	o.layout = layout;
	o.chunk = chunk;
	o.create_size = size;
	o.nmembers = n;
	o.paths = rk_test_member_paths();
	rk_err e = rk_create(&o, plan);
	ck_assert_msg(e == RK_OK, "create level %d x%u: %s", level, n, rk_errmsg());
}

uint8_t *rk_test_mem_array_make(rk_dev **devs, const struct rk_test_mem_array *a, uint64_t *volume_size)
{
	struct rk_sb *sb = calloc(1, sizeof *sb);
	ck_assert_ptr_nonnull(sb);
	struct rk_sb_params p = { .level = a->level, .layout = a->layout, .chunk = a->chunk,
	                          .nroles = a->nroles, .name = a->name ? a->name : "t" };
	p.data_size = rk_sb_max_data_size(a->member_size, RK_DATA_OFFSET_DEFAULT, a->chunk);
	ck_assert_int_eq(rk_sb_init(sb, &p), RK_OK);
	if (a->journal) {
		sb->feat_incompat |= RK_FEAT_INCOMPAT_JOURNAL;
		sb->journal_offset = RK_SB_PRIMARY_END;
		sb->journal_size = RK_DATA_OFFSET_DEFAULT - RK_SB_PRIMARY_END;
	}
	uint64_t *offs = calloc(a->nroles, sizeof *offs);
	ck_assert_ptr_nonnull(offs);
	for (uint32_t r = 0; r < a->nroles; r++) {
		char nm[16];
		snprintf(nm, sizeof nm, "m%u", r);
		ck_assert_int_eq(rk_dev_mem(&devs[r], nm, a->member_size), RK_OK);
		ck_assert_int_eq(rk_sb_set_member(sb, r, a->member_size), RK_OK);
		ck_assert_int_eq(rk_sb_write(devs[r], sb), RK_OK);
		offs[r] = sb->data_offset;
	}
	struct rk_geom g;
	ck_assert_int_eq(rk_geom_init(&g, a->level, a->layout, a->chunk, a->nroles, sb->data_size), RK_OK);
	rk_vol *v;
	ck_assert_int_eq(rk_vol_open(&v, &g, devs, offs), RK_OK);
	*volume_size = sb->volume_size;
	uint8_t *data = malloc(*volume_size);
	ck_assert_ptr_nonnull(data);
	rk_test_fill(data, *volume_size);
	ck_assert_int_eq(rk_vol_write(v, data, *volume_size, 0), RK_OK);
	rk_vol_close(v);
	free(offs);
	free(sb);
	return data;
}

struct rk_sb *rk_test_read_sb(rk_dev *d)
{
	struct rk_sb_read rd;
	ck_assert_int_eq(rk_sb_read(d, &rd), RK_OK);
	ck_assert_int_ge(rd.chosen, 0);
	struct rk_sb *s = malloc(sizeof *s);
	ck_assert_ptr_nonnull(s);
	memcpy(s, rd.copy[rd.chosen].sb, sizeof *s);
	rk_sb_read_free(&rd);
	return s;
}

struct rk_sb *rk_test_read_sb_path(const char *path)
{
	rk_dev *d;
	ck_assert_msg(rk_dev_open(&d, path, RK_DEV_RDONLY) == RK_OK, "open %s: %s", path, rk_errmsg());
	struct rk_sb *s = rk_test_read_sb(d);
	rk_dev_close(d);
	return s;
}

rk_err rk_test_wrap_fault(void *ctx, uint32_t role, rk_dev **dev)
{
	return rk_dev_fault(dev, *dev, ctx, (int)role);
}

void rk_test_crash_copies(rk_fault_plan *plan, uint32_t n, rk_dev **out)
{
	for (uint32_t r = 0; r < n; r++) {
		rk_dev *lower = rk_fault_lower(plan, (int)r);
		ck_assert_ptr_nonnull(lower);
		ck_assert_int_eq(rk_dev_mem(&out[r], rk_dev_path(lower), rk_dev_size(lower)), RK_OK);
		memcpy(rk_dev_mem_data(out[r]), rk_dev_mem_data(lower), rk_dev_size(lower));
	}
}

void rk_test_close_devs(rk_dev **devs, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (devs[i])
			rk_dev_close(devs[i]);
}
