/* dev_fault.c: the fault-injecting backend.
 *
 * A plan is shared by the wrapped members of one array.  Writes are numbered
 * globally in issue order under the plan's mutex (the engine issues member
 * I/O from several threads).  Every random choice is a hash of the seed and
 * the write number (and sector index), so a run is reproducible by seed
 * whatever the thread interleaving of other writes.
 *
 * POWER_CUT buffers writes in the plan: a member's flush makes its logged
 * writes durable (they go to the lower device at once); rk_fault_crash()
 * decides the fate of the rest.
 */
#include "rk_dev.h"
#include "rk_le.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MEMBERS 4096

struct pc_entry {                /* one buffered POWER_CUT write */
	int      member;
	int      cut;                /* the write the power cut hit */
	uint64_t seq;
	uint64_t off;
	size_t   len;
	uint8_t *data;
};

struct bad_range { uint64_t off, end; };

struct fmember {
	rk_dev  *lower;              /* owned by the plan slot */
	int      used, open, pulled;
	uint64_t ios;                /* reads and writes seen (PULL) */
};

struct rk_fault_plan {
	struct rk_fault_spec spec;
	pthread_mutex_t mu;
	unsigned refs;
	uint64_t writes;
	int fired, dead, crashed;
	char why[96];                /* why every I/O now fails */
	struct fmember *m;
	int nm;
	struct pc_entry *log;
	size_t nlog, caplog;
	struct bad_range *bad;
	size_t nbad, capbad;
};

struct fault_priv {
	rk_fault_plan *p;
	int member;
};

/* splitmix64 finaliser */
static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t rnd(const rk_fault_plan *p, uint64_t seq, uint64_t j, uint64_t salt)
{
	return mix64(p->spec.seed ^ mix64(seq ^ mix64(j ^ mix64(salt))));
}

/* Pieces of [off, off+len) split at absolute sector boundaries. */
static uint64_t npieces(uint64_t off, size_t len, uint32_t sec)
{
	return (off + len - 1) / sec - off / sec + 1;
}

static void piece(uint64_t off, size_t len, uint32_t sec, uint64_t i, uint64_t *poff, size_t *plen)
{
	uint64_t a = (off / sec + i) * sec, b = a + sec, end = off + len;
	if (a < off)
		a = off;
	if (b > end)
		b = end;
	*poff = a;
	*plen = (size_t)(b - a);
}

