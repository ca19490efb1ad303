/* raid-examine: show what is on members: every superblock copy (valid or
 * not, and why), decoded; foreign signatures; how discovery sees the set;
 * and, with --map, which member holds a volume byte.
 *
 * Policy and UI only: decoding, discovery and printing live in libmeta.
 * Members are opened read-only, always.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>

#include "cli.h"
#include "rk_dev.h"
#include "rk_discover.h"
#include "rk_fmt.h"
#include "rk_geom.h"
#include "rk_json.h"
#include "rk_le.h"
#include "rk_part.h"
#include "rk_print.h"
#include "rk_probe.h"
#include "rk_sb.h"
#include "rk_segnames.h"
#include "rk_util.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: raid-examine [--json] [--verify-image [--progress]] MEMBER...\n"
	       "       raid-examine --map OFFSET [--uuid UUID] [--json] MEMBER...\n"
	       "\n"
	       "Shows what is on raidkit members: both superblock copies of each member\n"
	       "(valid or not, and why), decoded; foreign signatures (md, DDF, Intel and\n"
	       "other RAID metadata, file systems, partition tables); and how the members\n"
	       "group into arrays (active, stale, duplicate, foreign, unknown).\n"
	       "Members are opened read-only: nothing is ever written.\n"
	       "\n"
	       "  --map OFFSET   say which member holds volume byte OFFSET (K, M, G, T\n"
	       "                 suffixes: powers of 1024) and at which byte of it\n"
	       "  --uuid UUID    with --map: the array to use when members of several\n"
	       "                 arrays are given\n"
	       "  --verify-image read every E01 member's media and compare its MD5 and\n"
	       "                 SHA-1 with those stored in the image (exit 1 on a\n"
	       "                 mismatch, 2 when it cannot be verified)\n"
	       "  --progress     rate and ETA of --verify-image on stderr\n"
	       "  --json         one JSON document on stdout\n"
	       "  --hash ALG     print the ALG (sha256, sha1, md5) digest of each member\n"
	       "  --audit FILE   append one JSON line about this run to FILE\n"
	       "  --help         this text\n"
	       "  --version      the version\n"
	       "\n"
	       "Exit status: 0 every member valid (both copies) and serving its array;\n"
	       "1 something to report (a bad or missing copy, a stale, duplicate, foreign\n"
	       "or unknown member, an E01 whose stored hash does not match; with --map,\n"
	       "a missing role); 2 nothing readable (no member has a valid raidkit\n"
	       "superblock), an E01 that cannot be verified; 64 bad usage.\n"
	       "E01 and split raw images (disk.E01, disk.001, disk.aa) are read through\n"
	       "their containers; their later segments given too are shown with the first.\n");
}

/* What one path holds, as read for the report. */
struct member_exam {
	const char *path;
	const struct rk_member *member;    /* how discovery classed it, NULL when not found */
	struct rk_sb_read rd;              /* both superblock copies */
	char open_error[512];              /* "" when it could be opened and read */
	uint64_t size;
	int nforeign;                      /* foreign metadata decoded natively (md 0.90 / 1.x) */
	void *foreign[4];
	const struct rk_meta_fmt *foreign_fmt[4];
	struct rk_probe_result probe;      /* a foreign signature (probe.found) */
	struct rk_part_table parts;        /* a whole disk's partitions (spec/partitions.md) */
	struct member_exam *part_exam;     /* parts.n examinations, one per partition */
	struct image_exam *image;          /* an E01 or split raw image: what it is; NULL otherwise */
};

/* An image member (spec/images.md): its container as the device layer
 * reads it, and with --verify-image the stored hashes checked. */
struct image_exam {
	const char *kind;                  /* "e01", "split" */
	uint32_t nseg;
	char **seg;                        /* segment paths, in order */
	struct rk_ewf_info ewf;            /* kind "e01" */
	int verified;                      /* --verify-image ran: 1 done, -1 failed (verify_error) */
	struct rk_ewf_verify ver;
	char verify_error[512];
};

/* --verify-image, --progress: options read_member needs. */
static int opt_verify, opt_progress;

/* What the examination found over all paths. */
struct exam {
	int readable;      /* a valid raidkit copy */
	int report;        /* something to report */
	int failed;        /* --verify-image could not verify an image */
};

