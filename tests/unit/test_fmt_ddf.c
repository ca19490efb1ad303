/* test_fmt_ddf.c: the DDF decoder (fmt_ddf.c) on the kernel fixtures made
 * by mdadm and Linux md (every ddf-* member against its manifest.json), on
 * containers built here (several virtual disks, spares, failed disks, a
 * damaged primary header) and on hostile variations: truncated members,
 * flipped bytes (checksums reported, views refused), counts too large. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "rk_dev.h"
#include "rk_fmt.h"
#include "rk_fmt_ddf.h"
#include "rk_json.h"
#include "rk_le.h"
#include "rk_sb.h"
#include "helpers/rk_test.h"

static const struct rk_meta_fmt *ddf(void)
{
	const struct rk_meta_fmt *f = rk_meta_fmt_find("ddf");
	ck_assert_ptr_nonnull(f);
	return f;
}

/* ---- the kernel fixtures ---- */

static const char *const fixtures[] = {
	"ddf-raid0-3x64k", "ddf-raid1-2x", "ddf-raid10-n2-4x64k", "ddf-raid5-la-4x64k", "ddf-raid5-ls-4x64k",
	"ddf-raid5-ra-4x64k", "ddf-raid6-nc-5x64k", "ddf-raid6-nr-5x64k", "ddf-raid6-zr-5x64k",
};
#define NFIXTURES ((int)(sizeof fixtures / sizeof fixtures[0]))

/* The number after "KEY": in S (from S on), -1 for null; fails when absent. */
static long long mnum(const char *s, const char *key)
{
	char k[64];
	snprintf(k, sizeof k, "\"%s\": ", key);
	const char *p = strstr(s, k);
	RK_REQUIRE_MSG(p, "manifest lacks %s", key);
	p += strlen(k);
	return strncmp(p, "null", 4) == 0 ? -1 : strtoll(p, NULL, 10);
}

struct manifest {
	char level[16];
	long long layout, chunk, raid_disks, volume_size, members;
	long long role[8], data_offset[8], data_size[8];
};

static void manifest_read(const char *dir, const char *name, struct manifest *m)
{
	char p[800];
	size_t len;
	snprintf(p, sizeof p, "%s/%s/manifest.json", dir, name);
	char *s = (char *)rk_test_slurp(p, &len);
	s[len] = 0;
	memset(m, 0, sizeof *m);
	const char *l = strstr(s, "\"level\": \"");
	RK_REQUIRE(l);
	sscanf(l + 10, "%15[^\"]", m->level);
	m->layout = mnum(s, "layout_code");
	m->chunk = mnum(s, "chunk");
	m->raid_disks = mnum(s, "raid_disks");
	m->volume_size = mnum(s, "volume_size");
	for (int i = 0; i < 8; i++) {
		char f[40];
		snprintf(f, sizeof f, "{\"file\": \"m%d.img.xz\"", i);
		const char *e = strstr(s, f);
		if (!e)
			break;
		m->role[i] = mnum(e, "role");
		m->data_offset[i] = mnum(e, "data_offset");
		m->data_size[i] = mnum(e, "data_size");
		m->members = i + 1;
	}
	free(s);
}

static void print_both(const void *obj)
{
	FILE *f = fopen("/dev/null", "w");
	ck_assert_ptr_nonnull(f);
	ddf()->print_text(f, obj, "  ");
	rk_json *j = rk_json_new(f);
	ddf()->print_json(j, obj);
	rk_json_free(j);
	fclose(f);
}

/* Member I of fixture M decoded: headers, checksums, this disk. */
static void check_decode(const struct rk_ddf *m)
{
	ck_assert_int_eq(m->anchor.crc_ok, 1);
	ck_assert_str_eq(m->anchor.revision, "01.02.00");
	ck_assert_int_eq(m->active, 1);
	ck_assert_int_eq(m->primary.usable, 1);
	ck_assert_int_eq(m->secondary.usable, 1);
	ck_assert_str_eq(m->why, "");
	ck_assert(m->crc_ctrl.ok && m->crc_phys.ok && m->crc_virt.ok && m->crc_data.ok);
	ck_assert_uint_eq(m->nvds, 1);
	ck_assert_uint_eq(m->vd_populated, 1);
	ck_assert_uint_eq(m->nconfs, 1);
	ck_assert(m->confs[0].crc.ok);
	ck_assert_int_ge(m->this_pd, 0);
	ck_assert_uint_eq(m->pds[m->this_pd].refnum, m->dd_refnum);
	ck_assert_mem_eq(m->confs[0].guid, m->vds[0].guid, RK_DDF_GUID_LEN);
}

/* The 16-byte fold of a DDF GUID views use (rk_fmt.h "Views"): XOR of
 * the bytes, byte i into i % 16. */
static void fold(uint8_t out[16], const uint8_t *g)
{
	memset(out, 0, 16);
	for (unsigned i = 0; i < RK_DDF_GUID_LEN; i++)
		out[i % 16] ^= g[i];
}

