/* SPDX-License-Identifier: BSD-2-Clause */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/errqueue.h>
#include <netinet/ip.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../core/alloc.h"
#include "../core/clock.h"
#include "../core/error.h"
#include "probe.h"

/* epoll tags: kind in the high word, index in the low */
#define TAG_RESP 1ull
#define TAG_SPORT 2ull
#define TAG(kind, i) (((kind) << 32) | (uint64_t)(uint32_t)(i))

static void put32(unsigned char *b, uint32_t v)
{
	b[0] = (unsigned char)(v >> 24), b[1] = (unsigned char)(v >> 16);
	b[2] = (unsigned char)(v >> 8), b[3] = (unsigned char)v;
}

static void put64(unsigned char *b, uint64_t v)
{
	put32(b, (uint32_t)(v >> 32));
	put32(b + 4, (uint32_t)v);
}

static uint32_t get32(const unsigned char *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static uint64_t get64(const unsigned char *b)
{
	return (uint64_t)get32(b) << 32 | get32(b + 4);
}

void mon_pkt_encode(unsigned char *buf, const struct mon_pkt *p)
{
	memset(buf, 0, MON_PKT_LEN);
	put32(buf, MON_MAGIC);
	buf[4] = MON_PKT_VERSION;
	buf[5] = (unsigned char)p->type;
	put64(buf + 8, p->cookie);
	put64(buf + 16, p->seq);
	put32(buf + 24, p->slot);
	put32(buf + 28, p->aux);
}

int mon_pkt_decode(const unsigned char *buf, size_t len, struct mon_pkt *p)
{
	if (len != MON_PKT_LEN || get32(buf) != MON_MAGIC || buf[4] != MON_PKT_VERSION ||
	    buf[5] < MON_PKT_REQ || buf[5] > MON_PKT_UDA || buf[6] || buf[7])
		return -1;
	p->type = buf[5];
	p->cookie = get64(buf + 8);
	p->seq = get64(buf + 16);
	p->slot = get32(buf + 24);
	p->aux = get32(buf + 28);
	return 0;
}

static int udp_bound(struct in_addr ip, int port, int *fd)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr = ip };
	char a[INET_ADDRSTRLEN];
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (s < 0)
		return fs_err_env("cannot make a UDP socket: %s", strerror(errno));
	if (bind(s, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = errno;

		close(s);
		inet_ntop(AF_INET, &ip, a, sizeof(a));
		return fs_err_env("cannot bind UDP %s:%d: %s (%s)", a, port, strerror(err),
				  err == EADDRINUSE ? "another monitor, or another program, has it: give --port or --sport-range"
						    : "is the address this node's? check the hostfile's endpoints and --node");
	}
	*fd = s;
	return 0;
}

static int watch(int epfd, int fd, uint64_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag };

	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev))
		return fs_err_env("epoll_ctl: %s", strerror(errno));
	return 0;
}

static int open_sockets(struct mon_engine *e)
{
	int nl = e->peers.nlanes, ns = e->o.nsports, rc = 0;

	e->resp_fd = fs_reallocarray(NULL, (size_t)nl, sizeof(int));
	e->sport_fd = fs_reallocarray(NULL, (size_t)nl * (size_t)ns, sizeof(int));
	if (!e->resp_fd || !e->sport_fd)
		return fs_err_env("out of memory opening the probe sockets");
	for (int i = 0; i < nl; i++)
		e->resp_fd[i] = -1;
	for (int i = 0; i < nl * ns; i++)
		e->sport_fd[i] = -1;
	for (int l = 0; l < nl && !rc; l++) {
		rc = udp_bound(e->peers.lane[l].ip, e->o.port, &e->resp_fd[l]);
		if (!rc)
			rc = watch(e->epfd, e->resp_fd[l], TAG(TAG_RESP, l));
		for (int i = 0; i < ns && !rc && (e->o.transports & MON_T_UDP); i++) {
			int on = 1, *fd = &e->sport_fd[l * ns + i];

			rc = udp_bound(e->peers.lane[l].ip, e->o.sport_lo + i, fd);
			if (!rc && (setsockopt(*fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on)) ||
				    setsockopt(*fd, IPPROTO_IP, IP_RECVERR, &on, sizeof(on))))
				rc = fs_err_env("SO_TIMESTAMPNS, IP_RECVERR: %s", strerror(errno));
			if (!rc)
				rc = watch(e->rep_epfd, *fd, TAG(TAG_SPORT, l * ns + i));
		}
	}
	return rc;
}

