/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fabscope model: what a fabric should carry.  The command sits with the
 * plans it pairs nodes by (fleet/); the model itself is model/'s, which the
 * report uses too.
 *
 * From a topology (an intent file, fabscope-topology(5), or a shape made on
 * the spot) and a traffic pattern (a plan phase's kind, as `fabscope run`
 * pairs the nodes of each lane, or flows given as the paths they took), the
 * max-min fair rate of every flow when every switch splits it equally over
 * its next hops (spraying) and when each flow takes one path drawn
 * uniformly (per-flow ECMP), the latter as the mean over seeded draws.
 * Given the paths, ECMP is exact: that is the model a measured run is held
 * against on a bed whose hash is known.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../core/alloc.h"
#include "../core/builtin.h"
#include "../core/error.h"
#include "../core/options.h"
#include "../core/slurp.h"
#include "plan.h"
#include "../topology/dot.h"
#include "../topology/intent.h"
#include "../model/fabric.h"
#include "../model/maxmin.h"
#include "../model/shape.h"
#include "../model/solve.h"

static const char *const model_usage[] = {
	"fabscope model [options] TOPOLOGY",
	"fabscope model [options] --shape leaf-spine|rail-only|dual-plane --speed GBPS [-G N -H N -R N -S N ...]",
	NULL,
};

static const char model_about[] =
	"What the fabric should carry: the max-min fair rate of every flow of a traffic pattern, under\n"
	"spraying (every switch splits a flow equally over its next hops: the best a load balancer can do\n"
	"on a symmetric fat-tree) and under per-flow ECMP with a uniform hash (one path a flow, drawn;\n"
	"the mean of --samples draws and its spread).  Per lane (rail, plane): the aggregate, its\n"
	"fraction of line rate (the sum of the flows' NIC speeds), the slowest and the 5th-percentile\n"
	"flow, Jain's fairness.\n"
	"\n"
	"TOPOLOGY is an intended topology (fabscope-topology(5), or a Graphviz graph); --shape makes one\n"
	"instead, to ask what a fabric not built would do.  The pattern is a plan phase's kind, paired\n"
	"as 'fabscope run' pairs the nodes of each lane, every pair of a round at once (--pattern, or\n"
	"--plan FILE --phase NAME); or --paths FILE: one flow a line, the devices it crossed as\n"
	"'ci/netns-fabric path' prints them (h1 l1.0 s2 l2.0 h3): ECMP is then exact, the paths taken.\n"
	"\n"
	"Exit codes: 0 ok, 2 usage or a bad file, 3 out of memory.";

struct model_opts {
	const char *shape, *pattern, *plan, *phase, *paths, *target;
	struct shape_opts sh;
	double speed;
	int count, samples, json;
	uint64_t seed;
};

/* what one lane (or all of them) did, summed over rounds and draws */
struct acc {
	double agg, line, minf, p5f, jain;
	size_t solves, flows;
	double *aggs;		/* ECMP: each draw's aggregate, for its spread */
	size_t naggs, aggs_alloc;
};

struct lane {
	int rail, plane;
	struct acc spray, ecmp;
};

struct model {
	struct fab f;
	struct lane *lanes;
	size_t nlanes;
	struct acc all_spray, all_ecmp;
	/* one round's flows */
	size_t *src, *dst, *lane, nfl, fl_alloc, src_alloc, dst_alloc;
	char **paths;		/* --paths: each flow's line */
	size_t paths_alloc;
	double *exact, *spray_rate;	/* --paths: each flow's rates */
	double *tmp;		/* a solve's rates, lane by lane, then all of them */
	size_t tmp_alloc;
	double *line_in, *line_out;	/* the round's, per lane and (the last) of all */
	size_t *lane_off, *fill;	/* lane l's flows in tmp: [lane_off[l + 1], lane_off[l + 2]) */
	size_t rounds;
	int draws;		/* ECMP draws of the round with the most */
	uint32_t *seen_src, *seen_dst, stamp;	/* ports counted once in a line rate */
};

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* the p-th percentile (0..100) of n sorted values, nearest rank */
static double pct(const double *v, size_t n, double p)
{
	size_t k;

	if (!n)
		return 0;
	k = (size_t)ceil(p / 100.0 * (double)n);
	return v[k ? k - 1 : 0];
}

