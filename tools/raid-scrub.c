/* raid-scrub: verify an array's redundancy offline and optionally repair it.
 * Options, policy and presentation only: discovery is rk_discover(); the
 * scrub of the assembled array -- members opened read-only unless --repair,
 * the write protocol around a repair, range, checkpoint and resume -- is
 * rk_scrub_array() (libmeta/rk_scrub_array.h) over rk_scrub_run()
 * (engine/rk_scrub.h). */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>

#include "cli.h"
#include "rk_test_hooks.h"
#include "test_hooks.h"
#include "rk_array.h"
#include "rk_dev.h"
#include "rk_discover.h"
#include "rk_geom.h"
#include "rk_geometry.h"
#include "rk_json.h"
#include "rk_scrub.h"
#include "rk_scrub_array.h"
#include "rk_sb.h"
#include "rk_util.h"

#define MAX_KEPT 100000u   /* regions kept for --json; the count goes on */

static void usage(FILE *f)
{
	fprintf(f,
	"Usage: raid-scrub [OPTIONS] MEMBER...\n"
	"Reads every stripe of the array found among MEMBERs and checks its\n"
	"redundancy: P (RAID-4/5), P and Q (RAID-6), every mirror copy (RAID-1/10).\n"
	"Each inconsistent region is reported with its stripe, volume and member\n"
	"byte ranges and, where the math tells, the roles at fault: on RAID-6 a\n"
	"single bad block per stripe is located from the two syndromes; on mirrors\n"
	"of three or more copies the majority names the bad copies.  Members are\n"
	"opened read-only unless --repair is given.\n"
	"\n"
	"  --repair             rewrite what is proven wrong (RAID-6 located block,\n"
	"                       mirror minority); where the fault cannot be told\n"
	"                       (RAID-4/5, two copies) make redundancy consistent\n"
	"                       and report the range whose data may be wrong\n"
	"  --rewrite-unconfirmed  with --repair: also rewrite unreadable bytes that\n"
	"                       the rest of their stripe rebuilds but nothing left\n"
	"                       over confirms (RAID-4/5, degraded RAID-6, one other\n"
	"                       copy), as md does; stale parity would make them wrong\n"
	"  --at OFFSET          check from this volume byte (whole stripes)\n"
	"  --length BYTES       check this many volume bytes (default: to the end)\n"
	"  --uuid UUID          pick the array with this UUID\n"
	"  --checkpoint FILE    keep the resume point in FILE (default: .raid-scrub-UUID\n"
	"                       beside the first member; never on the members)\n"
	"  --no-checkpoint      keep no resume point\n"
	"  --resume             continue the scrub recorded in the checkpoint\n"
	"  --stop-after BYTES   stop after checking about BYTES of volume (checkpoint\n"
	"                       kept: continue later with --resume)\n"
	"  --geometry FILE      the array a geometry file describes (raid-recover\n"
	"                       --save-geometry) over MEMBERs without metadata, matched\n"
	"                       to roles by content or path; never with --repair\n"
	"  --json               one JSON document on stdout\n"
	"  --progress           progress on stderr even when not a terminal\n"
	"  --help, --version\n"
	"\n"
	"A block that cannot be read (read error) does not stop the scrub: it is\n"
	"treated as missing for its stripe, the rest is checked with the redundancy\n"
	"left, and the unreadable range is reported with whether it can be rebuilt;\n"
	"--repair rebuilds it, writes it back and reads it back once when the\n"
	"redundancy left over confirms the rebuilt bytes (RAID-6 with all other\n"
	"blocks readable, two agreeing copies); mismatches next to unreadable bytes\n"
	"are reported, never repaired.\n"
	"\n"
	"Sizes and offsets take K, M, G, T suffixes (powers of 1024).\n"
	"Exit: 0 clean; 1 mismatches or unreadable blocks found (or repaired), or the\n"
	"array is degraded; 2 too few members, an unreadable range that cannot be\n"
	"rebuilt, I/O error, repair failed or scrub stopped before the end; 64 bad\n"
	"usage.\n");
}

struct opts {
	int repair, resume, no_ckpt, unconfirmed;
	int have_at, have_len, have_stop;
	struct cli_common common;    /* --json, --progress, --uuid */
	uint64_t at, len, stop_after;
	const char *ckpt;
	const char *geometry;        /* --geometry FILE */
	char **paths;                /* the members */
	int nmem;
};

