/* SPDX-License-Identifier: BSD-2-Clause */
/* `fabscope report DIR...`: options, files, checks, push; the exit code. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/builtin.h"
#include "../core/error.h"
#include "../core/options.h"
#include "../topology/intent.h"
#include "history.h"
#include "push.h"
#include "render.h"
#include "report.h"

static const char *const report_usage[] = {
	"fabscope report DIR [DIR...] [options]",
	NULL,
};

static const char report_about[] =
	"Render the results directories of 'fabscope run' as a Markdown report, one\n"
	"self-contained HTML file (plots inline, drawn by gnuplot) and a JSON summary, in OUT:\n"
	"report.md, report.html, summary.json, plots/.  Several DIRs are compared side by side,\n"
	"named by the labels that differ between them (e.g. runs made with --label lb=ecmp and\n"
	"--label lb=spray), with deltas and which one won where.\n"
	"\n"
	"The report opens with its verdict, PASS, FAIL or INCOMPLETE, and what was tested.  PASS\n"
	"only when every measured phase was judged and every check passed.  The run's integrity is\n"
	"always judged: every planned job ran, no test failed, no agent missing, no suspect\n"
	"confirmed by a re-test, the collectives' data right, no polarized probe, the cabling as\n"
	"designed.  Performance is judged by --thresholds FILE (fabscope-thresholds(5)): [bw]\n"
	"line_rate_gbps (railN = GBPS for one rail), min_fraction, min_gbps; [lat] p50_us_max,\n"
	"p99_us_max; [run] max_missing, max_failed, max_suspects; [suspects] max_confirmed,\n"
	"max_unconfirmed; [pfc] storm = fail, max_paused (0 to 1), max_pps; [allreduce] and\n"
	"[alltoall] min_busbw_gbps (every lane at its largest size); [polarization] inconclusive =\n"
	"fail (a probe without a verdict fails; a polarized one always does); [model]\n"
	"pair_fraction, aggregate_fraction; [phase NAME] a phase's own min_gbps, min_fraction,\n"
	"p50_us_max, p99_us_max, min_busbw_gbps, pair_fraction, aggregate_fraction.  With\n"
	"--topology the design's speeds judge bandwidth too: every pair >= 0.25 x its fair share\n"
	"of the fabric, every lane's aggregate >= 0.6 x what per-flow ECMP carries (the [model]\n"
	"fractions).  A phase that nothing judges makes the verdict INCOMPLETE, naming it and\n"
	"what to give.\n"
	"--baseline DIR compares every phase, test and rail median with that earlier run, and\n"
	"every collective lane's mean busbw over the sizes both measured: bandwidth down or\n"
	"latency up by more than --tolerance is a regression; a phase measured with another\n"
	"message size, transport, op, flows or direction is 'not comparable', not judged.\n"
	"--history FILE (fabscope-history(1), which must hold the first DIR's run) adds \"Since last\n"
	"night and over the last N\": its suspects, new tonight or known since a run, with their\n"
	"change points and histories, the repeat offenders, and trend plots per lane and suspect;\n"
	"the exit code stays the verdict's ('fabscope history diff' gives the history's).\n"
	"\n"
	"Exit codes: 0 PASS, 1 FAIL (a check failed, a median regressed, nothing was comparable\n"
	"with the baseline, a cabling error), 5 INCOMPLETE (nothing failed, but something\n"
	"measured had no criterion), 2 usage (a path that does not exist, or is not a results\n"
	"directory; -o not a directory; a run given twice; a bad thresholds file), 3 a directory\n"
	"or file that is there cannot be read, or the report cannot be written, 4 the report was\n"
	"written but --push or --webhook failed (a verdict of 1 or 5 still gives its code).";

/* name in out (made by core/outfile.h: whole, or the old one left), by fn or as text and a newline */
static int write_file(const struct outdir *out, const char *name, int (*fn)(struct report *, FILE *),
		      struct report *rep, const char *text)
{
	struct outfile of;
	FILE *f;
	int rc = 0;

	if ((rc = outfile_create_in(&of, out, name, 0644)))
		return rc;
	if (!(f = outfile_stream(&of))) {
		rc = fs_err_env("cannot write '%s': %s", of.path, strerror(errno));
		outfile_abort(&of);
		return rc;
	}
	if (fn)
		rc = fn(rep, f);
	else
		fprintf(f, "%s\n", text);
	if (rc) {	/* said */
		outfile_abort(&of);
		return rc;
	}
	if ((rc = outfile_commit(&of, 1)))
		return rc;
	printf("report: %s%s%s\n", strcmp(out->path, ".") ? out->path : "", strcmp(out->path, ".") ? "/" : "", name);
	return 0;
}