/* Cells, streams and the ring for the engine's peers; the streams' first probes spread
 * over one period so that they do not all leave at once */
static int size_tables(struct mon_engine *e, struct mon_cell **cells, struct mon_stream **st,
		       struct mon_flight **ring, size_t *cap)
{
	size_t nst = (size_t)e->peers.n * (size_t)e->peers.nlanes;
	double inflight = e->o.rate * e->o.timeout_s * (double)nst * e->nx + 64;
	uint64_t now = clock_ns(), period = (uint64_t)(1e9 / e->o.rate);

	*cap = 64;
	while ((double)*cap < 2 * inflight)
		*cap *= 2;
	*cells = calloc(nst ? nst * (size_t)e->o.buckets * (size_t)e->nx : 1, sizeof(**cells));
	*st = calloc(nst ? nst : 1, sizeof(**st));
	*ring = calloc(*cap, sizeof(**ring));
	if (!*cells || !*st || !*ring) {
		free(*cells), free(*st), free(*ring);
		return fs_err_env("out of memory for %zu probe streams", nst);
	}
	for (size_t i = 0; i < nst; i++)
		(*st)[i].next_ns = now + (nst > 1 ? period * i / nst : 0);
	return 0;
}

int mon_engine_init(struct mon_engine *e, const struct mon_opts *o, struct mon_peers *peers)
{
	int rc;

	memset(e, 0, sizeof(*e));
	e->o = *o;
	e->peers = *peers;
	e->nx = o->transports & MON_T_UD ? 2 : 1;
	memset(peers, 0, sizeof(*peers));
	pthread_mutex_init(&e->lock, NULL);
	if (getrandom(&e->cookie, sizeof(e->cookie), 0) != sizeof(e->cookie))
		e->cookie = clock_ns() ^ ((uint64_t)getpid() << 32);
	e->epfd = epoll_create1(EPOLL_CLOEXEC);
	e->rep_epfd = epoll_create1(EPOLL_CLOEXEC);
	if (e->epfd < 0 || e->rep_epfd < 0) {
		rc = fs_err_env("epoll_create1: %s", strerror(errno));
		goto fail;
	}
	rc = size_tables(e, &e->cells, &e->st, &e->ring, &e->ring_cap);
	if (!rc)
		rc = open_sockets(e);
	if (!rc && (o->transports & MON_T_UD))
		rc = mon_ud_open(e);
	if (!rc) {
		e->last_tick_ns = clock_ns();
		return 0;
	}
fail:
	mon_engine_release(e);
	return rc;
}

void mon_engine_release(struct mon_engine *e)
{
	int nl = e->peers.nlanes;

	mon_ud_close(e);
	for (int l = 0; e->resp_fd && l < nl; l++)
		if (e->resp_fd[l] >= 0)
			close(e->resp_fd[l]);
	for (int i = 0; e->sport_fd && i < nl * e->o.nsports; i++)
		if (e->sport_fd[i] >= 0)
			close(e->sport_fd[i]);
	if (e->epfd > 0)
		close(e->epfd);
	if (e->rep_epfd > 0)
		close(e->rep_epfd);
	free(e->resp_fd);
	free(e->sport_fd);
	free(e->cells);
	free(e->st);
	free(e->ring);
	mon_peers_release(&e->peers);
	pthread_mutex_destroy(&e->lock);
	memset(e, 0, sizeof(*e));
	e->epfd = e->rep_epfd = -1;
}

static int same_lanes(const struct mon_peers *a, const struct mon_peers *b)
{
	if (a->nlanes != b->nlanes)
		return 0;
	for (int l = 0; l < a->nlanes; l++)
		if (a->lane[l].rail != b->lane[l].rail || a->lane[l].plane != b->lane[l].plane ||
		    a->lane[l].ip.s_addr != b->lane[l].ip.s_addr)
			return 0;
	return 1;
}

