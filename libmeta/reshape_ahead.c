/* reshape_ahead.c: the read-ahead of a forward reshape.  One thread reads
 * the old geometry step by step into two buffers while the caller writes
 * the step before through the new geometry, flushes and records the
 * checkpoint: reading, parity and writing overlap.  A step wider than
 * the budget (one stripe of a wide array) gets one buffer: the reader then
 * waits for the writer, and memory stays one stripe.
 *
 * Why it is safe (spec/reshape.md, "Order of writes"): the steps are read
 * in volume order, and the reader is never more than one step ahead of the
 * writer.  A step read holds volume bytes at or past the writer's window
 * start P, whose old blocks lie at or above lo_old(P); every write of the
 * window lands below shift + lo_old(P) (the ordering rule), so no write
 * ever touches an old block the reader is reading, and nothing the reader
 * does writes (read-error repairs rewrite old blocks being read, in place,
 * as before).  The checkpoints stay where they were: after each window's
 * writes and flush, in the caller. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resize_int.h"
#include "rk_pool.h"

/* Old volume bytes advised ahead of the step being read, so the members'
 * disks always have reads queued.  The advice names only the chunks the
 * reads take (rk_vol_advise_read: no parity while healthy), and pages it
 * brings in carry no readahead mark, so the kernel's own readahead, which
 * would also fetch the parity chunks between them (a third more reads on a
 * RAID-5 of 4), stays off.  Page cache, not memory of ours; advice only
 * reads, so it never changes what the ordering rule protects. */
#define AHEAD_ADVISE (32ull << 20)
#define AHEAD_ADVISE_PIECE (8ull << 20)

struct ahead_slot {
	uint8_t *buf;
	uint64_t off, len;       /* volume bytes [off, off+len), zeros past the old volume */
	int ready;               /* read (or failed), waiting for the writer */
	rk_err err;
	char msg[512];
};

struct reshape_ahead {
	const struct reshape_steps *plan;
	rk_vol *vo;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct ahead_slot slot[2];
	uint32_t nslots;         /* 2, or 1 when a step is a wide stripe (plan->slots) */
	uint32_t next_take;      /* slot the writer takes next */
	uint64_t advised;        /* old volume bytes advised up to (reader thread) */
	void (*on_durable)(void *ctx, uint64_t p);
	void *ctx;
	uint64_t durable, told;  /* durable: from the writer (atomic); told: handed to on_durable (reader) */
	int quit, started;
};

/* The first step at or after OFF (a window start or a step start): its
 * length in volume bytes, within the window and capped at plan->step. */
uint64_t reshape_step_len(const struct reshape_steps *pl, uint64_t win, uint64_t win_len, uint64_t off)
{
	uint64_t left = win + win_len - off;
	return left < pl->step ? left : pl->step;
}

/* The window starting at P: its length in new stripes' bytes (0: none
 * fits, the caller's error). */
uint64_t reshape_window(const struct reshape_steps *pl, uint64_t p)
{
	uint64_t k = reshape_batch_rows(pl->go, pl->gn, pl->shift, pl->oldvol, p, pl->rows_max);
	return k * pl->gn->stripe_data;
}

/* Advises the old volume's members of the bytes from the step at OFF to
 * AHEAD_ADVISE past its end, in pieces of at least AHEAD_ADVISE_PIECE. */
static void advise_ahead(struct reshape_ahead *a, uint64_t off, uint64_t len)
{
	uint64_t oldvol = a->plan->oldvol, want = off + len + AHEAD_ADVISE;
	if (want > oldvol)
		want = oldvol;
	if (a->advised < off)
		a->advised = off;
	if (want > a->advised && (want - a->advised >= AHEAD_ADVISE_PIECE || want == oldvol)) {
		rk_vol_advise_read(a->vo, a->advised, want - a->advised, RK_DEV_ADV_READAHEAD, NULL, NULL);
		a->advised = want;
	}
}

/* Reads the step [off, off+len) of the old volume into S (zeros past it). */
static void read_step(struct reshape_ahead *a, struct ahead_slot *s, uint64_t off, uint64_t len)
{
	uint64_t oldvol = a->plan->oldvol;
	uint64_t rlen = off >= oldvol ? 0 : (oldvol - off < len ? oldvol - off : len);
	if (rlen)
		advise_ahead(a, off, rlen);
	s->off = off;
	s->len = len;
	s->err = rlen ? rk_vol_read(a->vo, s->buf, (size_t)rlen, off) : RK_OK;
	if (s->err)
		snprintf(s->msg, sizeof s->msg, "%s", rk_errmsg());
	else
		memset(s->buf + rlen, 0, (size_t)(len - rlen));
}

