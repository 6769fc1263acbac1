/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The TCP backend: RC semantics over one TCP connection per flow.
 *
 * Every message on a flow's socket is a 32-byte header and a payload:
 *
 *    0      1      2      3      4              8              12
 *   +------+------+------+------+--------------+--------------+
 *   | type | flags| magic| vers |  len (BE32)  |  ack (BE32)  |
 *   +------+------+------+------+--------------+--------------+
 *   | rkey (BE32) | offset (BE64)               | imm (BE32) | rsvd |
 *   12            16                           24           28     32
 *
 * type: SEND, WRITE, WRITE_IMM, READ_REQ, READ_RESP, ACK.  `ack` is the
 * number of SEND/WRITE/WRITE_IMM messages received so far on the flow in
 * the other direction; every header carries it (piggy-backed), and a bare
 * ACK header is sent when a message asked for one (flag ACK_REQ, set on
 * signaled work requests) and nothing else is going out.  A signaled work
 * request completes when the peer's ack covers it: the data is placed.
 *
 * Receive path: headers and small payloads are read through a 16 KiB
 * staging buffer (one read() for many small messages); the rest of a large
 * payload is read straight into its destination (no extra copy).  A SEND
 * that finds no posted RECV stops reading the socket until one is posted,
 * so TCP flow control pushes back on the sender, like RNR retry.
 *
 * Every field from the peer is checked (rkey, offset, length, RECV size);
 * a violation breaks the flow and flushes its work requests with an error.
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

#define HDR_LEN 32
#define HDR_MAGIC 0xFB
#define HDR_VERS 1
#define STAGE_LEN (16 * 1024)
#define HELLO_MAGIC "FSTCPv1"	/* 8 bytes with the NUL */
#define HELLO_LEN 24
#define MAX_PENDING_READS 65536

enum { T_SEND = 1, T_WRITE, T_WRITE_IMM, T_READ_REQ, T_READ_RESP, T_ACK };
#define F_ACK_REQ 0x01

struct hdr {
	uint8_t type, flags;
	uint32_t len, ack, rkey, imm;
	uint64_t off;
};

struct sqe {			/* an outgoing message */
	uint8_t hdr[HDR_LEN];
	const uint8_t *payload;
	uint32_t plen;
	uint32_t done;		/* bytes of header + payload written */
	uint32_t seq;		/* data messages: sequence number */
	uint32_t read_len;	/* READ: bytes asked for */
	uint64_t wr_id;
	uint8_t op, signaled, counted, is_read;
	uint8_t *read_dst;	/* READ: where the response goes */
};

struct rqe {			/* a posted RECV */
	uint64_t wr_id;
	uint8_t *buf;
	uint32_t len;
};

struct ring {			/* a growable FIFO of fixed-size entries */
	char *v;
	size_t esz, cap, head, tail;	/* head: oldest; tail: next free */
};

struct tcp_flow {
	struct xport_conn *c;
	int idx, fd, broken, want_out, rnr_blocked, in_on;
	/* send side: entries [ack_i, tx_i) are sent and await the peer's ack */
	struct ring sq;
	size_t tx_i;
	uint32_t next_seq;	/* data messages posted */
	uint32_t peer_acked;	/* data messages the peer has received */
	struct ring reads;	/* READs sent, waiting for their response */
	/* receive side */
	struct ring rq;
	uint32_t rx_msgs;	/* data messages received */
	int ack_due;		/* 1: due since this pass, 2: due, send now */
	uint8_t *stage;
	size_t st_off, st_len;
	int in_payload;		/* reading a payload straight into dst */
	struct hdr cur;
	uint8_t *dst;
	uint32_t dst_left;
	struct rqe cur_rqe;
	struct net_addr local, peer;
};

struct tcp_mr {
	void *addr;
	size_t len;
	unsigned access;
	int used;
};

struct tcp_x {
	int epfd;
	struct tcp_mr *mrs;
	int nmrs;
	struct ring cq;
	struct tcp_flow **flows;	/* every flow of every connection */
	int nflows;
};

struct tcp_conn {
	struct tcp_flow *flows;
	int lfd;		/* passive: listening socket until connected */
	uint64_t token;
	struct net_addr laddr;
};

/* ---- rings ---- */

