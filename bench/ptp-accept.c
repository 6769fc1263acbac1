/* SPDX-License-Identifier: BSD-2-Clause */
/* The connections a server has accepted, each through its handshake at once (see ptp.h). */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/auth.h"
#include "../core/clock.h"
#include "../core/error.h"
#include "../core/version.h"
#include "../core/wire.h"
#include "ptp.h"

enum { PEND_HELLO, PEND_AUTH, PEND_READY };

struct pend {
	int fd;
	struct net_addr peer;
	char name[NET_ADDRSTRLEN];
	uint64_t t0;
	uint64_t order;		/* when it became ready: served in that order */
	int state;
	json_t *hello;		/* its hello, once read */
	char cn[AUTH_NONCE_HEX + 1], sn[AUTH_NONCE_HEX + 1];
};

static char hello_buf[PTP_HELLO_MAX];	/* the message being read, one at a time */

int ptp_queue_init(struct ptp_queue *q, const struct ptp_opts *o, int lfd)
{
	memset(q, 0, sizeof(*q));
	q->o = o;
	q->lfd = lfd;
	q->p = calloc(PTP_PENDING_MAX, sizeof(*q->p));
	q->pfd = calloc(PTP_PENDING_MAX + 1, sizeof(*q->pfd));
	if (!q->p || !q->pfd) {
		ptp_queue_release(q);
		return fs_err_env("out of memory");
	}
	return 0;
}

static void drop(struct ptp_queue *q, int i)
{
	int k;

	/* what it sent and we did not read is dropped first: closed with it unread, the
	 * connection would be reset, and the peer not see a plain end */
	for (k = 0; k < 16 && recv(q->p[i].fd, NULL, 65536, MSG_DONTWAIT | MSG_TRUNC) > 0; k++)
		;
	close(q->p[i].fd);
	json_decref(q->p[i].hello);
	memmove(q->p + i, q->p + i + 1, (size_t)(q->n - i - 1) * sizeof(*q->p));
	q->n--;
}

void ptp_queue_release(struct ptp_queue *q)
{
	while (q->p && q->n)
		drop(q, q->n - 1);
	free(q->p);
	free(q->pfd);
	memset(q, 0, sizeof(*q));
}

void ptp_queue_add(struct ptp_queue *q, int fd, const struct net_addr *peer)
{
	int i, low = 4;

	if (q->n == PTP_PENDING_MAX) {	/* the oldest that has not proved itself goes */
		for (i = 0; i < q->n && q->p[i].state == PEND_READY; i++)
			;
		if (i == q->n) {	/* (all proved: the new one waits in no queue) */
			close(fd);
			return;
		}
		drop(q, i);
	}
	/* (poll wakes it up once a header is whole: wire_read_whole) */
	setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &low, sizeof(low));
	q->p[q->n] = (struct pend){ .fd = fd, .peer = *peer, .t0 = clock_ns(), .state = PEND_HELLO };
	net_addr_str(peer, q->p[q->n].name, sizeof(q->p[q->n].name));
	q->n++;
}

/* the client is refused (code, why told it; line said here): closed */
static void refuse(struct ptp_queue *q, int i, int code, const char *why, const char *line)
{
	ptp_send_error(q->p[i].fd, code, why);
	q->failed = fs_err(code, "client %s: %s", q->p[i].name, line);
	drop(q, i);
}

/* its hello: checked, then the token's challenge sent (or, with none, ready) */
static void on_hello(struct ptp_queue *q, int i, json_t *m)
{
	struct pend *p = &q->p[i];
	const char *proto, *test, *cn;
	json_int_t version;
	json_t *params;
	char why[256], mac[AUTH_NONCE_HEX + 1];
	int r;

	if (json_unpack(m, "{s:s, s:I, s:s, s:o}", "proto", &proto, "version", &version, "test", &test,
			"params", &params) || strcmp(proto, PTP_PROTO)) {
		json_decref(m);
		refuse(q, i, FS_EXIT_PEER, "malformed hello", "malformed hello; is it a fabscope client?");
		return;
	}
	if (version != wire_version()) {
		snprintf(why, sizeof(why), "protocol version mismatch: server speaks %d, client %lld; run the same "
			 "fabscope version on both ends", wire_version(), (long long)version);
		json_decref(m);
		refuse(q, i, FS_EXIT_ENV, why, why);
		return;
	}
	cn = json_string_value(json_object_get(m, "auth"));
	p->hello = m;
	if (!q->o->token && !cn) {
		p->state = PEND_READY;
		p->order = ++q->seq;
		return;
	}
	if (!q->o->token) {
		refuse(q, i, FS_EXIT_ENV, "this server has no token: drop --token-file, or start the server with one",
		       "refused: it wants a token and this server has none (--token-file)");
		return;
	}
	if (!cn) {
		refuse(q, i, FS_EXIT_ENV, "this server serves only clients that know its token: give --token-file",
		       "refused: it has no token (--token-file)");
		return;
	}
	if (!auth_nonce_ok(cn)) {
		refuse(q, i, FS_EXIT_PEER, "malformed hello", "malformed hello (its nonce); is it a fabscope client?");
		return;
	}
	snprintf(p->cn, sizeof(p->cn), "%s", cn);
	if ((r = auth_nonce(p->sn))) {
		fs_err_env("cannot get random bytes for a nonce: %s", strerror(-r));
		drop(q, i);
		return;
	}
	auth_mac(q->o->token, "ptp-server", p->cn, p->sn, mac);
	m = json_pack("{s:s, s:s, s:s}", "type", "challenge", "nonce", p->sn, "mac", mac);
	if (wire_send(p->fd, m, 1000)) {	/* (a few bytes to a fresh socket: at once) */
		json_decref(m);
		q->failed = fs_err_peer("client %s went away (control connection closed)", p->name);
		drop(q, i);
		return;
	}
	json_decref(m);
	p->state = PEND_AUTH;
}

