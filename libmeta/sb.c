/* sb.c: the raidkit superblock codec: encode, decode, validate.
 *
 * Byte layout: spec/format.md (pinned by tests/unit/test_sb_codec.c).  Every
 * field goes through rk_le.h; nothing is cast onto disk bytes.  Decoding
 * treats the buffer as hostile: lengths are checked before every access and
 * all size arithmetic is overflow-checked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uuid/uuid.h>
#include <zlib.h>

#include "rk_le.h"
#include "rk_sb.h"

#include "rk_geom.h"

/* Header field offsets (spec/format.md, "Header"). */
enum {
	O_MAGIC = 0, O_VERSION = 8, O_SB_BYTES = 12, O_CRC = 16, O_ARRAY_STATE = 20,
	O_COMPAT = 24, O_RO_COMPAT = 32, O_INCOMPAT = 40,
	O_ARRAY_UUID = 48, O_MEMBER_UUID = 64, O_NAME = 80,
	O_CTIME = 112, O_UTIME = 120, O_EVENTS = 128,
	O_LEVEL = 136, O_LAYOUT = 140, O_CHUNK = 144,
	O_NROLES = 152, O_NENTRIES = 156, O_THIS_ROLE = 160, O_RESHAPE_FLAGS = 164,
	O_DATA_OFFSET = 168, O_DATA_SIZE = 176, O_VOLUME_SIZE = 184,
	O_SB_OFFSET = 192, O_DEV_SIZE = 200,
	O_JOURNAL_OFFSET = 208, O_JOURNAL_SIZE = 216,
	O_SCRUB_POS = 224, O_RESHAPE_POS = 232,
	O_NEW_CHUNK = 240, O_NEW_DATA_OFFSET = 248, O_NEW_DATA_SIZE = 256,
	O_NEW_LEVEL = 264, O_NEW_LAYOUT = 268, O_NEW_NROLES = 272,
	O_RESERVED = 276,
};
/* Role entry offsets, relative to the entry. */
enum { R_UUID = 0, R_STATE = 16, R_FLAGS = 20, R_CHECKPOINT = 24 };

_Static_assert(O_RESERVED == RK_SB_RESERVED_OFF, "reserved offset");
_Static_assert(RK_SB_HEADER_SIZE + RK_SB_MAX_ROLES * RK_SB_ROLE_SIZE <= RK_SB_AREA, "role table fits the area");

static const uint8_t nil_uuid[16];

static uint64_t align_down(uint64_t v, uint64_t a)
{
	return v - v % a;
}

static int is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

uint32_t rk_sb_bytes_for(uint32_t nentries)
{
	if (nentries > RK_SB_MAX_ROLES)
		return 0;
	uint32_t b = RK_SB_HEADER_SIZE + nentries * RK_SB_ROLE_SIZE;
	return (b + RK_SB_ALIGN - 1) / RK_SB_ALIGN * RK_SB_ALIGN;
}

uint64_t rk_sb_primary_offset(uint64_t dev_size)
{
	return dev_size >= RK_SB_PRIMARY_END ? RK_SB_PRIMARY_OFF : 0;
}

uint64_t rk_sb_backup_offset(uint64_t dev_size)
{
	uint64_t end = align_down(dev_size, RK_SB_ALIGN);
	if (end < (uint64_t)RK_SB_PRIMARY_END + RK_SB_AREA)
		return 0;
	return end - RK_SB_AREA;
}

static rk_err check_chunk(int32_t level, uint64_t chunk)
{
	if (level == RK_LEVEL_LINEAR || level == 1) {
		if (chunk != 0)
			return rk_fail(RK_E_CORRUPT, "chunk %llu: level %s has no stripe unit, chunk must be 0",
			               (unsigned long long)chunk, level == 1 ? "1" : "linear");
		return RK_OK;
	}
	if (!is_pow2(chunk) || chunk < RK_CHUNK_MIN || chunk > RK_CHUNK_MAX)
		return rk_fail(RK_E_CORRUPT, "chunk %llu: must be a power of two from %u to %u bytes for level %d",
		               (unsigned long long)chunk, RK_CHUNK_MIN, RK_CHUNK_MAX, (int)level);
	return RK_OK;
}

/* A geometry rk_geom_init refuses, in the superblock's words: the field
 * and value first (spec/format.md "Validation"), then why. */
static rk_err geom_refused(int32_t level, uint32_t layout, uint32_t nroles)
{
	char msg[256];   /* rk_fail below overwrites rk_errmsg's buffer */
	snprintf(msg, sizeof msg, "%s", rk_errmsg());
	const char *why = strncmp(msg, "geometry: ", 10) ? msg : msg + 10;
	if (level == 10)
		return rk_fail(RK_E_CORRUPT, "layout 0x%x%s on %u roles (nroles %u): level 10: %s", layout,
		               (layout >> 17) > 2 ? " has unknown bits" : "", nroles, nroles, why);
	return rk_fail(RK_E_CORRUPT, "layout %u on %u roles (nroles %u): level %d: %s", layout, nroles, nroles,
	               (int)level, why);
}