static void destroy(rk_fault_plan *p)
{
	for (int i = 0; i < p->nm; i++)
		rk_dev_close(p->m[i].lower);
	for (size_t i = 0; i < p->nlog; i++)
		free(p->log[i].data);
	free(p->log);
	free(p->bad);
	free(p->m);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

rk_err rk_fault_plan_create(rk_fault_plan **out, const struct rk_fault_spec *spec)
{
	rk_fault_plan *p;
	uint64_t end;

	if (out)
		*out = NULL;
	if (!out || !spec)
		return rk_fail(RK_E_INVAL, "fault plan: no spec");
	if ((unsigned)spec->model > RK_FAULT_STOP)
		return rk_fail(RK_E_INVAL, "fault plan: unknown model %d", (int)spec->model);
	if ((spec->model == RK_FAULT_PULL || spec->model == RK_FAULT_READ_ERROR) &&
	    (spec->member < 0 || spec->member >= MAX_MEMBERS))
		return rk_fail(RK_E_INVAL, "fault plan: invalid member %d", spec->member);
	if (spec->model == RK_FAULT_READ_ERROR &&
	    (spec->len == 0 || rk_add_ovf(spec->off, spec->len, &end)))
		return rk_fail(RK_E_INVAL, "fault plan: invalid read error range");
	p = calloc(1, sizeof *p);
	if (!p)
		return rk_fail(RK_E_NOMEM, "fault plan: out of memory");
	p->spec = *spec;
	p->refs = 1;
	if (pthread_mutex_init(&p->mu, NULL) != 0) {
		free(p);
		return rk_fail(RK_E_NOMEM, "fault plan: cannot create a mutex");
	}
	if (spec->model == RK_FAULT_READ_ERROR) {
		p->bad = malloc(sizeof *p->bad);
		if (!p->bad) {
			destroy(p);
			return rk_fail(RK_E_NOMEM, "fault plan: out of memory");
		}
		p->bad[0].off = spec->off;
		p->bad[0].end = spec->off + spec->len;
		p->nbad = p->capbad = 1;
	}
	*out = p;
	return RK_OK;
}

rk_err rk_fault_spec_parse(const char *s, struct rk_fault_spec *spec)
{
	static const char *const models[] = { "none", "fail-write", "tear-write", "power-cut", "kill", "pull",
	                                      "read-error", "stop" };
	static const enum rk_fault_model ids[] = { RK_FAULT_NONE, RK_FAULT_FAIL_WRITE, RK_FAULT_TEAR_WRITE,
	                                           RK_FAULT_POWER_CUT, RK_FAULT_KILL, RK_FAULT_PULL,
	                                           RK_FAULT_READ_ERROR, RK_FAULT_STOP };
	char buf[256];
	memset(spec, 0, sizeof *spec);
	if (!s || strlen(s) >= sizeof buf)
		return rk_fail(RK_E_INVAL, "fault spec: missing or too long");
	snprintf(buf, sizeof buf, "%s", s);
	int have_model = 0;
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq)
			return rk_fail(RK_E_INVAL, "fault spec: '%s' is not key=value", tok);
		*eq++ = 0;
		if (!strcmp(tok, "model")) {
			size_t i = 0;
			while (i < sizeof models / sizeof models[0] && strcmp(models[i], eq))
				i++;
			if (i == sizeof models / sizeof models[0])
				return rk_fail(RK_E_INVAL, "fault spec: unknown model '%s'", eq);
			spec->model = ids[i];
			have_model = 1;
			continue;
		}
		char *end = NULL;
		errno = 0;
		unsigned long long v = strtoull(eq, &end, 0);
		if (!*eq || *end || errno || *eq == '-')
			return rk_fail(RK_E_INVAL, "fault spec: %s: '%s' is not a number", tok, eq);
		if (!strcmp(tok, "n"))
			spec->n = v;
		else if (!strcmp(tok, "member") && v <= INT32_MAX)
			spec->member = (int)v;
		else if (!strcmp(tok, "seed"))
			spec->seed = v;
		else if (!strcmp(tok, "off"))
			spec->off = v;
		else if (!strcmp(tok, "len"))
			spec->len = v;
		else
			return rk_fail(RK_E_INVAL, "fault spec: unknown key '%s' (or value out of range)", tok);
	}
	if (!have_model)
		return rk_fail(RK_E_INVAL, "fault spec: no model given");
	return RK_OK;
}

void rk_fault_plan_free(rk_fault_plan *p)
{
	int last;

	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	last = --p->refs == 0;
	pthread_mutex_unlock(&p->mu);
	if (last)
		destroy(p);
}

/* The plan's fired flag and write count, read under its lock. */
static void plan_counters(const rk_fault_plan *p, int *fired, uint64_t *writes)
{
	pthread_mutex_t *mu = (pthread_mutex_t *)(uintptr_t)&p->mu;
	pthread_mutex_lock(mu);
	*fired = p->fired;
	*writes = p->writes;
	pthread_mutex_unlock(mu);
}

int rk_fault_fired(const rk_fault_plan *p)
{
	int fired = 0;
	uint64_t writes;
	if (p)
		plan_counters(p, &fired, &writes);
	return fired;
}

uint64_t rk_fault_writes(const rk_fault_plan *p)
{
	int fired;
	uint64_t writes = 0;
	if (p)
		plan_counters(p, &fired, &writes);
	return writes;
}

rk_dev *rk_fault_lower(rk_fault_plan *p, int member)
{
	rk_dev *l = NULL;
	if (!p || member < 0)
		return NULL;
	pthread_mutex_lock(&p->mu);
	if (member < p->nm)
		l = p->m[member].lower;
	pthread_mutex_unlock(&p->mu);
	return l;
}

