/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The TCP backend: the transport ops (see transport.h) over tcp-flow.c.
 * Connecting: the passive side listens on an ephemeral port of the chosen
 * address and names it in its blob with a random token; the active side
 * opens one connection per flow, from port sport_base + i when asked, and
 * starts each with a hello (magic, token, flow index).  The wire format of
 * the flows is described in tcp.h.
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

#include "../core/alloc.h"
#include "../core/clock.h"
#include "../core/net.h"
#include "transport.h"

#include "tcp.h"

/* ---- ops ---- */

static int tcp_open(struct xport *x)
{
	struct tcp_x *t = calloc(1, sizeof(*t));

	if (!t)
		return xport_fail(x, ENOMEM, "out of memory");
	t->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (t->epfd < 0 || tcp_ring_init(&t->cq, sizeof(struct xport_wc), 256)) {
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
		if (!f->stage || tcp_ring_init(&f->sq, sizeof(struct sqe), 2 * x->params.queue_depth + 8) ||
		    tcp_ring_init(&f->rq, sizeof(struct rqe), x->params.queue_depth + 8) ||
		    tcp_ring_init(&f->reads, sizeof(struct sqe), 16)) {
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

static void tcp_conn_release(struct xport_conn *c)
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
	c->priv = NULL;
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

	f->fd = fd;
	f->in_on = 1;
	/* blocking socket, bounded: reads and writes say MSG_DONTWAIT, except
	 * the single-flow wait of tcp_poll, which blocks up to TCP_BLOCK_MS */
	{
		struct timeval tv = { .tv_usec = TCP_BLOCK_MS * 1000 };

		net_set_nonblock(fd, 0);
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	net_local_addr(fd, &f->local);
	net_peer_addr(fd, &f->peer);
	set_sockopts(f->c->x, fd);
	if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	if (FS_ALLOC_GROW(t->flows, t->nflows + 1, t->flows_alloc))
		return -ENOMEM;
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
		tcp_put32(hello + 8, (uint32_t)(token >> 32));
		tcp_put32(hello + 12, (uint32_t)token);
		tcp_put32(hello + 16, (uint32_t)i);
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
		idx = tcp_get32(hello + 16);
		if (rc || memcmp(hello, HELLO_MAGIC, 8) ||
		    ((uint64_t)tcp_get32(hello + 8) << 32 | tcp_get32(hello + 12)) != token ||
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
	if (f->broken)
		return xport_fail(c->x, ENOTCONN, "%s", f->why);
	if (f->fd < 0)
		return xport_fail(c->x, ENOTCONN, "tcp flow %d is not connected", wr->flow);
	if (!wr->mr || wr->off > wr->mr->len || wr->len > wr->mr->len - wr->off)
		return xport_fail(c->x, EINVAL, "work request outside its memory region");
	buf = (const uint8_t *)wr->mr->addr + wr->off;
	if (wr->op == XPORT_OP_RECV) {
		struct rqe *r = tcp_ring_push(&f->rq);

		if (!r)
			return -ENOMEM;
		r->wr_id = wr->wr_id;
		r->buf = (uint8_t *)buf;
		r->len = wr->len;
		if (f->rnr_blocked) {
			tcp_parse_stage(f);
			if (!f->rnr_blocked)
				tcp_epoll_update(f);
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
		rc = tcp_enqueue(f, &h, buf, wr->len, wr->wr_id, wr->op, signaled, 1, NULL);
		break;
	case XPORT_OP_WRITE:
	case XPORT_OP_WRITE_IMM:
		h.type = wr->op == XPORT_OP_WRITE ? T_WRITE : T_WRITE_IMM;
		h.imm = wr->imm;
		rc = tcp_enqueue(f, &h, buf, wr->len, wr->wr_id, wr->op, signaled, 1, NULL);
		break;
	case XPORT_OP_READ:
		h.type = T_READ_REQ;
		h.flags = 0;
		rc = tcp_enqueue(f, &h, NULL, 0, wr->wr_id, wr->op, 1, 0, (uint8_t *)buf);
		if (!rc)	/* the response length is checked against this */
			((struct sqe *)tcp_ring_at(&f->sq, f->sq.tail - 1))->read_len = wr->len;
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
			tcp_flow_flush(f);
		if (f->ack_due == 2 && f->tx_i == f->sq.tail)
			tcp_flow_send_ack(f);
		else if (f->ack_due == 1)
			f->ack_due = 2;	/* next pass, unless piggy-backed */
	}
}

static int reap(struct tcp_x *t, struct xport_wc *wc, int max)
{
	int n = 0;

	while (n < max && tcp_ring_count(&t->cq)) {
		wc[n++] = *(struct xport_wc *)tcp_ring_at(&t->cq, t->cq.head);
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
		if (tcp_ring_count(&t->cq))
			return reap(t, wc, max);
		if (timeout_ms > 0 && (x->params.poll_mode == XPORT_POLL_EVENT ||
		    (x->params.poll_mode == XPORT_POLL_ADAPTIVE && clock_ns() >= spin_end))) {
			/* about to sleep: no ack may stay behind */
			for (i = 0; i < t->nflows; i++)
				if (t->flows[i]->ack_due && t->flows[i]->tx_i == t->flows[i]->sq.tail)
					tcp_flow_send_ack(t->flows[i]);
			wait = clock_ms_left(deadline);
		}
		if (wait > 0 && t->nflows == 1 && !t->flows[0]->want_out &&
		    !t->flows[0]->rnr_blocked && !t->flows[0]->broken) {
			/* one flow, nothing to send: wait in recv itself */
			tcp_flow_read(t->flows[0], 1);
			if (tcp_ring_count(&t->cq))
				return reap(t, wc, max);
			if (clock_ns() >= deadline)
				return 0;
			continue;
		}
		n = epoll_wait(t->epfd, ev, 64, wait);
		if (n < 0 && errno != EINTR)
			return xport_fail(x, errno, "epoll_wait: %s", strerror(errno));
		for (i = 0; i < n; i++) {
			struct tcp_flow *f = ev[i].data.ptr;

			if (ev[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))
				tcp_flow_read(f, 0);
			if ((ev[i].events & EPOLLOUT) && !f->broken)
				tcp_flow_flush(f);
		}
		if (tcp_ring_count(&t->cq))
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

static int tcp_flow_stats(struct xport_conn *c, int flow, struct xport_flow_stats *st)
{
	struct tcp_flow *f = &TC(c)->flows[flow];

	if (f->fd < 0)
		return -ENOTCONN;
	return tcp_fd_stats(f->fd, st);
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
	.conn_release = tcp_conn_release,
	.post = tcp_post,
	.poll = tcp_poll,
	.flow_info = tcp_flow_info,
	.flow_stats = tcp_flow_stats,
};
