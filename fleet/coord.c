/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * `fabscope run PLAN`: the coordinator.
 *
 * It launches the agents, authenticates them, and runs the plan's phases
 * round by round.  A round is a set of jobs (a test between two endpoints
 * of one lane) run at once on every lane; a job is a server job on one
 * agent and, once it listens, a client job on the other.  The collectives
 * (kinds allreduce, alltoall) have group jobs instead: per lane, one job
 * whose members are the nodes on that lane in node order (rank i is the
 * i-th); rank 0 starts as the server, and once it listens ranks 1..N-1
 * start as clients pointed at it.  Every lane's group runs at once: one
 * ring per rail, in parallel.  Records stream into the results directory
 * as the agents send them (a group's from rank 0 only).  One epoll loop
 * serves every agent: a turn costs what came in it (a registration, a
 * record), and the walks over every connection and job (silences, pings,
 * deadlines) run on the clock, ten times a second, so that 16,384 agents
 * are welcomed in bounded time each.  Nothing waits on one agent without a
 * deadline.
 *
 * An agent that closes its connection, or is silent for --agent-timeout,
 * is marked missing: its running jobs fail with a record saying so, its
 * later jobs are skipped with such a record, the run goes on, and the exit
 * code is 4.  --resume DIR runs again the jobs that have no record.
 *
 * This file: the agents' connections and their registration, the event
 * loop, listening and joining.  The jobs are in coord-job.c; rounds,
 * phases and the progress line in coord-phase.c; the checks before a run
 * in coord-check.c; coord-int.h is what they share.
 */
#include <errno.h>
#include <stdarg.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../core/alloc.h"
#include "../core/clock.h"
#include "../core/error.h"
#include "../core/net.h"
#include "../core/record.h"
#include "../core/units.h"
#include "coord-int.h"

/*
 * What a peer that has not proved the token gets (listener mode, where
 * anyone can connect): its register read only once all of it has come,
 * into one buffer of the coordinator's (nothing allocated or held for it:
 * wire_read_whole), at most COORD_JOIN_MAX_MSG; at most COORD_UNAUTH_MAX
 * such connections at once beyond the agents still expected (a new one
 * closes the oldest: a real agent registers as soon as its challenge
 * comes, an idle flood is old; a fleet that connects at once is never cut
 * short of its own agents); and, once more of them wait than agents are
 * still expected (some are not the fleet's), COORD_JOIN_MS each to
 * register, counted from its challenge and checked only once what it sent
 * has been read (a busy coordinator is not a slow agent); until then
 * --agent-timeout, as an agent's silence (a fleet of thousands, or its
 * host, may be busy: bounded by the count all the same).  Out of
 * descriptors (EMFILE), accepting pauses for COORD_ACCEPT_PAUSE_MS instead
 * of spinning on a listening socket that stays readable.  What is closed
 * so is said once every COORD_SHED_SAY_S, counted, not once a connection.
 */
#define COORD_JOIN_MAX_MSG (64u << 10)
#define COORD_UNAUTH_MAX 64
#define COORD_JOIN_MS 3000
#define COORD_ACCEPT_PAUSE_MS 200
#define COORD_SHED_SAY_S 10
#define COORD_EVENTS 512	/* events taken from epoll a turn */
#define COORD_TICK_MS 100	/* silences, pings and deadlines are looked at this often */

static char join_buf[COORD_JOIN_MAX_MSG];	/* the registers of listener connections, one at a time */

/* ---- the event loop's descriptors ---- */

/* c->fdmap[fd]: what fd is to the loop (COORD_FD_*, or a connection's index) */
static int fdmap_set(struct coord *c, int fd, int what)
{
	size_t old = c->fdmap_alloc, i;

	if (fd < 0)
		return -EBADF;
	if (FS_ALLOC_GROW(c->fdmap, (size_t)fd + 1, c->fdmap_alloc))
		return -ENOMEM;
	for (i = old; i < c->fdmap_alloc; i++)
		c->fdmap[i] = COORD_FD_NONE;
	c->fdmap[fd] = what;
	return 0;
}

int coord_watch(struct coord *c, int fd, int what)
{
	/* (EPOLLRDHUP: a peer's end is seen even while the bytes it left are
	 * fewer than SO_RCVLOWAT asks for) */
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP, .data.fd = fd };

	if (c->epfd < 0 && (c->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0) {
		int rc = -errno;

		c->epfd = -1;
		return rc;
	}
	if (fdmap_set(c, fd, what))
		return -ENOMEM;
	if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		c->fdmap[fd] = COORD_FD_NONE;
		return -errno;
	}
	return 0;
}

void coord_unwatch_close(struct coord *c, int fd)
{
	if (fd < 0)
		return;
	if (c->epfd >= 0)	/* (before the close: a child between fork and exec may hold a copy) */
		epoll_ctl(c->epfd, EPOLL_CTL_DEL, fd, NULL);
	if ((size_t)fd < c->fdmap_alloc)
		c->fdmap[fd] = COORD_FD_NONE;
	close(fd);
}

/* ---- connections ---- */

int coord_send_to(struct coord *c, int ci, json_t *msg)
{
	struct conn *k = &c->conns[ci];
	int rc;

	if (k->gone) {
		json_decref(msg);
		return -1;
	}
	rc = wire_send_mac(k->fd, &k->tx, msg, 2000);
	json_decref(msg);
	if (!rc)
		k->sent_ns = clock_ns();
	return rc;
}

