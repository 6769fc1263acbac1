/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Plans, hostfiles and schedules for `fabscope run`.
 *
 * A plan is an INI file in the style of fio job files: a [global] section
 * and one section per phase, run in file order.  Keys of [global] are the
 * defaults of every phase; a phase's own keys override them.
 *
 *   [global]
 *   hostfile = hosts          ; relative to the plan file
 *   transport = tcp
 *   duration = 3
 *   label = fabric=lab
 *
 *   [rails-bw]
 *   kind = pairwise           ; pairwise ring permutation bisection incast ping
 *                             ; polarization pfc allreduce alltoall
 *   test = bw                 ; bw, lat, or bw,lat (the collectives are their own test)
 *   size = 1M
 *
 *   [lat-loaded]
 *   kind = pairwise
 *   test = lat
 *   load = bw                 ; each lat test beside a bw test of its pair, the load
 *   duration = 2
 *
 *   [rings]
 *   kind = allreduce          ; per lane, one collective of every node on it
 *   minbytes = 1M
 *   maxbytes = 64M
 *
 * A hostfile has one node per line: its name, then key=value words:
 *   h1 netns=fab-h1 ssh=root@10.0.0.1 rail0=10.100.1.1 rail1=10.101.1.1 rail0/1=10.110.1.1
 * "railK=IP" is the endpoint of rail K (plane 0); "railK/P=IP" of rail K,
 * plane P.  An endpoint is what a test connects: tests pair endpoints of the
 * same rail and plane (a "lane"), every lane of a round at once; the
 * collectives join every endpoint of a lane into one group (rank i: the
 * i-th node with one).
 *
 * Schedules are computed per round on demand (O(nodes) per round, nothing
 * stored per pair), so a plan for 16,384 nodes x 8 rails costs what its
 * hostfile costs to read.
 */
#ifndef FS_PLAN_H
#define FS_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "../core/lanes.h"

/*
 * Latency under load (a phase's load = bw, on test = lat of a pair kind):
 * in every round, each pair's bw job (the load) starts first; its lat job
 * starts PLAN_LOAD_SETTLE_S after the load's client was started (the
 * coordinator has no word of when its traffic flows: the connection takes
 * milliseconds, and the load's own warm-up is as long, so the latency is
 * measured past it).  The load runs for load_s, sized from the lat's
 * duration (which such a phase must give: a count of iters gives no time),
 * so that it outlasts the lat job; a load that ends first fails its lat
 * job rather than let a record half idle pass for loaded.
 */
#define PLAN_LOAD_SETTLE_S 1.0

/* lanes (rail, plane) a plan_lanes array holds */
#define PLAN_MAX_LANES 64
#define PLAN_MAX_TESTS 2

enum plan_kind {
	PLAN_PAIRWISE,		/* round-robin tournament: N-1 rounds of N/2 disjoint pairs */
	PLAN_RING,		/* one round: node i -> node i+1 */
	PLAN_PERMUTATION,	/* count rounds, each a random derangement */
	PLAN_BISECTION,		/* one round: first half <-> second half */
	PLAN_INCAST,		/* one round: every node -> target */
	PLAN_PING,		/* one round: control-channel round trip of every agent */
	PLAN_POLARIZATION,	/* one round: node i -> node i+N/2, the hash-polarization probe */
	PLAN_PFC,		/* one round: every node -> target, the PFC-pause probe on each */
	PLAN_ALLREDUCE,		/* one round: per lane, an all-reduce of the nodes on it (a group job) */
	PLAN_ALLTOALL,		/* one round: per lane, an all-to-all of the nodes on it (a group job) */
	PLAN_TOPOLOGY,		/* one round: every node observes its cables (topo show), a job each */
};
#define PLAN_NKINDS (PLAN_TOPOLOGY + 1)
/* the kinds whose jobs are one node each, not a pair or a group */
#define PLAN_PER_NODE(k) ((k) == PLAN_PING || (k) == PLAN_TOPOLOGY)

struct plan_kv {
	char *key, *val;
	int line;
};

struct plan_lane {
	int rail, plane;
};

struct plan_endpoint {
	int rail, plane;
	char *ip;
};

struct plan_node {
	char *name;
	char *netns;		/* local launcher: run the agent inside it */
	char *ssh;		/* ssh launcher: destination (default: name) */
	char *leaf, *pod;	/* its leaf (the group of leaves, one a rail, in a
				 * rail-optimized fabric) and pod: how a report
				 * aggregates a large fleet; NULL: not given */
	struct plan_endpoint *ep;
	int nep;
	size_t ep_alloc;
};

