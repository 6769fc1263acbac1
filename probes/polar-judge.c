/* SPDX-License-Identifier: BSD-2-Clause */
/* A polarization record judged from what it holds and the design: see polar-judge.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/record.h"
#include "../topology/ecmp.h"
#include "polar-judge.h"

/* ---- the rates ---- */

/* the flows of rec: entropy value and rate; n of them (NULL: none) */
static struct polar_flow *read_flows(json_t *rec, int *n)
{
	json_t *ent = json_object_get(rec, "entropy"), *e;
	struct polar_flow *f;
	size_t i;

	*n = 0;
	if (!json_array_size(ent) || !(f = calloc(json_array_size(ent), sizeof(*f))))
		return NULL;
	json_array_foreach(ent, i, e) {
		f[i].entropy = record_int(e, "value", 0, 0, INT_MAX);
		f[i].gbps = record_num(e, "gbps", 0);
	}
	*n = (int)json_array_size(ent);
	return f;
}

/* P, C and H: what params give, else the design's (into params.design) */
static void speeds(json_t *rec, const struct topo *d, int *P, double *C, double *H)
{
	json_t *params = json_object_get(rec, "params");
	struct topo_ecmp e;
	char err[300];

	*P = record_int(params, "paths", 0, 0, INT_MAX);
	*C = record_num(params, "link_rate_gbps", 0);
	*H = record_num(params, "host_rate_gbps", 0);
	if (!d || !json_is_object(params))
		return;
	if (topo_ecmp(d, record_str(rec, "src.node", ""), record_str(rec, "dst.node", ""),
		      record_int(rec, "src.rail", 0, 0, FS_MAX_RAILS - 1), record_int(rec, "src.plane", 0, 0, FS_MAX_PLANES - 1),
		      &e, err, sizeof(err))) {
		json_object_set_new(params, "design", json_pack("{ss,ss}", "file", d->path ? d->path : "",
								 "error", err));
		return;
	}
	json_object_set_new(params, "design", json_pack("{ss,sf,si,si,sf,sf}", "file", d->path ? d->path : "",
							 "paths", e.paths, "tier", e.tier, "links", e.links,
							 "link_gbps", e.link_gbps, "host_gbps", e.host_gbps));
	if (*P <= 0 && e.links > 1)
		json_object_set_new(params, "paths", json_integer(*P = e.links));
	if (*C <= 0 && e.link_gbps > 0)
		json_object_set_new(params, "link_rate_gbps", json_real(*C = e.link_gbps));
	if (*H <= 0 && e.host_gbps > 0)
		json_object_set_new(params, "host_rate_gbps", json_real(*H = e.host_gbps));
}

/* which flows shared a bottleneck, and how many links they filled */
static json_t *groups_json(const struct polar_flow *f, int n, double capacity)
{
	int *grp = malloc((size_t)(n ? n : 1) * sizeof(*grp)), ng, g, i;
	json_t *groups = json_array();

	if (!grp)
		return groups;
	ng = polar_groups(f, n, capacity, grp);
	for (g = 0; g < ng; g++) {
		json_t *vals = json_array();
		double links = 0;
		int kmin = 0, kmax = 0;

		for (i = 0; i < n; i++)
			if (grp[i] == g) {
				json_array_append_new(vals, json_integer(f[i].entropy));
				links += 1.0 / f[i].k;
				kmin = !kmin || f[i].k < kmin ? f[i].k : kmin;
				kmax = f[i].k > kmax ? f[i].k : kmax;
			}
		json_array_append_new(groups, json_pack("{si,sf,si,si,so}", "flows", (int)json_array_size(vals),
							"links", links, "sharing_min", kmin, "sharing_max", kmax,
							"entropy", vals));
	}
	free(grp);
	return groups;
}

