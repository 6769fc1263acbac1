/* SPDX-License-Identifier: BSD-2-Clause */
/* The history's renderings as text (history.h); the report's section is in render.c's turn. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/record.h"
#include "doc.h"
#include "history.h"
#include "render.h"
#include "report.h"

void hist_print_runs(FILE *f, const struct hrun *runs, int n)
{
	int i;

	fprintf(f, "%-28s %-24s %-10s %10s  %s\n", "run", "started", "status", "results", "directory");
	for (i = 0; i < n; i++)
		fprintf(f, "%-28s %-24s %-10s %10lld  %s\n", runs[i].run_id, runs[i].started, runs[i].status,
			runs[i].nresults, runs[i].dir);
	fprintf(f, "%d run%s\n", n, n == 1 ? "" : "s");
}

static void size_str(double b, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB" };
	int u = 0;

	if (!(b > 0)) {
		snprintf(buf, len, "size not said");
		return;
	}
	while (u < 3 && b >= 1024 && fmod(b, 1024) == 0) {
		b /= 1024;
		u++;
	}
	snprintf(buf, len, "%g %s", b, unit[u]);
}

/* node's cable k (a cable object of the model): "h1:rail0 -> leaf1:swp3", "h1: not in DESIGN" */
static void cable_str(char *buf, size_t len, const char *node, json_t *k)
{
	if (json_is_string(json_object_get(k, "switch")))
		snprintf(buf, len, "%s:%s -> %s:%s", node, record_str(k, "host_port", "?"), record_str(k, "switch", "?"),
			 record_str(k, "port", "?"));
	else
		snprintf(buf, len, "%s: not in %s", node, record_str(k, "design", "the design"));
}

/* " (cable ...)", " (cables ..., ...)" of a node or pair named with its cables, "on run R" when
 * the night it is named for is not target's; "" without */
static void cables_part(char *buf, size_t len, json_t *e, const char *target)
{
	json_t *a = json_object_get(e, "cable"), *b = json_object_get(e, "peer_cable");
	const char *run = record_str(a, "run", "");
	char x[384], y[384];

	*buf = 0;
	if (!json_is_object(a))
		return;
	cable_str(x, sizeof(x), record_str(e, "node", "?"), a);
	if (json_is_object(b))
		cable_str(y, sizeof(y), record_str(e, "peer", "?"), b);
	snprintf(buf, len, " (cable%s %s%s%s%s%s)", json_is_object(b) ? "s" : "", x, json_is_object(b) ? ", " : "",
		 json_is_object(b) ? y : "", target && strcmp(run, target) ? " on run " : "",
		 target && strcmp(run, target) ? run : "");
}

void hist_entity_name(char *buf, size_t len, json_t *e, const char *target)
{
	const char *kind = record_str(e, "kind", "?");
	char size[32], cab[1024];

	size_str(record_num(e, "size", 0), size, sizeof(size));
	cables_part(cab, sizeof(cab), e, target);
	if (!strcmp(kind, "pair"))
		snprintf(buf, len, "pair %s -> %s rail %d plane %d%s (%s %s %s)", record_str(e, "node", "?"),
			 record_str(e, "peer", "?"), record_int(e, "rail", -1, -1, 127), record_int(e, "plane", -1, -1, 127),
			 cab, record_str(e, "phase", "?"), record_str(e, "test", "?"), size);
	else if (!strcmp(kind, "node"))
		snprintf(buf, len, "node %s rail %d plane %d%s (%s %s %s)", record_str(e, "node", "?"),
			 record_int(e, "rail", -1, -1, 127), record_int(e, "plane", -1, -1, 127), cab,
			 record_str(e, "phase", "?"), record_str(e, "test", "?"), size);
	else
		snprintf(buf, len, "lane rail %d plane %d (%s %s %s)", record_int(e, "rail", -1, -1, 127),
			 record_int(e, "plane", -1, -1, 127), record_str(e, "phase", "?"), record_str(e, "test", "?"), size);
}

