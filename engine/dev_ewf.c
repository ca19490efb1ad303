/* dev_ewf.c: E01 (Expert Witness / EnCase) images through libewf, read-only
 * (spec/images.md).  Given the first segment, libewf_glob finds the others
 * (disk.E02 ...); reads are libewf's media reads.  One libewf handle is
 * not safe to share between threads, and the engine reads a member from
 * several pool threads: every call on a handle holds its mutex.
 *
 * Every segment is hostile: before libewf sees a file, its file header and
 * first section descriptor are checked (signature, Adler-32, offsets inside
 * the file), so that junk is refused with a sentence of ours; a chunk whose
 * checksum fails is a read error (RK_E_IO), never data. */
#include "rk_dev.h"
#include "dev_image.h"
#include "rk_le.h"
#include "rk_util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libewf.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static const uint8_t SIG_EVF[8]  = { 'E', 'V', 'F', 0x09, 0x0d, 0x0a, 0xff, 0x00 };
static const uint8_t SIG_LVF[8]  = { 'L', 'V', 'F', 0x09, 0x0d, 0x0a, 0xff, 0x00 };
static const uint8_t SIG_EVF2[8] = { 'E', 'V', 'F', '2', 0x0d, 0x0a, 0x81, 0x00 };
static const uint8_t SIG_LEF2[8] = { 'L', 'E', 'F', '2', 0x0d, 0x0a, 0x81, 0x00 };

#define EWF1_FILE_HDR 13u   /* signature, 0x01, segment number (LE16), 0x0000 */
#define EWF1_SECTION  76u
#define EWF_OPEN_FILES 32   /* segment files libewf keeps open per image */   /* type[16], next (LE64), size (LE64), pad[40], Adler-32 (LE32) */

int dev_ewf_signature(const uint8_t sig[8])
{
	if (!memcmp(sig, SIG_EVF, 8) || !memcmp(sig, SIG_EVF2, 8))
		return 1;
	if (!memcmp(sig, SIG_LVF, 8) || !memcmp(sig, SIG_LEF2, 8))
		return 2;
	return 0;
}

uint32_t dev_ewf_segment_number(const uint8_t *hdr, size_t len)
{
	if (len < EWF1_FILE_HDR || memcmp(hdr, SIG_EVF, 8) != 0)
		return 0;
	return rk_get_le16(hdr + 9);
}

struct ewf {
	libewf_handle_t *h;
	pthread_mutex_t mu;       /* every call on h */
	char **names;             /* the segment files, in order (malloc'd) */
	int nnames;
};

/* libewf's error as one line (its innermost message: the cause), freed. */
static void ewf_msg(libewf_error_t **err, char *buf, size_t cap)
{
	snprintf(buf, cap, "libewf gave no reason");
	if (!err || !*err)
		return;
	char all[2048] = "";
	if (libewf_error_sprint(*err, all, sizeof all) > 0) {
		char *nl = strchr(all, '\n');
		if (nl)
			*nl = 0;
		if (all[0])
			snprintf(buf, cap, "%s", all);
	}
	libewf_error_free(err);
}

#define EWF1_MAX_SECTIONS 1000000u   /* bounds the walk of a hostile chain */

/* Walks the section chain of the EWF1 segment open as FD (SIZE bytes,
 * named PATH) from its first descriptor: each one whole, its Adler-32
 * right, its next offset forward and inside the file, up to the "next" or
 * "done" section that ends a segment (*LAST_DONE: which).  RK_E_CORRUPT
 * naming PATH and the offset otherwise. */