/* the rates' figures into rec: metrics, every flow's sharing, the groups, "rates" */
static void rates_out(json_t *rec, const struct polar_result *r, const struct polar_flow *f)
{
	json_t *byk = json_object(), *m, *ent = json_object_get(rec, "entropy");
	int i;

	for (i = 1; i <= 64; i++)
		if (r->by_k[i]) {
			char k[8];

			snprintf(k, sizeof(k), "%d", i);
			json_object_set_new(byk, k, json_integer(r->by_k[i]));
		}
	m = json_pack("{sf,sf,sf,sf,sf,sf,sf,sf,sf,sf,so}", "paths_used", r->used, "expected_paths", r->expected,
		      "expected_paths_sd", r->sd, "p_value", r->p_value, "jain", r->jain, "min_gbps", r->min,
		      "median_gbps", r->median, "max_gbps", r->max, "total_gbps", r->total, "capacity_gbps",
		      r->capacity, "flows_by_sharing", byk);
	if (r->flows_for_all)
		json_object_set_new(m, "flows_to_cover_all_paths", json_integer(r->flows_for_all));
	if (r->rates == POLAR_INCONCLUSIVE && (r->cause == POLAR_CAUSE_LINK_RATE_LOW || r->cause == POLAR_CAUSE_PATHS ||
					       (r->cause == POLAR_CAUSE_NO_LINK_RATE &&
						r->used > polar_max_used(r->paths))))
		json_object_set_new(m, "max_paths_used", json_real(polar_max_used(r->paths)));
	json_object_set_new(rec, "metrics", m);
	for (i = 0; i < r->flows; i++)
		json_object_set_new(json_array_get(ent, (size_t)i), "sharing", json_integer(f[i].k));
	json_object_set_new(rec, "collision_groups", groups_json(f, r->flows, r->capacity));
	json_object_set_new(rec, "rates", json_pack("{ss,ss?,ss?}", "verdict", polar_word(r->rates),
						    "cause", r->rates == POLAR_INCONCLUSIVE ? polar_cause_name(r->cause) : NULL,
						    "bottleneck", r->rates == POLAR_POLARIZED || r->rates == POLAR_NOT ?
						    (r->by_design ? "by design" : "measured") : NULL));
}

/* ---- the traces ---- */

struct tflow {
	json_t *path;		/* the answers, the destination's last */
	int complete;		/* reached it, every hop answering */
	int nr;			/* routers: the answers before the destination's */
	int *sw;		/* the design's switch of each router (-1: none), when mapped */
	char *key;		/* its path: the routers' names or addresses, '>' between */
};

struct tstate {
	const struct topo *d;
	struct tflow *fl;
	int n, complete, mapped, routers;
	const char *src, *dst;	/* addresses, for the lines */
	json_t *seen;		/* router addresses that answered */
};

static const char *hop_at(const struct tflow *f, int h)
{
	return json_string_value(json_array_get(f->path, (size_t)h));
}

/* a router's name: the design's switch, else its address */
static const char *hop_name(const struct tstate *s, const struct tflow *f, int h)
{
	return s->mapped && f->sw[h] >= 0 ? s->d->sw[f->sw[h]].name : hop_at(f, h);
}

static int keycmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* every flow's path from the record; the routers by the design where every one has an address there */
static int tflows_read(struct tstate *s, json_t *ent)
{
	size_t i;
	int h;

	s->mapped = s->d && s->d->naddr;
	s->seen = json_object();
	for (i = 0; i < (size_t)s->n; i++) {
		struct tflow *f = &s->fl[i];
		json_t *e = json_array_get(ent, i);
		size_t len;

		f->path = json_object_get(e, "path");
		len = json_array_size(f->path);
		f->complete = json_is_true(json_object_get(e, "path_complete")) && len >= 1;
		f->nr = f->complete ? (int)len - 1 : (int)len;	/* (the destination's answer is no router) */
		for (h = 0; h < (int)len; h++) {
			const char *a = hop_at(f, h);

			if (!a || !strcmp(a, "*"))
				f->complete = 0;
			else if (h < f->nr)
				json_object_set_new(s->seen, a, json_true());
		}
		s->complete += f->complete;
		if (!(f->sw = calloc((size_t)f->nr + 1, sizeof(*f->sw))))
			return -1;
		for (h = 0; h < f->nr; h++) {
			f->sw[h] = s->d && hop_at(f, h) ? topo_addr_switch(s->d, hop_at(f, h)) : -1;
			if (f->complete && f->sw[h] < 0)
				s->mapped = 0;
		}
	}
	s->routers = (int)json_object_size(s->seen);
	return 0;
}