int mon_engine_reload(struct mon_engine *e, struct mon_peers *np)
{
	struct mon_engine ne;	/* the new tables, in a scratch engine */
	int nl = e->peers.nlanes, *map, rc;

	if (!same_lanes(&e->peers, np)) {
		mon_peers_release(np);
		return fs_err_usage("this node's own endpoints changed in the peers file: restart the monitor "
				    "to probe from the new ones (the old peers stay)");
	}
	memset(&ne, 0, sizeof(ne));
	ne.o = e->o;
	ne.nx = e->nx;
	ne.peers = *np;
	rc = size_tables(&ne, &ne.cells, &ne.st, &ne.ring, &ne.ring_cap);
	map = fs_reallocarray(NULL, (size_t)(e->peers.n ? e->peers.n : 1), sizeof(int));
	if (rc || !map) {
		free(ne.cells), free(ne.st), free(ne.ring), free(map);
		mon_peers_release(np);
		return rc ? rc : fs_err_env("out of memory reloading the peers");
	}
	memset(np, 0, sizeof(*np));
	pthread_mutex_lock(&e->lock);
	for (int p = 0; p < e->peers.n; p++) {
		int q = map[p] = mon_peers_find(&ne.peers, e->peers.p[p].name);

		for (int l = 0; q >= 0 && l < nl; l++) {
			if (ne.peers.p[q].ip[l].s_addr != e->peers.p[p].ip[l].s_addr)
				continue;	/* another address: another path, new counters */
			for (int x = 0; x < e->nx; x++)
				memcpy(mon_xcell(&ne, x, q, l, 0), mon_xcell(e, x, p, l, 0),
				       sizeof(struct mon_cell) * (size_t)e->o.buckets);
			ne.st[q * nl + l] = e->st[p * nl + l];
		}
	}
	for (size_t i = e->tail; i != e->head; i = (i + 1) % e->ring_cap) {	/* what flies, kept in order */
		struct mon_flight f = e->ring[i];
		int p = f.stream / nl, q = map[p];

		if (!f.state || q < 0 || (ne.head + 1) % ne.ring_cap == ne.tail)
			continue;
		f.stream = q * nl + f.stream % nl;
		ne.ring[ne.head] = f;
		ne.head = (ne.head + 1) % ne.ring_cap;
	}
	free(map);
	free(e->cells), free(e->st), free(e->ring);
	mon_peers_release(&e->peers);
	e->peers = ne.peers;
	e->cells = ne.cells, e->st = ne.st, e->ring = ne.ring;
	e->ring_cap = ne.ring_cap, e->head = ne.head, e->tail = ne.tail;
	e->tot.reloads_ok++;
	pthread_mutex_unlock(&e->lock);
	return 0;
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void send_probe(struct mon_engine *e, int stream, int port, uint64_t now)
{
	int nl = e->peers.nlanes, p = stream / nl, l = stream % nl;
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons((uint16_t)e->o.port),
				  .sin_addr = e->peers.p[p].ip[l] };
	struct mon_pkt pkt = { MON_PKT_REQ, e->cookie, ++e->seq, (uint32_t)e->head, 0 };
	unsigned char buf[MON_PKT_LEN];

	if ((e->head + 1) % e->ring_cap == e->tail)
		return;	/* cannot be: the ring holds twice what can fly */
	e->ring[e->head] = (struct mon_flight){ .seq = pkt.seq, .t_ns = now, .stream = stream, .port = port,
						.state = 1, .x = MON_UDP };
	e->head = (e->head + 1) % e->ring_cap;
	mon_cell(e, p, l, mon_bucket_of(&e->o, port))->sent++;
	mon_pkt_encode(buf, &pkt);
	e->ring[(e->head + e->ring_cap - 1) % e->ring_cap].t_rt = realtime_ns();
	if (sendto(e->sport_fd[l * e->o.nsports + port], buf, sizeof(buf), 0, (struct sockaddr *)&to, sizeof(to)) < 0)
		e->tot.send_errors++;	/* it will count lost: a path that cannot be sent on is not up */
}

static void replies(struct mon_engine *e, int idx);
static void errors(struct mon_engine *e, int idx);

