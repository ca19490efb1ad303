/* sbio.c: both superblock copies of a member: reading, choosing, writing.
 *
 * The reader trusts the valid copy with the higher event count and says why
 * in words; the writer updates the copies one at a time with a flush in
 * between, the untrusted one first, so a torn update always leaves one
 * good copy (spec/format.md, "Copies").
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rk_sb.h"

/* snprintf that may cut a long sentence short, on purpose. */
static void say(char *dst, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *dst, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (vsnprintf(dst, n, fmt, ap) < 0)
		dst[0] = 0;
	va_end(ap);
}

/* Zeroed I/O buffers of LEN bytes (a multiple of RK_SB_ALIGN, at most a
 * copy's area) aligned for devices opened with O_DIRECT. */
static uint8_t *area_buf_len(size_t len)
{
	uint8_t *b = aligned_alloc(RK_SB_ALIGN, len);
	if (b)
		memset(b, 0, len);
	return b;
}

static uint8_t *area_buf(void)
{
	return area_buf_len(RK_SB_AREA);
}

static void copy_reset(struct rk_sb_copy *c, uint64_t off)
{
	free(c->sb);
	memset(c, 0, sizeof *c);
	c->offset = off;
}

/* Reads and decodes the copy at OFF into C.  Only memory failures are
 * returned; everything else is the copy's status and sentence. */
static rk_err read_copy(rk_dev *d, uint64_t off, struct rk_sb_copy *c, uint8_t *buf)
{
	uint64_t size = rk_dev_size(d);
	copy_reset(c, off);
	if (off == 0 || off >= size) {
		c->status = RK_COPY_ABSENT;
		c->err = RK_E_SHORT;
		say(c->why, sizeof c->why, "the device (%llu bytes) is too small to hold this copy",
		         (unsigned long long)size);
		return RK_OK;
	}
	size_t len = size - off < RK_SB_AREA ? (size_t)(size - off) : RK_SB_AREA;
	rk_err e = rk_dev_pread(d, buf, len, off);
	if (e) {
		c->status = RK_COPY_BAD;
		c->err = e;
		say(c->why, sizeof c->why, "cannot read it: %s", rk_errmsg());
		return RK_OK;
	}
	struct rk_sb *sb = malloc(sizeof *sb);
	if (!sb)
		return rk_fail(RK_E_NOMEM, "%s: out of memory reading a superblock", rk_dev_path(d));
	e = rk_sb_decode(sb, buf, len, off, size);
	if (e) {
		free(sb);
		c->status = e == RK_E_NOSB ? RK_COPY_ABSENT : RK_COPY_BAD;
		c->err = e;
		say(c->why, sizeof c->why, "%s", rk_errmsg());
		return RK_OK;
	}
	c->status = RK_COPY_OK;
	c->sb = sb;
	return RK_OK;
}

/* Whether two valid copies say the same thing apart from where they live. */
static int same_content(struct rk_sb *a, struct rk_sb *b)
{
	uint64_t off = b->sb_offset;
	b->sb_offset = a->sb_offset;   /* decode zeroed both structs, padding included */
	int same = memcmp(a, b, sizeof *a) == 0;
	b->sb_offset = off;
	return same;
}

static void choose(struct rk_sb_read *r)
{
	struct rk_sb_copy *p = &r->copy[0], *b = &r->copy[1];
	char extra[160] = "";
	if (p->status == RK_COPY_OK && b->status == RK_COPY_OK) {
		struct rk_sb *ps = p->sb, *bs = b->sb;
		if (memcmp(ps->array_uuid, bs->array_uuid, 16))
			say(extra, sizeof extra, "; warning: the copies name different arrays");
		else if (memcmp(ps->member_uuid, bs->member_uuid, 16))
			say(extra, sizeof extra, "; warning: the copies name different members");
		if (ps->events != bs->events) {
			r->chosen = bs->events > ps->events;
			const char *w = r->chosen ? "backup" : "primary", *l = r->chosen ? "primary" : "backup";
			say(r->why, sizeof r->why, "%s copy chosen: events %llu against %llu on the %s copy, "
			         "which is older (an update that did not reach both copies)%s", w,
			         (unsigned long long)r->copy[r->chosen].sb->events,
			         (unsigned long long)r->copy[!r->chosen].sb->events, l, extra);
		} else {
			r->chosen = 0;
			if (same_content(ps, bs))
				say(r->why, sizeof r->why, "primary copy chosen: both copies valid and identical "
				         "(events %llu)%s", (unsigned long long)ps->events, extra);
			else
				say(r->why, sizeof r->why, "primary copy chosen: both copies valid with events %llu "
				         "but they disagree (written by an update that did not bump events?)%s",
				         (unsigned long long)ps->events, extra);
		}
		return;
	}
	if (p->status == RK_COPY_OK || b->status == RK_COPY_OK) {
		r->chosen = p->status == RK_COPY_OK ? 0 : 1;
		const struct rk_sb_copy *o = &r->copy[!r->chosen];
		say(r->why, sizeof r->why, "%s copy chosen (events %llu): the %s copy at %llu is %s: %s",
		         r->chosen ? "backup" : "primary", (unsigned long long)r->copy[r->chosen].sb->events,
		         r->chosen ? "primary" : "backup", (unsigned long long)o->offset,
		         o->status == RK_COPY_ABSENT ? "absent" : "bad", o->why);
		return;
	}
	r->chosen = -1;
	say(r->why, sizeof r->why, "no valid superblock copy: primary at %llu %s (%s); backup at %llu %s (%s)",
	         (unsigned long long)p->offset, p->status == RK_COPY_ABSENT ? "absent" : "bad", p->why,
	         (unsigned long long)b->offset, b->status == RK_COPY_ABSENT ? "absent" : "bad", b->why);
}

