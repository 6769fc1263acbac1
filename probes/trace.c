/* SPDX-License-Identifier: BSD-2-Clause */
/* Paris-traceroute of TCP 5-tuples: see trace.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../core/clock.h"
#include "../core/error.h"
#include "../core/net.h"
#include "trace.h"

#define TRACE_MAX_PORTS 4096
#define SEQ_STRIDE 16			/* seq = base + SEQ_STRIDE * ttl + attempt */
#define RCVBUF (1 << 20)

/* <linux/icmp.h> clashes with glibc's headers: its two values we need */
#ifndef ICMP_FILTER
#define ICMP_FILTER 1
#endif
#define ICMP_T_UNREACH 3
#define ICMP_T_TIME_EXCEEDED 11

struct tport {
	uint16_t sport;
	uint32_t base;		/* sequence numbers base + 16 * ttl + attempt */
	int cur_ttl;		/* the TTL being probed */
	int waiting;		/* no answer yet for cur_ttl */
	int stop_ttl;		/* the trace ended there (reached or unreachable); 0: not yet */
	int last_ttl;		/* the highest TTL probed */
	int last_att;		/* the slot of its last probe sent */
	int next;		/* next port with the same sport, -1: none */
};

struct tracer {
	int tcp_fd, icmp_fd;
	uint32_t src, dst;	/* network order */
	uint16_t dport;
	int n, max_ttl, probes, timeout_ms, pause_ms, patient;
	struct tport *p;
	struct trace_result *r;
	uint64_t *sent;		/* [port][ttl-1][attempt]: clock_ns() of the send; 0: not sent */
	int *head;		/* [sport]: first port index, -1: none */
	int pending;		/* ports still waiting for an answer at their cur_ttl */
	char *err;
	size_t errlen;
};

static int fail(struct tracer *t, int code, const char *fmt, ...) FS_PRINTF(3, 4);

static int fail(struct tracer *t, int code, const char *fmt, ...)
{
	va_list ap;

	if (t->err && t->errlen) {
		va_start(ap, fmt);
		vsnprintf(t->err, t->errlen, fmt, ap);
		va_end(ap);
	}
	return -code;
}

