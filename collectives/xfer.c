/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The collectives' data path: a set of transfers to and from peers, each
 * cut into --chunk sized messages (SEND/RECV), run to completion together.
 * Chunk k of a transfer travels on flow k mod --flows; a receiver posts its
 * RECVs in the same order, so both sides agree on where each chunk lands
 * (a SEND consumes the oldest RECV of its flow).  At most --tx-depth
 * messages of one transfer are outstanding.  A receive with reduce_into set
 * is added (float32) into that buffer, at the same offset, as it arrives,
 * which overlaps the reduction with the rest of the transfer.
 *
 * A peer that sends nothing for --timeout seconds ends the run with its
 * name; a completion error names the peer and the transport's reason.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/clock.h"
#include "../core/error.h"
#include "../core/net.h"
#include "../core/output.h"
#include "coll.h"

#define WR_RECV (1ull << 63)
#define WR_TOKEN (1ull << 62)
#define WR_XFER_SHIFT 40

static uint64_t chunk_len(const struct coll_xfer *t, uint64_t k, uint64_t chunk)
{
	uint64_t left = t->len - k * chunk;

	return left < chunk ? left : chunk;
}

int coll_post(struct coll_comm *c, int peer, int is_recv, uint64_t wr_id, const uint8_t *buf,
	      uint64_t len, int flow)
{
	struct xport_wr wr = {
		.op = is_recv ? XPORT_OP_RECV : XPORT_OP_SEND,
		.flow = flow,
		.flags = is_recv ? 0 : XPORT_WR_SIGNALED,
		.wr_id = wr_id,
		.mr = &c->mr,
		.off = (uint64_t)(buf - c->mem),
		.len = (uint32_t)len,
	};
	int rc = xport_post(c->conn[peer], &wr);

	if (rc) {
		char who[128];

		snprintf(c->err, sizeof(c->err), "cannot post a %s for %s: %s",
			 is_recv ? "receive" : "send", coll_rank_str(c, peer, who, sizeof(who)),
			 xport_errmsg(c->x));
		if (rc != -ENOTCONN)
			return -FS_EXIT_ENV;
		c->err_peer = peer;	/* it went away: it may have said why (coll_peer_cause) */
		return -FS_EXIT_PEER;
	}
	return 0;
}

/* ---- the readiness handshake (see coll.h) ---- */

static int token_post_recv(struct coll_comm *c, int peer)
{
	return coll_post(c, peer, 1, WR_RECV | WR_TOKEN | (uint64_t)peer, c->mem + 3 * c->cap, 8,
			 c->o->flows);
}

int coll_tokens_init(struct coll_comm *c)
{
	int i, k, rc;

	c->ready = calloc((size_t)c->nranks, sizeof(*c->ready));
	if (!c->ready)
		return -FS_EXIT_ENV;
	for (i = 0; c->tokens && i < c->nranks; i++)
		for (k = 0; c->conn[i] && k < COLL_TOKENS; k++)
			if ((rc = token_post_recv(c, i)))
				return rc;
	return 0;
}

int coll_token_send(struct coll_comm *c, int peer)
{
	if (!c->tokens)
		return 0;
	return coll_post(c, peer, 0, WR_TOKEN | (uint64_t)peer, c->mem + 3 * c->cap + 8, 8,
			 c->o->flows);
}

int coll_is_token(const struct xport_wc *wc)
{
	return !!(wc->wr_id & WR_TOKEN);
}

int coll_token_wc(struct coll_comm *c, const struct xport_wc *wc)
{
	int is_recv = !!(wc->wr_id & WR_RECV), peer = (int)(wc->wr_id & 0xffffffffu);

	if (peer >= c->nranks || !c->conn[peer]) {
		snprintf(c->err, sizeof(c->err), "a token completion for no peer (wr_id %llx)",
			 (unsigned long long)wc->wr_id);
		return -FS_EXIT_ENV;
	}
	if (wc->status != XPORT_WC_OK)
		return coll_wc_error(c, wc, is_recv, peer);
	if (!is_recv)
		return 0;
	c->ready[peer]++;
	return token_post_recv(c, peer);
}

