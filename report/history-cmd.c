/* SPDX-License-Identifier: BSD-2-Clause */
/* `fabscope history add|list|diff|trend`: the history of runs (history.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/builtin.h"
#include "../core/error.h"
#include "../core/options.h"
#include "../core/record.h"
#include "../topology/intent.h"
#include "history.h"

static const char *const history_usage[] = {
	"fabscope history add [--db FILE] [--wait SECONDS] [--topology FILE] DIR...",
	"fabscope history list [--db FILE] [--json]",
	"fabscope history diff [--db FILE] [--last N] [--run ID] [--fpr P] [--min-change F] [--repeat K] [--json]",
	"fabscope history trend [--db FILE] [--last N] [--run ID] [--json]",
	NULL,
};

static const char history_about[] =
	"Keep the results directories of 'fabscope run' in one SQLite file (--db FILE, else\n"
	"$FABSCOPE_DB, else ./fabscope.db) and say what changed tonight and what keeps coming back.\n"
	"\n"
	"add      ingest DIRs, each run in one transaction (a crash leaves it whole or absent),\n"
	"         idempotent by run id; a second writer waits --wait seconds (default 30), then fails.\n"
	"         With a design (the one run.json carries, what the run read of the plan's [global]\n"
	"         topology; else --topology FILE), each node's cables that night: the switch port of\n"
	"         every NIC port (rail, plane), which diff names beside a node.\n"
	"list     the runs held, oldest first (by start time, then run id).\n"
	"diff     \"Since last night and over the last N\" for the newest run (or --run ID): every\n"
	"         lane, node and pair held against its peers of the same night (a night when every\n"
	"         link moved together is the machine, not a link) and against its own history.  A\n"
	"         suspect is worse than its peers by z robust spreads (learned per phase, test, size\n"
	"         and kind from the window and from the night, at least 1 %) and by --min-change;\n"
	"         z is set so that a night of noise names anything with probability --fpr at most.\n"
	"         Each suspect is \"new tonight\" or \"known since\" the first run it was one, with its\n"
	"         change point; a repeat offender is a suspect in --repeat runs or more that came back.\n"
	"         A suspect is confirmed by its run's own re-test, or by being one the night before\n"
	"         too; one night's alone is named, not confirmed, and watched (never counted).\n"
	"         A node (a pair's two) is named with its cable, the switch port of its NIC port on\n"
	"         the night it is named for, and every recabling of it within the window.\n"
	"trend    every lane's median, run by run.\n"
	"\n"
	"Exit codes: 0 nothing confirmed (diff: no suspect newly confirmed, no regression), 1 diff\n"
	"found a suspect confirmed tonight and not the night before (new, or back), or a confirmed\n"
	"one worse than last night, 2 usage (a DIR that is\n"
	"not a results directory, a design that is not one, a file that is not a history, no such\n"
	"run), 3 environment (the file cannot be opened or written, it stayed busy past --wait, a\n"
	"newer schema, an older one to a reader: add migrates it).";

struct hist_opts {
	const char *db, *run, *topology;
	double wait;
	int json, last, repeat;
	double fpr, min_change;
};

static const char *db_path(const struct hist_opts *o)
{
	const char *env = getenv("FABSCOPE_DB");

	return o->db ? o->db : env && *env ? env : HIST_DEFAULT_DB;
}

static int history_add(const struct hist_opts *o, int n, const char **dirs)
{
	struct hist h;
	struct topo t;
	struct hist_design design;
	int i, rc, added = 0, held = 0;

	if (!n)
		return fs_err_usage("history add: give one results directory or more");
	topo_init(&t);
	if (o->topology && (rc = topo_read(&t, o->topology, NULL))) {	/* read before the file is touched */
		topo_release(&t);
		return rc;
	}
	if ((rc = hist_open(&h, db_path(o), HIST_WRITE, o->wait))) {
		topo_release(&t);
		return rc;
	}
	for (i = 0; i < n; i++) {
		if ((rc = hist_add(&h, dirs[i], o->topology ? &t : NULL, &design)) < 0)
			break;
		if (rc || !*design.name)
			printf("%s: %s\n", dirs[i], rc ? "held already" : "added");
		else
			printf("%s: added, with the cables of %s (%s)\n", dirs[i], design.name,
			       design.own ? "the design its run.json carries" : "--topology");
		added += !rc;
		held += rc == 1;
		rc = 0;
	}
	hist_close(&h);
	topo_release(&t);
	if (!rc)
		printf("%d added, %d held already: %s\n", added, held, db_path(o));
	return rc;
}

static int history_list(const struct hist_opts *o)
{
	struct hist h;
	struct hrun *r;
	int n, i, rc;

	if ((rc = hist_open(&h, db_path(o), HIST_READ, o->wait)))
		return rc;
	rc = hist_runs(&h, &r, &n);
	hist_close(&h);
	if (rc)
		return rc;
	if (o->json) {
		json_t *a = json_array();

		for (i = 0; i < n; i++)
			json_array_append_new(a, json_pack("{ss,ss,ss,ss,sI,s:s?}", "run", r[i].run_id, "started",
							   r[i].started, "status", r[i].status, "dir", r[i].dir,
							   "results", (json_int_t)r[i].nresults, "design", r[i].design));
		json_dumpf(a, stdout, JSON_INDENT(2));
		printf("\n");
		json_decref(a);
	} else {
		hist_print_runs(stdout, r, n);
	}
	hist_runs_free(r, n);
	return 0;
}

