/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <microhttpd.h>
#include <nettle/memops.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/clock.h"
#include "../core/error.h"
#include "../core/net.h"
#include "../core/slurp.h"
#include "expo.h"
#include "http.h"

#define HEALTH_STALE_NS 2000000000ull

static void sha256(const char *s, size_t n, unsigned char *out)
{
	struct sha256_ctx c;

	sha256_init(&c);
	sha256_update(&c, n, (const uint8_t *)s);
	sha256_digest(&c, SHA256_DIGEST_SIZE, out);
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, char *body, size_t len,
			     const char *type, int must_free)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, must_free ? MHD_RESPMEM_MUST_FREE
										       : MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r) {
		if (must_free)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", type);
	if (status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(r, "WWW-Authenticate", "Bearer realm=\"fabscope monitor\"");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, "Allow", "GET, HEAD");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result text(struct MHD_Connection *conn, unsigned status, const char *s)
{
	return reply(conn, status, (char *)s, strlen(s), "text/plain; charset=utf-8", 0);
}

static int authorized(struct mon_http *h, struct MHD_Connection *conn)
{
	const char *a = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	unsigned char got[SHA256_DIGEST_SIZE];

	if (!h->has_token)
		return 1;
	if (!a || strncasecmp(a, "Bearer ", 7))
		return 0;
	a += 7;
	sha256(a, strlen(a), got);
	return memeql_sec(got, h->token_hash, sizeof(got));
}

static enum MHD_Result metrics(struct mon_http *h, struct MHD_Connection *conn)
{
	struct mon_buf b = { 0 };

	pthread_mutex_lock(&h->e->lock);
	mon_expo_probes(&b, h->e);
	pthread_mutex_unlock(&h->e->lock);
	pthread_mutex_lock(&h->nic_lock);
	mon_nics_expo(h->nics, &b);
	pthread_mutex_unlock(&h->nic_lock);
	if (b.failed || !b.p) {
		mon_buf_release(&b);
		return text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory rendering the metrics\n");
	}
	return reply(conn, MHD_HTTP_OK, b.p, b.len, "text/plain; version=0.0.4; charset=utf-8", 1);
}

static enum MHD_Result healthz(struct mon_http *h, struct MHD_Connection *conn)
{
	uint64_t now = clock_ns(), last;
	int npeers;
	char msg[128];

	pthread_mutex_lock(&h->e->lock);
	last = h->e->last_tick_ns;
	npeers = h->e->peers.n;
	pthread_mutex_unlock(&h->e->lock);
	if (now - last > HEALTH_STALE_NS) {
		snprintf(msg, sizeof(msg), "probing stalled: the last turn was %.1f s ago\n", (double)(now - last) / 1e9);
		return text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, msg);
	}
	if (!npeers)
		return text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "no peers: the peers file gives this node none to probe\n");
	return text(conn, MHD_HTTP_OK, "ok\n");
}

static int has_body(struct MHD_Connection *conn)
{
	const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);

	return (cl && strcmp(cl, "0")) ||
	       MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
			      const char *version, const char *upload, size_t *upload_size, void **state)
{
	static int seen;
	struct mon_http *h = cls;

	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
	if (has_body(conn) || *upload_size)	/* refused on its headers, before a byte of it is read */
		return text(conn, MHD_HTTP_CONTENT_TOO_LARGE, "no body is read here\n");
	if (!*state) {		/* the headers: answer at the next call */
		*state = &seen;
		return MHD_YES;
	}
	if (!strcmp(url, "/healthz"))
		return healthz(h, conn);
	if (strcmp(url, "/metrics"))
		return text(conn, MHD_HTTP_NOT_FOUND, "not found: /metrics or /healthz\n");
	if (!authorized(h, conn))
		return text(conn, MHD_HTTP_UNAUTHORIZED, "a bearer token is wanted: Authorization: Bearer TOKEN\n");
	return metrics(h, conn);
}

/* HOST:PORT, :PORT, [V6]:PORT into a */
static int parse_listen(const char *s, struct net_addr *a)
{
	const char *colon = strrchr(s, ':');
	char host[256], err[128], *end;
	long port;

	if (!colon || colon - s >= (long)sizeof(host))
		return fs_err_usage("--listen '%s': give HOST:PORT, :PORT or [IPV6]:PORT", s);
	port = strtol(colon + 1, &end, 10);
	if (!colon[1] || *end || port < 0 || port > 65535)
		return fs_err_usage("--listen '%s': the port must be 0-65535", s);
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = 0;
	if (host[0] == '[' && colon - s >= 2 && host[colon - s - 1] == ']') {
		memmove(host, host + 1, (size_t)(colon - s - 2));
		host[colon - s - 2] = 0;
	}
	if (net_resolve(host[0] ? host : NULL, (int)port, 1, a, err, sizeof(err)))
		return fs_err_usage("--listen '%s': %s", s, err);
	return 0;
}

int mon_http_check_listen(const char *listen)
{
	struct net_addr a;

	return parse_listen(listen, &a);
}

static int load_tls(struct mon_http *h, const struct mon_http_opts *o)
{
	if (!o->tls_cert != !o->tls_key)
		return fs_err_usage("--tls-cert and --tls-key go together: give both (PEM files) or neither");
	if (!o->tls_cert)
		return 0;
	if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
		return fs_err_env("this libmicrohttpd has no TLS: serve plain HTTP, or install one built with GnuTLS");
	if (!(h->cert = fs_slurp(o->tls_cert, 1 << 20)))
		return fs_err_read("TLS certificate", o->tls_cert, errno);
	if (!(h->key = fs_slurp(o->tls_key, 1 << 20)))
		return fs_err_read("TLS key", o->tls_key, errno);
	return 0;
}

int mon_http_start(struct mon_http *h, const struct mon_http_opts *o, struct mon_engine *e, struct mon_nics *nics)
{
	struct net_addr a;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL;
	const union MHD_DaemonInfo *di;
	int rc;

	memset(h, 0, sizeof(*h));
	h->e = e;
	h->nics = nics;
	pthread_mutex_init(&h->nic_lock, NULL);
	if ((rc = parse_listen(o->listen, &a)) || (rc = load_tls(h, o)))
		goto fail;
	if (o->token) {
		sha256(o->token, strlen(o->token), h->token_hash);
		h->has_token = 1;
	}
	if (a.ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	if (h->cert)
		flags |= MHD_USE_TLS;
	h->d = MHD_start_daemon(flags, 0, NULL, NULL, handle, h,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&a.ss,
				MHD_OPTION_CONNECTION_LIMIT, 64u, MHD_OPTION_PER_IP_CONNECTION_LIMIT, 8u,
				MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768,
				h->cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, h->cert,
				MHD_OPTION_HTTPS_MEM_KEY, h->key, MHD_OPTION_END);
	if (!h->d) {
		rc = fs_err_env("cannot serve HTTP on %s: %s (a port taken, an address not of this host, or a bad "
				"certificate or key)", o->listen, errno ? strerror(errno) : "libmicrohttpd refused");
		goto fail;
	}
	di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
	h->port = di ? di->port : 0;
	return 0;
fail:
	mon_http_stop(h);
	return rc;
}

void mon_http_stop(struct mon_http *h)
{
	if (h->d)
		MHD_stop_daemon(h->d);
	h->d = NULL;
	free(h->cert);
	free(h->key);
	h->cert = h->key = NULL;
	pthread_mutex_destroy(&h->nic_lock);
}
