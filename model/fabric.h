/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A fabric as a graph for the model: the intended topology's switches and
 * cables (topology/intent.h), each cable two directed edges of its speed,
 * and the hosts' NIC ports by lane (rail, plane).
 *
 * Routing is what a Clos fabric's routers do: shortest paths between the
 * source's leaf and the destination's leaf over switches only (a host is
 * never a transit).  A flow is routed either split equally at every switch
 * among its next hops (what per-packet spraying gives, and on a symmetric
 * fat-tree the best any splitting can do) or on one path drawn uniformly at
 * every switch (per-flow ECMP with a uniform hash), or on a path given hop
 * by hop (ECMP with a known hash: the path each flow really took).
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

struct fab {
	const struct topo *t;
	size_t nsw;
	struct fab_port *ports;	/* sorted by host (natural order), rail, plane */
	size_t nports;
	const char **hosts;	/* distinct node names in core/names.h's order ("h2" < "h10") */
	size_t nhosts;
	size_t *host_port;	/* host h's ports: [host_port[h], host_port[h + 1]) */
	size_t *adj_off;	/* switch u's neighbours: [adj_off[u], adj_off[u + 1]) */
	uint32_t *adj_v, *adj_e;	/* neighbour switch, the directed edge u -> v */
	double *cap;		/* per directed edge (2 per cable), Gb/s */
	size_t nedges;
	/* scratch for routing */
	int *dist;
	int dist_of;		/* the leaf dist[] is from, -1: none */
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
 * or one path drawn with *rng (per-flow ECMP).  0, -FS_EXIT_USAGE when no
 * path joins the two leaves (said, naming them), -FS_EXIT_ENV out of memory.
 */
int fab_add_flow(struct fab *f, struct fab_shares *s, size_t src, size_t dst, enum fab_route how,
		 uint64_t *rng);

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
