/* SPDX-License-Identifier: BSD-2-Clause */
/* The one filter of lane results and re-tests (see result.h). */
#include <math.h>
#include <string.h>

#include "../core/record.h"
#include "result.h"

int rresult_probe_kind(json_t *rec)
{
	const char *k = record_str(rec, "kind", "");

	return !strcmp(k, "polarization") || !strcmp(k, "pfc") || !strcmp(k, "load");
}

static int is_retest(json_t *rec)
{
	return json_is_string(json_object_get(rec, "retest_of")) ||
	       json_is_string(json_object_get(rec, "retest_for"));
}

/* the test's value and kind: 0, or -1 when it is no bw or lat test */
static int test_value(json_t *rec, int *test, double *v, double *v99)
{
	const char *t = record_str(rec, "test", "");

	*v99 = NAN;
	if (!strcmp(t, "bw")) {
		*test = RRES_BW;
		*v = record_num(rec, "metrics.bw_gbps", NAN);
	} else if (!strcmp(t, "lat")) {
		*test = RRES_LAT;
		*v = record_num(rec, "metrics.lat_us.p50", NAN);
		*v99 = record_num(rec, "metrics.lat_us.p99", NAN);
	} else {
		return -1;
	}
	return 0;
}

/* scope aggregate, or none said on a test of one flow */
static int is_aggregate(json_t *rec)
{
	const char *scope = record_str(rec, "scope", NULL);

	if (scope)
		return !strcmp(scope, "aggregate");
	return record_num(rec, "flows", 1) == 1;
}

int rresult_of(json_t *rec, struct rresult *out)
{
	memset(out, 0, sizeof(*out));
	if (rresult_probe_kind(rec) || is_retest(rec) || strcmp(record_str(rec, "status", ""), "ok") ||
	    !is_aggregate(rec) || !strcmp(record_str(rec, "dir", ""), "both") ||
	    test_value(rec, &out->test, &out->v, &out->v99) || isnan(out->v))
		return 0;
	out->phase = record_str(rec, "phase", RRES_STANDALONE);
	out->src = record_str(rec, "src.node", NULL);
	out->dst = record_str(rec, "dst.node", NULL);
	if (!out->src || !out->dst)
		return 0;
	out->job = record_str(rec, "job", NULL);
	out->dir = record_str(rec, "dir", NULL);
	if (out->dir && !*out->dir)
		out->dir = NULL;
	if (record_lane(rec, &out->rail, &out->plane))
		return -1;
	out->round = record_int(rec, "round", 0, 0, 1 << 30);
	out->size = record_num(rec, "msg_size_bytes", 0);
	if (!(out->size >= 0 && out->size <= 1e15))
		out->size = 0;
	out->msgs = record_num(rec, out->test == RRES_BW ? "metrics.msgs" : "metrics.iters", NAN);
	return 1;
}

int rretest_of(json_t *rec, struct rretest *out)
{
	const char *t = record_str(rec, "test", "");
	double v99;

	memset(out, 0, sizeof(*out));
	if (!is_retest(rec))
		return 0;
	out->for_id = record_str(rec, "retest_for", NULL);
	out->of = record_str(rec, "retest_of", NULL);
	out->role = record_str(rec, "retest_role", "again");
	out->src = record_str(rec, "src.node", NULL);
	out->dst = record_str(rec, "dst.node", NULL);
	out->size = record_num(rec, "msg_size_bytes", 0);
	out->v = NAN;
	if (!strcmp(t, "allreduce") || !strcmp(t, "alltoall")) {
		out->test = -1;
		if (strcmp(record_str(rec, "scope", "aggregate"), "aggregate"))
			return 0;
		out->v = record_num(rec, "metrics.busbw_gbps", NAN);
	} else if (test_value(rec, &out->test, &out->v, &v99) || !is_aggregate(rec) ||
		   !strcmp(record_str(rec, "dir", ""), "both") || !out->src || !out->dst) {
		return 0;
	}
	if (strcmp(record_str(rec, "status", ""), "ok")) {
		out->error = record_str(rec, "error", "the re-test failed");
		out->v = NAN;
	} else if (isnan(out->v)) {
		return 0;
	}
	return 1;
}