/* Connection ci is closed and forgotten (compact_conns frees its slot);
 * its node, if it had joined, is the caller's to mark. */
static void conn_drop(struct coord *c, int ci)
{
	struct conn *k = &c->conns[ci];

	if (k->gone)
		return;
	if (!k->authed && k->want_node >= 0)
		c->npending--;
	else if (!k->authed)
		c->nunreg--;
	k->gone = 1;
	c->ngone++;
	coord_unwatch_close(c, k->fd);
	wire_rd_release(&k->rd);
}

/* Why the node a local or ssh connection was made for did not join (the
 * first reason stays: it is the cause) */
static void conn_why(struct coord *c, int ci, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void conn_why(struct coord *c, int ci, const char *fmt, ...)
{
	int node = c->conns[ci].want_node;
	char why[LAUNCH_ERR_LAST + 200];
	va_list ap;

	if (node < 0 || c->node_why[node])
		return;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	c->node_why[node] = strdup(why);
}

/* "after 12.3 s", how long connection ci has been open */
static double conn_age_s(const struct coord *c, int ci)
{
	return (clock_ns() - c->conns[ci].opened_ns) / 1e9;
}

/* A listener connection that had not registered is closed (why): counted,
 * said now and then (shed_say), not once a connection: a flood is many */
static void shed(struct coord *c, int ci, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void shed(struct coord *c, int ci, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->shed_why, sizeof(c->shed_why), fmt, ap);
	va_end(ap);
	conn_drop(c, ci);
	c->shed++;
}

static void shed_say(struct coord *c, uint64_t now)
{
	if (!c->shed || now - c->shed_said_ns < COORD_SHED_SAY_S * 1000000000ull)
		return;
	if (c->shed == 1)
		fs_warn("%s: closed", c->shed_why);
	else
		fs_warn("%ld connections closed before they registered (the last: %s)", c->shed, c->shed_why);
	c->shed = 0;
	c->shed_said_ns = now;
}

/* The oldest listener connection that has not registered, or -1.  The
 * connections are in the order they were made (compact_conns keeps it),
 * and none below c->unreg_from is one: the search starts there, and moves
 * it on (compact_conns sets it back to 0), so that a flood costs each new
 * connection O(1), not a walk over the thousands that joined. */
static int oldest_unregistered(struct coord *c)
{
	for (; c->unreg_from < c->nconns; c->unreg_from++) {
		const struct conn *k = &c->conns[c->unreg_from];

		if (!k->gone && !k->authed && k->want_node < 0)
			return c->unreg_from;
	}
	return -1;
}

/* A connection that ended (or sent what is no message) before it registered */
static void conn_unregistered_end(struct coord *c, int ci, int r, const char *why)
{
	int node = c->conns[ci].want_node;

	if (node < 0) {	/* anyone's (listener): counted, not said each */
		shed(c, ci, "a connection from %s %s", c->conns[ci].peer, r == -ECONNRESET ?
		     "closed before it registered" : "sent a bad message before registering");
		if (r == -ECONNRESET)
			c->shed--;	/* (gone of itself: nothing to say) */
		return;
	}
	if (r != -ECONNRESET)
		fs_warn("a connection from %s sent a bad message before registering (%s): closed",
			c->conns[ci].peer, why);
	conn_drop(c, ci);
	if (node >= 0) {	/* what it said last is the cause: kept in the records */
		const char *last = launch_err_last(c, node);

		conn_why(c, ci, "its agent ended before joining%s%s", last ? ": " : ", saying nothing", last ? last : "");
	}
}

/* The challenge of connection k, as it was sent: the handshake's macs
 * cover it, so it is made again, the same, to check them */
static json_t *challenge_of(const struct conn *k)
{
	return json_pack("{ss,ss,si,ss,sI}", "type", "challenge", "proto", FLEET_PROTO, "version", wire_version(),
			 "nonce", k->nonce, "join_ms", (json_int_t)k->join_ms);
}

int coord_add_conn(struct coord *c, int fd, int want_node, const char *peer)
{
	struct conn *k;
	int ci;

	if (c->nconns == c->conns_cap) {	/* (doubling: a burst of connections costs log n moves) */
		int cap = c->conns_cap ? 2 * c->conns_cap : 64;
		struct conn *nc = realloc(c->conns, (size_t)cap * sizeof(*nc));

		if (!nc) {
			fs_warn("out of memory for a connection from %s: closed", peer ? peer : "?");
			close(fd);
			return -1;
		}
		c->conns = nc;
		c->conns_cap = cap;
	}
	ci = c->nconns;
	k = &c->conns[ci];
	memset(k, 0, sizeof(*k));
	k->fd = fd;
	k->node = -1;
	k->want_node = want_node;
	snprintf(k->peer, sizeof(k->peer), "%s", peer ? peer : "?");
	k->opened_ns = k->last_ns = clock_ns();
	net_set_nonblock(fd, 1);
	auth_nonce(k->nonce);
	c->nconns++;
	c->npending += want_node >= 0;
	c->nunreg += want_node < 0;
	if (coord_watch(c, fd, ci)) {
		fs_warn("cannot watch the connection from %s (%s): closed", k->peer, strerror(errno));
		conn_why(c, ci, "the coordinator could not watch its connection");
		conn_drop(c, ci);
		return ci;
	}
	/* join_ms: how long the join goes on, which the agent waits for its welcome */
	k->join_ms = c->join_deadline_ns > k->opened_ns ? (int64_t)((c->join_deadline_ns - k->opened_ns) / 1000000) : 0;
	if (coord_send_to(c, ci, challenge_of(k)))
		conn_unregistered_end(c, ci, -ECONNRESET, NULL);	/* (it ended at once) */
	return ci;
}

/* The agent of connection ci is gone (why); its node is missing. */
void coord_conn_gone(struct coord *c, int ci, const char *why)
{
	struct conn *k = &c->conns[ci];

	if (k->gone)
		return;
	conn_drop(c, ci);
	if (k->node >= 0 && c->node_conn[k->node] == ci) {
		const char *name = c->plan.nodes[k->node].name;

		fs_warn("agent %s is missing: %s", name, why);
		free(c->node_why[k->node]);
		c->node_why[k->node] = strdup(why);
		c->node_conn[k->node] = -1;
		c->njoined--;
		coord_fail_jobs_of(c, k->node, why);
	}
}

/*
 * The coordinator's answer to a register reg: the handshake so far
 * (challenge, register) and answer, which gets its mac over all three
 * (fleet.h), when reg carries a nonce of the agent's; then sent.  0, or
 * what coord_send_to returned.
 */
static int answer_register(struct coord *c, int ci, json_t *reg, json_t *answer)
{
	struct conn *k = &c->conns[ci];
	const char *nonce = reg ? json_string_value(json_object_get(reg, "nonce")) : NULL;
	json_t *hs[3] = { NULL, reg, answer };
	char mac[AUTH_NONCE_HEX + 1];

	if (answer && auth_nonce_ok(nonce) && (hs[0] = challenge_of(k)) &&
	    !auth_mac_msgs(c->token, "coordinator", nonce, k->nonce, hs, 3, mac))
		json_object_set_new(answer, "mac", json_string(mac));
	json_decref(hs[0]);
	return coord_send_to(c, ci, answer);
}

/* Refuse the register reg (NULL: what came is none) of connection ci,
 * which claimed to be node claimed (NULL: none), saying why to both */
static void refuse(struct coord *c, int ci, json_t *reg, const char *claimed, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void refuse(struct coord *c, int ci, json_t *reg, const char *claimed, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	fs_warn("refused agent '%.64s' from %s: %s", claimed ? claimed : "?", c->conns[ci].peer, why);
	answer_register(c, ci, reg, json_pack("{ss,ss}", "type", "error", "message", why));
	conn_why(c, ci, "refused: %s", why);
	conn_drop(c, ci);
}

int coord_ensure_nodes(struct coord *c, int n)
{
	int i, *conn;
	char **why;

	if (n <= c->nnodes_cap)
		return 0;
	if (n < 2 * c->nnodes_cap)	/* (anonymous agents add a node each as they join: geometric) */
		n = 2 * c->nnodes_cap;
	if (!(conn = fs_reallocarray(c->node_conn, (size_t)n, sizeof(*conn))))
		return fs_err_env("out of memory for %d nodes", n);
	c->node_conn = conn;
	if (!(why = fs_reallocarray(c->node_why, (size_t)n, sizeof(*why))))
		return fs_err_env("out of memory for %d nodes", n);
	c->node_why = why;
	if (!(why = fs_reallocarray(c->node_noverbs, (size_t)n, sizeof(*why))))
		return fs_err_env("out of memory for %d nodes", n);
	c->node_noverbs = why;
	for (i = c->nnodes_cap; i < n; i++) {
		c->node_conn[i] = -1;
		c->node_why[i] = NULL;
		c->node_noverbs[i] = NULL;
	}
	c->nnodes_cap = n;
	return 0;
}

/* The node a register of name on connection ci is for, after the checks
 * that depend on it; -1 when it is refused (said). */
static int register_node(struct coord *c, int ci, json_t *reg, const char *name)
{
	struct conn *k = &c->conns[ci];
	int node = plan_node_index(&c->plan, name);

	if (k->want_node >= 0 && node != k->want_node) {
		refuse(c, ci, reg, name, "this connection was made for node %s", c->plan.nodes[k->want_node].name);
		return -1;
	}
	if (node < 0) {
		if (c->plan.hostfile) {
			refuse(c, ci, reg, name, "node %s is not in the hostfile %s", name, c->plan.hostfile);
			return -1;
		}
		if (c->plan.nnodes >= c->expected) {
			refuse(c, ci, reg, name, "%d agents have joined already, as many as expected", c->expected);
			return -1;
		}
		if (coord_ensure_nodes(c, c->plan.nnodes + 1) || (node = plan_node_add(&c->plan, name)) < 0) {
			refuse(c, ci, reg, name, "out of memory for node %s", name);
			return -1;
		}
	}
	if (c->node_conn[node] >= 0) {
		refuse(c, ci, reg, name, "node %s has joined already (two agents with one name: give --name)", name);
		return -1;
	}
	if (c->node_why[node] && !strncmp(c->node_why[node], "did not join", 12)) {
		refuse(c, ci, reg, name, "node %s joined too late: it is marked missing", name);
		return -1;
	}
	return node;
}

/* The endpoints of node: the hostfile's, else those its agent registered, else its address */
static void register_endpoints(struct coord *c, int ci, int node, json_t *m)
{
	struct plan_node *n = &c->plan.nodes[node];
	const char *peer = c->conns[ci].peer;
	json_t *eps = json_object_get(m, "endpoints"), *e;
	size_t i;

	if (!n->nep) {
		json_array_foreach(eps, i, e) {
			const char *ip = json_string_value(json_object_get(e, "ip"));
			int rail = record_int(e, "rail", -1, 0, FS_MAX_RAILS - 1);
			int plane = record_int(e, "plane", -1, 0, FS_MAX_PLANES - 1);

			if (!ip || !fs_lane_ok(rail, plane) || !plan_ip_ok(ip)) {	/* (its --rail refuses these) */
				fs_warn("agent %s: endpoint %d of its registration is not a rail 0-%d, "
					"plane 0-%d and an IP address: left out", n->name, (int)i,
					FS_MAX_RAILS - 1, FS_MAX_PLANES - 1);
				continue;
			}
			if (FS_ALLOC_GROW(n->ep, (size_t)n->nep + 1, n->ep_alloc)) {
				fs_err_env("out of memory for the endpoints of agent %s: those after %d "
					   "left out", n->name, n->nep);
				break;
			}
			n->ep[n->nep].rail = rail;
			n->ep[n->nep].plane = plane;
			n->ep[n->nep].ip = strdup(ip);
			n->nep++;
		}
	}
	if (!n->nep) {
		n->ep = calloc(1, sizeof(*n->ep));
		n->ep[0].ip = strdup(strcmp(peer, "local") && strchr(peer, '.') ? peer : "127.0.0.1");
		n->nep = 1;
	}
}

/* The transports node's agent cannot open (m's unusable, fleet.h): verbs'
 * why kept (bounded, printable) for coord_check_transports, and in run.json's
 * agents (info). */
static void register_unusable(struct coord *c, int node, json_t *m, json_t *info)
{
	const char *why = json_string_value(json_object_get(json_object_get(m, "unusable"), "verbs"));
	char *p;

	if (!why)
		return;
	free(c->node_noverbs[node]);
	if (!(c->node_noverbs[node] = strndup(*why ? why : "no reason given", FLEET_WHY_MAX)))
		return;	/* (out of memory: its verbs jobs run, and fail) */
	for (p = c->node_noverbs[node]; *p; p++)	/* it goes onto a terminal */
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	json_object_set_new(info, "unusable", json_pack("{ss}", "verbs", c->node_noverbs[node]));
}

/* How often an agent that has sent nothing else sends a heartbeat: a
 * quarter of the silence allowed (four chances before it is called
 * missing), at least FLEET_HEARTBEAT_MS.  Every message costs both ends a
 * wakeup, a MAC and a parse: at 16,384 agents a heartbeat a second each is
 * 16,384 messages a second for nothing. */
static int coord_heartbeat_ms(const struct coord *c)
{
	int q = units_ms(c->agent_timeout) / 4;

	return q > FLEET_HEARTBEAT_MS ? q : FLEET_HEARTBEAT_MS;
}

/* The welcome of node on connection ci, whose agent sent the register reg:
 * 0, or -1 when it could not be sent (the node's why says so) */
static int welcome(struct coord *c, int ci, int node, json_t *reg)
{
	struct conn *k = &c->conns[ci];
	const char *name = c->plan.nodes[node].name;
	const char *nonce = json_string_value(json_object_get(reg, "nonce"));
	uint8_t key[WIRE_MAC_LEN];
	int rc;

	rc = answer_register(c, ci, reg, json_pack("{ss,ss,si,si}", "type", "welcome", "node", name, "heartbeat_ms",
						   coord_heartbeat_ms(c), "silence_ms", units_ms(c->agent_timeout)));
	if (rc) {	/* it registered, and was gone when its welcome went out: it gave up waiting */
		const char *last = k->want_node >= 0 ? launch_err_last(c, k->want_node) : NULL;
		char why[LAUNCH_ERR_LAST + 200];

		snprintf(why, sizeof(why), "its agent registered and was gone when it was welcomed, %.1f s after its "
			 "challenge (%s)%s%s", conn_age_s(c, ci), wire_strerror(rc), last ? ": it said: " : "",
			 last ? last : "");
		fs_warn("agent %s is missing: %s", name, why);
		if (!c->node_why[node])
			c->node_why[node] = strdup(why);
		conn_drop(c, ci);
		return -1;
	}
	/* from here on every message each way carries its MAC */
	auth_session_key(c->token, k->nonce, nonce, key);
	wire_mac_start(&k->tx, key, 'c');
	wire_mac_start(&k->rd.mac, key, 'a');
	memset(key, 0, sizeof(key));
	if (k->want_node >= 0) {
		c->npending--;
	} else {	/* (trusted now: read as it comes) */
		int one = 1;

		c->nunreg--;
		setsockopt(k->fd, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof(one));
	}
	k->authed = 1;
	k->node = node;
	c->node_conn[node] = ci;
	c->njoined++;
	return 0;
}

static void on_register(struct coord *c, int ci, json_t *m)
{
	struct conn *k = &c->conns[ci];
	const char *name = json_string_value(json_object_get(m, "node"));
	const char *nonce = json_string_value(json_object_get(m, "nonce"));
	const char *type = json_string_value(json_object_get(m, "type"));
	int version = (int)json_integer_value(json_object_get(m, "version")), node;
	json_t *info, *hs[2] = { NULL, m };	/* the handshake so far: challenge, register */

	if (type && !strcmp(type, "error")) {	/* the agent refused us */
		const char *msg = json_string_value(json_object_get(m, "message"));

		fs_warn("an agent from %s refused this coordinator: %s", k->peer, msg ? msg : "no reason");
		conn_why(c, ci, "its agent refused this coordinator: %.300s", msg ? msg : "no reason");
		conn_drop(c, ci);
		return;
	}
	if (!type || strcmp(type, "register") || !name || !auth_nonce_ok(nonce)) {
		refuse(c, ci, m, name, "expected a register message");
		return;
	}
	if (!plan_name_ok(name)) {	/* names go into messages, logs, records and file names */
		refuse(c, ci, m, NULL, "a node name of %zu bytes that is not a host name: names are 1 to %d bytes of "
		       "letters, digits, '.', '_', ':' and '-' (give the agent --name)", strlen(name), PLAN_NAME_MAX);
		return;
	}
	if (version != wire_version()) {
		refuse(c, ci, m, name, "agent %s speaks fleet protocol %d, this coordinator %d: run the same fabscope version everywhere",
		       name, version, wire_version());
		return;
	}
	if (!(hs[0] = challenge_of(k)) ||
	    !auth_mac_msgs_ok(c->token, "agent", k->nonce, nonce, hs, 2, json_string_value(json_object_get(m, "mac")))) {
		json_decref(hs[0]);
		refuse(c, ci, m, name, "authentication failed: agent %s has the wrong token, or its handshake was changed on the "
		       "way (its mac is not this token's over the challenge and the register: check --token-file / "
		       "FABSCOPE_TOKEN)", name);
		return;
	}
	json_decref(hs[0]);
	if ((node = register_node(c, ci, m, name)) < 0 || welcome(c, ci, node, m))
		return;
	register_endpoints(c, ci, node, m);
	info = json_pack("{ss,ss?,si,ss?,ss,sf}", "node", name,
			 "host", json_string_value(json_object_get(m, "host")),
			 "pid", (int)json_integer_value(json_object_get(m, "pid")),
			 "version", json_string_value(json_object_get(m, "tool_version")),
			 "from", k->peer, "joined_s", (clock_ns() - c->run_start_ns) / 1e9);
	register_unusable(c, node, m, info);
	json_array_append_new(json_object_get(c->res.run, "agents"), info);
	fs_log(1, "agent %s joined from %s", name, k->peer);
}

/* ---- the event loop ---- */

/* Out of descriptors (err): the listening socket stays readable, so it is
 * left out of the epoll set for COORD_ACCEPT_PAUSE_MS (accept_resume), or
 * the loop would spin; said once, with the limit. */
static void accept_pause(struct coord *c, int err)
{
	struct epoll_event ev = { .events = 0, .data.fd = c->listen_fd };

	c->accept_paused_ns = clock_ns() + COORD_ACCEPT_PAUSE_MS * 1000000ull;
	epoll_ctl(c->epfd, EPOLL_CTL_MOD, c->listen_fd, &ev);
	if (!c->emfile_said++) {
		struct rlimit rl = { 0, 0 };

		getrlimit(RLIMIT_NOFILE, &rl);
		fs_warn("cannot accept a connection: %s (ulimit -n %llu): new connections wait, accepting pauses "
			"%d ms at a time; raise the limit to the agents expected + 64 for a fleet this large",
			strerror(err), (unsigned long long)rl.rlim_cur, COORD_ACCEPT_PAUSE_MS);
	}
}

static void accept_resume(struct coord *c)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = c->listen_fd };

	if (!c->accept_paused_ns || clock_ns() < c->accept_paused_ns)
		return;
	c->accept_paused_ns = 0;
	epoll_ctl(c->epfd, EPOLL_CTL_MOD, c->listen_fd, &ev);
}

