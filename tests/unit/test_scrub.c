/* test_scrub.c: rk_scrub_run over memory members written by the stripe
 * engine: clean arrays of every level report nothing; a corrupted block is
 * reported in the right stripe and byte range and, where the math allows,
 * with the right role (RAID-6 data, P and Q; mirror minority); repair then
 * re-scrub is clean and the volume reads back as written; RAID-5 repair
 * only makes parity consistent and says so; a degraded RAID-6 still finds
 * mismatches; ranges, column slicing, stop/resume and the checkpoint file.
 * Unreadable blocks: test_scrub_unreadable.c. */
#include "scrub_fixture.h"

START_TEST(test_clean)
{
	const struct lv *L = &levels[_i];
	struct arr a;
	arr_make(&a, L->level, L->layout, L->chunk, L->n, MSIZE);
	struct got got;
	struct rk_scrub_stats st;
	REQ(scrub(&a, 0, 0, a.g.nstripes, &got, &st, 0) == RK_OK);
	REQ(got.n == 0 && st.mismatches == 0);
	REQ(st.stripes == a.g.nstripes && st.unchecked == 0);
	REQ(st.next == a.g.nstripes && !st.stopped);
	/* every member byte of the data areas was read at least once */
	REQ(st.bytes_read >= a.g.volume_size);
	arr_free(&a);
}
END_TEST

START_TEST(test_flip_each_level)
{
	const struct lv *L = &levels[_i];
	struct arr a;
	arr_make(&a, L->level, L->layout, L->chunk, L->n, MSIZE);
	uint64_t unit = a.g.chunk ? a.g.chunk : RK_GEOM_UNIT_DEFAULT;
	/* a sector-aligned 4 KiB block inside one chunk, somewhere in the middle */
	uint64_t x = (a.g.volume_size / 3) / unit * unit + unit / 2;
	x -= x % 4096;
	uint32_t role = flip_vol(&a, x, 4096);
	uint8_t *snap[MAXR];
	for (uint32_t r = 0; r < a.g.nroles; r++) {
		snap[r] = malloc(rk_dev_size(a.devs[r]));
		memcpy(snap[r], rk_dev_mem_data(a.devs[r]), rk_dev_size(a.devs[r]));
	}
	struct got got;
	struct rk_scrub_stats st;
	REQ(scrub(&a, 0, 0, a.g.nstripes, &got, &st, 0) == RK_OK);
	REQ(got.n == 1 && st.mismatches == 1);
	const struct rk_scrub_region *r = &got.r[0];
	REQ(r->stripe == x / a.g.stripe_data);
	REQ(r->offset <= x && r->offset + r->length >= x + 4096);
	REQ(r->member_len == 4096);
	REQ(r->fix == RK_SCRUB_FIX_NONE);
	if (locatable(&a.g)) {
		REQ(r->verdict == RK_SCRUB_LOCATED);
		REQ(r->nfault == 1 && got.fault[0][0] == role);
		/* located data: the exact block */
		REQ(r->offset == x && r->length == 4096);
	} else {
		REQ(r->verdict == RK_SCRUB_UNLOCATED && r->nfault == 0);
	}
	/* plain scrub wrote nothing */
	for (uint32_t k = 0; k < a.g.nroles; k++) {
		REQ(!memcmp(snap[k], rk_dev_mem_data(a.devs[k]), rk_dev_size(a.devs[k])));
		free(snap[k]);
	}
	/* repair, then a second scrub is clean */
	REQ(scrub(&a, 1, 0, a.g.nstripes, &got, &st, 0) == RK_OK);
	REQ(got.n == 1 && st.repaired == 1);
	REQ(got.r[0].fix == (locatable(&a.g) ? RK_SCRUB_FIX_PROVEN : RK_SCRUB_FIX_CONSISTENT));
	REQ(st.consistent == (locatable(&a.g) ? 0u : 1u));
	REQ(scrub(&a, 0, 0, a.g.nstripes, &got, &st, 0) == RK_OK);
	REQ(got.n == 0);
	if (locatable(&a.g))
		vol_equal(&a, 1);
	arr_free(&a);
}
END_TEST

