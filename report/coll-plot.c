/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The collectives' plots: busbw against message size per test, algorithm
 * and transport (plots/coll.gp; report_coll_plots: see render.h).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../plots/plot.h"
#include "coll-int.h"
#include "render.h"
#include "report.h"

#define COLL_PLOT_LINES 16	/* a plot's legend stays readable */

/* ---- plots ---- */

static void file_safe(const char *in, char *out, size_t len)
{
	size_t i;

	for (i = 0; in[i] && i + 1 < len; i++)
		out[i] = (strchr("-_.", in[i]) || (in[i] >= 'a' && in[i] <= 'z') || (in[i] >= 'A' && in[i] <= 'Z') ||
			  (in[i] >= '0' && in[i] <= '9')) ? in[i] : '_';
	out[i] = 0;
}

/* the plot of collective c: pairs of columns "SIZE BUSBW" per lane and run, a header row of names */
static int coll_plot(struct report *rep, const struct coll_set *cs, int c, const struct outdir *dir, const char *tdir)
{
	const struct coll_series *line[COLL_PLOT_LINES];
	char stem[200], a[64], b[64], t[64], path[300], svg[300], vars[4096] = "", title[300];
	char dts[4 * COLL_PLOT_LINES + 1] = "", lcs[4 * COLL_PLOT_LINES + 1] = "";
	int n = 0, more = 0, rows = 0, i, j, k, phases = 0, colour[COLL_PLOT_LINES], ncolour = 0;
	struct outfile of;
	FILE *f;

	for (i = 0; i < cs->n; i++) {
		for (j = 0; j < cs->s[i].npt && isnan(cs->s[i].pt[j].busbw); j++)
			;
		if (cs->s[i].coll != c || cs->s[i].sum || j == cs->s[i].npt)
			continue;	/* the sum of rails is no lane; a line needs a point */
		if (n == COLL_PLOT_LINES) {
			more++;
			continue;
		}
		line[n++] = &cs->s[i];
		if (cs->s[i].npt > rows)
			rows = cs->s[i].npt;
		phases |= cs->s[i].phase != line[0]->phase;
	}
	if (!n)
		return 0;
	file_safe(cs->key[c].test, t, sizeof(t));
	file_safe(cs->key[c].algo, a, sizeof(a));
	file_safe(cs->key[c].transport, b, sizeof(b));
	snprintf(stem, sizeof(stem), "coll-%s-%s-%s", t, a, b);
	snprintf(path, sizeof(path), "%s.dat", stem);
	if (outfile_create_in(&of, dir, path, 0644) || !(f = outfile_stream(&of))) {
		if (of.path)
			outfile_abort(&of);
		snprintf(rep->plots_note, sizeof(rep->plots_note), "some plots are missing: cannot write %.100s/%.100s",
			 dir->path, path);
		return -1;
	}
	for (i = 0; i < n; i++) {
		char name[400], *q;

		snprintf(name, sizeof(name), "%.100s%s%.60s%s%s", rep->nruns > 1 ? rep->runs[line[i]->run].name : "",
			 rep->nruns > 1 ? ", " : "", phases ? cs->phase[line[i]->phase] : "", phases ? " " : "",
			 line[i]->lane);
		for (q = name; *q; q++)	/* a quoted column header of a data file */
			if (*q == '"' || *q == '\'' || *q == '\\' || (unsigned char)*q < ' ')
				*q = '_';
		fprintf(f, "%s\"%s\" \"s%d\"", i ? " " : "", name, i);
		for (j = 0; j < i; j++)	/* a colour per lane, a dash per run */
			if (line[j]->phase == line[i]->phase && !strcmp(line[j]->lane, line[i]->lane))
				break;
		colour[i] = j < i ? colour[j] : ++ncolour;
		snprintf(dts + strlen(dts), sizeof(dts) - strlen(dts), "%s%d", i ? " " : "", line[i]->run % 5 + 1);
		snprintf(lcs + strlen(lcs), sizeof(lcs) - strlen(lcs), "%s%d", i ? " " : "", colour[i]);
	}
	fputc('\n', f);
	for (k = 0; k < rows; k++) {
		for (i = 0; i < n; i++)
			if (k < line[i]->npt && !isnan(line[i]->pt[k].busbw))
				fprintf(f, "%s%.0f %g", i ? " " : "", line[i]->pt[k].size, line[i]->pt[k].busbw);
			else
				fprintf(f, "%sNaN NaN", i ? " " : "");
		fputc('\n', f);
	}
	if (outfile_commit(&of, 0)) {
		snprintf(rep->plots_note, sizeof(rep->plots_note), "some plots are missing: cannot write %.100s/%.100s",
			 dir->path, path);
		return -1;
	}
	snprintf(title, sizeof(title), "%.40s (%.40s, %.40s): busbw against message size, per lane%s%s",
		 cs->key[c].test, cs->key[c].algo, cs->key[c].transport, rep->nruns > 1 ? " and run" : "",
		 more ? " (the first 16)" : "");
	snprintf(svg, sizeof(svg), "%02d-%s.svg", rep->nsvg + 1, stem);
	plot_var_str(vars, sizeof(vars), "datafile", path);
	plot_var_str(vars, sizeof(vars), "title", title);
	plot_var_num(vars, sizeof(vars), "nlines", n);
	plot_var_str(vars, sizeof(vars), "dts", dts);
	plot_var_str(vars, sizeof(vars), "lcs", lcs);
	{
		char why[300];

		if (plot_gnuplot(tdir, "coll.gp", vars, dir, svg, why, sizeof(why))) {
			snprintf(rep->plots_note, sizeof(rep->plots_note), "%s%.200s",
				 rep->nsvg ? "some plots are missing: " : "no plots: ", why);
			return -1;
		}
	}
	if (report_add_svg(rep, svg, title)) {
		snprintf(rep->plots_note, sizeof(rep->plots_note), "%sout of memory",
			 rep->nsvg ? "some plots are missing: " : "no plots: ");
		return -1;
	}
	return 0;
}

int report_coll_plots(struct report *rep, const struct outdir *dir)
{
	struct coll_set cs;
	char tdir[PATH_MAX];
	int c, rc = 0;

	report_coll_build(rep->runs, rep->nruns, &cs);
	if (cs.n && plot_find_templates(tdir, sizeof(tdir))) {
		snprintf(rep->plots_note, sizeof(rep->plots_note),
			 "some plots are missing: the gnuplot templates (plots/*.gp) are not in %.120s; set FABSCOPE_PLOTS",
			 plot_templates_default());
		rc = -1;
	}
	for (c = 0; c < cs.nkey && !rc; c++)
		rc = coll_plot(rep, &cs, c, dir, tdir);
	report_coll_release(&cs);
	return rc;
}