static rk_err walk_sections(int fd, uint64_t size, const char *path, int *last_done)
{
	uint64_t off = EWF1_FILE_HDR;
	for (uint32_t k = 0; k < EWF1_MAX_SECTIONS; k++) {
		uint8_t s[EWF1_SECTION];
		if (off > size || size - off < EWF1_SECTION || pread(fd, s, sizeof s, (off_t)off) != (ssize_t)sizeof s)
			return rk_fail(RK_E_CORRUPT, "%s: truncated E01 segment: it ends (%llu bytes) where a section "
			               "should start (byte %llu)", path, (unsigned long long)size, (unsigned long long)off);
		if ((uint32_t)adler32(1, s, 72) != rk_get_le32(s + 72))
			return rk_fail(RK_E_CORRUPT, "%s: corrupt E01 segment: the section at byte %llu fails its checksum",
			               path, (unsigned long long)off);
		uint64_t next = rk_get_le64(s + 16);
		int done = !memcmp(s, "done", 5), nx = !memcmp(s, "next", 5);
		if (done || nx) {
			*last_done = done;
			return RK_OK;
		}
		if (next <= off || next > size)
			return rk_fail(RK_E_CORRUPT, "%s: truncated or corrupt E01 segment: the section at byte %llu "
			               "points %s (byte %llu of %llu)", path, (unsigned long long)off,
			               next <= off ? "backwards" : "past its end", (unsigned long long)next,
			               (unsigned long long)size);
		off = next;
	}
	return rk_fail(RK_E_CORRUPT, "%s: corrupt E01 segment: more than %u sections", path, EWF1_MAX_SECTIONS);
}

/* Checks segment PATH's EWF1 file header and its section chain before
 * libewf parses it (walk_sections; *LAST_DONE as there): RK_E_CORRUPT
 * naming PATH when they are not sound.  EWF2 segments are left to libewf
 * (*LAST_DONE -1). */
static rk_err precheck(const char *path, int *last_done)
{
	uint8_t b[EWF1_FILE_HDR];
	struct stat st;
	*last_done = -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return rk_fail(RK_E_OPEN, "%s: cannot open: %s", path, strerror(errno));
	ssize_t r = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? pread(fd, b, sizeof b, 0) : -1;
	rk_err e = RK_OK;
	if (r >= 8 && !memcmp(b, SIG_EVF2, 8))
		e = RK_OK;
	else if (r != (ssize_t)sizeof b)
		e = rk_fail(RK_E_CORRUPT, "%s: truncated E01 segment (%lld bytes, no file header)", path,
		            r < 0 ? 0LL : (long long)st.st_size);
	else if (memcmp(b, SIG_EVF, 8) != 0 || b[8] != 1 || rk_get_le16(b + 9) == 0)
		e = rk_fail(RK_E_CORRUPT, "%s: not an E01 segment (bad file header)", path);
	else
		e = walk_sections(fd, (uint64_t)st.st_size, path, last_done);
	close(fd);
	return e;
}

/* Serialised media read: [off, off+len) inside the media (dev.c). */
static rk_err ewf_read_locked(rk_dev *d, struct ewf *w, uint8_t *p, size_t len, uint64_t off)
{
	libewf_error_t *err = NULL;
	char why[300];
	while (len > 0) {
		ssize_t r = libewf_handle_read_random(w->h, p, len, (off64_t)off, &err);
		if (r <= 0 || (size_t)r > len) {
			ewf_msg(&err, why, sizeof why);
			return rk_fail(RK_E_IO, "%s: E01 read error at media offset %llu: %s", rk_dev_path(d),
			               (unsigned long long)off, r == 0 ? "no data (truncated image?)" : why);
		}
		p += r;
		len -= (size_t)r;
		off += (uint64_t)r;
	}
	return RK_OK;
}

/* RK_E_IO when [off, off+len) touches a chunk libewf found corrupt (its
 * list of checksum errors, in sectors; it keeps growing while reading). */
static rk_err check_crc(rk_dev *d, struct ewf *w, uint64_t off, size_t len)
{
	uint32_t n = 0, bps = rk_dev_sector(d);
	if (libewf_handle_get_number_of_checksum_errors(w->h, &n, NULL) != 1)
		return RK_OK;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t s0 = 0, ns = 0;
		if (libewf_handle_get_checksum_error(w->h, i, &s0, &ns, NULL) != 1)
			continue;
		uint64_t a, nb, b;
		if (rk_mul_ovf(s0, bps, &a) || rk_mul_ovf(ns, bps, &nb) || rk_add_ovf(a, nb, &b))
			b = UINT64_MAX;   /* a list entry past any media: take it as reaching the end */
		if (a < off + len && off < b)
			return rk_fail(RK_E_IO, "%s: E01 chunk checksum error in media bytes %llu to %llu "
			               "(corrupt image data)", rk_dev_path(d), (unsigned long long)a, (unsigned long long)b);
	}
	return RK_OK;
}