static int has_format(const struct opt_list *l, const char *f)
{
	int i;

	if (!l->n)
		return 1;
	for (i = 0; i < l->n; i++) {
		const char *p = l->v[i];
		size_t n = strlen(f);

		while ((p = strstr(p, f))) {
			if ((p == l->v[i] || p[-1] == ',') && (!p[n] || p[n] == ','))
				return 1;
			p += n;
		}
	}
	return 0;
}

/* every --format names md, html or json, and one at least is named */
static int check_formats(const struct opt_list *formats)
{
	int i, rc = 0;

	for (i = 0; i < formats->n; i++) {
		char *dup = strdup(formats->v[i]), *save = NULL, *t;

		if (!dup)
			return fs_err_env("out of memory reading --format");
		for (t = strtok_r(dup, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save))
			if (strcmp(t, "md") && strcmp(t, "html") && strcmp(t, "json"))
				rc = fs_err_usage("--format: unknown format '%s': use md, html, json", t);
		free(dup);
		if (rc)
			return rc;
	}
	if (formats->n && !has_format(formats, "md") && !has_format(formats, "html") &&
	    !has_format(formats, "json"))
		return fs_err_usage("--format names no format: give md, html or json (comma-separated)");
	return 0;
}

/* the runs of argv[0..nargs), each once */
static int load_runs(struct report *rep, const char **argv, int nargs)
{
	int i, j, rc;

	rep->runs = calloc((size_t)nargs, sizeof(*rep->runs));
	if (!rep->runs)
		return fs_err_env("out of memory loading %d runs", nargs);
	for (i = 0; i < nargs; i++) {
		rep->nruns++;	/* freed at the end even when it did not load */
		if ((rc = report_load_run(&rep->runs[i], argv[i])))
			return rc;
	}
	for (i = 1; i < nargs; i++)	/* a run given twice: the comparison would show nothing */
		for (j = 0; j < i; j++)
			if (rep->runs[i].dev == rep->runs[j].dev && rep->runs[i].ino == rep->runs[j].ino)
				return fs_err_usage("'%s' and '%s' are the same results directory: a run compared "
						    "with itself shows no difference; give each run once", argv[j], argv[i]);
	return 0;
}

/* --baseline: loaded, none of the runs, and compared */
static int load_baseline(struct report *rep, const char *baseline, const char **argv, int nargs)
{
	int i, rc;

	rep->have_base = 1;
	if ((rc = report_load_run(&rep->base, baseline)))
		return rc;
	for (i = 0; i < nargs; i++)
		if (rep->base.dev == rep->runs[i].dev && rep->base.ino == rep->runs[i].ino)
			return fs_err_usage("--baseline '%s' is '%s' itself: a run cannot regress against "
					    "itself; give an earlier run", baseline, argv[i]);
	report_baseline(rep);
	return 0;
}

/*
 * The folder the report goes in, made when it is missing, checked as a
 * results directory is (a directory, not a link, ours or root's, writable by
 * no one else: core/outfile.h) before any plot is tried.
 */
static int make_out_dir(struct outdir *out, const char *out_dir)
{
	return outdir_open(out, out_dir, "-o", OUTDIR_MAKE);
}

/* the plots, report.md and report.html */
static int write_documents(struct report *rep, const struct opt_list *formats, const struct outdir *out,
			   int no_plots)
{
	int rc;

	if (!no_plots && has_format(formats, "html") + has_format(formats, "md")) {
		struct outdir plots = OUTDIR_INIT;

		if (outdir_open_in(&plots, out, "plots", "plots directory", OUTDIR_MAKE))
			snprintf(rep->plots_note, sizeof(rep->plots_note), "no plots: %s/plots cannot be used (said above)",
				 out->path);
		else if (report_plots(rep, &plots) || report_coll_plots(rep, &plots))
			fs_warn("%s", rep->plots_note);
		outdir_close(&plots);
	} else {
		snprintf(rep->plots_note, sizeof(rep->plots_note), "no plots: --no-plots was given");
	}
	if (rep->oom)	/* a plot that could not be kept: said */
		return -FS_EXIT_ENV;
	if (has_format(formats, "md") && (rc = write_file(out, "report.md", report_md, rep, NULL)))
		return rc;
	if (has_format(formats, "html") && (rc = write_file(out, "report.html", report_html, rep, NULL)))
		return rc;
	return 0;
}

