/* SPDX-License-Identifier: BSD-2-Clause */
/* The server's answer to clients that come while it serves another (see ptp.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../core/clock.h"
#include "../core/error.h"
#include "../core/net.h"
#include "../core/testhook.h"
#include "ptp.h"

/* ---- while a session runs: other clients hear that the server is busy ---- */

/*
 * The server serves one client at a time.  While a session runs, a thread
 * answers other clients' connections with the protocol's error reply
 * ({type: error, message: "busy: serving ...", exit: 4}), which every
 * client, older ones too, prints as "server ... refused: busy: ..." and
 * exits 4 with, instead of waiting in the listen queue until its --timeout.
 * A connection is held BUSY_GRACE_MS before the reply: the next client of a
 * row that connects while the session winds down is handed to the main loop
 * if the session ends meanwhile (not with --once: that server exits).
 */
#define BUSY_GRACE_MS 500


/*
 * The thread's connections: HELD ones wait out the grace (a client that
 * comes as the session ends is served, not refused); then they hear "busy"
 * and are CLOSING until the client closes (its reply read), a second at
 * most.  All are polled at once, so that no number of idle or slow
 * connections keeps the next one from its answer.
 */
enum { BC_HELD, BC_CLOSING };
struct bconn {
	int fd, state;
	uint64_t until;		/* the end of its grace, or of its closing */
	struct net_addr peer;
};

static void busy_reply(struct ptp_busy *b, struct bconn *k)
{
	char name[NET_ADDRSTRLEN], why[512], since[32], junk[4096];
	struct tm tm;

	net_addr_str(&k->peer, name, sizeof(name));
	strftime(since, sizeof(since), "%H:%M:%S", localtime_r(&b->since, &tm));
	snprintf(why, sizeof(why), "busy: serving %s since %s (%lld s ago), %s; try again when it is done",
		 b->client, since, (long long)(time(NULL) - b->since), b->test);
	/* what the client said (its hello) is read: a socket closed with
	 * unread bytes sends a reset, which could overtake the reply */
	while (recv(k->fd, junk, sizeof(junk), MSG_DONTWAIT) > 0)
		;
	ptp_send_error(k->fd, FS_EXIT_PEER, why);
	shutdown(k->fd, SHUT_WR);
	k->state = BC_CLOSING;
	k->until = clock_ns() + 1000000000ull;
	fs_info("client %s: refused: busy serving %s", name, b->client);
}

static void bconn_drop(struct bconn *v, int *n, int i)
{
	close(v[i].fd);
	v[i] = v[--*n];
}

static void *busy_thread(void *arg)
{
	struct ptp_busy *b = arg;
	struct bconn *v = calloc(PTP_PENDING_MAX, sizeof(*v));
	struct pollfd *p = calloc(PTP_PENDING_MAX + 2, sizeof(*p));
	int n = 0, i;

	if (!v || !p) {
		free(v);
		free(p);
		return NULL;
	}
	for (;;) {
		uint64_t now = clock_ns();
		int np = 0;

		for (i = 0; i < n;) {	/* what is due */
			if (now < v[i].until) {
				i++;
			} else if (v[i].state == BC_HELD) {
				busy_reply(b, &v[i]);
				i++;
			} else {
				bconn_drop(v, &n, i);
			}
		}
		p[np++] = (struct pollfd){ .fd = b->stop[0], .events = POLLIN };
		p[np++] = (struct pollfd){ .fd = b->lfd, .events = POLLIN };
		for (i = 0; i < n; i++)
			p[np++] = (struct pollfd){ .fd = v[i].state == BC_CLOSING ? v[i].fd : -1, .events = POLLIN };
		if (poll(p, (nfds_t)np, 50) < 0 && errno != EINTR)
			break;
		if (p[0].revents || __atomic_load_n(&b->stopping, __ATOMIC_SEQ_CST))
			break;
		for (i = n - 1; i >= 0; i--)	/* a closing client that has read its reply */
			if (p[2 + i].revents) {
				char junk[4096];
				ssize_t r = recv(v[i].fd, junk, sizeof(junk), MSG_DONTWAIT);

				if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
					bconn_drop(v, &n, i);
			}
		if (p[1].revents)
			for (;;) {	/* every connection that came */
				struct net_addr peer;
				int fd = net_accept(b->lfd, 0, &peer);

				if (fd < 0)
					break;
				if (n == PTP_PENDING_MAX)	/* the oldest goes */
					bconn_drop(v, &n, 0);
				v[n++] = (struct bconn){ .fd = fd, .state = BC_HELD, .peer = peer,
							 .until = clock_ns() + (uint64_t)b->grace_ms * 1000000ull };
				if (!b->grace_ms)
					busy_reply(b, &v[n - 1]);
			}
	}
	/* the session is over: what waits out its grace is the main loop's to serve */
	for (i = 0; i < n; i++)
		if (v[i].state == BC_HELD && b->grace_ms && b->nhanded < PTP_PENDING_MAX) {
			b->handed[b->nhanded] = v[i].fd;
			b->handed_peer[b->nhanded++] = v[i].peer;
		} else {
			close(v[i].fd);
		}
	free(v);
	free(p);
	return NULL;
}

/* Start answering other clients; without a thread they queue, as before. */
void ptp_busy_start(struct ptp_busy *b, const char *client, const char *node,
		       const struct ptp_opts *so)
{
	const char *grace = fs_test_env("FABSCOPE_TEST_BUSY_GRACE_MS");
	sigset_t all, old;

	b->grace_ms = b->once ? 0 : grace && *grace ? atoi(grace) : BUSY_GRACE_MS;
	snprintf(b->client, sizeof(b->client), "%s (%s)", client, node ? node : "?");
	snprintf(b->test, sizeof(b->test), "a %s test, %s %s", so->test, so->transport, so->op);
	b->since = time(NULL);
	if (pipe2(b->stop, O_CLOEXEC))
		return;
	/* signals (^C, SIGTERM) are the main thread's: its waits must see EINTR */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	b->running = !pthread_create(&b->thread, NULL, busy_thread, b);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!b->running) {
		close(b->stop[0]);
		close(b->stop[1]);
	}
}

/* Stop answering; connections handed over are in b->handed. */
void ptp_busy_stop(struct ptp_busy *b)
{
	if (!b->running)
		return;
	__atomic_store_n(&b->stopping, 1, __ATOMIC_SEQ_CST);
	if (write(b->stop[1], "", 1) != 1)	/* (cannot fail: our own empty pipe) */
		fs_log(2, "busy-reply thread: %s; it stops within a second", strerror(errno));
	pthread_join(b->thread, NULL);
	close(b->stop[0]);
	close(b->stop[1]);
	b->running = 0;
}
