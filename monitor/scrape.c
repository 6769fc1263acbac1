/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Probe counters from scrapes into the groups of an interval: see scrape.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "promtext.h"
#include "scrape.h"

enum { C_SENT, C_LOST, C_COUNT, C_LE, C_N };

struct scrape_group {
	uint32_t pa, pb;
	int bucket;
	double v[2][C_N];
	double le[2];		/* the bucket bound C_LE is of (INFINITY: none) */
	unsigned char seen[2];
};

void scrape_init(struct scrape *s, const struct loc_net *net, double slow_s, size_t max_groups)
{
	memset(s, 0, sizeof(*s));
	s->net = net;
	s->slow_s = slow_s;
	s->max_groups = max_groups;
	s->cur = 1;
}

void scrape_release(struct scrape *s)
{
	loc_map_release(&s->map);
	free(s->g);
	free(s->out);
	memset(s, 0, sizeof(*s));
}

void scrape_begin(struct scrape *s)
{
	size_t i;

	s->cur ^= 1;
	s->nscrapes++;
	s->skipped = 0;
	for (i = 0; i < s->ng; i++) {
		struct scrape_group *g = &s->g[i];

		g->seen[s->cur] = 0;
		memset(g->v[s->cur], 0, sizeof(g->v[s->cur]));
		g->le[s->cur] = INFINITY;
	}
}

/* a label that must be an integer in [0, 65535] */
static int label_int(struct scrape *s, const struct prom_sample *m, const char *name, int *v)
{
	const char *t = prom_label(m, name);
	char *end;
	long x;

	if (!t) {
		snprintf(s->why, sizeof(s->why), "line %ld: %s has no label '%s'", m->line, m->name, name);
		return -1;
	}
	x = strtol(t, &end, 10);
	if (!*t || *end || x < 0 || x > 65535) {
		snprintf(s->why, sizeof(s->why), "line %ld: %s's label %s is not a number from 0 to 65535", m->line,
			 m->name, name);
		return -1;
	}
	*v = (int)x;
	return 0;
}

