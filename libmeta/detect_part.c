/* detect_part.c: which partition each file system lives in.  Anchors of a
 * file system are relative to its own start; on a volume holding a
 * partition table (a whole disk striped by a firmware RAID, the forensics
 * "multiple" sample) each file system starts at its own partition.  The
 * scan learns the table (MBR or GPT) and, per file-system kind, its size,
 * the partition start it records (NTFS and FAT hidden sectors, exFAT
 * PartitionOffset) and where its start was seen; dt_part_assign matches
 * them.  Only one file system of each kind is told apart. */
#include <stdio.h>
#include <string.h>

#include "detect_int.h"
#include "rk_le.h"
#include "rk_part.h"

/* Partition type classes: what a type byte or GUID says may live there. */
enum { CL_ANY = 0, CL_LINUX = 1, CL_WIN = 2 };

static uint8_t mbr_class(uint8_t type)
{
	switch (type) {
	case 0x83: return CL_LINUX;
	case 0x01: case 0x04: case 0x06: case 0x07: case 0x0B: case 0x0C: case 0x0E: case 0xEF: return CL_WIN;
	default: return CL_ANY;
	}
}

static const uint8_t guid_linux[16] = { 0xAF, 0x3D, 0xC6, 0x0F, 0x83, 0x84, 0x72, 0x47,
                                        0x8E, 0x79, 0x3D, 0x69, 0xD8, 0x47, 0x7D, 0xE4 };
static const uint8_t guid_basic[16] = { 0xA2, 0xA0, 0xD0, 0xEB, 0xE5, 0xB9, 0x33, 0x44,
                                        0x87, 0xC0, 0x68, 0xB6, 0xB7, 0x26, 0x99, 0xC7 };
static const uint8_t guid_esp[16] = { 0x28, 0x73, 0x2A, 0xC1, 0x1F, 0xF8, 0xD2, 0x11,
                                      0xBA, 0x4B, 0x00, 0xA0, 0xC9, 0x3E, 0xC9, 0x3B };

static uint8_t gpt_class(const uint8_t *guid)
{
	if (!memcmp(guid, guid_linux, 16))
		return CL_LINUX;
	if (!memcmp(guid, guid_basic, 16) || !memcmp(guid, guid_esp, 16))
		return CL_WIN;
	return CL_ANY;
}

static void part_add(struct dt_fs *fs, uint64_t start, uint64_t size, uint8_t cls)
{
	if (fs->nparts < DT_PARTS && start && size)
		fs->part[fs->nparts++] = (struct dt_part){ start, size, cls };
}

/* See detect_int.h. */
void dt_part_mbr(struct dt_fs *fs, const uint8_t *p)
{
	if (fs->nparts)
		return;
	fs->part_img = fs->at_img;
	fs->part_at = fs->at_off;
	for (int k = 0; k < 4; k++) {
		const uint8_t *e = p + 446 + 16 * k;
		if (e[4])
			part_add(fs, (uint64_t)rk_get_le32(e + 8) * 512, (uint64_t)rk_get_le32(e + 12) * 512, mbr_class(e[4]));
	}
}

/* See detect_int.h. */
void dt_part_gpt(struct dt_fs *fs, const uint8_t *hdr, size_t left)
{
	uint64_t lba = rk_get_le64(hdr + 24), ents = rk_get_le64(hdr + 72);
	uint32_t n = rk_get_le32(hdr + 80), esz = rk_get_le32(hdr + 84);
	if (lba != 1 || ents <= lba || ents - lba > 64 || esz < 128 || esz > 4096 || (esz & 7))
		return;
	fs->nparts = 0;   /* a GPT's protective MBR says nothing */
	fs->part_img = fs->at_img;
	fs->part_at = fs->at_off >= 512 ? fs->at_off - 512 : 0;
	uint64_t at = (ents - lba) * 512;
	for (uint32_t k = 0; k < n && fs->nparts < DT_PARTS && at + esz <= left; k++, at += esz) {
		const uint8_t *e = hdr + at;
		uint64_t first = rk_get_le64(e + 32), last = rk_get_le64(e + 40);
		if (first && last >= first && last < (1ull << 48))
			part_add(fs, first * 512, (last - first + 1) * 512, gpt_class(e));
	}
}

