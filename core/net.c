/* SPDX-License-Identifier: BSD-2-Clause */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "net.h"

volatile int net_stop;

static void on_stop_signal(int sig)
{
	(void)sig;
	net_stop = 1;
}

void net_stop_on_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };

	sigaction(SIGINT, &sa, NULL);	/* no SA_RESTART: waits see EINTR */
	sigaction(SIGTERM, &sa, NULL);
}

int net_resolve(const char *host, int port, int passive, struct net_addr *a,
		char *err, size_t errlen)
{
	struct addrinfo hints, *res = NULL;
	char pbuf[16];
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = passive ? AI_PASSIVE : 0;
	if (host && !*host)
		host = NULL;
	snprintf(pbuf, sizeof(pbuf), "%d", port);
	rc = getaddrinfo(host, pbuf, &hints, &res);
	if (rc || !res) {
		if (err)
			snprintf(err, errlen, "%s", rc == EAI_SYSTEM ?
				 strerror(errno) : gai_strerror(rc));
		return -NET_ERESOLVE;
	}
	memcpy(&a->ss, res->ai_addr, res->ai_addrlen);
	a->len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

void net_addr_host(const struct net_addr *a, char *buf, size_t len)
{
	const void *src;

	if (a->ss.ss_family == AF_INET6)
		src = &((const struct sockaddr_in6 *)&a->ss)->sin6_addr;
	else
		src = &((const struct sockaddr_in *)&a->ss)->sin_addr;
	if (!inet_ntop(a->ss.ss_family, src, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

int net_addr_port(const struct net_addr *a)
{
	if (a->ss.ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)&a->ss)->sin6_port);
	return ntohs(((const struct sockaddr_in *)&a->ss)->sin_port);
}

void net_addr_set_port(struct net_addr *a, int port)
{
	if (a->ss.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&a->ss)->sin6_port = htons((uint16_t)port);
	else
		((struct sockaddr_in *)&a->ss)->sin_port = htons((uint16_t)port);
}

void net_addr_str(const struct net_addr *a, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN];
	int port = net_addr_port(a);

	net_addr_host(a, host, sizeof(host));
	if (!port)
		snprintf(buf, len, "%s", host);
	else if (a->ss.ss_family == AF_INET6)
		snprintf(buf, len, "[%s]:%d", host, port);
	else
		snprintf(buf, len, "%s:%d", host, port);
}

int net_set_nonblock(int fd, int on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -errno;
	fl = on ? (fl | O_NONBLOCK) : (fl & ~O_NONBLOCK);
	return fcntl(fd, F_SETFL, fl) < 0 ? -errno : 0;
}

int net_wait(int fd, short events, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	uint64_t deadline = clock_ns() + (uint64_t)timeout_ms * 1000000ull;

	for (;;) {
		int rc = poll(&p, 1, clock_ms_left(deadline));

		if (rc > 0)
			return rc;
		if (rc == 0)
			return -ETIMEDOUT;
		if (errno != EINTR || net_stop)
			return -errno;
	}
}

int net_connect(const struct net_addr *dst, const struct net_addr *src,
		int timeout_ms)
{
	int fd, one = 1, err = 0, rc;
	socklen_t elen = sizeof(err);

	fd = socket(dst->ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (src) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (const struct sockaddr *)&src->ss, src->len) < 0) {
			rc = -errno;
			close(fd);
			return rc;
		}
	}
	if (connect(fd, (const struct sockaddr *)&dst->ss, dst->len) < 0 &&
	    errno != EINPROGRESS) {
		rc = -errno;
		close(fd);
		return rc;
	}
	rc = net_wait(fd, POLLOUT, timeout_ms);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0)
		err = errno;
	if (err) {
		close(fd);
		return -err;
	}
	return fd;
}