void hist_recabling(char *buf, size_t len, json_t *r)
{
	char from[512], to[512];
	const char *node = record_str(r, "node", "?");

	cable_str(from, sizeof(from), node, json_object_get(r, "from"));
	cable_str(to, sizeof(to), node, json_object_get(r, "to"));
	snprintf(buf, len, "recabled at run %s (%s): %s before, %s since", record_str(r, "at.run", "?"),
		 record_str(r, "at.started", "?"), from, to);
}

static void print_history(FILE *f, json_t *e)
{
	json_t *v;
	size_t i;

	fprintf(f, "    history (oldest first):");
	json_array_foreach(json_object_get(e, "history"), i, v)
		if (json_is_number(v))
			fprintf(f, " %.4g", json_number_value(v));
		else
			fprintf(f, " -");
	fprintf(f, "\n");
}

static void print_entity(FILE *f, json_t *e, int tonight, const char *target)
{
	char name[2048];
	json_t *cp = json_object_get(e, "change_point"), *r;
	const char *unit = strcmp(record_str(e, "test", ""), "lat") ? "Gb/s" : "us";
	size_t i;

	hist_entity_name(name, sizeof(name), e, target);
	fprintf(f, "  %s", name);
	if (tonight)
		fprintf(f, ": %.4g %s, %+.1f %% against its peers tonight (z %.1f); %s", record_num(e, "value", NAN),
			unit, 100 * record_num(e, "change", NAN), record_num(e, "z", NAN), record_str(e, "status", "?"));
	if (json_object_get(e, "since") && (!tonight || strcmp(record_str(e, "status", ""), "new tonight")))
		fprintf(f, "%s %s (run %s)", tonight ? "" : ": known since", record_str(e, "since.started", "?"),
			record_str(e, "since.run", "?"));
	if (tonight && json_is_true(json_object_get(e, "confirmed")))
		fprintf(f, "; confirmed by %s", record_str(e, "confirmed_by", "?"));
	else if (tonight)
		fprintf(f, "; not confirmed: one night, and the run did not confirm it (watched, not counted)");
	fprintf(f, "; a suspect in %d of the %d runs that measured it", record_int(e, "in_runs", 0, 0, 1 << 20),
		record_int(e, "runs", 0, 0, 1 << 20));
	if (!tonight || json_is_true(json_object_get(e, "repeat"))) {
		fprintf(f, " (");
		json_array_foreach(json_object_get(e, "suspect_runs"), i, r)
			fprintf(f, "%s%s", i ? ", " : "", json_string_value(r));
		fprintf(f, ")");
	}
	if (json_is_true(json_object_get(e, "regression")))
		fprintf(f, "; a regression: worse than on its last night before");
	if (json_is_true(json_object_get(e, "repeat")) && tonight)
		fprintf(f, "; a repeat offender");
	fprintf(f, "\n");
	json_array_foreach(json_object_get(e, "recabled"), i, r) {
		char line[1200];

		hist_recabling(line, sizeof(line), r);
		fprintf(f, "    %s\n", line);
	}
	if (cp)
		fprintf(f, "    change point at run %s (%s): %+.1f %% -> %+.1f %% against its peers (z %.1f)\n",
			record_str(cp, "at.run", "?"), record_str(cp, "at.started", "?"), 100 * record_num(cp, "before", NAN),
			100 * record_num(cp, "after", NAN), record_num(cp, "z", NAN));
	print_history(f, e);
}

