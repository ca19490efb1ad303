/* test_fmt_imsm.c: the Intel IMSM decoder (fmt_imsm.c) on the real IMSM
 * members of tests/fixtures/kernel (made by mdadm and the Linux md driver;
 * values checked against each fixture's manifest.json and examine.txt),
 * and on hostile variations of their metadata region. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rk_dev.h"
#include "rk_fmt.h"
#include "rk_fmt_imsm.h"
#include "rk_json.h"
#include "rk_le.h"
#include "rk_sb.h"
#include "rk_util.h"
#include "helpers/rk_test.h"

static const char *const fixtures[] = {
	"imsm-raid0-3x64k", "imsm-raid1-2x", "imsm-raid10-n2-4x64k", "imsm-raid5-la-3x64k",
};

/* ---- the kernel fixtures ---- */

/* tests/fixtures/kernel (rk_test.h). */
static const char *kernel_dir(void)
{
	return rk_test_kernel_fixtures();
}

/* The manifest of fixture NAME as a string (free()), NULL after "SKIP". */
static char *manifest(const char *name)
{
	char p[1200];
	snprintf(p, sizeof p, "%s/%s/manifest.json", kernel_dir(), name);
	if (access(p, R_OK) != 0) {
		printf("SKIP: no fixture %s\n", p);
		return NULL;
	}
	size_t len;
	char *s = (char *)rk_test_slurp(p, &len);
	s[len] = 0;
	return s;
}

/* The number after the K-th (from 0) "KEY": at or after FROM. */
static long long jnum(const char *from, const char *key, int k)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\":", key);
	const char *p = from;
	for (int i = 0; i <= k; i++) {
		p = strstr(p, pat);
		RK_REQUIRE_MSG(p, "manifest: no %s #%d", key, k);
		p += strlen(pat);
	}
	return strtoll(p, NULL, 10);
}

/* The string value of the first "KEY": into OUT. */
static void jstr(const char *from, const char *key, char *out, size_t cap)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\": \"", key);
	const char *p = strstr(from, pat);
	RK_REQUIRE_MSG(p, "manifest: no %s", key);
	p += strlen(pat);
	size_t n = strcspn(p, "\"");
	RK_REQUIRE(n < cap);
	memcpy(out, p, n);
	out[n] = 0;
}

/* Unpacks member K of fixture NAME into the temporary folder as mK.img
 * (the name the disk serials (rk_fmt_set_disk_serials) gives below): its path. */
static const char *unpack_member(const char *name, int k)
{
	static char out[1200];
	char cmd[3000];
	snprintf(out, sizeof out, "%s/m%d.img", rk_test_tmpdir(), k);
	snprintf(cmd, sizeof cmd, "xz -dc '%s/%s/m%d.img.xz' > '%s'", kernel_dir(), name, k, out);
	RK_REQUIRE_MSG(system(cmd) == 0, "cannot unpack %s m%d", name, k);
	return out;
}

/* The fixtures' serials: mdadm ran with IMSM_DEVNAME_AS_SERIAL, and mK.img
 * was /dev/ubd<a+K> (examine.txt's header). */
static void set_serials(int n)
{
	char env[512] = "";
	for (int k = 0; k < n; k++) {
		size_t o = strlen(env);
		snprintf(env + o, sizeof env - o, "%sm%d.img=/dev/ubd%c", k ? "," : "", k, 'a' + k);
	}
	rk_fmt_set_disk_serials(env);
}

static void fold(uint8_t out[16], const char *serial)
{
	uint8_t s[16] = { 0 };
	memcpy(s, serial, strlen(serial));
	memset(out, 0, 16);
	for (int i = 0; i < 16; i++)
		out[i % 16] ^= s[i];
}

static char *captured_text(const struct rk_imsm *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	RK_REQUIRE(f);
	rk_meta_fmt_find("imsm")->print_text(f, m, "");
	fclose(f);
	return buf;
}