static void accept_new(struct coord *c)
{
	int low = 4;

	for (;;) {
		struct net_addr peer;
		char name[NET_ADDRSTRLEN];
		int fd = net_accept(c->listen_fd, 0, &peer), most;

		if (fd == -EMFILE || fd == -ENFILE || fd == -ENOBUFS || fd == -ENOMEM) {
			accept_pause(c, -fd);
			return;
		}
		if (fd < 0)
			return;
		/* the agents still to join may all be connecting at once: they
		 * and COORD_UNAUTH_MAX more; past that the oldest goes */
		most = COORD_UNAUTH_MAX + (c->expected > c->njoined ? c->expected - c->njoined : 0);
		if (c->nunreg >= most) {
			int oldest = oldest_unregistered(c);

			if (oldest >= 0)
				shed(c, oldest, "a connection from %s was the oldest of %d waiting to register when "
				     "another came", c->conns[oldest].peer, most);
		}
		net_addr_host(&peer, name, sizeof(name));
		/* (epoll wakes it up once its header is whole: wire_read_whole) */
		setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &low, sizeof(low));
		coord_add_conn(c, fd, -1, name);
	}
}

/* Drop the connections that are gone (closed, their reader freed) so that
 * memory is by the connections alive, not by all ever made; node_conn and
 * fdmap follow the moves.  Only at the top of coord_poll, so that no index
 * is held across it; only once a quarter of them are gone (so each gone
 * connection costs O(1) moves). */