void hist_print_diff(FILE *f, json_t *d)
{
	json_t *w = json_object_get(d, "window"), *e;
	size_t i, n = json_array_size(w);

	fprintf(f, "Since last night and over the last %zu run%s (%s to %s): run %s\n", n, n == 1 ? "" : "s",
		record_str(json_array_get(w, 0), "started", "?"), record_str(json_array_get(w, n - 1), "started", "?"),
		record_str(d, "target.run", "?"));
	fprintf(f, "false-positive rate: at most %g %% a night (%d lanes, nodes and pairs judged tonight, each "
		"against its peers of the night and its own history: z >= %.2f and a change of %g %% at least)\n",
		100 * record_num(d, "fpr", NAN), record_int(d, "judged", 0, 0, 1 << 30), record_num(d, "z_suspect", NAN),
		100 * record_num(d, "min_change", NAN));
	fprintf(f, "suspects tonight:%s\n", json_array_size(json_object_get(d, "suspects")) ? "" : " none");
	json_array_foreach(json_object_get(d, "suspects"), i, e)
		print_entity(f, e, 1, record_str(d, "target.run", NULL));
	fprintf(f, "repeat offenders (a suspect in %d runs or more, and back after a night without):%s\n",
		record_int(d, "repeat_min", 0, 0, 1 << 20), json_array_size(json_object_get(d, "repeat")) ? "" : " none");
	json_array_foreach(json_object_get(d, "repeat"), i, e)
		print_entity(f, e, 0, record_str(d, "target.run", NULL));
	json_array_foreach(json_object_get(d, "shifts"), i, e) {
		char size[32];

		size_str(record_num(e, "size", 0), size, sizeof(size));
		fprintf(f, "night-wide: every lane of %s %s %s %+.1f %% against the nights before (z %.1f): the "
			"machine, not a link; not judged\n", record_str(e, "phase", "?"), record_str(e, "test", "?"), size,
			100 * record_num(e, "change", NAN), record_num(e, "z", NAN));
	}
	fprintf(f, "result: %s (exit %d)\n", record_str(d, "why", "?"), record_int(d, "exit", 0, 0, 1));
}

/* ---- the report's section (report --history) ---- */

static void history_cell(struct rdoc *d, json_t *e)
{
	json_t *v;
	size_t i;

	rdoc_cell(d, RDOC_TEXT, 0);
	json_array_foreach(json_object_get(e, "history"), i, v)
		if (json_is_number(v))
			rdoc_textf(d, "%s%.3g", i ? " " : "", json_number_value(v));
		else
			rdoc_textf(d, "%s-", i ? " " : "");
}

static void entity_rows(struct rdoc *d, json_t *list, int tonight, const char *target)
{
	json_t *e;
	size_t i;

	rdoc_table(d);
	rdoc_head(d);
	rdoc_cellf(d, RDOC_TEXT, 0, "%s", "what");
	if (tonight) {
		rdoc_cellf(d, RDOC_TEXT, 0, "%s", "tonight");
		rdoc_cellf(d, RDOC_TEXT, 0, "%s", "against its peers");
	}
	rdoc_cellf(d, RDOC_TEXT, 0, "%s", "status");
	rdoc_cellf(d, RDOC_TEXT, 0, "%s", "a suspect in");
	rdoc_cellf(d, RDOC_TEXT, 0, "%s", tonight ? "change point" : "runs");
	rdoc_cellf(d, RDOC_TEXT, 0, "%s", "history, oldest first");
	json_array_foreach(list, i, e) {
		char name[2048];
		json_t *cp = json_object_get(e, "change_point"), *r;
		int isnew = !strcmp(record_str(e, "status", ""), "new tonight");
		size_t k;

		hist_entity_name(name, sizeof(name), e, target);
		rdoc_row(d);
		rdoc_cellf(d, RDOC_TH, 0, "%s", name);
		json_array_foreach(json_object_get(e, "recabled"), k, r) {
			char line[1200];

			hist_recabling(line, sizeof(line), r);
			rdoc_textf(d, "; %s", line);
		}
		if (tonight) {
			rdoc_cellf(d, RDOC_NUM, 0, "%.4g %s", record_num(e, "value", NAN),
				   strcmp(record_str(e, "test", ""), "lat") ? "Gb/s" : "us");
			rdoc_cellf(d, RDOC_NUM, 0, "%+.1f %% (z %.1f)", 100 * record_num(e, "change", NAN),
				   record_num(e, "z", NAN));
			rdoc_cellf(d, json_is_true(json_object_get(e, "alarm")) ? RDOC_FAIL : RDOC_WARN, 1,
				   "%s%s%s%s%s", record_str(e, "status", "?"), isnew ? "" : " ",
				   isnew ? "" : record_str(e, "since.started", "?"),
				   json_is_true(json_object_get(e, "regression")) ? ", worse than last night" : "",
				   json_is_true(json_object_get(e, "confirmed")) ? "" : ", not confirmed (one night)");
		} else {
			rdoc_cellf(d, RDOC_WARN, 1, "repeat offender, known since %s", record_str(e, "since.started", "?"));
		}
		rdoc_cellf(d, RDOC_NUM, 0, "%d of %d runs", record_int(e, "in_runs", 0, 0, 1 << 20),
			   record_int(e, "runs", 0, 0, 1 << 20));
		rdoc_cell(d, RDOC_TEXT, 0);
		if (tonight && cp)
			rdoc_textf(d, "run %s (%s): %+.1f %% -> %+.1f %%", record_str(cp, "at.run", "?"),
				   record_str(cp, "at.started", "?"), 100 * record_num(cp, "before", NAN),
				   100 * record_num(cp, "after", NAN));
		else if (tonight)
			rdoc_text(d, "-");
		else
			json_array_foreach(json_object_get(e, "suspect_runs"), k, r)
				rdoc_textf(d, "%s%s", k ? ", " : "", json_string_value(r));
		history_cell(d, e);
	}
}