/* every complete flow's key; the distinct ones counted */
static int count_paths(struct tstate *s)
{
	char **keys = calloc((size_t)s->n + 1, sizeof(*keys));
	int i, h, nk = 0, paths = 0;

	if (!keys)
		return -1;
	for (i = 0; i < s->n; i++) {
		struct tflow *f = &s->fl[i];
		size_t len = 1;

		if (!f->complete)
			continue;
		for (h = 0; h < f->nr; h++)
			len += strlen(hop_name(s, f, h)) + 1;
		if (!(f->key = malloc(len)))
			break;
		f->key[0] = 0;
		for (h = 0; h < f->nr; h++) {
			if (h)
				strcat(f->key, ">");
			strcat(f->key, hop_name(s, f, h));
		}
		keys[nk++] = f->key;
	}
	qsort(keys, (size_t)nk, sizeof(*keys), keycmp);
	for (i = 0; i < nk; i++)
		paths += !i || strcmp(keys[i], keys[i - 1]);
	free(keys);
	return paths;
}

/* the design against the traces: every link a cable, every path one of its equal-cost paths; why not into t */
static void check_design(struct tstate *s, json_t *rec, struct polar_traces *t)
{
	const char *sn = record_str(rec, "src.node", ""), *dn = record_str(rec, "dst.node", "");
	const char *file = s->d->path ? s->d->path : "the design";
	int first = -1, last = -1, i, h;
	struct topo_ecmp e;
	char err[300];

	for (i = 0; i < s->n && !t->why[0]; i++) {
		const struct tflow *f = &s->fl[i];

		if (!f->complete || !f->nr)
			continue;
		if (first < 0) {
			first = f->sw[0];
			last = f->sw[f->nr - 1];
		}
		if (f->sw[0] != first || f->sw[f->nr - 1] != last)
			snprintf(t->why, sizeof(t->why), "the traces leave by %s and %s and arrive by %s and %s: "
				 "not one pair of leaves", s->d->sw[first].name, s->d->sw[f->sw[0]].name,
				 s->d->sw[last].name, s->d->sw[f->sw[f->nr - 1]].name);
		for (h = 0; h + 1 < f->nr && !t->why[0]; h++)
			if (!topo_cabled(s->d, s->d->sw[f->sw[h]].name, s->d->sw[f->sw[h + 1]].name))
				snprintf(t->why, sizeof(t->why), "traced %s (%s) -> %s (%s) is no cable of %s",
					 s->d->sw[f->sw[h]].name, hop_at(f, h), s->d->sw[f->sw[h + 1]].name,
					 hop_at(f, h + 1), file);
	}
	if (!t->why[0] && first >= 0 && topo_is_node(s->d, sn) && !topo_cabled(s->d, sn, s->d->sw[first].name))
		snprintf(t->why, sizeof(t->why), "the traces leave %s by %s, which is not cabled to it in %s", sn,
			 s->d->sw[first].name, file);
	if (!t->why[0] && last >= 0 && topo_is_node(s->d, dn) && !topo_cabled(s->d, s->d->sw[last].name, dn))
		snprintf(t->why, sizeof(t->why), "the traces reach %s by %s, which is not cabled to it in %s", dn,
			 s->d->sw[last].name, file);
	if (!t->why[0] && first >= 0 && topo_ecmp_switches(s->d, first, last, &e, err, sizeof(err)))
		snprintf(t->why, sizeof(t->why), "%s", err);
	else if (!t->why[0] && first >= 0)
		for (i = 0; i < s->n && !t->why[0]; i++)
			if (s->fl[i].complete && s->fl[i].nr != e.hops + 1)
				snprintf(t->why, sizeof(t->why), "flow %d crossed %d switches, where the equal-cost "
					 "paths of %s cross %d: not routed as the design says",
					 record_int(json_array_get(json_object_get(rec, "entropy"), (size_t)i), "value",
						    0, 0, INT_MAX), s->fl[i].nr, file, e.hops + 1);
	if (t->why[0])
		t->contradicts = 1;
	else if (first >= 0)
		t->possible = e.paths > 1e9 ? 1000000000 : (int)e.paths;
}