static char *captured_json(const struct rk_imsm *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	RK_REQUIRE(f);
	rk_json *j = rk_json_new(f);
	rk_meta_fmt_find("imsm")->print_json(j, m);
	rk_json_free(j);
	fclose(f);
	return buf;
}

/* The view of one fixture member against the manifest's entry K. */
static void check_view(const char *man, const struct rk_sb *v, int k)
{
	long long chunk = jnum(man, "chunk", 0), layout = jnum(man, "layout_code", 0);
	int raid1 = strstr(man, "\"level\": \"raid1\"") != NULL;
	ck_assert_uint_eq(v->origin, RK_ORIGIN_IMSM);
	ck_assert_uint_eq(v->chunk, raid1 ? 0 : (uint64_t)chunk);   /* IMSM records a strip for RAID-1 too */
	ck_assert_uint_eq(v->layout, (uint64_t)layout);
	ck_assert_uint_eq(v->nroles, (uint64_t)jnum(man, "raid_disks", 0));
	ck_assert_uint_eq(v->this_role, (uint64_t)jnum(man, "role", k));
	ck_assert_uint_eq(v->data_offset, (uint64_t)jnum(man, "data_offset", k));
	ck_assert_uint_eq(v->data_size, (uint64_t)jnum(man, "data_size", k));
	ck_assert_uint_eq(v->volume_size, (uint64_t)jnum(man, "volume_size", 0));
	ck_assert_str_eq(v->name, "kr");
	for (uint32_t r = 0; r < v->nroles; r++)
		ck_assert_uint_eq(v->roles[r].state, RK_ROLE_ACTIVE);
	ck_assert_mem_eq(v->member_uuid, v->roles[v->this_role].member_uuid, 16);
	char ser[16];
	snprintf(ser, sizeof ser, "/dev/ubd%c", 'a' + k);
	uint8_t u[16];
	fold(u, ser);
	ck_assert_mem_eq(v->member_uuid, u, 16);
	ck_assert_int_eq(rk_view_check(v, 10485760), RK_OK);
}

/* Member K of fixture NAME: decode, examine's words, views. */
static void check_member(const char *name, const char *man, int k, int n)
{
	const char *img = unpack_member(name, k);
	rk_dev *d = NULL;
	ck_assert_int_eq(rk_dev_open(&d, img, RK_DEV_RDONLY), RK_OK);
	const struct rk_meta_fmt *f = rk_meta_fmt_find("imsm");
	struct rk_imsm *m = NULL;
	ck_assert_int_eq(f->decode(d, img, (void **)&m), RK_OK);
	ck_assert_int_eq(m->csum_ok, 1);
	ck_assert_uint_eq(m->num_disks, (unsigned)n);
	ck_assert_uint_eq(m->nvols, 1);
	ck_assert_uint_eq(m->at, 10485760 - 1024);
	ck_assert_int_eq(m->this_disk >= 0, 1);
	char want[64];
	jstr(man, "uuid", want, sizeof want);   /* mdadm's volume UUID */
	char *t = captured_text(m);
	char line[128];
	snprintf(line, sizeof line, "UUID : %s\n", want);
	ck_assert_ptr_nonnull(strstr(t, line));
	snprintf(line, sizeof line, "This Slot : %lld\n", jnum(man, "role", k));
	ck_assert_ptr_nonnull(strstr(t, line));
	ck_assert_ptr_nonnull(strstr(t, "Checksum : "));
	ck_assert_ptr_nonnull(strstr(t, " correct\n"));
	free(t);
	char *j = captured_json(m);
	ck_assert_ptr_nonnull(strstr(j, "\"format\":\"imsm\""));
	snprintf(line, sizeof line, "\"this_slot\":%lld", jnum(man, "role", k));
	ck_assert_ptr_nonnull(strstr(j, line));
	free(j);
	struct rk_sb *views = NULL;
	uint32_t nv = 0;
	ck_assert_int_eq(f->views(m, rk_dev_size(d), &views, &nv), RK_OK);
	ck_assert_uint_eq(nv, 1);
	check_view(man, &views[0], k);
	ck_assert_uint_eq(views[0].events, m->generation_num);
	free(views);
	f->release(m);
	/* through the table, as discovery reads it */
	struct rk_foreign_read fr;
	ck_assert_int_eq(rk_foreign_read(d, img, &fr), RK_OK);
	ck_assert_ptr_eq(fr.fmt, f);
	ck_assert_uint_eq(fr.nviews, 1);
	rk_foreign_read_free(&fr);
	rk_dev_close(d);
	unlink(img);
}