/* the k-th smallest (0..n-1) of n values, reordering them: quickselect with a
 * three-way partition (many equal rates are common), O(n) expected */
static double kth(double *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n;	/* the k-th is in [lo, hi) */

	while (hi - lo > 1) {
		double pivot = v[lo + (hi - lo) / 2], t;
		size_t lt = lo, i = lo, gt = hi;	/* [lo, lt) < pivot, [lt, i) = pivot, [gt, hi) > pivot */

		while (i < gt) {
			if (v[i] < pivot) {
				t = v[lt];
				v[lt++] = v[i];
				v[i++] = t;
			} else if (v[i] > pivot) {
				t = v[--gt];
				v[gt] = v[i];
				v[i] = t;
			} else {
				i++;
			}
		}
		if (k < lt)
			hi = lt;
		else if (k >= gt)
			lo = gt;
		else
			return pivot;
	}
	return v[lo];
}

static size_t lane_index(struct model *m, int rail, int plane)
{
	size_t i;

	for (i = 0; i < m->nlanes; i++)
		if (m->lanes[i].rail == rail && m->lanes[i].plane == plane)
			return i;
	return (size_t)-1;
}

static int lanes_from_ports(struct model *m)
{
	size_t i, alloc = 0;

	for (i = 0; i < m->f.nports; i++) {
		const struct fab_port *p = &m->f.ports[i];

		if (lane_index(m, p->rail, p->plane) != (size_t)-1)
			continue;
		if (FS_ALLOC_GROW(m->lanes, m->nlanes + 1, alloc))
			return fs_err_env("out of memory");
		memset(&m->lanes[m->nlanes], 0, sizeof(m->lanes[0]));
		m->lanes[m->nlanes].rail = p->rail;
		m->lanes[m->nlanes++].plane = p->plane;
	}
	for (i = 1; i < m->nlanes; i++) {	/* by rail, then plane (few: insertion) */
		struct lane l = m->lanes[i];
		size_t j = i;

		while (j && (m->lanes[j - 1].rail > l.rail ||
			     (m->lanes[j - 1].rail == l.rail && m->lanes[j - 1].plane > l.plane))) {
			m->lanes[j] = m->lanes[j - 1];
			j--;
		}
		m->lanes[j] = l;
	}
	return 0;
}

static int flow_push(struct model *m, size_t src, size_t dst, size_t lane)
{
	if (FS_ALLOC_GROW(m->src, m->nfl + 1, m->src_alloc) || FS_ALLOC_GROW(m->dst, m->nfl + 1, m->dst_alloc) ||
	    FS_ALLOC_GROW(m->lane, m->nfl + 1, m->fl_alloc))
		return fs_err_env("out of memory for the model's flows");
	m->src[m->nfl] = src;
	m->dst[m->nfl] = dst;
	m->lane[m->nfl++] = lane;
	return 0;
}

/* n rates (n > 0; reordered) into a's sums */
static int acc_add(struct acc *a, double *rates, size_t n, double line, int keep_agg)
{
	double agg = 0, min = rates[0];
	size_t i, k5 = (size_t)ceil(5 / 100.0 * (double)n);

	for (i = 0; i < n; i++) {
		agg += rates[i];
		min = rates[i] < min ? rates[i] : min;
	}
	a->agg += agg;
	a->line += line;
	a->minf += min;
	a->jain += mm_jain(rates, n);
	a->p5f += kth(rates, n, k5 ? k5 - 1 : 0);	/* the 5th percentile, nearest rank, as pct() */
	a->solves++;
	a->flows = n;
	if (keep_agg) {
		if (FS_ALLOC_GROW(a->aggs, a->naggs + 1, a->aggs_alloc))
			return fs_err_env("out of memory");
		a->aggs[a->naggs++] = agg;
	}
	return 0;
}

/* the round's line rates, per lane and of all (the last): what the flows' distinct NICs could send,
 * or take in, whichever is less (an incast's is its receiver's NIC); and where each lane's flows go
 * in m->tmp, lane by lane (lane_off) */
