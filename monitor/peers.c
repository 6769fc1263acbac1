/* SPDX-License-Identifier: BSD-2-Clause */
#include <arpa/inet.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../fleet/plan.h"
#include "peers.h"

int mon_coupon(int paths, double miss)
{
	double q;
	int n;

	if (paths <= 1)
		return 1;
	q = 1.0 - 1.0 / paths;
	n = (int)ceil(log(miss / paths) / log(q));
	while (n > 1 && paths * pow(q, n - 1) <= miss)	/* the smallest, whatever the rounding */
		n--;
	while (paths * pow(q, n) > miss)
		n++;
	return n;
}

void mon_peers_release(struct mon_peers *mp)
{
	for (int i = 0; i < mp->n; i++)
		free(mp->p[i].name);
	free(mp->p);
	free(mp->known);
	free(mp->self);
	memset(mp, 0, sizeof(*mp));
}

int mon_peers_find(const struct mon_peers *mp, const char *name)
{
	for (int i = 0; i < mp->n; i++)
		if (!strcmp(mp->p[i].name, name))
			return i;
	return -1;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

int mon_peers_known(const struct mon_peers *mp, uint32_t ip)
{
	return mp->nknown && bsearch(&ip, mp->known, mp->nknown, sizeof(ip), cmp_u32) != NULL;
}

/* FNV-1a over the two leaves' names and a host's: the draw of the pairs */
static uint64_t pair_hash(const char *a, const char *b, const char *host)
{
	const char *s[3] = { a, b, host };
	uint64_t h = 1469598103934665603ull;

	for (int k = 0; k < 3; k++) {
		for (const unsigned char *p = (const unsigned char *)s[k]; *p; p++)
			h = (h ^ *p) * 1099511628211ull;
		h = (h ^ 0xff) * 1099511628211ull;	/* a separator no name holds */
	}
	return h;
}

static const char *leaf_of(const struct plan_node *n)
{
	return n->leaf ? n->leaf : "";
}

/* nodes ordered by leaf, then name */
static int cmp_leaf(const void *a, const void *b, void *ctx)
{
	const struct plan_node *nodes = ctx;
	const struct plan_node *x = &nodes[*(const int *)a], *y = &nodes[*(const int *)b];
	int c = strcmp(leaf_of(x), leaf_of(y));

	return c ? c : strcmp(x->name, y->name);
}

struct ranked {
	uint64_t h;
	int node;
};

static int cmp_ranked(const void *a, const void *b, void *ctx)
{
	const struct plan_node *nodes = ctx;
	const struct ranked *x = a, *y = b;

	if (x->h != y->h)
		return x->h < y->h ? -1 : 1;
	return strcmp(nodes[x->node].name, nodes[y->node].name);
}

struct sel {
	const struct plan *pl;
	const struct mon_peer_opts *o;
	struct mon_peers *mp;
	int *order;			/* node indices by leaf, then name */
	int self;			/* node index of o->self */
	struct ranked *rk;		/* scratch, as long as the largest leaf */
};

/* The endpoints of node n on the agent's lanes; 1 if it has any */
static int peer_ips(const struct mon_peers *mp, const struct plan_node *n, struct in_addr *ip)
{
	int any = 0;

	memset(ip, 0, sizeof(*ip) * MON_MAX_LANES);
	for (int e = 0; e < n->nep; e++)
		for (int l = 0; l < mp->nlanes; l++)
			if (n->ep[e].rail == mp->lane[l].rail && n->ep[e].plane == mp->lane[l].plane &&
			    inet_pton(AF_INET, n->ep[e].ip, &ip[l]) == 1)
				any = 1;
	return any;
}

static int add_peer(struct sel *s, int node, int cross)
{
	struct mon_peers *mp = s->mp;
	const struct plan_node *n = &s->pl->nodes[node];
	struct in_addr ip[MON_MAX_LANES];

	if (node == s->self || mon_peers_find(mp, n->name) >= 0 || !peer_ips(mp, n, ip))
		return 0;
	if (mp->n >= s->o->max_peers)
		return fs_err_usage("%s: %s has more than %d peers (--max-peers): give each node its leaf= "
				    "so that only its leaf is a full mesh, or raise --max-peers",
				    s->pl->hostfile, s->o->self, s->o->max_peers);
	if (FS_ALLOC_GROW(mp->p, (size_t)mp->n + 1, mp->alloc))
		return fs_err_env("out of memory choosing peers");
	memset(&mp->p[mp->n], 0, sizeof(mp->p[0]));
	mp->p[mp->n].name = strdup(n->name);
	if (!mp->p[mp->n].name)
		return fs_err_env("out of memory choosing peers");
	memcpy(mp->p[mp->n].ip, ip, sizeof(ip));
	mp->p[mp->n].cross = cross;
	mp->n++;
	return 0;
}

/* Rank the nodes order[from..to) by the hash of (la, lb, name) into s->rk */
static void rank_leaf(struct sel *s, int from, int to, const char *la, const char *lb)
{
	for (int i = from; i < to; i++) {
		s->rk[i - from].node = s->order[i];
		s->rk[i - from].h = pair_hash(la, lb, s->pl->nodes[s->order[i]].name);
	}
	qsort_r(s->rk, (size_t)(to - from), sizeof(*s->rk), cmp_ranked, (void *)s->pl->nodes);
}

/* The leaf pair (mine: order[a0..a1), theirs: order[b0..b1)): pair j (j < K) is the
 * (j mod |A|)-th host of A and the (j mod |B|)-th of B, each leaf ranked by the hash */
static int cross_pairs(struct sel *s, int a0, int a1, int b0, int b1)
{
	const char *la = leaf_of(&s->pl->nodes[s->order[a0]]), *lb = leaf_of(&s->pl->nodes[s->order[b0]]);
	int na = a1 - a0, nb = b1 - b0, k = s->mp->pairs, r = -1, rc = 0;

	if ((long long)na * nb * s->o->sports < s->mp->need)
		s->mp->short_pairs++;
	if ((long long)na * nb < k)
		k = na * nb;	/* every pair, then */
	rank_leaf(s, a0, a1, la, lb);
	for (int i = 0; i < na; i++)
		if (s->rk[i].node == s->self)
			r = i;
	if (r < 0 || r >= k)
		return 0;
	rank_leaf(s, b0, b1, lb, la);
	for (int j = r; j < k && !rc; j += na)	/* pair j: A's (j mod |A|)-th, B's (j mod |A| + j / |A|) mod |B|-th */
		rc = add_peer(s, s->rk[(r + j / na) % nb].node, 1);
	return rc;
}

static int self_lanes(struct mon_peers *mp, const struct plan *pl, int self)
{
	const struct plan_node *n = &pl->nodes[self];

	for (int e = 0; e < n->nep; e++) {
		struct mon_lane *l = &mp->lane[mp->nlanes];

		if (inet_pton(AF_INET, n->ep[e].ip, &l->ip) != 1)
			return fs_err_usage("%s: %s's rail %d endpoint '%s' is not an IPv4 address: the monitor "
					    "probes IPv4 endpoints only", pl->hostfile, n->name, n->ep[e].rail, n->ep[e].ip);
		if (mp->nlanes >= MON_MAX_LANES)
			return fs_err_usage("%s: %s has more than %d endpoints: the monitor probes at most %d lanes",
					    pl->hostfile, n->name, MON_MAX_LANES, MON_MAX_LANES);
		l->rail = n->ep[e].rail;
		l->plane = n->ep[e].plane;
		mp->nlanes++;
	}
	if (!mp->nlanes)
		return fs_err_usage("%s: %s has no endpoint (railK=IPv4): nothing to probe from", pl->hostfile, n->name);
	return 0;
}

static int known_ips(struct mon_peers *mp, const struct plan *pl)
{
	size_t n = 0, w = 0;

	for (int i = 0; i < pl->nnodes; i++)
		n += (size_t)pl->nodes[i].nep;
	mp->known = fs_reallocarray(NULL, n ? n : 1, sizeof(*mp->known));
	if (!mp->known)
		return fs_err_env("out of memory reading the peers");
	for (int i = 0; i < pl->nnodes; i++)
		for (int e = 0; e < pl->nodes[i].nep; e++) {
			struct in_addr a;

			if (inet_pton(AF_INET, pl->nodes[i].ep[e].ip, &a) == 1)
				mp->known[w++] = a.s_addr;
		}
	qsort(mp->known, w, sizeof(*mp->known), cmp_u32);
	mp->nknown = w;
	return 0;
}

static int choose(struct sel *s)
{
	const struct plan *pl = s->pl;
	int n = pl->nnodes, rc = 0, mine0 = -1, mine1 = -1;

	for (int i = 0; i < n; i++)
		s->order[i] = i;
	qsort_r(s->order, (size_t)n, sizeof(int), cmp_leaf, (void *)pl->nodes);
	for (int i = 0; i < n;) {	/* my leaf's bounds */
		int j = i;

		while (j < n && !strcmp(leaf_of(&pl->nodes[s->order[j]]), leaf_of(&pl->nodes[s->order[i]])))
			j++;
		for (int k = i; k < j; k++)
			if (s->order[k] == s->self)
				mine0 = i, mine1 = j;
		s->mp->leaves++;
		i = j;
	}
	for (int k = mine0; k < mine1 && !rc; k++)
		rc = add_peer(s, s->order[k], 0);
	for (int i = 0; i < n && !rc;) {
		int j = i;

		while (j < n && !strcmp(leaf_of(&pl->nodes[s->order[j]]), leaf_of(&pl->nodes[s->order[i]])))
			j++;
		if (i != mine0)
			rc = cross_pairs(s, mine0, mine1, i, j);
		i = j;
	}
	return rc;
}

int mon_peers_load(struct mon_peers *mp, const char *path, const char *text,
		   const struct mon_peer_opts *o)
{
	struct plan pl;
	struct sel s = { &pl, o, mp, NULL, -1, NULL };
	int rc;

	memset(mp, 0, sizeof(*mp));
	memset(&pl, 0, sizeof(pl));
	rc = plan_hostfile(&pl, path, text);
	if (!rc) {
		s.self = plan_node_index(&pl, o->self);
		if (s.self < 0)
			rc = fs_err_usage("%s: no node '%s' in it: give this node's name as the file writes it "
					  "(--node)", path, o->self);
	}
	if (!rc && !(mp->self = strdup(o->self)))
		rc = fs_err_env("out of memory reading the peers");
	if (!rc)
		rc = self_lanes(mp, &pl, s.self);
	if (!rc)
		rc = known_ips(mp, &pl);
	if (!rc) {
		mp->need = mon_coupon(o->paths, MON_COUPON_MISS);
		mp->pairs = (mp->need + o->sports - 1) / o->sports;
		s.order = fs_reallocarray(NULL, (size_t)pl.nnodes, sizeof(int));
		s.rk = fs_reallocarray(NULL, (size_t)pl.nnodes, sizeof(*s.rk));
		rc = s.order && s.rk ? choose(&s) : fs_err_env("out of memory choosing peers");
	}
	free(s.order);
	free(s.rk);
	plan_release(&pl);
	if (rc)
		mon_peers_release(mp);
	return rc;
}
