/* probe.c: what a member already holds: our superblock (either copy), then
 * libblkid's superblock (file systems, foreign RAID metadata) and partition
 * table probes; which parts of it hold data (non-zero bytes, a file
 * system's extent); and, the one writer here, wiping old signatures. */
#include "rk_probe.h"

#include <blkid/blkid.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "rk_le.h"
#include "rk_part.h"
#include "rk_sb.h"
#include "rk_util.h"

/* Largest single read while scanning. */
#define SCAN_BUF (4u * 1024u * 1024u)

static void copy_str(char *dst, size_t cap, const char *src)
{
	if (!src)
		src = "";
	snprintf(dst, cap, "%s", src);
}

/* A blkid value (LEN bytes, its NUL included) as it is, up to a NUL or
 * CAP - 1 bytes: some formats' UUIDs and labels hold raw bytes (a DDF GUID
 * is "Linux-MD" and binary), kept as found and escaped where they are
 * printed (rk_esc, rk_json_str). */
static void copy_raw(char *dst, size_t cap, const char *src, size_t len)
{
	size_t n = strnlen(src, len);
	if (n > cap - 1)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = 0;
}

static const char *lookup(blkid_probe pr, const char *name, size_t *len)
{
	const char *v = NULL;
	size_t l = 0;
	if (blkid_probe_lookup_value(pr, name, &v, &l) != 0)
		return NULL;
	if (len)
		*len = l;
	return v;
}

/* Words for common blkid types; the raw TYPE otherwise. */
static const char *type_words(const char *type, const char *usage)
{
	static const struct { const char *type, *words; } tab[] = {
		{ "linux_raid_member", "an md RAID member" },
		{ "ddf_raid_member", "a DDF RAID member (SNIA DDF)" },
		{ "isw_raid_member", "an Intel Matrix/IMSM RAID member" },
		{ "adaptec_raid_member", "an Adaptec RAID member" },
		{ "hpt37x_raid_member", "a HighPoint 37x RAID member" },
		{ "hpt45x_raid_member", "a HighPoint 45x RAID member" },
		{ "jmicron_raid_member", "a JMicron RAID member" },
		{ "lsi_mega_raid_member", "an LSI MegaRAID member" },
		{ "nvidia_raid_member", "an NVIDIA RAID member" },
		{ "promise_fasttrack_raid_member", "a Promise FastTrack RAID member" },
		{ "silicon_medley_raid_member", "a Silicon Image Medley RAID member" },
		{ "via_raid_member", "a VIA RAID member" },
		{ "LVM2_member", "an LVM2 physical volume" },
		{ "crypto_LUKS", "a LUKS encrypted volume" },
		{ "dos", "a DOS (MBR) partition table" },
		{ "gpt", "a GPT partition table" },
		{ "swap", "a swap area" },
	};
	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
		if (strcmp(type, tab[i].type) == 0)
			return tab[i].words;
	(void)usage;
	return NULL;
}

static void describe(struct rk_probe_result *r)
{
	const char *w = type_words(r->type, r->usage);
	char base[160];
	if (w)
		snprintf(base, sizeof base, "%s (%s)", w, r->type);
	else if (strcmp(r->usage, "filesystem") == 0)
		snprintf(base, sizeof base, "a%s %s file system",
		         strchr("aeiouAEIOU", r->type[0]) ? "n" : "", r->type);
	else
		snprintf(base, sizeof base, "%s signature (%s)", r->type,
		         r->usage[0] ? r->usage : "unknown usage");
	char extra[96] = "";
	size_t o = 0;
	if (r->version[0])
		o += (size_t)snprintf(extra + o, sizeof extra - o, " version %.20s", r->version);
	if (r->uuid[0] && o < sizeof extra)
		o += (size_t)snprintf(extra + o, sizeof extra - o, ", UUID %.40s", r->uuid);
	if (r->label[0] && o < sizeof extra)
		snprintf(extra + o, sizeof extra - o, ", label \"%.30s\"", r->label);
	snprintf(r->what, sizeof r->what, "%s%s", base, extra);
}