static rk_err ewf_pread(rk_dev *d, void *buf, size_t len, uint64_t off)
{
	struct ewf *w = rk_dev_priv(d);
	pthread_mutex_lock(&w->mu);
	rk_err e = ewf_read_locked(d, w, buf, len, off);
	if (!e)
		e = check_crc(d, w, off, len);
	pthread_mutex_unlock(&w->mu);
	return e;
}

static rk_err ewf_pwrite(rk_dev *d, const void *buf, size_t len, uint64_t off)
{
	(void)buf;
	(void)len;
	(void)off;
	return rk_fail(RK_E_READONLY, "%s is an E01 image: raidkit reads it but never writes to it", rk_dev_path(d));
}

static void ewf_free(struct ewf *w)
{
	if (!w)
		return;
	if (w->h) {
		libewf_handle_close(w->h, NULL);
		libewf_handle_free(&w->h, NULL);
	}
	for (int i = 0; i < w->nnames; i++)
		free(w->names[i]);
	free(w->names);
	pthread_mutex_destroy(&w->mu);
	free(w);
}

static void ewf_close(rk_dev *d)
{
	ewf_free(rk_dev_priv(d));
}

const struct rk_dev_ops dev_ewf_ops = {
	.name = "ewf", .pread = ewf_pread, .pwrite = ewf_pwrite, .close = ewf_close,
};

/* The segment list: libewf_glob's when it knows PATH's naming (disk.E01
 * -> disk.E02 ...), else PATH alone (a single-segment image renamed). */
static rk_err list_segments(struct ewf *w, const char *path)
{
	libewf_error_t *err = NULL;
	char **g = NULL;
	int n = 0;
	if (libewf_glob(path, strlen(path), LIBEWF_FORMAT_UNKNOWN, &g, &n, &err) != 1 || n < 1) {
		libewf_error_free(&err);
		g = NULL;
		n = 0;
	}
	int k = n ? n : 1;
	if (!(w->names = calloc((size_t)k, sizeof *w->names)))
		k = 0;
	for (int i = 0; i < k; i++)
		if ((w->names[i] = strdup(n ? g[i] : path)))
			w->nnames++;
	if (g)
		libewf_glob_free(g, n, NULL);
	if (w->nnames != k || k == 0)
		return rk_fail(RK_E_NOMEM, "%s: out of memory", path);
	return RK_OK;
}

/* The name libewf looks for after segment file SEG (disk.E01 -> disk.E02,
 * disk.E99 -> disk.EAA, Ex01 -> Ex02), into OUT: the extension's last two
 * characters counted on (digits to 99, then letters), or "NAME.E02 ..."
 * when they are neither. */
static void next_segment_name(const char *seg, char *out, size_t cap)
{
	snprintf(out, cap, "%s", seg);
	size_t n = strlen(out);
	if (n < 3 || !strrchr(out, '.') || strrchr(out, '.') > out + n - 3)
		return;
	char *a = out + n - 2, *b = out + n - 1;
	int up = isupper((unsigned char)strrchr(out, '.')[1]);   /* E01 -> EAA, e01 -> eaa */
	if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
		int v = (*a - '0') * 10 + (*b - '0') + 1;
		if (v <= 99) {
			*a = (char)('0' + v / 10);
			*b = (char)('0' + v % 10);
		} else {
			*a = up ? 'A' : 'a';
			*b = up ? 'A' : 'a';
		}
	} else if (isalpha((unsigned char)*b) && *b != 'z' && *b != 'Z')
		(*b)++;
}

/* Finds the segments of PATH and checks each (precheck, numbering): the
 * segments before the last end in a "next" section, the last in "done";
 * a set ending in "next" lacks its later segments. */
