/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The vote over one interval's probe groups, and the hysteresis across
 * intervals: see localize.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "localize.h"

#define FAIL_SCORE 4.605170185988091	/* ln(100): a group's bad probes as unlikely as 1 % */

void loc_vote_init(struct loc_vote *v)
{
	memset(v, 0, sizeof(*v));
}

void loc_vote_release(struct loc_vote *v)
{
	free(v->s);
	free(v->cand);
	free(v->q);
	free(v->badg);
	free(v->xg);
	free(v->lo);
	free(v->le);
	free(v->lx);
	free(v->fail);
	free(v->mark);
	free(v->o);
	free(v->e);
	free(v->x);
	free(v->rate);
	free(v->so);
	free(v->se);
	free(v->sx);
	free(v->sr);
	memset(v, 0, sizeof(*v));
}

/* the Poisson log-likelihood ratio of o seen against e expected (0 when o <= e) */
static double poisson_score(double o, double e)
{
	if (o <= e)
		return 0;
	if (e <= 0)
		e = 1e-12;
	return o * log(o / e) - (o - e);
}

int loc_group_failed(double sent, double bad, double p0)
{
	return bad > 0 && poisson_score(bad, sent * p0) > FAIL_SCORE;
}

static int vote_alloc(struct loc_vote *v, size_t nel, size_t nports, size_t nsets)
{
	if (nports > v->nports_alloc || !v->lo) {
		free(v->lo);
		free(v->le);
		free(v->lx);
		v->lo = malloc((nports + 1) * sizeof(double));
		v->le = malloc((nports + 1) * sizeof(double));
		v->lx = malloc((nports + 1) * sizeof(double));
		v->nports_alloc = nports;
		if (!v->lo || !v->le || !v->lx) {
			v->nports_alloc = 0;
			return -1;
		}
	}
	if (nel > v->nelems_alloc) {
		free(v->o);
		free(v->e);
		free(v->x);
		free(v->rate);
		v->o = malloc(nel * sizeof(double));
		v->e = malloc(nel * sizeof(double));
		v->x = malloc(nel * sizeof(double));
		v->rate = malloc(nel * sizeof(double));
		v->nelems_alloc = nel;
		if (!v->o || !v->e || !v->x || !v->rate) {
			v->nelems_alloc = 0;
			return -1;
		}
	}
	if (nsets > v->nsets_alloc || !v->so) {
		size_t ns = nsets ? nsets : 1;

		free(v->so);
		free(v->se);
		free(v->sx);
		free(v->sr);
		v->so = malloc(ns * sizeof(double));
		v->se = malloc(ns * sizeof(double));
		v->sx = malloc(ns * sizeof(double));
		v->sr = malloc(ns * sizeof(double));
		v->nsets_alloc = ns;
		if (!v->so || !v->se || !v->sx || !v->sr) {
			v->nsets_alloc = 0;
			return -1;
		}
	}
	return 0;
}

static inline void acc(struct loc_vote *v, uint32_t el, double bad, double sent, double ex)
{
	v->o[el] += bad;
	v->x[el] += sent;
	v->e[el] += ex;
}

