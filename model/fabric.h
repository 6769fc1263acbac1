/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A fabric as a graph for the model: the intended topology's switches and
 * cables (topology/intent.h), each cable two directed edges of its speed,
 * and the hosts' NIC ports by lane (rail, plane; a port without either is
 * rail 0, plane 0).  Out-of-band cables and loopbacks carry nothing routed.
 *
 * Routing is what a Clos fabric's routers do: shortest paths between the
 * source's leaf and the destination's leaf over switches only (a host is
 * never a transit).  A flow is routed either split equally at every switch
 * among its next hops (what per-packet spraying gives, and on a symmetric
 * fat-tree the best any splitting can do) or on one path drawn uniformly at
 * every switch (per-flow ECMP with a uniform hash), or on a path given hop
 * by hop (ECMP with a known hash: the path each flow really took).
 *
 * Next hops are computed once per fabric, not per flow: destination leaves
 * with the same neighbouring switches (every leaf of a pod, of a rail of a
 * rail-only fabric, of a plane) are one class, since every shortest path to
 * such a leaf runs through one of those neighbours and no path to one leaf
 * of a class passes another.  A class's next hops toward its neighbours are
 * found by one breadth-first search, on first use, and kept (up to a memory
 * bound that a symmetric fabric never reaches); the last hop, a neighbour
 * to the leaf itself, is the leaf's own cables.  A flow then costs the
 * switches and cables of its paths, whatever a spine's number of leaves.
 *
 * Spraying, the cables out of one switch that every sprayed flow uses
 * alike (a leaf's uplinks, in a Clos) carry the same flows with the same
 * shares, so their constraints are one and the same: a flow lists the
 * first of them only (exact: the rates are those of every cable listed),
 * which halves a sprayed flow's shares on a leaf-spine.  So are a
 * destination leaf's last hops, in a solve where every flow to it arrives
 * evenly over them (fab_spray_prepare): a flow then lists one of them, not
 * all of a spine's worth.
 */
#ifndef FS_MODEL_FABRIC_H
#define FS_MODEL_FABRIC_H

#include <stddef.h>
#include <stdint.h>

#include "../topology/intent.h"

struct fab_port {
	const char *node;
	int rail, plane;
	uint32_t link;		/* the cable (its edge 2 link: host to leaf) */
	int leaf;		/* the switch at its other end */
	int host;		/* index into fab.hosts */
};

/* a switch's neighbour: the switch and the directed edge to it */
struct fab_adj {
	uint32_t v, e;
};

/* the next hops of a class of destination leaves (fabric.c) */
struct fab_dag;

struct fab {
	const struct topo *t;
	size_t nsw;
	struct fab_port *ports;	/* sorted by host (core/names.h's order), rail, plane */
	size_t nports;
	const char **hosts;	/* distinct node names in core/names.h's order ("h2" < "h10") */
	size_t nhosts;
	size_t *host_port;	/* host h's ports: [host_port[h], host_port[h + 1]) */
	size_t *adj_off;	/* switch u's neighbours: adj[adj_off[u] .. adj_off[u + 1]), by neighbour */
	struct fab_adj *adj;
	double *cap;		/* per directed edge (2 per cable), Gb/s */
	size_t nedges;
	/* routing: the class of every switch a host port is on (-1: none) */
	int *cls;
	size_t ncls;
	struct fab_dag **dag;	/* per class, made on first use */
	size_t dag_words;	/* what the kept ones hold, against a bound */
	int *cls_rep;		/* per class: a leaf of it */
	/* spraying: cables out of one switch that every sprayed flow uses alike (the same capacity, the
	 * next hops of the same classes, no destination leaf at their end but the same) are one
	 * constraint, said once a flow */
	int bundled;		/* 1 made, -1 not (the classes past the bound), 0 not yet */
	uint32_t *rep;		/* per directed edge: the first of its bundle */
	uint32_t *said, stamp;	/* per directed edge: the visit (a flow at a switch) that last said it */
	/* and a destination leaf's last hops, one constraint when every flow to it comes evenly over
	 * all of them (fab_spray_prepare): per leaf, whether its cables allow it; per class, whether
	 * this solve's sources do; per switch and class, whether spraying from it arrives evenly */
	unsigned char *last_even, *cls_even, *from_even;
	int even_on;		/* between fab_spray_prepare and fab_spray_end */
	/* scratch: the last hop to one destination leaf, spraying */
	int last_for;		/* the leaf last_lo/hi are for, -1: none */
	uint32_t *last_lo, *last_hi;	/* per switch: its cables to that leaf in adj[] of the leaf */
	double *mass;
	uint32_t *layer, *next;
};

/*
 * Build from a read topology; a cable without speed= takes default_gbps
 * (0: none, and such a cable is an error naming its line).  0, or -FS_EXIT_*
 * said.
 */
int fab_build(struct fab *f, const struct topo *t, double default_gbps);
void fab_release(struct fab *f);

/* The index of the host named name in f->hosts, or -1 (a binary search). */
long fab_host_index(const struct fab *f, const char *name);
/* The port of host h on lane (rail, plane), or -1. */
long fab_port_of(const struct fab *f, size_t h, int rail, int plane);

/*
 * A flow from port src to port dst, as routing reads it: made once a round
 * (fab_flow_of), added at every solve of the round (fab_add), so that a
 * solve reads its flows in order and not their ports at random.
 */
struct fab_flow {
	uint32_t src, dst;	/* the ports */
	uint32_t in, out;	/* the directed edges host -> leaf, leaf -> host */
	int32_t from, to;	/* the leaves */
};
void fab_flow_of(const struct fab *f, size_t src, size_t dst, struct fab_flow *x);

/*
 * Before adding the flows fl[0..n) sprayed, all of them: where every
 * flow to a destination leaf arrives evenly over its last hops (from every
 * source of the solve the sprayed mass reaches each of the leaf's
 * neighbours alike, and the leaf has as many cables of one speed from each,
 * and is nobody's transit), those last hops are one constraint, listed once
 * a flow.  Exact, as the bundles are (fabric.h above), and only for a solve
 * of those flows, sprayed: fab_spray_end after adding them.  0, or
 * -FS_EXIT_ENV out of memory (said).
 */
int fab_spray_prepare(struct fab *f, const struct fab_flow *fl, size_t n);
void fab_spray_end(struct fab *f);

/* Shares of flows as maxmin.h takes them, appended flow by flow. */
struct fab_shares {
	size_t *off;
	uint32_t *edge;
	double *share;
	size_t nflows, nshares, off_alloc, edge_alloc, share_alloc;
};
void fab_shares_release(struct fab_shares *s);

enum fab_route { FAB_SPRAY, FAB_ECMP };

/*
 * Add a flow from port src to port dst: spray (equal split at every switch)
 * or one path drawn with *rng (per-flow ECMP: at every switch one of its
 * next hops, uniformly).  0, -FS_EXIT_USAGE when no path joins the two
 * leaves (said, naming them), -FS_EXIT_ENV out of memory (said).  Cost: the
 * shares it adds; flows to one destination leaf one after another (as
 * fab_solve orders them, solve.h) share the leaf's last hop, made once, and
 * flows by destination class make each class's next hops at most once even
 * past the memory bound.
 */
int fab_add_flow(struct fab *f, struct fab_shares *s, size_t src, size_t dst, enum fab_route how,
		 uint64_t *rng);
/* The same, of a flow made by fab_flow_of. */
int fab_add(struct fab *f, struct fab_shares *s, const struct fab_flow *x, enum fab_route how, uint64_t *rng);

/*
 * Add a flow along a path of device names (a host, switches, a host: as
 * `ci/netns-fabric path` prints them).  0, or -FS_EXIT_USAGE said (where: a
 * prefix such as "FILE:LINE") when two neighbours of the path share no cable.
 * The ports it starts and ends on go to *src and *dst.
 */
int fab_add_path(struct fab *f, struct fab_shares *s, const char *const *hops, int nhops, const char *where,
		 size_t *src, size_t *dst);

/* splitmix64 */
uint64_t fab_rand(uint64_t *state);

#endif