/* Marks the process dead (caller holds the lock). */
static void kill_plan(rk_fault_plan *p, const char *what, uint64_t n)
{
	p->fired = 1;
	p->dead = 1;
	snprintf(p->why, sizeof p->why, "%s at write #%llu", what, (unsigned long long)n);
}

static rk_err dead_err(rk_fault_plan *p, const char *path)
{
	return rk_fail(RK_E_FAULT, "%s: injected fault: I/O after %s (the process is dead)", path, p->why);
}

/* Overlays the buffered writes of MEMBER onto buf (caller holds the lock). */
static void overlay(rk_fault_plan *p, int member, uint8_t *buf, size_t len, uint64_t off)
{
	uint64_t end = off + len;
	for (size_t i = 0; i < p->nlog; i++) {
		const struct pc_entry *e = &p->log[i];
		uint64_t a, b;
		if (e->member != member || e->off >= end || e->off + e->len <= off)
			continue;
		a = e->off > off ? e->off : off;
		b = e->off + e->len < end ? e->off + e->len : end;
		memcpy(buf + (a - off), e->data + (a - e->off), (size_t)(b - a));
	}
}

/* Reads on the bad member touching a bad range (caller holds the lock). */
static const struct bad_range *bad_hit(rk_fault_plan *p, uint64_t off, size_t len)
{
	for (size_t i = 0; i < p->nbad; i++)
		if (p->bad[i].off < off + len && off < p->bad[i].end)
			return &p->bad[i];
	return NULL;
}

/* A write over a bad range heals what it covers (caller holds the lock). */
static rk_err heal(rk_fault_plan *p, uint64_t off, uint64_t end)
{
	for (size_t i = 0; i < p->nbad; ) {
		struct bad_range *r = &p->bad[i];
		if (end <= r->off || r->end <= off) {
			i++;
			continue;
		}
		if (off > r->off && end < r->end) {	/* split in two */
			if (p->nbad == p->capbad) {
				size_t nc = p->capbad * 2;
				struct bad_range *nb = realloc(p->bad, nc * sizeof *nb);
				if (!nb)
					return rk_fail(RK_E_NOMEM, "fault plan: out of memory");
				p->bad = nb;
				p->capbad = nc;
				r = &p->bad[i];
			}
			p->bad[p->nbad].off = end;
			p->bad[p->nbad].end = r->end;
			p->nbad++;
			r->end = off;
			i++;
		} else if (off <= r->off && end >= r->end) {	/* covered: gone */
			p->bad[i] = p->bad[--p->nbad];
		} else if (off <= r->off) {	/* head healed */
			r->off = end;
			i++;
		} else {			/* tail healed */
			r->end = off;
			i++;
		}
	}
	return RK_OK;
}

/* Writes the durable entries of MEMBER to its lower device and drops them
 * from the log (caller holds the lock). */
static rk_err settle_member(rk_fault_plan *p, int member)
{
	size_t j = 0;
	rk_err err = RK_OK;
	for (size_t i = 0; i < p->nlog; i++) {
		struct pc_entry *e = &p->log[i];
		if (e->member == member) {
			if (!err)
				err = rk_dev_pwrite(p->m[member].lower, e->data, e->len, e->off);
			free(e->data);
		} else {
			p->log[j++] = *e;
		}
	}
	p->nlog = j;
	return err;
}

