/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The collectives section's insides, shared by its parts and no other
 * file: coll.c (the model and the words that name it), coll-render.c
 * (Markdown, HTML), coll-export.c (JSON summary, Prometheus text),
 * coll-checks.c (checks, --baseline) and coll-plot.c (plots).
 */
#ifndef FS_REPORT_COLL_INT_H
#define FS_REPORT_COLL_INT_H

#include <jansson.h>
#include <stddef.h>

#include "report.h"

/* ---- the model: series of points, per run, collective, phase and lane ---- */

struct coll_pt {
	double size, count, time, tmin, tmax, algbw, busbw;
	long long wrong;	/* wrong elements; -1: not checked */
	int n;			/* records in it */
};

struct coll_series {
	int run, coll, phase;	/* indexes: rep->runs, set->key, set->phase */
	char lane[48];
	int lane_order;		/* "all" first, rails in order, other groups, "sum" last */
	int rail, plane;	/* rail -1: not one rail */
	int sum;		/* the rails of a multi-rail run added up */
	int ranks;
	json_t *first;		/* its first record, for the endpoints */
	struct coll_pt *pt;	/* by size */
	int npt;
	size_t pt_alloc;
};

struct coll_key {
	const char *test, *algo, *transport;
};

struct coll_set {
	struct coll_key *key;
	int nkey;
	const char **phase;
	int nphase;
	struct coll_series *s;
	int n;
	size_t key_alloc, phase_alloc, s_alloc;
};

/* coll.c: the model */

/* the collectives of runs[0..nruns), sorted: by collective, run, phase, lane;
 * 0, or out of memory: said, -FS_EXIT_ENV and cs empty */
int report_coll_build(const struct rrun *runs, int nruns, struct coll_set *cs);
/* frees what report_coll_build put in cs and empties it */
void report_coll_release(struct coll_set *cs);
/* a multi-rail sum whose rails are there too: they, not it, say what was wrong */
int rcoll_rails_there(const struct coll_set *cs, const struct coll_series *s);
/* the point of s at size, or NULL */
const struct coll_pt *rcoll_pt_at(const struct coll_series *s, double size);
/* series of run ri, collective c, phase ph, lane; NULL when none */
const struct coll_series *rcoll_series_of(const struct coll_set *cs, int ri, int c, int ph, const char *lane);

/* coll.c: words and numbers */

/* "phase coll, rail 1", or "rail 1" for records not from a plan's phase */
void rcoll_lane_name(const struct coll_set *cs, int phase, const char *lane, char *buf, size_t len);
/* "lb=ecmp: allreduce ring, phase coll, rail 1": what a check names */
void rcoll_series_name(const struct report *rep, const struct coll_set *cs, const struct coll_series *s,
		 char *buf, size_t len);
/* a message size in bytes as units_format_size writes it: "64K" */
void rcoll_size_str(double size, char *buf, size_t len);
/* Gb/s: 4 significant digits, whole above 10000 */
void rcoll_gbps(double v, char *buf, size_t len);

#endif