rk_err rk_sb_read(rk_dev *d, struct rk_sb_read *out)
{
	memset(out, 0, sizeof *out);
	out->chosen = -1;
	uint64_t size = rk_dev_size(d);
	uint8_t *buf = area_buf();
	if (!buf)
		return rk_fail(RK_E_NOMEM, "%s: out of memory reading superblocks", rk_dev_path(d));
	rk_err e = read_copy(d, size > RK_SB_PRIMARY_OFF ? RK_SB_PRIMARY_OFF : 0, &out->copy[0], buf);
	if (!e)
		e = read_copy(d, rk_sb_backup_offset(size), &out->copy[1], buf);
	/* An image that grew (padding appended, a larger disk) keeps its backup
	 * where the recorded size put it. */
	if (!e && out->copy[1].status != RK_COPY_OK && out->copy[0].status == RK_COPY_OK) {
		uint64_t rec = out->copy[0].sb->dev_size, alt = rk_sb_backup_offset(rec);
		if (rec < size && alt && alt != out->copy[1].offset) {
			struct rk_sb_copy c = { 0 };
			e = read_copy(d, alt, &c, buf);
			if (!e && c.status == RK_COPY_OK) {
				char note[256];
				say(note, sizeof note, "found at %llu, the place for the recorded dev_size %llu "
				         "(the device now has %llu bytes)", (unsigned long long)alt,
				         (unsigned long long)rec, (unsigned long long)size);
				copy_reset(&out->copy[1], 0);
				out->copy[1] = c;
				say(out->copy[1].why, sizeof out->copy[1].why, "%s", note);
			} else {
				free(c.sb);
			}
		}
	}
	free(buf);
	if (e)
		return e;
	choose(out);
	if (out->chosen < 0)
		return rk_fail(RK_E_NOSB, "%s: %s", rk_dev_path(d), out->why);
	return RK_OK;
}

void rk_sb_read_free(struct rk_sb_read *r)
{
	if (!r)
		return;
	if (r->copy[1].sb == r->copy[0].sb)   /* one struct shared by both copies (discovery) */
		r->copy[1].sb = NULL;
	for (int i = 0; i < 2; i++) {
		free(r->copy[i].sb);
		r->copy[i].sb = NULL;
	}
}

/* Writes LEN bytes of the copy in BUF at OFF, then flushes. */
static rk_err write_one(rk_dev *d, const uint8_t *buf, size_t len, uint64_t off, const char *which)
{
	rk_err e = rk_dev_pwrite(d, buf, len, off);
	if (!e)
		e = rk_dev_flush(d);
	if (e) {
		char m[512];
		say(m, sizeof m, "%s", rk_errmsg());
		return rk_fail(e, "%s: writing the %s superblock copy at %llu: %s", rk_dev_path(d), which,
		               (unsigned long long)off, m);
	}
	return RK_OK;
}

/* The two copies of SB for device D, each ALEN zero-padded bytes (at least
 * sb_bytes, a multiple of RK_SB_ALIGN, at most RK_SB_AREA) in BUF[i]
 * (allocated here: the caller frees them) for offset OFF[i]. */
