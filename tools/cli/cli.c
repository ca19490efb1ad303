/* cli.c: shared tool plumbing. */
#include "cli.h"
#include "rk_fmt.h"
#include "rk_create.h"
#include "rk_sb.h"
#include "rk_util.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <uuid/uuid.h>

static const char *prog = "raidkit";

void cli_init(const char *progname)
{
	const char *s = strrchr(progname, '/');
	prog = s ? s + 1 : progname;
}

const char *cli_prog(void) { return prog; }

/* "TOOL: message" on stderr, without the end of line; the message in words
 * form (rk_esc), as it may quote a path or a member's name or label. */
static char last_msg[1024];   /* the last message said, for --audit */

static void vmsg(const char *fmt, va_list ap)
{
	va_list aq;
	va_copy(aq, ap);
	vsnprintf(last_msg, sizeof last_msg, fmt, aq);
	va_end(aq);
	fprintf(stderr, "%s: ", prog);
	rk_esc_vfprintf(stderr, fmt, ap);
}

const char *cli_last_error(void) { return last_msg; }

void cli_err(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cli_audit_note(last_msg);
}

void cli_err_rk(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	size_t l = strlen(last_msg);
	snprintf(last_msg + l, sizeof last_msg - l, ": %s", rk_errmsg());
	rk_esc_fprintf(stderr, ": %s\n", rk_errmsg());
	cli_audit_note(last_msg);
}

int cli_usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help'.\n", prog);
	cli_audit_note(last_msg);
	return EX_USAGE;
}

int cli_bad_option(int c, char *const *argv)
{
	const char *opt = optind > 0 ? argv[optind - 1] : "?";
	if (c == ':')
		return cli_usage_error("option '%s' needs a value", opt);
	if (optopt > 0 && optopt < 256)
		return cli_usage_error("unknown option '-%c'", optopt);
	return cli_usage_error("unknown option '%s'", opt);
}

void cli_version(void)
{
	printf("%s (raidkit) %s\n", prog, RK_VERSION);
}

int cli_exit_for(rk_err e)
{
	switch (e) {
	case RK_OK: return EX_DONE;
	case RK_E_INVAL: return EX_USAGE;
	default: return EX_FAIL;
	}
}

/* mdadm's form of a UUID: 32 hex digits in groups split by ':' (or any
 * grouping of hex digits with ':', '-', '.' or ' ').  0 on success. */
static int parse_md_uuid(const char *s, uint8_t out[16])
{
	int n = 0;
	for (; *s; s++) {
		if (*s == ':' || *s == '-' || *s == '.' || *s == ' ')
			continue;
		int v = *s >= '0' && *s <= '9' ? *s - '0' : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10
		      : *s >= 'A' && *s <= 'F' ? *s - 'A' + 10 : -1;
		if (v < 0 || n >= 32)
			return -1;
		out[n / 2] = (uint8_t)(n % 2 ? (out[n / 2] | v) : v << 4);
		n++;
	}
	return n == 32 ? 0 : -1;
}

/* --disk-serial: appended to what earlier ones gave. */
static int add_disk_serials(const char *arg)
{
	if (!strchr(arg, '='))
		return cli_usage_error("--disk-serial: '%s' is not FILE=SERIAL[,FILE=SERIAL...]", arg);
	const char *have = rk_fmt_disk_serials();
	size_t n = (have ? strlen(have) + 1 : 0) + strlen(arg) + 1;
	char *all = malloc(n);
	if (!all)
		return cli_usage_error("--disk-serial: out of memory");
	snprintf(all, n, "%s%s%s", have ? have : "", have ? "," : "", arg);
	rk_err e = rk_fmt_set_disk_serials(all);
	free(all);
	return e ? cli_usage_error("--disk-serial: %s", rk_errmsg()) : CLI_GO_ON;
}

/* One shared option into COMMON: CLI_GO_ON, or the exit status. */
static int common_option(const struct cli_command *cmd, int c, const char *arg)
{
	struct cli_common *common = cmd->common;
	switch (c) {
	case 'h':
	case CLI_OPT_HELP:
		cmd->usage(stdout);
		return EX_DONE;
	case 'V':
	case CLI_OPT_VERSION:
		cli_version();
		return EX_DONE;
	case CLI_OPT_JSON:
		common->json = 1;
		return CLI_GO_ON;
	case CLI_OPT_PROGRESS:
		common->progress = 1;
		return CLI_GO_ON;
	case CLI_OPT_UUID:
		if (uuid_parse(arg, common->uuid) && parse_md_uuid(arg, common->uuid))
			return cli_usage_error("--uuid: '%s' is not a UUID", arg);
		common->have_uuid = 1;
		return CLI_GO_ON;
	case CLI_OPT_DISK_SERIAL:
		return add_disk_serials(arg);
	case CLI_OPT_HASH:
		if (!rk_hash_alg_ok(arg))
			return cli_usage_error("--hash: '%s' is not a digest (%s)", arg, rk_hash_alg_names());
		common->hash = arg;
		return CLI_GO_ON;
	case CLI_OPT_AUDIT:
		if (!*arg)
			return cli_usage_error("--audit: empty file name");
		common->audit = arg;
		return CLI_GO_ON;
	default:
		return EX_USAGE;   /* not a shared option: cannot happen */
	}
}

