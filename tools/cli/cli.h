/* cli.h: what every raidkit tool shares: exit codes of the contract, error
 * and warning printing as "TOOL: message", size parsing, progress. */
#ifndef RK_CLI_H
#define RK_CLI_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include "rk_dev.h"
#include "rk_err.h"
#include "rk_array.h"
#include "rk_json.h"

/* Exit status (../shared/CONTRACT.md). */
#define EX_DONE     0   /* done; nothing wrong found */
#define EX_REPORT   1   /* done, with something to report (degraded, stale, mismatches) */
#define EX_FAIL     2   /* could not do it */
#define EX_USAGE    64  /* bad usage or invalid argument */

void cli_init(const char *progname);   /* sets the name used in messages */
const char *cli_prog(void);
/* "TOOL: message\n" on stderr, the message in words form (rk_esc: a quoted
 * path, name or label never puts raw bytes on the terminal). */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "TOOL: message: <rk_errmsg()>\n" on stderr. */
void cli_err_rk(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints the error and "Try 'TOOL --help'." and returns EX_USAGE. */
int  cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* For getopt_long() run with opterr = 0 and a ':' leading the option
 * letters: C is what it returned (':' for a missing value, '?' for an unknown
 * option).  Names the option ("option '--at' needs a value", "unknown
 * option '-q'") and returns EX_USAGE. */
int  cli_bad_option(int c, char *const *argv);
void cli_version(void);                 /* "TOOL (raidkit) X.Y.Z" on stdout */

/* The exit status for a library error: RK_OK done, RK_E_INVAL bad usage
 * (an invalid argument), anything else could not do it. */
int  cli_exit_for(rk_err e);

/* ---- option handling every tool shares ---- */

/* Option codes cli_parse_options() handles itself; a tool's own codes are
 * below CLI_OPT_HELP (256 and up, as getopt_long leaves 0-255 to letters). */
enum cli_option_code {
	CLI_OPT_HELP = 0x1000,   /* --help (and -h where the letters have it): usage on stdout, exit 0 */
	CLI_OPT_VERSION,         /* --version (and -V): cli_version(), exit 0 */
	CLI_OPT_JSON,            /* --json: common.json */
	CLI_OPT_PROGRESS,        /* --progress: common.progress */
	CLI_OPT_UUID,            /* --uuid UUID: common.uuid, have_uuid (mdadm's colon form too) */
	CLI_OPT_DISK_SERIAL,     /* --disk-serial FILE=SERIAL,...: rk_fmt_set_disk_serials (repeatable) */
	CLI_OPT_HASH,            /* --hash ALG: common.hash (sha256, sha1, md5; else a usage error) */
	CLI_OPT_AUDIT,           /* --audit FILE: common.audit */
};
#define CLI_OPTION_HELP     { "help", no_argument, NULL, CLI_OPT_HELP }
#define CLI_OPTION_VERSION  { "version", no_argument, NULL, CLI_OPT_VERSION }
#define CLI_OPTION_JSON     { "json", no_argument, NULL, CLI_OPT_JSON }
#define CLI_OPTION_PROGRESS { "progress", no_argument, NULL, CLI_OPT_PROGRESS }
#define CLI_OPTION_UUID     { "uuid", required_argument, NULL, CLI_OPT_UUID }
#define CLI_OPTION_DISK_SERIAL { "disk-serial", required_argument, NULL, CLI_OPT_DISK_SERIAL }
#define CLI_OPTION_HASH     { "hash", required_argument, NULL, CLI_OPT_HASH }
#define CLI_OPTION_AUDIT    { "audit", required_argument, NULL, CLI_OPT_AUDIT }
#define CLI_OPTION_END      { NULL, 0, NULL, 0 }

/* What the shared options set. */
struct cli_common {
	int json;          /* --json: one JSON document on stdout */
	int progress;      /* --progress: progress even when stderr is no terminal */
	int have_uuid;     /* --uuid given */
	uint8_t uuid[16];
	const char *hash;  /* --hash ALG (checked), or NULL */
	const char *audit; /* --audit FILE, or NULL */
};

/* A tool's own option: OPT is its code (or letter), ARG its value (NULL
 * for a flag).  Returns CLI_GO_ON, or the exit status to leave with
 * (usually cli_usage_error()'s EX_USAGE). */
#define CLI_GO_ON (-1)
typedef int cli_option_fn(void *ctx, int opt, char *arg);

struct cli_command {
	const char *letters;            /* short options for getopt_long ("" none);
	                                 * 'h' and 'V' mean --help and --version */
	const struct option *options;   /* long options, ending with CLI_OPTION_END */
	void (*usage)(FILE *f);         /* the --help text */
	cli_option_fn *on_option;       /* the tool's own options */
	void *ctx;                      /* passed to on_option */
	struct cli_common *common;      /* filled by the shared options (may be
	                                 * NULL when the tool has none of them) */
};

/* Reads the options of ARGV (getopt_long, silent, missing values caught),
 * the one option parser of every tool: options may come before, between
 * or after the MEMBERs (GNU order: getopt_long permutes ARGV so that the
 * operands end up last) and "--" ends the options.  The shared ones are
 * handled here; a bad option or a missing value is named by
 * cli_bad_option().  Returns CLI_GO_ON with optind at the first MEMBER
 * (argv[optind..argc-1] are the MEMBERs, in the order given), or the exit
 * status main() returns: EX_DONE after --help or --version, EX_USAGE (or
 * what on_option returned) otherwise. */
int  cli_parse_options(int argc, char **argv, const struct cli_command *cmd);

/* Parses bytes with optional K, M, G, T suffix (powers of 1024; "KiB" and
 * "k" accepted).  Rejects negatives, junk and overflow.  0 on success. */
int  cli_parse_size(const char *s, uint64_t *out);
/* Parses ARG, the value of option OPT (e.g. "--at"), as an offset (a size,
 * 0 allowed) into *OUT.  CLI_GO_ON on success, else a usage error naming
 * the option (cli_usage_error's status), for an on_option callback. */
int  cli_parse_offset_opt(const char *opt, const char *arg, uint64_t *out);
/* Parses a stripe unit (chunk): a size that is a power of two from 4K to
 * 16M (RK_CHUNK_MIN..MAX).  0 on success. */
int  cli_parse_chunk(const char *s, uint64_t *out);
/* Parses a decimal unsigned integer in [min, max]. */
int  cli_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* Number keys of a JSON report, written in the order given: a table reads
 * better than a run of calls and keeps the reports alike. */
struct cli_json_u64 {
	const char *key;
	uint64_t value;
};
void cli_json_u64s(rk_json *j, const struct cli_json_u64 *keys, size_t n);
#define CLI_JSON_U64S(j, ...) \
	do { \
		const struct cli_json_u64 cli_keys_[] = { __VA_ARGS__ }; \
		cli_json_u64s((j), cli_keys_, sizeof cli_keys_ / sizeof cli_keys_[0]); \
	} while (0)

/* Progress on stderr (rate and ETA): enabled on a terminal or when forced;
 * never when json output is on unless forced. */
struct cli_progress;
struct cli_progress *cli_progress_start(const char *what, uint64_t total, int force, int json);
void cli_progress_update(struct cli_progress *p, uint64_t done);
void cli_progress_end(struct cli_progress *p);
/* Seconds between lines (default 0.5; tests only: RAIDKIT_TEST_PROGRESS_INTERVAL). */
void cli_progress_set_interval(double seconds);

/* ---- volume copies (cli_copy.c) ---- */

/* Copies LEN volume bytes of ARR from byte OFF to FD at its position, read
 * ahead by a stream while batches are written: zero runs become holes
 * (lseek) when SPARSE, and FD is then truncated to its position; with
 * HASHED the bytes feed --hash's export digest; PG (may be NULL) shows
 * progress.  *DONE the bytes copied.  0, or -1 with the reason in ERR (CAP
 * bytes; not said): the volume bytes that could not be read, or "write
 * failed: ..." (errno words). */
int cli_copy_volume(rk_array *arr, uint64_t off, uint64_t len, int fd, int sparse, int hashed,
                    struct cli_progress *pg, uint64_t *done, char *err, size_t cap);
/* Creates an empty file named TAG.XXXXXX in $TMPDIR (else /tmp) into PATH
 * (CAP bytes): its descriptor (close-on-exec), or -1 (errno). */
int cli_tmpfile(char *path, size_t cap, const char *tag);

/* ---- --hash (cli_hash.c) ----
 * A read-only tool: cli_parse_options calls cli_hash_begin(common.hash,
 * MEMBERs) (and cli_audit_begin) when the options are read;
 * cli_hash_wrap as the rk_dev_wrap_fn of every library call that opens the
 * members (rk_array_open_wrapped, rk_scrub_array_open_members, ...), so the
 * digests come from the command's own reads; cli_hash_finish() before those
 * members are closed (while the wrappers are live: their catch-up reads
 * only what the command did not); then cli_hash_print_text (after the
 * report) or cli_hash_json (a "hash" key of the report).  Members never
 * wrapped (a report reads only metadata) are read in full by
 * cli_hash_finish.  Everything is a no-op when --hash was not given.
 * raid-recover --detect: cli_hash_wrap(NULL, i, &dev) on each IMAGE it
 * opens (or as the wrap function of the library call that opens them),
 * cli_hash_finish() before its report, cli_hash_json(j) in the JSON
 * document or cli_hash_print_text(stdout) after the words, and
 * cli_audit_decided(fn, geometry) with the geometry found. */
int  cli_hash_begin(const char *alg, char *const *paths, int n);   /* 0, -1 out of memory (said) */
int  cli_hash_on(void);
rk_err cli_hash_wrap(void *ctx, uint32_t idx, rk_dev **dev);        /* CTX unused */
int  cli_hash_finish(void);      /* 0, or -1: a member's digest could not be made (said, named) */
/* The export's digest over the bytes written, in order. */
int  cli_hash_export_start(const char *path);   /* PATH as the report names it ("-": stdout) */
void cli_hash_export_update(const void *buf, size_t n);
int  cli_hash_export_end(void);
void cli_hash_print_text(FILE *f);  /* "ALG HEX  PATH" a member (as sha256sum), the export, a catch-up note */
void cli_hash_json(rk_json *j);     /* key "hash": {"alg", "members": [...], "export": {...}|null} or null */
/* A member's finished digest (NULL when none), and the export's. */
const struct rk_hash_result *cli_hash_of(const char *path);
const struct rk_hash_result *cli_hash_export(void);

/* ---- --audit FILE (cli_audit.c) ----
 * One JSON line appended per run (spec/audit.md).  cli_parse_options keeps
 * the command line and calls cli_audit_begin(&common, MEMBERs) after the
 * options (usage error when FILE is a member or cannot be opened); a tool
 * calls cli_audit_decided / cli_audit_written as it learns what it decided
 * and wrote, and returns cli_audit_end(rc) from main() on every path after
 * cli_parse_options returned CLI_GO_ON: it writes the line (members' size and mtime before and after,
 * their digests, the last error message said) and returns RC (EX_FAIL
 * when the line could not be written).  No-ops without --audit. */
int  cli_audit_begin(const struct cli_common *c, char *const *paths, int n);  /* CLI_GO_ON or EX_USAGE */
/* "decided": FN(J, CTX) writes one JSON value now (kept as text). */
void cli_audit_decided(void (*fn)(rk_json *j, const void *ctx), const void *ctx);
/* One entry of "written": KIND ("export", "write", ...), PATH (where),
 * the volume OFFSET, BYTES, the digest of the bytes or NULL. */
void cli_audit_written(const char *kind, const char *path, uint64_t offset, uint64_t bytes,
                       const struct rk_hash_result *h);
int  cli_audit_end(int rc);
/* For cli.c: the command line as given (copied), and the last message
 * cli_err / cli_err_rk / cli_usage_error said ("" none). */
void cli_audit_keep_argv(int argc, char *const *argv);
void cli_audit_note(const char *msg);   /* kept for the line's "messages" */
const char *cli_last_error(void);

#endif