/* The view of member I against the manifest. */
static void check_view(const struct manifest *mf, int i, const struct rk_ddf *m, const struct rk_sb *v, uint64_t size)
{
	char lv[16];
	snprintf(lv, sizeof lv, "raid%d", v->level);
	ck_assert_str_eq(lv, mf->level);
	ck_assert_uint_eq(v->layout, (uint64_t)mf->layout);
	ck_assert_uint_eq(v->chunk, mf->chunk < 0 ? 0 : (uint64_t)mf->chunk);
	ck_assert_uint_eq(v->nroles, (uint64_t)mf->raid_disks);
	ck_assert_uint_eq(v->this_role, (uint64_t)mf->role[i]);
	ck_assert_uint_eq(v->data_offset, (uint64_t)mf->data_offset[i]);
	ck_assert_uint_eq(v->data_size, (uint64_t)mf->data_size[i]);
	ck_assert_uint_eq(v->volume_size, (uint64_t)mf->volume_size);
	ck_assert_uint_eq(v->events, rk_ddf_active(m)->seq);
	ck_assert_uint_eq(v->origin, RK_ORIGIN_DDF);
	ck_assert_str_eq(v->name, "kr");
	ck_assert_uint_eq(v->array_state, RK_ARRAY_CLEAN);
	uint8_t u[16];
	fold(u, m->vds[0].guid);
	ck_assert_mem_eq(v->array_uuid, u, 16);
	fold(u, m->dd_guid);
	ck_assert_mem_eq(v->member_uuid, u, 16);
	ck_assert_mem_eq(v->roles[v->this_role].member_uuid, u, 16);
	ck_assert_uint_eq(v->roles[v->this_role].state, RK_ROLE_ACTIVE);
	ck_assert_int_eq(rk_view_check(v, size), RK_OK);
}

/* Every member of fixture _i: decode, views, the manifest's numbers; the
 * role tables of the members agree (RAID-10: within a leg). */
START_TEST(t_fixture)
{
	const char *dir = rk_test_kernel_fixtures();
	char p[800];
	snprintf(p, sizeof p, "%s/%s/manifest.json", dir, fixtures[_i]);
	if (access(p, R_OK) != 0) {
		printf("SKIP: no %s\n", p);
		return;
	}
	const char *name = fixtures[_i];
	struct manifest mf;
	manifest_read(dir, name, &mf);
	struct rk_sb *first = NULL;
	for (int i = 0; i < mf.members; i++) {
		char img[700], mem[8];
		snprintf(mem, sizeof mem, "m%d", i);
		if (!rk_test_unpack_kernel(name, mem, img, sizeof img))
			return;
		rk_dev *d = NULL;
		ck_assert_int_eq(rk_dev_open(&d, img, RK_DEV_RDONLY), RK_OK);
		void *obj = NULL;
		ck_assert_int_eq(ddf()->decode(d, img, &obj), RK_OK);
		check_decode(obj);
		struct rk_sb *v = NULL;
		uint32_t n = 0;
		ck_assert_int_eq(ddf()->views(obj, rk_dev_size(d), &v, &n), RK_OK);
		ck_assert_uint_eq(n, 1);
		check_view(&mf, i, obj, v, rk_dev_size(d));
		if (v->level == 10) {
			/* its own leg (a mirror pair) named, the other leg not */
			static const uint8_t zero[16];
			for (uint32_t r = 0; r < v->nroles; r++)
				ck_assert_int_eq(memcmp(v->roles[r].member_uuid, zero, 16) != 0, r / 2 == v->this_role / 2);
		}
		if (!first)
			first = v;
		else {
			ck_assert_mem_eq(v->array_uuid, first->array_uuid, 16);
			ck_assert_uint_eq(v->events, first->events);
			if (v->level != 10)
				ck_assert_mem_eq(v->roles, first->roles, sizeof v->roles[0] * v->nentries);
			free(v);
		}
		print_both(obj);
		struct rk_probe_result r;
		ck_assert_int_eq(ddf()->probe(d, img, &r), RK_OK);
		ck_assert_int_eq(r.found, 1);
		ddf()->release(obj);
		/* through the table, as discovery reads it */
		struct rk_foreign_read fr;
		ck_assert_int_eq(rk_foreign_read(d, img, &fr), RK_OK);
		ck_assert_ptr_eq(fr.fmt, ddf());
		ck_assert_uint_eq(fr.nviews, 1);
		ck_assert_str_eq(fr.why, "");
		rk_foreign_read_free(&fr);
		rk_dev_close(d);
		unlink(img);
	}
	free(first);
}
END_TEST

/* A container an old mdadm made (util-linux's test image): two global
 * spares, no virtual disk, the physical disk records under the disk
 * data's magic (as mdadm wrote them then): decoded, usable, no view. */
