/* raid-recover: rebuild a missing, failed or stale member; restore damaged
 * superblock copies.  Policy and presentation only: the work is
 * rk_recover_rebuild() and rk_recover_restore() (libmeta/rk_recover.h). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "cli.h"
#include "rk_util.h"
#include "rk_test_hooks.h"
#include "test_hooks.h"
#include "rk_geom.h"
#include "rk_json.h"
#include "rk_print.h"
#include "rk_recover.h"
#include "rk_array.h"
#include "rk_detect.h"
#include "rk_geometry.h"
#include "cli_fscheck.h"

static void usage(FILE *f)
{
	fprintf(f,
	"Usage: raid-recover --rebuild NEW [--role N] [--force] [--json] [--progress] MEMBER...\n"
	"       raid-recover --restore-superblock [--json] MEMBER...\n"
	"       raid-recover --detect [--json] [--export OUT] [--save-geometry FILE]\n"
	"                    [--level L] [--chunk C] [--members N] [--offset O] IMAGE...\n"
	"\n"
	"--rebuild NEW   finds the array among MEMBERs and reconstructs its missing,\n"
	"                failed or stale role onto NEW: a new image file (created\n"
	"                sparse with the members' size when it does not exist), a\n"
	"                device at least as large, or the stale member itself.  The\n"
	"                role is marked rebuilding with a checkpoint; run the same\n"
	"                command again after an interruption and it resumes.  The\n"
	"                array stays readable (degraded) throughout.\n"
	"  --role N      the role to rebuild when more than one has no member\n"
	"  --force       overwrite a NEW that holds a file system, partition table\n"
	"                or another array\n"
	"  --checkpoint SIZE  record progress every SIZE bytes (default 64M)\n"
	"--restore-superblock\n"
	"                rewrites a damaged or missing superblock copy from the\n"
	"                other copy of the same member; a member with neither copy\n"
	"                gets one from the other members' role table when its place\n"
	"                is certain (the only role without a member, a member's size,\n"
	"                and its data agrees with the others').  Writes nothing when\n"
	"                nothing needs it.\n"
	"--detect        finds an array whose metadata is gone from the content of the\n"
	"                IMAGEs (any order, unrelated images allowed): level, members,\n"
	"                role of each image, chunk, layout, data start per image,\n"
	"                missing roles; prints the evidence (parity rows, anchors,\n"
	"                file-system check) and the runner-ups, and the mdadm line.\n"
	"                Reads at most 1 GiB of any image; writes nothing to them.\n"
	"  --export OUT  writes the volume to OUT (missing roles rebuilt)\n"
	"  --save-geometry FILE  the answer as JSON, for raid-assemble --geometry\n"
	"  --level L, --chunk C, --members N, --offset O  narrow the search\n"
	"  --json        one JSON document on stdout\n"
	"  --progress    progress (rate, ETA) on stderr even when not a terminal\n"
	"  --hash ALG    with --detect: the ALG (sha256, sha1, md5) digest of each IMAGE\n"
	"  --audit FILE  append one JSON line about this run to FILE\n"
	"  --help, --version\n"
	"\n"
	"Exit: 0 done, nothing wrong found; 1 done, something repaired;\n"
	"2 could not do it (too few members, I/O error, place not certain);\n"
	"--detect: 0 found; 1 found with something to report (a missing role, low\n"
	"confidence, the file-system check complains); 2 nothing found or ambiguous;\n"
	"64 bad usage.\n");
}

/* ---- --rebuild ---- */

struct rb_ui {
	struct cli_progress *pr;
	int json, force_progress;
	const char *newpath;
};

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct rb_ui *ui = ctx;
	(void)total;
	cli_progress_update(ui->pr, done);
}

static void on_plan(void *ctx, const struct rk_rebuild_result *r)
{
	struct rb_ui *ui = ctx;
	char a[64], b[64];
	if (!ui->json) {
		rk_size_words(r->start, a, sizeof a);
		rk_size_words(r->total, b, sizeof b);
		rk_esc_fprintf(stdout, "rebuilding role %u of %u onto %s (%s)\n", r->role, r->nroles, ui->newpath,
		               r->new_what);
		if (r->resumed)
			printf("resuming at %" PRIu64 " (%s of %s of the data area already rebuilt)\n", r->start, a, b);
		fflush(stdout);
	}
	ui->pr = cli_progress_start("rebuild", r->total - r->start, ui->force_progress, ui->json);
}

