/* detect_ext.c: ext4 inodes as anchors (spec/detect.md).
 *
 * With metadata_csum every inode carries crc32c(seed, inode number,
 * generation, inode): its checksum names its own number, and the group
 * descriptors say where each group's inode table lies, so an inode found
 * anywhere on the members is a volume byte.  An ext4 of one group (under
 * 128 MiB with 4 KiB blocks) has no superblock backup; its inodes are then
 * the anchors that pin members beyond the first.
 *
 * The number is not searched for: the checksum (without a final inversion)
 * is affine in the number, stored = A ^ G(number) ^ H(generation, inode),
 * with A from the seed alone, G linear and invertible (a 32-bit CRC of four
 * bytes, then zeros) and H the CRC of the rest from a zero state.  The scan
 * keeps stored ^ H (it needs no superblock); resolving applies A and the
 * inverse of G once the superblock and the group descriptors are known.
 *
 * A directory's first block starts with "." naming the directory's own
 * inode, then "..": found anywhere, it is the volume block that inode's
 * extent names.  An ext4 of one group keeps its used inodes at the start of
 * the volume, on the first member or two; its directories are spread over
 * the data, so they pin the members the inodes cannot (seed 1003: a RAID-0
 * of 3 whose second and third members start at 1 MiB and 0). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detect_int.h"
#include "rk_le.h"

#define EXT_CAP 384u     /* inode anchors per image (the stage-1 cost grows with anchors) */
#define ISIZE 256u       /* the inode size taken (mkfs.ext4's) */
#define ISIZE128 128u    /* and the small one (mke2fs.conf's "small" and "floppy"; the forensics ext4 sample) */
#define DIR_CAP 128u     /* directory anchors per image */

static uint32_t crc_raw(uint32_t crc, const uint8_t *p, size_t n) { return dt_crc32c_raw(crc, p, n); }

/* The same over N zero bytes. */
static uint32_t crc_zeros(uint32_t crc, size_t n)
{
	static const uint8_t z[64];
	for (; n >= sizeof z; n -= sizeof z)
		crc = crc_raw(crc, z, sizeof z);
	return crc_raw(crc, z, n);
}

/* Whether the 256 bytes at Q look like an in-use inode carrying both
 * checksum halves: a file, directory or symlink with links, extents (or
 * inline data), i_extra_isize that covers i_checksum_hi. */
static int inode_like(const uint8_t *q)
{
	uint32_t type = rk_get_le16(q) & 0xF000u, links = rk_get_le16(q + 0x1A), flags = rk_get_le32(q + 0x20);
	uint32_t extra = rk_get_le16(q + 0x80);
	if ((type != 0x4000 && type != 0x8000 && type != 0xA000) || !links || extra < 4 || extra > ISIZE - 128 || (extra & 3))
		return 0;
	if (flags & 0x10000000u)
		return 1;   /* inline data */
	return (flags & 0x80000u) && rk_get_le16(q + 0x28) == 0xF30A;
}

/* The same for a 128-byte inode (no i_extra_isize: the low checksum half
 * only); taken where the 256-byte reading fails, since its i_extra_isize
 * would be the next inode's mode.  Extents only (inline data needs room
 * for its attribute), their header that of an inode's root: at most 4
 * entries of 4, depth 5 at most -- random bytes passed the flag test
 * alone one time in eleven (seed 2432). */
static int inode_like128(const uint8_t *q)
{
	uint32_t type = rk_get_le16(q) & 0xF000u, links = rk_get_le16(q + 0x1A), flags = rk_get_le32(q + 0x20);
	const uint8_t *eh = q + 0x28;
	if ((type != 0x4000 && type != 0x8000 && type != 0xA000) || !links || !(flags & 0x80000u))
		return 0;
	return rk_get_le16(eh) == 0xF30A && rk_get_le16(eh + 4) == 4 && rk_get_le16(eh + 2) <= 4 && rk_get_le16(eh + 6) <= 5;
}

/* H(generation, inode) xor the stored low half, for a 128-byte inode,
 * with bit 32 set. */
static uint64_t inode_raw128(const uint8_t *q)
{
	uint8_t b[ISIZE128];
	memcpy(b, q, ISIZE128);
	uint32_t stored = rk_get_le16(b + 0x7C);
	memset(b + 0x7C, 0, 2);
	uint32_t h = crc_zeros(0, 4);
	h = crc_raw(h, q + 0x64, 4);
	return 1ull << 32 | ((stored ^ crc_raw(h, b, ISIZE128)) & 0xFFFF);
}

/* H(generation, inode) xor the stored checksum: the scan's raw value. */
static uint32_t inode_raw(const uint8_t *q)
{
	uint8_t b[ISIZE];
	memcpy(b, q, ISIZE);
	uint32_t stored = rk_get_le16(b + 0x7C) | (uint32_t)rk_get_le16(b + 0x82) << 16;
	memset(b + 0x7C, 0, 2);
	memset(b + 0x82, 0, 2);
	uint32_t h = crc_zeros(0, 4);
	h = crc_raw(h, q + 0x64, 4);   /* i_generation */
	return stored ^ crc_raw(h, b, ISIZE);
}