static uint64_t *sent_at(struct tracer *t, int i, int ttl, int att)
{
	return &t->sent[((size_t)i * (size_t)t->max_ttl + (size_t)(ttl - 1)) *
			 (size_t)t->probes + (size_t)att];
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += get16(p + i);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

#define SYN_LEN 24	/* 20 bytes of header, an MSS option */

/* A SYN of our 5-tuple with sequence number seq; checksum over the pseudo-header. */
static void build_syn(const struct tracer *t, uint16_t sport, uint32_t seq, uint8_t *b)
{
	uint8_t pseudo[12];
	uint32_t sum;

	memset(b, 0, SYN_LEN);
	put16(b, sport);
	put16(b + 2, t->dport);
	put32(b + 4, seq);
	b[12] = (SYN_LEN / 4) << 4;	/* data offset */
	b[13] = 0x02;			/* SYN */
	put16(b + 14, 64240);		/* window */
	b[20] = 2;			/* MSS, length 4, 1460 */
	b[21] = 4;
	put16(b + 22, 1460);
	memcpy(pseudo, &t->src, 4);
	memcpy(pseudo + 4, &t->dst, 4);
	pseudo[8] = 0;
	pseudo[9] = IPPROTO_TCP;
	put16(pseudo + 10, SYN_LEN);
	sum = csum_add(0, pseudo, sizeof(pseudo));
	sum = csum_add(sum, b, SYN_LEN);
	put16(b + 16, csum_fold(sum));
}

/* The port that sent seq from sport (and its TTL and attempt), or -1. */
static int match_probe(struct tracer *t, uint16_t sport, uint32_t seq, int *ttl, int *att)
{
	int i;

	for (i = t->head[sport]; i >= 0; i = t->p[i].next) {
		uint32_t d = seq - t->p[i].base;
		int tt = (int)(d / SEQ_STRIDE), a = (int)(d % SEQ_STRIDE);

		if (d / SEQ_STRIDE > (uint32_t)t->max_ttl || tt < 1 || a >= t->probes)
			continue;
		if (!*sent_at(t, i, tt, a))
			continue;	/* never sent: not ours */
		*ttl = tt;
		*att = a;
		return i;
	}
	return -1;
}

/* Port i got an answer from addr for (ttl, att): kind 0 a router's time-exceeded,
 * 1 the destination, 2 a router's unreachable. */
static void record(struct tracer *t, int i, int ttl, int att, uint32_t addr, int kind,
		   uint64_t now)
{
	struct tport *p = &t->p[i];
	struct trace_hop *h = &t->r[i].hop[ttl - 1];
	struct in_addr a = { .s_addr = addr };

	if (p->stop_ttl && ttl >= p->stop_ttl)
		return;		/* the trace ended before that TTL */
	if (!h->addr[0] || kind) {
		inet_ntop(AF_INET, &a, h->addr, sizeof(h->addr));
		h->rtt_us = (double)(now - *sent_at(t, i, ttl, att)) / 1000.0;
		h->reached = kind == 1;
	}
	if (kind) {
		p->stop_ttl = ttl;
		t->r[i].reached = kind == 1;
	}
	if (p->waiting && (ttl == p->cur_ttl || (kind && ttl < p->cur_ttl))) {
		p->waiting = 0;
		t->pending--;
	}
}

/* One datagram of the ICMP socket: an IP header, ICMP, the quoted IP header and TCP. */
static void on_icmp(struct tracer *t, const uint8_t *b, size_t len, uint64_t now)
{
	size_t ihl, qihl;
	const uint8_t *icmp, *q, *tcp;
	uint32_t from, qsrc, qdst;
	int type, code, ttl, att, i, kind;

	if (len < 20 || (b[0] >> 4) != 4)
		return;
	ihl = (size_t)(b[0] & 0xf) * 4;
	if (ihl < 20 || len < ihl + 8 + 20)
		return;
	memcpy(&from, b + 12, 4);
	icmp = b + ihl;
	type = icmp[0];
	code = icmp[1];
	if (type == ICMP_T_TIME_EXCEEDED && code != 0)
		return;		/* fragment reassembly: not ours */
	if (type != ICMP_T_TIME_EXCEEDED && type != ICMP_T_UNREACH)
		return;
	q = icmp + 8;
	if ((q[0] >> 4) != 4 || q[9] != IPPROTO_TCP)
		return;
	qihl = (size_t)(q[0] & 0xf) * 4;
	if (qihl < 20 || len < ihl + 8 + qihl + 8)
		return;		/* at least 8 bytes of TCP: ports and sequence number */
	memcpy(&qsrc, q + 12, 4);
	memcpy(&qdst, q + 16, 4);
	if (qsrc != t->src || qdst != t->dst)
		return;
	tcp = q + qihl;
	if (get16(tcp + 2) != t->dport)
		return;
	i = match_probe(t, get16(tcp), get32(tcp + 4), &ttl, &att);
	if (i < 0)
		return;
	if (type == ICMP_T_TIME_EXCEEDED)
		kind = 0;
	else
		kind = from == t->dst ? 1 : 2;
	record(t, i, ttl, att, from, kind, now);
}

/* The port waiting at its TTL whose 5-tuple a plain ACK of the destination is for, or -1 */
static int match_ack(struct tracer *t, uint16_t sport, int *ttl, int *att)
{
	int i;

	for (i = t->head[sport]; i >= 0; i = t->p[i].next)
		if (t->p[i].waiting && *sent_at(t, i, t->p[i].cur_ttl, t->p[i].last_att)) {
			*ttl = t->p[i].cur_ttl;
			*att = t->p[i].last_att;
			return i;
		}
	return -1;
}

/* One datagram of the TCP socket: a SYN-ACK or RST|ACK of the destination acks seq + 1; a
 * plain ACK is what a connection of that 5-tuple in TIME_WAIT, or a live one (RFC 5961's
 * challenge ACK), answers a SYN with: the destination too, for the TTL being probed. */
static void on_tcp(struct tracer *t, const uint8_t *b, size_t len, uint64_t now)
{
	size_t ihl;
	const uint8_t *tcp;
	uint32_t from, to;
	int ttl, att, i, flags;

	if (len < 20 || (b[0] >> 4) != 4)
		return;
	ihl = (size_t)(b[0] & 0xf) * 4;
	if (ihl < 20 || len < ihl + 20 || b[9] != IPPROTO_TCP)
		return;
	memcpy(&from, b + 12, 4);
	memcpy(&to, b + 16, 4);
	if (from != t->dst || to != t->src)
		return;
	tcp = b + ihl;
	flags = tcp[13];
	if (get16(tcp) != t->dport || !(flags & 0x10))	/* ACK: it answers our SYN */
		return;
	if ((flags & 0x12) != 0x12 && !(flags & 0x04)) {	/* not SYN-ACK, not RST: a plain ACK */
		size_t doff = (size_t)(tcp[12] >> 4) * 4, end = get16(b + 2);

		if (end < ihl + 20 || end > len)
			end = len;	/* the IP length as read, when the header's is off */
		/* a FIN or data is a connection's own segment, never an answer to a SYN */
		if ((flags & 0x01) || doff < 20 || end > ihl + doff)
			return;
		i = match_ack(t, get16(tcp + 2), &ttl, &att);
	} else
		i = match_probe(t, get16(tcp + 2), get32(tcp + 8) - 1, &ttl, &att);
	if (i < 0)
		return;
	record(t, i, ttl, att, from, 1, now);
}

static void drain(struct tracer *t, int fd, int is_icmp)
{
	uint8_t buf[1600];
	int k;

	for (k = 0; k < 1024; k++) {	/* then poll again: the other socket gets its turn */
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n < 0)
			return;		/* EAGAIN, or an error queued by the stack: nothing to read */
		if (is_icmp)
			on_icmp(t, buf, (size_t)n, clock_ns());
		else
			on_tcp(t, buf, (size_t)n, clock_ns());
	}
}