START_TEST(t_fixture)
{
	const char *name = fixtures[_i];
	char *man = manifest(name);
	if (!man)
		return;
	if (system("command -v xz >/dev/null 2>&1") != 0) {
		printf("SKIP: xz is not installed\n");
		free(man);
		return;
	}
	int n = (int)jnum(man, "raid_disks", 0);
	set_serials(n);
	for (int k = 0; k < n; k++)
		check_member(name, man, k, n);
	free(man);
}
END_TEST

/* ---- hostile metadata on a memory device ---- */

#define MEM_SIZE (16u * 1024 * 1024)

/* The MPB of fixture NAME's m0 (put together as the decoder does), into
 * BUF (at least 4096 bytes); its size. */
static size_t fixture_mpb(const char *name, uint8_t *buf)
{
	const char *img = unpack_member(name, 0);
	size_t len;
	uint8_t *b = rk_test_slurp(img, &len);
	unlink(img);
	uint32_t size = rk_get_le32(b + len - 1024 + 0x24);
	RK_REQUIRE(size <= 1536);
	memcpy(buf, b + len - 1024, 512);
	memcpy(buf + 512, b + len - 1536, 512);
	free(b);
	return size;
}

/* Recomputes the checksum of the MPB in BUF (4096 bytes). */
static void fix_csum(uint8_t *mpb)
{
	uint32_t size = rk_get_le32(mpb + 0x24), sum = 0;
	size = size > 4096 ? 4096 : size;
	for (uint32_t i = 0; i + 4 <= size; i += 4)
		sum += i == 0x20 ? 0 : rk_get_le32(mpb + i);
	rk_put_le32(mpb + 0x20, sum);
}

/* A memory device of SIZE bytes with MPB laid out at its end as IMSM does:
 * the anchor sector at size - 1024, the rest in the sectors before it. */
static rk_dev *mpb_dev(const uint8_t *mpb, uint64_t size, const char *name)
{
	rk_dev *d = NULL;
	ck_assert_int_eq(rk_dev_mem(&d, name, size), RK_OK);
	uint8_t *p = rk_dev_mem_data(d);
	uint32_t len = rk_get_le32(mpb + 0x24), secs = (len + 511) / 512;
	secs = secs > 8 ? 8 : secs;
	if (size >= 1024)
		memcpy(p + size - 1024, mpb, 512);
	if (secs > 1 && size >= 1024 + (secs - 1) * 512u)
		memcpy(p + size - 1024 - (secs - 1) * 512, mpb + 512, (secs - 1) * 512);
	return d;
}

/* Decodes MPB on a fresh memory device named PATH; the error; *OUT the object (or NULL). */
static rk_err decode_mpb(const uint8_t *mpb, uint64_t size, const char *path, struct rk_imsm **out)
{
	rk_dev *d = mpb_dev(mpb, size, path);
	*out = NULL;
	rk_err e = rk_meta_fmt_find("imsm")->decode(d, path, (void **)out);
	rk_dev_close(d);
	return e;
}

/* The views of M on a MEM_SIZE member; the error, *N views in *V. */
static rk_err views_of(const struct rk_imsm *m, struct rk_sb **v, uint32_t *n)
{
	return rk_meta_fmt_find("imsm")->views(m, MEM_SIZE, v, n);
}

static uint8_t base[4096];
static size_t base_len;
#define DEV0 (RK_IMSM_HDR_SIZE + 4 * RK_IMSM_DISK_SIZE)   /* the raid10 fixture: 4 disks */
#define MAP0 (DEV0 + RK_IMSM_DEV_HDR + RK_IMSM_VOL_HDR)

