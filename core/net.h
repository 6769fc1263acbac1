/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Socket helpers.  Every call that waits takes a timeout in milliseconds
 * and returns -ETIMEDOUT when it runs out.  Errors are -errno; name
 * resolution errors are -NET_ERESOLVE (message in the caller's buffer).
 */
#ifndef FS_NET_H
#define FS_NET_H

#include <stddef.h>
#include <sys/socket.h>

#define NET_ERESOLVE 100000	/* distinct from any errno */

/*
 * Set from a signal handler (SIGINT/SIGTERM) to ask the process to stop:
 * every wait below then returns -EINTR instead of waiting on.
 */
extern volatile int net_stop;
/* Install handlers for SIGINT and SIGTERM that set net_stop. */
void net_stop_on_signals(void);
#define NET_ADDRSTRLEN 64	/* "[ipv6]:port" */

struct net_addr {
	struct sockaddr_storage ss;
	socklen_t len;
};

/*
 * Resolve host (name or literal; NULL = wildcard) and port (0 allowed).
 * On failure returns -NET_ERESOLVE and writes getaddrinfo's reason to err.
 */
int net_resolve(const char *host, int port, int passive, struct net_addr *a,
		char *err, size_t errlen);
/* "10.0.0.1:18520" or "[fe80::1]:18520"; port omitted when 0. */
void net_addr_str(const struct net_addr *a, char *buf, size_t len);
/* Only the address, no port. */
void net_addr_host(const struct net_addr *a, char *buf, size_t len);
int net_addr_port(const struct net_addr *a);
void net_addr_set_port(struct net_addr *a, int port);

/* Blocking-style connect with a timeout; src (may be NULL) is bound first
 * with SO_REUSEADDR.  Returns a non-blocking fd or -errno. */
int net_connect(const struct net_addr *dst, const struct net_addr *src,
		int timeout_ms);
/* Can a socket here take a's address (any port)?  0 or -errno
 * (-EADDRNOTAVAIL: no interface has it). */
int net_can_bind(const struct net_addr *a);
/* Listening socket (SO_REUSEADDR), non-blocking; fd or -errno. */
int net_listen(const struct net_addr *a, int backlog);
/* Accept with a timeout; non-blocking fd or -errno. */
int net_accept(int lfd, int timeout_ms, struct net_addr *peer);
/* Wait for events (POLLIN/POLLOUT) on fd: >0 ready, -ETIMEDOUT, -errno. */
int net_wait(int fd, short events, int timeout_ms);
/* Read/write exactly len bytes on a non-blocking fd within timeout_ms.
 * -ECONNRESET also stands for an orderly EOF in the middle of a read. */
int net_read_full(int fd, void *buf, size_t len, int timeout_ms);
int net_write_full(int fd, const void *buf, size_t len, int timeout_ms);
int net_set_nonblock(int fd, int on);
int net_local_addr(int fd, struct net_addr *a);
int net_peer_addr(int fd, struct net_addr *a);
/* The local address the route to dst leaves from (a UDP socket connected,
 * nothing sent); 0 or -errno (-ENETUNREACH: no route). */
int net_route_src(const struct net_addr *dst, struct net_addr *src);
/* The line rate in Mb/s of the interface that has the address local (its
 * name in ifname), from sysfs; -1 when unknown (no such interface, a
 * virtual one without a speed: veth, lo, a bond's member ...) */
int net_link_speed(const struct net_addr *local, char *ifname, size_t len);

#endif
