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
#include "rk_print.h"
#include "rk_probe.h"
#include "rk_sb.h"

static void usage(void)
{
	printf("Usage: raid-examine [--json] MEMBER...\n"
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
	       "  --json         one JSON document on stdout\n"
	       "  --help         this text\n"
	       "  --version      the version\n"
	       "\n"
	       "Exit status: 0 every member valid (both copies) and serving its array;\n"
	       "1 something to report (a bad or missing copy, a stale, duplicate, foreign\n"
	       "or unknown member; with --map, a missing role); 2 nothing readable\n"
	       "(no member has a valid raidkit superblock); 64 bad usage.\n");
}

/* The class discovery gave PATH index I (NULL when not found). */
static const struct rk_member *find_member(const struct rk_discovery *d, int32_t argi)
{
	for (uint32_t a = 0; a < d->narrays; a++)
		for (uint32_t r = 0; r < d->arrays[a].nroles; r++)
			if (d->arrays[a].roles[r].path && d->arrays[a].roles[r].argi == argi)
				return &d->arrays[a].roles[r];
	for (uint32_t i = 0; i < d->nleft; i++)
		if (d->left[i].argi == argi)
			return &d->left[i];
	return NULL;
}

struct exam {
	int readable;      /* a valid raidkit copy */
	int report;        /* something to report */
};

static void examine_one(const char *path, const struct rk_member *m, int json, rk_json *j,
                        struct exam *ex)
{
	rk_dev *d = NULL;
	struct rk_sb_read rd;
	memset(&rd, 0, sizeof rd);
	rd.chosen = -1;
	rk_err e = rk_dev_open(&d, path, RK_DEV_RDONLY);
	char openerr[512] = "";
	uint64_t size = 0;
	void *fobj[4];
	const struct rk_meta_fmt *ffmt[4];
	int nfor = 0;
	if (e) {
		snprintf(openerr, sizeof openerr, "%s", rk_errmsg());
		if (!json)
			cli_err("%s", openerr);
		ex->report = 1;
	} else {
		size = rk_dev_size(d);
		e = rk_sb_read(d, &rd);
		/* Foreign formats decoded natively (md 0.90 / 1.x). */
		for (int k = 0; rk_meta_fmts[k] && nfor < 4; k++) {
			const struct rk_meta_fmt *fm = rk_meta_fmts[k];
			if (!strcmp(fm->name, "raidkit") || !strcmp(fm->name, "blkid"))
				continue;
			void *obj = NULL;
			if (fm->decode(d, path, &obj) == RK_OK) {
				fobj[nfor] = obj;
				ffmt[nfor++] = fm;
			}
		}
		rk_dev_close(d);
		if (e && e != RK_E_NOSB) {
			snprintf(openerr, sizeof openerr, "%s", rk_errmsg());
			if (!json)
				cli_err("%s", openerr);
		}
	}
	int valid = rd.chosen >= 0;
	if (valid)
		ex->readable = 1;
	if (!valid || rd.copy[0].status != RK_COPY_OK || rd.copy[1].status != RK_COPY_OK)
		ex->report = 1;
	if (m && m->cls != RK_MEMBER_ACTIVE && m->cls != RK_MEMBER_SPARE)
		ex->report = 1;
	struct rk_probe_result pr;
	memset(&pr, 0, sizeof pr);
	if (!openerr[0] && rk_probe_foreign(path, &pr) != RK_OK)
		memset(&pr, 0, sizeof pr);

	if (json) {
		rk_json_obj_begin(j);
		rk_json_kstr(j, "path", path);
		rk_json_kbool(j, "readable", !openerr[0]);
		rk_json_kstr(j, "error", openerr[0] ? openerr : NULL);
		rk_json_ku64(j, "size", size);
		rk_json_kbool(j, "valid", valid);
		if (!openerr[0])
			rk_print_copies_json_keys(j, &rd);
		rk_json_key(j, "superblock");
		if (valid)
			rk_print_sb_json(j, rd.copy[rd.chosen].sb);
		else
			rk_json_null(j);
		rk_json_key(j, "signatures");
		rk_json_arr_begin(j);
		if (pr.found)
			rk_print_probe_json(j, &pr);
		rk_json_arr_end(j);
		rk_json_key(j, "foreign_metadata");
		rk_json_arr_begin(j);
		for (int k = 0; k < nfor; k++)
			ffmt[k]->print_json(j, fobj[k]);
		rk_json_arr_end(j);
		rk_json_key(j, "discovery");
		if (m)
			rk_print_member_json(j, m);
		else
			rk_json_null(j);
		rk_json_obj_end(j);
	} else {
		char sz[32];
		printf("%s", path);
		if (!openerr[0])
			printf(" (%" PRIu64 " bytes, %s)", size, rk_size_words(size, sz, sizeof sz));
		printf("\n");
		if (openerr[0]) {
			printf("  cannot examine: %s\n", openerr);
		} else {
			rk_print_copies_text(stdout, &rd, 1, "  ");
		}
		if (pr.found) {
			printf("  foreign signature: ");
			rk_print_probe_text(stdout, &pr, "");
		}
		for (int k = 0; k < nfor; k++)
			ffmt[k]->print_text(stdout, fobj[k], "  ");
		if (m)
			printf("  discovery: %s: %s\n", rk_member_class_name(m->cls), m->reason);
		printf("\n");
	}
	rk_sb_read_free(&rd);
	for (int k = 0; k < nfor; k++)
		ffmt[k]->release(fobj[k]);
}

