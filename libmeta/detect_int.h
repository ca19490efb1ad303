/* detect_int.h: what the detection steps share (libmeta/detect_*.c).
 * Not installed; spec/detect.md describes the method. */
#ifndef DETECT_INT_H
#define DETECT_INT_H

#include <stdint.h>
#include "rk_dev.h"
#include "rk_detect.h"
#include "rk_geom.h"

#define DT_BLK 4096u                 /* the granule rows are checked in */
#define DT_HEAD (64ull << 20)        /* bytes scanned for anchors at the start of each image */
#define DT_WIN (1ull << 20)          /* a spread window of the scan */
#define DT_NSPREAD 48u               /* spread windows per image */
#define DT_MAX_ROLES 32u             /* the largest member count searched */
#define DT_NONE UINT64_MAX
#define DT_MIXED 512u                /* mixed rows kept (detect_rotation.c) */

/* Anchor kinds: metadata that records where it sits. */
enum dt_kind {
	DT_EXT_SB = 1,      /* ext2/3/4 superblock, raw = s_block_group_nr */
	DT_GPT,             /* GPT header, raw = my_lba */
	DT_NTFS_BOOT,       /* NTFS boot sector (primary or the backup at the end) */
	DT_NTFS_MFT,        /* NTFS FILE record, raw = record number */
	DT_FAT_BOOT,        /* FAT12/16/32 boot sector (raw = backup sector, 0 none) */
	DT_EXFAT_BOOT,      /* exFAT boot sector (main at 0, backup at sector 12) */
	DT_XFS_AGF,         /* XFS AGF/AGI, raw = seqno (AG number); sub 1 AGF 2 AGI */
	DT_XFS_AGI,
	DT_BTRFS_SB,        /* btrfs superblock, raw = bytenr */
	DT_MBR,             /* MBR partition table (volume byte 0) */
	DT_XFS_INO,         /* XFS v5 inode, raw = di_ino (detect_self.c) */
	DT_XFS_BLK,         /* XFS v5 metadata block, raw = its blkno (512-byte units) */
	DT_FAT_DIR,         /* FAT directory's "." entry, raw = its own cluster */
	DT_FAT_TAB,         /* FAT sector of sequential chains, raw = first entry (bit 63: FAT32) */
	DT_BTRFS_NODE,      /* btrfs tree block, raw = its logical bytenr, tag = fsid (detect_btrfs.c) */
	DT_EXT_INO,         /* ext4 inode (metadata_csum), raw = its checksum less what the inode gives
	                     * (bit 32: a 128-byte inode, 16 bits of it),
	                     * tag = its number once resolved (detect_ext.c) */
	DT_EXT_DIR,         /* ext4 directory's first block ("." then ".."), raw = the inode "." names;
	                     * resolved through that inode's extent (detect_ext.c) */
	DT_EXT_TAIL,        /* ext4 file's last block, raw = its block number, tag = the inode (detect_lastblock.c) */
	DT_EXT_RMAP,        /* ext4 resize inode's map of the reserved GDT blocks, raw = its block number */
	DT_EXFAT_TAIL,      /* exFAT contiguous file's last cluster, raw = its number (detect_lastblock.c) */
	DT_NTFS_TAIL,       /* NTFS file's last cluster, raw = its LCN, tag = its MFT record (detect_lastblock.c) */
	DT_XFS_TAIL,        /* XFS file's last block, raw = its block from the file system's start (detect_lastblock.c) */
	DT_FAT_TAIL,        /* FAT16/32 file's last cluster if contiguous, raw = its number (detect_lastblock.c) */
	DT_BTRFS_TAIL,      /* btrfs file's last block, raw = its logical bytenr, tag = fsid (detect_lastblock.c) */
};

/* A hit of the scan, resolved to volume offsets (voff2: another place the
 * same bytes may be, e.g. a backup copy; DT_NONE when there is none). */
struct dt_anchor {
	uint8_t  kind;
	uint32_t img;
	uint64_t ioff;
	uint64_t raw;
	uint64_t voff, voff2;
	uint32_t tag;        /* detect_self.c: the file system's id the hit carries (0 none) */
};

/* What detect_self.c learns from the superblocks it sees (the first
 * plausible one of each kind). */
struct dt_self {
	int      xfs; uint32_t xfs_bs, xfs_agblocks, xfs_agcount, xfs_isize, xfs_tag; uint8_t xfs_agblklog, xfs_inopblog;
	uint64_t xfs_bytes;
	int      fat; uint32_t fat_bps, fat_clus, fat_res, fat_nfats, fat_sz, fat_32; uint64_t fat_data, fat_nclus;
	uint32_t nper[DT_MAX_ROLES + 8][4];   /* anchors added per image and kind (capped) */
};

/* What detect_btrfs.c learns: single-device btrfs file systems (by the
 * first 4 bytes of the fsid their tree blocks carry) and their chunks'
 * logical -> volume byte mapping (system and metadata chunks, profile
 * single or DUP: phys[1] the second copy or DT_NONE). */
#define DT_BT_FS 4u
#define DT_BT_MAPS 64u
struct dt_bfs { uint32_t tag, nodesize, sect; uint64_t total_bytes; };
struct dt_bmap { uint32_t tag; uint64_t logical, length, phys[2], gen; };
struct dt_btrfs {
	struct dt_bfs fs[DT_BT_FS];
	uint32_t nfs;
	struct dt_bmap map[DT_BT_MAPS];
	uint32_t nmap;
	struct dt_bmap dmap[DT_BT_MAPS];      /* data chunks, profile single (phys[1] DT_NONE) */
	uint32_t ndmap;
	uint32_t nper[DT_MAX_ROLES + 8];      /* anchors added per image (capped) */
};

