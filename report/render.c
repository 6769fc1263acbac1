/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The report's renderings: Markdown, one self-contained HTML file (the
 * plots inline as SVG), a JSON summary, and Prometheus text for --push.
 * Markdown and HTML walk the same sections in the same order:
 *
 *   runs (metadata) - verdict (thresholds) - regressions (baseline) -
 *   summary per phase, test and lane - comparison of runs - collectives -
 *   hash polarization - PFC pauses - suspects - plots - pairwise matrices -
 *   missing agents and failed tests
 *
 * The collectives section, in every rendering, is in coll*.c, the hash
 * polarization section in polar.c, and the PFC pauses section in pfc.c
 * (render.h).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/record.h"
#include "push.h"
#include "render.h"
#include "report.h"

/* ---- shared helpers ---- */

static const char *rs(const struct rrun *r, const char *key, const char *dflt)
{
	const char *v = json_string_value(json_object_get(r->run, key));

	return v ? v : dflt;
}

static void labels_str(const struct rrun *r, char *buf, size_t len)
{
	json_t *labels = json_object_get(r->run, "labels"), *v;
	const char *k;
	size_t n = 0;

	buf[0] = 0;
	json_object_foreach(labels, k, v)
		if (json_is_string(v) && n < len)
			n += (size_t)snprintf(buf + n, len - n, "%s%s=%s", n ? ", " : "", k, json_string_value(v));
	if (!n)
		snprintf(buf, len, "-");
}

static int nnodes(const struct rrun *r)
{
	return (int)json_array_size(json_object_get(r->run, "nodes"));
}

static const char *verdict(const struct report *rep, int *failed)
{
	int i;

	*failed = 0;
	for (i = 0; i < rep->nchecks; i++)
		*failed += !rep->checks[i].pass;
	return *failed ? "FAIL" : "PASS";
}

static int nregressions(const struct report *rep)
{
	return report_regressions(rep, NULL);
}

/* the result cell of a baseline figure */
static const char *reg_result(const struct check *c)
{
	return c->not_comparable ? "not comparable" : c->pass ? "ok" : "REGRESSION";
}

/* " (2 not comparable: measured with other message sizes or test parameters)", or "" */
static void nc_note(const struct report *rep, char *buf, size_t len)
{
	int nc;

	report_regressions(rep, &nc);
	if (nc)
		snprintf(buf, len, "; %d not comparable (measured with other message sizes or test parameters "
			 "than the baseline's: no verdict on %s)", nc, nc == 1 ? "it" : "them");
	else
		buf[0] = 0;
}

/* the best run of a group (highest bw or lowest latency median) */
static int best_run(const struct report *rep, const struct rgroup *g0, double *best, double *worst)
{
	int ri, b = -1;

	*best = NAN;
	*worst = NAN;
	for (ri = 0; ri < rep->nruns; ri++) {
		const struct rgroup *g = report_group(&rep->runs[ri], g0->phase, g0->test, g0->rail, g0->plane);
		int better;

		if (!g || isnan(g->median))
			continue;
		better = isnan(*best) || (!strcmp(g0->test, "bw") ? g->median > *best : g->median < *best);
		if (better) {
			*best = g->median;
			b = ri;
		}
		if (isnan(*worst) || (!strcmp(g0->test, "bw") ? g->median < *worst : g->median > *worst))
			*worst = g->median;
	}
	return b;
}

/* groups of all runs, each (phase, test, lane) once, in the first run's order */
static int all_groups(const struct report *rep, const struct rgroup **out, int max)
{
	int n = 0, ri, gi, k;

	for (ri = 0; ri < rep->nruns; ri++)
		for (gi = 0; gi < rep->runs[ri].ng; gi++) {
			const struct rgroup *g = &rep->runs[ri].g[gi];

			for (k = 0; k < n; k++)
				if (!strcmp(out[k]->phase, g->phase) && !strcmp(out[k]->test, g->test) &&
				    out[k]->rail == g->rail && out[k]->plane == g->plane)
					break;
			if (k == n && n < max)
				out[n++] = g;
		}
	return n;
}

static void comparison_line(const struct report *rep, const struct rgroup *g, char *buf, size_t len)
{
	double best, worst;
	int b = best_run(rep, g, &best, &worst);
	char lane[48];

	report_lane(g->rail, g->plane, lane, sizeof(lane));
	if (b < 0 || !(worst > 0)) {
		snprintf(buf, len, "%s %s %s: no common results", g->phase, g->test, lane);
		return;
	}
	if (best == worst) {
		snprintf(buf, len, "%s %s %s: the same median in every run (%.4g %s)", g->phase, g->test, lane,
			 best, !strcmp(g->test, "bw") ? "Gb/s" : "us p50");
		return;
	}
	if (!strcmp(g->test, "bw"))
		snprintf(buf, len, "%s %s %s: %s wins with a median of %.4g Gb/s, %.0f%% above the slowest run",
			 g->phase, g->test, lane, rep->runs[b].name, best, 100 * (best - worst) / worst);
	else
		snprintf(buf, len, "%s %s %s: %s wins with a median p50 of %.4g us, %.0f%% below the slowest run",
			 g->phase, g->test, lane, rep->runs[b].name, best, 100 * (worst - best) / worst);
}

