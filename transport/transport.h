/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The transport interface: what bench/, collectives/ and probes/ are
 * written against, so that each is written once and runs on every backend.
 *
 * The model is RDMA's: a transport instance (struct xport, one per local
 * device or address) registers memory regions and owns one completion
 * queue; a connection (struct xport_conn) to one peer has `nflows` flows
 * (RC QPs on verbs, TCP sockets on tcp), each with its own entropy (UDP or
 * TCP source port).  Work requests are posted to a flow; their completions
 * are reaped with xport_poll().  Connecting is out of band: each side gets
 * a JSON "blob" from xport_conn_blob(), hands it to the other side by any
 * means (the bench control channel, the coordinator), and calls
 * xport_conn_connect() with the peer's blob.
 *
 * Semantics every backend provides (those of an RC QP):
 *  - per flow, operations execute in order;
 *  - a SEND consumes the oldest RECV posted on the peer's same flow; a
 *    message longer than that buffer is an error for the connection;
 *  - WRITE places data at (rkey, offset) of a region the peer registered
 *    with XPORT_ACCESS_REMOTE; WRITE_IMM also consumes a RECV and delivers
 *    the immediate value; READ fetches from the peer's region;
 *  - a signaled WRITE/SEND completes once the data is placed at the peer
 *    (the peer acknowledged it), not when it left the host; unsignaled
 *    work requests produce no completion, but a later signaled one on the
 *    same flow implies they are done (free their buffers then);
 *  - when a flow breaks (peer gone, protocol error) every outstanding work
 *    request completes with an error status, and so does every later post.
 *
 * Software backends (tcp) make progress only inside xport_poll(): callers
 * must call it regularly, also when they only wait for a peer's writes.
 * Posted work may not leave the host before the next xport_poll().
 *
 * Conventions (core/error.h's rule for functions that leave the message to
 * their caller): the ops and the xport_* functions return 0 (xport_poll: a
 * count) or -errno, and print nothing; on failure a one-line reason with
 * context is left in xport_errmsg() (xport_open, which has no instance yet:
 * in its err buffer), for the caller to say and to turn into -FS_EXIT_*.
 * The one exception is xport_check(), which a command calls on its options:
 * it prints its own line and returns -FS_EXIT_*, as a function that prints.
 * Names are prefixed xport_.
 */
#ifndef FS_TRANSPORT_H
#define FS_TRANSPORT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct xport;
struct xport_conn;

enum xport_op {
	XPORT_OP_SEND,
	XPORT_OP_RECV,
	XPORT_OP_WRITE,
	XPORT_OP_WRITE_IMM,
	XPORT_OP_READ,
};

enum xport_wc_status {
	XPORT_WC_OK = 0,
	XPORT_WC_FLUSHED,	/* the flow broke before this ran */
	XPORT_WC_CONN_LOST,	/* the peer went away */
	XPORT_WC_REMOTE_ERR,	/* the peer refused it (bad key/offset/length) */
	XPORT_WC_LOCAL_ERR,
};

enum xport_role {
	XPORT_ROLE_PASSIVE,	/* waits for the peer (TCP: listens) */
	XPORT_ROLE_ACTIVE,	/* reaches out to the peer */
};

/* Capability bits of a backend. */
#define XPORT_CAP_ONESIDED	(1u << 0)	/* WRITE/READ without peer CPU */
#define XPORT_CAP_SPORT		(1u << 1)	/* chooses each flow's source port */
#define XPORT_CAP_SOFTWARE	(1u << 2)	/* progress only inside xport_poll */
#define XPORT_CAP_RNR		(1u << 3)	/* a SEND that finds no RECV posted is refused
						   and resent after a timer (RC RNR NAK), with
						   all sent behind it: callers avoid it */

#define XPORT_ACCESS_REMOTE	(1u << 0)	/* peer may write/read it */

#define XPORT_WR_SIGNALED	(1u << 0)

enum xport_poll_mode {
	XPORT_POLL_EVENT,	/* sleep in the kernel until something happens */
	XPORT_POLL_BUSY,	/* spin: lowest latency, a core per waiter */
	XPORT_POLL_ADAPTIVE,	/* spin for XPORT_SPIN_US, then sleep */
};

#define XPORT_SPIN_US 50