static void compact_conns(struct coord *c)
{
	int i, n = 0;

	if (c->ngone < 64 && c->ngone * 4 < c->nconns)
		return;
	for (i = 0; i < c->nconns; i++) {
		struct conn *k = &c->conns[i];

		if (k->gone)
			continue;
		if (n != i)
			c->conns[n] = *k;
		if (c->conns[n].node >= 0 && c->node_conn[c->conns[n].node] == i)
			c->node_conn[c->conns[n].node] = n;
		c->fdmap[c->conns[n].fd] = n;
		n++;
	}
	c->nconns = n;
	c->ngone = 0;
	c->unreg_from = 0;	/* (indices moved) */
	if (c->conns_cap > 256 && n < c->conns_cap / 4) {	/* give back what a burst took */
		struct conn *nc = realloc(c->conns, (size_t)(c->conns_cap / 2) * sizeof(*nc));

		if (nc) {
			c->conns = nc;
			c->conns_cap /= 2;
		}
	}
}

/* Read what connection ci has: every whole message, handled.  hup: its
 * peer has shut its end (epoll said so), so a frame not whole by now never
 * will be (wire_read_whole waits for all of one: the end is seen here). */
static void conn_readable(struct coord *c, int ci, int hup)
{
	for (;;) {
		json_t *m;
		/* (a listener connection's register: only once all of it has come, into join_buf) */
		int r = c->conns[ci].authed ? wire_read_some(c->conns[ci].fd, &c->conns[ci].rd, &m, FLEET_MAX_MSG) :
			c->conns[ci].want_node < 0 ? wire_read_whole(c->conns[ci].fd, join_buf, sizeof(join_buf), &m, NULL, 0) :
			wire_read_some(c->conns[ci].fd, &c->conns[ci].rd, &m, COORD_JOIN_MAX_MSG);

		if (r == 0 && hup && !c->conns[ci].authed && c->conns[ci].want_node < 0)
			r = -ECONNRESET;	/* (a register cut short, and its sender gone) */
		if (r == 0)
			return;
		if (r < 0) {
			char why[128];

			snprintf(why, sizeof(why), "%s", r == -ECONNRESET ? "its connection closed" :
				 r == -EBADMSG ? "its control channel was tampered with (a message from it failed "
						 "its MAC)" : wire_strerror(r));
			if (c->conns[ci].authed)
				coord_conn_gone(c, ci, why);
			else
				conn_unregistered_end(c, ci, r, why);
			return;
		}
		c->conns[ci].last_ns = clock_ns();
		if (!c->conns[ci].authed)
			on_register(c, ci, m);
		else
			coord_on_agent_msg(c, ci, m);
		json_decref(m);
		if (c->conns[ci].gone)
			return;
	}
}