int coll_token_take(struct coll_comm *c, int peer)
{
	if (!c->tokens)
		return 1;
	if (!c->ready[peer])
		return 0;
	c->ready[peer]--;
	return 1;
}

static int post_chunk(struct coll_comm *c, struct coll_xfer *t, int idx, int is_recv)
{
	uint64_t chunk = c->o->chunk, k = t->posted;
	int rc = coll_post(c, t->peer, is_recv, (is_recv ? WR_RECV : 0) | (uint64_t)idx << WR_XFER_SHIFT | k,
			   t->buf + t->off + k * chunk, chunk_len(t, k, chunk),
			   (int)(k % (uint64_t)c->o->flows));

	if (!rc)
		t->posted++;
	return rc;
}

void coll_spoil(struct coll_comm *c, uint8_t *p, uint64_t len)
{
	if (c->corrupt_now && len >= 4) {	/* testing: a wrong element on the wire */
		*(float *)p += 1000.0f;
		c->corrupt_now = 0;
	}
}

void coll_reduce(uint8_t *dst, const uint8_t *a, const uint8_t *b, uint64_t len)
{
	float *d = (float *)dst;
	const float *x = (const float *)a, *restrict y = (const float *)b;
	uint64_t i, n = len / 4;

	for (i = 0; i < n; i++)	/* dst may be a: element by element, that is fine */
		d[i] = x[i] + y[i];
}

int coll_wc_error(struct coll_comm *c, const struct xport_wc *wc, int is_recv, int peer)
{
	char who[128];

	snprintf(c->err, sizeof(c->err), "%s %s %s failed: %s (%s)", is_recv ? "receive" : "send",
		 is_recv ? "from" : "to", coll_rank_str(c, peer, who, sizeof(who)),
		 xport_wc_status_str(wc->status), xport_errmsg(c->x));
	c->err_peer = peer;
	return -FS_EXIT_PEER;
}

void coll_flush(struct coll_comm *c)
{
	struct xport_wc wc[16];
	int i;

	/* A software transport acknowledges what it received on its next
	 * passes through xport_poll; the peers' last sends complete only when
	 * those acks leave, and this rank may go on to wait on the control
	 * channel.  Nothing is outstanding now, so these polls reap nothing. */
	if (c->x->ops->caps & XPORT_CAP_SOFTWARE)
		for (i = 0; i < 2; i++) {
			int n = xport_poll(c->x, wc, 16, 0), k;

			if (n < 0)
				break;
			for (k = 0; k < n; k++)	/* only tokens can be here */
				if (coll_is_token(&wc[k]))
					coll_token_wc(c, &wc[k]);
		}
}

static int arrived(struct coll_comm *c, struct coll_xfer *t, const struct xport_wc *wc)
{
	uint64_t chunk = c->o->chunk, k = wc->wr_id & ((1ull << WR_XFER_SHIFT) - 1);
	uint64_t len = chunk_len(t, k, chunk), off = t->off + k * chunk;

	if (wc->len != len) {
		snprintf(c->err, sizeof(c->err), "rank %d sent %u bytes where %llu were due: the ranks "
			 "disagree on the message layout (different fabscope versions?)", t->peer,
			 wc->len, (unsigned long long)len);
		return -FS_EXIT_PEER;
	}
	coll_spoil(c, t->buf + off, len);
	if (t->reduce_into)
		coll_reduce(t->reduce_into + off, t->reduce_into + off, t->buf + off, len);
	return 0;
}

static const char *pending_peers(struct coll_xfer *send, int nsend, struct coll_xfer *recv, int nrecv,
				 char *buf, size_t len)
{
	size_t o = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < nrecv && o < len; i++)
		if (recv[i].done < recv[i].chunks)
			o += (size_t)snprintf(buf + o, len - o, "%sfrom rank %d", o ? ", " : "", recv[i].peer);
	for (i = 0; i < nsend && o < len; i++)
		if (send[i].done < send[i].chunks)
			o += (size_t)snprintf(buf + o, len - o, "%sto rank %d", o ? ", " : "", send[i].peer);
	return buf;
}