/* Decodes the foreign formats on D (not raidkit's, not blkid's). */
static void read_foreign(struct member_exam *x, rk_dev *d)
{
	for (int k = 0; rk_meta_fmts[k] && x->nforeign < 4; k++) {
		const struct rk_meta_fmt *fm = rk_meta_fmts[k];
		if (!strcmp(fm->name, "raidkit") || !strcmp(fm->name, "blkid"))
			continue;
		void *obj = NULL;
		if (fm->decode(d, x->path, &obj) == RK_OK) {
			x->foreign[x->nforeign] = obj;
			x->foreign_fmt[x->nforeign++] = fm;
		}
	}
}

static int verify_progress(void *ctx, uint64_t done, uint64_t total)
{
	(void)total;
	cli_progress_update(ctx, done);
	return 0;
}

/* The stored hashes of E01 member D checked (--verify-image) into IM. */
static void image_verify(struct image_exam *im, rk_dev *d, int json)
{
	struct cli_progress *p = cli_progress_start("verifying the E01 image", rk_dev_size(d), opt_progress, json);
	rk_err e = rk_dev_ewf_verify(d, &im->ver, p ? verify_progress : NULL, p);
	cli_progress_end(p);
	im->verified = e ? -1 : 1;
	if (e)
		snprintf(im->verify_error, sizeof im->verify_error, "%s", rk_errmsg());
	else if (!im->ver.md5_stored && !im->ver.sha1_stored) {
		im->verified = -1;
		snprintf(im->verify_error, sizeof im->verify_error, "the image stores no MD5 or SHA-1 to compare with");
	}
}

/* What the device layer says of image member D (NULL for a plain file). */
static struct image_exam *image_read(rk_dev *d, int json)
{
	const char *be = rk_dev_backend(d);
	int ewf = !strcmp(be, "ewf");
	if (!ewf && strcmp(be, "split"))
		return NULL;
	struct image_exam *im = calloc(1, sizeof *im);
	uint32_t n = rk_dev_segments(d);
	if (!im || !(im->seg = calloc(n ? n : 1, sizeof *im->seg))) {
		free(im);
		return NULL;
	}
	im->kind = ewf ? "e01" : "split";
	for (uint32_t i = 0; i < n; i++)
		if ((im->seg[im->nseg] = strdup(rk_dev_segment_path(d, i))))
			im->nseg++;
	if (ewf && rk_dev_ewf_info(d, &im->ewf) == RK_OK && opt_verify)
		image_verify(im, d, json);
	return im;
}

static void image_free(struct image_exam *im)
{
	if (!im)
		return;
	for (uint32_t i = 0; i < im->nseg; i++)
		free(im->seg[i]);
	free(im->seg);
	free(im);
}

/* Opens and reads X->path; errors in words go to stderr unless JSON. */
static void read_member(struct member_exam *x, int json)
{
	rk_dev *d = NULL;
	memset(&x->rd, 0, sizeof x->rd);
	x->rd.chosen = -1;
	rk_err e = rk_member_open(&d, x->path, RK_DEV_RDONLY);
	if (e) {
		snprintf(x->open_error, sizeof x->open_error, "%s", rk_errmsg());
	} else {
		x->size = rk_dev_size(d);
		x->image = image_read(d, json);
		e = rk_sb_read(d, &x->rd);
		read_foreign(x, d);
		rk_dev_close(d);
		if (e && e != RK_E_NOSB)
			snprintf(x->open_error, sizeof x->open_error, "%s", rk_errmsg());
	}
	if (x->open_error[0] && !json)
		cli_err("%s", x->open_error);
	memset(&x->probe, 0, sizeof x->probe);
	if (!x->open_error[0] && rk_probe_foreign(x->path, &x->probe) != RK_OK)
		memset(&x->probe, 0, sizeof x->probe);
}

static void parts_json(rk_json *j, const struct member_exam *x);

/* A text field of the E01 header as JSON: null when absent. */
static void kstr_or_null(rk_json *j, const char *k, const char *v)
{
	rk_json_kstr(j, k, v[0] ? v : NULL);
}

static void verify_json(rk_json *j, const struct image_exam *im)
{
	rk_json_key(j, "verify");
	if (!im->verified) {
		rk_json_null(j);
		return;
	}
	rk_json_obj_begin(j);
	rk_json_kstr(j, "error", im->verified < 0 ? im->verify_error : NULL);
	rk_json_kstr(j, "md5", im->verified > 0 ? im->ver.md5 : NULL);
	rk_json_kstr(j, "sha1", im->verified > 0 ? im->ver.sha1 : NULL);
	if (rk_json_key_or_null(j, "md5_match", im->verified > 0 && im->ver.md5_stored))
		rk_json_bool(j, im->ver.md5_match);
	if (rk_json_key_or_null(j, "sha1_match", im->verified > 0 && im->ver.sha1_stored))
		rk_json_bool(j, im->ver.sha1_match);
	rk_json_obj_end(j);
}

