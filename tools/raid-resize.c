/* raid-resize: change the space used on each member, the member count or
 * the level of an array, crash-safe and resumable.  Policy and
 * presentation only: the work is libmeta/resize.c (rk_resize.h). */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rk_util.h"
#include "test_hooks.h"
#include "rk_dev.h"
#include "rk_geom.h"
#include "rk_json.h"
#include "rk_probe.h"
#include "rk_resize.h"

#define MAX_ADD 64

static void usage(FILE *f)
{
	fprintf(f,
	"Usage: raid-resize --size BYTES|max [--volume-size BYTES] MEMBER...\n"
	"       raid-resize --add NEW [--add NEW...] [--level LEVEL] [--layout NAME] [--chunk BYTES] MEMBER...\n"
	"       raid-resize --level LEVEL [--layout NAME] [--chunk BYTES] MEMBER...\n"
	"       raid-resize --continue MEMBER...\n"
	"       raid-resize --revert MEMBER...\n"
	"       raid-resize --export OUT MEMBER...\n"
	"Changes an array offline.  MEMBERs are every member of the array, in any order.\n"
	"\n"
	"  --size BYTES         data bytes used on every member ('max': all each member\n"
	"                       holds); no data moves.  Growing zeroes the new space\n"
	"                       first.  Shrinking refuses to cut off a file system found\n"
	"                       at the start of the volume, or bytes below --volume-size\n"
	"  --volume-size BYTES  shrink: the volume bytes to keep (what lies beyond may go);\n"
	"                       without it a recognised file system must fit\n"
	"  --add NEW            add NEW as a member (repeat for more) and restripe the\n"
	"                       volume over all (RAID-0, 4, 5, 6 and RAID-10 near layouts;\n"
	"                       RAID-1 gains a mirror)\n"
	"  --level LEVEL        new level: 5 -> 6 (with --add), 0 -> 5, 1 -> 5, 4 <-> 5;\n"
	"                       RAID-10 stays 10 (--layout n3: another near count)\n"
	"  --layout NAME        new layout (default: kept, or the new level's default)\n"
	"  --chunk BYTES        new stripe unit during the same reshape\n"
	"  --continue           finish an interrupted resize, reshape or revert (a\n"
	"                       reshape being reverted goes on reverting)\n"
	"  --revert             undo a reshape in progress: the data already moved goes\n"
	"                       back to the old geometry (crash-safe, resumable), then\n"
	"                       the added members' superblocks are wiped\n"
	"  --export OUT         write the volume to OUT ('-': stdout), also mid-reshape\n"
	"  --force              add NEW members that carry recognised data\n"
	"  --json               one JSON document on stdout\n"
	"  --progress           progress on stderr even when not a terminal\n"
	"  --help, --version\n"
	"\n"
	"A reshape moves the data to a lower data offset stripe by stripe and records\n"
	"its position in every superblock after each flushed batch: after a crash,\n"
	"kill or Ctrl-C, run 'raid-resize --continue MEMBER... NEW...' (or --revert\n"
	"with the same members to go back).\n"
	"Sizes take K, M, G, T suffixes (powers of 1024).\n"
	"Exit: 0 done; 2 could not do it (nothing changed, or resumable with\n"
	"--continue); 64 bad usage.\n");
}

static volatile int g_stop;
static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

struct prog {
	struct cli_progress *pg;
	const char *what;
	int force, json;
	uint64_t stop_after;   /* --stop-after (0: none) */
};
/* Started on the first report, when the total is known. */
static void progress_cb(void *ctx, uint64_t done, uint64_t total)
{
	struct prog *p = ctx;
	if (p->stop_after && done >= p->stop_after)
		g_stop = 1;   /* as SIGINT: stops at this checkpoint */
	if (!p->pg)
		p->pg = cli_progress_start(p->what, total, p->force, p->json);
	if (p->pg)
		cli_progress_update(p->pg, done);
}

static void close_all(rk_dev **d, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		rk_dev_close(d[i]);
}

/* The command line. */
struct resize_args {
	int have_size, cont, revert, force;
	uint64_t size, stop_after;
	const char *layout, *export_to;
	const char *add[MAX_ADD];
	uint32_t nadd;
	struct rk_resize_opts resize;
	struct cli_common common;
};

enum { O_SIZE = 256, O_VSIZE, O_ADD, O_LEVEL, O_LAYOUT, O_CHUNK, O_CONT, O_REVERT, O_EXPORT, O_FORCE, O_BATCH,
       O_STOP_AFTER };

/* A size option (above 0) into *OUT: CLI_GO_ON or bad usage. */
static int size_option(const char *name, const char *arg, uint64_t *out)
{
	if (cli_parse_size(arg, out) || !*out)
		return cli_usage_error("%s %s: not a size", name, arg);
	return CLI_GO_ON;
}

