/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * `fabscope report`: everything it renders comes from one model built
 * from the records of one or more results directories.
 *
 *   run      one results directory: run.json, its records, a name (its
 *            labels that differ between the runs compared, else the
 *            directory's name)
 *   group    the results of one phase, test and lane (rail/plane) of a
 *            run: per-pair values (bw_gbps, or lat_us p50 with p99 beside)
 *            and their min/median/max; a matrix of nodes for the heatmap
 *   sweep    median bandwidth per message size per lane, when a phase swept
 *            sizes (all = 1)
 *   pfc      one port sampled by the PFC-pause probe (a record with "test":
 *            "pfc"): who, what the probe judged, and per priority the pause
 *            rates, the worst paused fraction, storms and whether ECN/CNP
 *            acted before PFC.  Records are untrusted: what is missing or of
 *            the wrong type is NAN, NULL or "unknown" here, never a guess
 *
 * Renderers (Markdown, HTML with inline SVG plots, JSON summary) read the
 * model, never the records themselves; checks (the run's integrity, the
 * thresholds, the model of the design, the baseline) add rows that the
 * renderers print and mark what they judged (struct rmeasured); the verdict
 * (PASS, FAIL, INCOMPLETE) and the exit code come of both (verdict.c).
 */
#ifndef FS_REPORT_H
#define FS_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "../core/lanes.h"
#include "../core/outfile.h"
#include "../records/store.h"
#include "../topology/verify.h"

struct rpair {
	const char *src, *dst;
	double v, v99;		/* bw_gbps, or lat p50 and p99 (us) */
	double exp;		/* bw, with --topology: the model's rate for it in its round (an
				 * equal split at every switch: its fair share); NAN: none */
	int round;		/* its round in the phase (1..; 0 unknown) */
};

/* what the path did to a bw group's order (TCP), summed over its pairs:
 * the senders' retransmissions and detected reorderings, the receivers'
 * out-of-order packets of their segments; n: pairs that reported them */
struct rreorder {
	double retrans, reord_seen, ooo, rx_segs;
	int n;
};

/* The sizes at which a lane's report changes (aggregate.c): pairwise
 * matrices in Markdown up to REPORT_MATRIX_NODES nodes, the worst pairs and
 * nodes above; node x node heatmaps up to REPORT_HEAT_NODES, leaf x leaf
 * ones above (by pod over REPORT_MAX_LEAVES leaves). */
#define REPORT_MATRIX_NODES 16
#define REPORT_HEAT_NODES 64
#define REPORT_MAX_LEAVES 512
#define REPORT_WORST 10

/* one of a lane's worst pairs (src, dst) or nodes (src; dst NULL) */
struct rworst {
	const char *src, *dst;
	double v;		/* the pair's figure, or the node's median over its pairs */
	int n;			/* a node: how many pairs */
	int leaf, dst_leaf;	/* in rrun.leaf (src's, dst's), -1 unknown */
};

struct rgroup {
	const char *phase;	/* the run's store's (whole, however long) */
	char test[8];
	int rail, plane;
	struct rpair *p;
	int n;
	size_t p_alloc;
	int order;		/* the phase's place in the run */
	double size;		/* message size (the largest, when a phase swept) */
	char params[128];	/* what the figure depends on: size, transport, op (bw: flows, dir) */
	double min, median, max, p99_median;
	double agg;		/* bw: the pairs' sum over the rounds, per round (a round's
				 * pairs run at once); NAN for lat */
	int rounds;		/* distinct rounds among the pairs */
	int loaded;		/* lat: measured under a load (params.load) */
	double jain;		/* bw: Jain's fairness of the pairs' rates */
	struct rreorder ro;
	double exp_spray, exp_ecmp;	/* modes.c: the model's aggregate a round for these
					 * pairs (spraying, per-flow ECMP); NAN: no topology */
	const char **nodes;	/* sorted names, for the matrix */
	int nnodes;
	/* over REPORT_MATRIX_NODES nodes (aggregate.c), worst first */
	struct rworst worst_pair[REPORT_WORST], worst_node[REPORT_WORST];
	int nworst_pair, nworst_node;
	/* over REPORT_HEAT_NODES nodes, when the run's nodes have leaves: the
	 * median from leaf i to leaf j at [i * nleaf + j] (NAN: no pair); NULL */
	double *leafm;
	int leafm_cells;	/* cells with a figure */
	/* every lane (aggregate.c): its worst pair and its worst node (the
	 * median of a node's pairs; none, n 0, with fewer than 3 nodes) */
	struct rworst worst1_pair, worst1_node;
	int both_ways;		/* unordered pairs measured in both directions */
};

struct rsweep {
	const char *phase;	/* the run's store's */
	int rail, plane;
	double size[32], bw[32];
	int n;
};

enum { RPFC_RX, RPFC_TX };	/* rx: the peer paused us; tx: we paused the peer */

struct rpfc_prio {
	int prio;			/* 0..7 */
	double frames[2];		/* pause frames over the sampling; NAN: unknown */
	double pps_avg[2], pps_max[2];	/* pause frames per second */
	double paused_max[2];		/* the largest fraction of an interval paused */
	int estimated;			/* paused_max from frames x quanta, not durations */
	const char *storm;		/* "none", "rx", "tx", "rx+tx"; NULL: unknown */
	int storm_run;			/* intervals in a row over the storm fraction */
	double storm_at;		/* seconds: the start of the storm's first interval */
	double pause_at;		/* seconds: the start of the first interval that paused */
	const char *ecn_first;		/* "yes", "no", "unknown" */
};

struct rpfc {
	json_t *rec;			/* the record (the run's records own it) */
	const char *phase, *node, *role, *iface, *dst;	/* dst: NULL unless a sender's */
	const char *verdict;		/* "storm", "paused", "clean", "unknown" (or the record's word) */
	const char *verdict_text;	/* NULL when the record has none */
	const char *ecn_first;		/* over the port's priorities */
	int storm;			/* some priority, some direction */
	double ecn_at;			/* seconds: the start of the first interval ECN/CNP rose */
	double pause_at;		/* seconds: the start of the first interval that paused */
	double storm_fraction;		/* what the probe called a stormy interval */
	int order;			/* the phase's place among the run's PFC records */
	int seq;			/* the record's place among them */
	struct rpfc_prio *p;
	int np;
	size_t p_alloc;
};

/*
 * Something a run measured, which a verdict must judge: a phase's test on
 * a lane (bw, lat) or as a whole (rail and plane -1: collectives, the
 * probes, topology, ping, any other test); judged counts the checks that
 * judged it (report_judged).  A report is PASS only when every one was.
 */
struct rmeasured {
	const char *phase;	/* the run's store's (whole, however long) */
	char test[24];
	int rail, plane;
	int n;			/* its records */
	int judged;
};

/* a phase of run.json's "planned" (what the coordinator meant to run) and
 * what of it ran: its lines in jobs.done, its failed records */
struct rplanned {
	const char *name, *kind;	/* run.json's strings */
	long jobs, done, failed;
	int skipped;
};

struct rrun {
	char *dir;
	unsigned long long dev, ino;	/* the directory's, to know a run given twice */
	char name[256];		/* how tables and plots call this run */
	json_t *run;		/* run.json (or an empty object) */
	struct rstore st;	/* its records, as numbers (PFC, collectives and the first failed kept whole) */
	json_t *suspects;
	json_t *not_confirmed;	/* latency pairs that were not high on their re-test */
	json_t *polar;		/* polarization records */
	struct rpfc *pfc;	/* PFC probe records, by phase, node, iface */
	int npfc;
	struct rgroup *g;
	int ng;
	struct rsweep *sw;
	int nsw;
	size_t pfc_alloc, g_alloc, sw_alloc;
	int nrec, nerr, missing;
	struct topo_obsset topo_obs;	/* the ports its topology phases saw */
	json_t *cabling;	/* them judged (cabling.c), or NULL: no topology record */
	/* the leaves (hostfile's leaf=; or pods, pod=) of run.json's nodes, for
	 * the aggregates (aggregate.c): leaf_by "leaf", "pod" or NULL (none) */
	const char *leaf_by;
	const char **leaf;	/* sorted names */
	int nleaf;
	int *leaf_of;		/* interned node name -> leaf index, -1 */
	int nleaf_of;
	size_t leaf_of_alloc;
	struct rmeasured *ms;	/* what it measured, in the order first seen */
	int nms;
	size_t ms_alloc;
	struct rplanned *planned;	/* NULL: run.json has no "planned" (an older fabscope) */
	int nplanned;
	int jobs_done_read;	/* jobs.done was there and read */
	long jobs_done_other;	/* its lines of no planned phase (not re-tests) */
};

struct check {
	char name[256];		/* "bw >= 0.9 x line rate", ... */
	char limit[64], worst[96];
	int failing, total, pass;
	int not_comparable;	/* baseline: measured with other test parameters; pass is 1, no verdict */
	int not_judged;		/* it could not judge (who says why): pass is 1, the verdict INCOMPLETE */
	char who[512];		/* the failing endpoints, the first few */
};

/* thresh.c: a thresholds file (fabscope-thresholds(5)) as read */
struct tkv {
	char sec[32], phase[64], key[64];	/* phase: of a [phase NAME] section (sec "phase"), else "" */
	double v;			/* fail/off: 1/0 */
	int line;
};

struct thresholds {
	const char *path;
	struct tkv *kv;
	int n;
	size_t alloc;
};

/* Read path: 0, or -FS_EXIT_* said (a key that is not one, a bad value,
 * min_fraction without a line rate, nothing to judge by). */
int thresholds_read(struct thresholds *t, const char *path);
void thresholds_release(struct thresholds *t);
/* [sec] key of the file, or dflt (t may be NULL: no file) */
double thresholds_get(const struct thresholds *t, const char *sec, const char *key, double dflt);
/* [phase NAME] key, or NAN */
double thresholds_phase(const struct thresholds *t, const char *phase, const char *key);

/* the model's default fractions (fabscope-thresholds(5), [model]): a pair
 * below a quarter of its fair share is more than a hash collision of up to
 * three flows on one path explains; a lane below 0.6 of what per-flow ECMP
 * carries on average is more than an unlucky hash of a few flows */
#define REPORT_PAIR_FRACTION 0.25
#define REPORT_AGGREGATE_FRACTION 0.6

enum report_result { REPORT_PASS, REPORT_FAIL, REPORT_INCOMPLETE };

struct report {
	struct rrun *runs;
	int nruns;
	const char *by;		/* label key that names runs (--by), or NULL */
	struct check *checks;	/* the acceptance: run integrity, thresholds, the model */
	int nchecks;
	const char *thresholds;	/* --thresholds: the file, or NULL */
	int model_checked;	/* the model judged some bw lane (--topology with speeds) */
	/* report_verdict: what the checks and the measured things say together */
	enum report_result result;
	int failed;		/* checks failed, the cabling and the baseline among them */
	int not_judged;		/* checks that could not judge, and measured things nothing judged */
	struct rrun base;	/* --baseline */
	int have_base;
	double tolerance;
	const char *topology;	/* --topology: the intent file, or NULL */
	int cabling_errors;	/* of the runs' ports against it: the report fails */
	struct check *regs;	/* baseline comparisons */
	int nregs;
	char speeds[1024];	/* the design's host port speeds (--topology), or "" */
	double line_rate;	/* the thresholds' [bw] line_rate_gbps, or NAN */
	char plots_dir[4096];	/* where the SVGs are, or "" */
	char plots_note[256];	/* why there are no plots */
	char **svg;		/* file names of plots made, in order */
	char **svg_title;
	int nsvg;
	size_t checks_alloc, regs_alloc, svg_alloc, svg_title_alloc;
	const char *history_path;	/* --history: the file, or NULL */
	json_t *history;	/* what it says of the first run (history.h's hist_diff), or NULL */
	int oom;		/* something could not be kept: said, and the command fails */
	struct check spare;	/* what a check gets filled into when it could not be kept */
};

/* model.c */
int report_load_run(struct rrun *r, const char *dir);
void report_free_run(struct rrun *r);
/* Name the runs by the labels that differ between them (or by --by). */
void report_name_runs(struct report *rep);
/* The group of run r for (phase, test, rail, plane), or NULL. */
const struct rgroup *report_group(const struct rrun *r, const char *phase, const char *test,
				  int rail, int plane);
const char *report_unit(const char *test);

/*
 * The timeline of a PFC record: per sampling interval, "t" its end in
 * seconds from the first sample (so interval k began at t[k - 1], the first
 * at 0), "phase" ("before", "during", "after"), and per priority "rx_pps",
 * "tx_pps", "rx_paused", "tx_paused".  Arrays may differ in length: use the
 * shortest.  report_pfc_at: when interval k began (NAN: not known).
 * report_pfc_series: timeline.prio.PRIO.KEY into v (NAN for a null or a
 * non-number), at most max; returns how many, 0 when absent.
 */
double report_pfc_at(json_t *rec, int k);
int report_pfc_series(json_t *rec, int prio, const char *key, double *v, int max);
/* "80 %", "n/a" */
void report_pct(double frac, char *buf, size_t len);
/* seconds to 10 ms: "2.5", "0.41", "n/a" */
void report_secs(double secs, char *buf, size_t len);

/* aggregate.c: the worst pairs and nodes, leaf matrices of r's large lanes
 * (after its groups are finished); 0, or out of memory: said, -FS_EXIT_ENV */
int report_aggregate(struct rrun *r);
void report_aggregate_release(struct rrun *r);
/* a lane's worst pairs ([{src, dst, value, src_leaf, dst_leaf}]) or nodes
 * ([{node, median, pairs, leaf}]) for the JSON summary */
json_t *report_worst_json(const struct rrun *r, const struct rgroup *g, int nodes);

/* design.c: rep->speeds, the host ports' speeds of the design t per lane, for "What was tested" */
void report_design_speeds(struct report *rep, const struct topo *t);
/* design.c: each suspect of every run gains "design", the ports and links of the
 * intended topology t (fabscope-topology(5), read once by the command) that it
 * points at; 0, or -FS_EXIT_ENV said */
int report_design(struct report *rep, const struct topo *t);
/* cabling.c: the ports of each run's topology phases judged against the
 * intended topology t (NULL: the run's own verdict, if it kept one) into
 * runs[].cabling; their errors into rep->cabling_errors.  0, or -FS_EXIT_*
 * said */
int report_cabling(struct report *rep, const struct topo *t);

/* checks.c: the checks of a thresholds file, every run's (bw, lat, [run]
 * max_suspects, [suspects] max_unconfirmed, PFC, collectives' busbw; a
 * [phase NAME] section's limits over the global ones for its phase) */
void report_thresholds(struct report *rep, const struct thresholds *t);
/* with --topology: every bw pair against its fair share of the design, every
 * lane's aggregate against what per-flow ECMP carries ([model] fractions) */
void report_model_checks(struct report *rep, const struct thresholds *t);
void report_baseline(struct report *rep);
/* The figures that regressed; *not_comparable (when not NULL): those measured
 * with other parameters than the baseline's (neither ok nor regressed). */
int report_regressions(const struct report *rep, int *not_comparable);
/* "REGRESSED", "not comparable" (no figure was) or "no regression" */
const char *report_baseline_verdict(const struct report *rep);
/* 1 when the comparison fails: a regression, or no figure comparable */
int report_baseline_failed(const struct report *rep);

/*
 * verdict.c: the run's integrity, judged with or without thresholds (t may
 * be NULL): every planned job ran, no test failed, no agent missing, no
 * suspect confirmed by a re-test, the collectives' data right, no
 * polarization probe polarized (and, with [polarization] inconclusive =
 * fail, none without a verdict), the cabling as designed.
 */
void report_integrity(struct report *rep, const struct thresholds *t);
/* r's measured things of phase (NULL: any) and test (NULL: any) on rail and
 * plane (-1: any) are judged by one more check */
void report_judged(struct rrun *r, const char *phase, const char *test, int rail, int plane);
/* rep->result, failed and not_judged, from the checks, the cabling, the
 * baseline and what every run measured */
void report_verdict(struct report *rep);
/* "PASS", "FAIL", "INCOMPLETE" */
const char *report_result_word(enum report_result r);
/* What keeps the verdict from PASS without a failure, in a line: "pairwise-lat has no
 * criterion", "pw and ring have no criterion; the check 'every planned job ran' could
 * not judge"; "" when nothing */
void report_incomplete_line(const struct report *rep, char *buf, size_t len);
/* The measured things nothing judged, grouped by run, phase and test, as
 * "pairwise-lat (lat, rail 0 and 1): give [lat] p50_us_max or p99_us_max";
 * fn is called with each line (ri: its run); returns how many. */
int report_unjudged(const struct report *rep, void (*fn)(void *ctx, int ri, const char *phase, const char *line),
		    void *ctx);

/* plots.c: SVG files into dir (gnuplot, in it; every file made by core/outfile.h); 0, or the
 * reason in rep->plots_note */
int report_plots(struct report *rep, const struct outdir *dir);
/* one more plot made (file in rep->plots_dir); -1 out of memory: said, and rep->oom */
int report_add_svg(struct report *rep, const char *file, const char *title);

/* render.c */
/* the report to f: 0, or out of memory: said, nothing written, -FS_EXIT_ENV */
int report_md(struct report *rep, FILE *f);
int report_html(struct report *rep, FILE *f);
json_t *report_json(struct report *rep);
/*
 * prom.c: the report's metrics for a Pushgateway (--push), in the groups a
 * nightly job replaces: one per plan (rail and plane -1: the runs' missing
 * agents, failed tests, suspects, the verdict and its checks, the baseline,
 * the probes, the collectives) and one per plan and lane that bw or lat
 * measured (its phases' figures, pairs and suspects; with node_max > 0 the
 * node_max worst nodes' medians and the first node_max suspects named).
 * Every group holds fabscope_run_timestamp_seconds and fabscope_run_info
 * (run_id, version); a sample names its run (run="NAME") only when the
 * report has several.  Sorted by plan, rail, plane, the plan's own group
 * first.  0, or -FS_EXIT_ENV out of memory (said).
 */
struct report_pgroup {
	char *plan;		/* report_plan_name */
	int rail, plane;	/* -1, -1: the plan's own group */
	char *body;		/* the text exposition */
};
int report_push_groups(struct report *rep, int node_max, struct report_pgroup **out, int *n);
void report_push_groups_free(struct report_pgroup *gs, int n);
/* r's plan as the groups name it: run.json's plan.path without its folders and
 * its extension ("nightly" for /etc/fabscope/nightly.ini), else "unnamed" */
void report_plan_name(const struct rrun *r, char *buf, size_t len);
/* --push-nodes: at most this many nodes a lane */
#define REPORT_PUSH_NODES_MAX 1024


#endif