/* The reader: every step of every window from plan->from on, in order,
 * each into the next free slot; stops after an error or when told. */
static void *ahead_main(void *arg)
{
	struct reshape_ahead *a = arg;
	const struct reshape_steps *pl = a->plan;
	uint32_t k = 0;
	for (uint64_t p = pl->from; p < pl->oldvol;) {
		uint64_t wl = reshape_window(pl, p);
		if (!wl)
			break;   /* the writer fails on the same window */
		for (uint64_t q = p; q < p + wl;) {
			uint64_t len = reshape_step_len(pl, p, wl, q);
			struct ahead_slot *s = &a->slot[k];
			pthread_mutex_lock(&a->mu);
			while (s->ready && !a->quit)
				pthread_cond_wait(&a->cv, &a->mu);
			int quit = a->quit;
			pthread_mutex_unlock(&a->mu);
			if (quit)
				return NULL;
			uint64_t d = __atomic_load_n(&a->durable, __ATOMIC_ACQUIRE);
			if (a->on_durable && d > a->told) {
				a->on_durable(a->ctx, d);
				a->told = d;
			}
			read_step(a, s, q, len);
			pthread_mutex_lock(&a->mu);
			s->ready = 1;
			pthread_cond_broadcast(&a->cv);
			pthread_mutex_unlock(&a->mu);
			if (s->err)
				return NULL;
			k = (k + 1) % a->nslots;
			q += len;
		}
		p += wl < pl->oldvol - p ? wl : pl->oldvol - p;
	}
	return NULL;
}

rk_err reshape_ahead_start(struct reshape_ahead **out, const struct reshape_steps *plan, rk_vol *vo,
                           void (*on_durable)(void *ctx, uint64_t p), void *ctx)
{
	struct reshape_ahead *a = calloc(1, sizeof *a);
	*out = NULL;
	if (!a)
		return rk_fail(RK_E_NOMEM, "out of memory");
	a->plan = plan;
	a->vo = vo;
	a->on_durable = on_durable;
	a->ctx = ctx;
	a->nslots = plan->slots == 1 ? 1 : 2;
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	for (uint32_t i = 0; i < a->nslots; i++)
		if (!(a->slot[i].buf = malloc((size_t)plan->step))) {
			reshape_ahead_stop(a);
			return rk_fail(RK_E_NOMEM, "out of memory for a reshape step of %llu bytes",
			               (unsigned long long)plan->step);
		}
	if (rk_thread_start(&a->th, ahead_main, a)) {
		reshape_ahead_stop(a);
		return rk_fail(RK_E_NOMEM, "cannot start the reshape's reader thread");
	}
	a->started = 1;
	*out = a;
	return RK_OK;
}

rk_err reshape_ahead_take(struct reshape_ahead *a, uint64_t off, uint64_t len, const uint8_t **buf)
{
	struct ahead_slot *s = &a->slot[a->next_take];
	pthread_mutex_lock(&a->mu);
	while (!s->ready)
		pthread_cond_wait(&a->cv, &a->mu);
	pthread_mutex_unlock(&a->mu);
	if (s->err)
		return rk_fail(s->err, "%s", s->msg);
	if (s->off != off || s->len != len)   /* both sides follow one plan */
		return rk_fail(RK_E_CORRUPT, "reshape read-ahead out of step: %llu+%llu read, %llu+%llu wanted",
		               (unsigned long long)s->off, (unsigned long long)s->len, (unsigned long long)off,
		               (unsigned long long)len);
	*buf = s->buf;
	return RK_OK;
}

void reshape_ahead_done(struct reshape_ahead *a)
{
	struct ahead_slot *s = &a->slot[a->next_take];
	pthread_mutex_lock(&a->mu);
	s->ready = 0;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	a->next_take = (a->next_take + 1) % a->nslots;
}

void reshape_ahead_durable(struct reshape_ahead *a, uint64_t p)
{
	__atomic_store_n(&a->durable, p, __ATOMIC_RELEASE);
}

void reshape_ahead_stop(struct reshape_ahead *a)
{
	if (!a)
		return;
	if (a->started) {
		pthread_mutex_lock(&a->mu);
		a->quit = 1;
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
		pthread_join(a->th, NULL);
	}
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->cv);
	free(a->slot[0].buf);
	free(a->slot[1].buf);
	free(a);
}
