/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * `fabscope lat`: point-to-point latency by ping-pong.
 *
 * --op send: the client sends a message, the server answers with one of the
 * same size as soon as its receive completes (perftest's send_lat).
 * --op write: each side writes into the other's buffer and watches the
 * last byte of its own buffer change (perftest's write_lat); nothing
 * completes at the receiver, so this mode always spins.
 * --op read: the client READs from the server's buffer and waits for the
 * completion (perftest's read_lat); the server's transport serves it, the
 * server's program only waits for the end, and the client tells it, every
 * second or so, that it is still there.
 * Latency is reported one-way, as round trip / 2, like perftest and qperf;
 * a READ's whole, request to data back (a READ is one operation, as
 * perftest reports it).
 * Samples go into the histogram of core/stats.h (bounded memory, 0.2 %
 * percentile error bound).
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "../core/builtin.h"
#include "../core/clock.h"
#include "../core/error.h"
#include "../core/net.h"
#include "../core/output.h"
#include "../core/record.h"
#include "../core/stats.h"
#include "../core/units.h"
#include "ptp.h"

#define LAT_SIGNAL_EVERY 64
#define LAT_SPINS_PER_CHECK 64
/* A READ client tells its server it is there this often (the server has no
 * completions to see it by) */
#define LAT_READ_ALIVE_NS 1000000000ull

static const char *const lat_usage[] = {
	"fabscope lat [options] HOST",
	"fabscope lat --server [options]",
	NULL
};

static const char lat_about[] =
	"Measure point-to-point latency by ping-pong: min, percentiles (p50, p90, p99,\n"
	"p99.9), max, mean and standard deviation, one-way (round trip / 2; --op read: the\n"
	"READ's whole time).  Start 'fabscope lat --server' on one node and\n"
	"'fabscope lat HOST' on the other.";


struct lat_run {
	struct ptp_ctx *c;
	uint64_t size;
	uint64_t sent;		/* messages sent */
	uint64_t deadline;	/* wait limit for one answer */
	uint64_t alive;		/* a READ client: when it last said "alive" */
	int owed;		/* receives consumed and not yet reposted */
};

/* A READ client: tell the server, at least every LAT_READ_ALIVE_NS, that we
 * are still here (its program sees no READ: the transport serves them) */
static int say_alive(struct lat_run *r, uint64_t now, uint64_t pings)
{
	if (r->c->op != XPORT_OP_READ || r->c->is_server || now - r->alive < LAT_READ_ALIVE_NS)
		return 0;
	r->alive = now;
	return ptp_send(r->c, json_pack("{s:s, s:I}", "type", "alive", "pings", (json_int_t)pings));
}

static int post_recv(struct ptp_ctx *c)
{
	struct xport_wr wr = {
		.op = XPORT_OP_RECV, .mr = &c->mr, .off = c->area, .len = (uint32_t)c->area,
	};

	if (xport_post(c->conn, &wr))
		return fs_err_peer("cannot post a receive: %s", xport_errmsg(c->x));
	return 0;
}

static int send_one(struct lat_run *r, uint8_t tag)
{
	struct ptp_ctx *c = r->c;
	struct xport_wr wr = {
		.op = c->op, .mr = &c->mr, .len = (uint32_t)r->size,
		.rmr = &c->peer_rmr, .roff = c->area,
	};
	int rc;

	r->sent++;
	if (r->sent % LAT_SIGNAL_EVERY == 0 || c->op == XPORT_OP_READ)
		wr.flags = XPORT_WR_SIGNALED;	/* a READ's completion is the answer */
	if (c->op == XPORT_OP_READ) {	/* the peer's first area into our second */
		wr.off = c->area;
		wr.roff = 0;
	}
	c->buf[r->size - 1] = tag;	/* write: the byte the peer watches */
	rc = xport_post(c->conn, &wr);
	if (rc == -ENOTCONN)
		return fs_err_peer("%s %s went away during the test (%s)",
				   c->is_server ? "client" : "server", c->peer_name,
				   xport_errmsg(c->x));
	if (rc)
		return fs_err_env("cannot post %s: %s", xport_op_name(c->op), xport_errmsg(c->x));
	return 0;
}

/*
 * Wait for the peer's next message: a RECV completion (send), the tag in
 * the last byte of our target area (write), our READ's completion (read).
 * Returns 1 when it came, 0 when
 * `*stop` was set by a control message first, or -exit code.
 */
static int wait_one(struct lat_run *r, uint8_t tag, int check_ctl, int *stop)
{
	struct ptp_ctx *c = r->c;
	volatile uint8_t *watch = c->buf + c->area + r->size - 1;
	uint64_t last_ctl = clock_ns();
	struct xport_wc wc[16];
	/* the transport spins or sleeps as --poll says; a write gives the
	 * receiver no completion to sleep on, so --op write always spins on
	 * the watched byte (as perftest's write_lat does).  A spinning loop
	 * polls without a timeout (no clock read) and looks at the clock only
	 * every LAT_SPINS_PER_CHECK turns: less work between the answer's
	 * arrival and our noticing it */
	int spin = c->op == XPORT_OP_WRITE || c->x->params.poll_mode == XPORT_POLL_BUSY;
	unsigned turn = 0;

	r->deadline = last_ctl + (uint64_t)c->timeout_ms * 1000000ull;
	for (;; turn++) {
		int i, n, got = 0;

		n = xport_poll(c->x, wc, 16, spin ? 0 : 1);
		if (n < 0)
			return fs_err_env("polling completions: %s", xport_errmsg(c->x));
		for (i = 0; i < n; i++) {
			if (wc[i].status != XPORT_WC_OK)
				return ptp_wc_error(c, &wc[i]);
			if (wc[i].op == XPORT_OP_RECV)
				got = 1;
			else if (wc[i].op == XPORT_OP_READ)
				got = 2;
		}
		if (c->op == XPORT_OP_SEND ? got == 1 : c->op == XPORT_OP_READ ? got == 2 :
		    *watch == tag) {
			if (got == 2)
				got = 0;	/* no receive to put back */
			r->owed += got;	/* reposted off the critical path: see repost() */
			return 1;
		}
		if (spin && turn % LAT_SPINS_PER_CHECK)
			continue;
		if (check_ctl || net_stop) {
			uint64_t now = clock_ns();

			if (net_stop)
				return fs_err(FS_EXIT_INTERRUPTED, "interrupted");
			if (now - last_ctl > 1000000) {
				json_t *m;
				int rc = say_alive(r, now, r->sent);	/* (a READ that takes long) */

				if (!rc)
					rc = ptp_try_recv(c, &m);
				last_ctl = now;
				if (rc < 0)
					return rc;
				if (rc > 0) {
					const char *t = json_string_value(json_object_get(m, "type"));

					rc = t && !strcmp(t, "finished");
					json_decref(m);
					if (!rc)
						return fs_err_peer("%s sent an unexpected control message",
								   c->peer_name);
					*stop = 1;
					return 0;
				}
			}
		}
		if (clock_ns() > r->deadline)
			return fs_err_peer("no answer from %s for %g s during the ping-pong",
					   c->peer_name, c->timeout_ms / 1000.0);
	}
}

/*
 * Put back the receives that answers consumed.  Four stay posted (see
 * lat_prepare) and only one message is in flight at a time, so a receive can
 * wait until the answer is sent (server) or the round trip is timed (client):
 * reposting is not part of the round trip.
 */
static int repost(struct lat_run *r)
{
	for (; r->owed > 0; r->owed--) {
		int rc = post_recv(r->c);

		if (rc)
			return rc;
	}
	return 0;
}

static uint8_t tag_of(uint64_t i)
{
	return (uint8_t)(i % 255 + 1);	/* never 0, never the fill byte twice in a row */
}

/* Client: ping, wait for the pong, time it. */
static int lat_ping(struct ptp_ctx *c, uint64_t size, struct stats *st)
{
	const struct ptp_opts *o = c->o;
	struct lat_run r = { .c = c, .size = size, .alive = clock_ns() };
	uint64_t i, t_begin = clock_ns(), warm_end_ns, end_ns = 0;
	int rc, stop = 0, measuring = 0;

	memset(c->buf + c->area, 0, c->area);
	warm_end_ns = t_begin + (uint64_t)(o->warmup_s * 1e9);
	for (i = 0;; i++) {
		uint64_t t0, t1;

		if (!measuring && (o->warmup_iters ? i >= o->warmup_iters :
				   clock_ns() >= warm_end_ns)) {
			measuring = 1;
			end_ns = clock_ns() + (uint64_t)(o->duration * 1e9);
		}
		if (measuring && (o->iters ? st->n >= o->iters : clock_ns() >= end_ns))
			break;
		t0 = clock_ns();
		rc = send_one(&r, tag_of(i));
		if (rc)
			return rc;
		rc = wait_one(&r, tag_of(i), 1, &stop);
		if (rc < 0)
			return rc;
		t1 = clock_ns();
		if (measuring)
			stats_add(st, c->op == XPORT_OP_READ ? t1 - t0 : (t1 - t0) / 2);
		if ((rc = repost(&r)))
			return rc;
		if ((rc = say_alive(&r, t1, i)))
			return rc;
		if (out_progress_due(t1)) {	/* fabscope run's watch (core/output.h) */
			char sz[32];

			units_format_size(size, sz, sizeof(sz));
			out_progress(2.0 * (double)size * (double)(i + 1), o->iters ? (double)st->n / (double)o->iters : -1,
				     "size %s, %llu round trips", sz, (unsigned long long)(i + 1));
		}
	}
	rc = ptp_send(c, json_pack("{s:s, s:I}", "type", "finished", "pings", (json_int_t)i));
	if (!rc) {	/* the server's answer: it has stopped using the flow */
		json_t *m;

		rc = ptp_recv(c, &m, "finished");
		json_decref(m);
	}
	return rc;
}

/*
 * Server of READs: the transport answers them (the NIC; tcp inside
 * xport_poll, which this keeps calling), so this side only waits for the
 * client's "finished", and for its "alive" at least every --timeout.
 */
static int lat_serve_reads(struct ptp_ctx *c)
{
	int soft = c->x->ops->caps & XPORT_CAP_SOFTWARE;
	uint64_t last = clock_ns(), tmo = (uint64_t)c->timeout_ms * 1000000ull;
	struct xport_wc wc[16];

	for (;;) {
		json_t *m;
		const char *t;
		int rc, n = 0;

		if (soft)
			n = xport_poll(c->x, wc, 16, 1);
		else
			net_wait(c->ctl, POLLIN, 100);
		if (n < 0)
			return fs_err_env("polling completions: %s", xport_errmsg(c->x));
		if (net_stop)
			return fs_err(FS_EXIT_INTERRUPTED, "interrupted");
		rc = ptp_try_recv(c, &m);
		if (rc < 0)
			return rc;
		if (!rc) {
			if (clock_ns() - last > tmo + LAT_READ_ALIVE_NS)	/* its word is due every 1 s */
				return fs_err_peer("client %s said nothing for %g s during the READs (--timeout, and the 1 s between its words)",
						   c->peer_name, (tmo + LAT_READ_ALIVE_NS) / 1e9);
			continue;
		}
		last = clock_ns();
		t = json_string_value(json_object_get(m, "type"));
		rc = t ? !strcmp(t, "finished") ? 1 : !strcmp(t, "alive") ? 0 : -1 : -1;
		json_decref(m);
		if (rc < 0)
			return fs_err_peer("%s sent an unexpected control message", c->peer_name);
		if (rc)
			return ptp_send(c, json_pack("{s:s, s:I}", "type", "finished", "pongs",
						     (json_int_t)0));
	}
}

/* Server: answer every ping until the client says it has finished. */
static int lat_pong(struct ptp_ctx *c, uint64_t size)
{
	struct lat_run r = { .c = c, .size = size };
	uint64_t i;
	int rc, stop = 0;

	if (c->op == XPORT_OP_READ)
		return lat_serve_reads(c);
	/* the watched area was cleared before "ready" (lat_arm): a client's
	 * first WRITE can land before we get here */
	for (i = 0;; i++) {
		rc = wait_one(&r, tag_of(i), 1, &stop);
		if (rc < 0)
			return rc;
		if (stop)
			return ptp_send(c, json_pack("{s:s, s:I}", "type", "finished",
						     "pongs", (json_int_t)i));
		rc = send_one(&r, tag_of(i));
		if (rc || (rc = repost(&r)))
			return rc;
	}
}

static int lat_prepare(struct ptp_ctx *c)
{
	int i, rc;

	c->op = !strcmp(c->o->op, "write") ? XPORT_OP_WRITE :
		!strcmp(c->o->op, "read") ? XPORT_OP_READ : XPORT_OP_SEND;
	if (c->op != XPORT_OP_SEND)
		return 0;
	for (i = 0; i < 4; i++) {
		rc = post_recv(c);
		if (rc)
			return rc;
	}
	return 0;
}

/* Server, before "ready": clear the byte the client's first WRITE sets.
 * Cleared after "ready", it was lost when that WRITE landed first (the
 * client then waited for an answer that never came). */
static int lat_arm(struct ptp_ctx *c, uint64_t size)
{
	(void)size;
	memset(c->buf + c->area, 0, c->area);
	return 0;
}

static int lat_serve_size(struct ptp_ctx *c, uint64_t size)
{
	return lat_pong(c, size);
}

static int lat_client(struct ptp_opts *o, const char *host)
{
	struct ptp_ctx c;
	struct stats st;
	struct out out;
	uint64_t sizes[32];
	int n, i, rc, wrc;

	if (stats_init(&st))
		return fs_err_env("out of memory");
	rc = ptp_out_init(&out, o);
	if (rc) {
		stats_release(&st);
		return rc;
	}
	rc = ptp_client_open(&c, o, host);
	if (rc || (rc = lat_prepare(&c)))
		goto done;
	out_comment(&out, "fabscope lat: %s %s, %s -> %s, %s",
		    o->transport, o->op, record_str(c.local_ep, "ip", "?"), c.peer_name,
		    o->poll);
	n = ptp_sizes(o, sizes, 32);
	for (i = 0; i < n; i++) {
		json_t *m, *r;

		stats_reset(&st);
		rc = ptp_send(&c, json_pack("{s:s, s:I}", "type", "run", "size", (json_int_t)sizes[i]));
		if (rc || (rc = ptp_recv(&c, &m, "ready")))
			break;
		json_decref(m);
		rc = lat_ping(&c, sizes[i], &st);
		if (rc && !st.n)
			break;
		r = ptp_record(&c, sizes[i], 1);
		json_object_set_new(r, "scope", json_string("aggregate"));
		ptp_flow_facts(r, json_array_get(c.flows_info, 0));	/* its one flow's ports, QPs */
		json_object_set_new(r, "metrics", json_pack("{s:o, s:I}",
			"lat_us", record_lat_us(&st), "iters", (json_int_t)st.n));
		if (rc) {	/* cut short: the round trips timed until then */
			char why[1200];

			snprintf(why, sizeof(why), "cut short, what was measured until then: %s", fs_last_error());
			json_object_set_new(r, "status", json_string("cut"));
			json_object_set_new(r, "error", json_string(why));
		}
		out_record(&out, r);
		json_decref(r);
		if (rc)
			break;
	}
	if (!rc)
		ptp_send(&c, json_pack("{s:s}", "type", "bye"));
done:
	if ((wrc = out_finish(&out)) && !rc)
		rc = wrc;
	ptp_close(&c);
	stats_release(&st);
	return rc;
}

const struct ptp_test lat_test = {
	.name = "lat",
	.usage = lat_usage,
	.about = lat_about,
	.prepare = lat_prepare,
	.arm_size = lat_arm,
	.serve_size = lat_serve_size,
	.client = lat_client,
};

int cmd_lat(int argc, const char **argv)
{
	return ptp_cmd(&lat_test, argc, argv);
}
