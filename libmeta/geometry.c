/* geometry.c: an array described without metadata (rk_geometry.h): the
 * content fingerprint of a role's data area, the JSON keys --save-geometry
 * writes, and the mdadm command line that makes md serve the same volume.
 * Loading is geometry_load.c, opening geometry_open.c; the file format is
 * spec/geometry.md. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "rk_geometry.h"
#include "rk_geom.h"
#include "rk_json.h"
#include "rk_le.h"
#include "rk_part.h"
#include "rk_util.h"

void rk_geometry_free(struct rk_geometry *g)
{
	if (!g)
		return;
	for (uint32_t r = 0; g->roles && r < g->nroles; r++)
		free(g->roles[r].path);
	free(g->roles);
	memset(g, 0, sizeof *g);
}

/* ---- fingerprint ---- */

/* Where sample K (0..RK_GEOMETRY_FP_SAMPLES-1) of a data area of SIZE bytes
 * starts, relative to the area: K/4 of the way, aligned down to 4 KiB. */
static uint64_t fp_sample_at(uint64_t size, unsigned k)
{
	/* size / 4 * k cannot overflow; the remainder's share is below 4 bytes */
	uint64_t at = size / RK_GEOMETRY_FP_SAMPLES * k;
	return at / 4096 * 4096;
}

rk_err rk_geometry_fingerprint_dev(rk_dev *d, uint64_t offset, uint64_t size, uint8_t fp[RK_GEOMETRY_FP_LEN])
{
	uint64_t dsize = rk_dev_size(d), end;
	if (offset > dsize)
		return rk_fail(RK_E_SHORT, "%s: %" PRIu64 " bytes, data said to start at %" PRIu64, rk_dev_path(d), dsize,
		               offset);
	if (!size)
		size = dsize - offset;
	if (rk_add_ovf(offset, size, &end) || end > dsize)
		return rk_fail(RK_E_SHORT, "%s: %" PRIu64 " bytes, the data area %" PRIu64 "+%" PRIu64 " does not fit",
		               rk_dev_path(d), dsize, offset, size);
	uint8_t *buf = malloc(RK_GEOMETRY_FP_BLOCK);
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	rk_err e = RK_OK;
	if (!buf || !ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL))
		e = rk_fail(RK_E_NOMEM, "fingerprint: out of memory (or no SHA-256 in libcrypto)");
	for (unsigned k = 0; k < RK_GEOMETRY_FP_SAMPLES && !e; k++) {
		uint64_t at = fp_sample_at(size, k);
		size_t n = size - at < RK_GEOMETRY_FP_BLOCK ? (size_t)(size - at) : RK_GEOMETRY_FP_BLOCK;
		if ((e = rk_dev_pread(d, buf, n, offset + at)))
			break;
		if (!EVP_DigestUpdate(ctx, buf, n))
			e = rk_fail(RK_E_NOMEM, "fingerprint: SHA-256 failed");
	}
	unsigned int len = 0;
	if (!e && (!EVP_DigestFinal_ex(ctx, fp, &len) || len != RK_GEOMETRY_FP_LEN))
		e = rk_fail(RK_E_NOMEM, "fingerprint: SHA-256 failed");
	EVP_MD_CTX_free(ctx);
	free(buf);
	return e;
}

rk_err rk_geometry_fingerprint(const char *path, uint64_t offset, uint64_t size, uint8_t fp[RK_GEOMETRY_FP_LEN])
{
	rk_dev *d;
	rk_err e = rk_member_open(&d, path, RK_DEV_RDONLY);
	if (e)
		return e;
	e = rk_geometry_fingerprint_dev(d, offset, size, fp);
	rk_dev_close(d);
	return e;
}

void rk_geometry_fp_hex(const uint8_t fp[RK_GEOMETRY_FP_LEN], char hex[2 * RK_GEOMETRY_FP_LEN + 1])
{
	rk_hex(fp, RK_GEOMETRY_FP_LEN, hex);
}

/* ---- JSON ---- */

void rk_geometry_json(struct rk_json *j, const struct rk_geometry *g)
{
	char lb[32], hex[2 * RK_GEOMETRY_FP_LEN + 1];
	rk_json_kstr(j, "level", rk_level_name(g->level));
	rk_json_kstr(j, "layout", rk_layout_name(g->level, g->layout, lb, sizeof lb));
	rk_json_ku64(j, "chunk", g->chunk);
	rk_json_ku64(j, "members_total", g->nroles);
	rk_json_ku64(j, "volume_size", g->volume_size);
	rk_json_ku64(j, "member_size", g->member_size);
	rk_json_key(j, "members");
	rk_json_arr_begin(j);
	for (uint32_t r = 0; r < g->nroles; r++) {
		const struct rk_geometry_member *m = &g->roles[r];
		rk_json_obj_begin(j);
		rk_json_ku64(j, "role", r);
		rk_json_kstr(j, "path", m->path);
		rk_json_ku64(j, "offset", m->offset);
		if (rk_json_key_or_null(j, "fingerprint", m->have_fp)) {
			rk_geometry_fp_hex(m->fp, hex);
			rk_json_str(j, hex);
		}
		rk_json_obj_end(j);
	}
	rk_json_arr_end(j);
}

/* ---- mdadm ---- */

/* md's name for G's layout in mdadm's --layout spelling, "" when the level
 * takes none (0, 1, linear; RAID-4 is always parity-last in md), NULL when
 * mdadm cannot spell it (RAID-10 with both near and far copies). */
