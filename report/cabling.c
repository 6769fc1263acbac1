/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The report's "Cabling and configuration": the ports a run's topology
 * phases saw (records of test topology), judged against the intended
 * topology (--topology FILE) as `fabscope topo check` judges them: a row per
 * rail and plane (the design's ports of the observed nodes, how many were
 * seen, up, cabled as designed, and the errors on them) and every finding.
 * Without --topology, the findings the run itself kept (run.json's cabling,
 * from its plan's [global] topology), else only how many ports were seen:
 * no verdict without a design.
 */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/record.h"
#include "../topology/check.h"
#include "../topology/intent.h"
#include "../topology/verify.h"
#include "doc.h"
#include "render.h"
#include "report.h"

/* a row per rail (-1: none, 0..63) and plane (-1: none, 0..7), by index */
#define CAB_PLANES 9
#define CAB_LANES (65 * CAB_PLANES)

struct lane_row {
	int rail, plane, used;
	int design, seen, up, as_designed, errors;
};

static struct lane_row *row_of(struct lane_row *rows, int rail, int plane)
{
	struct lane_row *r;

	if (rail < -1 || rail > 63 || plane < -1 || plane > 7)	/* (a design read has none such: intent.c) */
		rail = plane = -1;
	r = &rows[(rail + 1) * CAB_PLANES + plane + 1];

	r->used = 1;
	r->rail = rail;
	r->plane = plane;
	return r;
}

/* the errors at line of fs (sorted by line, as topo_verify leaves it) */
static int errors_at(const struct topo_findings *fs, int line)
{
	size_t lo = 0, hi = fs->n;
	int n = 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (fs->f[mid].line < line)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < fs->n && fs->f[lo].line == line; lo++)
		n += fs->f[lo].error;
	return n;
}

/* the rows of the design's node ports whose node was observed (s sorted, as topo_verify leaves it) */
static json_t *lane_rows(const struct topo *t, const struct topo_obsset *s, const struct topo_findings *fs)
{
	struct lane_row *rows = calloc(CAB_LANES, sizeof(*rows));
	json_t *a = json_array();
	size_t i;

	if (!rows)
		return a;	/* (no table; the findings stay) */

	for (i = 0; i < t->nln; i++) {
		const struct topo_link *l = &t->ln[i];
		const struct topo_obs *o;
		struct lane_row *r;

		if (l->a.sw >= 0 || l->b.sw < 0)
			continue;
		o = topo_obs_find(s, l->a.dev, l->a.port);
		if (!o && !topo_obs_has_node(s, l->a.dev))
			continue;	/* a node not observed at all is not this run's */
		r = row_of(rows, topo_link_rail(t, l), topo_link_plane(t, l));
		r->design++;
		r->seen += !!o;
		r->up += o && o->up != 0 && o->carrier != 0;
		r->as_designed += o && o->nsys && !strcmp(o->nsys, l->b.dev) && !strcmp(o->nport, l->b.port);
		r->errors += errors_at(fs, l->line);
	}
	for (i = 0; i < CAB_LANES; i++)
		if (rows[i].used)
			json_array_append_new(a, json_pack("{si,si,si,si,si,si,si}", "rail", rows[i].rail, "plane", rows[i].plane,
						   "design", rows[i].design, "seen", rows[i].seen, "up", rows[i].up,
						   "as_designed", rows[i].as_designed, "errors", rows[i].errors));
	free(rows);
	return a;
}

/* r's ports against t into r->cabling; its errors */
static int judge_run(struct rrun *r, const struct topo *t, int *errors)
{
	struct topo_findings fs;
	int rc = topo_verify(t, &r->topo_obs, &fs);

	if (rc)
		return rc;
	r->cabling = json_pack("{ss,si,si,si,so,so}", "intent", t->path, "ports", (int)r->topo_obs.n, "errors",
			       fs.errors, "warnings", (int)fs.n - fs.errors, "findings", topo_findings_json(&fs),
			       "lanes", lane_rows(t, &r->topo_obs, &fs));
	*errors += fs.errors;
	topo_findings_release(&fs);
	return r->cabling ? 0 : fs_err_env("out of memory judging the cabling of %s", r->dir);
}

int report_cabling(struct report *rep, const struct topo *t)
{
	int i, rc = 0;

	for (i = 0; i < rep->nruns && !rc; i++) {
		struct rrun *r = &rep->runs[i];
		json_t *kept = json_object_get(r->run, "cabling");

		if (!r->topo_obs.n)
			continue;
		if (t)
			rc = judge_run(r, t, &rep->cabling_errors);
		else if (json_is_object(kept)) {	/* the run's own verdict, by its plan's design */
			r->cabling = json_incref(kept);
			rep->cabling_errors += record_int(kept, "errors", 0, 0, 1 << 24);
		}
		else
			r->cabling = json_pack("{si}", "ports", (int)r->topo_obs.n);
	}
	return rc;
}

