/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The history of runs: results directories kept in one SQLite file
 * (`fabscope history`, `report --history`), and what it says of tonight.
 *
 * Store (history-store.c).  Numbers, not JSON trees, in tables of schema
 * version HIST_SCHEMA (table schema_version; an older file is migrated in
 * one transaction when it is opened for writing, a newer one refused):
 *
 *   name(id, s)                          every string (node, phase) once
 *   run(id, run_id, started, status, version, plan_path, plan_text,
 *       hostfile_text, dir, nresults, design)   one a results directory;
 *                                        design: the name of its design
 *                                        (NULL: none known)
 *   label(run, k, v), node(run, name, leaf, pod)   its labels, its nodes
 *   grp(id, run, phase, test, rail, plane, size)   a phase, test, lane, size
 *   result(grp, src, dst, round, v)      a lane result (records/result.h's
 *                                        one filter): bw_gbps or lat p50 us;
 *                                        round HIST_RETEST_ROUND: the run's
 *                                        re-test of that suspect pair (a
 *                                        pair's, never a lane's or node's)
 *   entity(grp, kind, a, b, v, n, confirmed)
 *                                        what a lane (kind 0), a node on it
 *                                        (1, a) and a pair (2, a -> b; one
 *                                        measured twice or more) measured
 *                                        that night: the median of
 *                                        its n results (of an even number,
 *                                        the better middle one: a node is
 *                                        slow with most of its peers, not
 *                                        with one of two); confirmed
 *                                        (schema 3): 1 when the run's own
 *                                        re-test confirmed it a suspect
 *   cable(run, node, rail, plane, switch, port, host_port)
 *                                        (schema 2) a run with a design:
 *                                        each of its nodes' NIC ports (rail,
 *                                        plane: -1 when the design gives
 *                                        none) and the switch port it is
 *                                        cabled to, that night; nodes x
 *                                        rails rows
 *
 * A run is added in one transaction (BEGIN IMMEDIATE: a second writer waits
 * its --wait, then fails), its records streamed from results.jsonl through
 * records_scan and rresult_of: memory by nodes (the names, one group's
 * results while its entities are made), never by records.  Every SQL text
 * is a constant; data goes in as bound parameters only.
 *
 * Judgement (history-diff.c): see struct hdiff.  Rendering
 * (history-render.c): text, JSON, and the report's section.
 */
#ifndef FS_REPORT_HISTORY_H
#define FS_REPORT_HISTORY_H

#include <jansson.h>
#include <stdio.h>

#define HIST_SCHEMA 3
#define HIST_DEFAULT_DB "fabscope.db"
#define HIST_DEFAULT_LAST 10
#define HIST_DEFAULT_FPR 0.01
#define HIST_DEFAULT_MIN_CHANGE 0.20
#define HIST_DEFAULT_REPEAT 2
#define HIST_SPREAD_FLOOR 0.01	/* the resolution of a log-ratio: 1 % */
#define HIST_RETEST_ROUND (-1)	/* result.round of a re-test of a suspect pair by the run */

struct sqlite3;
struct topo;

struct hist {
	struct sqlite3 *db;
	const char *path;
};

enum { HIST_READ = 0, HIST_WRITE = 1 };

/*
 * Open (HIST_WRITE: create when missing, schema made or migrated) the
 * history at path, never through a symbolic link; a busy file is waited
 * for wait_s seconds.  0, or -FS_EXIT_* said: -FS_EXIT_USAGE for a path
 * that is not there (HIST_READ) or is not a history, -FS_EXIT_ENV for one
 * that cannot be opened, is of a newer schema, or stayed busy.
 */
int hist_open(struct hist *h, const char *path, int mode, double wait_s);
void hist_close(struct hist *h);

/*
 * Add the results directory dir: 0 added, 1 already there (the same run
 * id), or -FS_EXIT_* said (-FS_EXIT_USAGE: not a results directory, or
 * the design its run.json carries is not one; -FS_EXIT_ENV: unreadable,
 * or the file busy past the wait).  One transaction: a crash leaves the
 * run whole or absent.
 *
 * The run's cables (table cable) are those of its design: the one its
 * run.json carries (topology {path, text}: what `fabscope run` read of the
 * plan's [global] topology that night), else given (NULL: none), the
 * nodes of the run only; *d says which ("" when the run has none).
 */
struct hist_design {
	char name[4096];	/* the design's name (its path), "" none */
	int own;		/* 1: the one run.json carries; 0: given */
};
int hist_add(struct hist *h, const char *dir, const struct topo *given, struct hist_design *d);

/* One run as held. */
struct hrun {
	long long id;		/* the row (internal: never printed, never ordered by) */
	char *run_id, *started, *status, *dir;
	char *design;		/* its design's name, NULL: none known (no cables) */
	long long nresults;
};

/* The runs held, oldest first (by started, then run id): 0 or -FS_EXIT_ENV said. */
int hist_runs(struct hist *h, struct hrun **runs, int *n);
void hist_runs_free(struct hrun *runs, int n);

struct hdiff_opts {
	int last;		/* the window: this many runs ending with the target */
	const char *run;	/* the target's run id (NULL: the newest) */
	double fpr;		/* the false-positive rate a night, family-wise */
	double min_change;	/* smallest relative change named (practical) */
	int repeat;		/* a repeat offender: a suspect in at least this many runs */
};

/*
 * What the history says of the target run, as a JSON document (the one
 * model every rendering prints, so that they cannot disagree):
 *
 * {window: [{run, started}...] oldest first, target, fpr, min_change,
 *  z_suspect, z_change, judged, method,
 *  suspects: [{kind, phase, test, rail, plane, size, node, peer, value,
 *              peers, change, z, status: "new tonight"|"known since",
 *              since, since_run, in_runs, runs, regression, change_point
 *              {run, started, before, after, z}, history: [v|null...],
 *              cable, peer_cable: {switch, port, host_port (null: the
 *              design has no port of it), run, design}: a node's (a
 *              pair's two ends') cable on the night it is named for (its
 *              last night a suspect) when that run had a design,
 *              recabled: [{node, at {run, started}, from, to}]: each
 *              change of them between two of its nights with a design}],
 *  repeat: [same shape: suspects in k of the last n runs that came back],
 *  shifts: [{phase, test, size, run, started, change, z}]: night-wide,
 *  lanes: [{phase, test, rail, plane, size, history: [...]}],
 *  exit: 0|1, why}
 *
 * NULL and -FS_EXIT_* said in *rc when the history cannot be read, holds
 * no run, or not the one asked for.
 */
json_t *hist_diff(struct hist *h, const struct hdiff_opts *o, int *rc);

/* Text renderings of hist_runs and hist_diff. */
void hist_print_runs(FILE *f, const struct hrun *runs, int n);
void hist_print_diff(FILE *f, json_t *d);

/*
 * The entity's name as the renderings give it: "node h1 rail 0 plane 0 (pw bw 1M)", with its
 * cables when the model has them: "node h1 rail 0 plane 0 (cable h1:rail0 -> leaf1:swp3) (pw
 * bw 1M)", "pair h1 -> h3 ... (cables h1:rail0 -> leaf1:swp3, h3:rail0 -> leaf2:swp1)", "...
 * on run R" when the night it is named for is not target's (the run judged; NULL: never said).
 */
void hist_entity_name(char *buf, size_t len, json_t *e, const char *target);
/* One recabling r of an entity's "recabled": "recabled at run R (STARTED): h1:rail0 ->
 * leaf1:swp3 before, h1:rail0 -> leaf2:swp9 since" */
void hist_recabling(char *buf, size_t len, json_t *r);

#endif
