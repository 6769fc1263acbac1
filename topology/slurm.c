/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The intended topology as Slurm's topology.conf (topology/tree): a leaf
 * lists its nodes, a spine its leaves, a superspine its spines.
 *
 * Leaves and border leaves are the tree's bottom (they list nodes), spines
 * the next, superspines the top; out-of-band cables are no part of it.
 *
 * Slurm models one network, and a rail-optimized node sits on a leaf of
 * every rail: the export takes the cables of one rail and plane (rail 0,
 * plane 0 unless asked), which is the grouping a scheduler packs jobs by
 * (the nodes of a scalable unit share their leaves on every rail).  A
 * switch with nothing under it on that rail and plane is left out, since
 * Slurm refuses a switch that lists neither nodes nor switches.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "slurm.h"

/* 1 when cable l is on the rail and plane chosen (a switch-to-switch one: by its switches' plane); a
 * cable without a rail is rail 0's (a design without rails has one lane), an out-of-band one no lane's */
static int on_lane(const struct topo *t, const struct topo_link *l, int rail, int plane)
{
	const struct topo_switch *s = l->b.sw >= 0 ? &t->sw[l->b.sw] : NULL;
	int r, p;

	if (!s || topo_link_oob(t, l))
		return 0;
	if (l->a.sw < 0) {
		r = l->rail >= 0 ? l->rail : s->rail;
		p = l->plane >= 0 ? l->plane : s->plane;
		return (r < 0 ? 0 : r) == rail && (p < 0 ? 0 : p) == plane;
	}
	p = s->plane >= 0 ? s->plane : t->sw[l->a.sw].plane;
	return (p < 0 ? 0 : p) == plane;
}

/* a member of a switch on the lane: the cable's order keeps the file's order */
struct member {
	int sw;			/* the switch it is under */
	int below;		/* the switch one tier down, or -1: a node */
	const char *name;
	size_t order;
};

static int member_cmp(const void *a, const void *b)
{
	const struct member *x = a, *y = b;

	if (x->sw != y->sw)
		return x->sw < y->sw ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* every (switch, member) of the lane's cables, sorted by switch: one pass, one sort */
static struct member *lane_members(const struct topo *t, int rail, int plane, size_t *n)
{
	struct member *m = fs_reallocarray(NULL, t->nln + 1, sizeof(*m));
	size_t i;

	*n = 0;
	if (!m)
		return NULL;
	for (i = 0; i < t->nln; i++) {
		const struct topo_link *l = &t->ln[i];

		if (!on_lane(t, l, rail, plane))
			continue;
		if (l->a.sw < 0) {
			if (topo_tier_level(t->sw[l->b.sw].tier) == 1)
				m[(*n)++] = (struct member){ l->b.sw, -1, l->a.dev, i };
		} else if (topo_tier_level(t->sw[l->a.sw].tier) + 1 == topo_tier_level(t->sw[l->b.sw].tier)) {
			m[(*n)++] = (struct member){ l->b.sw, l->a.sw, t->sw[l->a.sw].name, i };
		} else if (topo_tier_level(t->sw[l->b.sw].tier) + 1 == topo_tier_level(t->sw[l->a.sw].tier)) {
			m[(*n)++] = (struct member){ l->a.sw, l->b.sw, t->sw[l->b.sw].name, i };
		}
	}
	qsort(m, *n, sizeof(*m), member_cmp);
	return m;
}

int topo_slurm_write(const struct topo *t, int rail, int plane, FILE *f)
{
	char *has = calloc(t->nsw + 1, 1);
	size_t *first = fs_reallocarray(NULL, t->nsw + 1, sizeof(*first)), n = 0, k;
	struct member *m = has && first ? lane_members(t, rail, plane, &n) : NULL;
	int level, written = 0, rc;
	char from[256];
	size_t s;

	if ((rc = topo_design_ok(t))) {
		free(m);
		free(first);
		free(has);
		return rc;
	}
	if (!m) {
		free(has);
		free(first);
		return fs_err_env("out of memory writing topology.conf");
	}
	for (s = 0; s <= t->nsw; s++)
		first[s] = n;
	for (k = n; k-- > 0;)
		first[m[k].sw] = k;
	/* (the path as given: a newline in it would end the comment) */
	fs_escape_ctl(t->path ? t->path : "the intended topology", strlen(t->path ? t->path : "the intended topology"),
		      from, sizeof(from));
	fprintf(f, "# topology.conf for Slurm's topology/tree, from %s: rail %d, plane %d (fabscope topo export)\n",
		from, rail, plane);
	for (level = 1; level <= 3; level++)	/* a level's members are known when it is written */
		for (s = 0; s < t->nsw; s++) {
			int listed = 0;

			if (topo_tier_level(t->sw[s].tier) != level)
				continue;
			for (k = first[s]; k < n && m[k].sw == (int)s; k++) {
				if (m[k].below >= 0 && !has[m[k].below])
					continue;	/* a switch below with nothing under it */
				if (!listed++)
					fprintf(f, "SwitchName=%s %s=", t->sw[s].name, level == 1 ? "Nodes" : "Switches");
				fprintf(f, "%s%s", listed > 1 ? "," : "", m[k].name);
			}
			if (listed) {
				fputc('\n', f);
				has[s] = 1;
				written++;
			}
		}
	free(m);
	free(first);
	free(has);
	if (!written)
		return fs_err_usage("%s: no node is cabled on rail %d plane %d: nothing for topology.conf (give --rail, "
				    "--plane)", t->path ? t->path : "topology", rail, plane);
	return 0;
}