/* What detect_ext.c learns: group-0 superblocks seen (where the group
 * descriptors follow), then from the first whose descriptors' checksums
 * hold: the inode tables' volume bytes, inodes per group and in all, the
 * checksum's seed term A and the inverse of its linear part in the inode
 * number (32 columns). */
#define DT_EXT_SBS 32u   /* a decoy's superblocks and parity copies may come first (seed 2837: 4 kept, the member's was not) */
#define DT_EXT_GROUPS 64u
struct dt_ext_sb { uint32_t img; uint64_t ioff; int whole; };   /* whole: starts a partition of its image's MBR */
struct dt_ext {
	struct dt_ext_sb sb[DT_EXT_SBS];
	uint32_t nsb;
	int      learnt;
	uint32_t ipg, icount, ngroups, a, ginv[32];
	uint32_t isz;                         /* its inode size: 256, or 128 (16-bit checksums) */
	uint32_t img;                         /* the image its superblock was learnt from */
	uint32_t seed;                        /* its checksum seed */
	uint32_t jino;                        /* its journal's inode, and the journal's volume bytes (0 0: none known) */
	uint64_t jbeg, jend;
	uint16_t basis[16];                   /* 128: G's low 16 bits as an XOR basis by pivot bit, */
	uint32_t combo[16];                   /* the inode-number bits each basis vector is made of */
	uint32_t bs;                          /* the learnt file system's block size and count */
	uint64_t blocks;
	uint64_t itable[DT_EXT_GROUPS];
	uint32_t fdb, rgdt, gdtb;             /* first data block, reserved GDT blocks, GDT blocks */
	int      resize;                      /* the superblock has resize_inode */
	int      scattered;                   /* its image holds all of it, not in place (a far RAID-10's) */
	uint32_t nper[DT_MAX_ROLES + 8];      /* anchors added per image (capped) */
	uint32_t ndir[DT_MAX_ROLES + 8];      /* directory anchors added per image (capped) */
};

/* exFAT's contiguous files the scan met (their entry sets' checksums
 * held), and the cluster heap of the boot sector learnt (dt_exfat_learn). */
struct dt_exfile { uint32_t first; uint64_t len; };
#define DT_EXFILES 2048u
struct dt_exf {
	struct dt_exfile *files;
	uint32_t nfiles;
	int      learnt;
	uint64_t heap, csize, nclus;   /* bytes from the file system's start; bytes; clusters */
};

/* detect_ntfs.c: the runs of an NTFS attribute (lcn UINT64_MAX: sparse),
 * with its flags, size and valid (initialized) size. */
#define DT_RUNS 64u
struct dt_runs {
	uint64_t vcn[DT_RUNS], len[DT_RUNS], lcn[DT_RUNS];
	uint32_t n, flags;
	uint64_t size, valid;
};
/* File-system kinds told apart by the partition they live in, and a
 * partition of the volume's table (bytes; cls: what its type allows). */
enum { DT_FSK_EXT, DT_FSK_NTFS, DT_FSK_FAT, DT_FSK_EXFAT, DT_FSK_XFS, DT_FSK_BTRFS, DT_FSK_N };
#define DT_PARTS 16u
struct dt_part { uint64_t start, size; uint8_t cls; };

/* File-system parameters learnt from the scan (what resolving anchors and
 * probing need). */
struct dt_fs {
	int      ext;  uint32_t ext_bs, ext_bpg, ext_fdb; uint64_t ext_blocks; uint16_t ext_desc; uint32_t ext_feat_incompat, ext_feat_ro;
	int      ntfs; uint64_t ntfs_clus, ntfs_mft_lcn, ntfs_mirr_lcn, ntfs_sectors; uint32_t ntfs_rec, ntfs_bps;
	uint64_t ntfs_mft_recs;          /* records the $MFT's $DATA holds (0 unknown; dt_ntfs_learn_mft), */
	struct dt_runs ntfs_mft_runs;    /* and its runs */
	int      xfs;  uint32_t xfs_bs, xfs_agblocks, xfs_agcount; uint16_t xfs_sect;
	int      fat;  uint32_t fat_bps, fat_res, fat_nfats, fat_sz;
	int      exfat; uint32_t exfat_bps;
	int      btrfs;
	int      gpt;  uint64_t gpt_alt;
	/* what places a file system in a partition (detect_part.c): sizes in
	 * their own units, the partition start it records (sectors, 0 none) */
	uint64_t ntfs_hidden, fat_total, fat_hidden, exfat_len, exfat_poff, xfs_dblocks, btrfs_total;
	uint32_t nparts;
	struct dt_part part[DT_PARTS];   /* the volume's partition table, as first seen */
	uint64_t base[DT_FSK_N];         /* each kind's start in the volume: its anchors are relative to it */
	int      base_fixed;             /* the bases were read through a hypothesis: kept */
	uint8_t  id[DT_FSK_N][16];       /* the identity (UUID, serial) of the one whose parameters were learnt */
	uint8_t  idlen[DT_FSK_N];
	uint32_t part_img;               /* where the table was seen: the image and its volume byte 0 there */
	uint64_t part_at;
	uint32_t at_img;                 /* the scan's current place (dt_scan_buf sets it before decoding), */
	uint64_t at_off, at_size;        /* and its image's size */
	int      ext_rank;               /* how the learnt ext superblock ranks (dt_fs_ext) */
	uint32_t ext_tag;                /* its file system's id: the first word of s_uuid */
	int      mbr_seen;               /* the last MBR seen: its image, byte and partitions' starts */
	uint32_t mbr_img;
	uint64_t mbr_at, mbr_start[4];
};

