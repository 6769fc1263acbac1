/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The per-QP flow table of the RoCEv2 analyzer.
 *
 * A flow is one direction of a queue pair's traffic: (source IP,
 * destination IP, destination QP number).  A requester's flow carries its
 * requests (SEND, WRITE, READ requests, atomics) to the responder's QP; the
 * reverse flow carries the acknowledges, NAKs, READ responses and the CNPs
 * of the notification point to the requester's QP (CNPs name the QP to
 * slow down, the requester's, so they land in that reverse flow too).
 * Flows are paired with their reverse after the capture: the only flow
 * the other way between the two hosts, else the one whose acknowledged
 * PSNs fall inside this flow's PSN range.
 *
 * PSNs are 24 bits and wrap: every comparison is a signed distance modulo
 * 2^24 (the half-space rule), so 0x000002 follows 0xfffffe.  Per flow:
 *   - in order: the next expected PSN; after a READ request the responder
 *     answers with as many PSNs as the READ has response packets, so the
 *     requester's next PSN jumps by that many - a jump within the READ's
 *     length (at the smallest MTU, 256 bytes) is not a loss;
 *   - a gap: a PSN ahead of the expected one: the missing PSNs were lost
 *     before the capture point (or the capture dropped them): `lost` counts
 *     them, `missing` those of them not seen by the end of the capture;
 *   - behind the expected PSN: seen again (`seen_again`, the same packet
 *     twice at the capture point: what tshark finds with the same PSN
 *     earlier in the flow) when the flow carried the PSN before; else a
 *     first appearance: resent after a loss upstream (`resent`) when it
 *     fills a gap and is the PSN the responder asked for again with a NAK
 *     (sequence error) - the go-back-N resend starts there - or follows
 *     such a resend, or is a READ response, or is a request at a PSN a
 *     READ's responses took (a re-READ of responses lost); else it is out of
 *     order (`ooo`: late, not lost, and no longer counted lost).  A window
 *     of the last FLOW_WINDOW PSNs remembers which were seen; older ones
 *     count as seen again.  Consecutive packets sent again (of either kind)
 *     form one burst;
 *   - acknowledges: ACK/NAK/RNR NAK by code, with time and PSN; a request
 *     with AckReq set is timed until the reverse flow's first acknowledge
 *     of a PSN at or after it (at most FLOW_PENDING outstanding; the oldest
 *     is dropped when full, and counted);
 *   - ECN: packets CE-marked, ECT; CNPs; UDP source ports (the first
 *     FLOW_SPORTS distinct, whether there were more, and how often the port
 *     changed from one packet to the next); opcodes; bytes; first and
 *     last time; a throughput timeline of FLOW_BUCKETS buckets whose width
 *     doubles (buckets merge pairwise) as the capture grows.
 *
 * Memory: every flow has a fixed size (a few KiB; latency histograms only
 * for flows with timed requests) and there are at most max_flows of them;
 * packets of flows beyond that are counted in an overflow bucket and the
 * summary says so.  Nothing is kept per packet, so a multi-GB capture needs
 * the same memory as a small one with the same flows.
 */
#ifndef FS_PCAP_FLOW_H
#define FS_PCAP_FLOW_H

#include <stddef.h>
#include <stdint.h>

#include "dissect.h"

#define FLOW_WINDOW 4096	/* PSNs remembered per flow, seen or not */
#define FLOW_PENDING 256	/* timed requests awaiting an acknowledge */
#define FLOW_SPORTS 4
#define FLOW_BUCKETS 64
#define FLOW_NAK_CODES 32
#define FLOW_LAT_BUCKETS 256	/* 8 per power of two of nanoseconds */
#define FLOW_EVENTS 8		/* first events of each kind kept with time and PSN */
#define FLOW_OP_REQ 1		/* roce_is_request() */
#define FLOW_OP_RESP 2		/* roce_is_response() */
#define FLOW_OP_READ_RESP 4	/* roce_is_read_response() */
#define FLOW_OP_ACK 8		/* roce_is_ack() */
#define FLOW_OP_DATA 16		/* roce_has_payload() */

struct flow_key {
	uint8_t src[16], dst[16];	/* IP addresses, GIDs or LIDs (pkt_brief) */
	uint8_t fam;		/* enum pkt_addr */
	uint32_t dqpn;
};

struct flow_event {
	double t;
	uint32_t psn;
	uint32_t n;		/* bursts: packets in it */
	uint8_t code;		/* NAKs: the code; RNR: the timer code */
};

struct flow {
	struct flow_key key;
	struct flow *next;	/* hash chain */
	int reverse;		/* index of the paired flow, -1 */
	int index;

	uint64_t pkts, bytes, payload;
	double first, last;
	uint64_t ops[256];
	int transport;		/* enum roce_transport of the first packet */
	uint64_t requests, responses, acks, read_resps;