/* Tests: RAIDKIT_TEST_KILL_AT_WRITE=N stops the process "dead" at member
 * write N (counted over every member and NEW), as a kill would. */
static rk_fault_plan *test_plan;
static rk_err test_wrap(void *ctx, uint32_t idx, rk_dev **dev)
{
	(void)ctx;
	return rk_dev_fault(dev, *dev, test_plan, (int)idx);
}

/* The --rebuild JSON report: -1 when out of memory. */
static int rebuild_json(const char *newpath, rk_err e, const struct rk_rebuild_result *r)
{
	char u[37], mu[37];
	uuid_unparse_lower(r->array_uuid, u);
	uuid_unparse_lower(r->member_uuid, mu);
	rk_json *j = rk_json_new(stdout);
	if (!j)
		return -1;
	rk_json_obj_begin(j);
	rk_json_kstr(j, "action", "rebuild");
	rk_json_kstr(j, "result", e ? "failed" : "done");
	if (e)
		rk_json_kstr(j, "error", rk_errmsg());
	rk_json_kstr(j, "uuid", u);
	rk_json_kstr(j, "name", r->name);
	rk_json_kstr(j, "level", rk_level_name(r->level));
	rk_json_ku64(j, "role", r->role);
	rk_json_key(j, "new");
	rk_json_obj_begin(j);
	rk_json_kstr(j, "path", newpath);
	rk_json_kstr(j, "was", rk_new_kind_name(r->new_kind));
	rk_json_kstr(j, "what", r->new_what);
	rk_json_kstr(j, "uuid", mu);
	rk_json_ku64(j, "size", r->new_size);
	rk_json_obj_end(j);
	rk_json_kbool(j, "resumed", r->resumed);
	CLI_JSON_U64S(j, { "start", r->start }, { "done", r->done }, { "total", r->total },
	              { "events_before", r->events_before }, { "events_after", r->events_after });
	rk_json_obj_end(j);
	rk_json_free(j);
	return 0;
}

static int do_rebuild(const char *newpath, char **members, uint32_t n, int64_t role, int force, uint64_t ckpt,
                      int json, int progress)
{
	struct rb_ui ui = { .json = json, .force_progress = progress, .newpath = newpath };
	struct rk_rebuild_opts o = {
		.role = role, .force = force, .checkpoint_bytes = ckpt,
		.progress = on_progress, .progress_ctx = &ui, .on_plan = on_plan,
	};
	const struct rk_fault_spec *spec = rk_test_hooks_fault();   /* tests only */
	if (spec) {
		if (rk_fault_plan_create(&test_plan, spec)) {
			cli_err_rk("test hook");
			return EX_FAIL;
		}
		o.wrap_dev = test_wrap;
	}
	struct rk_rebuild_result r;
	rk_err e = rk_recover_rebuild(newpath, members, n, &o, &r);
	rk_fault_plan_free(test_plan);
	if (ui.pr) {
		if (!e)
			cli_progress_end(ui.pr);
		else {
			free(ui.pr);   /* no "done" line; end the progress line */
			if (progress || (!json && isatty(STDERR_FILENO)))
				fputc('\n', stderr);
		}
	}
	if (json && rebuild_json(newpath, e, &r))
		return EX_FAIL;
	if (e) {
		cli_err("%s", rk_errmsg());
		if (r.total && r.done < r.total && (e == RK_E_IO || e == RK_E_FAULT))
			cli_err("the rebuild of role %u stopped at %" PRIu64 " of %" PRIu64
			        " bytes; run the same command again to resume", r.role, r.done, r.total);
		return cli_exit_for(e);
	}
	cli_audit_written("rebuild", newpath, r.start, r.total - r.start, NULL);
	if (!json) {
		char a[64], mu[37];
		rk_size_words(r.total, a, sizeof a);
		uuid_unparse_lower(r.member_uuid, mu);
		if (r.new_kind == RK_NEW_CREATED)
			rk_esc_fprintf(stdout, "created %s (%" PRIu64 " bytes, sparse)\n", newpath, r.new_size);
		printf("rebuilt role %u: %" PRIu64 " bytes (%s) of data area; member UUID %s\n", r.role, r.total - r.start, a, mu);
		printf("role %u is active again; events %" PRIu64 " -> %" PRIu64 "\n", r.role, r.events_before, r.events_after);
		if (r.notes[0])
			fputs(r.notes, stdout);
	}
	return EX_DONE;
}