struct dt_img {
	rk_dev  *dev;
	const char *path;
	uint64_t size;
	uint64_t nread;          /* bytes read so far (the budget) */
	uint64_t md_floor;       /* past md's superblock (magic, major 1) at byte 0 or 4 KiB: a data start
	                          * below is none (0: none seen) */
};

/* A cached 4 KiB block of an image. */
struct dt_cblk { uint32_t img; uint64_t off; uint8_t *data; int ok; };

struct dt_ctx {
	struct dt_img *img;
	uint32_t nimg;
	struct rk_detect_hints hints;
	struct dt_anchor *anc;
	uint32_t nanc, canc;
	uint32_t *anc_copy;      /* per anchor, the next of its copies (same kind, claim and id; itself
	                          * when none): a ring, made by dt_search */
	uint32_t nanc_copy;      /* the anchors linked (those pushed later have no ring) */
	struct dt_fs fs;
	struct dt_self self;
	struct dt_btrfs btrfs;
	struct dt_ext ext;
	struct dt_exf exf;
	struct dt_cblk *cache;   /* open hash, ncache slots */
	uint32_t ncache, ncached;
	uint64_t xmask;          /* the images DT_XIMG reads the XOR of */
	uint64_t xoff[64];       /* each one's byte DT_XIMG's byte 0 is */
	uint64_t hyps;
	/* the parity scan (detect_pscan.c): images at equal offsets whose XOR
	 * vanishes (RAID-4/5 of ps5_lo..ps5_hi members) or equals one of them
	 * (RAID-6's Q: ps6_lo..ps6_hi members); 0: not seen; ps_off: the data
	 * start the head's junk ends at (0 unknown) */
	uint32_t ps5_lo, ps5_hi, ps6_lo, ps6_hi;
	uint64_t ps5_mask, ps6_mask, ps_off;
	uint32_t ps_rows_seen;   /* detect_pscan.c: rows with data the last verdict saw */
	int      ps_has_ioff;              /* 1: the members' starts differ, ps_ioff[image] each */
	uint64_t ps_ioff[64];
	int      ps_has_rel;               /* 1: the members' starts differ by ps_rel[image] (detect_align.c), */
	uint64_t ps_rel[64];               /* where each is unknown */
	uint8_t *zmap[DT_MAX_ROLES + 8];   /* detect_zero.c: per image, granules known zero (1) or not (2) */
	/* rows where parity can sit on some members only (detect_rotation.c):
	 * image offsets past each image's start shift (ps_ioff, ps_rel; 0) */
	uint64_t mixed[DT_MIXED];
	uint32_t nmixed;
	int      redo;                     /* dt_search: the partitions' bases changed, search again */
	int      starved;                  /* dt_search: stage 2 spent every check before its last geometry */
	int      boost;                    /* dt_search: twice the checks, completions and steps (a second search) */
	int32_t  retry_without;            /* dt_search, when nothing was found: an image to search again
	                                    * without (an unrelated whole file system), else -1 */
	int      twins_known;              /* detect_search.c: twins computed; per image, the images */
	uint64_t twins[DT_MAX_ROLES + 8];  /* that copy it at equal offsets */
};

/* A complete hypothesis: a geometry, which image holds each role and where
 * its data starts, and the scores. */
struct dt_hyp {
	struct rk_geom g;
	int32_t  role_img[DT_MAX_ROLES];   /* image per role, -1 missing */
	uint64_t off[DT_MAX_ROLES];        /* data start per role */
	/* scores */
	uint32_t anc_ok, anc_bad;
	uint32_t probe_ok, probe_bad;
	uint32_t bm_ok, bm_bad;            /* allocation bitmap: used blocks holding data / free blocks holding data */
	uint32_t tail_bad;                 /* of probe_bad: ext4 and XFS files whose slack holds data */
	uint32_t mirr_bad;                 /* of probe_bad: NTFS $MFTMirr records that are not the MFT's first */
	uint64_t rows, rows_nz, rows_ok, rows_bad, place_bad;
	int      checked;                  /* redundancy could be checked */
	int      size_fixed;               /* finish() keeps the member size (not the smallest image's) */
	int      size_guessed;             /* stage 1 placed no image: the member size is the median image's */
	int      parity_added;             /* a RAID-0 reading with a left-out image as its parity: its rows check
	                                      that image, not the order, and earn no credit */
	double   score;
	double   edge_gain;                /* points gained on content continuity at chunk edges (edge_tiebreak) */
	uint32_t missing;
};

/* detect_sample.c */
rk_err dt_open(struct dt_ctx *c, char *const *paths, uint32_t n);
void   dt_close(struct dt_ctx *c);
/* Reads LEN bytes at OFF of image I into BUF, counting them against the
 * image's budget; -1 when out of range, over budget or failing.  I ==
 * DT_XIMG reads the XOR of the images in c->xmask: a missing member of a
 * RAID-5 whose members share one start, rebuilt. */
