/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The TCP backend's insides, shared by tcp.c (the ops: connections,
 * posting, polling) and tcp-flow.c (one flow's framing, send and receive
 * paths).  The backend gives RC semantics over one TCP connection per flow.
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
#ifndef FS_TCP_H
#define FS_TCP_H

#include <stddef.h>
#include <stdint.h>

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
	char why[256];		/* why the flow broke, for later posts */
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
	size_t flows_alloc;
};

struct tcp_conn {
	struct tcp_flow *flows;
	int lfd;		/* passive: listening socket until connected */
	uint64_t token;
	struct net_addr laddr;
};

static inline struct tcp_x *TX(struct xport *x)
{
	return x->priv;
}

/* rings */
int tcp_ring_init(struct ring *r, size_t esz, size_t cap);
size_t tcp_ring_count(const struct ring *r);
void *tcp_ring_at(const struct ring *r, size_t i);	/* absolute index */
void *tcp_ring_push(struct ring *r);			/* NULL: out of memory */
/* big-endian fields */
void tcp_put32(uint8_t *p, uint32_t v);
uint32_t tcp_get32(const uint8_t *p);

/* one flow */
void tcp_cq_push(struct tcp_flow *f, uint64_t wr_id, enum xport_op op,
		 enum xport_wc_status st, uint32_t len, const struct hdr *imm);
void tcp_epoll_update(struct tcp_flow *f);
/* Queue a message; it leaves at the next tcp_flow_flush. */
int tcp_enqueue(struct tcp_flow *f, const struct hdr *h, const uint8_t *payload,
		uint32_t plen, uint64_t wr_id, uint8_t op, int signaled,
		int counted, uint8_t *read_dst);
void tcp_flow_flush(struct tcp_flow *f);	/* write what the socket takes */
int tcp_flow_send_ack(struct tcp_flow *f);
/* Read and dispatch; block: the first read may wait up to TCP_BLOCK_MS. */
void tcp_flow_read(struct tcp_flow *f, int block);
#define TCP_BLOCK_MS 1
void tcp_parse_stage(struct tcp_flow *f);	/* go on after an RNR wait */
/* tcp-info.c: the socket's counters from TCP_INFO (fields it lacks untouched) */
int tcp_fd_stats(int fd, struct xport_flow_stats *st);

#endif
