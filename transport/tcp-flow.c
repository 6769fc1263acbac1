/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The TCP backend, one flow: rings, the header codec, completions, the send
 * path (batched sendmsg, piggy-backed acks) and the receive path (staging
 * buffer, payloads straight into place, bounds checks).  The wire format
 * is described in tcp.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../core/clock.h"
#include "../core/net.h"
#include "transport.h"

#include "tcp.h"

/* ---- rings ---- */

int tcp_ring_init(struct ring *r, size_t esz, size_t cap)
{
	r->v = calloc(cap, esz);
	r->esz = esz;
	r->cap = cap;
	r->head = r->tail = 0;
	return r->v ? 0 : -ENOMEM;
}

size_t tcp_ring_count(const struct ring *r)
{
	return r->tail - r->head;
}

void *tcp_ring_at(const struct ring *r, size_t i)	/* absolute index */
{
	return r->v + (i % r->cap) * r->esz;
}

void *tcp_ring_push(struct ring *r)
{
	if (tcp_ring_count(r) == r->cap) {
		size_t ncap = r->cap * 2, i;
		char *nv = calloc(ncap, r->esz);

		if (!nv)
			return NULL;
		for (i = r->head; i < r->tail; i++)
			memcpy(nv + (i % ncap) * r->esz, tcp_ring_at(r, i), r->esz);
		free(r->v);
		r->v = nv;
		r->cap = ncap;
	}
	return tcp_ring_at(r, r->tail++);
}

/* ---- header codec ---- */

void tcp_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

uint32_t tcp_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static void encode_hdr(uint8_t *p, const struct hdr *h)
{
	memset(p, 0, HDR_LEN);
	p[0] = h->type;
	p[1] = h->flags;
	p[2] = HDR_MAGIC;
	p[3] = HDR_VERS;
	tcp_put32(p + 4, h->len);
	tcp_put32(p + 8, h->ack);
	tcp_put32(p + 12, h->rkey);
	tcp_put32(p + 16, (uint32_t)(h->off >> 32));
	tcp_put32(p + 20, (uint32_t)h->off);
	tcp_put32(p + 24, h->imm);
}

static int decode_hdr(const uint8_t *p, struct hdr *h)
{
	if (p[2] != HDR_MAGIC || p[3] != HDR_VERS || p[0] < T_SEND || p[0] > T_ACK)
		return -EPROTO;
	h->type = p[0];
	h->flags = p[1];
	h->len = tcp_get32(p + 4);
	h->ack = tcp_get32(p + 8);
	h->rkey = tcp_get32(p + 12);
	h->off = (uint64_t)tcp_get32(p + 16) << 32 | tcp_get32(p + 20);
	h->imm = tcp_get32(p + 24);
	return 0;
}

/* ---- completions ---- */


void tcp_cq_push(struct tcp_flow *f, uint64_t wr_id, enum xport_op op,
		    enum xport_wc_status st, uint32_t len, const struct hdr *imm)
{
	struct xport_wc *wc = tcp_ring_push(&TX(f->c->x)->cq);

	if (!wc)
		return;	/* out of memory: the completion is lost */
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = wr_id;
	wc->flow = f->idx;
	wc->op = op;
	wc->status = st;
	wc->len = len;
	wc->conn = f->c;
	if (imm) {
		wc->imm = imm->imm;
		wc->has_imm = 1;
	}
}

void tcp_epoll_update(struct tcp_flow *f)
{
	struct epoll_event ev = { .data.ptr = f };
	int want_in = !f->rnr_blocked && !f->broken;

	if (f->fd < 0)
		return;
	ev.events = (want_in ? EPOLLIN : 0) | (f->want_out ? EPOLLOUT : 0);
	epoll_ctl(TX(f->c->x)->epfd, EPOLL_CTL_MOD, f->fd, &ev);
	f->in_on = want_in;
}