static void image_json(rk_json *j, const struct image_exam *im)
{
	if (!rk_json_key_or_null(j, "image", im != NULL))
		return;
	rk_json_obj_begin(j);
	rk_json_kstr(j, "type", im->kind);
	rk_json_key(j, "segments");
	rk_json_arr_begin(j);
	for (uint32_t i = 0; i < im->nseg; i++)
		rk_json_str(j, im->seg[i]);
	rk_json_arr_end(j);
	if (!strcmp(im->kind, "e01")) {
		const struct rk_ewf_info *w = &im->ewf;
		char md5[33], sha1[41];
		rk_hex(w->md5, 16, md5);
		rk_hex(w->sha1, 20, sha1);
		rk_json_kstr(j, "format", w->format);
		CLI_JSON_U64S(j, { "media_size", w->media_size }, { "bytes_per_sector", w->bytes_per_sector },
		              { "sectors_per_chunk", w->sectors_per_chunk }, { "acquiry_errors", w->acquiry_errors });
		rk_json_kstr(j, "stored_md5", w->has_md5 ? md5 : NULL);
		rk_json_kstr(j, "stored_sha1", w->has_sha1 ? sha1 : NULL);
		kstr_or_null(j, "case_number", w->case_number);
		kstr_or_null(j, "evidence_number", w->evidence_number);
		kstr_or_null(j, "examiner", w->examiner);
		kstr_or_null(j, "description", w->description);
		kstr_or_null(j, "notes", w->notes);
		kstr_or_null(j, "acquiry_date", w->acquiry_date);
		kstr_or_null(j, "acquiry_software", w->acquiry_software);
		kstr_or_null(j, "acquiry_os", w->acquiry_os);
		verify_json(j, im);
	}
	rk_json_obj_end(j);
}

static void verify_text(const struct image_exam *im)
{
	if (im->verified < 0) {
		rk_esc_fprintf(stdout, "  verify: cannot verify: %s\n", im->verify_error);
		return;
	}
	if (im->ver.md5_stored)
		printf("  verify: MD5 %s (read %s)\n", im->ver.md5_match ? "matches" : "MISMATCH", im->ver.md5);
	if (im->ver.sha1_stored)
		printf("  verify: SHA-1 %s (read %s)\n", im->ver.sha1_match ? "matches" : "MISMATCH", im->ver.sha1);
}

static void image_text(const struct image_exam *im)
{
	if (!strcmp(im->kind, "split"))
		printf("  image: split raw, %u segment%s:", im->nseg, im->nseg == 1 ? "" : "s");
	else
		rk_esc_fprintf(stdout, "  image: E01 (%s), %u segment%s:", im->ewf.format, im->nseg, im->nseg == 1 ? "" : "s");
	for (uint32_t i = 0; i < im->nseg; i++)
		rk_esc_fprintf(stdout, " %s", im->seg[i]);
	printf("\n");
	if (strcmp(im->kind, "e01"))
		return;
	const struct rk_ewf_info *w = &im->ewf;
	char md5[33], sha1[41];
	rk_hex(w->md5, 16, md5);
	rk_hex(w->sha1, 20, sha1);
	printf("  media %" PRIu64 " bytes, %u bytes per sector, %u sectors per chunk, %u acquiry error%s\n",
	       w->media_size, w->bytes_per_sector, w->sectors_per_chunk, w->acquiry_errors,
	       w->acquiry_errors == 1 ? "" : "s");
	printf("  stored MD5 %s, SHA-1 %s\n", w->has_md5 ? md5 : "(none)", w->has_sha1 ? sha1 : "(none)");
	rk_esc_fprintf(stdout, "  case \"%s\", evidence \"%s\", examiner \"%s\", acquired %s with %s on %s\n",
	               w->case_number, w->evidence_number, w->examiner, w->acquiry_date[0] ? w->acquiry_date : "?",
	               w->acquiry_software[0] ? w->acquiry_software : "?", w->acquiry_os[0] ? w->acquiry_os : "?");
	if (w->description[0] || w->notes[0])
		rk_esc_fprintf(stdout, "  description \"%s\", notes \"%s\"\n", w->description, w->notes);
	if (im->verified)
		verify_text(im);
}

