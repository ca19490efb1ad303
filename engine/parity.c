/* parity.c: the table of parity variants, the choice of one at first use,
 * GF(2^8) arithmetic (polynomial 0x11d, generator 2, as Linux md), and the
 * one-call recovery of any one or two lost blocks. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "parity_int.h"

/* Generated from the definition (x = g^i, g = 2, reduce by 0x11d); the unit
 * tests check them against shift-and-add multiplication. */
static const uint8_t gf_exp[256] = {
	0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1d, 0x3a, 0x74, 0xe8, 0xcd, 0x87, 0x13, 0x26,
	0x4c, 0x98, 0x2d, 0x5a, 0xb4, 0x75, 0xea, 0xc9, 0x8f, 0x03, 0x06, 0x0c, 0x18, 0x30, 0x60, 0xc0,
	0x9d, 0x27, 0x4e, 0x9c, 0x25, 0x4a, 0x94, 0x35, 0x6a, 0xd4, 0xb5, 0x77, 0xee, 0xc1, 0x9f, 0x23,
	0x46, 0x8c, 0x05, 0x0a, 0x14, 0x28, 0x50, 0xa0, 0x5d, 0xba, 0x69, 0xd2, 0xb9, 0x6f, 0xde, 0xa1,
	0x5f, 0xbe, 0x61, 0xc2, 0x99, 0x2f, 0x5e, 0xbc, 0x65, 0xca, 0x89, 0x0f, 0x1e, 0x3c, 0x78, 0xf0,
	0xfd, 0xe7, 0xd3, 0xbb, 0x6b, 0xd6, 0xb1, 0x7f, 0xfe, 0xe1, 0xdf, 0xa3, 0x5b, 0xb6, 0x71, 0xe2,
	0xd9, 0xaf, 0x43, 0x86, 0x11, 0x22, 0x44, 0x88, 0x0d, 0x1a, 0x34, 0x68, 0xd0, 0xbd, 0x67, 0xce,
	0x81, 0x1f, 0x3e, 0x7c, 0xf8, 0xed, 0xc7, 0x93, 0x3b, 0x76, 0xec, 0xc5, 0x97, 0x33, 0x66, 0xcc,
	0x85, 0x17, 0x2e, 0x5c, 0xb8, 0x6d, 0xda, 0xa9, 0x4f, 0x9e, 0x21, 0x42, 0x84, 0x15, 0x2a, 0x54,
	0xa8, 0x4d, 0x9a, 0x29, 0x52, 0xa4, 0x55, 0xaa, 0x49, 0x92, 0x39, 0x72, 0xe4, 0xd5, 0xb7, 0x73,
	0xe6, 0xd1, 0xbf, 0x63, 0xc6, 0x91, 0x3f, 0x7e, 0xfc, 0xe5, 0xd7, 0xb3, 0x7b, 0xf6, 0xf1, 0xff,
	0xe3, 0xdb, 0xab, 0x4b, 0x96, 0x31, 0x62, 0xc4, 0x95, 0x37, 0x6e, 0xdc, 0xa5, 0x57, 0xae, 0x41,
	0x82, 0x19, 0x32, 0x64, 0xc8, 0x8d, 0x07, 0x0e, 0x1c, 0x38, 0x70, 0xe0, 0xdd, 0xa7, 0x53, 0xa6,
	0x51, 0xa2, 0x59, 0xb2, 0x79, 0xf2, 0xf9, 0xef, 0xc3, 0x9b, 0x2b, 0x56, 0xac, 0x45, 0x8a, 0x09,
	0x12, 0x24, 0x48, 0x90, 0x3d, 0x7a, 0xf4, 0xf5, 0xf7, 0xf3, 0xfb, 0xeb, 0xcb, 0x8b, 0x0b, 0x16,
	0x2c, 0x58, 0xb0, 0x7d, 0xfa, 0xe9, 0xcf, 0x83, 0x1b, 0x36, 0x6c, 0xd8, 0xad, 0x47, 0x8e, 0x01,
};

/* gf_log and gf_inv follow from gf_exp (log: the inverse map; a^-1 =
 * g^(255 - log a)); filled once at load, before any kernel can run. */
static uint8_t gf_log[256], gf_inv[256];