/* The inode P's "." entry names when P starts a directory's first block
 * ("." in a record of 12 bytes, then ".." of type directory), else 0. */
static uint32_t dot_block(const uint8_t *p)
{
	uint32_t ino = rk_get_le32(p), up = rk_get_le32(p + 12), len2 = rk_get_le16(p + 16);
	if (!ino || rk_get_le16(p + 4) != 12 || p[6] != 1 || p[7] != 2 || p[8] != '.' || !up || len2 < 12 ||
	    (len2 & 3) || p[18] != 2 || p[19] != 2 || p[20] != '.' || p[21] != '.')
		return 0;
	return ino;
}

/* See detect_int.h. */
void dt_ext_scan(struct dt_ctx *c, uint32_t i, uint64_t at, const uint8_t *p, size_t left)
{
	struct dt_ext *e = &c->ext;
	if (left >= 1024 && rk_get_le16(p + 0x38) == 0xEF53 && rk_get_le16(p + 0x5A) == 0 && e->nsb < DT_EXT_SBS)
		e->sb[e->nsb++] = (struct dt_ext_sb){ i, at, dt_in_own_partition(&c->fs, 1024) };
	if (i >= DT_MAX_ROLES + 8)
		return;
	uint32_t dot = left >= 24 && e->ndir[i] < DIR_CAP ? dot_block(p) : 0;
	if (dot && dt_anchor_push(c, &(struct dt_anchor){ DT_EXT_DIR, i, at, dot, DT_NONE, DT_NONE, 0 }))
		e->ndir[i]++;
	for (uint32_t h = 0; h < 512 && e->nper[i] < EXT_CAP; h += ISIZE128) {
		uint64_t raw = h % ISIZE == 0 && inode_like(p + h) ? inode_raw(p + h) : inode_like128(p + h) ? inode_raw128(p + h) : DT_NONE;
		if (raw != DT_NONE && dt_anchor_push(c, &(struct dt_anchor){ DT_EXT_INO, i, at + h, raw, DT_NONE, DT_NONE, 0 }))
			e->nper[i]++;
	}
}

/* For 128-byte inodes: G's low 16 bits over the inode-number bits below
 * NB, as an XOR basis (E->basis by pivot bit, E->combo the number bits
 * that make each); 0 when they are dependent (no unique number). */
static int g_basis128(struct dt_ext *e, uint32_t nb)
{
	memset(e->basis, 0, sizeof e->basis);
	memset(e->combo, 0, sizeof e->combo);
	for (uint32_t b = 0; b < nb; b++) {
		uint8_t x[4];
		rk_put_le32(x, 1u << b);
		uint32_t v = crc_zeros(crc_raw(0, x, 4), 4 + ISIZE128) & 0xFFFF, m = 1u << b;
		for (int p = 15; p >= 0 && v; p--)
			if (v >> p & 1) {
				if (!e->basis[p]) {
					e->basis[p] = (uint16_t)v;
					e->combo[p] = m;
					break;
				}
				v ^= e->basis[p];
				m ^= e->combo[p];
			}
		if (!v)
			return 0;
	}
	return 1;
}

/* The inode number whose G gives Y (16 bits) under a 128-byte basis; 0
 * when none does. */
static uint32_t solve128(const struct dt_ext *e, uint32_t y)
{
	uint32_t x = 0;
	for (int p = 15; p >= 0; p--)
		if (y >> p & 1) {
			if (!e->basis[p])
				return 0;
			y ^= e->basis[p];
			x ^= e->combo[p];
		}
	return x;
}

/* The inverse of G (x -> crc_raw(0, le32 x, then 4 + ISIZE zeros)) as 32
 * columns; 0 when singular (it is not). */
static int g_inverse(uint32_t inv[32])
{
	uint32_t m[32], id[32];
	for (int b = 0; b < 32; b++) {
		uint8_t x[4];
		rk_put_le32(x, 1u << b);
		m[b] = crc_zeros(crc_raw(0, x, 4), 4 + ISIZE);   /* column b: G(bit b) */
		id[b] = 1u << b;
	}
	/* Gauss-Jordan on columns: reduce m to the identity, id follows */
	for (int r = 0; r < 32; r++) {
		int k = r;
		while (k < 32 && !(m[k] >> r & 1))
			k++;
		if (k == 32)
			return 0;
		uint32_t t = m[k]; m[k] = m[r]; m[r] = t;
		t = id[k]; id[k] = id[r]; id[r] = t;
		for (int q = 0; q < 32; q++)
			if (q != r && (m[q] >> r & 1)) {
				m[q] ^= m[r];
				id[q] ^= id[r];
			}
	}
	/* m[r] = e_r now, so G(id[r]) = e_r: G^-1 maps bit r to id[r] */
	memcpy(inv, id, sizeof id);
	return 1;
}

/* Reads the group descriptors at image I's byte AT (DSZ bytes each, up to
 * NGROUPS, in one block of BS) into E->itable while their checksums
 * (crc32c from SEED over the group number and the descriptor) hold;
 * returns how many did.  With STRIDE (flex_bg: the inode tables packed
 * back to back, STRIDE bytes each), a descriptor whose checksum fails
 * among ones that hold is filled in from them when two of those hold
 * tables exactly STRIDE apart per group: a superblock seen on a parity
 * member keeps its descriptors XORed with the other members' blocks of
 * the row, and the primary's reserved GDT blocks (in the next chunk of a
 * 1 KiB-block ext4) list their backups in their first bytes, which spoil
 * group 0's descriptor only (seed 3737: a RAID-6 of 4 with both data
 * members of its first rows gone, the superblock on Q). */
