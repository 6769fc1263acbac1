/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The agents' probe counters, scrape after scrape, into the probe groups of
 * an interval (what `fabscope monitor analyze` votes over).
 *
 * The metrics read (the agents' contract, fabscope-monitor-analyze(1)):
 *
 *   fabscope_probe_sent_total{node, peer, rail, plane, sport_bucket}    counter
 *   fabscope_probe_lost_total{node, peer, rail, plane, sport_bucket}    counter
 *   fabscope_probe_rtt_seconds_bucket{..., le} and _count               histogram
 *
 * Every other metric is skipped.  A group is kept by its NIC ports in the
 * design and its bucket (a sample whose node, peer or lane the design does
 * not have is counted in skipped and left out); an interval's counts are
 * the increase from one scrape to the next (a counter that went down was
 * reset: its new value is the increase, as Prometheus' increase() takes
 * it); a group missing from either scrape is left out of that interval.
 * Slow probes: with a bound (slow_s > 0), those answered slower than the
 * smallest bucket bound le >= slow_s, _count less that bucket.  At most
 * max_groups groups are kept (memory by groups: 80 bytes each).
 */
#ifndef FS_MONITOR_SCRAPE_H
#define FS_MONITOR_SCRAPE_H

#include <stddef.h>
#include <stdint.h>

#include "analyze.h"

struct scrape_group;

struct scrape {
	const struct loc_net *net;
	double slow_s;
	size_t max_groups;
	struct loc_map map;		/* (port_a, port_b, bucket) -> index */
	struct scrape_group *g;
	size_t ng, g_alloc;
	int cur;			/* which of the two scrapes is being read */
	long nscrapes;
	long skipped;			/* samples of this scrape not in the design */
	int full_said;
	int increases;			/* the values read are already the interval's increases (a
					 * Prometheus server's increase()): no scrape before needed */
	const char *source;		/* what is being read, for messages */
	char why[512];			/* the body's fault, when prom_parse stopped */
	struct mon_group *out;		/* scrape_interval's */
	size_t nout, out_alloc;
};

void scrape_init(struct scrape *s, const struct loc_net *net, double slow_s, size_t max_groups);
void scrape_release(struct scrape *s);
/* A new scrape begins: the one before becomes the previous. */
void scrape_begin(struct scrape *s);
/*
 * One body of Prometheus text (an agent's /metrics, or a file of them)
 * into the scrape under way; source names it in messages.  0, or
 * -FS_EXIT_PEER with one line said (the body is not the format, or a probe
 * metric lacks a label: what it held before the fault is kept), -FS_EXIT_ENV
 * (out of memory).
 */
int scrape_body(struct scrape *s, const char *source, const char *text, size_t len);
/* One sample (a prom_parse callback; ctx the scrape): 0, 1 a probe metric
 * without its labels or a count that is none (s->why says which), 2 out of
 * memory. */
struct prom_sample;
int scrape_sample(void *ctx, const struct prom_sample *m);
/* The groups of the interval from the previous scrape to this one, into
 * s->out[0 .. s->nout): 0, or -FS_EXIT_ENV said. */
int scrape_interval(struct scrape *s);

#endif