__attribute__((constructor)) static void gf_tables_init(void)
{
	for (unsigned i = 0; i < 255; i++)
		gf_log[gf_exp[i]] = (uint8_t)i;
	for (unsigned a = 1; a < 256; a++)
		gf_inv[a] = gf_exp[(255u - gf_log[a]) % 255u];
}

uint8_t rk_gf_mul(uint8_t a, uint8_t b)
{
	if (!a || !b)
		return 0;
	return gf_exp[(gf_log[a] + gf_log[b]) % 255];
}

uint8_t rk_gf_inv(uint8_t a)
{
	return gf_inv[a];
}

uint8_t rk_gf_exp(unsigned i)
{
	return gf_exp[i % 255];
}

int rk_gf_log(uint8_t a)
{
	return a ? gf_log[a] : -1;
}

void rk_rec2_consts(int faila, int failb, uint8_t *cp, uint8_t *cq)
{
	uint8_t gx = rk_gf_exp((unsigned)faila), gy = rk_gf_exp((unsigned)failb);
	*cq = rk_gf_inv(gx ^ gy);
	*cp = rk_gf_mul(gy, *cq);
}

uint64_t rk_gf_affine(uint8_t c)
{
	/* Output bit i of c*x is the parity of x AND row i, where bit j of row i
	 * is bit i of c*2^j; GF2P8AFFINEQB takes row i from byte 7-i. */
	uint64_t m = 0;
	for (unsigned i = 0; i < 8; i++) {
		unsigned row = 0;
		for (unsigned j = 0; j < 8; j++)
			if (rk_gf_mul(c, (uint8_t)(1u << j)) >> i & 1)
				row |= 1u << j;
		m |= (uint64_t)row << (8 * (7 - i));
	}
	return m;
}

/* GF2P8AFFINEQB matrices of multiplication by g^i (rk_gf_affine(rk_gf_exp(i))),
 * for i = 0..254; the unit tests check them. */