#define DT_XIMG 0xFFFFFFF0u
int    dt_read(struct dt_ctx *c, uint32_t i, uint64_t off, void *buf, size_t len);
/* The cached DT_BLK bytes at OFF of image I (OFF + DT_BLK within the image),
 * NULL when unreadable. */
const uint8_t *dt_block(struct dt_ctx *c, uint32_t i, uint64_t off);
/* Frees the cached blocks when the cache is half full: call only where no
 * pointer from dt_block is held (pointers stay valid until then). */
void   dt_cache_trim(struct dt_ctx *c);
/* Scans heads and spread windows of every image for anchors. */
rk_err dt_scan_all(struct dt_ctx *c);

/* detect_anchor.c */
/* An MBR partition table at P (not a boot sector): the first partition's
 * start in bytes, 0 when P is none. */
uint64_t dt_mbr_first(const uint8_t *p);
/* Appends anchor A to C's list (grown as needed); 0 when the list is full
 * (DT_MAX_ANCHORS) or memory ran out: the hit is dropped, as a sample is. */
int    dt_anchor_push(struct dt_ctx *c, const struct dt_anchor *a);
/* Scans BUF (LEN bytes read at image offset BASE of image I) for anchors at
 * every 512-byte step, adding raw hits. */
void   dt_scan_buf(struct dt_ctx *c, uint32_t i, uint64_t base, const uint8_t *buf, size_t len);
/* Resolves raw hits to volume offsets with the learnt parameters; drops
 * hits that cannot be resolved. */
void   dt_resolve(struct dt_ctx *c);

/* detect_part.c: the partition each file system lives in. */
/* Learns the partition table of the MBR at P (512 bytes) unless one is
 * known; dt_part_gpt: of the GPT header at HDR (LEFT bytes readable from
 * it, the entries when they follow in them), replacing an MBR's. */
void   dt_part_mbr(struct dt_fs *fs, const uint8_t *p);
void   dt_part_gpt(struct dt_fs *fs, const uint8_t *hdr, size_t left);
/* Sets C->fs.base for each kind of file system the anchors hold: the
 * partition whose start it records, else the one its size alone fits,
 * else the next free one of a fitting type in the order the file systems
 * were seen; 0 everywhere when the volume has no table. */
void   dt_part_assign(struct dt_ctx *c);
/* Whether the structure at the scan's place (c->fs.at_img, at_off), WOFF
 * bytes into its file system, starts a partition of the last MBR seen on
 * the same image: a whole disk's file system (or a mirror's). */
int    dt_in_own_partition(const struct dt_fs *fs, uint64_t woff);
/* Adds A's file system's base to its volume offsets. */
void   dt_part_rebase(const struct dt_fs *fs, struct dt_anchor *a);
/* Records the identity of the file system of kind K whose parameters were
 * just learnt from P (its superblock or boot sector, 512 bytes; btrfs: the
 * superblock). */
void   dt_part_learnt(struct dt_fs *fs, int k, const uint8_t *p);
/* Reads the partition table at H's volume start and what each partition
 * starts with through H: where the file systems whose parameters were
 * learnt begin.  1 when that moved a base (then kept: fs.base_fixed), 0
 * when it agrees, -1 when H shows no table or none of them. */
int    dt_part_confirm(struct dt_ctx *c, const struct dt_hyp *h);
const char *dt_kind_name(const struct dt_anchor *a, char *buf, size_t len);

/* detect_self.c: blocks that record their own place (XFS v5 inodes and
 * metadata blocks, FAT directories and FAT sectors). */
/* Looks at the 512-byte sector P at image I's byte AT (LEFT bytes readable
 * from P) for such a block, learning superblocks and adding anchors. */
void   dt_self_scan(struct dt_ctx *c, uint32_t i, uint64_t at, const uint8_t *p, size_t left);
/* An XFS v5 superblock at P: S learns what resolving XFS hits needs (the
 * first plausible one; secondary superblocks repeat the primary's fields). */
void   dt_self_xfs(struct dt_self *s, const uint8_t *p);
/* Resolves a hit of detect_self.c's kinds (A->voff, voff2; DT_NONE when the
 * file system it belongs to is not the one learnt). */
void   dt_self_resolve(const struct dt_ctx *c, struct dt_anchor *a);
/* Words for those kinds (NULL for other kinds). */
const char *dt_self_name(const struct dt_anchor *a, char *buf, size_t len);

/* detect_btrfs.c: btrfs tree blocks, mapped through the chunk tree. */
/* crc32c (Castagnoli) of N bytes at P, as btrfs and ext4 checksum. */
uint32_t dt_crc32c(const uint8_t *p, size_t n);
/* The same from register C with no inversion either side (ext4's chaining). */
uint32_t dt_crc32c_raw(uint32_t c, const uint8_t *p, size_t n);
/* Looks at the 512-byte sector P at image I's byte AT (LEFT bytes readable
 * from P): learns superblocks (crc32c, single device) and their system
 * chunks, chunk-tree leaves that lie whole at P (crc32c), and adds an
 * anchor for a tree block's header. */
void   dt_btrfs_scan(struct dt_ctx *c, uint32_t i, uint64_t at, const uint8_t *p, size_t left);
/* Resolves a DT_BTRFS_NODE hit through the chunk map of its file system
 * (A->voff, and voff2 for DUP's second copy; DT_NONE when unknown). */