static rk_err glob_segments(struct ewf *w, const char *path)
{
	int last_done = -1;
	rk_err e = list_segments(w, path);
	for (int i = 0; !e && i < w->nnames; i++) {
		if ((e = precheck(w->names[i], &last_done))) {
			if (i > 0) {   /* the member is named by its first segment */
				char why[600];
				snprintf(why, sizeof why, "%s", rk_errmsg());
				e = rk_fail(e, "%s: %s", path, why);
			}
			break;
		}
		uint8_t h[EWF1_FILE_HDR];
		int fd = open(w->names[i], O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		ssize_t r = fd >= 0 ? pread(fd, h, sizeof h, 0) : -1;
		if (fd >= 0)
			close(fd);
		uint32_t sn = dev_ewf_segment_number(h, r == (ssize_t)sizeof h ? sizeof h : 0);
		if (sn && sn != (uint32_t)i + 1)
			e = rk_fail(RK_E_CORRUPT, "%s: segment %s states it is segment %u, not %d: the set is mixed "
			            "or incomplete", path, w->names[i], sn, i + 1);
		else if (last_done == 1 && i + 1 < w->nnames)
			e = rk_fail(RK_E_CORRUPT, "%s: segment %s ends the image, yet %s follows it: the set is mixed",
			            path, w->names[i], w->names[i + 1]);
	}
	if (!e && last_done == 0) {
		char next[4096];
		next_segment_name(w->names[w->nnames - 1], next, sizeof next);
		e = rk_fail(RK_E_CORRUPT, "%s: truncated E01 image: its last segment found, %s, says more follow "
		            "(segment %d is missing; looked for as %s next to the name given: a set keeps the names "
		            "it was made with, and a link or a renamed first segment finds no others)", path,
		            w->names[w->nnames - 1], w->nnames + 1, next);
	}
	return e;
}

/* Opens the handle over the globbed segments; size and sector of the media. */
static rk_err open_handle(struct ewf *w, const char *path, uint64_t *size, uint32_t *bps)
{
	libewf_error_t *err = NULL;
	char why[300];
	size64_t ms = 0;
	if (libewf_handle_initialize(&w->h, &err) != 1) {
		ewf_msg(&err, why, sizeof why);
		w->h = NULL;
		return rk_fail(RK_E_NOMEM, "%s: libewf: %s", path, why);
	}
	/* libewf keeps every segment open: libewf_handle_set_maximum_number_
	 * of_open_handles would bound that, but libbfio 20140813 then fails
	 * the open ("invalid element to remove"), so it is not used */
	if (libewf_handle_open(w->h, w->names, w->nnames, LIBEWF_OPEN_READ, &err) != 1) {
		ewf_msg(&err, why, sizeof why);
		libewf_handle_free(&w->h, NULL);
		return rk_fail(RK_E_CORRUPT, "%s: truncated or corrupt E01 image (%d segment%s): %s", path,
		               w->nnames, w->nnames == 1 ? "" : "s", why);
	}
	/* a set missing its last segment or cut short: libewf would serve
	 * every chunk it lost as zeros with checksum errors */
	if (libewf_handle_segment_files_corrupted(w->h, NULL) != 0)
		return rk_fail(RK_E_CORRUPT, "%s: truncated or corrupt E01 image (%d segment%s): its section "
		               "tables end before the image does (a segment missing or cut short)", path,
		               w->nnames, w->nnames == 1 ? "" : "s");
	if (libewf_handle_get_media_size(w->h, &ms, &err) != 1 ||
	    libewf_handle_get_bytes_per_sector(w->h, bps, &err) != 1) {
		ewf_msg(&err, why, sizeof why);
		return rk_fail(RK_E_CORRUPT, "%s: E01 image without media size: %s", path, why);
	}
	if (*bps < 512 || *bps > 65536 || (*bps & (*bps - 1)))
		return rk_fail(RK_E_NOTSUP, "%s: E01 image of %u bytes per sector (raidkit reads 512 to 65536, "
		               "a power of two)", path, *bps);
	if (ms > (uint64_t)INT64_MAX)
		return rk_fail(RK_E_CORRUPT, "%s: E01 media size %llu too large", path, (unsigned long long)ms);
	*size = ms;
	return RK_OK;
}

rk_err dev_ewf_open(rk_dev **out, const char *path)
{
	*out = NULL;
	struct ewf *w = calloc(1, sizeof *w);
	if (!w)
		return rk_fail(RK_E_NOMEM, "%s: out of memory", path);
	pthread_mutex_init(&w->mu, NULL);
	uint64_t size = 0;
	uint32_t bps = 512;
	rk_err e = glob_segments(w, path);
	if (!e)
		e = open_handle(w, path, &size, &bps);
	if (e) {
		ewf_free(w);
		return e;
	}
	struct stat st;
	int have_id = stat(path, &st) == 0;
	if ((e = rk_dev_new(out, &dev_ewf_ops, w, path, size, bps, 0)))
		return e;
	if (have_id)
		rk_dev_set_identity(*out, st.st_dev, st.st_ino, 0);
	return RK_OK;
}

uint32_t dev_ewf_segments(const rk_dev *d)
{
	const struct ewf *w = rk_dev_priv(d);
	return w ? (uint32_t)w->nnames : 0;
}

const char *dev_ewf_segment_path(const rk_dev *d, uint32_t i)
{
	const struct ewf *w = rk_dev_priv(d);
	return w && i < (uint32_t)w->nnames ? w->names[i] : NULL;
}

/* ---- what libewf says, and verifying the stored hashes ---- */

static const char *format_name(uint8_t f)
{
	switch (f) {
	case LIBEWF_FORMAT_ENCASE1: return "EnCase 1";
	case LIBEWF_FORMAT_ENCASE2: return "EnCase 2";
	case LIBEWF_FORMAT_ENCASE3: return "EnCase 3";
	case LIBEWF_FORMAT_ENCASE4: return "EnCase 4";
	case LIBEWF_FORMAT_ENCASE5: return "EnCase 5";
	case LIBEWF_FORMAT_ENCASE6: return "EnCase 6";
	case LIBEWF_FORMAT_ENCASE7: return "EnCase 7";
	case LIBEWF_FORMAT_SMART: return "SMART";
	case LIBEWF_FORMAT_FTK_IMAGER: return "FTK Imager";
	case LIBEWF_FORMAT_LINEN5: return "linen 5";
	case LIBEWF_FORMAT_LINEN6: return "linen 6";
	case LIBEWF_FORMAT_LINEN7: return "linen 7";
	case LIBEWF_FORMAT_EWF: return "EWF";
	case LIBEWF_FORMAT_EWFX: return "EWFX";
	default: return "unknown";
	}
}

/* Header value ID into BUF (CAP bytes), "" when absent. */
static void header_value(libewf_handle_t *h, const char *id, char *buf, size_t cap)
{
	buf[0] = 0;
	if (libewf_handle_get_utf8_header_value(h, (const uint8_t *)id, strlen(id), (uint8_t *)buf, cap, NULL) != 1)
		buf[0] = 0;
	buf[cap - 1] = 0;
}

rk_err rk_dev_ewf_info(rk_dev *d, struct rk_ewf_info *info)
{
	if (!info || !rk_dev_has_ops(d, &dev_ewf_ops))
		return rk_fail(RK_E_INVAL, "%s: not an E01 image", d ? rk_dev_path(d) : "(device)");
	struct ewf *w = rk_dev_priv(d);
	memset(info, 0, sizeof *info);
	pthread_mutex_lock(&w->mu);
	uint8_t f = 0;
	snprintf(info->format, sizeof info->format, "%s",
	         libewf_handle_get_format(w->h, &f, NULL) == 1 ? format_name(f) : "unknown");
	info->media_size = rk_dev_size(d);
	info->bytes_per_sector = rk_dev_sector(d);
	(void)libewf_handle_get_sectors_per_chunk(w->h, &info->sectors_per_chunk, NULL);
	info->segments = (uint32_t)w->nnames;
	info->has_md5 = libewf_handle_get_md5_hash(w->h, info->md5, sizeof info->md5, NULL) == 1;
	info->has_sha1 = libewf_handle_get_sha1_hash(w->h, info->sha1, sizeof info->sha1, NULL) == 1;
	header_value(w->h, "case_number", info->case_number, sizeof info->case_number);
	header_value(w->h, "evidence_number", info->evidence_number, sizeof info->evidence_number);
	header_value(w->h, "examiner_name", info->examiner, sizeof info->examiner);
	header_value(w->h, "description", info->description, sizeof info->description);
	header_value(w->h, "notes", info->notes, sizeof info->notes);
	header_value(w->h, "acquiry_date", info->acquiry_date, sizeof info->acquiry_date);
	header_value(w->h, "acquiry_software_version", info->acquiry_software, sizeof info->acquiry_software);
	header_value(w->h, "acquiry_operating_system", info->acquiry_os, sizeof info->acquiry_os);
	(void)libewf_handle_get_number_of_acquiry_errors(w->h, &info->acquiry_errors, NULL);
	pthread_mutex_unlock(&w->mu);
	return RK_OK;
}

/* The whole media of D through both digests; RK_OK or the read error. */
static rk_err digest_media(rk_dev *d, EVP_MD_CTX *m5, EVP_MD_CTX *s1, rk_dev_progress_fn *progress, void *ctx)
{
	const size_t blk = 1u << 20;
	uint8_t *buf = malloc(blk);
	if (!buf)
		return rk_fail(RK_E_NOMEM, "%s: out of memory", rk_dev_path(d));
	uint64_t size = rk_dev_size(d);
	rk_err e = RK_OK;
	for (uint64_t off = 0; off < size && !e;) {
		size_t n = size - off < blk ? (size_t)(size - off) : blk;
		if ((e = rk_dev_pread(d, buf, n, off)))
			break;
		if (EVP_DigestUpdate(m5, buf, n) != 1 || EVP_DigestUpdate(s1, buf, n) != 1)
			e = rk_fail(RK_E_NOMEM, "%s: OpenSSL digest failed", rk_dev_path(d));
		off += n;
		if (!e && progress && progress(ctx, off, size))
			e = rk_fail(RK_E_IO, "%s: verification stopped", rk_dev_path(d));
	}
	free(buf);
	return e;
}

rk_err rk_dev_ewf_verify(rk_dev *d, struct rk_ewf_verify *v, rk_dev_progress_fn *progress, void *ctx)
{
	struct rk_ewf_info info;
	rk_err e;
	if (!v)
		return rk_fail(RK_E_INVAL, "rk_dev_ewf_verify: no result");
	memset(v, 0, sizeof *v);
	if ((e = rk_dev_ewf_info(d, &info)))
		return e;
	EVP_MD_CTX *m5 = EVP_MD_CTX_new(), *s1 = EVP_MD_CTX_new();
	uint8_t dm[EVP_MAX_MD_SIZE], ds[EVP_MAX_MD_SIZE];
	unsigned lm = 0, ls = 0;
	if (!m5 || !s1 || EVP_DigestInit_ex(m5, EVP_md5(), NULL) != 1 || EVP_DigestInit_ex(s1, EVP_sha1(), NULL) != 1)
		e = rk_fail(RK_E_NOMEM, "%s: OpenSSL digests unavailable", rk_dev_path(d));
	if (!e)
		e = digest_media(d, m5, s1, progress, ctx);
	if (!e && (EVP_DigestFinal_ex(m5, dm, &lm) != 1 || EVP_DigestFinal_ex(s1, ds, &ls) != 1 || lm != 16 ||
	           ls != 20))
		e = rk_fail(RK_E_NOMEM, "%s: OpenSSL digest failed", rk_dev_path(d));
	EVP_MD_CTX_free(m5);
	EVP_MD_CTX_free(s1);
	if (e)
		return e;
	rk_hex(dm, 16, v->md5);
	rk_hex(ds, 20, v->sha1);
	v->md5_stored = info.has_md5;
	v->sha1_stored = info.has_sha1;
	if (info.has_md5) {
		rk_hex(info.md5, 16, v->md5_stored_hex);
		v->md5_match = !memcmp(info.md5, dm, 16);
	}
	if (info.has_sha1) {
		rk_hex(info.sha1, 20, v->sha1_stored_hex);
		v->sha1_match = !memcmp(info.sha1, ds, 20);
	}
	return RK_OK;
}
