/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The collectives' bootstrap: ranks meet at the root (rank 0's control
 * side), get the ring order, exchange transport blobs with the peers the
 * algorithm needs, connect, and synchronize.  See coll.h for the messages.
 *
 * Who connects: for a pair of ranks the lower one is the active side.
 * Every rank connects its active connections first and then accepts its
 * passive ones, so nobody waits for a peer that itself waits (a TCP
 * connect completes in the listener's backlog; verbs connects locally).
 * A barrier follows, so no rank sends before every peer is ready to
 * receive (an RC QP must be at RTR before the first packet reaches it).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/clock.h"
#include "../core/error.h"
#include "../core/net.h"
#include "../core/units.h"
#include "../core/wire.h"
#include "coll.h"

static int is_root(const struct coll_comm *c)
{
	return c->rank == 0;
}

static const char *rank_node(const struct coll_comm *c, int r)
{
	json_t *e = json_array_get(c->ranks, (size_t)r);
	const char *s = json_string_value(json_object_get(e, "node"));

	return s ? s : "?";
}

/* "rank 3 (h3 rail 1)" for messages */
const char *coll_rank_str(const struct coll_comm *c, int r, char *buf, size_t len)
{
	json_t *e = json_array_get(c->ranks, (size_t)r);

	if (!e)
		snprintf(buf, len, "rank %d", r);
	else
		snprintf(buf, len, "rank %d (%s rail %lld)", r, rank_node(c, r),
			 (long long)json_integer_value(json_object_get(e, "rail")));
	return buf;
}

static json_t *params_json(const struct coll_opts *o)
{
	return json_pack("{s:s, s:s, s:s, s:I, s:I, s:f, s:I, s:I, s:I, s:i, s:i, s:i, s:b}",
			 "test", o->test, "transport", o->transport, "algo", o->algo_name,
			 "min_bytes", (json_int_t)o->min_bytes, "max_bytes", (json_int_t)o->max_bytes,
			 "factor", o->factor, "warmup", (json_int_t)o->warmup,
			 "iters", (json_int_t)o->iters, "chunk", (json_int_t)o->chunk,
			 "flows", o->flows, "check", o->check, "nranks", o->nranks,
			 "multi_rail", o->multi_rail);
}

int coll_root_listen(struct coll_opts *o, int *lfd, int *port)
{
	char err[256];
	const char *colon;
	struct net_addr a;
	int p = o->port, fd;

	if (o->root) {
		colon = strrchr(o->root, ':');
		if (colon && !strchr(colon, ']'))
			p = atoi(colon + 1);
	}
	/* the root listens on every address: ranks reach it by --root's name */
	if (net_resolve(NULL, p, 1, &a, err, sizeof(err)))
		return fs_err_env("cannot listen for ranks: %s", err);
	fd = net_listen(&a, COLL_MAX_RANKS);
	if (fd < 0)
		return fd == -EADDRINUSE ?
		       fs_err_usage("port %d is in use: give another with --root HOST:PORT or --port", p) :
		       fs_err_env("cannot listen for ranks on port %d: %s", p, strerror(-fd));
	net_local_addr(fd, &a);
	*lfd = fd;
	*port = net_addr_port(&a);
	return 0;
}

/* wire_send, and the message is gone whatever happened */
static int send_own(int fd, json_t *m, int timeout_ms)
{
	int rc = m ? wire_send(fd, m, timeout_ms) : -ENOMEM;

	json_decref(m);
	return rc;
}

/* The end of a control wait that starts now: the start-up's deadline while
 * the ranks meet, else --timeout from now. */
static uint64_t wait_end(const struct coll_comm *c)
{
	return c->startup_end ? c->startup_end : clock_ns() + (uint64_t)c->timeout_ms * 1000000ull;
}

/* An "error" message from the other side of a control connection: its exit
 * code, and its text printed - except between -n's ranks, where the rank
 * that failed has said why on the same stderr already (cmd.c). */
static int peer_error(const struct coll_comm *c, json_t *m, const char *who)
{
	const char *msg = json_string_value(json_object_get(m, "message"));
	int code = (int)json_integer_value(json_object_get(m, "exit"));

	code = code > 0 && (code < 128 || code == FS_EXIT_INTERRUPTED) ? code : FS_EXIT_PEER;
	if (c->o->local)
		return -code;
	return fs_err(code, "%s: %s", who, msg ? msg : "the run was aborted");
}

/* Non-root: one message from the root, of type `expect` (an "error" from
 * the root ends the run). */
static int ctl_recv(struct coll_comm *c, json_t **out, const char *expect)
{
	json_t *m;
	const char *type;
	char who[32];
	int rc = wire_recv(c->ctl, &m, COLL_MAX_MSG, clock_ms_left(wait_end(c)));

	if (rc && net_stop)	/* ^C: the wait broke off; rank 0 says it (cmd.c) */
		return -FS_EXIT_INTERRUPTED;
	if (rc) {
		c->ctl_gone = 1;	/* nothing more will come: no bye to wait for */
		if (rc == -ETIMEDOUT)
			return fs_err_peer("rank %d: the root (rank 0) sent no '%s' within %g s (--timeout): it "
					   "hangs, or waits for a rank that did not start", c->rank, expect,
					   c->timeout_ms / 1000.0);
		return fs_err_peer("rank %d: the root (rank 0) %s while waiting for '%s'",
				   c->rank, wire_strerror(rc), expect);
	}
	type = json_string_value(json_object_get(m, "type"));
	if (type && !strcmp(type, "error")) {
		snprintf(who, sizeof(who), "rank %d", c->rank);
		rc = peer_error(c, m, who);
		json_decref(m);
		return rc;
	}
	if (!type || strcmp(type, expect)) {
		json_decref(m);
		return fs_err_peer("rank %d: the root sent '%s' where '%s' was due", c->rank,
				   type ? type : "(no type)", expect);
	}
	*out = m;
	return 0;
}

/* Non-root: a send to the root failed.  The root may have ended the run
 * and gone, its reason already here: then that is the error. */
static int ctl_send_failed(struct coll_comm *c)
{
	json_t *m;
	int rc;

	c->ctl_gone = 1;
	if (net_stop)
		return -FS_EXIT_INTERRUPTED;
	while (!wire_recv(c->ctl, &m, COLL_MAX_MSG, 0)) {
		const char *type = json_string_value(json_object_get(m, "type"));
		char who[32];

		if (type && !strcmp(type, "error")) {
			snprintf(who, sizeof(who), "rank %d", c->rank);
			rc = peer_error(c, m, who);
			json_decref(m);
			return rc;
		}
		json_decref(m);
	}
	return fs_err_peer("rank %d: cannot talk to the root", c->rank);
}

/* Root: one message of type `expect` from every other rank, read from all
 * at once (an error from any rank ends the wait at once). */
static int root_collect(struct coll_comm *c, json_t **msgs, const char *expect)
{
	int n = c->nranks, left = n - 1, i, rc;
	struct wire_rd *rd = calloc((size_t)n, sizeof(*rd));
	struct pollfd *pf = calloc((size_t)n, sizeof(*pf));
	uint64_t deadline = wait_end(c);
	char who[128];

	for (i = 0; i < n; i++)
		msgs[i] = NULL;
	rc = 0;
	while (left > 0 && !rc) {
		int ms = clock_ms_left(deadline);
		if (ms <= 0) {
			for (i = 1; i < n && msgs[i]; i++)
				;
			rc = fs_err_peer("%s did not send '%s' within %g s: it hangs or its host is "
					 "overloaded (raise --timeout)", coll_rank_str(c, i, who, sizeof(who)),
					 expect, c->timeout_ms / 1000.0);
			break;
		}
		for (i = 1; i < n; i++) {
			pf[i].fd = msgs[i] ? -1 : c->fds[i];
			pf[i].events = POLLIN;
			pf[i].revents = 0;
		}
		pf[0].fd = -1;
		if (poll(pf, (nfds_t)n, ms > 200 ? 200 : ms) < 0 && errno != EINTR) {
			rc = fs_err_env("poll: %s", strerror(errno));
			break;
		}
		if (net_stop) {
			rc = -FS_EXIT_INTERRUPTED;
			break;
		}
		for (i = 1; i < n && !rc; i++) {
			json_t *m;
			const char *type;
			int r;

			if (msgs[i] || !pf[i].revents)
				continue;
			r = wire_read_some(c->fds[i], &rd[i], &m, COLL_MAX_MSG);
			if (r == 0)
				continue;
			if (r < 0) {
				rc = fs_err_peer("%s: control connection %s while waiting for '%s'",
						 coll_rank_str(c, i, who, sizeof(who)), wire_strerror(r), expect);
				break;
			}
			type = json_string_value(json_object_get(m, "type"));
			if (type && !strcmp(type, "error")) {
				rc = peer_error(c, m, coll_rank_str(c, i, who, sizeof(who)));
				json_decref(m);
				break;
			}
			if (!type || strcmp(type, expect)) {
				rc = fs_err_peer("%s sent '%s' where '%s' was due",
						 coll_rank_str(c, i, who, sizeof(who)), type ? type : "(no type)",
						 expect);
				json_decref(m);
				break;
			}
			msgs[i] = m;
			left--;
		}
	}
	for (i = 0; i < n; i++)
		wire_rd_release(&rd[i]);
	free(rd);
	free(pf);
	if (rc)
		for (i = 0; i < n; i++) {
			json_decref(msgs[i]);
			msgs[i] = NULL;
		}
	return rc;
}

static int root_bcast(struct coll_comm *c, json_t *m)
{
	int i, rc = 0;
	char who[128];

	for (i = 1; i < c->nranks && !rc; i++) {
		if (c->fds[i] < 0)
			continue;
		if (wire_send(c->fds[i], m, c->timeout_ms))
			rc = fs_err_peer("%s: cannot send to it; its control connection broke",
					 coll_rank_str(c, i, who, sizeof(who)));
	}
	json_decref(m);
	return rc;
}

void coll_abort(struct coll_comm *c, int code, const char *msg)
{
	json_t *m = json_pack("{s:s, s:s, s:i}", "type", "error", "message", msg, "exit", code);
	int i;

	if (is_root(c)) {
		if (c->fds)
			for (i = 1; i < c->nranks; i++)
				if (c->fds[i] >= 0)
					wire_send(c->fds[i], m, 1000);
	} else if (c->ctl >= 0) {
		wire_send(c->ctl, m, 1000);
	}
	json_decref(m);
}

/*
 * A rank whose data path breaks tells the root why (coll_abort) and exits,
 * which breaks its data connections too; so the root can see a connection to
 * a live rank fail before it hears that the rank beyond it died.  Only the
 * rank the root's own failure names is asked: a word from another rank may
 * be about the root's own trouble.  Another rank asks the root, which says
 * why it ended the run (an interrupted root, before it closes its data
 * connections).
 */
int coll_peer_cause(struct coll_comm *c, int wait_ms, char *buf, size_t len, int *code)
{
	int i = c->err_peer, found = 0, fd;
	struct wire_rd rd = { 0 };
	uint64_t deadline = clock_ns() + (uint64_t)wait_ms * 1000000ull;

	if (is_root(c)) {
		if (!c->fds || i <= 0 || i >= c->nranks || c->fds[i] < 0)
			return 0;
		fd = c->fds[i];
	} else {
		if (c->ctl < 0 || c->ctl_gone)
			return 0;
		fd = c->ctl;
	}
	while (!found) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		int ms = clock_ms_left(deadline), r;
		json_t *m;
		const char *type, *msg;

		if (ms <= 0 || poll(&pf, 1, ms) <= 0)
			break;
		r = wire_read_some(fd, &rd, &m, COLL_MAX_MSG);
		if (r < 0) {	/* closed without a word */
			if (!is_root(c))
				c->ctl_gone = 1;
			break;
		}
		if (r == 0)
			continue;
		type = json_string_value(json_object_get(m, "type"));
		msg = json_string_value(json_object_get(m, "message"));
		if (type && !strcmp(type, "error") && msg) {
			json_int_t x = json_integer_value(json_object_get(m, "exit"));

			snprintf(buf, len, "%s", msg);
			*code = x > 0 && (x < 128 || x == FS_EXIT_INTERRUPTED) ? (int)x : FS_EXIT_PEER;
			found = 1;
		}
		json_decref(m);
	}
	wire_rd_release(&rd);
	return found;
}