static uint32_t gdt_read(struct dt_ctx *c, uint32_t i, uint64_t at, uint32_t seed, uint32_t dsz, uint32_t bs,
                         uint64_t ngroups, uint64_t stride, struct dt_ext *e)
{
	uint8_t d[1024];
	uint32_t n = 0, held = 0, first = UINT32_MAX, second = UINT32_MAX;
	uint64_t lim = ngroups < DT_EXT_GROUPS ? ngroups : DT_EXT_GROUPS;
	if (lim > bs / dsz)
		lim = bs / dsz;
	for (uint64_t g = 0; g < lim; g++) {
		if (dt_read(c, i, at + g * dsz, d, dsz))
			break;
		uint8_t le[4];
		rk_put_le32(le, (uint32_t)g);
		uint32_t cs = crc_raw(crc_raw(seed, le, 4), d, 0x1E);
		cs = crc_raw(crc_zeros(cs, 2), d + 0x20, dsz - 0x20);
		if ((cs & 0xFFFF) != rk_get_le16(d + 0x1E)) {
			e->itable[g] = DT_NONE;
			if (!stride)
				break;
			continue;
		}
		e->itable[g] = (rk_get_le32(d + 8) | (dsz >= 64 ? (uint64_t)rk_get_le32(d + 0x28) << 32 : 0)) * bs;
		n += n == g;
		held++;
		if (first == UINT32_MAX)
			first = (uint32_t)g;
		else if (second == UINT32_MAX)
			second = (uint32_t)g;
	}
	if (n == lim || held < 2 || held * 2 < lim || second == UINT32_MAX || e->itable[first] < stride * first)
		return n;
	uint64_t base = e->itable[first] - stride * first;   /* group 0's table, as packed */
	for (uint64_t g = 0; g < lim; g++)
		if (e->itable[g] != DT_NONE && e->itable[g] != base + stride * g)
			return n;   /* not packed back to back after all */
	for (uint64_t g = 0; g < lim; g++)
		e->itable[g] = base + stride * g;
	return (uint32_t)lim;
}

#define GDT_SPAN ((4u << 20) + 65536u)   /* where a member's data starts (gencase: below 4 MiB) */

/* Whether the DSZ bytes at D are group 0's descriptor of a file system of
 * BLOCKS blocks: its checksum (16 bits) holds and its bitmaps and inode
 * table lie in the file system (random bytes pass that about never). */
static int gdt0_at(const uint8_t *d, uint32_t seed, uint32_t dsz, uint64_t blocks)
{
	uint64_t bb = rk_get_le32(d), ib = rk_get_le32(d + 4), it = rk_get_le32(d + 8);
	if (!bb || !ib || !it || bb >= blocks || ib >= blocks || it >= blocks || rk_get_le16(d + 0x1E) == 0)
		return 0;
	static const uint8_t zero4[4];
	uint32_t cs = crc_raw(crc_raw(seed, zero4, 4), d, 0x1E);
	cs = crc_raw(crc_zeros(cs, 2), d + 0x20, dsz - 0x20);
	return (cs & 0xFFFF) == rk_get_le16(d + 0x1E);
}

/* Image I's byte where group 0's descriptor starts, searched at every
 * 512-byte step of its first GDT_SPAN bytes (a chunk of 4 KiB puts volume
 * block 1 at the start of another member, whose start may differ);
 * DT_NONE when none. */
static uint64_t gdt_find(struct dt_ctx *c, uint32_t i, uint32_t seed, uint32_t dsz, uint64_t blocks)
{
	enum { STEP = 65536 };
	uint8_t *buf = malloc(STEP);
	uint64_t end = c->img[i].size < GDT_SPAN ? c->img[i].size : GDT_SPAN, at = DT_NONE;
	for (uint64_t o = 0; buf && at == DT_NONE && o + STEP <= end; o += STEP) {
		if (dt_read(c, i, o, buf, STEP))
			break;
		for (uint32_t k = 0; k + dsz <= STEP && at == DT_NONE; k += 512)
			if (gdt0_at(buf + k, seed, dsz, blocks))
				at = o + k;
	}
	free(buf);
	return at;
}

/* An ext4 of one group whose descriptors are nowhere on the images (on a
 * member that is gone: seeds 2256, 2257, a RAID-4 and a RAID-5 of 128 and
 * 72 MiB with their first member missing, one anchor each): its inode
 * table where mke2fs puts it, behind the superblock, the descriptor
 * block, the reserved descriptor blocks and the block and inode bitmaps
 * of a whole flex group (flex_bg; each bitmap one block).  A file system
 * laid out otherwise puts its inodes elsewhere: their anchors then
 * disagree with the directories' and the probes, which read the
 * descriptors through each hypothesis.  1 when E->itable[0] was set. */
