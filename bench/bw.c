/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * `fabscope bw`: point-to-point bandwidth over any transport.
 *
 * The sender keeps up to --tx-depth messages outstanding on every flow and
 * asks for a completion every --cq-mod messages; a completion means the
 * data is placed at the peer (see transport.h), so bytes are counted only
 * when delivered.
 *  - a timed run (-D) opens each flow's window at a completion (the one that
 *    ends its warm-up messages, or the first after the warm-up time), so
 *    both ends sit on exact delivered-byte boundaries (completions read in
 *    the same poll as the opening one share its time, and count as part of
 *    the opening), and closes it at the last completion before posting stops
 *    (or, if none came in time, the first after).  Every window then lies
 *    where all flows are sending, and the aggregate is the sum of the
 *    per-flow rates.  The drain of the messages still in flight is left out:
 *    flows finish it one after another, and the link is no longer full (as
 *    perftest leaves out its last margin);
 *  - a counted run (-n) lets its warm-up complete, opens the window as it
 *    posts its first measured message into an empty pipe (as perftest
 *    counts), closes it at the completion of its last message, and
 *    the aggregate is all flows' bytes over the span from the first window's
 *    opening to the last one's closing (a sum of rates would overstate it:
 *    flows that finish early leave the link to the others).
 * One pass of posting lasts about BW_POST_BUDGET_NS, then the loop polls: on
 * a software transport a post does the transport's work, and completions
 * must be seen near the time they happen for the windows' edges to mean it.
 * With -b both sides send and each measures its own direction.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/builtin.h"
#include "../core/clock.h"
#include "../core/error.h"
#include "../core/net.h"
#include "../core/output.h"
#include "../core/record.h"
#include "../core/testhook.h"
#include "../core/units.h"
#include "ptp.h"

struct bw_flow {
	uint64_t posted;	/* messages posted */
	uint64_t completed;	/* messages known delivered */
	uint64_t last_signaled;	/* index of the last signaled message */
	int state;		/* WARM, ARMED (opens at next completion), MEASURING */
	uint64_t mark;		/* completed when the window opened */
	uint64_t end;		/* completed when the window closed (so far) */
	uint64_t wu;		/* the warm-up's last message (signaled; 0: none) */
	uint64_t target;	/* -n: stop posting at this count (0: not yet known) */
	uint64_t t_mark, t_last;
	int fenced;		/* the zero-length signaled op that ends the run */
};

enum { WARM, ARMED, MEASURING };

/* Bytes in flight per flow are capped: deep queues of huge messages only
 * make the end of a timed run drain for long (8 MiB is still 16 times the
 * bandwidth-delay product of a 400 Gb/s link with a 10 us round trip).
 * READs get up to BW_READ_INFLIGHT over all flows: a READ's data leaves the
 * responder only after its request has crossed, and a responder that works
 * through one READ after another (rxe: one QP's READs in turn on one CPU)
 * stays busy only with many queued; with 1 MiB READs on rxe, 128 MiB in
 * flight gave 1.2-1.7 times the rate of 8 MiB in 6 rounds out of 6.
 * Completions are asked for at least every BW_SIGNAL_BYTES so that windows
 * open and close on fine-grained boundaries. */
#define BW_MAX_INFLIGHT (8u << 20)
#define BW_READ_INFLIGHT (128u << 20)
#define BW_SIGNAL_BYTES (256u << 10)
/* One post_some pass posts for at most about this long, then the loop polls.
 * A software transport does its work inside the post (rxe runs the requester,
 * and the packets' trip through the stack, in the poster's system call: 1 ms
 * or more per 64 KiB post under TCG); filling every flow's window in one pass
 * then took 0.5 s, and the completions of that time came in one poll, with
 * one timestamp, which left a 2 s run's windows of no length. */
#define BW_POST_BUDGET_NS 1000000ull
#define BW_POST_CLOCK_EVERY 4		/* posts between looks at the clock */

struct bw_side {		/* what one side measured for one size */
	int sending, done, armed;
	int next_flow;			/* where the next post_some starts */
	uint64_t depth, cq_mod;		/* effective for this size */
	uint64_t t_begin, t_stop;	/* t_stop: -D, stop posting then */
	struct bw_flow *f;
	struct xport_flow_stats *st0;	/* each flow's counters when this size began */
};

static const char *const bw_usage[] = {
	"fabscope bw [options] HOST",
	"fabscope bw --server [options]",
	NULL
};

static const char bw_about[] =
	"Measure point-to-point bandwidth and message rate between two nodes, per flow and\n"
	"in aggregate.  Start 'fabscope bw --server' on one node and 'fabscope bw HOST' on\n"
	"the other; the client's options rule the test and the client prints the results.\n"
	"Bandwidth counts delivered bytes only (a completion means the peer has the data).";

