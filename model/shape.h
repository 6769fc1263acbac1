/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Fabrics of a named shape, made rather than read, for the model's what-if
 * questions ("this permutation under ECMP on a 1:1 leaf-spine").  Names as
 * ci/netns-fabric gives them: hosts hI with NICs railR, leaves lG.R (the
 * leaf of group G, rail R), spines sK, superspines xX; the second plane of a
 * dual-plane fabric has leaves lG.R.1, NIC ports railR.1, and its spines and
 * superspines numbered after the first plane's.
 *
 *   leaf-spine   every leaf to every spine of its pod; with pods > 1, every
 *                spine to every superspine (a 3-tier fat-tree)
 *   rail-only    rail R's leaves to rail R's own spines only
 *   dual-plane   every NIC has a port on each of two planes, each plane a
 *                leaf-spine of its own
 */
#ifndef FS_MODEL_SHAPE_H
#define FS_MODEL_SHAPE_H

#include "../topology/intent.h"

struct shape_opts {
	const char *shape;	/* leaf-spine, rail-only, dual-plane */
	int groups, hosts, rails, spines, pods, supers;
	double gbps;		/* every cable */
	double uplink_gbps;	/* leaf-spine and spine-superspine cables (0: gbps) */
};

/* Make it into t (initialized, empty): 0, or -FS_EXIT_* said. */
int shape_make(struct topo *t, const struct shape_opts *o);

#endif