/* Connection ci has been silent too long, unless what it sent is waiting
 * to be read (a coordinator busy elsewhere has not read it: that is not
 * the agent's silence): 1, and it is closed, said */
static int conn_silent(struct coord *c, int ci, uint64_t now)
{
	struct conn *k = &c->conns[ci];
	uint64_t limit = (uint64_t)(c->agent_timeout * 1e9), since = k->authed ? k->last_ns : k->opened_ns;
	char why[200];

	/* a connection we made (local, ssh) may register as late as the join
	 * allows: starting thousands of agents takes a while.  Anyone's
	 * (listener) has --agent-timeout while no more of them wait to
	 * register than agents are still expected (they may all be the
	 * fleet's, busy); beyond that some are not, and each has COORD_JOIN_MS */
	if (!k->authed && k->want_node < 0 && c->nunreg > c->expected - c->njoined)
		limit = COORD_JOIN_MS * 1000000ull;
	else if (!k->authed && k->want_node >= 0 && c->join_deadline_ns > since + limit)
		limit = c->join_deadline_ns - since;
	if (now - since <= limit)
		return 0;
	conn_readable(c, ci, 0);
	if (k->gone || k->last_ns > since)
		return k->gone;
	if (k->authed) {
		snprintf(why, sizeof(why), "silent for %.0f s (no heartbeat): the agent hangs, or its host or "
			 "the way to it is down", c->agent_timeout);
		coord_conn_gone(c, ci, why);
		return 1;
	}
	if (k->want_node < 0) {
		shed(c, ci, "a connection from %s did not register within %llu ms", k->peer,
		     (unsigned long long)(limit / 1000000));
		return 1;
	}
	fs_warn("a connection from %s did not register within %.0f s: closed", k->peer, limit / 1e9);
	conn_why(c, ci, "its agent did not register within %.0f s of its challenge", limit / 1e9);
	conn_drop(c, ci);
	return 1;
}