static int post_recvs(struct ptp_ctx *c)
{
	int i, k, rc, n = c->o->tx_depth + c->o->cq_mod;

	for (i = 0; i < c->o->flows; i++)
		for (k = 0; k < n; k++) {
			struct xport_wr wr = {
				.op = XPORT_OP_RECV, .flow = i, .wr_id = 0,
				.mr = &c->mr, .off = c->area, .len = (uint32_t)c->area,
			};

			rc = xport_post(c->conn, &wr);
			if (rc)
				return fs_err_env("cannot post receive buffers: %s", xport_errmsg(c->x));
		}
	return 0;
}

/* A completion arrived on flow f at time now: open its window if due (a
 * counted run opens it at its first measured post, see post_some). */
static void flow_completed(const struct ptp_opts *o, struct bw_side *s,
			   struct bw_flow *f, uint64_t upto, uint64_t now)
{
	if (upto > f->completed)
		f->completed = upto;
	if (f->state == MEASURING) {
		/* a timed run's window opens at a completion: those polled with
		 * it share its time and were delivered before it, so they belong
		 * to the opening, not to the window */
		if (!o->iters && now == f->t_mark) {
			f->mark = f->end = f->completed;
			return;
		}
		/* a timed run's window closes before the drain (see the top) */
		if (o->iters || !s->t_stop || now < s->t_stop || f->end == f->mark) {
			f->end = f->completed;
			f->t_last = now;
		}
		return;
	}
	if (o->iters)
		return;
	if (f->state == WARM && f->wu && f->completed >= f->wu)
		f->state = ARMED;	/* the warm-up's last message is this one */
	if (f->state != ARMED)
		return;
	f->state = MEASURING;
	f->mark = f->end = f->completed;
	f->t_mark = f->t_last = now;
}

/* Time-based warm-up: arm every flow once the warm-up time has passed. */
static void check_warm_time(const struct ptp_opts *o, struct bw_side *s)
{
	uint64_t now = clock_ns();
	int i;

	if (s->armed || o->warmup_iters ||
	    now < s->t_begin + (uint64_t)(o->warmup_s * 1e9))
		return;
	s->armed = 1;
	if (!o->iters)
		s->t_stop = now + (uint64_t)(o->duration * 1e9);
	for (i = 0; i < o->flows; i++) {
		struct bw_flow *f = &s->f[i];

		if (f->state != WARM)
			continue;
		f->state = ARMED;
		if (o->iters && f->posted)	/* the next message ends the warm-up */
			f->wu = f->posted + 1;
	}
}

/* A counted run whose warm-up is all posted: it waits for it to complete
 * before it posts its first measured message (see post_some). */
static int warmup_draining(const struct ptp_opts *o, const struct bw_flow *f)
{
	return o->iters && f->state != MEASURING && f->wu && f->posted >= f->wu &&
	       f->completed < f->wu;
}

static int stop_posting(const struct ptp_opts *o, const struct bw_side *s,
			const struct bw_flow *f)
{
	if (o->iters)	/* counted: the target is set as the window opens */
		return f->target && f->posted >= f->target;
	if (f->state != MEASURING)	/* its window must open first */
		return 0;
	if (!s->t_stop && f->state == MEASURING)	/* count warm-up, timed run */
		((struct bw_side *)s)->t_stop = f->t_mark + (uint64_t)(o->duration * 1e9);
	return s->t_stop && clock_ns() >= s->t_stop;
}