struct kept {
	struct rk_scrub_region r;    /* pointers re-homed below */
	uint32_t *fault;
	struct rk_scrub_loc *locs;
	char *why;
};

struct ukept {
	struct rk_scrub_unreadable u;    /* why re-homed */
	char *why;
};

struct run {
	const struct opts *o;
	const struct rk_array_info *ai;
	const struct rk_geom *g;
	FILE *out;                   /* words: stdout; NULL with --json */
	struct kept *kept;
	size_t nkept, capkept;
	int dropped;
	struct ukept *ukept;
	size_t nukept, capukept;
	int udropped;
	struct cli_progress *pg;
	const char *uuid;            /* the array's, as text */
};

static volatile sig_atomic_t stop_sig;
static void on_stop(int sig) { stop_sig = sig; }

static const char *role_path(const struct run *R, uint32_t role)
{
	return role < R->ai->nroles && R->ai->roles[role].path ? R->ai->roles[role].path : "?";
}

static const char *fix_word(enum rk_scrub_fix f)
{
	switch (f) {
	case RK_SCRUB_FIX_PROVEN: return "rewritten";
	case RK_SCRUB_FIX_CONSISTENT: return "made-consistent";
	default: return "none";
	}
}

static void print_region(struct run *R, const struct rk_scrub_region *r)
{
	FILE *f = R->out;
	fprintf(f, "mismatch: stripe %" PRIu64 ", volume bytes %" PRIu64 "..%" PRIu64 " (%" PRIu64 " bytes)\n",
	        r->stripe, r->offset, r->offset + r->length - 1, r->length);
	fprintf(f, "  members:");
	for (uint32_t i = 0; i < r->nlocs; i++)
		fprintf(f, "%s role %u @ %" PRIu64, i ? "," : "", r->locs[i].role, r->locs[i].member_off);
	fprintf(f, " (%" PRIu64 " bytes each)\n", r->member_len);
	if (r->verdict == RK_SCRUB_LOCATED) {
		fprintf(f, "  at fault:");
		for (uint32_t i = 0; i < r->nfault; i++)
			rk_esc_fprintf(f, "%s role %u (%s)", i ? "," : "", r->fault[i], role_path(R, r->fault[i]));
		fprintf(f, ": %s\n", r->why);
	} else {
		fprintf(f, "  at fault: cannot be told: %s\n", r->why);
	}
	if (r->fix == RK_SCRUB_FIX_PROVEN)
		fprintf(f, "  repaired: rewrote the block%s at fault\n", r->nfault == 1 ? "" : "s");
	else if (r->fix == RK_SCRUB_FIX_CONSISTENT)
		fprintf(f, "  repaired: redundancy made consistent, but the data in volume bytes %" PRIu64 "..%" PRIu64
		        " may be wrong\n", r->offset, r->offset + r->length - 1);
}

static void on_region(void *ctx, const struct rk_scrub_region *r)
{
	struct run *R = ctx;
	if (R->out) {
		print_region(R, r);
		return;
	}
	if (R->nkept >= MAX_KEPT) {
		R->dropped = 1;
		return;
	}
	if (R->nkept == R->capkept) {
		size_t nc = R->capkept ? 2 * R->capkept : 64;
		struct kept *k = realloc(R->kept, nc * sizeof *k);
		if (!k) {
			R->dropped = 1;
			return;
		}
		R->kept = k;
		R->capkept = nc;
	}
	struct kept *k = &R->kept[R->nkept];
	k->r = *r;
	k->fault = malloc((r->nfault + 1) * sizeof *k->fault);
	k->locs = malloc((r->nlocs + 1) * sizeof *k->locs);
	k->why = strdup(r->why ? r->why : "");
	if (!k->fault || !k->locs || !k->why) {
		free(k->fault);
		free(k->locs);
		free(k->why);
		R->dropped = 1;
		return;
	}
	memcpy(k->fault, r->fault, r->nfault * sizeof *k->fault);
	memcpy(k->locs, r->locs, r->nlocs * sizeof *k->locs);
	R->nkept++;
}

static const char *ufix_word(enum rk_scrub_ufix f)
{
	switch (f) {
	case RK_SCRUB_UFIX_REWRITTEN: return "rewritten";
	case RK_SCRUB_UFIX_FAILED: return "failed";
	default: return "none";
	}
}

