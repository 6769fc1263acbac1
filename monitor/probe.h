/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The monitor's UDP probes and their echo responder.
 *
 * A probe is one UDP datagram of MON_PKT_LEN bytes, big-endian:
 *
 *   0  magic "FSMP"     4  version (1)     5  type: 1 request, 2 reply
 *   6  zero (2 bytes)   8  cookie (8: the sender's, drawn at start)
 *   16 seq (8)          24 slot (4: where the sender keeps it)   28 zero (4)
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
 * interval's), plus the ring of probes in flight (rate x peers x lanes x
 * timeout, 40 bytes each, rounded up to a power of two), plus one socket
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
enum { MON_PKT_REQ = 1, MON_PKT_REP = 2 };

struct mon_pkt {
	int type;
	uint64_t cookie, seq;
	uint32_t slot;
};

void mon_pkt_encode(unsigned char *buf, const struct mon_pkt *p);
/* 0, or -1 for anything but MON_PKT_LEN bytes of this format */
int mon_pkt_decode(const unsigned char *buf, size_t len, struct mon_pkt *p);

struct mon_cell {
	uint64_t sent, lost;
	struct mon_hist rtt;
};

struct mon_opts {
	double rate;		/* probes a second per peer and lane */
	double timeout_s;	/* a probe unanswered this long is lost */
	int port;		/* the responders' UDP port */
	int sport_lo, nsports;	/* source ports sport_lo .. sport_lo + nsports - 1 */
	int buckets;		/* B */
};

struct mon_stream {		/* one (peer, lane) */
	uint64_t next_ns;	/* its next probe */
	int next_port;		/* index of the source port it sends from next */
	uint64_t unreachable;	/* probes the peer's host refused (ICMP port unreachable) */
};

struct mon_flight {
	uint64_t seq, t_ns;	/* t_ns: CLOCK_MONOTONIC at the send (its timeout) */
	uint64_t t_rt;		/* CLOCK_REALTIME at the send (its RTT) */
	int stream, port;	/* port: index of the source port */
	int state;		/* 0 free or done, 1 in flight, 2 in flight and refused by ICMP */
};

/* Engine-wide counts, for fabscope_monitor_* */
struct mon_totals {
	uint64_t echoed;	/* requests answered as responder */
	uint64_t refused_req;	/* requests not answered: malformed, or from no node of the file */
	uint64_t refused_rep;	/* replies refused: malformed, forged, late, twice */
	uint64_t send_errors;	/* sendto failures (the probe then counts lost) */
	uint64_t reloads_ok, reloads_failed;
};

struct mon_engine {
	struct mon_opts o;
	struct mon_peers peers;
	struct mon_cell *cells;		/* [(peer * nlanes + lane) * buckets + bucket] */
	struct mon_stream *st;		/* [peer * nlanes + lane] */
	struct mon_flight *ring;	/* in flight, in send order */
	size_t ring_cap, head, tail;	/* head: next to fill; tail: oldest */
	int *resp_fd;			/* [lane] */
	int *sport_fd;			/* [lane * nsports + i] */
	int epfd;			/* the responders' sockets (and what agent.c adds) */
	int rep_epfd;			/* the source-port sockets, looked at each turn */
	uint64_t cookie, seq;
	uint64_t last_tick_ns;		/* CLOCK_MONOTONIC of the last turn (health) */
	struct mon_totals tot;
	pthread_mutex_t lock;		/* cells, peers, tot: the HTTP thread reads them */
};

/* The cell of (peer, lane, bucket) */
static inline struct mon_cell *mon_cell(struct mon_engine *e, int peer, int lane, int bucket)
{
	return &e->cells[((size_t)peer * (size_t)e->peers.nlanes + (size_t)lane) * (size_t)e->o.buckets + (size_t)bucket];
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

#endif