static const char *md_layout(const struct rk_geometry *g, char *buf, size_t len)
{
	switch (g->level) {
	case 5: case 6:
		return rk_layout_name(g->level, g->layout, buf, len);
	case 10: {
		uint32_t nc = g->layout & 0xff, fc = (g->layout >> 8) & 0xff, off = (g->layout >> 16) & 1;
		if (g->layout >> 17 || (nc > 1 && fc > 1))
			return NULL;
		if (fc == 1)
			snprintf(buf, len, "n%u", nc);
		else
			snprintf(buf, len, "%c%u", off ? 'o' : 'f', fc);
		return buf;
	}
	default:
		return "";
	}
}

/* Appends the devices, one per role (`missing` for an absent one). */
static void md_devices(const struct rk_geometry *g, char *buf, size_t len)
{
	for (uint32_t r = 0; r < g->nroles; r++)
		rk_strcatf(buf, len, " %s", g->roles[r].path ? g->roles[r].path : "missing");
}

/* The data offset all members share, or RK_E_NOTSUP naming the first that
 * differs. */
static rk_err md_common_offset(const struct rk_geometry *g, uint64_t *off)
{
	int have = 0;
	for (uint32_t r = 0; r < g->nroles; r++) {
		if (!have) {
			*off = g->roles[r].offset;
			have = 1;
		} else if (g->roles[r].offset != *off) {
			return rk_fail(RK_E_NOTSUP, "md cannot express this array: role %u's data starts at %" PRIu64
			               ", role 0's at %" PRIu64 " (mdadm takes one data offset for every member)", r,
			               g->roles[r].offset, *off);
		}
	}
	return RK_OK;
}

/* `mdadm --build` for RAID-0 and linear (md keeps no superblock). */
static rk_err md_build_line(const struct rk_geometry *g, uint64_t off, char *buf, size_t len)
{
	if (off)
		return rk_fail(RK_E_NOTSUP, "mdadm --build has no data offset and the data starts at byte %" PRIu64
		               " of each member: make read-only loop devices at that offset first "
		               "(losetup -r -o %" PRIu64 " --sizelimit %" PRIu64 " IMAGE) and build over them",
		               off, off, g->member_size);
	for (uint32_t r = 0; r < g->nroles; r++)
		if (!g->roles[r].path)
			return rk_fail(RK_E_NOTSUP, "role %u is missing and RAID-%s has no redundancy: md cannot build it",
			               r, rk_level_name(g->level));
	snprintf(buf, len, "mdadm --build /dev/md0 --level=%s", g->level == 0 ? "0" : "linear");
	if (g->level == 0)
		rk_strcatf(buf, len, " --chunk=%" PRIu64 "K", g->chunk / 1024);
	rk_strcatf(buf, len, " --raid-devices=%u", g->nroles);
	md_devices(g, buf, len);
	return RK_OK;
}

rk_err rk_geometry_mdadm_line(const struct rk_geometry *g, char *buf, size_t len)
{
	if (!buf || len < 2)
		return rk_fail(RK_E_INVAL, "mdadm line: no buffer");
	buf[0] = 0;
	if (!g || !g->nroles || !g->roles)
		return rk_fail(RK_E_INVAL, "mdadm line: no geometry");
	uint64_t off = 0;
	rk_err e = md_common_offset(g, &off);
	if (e)
		return e;
	if (g->level == 0 || g->level == RK_LEVEL_LINEAR)
		return md_build_line(g, off, buf, len);
	char lb[32];
	const char *layout = md_layout(g, lb, sizeof lb);
	if (!layout)
		return rk_fail(RK_E_NOTSUP, "md cannot express RAID-10 layout %s (mdadm takes near, far or offset "
		               "copies, not two kinds at once)", rk_layout_name(g->level, g->layout, lb, sizeof lb));
	if (off % 1024 || (off && off < 8192))
		return rk_fail(RK_E_NOTSUP, "md cannot express a data offset of %" PRIu64 " bytes (md 1.2 needs a "
		               "multiple of 1 KiB and at least 8 KiB, md 1.0 needs 0)", off);
	if (g->member_size % 1024)
		return rk_fail(RK_E_NOTSUP, "md cannot express %" PRIu64 " data bytes per member (--size takes whole KiB)",
		               g->member_size);
	/* offset 0: md 1.0 keeps its superblock at the end of each device,
	 * after the data (the device must extend past the data area) */
	snprintf(buf, len, "mdadm --create /dev/md0 --assume-clean --metadata=%s", off ? "1.2" : "1.0");
	if (off)
		rk_strcatf(buf, len, " --data-offset=%" PRIu64 "K", off / 1024);
	rk_strcatf(buf, len, " --level=%s", rk_level_name(g->level));
	if (g->level != 1)
		rk_strcatf(buf, len, " --chunk=%" PRIu64 "K", g->chunk / 1024);
	if (*layout)
		rk_strcatf(buf, len, " --layout=%s", layout);
	rk_strcatf(buf, len, " --size=%" PRIu64 "K --raid-devices=%u", g->member_size / 1024, g->nroles);
	md_devices(g, buf, len);
	if (strlen(buf) + 1 >= len)
		return rk_fail(RK_E_RANGE, "mdadm line: longer than %zu bytes", len);
	return RK_OK;
}
