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

static int exit_for(rk_err e)
{
	return e == RK_E_INVAL ? EX_USAGE : EX_FAIL;
}

int main(int argc, char **argv)
{
	cli_init("raid-resize");
	cli_test_hooks_install();
	enum { O_SIZE = 256, O_VSIZE, O_ADD, O_LEVEL, O_LAYOUT, O_CHUNK, O_CONT, O_REVERT, O_EXPORT, O_FORCE,
	       O_JSON, O_PROGRESS, O_HELP, O_VERSION, O_BATCH, O_STOP_AFTER };
	static const struct option lo[] = {
		{ "size", required_argument, 0, O_SIZE }, { "volume-size", required_argument, 0, O_VSIZE },
		{ "add", required_argument, 0, O_ADD }, { "level", required_argument, 0, O_LEVEL },
		{ "layout", required_argument, 0, O_LAYOUT }, { "chunk", required_argument, 0, O_CHUNK },
		{ "continue", no_argument, 0, O_CONT }, { "revert", no_argument, 0, O_REVERT },
		{ "export", required_argument, 0, O_EXPORT }, { "force", no_argument, 0, O_FORCE },
		{ "json", no_argument, 0, O_JSON }, { "progress", no_argument, 0, O_PROGRESS },
		{ "help", no_argument, 0, O_HELP }, { "version", no_argument, 0, O_VERSION },
		{ "batch", required_argument, 0, O_BATCH },   /* tests: small checkpoints */
		{ "stop-after", required_argument, 0, O_STOP_AFTER },   /* tests: stop at a checkpoint past BYTES */
		{ 0, 0, 0, 0 }
	};
	int have_size = 0, cont = 0, revert = 0, force = 0, json = 0, progress = 0;
	uint64_t size = 0, stop_after = 0;
	const char *layout_s = NULL, *export_to = NULL;
	const char *add[MAX_ADD];
	uint32_t nadd = 0;
	struct rk_resize_opts o = { .layout = RK_RESIZE_LAYOUT_KEEP };
	int c;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case O_SIZE:
			have_size = 1;
			if (strcmp(optarg, "max") && (cli_parse_size(optarg, &size) || !size))
				return cli_usage_error("--size %s: not a size", optarg);
			break;
		case O_VSIZE:
			if (cli_parse_size(optarg, &o.volume_size) || !o.volume_size)
				return cli_usage_error("--volume-size %s: not a size", optarg);
			break;
		case O_ADD:
			if (nadd >= MAX_ADD)
				return cli_usage_error("--add: at most %d new members at once", MAX_ADD);
			add[nadd++] = optarg;
			break;
		case O_LEVEL:
			if (rk_level_parse(optarg, &o.level))
				return cli_usage_error("--level %s: unknown level", optarg);
			o.set_level = 1;
			break;
		case O_LAYOUT: layout_s = optarg; break;
		case O_CHUNK:
			if (cli_parse_size(optarg, &o.chunk) || o.chunk < 4096 || o.chunk > (16u << 20) ||
			    (o.chunk & (o.chunk - 1)))
				return cli_usage_error("--chunk %s: must be a power of two from 4K to 16M", optarg);
			break;
		case O_CONT: cont = 1; break;
		case O_REVERT: revert = 1; break;
		case O_EXPORT: export_to = optarg; break;
		case O_FORCE: force = 1; break;
		case O_JSON: json = 1; break;
		case O_PROGRESS: progress = 1; break;
		case O_BATCH:
			if (cli_parse_size(optarg, &o.batch_max) || !o.batch_max)
				return cli_usage_error("--batch %s: not a size", optarg);
			break;
		case O_STOP_AFTER:
			if (cli_parse_size(optarg, &stop_after) || !stop_after)
				return cli_usage_error("--stop-after %s: not a size", optarg);
			break;
		case O_HELP: usage(stdout); return EX_DONE;
		case O_VERSION: cli_version(); return EX_DONE;
		default: usage(stderr); return EX_USAGE;
		}
	}
	int reshape = nadd || o.set_level || layout_s || o.chunk;
	int nact = have_size + reshape + cont + revert + !!export_to;
	if (nact != 1)
		return cli_usage_error(nact ? "choose one of --size, --add/--level, --continue, --revert, --export"
		                            : "nothing to do: give --size, --add, --level, --continue, --revert or --export");
	if (o.volume_size && !have_size)
		return cli_usage_error("--volume-size goes with --size");
	if (optind >= argc)
		return cli_usage_error("no MEMBER given");
	if (layout_s) {
		int32_t lv = o.set_level ? o.level : -2;
		if (lv == -2)
			return cli_usage_error("--layout needs --level (the layout of the new level)");
		if (rk_layout_parse(lv, layout_s, &o.layout))
			return cli_usage_error("--layout %s: not a layout of level %s", layout_s, rk_level_name(lv));
	}
	uint32_t n = (uint32_t)(argc - optind);
	rk_dev **devs = calloc(n + nadd, sizeof *devs);
	if (!devs) {
		cli_err("out of memory");
		return EX_FAIL;
	}
	unsigned fl = export_to ? RK_DEV_RDONLY : RK_DEV_RDWR;
	for (uint32_t i = 0; i < n; i++)
		if (rk_dev_open(&devs[i], argv[optind + i], fl)) {
			cli_err("%s", rk_errmsg());
			close_all(devs, i);
			free(devs);
			return EX_FAIL;
		}
	for (uint32_t a = 0; a < nadd; a++) {
		struct rk_probe_result pr;
		if (!force && !rk_probe_path(add[a], &pr) && pr.found) {
			cli_err("--add %s: holds %s: refusing to overwrite it (--force to use it anyway)", add[a], pr.what);
			close_all(devs, n + a);
			free(devs);
			return EX_FAIL;
		}
		if (rk_dev_open(&devs[n + a], add[a], RK_DEV_RDWR)) {
			cli_err("--add %s", rk_errmsg());
			close_all(devs, n + a);
			free(devs);
			return EX_FAIL;
		}
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	o.stop = &g_stop;
	struct prog pp = { .what = revert ? "raid-resize: revert" : cont ? "raid-resize: continue" : "raid-resize",
	                   .force = progress, .json = json, .stop_after = stop_after };
	o.progress = progress_cb;
	o.progress_ctx = &pp;
	struct rk_resize_result res;
	memset(&res, 0, sizeof res);
	rk_err e;
	const char *action;
	if (export_to) {
		action = "export";
		uint64_t vsz = 0;
		e = rk_resize_read(devs, n, NULL, 0, 0, &vsz);
		FILE *out = NULL;
		if (!e) {
			out = strcmp(export_to, "-") ? fopen(export_to, "wb") : stdout;
			if (!out) {
				cli_err("--export %s: cannot open for writing", export_to);
				close_all(devs, n);
				free(devs);
				return EX_FAIL;
			}
		}
		size_t bl = 8u << 20;
		uint8_t *buf = malloc(bl);
		pp.pg = cli_progress_start("raid-resize: export", vsz, progress, json);
		for (uint64_t p = 0; !e && p < vsz;) {
			size_t k = vsz - p < bl ? (size_t)(vsz - p) : bl;
			if (!buf)
				e = rk_fail(RK_E_NOMEM, "out of memory");
			else if (!(e = rk_resize_read(devs, n, buf, k, p, NULL)) && fwrite(buf, 1, k, out) != k)
				e = rk_fail(RK_E_IO, "--export %s: write failed", export_to);
			p += k;
			cli_progress_update(pp.pg, p);
		}
		free(buf);
		if (out && out != stdout && fclose(out) && !e)
			e = rk_fail(RK_E_IO, "--export %s: write failed", export_to);
		res.old_volume = res.new_volume = vsz;
		snprintf(res.did, sizeof res.did, "exported %llu bytes", (unsigned long long)vsz);
	} else if (have_size) {
		action = "size";
		e = rk_resize_size(devs, n, size, &o, &res);
	} else if (cont) {
		action = "continue";
		e = rk_resize_continue(devs, n, &o, &res);
	} else if (revert) {
		action = "revert";
		e = rk_resize_revert(devs, n, &o, &res);
	} else {
		action = "reshape";
		e = rk_resize_reshape(devs, n, devs + n, nadd, &o, &res);
	}
	if (pp.pg)
		cli_progress_end(pp.pg);
	if (e)
		cli_err("%s", rk_errmsg());
	close_all(devs, n + nadd);
	free(devs);
	if (json) {
		rk_json *j = rk_json_new(stdout);
		if (j) {
			rk_json_obj_begin(j);
			rk_json_kstr(j, "action", action);
			rk_json_kbool(j, "done", !e);
			rk_json_kstr(j, "error", e ? rk_errmsg() : NULL);
			rk_json_ku64(j, "old_volume_size", res.old_volume);
			rk_json_ku64(j, "volume_size", res.new_volume);
			rk_json_ku64(j, "events", res.events);
			rk_json_ku64(j, "moved", res.moved);
			rk_json_ku64(j, "checkpoints", res.checkpoints);
			rk_json_ku64(j, "missing", res.missing);
			rk_json_kstr(j, "found", res.found[0] ? res.found : NULL);
			rk_json_kstr(j, "did", res.did);
			rk_json_obj_end(j);
			rk_json_free(j);
		}
	} else if (!e && strcmp(action, "export")) {
		printf("%s\n", res.did);
		if (res.found[0])
			printf("found: %s\n", res.found);
	}
	if (!e && res.missing) {
		cli_err("the array is degraded: %u role%s faulty (a member was missing); bring %s back with "
		        "raid-recover --rebuild", res.missing, res.missing == 1 ? "" : "s", res.missing == 1 ? "it" : "them");
		return EX_REPORT;
	}
	return e ? exit_for(e) : EX_DONE;
}