void   dt_btrfs_resolve(const struct dt_ctx *c, struct dt_anchor *a);
/* Appends to V (at *N, at most MAX) the volume bytes where the learnt
 * system and metadata chunks start: where targeted windows go. */
void   dt_btrfs_far(const struct dt_ctx *c, uint64_t *v, uint32_t *n, uint32_t max);
/* Checks the btrfs whose superblock H puts at volume byte BASE + 64 KiB:
 * its checksum, then tree blocks (the chunk tree, the root tree, the
 * trees it names, their children) found through the chunk map read
 * through H itself; each block read is a probe_ok or probe_bad of H.
 * LIMIT > 0: stop after LIMIT predictions (dt_probe's quick look). */
void   dt_btrfs_probe(struct dt_ctx *c, struct dt_hyp *h, uint64_t base, uint32_t limit);
/* The last blocks of the files the anchored file-system-tree leaves list
 * (an INODE_ITEM's size and the uncompressed regular EXTENT_DATA over its
 * last byte, in one leaf whose crc32c holds): into OUT (MAX at most) the
 * block's logical bytenr, the bytes of it the file fills, the sector
 * size and the file system's tag; returns how many.  A file that leaves
 * say differently (a stale copy of a leaf, COW left behind) is left out. */
struct dt_bend { uint64_t logical, obj; uint32_t tag, end, sect; };
uint32_t dt_btrfs_file_ends(struct dt_ctx *c, struct dt_bend *out, uint32_t max);
/* The volume byte of logical bytenr L of file system TAG through its data
 * chunks (DT_NONE when not mapped). */
uint64_t dt_btrfs_data_voff(const struct dt_ctx *c, uint32_t tag, uint64_t l);
/* detect_exfat.c */
/* Checks the exFAT whose boot sector BOOT (512 bytes) H puts at volume
 * byte BASE: the root directory, the up-case table's checksum and the
 * subdirectories' first clusters (up to 48), read through H; each is a
 * probe_ok or probe_bad of H (empty ones neither).  LIMIT as
 * dt_btrfs_probe. */
void   dt_exfat_probe(struct dt_ctx *c, struct dt_hyp *h, uint64_t base, uint32_t limit, const uint8_t *boot);
/* The scan's look at P (LEFT bytes from it on): the file entry sets it
 * starts, their checksums holding, of contiguous files written to their
 * end go to c->exf (each once, DT_EXFILES at most). */
void   dt_exfat_scan(struct dt_ctx *c, const uint8_t *p, size_t left);
/* Learns the cluster heap (c->exf) from the first exFAT boot sector
 * anchored whose fields hold. */
void   dt_exfat_learn(struct dt_ctx *c);
/* Applies the update sequence fixups of the REC bytes of MFT record R (1
 * ok, 0 torn or not a record). */
int    dt_ntfs_fixup(uint8_t *r, size_t rec);
/* The runs of record R's (REC bytes, fixed up) unnamed non-resident $DATA
 * from VCN 0 into M: 1 when found and decoded. */
int    dt_ntfs_data_runs(struct dt_runs *m, const uint8_t *r, size_t rec);
/* Learns how many records the MFT holds from record 0 ($MFT) among the
 * anchors: the first whose $DATA starts at the cluster the learnt boot
 * sector names.  No record numbered past them is one (the XOR of an odd
 * number of records on a parity block reads as a record, numbered where
 * the MFT has ended). */
void   dt_ntfs_learn_mft(struct dt_ctx *c);
/* Where record N of the learnt NTFS sits, relative to its start, through
 * the $MFT's runs where learnt; DT_NONE past the MFT or unknown. */
uint64_t dt_ntfs_record_at(const struct dt_fs *fs, uint64_t n);
/* The cluster M maps VCN to; UINT64_MAX when sparse or beyond its runs. */
uint64_t dt_runs_lcn(const struct dt_runs *m, uint64_t vcn);
/* The predictions of the NTFS boot sector BT at volume byte BASE (records
 * numbered where they sit, the backup boot sector; in full probes also
 * file tails, which only count for), checked through H.  LIMIT as
 * dt_btrfs_probe. */
void   dt_ntfs_probe(struct dt_ctx *c, struct dt_hyp *h, uint64_t base, uint32_t limit, const uint8_t *bt);
/* detect_fat.c: the tails of the files of the FAT16/32 file system whose
 * boot sector BOOT sits at volume byte BASE, read through H: probe_ok for
 * each that holds the file's end and zeros after it (full probes only). */
void   dt_fat_tails(struct dt_ctx *c, struct dt_hyp *h, uint64_t base, const uint8_t *boot);
/* detect_xfs.c: the predictions of the XFS superblock SB at volume byte
 * BASE (AGF headers; in full probes also inode chunks and file tails),
 * checked through H into probe_ok / probe_bad.  LIMIT as dt_btrfs_probe. */
void   dt_xfs_probe(struct dt_ctx *c, struct dt_hyp *h, uint64_t base, uint32_t limit, const uint8_t *sb);
/* The last block of the regular file whose inode (ISZ bytes) is IN, its
 * extents in the inode (block size BS, AG block bits AGBLKLOG): its AG
 * and block in the AG, and the file's size; 0 when there is none to take
 * (not such a file, beyond its extents, unwritten). */
int    dt_xfs_last_block(const uint8_t *in, uint32_t isz, uint32_t bs, uint32_t agblklog, uint64_t *size, uint64_t *ag,
                         uint64_t *agbno);
