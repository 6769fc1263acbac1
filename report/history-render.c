/* SPDX-License-Identifier: BSD-2-Clause */
/* The history's renderings as text (history.h); the report's section is in render.c's turn. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/record.h"
#include "history.h"

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

void hist_entity_name(char *buf, size_t len, json_t *e)
{
	const char *kind = record_str(e, "kind", "?");
	char size[32];

	size_str(record_num(e, "size", 0), size, sizeof(size));
	if (!strcmp(kind, "pair"))
		snprintf(buf, len, "pair %s -> %s rail %d plane %d (%s %s %s)", record_str(e, "node", "?"),
			 record_str(e, "peer", "?"), record_int(e, "rail", -1, -1, 127), record_int(e, "plane", -1, -1, 127),
			 record_str(e, "phase", "?"), record_str(e, "test", "?"), size);
	else if (!strcmp(kind, "node"))
		snprintf(buf, len, "node %s rail %d plane %d (%s %s %s)", record_str(e, "node", "?"),
			 record_int(e, "rail", -1, -1, 127), record_int(e, "plane", -1, -1, 127), record_str(e, "phase", "?"),
			 record_str(e, "test", "?"), size);
	else
		snprintf(buf, len, "lane rail %d plane %d (%s %s %s)", record_int(e, "rail", -1, -1, 127),
			 record_int(e, "plane", -1, -1, 127), record_str(e, "phase", "?"), record_str(e, "test", "?"), size);
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

static void print_entity(FILE *f, json_t *e, int tonight)
{
	char name[512];
	json_t *cp = json_object_get(e, "change_point"), *r;
	const char *unit = strcmp(record_str(e, "test", ""), "lat") ? "Gb/s" : "us";
	size_t i;

	hist_entity_name(name, sizeof(name), e);
	fprintf(f, "  %s", name);
	if (tonight)
		fprintf(f, ": %.4g %s, %+.1f %% against its peers tonight (z %.1f); %s", record_num(e, "value", NAN),
			unit, 100 * record_num(e, "change", NAN), record_num(e, "z", NAN), record_str(e, "status", "?"));
	if (json_object_get(e, "since") && (!tonight || strcmp(record_str(e, "status", ""), "new tonight")))
		fprintf(f, "%s %s (run %s)", tonight ? "" : ": known since", record_str(e, "since.started", "?"),
			record_str(e, "since.run", "?"));
	fprintf(f, "; a suspect in %d of the %d runs that measured it", record_int(e, "in_runs", 0, 0, 1 << 20),
		record_int(e, "runs", 0, 0, 1 << 20));
	if (!tonight || json_is_true(json_object_get(e, "repeat"))) {
		fprintf(f, " (");
		json_array_foreach(json_object_get(e, "suspect_runs"), i, r)
			fprintf(f, "%s%s", i ? ", " : "", json_string_value(r));
		fprintf(f, ")");
	}
	if (json_is_true(json_object_get(e, "regression")))
		fprintf(f, "; a regression: worse than its own history");
	if (json_is_true(json_object_get(e, "repeat")) && tonight)
		fprintf(f, "; a repeat offender");
	fprintf(f, "\n");
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
	fprintf(f, "suspects tonight: %s\n", json_array_size(json_object_get(d, "suspects")) ? "" : "none");
	json_array_foreach(json_object_get(d, "suspects"), i, e)
		print_entity(f, e, 1);
	fprintf(f, "repeat offenders (a suspect in %d runs or more, and back after a night without): %s\n",
		record_int(d, "repeat_min", 0, 0, 1 << 20), json_array_size(json_object_get(d, "repeat")) ? "" : "none");
	json_array_foreach(json_object_get(d, "repeat"), i, e)
		print_entity(f, e, 0);
	json_array_foreach(json_object_get(d, "shifts"), i, e) {
		char size[32];

		size_str(record_num(e, "size", 0), size, sizeof(size));
		fprintf(f, "night-wide: every lane of %s %s %s %+.1f %% against the nights before (z %.1f): the "
			"machine, not a link; not judged\n", record_str(e, "phase", "?"), record_str(e, "test", "?"), size,
			100 * record_num(e, "change", NAN), record_num(e, "z", NAN));
	}
	fprintf(f, "result: %s (exit %d)\n", record_str(d, "why", "?"), record_int(d, "exit", 0, 0, 1));
}