/* What the agents of job j have sent and is not read yet, read: a
 * progress report waiting behind a busy coordinator is not a stall */
static void job_read_agents(struct coord *c, const struct cjob *j)
{
	int k, n = j->m ? j->nm : 2;

	for (k = 0; k < n; k++) {
		int node = j->m ? j->m[k].node : k ? j->server : j->client, ci;

		if (node >= 0 && node < c->nnodes_cap && (ci = c->node_conn[node]) >= 0 && !c->conns[ci].gone)
			conn_readable(c, ci, 0);
	}
}

/* What is due by the clock, at most every COORD_TICK_MS: silences,
 * keepalive pings (to an agent sent nothing for a quarter of its
 * silence_ms, --agent-timeout: four chances before it gives up on us, and
 * no ping at all to one that is being sent jobs), the jobs' deadlines and
 * stalls (judged by their progress, coord_job_hung).  A walk over the
 * connections and jobs, bounded by the clock, not by the messages that
 * come. */
static void coord_tick(struct coord *c)
{
	uint64_t now = clock_ns(), keepalive = (uint64_t)(c->agent_timeout * 1e9) / 4;
	int i;

	if (now - c->last_tick_ns < COORD_TICK_MS * 1000000ull)
		return;
	c->last_tick_ns = now;
	for (i = 0; i < c->nconns; i++) {
		struct conn *k = &c->conns[i];

		/* (sent_ns may be past now: a job started by what conn_silent read) */
		if (k->gone || conn_silent(c, i, now) || !k->authed || k->sent_ns + keepalive > now)
			continue;
		if (coord_send_to(c, i, json_pack("{ss,si}", "type", "ping", "t", 0)))
			coord_conn_gone(c, i, "its connection broke");
	}
	shed_say(c, now);
	now = clock_ns();	/* (what was read above came after the tick's start) */
	for (i = 0; i < c->njobs; i++) {	/* deadlines */
		struct cjob *j = &c->jobs[i];

		if (j->state == J_FIN || j->state == J_IDLE)
			continue;
		if (j->grace_ns && now > j->grace_ns) {
			/* the server lingers: the client is what counts (a group:
			 * rank 0 is done and others linger, or a rank failed and
			 * the rest had a while to report) */
			coord_job_finish(c, j, NULL);
		} else if (coord_job_stalled(j, now)) {
			job_read_agents(c, j);
			if (j->state != J_FIN)
				coord_job_hung(c, j, clock_ns());
		}
	}
}

