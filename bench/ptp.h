/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Point-to-point sessions, shared by `fabscope bw` and `fabscope lat`.
 *
 * A client connects to a server's control port and both speak the wire
 * format of core/wire.h:
 *
 *   client -> server  hello   {proto, version, tool_version, test, params}
 *   server -> client  hello   {proto, version, node} | error {message, exit}
 *   client -> server  setup   {blob, region}      (transport connection)
 *   server -> client  setup   {blob, region}
 *   per message size:
 *   client -> server  run     {size}
 *   server -> client  ready
 *   each way          finished {flows: [...]}    (what that side measured)
 *   client -> server  bye
 *
 * The server serves one client after another until stopped; whatever a
 * client does (dies, sends junk, stalls) ends only that client's session.
 * A client that connects while another's session runs gets, instead of the
 * hello, error {message: "busy: serving HOST:PORT (node) since ...", exit: 4}
 * within 0.5 s, and the client prints "server ... refused: busy: ...".
 */
#ifndef FS_PTP_H
#define FS_PTP_H

#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "../core/options.h"
#include "../core/output.h"
#include "../core/net.h"
#include "../transport/transport.h"

#define PTP_PROTO "fabscope-ptp"
#define PTP_DEFAULT_PORT 18520
#define PTP_MAX_FLOWS 1024
#define PTP_SWEEP_MIN 2
#define PTP_SWEEP_MAX (8u << 20)

/* What the command line says; shared by bw and lat. */
struct ptp_opts {
	const char *test;	/* "bw" or "lat" */
	int server, once, port, bidir, sweep, json, gbits, verbose;
	int flows, sport, tx_depth, cq_mod, tclass;
	int gid_index, mtu, sl, ib_port, inline_size, post_list;
	int flow_label_i, qp_timeout;
	uint64_t size, iters;
	uint64_t max_mem;	/* server: the most buffer memory one client may cost (0: the default) */
	const char *token_file;	/* --token-file: a secret both ends prove before a test */
	int allow_readable_token;
	char *token;		/* read from token_file by ptp_cmd (NULL: none) */
	double duration, timeout_s;
	const char *transport, *op, *bind, *node, *warmup, *poll, *output, *device;
	struct opt_list labels;
	/* derived */
	uint64_t warmup_iters;
	double warmup_s;
	const char *server_poll;	/* a server's own --poll (NULL: the client's) */
};

/* A server's bound on one client's buffers: --max-mem, else an eighth of the
 * RAM, 64 MiB to 1 GiB. */
uint64_t ptp_max_mem(const struct ptp_opts *o);

/* What the engines need while they run. */
struct ptp_ctx {
	struct ptp_opts *o;
	int is_server;
	int ctl;			/* control socket */
	int timeout_ms;
	struct xport *x;
	struct xport_conn *conn;
	struct xport_mr mr;		/* local buffers: [send area | recv/target area] */
	uint8_t *buf;
	size_t area;			/* bytes per area per flow */
	struct xport_rmr peer_rmr;
	enum xport_op op;
	json_t *local_ep, *peer_ep;	/* endpoints for records */
	json_t *flows_info;		/* array of per-flow transport facts */
	json_t *labels;
	const char *peer_name;		/* "10.0.0.2:18520" for messages */
	char peer_poll[16];		/* client: the server's poll mode */
	char route_src[64];		/* client without --bind: where the route to HOST leaves */
};

/* Fill the option table entries common to bw and lat; returns the count. */
int ptp_options(struct ptp_opts *o, struct opt *tab, int max);
/* Check and derive options after parsing (defaults per test). */
int ptp_finish_opts(struct ptp_opts *o, int nargs);
/* Set up the client's output (stdout, and --output FILE); -exit code. */
int ptp_out_init(struct out *out, const struct ptp_opts *o);
/* Message sizes of this run: one size, or the -a sweep. */
int ptp_sizes(const struct ptp_opts *o, uint64_t *sizes, int max);

/* Client side: connect, hello, transport setup.  Returns 0 or -exit code. */
int ptp_client_open(struct ptp_ctx *c, struct ptp_opts *o, const char *host);
/* What a point-to-point test plugs into the shared machinery. */
struct ptp_test {
	const char *name;			/* "bw", "lat" */
	const char *const *usage;
	const char *about;
	int (*prepare)(struct ptp_ctx *c);	/* both sides, once connected */
	/* server, before it says "ready" for a size (may be NULL): the client
	 * may write into our buffers the moment it hears "ready" */
	int (*arm_size)(struct ptp_ctx *c, uint64_t size);
	int (*serve_size)(struct ptp_ctx *c, uint64_t size);	/* server: one size */
	int (*client)(struct ptp_opts *o, const char *host);	/* the whole client */
};

/* The two tests (bench/bw.c, bench/lat.c). */
extern const struct ptp_test bw_test, lat_test;