static int itable_by_layout(const uint8_t *sb, uint32_t bs, uint32_t fdb, uint32_t dsz, struct dt_ext *e)
{
	uint32_t incompat = rk_get_le32(sb + 0x60), logflex = sb[0x174], rsv = rk_get_le16(sb + 0xCE);
	if (!(incompat & 0x200) || logflex > 10 || dsz > bs)
		return 0;   /* no flex_bg: the bitmaps' room is not known */
	e->itable[0] = ((uint64_t)fdb + 2 + rsv + 2 * (1ull << logflex)) * bs;
	return 1;
}

/* Learns into E, from the group-0 superblock at image I's byte AT: the
 * seed, inode counts and the inode tables its group descriptors name
 * (each descriptor's checksum must hold: a parity copy or junk is passed
 * over); *BYTES the file system's size.  1 when learnt. */
static int learn_from(struct dt_ctx *c, uint32_t i, uint64_t at, struct dt_ext *e, uint64_t *bytes)
{
	uint8_t sb[1024];
	if (dt_read(c, i, at, sb, sizeof sb) || rk_get_le16(sb + 0x38) != 0xEF53 || !(rk_get_le32(sb + 0x64) & 0x400) ||
	    (rk_get_le16(sb + 0x58) != ISIZE && rk_get_le16(sb + 0x58) != ISIZE128) || rk_get_le32(sb + 0x18) > 6)
		return 0;   /* no metadata_csum, or another inode size */
	uint32_t isz = rk_get_le16(sb + 0x58);
	uint32_t bs = 1024u << rk_get_le32(sb + 0x18), fdb = rk_get_le32(sb + 0x14), bpg = rk_get_le32(sb + 0x20);
	uint32_t ipg = rk_get_le32(sb + 0x28), incompat = rk_get_le32(sb + 0x60);
	uint32_t dsz = (incompat & 0x80) ? rk_get_le16(sb + 0xFE) : 32;
	uint64_t blocks = rk_get_le32(sb + 0x04) | ((incompat & 0x80) ? (uint64_t)rk_get_le32(sb + 0x150) << 32 : 0);
	if (!bpg || !ipg || dsz < 32 || dsz > 1024 || (dsz & (dsz - 1)) || blocks <= fdb || at < 1024)
		return 0;
	uint64_t ngroups = (blocks - fdb + bpg - 1) / bpg, gdt = at - 1024 + (uint64_t)(fdb + 1) * bs;
	/* not through the XOR of images: spoilt descriptors there say it is no
	 * member rebuilt (seed 3475: fifteen mirror copies at other starts,
	 * their XOR learnt, 1.5 times as long) */
	uint64_t stride = i != DT_XIMG && (incompat & 0x200) && (isz == ISIZE || isz == ISIZE128) ? (uint64_t)ipg * isz : 0;
	uint32_t seed = (incompat & 0x2000) ? rk_get_le32(sb + 0x270) : crc_raw(~0u, sb + 0x68, 16);
	/* the descriptors right behind the superblock (a chunk of 8 KiB or
	 * more), else at the start of another image (a chunk of 4 KiB puts
	 * volume block 1 on the next member, at the same start) */
	uint32_t n = 0;
	for (uint32_t j = 0; j <= c->nimg && !n; j++) {
		if (j && (j - 1 == i || bs != 4096 || fdb))
			continue;
		n = gdt_read(c, j ? j - 1 : i, j ? at - 1024 : gdt, seed, dsz, bs, ngroups, stride, e);
	}
	for (uint32_t j = 0; j < c->nimg && !n && bs == 4096 && !fdb; j++) {
		uint64_t o = j == i ? DT_NONE : gdt_find(c, j, seed, dsz, blocks);
		if (o != DT_NONE)
			n = gdt_read(c, j, o, seed, dsz, bs, ngroups, stride, e);
	}
	if (!n && ngroups == 1)
		n = itable_by_layout(sb, bs, fdb, dsz, e);
	uint32_t icount = rk_get_le32(sb), nb = 0;
	while (nb < 32 && (icount >> nb))
		nb++;
	if (!n || !g_inverse(e->ginv) || (isz == ISIZE128 && (nb > 14 || !g_basis128(e, nb))))
		return 0;   /* 128: at least two bits of the 16 left to refute a number */
	*bytes = blocks * bs;
	e->bs = bs;
	e->blocks = blocks;
	e->ngroups = n;
	e->ipg = ipg;
	e->icount = icount;
	e->isz = isz;
	e->img = i;
	e->fdb = fdb;
	e->rgdt = rk_get_le16(sb + 0xCE);
	e->gdtb = (uint32_t)((ngroups * dsz + bs - 1) / bs);
	e->resize = (rk_get_le32(sb + 0x5C) & 0x10) != 0;
	e->seed = seed;
	e->jino = (rk_get_le32(sb + 0x5C) & 0x4) ? rk_get_le32(sb + 0xE0) : 0;   /* has_journal: s_journal_inum */
	e->a = crc_zeros(seed, 8 + isz);
	e->learnt = 1;
	return 1;
}

/* The block a directory inode Q's logical block 0 sits at; else DT_NONE. */
static uint64_t dir_first_block(const uint8_t *q)
{
	return (rk_get_le16(q) & 0xF000u) == 0x4000 ? dt_ext_extent_block(q, 0) : DT_NONE;
}

