/* raid-recover: rebuild a missing, failed or stale member; restore damaged
 * superblock copies.  Policy and presentation only: the work is
 * rk_recover_rebuild() and rk_recover_restore() (libmeta/rk_recover.h). */
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

static void usage(FILE *f)
{
	fprintf(f,
	"Usage: raid-recover --rebuild NEW [--role N] [--force] [--json] [--progress] MEMBER...\n"
	"       raid-recover --restore-superblock [--json] MEMBER...\n"
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
	"  --json        one JSON document on stdout\n"
	"  --progress    progress (rate, ETA) on stderr even when not a terminal\n"
	"  --hash ALG    with --detect: the ALG (sha256, sha1, md5) digest of each IMAGE\n"
	"  --audit FILE  append one JSON line about this run to FILE\n"
	"  --help, --version\n"
	"\n"
	"Exit: 0 done, nothing wrong found; 1 done, something repaired;\n"
	"2 could not do it (too few members, I/O error, place not certain);\n"
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

/* The command line. */
struct recover_args {
	const char *newpath;
	int restore, detect, force;
	int64_t role;
	uint64_t checkpoint;
	struct cli_common common;
};

enum { O_REBUILD = 256, O_RESTORE, O_DETECT, O_ROLE, O_FORCE, O_CKPT, O_EXPORT };

static int on_option(void *ctx, int opt, char *arg)
{
	struct recover_args *a = ctx;
	uint64_t v;
	switch (opt) {
	case O_REBUILD: a->newpath = arg; break;
	case O_RESTORE: a->restore = 1; break;
	case O_DETECT: a->detect = 1; break;
	case O_EXPORT: break;
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
	if (a.detect) {
		cli_err("--detect is not supported by this build yet");
		return EX_FAIL;
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
