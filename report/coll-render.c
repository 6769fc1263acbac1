/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The collectives section in Markdown and HTML (report_coll_section: see
 * render.h), one model for both (doc.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/record.h"
#include "coll-int.h"
#include "doc.h"
#include "render.h"

#define COLL_CELL 320

/* ---- the section ---- */

/* the distinct node names of a record's endpoints, comma-separated */
static void nodes_of(json_t *rec, char *buf, size_t len)
{
	json_t *e, *f;
	size_t i, j, n = 0, shown = 0;

	buf[0] = 0;
	json_array_foreach(json_object_get(rec, "endpoints"), i, e) {
		const char *node = record_str(e, "node", NULL);
		int seen = 0;

		if (!node)
			continue;
		json_array_foreach(json_object_get(rec, "endpoints"), j, f) {
			if (j >= i)
				break;
			seen |= !strcmp(record_str(f, "node", ""), node);
		}
		if (seen || n >= len)
			continue;
		if (shown++ == 8) {
			n += (size_t)snprintf(buf + n, len - n, ", ...");
			break;
		}
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", node);
	}
	if (!buf[0])
		snprintf(buf, len, "?");
}

/* v with prec decimals, or n/a */
static void num(double v, int prec, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%.*f", prec, v);
}

/* a paragraph: lead in bold (none when ""), then text */
static void out_para(struct rdoc *d, const char *lead, const char *text, int note)
{
	rdoc_para(d, note);
	if (lead[0])
		rdoc_bold(d, lead);
	rdoc_text(d, text);
}

static void out_item(struct rdoc *d, const char *lead, const char *text)
{
	rdoc_item(d, NULL);
	if (lead[0]) {
		rdoc_bold(d, lead);
		rdoc_lit(d, ": ");
	}
	rdoc_text(d, text);
}

/* a new table and its header row */
static void out_head(struct rdoc *d, char (*head)[COLL_CELL], int ncol)
{
	int c;

	rdoc_table(d);
	rdoc_head(d);
	for (c = 0; c < ncol; c++)
		rdoc_cellf(d, RDOC_TEXT, 0, "%s", head[c]);
}

/* a row; fail[c]: the cell shows a failure (bold in Markdown); cells from column num on are numbers */
static void out_row(struct rdoc *d, char (*cell)[COLL_CELL], const int *fail, int ncol, int num)
{
	int c;

	rdoc_row(d);
	for (c = 0; c < ncol; c++)
		rdoc_cellf(d, fail[c] ? RDOC_FAIL : c >= num ? RDOC_NUM : RDOC_TEXT, fail[c], "%s", cell[c]);
}

/* one lane's table, nccl-tests' columns */
static void lane_table(const struct report *rep, const struct coll_set *cs, const struct coll_series *s,
		       struct rdoc *d)
{
	static const char *const head[6] = { "size (B)", "count", "time (us)", "algbw (Gb/s)", "busbw (Gb/s)", "#wrong" };
	char cell[6][COLL_CELL], ln[128], lead[300], text[600], nodes[400];
	int fail[6], i, c;

	rcoll_lane_name(cs, s->phase, s->lane, ln, sizeof(ln));
	snprintf(lead, sizeof(lead), "%.100s%s%s", rep->nruns > 1 ? rep->runs[s->run].name : "",
		 rep->nruns > 1 ? ", " : "", ln);
	nodes_of(s->first, nodes, sizeof(nodes));
	if (s->ranks > 0)
		snprintf(text, sizeof(text), ": %s%d rank%s on %s%s", s->sum ? "the rails added up, " : "", s->ranks,
			 s->ranks == 1 ? "" : "s", nodes, s->sum ? "; time: the slowest rail's" : "");
	else
		snprintf(text, sizeof(text), ": %sranks unknown", s->sum ? "the rails added up, " : "");
	out_para(d, lead, text, 0);
	for (c = 0; c < 6; c++)
		snprintf(cell[c], COLL_CELL, "%s", head[c]);
	out_head(d, cell, 6);
	for (i = 0; i < s->npt; i++) {
		const struct coll_pt *p = &s->pt[i];

		snprintf(cell[0], COLL_CELL, "%.0f", p->size);
		num(p->count, 0, cell[1], COLL_CELL);
		num(p->time, 1, cell[2], COLL_CELL);
		rcoll_gbps(p->algbw, cell[3], COLL_CELL);
		rcoll_gbps(p->busbw, cell[4], COLL_CELL);
		if (p->wrong < 0)
			snprintf(cell[5], COLL_CELL, "n/a");
		else
			snprintf(cell[5], COLL_CELL, "%lld", p->wrong);
		memset(fail, 0, sizeof(fail));
		fail[5] = p->wrong > 0;
		out_row(d, cell, fail, 6, 0);
	}
}

struct lane_key {
	int phase;
	const char *lane;
	int order, runs;
};

/* the (phase, lane)s of collective c that two runs or more have, in order; -1 out of memory */
static int compared_lanes(const struct report *rep, const struct coll_set *cs, int c, struct lane_key **out)
{
	struct lane_key *v = NULL;
	size_t alloc = 0;
	int n = 0, i, j, a, b;

	for (i = 0; i < cs->n; i++) {
		const struct coll_series *s = &cs->s[i];

		if (s->coll != c)
			continue;
		for (j = 0; j < n; j++)
			if (v[j].phase == s->phase && !strcmp(v[j].lane, s->lane))
				break;
		if (j < n)
			continue;
		if (FS_ALLOC_GROW(v, n + 1, alloc)) {
			free(v);
			*out = NULL;
			return -1;
		}
		v[n] = (struct lane_key){ .phase = s->phase, .lane = s->lane, .order = s->lane_order };
		for (a = 0; a < rep->nruns; a++)
			v[n].runs += rcoll_series_of(cs, a, c, s->phase, s->lane) != NULL;
		if (v[n].runs >= 2)
			n++;
	}
	for (a = 1; a < n; a++)	/* by phase, then lane */
		for (b = a; b > 0 && (v[b - 1].phase > v[b].phase ||
				      (v[b - 1].phase == v[b].phase && v[b - 1].order > v[b].order)); b--) {
			struct lane_key t = v[b];

			v[b] = v[b - 1];
			v[b - 1] = t;
		}
	*out = v;
	return n;
}

/* the sizes any run measured on a lane, in order (-1 out of memory); the caller frees */
static int lane_sizes(const struct report *rep, const struct coll_set *cs, int c, const struct lane_key *k,
		      double **out)
{
	size_t alloc = 0;
	double *v = NULL;
	int n = 0, ri, i, j;

	for (ri = 0; ri < rep->nruns; ri++) {
		const struct coll_series *s = rcoll_series_of(cs, ri, c, k->phase, k->lane);

		for (i = 0; s && i < s->npt; i++) {
			for (j = 0; j < n && v[j] != s->pt[i].size; j++)
				;
			if (j < n)
				continue;
			if (FS_ALLOC_GROW(v, n + 1, alloc)) {
				free(v);
				*out = NULL;
				return -1;
			}
			for (j = n++; j > 0 && v[j - 1] > s->pt[i].size; j--)
				v[j] = v[j - 1];
			v[j] = s->pt[i].size;
		}
	}
	*out = v;
	return n;
}

static double busbw_at(const struct coll_set *cs, int ri, int c, const struct lane_key *k, double size)
{
	const struct coll_series *s = rcoll_series_of(cs, ri, c, k->phase, k->lane);
	const struct coll_pt *p = s ? rcoll_pt_at(s, size) : NULL;

	return p ? p->busbw : NAN;
}

/* with several runs: busbw side by side per size, the ratio to the first run, and the best at the largest size */
static void compare_runs(const struct report *rep, const struct coll_set *cs, int c, struct rdoc *d)
{
	struct lane_key *keys;
	int nk = compared_lanes(rep, cs, c, &keys), ncol = 3 + 2 * rep->nruns - 1, k, i, ri;
	char (*cell)[COLL_CELL], text[1024], lead[200], b1[32], b2[32];
	int *fail;

	cell = nk > 0 ? calloc((size_t)ncol, sizeof(*cell)) : NULL;
	fail = nk > 0 ? calloc((size_t)ncol, sizeof(*fail)) : NULL;
	if (!cell || !fail) {	/* nothing to compare, or out of memory */
		d->oom |= nk != 0;
		free(cell);
		free(fail);
		free(keys);
		return;
	}
	snprintf(text, sizeof(text), " (Gb/s), and the ratio to %.200s", rep->runs[0].name);
	out_para(d, "busbw by run", text, 0);
	snprintf(cell[0], COLL_CELL, "phase");
	snprintf(cell[1], COLL_CELL, "lane");
	snprintf(cell[2], COLL_CELL, "size (B)");
	for (ri = 0; ri < rep->nruns; ri++)
		snprintf(cell[3 + ri], COLL_CELL, "%.250s", rep->runs[ri].name);
	for (ri = 1; ri < rep->nruns; ri++)
		snprintf(cell[2 + rep->nruns + ri], COLL_CELL, "%.150s / %.150s", rep->runs[ri].name, rep->runs[0].name);
	out_head(d, cell, ncol);
	for (k = 0; k < nk; k++) {
		double *sizes;
		int ns = lane_sizes(rep, cs, c, &keys[k], &sizes);

		d->oom |= ns < 0;

		for (i = 0; i < ns; i++) {
			double first = busbw_at(cs, 0, c, &keys[k], sizes[i]);

			snprintf(cell[0], COLL_CELL, "%s", cs->phase[keys[k].phase]);
			snprintf(cell[1], COLL_CELL, "%s", keys[k].lane);
			snprintf(cell[2], COLL_CELL, "%.0f", sizes[i]);
			for (ri = 0; ri < rep->nruns; ri++) {
				double v = busbw_at(cs, ri, c, &keys[k], sizes[i]);

				if (isnan(v))
					snprintf(cell[3 + ri], COLL_CELL, "-");
				else
					rcoll_gbps(v, cell[3 + ri], COLL_CELL);
				if (ri && !isnan(v) && first > 0)
					snprintf(cell[2 + rep->nruns + ri], COLL_CELL, "%.2f", v / first);
				else if (ri)
					snprintf(cell[2 + rep->nruns + ri], COLL_CELL, "-");
			}
			out_row(d, cell, fail, ncol, 2);
		}
		free(sizes);
	}
	rdoc_list(d);
	for (k = 0; k < nk; k++) {	/* the best run at the largest size two runs or more measured */
		double *sizes, size = NAN, best = NAN, v;
		int ns = lane_sizes(rep, cs, c, &keys[k], &sizes), b = -1, have, alike = 1;
		size_t len;

		d->oom |= ns < 0;

		for (i = ns - 1; i >= 0 && isnan(size); i--) {
			for (ri = 0, have = 0; ri < rep->nruns; ri++)
				have += !isnan(busbw_at(cs, ri, c, &keys[k], sizes[i]));
			if (have >= 2)
				size = sizes[i];
		}
		free(sizes);
		if (isnan(size))
			continue;
		for (ri = 0; ri < rep->nruns; ri++) {
			v = busbw_at(cs, ri, c, &keys[k], size);
			if (isnan(v))
				continue;
			if (b >= 0 && v != best)
				alike = 0;
			if (b < 0 || v > best) {
				best = v;
				b = ri;
			}
		}
		rcoll_lane_name(cs, keys[k].phase, keys[k].lane, lead, sizeof(lead));
		rcoll_size_str(size, b1, sizeof(b1));
		rcoll_gbps(best, b2, sizeof(b2));
		if (alike) {
			snprintf(text, sizeof(text), "at %s, the same busbw in every run (%s Gb/s)", b1, b2);
		} else {
			len = (size_t)snprintf(text, sizeof(text), "at %s, %.200s is best with %s Gb/s busbw", b1,
					       rep->runs[b].name, b2);
			for (ri = 0; ri < rep->nruns && len < sizeof(text); ri++) {
				v = busbw_at(cs, ri, c, &keys[k], size);
				if (ri == b || isnan(v))
					continue;
				rcoll_gbps(v, b2, sizeof(b2));
				len += (size_t)snprintf(text + len, sizeof(text) - len, "; %.200s %s (%.2f x)",
							rep->runs[ri].name, b2, best > 0 ? v / best : NAN);
			}
		}
		out_item(d, lead, text);
	}
	free(cell);
	free(fail);
	free(keys);
}

void report_coll_section(const struct report *rep, struct rdoc *d)
{
	struct coll_set cs;
	char buf[300], text[1400];
	int c, i, ar = 0, a2a = 0, wrong = 0;
	size_t len;

	report_coll_build(rep->runs, rep->nruns, &cs);
	if (!cs.n) {
		report_coll_release(&cs);
		return;
	}
	rdoc_heading(d, 2);
	rdoc_text(d, "Collectives");
	for (c = 0; c < cs.nkey; c++) {
		ar |= !strcmp(cs.key[c].test, "allreduce");
		a2a |= !strcmp(cs.key[c].test, "alltoall");
		snprintf(buf, sizeof(buf), "%.40s, %.60s, %.60s", cs.key[c].test, cs.key[c].algo, cs.key[c].transport);
		rdoc_heading(d, 3);
		rdoc_text(d, buf);
		for (i = 0; i < cs.n; i++)
			if (cs.s[i].coll == c)
				lane_table(rep, &cs, &cs.s[i], d);
		if (rep->nruns > 1)
			compare_runs(rep, &cs, c, d);
	}
	len = (size_t)snprintf(text, sizeof(text), "Time: per operation, the mean over the ranks. algbw = size / time. busbw = algbw x ");
	if (ar)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "2(n-1)/n for allreduce%s", a2a ? ", x " : "");
	if (a2a)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "(n-1)/n for alltoall");
	snprintf(text + len, sizeof(text) - len, " (n ranks in the lane): the rate each rank's link carries, "
		 "comparable with the link rate whatever n. On hierarchical fabrics (several ranks per node, rails, "
		 "oversubscribed spines) it misleads: the ring crosses the slowest tier, and busbw says what a flat "
		 "ring would carry, not what that tier limits a job to; compare it per rail and with the pairwise bw "
		 "of the same links. Gb/s are 10^9 bit/s (nccl-tests prints GB/s: 8 times less). #wrong: elements "
		 "unlike the expected result (n/a: not checked).");
	out_para(d, "", text, 1);
	for (i = 0; i < cs.n; i++) {	/* every lane that returned wrong data */
		const struct coll_series *s = &cs.s[i];
		char sizes[400] = "", sz[32];
		long long n = 0;
		int j, k = 0;

		if (rcoll_rails_there(&cs, s))
			continue;
		for (j = 0; j < s->npt; j++)
			if (s->pt[j].wrong > 0) {
				n += s->pt[j].wrong;
				rcoll_size_str(s->pt[j].size, sz, sizeof(sz));
				if (k++ < 12)
					snprintf(sizes + strlen(sizes), sizeof(sizes) - strlen(sizes), "%s%s", k > 1 ? ", " : "", sz);
				else if (k == 13)
					snprintf(sizes + strlen(sizes), sizeof(sizes) - strlen(sizes), ", ...");
			}
		if (!n)
			continue;
		if (!wrong++)
			rdoc_list(d);
		rcoll_series_name(rep, &cs, s, buf, sizeof(buf));
		snprintf(text, sizeof(text), "%s: %lld wrong element%s at %s (a rank, its NIC or the fabric corrupted data)",
			 buf, n, n == 1 ? "" : "s", sizes);
		out_item(d, "Wrong data", text);
	}
	report_coll_release(&cs);
}