/* ---- --restore-superblock ---- */

static int do_restore(char **members, uint32_t n, int json)
{
	struct rk_restore_result *r = NULL;
	rk_err e = rk_recover_restore(members, n, NULL, &r);
	if (e) {
		cli_err("%s", rk_errmsg());
		return cli_exit_for(e);
	}
	if (json) {
		rk_json *j = rk_json_new(stdout);
		if (!j) {
			rk_restore_result_free(r);
			return EX_FAIL;
		}
		rk_json_obj_begin(j);
		rk_json_kstr(j, "action", "restore-superblock");
		rk_json_ku64(j, "repaired", r->nrepaired);
		rk_json_ku64(j, "unrepaired", r->ncannot);
		rk_json_key(j, "members");
		rk_json_arr_begin(j);
		for (uint32_t i = 0; i < r->n; i++) {
			const struct rk_restore_member *m = &r->m[i];
			rk_json_obj_begin(j);
			rk_json_kstr(j, "path", m->path);
			rk_json_kstr(j, "result", rk_restore_action_name(m->action));
			if (rk_json_key_or_null(j, "role", m->role >= 0))
				rk_json_i64(j, m->role);
			rk_json_ku64(j, "events", m->events);
			rk_json_key(j, "rewritten");
			rk_json_arr_begin(j);
			if (m->copies & 1)
				rk_json_str(j, "primary");
			if (m->copies & 2)
				rk_json_str(j, "backup");
			rk_json_arr_end(j);
			rk_json_kstr(j, "what", m->what);
			rk_json_obj_end(j);
		}
		rk_json_arr_end(j);
		rk_json_obj_end(j);
		rk_json_free(j);
	} else {
		for (uint32_t i = 0; i < r->n; i++)
			rk_esc_fprintf(stdout, "%s: %s: %s\n", r->m[i].path, rk_restore_action_name(r->m[i].action),
			               r->m[i].what);
		if (!r->nrepaired && !r->ncannot)
			printf("nothing to restore: every member has two good copies; nothing written\n");
		else
			printf("%u member(s) repaired, %u not\n", r->nrepaired, r->ncannot);
	}
	for (uint32_t i = 0; i < r->n; i++)
		if (r->m[i].action == RK_RESTORE_CANNOT)
			cli_err("%s: not repaired: %s", r->m[i].path, r->m[i].what);
	int rc = r->ncannot ? EX_FAIL : r->nrepaired ? EX_REPORT : EX_DONE;
	rk_restore_result_free(r);
	return rc;
}

/* ---- --detect ---- */

struct detect_opts {
	struct rk_detect_hints h;
	const char *export_to, *save_to;
};

/* Copies the LEN bytes of ARR's volume to the file TO (sparse where
 * zero); with HASHED the bytes also feed --hash's export digest. */
static int copy_volume(rk_array *arr, const char *to, uint64_t len, int progress, int json, int hashed)
{
	int fd = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		cli_err("%s: cannot open for writing: %s", to, strerror(errno));
		return EX_FAIL;
	}
	struct cli_progress *pg = cli_progress_start("raid-recover: export", len, progress, json);
	char why[512];
	uint64_t done;
	int rc = EX_DONE;
	if (cli_copy_volume(arr, 0, len, fd, 1, hashed, pg, &done, why, sizeof why)) {
		if (strncmp(why, "write failed", 12))
			cli_err("%s", why);
		else
			cli_err("%s: %s", to, why);
		rc = EX_FAIL;
	}
	if (pg)
		cli_progress_end(pg);
	if (close(fd) && rc == EX_DONE) {
		cli_err("%s: write failed: %s", to, strerror(errno));
		rc = EX_FAIL;
	}
	return rc;
}

/* The volume of ARR (VS bytes) copied to a temporary file (whole up to
 * FSC_WHOLE_MAX, else its start) and its file systems checked there. */