static void member_json(rk_json *j, const struct member_exam *x)
{
	int valid = x->rd.chosen >= 0;
	rk_json_obj_begin(j);
	rk_json_kstr(j, "path", x->path);
	rk_json_kbool(j, "readable", !x->open_error[0]);
	rk_json_kstr(j, "error", x->open_error[0] ? x->open_error : NULL);
	rk_json_ku64(j, "size", x->size);
	image_json(j, x->image);
	rk_json_kbool(j, "valid", valid);
	if (!x->open_error[0])
		rk_print_copies_json_keys(j, &x->rd);
	if (rk_json_key_or_null(j, "superblock", valid))
		rk_print_sb_json(j, x->rd.copy[x->rd.chosen].sb);
	rk_json_key(j, "signatures");
	rk_json_arr_begin(j);
	if (x->probe.found)
		rk_print_probe_json(j, &x->probe);
	rk_json_arr_end(j);
	rk_json_key(j, "foreign_metadata");
	rk_json_arr_begin(j);
	for (int k = 0; k < x->nforeign; k++)
		x->foreign_fmt[k]->print_json(j, x->foreign[k]);
	rk_json_arr_end(j);
	if (rk_json_key_or_null(j, "discovery", x->member != NULL))
		rk_print_member_json(j, x->member);
	if (x->parts.n)
		parts_json(j, x);
	rk_json_obj_end(j);
}

static void parts_text(const struct member_exam *x);

static void member_text(const struct member_exam *x)
{
	char sz[32];
	rk_esc_fprintf(stdout, "%s", x->path);
	if (!x->open_error[0])
		printf(" (%" PRIu64 " bytes, %s)", x->size, rk_size_words(x->size, sz, sizeof sz));
	printf("\n");
	if (x->image)
		image_text(x->image);
	if (x->open_error[0])
		rk_esc_fprintf(stdout, "  cannot examine: %s\n", x->open_error);
	else
		rk_print_copies_text(stdout, &x->rd, 1, "  ");
	if (x->probe.found) {
		printf("  foreign signature: ");
		rk_print_probe_text(stdout, &x->probe, "");
	}
	for (int k = 0; k < x->nforeign; k++)
		x->foreign_fmt[k]->print_text(stdout, x->foreign[k], "  ");
	if (x->parts.n)
		parts_text(x);
	if (x->member)
		rk_esc_fprintf(stdout, "  discovery: %s: %s\n", rk_member_class_name(x->member->cls), x->member->reason);
	printf("\n");
	for (uint32_t i = 0; i < x->parts.n; i++)
		member_text(&x->part_exam[i]);
}

/* ---- whole disks (spec/partitions.md) ---- */

/* The member discovery made of NAME, a name it was given or one of the
 * partitions it looked into; NULL when none. */
static const struct rk_member *name_member(const struct rk_discovery *d, const char *name)
{
	for (uint32_t a = 0; a < d->narrays; a++)
		for (uint32_t r = 0; r < d->arrays[a].nroles; r++)
			if (d->arrays[a].roles[r].path && !strcmp(d->arrays[a].roles[r].path, name))
				return &d->arrays[a].roles[r];
	for (uint32_t i = 0; i < d->nleft; i++)
		if (d->left[i].path && !strcmp(d->left[i].path, name))
			return &d->left[i];
	return NULL;
}

/* The member discovery made of path ARGI (named PATH): none when what it
 * has under that index is one of the disk's partitions. */
static const struct rk_member *path_member(const struct rk_discovery *d, int32_t argi, const char *path)
{
	const struct rk_member *m = rk_discovery_find_path(d, argi);
	return m && m->path && !strcmp(m->path, path) ? m : NULL;
}

/* X (a path holding no metadata of its own) as a whole disk: its
 * partition table, and each partition examined as a member. */
