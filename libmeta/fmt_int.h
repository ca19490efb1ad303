/* fmt_int.h: what the format decoders (fmt*.c) share.  Private to them and
 * to foreign.c. */
#ifndef RK_FMT_INT_H
#define RK_FMT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "rk_fmt.h"
#include "rk_sb.h"

/* The table's entries, one per file. */
extern const struct rk_meta_fmt rk_fmt_md1, rk_fmt_md090, rk_fmt_ddf, rk_fmt_imsm;

/* md's level names: "linear", "raid5", ... (BUF holds the numbered ones). */
const char *rk_fmt_md_level_name(int32_t level, char *buf, size_t len);
/* mdadm's UUID form: four 32-bit groups in hex, separated by colons (BUF >= 36). */
void rk_fmt_md_uuid_colons(const uint8_t u[16], char *buf);
/* Opens an md superblock's JSON object with the keys both md versions have. */
void rk_fmt_md_json_head(rk_json *j, const char *version, uint64_t at, int csum_ok, uint64_t csum,
                         const uint8_t *uuid);
/* Reads an on-disk structure of SIZE bytes with READ into a new object
 * (*OUT, freed with free()). */
rk_err rk_fmt_read_new(rk_dev *d, size_t size, rk_err (*read)(rk_dev *d, void *obj), void **out);
/* An md member found: what md1 and md0.90 report alike. */
void rk_fmt_md_found(struct rk_probe_result *r, const uint8_t *uuid);
/* Probes D through DECODE (an entry's decode); a member found is described
 * by DESCRIBE.  RK_E_NOSB and NOT_MINE (the format's "not one of ours")
 * mean nothing found. */
rk_err rk_fmt_probe_via(rk_dev *d, const char *path, struct rk_probe_result *r,
                        rk_err (*decode)(rk_dev *d, const char *path, void **out),
                        void (*describe)(const void *obj, struct rk_probe_result *r), rk_err not_mine);

/* ---- building views (foreign.c) ---- */

/* A fresh view in V (zeroed, nothing but the origin set): ORIGIN and its
 * words ("md 1.2", "DDF", "Intel IMSM"). */
void rk_view_init(struct rk_sb *v, uint32_t origin, const char *origin_name);
/* Views[*N] appended (grown by one, zero-initialised); NULL when out of
 * memory. */
struct rk_sb *rk_view_add(struct rk_sb **views, uint32_t *n);
/* A member identity for formats whose role tables name members by slot
 * (md's dev_number, a DDF or IMSM disk index) rather than by a UUID of
 * their own: 16 bytes that differ for every KEY of one array. */
void rk_view_slot_uuid(uint8_t out[16], uint32_t key);
/* The bytes V's current geometry presents (what md computes from the same
 * fields); RK_E_CORRUPT with a sentence when the engine refuses it. */
rk_err rk_view_volume(const struct rk_sb *v, uint64_t *vol);
/* Folds LEN bytes of an identity (a DDF GUID, an IMSM serial) into 16. */
void rk_view_fold_uuid(uint8_t out[16], const uint8_t *id, size_t len);

#endif