/* the verdict lines; the verdict's exit status: 0, -FS_EXIT_CHECK or -FS_EXIT_INCOMPLETE */
static int say_verdicts(const struct report *rep)
{
	char why[1024];
	int i, failed = 0;

	for (i = 0; i < rep->nchecks; i++)
		failed += !rep->checks[i].pass;
	report_incomplete_line(rep, why, sizeof(why));
	if (rep->result == REPORT_INCOMPLETE)
		printf("acceptance: INCOMPLETE: %s (%d of %d checks failed)\n", why, failed, rep->nchecks);
	else if (why[0])
		printf("acceptance: %s (%d of %d checks failed; not judged: %s)\n", report_result_word(rep->result),
		       failed, rep->nchecks, why);
	else
		printf("acceptance: %s (%d of %d checks failed)\n", report_result_word(rep->result), failed,
		       rep->nchecks);
	if (rep->cabling_errors)
		printf("cabling: FAIL (%d error%s against the intended topology: see the report's Cabling and "
		       "configuration)\n", rep->cabling_errors, rep->cabling_errors == 1 ? "" : "s");
	if (rep->have_base) {
		int nc, nr = report_regressions(rep, &nc);
		char note[160] = "";

		if (nc)	/* other sizes or parameters: no verdict on those */
			snprintf(note, sizeof(note), "; %d not comparable: measured with other message "
				 "sizes or test parameters, see the report", nc);
		printf("baseline %s: %s (%d of %d figures regressed%s)\n", rep->base.dir,
		       report_baseline_verdict(rep), nr, rep->nregs, note);
	}
	return rep->result == REPORT_FAIL ? -FS_EXIT_CHECK : rep->result == REPORT_INCOMPLETE ?
	       -FS_EXIT_INCOMPLETE : 0;
}

struct publish {
	const char *push_url, *webhook, *job, *instance;
	int push_nodes;
};

/* every group of the report's metrics to the Pushgateway (the first failure stops it: said) */
static int push_groups(struct report *rep, const struct publish *pub, struct push_opts *po)
{
	struct report_pgroup *gs;
	int n, i, lanes = 0, rc;

	if ((rc = report_push_groups(rep, pub->push_nodes, &gs, &n)))
		return rc;
	for (i = 0; !rc && i < n; i++) {
		char rail[16], plane[16];
		const char *group[] = { "plan", gs[i].plan, "rail", gs[i].rail < 0 ? NULL : rail,
					"plane", gs[i].rail < 0 ? NULL : plane, NULL };

		snprintf(rail, sizeof(rail), "%d", gs[i].rail);
		snprintf(plane, sizeof(plane), "%d", gs[i].plane);
		po->group = group;
		rc = push_gateway(pub->push_url, gs[i].body, po);
		po->group = NULL;
		lanes += gs[i].rail >= 0;
	}
	if (!rc)
		printf("pushed: %s (job %s: %d plan group%s, %d lane group%s)\n", pub->push_url, pub->job, n - lanes,
		       n - lanes == 1 ? "" : "s", lanes, lanes == 1 ? "" : "s");
	report_push_groups_free(gs, n);
	return rc;
}

/* the local report is written: now publish, and let a failure say so */
static int publish(struct report *rep, const struct publish *pub, const char *text)
{
	struct push_opts po = { .timeout_ms = 5000, .retries = 2, .backoff_ms = 500, .job = pub->job,
				.instance = pub->instance };
	int prc = 0;

	if (pub->push_url)
		prc = push_groups(rep, pub, &po);
	if (pub->webhook) {
		int wrc = push_webhook(pub->webhook, text, &po);

		if (!wrc)
			printf("posted: %s\n", pub->webhook);
		prc = prc ? prc : wrc;
	}
	return prc;
}

/* summary.json, the verdicts, the publishing; the verdict's code (-FS_EXIT_CHECK, -FS_EXIT_INCOMPLETE)
 * unless something could not be done */
