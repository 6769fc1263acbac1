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
 * model, never the records themselves; checks (thresholds, baseline) add
 * rows that the renderers print and that decide the exit code.
 */
#ifndef FS_REPORT_H
#define FS_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "../core/lanes.h"
#include "../records/store.h"
#include "../topology/verify.h"

struct rpair {
	const char *src, *dst;
	double v, v99;		/* bw_gbps, or lat p50 and p99 (us) */
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
	const char *phase;	/* the whole name, the run's store's (rstore_intern) */
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
};

struct rsweep {
	const char *phase;	/* as rgroup's */
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
};

struct check {
	char name[256];		/* "bw >= 0.9 x line rate", ... */
	char limit[64], worst[64];
	int failing, total, pass;
	int not_comparable;	/* baseline: measured with other test parameters; pass is 1, no verdict */
	char who[512];		/* the failing endpoints, the first few */
};

struct report {
	struct rrun *runs;
	int nruns;
	const char *by;		/* label key that names runs (--by), or NULL */
	struct check *checks;	/* thresholds */
	int nchecks;
	int thresholds_given;
	struct rrun base;	/* --baseline */
	int have_base;
	double tolerance;
	const char *topology;	/* --topology: the intent file, or NULL */
	int cabling_errors;	/* of the runs' ports against it: the report fails */
	struct check *regs;	/* baseline comparisons */
	int nregs;
	char plots_dir[4096];	/* where the SVGs are, or "" */
	char plots_note[256];	/* why there are no plots */
	char **svg;		/* file names of plots made, in order */
	char **svg_title;
	int nsvg;
	size_t checks_alloc, regs_alloc, svg_alloc, svg_title_alloc;
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

/* design.c: each suspect of every run gains "design", the ports and links of the
 * intended topology t (fabscope-topology(5), read once by the command) that it
 * points at; 0, or -FS_EXIT_ENV said */
int report_design(struct report *rep, const struct topo *t);
/* cabling.c: the ports of each run's topology phases judged against the
 * intended topology t (NULL: the run's own verdict, if it kept one) into
 * runs[].cabling; their errors into rep->cabling_errors.  0, or -FS_EXIT_*
 * said */
int report_cabling(struct report *rep, const struct topo *t);

/* checks.c */
int report_thresholds(struct report *rep, const char *path);
void report_baseline(struct report *rep);
/* The figures that regressed; *not_comparable (when not NULL): those measured
 * with other parameters than the baseline's (neither ok nor regressed). */
int report_regressions(const struct report *rep, int *not_comparable);
/* "REGRESSED", "not comparable" (no figure was) or "no regression" */
const char *report_baseline_verdict(const struct report *rep);
/* 1 when the comparison fails: a regression, or no figure comparable */
int report_baseline_failed(const struct report *rep);

/* plots.c: SVG files into dir (gnuplot); 0, or the reason in rep->plots_note */
int report_plots(struct report *rep, const char *dir);
/* one more plot made (file in rep->plots_dir); -1 out of memory: said, and rep->oom */
int report_add_svg(struct report *rep, const char *file, const char *title);

/* render.c */
/* the report to f: 0, or out of memory: said, nothing written, -FS_EXIT_ENV */
int report_md(struct report *rep, FILE *f);
int report_html(struct report *rep, FILE *f);
json_t *report_json(struct report *rep);
/* Prometheus text exposition of the summary (for --push); NULL out of memory, said */
char *report_exposition(struct report *rep);


#endif