void report_history_section(const struct report *rep, struct rdoc *d)
{
	json_t *h = rep->history, *w = json_object_get(h, "window"), *e;
	size_t n = json_array_size(w), i;

	rdoc_heading(d, 2);
	rdoc_textf(d, "Since last night and over the last %zu run%s", n, n == 1 ? "" : "s");
	rdoc_para(d, 0);
	rdoc_text(d, "Run ");
	rdoc_code(d, record_str(h, "target.run", "?"));
	rdoc_textf(d, " against the history %s (%s to %s): every lane, node and pair held against its peers of "
		   "the night and its own history; false-positive rate at most %g %% a night (%d judged tonight: "
		   "z >= %.2f and a change of %g %% at least).  ", rep->history_path,
		   record_str(json_array_get(w, 0), "started", "?"), record_str(json_array_get(w, n - 1), "started", "?"),
		   100 * record_num(h, "fpr", NAN), record_int(h, "judged", 0, 0, 1 << 30), record_num(h, "z_suspect", NAN),
		   100 * record_num(h, "min_change", NAN));
	rdoc_bold(d, record_int(h, "exit", 0, 0, 1) ? "New or worse tonight" : "Nothing new or worse");
	rdoc_textf(d, ": %s.", record_str(h, "why", "?"));
	rdoc_heading(d, 3);
	rdoc_text(d, "Suspects tonight");
	if (json_array_size(json_object_get(h, "suspects")))
		entity_rows(d, json_object_get(h, "suspects"), 1, record_str(h, "target.run", NULL));
	else {
		rdoc_para(d, 0);
		rdoc_text(d, "none");
	}
	rdoc_heading(d, 3);
	rdoc_textf(d, "Repeat offenders (a suspect in %d runs or more, back after a night without)",
		   record_int(h, "repeat_min", 0, 0, 1 << 20));
	if (json_array_size(json_object_get(h, "repeat")))
		entity_rows(d, json_object_get(h, "repeat"), 0, record_str(h, "target.run", NULL));
	else {
		rdoc_para(d, 0);
		rdoc_text(d, "none");
	}
	if (json_array_size(json_object_get(h, "shifts"))) {
		rdoc_list(d);
		json_array_foreach(json_object_get(h, "shifts"), i, e) {
			char size[32];

			size_str(record_num(e, "size", 0), size, sizeof(size));
			rdoc_item(d, NULL);
			rdoc_textf(d, "night-wide: every lane of %s %s %s %+.1f %% against the nights before (z %.1f): "
				   "the machine, not a link; not judged", record_str(e, "phase", "?"),
				   record_str(e, "test", "?"), size, 100 * record_num(e, "change", NAN), record_num(e, "z", NAN));
		}
	}
}