START_TEST(t_old_mdadm)
{
	char img[512];
	if (!rk_test_unpack_fixture("ddf-raid", img, sizeof img))
		return;
	rk_dev *d = NULL;
	ck_assert_int_eq(rk_dev_open(&d, img, RK_DEV_RDONLY), RK_OK);
	void *obj = NULL;
	ck_assert_int_eq(ddf()->decode(d, img, &obj), RK_OK);
	const struct rk_ddf *m = obj;
	ck_assert_str_eq(m->why, "");
	ck_assert_int_eq(m->active, 1);
	ck_assert_int_eq(m->secondary.usable, 0);
	ck_assert(m->crc_phys.ok && m->crc_virt.ok && m->crc_data.ok);
	ck_assert_uint_eq(m->npds, 2);   /* mdadm: 3b4e2d2e, 5a6582b5 Global-Spare/Online */
	ck_assert_uint_eq(m->pds[0].refnum, 0x3b4e2d2eu);
	ck_assert_uint_eq(m->pds[1].refnum, 0x5a6582b5u);
	ck_assert_uint_eq(m->pds[1].type & RK_DDF_PD_GLOBAL_SPARE, RK_DDF_PD_GLOBAL_SPARE);
	ck_assert_uint_eq(m->pds[0].config_size / 2, 18432);
	ck_assert_uint_eq(m->nvds, 0);
	ck_assert_int_eq(m->this_pd, 0);
	struct rk_sb *v = NULL;
	uint32_t n = 9;
	ck_assert_int_eq(ddf()->views(obj, rk_dev_size(d), &v, &n), RK_OK);
	ck_assert_uint_eq(n, 0);
	free(v);
	print_both(obj);
	ddf()->release(obj);
	rk_dev_close(d);
}
END_TEST

/* ---- containers built here ---- */

/* A small container at the end of a memory member: the anchor in the last
 * sector, the primary header 14 sectors before it, the secondary 13 before
 * that, each followed by its sections (offsets from the header):
 * controller 1, physical disks 2 (2 sectors), virtual disks 4 (2),
 * configuration 6 (3 records of 2 sectors), disk data 12. */
#define B_PD_MAX 15u
#define B_VD_MAX 15u
#define B_MPPE   16u
#define B_CRL    2u
#define B_NREC   3u
#define B_COPY   13u

struct bpd { uint32_t refnum; uint16_t type, state; };
struct bconf {
	int vd;
	uint8_t prl, rlq, srl, sec_cnt, sec_seq, chunk_shift;
	uint16_t pec;
	uint64_t blocks, array_blocks;
	uint32_t nrefs, refs[8];
	uint64_t lba[8];
};
struct bspec {
	uint64_t size;              /* bytes of the member */
	uint32_t npd;
	struct bpd pd[8];
	uint32_t nvd;
	uint8_t vd_state[4], vd_init[4];
	uint32_t nconf;
	struct bconf conf[B_NREC];
	uint32_t me;                /* this disk: an index into pd[] */
	uint32_t seq;
	int no_secondary;
	uint16_t mppe;              /* 0: B_MPPE */
};

static void pd_guid(uint8_t *g, uint32_t i)
{
	memset(g, ' ', RK_DDF_GUID_LEN);
	memcpy(g, "Linux-MD", 8);
	snprintf((char *)g + 8, 16, "PD-%08x", 0x1000u + i);
	g[19] = ' ';
}

static void vd_guid(uint8_t *g, uint32_t i)
{
	memcpy(g, "Linux-MD", 8);
	rk_put_le32(g + 8, 0xefbeaddeu);
	memset(g + 12, 0, 4);
	memcpy(g + 16, "\x58\x3f\xdd\x1f", 4);
	rk_put_le32(g + 20, 0x1234u + i);
}

/* DDF's CRC of LEN bytes at B, stored at B + 4 (the decoder's rule). */
static void put_crc(uint8_t *b, size_t len)
{
	memset(b + 4, 0xff, 4);
	uint32_t c = (uint32_t)crc32(0xffffffffUL, b, (uInt)len) ^ 0xffffffffu;
	b[4] = (uint8_t)(c >> 24);
	b[5] = (uint8_t)(c >> 16);
	b[6] = (uint8_t)(c >> 8);
	b[7] = (uint8_t)c;
}

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put_be32(uint8_t *p, uint32_t v)
{
	put_be16(p, (uint16_t)(v >> 16));
	put_be16(p + 2, (uint16_t)v);
}

static void put_be64(uint8_t *p, uint64_t v)
{
	put_be32(p, (uint32_t)(v >> 32));
	put_be32(p + 4, (uint32_t)v);
}