static void print_unreadable(struct run *R, const struct rk_scrub_unreadable *u)
{
	FILE *f = R->out;
	rk_esc_fprintf(f, "unreadable: stripe %" PRIu64 ", role %u (%s) member bytes %" PRIu64 "..%" PRIu64
	               " (%" PRIu64 " bytes): %s\n", u->stripe, u->role, role_path(R, u->role), u->member_off,
	               u->member_off + u->member_len - 1, u->member_len, u->why);
	fprintf(f, "  volume bytes %" PRIu64 "..%" PRIu64 " (%" PRIu64 " bytes)%s\n", u->offset, u->offset + u->length - 1,
	        u->length, u->is_data ? "" : ": the stripe this parity protects");
	if (u->fix == RK_SCRUB_UFIX_REWRITTEN)
		fprintf(f, "  repaired: rebuilt from redundancy, rewritten and read back\n");
	else if (u->fix == RK_SCRUB_UFIX_FAILED)
		fprintf(f, "  repair FAILED: the rewrite or its read back failed\n");
	else if (!u->recoverable)
		fprintf(f, "  cannot be rebuilt: %s\n", u->is_data ? "these volume bytes are lost"
		                                                    : "the stripe has no redundancy left here");
	else if (R->o->repair && u->disputed)
		fprintf(f, "  not rewritten: the rest of the stripe disagrees with itself there\n");
	else if (R->o->repair && !u->confirmed)
		fprintf(f, "  not rewritten: nothing confirms the rebuilt bytes (--rewrite-unconfirmed writes them)\n");
}

static void on_unreadable(void *ctx, const struct rk_scrub_unreadable *u)
{
	struct run *R = ctx;
	if (R->out) {
		print_unreadable(R, u);
		return;
	}
	if (R->nukept >= MAX_KEPT) {
		R->udropped = 1;
		return;
	}
	if (R->nukept == R->capukept) {
		size_t nc = R->capukept ? 2 * R->capukept : 16;
		struct ukept *k = realloc(R->ukept, nc * sizeof *k);
		if (!k) {
			R->udropped = 1;
			return;
		}
		R->ukept = k;
		R->capukept = nc;
	}
	struct ukept *k = &R->ukept[R->nukept];
	k->u = *u;
	if (!(k->why = strdup(u->why ? u->why : ""))) {
		R->udropped = 1;
		return;
	}
	R->nukept++;
}

static void json_unreadable(rk_json *j, const struct run *R, const struct ukept *k)
{
	const struct rk_scrub_unreadable *u = &k->u;
	rk_json_obj_begin(j);
	rk_json_ku64(j, "stripe", u->stripe);
	rk_json_ku64(j, "offset", u->offset);
	rk_json_ku64(j, "length", u->length);
	rk_json_key(j, "roles");
	rk_json_arr_begin(j);
	rk_json_u64(j, u->role);
	rk_json_arr_end(j);
	rk_json_kbool(j, "data", u->is_data);
	rk_json_key(j, "members");
	rk_json_arr_begin(j);
	rk_json_obj_begin(j);
	rk_json_ku64(j, "role", u->role);
	rk_json_kstr(j, "path", role_path(R, u->role));
	rk_json_ku64(j, "offset", u->member_off);
	rk_json_ku64(j, "length", u->member_len);
	rk_json_obj_end(j);
	rk_json_arr_end(j);
	rk_json_kbool(j, "recoverable", u->recoverable);
	rk_json_kbool(j, "confirmed", u->confirmed);
	rk_json_kbool(j, "disputed", u->disputed);
	rk_json_kstr(j, "why", k->why);
	rk_json_kstr(j, "repair", ufix_word(u->fix));
	rk_json_obj_end(j);
}