rk_err rk_sb_volume_size(int32_t level, uint32_t layout, uint64_t chunk, uint32_t nroles,
                         uint64_t data_size, uint64_t *volume_size)
{
	uint32_t minr = rk_level_min_roles(level);
	*volume_size = 0;
	if (minr == 0)
		return rk_fail(RK_E_CORRUPT, "level %d: not a raidkit level (linear=-1, 0, 1, 4, 5, 6, 10)", (int)level);
	if (nroles < minr || nroles > RK_SB_MAX_ROLES)
		return rk_fail(RK_E_CORRUPT, "nroles %u: level %d needs %u to %u roles",
		               nroles, (int)level, minr, RK_SB_MAX_ROLES);
	rk_err e = check_chunk(level, chunk);
	if (e)
		return e;
	/* a data area holding no whole chunk maps nothing */
	int empty = chunk ? data_size < chunk : data_size == 0;
	struct rk_geom g;
	if (!empty && (e = rk_geom_init(&g, level, layout, chunk, nroles, data_size)) == RK_E_RANGE)
		return rk_fail(RK_E_CORRUPT, "data_size %llu: the volume of level %d on %u roles overflows 64 bits",
		               (unsigned long long)data_size, (int)level, nroles);
	if (!empty && e)
		return geom_refused(level, layout, nroles);
	if (empty || g.volume_size == 0)
		return rk_fail(RK_E_CORRUPT, "data_size %llu: level %d with chunk %llu on %u roles gives an empty volume",
		               (unsigned long long)data_size, (int)level, (unsigned long long)chunk, nroles);
	*volume_size = g.volume_size;
	return RK_OK;
}

uint64_t rk_sb_max_data_size(uint64_t dev_size, uint64_t data_offset, uint64_t chunk)
{
	uint64_t b = rk_sb_backup_offset(dev_size);
	if (b == 0 || data_offset >= b)
		return 0;
	uint64_t s = align_down(b - data_offset, RK_SB_ALIGN);
	if (chunk)
		s = align_down(s, chunk);
	return s;
}

/* Strict UTF-8 (no overlongs, surrogates or code points past U+10FFFF) and
 * no control characters: names end up in reports and file names. */
static int name_ok(const char *s, size_t n, const char **why)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	while (i < n) {
		unsigned c = p[i];
		if (c < 0x20 || c == 0x7f) {
			*why = "a control character";
			return 0;
		}
		if (c < 0x80) {
			i++;
			continue;
		}
		size_t k;
		unsigned cp, min;
		if ((c & 0xe0) == 0xc0) {
			k = 1; cp = c & 0x1f; min = 0x80;
		} else if ((c & 0xf0) == 0xe0) {
			k = 2; cp = c & 0x0f; min = 0x800;
		} else if ((c & 0xf8) == 0xf0) {
			k = 3; cp = c & 0x07; min = 0x10000;
		} else {
			*why = "an invalid UTF-8 lead byte";
			return 0;
		}
		if (n - i <= k) {
			*why = "a truncated UTF-8 sequence";
			return 0;
		}
		for (size_t j = 1; j <= k; j++) {
			if ((p[i + j] & 0xc0) != 0x80) {
				*why = "an invalid UTF-8 continuation byte";
				return 0;
			}
			cp = cp << 6 | (p[i + j] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
			*why = "an overlong or out-of-range UTF-8 sequence";
			return 0;
		}
		i += k + 1;
	}
	return 1;
}

static int uuid_nil(const uint8_t *u)
{
	return memcmp(u, nil_uuid, 16) == 0;
}

static int all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

struct uuid_ref {
	const uint8_t *u;
	uint32_t i;
};

static int cmp_uuid_ref(const void *a, const void *b)
{
	const struct uuid_ref *x = a, *y = b;
	int c = memcmp(x->u, y->u, 16);
	return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* The data area [off, off+size) of a geometry: aligned, non-empty, between
 * the primary copy's area and the backup copy. */
static rk_err check_area(const char *what, uint64_t off, uint64_t size, uint64_t backup)
{
	uint64_t end;
	if (off % RK_SB_ALIGN || size % RK_SB_ALIGN)
		return rk_fail(RK_E_CORRUPT, "%s_offset %llu / %s_size %llu: must be multiples of %u",
		               what, (unsigned long long)off, what, (unsigned long long)size, RK_SB_ALIGN);
	if (size == 0)
		return rk_fail(RK_E_CORRUPT, "%s_size 0: the area is empty", what);
	if (off < RK_SB_PRIMARY_END)
		return rk_fail(RK_E_CORRUPT, "%s_offset %llu: overlaps the primary superblock area, which ends at %u",
		               what, (unsigned long long)off, RK_SB_PRIMARY_END);
	if (rk_add_ovf(off, size, &end) || end > backup)
		return rk_fail(RK_E_CORRUPT, "%s_offset %llu + %s_size %llu: runs past the backup superblock at %llu",
		               what, (unsigned long long)off, what, (unsigned long long)size,
		               (unsigned long long)backup);
	return RK_OK;
}

static int overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	/* all four are already known not to overflow when added */
	return a < b + blen && b < a + alen;
}

/* Re-fails with PREFIX before the current detail (rk_errmsg's buffer is
 * reused by rk_fail, so copy it first). */