static int do_examine(char **paths, uint32_t n, int json)
{
	struct rk_discovery *d = NULL;
	rk_err e = rk_discover(&d, paths, n, NULL);
	if (e) {
		cli_err_rk("discovery failed");
		return EX_FAIL;
	}
	struct exam ex = { 0, 0 };
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
		examine_one(paths[i], find_member(d, (int32_t)i), json, j, &ex);
	for (uint32_t a = 0; a < d->narrays; a++)
		if (d->arrays[a].state == RK_ASTATE_CONFLICT)
			ex.report = 1;
	if (json) {
		rk_json_arr_end(j);
		rk_json_key(j, "arrays");
		rk_json_arr_begin(j);
		for (uint32_t a = 0; a < d->narrays; a++)
			rk_print_array_json(j, d, a);
		rk_json_arr_end(j);
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
	rk_discovery_free(d);
	if (fflush(stdout) != 0) {
		cli_err("cannot write the report");
		return EX_FAIL;
	}
	if (!ex.readable)
		return EX_FAIL;
	return ex.report ? EX_REPORT : EX_DONE;
}

static int do_map(char **paths, uint32_t n, uint64_t off, const uint8_t *uuid, int json)
{
	struct rk_discovery *d = NULL;
	if (rk_discover(&d, paths, n, uuid)) {
		cli_err_rk("discovery failed");
		return EX_FAIL;
	}
	int rc = EX_DONE;
	if (d->narrays == 0) {
		cli_err("no raidkit array among the members given");
		for (uint32_t i = 0; i < d->nleft; i++)
			cli_err("%s: %s: %s", d->left[i].path, rk_member_class_name(d->left[i].cls),
			        d->left[i].reason);
		rk_discovery_free(d);
		return EX_FAIL;
	}
	if (d->narrays > 1) {
		cli_err("members of %u arrays were given; pick one with --uuid", d->narrays);
		for (uint32_t a = 0; a < d->narrays; a++) {
			char u[37];
			uuid_unparse_lower(d->arrays[a].uuid, u);
			cli_err("array %s \"%s\"", u, d->arrays[a].name);
		}
		rk_discovery_free(d);
		return EX_USAGE;
	}
	const struct rk_array_info *a = &d->arrays[0];
	const struct rk_sb *sb = a->sb;
	struct rk_geom g;
	if (rk_geom_init(&g, sb->level, sb->layout, sb->chunk, sb->nroles, sb->data_size)) {
		cli_err_rk("the array's geometry");
		rk_discovery_free(d);
		return EX_FAIL;
	}
	if (off >= g.volume_size) {
		cli_err("--map %" PRIu64 ": beyond the end of the volume (%" PRIu64 " bytes)", off,
		        g.volume_size);
		rk_discovery_free(d);
		return EX_USAGE;
	}
	struct rk_loc loc;
	uint64_t run = 0;
	if (rk_geom_map(&g, off, &loc, &run) || loc.role >= a->nroles) {
		cli_err_rk("--map %" PRIu64, off);
		rk_discovery_free(d);
		return EX_FAIL;
	}
	const struct rk_member *m = &a->roles[loc.role];
	uint64_t doff = m->sb ? m->sb->data_offset : sb->data_offset;
	uint64_t moff;
	if (rk_add_ovf(doff, loc.member_off, &moff)) {
		cli_err("--map %" PRIu64 ": member offset overflows", off);
		rk_discovery_free(d);
		return EX_FAIL;
	}
	struct rk_loc cp[16];
	uint32_t ncp = rk_geom_copies(&g, off, cp, 16);
	if (!m->path || a->state != RK_ASTATE_CLEAN)
		rc = EX_REPORT;
	if (a->state == RK_ASTATE_CONFLICT)
		cli_err("warning: the members disagree (%s)", a->why);
	if (json) {
		rk_json *j = rk_json_new(stdout);
		if (!j) {
			rk_discovery_free(d);
			return EX_FAIL;
		}
		rk_json_obj_begin(j);
		rk_json_ku64(j, "offset", off);
		rk_json_ku64(j, "stripe", loc.stripe);
		rk_json_ku64(j, "role", loc.role);
		rk_json_kstr(j, "path", m->path);
		rk_json_ku64(j, "member_offset", moff);
		rk_json_ku64(j, "data_offset", doff);
		rk_json_ku64(j, "data_area_offset", loc.member_off);
		rk_json_ku64(j, "run", run);
		rk_json_kstr(j, "member_state", rk_member_class_name(m->cls));
		rk_json_kstr(j, "array_state", rk_astate_name(a->state));
		rk_json_key(j, "array_uuid");
		rk_json_uuid(j, a->uuid);
		rk_json_key(j, "copies");
		rk_json_arr_begin(j);
		for (uint32_t k = 0; k < ncp && k < 16; k++) {
			if (cp[k].role >= a->nroles)
				continue;
			const struct rk_member *cm = &a->roles[cp[k].role];
			uint64_t cdo = cm->sb ? cm->sb->data_offset : sb->data_offset, cmo = 0;
			rk_json_obj_begin(j);
			rk_json_ku64(j, "role", cp[k].role);
			rk_json_kstr(j, "path", cm->path);
			if (rk_add_ovf(cdo, cp[k].member_off, &cmo))
				cmo = UINT64_MAX;
			rk_json_ku64(j, "member_offset", cmo);
			rk_json_obj_end(j);
		}
		rk_json_arr_end(j);
		rk_json_obj_end(j);
		rk_json_free(j);
	} else {
		printf("volume byte %" PRIu64 ": stripe %" PRIu64 ", role %u, %s, member byte %" PRIu64
		       " (data offset %" PRIu64 " + %" PRIu64 "); %" PRIu64 " bytes from there stay on it\n",
		       off, loc.stripe, loc.role, m->path ? m->path : "(missing)", moff, doff,
		       loc.member_off, run);
		if (!m->path)
			printf("  role %u: %s\n", loc.role, m->reason);
		for (uint32_t k = 1; k < ncp && k < 16; k++)
			if (cp[k].role < a->nroles)
				printf("  also on role %u (%s) at member byte %" PRIu64 "\n", cp[k].role,
				       a->roles[cp[k].role].path ? a->roles[cp[k].role].path : "missing",
				       (a->roles[cp[k].role].sb ? a->roles[cp[k].role].sb->data_offset
				                                : sb->data_offset) + cp[k].member_off);
		printf("  array %s: %s\n", rk_astate_name(a->state), a->why);
	}
	rk_discovery_free(d);
	return rc;
}

int main(int argc, char **argv)
{
	cli_init(argv[0]);
	enum { OPT_MAP = 256, OPT_JSON, OPT_HELP, OPT_VERSION, OPT_UUID };
	static const struct option opts[] = {
		{ "map", required_argument, NULL, OPT_MAP },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "uuid", required_argument, NULL, OPT_UUID },
		{ "help", no_argument, NULL, OPT_HELP },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int json = 0, map = 0, have_uuid = 0;
	uint64_t off = 0;
	uint8_t uuid[16];
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_MAP:
			if (cli_parse_size(optarg, &off))
				return cli_usage_error("--map: '%s' is not an offset (bytes, or with K, M, G, T)",
				                       optarg);
			map = 1;
			break;
		case OPT_JSON:
			json = 1;
			break;
		case OPT_UUID:
			if (uuid_parse(optarg, uuid))
				return cli_usage_error("--uuid: '%s' is not a UUID", optarg);
			have_uuid = 1;
			break;
		case 'h':
		case OPT_HELP:
			usage();
			return EX_DONE;
		case OPT_VERSION:
			cli_version();
			return EX_DONE;
		default:
			return cli_bad_option(c, argv);
		}
	}
	if (optind >= argc)
		return cli_usage_error("no MEMBER given");
	if (have_uuid && !map)
		return cli_usage_error("--uuid is only used with --map");
	char **paths = argv + optind;
	uint32_t n = (uint32_t)(argc - optind);
	if (map)
		return do_map(paths, n, off, have_uuid ? uuid : NULL, json);
	return do_examine(paths, n, json);
}