/* links between named hops, busiest first: [{from, to, flows}] */
static json_t *links_json(const struct tstate *s)
{
	json_t *cnt = json_object(), *la = json_array(), *v;
	const char *k;
	size_t i, j;
	int h;

	for (i = 0; i < (size_t)s->n; i++)
		for (h = 0; s->fl[i].complete && h + 1 < s->fl[i].nr; h++) {
			char key[2 * TOPO_NAME_MAX + 8];

			snprintf(key, sizeof(key), "%s>%s", hop_name(s, &s->fl[i], h), hop_name(s, &s->fl[i], h + 1));
			v = json_object_get(cnt, key);
			json_object_set_new(cnt, key, json_integer(v ? json_integer_value(v) + 1 : 1));
		}
	json_object_foreach(cnt, k, v) {
		const char *gt = strchr(k, '>');

		json_array_append_new(la, json_pack("{ss#,ss,sI}", "from", k, (int)(gt - k), "to", gt + 1, "flows",
						    json_integer_value(v)));
	}
	json_decref(cnt);
	for (i = 1; i < json_array_size(la); i++)	/* busiest first, stable */
		for (j = i; j > 0 && record_num(json_array_get(la, j), "flows", 0) >
				      record_num(json_array_get(la, j - 1), "flows", 0); j--) {
			json_t *a = json_incref(json_array_get(la, j)), *b = json_incref(json_array_get(la, j - 1));

			json_array_set_new(la, j, b);
			json_array_set_new(la, j - 1, a);
		}
	return la;
}

/* the routers of each hop with their flows: [{hop, routers: [{addr, switch?, flows}]}] */
static json_t *hops_json(const struct tstate *s)
{
	json_t *hops = json_array();
	int h, i, maxh = 0;

	for (i = 0; i < s->n; i++)
		maxh = s->fl[i].nr > maxh ? s->fl[i].nr : maxh;
	for (h = 0; h < maxh; h++) {
		json_t *cnt = json_object(), *rs = json_array(), *v;
		const char *k;

		for (i = 0; i < s->n; i++)
			if (h < s->fl[i].nr && hop_at(&s->fl[i], h) && strcmp(hop_at(&s->fl[i], h), "*")) {
				v = json_object_get(cnt, hop_at(&s->fl[i], h));
				json_object_set_new(cnt, hop_at(&s->fl[i], h),
						    json_integer(v ? json_integer_value(v) + 1 : 1));
			}
		json_object_foreach(cnt, k, v) {
			int sw = s->d ? topo_addr_switch(s->d, k) : -1;

			json_array_append_new(rs, json_pack("{ss,ss?,sI}", "addr", k, "switch",
							    sw >= 0 ? s->d->sw[sw].name : NULL, "flows",
							    json_integer_value(v)));
		}
		json_decref(cnt);
		json_array_append_new(hops, json_pack("{si,so}", "hop", h + 1, "routers", rs));
	}
	return hops;
}