static void json_region(rk_json *j, const struct run *R, const struct kept *k)
{
	const struct rk_scrub_region *r = &k->r;
	rk_json_obj_begin(j);
	rk_json_ku64(j, "stripe", r->stripe);
	rk_json_ku64(j, "offset", r->offset);
	rk_json_ku64(j, "length", r->length);
	rk_json_key(j, "roles");
	rk_json_arr_begin(j);
	for (uint32_t i = 0; i < r->nfault; i++)
		rk_json_u64(j, k->fault[i]);
	rk_json_arr_end(j);
	rk_json_kbool(j, "located", r->verdict == RK_SCRUB_LOCATED);
	rk_json_key(j, "members");
	rk_json_arr_begin(j);
	for (uint32_t i = 0; i < r->nlocs; i++) {
		rk_json_obj_begin(j);
		rk_json_ku64(j, "role", k->locs[i].role);
		rk_json_kstr(j, "path", role_path(R, k->locs[i].role));
		rk_json_ku64(j, "offset", k->locs[i].member_off);
		rk_json_ku64(j, "length", r->member_len);
		rk_json_obj_end(j);
	}
	rk_json_arr_end(j);
	rk_json_kstr(j, "why", k->why);
	rk_json_kstr(j, "repair", fix_word(r->fix));
	if (r->fix == RK_SCRUB_FIX_CONSISTENT) {
		char note[256];
		snprintf(note, sizeof note, "the fault could not be located: redundancy was made consistent, but the "
		         "data in volume bytes %" PRIu64 "..%" PRIu64 " may be wrong", r->offset,
		         r->offset + r->length - 1);
		rk_json_kstr(j, "note", note);
	} else if (r->verdict == RK_SCRUB_UNLOCATED) {
		rk_json_kstr(j, "note", "the fault cannot be located: --repair would only make redundancy consistent");
	}
	rk_json_obj_end(j);
}

enum { O_REPAIR = 256, O_UNCONF, O_AT, O_LENGTH, O_CKPT, O_NOCKPT, O_RESUME, O_STOP, O_GEOMETRY };

/* One of raid-scrub's own options into the struct opts CTX: CLI_GO_ON, or
 * the exit status. */
static int on_option(void *ctx, int opt, char *arg)
{
	struct opts *o = ctx;
	switch (opt) {
	case O_REPAIR: o->repair = 1; break;
	case O_UNCONF: o->unconfirmed = 1; break;
	case O_RESUME: o->resume = 1; break;
	case O_NOCKPT: o->no_ckpt = 1; break;
	case O_AT:
		o->have_at = 1;
		return cli_parse_offset_opt("--at", arg, &o->at);
	case O_LENGTH:
		if (cli_parse_size(arg, &o->len) || o->len == 0)
			return cli_usage_error("--length: '%s' is not a size above 0 (bytes, or with K, M, G, T)", arg);
		o->have_len = 1;
		break;
	case O_STOP:
		if (cli_parse_size(arg, &o->stop_after) || o->stop_after == 0)
			return cli_usage_error("--stop-after: '%s' is not a size above 0", arg);
		o->have_stop = 1;
		break;
	case O_CKPT:
		if (!*arg)
			return cli_usage_error("--checkpoint: empty file name");
		o->ckpt = arg;
		break;
	case O_GEOMETRY:
		if (!*arg)
			return cli_usage_error("--geometry: empty file name");
		o->geometry = arg;
		break;
	}
	return CLI_GO_ON;
}

/* Parses the command line into O and the members; returns CLI_GO_ON (-1)
 * to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "repair", no_argument, NULL, O_REPAIR },
		{ "rewrite-unconfirmed", no_argument, NULL, O_UNCONF },
		{ "at", required_argument, NULL, O_AT },
		{ "length", required_argument, NULL, O_LENGTH },
		{ "checkpoint", required_argument, NULL, O_CKPT },
		{ "no-checkpoint", no_argument, NULL, O_NOCKPT },
		{ "resume", no_argument, NULL, O_RESUME },
		{ "stop-after", required_argument, NULL, O_STOP },
		{ "geometry", required_argument, NULL, O_GEOMETRY },
		CLI_OPTION_JSON, CLI_OPTION_PROGRESS, CLI_OPTION_UUID, CLI_OPTION_DISK_SERIAL, CLI_OPTION_HELP, CLI_OPTION_VERSION,
		CLI_OPTION_END,
	};
	memset(o, 0, sizeof *o);
	const struct cli_command cmd = { "", lo, usage, on_option, o, &o->common };
	int rc = cli_parse_options(argc, argv, &cmd);
	if (rc != CLI_GO_ON)
		return rc;
	o->nmem = argc - optind;
	o->paths = argv + optind;
	if (o->nmem <= 0)
		return cli_usage_error("no MEMBER given");
	if (o->no_ckpt && (o->ckpt || o->resume || o->have_stop))
		return cli_usage_error("--no-checkpoint: cannot go with --checkpoint, --resume or --stop-after");
	if (o->unconfirmed && !o->repair)
		return cli_usage_error("--rewrite-unconfirmed goes with --repair");
	if (o->resume && (o->have_at || o->have_len))
		return cli_usage_error("--resume continues the recorded range: leave out --at and --length");
	for (int i = 0; i < o->nmem; i++)
		if (!*o->paths[i])
			return cli_usage_error("empty MEMBER name");
	if (o->geometry && o->common.have_uuid)
		return cli_usage_error("--uuid: not with --geometry (the file names one array)");
	if (o->geometry && o->repair) {
		cli_err("--repair: an array described by a geometry file is read-only: nothing on the images "
		        "confirms the geometry, so raidkit never writes through one");
		return EX_FAIL;
	}
	return CLI_GO_ON;
}

/* --geometry FILE: the discovery the file and the images make; 0 or the
 * exit status (said). */