static rk_err encode_both(rk_dev *d, const struct rk_sb *sb, size_t alen, uint8_t *buf[2], uint64_t off[2])
{
	const char *path = rk_dev_path(d);
	uint64_t size = rk_dev_size(d);
	uint64_t devsz = sb->dev_size ? sb->dev_size : size;
	buf[0] = buf[1] = NULL;
	if (devsz > size)
		return rk_fail(RK_E_SHORT, "%s: superblock records dev_size %llu but the device has %llu bytes", path,
		               (unsigned long long)devsz, (unsigned long long)size);
	if (sb->feat_ro_compat & ~RK_FEAT_RO_COMPAT_SUPP)
		return rk_fail(RK_E_FEATURE, "%s: ro_compat features 0x%llx unknown to this build: refusing to write",
		               path, (unsigned long long)(sb->feat_ro_compat & ~RK_FEAT_RO_COMPAT_SUPP));
	off[0] = RK_SB_PRIMARY_OFF;
	off[1] = rk_sb_backup_offset(devsz);
	struct rk_sb *t = malloc(sizeof *t);
	buf[0] = area_buf_len(alen);
	buf[1] = area_buf_len(alen);
	rk_err e = RK_OK;
	if (!t || !buf[0] || !buf[1]) {
		e = rk_fail(RK_E_NOMEM, "%s: out of memory writing superblocks", path);
		goto out;
	}
	/* the header and the entries encoded (a checkpoint per batch writes
	 * this: not the whole 64 KiB table) */
	uint32_t ne = sb->nentries < RK_SB_MAX_ROLES ? sb->nentries : RK_SB_MAX_ROLES;
	memcpy(t, sb, offsetof(struct rk_sb, roles) + ne * sizeof sb->roles[0]);
	t->dev_size = devsz;
	for (int i = 0; i < 2 && !e; i++) {
		t->sb_offset = off[i];
		if ((e = rk_sb_encode(t, buf[i], alen))) {
			char m[512];
			say(m, sizeof m, "%s", rk_errmsg());
			e = rk_fail(e, "%s: refusing to write an invalid superblock: %s", path, m);
		}
	}
out:
	free(t);
	if (e) {
		free(buf[0]);
		free(buf[1]);
		buf[0] = buf[1] = NULL;
	}
	return e;
}

rk_err rk_sb_write(rk_dev *d, const struct rk_sb *sb)
{
	uint8_t *buf[2];
	uint64_t off[2];
	struct rk_sb_read cur;
	memset(&cur, 0, sizeof cur);
	rk_err e = encode_both(d, sb, RK_SB_AREA, buf, off);
	if (e)
		return e;
	/* Keep the copy readers trust now intact until the other one holds the
	 * new contents durably. */
	e = rk_sb_read(d, &cur);
	if (e == RK_E_NOMEM)
		goto out;
	int first = cur.chosen == 1 ? 0 : 1;
	if ((e = write_one(d, buf[first], RK_SB_AREA, off[first], first ? "backup" : "primary")))
		goto out;
	e = write_one(d, buf[!first], RK_SB_AREA, off[!first], first ? "primary" : "backup");
out:
	rk_sb_read_free(&cur);
	free(buf[0]);
	free(buf[1]);
	return e;
}

rk_err rk_sb_write_known(rk_dev *d, const struct rk_sb *sb, struct rk_sb_wstate *ws)
{
	uint8_t *buf[2];
	uint64_t off[2];
	uint32_t sbb = sb->sb_bytes ? sb->sb_bytes : rk_sb_bytes_for(sb->nentries);
	/* only what the known path writes is encoded (the rest of each area
	 * is zeros already); a full area for anything else */
	size_t alen = RK_SB_AREA;
	if (ws->known && ws->bytes <= RK_SB_AREA && sbb <= RK_SB_AREA)
		alen = ((ws->bytes > sbb ? ws->bytes : sbb) + RK_SB_ALIGN - 1) / RK_SB_ALIGN * RK_SB_ALIGN;
	rk_err e = encode_both(d, sb, alen, buf, off);
	if (e) {
		ws->known = 0;
		return e;
	}
	if (!ws->known || ws->backup_off != off[1] || ws->bytes > RK_SB_AREA || sbb > RK_SB_AREA) {
		free(buf[0]);
		free(buf[1]);
		ws->known = 0;
		if ((e = rk_sb_write(d, sb)))
			return e;
	} else {
		/* Both copies identical: readers trust the primary, so the backup
		 * goes first (the order rk_sb_write's reading would pick). */
		size_t len = ws->bytes > sbb ? ws->bytes : sbb;
		ws->known = 0;
		e = write_one(d, buf[1], len, off[1], "backup");
		if (!e)
			e = write_one(d, buf[0], len, off[0], "primary");
		free(buf[0]);
		free(buf[1]);
		if (e)
			return e;
	}
	ws->known = 1;
	ws->bytes = sbb;
	ws->backup_off = off[1];
	return RK_OK;
}