/* Read answers until deadline, or until no port waits. */
static int collect(struct tracer *t, uint64_t deadline)
{
	struct pollfd pfd[2] = {
		{ .fd = t->icmp_fd, .events = POLLIN },
		{ .fd = t->tcp_fd, .events = POLLIN },
	};

	while (t->pending > 0) {
		int ms = clock_ms_left(deadline), rc;

		if (net_stop)
			return -EINTR;
		if (!ms)
			return 0;
		rc = poll(pfd, 2, ms);
		if (rc < 0) {
			if (errno == EINTR)
				continue;	/* net_stop is checked above */
			return -errno;
		}
		if (pfd[0].revents)
			drain(t, t->icmp_fd, 1);
		if (pfd[1].revents)
			drain(t, t->tcp_fd, 0);
	}
	return 0;
}

static int send_probe(struct tracer *t, int i, int ttl, int att)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_addr.s_addr = t->dst };
	uint8_t b[SYN_LEN];
	uint32_t seq = t->p[i].base + (uint32_t)(SEQ_STRIDE * ttl + att);
	char d[INET_ADDRSTRLEN];
	int e;

	build_syn(t, t->p[i].sport, seq, b);
	if (setsockopt(t->tcp_fd, IPPROTO_IP, IP_TTL, &ttl, sizeof(ttl)) < 0)
		return fail(t, FS_EXIT_ENV, "setsockopt(IP_TTL %d): %s", ttl, strerror(errno));
	for (;;) {
		*sent_at(t, i, ttl, att) = clock_ns();
		if (sendto(t->tcp_fd, b, sizeof(b), 0, (struct sockaddr *)&to, sizeof(to)) ==
		    (ssize_t)sizeof(b))
			return 0;
		if (errno == EINTR && !net_stop)
			continue;
		break;
	}
	e = errno;
	switch (e) {
	case EINTR:
		return -FS_EXIT_INTERRUPTED;
	case ENOBUFS: case EAGAIN: case ENOMEM:
		return 0;	/* a full queue: this probe is lost, a later round retries */
	case ENETUNREACH: case EHOSTUNREACH:
		inet_ntop(AF_INET, &t->dst, d, sizeof(d));
		return fail(t, FS_EXIT_ENV, "no route to %s from this host: %s", d, strerror(e));
	default:
		inet_ntop(AF_INET, &t->dst, d, sizeof(d));
		return fail(t, FS_EXIT_ENV, "sending a probe to %s: %s", d, strerror(e));
	}
}