/* File-system kind of an anchor kind (-1: the partition table's own). */
static int fs_kind(uint8_t kind)
{
	switch (kind) {
	case DT_EXT_SB: case DT_EXT_INO: case DT_EXT_DIR: case DT_EXT_TAIL: case DT_EXT_RMAP: return DT_FSK_EXT;
	case DT_NTFS_BOOT: case DT_NTFS_MFT: case DT_NTFS_TAIL: return DT_FSK_NTFS;
	case DT_FAT_BOOT: case DT_FAT_DIR: case DT_FAT_TAB: case DT_FAT_TAIL: return DT_FSK_FAT;
	case DT_EXFAT_BOOT: case DT_EXFAT_TAIL: return DT_FSK_EXFAT;
	case DT_XFS_AGF: case DT_XFS_AGI: case DT_XFS_INO: case DT_XFS_BLK: case DT_XFS_TAIL: return DT_FSK_XFS;
	case DT_BTRFS_SB: case DT_BTRFS_NODE: case DT_BTRFS_TAIL: return DT_FSK_BTRFS;
	default: return -1;
	}
}

/* An anchor at its file system's start (the best witness of where it is). */
static int at_start(const struct dt_anchor *a)
{
	switch (a->kind) {
	case DT_EXT_SB: case DT_XFS_AGF: case DT_XFS_AGI: return a->raw == 0;
	case DT_BTRFS_SB: return a->raw == 65536;
	case DT_NTFS_BOOT: case DT_FAT_BOOT: case DT_EXFAT_BOOT: return 1;
	default: return 0;
	}
}

/* Per kind: bytes it spans (0 unknown), the partition start it records (0
 * none) and its class. */
static void fs_facts(const struct dt_fs *fs, int k, uint64_t *size, uint64_t *rec, uint8_t *cls)
{
	*size = *rec = 0;
	*cls = k == DT_FSK_EXT || k == DT_FSK_XFS || k == DT_FSK_BTRFS ? CL_LINUX : CL_WIN;
	switch (k) {
	case DT_FSK_EXT: if (fs->ext) *size = fs->ext_blocks * fs->ext_bs; break;
	case DT_FSK_NTFS:
		if (fs->ntfs) {
			*size = (fs->ntfs_sectors + 1) * fs->ntfs_bps;   /* the backup boot sector is outside */
			*rec = fs->ntfs_hidden * fs->ntfs_bps;
		}
		break;
	case DT_FSK_FAT: if (fs->fat) { *size = fs->fat_total * fs->fat_bps; *rec = fs->fat_hidden * fs->fat_bps; } break;
	case DT_FSK_EXFAT: if (fs->exfat) { *size = fs->exfat_len * fs->exfat_bps; *rec = fs->exfat_poff * fs->exfat_bps; } break;
	case DT_FSK_XFS: if (fs->xfs) *size = fs->xfs_dblocks * fs->xfs_bs; break;
	case DT_FSK_BTRFS: *size = fs->btrfs_total; break;
	}
}

static int fits(const struct dt_part *p, uint64_t size)
{
	return size && p->size >= size && p->size - size < (1u << 20);
}

/* The one unused partition of class CLS (or any) for which OK holds, -1 when
 * none or several. */
static int only_part(const struct dt_fs *fs, const uint8_t *used, uint8_t cls, uint64_t size, uint64_t rec)
{
	int hit = -1, n = 0;
	for (uint32_t j = 0; j < fs->nparts; j++) {
		const struct dt_part *p = &fs->part[j];
		if (used[j] || (rec ? p->start != rec : !fits(p, size)))
			continue;
		if (p->cls != CL_ANY && p->cls != cls)
			continue;
		hit = (int)j;
		n++;
	}
	return n == 1 ? hit : -1;
}

static int table_owner(struct dt_ctx *c, int k);