static rk_err refail(rk_err e, const char *prefix)
{
	char m[512];
	snprintf(m, sizeof m, "%s", rk_errmsg());
	return rk_fail(e, "%s%s", prefix, m);
}

/* Version, features, counts and reserved bytes. */
/* Incompat features this build does not know: the member is not read. */
static rk_err incompat_refused(uint64_t feat)
{
	return rk_fail(RK_E_FEATURE, "incompat features 0x%llx: unknown bits 0x%llx (this build knows 0x%llx); "
	               "refusing to interpret the member", (unsigned long long)feat,
	               (unsigned long long)(feat & ~RK_FEAT_INCOMPAT_SUPP), (unsigned long long)RK_FEAT_INCOMPAT_SUPP);
}

static rk_err validate_header(const struct rk_sb *sb, uint32_t sb_bytes)
{
	if (sb->version != RK_SB_VERSION)
		return rk_fail(RK_E_VERSION, "version %u: this build reads format version %u",
		               sb->version, RK_SB_VERSION);
	if (sb->feat_incompat & ~RK_FEAT_INCOMPAT_SUPP)
		return incompat_refused(sb->feat_incompat);
	if (sb->nroles < 1 || sb->nroles > RK_SB_MAX_ROLES)
		return rk_fail(RK_E_CORRUPT, "nroles %u: must be 1 to %u", sb->nroles, RK_SB_MAX_ROLES);
	if (sb->nentries < sb->nroles || sb->nentries > RK_SB_MAX_ROLES)
		return rk_fail(RK_E_CORRUPT, "nentries %u: must be nroles (%u) to %u",
		               sb->nentries, sb->nroles, RK_SB_MAX_ROLES);
	if (sb_bytes != rk_sb_bytes_for(sb->nentries))
		return rk_fail(RK_E_CORRUPT, "sb_bytes %u: %u role entries need %u", sb_bytes,
		               sb->nentries, rk_sb_bytes_for(sb->nentries));

	/* Reserved space may carry a newer writer's fields only when it says so
	 * with a feature bit this build does not know. */
	int unknown_feat = (sb->feat_compat & ~RK_FEAT_COMPAT_SUPP) || (sb->feat_ro_compat & ~RK_FEAT_RO_COMPAT_SUPP);
	if (!unknown_feat) {
		for (uint32_t i = 0; i < RK_SB_RESERVED_LEN; i++)
			if (sb->reserved[i])
				return rk_fail(RK_E_CORRUPT, "reserved byte at offset %u is 0x%02x: reserved bytes must be zero",
				               RK_SB_RESERVED_OFF + i, sb->reserved[i]);
		for (uint32_t i = 0; i < sb->nentries; i++)
			if (sb->roles[i].flags)
				return rk_fail(RK_E_CORRUPT, "role %u flags 0x%x: reserved, must be zero", i, sb->roles[i].flags);
	}
	return RK_OK;
}

/* UUIDs, name and array state. */
static rk_err validate_identity(const struct rk_sb *sb)
{
	if (uuid_nil(sb->array_uuid))
		return rk_fail(RK_E_CORRUPT, "array_uuid: is nil (all zero)");
	if (uuid_nil(sb->member_uuid))
		return rk_fail(RK_E_CORRUPT, "member_uuid: is nil (all zero)");

	size_t nl = strnlen(sb->name, sizeof sb->name);
	if (nl > RK_SB_NAME_LEN)
		return rk_fail(RK_E_CORRUPT, "name: longer than %u bytes", RK_SB_NAME_LEN);
	for (size_t i = nl; i < sizeof sb->name; i++)
		if (sb->name[i])
			return rk_fail(RK_E_CORRUPT, "name: byte %zu after the terminating NUL is 0x%02x, must be NUL padding",
			               i, (unsigned char)sb->name[i]);
	const char *why;
	if (!name_ok(sb->name, nl, &why))
		return rk_fail(RK_E_CORRUPT, "name: contains %s", why);

	if (sb->array_state > RK_ARRAY_ACTIVE)
		return rk_fail(RK_E_CORRUPT, "array_state %u: must be 0 (clean) or 1 (active)", sb->array_state);
	return RK_OK;
}

/* Device size and copy placement; *BACKUP gets the backup copy's offset. */
static rk_err validate_placement(const struct rk_sb *sb, uint64_t dev_size, uint64_t *backup_out)
{
	uint64_t backup = rk_sb_backup_offset(sb->dev_size);
	if (backup == 0)
		return rk_fail(RK_E_CORRUPT, "dev_size %llu: too small for two superblock copies (needs %u)",
		               (unsigned long long)sb->dev_size, RK_SB_PRIMARY_END + RK_SB_AREA);
	if (dev_size && dev_size < sb->dev_size)
		return rk_fail(RK_E_SHORT, "dev_size %llu: the device has only %llu bytes (truncated image?)",
		               (unsigned long long)sb->dev_size, (unsigned long long)dev_size);
	if (sb->sb_offset != RK_SB_PRIMARY_OFF && sb->sb_offset != backup)
		return rk_fail(RK_E_CORRUPT, "sb_offset %llu: neither the primary (%u) nor the backup (%llu) place "
		               "for dev_size %llu", (unsigned long long)sb->sb_offset, RK_SB_PRIMARY_OFF,
		               (unsigned long long)backup, (unsigned long long)sb->dev_size);
	*backup_out = backup;
	return RK_OK;
}

