/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The monitor's UDP probes and their echo responder.
 *
 * A probe is one UDP datagram of MON_PKT_LEN bytes, big-endian:
 *
 *   0  magic "FSMP"     4  version (1)     5  type (below)
 *   6  zero (2 bytes)   8  cookie (8: the sender's, drawn at start)
 *   16 seq (8)          24 slot (4: where the sender keeps it)   28 aux (4)
 *
 * Types: 1 a probe, 2 its reply (the same bytes; aux 0 over UDP; over UD the
 * flow label the reply is to leave with, echoed), 3 a question for the
 * responder's UD QP number on the lane it is asked on (aux 0; seq and slot
 * a nonce and the asker's stream), 4 its answer (the question's bytes,
 * aux the QP number).  An agent without --transport verbs answers no
 * question.
 *
 * The responder (every agent runs one per lane, on --port) answers a
 * well-formed request from an address of the hostfile with the same bytes,
 * type 2, to where it came from: one datagram for one, the same size, and
 * nothing for anyone else, so it can be no amplifier.  The sender keeps
 * what it sent (lane, peer, source port, time) in its own ring, and trusts
 * of a reply only the slot and seq that find that record again, from the
 * peer's address and port, on the socket it was sent from: a reply forged,
 * late (its probe already counted lost) or answered twice is refused and
 * counted, never timed.
 *
 * Source ports: each (peer, lane) stream sends from the next of S source
 * ports (--sport-range LO-HI, S = HI - LO + 1) at each probe, every one a
 * distinct 5-tuple the fabric's ECMP hashes on its own; port LO + i is in
 * source-port bucket i * B / S (B = --sport-buckets, at most S), so with the
 * default range of 16 ports and 16 buckets a bucket is one 5-tuple per peer
 * and lane, which a traceroute can follow.  RTT is software time: from
 * CLOCK_REALTIME just before sendto to the kernel's receive timestamp of
 * the reply (SO_TIMESTAMPNS, the same clock), so that the time the agent
 * takes to read it is not counted (a negative one, the clock stepped
 * between the two, counts 0).
 *
 * Cost: the responders' sockets are read as their datagrams come (a
 * peer's RTT includes our answer); the replies are read at the engine's
 * turns (every 10 ms: agent.c), the ready source-port sockets found by an
 * epoll of their own, so that 640 probes a second cost 100 wake-ups, not
 * 1,280.
 *
 * A probe the peer's host refuses (ICMP port unreachable: no monitor
 * listens there, the sockets ask for such errors with IP_RECVERR) is
 * counted per (peer, lane) as unreachable, once, when the error names a
 * probe of ours in flight (the error queue gives back the datagram sent),
 * and lost too at its timeout: a peer whose agent is down is told from a
 * path that drops.
 *
 * Counters per cell (peer, lane, bucket): sent, lost (no valid reply
 * within --timeout: counted when the timeout passes), and the RTT
 * histogram (monitor/hist.h) of the answered.  Memory, fixed at each
 * (re)load: cells = peers x lanes x B of (2 + MON_HIST_BUCKETS + 2) words
 * (about 220 bytes; twice that with --jsonl, which keeps the last
 * interval's; a plane of them per transport, UDP and UD), plus the ring of probes in flight (rate x peers x lanes x
 * timeout of each transport, 56 bytes each, rounded up to a power of two), plus one socket
 * per lane and source port.  agent.c refuses more than 65,536 cells (14 MiB;
 * /metrics is about 2.7 KB of text a cell, 180 MB at that bound, built in
 * one buffer at each scrape: keep peers x lanes x buckets well below it);
 * the default 64 peers x 1 lane x 16 buckets is 1,024 cells, 225 KiB, and
 * a scrape of 2.8 MB.
 */
#ifndef FS_MON_PROBE_H
#define FS_MON_PROBE_H

#include <netinet/in.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "hist.h"
#include "peers.h"

#define MON_PKT_LEN 32
#define MON_MAGIC 0x46534d50u	/* "FSMP" */
#define MON_PKT_VERSION 1
enum { MON_PKT_REQ = 1, MON_PKT_REP = 2, MON_PKT_UDQ = 3, MON_PKT_UDA = 4 };

