/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tool localize-sim: the monitor's localization (monitor/analyze.h) on
 * a simulated fabric, fault after fault (bench/localize-bench.sh).
 *
 *   localize-sim [--groups G] [--hosts H] [--rails R] [--spines S] [--peers P] [--buckets B]
 *                [--width W] [--probes N] [--trials T] [--seed X] [--k K] [--candidates]
 *                [--noise P0] [--busy FRAC] [--busy-loss P] [--loss LO:HI] [--text FILE]
 *
 * The fabric is `fabscope model`'s leaf-spine (model/shape.h): G leaf groups
 * of H hosts, R rails (a leaf per group and rail), S spines every leaf is
 * cabled to.  Every host probes, on every rail, each host of its own leaf
 * (one bucket) and P hosts of other leaves drawn at random (B buckets each,
 * W source ports a bucket): the groups of the agents' /metrics.  Each probe
 * is routed as ECMP routes it: at every switch, among its next hops towards
 * the destination leaf, by a hash of the 5-tuple and a seed per switch; the
 * answer comes back on the path of its own 5-tuple.  The tracer the analyzer
 * is given answers from the same routing (what a Paris traceroute of the
 * 5-tuple would show); --candidates gives it none.
 *
 * Per interval each group sends N probes, spread evenly over its W ports;
 * a probe is lost with probability P0 (noise anywhere), plus busy-loss when
 * its prober or responder is one of the busy hosts (a fraction FRAC of them,
 * drawn per trial: host noise on every lane), plus the fault's loss (drawn
 * per trial in [LO, HI]) when it crosses the faulty element.  A trial is K
 * healthy intervals, K with one fault (a random direction of a random
 * leaf-spine cable, or a random NIC port, one or the other with even odds),
 * K healthy again; the verdicts start afresh each trial.
 *
 * Output: a line per trial (the fault, what was named when), then the
 * totals: named link and NIC verdicts that were the fault (true) or not
 * (false: in any interval), faults named within their K intervals
 * (recall), faults cleared within K healthy intervals, host verdicts, and
 * the analysis's time per interval (mean, max; the simulation's own time
 * not counted).  Exit 0.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/alloc.h"
#include "../../core/clock.h"
#include "../../core/error.h"
#include "../../model/fabric.h"
#include "../../model/shape.h"
#include "../../monitor/analyze.h"
#include "../../monitor/scrape.h"
#include "test-tool.h"

#define SIM_DPORT 4791