/* The raid10 fixture's MPB into base (0 after SKIP). */
static int load_base(void)
{
	char *man = manifest("imsm-raid10-n2-4x64k");
	if (!man)
		return 0;
	free(man);
	memset(base, 0, sizeof base);
	base_len = fixture_mpb("imsm-raid10-n2-4x64k", base);
	ck_assert_uint_eq(base_len, MAP0 + RK_IMSM_MAP_HDR + 16);
	return 1;
}

/* Which disk a member is: told by the disk serials (rk_fmt_set_disk_serials), by a path the
 * metadata names as a serial, or not at all (refused with a sentence). */
START_TEST(t_which_disk)
{
	if (!load_base())
		return;
	struct rk_imsm *m;
	struct rk_sb *v = NULL;
	uint32_t n = 0;
	rk_fmt_set_disk_serials(NULL);
	ck_assert_int_eq(decode_mpb(base, MEM_SIZE, "m0.img", &m), RK_OK);
	ck_assert_int_eq(m->this_disk, -1);
	ck_assert_int_eq(views_of(m, &v, &n), RK_E_NOTSUP);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "--disk-serial"));
	ck_assert_uint_eq(n, 0);
	char *t = captured_text(m);
	ck_assert_ptr_nonnull(strstr(t, "This Slot : ?\n"));
	free(t);
	free(m);
	/* the disk table: /dev/ubdb, /dev/ubdc, /dev/ubda, /dev/ubdd */
	ck_assert_int_eq(decode_mpb(base, MEM_SIZE, "/dev/ubdc", &m), RK_OK);
	ck_assert_int_eq(m->this_disk, 1);
	ck_assert_int_eq(views_of(m, &v, &n), RK_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(v[0].this_role, 1);
	ck_assert_int_eq(rk_view_check(&v[0], MEM_SIZE), RK_OK);
	free(v);
	free(m);
	rk_fmt_set_disk_serials("x.img=/dev/ubdb,/some/dir/m0.img=/dev/ubdd");
	ck_assert_int_eq(decode_mpb(base, MEM_SIZE, "/some/dir/m0.img", &m), RK_OK);
	ck_assert_int_eq(m->this_disk, 3);
	free(m);
	ck_assert_int_eq(decode_mpb(base, MEM_SIZE, "/other/x.img", &m), RK_OK);
	ck_assert_int_eq(m->this_disk, 0);
	free(m);
	/* a path key names the same file under another spelling */
	rk_test_make_file(rk_test_path("y.img"), 4096);
	char env[1200];
	snprintf(env, sizeof env, "%s/./y.img=/dev/ubdc", rk_test_tmpdir());
	rk_fmt_set_disk_serials(env);
	ck_assert_int_eq(decode_mpb(base, MEM_SIZE, rk_test_path("y.img"), &m), RK_OK);
	ck_assert_int_eq(m->this_disk, 1);
	free(m);
	/* a file named after its disk's serial; not when two serials fit */
	ck_assert_int_eq(decode_mpb(base, MEM_SIZE, "/img/case7-/dev/ubdd.dd", &m), RK_OK);
	ck_assert_int_eq(m->this_disk, -1);   /* the file name is "ubdd.dd": no serial in it */
	free(m);
	uint8_t mpb[4096];
	memcpy(mpb, base, sizeof mpb);
	memcpy(mpb + RK_IMSM_HDR_SIZE + 3 * RK_IMSM_DISK_SIZE, "WD-WCC4N1234567\0", 16);
	memcpy(mpb + RK_IMSM_HDR_SIZE + 2 * RK_IMSM_DISK_SIZE, "WD-WCC4N1234\0\0\0\0", 16);
	fix_csum(mpb);
	ck_assert_int_eq(decode_mpb(mpb, MEM_SIZE, "/img/WD-WCC4N1234567.dd", &m), RK_OK);
	ck_assert_int_eq(m->this_disk, -1);   /* both serials are in the name */
	free(m);
	ck_assert_int_eq(decode_mpb(mpb, MEM_SIZE, "/img/disk-WD-WCC4N1234.dd", &m), RK_OK);
	ck_assert_int_eq(m->this_disk, 2);
	ck_assert_ptr_nonnull(strstr(m->this_how, "file name"));
	free(m);
	rk_fmt_set_disk_serials("m0.img=NOSUCHSERIAL");
	ck_assert_int_eq(decode_mpb(base, MEM_SIZE, "m0.img", &m), RK_OK);
	ck_assert_int_eq(m->this_disk, -1);
	ck_assert_ptr_nonnull(strstr(m->this_how, "not in the disk table"));
	free(m);
	rk_fmt_set_disk_serials(NULL);
}
END_TEST

