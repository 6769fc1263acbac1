/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An interval of probe groups through paths, the vote and the hysteresis:
 * see analyze.h.
 */
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "analyze.h"

int mon_analyzer_init(struct mon_analyzer *a, const struct topo *t, const struct loc_opts *o, int sport_base,
		      int sport_width)
{
	int rc;

	memset(a, 0, sizeof(*a));
	a->opts = *o;
	a->sport_base = sport_base;
	a->sport_width = sport_width > 0 ? sport_width : 1;
	a->max_traces = 256;
	loc_paths_init(&a->paths);
	loc_vote_init(&a->vote);
	if ((rc = loc_net_build(&a->net, t)))
		return rc;
	return loc_track_init(&a->track, a->net.nelems);
}

void mon_analyzer_release(struct mon_analyzer *a)
{
	loc_net_release(&a->net);
	loc_paths_release(&a->paths);
	loc_vote_release(&a->vote);
	loc_track_release(&a->track);
	loc_map_release(&a->traced);
	free(a->obs);
	memset(a, 0, sizeof(*a));
}

/* the traced set of the group, made now if it may be: its index, -1 none, < -1 a negative exit code - 1 */
static long group_traced(struct mon_analyzer *a, const struct mon_group *g, uint32_t pa, uint32_t pb)
{
	uint32_t fwd[MON_MAX_TRACE_PORTS][MON_MAX_HOPS], rev[MON_MAX_TRACE_PORTS][MON_MAX_HOPS];
	const uint32_t *fp[MON_MAX_TRACE_PORTS], *rp[MON_MAX_TRACE_PORTS];
	int nfwd[MON_MAX_TRACE_PORTS], nrev[MON_MAX_TRACE_PORTS], i, rc;
	uint64_t key = (uint64_t)pa << 40 | (uint64_t)pb << 16 | (uint64_t)(g->bucket & 0xffff);
	long id = loc_map_get(&a->traced, key);

	if (id >= 0 || !a->tracer.trace || a->sport_width > MON_MAX_TRACE_PORTS || a->traces >= a->max_traces)
		return id;
	memset(nfwd, 0, sizeof(nfwd));
	memset(nrev, 0, sizeof(nrev));
	rc = a->tracer.trace(a->tracer.ctx, &a->net, g, pa, pb, a->sport_base + g->bucket * a->sport_width,
			     a->sport_width, fwd, nfwd, rev, nrev);
	if (rc < 0)
		return rc - 1;
	if (rc > 0) {
		a->untraceable++;
		return -1;
	}
	a->traces++;
	for (i = 0; i < a->sport_width; i++) {
		fp[i] = fwd[i];
		rp[i] = rev[i];
	}
	id = loc_paths_traced(&a->paths, &a->net, a->sport_width, fp, nfwd, rp, nrev);
	if (id < 0)
		return -1;	/* said: a path the design does not have; the candidates stand */
	if (loc_map_put(&a->traced, key, (uint32_t)id))
		return -FS_EXIT_ENV - 1;
	return id;
}

/* the group as an observation: 1 made, 0 left out (not in the design), < 0 an exit code */
static int group_obs(struct mon_analyzer *a, const struct mon_group *g, struct loc_obs *ob)
{
	long ha = loc_host(&a->net, g->node), hb = loc_host(&a->net, g->peer), pa, pb, set = -1;

	if (ha < 0 || hb < 0 || (pa = loc_port_of(&a->net, (size_t)ha, g->rail, g->plane)) < 0 ||
	    (pb = loc_port_of(&a->net, (size_t)hb, g->rail, g->plane)) < 0 || g->bucket < 0 || g->bucket > 0xffff ||
	    !(g->sent >= 0) || !(g->lost >= 0) || !(g->slow >= 0)) {
		a->skipped++;
		fs_log(1, "probe group %s -> %s rail %d plane %d bucket %d: not in the design, left out", g->node,
		       g->peer, g->rail, g->plane, g->bucket);
		return 0;
	}
	ob->port_a = (uint32_t)pa;
	ob->port_b = (uint32_t)pb;
	ob->sent = g->sent;
	ob->bad = g->lost + g->slow > g->sent ? g->sent : g->lost + g->slow;
	if (a->net.ports[pa].leaf != a->net.ports[pb].leaf &&
	    (loc_group_failed(ob->sent, ob->bad, a->opts.base_loss) ||
	     loc_map_get(&a->traced, (uint64_t)pa << 40 | (uint64_t)pb << 16 | (uint64_t)g->bucket) >= 0))
		set = group_traced(a, g, (uint32_t)pa, (uint32_t)pb);
	if (set < -1)
		return (int)(set + 1);
	if (set < 0)
		set = loc_paths_candidates(&a->paths, &a->net, a->net.ports[pa].leaf, a->net.ports[pb].leaf);
	if (set < 0)
		return -FS_EXIT_USAGE;
	ob->set = (uint32_t)set;
	return 1;
}

int mon_analyze_interval(struct mon_analyzer *a, const struct mon_group *g, size_t n)
{
	size_t i;
	int rc;

	a->nobs = 0;
	a->skipped = a->traces = a->untraceable = 0;
	if (FS_ALLOC_GROW(a->obs, n + 1, a->obs_alloc))
		return fs_err_env("out of memory reading %zu probe groups", n);
	for (i = 0; i < n; i++) {
		rc = group_obs(a, &g[i], &a->obs[a->nobs]);
		if (rc < 0)
			return rc;
		a->nobs += (size_t)rc;
	}
	if ((rc = loc_vote(&a->vote, &a->net, &a->paths, a->obs, a->nobs, &a->opts)))
		return rc;
	return loc_track_step(&a->track, &a->vote, a->opts.k);
}