struct plan_phase {
	char *name;
	enum plan_kind kind;
	const char *tests[PLAN_MAX_TESTS];
	int ntests;
	struct plan_kv *kv;	/* engine options (the engines' long option names) */
	int nkv;
	size_t kv_alloc;
	int count;		/* permutation: rounds */
	uint64_t seed;		/* permutation */
	char *target;		/* incast: the receiving node (default: the first) */
	int parallel;		/* at most this many tests at once in a round (0: all; a lat
				 * job and its load are one test) */
	const char *load;	/* load = bw: each lat job runs beside a bw job of its pair,
				 * started first (NULL: the latency is measured idle) */
	double load_s;		/* the load's duration, longer than its lat job takes */
	int rails[FS_MAX_RAILS], nrails;	/* rails = 0,1: only these (default all) */
	int line;
	int skip;		/* its target did not join: not run */
};

struct plan {
	char *path;		/* as given */
	char *text;		/* the whole file, kept for run.json */
	struct plan_kv *global;	/* [global] keys that are not engine options */
	int nglobal;
	size_t global_alloc;
	struct plan_phase *phases;
	int nphases;
	size_t phases_alloc;
	struct plan_node *nodes;
	int nnodes;
	size_t nodes_alloc;
	int *by_name;		/* node indices sorted by name */
	size_t by_name_alloc;
	char *hostfile;		/* resolved path, or NULL */
	char *hostfile_text;
};

struct plan_pair {
	int client, server;	/* node indices */
};

/* Parse a plan from text (path names it in messages).  0, or -exit code
 * after one line on stderr naming the file, line and key. */
int plan_parse(struct plan *p, const char *path, const char *text);
int plan_load(struct plan *p, const char *path);
/* Read a hostfile (text, or NULL to read path) into p->nodes. */
int plan_hostfile(struct plan *p, const char *path, const char *text);
/* n nodes named PREFIX0.. without endpoints (agents report theirs): 0, or
 * -FS_EXIT_ENV (said) when out of memory. */
int plan_nodes_anon(struct plan *p, int n);
/* Free what p holds (p itself is the caller's), and zero it. */
void plan_release(struct plan *p);

/* A node added at run time (an agent that brought its own name); -1 if
 * the name is taken or there is no memory for it (the caller says which).
 * It costs a binary search and a move of the index after its place (no
 * sort): 16,384 agents that name themselves join in bounded time each. */
int plan_node_add(struct plan *p, const char *name);
/* 1 when key is an engine option (is_bool: a flag without a value). */
int plan_engine_key(const char *key, int *is_bool);
/* An endpoint's address as hostfiles and agents' --rail give it (its rail
 * and plane: fs_lane_ok): the NIC's, IPv4 or IPv6. */
int plan_ip_ok(const char *s);
/* A node name, as hostfiles, agents' --name and registrations give it: 1 to
 * PLAN_NAME_MAX bytes of letters, digits, '.', '_', ':' and '-', beginning
 * with a letter or digit (a host name, with the ':RANK' that srun and mpirun
 * agents add).  It reaches remote commands, logs, file names and reports. */
#define PLAN_NAME_MAX 253
int plan_name_ok(const char *s);
/* An ssh destination (a hostfile's ssh=): [USER@]HOST, HOST a name, an IPv4
 * address or [IPv6]; never an option (no leading '-'). */
int plan_ssh_dest_ok(const char *s);
/* A plan's boolean: 1 (1, true, yes, on), 0 (0, false, no, off, any case), -1 neither. */
int plan_bool(const char *v);
/* Does an engine option go to this engine?  engine: "bw", "lat",
 * "polarization" (the probe's client; its server is a bw server), "pfc",
 * "allreduce" or "alltoall". */
int plan_key_for(const char *key, const char *engine);
/* Does a loaded phase's key go to its load's bw job?  What plan_key_for
 * gives bw, less the keys that say what the lat measures (size, all,
 * iters, duration, warmup, op, sport, flow-label, inline): the load is
 * bw's 64 KiB WRITEs, shaped by the phase's bw-only keys (flows,
 * bidirectional, tx-depth, cq-mod, post-list) and sharing the lat's
 * transport, device and traffic class. */
int plan_load_key(const char *key);
/* Is the phase's job a group of ranks per lane (allreduce, alltoall)
 * rather than pairs of endpoints? */
int plan_is_group(const struct plan_phase *ph);
/* Seconds one rank of a collective phase needs for all its sizes (size:
 * that one alone, a re-test's) with nranks ranks (0: unknown, taken as
 * many), at gbps per rank's link and step_s per message step of the
 * algorithm, plus connecting and the data check (a few passes over the
 * buffers). */
double plan_coll_seconds(const struct plan_phase *ph, uint64_t size, int nranks, double gbps, double step_s);