START_TEST(test_raid6_roles)
{
	struct arr a;
	arr_make(&a, 6, RK_ALG_LEFT_SYMMETRIC, 65536, 6, MSIZE);
	uint32_t vr[MAXR];
	struct rk_stripe_map m = { .vol_role = vr };
	/* stripe 3: P; stripe 7: Q; stripe 11: data block 2 */
	REQ(rk_geom_stripe_map(&a.g, 3, &m) == RK_OK);
	uint32_t p3 = m.p_role;
	flip(&a, p3, m.member_off + 1024, 1024);
	REQ(rk_geom_stripe_map(&a.g, 7, &m) == RK_OK);
	uint32_t q7 = m.q_role;
	flip(&a, q7, m.member_off, 512);
	REQ(rk_geom_stripe_map(&a.g, 11, &m) == RK_OK);
	uint32_t d11 = m.vol_role[2];
	flip(&a, d11, m.member_off + 8192, 3000);   /* not sector aligned */
	struct got got;
	struct rk_scrub_stats st;
	REQ(scrub(&a, 0, 0, a.g.nstripes, &got, &st, 0) == RK_OK);
	REQ(got.n == 3 && st.located == 3);
	REQ(got.r[0].stripe == 3 && got.fault[0][0] == p3 && got.r[0].member_len == 1024);
	REQ(got.r[0].offset == 3 * a.g.stripe_data + 1024);
	REQ(got.r[1].stripe == 7 && got.fault[1][0] == q7 && got.r[1].member_len == 512);
	REQ(got.r[2].stripe == 11 && got.fault[2][0] == d11);
	REQ(got.r[2].offset == 11 * a.g.stripe_data + 2 * 65536 + 8192 && got.r[2].member_len == 3072);
	REQ(strstr(got.why[0], "P") && strstr(got.why[1], "Q"));
	REQ(scrub(&a, 1, 0, a.g.nstripes, &got, &st, 0) == RK_OK);
	REQ(st.repaired == 3 && st.consistent == 0);
	REQ(scrub(&a, 0, 0, a.g.nstripes, &got, &st, 0) == RK_OK);
	REQ(got.n == 0);
	vol_equal(&a, 1);
	arr_free(&a);
}
END_TEST

START_TEST(test_raid6_two_bad)
{
	/* two data blocks bad over the same bytes: found, not located */
	struct arr a;
	arr_make(&a, 6, RK_ALG_LEFT_SYMMETRIC, 65536, 6, MSIZE);
	uint32_t vr[MAXR];
	struct rk_stripe_map m = { .vol_role = vr };
	REQ(rk_geom_stripe_map(&a.g, 5, &m) == RK_OK);
	flip(&a, m.vol_role[0], m.member_off, 4096);
	flip(&a, m.vol_role[3], m.member_off, 4096);
	struct got got;
	struct rk_scrub_stats st;
	REQ(scrub(&a, 0, 0, a.g.nstripes, &got, &st, 0) == RK_OK);
	REQ(got.n == 1 && got.r[0].verdict == RK_SCRUB_UNLOCATED && got.r[0].nfault == 0);
	REQ(got.r[0].stripe == 5);
	/* repair makes it consistent only */
	REQ(scrub(&a, 1, 0, a.g.nstripes, &got, &st, 0) == RK_OK);
	REQ(got.r[0].fix == RK_SCRUB_FIX_CONSISTENT && st.consistent == 1);
	REQ(scrub(&a, 0, 0, a.g.nstripes, &got, &st, 0) == RK_OK);
	REQ(got.n == 0);
	vol_equal(&a, 0);
	arr_free(&a);
}
END_TEST