/* Whether image I holds the file system E learnt from its superblock at
 * AT in place: the root directory's inode where the inode table puts it
 * and its first block where that inode says, and of the directory blocks
 * met on I (16 at most), fewer than 2 away from where their inodes say
 * with no copy there.  A far RAID-10 of 2 holds a whole file system on
 * each member, but not in place past the first chunk (seed 3736: its one
 * member left, whose inodes were never anchored, read with the member
 * size guessed). */
static int fs_in_place(struct dt_ctx *c, uint32_t i, uint64_t at, const struct dt_ext *e)
{
	uint8_t q[ISIZE], d[24];
	uint64_t base = at - 1024, b;
	if (!e->ngroups || e->isz > ISIZE || e->itable[0] > UINT64_MAX - base - ISIZE ||
	    dt_read(c, i, base + e->itable[0] + e->isz, q, e->isz))
		return 0;
	b = dir_first_block(q);
	if (b == DT_NONE || b >= e->blocks || dt_read(c, i, base + b * e->bs, d, sizeof d) || dot_block(d) != 2)
		return 0;
	/* and the directories met on it: each where its inode says, or at
	 * least a copy there (a journal logs directory blocks elsewhere) */
	uint32_t displaced = 0, checked = 0;
	for (uint32_t k = 0; k < c->nanc && checked < 16 && displaced < 2; k++) {
		const struct dt_anchor *a = &c->anc[k];
		uint64_t g = a->raw ? (a->raw - 1) / e->ipg : 0, idx = a->raw ? (a->raw - 1) % e->ipg : 0;
		if (a->kind != DT_EXT_DIR || a->img != i || !a->raw || a->raw > e->icount || g >= e->ngroups ||
		    e->itable[g] > UINT64_MAX / 2 || dt_read(c, i, base + e->itable[g] + idx * e->isz, q, e->isz))
			continue;
		b = dir_first_block(q);
		if (b == DT_NONE || b >= e->blocks)
			continue;
		checked++;
		displaced += a->ioff != base + b * e->bs &&
		             (dt_read(c, i, base + b * e->bs, d, sizeof d) || dot_block(d) != a->raw);
	}
	return displaced < 2;
}

/* See detect_int.h.  Only a file system larger than what its image holds
 * from its start on is an array's: a whole ext4 on one image (an
 * unrelated disk among the members, or a mirror, which needs no order) is
 * not anchored, else its many inodes would vote for places in the array
 * (seeds 1023, 1037).  Nor one that starts a partition of its own image's
 * MBR: a disk's, cut short (seed 2339: a sample disk's 16 MiB beside a
 * RAID-10 of vfat; its 128-byte inodes, anchored since, broke the answer).
 * Of several, the largest. */
void dt_ext_learn(struct dt_ctx *c)
{
	struct dt_ext *e = &c->ext, best;
	uint64_t most = 0;
	if (e->learnt)
		return;
	for (uint32_t k = 0; k < e->nsb; k++) {
		struct dt_ext t = *e;
		uint64_t bytes = 0, at = e->sb[k].ioff - 1024, size = c->img[e->sb[k].img].size;
		int from = e->sb[k].ioff >= 1024 && !e->sb[k].whole && learn_from(c, e->sb[k].img, e->sb[k].ioff, &t, &bytes);
#ifdef DT_DEBUG
		fprintf(stderr, "EXTLEARN img %u ioff %llu learnt %d bytes %llu\n", e->sb[k].img,
		        (unsigned long long)e->sb[k].ioff, from, (unsigned long long)bytes);
#endif
		t.scattered = from && bytes <= size - at;
		if (!from || (t.scattered && fs_in_place(c, e->sb[k].img, e->sb[k].ioff, &t)) || bytes <= most)
			continue;
		most = bytes;
		best = t;
	}
	if (most)
		*e = best;
}

/* Whether ext inodes or directory blocks were seen (any file system's). */
static int ext_seen(const struct dt_ctx *c)
{
	for (uint32_t k = 0; k < c->nanc; k++)
		if (c->anc[k].kind == DT_EXT_INO || c->anc[k].kind == DT_EXT_DIR)
			return 1;
	return 0;
}

/* Whether the 512-byte sector P may start a group-0 superblock. */
static int sb_like(const uint8_t *p)
{
	return rk_get_le16(p + 0x38) == 0xEF53 && rk_get_le16(p + 0x5A) == 0 && rk_get_le32(p + 0x18) <= 6 &&
	       rk_get_le32(p + 0x20) && rk_get_le32(p + 0x28);
}

/* Whether one of the images' blocks B holds X (512 bytes) at Q. */
static int held_by_image(const struct dt_ctx *c, const uint8_t *b, uint32_t q, const uint8_t *x)
{
	for (uint32_t i = 0; i < c->nimg; i++)
		if (!memcmp(b + (size_t)i * DT_BLK + q, x, 512))
			return 1;
	return 0;
}

/* Learns from a group-0 superblock in the XOR of the images in MASK,
 * image i read from its byte O[i] on, over the first 4 MiB: of every
 * image in MASK, then of each but one (an unrelated one).  1 when
 * learnt (c->xmask and c->xoff then read that XOR). */
