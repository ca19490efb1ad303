/* test_resize_size.c: raid-resize's size changes on memory members: grow
 * into larger members, shrink (refused over a file system unless a size is
 * stated), and the file-system extent probe. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rk_array.h"
#include "rk_dev.h"
#include "rk_geom.h"
#include "rk_resize.h"
#include "rk_sb.h"
#include "rk_vol.h"
#include "helpers/resize_cases.h"
#include "helpers/rk_test.h"

/* ---- size ---- */

START_TEST(t_grow_size)
{
	static const int32_t lv[] = { 5, 6, 0, 1, 4, 10 };
	int32_t level = lv[_i];
	rk_dev *d[RESIZE_MAX_MEMBERS];
	uint64_t vol;
	uint32_t n = level == 1 ? 2 : 4;
	uint32_t layout = level == 10 ? RK_R10_LAYOUT(2, 1, 0) : rk_layout_default(level);
	uint64_t chunk = level == 1 ? 0 : 65536;
	uint8_t *data = resize_make_array(d, level, layout, chunk, n, 3u << 20, 0, &vol);
	/* Give the members room: mem devices cannot grow, so recreate bigger
	 * ones holding the same bytes (a disk swapped for a larger one). */
	rk_dev *big[RESIZE_MAX_MEMBERS];
	uint64_t bigsz = 5u << 20;
	for (uint32_t r = 0; r < n; r++) {
		ck_assert_int_eq(rk_dev_mem(&big[r], rk_dev_path(d[r]), bigsz), RK_OK);
		memcpy(rk_dev_mem_data(big[r]), rk_dev_mem_data(d[r]), 3u << 20);
		/* Stale bytes in the new area must not show through. */
		memset(rk_dev_mem_data(big[r]) + (3u << 20), 0xA5, bigsz - (3u << 20));
	}
	rk_test_close_devs(d, n);
	struct rk_resize_result res;
	/* Past the capacity: refused, nothing changes. */
	ck_assert_int_eq(rk_resize_size(big, n, 8u << 20, NULL, &res), RK_E_RANGE);
	ck_assert_int_eq(rk_resize_size(big, n, 0, NULL, &res), RK_OK);
	ck_assert_uint_eq(res.old_volume, vol);
	ck_assert_uint_gt(res.new_volume, vol);
	resize_verify(big, n, data, vol);
	rk_test_close_devs(big, n);
	free(data);
}
END_TEST

/* Writes a minimal ext4 superblock (magic, block count, 4 KiB blocks) at
 * volume byte 1024. */
static void put_ext4(rk_dev **d, uint32_t n, uint64_t fs_bytes)
{
	struct rk_sb *s = rk_test_read_sb(d[0]);
	struct rk_geom g;
	ck_assert_int_eq(rk_geom_init(&g, s->level, s->layout, s->chunk, s->nroles, s->data_size), RK_OK);
	uint64_t offs[RESIZE_MAX_MEMBERS];
	for (uint32_t r = 0; r < n; r++)
		offs[r] = s->data_offset;
	rk_vol *v;
	ck_assert_int_eq(rk_vol_open(&v, &g, d, offs), RK_OK);
	uint8_t sb[1024] = { 0 };
	uint32_t blocks = (uint32_t)(fs_bytes / 4096);
	memcpy(sb + 4, &blocks, 4);
	uint32_t lg = 2;
	memcpy(sb + 24, &lg, 4);
	sb[56] = 0x53;
	sb[57] = 0xEF;
	sb[0x60] = 0x40;   /* extents: "ext4" */
	ck_assert_int_eq(rk_vol_write(v, sb, sizeof sb, 1024), RK_OK);
	rk_vol_close(v);
	free(s);
}

