/* sb_samples.h: superblocks the sb suites (test_sb_*.c) start from; the
 * random ones come from rk_test.h's shared stream. */
#ifndef SB_SAMPLES_H
#define SB_SAMPLES_H

#include <stdint.h>

#include "rk_sb.h"

#define MiB (1024ull * 1024ull)
#define GiB (1024ull * MiB)

/* The device size of sb_sample_base()'s member. */
#define SB_SAMPLE_BASE_DEV (64 * MiB + 12345)

/* A random, never nil, UUID. */
void sb_sample_uuid(uint8_t *u);
/* A zeroed superblock (free() it). */
struct rk_sb *sb_sample_new(void);
/* Recomputes the CRC of an encoded copy the way spec/format.md states it:
 * zlib crc32(0, ...) over sb_bytes with bytes 16..19 read as zero. */
void sb_sample_fix_crc(uint8_t *buf);
/* A valid RAID-5 member: 4 roles + 1 spare, this member role 1, 42 events
 * (free() it). */
struct rk_sb *sb_sample_base(void);
/* Overwrites SB with a random valid superblock: every level, role count,
 * placement and optional block. */
void sb_sample_random(struct rk_sb *sb);

#endif