static int ring_init(struct ring *r, size_t esz, size_t cap)
{
	r->v = calloc(cap, esz);
	r->esz = esz;
	r->cap = cap;
	r->head = r->tail = 0;
	return r->v ? 0 : -ENOMEM;
}

static size_t ring_count(const struct ring *r)
{
	return r->tail - r->head;
}

static void *ring_at(const struct ring *r, size_t i)	/* absolute index */
{
	return r->v + (i % r->cap) * r->esz;
}

static void *ring_push(struct ring *r)
{
	if (ring_count(r) == r->cap) {
		size_t ncap = r->cap * 2, i;
		char *nv = calloc(ncap, r->esz);

		if (!nv)
			return NULL;
		for (i = r->head; i < r->tail; i++)
			memcpy(nv + (i % ncap) * r->esz, ring_at(r, i), r->esz);
		free(r->v);
		r->v = nv;
		r->cap = ncap;
	}
	return ring_at(r, r->tail++);
}

/* ---- header codec ---- */

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p)
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
	put32(p + 4, h->len);
	put32(p + 8, h->ack);
	put32(p + 12, h->rkey);
	put32(p + 16, (uint32_t)(h->off >> 32));
	put32(p + 20, (uint32_t)h->off);
	put32(p + 24, h->imm);
}

static int decode_hdr(const uint8_t *p, struct hdr *h)
{
	if (p[2] != HDR_MAGIC || p[3] != HDR_VERS || p[0] < T_SEND || p[0] > T_ACK)
		return -EPROTO;
	h->type = p[0];
	h->flags = p[1];
	h->len = get32(p + 4);
	h->ack = get32(p + 8);
	h->rkey = get32(p + 12);
	h->off = (uint64_t)get32(p + 16) << 32 | get32(p + 20);
	h->imm = get32(p + 24);
	return 0;
}

/* ---- completions ---- */

static struct tcp_x *TX(struct xport *x)
{
	return x->priv;
}