/* ---- Markdown ---- */

/* Text from records and run.json (node names, labels, phases, reasons) in
 * Markdown: '<' escaped with a backslash (Markdown viewers render inline
 * HTML: a <script> must stay text; without '<' no tag can open, and an
 * entity only ever makes a character), and so Markdown's own punctuation
 * that could make markup, a link or a table cell boundary; control
 * characters and newlines become spaces. */
void report_md_cell(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (strchr("<|\\`*_[]", ch))
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			fputc(' ', f);
		else
			fputc(ch, f);
	}
}

/* Text as a Markdown code span: nothing inside is markup, so only what could
 * end the span (a backquote) or the line is replaced. */
void report_md_code(FILE *f, const char *s)
{
	fputc('`', f);
	for (; *s; s++)
		fputc(*s == '`' ? '\'' : (unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s, f);
	fputc('`', f);
}

static void md_checks(FILE *f, const struct check *c, int n)
{
	int i;

	fprintf(f, "| check | limit | worst | failing | result | endpoints |\n|---|---|---|---|---|---|\n");
	for (i = 0; i < n; i++) {
		fputs("| ", f);
		report_md_cell(f, c[i].name);
		fprintf(f, " | %s | %s | %d of %d | **%s** | ", c[i].limit, c[i].worst, c[i].failing, c[i].total,
			c[i].pass ? "PASS" : "FAIL");
		report_md_cell(f, c[i].who[0] ? c[i].who : "-");
		fputs(" |\n", f);
	}
	fputc('\n', f);
}

void report_md(struct report *rep, FILE *f)
{
	const struct rgroup *gs[512];
	int ng = all_groups(rep, gs, 512), ri, gi, i, j, failed;
	char buf[512];

	fprintf(f, "# fabscope report\n\n");
	fprintf(f, "| |");
	for (ri = 0; ri < rep->nruns; ri++) {
		fputc(' ', f);
		report_md_cell(f, rep->runs[ri].name);
		fputs(" |", f);
	}
	fprintf(f, "\n|---|");
	for (ri = 0; ri < rep->nruns; ri++)
		fprintf(f, "---|");
	fputc('\n', f);
#define ROW(title, expr) do { fprintf(f, "| %s |", title); \
		for (ri = 0; ri < rep->nruns; ri++) { const struct rrun *r = &rep->runs[ri]; (void)r; \
			fputc(' ', f); expr; fputs(" |", f); } fputc('\n', f); } while (0)
	ROW("results", report_md_cell(f, r->dir));
	ROW("run", report_md_cell(f, rs(r, "id", "-")));
	ROW("started", report_md_cell(f, rs(r, "started", "-")));
	ROW("finished", report_md_cell(f, rs(r, "finished", "-")));
	ROW("status", report_md_cell(f, rs(r, "status", "-")));
	ROW("labels", (labels_str(r, buf, sizeof(buf)), report_md_cell(f, buf)));
	ROW("nodes", fprintf(f, "%d (%d missing)", nnodes(r), r->missing));
	ROW("records", fprintf(f, "%d (%d failed)", r->nrec, r->nerr));
	ROW("suspects", fprintf(f, "%zu", json_array_size(r->suspects)));
	fputc('\n', f);

	if (rep->thresholds_given) {
		const char *v = verdict(rep, &failed);

		fprintf(f, "## Acceptance: %s\n\n", v);
		fprintf(f, "%s: %d of %d checks failed.\n\n", v, failed, rep->nchecks);
		md_checks(f, rep->checks, rep->nchecks);
	}
	if (rep->have_base) {
		int nr = nregressions(rep);

		char note[160];

		nc_note(rep, note, sizeof(note));
		fprintf(f, "## Against the baseline: %s\n\n", report_baseline_verdict(rep));
		fputs("Baseline ", f);
		report_md_code(f, rep->base.dir);
		fputs(" (run ", f);
		report_md_cell(f, rs(&rep->base, "id", "-"));
		fprintf(f, "), tolerance %.0f%%: %d of %d figures regressed%s.\n\n", 100 * rep->tolerance, nr,
			rep->nregs, note);
		fprintf(f, "| figure | baseline | now | result | note |\n|---|---|---|---|---|\n");
		for (i = 0; i < rep->nregs; i++) {
			fputs("| ", f);
			report_md_cell(f, rep->regs[i].name);
			fprintf(f, " | %s | %s | **%s** | ", rep->regs[i].limit, rep->regs[i].worst,
				reg_result(&rep->regs[i]));
			report_md_cell(f, rep->regs[i].who[0] ? rep->regs[i].who : "-");
			fputs(" |\n", f);
		}
		fputc('\n', f);
	}

	fprintf(f, "## Summary per phase and rail\n\n");
	for (ri = 0; ri < rep->nruns; ri++) {
		const struct rrun *r = &rep->runs[ri];

		if (rep->nruns > 1) {
			fprintf(f, "### ");
			report_md_cell(f, r->name);
			fprintf(f, "\n\n");
		}
		if (!r->ng) {
			fprintf(f, "No bandwidth or latency results.\n\n");
			continue;
		}
		fprintf(f, "| phase | test | lane | pairs | min | median | max | unit |\n|---|---|---|---|---|---|---|---|\n");
		for (gi = 0; gi < r->ng; gi++) {
			const struct rgroup *g = &r->g[gi];
			char lane[48];

			report_lane(g->rail, g->plane, lane, sizeof(lane));
			fputs("| ", f);
			report_md_cell(f, g->phase);
			fprintf(f, " | %s | %s | %d | %.4g | %.4g | %.4g | %s%s |\n", g->test, lane, g->n, g->min,
				g->median, g->max, !strcmp(g->test, "bw") ? "Gb/s" : "us p50",
				!strcmp(g->test, "lat") && !isnan(g->p99_median) ? "" : "");
		}
		fputc('\n', f);
	}

	if (rep->nruns > 1 && ng) {
		fprintf(f, "## Comparison\n\n| phase | test | lane |");
		for (ri = 0; ri < rep->nruns; ri++) {
			fputc(' ', f);
			report_md_cell(f, rep->runs[ri].name);
			fputs(" |", f);
		}
		fprintf(f, " best |\n|---|---|---|");
		for (ri = 0; ri <= rep->nruns; ri++)
			fputs("---|", f);
		fputc('\n', f);
		for (i = 0; i < ng; i++) {
			double best, worst, first = NAN;
			int b = best_run(rep, gs[i], &best, &worst);
			char lane[48];

			report_lane(gs[i]->rail, gs[i]->plane, lane, sizeof(lane));
			fputs("| ", f);
			report_md_cell(f, gs[i]->phase);
			fprintf(f, " | %s | %s |", gs[i]->test, lane);
			for (ri = 0; ri < rep->nruns; ri++) {
				const struct rgroup *g = report_group(&rep->runs[ri], gs[i]->phase, gs[i]->test,
								      gs[i]->rail, gs[i]->plane);

				if (!g) {
					fputs(" - |", f);
					continue;
				}
				if (isnan(first))
					first = g->median;
				if (ri && first > 0)
					fprintf(f, " %.4g (%+.1f%%) |", g->median, 100 * (g->median - first) / first);
				else
					fprintf(f, " %.4g |", g->median);
			}
			fputc(' ', f);
			report_md_cell(f, b >= 0 ? rep->runs[b].name : "-");
			fputs(" |\n", f);
		}
		fprintf(f, "\nMedians (Gb/s for bw, us p50 for lat); deltas against the first run.\n\n");
		for (i = 0; i < ng; i++) {
			comparison_line(rep, gs[i], buf, sizeof(buf));
			fputs("- ", f);
			report_md_cell(f, buf);
			fputc('\n', f);
		}
		fputc('\n', f);
	}

	report_md_coll(rep, f);

	report_md_polar(rep, f);

	report_md_pfc(rep, f);

	fprintf(f, "## Suspects\n\n");
	for (ri = 0; ri < rep->nruns; ri++) {
		const struct rrun *r = &rep->runs[ri];
		json_t *s;
		size_t k;

		if (!json_array_size(r->suspects)) {
			fputs("- ", f);
			report_md_cell(f, rep->nruns > 1 ? r->name : "");
			fprintf(f, "%snone: no node, pair or rail stands out\n", rep->nruns > 1 ? ": " : "");
			continue;
		}
		json_array_foreach(r->suspects, k, s) {
			fputs("- **", f);
			report_md_cell(f, record_str(s, "kind", "?"));
			fputs("** ", f);
			if (rep->nruns > 1) {
				report_md_cell(f, r->name);
				fputs(", ", f);
			}
			fputc('[', f);
			report_md_cell(f, record_str(s, "phase", "?"));
			fputs("] ", f);
			report_md_cell(f, record_str(s, "evidence", ""));
			if (record_str(s, "confirmation", NULL)) {
				fputs(" (", f);
				report_md_cell(f, record_str(s, "confirmation", ""));
				fputc(')', f);
			}
			fputc('\n', f);
		}
	}
	fputc('\n', f);
	for (ri = 0, i = 0; ri < rep->nruns; ri++)
		i += (int)json_array_size(rep->runs[ri].not_confirmed);
	if (i) {	/* fast on their re-test: said, but not suspects */
		fprintf(f, "Not confirmed (high in the run, not on the re-test):\n\n");
		for (ri = 0; ri < rep->nruns; ri++) {
			json_t *s;
			size_t k;

			json_array_foreach(rep->runs[ri].not_confirmed, k, s) {
				fputs("- ", f);
				if (rep->nruns > 1) {
					report_md_cell(f, rep->runs[ri].name);
					fputs(", ", f);
				}
				fputc('[', f);
				report_md_cell(f, record_str(s, "phase", "?"));
				fputs("] ", f);
				report_md_cell(f, record_str(s, "evidence", ""));
				fputs(": ", f);
				report_md_cell(f, record_str(s, "confirmation", ""));
				fputc('\n', f);
			}
		}
		fputc('\n', f);
	}

	fprintf(f, "## Plots\n\n");
	if (!rep->nsvg)
		fprintf(f, "%s\n\n", rep->plots_note[0] ? rep->plots_note : "No plots.");
	else if (rep->plots_note[0])
		fprintf(f, "%s\n\n", rep->plots_note);
	for (i = 0; i < rep->nsvg; i++)
		fprintf(f, "![%s](plots/%s)\n\n", rep->svg_title[i], rep->svg[i]);

	fprintf(f, "## Pairwise matrices\n\n");
	for (gi = 0; gi < rep->runs[0].ng; gi++) {
		const struct rgroup *g = &rep->runs[0].g[gi];
		char lane[48];

		if (g->nnodes < 3 || g->nnodes > 16)
			continue;
		report_lane(g->rail, g->plane, lane, sizeof(lane));
		fputs("**", f);
		report_md_cell(f, g->phase);
		fprintf(f, " %s, %s** (%s; row sends, column receives)\n\n| |", g->test, lane,
			!strcmp(g->test, "bw") ? "Gb/s" : "p50 us");
		for (j = 0; j < g->nnodes; j++) {
			fputc(' ', f);
			report_md_cell(f, g->nodes[j]);
			fputs(" |", f);
		}
		fputs("\n|---|", f);
		for (j = 0; j < g->nnodes; j++)
			fputs("---|", f);
		fputc('\n', f);
		for (i = 0; i < g->nnodes; i++) {
			fputs("| ", f);
			report_md_cell(f, g->nodes[i]);
			fputs(" |", f);
			for (j = 0; j < g->nnodes; j++) {
				int k, found = 0;

				for (k = 0; k < g->n && !found; k++)
					if (!strcmp(g->p[k].src, g->nodes[i]) && !strcmp(g->p[k].dst, g->nodes[j])) {
						fprintf(f, " %.3g |", g->p[k].v);
						found = 1;
					}
				if (!found)
					fputs(" |", f);
			}
			fputc('\n', f);
		}
		fputc('\n', f);
	}

	fprintf(f, "## Missing agents and failed tests\n\n");
	for (ri = 0; ri < rep->nruns; ri++) {
		const struct rrun *r = &rep->runs[ri];
		json_t *n, *rec;
		size_t k;
		int shown = 0;

		json_array_foreach(json_object_get(r->run, "nodes"), k, n)
			if (!strcmp(record_str(n, "status", "ok"), "missing")) {
				fputs("- agent **", f);
				report_md_cell(f, record_str(n, "name", "?"));
				fputs("** missing: ", f);
				report_md_cell(f, record_str(n, "why", "?"));
				fputc('\n', f);
			}
		json_array_foreach(r->records, k, rec)
			if (strcmp(record_str(rec, "status", "ok"), "ok") && shown++ < 20) {
				fputs("- ", f);
				report_md_code(f, record_str(rec, "job", record_str(rec, "test", "?")));
				fputs(": ", f);
				report_md_cell(f, record_str(rec, "error", "error"));
				fputc('\n', f);
			}
		if (shown > 20)
			fprintf(f, "- ... and %d more failed tests in %s/results.jsonl\n", shown - 20, r->dir);
		if (!r->missing && !r->nerr)
			fprintf(f, "- %s%snone\n", rep->nruns > 1 ? r->name : "", rep->nruns > 1 ? ": " : "");
	}
	fputc('\n', f);
#undef ROW
}