const uint64_t rk_gf_affine_pow2[255] = {
	0x0102040810204080ull, 0x8001828488102040ull, 0x408041c2c4881020ull,
	0x2040a061e2c48810ull, 0x102050b071e2c488ull, 0x8810a8d83871e2c4ull,
	0xc488d46c1c3871e2ull, 0xe2c46a368e1c3871ull, 0x71e2b51b478e1c38ull,
	0x3871da8d23478e1cull, 0x1c386dc69123478eull, 0x8e1cb6e348912347ull,
	0x478e5bf1a4489123ull, 0x2347ad78d2a44891ull, 0x9123d63ce9d2a448ull,
	0x48916b9e74e9d2a4ull, 0xa44835cf3a74e9d2ull, 0xd2a49ae71d3a74e9ull,
	0xe9d24d730e1d3a74ull, 0x74e9a639070e1d3aull, 0x3a74d39c03070e1dull,
	0x1d3a69ce8103070eull, 0x0e1d3467c0810307ull, 0x070e1a3360c08103ull,
	0x03070d193060c081ull, 0x8103868c983060c0ull, 0xc081c3464c983060ull,
	0x60c0e1a3264c9830ull, 0x3060f0d193264c98ull, 0x9830f8684993264cull,
	0x4c987cb424499326ull, 0x264cbe5a92244993ull, 0x9326df2dc9922449ull,
	0x49936f9664c99224ull, 0x2449b74bb264c992ull, 0x9224db25d9b264c9ull,
	0xc992ed12ecd9b264ull, 0x64c9f68976ecd9b2ull, 0xb2647b443b76ecd9ull,
	0xd9b2bda29d3b76ecull, 0xecd95e514e9d3b76ull, 0x76ecaf28274e9d3bull,
	0x3b76d79413274e9dull, 0x9d3beb4a0913274eull, 0x4e9d75a504091327ull,
	0x274eba5282040913ull, 0x13275da941820409ull, 0x09132e54a0418204ull,
	0x0409172a50a04182ull, 0x82048b95a850a041ull, 0x418245cad4a850a0ull,
	0xa04122e56ad4a850ull, 0x50a01172b56ad4a8ull, 0xa85008b9dab56ad4ull,
	0xd4a884dc6ddab56aull, 0x6ad4c2eeb66ddab5ull, 0xb56a61775bb66ddaull,
	0xdab5b0bbad5bb66dull, 0x6ddad8ddd6ad5bb6ull, 0xb66d6c6e6bd6ad5bull,
	0x5bb63637356bd6adull, 0xad5b1b9b9a356bd6ull, 0xd6ad8dcd4d9a356bull,
	0x6bd6c6e6a64d9a35ull, 0x356be3f3d3a64d9aull, 0x9a35f17969d3a64dull,
	0x4d9a78bc3469d3a6ull, 0xa64d3cde1a3469d3ull, 0xd3a69eef0d1a3469ull,
	0x69d3cff7860d1a34ull, 0x3469e7fbc3860d1aull, 0x1a3473fde1c3860dull,
	0x0d1a397ef0e1c386ull, 0x860d9cbff8f0e1c3ull, 0xc386ce5f7cf8f0e1ull,
	0xe1c3672fbe7cf8f0ull, 0xf0e13397dfbe7cf8ull, 0xf8f019cb6fdfbe7cull,
	0x7cf88c65b76fdfbeull, 0xbe7c4632dbb76fdfull, 0xdfbea399eddbb76full,
	0x6fdfd1ccf6eddbb7ull, 0xb76f68667bf6eddbull, 0xdbb7b4b3bd7bf6edull,
	0xeddb5a595ebd7bf6ull, 0xf6ed2dacaf5ebd7bull, 0x7bf69656d7af5ebdull,
	0xbd7b4b2bebd7af5eull, 0x5ebd251575ebd7afull, 0xaf5e128aba75ebd7ull,
	0xd7af89c55dba75ebull, 0xebd744622e5dba75ull, 0x75eba231172e5dbaull,
	0xba7551188b172e5dull, 0x5dba280c458b172eull, 0x2e5d940622458b17ull,
	0x172e4a831122458bull, 0x8b17a5c108112245ull, 0x458b52e084081122ull,
	0x2245a970c2840811ull, 0x112254b861c28408ull, 0x08112a5cb061c284ull,
	0x840895aed8b061c2ull, 0xc284ca576cd8b061ull, 0x61c2e5ab366cd8b0ull,
	0xb06172551b366cd8ull, 0xd8b0b9aa8d1b366cull, 0x6cd8dcd5c68d1b36ull,
	0x366ceeeae3c68d1bull, 0x1b3677f5f1e3c68dull, 0x8d1bbbfa78f1e3c6ull,
	0xc68ddd7d3c78f1e3ull, 0xe3c66e3e9e3c78f1ull, 0xf1e3379fcf9e3c78ull,
	0x78f19b4fe7cf9e3cull, 0x3c78cda773e7cf9eull, 0x9e3ce6533973e7cfull,
	0xcf9ef3299c3973e7ull, 0xe7cf7914ce9c3973ull, 0x73e7bc0a67ce9c39ull,
	0x3973de853367ce9cull, 0x9c39ef42193367ceull, 0xce9cf7218c193367ull,
	0x67cefb90468c1933ull, 0x3367fdc8a3468c19ull, 0x19337ee4d1a3468cull,
	0x8c19bff268d1a346ull, 0x468c5ff9b468d1a3ull, 0xa3462ffc5ab468d1ull,
	0xd1a397fe2d5ab468ull, 0x68d1cbff962d5ab4ull, 0xb468657f4b962d5aull,
	0x5ab4323f254b962dull, 0x2d5a991f12254b96ull, 0x962dcc0f8912254bull,
	0x4b96668744891225ull, 0x254bb343a2448912ull, 0x122559a151a24489ull,
	0x8912acd02851a244ull, 0x448956e8942851a2ull, 0xa2442bf44a942851ull,
	0x51a2157aa54a9428ull, 0x28518a3d52a54a94ull, 0x9428c51ea952a54aull,
	0x4a94628f54a952a5ull, 0xa54a31c72a54a952ull, 0x52a51863952a54a9ull,
	0xa9520cb1ca952a54ull, 0x54a90658e5ca952aull, 0x2a54832c72e5ca95ull,
	0x952ac116b972e5caull, 0xca95e00bdcb972e5ull, 0xe5ca7005eedcb972ull,
	0x72e5b80277eedcb9ull, 0xb9725c01bb77eedcull, 0xdcb9ae80ddbb77eeull,
	0xeedc57406eddbb77ull, 0x77eeab20376eddbbull, 0xbb7755109b376eddull,
	0xddbbaa88cd9b376eull, 0x6eddd5c4e6cd9b37ull, 0x376eeae2f3e6cd9bull,
	0x9b37f57179f3e6cdull, 0xcd9bfa38bc79f3e6ull, 0xe6cd7d1cdebc79f3ull,
	0xf3e63e8eefdebc79ull, 0x79f39f47f7efdebcull, 0xbc794f23fbf7efdeull,
	0xdebca791fdfbf7efull, 0xefde53487efdfbf7ull, 0xf7ef29a4bf7efdfbull,
	0xfbf714d25fbf7efdull, 0xfdfb0ae92f5fbf7eull, 0x7efd8574972f5fbfull,
	0xbf7e423acb972f5full, 0x5fbf211d65cb972full, 0x2f5f900e3265cb97ull,
	0x972fc807993265cbull, 0xcb97e403cc993265ull, 0x65cbf28166cc9932ull,
	0x3265f9c0b366cc99ull, 0x9932fc6059b366ccull, 0xcc99fe30ac59b366ull,
	0x66ccff9856ac59b3ull, 0xb3667f4c2b56ac59ull, 0x59b33f26152b56acull,
	0xac591f938a152b56ull, 0x56ac0f49c58a152bull, 0x2b56872462c58a15ull,
	0x152b43923162c58aull, 0x8a15a1c9183162c5ull, 0xc58ad0640c183162ull,
	0x62c5e8b2060c1831ull, 0x3162f4d983060c18ull, 0x18317aecc183060cull,
	0x0c183d76e0c18306ull, 0x060c1e3b70e0c183ull, 0x83068f9db870e0c1ull,
	0xc183c74e5cb870e0ull, 0xe0c16327ae5cb870ull, 0x70e0b11357ae5cb8ull,
	0xb8705809ab57ae5cull, 0x5cb82c0455ab57aeull, 0xae5c1682aa55ab57ull,
	0x57ae0b41d5aa55abull, 0xab5705a0ead5aa55ull, 0x55ab0250f5ead5aaull,
	0xaa5501a8faf5ead5ull, 0xd5aa80d47dfaf5eaull, 0xead5406a3e7dfaf5ull,
	0xf5ea20b59f3e7dfaull, 0xfaf510da4f9f3e7dull, 0x7dfa886da74f9f3eull,
	0x3e7dc4b653a74f9full, 0x9f3ee25b2953a74full, 0x4f9f71ad142953a7ull,
	0xa74f38d60a142953ull, 0x53a71c6b850a1429ull, 0x29538e3542850a14ull,
	0x1429479a2142850aull, 0x0a14234d90214285ull, 0x850a91a6c8902142ull,
	0x428548d3e4c89021ull, 0x2142a469f2e4c890ull, 0x9021d234f9f2e4c8ull,
	0xc890e91afcf9f2e4ull, 0xe4c8740dfefcf9f2ull, 0xf2e43a86fffefcf9ull,
	0xf9f21dc37ffffefcull, 0xfcf90ee13f7ffffeull, 0xfefc07f01f3f7fffull,
	0xfffe03f80f1f3f7full, 0x7fff817c870f1f3full, 0x3f7fc0be43870f1full,
	0x1f3f60dfa143870full, 0x0f1f306fd0a14387ull, 0x870f98b7e8d0a143ull,
	0x43874cdbf4e8d0a1ull, 0xa14326ed7af4e8d0ull, 0xd0a193f63d7af4e8ull,
	0xe8d0497b1e3d7af4ull, 0xf4e824bd8f1e3d7aull, 0x7af4925ec78f1e3dull,
	0x3d7ac9af63c78f1eull, 0x1e3d64d7b163c78full, 0x8f1eb2eb58b163c7ull,
	0xc78fd9752c58b163ull, 0x63c7ecba162c58b1ull, 0xb163765d0b162c58ull,
	0x58b13b2e050b162cull, 0x2c589d1702050b16ull, 0x162c4e8b0102050bull,
	0x0b16274580010205ull, 0x050b132240800102ull, 0x0205091120408001ull,
};

