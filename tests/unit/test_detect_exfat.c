/* test_detect_exfat.c: exFAT's predictions about its own layout
 * (libmeta/detect_exfat.c), on a hand-made exFAT (512-byte sectors, 4 KiB
 * clusters): through a hypothesis reading the image as the volume the
 * root directory (bitmap and up-case entries), the up-case table's
 * checksum and two nested subdirectories all hold; one cluster off
 * nothing holds, six off (a subdirectory where the root should be) the
 * root fails; an entry set whose checksum was broken fails its
 * directory; a quick look stops at its limit.  The last clusters of
 * contiguous files hold their ends and zeros (t_tails). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "detect_int.h"
#include "rk_le.h"
#include "helpers/detect_hyp.h"
#include "helpers/rk_test.h"

#define CL 4096u
#define HEAP (128u * 1024u)
#define NCL 64u
#define IMG (HEAP + NCL * CL)
#define UPLEN 1000u

static uint8_t *clus(uint8_t *img, uint32_t k) { return img + HEAP + (k - 2) * CL; }

/* The image: boot sector, root directory at cluster 4 naming the bitmap
 * (cluster 2), the up-case table (cluster 3), directory d1 (cluster 10)
 * and a file; d1 holds directory d2 (cluster 30) and a file; d2 a file. */
static uint8_t *image(void)
{
	uint8_t *img = calloc(1, IMG);
	RK_REQUIRE(img);
	memcpy(img, "\xEB\x76\x90" "EXFAT   ", 11);
	rk_put_le32(img + 0x50, 128);          /* FAT offset, sectors */
	rk_put_le32(img + 0x54, 8);
	rk_put_le32(img + 0x58, HEAP / 512);   /* cluster heap offset */
	rk_put_le32(img + 0x5C, NCL);
	rk_put_le32(img + 0x60, 4);            /* root directory */
	img[0x6C] = 9;
	img[0x6D] = 3;
	img[510] = 0x55;
	img[511] = 0xAA;
	uint8_t *up = clus(img, 3);
	uint32_t sum = 0;
	for (uint32_t i = 0; i < UPLEN; i++) {
		up[i] = (uint8_t)(i * 13 + 7);
		sum = ((sum & 1) ? 0x80000000u : 0) + (sum >> 1) + up[i];
	}
	memset(clus(img, 2), 0xFF, 8);
	uint8_t *r = clus(img, 4);
	r[0] = 0x83;
	r[32] = 0x81;
	rk_put_le32(r + 32 + 20, 2);
	rk_put_le64(r + 32 + 24, 8);
	r[64] = 0x82;
	rk_put_le32(r + 64 + 4, sum);
	rk_put_le32(r + 64 + 20, 3);
	rk_put_le64(r + 64 + 24, UPLEN);
	uint32_t n = 3;
	n += dt_test_exfat_set(r + 32 * n, "d1", 1, 10, CL);
	dt_test_exfat_set(r + 32 * n, "f", 0, 20, 5000);
	n = dt_test_exfat_set(clus(img, 10), "d2", 1, 30, CL);
	dt_test_exfat_set(clus(img, 10) + 32 * n, "g", 0, 40, 100);
	dt_test_exfat_set(clus(img, 30), "h", 0, 50, 100);
	for (uint32_t k = 20; k < 22; k++)   /* file data: not directory entries */
		memset(clus(img, k), 0x5A, CL);
	return img;
}

/* Probes the image IMG written to the test folder through a hypothesis
 * from START (LIMIT as dt_exfat_probe). */
static void probe(const uint8_t *img, uint64_t start, uint32_t limit, struct dt_hyp *h)
{
	rk_test_spit(rk_test_path("ex"), img, IMG);
	char *p[] = { strdup(rk_test_path("ex")) };
	struct dt_ctx c;
	memset(&c, 0, sizeof c);
	RK_REQUIRE(dt_open(&c, p, 1) == RK_OK);
	dt_test_hyp_linear(h, start, IMG);
	dt_exfat_probe(&c, h, 0, limit, img);
	dt_close(&c);
	free(p[0]);
}