/* Words for a DT_BTRFS_NODE anchor (NULL for other kinds). */
const char *dt_btrfs_name(const struct dt_anchor *a, char *buf, size_t len);

/* detect_ext.c: ext4 inodes named by their checksums. */
/* Looks at the 512-byte sector P at image I's byte AT (LEFT bytes readable
 * from P): notes a group-0 superblock, adds an anchor for each inode
 * that looks in use and for a directory's first block. */
void   dt_ext_scan(struct dt_ctx *c, uint32_t i, uint64_t at, const uint8_t *p, size_t left);
/* Learns the seed, counts and inode tables from the first superblock
 * noted whose group descriptors' checksums hold (reads; once). */
void   dt_ext_learn(struct dt_ctx *c);
/* With nothing learnt while inodes or directories were seen: looks for
 * the group-0 superblock in the XOR of the images' heads (every image, or
 * every image but one) and learns from it read there (DT_XIMG). */
void   dt_ext_learn_rebuilt(struct dt_ctx *c);
/* Once the inode and directory anchors are resolved: when every one lies
 * on the image the superblock was learnt from, they are dropped (an
 * unrelated slice of a file system, or a member they would only pin
 * again) -- unless that image holds it scattered, as a far RAID-10's
 * member does (they tell its chunk and stride). */
void   dt_ext_settle(struct dt_ctx *c);
/* Learns where the journal of the learnt ext4 lies (c->ext.jbeg, jend:
 * volume bytes) from its inode's extents, the inode read where its anchor
 * was found; 0 0 when not known. */
void   dt_ext_journal(struct dt_ctx *c);
/* Whether volume byte V lies in that journal (the learnt ext's base added). */
int    dt_ext_in_journal(const struct dt_ctx *c, uint64_t v);
/* Resolves a DT_EXT_INO hit (A->voff; DT_NONE when nothing is learnt or
 * the number is not one of the file system's inodes). */
void   dt_ext_resolve(const struct dt_ctx *c, struct dt_anchor *a);
/* Resolves a DT_EXT_DIR hit once the inode anchors are resolved: the
 * directory's inode, found among them by the number "." names and read
 * where it was found, says where its first block lies (depth-0 extents
 * only); DT_NONE otherwise.  Relative to the file system's start. */
void   dt_ext_resolve_dir(struct dt_ctx *c, struct dt_anchor *a);
/* Words for a DT_EXT_INO, DT_EXT_DIR, DT_EXT_TAIL or DT_EXT_RMAP anchor (NULL for other kinds). */
const char *dt_ext_name(const struct dt_anchor *a, char *buf, size_t len);

/* The block of the learnt ext4's resize inode (7) that maps its reserved
 * GDT blocks, read beside an anchored inode of its inode-table block: its
 * number into *BLK and its bytes (the learnt block size) into WANT, as
 * mke2fs writes them; 0 when the file system has none, or inode 7 there
 * does not carry its own checksum. */
int    dt_ext_resize_map(struct dt_ctx *c, uint64_t *blk, uint8_t *want);

/* detect_lastblock.c */
/* Looks for the last blocks of the learnt ext4's files (their inodes
 * anchored) and of the exFAT files the scan met, and for the ext4 resize
 * inode's map, over the scanned parts of every image, adding a
 * DT_EXT_TAIL, DT_EXFAT_TAIL or DT_EXT_RMAP anchor per place found (to be
 * resolved).  Reads. */
void   dt_lastblocks(struct dt_ctx *c);
/* Such a hit's volume byte, relative to its file system's start
 * (DT_NONE when nothing is learnt). */
void   dt_resolve_lastblock(const struct dt_ctx *c, struct dt_anchor *a);
/* Whether KIND is one of those hits (found by bytes another file system
 * may hold too: evidence for a reading, never against one). */
int    dt_lastblock_kind(uint8_t kind);

/* detect_stripe.c */
/* The data start of a linear array's first member that most anchors sure
 * to lie on it agree on (0 when none does). */
uint64_t dt_linear_start0(const struct dt_ctx *c);

/* detect_zero.c */
/* 1 when bytes [OFF, OFF+LEN) of image I are all zero (granules read once
 * and remembered); 0 when not, or unknown (beyond the granules tracked, a
 * read failed or the budget ran out). */
int    dt_zero_range(struct dt_ctx *c, uint32_t i, uint64_t off, uint64_t len);
void   dt_zero_free(struct dt_ctx *c);

/* detect_volread.c */
/* Reads volume bytes [VOFF, VOFF+LEN) as hypothesis H maps them: 0 read,
 * 1 not available (a missing role, out of range), -1 error. */
int    dt_vread(struct dt_ctx *c, const struct dt_hyp *h, uint64_t voff, uint8_t *buf, size_t len);
/* Where H puts volume byte VOFF: image and image offset of each copy
 * (returns count, 0 when unmapped). */
uint32_t dt_where(const struct dt_hyp *h, uint64_t voff, uint32_t *img, uint64_t *ioff, uint32_t max);

/* detect_ext.c: the block logical block LOGICAL of ext4 inode IN sits
 * at, when its extents sit in the inode (depth 0, no inline data) and a
 * written extent maps it; else DT_NONE. */
uint64_t dt_ext_extent_block(const uint8_t *in, uint64_t logical);
/* 1 when directory block B (BS bytes) of directory inode IN, number INO,
 * ends in the checksum tail metadata_csum gives it, and the crc32c there
 * (under SEED, over INO, IN's generation and the block) holds. */