	/* PSN tracking (requests; READ responses on the response side) */
	int have_psn;
	uint32_t expect;	/* the next PSN in order */
	uint32_t max_psn;	/* the highest PSN seen */
	uint32_t first_psn;
	uint8_t seen[FLOW_WINDOW / 8];	/* bit (psn % FLOW_WINDOW): seen or taken by a READ's
					 * responses, for PSNs near max_psn */
	uint8_t carried[FLOW_WINDOW / 8];	/* the same: a packet of this flow had the PSN */
	uint64_t gaps;		/* PSN gaps */
	uint64_t lost;		/* PSNs in them, less those that came late (ooo) */
	uint64_t missing;	/* of the lost, those never seen */
	uint64_t seen_again;	/* packets whose PSN the flow carried before */
	uint64_t resent;	/* first appearances resent after a loss upstream */
	uint64_t ooo;
	uint64_t bursts;
	int in_burst;
	struct flow_event gap_ev[FLOW_EVENTS], burst_ev[FLOW_EVENTS];
	int ngap_ev, nburst_ev;
	uint32_t read_slack;	/* PSNs a READ request may skip, at 256 B a packet */
	uint32_t mtu_seen;	/* the largest payload of a FIRST/MIDDLE packet */

	/* acknowledges (on the response side) */
	uint64_t naks[FLOW_NAK_CODES], rnr, acks_plain;
	int have_seq_nak;
	uint32_t seq_nak_psn;	/* the last NAK PSN sequence error: the PSN the responder expects */
	struct flow_event nak_ev[FLOW_EVENTS], rnr_ev[FLOW_EVENTS];
	int nnak_ev, nrnr_ev;

	/* timed requests (on the request side) and their latencies */
	struct { uint32_t psn; double t; } pending[FLOW_PENDING];
	int npending, pend_head;
	uint64_t pend_dropped;
	uint32_t *lat;		/* FLOW_LAT_BUCKETS, allocated at the first sample */
	uint64_t nlat;
	double lat_min, lat_max, lat_sum;

	/* congestion */
	uint64_t ce, ect, cnps;
	struct flow_event cnp_ev[FLOW_EVENTS];
	int ncnp_ev;

	uint16_t sports[FLOW_SPORTS];	/* the first FLOW_SPORTS distinct ones */
	int nsports, sports_more;	/* sports_more: there were others */
	uint16_t last_sport;
	uint64_t sport_changes;		/* packets whose port differed from the one before */
	int pair_tried;			/* flows in the table when pairing last failed */

	/* timeline: bytes per bucket of width bucket_w seconds from t0 */
	double t0, bucket_w;
	uint64_t timeline[FLOW_BUCKETS];
};

struct flow_pfc {
	uint64_t frames[8], xoff[8], xon[8], quanta[8];
	int have;		/* first is set */
	double bucket_w;	/* the timeline: frames per priority per bucket from the capture's start */
	uint32_t timeline[8][FLOW_BUCKETS];
	uint64_t pause_frames, pause_quanta;	/* 802.3x */
	double first, last;
};

struct flow_table {
	/* per opcode, what the roce_ functions of dissect.h say (FLOW_OP_ bits, position):
	 * a table lookup instead of a call each, for every packet */
	uint8_t op_is[256], op_pos[256];
	struct flow **slot;	/* hash buckets */
	size_t nslots;
	struct flow **v;	/* in order of appearance */
	struct flow *recent;	/* the last one looked up */
	int n, max;
	uint64_t overflow_pkts;	/* packets of flows beyond max */

	/* capture-wide */
	uint64_t pkts, bytes, roce, roce_bytes, other, truncated, not_roce_udp, bad;
	uint64_t cut[PKT_L_MAX];	/* truncated, by the layer cut */
	uint64_t flags[32];		/* by PKT_F_ bit */
	double first, last;
	int have_time;
	struct flow_pfc pfc;
	uint64_t macctl_other;
};

int flow_table_init(struct flow_table *t, int max_flows);
void flow_table_release(struct flow_table *t);
/* Account one dissected packet seen at time t (seconds). */
void flow_add(struct flow_table *t, const struct pkt *k, double t_s);
/* The same from its brief (dissect.h): what flow_add() does after pkt_brief_of() */
void flow_add_brief(struct flow_table *t, const struct pkt_brief *k, double t_s);
/* After the last packet: pair flows with their reverse. */
void flow_finish(struct flow_table *t);

/* Latency percentile p (0..100) of a flow's timed requests, seconds; NAN without. */
double flow_lat_percentile(const struct flow *f, double p);
/* "10.0.0.1", "fe80::1" (an IPv6 address or a GID), "lid:0x0001": by fam, an enum pkt_addr */
const char *flow_addr(const uint8_t *a, int fam, char *buf, size_t len);

#endif