/* ---- HTML ---- */

void report_html_escape(FILE *f, const char *s)
{
	for (; *s; s++)
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
}

static void html_svg(FILE *f, const char *path)
{
	FILE *s = fopen(path, "r");
	char buf[8192];
	size_t n;
	int started = 0;

	if (!s) {
		fputs("<p class=\"note\">(plot missing)</p>", f);
		return;
	}
	/* drop the XML prolog and doctype: the <svg> element goes inline */
	while (!started && fgets(buf, sizeof(buf), s)) {
		char *p = strstr(buf, "<svg");

		if (p) {
			fputs(p, f);
			started = 1;
		}
	}
	while ((n = fread(buf, 1, sizeof(buf), s)) > 0)
		fwrite(buf, 1, n, f);
	fclose(s);
}

static void html_checks(FILE *f, const struct check *c, int n, const char *ok, const char *bad)
{
	int i;

	fputs("<table><tr><th>check</th><th>limit</th><th>worst</th><th>failing</th><th>result</th><th>endpoints</th></tr>\n", f);
	for (i = 0; i < n; i++) {
		fputs("<tr><td>", f);
		report_html_escape(f, c[i].name);
		fputs("</td><td>", f);
		report_html_escape(f, c[i].limit);
		fputs("</td><td>", f);
		report_html_escape(f, c[i].worst);
		fprintf(f, "</td><td>%d of %d</td><td class=\"%s\">%s</td><td>", c[i].failing, c[i].total,
			c[i].not_comparable ? "warn" : c[i].pass ? "pass" : "fail",
			c[i].not_comparable ? "not comparable" : c[i].pass ? ok : bad);
		report_html_escape(f, c[i].who[0] ? c[i].who : "-");
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

void report_html(struct report *rep, FILE *f)
{
	const struct rgroup *gs[512];
	int ng = all_groups(rep, gs, 512), ri, gi, i, failed;
	char buf[512];

	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>fabscope report</title>\n"
	      "<style>\nbody{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222;padding:0 1em}\n"
	      "table{border-collapse:collapse;margin:0.5em 0 1.5em}\n"
	      "th,td{border:1px solid #ccc;padding:0.25em 0.6em;text-align:left;font-size:0.9em}\n"
	      "th{background:#f0f0f0}td.num{text-align:right;font-variant-numeric:tabular-nums}\n"
	      ".pass{background:#d9f2d9;font-weight:bold}.fail{background:#f8d0d0;font-weight:bold}\n"
	      ".warn{background:#fbeec1;font-weight:bold}\n"
	      ".verdict{font-size:1.6em;padding:0.3em 0.8em;display:inline-block;border-radius:4px}\n"
	      ".note{color:#666}figure{margin:1em 0}figcaption{font-size:0.9em;color:#444}\n"
	      "li.suspect{margin:0.3em 0}\n</style></head><body>\n<h1>fabscope report</h1>\n", f);
	fputs("<table><tr><th></th>", f);
	for (ri = 0; ri < rep->nruns; ri++) {
		fputs("<th>", f);
		report_html_escape(f, rep->runs[ri].name);
		fputs("</th>", f);
	}
	fputs("</tr>\n", f);
#define HROW(title, expr) do { fprintf(f, "<tr><th>%s</th>", title); \
		for (ri = 0; ri < rep->nruns; ri++) { const struct rrun *r = &rep->runs[ri]; (void)r; \
			fputs("<td>", f); expr; fputs("</td>", f); } fputs("</tr>\n", f); } while (0)
	HROW("results", report_html_escape(f, r->dir));
	HROW("run", report_html_escape(f, rs(r, "id", "-")));
	HROW("started", report_html_escape(f, rs(r, "started", "-")));
	HROW("finished", report_html_escape(f, rs(r, "finished", "-")));
	HROW("status", report_html_escape(f, rs(r, "status", "-")));
	HROW("labels", (labels_str(r, buf, sizeof(buf)), report_html_escape(f, buf)));
	HROW("nodes", fprintf(f, "%d (%d missing)", nnodes(r), r->missing));
	HROW("records", fprintf(f, "%d (%d failed)", r->nrec, r->nerr));
	HROW("suspects", fprintf(f, "%zu", json_array_size(r->suspects)));
	fputs("</table>\n", f);
#undef HROW

	if (rep->thresholds_given) {
		const char *v = verdict(rep, &failed);

		fprintf(f, "<h2>Acceptance</h2>\n<p><span class=\"verdict %s\">%s</span> %d of %d checks failed</p>\n",
			failed ? "fail" : "pass", v, failed, rep->nchecks);
		html_checks(f, rep->checks, rep->nchecks, "PASS", "FAIL");
	}
	if (rep->have_base) {
		int nr = nregressions(rep);
		char note[160];

		nc_note(rep, note, sizeof(note));
		fprintf(f, "<h2>Against the baseline</h2>\n<p><span class=\"verdict %s\">%s</span> baseline ",
			report_baseline_failed(rep) ? "fail" : "pass", report_baseline_verdict(rep));
		report_html_escape(f, rep->base.dir);
		fprintf(f, ", tolerance %.0f%%: %d of %d figures regressed", 100 * rep->tolerance, nr, rep->nregs);
		report_html_escape(f, note);
		fputs("</p>\n", f);
		html_checks(f, rep->regs, rep->nregs, "ok", "REGRESSION");
	}

	fputs("<h2>Summary per phase and rail</h2>\n", f);
	for (ri = 0; ri < rep->nruns; ri++) {
		const struct rrun *r = &rep->runs[ri];

		if (rep->nruns > 1) {
			fputs("<h3>", f);
			report_html_escape(f, r->name);
			fputs("</h3>\n", f);
		}
		fputs("<table><tr><th>phase</th><th>test</th><th>lane</th><th>pairs</th><th>min</th><th>median</th>"
		      "<th>max</th><th>unit</th></tr>\n", f);
		for (gi = 0; gi < r->ng; gi++) {
			const struct rgroup *g = &r->g[gi];
			char lane[48];

			report_lane(g->rail, g->plane, lane, sizeof(lane));
			fputs("<tr><td>", f);
			report_html_escape(f, g->phase);
			fprintf(f, "</td><td>%s</td><td>%s</td><td class=\"num\">%d</td><td class=\"num\">%.4g</td>"
				"<td class=\"num\">%.4g</td><td class=\"num\">%.4g</td><td>%s</td></tr>\n", g->test,
				lane, g->n, g->min, g->median, g->max, !strcmp(g->test, "bw") ? "Gb/s" : "us p50");
		}
		fputs("</table>\n", f);
	}

	if (rep->nruns > 1 && ng) {
		fputs("<h2>Comparison</h2>\n<ul>\n", f);
		for (i = 0; i < ng; i++) {
			comparison_line(rep, gs[i], buf, sizeof(buf));
			fputs("<li>", f);
			report_html_escape(f, buf);
			fputs("</li>\n", f);
		}
		fputs("</ul>\n", f);
	}

	report_html_coll(rep, f);

	report_html_polar(rep, f);

	report_html_pfc(rep, f);

	fputs("<h2>Suspects</h2>\n<ul>\n", f);
	for (ri = 0; ri < rep->nruns; ri++) {
		const struct rrun *r = &rep->runs[ri];
		json_t *s;
		size_t k;

		if (!json_array_size(r->suspects)) {
			fputs("<li>", f);
			if (rep->nruns > 1) {
				report_html_escape(f, r->name);
				fputs(": ", f);
			}
			fputs("none: no node, pair or rail stands out</li>\n", f);
		}
		json_array_foreach(r->suspects, k, s) {
			fprintf(f, "<li class=\"suspect\"><b>%s</b> ", record_str(s, "kind", "?"));
			if (rep->nruns > 1) {
				report_html_escape(f, r->name);
				fputs(", ", f);
			}
			fputs("[", f);
			report_html_escape(f, record_str(s, "phase", "?"));
			fputs("] ", f);
			report_html_escape(f, record_str(s, "evidence", ""));
			if (record_str(s, "confirmation", NULL)) {
				fputs(" (", f);
				report_html_escape(f, record_str(s, "confirmation", ""));
				fputc(')', f);
			}
			fputs("</li>\n", f);
		}
		json_array_foreach(r->not_confirmed, k, s) {
			fputs("<li class=\"not-confirmed\"><b>not confirmed</b> ", f);
			if (rep->nruns > 1) {
				report_html_escape(f, r->name);
				fputs(", ", f);
			}
			fputs("[", f);
			report_html_escape(f, record_str(s, "phase", "?"));
			fputs("] ", f);
			report_html_escape(f, record_str(s, "evidence", ""));
			fputs(": ", f);
			report_html_escape(f, record_str(s, "confirmation", ""));
			fputs("</li>\n", f);
		}
	}
	fputs("</ul>\n<h2>Plots</h2>\n", f);
	if (rep->plots_note[0]) {
		fputs("<p class=\"note\">", f);
		report_html_escape(f, rep->plots_note);
		fputs("</p>\n", f);
	}
	for (i = 0; i < rep->nsvg; i++) {
		char path[4096 + 256];

		snprintf(path, sizeof(path), "%s/%s", rep->plots_dir, rep->svg[i]);
		fputs("<figure>", f);
		html_svg(f, path);
		fputs("<figcaption>", f);
		report_html_escape(f, rep->svg_title[i]);
		fputs("</figcaption></figure>\n", f);
	}

	fputs("<h2>Missing agents and failed tests</h2>\n<ul>\n", f);
	for (ri = 0; ri < rep->nruns; ri++) {
		const struct rrun *r = &rep->runs[ri];
		json_t *n, *rec;
		size_t k;
		int shown = 0;

		json_array_foreach(json_object_get(r->run, "nodes"), k, n)
			if (!strcmp(record_str(n, "status", "ok"), "missing")) {
				fputs("<li>agent <b>", f);
				report_html_escape(f, record_str(n, "name", "?"));
				fputs("</b> missing: ", f);
				report_html_escape(f, record_str(n, "why", "?"));
				fputs("</li>\n", f);
			}
		json_array_foreach(r->records, k, rec)
			if (strcmp(record_str(rec, "status", "ok"), "ok") && shown++ < 20) {
				fputs("<li><code>", f);
				report_html_escape(f, record_str(rec, "job", record_str(rec, "test", "?")));
				fputs("</code>: ", f);
				report_html_escape(f, record_str(rec, "error", "error"));
				fputs("</li>\n", f);
			}
		if (!r->missing && !r->nerr) {
			fputs("<li>", f);
			if (rep->nruns > 1) {
				report_html_escape(f, r->name);
				fputs(": ", f);
			}
			fputs("none</li>\n", f);
		}
	}
	fprintf(f, "</ul>\n<p class=\"note\">fabscope %s; every figure is computed from the records in "
		"results.jsonl.</p>\n</body></html>\n", FABSCOPE_VERSION);
}