/* "hop 2: A (10 flows), B (6 flows); hop 3: ..." for the hops with more than one router */
static void branching(json_t *hops, char *buf, size_t len)
{
	size_t i, k, off = 0, shown = 0;
	json_t *h, *r;

	buf[0] = 0;
	json_array_foreach(hops, i, h) {
		json_t *rs = json_object_get(h, "routers");

		if (json_array_size(rs) < 2 || shown == 3 || off >= len)
			continue;
		off += (size_t)snprintf(buf + off, len - off, "%shop %d:", shown++ ? "; " : "",
					record_int(h, "hop", 0, 0, INT_MAX));
		json_array_foreach(rs, k, r) {
			if (off >= len)
				break;
			off += (size_t)snprintf(buf + off, len - off, "%s %s (%d flows)", k ? "," : "",
						record_str(r, "addr", "?"), record_int(r, "flows", 0, 0, INT_MAX));
		}
	}
}

/* the line for a person */
static void trace_line(const struct tstate *s, const struct polar_traces *t, json_t *rec, char *line, size_t len)
{
	json_t *links = json_object_get(rec, "links");
	char b[400];
	size_t off, i;

	if (t->complete == t->flows && !s->routers && t->flows)
		snprintf(line, len, "traced: no routers between %s and %s - every flow reached %s at the first hop "
			 "(one link), so there are no links to name", s->src, s->dst, s->dst);
	else if (!s->routers)
		snprintf(line, len, "traced: no router between %s and %s answered (ICMP time exceeded dropped or "
			 "rate-limited): %d of %d flows traced", s->src, s->dst, t->complete, t->flows);
	else if (t->exact) {
		off = (size_t)snprintf(line, len, "traced: %d of %d flows, every hop named by %s: %d path%s; the "
				       "busiest links:", t->complete, t->flows, s->d->path ? s->d->path : "the design",
				       t->paths, t->paths == 1 ? "" : "s");
		for (i = 0; i < json_array_size(links) && i < 4 && off < len; i++)
			off += (size_t)snprintf(line + off, len - off, "%s %s -> %s (%d flows)", i ? "," : "",
						record_str(json_array_get(links, i), "from", "?"),
						record_str(json_array_get(links, i), "to", "?"),
						record_int(json_array_get(links, i), "flows", 0, 0, INT_MAX));
	} else {
		branching(json_object_get(rec, "hops"), b, sizeof(b));
		off = (size_t)snprintf(line, len, "traced: %d of %d flows to %s with every hop answering, %d router "
				       "address%s", t->complete, t->flows, s->dst, s->routers, s->routers == 1 ? "" : "es");
		if (t->complete == t->flows && off < len)
			off += (size_t)snprintf(line + off, len - off, ", at most %d path%s", t->paths,
						t->paths == 1 ? "" : "s");
		if (b[0] && off < len)
			snprintf(line + off, len - off, "; %s", b);
	}
}

/* rec's "trace": what was traced and what it shows */
static void trace_json(json_t *rec, const struct tstate *s, const struct polar_traces *t, const char *line)
{
	json_t *o = json_object_get(rec, "trace");
	int i, all = s->n > 0;

	for (i = 0; i < s->n; i++)
		all &= json_is_true(json_object_get(json_array_get(json_object_get(rec, "entropy"), (size_t)i),
						    "path_complete"));
	json_object_set_new(o, "flows", json_integer(t->flows));
	json_object_set_new(o, "complete", json_integer(t->complete));
	json_object_set_new(o, "all_reached", json_boolean(all));
	json_object_set_new(o, "routers", json_integer(s->routers));
	json_object_set_new(o, "paths", json_integer(t->paths));
	json_object_set_new(o, "exact", json_boolean(t->exact));
	json_object_set_new(o, "possible", json_integer(t->possible));
	json_object_set_new(o, "verdict", json_string(polar_word(t->verdict)));
	json_object_set_new(o, "p_value", t->verdict == POLAR_INCONCLUSIVE ? json_null() : json_real(t->p_value));
	json_object_set_new(o, "expected", json_real(t->expected));
	json_object_set_new(o, "sd", json_real(t->sd));
	json_object_set_new(o, "how", json_string(t->how));
	if (t->why[0])
		json_object_set_new(o, "why", json_string(t->why));
	else
		json_object_del(o, "why");
	json_object_set_new(o, "text", json_string(line));
}