/* The replies come since the last turn, from the sockets epoll says are ready */
static void drain(struct mon_engine *e)
{
	struct epoll_event ev[64];
	int n;

	do {
		n = epoll_wait(e->rep_epfd, ev, 64, 0);
		for (int i = 0; i < n; i++) {
			uint32_t idx = (uint32_t)ev[i].data.u64;

			if (idx >= (uint32_t)(e->peers.nlanes * e->o.nsports))
				continue;
			if (ev[i].events & EPOLLERR)
				errors(e, (int)idx);
			if (ev[i].events & EPOLLIN)
				replies(e, (int)idx);
		}
	} while (n == 64);
}

void mon_engine_tick(struct mon_engine *e, uint64_t now)
{
	uint64_t period = (uint64_t)(1e9 / e->o.rate), tmo = (uint64_t)(e->o.timeout_s * 1e9);
	int nl = e->peers.nlanes, nst = e->peers.n * nl;

	pthread_mutex_lock(&e->lock);
	drain(e);
	for (int l = 0; e->ud && l < nl; l++)
		mon_ud_input(e, l);
	while (e->tail != e->head && e->ring[e->tail].t_ns + tmo <= now) {
		struct mon_flight *f = &e->ring[e->tail];

		if (f->state == 1 || f->state == 2) {
			mon_xcell(e, f->x, f->stream / nl, f->stream % nl, mon_bucket_of(&e->o, f->port))->lost++;
			if (f->x == MON_UD)
				mon_ud_lost(e, f->stream, now);
		}
		f->state = 0;
		e->tail = (e->tail + 1) % e->ring_cap;
	}
	for (int s = 0; s < nst; s++) {
		struct mon_stream *st = &e->st[s];

		if (!e->peers.p[s / nl].ip[s % nl].s_addr)
			continue;
		if (st->next_ns + 10 * period < now)	/* stopped for long (a suspended host): no burst */
			st->next_ns = now;
		while (st->next_ns <= now) {
			int port = st->next_port;

			st->next_port = (port + 1) % e->o.nsports;
			if (e->o.transports & MON_T_UDP)
				send_probe(e, s, port, now);
			if (e->o.transports & MON_T_UD)
				mon_ud_send(e, s, port, now);
			st->next_ns += period;
		}
	}
	e->last_tick_ns = now;
	pthread_mutex_unlock(&e->lock);
}

static void answer(struct mon_engine *e, int lane)
{
	unsigned char buf[MON_PKT_LEN + 1];
	struct sockaddr_in from;

	for (int n = 0; n < 256; n++) {
		socklen_t fl = sizeof(from);
		ssize_t r = recvfrom(e->resp_fd[lane], buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
		struct mon_pkt pkt;

		if (r < 0)
			return;
		if (fl != sizeof(from) || from.sin_family != AF_INET || mon_pkt_decode(buf, (size_t)r, &pkt) ||
		    !mon_peers_known(&e->peers, from.sin_addr.s_addr) ||
		    pkt.type == MON_PKT_REP || (pkt.type == MON_PKT_REQ && pkt.aux)) {
			e->tot.refused_req++;
			continue;
		}
		if (pkt.type != MON_PKT_REQ) {	/* a question for our UD QP, or an answer to ours */
			mon_ud_question(e, lane, buf, &pkt, &from);
			continue;
		}
		buf[5] = MON_PKT_REP;
		if (sendto(e->resp_fd[lane], buf, MON_PKT_LEN, 0, (struct sockaddr *)&from, fl) == MON_PKT_LEN)
			e->tot.echoed++;
	}
}

/* The kernel's receive time of msg (SO_TIMESTAMPNS), else now; CLOCK_REALTIME ns */
static uint64_t rx_time(struct msghdr *msg)
{
	struct timespec ts;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS &&
		    c->cmsg_len >= CMSG_LEN(sizeof(ts))) {
			memcpy(&ts, CMSG_DATA(c), sizeof(ts));
			return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		}
	return realtime_ns();
}