/* one pass: O, N and E per element under the model so far (v->rate) */
static void vote_pass(struct loc_vote *v, const struct loc_net *n, const struct loc_paths *p,
		      const struct loc_obs *obs, size_t nobs)
{
	size_t i, j;

	memset(v->o, 0, n->nelems * sizeof(double));
	memset(v->e, 0, n->nelems * sizeof(double));
	memset(v->x, 0, n->nelems * sizeof(double));
	memset(v->lo, 0, n->nports * sizeof(double));
	memset(v->le, 0, n->nports * sizeof(double));
	memset(v->lx, 0, n->nports * sizeof(double));
	for (i = 0; i < p->nsets; i++) {
		double r = 0;

		for (j = p->off[i]; j < p->off[i + 1]; j++)
			r += p->share[j].w * v->rate[p->share[j].elem];
		v->sr[i] = r;
		v->so[i] = v->se[i] = v->sx[i] = 0;
	}
	for (i = 0; i < nobs; i++) {
		const struct loc_obs *g = &obs[i];
		uint32_t na = n->nic0 + g->port_a, nb = n->nic0 + g->port_b;
		uint32_t ha = n->host0 + n->ports[g->port_a].host, hb = n->host0 + n->ports[g->port_b].host;
		double q = v->p0 + v->sr[g->set] + v->rate[na] + v->rate[nb] + v->rate[ha] + (hb != ha ? v->rate[hb] : 0);
		double ex = g->sent * (q < 1 ? q : 1);

		v->q[i] = q < 1 ? q : 1;

		acc(v, na, g->bad, g->sent, ex);
		acc(v, nb, g->bad, g->sent, ex);
		acc(v, ha, g->bad, g->sent, ex);
		if (hb != ha)
			acc(v, hb, g->bad, g->sent, ex);
		v->so[g->set] += g->bad;
		v->sx[g->set] += g->sent;
		v->se[g->set] += ex;
		if (p->off[g->set] == p->off[g->set + 1]) {	/* within a leaf: the NICs' alone */
			v->lo[g->port_a] += g->bad;
			v->le[g->port_a] += ex;
			v->lx[g->port_a] += g->sent;
			v->lo[g->port_b] += g->bad;
			v->le[g->port_b] += ex;
			v->lx[g->port_b] += g->sent;
		}
	}
	for (i = 0; i < p->nsets; i++) {
		if (!v->sx[i])
			continue;
		for (j = p->off[i]; j < p->off[i + 1]; j++)
			acc(v, p->share[j].elem, p->share[j].w * v->so[i], p->share[j].w * v->sx[i],
			    p->share[j].w * v->se[i]);
	}
}

/*
 * Does a subset of el's probes (o bad seen, e expected without el, x
 * probes) contradict el's rate?  When el drops rate of what crosses it,
 * the subset should show e + rate x bad probes; the Poisson log-likelihood
 * ratio of the rate the subset shows against that one, above bound, says
 * it does not.
 */
static int contradicts(double o, double e, double x, double rate, double bound)
{
	double want = e + rate * x;

	if (o >= want || want <= 0)
		return 0;
	return (o > 0 ? o * log(o / want) : 0) - o + want > bound;
}

/*
 * Is el's fault what its own probes say?  A NIC's probes to and from its
 * own leaf cross no cable but the NICs': when they contradict the NIC's
 * rate (LOC_NIC_BOUND), the loss is the fabric's beyond the leaf, not the
 * NIC's.  A host's fault is on every lane: a lane that contradicts the
 * host's rate (LOC_HOST_BOUND, stricter: every lane is tested) makes it a
 * NIC's fault (or two), not the host's.
 */
static int elem_consistent(const struct loc_vote *v, const struct loc_net *n, uint32_t el, double rate)
{
	size_t i, h;

	if (el >= n->host0) {
		h = el - n->host0;
		for (i = n->host_port[h]; i < n->host_port[h + 1]; i++) {
			uint32_t nic = n->nic0 + (uint32_t)i;

			if (contradicts(v->o[nic], v->e[nic], v->x[nic], rate, LOC_HOST_BOUND))
				return 0;
		}
	} else if (el >= n->nic0) {
		i = el - n->nic0;
		if (contradicts(v->lo[i], v->le[i], v->lx[i], rate, LOC_NIC_BOUND))
			return 0;
	}
	return 1;
}

static double share_of(const struct loc_net *n, const struct loc_paths *p, const struct loc_obs *g, uint32_t el);

/* the scratch of exact_score: the bad groups through el */
struct exact_grp {
	double w, k, q0;
};

/*
 * The likelihood of "el drops a fraction r of what crosses it" against
 * "el drops nothing", each probe Poisson with its group's rate q: the
 * groups with bad probes through el, sum k ln(1 + w r / q0), less r times
 * the probes through el (N, the healthy groups' included); maximized over
 * r (its derivative falls with r: bisection).  q0 is the group's rate
 * without el's own (own: the rate the model gives el now).  The best r
 * into *rate; the ratio returned.
 */