static int finish(struct report *rep, const struct opt_list *formats, const struct outdir *out,
		  const struct publish *pub)
{
	json_t *sum = report_json(rep);
	char *text = json_dumps(sum, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	int rc = 0, bad;

	if (!text) {
		json_decref(sum);
		return fs_err_env("out of memory writing the summary");
	}
	if (has_format(formats, "json"))
		rc = write_file(out, "summary.json", NULL, rep, text);
	bad = say_verdicts(rep);
	if (!rc && (pub->push_url || pub->webhook))
		rc = publish(rep, pub, text);
	free(text);
	json_decref(sum);
	if (bad && rc != -FS_EXIT_ENV && rc != -FS_EXIT_USAGE)
		rc = bad;	/* (a verdict over a failed push: the push said its line) */
	return rc;
}

/* frees what the command put in rep */
static void report_release(struct report *rep)
{
	int i;

	for (i = 0; i < rep->nruns; i++)
		report_free_run(&rep->runs[i]);
	free(rep->runs);
	if (rep->have_base)
		report_free_run(&rep->base);
	free(rep->checks);
	free(rep->regs);
	for (i = 0; i < rep->nsvg; i++) {
		free(rep->svg[i]);
		free(rep->svg_title[i]);
	}
	free(rep->svg);
	free(rep->svg_title);
	json_decref(rep->history);
}

/* --history: what the history says of the first run (which it must hold) */
static int load_history(struct report *rep)
{
	struct hdiff_opts o = { .last = HIST_DEFAULT_LAST, .fpr = HIST_DEFAULT_FPR,
				.min_change = HIST_DEFAULT_MIN_CHANGE, .repeat = HIST_DEFAULT_REPEAT };
	struct hist h;
	int rc;

	o.run = json_string_value(json_object_get(rep->runs[0].run, "id"));
	if (!o.run)
		return fs_err_usage("--history: %s has no run id (run.json): the history keeps runs by their id",
				    rep->runs[0].dir);
	if ((rc = hist_open(&h, rep->history_path, HIST_READ, 30)))
		return rc;
	rep->history = hist_diff(&h, &o, &rc);
	hist_close(&h);
	if (rc == -FS_EXIT_USAGE)
		fs_info("add it first: fabscope history add --db %s %s", rep->history_path, rep->runs[0].dir);
	return rc;
}

/* the intended topology: read once for the suspects' ports, the cabling, the model's expectations */
static int design_read(struct report *rep)
{
	struct topo t;
	int rc;

	if (!rep->topology)
		return report_cabling(rep, NULL);
	topo_init(&t);
	if (!(rc = topo_read(&t, rep->topology, NULL)) && !(rc = report_design(rep, &t)) &&
	    !(rc = report_cabling(rep, &t)) && !(rc = report_modes_expect(rep, &t)))
		report_design_speeds(rep, &t);
	topo_release(&t);
	return rc;
}

/* the acceptance: the run's integrity always, the thresholds and the model where given; the verdict */
static int judge(struct report *rep, const char *thresholds)
{
	struct thresholds t = { 0 };
	int rc;

	if (thresholds && (rc = thresholds_read(&t, thresholds)))
		return rc;
	rep->thresholds = thresholds;
	rep->line_rate = thresholds_get(thresholds ? &t : NULL, "bw", "line_rate_gbps", NAN);
	report_integrity(rep, thresholds ? &t : NULL);
	if (thresholds)
		report_thresholds(rep, &t);
	if (rep->topology)
		report_model_checks(rep, thresholds ? &t : NULL);
	thresholds_release(&t);
	return 0;
}

/* the runs, checks and baseline into rep; then the report into out_dir */
static int run_report(struct report *rep, const char **argv, int nargs, const char *thresholds,
		      const char *baseline, const char *out_dir, const struct opt_list *formats, int no_plots,
		      const struct publish *pub)
{
	char def_out[PATH_MAX];
	struct outdir out = OUTDIR_INIT;
	int rc;

	if ((rc = load_runs(rep, argv, nargs)) || (rc = design_read(rep)))
		return rc;
	report_name_runs(rep);
	if ((rc = judge(rep, thresholds)))
		return rc;
	if (baseline && (rc = load_baseline(rep, baseline, argv, nargs)))
		return rc;
	if (rep->history_path && (rc = load_history(rep)))
		return rc;
	if (rep->oom)	/* a check that could not be kept: said */
		return -FS_EXIT_ENV;
	report_verdict(rep);
	if (!out_dir) {
		if (nargs == 1)
			snprintf(def_out, sizeof(def_out), "%s/report", argv[0]);
		else
			snprintf(def_out, sizeof(def_out), "fabscope-report");
		out_dir = def_out;
	}
	if (!(rc = make_out_dir(&out, out_dir)) && !(rc = write_documents(rep, formats, &out, no_plots)))
		rc = finish(rep, formats, &out, pub);
	outdir_close(&out);
	return rc;
}

int cmd_report(int argc, const char **argv)
{
	const char *out_dir = NULL, *by = NULL, *thresholds = NULL, *baseline = NULL, *topology = NULL;
	struct publish pub = { NULL, NULL, "fabscope", NULL, 0 };
	struct opt_list formats = { 0 };
	int no_plots = 0, verbose = 0, nargs, rc;
	const char *tol_s = "10";
	double tolerance;
	char *end;
	struct report rep = { 0 };
	struct opt tab[] = {
		OPT_GROUP("Output"),
		OPT_FILE('o', "output", &out_dir, "DIR", "where the report goes (default: DIR/report for one run, ./fabscope-report for several)"),
		OPT_LIST(0, "format", &formats, "LIST", "md, html, json, comma-separated (default: all three)"),
		OPT_BOOL(0, "no-plots", &no_plots, "do not run gnuplot"),
		OPT_STRING(0, "by", &by, "KEY", "name the runs by this label (default: the labels that differ)"),
		OPT_GROUP("Checks"),
		OPT_FILE(0, "thresholds", &thresholds, "FILE", "acceptance thresholds (fabscope-thresholds(5)): exit 1 on a FAIL, 5 when a measured phase has no criterion"),
		OPT_FILE(0, "baseline", &baseline, "DIR", "an earlier results directory to compare with; exit 1 on a regression"),
		OPT_STRING(0, "tolerance", &tol_s, "PERCENT", "how much worse than the baseline a figure may be (default 10)"),
		OPT_FILE(0, "history", &rep.history_path, "FILE", "the history (fabscope-history(1)) that holds the first run: "
			 "the section \"Since last night and over the last N\", its suspects and repeat offenders, trend plots"),
		OPT_FILE(0, "topology", &topology, "FILE", "the intended topology (fabscope-topology(5)): every suspect names its ports and links; the topology phases' ports are judged by it (exit 1 on a cabling error); its cables' speeds judge every bw pair and lane against the model"),
		OPT_GROUP("Publishing"),
		OPT_STRING(0, "push", &pub.push_url, "URL", "push the report's metrics to a Prometheus Pushgateway, e.g. http://pgw:9091: a group per plan and one per plan and lane, which the next night's push replaces"),
		OPT_STRING(0, "job", &pub.job, "NAME", "the Pushgateway job label (default fabscope)"),
		OPT_STRING(0, "instance", &pub.instance, "NAME", "one more grouping label, instance (default: none), e.g. the cluster's name"),
		OPT_INT(0, "push-nodes", &pub.push_nodes, "N", "push per node too: a lane's N worst nodes' medians and its first N suspects by name (default 0: none; at most 1024)", 0, REPORT_PUSH_NODES_MAX),
		OPT_STRING(0, "webhook", &pub.webhook, "URL", "POST the JSON summary to this URL"),
		OPT_VERBOSE(&verbose),
		OPT_END(),
	};

	rc = opts_parse(argc, argv, tab, report_usage, report_about, &nargs);
	if (rc)
		return rc == OPTS_HELP ? 0 : -rc;
	fs_set_verbosity(verbose);
	fs_set_progname("fabscope report");
	rep.topology = topology;
	if (!nargs) {
		rc = fs_err_usage("give at least one results directory (what 'fabscope run -o DIR' wrote)");
		goto out;
	}
	if ((rc = check_formats(&formats)))
		goto out;
	if ((pub.push_url || pub.webhook) && (rc = push_check_urls(pub.push_url, pub.webhook)))
		goto out;	/* before the work, not after it */
	if (pub.push_nodes && !pub.push_url) {
		rc = fs_err_usage("--push-nodes says what --push sends: give --push URL too");
		goto out;
	}
	tolerance = strtod(tol_s, &end);
	if (end == tol_s || (*end && strcmp(end, "%")) || !(tolerance >= 0 && tolerance <= 1000)) {
		rc = fs_err_usage("--tolerance '%s': give a percentage from 0 to 1000", tol_s);
		goto out;
	}
	rep.tolerance = tolerance / 100;
	rep.by = by;
	rc = run_report(&rep, argv, nargs, thresholds, baseline, out_dir, &formats, no_plots, &pub);
out:
	report_release(&rep);
	opt_list_release(&formats);
	return -rc;
}