/* See detect_int.h. */
void dt_part_assign(struct dt_ctx *c)
{
	struct dt_fs *fs = &c->fs;
	uint64_t pos[DT_FSK_N], any[DT_FSK_N];
	int seen[DT_FSK_N] = { 0 }, part_of[DT_FSK_N];
	uint8_t used[DT_PARTS] = { 0 };
	for (int k = 0; k < DT_FSK_N; k++) {
		pos[k] = any[k] = DT_NONE;
		part_of[k] = -1;
	}
	if (fs->base_fixed)
		return;
	for (int k = 0; k < DT_FSK_N; k++)
		fs->base[k] = 0;
	if (!fs->nparts)
		return;
	for (uint32_t n = 0; n < c->nanc; n++) {
		const struct dt_anchor *a = &c->anc[n];
		int k = fs_kind(a->kind);
		if (k < 0 || dt_lastblock_kind(a->kind))
			continue;   /* files' last blocks are looked for once the file system is placed */
		seen[k] = 1;
		if (a->ioff < any[k])
			any[k] = a->ioff;
		if (at_start(a) && a->ioff < pos[k])
			pos[k] = a->ioff;
	}
	/* a table whose own partitions hold another file system of a kind is
	 * another disk's, for that kind: base 0 */
	for (int k = 0; k < DT_FSK_N; k++)
		if (seen[k] && table_owner(c, k) == -2)
			part_of[k] = -2;
	/* then what a file system records, then a size only one partition fits */
	for (int pass = 0; pass < 2; pass++)
		for (int k = 0; k < DT_FSK_N; k++) {
			uint64_t size, rec;
			uint8_t cls;
			fs_facts(fs, k, &size, &rec, &cls);
			if (!seen[k] || part_of[k] != -1 || (pass == 0 && !rec))
				continue;
			int j = only_part(fs, used, cls, size, pass == 0 ? rec : 0);
			if (j >= 0) {
				part_of[k] = j;
				used[j] = 1;
			}
		}
	/* the rest in the order they were seen on the members: a member's bytes
	 * keep the volume's order */
	for (;;) {
		int best = -1;
		for (int k = 0; k < DT_FSK_N; k++) {
			uint64_t w = pos[k] != DT_NONE ? pos[k] : any[k];
			uint64_t wb = best < 0 ? DT_NONE : (pos[best] != DT_NONE ? pos[best] : any[best]);
			if (seen[k] && part_of[k] == -1 && (best < 0 || w < wb))
				best = k;
		}
		if (best < 0)
			break;
		uint64_t size, rec;
		uint8_t cls;
		fs_facts(fs, best, &size, &rec, &cls);
		part_of[best] = 0;   /* none free: the first partition, as a table with one has */
		for (uint32_t j = 0; j < fs->nparts; j++)
			if (!used[j] && (fs->part[j].cls == CL_ANY || fs->part[j].cls == cls)) {
				part_of[best] = (int)j;
				used[j] = 1;
				break;
			}
	}
	for (int k = 0; k < DT_FSK_N; k++)
		if (part_of[k] >= 0)
			fs->base[k] = fs->part[part_of[k]].start;   /* -2, another disk's table: 0 */
#ifdef DT_DEBUG
	for (int k = 0; k < DT_FSK_N; k++)
		if (seen[k])
			fprintf(stderr, "PART kind %d pos %lld any %lld -> part %d base %llu\n", k, (long long)pos[k], (long long)any[k],
			        part_of[k], (unsigned long long)fs->base[k]);
#endif
}

/* See detect_int.h. */
void dt_part_rebase(const struct dt_fs *fs, struct dt_anchor *a)
{
	int k = fs_kind(a->kind);
	if (k < 0 || !fs->base[k])
		return;
	if (a->voff != DT_NONE)
		a->voff += fs->base[k];
	if (a->voff2 != DT_NONE)
		a->voff2 += fs->base[k];
}

/* Where kind K keeps its identity in P (see dt_part_learnt): offset and
 * length, 0 when K has none there. */
static uint32_t id_at(int k, const uint8_t *p, uint32_t *len)
{
	*len = 16;
	switch (k) {
	case DT_FSK_EXT: return 0x68;              /* s_uuid */
	case DT_FSK_NTFS: *len = 8; return 0x48;   /* volume serial number */
	case DT_FSK_EXFAT: *len = 4; return 0x64;  /* VolumeSerialNumber */
	case DT_FSK_FAT: *len = 4; return rk_get_le16(p + 0x16) ? 0x27 : 0x43;
	case DT_FSK_XFS: return 32;                /* sb_uuid */
	case DT_FSK_BTRFS: return 0x20;            /* fsid */
	default: *len = 0; return 0;
	}
}

/* See detect_int.h. */
void dt_part_learnt(struct dt_fs *fs, int k, const uint8_t *p)
{
	uint32_t len, at = id_at(k, p, &len);
	memcpy(fs->id[k], p + at, len);
	fs->idlen[k] = (uint8_t)len;
}

/* The kind of file system V (4 KiB at a partition start) and S (the 0x80
 * bytes at its 64 KiB) begin, and where its identity is: -1 none. */
static int kind_at(const uint8_t *v, const uint8_t *s, const uint8_t **sb)
{
	*sb = v;
	if (rk_get_le16(v + 1024 + 0x38) == 0xEF53) {
		*sb = v + 1024;
		return DT_FSK_EXT;
	}
	if (!memcmp(v + 3, "NTFS    ", 8))
		return DT_FSK_NTFS;
	if (!memcmp(v + 3, "EXFAT   ", 8))
		return DT_FSK_EXFAT;
	if (!memcmp(v, "XFSB", 4))
		return DT_FSK_XFS;
	if (v[510] == 0x55 && v[511] == 0xAA && (v[0] == 0xEB || v[0] == 0xE9) && v[0x10] && v[0x10] <= 2)
		return DT_FSK_FAT;
	if (s && !memcmp(s + 0x40, "_BHRfS_M", 8)) {
		*sb = s;
		return DT_FSK_BTRFS;
	}
	return -1;
}

