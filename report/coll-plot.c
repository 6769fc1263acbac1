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
static int coll_plot(struct report *rep, const struct coll_set *cs, int c, const char *dir, const char *tdir)
{
	const struct coll_series *line[COLL_PLOT_LINES];
	char stem[200], a[64], b[64], t[64], path[PATH_MAX], svg[PATH_MAX], vars[3 * PATH_MAX], title[300], tq[300];
	char dts[4 * COLL_PLOT_LINES + 1] = "", lcs[4 * COLL_PLOT_LINES + 1] = "";
	int n = 0, more = 0, rows = 0, i, j, k, phases = 0, colour[COLL_PLOT_LINES], ncolour = 0;
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
	snprintf(path, sizeof(path), "%s/%s.dat", dir, stem);
	f = fopen(path, "w");
	if (!f) {
		snprintf(rep->plots_note, sizeof(rep->plots_note), "some plots are missing: cannot write %.200s: %s",
			 path, strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++) {
		char name[400], *q;

		snprintf(name, sizeof(name), "%.100s%s%.60s%s%s", rep->nruns > 1 ? rep->runs[line[i]->run].name : "",
			 rep->nruns > 1 ? ", " : "", phases ? cs->phase[line[i]->phase] : "", phases ? " " : "",
			 line[i]->lane);
		plot_gnuplot_quote(name, name, sizeof(name));
		for (q = name; *q; q++)
			if (*q == '"' || (unsigned char)*q < ' ')
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
	if (fclose(f)) {
		snprintf(rep->plots_note, sizeof(rep->plots_note), "some plots are missing: cannot write %.200s", path);
		return -1;
	}
	snprintf(title, sizeof(title), "%.40s (%.40s, %.40s): busbw against message size, per lane%s%s",
		 cs->key[c].test, cs->key[c].algo, cs->key[c].transport, rep->nruns > 1 ? " and run" : "",
		 more ? " (the first 16)" : "");
	plot_gnuplot_quote(title, tq, sizeof(tq));
	snprintf(svg, sizeof(svg), "%s/%02d-%s.svg", dir, rep->nsvg + 1, stem);
	snprintf(vars, sizeof(vars), "datafile='%s'; outfile='%s'; title='%s'; nlines=%d; dts='%s'; lcs='%s'", path, svg,
		 tq, n, dts, lcs);
	{
		char why[300];

		if (plot_gnuplot(tdir, "coll.gp", vars, svg, why, sizeof(why))) {
			snprintf(rep->plots_note, sizeof(rep->plots_note), "%s%.200s",
				 rep->nsvg ? "some plots are missing: " : "no plots: ", why);
			return -1;
		}
	}
	snprintf(path, sizeof(path), "%02d-%s.svg", rep->nsvg + 1, stem);
	if (report_add_svg(rep, path, title)) {
		snprintf(rep->plots_note, sizeof(rep->plots_note), "%sout of memory",
			 rep->nsvg ? "some plots are missing: " : "no plots: ");
		return -1;
	}
	return 0;
}

int report_coll_plots(struct report *rep, const char *dir)
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