static int geometry_discover(const struct opts *o, struct rk_discovery **d)
{
	struct rk_geometry geo;
	rk_err e = rk_geometry_load(o->geometry, &geo);
	if (e) {
		cli_err("--geometry: %s", rk_errmsg());
		return e == RK_E_OPEN ? EX_USAGE : EX_FAIL;
	}
	e = rk_geometry_discover(d, &geo, o->paths, (uint32_t)o->nmem);
	rk_geometry_free(&geo);
	if (e) {
		cli_err("--geometry: %s", rk_errmsg());
		return EX_FAIL;
	}
	return 0;
}

/* Discovers the members and picks the array to scrub (*AI, its geometry
 * *G, its UUID in U); returns -1 to go on, else the exit status. */
static int find_array(const struct opts *o, struct rk_discovery **d, const struct rk_array_info **ai,
                      struct rk_geom *g, char *u)
{
	int grc;
	if (o->geometry && (grc = geometry_discover(o, d)))
		return grc;
	if (!o->geometry && rk_discover(d, o->paths, (uint32_t)o->nmem, o->common.have_uuid ? o->common.uuid : NULL)) {
		cli_err("%s", rk_errmsg());
		return EX_FAIL;
	}
	int pick = rk_discovery_pick(*d, o->common.have_uuid ? o->common.uuid : NULL);
	if (pick < 0) {
		if (!(*d)->narrays) {
			cli_err("no array found among the %d path%s given", o->nmem, o->nmem == 1 ? "" : "s");
		} else if (o->common.have_uuid) {
			uuid_unparse_lower(o->common.uuid, u);
			cli_err("--uuid: no array %s among the members given", u);
		} else {
			cli_err("several arrays among the members: pick one with --uuid");
			return EX_USAGE;
		}
		return EX_FAIL;
	}
	*ai = &(*d)->arrays[pick];
	const struct rk_sb *sb = (*ai)->sb;
	uuid_unparse_lower((*ai)->uuid, u);
	if (!sb || (*ai)->state == RK_ASTATE_FAILED || (*ai)->state == RK_ASTATE_CONFLICT) {
		cli_err("array %s: cannot scrub: %s", u, (*ai)->why[0] ? (*ai)->why : "too few members");
		return EX_FAIL;
	}
	if (rk_geom_init(g, sb->level, sb->layout, sb->chunk, sb->nroles, sb->data_size)) {
		cli_err("array %s: %s", u, rk_errmsg());
		return EX_FAIL;
	}
	if (g->level == 0 || g->level == RK_LEVEL_LINEAR) {
		cli_err("array %s: %s has no redundancy to verify", u, g->level == 0 ? "RAID-0" : "a linear array");
		return EX_FAIL;
	}
	return -1;
}

/* ---- tests only (rk_array.h): members behind the fault-injecting
 * backend, read-only opens included (read errors are what a scrub meets) */

struct test_fault {
	rk_fault_plan *plan;
	int crash;                   /* power-cut: the post-crash image at the end */
};

/* The test hooks' fault plan (cli_test_hooks_install), if one is set; -1
 * to go on, else the exit status. */
static int test_fault_setup(struct test_fault *tf)
{
	const struct rk_fault_spec *sp = rk_test_hooks_fault();
	memset(tf, 0, sizeof *tf);
	if (!sp)
		return -1;
	if (rk_fault_plan_create(&tf->plan, sp)) {
		cli_err("RAIDKIT_TEST_FAULT: %s", rk_errmsg());
		return EX_FAIL;
	}
	tf->crash = sp->model == RK_FAULT_POWER_CUT;
	return -1;
}

