/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The report's hash polarization section, in every rendering: a row per
 * set of the polarization probe (paths used against uniform hashing) with
 * the collisions of the polarized ones under it in Markdown and HTML (one
 * model for both, doc.h), the
 * probe's verdicts in the JSON summary, and their families in the
 * Prometheus text for --push.  render.c places it among the other sections.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/record.h"
#include "../records/polar.h"
#include "doc.h"
#include "push.h"
#include "render.h"
#include "report.h"

/* ---- polarization ---- */

/* the section shows when the first run, or the second, has the probe's records */
static int polar_shown(const struct report *rep)
{
	return rep->nruns && (json_array_size(rep->runs[0].polar) ||
			      (rep->nruns > 1 && json_array_size(rep->runs[1].polar)));
}

/* "13 flows filled about 1 link (1/11..1/15 each): 40000, 40001, ...", group by group */
static void polar_groups(json_t *rec, char *buf, size_t len)
{
	json_t *groups = json_object_get(rec, "collision_groups"), *g, *e;
	size_t n = 0, i, j;

	buf[0] = 0;
	json_array_foreach(groups, i, g) {
		int kmin = record_int(g, "sharing_min", 1, 0, INT_MAX), kmax = record_int(g, "sharing_max", 1, 0, INT_MAX);
		int cnt = record_int(g, "flows", 0, 0, INT_MAX);

		if (kmax < 2 || n >= len)
			continue;	/* flows alone on their paths collided with nothing */
		if (kmin == kmax)
			n += (size_t)snprintf(buf + n, len - n, "%s%d flows filled about %.1f link%s (1/%d each): ",
					      n ? "; " : "", cnt, record_num(g, "links", 0),
					      record_num(g, "links", 0) < 1.5 ? "" : "s", kmin);
		else
			n += (size_t)snprintf(buf + n, len - n, "%s%d flows filled about %.1f link%s (1/%d..1/%d each): ",
					      n ? "; " : "", cnt, record_num(g, "links", 0),
					      record_num(g, "links", 0) < 1.5 ? "" : "s", kmin, kmax);
		json_array_foreach(json_object_get(g, "entropy"), j, e) {
			if (n >= len)
				break;
			if (j == 8) {
				n += (size_t)snprintf(buf + n, len - n, ", ...");
				break;
			}
			n += (size_t)snprintf(buf + n, len - n, "%s%lld", j ? ", " : "", (long long)json_integer_value(e));
		}
	}
	if (!buf[0])
		snprintf(buf, len, "every flow had a path to itself");
	n = strlen(buf);
	json_array_foreach(json_object_get(rec, "links"), i, g) {	/* --trace: the busiest links */
		if (i == 4 || n >= len)
			break;
		n += (size_t)snprintf(buf + n, len - n, "%s%s -> %s (%lld flows)", i ? ", " : ". Traced, the busiest links: ",
				      record_str(g, "from", "?"), record_str(g, "to", "?"),
				      (long long)json_integer_value(json_object_get(g, "flows")));
	}
}

/* the p-value cell: "-" where the probe gave none (no verdict) */
static const char *polar_p(json_t *rec, char *buf, size_t len)
{
	json_t *p = record_get(rec, "metrics.p_value");

	if (!json_is_number(p))
		return "-";
	snprintf(buf, len, "%.2g", json_number_value(p));
	return buf;
}

/* the paths a set's verdict stands on: traced, or by the rates */
static double polar_used(json_t *rec)
{
	return !strcmp(record_str(rec, "evidence", ""), "traces") ? record_num(rec, "trace.paths", 0) :
	       record_num(rec, "metrics.paths_used", 0);
}

/* worst run of the probes: the one with the fewest paths used on average */
static int polar_worst(const struct report *rep, double *used, int *polarized)
{
	int ri, w = -1, with = 0;

	for (ri = 0; ri < rep->nruns; ri++) {
		json_t *rec;
		size_t k;
		double sum = 0;
		int n = 0, pol = 0;

		json_array_foreach(rep->runs[ri].polar, k, rec)	/* a set without a verdict says nothing */
			if (!strcmp(record_str(rec, "scope", ""), "set") &&
			    (!strcmp(record_str(rec, "verdict", ""), "polarized") ||
			     !strcmp(record_str(rec, "verdict", ""), "not polarized"))) {
				sum += polar_used(rec);
				pol += !strcmp(record_str(rec, "verdict", ""), "polarized");
				n++;
			}
		used[ri] = n ? sum / n : NAN;
		polarized[ri] = pol;
		if (n && (w < 0 || used[ri] < used[w]))
			w = ri;
		with += n > 0;
	}
	return with > 1 ? w : -1;	/* worse than another: two runs with verdicts at least */
}

/* ---- Markdown and HTML ---- */

static const char *const polar_head[] = {
	"run", "phase", NULL, "lane", "set", "flows", "paths used", "uniform hashing", "p", "verdict", "by",
};

