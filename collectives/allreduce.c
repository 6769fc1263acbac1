/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * All-reduce, float32 sum, out of place (sendbuf -> recvbuf), as
 * nccl-tests runs it.
 *
 * ring: the vector is cut into n segments (the first count % n one element
 * longer).  Reduce-scatter: in step s = 0..n-2 the rank at ring position p
 * sends segment p-s to its successor and adds segment p-s-1, arriving from
 * its predecessor into the staging buffer, into recvbuf; after n-1 steps it
 * holds the full sum of segment p+1.  All-gather: in step s it forwards
 * segment p+1-s and receives segment p-s straight into recvbuf.  Every link
 * carries 2(n-1)/n of the vector, which is where nccl-tests' bus bandwidth
 * factor comes from.  Within a step the segment travels in --chunk pieces
 * and each piece is reduced as it lands.
 *
 * rhd (Rabenseifner): p = the largest power of two <= n; the first
 * 2(n-p) positions pair up and the even one hands its vector to the odd
 * one (which reduces it), leaving p ranks.  Those halve: at distance p/2,
 * p/4, ..., 1 each keeps one half of its current range, sends the other
 * and reduces the partner's copy of the kept half; then they double back
 * the same way, exchanging finished ranges straight into recvbuf.  Last,
 * the odd positions of the fold send the result to their even partners.
 * log2(p) steps each way: fewer, larger messages than the ring on few
 * ranks, and the choice for latency-bound sizes.
 *
 * Test data (coll_fill/coll_check): small integers, so sums are exact in
 * float32 whatever the order of the additions, and every element of every
 * rank can be checked exactly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/clock.h"
#include "../core/error.h"
#include "../core/net.h"
#include "../core/output.h"

#include "coll.h"

/* element i of the rank at group position r: an integer in [-8, 8] */
static inline float elem(int r, uint64_t i)
{
	uint32_t h = (uint32_t)(i * 2654435761u) ^ ((uint32_t)r * 40503u + 0x9e37u);

	h ^= h >> 15;
	return (float)((int)(h % 17u) - 8);
}

/* alltoall: element i of the block that position r sends to position j */
static inline float a2a_elem(int r, int j, uint64_t i)
{
	return (float)(((uint64_t)r * 1000003u + (uint64_t)j * 7919u + i) % 4093u) - 2046.0f;
}

uint64_t coll_count(const struct coll_opts *o, uint64_t bytes, int n)
{
	if (o->kind == COLL_ALLREDUCE)
		return bytes / 4;
	return bytes / 4 / (uint64_t)n;	/* alltoall: elements per peer */
}

double coll_bus_factor(enum coll_kind k, int n)
{
	if (n < 1)
		return 0;	/* (one rank: 0, nothing crosses the fabric) */
	return k == COLL_ALLREDUCE ? 2.0 * (n - 1) / n : (double)(n - 1) / n;
}

void coll_fill(struct coll_comm *c, uint64_t count)
{
	float *s = (float *)c->sendbuf;
	uint64_t i;
	int j;

	if (c->o->kind == COLL_ALLREDUCE) {
		for (i = 0; i < count; i++)
			s[i] = elem(c->gpos, i);
	} else {
		for (j = 0; j < c->gn; j++)
			for (i = 0; i < count; i++)
				s[(uint64_t)j * count + i] = a2a_elem(c->gpos, j, i);
	}
	memset(c->recvbuf, 0xff, c->o->kind == COLL_ALLREDUCE ? count * 4 : count * 4 * (uint64_t)c->gn);
}

uint64_t coll_check(struct coll_comm *c, uint64_t count)
{
	const float *d = (const float *)c->recvbuf;
	uint64_t i, wrong = 0;
	int r;

	if (c->o->kind == COLL_ALLREDUCE) {
		for (i = 0; i < count; i++) {
			float want = 0;

			for (r = 0; r < c->gn; r++)
				want += elem(r, i);
			wrong += d[i] != want;
		}
	} else {
		for (r = 0; r < c->gn; r++)
			for (i = 0; i < count; i++)
				wrong += d[(uint64_t)r * count + i] != a2a_elem(r, c->gpos, i);
	}
	return wrong;
}

/* segment k of n over count elements, in bytes */
static void segment(uint64_t count, int n, int k, uint64_t *off, uint64_t *len)
{
	uint64_t base = count / (uint64_t)n, rem = count % (uint64_t)n, kk = (uint64_t)k;

	*off = 4 * (kk * base + (kk < rem ? kk : rem));
	*len = 4 * (base + (kk < rem));
}

static int mod(int a, int n)
{
	return ((a % n) + n) % n;
}

/* The ring, pipelined across steps: message m = s * C + k is chunk k of
 * step s (C chunks per segment).  Send m may leave once receive m - C (the
 * same chunk of the same segment, one step earlier) has landed and been
 * reduced, so every link streams without waiting for whole steps.  A
 * zero-length chunk (a segment shorter than the others) is skipped by both
 * ends alike. */
