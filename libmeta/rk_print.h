/* rk_print.h: the one place where metadata is printed, in words and as
 * JSON.  raid-examine and raid-assemble (and any other tool) print
 * superblocks, copies, members, arrays and foreign signatures through these,
 * so that every report reads the same.
 *
 * Text functions write to F, each line starting with IND (NULL = "").
 * JSON functions write one value (an object unless said otherwise) into J at
 * the current position; callers add the key first where needed.
 */
#ifndef RK_PRINT_H
#define RK_PRINT_H

#include <stdint.h>
#include <stdio.h>

#include "rk_discover.h"
#include "rk_json.h"
#include "rk_probe.h"
#include "rk_sb.h"

/* "2024-05-01T12:00:00Z" (UTC, ISO 8601) into BUF (>= 32 bytes); returns BUF. */
const char *rk_print_time(uint64_t epoch, char *buf, size_t len);
/* "64 MiB" style size in words (exact bytes are printed beside it). */
const char *rk_print_size(uint64_t bytes, char *buf, size_t len);

/* One decoded superblock: every field, the role table with states and
 * rebuild checkpoints. */
void rk_print_sb_text(FILE *f, const struct rk_sb *sb, const char *ind);
void rk_print_sb_json(rk_json *j, const struct rk_sb *sb);

/* Both copies of a member: offset, status (ok/absent/bad) with the reason,
 * the decoded copy when valid (WITH_SB), which one was chosen and why. */
void rk_print_copies_text(FILE *f, const struct rk_sb_read *rd, int with_sb, const char *ind);
/* Writes keys "copies": [...], "chosen": N|null, "choice": "..." into the
 * object J is in. */
void rk_print_copies_json_keys(rk_json *j, const struct rk_sb_read *rd);

/* A foreign signature found by rk_probe_path(). */
void rk_print_probe_text(FILE *f, const struct rk_probe_result *r, const char *ind);
void rk_print_probe_json(rk_json *j, const struct rk_probe_result *r);

/* One member line / object as the contract's raid-assemble report:
 * {"role": N|null, "path": "..."|null, "uuid": "...", "events": N,
 *  "state": "active|missing|stale|duplicate|foreign|unknown|spare",
 *  "reason": "..."} */
void rk_print_member_text(FILE *f, const struct rk_member *m, const char *ind);
void rk_print_member_json(rk_json *j, const struct rk_member *m);

/* Array AI of a discovery, as the contract's raid-assemble --json object
 * ({"uuid", "name", "level", "layout", "chunk", "members_total",
 * "volume_size", "state", "why", "members": [roles..., then every path of
 * D not used by this array: its own stale/duplicate/spare members and the
 * paths that belong to no array]}); text: a short report in words. */
void rk_print_array_text(FILE *f, const struct rk_discovery *d, uint32_t ai, const char *ind);
void rk_print_array_json(rk_json *j, const struct rk_discovery *d, uint32_t ai);

/* A whole discovery: {"arrays": [...], "unused": [members of no array]}. */
void rk_print_discovery_text(FILE *f, const struct rk_discovery *d);
void rk_print_discovery_json(rk_json *j, const struct rk_discovery *d);

#endif
