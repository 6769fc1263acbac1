/* SPDX-License-Identifier: BSD-2-Clause */
/* A results directory's records as compact numbers (see store.h). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/lanes.h"
#include "../core/record.h"
#include "read.h"
#include "store.h"

#define CHUNK_MIN (64 * 1024)

void rstore_init(struct rstore *st)
{
	memset(st, 0, sizeof(*st));
}

static void strings_release(struct rstrings *t)
{
	size_t i;

	for (i = 0; i < t->nchunks; i++)
		free(t->chunks[i]);
	free(t->chunks);
	free(t->s);
	free(t->slot);
	memset(t, 0, sizeof(*t));
}

void rstore_release(struct rstore *st)
{
	size_t i;

	strings_release(&st->str);
	for (i = 0; i < st->ng; i++)
		free(st->g[i].r);
	free(st->g);
	free(st->rt);
	json_decref(st->kept);
	json_decref(st->failed);
	free(st->first_foreign);
	rstore_init(st);
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static int strings_rehash(struct rstrings *t)
{
	size_t cap = t->cap ? 2 * t->cap : 1024, i;
	int *slot = fs_reallocarray(NULL, cap, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (i = 0; i < cap; i++)
		slot[i] = -1;
	for (i = 0; i < t->n; i++) {
		size_t h = (size_t)str_hash(t->s[i]) & (cap - 1);

		while (slot[h] >= 0)
			h = (h + 1) & (cap - 1);
		slot[h] = (int)i;
	}
	free(t->slot);
	t->slot = slot;
	t->cap = cap;
	return 0;
}

/* a copy of s[0..len] in the chunks, or NULL */
static char *strings_copy(struct rstrings *t, const char *s, size_t len)
{
	char *p;

	if (!t->chunk || t->chunk_used + len + 1 > t->chunk_size) {
		size_t size = len + 1 > CHUNK_MIN ? len + 1 : CHUNK_MIN;

		if (FS_ALLOC_GROW(t->chunks, t->nchunks + 1, t->chunks_alloc) || !(p = malloc(size)))
			return NULL;
		t->chunks[t->nchunks++] = p;
		t->chunk = p;
		t->chunk_size = size;
		t->chunk_used = 0;
	}
	p = t->chunk + t->chunk_used;
	memcpy(p, s, len + 1);
	t->chunk_used += len + 1;
	return p;
}

int rstore_intern(struct rstore *st, const char *s)
{
	struct rstrings *t = &st->str;
	size_t h;
	char *copy;

	if (t->n >= INT32_MAX / 2)
		return -ENOMEM;
	if ((t->n + 1) * 2 > t->cap && strings_rehash(t))
		return -ENOMEM;
	for (h = (size_t)str_hash(s) & (t->cap - 1); t->slot[h] >= 0; h = (h + 1) & (t->cap - 1))
		if (!strcmp(t->s[t->slot[h]], s))
			return t->slot[h];
	if (FS_ALLOC_GROW(t->s, t->n + 1, t->alloc) || !(copy = strings_copy(t, s, strlen(s))))
		return -ENOMEM;
	t->s[t->n] = copy;
	t->slot[h] = (int)t->n;
	return (int)t->n++;
}

/* the id of the record's string at path, -1 when absent, -2 out of memory */
static int intern_at(struct rstore *st, json_t *rec, const char *path)
{
	const char *s = record_str(rec, path, NULL);
	int id;

	if (!s)
		return -1;
	return (id = rstore_intern(st, s)) < 0 ? -2 : id;
}

static int is_retest(json_t *rec)
{
	return json_is_string(json_object_get(rec, "retest_of"));
}

static int add_retest(struct rstore *st, json_t *rec)
{
	const char *test = record_str(rec, "test", ""), *status = record_str(rec, "status", "");
	struct rstore_rt x;

	if (strcmp(record_str(rec, "scope", "aggregate"), "aggregate") ||
	    !record_str(rec, "src.node", NULL) || !record_str(rec, "dst.node", NULL) ||
	    !strcmp(record_str(rec, "dir", ""), "both"))
		return 0;
	x.k = (size_t)st->nrec;
	x.error = -1;
	x.v = NAN;
	if (strcmp(status, "ok")) {
		if ((x.error = rstore_intern(st, record_str(rec, "error", "the re-test failed"))) < 0)
			return -ENOMEM;
	} else if (!strcmp(test, "lat")) {
		x.v = record_num(rec, "metrics.lat_us.p50", NAN);
	} else if (!strcmp(test, "bw")) {
		x.v = record_num(rec, "metrics.bw_gbps", NAN);
	}
	if (x.error < 0 && isnan(x.v))
		return 0;
	if ((x.of = intern_at(st, rec, "retest_of")) < 0 || (x.src = intern_at(st, rec, "src.node")) < 0 ||
	    (x.dst = intern_at(st, rec, "dst.node")) < 0 || FS_ALLOC_GROW(st->rt, st->nrt + 1, st->rt_alloc))
		return -ENOMEM;
	st->rt[st->nrt++] = x;
	return 0;
}

/* the group of (phase, test, rail, plane), a new one (of results of size `size`) when first seen */
static struct rstore_group *group_of(struct rstore *st, int phase, int test, int rail, int plane, double size)
{
	struct rstore_group *g;
	size_t i;

	for (i = st->ng; i-- > 0;)	/* (a night's records come lane by lane: the last is likeliest) */
		if (st->g[i].phase == phase && st->g[i].test == test && st->g[i].rail == rail &&
		    st->g[i].plane == plane)
			return &st->g[i];
	if (FS_ALLOC_GROW(st->g, st->ng + 1, st->g_alloc))
		return NULL;
	g = &st->g[st->ng++];
	memset(g, 0, sizeof(*g));
	g->phase = phase;
	g->test = test;
	g->rail = rail;
	g->plane = plane;
	g->size = size;
	g->first = (size_t)st->nrec;
	return g;
}