START_TEST(t_shrink)
{
	rk_dev *d[RESIZE_MAX_MEMBERS];
	uint64_t vol;
	uint8_t *data = resize_make_array(d, 5, 2, 65536, 4, 4u << 20, 0, &vol);
	struct rk_sb *s0 = rk_test_read_sb(d[0]);
	uint64_t ds = s0->data_size;
	struct rk_resize_result res;
	struct rk_resize_opts o = { .layout = RK_RESIZE_LAYOUT_KEEP };
	/* Nothing recognised and nothing stated: refused. */
	ck_assert_int_eq(rk_resize_size(d, 4, ds / 2, &o, &res), RK_E_EXISTS);
	struct rk_sb *s1 = rk_test_read_sb(d[0]);
	ck_assert_uint_eq(s1->events, s0->events);
	free(s1);
	/* Stated, but more than the new volume: refused. */
	o.volume_size = vol;
	ck_assert_int_eq(rk_resize_size(d, 4, ds / 2, &o, &res), RK_E_EXISTS);
	/* Stated and fitting: done; the kept bytes are intact. */
	uint64_t newds = ds / 2 / 65536 * 65536;
	o.volume_size = 3 * newds;
	ck_assert_int_eq(rk_resize_size(d, 4, ds / 2, &o, &res), RK_OK);
	ck_assert_uint_eq(res.new_volume, 3 * newds);
	resize_verify(d, 4, data, res.new_volume);
	/* An ext4 file system of 2 MiB: a shrink below it is refused without
	 * a stated size, and with a smaller stated one; above it, allowed. */
	put_ext4(d, 4, 2u << 20);
	o.volume_size = 0;
	ck_assert_int_eq(rk_resize_size(d, 4, 512 * 1024, &o, &res), RK_E_EXISTS);
	ck_assert(strstr(res.found, "ext4"));
	o.volume_size = 1u << 20;
	ck_assert_int_eq(rk_resize_size(d, 4, 512 * 1024, &o, &res), RK_E_EXISTS);
	o.volume_size = 0;
	ck_assert_int_eq(rk_resize_size(d, 4, 1u << 20, &o, &res), RK_OK);
	ck_assert_uint_eq(res.new_volume, 3u << 20);
	ck_assert_uint_eq(res.keep, 2u << 20);
	free(s0);
	rk_test_close_devs(d, 4);
	free(data);
}
END_TEST

static rk_err mem_read(void *ctx, void *buf, uint64_t len, uint64_t off)
{
	memcpy(buf, (const uint8_t *)ctx + off, (size_t)len);
	return RK_OK;
}

START_TEST(t_fs_probe_kinds)
{
	/* XFS and btrfs headers are recognised with their sizes; zeros are not. */
	static uint8_t img[256 * 1024];
	uint64_t ext = 0;
	char what[128];
	memset(img, 0, sizeof img);
	ck_assert_int_eq(rk_probe_fs_extent(mem_read, img, sizeof img, &ext, what, sizeof what), 0);
	memcpy(img, "XFSB", 4);
	img[6] = 0x10;                       /* blocksize 4096 (be32) */
	img[15] = 0x20;                      /* dblocks 32 (be64) */
	ck_assert_int_eq(rk_probe_fs_extent(mem_read, img, sizeof img, &ext, what, sizeof what), 1);
	ck_assert_uint_eq(ext, 32 * 4096);
	ck_assert(strstr(what, "XFS"));
	memset(img, 0, sizeof img);
	memcpy(img + 65536 + 64, "_BHRfS_M", 8);
	img[65536 + 0x70 + 2] = 0x30;        /* total_bytes 0x300000 */
	ck_assert_int_eq(rk_probe_fs_extent(mem_read, img, sizeof img, &ext, what, sizeof what), 1);
	ck_assert_uint_eq(ext, 0x300000);
	/* A volume too small to hold the probe area is read only as far as it goes. */
	ck_assert_int_eq(rk_probe_fs_extent(mem_read, img, 4096, &ext, what, sizeof what), 0);
}
END_TEST

RK_TEST_SUITE("resize_size", { "size", 600, NULL, NULL, 0,
	  RK_TESTS(RK_TEST_LOOP(t_grow_size, 0, 6), RK_TEST(t_shrink),
	           RK_TEST(t_fs_probe_kinds)) })