START_TEST(test_raid5_repair_unlocated)
{
	struct arr a;
	arr_make(&a, 5, RK_ALG_LEFT_SYMMETRIC, 65536, 4, MSIZE);
	uint64_t x = 5 * a.g.stripe_data + 65536 + 4096;
	flip_vol(&a, x, 4096);
	struct got got;
	struct rk_scrub_stats st;
	REQ(scrub(&a, 1, 0, a.g.nstripes, &got, &st, 0) == RK_OK);
	REQ(got.n == 1 && got.r[0].verdict == RK_SCRUB_UNLOCATED && got.r[0].fix == RK_SCRUB_FIX_CONSISTENT);
	REQ(got.r[0].offset <= x && got.r[0].offset + got.r[0].length >= x + 4096);
	REQ(st.consistent == 1);
	REQ(scrub(&a, 0, 0, a.g.nstripes, &got, &st, 0) == RK_OK);
	REQ(got.n == 0);
	vol_equal(&a, 0);   /* the bad data stays: parity now agrees with it */
	arr_free(&a);
}
END_TEST

START_TEST(test_raid6_degraded)
{
	struct arr a;
	arr_make(&a, 6, RK_ALG_LEFT_SYMMETRIC, 65536, 6, MSIZE);
	uint32_t vr[MAXR];
	struct rk_stripe_map m = { .vol_role = vr };
	REQ(rk_geom_stripe_map(&a.g, 9, &m) == RK_OK);
	/* lose one data role of stripe 9, corrupt another data block */
	uint32_t gone = m.vol_role[1], bad = m.vol_role[2];
	flip(&a, bad, m.member_off + 512, 512);
	rk_dev *keep = a.devs[gone];
	a.devs[gone] = NULL;
	struct got got;
	struct rk_scrub_stats st;
	REQ(scrub(&a, 0, 0, a.g.nstripes, &got, &st, 0) == RK_OK);
	REQ(got.n == 1 && got.r[0].stripe == 9 && got.r[0].verdict == RK_SCRUB_UNLOCATED);
	REQ(strstr(got.why[0], "missing"));
	REQ(got.nlocs[0] == 5);
	REQ(st.stripes == a.g.nstripes);
	/* also with P or Q as the missing role of that stripe */
	a.devs[gone] = keep;
	keep = a.devs[m.q_role];
	a.devs[m.q_role] = NULL;
	REQ(scrub(&a, 0, 9, 10, &got, &st, 0) == RK_OK);
	REQ(got.n == 1 && got.r[0].verdict == RK_SCRUB_UNLOCATED);
	a.devs[m.q_role] = keep;
	/* two missing: nothing left to check */
	rk_dev *k1 = a.devs[0], *k2 = a.devs[1];
	a.devs[0] = a.devs[1] = NULL;
	REQ(scrub(&a, 0, 0, a.g.nstripes, &got, &st, 0) == RK_E_TOOFEW);
	a.devs[0] = k1;
	a.devs[1] = k2;
	arr_free(&a);
}
END_TEST

START_TEST(test_mirror_majority)
{
	struct arr a;
	arr_make(&a, 1, 0, 0, 4, MSIZE);
	/* copy 2 bad in one place, copies 1 and 3 bad in another: 4 copies */
	flip(&a, 2, 100 * 512, 2048);
	flip(&a, 1, 1000 * 512, 512);
	flip(&a, 3, 1000 * 512, 512);
	struct got got;
	struct rk_scrub_stats st;
	REQ(scrub(&a, 0, 0, a.g.nstripes, &got, &st, 0) == RK_OK);
	REQ(got.n == 2);
	REQ(got.r[0].verdict == RK_SCRUB_LOCATED && got.r[0].nfault == 1 && got.fault[0][0] == 2);
	REQ(got.r[0].offset == 100 * 512 && got.r[0].length == 2048);
	/* 2 against 2: no majority */
	REQ(got.r[1].verdict == RK_SCRUB_UNLOCATED);
	/* one copy gone of three agreeing ones: still a majority of 2 of 3 */
	rk_dev *k = a.devs[1];
	a.devs[1] = NULL;
	REQ(scrub(&a, 0, 0, a.g.nstripes, &got, &st, 0) == RK_OK);
	REQ(got.n == 2 && got.r[0].verdict == RK_SCRUB_LOCATED && got.fault[0][0] == 2);
	REQ(got.r[1].verdict == RK_SCRUB_LOCATED && got.fault[1][0] == 3);
	a.devs[1] = k;
	arr_free(&a);
}
END_TEST