static void round_lines(struct model *m)
{
	size_t l, i;

	for (l = 0; l <= m->nlanes; l++)
		m->line_in[l] = m->line_out[l] = 0;
	memset(m->lane_off, 0, (m->nlanes + 2) * sizeof(*m->lane_off));
	m->stamp++;
	for (i = 0; i < m->nfl; i++) {	/* (a port is of one lane: one stamp does for all) */
		double out = m->f.cap[2 * m->f.ports[m->src[i]].link], in = m->f.cap[2 * m->f.ports[m->dst[i]].link + 1];

		m->lane_off[m->lane[i] + 2]++;
		if (m->seen_src[m->src[i]] != m->stamp) {
			m->seen_src[m->src[i]] = m->stamp;
			m->line_out[m->lane[i]] += out;
			m->line_out[m->nlanes] += out;
		}
		if (m->seen_dst[m->dst[i]] != m->stamp) {
			m->seen_dst[m->dst[i]] = m->stamp;
			m->line_in[m->lane[i]] += in;
			m->line_in[m->nlanes] += in;
		}
	}
	for (l = 0; l < m->nlanes; l++)
		m->lane_off[l + 2] += m->lane_off[l + 1];
}

/* a solve's rates into the lanes' and the total's sums: the flows put lane by lane (a counting sort),
 * one pass each */
static int account(struct model *m, const double *rate, int ecmp)
{
	size_t l, i;
	int rc = 0;

	for (l = 0; l <= m->nlanes; l++)
		m->fill[l] = m->lane_off[l + 1];
	for (i = 0; i < m->nfl; i++) {
		m->tmp[m->fill[m->lane[i]]++] = rate[i];
		m->tmp[m->nfl + i] = rate[i];	/* all the lanes */
	}
	for (l = 0; l <= m->nlanes && !rc; l++) {
		size_t a = l < m->nlanes ? m->lane_off[l + 1] : m->nfl, k = l < m->nlanes ? m->lane_off[l + 2] - a : m->nfl;
		double line = m->line_in[l] < m->line_out[l] ? m->line_in[l] : m->line_out[l];
		struct acc *acc = l == m->nlanes ? (ecmp ? &m->all_ecmp : &m->all_spray) :
				  ecmp ? &m->lanes[l].ecmp : &m->lanes[l].spray;

		if (k)
			rc = acc_add(acc, m->tmp + a, k, line, ecmp);
	}
	return rc;
}

/* each solve of a round (fab_round): its rates into the lanes' sums */
static int round_each(void *ctx, int draw, const double *rate)
{
	return account(ctx, rate, draw > 0);
}

static int round_solve(struct model *m, const struct model_opts *o, size_t round)
{
	int draws = o->samples ? o->samples : fab_draws(m->nfl);

	if (!m->nfl)
		return 0;
	if (FS_ALLOC_GROW(m->tmp, 2 * m->nfl, m->tmp_alloc))
		return fs_err_env("out of memory");
	round_lines(m);
	m->draws = draws > m->draws ? draws : m->draws;
	return fab_round(&m->f, m->src, m->dst, m->nfl, round, draws, o->seed, round_each, m);
}

/* --paths: the flows as they went; ECMP exact, spray between their ends */
static int paths_run(struct model *m, const struct model_opts *o)
{
	char *text = fs_slurp(o->paths, 64u << 20), *line, *save = NULL;
	struct fab_shares s = { 0 };
	int lno = 0, rc = 0;

	if (!text)
		return fs_err_read("paths", o->paths, errno);
	for (line = strtok_r(text, "\n", &save); line && !rc; line = strtok_r(NULL, "\n", &save)) {
		const char *hops[64];
		char where[512], *tok, *sv = NULL, *copy;
		int n = 0;
		size_t a, b, l;

		lno++;
		while (*line == ' ' || *line == '\t')
			line++;
		if (!*line || *line == '#')
			continue;
		copy = strdup(line);
		if (!copy || FS_ALLOC_GROW(m->paths, m->nfl + 1, m->paths_alloc)) {
			free(copy);
			rc = fs_err_env("out of memory");
			break;
		}
		m->paths[m->nfl] = copy;
		snprintf(where, sizeof(where), "%s:%d", o->paths, lno);
		for (tok = strtok_r(line, " \t", &sv); tok; tok = strtok_r(NULL, " \t", &sv)) {
			if (n == 64) {
				rc = fs_err_usage("%s: more than 64 hops", where);
				break;
			}
			hops[n++] = tok;
		}
		if (!rc)
			rc = fab_add_path(&m->f, &s, hops, n, where, &a, &b);
		if (rc) {
			free(copy);	/* not the flow's yet */
			break;
		}
		l = lane_index(m, m->f.ports[a].rail, m->f.ports[a].plane);
		rc = flow_push(m, a, b, l);
	}
	free(text);
	if (!rc && !m->nfl)
		rc = fs_err_usage("%s: no path in it (a line: h1 l1.0 s2 l2.0 h3)", o->paths);
	if (!rc) {
		struct mm_problem p = { m->f.nedges, m->f.cap, s.nflows, s.off, s.edge, s.share };

		m->exact = malloc(m->nfl * sizeof(*m->exact));
		m->spray_rate = malloc(m->nfl * sizeof(*m->spray_rate));
		if (!m->exact || !m->spray_rate || FS_ALLOC_GROW(m->tmp, 2 * m->nfl, m->tmp_alloc) ||
		    mm_solve(&p, m->exact))
			rc = fs_err_env("out of memory");
	}
	fab_shares_release(&s);
	if (!rc) {
		round_lines(m);
		rc = account(m, m->exact, 1);
	}
	if (!rc) {
		uint64_t rng = o->seed;

		rc = fab_solve(&m->f, m->src, m->dst, m->nfl, FAB_SPRAY, &rng, m->spray_rate);
		if (!rc)
			rc = account(m, m->spray_rate, 0);
	}
	m->rounds = 1;
	return rc;
}