struct sim {
	struct shape_opts so;
	int peers, buckets, width, probes, trials, k, candidates;
	uint64_t seed;
	double noise, busy_frac, busy_loss, lo, hi;
	const char *topology, *write_dir, *busy_host;
	int intervals, fault_from, fault_to, parse_time;
	const char *fault_spec[4];
	int nfaults;
	struct topo t;
	struct mon_analyzer a;
	int *dist;			/* [leaf index][switch]: hops to that leaf */
	int *leaf_ix;			/* switch -> leaf index, -1 */
	int nleaves;
	struct mon_group *g;
	uint32_t *pa, *pb;		/* per group: the NIC ports */
	size_t ng, g_alloc, pa_alloc, pb_alloc, eoff_alloc;
	uint32_t *edge;			/* per group, per port: its edges forward then back */
	size_t *eoff;			/* group i, port j: edge[eoff[i * W + j] .. eoff[i * W + j + 1]) */
	size_t nedge, edge_alloc;
	double *busy;			/* per host: its extra loss this trial */
	unsigned char *hit;		/* per group: crosses the fault */
	double *cum_sent, *cum_lost;	/* --write: per group, the counters so far */
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static double urand(uint64_t *s)
{
	return ((fab_rand(s) >> 11) + 1) * (1.0 / 9007199254740993.0);	/* (0, 1] */
}

/* losses among n probes each lost with probability q (geometric skips) */
static double draw_lost(uint64_t *rng, double n, double q)
{
	double pos = 0, k = 0, lq;

	if (q <= 0 || n <= 0)
		return 0;
	if (q >= 1)
		return n;
	lq = log1p(-q);
	for (;;) {
		pos += floor(log(urand(rng)) / lq) + 1;
		if (pos > n)
			return k;
		k++;
	}
}

/* the path of a 5-tuple from leaf a to leaf b: switches into hop[], edges appended to s->edge */
static int route(struct sim *s, int a, int b, uint64_t tuple, uint32_t *hop, int *nhop, int keep)
{
	const struct loc_net *n = &s->a.net;
	const int *d = s->dist + (size_t)s->leaf_ix[b] * n->nsw;
	int u = a, nh = 0;

	hop[nh++] = (uint32_t)u;
	while (u != b) {
		size_t i, cnt = 0, pick;

		for (i = n->adj_off[u]; i < n->adj_off[u + 1]; i++)
			cnt += d[n->adj[i].v] == d[u] - 1;
		if (!cnt || nh >= MON_MAX_HOPS)
			return -1;
		pick = mix64(tuple ^ mix64((uint64_t)u + s->seed)) % cnt;
		for (i = n->adj_off[u]; i < n->adj_off[u + 1]; i++)
			if (d[n->adj[i].v] == d[u] - 1 && !pick--)
				break;
		if (keep) {
			if (FS_ALLOC_GROW(s->edge, s->nedge + 1, s->edge_alloc))
				return -1;
			s->edge[s->nedge++] = n->adj[i].edge;
		}
		u = (int)n->adj[i].v;
		hop[nh++] = (uint32_t)u;
	}
	*nhop = nh;
	return 0;
}

static uint64_t tuple_of(uint32_t from, uint32_t to, int sport, int dport)
{
	return mix64(((uint64_t)from << 32 | to) ^ mix64((uint64_t)sport << 16 | (uint64_t)dport) ^ 17);
}

/* the tracer: the same routing */
static int sim_trace(void *ctx, const struct loc_net *n, const struct mon_group *g, uint32_t pa, uint32_t pb,
		     int sport0, int nports, uint32_t (*fwd)[MON_MAX_HOPS], int *nfwd, uint32_t (*rev)[MON_MAX_HOPS],
		     int *nrev)
{
	struct sim *s = ctx;
	int i, la = n->ports[pa].leaf, lb = n->ports[pb].leaf;

	for (i = 0; i < nports; i++)
		if (route(s, la, lb, tuple_of(pa, pb, sport0 + i, SIM_DPORT), fwd[i], &nfwd[i], 0) ||
		    route(s, lb, la, tuple_of(pb, pa, SIM_DPORT, sport0 + i), rev[i], &nrev[i], 0))
			return 1;
	return 0;
}

static int add_group(struct sim *s, uint32_t pa, uint32_t pb, int bucket)
{
	const struct loc_net *n = &s->a.net;
	uint32_t hop[MON_MAX_HOPS];
	int j, nh, la = n->ports[pa].leaf, lb = n->ports[pb].leaf;

	if (FS_ALLOC_GROW(s->g, s->ng + 1, s->g_alloc) || FS_ALLOC_GROW(s->pa, s->ng + 1, s->pa_alloc) ||
	    FS_ALLOC_GROW(s->pb, s->ng + 1, s->pb_alloc) ||
	    FS_ALLOC_GROW(s->eoff, (s->ng + 1) * s->width + 1, s->eoff_alloc))
		return -1;
	s->g[s->ng] = (struct mon_group){ n->hosts[n->ports[pa].host], n->hosts[n->ports[pb].host],
					  n->ports[pa].rail, n->ports[pa].plane, bucket, 0, 0, 0 };
	s->pa[s->ng] = pa;
	s->pb[s->ng] = pb;
	for (j = 0; j < s->width; j++) {
		int sport = s->a.sport_base + bucket * s->width + j;

		s->eoff[s->ng * s->width + j] = s->nedge;
		if (la != lb && (route(s, la, lb, tuple_of(pa, pb, sport, SIM_DPORT), hop, &nh, 1) ||
				 route(s, lb, la, tuple_of(pb, pa, SIM_DPORT, sport), hop, &nh, 1)))
			return -1;
	}
	s->ng++;
	s->eoff[s->ng * s->width] = s->nedge;
	return 0;
}

/* the peers of every host on every rail: its leaf, and peers hosts of other leaves */
static int make_groups(struct sim *s)
{
	const struct loc_net *n = &s->a.net;
	uint64_t rng = s->seed ^ 0x5eed;
	size_t pa, pb;
	int i, b;

	for (pa = 0; pa < n->nports; pa++) {
		for (pb = 0; pb < n->nports; pb++)
			if (pb != pa && n->ports[pb].leaf == n->ports[pa].leaf && add_group(s, (uint32_t)pa, (uint32_t)pb, 0))
				return -1;
		for (i = 0; i < s->peers; i++) {
			size_t h;
			long q;

			do {
				h = fab_rand(&rng) % n->nhosts;
				q = loc_port_of(n, h, n->ports[pa].rail, n->ports[pa].plane);
			} while (q < 0 || n->ports[q].leaf == n->ports[pa].leaf);
			for (b = 0; b < s->buckets; b++)
				if (add_group(s, (uint32_t)pa, (uint32_t)q, b))
					return -1;
		}
	}
	return 0;
}

static int sim_setup(struct sim *s)
{
	struct loc_opts lo = LOC_OPTS_INIT;
	const struct loc_net *n;
	size_t i, l;
	int rc;

	lo.k = s->k;
	topo_init(&s->t);
	if (s->topology)
		rc = topo_read(&s->t, s->topology, NULL);
	else
		rc = shape_make(&s->t, &s->so);
	if (rc || (rc = mon_analyzer_init(&s->a, &s->t, &lo, 49152, s->width)))
		return rc;
	n = &s->a.net;
	if (!s->candidates)
		s->a.tracer = (struct mon_tracer){ sim_trace, s };
	s->a.max_traces = 1 << 20;
	s->leaf_ix = malloc(n->nsw * sizeof(*s->leaf_ix));
	for (i = 0; i < n->nsw; i++)
		s->leaf_ix[i] = s->t.sw[i].tier == TOPO_LEAF ? s->nleaves++ : -1;
	s->dist = malloc((size_t)s->nleaves * n->nsw * sizeof(*s->dist));
	if (!s->leaf_ix || !s->dist)
		return -FS_EXIT_ENV;
	for (i = 0, l = 0; i < n->nsw; i++) {
		if (s->leaf_ix[i] < 0)
			continue;
		/* distances to leaf i: a breadth-first search */
		int *d = s->dist + l++ * n->nsw;
		uint32_t *q = malloc(n->nsw * sizeof(*q));
		size_t qh = 0, qt = 0, j;

		if (!q)
			return -FS_EXIT_ENV;
		for (j = 0; j < n->nsw; j++)
			d[j] = -1;
		d[i] = 0;
		q[qt++] = (uint32_t)i;
		while (qh < qt) {
			uint32_t u = q[qh++];

			for (j = n->adj_off[u]; j < n->adj_off[u + 1]; j++)
				if (d[n->adj[j].v] < 0) {
					d[n->adj[j].v] = d[u] + 1;
					q[qt++] = n->adj[j].v;
				}
		}
		free(q);
	}
	if (make_groups(s))
		return -FS_EXIT_ENV;
	s->busy = calloc(n->nhosts, sizeof(*s->busy));
	s->hit = calloc(s->ng, 1);
	return s->busy && s->hit ? 0 : -FS_EXIT_ENV;
}

/* one interval's counts, with the faults fault[0 .. nf) dropping loss of what crosses them */
static void sim_interval(struct sim *s, uint64_t *rng, const uint32_t *fault, int nf, double loss)
{
	const struct loc_net *n = &s->a.net;
	double per = (double)s->probes / s->width;
	size_t i;
	int j, f;

	for (i = 0; i < s->ng; i++) {
		struct mon_group *g = &s->g[i];
		double q = s->noise + s->busy[n->ports[s->pa[i]].host] + s->busy[n->ports[s->pb[i]].host];
		int links = 0;

		for (f = 0; f < nf; f++) {
			if (fault[f] == n->nic0 + s->pa[i] || fault[f] == n->nic0 + s->pb[i])
				q += loss;
			links |= fault[f] < n->nic0;
		}
		g->sent = s->probes;
		g->slow = 0;
		if (!links || !s->hit[i]) {
			g->lost = draw_lost(rng, g->sent, q);
			continue;
		}
		g->lost = 0;
		for (j = 0; j < s->width; j++) {
			size_t e, b = s->eoff[i * s->width + j], end = s->eoff[i * s->width + j + 1];
			double qj = q;

			for (e = b; e < end; e++)
				for (f = 0; f < nf; f++)
					if (s->edge[e] == fault[f])
						qj += loss;
			g->lost += draw_lost(rng, per, qj);
		}
	}
}

/* which groups cross one of the link faults */
static void sim_hits(struct sim *s, const uint32_t *fault, int nf)
{
	size_t g, e;
	int f;

	for (g = 0; g < s->ng; g++) {
		s->hit[g] = 0;
		for (e = s->eoff[g * s->width]; e < s->eoff[(g + 1) * s->width]; e++)
			for (f = 0; f < nf; f++)
				s->hit[g] |= fault[f] < s->a.net.nic0 && s->edge[e] == fault[f];
	}
}

/* this process's CPU time: the analysis's own, whatever else the machine runs */
static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct sim_tally {
	long tp, fp, recalled, cleared, hosts, intervals;
	double t_sum, t_max, cpu_sum, cpu_max;
	char marks[16];		/* the trial's fault intervals: fault_mark's */
};

/* what the vote made of the fault this interval: S a suspect, I inconclusive (with alternatives, or
 * one of another's), - neither */
static char fault_mark(const struct sim *s, uint32_t fault)
{
	const struct loc_vote *v = &s->a.vote;
	size_t i;
	int j;

	for (i = 0; i < v->ns; i++) {
		if (v->s[i].elem == fault)
			return v->s[i].nalts ? 'I' : 'S';
		for (j = 0; j < v->s[i].nalts; j++)
			if (v->s[i].alts[j] == fault)
				return 'I';
	}
	return '-';
}

static int run_interval(struct sim *s, struct sim_tally *y, uint32_t fault, int phase, int *named_at, int i)
{
	const struct loc_net *n = &s->a.net;
	uint64_t t0 = clock_ns(), c0 = cpu_ns();
	double dt, dc;
	size_t c;
	int rc = mon_analyze_interval(&s->a, s->g, s->ng);

	if (rc)
		return rc;
	dt = (clock_ns() - t0) / 1e9;
	dc = (cpu_ns() - c0) / 1e9;
	y->cpu_sum += dc;
	y->cpu_max = dc > y->cpu_max ? dc : y->cpu_max;
	y->t_sum += dt;
	y->t_max = dt > y->t_max ? dt : y->t_max;
	y->intervals++;
	if (phase == 1 && i - s->k < (int)sizeof(y->marks) - 1)
		y->marks[i - s->k] = fault_mark(s, fault);
	if (phase == 1 && getenv("SIM_DEBUG")) {
		const struct loc_vote *v = &s->a.vote;

		fprintf(stderr, "interval %d: fault O %.2f E %.2f X %.0f p0 %.2e suspects %zu failing %ld\n", i,
			v->o[fault], v->e[fault], v->x[fault], v->p0, v->ns, v->failing);
	}
	for (c = 0; c < s->a.track.nch; c++) {
		const struct loc_change *ch = &s->a.track.ch[c];
		char name[300];

		if (!ch->named)
			continue;
		if (ch->elem >= n->host0) {
			y->hosts++;
			continue;
		}
		loc_elem_name(n, ch->elem, name, sizeof(name));
		if (ch->elem == fault && phase >= 1) {
			y->tp++;
			if (phase == 1 && *named_at < 0)
				*named_at = i;
		} else {
			y->fp++;
			printf("  false: %s (phase %d interval %d, score %.1f)\n", name, phase, i, ch->why.score);
		}
	}
	return 0;
}

static uint32_t draw_fault(struct sim *s, uint64_t *rng)
{
	const struct loc_net *n = &s->a.net;

	if (fab_rand(rng) & 1)
		return n->nic0 + (uint32_t)(fab_rand(rng) % n->nports);
	for (;;) {
		size_t c = fab_rand(rng) % n->ncables;
		const struct topo_link *l = &s->t.ln[c];

		if (l->a.sw >= 0 && l->b.sw >= 0)
			return (uint32_t)(2 * c + (fab_rand(rng) & 1));
	}
}

static int run_trial(struct sim *s, struct sim_tally *y, uint64_t *rng, int trial)
{
	const struct loc_net *n = &s->a.net;
	uint32_t fault = draw_fault(s, rng);
	double loss = s->lo + (s->hi - s->lo) * urand(rng);
	int i, rc, named_at = -1, cleared = 0;
	char name[300];
	size_t h;

	loc_track_release(&s->a.track);
	if ((rc = loc_track_init(&s->a.track, n->nelems)))
		return rc;
	memset(y->marks, 0, sizeof(y->marks));
	for (h = 0; h < n->nhosts; h++)
		s->busy[h] = urand(rng) < s->busy_frac ? s->busy_loss : 0;
	sim_hits(s, &fault, 1);
	for (i = 0; i < 3 * s->k; i++) {
		int phase = i / s->k;

		sim_interval(s, rng, &fault, phase == 1, loss);
		if ((rc = run_interval(s, y, fault, phase, &named_at, i)))
			return rc;
	}
	cleared = named_at >= 0 && !s->a.track.el[fault].named;
	y->recalled += named_at >= 0;
	y->cleared += cleared;
	loc_elem_name(n, fault, name, sizeof(name));
	printf("trial %d: %s loss %.2f%%: %s (%s)\n", trial, name, 100 * loss, named_at >= 0 ? "named" : "not named",
	       y->marks);
	return 0;
}

/* "link:FROM:TO" or "nic:NODE:RAIL" into its element */
static int parse_fault(struct sim *s, const char *spec, uint32_t *el)
{
	const struct loc_net *n = &s->a.net;
	char a[128], b[128];
	int rail, u, v;
	long h, p, e;

	if (sscanf(spec, "link:%127[^:]:%127s", a, b) == 2) {
		if ((u = topo_switch_index(&s->t, a)) < 0 || (v = topo_switch_index(&s->t, b)) < 0 ||
		    (e = loc_edge(n, (uint32_t)u, (uint32_t)v)) < 0)
			return usage_error("--fault %s: no cable from %s to %s", spec, a, b);
		*el = (uint32_t)e;
		return 0;
	}
	if (sscanf(spec, "nic:%127[^:]:%d", a, &rail) == 2) {
		if ((h = loc_host(n, a)) < 0 || (p = loc_port_of(n, (size_t)h, rail, 0)) < 0)
			return usage_error("--fault %s: no NIC port of %s on rail %d", spec, a, rail);
		*el = n->nic0 + (uint32_t)p;
		return 0;
	}
	return usage_error("--fault %s: give link:FROM:TO or nic:NODE:RAIL", spec);
}

static void group_labels(char *buf, size_t len, const struct sim *s, size_t i)
{
	const struct mon_group *g = &s->g[i];

	snprintf(buf, len, "node=\"%s\",peer=\"%s\",rail=\"%d\",plane=\"%d\",sport_bucket=\"%d\"", g->node, g->peer,
		 g->rail, g->plane, g->bucket);
}

/* the /metrics of one agent: the groups [g0, g1), with counters sent[] and lost[] */
static void write_agent(FILE *f, const struct sim *s, size_t g0, size_t g1, const double *sent, const double *lost)
{
	static const char *const le[] = { "0.0001", "0.001", "0.01", "+Inf" };
	char l[512];
	size_t i;
	int b;

	fprintf(f, "# HELP fabscope_probe_sent_total Probes sent.\n# TYPE fabscope_probe_sent_total counter\n");
	for (i = g0; i < g1; i++) {
		group_labels(l, sizeof(l), s, i);
		fprintf(f, "fabscope_probe_sent_total{%s} %.0f\n", l, sent[i]);
	}
	fprintf(f, "# HELP fabscope_probe_lost_total Probes not answered.\n# TYPE fabscope_probe_lost_total counter\n");
	for (i = g0; i < g1; i++) {
		group_labels(l, sizeof(l), s, i);
		fprintf(f, "fabscope_probe_lost_total{%s} %.0f\n", l, lost[i]);
	}
	fprintf(f, "# HELP fabscope_probe_rtt_seconds Round-trip times.\n# TYPE fabscope_probe_rtt_seconds histogram\n");
	for (i = g0; i < g1; i++) {
		double ok = sent[i] - lost[i];

		group_labels(l, sizeof(l), s, i);
		for (b = 0; b < 4; b++)
			fprintf(f, "fabscope_probe_rtt_seconds_bucket{%s,le=\"%s\"} %.0f\n", l, le[b], b ? ok : 0);
		fprintf(f, "fabscope_probe_rtt_seconds_sum{%s} %g\nfabscope_probe_rtt_seconds_count{%s} %.0f\n", l,
			ok * 0.0003, l, ok);
	}
}

/* every agent's /metrics, one after another: the groups are by prober */
static void write_all(FILE *f, const struct sim *s, const double *sent, const double *lost,
		      void (*each)(void *ctx, FILE *f), void *ctx)
{
	const struct loc_net *n = &s->a.net;
	size_t g0 = 0, g1;

	while (g0 < s->ng) {
		uint32_t h = n->ports[s->pa[g0]].host;

		for (g1 = g0; g1 < s->ng && n->ports[s->pa[g1]].host == h; g1++)
			;
		write_agent(f, s, g0, g1, sent, lost);
		if (each)
			each(ctx, f);
		g0 = g1;
	}
}

static int write_file(struct sim *s, const char *name, int paths)
{
	char path[4096];
	FILE *f;
	size_t i;
	int j, k, nf, nr;

	snprintf(path, sizeof(path), "%s/%s", s->write_dir, name);
	if (!(f = fopen(path, "w")))
		return -fs_err_env("unable to write %s", path);
	for (i = 0; paths && i < s->ng; i++) {
		const struct loc_net *n = &s->a.net;
		int la = n->ports[s->pa[i]].leaf, lb = n->ports[s->pb[i]].leaf;

		for (j = 0; j < s->width && la != lb; j++) {
			int sport = s->a.sport_base + s->g[i].bucket * s->width + j;
			uint32_t fw[MON_MAX_HOPS], rv[MON_MAX_HOPS];

			route(s, la, lb, tuple_of(s->pa[i], s->pb[i], sport, SIM_DPORT), fw, &nf, 0);
			route(s, lb, la, tuple_of(s->pb[i], s->pa[i], SIM_DPORT, sport), rv, &nr, 0);
			fprintf(f, "{\"node\":\"%s\",\"peer\":\"%s\",\"rail\":%d,\"plane\":%d,\"sport\":%d,\"fwd\":[",
				s->g[i].node, s->g[i].peer, s->g[i].rail, s->g[i].plane, sport);
			for (k = 0; k < nf; k++)
				fprintf(f, "%s\"%s\"", k ? "," : "", s->t.sw[fw[k]].name);
			fprintf(f, "],\"rev\":[");
			for (k = 0; k < nr; k++)
				fprintf(f, "%s\"%s\"", k ? "," : "", s->t.sw[rv[k]].name);
			fprintf(f, "]}\n");
		}
	}
	if (!paths)
		write_all(f, s, s->cum_sent, s->cum_lost, NULL, NULL);
	return fclose(f) ? -fs_err_env("unable to write %s", path) : 0;
}

/* DIR/design.topo: the fabric, as fabscope-topology(5) writes it */
static int write_design(struct sim *s)
{
	char path[4096];
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/design.topo", s->write_dir);
	if (!(f = fopen(path, "w")))
		return -fs_err_env("unable to write %s", path);
	rc = topo_write(&s->t, f);
	return fclose(f) || rc ? -fs_err_env("unable to write %s", path) : 0;
}

/* --write DIR: a scenario's scrapes and traced paths (and the design), for fabscope monitor analyze --replay */
static int sim_write(struct sim *s, uint64_t *rng)
{
	const struct loc_net *n = &s->a.net;
	uint32_t fault[4];
	char name[64];
	int i, rc, f;
	size_t g;
	long h;

	for (f = 0; f < s->nfaults; f++)
		if ((rc = parse_fault(s, s->fault_spec[f], &fault[f])))
			return rc;
	for (g = 0; g < n->nhosts; g++)
		s->busy[g] = urand(rng) < s->busy_frac ? s->busy_loss : 0;
	if (s->busy_host) {
		if ((h = loc_host(n, s->busy_host)) < 0)
			return usage_error("--busy-host %s: no such node", s->busy_host);
		s->busy[h] = s->busy_loss;
	}
	sim_hits(s, fault, s->nfaults);
	s->cum_sent = calloc(s->ng + 1, sizeof(double));
	s->cum_lost = calloc(s->ng + 1, sizeof(double));
	if (!s->cum_sent || !s->cum_lost)
		return -FS_EXIT_ENV;
	if ((rc = write_file(s, "paths.jsonl", 1)) || (rc = write_file(s, "scrape-00.prom", 0)) ||
	    (rc = write_design(s)))
		return rc;
	for (i = 0; i < s->intervals; i++) {
		int on = i >= s->fault_from && i < s->fault_to;

		sim_interval(s, rng, fault, on ? s->nfaults : 0, s->lo);
		for (g = 0; g < s->ng; g++) {
			s->cum_sent[g] += s->g[g].sent;
			s->cum_lost[g] += s->g[g].lost;
		}
		snprintf(name, sizeof(name), "scrape-%02d.prom", i + 1);
		if ((rc = write_file(s, name, 0)))
			return rc;
	}
	return 0;
}

struct parse_clock {
	struct scrape *sc;
	char **buf;
	size_t *len;
	double secs, cpu, bytes;
	long agents;
	int rc;
};

/* an agent's body written: read it as the analyzer would, timed */
static void parse_each(void *ctx, FILE *f)
{
	struct parse_clock *pc = ctx;
	uint64_t t0, c0;

	fflush(f);
	t0 = clock_ns();
	c0 = cpu_ns();
	if (!pc->rc)
		pc->rc = scrape_body(pc->sc, "agent", *pc->buf, *pc->len);
	pc->secs += (clock_ns() - t0) / 1e9;
	pc->cpu += (cpu_ns() - c0) / 1e9;
	pc->bytes += (double)*pc->len;
	pc->agents++;
	rewind(f);
}

/* --parse-time: one interval's /metrics of every agent, read by scrape.h */
static int sim_parse_time(struct sim *s, uint64_t *rng)
{
	struct scrape sc;
	struct parse_clock pc = { &sc, NULL, NULL, 0, 0, 0, 0, 0 };
	char *buf = NULL;
	size_t len = 0, i;
	double *sent = calloc(s->ng + 1, sizeof(double)), *lost = calloc(s->ng + 1, sizeof(double));
	FILE *f = open_memstream(&buf, &len);

	if (!sent || !lost || !f)
		return -FS_EXIT_ENV;
	sim_interval(s, rng, NULL, 0, 0);
	for (i = 0; i < s->ng; i++) {
		sent[i] = s->g[i].sent * 1000;
		lost[i] = s->g[i].lost;
	}
	pc.buf = &buf;
	pc.len = &len;
	scrape_init(&sc, &s->a.net, 0.001, (size_t)1 << 30);
	scrape_begin(&sc);
	write_all(f, s, sent, lost, parse_each, &pc);
	fclose(f);
	free(buf);
	printf("parse: %ld agents' /metrics, %.0f MB, read in %.2f s, cpu %.2f s (%zu probe groups)\n", pc.agents,
	       pc.bytes / 1e6, pc.secs, pc.cpu, sc.ng);
	scrape_release(&sc);
	free(sent);
	free(lost);
	return pc.rc ? -pc.rc : 0;
}

static int sim_args(struct sim *s, int argc, const char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(o, "--candidates") || !strcmp(o, "--parse-time")) {
			*(o[2] == 'c' ? &s->candidates : &s->parse_time) = 1;
			continue;
		}
		if (!v)
			return usage_error("%s needs a value", o);
		i++;
		if (!strcmp(o, "--groups")) s->so.groups = atoi(v);
		else if (!strcmp(o, "--hosts")) s->so.hosts = atoi(v);
		else if (!strcmp(o, "--rails")) s->so.rails = atoi(v);
		else if (!strcmp(o, "--spines")) s->so.spines = atoi(v);
		else if (!strcmp(o, "--peers")) s->peers = atoi(v);
		else if (!strcmp(o, "--buckets")) s->buckets = atoi(v);
		else if (!strcmp(o, "--width")) s->width = atoi(v);
		else if (!strcmp(o, "--probes")) s->probes = atoi(v);
		else if (!strcmp(o, "--trials")) s->trials = atoi(v);
		else if (!strcmp(o, "--k")) s->k = atoi(v);
		else if (!strcmp(o, "--seed")) s->seed = strtoull(v, NULL, 10);
		else if (!strcmp(o, "--noise")) s->noise = atof(v);
		else if (!strcmp(o, "--busy")) s->busy_frac = atof(v);
		else if (!strcmp(o, "--busy-loss")) s->busy_loss = atof(v);
		else if (!strcmp(o, "--topology")) s->topology = v;
		else if (!strcmp(o, "--write")) s->write_dir = v;
		else if (!strcmp(o, "--intervals")) s->intervals = atoi(v);
		else if (!strcmp(o, "--fault-from")) s->fault_from = atoi(v);
		else if (!strcmp(o, "--fault-to")) s->fault_to = atoi(v);
		else if (!strcmp(o, "--busy-host")) s->busy_host = v;
		else if (!strcmp(o, "--fault")) {
			if (s->nfaults == 4)
				return usage_error("at most 4 --fault");
			s->fault_spec[s->nfaults++] = v;
		}
		else if (!strcmp(o, "--loss")) {
			if (sscanf(v, "%lf:%lf", &s->lo, &s->hi) != 2 || s->lo <= 0 || s->hi < s->lo)
				return usage_error("--loss LO:HI, e.g. 0.01:0.02");
		} else
			return usage_error("unknown option '%s'", o);
	}
	if (s->width < 1 || s->width > MON_MAX_TRACE_PORTS || s->probes < s->width || s->k < 1 || s->trials < 1)
		return usage_error("--width 1..%d, --probes at least --width, --k and --trials at least 1",
				   MON_MAX_TRACE_PORTS);
	return 0;
}