/* A header of TYPE (0 anchor, 1, 2) at B. */
static void b_header(uint8_t *b, const struct bspec *s, uint8_t type, uint64_t plba, uint64_t slba)
{
	memset(b, 0xff, 512);
	put_be32(b, RK_DDF_HEADER_MAGIC);
	memcpy(b + 8, "Linux-MD\xde\xad\xbe\xef\0\0\0\0\x58\x3f\xdd\x1f\xa6\xbc\x0b\xc7", 24);
	memcpy(b + 32, "01.02.00", 8);
	put_be32(b + 40, type ? s->seq : 0xffffffffu);
	put_be32(b + 44, 0x583fdd1f);
	b[48] = 0;
	b[49] = 0;
	b[50] = 0;
	put_be64(b + 96, plba);
	put_be64(b + 104, slba);
	b[112] = type;
	put_be32(b + 116, 0);
	put_be64(b + 120, UINT64_MAX);
	put_be16(b + 128, B_PD_MAX);
	put_be16(b + 130, B_VD_MAX);
	put_be16(b + 132, B_NREC);
	put_be16(b + 134, B_CRL);
	put_be16(b + 136, s->mppe ? s->mppe : B_MPPE);
	static const uint32_t sect[RK_DDF_NSECT][2] = {
		{ 1, 1 }, { 2, 2 }, { 4, 2 }, { 6, B_CRL * B_NREC }, { 12, 1 },
		{ 0xffffffffu, 0 }, { 0xffffffffu, 0 }, { 0xffffffffu, 0 },
	};
	for (unsigned i = 0; i < RK_DDF_NSECT; i++) {
		put_be32(b + 192 + 8 * i, sect[i][0]);
		put_be32(b + 196 + 8 * i, sect[i][1]);
	}
	put_crc(b, 512);
}

static void b_phys(uint8_t *b, const struct bspec *s)
{
	memset(b, 0xff, 1024);
	put_be32(b, RK_DDF_PHYS_MAGIC);
	put_be16(b + 8, (uint16_t)s->npd);
	put_be16(b + 10, B_PD_MAX);
	for (uint32_t i = 0; i < s->npd; i++) {
		uint8_t *e = b + 64 + 64 * i;
		pd_guid(e, i);
		put_be32(e + 24, s->pd[i].refnum);
		put_be16(e + 28, s->pd[i].type);
		put_be16(e + 30, s->pd[i].state);
		put_be64(e + 32, s->size / 512 - 64);
	}
	put_crc(b, 1024);
}

static void b_virt(uint8_t *b, const struct bspec *s)
{
	memset(b, 0xff, 1024);
	put_be32(b, RK_DDF_VIRT_MAGIC);
	put_be16(b + 8, (uint16_t)s->nvd);
	put_be16(b + 10, B_VD_MAX);
	for (uint32_t i = 0; i < s->nvd; i++) {
		uint8_t *e = b + 64 + 64 * i;
		vd_guid(e, i);
		put_be16(e + 24, (uint16_t)(126 - i));
		e[32] = s->vd_state[i];
		e[33] = s->vd_init[i] ? s->vd_init[i] : 2;
		memset(e + 48, 0, 16);
		snprintf((char *)e + 48, 16, "vd%u", i);
	}
	put_crc(b, 1024);
}

static void b_config(uint8_t *b, const struct bspec *s)
{
	memset(b, 0xff, B_CRL * B_NREC * 512);
	uint32_t mppe = s->mppe ? s->mppe : B_MPPE;
	for (uint32_t r = 0; r < s->nconf; r++) {
		const struct bconf *c = &s->conf[r];
		uint8_t *e = b + r * B_CRL * 512;
		put_be32(e, RK_DDF_CONF_MAGIC);
		vd_guid(e + 8, (uint32_t)c->vd);
		put_be32(e + 32, 0x583fdd20);
		put_be32(e + 36, 3);
		put_be16(e + 64, c->pec);
		e[66] = c->chunk_shift;
		e[67] = c->prl;
		e[68] = c->rlq;
		e[69] = c->sec_cnt ? c->sec_cnt : 1;
		e[70] = c->sec_seq;
		e[71] = c->srl;
		put_be64(e + 72, c->blocks);
		put_be64(e + 80, c->array_blocks);
		for (uint32_t k = 0; k < c->nrefs && k < mppe && 512 + mppe * 12 <= B_CRL * 512; k++) {
			put_be32(e + 512 + 4 * k, c->refs[k]);
			put_be64(e + 512 + 4 * mppe + 8 * k, c->lba[k]);
		}
		put_crc(e, B_CRL * 512);
	}
}

/* One copy (header of TYPE and its sections) at sector LBA of MEM. */
static void b_copy(uint8_t *mem, const struct bspec *s, uint8_t type, uint64_t lba, uint64_t plba, uint64_t slba)
{
	uint8_t *b = mem + lba * 512;
	b_header(b, s, type, plba, slba);
	uint8_t *c = b + 512;
	memset(c, 0xff, 512);
	put_be32(c, RK_DDF_CTRL_MAGIC);
	memcpy(c + 8, "Linux-MD          (none)", 24);
	memcpy(c + 40, "What Is My PID??", 16);
	put_crc(c, 512);
	b_phys(b + 2 * 512, s);
	b_virt(b + 4 * 512, s);
	b_config(b + 6 * 512, s);
	uint8_t *d = b + 12 * 512;
	memset(d, 0xff, 512);
	put_be32(d, RK_DDF_DATA_MAGIC);
	pd_guid(d + 8, s->me);
	put_be32(d + 32, s->pd[s->me].refnum);
	put_crc(d, 512);
}