static void check_on_temp(rk_array *arr, uint64_t vs, struct fs_checks *fc)
{
	char tmp[4096];
	int fd = cli_tmpfile(tmp, sizeof tmp, "raid-recover-detect");
	if (fd < 0)
		return;
	close(fd);
	int whole = vs <= FSC_WHOLE_MAX;
	if (copy_volume(arr, tmp, whole ? vs : FSC_HEAD, 0, 1, 0) == EX_DONE)
		fsc_volume(arr, tmp, whole, fc);
	unlink(tmp);
}

/* The confidence under which failing checks can refute an answer: 0.9,
 * or RAIDKIT_TEST_REFUTE_BELOW (tests: an answer of the cases is surer). */
static double refute_bar(void)
{
	const char *e = getenv("RAIDKIT_TEST_REFUTE_BELOW");
	return e && *e ? strtod(e, NULL) : 0.9;
}

/* An answer under 0.9 confident on which two or more file systems were
 * checked and every one failed is not given (seed 1256: a RAID-0 of 2
 * read as a RAID-5 of 3 with a role missing, confidence 0.71; its four
 * partitions' checkers all reported problems).  One failing check alone
 * does not refute: checkers fail on sound file systems whose log wants
 * replaying (xfs_repair -n exits 1 on the corpus generator's XFS, seeds
 * 1189 and 1352, exact), as on evidence taken from a running machine.
 * Above 0.9 the answer stands, reported (exit 1). */
static int checks_refute(struct rk_detect_result *r, const struct fs_checks *fc)
{
	if (!r->found || r->confidence >= refute_bar() || fsc_all_failed(fc) < 2)
		return 0;
	char lb[32];
	r->found = 0;
	snprintf(r->why, sizeof r->why,
	         "held back: the reading found (RAID-%s %s, chunk %" PRIu64 ", %u members, confidence %.2f) fails "
	         "every file-system check run on it",
	         rk_level_name(r->geom.level), rk_layout_name(r->geom.level, r->geom.layout, lb, sizeof lb), r->geom.chunk,
	         r->geom.nroles, r->confidence);
	return 1;
}

/* Exports (to OUT, or a temporary file) and checks the file systems found.
 * An answer under 0.9 confident is checked on a temporary copy first, so
 * that OUT is written only when the checks do not refute it. */
static int detect_use(struct rk_detect_result *r, char **images, uint32_t n, const struct detect_opts *o,
                      int progress, int json, struct fs_checks *fc)
{
	rk_array *arr;
	if (rk_geometry_open(&arr, &r->geom, images, n)) {
		cli_err("opening the detected array: %s", rk_errmsg());
		return EX_FAIL;
	}
	uint64_t vs = rk_array_size(arr);
	int rc = EX_DONE, checked = 0;
	if (!o->export_to || r->confidence < refute_bar()) {
		check_on_temp(arr, vs, fc);
		checked = 1;
		if (checks_refute(r, fc) && o->export_to)
			cli_err("--export: nothing written: %s", r->why);
	}
	if (o->export_to && r->found) {
		rc = cli_hash_export_start(o->export_to) ? EX_FAIL : copy_volume(arr, o->export_to, vs, progress, json, 1);
		if (rc == EX_DONE && cli_hash_export_end())
			rc = EX_FAIL;
		cli_audit_written("export", o->export_to, 0, rc == EX_DONE ? vs : 0, cli_hash_export());
		if (rc == EX_DONE && !checked)
			fsc_volume(arr, o->export_to, 1, fc);
	}
	rk_array_close(arr);
	return rc;
}

/* The entry "filesystem" names: the first with a file system recognised,
 * else the first (an empty one when nothing was looked at). */
static const struct fs_check *fsc_main(const struct fs_checks *fc)
{
	static const struct fs_check none;
	for (uint32_t k = 0; k < fc->n; k++)
		if (fc->c[k].type[0])
			return &fc->c[k];
	return fc->n ? &fc->c[0] : &none;
}

/* One file-system object: its region (partition null for the whole
 * volume), type, checker and what the check said. */