struct ring_state {
	int n, p, next, prev;
	uint64_t count, C, K, chunk;
};

static void ring_msg(const struct ring_state *r, uint64_t m, int is_recv, uint64_t *off, uint64_t *len)
{
	int s = (int)(m / r->C), rs = s < r->n - 1, t = rs ? s : s - (r->n - 1), seg;
	uint64_t k = m % r->C, soff, slen;

	if (is_recv)
		seg = rs ? mod(r->p - t - 1, r->n) : mod(r->p - t, r->n);
	else
		seg = rs ? mod(r->p - t, r->n) : mod(r->p + 1 - t, r->n);
	segment(r->count, r->n, seg, &soff, &slen);
	*off = soff + k * r->chunk;
	*len = k * r->chunk >= slen ? 0 : slen - k * r->chunk < r->chunk ? slen - k * r->chunk : r->chunk;
}

static int ring(struct coll_comm *c, uint64_t count)
{
	struct ring_state r = { .n = c->gn, .p = c->gpos, .count = count, .chunk = c->o->chunk };
	uint64_t depth = (uint64_t)c->o->tx_depth, rpost = 0, spost = 0, sdone = 0, rdone = 0, m;
	uint64_t flows = (uint64_t)c->o->flows, last = clock_ns();
	uint64_t rwin = c->tokens ? 2 * depth : depth;
	uint8_t *landed;
	struct xport_wc wc[64];
	int rc = 0, i, nwc, token_sent = 0, token_taken = 0;

	r.next = c->gorder[mod(r.p + 1, r.n)];
	r.prev = c->gorder[mod(r.p - 1, r.n)];
	r.C = (count / (uint64_t)r.n + 1) * 4;	/* the longest segment, in bytes */
	r.C = (r.C + r.chunk - 1) / r.chunk;
	r.K = 2 * (uint64_t)(r.n - 1) * r.C;
	landed = calloc(r.K, 1);
	while (!rc && (rdone < r.K || sdone < r.K)) {
		uint64_t off, len;

		/* receives, in message order, up to the depth (twice: see xfer.c) */
		while (rpost < r.K && rpost - rdone < rwin) {
			ring_msg(&r, rpost, 1, &off, &len);
			if (!len) {
				landed[rpost++] = 1;
				rdone++;
				continue;
			}
			if ((rc = coll_post(c, r.prev, 1, rpost | 1ull << 63,
					    (rpost < r.K / 2 ? c->stage : c->recvbuf) + off, len,
					    (int)(rpost % flows))))
				break;
			rpost++;
		}
		if (!rc && !token_sent) {	/* the predecessor may start */
			rc = coll_token_send(c, r.prev);
			token_sent = 1;
		}
		if (!token_taken)	/* start once the successor is ready */
			token_taken = coll_token_take(c, r.next);
		/* sends whose data is final */
		while (!rc && token_taken && spost < r.K && spost - sdone < depth && (spost < r.C || landed[spost - r.C])) {
			ring_msg(&r, spost, 0, &off, &len);
			if (!len) {
				spost++;
				sdone++;
				continue;
			}
			/* step 0 sends this rank's own segment straight from its input */
			if ((rc = coll_post(c, r.next, 0, spost, (spost < r.C ? c->sendbuf : c->recvbuf) + off,
					    len, (int)(spost % flows))))
				break;
			spost++;
		}
		if (rc || (rdone == r.K && sdone == r.K))
			break;
		nwc = xport_poll(c->x, wc, 64, 100);
		if (nwc < 0) {
			snprintf(c->err, sizeof(c->err), "polling for completions: %s", xport_errmsg(c->x));
			rc = -FS_EXIT_ENV;
			break;
		}
		if (net_stop) {
			rc = -FS_EXIT_INTERRUPTED;
			break;
		}
		if (!nwc) {
			if (clock_ns() - last > (uint64_t)c->timeout_ms * 1000000ull) {
				c->err_peer = rdone < r.K ? r.prev : r.next;
				snprintf(c->err, sizeof(c->err), "no progress for %g s in the ring (waiting %s rank %d): "
					 "a peer hangs or its link is down (raise --timeout for slow links)",
					 c->timeout_ms / 1000.0, rdone < r.K ? "for data from" : "for acks from",
					 c->err_peer);
				rc = -FS_EXIT_PEER;
			}
			continue;
		}
		last = clock_ns();
		for (i = 0; i < nwc && !rc; i++) {
			int is_recv = !!(wc[i].wr_id >> 63);

			if (coll_is_token(&wc[i])) {
				rc = coll_token_wc(c, &wc[i]);
				continue;
			}
			m = wc[i].wr_id & ~(1ull << 63);
			if (m >= r.K) {
				snprintf(c->err, sizeof(c->err), "a completion for no message (wr_id %llx)",
					 (unsigned long long)wc[i].wr_id);
				rc = -FS_EXIT_ENV;
				break;
			}
			if (wc[i].status != XPORT_WC_OK) {
				rc = coll_wc_error(c, &wc[i], is_recv, is_recv ? r.prev : r.next);
				break;
			}
			if (!is_recv) {
				ring_msg(&r, m, 0, &off, &len);
				c->moved += len;
				sdone++;
				continue;
			}
			ring_msg(&r, m, 1, &off, &len);
			if (wc[i].len != len) {
				snprintf(c->err, sizeof(c->err), "rank %d sent %u bytes where %llu were due: the "
					 "ranks disagree on the message layout", r.prev, wc[i].len,
					 (unsigned long long)len);
				rc = -FS_EXIT_PEER;
				break;
			}
			if (m < r.K / 2) {	/* reduce-scatter: each segment comes once, our input + it */
				coll_spoil(c, c->stage + off, len);
				coll_reduce(c->recvbuf + off, c->sendbuf + off, c->stage + off, len);
			} else {
				coll_spoil(c, c->recvbuf + off, len);
			}
			landed[m] = 1;
			c->moved += len;
			rdone++;
		}
		if (out_progress_due(last))
			coll_progress_report(c);
	}
	free(landed);
	if (!rc)
		coll_flush(c);
	return rc;
}