/* A memory member carrying S. */
static rk_dev *b_build(const struct bspec *s)
{
	rk_dev *d = NULL;
	ck_assert_int_eq(rk_dev_mem(&d, "built", s->size), RK_OK);
	uint8_t *mem = rk_dev_mem_data(d);
	uint64_t n = s->size / 512, plba = n - 1 - B_COPY, slba = s->no_secondary ? UINT64_MAX : plba - B_COPY;
	b_copy(mem, s, 1, plba, plba, slba);
	if (!s->no_secondary)
		b_copy(mem, s, 2, slba, plba, slba);
	b_header(mem + (n - 1) * 512, s, 0, plba, slba);
	return d;
}

/* Two VDs over four disks (a RAID-5 at 0 and a RAID-1 after it) and a
 * global spare: this disk (pd 1) serves both. */
static void spec_two_vds(struct bspec *s)
{
	memset(s, 0, sizeof *s);
	s->size = 4u * RK_TEST_MIB;
	s->npd = 5;
	for (uint32_t i = 0; i < 4; i++)
		s->pd[i] = (struct bpd){ 0xa0000000u + i, RK_DDF_PD_ACTIVE_IN_VD, RK_DDF_PD_ONLINE };
	s->pd[4] = (struct bpd){ 0xa0000004u, RK_DDF_PD_GLOBAL_SPARE, RK_DDF_PD_ONLINE };
	s->nvd = 2;
	s->nconf = 2;
	s->conf[0] = (struct bconf){ .vd = 0, .prl = 0x05, .rlq = 3, .srl = 0xff, .chunk_shift = 7, .pec = 4,
	                             .blocks = 2048, .array_blocks = 6144, .nrefs = 4,
	                             .refs = { 0xa0000000u, 0xa0000002u, 0xa0000001u, 0xa0000003u } };
	s->conf[1] = (struct bconf){ .vd = 1, .prl = 0x01, .rlq = 0, .srl = 0xff, .chunk_shift = 7, .pec = 2,
	                             .blocks = 1024, .array_blocks = 1024, .nrefs = 2,
	                             .refs = { 0xa0000001u, 0xa0000003u }, .lba = { 2048, 2048 } };
	s->me = 1;
	s->seq = 7;
}

/* Decodes D; views into *V (count returned); the error of views in *E. */
static uint32_t decode_views(rk_dev *d, struct rk_ddf **m, struct rk_sb **v, rk_err *e)
{
	void *obj = NULL;
	ck_assert_int_eq(ddf()->decode(d, "built", &obj), RK_OK);
	*m = obj;
	uint32_t n = 0;
	*v = NULL;
	*e = ddf()->views(obj, rk_dev_size(d), v, &n);
	print_both(obj);
	return n;
}

START_TEST(t_two_vds)
{
	struct bspec s;
	spec_two_vds(&s);
	rk_dev *d = b_build(&s);
	struct rk_ddf *m;
	struct rk_sb *v;
	rk_err e;
	ck_assert_uint_eq(decode_views(d, &m, &v, &e), 2);
	ck_assert_int_eq(e, RK_OK);
	ck_assert_uint_eq(m->npds, 5);
	ck_assert_uint_eq(m->nvds, 2);
	ck_assert_int_eq(m->this_pd, 1);
	/* RAID-5 N-continue = left-symmetric; this disk is listed third */
	ck_assert_int_eq(v[0].level, 5);
	ck_assert_uint_eq(v[0].layout, 2);
	ck_assert_uint_eq(v[0].chunk, 65536);
	ck_assert_uint_eq(v[0].this_role, 2);
	ck_assert_uint_eq(v[0].nroles, 4);
	ck_assert_uint_eq(v[0].nentries, 5);   /* the global spare past the roles */
	ck_assert_uint_eq(v[0].roles[4].state, RK_ROLE_SPARE);
	ck_assert_uint_eq(v[0].data_offset, 0);
	ck_assert_uint_eq(v[0].data_size, 1024 * 1024);
	ck_assert_uint_eq(v[0].volume_size, 3 * 1024 * 1024);
	ck_assert_uint_eq(v[0].events, 7);
	ck_assert_str_eq(v[0].name, "vd0");
	/* RAID-1 after it: first in its list */
	ck_assert_int_eq(v[1].level, 1);
	ck_assert_uint_eq(v[1].chunk, 0);
	ck_assert_uint_eq(v[1].this_role, 0);
	ck_assert_uint_eq(v[1].data_offset, 1024 * 1024);
	ck_assert_uint_eq(v[1].volume_size, 512 * 1024);
	ck_assert_mem_eq(v[0].member_uuid, v[1].member_uuid, 16);
	ck_assert(memcmp(v[0].array_uuid, v[1].array_uuid, 16) != 0);
	ck_assert_mem_eq(v[1].roles[0].member_uuid, v[0].roles[2].member_uuid, 16);
	free(v);
	ddf()->release(m);
	rk_dev_close(d);
}
END_TEST

