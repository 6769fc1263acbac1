/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tool tcp-fuzz N SEED: the TCP transport's receive path against a
 * hostile peer.  N times: a passive connection of the tcp backend with a
 * 4 KiB region open to remote access (malloc'd to its exact size, so ASan
 * sees any write past it) and a few posted receives; a raw socket that
 * says a valid hello and then sends a burst of frames: well-formed ones
 * with random fields (types, flags, lengths, keys, offsets, acks), frames
 * cut short, and plain random bytes.  The transport is polled throughout,
 * also posting its own sends and writes towards the raw peer.  Then the raw
 * peer closes.  Checks: no crash or sanitizer report; every completion has
 * a known status; every posted receive completes exactly once (delivered
 * or flushed); no receive reports more bytes than its buffer holds; no
 * write lands outside the region (ASan watches its end); and a post on the
 * dead flow fails with -ENOTCONN and the flow's own reason.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/clock.h"
#include "../../core/error.h"
#include "../../core/net.h"
#include "../../transport/transport.h"
#include "test-tool.h"

#define REGION 4096
#define NRECV 4

static uint32_t pick32(uint64_t *s)
{
	static const uint32_t edge[] = { 0, 1, 2, 31, 32, 4095, 4096, 4097, 65536,
					 0x7fffffff, 0x80000000u, 0xffffffffu };

	if (tool_rand(s) % 2)
		return edge[tool_rand(s) % (sizeof(edge) / sizeof(edge[0]))];
	return (uint32_t)(tool_rand(s) % (tool_rand(s) % 2 ? 64 : 8192));
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

/* One frame into buf; returns its length.  Most frames are well formed and
 * in bounds, so that the flow lives on and later frames reach deeper
 * states; the rest are hostile: random fields, cut short, or garbage. */
static size_t make_frame(uint64_t *s, uint8_t *buf, size_t cap)
{
	static const uint8_t sane_types[] = { 1, 2, 3, 4, 6 };	/* no READ_RESP */
	size_t n = 32, plen;
	int sane = tool_rand(s) % 10 < 7;
	uint8_t type = sane ? sane_types[tool_rand(s) % 5] : (uint8_t)(tool_rand(s) % 9 ? 1 + tool_rand(s) % 6 : tool_rand(s));
	uint32_t len = pick32(s);
	uint64_t off = tool_rand(s) % 3 ? pick32(s) : tool_rand(s);

	if (!sane && tool_rand(s) % 4 == 0) {		/* plain garbage */
		n = 1 + tool_rand(s) % 200;
		for (size_t i = 0; i < n; i++)
			buf[i] = (uint8_t)tool_rand(s);
		return n;
	}
	if (sane) {
		len = type == 6 ? 0 : (uint32_t)(tool_rand(s) % 513);	/* fits a receive */
		off = tool_rand(s) % (REGION - len + 1);
	}
	memset(buf, 0, 32);
	buf[0] = type;
	buf[1] = (uint8_t)(sane || tool_rand(s) % 4 ? tool_rand(s) % 2 : tool_rand(s));	/* flags */
	buf[2] = sane || tool_rand(s) % 16 ? 0xFB : (uint8_t)tool_rand(s);		/* magic */
	buf[3] = sane || tool_rand(s) % 16 ? 1 : (uint8_t)tool_rand(s);		/* version */
	put32(buf + 4, len);
	put32(buf + 8, sane || tool_rand(s) % 4 ? 0 : pick32(s));		/* ack */
	put32(buf + 12, sane || tool_rand(s) % 3 ? 1 : pick32(s));		/* rkey */
	put32(buf + 16, (uint32_t)(off >> 32));
	put32(buf + 20, (uint32_t)off);
	put32(buf + 24, (uint32_t)tool_rand(s));				/* imm */
	plen = type == 4 ? 0 : len < cap - 32 ? len : cap - 32;		/* READ_REQ: none */
	if (!sane && tool_rand(s) % 5 == 0 && plen)	/* cut short */
		plen = tool_rand(s) % plen;
	for (size_t i = 0; i < plen; i++)
		buf[n + i] = (uint8_t)tool_rand(s);
	return n + plen;
}

struct run {
	int recv_done[NRECV];
	int ok, errors;
};

static int reap(struct xport *x, struct run *r, int wait_ms)
{
	struct xport_wc wc[32];
	int n = xport_poll(x, wc, 32, wait_ms), i;

	if (n < 0)
		return fs_err(FS_EXIT_CHECK, "xport_poll: %s", xport_errmsg(x));
	for (i = 0; i < n; i++) {
		if (wc[i].status > XPORT_WC_LOCAL_ERR)
			return fs_err(FS_EXIT_CHECK, "unknown completion status %d", wc[i].status);
		if (wc[i].status == XPORT_WC_OK)
			r->ok++;
		else
			r->errors++;
		if (wc[i].op == XPORT_OP_RECV) {
			if (wc[i].wr_id >= NRECV || r->recv_done[wc[i].wr_id]++)
				return fs_err(FS_EXIT_CHECK, "receive %llu completed twice or unknown",
					       (unsigned long long)wc[i].wr_id);
			/* a SEND must fit its buffer (a WRITE_IMM's length is the write's) */
			if (wc[i].status == XPORT_WC_OK && !wc[i].has_imm && wc[i].len > 512)
				return fs_err(FS_EXIT_CHECK, "receive of %u bytes into a smaller buffer",
					       wc[i].len);
		}
	}
	return n;
}

static int one_run(uint64_t *s, unsigned long it, long *broke)
{
	struct xport_params p = { .bind_addr = "127.0.0.1", .timeout_ms = 2000,
				  .tclass = -1, .queue_depth = 16 };
	struct xport *x = NULL;
	struct xport_conn *c = NULL;
	struct xport_mr mr;
	struct xport_rmr peer_rmr = { .addr = 0, .len = REGION, .rkey = 1 };
	struct run r;
	uint8_t *region = malloc(REGION), hello[24] = "FSTCPv1", frame[9000];
	struct net_addr dst;
	json_t *blob = NULL, *peer;
	char err[256];
	const char *tok;
	int fd = -1, rc = 0, i, bursts;
	uint64_t token;

	memset(&r, 0, sizeof(r));
	if (!region)
		return fs_err(FS_EXIT_ENV, "out of memory");
	memset(region, 0x5a, REGION);
	if (xport_open("tcp", &p, &x, err, sizeof(err)))
		return fs_err(FS_EXIT_ENV, "%s", err);
	if (xport_mr_reg(x, region, REGION, XPORT_ACCESS_REMOTE, &mr) ||
	    xport_conn_new(x, 1, XPORT_ROLE_PASSIVE, &c) || !(blob = xport_conn_blob(c))) {
		rc = fs_err(FS_EXIT_ENV, "set-up: %s", xport_errmsg(x));
		goto out;
	}
	tok = json_string_value(json_object_get(blob, "token"));
	token = strtoull(tok, NULL, 16);
	net_resolve("127.0.0.1", (int)json_integer_value(json_object_get(blob, "port")), 0,
		    &dst, err, sizeof(err));
	fd = net_connect(&dst, NULL, 2000);
	if (fd < 0) {
		rc = fs_err(FS_EXIT_ENV, "connect: %s", strerror(-fd));
		goto out;
	}
	put32(hello + 8, (uint32_t)(token >> 32));
	put32(hello + 12, (uint32_t)token);
	put32(hello + 16, 0);
	net_write_full(fd, hello, sizeof(hello), 2000);
	peer = json_pack("{s:s, s:i}", "transport", "tcp", "flows", 1);
	if (xport_conn_connect(c, peer)) {
		json_decref(peer);
		rc = fs_err(FS_EXIT_CHECK, "run %lu: passive connect: %s", it, xport_errmsg(x));
		goto out;
	}
	json_decref(peer);
	for (i = 0; i < NRECV; i++) {	/* receives in the first half only */
		struct xport_wr wr = { .op = XPORT_OP_RECV, .wr_id = (uint64_t)i, .mr = &mr,
				       .off = (uint64_t)i * 512, .len = 512 };

		if (xport_post(c, &wr)) {
			rc = fs_err(FS_EXIT_CHECK, "posting a receive: %s", xport_errmsg(x));
			goto out;
		}
	}
	bursts = 1 + (int)(tool_rand(s) % 6);
	for (i = 0; i < bursts && rc >= 0; i++) {
		int k, nf = 1 + (int)(tool_rand(s) % 8);
		char sink[65536];

		for (k = 0; k < nf; k++) {
			size_t n = make_frame(s, frame, sizeof(frame));

			if (send(fd, frame, n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
				break;
		}
		if (tool_rand(s) % 2) {	/* the transport talks back */
			struct xport_wr wr = { .op = tool_rand(s) % 2 ? XPORT_OP_SEND : XPORT_OP_WRITE,
					       .flags = XPORT_WR_SIGNALED, .wr_id = 100, .mr = &mr,
					       .off = REGION / 2, .len = (uint32_t)(tool_rand(s) % 1024),
					       .rmr = &peer_rmr };

			xport_post(c, &wr);	/* -ENOTCONN once broken is fine */
		}
		rc = reap(x, &r, 1);
		while (recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0)
			;
	}
	if (r.errors)	/* the transport refused what the peer sent */
		(*broke)++;
	close(fd);
	fd = -1;
	{	/* the peer is gone: every receive must come back */
		uint64_t deadline = clock_ns() + 3000000000ull;
		int left;

		do {
			if (rc >= 0)
				rc = reap(x, &r, 2);
			for (left = 0, i = 0; i < NRECV; i++)
				left += !r.recv_done[i];
		} while (rc >= 0 && left && clock_ns() < deadline);
		if (rc >= 0 && left)
			rc = fs_err(FS_EXIT_CHECK, "run %lu: %d receives never completed after the peer left",
				     it, left);
	}
	if (rc >= 0) {	/* once the flow has died, a post says why, whatever was said since */
		struct xport_wr wr = { .op = XPORT_OP_WRITE, .flags = XPORT_WR_SIGNALED,
				       .wr_id = 100, .mr = &mr, .rmr = &peer_rmr };
		uint64_t deadline = clock_ns() + 3000000000ull;
		int prc;

		do {
			wr.flow = 5;
			xport_post(c, &wr);	/* "no flow 5": another message in the way */
			wr.flow = 0;
			prc = xport_post(c, &wr);
			if (!prc)	/* not noticed dead yet */
				rc = reap(x, &r, 2);
		} while (rc >= 0 && !prc && clock_ns() < deadline);
		if (rc >= 0 && (prc != -ENOTCONN || strncmp(xport_errmsg(x), "tcp flow 0 to ", 14)))
			rc = fs_err(FS_EXIT_CHECK, "run %lu: a post on the dead flow gave %d, \"%s\"",
				    it, prc, xport_errmsg(x));
	}
out:
	if (fd >= 0)
		close(fd);
	json_decref(blob);
	xport_conn_free(c);
	if (x) {
		xport_mr_dereg(x, &mr);
		xport_close(x);
	}
	free(region);
	return rc < 0 ? rc : 0;
}

int tool_tcp_fuzz(int argc, const char **argv)
{
	unsigned long n, it;
	uint64_t s;
	long broke = 0;
	int rc = 0;

	if (argc != 3) {
		fs_err_usage("usage: test-tool tcp-fuzz N SEED");
		return 2;
	}
	n = strtoul(argv[1], NULL, 10);
	s = strtoull(argv[2], NULL, 10);
	for (it = 0; it < n && !rc; it++)
		rc = one_run(&s, it, &broke);
	if (rc)
		return -rc;
	printf("runs %lu refused-by-transport %ld\n", n, broke);
	return 0;
}