static void read_parts(struct member_exam *x, const struct rk_discovery *d, int json)
{
	if (rk_part_table_read(x->path, &x->parts) != RK_OK || x->parts.n == 0) {
		rk_part_table_free(&x->parts);
		return;
	}
	x->part_exam = calloc(x->parts.n, sizeof *x->part_exam);
	if (!x->part_exam) {
		rk_part_table_free(&x->parts);
		return;
	}
	for (uint32_t i = 0; i < x->parts.n; i++) {
		struct member_exam *px = &x->part_exam[i];
		size_t len = strlen(x->path) + 16;
		char *name = malloc(len);
		if (!name) {
			snprintf(px->open_error, sizeof px->open_error, "out of memory");
			continue;
		}
		snprintf(name, len, "%s:p%u", x->path, x->parts.parts[i].number);
		px->path = name;
		px->member = name_member(d, name);
		read_member(px, json);
	}
}

/* What partition exam PX holds, in words. */
static const char *holds_words(const struct member_exam *px, char *buf, size_t cap)
{
	if (px->open_error[0])
		snprintf(buf, cap, "cannot be read: %s", px->open_error);
	else if (px->rd.chosen >= 0)
		snprintf(buf, cap, "a raidkit member");
	else if (px->probe.found)
		snprintf(buf, cap, "%s", px->probe.what);
	else if (px->nforeign)
		snprintf(buf, cap, "%s metadata", px->foreign_fmt[0]->desc);
	else
		snprintf(buf, cap, "nothing recognised");
	return buf;
}

static void parts_text(const struct member_exam *x)
{
	printf("  partition table: %s, %u partition%s (each examined below as its own member):\n",
	       x->parts.type[0] ? x->parts.type : "unknown", x->parts.n, x->parts.n == 1 ? "" : "s");
	for (uint32_t i = 0; i < x->parts.n; i++) {
		const struct rk_part *p = &x->parts.parts[i];
		const struct member_exam *px = &x->part_exam[i];
		char sz[32], holds[600];
		rk_esc_fprintf(stdout, "    %s: start %" PRIu64 ", %" PRIu64 " bytes (%s), type %s%s%s%s%s%s%s\n",
		               px->path ? px->path : "?", p->start, p->size, rk_size_words(p->size, sz, sizeof sz),
		               p->type, p->type_words[0] ? " (" : "", p->type_words, p->type_words[0] ? ")" : "",
		               p->label[0] ? ", name \"" : "", p->label, p->label[0] ? "\"" : "");
		if (p->problem[0])
			rk_esc_fprintf(stdout, "      not read: %s\n", p->problem);
		else
			rk_esc_fprintf(stdout, "      holds %s\n", holds_words(px, holds, sizeof holds));
	}
}

static void parts_json(rk_json *j, const struct member_exam *x)
{
	rk_json_key(j, "partition_table");
	rk_json_obj_begin(j);
	rk_json_kstr(j, "type", x->parts.type);
	rk_json_kstr(j, "id", x->parts.id);
	rk_json_obj_end(j);
	rk_json_key(j, "partitions");
	rk_json_arr_begin(j);
	for (uint32_t i = 0; i < x->parts.n; i++) {
		const struct rk_part *p = &x->parts.parts[i];
		rk_json_obj_begin(j);
		rk_json_kstr(j, "name", x->part_exam[i].path);
		CLI_JSON_U64S(j, { "number", p->number }, { "start", p->start }, { "size", p->size });
		rk_json_kstr(j, "type", p->type);
		rk_json_kstr(j, "type_name", p->type_words[0] ? p->type_words : NULL);
		rk_json_kstr(j, "label", p->label[0] ? p->label : NULL);
		rk_json_kbool(j, "logical", p->logical);
		rk_json_kstr(j, "problem", p->problem[0] ? p->problem : NULL);
		rk_json_key(j, "holds");
		member_json(j, &x->part_exam[i]);
		rk_json_obj_end(j);
	}
	rk_json_arr_end(j);
}

/* What X found, into EX's verdict. */
static void exam_verdict(const struct member_exam *x, struct exam *ex)
{
	int valid = x->rd.chosen >= 0;
	if (valid)
		ex->readable = 1;
	/* A whole disk is not a member: its partitions speak for it. */
	if (x->parts.n == 0 && (!valid || x->rd.copy[0].status != RK_COPY_OK || x->rd.copy[1].status != RK_COPY_OK))
		ex->report = 1;
	if (x->member && x->member->cls != RK_MEMBER_ACTIVE && x->member->cls != RK_MEMBER_SPARE)
		ex->report = 1;
	if (x->image && x->image->verified > 0 &&
	    ((x->image->ver.md5_stored && !x->image->ver.md5_match) ||
	     (x->image->ver.sha1_stored && !x->image->ver.sha1_match)))
		ex->report = 1;
	if (x->image && x->image->verified < 0)
		ex->failed = 1;
}