static rk_err probe_native(const char *path, struct rk_probe_result *r)
{
	rk_dev *d = NULL;
	rk_err e = rk_member_open(&d, path, RK_DEV_RDONLY);
	if (e)
		return e;
	struct rk_sb_read rd;
	e = rk_sb_read(d, &rd);
	rk_dev_close(d);
	if (e == RK_OK && rd.chosen >= 0 && rd.copy[rd.chosen].sb) {
		const struct rk_sb *sb = rd.copy[rd.chosen].sb;
		r->found = 1;
		copy_str(r->type, sizeof r->type, "raidkit");
		copy_str(r->usage, sizeof r->usage, "raid");
		char u[37];
		uuid_unparse_lower(sb->array_uuid, u);
		copy_str(r->uuid, sizeof r->uuid, u);
		copy_str(r->label, sizeof r->label, sb->name);
		snprintf(r->version, sizeof r->version, "%u", sb->version);
		char role[32];
		if (sb->this_role == RK_ROLE_NONE)
			snprintf(role, sizeof role, "a spare");
		else
			snprintf(role, sizeof role, "role %u", sb->this_role);
		snprintf(r->what, sizeof r->what,
		         "a raidkit member (%s of %u, events %llu) of array UUID %s%s%.32s%s",
		         role, sb->nroles, (unsigned long long)sb->events, u,
		         sb->name[0] ? " \"" : "", sb->name, sb->name[0] ? "\"" : "");
	}
	rk_sb_read_free(&rd);
	if (e == RK_E_NOSB)
		e = RK_OK;
	return e;
}

rk_err rk_probe_occupant(const char *path, int force, char *what, size_t cap, int *found)
{
	struct rk_probe_result pr;
	memset(&pr, 0, sizeof pr);
	*found = 0;
	if (cap)
		what[0] = 0;
	rk_err e = rk_probe_path(path, &pr);
	if (e)
		return e;
	*found = pr.found;
	const char *words = pr.what[0] ? pr.what : pr.type;
	if (pr.found && cap)
		snprintf(what, cap, "%s", words);
	if (pr.found && !force)
		return rk_fail(RK_E_EXISTS, "%s: holds %s; use --force to overwrite", path, words);
	return RK_OK;
}

/* A libblkid probe of PATH, or of the partition PATH names (PATH:pN,
 * rk_part.h): then *FD is the disk's descriptor for the caller to close
 * after blkid_free_probe (else -1).  NULL when it cannot be made. */
static blkid_probe new_probe(const char *path, int *fd)
{
	char *disk = NULL;
	uint64_t off = 0, size = 0;
	*fd = -1;
	if (!rk_part_locate(path, &disk, &off, &size))
		return blkid_new_probe_from_filename(path);
	blkid_probe pr = blkid_new_probe();
	*fd = open(disk, O_RDONLY | O_CLOEXEC);
	free(disk);
	if (pr && *fd >= 0 && off <= INT64_MAX && size <= INT64_MAX &&
	    blkid_probe_set_device(pr, *fd, (blkid_loff_t)off, (blkid_loff_t)size) == 0)
		return pr;
	if (pr)
		blkid_free_probe(pr);
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
	return NULL;
}

static rk_err probe_blkid(const char *path, struct rk_probe_result *r)
{
	int fd;
	blkid_probe pr = new_probe(path, &fd);
	if (!pr)
		return rk_fail(RK_E_OPEN, "%s: libblkid cannot probe it", path);
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE |
	                                  BLKID_SUBLKS_UUID | BLKID_SUBLKS_LABEL |
	                                  BLKID_SUBLKS_VERSION);
	blkid_probe_enable_partitions(pr, 1);
	blkid_probe_set_partitions_flags(pr, 0);
	int rc = blkid_do_safeprobe(pr);
	int ambivalent = 0;
	if (rc == -2) {
		/* Several signatures: report the first, and say so. */
		ambivalent = 1;
		blkid_reset_probe(pr);
		rc = blkid_do_probe(pr);
	}
	if (rc < 0) {
		blkid_free_probe(pr);
		if (fd >= 0)
			close(fd);
		return rk_fail(RK_E_IO, "%s: libblkid probing failed", path);
	}
	if (rc == 0) {
		size_t len = 0;
		const char *v;
		if ((v = lookup(pr, "TYPE", NULL))) {
			copy_str(r->type, sizeof r->type, v);
			copy_str(r->usage, sizeof r->usage, lookup(pr, "USAGE", NULL));
		} else if ((v = lookup(pr, "PTTYPE", NULL))) {
			copy_str(r->type, sizeof r->type, v);
			copy_str(r->usage, sizeof r->usage, "partition table");
			if ((v = lookup(pr, "PTUUID", &len)))
				copy_raw(r->uuid, sizeof r->uuid, v, len);
		}
		if (r->type[0]) {
			r->found = 1;
			if ((v = lookup(pr, "UUID", &len)))
				copy_raw(r->uuid, sizeof r->uuid, v, len);
			if ((v = lookup(pr, "LABEL", &len)))
				copy_raw(r->label, sizeof r->label, v, len);
			if ((v = lookup(pr, "VERSION", &len)))
				copy_raw(r->version, sizeof r->version, v, len);
			describe(r);
			if (ambivalent) {
				size_t n = strlen(r->what);
				snprintf(r->what + n, sizeof r->what - n,
				         " (and other signatures: ambivalent)");
			}
		}
	}
	blkid_free_probe(pr);
	if (fd >= 0)
		close(fd);
	return RK_OK;
}

