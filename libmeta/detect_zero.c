/* detect_zero.c: which parts of an image hold only zeros, read once and
 * remembered.  Two hypotheses that put the same zeros at a place export
 * the same bytes there without reading them again (detect_same.c): a
 * nearly empty linear or RAID-0 array has members of zeros that fit any
 * role, and comparing every such order byte for byte would spend the
 * read budget many times over. */
#include <stdlib.h>
#include <string.h>

#include "detect_int.h"
#include "rk_util.h"

#define ZG (16u << 10)                 /* a granule */
#define ZMAX ((4ull << 30) / ZG)       /* granules tracked per image (its first 4 GiB) */

/* The state of granule G of image I: 1 zero, 2 not, 0 unknown (unreadable). */
static int granule(struct dt_ctx *c, uint32_t i, uint64_t g)
{
	if (i >= DT_MAX_ROLES + 8 || g >= ZMAX)
		return 0;
	if (!c->zmap[i] && !(c->zmap[i] = calloc(ZMAX, 1)))
		return 0;
	if (c->zmap[i][g])
		return c->zmap[i][g];
	uint64_t off = g * ZG, size = c->img[i].size;
	if (off >= size)
		return 0;
	size_t n = size - off < ZG ? (size_t)(size - off) : ZG;
	uint8_t *b = malloc(ZG);
	if (!b)
		return 0;
	int st = dt_read(c, i, off, b, n) ? 0 : rk_buf_is_zero(b, n) ? 1 : 2;
	free(b);
	c->zmap[i][g] = (uint8_t)st;
	return st;
}

/* 1 when the LEN (< ZG) bytes at OFF of image I are zero (read, not remembered). */
static int part_zero(struct dt_ctx *c, uint32_t i, uint64_t off, uint64_t len)
{
	uint8_t *b = malloc(ZG);
	int z = b && !dt_read(c, i, off, b, (size_t)len) && rk_buf_is_zero(b, (size_t)len);
	free(b);
	return z;
}

/* See detect_int.h. */
int dt_zero_range(struct dt_ctx *c, uint32_t i, uint64_t off, uint64_t len)
{
	if (!len || off + len < off)
		return 0;
	uint64_t end = off + len;
	for (uint64_t g = off / ZG; g <= (end - 1) / ZG; g++) {
		int st = granule(c, i, g);
		if (st == 1)
			continue;
		uint64_t lo = g * ZG > off ? g * ZG : off, hi = (g + 1) * ZG < end ? (g + 1) * ZG : end;
		if (st != 2 || (lo == g * ZG && hi == (g + 1) * ZG) || !part_zero(c, i, lo, hi - lo))
			return 0;   /* a granule only partly in the range: its part is read (a data area's edge) */
	}
	return 1;
}

/* See detect_int.h. */
void dt_zero_free(struct dt_ctx *c)
{
	for (uint32_t i = 0; i < DT_MAX_ROLES + 8; i++) {
		free(c->zmap[i]);
		c->zmap[i] = NULL;
	}
}