int coord_poll(struct coord *c, int timeout_ms)
{
	struct epoll_event ev[COORD_EVENTS];
	int n, i;

	compact_conns(c);
	accept_resume(c);
	if (c->epfd < 0)	/* (nothing to watch yet) */
		n = poll(NULL, 0, timeout_ms) < 0 ? -1 : 0;
	else
		n = epoll_wait(c->epfd, ev, COORD_EVENTS, timeout_ms);
	if (n < 0 && errno != EINTR)
		return fs_err_env("waiting for the agents: %s", strerror(errno));
	for (i = 0; i < n; i++) {
		int fd = ev[i].data.fd, who = (size_t)fd < c->fdmap_alloc ? c->fdmap[fd] : COORD_FD_NONE;

		/* (a descriptor closed in this turn may be reused by one accepted in it: the
		 * event is then a spurious one for the new one, whose read finds nothing) */
		if (who == COORD_FD_NONE)
			continue;
		if (who == COORD_FD_LISTEN)
			accept_new(c);
		else if (who <= COORD_FD_AERR(0))
			launch_err_read(c, COORD_FD_AERR(0) - who);
		else if (who < c->nconns && !c->conns[who].gone)
			conn_readable(c, who, !!(ev[i].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)));
	}
	coord_tick(c);
	if (c->res.dir)	/* finished jobs reach jobs.done once their records are on disk */
		results_sync_due(&c->res);
	if (c->res.dir && results_failed(&c->res))
		return results_failed(&c->res);	/* a record could not be written: stop */
	return net_stop ? -FS_EXIT_INTERRUPTED : 0;
}

/* ---- set-up ---- */

int coord_listen(struct coord *c)
{
	char host[256] = "", err[256], name[NET_ADDRSTRLEN];
	const char *l = c->listen ? c->listen : "";
	struct net_addr a;
	int port = 0, rc;
	const char *colon = strrchr(l, ':');

	if (colon && !strchr(colon, ']')) {
		snprintf(host, sizeof(host), "%.*s", (int)(colon - l), l);
		port = atoi(colon + 1);
	} else {
		snprintf(host, sizeof(host), "%s", l);
	}
	if (host[0] == '[') {
		memmove(host, host + 1, strlen(host));
		host[strcspn(host, "]")] = 0;
	}
	if (net_resolve(*host ? host : NULL, port, 1, &a, err, sizeof(err)))
		return fs_err_usage("--listen '%s': %s", l, err);
	/* a fleet connects at once: as long a queue as the kernel allows
	 * (net.core.somaxconn), so that no SYN is dropped and retried a second later */
	c->listen_fd = net_listen(&a, 65535);
	if (c->listen_fd < 0)
		return fs_err_env("cannot listen on '%s': %s", l, strerror(-c->listen_fd));
	if ((rc = coord_watch(c, c->listen_fd, COORD_FD_LISTEN)))
		return fs_err_env("cannot watch the listening socket: %s", strerror(-rc));
	net_local_addr(c->listen_fd, &a);
	port = net_addr_port(&a);
	if (c->advertise_host)
		snprintf(host, sizeof(host), "%s", c->advertise_host);
	else if (!*host || !strcmp(host, "0.0.0.0") || !strcmp(host, "::"))
		gethostname(host, sizeof(host) - 1);
	snprintf(c->advertise, sizeof(c->advertise), strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);
	net_addr_str(&a, name, sizeof(name));
	fs_log(1, "listening for agents on %s, advertised as %s", name, c->advertise);
	return 0;
}