/* A flipped byte: decoded and shown, the checksum reported wrong, no view. */
START_TEST(t_checksum)
{
	if (!load_base())
		return;
	base[DEV0 + 1] ^= 0x40;
	struct rk_imsm *m;
	ck_assert_int_eq(decode_mpb(base, MEM_SIZE, "/dev/ubda", &m), RK_OK);
	ck_assert_int_eq(m->csum_ok, 0);
	ck_assert_uint_ne(m->csum_calc, m->check_sum);
	char *t = captured_text(m);
	ck_assert_ptr_nonnull(strstr(t, " incorrect\n"));
	free(t);
	char *j = captured_json(m);
	ck_assert_ptr_nonnull(strstr(j, "\"checksum_ok\":false"));
	free(j);
	struct rk_sb *v = NULL;
	uint32_t n = 0;
	ck_assert_int_eq(views_of(m, &v, &n), RK_E_BADCRC);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "checksum"));
	free(m);
}
END_TEST

/* One hostile change of the base MPB (checksum fixed) and what the decoder says. */
static void expect_refused(size_t off, unsigned width, uint32_t val, uint64_t size, rk_err want, const char *words)
{
	uint8_t mpb[4096];
	memcpy(mpb, base, sizeof mpb);
	if (width == 1)
		mpb[off] = (uint8_t)val;
	else if (width == 2)
		rk_put_le16(mpb + off, (uint16_t)val);
	else
		rk_put_le32(mpb + off, val);
	fix_csum(mpb);
	struct rk_imsm *m;
	rk_err e = decode_mpb(mpb, size, "/dev/ubda", &m);
	RK_REQUIRE_MSG(e == want, "offset %zu = %u: %d (%s), wanted %d", off, val, e, rk_errmsg(), want);
	RK_REQUIRE_MSG(strstr(rk_errmsg(), words), "offset %zu = %u: '%s' lacks '%s'", off, val, rk_errmsg(), words);
	ck_assert_ptr_null(m);
}

/* Counts and sizes too large for the MPB or the device: refused with a sentence. */
START_TEST(t_counts)
{
	if (!load_base())
		return;
	expect_refused(0x38, 1, 255, MEM_SIZE, RK_E_CORRUPT, "255 disks");
	expect_refused(0x39, 1, 17, MEM_SIZE, RK_E_CORRUPT, "17 volumes");
	expect_refused(0x39, 1, 2, MEM_SIZE, RK_E_CORRUPT, "runs past");
	expect_refused(MAP0 + 16, 1, 200, MEM_SIZE, RK_E_CORRUPT, "200 members run past");
	expect_refused(MAP0 + 16, 1, 0, MEM_SIZE, RK_E_CORRUPT, "no members");
	expect_refused(0x24, 4, 100, MEM_SIZE, RK_E_CORRUPT, "MPB size 100");
	expect_refused(0x24, 4, 0x7fffffffu, MEM_SIZE, RK_E_CORRUPT, "MPB size");
	expect_refused(0x24, 4, 1400, 1600, RK_E_CORRUPT, "within the member's 1600");
	expect_refused(0x48, 4, 4096, MEM_SIZE, RK_E_CORRUPT, "bad-block log");
	expect_refused(0x48, 4, 4, MEM_SIZE, RK_E_CORRUPT, "bad-block log");
	expect_refused(0, 1, 'X', MEM_SIZE, RK_E_NOSB, "no IMSM");
	struct rk_imsm *m;
	ck_assert_int_eq(decode_mpb(base, 1000, "tiny", &m), RK_E_NOSB);
	ck_assert_int_eq(decode_mpb(base, 1024, "tiny", &m), RK_E_NOSB);
	/* a member image cut short by 300 bytes: the anchor is no longer
	 * where IMSM keeps it */
	rk_dev *whole = mpb_dev(base, 65536, "whole"), *cut = NULL;
	ck_assert_int_eq(rk_dev_mem(&cut, "cut", 65536 - 300), RK_OK);
	memcpy(rk_dev_mem_data(cut), rk_dev_mem_data(whole), 65536 - 300);
	ck_assert_int_eq(rk_meta_fmt_find("imsm")->decode(cut, "cut", (void **)&m), RK_E_NOSB);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "no IMSM metadata"));
	rk_dev_close(cut);
	rk_dev_close(whole);
}
END_TEST