/* Geometry, data area(s), reshape fields and volume size; *SPAN gets the
 * table entries that are roles (not spares). */
static rk_err validate_geometry(const struct rk_sb *sb, uint64_t backup, uint32_t *span_out)
{
	rk_err e;
	uint64_t vol, newvol = 0;
	if ((e = rk_sb_volume_size(sb->level, sb->layout, sb->chunk, sb->nroles, sb->data_size, &vol)))
		return e;
	if ((e = check_area("data", sb->data_offset, sb->data_size, backup)))
		return e;
	uint32_t span = sb->nroles;
	int reshape = !!(sb->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE);
	if (reshape) {
		const struct rk_geom_desc *n = &sb->reshape_new;
		if ((e = rk_sb_volume_size(n->level, n->layout, n->chunk, n->nroles, n->data_size, &newvol)))
			return refail(e, "reshape target: ");
		if ((e = check_area("new_data", n->data_offset, n->data_size, backup)))
			return e;
		if (n->nroles > sb->nentries)
			return rk_fail(RK_E_CORRUPT, "new_nroles %u: more than nentries %u", n->nroles, sb->nentries);
		if (n->nroles > span)
			span = n->nroles;
		if (sb->reshape_flags & ~RK_RESHAPE_FLAGS_SUPP)
			return rk_fail(RK_E_CORRUPT, "reshape_flags 0x%x: unknown bits 0x%x", sb->reshape_flags,
			               sb->reshape_flags & ~RK_RESHAPE_FLAGS_SUPP);
		uint64_t want = vol < newvol ? vol : newvol;
		if (sb->volume_size != want)
			return rk_fail(RK_E_CORRUPT, "volume_size %llu: during a reshape it must be the smaller of the old "
			               "(%llu) and new (%llu) volume sizes", (unsigned long long)sb->volume_size,
			               (unsigned long long)vol, (unsigned long long)newvol);
		if (sb->reshape_pos > sb->volume_size)
			return rk_fail(RK_E_CORRUPT, "reshape_pos %llu: past volume_size %llu",
			               (unsigned long long)sb->reshape_pos, (unsigned long long)sb->volume_size);
	} else {
		const struct rk_geom_desc *n = &sb->reshape_new;
		if (n->level || n->layout || n->chunk || n->nroles || n->data_offset || n->data_size ||
		    sb->reshape_pos || sb->reshape_flags)
			return rk_fail(RK_E_CORRUPT, "reshape fields: set without the reshape incompat feature (must be zero)");
		if (sb->volume_size != vol)
			return rk_fail(RK_E_CORRUPT, "volume_size %llu: level %d, layout %u, chunk %llu, %u roles of "
			               "data_size %llu give %llu", (unsigned long long)sb->volume_size, (int)sb->level,
			               sb->layout, (unsigned long long)sb->chunk, sb->nroles,
			               (unsigned long long)sb->data_size, (unsigned long long)vol);
	}
	if (sb->scrub_pos > sb->volume_size)
		return rk_fail(RK_E_CORRUPT, "scrub_pos %llu: past volume_size %llu",
		               (unsigned long long)sb->scrub_pos, (unsigned long long)sb->volume_size);
	*span_out = span;
	return RK_OK;
}

/* Journal: inside the member's metadata space, clear of the data areas. */
static rk_err validate_journal(const struct rk_sb *sb, uint64_t backup)
{
	rk_err e;
	int reshape = !!(sb->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE);
	if (sb->feat_incompat & RK_FEAT_INCOMPAT_JOURNAL) {
		if ((e = check_area("journal", sb->journal_offset, sb->journal_size, backup)))
			return e;
		if (overlaps(sb->journal_offset, sb->journal_size, sb->data_offset, sb->data_size) ||
		    (reshape && overlaps(sb->journal_offset, sb->journal_size,
		                         sb->reshape_new.data_offset, sb->reshape_new.data_size)))
			return rk_fail(RK_E_CORRUPT, "journal_offset %llu + journal_size %llu: overlaps the data area",
			               (unsigned long long)sb->journal_offset, (unsigned long long)sb->journal_size);
	} else if (sb->journal_offset || sb->journal_size) {
		return rk_fail(RK_E_CORRUPT, "journal_offset %llu / journal_size %llu: set without the journal "
		               "incompat feature (must be zero)", (unsigned long long)sb->journal_offset,
		               (unsigned long long)sb->journal_size);
	}
	return RK_OK;
}

/* The role table: states, checkpoints, member UUIDs (none twice) and the
 * member's own entry; SPAN entries are roles. */