static int parse_ipv4(const char *s, uint32_t *a)
{
	struct in_addr in;

	if (!s || inet_pton(AF_INET, s, &in) != 1)
		return -1;
	*a = in.s_addr;
	return 0;
}

/* The source address the kernel picks towards dst (a UDP socket connected, nothing sent). */
static int pick_source(struct tracer *t, int dport)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons((uint16_t)dport),
				  .sin_addr.s_addr = t->dst };
	struct sockaddr_in me;
	socklen_t len = sizeof(me);
	char d[INET_ADDRSTRLEN];
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc = 0;

	inet_ntop(AF_INET, &t->dst, d, sizeof(d));
	if (fd < 0)
		return fail(t, FS_EXIT_ENV, "socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&to, sizeof(to)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&me, &len) < 0)
		rc = fail(t, FS_EXIT_ENV, "no route to %s from this host: %s", d, strerror(errno));
	else
		t->src = me.sin_addr.s_addr;
	close(fd);
	return rc;
}

static int open_sockets(struct tracer *t)
{
	struct sockaddr_in me = { .sin_family = AF_INET, .sin_addr.s_addr = t->src };
	/* keep SYN, RST or ACK segments from dst whose source port is dport (IP header first) */
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 12),			/* IP source */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ntohl(t->dst), 0, 6),
		BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 0),			/* X = IP header length */
		BPF_STMT(BPF_LD | BPF_H | BPF_IND, 0),			/* TCP source port */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, t->dport, 0, 3),
		BPF_STMT(BPF_LD | BPF_B | BPF_IND, 13),			/* TCP flags */
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x16, 0, 1),	/* SYN, RST or ACK */
		BPF_STMT(BPF_RET | BPF_K, 0xffff),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	struct sock_fprog prog = { .len = sizeof(code) / sizeof(code[0]), .filter = code };
	uint32_t icmp_mask = ~((1u << ICMP_T_UNREACH) | (1u << ICMP_T_TIME_EXCEEDED));
	int rcvbuf = RCVBUF, fds[2], k;
	char s[INET_ADDRSTRLEN];

	fds[0] = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_TCP);
	fds[1] = fds[0] < 0 ? -1 : socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);
	if (fds[0] < 0 || fds[1] < 0) {
		int e = errno;

		if (fds[0] >= 0)
			close(fds[0]);
		if (e == EPERM || e == EACCES)
			return fail(t, FS_EXIT_ENV, "raw sockets need CAP_NET_RAW: run as root or give "
				    "the binary cap_net_raw (setcap cap_net_raw+ep BINARY)");
		return fail(t, FS_EXIT_ENV, "raw socket: %s", strerror(e));
	}
	t->tcp_fd = fds[0];
	t->icmp_fd = fds[1];
	inet_ntop(AF_INET, &t->src, s, sizeof(s));
	for (k = 0; k < 2; k++) {
		if (bind(fds[k], (struct sockaddr *)&me, sizeof(me)) < 0)
			return fail(t, FS_EXIT_ENV, errno == EADDRNOTAVAIL ?
				    "source address %s is not an address of this host (network namespace)" :
				    "bind %s: %s", s, strerror(errno));
		setsockopt(fds[k], SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	}
	if (setsockopt(t->tcp_fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) < 0)
		return fail(t, FS_EXIT_ENV, "SO_ATTACH_FILTER: %s", strerror(errno));
	if (setsockopt(t->icmp_fd, SOL_RAW, ICMP_FILTER, &icmp_mask, sizeof(icmp_mask)) < 0)
		return fail(t, FS_EXIT_ENV, "ICMP_FILTER: %s", strerror(errno));
	/* what queued before the filters: read and ignore it */
	drain(t, t->tcp_fd, 0);
	drain(t, t->icmp_fd, 1);
	return 0;
}

/* How many of this host's TCP sockets hold one of the traced 5-tuples in a state where the
 * destination may still send to it (not TIME_WAIT, closed or listening); 0 when
 * /proc/net/tcp cannot be read. */