START_TEST(test_range_and_slices)
{
	struct arr a;
	arr_make(&a, 6, RK_ALG_LEFT_SYMMETRIC, 65536, 5, MSIZE);
	uint64_t x = 6 * a.g.stripe_data + 20000 / 512 * 512;
	uint32_t role = flip_vol(&a, x, 16384);
	struct got got;
	struct rk_scrub_stats st;
	REQ(scrub(&a, 0, 0, 6, &got, &st, 0) == RK_OK);
	REQ(got.n == 0 && st.stripes == 6 && st.next == 6);
	REQ(scrub(&a, 0, 7, a.g.nstripes, &got, &st, 0) == RK_OK);
	REQ(got.n == 0);
	REQ(scrub(&a, 0, 6, 7, &got, &st, 0) == RK_OK);
	REQ(got.n == 1 && got.fault[0][0] == role);
	/* tiny batches: columns sliced below the chunk, the region still one */
	REQ(scrub(&a, 0, 0, a.g.nstripes, &got, &st, 4096) == RK_OK);
	REQ(got.n == 1 && got.r[0].offset == x && got.r[0].length == 16384 && got.fault[0][0] == role);
	REQ(st.stripes == a.g.nstripes);
	uint64_t f, l;
	REQ(rk_scrub_range(&a.g, x, 1, &f, &l) == RK_OK && f == 6 && l == 7);
	REQ(rk_scrub_range(&a.g, 0, 0, &f, &l) == RK_OK && f == 0 && l == a.g.nstripes);
	REQ(rk_scrub_range(&a.g, a.g.volume_size, 1, &f, &l) == RK_E_RANGE);
	REQ(rk_scrub_range(&a.g, 1, UINT64_MAX, &f, &l) == RK_E_RANGE);
	REQ(scrub(&a, 0, 0, a.g.nstripes + 1, &got, &st, 0) == RK_E_RANGE);
	arr_free(&a);
}
END_TEST

struct stopper { uint64_t calls, stop_at; };
static int stop_cb(void *ctx, uint64_t next, uint64_t done)
{
	struct stopper *s = ctx;
	(void)next;
	(void)done;
	return ++s->calls >= s->stop_at;
}

