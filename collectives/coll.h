/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Collectives: all-reduce and all-to-all between N ranks, written only
 * against the transport interface (transport/transport.h), so the same
 * code runs over tcp and verbs.
 *
 * A rank is one process with one transport instance (one NIC or address:
 * one rank per node and rail).  Ranks meet through a root, the control
 * side of rank 0 (comm.c): every rank connects to it (TCP, or a socket
 * handed down by the local launcher), says who it is, and the root hands
 * out the ring order and relays the transport connection blobs between the
 * ranks that talk to each other.  Data then flows rank to rank over the
 * transport; the control channel only carries barriers and results.
 *
 * Control messages (core/wire.h framing, proto "fabscope-coll"):
 *   rank -> root   hello   {proto, version, rank, nranks, node, rail, addr, params}
 *   root -> rank   welcome {order: [rank...], ranks: [{rank, node, rail, addr}]}
 *   rank -> root   blobs   {blobs: {"PEER": blob}}
 *   root -> rank   blobs   {blobs: {"PEER": blob}}        (the peers' blobs for it)
 *   rank -> root   ready   {}   root -> rank  go {}         (a barrier)
 *   rank -> root   result  {time_us, wrong}                 (one per message size)
 *   either way     error   {message, exit}
 *   root -> rank   bye {}
 * "params" must be equal on every rank (test, transport, sizes, algorithm):
 * ranks started with different command lines are refused at hello.
 */
#ifndef FS_COLL_H
#define FS_COLL_H

#include <jansson.h>
#include <stdint.h>

#include "../core/options.h"
#include "../transport/transport.h"

#define COLL_PROTO "fabscope-coll"
#define COLL_DEFAULT_PORT 18530
#define COLL_MAX_RANKS 1024
#define COLL_MAX_MSG (4u << 20)

enum coll_kind { COLL_ALLREDUCE, COLL_ALLTOALL };

enum coll_algo {
	COLL_ALGO_RING,		/* all-reduce: reduce-scatter + all-gather around a ring */
	COLL_ALGO_RHD,		/* all-reduce: recursive halving, then doubling */
	COLL_ALGO_PAIRWISE,	/* all-to-all: n-1 steps, one peer each */
	COLL_ALGO_DIRECT,	/* all-to-all: everything at once */
};

/* What the command line says. */
struct coll_opts {
	enum coll_kind kind;
	const char *test;		/* "allreduce" or "alltoall" */
	const char *algo_name;
	enum coll_algo algo;
	uint64_t min_bytes, max_bytes;
	double factor;
	uint64_t warmup, iters, chunk;
	int check, flows, tx_depth, tclass, json, verbose, multi_rail;
	int progress;			/* rank 0: a progress line on stderr (a terminal) */
	int nranks, rank;		/* rank -1: not given */
	int local_n;			/* -n: the local launcher starts this many ranks */
	int local;			/* the ranks are -n's processes, their stderr one (cmd.c): a
					 * rank does not repeat what another one has said */
	int rail, gid_index, ib_port, mtu, qp_timeout, corrupt;
	int port;
	double timeout_s;
	const char *transport, *root, *node, *poll, *output;
	struct opt_list devices, binds, labels, netns, rails;
	int ctl_fd;			/* --ctl-fd: the launcher's socket to the root */
	/* this rank's picks from the per-rank lists */
	const char *device, *bind;
	int ndevices;
};

/* One rank's view of the communicator. */
struct coll_comm {
	struct coll_opts *o;
	int rank, nranks;
	int pos;			/* place in the ring order */
	int *order;			/* ring position -> rank */
	int *pos_of;			/* rank -> ring position */
	/* The group the algorithms run in: every rank, or with --multi-rail
	 * the ranks of this rank's rail (one ring per rail, all at once).
	 * Positions are in ring order; the test data and the all-to-all
	 * blocks are laid out by group position. */
	int gn, gpos;
	int *gorder;			/* group position -> rank */
	int *gpos_of;			/* rank -> group position, -1: another group */
	json_t *ranks;			/* [{rank, node, rail, addr}] */
	struct xport *x;
	struct xport_conn **conn;	/* by rank; NULL: no connection */
	int timeout_ms;
	/* start-up (clock_ns): the end of the one --timeout a rank waits for the
	 * root (connect, hello, welcome) and the root for the ranks (join,
	 * hello); 0 afterwards, when each wait has a --timeout of its own */
	uint64_t startup_end;
	/* root only: one control socket per rank (-1 for itself) */
	int *fds;
	/* not root: the socket to the root; ctl_gone: it went silent or
	 * broke, so no "bye" will come on it */
	int ctl, ctl_gone;
	/* buffers: send | recv | staging, each `cap` bytes, then the
	 * tokens' COLL_TOKEN_AREA bytes; one region */
	uint8_t *mem;
	size_t cap, memlen;
	struct xport_mr mr;
	uint8_t *sendbuf, *recvbuf, *stage;
	int tokens;			/* the transport has XPORT_CAP_RNR: use them */
	int *ready;			/* by rank: its "ready" tokens not yet used */
	/* per run */
	uint64_t msgs_posted;		/* for wr ids */
	int corrupt_now;		/* testing: spoil the next received chunk */
	/* progress, for `fabscope run` (core/output.h): the bytes this rank
	 * moved, and where it is: size i of n, its k-th call (warm-ups
	 * counted) of calls; done_w and total_w weigh the calls by their size */
	uint64_t moved, size, k, calls;
	int size_i, nsizes;
	double done_w, total_w;
	char err[256];			/* why the data path failed */
	int err_peer;			/* the rank it failed with, -1: none or not known */
};

/* The data path's failures are -FS_EXIT_PEER or -FS_EXIT_ENV with the
 * reason in comm->err. */

/* comm.c: the bootstrap. */
int coll_root_listen(struct coll_opts *o, int *lfd, int *port);
int coll_comm_open(struct coll_comm *c, struct coll_opts *o, int lfd, const int *child_fds);
void coll_comm_close(struct coll_comm *c);
/* A barrier through the root. */
int coll_barrier(struct coll_comm *c);
/* Send this rank's result to the root; on the root, gather all (per rank:
 * time_us in times[], wrong elements in wrongs[]).  0 or -exit code. */
int coll_gather_result(struct coll_comm *c, double time_us, uint64_t wrong, double *times,
		       uint64_t *wrongs);
/* A rank's rail, from the table rank 0 made. */
int coll_rail_of(const struct coll_comm *c, int rank);
/* Tell the root (or, on the root, every rank) that this run failed. */
void coll_abort(struct coll_comm *c, int code, const char *msg);
/* Root, its data path broken with rank c->err_peer: that rank may have failed
 * first (with a rank further on) and said why on its control connection; on
 * another rank, the root may have ended the run (interrupted).  Waits up to
 * wait_ms for that word; 1, its text in buf and its exit code in *code when
 * it came. */
int coll_peer_cause(struct coll_comm *c, int wait_ms, char *buf, size_t len, int *code);
/* "rank 3 (h3 rail 1)", for messages. */
const char *coll_rank_str(const struct coll_comm *c, int r, char *buf, size_t len);
/* Does rank `me` talk to rank `peer` in this algorithm? */
int coll_needs_peer(const struct coll_opts *o, int n, int pos_me, int pos_peer);

/* The readiness handshake (xfer.c).  An RC SEND that reaches a peer before
 * it posted the matching RECV is refused (RNR NAK) and retried after the
 * responder's RNR timer - and everything sent behind it is resent - so at
 * every step a rank faster than its peer would pay that timer.  Instead a
 * receiver, once the first window of RECVs of a transfer is posted, sends
 * the sender a token on the connection's last flow (index --flows), and a
 * sender starts a transfer only with a token from its receiver in hand.
 * Every connection keeps COLL_TOKENS RECVs posted on that flow; a token that
 * arrives early (the peer is a step ahead) is counted in c->ready.  Only on
 * transports with XPORT_CAP_RNR (verbs): on tcp a SEND waits in the socket
 * for its RECV, and a token would only add a message to every step. */
#define COLL_TOKENS 2
#define COLL_TOKEN_AREA 64
int coll_tokens_init(struct coll_comm *c);
int coll_token_send(struct coll_comm *c, int peer);
/* A completion of the token flow (coll_is_token): count it, re-post. */
int coll_is_token(const struct xport_wc *wc);
int coll_token_wc(struct coll_comm *c, const struct xport_wc *wc);
/* Take a token of `peer`, if one is there: 1 taken, 0 none yet. */
int coll_token_take(struct coll_comm *c, int peer);

/* cmd.c: say where the rank is and what it moved (out_progress()); the
 * data path calls it when out_progress_due(). */
void coll_progress_report(const struct coll_comm *c);

/* Data path helpers (xfer.c). */
struct coll_xfer {
	struct coll_comm *c;
	int peer;			/* rank */
	uint64_t off, len;		/* bytes, into the region of `buf` */
	uint8_t *buf;			/* sendbuf/recvbuf/stage */
	uint8_t *reduce_into;		/* recv: add (float) into here when it arrives */
	uint64_t chunks, posted, done;
	int ready;			/* recv: token sent; send: token taken */
};
/* Run a set of sends and receives to completion: post in chunk order up
 * to the queue depth, reduce arrivals.  0 or -exit code (reason in c->err). */
int coll_run_xfers(struct coll_comm *c, struct coll_xfer *send, int nsend,
		   struct coll_xfer *recv, int nrecv);

/* Lower level, for pipelined schedules (the ring): post one message of
 * len bytes at buf (inside c->mem); a failure's reason goes to c->err. */
int coll_post(struct coll_comm *c, int peer, int is_recv, uint64_t wr_id, const uint8_t *buf,
	      uint64_t len, int flow);
int coll_wc_error(struct coll_comm *c, const struct xport_wc *wc, int is_recv, int peer);
void coll_reduce(uint8_t *dst, const uint8_t *a, const uint8_t *b, uint64_t len);	/* float32 dst = a + b */
void coll_spoil(struct coll_comm *c, uint8_t *p, uint64_t len);	/* --corrupt */
void coll_flush(struct coll_comm *c);	/* let a software transport's acks out */

/* allreduce.c, alltoall.c: one operation on `bytes` (the nccl-tests size). */
uint64_t coll_count(const struct coll_opts *o, uint64_t bytes, int n);
void coll_fill(struct coll_comm *c, uint64_t count);
uint64_t coll_check(struct coll_comm *c, uint64_t count);
int coll_allreduce(struct coll_comm *c, uint64_t count);
int coll_alltoall(struct coll_comm *c, uint64_t count);
/* nccl-tests' bus bandwidth factor: 2(n-1)/n and (n-1)/n. */
double coll_bus_factor(enum coll_kind k, int n);

#endif