/* The traces' evidence of rec (t->given 0: none), and its JSON */
static int traces_judge(json_t *rec, const struct topo *d, int P, struct polar_traces *t, char *line, size_t len)
{
	json_t *ent = json_object_get(rec, "entropy");
	struct tstate s = { .d = d, .n = (int)json_array_size(ent) };
	int i, rc = -1;

	memset(t, 0, sizeof(*t));
	line[0] = 0;
	t->given = json_is_object(json_object_get(rec, "trace"));
	if (!t->given || !s.n)
		return 0;
	s.src = record_str(rec, "src.ip", "here");
	s.dst = record_str(rec, "dst.ip", "there");
	if (!(s.fl = calloc((size_t)s.n, sizeof(*s.fl))) || tflows_read(&s, ent))
		goto out;
	t->flows = s.n;
	t->complete = s.complete;
	if ((t->paths = count_paths(&s)) < 0)
		goto out;
	t->possible = P;
	if (s.complete == s.n && !s.routers)
		snprintf(t->why, sizeof(t->why), "no routers between %s and %s: every flow reached %s at the first "
			 "hop, one link with nothing to spread over", s.src, s.dst, s.dst);
	else if (s.complete == s.n && s.mapped)
		check_design(&s, rec, t);
	t->exact = s.mapped && s.complete == s.n && !t->contradicts;
	if (t->exact)
		snprintf(t->how, sizeof(t->how), "every flow, every hop, named by %s and each link one of its cables",
			 d->path ? d->path : "the design");
	else
		snprintf(t->how, sizeof(t->how), "every flow, every hop, routers by address%s",
			 d && !s.mapped ? ", not all of them in the design's addr=" : "");
	for (i = 0; s.mapped && i < s.n; i++) {	/* each flow's switches, by name */
		json_t *route = json_array();
		int h;

		for (h = 0; h < s.fl[i].nr; h++)
			json_array_append_new(route, json_string(hop_name(&s, &s.fl[i], h)));
		json_object_set_new(json_array_get(ent, (size_t)i), "route", route);
	}
	polar_judge_traces(t, s.n);
	json_object_set_new(rec, "hops", hops_json(&s));
	if (t->exact)
		json_object_set_new(rec, "links", links_json(&s));
	else
		json_object_del(rec, "links");
	trace_line(&s, t, rec, line, len);
	trace_json(rec, &s, t, line);
	rc = 0;
out:
	for (i = 0; s.fl && i < s.n; i++) {
		free(s.fl[i].sw);
		free(s.fl[i].key);
	}
	free(s.fl);
	json_decref(s.seen);
	return rc;
}

/* ---- the verdict ---- */

static void verdict_out(json_t *rec, const struct polar_result *r, const struct polar_traces *t)
{
	const char *ev = polar_evidence_name(r->evidence);
	char v[1400];

	polar_verdict(r, t, v, sizeof(v));
	json_object_set_new(rec, "verdict", json_string(polar_word(r->verdict)));
	json_object_set_new(rec, "evidence", ev ? json_string(ev) : json_null());
	json_object_del(rec, "verdict_reason");
	json_object_del(rec, "likely_cause");
	if (r->verdict == POLAR_INCONCLUSIVE) {	/* why there is none: the rates' cause */
		json_object_set_new(rec, "verdict_reason", json_string(*polar_reason_name(r->cause) ?
								       polar_reason_name(r->cause) : "no_evidence"));
		if (*polar_cause_name(r->cause))
			json_object_set_new(rec, "likely_cause", json_string(polar_cause_name(r->cause)));
	}
	if (r->evidence != POLAR_EV_RATES)	/* the p-value of the verdict: the traces', or none */
		json_object_set_new(json_object_get(rec, "metrics"), "p_value",
				    r->evidence == POLAR_EV_TRACES ? json_real(t->p_value) : json_null());
	if (r->evidence == POLAR_EV_TRACES)
		json_object_set_new(json_object_get(rec, "metrics"), "paths_traced", json_integer(t->paths));
	json_object_set_new(rec, "verdict_text", json_string(v));
}