static double exact_score(struct loc_vote *v, const struct loc_net *n, const struct loc_paths *p,
			  const struct loc_obs *obs, uint32_t el, double own, double *rate)
{
	struct exact_grp *x = v->xg;
	size_t i, m = 0;
	double lo = 0, hi = 1, d, llr = 0;
	int it;

	*rate = 0;
	if (v->x[el] <= 0)
		return 0;
	for (i = 0; i < v->nbadg; i++) {
		const struct loc_obs *g = &obs[v->badg[i]];
		double w = share_of(n, p, g, el), q0;

		if (w <= 0)
			continue;
		q0 = v->q[v->badg[i]] - w * own;
		x[m++] = (struct exact_grp){ w, g->bad, q0 > 1e-12 ? q0 : 1e-12 };
	}
	for (it = 0; it < 60; it++) {
		double r = it ? (lo + hi) / 2 : 0;

		for (d = -v->x[el], i = 0; i < m; i++)
			d += x[i].k * x[i].w / (x[i].q0 + x[i].w * r);
		if (!it && d <= 0)
			return 0;
		if (it)
			*(d > 0 ? &lo : &hi) = r;
	}
	*rate = lo;
	for (i = 0; i < m; i++)
		llr += x[i].k * log1p(x[i].w * lo / x[i].q0);
	return llr - lo * v->x[el];
}

/*
 * Does element el pass the bounds to be taken?  Its score (and its rate
 * into *rate), else -1.  A cheap screen first (the bad probes through it,
 * weighted by the shares, against those expected), then the likelihood.
 */
static double elem_score(struct loc_vote *v, const struct loc_net *n, const struct loc_paths *p,
			 const struct loc_obs *obs, uint32_t el, const struct loc_opts *o, double *rate)
{
	double ex = v->o[el] - v->e[el], sc, r;

	*rate = 0;
	if (v->x[el] <= 0 || ex < 1 || poisson_score(v->o[el], v->e[el]) < LOC_SCREEN)
		return -1;
	sc = exact_score(v, n, p, obs, el, v->rate[el], &r);
	if (sc < o->min_score || r * v->x[el] < o->min_excess || r < o->min_rate || !elem_consistent(v, n, el, r))
		return -1;
	*rate = r;
	return sc;
}

struct cand {
	uint32_t el;
	double score, rate;
};

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return x->el < y->el ? -1 : x->el > y->el;
}

/* every element that passes the bounds, best first (by index on equal scores) */
static int vote_cands(struct loc_vote *v, const struct loc_net *n, const struct loc_paths *p,
		      const struct loc_obs *obs, const struct loc_opts *o)
{
	uint32_t el;

	v->ncand = 0;
	for (el = 0; el < n->nelems; el++) {
		double r, sc;
		size_t j;

		for (j = 0; j < v->ns && v->s[j].elem != el; j++)
			;
		if (j < v->ns)
			continue;	/* in the model already: one suspect an element */
		sc = elem_score(v, n, p, obs, el, o, &r);
		if (sc < o->min_score)
			continue;
		if (FS_ALLOC_GROW(v->cand, v->ncand + 1, v->cand_alloc))
			return -1;
		v->cand[v->ncand++] = (struct cand){ el, sc, r };
	}
	if (v->ncand > 1)
		qsort(v->cand, v->ncand, sizeof(*v->cand), cand_cmp);
	return 0;
}

static int through(const struct loc_net *n, const struct loc_paths *p, const struct loc_obs *g, uint32_t el);

/* where an element is: a NIC or a host its node (tagged), a link its two switches */
static void locus(const struct loc_net *n, uint32_t el, uint64_t *a, uint64_t *b)
{
	if (el >= n->host0) {
		*a = *b = 1ull << 40 | (el - n->host0);
	} else if (el >= n->nic0) {
		*a = *b = 1ull << 40 | n->ports[el - n->nic0].host;
	} else {
		const struct topo_link *l = &n->t->ln[el / 2];

		*a = (uint64_t)l->a.sw;
		*b = (uint64_t)l->b.sw;
	}
}

static int near(const struct loc_net *n, uint32_t x, uint32_t y)
{
	uint64_t xa, xb, ya, yb;

	locus(n, x, &xa, &xb);
	locus(n, y, &ya, &yb);
	return xa == ya || xa == yb || xb == ya || xb == yb;
}

/*
 * The suspect taken in this pass (from first on) whose failing groups are
 * c's too (a quarter of c's or more), or whose place is c's (a NIC and its
 * host, two cables of a switch): NULL when none.  v->mark[k]: the suspect
 * (index + 1) that failing group k went through, first.
 */
