/* mkraid: create an array on member images or block devices.
 *
 * Policy and presentation only: option parsing, usage errors (exit 64) and
 * reports.  Everything that touches members is rk_create (libmeta/create.c):
 * it checks every member before writing anything, so a refusal (exit 2)
 * leaves all members as they were. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <uuid/uuid.h>

#include "cli.h"
#include "rk_util.h"
#include "rk_create.h"
#include "rk_geom.h"
#include "rk_json.h"
#include "rk_print.h"
#include "rk_sb.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: mkraid -l LEVEL [-c CHUNK] [--layout NAME] [--name NAME] [--size BYTES]\n"
	       "              [--create-size BYTES] [--from FILE] [--force] [--json] [--progress]\n"
	       "              MEMBER...\n"
	       "Create a raidkit array over MEMBER files or block devices, in role order.\n"
	       "\n"
	       "  -l, --level LEVEL      linear, 0, 1, 4, 5, 6 or 10 (raid5 etc. accepted)\n"
	       "  -c, --chunk CHUNK      stripe unit, a power of two from 4K to 16M\n"
	       "                         (default 512K; linear and RAID-1 have none)\n"
	       "      --layout NAME      RAID-5/6: left-symmetric (default), left-asymmetric,\n"
	       "                         right-symmetric, right-asymmetric, parity-first,\n"
	       "                         parity-last; RAID-10: n2 (default), f2, o2, n3, ...;\n"
	       "                         RAID-4 keeps parity on the last member\n"
	       "      --name NAME        array name (at most %u bytes)\n"
	       "      --size BYTES       use only BYTES of each member (the start first)\n"
	       "      --create-size BYTES  create absent member files of BYTES (sparse)\n"
	       "      --from FILE        fill the new volume with FILE's bytes\n"
	       "      --force            overwrite members that hold a file system, partition\n"
	       "                         table or RAID metadata (refused otherwise)\n"
	       "      --json             print the created array as JSON\n"
	       "      --progress         show progress even when stderr is not a terminal\n"
	       "  -h, --help             this help\n"
	       "  -V, --version          version\n"
	       "\n"
	       "The word `missing` as a MEMBER creates the array degraded without that role\n"
	       "(as many as the level's redundancy allows).  Sizes take K, M, G, T suffixes\n"
	       "(powers of 1024).  Members of different sizes: the smallest sets the size.\n"
	       "\n"
	       "Exit status: 0 created; 2 refused or failed (nothing written when refused);\n"
	       "64 bad usage.\n", RK_SB_NAME_LEN);
}

/* Progress across the phases of creation. */
struct prog {
	int force, json;
	enum rk_create_phase phase;
	struct cli_progress *p;
};

static void on_progress(void *ctx, enum rk_create_phase phase, uint64_t done, uint64_t total)
{
	struct prog *pg = ctx;
	static const char *what[] = {"scanning members", "making parity consistent", "copying --from"};
	if (!pg->p || pg->phase != phase) {
		cli_progress_end(pg->p);
		pg->phase = phase;
		pg->p = cli_progress_start(what[phase], total, pg->force, pg->json);
	}
	cli_progress_update(pg->p, done);
}

static void report_json(const struct rk_create_plan *p)
{
	char lb[64];
	rk_json *j = rk_json_new(stdout);
	if (!j)
		return;
	rk_json_obj_begin(j);
	rk_json_key(j, "uuid");
	rk_json_uuid(j, p->array_uuid);
	rk_json_kstr(j, "name", p->name);
	rk_json_kstr(j, "level", rk_level_name(p->level));
	rk_json_kstr(j, "layout", rk_layout_name(p->level, p->layout, lb, sizeof lb));
	CLI_JSON_U64S(j, { "chunk", p->chunk }, { "members_total", p->nroles }, { "members_missing", p->nmissing },
	              { "volume_size", p->volume_size }, { "data_offset", p->data_offset },
	              { "data_size", p->data_size }, { "stripes_resynced", p->stripes_resynced },
	              { "from_bytes", p->from_size });
	rk_json_key(j, "members");
	rk_json_arr_begin(j);
	for (uint32_t i = 0; i < p->nroles; i++) {
		const struct rk_create_member *m = &p->members[i];
		rk_json_obj_begin(j);
		rk_json_ku64(j, "role", m->role);
		rk_json_kstr(j, "path", m->path);
		if (rk_json_key_or_null(j, "uuid", m->path != NULL))
			rk_json_uuid(j, m->uuid);
		rk_json_kstr(j, "state", m->path ? "active" : "missing");
		if (m->path) {
			rk_json_ku64(j, "size", m->dev_size);
			rk_json_kbool(j, "created", m->created);
			rk_json_kstr(j, "overwrote", m->found[0] ? m->found : NULL);
		}
		rk_json_obj_end(j);
	}
	rk_json_arr_end(j);
	rk_json_key(j, "notes");
	rk_json_arr_begin(j);
	for (const char *s = p->notes; s && *s;) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) : strlen(s);
		rk_json_strn(j, s, n);
		s += n + (nl ? 1 : 0);
	}
	rk_json_arr_end(j);
	rk_json_obj_end(j);
	rk_json_free(j);
}