static rk_err fault_pread(rk_dev *d, void *buf, size_t len, uint64_t off)
{
	struct fault_priv *fp = rk_dev_priv(d);
	rk_fault_plan *p = fp->p;
	struct fmember *m;
	rk_dev *lower;
	rk_err e;

	pthread_mutex_lock(&p->mu);
	m = &p->m[fp->member];
	lower = m->lower;
	if (p->dead) {
		e = dead_err(p, rk_dev_path(d));
		goto out;
	}
	m->ios++;
	if (p->spec.model == RK_FAULT_PULL && fp->member == p->spec.member &&
	    (m->pulled || m->ios - 1 >= p->spec.n)) {
		m->pulled = p->fired = 1;
		e = rk_fail(RK_E_IO, "%s: read error at offset %llu: device gone (injected cable pull)",
		            rk_dev_path(d), (unsigned long long)off);
		goto out;
	}
	if (p->spec.model == RK_FAULT_READ_ERROR && fp->member == p->spec.member) {
		const struct bad_range *r = bad_hit(p, off, len);
		if (r) {
			p->fired = 1;
			e = rk_fail(RK_E_IO, "%s: read error at offset %llu: unreadable sectors %llu..%llu (injected)",
			            rk_dev_path(d), (unsigned long long)off,
			            (unsigned long long)r->off, (unsigned long long)r->end - 1);
			goto out;
		}
	}
	if (p->spec.model == RK_FAULT_POWER_CUT) {
		/* Lower data plus what the process wrote and has not settled. */
		e = rk_dev_pread(lower, buf, len, off);
		if (!e)
			overlay(p, fp->member, buf, len, off);
		goto out;
	}
	pthread_mutex_unlock(&p->mu);
	return rk_dev_pread(lower, buf, len, off);
out:
	pthread_mutex_unlock(&p->mu);
	return e;
}

/* POWER_CUT: buffers write #SEQ of MEMBER in the plan's log (it reaches
 * the lower device when settled or by rk_fault_crash); write #n is the
 * cut.  The caller holds the lock. */
static rk_err log_write(rk_fault_plan *p, int member, const char *path, const void *buf, size_t len, uint64_t off,
                        uint64_t seq)
{
	struct pc_entry *en;
	if (p->nlog == p->caplog) {
		size_t nc = p->caplog ? p->caplog * 2 : 64;
		struct pc_entry *nl = realloc(p->log, nc * sizeof *nl);
		if (!nl)
			return rk_fail(RK_E_NOMEM, "%s: fault plan: out of memory", path);
		p->log = nl;
		p->caplog = nc;
	}
	en = &p->log[p->nlog];
	en->data = malloc(len);
	if (!en->data)
		return rk_fail(RK_E_NOMEM, "%s: fault plan: out of memory", path);
	memcpy(en->data, buf, len);
	en->member = member;
	en->seq = seq;
	en->off = off;
	en->len = len;
	en->cut = seq == p->spec.n;
	p->nlog++;
	if (!en->cut)
		return RK_OK;
	kill_plan(p, "power cut", seq);
	return rk_fail(RK_E_FAULT, "%s: injected fault: power cut at write #%llu", path, (unsigned long long)seq);
}