/* Connect to the root, retrying while it is not up yet (mpirun and srun
 * start every rank at once), until the start-up's deadline. */
static int dial_root(struct coll_comm *c)
{
	const struct coll_opts *o = c->o;
	char host[300], err[256];
	const char *colon = strrchr(o->root, ':');
	struct net_addr a;
	int port = o->port, fd;

	snprintf(host, sizeof(host), "%s", o->root);
	if (colon && !strchr(colon, ']')) {
		host[colon - o->root] = 0;
		port = atoi(colon + 1);
	}
	if (host[0] == '[') {
		memmove(host, host + 1, strlen(host));
		host[strcspn(host, "]")] = 0;
	}
	if (net_resolve(host, port, 0, &a, err, sizeof(err)))
		return fs_err_usage("cannot resolve the root '%s': %s", o->root, err);
	for (;;) {
		int left = clock_ms_left(c->startup_end);

		fd = net_connect(&a, NULL, left < 1000 ? left + 1 : 1000);
		if (fd >= 0)
			break;
		if (net_stop)
			return -FS_EXIT_INTERRUPTED;
		if (clock_ms_left(c->startup_end) <= 0)
			return fs_err_peer("rank %d: cannot reach the root at %s:%d within %g s (%s); "
					   "is rank 0 running there?", c->rank, host, port,
					   c->timeout_ms / 1000.0, strerror(-fd));
		usleep(100000);
	}
	c->ctl = fd;
	return 0;
}

