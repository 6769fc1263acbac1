/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The monitor's HTTP side, served by libmicrohttpd (its own thread):
 *
 *   GET /metrics   the Prometheus text exposition (monitor/expo.h, monitor/nic.h)
 *   GET /healthz   200 "ok" while probing runs (the engine turned within the
 *                  last 2 s and has a peer), else 503 and why, in one line
 *
 * Anything else is 404; a method other than GET or HEAD is 405, and a
 * request with a body is refused before the body is read.  With a token,
 * /metrics wants "Authorization: Bearer TOKEN" (401 otherwise, with
 * WWW-Authenticate): the header is taken through the library and compared
 * with the token in constant time (SHA-256 of both, nettle's memeql_sec),
 * so neither its bytes nor its length leak through timing; /healthz stays
 * open, as liveness probes call it without credentials.  With a
 * certificate and key, the library serves HTTPS (GnuTLS).  Bounds: 64
 * connections (8 from one address), 10 s idle each, 32 KiB of request
 * header per connection (the library's pool), nothing read of a body.
 */
#ifndef FS_MON_HTTP_H
#define FS_MON_HTTP_H

#include <pthread.h>

#include "nic.h"
#include "probe.h"

struct MHD_Daemon;

struct mon_http_opts {
	const char *listen;		/* HOST:PORT, :PORT, [V6]:PORT */
	const char *token;		/* NULL: none */
	const char *tls_cert, *tls_key;	/* PEM files; both or neither */
};

struct mon_http {
	struct MHD_Daemon *d;
	struct mon_engine *e;
	struct mon_nics *nics;
	pthread_mutex_t nic_lock;	/* one scrape reads the NICs at a time */
	unsigned char token_hash[32];
	int has_token;
	char *cert, *key;
	int port;			/* the port bound (when :0 was asked) */
};

/* --listen's value checked (and resolved): 0, or -FS_EXIT_USAGE after one line. */
int mon_http_check_listen(const char *listen);
/* 0, or -FS_EXIT_* after one line (a bad address, a port taken, an unreadable certificate). */
int mon_http_start(struct mon_http *h, const struct mon_http_opts *o, struct mon_engine *e, struct mon_nics *nics);
void mon_http_stop(struct mon_http *h);

#endif