/* Every variant compiled in, reference first. */
static const struct rk_parity_algo *const algos[] = {
	&rk_parity_ref,
	&rk_parity_ssse3,
	&rk_parity_avx2,
	&rk_parity_avx512,
	&rk_parity_gfni,
	NULL
};

const struct rk_parity_algo *const *rk_parity_algos(void)
{
	return algos;
}

const struct rk_parity_algo *rk_parity_find(const char *name)
{
	for (size_t i = 0; algos[i]; i++)
		if (!strcmp(algos[i]->name, name))
			return algos[i];
	return NULL;
}

static const struct rk_parity_algo *best(void)
{
	const struct rk_parity_algo *b = &rk_parity_ref;
	for (size_t i = 0; algos[i]; i++)
		if (algos[i]->priority > b->priority && algos[i]->valid())
			b = algos[i];
	return b;
}

const struct rk_parity_algo *rk_parity_select(const char *name)
{
	const struct rk_parity_algo *b = best();
	if (!name || !*name)
		return b;
	const struct rk_parity_algo *a = rk_parity_find(name);
	if (!a) {
		fprintf(stderr, "raidkit: RK_PARITY=%s: no such parity variant (have:", name);
		for (size_t i = 0; algos[i]; i++)
			fprintf(stderr, " %s", algos[i]->name);
		fprintf(stderr, "); using %s\n", b->name);
		return b;
	}
	if (!a->valid()) {
		fprintf(stderr, "raidkit: RK_PARITY=%s: this CPU cannot run it; using %s\n",
			name, b->name);
		return b;
	}
	return a;
}