static int on_option(void *ctx, int opt, char *arg)
{
	struct resize_args *a = ctx;
	struct rk_resize_opts *o = &a->resize;
	switch (opt) {
	case O_SIZE:
		a->have_size = 1;
		if (strcmp(arg, "max") && (cli_parse_size(arg, &a->size) || !a->size))
			return cli_usage_error("--size %s: not a size", arg);
		break;
	case O_VSIZE:
		return size_option("--volume-size", arg, &o->volume_size);
	case O_ADD:
		if (a->nadd >= MAX_ADD)
			return cli_usage_error("--add: at most %d new members at once", MAX_ADD);
		a->add[a->nadd++] = arg;
		break;
	case O_LEVEL:
		if (rk_level_parse(arg, &o->level))
			return cli_usage_error("--level %s: unknown level", arg);
		o->set_level = 1;
		break;
	case O_LAYOUT: a->layout = arg; break;
	case O_CHUNK:
		if (cli_parse_chunk(arg, &o->chunk))
			return cli_usage_error("--chunk %s: must be a power of two from 4K to 16M", arg);
		break;
	case O_CONT: a->cont = 1; break;
	case O_REVERT: a->revert = 1; break;
	case O_EXPORT: a->export_to = arg; break;
	case O_FORCE: a->force = 1; break;
	case O_BATCH:
		return size_option("--batch", arg, &o->batch_max);
	case O_STOP_AFTER:
		return size_option("--stop-after", arg, &a->stop_after);
	}
	return CLI_GO_ON;
}

/* One action, and what goes with it: CLI_GO_ON when they make sense. */
static int check_action(struct resize_args *a, int nmembers)
{
	struct rk_resize_opts *o = &a->resize;
	int reshape = a->nadd || o->set_level || a->layout || o->chunk;
	int nact = a->have_size + reshape + a->cont + a->revert + !!a->export_to;
	if (nact != 1)
		return cli_usage_error(nact ? "choose one of --size, --add/--level, --continue, --revert, --export"
		                            : "nothing to do: give --size, --add, --level, --continue, --revert or --export");
	if (o->volume_size && !a->have_size)
		return cli_usage_error("--volume-size goes with --size");
	if (nmembers <= 0)
		return cli_usage_error("no MEMBER given");
	if (a->layout) {
		if (!o->set_level)
			return cli_usage_error("--layout needs --level (the layout of the new level)");
		if (rk_layout_parse(o->level, a->layout, &o->layout))
			return cli_usage_error("--layout %s: not a layout of level %s", a->layout, rk_level_name(o->level));
	}
	return CLI_GO_ON;
}

/* The members (read-only for --export) and the --add ones into DEVS: 0,
 * or -1 with everything opened closed again (said). */
static int open_members(const struct resize_args *a, char **members, uint32_t n, rk_dev **devs)
{
	unsigned flags = a->export_to ? RK_DEV_RDONLY : RK_DEV_RDWR;
	for (uint32_t i = 0; i < n; i++)
		if (rk_dev_open(&devs[i], members[i], flags)) {
			cli_err("%s", rk_errmsg());
			close_all(devs, i);
			return -1;
		}
	for (uint32_t k = 0; k < a->nadd; k++) {
		struct rk_probe_result pr;
		if (!a->force && !rk_probe_path(a->add[k], &pr) && pr.found) {
			cli_err("--add %s: holds %s: refusing to overwrite it (--force to use it anyway)", a->add[k], pr.what);
			close_all(devs, n + k);
			return -1;
		}
		if (rk_dev_open(&devs[n + k], a->add[k], RK_DEV_RDWR)) {
			cli_err("--add %s", rk_errmsg());
			close_all(devs, n + k);
			return -1;
		}
	}
	return 0;
}

/* --export: the volume into a->export_to ('-': stdout), also mid-reshape.
 * -1 when OUT cannot be opened (said), else 0 with the outcome in *E. */
static int export_volume(const struct resize_args *a, rk_dev **devs, uint32_t n, struct prog *pp,
                         struct rk_resize_result *res, rk_err *e)
{
	uint64_t vsz = 0;
	*e = rk_resize_read(devs, n, NULL, 0, 0, &vsz);
	FILE *out = NULL;
	if (!*e) {
		out = strcmp(a->export_to, "-") ? fopen(a->export_to, "wb") : stdout;
		if (!out) {
			cli_err("--export %s: cannot open for writing", a->export_to);
			return -1;
		}
	}
	size_t bl = 8u << 20;
	uint8_t *buf = malloc(bl);
	pp->pg = cli_progress_start("raid-resize: export", vsz, a->common.progress, a->common.json);
	for (uint64_t p = 0; !*e && p < vsz;) {
		size_t k = vsz - p < bl ? (size_t)(vsz - p) : bl;
		if (!buf)
			*e = rk_fail(RK_E_NOMEM, "out of memory");
		else if (!(*e = rk_resize_read(devs, n, buf, k, p, NULL)) && fwrite(buf, 1, k, out) != k)
			*e = rk_fail(RK_E_IO, "--export %s: write failed", a->export_to);
		p += k;
		cli_progress_update(pp->pg, p);
	}
	free(buf);
	if (out && out != stdout && fclose(out) && !*e)
		*e = rk_fail(RK_E_IO, "--export %s: write failed", a->export_to);
	res->old_volume = res->new_volume = vsz;
	snprintf(res->did, sizeof res->did, "exported %llu bytes", (unsigned long long)vsz);
	return 0;
}

