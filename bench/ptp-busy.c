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


/* Wait up to ms for the stop pipe (or for fd, when fd >= 0, to be readable):
 * 1 when stopping, 0 otherwise. */
static int busy_wait(struct ptp_busy *b, int fd, int ms)
{
	struct pollfd p[2] = { { .fd = b->stop[0], .events = POLLIN },
			       { .fd = fd, .events = POLLIN } };

	if (poll(p, fd >= 0 ? 2 : 1, ms) < 0)
		p[0].revents = 0;
	return p[0].revents || __atomic_load_n(&b->stopping, __ATOMIC_SEQ_CST);
}

static void busy_reply(struct ptp_busy *b, int fd, const struct net_addr *peer)
{
	uint64_t deadline = clock_ns() + 1000000000ull;
	char name[NET_ADDRSTRLEN], why[512], since[32];
	struct tm tm;
	char junk[4096];
	ssize_t n;

	net_addr_str(peer, name, sizeof(name));
	strftime(since, sizeof(since), "%H:%M:%S", localtime_r(&b->since, &tm));
	snprintf(why, sizeof(why), "busy: serving %s since %s (%lld s ago), %s; try again when it is done",
		 b->client, since, (long long)(time(NULL) - b->since), b->test);
	/* what the client said (its hello) is read: a socket closed with
	 * unread bytes sends a reset, which could overtake the reply */
	while (recv(fd, junk, sizeof(junk), MSG_DONTWAIT) > 0)
		;
	ptp_send_error(fd, FS_EXIT_PEER, why);
	shutdown(fd, SHUT_WR);
	/* until the client has read it and closed, for a second at most */
	while (clock_ms_left(deadline) && !busy_wait(b, fd, clock_ms_left(deadline))) {
		n = recv(fd, junk, sizeof(junk), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			break;
	}
	close(fd);
	fs_info("client %s: refused: busy serving %s", name, b->client);
}

static void *busy_thread(void *arg)
{
	struct ptp_busy *b = arg;

	while (!busy_wait(b, b->lfd, 1000)) {
		struct net_addr peer;
		int fd = net_accept(b->lfd, 0, &peer);

		if (fd < 0)
			continue;
		if (b->grace_ms && busy_wait(b, -1, b->grace_ms)) {
			b->next_fd = fd;	/* the session is over: serve this one */
			b->next_peer = peer;
			break;
		}
		busy_reply(b, fd, &peer);
	}
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

/* Stop answering; a connection handed over is in b->next_fd. */
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