static rk_err validate_roles(const struct rk_sb *sb, uint32_t span)
{
	struct uuid_ref idx[RK_SB_MAX_ROLES];
	uint32_t nidx = 0;
	for (uint32_t i = 0; i < sb->nentries; i++) {
		const struct rk_role *r = &sb->roles[i];
		if (r->state >= RK_ROLE__COUNT)
			return rk_fail(RK_E_CORRUPT, "role %u state %u: unknown (0 empty .. 4 spare)", i, r->state);
		if (i < span && r->state == RK_ROLE_SPARE)
			return rk_fail(RK_E_CORRUPT, "role %u state spare: entries below nroles (%u) are roles, not spares",
			               i, span);
		if (i >= span && r->state != RK_ROLE_SPARE && r->state != RK_ROLE_EMPTY)
			return rk_fail(RK_E_CORRUPT, "role %u state %s: entries from nroles (%u) on are spare or empty",
			               i, rk_role_state_name(r->state), span);
		if (r->state != RK_ROLE_REBUILDING && r->checkpoint)
			return rk_fail(RK_E_CORRUPT, "role %u checkpoint %llu: only a rebuilding role has a checkpoint",
			               i, (unsigned long long)r->checkpoint);
		if (r->state == RK_ROLE_REBUILDING && r->checkpoint > sb->data_size)
			return rk_fail(RK_E_CORRUPT, "role %u checkpoint %llu: past data_size %llu", i,
			               (unsigned long long)r->checkpoint, (unsigned long long)sb->data_size);
		if (r->state != RK_ROLE_EMPTY) {
			if (uuid_nil(r->member_uuid))
				return rk_fail(RK_E_CORRUPT, "role %u: %s with a nil member uuid", i,
				               rk_role_state_name(r->state));
			idx[nidx].u = r->member_uuid;
			idx[nidx++].i = i;
		}
	}
	if (nidx > 1) {
		qsort(idx, nidx, sizeof idx[0], cmp_uuid_ref);
		for (uint32_t k = 1; k < nidx; k++)
			if (!memcmp(idx[k - 1].u, idx[k].u, 16))
				return rk_fail(RK_E_CORRUPT, "roles %u and %u: carry the same member uuid",
				               idx[k - 1].i, idx[k].i);
	}
	if (sb->this_role != RK_ROLE_NONE) {
		if (sb->this_role >= sb->nentries)
			return rk_fail(RK_E_CORRUPT, "this_role %u: past nentries %u (and not none, 0xffffffff)",
			               sb->this_role, sb->nentries);
		const struct rk_role *r = &sb->roles[sb->this_role];
		if (r->state == RK_ROLE_EMPTY)
			return rk_fail(RK_E_CORRUPT, "this_role %u: the member's own entry is empty", sb->this_role);
		if (memcmp(r->member_uuid, sb->member_uuid, 16))
			return rk_fail(RK_E_CORRUPT, "this_role %u: the entry's member uuid is not this member's",
			               sb->this_role);
	} else {
		for (uint32_t k = 0; k < nidx; k++)
			if (!memcmp(idx[k].u, sb->member_uuid, 16))
				return rk_fail(RK_E_CORRUPT, "this_role none: but role %u carries this member's uuid", idx[k].i);
	}
	return RK_OK;
}

static rk_err validate(const struct rk_sb *sb, uint64_t dev_size, uint32_t sb_bytes)
{
	uint64_t backup = 0;
	uint32_t span = 0;
	rk_err e = validate_header(sb, sb_bytes);
	if (e || (e = validate_identity(sb)) || (e = validate_placement(sb, dev_size, &backup)) ||
	    (e = validate_geometry(sb, backup, &span)) || (e = validate_journal(sb, backup)))
		return e;
	return validate_roles(sb, span);
}

rk_err rk_sb_validate(const struct rk_sb *sb, uint64_t dev_size)
{
	return validate(sb, dev_size, sb->sb_bytes);
}

uint32_t rk_crc32_field_zero(const uint8_t *buf, size_t len, size_t field)
{
	static const uint8_t zero[4];
	uLong c = crc32(0L, Z_NULL, 0);
	c = crc32(c, buf, (uInt)field);
	c = crc32(c, zero, 4);
	c = crc32(c, buf + field + 4, (uInt)(len - field - 4));
	return (uint32_t)c;
}

/* CRC-32 of the copy with its crc field read as zero. */
static uint32_t sb_crc(const uint8_t *buf, uint32_t sb_bytes)
{
	return rk_crc32_field_zero(buf, sb_bytes, O_CRC);
}