static void exam_free(struct member_exam *x)
{
	rk_sb_read_free(&x->rd);
	for (int k = 0; k < x->nforeign; k++)
		x->foreign_fmt[k]->release(x->foreign[k]);
	for (uint32_t i = 0; x->part_exam && i < x->parts.n; i++) {
		free((char *)(uintptr_t)x->part_exam[i].path);
		exam_free(&x->part_exam[i]);
	}
	free(x->part_exam);
	rk_part_table_free(&x->parts);
	image_free(x->image);
}

static void examine_one(const char *path, const struct rk_member *m, const struct rk_discovery *d,
                        rk_json *j, struct exam *ex)
{
	struct member_exam x;
	memset(&x, 0, sizeof x);
	x.path = path;
	x.member = m;
	read_member(&x, j != NULL);
	/* Partitions as discovery took them: in the disk's place (its index
	 * then names a partition), or when the disk carries nothing itself. */
	if (!x.open_error[0] && x.rd.chosen < 0 && (x.nforeign == 0 || !m))
		read_parts(&x, d, j != NULL);
	exam_verdict(&x, ex);
	for (uint32_t i = 0; i < x.parts.n; i++)
		exam_verdict(&x.part_exam[i], ex);
	if (j)
		member_json(j, &x);
	else
		member_text(&x);
	exam_free(&x);
}

/* The "decided" of the audit line: the arrays as discovery sees the
 * members (raid-examine decides nothing else). */
static void audit_decided(rk_json *j, const void *ctx)
{
	rk_print_discovery_json(j, ctx);
}

static int do_examine(char **paths, uint32_t n, int json)
{
	struct rk_discovery *d = NULL;
	rk_err e = rk_discover(&d, paths, n, NULL);
	if (e) {
		cli_err_rk("discovery failed");
		return EX_FAIL;
	}
	struct exam ex = { 0, 0, 0 };
	rk_json *j = NULL;
	if (json) {
		j = rk_json_new(stdout);
		if (!j) {
			rk_discovery_free(d);
			cli_err("out of memory");
			return EX_FAIL;
		}
		rk_json_obj_begin(j);
		rk_json_key(j, "members");
		rk_json_arr_begin(j);
	}
	for (uint32_t i = 0; i < n; i++)
		if (!rk_member_segment_given(paths, n, i))   /* shown with its first segment */
			examine_one(paths[i], path_member(d, (int32_t)i, paths[i]), d, j, &ex);
	for (uint32_t a = 0; a < d->narrays; a++)
		if (d->arrays[a].state == RK_ASTATE_CONFLICT)
			ex.report = 1;
	if (cli_hash_finish())   /* examine reads metadata only: each member is read in full for it */
		ex.report = 1;
	if (json) {
		rk_json_arr_end(j);
		rk_json_key(j, "arrays");
		rk_json_arr_begin(j);
		for (uint32_t a = 0; a < d->narrays; a++)
			rk_print_array_json(j, d, a);
		rk_json_arr_end(j);
		cli_hash_json(j);
		rk_json_obj_end(j);
		rk_json_free(j);
	} else if (d->narrays) {
		printf("as discovery sees these members:\n");
		for (uint32_t a = 0; a < d->narrays; a++) {
			if (a)
				printf("\n");
			rk_print_array_text(stdout, d, a, "  ");
		}
	}
	if (!json)
		cli_hash_print_text(stdout);
	cli_audit_decided(audit_decided, d);
	rk_discovery_free(d);
	if (fflush(stdout) != 0) {
		cli_err("cannot write the report");
		return EX_FAIL;
	}
	if (!ex.readable || ex.failed)
		return EX_FAIL;
	return ex.report ? EX_REPORT : EX_DONE;
}

/* ---- --map ---- */

/* Where volume byte OFFSET lives. */
struct map_answer {
	uint64_t offset;
	const struct rk_array_info *array;
	struct rk_loc loc;              /* its data copy */
	uint64_t run;                   /* bytes from there on the same member */
	const struct rk_member *member; /* the role holding it (path NULL: missing) */
	uint64_t data_offset;           /* where that member's data area starts */
	uint64_t member_offset;         /* data_offset + loc.member_off */
	struct rk_loc copies[16];       /* every copy, the data copy first */
	uint32_t ncopies;
};

