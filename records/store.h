/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A results directory's records as compact numbers, for the analysis and
 * the report of a large fleet: memory by nodes and results, not by JSON
 * trees.
 *
 * Records are streamed (records_scan) and each one is added: a bandwidth or
 * latency result becomes a struct rstore_res (32 bytes) in the group of its
 * phase, test and lane; a re-test a struct rstore_rt; node names, phases,
 * jobs and directions are interned once (ids into one table of strings that
 * never move).  Only the records that are few per node are kept whole (the
 * PFC probe's and the collectives'), and the first failed ones, for a
 * report to quote.  A run's end adds what was written after an earlier
 * load (rstore_load again: it reads on from where it stopped), so that the
 * coordinator reads its records once.
 *
 * Which results a group takes is one rule (rstore_result_of), the suspects
 * analysis's (analyze.c) and the report's: the report groups its records
 * with it too, so that both see the same groups.  Records of another
 * schema are left out and counted.
 */
#ifndef FS_RECORDS_STORE_H
#define FS_RECORDS_STORE_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

/* Interned strings: ids in order of first appearance. */
struct rstrings {
	char **s;		/* id -> the string (in chunks that never move) */
	size_t n, alloc;
	int *slot;		/* open addressing: -1 empty, else an id */
	size_t cap;		/* a power of 2, over twice n */
	char *chunk;		/* the chunk being filled */
	size_t chunk_used, chunk_size;
	char **chunks;
	size_t nchunks, chunks_alloc;
};

struct rstore_res {
	int s, d;		/* src and dst nodes (interned) */
	int job;		/* the job that measured it (interned), -1 none */
	int dir;		/* its direction (interned), -1 none */
	int round;
	int pad;
	double v;		/* bw_gbps, or lat_us p50 */
};

enum { RSTORE_BW, RSTORE_LAT };

struct rstore_group {
	int phase;		/* interned */
	int test;		/* RSTORE_BW, RSTORE_LAT */
	int rail, plane;
	double size;		/* the message size of its results (the largest seen) */
	size_t first;		/* the number of its first record (from 0) */
	struct rstore_res *r;
	size_t n, alloc;
};

/* A result of a group, as rstore_result_of reads it from its record. */
struct rstore_result {
	const char *phase;	/* the record's (borrowed), "(standalone)" when it has none */
	int test;		/* RSTORE_BW, RSTORE_LAT */
	int rail, plane;	/* of its source end, 0 when not given */
	int round;		/* 0 when not given */
	double v;		/* metrics.bw_gbps (bw) or metrics.lat_us.p50 (lat) */
	double v99;		/* lat: metrics.lat_us.p99, NAN when absent; bw: NAN */
	double size;		/* msg_size_bytes, 0 when not given */
	const char *src, *dst;	/* the nodes (borrowed) */
};

/*
 * The one rule of which records are results of a group (a phase, a test, a
 * lane), for the store's groups (the suspects analysis) and the report's: a
 * record of status "ok" and scope "aggregate" (both as written, never
 * assumed), of one direction (dir not "both"), with both nodes named, not a
 * probe's flows or a lat test's load (kind polarization, pfc or load), not a
 * re-test (retest_of), of test bw or lat with its figure a number, its rail
 * and plane, when given, within core/lanes.h's bounds.  1 and *res filled
 * when rec is one, else 0.
 *
 * A phase that swept message sizes gives a group results at several: a
 * group takes those at the largest size (a smaller one is another figure,
 * not a slow pair).  rstore_add does; a reader that groups results itself
 * must too (report/model.c).
 */
int rstore_result_of(json_t *rec, struct rstore_result *res);

/* A re-test's record: the job it repeats, its pair, what it found. */
struct rstore_rt {
	int of, src, dst;	/* interned */
	int error;		/* interned message, or -1: ok, v is its value */
	double v;
	size_t k;		/* its record's number: the last one counts */
};

#define RSTORE_FAILED_KEPT 20

struct rstore {
	struct rstrings str;
	struct rstore_group *g;
	size_t ng, g_alloc;
	struct rstore_rt *rt;
	size_t nrt, rt_alloc;
	json_t *kept;		/* the PFC probe's and the collectives' records, in order */
	json_t *failed;		/* the first RSTORE_FAILED_KEPT records whose status is not ok */
	long nrec;		/* records added (of this schema, or of none) */
	long nfailed;		/* of them with a status that is not "ok" */
	long nforeign;		/* records of another schema, left out */
	char *first_foreign;	/* the first one's schema */
	off_t off;		/* how far results.jsonl was read */
	long skipped, first_skipped;	/* lines that are not records; the first one's number */
	long lines;		/* whole lines read */
};

void rstore_init(struct rstore *st);
void rstore_release(struct rstore *st);

/* The id of s (added when new), or -ENOMEM. */
int rstore_intern(struct rstore *st, const char *s);
static inline const char *rstore_str(const struct rstore *st, int id)
{
	return id < 0 ? NULL : st->str.s[id];
}

/* Add one record: 0, 1 when it was left out (another schema), -ENOMEM. */
int rstore_add(struct rstore *st, json_t *rec);

/*
 * Read DIR/results.jsonl on from st->off, each record added and then given
 * to fn (may be NULL) while it is still there (borrowed, as records_scan's);
 * 0, fn's non-zero return, -ENOMEM, or -errno when the file cannot be opened
 * (-ENOENT: there is none).
 */
int rstore_load(struct rstore *st, const char *dir, int (*fn)(json_t *rec, void *ctx), void *ctx);

#endif