/* ---- JSON ---- */

static json_t *checks_json(const struct check *c, int n)
{
	json_t *a = json_array();
	int i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, c[i].not_comparable ?	/* no verdict, and why */
			json_pack("{ss,ss,ss,si,si,sn,sb,ss,ss}", "check", c[i].name, "limit", c[i].limit,
				  "worst", c[i].worst, "failing", c[i].failing, "total", c[i].total, "pass",
				  "comparable", 0, "result", "not comparable", "endpoints", c[i].who) :
			json_pack("{ss,ss,ss,si,si,sb,ss}", "check", c[i].name, "limit", c[i].limit,
				  "worst", c[i].worst, "failing", c[i].failing, "total", c[i].total,
				  "pass", c[i].pass, "endpoints", c[i].who));
	return a;
}

json_t *report_json(struct report *rep)
{
	json_t *o = json_object(), *runs = json_array(), *plots = json_array(), *cj, *labels;
	int ri, gi, i, failed;

	json_object_set_new(o, "schema", json_string("fabscope.report/1"));
	json_object_set_new(o, "version", json_string(FABSCOPE_VERSION));
	for (ri = 0; ri < rep->nruns; ri++) {
		const struct rrun *r = &rep->runs[ri];
		json_t *groups = json_array();

		for (gi = 0; gi < r->ng; gi++) {
			const struct rgroup *g = &r->g[gi];
			json_t *gj = json_pack("{ss,ss,si,si,si,sf,sf,sf,ss}", "phase", g->phase, "test", g->test,
					       "rail", g->rail, "plane", g->plane, "pairs", g->n, "min", g->min,
					       "median", g->median, "max", g->max,
					       "unit", !strcmp(g->test, "bw") ? "gbps" : "us_p50");

			if (!strcmp(g->test, "lat") && !isnan(g->p99_median))
				json_object_set_new(gj, "p99_median", json_real(g->p99_median));
			json_array_append_new(groups, gj);
		}
		labels = json_object_get(r->run, "labels");
		labels = labels ? json_incref(labels) : json_object();
		json_array_append_new(runs, json_pack("{ss,ss,sO,so,si,si,si,si,so,sO}", "dir", r->dir, "name", r->name,
			"run", json_object_get(r->run, "id") ? json_object_get(r->run, "id") : json_null(),
			"labels", labels,
			"nodes", nnodes(r), "missing", r->missing, "records", r->nrec, "errors", r->nerr,
			"groups", groups, "suspects", r->suspects));
		if (json_array_size(r->not_confirmed))
			json_object_set(json_array_get(runs, json_array_size(runs) - 1), "not_confirmed",
					r->not_confirmed);
		if (json_array_size(r->polar))	/* the probe's verdicts, without the per-flow detail */
			json_object_set_new(json_array_get(runs, json_array_size(runs) - 1), "polarization",
					    report_polar_json(r));
		if (r->npfc)
			json_object_set_new(json_array_get(runs, json_array_size(runs) - 1), "pfc", report_pfc_json(r));
		if ((cj = report_coll_json(r)))
			json_object_set_new(json_array_get(runs, json_array_size(runs) - 1), "collectives", cj);
	}
	json_object_set_new(o, "runs", runs);
	if (rep->thresholds_given) {
		verdict(rep, &failed);
		json_object_set_new(o, "acceptance", json_pack("{sb,so}", "pass", !failed,
							       "checks", checks_json(rep->checks, rep->nchecks)));
	}
	if (rep->have_base)
	{
		int nc, nr = report_regressions(rep, &nc);

		json_object_set_new(o, "baseline", json_pack("{ss,sf,sb,ss,si,si,so}", "dir", rep->base.dir,
							     "tolerance", rep->tolerance, "pass", !report_baseline_failed(rep),
							     "verdict", report_baseline_verdict(rep), "regressed", nr,
							     "not_comparable", nc,
							     "medians", checks_json(rep->regs, rep->nregs)));
	}
	for (i = 0; i < rep->nsvg; i++)
		json_array_append_new(plots, json_pack("{ss,ss}", "file", rep->svg[i], "title", rep->svg_title[i]));
	json_object_set_new(o, "plots", plots);
	if (rep->plots_note[0])
		json_object_set_new(o, "plots_note", json_string(rep->plots_note));
	return o;
}