/* The flow is dead: flush everything outstanding with an error. */
static void flow_break(struct tcp_flow *f, enum xport_wc_status st,
		       const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void flow_break(struct tcp_flow *f, enum xport_wc_status st,
		       const char *fmt, ...)
{
	struct xport *x = f->c->x;
	char peer[NET_ADDRSTRLEN], msg[160];
	va_list ap;
	size_t i;

	if (f->broken)
		return;
	f->broken = 1;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	net_addr_str(&f->peer, peer, sizeof(peer));
	snprintf(f->why, sizeof(f->why), "tcp flow %d to %s: %s", f->idx, peer, msg);
	xport_fail(x, ECONNRESET, "%s", f->why);
	for (i = f->sq.head; i < f->sq.tail; i++) {
		struct sqe *e = tcp_ring_at(&f->sq, i);

		if (e->signaled && !(e->is_read && i < f->tx_i))
			tcp_cq_push(f, e->wr_id, e->op, st, 0, NULL);
	}
	f->sq.head = f->sq.tail = f->tx_i = 0;
	for (i = f->reads.head; i < f->reads.tail; i++) {
		struct sqe *e = tcp_ring_at(&f->reads, i);

		tcp_cq_push(f, e->wr_id, XPORT_OP_READ, st, 0, NULL);
	}
	f->reads.head = f->reads.tail = 0;
	if (f->cur_rqe.buf) {	/* taken by a message that did not finish */
		tcp_cq_push(f, f->cur_rqe.wr_id, XPORT_OP_RECV, st, 0, NULL);
		memset(&f->cur_rqe, 0, sizeof(f->cur_rqe));
	}
	for (i = f->rq.head; i < f->rq.tail; i++) {
		struct rqe *r = tcp_ring_at(&f->rq, i);

		tcp_cq_push(f, r->wr_id, XPORT_OP_RECV, st, 0, NULL);
	}
	f->rq.head = f->rq.tail = 0;
	if (f->fd >= 0) {
		epoll_ctl(TX(x)->epfd, EPOLL_CTL_DEL, f->fd, NULL);
		close(f->fd);
		f->fd = -1;
	}
}

/* Retire sent entries: data messages once the peer's ack covers them
 * (completing the signaled ones), everything else at once. */
static void sq_retire(struct tcp_flow *f)
{
	while (f->sq.head < f->tx_i) {
		struct sqe *e = tcp_ring_at(&f->sq, f->sq.head);

		if (e->counted && (int32_t)(e->seq - f->peer_acked) >= 0)
			break;
		if (e->signaled && e->counted)
			tcp_cq_push(f, e->wr_id, e->op, XPORT_WC_OK, e->plen, NULL);
		f->sq.head++;
	}
}

/* The peer has received `acked` data messages. */
static void process_ack(struct tcp_flow *f, uint32_t acked)
{
	if ((int32_t)(acked - f->peer_acked) <= 0)
		return;
	if ((int32_t)(acked - f->next_seq) > 0) {
		flow_break(f, XPORT_WC_REMOTE_ERR, "peer acknowledged messages never sent");
		return;
	}
	f->peer_acked = acked;
	sq_retire(f);
}

/* ---- send path ---- */

void tcp_flow_flush(struct tcp_flow *f)
{
	struct iovec iov[64];
	struct msghdr mh = { .msg_iov = iov };
	size_t i;
	ssize_t n;

	while (!f->broken && f->tx_i < f->sq.tail) {
		int niov = 0;

		for (i = f->tx_i; i < f->sq.tail && niov < 62; i++) {
			struct sqe *e = tcp_ring_at(&f->sq, i);
			uint32_t d = e->done;

			if (d == 0) {	/* fill in the freshest ack */
				tcp_put32(e->hdr + 8, f->rx_msgs);
				f->ack_due = 0;
			}
			if (d < HDR_LEN) {
				iov[niov].iov_base = e->hdr + d;
				iov[niov++].iov_len = HDR_LEN - d;
				d = HDR_LEN;
			}
			if (e->plen && d < HDR_LEN + e->plen) {
				iov[niov].iov_base = (void *)(e->payload + (d - HDR_LEN));
				iov[niov++].iov_len = HDR_LEN + e->plen - d;
			}
		}
		mh.msg_iovlen = (size_t)niov;
		n = sendmsg(f->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				if (!f->want_out) {
					f->want_out = 1;
					tcp_epoll_update(f);
				}
				return;
			}
			flow_break(f, XPORT_WC_CONN_LOST, "connection lost: send failed: %s", strerror(errno));
			return;
		}
		while (n > 0) {
			struct sqe *e = tcp_ring_at(&f->sq, f->tx_i);
			uint32_t left = HDR_LEN + e->plen - e->done;
			uint32_t take = (size_t)n < left ? (uint32_t)n : left;

			e->done += take;
			n -= take;
			if (e->done < HDR_LEN + e->plen)
				break;
			f->tx_i++;
			if (e->is_read) {	/* now waits for its response */
				struct sqe *r = tcp_ring_push(&f->reads);

				if (r)
					*r = *e;
			}
		}
		sq_retire(f);
	}
	if (f->want_out && f->tx_i == f->sq.tail) {
		f->want_out = 0;
		tcp_epoll_update(f);
	}
}