static void fs_json(rk_json *j, const struct fs_check *c)
{
	rk_json_obj_begin(j);
	if (rk_json_key_or_null(j, "partition", c->partition != 0))
		rk_json_u64(j, c->partition);
	CLI_JSON_U64S(j, { "offset", c->offset }, { "size", c->size });
	if (rk_json_key_or_null(j, "type", c->type[0] != 0))
		rk_json_str(j, c->type);
	if (rk_json_key_or_null(j, "check", c->tool[0] != 0))
		rk_json_str(j, c->tool);
	if (rk_json_key_or_null(j, "check_exit", c->ran))
		rk_json_i64(j, c->status);
	rk_json_kstr(j, "result", c->result);
	rk_json_obj_end(j);
}

/* The evidence object of --json. */
static void evidence_json(rk_json *j, const struct rk_detect_result *r, char **images, const struct fs_checks *fc)
{
	rk_json_key(j, "evidence");
	rk_json_obj_begin(j);
	CLI_JSON_U64S(j, { "rows_checked", r->rows_checked }, { "rows_nonzero", r->rows_nonzero },
	              { "rows_consistent", r->rows_consistent });
	rk_json_key(j, "consistent_share");
	rk_json_double(j, r->rows_nonzero ? (double)r->rows_consistent / (double)r->rows_nonzero : 0);
	rk_json_kbool(j, "redundancy_checked", r->redundancy_checked);
	rk_json_kbool(j, "sparse", r->sparse);
	CLI_JSON_U64S(j, { "anchors_agree", r->anchors_agree }, { "anchors_total", r->anchors_total },
	              { "probes_ok", r->probes_ok }, { "probes_failed", r->probes_bad },
	              { "hypotheses", r->hypotheses }, { "max_read_per_image", r->max_read });
	rk_json_key(j, "anchors");
	rk_json_arr_begin(j);
	for (uint32_t k = 0, shown = 0; k < r->nanchors && shown < 64; k++) {
		const struct rk_detect_anchor *a = &r->anchors[k];
		shown++;
		rk_json_obj_begin(j);
		rk_json_kstr(j, "what", a->what);
		rk_json_kstr(j, "image", images[a->image]);
		CLI_JSON_U64S(j, { "image_offset", a->image_off }, { "volume_offset", a->volume_off });
		rk_json_kbool(j, "agrees", a->agrees);
		rk_json_obj_end(j);
	}
	rk_json_arr_end(j);
	rk_json_key(j, "filesystem");   /* the first recognised; all of them in "filesystems" */
	fs_json(j, fsc_main(fc));
	rk_json_key(j, "partition_table");
	if (fc->table[0])
		rk_json_str(j, fc->table);
	else
		rk_json_null(j);
	rk_json_key(j, "filesystems");
	rk_json_arr_begin(j);
	for (uint32_t k = 0; k < fc->n; k++)
		fs_json(j, &fc->c[k]);
	rk_json_arr_end(j);
	rk_json_kstr(j, "why", r->why);
	rk_json_obj_end(j);
}

static void detect_json(const struct rk_detect_result *r, char **images, const struct fs_checks *fc,
                        const char *mdadm, FILE *f)
{
	char lb[32];
	rk_json *j = rk_json_new(f);
	if (!j)
		return;
	rk_json_obj_begin(j);
	rk_json_kbool(j, "found", r->found);
	rk_json_key(j, "confidence");
	rk_json_double(j, r->confidence);
	if (r->geom.roles)
		rk_geometry_json(j, &r->geom);
	evidence_json(j, r, images, fc);
	rk_json_key(j, "unused");
	rk_json_arr_begin(j);
	for (uint32_t i = 0; i < r->nimages; i++)
		if (r->image_role[i] < 0)
			rk_json_str(j, images[i]);
	rk_json_arr_end(j);
	rk_json_key(j, "alternatives");
	rk_json_arr_begin(j);
	for (uint32_t k = 0; k < r->nalts; k++) {
		const struct rk_detect_alt *a = &r->alts[k];
		rk_json_obj_begin(j);
		rk_json_kstr(j, "level", rk_level_name(a->level));
		rk_json_kstr(j, "layout", rk_layout_name(a->level, a->layout, lb, sizeof lb));
		CLI_JSON_U64S(j, { "chunk", a->chunk }, { "members_total", a->members_total });
		rk_json_key(j, "score");
		rk_json_double(j, a->score);
		rk_json_kstr(j, "why_lost", a->why_lost);
		rk_json_obj_end(j);
	}
	rk_json_arr_end(j);
	if (rk_json_key_or_null(j, "mdadm", mdadm != NULL))
		rk_json_str(j, mdadm);
	if (f == stdout)   /* the report, not the saved geometry */
		cli_hash_json(j);
	rk_json_obj_end(j);
	rk_json_free(j);
}