int net_can_bind(const struct net_addr *a)
{
	struct net_addr any = *a;
	int fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), rc = 0;

	if (fd < 0)
		return -errno;
	net_addr_set_port(&any, 0);
	if (bind(fd, (const struct sockaddr *)&any.ss, any.len) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

int net_listen(const struct net_addr *a, int backlog)
{
	int fd, one = 1, rc;

	fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)&a->ss, a->len) < 0 ||
	    listen(fd, backlog) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	return fd;
}

int net_accept(int lfd, int timeout_ms, struct net_addr *peer)
{
	struct net_addr tmp;
	int fd, one = 1, rc;

	if (!peer)
		peer = &tmp;
	for (;;) {
		peer->len = sizeof(peer->ss);
		fd = accept4(lfd, (struct sockaddr *)&peer->ss, &peer->len,
			     SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd >= 0)
			break;
		if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
			return -errno;
		rc = net_wait(lfd, POLLIN, timeout_ms);
		if (rc < 0)
			return rc;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

int net_read_full(int fd, void *buf, size_t len, int timeout_ms)
{
	uint64_t deadline = clock_ns() + (uint64_t)timeout_ms * 1000000ull;
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n == 0)
			return -ECONNRESET;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return -errno;
		n = net_wait(fd, POLLIN, clock_ms_left(deadline));
		if (n < 0)
			return (int)n;
	}
	return 0;
}

int net_write_full(int fd, const void *buf, size_t len, int timeout_ms)
{
	uint64_t deadline = clock_ns() + (uint64_t)timeout_ms * 1000000ull;
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == ENOTSOCK)	/* a pipe (an agent's --stdio); SIGPIPE is ignored there */
			n = write(fd, p, len);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN)
			return -errno;
		n = net_wait(fd, POLLOUT, clock_ms_left(deadline));
		if (n < 0)
			return (int)n;
	}
	return 0;
}

int net_local_addr(int fd, struct net_addr *a)
{
	a->len = sizeof(a->ss);
	return getsockname(fd, (struct sockaddr *)&a->ss, &a->len) < 0 ? -errno : 0;
}

int net_peer_addr(int fd, struct net_addr *a)
{
	a->len = sizeof(a->ss);
	return getpeername(fd, (struct sockaddr *)&a->ss, &a->len) < 0 ? -errno : 0;
}

int net_route_src(const struct net_addr *dst, struct net_addr *src)
{
	int fd = socket(dst->ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc;

	if (fd < 0)
		return -errno;
	rc = connect(fd, (const struct sockaddr *)&dst->ss, dst->len) < 0 ? -errno :
	     net_local_addr(fd, src);
	close(fd);
	return rc;
}

int net_link_speed(const struct net_addr *local, char *ifname, size_t len)
{
	struct ifaddrs *ifs, *i;
	int mbps = -1;

	if (ifname && len)
		ifname[0] = 0;
	if (getifaddrs(&ifs))
		return -1;
	for (i = ifs; i; i = i->ifa_next) {
		const struct sockaddr *a = i->ifa_addr;
		int same;
		char path[128], buf[32];
		FILE *f;

		if (!a || a->sa_family != local->ss.ss_family)
			continue;
		if (a->sa_family == AF_INET)
			same = ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
			       ((const struct sockaddr_in *)&local->ss)->sin_addr.s_addr;
		else if (a->sa_family == AF_INET6)
			same = !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
				       &((const struct sockaddr_in6 *)&local->ss)->sin6_addr, 16);
		else
			continue;
		if (!same || strchr(i->ifa_name, '/') || strlen(i->ifa_name) > 64)
			continue;
		if (ifname)
			snprintf(ifname, len, "%s", i->ifa_name);
		snprintf(path, sizeof(path), "/sys/class/net/%s/speed", i->ifa_name);
		f = fopen(path, "re");	/* (unknown speed: the read fails, EINVAL) */
		if (f && fgets(buf, sizeof(buf), f) && atoi(buf) > 0)
			mbps = atoi(buf);
		if (f)
			fclose(f);
		break;	/* the interface with the address: its speed, or none */
	}
	freeifaddrs(ifs);
	return mbps;
}