/* the integer at path when it is one in [lo, hi], dflt when absent; else lo - 1 */
static int int_at(json_t *rec, const char *path, int dflt, int lo, int hi)
{
	json_t *x = record_get(rec, path);
	double v;

	if (!x)
		return dflt;
	v = json_is_number(x) ? json_number_value(x) : NAN;
	return v >= lo && v <= hi && v == floor(v) ? (int)v : lo - 1;
}

int rstore_result_of(json_t *rec, struct rstore_result *res)
{
	const char *test = record_str(rec, "test", ""), *kind = record_str(rec, "kind", "");

	if (!strcmp(kind, "polarization") || !strcmp(kind, "pfc") || !strcmp(kind, "load"))
		return 0;	/* their flows collide on purpose (the probes judge them), or load a lat test */
	if (strcmp(record_str(rec, "status", ""), "ok") || strcmp(record_str(rec, "scope", ""), "aggregate") ||
	    !strcmp(record_str(rec, "dir", ""), "both") || is_retest(rec))
		return 0;
	res->src = record_str(rec, "src.node", NULL);
	res->dst = record_str(rec, "dst.node", NULL);
	if (!res->src || !res->dst)
		return 0;
	res->v99 = NAN;
	if (!strcmp(test, "bw")) {
		res->test = RSTORE_BW;
		res->v = record_num(rec, "metrics.bw_gbps", NAN);
	} else if (!strcmp(test, "lat")) {
		res->test = RSTORE_LAT;
		res->v = record_num(rec, "metrics.lat_us.p50", NAN);
		res->v99 = record_num(rec, "metrics.lat_us.p99", NAN);
	} else {
		return 0;
	}
	res->rail = int_at(rec, "src.rail", 0, 0, FS_MAX_RAILS - 1);
	res->plane = int_at(rec, "src.plane", 0, 0, FS_MAX_PLANES - 1);
	if (isnan(res->v) || res->rail < 0 || res->plane < 0)
		return 0;
	res->phase = record_str(rec, "phase", "(standalone)");
	res->round = int_at(rec, "round", 0, 0, 1 << 30);
	res->round = res->round < 0 ? 0 : res->round;
	res->size = record_num(rec, "msg_size_bytes", 0);
	res->size = res->size >= 0 && res->size < 1e18 ? res->size : 0;	/* (untrusted) */
	return 1;
}

static int add_result(struct rstore *st, json_t *rec)
{
	const char *dir = record_str(rec, "dir", "");
	struct rstore_result r;
	struct rstore_group *g;
	struct rstore_res x;
	int phase;

	if (!rstore_result_of(rec, &r))
		return 0;
	if ((phase = rstore_intern(st, r.phase)) < 0 || (x.s = rstore_intern(st, r.src)) < 0 ||
	    (x.d = rstore_intern(st, r.dst)) < 0 || (x.job = intern_at(st, rec, "job")) < -1 ||
	    (x.dir = *dir ? rstore_intern(st, dir) : -1) < -1)
		return -ENOMEM;
	x.v = r.v;
	x.round = r.round;
	x.pad = 0;
	if (!(g = group_of(st, phase, r.test, r.rail, r.plane, r.size)))
		return -ENOMEM;
	if (r.size < g->size)
		return 0;	/* a sweep's smaller size: not this group's figure */
	if (r.size > g->size) {
		g->n = 0;	/* a larger one: the figure is that size's */
		g->size = r.size;
	}
	if (FS_ALLOC_GROW(g->r, g->n + 1, g->alloc))
		return -ENOMEM;
	g->r[g->n++] = x;
	return 0;
}

int rstore_add(struct rstore *st, json_t *rec)
{
	const char *schema = json_string_value(json_object_get(rec, "schema"));
	const char *test = record_str(rec, "test", "");
	int rc;

	if (schema && strcmp(schema, RECORD_SCHEMA)) {
		if (!st->nforeign++)
			st->first_foreign = strdup(schema);
		return 1;
	}
	if ((!st->kept && !(st->kept = json_array())) || (!st->failed && !(st->failed = json_array())))
		return -ENOMEM;
	if (strcmp(record_str(rec, "status", "ok"), "ok") && st->nfailed++ < RSTORE_FAILED_KEPT &&
	    json_array_append(st->failed, rec))
		return -ENOMEM;
	if ((!strcmp(test, "pfc") || !strcmp(test, "allreduce") || !strcmp(test, "alltoall")) &&
	    json_array_append(st->kept, rec))
		return -ENOMEM;
	rc = is_retest(rec) ? add_retest(st, rec) : add_result(st, rec);
	st->nrec++;
	return rc;
}

struct load_ctx {
	struct rstore *st;
	int (*fn)(json_t *rec, void *ctx);
	void *ctx;
};

static int load_one(json_t *rec, void *ctx)
{
	struct load_ctx *lc = ctx;
	int rc = rstore_add(lc->st, rec);

	if (rc)
		return rc < 0 ? rc : 0;	/* (another schema: left out) */
	return lc->fn ? lc->fn(rec, lc->ctx) : 0;
}

int rstore_load(struct rstore *st, const char *dir, int (*fn)(json_t *rec, void *ctx), void *ctx)
{
	struct load_ctx lc = { st, fn, ctx };
	struct records_scan_info si;
	int rc = records_scan_from(dir, st->off, load_one, &lc, &si);

	if (si.torn + si.bad && !st->skipped)
		st->first_skipped = st->lines + si.first_bad;
	st->skipped += si.torn + si.bad;
	st->lines += si.nobj + si.bad;
	st->off += si.good;
	return rc;
}
