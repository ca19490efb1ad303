/* cli.h: what every raidkit tool shares: exit codes of the contract, error
 * and warning printing as "TOOL: message", size parsing, progress. */
#ifndef RK_CLI_H
#define RK_CLI_H

#include <stdint.h>
#include <stdio.h>
#include "rk_err.h"

/* Exit status (../shared/CONTRACT.md). */
#define EX_DONE     0   /* done; nothing wrong found */
#define EX_REPORT   1   /* done, with something to report (degraded, stale, mismatches) */
#define EX_FAIL     2   /* could not do it */
#define EX_USAGE    64  /* bad usage or invalid argument */

void cli_init(const char *progname);   /* sets the name used in messages */
const char *cli_prog(void);
/* "TOOL: message\n" on stderr. */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "TOOL: message: <rk_errmsg()>\n" on stderr. */
void cli_err_rk(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints the error and "Try 'TOOL --help'." and returns EX_USAGE. */
int  cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* For getopt_long() run with opterr = 0 and a ':' leading the option
 * letters (after any '+'): C is what it returned (':' for a missing value, '?' for an unknown
 * option).  Names the option ("option '--at' needs a value", "unknown
 * option '-q'") and returns EX_USAGE. */
int  cli_bad_option(int c, char *const *argv);
void cli_version(void);                 /* "TOOL (raidkit) X.Y.Z" on stdout */

/* Parses bytes with optional K, M, G, T suffix (powers of 1024; "KiB" and
 * "k" accepted).  Rejects negatives, junk and overflow.  0 on success. */
int  cli_parse_size(const char *s, uint64_t *out);
/* Parses a decimal unsigned integer in [min, max]. */
int  cli_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* Progress on stderr (rate and ETA): enabled on a terminal or when forced;
 * never when json output is on unless forced. */
struct cli_progress;
struct cli_progress *cli_progress_start(const char *what, uint64_t total, int force, int json);
void cli_progress_update(struct cli_progress *p, uint64_t done);
void cli_progress_end(struct cli_progress *p);

#endif