/* What V (4 KiB at a file system's start) and S (its 0x80 bytes at 64
 * KiB, NULL unread) hold against the learnt identities: *K its kind (-1
 * none); 1 the learnt one of that kind, 0 another (or none learnt). */
static int ident_of(const struct dt_fs *fs, const uint8_t *v, const uint8_t *s, int *k)
{
	const uint8_t *sb;
	uint32_t len;
	*k = kind_at(v, s, &sb);
	if (*k < 0 || !fs->idlen[*k])
		return 0;
	uint32_t off = id_at(*k, sb, &len);
	return len == fs->idlen[*k] && !memcmp(sb + off, fs->id[*k], len);
}

/* See detect_int.h. */
int dt_part_confirm(struct dt_ctx *c, const struct dt_hyp *h)
{
	struct dt_fs *fs = &c->fs, t;
	uint8_t v[4096], s[0x80];
	if (!fs->nparts || fs->base_fixed || h->g.volume_size < sizeof v || dt_vread(c, h, 0, v, sizeof v))
		return -1;
	memset(&t, 0, sizeof t);
	if (!memcmp(v + 512, "EFI PART", 8) && rk_gpt_header_ok(v + 512))
		dt_part_gpt(&t, v + 512, sizeof v - 512);
	else if (dt_mbr_first(v))
		dt_part_mbr(&t, v);
	uint64_t base[DT_FSK_N];
	memcpy(base, fs->base, sizeof base);
	int known = 0;
	for (uint32_t j = 0; j < t.nparts; j++) {
		uint64_t at = t.part[j].start;
		if (at > h->g.volume_size - sizeof v || dt_vread(c, h, at, v, sizeof v))
			continue;
		int bt = at + 65536 + sizeof s <= h->g.volume_size && !dt_vread(c, h, at + 65536, s, sizeof s), k;
		if (ident_of(fs, v, bt ? s : NULL, &k)) {
			base[k] = at;
			known = 1;
		}
	}
	if (!known)
		return -1;
	fs->base_fixed = 1;
#ifdef DT_DEBUG
	fprintf(stderr, "CONFIRM lv %d lay %u ch %llu n %u:", h->g.level, h->g.layout, (unsigned long long)h->g.chunk, h->g.nroles);
	for (int k = 0; k < DT_FSK_N; k++)
		fprintf(stderr, " %llu->%llu", (unsigned long long)fs->base[k], (unsigned long long)base[k]);
	fprintf(stderr, "\n");
#endif
	if (!memcmp(base, fs->base, sizeof base))
		return 0;
	memcpy(fs->base, base, sizeof base);
	return 1;
}

/* What image I holds at byte AT as a file system of kind K: 1 the learnt
 * one (its identity), 0 another of that kind, -1 none. */
static int ident_at(struct dt_ctx *c, uint32_t i, uint64_t at, int k, int *kind)
{
	uint8_t v[4096], s[0x80];
	*kind = -1;
	if (dt_read(c, i, at, v, sizeof v))
		return -1;
	int bt = !dt_read(c, i, at + 65536, s, sizeof s), same = ident_of(&c->fs, v, bt ? s : NULL, kind);
	return *kind != k ? -1 : same;
}

/* Whether the partition table is another disk's, for kind K: -2 when a
 * partition's start on the table's own image holds another file system of
 * kind K than the learnt one, and none holds the learnt one (an unrelated
 * whole disk among the images: seed 2447, a sample disk's MBR put a
 * RAID-4's ext4 anchors 1 MiB off), or when every partition's start there
 * holds a file system of another kind (no room for K: seed 4892, the
 * forensics "multiple" disk's ext4 and NTFS partitions beside a RAID-10
 * of vfat, whose anchors its first partition put 1 MiB off); -1
 * otherwise.  The learnt one found
 * there says nothing: a striped array can put its start, or a backup of
 * its superblock, at a partition's start on the first member (3 MiB over
 * three members is 1 MiB on each). */
static int table_owner(struct dt_ctx *c, int k)
{
	const struct dt_fs *fs = &c->fs;
	if (!fs->idlen[k] || fs->part_img >= c->nimg)
		return -1;
	int other = 0;
	uint32_t others = 0;
	for (uint32_t j = 0; j < fs->nparts; j++) {
		uint64_t at = fs->part_at + fs->part[j].start;
		if (at < fs->part_at)
			continue;   /* overflow */
		int kind, r = ident_at(c, fs->part_img, at, k, &kind);
		if (r == 1)
			return -1;
		other |= r == 0;
		others += kind >= 0 && kind != k;
	}
	return other || (fs->nparts && others == fs->nparts) ? -2 : -1;
}