static int metric_of(const char *name)
{
	static const char *const names[] = { "fabscope_probe_sent_total", "fabscope_probe_lost_total",
					     "fabscope_probe_rtt_seconds_count", "fabscope_probe_rtt_seconds_bucket" };
	int i;

	for (i = 0; i < C_N; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

/* the group of (pa, pb, bucket), made when new: its index, -1 full (said once), -2 out of memory */
static long group_of(struct scrape *s, uint32_t pa, uint32_t pb, int bucket)
{
	uint64_t key = (uint64_t)pa << 40 | (uint64_t)pb << 16 | (uint64_t)bucket;
	long i = loc_map_get(&s->map, key);
	struct scrape_group *g;

	if (i >= 0)
		return i;
	if (s->ng >= s->max_groups) {
		if (!s->full_said++)
			fs_warn("%s: more than %zu probe groups: the others are left out (--max-groups)", s->source,
				s->max_groups);
		return -1;
	}
	if (FS_ALLOC_GROW(s->g, s->ng + 1, s->g_alloc) || loc_map_put(&s->map, key, (uint32_t)s->ng))
		return -2;
	g = &s->g[s->ng];
	memset(g, 0, sizeof(*g));
	g->pa = pa;
	g->pb = pb;
	g->bucket = bucket;
	g->le[0] = g->le[1] = INFINITY;
	return (long)s->ng++;
}

int scrape_sample(void *ctx, const struct prom_sample *m)
{
	struct scrape *s = ctx;
	int which = metric_of(m->name), rail, plane, bucket;
	const char *node, *peer;
	long ha, hb, pa, pb, i;
	struct scrape_group *g;

	if (which < 0)
		return 0;
	node = prom_label(m, "node");
	peer = prom_label(m, "peer");
	if (!node || !peer) {
		snprintf(s->why, sizeof(s->why), "line %ld: %s has no label '%s'", m->line, m->name, node ? "peer" : "node");
		return 1;
	}
	if (label_int(s, m, "rail", &rail) || label_int(s, m, "plane", &plane) ||
	    label_int(s, m, "sport_bucket", &bucket))
		return 1;
	if (!(m->value >= 0) || isinf(m->value)) {
		snprintf(s->why, sizeof(s->why), "line %ld: %s is %g: a count is a finite number >= 0", m->line, m->name,
			 m->value);
		return 1;
	}
	if ((ha = loc_host(s->net, node)) < 0 || (hb = loc_host(s->net, peer)) < 0 ||
	    (pa = loc_port_of(s->net, (size_t)ha, rail, plane)) < 0 ||
	    (pb = loc_port_of(s->net, (size_t)hb, rail, plane)) < 0) {
		s->skipped++;
		return 0;
	}
	if ((i = group_of(s, (uint32_t)pa, (uint32_t)pb, bucket)) < 0)
		return i == -1 ? 0 : 2;
	g = &s->g[i];
	g->seen[s->cur] = 1;
	if (which == C_LE) {
		const char *le = prom_label(m, "le");
		char *end;
		double b = le ? strtod(le, &end) : NAN;

		if (!le || !*le || *end) {
			snprintf(s->why, sizeof(s->why), "line %ld: %s has no number in its label le", m->line, m->name);
			return 1;
		}
		if (s->slow_s > 0 && b >= s->slow_s && b < g->le[s->cur]) {
			g->le[s->cur] = b;
			g->v[s->cur][C_LE] = m->value;
		}
		return 0;
	}
	g->v[s->cur][which] = m->value;
	return 0;
}

int scrape_body(struct scrape *s, const char *source, const char *text, size_t len)
{
	char err[256];
	int rc;

	s->source = source;
	s->why[0] = 0;
	rc = prom_parse(text, len, scrape_sample, s, err, sizeof(err));
	if (rc == 2)
		return fs_err_env("out of memory reading %s", source);
	if (rc)
		return fs_err_peer("%s: %s; its other probe groups are left out of this scrape (check the agent's "
				   "version: its metrics must be fabscope-monitor-analyze(1)'s)", source,
				   rc < 0 ? err : s->why);
	return 0;
}

static double increase(double now, double before)
{
	return now >= before ? now - before : now;	/* reset: counted from zero */
}

int scrape_interval(struct scrape *s)
{
	int c = s->cur, p = c ^ 1;
	size_t i;

	s->nout = 0;
	for (i = 0; i < s->ng; i++) {
		const struct scrape_group *g = &s->g[i];
		const struct loc_port *pa = &s->net->ports[g->pa], *pb = &s->net->ports[g->pb];
		struct mon_group *o;
		double sent, lost, slow = 0;

		if (!g->seen[c] || (!g->seen[p] && !s->increases))
			continue;
		sent = s->increases ? g->v[c][C_SENT] : increase(g->v[c][C_SENT], g->v[p][C_SENT]);
		lost = s->increases ? g->v[c][C_LOST] : increase(g->v[c][C_LOST], g->v[p][C_LOST]);
		if (lost > sent)
			lost = sent;
		if (s->slow_s > 0 && isfinite(g->le[c]) && s->increases) {
			slow = g->v[c][C_COUNT] - g->v[c][C_LE];
			if (slow < 0)
				slow = 0;
			if (slow > sent - lost)
				slow = sent - lost;
		} else if (s->slow_s > 0 && isfinite(g->le[c]) && g->le[c] == g->le[p]) {
			slow = increase(g->v[c][C_COUNT], g->v[p][C_COUNT]) - increase(g->v[c][C_LE], g->v[p][C_LE]);
			if (slow < 0)
				slow = 0;
			if (slow > sent - lost)
				slow = sent - lost;
		}
		if (FS_ALLOC_GROW(s->out, s->nout + 1, s->out_alloc))
			return fs_err_env("out of memory making an interval of %zu probe groups", s->ng);
		o = &s->out[s->nout++];
		*o = (struct mon_group){ s->net->hosts[pa->host], s->net->hosts[pb->host], pa->rail, pa->plane,
					 g->bucket, sent, lost, slow };
	}
	return 0;
}