static void sim_release(struct sim *s)
{
	mon_analyzer_release(&s->a);
	topo_release(&s->t);
	free(s->g);
	free(s->pa);
	free(s->pb);
	free(s->eoff);
	free(s->edge);
	free(s->dist);
	free(s->leaf_ix);
	free(s->busy);
	free(s->hit);
	free(s->cum_sent);
	free(s->cum_lost);
}

int tool_localize_sim(int argc, const char **argv)
{
	struct sim s = { .so = { .shape = "leaf-spine", .groups = 32, .hosts = 32, .rails = 8, .spines = 16,
				 .pods = 1, .gbps = 400 },
			 .peers = 8, .buckets = 4, .width = 4, .probes = 20, .trials = 200, .k = 3, .seed = 1,
			 .noise = 1e-4, .busy_frac = 0.01, .busy_loss = 0.005, .lo = 0.01, .hi = 0.02, .intervals = 6, .fault_to = 1 << 30 };
	struct sim_tally y = { 0 };
	uint64_t rng, t0 = clock_ns();
	int rc, i;

	if ((rc = sim_args(&s, argc, argv)))
		return rc;
	setvbuf(stdout, NULL, _IOLBF, 0);	/* a line per trial, as it ends */
	rng = s.seed;
	if ((rc = sim_setup(&s))) {
		sim_release(&s);
		return -rc;
	}
	printf("fabric: %zu hosts, %zu NIC ports, %zu switches, %zu cables; %zu probe groups, %d probes each "
	       "an interval; setup %.1f s\n", s.a.net.nhosts, s.a.net.nports, s.a.net.nsw, s.a.net.ncables, s.ng,
	       s.probes, (clock_ns() - t0) / 1e9);
	if (s.write_dir) {
		rc = sim_write(&s, &rng);
		s.trials = 0;
	} else if (s.parse_time) {
		rc = sim_parse_time(&s, &rng);
		s.trials = 0;
	}
	for (i = 0; i < s.trials; i++)
		if ((rc = run_trial(&s, &y, &rng, i))) {
			sim_release(&s);
			return -rc;
		}
	if (!s.trials) {
		sim_release(&s);
		return rc;
	}
	printf("named: %ld true, %ld false; precision %.4f; recall %.4f (%ld of %d faults named within %d "
	       "intervals); cleared %ld of %ld within %d; host verdicts %ld; time per interval mean %.3f s "
	       "max %.3f s, cpu mean %.3f s max %.3f s, over %ld intervals\n", y.tp, y.fp,
	       y.tp + y.fp ? (double)y.tp / (y.tp + y.fp) : 1.0, (double)y.recalled / s.trials, y.recalled, s.trials,
	       s.k, y.cleared, y.recalled, s.k, y.hosts, y.t_sum / y.intervals, y.t_max, y.cpu_sum / y.intervals,
	       y.cpu_max, y.intervals);
	sim_release(&s);
	return 0;
}