static int unsettled(const struct tracer *t)
{
	FILE *f = fopen("/proc/net/tcp", "re");
	char line[512];
	int n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned la, lp, ra, rp, st;

		if (sscanf(line, " %*u: %x:%x %x:%x %x", &la, &lp, &ra, &rp, &st) != 5 || lp > 65535)
			continue;	/* the heading */
		if (la == t->src && ra == t->dst && rp == t->dport && t->head[lp] >= 0 &&
		    st != 6 && st != 7 && st != 10)	/* TIME_WAIT, CLOSE, LISTEN */
			n++;
	}
	fclose(f);
	return n;
}

/* Wait up to settle_ms for the connections of the traced 5-tuples to end (trace.h) */
static int settle(const struct tracer *t, int settle_ms)
{
	uint64_t deadline = clock_ns() + (uint64_t)settle_ms * 1000000u;

	while (unsettled(t)) {
		struct timespec ts = { 0, 20 * 1000000 };

		if (net_stop)
			return -FS_EXIT_INTERRUPTED;
		if (!clock_ms_left(deadline))
			break;	/* a connection the peer keeps open: traced anyway (trace.h) */
		nanosleep(&ts, NULL);
	}
	return 0;
}

static int clamp(int v, int dflt, int lo, int hi)
{
	if (v <= 0)
		v = dflt;
	return v < lo ? lo : v > hi ? hi : v;
}

/* Probe every port still tracing at ttl: rounds of sends, answers, pauses
 * (probes_per_hop of them; patient: while answers come, each round's probes
 * in the slot round % probes_per_hop). */
static int probe_ttl(struct tracer *t, int ttl)
{
	int i, round, rc, quiet = 0, rounds = t->patient ? 4 * t->n + 10 : t->probes;

	t->pending = 0;
	for (i = 0; i < t->n; i++) {
		struct tport *p = &t->p[i];

		p->waiting = 0;
		if (p->stop_ttl)
			continue;
		p->cur_ttl = p->last_ttl = ttl;
		p->waiting = 1;
		t->pending++;
	}
	for (round = 0; round < rounds && t->pending && quiet < (t->patient ? TRACE_QUIET : rounds); round++) {
		int before = t->pending;

		if (round) {
			rc = collect(t, clock_ns() + (uint64_t)t->pause_ms * 1000000u);
			if (rc)
				return rc == -EINTR ? -FS_EXIT_INTERRUPTED :
				       fail(t, FS_EXIT_ENV, "poll: %s", strerror(-rc));
			if (!t->pending)
				break;
		}
		for (i = 0; i < t->n; i++) {
			if (!t->p[i].waiting)
				continue;
			if (net_stop)
				return -FS_EXIT_INTERRUPTED;
			t->p[i].last_att = round % t->probes;
			rc = send_probe(t, i, ttl, t->p[i].last_att);
			if (rc)
				return rc;
		}
		rc = collect(t, clock_ns() + (uint64_t)t->timeout_ms * 1000000u);
		if (rc)
			return rc == -EINTR ? -FS_EXIT_INTERRUPTED :
			       fail(t, FS_EXIT_ENV, "poll: %s", strerror(-rc));
		quiet = t->pending < before ? 0 : quiet + 1;
	}
	return 0;
}

static void finish(struct tracer *t)
{
	int i, h;

	for (i = 0; i < t->n; i++) {
		struct trace_result *r = &t->r[i];
		int nh = t->p[i].stop_ttl ? t->p[i].stop_ttl : t->p[i].last_ttl;

		r->nhops = nh;
		for (h = 0; h < TRACE_MAX_HOPS; h++) {
			if (h >= nh)
				memset(&r->hop[h], 0, sizeof(r->hop[h]));
			else
				r->hop[h].ttl = h + 1;
			if (!r->hop[h].addr[0])
				r->hop[h].rtt_us = 0;
		}
	}
}

