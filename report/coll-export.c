/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The collectives' series as data: in the JSON summary (report_coll_json)
 * and in the Prometheus text for --push (report_coll_exposition): see
 * render.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/record.h"
#include "coll-int.h"
#include "push.h"
#include "render.h"

/* ---- JSON ---- */

static json_t *jnum(double v)
{
	if (isnan(v))
		return json_null();
	if (v == floor(v) && fabs(v) < 9007199254740992.0)
		return json_integer((json_int_t)v);
	return json_real(v);
}

json_t *report_coll_json(const struct rrun *r)
{
	struct coll_set cs;
	json_t *a;
	int i, j;

	report_coll_build(r, 1, &cs);
	if (!cs.n) {
		report_coll_release(&cs);
		return NULL;
	}
	a = json_array();
	for (i = 0; i < cs.n; i++) {
		const struct coll_series *s = &cs.s[i];
		json_t *sizes = json_array(), *nodes = json_array(), *e;
		size_t k;

		json_array_foreach(json_object_get(s->first, "endpoints"), k, e) {
			const char *node = record_str(e, "node", NULL);
			json_t *n;
			size_t m;
			int seen = 0;

			json_array_foreach(nodes, m, n)
				seen |= node && !strcmp(json_string_value(n), node);
			if (node && !seen)
				json_array_append_new(nodes, json_string(node));
		}
		for (j = 0; j < s->npt; j++) {
			const struct coll_pt *p = &s->pt[j];

			json_array_append_new(sizes, json_pack("{so,so,so,so,so,so,so,sI}", "size_bytes", jnum(p->size),
				"count", jnum(p->count), "time_us", jnum(p->time), "time_us_min", jnum(p->tmin),
				"time_us_max", jnum(p->tmax), "algbw_gbps", jnum(p->algbw), "busbw_gbps", jnum(p->busbw),
				"wrong", (json_int_t)p->wrong));
		}
		json_array_append_new(a, json_pack("{ss,ss,ss,ss,ss,so,so,si,so,so}", "test", cs.key[s->coll].test,
			"algo", cs.key[s->coll].algo, "transport", cs.key[s->coll].transport, "phase", cs.phase[s->phase],
			"lane", s->lane, "rail", s->rail >= 0 ? json_integer(s->rail) : json_null(),
			"plane", s->rail >= 0 ? json_integer(s->plane) : json_null(), "ranks", s->ranks,
			"nodes", nodes, "sizes", sizes));
	}
	report_coll_release(&cs);
	return a;
}

/* ---- Prometheus text exposition ---- */

void report_coll_exposition(const struct report *rep, const char *const *lbl, struct report_buf *b)
{
	static const char *const fam[4] = { "fabscope_coll_bus_bandwidth_bytes_per_second",
					    "fabscope_coll_algorithm_bandwidth_bytes_per_second",
					    "fabscope_coll_operation_seconds", "fabscope_coll_wrong_elements" };
	static const double scale[3] = { 1.25e8, 1.25e8, 1e-6 };	/* from Gb/s, Gb/s, us */
	static const char *const help[4] = {
		"bus bandwidth of a collective per lane and size, bytes per second (algbw x 2(n-1)/n for allreduce, x (n-1)/n for alltoall)",
		"algorithm bandwidth of a collective per lane and size (size / time), bytes per second",
		"time per operation of a collective per lane and size, the mean over the ranks, seconds",
		"wrong elements a collective returned on a lane, over its sizes (lanes whose data was checked)",
	};
	struct coll_set cs;
	int m, i, j;

	report_coll_build(rep->runs, rep->nruns, &cs);
	if (!cs.n) {
		report_coll_release(&cs);
		return;
	}
	for (m = 0; m < 4; m++) {
		report_bput(b, "# HELP %s %s\n# TYPE %s gauge\n", fam[m], help[m], fam[m]);
		for (i = 0; i < cs.n; i++) {
			const struct coll_series *s = &cs.s[i];
			char *ph = push_label_value(cs.phase[s->phase]);
			char *test = push_label_value(cs.key[s->coll].test), *algo = push_label_value(cs.key[s->coll].algo);
			char *tr = push_label_value(cs.key[s->coll].transport), *lane = push_label_value(s->lane);
			char lab[1024], rail[48] = "";
			long long wrong = -1;

			if (s->rail >= 0)
				snprintf(rail, sizeof(rail), ",rail=\"%d\",plane=\"%d\"", s->rail, s->plane);
			if (lbl[s->run])
				snprintf(lab, sizeof(lab), "%sphase=\"%s\",test=\"%s\",algo=\"%s\",transport=\"%s\",lane=\"%s\"%s",
					 lbl[s->run], ph, test, algo, tr, lane, rail);
			for (j = 0; lbl[s->run] && j < s->npt; j++) {
				const struct coll_pt *p = &s->pt[j];
				double v = m == 0 ? p->busbw : m == 1 ? p->algbw : p->time;

				if (p->wrong >= 0)
					wrong = (wrong < 0 ? 0 : wrong) + p->wrong;
				if (m < 3 && !isnan(v))
					report_bput(b, "%s{%s,size_bytes=\"%.0f\"} %.9g\n", fam[m], lab, p->size,
						    v * scale[m]);
			}
			if (m == 3 && wrong >= 0)
				report_bput(b, "%s{%s} %lld\n", fam[m], lab, wrong);
			free(ph);
			free(test);
			free(algo);
			free(tr);
			free(lane);
		}
	}
	report_coll_release(&cs);
}