static rk_err test_fault_wrap(void *ctx, uint32_t role, rk_dev **dev)
{
	struct test_fault *tf = ctx;
	rk_dev *w = NULL;
	rk_err e = rk_dev_fault(&w, *dev, tf->plan, (int)role);
	*dev = w;   /* the wrapper owns the member now, also on failure */
	if (e) {
		char msg[512];
		snprintf(msg, sizeof msg, "%s", rk_errmsg());
		return rk_fail(e, "RAIDKIT_TEST_FAULT: %s", msg);
	}
	return RK_OK;
}

/* ---- the run ---- */

static struct sigaction old_int, old_term, old_hup;
static int signals_set;

static void on_start(void *ctx, const struct rk_scrub_array_start *s)
{
	struct run *R = ctx;
	const struct opts *o = R->o;
	const struct rk_array_info *ai = R->ai;
	const struct rk_geom *g = R->g;
	if (s->resume_missing)
		cli_err("--resume: no checkpoint at %s: starting from the beginning", s->checkpoint);
	if (!o->common.json) {
		char lay[64];
		rk_esc_fprintf(stdout, "array %s%s%s%s: RAID-%s %s, %u roles (%u present), volume %" PRIu64 " bytes\n",
		               R->uuid, ai->name[0] ? " \"" : "", ai->name, ai->name[0] ? "\"" : "", rk_level_name(g->level),
		               rk_layout_name(g->level, g->layout, lay, sizeof lay), ai->nroles, ai->nactive, g->volume_size);
		if (ai->state == RK_ASTATE_DEGRADED)
			rk_esc_fprintf(stdout, "degraded: %s\n", ai->why[0] ? ai->why : "members missing");
		printf("checking stripes %" PRIu64 "..%" PRIu64 " of %" PRIu64 "%s%s\n", s->start, s->last ? s->last - 1 : 0,
		       g->nstripes, s->resumed ? " (resumed)" : "", o->repair ? ", repairing" : " (read-only)");
		fflush(stdout);
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);
	signals_set = 1;
	R->pg = cli_progress_start(o->repair ? "raid-scrub: repair" : "raid-scrub", (s->last - s->first) * g->stripe_data,
	                           o->common.progress, o->common.json);
}

static int on_progress(void *ctx, uint64_t next, uint64_t bytes_done)
{
	struct run *R = ctx;
	(void)next;
	cli_progress_update(R->pg, bytes_done);
	return stop_sig != 0;
}

static void on_checkpoint_error(void *ctx, const char *msg)
{
	(void)ctx;
	cli_err("warning: %s; carrying on without a resume point", msg);
}

/* Scrubs the opened members; prints what went wrong; returns the status so
 * far (EX_DONE or a failure). */
static int scrub(struct run *R, const struct rk_scrub_members *m, struct rk_scrub_array_result *res)
{
	const struct opts *o = R->o;
	struct rk_scrub_array_opts so = {
		.repair = o->repair,
		.rewrite_unconfirmed = o->unconfirmed,
		.at = o->at,
		.length = o->have_len ? o->len : 0,
		.resume = o->resume,
		.stop_after = o->have_stop ? o->stop_after : 0,
		.checkpoint_mode = o->no_ckpt ? RK_SCRUB_CKPT_NONE : o->ckpt ? RK_SCRUB_CKPT_PATH : RK_SCRUB_CKPT_DEFAULT,
		.checkpoint = o->ckpt,
		.ctx = R,
		.on_start = on_start,
		.on_region = on_region,
		.on_unreadable = on_unreadable,
		.on_progress = on_progress,
		.on_checkpoint_error = on_checkpoint_error,
	};
	int rc = EX_DONE;
	rk_scrub_array(m, &so, res);
	if (R->pg) {
		if (res->failed != RK_SCRUB_STEP_RUN && !res->stats.stopped)
			cli_progress_end(R->pg);
		else
			free(R->pg);
		R->pg = NULL;
	}
	if (signals_set) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		sigaction(SIGHUP, &old_hup, NULL);
	}
	switch (res->failed) {
	case RK_SCRUB_STEP_OPEN: cli_err("array %s: %s", R->uuid, res->errmsg); rc = EX_FAIL; break;
	case RK_SCRUB_STEP_RANGE: rc = cli_usage_error("%s", res->errmsg); break;
	case RK_SCRUB_STEP_RESUME: cli_err("--resume: %s", res->errmsg); rc = EX_FAIL; break;
	case RK_SCRUB_STEP_RUN: cli_err("%s", res->errmsg); rc = EX_FAIL; break;
	default:
		if (!res->stats.stopped)
			break;
		if (res->checkpoint[0])
			cli_err("stopped at stripe %" PRIu64 " of %" PRIu64 "; continue with --resume (checkpoint %s)",
			        res->stats.next, res->last, res->checkpoint);
		else
			cli_err("stopped at stripe %" PRIu64 " of %" PRIu64, res->stats.next, res->last);
		if (stop_sig)
			rc = EX_FAIL;   /* interrupted: not done */
	}
	if (res->close_err) {
		cli_err("array %s: closing after repair: %s", R->uuid, res->close_msg);
		rc = EX_FAIL;
	}
	return rc;
}