START_TEST(t_probe)
{
	uint8_t *img = image();
	struct dt_hyp h;
	probe(img, 0, 0, &h);
	/* the root, the up-case table, d1 and d2 */
	RK_REQUIRE_MSG(h.probe_ok == 4 && h.probe_bad == 0, "ok %u bad %u", h.probe_ok, h.probe_bad);
	probe(img, 0, 2, &h);   /* a quick look stops at its limit */
	RK_REQUIRE_MSG(h.probe_ok == 2 && h.probe_bad == 0, "ok %u bad %u", h.probe_ok, h.probe_bad);
	probe(img, CL, 0, &h);  /* a cluster off: the root reads as zeros, nothing to confirm */
	RK_REQUIRE_MSG(h.probe_ok == 0 && h.probe_bad == 0, "ok %u bad %u", h.probe_ok, h.probe_bad);
	probe(img, 6 * CL, 0, &h);  /* six off: d1 where the root should be, without the bitmap and up-case */
	RK_REQUIRE_MSG(h.probe_ok == 0 && h.probe_bad == 1, "ok %u bad %u", h.probe_ok, h.probe_bad);
	clus(img, 30)[40] ^= 1;  /* d2's entry set no longer matches its checksum */
	probe(img, 0, 0, &h);
	RK_REQUIRE_MSG(h.probe_ok == 3 && h.probe_bad == 1, "ok %u bad %u", h.probe_ok, h.probe_bad);
	clus(img, 30)[40] ^= 1;
	clus(img, 4)[64] = 0x05;  /* the up-case entry deleted: the root is not exFAT's */
	probe(img, 0, 0, &h);
	RK_REQUIRE_MSG(h.probe_bad >= 1, "ok %u bad %u", h.probe_ok, h.probe_bad);
	free(img);
}
END_TEST

/* File tails (probe_tails): d2 also lists ten contiguous files, one a
 * cluster from 51 on, each holding its bytes and then zeros, and f's
 * slack is zeroed (g and h, of 100 bytes, lie in clusters of zeros: neither
 * way): the eleven tails hold and count.  One slack soiled:
 * ten of eleven hold (nine in ten or more), so each counts either way.
 * Two soiled: nine of eleven, the slack not known zeroed, none counts. */
START_TEST(t_tails)
{
	uint8_t *img = image();
	memset(clus(img, 21) + (5000 - CL), 0, CL - (5000 - CL));
	uint32_t n = 3;   /* entries: d2 holds h already */
	for (uint32_t k = 0; k < 10; k++) {
		char name[4] = { 't', (char)('0' + k), 0, 0 };
		uint32_t len = 1000 + 100 * k;
		n += dt_test_exfat_set(clus(img, 30) + 32 * n, name, 0, 51 + k, len);
		memset(clus(img, 51 + k), 0x33 + (int)k, len);
	}
	struct dt_hyp h;
	probe(img, 0, 0, &h);
	RK_REQUIRE_MSG(h.probe_ok == 4 + 11 && h.probe_bad == 0, "ok %u bad %u", h.probe_ok, h.probe_bad);
	clus(img, 52)[1100 + 20] = 1;
	probe(img, 0, 0, &h);
	RK_REQUIRE_MSG(h.probe_ok == 4 + 10 && h.probe_bad == 1, "one soiled: ok %u bad %u", h.probe_ok, h.probe_bad);
	clus(img, 53)[1200 + 20] = 1;
	probe(img, 0, 0, &h);
	RK_REQUIRE_MSG(h.probe_ok == 4 && h.probe_bad == 0, "two soiled: ok %u bad %u", h.probe_ok, h.probe_bad);
	free(img);
}
END_TEST

RK_TEST_SUITE("detect_exfat", { "exfat", 30, rk_test_tmpdir_make, rk_test_tmpdir_remove, 0,
	  RK_TESTS(RK_TEST(t_probe), RK_TEST(t_tails)) })
