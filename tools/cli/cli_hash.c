/* cli_hash.c: --hash ALG for the read-only tools.  One entry per MEMBER as
 * given; members the library opens for the command are wrapped in the
 * hashing device (rk_dev_hash) through cli_hash_wrap, so their digests come
 * from the command's own reads; cli_hash_finish completes them (reading
 * what the command did not) and hashes the members nobody opened in full.
 * The export's digest is of the bytes written. */
#include "cli.h"
#include "rk_part.h"
#include "rk_segnames.h"
#include "rk_util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct hash_entry {
	const char *path;              /* as given (argv: lives as long as the run) */
	struct rk_hash_result res;
	rk_dev *dev;                   /* the live wrapper while res.open */
	char error[256];               /* why there is no digest */
};

static struct {
	const char *alg;               /* NULL: --hash not given */
	struct hash_entry *e;
	int n;
	rk_digest *out;                /* the export's digest */
	struct rk_hash_result out_res;
	const char *out_path;
	int out_done;
} H;

int cli_hash_begin(const char *alg, char *const *paths, int n)
{
	if (!alg)
		return 0;
	H.alg = alg;
	if (!(H.e = calloc((size_t)(n > 0 ? n : 1), sizeof *H.e))) {
		cli_err("out of memory");
		return -1;
	}
	for (int i = 0; i < n; i++) {
		/* a later segment given beside its first is read (and hashed)
		 * as part of that member, as discovery folds it */
		int dup = rk_member_segment_given(paths, (uint32_t)n, (uint32_t)i);
		for (int k = 0; k < H.n && !dup; k++)
			dup = !strcmp(H.e[k].path, paths[i]);
		if (!dup)
			H.e[H.n++].path = paths[i];
	}
	return 0;
}

int cli_hash_on(void) { return H.alg != NULL; }

/* The entry of PATH, or NULL. */
static struct hash_entry *entry(const char *path)
{
	for (int i = 0; path && i < H.n; i++)
		if (!strcmp(H.e[i].path, path))
			return &H.e[i];
	return NULL;
}

rk_err cli_hash_wrap(void *ctx, uint32_t idx, rk_dev **dev)
{
	(void)ctx;
	(void)idx;
	struct hash_entry *he = H.alg ? entry(rk_dev_path(*dev)) : NULL;
	/* a member given twice or opened twice: the first open feeds it */
	if (!he || he->res.open || he->res.done)
		return RK_OK;
	rk_dev *w = NULL;
	rk_err e = rk_dev_hash(&w, *dev, H.alg, &he->res, 1);
	*dev = w;   /* the wrapper owns the member now, also on failure */
	he->dev = w;
	return e;
}

/* Completes HE: its live wrapper catches up, else the member is opened
 * and read in full.  0, or -1 with he->error set (and said). */
static int finish_entry(struct hash_entry *he)
{
	rk_err e;
	if (he->res.done)
		return 0;
	if (he->res.open) {
		e = rk_dev_hash_finish(he->dev);
	} else {
		/* never opened, or its wrapper closed early: read it in full */
		rk_dev *d = NULL, *w = NULL;
		e = rk_member_open(&d, he->path, RK_DEV_RDONLY);
		if (!e)
			e = rk_dev_hash(&w, d, H.alg, &he->res, 1);
		if (!e)
			e = rk_dev_hash_finish(w);
		rk_dev_close(w);
	}
	if (!e)
		return 0;
	snprintf(he->error, sizeof he->error, "%s", rk_errmsg());
	cli_err("--hash: %s", he->error);   /* the message names the member */
	return -1;
}

int cli_hash_finish(void)
{
	int bad = 0;
	for (int i = 0; i < H.n; i++)
		bad |= finish_entry(&H.e[i]);
	return bad ? -1 : 0;
}

int cli_hash_export_start(const char *path)
{
	if (!H.alg)
		return 0;
	H.out_path = path;
	if (rk_digest_new(&H.out, H.alg)) {
		cli_err("--hash: %s", rk_errmsg());
		return -1;
	}
	return 0;
}

void cli_hash_export_update(const void *buf, size_t n)
{
	rk_digest_update(H.out, buf, n);
}

int cli_hash_export_end(void)
{
	if (!H.out)
		return 0;
	rk_err e = rk_digest_final(H.out, &H.out_res);
	rk_digest_free(H.out);
	H.out = NULL;
	H.out_done = !e;
	return e ? -1 : 0;
}

const struct rk_hash_result *cli_hash_of(const char *path)
{
	struct hash_entry *he = H.alg ? entry(path) : NULL;
	return he && he->res.done ? &he->res : NULL;
}

const struct rk_hash_result *cli_hash_export(void)
{
	return H.out_done ? &H.out_res : NULL;
}

void cli_hash_print_text(FILE *f)
{
	if (!H.alg)
		return;
	uint64_t extra = 0;
	int nextra = 0;
	for (int i = 0; i < H.n; i++) {
		const struct hash_entry *he = &H.e[i];
		if (he->res.done)
			rk_esc_fprintf(f, "%s %s  %s\n", H.alg, he->res.hex, he->path);
		else
			rk_esc_fprintf(f, "%s not computed  %s (%s)\n", H.alg, he->path, he->error);
		extra += he->res.extra;
		nextra += he->res.extra > 0;
	}
	if (H.out_done)
		rk_esc_fprintf(f, "%s %s  %s\n", H.alg, H.out_res.hex, H.out_path);
	if (nextra)
		fprintf(f, "hash: each digest covers the whole member; %" PRIu64 " bytes of %d member%s "
		        "the command did not read were read for the hash (catch-up)\n",
		        extra, nextra, nextra == 1 ? "" : "s");
}

void cli_hash_json(rk_json *j)
{
	if (!rk_json_key_or_null(j, "hash", H.alg != NULL))
		return;
	rk_json_obj_begin(j);
	rk_json_kstr(j, "alg", H.alg);
	rk_json_key(j, "members");
	rk_json_arr_begin(j);
	for (int i = 0; i < H.n; i++) {
		const struct hash_entry *he = &H.e[i];
		rk_json_obj_begin(j);
		rk_json_kstr(j, "path", he->path);
		rk_json_kstr(j, "digest", he->res.done ? he->res.hex : NULL);
		CLI_JSON_U64S(j, { "size", he->res.size }, { "read_along", he->res.along },
		              { "catch_up", he->res.extra });
		rk_json_kstr(j, "error", he->res.done ? NULL : he->error);
		rk_json_obj_end(j);
	}
	rk_json_arr_end(j);
	if (rk_json_key_or_null(j, "export", H.out_done)) {
		rk_json_obj_begin(j);
		rk_json_kstr(j, "path", H.out_path);
		rk_json_ku64(j, "size", H.out_res.size);
		rk_json_kstr(j, "digest", H.out_res.hex);
		rk_json_obj_end(j);
	}
	rk_json_obj_end(j);
}
