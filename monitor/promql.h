/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The probe counters of an interval from a Prometheus server that scrapes
 * the agents: instant queries of its HTTP API (GET /api/v1/query),
 *
 *   increase(fabscope_probe_sent_total[Ws])
 *   increase(fabscope_probe_lost_total[Ws])
 *   increase(fabscope_probe_rtt_seconds_count[Ws]), and of _bucket (with a slow bound)
 *
 * W the interval, evaluated now or at a given time; each series of the
 * answer is a probe group's increase (scrape.h, increases mode).  The
 * answers are bounded (max_body) and read with jansson; a series without
 * the probe labels, or whose value is not a number, is left out (said once
 * a query); a window without samples (NaN) is no group.
 */
#ifndef FS_MONITOR_PROMQL_H
#define FS_MONITOR_PROMQL_H

#include <stddef.h>

#include "scrape.h"

struct promql_opts {
	double window_s;	/* the interval (whole seconds) */
	size_t max_body;
	int timeout_ms;
};

/*
 * One interval's groups into s (a new scrape, of increases), from the server
 * at base (http://HOST:9090, a path prefix allowed), evaluated at unix time
 * at (0: now).  0, or a negative exit code said (-FS_EXIT_PEER: the server
 * did not answer, or not with an instant vector).
 */
int promql_interval(struct scrape *s, const char *base, double at, const struct promql_opts *o);

#endif