int tcp_flow_send_ack(struct tcp_flow *f)
{
	struct sqe *e;
	struct hdr h = { .type = T_ACK };

	e = tcp_ring_push(&f->sq);
	if (!e)
		return -ENOMEM;
	memset(e, 0, sizeof(*e));
	encode_hdr(e->hdr, &h);
	tcp_flow_flush(f);
	return 0;
}

int tcp_enqueue(struct tcp_flow *f, const struct hdr *h, const uint8_t *payload,
		   uint32_t plen, uint64_t wr_id, uint8_t op, int signaled,
		   int counted, uint8_t *read_dst)
{
	struct sqe *e = tcp_ring_push(&f->sq);

	if (!e)
		return -ENOMEM;
	memset(e, 0, sizeof(*e));
	encode_hdr(e->hdr, h);
	e->payload = payload;
	e->plen = plen;
	e->wr_id = wr_id;
	e->op = op;
	e->signaled = (uint8_t)signaled;
	e->counted = (uint8_t)counted;
	e->is_read = read_dst != NULL;
	e->read_dst = read_dst;
	if (counted)
		e->seq = f->next_seq++;
	return 0;
}

/* ---- receive path ---- */

static int check_region(struct tcp_flow *f, uint32_t rkey, uint64_t off,
			uint32_t len, uint8_t **out)
{
	struct tcp_x *t = TX(f->c->x);
	struct tcp_mr *m;

	if (rkey < 1 || rkey > (uint32_t)t->nmrs || !t->mrs[rkey - 1].used)
		return -1;
	m = &t->mrs[rkey - 1];
	if (!(m->access & XPORT_ACCESS_REMOTE) || off > m->len || len > m->len - off)
		return -1;
	*out = (uint8_t *)m->addr + off;
	return 0;
}

/* A whole message has arrived: complete it. */
static void msg_done(struct tcp_flow *f)
{
	struct hdr *h = &f->cur;

	switch (h->type) {
	case T_SEND:
		tcp_cq_push(f, f->cur_rqe.wr_id, XPORT_OP_RECV, XPORT_WC_OK, h->len, NULL);
		break;
	case T_WRITE_IMM:
		tcp_cq_push(f, f->cur_rqe.wr_id, XPORT_OP_RECV, XPORT_WC_OK, h->len, h);
		break;
	case T_READ_RESP: {
		struct sqe *r = tcp_ring_at(&f->reads, f->reads.head++);

		tcp_cq_push(f, r->wr_id, XPORT_OP_READ, XPORT_WC_OK, h->len, NULL);
		break;
	}
	}
	if (h->type == T_SEND || h->type == T_WRITE || h->type == T_WRITE_IMM) {
		f->rx_msgs++;
		if ((h->flags & F_ACK_REQ) && !f->ack_due)
			f->ack_due = 1;
	}
	memset(&f->cur_rqe, 0, sizeof(f->cur_rqe));
	f->in_payload = 0;
}

/* A header was parsed: find where its payload goes.  0: go on; 1: wait
 * for a RECV to be posted; -1: the flow broke. */