static rk_err fault_pwrite(rk_dev *d, const void *buf, size_t len, uint64_t off)
{
	struct fault_priv *fp = rk_dev_priv(d);
	rk_fault_plan *p = fp->p;
	const struct rk_fault_spec *s = &p->spec;
	struct fmember *m;
	rk_dev *lower;
	uint64_t seq;
	rk_err e;

	pthread_mutex_lock(&p->mu);
	m = &p->m[fp->member];
	lower = m->lower;
	seq = p->writes++;
	if (p->dead) {
		e = dead_err(p, rk_dev_path(d));
		goto out;
	}
	m->ios++;
	switch (s->model) {
	case RK_FAULT_FAIL_WRITE:
		if (seq == s->n) {
			p->fired = 1;
			e = rk_fail(RK_E_IO, "%s: write error at offset %llu (injected failure of write #%llu)",
			            rk_dev_path(d), (unsigned long long)off, (unsigned long long)seq);
			goto out;
		}
		break;
	case RK_FAULT_TEAR_WRITE:
		if (seq == s->n) {
			/* A prefix of k < all whole sectors lands, then the process dies. */
			uint32_t sec = rk_dev_sector(lower);
			uint64_t k = rnd(p, seq, 0, 1) % npieces(off, len, sec), poff;
			size_t plen = 0;
			kill_plan(p, "torn write", seq);
			pthread_mutex_unlock(&p->mu);
			if (k > 0) {
				piece(off, len, sec, k - 1, &poff, &plen);
				e = rk_dev_pwrite(lower, buf, (size_t)(poff + plen - off), off);
				if (e)
					return e;
			}
			return rk_fail(RK_E_FAULT, "%s: injected fault: write #%llu torn after %llu sector(s)",
			               rk_dev_path(d), (unsigned long long)seq, (unsigned long long)k);
		}
		break;
	case RK_FAULT_KILL:
		if (seq == s->n) {
			kill_plan(p, "process kill", seq);
			e = rk_fail(RK_E_FAULT, "%s: injected fault: process killed at write #%llu",
			            rk_dev_path(d), (unsigned long long)seq);
			goto out;
		}
		break;
	case RK_FAULT_PULL:
		if (fp->member == s->member && (m->pulled || m->ios - 1 >= s->n)) {
			m->pulled = p->fired = 1;
			e = rk_fail(RK_E_IO, "%s: write error at offset %llu: device gone (injected cable pull)",
			            rk_dev_path(d), (unsigned long long)off);
			goto out;
		}
		break;
	case RK_FAULT_READ_ERROR:
		if (fp->member == s->member && (e = heal(p, off, off + len)))
			goto out;
		break;
	case RK_FAULT_POWER_CUT:
		e = log_write(p, fp->member, rk_dev_path(d), buf, len, off, seq);
		goto out;
	case RK_FAULT_STOP:
		if (seq == s->n) {
			p->fired = 1;
			raise(SIGSTOP);   /* with the plan's lock held: no other write passes meanwhile */
		}
		break;
	case RK_FAULT_NONE:
	default:
		break;
	}
	pthread_mutex_unlock(&p->mu);
	return rk_dev_pwrite(lower, buf, len, off);
out:
	pthread_mutex_unlock(&p->mu);
	return e;
}

static rk_err fault_flush(rk_dev *d)
{
	struct fault_priv *fp = rk_dev_priv(d);
	rk_fault_plan *p = fp->p;
	rk_dev *lower;
	rk_err e;

	pthread_mutex_lock(&p->mu);
	lower = p->m[fp->member].lower;
	if (p->dead) {
		e = dead_err(p, rk_dev_path(d));
		goto out;
	}
	if (p->spec.model == RK_FAULT_PULL && p->m[fp->member].pulled) {
		e = rk_fail(RK_E_IO, "%s: flush failed: device gone (injected cable pull)", rk_dev_path(d));
		goto out;
	}
	if (p->spec.model == RK_FAULT_POWER_CUT) {
		e = settle_member(p, fp->member);
		goto out;
	}
	pthread_mutex_unlock(&p->mu);
	return rk_dev_flush(lower);
out:
	pthread_mutex_unlock(&p->mu);
	return e;
}

static void fault_close(rk_dev *d)
{
	struct fault_priv *fp = rk_dev_priv(d);
	rk_fault_plan *p;
	rk_dev *lower = NULL;
	int last;

	if (!fp)
		return;
	p = fp->p;
	pthread_mutex_lock(&p->mu);
	p->m[fp->member].open = 0;
	/* Before the crash is applied the plan still needs the lower device. */
	if (p->spec.model != RK_FAULT_POWER_CUT || p->crashed) {
		lower = p->m[fp->member].lower;
		p->m[fp->member].lower = NULL;
	}
	last = --p->refs == 0;
	pthread_mutex_unlock(&p->mu);
	rk_dev_close(lower);
	if (last)
		destroy(p);
	free(fp);
}

static const struct rk_dev_ops fault_ops = {
	.name = "fault", .pread = fault_pread, .pwrite = fault_pwrite,
	.flush = fault_flush, .close = fault_close,
};