/* Disk states become role states; an inconsistent VD is not clean. */
START_TEST(t_states)
{
	struct bspec s;
	spec_two_vds(&s);
	s.pd[0].state = RK_DDF_PD_FAILED | RK_DDF_PD_ONLINE;
	s.pd[2].state = RK_DDF_PD_ONLINE | RK_DDF_PD_REBUILDING;
	s.pd[3].state = RK_DDF_PD_MISSING;
	s.conf[0].refs[3] = 0xbbbbbbbbu;   /* a disk the records do not list */
	s.vd_state[0] = 0x11;              /* degraded, not consistent */
	rk_dev *d = b_build(&s);
	struct rk_ddf *m;
	struct rk_sb *v;
	rk_err e;
	ck_assert_uint_eq(decode_views(d, &m, &v, &e), 2);
	ck_assert_uint_eq(v[0].roles[0].state, RK_ROLE_FAULTY);
	ck_assert_uint_eq(v[0].roles[1].state, RK_ROLE_REBUILDING);
	ck_assert_uint_eq(v[0].roles[2].state, RK_ROLE_ACTIVE);
	ck_assert_uint_eq(v[0].roles[3].state, RK_ROLE_EMPTY);
	ck_assert_uint_eq(v[1].roles[1].state, RK_ROLE_FAULTY);   /* missing */
	ck_assert_uint_eq(v[0].array_state, RK_ARRAY_ACTIVE);
	ck_assert_uint_eq(v[1].array_state, RK_ARRAY_CLEAN);
	free(v);
	ddf()->release(m);
	rk_dev_close(d);
}
END_TEST

/* RAID-10 as mdadm writes it: RAID-1 legs (one record per leg), this disk
 * in the second leg; the other leg is active without identities. */
START_TEST(t_raid10_leg)
{
	struct bspec s;
	spec_two_vds(&s);
	s.nvd = 1;
	s.nconf = 1;
	s.conf[0] = (struct bconf){ .vd = 0, .prl = 0x01, .rlq = 0, .srl = 3, .sec_cnt = 2, .sec_seq = 1,
	                            .chunk_shift = 7, .pec = 2, .blocks = 2048, .array_blocks = 4096, .nrefs = 2,
	                            .refs = { 0xa0000003u, 0xa0000001u } };
	rk_dev *d = b_build(&s);
	struct rk_ddf *m;
	struct rk_sb *v;
	rk_err e;
	ck_assert_uint_eq(decode_views(d, &m, &v, &e), 1);
	ck_assert_int_eq(v[0].level, 10);
	ck_assert_uint_eq(v[0].layout, 0x102);
	ck_assert_uint_eq(v[0].nroles, 4);
	ck_assert_uint_eq(v[0].this_role, 3);
	ck_assert_uint_eq(v[0].volume_size, 2 * 1024 * 1024);
	uint8_t zero[16] = { 0 };
	ck_assert_mem_eq(v[0].roles[0].member_uuid, zero, 16);
	ck_assert_uint_eq(v[0].roles[0].state, RK_ROLE_ACTIVE);
	ck_assert_mem_eq(v[0].roles[3].member_uuid, v[0].member_uuid, 16);
	free(v);
	ddf()->release(m);
	rk_dev_close(d);
}
END_TEST

/* A VD of a level md has no equivalent for: the other VD keeps its view;
 * alone, it is refused with a sentence and nothing returned. */
START_TEST(t_unsupported)
{
	struct bspec s;
	spec_two_vds(&s);
	s.conf[0].prl = 0x03;   /* RAID-3 */
	rk_dev *d = b_build(&s);
	struct rk_ddf *m;
	struct rk_sb *v;
	rk_err e;
	ck_assert_uint_eq(decode_views(d, &m, &v, &e), 1);
	ck_assert_int_eq(e, RK_OK);
	ck_assert_int_eq(v[0].level, 1);
	free(v);
	ddf()->release(m);
	rk_dev_close(d);
	s.conf[1].prl = 0x15;   /* RAID-5E */
	d = b_build(&s);
	ck_assert_uint_eq(decode_views(d, &m, &v, &e), 0);
	ck_assert_ptr_null(v);
	ck_assert_int_eq(e, RK_E_NOTSUP);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "has no md equivalent"));
	ddf()->release(m);
	rk_dev_close(d);
}
END_TEST

/* ---- hostile members ---- */

/* Views of D refused with E and a sentence holding WORDS. */
static void refused(rk_dev *d, rk_err want, const char *words)
{
	struct rk_ddf *m;
	struct rk_sb *v;
	rk_err e;
	ck_assert_uint_eq(decode_views(d, &m, &v, &e), 0);
	ck_assert_ptr_null(v);
	RK_REQUIRE_MSG(e == want, "views: %d (%s), expected %d", e, rk_errmsg(), want);
	RK_REQUIRE_MSG(strstr(rk_errmsg(), words), "\"%s\" lacks \"%s\"", rk_errmsg(), words);
	ck_assert_str_eq(m->why[0] ? m->why : rk_errmsg(), rk_errmsg());
	ddf()->release(m);
}

