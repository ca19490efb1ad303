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
/* A size in words for people, exact bytes being printed beside it where
 * they matter: "512 B", "64.0 KiB", "58.0 MiB" (powers of 1024, one
 * decimal).  Returns BUF (>= 16 bytes). */
const char *rk_size_words(uint64_t bytes, char *buf, size_t len);

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

/* A reshape in progress (or being reverted) of the array whose freshest
 * superblock is SB, for the assembly report; nothing when there is none.
 * Text: one line, "IND" then "reshape in progress at X of Y volume bytes (to
 * RAID-L, N roles), finish with raid-resize --continue; ...".  JSON: key
 * "reshape": {"position", "volume_size", "new_level", "new_roles", "state"}
 * into the object J is in. */
void rk_print_reshape_text(FILE *f, const struct rk_sb *sb, const char *ind);
void rk_print_reshape_json_key(rk_json *j, const struct rk_sb *sb);

/* The raid-assemble report of a discovery, shared by every tool that shows
 * how members group into arrays.
 *
 * Array AI as the contract's raid-assemble --json object: {"uuid", "name",
 * "level", "layout", "chunk", "volume_size", "events", "unclean",
 * "members_total", "members_active", "state": "clean|degraded|failed",
 * "conflict", "why", "members": [...]}.  "members" lists every role (a role
 * with no usable member is "missing" with "path" null), then every path left
 * out under this array (rk_print_lists_left) with its class as "state", then
 * the members of the other arrays found as "foreign" (role null).  Each
 * member: {"role": N|null, "path", "uuid", "events", "state", "reason"}.
 * Text: the same in words ("array UUID "name"", geometry, "state ...", one
 * line a role, then "left out:" with a reason a path). */
void rk_print_array_text(FILE *f, const struct rk_discovery *d, uint32_t ai, const char *ind);
void rk_print_array_json(rk_json *j, const struct rk_discovery *d, uint32_t ai);

/* Whether the report of array A lists left-over path M: every path not used,
 * except those of another array found in D (listed there).  Tools take it
 * for their exit status, so that what they report and what they return agree. */
int rk_print_lists_left(const struct rk_discovery *d, uint32_t a, const struct rk_member *m);

/* A whole discovery.  Text: every array (a blank line between), or "no array
 * found" and every path with its class and reason.  JSON: keys "arrays":
 * [...] and "unused": [every path no array uses] into the object J is in
 * (_keys, for a tool that adds its own keys), or as one object. */
void rk_print_discovery_text(FILE *f, const struct rk_discovery *d);
void rk_print_discovery_json_keys(rk_json *j, const struct rk_discovery *d);
void rk_print_discovery_json(rk_json *j, const struct rk_discovery *d);

/* One path as discovery classed it.  Text: "IND<path>: <class>: <reason>".
 * JSON: the member object above with its own role and class, plus
 * "array_uuid" (when it has a superblock) and "foreign_type" (when known). */
void rk_print_member_text(FILE *f, const struct rk_member *m, const char *ind);
void rk_print_member_json(rk_json *j, const struct rk_member *m);

#endif