/* One "file system:" line of the words. */
static void fs_words(const struct fs_check *c)
{
	char where[96] = "";
	if (c->partition)
		snprintf(where, sizeof where, " in partition %u (volume bytes %" PRIu64 " + %" PRIu64 ")", c->partition,
		         c->offset, c->size);
	if (!c->type[0])
		printf("  file system%s: none recognised\n", where);
	else if (c->tool[0])
		printf("  file system%s: %s; %s: %s\n", where, c->type, c->tool, c->result);
	else
		printf("  file system%s: %s; %s\n", where, c->type, c->result);
}

static void detect_words(const struct rk_detect_result *r, char **images, const struct fs_checks *fc,
                         const char *mdadm)
{
	char lb[32], sz[64];
	const struct rk_geometry *g = &r->geom;
	if (r->found) {
		rk_size_words(g->volume_size, sz, sizeof sz);
		printf("found: RAID-%s, layout %s, chunk %" PRIu64 ", %u members, volume %" PRIu64 " bytes (%s); confidence %.2f\n",
		       rk_level_name(g->level), rk_layout_name(g->level, g->layout, lb, sizeof lb), g->chunk, g->nroles,
		       g->volume_size, sz, r->confidence);
		for (uint32_t k = 0; k < g->nroles; k++)
			if (g->roles[k].path)
				rk_esc_fprintf(stdout, "  role %u: %s, data from byte %" PRIu64 "\n", k, g->roles[k].path, g->roles[k].offset);
			else
				printf("  role %u: missing (rebuilt from the others on export)\n", k);
	} else
		printf("not found: %s\n", r->why);
	for (uint32_t i = 0; i < r->nimages; i++)
		if (r->image_role[i] < 0)
			rk_esc_fprintf(stdout, "  not part of it: %s\n", images[i]);
	printf("evidence:\n");
	if (r->redundancy_checked)
		printf("  parity/mirrors: %" PRIu64 " of %" PRIu64 " non-zero sampled rows consistent (%" PRIu64 " rows sampled over the whole members)\n",
		       r->rows_consistent, r->rows_nonzero, r->rows_checked);
	else
		printf("  parity/mirrors: not checkable (no redundancy left with the roles present)\n");
	printf("  anchors: %u of %u agree; file-system predictions: %u hold, %u fail\n", r->anchors_agree,
	       r->anchors_total, r->probes_ok, r->probes_bad);
	for (uint32_t k = 0, shown = 0; k < r->nanchors && shown < 8; k++)
		if (r->anchors[k].agrees) {
			shown++;
			rk_esc_fprintf(stdout, "    %s: %s byte %" PRIu64 " = volume byte %" PRIu64 "\n", r->anchors[k].what,
			               images[r->anchors[k].image], r->anchors[k].image_off, r->anchors[k].volume_off);
		}
	if (fc->table[0])
		printf("  partition table: %s\n", fc->table);
	for (uint32_t k = 0; k < fc->n; k++)
		fs_words(&fc->c[k]);
	if (!fc->n && r->found)
		printf("  file system: not looked at\n");
	printf("  %" PRIu64 " hypotheses scored; at most %" PRIu64 " bytes read from one image\n", r->hypotheses, r->max_read);
	for (uint32_t k = 0; k < r->nalts && k < 5; k++)
		printf("  runner-up: RAID-%s %s chunk %" PRIu64 ", %u members: %s\n", rk_level_name(r->alts[k].level),
		       rk_layout_name(r->alts[k].level, r->alts[k].layout, lb, sizeof lb), r->alts[k].chunk,
		       r->alts[k].members_total, r->alts[k].why_lost);
	if (mdadm)
		printf("md can serve it (nothing is written by raid-recover; check the device names):\n  %s\n", mdadm);
}