/* a lane's ports, in the order 'fabscope run' numbers its nodes, and the incast's target among them */
struct lane_ports {
	size_t *port;
	int n, target;
};

/* every lane's ports: the plan's nodes (found among the hosts once each, by name), else every host */
static int lanes_ports(const struct model *m, const struct plan *pl, const char *target, struct lane_ports *lp)
{
	int from_plan = pl && pl->nnodes, nn = from_plan ? pl->nnodes : (int)m->f.nhosts, i;
	long *host = malloc((size_t)(nn ? nn : 1) * sizeof(*host)), th = target ? fab_host_index(&m->f, target) : -1;
	size_t l;

	if (!host)
		return fs_err_env("out of memory");
	for (i = 0; i < nn; i++)
		host[i] = from_plan ? fab_host_index(&m->f, pl->nodes[i].name) : i;
	for (l = 0; l < m->nlanes; l++) {
		struct plan_lane pln = { m->lanes[l].rail, m->lanes[l].plane };

		if (!(lp[l].port = malloc((size_t)(nn ? nn : 1) * sizeof(*lp[l].port)))) {
			free(host);
			return fs_err_env("out of memory");
		}
		for (i = 0; i < nn; i++) {
			long p = host[i] < 0 ? -1 : fab_port_of(&m->f, (size_t)host[i], pln.rail, pln.plane);

			if (p < 0 || (from_plan && !plan_node_ep(&pl->nodes[i], pln)))
				continue;
			if (host[i] == th)
				lp[l].target = lp[l].n;
			lp[l].port[lp[l].n++] = (size_t)p;
		}
	}
	free(host);
	return 0;
}

/* round r's flows of lane l into m */
static int lane_round(struct model *m, struct plan_phase *ph, const struct lane_ports *lp, size_t l, int r,
		      struct plan_pair *pairs)
{
	int n = lp->n, np, i, j, rc = 0;

	if (n < 2)
		return 0;
	if (ph->kind == PLAN_ALLTOALL) {
		for (i = 0; i < n && !rc; i++)
			for (j = 0; j < n && !rc; j++)
				if (i != j)
					rc = flow_push(m, lp->port[i], lp->port[j], l);
		return rc;
	}
	if (r >= plan_rounds(ph, n))
		return 0;
	np = plan_round_pairs(ph, n, r, lp->target, pairs);
	for (i = 0; i < np && !rc; i++)
		if (pairs[i].server >= 0 && pairs[i].client != pairs[i].server)
			rc = flow_push(m, lp->port[pairs[i].client], lp->port[pairs[i].server], l);
	return rc;
}