/* Totals of the whole range (the run resumed from included). */
struct totals {
	uint64_t mismatches, repaired, unreadable, unrecoverable;
};

static struct totals totals_of(const struct rk_scrub_array_result *res)
{
	const struct rk_scrub_stats *st = &res->stats;
	return (struct totals){
		.mismatches = res->before.mismatches + st->mismatches,
		.repaired = res->before.repaired + st->repaired,
		.unreadable = res->before.unreadable + st->unreadable,
		.unrecoverable = res->before.unrecoverable + st->unrecoverable + st->rewrite_failed,
	};
}

static void print_summary(const struct run *R, const struct rk_scrub_array_result *res)
{
	const struct rk_scrub_stats *st = &res->stats;
	struct totals t = totals_of(res);
	printf("checked %" PRIu64 " stripe%s, read %" PRIu64 " member bytes", st->stripes, st->stripes == 1 ? "" : "s",
	       st->bytes_read);
	if (st->unchecked)
		printf("; %" PRIu64 " stripe%s with no redundancy left could not be checked", st->unchecked,
		       st->unchecked == 1 ? "" : "s");
	printf("\n");
	printf("%" PRIu64 " mismatch%s (%" PRIu64 " located), %" PRIu64 " repaired%s\n", t.mismatches,
	       t.mismatches == 1 ? "" : "es", st->located, t.repaired,
	       res->resumed ? " (counts include the run resumed from)" : "");
	if (t.unreadable)
		printf("%" PRIu64 " unreadable range%s (%" PRIu64 " that cannot be rebuilt), %" PRIu64 " rewritten%s%s\n",
		       t.unreadable, t.unreadable == 1 ? "" : "s", res->before.unrecoverable + st->unrecoverable,
		       st->rewritten, st->rewrite_failed ? ", rewrite failed for some (see above)" : "",
		       res->resumed ? " (counts include the run resumed from)" : "");
	if (st->consistent)
		printf("note: %" PRIu64 " region%s could not be located; redundancy was made consistent but the data "
		       "there may be wrong (ranges above)\n", st->consistent, st->consistent == 1 ? "" : "s");
	else if (t.mismatches && !R->o->repair && st->located < st->mismatches)
		printf("note: faults that cannot be located would only be made consistent by --repair; the data "
		       "there may be wrong\n");
}

