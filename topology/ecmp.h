/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The equal-cost paths between two hosts of the intended topology
 * (intent.h), as ECMP routes them: the shortest paths over switches from
 * the source's leaf to the destination's leaf (a host is never a transit),
 * cable by cable (two cables between the same two switches are two next
 * hops, two paths).  What a polarization verdict needs of the design: how
 * many paths there are, the tier where they are narrowest (the fewest Gb/s
 * side by side: where the flows' rates are set when the paths are the
 * bottleneck), how many cables that tier has and their rate, and the
 * hosts' own ports.
 *
 * Tier d is the cables from the switches d hops from the source's leaf to
 * those d + 1 hops from it, on shortest paths.  Cost: two breadth-first
 * searches over the switches, O(switches + cables).
 */
#ifndef FS_TOPOLOGY_ECMP_H
#define FS_TOPOLOGY_ECMP_H

#include <stddef.h>

#include "intent.h"

struct topo_ecmp {
	double paths;		/* end-to-end equal-cost paths; 1 when both hosts are on one leaf */
	int hops;		/* switch-to-switch cables on each path (0: one leaf) */
	int tier;		/* the narrowest tier (-1: none, one leaf) */
	int links;		/* its cables */
	double link_gbps;	/* the slowest of them; 0 when a cable of the paths has no speed= */
	double host_gbps;	/* the slower of the two hosts' ports; 0 when one has no speed= */
	int src_leaf, dst_leaf;	/* switch indices */
};

/*
 * The paths from node src's port on lane (rail, plane) to node dst's (a
 * port's lane: the cable's rail= and plane=, else its leaf's, else 0).
 * 0, or -1 with one line in err: a node that is not in the design, no port
 * on that lane, no path between the leaves.
 */
int topo_ecmp(const struct topo *t, const char *src, const char *dst, int rail, int plane, struct topo_ecmp *e,
	      char *err, size_t len);
/* The same between two switches (host_gbps 0): 0, or -1 with one line in
 * err (no path, out of memory). */
int topo_ecmp_switches(const struct topo *t, int src_sw, int dst_sw, struct topo_ecmp *e, char *err, size_t len);
/* node's cable on lane (rail, plane): its switch (and the cable's speed into
 * *gbps, 0 when not given), or -1 */
int topo_host_port(const struct topo *t, const char *node, int rail, int plane, double *gbps);
/* Is node a node of the design (an end of a cable that is no switch)? */
int topo_is_node(const struct topo *t, const char *node);

#endif