static void cq_push(struct tcp_flow *f, uint64_t wr_id, enum xport_op op,
		    enum xport_wc_status st, uint32_t len, const struct hdr *imm)
{
	struct xport_wc *wc = ring_push(&TX(f->c->x)->cq);

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

static void epoll_update(struct tcp_flow *f)
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
	xport_fail(x, ECONNRESET, "tcp flow %d to %s: %s", f->idx, peer, msg);
	for (i = f->sq.head; i < f->sq.tail; i++) {
		struct sqe *e = ring_at(&f->sq, i);

		if (e->signaled && !(e->is_read && i < f->tx_i))
			cq_push(f, e->wr_id, e->op, st, 0, NULL);
	}
	f->sq.head = f->sq.tail = f->tx_i = 0;
	for (i = f->reads.head; i < f->reads.tail; i++) {
		struct sqe *e = ring_at(&f->reads, i);

		cq_push(f, e->wr_id, XPORT_OP_READ, st, 0, NULL);
	}
	f->reads.head = f->reads.tail = 0;
	if (f->in_payload && f->cur_rqe.buf)
		cq_push(f, f->cur_rqe.wr_id, XPORT_OP_RECV, st, 0, NULL);
	for (i = f->rq.head; i < f->rq.tail; i++) {
		struct rqe *r = ring_at(&f->rq, i);

		cq_push(f, r->wr_id, XPORT_OP_RECV, st, 0, NULL);
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
		struct sqe *e = ring_at(&f->sq, f->sq.head);

		if (e->counted && (int32_t)(e->seq - f->peer_acked) >= 0)
			break;
		if (e->signaled && e->counted)
			cq_push(f, e->wr_id, e->op, XPORT_WC_OK, e->plen, NULL);
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

static void flow_flush(struct tcp_flow *f)
{
	struct iovec iov[64];
	struct msghdr mh = { .msg_iov = iov };
	size_t i;
	ssize_t n;

	while (!f->broken && f->tx_i < f->sq.tail) {
		int niov = 0;

		for (i = f->tx_i; i < f->sq.tail && niov < 62; i++) {
			struct sqe *e = ring_at(&f->sq, i);
			uint32_t d = e->done;

			if (d == 0) {	/* fill in the freshest ack */
				put32(e->hdr + 8, f->rx_msgs);
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
					epoll_update(f);
				}
				return;
			}
			flow_break(f, XPORT_WC_CONN_LOST, "send failed: %s", strerror(errno));
			return;
		}
		while (n > 0) {
			struct sqe *e = ring_at(&f->sq, f->tx_i);
			uint32_t left = HDR_LEN + e->plen - e->done;
			uint32_t take = (size_t)n < left ? (uint32_t)n : left;

			e->done += take;
			n -= take;
			if (e->done < HDR_LEN + e->plen)
				break;
			f->tx_i++;
			if (e->is_read) {	/* now waits for its response */
				struct sqe *r = ring_push(&f->reads);

				if (r)
					*r = *e;
			}
		}
		sq_retire(f);
	}
	if (f->want_out && f->tx_i == f->sq.tail) {
		f->want_out = 0;
		epoll_update(f);
	}
}

static int flow_send_ack(struct tcp_flow *f)
{
	struct sqe *e;
	struct hdr h = { .type = T_ACK };

	e = ring_push(&f->sq);
	if (!e)
		return -ENOMEM;
	memset(e, 0, sizeof(*e));
	encode_hdr(e->hdr, &h);
	flow_flush(f);
	return 0;
}

static int enqueue(struct tcp_flow *f, const struct hdr *h, const uint8_t *payload,
		   uint32_t plen, uint64_t wr_id, uint8_t op, int signaled,
		   int counted, uint8_t *read_dst)
{
	struct sqe *e = ring_push(&f->sq);

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
		cq_push(f, f->cur_rqe.wr_id, XPORT_OP_RECV, XPORT_WC_OK, h->len, NULL);
		break;
	case T_WRITE_IMM:
		cq_push(f, f->cur_rqe.wr_id, XPORT_OP_RECV, XPORT_WC_OK, h->len, h);
		break;
	case T_READ_RESP: {
		struct sqe *r = ring_at(&f->reads, f->reads.head++);

		cq_push(f, r->wr_id, XPORT_OP_READ, XPORT_WC_OK, h->len, NULL);
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
		if (!ring_count(&f->rq)) {
			f->rnr_blocked = 1;
			epoll_update(f);
			return 1;
		}
		f->cur_rqe = *(struct rqe *)ring_at(&f->rq, f->rq.head++);
		if (h->type == T_SEND) {
			if (h->len > f->cur_rqe.len) {
				uint32_t have = f->cur_rqe.len;

				cq_push(f, f->cur_rqe.wr_id, XPORT_OP_RECV, XPORT_WC_LOCAL_ERR, 0, NULL);
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
		if (ring_count(&f->sq) > MAX_PENDING_READS)
			goto bad;
		{
			struct hdr r = { .type = T_READ_RESP, .len = h->len };

			if (enqueue(f, &r, src, h->len, 0, XPORT_OP_READ, 0, 0, NULL))
				goto bad;
		}
		return 0;
	case T_READ_RESP: {
		struct sqe *r;

		if (!ring_count(&f->reads))
			goto bad;
		r = ring_at(&f->reads, f->reads.head);
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
static void parse_stage(struct tcp_flow *f)
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

static void flow_read(struct tcp_flow *f)
{
	int rounds;

	for (rounds = 0; rounds < 16 && !f->broken && !f->rnr_blocked; rounds++) {
		ssize_t n;

		if (f->in_payload && f->st_off == f->st_len && f->dst_left >= 4096) {
			size_t want = f->dst_left;

			n = read(f->fd, f->dst, want);	/* straight in */
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

			n = read(f->fd, f->stage + f->st_len, want);
			if (n > 0) {
				f->st_len += (size_t)n;
				parse_stage(f);
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
			flow_break(f, XPORT_WC_CONN_LOST, "receive failed: %s", strerror(errno));
		break;
	}
	if (!f->broken && f->tx_i < f->sq.tail)	/* read responses to send */
		flow_flush(f);
}

/* ---- ops ---- */

static int tcp_open(struct xport *x)
{
	struct tcp_x *t = calloc(1, sizeof(*t));

	if (!t)
		return xport_fail(x, ENOMEM, "out of memory");
	t->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (t->epfd < 0 || ring_init(&t->cq, sizeof(struct xport_wc), 256)) {
		int e = errno;

		if (t->epfd >= 0)
			close(t->epfd);
		free(t->cq.v);
		free(t);
		return xport_fail(x, e, "cannot create epoll instance: %s", strerror(e));
	}
	x->priv = t;
	return 0;
}

static void tcp_close(struct xport *x)
{
	struct tcp_x *t = TX(x);

	close(t->epfd);
	free(t->mrs);
	free(t->cq.v);
	free(t->flows);
	free(t);
}

static int tcp_mr_reg(struct xport *x, struct xport_mr *mr, unsigned access)
{
	struct tcp_x *t = TX(x);
	int i;

	for (i = 0; i < t->nmrs && t->mrs[i].used; i++)
		;
	if (i == t->nmrs) {
		struct tcp_mr *n = realloc(t->mrs, (size_t)(t->nmrs + 8) * sizeof(*n));

		if (!n)
			return xport_fail(x, ENOMEM, "out of memory");
		memset(n + t->nmrs, 0, 8 * sizeof(*n));
		t->mrs = n;
		t->nmrs += 8;
	}
	t->mrs[i] = (struct tcp_mr){ mr->addr, mr->len, access, 1 };
	mr->lkey = mr->rkey = (uint32_t)i + 1;
	return 0;
}

static void tcp_mr_dereg(struct xport *x, struct xport_mr *mr)
{
	struct tcp_x *t = TX(x);

	if (mr->rkey >= 1 && mr->rkey <= (uint32_t)t->nmrs)
		t->mrs[mr->rkey - 1].used = 0;
}

static struct tcp_conn *TC(struct xport_conn *c)
{
	return c->priv;
}

static int tcp_conn_new(struct xport_conn *c)
{
	struct xport *x = c->x;
	struct tcp_conn *tc = calloc(1, sizeof(*tc));
	char err[128];
	int i, rc;

	if (!tc)
		return xport_fail(x, ENOMEM, "out of memory");
	tc->flows = calloc((size_t)c->nflows, sizeof(*tc->flows));
	tc->lfd = -1;
	if (!tc->flows) {
		free(tc);
		return xport_fail(x, ENOMEM, "out of memory");
	}
	for (i = 0; i < c->nflows; i++)
		tc->flows[i].fd = -1;
	for (i = 0; i < c->nflows; i++) {
		struct tcp_flow *f = &tc->flows[i];

		f->c = c;
		f->idx = i;
		f->fd = -1;
		f->stage = malloc(STAGE_LEN);
		if (!f->stage || ring_init(&f->sq, sizeof(struct sqe), 2 * x->params.queue_depth + 8) ||
		    ring_init(&f->rq, sizeof(struct rqe), x->params.queue_depth + 8) ||
		    ring_init(&f->reads, sizeof(struct sqe), 16)) {
			c->priv = tc;
			return xport_fail(x, ENOMEM, "out of memory");
		}
	}
	c->priv = tc;
	if (c->role == XPORT_ROLE_PASSIVE) {
		rc = net_resolve(x->params.bind_addr, 0, 1, &tc->laddr, err, sizeof(err));
		if (rc)
			return xport_fail(x, EINVAL, "cannot use local address '%s': %s",
					  x->params.bind_addr, err);
		rc = net_listen(&tc->laddr, c->nflows + 4);
		if (rc < 0)
			return xport_fail(x, -rc, "cannot listen for data flows on %s: %s",
					  x->params.bind_addr ? x->params.bind_addr : "*",
					  strerror(-rc));
		tc->lfd = rc;
		net_local_addr(tc->lfd, &tc->laddr);
	}
	if (getrandom(&tc->token, sizeof(tc->token), 0) != sizeof(tc->token))
		tc->token = clock_ns() * 0x9E3779B97F4A7C15ull;
	return 0;
}

static void tcp_conn_free(struct xport_conn *c)
{
	struct tcp_conn *tc = TC(c);
	struct tcp_x *t = TX(c->x);
	int i, j;

	if (!tc)
		return;
	for (i = 0; i < c->nflows; i++) {
		struct tcp_flow *f = &tc->flows[i];

		if (f->fd >= 0) {
			epoll_ctl(t->epfd, EPOLL_CTL_DEL, f->fd, NULL);
			close(f->fd);
		}
		free(f->stage);
		free(f->sq.v);
		free(f->rq.v);
		free(f->reads.v);
		for (j = 0; j < t->nflows; j++)
			if (t->flows[j] == f)
				t->flows[j] = t->flows[--t->nflows];
	}
	if (tc->lfd >= 0)
		close(tc->lfd);
	free(tc->flows);
	free(tc);
}

static int tcp_conn_blob(struct xport_conn *c, json_t *blob)
{
	struct tcp_conn *tc = TC(c);
	char host[NET_ADDRSTRLEN], tok[20];

	if (c->role == XPORT_ROLE_PASSIVE) {
		net_addr_host(&tc->laddr, host, sizeof(host));
		json_object_set_new(blob, "addr", json_string(host));
		json_object_set_new(blob, "port", json_integer(net_addr_port(&tc->laddr)));
	}
	snprintf(tok, sizeof(tok), "%016llx", (unsigned long long)tc->token);
	json_object_set_new(blob, "token", json_string(tok));
	return 0;
}

static void set_sockopts(struct xport *x, int fd)
{
	int one = 1, tos = x->params.tclass;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (tos >= 0)
		setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos));
}

static int flow_attach(struct tcp_flow *f, int fd)
{
	struct tcp_x *t = TX(f->c->x);
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = f };
	struct tcp_flow **nf;

	f->fd = fd;
	f->in_on = 1;
	net_local_addr(fd, &f->local);
	net_peer_addr(fd, &f->peer);
	set_sockopts(f->c->x, fd);
	if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	nf = realloc(t->flows, (size_t)(t->nflows + 1) * sizeof(*nf));
	if (!nf)
		return -ENOMEM;
	t->flows = nf;
	t->flows[t->nflows++] = f;
	return 0;
}

static int tcp_connect_active(struct xport_conn *c, json_t *peer, uint64_t token)
{
	struct xport *x = c->x;
	struct tcp_conn *tc = TC(c);
	const char *addr = json_string_value(json_object_get(peer, "addr"));
	json_int_t port = json_integer_value(json_object_get(peer, "port"));
	struct net_addr dst, src, *srcp = NULL;
	char err[128], dstr[NET_ADDRSTRLEN];
	int i, rc;

	if (!addr || port <= 0 || port > 65535)
		return xport_fail(x, EPROTO, "peer's connection blob has no address/port");
	rc = net_resolve(addr, (int)port, 0, &dst, err, sizeof(err));
	if (rc)
		return xport_fail(x, EPROTO, "peer's data address '%s': %s", addr, err);
	net_addr_str(&dst, dstr, sizeof(dstr));
	if (x->params.bind_addr || x->params.sport_base) {
		rc = net_resolve(x->params.bind_addr, 0, 1, &src, err, sizeof(err));
		if (rc)
			return xport_fail(x, EINVAL, "cannot use local address '%s': %s",
					  x->params.bind_addr, err);
		srcp = &src;
	}
	for (i = 0; i < c->nflows; i++) {
		uint8_t hello[HELLO_LEN] = HELLO_MAGIC;
		int fd, sport = x->params.sport_base ? x->params.sport_base + i : 0;

		if (srcp)
			net_addr_set_port(srcp, sport);
		fd = net_connect(&dst, srcp, x->params.timeout_ms);
		if (fd < 0) {
			if (fd == -EADDRINUSE)
				return xport_fail(x, -fd, "source port %d for flow %d is in use: choose another --sport base",
						  sport, i);
			return xport_fail(x, -fd, "cannot open data flow %d to %s: %s",
					  i, dstr, strerror(-fd));
		}
		put32(hello + 8, (uint32_t)(token >> 32));
		put32(hello + 12, (uint32_t)token);
		put32(hello + 16, (uint32_t)i);
		rc = net_write_full(fd, hello, sizeof(hello), x->params.timeout_ms);
		if (rc || (rc = flow_attach(&tc->flows[i], fd))) {
			if (tc->flows[i].fd < 0)
				close(fd);
			return xport_fail(x, -rc, "cannot start data flow %d to %s: %s",
					  i, dstr, strerror(-rc));
		}
	}
	return 0;
}

static int tcp_connect_passive(struct xport_conn *c, uint64_t token)
{
	struct xport *x = c->x;
	struct tcp_conn *tc = TC(c);
	uint64_t deadline = clock_ns() + (uint64_t)x->params.timeout_ms * 1000000ull;
	int got = 0;

	while (got < c->nflows) {
		uint8_t hello[HELLO_LEN];
		struct net_addr peer;
		uint32_t idx;
		int fd, rc;

		fd = net_accept(tc->lfd, clock_ms_left(deadline), &peer);
		if (fd < 0)
			return xport_fail(x, -fd, "waiting for data flows: %d of %d connected, %s",
					  got, c->nflows, fd == -ETIMEDOUT ? "timed out" : strerror(-fd));
		rc = net_read_full(fd, hello, sizeof(hello), clock_ms_left(deadline) + 1);
		idx = get32(hello + 16);
		if (rc || memcmp(hello, HELLO_MAGIC, 8) ||
		    ((uint64_t)get32(hello + 8) << 32 | get32(hello + 12)) != token ||
		    idx >= (uint32_t)c->nflows || tc->flows[idx].fd >= 0) {
			close(fd);	/* a stray or foreign connection: ignore it */
			continue;
		}
		rc = flow_attach(&tc->flows[idx], fd);
		if (rc)
			return xport_fail(x, -rc, "cannot start data flow %u: %s", idx, strerror(-rc));
		got++;
	}
	close(tc->lfd);
	tc->lfd = -1;
	return 0;
}

static int tcp_conn_connect(struct xport_conn *c, json_t *peer)
{
	const char *tok = json_string_value(json_object_get(peer, "token"));
	uint64_t token;

	/* the passive side's token names the connection */
	if (c->role == XPORT_ROLE_PASSIVE)
		return tcp_connect_passive(c, TC(c)->token);
	if (!tok || strlen(tok) != 16)
		return xport_fail(c->x, EPROTO, "peer's connection blob has no token");
	token = strtoull(tok, NULL, 16);
	return tcp_connect_active(c, peer, token);
}

static int tcp_post(struct xport_conn *c, const struct xport_wr *wr)
{
	struct tcp_conn *tc = TC(c);
	struct tcp_flow *f;
	struct hdr h = { 0 };
	const uint8_t *buf;
	int signaled = !!(wr->flags & XPORT_WR_SIGNALED), rc;

	if (wr->flow < 0 || wr->flow >= c->nflows)
		return xport_fail(c->x, EINVAL, "no flow %d", wr->flow);
	f = &tc->flows[wr->flow];
	if (f->broken || f->fd < 0)
		return -ENOTCONN;
	if (!wr->mr || wr->off > wr->mr->len || wr->len > wr->mr->len - wr->off)
		return xport_fail(c->x, EINVAL, "work request outside its memory region");
	buf = (const uint8_t *)wr->mr->addr + wr->off;
	if (wr->op == XPORT_OP_RECV) {
		struct rqe *r = ring_push(&f->rq);

		if (!r)
			return -ENOMEM;
		r->wr_id = wr->wr_id;
		r->buf = (uint8_t *)buf;
		r->len = wr->len;
		if (f->rnr_blocked) {
			parse_stage(f);
			if (!f->rnr_blocked)
				epoll_update(f);
		}
		return 0;
	}
	h.len = wr->len;
	h.flags = signaled ? F_ACK_REQ : 0;
	if (wr->op != XPORT_OP_SEND) {
		if (!wr->rmr)
			return xport_fail(c->x, EINVAL, "%s needs a remote region", xport_op_name(wr->op));
		h.rkey = wr->rmr->rkey;
		h.off = wr->roff;
	}
	switch (wr->op) {
	case XPORT_OP_SEND:
		h.type = T_SEND;
		rc = enqueue(f, &h, buf, wr->len, wr->wr_id, wr->op, signaled, 1, NULL);
		break;
	case XPORT_OP_WRITE:
	case XPORT_OP_WRITE_IMM:
		h.type = wr->op == XPORT_OP_WRITE ? T_WRITE : T_WRITE_IMM;
		h.imm = wr->imm;
		rc = enqueue(f, &h, buf, wr->len, wr->wr_id, wr->op, signaled, 1, NULL);
		break;
	case XPORT_OP_READ:
		h.type = T_READ_REQ;
		h.flags = 0;
		rc = enqueue(f, &h, NULL, 0, wr->wr_id, wr->op, 1, 0, (uint8_t *)buf);
		if (!rc)	/* the response length is checked against this */
			((struct sqe *)ring_at(&f->sq, f->sq.tail - 1))->read_len = wr->len;
		break;
	default:
		return xport_fail(c->x, EINVAL, "unknown operation");
	}
	if (rc)
		return rc;
	/* sent at the next xport_poll, batched with whatever else is posted */
	return 0;
}

static void progress(struct xport *x)
{
	struct tcp_x *t = TX(x);
	int i;

	for (i = 0; i < t->nflows; i++) {
		struct tcp_flow *f = t->flows[i];

		if (f->tx_i < f->sq.tail && !f->want_out && !f->broken)
			flow_flush(f);
		if (f->ack_due == 2 && f->tx_i == f->sq.tail)
			flow_send_ack(f);
		else if (f->ack_due == 1)
			f->ack_due = 2;	/* next pass, unless piggy-backed */
	}
}

static int reap(struct tcp_x *t, struct xport_wc *wc, int max)
{
	int n = 0;

	while (n < max && ring_count(&t->cq)) {
		wc[n++] = *(struct xport_wc *)ring_at(&t->cq, t->cq.head);
		t->cq.head++;
	}
	return n;
}

static int tcp_poll(struct xport *x, struct xport_wc *wc, int max, int timeout_ms)
{
	struct tcp_x *t = TX(x);
	uint64_t deadline = clock_ns() + (uint64_t)timeout_ms * 1000000ull;
	struct epoll_event ev[64];
	int i, n;

	uint64_t spin_end = clock_ns() + XPORT_SPIN_US * 1000ull;

	for (;;) {
		int wait = 0;

		progress(x);
		if (ring_count(&t->cq))
			return reap(t, wc, max);
		if (timeout_ms > 0 && (x->params.poll_mode == XPORT_POLL_EVENT ||
		    (x->params.poll_mode == XPORT_POLL_ADAPTIVE && clock_ns() >= spin_end))) {
			/* about to sleep: no ack may stay behind */
			for (i = 0; i < t->nflows; i++)
				if (t->flows[i]->ack_due && t->flows[i]->tx_i == t->flows[i]->sq.tail)
					flow_send_ack(t->flows[i]);
			wait = clock_ms_left(deadline);
		}
		n = epoll_wait(t->epfd, ev, 64, wait);
		if (n < 0 && errno != EINTR)
			return xport_fail(x, errno, "epoll_wait: %s", strerror(errno));
		for (i = 0; i < n; i++) {
			struct tcp_flow *f = ev[i].data.ptr;

			if (ev[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))
				flow_read(f);
			if ((ev[i].events & EPOLLOUT) && !f->broken)
				flow_flush(f);
		}
		if (ring_count(&t->cq))
			return reap(t, wc, max);
		if (clock_ns() >= deadline)
			return 0;
	}
}

static int tcp_flow_info(struct xport_conn *c, int flow, json_t *info)
{
	struct tcp_flow *f = &TC(c)->flows[flow];
	char a[NET_ADDRSTRLEN];

	net_addr_host(&f->local, a, sizeof(a));
	json_object_set_new(info, "src_ip", json_string(a));
	json_object_set_new(info, "sport", json_integer(net_addr_port(&f->local)));
	net_addr_host(&f->peer, a, sizeof(a));
	json_object_set_new(info, "dst_ip", json_string(a));
	json_object_set_new(info, "dport", json_integer(net_addr_port(&f->peer)));
	return 0;
}

const struct xport_ops xport_tcp_ops = {
	.name = "tcp",
	.caps = XPORT_CAP_SPORT | XPORT_CAP_SOFTWARE,
	.open = tcp_open,
	.close = tcp_close,
	.mr_reg = tcp_mr_reg,
	.mr_dereg = tcp_mr_dereg,
	.conn_new = tcp_conn_new,
	.conn_blob = tcp_conn_blob,
	.conn_connect = tcp_conn_connect,
	.conn_free = tcp_conn_free,
	.post = tcp_post,
	.poll = tcp_poll,
	.flow_info = tcp_flow_info,
};