static json_t *diff_of(const struct hist_opts *o, int *rc)
{
	struct hdiff_opts d = { .last = o->last, .run = o->run, .fpr = o->fpr, .min_change = o->min_change,
				.repeat = o->repeat };
	struct hist h;
	json_t *m;

	if (!(o->fpr > 0 && o->fpr < 0.5)) {
		*rc = fs_err_usage("--fpr %g: give a false-positive rate between 0 and 0.5, e.g. 0.01", o->fpr);
		return NULL;
	}
	if (!(o->min_change >= 0 && o->min_change < 1)) {
		*rc = fs_err_usage("--min-change %g: give a fraction from 0 to under 1, e.g. 0.1", o->min_change);
		return NULL;
	}
	if ((*rc = hist_open(&h, db_path(o), HIST_READ, o->wait)))
		return NULL;
	m = hist_diff(&h, &d, rc);
	hist_close(&h);
	return m;
}

static int history_diff(const struct hist_opts *o, int trend)
{
	json_t *m;
	int rc;

	if (!(m = diff_of(o, &rc)))
		return rc;
	if (trend) {
		json_t *t = json_pack("{sO,sO}", "window", json_object_get(m, "window"), "lanes",
				      json_object_get(m, "lanes"));

		json_decref(m);
		m = t;
	}
	if (o->json) {
		json_dumpf(m, stdout, JSON_INDENT(2));
		printf("\n");
	} else if (trend) {
		json_t *l, *v;
		size_t i, k;

		json_array_foreach(json_object_get(m, "lanes"), i, l) {
			char name[512];

			hist_entity_name(name, sizeof(name), l, NULL);	/* (a lane: no cable) */
			printf("%s:", name);
			json_array_foreach(json_object_get(l, "history"), k, v)
				if (json_is_number(v))
					printf(" %.4g", json_number_value(v));
				else
					printf(" -");
			printf("\n");
		}
	} else {
		hist_print_diff(stdout, m);
	}
	rc = trend ? 0 : record_int(m, "exit", 0, 0, 1) ? -FS_EXIT_CHECK : 0;
	json_decref(m);
	return rc;
}

int cmd_history(int argc, const char **argv)
{
	struct hist_opts o = { .wait = 30, .last = HIST_DEFAULT_LAST, .fpr = HIST_DEFAULT_FPR,
			       .min_change = HIST_DEFAULT_MIN_CHANGE, .repeat = HIST_DEFAULT_REPEAT };
	const struct opt tab[] = {
		OPT_FILE(0, "db", &o.db, "FILE", "the history (default: $FABSCOPE_DB, else ./fabscope.db); never "
			 "through a symbolic link"),
		OPT_SECONDS0(0, "wait", &o.wait, "SECONDS", "wait this long for another writer (default 30)"),
		OPT_FILE(0, "topology", &o.topology, "FILE", "add: the design (fabscope-topology(5)) of the runs whose "
			 "run.json carries none: their nodes' cables"),
		OPT_BOOL(0, "json", &o.json, "list, diff, trend: one JSON document"),
		OPT_GROUP("diff, trend"),
		OPT_INT(0, "last", &o.last, "N", "the window: the run and N - 1 before it (default 10)", 1, 1000),
		OPT_STRING(0, "run", &o.run, "ID", "the run judged (default: the newest held)"),
		OPT_NUMBER(0, "fpr", &o.fpr, "P", "diff: the false-positive rate a night (default 0.01)"),
		OPT_NUMBER(0, "min-change", &o.min_change, "F", "diff: the smallest change named, a fraction of the "
			   "peers' value (default 0.2)"),
		OPT_INT(0, "repeat", &o.repeat, "K", "diff: a repeat offender is a suspect in K runs or more "
			"(default 2)", 2, 1000),
		OPT_END(),
	};
	const char *sub;
	int nargs = 0, rc;

	if (argc < 2 || (argv[1][0] == '-' && strcmp(argv[1], "--help") && strcmp(argv[1], "-h"))) {
		fs_err_usage("history: give add, list, diff or trend");
		opts_usage_short(history_usage);
		return FS_EXIT_USAGE;
	}
	sub = argv[1];
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h")) {
		opts_help(tab, history_usage, history_about);
		return 0;
	}
	if (strcmp(sub, "add") && strcmp(sub, "list") && strcmp(sub, "diff") && strcmp(sub, "trend")) {
		fs_err_usage("history: '%s' is not add, list, diff or trend", sub);
		opts_usage_short(history_usage);
		return FS_EXIT_USAGE;
	}
	rc = opts_parse(argc - 1, argv + 1, tab, history_usage, history_about, &nargs);
	if (rc == OPTS_HELP)
		return 0;
	if (rc)
		return -rc;
	if (o.topology && strcmp(sub, "add"))
		rc = fs_err_usage("history %s: --topology is for add (the design of runs that carry none)", sub);
	else if (!strcmp(sub, "add"))
		rc = history_add(&o, nargs, argv + 1);
	else if (nargs)
		rc = fs_err_usage("history %s takes no DIR ('%s'): it reads the history (--db)", sub, argv[1]);
	else if (!strcmp(sub, "list"))
		rc = history_list(&o);
	else
		rc = history_diff(&o, !strcmp(sub, "trend"));
	return -rc;
}