static void replies(struct mon_engine *e, int idx)
{
	int ns = e->o.nsports, nl = e->peers.nlanes, lane = idx / ns, port = idx % ns;
	unsigned char buf[MON_PKT_LEN + 1];
	union {
		char b[CMSG_SPACE(sizeof(struct timespec)) + 64];
		struct cmsghdr align;
	} cbuf;
	struct sockaddr_in from;

	for (int n = 0; n < 256; n++) {
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr msg = { &from, sizeof(from), &iov, 1, cbuf.b, sizeof(cbuf.b), 0 };
		ssize_t r = recvmsg(e->sport_fd[idx], &msg, MSG_DONTWAIT);
		struct mon_flight *f;
		struct mon_pkt pkt;
		uint64_t rx;

		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (r < 0) {	/* an ICMP error pending (IP_RECVERR): its queue, then on */
			errors(e, idx);
			continue;
		}
		if (msg.msg_namelen != sizeof(from) || mon_pkt_decode(buf, (size_t)r, &pkt) || pkt.type != MON_PKT_REP ||
		    pkt.aux || pkt.cookie != e->cookie || pkt.slot >= e->ring_cap) {
			e->tot.refused_rep++;
			continue;
		}
		f = &e->ring[pkt.slot];
		if (f->state != 1 || f->x != MON_UDP || f->seq != pkt.seq || f->port != port || f->stream % nl != lane ||
		    from.sin_port != htons((uint16_t)e->o.port) ||
		    from.sin_addr.s_addr != e->peers.p[f->stream / nl].ip[lane].s_addr) {
			e->tot.refused_rep++;
			continue;
		}
		f->state = 0;
		rx = rx_time(&msg);
		mon_hist_add(&mon_cell(e, f->stream / nl, lane, mon_bucket_of(&e->o, port))->rtt,
			     rx > f->t_rt ? (double)(rx - f->t_rt) / 1e9 : 0);
	}
}

/* The ICMP errors queued on source-port socket idx: a port unreachable that names one of our
 * probes in flight to that peer counts once as its (peer, lane)'s unreachable */
static void errors(struct mon_engine *e, int idx)
{
	int ns = e->o.nsports, nl = e->peers.nlanes, lane = idx / ns, port = idx % ns;
	unsigned char buf[MON_PKT_LEN + 1];
	union {
		char b[512];
		struct cmsghdr align;
	} cbuf;
	struct sockaddr_in to;

	for (int n = 0; n < 256; n++) {
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr msg = { &to, sizeof(to), &iov, 1, cbuf.b, sizeof(cbuf.b), 0 };
		const struct sock_extended_err *ee = NULL;
		struct mon_flight *f;
		struct mon_pkt pkt;
		ssize_t r = recvmsg(e->sport_fd[idx], &msg, MSG_ERRQUEUE | MSG_DONTWAIT);

		if (r < 0)
			return;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
			if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_RECVERR &&
			    c->cmsg_len >= CMSG_LEN(sizeof(*ee)))
				ee = (const struct sock_extended_err *)CMSG_DATA(c);
		if (!ee || ee->ee_origin != SO_EE_ORIGIN_ICMP || ee->ee_type != 3 || ee->ee_code != 3 ||
		    msg.msg_namelen != sizeof(to) || mon_pkt_decode(buf, (size_t)r, &pkt) || pkt.type != MON_PKT_REQ ||
		    pkt.cookie != e->cookie || pkt.slot >= e->ring_cap)
			continue;	/* another error (the probe counts lost at its timeout), or not ours */
		f = &e->ring[pkt.slot];
		if (f->state != 1 || f->x != MON_UDP || f->seq != pkt.seq || f->port != port || f->stream % nl != lane ||
		    to.sin_addr.s_addr != e->peers.p[f->stream / nl].ip[lane].s_addr)
			continue;
		f->state = 2;
		e->st[f->stream].unreachable++;
	}
}

void mon_engine_input(struct mon_engine *e, uint64_t tag)
{
	uint32_t i = (uint32_t)tag;

	pthread_mutex_lock(&e->lock);
	if (tag >> 32 == TAG_RESP && i < (uint32_t)e->peers.nlanes)
		answer(e, (int)i);
	else if (tag >> 32 == TAG_SPORT && i < (uint32_t)(e->peers.nlanes * e->o.nsports))
		replies(e, (int)i);
	else if (tag >> 32 == MON_TAG_UD && e->ud && i < (uint32_t)e->peers.nlanes)
		mon_ud_input(e, (int)i);
	pthread_mutex_unlock(&e->lock);
}