static struct loc_suspect *vote_overlap(struct loc_vote *v, const struct loc_net *n, const struct loc_paths *p,
					const struct loc_obs *obs, size_t first, uint32_t c)
{
	size_t j, k, nc = 0, shared = 0, owner = 0;

	for (j = first; j < v->ns; j++)
		if (near(n, v->s[j].elem, c))
			return &v->s[j];
	if (v->ns == first)
		return NULL;
	for (k = 0; k < v->nfail; k++) {
		if (!through(n, p, &obs[v->fail[k]], c))
			continue;
		nc++;
		if (v->mark[k]) {
			if (!shared++)
				owner = v->mark[k] - 1;
		}
	}
	return nc && 4 * shared >= nc ? &v->s[owner] : NULL;
}

/*
 * Take the candidates, best first, but never two in one pass that explain
 * the same failing groups or stand in one place: the lesser is a rival of
 * the one taken when within o->tie of its score, and the next pass, with
 * the one taken in the model, says whether it was explained away (an
 * alternative) or stands on its own (taken then).
 */
static int vote_take(struct loc_vote *v, const struct loc_net *n, const struct loc_paths *p, const struct loc_obs *obs,
		     const struct loc_opts *o)
{
	size_t first = v->ns, i, j, k;

	memset(v->mark, 0, v->nfail * sizeof(*v->mark));
	for (i = 0; i < v->ncand && (int)v->ns < o->max_suspects; i++) {
		const struct cand *c = &v->cand[i];
		struct loc_suspect *s = vote_overlap(v, n, p, obs, first, c->el);

		if (s) {
			if (c->score >= o->tie * s->score && s->nrivals < LOC_MAX_ALTS)
				s->rivals[s->nrivals++] = c->el;
			continue;
		}
		if (FS_ALLOC_GROW(v->s, v->ns + 1, v->s_alloc))
			return -1;
		s = &v->s[v->ns++];
		memset(s, 0, sizeof(*s));
		s->elem = c->el;
		s->score = c->score;
		s->bad = v->o[s->elem];
		s->sent = v->x[s->elem];
		s->rate = c->rate;
		s->excess = c->rate * s->sent;
		for (k = 0; k < v->nfail; k++)
			if (!v->mark[k] && through(n, p, &obs[v->fail[k]], c->el))
				v->mark[k] = (uint32_t)v->ns;
	}
	for (j = first; j < v->ns; j++)
		v->rate[v->s[j].elem] += v->s[j].rate;
	return 0;
}

/* the suspects' rates and the baseline again, from what the model leaves unexplained */
static void vote_refine(struct loc_vote *v, const struct loc_net *n, const struct loc_paths *p,
			const struct loc_obs *obs, const struct loc_opts *o)
{
	double explained = 0, r;
	size_t j;

	for (j = 0; j < v->ns; j++) {
		struct loc_suspect *s = &v->s[j];

		exact_score(v, n, p, obs, s->elem, v->rate[s->elem], &r);
		v->rate[s->elem] = s->rate = r;
		s->excess = r * v->x[s->elem];
		explained += s->excess;
	}
	v->p0 = v->sent > 0 ? (v->bad - explained) / v->sent : 0;
	if (v->p0 < o->base_loss)
		v->p0 = o->base_loss;
}

/* which rivals of the suspects taken from first on did taking them explain away: alternatives */
static void vote_alts(struct loc_vote *v, const struct loc_net *n, const struct loc_paths *p,
		      const struct loc_obs *obs, const struct loc_opts *o, size_t first)
{
	double r;
	size_t j;
	int i;

	for (j = first; j < v->ns; j++) {
		struct loc_suspect *s = &v->s[j];

		for (i = 0; i < s->nrivals; i++)
			if (elem_score(v, n, p, obs, s->rivals[i], o, &r) < o->min_score)
				s->alts[s->nalts++] = s->rivals[i];
	}
}

/* the share of g's probes that cross el: on its path set (a link), an end of it (a NIC, a host: 1) */
static double share_of(const struct loc_net *n, const struct loc_paths *p, const struct loc_obs *g, uint32_t el)
{
	size_t lo, hi;

	if (el >= n->host0)
		return n->ports[g->port_a].host == el - n->host0 || n->ports[g->port_b].host == el - n->host0;
	if (el >= n->nic0)
		return g->port_a == el - n->nic0 || g->port_b == el - n->nic0;
	lo = p->off[g->set];
	hi = p->off[g->set + 1];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->share[mid].elem < el)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->off[g->set + 1] && p->share[lo].elem == el ? p->share[lo].w : 0;
}