static void lane_table(const struct report *rep, struct rdoc *d)
{
	static const char *const head[] = { "run", "lane", "ports (design)", "seen", "link up", "as designed",
					    "errors" };
	int ri, c;

	rdoc_table(d);
	rdoc_head(d);
	for (c = rep->nruns > 1 ? 0 : 1; c < 7; c++) {
		rdoc_cell(d, RDOC_TEXT, 0);
		rdoc_text(d, head[c]);
	}
	for (ri = 0; ri < rep->nruns; ri++) {
		json_t *lanes = json_object_get(rep->runs[ri].cabling, "lanes"), *l;
		size_t k;

		json_array_foreach(lanes, k, l) {
			int rail = record_int(l, "rail", -1, 0, FS_MAX_RAILS - 1), plane = record_int(l, "plane", -1, 0, FS_MAX_PLANES - 1);
			int err = record_int(l, "errors", 0, 0, 1 << 24);
			char lane[48];

			if (rail < 0)
				snprintf(lane, sizeof(lane), "no rail");
			else
				fs_lane_name(rail, plane < 0 ? 0 : plane, lane, sizeof(lane));
			rdoc_row(d);
			if (rep->nruns > 1)
				rdoc_cellf(d, RDOC_TH, 0, "%s", rep->runs[ri].name);
			rdoc_cellf(d, RDOC_TH, 0, "%s", lane);
			rdoc_cellf(d, RDOC_NUM, 0, "%d", record_int(l, "design", 0, 0, INT_MAX));
			rdoc_cellf(d, RDOC_NUM, 0, "%d", record_int(l, "seen", 0, 0, INT_MAX));
			rdoc_cellf(d, RDOC_NUM, 0, "%d", record_int(l, "up", 0, 0, INT_MAX));
			rdoc_cellf(d, RDOC_NUM, 0, "%d", record_int(l, "as_designed", 0, 0, INT_MAX));
			rdoc_cellf(d, err ? RDOC_FAIL : RDOC_PASS, err > 0, "%d", err);
		}
	}
}

void report_cabling_section(const struct report *rep, struct rdoc *d)
{
	int ri, any = 0, lanes = 0;

	for (ri = 0; ri < rep->nruns; ri++) {
		any |= rep->runs[ri].cabling != NULL;
		lanes |= json_array_size(json_object_get(rep->runs[ri].cabling, "lanes")) > 0;
	}
	if (!any)
		return;
	rdoc_heading(d, 2);
	rdoc_text(d, "Cabling and configuration");
	if (lanes)
		lane_table(rep, d);
	rdoc_para(d, 1);
	rdoc_lit(d, "Each node's ports as its topology phase saw them (LLDP neighbour, link, settings), against "
		    "the intended topology: per rail and plane, the design's ports of the observed nodes, those seen, "
		    "up, and cabled to the design's switch port; then every finding, by the design's line.");
	rdoc_list(d);
	for (ri = 0; ri < rep->nruns; ri++) {
		const struct rrun *r = &rep->runs[ri];
		json_t *fl = json_object_get(r->cabling, "findings"), *f;
		const char *intent = record_str(r->cabling, "intent", NULL);
		size_t k;

		if (!r->cabling)
			continue;
		if (!intent) {
			rdoc_item(d, NULL);
			rdoc_textf(d, "%s%s%d ports seen; no intended topology to judge them by (give --topology FILE, "
				   "or [global] topology in the plan)", rep->nruns > 1 ? r->name : "",
				   rep->nruns > 1 ? ": " : "", record_int(r->cabling, "ports", 0, 0, INT_MAX));
			continue;
		}
		if (!json_array_size(fl)) {
			rdoc_item(d, NULL);
			rdoc_textf(d, "%s%s%d ports seen: cabled and set as %s says", rep->nruns > 1 ? r->name : "",
				   rep->nruns > 1 ? ": " : "", record_int(r->cabling, "ports", 0, 0, INT_MAX), intent);
		}
		json_array_foreach(fl, k, f) {
			rdoc_item(d, NULL);
			rdoc_bold(d, record_str(f, "level", "error"));
			rdoc_textf(d, " %s%s%s:%d: %s", rep->nruns > 1 ? r->name : "", rep->nruns > 1 ? ": " : "",
				   intent, record_int(f, "line", 0, 0, INT_MAX), record_str(f, "text", ""));
		}
	}
}