static void report_json(const char *action, rk_err e, const struct rk_resize_result *res)
{
	rk_json *j = rk_json_new(stdout);
	if (!j)
		return;
	rk_json_obj_begin(j);
	rk_json_kstr(j, "action", action);
	rk_json_kbool(j, "done", !e);
	rk_json_kstr(j, "error", e ? rk_errmsg() : NULL);
	CLI_JSON_U64S(j, { "old_volume_size", res->old_volume }, { "volume_size", res->new_volume },
	              { "events", res->events }, { "moved", res->moved }, { "checkpoints", res->checkpoints },
	              { "missing", res->missing });
	rk_json_kstr(j, "found", res->found[0] ? res->found : NULL);
	rk_json_kstr(j, "did", res->did);
	rk_json_obj_end(j);
	rk_json_free(j);
}

/* Opens the members, runs the one action and reports it: the exit status. */
static int resize(struct resize_args *a, char **members, uint32_t n)
{
	rk_dev **devs = calloc(n + a->nadd, sizeof *devs);
	if (!devs) {
		cli_err("out of memory");
		return EX_FAIL;
	}
	if (open_members(a, members, n, devs)) {
		free(devs);
		return EX_FAIL;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	struct rk_resize_opts *o = &a->resize;
	o->stop = &g_stop;
	struct prog pp = { .what = a->revert ? "raid-resize: revert" : a->cont ? "raid-resize: continue" : "raid-resize",
	                   .force = a->common.progress, .json = a->common.json, .stop_after = a->stop_after };
	o->progress = progress_cb;
	o->progress_ctx = &pp;
	struct rk_resize_result res;
	memset(&res, 0, sizeof res);
	rk_err e;
	const char *action;
	if (a->export_to) {
		action = "export";
		if (export_volume(a, devs, n, &pp, &res, &e)) {
			close_all(devs, n);
			free(devs);
			return EX_FAIL;
		}
	} else if (a->have_size) {
		action = "size";
		e = rk_resize_size(devs, n, a->size, o, &res);
	} else if (a->cont) {
		action = "continue";
		e = rk_resize_continue(devs, n, o, &res);
	} else if (a->revert) {
		action = "revert";
		e = rk_resize_revert(devs, n, o, &res);
	} else {
		action = "reshape";
		e = rk_resize_reshape(devs, n, devs + n, a->nadd, o, &res);
	}
	if (pp.pg)
		cli_progress_end(pp.pg);
	if (e)
		cli_err("%s", rk_errmsg());
	close_all(devs, n + a->nadd);
	free(devs);
	if (a->common.json) {
		report_json(action, e, &res);
	} else if (!e && strcmp(action, "export")) {
		rk_esc_fprintf(stdout, "%s\n", res.did);
		if (res.found[0])
			rk_esc_fprintf(stdout, "found: %s\n", res.found);
	}
	if (!e && res.missing) {
		cli_err("the array is degraded: %u role%s faulty (a member was missing); bring %s back with "
		        "raid-recover --rebuild", res.missing, res.missing == 1 ? "" : "s", res.missing == 1 ? "it" : "them");
		return EX_REPORT;
	}
	return cli_exit_for(e);
}

int main(int argc, char **argv)
{
	cli_init("raid-resize");
	cli_test_hooks_install();
	static const struct option lo[] = {
		{ "size", required_argument, 0, O_SIZE }, { "volume-size", required_argument, 0, O_VSIZE },
		{ "add", required_argument, 0, O_ADD }, { "level", required_argument, 0, O_LEVEL },
		{ "layout", required_argument, 0, O_LAYOUT }, { "chunk", required_argument, 0, O_CHUNK },
		{ "continue", no_argument, 0, O_CONT }, { "revert", no_argument, 0, O_REVERT },
		{ "export", required_argument, 0, O_EXPORT }, { "force", no_argument, 0, O_FORCE },
		{ "batch", required_argument, 0, O_BATCH },   /* tests: small checkpoints */
		{ "stop-after", required_argument, 0, O_STOP_AFTER },   /* tests: stop at a checkpoint past BYTES */
		CLI_OPTION_JSON, CLI_OPTION_PROGRESS, CLI_OPTION_DISK_SERIAL, CLI_OPTION_HELP, CLI_OPTION_VERSION, CLI_OPTION_END,
	};
	struct resize_args a;
	memset(&a, 0, sizeof a);
	a.resize.layout = RK_RESIZE_LAYOUT_KEEP;
	const struct cli_command cmd = { "", lo, usage, on_option, &a, &a.common };
	int rc = cli_parse_options(argc, argv, &cmd);
	if (rc == CLI_GO_ON)
		rc = check_action(&a, argc - optind);
	if (rc != CLI_GO_ON)
		return rc;
	return resize(&a, argv + optind, (uint32_t)(argc - optind));
}