static int through(const struct loc_net *n, const struct loc_paths *p, const struct loc_obs *g, uint32_t el)
{
	return share_of(n, p, g, el) > 0;
}

static uint32_t edge_from(const struct loc_net *n, uint32_t edge)
{
	const struct topo_link *l = &n->t->ln[edge / 2];

	return (uint32_t)(edge & 1 ? l->b.sw : l->a.sw);
}

/* avoids el but passes where it begins: leaves its switch by another cable (a link), its node by
 * another NIC (a NIC) */
static int beside(const struct loc_net *n, const struct loc_paths *p, const struct loc_obs *g, uint32_t el)
{
	size_t j;

	if (el >= n->host0)
		return 0;
	if (el >= n->nic0) {
		uint32_t h = n->ports[el - n->nic0].host;

		return (n->ports[g->port_a].host == h && g->port_a != el - n->nic0) ||
		       (n->ports[g->port_b].host == h && g->port_b != el - n->nic0);
	}
	for (j = p->off[g->set]; j < p->off[g->set + 1]; j++)
		if (p->share[j].elem < n->nic0 && p->share[j].elem != el &&
		    edge_from(n, p->share[j].elem) == edge_from(n, el))
			return 1;
	return 0;
}

static void vote_evidence(struct loc_vote *v, const struct loc_net *n, const struct loc_paths *p,
			  const struct loc_obs *obs, size_t nobs)
{
	size_t i, k;

	for (k = 0; k < v->ns; k++) {
		struct loc_suspect *s = &v->s[k];

		s->traced = 1;
		for (i = 0; i < nobs; i++) {
			int failed = loc_group_failed(obs[i].sent, obs[i].bad, v->p0);

			if (through(n, p, &obs[i], s->elem)) {
				if (failed) {
					s->failing++;
					if (s->elem < n->nic0 && !p->traced[obs[i].set])
						s->traced = 0;
				}
			} else if (!failed && obs[i].bad == 0 && obs[i].sent > 0 && beside(n, p, &obs[i], s->elem)) {
				s->healthy++;
			}
		}
		if (s->elem >= n->nic0)
			s->traced = 0;	/* a NIC or a host needs no path */
	}
}

/* the failing groups under the first baseline: v->fail, and their marks */
static int vote_failing(struct loc_vote *v, const struct loc_obs *obs, size_t nobs)
{
	size_t i;

	v->nfail = v->nbadg = 0;
	free(v->q);
	if (!(v->q = calloc(nobs + 1, sizeof(*v->q))))
		return -1;
	for (i = 0; i < nobs; i++) {
		if (obs[i].bad > 0) {
			if (FS_ALLOC_GROW(v->badg, v->nbadg + 1, v->badg_alloc))
				return -1;
			v->badg[v->nbadg++] = (uint32_t)i;
		}
		if (!loc_group_failed(obs[i].sent, obs[i].bad, v->p0))
			continue;
		if (FS_ALLOC_GROW(v->fail, v->nfail + 1, v->fail_alloc))
			return -1;
		v->fail[v->nfail++] = (uint32_t)i;
	}
	v->failing = (long)v->nfail;
	free(v->mark);
	free(v->xg);
	v->mark = calloc(v->nfail + 1, sizeof(*v->mark));
	v->xg = calloc(v->nbadg + 1, sizeof(*v->xg));
	return v->mark && v->xg ? 0 : -1;
}

int loc_vote(struct loc_vote *v, const struct loc_net *n, const struct loc_paths *p, const struct loc_obs *obs,
	     size_t nobs, const struct loc_opts *o)
{
	size_t i, first = 0;
	int pass;

	v->ns = 0;
	v->sent = v->bad = 0;
	v->groups = (long)nobs;
	v->failing = 0;
	if (vote_alloc(v, n->nelems, n->nports, p->nsets))
		return fs_err_env("out of memory voting over %zu probe groups", nobs);
	for (i = 0; i < nobs; i++) {
		v->sent += obs[i].sent;
		v->bad += obs[i].bad;
	}
	v->p0 = v->sent > 0 && v->bad / v->sent > o->base_loss ? v->bad / v->sent : o->base_loss;
	if (vote_failing(v, obs, nobs))
		return fs_err_env("out of memory voting over %zu probe groups", nobs);
	memset(v->rate, 0, n->nelems * sizeof(double));
	for (pass = 0; pass <= LOC_MAX_PASSES; pass++) {
		vote_pass(v, n, p, obs, nobs);
		if (pass > 0) {
			vote_refine(v, n, p, obs, o);
			vote_pass(v, n, p, obs, nobs);
		}
		vote_alts(v, n, p, obs, o, first);
		first = v->ns;
		if (pass == LOC_MAX_PASSES || (int)v->ns >= o->max_suspects)
			break;
		if (vote_cands(v, n, p, obs, o) || vote_take(v, n, p, obs, o))
			return fs_err_env("out of memory voting over %zu probe groups", nobs);
		if (v->ns == first)
			break;
	}
	vote_evidence(v, n, p, obs, nobs);
	return 0;
}

