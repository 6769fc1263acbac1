/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Localization: which link or NIC of a fabric the monitor's probes say is
 * faulty (fabscope-monitor-analyze(1)).
 *
 * The agents report, per probe group (node, peer, rail, plane, source-port
 * bucket), how many probes they sent and how many were lost or slow.  A
 * probe crosses the prober's NIC, the switch-to-switch cables of its
 * forward path (chosen by ECMP from its 5-tuple), the responder's NIC, and
 * the cables of the answer's path back (its own 5-tuple, its own hash).
 * The elements that can be named are:
 *
 *   link   one direction of a cable between two switches (from -> to)
 *   nic    one NIC port of a node, on its lane (rail, plane): the port and
 *          its cable to the leaf, both ways (the two cannot be told apart
 *          by paths; ethtool's counters can, on the node)
 *   host   every lane of one node at once: not a fabric fault (a busy or
 *          sick host, R-Pingmesh's host noise); named so that its losses
 *          do not make eight NIC suspects, never a link or NIC verdict
 *
 * Paths.  A group's probes rotate over the source ports of its bucket, so
 * they spread over the bucket's paths: for an element e, the group's share
 * w(g, e) is the fraction of its probes that cross e.  Shares come from
 * path sets (struct loc_paths): either the design's candidates (every
 * shortest path between the two leaves, split equally at every switch as a
 * uniform ECMP hash spreads 5-tuples: what the intended topology knows) or
 * the paths traced for exactly the bucket's 5-tuples, forward and back
 * (what a Paris traceroute of those tuples says).  Candidates alone cannot
 * tell a leaf's uplinks apart (every group out of a leaf shares each
 * equally): such a fault is then "inconclusive", with the alternatives
 * named, until traces of the failing tuples say which.
 *
 * Voting (loc_vote), as NetBouncer and 007 vote, by likelihood: each probe
 * of group g is bad with probability q(g) = p0 + sum over the suspects e of
 * w(g, e) r(e), p0 the baseline (the larger of opts->base_loss and the
 * interval's rate of bad probes that no suspect explains).  An element's
 * score is the log-likelihood ratio of "e drops a fraction r of what
 * crosses it" against "e drops nothing", the groups' bad probes Poisson:
 * sum over the groups with bad probes through it of k ln(1 + w r / q),
 * less r times the probes through it (N, healthy groups' included: a link
 * crossed by many probes that came back has a low rate), maximized over r.
 * (A cheap screen comes first: the bad probes through it weighted by the
 * shares, O, against those expected, E, O ln(O / E) - (O - E) at least
 * LOC_SCREEN.)  Candidates that clear opts->min_score, an excess r N of
 * opts->min_excess and a rate of opts->min_rate are taken best first, a
 * pass at a time, never two in one pass that explain the same failing
 * groups (a quarter of them) or stand in one place (a NIC and its host, two
 * cables of one switch); the model then holds them, their rates and p0 are
 * estimated again, and the next pass looks at what is left, up to
 * LOC_MAX_PASSES passes and opts->max_suspects.  A candidate passed over for
 * one taken, whose score was within opts->tie of it and which the next pass
 * finds explained away, is an alternative: the suspect is inconclusive, both
 * listed.  A NIC and a host must be what their own probes say: a NIC's
 * probes within its leaf cross no cable but the NICs', so a loss they do not
 * show (their bad probes against those the NIC's rate would make, a Poisson
 * likelihood ratio over LOC_NIC_BOUND) is the fabric's; a host's fault is on
 * every lane, so a lane that contradicts it so (LOC_HOST_BOUND: stricter,
 * as every lane is tested) is a NIC's fault, not the host's.  Evidence per suspect: n failing groups
 * through it (a group fails when its bad probes are unlikely under p0: a
 * Poisson ratio over ln 100), m healthy ones (none bad) that avoid it and
 * leave its switch (a link) or its node (a NIC) another way.  Cost: per
 * pass, one sweep of the groups and one of the path-set entries, and the
 * likelihood of the screened elements over the groups with bad probes;
 * memory by elements (the cables and NIC ports), groups and path sets.
 *
 * Hysteresis (loc_track): an element is named after opts->k intervals in a
 * row of being a suspect, and cleared after k in a row of not being one;
 * the same inputs give the same verdicts (no clock, no randomness; ties
 * broken by element index).
 */
#ifndef FS_MONITOR_LOCALIZE_H
#define FS_MONITOR_LOCALIZE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../topology/intent.h"

/* ---- the fabric: switches, cables, NIC ports ---- */

struct loc_port {
	uint32_t host;		/* index into hosts */
	int rail, plane;
	int leaf;		/* its switch */
	uint32_t cable;		/* index into the design's links */
};

struct loc_adj {
	uint32_t v;		/* the neighbouring switch */
	uint32_t edge;		/* the directed edge to it: 2 * cable + (0: a -> b, 1: b -> a) */
};

struct loc_net {
	const struct topo *t;
	size_t nsw, ncables;
	size_t *adj_off;	/* switch u's neighbours: adj[adj_off[u] .. adj_off[u + 1]), by v */
	struct loc_adj *adj;
	const char **hosts;	/* node names, sorted (strcmp) */
	size_t nhosts;
	struct loc_port *ports;	/* sorted by host, rail, plane */
	size_t nports;
	size_t *host_port;	/* host h's ports: [host_port[h], host_port[h + 1]) */
	/* elements: directed edges [0, 2 ncables), NICs [nic0, nic0 + nports), hosts after */
	uint32_t nic0, host0, nelems;
	/* scratch of the candidate path sets (a breadth-first search) */
	int *dist;
	double *mass;
	uint32_t *queue;
};

/* Build from a read, finished design (topo_finish): 0, or -FS_EXIT_* said
 * (no NIC port, out of memory).  t must outlive n. */
int loc_net_build(struct loc_net *n, const struct topo *t);
void loc_net_release(struct loc_net *n);
/* The host named name, or -1 (a binary search) */
long loc_host(const struct loc_net *n, const char *name);
/* The NIC port of host h on (rail, plane), or -1 */
long loc_port_of(const struct loc_net *n, size_t h, int rail, int plane);
/* The directed edge from switch u to switch v (the first cable between them), or -1 */
long loc_edge(const struct loc_net *n, uint32_t u, uint32_t v);
/* An element's name for messages and verdicts: "link s3 -> l1.0", "nic h7 rail 2 plane 0", "host h7" */
void loc_elem_name(const struct loc_net *n, uint32_t e, char *buf, size_t len);

/* ---- a map of 64-bit keys to indices (open addressing) ---- */

struct loc_map {
	uint64_t *key;		/* key + 1; 0: empty */
	uint32_t *val;
	size_t n, alloc;
};
/* the value of key, or -1 */
long loc_map_get(const struct loc_map *m, uint64_t key);
/* 0, or -1 out of memory (m unchanged) */
int loc_map_put(struct loc_map *m, uint64_t key, uint32_t val);
void loc_map_release(struct loc_map *m);

/* ---- path sets: elements with the share of a group's probes that cross them ---- */

struct loc_share {
	uint32_t elem;
	float w;
};

struct loc_paths {
	size_t *off;		/* set i: share[off[i] .. off[i + 1]) */
	struct loc_share *share;
	size_t nsets, nshares, off_alloc, share_alloc;
	unsigned char *traced;	/* per set: 1 traced, 0 the design's candidates */
	size_t traced_alloc;
	struct loc_map cand;	/* the candidate sets already made, by (source leaf, destination leaf) */
};

void loc_paths_init(struct loc_paths *p);
void loc_paths_release(struct loc_paths *p);
/*
 * The candidate set of the probes from a port on leaf a to one on leaf b and
 * their answers back (every shortest path a -> b and b -> a, the share of
 * each cable as an equal split at every switch gives it); made once per
 * pair of leaves.  The empty set when a == b (nothing but the two NICs).
 * Returns its index, or -1 with one line said (no path, out of memory).
 */
long loc_paths_candidates(struct loc_paths *p, struct loc_net *n, int a, int b);
/*
 * A traced set: nports paths forward and nports back, each a list of
 * switch indices (the source leaf first); each path carries 1 / nports of
 * the group's probes.  Returns its index, or -1 said (two switches of a
 * path with no cable between them, out of memory).
 */
long loc_paths_traced(struct loc_paths *p, const struct loc_net *n, int nports, const uint32_t *const *fwd,
		      const int *nfwd, const uint32_t *const *rev, const int *nrev);

/* ---- one interval's observations, and the vote ---- */

struct loc_obs {
	uint32_t port_a, port_b;	/* the prober's and the responder's NIC ports */
	uint32_t set;			/* its path set */
	double sent, bad;		/* probes sent; lost or slower than the bound */
};

struct loc_opts {
	double base_loss;	/* the floor of p0: default 1e-5 */
	double min_score;	/* log-likelihood ratio to take a suspect: default 20 */
	double min_excess;	/* bad probes beyond the expected: default 4 */
	double min_rate;	/* the suspect's own rate of bad probes: default 0.002 */
	double tie;		/* an alternative's score against the best: default 0.8 */
	int max_suspects;	/* default 64 */
	int k;			/* hysteresis intervals: default 3 */
};
#define LOC_OPTS_INIT { 1e-5, 20, 4, 0.002, 0.8, 64, 3 }
#define LOC_MAX_ALTS 8
#define LOC_MAX_PASSES 8	/* passes of the vote an interval (see above) */
#define LOC_NIC_BOUND 3.0	/* a NIC's probes within its leaf contradict its rate: ln 20 */
#define LOC_HOST_BOUND 6.9	/* a lane of a host contradicts the host's rate: ln 1000 */
#define LOC_SCREEN 3		/* the quick score an element needs before its likelihood is computed */

struct loc_suspect {
	uint32_t elem;
	double score, excess, rate;	/* the log-likelihood ratio, O - E, (O - E) / N */
	double bad, sent;		/* O and N: bad probes and probes through it */
	long failing, healthy;		/* n failing groups through it, m healthy ones avoiding it */
	int traced;			/* its failing groups' paths were all traced */
	int nalts;			/* > 0: inconclusive between it and alts */
	uint32_t alts[LOC_MAX_ALTS];
	int nrivals;			/* the vote's: near it and close in score when it was taken */
	uint32_t rivals[LOC_MAX_ALTS];
};

struct cand;
struct exact_grp;

struct loc_vote {
	double p0;		/* the baseline used */
	double sent, bad;	/* the interval's totals */
	long groups, failing;
	struct loc_suspect *s;
	size_t ns, s_alloc;
	struct cand *cand;	/* the vote's: the elements that pass the bounds */
	size_t ncand, cand_alloc;
	uint32_t *fail, *mark;	/* the failing groups, and which suspect each went through */
	size_t nfail, fail_alloc;
	uint32_t *badg;		/* the groups with bad probes */
	size_t nbadg, badg_alloc;
	double *q;		/* per group: its rate of bad probes under the model */
	struct exact_grp *xg;	/* the likelihood's scratch */
	/* scratch per element and per set */
	double *o, *e, *x, *rate;
	double *so, *se, *sx, *sr;
	double *lo, *le, *lx;	/* per NIC port: O, E, N of its probes within its leaf */
	size_t nelems_alloc, nsets_alloc, nports_alloc;
};

void loc_vote_init(struct loc_vote *v);
void loc_vote_release(struct loc_vote *v);
/* Vote over obs[0 .. nobs): v->s holds the suspects, best first.  0, or
 * -FS_EXIT_ENV said (out of memory). */
int loc_vote(struct loc_vote *v, const struct loc_net *n, const struct loc_paths *p, const struct loc_obs *obs,
	     size_t nobs, const struct loc_opts *o);
/* 1 when the group failed: its bad probes unlikely under the baseline p0 */
int loc_group_failed(double sent, double bad, double p0);

/* ---- hysteresis ---- */

enum loc_state { LOC_CLEAR, LOC_NAMED };

struct loc_elem_track {
	uint16_t bad_run, ok_run;
	uint8_t named;
	uint8_t inconclusive;	/* last interval: a suspect with alternatives */
};

struct loc_change {
	uint32_t elem;
	int named;		/* 1 named now, 0 cleared now */
	struct loc_suspect why;	/* named: the interval's evidence */
};

struct loc_track {
	struct loc_elem_track *el;
	size_t nel;
	uint32_t *named;	/* the named elements, ascending */
	size_t nnamed, named_alloc;
	struct loc_suspect *last;	/* per named element: the evidence when last a suspect */
	struct loc_change *ch;	/* this step's changes */
	size_t nch, ch_alloc;
	long interval;
};

/* 0, or -FS_EXIT_ENV said */
int loc_track_init(struct loc_track *t, size_t nelems);
void loc_track_release(struct loc_track *t);
/*
 * One interval: the suspects of v that are conclusive count as bad for
 * their element, every other element as healthy; an element is named after
 * k bad in a row, cleared after k healthy in a row.  t->ch lists the
 * changes.  0, or -FS_EXIT_ENV said.
 */
int loc_track_step(struct loc_track *t, const struct loc_vote *v, int k);

/* ---- verdicts out ---- */

/*
 * The named links and NICs as Prometheus text exposition (what a /metrics
 * serves): fabscope_link_suspect{from, to, rail, plane} 1 and
 * fabscope_nic_suspect{node, rail, plane} 1, with their HELP and TYPE
 * lines, and fabscope_host_suspect{node} 1 (not a fabric fault).  A link's
 * rail and plane are its switches' (rail= and plane= of the design), "" when
 * not given.  0, or -1 when writing failed.
 */
int loc_write_prom(FILE *f, const struct loc_net *n, const struct loc_track *t);
/*
 * One JSON line for the interval (time, p0, totals, the suspects and the
 * named), and one per change: {"event": "named"|"cleared", "kind": "link"|"nic"|"host",
 * ..., "evidence": {...}, "confirmed": "..."}.  how says how the paths
 * were known ("traced" / "candidates").  0, or -1 when writing failed.
 */
int loc_write_json(FILE *f, const struct loc_net *n, const struct loc_vote *v, const struct loc_track *t,
		   const char *when, int k);

#endif