rk_err rk_dev_fault(rk_dev **out, rk_dev *lower, rk_fault_plan *p, int member)
{
	struct fault_priv *fp;
	dev_t dv;
	ino_t ino;
	rk_err e;

	if (out)
		*out = NULL;
	if (!out || !lower || !p) {
		rk_dev_close(lower);
		return rk_fail(RK_E_INVAL, "fault device: missing argument");
	}
	if (member < 0 || member >= MAX_MEMBERS) {
		e = rk_fail(RK_E_INVAL, "%s: invalid fault member number %d", rk_dev_path(lower), member);
		rk_dev_close(lower);
		return e;
	}
	fp = malloc(sizeof *fp);
	if (!fp) {
		rk_dev_close(lower);
		return rk_fail(RK_E_NOMEM, "%s: out of memory", rk_dev_path(lower));
	}
	fp->p = p;
	fp->member = member;

	pthread_mutex_lock(&p->mu);
	if (member >= p->nm) {
		struct fmember *nm = realloc(p->m, (size_t)(member + 1) * sizeof *nm);
		if (!nm) {
			pthread_mutex_unlock(&p->mu);
			free(fp);
			e = rk_fail(RK_E_NOMEM, "%s: out of memory", rk_dev_path(lower));
			rk_dev_close(lower);
			return e;
		}
		memset(nm + p->nm, 0, (size_t)(member + 1 - p->nm) * sizeof *nm);
		p->m = nm;
		p->nm = member + 1;
	}
	if (p->m[member].used || p->crashed) {
		pthread_mutex_unlock(&p->mu);
		free(fp);
		e = rk_fail(RK_E_INVAL, "%s: fault member %d %s", rk_dev_path(lower), member,
		            p->crashed ? "added after the crash" : "already in the plan");
		rk_dev_close(lower);
		return e;
	}
	p->m[member].used = p->m[member].open = 1;
	p->m[member].lower = lower;
	p->refs++;
	pthread_mutex_unlock(&p->mu);

	/* On failure rk_dev_new hands fp to fault_close, which undoes the above. */
	e = rk_dev_new(out, &fault_ops, fp, rk_dev_path(lower), rk_dev_size(lower),
	               rk_dev_sector(lower), rk_dev_writable(lower));
	if (e)
		return e;
	if (rk_dev_identity(lower, &dv, &ino))
		rk_dev_set_identity(*out, dv, ino, rk_dev_is_blockdev(lower));
	return RK_OK;
}

rk_err rk_fault_crash(rk_fault_plan *p)
{
	rk_err err = RK_OK;

	if (!p)
		return rk_fail(RK_E_INVAL, "fault plan: none given");
	pthread_mutex_lock(&p->mu);
	if (p->spec.model != RK_FAULT_POWER_CUT || p->crashed) {
		pthread_mutex_unlock(&p->mu);
		return RK_OK;
	}
	if (!p->dead) {
		/* Write #n never came: the cut is now, after the tool stopped. */
		p->dead = 1;
		snprintf(p->why, sizeof p->why, "power cut after write #%llu", (unsigned long long)p->writes);
	}
	for (size_t i = 0; i < p->nlog; i++) {
		struct pc_entry *en = &p->log[i];
		rk_dev *lower = p->m[en->member].lower;
		rk_err e = RK_OK;

		if (en->cut) {
			/* Torn at sector granularity: each sector old or new. */
			uint32_t sec = rk_dev_sector(lower);
			uint64_t np = npieces(en->off, en->len, sec);
			for (uint64_t j = 0; j < np && !e; j++) {
				uint64_t poff;
				size_t plen;
				if (!(rnd(p, en->seq, j, 2) & 1))
					continue;
				piece(en->off, en->len, sec, j, &poff, &plen);
				e = rk_dev_pwrite(lower, en->data + (poff - en->off), plen, poff);
			}
		} else if (rnd(p, en->seq, 0, 3) & 1) {
			/* Not yet durable: survives or vanishes as a whole. */
			e = rk_dev_pwrite(lower, en->data, en->len, en->off);
		}
		if (e && !err)
			err = e;
		free(en->data);
	}
	p->nlog = 0;
	p->crashed = 1;
	pthread_mutex_unlock(&p->mu);
	return err;
}
