/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Whom a monitor agent probes: its peers, chosen from a hostfile
 * (fabscope-hostfile(5): name, railK[/P]=IPv4 endpoints, leaf=).
 *
 *   - every node of its own leaf (the nodes with the same leaf=, or every
 *     node without one when it has none): a full mesh inside the leaf, so
 *     that a NIC or host fault (every peer of one node fails) is told from a
 *     network fault;
 *   - across leaves, a sample: for each pair of leaves (A, B), K host pairs
 *     (a in A, b in B), K = ceil(N / S), S the source ports a pair rotates
 *     through (each a distinct 5-tuple) and N the coupon-collector bound:
 *     the fewest 5-tuples that, hashed uniformly onto P equal-cost paths,
 *     cover every path with probability >= 99 %, i.e. the smallest N with
 *     P * (1 - 1/P)^N <= 0.01 (a union bound; P = 2: 8, 4: 21, 8: 51,
 *     16: 112).  The pairs are drawn by a hash of the two leaves' names and
 *     each host's name, so every agent computes the same sample from the
 *     same file, a leaf pair's probing is spread over the hosts of both
 *     leaves, and a file changed elsewhere moves few pairs.  A leaf pair
 *     whose hosts cannot give N distinct 5-tuples (|A| * |B| * S < N) is
 *     probed by every pair, and mon_peers_load says so (warning).
 *
 * A peer is probed on every lane (rail, plane) both nodes have an endpoint
 * on.  Bounds: at most MON_MAX_LANES lanes of the agent's own, and at most
 * max_peers peers (else one line naming the bound and what to give); the
 * hostfile itself is bounded by fleet/plan.h's reader, which checks every
 * name and address.  Cost: O(N log N) for N nodes in the file.
 */
#ifndef FS_MON_PEERS_H
#define FS_MON_PEERS_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#define MON_MAX_LANES 16
#define MON_COUPON_MISS 0.01	/* the chance that some path is missed */

struct mon_lane {
	int rail, plane;
	struct in_addr ip;
};

struct mon_peer {
	char *name;
	int cross;			/* 1: sampled across leaves; 0: the same leaf */
	struct in_addr ip[MON_MAX_LANES];	/* per lane of the agent's; 0: none there */
};

struct mon_peers {
	char *self;
	struct mon_lane lane[MON_MAX_LANES];
	int nlanes;
	struct mon_peer *p;
	int n;
	size_t alloc;
	uint32_t *known;		/* every endpoint of the file (network order), sorted */
	size_t nknown;
	int need;			/* N above: 5-tuples wanted per leaf pair */
	int pairs;			/* K above: host pairs per leaf pair */
	int leaves;			/* leaves in the file */
	int short_pairs;		/* leaf pairs that cannot reach N 5-tuples */
};

struct mon_peer_opts {
	const char *self;		/* this node's name, as the file writes it */
	int paths;			/* P: equal-cost paths between two leaves */
	int sports;			/* S: source ports a pair rotates through */
	int max_peers;
};

/*
 * Read the hostfile at path (text: its contents already read, or NULL) and
 * choose the peers of o->self.  0, or -FS_EXIT_USAGE after one line (a
 * malformed file, o->self not in it, no IPv4 endpoint of its own, too many
 * peers); mp is left empty then.  mp must be zeroed or released.
 */
int mon_peers_load(struct mon_peers *mp, const char *path, const char *text,
		   const struct mon_peer_opts *o);
void mon_peers_release(struct mon_peers *mp);
/* The index of a peer by name, or -1. */
int mon_peers_find(const struct mon_peers *mp, const char *name);
/* 1 if ip (network order) is an endpoint of some node of the file. */
int mon_peers_known(const struct mon_peers *mp, uint32_t ip);
/* N: the 5-tuples that cover paths equal-cost paths with probability >= 1 - miss. */
int mon_coupon(int paths, double miss);

#endif