/* This rank's node: --node, else the host name, else "?" */
static void node_name(const struct coll_opts *o, char *host, size_t len)
{
	memset(host, 0, len);
	if (o->node)
		snprintf(host, len, "%s", o->node);
	else if (gethostname(host, len - 1))
		snprintf(host, len, "?");
}

static json_t *hello_json(struct coll_comm *c, const char *addr)
{
	const struct coll_opts *o = c->o;
	char host[256];

	node_name(o, host, sizeof(host));
	return json_pack("{s:s, s:s, s:i, s:i, s:i, s:s, s:i, s:s?, s:o, s:i}", "type", "hello",
			 "proto", COLL_PROTO, "version", wire_version(), "rank", c->rank,
			 "nranks", c->nranks, "node", host, "rail", o->rail, "addr", addr,
			 "params", params_json(o), "pid", (int)getpid());
}

/* Ring order: by rail, then node, then rank, so that neighbours share a
 * rail (one leaf) wherever they can (ranks: the ranks' hellos, a JSON array). */
static int by_rail(const void *a, const void *b, void *ranks)
{
	json_t *x = json_array_get(ranks, (size_t)*(const int *)a);
	json_t *y = json_array_get(ranks, (size_t)*(const int *)b);
	json_int_t rx = json_integer_value(json_object_get(x, "rail"));
	json_int_t ry = json_integer_value(json_object_get(y, "rail"));
	int cmp;

	if (rx != ry)
		return rx < ry ? -1 : 1;
	cmp = strcmp(json_string_value(json_object_get(x, "node")),
		     json_string_value(json_object_get(y, "node")));
	if (cmp)
		return cmp;
	return *(const int *)a - *(const int *)b;
}