struct mon_pkt {
	int type;
	uint64_t cookie, seq;
	uint32_t slot, aux;
};

void mon_pkt_encode(unsigned char *buf, const struct mon_pkt *p);
/* 0, or -1 for anything but MON_PKT_LEN bytes of this format */
int mon_pkt_decode(const unsigned char *buf, size_t len, struct mon_pkt *p);

struct mon_cell {
	uint64_t sent, lost;
	struct mon_hist rtt;
};

/* The probes' transports (--transport), and the planes of the cells */
enum { MON_UDP = 0, MON_UD = 1, MON_NX };
#define MON_T_UDP (1 << MON_UDP)
#define MON_T_UD (1 << MON_UD)
#define MON_UD_QKEY 0x46534d50u	/* the QKey of every monitor's UD QPs ("FSMP") */

struct mon_opts {
	double rate;		/* probes a second per peer and lane */
	double timeout_s;	/* a probe unanswered this long is lost */
	int port;		/* the responders' UDP port */
	int sport_lo, nsports;	/* source ports sport_lo .. sport_lo + nsports - 1 */
	int buckets;		/* B */
	int transports;		/* MON_T_UDP, MON_T_UD or both */
};

struct mon_stream {		/* one (peer, lane) */
	uint64_t next_ns;	/* its next probe (of each transport) */
	int next_port;		/* index of the source port it sends from next */
	uint64_t unreachable;	/* probes the peer's host refused (ICMP port unreachable) */
	/* UD (probe-ud.c): the peer's responder QP on the lane, asked over UDP */
	uint32_t ud_qpn;	/* 0: not known yet */
	uint64_t ud_ask_ns;	/* ask (again) from then on */
	uint64_t ud_nonce;	/* of the question out */
	uint64_t ud_unresolved;	/* UD probes not sent: the peer's QP not known */
};

struct mon_flight {
	uint64_t seq, t_ns;	/* t_ns: CLOCK_MONOTONIC at the send (its timeout) */
	uint64_t t_rt;		/* CLOCK_REALTIME at the send (its RTT) */
	uint64_t t_dev;		/* UD: the device's time of its send completion (0: none yet) */
	int stream, port;	/* port: index of the source port (UD: of the probe QP) */
	int state;		/* 0 free or done, 1 in flight, 2 in flight and refused by ICMP */
	int x;			/* MON_UDP or MON_UD */
	uint32_t dqpn;		/* UD: the QP it went to */
};

/* Engine-wide counts, for fabscope_monitor_* */
struct mon_totals {
	uint64_t echoed;	/* requests answered as responder */
	uint64_t refused_req;	/* requests not answered: malformed, or from no node of the file */
	uint64_t refused_rep;	/* replies refused: malformed, forged, late, twice */
	uint64_t send_errors;	/* sendto failures (the probe then counts lost) */
	uint64_t reloads_ok, reloads_failed;
	/* UD probes (probe-ud.c) */
	uint64_t ud_echoed, ud_refused_req, ud_refused_rep, ud_send_errors;
	uint64_t ud_asked, ud_answered;	/* questions for peers' QPs sent, and answered to us */
};

struct ud_ep;

struct mon_engine {
	struct mon_opts o;
	struct mon_peers peers;
	struct mon_cell *cells;		/* [((x * peers + peer) * nlanes + lane) * buckets + bucket], x < nx */
	int nx;				/* planes of cells: 1 (UDP), 2 with UD */
	struct mon_stream *st;		/* [peer * nlanes + lane] */
	struct mon_flight *ring;	/* in flight, in send order */
	size_t ring_cap, head, tail;	/* head: next to fill; tail: oldest */
	int *resp_fd;			/* [lane] */
	int *sport_fd;			/* [lane * nsports + i] */
	int epfd;			/* the responders' sockets (and what agent.c adds) */
	int rep_epfd;			/* the source-port sockets, looked at each turn */
	struct ud_ep **ud;		/* [lane] with MON_T_UD */
	char ud_said[MON_MAX_LANES];	/* its first failed completion said */
	uint64_t cookie, seq;
	uint64_t last_tick_ns;		/* CLOCK_MONOTONIC of the last turn (health) */
	struct mon_totals tot;
	pthread_mutex_t lock;		/* cells, peers, tot: the HTTP thread reads them */
};