static int post_some(struct ptp_ctx *c, struct bw_side *s, uint64_t size)
{
	const struct ptp_opts *o = c->o;
	int i, k, rc, all_done = 1, posts = 0, spent = 0, first = s->next_flow;
	uint64_t t0 = 0;	/* read at the first post: most calls post nothing */

	for (k = 0; k < o->flows; k++) {
		struct bw_flow *f;
		struct xport_wr list[XPORT_MAX_POST_LIST];
		int nl = 0;

		i = (first + k) % o->flows;	/* flows take turns at going first */
		f = &s->f[i];
		while (!spent && !stop_posting(o, s, f) && f->posted - f->completed < s->depth) {
			uint64_t idx = f->posted + 1;

			/* a counted run: the window opens as its first measured
			 * message is posted and holds exactly -n messages (as
			 * perftest counts).  The warm-up's messages complete first:
			 * still in flight, they would stretch the window (and a
			 * window opened at a completion could share its poll, and
			 * so its time, with the last one) */
			if (warmup_draining(o, f))
				break;
			if (!t0)
				t0 = clock_ns();
			if (o->iters && f->state != MEASURING &&
			    (f->wu ? f->posted >= f->wu : f->state == ARMED)) {
				f->state = MEASURING;
				f->mark = f->end = f->posted;
				f->t_mark = f->t_last = clock_ns();
				f->target = f->mark + o->iters;
			}
			int sig = idx % s->cq_mod == 0 || idx == f->target ||
				  idx == f->wu;
			struct xport_wr wr = {
				.op = c->op, .flow = i, .wr_id = idx,
				.flags = sig ? XPORT_WR_SIGNALED : 0,
				.mr = &c->mr, .len = (uint32_t)size,
				.rmr = &c->peer_rmr, .roff = c->area,
				.imm = (uint32_t)idx,	/* (write_imm) */
			};

			if (c->op == XPORT_OP_READ)
				wr.off = c->area;	/* read into our target area */
			list[nl++] = wr;
			f->posted = idx;
			if (sig)
				f->last_signaled = idx;
			if (nl < o->post_list && !stop_posting(o, s, f) &&
			    f->posted - f->completed < s->depth && !warmup_draining(o, f))
				continue;	/* the list grows */
			rc = xport_post_list(c->conn, list, nl);
			nl = 0;
			if (rc == -ENOTCONN)
				return fs_err_peer("%s %s went away during the test (%s)",
						   c->is_server ? "client" : "server",
						   c->peer_name, xport_errmsg(c->x));
			if (rc)
				return fs_err_env("cannot post %s on flow %d: %s",
						  xport_op_name(c->op), i, xport_errmsg(c->x));
			if (++posts % BW_POST_CLOCK_EVERY == 0 &&
			    clock_ns() - t0 > BW_POST_BUDGET_NS) {
				spent = 1;	/* poll now; the next pass starts after this flow */
				s->next_flow = (i + 1) % o->flows;
			}
		}
		if (stop_posting(o, s, f) && !f->fenced && f->last_signaled < f->posted) {
			/* a zero-length signaled op: in-order delivery means its
			 * completion covers every message before it */
			struct xport_wr wr = {
				.op = c->op, .flow = i, .wr_id = f->posted,
				.flags = XPORT_WR_SIGNALED, .mr = &c->mr, .len = 0,
				.rmr = &c->peer_rmr, .roff = c->area,
			};

			rc = xport_post(c->conn, &wr);
			if (rc)
				return fs_err_peer("%s %s went away during the test (%s)",
						   c->is_server ? "client" : "server",
						   c->peer_name, xport_errmsg(c->x));
			f->last_signaled = f->posted;
			f->fenced = 1;
		}
		if (!stop_posting(o, s, f) || f->completed < f->last_signaled ||
		    f->state != MEASURING)
			all_done = 0;
	}
	return all_done;
}

/* Has every flow posted its last message? */
static int all_stopped(const struct ptp_opts *o, const struct bw_side *s)
{
	int i;

	for (i = 0; i < o->flows; i++)
		if (!stop_posting(o, s, &s->f[i]))
			return 0;
	return 1;
}

static void counter_delta(json_t *o, const char *key, uint64_t now, uint64_t then)
{
	if (now != XPORT_STAT_NONE && then != XPORT_STAT_NONE && now >= then)
		json_object_set_new(o, key, json_integer((json_int_t)(now - then)));
}

/* [{"retrans":..,"reord_seen":..,"rx_ooo":..,"rx_segs":..,"tx_segs":..}, ...]
 * a flow each, since the size began; a counter not known is left out */