static int learn_xor(struct dt_ctx *c, const uint64_t *o, uint64_t mask, uint8_t *b)
{
	struct dt_ext *e = &c->ext;
	uint8_t x[512];
	for (uint32_t i = 0; i < c->nimg; i++)
		c->xoff[i] = (mask >> i & 1) ? o[i] : 0;
	for (uint64_t off = 0; off < (4ull << 20); off += DT_BLK) {
		uint8_t *acc = b + (size_t)c->nimg * DT_BLK;
		memset(acc, 0, DT_BLK);
		for (uint32_t i = 0; i < c->nimg; i++) {
			if (!(mask >> i & 1) || dt_read(c, i, off + o[i], b + (size_t)i * DT_BLK, DT_BLK))
				memset(b + (size_t)i * DT_BLK, 0, DT_BLK);
			for (uint32_t k = 0; k < DT_BLK; k++)
				acc[k] ^= b[(size_t)i * DT_BLK + k];
		}
		for (uint32_t j = 0; j <= c->nimg; j++) {   /* j == nimg: every image */
			if (j < c->nimg && !(mask >> j & 1))
				continue;
			for (uint32_t q = 0; q < DT_BLK; q += 512) {
				for (uint32_t k = 0; k < 512; k++)
					x[k] = acc[q + k] ^ (j < c->nimg ? b[(size_t)j * DT_BLK + q + k] : 0);
				if (off + q < 1024 || !sb_like(x) || held_by_image(c, b, q, x))
					continue;   /* an image holds it: no member is rebuilt (an odd count of mirrors' copies) */
				struct dt_ext t = *e;
				uint64_t bytes = 0;
				c->xmask = j < c->nimg ? mask & ~(1ull << j) : mask;
				if (learn_from(c, DT_XIMG, off + q, &t, &bytes)) {
					*e = t;
					return 1;
				}
			}
		}
	}
	c->xmask = 0;
	memset(c->xoff, 0, sizeof c->xoff);
	return 0;
}

#define SHIFT_SEEN 128u   /* ext inodes and directories seen before other starts are tried (an NTFS of
                           * seed 3486 shows 51 by chance; seed 5545's lost ext4, 1320) */

/* See detect_int.h.  A small file system has no backup superblock, so a
 * member gone with the first one takes every anchor of it along (seed
 * 3311: a RAID-5 of 10 with its first member missing, a 49 MiB ext4 whose
 * inodes placed nothing).  The XOR over the head at equal offsets, then
 * at the starts the copies on parity give (dt_align_starts: seed 5545, a
 * RAID-4 of 4 with its first data member gone, members from 0, 128 KiB
 * and 1 MiB behind junk, no anchor placed), then where each image's junk
 * ends. */
void dt_ext_learn_rebuilt(struct dt_ctx *c)
{
	uint64_t all = c->nimg >= 64 ? ~0ull : (1ull << c->nimg) - 1, zero[64] = { 0 }, rel[64], mask, blank;
	if (c->ext.learnt || c->nimg < 2 || c->nimg > 16 || !ext_seen(c))
		return;
	uint8_t *b = malloc((size_t)(c->nimg + 1) * DT_BLK);
	uint32_t seen = 0;   /* the other starts cost reads: only for a file system seen in earnest */
	for (uint32_t k = 0; k < c->nanc && seen < SHIFT_SEEN; k++)
		seen += c->anc[k].kind == DT_EXT_INO || c->anc[k].kind == DT_EXT_DIR;
	if (!b || learn_xor(c, zero, all, b) || seen < SHIFT_SEEN ||
	    (dt_align_starts(c, &mask, rel, &blank) && __builtin_popcountll(mask) >= 2 && learn_xor(c, rel, mask, b))) {
		free(b);
		return;
	}
	/* or where each image's junk ends (the copies too few to align) */
	int differ = 0;
	for (uint32_t i = 0; i < c->nimg; i++) {
		rel[i] = dt_junk_lead(c, i);
		differ |= rel[i] != rel[0];
	}
	if (differ)
		learn_xor(c, rel, all, b);
	free(b);
}

/* The first 128 bytes of inode INO of the learnt file system into Q, read
 * where its resolved anchor was found: 0 when no such anchor reads. */
static int inode_read(struct dt_ctx *c, uint32_t ino, uint8_t *q)
{
	for (uint32_t k = 0; k < c->nanc; k++) {
		const struct dt_anchor *a = &c->anc[k];
		if (a->kind == DT_EXT_INO && a->voff != DT_NONE && a->tag == ino && !dt_read(c, a->img, a->ioff, q, ISIZE128))
			return 1;
	}
	return 0;
}

/* See detect_int.h.  The journal holds copies of metadata blocks (inode
 * tables, directories, the superblock) as they were logged: anchors a
 * reading puts there are no evidence against it (seed 2689: the forensics
 * ext4 sample's journal, 76 inode and directory anchors against the true
 * RAID-5). */