/* The cell of (transport x, peer, lane, bucket) */
static inline struct mon_cell *mon_xcell(struct mon_engine *e, int x, int peer, int lane, int bucket)
{
	size_t per = (size_t)e->peers.n * (size_t)e->peers.nlanes * (size_t)e->o.buckets;

	return &e->cells[(size_t)x * per + ((size_t)peer * (size_t)e->peers.nlanes + (size_t)lane) * (size_t)e->o.buckets +
			 (size_t)bucket];
}

/* The UDP cell of (peer, lane, bucket) */
static inline struct mon_cell *mon_cell(struct mon_engine *e, int peer, int lane, int bucket)
{
	return mon_xcell(e, MON_UDP, peer, lane, bucket);
}

/* Every cell of e, of every plane */
static inline size_t mon_ncells(const struct mon_engine *e)
{
	return (size_t)e->nx * (size_t)e->peers.n * (size_t)e->peers.nlanes * (size_t)e->o.buckets;
}

/* The bucket of source port index i (0 .. nsports - 1) */
static inline int mon_bucket_of(const struct mon_opts *o, int i)
{
	return (int)((long long)i * o->buckets / o->nsports);
}

/*
 * Take the peers (moved into e: the caller's is left empty) and open the
 * sockets of every lane: 0, or -FS_EXIT_* after one line (an address not
 * of this host, a port taken).  Everything is released on failure.
 */
int mon_engine_init(struct mon_engine *e, const struct mon_opts *o, struct mon_peers *peers);
void mon_engine_release(struct mon_engine *e);
/*
 * New peers (moved in, as above): the counters of the peers that stay are
 * kept, and so are their probes in flight.  The lanes must be the same
 * (else -FS_EXIT_USAGE, said, and nothing changes: the sockets are bound
 * to them).  Takes the lock.
 */
int mon_engine_reload(struct mon_engine *e, struct mon_peers *peers);
/* Read the replies come, count the lost probes and send those due by now_ns; takes the lock. */
void mon_engine_tick(struct mon_engine *e, uint64_t now_ns);
/* Read what came on the socket of epoll data tag (from epoll_wait); takes the lock. */
void mon_engine_input(struct mon_engine *e, uint64_t tag);

/*
 * UD probes (probe-ud.c; the engine calls them, under its lock but for
 * open and close).  A stream's UD probe leaves from probe QP i (i its
 * source-port index, as the UDP probe's port) with the flow label of port
 * LO + i (ud_flow_label_of_sport) to the peer's responder QP, learned by a
 * question over UDP to the peer's responder (types 3 and 4 above): asked
 * when not known, each second until answered, again 10 s later and after a
 * probe lost (at most once a second).  The responder echoes a request from
 * an address of the file, to the QP it came from, with the flow label it
 * asks for (aux).  A reply counts when it finds its probe (slot, sequence,
 * cookie, the transport, the probe QP it came to, the peer's address in
 * its GRH and the QP the probe went to); its RTT is the device's
 * completion times where it has them (the send's to the reply's), else
 * CLOCK_REALTIME from the post to the poll of the reply, which the
 * endpoint's completion channel wakes at once.
 */
/* One UD endpoint per lane, watched by e->epfd (tag TAG_UD): 0, or -FS_EXIT_ENV after one line */
int mon_ud_open(struct mon_engine *e);
void mon_ud_close(struct mon_engine *e);
/* The stream's UD probe from source-port index port, or its question; now: CLOCK_MONOTONIC */
void mon_ud_send(struct mon_engine *e, int stream, int port, uint64_t now);
/* The completions of lane's endpoint */
void mon_ud_input(struct mon_engine *e, int lane);
/* A question (type 3) or answer (type 4) come to lane's responder socket from from */
void mon_ud_question(struct mon_engine *e, int lane, unsigned char *buf, const struct mon_pkt *pkt,
		     const struct sockaddr_in *from);
/* A UD probe counted lost: ask the peer's QP again soon */
void mon_ud_lost(struct mon_engine *e, int stream, uint64_t now);

#define MON_TAG_UD 4ull	/* epoll tags: kind << 32 | index (probe.c has the others) */

#endif