/* The base MPB with a second map (a copy of the first) and migr_state
 * set with TYPE, into MPB; ORD1 ORed into the second map's slot 1. */
static void with_migration(uint8_t *mpb, uint8_t type, uint32_t ord1, uint8_t level1)
{
	size_t mlen = RK_IMSM_MAP_HDR + 16;
	memcpy(mpb, base, 4096);
	memcpy(mpb + MAP0 + mlen, base + MAP0, mlen);
	rk_put_le32(mpb + MAP0 + mlen + RK_IMSM_MAP_HDR + 4, rk_get_le32(mpb + MAP0 + RK_IMSM_MAP_HDR + 4) | ord1);
	mpb[MAP0 + mlen + 15] = level1;
	mpb[MAP0 + mlen + 14] = RK_IMSM_MAP_DEGRADED;
	rk_put_le32(mpb + 0x24, (uint32_t)(base_len + mlen));
	mpb[DEV0 + RK_IMSM_DEV_HDR + 8] = 1;
	mpb[DEV0 + RK_IMSM_DEV_HDR + 9] = type;
	fix_csum(mpb);
}

/* Migrations: a rebuild reads (the disk being rebuilt REBUILDING), a
 * general migration is refused with a sentence. */
START_TEST(t_migration)
{
	if (!load_base())
		return;
	uint8_t mpb[4096];
	struct rk_imsm *m;
	struct rk_sb *v = NULL;
	uint32_t n = 0;
	with_migration(mpb, RK_IMSM_MIGR_REBUILD, RK_IMSM_ORD_REBUILD, 1);
	ck_assert_int_eq(decode_mpb(mpb, MEM_SIZE, "/dev/ubda", &m), RK_OK);
	ck_assert_int_eq(m->csum_ok, 1);
	ck_assert_uint_eq(m->vols[0].migr_state, 1);
	ck_assert_uint_eq(m->vols[0].map[1].ord[1], 1 | RK_IMSM_ORD_REBUILD);
	char *t = captured_text(m);
	ck_assert_ptr_nonnull(strstr(t, "Migrate State : rebuild\n"));
	ck_assert_ptr_nonnull(strstr(t, "Map State : normal <-- degraded\n"));
	ck_assert_ptr_nonnull(strstr(t, "Slots : [UUUU] <-- [U_UU]\n"));
	free(t);
	ck_assert_int_eq(views_of(m, &v, &n), RK_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(v[0].roles[1].state, RK_ROLE_REBUILDING);
	ck_assert_uint_eq(v[0].roles[1].checkpoint, 0);
	ck_assert_uint_eq(v[0].roles[0].state, RK_ROLE_ACTIVE);
	ck_assert_int_eq(rk_view_check(&v[0], MEM_SIZE), RK_OK);
	free(v);
	free(m);
	with_migration(mpb, RK_IMSM_MIGR_GEN, 0, 5);
	ck_assert_int_eq(decode_mpb(mpb, MEM_SIZE, "/dev/ubda", &m), RK_OK);
	ck_assert_int_eq(views_of(m, &v, &n), RK_E_NOTSUP);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "general migration"));
	ck_assert_uint_eq(n, 0);
	t = captured_text(m);
	ck_assert_ptr_nonnull(strstr(t, "RAID Level : 10 <-- 5\n"));
	free(t);
	free(m);
}
END_TEST