void dt_ext_journal(struct dt_ctx *c)
{
	struct dt_ext *e = &c->ext;
	e->jbeg = e->jend = 0;
	uint8_t q[ISIZE128];
	if (!e->learnt || !e->jino || !inode_read(c, e->jino, q))
		return;
	const uint8_t *eh = q + 0x28;
	if (!(rk_get_le32(q + 0x20) & 0x80000u) || rk_get_le16(eh) != 0xF30A || rk_get_le16(eh + 6) != 0)
		return;   /* an extent tree of depth 0 only */
	uint64_t lo = UINT64_MAX, hi = 0;
	for (uint32_t x = 0; x < rk_get_le16(eh + 2) && x < 4; x++) {
		const uint8_t *ee = eh + 12 + 12 * x;
		uint64_t len = rk_get_le16(ee + 4), st = (uint64_t)rk_get_le16(ee + 6) << 32 | rk_get_le32(ee + 8);
		if (len > 32768)
			len -= 32768;   /* unwritten */
		if (st >= e->blocks || len > e->blocks - st)
			return;
		lo = st < lo ? st : lo;
		hi = st + len > hi ? st + len : hi;
	}
	if (hi > lo) {
		e->jbeg = lo * e->bs;
		e->jend = hi * e->bs;
	}
}

/* See detect_int.h. */
int dt_ext_in_journal(const struct dt_ctx *c, uint64_t v)
{
	uint64_t base = c->fs.base[DT_FSK_EXT];
	return c->ext.jend && v >= base + c->ext.jbeg && v < base + c->ext.jend;
}

/* See detect_int.h.  Seed 2339: a 16 MiB slice of the forensics ext4
 * sample (its superblock at 1 KiB, the file system larger than the
 * slice) beside a RAID-10 of vfat had its 128-byte inodes anchored, all on
 * that slice, and the answer was held back for the image left out.  The
 * directories count too: a linear array keeps its inodes on the first
 * member, its directories pin the others (seed 2357); so do files' last
 * blocks, two or more (seed 2280: a linear of 2 whose second member holds
 * only files; seed 2645: one last block on a member of a RAID-4 holding
 * the forensics "multiple" sample, whose inodes all lay on a copy of
 * that sample beside it, kept them, and they placed the copy). */
void dt_ext_settle(struct dt_ctx *c)
{
	if (!c->ext.learnt || c->ext.scattered)
		return;
	uint32_t tails = 0;   /* one file's last block elsewhere may be a copy's (seed 2645) */
	for (uint32_t k = 0; k < c->nanc; k++) {
		const struct dt_anchor *a = &c->anc[k];
		if (a->voff == DT_NONE || a->img == c->ext.img)
			continue;
		if (a->kind == DT_EXT_INO || a->kind == DT_EXT_DIR ||
		    ((a->kind == DT_EXT_TAIL || a->kind == DT_EXT_RMAP) && ++tails >= 2))
			return;
	}
	for (uint32_t k = 0; k < c->nanc; k++)
		if (c->anc[k].kind == DT_EXT_INO || c->anc[k].kind == DT_EXT_DIR || c->anc[k].kind == DT_EXT_TAIL ||
		    c->anc[k].kind == DT_EXT_RMAP)
			c->anc[k].voff = DT_NONE;
}

/* See detect_int.h.  The inode number goes into A->tag (its words). */
void dt_ext_resolve(const struct dt_ctx *c, struct dt_anchor *a)
{
	const struct dt_ext *e = &c->ext;
	a->voff = a->voff2 = DT_NONE;
	if (!e->learnt)
		return;
	uint32_t y = (uint32_t)a->raw ^ e->a, ino = 0, small = (a->raw >> 32) & 1;
	if (small != (e->isz == ISIZE128))
		return;   /* read as the other inode size */
	if (small)
		ino = solve128(e, y & 0xFFFF);
	else
		for (int b = 0; b < 32; b++)
			if (y >> b & 1)
				ino ^= e->ginv[b];
	if (!ino || ino > e->icount)
		return;   /* not an inode of this file system (or not one at all) */
	uint32_t g = (ino - 1) / e->ipg, idx = (ino - 1) % e->ipg;
	/* a member's bytes keep the volume's place within 512 (starts and
	 * chunks are multiples of it): the slot there must be the number's */
	if (small && (a->ioff % 512) / ISIZE128 != idx % (512 / ISIZE128))
		return;
	if (g < e->ngroups) {
		a->voff = e->itable[g] + (uint64_t)idx * e->isz;
		a->tag = ino;
	}
}

/* See detect_int.h.  mke2fs (res_gdt.c) puts reserved GDT block r, at
 * block first_data_block + 1 + GDT blocks + r, in entry (GDT blocks + r)
 * modulo the entries per block. */