int coll_rail_of(const struct coll_comm *c, int rank)
{
	return (int)json_integer_value(json_object_get(json_array_get(c->ranks, (size_t)rank), "rail"));
}

/* The ranks this one runs the algorithm with (see coll.h). */
static void set_groups(struct coll_comm *c)
{
	int n = c->nranks, i, rail = coll_rail_of(c, c->rank);

	c->gorder = calloc((size_t)n, sizeof(int));
	c->gpos_of = calloc((size_t)n, sizeof(int));
	c->gn = 0;
	for (i = 0; i < n; i++)
		c->gpos_of[i] = -1;
	for (i = 0; i < n; i++) {
		int r = c->order[i];

		if (c->o->multi_rail && coll_rail_of(c, r) != rail)
			continue;
		c->gpos_of[r] = c->gn;
		c->gorder[c->gn++] = r;
	}
	c->gpos = c->gpos_of[c->rank];
}

static void set_order(struct coll_comm *c, json_t *order)
{
	int i;

	for (i = 0; i < c->nranks; i++) {
		c->order[i] = (int)json_integer_value(json_array_get(order, (size_t)i));
		c->pos_of[c->order[i]] = i;
	}
	c->pos = c->pos_of[c->rank];
}

/* "min_bytes 1048576 here, 2097152 there" for each key that differs */
static void params_diff(json_t *mine, json_t *theirs, char *buf, size_t len)
{
	const char *key;
	json_t *v;
	size_t o = 0;

	buf[0] = 0;
	json_object_foreach(mine, key, v) {
		json_t *w = json_object_get(theirs, key);
		char *a, *b;

		if (w && json_equal(v, w))
			continue;
		a = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		b = w ? json_dumps(w, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
		if (o < len)
			o += (size_t)snprintf(buf + o, len - o, "%s%s %s there, %s here", o ? ", " : "", key,
					      b ? b : "(none)", a ? a : "?");
		free(a);
		free(b);
	}
	if (!buf[0])
		snprintf(buf, len, "its options do not parse the same");
}

/* Root: take every rank's hello, check it, answer with the table. */
static int root_hello(struct coll_comm *c, const char *self_addr)
{
	int n = c->nranks, i, rc;
	json_t **msgs = calloc((size_t)n, sizeof(*msgs)), *mine, *params, *order;
	int *fds = calloc((size_t)n, sizeof(*fds));

	/* hellos arrive on connections in any order; c->fds is by connection
	 * index until each has said its rank */
	rc = root_collect(c, msgs, "hello");
	if (rc)
		goto out;
	mine = hello_json(c, self_addr);
	params = json_object_get(mine, "params");
	c->ranks = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(c->ranks, json_null());
	json_array_set_new(c->ranks, 0, json_pack("{s:i, s:O, s:O, s:O}", "rank", 0, "node",
						  json_object_get(mine, "node"), "rail",
						  json_object_get(mine, "rail"), "addr",
						  json_object_get(mine, "addr")));
	for (i = 0; i < n; i++)
		fds[i] = -1;
	for (i = 1; i < n && !rc; i++) {
		json_t *m = msgs[i];
		json_int_t r = json_integer_value(json_object_get(m, "rank"));
		const char *node = json_string_value(json_object_get(m, "node"));
		const char *proto = json_string_value(json_object_get(m, "proto"));
		const char *addr = json_string_value(json_object_get(m, "addr"));
		char peer[NET_ADDRSTRLEN];

		if (!proto || strcmp(proto, COLL_PROTO) ||
		    json_integer_value(json_object_get(m, "version")) != wire_version()) {
			rc = fs_err_env("connection %d is not a fabscope %s rank of this version "
					"(proto %s, version %lld; this is %d)", i, c->o->test,
					proto ? proto : "?",
					(long long)json_integer_value(json_object_get(m, "version")),
					wire_version());
			break;
		}
		if (json_integer_value(json_object_get(m, "nranks")) != n) {
			rc = fs_err_usage("rank %lld says there are %lld ranks, rank 0 says %d: start "
					  "every rank with the same rank count", (long long)r,
					  (long long)json_integer_value(json_object_get(m, "nranks")), n);
			break;
		}
		if (r < 1 || r >= n || fds[r] >= 0) {
			rc = fs_err_usage("rank %lld joined %s: ranks must be 0..%d, each once",
					  (long long)r, r >= 1 && r < n ? "twice" : "out of range", n - 1);
			break;
		}
		if (!json_equal(json_object_get(m, "params"), params)) {
			char diff[512];

			params_diff(params, json_object_get(m, "params"), diff, sizeof(diff));
			rc = fs_err_usage("rank %lld (%s) runs with other options than rank 0: %s; start "
					  "every rank with the same command line", (long long)r,
					  node ? node : "?", diff);
			break;
		}
		if (!node || !node[0])
			node = "?";
		if (!addr) {	/* the address the root sees it from, else loopback */
			struct net_addr pa;

			if (!net_peer_addr(c->fds[i], &pa) && pa.ss.ss_family != AF_UNIX) {
				net_addr_host(&pa, peer, sizeof(peer));
				addr = peer;
			} else {
				addr = "127.0.0.1";
			}
		}
		fds[r] = c->fds[i];
		json_array_set_new(c->ranks, (size_t)r,
				   json_pack("{s:I, s:s, s:O, s:s}", "rank", r, "node", node, "rail",
					     json_object_get(m, "rail"), "addr", addr));
	}
	json_decref(mine);
	if (rc) {
		coll_abort(c, -rc, "another rank was refused at start-up (see rank 0's message)");
		goto out;
	}
	memcpy(c->fds, fds, (size_t)n * sizeof(*fds));
	{
		int *idx = malloc((size_t)n * sizeof(*idx));

		for (i = 0; i < n; i++)
			idx[i] = i;
		qsort_r(idx, (size_t)n, sizeof(*idx), by_rail, c->ranks);
		order = json_array();
		for (i = 0; i < n; i++)
			json_array_append_new(order, json_integer(idx[i]));
		free(idx);
	}
	set_order(c, order);
	rc = root_bcast(c, json_pack("{s:s, s:o, s:O}", "type", "welcome", "order", order,
				     "ranks", c->ranks));
out:
	for (i = 0; i < n; i++)
		json_decref(msgs[i]);
	free(msgs);
	free(fds);
	return rc;
}

static int rank_hello(struct coll_comm *c, const char *self_addr)
{
	json_t *m, *order, *ranks;
	int rc, i;

	if (send_own(c->ctl, hello_json(c, self_addr), clock_ms_left(wait_end(c))) < 0)
		return ctl_send_failed(c);
	rc = ctl_recv(c, &m, "welcome");
	if (rc)
		return rc;
	order = json_object_get(m, "order");
	ranks = json_object_get(m, "ranks");
	if (json_array_size(order) != (size_t)c->nranks || json_array_size(ranks) != (size_t)c->nranks) {
		json_decref(m);
		return fs_err_peer("rank %d: the root's welcome is malformed", c->rank);
	}
	for (i = 0; i < c->nranks; i++)
		c->pos_of[i] = -1;
	for (i = 0; i < c->nranks; i++) {
		json_int_t r = json_integer_value(json_array_get(order, (size_t)i));

		if (r < 0 || r >= c->nranks || c->pos_of[r] >= 0 ||
		    !json_is_string(json_object_get(json_array_get(ranks, (size_t)i), "addr"))) {
			json_decref(m);
			return fs_err_peer("rank %d: the root's welcome is malformed", c->rank);
		}
		c->pos_of[r] = i;
	}
	c->ranks = json_incref(ranks);
	set_order(c, order);
	json_decref(m);
	return 0;
}

int coll_needs_peer(const struct coll_opts *o, int n, int a, int b)
{
	int p, extra, na, nb, mask;

	if (a == b || n < 2)
		return 0;
	switch (o->algo) {
	case COLL_ALGO_RING:
		return (a + 1) % n == b || (b + 1) % n == a;
	case COLL_ALGO_RHD:
		/* the fold of the ranks beyond a power of two, then partners
		 * at every power-of-two distance among the rest */
		for (p = 1; p * 2 <= n; p *= 2)
			;
		extra = n - p;
		if (a < 2 * extra && b < 2 * extra && a / 2 == b / 2)
			return 1;
		if ((a < 2 * extra && a % 2 == 0) || (b < 2 * extra && b % 2 == 0))
			return 0;
		na = a < 2 * extra ? a / 2 : a - extra;
		nb = b < 2 * extra ? b / 2 : b - extra;
		for (mask = 1; mask < p; mask <<= 1)
			if ((na ^ mask) == nb)
				return 1;
		return 0;
	default:
		return 1;
	}
}

static struct xport_params xparams(const struct coll_comm *c, const char *addr)
{
	const struct coll_opts *o = c->o;
	struct xport_params p = {
		.bind_addr = addr,
		.device = o->device,
		.ib_port = o->ib_port,
		.gid_index = o->gid_index,
		.mtu = o->mtu,
		.tclass = o->tclass,
		.timeout_ms = c->timeout_ms,
		.queue_depth = (uint32_t)o->tx_depth,
		.qp_timeout = o->qp_timeout,
	};

	xport_poll_mode_parse(o->poll, &p.poll_mode);	/* checked at the command line */
	/* verbs sends from its GID's address: only a --bind given here names
	 * one (and must be the device's: transport/verbs.c); the address the
	 * root saw this rank from (or loopback) is no rail */
	if (!o->bind && !strcmp(o->transport, "verbs"))
		p.bind_addr = NULL;
	return p;
}

/* Open the transport on this rank's address, register the buffers. */
static int open_data(struct coll_comm *c)
{
	const char *addr = json_string_value(json_object_get(json_array_get(c->ranks, (size_t)c->rank), "addr"));
	struct xport_params p = xparams(c, addr);
	char err[256];
	int rc;

	rc = xport_open(c->o->transport, &p, &c->x, err, sizeof(err));
	if (rc)
		return fs_err_env("rank %d: %s", c->rank, err);
	c->tokens = !!(c->x->ops->caps & XPORT_CAP_RNR);
	c->cap = (size_t)((c->o->max_bytes + 63) & ~(uint64_t)63);
	c->memlen = 3 * c->cap + COLL_TOKEN_AREA;
	c->mem = xport_alloc(c->x, c->memlen);
	if (!c->mem)
		return fs_err_env("rank %d: cannot allocate %zu bytes of buffers (3 x --max-bytes)",
				  c->rank, c->memlen);
	memset(c->mem, 0, c->memlen);
	c->sendbuf = c->mem;
	c->recvbuf = c->mem + c->cap;
	c->stage = c->mem + 2 * c->cap;
	rc = xport_mr_reg(c->x, c->mem, c->memlen, XPORT_ACCESS_REMOTE, &c->mr);
	if (rc)
		return fs_err_env("rank %d: cannot register %zu bytes of buffers: %s", c->rank,
				  c->memlen, xport_errmsg(c->x));
	return 0;
}

/* What a rank's transport blobs say of its end of the data path, into its
 * entry of the root's rank table (the records' endpoints): a RoCE rank's
 * device and GID, and the GID's IPv4 address as its "addr" - the address the
 * traffic carries, where the control connection's may be 127.0.0.1.  Blobs
 * come from the ranks: only well-formed values are taken. */
static void note_data_end(struct coll_comm *c, int rank, json_t *blobs)
{
	json_t *e = json_array_get(c->ranks, (size_t)rank), *b;
	const char *key, *dev, *gid;
	struct in6_addr a6;
	char v4[INET_ADDRSTRLEN];

	json_object_foreach(blobs, key, b) {
		dev = json_string_value(json_object_get(b, "device"));
		gid = json_string_value(json_object_get(b, "gid"));
		if (!e || !gid || inet_pton(AF_INET6, gid, &a6) != 1)
			continue;
		json_object_set_new(e, "gid", json_string(gid));
		if (dev && strlen(dev) < 64 &&
		    strspn(dev, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") == strlen(dev))
			json_object_set_new(e, "device", json_string(dev));
		if (IN6_IS_ADDR_V4MAPPED(&a6) && inet_ntop(AF_INET, &a6.s6_addr[12], v4, sizeof(v4)))
			json_object_set_new(e, "addr", json_string(v4));
		return;
	}
}

/* Make a connection per needed peer and hand their blobs to the root. */
static int exchange_blobs(struct coll_comm *c, json_t **peer_blobs)
{
	int n = c->nranks, i, rc;
	json_t *mine = json_object(), *m;
	char key[16];

	c->conn = calloc((size_t)n, sizeof(*c->conn));
	for (i = 0; i < n; i++) {
		if (c->gpos_of[i] < 0 || !coll_needs_peer(c->o, c->gn, c->gpos, c->gpos_of[i]))
			continue;
		/* the flows, and one more for the readiness tokens (xfer.c) */
		rc = xport_conn_new(c->x, c->o->flows + c->tokens, c->rank < i ? XPORT_ROLE_ACTIVE : XPORT_ROLE_PASSIVE,
				    &c->conn[i]);
		if (rc) {
			json_decref(mine);
			return fs_err_env("rank %d: connection to rank %d: %s", c->rank, i, xport_errmsg(c->x));
		}
		snprintf(key, sizeof(key), "%d", i);
		json_object_set_new(mine, key, xport_conn_blob(c->conn[i]));
	}
	if (!is_root(c)) {
		if (send_own(c->ctl, json_pack("{s:s, s:o}", "type", "blobs", "blobs", mine), c->timeout_ms))
			return ctl_send_failed(c);
		rc = ctl_recv(c, &m, "blobs");
		if (rc)
			return rc;
		*peer_blobs = json_incref(json_object_get(m, "blobs"));
		json_decref(m);
		return json_is_object(*peer_blobs) ? 0 : fs_err_peer("rank %d: malformed blobs from the root", c->rank);
	}
	{
		json_t **msgs = calloc((size_t)n, sizeof(*msgs));
		int j;

		rc = root_collect(c, msgs, "blobs");
		if (rc) {
			free(msgs);
			json_decref(mine);
			return rc;
		}
		json_decref(msgs[0]);
		msgs[0] = json_pack("{s:o}", "blobs", mine);
		for (i = 0; i < n; i++)
			note_data_end(c, i, json_object_get(msgs[i], "blobs"));
		/* to each rank j: {"i": blob i made for j} */
		for (j = 0; j < n && !rc; j++) {
			json_t *out = json_object();

			for (i = 0; i < n; i++) {
				json_t *b;

				snprintf(key, sizeof(key), "%d", j);
				b = json_object_get(json_object_get(msgs[i], "blobs"), key);
				if (!b)
					continue;
				snprintf(key, sizeof(key), "%d", i);
				json_object_set(out, key, b);
			}
			if (j == 0) {
				*peer_blobs = out;
			} else if (send_own(c->fds[j], json_pack("{s:s, s:o}", "type", "blobs", "blobs", out),
					     c->timeout_ms)) {
				char who[128];

				rc = fs_err_peer("%s: cannot send it the blobs", coll_rank_str(c, j, who, sizeof(who)));
			}
		}
		for (i = 0; i < n; i++)
			json_decref(msgs[i]);
		free(msgs);
		return rc;
	}
}

/* Actives first, then passives (see the top of this file). */
static int connect_peers(struct coll_comm *c, json_t *peer_blobs)
{
	int pass, i, rc;
	char key[16], who[128];

	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < c->nranks; i++) {
			json_t *b;

			if (!c->conn[i] || (c->conn[i]->role == XPORT_ROLE_ACTIVE) != (pass == 0))
				continue;
			snprintf(key, sizeof(key), "%d", i);
			b = json_object_get(peer_blobs, key);
			if (!b)
				return fs_err_peer("rank %d: no connection blob from rank %d", c->rank, i);
			rc = xport_conn_connect(c->conn[i], b);
			if (rc)
				return fs_err_peer("rank %d: cannot connect to %s at %s: %s", c->rank,
						   coll_rank_str(c, i, who, sizeof(who)),
						   json_string_value(json_object_get(json_array_get(c->ranks, (size_t)i), "addr")),
						   xport_errmsg(c->x));
		}
	return 0;
}

int coll_barrier(struct coll_comm *c)
{
	json_t *m;
	int rc;

	if (c->nranks < 2)
		return 0;
	if (!is_root(c)) {
		if (send_own(c->ctl, json_pack("{s:s}", "type", "ready"), c->timeout_ms))
			return ctl_send_failed(c);
		rc = ctl_recv(c, &m, "go");
		json_decref(rc ? NULL : m);
		return rc;
	} else {
		json_t **msgs = calloc((size_t)c->nranks, sizeof(*msgs));
		int i;

		rc = root_collect(c, msgs, "ready");
		for (i = 0; i < c->nranks; i++)
			json_decref(msgs[i]);
		free(msgs);
		return rc ? rc : root_bcast(c, json_pack("{s:s}", "type", "go"));
	}
}

int coll_gather_result(struct coll_comm *c, double time_us, uint64_t wrong, double *times,
		       uint64_t *wrongs)
{
	json_t **msgs;
	int i, rc;

	if (!is_root(c)) {
		if (send_own(c->ctl, json_pack("{s:s, s:f, s:I}", "type", "result", "time_us", time_us,
					       "wrong", (json_int_t)wrong), c->timeout_ms))
			return ctl_send_failed(c);
		return 0;
	}
	msgs = calloc((size_t)c->nranks, sizeof(*msgs));
	times[0] = time_us;
	wrongs[0] = wrong;
	rc = c->nranks > 1 ? root_collect(c, msgs, "result") : 0;
	for (i = 1; i < c->nranks && !rc; i++) {
		times[i] = json_number_value(json_object_get(msgs[i], "time_us"));
		wrongs[i] = (uint64_t)json_integer_value(json_object_get(msgs[i], "wrong"));
	}
	for (i = 0; i < c->nranks; i++)
		json_decref(msgs[i]);
	free(msgs);
	return rc;
}

int coll_comm_open(struct coll_comm *c, struct coll_opts *o, int lfd, const int *child_fds)
{
	const char *self_addr = o->bind;
	char local[NET_ADDRSTRLEN];
	json_t *peer_blobs = NULL;
	int n = o->nranks, i, rc;

	memset(c, 0, sizeof(*c));
	c->o = o;
	c->rank = o->rank;
	c->nranks = n;
	c->ctl = -1;
	c->err_peer = -1;
	c->timeout_ms = units_ms(o->timeout_s);
	/* one --timeout for the whole meeting, not one per step of it */
	c->startup_end = clock_ns() + (uint64_t)c->timeout_ms * 1000000ull;
	c->order = calloc((size_t)n, sizeof(int));
	c->pos_of = calloc((size_t)n, sizeof(int));
	if (is_root(c)) {
		c->fds = malloc((size_t)n * sizeof(int));
		for (i = 0; i < n; i++)
			c->fds[i] = -1;
		for (i = 1; i < n; i++) {
			if (child_fds) {
				c->fds[i] = child_fds[i];
				net_set_nonblock(c->fds[i], 1);
				continue;
			}
			c->fds[i] = net_accept(lfd, clock_ms_left(c->startup_end), NULL);
			if (c->fds[i] < 0 && net_stop) {	/* ^C: rank_main says it */
				c->fds[i] = -1;
				coll_abort(c, FS_EXIT_INTERRUPTED, "rank 0 was interrupted");
				return -FS_EXIT_INTERRUPTED;
			}
			if (c->fds[i] < 0) {
				c->fds[i] = -1;
				rc = fs_err_peer("rank 0: %d of %d ranks joined within %g s; start the others "
						 "with --root pointing here (or raise --timeout)", i, n,
						 c->timeout_ms / 1000.0);
				coll_abort(c, -rc, "not every rank joined in time");
				return rc;
			}
		}
		if (!self_addr) {
			struct net_addr la;

			self_addr = "127.0.0.1";
			if (n > 1 && !net_local_addr(c->fds[1], &la) &&
			    (la.ss.ss_family == AF_INET || la.ss.ss_family == AF_INET6)) {
				net_addr_host(&la, local, sizeof(local));
				self_addr = local;
			}
		}
		rc = n > 1 ? root_hello(c, self_addr) : 0;
		if (n == 1) {	/* alone: its own name, as its hello would give it */
			char host[256];

			node_name(o, host, sizeof(host));
			c->ranks = json_pack("[{s:i, s:s, s:i, s:s}]", "rank", 0, "node", host,
					     "rail", o->rail, "addr", self_addr);
			c->order[0] = 0;
		}
	} else {
		if (o->ctl_fd >= 0) {
			c->ctl = o->ctl_fd;
			net_set_nonblock(c->ctl, 1);
			rc = 0;
		} else {
			rc = dial_root(c);
		}
		if (!rc)
			rc = rank_hello(c, self_addr);
	}
	c->startup_end = 0;
	if (rc)
		return rc;
	set_groups(c);
	rc = open_data(c);
	if (!rc)
		rc = exchange_blobs(c, &peer_blobs);
	if (!rc)
		rc = connect_peers(c, peer_blobs);
	if (!rc && (rc = coll_tokens_init(c)))	/* before the barrier: no token comes earlier */
		rc = fs_err_env("rank %d: %s", c->rank, c->err);
	json_decref(peer_blobs);
	if (rc) {
		char msg[300];

		snprintf(msg, sizeof(msg), "rank %d failed to set up its connections", c->rank);
		coll_abort(c, -rc, msg);
		return rc;
	}
	return coll_barrier(c);
}

void coll_comm_close(struct coll_comm *c)
{
	int i;

	if (c->fds) {
		json_t *bye = json_pack("{s:s}", "type", "bye");

		for (i = 1; i < c->nranks; i++)	/* a rank that is gone needs no bye */
			if (c->fds[i] >= 0)
				wire_send(c->fds[i], bye, 1000);
		json_decref(bye);
		for (i = 1; i < c->nranks; i++)
			if (c->fds[i] >= 0)
				close(c->fds[i]);
		free(c->fds);
	}
	if (c->ctl >= 0) {
		json_t *m;

		/* wait for the root's bye, so a rank never outlives its results
		 * (not from a root that went silent: that was --timeout already) */
		if (!c->ctl_gone && !wire_recv(c->ctl, &m, COLL_MAX_MSG, c->timeout_ms))
			json_decref(m);
		close(c->ctl);
	}
	if (c->conn) {
		for (i = 0; i < c->nranks; i++)
			if (c->conn[i])
				xport_conn_free(c->conn[i]);
		free(c->conn);
	}
	if (c->mr.priv || c->mr.addr)
		xport_mr_dereg(c->x, &c->mr);
	if (c->mem)
		xport_free(c->x, c->mem, c->memlen);
	if (c->x)
		xport_close(c->x);
	json_decref(c->ranks);
	free(c->ready);
	free(c->order);
	free(c->pos_of);
	free(c->gorder);
	free(c->gpos_of);
	memset(c, 0, sizeof(*c));
	c->ctl = -1;
}