static void report_human(const struct rk_create_plan *p)
{
	char lb[64], b1[32], b2[32], u[40];
	uuid_unparse_lower(p->array_uuid, u);
	if (p->level == RK_LEVEL_LINEAR)
		printf("Created a linear array\n");
	else
		printf("Created a RAID-%s array\n", rk_level_name(p->level));
	printf("  uuid:        %s\n", u);
	if (p->name[0])
		printf("  name:        %s\n", p->name);
	printf("  layout:      %s\n", rk_layout_name(p->level, p->layout, lb, sizeof lb));
	if (p->chunk)
		printf("  chunk:       %s\n", rk_size_words(p->chunk, b1, sizeof b1));
	printf("  volume size: %s (%" PRIu64 " bytes)\n", rk_size_words(p->volume_size, b1, sizeof b1), p->volume_size);
	printf("  data area:   %s per member from byte %" PRIu64 " (%s)\n", rk_size_words(p->data_size, b1, sizeof b1),
	       p->data_offset, rk_size_words(p->data_offset, b2, sizeof b2));
	printf("  members:     %u%s\n", p->nroles, p->nmissing ? " (degraded)" : "");
	for (uint32_t i = 0; i < p->nroles; i++) {
		const struct rk_create_member *m = &p->members[i];
		if (!m->path) {
			printf("    role %-3u missing\n", i);
			continue;
		}
		rk_esc_fprintf(stdout, "    role %-3u %s (%s%s)\n", i, m->path, rk_size_words(m->dev_size, b1, sizeof b1),
		               m->created ? ", created" : "");
	}
	if (p->from_size)
		printf("  filled with %" PRIu64 " bytes from --from\n", p->from_size);
	for (const char *s = p->notes; s && *s;) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) : strlen(s);
		rk_esc_fprintf(stdout, "  note: %.*s\n", (int)n, s);
		s += n + (nl ? 1 : 0);
	}
}

/* The command line as given, before it is checked. */
struct mkraid_args {
	const char *level, *layout, *chunk;
	struct rk_create_opts create;
	struct cli_common common;
};

enum { O_LAYOUT = 256, O_NAME, O_SIZE, O_CREATE_SIZE, O_FROM, O_FORCE };

static int on_option(void *ctx, int opt, char *arg)
{
	struct mkraid_args *a = ctx;
	struct rk_create_opts *o = &a->create;
	switch (opt) {
	case 'l': a->level = arg; break;
	case 'c': a->chunk = arg; break;
	case O_LAYOUT: a->layout = arg; break;
	case O_NAME: o->name = arg; break;
	case O_SIZE:
		if (cli_parse_size(arg, &o->size) || o->size == 0)
			return cli_usage_error("--size %s: not a size (bytes, or with K, M, G, T)", arg);
		break;
	case O_CREATE_SIZE:
		if (cli_parse_size(arg, &o->create_size) || o->create_size == 0)
			return cli_usage_error("--create-size %s: not a size (bytes, or with K, M, G, T)", arg);
		break;
	case O_FROM: o->from = arg; break;
	case O_FORCE: o->force = 1; break;
	}
	return CLI_GO_ON;
}

/* Level, chunk, layout, name and --from: CLI_GO_ON when they make sense. */
static int check_options(struct mkraid_args *a)
{
	struct rk_create_opts *o = &a->create;
	if (!a->level)
		return cli_usage_error("-l LEVEL is required (linear, 0, 1, 4, 5, 6, 10)");
	if (rk_level_parse(a->level, &o->level) != 0)
		return cli_usage_error("-l %s: not a level (linear, 0, 1, 4, 5, 6, 10)", a->level);
	if (a->chunk && cli_parse_chunk(a->chunk, &o->chunk))
		return cli_usage_error("-c %s: the chunk must be a power of two from 4K to 16M", a->chunk);
	if (a->layout && rk_layout_parse(o->level, a->layout, &o->layout) != 0)
		return cli_usage_error("--layout %s: not a layout of level %s", a->layout, rk_level_name(o->level));
	if (o->name && strlen(o->name) > RK_SB_NAME_LEN)
		return cli_usage_error("--name %s: at most %u bytes", o->name, RK_SB_NAME_LEN);
	if (o->from) {
		/* A FILE that cannot be read is a bad argument, like one too large. */
		struct stat st;
		if (stat(o->from, &st) != 0)
			return cli_usage_error("--from %s: %s", o->from, strerror(errno));
		if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
			return cli_usage_error("--from %s: not a regular file or block device", o->from);
	}
	return CLI_GO_ON;
}

