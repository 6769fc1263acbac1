/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What a record says of a pair on a lane: the one filter the run's
 * analysis (store.c, analyze.c) and the report (report/model.c) both read
 * records through, so that they take the same results into the same groups.
 *
 * A lane result is a record of a bw or lat test that went well (status
 * ok), with both nodes named, and a value (bw_gbps, or
 * lat_us.p50), for one direction (not "both", the sum of a bidirectional
 * run), and for all the flows of its test together: scope "aggregate", or
 * no scope at all on a test of one flow (flows 1 or not said).  Not
 * results: the probes' flows (kind polarization, pfc), which collide on
 * purpose; a lat test's load (kind load); a suspect's re-test (retest_of or
 * retest_for), which is the suspect's evidence, not the lane's.
 *
 * A result's group is its phase, test, lane (rail, plane) and message size:
 * sizes are never mixed (a sweep's 4 KiB results are no reference for its
 * 1 MiB ones).
 */
#ifndef FS_RECORDS_RESULT_H
#define FS_RECORDS_RESULT_H

#include <jansson.h>

enum { RRES_BW, RRES_LAT };

/* the phase of a result without one (a standalone bw or lat's record) */
#define RRES_STANDALONE "(standalone)"

struct rresult {
	const char *phase, *src, *dst;	/* borrowed from the record */
	const char *job, *dir;		/* NULL when not said */
	int test;			/* RRES_BW, RRES_LAT */
	int rail, plane, round;		/* round 0: not said */
	double size;			/* msg_size_bytes; 0 when not said */
	double v;			/* bw_gbps, or lat_us.p50 */
	double v99;			/* lat_us.p99; NAN for bw, or when not said */
	double msgs;			/* messages (bw) or round trips (lat) it rests on; NAN: not said */
};

/* A latency result of fewer round trips is too coarse to name a suspect by:
 * its percentiles need samples.  (A bandwidth result of m messages is judged
 * by what one message more would have made of it, v (m + 1) / m: a sweep's
 * largest sizes in a short duration move by half with one message.) */
#define RRES_MIN_MSGS 10

/* 1 and *out filled when rec is a lane result, else 0; -1 when it would be
 * one but its src.rail or src.plane names no rail or plane (not a whole
 * number within FS_MAX_RAILS, FS_MAX_PLANES: core/record.h's record_lane):
 * left out, not put on a lane it does not name. */
int rresult_of(json_t *rec, struct rresult *out);

/* A re-test's record (fleet/coord-retest.c): the suspect it is for
 * (retest_for, the suspect's id; NULL in directories of fabscope before
 * re-tests of every kind), what it measured of which pair, in what role:
 *   again   the suspect pair (or an older directory's re-test, retest_of)
 *   again-2 the suspect pair a second time, after the control
 *   fresh   a suspect node (src or dst) with a peer not under suspicion
 *   src-fresh, dst-fresh   one end of a suspect pair with a fresh peer
 *   lane    other pairs of a suspect lane, or its collective again
 *   control two fresh nodes (or another lane) measured with the re-test
 * A failed re-test has error (its message) and no value. */
struct rretest {
	const char *for_id, *of, *role, *src, *dst, *error;
	int test;			/* RRES_BW, RRES_LAT, or -1: a collective */
	double size, v;
};

/* 1 and *out filled when rec is a re-test, else 0. */
int rretest_of(json_t *rec, struct rretest *out);

/* The kinds of records the probes and loads write: their flows are theirs. */
int rresult_probe_kind(json_t *rec);

#endif