/* Whether CMD has the long option with CODE. */
static int cmd_takes(const struct cli_command *cmd, int code)
{
	for (const struct option *o = cmd->options; o && o->name; o++)
		if (o->val == code)
			return 1;
	return 0;
}

int cli_parse_options(int argc, char **argv, const struct cli_command *cmd)
{
	/* A leading ':': a missing value comes back as ':'.  No '+': getopt_long
	 * permutes, so options may come before, between or after the MEMBERs
	 * and "--" ends them, in every tool alike. */
	char letters[64];
	snprintf(letters, sizeof letters, ":%s", cmd->letters ? cmd->letters : "");
	opterr = 0;
	cli_audit_keep_argv(argc, argv);   /* before getopt_long permutes it */
	/* the environment's disk serials first; --disk-serial adds to them */
	const char *env = getenv("RAIDKIT_DISK_SERIAL");
	if (env && *env && cmd_takes(cmd, CLI_OPT_DISK_SERIAL) && add_disk_serials(env) != CLI_GO_ON)
		return EX_USAGE;
	int c;
	while ((c = getopt_long(argc, argv, letters, cmd->options, NULL)) != -1) {
		int rc;
		if (c == 'h' || c == 'V' || c >= CLI_OPT_HELP)
			rc = common_option(cmd, c, optarg);
		else if (c == ':' || c == '?')
			rc = cli_bad_option(c, argv);
		else
			rc = cmd->on_option(cmd->ctx, c, optarg);
		if (rc != CLI_GO_ON)
			return rc;
	}
	/* --audit and --hash start here, over the MEMBERs, in every tool alike */
	int rc = cmd->common ? cli_audit_begin(cmd->common, argv + optind, argc - optind) : CLI_GO_ON;
	if (rc == CLI_GO_ON && cmd->common && cli_hash_begin(cmd->common->hash, argv + optind, argc - optind))
		rc = cli_audit_end(EX_FAIL);
	return rc;
}

int cli_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int cli_parse_offset_opt(const char *opt, const char *arg, uint64_t *out)
{
	if (cli_parse_size(arg, out))
		return cli_usage_error("%s: '%s' is not an offset (bytes, or with K, M, G, T)", opt, arg);
	return CLI_GO_ON;
}

int cli_parse_size(const char *s, uint64_t *out)
{
	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	unsigned shift = 0;
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	case 'p': case 'P': shift = 50; end++; break;
	default: return -1;
	}
	if (shift && (!strcmp(end, "iB") || !strcmp(end, "B")))
		end += strlen(end);
	if (*end)
		return -1;
	if (shift && v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

/* Seconds between progress lines (and before the first: a rate over a few
 * microseconds means nothing); tests shorten it (cli_progress_set_interval). */
static double progress_interval = 0.5;

void cli_progress_set_interval(double seconds)
{
	if (seconds >= 0 && seconds <= 60)
		progress_interval = seconds;
}

struct cli_progress {
	const char *what;
	uint64_t total;
	struct timespec t0, last;
	int on;
};

static double since(const struct timespec *a)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - a->tv_sec) + (double)(now.tv_nsec - a->tv_nsec) / 1e9;
}

struct cli_progress *cli_progress_start(const char *what, uint64_t total, int force, int json)
{
	struct cli_progress *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->what = what;
	p->total = total;
	p->on = force || (!json && isatty(STDERR_FILENO));
	clock_gettime(CLOCK_MONOTONIC, &p->t0);
	p->last = p->t0;
	p->last.tv_sec -= 10;
	return p;
}

void cli_progress_update(struct cli_progress *p, uint64_t done)
{
	if (!p || !p->on || since(&p->last) < progress_interval || since(&p->t0) < progress_interval)
		return;
	clock_gettime(CLOCK_MONOTONIC, &p->last);
	double el = since(&p->t0);
	double rate = el > 0 ? (double)done / el : 0;
	double eta = rate > 0 && p->total > done ? (double)(p->total - done) / rate : 0;
	fprintf(stderr, "\r%s: %5.1f%%  %8.1f MiB/s  ETA %4.0fs ", p->what,
	        p->total ? 100.0 * (double)done / (double)p->total : 100.0,
	        rate / 1048576.0, eta);
	fflush(stderr);
}

void cli_progress_end(struct cli_progress *p)
{
	if (!p)
		return;
	if (p->on) {
		double el = since(&p->t0);
		fprintf(stderr, "\r%s: done, %" PRIu64 " bytes in %.1fs%20s\n", p->what, p->total, el, "");
	}
	free(p);
}

int cli_parse_chunk(const char *s, uint64_t *out)
{
	uint64_t v;
	if (cli_parse_size(s, &v) || v < RK_CHUNK_MIN || v > RK_CHUNK_MAX || (v & (v - 1)))
		return -1;
	*out = v;
	return 0;
}

void cli_json_u64s(rk_json *j, const struct cli_json_u64 *keys, size_t n)
{
	for (size_t i = 0; i < n; i++)
		rk_json_ku64(j, keys[i].key, keys[i].value);
}