int trace_tcp_many(const char *src_ip, const int *sports, int n, const char *dst_ip,
		   int dport, const struct trace_opts *o, struct trace_result *r,
		   char *err, size_t errlen)
{
	static const struct trace_opts dflt;
	struct tracer t = { .tcp_fd = -1, .icmp_fd = -1, .err = err, .errlen = errlen, .r = r };
	int i, ttl, rc = 0;

	if (err && errlen)
		err[0] = 0;
	if (!o)
		o = &dflt;
	if (!src_ip)
		src_ip = o->src_ip;
	if (n < 1 || n > TRACE_MAX_PORTS || !sports || !r)
		return fail(&t, FS_EXIT_USAGE, "%d source ports: 1 to %d can be traced at once",
			    n, TRACE_MAX_PORTS);
	if (parse_ipv4(dst_ip, &t.dst))
		return fail(&t, FS_EXIT_USAGE, "bad destination '%s' (an IPv4 address: tracing is "
			    "IPv4 only)", dst_ip ? dst_ip : "(null)");
	if (src_ip && parse_ipv4(src_ip, &t.src))
		return fail(&t, FS_EXIT_USAGE, "bad source '%s' (an IPv4 address: tracing is IPv4 only)",
			    src_ip);
	if (dport < 1 || dport > 65535)
		return fail(&t, FS_EXIT_USAGE, "bad destination port %d (1 to 65535)", dport);
	for (i = 0; i < n; i++)
		if (sports[i] < 1 || sports[i] > 65535)
			return fail(&t, FS_EXIT_USAGE, "bad source port %d (1 to 65535)", sports[i]);
	t.dport = (uint16_t)dport;
	t.n = n;
	t.max_ttl = clamp(o->max_ttl, TRACE_DEFAULT_MAX_TTL, 1, TRACE_MAX_HOPS);
	t.probes = clamp(o->probes_per_hop, TRACE_DEFAULT_PROBES, 1, TRACE_MAX_PROBES);
	t.timeout_ms = clamp(o->timeout_ms, TRACE_DEFAULT_TIMEOUT_MS, 1, 600000);
	t.pause_ms = o->pause_ms > 0 ? clamp(o->pause_ms, 0, 1, 600000) :
		     clamp(t.timeout_ms / 4, 0, 10, 250);
	t.patient = o->patient;
	memset(r, 0, (size_t)n * sizeof(*r));

	if (!src_ip && (rc = pick_source(&t, dport)))
		return rc;
	t.p = calloc((size_t)n, sizeof(*t.p));
	t.sent = calloc((size_t)n * (size_t)t.max_ttl * (size_t)t.probes, sizeof(*t.sent));
	t.head = malloc(65536 * sizeof(*t.head));
	if (!t.p || !t.sent || !t.head) {
		rc = fail(&t, FS_EXIT_ENV, "out of memory");
		goto out;
	}
	memset(t.head, 0xff, 65536 * sizeof(*t.head));	/* all -1 */
	for (i = n - 1; i >= 0; i--) {
		uint32_t base;

		if (getrandom(&base, sizeof(base), 0) != sizeof(base))
			base = (uint32_t)(clock_ns() * 2654435761u) ^ (uint32_t)getpid();
		t.p[i].sport = (uint16_t)sports[i];
		t.p[i].base = base + (uint32_t)i * 0x9e3779b1u;
		t.p[i].next = t.head[sports[i]];
		t.head[sports[i]] = i;
	}
	if (o->settle_ms > 0)
		rc = settle(&t, clamp(o->settle_ms, 0, 1, 600000));
	if (!rc)
		rc = open_sockets(&t);
	for (ttl = 1; !rc && ttl <= t.max_ttl; ttl++) {
		for (i = 0; i < n && t.p[i].stop_ttl; i++)
			;
		if (i == n)
			break;	/* every trace ended */
		rc = probe_ttl(&t, ttl);
	}
	finish(&t);
out:
	if (t.tcp_fd >= 0)
		close(t.tcp_fd);
	if (t.icmp_fd >= 0)
		close(t.icmp_fd);
	free(t.p);
	free(t.sent);
	free(t.head);
	return rc;
}

int trace_tcp(const char *src_ip, int sport, const char *dst_ip, int dport,
	      const struct trace_opts *o, struct trace_result *r, char *err, size_t errlen)
{
	return trace_tcp_many(src_ip, &sport, 1, dst_ip, dport, o, r, err, errlen);
}