static int pattern_run(struct model *m, const struct model_opts *o, struct plan_phase *ph, const struct plan *pl)
{
	struct lane_ports *lp = calloc(m->nlanes ? m->nlanes : 1, sizeof(*lp));
	struct plan_pair *pairs = malloc((m->f.nhosts + 1) * sizeof(*pairs));
	int maxr = 0, r, rc = 0;
	size_t l;

	rc = lp && pairs ? lanes_ports(m, pl, ph->target, lp) : fs_err_env("out of memory");
	for (l = 0; !rc && l < m->nlanes; l++) {
		int nr = ph->kind == PLAN_ALLTOALL ? 1 : plan_rounds(ph, lp[l].n);

		maxr = nr > maxr ? nr : maxr;
	}
	for (r = 0; r < maxr && !rc; r++) {
		m->nfl = 0;
		for (l = 0; l < m->nlanes && !rc; l++)
			rc = lane_round(m, ph, &lp[l], l, r, pairs);
		if (!rc)
			rc = round_solve(m, o, (size_t)r);
	}
	m->rounds = (size_t)maxr;
	for (l = 0; lp && l < m->nlanes; l++)
		free(lp[l].port);
	free(lp);
	free(pairs);
	if (!rc && !m->all_spray.solves)
		rc = fs_err_usage("the pattern pairs no two hosts of one lane: nothing to model");
	return rc;
}

/* the 5th and 95th percentiles of the ECMP draws' aggregates: 0, or -1 (none, or no memory) */
static int agg_spread(const struct acc *a, double *p5, double *p95)
{
	double *v = a->naggs ? malloc(a->naggs * sizeof(*v)) : NULL;

	if (!v)
		return -1;
	memcpy(v, a->aggs, a->naggs * sizeof(*v));
	qsort(v, a->naggs, sizeof(*v), dbl_cmp);
	*p5 = pct(v, a->naggs, 5);
	*p95 = pct(v, a->naggs, 95);
	free(v);
	return 0;
}

static json_t *acc_json(const struct acc *a, int ecmp)
{
	double p5, p95;
	double k = a->solves ? (double)a->solves : 1;
	json_t *j = json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:f}", "flows", (json_int_t)a->flows,
			      "agg_gbps", a->agg / k, "line_gbps", a->line / k,
			      "frac_line", a->line > 0 ? a->agg / a->line : 0.0, "min_flow_gbps", a->minf / k,
			      "p5_flow_gbps", a->p5f / k, "jain", a->jain / k);

	if (ecmp && !agg_spread(a, &p5, &p95)) {
		json_object_set_new(j, "agg_p5_gbps", json_real(p5));
		json_object_set_new(j, "agg_p95_gbps", json_real(p95));
	}
	return j;
}

static void row(const char *name, const struct acc *s, const struct acc *e)
{
	double ks = s->solves ? (double)s->solves : 1, ke = e->solves ? (double)e->solves : 1;

	printf("%-10s %6zu %10.1f  %10.1f %5.2f %8.2f %5.3f  %10.1f %5.2f %8.2f %8.2f %5.3f\n", name, s->flows,
	       s->line / ks, s->agg / ks, s->line > 0 ? s->agg / s->line : 0, s->minf / ks, s->jain / ks,
	       e->agg / ke, e->line > 0 ? e->agg / e->line : 0, e->minf / ke, e->p5f / ke, e->jain / ke);
}