/* the table: a row per set of the probe (Markdown has the lane too) */
static void polar_table(const struct report *rep, struct rdoc *d)
{
	size_t h;
	int ri;

	rdoc_table(d);
	rdoc_head(d);
	for (h = 0; h < sizeof(polar_head) / sizeof(polar_head[0]); h++) {
		rdoc_only(d, h == 3 ? RDOC_MD : RDOC_BOTH);
		rdoc_cell(d, RDOC_TEXT, 0);
		if (polar_head[h])
			rdoc_text(d, polar_head[h]);
		else
			rdoc_sym(d, "sender -> receiver", "sender &rarr; receiver");
	}
	rdoc_only(d, RDOC_BOTH);
	for (ri = 0; ri < rep->nruns; ri++) {
		json_t *rec;
		size_t k;

		json_array_foreach(rep->runs[ri].polar, k, rec) {
			int bad = !strcmp(record_str(rec, "verdict", ""), "polarized") ||
				  !strcmp(record_str(rec, "verdict", ""), "inconclusive");
			int traced = !strcmp(record_str(rec, "evidence", ""), "traces");
			char lane[48], pbuf[32];

			if (strcmp(record_str(rec, "scope", ""), "set"))
				continue;
			fs_lane_name(record_int(rec, "src.rail", 0, 0, FS_MAX_RAILS - 1), record_int(rec, "src.plane", 0, 0, FS_MAX_PLANES - 1),
				    lane, sizeof(lane));
			rdoc_row(d);
			rdoc_cellf(d, RDOC_TEXT, 0, "%s", rep->runs[ri].name);
			rdoc_cellf(d, RDOC_TEXT, 0, "%s", record_str(rec, "phase", "-"));
			rdoc_cell(d, RDOC_TEXT, 0);
			rdoc_text(d, record_str(rec, "src.node", record_str(rec, "src.ip", "?")));
			rdoc_sym(d, " -> ", " &rarr; ");
			rdoc_text(d, record_str(rec, "dst.node", record_str(rec, "dst.ip", "?")));
			rdoc_only(d, RDOC_MD);
			rdoc_cell(d, RDOC_TEXT, 0);
			rdoc_text(d, lane);
			rdoc_only(d, RDOC_BOTH);
			rdoc_cellf(d, RDOC_NUM, 0, "%d", record_int(rec, "params.set", 0, 0, INT_MAX - 1) + 1);
			rdoc_cellf(d, RDOC_NUM, 0, "%d", record_int(rec, "flows", 0, 0, INT_MAX));
			if (traced)	/* the count the verdict stands on, against the paths it was judged by */
				rdoc_cellf(d, RDOC_NUM, 0, "%s%d of %d traced",
					   json_is_true(record_get(rec, "trace.exact")) ? "" : "at most ",
					   record_int(rec, "trace.paths", 0, 0, INT_MAX),
					   record_int(rec, "trace.possible", 0, 0, INT_MAX));
			else if (record_num(rec, "params.paths", 0) > 0)
				rdoc_cellf(d, RDOC_NUM, 0, "%.1f of %d", record_num(rec, "metrics.paths_used", 0),
					   record_int(rec, "params.paths", 0, 0, INT_MAX));
			else	/* no number of paths: the count alone */
				rdoc_cellf(d, RDOC_NUM, 0, "%.1f", record_num(rec, "metrics.paths_used", 0));
			rdoc_cell(d, RDOC_NUM, 0);
			rdoc_litf(d, "%.1f", record_num(rec, traced ? "trace.expected" : "metrics.expected_paths", 0));
			rdoc_sym(d, " +- ", " &plusmn; ");
			rdoc_litf(d, "%.1f", record_num(rec, traced ? "trace.sd" : "metrics.expected_paths_sd", 0));
			rdoc_cell(d, RDOC_NUM, 0);
			rdoc_text(d, polar_p(rec, pbuf, sizeof(pbuf)));
			rdoc_cell(d, bad ? RDOC_FAIL : RDOC_PASS, 1);
			rdoc_text(d, record_str(rec, "verdict", "?"));
			rdoc_cellf(d, RDOC_TEXT, 0, "%s", record_str(rec, "evidence", "-"));
		}
	}
}

/* the worse run: HTML says it in the list, Markdown under it, against the others */
static void polar_worse(const struct report *rep, struct rdoc *d)
{
	double used[64];
	int pol[64], w, ri, i;
	char buf[512];

	if (rep->nruns <= 1 || rep->nruns > 64 || (w = polar_worst(rep, used, pol)) < 0)
		return;
	rdoc_only(d, RDOC_HTML);
	rdoc_item(d, NULL);
	snprintf(buf, sizeof(buf), "Worse: %s", rep->runs[w].name);
	rdoc_bold(d, buf);
	rdoc_textf(d, ", %s %.1f paths used on average", pol[w] ? "polarized," : "", used[w]);
	rdoc_only(d, RDOC_MD);
	rdoc_para(d, 0);
	rdoc_lit(d, "**Worse: ");
	rdoc_text(d, rep->runs[w].name);
	rdoc_lit(d, "**");
	rdoc_textf(d, ", %s %.1f paths used on average, against ", pol[w] ? "polarized," : "", used[w]);
	for (ri = 0, i = 0; ri < rep->nruns; ri++)
		if (ri != w && !isnan(used[ri])) {
			rdoc_textf(d, "%s%.1f with ", i++ ? ", " : "", used[ri]);
			rdoc_text(d, rep->runs[ri].name);
		}
	rdoc_lit(d, ".");
	rdoc_only(d, RDOC_BOTH);
}