START_TEST(test_stop_resume)
{
	struct arr a;
	arr_make(&a, 5, RK_ALG_LEFT_SYMMETRIC, 65536, 4, MSIZE);
	uint64_t x = (a.g.nstripes - 2) * a.g.stripe_data;
	flip_vol(&a, x, 512);
	struct stopper sp = { 0, 1 };
	struct rk_scrub_opts o = { .on_progress = stop_cb, .ctx = &sp, .batch = 4 * 65536 };
	struct rk_scrub_stats st;
	REQ(rk_scrub_run(&a.g, a.devs, a.doff, 0, a.g.nstripes, &o, &st) == RK_OK);
	REQ(st.stopped && st.next == 4 && st.mismatches == 0);
	struct rk_scrub_ckpt c = { .first = 0, .last = a.g.nstripes, .next = st.next, .repair = 0, .unreadable = 3,
	                           .unrecoverable = 1 }, c2;
	memset(c.uuid, 0xab, 16);
	char path[] = "/tmp/test_scrub_ckpt.XXXXXX";
	int fd = mkstemp(path);
	REQ(fd >= 0);
	close(fd);
	REQ(rk_scrub_ckpt_save(path, &c) == RK_OK);
	REQ(rk_scrub_ckpt_load(path, &c2) == RK_OK);
	REQ(c2.next == 4 && c2.last == a.g.nstripes && c2.uuid[15] == 0xab && !c2.repair);
	REQ(c2.unreadable == 3 && c2.unrecoverable == 1);
	struct got got;
	REQ(scrub(&a, 0, c2.next, c2.last, &got, &st, 0) == RK_OK);
	REQ(got.n == 1 && got.r[0].stripe == a.g.nstripes - 2);
	/* a file of an older version (no unreadable counts) loads with zeros */
	FILE *f = fopen(path, "w");
	REQ(f);
	fputs("raid-scrub checkpoint 1\nuuid abababababababababababababababab\nfirst 0\nlast 9\nnext 4\n"
	      "mismatches 2\nrepaired 0\nrepair 0\n", f);
	fclose(f);
	REQ(rk_scrub_ckpt_load(path, &c2) == RK_OK && c2.mismatches == 2 && c2.unreadable == 0 && c2.unrecoverable == 0);
	/* a damaged checkpoint is refused */
	f = fopen(path, "w");
	REQ(f);
	fputs("raid-scrub checkpoint 1\nnext 5\n", f);
	fclose(f);
	REQ(rk_scrub_ckpt_load(path, &c2) == RK_E_CORRUPT);
	unlink(path);
	REQ(rk_scrub_ckpt_load(path, &c2) == RK_E_OPEN);
	arr_free(&a);
}
END_TEST

START_TEST(test_no_redundancy)
{
	struct arr a;
	arr_make(&a, 0, 0, 65536, 3, MSIZE);
	struct got got;
	struct rk_scrub_stats st;
	REQ(scrub(&a, 0, 0, a.g.nstripes, &got, &st, 0) == RK_E_NOTSUP);
	arr_free(&a);
	arr_make(&a, 5, RK_ALG_LEFT_SYMMETRIC, 65536, 3, MSIZE);
	rk_dev *k = a.devs[2];
	a.devs[2] = NULL;
	REQ(scrub(&a, 0, 0, a.g.nstripes, &got, &st, 0) == RK_E_TOOFEW);
	a.devs[2] = k;
	arr_free(&a);
}
END_TEST

/* Members as temporary files: cached ranges are read by the checkers in
 * staged pieces (the stripe at fault then read whole for its analysis), a
 * repair's pwrite is seen by the next check, and the copying path (no_map)
 * agrees. */