static int report(struct model *m, const struct model_opts *o, const char *what, const char *pattern)
{
	double p5, p95;
	size_t l;
	int exact = o->paths != NULL;

	if (o->json) {
		json_t *doc = json_object(), *lanes = json_array();

		json_object_set_new(doc, "topology", json_string(what));
		json_object_set_new(doc, "pattern", json_string(pattern));
		json_object_set_new(doc, "rounds", json_integer((json_int_t)m->rounds));
		json_object_set_new(doc, "ecmp", json_string(exact ? "paths" : "uniform"));
		if (!exact)
			json_object_set_new(doc, "samples", json_integer(m->draws));
		for (l = 0; l < m->nlanes; l++) {
			if (!m->lanes[l].spray.solves)
				continue;
			json_array_append_new(lanes, json_pack("{s:i, s:i, s:o, s:o}", "rail", m->lanes[l].rail,
							       "plane", m->lanes[l].plane,
							       "spray", acc_json(&m->lanes[l].spray, 0),
							       "ecmp", acc_json(&m->lanes[l].ecmp, 1)));
		}
		json_object_set_new(doc, "lanes", lanes);
		json_object_set_new(doc, "all", json_pack("{s:o, s:o}", "spray", acc_json(&m->all_spray, 0),
							  "ecmp", acc_json(&m->all_ecmp, 1)));
		if (exact) {
			json_t *fl = json_array();
			size_t i;

			for (i = 0; i < m->nfl; i++)
				json_array_append_new(fl, json_pack("{s:s, s:i, s:i, s:f, s:f}", "path", m->paths[i],
								    "rail", m->f.ports[m->src[i]].rail,
								    "plane", m->f.ports[m->src[i]].plane,
								    "ecmp_gbps", m->exact[i], "spray_gbps", m->spray_rate[i]));
			json_object_set_new(doc, "flows", fl);
		}
		if (json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(6)) || puts("") == EOF) {
			json_decref(doc);
			return fs_err_env("cannot write the output: %s", strerror(errno));
		}
		json_decref(doc);
		return 0;
	}
	printf("fabscope model: %s: %zu hosts, %zu switches; %s, %zu round%s%s\n", what, m->f.nhosts, m->f.nsw,
	       pattern, m->rounds, m->rounds == 1 ? "" : "s",
	       exact ? "; ECMP along the paths given" : "");
	printf("%-10s %6s %10s  %-32s  %s\n", "", "", "", "spray (equal split, Gb/s)",
	       exact ? "ECMP (the paths given, Gb/s)" : "ECMP (uniform hash, mean of draws, Gb/s)");
	printf("%-10s %6s %10s  %10s %5s %8s %5s  %10s %5s %8s %8s %5s\n", "lane", "flows", "line", "agg", "/line",
	       "slowest", "jain", "agg", "/line", "slowest", "p5 flow", "jain");
	for (l = 0; l < m->nlanes; l++) {
		char name[32];

		if (!m->lanes[l].spray.solves)
			continue;
		if (m->lanes[l].plane)
			snprintf(name, sizeof(name), "rail%d/%d", m->lanes[l].rail, m->lanes[l].plane);
		else
			snprintf(name, sizeof(name), "rail%d", m->lanes[l].rail);
		row(name, &m->lanes[l].spray, &m->lanes[l].ecmp);
	}
	row("all", &m->all_spray, &m->all_ecmp);
	if (!exact && !agg_spread(&m->all_ecmp, &p5, &p95)) {
		double line = m->all_ecmp.line / (double)m->all_ecmp.solves;

		printf("ECMP's aggregate over %zu draws: p5 %.1f, p95 %.1f Gb/s (%.2f to %.2f of line rate)\n",
		       m->all_ecmp.naggs, p5, p95, line > 0 ? p5 / line : 0, line > 0 ? p95 / line : 0);
	}
	if (exact) {
		size_t i;

		printf("\n%9s %9s  path\n", "ECMP", "spray");
		for (i = 0; i < m->nfl; i++)
			printf("%9.2f %9.2f  %s\n", m->exact[i], m->spray_rate[i], m->paths[i]);
	}
	return fflush(stdout) ? fs_err_env("cannot write the output: %s", strerror(errno)) : 0;
}

static void model_release(struct model *m)
{
	size_t i;

	for (i = 0; i < m->nlanes; i++) {
		free(m->lanes[i].spray.aggs);
		free(m->lanes[i].ecmp.aggs);
	}
	free(m->lanes);
	free(m->all_spray.aggs);
	free(m->all_ecmp.aggs);
	free(m->src);
	free(m->dst);
	free(m->lane);
	if (m->paths)
		for (i = 0; i < m->nfl; i++)
			free(m->paths[i]);
	free(m->paths);
	free(m->line_in);
	free(m->line_out);
	free(m->lane_off);
	free(m->fill);
	free(m->exact);
	free(m->spray_rate);
	free(m->tmp);
	free(m->seen_src);
	free(m->seen_dst);
	fab_release(&m->f);
}