/* ---- hysteresis ---- */

int loc_track_init(struct loc_track *t, size_t nelems)
{
	memset(t, 0, sizeof(*t));
	if (!(t->el = calloc(nelems ? nelems : 1, sizeof(*t->el))))
		return fs_err_env("out of memory keeping %zu elements' state", nelems);
	t->nel = nelems;
	return 0;
}

void loc_track_release(struct loc_track *t)
{
	free(t->el);
	free(t->named);
	free(t->last);
	free(t->ch);
	memset(t, 0, sizeof(*t));
}

static long named_find(const struct loc_track *t, uint32_t el)
{
	size_t lo = 0, hi = t->nnamed;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->named[mid] < el)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int track_change(struct loc_track *t, uint32_t el, int named, const struct loc_suspect *why)
{
	size_t at = (size_t)named_find(t, el);

	if (FS_ALLOC_GROW(t->ch, t->nch + 1, t->ch_alloc))
		return -1;
	t->ch[t->nch].elem = el;
	t->ch[t->nch].named = named;
	if (why)
		t->ch[t->nch].why = *why;
	else if (at < t->nnamed && t->named[at] == el)
		t->ch[t->nch].why = t->last[at];
	t->nch++;
	if (named) {
		size_t a2 = t->named_alloc;

		if (FS_ALLOC_GROW(t->named, t->nnamed + 1, t->named_alloc))
			return -1;
		if (FS_ALLOC_GROW(t->last, t->nnamed + 1, a2))
			return -1;
		memmove(t->named + at + 1, t->named + at, (t->nnamed - at) * sizeof(*t->named));
		memmove(t->last + at + 1, t->last + at, (t->nnamed - at) * sizeof(*t->last));
		t->named[at] = el;
		t->last[at] = *why;
		t->nnamed++;
	} else {
		memmove(t->named + at, t->named + at + 1, (t->nnamed - at - 1) * sizeof(*t->named));
		memmove(t->last + at, t->last + at + 1, (t->nnamed - at - 1) * sizeof(*t->last));
		t->nnamed--;
	}
	return 0;
}

int loc_track_step(struct loc_track *t, const struct loc_vote *v, int k)
{
	size_t i;
	uint32_t el;

	t->nch = 0;
	t->interval++;
	for (el = 0; el < t->nel; el++)
		t->el[el].inconclusive = 0;
	/* a suspect this interval: mark it (bad_run counts below) */
	for (i = 0; i < v->ns; i++) {
		if (v->s[i].elem >= t->nel)
			continue;
		if (v->s[i].nalts)
			t->el[v->s[i].elem].inconclusive = 1;
	}
	for (el = 0; el < t->nel; el++) {
		struct loc_elem_track *e = &t->el[el];
		const struct loc_suspect *why = NULL;

		for (i = 0; i < v->ns; i++)
			if (v->s[i].elem == el && !v->s[i].nalts)
				why = &v->s[i];
		if (why) {
			e->ok_run = 0;
			if (e->bad_run < UINT16_MAX)
				e->bad_run++;
			if (e->named) {
				long at = named_find(t, el);

				t->last[at] = *why;
			} else if (e->bad_run >= k) {
				e->named = 1;
				if (track_change(t, el, 1, why))
					return fs_err_env("out of memory keeping verdicts");
			}
		} else {
			e->bad_run = 0;
			if (e->ok_run < UINT16_MAX)
				e->ok_run++;
			if (e->named && e->ok_run >= k) {
				e->named = 0;
				if (track_change(t, el, 0, NULL))
					return fs_err_env("out of memory keeping verdicts");
			}
		}
	}
	return 0;
}