int dt_ext_resize_map(struct dt_ctx *c, uint64_t *blk, uint8_t *want)
{
	const struct dt_ext *e = &c->ext;
	uint8_t in[ISIZE];
	if (!e->learnt || !e->resize || !e->rgdt || e->isz > ISIZE || !e->bs)
		return 0;
	/* inode 7 beside an anchored inode of its inode-table block (a
	 * block never straddles members) */
	uint64_t at = DT_NONE;
	uint32_t img = 0;
	for (uint32_t k = 0; k < c->nanc && at == DT_NONE; k++) {
		const struct dt_anchor *q = &c->anc[k];
		if (q->kind == DT_EXT_INO && q->tag && q->tag <= e->ipg &&
		    (uint64_t)(q->tag - 1) * e->isz / e->bs == 6ull * e->isz / e->bs &&
		    q->ioff + 6ull * e->isz >= (uint64_t)(q->tag - 1) * e->isz) {
			at = q->ioff + 6ull * e->isz - (uint64_t)(q->tag - 1) * e->isz;
			img = q->img;
		}
	}
	if (at == DT_NONE || dt_read(c, img, at, in, e->isz))
		return 0;
	struct dt_anchor a = { DT_EXT_INO, img, at, e->isz == ISIZE ? inode_raw(in) : inode_raw128(in), DT_NONE, DT_NONE, 0 };
	dt_ext_resolve(c, &a);
	uint32_t apb = e->bs / 4;
	*blk = rk_get_le32(in + 0x28 + 13 * 4);   /* i_block[EXT2_DIND_BLOCK] */
	if (a.tag != 7 || (rk_get_le32(in + 0x20) & 0x80000u) || !*blk || *blk >= e->blocks || e->rgdt > apb)
		return 0;
	memset(want, 0, e->bs);
	for (uint32_t r = 0; r < e->rgdt; r++)
		rk_put_le32(want + (size_t)((e->gdtb + r) % apb) * 4, e->fdb + 1 + e->gdtb + r);
	return 1;
}

/* See detect_int.h. */
uint64_t dt_ext_extent_block(const uint8_t *in, uint64_t logical)
{
	const uint8_t *eh = in + 0x28;
	if ((rk_get_le32(in + 0x20) & 0x10080000u) != 0x80000 || rk_get_le16(eh) != 0xF30A || rk_get_le16(eh + 6) != 0)
		return DT_NONE;   /* not an extent tree of depth 0 in the inode */
	for (uint32_t k = 0; k < rk_get_le16(eh + 2) && k < 4; k++) {
		const uint8_t *x = eh + 12 + 12 * k;
		uint64_t first = rk_get_le32(x), len = rk_get_le16(x + 4);
		if (len > 32768 || logical < first || logical - first >= len)
			continue;   /* unwritten: reads as zeros whatever the disk holds */
		return ((uint64_t)rk_get_le16(x + 6) << 32 | rk_get_le32(x + 8)) + (logical - first);
	}
	return DT_NONE;
}

/* Whether the directory block at A (BS bytes) may be directory inode
 * INO's (Q): its checksum tail (the learnt file system has
 * metadata_csum) must hold for that inode's number and generation under
 * the learnt seed -- another ext4's block whose "." names the same number
 * does not (seed 2416: a sample slice's inodes resolved the array's own
 * directories to its places).  A block without that tail (an htree
 * root, whose checksum sits elsewhere) is not taken. */
static int dir_tail_ok(struct dt_ctx *c, const struct dt_anchor *a, const uint8_t *q, uint32_t ino, uint32_t bs)
{
	uint8_t *b = malloc(bs);
	int ok = b && !dt_read(c, a->img, a->ioff, b, bs) && dt_ext_dir_csum_ok(c->ext.seed, ino, q, b, bs);
	free(b);
	return ok;
}

/* See detect_int.h. */
int dt_ext_dir_csum_ok(uint32_t seed, uint32_t ino, const uint8_t *in, const uint8_t *b, uint32_t bs)
{
	const uint8_t *t = b + bs - 12;
	uint8_t le[4];
	if (bs < 12 || rk_get_le32(t) || rk_get_le16(t + 4) != 12 || t[6] || t[7] != 0xDE)
		return 0;
	rk_put_le32(le, ino);
	return crc_raw(crc_raw(crc_raw(seed, le, 4), in + 0x64, 4), b, bs - 12) == rk_get_le32(t + 8);
}

/* See detect_int.h. */
void dt_ext_resolve_dir(struct dt_ctx *c, struct dt_anchor *a)
{
	uint32_t bs = c->ext.bs;   /* not c->fs's: another ext among the images may have set that */
	a->voff = a->voff2 = DT_NONE;
	uint8_t q[ISIZE128];   /* the inode the checksum names: one answer */
	if (!c->ext.learnt || !bs || a->raw > UINT32_MAX || !inode_read(c, (uint32_t)a->raw, q))
		return;
	uint64_t b = dir_first_block(q);
	if (b != DT_NONE && b < c->ext.blocks && b <= UINT64_MAX / bs && dir_tail_ok(c, a, q, (uint32_t)a->raw, bs)) {
		a->voff = b * bs;
		a->tag = (uint32_t)a->raw;
	}
}

/* See detect_int.h. */
const char *dt_ext_name(const struct dt_anchor *a, char *buf, size_t len)
{
	if (a->kind == DT_EXT_DIR)
		snprintf(buf, len, "ext4 directory of inode %llu", (unsigned long long)a->raw);
	else if (a->kind == DT_EXT_INO)
		snprintf(buf, len, "ext4 inode %u", a->tag);
	else if (a->kind == DT_EXT_TAIL)
		snprintf(buf, len, "ext4 last block of inode %u", a->tag);
	else if (a->kind == DT_EXT_RMAP)
		snprintf(buf, len, "ext4 resize inode's GDT map");
	else
		return NULL;
	return buf;
}