/* the phase the pattern comes from: a plan's, or one made of --pattern */
static int pick_phase(const struct model_opts *o, struct plan *pl, struct plan_phase *mine, struct plan_phase **ph)
{
	int i, rc;

	if (o->plan) {
		const char *hf;

		if ((rc = plan_load(pl, o->plan)))
			return rc;
		for (i = 0; i < pl->nphases; i++)
			if (!o->phase || !strcmp(pl->phases[i].name, o->phase)) {
				if (!o->phase && (pl->phases[i].kind == PLAN_PING || pl->phases[i].kind == PLAN_TOPOLOGY ||
						  pl->phases[i].kind == PLAN_PFC))
					continue;
				*ph = &pl->phases[i];
				break;
			}
		if (!*ph)
			return fs_err_usage(o->phase ? "%s: no phase [%s]" : "%s: no phase with traffic to model",
					    o->plan, o->phase);
		hf = plan_global(pl, "hostfile", NULL);
		if (hf) {
			char path[4096];
			const char *slash = strrchr(o->plan, '/');

			if (hf[0] == '/' || !slash)
				snprintf(path, sizeof(path), "%s", hf);
			else
				snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - o->plan), o->plan, hf);
			if ((rc = plan_hostfile(pl, path, NULL)))
				return rc;
		}
		return 0;
	}
	memset(mine, 0, sizeof(*mine));
	mine->name = (char *)"model";
	mine->count = o->count;
	mine->seed = o->seed;
	mine->target = (char *)o->target;
	if (!strcmp(o->pattern, "permutation"))
		mine->kind = PLAN_PERMUTATION;
	else if (!strcmp(o->pattern, "pairwise"))
		mine->kind = PLAN_PAIRWISE;
	else if (!strcmp(o->pattern, "ring") || !strcmp(o->pattern, "allreduce"))
		mine->kind = PLAN_RING;
	else if (!strcmp(o->pattern, "bisection"))
		mine->kind = PLAN_BISECTION;
	else if (!strcmp(o->pattern, "incast"))
		mine->kind = PLAN_INCAST;
	else if (!strcmp(o->pattern, "polarization"))
		mine->kind = PLAN_POLARIZATION;
	else if (!strcmp(o->pattern, "alltoall"))
		mine->kind = PLAN_ALLTOALL;
	else
		return fs_err_usage("--pattern %s: give permutation, pairwise, ring, bisection, incast, polarization "
				    "or alltoall", o->pattern);
	*ph = mine;
	return 0;
}