rk_err rk_probe_path(const char *path, struct rk_probe_result *r)
{
	if (!path || !r)
		return rk_fail(RK_E_INVAL, "rk_probe_path: no path");
	memset(r, 0, sizeof *r);
	rk_err e = probe_native(path, r);
	if (e)
		return e;
	if (r->found)
		return RK_OK;
	return probe_blkid(path, r);
}

rk_err rk_probe_foreign(const char *path, struct rk_probe_result *r)
{
	if (!path || !r)
		return rk_fail(RK_E_INVAL, "rk_probe_foreign: no path");
	memset(r, 0, sizeof *r);
	return probe_blkid(path, r);
}

/* ---- which bytes hold data ---- */

int rk_probe_fd_size(int fd, uint64_t *size, int *is_reg)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return -1;
	if (S_ISREG(st.st_mode)) {
		*size = (uint64_t)st.st_size;
		*is_reg = 1;
		return 0;
	}
	*is_reg = 0;
	if (S_ISBLK(st.st_mode)) {
		uint64_t s;
		if (ioctl(fd, BLKGETSIZE64, &s) != 0)
			return -1;
		*size = s;
		return 0;
	}
	errno = ENOTSUP;
	return -1;
}

rk_err rk_probe_scan_nonzero(const char *path, uint64_t base, uint64_t off, uint64_t len, uint64_t row,
                           rk_probe_mark_fn mark, void *mctx, int stop_first, uint64_t *scanned,
                           void (*tick)(void *ctx, uint64_t done), void *tctx)
{
	uint64_t end;
	if (rk_add_ovf(off, len, &end) || off < base || row == 0)
		return rk_fail(RK_E_RANGE, "%s: scan range overflows", path);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return rk_fail(RK_E_OPEN, "%s: cannot open to scan: %s", path, strerror(errno));
	uint64_t dsize;
	int is_reg;
	if (rk_probe_fd_size(fd, &dsize, &is_reg) != 0) {
		int e = errno;
		close(fd);
		return rk_fail(RK_E_OPEN, "%s: cannot size: %s", path, strerror(e));
	}
	if (end > dsize)
		end = dsize;
	size_t bsz = SCAN_BUF;
	uint8_t *buf = malloc(bsz);
	if (!buf) {
		close(fd);
		return rk_fail(RK_E_NOMEM, "%s: no memory for the scan buffer", path);
	}
	rk_err err = RK_OK;
	uint64_t pos = off, last_marked = UINT64_MAX, done0 = 0;
	int stop = 0;
	while (pos < end && !stop) {
		uint64_t ext_end = end;
		if (is_reg) {
			off_t d = lseek(fd, (off_t)pos, SEEK_DATA);
			if (d < 0) {
				if (errno == ENXIO)
					break;          /* only holes from here on */
				if (errno != EINVAL && errno != ENOTSUP) {
					err = rk_fail(RK_E_IO, "%s: SEEK_DATA: %s", path, strerror(errno));
					break;
				}
				d = (off_t)pos;     /* no SEEK_DATA: read everything */
			} else {
				off_t h = lseek(fd, d, SEEK_HOLE);
				if (h > d && (uint64_t)h < ext_end)
					ext_end = (uint64_t)h;
			}
			if ((uint64_t)d >= end)
				break;
			if ((uint64_t)d > pos)
				pos = (uint64_t)d;
		}
		while (pos < ext_end && !stop) {
			/* Do not cross a row boundary inside one row check. */
			uint64_t r = (pos - base) / row;
			uint64_t row_end = base + (r + 1) * row;
			if (row_end < base + r * row)    /* overflow: cap */
				row_end = UINT64_MAX;
			uint64_t n = ext_end - pos;
			if (n > bsz)
				n = bsz;
			if (r == last_marked) {      /* already known dirty: skip the rest of the row */
				pos = row_end < ext_end ? row_end : ext_end;
				continue;
			}
			ssize_t got = pread(fd, buf, (size_t)n, (off_t)pos);
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0) {
				err = rk_fail(RK_E_IO, "%s: read error at offset %llu while scanning: %s", path,
				              (unsigned long long)pos, got < 0 ? strerror(errno) : "end of data");
				stop = 1;
				break;
			}
			if (scanned)
				*scanned += (uint64_t)got;
			/* Walk the rows inside what was read. */
			uint64_t p = pos, pend = pos + (uint64_t)got;
			while (p < pend) {
				uint64_t rr = (p - base) / row;
				uint64_t re = base + (rr + 1) * row;
				uint64_t segend = re < pend ? re : pend;
				if (rr != last_marked && !rk_buf_is_zero(buf + (p - pos), (size_t)(segend - p))) {
					last_marked = rr;
					uint64_t at = p;
					const uint8_t *q = buf + (p - pos);
					while (!q[at - p])
						at++;
					if (mark(mctx, rr, at) || stop_first) {
						stop = 1;
						break;
					}
				}
				p = segend;
			}
			pos = pend;
			if (tick && pos - off - done0 >= 256u * 1024u * 1024u) {
				done0 = pos - off;
				tick(tctx, done0);
			}
		}
	}
	free(buf);
	close(fd);
	return err;
}