/* The data offset of ROLE's member (the array's where it has no superblock). */
static uint64_t role_data_offset(const struct rk_array_info *a, uint32_t role)
{
	return a->roles[role].sb ? a->roles[role].sb->data_offset : a->sb->data_offset;
}

/* The one array of D --map answers for: its index, or -1 with the exit
 * status in *RC (messages on stderr). */
static int map_array(const struct rk_discovery *d, int *rc)
{
	if (d->narrays == 0) {
		cli_err("no raidkit array among the members given");
		for (uint32_t i = 0; i < d->nleft; i++)
			cli_err("%s: %s: %s", d->left[i].path, rk_member_class_name(d->left[i].cls),
			        d->left[i].reason);
		*rc = EX_FAIL;
		return -1;
	}
	if (d->narrays > 1) {
		cli_err("members of %u arrays were given; pick one with --uuid", d->narrays);
		for (uint32_t a = 0; a < d->narrays; a++) {
			char u[37];
			uuid_unparse_lower(d->arrays[a].uuid, u);
			cli_err("array %s \"%s\"", u, d->arrays[a].name);
		}
		*rc = EX_USAGE;
		return -1;
	}
	return 0;
}

/* Fills ANS for byte OFF of array A: EX_DONE, or the exit status with the
 * message printed. */
static int map_locate(const struct rk_array_info *a, uint64_t off, struct map_answer *ans)
{
	const struct rk_sb *sb = a->sb;
	struct rk_geom g;
	if (rk_geom_init(&g, sb->level, sb->layout, sb->chunk, sb->nroles, sb->data_size)) {
		cli_err_rk("the array's geometry");
		return EX_FAIL;
	}
	if (off >= g.volume_size) {
		cli_err("--map %" PRIu64 ": beyond the end of the volume (%" PRIu64 " bytes)", off, g.volume_size);
		return EX_USAGE;
	}
	ans->offset = off;
	ans->array = a;
	if (rk_geom_map(&g, off, &ans->loc, &ans->run) || ans->loc.role >= a->nroles) {
		cli_err_rk("--map %" PRIu64, off);
		return EX_FAIL;
	}
	ans->member = &a->roles[ans->loc.role];
	ans->data_offset = role_data_offset(a, ans->loc.role);
	if (rk_add_ovf(ans->data_offset, ans->loc.member_off, &ans->member_offset)) {
		cli_err("--map %" PRIu64 ": member offset overflows", off);
		return EX_FAIL;
	}
	ans->ncopies = rk_geom_copies(&g, off, ans->copies, 16);
	if (ans->ncopies > 16)
		ans->ncopies = 16;
	return EX_DONE;
}

static void map_json(const struct map_answer *ans)
{
	const struct rk_array_info *a = ans->array;
	const struct rk_member *m = ans->member;
	rk_json *j = rk_json_new(stdout);
	if (!j)
		return;
	rk_json_obj_begin(j);
	CLI_JSON_U64S(j, { "offset", ans->offset }, { "stripe", ans->loc.stripe }, { "role", ans->loc.role });
	rk_json_kstr(j, "path", m->path);
	CLI_JSON_U64S(j, { "member_offset", ans->member_offset }, { "data_offset", ans->data_offset },
	              { "data_area_offset", ans->loc.member_off }, { "run", ans->run });
	rk_json_kstr(j, "member_state", rk_member_class_name(m->cls));
	rk_json_kstr(j, "array_state", rk_astate_name(a->state));
	rk_json_key(j, "array_uuid");
	rk_json_uuid(j, a->uuid);
	rk_json_key(j, "copies");
	rk_json_arr_begin(j);
	for (uint32_t k = 0; k < ans->ncopies; k++) {
		const struct rk_loc *cp = &ans->copies[k];
		if (cp->role >= a->nroles)
			continue;
		uint64_t cmo = 0;
		rk_json_obj_begin(j);
		rk_json_ku64(j, "role", cp->role);
		rk_json_kstr(j, "path", a->roles[cp->role].path);
		if (rk_add_ovf(role_data_offset(a, cp->role), cp->member_off, &cmo))
			cmo = UINT64_MAX;
		rk_json_ku64(j, "member_offset", cmo);
		rk_json_obj_end(j);
	}
	rk_json_arr_end(j);
	cli_hash_json(j);
	rk_json_obj_end(j);
	rk_json_free(j);
}