static int msg_begin(struct tcp_flow *f)
{
	struct hdr *h = &f->cur;
	uint8_t *src;

	process_ack(f, h->ack);
	if (f->broken)
		return -1;
	f->dst = NULL;
	switch (h->type) {
	case T_ACK:
		if (h->len)
			goto bad;
		return 0;
	case T_SEND:
	case T_WRITE_IMM:
		if (!tcp_ring_count(&f->rq)) {
			f->rnr_blocked = 1;
			tcp_epoll_update(f);
			return 1;
		}
		f->cur_rqe = *(struct rqe *)tcp_ring_at(&f->rq, f->rq.head++);
		if (h->type == T_SEND) {
			if (h->len > f->cur_rqe.len) {
				uint32_t have = f->cur_rqe.len;

				tcp_cq_push(f, f->cur_rqe.wr_id, XPORT_OP_RECV, XPORT_WC_LOCAL_ERR, 0, NULL);
				memset(&f->cur_rqe, 0, sizeof(f->cur_rqe));
				flow_break(f, XPORT_WC_FLUSHED, "a %u-byte message does not fit the %u-byte receive buffer",
					   h->len, have);
				return -1;
			}
			f->dst = f->cur_rqe.buf;
			break;
		}
		__attribute__((fallthrough));	/* WRITE_IMM writes like WRITE */
	case T_WRITE:
		if (check_region(f, h->rkey, h->off, h->len, &f->dst))
			goto bad;
		break;
	case T_READ_REQ:
		if (check_region(f, h->rkey, h->off, h->len, &src))
			goto bad;
		if (tcp_ring_count(&f->sq) > MAX_PENDING_READS)
			goto bad;
		{
			struct hdr r = { .type = T_READ_RESP, .len = h->len };

			if (tcp_enqueue(f, &r, src, h->len, 0, XPORT_OP_READ, 0, 0, NULL))
				goto bad;
		}
		return 0;
	case T_READ_RESP: {
		struct sqe *r;

		if (!tcp_ring_count(&f->reads))
			goto bad;
		r = tcp_ring_at(&f->reads, f->reads.head);
		if (h->len != r->read_len)
			goto bad;
		f->dst = r->read_dst;
		break;
	}
	}
	f->dst_left = h->len;
	f->in_payload = 1;
	return 0;
bad:
	flow_break(f, XPORT_WC_REMOTE_ERR, "protocol error: bad %s message (rkey %u, offset %llu, length %u)",
		   h->type == T_READ_REQ ? "read request" : "incoming",
		   h->rkey, (unsigned long long)h->off, h->len);
	return -1;
}

/* Parse what is in the staging buffer. */
void tcp_parse_stage(struct tcp_flow *f)
{
	while (!f->broken) {
		size_t avail = f->st_len - f->st_off;

		if (f->in_payload) {
			size_t take = avail < f->dst_left ? avail : f->dst_left;

			memcpy(f->dst, f->stage + f->st_off, take);
			f->dst += take;
			f->dst_left -= (uint32_t)take;
			f->st_off += take;
			if (f->dst_left)
				break;
			msg_done(f);
			continue;
		}
		if (f->rnr_blocked) {	/* header already parsed, retry */
			f->rnr_blocked = 0;
			if (msg_begin(f))
				break;
			if (!f->in_payload)
				msg_done(f);
			continue;
		}
		if (avail < HDR_LEN)
			break;
		if (decode_hdr(f->stage + f->st_off, &f->cur)) {
			flow_break(f, XPORT_WC_REMOTE_ERR, "protocol error: bad message header");
			return;
		}
		f->st_off += HDR_LEN;
		if (msg_begin(f))
			break;
		if (!f->in_payload)
			msg_done(f);
	}
	if (f->st_off == f->st_len)
		f->st_off = f->st_len = 0;
}

void tcp_flow_read(struct tcp_flow *f, int block)
{
	int rounds;

	for (rounds = 0; rounds < 16 && !f->broken && !f->rnr_blocked; rounds++) {
		/* the first read may wait (SO_RCVTIMEO bounds it): one system
		 * call where epoll_wait + read would take two */
		int flags = block && !rounds ? 0 : MSG_DONTWAIT;
		ssize_t n;

		if (f->in_payload && f->st_off == f->st_len && f->dst_left >= 4096) {
			size_t want = f->dst_left;

			n = recv(f->fd, f->dst, want, flags);	/* straight in */
			if (n > 0) {
				f->dst += n;
				f->dst_left -= (uint32_t)n;
				if (!f->dst_left)
					msg_done(f);
				if ((size_t)n < want)
					break;	/* drained: spare the EAGAIN read */
				continue;
			}
		} else {
			if (f->st_off && f->st_off < f->st_len) {	/* compact */
				memmove(f->stage, f->stage + f->st_off, f->st_len - f->st_off);
				f->st_len -= f->st_off;
				f->st_off = 0;
			}
			if (f->st_len == STAGE_LEN)
				return;
			size_t want = STAGE_LEN - f->st_len;

			n = recv(f->fd, f->stage + f->st_len, want, flags);
			if (n > 0) {
				f->st_len += (size_t)n;
				tcp_parse_stage(f);
				if ((size_t)n < want)
					break;	/* drained: spare the EAGAIN read */
				continue;
			}
		}
		if (n == 0) {
			flow_break(f, XPORT_WC_CONN_LOST, "connection closed by peer");
			return;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			flow_break(f, XPORT_WC_CONN_LOST, "connection lost: receive failed: %s", strerror(errno));
		break;
	}
	if (!f->broken && f->tx_i < f->sq.tail)	/* read responses to send */
		tcp_flow_flush(f);
}