static json_t *side_counters(const struct ptp_ctx *c, const struct bw_side *s)
{
	json_t *a = json_array();
	int i;

	for (i = 0; i < c->o->flows; i++) {
		struct xport_flow_stats now;
		json_t *o = json_object();

		if (!xport_flow_stats(c->conn, i, &now)) {
			counter_delta(o, "retrans", now.retrans, s->st0[i].retrans);
			counter_delta(o, "reord_seen", now.reord_seen, s->st0[i].reord_seen);
			counter_delta(o, "rx_ooo", now.rx_ooo, s->st0[i].rx_ooo);
			counter_delta(o, "rx_segs", now.rx_segs, s->st0[i].rx_segs);
			counter_delta(o, "tx_segs", now.tx_segs, s->st0[i].tx_segs);
		}
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *side_json(const struct ptp_ctx *c, const struct bw_side *s, uint64_t size)
{
	json_t *flows = json_array();
	int i;

	for (i = 0; s->sending && i < c->o->flows; i++) {
		const struct bw_flow *f = &s->f[i];
		uint64_t m = f->end - f->mark;

		json_array_append_new(flows, json_pack("{s:I, s:I, s:f, s:f}",
			"msgs", (json_int_t)m, "bytes", (json_int_t)(m * size),
			"start_s", (double)(f->t_mark - s->t_begin) / 1e9,
			"duration_s", (double)(f->t_last - f->t_mark) / 1e9));
	}
	/* this side's flow facts go along: they describe its sending QPs; and
	 * the messages it kept in flight a flow (depth and caps applied); and
	 * every flow's transport counters over this size, sending or not (a
	 * receiver's count of out-of-order arrivals belongs to the sender's
	 * direction) */
	return json_pack("{s:s, s:o, s:O, s:I, s:o}", "type", "finished", "flows", flows,
			 "info", c->flows_info, "inflight_msgs", (json_int_t)s->depth,
			 "counters", side_counters(c, s));
}

/* Has no flow completed a message yet (warm-up's included)? */
static int none_completed(const struct ptp_opts *o, const struct bw_side *s)
{
	int i;

	for (i = 0; i < o->flows; i++)
		if (s->f[i].completed)
			return 0;
	return 1;
}

/* Has some flow's window got messages in it? */
static int measured_some(const struct ptp_opts *o, const struct bw_side *s)
{
	int i;

	for (i = 0; i < o->flows; i++)
		if (s->f[i].state == MEASURING && s->f[i].end > s->f[i].mark && s->f[i].t_last > s->f[i].t_mark)
			return 1;
	return 0;
}

/* What bw_run_size keeps from one turn of its loop to the next. */
struct bw_turn {
	uint64_t last_ctl, last_progress, t_drain, t_fin, t_hold;
	uint64_t tmo;		/* --timeout, in ns */
	long hold_ms;		/* a test build's pause around "finished" (0: none) */
	int sent_fin;
};

/* This side's flows and their window for one size: 0, or -FS_EXIT_ENV. */
static int bw_side_init(const struct ptp_ctx *c, struct bw_side *s, uint64_t size)
{
	const struct ptp_opts *o = c->o;
	uint64_t cap = BW_MAX_INFLIGHT;
	int i;

	s->f = calloc((size_t)o->flows, sizeof(*s->f));
	s->st0 = calloc((size_t)o->flows, sizeof(*s->st0));
	if (!s->f || !s->st0)
		return fs_err_env("out of memory");
	for (i = 0; i < o->flows; i++) {
		s->f[i].wu = (uint64_t)o->warmup_iters;
		xport_flow_stats(c->conn, i, &s->st0[i]);
	}
	s->depth = (uint64_t)o->tx_depth;
	if (c->op == XPORT_OP_READ && BW_READ_INFLIGHT / (uint64_t)o->flows > cap)
		cap = BW_READ_INFLIGHT / (uint64_t)o->flows;
	if (s->depth * size > cap)
		s->depth = cap / size ? cap / size : 1;
	s->cq_mod = (uint64_t)o->cq_mod;
	if (s->cq_mod > (s->depth + 1) / 2)
		s->cq_mod = (s->depth + 1) / 2;
	if (s->cq_mod * size > BW_SIGNAL_BYTES)
		s->cq_mod = BW_SIGNAL_BYTES / size ? BW_SIGNAL_BYTES / size : 1;
	return 0;
}

/* This side's "finished", once it has nothing more to send and, when it only
 * receives, once the peer's is here (in a test build that holds it: after
 * the peer's, or after the hold). */
static int bw_send_fin(struct ptp_ctx *c, const struct bw_side *s, uint64_t size, struct bw_turn *t,
		       const json_t *peer_fin, json_t **my_fin)
{
	int rc;

	if ((!s->sending || s->done) && t->hold_ms && !t->t_hold)
		t->t_hold = clock_ns();
	if ((s->sending && !s->done) || t->sent_fin ||
	    (t->hold_ms && !peer_fin && clock_ns() - t->t_hold <= 1000000ull * (uint64_t)t->hold_ms))
		return 0;
	/* a side that only receives reports after the sender has: its counters
	 * (out-of-order arrivals) then cover the whole size */
	if (!s->sending && !peer_fin)
		return 0;
	*my_fin = side_json(c, s, size);
	rc = ptp_send(c, json_incref(*my_fin));
	if (rc)
		return rc;
	t->sent_fin = 1;
	t->t_fin = clock_ns();
	if (t->hold_ms)	/* the peer's next message arrives meanwhile */
		usleep(1000u * (unsigned)t->hold_ms);
	return 0;
}

/* The n completions in wc: receives posted again, sends and one-sided
 * operations counted. */
static int bw_reap(struct ptp_ctx *c, struct bw_side *s, const struct xport_wc *wc, int n, uint64_t now,
		   struct bw_turn *t)
{
	int i;

	for (i = 0; i < n; i++) {
		if (wc[i].status != XPORT_WC_OK)
			return ptp_wc_error(c, &wc[i]);
		if (wc[i].op == XPORT_OP_RECV) {	/* a peer's send: repost */
			struct xport_wr wr = {
				.op = XPORT_OP_RECV, .flow = wc[i].flow,
				.mr = &c->mr, .off = c->area, .len = (uint32_t)c->area,
			};

			if (xport_post(c->conn, &wr))
				return fs_err_peer("cannot repost a receive: %s", xport_errmsg(c->x));
			continue;
		}
		flow_completed(c->o, s, &s->f[wc[i].flow], wc[i].wr_id, now);
		t->last_progress = now;
	}
	return 0;
}

/* The peer's control messages: its "finished" into *peer_fin.  Once that
 * is here, its next message (the client's "bye" or next "run") belongs to
 * the session, not to this size: it is left unread. */
static int bw_peer_msg(struct ptp_ctx *c, json_t **peer_fin)
{
	const char *type;
	json_t *m;
	int rc = *peer_fin ? 0 : ptp_try_recv(c, &m);

	if (rc <= 0)
		return rc;
	type = json_string_value(json_object_get(m, "type"));
	if (!type || strcmp(type, "finished")) {
		json_decref(m);
		return fs_err_peer("%s sent an unexpected control message", c->peer_name);
	}
	*peer_fin = m;
	return 0;
}

/* A size that has stopped moving (no progress, a trickle that does not
 * end, a peer that does not report), or an interrupt: the error. */
static int bw_stalled(const struct ptp_ctx *c, const struct bw_side *s, uint64_t size, const struct bw_turn *t,
		      const json_t *peer_fin, uint64_t now)
{
	const struct ptp_opts *o = c->o;

	if (s->sending && !s->done && now - t->last_progress > t->tmo) {
		char sz[32];

		units_format_size(size, sz, sizeof(sz));
		if (none_completed(o, s))	/* not one message yet: too big for the link? */
			return fs_err_peer("no %s message completed within --timeout %g s: at this link's rate one "
					   "takes longer, or %s stopped acknowledging data; give a smaller -s or a "
					   "larger --timeout", sz, c->timeout_ms / 1000.0, c->peer_name);
		return fs_err_peer("no progress for %g s: %s stopped acknowledging data",
				   c->timeout_ms / 1000.0, c->peer_name);
	}
	/* a trickle of completions must not stretch a run forever */
	if (s->sending && !s->done && t->t_drain && now - t->t_drain > 2 * t->tmo)
		return fs_err_peer("the last messages to %s did not complete within %g s of the run's end; the link or the peer is stalling",
				   c->peer_name, 2 * c->timeout_ms / 1000.0);
	if (t->sent_fin && !peer_fin && now - t->t_fin > (uint64_t)(o->duration * 1e9) + 3 * t->tmo)
		return fs_err_peer("%s did not report its results within %.0f s",
				   c->peer_name, o->duration + 3 * c->timeout_ms / 1000.0);
	if (net_stop)
		return fs_err(FS_EXIT_INTERRUPTED, "interrupted");
	return 0;
}

/* Where this side is, for fabscope run's watch (core/output.h): the bytes
 * its flows have delivered of this size. */
static void bw_progress(const struct ptp_opts *o, const struct bw_side *s, uint64_t size, uint64_t now)
{
	double bytes = 0;
	char sz[32];
	int i;

	if (!s->sending || !out_progress_due(now))
		return;
	for (i = 0; i < o->flows; i++)
		bytes += (double)s->f[i].completed * (double)size;
	units_format_size(size, sz, sizeof(sz));
	out_progress(bytes, -1, "size %s, %s", sz, s->done ? "draining" : "sending");
}

/* Run one size on this side until both sides have finished. */
static int bw_run_size(struct ptp_ctx *c, uint64_t size, int sending, json_t **peer_fin,
		       json_t **my_fin)
{
	const struct ptp_opts *o = c->o;
	struct bw_side s = { .sending = sending };
	struct bw_turn t = { .tmo = (uint64_t)c->timeout_ms * 1000000ull };
	struct xport_wc wc[64];
	int rc = 0, i, n;
	/* The target of one-sided WRITEs or READs on a hardware transport has
	 * no completions to wait for (its NIC serves the peer): it sleeps on the
	 * control connection instead of polling, which with --poll busy would
	 * spin a core away from the sender (or, on rxe, from the NIC itself). */
	int idle = !sending && !(c->x->ops->caps & XPORT_CAP_SOFTWARE) &&
		   (c->op == XPORT_OP_WRITE || c->op == XPORT_OP_READ);

	/* A test build can make this side send its "finished" only after the
	 * peer's, and pause after it: the order in which the end of a
	 * bidirectional size once went wrong (see below). */
	const char *hold = fs_test_env("FABSCOPE_TEST_BW_FIN_HOLD_MS");

	t.hold_ms = hold ? strtol(hold, NULL, 10) : 0;
	if (t.hold_ms < 0 || t.hold_ms > 60000)
		t.hold_ms = 0;
	*peer_fin = *my_fin = NULL;
	if ((rc = bw_side_init(c, &s, size)))
		return rc;
	s.t_begin = t.last_progress = clock_ns();
	while (!*peer_fin || !t.sent_fin) {
		int window_full = 1;
		uint64_t now;

		if (s.sending && !s.done) {
			check_warm_time(o, &s);
			rc = post_some(c, &s, size);
			if (rc < 0)
				goto out;
			s.done = rc;
			rc = 0;
			if (!t.t_drain && all_stopped(o, &s))
				t.t_drain = clock_ns();	/* only completions to come */
			for (i = 0; i < o->flows; i++)
				if (s.f[i].posted - s.f[i].completed < s.depth &&
				    !warmup_draining(o, &s.f[i]))
					window_full = 0;
		}
		if ((rc = bw_send_fin(c, &s, size, &t, *peer_fin, my_fin)))
			goto out;
		if (idle) {	/* nothing to poll: wait for the peer's message */
			net_wait(c->ctl, POLLIN, 100);
			n = 0;
		} else {
			n = xport_poll(c->x, wc, 64, s.sending && !s.done && !window_full ? 0 : 5);
		}
		if (n < 0) {
			rc = fs_err_env("polling completions: %s", xport_errmsg(c->x));
			goto out;
		}
		now = clock_ns();
		if ((rc = bw_reap(c, &s, wc, n, now, &t)))
			goto out;
		if (now - t.last_ctl > 1000000) {	/* the peer's control messages */
			t.last_ctl = now;
			bw_progress(o, &s, size, now);
			if ((rc = bw_peer_msg(c, peer_fin)) || (rc = bw_stalled(c, &s, size, &t, *peer_fin, now)))
				goto out;
		}
	}
out:
	if (rc) {
		json_decref(*peer_fin);
		json_decref(*my_fin);
		*peer_fin = *my_fin = NULL;
		/* a run cut short keeps what this side's flows measured so far:
		 * the client records it as "cut" (see bw_client) */
		if (!c->is_server && s.sending && measured_some(o, &s)) {
			*my_fin = side_json(c, &s, size);
			json_object_set_new(*my_fin, "cut", json_string(fs_last_error()));
		}
	}
	free(s.f);
	free(s.st0);
	return rc;
}

/* Fewer messages than this in a flow's timed window: its rate is warned rough */
#define BW_FEW_MSGS 10

/* A side's messages in flight (its "finished") into a record's params; older
 * peers send none */
/* a direction's reordering: the sender's retransmissions and detected
 * reorderings, the receiver's out-of-order arrivals of its segments; -1
 * where not known */
struct bw_reorder {
	json_int_t retrans, reord_seen, rx_ooo, rx_segs;
};

/* fin.counters[i].key from a "finished" message (the peer's: untrusted), -1 when absent */
static json_int_t fin_counter(json_t *fin, size_t i, const char *key)
{
	json_t *v = json_object_get(json_array_get(json_object_get(fin, "counters"), i), key);

	return json_is_integer(v) && json_integer_value(v) >= 0 ? json_integer_value(v) : -1;
}

static void reorder_add(json_int_t *tot, json_int_t v)
{
	if (v >= 0)
		*tot = (*tot < 0 ? 0 : *tot) + v;
}

static void reorder_set(json_t *m, const struct bw_reorder *ro)
{
	if (ro->retrans >= 0)
		json_object_set_new(m, "retrans_segs", json_integer(ro->retrans));
	if (ro->reord_seen >= 0)
		json_object_set_new(m, "reord_seen", json_integer(ro->reord_seen));
	if (ro->rx_ooo >= 0)
		json_object_set_new(m, "ooo_pkts", json_integer(ro->rx_ooo));
	if (ro->rx_segs >= 0)
		json_object_set_new(m, "rx_segs", json_integer(ro->rx_segs));
	if (ro->rx_ooo >= 0 && ro->rx_segs > 0)
		json_object_set_new(m, "ooo_pct", json_real(100.0 * (double)ro->rx_ooo / (double)ro->rx_segs));
}

static void reorder_metrics(json_t *m, json_t *tx_fin, json_t *rx_fin, size_t i, struct bw_reorder *tot)
{
	struct bw_reorder ro = {
		fin_counter(tx_fin, i, "retrans"), fin_counter(tx_fin, i, "reord_seen"),
		fin_counter(rx_fin, i, "rx_ooo"), fin_counter(rx_fin, i, "rx_segs"),
	};

	reorder_set(m, &ro);
	reorder_add(&tot->retrans, ro.retrans);
	reorder_add(&tot->reord_seen, ro.reord_seen);
	reorder_add(&tot->rx_ooo, ro.rx_ooo);
	reorder_add(&tot->rx_segs, ro.rx_segs);
}

static void copy_inflight(json_t *rec, json_t *fin)
{
	json_t *n = json_object_get(fin, "inflight_msgs");

	if (json_is_integer(n))
		json_object_set(json_object_get(rec, "params"), "inflight_msgs", n);
}

/*
 * Records of one direction from a "finished" message (one with "cut": what
 * a run cut short had measured, its records' status "cut").  Returns 1 when
 * a timed window held no message at all: its records say so (status
 * "error"), and the run fails (exit 1).
 */
static int emit_dir(struct ptp_ctx *c, struct out *out, json_t *fin, uint64_t size,
		    int client_is_src, json_t *src_info, json_t *agg_both, json_t *tx_fin, json_t *rx_fin)
{
	json_t *flows = json_object_get(fin, "flows"), *v, *tmpl;
	double t0 = 1e300, t1 = 0, agg_bw = 0, agg_rate = 0;
	json_int_t tot_msgs = 0, tot_bytes = 0, fewest = -1;
	struct bw_reorder tot_ro = { -1, -1, -1, -1 };
	const char *cut = json_string_value(json_object_get(fin, "cut"));
	int empty = 0;
	size_t i;

	if (!json_array_size(flows))
		return 0;
	tmpl = ptp_record(c, size, client_is_src);
	copy_inflight(tmpl, fin);
	json_array_foreach(flows, i, v)
		if (!json_integer_value(json_object_get(v, "msgs")))
			empty = 1;
	if (cut) {
		char why[1200];

		snprintf(why, sizeof(why), "cut short, what was measured until then: %s", cut);
		json_object_set_new(tmpl, "status", json_string("cut"));
		json_object_set_new(tmpl, "error", json_string(why));
	} else if (empty && !c->o->iters) {
		char sz[32], why[512];

		units_format_size(size, sz, sizeof(sz));
		snprintf(why, sizeof(why), "measured nothing: a flow completed no %s message inside its timed window "
			 "(-D %g); one takes longer at this link's rate: give a longer -D, -n, or a smaller -s",
			 sz, c->o->duration);
		json_object_set_new(tmpl, "status", json_string("error"));
		json_object_set_new(tmpl, "error", json_string(why));
		fs_err(FS_EXIT_CHECK, "%s", why);
	}
	json_array_foreach(flows, i, v) {
		json_int_t m = json_integer_value(json_object_get(v, "msgs"));
		json_int_t b = json_integer_value(json_object_get(v, "bytes"));
		double start = json_number_value(json_object_get(v, "start_s"));
		double dur = json_number_value(json_object_get(v, "duration_s"));
		json_t *r = record_derive(tmpl, "flow");

		json_object_set_new(r, "flow", json_integer((json_int_t)i));
		ptp_flow_facts(r, json_array_get(src_info, i));
		json_object_set_new(r, "metrics", json_pack("{s:f, s:f, s:I, s:I, s:f}",
			"bw_gbps", dur > 0 ? (double)b * 8 / dur / 1e9 : 0.0,
			"msg_rate_mpps", dur > 0 ? (double)m / dur / 1e6 : 0.0,
			"bytes", b, "msgs", m, "duration_s", dur));
		reorder_metrics(json_object_get(r, "metrics"), tx_fin, rx_fin, i, &tot_ro);
		out_record(out, r);
		json_decref(r);
		tot_msgs += m;
		tot_bytes += b;
		if (fewest < 0 || m < fewest)
			fewest = m;
		if (dur > 0) {
			agg_bw += (double)b * 8 / dur / 1e9;
			agg_rate += (double)m / dur / 1e6;
		}
		if (start < t0)
			t0 = start;
		if (start + dur > t1)
			t1 = start + dur;
	}
	/* a timed window too short for the messages: a rate of a few of them */
	if (!c->o->iters && !cut && fewest > 0 && fewest < BW_FEW_MSGS)
		fs_warn("%llu-byte messages: a flow completed only %lld in its timed window (-D %g); its "
			"rate is rough: give a longer -D", (unsigned long long)size, (long long)fewest,
			c->o->duration);
	v = record_derive(tmpl, "aggregate");
	t1 = t1 > t0 ? t1 - t0 : 0;	/* the span */
	if (c->o->iters) {	/* counted: bytes over the span; timed: rates add up (see the top) */
		agg_bw = t1 > 0 ? (double)tot_bytes * 8 / t1 / 1e9 : 0.0;
		agg_rate = t1 > 0 ? (double)tot_msgs / t1 / 1e6 : 0.0;
	}
	json_object_set_new(v, "metrics", json_pack("{s:f, s:f, s:I, s:I, s:f}",
		"bw_gbps", agg_bw, "msg_rate_mpps", agg_rate,
		"bytes", tot_bytes, "msgs", tot_msgs, "duration_s", t1));
	reorder_set(json_object_get(v, "metrics"), &tot_ro);
	out_record(out, v);
	if (agg_both) {
		json_t *m = json_object_get(agg_both, "metrics");

		json_object_set_new(m, "bw_gbps", json_real(record_num(agg_both, "metrics.bw_gbps", 0) +
							    record_num(v, "metrics.bw_gbps", 0)));
		json_object_set_new(m, "msg_rate_mpps", json_real(record_num(agg_both, "metrics.msg_rate_mpps", 0) +
								  record_num(v, "metrics.msg_rate_mpps", 0)));
		json_object_set_new(m, "bytes", json_integer(tot_bytes +
				    (json_int_t)record_num(agg_both, "metrics.bytes", 0)));
		json_object_set_new(m, "msgs", json_integer(tot_msgs +
				    (json_int_t)record_num(agg_both, "metrics.msgs", 0)));
	}
	json_decref(v);
	json_decref(tmpl);
	return empty && !c->o->iters && !cut;
}

static enum xport_op op_of(const char *op)
{
	if (!strcmp(op, "send"))
		return XPORT_OP_SEND;
	if (!strcmp(op, "read"))
		return XPORT_OP_READ;
	if (!strcmp(op, "write_imm"))
		return XPORT_OP_WRITE_IMM;
	return XPORT_OP_WRITE;
}

static int bw_session_prepare(struct ptp_ctx *c)
{
	c->op = op_of(c->o->op);
	/* a SEND, and a WRITE with immediate, each consume a receive at the peer */
	if ((c->op == XPORT_OP_SEND || c->op == XPORT_OP_WRITE_IMM) && (c->is_server || c->o->bidir))
		return post_recvs(c);
	return 0;
}

static int bw_serve_size(struct ptp_ctx *c, uint64_t size)
{
	json_t *pf, *mf;
	int rc = bw_run_size(c, size, c->o->bidir, &pf, &mf);

	json_decref(pf);
	json_decref(mf);
	return rc;
}

static int bw_client(struct ptp_opts *o, const char *host)
{
	struct ptp_ctx c;
	struct out out;
	uint64_t sizes[32];
	int n, i, rc, wrc, empty = 0;

	memset(&c, 0, sizeof(c));
	c.ctl = -1;
	rc = ptp_out_init(&out, o);
	if (rc)
		return rc;
	rc = ptp_client_open(&c, o, host);
	if (rc)
		goto done;
	rc = bw_session_prepare(&c);
	if (rc)
		goto done;
	out_comment(&out, "fabscope bw: %s %s, %s -> %s, %d flow%s, %s%s",
		    o->transport, o->op, record_str(c.local_ep, "ip", "?"), c.peer_name,
		    o->flows, o->flows > 1 ? "s" : "", o->bidir ? "bidirectional, " : "",
		    o->iters ? "count mode" : "duration mode");
	n = ptp_sizes(o, sizes, 32);
	for (i = 0; i < n; i++) {
		json_t *m, *pf, *mf, *both = NULL;

		rc = ptp_send(&c, json_pack("{s:s, s:I}", "type", "run", "size", (json_int_t)sizes[i]));
		if (rc || (rc = ptp_recv(&c, &m, "ready")))
			break;
		json_decref(m);
		rc = bw_run_size(&c, sizes[i], 1, &pf, &mf);	/* the client always initiates */
		if (rc) {	/* what its flows had measured, "cut" */
			if (mf)
				emit_dir(&c, &out, mf, sizes[i], c.op != XPORT_OP_READ, c.flows_info, NULL,
					 c.op != XPORT_OP_READ ? mf : NULL, NULL);
			json_decref(mf);
			break;
		}
		if (o->bidir) {
			json_t *tmpl = ptp_record(&c, sizes[i], 1);

			both = record_derive(tmpl, "aggregate");
			json_decref(tmpl);
			json_object_set_new(both, "dir", json_string("both"));
			copy_inflight(both, mf);	/* both sides alike */
			json_object_set_new(both, "metrics", json_pack("{s:f, s:f, s:I, s:I}",
				"bw_gbps", 0.0, "msg_rate_mpps", 0.0, "bytes", (json_int_t)0,
				"msgs", (json_int_t)0));
		}
		/* data from the client's QPs (write, send) or the server's (read);
		 * the counters of the side the data leaves and of the side it reaches */
		empty |= emit_dir(&c, &out, mf, sizes[i], c.op != XPORT_OP_READ,
				  c.op != XPORT_OP_READ ? c.flows_info : json_object_get(pf, "info"), both,
				  c.op != XPORT_OP_READ ? mf : pf, c.op != XPORT_OP_READ ? pf : mf);
		empty |= emit_dir(&c, &out, pf, sizes[i], c.op == XPORT_OP_READ,
				  c.op == XPORT_OP_READ ? c.flows_info : json_object_get(pf, "info"), both,
				  c.op == XPORT_OP_READ ? mf : pf, c.op == XPORT_OP_READ ? pf : mf);
		if (both)
			out_record(&out, both);
		json_decref(both);
		json_decref(pf);
		json_decref(mf);
	}
	if (!rc)
		ptp_send(&c, json_pack("{s:s}", "type", "bye"));
	if (!rc && empty)	/* a size that measured nothing: said with its records */
		rc = -FS_EXIT_CHECK;
done:
	if ((wrc = out_finish(&out)) && !rc)
		rc = wrc;
	ptp_close(&c);
	return rc;
}

const struct ptp_test bw_test = {
	.name = "bw",
	.usage = bw_usage,
	.about = bw_about,
	.prepare = bw_session_prepare,
	.serve_size = bw_serve_size,
	.client = bw_client,
};

int cmd_bw(int argc, const char **argv)
{
	return ptp_cmd(&bw_test, argc, argv);
}