static const struct rk_parity_algo *chosen;
static pthread_once_t chosen_once = PTHREAD_ONCE_INIT;

static void choose(void)
{
	chosen = rk_parity_select(getenv("RK_PARITY"));
}

const struct rk_parity_algo *rk_parity(void)
{
	pthread_once(&chosen_once, choose);
	return chosen;
}

/* Q regenerated from the data without touching P: gen() with P pointed at a
 * scratch block, a chunk at a time. */
static void regen_q(const struct rk_parity_algo *a, int disks, size_t bytes, void **ptrs)
{
	enum { CH = 16384 };
	_Alignas(64) uint8_t scratch[CH];
	void *t[RK_PARITY_MAX_DISKS];
	for (size_t o = 0; o < bytes; o += CH) {
		size_t n = bytes - o < CH ? bytes - o : CH;
		for (int i = 0; i < disks; i++)
			t[i] = (uint8_t *)ptrs[i] + o;
		t[disks - 2] = scratch;
		a->gen(disks, n, t);
	}
}

void rk_parity_recover(int disks, size_t bytes, int faila, int failb, void **ptrs)
{
	const struct rk_parity_algo *a = rk_parity();
	int nd = disks - 2, p = disks - 2, q = disks - 1;
	if (failb >= 0 && failb < faila) {
		int t = faila;
		faila = failb;
		failb = t;
	}
	if (faila < 0)
		return;
	if (faila < nd && failb >= 0 && failb < nd) {
		a->rec_2data(disks, bytes, faila, failb, ptrs);
	} else if (faila < nd && failb == p) {
		a->rec_datap(disks, bytes, faila, ptrs);
	} else if (faila < nd) {
		/* Data from P and the other data (xor_gen's destination is last),
		 * then Q if it is lost too. */
		void *t[RK_PARITY_MAX_DISKS];
		int n = 0;
		for (int i = 0; i <= p; i++)
			if (i != faila)
				t[n++] = ptrs[i];
		t[n++] = ptrs[faila];
		a->xor_gen(n, bytes, t);
		if (failb == q)
			regen_q(a, disks, bytes, ptrs);
	} else if (faila == p && failb == q) {
		a->gen(disks, bytes, ptrs);
	} else if (faila == p) {
		a->xor_gen(disks - 1, bytes, ptrs);
	} else {
		regen_q(a, disks, bytes, ptrs);
	}
}
