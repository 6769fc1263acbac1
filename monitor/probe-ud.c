/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The monitor's verbs UD probes (monitor/probe.h says what they are; the
 * endpoints are transport/ud.h's): a UD endpoint per lane, the peers'
 * responder QPs learned over UDP, the probes sent and their replies
 * matched, the peers' probes echoed.  Everything but open and close runs
 * under the engine's lock, from probe.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>

#include "../core/clock.h"
#include "../core/error.h"
#include "../core/testhook.h"
#include "../transport/ud.h"
#include "probe.h"

#define ASK_RETRY_NS 1000000000ull	/* a question unanswered, or a probe lost: ask again after */
#define ASK_REFRESH_NS 10000000000ull	/* a QP known: ask again after (the peer may have restarted) */
#define MAX_AHS 16384			/* address handles an endpoint keeps */

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int mon_ud_open(struct mon_engine *e)
{
	int nl = e->peers.nlanes;
	size_t ahs = (size_t)e->peers.n * (size_t)e->o.nsports * 2 + 64;
	const char *hook = fs_test_env("FABSCOPE_TEST_UD_MAX_AHS");	/* a test build's smaller cache */

	if (ahs > MAX_AHS)
		ahs = MAX_AHS;
	if (hook && atoi(hook) > 0)
		ahs = (size_t)atoi(hook);
	if (!(e->ud = calloc((size_t)nl, sizeof(*e->ud))))
		return fs_err_env("out of memory for the UD endpoints");
	for (int l = 0; l < nl; l++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = MON_TAG_UD << 32 | (uint32_t)l };
		char err[512], a[INET_ADDRSTRLEN];
		const struct ud_info *u;

		inet_ntop(AF_INET, &e->peers.lane[l].ip, a, sizeof(a));
		if (ud_open(&e->ud[l], e->peers.lane[l].ip, e->o.nsports, MON_UD_QKEY, ahs, err, sizeof(err)))
			return fs_err_env("--transport %s: rail %d plane %d (%s): %s",
					  e->o.transports & MON_T_UDP ? "both" : "verbs", e->peers.lane[l].rail,
					  e->peers.lane[l].plane, a, err);
		if (epoll_ctl(e->epfd, EPOLL_CTL_ADD, ud_fd(e->ud[l]), &ev))
			return fs_err_env("epoll_ctl: %s", strerror(errno));
		u = ud_info(e->ud[l]);
		fs_log(1, "rail %d plane %d (%s): UD responder QP 0x%06x and %d probe QPs on %s port %d, GID %d; %s",
		       e->peers.lane[l].rail, e->peers.lane[l].plane, a, u->resp_qpn, u->nqps, u->dev, u->port,
		       u->gid_index, u->clock == UD_CLOCK_DEVICE ? "the device's completion times" : u->clock_why);
	}
	return 0;
}

void mon_ud_close(struct mon_engine *e)
{
	for (int l = 0; e->ud && l < e->peers.nlanes; l++)
		ud_close(e->ud[l]);
	free(e->ud);
	e->ud = NULL;
}

/* Ask the stream's peer for its responder QP on the lane (a UDP datagram to its responder) */
static void ask(struct mon_engine *e, int stream, uint64_t now)
{
	int nl = e->peers.nlanes, l = stream % nl;
	struct mon_stream *st = &e->st[stream];
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons((uint16_t)e->o.port),
				  .sin_addr = e->peers.p[stream / nl].ip[l] };
	struct mon_pkt pkt = { MON_PKT_UDQ, e->cookie, ++e->seq, (uint32_t)stream, 0 };
	unsigned char buf[MON_PKT_LEN];

	st->ud_nonce = pkt.seq;
	st->ud_ask_ns = now + (st->ud_qpn ? ASK_REFRESH_NS : ASK_RETRY_NS);
	mon_pkt_encode(buf, &pkt);
	if (sendto(e->resp_fd[l], buf, sizeof(buf), 0, (struct sockaddr *)&to, sizeof(to)) == MON_PKT_LEN)
		e->tot.ud_asked++;
}

