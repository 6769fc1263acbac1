/* SPDX-License-Identifier: BSD-2-Clause */
/* A results directory's records as compact numbers (see store.h). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/record.h"
#include "read.h"
#include "polar.h"
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
	json_decref(st->polar);
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

int rstore_find(const struct rstore *st, const char *s)
{
	const struct rstrings *t = &st->str;
	size_t h;

	if (!s || !t->cap)
		return -1;
	for (h = (size_t)str_hash(s) & (t->cap - 1); t->slot[h] >= 0; h = (h + 1) & (t->cap - 1))
		if (!strcmp(t->s[t->slot[h]], s))
			return t->slot[h];
	return -1;
}

/* the id of s (interned), -1 for NULL, -2 out of memory */
static int intern_opt(struct rstore *st, const char *s)
{
	int id;

	if (!s)
		return -1;
	return (id = rstore_intern(st, s)) < 0 ? -2 : id;
}

static int add_retest(struct rstore *st, const struct rretest *t)
{
	struct rstore_rt x;

	x.k = (size_t)st->nrec;
	x.test = t->test;
	x.size = t->size;
	x.v = t->v;
	if ((x.error = intern_opt(st, t->error)) < -1 || (x.for_id = intern_opt(st, t->for_id)) < -1 ||
	    (x.of = intern_opt(st, t->of)) < -1 || (x.role = intern_opt(st, t->role)) < -1 ||
	    (x.src = intern_opt(st, t->src)) < -1 || (x.dst = intern_opt(st, t->dst)) < -1 ||
	    FS_ALLOC_GROW(st->rt, st->nrt + 1, st->rt_alloc))
		return -ENOMEM;
	st->rt[st->nrt++] = x;
	return 0;
}

/* the group of (phase, test, rail, plane, size), a new one when first seen */
static struct rstore_group *group_of(struct rstore *st, int phase, const struct rresult *r)
{
	struct rstore_group *g;
	size_t i;

	for (i = st->ng; i-- > 0;)	/* (a night's records come lane by lane: the last is likeliest) */
		if (st->g[i].phase == phase && st->g[i].test == r->test && st->g[i].rail == r->rail &&
		    st->g[i].plane == r->plane && st->g[i].size == r->size)
			return &st->g[i];
	if (FS_ALLOC_GROW(st->g, st->ng + 1, st->g_alloc))
		return NULL;
	g = &st->g[st->ng++];
	memset(g, 0, sizeof(*g));
	g->phase = phase;
	g->test = r->test;
	g->rail = r->rail;
	g->plane = r->plane;
	g->size = r->size;
	g->first = (size_t)st->nrec;
	return g;
}

static int add_result(struct rstore *st, const struct rresult *r)
{
	struct rstore_group *g;
	struct rstore_res x;
	int phase;

	x.v = r->v;
	if ((phase = rstore_intern(st, r->phase)) < 0 || (x.s = rstore_intern(st, r->src)) < 0 ||
	    (x.d = rstore_intern(st, r->dst)) < 0 || (x.job = intern_opt(st, r->job)) < -1 ||
	    (x.dir = intern_opt(st, r->dir)) < -1)
		return -ENOMEM;
	x.round = r->round;
	x.msgs = r->msgs >= 0 && r->msgs < 1e9 ? (int)r->msgs : r->msgs >= 1e9 ? 1000000000 : -1;
	if (!(g = group_of(st, phase, r)) || FS_ALLOC_GROW(g->r, g->n + 1, g->alloc))
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
	if ((!st->kept && !(st->kept = json_array())) || (!st->failed && !(st->failed = json_array())) ||
	    (!st->polar && !(st->polar = json_array())))
		return -ENOMEM;
	if (strcmp(record_str(rec, "status", "ok"), "ok") && st->nfailed++ < RSTORE_FAILED_KEPT &&
	    json_array_append(st->failed, rec))
		return -ENOMEM;
	if ((!strcmp(test, "pfc") || !strcmp(test, "allreduce") || !strcmp(test, "alltoall")) &&
	    json_array_append(st->kept, rec))
		return -ENOMEM;
	if (!strcmp(test, "polarization") && record_str(rec, "verdict", NULL) &&
	    json_array_append_new(st->polar, rpolar_brief(rec)))
		return -ENOMEM;
	{
		struct rresult r;
		struct rretest t;
		int res;

		rc = 0;
		if (rretest_of(rec, &t))
			rc = add_retest(st, &t);
		else if ((res = rresult_of(rec, &r)) > 0)
			rc = add_result(st, &r);
		else if (res < 0)	/* (a rail or plane that is none: not put on rail 0) */
			st->nbadlane++;
	}
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