struct zero_ctx {
	int found;
	uint64_t at;
};

static int zero_mark(void *ctx, uint64_t row, uint64_t at)
{
	struct zero_ctx *z = ctx;
	(void)row;
	z->found = 1;
	z->at = at;
	return 1;
}

rk_err rk_probe_range_is_zero(const char *path, uint64_t off, uint64_t len,
                               int *is_zero, uint64_t *nonzero_at, uint64_t *scanned)
{
	struct zero_ctx z = {0, 0};
	if (!path || !is_zero)
		return rk_fail(RK_E_INVAL, "rk_probe_range_is_zero: no path");
	rk_err e = rk_probe_scan_nonzero(path, off, off, len, 1ull << 40, zero_mark, &z, 1, scanned, NULL, NULL);
	if (e)
		return e;
	*is_zero = !z.found;
	if (z.found && nonzero_at)
		*nonzero_at = z.at;
	return RK_OK;
}


int rk_probe_fs_extent(rk_err (*read)(void *ctx, void *buf, uint64_t len, uint64_t off), void *ctx,
                       uint64_t volume_size, uint64_t *extent, char *what, size_t whatlen)
{
	enum { PROBE = 128 * 1024 };
	uint8_t *b = calloc(1, PROBE);
	int found = 0;
	if (!b)
		return 0;
	uint64_t len = volume_size < PROBE ? volume_size : PROBE;
	if (read(ctx, b, len, 0))
		goto out;
	if (len >= 2048 && rk_get_le16(b + 1024 + 56) == 0xEF53) {
		uint32_t lg = rk_get_le32(b + 1024 + 24);
		uint32_t incompat = rk_get_le32(b + 1024 + 0x60);
		uint64_t blocks = rk_get_le32(b + 1024 + 4);
		if (incompat & 0x80)   /* 64bit */
			blocks |= (uint64_t)rk_get_le32(b + 1024 + 0x150) << 32;
		if (lg <= 6) {
			*extent = blocks << (10 + lg);
			snprintf(what, whatlen, "an %s file system of %llu bytes",
			         (incompat & 0x40) ? "ext4" : "ext2/ext3", (unsigned long long)*extent);
			found = 1;
		}
	} else if (len >= 16 && !memcmp(b, "XFSB", 4)) {
		uint64_t bs = rk_get_be32(b + 4), db = rk_get_be64(b + 8);
		if (bs >= 512 && bs <= 65536 && !rk_mul_ovf(bs, db, extent)) {
			snprintf(what, whatlen, "an XFS file system of %llu bytes", (unsigned long long)*extent);
			found = 1;
		}
	} else if (len >= 65536 + 0x78 && !memcmp(b + 65536 + 64, "_BHRfS_M", 8)) {
		*extent = rk_get_le64(b + 65536 + 0x70);
		snprintf(what, whatlen, "a btrfs file system of %llu bytes", (unsigned long long)*extent);
		found = 1;
	}
out:
	free(b);
	return found;
}

/* ---- wiping ---- */

rk_err rk_probe_wipe_signatures(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return rk_fail(RK_E_OPEN, "%s: cannot open to wipe old signatures: %s", path, strerror(errno));
	blkid_probe pr = blkid_new_probe();
	if (!pr) {
		close(fd);
		return rk_fail(RK_E_NOMEM, "%s: blkid probe", path);
	}
	rk_err e = RK_OK;
	if (blkid_probe_set_device(pr, fd, 0, 0) != 0) {
		e = rk_fail(RK_E_IO, "%s: blkid cannot use the member", path);
	} else {
		blkid_probe_enable_superblocks(pr, 1);
		blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_MAGIC | BLKID_SUBLKS_BADCSUM);
		blkid_probe_enable_partitions(pr, 1);
		blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC | BLKID_PARTS_FORCE_GPT);
		for (int guard = 0; guard < 64 && blkid_do_probe(pr) == 0; guard++) {
			if (blkid_do_wipe(pr, 0) != 0) {
				e = rk_fail(RK_E_IO, "%s: cannot wipe an old signature: %s", path, strerror(errno));
				break;
			}
		}
	}
	blkid_free_probe(pr);
	if (fsync(fd) != 0 && !e)
		e = rk_fail(RK_E_IO, "%s: flush after wiping: %s", path, strerror(errno));
	close(fd);
	return e;
}