/* The byte at sector SECT (from the primary header), offset OFF, flipped. */
static void flip(rk_dev *d, uint64_t sect, size_t off)
{
	uint64_t plba = rk_dev_size(d) / 512 - 1 - B_COPY;
	rk_dev_mem_data(d)[(plba + sect) * 512 + off] ^= 0x40;
}

/* A flipped byte in each record: the checksum failure is reported (the
 * stored and computed values kept) and the views are refused; a flipped
 * primary header leaves the secondary in use. */
START_TEST(t_flipped)
{
	struct bspec s;
	spec_two_vds(&s);
	static const struct { uint64_t sect; size_t off; const char *words; } cases[] = {
		{ 2, 64 + 30, "physical disk records: checksum" },
		{ 4, 64 + 50, "virtual disk records: checksum" },
		{ 6, 100, "configuration record 0: checksum" },
		{ 8, 600, "configuration record 1: checksum" },
		{ 12, 40, "physical disk data: checksum" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		rk_dev *d = b_build(&s);
		flip(d, cases[i].sect, cases[i].off);
		refused(d, RK_E_BADCRC, cases[i].words);
		rk_dev_close(d);
	}
	/* the anchor */
	rk_dev *d = b_build(&s);
	rk_dev_mem_data(d)[s.size - 512 + 200] ^= 1;
	refused(d, RK_E_BADCRC, "DDF anchor: checksum");
	rk_dev_close(d);
	/* the primary header: the secondary serves */
	d = b_build(&s);
	flip(d, 0, 300);
	struct rk_ddf *m;
	struct rk_sb *v;
	rk_err e;
	ck_assert_uint_eq(decode_views(d, &m, &v, &e), 2);
	ck_assert_int_eq(m->active, 2);
	ck_assert_int_eq(m->primary.crc_ok, 0);
	ck_assert_ptr_nonnull(strstr(m->active_why, "the primary is unusable"));
	free(v);
	ddf()->release(m);
	rk_dev_close(d);
	/* without a secondary: refused */
	s.no_secondary = 1;
	d = b_build(&s);
	flip(d, 0, 300);
	refused(d, RK_E_CORRUPT, "no usable header");
	rk_dev_close(d);
}
END_TEST

/* A field of the primary copy rewritten and its checksum made right, so
 * that the bounds checks (not the checksum) must refuse it. */
static void patch_be(rk_dev *d, uint64_t sect, size_t off, int width, uint64_t val, size_t crc_len)
{
	uint64_t plba = rk_dev_size(d) / 512 - 1 - B_COPY;
	uint8_t *b = rk_dev_mem_data(d) + (plba + sect) * 512;
	if (width == 2)
		put_be16(b + off, (uint16_t)val);
	else if (width == 4)
		put_be32(b + off, (uint32_t)val);
	else
		put_be64(b + off, val);
	put_crc(b, crc_len);
}

/* Counts, offsets and sizes too large: each refused with a sentence. */
START_TEST(t_counts)
{
	struct bspec s;
	spec_two_vds(&s);
	s.no_secondary = 1;   /* the primary is the only header */
	static const struct { uint64_t sect; size_t off; int w; uint64_t val; size_t crc; const char *words; } cases[] = {
		{ 2, 10, 2, 60000, 1024, "60000 physical disk entries do not fit" },
		{ 4, 10, 2, 40000, 1024, "40000 virtual disk entries do not fit" },
		{ 6, 64, 2, 5000, 1024, "5000 members, the header allows 1 to 16" },
		{ 6, 72, 8, UINT64_MAX / 256, 1024, "overflows" },
		{ 6, 72, 8, 1u << 20, 1024, "ends past the member" },
		{ 6, 66, 1, 0, 1024, "" },
		{ 0, 196 + 8, 4, 0x7fffffff, 512, "does not fit the member" },
		{ 0, 192 + 24, 4, 0xfffffff0u, 512, "does not fit the member" },
		{ 0, 136, 2, 9000, 512, "cannot hold 9000 members" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		rk_dev *d = b_build(&s);
		if (cases[i].w == 1) {
			/* chunk of 2^40 sectors */
			uint64_t plba = rk_dev_size(d) / 512 - 1 - B_COPY;
			uint8_t *b = rk_dev_mem_data(d) + (plba + 6) * 512;
			b[66] = 40;
			put_crc(b, 1024);
			refused(d, RK_E_CORRUPT, "chunk of 2^40 sectors");
		} else {
			patch_be(d, cases[i].sect, cases[i].off, cases[i].w, cases[i].val, cases[i].crc);
			if (cases[i].sect == 0) {
				/* the anchor must agree with the header */
				uint8_t *a = rk_dev_mem_data(d) + s.size - 512;
				memcpy(a + 113, rk_dev_mem_data(d) + (s.size / 512 - 1 - B_COPY) * 512 + 113, 512 - 113);
				put_crc(a, 512);
			}
			refused(d, RK_E_CORRUPT, cases[i].words);
		}
		rk_dev_close(d);
	}
}
END_TEST

/* Truncated members: without the last sector there is no DDF; a member cut
 * below its headers has no usable header. */
START_TEST(t_truncated)
{
	struct bspec s;
	spec_two_vds(&s);
	rk_dev *d = b_build(&s);
	rk_dev *t = NULL;
	ck_assert_int_eq(rk_dev_mem(&t, "cut", s.size - 4096), RK_OK);
	memcpy(rk_dev_mem_data(t), rk_dev_mem_data(d), s.size - 4096);
	void *obj = NULL;
	ck_assert_int_eq(ddf()->decode(t, "cut", &obj), RK_E_NOSB);
	rk_dev_close(t);
	/* the tail kept on a smaller member: the headers' LBAs are past it */
	ck_assert_int_eq(rk_dev_mem(&t, "short", 64 * 512), RK_OK);
	memcpy(rk_dev_mem_data(t), rk_dev_mem_data(d) + s.size - 64 * 512, 64 * 512);
	refused(t, RK_E_CORRUPT, "past the member");
	rk_dev_close(t);
	/* too small for an anchor */
	ck_assert_int_eq(rk_dev_mem(&t, "tiny", 600), RK_OK);
	ck_assert_int_eq(ddf()->decode(t, "tiny", &obj), RK_E_NOSB);
	rk_dev_close(t);
	rk_dev_close(d);
}
END_TEST

/* Random damage to a built container: decode, views, printing never
 * crash, and any view returned passes rk_view_check. */
START_TEST(t_random)
{
	struct bspec s;
	spec_two_vds(&s);
	rk_test_rnd_seed(42);
	for (int it = 0; it < 300; it++) {
		rk_dev *d = b_build(&s);
		uint8_t *mem = rk_dev_mem_data(d);
		uint64_t from = s.size - 27 * 512;
		for (int k = 0; k < 1 + it % 8; k++)
			mem[from + rk_test_rnd_below(27 * 512)] = (uint8_t)rk_test_rnd();
		void *obj = NULL;
		if (ddf()->decode(d, "rnd", &obj) == RK_OK) {
			struct rk_sb *v = NULL;
			uint32_t n = 0;
			if (ddf()->views(obj, s.size, &v, &n) == RK_OK)
				for (uint32_t i = 0; i < n; i++)
					ck_assert_int_eq(rk_view_check(&v[i], s.size), RK_OK);
			free(v);
			print_both(obj);
			ddf()->release(obj);
		}
		rk_dev_close(d);
	}
}
END_TEST

/* With RK_DDF_WRITE_SEEDS=DIR, writes the fuzz seeds (the last 27 sectors
 * of built containers: what fuzz_ddf.c puts at the end of its member). */
START_TEST(t_seeds)
{
	const char *dir = getenv("RK_DDF_WRITE_SEEDS");
	if (!dir || !*dir)
		return;
	struct bspec s;
	for (int k = 0; k < 3; k++) {
		spec_two_vds(&s);
		s.size = 1024 * 1024 + 27 * 512;
		s.conf[0].blocks = s.conf[1].blocks = 512;
		s.conf[0].array_blocks = 1536;
		s.conf[1].array_blocks = 512;
		s.conf[1].lba[0] = s.conf[1].lba[1] = 512;
		if (k == 1) {
			s.nvd = 1;
			s.nconf = 1;
			s.conf[0] = (struct bconf){ .vd = 0, .prl = 0x01, .rlq = 0, .srl = 3, .sec_cnt = 2, .sec_seq = 1,
			                            .chunk_shift = 7, .pec = 2, .blocks = 512, .array_blocks = 1024,
			                            .nrefs = 2, .refs = { 0xa0000003u, 0xa0000001u } };
		}
		if (k == 2) {
			s.conf[0].prl = 0x06;
			s.conf[0].rlq = 1;
			s.pd[3].state = RK_DDF_PD_FAILED;
		}
		rk_dev *d = b_build(&s);
		char p[700];
		snprintf(p, sizeof p, "%s/built-%d", dir, k);
		rk_test_spit(p, rk_dev_mem_data(d) + s.size - 27 * 512, 27 * 512);
		rk_dev_close(d);
	}
}
END_TEST

RK_TEST_SUITE("fmt_ddf", { "fmt_ddf", 240, rk_test_tmpdir_make, rk_test_tmpdir_remove, 0,
	  RK_TESTS(RK_TEST_LOOP(t_fixture, 0, NFIXTURES), RK_TEST(t_old_mdadm), RK_TEST(t_two_vds), RK_TEST(t_states),
	           RK_TEST(t_raid10_leg), RK_TEST(t_unsupported), RK_TEST(t_flipped), RK_TEST(t_counts), RK_TEST(t_truncated),
	           RK_TEST(t_random), RK_TEST(t_seeds)) })