/* Role states from the disk table and the ord flags; levels not served. */
START_TEST(t_roles)
{
	if (!load_base())
		return;
	uint8_t mpb[4096];
	struct rk_imsm *m;
	struct rk_sb *v = NULL;
	uint32_t n = 0;
	memcpy(mpb, base, sizeof mpb);
	/* disk 0 (/dev/ubdb, slot 0) failed, slot 3 names a disk not in the table */
	rk_put_le32(mpb + RK_IMSM_HDR_SIZE + 24, RK_IMSM_DISK_CONFIGURED | RK_IMSM_DISK_FAILED);
	rk_put_le32(mpb + MAP0 + RK_IMSM_MAP_HDR + 12, 9 | RK_IMSM_ORD_REBUILD);
	rk_put_le32(mpb + MAP0 + RK_IMSM_MAP_HDR + 4, 1 | RK_IMSM_ORD_REBUILD);
	fix_csum(mpb);
	ck_assert_int_eq(decode_mpb(mpb, MEM_SIZE, "/dev/ubda", &m), RK_OK);
	ck_assert_int_eq(views_of(m, &v, &n), RK_OK);
	ck_assert_uint_eq(v[0].roles[0].state, RK_ROLE_FAULTY);
	ck_assert_uint_eq(v[0].roles[1].state, RK_ROLE_REBUILDING);
	ck_assert_uint_eq(v[0].roles[2].state, RK_ROLE_ACTIVE);
	ck_assert_uint_eq(v[0].roles[3].state, RK_ROLE_EMPTY);
	ck_assert_uint_eq(v[0].this_role, 2);
	free(v);
	char *t = captured_text(m);
	ck_assert_ptr_nonnull(strstr(t, "State : active failed\n"));
	free(t);
	free(m);
	/* two slots naming one disk */
	memcpy(mpb, base, sizeof mpb);
	rk_put_le32(mpb + MAP0 + RK_IMSM_MAP_HDR + 12, 2);
	fix_csum(mpb);
	ck_assert_int_eq(decode_mpb(mpb, MEM_SIZE, "/dev/ubda", &m), RK_OK);
	ck_assert_int_eq(views_of(m, &v, &n), RK_E_CORRUPT);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "both name disk 2"));
	free(m);
	/* a RAID level IMSM has no md equivalent for */
	memcpy(mpb, base, sizeof mpb);
	mpb[MAP0 + 15] = 6;
	fix_csum(mpb);
	ck_assert_int_eq(decode_mpb(mpb, MEM_SIZE, "/dev/ubda", &m), RK_OK);
	ck_assert_int_eq(views_of(m, &v, &n), RK_E_NOTSUP);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "RAID level 6"));
	free(m);
	/* a disk outside every volume (a spare): no view */
	memcpy(mpb, base, sizeof mpb);
	rk_put_le32(mpb + MAP0 + RK_IMSM_MAP_HDR + 8, 7);
	fix_csum(mpb);
	ck_assert_int_eq(decode_mpb(mpb, MEM_SIZE, "/dev/ubda", &m), RK_OK);
	ck_assert_int_eq(views_of(m, &v, &n), RK_OK);
	ck_assert_uint_eq(n, 0);
	free(m);
}
END_TEST

/* Two volumes on one disk set: two views, different data offsets and
 * identities; and a bad-block log, noticed. */