struct xport_params {
	const char *bind_addr;	/* local address (rail selection); NULL: any */
	const char *device;	/* verbs: device name, netdev name or IP address */
	const char *route_addr;	/* verbs, without device and bind_addr: the address the route
				   to the peer leaves from; a device with its RoCEv2 GID is the default */
	int ib_port;		/* verbs: port number; 0: the first active one */
	int gid_index;		/* verbs: GID index; -1: the RoCEv2 GID of the address */
	int mtu;		/* verbs: path MTU in bytes; 0: min of both ports */
	int sl;			/* verbs: service level */
	uint32_t flow_label;	/* verbs: GRH flow label of flow 0 (flow i: +i); 0: none */
	int sport_base;		/* flow i uses source port sport_base + i; 0: any */
	int tclass;		/* traffic class / DSCP << 2; -1: default */
	int timeout_ms;		/* connect and progress timeout */
	enum xport_poll_mode poll_mode;
	uint32_t max_inline;	/* verbs inline threshold (0: provider default) */
	uint32_t queue_depth;	/* work requests outstanding per flow */
	int qp_timeout;		/* verbs: local ACK timeout, 4.096 us << N; 0: 14 (67 ms), 18 on rxe */
};

struct xport_mr {
	void *addr;
	size_t len;
	uint32_t lkey;
	uint32_t rkey;
	void *priv;		/* backend's */
};

/* A peer's region as described in its blob. */
struct xport_rmr {
	uint64_t addr;
	uint64_t len;
	uint32_t rkey;
};

struct xport_wr {
	enum xport_op op;
	int flow;
	unsigned flags;		/* XPORT_WR_* */
	uint64_t wr_id;
	const struct xport_mr *mr;	/* local buffer */
	uint64_t off;			/* offset into mr */
	uint32_t len;
	const struct xport_rmr *rmr;	/* WRITE/READ target */
	uint64_t roff;			/* offset into rmr */
	uint32_t imm;			/* WRITE_IMM */
};

struct xport_wc {
	uint64_t wr_id;
	int flow;
	enum xport_op op;
	enum xport_wc_status status;
	uint32_t len;		/* RECV: bytes received */
	uint32_t imm;
	int has_imm;
	struct xport_conn *conn;
};

/* Per-flow transport counters, counted since the flow opened (TCP: the
 * kernel's TCP_INFO); a counter the backend or kernel does not give is
 * XPORT_STAT_NONE.  What load balancing does to a flow shows here: packet
 * spraying reorders segments, which the receiver counts as out-of-order
 * arrivals and the sender as reordering (and, past its threshold, as
 * spurious retransmissions). */
#define XPORT_STAT_NONE UINT64_MAX
struct xport_flow_stats {
	uint64_t retrans;	/* segments retransmitted (tcpi_total_retrans) */
	uint64_t reord_seen;	/* reorderings the sender detected (tcpi_reord_seen) */
	uint64_t rx_ooo;	/* packets received out of order (tcpi_rcv_ooopack) */
	uint64_t rx_segs;	/* segments received (tcpi_segs_in) */
	uint64_t tx_segs;	/* segments sent (tcpi_segs_out) */
};

struct xport_ops {
	const char *name;
	unsigned caps;
	int (*open)(struct xport *x);
	void (*close)(struct xport *x);
	int (*mr_reg)(struct xport *x, struct xport_mr *mr, unsigned access);
	void (*mr_dereg)(struct xport *x, struct xport_mr *mr);
	int (*conn_new)(struct xport_conn *c);
	int (*conn_blob)(struct xport_conn *c, json_t *blob);
	int (*conn_connect)(struct xport_conn *c, json_t *peer);
	/* frees what conn_new made (c->priv, NULL ok), not c: xport_conn_free frees c */
	void (*conn_release)(struct xport_conn *c);
	int (*post)(struct xport_conn *c, const struct xport_wr *wr);
	/* optional: n work requests of one flow in one call (verbs: a chained
	 * list, one doorbell); without it xport_post_list posts one by one */
	int (*post_list)(struct xport_conn *c, const struct xport_wr *wrs, int n);
	int (*poll)(struct xport *x, struct xport_wc *wc, int max, int timeout_ms);
	/* Per-flow facts for records: {"sport":..,"dport":..,"qpn":..} */
	int (*flow_info)(struct xport_conn *c, int flow, json_t *info);
	/* optional: the NUMA node of the device, -1 when unknown */
	int (*numa_node)(struct xport *x);
	/* optional: the flow's transport counters (struct xport_flow_stats) */
	int (*flow_stats)(struct xport_conn *c, int flow, struct xport_flow_stats *st);
	/* optional: can this host open the backend at all?  0, or -1 with why
	 * (verbs: RDMA in the kernel and a device); see xport_usable */
	int (*usable)(char *why, size_t len);
};