int coll_run_xfers(struct coll_comm *c, struct coll_xfer *send, int nsend,
		   struct coll_xfer *recv, int nrecv)
{
	uint64_t chunk = c->o->chunk, depth = (uint64_t)c->o->tx_depth, total = 0, finished = 0;
	/* with XPORT_CAP_RNR, twice as many RECVs posted as SENDs may be
	 * outstanding: a sender whose message completed may post the next
	 * before the receiver has reaped that RECV and posted another (verbs
	 * QPs have room for 2 x --tx-depth + 8) */
	uint64_t rwin = c->tokens ? 2 * depth : depth;
	uint64_t last = clock_ns();
	struct xport_wc wc[64];
	int i, rc, n;

	for (i = 0; i < nsend + nrecv; i++) {
		struct coll_xfer *t = i < nsend ? &send[i] : &recv[i - nsend];

		t->chunks = (t->len + chunk - 1) / chunk;
		t->posted = t->done = 0;
		t->ready = 0;
		total += t->chunks;
	}
	while (finished < total) {
		for (i = 0; i < nrecv; i++) {
			while (recv[i].posted < recv[i].chunks && recv[i].posted - recv[i].done < rwin)
				if ((rc = post_chunk(c, &recv[i], i, 1)))
					return rc;
			if (!recv[i].ready && recv[i].chunks) {	/* the sender may start */
				if ((rc = coll_token_send(c, recv[i].peer)))
					return rc;
				recv[i].ready = 1;
			}
		}
		for (i = 0; i < nsend; i++) {
			if (!send[i].ready && !(send[i].ready = coll_token_take(c, send[i].peer)))
				continue;	/* the receiver is not ready yet */
			while (send[i].posted < send[i].chunks && send[i].posted - send[i].done < depth)
				if ((rc = post_chunk(c, &send[i], i, 0)))
					return rc;
		}
		n = xport_poll(c->x, wc, 64, 100);
		if (n < 0) {
			snprintf(c->err, sizeof(c->err), "polling for completions: %s", xport_errmsg(c->x));
			return -FS_EXIT_ENV;
		}
		if (net_stop)
			return -FS_EXIT_INTERRUPTED;
		if (!n) {
			if (clock_ns() - last > (uint64_t)c->timeout_ms * 1000000ull) {
				char who[200];

				snprintf(c->err, sizeof(c->err), "no progress for %g s waiting for data %s: a peer "
					 "hangs or its link is down (raise --timeout for slow links)",
					 c->timeout_ms / 1000.0, pending_peers(send, nsend, recv, nrecv, who, sizeof(who)));
				return -FS_EXIT_PEER;
			}
			continue;
		}
		last = clock_ns();
		for (i = 0; i < n; i++) {
			int is_recv = !!(wc[i].wr_id & WR_RECV);
			int idx = (int)((wc[i].wr_id & ~WR_RECV) >> WR_XFER_SHIFT);
			struct coll_xfer *t;

			if (coll_is_token(&wc[i])) {
				if ((rc = coll_token_wc(c, &wc[i])))
					return rc;
				continue;
			}
			if ((is_recv && idx >= nrecv) || (!is_recv && idx >= nsend)) {
				snprintf(c->err, sizeof(c->err), "a completion for no transfer (wr_id %llx)",
					 (unsigned long long)wc[i].wr_id);
				return -FS_EXIT_ENV;
			}
			t = is_recv ? &recv[idx] : &send[idx];
			if (wc[i].status != XPORT_WC_OK)
				return coll_wc_error(c, &wc[i], is_recv, t->peer);
			if (is_recv && (rc = arrived(c, t, &wc[i])))
				return rc;
			c->moved += chunk_len(t, t->done, chunk);
			t->done++;
			finished++;
		}
		if (out_progress_due(last))
			coll_progress_report(c);
	}
	coll_flush(c);
	return 0;
}