static int exchange(struct coll_comm *c, int peer, uint64_t soff, uint64_t slen, uint64_t roff,
		    uint64_t rlen, int reduce)
{
	struct coll_xfer snd = { .c = c, .peer = peer, .buf = c->recvbuf, .off = soff, .len = slen };
	struct coll_xfer rcv = { .c = c, .peer = peer, .buf = reduce ? c->stage : c->recvbuf,
				 .off = roff, .len = rlen, .reduce_into = reduce ? c->recvbuf : NULL };

	return coll_run_xfers(c, &snd, slen ? 1 : 0, &rcv, rlen ? 1 : 0);
}

static int rhd(struct coll_comm *c, uint64_t count)
{
	int n = c->gn, pos = c->gpos, p, extra, newr, mask, rc, k, steps = 0;
	uint64_t lo = 0, hi = count, los[32], his[32];

	for (p = 1; p * 2 <= n; p *= 2)
		;
	extra = n - p;
	/* fold: even positions below 2*extra give their vector to pos+1 */
	if (pos < 2 * extra) {
		int partner = c->gorder[pos ^ 1];

		if (pos % 2 == 0) {
			rc = exchange(c, partner, 0, count * 4, 0, 0, 0);
			if (rc)
				return rc;
			/* the result comes back at the end */
			return exchange(c, partner, 0, 0, 0, count * 4, 0);
		}
		rc = exchange(c, partner, 0, 0, 0, count * 4, 1);
		if (rc)
			return rc;
		newr = pos / 2;
	} else {
		newr = pos - extra;
	}
#define REAL(nr) ((nr) < extra ? 2 * (nr) + 1 : (nr) + extra)
	/* recursive halving (reduce-scatter) */
	for (mask = p / 2; mask >= 1; mask /= 2) {
		int partner = c->gorder[REAL(newr ^ mask)];
		uint64_t mid = lo + (hi - lo) / 2;

		los[steps] = lo;
		his[steps] = hi;
		steps++;
		if (newr & mask)	/* keep the upper half */
			rc = exchange(c, partner, lo * 4, (mid - lo) * 4, mid * 4, (hi - mid) * 4, 1), lo = mid;
		else
			rc = exchange(c, partner, mid * 4, (hi - mid) * 4, lo * 4, (mid - lo) * 4, 1), hi = mid;
		if (rc)
			return rc;
	}
	/* recursive doubling (all-gather), the same partners backwards */
	for (k = steps - 1, mask = 1; mask < p; mask *= 2, k--) {
		int partner = c->gorder[REAL(newr ^ mask)];
		uint64_t plo = los[k], phi = his[k];
		uint64_t olo = lo == plo ? hi : plo, ohi = lo == plo ? phi : lo;	/* the partner's part */

		rc = exchange(c, partner, lo * 4, (hi - lo) * 4, olo * 4, (ohi - olo) * 4, 0);
		if (rc)
			return rc;
		lo = plo;
		hi = phi;
	}
#undef REAL
	if (pos < 2 * extra)	/* odd position of the fold: hand the result back */
		return exchange(c, c->gorder[pos ^ 1], 0, count * 4, 0, 0, 0);
	return 0;
}

int coll_allreduce(struct coll_comm *c, uint64_t count)
{
	/* The ring reads its input where it needs it and writes every element
	 * of the result (a segment is reduced into it once, or arrives whole in
	 * the all-gather), so it skips this copy: at 64 MiB the copy held a
	 * rank's outgoing link idle for 1-2 % of an iteration. */
	if (c->gn >= 2 && count && c->o->algo == COLL_ALGO_RING)
		return ring(c, count);
	memcpy(c->recvbuf, c->sendbuf, count * 4);
	if (c->gn < 2 || !count)
		return 0;
	return rhd(c, count);
}