struct xport {
	const struct xport_ops *ops;
	struct xport_params params;
	void *priv;
	char err[256];
};

struct xport_conn {
	struct xport *x;
	int nflows;
	enum xport_role role;
	void *priv;
};

/* Memory for buffers, on the device's NUMA node where the backend knows
 * it; page aligned, and from 2 MiB on in whole 2 MiB asked to be backed by
 * transparent huge pages (see transport.c).  Free with xport_free(x, p, len). */
void *xport_alloc(struct xport *x, size_t len);
void xport_free(struct xport *x, void *p, size_t len);

/* Backends and lookup by name ("tcp", "verbs"); NULL when unknown. */
extern const struct xport_ops xport_tcp_ops;
#ifdef HAVE_VERBS
extern const struct xport_ops xport_verbs_ops;
#endif
const struct xport_ops *xport_find(const char *name);
/* Comma-separated names of the backends built in. */
const char *xport_names(void);
/* 0 when name is built in; else one line said and -FS_EXIT_USAGE (a typo)
 * or -FS_EXIT_ENV (verbs, in a build without rdma-core). */
int xport_check(const char *name);
/* Could this host open transport name, as far as can be told without a
 * device named: built in, and (verbs) RDMA in the kernel with a device?
 * 0, or -1 with one line of why in why (what open would say).  The agent
 * tells the coordinator so when it registers (fleet.h). */
int xport_usable(const char *name, char *why, size_t len);

int xport_open(const char *name, const struct xport_params *p, struct xport **out,
	       char *err, size_t errlen);
void xport_close(struct xport *x);
const char *xport_errmsg(const struct xport *x);
/* Set x->err (printf-style) and return -err_no. */
int xport_fail(struct xport *x, int err_no, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

int xport_mr_reg(struct xport *x, void *addr, size_t len, unsigned access,
		 struct xport_mr *mr);
void xport_mr_dereg(struct xport *x, struct xport_mr *mr);
/* A region as {"addr","len","rkey"} for blobs, and back (-EPROTO: j is not
 * one; nothing in xport_errmsg, there is no instance to hold it). */
json_t *xport_rmr_json(const struct xport_mr *mr);
int xport_rmr_parse(json_t *j, struct xport_rmr *rmr);

int xport_conn_new(struct xport *x, int nflows, enum xport_role role,
		   struct xport_conn **out);
/* NULL on failure (the backend's reason, if it gave one, in xport_errmsg) */
json_t *xport_conn_blob(struct xport_conn *c);
int xport_conn_connect(struct xport_conn *c, json_t *peer);
/* Its contents (the backend's conn_release) and c itself; NULL ok. */
void xport_conn_free(struct xport_conn *c);
int xport_flow_info(struct xport_conn *c, int flow, json_t *info);
/* The flow's counters: 0, or -EOPNOTSUPP where the backend has none (st
 * then all XPORT_STAT_NONE). */
int xport_flow_stats(struct xport_conn *c, int flow, struct xport_flow_stats *st);

static inline int xport_post(struct xport_conn *c, const struct xport_wr *wr)
{
	return c->x->ops->post(c, wr);
}

#define XPORT_MAX_POST_LIST 64

/* n (at most XPORT_MAX_POST_LIST) work requests on one flow. */
static inline int xport_post_list(struct xport_conn *c, const struct xport_wr *wrs, int n)
{
	int i, rc;

	if (c->x->ops->post_list)
		return c->x->ops->post_list(c, wrs, n);
	for (i = 0; i < n; i++)
		if ((rc = c->x->ops->post(c, &wrs[i])))
			return rc;
	return 0;
}

/* Reap up to max completions, waiting at most timeout_ms for the first
 * (0: do not wait).  Returns the number reaped or -errno. */
static inline int xport_poll(struct xport *x, struct xport_wc *wc, int max,
			     int timeout_ms)
{
	return x->ops->poll(x, wc, max, timeout_ms);
}

/* "busy", "event", "adaptive" -> the mode (out may be NULL): 0, or -EINVAL
 * for another word. */
int xport_poll_mode_parse(const char *s, enum xport_poll_mode *out);

const char *xport_op_name(enum xport_op op);
const char *xport_wc_status_str(enum xport_wc_status s);

#endif