static void print_json(const struct run *R, const struct rk_scrub_array_result *res, int rc)
{
	const struct rk_geom *g = R->g;
	const struct rk_scrub_stats *st = &res->stats;
	struct totals t = totals_of(res);
	int run_failed = res->failed == RK_SCRUB_STEP_RUN;
	rk_json *j = rk_json_new(stdout);
	if (!j)
		return;
	rk_json_obj_begin(j);
	rk_json_kstr(j, "uuid", R->uuid);
	rk_json_kstr(j, "level", rk_level_name(g->level));
	rk_json_kstr(j, "state", R->ai->state == RK_ASTATE_DEGRADED ? "degraded" : "clean");
	rk_json_kbool(j, "repair", R->o->repair);
	rk_json_ku64(j, "first_stripe", res->first);
	rk_json_ku64(j, "last_stripe", res->last);
	rk_json_ku64(j, "start_stripe", res->start);
	rk_json_ku64(j, "offset", res->first * g->stripe_data);
	uint64_t end = res->last * g->stripe_data < g->volume_size ? res->last * g->stripe_data : g->volume_size;
	rk_json_ku64(j, "length", end - res->first * g->stripe_data);
	rk_json_ku64(j, "stripes_checked", st->stripes);
	rk_json_ku64(j, "stripes_unchecked", st->unchecked);
	rk_json_ku64(j, "bytes_read", st->bytes_read);
	rk_json_ku64(j, "mismatches", t.mismatches);
	rk_json_ku64(j, "located", st->located);
	rk_json_ku64(j, "repaired", t.repaired);
	rk_json_ku64(j, "made_consistent", st->consistent);
	rk_json_key(j, "regions");
	rk_json_arr_begin(j);
	for (size_t i = 0; i < R->nkept; i++)
		json_region(j, R, &R->kept[i]);
	rk_json_arr_end(j);
	rk_json_kbool(j, "regions_truncated", R->dropped);
	rk_json_ku64(j, "unreadable_regions", t.unreadable);
	rk_json_ku64(j, "unrecoverable_regions", t.unrecoverable);
	rk_json_ku64(j, "rewritten", st->rewritten);
	rk_json_key(j, "unreadable");
	rk_json_arr_begin(j);
	for (size_t i = 0; i < R->nukept; i++)
		json_unreadable(j, R, &R->ukept[i]);
	rk_json_arr_end(j);
	rk_json_kbool(j, "unreadable_truncated", R->udropped);
	if (st->consistent)
		rk_json_kstr(j, "note", "some faults could not be located: redundancy was made consistent but "
		             "the data in those regions may be wrong");
	int complete = !run_failed && !st->stopped && rc != EX_FAIL;
	rk_json_kbool(j, "complete", complete);
	if (rk_json_key_or_null(j, "resume_stripe", !complete && st->next < res->last))
		rk_json_u64(j, st->next);
	rk_json_kstr(j, "error", run_failed ? res->errmsg : NULL);
	rk_json_ku64(j, "exit", (uint64_t)rc);
	rk_json_obj_end(j);
	rk_json_free(j);
}

static void free_kept(struct run *R)
{
	for (size_t i = 0; i < R->nkept; i++) {
		free(R->kept[i].fault);
		free(R->kept[i].locs);
		free(R->kept[i].why);
	}
	free(R->kept);
	for (size_t i = 0; i < R->nukept; i++)
		free(R->ukept[i].why);
	free(R->ukept);
}

int main(int argc, char **argv)
{
	cli_init("raid-scrub");
	cli_test_hooks_install();
	struct opts o;
	int rc = parse_args(argc, argv, &o);
	if (rc >= 0)
		return rc;
	struct rk_discovery *d = NULL;
	const struct rk_array_info *ai = NULL;
	struct rk_geom g;
	char u[37];
	rc = find_array(&o, &d, &ai, &g, u);
	if (rc >= 0) {
		rk_discovery_free(d);
		return rc;
	}
	/* members: read-only unless repairing */
	struct test_fault tf;
	struct rk_scrub_members m;
	memset(&m, 0, sizeof m);
	rc = test_fault_setup(&tf);
	if (rc < 0 && rk_scrub_array_open_members(&m, ai, o.repair, tf.plan ? test_fault_wrap : NULL, &tf)) {
		cli_err("%s", rk_errmsg());
		rc = EX_FAIL;
	}
	struct run R = { .o = &o, .ai = ai, .g = &g, .out = o.common.json ? NULL : stdout, .uuid = u };
	struct rk_scrub_array_result res;
	memset(&res, 0, sizeof res);
	res.last = g.nstripes;
	if (rc < 0)
		rc = scrub(&R, &m, &res);
	if (tf.plan && tf.crash)
		rk_fault_crash(tf.plan);   /* the "power" comes back when the tool is done */
	struct totals t = totals_of(&res);
	if (rc == EX_DONE && (t.mismatches || t.repaired || t.unreadable || ai->state == RK_ASTATE_DEGRADED ||
	                      res.stats.unchecked))
		rc = EX_REPORT;
	/* unreadable bytes that could not be rebuilt (or rewritten): data or
	 * redundancy is lost there */
	if (rc == EX_REPORT && t.unrecoverable)
		rc = EX_FAIL;
	if (!o.common.json && (res.failed != RK_SCRUB_STEP_RUN || res.stats.stripes))
		print_summary(&R, &res);
	if (o.common.json)
		print_json(&R, &res, rc);
	free_kept(&R);
	rk_scrub_array_close_members(&m);
	rk_fault_plan_free(tf.plan);
	rk_discovery_free(d);
	if (fflush(stdout) || ferror(stdout))
		return EX_FAIL;
	return rc;
}