/* Parse and check a command line of test ("bw" or "lat") as `fabscope bw`
 * and `fabscope lat` do, running nothing: 0 (--help: after the help), or
 * -FS_EXIT_* after the same one-line message.  `fabscope run` checks a
 * plan's options this way. */
int ptp_check_args(const char *test, int argc, const char **argv);

/* The command: parse options, then serve (--server) or run the client. */
int ptp_cmd(const struct ptp_test *t, int argc, const char **argv);
/* Server side: serve clients until stopped. */
int ptp_server_loop(struct ptp_opts *o, const struct ptp_test *t);
void ptp_close(struct ptp_ctx *c);

/* Control-channel helpers with the session's timeout; messages name the peer. */
int ptp_send(struct ptp_ctx *c, json_t *msg);	/* steals msg */
int ptp_recv(struct ptp_ctx *c, json_t **msg, const char *expect);
/* Non-blocking: 1 and *msg if a message is waiting, 0 if none, -exit code. */
int ptp_try_recv(struct ptp_ctx *c, json_t **msg);

/* A record template for one size: test, transport, op, sizes, endpoints. */
json_t *ptp_record(struct ptp_ctx *c, uint64_t size, int client_is_src);
/* The sending side's facts of one flow (its flow_info: sport, dport, qpn,
 * dest_qpn, flow_label, sport_source) into a flow record's src/dst. */
void ptp_flow_facts(json_t *rec, json_t *sender_info);
/* Turn a completion error into one line and an exit code. */
int ptp_wc_error(struct ptp_ctx *c, const struct xport_wc *wc);

/* The protocol's error reply {type: error, message, exit} on fd: 0 or -errno. */
int ptp_send_error(int fd, int code, const char *why);

/*
 * ptp-busy.c: while a session runs, a thread answers other clients that
 * connect to the listening socket lfd with error {message: "busy: ..."}.
 * Set lfd and once; ptp_busy_start() after the hello (without a thread, as
 * when it cannot start, clients queue), ptp_busy_stop() at the session's end:
 * the clients that came as it ended are then in handed/handed_peer.
 */
/* Connections a server holds at once that have not yet proved themselves (or
 * heard "busy"); beyond it the oldest that has not is closed.  Each has
 * PTP_HELLO_MS for its whole handshake (hello, and with --token-file the
 * answer to the challenge).  Neither a burst of idle connections nor a
 * slow or stalling one keeps a real client waiting. */
#define PTP_PENDING_MAX 512
#define PTP_HELLO_MS 2000
#define PTP_HELLO_MAX (64u << 10)	/* a hello or an auth: read whole, at most this */

/*
 * ptp-accept.c: the connections a server has accepted, each through its
 * handshake at once.  Their messages are read only once whole (nothing is
 * allocated or held for a peer that has proved nothing: wire_read_whole);
 * each hello is checked (proto, version) and, with --token-file, answered
 * with the token's challenge, the client's answer checked: only then is a
 * connection ready, and the server serves the ready ones in the order they
 * became so.  One that is refused hears why and is closed, a line said.
 */
struct pend;
struct ptp_queue {
	const struct ptp_opts *o;
	int lfd;
	struct pend *p;		/* oldest first */
	int n;
	uint64_t seq;		/* the order in which they became ready */
	struct pollfd *pfd;
	int failed;		/* the last handshake that failed: -FS_EXIT_* (said), else 0 */
};
/* 0, or -FS_EXIT_ENV said */
int ptp_queue_init(struct ptp_queue *q, const struct ptp_opts *o, int lfd);
void ptp_queue_release(struct ptp_queue *q);
/* A connection accepted (fd, peer), to be handshaken. */
void ptp_queue_add(struct ptp_queue *q, int fd, const struct net_addr *peer);
/* The next client ready to be served: its fd, peer and hello (the caller's); -ETIMEDOUT after
 * 200 ms without one (connections accepted and handshaken meanwhile), -EINTR, or -errno of poll. */
int ptp_queue_next(struct ptp_queue *q, struct net_addr *peer, json_t **hello);

struct ptp_busy {
	int lfd, once;
	int grace_ms;
	int stop[2];			/* a pipe: written to end the thread ... */
	int stopping;			/* ... after this is set */
	pthread_t thread;
	int running;
	char client[NET_ADDRSTRLEN + 80];	/* "127.0.0.1:40000 (node1)" */
	char test[64];			/* "a bw test, tcp write" */
	time_t since;
	/* connections that came within the grace before the session ended, for
	 * the main loop to serve next (oldest first) */
	int handed[PTP_PENDING_MAX];
	struct net_addr handed_peer[PTP_PENDING_MAX];
	int nhanded;
};
void ptp_busy_start(struct ptp_busy *b, const char *client, const char *node,
		    const struct ptp_opts *so);
void ptp_busy_stop(struct ptp_busy *b);

#endif