/* The MEMBERs into PATHS (NULL for `missing`): CLI_GO_ON when their count
 * suits the level. */
static int check_members(const struct rk_create_opts *o, char **argv, uint32_t n, const char **paths)
{
	uint32_t minr = rk_level_min_roles(o->level);
	if (n < minr || n == 0)
		return cli_usage_error("level %s needs at least %u member%s, %u given", rk_level_name(o->level), minr,
		                       minr == 1 ? "" : "s", n);
	uint32_t nmissing = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (!strcmp(argv[i], "missing")) {
			nmissing++;
			continue;
		}
		if (!*argv[i])
			return cli_usage_error("member %u: empty path", i);
		paths[i] = argv[i];
	}
	/* Too many `missing` is bad usage, told before any member is opened:
	 * the geometry's redundancy (it does not depend on the sizes, so a
	 * nominal one serves; rk_create checks again with the real ones). */
	uint32_t lay = o->layout == RK_CREATE_LAYOUT_DEFAULT ? rk_layout_default(o->level) : o->layout;
	struct rk_geom g;
	if (nmissing && !rk_geom_init(&g, o->level, lay, RK_CREATE_CHUNK_DEFAULT, n, 1024ull * RK_CREATE_CHUNK_DEFAULT) &&
	    nmissing > rk_geom_redundancy(&g))
		return cli_usage_error("%u members `missing`: level %s on %u members can lack at most %u", nmissing,
		                       rk_level_name(o->level), n, rk_geom_redundancy(&g));
	return CLI_GO_ON;
}

/* Checks the members, writes the array and prints it: the exit status. */
static int create(struct rk_create_opts *o, const struct cli_common *common)
{
	struct prog pg = { .force = common->progress, .json = common->json, .p = NULL };
	o->progress = on_progress;
	o->progress_ctx = &pg;
	rk_creator *c = NULL;
	int from_big = 0;
	if (rk_create_prepare(&c, o, &from_big)) {
		if (from_big)
			return cli_usage_error("%s", rk_errmsg());
		cli_err("%s; nothing was written", rk_errmsg());
		return EX_FAIL;
	}
	rk_err e = rk_create_commit(c);
	cli_progress_end(pg.p);
	if (e) {
		cli_err("%s", rk_errmsg());
		rk_create_free(c);
		return EX_FAIL;
	}
	if (common->json)
		report_json(rk_create_get_plan(c));
	else
		report_human(rk_create_get_plan(c));
	rk_create_free(c);
	return EX_DONE;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"level", required_argument, NULL, 'l'},
		{"chunk", required_argument, NULL, 'c'},
		{"layout", required_argument, NULL, O_LAYOUT},
		{"name", required_argument, NULL, O_NAME},
		{"size", required_argument, NULL, O_SIZE},
		{"create-size", required_argument, NULL, O_CREATE_SIZE},
		{"from", required_argument, NULL, O_FROM},
		{"force", no_argument, NULL, O_FORCE},
		CLI_OPTION_JSON, CLI_OPTION_PROGRESS, CLI_OPTION_HELP, CLI_OPTION_VERSION, CLI_OPTION_END,
	};
	struct mkraid_args a;
	memset(&a, 0, sizeof a);
	a.create.layout = RK_CREATE_LAYOUT_DEFAULT;
	cli_init(argv[0]);
	const struct cli_command cmd = { "l:c:hV", longopts, usage, on_option, &a, &a.common };
	int rc = cli_parse_options(argc, argv, &cmd);
	if (rc == CLI_GO_ON)
		rc = check_options(&a);
	if (rc != CLI_GO_ON)
		return rc;
	if (argc - optind > (int)RK_SB_MAX_ROLES)
		return cli_usage_error("%d members: at most %u", argc - optind, RK_SB_MAX_ROLES);
	uint32_t n = (uint32_t)(argc - optind);
	const char **paths = calloc(n ? n : 1, sizeof *paths);
	if (!paths) {
		cli_err("out of memory");
		return EX_FAIL;
	}
	rc = check_members(&a.create, argv + optind, n, paths);
	if (rc == CLI_GO_ON) {
		a.create.nmembers = n;
		a.create.paths = paths;
		rc = create(&a.create, &a.common);
	}
	free(paths);
	return rc;
}