int      dt_ext_dir_csum_ok(uint32_t seed, uint32_t ino, const uint8_t *in, const uint8_t *b, uint32_t bs);

/* detect_probe.c */
/* Checks the file-system structures H predicts (superblock backups, inode
 * tables, directories, MFT records, AG headers, backup boot sectors),
 * into h->probe_ok / probe_bad and the bitmap counts; LIMIT > 0: a quick
 * look, at most LIMIT predictions and no bitmaps. */
void   dt_probe(struct dt_ctx *c, struct dt_hyp *h, uint32_t limit);
/* A file's last block, at volume byte AT through H (block or cluster size
 * BS), for a file of SIZE bytes: 1 when the file's last bytes are there
 * and DT_TAIL_SLACK or more zero bytes follow them to the block's end, 0
 * when data follows them (a reading that puts another file's block
 * there), -1 when it tells nothing (a short slack, the bytes before the
 * end zero too, unreadable).  Only writers that zero the slack (Linux, the
 * mkfs populators) make a 0 evidence against; others' tails count through
 * dt_tails_count.  BUF: BS bytes. */
#define DT_TAIL_SLACK 16u
int    dt_tail_check(struct dt_ctx *c, struct dt_hyp *h, uint64_t at, uint32_t bs, uint64_t size, uint8_t *buf);
/* The tails of a file system whose writers may leave a cluster's slack
 * as it was (FAT, NTFS): N checked by dt_tail_check, OK of them holding.
 * Where the slack was zero (a fresh image), nine in ten or more hold
 * under the true reading, and then each counts, for and against; where
 * it was not, they tell nothing, and none counts.  A reading that puts
 * other clusters in their place holds far fewer and gains none.  Fewer
 * than DT_TAILS_MIN tails count neither way. */
#define DT_TAILS_MIN 8u
void   dt_tails_count(struct dt_hyp *h, uint32_t ok, uint32_t n);
/* The bytes the file system (or partition table) at H's volume start says
 * it spans, 0 when unknown: a volume shorter than that is not the array. */
uint64_t dt_fs_claim(struct dt_ctx *c, const struct dt_hyp *h);

/* detect_pscan.c: how many distinct byte values the N bytes at P hold; a
 * 512-byte sector of random bytes holds about 200, so DT_RANDOM_DISTINCT or
 * more reads as random (junk before the data, or a member of junk). */
#define DT_RANDOM_DISTINCT 160u
uint32_t dt_distinct_bytes(const uint8_t *p, size_t n);

/* detect_search.c: two of the gates (held_back), for the tests.
 * Whether a member of a linear H past the first holds no anchor and only
 * random bytes (some non-zero, none structured) in 16 sampled blocks. */
int dt_linear_member_unproven(struct dt_ctx *c, const struct dt_hyp *h);
/* Whether H has a role missing, redundancy not verified over DT_SURE_ROWS
 * (8) non-zero rows, and an image it leaves out, at least a member long,
 * holds structured data in one of 16 sampled blocks. */
int dt_unchecked_left_out(struct dt_ctx *c, const struct dt_hyp *h);
/* Whether A and B read the volume alike: every sampled byte from the same
 * image byte, or rebuilt by the same XOR of the same image bytes. */
int dt_equivalent(const struct dt_hyp *a, const struct dt_hyp *b);

/* The boot sectors and superblock the scan and the allocation maps both
 * decode (detect_anchor.c, detect_self.c), each into a zeroed struct or
 * the context's.  dt_fs_ext: an ext2/3/4 superblock at P (1024 bytes);
 * dt_fs_ntfs: an NTFS boot sector at P (512 bytes), the MFT's place;
 * both return 1 when the fields that must hold do.  dt_fat_learn: a FAT16
 * or FAT32 boot sector at P, its data area and clusters, the first
 * plausible one (S->fat stays 0 otherwise; FAT12's 12-bit entries are
 * not read). */
int  dt_fs_ext(struct dt_fs *fs, const uint8_t *p);
/* Learns a FAT16/32 (c->self and c->fs), NTFS (c->fs) or XFS (c->fs and
 * c->self) file system's parameters from the boot sector or superblock P
 * (512 bytes) where none were learnt, adding no anchor: P was rebuilt,
 * it sits on no image.  1 when learnt. */
int  dt_learn_boot(struct dt_ctx *c, const uint8_t *p);
int  dt_fs_ntfs(struct dt_fs *fs, const uint8_t *p);
void dt_fat_learn(struct dt_self *s, const uint8_t *p);

/* detect_alloc.c */
/* Where A and B read the volume from different places: up to 256
 * allocation units (ext blocks, NTFS and FAT clusters) of the file system
 * at the volume's start, each looked up in the map as that hypothesis reads
 * it and read through it.  *FIT_A, *FIT_B: the share of units said used
 * that hold data less the share of free ones (less 0.5 with under 8 free
 * ones).  Returns 0 (no verdict) when the two read no map alike or too
 * few used units were found. */
int  dt_alloc_tiebreak(struct dt_ctx *c, struct dt_hyp *a, struct dt_hyp *b, double *fit_a, double *fit_b);
/* Whether one of the N volume bytes V of H lies in an allocation unit the
 * file system at H's volume start says is used (the map read once; bytes
 * past the file system's end, or with no map, are not). */