void mon_ud_lost(struct mon_engine *e, int stream, uint64_t now)
{
	struct mon_stream *st = &e->st[stream];

	if (st->ud_ask_ns > now + ASK_RETRY_NS)
		st->ud_ask_ns = now + ASK_RETRY_NS;
}

void mon_ud_send(struct mon_engine *e, int stream, int port, uint64_t now)
{
	int nl = e->peers.nlanes, p = stream / nl, l = stream % nl, rc;
	struct mon_stream *st = &e->st[stream];
	uint32_t fl = ud_flow_label_of_sport(e->o.sport_lo + port);
	struct mon_pkt pkt = { MON_PKT_REQ, e->cookie, 0, (uint32_t)e->head, fl };
	unsigned char buf[MON_PKT_LEN];
	size_t slot = e->head;

	if (now >= st->ud_ask_ns)
		ask(e, stream, now);
	if (!st->ud_qpn) {
		st->ud_unresolved++;
		return;
	}
	if ((e->head + 1) % e->ring_cap == e->tail)
		return;	/* cannot be: the ring holds twice what can fly */
	pkt.seq = ++e->seq;
	e->ring[slot] = (struct mon_flight){ .seq = pkt.seq, .t_ns = now, .stream = stream, .port = port, .state = 1,
					     .x = MON_UD, .dqpn = st->ud_qpn };
	e->head = (e->head + 1) % e->ring_cap;
	mon_xcell(e, MON_UD, p, l, mon_bucket_of(&e->o, port))->sent++;
	mon_pkt_encode(buf, &pkt);
	e->ring[slot].t_rt = realtime_ns();
	rc = ud_send(e->ud[l], port, e->peers.p[p].ip[l], st->ud_qpn, fl, buf, sizeof(buf),
		     (uint64_t)slot | (uint64_t)(uint32_t)pkt.seq << 32);
	if (rc)
		e->tot.ud_send_errors++;	/* it will count lost */
}

void mon_ud_question(struct mon_engine *e, int lane, unsigned char *buf, const struct mon_pkt *pkt,
		     const struct sockaddr_in *from)
{
	int nl = e->peers.nlanes;
	uint32_t s = pkt->slot;
	struct mon_stream *st;

	if (!e->ud) {	/* no UD here: neither answered nor asked */
		e->tot.refused_req++;
		return;
	}
	if (pkt->type == MON_PKT_UDQ) {	/* a peer asks for our responder QP on this lane */
		struct mon_pkt a = *pkt;

		if (pkt->aux) {
			e->tot.ud_refused_req++;
			return;
		}
		a.type = MON_PKT_UDA;
		a.aux = ud_info(e->ud[lane])->resp_qpn;
		mon_pkt_encode(buf, &a);
		sendto(e->resp_fd[lane], buf, MON_PKT_LEN, 0, (const struct sockaddr *)from, sizeof(*from));
		return;
	}
	/* an answer: to a question of ours still out, from the peer and port asked */
	st = s < (uint32_t)(e->peers.n * nl) ? &e->st[s] : NULL;
	if (!st || pkt->cookie != e->cookie || (int)(s % (uint32_t)nl) != lane || !st->ud_nonce ||
	    st->ud_nonce != pkt->seq || from->sin_port != htons((uint16_t)e->o.port) ||
	    from->sin_addr.s_addr != e->peers.p[s / (uint32_t)nl].ip[lane].s_addr || !pkt->aux || pkt->aux > 0xffffff) {
		e->tot.ud_refused_rep++;
		return;
	}
	st->ud_qpn = pkt->aux;
	st->ud_nonce = 0;
	e->tot.ud_answered++;
}