rk_err rk_sb_encode(const struct rk_sb *sb, uint8_t *buf, size_t len)
{
	uint32_t sb_bytes = sb->sb_bytes ? sb->sb_bytes : rk_sb_bytes_for(sb->nentries);
	rk_err e = validate(sb, 0, sb_bytes);
	if (e)
		return e;
	if (len < sb_bytes)
		return rk_fail(RK_E_RANGE, "superblock buffer of %zu bytes: needs %u", len, sb_bytes);
	memset(buf, 0, sb_bytes);
	memcpy(buf + O_MAGIC, RK_SB_MAGIC, RK_SB_MAGIC_LEN);
	rk_put_le32(buf + O_VERSION, sb->version);
	rk_put_le32(buf + O_SB_BYTES, sb_bytes);
	rk_put_le32(buf + O_ARRAY_STATE, sb->array_state);
	rk_put_le64(buf + O_COMPAT, sb->feat_compat);
	rk_put_le64(buf + O_RO_COMPAT, sb->feat_ro_compat);
	rk_put_le64(buf + O_INCOMPAT, sb->feat_incompat);
	memcpy(buf + O_ARRAY_UUID, sb->array_uuid, 16);
	memcpy(buf + O_MEMBER_UUID, sb->member_uuid, 16);
	memcpy(buf + O_NAME, sb->name, strnlen(sb->name, RK_SB_NAME_LEN));
	rk_put_le64(buf + O_CTIME, sb->ctime);
	rk_put_le64(buf + O_UTIME, sb->utime);
	rk_put_le64(buf + O_EVENTS, sb->events);
	rk_put_le32(buf + O_LEVEL, (uint32_t)sb->level);
	rk_put_le32(buf + O_LAYOUT, sb->layout);
	rk_put_le64(buf + O_CHUNK, sb->chunk);
	rk_put_le32(buf + O_NROLES, sb->nroles);
	rk_put_le32(buf + O_NENTRIES, sb->nentries);
	rk_put_le32(buf + O_THIS_ROLE, sb->this_role);
	rk_put_le32(buf + O_RESHAPE_FLAGS, sb->reshape_flags);
	rk_put_le64(buf + O_DATA_OFFSET, sb->data_offset);
	rk_put_le64(buf + O_DATA_SIZE, sb->data_size);
	rk_put_le64(buf + O_VOLUME_SIZE, sb->volume_size);
	rk_put_le64(buf + O_SB_OFFSET, sb->sb_offset);
	rk_put_le64(buf + O_DEV_SIZE, sb->dev_size);
	rk_put_le64(buf + O_JOURNAL_OFFSET, sb->journal_offset);
	rk_put_le64(buf + O_JOURNAL_SIZE, sb->journal_size);
	rk_put_le64(buf + O_SCRUB_POS, sb->scrub_pos);
	rk_put_le64(buf + O_RESHAPE_POS, sb->reshape_pos);
	rk_put_le64(buf + O_NEW_CHUNK, sb->reshape_new.chunk);
	rk_put_le64(buf + O_NEW_DATA_OFFSET, sb->reshape_new.data_offset);
	rk_put_le64(buf + O_NEW_DATA_SIZE, sb->reshape_new.data_size);
	rk_put_le32(buf + O_NEW_LEVEL, (uint32_t)sb->reshape_new.level);
	rk_put_le32(buf + O_NEW_LAYOUT, sb->reshape_new.layout);
	rk_put_le32(buf + O_NEW_NROLES, sb->reshape_new.nroles);
	memcpy(buf + O_RESERVED, sb->reserved, RK_SB_RESERVED_LEN);
	for (uint32_t i = 0; i < sb->nentries; i++) {
		uint8_t *p = buf + RK_SB_HEADER_SIZE + (size_t)i * RK_SB_ROLE_SIZE;
		const struct rk_role *r = &sb->roles[i];
		memcpy(p + R_UUID, r->member_uuid, 16);
		rk_put_le32(p + R_STATE, r->state);
		rk_put_le32(p + R_FLAGS, r->flags);
		rk_put_le64(p + R_CHECKPOINT, r->checkpoint);
	}
	rk_put_le32(buf + O_CRC, sb_crc(buf, sb_bytes));
	return RK_OK;
}