/* Writes the geometry file: the --json document. */
static int save_geometry(const struct rk_detect_result *r, char **images, const struct fs_checks *fc,
                         const char *mdadm, const char *to)
{
	FILE *f = fopen(to, "w");
	if (!f) {
		cli_err("%s: cannot open for writing: %s", to, strerror(errno));
		return EX_FAIL;
	}
	detect_json(r, images, fc, mdadm, f);
	if (fclose(f)) {
		cli_err("%s: write failed: %s", to, strerror(errno));
		return EX_FAIL;
	}
	return EX_DONE;
}

/* The "decided" of the audit line: the geometry found. */
static void audit_geometry(rk_json *j, const void *ctx)
{
	rk_json_obj_begin(j);
	rk_geometry_json(j, ctx);
	rk_json_obj_end(j);
}

static int do_detect(char **images, uint32_t n, const struct detect_opts *o, int json, int progress)
{
	struct rk_detect_result *r = NULL;
	rk_err e = rk_detect_run(images, n, &o->h, &r);
	if (e) {
		cli_err("%s", rk_errmsg());
		return cli_exit_for(e);
	}
	struct fs_checks fc;
	memset(&fc, 0, sizeof fc);
	char mdbuf[4096];
	const char *mdadm = NULL;
	int rc = EX_DONE;
	if (r->found) {
		for (uint32_t k = 0; k < r->geom.nroles; k++)   /* lets --geometry find renamed images */
			if (r->geom.roles[k].path &&
			    rk_geometry_fingerprint(r->geom.roles[k].path, r->geom.roles[k].offset, r->geom.member_size,
			                            r->geom.roles[k].fp) == RK_OK)
				r->geom.roles[k].have_fp = 1;
		r->geom.confidence = r->confidence;
		rc = detect_use(r, images, n, o, progress, json, &fc);
		if (r->found && rk_geometry_mdadm_line(&r->geom, mdbuf, sizeof mdbuf) == RK_OK)
			mdadm = mdbuf;
	} else if (o->export_to)
		cli_err("--export: nothing written: %s", r->why);
	/* detect reads samples: the images' digests need a pass of their own */
	if (cli_hash_finish() && rc == EX_DONE)
		rc = EX_REPORT;
	if (r->found)
		cli_audit_decided(audit_geometry, &r->geom);
	if (json)
		detect_json(r, images, &fc, mdadm, stdout);
	else {
		detect_words(r, images, &fc, mdadm);
		cli_hash_print_text(stdout);
	}
	if (o->save_to && r->found && save_geometry(r, images, &fc, mdadm, o->save_to))
		rc = EX_FAIL;
	if (rc == EX_DONE)
		rc = !r->found ? EX_FAIL : (r->missing || r->confidence < 0.9 || fsc_any_problem(&fc)) ? EX_REPORT : EX_DONE;
	rk_detect_free(r);
	return rc;
}

/* The command line. */
struct recover_args {
	const char *newpath;
	struct detect_opts det;
	int detect_opt;   /* a --detect option was given */
	int restore, detect, force;
	int64_t role;
	uint64_t checkpoint;
	struct cli_common common;
};

enum { O_REBUILD = 256, O_RESTORE, O_DETECT, O_ROLE, O_FORCE, O_CKPT, O_EXPORT, O_SAVE, O_LEVEL, O_CHUNK, O_MEMBERS, O_OFFSET };