int cmd_model(int argc, const char **argv)
{
	struct model_opts o = { .pattern = "permutation", .count = 1, .seed = 1,
				.sh = { .groups = 2, .hosts = 2, .rails = 1, .spines = 2, .pods = 1 } };
	const struct opt tab[] = {
		OPT_GROUP("the fabric"),
		OPT_STRING(0, "shape", &o.shape, "SHAPE", "make the fabric instead of reading one: leaf-spine (with "
			   "--pods, a 3-tier fat-tree), rail-only or dual-plane (hosts hI, leaves lG.R, spines sK, "
			   "superspines xX)"),
		OPT_NUMBER(0, "speed", &o.speed, "GBPS", "the speed of every cable without speed= (with --shape: of "
			   "every cable)"),
		OPT_NUMBER(0, "uplink-speed", &o.sh.uplink_gbps, "GBPS", "--shape: the speed of the cables between "
			   "switches (default --speed; less oversubscribes the leaves)"),
		OPT_INT('G', "groups", &o.sh.groups, "N", "--shape: host groups, a leaf a rail each (default 2)", 1, 100000),
		OPT_INT('H', "hosts", &o.sh.hosts, "N", "--shape: hosts a group (default 2)", 1, 100000),
		OPT_INT('R', "rails", &o.sh.rails, "N", "--shape: NICs a host, one a rail (default 1)", 1, 64),
		OPT_INT('S', "spines", &o.sh.spines, "N", "--shape: spines a pod, or a rail with rail-only (default 2)",
			1, 4096),
		OPT_INT('P', "pods", &o.sh.pods, "N", "--shape: pods, each with its own spines (default 1)", 1, 4096),
		OPT_INT('X', "superspines", &o.sh.supers, "N", "--shape: superspines joining the pods", 0, 4096),
		OPT_GROUP("the traffic"),
		OPT_STRING(0, "pattern", &o.pattern, "KIND", "permutation (default), pairwise, ring, bisection, incast, "
			   "polarization or alltoall, paired as a plan phase of that kind"),
		OPT_INT(0, "count", &o.count, "N", "permutation: rounds (default 1)", 1, 100000),
		OPT_COUNT(0, "seed", &o.seed, "N", "permutation: the plan's seed (default 1); also the ECMP draws'", 0, 0),
		OPT_STRING(0, "target", &o.target, "NODE", "incast: the receiving host (default the first)"),
		OPT_FILE(0, "plan", &o.plan, "FILE", "the pattern of a plan's phase, its nodes in its hostfile's order"),
		OPT_STRING(0, "phase", &o.phase, "NAME", "--plan: the phase (default the first with traffic)"),
		OPT_FILE(0, "paths", &o.paths, "FILE", "the flows as the paths they took, a line each (h1 l1.0 s2 l2.0 h3)"),
		OPT_GROUP("the model"),
		OPT_INT(0, "samples", &o.samples, "N", "ECMP: draws of every flow's path (default: 200 a round, fewer for "
			"more than 1,000 flows, at least 5)", 1, 100000),
		OPT_BOOL(0, "json", &o.json, "one JSON document: per lane, spray and ecmp"),
		OPT_END(),
	};
	struct model m;
	struct topo t;
	struct plan pl;
	struct plan_phase mine, *ph = NULL;
	char what[600], pattern[300];
	int nargs = 0, rc;

	rc = opts_parse(argc, argv, tab, model_usage, model_about, &nargs);
	if (rc == OPTS_HELP)
		return 0;
	if (rc)
		return -rc;
	if ((nargs != 1 && !o.shape) || (nargs && o.shape)) {
		fs_err_usage(o.shape ? "--shape makes the fabric: give no topology file" :
			     "give the topology file (or --shape)");
		opts_usage_short(model_usage);
		return FS_EXIT_USAGE;
	}
	if (o.paths && o.plan)
		return -fs_err_usage("--paths and --plan: give one");
	memset(&m, 0, sizeof(m));
	memset(&pl, 0, sizeof(pl));
	topo_init(&t);
	if (o.shape) {
		o.sh.shape = o.shape;
		o.sh.gbps = o.speed;
		rc = shape_make(&t, &o.sh);
		snprintf(what, sizeof(what), "%s %dx%d hosts, %d rail%s, %d spine%s%s", o.shape, o.sh.groups, o.sh.hosts,
			 o.sh.rails, o.sh.rails > 1 ? "s" : "", o.sh.spines, o.sh.spines > 1 ? "s" : "",
			 o.sh.pods > 1 ? " a pod" : "");
	} else {
		rc = topo_read(&t, argv[0], NULL);
		snprintf(what, sizeof(what), "%s", argv[0]);
	}
	if (!rc)
		rc = fab_build(&m.f, &t, o.speed);
	if (!rc && !m.f.nports)
		rc = fs_err_usage("%s: no host port (a cable from a node to a switch): nothing to model", what);
	if (!rc)
		rc = lanes_from_ports(&m);
	if (!rc) {
		m.seen_src = calloc(m.f.nports, sizeof(*m.seen_src));
		m.seen_dst = calloc(m.f.nports, sizeof(*m.seen_dst));
		m.line_in = calloc(m.nlanes + 1, sizeof(*m.line_in));
		m.line_out = calloc(m.nlanes + 1, sizeof(*m.line_out));
		m.lane_off = calloc(m.nlanes + 2, sizeof(*m.lane_off));
		m.fill = calloc(m.nlanes + 1, sizeof(*m.fill));
		if (!m.seen_src || !m.seen_dst || !m.line_in || !m.line_out || !m.lane_off || !m.fill)
			rc = fs_err_env("out of memory");
	}
	if (!rc && o.paths) {
		rc = paths_run(&m, &o);
		snprintf(pattern, sizeof(pattern), "%zu flows from %s", m.nfl, o.paths);
	} else if (!rc) {
		rc = pick_phase(&o, &pl, &mine, &ph);
		if (!rc) {
			char seed[64] = "";

			if (ph->kind == PLAN_PERMUTATION)
				snprintf(seed, sizeof(seed), ", seed %llu", (unsigned long long)ph->seed);
			if (o.plan)
				snprintf(pattern, sizeof(pattern), "[%s] (%s%s)", ph->name, plan_kind_name(ph->kind), seed);
			else
				snprintf(pattern, sizeof(pattern), "%s%s", plan_kind_name(ph->kind), seed);
			rc = pattern_run(&m, &o, ph, &pl);
		}
	}
	if (!rc)
		rc = report(&m, &o, what, pattern);
	model_release(&m);
	topo_release(&t);
	if (o.plan)
		plan_release(&pl);
	return -rc;
}