int  dt_alloc_any_used(struct dt_ctx *c, const struct dt_hyp *h, const uint64_t *v, uint32_t n);

/* detect_edge.c */
/* Content continuity at chunk edges where A and B read the volume
 * differently: DIFFER edges sampled (data on both sides in both), at
 * A_WINS of them A's two sides clearly more alike, at B_WINS B's; Z the
 * sign test's score, (A_WINS - B_WINS) / sqrt(A_WINS + B_WINS), positive
 * for A. */
struct dt_edges { uint32_t differ, a_wins, b_wins; double z; };
/* Fills OUT; 0 when A and B have no common chunk edges to compare (other
 * chunks, linear arrays, mirrors), 1 otherwise. */
int  dt_edge_compare(struct dt_ctx *c, const struct dt_hyp *a, const struct dt_hyp *b, struct dt_edges *out);

/* detect_parity.c */
/* Checks parity / mirror consistency of H over sampled rows spread over the
 * members, filling rows, rows_nz, rows_ok, place_bad, checked; stops early
 * after QUICK inconsistent rows (0: check all). */
void   dt_check_redundancy(struct dt_ctx *c, struct dt_hyp *h, uint32_t samples, uint32_t quick);

/* One RAID-4/5/6 row of H: stripe S, LEN bytes at in-chunk offset J,
 * counted into H's rows; 0 checked, 1 skipped (unreadable, or too many
 * roles missing to check). */
int    dt_parity_row(struct dt_ctx *c, struct dt_hyp *h, uint64_t s, uint64_t j, size_t len);

/* Where image I would start as H's one missing role R: a block of R
 * rebuilt through P from the others (not zero, no fill pattern) searched
 * in I at every 512-byte step of 0 to 8 MiB past its member offset (two
 * such reads at most); 1 with *START set when found. */
int    dt_rebuilt_start(struct dt_ctx *c, const struct dt_hyp *h, uint32_t r, uint32_t i, uint64_t *start);

/* Whether anchor A, which H puts on a P block (Q: a Q block) at member
 * byte M of its image's role, is a copy of its own data there: A's volume
 * byte is data of that very row at member byte M (for Q, in the
 * syndrome's first slot, whose coefficient is 1), and the row's other
 * data blocks hold zeros at A's sector (its data block, when present,
 * equal to A's): what a parity block holds when one block of its row has
 * data.  A file's last block may sit on Q in any slot, scaled: its data
 * block then holds zeros where Q does (seed 3913).  0 also when the
 * copied block and another data block are both missing (unproven). */
int    dt_parity_copy(struct dt_ctx *c, const struct dt_hyp *h, const struct dt_anchor *a, uint64_t m, int q);
/* Whether the data blocks H's members hold in the row of the parity
 * block at member byte M (role R's) are all zero at anchor A's sector:
 * then the parity block is a copy of the missing data there, and A on it
 * tells where that block belongs.  Else it is the XOR of several blocks,
 * and what reads as an anchor on it may be that XOR (an odd number of
 * inodes XOR to one checksummed under the XOR of their numbers). */
int    dt_parity_alone(struct dt_ctx *c, const struct dt_hyp *h, const struct dt_anchor *a, uint32_t r, uint64_t m);

/* detect_rotation.c */
/* Collects the mixed rows (c->mixed): rows at equal member offsets of the
 * members the parity scan found whole (their starts one, or shifted by
 * ps_ioff or ps_rel), where some blocks are zero and others not. */
void   dt_rows_collect(struct dt_ctx *c);
/* Checks up to MAX of the mixed rows under H (its present roles sharing one
 * start past their images' shifts) into its row counts: where H's parity lands on a zero block of
 * such a row, its placement is wrong (place_bad). */
void   dt_check_mixed(struct dt_ctx *c, struct dt_hyp *h, uint32_t max);

/* detect_pscan.c */
/* The parity scan over rows at equal image offsets (fills c->ps_*). */
void   dt_pscan(struct dt_ctx *c);

/* detect_align.c */
/* Images whose data starts differ, by the copies parity leaves: *MASK the
 * images (three or more) one difference dominates between, REL each's
 * start relative to the earliest (bytes); *BLANK the images whose heads
 * hold only zeros.  1 when found and the starts are not all equal;
 * nothing is checked: the caller checks the rows. */
int    dt_align_starts(struct dt_ctx *c, uint64_t *mask, uint64_t *rel, uint64_t *blank);
/* detect_pscan.c: where the run of random-looking sectors from image I's
 * byte 0 ends (junk before a member's data), 0 when none. */
uint64_t dt_junk_lead(struct dt_ctx *c, uint32_t i);
/* A 64-bit hash of the N bytes at P (a multiple of 8): blocks compared
 * by their hashes (copies found, mirrors told). */
uint64_t dt_hash64(const uint8_t *p, size_t n);

/* detect_same.c */
/* 1 when A and B read the same bytes over the first min(volume sizes,
 * UPTO) bytes, every byte compared; 0 when not, or unknown (a read
 * failed, the read budget or *BUDGET (bytes, counted down) ran out, or
 * that is more than MAX bytes). */
int    dt_same_export(struct dt_ctx *c, const struct dt_hyp *a, const struct dt_hyp *b, uint64_t max, uint64_t upto,
                      uint64_t *budget);

/* detect_search.c */
rk_err dt_search(struct dt_ctx *c, struct rk_detect_result *r);

#endif
