/* detect_hyp.c: see detect_hyp.h. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "detect_hyp.h"
#include "rk_le.h"
#include "rk_test.h"

void dt_test_hyp_linear(struct dt_hyp *h, uint64_t start, uint64_t size)
{
	memset(h, 0, sizeof *h);
	RK_REQUIRE(rk_geom_init(&h->g, RK_LEVEL_LINEAR, 0, 0, 1, size - start) == RK_OK);
	for (uint32_t r = 0; r < DT_MAX_ROLES; r++)
		h->role_img[r] = -1;
	h->role_img[0] = 0;
	h->off[0] = start;
}

void dt_test_hyp_roles(struct dt_hyp *h, const struct rk_geom *g, uint32_t n)
{
	memset(h, 0, sizeof *h);
	h->g = *g;
	for (uint32_t r = 0; r < DT_MAX_ROLES; r++)
		h->role_img[r] = r < n ? (int32_t)r : -1;
}

void dt_test_open_one(struct dt_ctx *c, const char *path)
{
	char *paths[] = { strdup(path) };   /* the context keeps it: freed by dt_test_close_one */
	memset(c, 0, sizeof *c);
	RK_REQUIRE(paths[0] && !dt_open(c, paths, 1));
}

void dt_test_close_one(struct dt_ctx *c)
{
	char *path;   /* the strdup of dt_test_open_one, kept as const by the context */
	memcpy(&path, &c->img[0].path, sizeof path);
	dt_close(c);
	free(path);
}

/* See detect_hyp.h. */
void dt_test_fat16(uint8_t *v, uint32_t secs, uint32_t res, uint32_t fatsecs, uint32_t rootsecs)
{
	v[0] = 0xEB; v[1] = 0x3C; v[2] = 0x90;
	memcpy(v + 3, "mkfs.fat", 8);
	rk_put_le16(v + 0x0B, 512);
	v[0x0D] = 1;
	rk_put_le16(v + 0x0E, (uint16_t)res);
	v[0x10] = 2;
	rk_put_le16(v + 0x11, (uint16_t)(rootsecs * 16));
	rk_put_le16(v + 0x13, (uint16_t)secs);
	v[0x15] = 0xF8;
	rk_put_le16(v + 0x16, (uint16_t)fatsecs);
	v[510] = 0x55; v[511] = 0xAA;
	for (uint32_t f = 0; f < 2; f++) {
		rk_put_le16(v + (res + f * fatsecs) * 512, 0xFFF8);
		rk_put_le16(v + (res + f * fatsecs) * 512 + 2, 0xFFFF);
	}
}

/* See detect_hyp.h. */
uint32_t dt_test_exfat_set(uint8_t *e, const char *name, int dir, uint32_t first, uint64_t len)
{
	memset(e, 0, 3 * 32);
	e[0] = 0x85;
	e[1] = 2;
	rk_put_le16(e + 4, dir ? 0x10 : 0x20);
	uint8_t *st = e + 32, *nm = e + 64;
	st[0] = 0xC0;
	st[1] = 0x03;   /* allocation possible, no FAT chain */
	st[3] = (uint8_t)strlen(name);
	rk_put_le64(st + 8, len);
	rk_put_le32(st + 20, first);
	rk_put_le64(st + 24, len);
	nm[0] = 0xC1;
	for (size_t i = 0; name[i] && i < 15; i++)
		rk_put_le16(nm + 2 + 2 * i, (uint8_t)name[i]);
	uint16_t s = 0;
	for (uint32_t i = 0; i < 96; i++)
		if (i != 2 && i != 3)
			s = (uint16_t)(((s & 1) ? 0x8000u : 0) + (s >> 1) + e[i]);
	rk_put_le16(e + 2, s);
	return 3;
}

uint32_t dt_test_raid5_write(const uint8_t *v, uint64_t vol, uint32_t n, uint64_t chunk, char *const *paths)
{
	struct rk_geom g;
	const uint64_t ms = vol / (n - 1);
	RK_REQUIRE(n <= DT_MAX_ROLES && !rk_geom_init(&g, 5, RK_ALG_LEFT_SYMMETRIC, chunk, n, ms));
	uint8_t *m[DT_MAX_ROLES];
	for (uint32_t r = 0; r < n; r++)
		RK_REQUIRE((m[r] = calloc(1, ms)) != NULL);
	uint32_t first = n, vr[DT_MAX_ROLES], slot[DT_MAX_ROLES];
	for (uint64_t st = 0; st < g.nstripes; st++) {
		struct rk_stripe_map sm = { .vol_role = vr, .slot = slot };
		RK_REQUIRE(!rk_geom_stripe_map(&g, st, &sm));
		for (uint32_t j = 0; j < g.ndata; j++) {
			const uint8_t *d = v + (st * g.ndata + j) * chunk;
			memcpy(m[vr[j]] + sm.member_off, d, chunk);
			for (uint64_t k = 0; k < chunk; k++)
				m[sm.p_role][sm.member_off + k] ^= d[k];
		}
		if (!st)
			first = vr[0];
	}
	for (uint32_t r = 0; r < n; r++) {
		rk_test_spit(paths[r], m[r], ms);
		free(m[r]);
	}
	return first;
}
