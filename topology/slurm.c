/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The intended topology as Slurm's topology.conf (topology/tree): a leaf
 * lists its nodes, a spine its leaves, a superspine its spines.
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

#include "../core/error.h"
#include "slurm.h"

/* 1 when cable l is on the rail and plane chosen (a switch-to-switch one: by its switches' plane) */
static int on_lane(const struct topo *t, const struct topo_link *l, int rail, int plane)
{
	const struct topo_switch *s = l->b.sw >= 0 ? &t->sw[l->b.sw] : NULL;
	int r, p;

	if (!s)
		return 0;
	if (l->a.sw < 0) {
		r = l->rail >= 0 ? l->rail : s->rail;
		p = l->plane >= 0 ? l->plane : s->plane;
		return r == rail && (p < 0 ? 0 : p) == plane;
	}
	p = s->plane >= 0 ? s->plane : t->sw[l->a.sw].plane;
	return (p < 0 ? 0 : p) == plane;
}

/* the names under switch s on the lane, comma-separated (nodes when tier is leaf); how many */
static int members(const struct topo *t, int s, int rail, int plane, const char *has, FILE *f)
{
	size_t i;
	int n = 0;

	for (i = 0; i < t->nln; i++) {
		const struct topo_link *l = &t->ln[i];
		const char *name = NULL;

		if (!on_lane(t, l, rail, plane))
			continue;
		if (t->sw[s].tier == TOPO_LEAF) {
			if (l->a.sw < 0 && l->b.sw == s)
				name = l->a.dev;
		} else if (l->a.sw >= 0) {	/* the end one tier down, when it is there on the lane */
			int o = l->a.sw == s ? l->b.sw : l->b.sw == s ? l->a.sw : -1;

			if (o >= 0 && t->sw[o].tier + 1 == t->sw[s].tier && has[o])
				name = t->sw[o].name;
		}
		if (name)
			fprintf(f, "%s%s", n++ ? "," : "", name);
	}
	return n;
}

int topo_slurm_write(const struct topo *t, int rail, int plane, FILE *f)
{
	char *has = calloc(t->nsw + 1, 1);
	int tier, written = 0;
	size_t s;

	if (!has)
		return fs_err_env("out of memory writing topology.conf");
	fprintf(f, "# topology.conf for Slurm's topology/tree, from %s: rail %d, plane %d (fabscope topo export)\n",
		t->path ? t->path : "the intended topology", rail, plane);
	for (tier = TOPO_LEAF; tier <= TOPO_SUPERSPINE; tier++)
		for (s = 0; s < t->nsw; s++) {
			FILE *m;
			char *buf = NULL;
			size_t len = 0;
			int n;

			if ((int)t->sw[s].tier != tier || !(m = open_memstream(&buf, &len)))
				continue;
			n = members(t, (int)s, rail, plane, has, m);
			fclose(m);
			if (n) {
				fprintf(f, "SwitchName=%s %s=%s\n", t->sw[s].name, tier == TOPO_LEAF ? "Nodes" : "Switches",
					buf);
				has[s] = 1;
				written++;
			}
			free(buf);
		}
	free(has);
	if (!written)
		return fs_err_usage("%s: no node is cabled on rail %d plane %d: nothing for topology.conf (give --rail, "
				    "--plane)", t->path ? t->path : "topology", rail, plane);
	return 0;
}
