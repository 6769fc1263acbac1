/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * `fabscope monitor analyze`: an interval of the agents' probe counters in,
 * verdicts out (fabscope-monitor-analyze(1)).  The steps:
 *
 *   1. the probe groups (node, peer, rail, plane, source-port bucket) of the
 *      interval: probes sent, lost and slow (mon_group; read from the
 *      agents' /metrics by promtext.h, or from a Prometheus server);
 *   2. their paths: every group whose probes went bad is traced (the 5-tuples
 *      of its bucket, source ports [base + b W, base + (b + 1) W), forward and
 *      back), through the tracer given (mon_tracer), at most max_traces new
 *      groups an interval, each trace kept; a group not traced (healthy, or
 *      not traceable) has the design's candidate paths (localize.h);
 *   3. the vote and the hysteresis (localize.h).
 *
 * The same groups in the same order give the same verdicts.
 */
#ifndef FS_MONITOR_ANALYZE_H
#define FS_MONITOR_ANALYZE_H

#include <stddef.h>
#include <stdint.h>

#include "localize.h"

#define MON_MAX_HOPS 16		/* switches on one traced path */
#define MON_MAX_TRACE_PORTS 64	/* source ports of a bucket traced; a wider bucket is not traced */

struct mon_group {
	const char *node, *peer;	/* the prober and the responder */
	int rail, plane, bucket;
	double sent, lost, slow;	/* in the interval */
};

/*
 * A tracer: the paths of the nports 5-tuples of group g (source ports
 * sport0, sport0 + 1, ...): for each, the switches forward (the node's leaf
 * first) into fwd[i][0 .. nfwd[i]) and back (the peer's leaf first) into
 * rev[i][0 .. nrev[i]).  Returns 0 traced, 1 not traced (the candidates are
 * used; say why at verbosity 1), or a negative exit code said (the
 * analysis stops).
 */
struct mon_tracer {
	int (*trace)(void *ctx, const struct loc_net *n, const struct mon_group *g, uint32_t port_a, uint32_t port_b,
		     int sport0, int nports, uint32_t (*fwd)[MON_MAX_HOPS], int *nfwd, uint32_t (*rev)[MON_MAX_HOPS],
		     int *nrev);
	void *ctx;
};

struct mon_analyzer {
	struct loc_net net;
	struct loc_paths paths;
	struct loc_vote vote;
	struct loc_track track;
	struct loc_opts opts;
	int sport_base, sport_width;
	int max_traces;			/* new traces an interval: default 256 */
	struct mon_tracer tracer;	/* .trace NULL: none, candidates only */
	struct loc_map traced;		/* (port_a, port_b, bucket) -> its traced set */
	struct loc_obs *obs;
	size_t nobs, obs_alloc;
	long skipped;			/* groups of the last interval not in the design (said once each) */
	long traces, untraceable;	/* the last interval's new traces, and groups that could not be */
};

/* After loc_net_build's design (t, outliving a): 0, or -FS_EXIT_* said. */
int mon_analyzer_init(struct mon_analyzer *a, const struct topo *t, const struct loc_opts *o, int sport_base,
		      int sport_width);
void mon_analyzer_release(struct mon_analyzer *a);

/*
 * One interval of groups: the vote (a->vote) and the verdicts' changes
 * (a->track.ch).  A group whose node, peer or lane is not in the design is
 * left out (a->skipped; said at verbosity 1).  0, or -FS_EXIT_* said.
 */
int mon_analyze_interval(struct mon_analyzer *a, const struct mon_group *g, size_t n);

#endif
