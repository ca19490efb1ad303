/* raid-scrub: verify an array's redundancy offline and optionally repair it.
 * Policy and presentation only: discovery is rk_discover(), the checking
 * and repairing rk_scrub_run() (engine/rk_scrub.h), the write protocol
 * (array marked open for writing before the first repair, clean after)
 * rk_array.  Members are opened read-only unless --repair is given. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "cli.h"
#include "rk_array.h"
#include "rk_dev.h"
#include "rk_discover.h"
#include "rk_geom.h"
#include "rk_json.h"
#include "rk_scrub.h"
#include "rk_scrub_checkpoint.h"
#include "rk_sb.h"

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
	int repair, json, progress, resume, no_ckpt, unconfirmed;
	int have_uuid, have_at, have_len, have_stop;
	uuid_t uuid;
	uint64_t at, len, stop_after;
	const char *ckpt;
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
	rk_array *arr;               /* --repair only */
	FILE *out;                   /* words: stdout; NULL with --json */
	struct kept *kept;
	size_t nkept, capkept;
	int dropped;
	struct ukept *ukept;
	size_t nukept, capukept;
	int udropped;
	struct cli_progress *pg;
	uint64_t first, done_base;
	struct rk_scrub_ckpt ck;
	const char *ckpt_path;
	int ckpt_warned;
	time_t last_save;
	uint64_t prev_mism, prev_rep, prev_unr, prev_unrec;
	struct rk_scrub_stats *st;   /* live stats (for checkpoints) */
	uint64_t stop_stripes;       /* 0: no limit */
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
			fprintf(f, "%s role %u (%s)", i ? "," : "", r->fault[i], role_path(R, r->fault[i]));
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
	fprintf(f, "unreadable: stripe %" PRIu64 ", role %u (%s) member bytes %" PRIu64 "..%" PRIu64 " (%" PRIu64
	        " bytes): %s\n", u->stripe, u->role, role_path(R, u->role), u->member_off,
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

static void save_ckpt(struct run *R, uint64_t next)
{
	if (!R->ckpt_path)
		return;
	R->ck.next = next;
	R->ck.mismatches = R->prev_mism + R->st->mismatches;
	R->ck.repaired = R->prev_rep + R->st->repaired;
	R->ck.unreadable = R->prev_unr + R->st->unreadable;
	R->ck.unrecoverable = R->prev_unrec + R->st->unrecoverable + R->st->rewrite_failed;
	if (rk_scrub_ckpt_save(R->ckpt_path, &R->ck) && !R->ckpt_warned) {
		R->ckpt_warned = 1;
		cli_err("warning: %s; carrying on without a resume point", rk_errmsg());
	}
}

static int on_progress(void *ctx, uint64_t next, uint64_t done)
{
	struct run *R = ctx;
	cli_progress_update(R->pg, (R->done_base + done) * R->g->stripe_data);
	time_t now = time(NULL);
	int stop = stop_sig != 0;
	if (stop || now != R->last_save) {
		R->last_save = now;
		save_ckpt(R, next);
	}
	return stop;
}

static rk_err on_begin_write(void *ctx)
{
	struct run *R = ctx;
	return rk_array_begin_write(R->arr);
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

static int pick_array(const struct opts *o, const struct rk_discovery *d)
{
	if (o->have_uuid) {
		for (uint32_t i = 0; i < d->narrays; i++)
			if (!memcmp(d->arrays[i].uuid, o->uuid, 16))
				return (int)i;
		return -1;
	}
	return d->narrays == 1 ? 0 : -1;
}

static char *default_ckpt(const char *member, const uint8_t *uuid)
{
	char *cp = strdup(member), u[37];
	if (!cp)
		return NULL;
	uuid_unparse_lower(uuid, u);
	const char *dir = dirname(cp);
	size_t n = strlen(dir) + 64;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s/.raid-scrub-%s", dir, u);
	free(cp);
	return p;
}

int main(int argc, char **argv)
{
	cli_init("raid-scrub");
	struct opts o;
	memset(&o, 0, sizeof o);
	enum { O_REPAIR = 256, O_UNCONF, O_JSON, O_PROGRESS, O_AT, O_LENGTH, O_UUID, O_CKPT, O_NOCKPT, O_RESUME, O_STOP,
	       O_HELP, O_VERSION };
	static const struct option lo[] = {
		{ "repair", no_argument, NULL, O_REPAIR },
		{ "rewrite-unconfirmed", no_argument, NULL, O_UNCONF },
		{ "json", no_argument, NULL, O_JSON },
		{ "progress", no_argument, NULL, O_PROGRESS },
		{ "at", required_argument, NULL, O_AT },
		{ "length", required_argument, NULL, O_LENGTH },
		{ "uuid", required_argument, NULL, O_UUID },
		{ "checkpoint", required_argument, NULL, O_CKPT },
		{ "no-checkpoint", no_argument, NULL, O_NOCKPT },
		{ "resume", no_argument, NULL, O_RESUME },
		{ "stop-after", required_argument, NULL, O_STOP },
		{ "help", no_argument, NULL, O_HELP },
		{ "version", no_argument, NULL, O_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":", lo, NULL)) != -1) {
		switch (c) {
		case O_REPAIR: o.repair = 1; break;
		case O_UNCONF: o.unconfirmed = 1; break;
		case O_JSON: o.json = 1; break;
		case O_PROGRESS: o.progress = 1; break;
		case O_RESUME: o.resume = 1; break;
		case O_NOCKPT: o.no_ckpt = 1; break;
		case O_AT:
			if (cli_parse_size(optarg, &o.at))
				return cli_usage_error("--at: '%s' is not an offset (bytes, or with K, M, G, T)", optarg);
			o.have_at = 1;
			break;
		case O_LENGTH:
			if (cli_parse_size(optarg, &o.len) || o.len == 0)
				return cli_usage_error("--length: '%s' is not a size above 0 (bytes, or with K, M, G, T)", optarg);
			o.have_len = 1;
			break;
		case O_STOP:
			if (cli_parse_size(optarg, &o.stop_after) || o.stop_after == 0)
				return cli_usage_error("--stop-after: '%s' is not a size above 0", optarg);
			o.have_stop = 1;
			break;
		case O_UUID:
			if (uuid_parse(optarg, o.uuid))
				return cli_usage_error("--uuid: '%s' is not a UUID", optarg);
			o.have_uuid = 1;
			break;
		case O_CKPT:
			if (!*optarg)
				return cli_usage_error("--checkpoint: empty file name");
			o.ckpt = optarg;
			break;
		case O_HELP: usage(stdout); return EX_DONE;
		case O_VERSION: cli_version(); return EX_DONE;
		case ':': return cli_usage_error("%s: needs an argument", argv[optind - 1]);
		default:
			if (optopt)
				return cli_usage_error("-%c: unknown option", optopt);
			return cli_usage_error("%s: unknown option", argv[optind - 1]);
		}
	}
	int nmem = argc - optind;
	if (nmem <= 0)
		return cli_usage_error("no MEMBER given");
	if (o.no_ckpt && (o.ckpt || o.resume || o.have_stop))
		return cli_usage_error("--no-checkpoint: cannot go with --checkpoint, --resume or --stop-after");
	if (o.unconfirmed && !o.repair)
		return cli_usage_error("--rewrite-unconfirmed goes with --repair");
	if (o.resume && (o.have_at || o.have_len))
		return cli_usage_error("--resume continues the recorded range: leave out --at and --length");
	char **paths = argv + optind;
	for (int i = 0; i < nmem; i++)
		if (!*paths[i])
			return cli_usage_error("empty MEMBER name");

	struct rk_discovery *d = NULL;
	if (rk_discover(&d, paths, (uint32_t)nmem, o.have_uuid ? o.uuid : NULL)) {
		cli_err("%s", rk_errmsg());
		return EX_FAIL;
	}
	int pick = pick_array(&o, d);
	if (pick < 0) {
		int rc = EX_FAIL;
		if (!d->narrays) {
			cli_err("no array found among the %d path%s given", nmem, nmem == 1 ? "" : "s");
		} else if (o.have_uuid) {
			char u[37];
			uuid_unparse_lower(o.uuid, u);
			cli_err("--uuid: no array %s among the members given", u);
		} else {
			cli_err("several arrays among the members: pick one with --uuid");
			rc = EX_USAGE;
		}
		rk_discovery_free(d);
		return rc;
	}
	const struct rk_array_info *ai = &d->arrays[pick];
	const struct rk_sb *sb = ai->sb;
	char u[37];
	uuid_unparse_lower(ai->uuid, u);
	if (!sb || ai->state == RK_ASTATE_FAILED || ai->state == RK_ASTATE_CONFLICT) {
		cli_err("array %s: cannot scrub: %s", u, ai->why[0] ? ai->why : "too few members");
		rk_discovery_free(d);
		return EX_FAIL;
	}
	struct rk_geom g;
	if (rk_geom_init(&g, sb->level, sb->layout, sb->chunk, sb->nroles, sb->data_size)) {
		cli_err("array %s: %s", u, rk_errmsg());
		rk_discovery_free(d);
		return EX_FAIL;
	}
	if (g.level == 0 || g.level == RK_LEVEL_LINEAR) {
		cli_err("array %s: %s has no redundancy to verify", u, g.level == 0 ? "RAID-0" : "a linear array");
		rk_discovery_free(d);
		return EX_FAIL;
	}

	/* members: read-only unless repairing */
	int rc = EX_DONE;
	rk_dev **devs = calloc(ai->nroles, sizeof *devs);
	uint64_t *doff = calloc(ai->nroles, sizeof *doff);
	const struct rk_sb **sbs = calloc(ai->nroles, sizeof *sbs);
	if (!devs || !doff || !sbs) {
		cli_err("out of memory");
		rk_discovery_free(d);
		return EX_FAIL;
	}
	const char *first_path = NULL;
	/* tests only (rk_array.h): members behind the fault-injecting backend,
	 * read-only opens included (read errors are what a scrub meets) */
	const char *tfault = getenv("RAIDKIT_TEST_FAULT");
	rk_fault_plan *tplan = NULL;
	int tcrash = 0;
	if (tfault && *tfault) {
		struct rk_fault_spec sp;
		if (rk_fault_spec_parse(tfault, &sp) || rk_fault_plan_create(&tplan, &sp)) {
			cli_err("RAIDKIT_TEST_FAULT: %s", rk_errmsg());
			rc = EX_FAIL;
		}
		tcrash = sp.model == RK_FAULT_POWER_CUT;
	}
	for (uint32_t r = 0; r < ai->nroles && rc == EX_DONE; r++) {
		const struct rk_member *m = &ai->roles[r];
		if (m->cls != RK_MEMBER_ACTIVE || !m->path || !m->sb)
			continue;
		if (rk_dev_open(&devs[r], m->path, o.repair ? RK_DEV_RDWR : RK_DEV_RDONLY)) {
			cli_err("%s", rk_errmsg());
			rc = EX_FAIL;
			break;
		}
		if (tplan) {
			rk_dev *w = NULL;
			rk_err we = rk_dev_fault(&w, devs[r], tplan, (int)r);
			devs[r] = w;   /* the wrapper owns the member now, also on failure */
			if (we) {
				cli_err("RAIDKIT_TEST_FAULT: %s", rk_errmsg());
				rc = EX_FAIL;
				break;
			}
		}
		doff[r] = m->sb->data_offset;
		sbs[r] = m->sb;
		if (!first_path)
			first_path = m->path;
	}

	struct run R;
	memset(&R, 0, sizeof R);
	R.o = &o;
	R.ai = ai;
	R.g = &g;
	R.out = o.json ? NULL : stdout;
	struct rk_scrub_stats st;
	memset(&st, 0, sizeof st);
	R.st = &st;
	char *ckpt_alloc = NULL;
	uint64_t first = 0, last = g.nstripes;
	int resumed = 0;
	rk_err se = RK_OK;
	char errbuf[512] = "";

	if (rc == EX_DONE && o.repair &&
	    rk_array_open_devs(&R.arr, sb, devs, (const struct rk_sb *const *)sbs, RK_ARRAY_RDWR)) {
		cli_err("array %s: %s", u, rk_errmsg());
		rc = EX_FAIL;
	}
	if (rc == EX_DONE && rk_scrub_range(&g, o.at, o.have_len ? o.len : 0, &first, &last)) {
		rc = cli_usage_error("%s", rk_errmsg());
	}
	if (rc == EX_DONE && !o.no_ckpt && (o.ckpt || first_path)) {
		R.ckpt_path = o.ckpt ? o.ckpt : (ckpt_alloc = default_ckpt(first_path, ai->uuid));
		memcpy(R.ck.uuid, ai->uuid, 16);
		R.ck.first = first;
		R.ck.last = last;
		R.ck.repair = o.repair;
	}
	uint64_t start = first;
	if (rc == EX_DONE && o.resume) {
		struct rk_scrub_ckpt ck;
		rk_err le = rk_scrub_ckpt_load(R.ckpt_path, &ck);
		if (le == RK_E_OPEN) {
			cli_err("--resume: no checkpoint at %s: starting from the beginning", R.ckpt_path);
		} else if (le) {
			cli_err("--resume: %s", rk_errmsg());
			rc = EX_FAIL;
		} else if (memcmp(ck.uuid, ai->uuid, 16)) {
			cli_err("--resume: %s records another array's scrub", R.ckpt_path);
			rc = EX_FAIL;
		} else if (ck.last > g.nstripes) {
			cli_err("--resume: %s records stripes past the array's end", R.ckpt_path);
			rc = EX_FAIL;
		} else {
			first = ck.first;
			last = ck.last;
			start = ck.next;
			R.ck.first = first;
			R.ck.last = last;
			R.prev_mism = ck.mismatches;
			R.prev_rep = ck.repaired;
			R.prev_unr = ck.unreadable;
			R.prev_unrec = ck.unrecoverable;
			resumed = 1;
		}
	}
	if (rc == EX_DONE && o.have_stop)
		R.stop_stripes = o.stop_after / g.stripe_data + (o.stop_after % g.stripe_data != 0);

	if (rc == EX_DONE && !o.json) {
		char lay[64];
		printf("array %s%s%s%s: RAID-%s %s, %u roles (%u present), volume %" PRIu64 " bytes\n", u,
		       ai->name[0] ? " \"" : "", ai->name, ai->name[0] ? "\"" : "", rk_level_name(g.level),
		       rk_layout_name(g.level, g.layout, lay, sizeof lay), ai->nroles, ai->nactive, g.volume_size);
		if (ai->state == RK_ASTATE_DEGRADED)
			printf("degraded: %s\n", ai->why[0] ? ai->why : "members missing");
		printf("checking stripes %" PRIu64 "..%" PRIu64 " of %" PRIu64 "%s%s\n", start, last ? last - 1 : 0,
		       g.nstripes, resumed ? " (resumed)" : "", o.repair ? ", repairing" : " (read-only)");
		fflush(stdout);
	}
	if (rc == EX_DONE) {
		struct sigaction sa, old_int, old_term, old_hup;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_stop;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, &old_int);
		sigaction(SIGTERM, &sa, &old_term);
		sigaction(SIGHUP, &sa, &old_hup);
		struct rk_scrub_opts so = {
			.repair = o.repair,
			.rewrite_unconfirmed = o.unconfirmed,
			.on_region = on_region,
			.on_progress = on_progress,
			.on_begin_write = on_begin_write,
			.on_unreadable = on_unreadable,
			.ctx = &R,
		};
		R.first = first;
		R.done_base = start - first;
		R.last_save = time(NULL);
		R.pg = cli_progress_start(o.repair ? "raid-scrub: repair" : "raid-scrub", (last - first) * g.stripe_data,
		                          o.progress, o.json);
		/* --stop-after: a shorter run, then a stop like an interruption */
		uint64_t end = last;
		if (R.stop_stripes && R.stop_stripes < last - start)
			end = start + R.stop_stripes;
		se = rk_scrub_run(&g, devs, doff, start, end, &so, &st);
		if (!se && !st.stopped && end < last)
			st.stopped = 1;
		if (!se && !st.stopped)
			cli_progress_end(R.pg);
		else
			free(R.pg);
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		sigaction(SIGHUP, &old_hup, NULL);
		if (se) {
			snprintf(errbuf, sizeof errbuf, "%s", rk_errmsg());
			cli_err("%s", errbuf);
			rc = EX_FAIL;
			save_ckpt(&R, st.next);
		} else if (st.stopped) {
			save_ckpt(&R, st.next);
			if (R.ckpt_path)
				cli_err("stopped at stripe %" PRIu64 " of %" PRIu64 "; continue with --resume (checkpoint %s)",
				        st.next, last, R.ckpt_path);
			else
				cli_err("stopped at stripe %" PRIu64 " of %" PRIu64, st.next, last);
			if (stop_sig)
				rc = EX_FAIL;   /* interrupted: not done */
		} else if (R.ckpt_path) {
			unlink(R.ckpt_path);   /* finished: nothing to resume */
		}
	}
	if (R.arr) {
		if (rk_array_close(R.arr)) {
			cli_err("array %s: closing after repair: %s", u, rk_errmsg());
			rc = EX_FAIL;
		}
		R.arr = NULL;
	}
	if (tplan && tcrash)
		rk_fault_crash(tplan);   /* the "power" comes back when the tool is done */
	uint64_t mism = R.prev_mism + st.mismatches, rep = R.prev_rep + st.repaired;
	uint64_t unr = R.prev_unr + st.unreadable, unrec = R.prev_unrec + st.unrecoverable + st.rewrite_failed;
	if (rc == EX_DONE && (mism || rep || unr || ai->state == RK_ASTATE_DEGRADED || st.unchecked))
		rc = EX_REPORT;
	/* unreadable bytes that could not be rebuilt (or rewritten): data or
	 * redundancy is lost there */
	if (rc == EX_REPORT && unrec)
		rc = EX_FAIL;

	if (!o.json && (se == RK_OK || st.stripes)) {
		printf("checked %" PRIu64 " stripe%s, read %" PRIu64 " member bytes", st.stripes,
		       st.stripes == 1 ? "" : "s", st.bytes_read);
		if (st.unchecked)
			printf("; %" PRIu64 " stripe%s with no redundancy left could not be checked", st.unchecked,
			       st.unchecked == 1 ? "" : "s");
		printf("\n");
		printf("%" PRIu64 " mismatch%s (%" PRIu64 " located), %" PRIu64 " repaired%s\n", mism,
		       mism == 1 ? "" : "es", st.located, rep,
		       resumed ? " (counts include the run resumed from)" : "");
		if (unr)
			printf("%" PRIu64 " unreadable range%s (%" PRIu64 " that cannot be rebuilt), %" PRIu64 " rewritten%s%s\n",
			       unr, unr == 1 ? "" : "s", R.prev_unrec + st.unrecoverable, st.rewritten,
			       st.rewrite_failed ? ", rewrite failed for some (see above)" : "",
			       resumed ? " (counts include the run resumed from)" : "");
		if (st.consistent)
			printf("note: %" PRIu64 " region%s could not be located; redundancy was made consistent but the data "
			       "there may be wrong (ranges above)\n", st.consistent, st.consistent == 1 ? "" : "s");
		else if (mism && !o.repair && st.located < st.mismatches)
			printf("note: faults that cannot be located would only be made consistent by --repair; the data "
			       "there may be wrong\n");
	}
	if (o.json) {
		rk_json *j = rk_json_new(stdout);
		if (j) {
			rk_json_obj_begin(j);
			rk_json_kstr(j, "uuid", u);
			rk_json_kstr(j, "level", rk_level_name(g.level));
			rk_json_kstr(j, "state", ai->state == RK_ASTATE_DEGRADED ? "degraded" : "clean");
			rk_json_kbool(j, "repair", o.repair);
			rk_json_ku64(j, "first_stripe", first);
			rk_json_ku64(j, "last_stripe", last);
			rk_json_ku64(j, "start_stripe", start);
			rk_json_ku64(j, "offset", first * g.stripe_data);
			uint64_t end = last * g.stripe_data < g.volume_size ? last * g.stripe_data : g.volume_size;
			rk_json_ku64(j, "length", end - first * g.stripe_data);
			rk_json_ku64(j, "stripes_checked", st.stripes);
			rk_json_ku64(j, "stripes_unchecked", st.unchecked);
			rk_json_ku64(j, "bytes_read", st.bytes_read);
			rk_json_ku64(j, "mismatches", mism);
			rk_json_ku64(j, "located", st.located);
			rk_json_ku64(j, "repaired", rep);
			rk_json_ku64(j, "made_consistent", st.consistent);
			rk_json_key(j, "regions");
			rk_json_arr_begin(j);
			for (size_t i = 0; i < R.nkept; i++)
				json_region(j, &R, &R.kept[i]);
			rk_json_arr_end(j);
			rk_json_kbool(j, "regions_truncated", R.dropped);
			rk_json_ku64(j, "unreadable_regions", unr);
			rk_json_ku64(j, "unrecoverable_regions", unrec);
			rk_json_ku64(j, "rewritten", st.rewritten);
			rk_json_key(j, "unreadable");
			rk_json_arr_begin(j);
			for (size_t i = 0; i < R.nukept; i++)
				json_unreadable(j, &R, &R.ukept[i]);
			rk_json_arr_end(j);
			rk_json_kbool(j, "unreadable_truncated", R.udropped);
			if (st.consistent)
				rk_json_kstr(j, "note", "some faults could not be located: redundancy was made consistent but "
				             "the data in those regions may be wrong");
			int complete = !se && !st.stopped && rc != EX_FAIL;
			rk_json_kbool(j, "complete", complete);
			rk_json_key(j, "resume_stripe");
			if (!complete && st.next < last)
				rk_json_u64(j, st.next);
			else
				rk_json_null(j);
			rk_json_kstr(j, "error", se ? errbuf : NULL);
			rk_json_ku64(j, "exit", (uint64_t)rc);
			rk_json_obj_end(j);
			rk_json_free(j);
		}
	}
	for (size_t i = 0; i < R.nkept; i++) {
		free(R.kept[i].fault);
		free(R.kept[i].locs);
		free(R.kept[i].why);
	}
	free(R.kept);
	for (size_t i = 0; i < R.nukept; i++)
		free(R.ukept[i].why);
	free(R.ukept);
	for (uint32_t r = 0; r < ai->nroles; r++)
		rk_dev_close(devs[r]);
	rk_fault_plan_free(tplan);
	free(devs);
	free(doff);
	free(sbs);
	free(ckpt_alloc);
	rk_discovery_free(d);
	if (fflush(stdout) || ferror(stdout))
		return EX_FAIL;
	return rc;
}