START_TEST(test_files_mapped)
{
	struct rk_geom g;
	REQ(rk_geom_init(&g, 6, RK_ALG_LEFT_SYMMETRIC, 65536, 5, MSIZE) == RK_OK);
	char dir[] = "/tmp/test_scrub.XXXXXX";
	REQ(mkdtemp(dir));
	rk_dev *devs[MAXR];
	uint64_t doff[MAXR];
	char path[MAXR][64];
	for (uint32_t r = 0; r < 5; r++) {
		snprintf(path[r], sizeof path[r], "%s/m%u", dir, r);
		REQ(rk_dev_create(&devs[r], path[r], DOFF + g.member_size) == RK_OK);
		doff[r] = DOFF;
	}
	uint8_t *vol = malloc(g.volume_size), *back = malloc(g.volume_size);
	REQ(vol && back);
	for (uint64_t i = 0; i < g.volume_size; i++)
		vol[i] = (uint8_t)rnd();
	rk_vol *v;
	REQ(rk_vol_open(&v, &g, devs, doff) == RK_OK);
	REQ(rk_vol_write(v, vol, g.volume_size, 0) == RK_OK);
	rk_vol_close(v);
	struct rk_loc l;
	uint64_t x = 9 * g.stripe_data + 3 * 65536 + 4096;
	REQ(rk_geom_map(&g, x, &l, NULL) == RK_OK);
	uint8_t blk[2048];
	REQ(rk_dev_pread(devs[l.role], blk, sizeof blk, DOFF + l.member_off) == RK_OK);
	for (size_t i = 0; i < sizeof blk; i++)
		blk[i] ^= 0x3c;
	REQ(rk_dev_pwrite(devs[l.role], blk, sizeof blk, DOFF + l.member_off) == RK_OK);
	for (int no_map = 0; no_map < 2; no_map++) {
		struct got got;
		struct rk_scrub_stats st;
		struct rk_scrub_opts o = { .on_region = on_region, .ctx = &got, .no_map = no_map };
		memset(&got, 0, sizeof got);
		REQ(rk_scrub_run(&g, devs, doff, 0, g.nstripes, &o, &st) == RK_OK);
		REQ(got.n == 1 && got.r[0].offset == x && got.r[0].length == sizeof blk && got.fault[0][0] == l.role);
	}
	struct got got;
	struct rk_scrub_stats st;
	struct rk_scrub_opts o = { .repair = 1, .on_region = on_region, .ctx = &got };
	memset(&got, 0, sizeof got);
	REQ(rk_scrub_run(&g, devs, doff, 0, g.nstripes, &o, &st) == RK_OK && st.repaired == 1);
	o.repair = 0;
	memset(&got, 0, sizeof got);
	REQ(rk_scrub_run(&g, devs, doff, 0, g.nstripes, &o, &st) == RK_OK && got.n == 0);
	REQ(rk_vol_open(&v, &g, devs, doff) == RK_OK);
	REQ(rk_vol_read(v, back, g.volume_size, 0) == RK_OK);
	rk_vol_close(v);
	REQ(!memcmp(vol, back, g.volume_size));
	for (uint32_t r = 0; r < 5; r++) {
		rk_dev_close(devs[r]);
		unlink(path[r]);
	}
	rmdir(dir);
	free(vol);
	free(back);
}
END_TEST

/* The read-only check kernels of every variant this CPU runs agree with
 * gen / xor_gen and a compare: clean stripes pass, one changed byte in any
 * block (data, P, Q), at any length and alignment, is seen. */
START_TEST(test_check_kernels)
{
	const struct rk_parity_algo *const *al = rk_parity_algos();
	static const size_t lens[] = { 1, 7, 63, 64, 65, 127, 128, 129, 191, 255, 256, 257, 1000, 4096, 65536 + 67 };
	for (size_t v = 0; al[v]; v++) {
		const struct rk_parity_algo *a = al[v];
		if (!a->valid())
			continue;
		REQ(a->check && a->xor_check);
		for (int disks = 3; disks <= 20; disks += disks < 8 ? 1 : 6)
			for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
				size_t n = lens[li], mis = (size_t)(disks * 7 + li) % 64;   /* unaligned starts */
				uint8_t *mem[24];
				void *p[24];
				for (int i = 0; i < disks; i++) {
					REQ(mem[i] = malloc(n + 64));
					p[i] = mem[i] + mis;
					for (size_t k = 0; k < n; k++)
						((uint8_t *)p[i])[k] = (uint8_t)rnd();
				}
				rk_parity_ref.gen(disks, n, p);
				REQ(a->check(disks, n, p) == 0);
				size_t at = (size_t)(rnd() % n);
				int blk = (int)(rnd() % (uint64_t)disks);
				uint8_t *b = (uint8_t *)p[blk] + at, old = *b;
				*b ^= (uint8_t)(1 + rnd() % 255);
				REQ(a->check(disks, n, p) != 0);
				*b = old;
				/* P as the XOR of the first disks-1 blocks */
				rk_parity_ref.xor_gen(disks, n, p);
				REQ(a->xor_check(disks, n, p) == 0);
				b = (uint8_t *)p[blk] + at;
				*b ^= (uint8_t)(1 + rnd() % 255);
				REQ(a->xor_check(disks, n, p) != 0);
				for (int i = 0; i < disks; i++)
					free(mem[i]);
			}
	}
}
END_TEST