START_TEST(t_two_volumes)
{
	if (!load_base())
		return;
	uint8_t mpb[4096];
	size_t dlen = base_len - DEV0;
	memcpy(mpb, base, sizeof mpb);
	memcpy(mpb + base_len, base + DEV0, dlen);
	memcpy(mpb + base_len, "second\0\0\0\0\0\0\0\0\0\0", 16);
	rk_put_le32(mpb + base_len + (MAP0 - DEV0), 10240);   /* pba_of_lba0 */
	mpb[0x39] = 2;
	/* a bad-block log of one entry after the volumes */
	size_t bbm = base_len + dlen;
	rk_put_le32(mpb + bbm, RK_IMSM_BBM_SIG);
	rk_put_le32(mpb + bbm + 4, 1);
	rk_put_le32(mpb + 0x48, 16);
	rk_put_le32(mpb + 0x24, (uint32_t)(bbm + 16));
	fix_csum(mpb);
	struct rk_imsm *m;
	struct rk_sb *v = NULL;
	uint32_t n = 0;
	ck_assert_int_eq(decode_mpb(mpb, MEM_SIZE, "/dev/ubda", &m), RK_OK);
	ck_assert_uint_eq(m->nvols, 2);
	ck_assert_int_eq(m->bbm_present, 1);
	ck_assert_uint_eq(m->bbm_entries, 1);
	char *t = captured_text(m);
	ck_assert_ptr_nonnull(strstr(t, "[second]:\n"));
	ck_assert_ptr_nonnull(strstr(t, "Bad Block Management Log:\n"));
	free(t);
	ck_assert_int_eq(views_of(m, &v, &n), RK_OK);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(v[0].data_offset, 0);
	ck_assert_uint_eq(v[1].data_offset, 10240 * 512);
	ck_assert_str_eq(v[1].name, "second");
	ck_assert_int_ne(memcmp(v[0].array_uuid, v[1].array_uuid, 16), 0);
	ck_assert_mem_eq(v[0].member_uuid, v[1].member_uuid, 16);
	ck_assert_int_eq(rk_view_check(&v[0], MEM_SIZE), RK_OK);
	ck_assert_int_eq(rk_view_check(&v[1], MEM_SIZE), RK_OK);
	free(v);
	free(m);
}
END_TEST

/* Random damage to the metadata region (the checksum fixed half the
 * time): decode, views, printing never fail otherwise than with an error. */
START_TEST(t_random)
{
	if (!load_base())
		return;
	rk_test_rnd_seed(15);
	FILE *null = fopen("/dev/null", "w");
	RK_REQUIRE(null);
	for (int it = 0; it < 2000; it++) {
		uint8_t mpb[4096];
		memcpy(mpb, base, sizeof mpb);
		for (int k = 1 + (int)rk_test_rnd_below(4); k > 0; k--)
			mpb[rk_test_rnd_below(base_len + 64)] = (uint8_t)rk_test_rnd();
		if (it & 1)
			fix_csum(mpb);
		struct rk_imsm *m;
		if (decode_mpb(mpb, 65536, "/dev/ubda", &m) != RK_OK)   /* small: cheap under the sanitizers */
			continue;
		struct rk_sb *v = NULL;
		uint32_t n = 0;
		if (views_of(m, &v, &n) == RK_OK)
			for (uint32_t i = 0; i < n; i++)
				(void)rk_view_check(&v[i], MEM_SIZE);
		else
			ck_assert_uint_eq(n, 0);
		free(v);
		rk_meta_fmt_find("imsm")->print_text(null, m, "  ");
		rk_json *j = rk_json_new(null);
		rk_meta_fmt_find("imsm")->print_json(j, m);
		rk_json_free(j);
		free(m);
	}
	fclose(null);
}
END_TEST

RK_TEST_SUITE("fmt_imsm", { "fmt_imsm", 120, rk_test_tmpdir_make, rk_test_tmpdir_remove, 0,
	  RK_TESTS(RK_TEST_LOOP(t_fixture, 0, 4), RK_TEST(t_which_disk), RK_TEST(t_checksum), RK_TEST(t_counts),
	           RK_TEST(t_migration), RK_TEST(t_roles), RK_TEST(t_two_volumes), RK_TEST(t_random)) })