/*
 * What a plan costs in time (plan-est.c): the model behind --dry-run's
 * estimate, the live ETA, run.json's estimate_s and the re-tests' budget.
 * A job costs its engine's time and setup_s beyond it (its server and
 * client started, connected, their records and ends reported; on a busy
 * host, what the jobs beside it take from it too; a node's own job, with
 * no server to wait for, half of it; a ping round none).  The engine's time is
 * what its options make it: per size the warm-up and the duration, and
 * the messages still in flight when it ends, at the lane's speed (a count
 * of messages instead: them at the lane's speed, or round trips of rtt_s
 * and the size both ways); the polarization probe's sets of flows; the PFC
 * probe's samples before, during and after its load (and the load's
 * drain into the target); a collective's sizes at the lane's speed; the
 * topology's listening.  A round's jobs run at once (in waves of at most
 * parallel), as long as the longest; a phase is its rounds of each test.
 * A lane's speed: what the run measured of it (fabscope run learns it
 * from its bw records, and setup_s from its jobs' times), else the
 * design's links ([global] topology), else gbps.
 */
#define PLAN_COST_SETUP_S 0.25	/* a job beyond its engine: on the bed, see docs/benchmarks.md */
#define PLAN_COST_RTT_S 15e-6	/* a small message's round trip */
#define PLAN_COST_GBPS 100	/* a lane's speed when nothing says it */
#define PLAN_COST_LINK_EFF 0.95	/* what of a link's rate a pair gets (TCP's payload at 1500 B) */
#define PLAN_COST_COLL_EFF 0.9	/* what of a pair's rate a collective's rank gets (on the bed) */
struct plan_cost {
	double setup_s, rtt_s, gbps;
	double lane_gbps[FS_MAX_RAILS][FS_MAX_PLANES];	/* 0: not known (gbps) */
	char lane_from[FS_MAX_RAILS][FS_MAX_PLANES];	/* 'd' the design's, 'm' measured, 0 */
};
void plan_cost_init(struct plan_cost *pc);
/* The speed the model takes for lane l (Gb/s) */
double plan_cost_gbps(const struct plan_cost *pc, struct plan_lane l);
/* Seconds the engine of one job of test (a phase's test, or "load") on
 * lane l takes, at plan_cost_gbps (a collective's rank at
 * PLAN_COST_COLL_EFF of a pair's rate: of what the run measured, else
 * PLAN_COST_LINK_EFF of the link's): nodes the lane's nodes (a
 * collective's ranks, the incast's and PFC's senders and target); size:
 * at that size alone (a re-test's; 0: the phase's).  The set-up is not in
 * it. */
double plan_job_engine_s(const struct plan_phase *ph, const char *test, uint64_t size, struct plan_lane l,
			 int nodes, const struct plan_cost *pc);
/* Jobs a round of ph has on a lane of n nodes (a lat job under load and
 * its load: one), and whether its jobs are one a node (1) or group (2). */
int plan_round_jobs(const struct plan_phase *ph, int n);
/* Seconds the rounds of ph take from test t0's round r0 on (0, 0: the
 * whole phase), its lanes lanes[0..nl) with nodes[li] nodes each (a
 * phase of jobs a node: one lane, every node). */
double plan_phase_cost_s(const struct plan_phase *ph, const struct plan_lane *lanes, const int *nodes, int nl,
			 const struct plan_cost *pc, int t0, int r0);
/* Seconds one round (round r of test t) takes, as above. */
double plan_round_cost_s(const struct plan_phase *ph, const char *test, int r, const struct plan_lane *lanes,
			 const int *nodes, int nl, const struct plan_cost *pc);
/* Read the lanes' speeds of a design (its host ports' cables, the
 * slowest of a rail and plane) into pc: the count of lanes it gave. */
struct topo;
int plan_cost_design(struct plan_cost *pc, const struct topo *t);

/* A [global] value, or dflt. */
const char *plan_global(const struct plan *p, const char *key, const char *dflt);
/* An engine option of a phase, or dflt. */
const char *plan_opt(const struct plan_phase *ph, const char *key, const char *dflt);
const char *plan_kind_name(enum plan_kind k);

/* Lanes (rail, plane) present on any node, filtered by the phase's rails=,
 * sorted; returns the count. */
int plan_lanes(const struct plan *p, const struct plan_phase *ph, struct plan_lane *out, int max);
/* The node's endpoint on a lane, or NULL. */
const struct plan_endpoint *plan_node_ep(const struct plan_node *n, struct plan_lane l);
int plan_node_index(const struct plan *p, const char *name);

/* Rounds of one test of a phase for n nodes. */
int plan_rounds(const struct plan_phase *ph, int n);
/* The pairs of round r (0-based) among n nodes; out has room for n pairs.
 * Returns the count (0 for ping and the group kinds, which have none).
 * Within a round no node is in two pairs, except in ring (each node sends
 * once and receives once), bisection (both ways across the cut) and
 * incast (every node to the target). */
int plan_round_pairs(const struct plan_phase *ph, int n, int r, int target,
		     struct plan_pair *out);

#endif