/* its answer to the challenge: the token proved, or refused */
static void on_auth(struct ptp_queue *q, int i, json_t *m)
{
	struct pend *p = &q->p[i];
	const char *type = json_string_value(json_object_get(m, "type"));
	char line[128];
	int ok = type && !strcmp(type, "auth") &&
		 auth_mac_ok(q->o->token, "ptp-client", p->sn, p->cn, json_string_value(json_object_get(m, "mac")));

	if (type && !strcmp(type, "error")) {	/* the client refused us (our proof of the token) */
		const char *why = json_string_value(json_object_get(m, "message"));
		int code = (int)json_integer_value(json_object_get(m, "exit"));

		q->failed = fs_err(code == FS_EXIT_ENV ? code : FS_EXIT_PEER, "client %s refused: %s", p->name,
				   why ? why : "no reason given");
		json_decref(m);
		drop(q, i);
		return;
	}
	if (!ok && (!type || strcmp(type, "auth"))) {
		snprintf(line, sizeof(line), "sent '%.40s' where 'auth' was due: protocol error", type ? type : "?");
		json_decref(m);
		refuse(q, i, FS_EXIT_PEER, "protocol error: 'auth' was due", line);
		return;
	}
	json_decref(m);
	if (!ok) {
		refuse(q, i, FS_EXIT_ENV, "wrong token: this server has another secret", "refused: it does not know the token");
		return;
	}
	p->state = PEND_READY;
	p->order = ++q->seq;
}

/* what connection i has: a message taken (1), nothing yet (0), or it is gone (-1, said) */
static int step(struct ptp_queue *q, int i)
{
	char what[128] = "";
	json_t *m;
	int r = wire_read_whole(q->p[i].fd, hello_buf, sizeof(hello_buf), &m, what, sizeof(what));

	if (!r)
		return 0;
	if (r < 0) {
		if (r == -ECONNRESET)
			q->failed = fs_err_peer("client %s went away (control connection closed)", q->p[i].name);
		else if (q->p[i].state == PEND_HELLO && (r == -EMSGSIZE || r == -EPROTO))
			q->failed = fs_err_peer("client %s sent something that is not a fabscope control message (%s); "
						"not a fabscope client? closed its connection", q->p[i].name, what);
		else
			q->failed = fs_err_peer("control connection to client %s: %s", q->p[i].name, wire_strerror(r));
		drop(q, i);
		return -1;
	}
	if (q->p[i].state == PEND_HELLO)
		on_hello(q, i, m);
	else
		on_auth(q, i, m);
	return 1;
}

/* the ones that took too long (the whole handshake has PTP_HELLO_MS) */
static void expire(struct ptp_queue *q)
{
	uint64_t now = clock_ns();
	int i;

	for (i = 0; i < q->n;)
		if (q->p[i].state != PEND_READY && now - q->p[i].t0 > PTP_HELLO_MS * 1000000ull) {
			fs_log(1, "client %s: %s within %d ms: closed", q->p[i].name,
			       q->p[i].state == PEND_HELLO ? "no hello" : "no answer to the token's challenge", PTP_HELLO_MS);
			drop(q, i);
		} else {
			i++;
		}
}

/* the first to become ready: taken out of the queue */
static int take_ready(struct ptp_queue *q, struct net_addr *peer, json_t **hello)
{
	int i, best = -1, fd;

	for (i = 0; i < q->n; i++)
		if (q->p[i].state == PEND_READY && (best < 0 || q->p[i].order < q->p[best].order))
			best = i;
	if (best < 0)
		return -1;
	fd = q->p[best].fd;
	*peer = q->p[best].peer;
	*hello = q->p[best].hello;
	q->p[best].hello = NULL;
	q->p[best].fd = -1;
	memmove(q->p + best, q->p + best + 1, (size_t)(q->n - best - 1) * sizeof(*q->p));
	q->n--;
	{
		int one = 1;	/* (proved: read as it comes) */

		setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof(one));
	}
	return fd;
}

int ptp_queue_next(struct ptp_queue *q, struct net_addr *peer, json_t **hello)
{
	int i, fd, n;

	*hello = NULL;
	expire(q);
	if ((fd = take_ready(q, peer, hello)) >= 0)
		return fd;
	q->pfd[0] = (struct pollfd){ .fd = q->lfd, .events = POLLIN };
	for (i = 0; i < q->n; i++)
		q->pfd[1 + i] = (struct pollfd){ .fd = q->p[i].fd, .events = POLLIN };
	n = q->n;
	if (poll(q->pfd, (nfds_t)(1 + n), 200) < 0)
		return errno == EINTR ? -EINTR : -errno;
	for (i = n - 1; i >= 0; i--)	/* (from the end: a connection dropped moves only those after it) */
		if (q->pfd[1 + i].revents)
			step(q, i);
	if (q->pfd[0].revents) {
		struct net_addr p;

		while ((fd = net_accept(q->lfd, 0, &p)) >= 0)
			ptp_queue_add(q, fd, &p);
	}
	if ((fd = take_ready(q, peer, hello)) >= 0)
		return fd;
	return -ETIMEDOUT;
}