rk_err rk_sb_decode(struct rk_sb *sb, const uint8_t *buf, size_t len, uint64_t at, uint64_t dev_size)
{
	memset(sb, 0, sizeof *sb);
	if (len < RK_SB_MAGIC_LEN || memcmp(buf, RK_SB_MAGIC, RK_SB_MAGIC_LEN))
		return rk_fail(RK_E_NOSB, "no raidkit superblock at byte %llu (the magic, RAIDKIT and a NUL byte, is absent)",
		               (unsigned long long)at);
	if (len < RK_SB_HEADER_SIZE)
		return rk_fail(RK_E_SHORT, "superblock at byte %llu: only %zu bytes, the header needs %u",
		               (unsigned long long)at, len, RK_SB_HEADER_SIZE);
	sb->version = rk_get_le32(buf + O_VERSION);
	if (sb->version != RK_SB_VERSION)
		return rk_fail(RK_E_VERSION, "version %u: this build reads format version %u",
		               sb->version, RK_SB_VERSION);
	uint32_t sb_bytes = rk_get_le32(buf + O_SB_BYTES);
	if (sb_bytes < RK_SB_ALIGN || sb_bytes > RK_SB_AREA || sb_bytes % RK_SB_ALIGN)
		return rk_fail(RK_E_CORRUPT, "sb_bytes %u: must be a multiple of %u from %u to %u",
		               sb_bytes, RK_SB_ALIGN, RK_SB_ALIGN, RK_SB_AREA);
	if (len < sb_bytes)
		return rk_fail(RK_E_SHORT, "superblock at byte %llu: only %zu bytes of its %u are there",
		               (unsigned long long)at, len, sb_bytes);
	uint32_t stored = rk_get_le32(buf + O_CRC), crc = sb_crc(buf, sb_bytes);
	if (stored != crc)
		return rk_fail(RK_E_BADCRC, "crc 0x%08x: the %u bytes at %llu checksum to 0x%08x (damaged or torn copy)",
		               stored, sb_bytes, (unsigned long long)at, crc);
	sb->sb_bytes = sb_bytes;
	sb->feat_incompat = rk_get_le64(buf + O_INCOMPAT);
	if (sb->feat_incompat & ~RK_FEAT_INCOMPAT_SUPP)
		return incompat_refused(sb->feat_incompat);
	sb->sb_offset = rk_get_le64(buf + O_SB_OFFSET);
	if (sb->sb_offset != at)
		return rk_fail(RK_E_CORRUPT, "sb_offset %llu: this copy was found at byte %llu; a copy away from its "
		               "recorded place is refused", (unsigned long long)sb->sb_offset, (unsigned long long)at);
	sb->array_state = rk_get_le32(buf + O_ARRAY_STATE);
	sb->feat_compat = rk_get_le64(buf + O_COMPAT);
	sb->feat_ro_compat = rk_get_le64(buf + O_RO_COMPAT);
	memcpy(sb->array_uuid, buf + O_ARRAY_UUID, 16);
	memcpy(sb->member_uuid, buf + O_MEMBER_UUID, 16);
	memcpy(sb->name, buf + O_NAME, RK_SB_NAME_LEN);
	sb->name[RK_SB_NAME_LEN] = 0;
	sb->ctime = rk_get_le64(buf + O_CTIME);
	sb->utime = rk_get_le64(buf + O_UTIME);
	sb->events = rk_get_le64(buf + O_EVENTS);
	sb->level = (int32_t)rk_get_le32(buf + O_LEVEL);
	sb->layout = rk_get_le32(buf + O_LAYOUT);
	sb->chunk = rk_get_le64(buf + O_CHUNK);
	sb->nroles = rk_get_le32(buf + O_NROLES);
	sb->nentries = rk_get_le32(buf + O_NENTRIES);
	sb->this_role = rk_get_le32(buf + O_THIS_ROLE);
	sb->reshape_flags = rk_get_le32(buf + O_RESHAPE_FLAGS);
	sb->data_offset = rk_get_le64(buf + O_DATA_OFFSET);
	sb->data_size = rk_get_le64(buf + O_DATA_SIZE);
	sb->volume_size = rk_get_le64(buf + O_VOLUME_SIZE);
	sb->dev_size = rk_get_le64(buf + O_DEV_SIZE);
	sb->journal_offset = rk_get_le64(buf + O_JOURNAL_OFFSET);
	sb->journal_size = rk_get_le64(buf + O_JOURNAL_SIZE);
	sb->scrub_pos = rk_get_le64(buf + O_SCRUB_POS);
	sb->reshape_pos = rk_get_le64(buf + O_RESHAPE_POS);
	sb->reshape_new.chunk = rk_get_le64(buf + O_NEW_CHUNK);
	sb->reshape_new.data_offset = rk_get_le64(buf + O_NEW_DATA_OFFSET);
	sb->reshape_new.data_size = rk_get_le64(buf + O_NEW_DATA_SIZE);
	sb->reshape_new.level = (int32_t)rk_get_le32(buf + O_NEW_LEVEL);
	sb->reshape_new.layout = rk_get_le32(buf + O_NEW_LAYOUT);
	sb->reshape_new.nroles = rk_get_le32(buf + O_NEW_NROLES);
	memcpy(sb->reserved, buf + O_RESERVED, RK_SB_RESERVED_LEN);
	/* The table must fit the bytes the CRC covered before it is read. */
	if (sb->nentries < 1 || sb->nentries > RK_SB_MAX_ROLES || rk_sb_bytes_for(sb->nentries) != sb_bytes)
		return rk_fail(RK_E_CORRUPT, "nentries %u: does not match sb_bytes %u (1 to %u entries of %u bytes "
		               "after the %u-byte header, rounded up to %u)", sb->nentries, sb_bytes,
		               RK_SB_MAX_ROLES, RK_SB_ROLE_SIZE, RK_SB_HEADER_SIZE, RK_SB_ALIGN);
	for (uint32_t i = 0; i < sb->nentries; i++) {
		const uint8_t *p = buf + RK_SB_HEADER_SIZE + (size_t)i * RK_SB_ROLE_SIZE;
		struct rk_role *r = &sb->roles[i];
		memcpy(r->member_uuid, p + R_UUID, 16);
		r->state = rk_get_le32(p + R_STATE);
		r->flags = rk_get_le32(p + R_FLAGS);
		r->checkpoint = rk_get_le64(p + R_CHECKPOINT);
	}
	size_t tail = RK_SB_HEADER_SIZE + (size_t)sb->nentries * RK_SB_ROLE_SIZE;
	if (!all_zero(buf + tail, sb_bytes - tail))
		return rk_fail(RK_E_CORRUPT, "padding after the role table (bytes %zu to %u): must be zero", tail, sb_bytes);
	/* Bytes after the name's NUL must be NUL: the struct keeps all 32 and
	 * validate() checks them. */
	return validate(sb, dev_size, sb_bytes);
}

/* ---- construction ---- */