void report_polar_section(const struct report *rep, struct rdoc *d)
{
	char buf[512], who[300];
	int ri;

	if (!polar_shown(rep))
		return;
	rdoc_heading(d, 2);
	rdoc_text(d, "Hash polarization");
	polar_table(rep, d);
	rdoc_list(d);
	for (ri = 0; ri < rep->nruns; ri++) {
		json_t *rec;
		size_t k;

		json_array_foreach(rep->runs[ri].polar, k, rec) {
			int nov = !strcmp(record_str(rec, "verdict", ""), "inconclusive");
			int sweep = !strcmp(record_str(rec, "scope", ""), "sweep");

			/* the sets, and a sweep's verdict on its sets together (the run's) */
			if ((strcmp(record_str(rec, "scope", ""), "set") && !sweep) ||
			    (strcmp(record_str(rec, "verdict", ""), "polarized") && !nov))
				continue;
			polar_groups(rec, buf, sizeof(buf));
			rdoc_item(d, NULL);
			if (rep->nruns > 1) {
				rdoc_text(d, rep->runs[ri].name);
				rdoc_lit(d, ": ");
			}
			rpolar_who(rec, who, sizeof(who));	/* the pair, as the run's summary names it */
			rdoc_text(d, who);
			rdoc_lit(d, ": ");
			if (sweep)
				rdoc_lit(d, "the sets together: ");
			rdoc_text(d, record_str(rec, "verdict_text", ""));
			if (!nov && !sweep) {	/* no verdict: its collisions are a guess on a wrong link rate */
				rdoc_lit(d, ". Collisions: ");
				rdoc_text(d, buf);
			}
		}
	}
	polar_worse(rep, d);
}

/* ---- JSON ---- */

/* the traces' counts, without the text and the hops (a new object, or NULL) */
static json_t *polar_trace_brief(json_t *rec)
{
	json_t *t = json_object_get(rec, "trace"), *b;

	if (!json_is_object(t))
		return NULL;
	b = json_deep_copy(t);
	json_object_del(b, "text");
	return b;
}

/* the probe's verdicts, without the per-flow detail (why there is none, where there is none) */
json_t *report_polar_json(const struct rrun *r)
{
	json_t *pa = json_array(), *rec;
	size_t k;

	json_array_foreach(r->polar, k, rec)
		json_array_append_new(pa, json_pack("{sO?,sO?,sO?,sO?,sO?,sO?,sO?,sO?,sO*,sO*,sO*,sO*,so*}",
			"phase", json_object_get(rec, "phase"), "scope", json_object_get(rec, "scope"),
			"src", json_object_get(rec, "src"), "dst", json_object_get(rec, "dst"),
			"params", json_object_get(rec, "params"), "metrics", json_object_get(rec, "metrics"),
			"verdict", json_object_get(rec, "verdict"),
			"verdict_text", json_object_get(rec, "verdict_text"),
			"verdict_reason", json_object_get(rec, "verdict_reason"),
			"likely_cause", json_object_get(rec, "likely_cause"), "units", json_object_get(rec, "units"),
			"evidence", json_object_get(rec, "evidence"), "trace", polar_trace_brief(rec)));
	return pa;
}

/* ---- Prometheus text exposition ---- */

void report_polar_exposition(const struct report *rep, const char *const *lbl, struct report_buf *b)
{
	/* each family in one group, as the text format wants */
	const char *fam[2] = { "fabscope_polarization_paths_used", "fabscope_polarization_polarized" };
	const char *help[2] = { "paths the flows of a polarization probe used",
				"1 when the probe judged the hashing polarized" };
	int m, ri;

	for (m = 0; m < 2; m++) {
		report_bput(b, "# HELP %s %s\n# TYPE %s gauge\n", fam[m], help[m], fam[m]);
		for (ri = 0; ri < rep->nruns; ri++) {
			json_t *rec;
			size_t k;

			json_array_foreach(lbl[ri] ? rep->runs[ri].polar : NULL, k, rec) {
				char *ph, *src, *dst;

				if (strcmp(record_str(rec, "scope", ""), "set"))
					continue;
				ph = push_label_value(record_str(rec, "phase", "-"));
				src = push_label_value(record_str(rec, "src.node", "-"));
				dst = push_label_value(record_str(rec, "dst.node", "-"));
				report_bput(b, "%s{%sphase=\"%s\",src=\"%s\",dst=\"%s\",set=\"%d\"} %.4g\n",
					    fam[m], lbl[ri], ph, src, dst, record_int(rec, "params.set", 0, 0, INT_MAX - 1) + 1,
					    m ? !strcmp(record_str(rec, "verdict", ""), "polarized") :
						record_num(rec, "metrics.paths_used", 0));
				free(ph);
				free(src);
				free(dst);
			}
		}
	}
}