static int on_option(void *ctx, int opt, char *arg)
{
	struct recover_args *a = ctx;
	uint64_t v;
	switch (opt) {
	case O_REBUILD: a->newpath = arg; break;
	case O_RESTORE: a->restore = 1; break;
	case O_DETECT: a->detect = 1; break;
	case O_EXPORT:
		if (!*arg)
			return cli_usage_error("--export: empty path");
		a->det.export_to = arg;
		a->detect_opt = 1;
		break;
	case O_SAVE:
		if (!*arg)
			return cli_usage_error("--save-geometry: empty path");
		a->det.save_to = arg;
		a->detect_opt = 1;
		break;
	case O_LEVEL:
		if (rk_level_parse(arg, &a->det.h.level))
			return cli_usage_error("--level: not a level: %s", arg);
		a->det.h.have_level = 1;
		a->detect_opt = 1;
		break;
	case O_CHUNK:
		if (cli_parse_size(arg, &a->det.h.chunk) || !a->det.h.chunk || a->det.h.chunk % 512 ||
		    a->det.h.chunk > RK_GEOM_MAX_CHUNK)
			return cli_usage_error("--chunk: not a chunk size (a multiple of 512 up to 1G): %s", arg);
		a->detect_opt = 1;
		break;
	case O_MEMBERS:
		if (cli_parse_uint(arg, 2, 32, &v))
			return cli_usage_error("--members: not a member count from 2 to 32: %s", arg);
		a->det.h.members = (uint32_t)v;
		a->detect_opt = 1;
		break;
	case O_OFFSET:
		if (cli_parse_size(arg, &a->det.h.offset) || a->det.h.offset % 512)
			return cli_usage_error("--offset: not a multiple of 512: %s", arg);
		a->det.h.have_offset = 1;
		a->detect_opt = 1;
		break;
	case O_ROLE:
		if (cli_parse_uint(arg, 0, RK_SB_MAX_ROLES - 1, &v))
			return cli_usage_error("--role: not a role number: %s", arg);
		a->role = (int64_t)v;
		break;
	case O_FORCE: a->force = 1; break;
	case O_CKPT:
		if (cli_parse_size(arg, &a->checkpoint) || a->checkpoint == 0)
			return cli_usage_error("--checkpoint: not a size: %s", arg);
		break;
	}
	return CLI_GO_ON;
}

/* The run; main() appends the --audit line with its exit status. */
static int recover_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "rebuild", required_argument, NULL, O_REBUILD },
		{ "restore-superblock", no_argument, NULL, O_RESTORE },
		{ "detect", no_argument, NULL, O_DETECT },
		{ "export", required_argument, NULL, O_EXPORT },
		{ "save-geometry", required_argument, NULL, O_SAVE },
		{ "level", required_argument, NULL, O_LEVEL },
		{ "chunk", required_argument, NULL, O_CHUNK },
		{ "members", required_argument, NULL, O_MEMBERS },
		{ "offset", required_argument, NULL, O_OFFSET },
		{ "role", required_argument, NULL, O_ROLE },
		{ "force", no_argument, NULL, O_FORCE },
		{ "checkpoint", required_argument, NULL, O_CKPT },
		CLI_OPTION_JSON, CLI_OPTION_PROGRESS, CLI_OPTION_DISK_SERIAL, CLI_OPTION_HASH, CLI_OPTION_AUDIT,
		CLI_OPTION_HELP, CLI_OPTION_VERSION, CLI_OPTION_END,
	};
	cli_init("raid-recover");
	cli_test_hooks_install();
	struct recover_args a;
	memset(&a, 0, sizeof a);
	a.role = -1;
	const struct cli_command cmd = { "hV", longopts, usage, on_option, &a, &a.common };
	int rc = cli_parse_options(argc, argv, &cmd);
	if (rc != CLI_GO_ON)
		return rc;
	int modes = (a.newpath != NULL) + a.restore + a.detect;
	if (modes != 1)
		return cli_usage_error("give exactly one of --rebuild NEW, --restore-superblock, --detect");
	if (a.common.hash && !a.detect)
		return cli_usage_error("--hash: goes with --detect (--rebuild and --restore-superblock write)");
	if (optind >= argc)
		return cli_usage_error("no MEMBER given");
	if (a.detect_opt && !a.detect)
		return cli_usage_error("--export, --save-geometry, --level, --chunk, --members and --offset go with --detect");
	if (a.detect) {
		if (a.role >= 0 || a.force || a.checkpoint)
			return cli_usage_error("--role, --force and --checkpoint go with --rebuild");
		return do_detect(argv + optind, (uint32_t)(argc - optind), &a.det, a.common.json, a.common.progress);
	}
	if (a.restore && (a.role >= 0 || a.force || a.checkpoint))
		return cli_usage_error("--role, --force and --checkpoint go with --rebuild");
	if (a.newpath && !*a.newpath)
		return cli_usage_error("--rebuild: empty path");
	char **members = argv + optind;
	uint32_t n = (uint32_t)(argc - optind);
	if (a.restore)
		return do_restore(members, n, a.common.json);
	return do_rebuild(a.newpath, members, n, a.role, a.force, a.checkpoint, a.common.json, a.common.progress);
}

int main(int argc, char **argv)
{
	return cli_audit_end(recover_main(argc, argv));
}