static void map_text(const struct map_answer *ans)
{
	const struct rk_array_info *a = ans->array;
	const struct rk_member *m = ans->member;
	rk_esc_fprintf(stdout, "volume byte %" PRIu64 ": stripe %" PRIu64 ", role %u, %s, member byte %" PRIu64
	               " (data offset %" PRIu64 " + %" PRIu64 "); %" PRIu64 " bytes from there stay on it\n",
	               ans->offset, ans->loc.stripe, ans->loc.role, m->path ? m->path : "(missing)",
	               ans->member_offset, ans->data_offset, ans->loc.member_off, ans->run);
	if (!m->path)
		rk_esc_fprintf(stdout, "  role %u: %s\n", ans->loc.role, m->reason);
	for (uint32_t k = 1; k < ans->ncopies; k++) {
		const struct rk_loc *cp = &ans->copies[k];
		if (cp->role < a->nroles)
			rk_esc_fprintf(stdout, "  also on role %u (%s) at member byte %" PRIu64 "\n", cp->role,
			               a->roles[cp->role].path ? a->roles[cp->role].path : "missing",
			               role_data_offset(a, cp->role) + cp->member_off);
	}
	rk_esc_fprintf(stdout, "  array %s: %s\n", rk_astate_name(a->state), a->why);
}

static int do_map(char **paths, uint32_t n, uint64_t off, const uint8_t *uuid, int json)
{
	struct rk_discovery *d = NULL;
	if (rk_discover(&d, paths, n, uuid)) {
		cli_err_rk("discovery failed");
		return EX_FAIL;
	}
	int rc = EX_DONE;
	struct map_answer ans;
	memset(&ans, 0, sizeof ans);
	if (cli_hash_finish())
		rc = EX_REPORT;
	if (map_array(d, &rc) == 0 && (rc = map_locate(&d->arrays[0], off, &ans)) == EX_DONE) {
		const struct rk_array_info *a = ans.array;
		if (!ans.member->path || a->state != RK_ASTATE_CLEAN)
			rc = EX_REPORT;
		if (a->state == RK_ASTATE_CONFLICT)
			cli_err("warning: the members disagree (%s)", a->why);
		if (json)
			map_json(&ans);
		else
			map_text(&ans);
	}
	if (!json)
		cli_hash_print_text(stdout);
	cli_audit_decided(audit_decided, d);
	rk_discovery_free(d);
	return rc;
}

/* ---- command line ---- */

enum { OPT_MAP = 256, OPT_VERIFY_IMAGE };

struct examine_args {
	int map;
	uint64_t offset;
	struct cli_common common;
};

static int on_option(void *ctx, int opt, char *arg)
{
	struct examine_args *a = ctx;
	if (opt == OPT_VERIFY_IMAGE) {
		opt_verify = 1;
		return CLI_GO_ON;
	}
	if (opt != OPT_MAP)
		return CLI_GO_ON;
	a->map = 1;
	return cli_parse_offset_opt("--map", arg, &a->offset);
}

int main(int argc, char **argv)
{
	cli_init(argv[0]);
	static const struct option opts[] = {
		{ "map", required_argument, NULL, OPT_MAP },
		{ "verify-image", no_argument, NULL, OPT_VERIFY_IMAGE },
		CLI_OPTION_JSON, CLI_OPTION_PROGRESS, CLI_OPTION_UUID, CLI_OPTION_DISK_SERIAL, CLI_OPTION_HASH, CLI_OPTION_AUDIT, CLI_OPTION_HELP,
		CLI_OPTION_VERSION, CLI_OPTION_END,
	};
	struct examine_args a;
	memset(&a, 0, sizeof a);
	const struct cli_command cmd = { "h", opts, usage, on_option, &a, &a.common };
	int rc = cli_parse_options(argc, argv, &cmd);
	if (rc != CLI_GO_ON)
		return rc;
	char **paths = argv + optind;
	uint32_t n = (uint32_t)(argc - optind);
	if (optind >= argc)
		return cli_audit_end(cli_usage_error("no MEMBER given"));
	if (a.common.have_uuid && !a.map)
		return cli_audit_end(cli_usage_error("--uuid is only used with --map"));
	if (opt_verify && a.map)
		return cli_audit_end(cli_usage_error("--verify-image is not used with --map"));
	opt_progress = a.common.progress;
	if (a.map)
		return cli_audit_end(do_map(paths, n, a.offset, a.common.have_uuid ? a.common.uuid : NULL, a.common.json));
	return cli_audit_end(do_examine(paths, n, a.common.json));
}