/* The checker threads only sort clean stripes from the others: any number
 * of them (and any batch size) gives the same regions in the same order as
 * the caller's thread alone, on full and degraded parity arrays and on
 * mirrors, with bad blocks in many stripes. */
START_TEST(test_checkers_agree)
{
	static const struct lv geo[] = {
		{ 6, RK_ALG_LEFT_SYMMETRIC, 6, 16384 },
		{ 5, RK_ALG_LEFT_SYMMETRIC, 4, 16384 },
		{ 1, 0, 3, 0 },
		{ 10, RK_R10_LAYOUT(3, 1, 0), 4, 16384 },
	};
	for (size_t gi = 0; gi < sizeof geo / sizeof geo[0]; gi++)
		for (int degraded = 0; degraded < 2; degraded++) {
			const struct lv *L = &geo[gi];
			if (degraded && L->level != 6)
				continue;
			struct arr a;
			arr_make(&a, L->level, L->layout, L->chunk, L->n, MSIZE);
			for (int k = 0; k < 24; k++) {
				uint64_t x = rnd() % (a.g.volume_size - 4096);
				x -= x % 512;
				struct rk_loc l;
				uint64_t run;
				REQ(rk_geom_map(&a.g, x, &l, &run) == RK_OK);
				flip(&a, l.role, l.member_off, run < 1024 ? run / 512 * 512 : 1024);
			}
			rk_dev *gone = NULL;
			if (degraded) {
				gone = a.devs[1];
				a.devs[1] = NULL;
			}
			static struct got ref, got;
			struct rk_scrub_stats st0, st;
			struct rk_scrub_opts o = { .on_region = on_region, .ctx = &ref, .checkers = 1 };
			memset(&ref, 0, sizeof ref);
			REQ(rk_scrub_run(&a.g, a.devs, a.doff, 0, a.g.nstripes, &o, &st0) == RK_OK);
			REQ(ref.n >= 10 && st0.mismatches == ref.n);
			static const uint32_t nc[] = { 2, 3, 8 };
			static const uint64_t batch[] = { 0, 16384, 3 * 16384 };
			for (size_t i = 0; i < 3; i++) {
				o = (struct rk_scrub_opts){ .on_region = on_region, .ctx = &got, .checkers = nc[i], .batch = batch[i] };
				memset(&got, 0, sizeof got);
				REQ(rk_scrub_run(&a.g, a.devs, a.doff, 0, a.g.nstripes, &o, &st) == RK_OK);
				REQ(got.n == ref.n && st.stripes == st0.stripes && st.unchecked == st0.unchecked);
				for (uint32_t j = 0; j < got.n; j++) {
					REQ(got.r[j].stripe == ref.r[j].stripe && got.r[j].offset == ref.r[j].offset);
					REQ(got.r[j].length == ref.r[j].length && got.r[j].verdict == ref.r[j].verdict);
					REQ(got.r[j].nfault == ref.r[j].nfault);
					REQ(!memcmp(got.fault[j], ref.fault[j], sizeof got.fault[j]));
				}
			}
			if (degraded)
				a.devs[1] = gone;
			arr_free(&a);
		}
}
END_TEST

RK_TEST_SUITE("scrub", { "scrub", 120, NULL, NULL, 0,
	  RK_TESTS(RK_TEST_LOOP(test_clean, 0, (int)NLEVELS),
	           RK_TEST_LOOP(test_flip_each_level, 0, (int)NLEVELS),
	           RK_TEST(test_raid6_roles),
	           RK_TEST(test_raid6_two_bad),
	           RK_TEST(test_raid5_repair_unlocated),
	           RK_TEST(test_raid6_degraded),
	           RK_TEST(test_mirror_majority),
	           RK_TEST(test_range_and_slices),
	           RK_TEST(test_stop_resume),
	           RK_TEST(test_no_redundancy),
	           RK_TEST(test_files_mapped),
	           RK_TEST(test_check_kernels),
	           RK_TEST(test_checkers_agree)) })