/* ---- Prometheus text exposition ---- */

void report_bput(struct report_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (b->s && (size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		b->cap = (b->cap + (size_t)n + 1) * 2;
		b->s = realloc(b->s, b->cap);
	}
}

char *report_exposition(struct report *rep)
{
	struct report_buf b = { 0 };
	int ri, gi, i, failed;
	const char *stat[3] = { "min", "median", "max" };

	report_bput(&b, "# HELP fabscope_lane per phase, test and lane: bandwidth in Gb/s or latency p50 in us over the pairs\n"
			"# TYPE fabscope_lane gauge\n");
	for (ri = 0; ri < rep->nruns; ri++)
		for (gi = 0; gi < rep->runs[ri].ng; gi++) {
			const struct rgroup *g = &rep->runs[ri].g[gi];
			char *run = push_label_value(rep->runs[ri].name), *ph = push_label_value(g->phase);
			int s;

			for (s = 0; s < 3; s++) {
				double v = s == 0 ? g->min : s == 1 ? g->median : g->max;

				if (!isnan(v))
					report_bput(&b, "fabscope_lane{run=\"%s\",phase=\"%s\",test=\"%s\",rail=\"%d\",plane=\"%d\",stat=\"%s\",unit=\"%s\"} %.6g\n",
						    run, ph, g->test, g->rail, g->plane, stat[s],
						    !strcmp(g->test, "bw") ? "gbps" : "us", v);
			}
			free(run);
			free(ph);
		}
	report_bput(&b, "# HELP fabscope_run_problems missing agents, failed tests and suspects of a run\n"
			"# TYPE fabscope_run_problems gauge\n");
	for (ri = 0; ri < rep->nruns; ri++) {
		char *run = push_label_value(rep->runs[ri].name);

		report_bput(&b, "fabscope_run_problems{run=\"%s\",what=\"missing_agents\"} %d\n", run, rep->runs[ri].missing);
		report_bput(&b, "fabscope_run_problems{run=\"%s\",what=\"failed_tests\"} %d\n", run, rep->runs[ri].nerr);
		report_bput(&b, "fabscope_run_problems{run=\"%s\",what=\"suspects\"} %zu\n", run,
			    json_array_size(rep->runs[ri].suspects));
		free(run);
	}
	report_polar_exposition(rep, &b);
	report_pfc_exposition(rep, &b);
	report_coll_exposition(rep, &b);
	if (rep->thresholds_given) {
		verdict(rep, &failed);
		report_bput(&b, "# HELP fabscope_acceptance_pass 1 when every acceptance check passed\n"
				"# TYPE fabscope_acceptance_pass gauge\nfabscope_acceptance_pass %d\n", !failed);
		report_bput(&b, "# HELP fabscope_check_pass 1 when the check passed\n# TYPE fabscope_check_pass gauge\n");
		for (i = 0; i < rep->nchecks; i++) {
			char *c = push_label_value(rep->checks[i].name);

			report_bput(&b, "fabscope_check_pass{check=\"%s\"} %d\n", c, rep->checks[i].pass);
			free(c);
		}
	}
	if (rep->have_base)
		report_bput(&b, "# HELP fabscope_baseline_regressions figures worse than the baseline beyond the tolerance\n"
				"# TYPE fabscope_baseline_regressions gauge\nfabscope_baseline_regressions %d\n",
			    nregressions(rep));
	return b.s;
}