int polar_judge_record(json_t *rec, const struct topo *design, struct polar_judgment *j)
{
	struct polar_flow *f;
	int n, P;
	double C, H;

	memset(j, 0, sizeof(*j));
	if (!(f = read_flows(rec, &n)))
		return -1;
	speeds(rec, design, &P, &C, &H);
	polar_analyze(f, n, P, C, H, &j->r);
	rates_out(rec, &j->r, f);
	free(f);
	if (traces_judge(rec, design, P, &j->t, j->trace_line, sizeof(j->trace_line)))
		j->t.given = 0;	/* (out of memory: the rates alone) */
	polar_decide(&j->r, &j->t);
	verdict_out(rec, &j->r, &j->t);
	return 0;
}

void polar_judge_sweep(json_t *rec, const struct polar_judgment *sets, int n)
{
	int *obs = calloc((size_t)n + 1, sizeof(*obs)), *K = calloc((size_t)n + 1, sizeof(*K));
	int *P = calloc((size_t)n + 1, sizeof(*P)), s, traced = 0, none = -1;
	double used = 0, p = 1, mean = 0, sd2 = 0;
	char v[700];
	enum polar_verdict verdict = POLAR_INCONCLUSIVE;

	for (s = 0; obs && K && P && s < n; s++) {
		const struct polar_judgment *j = &sets[s];
		int tr = j->r.evidence == POLAR_EV_TRACES;
		double m, sd;

		if (j->r.verdict != POLAR_POLARIZED && j->r.verdict != POLAR_NOT && none < 0)
			none = s;
		traced += tr;
		obs[s] = tr ? j->t.paths : (int)lround(j->r.used);
		K[s] = j->r.flows;
		P[s] = tr ? j->t.possible : j->r.paths;
		used += obs[s];
		polar_occupancy_moments(K[s], P[s], &m, &sd);
		mean += m;
		sd2 += sd * sd;
	}
	if (n && none < 0 && obs && K && P) {
		p = polar_sweep_p_value(obs, K, P, n);
		verdict = p < POLAR_ALPHA ? POLAR_POLARIZED : POLAR_NOT;
		snprintf(v, sizeof(v), "%s: %d sets used %.1f paths on average (%s), where uniform hashing uses "
			 "%.1f (p = %.2g over the sets)", polar_word(verdict), n, used / n,
			 traced == n ? "traced" : traced ? "traced or by their rates" : "by their rates", mean / n, p);
	} else if (n) {
		snprintf(v, sizeof(v), "no verdict: set %d gave none (its line says why)", none + 1);
	} else {
		snprintf(v, sizeof(v), "no verdict: no set measured");
	}
	json_object_set_new(rec, "verdict", json_string(polar_word(verdict)));
	json_object_set_new(rec, "evidence", verdict == POLAR_INCONCLUSIVE ? json_null() :
				  json_string(traced == n ? "traces" : "rates"));
	json_object_set_new(rec, "metrics", json_pack("{si,sf,sf,sf,so}", "sets", n, "paths_used", n ? used / n : 0,
						      "expected_paths", n ? mean / n : 0, "expected_paths_sd",
						      n ? sqrt(sd2) / n : 0, "p_value", verdict == POLAR_INCONCLUSIVE ?
						      json_null() : json_real(p)));
	if (verdict == POLAR_INCONCLUSIVE)
		json_object_set_new(rec, "verdict_reason", json_string("a_set_without_verdict"));
	json_object_set_new(rec, "verdict_text", json_string(v));
	free(obs);
	free(K);
	free(P);
}