rk_err rk_sb_init(struct rk_sb *sb, const struct rk_sb_params *p)
{
	memset(sb, 0, sizeof *sb);
	uint64_t vol;
	const char *why;
	size_t nl = p->name ? strlen(p->name) : 0;
	if (nl > RK_SB_NAME_LEN)
		return rk_fail(RK_E_INVAL, "name \"%s\": longer than %u bytes", p->name, RK_SB_NAME_LEN);
	if (nl && !name_ok(p->name, nl, &why))
		return rk_fail(RK_E_INVAL, "name: contains %s", why);
	rk_err e = rk_sb_volume_size(p->level, p->layout, p->chunk, p->nroles, p->data_size, &vol);
	if (e)
		return refail(RK_E_INVAL, "");
	sb->version = RK_SB_VERSION;
	sb->nroles = sb->nentries = p->nroles;
	sb->sb_bytes = rk_sb_bytes_for(p->nroles);
	if (p->array_uuid)
		memcpy(sb->array_uuid, p->array_uuid, 16);
	else
		uuid_generate(sb->array_uuid);
	if (nl)
		memcpy(sb->name, p->name, nl);
	sb->ctime = sb->utime = (uint64_t)time(NULL);
	sb->level = p->level;
	sb->layout = p->layout;
	sb->chunk = p->chunk;
	sb->this_role = RK_ROLE_NONE;
	sb->array_state = RK_ARRAY_CLEAN;
	sb->data_offset = p->data_offset ? p->data_offset : RK_DATA_OFFSET_DEFAULT;
	sb->data_size = p->data_size;
	sb->volume_size = vol;
	for (uint32_t i = 0; i < p->nroles; i++) {
		if (p->missing && p->missing[i]) {
			sb->roles[i].state = RK_ROLE_EMPTY;
			continue;
		}
		sb->roles[i].state = RK_ROLE_ACTIVE;
		uuid_generate(sb->roles[i].member_uuid);
	}
	return RK_OK;
}

rk_err rk_sb_set_member(struct rk_sb *sb, uint32_t role, uint64_t dev_size)
{
	if (role >= sb->nentries || sb->roles[role].state == RK_ROLE_EMPTY)
		return rk_fail(RK_E_INVAL, "role %u: not a filled entry of the role table (%u entries)", role, sb->nentries);
	memcpy(sb->member_uuid, sb->roles[role].member_uuid, 16);
	sb->this_role = role;
	sb->dev_size = dev_size;
	sb->sb_offset = RK_SB_PRIMARY_OFF;
	return rk_sb_validate(sb, dev_size);
}

/* ---- names ---- */

const char *rk_role_state_name(uint32_t state)
{
	static const char *const n[] = { "empty", "active", "faulty", "rebuilding", "spare" };
	return state < RK_ROLE__COUNT ? n[state] : "unknown";
}

const char *rk_array_state_name(uint32_t state)
{
	return state == RK_ARRAY_CLEAN ? "clean" : state == RK_ARRAY_ACTIVE ? "active" : "unknown";
}

const char *rk_sb_feature_names(int kind, uint64_t mask, char *buf, size_t len)
{
	static const char *const incompat[] = { "journal", "reshape" };
	size_t o = 0;
	if (!len)
		return buf;
	buf[0] = 0;
	if (!mask) {
		snprintf(buf, len, "none");
		return buf;
	}
	uint64_t unknown = mask;
	if (kind == RK_FEAT_KIND_INCOMPAT) {
		for (unsigned b = 0; b < 2; b++) {
			if (!(mask >> b & 1))
				continue;
			int w = snprintf(buf + o, len - o, "%s%s", o ? "," : "", incompat[b]);
			if (w < 0 || (size_t)w >= len - o)
				return buf;
			o += (size_t)w;
			unknown &= ~(1ull << b);
		}
	}
	if (kind == RK_FEAT_KIND_INCOMPAT && (unknown & RK_FEAT_INCOMPAT_JLOG)) {
		int w = snprintf(buf + o, len - o, "%sjournal_log", o ? "," : "");
		if (w < 0 || (size_t)w >= len - o)
			return buf;
		o += (size_t)w;
		unknown &= ~RK_FEAT_INCOMPAT_JLOG;
	}
	if (unknown)
		snprintf(buf + o, len - o, "%s0x%llx", o ? "," : "", (unsigned long long)unknown);
	return buf;
}

void rk_sb_member_copy(struct rk_sb *out, const struct rk_sb *tmpl, const struct rk_sb *own)
{
	memcpy(out, tmpl, sizeof *out);
	memcpy(out->member_uuid, own->member_uuid, 16);
	out->this_role = own->this_role;
	out->sb_offset = own->sb_offset;
	out->dev_size = own->dev_size;
	out->data_offset = own->data_offset;
	out->journal_offset = own->journal_offset;
	out->journal_size = own->journal_size;
}

int rk_sb_behind(const struct rk_sb *own, const struct rk_sb *gen)
{
	return own && own->events < gen->events;
}

uint64_t rk_sb_member_data_offset(const struct rk_sb *t, const struct rk_sb *own)
{
	if ((own->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) && !(t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE))
		return t->data_offset;
	return own->data_offset;
}

void rk_sb_apply_geom(struct rk_sb *sb, const struct rk_geom_desc *d)
{
	const struct rk_geom_desc g = *d;   /* D may be SB's own reshape target */
	sb->level = g.level;
	sb->layout = g.layout;
	sb->chunk = g.chunk;
	sb->nroles = g.nroles;
	sb->data_offset = g.data_offset;
	sb->data_size = g.data_size;
}