/* A peer's probe come to our responder QP: echoed to the QP it came from, with the flow label it asks */
static void echo(struct mon_engine *e, int lane, struct ud_comp *c)
{
	struct in_addr to = { c->src_ip };
	struct mon_pkt pkt;

	if (!c->ok || !c->src_ip || !mon_peers_known(&e->peers, c->src_ip) || mon_pkt_decode(c->data, c->len, &pkt) ||
	    pkt.type != MON_PKT_REQ || pkt.aux > 0xFFFFF) {
		e->tot.ud_refused_req++;
		return;
	}
	c->data[5] = MON_PKT_REP;
	if (ud_send(e->ud[lane], UD_RESPONDER, to, c->src_qpn, pkt.aux, c->data, MON_PKT_LEN, 0))
		e->tot.ud_send_errors++;
	else
		e->tot.ud_echoed++;
}

/* A reply come to probe QP c->qp: timed when it finds its probe */
static void reply(struct mon_engine *e, int lane, const struct ud_comp *c, int device_clock, uint64_t now_rt)
{
	int nl = e->peers.nlanes;
	struct mon_flight *f;
	struct mon_pkt pkt;
	uint64_t t0, t1;

	if (!c->ok || mon_pkt_decode(c->data, c->len, &pkt) || pkt.type != MON_PKT_REP || pkt.cookie != e->cookie ||
	    pkt.slot >= e->ring_cap) {
		e->tot.ud_refused_rep++;
		return;
	}
	f = &e->ring[pkt.slot];
	if (f->state != 1 || f->x != MON_UD || f->seq != pkt.seq || f->port != c->qp || f->stream % nl != lane ||
	    c->src_ip != e->peers.p[f->stream / nl].ip[lane].s_addr || c->src_qpn != f->dqpn) {
		e->tot.ud_refused_rep++;
		return;
	}
	f->state = 0;
	if (device_clock && f->t_dev)
		t0 = f->t_dev, t1 = c->t_ns;
	else
		t0 = f->t_rt, t1 = device_clock ? now_rt : c->t_ns;
	mon_hist_add(&mon_xcell(e, MON_UD, f->stream / nl, lane, mon_bucket_of(&e->o, f->port))->rtt,
		     t1 > t0 ? (double)(t1 - t0) / 1e9 : 0);
}

/* A send of ours completed: a probe's takes the device's time of it */
static void sent(struct mon_engine *e, const struct ud_comp *c, int device_clock)
{
	size_t slot = (size_t)(uint32_t)c->tag;
	struct mon_flight *f;

	if (!c->ok)
		e->tot.ud_send_errors++;	/* (a probe's counts lost at its timeout) */
	if (c->qp == UD_RESPONDER || slot >= e->ring_cap)
		return;
	f = &e->ring[slot];
	if (c->ok && device_clock && f->state == 1 && f->x == MON_UD && (uint32_t)f->seq == (uint32_t)(c->tag >> 32))
		f->t_dev = c->t_ns;
}

void mon_ud_input(struct mon_engine *e, int lane)
{
	struct ud_ep *ep = e->ud[lane];
	int device_clock = ud_info(ep)->clock == UD_CLOCK_DEVICE;
	struct ud_comp c[32];

	for (int round = 0; round < 16; round++) {	/* at most 512 a call: the loop turns on */
		uint64_t now_rt = realtime_ns();
		int n = ud_poll(ep, c, 32);

		for (int i = 0; i < n; i++) {
			if (c[i].send)
				sent(e, &c[i], device_clock);
			else if (c[i].qp == UD_RESPONDER)
				echo(e, lane, &c[i]);
			else
				reply(e, lane, &c[i], device_clock, now_rt);
		}
		if (n < 32)
			break;
	}
	if (ud_info(ep)->failed && !e->ud_said[lane]) {	/* said once: what went wrong first */
		e->ud_said[lane] = 1;
		fs_warn("rail %d plane %d: %s", e->peers.lane[lane].rail, e->peers.lane[lane].plane,
			ud_info(ep)->first_failure);
	}
}