/* Why node did not join, when nothing said so as it happened */
static void join_missing_why(struct coord *c, int node, int gone, int status, int timed_out, char *why, size_t len)
{
	if (c->node_why[node])
		snprintf(why, len, "did not join: %s", c->node_why[node]);
	else if (gone)
		snprintf(why, len, "did not join: %s exited%s%.0d first", launch_program(c),
			 status ? " with status " : "", status);
	else if (timed_out)
		snprintf(why, len, "did not join within %.0f s (--join-timeout)", c->join_timeout);
	else	/* (every connection made has joined or ended, saying why: not seen) */
		snprintf(why, len, "did not join: its agent's connection was never made (%.1f s into the run)",
			 (clock_ns() - c->run_start_ns) / 1e9);
}

/* Every node without an agent is missing, with why (say: a warning each;
 * else, when no agent joined and the run stops, those whose why is known
 * keep it, as it is, for the one line said) */
static void mark_missing(struct coord *c, int gone, int status, int timed_out, int say)
{
	char why[LAUNCH_ERR_LAST + 300];
	int i;

	for (i = 0; i < c->plan.nnodes; i++) {
		if (c->node_conn[i] >= 0 || (c->node_why[i] && !say))
			continue;
		join_missing_why(c, i, gone, status, timed_out, why, sizeof(why));
		free(c->node_why[i]);
		c->node_why[i] = strdup(why);
		if (say)
			fs_warn("agent %s is missing: %s", c->plan.nodes[i].name, why);
	}
}

int coord_join(struct coord *c)
{
	uint64_t last_say = clock_ns();
	int rc = 0, gone = 0, status = 0, timed_out = 0, listener = launch_uses_listener(c->launcher);
	char why[LAUNCH_ERR_LAST + 300];

	for (;;) {	/* (counters: a turn costs what came in it, not a walk over every node) */
		if (c->njoined >= c->expected)
			break;
		/* local/ssh: every connection made has registered or died */
		if (!listener && !c->npending)
			break;
		/* srun, mpirun: gone, and with them the agents that had not connected */
		if (listener && (gone = launch_exited(c, &status)))
			break;
		if (clock_ns() >= c->join_deadline_ns) {
			timed_out = 1;
			break;
		}
		if (clock_ns() - last_say > 5000000000ull) {
			fs_info("%d of %d agents joined (%.0f s)", c->njoined, c->expected,
				(clock_ns() - c->run_start_ns) / 1e9);
			last_say = clock_ns();
		}
		if ((rc = coord_poll(c, 100)))
			return rc;
	}
	if (!c->plan.hostfile)	/* anonymous nodes that never came */
		while (c->plan.nnodes < c->expected) {
			char name[64];

			snprintf(name, sizeof(name), "agent%d", c->plan.nnodes);
			if ((rc = coord_ensure_nodes(c, c->plan.nnodes + 1)))	/* (the loop below says why) */
				return rc;
			if (plan_node_add(&c->plan, name) < 0)
				return fs_err_env("out of memory for node %s", name);
		}
	if (!c->njoined) {	/* nothing to run a phase on: say why once, not per job */
		/* (node 0's cause, as it happened, for the line below) */
		snprintf(why, sizeof(why), "%s", c->node_why[0] ? c->node_why[0] : listener ?
			 "did not connect within --join-timeout" : "did not register");
		mark_missing(c, gone, status, timed_out, 0);	/* (every node missing in run.json) */
		if (gone)
			return fs_err_env("no agent joined: %s exited%s%.0d before any did (its messages are above); "
					  "check --launcher-args and that it can start '%s agent'", launch_program(c),
					  status ? " with status " : "", status, c->agent_cmd ? c->agent_cmd : c->self);
		if (!listener) {	/* the processes end a moment after their connections; the end
					 * of a connection not read yet (a busy machine: the join's
					 * time ran out first) is read now, with what its agent said */
			uint64_t until = clock_ns() + 2000000000ull;

			for (;;) {
				gone = launch_exited(c, &status);
				if ((gone && !c->npending) || clock_ns() >= until)
					break;
				if ((rc = coord_poll(c, 20)))
					return rc;
			}
		}
		if (!listener && gone && (status == 126 || status == 127))
			return fs_err_env("no agent joined: %s could not be run (its message is above)",
					  !strcmp(c->launcher, "ssh") ? "ssh" : "the agent");
		return fs_err_peer("no agent joined, nothing to run: %s (of %d): %s", c->plan.nodes[0].name,
				   c->plan.nnodes, why);
	}
	mark_missing(c, gone, status, timed_out, 1);
	return 0;
}

json_t *coord_nodes_json(struct coord *c)
{
	json_t *a = json_array();
	int i, j;

	c->missing = 0;
	for (i = 0; i < c->plan.nnodes; i++)
		c->missing += c->node_why[i] != NULL;
	for (i = 0; i < c->plan.nnodes; i++) {
		const struct plan_node *n = &c->plan.nodes[i];
		json_t *eps = json_array();

		for (j = 0; j < n->nep; j++)
			json_array_append_new(eps, json_pack("{si,si,ss}", "rail", n->ep[j].rail,
							     "plane", n->ep[j].plane, "ip", n->ep[j].ip));
		json_array_append_new(a, json_pack("{ss,so,ss,ss?,ss*,ss*}", "name", n->name, "endpoints", eps,
						   "status", c->node_why[i] ? "missing" : "ok",
						   "why", c->node_why[i], "leaf", n->leaf, "pod", n->pod));
	}
	return a;
}
