/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * `fabscope allreduce` and `fabscope alltoall`: the collectives as
 * commands, with nccl-tests' columns and formulas.
 *
 * Where the ranks come from:
 *   -n N                 this process is rank 0 and starts ranks 1..N-1 as
 *                        children (fork; each in its --netns namespace when
 *                        given), joined to it by socketpairs
 *   mpirun / srun        every process finds its rank and the rank count in
 *                        the launcher's environment (OMPI_COMM_WORLD_RANK,
 *                        PMI_RANK, SLURM_PROCID, ...) and meets rank 0 at
 *                        --root HOST:PORT
 *   --rank R --nranks N  the same, by hand
 * Per-rank lists (--device, --bind, --netns) are indexed by the rank's
 * local index on its node (local launcher: the rank; mpirun/srun: the local
 * rank), so `-n 8 -t verbs --device mlx5_0,...,mlx5_7` is one rank per
 * rail (over tcp, --bind and --rail say it).
 *
 * Only rank 0 prints: one line (or record) per size as it is measured.
 * Errors come from the rank that saw them; under -n, where the ranks share
 * one stderr, a rank does not repeat an error another rank sent it.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/alloc.h"
#include "../core/builtin.h"
#include "../core/clock.h"
#include "../core/error.h"
#include "../core/net.h"
#include "../core/output.h"
#include "../core/record.h"
#include "../core/units.h"
#include "coll.h"

#define MAX_SIZES 64

static const char *const allreduce_usage[] = {
	"fabscope allreduce -n N [options]            (N ranks on this host)",
	"mpirun -np N fabscope allreduce --root HOST[:PORT] [options]",
	"fabscope allreduce --rank R --nranks N --root HOST[:PORT] [options]",
	NULL
};

static const char *const alltoall_usage[] = {
	"fabscope alltoall -n N [options]             (N ranks on this host)",
	"mpirun -np N fabscope alltoall --root HOST[:PORT] [options]",
	"fabscope alltoall --rank R --nranks N --root HOST[:PORT] [options]",
	NULL
};

static const char allreduce_about[] =
	"All-reduce (float32 sum, out of place) between N ranks over the transport, for each\n"
	"size from -b to -e: nccl-tests' columns (size, count, time, algbw, busbw, #wrong)\n"
	"and formulas, from the hosts, without GPUs.  algbw = size / time; busbw = algbw x\n"
	"2(n-1)/n, the rate each rank's link carries in a ring, comparable with the link\n"
	"rate.  After each size every element of every rank is checked; any wrong one\n"
	"makes the exit code 1.  Algorithms: ring (default; bandwidth) and rhd (recursive\n"
	"halving-doubling; fewer steps, for small sizes).  Ranks are ordered by rail, then\n"
	"node, so ring neighbours share a rail.\n"
	"\n"
	"Exit codes: 0 all correct, 1 wrong data, 2 usage, 3 environment, 4 a rank failed\n"
	"or hung, 130 interrupted (the sizes measured so far are kept).";

static const char alltoall_about[] =
	"All-to-all between N ranks over the transport, for each size from -b to -e: the\n"
	"size is a rank's whole buffer, each peer gets size/N of it (sizes round down to\n"
	"a multiple of 4N; one below 4N gives a rank nothing and is not run).  nccl-tests'\n"
	"columns and formulas: algbw = size / time; busbw = algbw x (n-1)/n, what leaves\n"
	"each rank.  After each size every element is checked; any wrong one makes the\n"
	"exit code 1.  Algorithms: pairwise (default; n-1 steps, one peer each) and direct\n"
	"(every peer at once: incast at every receiver).\n"
	"\n"
	"Exit codes: 0 all correct, 1 wrong data, 2 usage, 3 environment, 4 a rank failed\n"
	"or hung, 130 interrupted (the sizes measured so far are kept).";

static int env_int(const char *const *names, int *out)
{
	const char *v;
	char *end;
	long x;

	for (; *names; names++) {
		v = getenv(*names);
		if (!v || !*v)
			continue;
		errno = 0;
		x = strtol(v, &end, 10);
		if (errno || *end || x < 0 || x > 1 << 30)
			continue;
		*out = (int)x;
		return 1;
	}
	return 0;
}

/* The element of a per-rank list for local index i (lists may be given as
 * one comma-separated value or repeated options). */
static const char *pick(const struct opt_list *l, int i, char *buf, size_t len)
{
	int n = 0, k;

	for (k = 0; k < l->n; k++) {
		const char *s = l->v[k], *comma;

		for (;;) {
			comma = strchr(s, ',');
			n++;
			if (!comma)
				break;
			s = comma + 1;
		}
	}
	if (!n)
		return NULL;
	i %= n;
	for (k = 0; k < l->n; k++) {
		const char *s = l->v[k], *comma;

		for (;;) {
			comma = strchr(s, ',');
			if (!i--) {
				size_t m = comma ? (size_t)(comma - s) : strlen(s);

				snprintf(buf, len, "%.*s", (int)(m < len ? m : len - 1), s);
				return buf;
			}
			if (!comma)
				break;
			s = comma + 1;
		}
	}
	return NULL;
}

static int sizes_of(const struct coll_opts *o, uint64_t *sizes)
{
	double s = (double)o->min_bytes;
	int n = 0;

	while (s <= (double)o->max_bytes && n < MAX_SIZES) {
		uint64_t v = (uint64_t)s;

		if (!n || v != sizes[n - 1])
			sizes[n++] = v;
		if (o->factor <= 1.0)
			break;
		s *= o->factor;
	}
	return n;
}

/* One record: the ranks of group (gorder, gn) on one size. */
static json_t *group_record(struct coll_comm *c, uint64_t size, const int *members, int gn,
			    const double *times, const uint64_t *wrongs, json_t *labels)
{
	const struct coll_opts *o = c->o;
	json_t *rec = record_new(o->test), *eps = json_array();
	uint64_t count = coll_count(o, size, gn), wrong = 0, bytes;
	double avg = 0, lo = times[members[0]], hi = lo, algbw;
	int i;

	bytes = o->kind == COLL_ALLREDUCE ? count * 4 : count * 4 * (uint64_t)gn;
	for (i = 0; i < gn; i++) {
		int r = members[i];
		json_t *e = json_deep_copy(json_array_get(c->ranks, (size_t)r));

		avg += times[r];
		lo = times[r] < lo ? times[r] : lo;
		hi = times[r] > hi ? times[r] : hi;
		wrong += wrongs[r];
		json_object_set_new(e, "pos", json_integer(i));
		json_object_set(e, "ip", json_object_get(e, "addr"));
		json_object_del(e, "addr");
		json_array_append_new(eps, e);
	}
	avg /= gn;
	algbw = avg > 0 ? (double)bytes * 8 / (avg * 1e-6) / 1e9 : 0;
	json_object_set_new(rec, "transport", json_string(o->transport));
	json_object_set_new(rec, "op", json_string(o->kind == COLL_ALLREDUCE ? "sum" : "none"));
	json_object_set_new(rec, "algo", json_string(o->algo_name));
	json_object_set_new(rec, "dtype", json_string("float32"));
	json_object_set_new(rec, "msg_size_bytes", json_integer((json_int_t)bytes));
	json_object_set_new(rec, "count", json_integer((json_int_t)(o->kind == COLL_ALLREDUCE ? count :
								    count * (uint64_t)gn)));
	json_object_set_new(rec, "ranks", json_integer(gn));
	json_object_set_new(rec, "flows", json_integer(o->flows));
	if (o->multi_rail) {
		char g[32];
		int rail = coll_rail_of(c, members[0]);

		snprintf(g, sizeof(g), "rail %d", rail);
		json_object_set_new(rec, "scope", json_string("rail"));
		json_object_set_new(rec, "group", json_string(g));
		json_object_set_new(rec, "rail", json_integer(rail));
	} else {
		json_object_set_new(rec, "scope", json_string("aggregate"));
		json_object_set_new(rec, "group", json_string("all"));
	}
	json_object_set_new(rec, "endpoints", eps);
	json_object_set(rec, "labels", labels);
	json_object_set_new(rec, "params", json_pack("{s:I, s:I, s:I, s:i, s:b, s:b}", "warmup",
						     (json_int_t)o->warmup, "iters", (json_int_t)o->iters,
						     "chunk_bytes", (json_int_t)o->chunk, "tx_depth", o->tx_depth,
						     "check", o->check, "multi_rail", o->multi_rail));
	json_object_set_new(rec, "metrics",
			    json_pack("{s:f, s:f, s:f, s:f, s:f, s:I}", "time_us", avg, "time_us_min", lo,
				      "time_us_max", hi, "algbw_gbps", algbw,
				      "busbw_gbps", algbw * coll_bus_factor(o->kind, gn),
				      "wrong", o->check ? (json_int_t)wrong : (json_int_t)-1));
	json_object_set_new(rec, "status", json_string("ok"));
	return rec;
}

/* The records of one size: one for all ranks, or with --multi-rail one per
 * rail and their sum (rates added, the slowest rail's time).  Returns the
 * busbw for the footer's average and adds the wrong elements to *wrong. */
static double size_records(struct coll_comm *c, struct out *out, uint64_t size, const double *times,
			   const uint64_t *wrongs, json_t *labels, uint64_t *wrong)
{
	int n = c->nranks, *members = malloc((size_t)n * sizeof(int)), i, gn, groups = 0;
	double algbw = 0, busbw = 0, tmax = 0;
	uint64_t w = 0;
	json_t *sum = NULL;

	for (i = 0; i < n; i = i + gn) {
		int rail = coll_rail_of(c, c->order[i]);
		json_t *rec;

		for (gn = 0; i + gn < n && (!c->o->multi_rail || coll_rail_of(c, c->order[i + gn]) == rail); gn++)
			members[gn] = c->order[i + gn];
		rec = group_record(c, size, members, gn, times, wrongs, labels);
		algbw += record_num(rec, "metrics.algbw_gbps", 0);
		busbw += record_num(rec, "metrics.busbw_gbps", 0);
		if (record_num(rec, "metrics.time_us", 0) > tmax)
			tmax = record_num(rec, "metrics.time_us", 0);
		{	/* (in range, whole: a cast of one that is not would be undefined) */
			double wr = c->o->check ? record_num(rec, "metrics.wrong", 0) : 0;

			w += wr >= 1 && wr < 1.8e19 ? (uint64_t)wr : 0;
		}
		if (!sum)
			sum = json_deep_copy(rec);
		else
			json_array_extend(json_object_get(sum, "endpoints"), json_object_get(rec, "endpoints"));
		out_record(out, rec);
		json_decref(rec);
		groups++;
	}
	free(members);
	if (c->o->multi_rail) {
		json_t *m = json_object_get(sum, "metrics");

		json_object_set_new(sum, "scope", json_string("aggregate"));
		json_object_set_new(sum, "group", json_string("sum"));
		json_object_del(sum, "rail");
		json_object_set_new(sum, "ranks", json_integer(n));
		json_object_set_new(sum, "rails", json_integer(groups));
		json_object_set_new(m, "time_us", json_real(tmax));
		json_object_set_new(m, "algbw_gbps", json_real(algbw));
		json_object_set_new(m, "busbw_gbps", json_real(busbw));
		json_object_set_new(m, "wrong", json_integer(c->o->check ? (json_int_t)w : -1));
		json_object_del(m, "time_us_min");
		json_object_del(m, "time_us_max");
		out_record(out, sum);
	}
	json_decref(sum);
	*wrong += w;
	return busbw;
}

/* the ring position where the rail of ring position i begins */
static int first_of_rail(struct coll_comm *c, int i)
{
	int rail = coll_rail_of(c, c->order[i]);

	while (i > 0 && coll_rail_of(c, c->order[i - 1]) == rail)
		i--;
	return i;
}

/* The header's first line: at once, before the ranks meet (which takes a
 * while with large buffers); the ring follows when it is known. */
static void print_title(struct out *out, const struct coll_opts *o)
{
	char chunk[32];

	units_format_size(o->chunk, chunk, sizeof(chunk));
	out_comment(out, "fabscope %s: %d ranks, %s, %s, float32%s, chunk %s, %d flow%s per peer, "
		    "warmup %llu, iters %llu", o->test, o->nranks, o->transport, o->algo_name,
		    o->kind == COLL_ALLREDUCE ? " sum" : "", chunk, o->flows, o->flows > 1 ? "s" : "",
		    (unsigned long long)o->warmup, (unsigned long long)o->iters);
}

static void print_ring(struct out *out, struct coll_comm *c)
{
	const struct coll_opts *o = c->o;
	int i;

	if (o->multi_rail)
		out_comment(out, "multi-rail: one %s per rail, all rails at once; positions count within a rail",
			    o->algo == COLL_ALGO_RING ? "ring" : "group");
	for (i = 0; i < c->nranks; i++) {
		int r = c->order[i];
		json_t *e = json_array_get(c->ranks, (size_t)r);

		out_comment(out, "  ring position %-3d rank %-3d node %-16s rail %lld  %s",
			    o->multi_rail ? i - first_of_rail(c, i) : i, r,
			    json_string_value(json_object_get(e, "node")),
			    (long long)json_integer_value(json_object_get(e, "rail")),
			    json_string_value(json_object_get(e, "addr")));
	}
}

/* The least size that gives every rank of a group of n one 4-byte element:
 * an all-to-all hands each peer size / n bytes. */
static uint64_t least_size(const struct coll_opts *o, int n)
{
	return o->kind == COLL_ALLTOALL ? 4ull * (uint64_t)n : 4;
}

/* "4, 8 and 16" (the first few, then how many more) */
static void size_list(const uint64_t *v, int n, char *buf, size_t len)
{
	size_t o = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < n && o < len; i++) {
		if (i == 6) {
			snprintf(buf + o, len - o, " and %d more", n - i);
			return;
		}
		o += (size_t)snprintf(buf + o, len - o, "%s%llu", !i ? "" : i == n - 1 ? " and " : ", ",
				      (unsigned long long)v[i]);
	}
}

/* Sizes that give a rank of the largest group (gmax ranks) no element: all
 * of them is a usage error, said once (by rank 0, or by `say`); some are
 * skipped, with a warning from rank 0.  The sizes left in sizes[0..*n). */
static int drop_small(const struct coll_opts *o, int gmax, uint64_t *sizes, int *n, int say)
{
	uint64_t least = least_size(o, gmax);
	char list[200];
	int k = 0, i;

	while (k < *n && sizes[k] < least)
		k++;
	if (!k)
		return 0;
	if (k == *n) {
		if (!say)
			return -FS_EXIT_USAGE;
		if (*n == 1)
			return fs_err_usage("size %llu B is below %llu B, the least %s of %d ranks can run: each "
					    "rank needs one 4-byte element; give -b %llu or more",
					    (unsigned long long)sizes[0], (unsigned long long)least, o->test, gmax,
					    (unsigned long long)least);
		return fs_err_usage("every size (%llu to %llu B) is below %llu B, the least %s of %d ranks "
				    "can run: each rank needs one 4-byte element; give -e %llu or more",
				    (unsigned long long)sizes[0], (unsigned long long)sizes[*n - 1],
				    (unsigned long long)least, o->test, gmax, (unsigned long long)least);
	}
	if (say) {
		size_list(sizes, k, list, sizeof(list));
		fs_warn("size%s %s skipped: below %llu B, the least %s of %d ranks can run (one 4-byte "
			"element for each rank)", k > 1 ? "s" : "", list, (unsigned long long)least, o->test,
			gmax);
	}
	for (i = k; i < *n; i++)
		sizes[i - k] = sizes[i];
	*n -= k;
	return 0;
}

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* The most ranks in one group: all of them, or with --multi-rail the
 * largest rail's (every rank knows the rails from the root's table):
 * the longest run of one rail among the ranks' rails sorted.  -FS_EXIT_ENV
 * said when there is no memory for that. */
static int group_max(const struct coll_comm *c)
{
	int *rail, i, run = 0, most = 0;

	if (!c->o->multi_rail)
		return c->nranks;
	rail = fs_reallocarray(NULL, (size_t)c->nranks, sizeof(*rail));
	if (!rail)
		return fs_err_env("out of memory counting the ranks of each rail");
	for (i = 0; i < c->nranks; i++)
		rail[i] = coll_rail_of(c, i);
	qsort(rail, (size_t)c->nranks, sizeof(*rail), int_cmp);
	for (i = 0; i < c->nranks; i++) {
		run = i && rail[i] == rail[i - 1] ? run + 1 : 1;
		most = run > most ? run : most;
	}
	free(rail);
	return most;
}

/* Rank 0's progress line while a size runs long (a terminal only). */
struct progress {
	int on, i, n;
	uint64_t size, t0, last;
	/* the clock is read at iteration `next` of a phase (0: the first),
	 * then `stride` iterations on: every 50 to 100 ms, not every timed
	 * iteration of a fast size */
	uint64_t next, stride, read;
};

#define PROGRESS_STRIDE_MAX (1ull << 20)

/* A phase (warmup, the timed iterations) starts at iteration 1. */
static void progress_phase(struct progress *p)
{
	p->next = 0;
}

static void progress(struct progress *p, const char *what, uint64_t k, uint64_t of)
{
	uint64_t now;

	if (!p->on || k < p->next)
		return;
	now = clock_ns();
	if (now - p->read < 50000000ull)
		p->stride = p->stride < PROGRESS_STRIDE_MAX ? 2 * p->stride : p->stride;
	else if (now - p->read >= 100000000ull)
		p->stride = p->stride > 1 ? p->stride / 2 : 1;
	p->read = now;
	p->next = k + p->stride;
	if (now - p->t0 < 1000000000ull || now - p->last < 250000000ull)
		return;
	p->last = now;
	fs_progress("size %llu B (%d of %d): %s %llu of %llu", (unsigned long long)p->size, p->i + 1, p->n,
		    what, (unsigned long long)k, (unsigned long long)of);
}

void coll_progress_report(const struct coll_comm *c)
{
	char sz[32];
	double frac = c->total_w > 0 ? (c->done_w + (double)c->size * (double)c->k) / c->total_w : -1;

	units_format_size(c->size, sz, sizeof(sz));
	out_progress((double)c->moved, frac, "size %s (%d of %d), call %llu of %llu", sz, c->size_i + 1, c->nsizes,
		     (unsigned long long)(c->k < c->calls ? c->k + 1 : c->k), (unsigned long long)c->calls);
}

/* One size: warm up, synchronize, time the iterations, check. */
static int run_size(struct coll_comm *c, uint64_t count, double *time_us, uint64_t *wrong,
		    struct progress *p)
{
	const struct coll_opts *o = c->o;
	int (*op)(struct coll_comm *, uint64_t) = o->kind == COLL_ALLREDUCE ? coll_allreduce : coll_alltoall;
	uint64_t i, t0;
	int rc;

	c->size = p->size;
	c->size_i = p->i;
	c->nsizes = p->n;
	c->calls = o->warmup + o->iters;
	c->k = 0;

	coll_fill(c, count);
	if (net_stop)	/* (between two sizes) */
		return -FS_EXIT_INTERRUPTED;
	p->t0 = p->last = p->read = clock_ns();
	p->stride = 1;
	progress_phase(p);
	for (i = 0; i < o->warmup; i++) {
		progress(p, "warmup", i + 1, o->warmup);
		if ((rc = op(c, count)))
			return rc;
		c->k++;
	}
	rc = coll_barrier(c);
	if (rc)
		return rc;
	progress_phase(p);
	t0 = clock_ns();
	for (i = 0; i < o->iters; i++) {
		if (i == o->iters - 1 && o->corrupt == c->rank)
			c->corrupt_now = 1;
		progress(p, "iteration", i + 1, o->iters);
		if ((rc = op(c, count)))
			return rc;
		c->k++;
	}
	*time_us = (double)(clock_ns() - t0) / 1e3 / (double)o->iters;
	*wrong = o->check ? coll_check(c, count) : 0;
	return 0;
}

/*
 * A size that failed on this rank (rc; data: in the data path, else in
 * gathering the results): say it once and tell the others.  An interruption
 * - this rank's SIGINT or SIGTERM, or the word of the rank that had it - is
 * said by rank 0 alone, with the size it stopped in, and not as the broken
 * connections it leaves the other ranks (between -n's ranks, which share a
 * stderr; a rank of its own says it was interrupted, or that the root was).
 */
static int size_failed(struct coll_comm *c, int rc, int data, const uint64_t *sizes, int i, int nsizes,
		       int measured)
{
	const struct coll_opts *o = c->o;
	char msg[400], cause[400];
	int code = 0, heard = 0, intr = net_stop || rc == -FS_EXIT_INTERRUPTED;

	if (!intr && data && c->err[0])	/* the rank it broke with, or the root, may have said why */
		heard = coll_peer_cause(c, 500, cause, sizeof(cause), &code);
	if (heard && code == FS_EXIT_INTERRUPTED)
		intr = 1;
	if (intr) {
		if (c->rank == 0) {
			char kept[64];

			if (measured)
				snprintf(kept, sizeof(kept), "the %d size%s measured %s kept", measured,
					 measured > 1 ? "s" : "", measured > 1 ? "are" : "is");
			else
				snprintf(kept, sizeof(kept), "nothing measured yet");
			fs_err(FS_EXIT_INTERRUPTED, "interrupted during size %llu B (%d of %d)%s: %s",
			       (unsigned long long)sizes[i], i + 1, nsizes, net_stop ? "" : ", at another rank", kept);
			coll_abort(c, FS_EXIT_INTERRUPTED, net_stop ? "rank 0 was interrupted" :
				   "another rank was interrupted");
		} else if (net_stop) {
			if (!o->local)
				fs_err(FS_EXIT_INTERRUPTED, "rank %d: interrupted", c->rank);
			snprintf(msg, sizeof(msg), "rank %d was interrupted", c->rank);
			coll_abort(c, FS_EXIT_INTERRUPTED, msg);
		} else if (heard && !o->local) {
			fs_err(FS_EXIT_INTERRUPTED, "rank %d: %s", c->rank, cause);
		}
		return -FS_EXIT_INTERRUPTED;
	}
	if (!data) {
		coll_abort(c, -rc, "a rank failed (see rank 0's message)");
		return rc;
	}
	if (c->err[0]) {
		snprintf(msg, sizeof(msg), "rank %d: %s", c->rank, c->err);
		/* the rank it broke with failed first: its reason leads (between
		 * -n's ranks it said it already) */
		if (c->rank == 0 && heard && !o->local)
			rc = fs_err(-rc, "%s (then %s)", cause, msg);
		else
			rc = fs_err(-rc, "%s", msg);
	} else {
		snprintf(msg, sizeof(msg), "rank %d failed (see its message)", c->rank);
	}
	coll_abort(c, -rc, msg);
	return rc;
}

static int rank_main(struct coll_opts *o, int lfd, const int *child_fds)
{
	struct coll_comm c;
	struct out out;
	struct progress prog = { 0 };
	uint64_t sizes[MAX_SIZES], wrong_all = 0, *wrongs = NULL;
	double *times = NULL, busbw_sum = 0;
	json_t *labels = NULL;
	const char *bad = NULL;
	int nsizes = sizes_of(o, sizes), i, rc, wrc, measured = 0, gmax = 0;

	if (record_labels(&o->labels, &labels, &bad))
		return fs_err_usage(RECORD_LABEL_ERR, bad);
	out_init(&out, o->json ? OUT_JSON : OUT_TEXT, stdout);
	if (o->rank == 0 && o->output && (rc = out_json_file(&out, o->output))) {
		json_decref(labels);
		return rc;	/* (said) */
	}
	if (o->rank == 0)
		print_title(&out, o);
	rc = coll_comm_open(&c, o, lfd, child_fds);
	if (rc && (net_stop || rc == -FS_EXIT_INTERRUPTED)) {
		rc = -FS_EXIT_INTERRUPTED;
		if (o->rank == 0)
			fs_err(FS_EXIT_INTERRUPTED, "interrupted while the ranks met: nothing measured");
		else if (net_stop && !o->local)
			fs_err(FS_EXIT_INTERRUPTED, "rank %d: interrupted", o->rank);
	}
	/* sizes that give a rank no element: skipped, or all of them refused */
	if (!rc && (gmax = group_max(&c)) < 0)
		rc = gmax;
	if (!rc)
		rc = drop_small(o, gmax, sizes, &nsizes, o->rank == 0);
	if (rc) {
		coll_comm_close(&c);
		json_decref(labels);
		if (o->rank == 0)
			out_finish(&out);
		return rc;
	}
	if (o->rank == 0)
		print_ring(&out, &c);
	prog.on = o->rank == 0 && o->progress;
	prog.n = nsizes;
	times = calloc((size_t)c.nranks, sizeof(*times));
	wrongs = calloc((size_t)c.nranks, sizeof(*wrongs));
	for (i = 0; i < nsizes; i++)	/* (the progress's share of the work done) */
		c.total_w += (double)sizes[i] * (double)(o->warmup + o->iters);
	for (i = 0; i < nsizes && !rc; i++) {
		uint64_t count = coll_count(o, sizes[i], c.gn), wrong = 0;
		double t = 0;

		if (i)
			c.done_w += (double)sizes[i - 1] * (double)(o->warmup + o->iters);

		prog.i = i;
		prog.size = sizes[i];
		rc = run_size(&c, count, &t, &wrong, &prog);
		fs_progress_clear();	/* (the rows may go to the same terminal) */
		if (rc) {
			rc = size_failed(&c, rc, 1, sizes, i, nsizes, measured);
			break;
		}
		rc = coll_gather_result(&c, t, wrong, times, wrongs);
		if (rc) {
			rc = size_failed(&c, rc, 0, sizes, i, nsizes, measured);
			break;
		}
		if (o->rank == 0) {
			busbw_sum += size_records(&c, &out, sizes[i], times, wrongs, labels, &wrong_all);
			measured++;
		}
	}
	if (o->rank == 0) {
		if (measured) {
			out_comment(&out, "Out of bounds values : %llu %s", (unsigned long long)wrong_all,
				    !o->check ? "(not checked)" : wrong_all ? "WRONG" : "OK");
			out_comment(&out, "Avg bus bandwidth    : %.4g GB/s (%.4g Gb/s) over %d size%s",
				    busbw_sum / measured / 8, busbw_sum / measured, measured,
				    measured > 1 ? "s" : "");
		}
		if ((wrc = out_finish(&out)) && !rc)
			rc = wrc;
		if (!rc && wrong_all)
			rc = fs_err(FS_EXIT_CHECK, "%llu wrong element%s: the data check failed (a rank, its "
				    "NIC or the fabric corrupted data; see the #wrong column)",
				    (unsigned long long)wrong_all, wrong_all > 1 ? "s" : "");
	}
	free(times);
	free(wrongs);
	json_decref(labels);
	coll_comm_close(&c);
	if (net_stop && !rc) {
		rc = -FS_EXIT_INTERRUPTED;
		if (o->rank == 0)
			fs_err(FS_EXIT_INTERRUPTED, "interrupted after the last size: all %d measured", measured);
	}
	return rc;
}

/* The per-rank lists' picks for the rank with local index i. */
static void apply_local(struct coll_opts *o, int i)
{
	static char dev[256], bind[256];
	char rail[64];

	o->device = pick(&o->devices, i, dev, sizeof(dev));
	o->bind = pick(&o->binds, i, bind, sizeof(bind));
	if (pick(&o->rails, i, rail, sizeof(rail)))
		o->rail = atoi(rail);
	else
		o->rail = o->devices.n ? i % o->ndevices : 0;
}

/* -n N: ranks 1..N-1 as children of this process, rank 0 here. */
static int launch_local(struct coll_opts *o)
{
	int n = o->local_n, i, rc, *fds = calloc((size_t)n, sizeof(int));
	pid_t *pids = calloc((size_t)n, sizeof(pid_t)), parent = getpid();
	char buf[256];

	o->local = 1;
	for (i = 1; i < n; i++) {
		int sv[2];

		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
			return fs_err_env("socketpair: %s", strerror(errno));
		fflush(NULL);
		pids[i] = fork();
		if (pids[i] < 0)
			return fs_err_env("fork: %s", strerror(errno));
		if (!pids[i]) {
			const char *ns;
			int k;

			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent)
				_exit(FS_EXIT_PEER);
			for (k = 1; k < i; k++)
				close(fds[k]);
			close(sv[0]);
			o->rank = i;
			o->ctl_fd = sv[1];
			ns = pick(&o->netns, i, buf, sizeof(buf));
			if (ns) {
				char path[300];
				int nfd;

				snprintf(path, sizeof(path), "/run/netns/%s", ns);
				nfd = open(path, O_RDONLY | O_CLOEXEC);
				if (nfd < 0 || setns(nfd, CLONE_NEWNET)) {
					fs_err_env("rank %d: cannot enter network namespace '%s': %s", i, ns,
						   strerror(errno));
					_exit(FS_EXIT_ENV);
				}
				close(nfd);
				if (!o->node)
					o->node = ns;
			}
			apply_local(o, i);
			free(fds);
			free(pids);
			/* the rank returns all the way out of main, like any command */
			return rank_main(o, -1, NULL);
		}
		close(sv[1]);
		fds[i] = sv[0];
	}
	o->rank = 0;
	{
		static char nsb[256];	/* o->node may point into it for the whole run */
		const char *ns = pick(&o->netns, 0, nsb, sizeof(nsb));

		if (ns) {
			char path[300];
			int nfd;

			snprintf(path, sizeof(path), "/run/netns/%s", ns);
			nfd = open(path, O_RDONLY | O_CLOEXEC);
			if (nfd < 0 || setns(nfd, CLONE_NEWNET))
				rc = fs_err_env("rank 0: cannot enter network namespace '%s': %s", ns, strerror(errno));
			else
				rc = 0;
			if (nfd >= 0)
				close(nfd);
			if (!o->node)
				o->node = ns;
		} else {
			rc = 0;
		}
		apply_local(o, 0);
	}
	if (!rc)
		rc = rank_main(o, -1, fds);
	else
		for (i = 1; i < n; i++)
			close(fds[i]);
	/* the children end once the root is done with them; a stuck one is
	 * killed; one that failed after the run (nothing else noticed) fails it */
	for (i = 1; i < n; i++) {
		int st = 0, waited = 0;

		while (waitpid(pids[i], &st, WNOHANG) == 0) {
			if (waited++ > 50 * 5) {
				kill(pids[i], SIGKILL);
				waitpid(pids[i], &st, 0);
				break;
			}
			usleep(20000);
		}
		if (!rc && WIFSIGNALED(st))
			rc = fs_err_peer("rank %d died of signal %d at the end of the run", i, WTERMSIG(st));
		else if (!rc && WIFEXITED(st) && WEXITSTATUS(st))
			rc = fs_err_peer("rank %d exited with status %d at the end of the run", i, WEXITSTATUS(st));
	}
	free(fds);
	free(pids);
	return rc;
}

static int count_list(const struct opt_list *l)
{
	int n = 0, k;

	for (k = 0; k < l->n; k++) {
		const char *s = l->v[k];

		n++;
		while ((s = strchr(s, ',')))
			s++, n++;
	}
	return n;
}

/* The options of the Verbs group given with another transport: refused,
 * by name, as `fabscope bw` refuses them. */
static int verbs_only(const struct coll_opts *o)
{
	const char *given[5], *const devices_hint =
		"; over tcp, --bind gives each rank its address and --rail its rail";
	char list[128];
	size_t len = 0;
	int n = 0, i;

	if (o->devices.n)
		given[n++] = "--device";
	if (o->ib_port)
		given[n++] = "--ib-port";
	if (o->gid_index >= 0)
		given[n++] = "--gid-index";
	if (o->mtu)
		given[n++] = "--mtu";
	if (o->qp_timeout)
		given[n++] = "--qp-timeout";
	if (!n)
		return 0;
	list[0] = 0;
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", !i ? "" : i < n - 1 ? ", " :
					" and ", given[i]);
	return fs_err_usage("%s %s for -t verbs, not -t %s%s", list, n > 1 ? "are" : "is", o->transport,
			    o->devices.n ? devices_hint : "");
}

/* Every size too small for the ranks, refused before any rank starts (with
 * --multi-rail the groups are known only once the ranks have met: there,
 * rank_main says it). */
static int too_small(const struct coll_opts *o)
{
	uint64_t sizes[MAX_SIZES];
	int n = sizes_of(o, sizes);

	if (o->multi_rail || !n || sizes[n - 1] >= least_size(o, o->nranks))
		return 0;
	return drop_small(o, o->nranks, sizes, &n, 1);
}

/* The cores this process may run on (what nproc says), at least 1. */
static int cores_here(void)
{
	cpu_set_t set;
	long n;

	if (!sched_getaffinity(0, sizeof(set), &set) && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

/* -n N: more ranks than cores measure the CPUs' turns, not the fabric; and
 * a command line with nccl-tests' habits (its -n is the iterations, with
 * -w the warm-up) likely meant -i.  Said, the run goes on. */
static void local_hints(const struct coll_opts *o, int iters_given, int warmup_given)
{
	int cores = cores_here(), n = o->local_n;

	if (n > cores)
		fs_warn("%d ranks on this host's %d core%s: they take turns on the CPUs and the times "
			"measure that, not the fabric (give -n %d or fewer, or start ranks on more hosts "
			"with mpirun)", n, cores, cores > 1 ? "s" : "", cores);
	if (!iters_given && (n > cores || warmup_given))
		fs_warn("-n %d starts %d rank%s; if it was to be nccl-tests' -n (iterations), that is -i "
			"here: -i %d", n, n, n > 1 ? "s" : "", n);
}

/* After parsing: check, find the ranks, run.  0 or -exit code. */
/* where mpirun and srun say a process's rank */
static const char *const ranks_env[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID", NULL };

/*
 * nccl-tests' letters that fabscope reads as nccl-tests does, or refuses
 * with what to give: -g N (GPUs per process) is N ranks in this process,
 * -n N here, and 1 under mpirun or srun, where a rank is a process (a
 * larger N cannot mean the same there); -c 0|1 checks the data or not; a
 * number for -t is nccl-tests' -t THREADS, not a transport.  gpus and
 * check_c: as given, 0 and -1 when not.  0, or -FS_EXIT_USAGE said.
 */
static int nccl_letters(struct coll_opts *o, int gpus, int check_c, int *no_check)
{
	int r;

	if (o->transport[0] && strspn(o->transport, "0123456789") == strlen(o->transport))
		return fs_err_usage("-t %s: -t is the transport here (tcp or verbs); nccl-tests' -t THREADS is "
				    "-n RANKS (a rank is a process)", o->transport);
	if (check_c >= 0) {
		if (check_c == 1 && *no_check)
			return fs_err_usage("-c 1 (check the data) and --no-check contradict each other: give one");
		*no_check |= !check_c;
	}
	if (!gpus)
		return 0;
	if (o->local_n && o->local_n != gpus)
		return fs_err_usage("-g %d and -n %d: nccl-tests' -g is -n here (the ranks this process starts): "
				    "give one", gpus, o->local_n);
	if (o->rank >= 0 || o->nranks > 0 || o->root || o->ctl_fd >= 0 || env_int(ranks_env, &r)) {
		if (gpus == 1)	/* one GPU a process: one rank a process, as here */
			return 0;
		return fs_err_usage("-g %d: a fabscope rank is one process, so under mpirun or srun (or with "
				    "--rank) give -g 1 and start %d times the processes (-np)", gpus, gpus);
	}
	o->local_n = gpus;
	return 0;
}

static int coll_main(struct coll_opts *o, int no_check, int ctl_fd, uint64_t chunk, int iters_given,
		     int warmup_given)
{
	static const char *const size_env[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS",
						NULL };
	static const char *const local_env[] = { "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
						 "SLURM_LOCALID", NULL };
	enum coll_kind kind = o->kind;
	int from_env = 0, user_rank, user_nranks, local_rank = 0, rc;

	fs_set_verbosity(o->verbose);
	o->check = !no_check;
	o->ctl_fd = ctl_fd;
	if (chunk)
		o->chunk = chunk;
	o->chunk &= ~(uint64_t)3;
	if (!o->algo_name)
		o->algo_name = kind == COLL_ALLREDUCE ? "ring" : "pairwise";
	if (kind == COLL_ALLREDUCE && !strcmp(o->algo_name, "ring"))
		o->algo = COLL_ALGO_RING;
	else if (kind == COLL_ALLREDUCE && !strcmp(o->algo_name, "rhd"))
		o->algo = COLL_ALGO_RHD;
	else if (kind == COLL_ALLTOALL && !strcmp(o->algo_name, "pairwise"))
		o->algo = COLL_ALGO_PAIRWISE;
	else if (kind == COLL_ALLTOALL && !strcmp(o->algo_name, "direct"))
		o->algo = COLL_ALGO_DIRECT;
	else
		return fs_err_usage("unknown --algo '%s' for %s: use %s", o->algo_name, o->test,
				     kind == COLL_ALLREDUCE ? "ring or rhd" : "pairwise or direct");
	if (!xport_find(o->transport))
		return xport_check(o->transport);
	if (strcmp(o->transport, "verbs") && (rc = verbs_only(o)))
		return rc;
	if (o->mtu && (o->mtu & (o->mtu - 1)))
		return fs_err_usage("invalid MTU %d: use 256, 512, 1024, 2048 or 4096", o->mtu);
	if (xport_poll_mode_parse(o->poll, NULL))
		return fs_err_usage("unknown --poll mode '%s': use busy, event or adaptive", o->poll);
	/* nccl-tests' defaults (32M); one of -b and -e alone is one size */
	if (!o->min_bytes && !o->max_bytes)
		o->min_bytes = o->max_bytes = 32u << 20;
	else if (!o->max_bytes)
		o->max_bytes = o->min_bytes;
	else if (!o->min_bytes)
		o->min_bytes = o->max_bytes;
	if (o->max_bytes < o->min_bytes)
		return fs_err_usage("-e %llu is below -b %llu: the sweep goes up from -b to -e",
				    (unsigned long long)o->max_bytes, (unsigned long long)o->min_bytes);
	if (o->factor < 1.0)
		return fs_err_usage("--stepfactor must be at least 1 (got %g)", o->factor);
	if (o->max_bytes > o->min_bytes) {	/* the sweep must get to -e, within MAX_SIZES sizes */
		double v = (double)o->min_bytes;
		int k = 1;

		if (o->factor == 1.0)
			return fs_err_usage("--stepfactor 1 never gets from -b to -e: give a factor over 1, "
					    "or one size (-b alone)");
		while ((v *= o->factor) <= (double)o->max_bytes && k <= MAX_SIZES)
			k++;
		if (k > MAX_SIZES)
			return fs_err_usage("-b to -e by --stepfactor %g is over %d sizes: give a larger factor",
					    o->factor, MAX_SIZES);
	}
	o->ndevices = count_list(&o->devices);
	{
		char buf[64], *end;
		int i, k = count_list(&o->rails);

		for (i = 0; i < k; i++) {
			long v = strtol(pick(&o->rails, i, buf, sizeof(buf)), &end, 10);

			if (!buf[0] || *end || v < 0 || v > 1023)
				return fs_err_usage("invalid rail '%s' in --rail: expected numbers 0-1023", buf);
		}
	}
	{	/* here, not once in every rank that -n starts */
		json_t *l;
		const char *bad;

		if (record_labels(&o->labels, &l, &bad))
			return fs_err_usage(RECORD_LABEL_ERR, bad);
		json_decref(l);
	}
	user_rank = o->rank;
	user_nranks = o->nranks;
	if (o->local_n) {
		if (user_rank >= 0 || user_nranks > 0 || o->root)
			return fs_err_usage("-n starts the ranks here: it does not go with --rank, --nranks or --root");
		if (o->corrupt >= o->local_n)
			return fs_err_usage("--corrupt %d: there are only %d ranks", o->corrupt, o->local_n);
		o->nranks = o->local_n;
		if ((rc = too_small(o)))
			return rc;
		local_hints(o, iters_given, warmup_given);
		o->progress = fs_progress_enable();	/* (before the ranks fork: see error.h) */
		net_stop_on_signals();
		return launch_local(o);
	}
	if (user_rank < 0 && env_int(ranks_env, &o->rank))
		from_env = 1;
	if (user_nranks < 0 && !env_int(size_env, &o->nranks))
		o->nranks = -1;
	if (o->rank < 0 && o->nranks < 0)	/* alone, a rank measures no fabric */
		return fs_err_usage("how many ranks? give -n N to start N here, --rank R --nranks N to each, "
				    "or run under mpirun or srun");
	if (o->rank < 0 || o->nranks < 1)
		return fs_err_usage("give both --rank and --nranks, run under mpirun or srun, or use -n N");
	if (o->rank >= o->nranks)
		return fs_err_usage("rank %d is out of range for %d ranks", o->rank, o->nranks);
	if (o->nranks > COLL_MAX_RANKS)
		return fs_err_usage("%d ranks: at most %d", o->nranks, COLL_MAX_RANKS);
	if (o->rank > 0 && !o->root && o->ctl_fd < 0)
		return fs_err_usage("rank %d needs --root HOST[:PORT]: where rank 0 listens", o->rank);
	if ((rc = too_small(o)))
		return rc;
	o->progress = o->rank == 0 && fs_progress_enable();
	if (!from_env || !env_int(local_env, &local_rank))
		local_rank = 0;
	apply_local(o, local_rank);
	net_stop_on_signals();
	if (o->rank == 0 && o->nranks > 1 && o->ctl_fd < 0) {
		int lfd, port;

		rc = coll_root_listen(o, &lfd, &port);
		if (rc)
			return rc;
		fs_log(1, "rank 0: waiting for %d ranks on port %d", o->nranks - 1, port);
		/* under `fabscope agent`: the coordinator starts the other ranks
		 * once it knows the port (--port 0 takes any free one) */
		out_sink_event("listening", json_integer(port));
		rc = rank_main(o, lfd, NULL);
		close(lfd);
		return rc;
	}
	return rank_main(o, -1, NULL);
}

static int coll_cmd(enum coll_kind kind, int argc, const char **argv)
{
	struct coll_opts o = {
		.kind = kind, .test = kind == COLL_ALLREDUCE ? "allreduce" : "alltoall",
		.factor = 2, .warmup = UINT64_MAX, .iters = 0,	/* (5 and 20: not given) */
		.chunk = 1u << 20, .check = 1, .flows = 1, .tx_depth = 64, .tclass = -1,
		.nranks = -1, .rank = -1, .gid_index = -1, .corrupt = -1, .port = COLL_DEFAULT_PORT,
		.timeout_s = 30, .transport = "tcp", .poll = "event", .ctl_fd = -1,
	};
	int no_check = 0, nargs = 0, rc, ctl_fd = -1, iters_given, warmup_given, gpus = 0, check_c = -1;
	uint64_t chunk = 0;
	const struct opt opts[] = {
		OPT_GROUP("Ranks"),
		OPT_INT('n', "ranks", &o.local_n, "N", "start N ranks on this host (rank 0 is this process; nccl-tests' -n, the iterations, is -i here)", 1, COLL_MAX_RANKS),
		OPT_INT('g', NULL, &gpus, "N", "nccl-tests' -g (GPUs per process): N ranks in this process, as -n N; under mpirun or srun 1 (a rank is a process)", 1, COLL_MAX_RANKS),
		OPT_STRING(0, "root", &o.root, "HOST[:PORT]", "where rank 0 listens, for ranks started by mpirun, srun or by hand (default port 18530)"),
		OPT_INT(0, "rank", &o.rank, "R", "this process's rank (default: from mpirun's or srun's environment)", 0, COLL_MAX_RANKS - 1),
		OPT_INT(0, "nranks", &o.nranks, "N", "the number of ranks (default: from the environment)", 1, COLL_MAX_RANKS),
		OPT_BOOL(0, "multi-rail", &o.multi_rail, "one ring (group) per rail, all rails at once; records per rail and their sum"),
		OPT_LIST(0, "rail", &o.rails, "K,...", "rail per local rank (default: its index in --device, else 0); the ring is ordered by rail, then node"),
		OPT_STRING(0, "node", &o.node, "NAME", "this rank's node name in records (default: the host name, or its --netns)"),
		OPT_LIST('d', "device", &o.devices, "DEV,...", "RDMA device per local rank (verbs), e.g. mlx5_0,mlx5_1: rank i uses the (i mod count)-th"),
		OPT_LIST(0, "bind", &o.binds, "ADDR,...", "local address per local rank: its data connections use it (selects the rail)"),
		OPT_LIST(0, "netns", &o.netns, "NS,...", "-n: run rank i in network namespace NS number i (test beds)"),
		OPT_INT('p', "port", &o.port, "PORT", "rank 0's control port when --root names none (0: any free port)", 0, 65535),
		OPT_SECONDS(0, "timeout", &o.timeout_s, "SECONDS", "give up when the ranks have not all met this long after starting, or a rank is silent this long mid-run (default 30)"),
		OPT_INT(0, "ctl-fd", &ctl_fd, "FD", "(internal) the control socket a launcher handed down", 0, 65535),
		OPT_GROUP("Test"),
		OPT_STRING('t', "transport", &o.transport, "NAME", "transport: tcp (default) or verbs"),
		OPT_STRING('A', "algo", &o.algo_name, "NAME", kind == COLL_ALLREDUCE ?
			   "algorithm: ring (default) or rhd (recursive halving-doubling)" :
			   "algorithm: pairwise (default) or direct (every peer at once)"),
		OPT_SIZE('b', "minbytes", &o.min_bytes, "SIZE", "smallest size, e.g. 1M (default: -e, else 32M; nccl-tests' -b; in bw, -b is bidirectional)", 4, 1ll << 34),
		OPT_SIZE('e', "maxbytes", &o.max_bytes, "SIZE", "largest size (default: -b, else 32M)", 4, 1ll << 34),
		OPT_NUMBER('f', "stepfactor", &o.factor, "F", "multiply the size by F from -b to -e (default 2; in capture and pcap, -f is a filter)"),
		OPT_COUNT('w', "warmup", &o.warmup, "N", "untimed iterations per size (default 5)", 0, 0),
		OPT_COUNT('i', "iters", &o.iters, "N", "timed iterations per size (default 20)", 1, 0),
		OPT_SIZE(0, "chunk", &chunk, "SIZE", "the largest message: a transfer travels in pieces of this size (default 1M)", 4, 1ll << 30),
		OPT_INT('q', "flows", &o.flows, "N", "flows (TCP connections or QPs) per peer; chunks take turns (default 1)", 1, 64),
		OPT_INT(0, "tx-depth", &o.tx_depth, "N", "messages outstanding per transfer (default 64)", 1, 4096),
		OPT_INT(0, "tclass", &o.tclass, "N", "traffic class (IP TOS byte; DSCP = N >> 2)", 0, 255),
		OPT_BOOL(0, "no-check", &no_check, "do not check the data (nccl-tests' -c 0)"),
		OPT_INT('c', NULL, &check_c, "0|1", "nccl-tests' -c: 1 checks the data (the default), 0 does not (--no-check)", 0, 1),
		OPT_INT(0, "corrupt", &o.corrupt, "RANK", "testing: spoil one element arriving at RANK in the last iteration, to see the check fail", 0, COLL_MAX_RANKS - 1),
		OPT_GROUP("Verbs (-t verbs)"),
		OPT_INT(0, "ib-port", &o.ib_port, "N", "port of the device (default: the first active one)", 1, 255),
		OPT_INT('x', "gid-index", &o.gid_index, "N", "GID index (default: the RoCEv2 GID of the address)", 0, 255),
		OPT_INT('m', "mtu", &o.mtu, "BYTES", "path MTU: 256, 512, 1024, 2048 or 4096 (default: the smaller active MTU of both ports)", 256, 4096),
		OPT_INT(0, "qp-timeout", &o.qp_timeout, "N", "local ACK timeout, 4.096 us << N (default 14; 18 on Soft-RoCE)", 1, 31),
		OPT_STRING(0, "poll", &o.poll, "MODE", "wait for completions: busy, event (default) or adaptive"),
		OPT_GROUP("Output"),
		OPT_BOOL(0, "json", &o.json, "print the records as one JSON array instead of a table"),
		OPT_FILE('o', "output", &o.output, "FILE", "also write the records to FILE, a JSON line each (as results.jsonl)"),
		OPT_LIST(0, "label", &o.labels, "K=V", "add a label to every record, e.g. lb=ecmp (repeatable)"),
		OPT_VERBOSE(&o.verbose),
		OPT_END(),
	};

	fs_set_progname(kind == COLL_ALLREDUCE ? "fabscope allreduce" : "fabscope alltoall");
	rc = opts_parse(argc, argv, opts, kind == COLL_ALLREDUCE ? allreduce_usage : alltoall_usage,
			kind == COLL_ALLREDUCE ? allreduce_about : alltoall_about, &nargs);
	if (rc)
		return rc == OPTS_HELP ? 0 : -rc;
	iters_given = o.iters != 0;
	warmup_given = o.warmup != UINT64_MAX;
	if (!iters_given)
		o.iters = 20;
	if (!warmup_given)
		o.warmup = 5;
	o.ctl_fd = ctl_fd;
	if (nargs)
		rc = fs_err_usage("unexpected argument '%s' (the ranks meet at --root HOST:PORT)", argv[0]);
	else if (!(rc = nccl_letters(&o, gpus, check_c, &no_check)))
		rc = coll_main(&o, no_check, ctl_fd, chunk, iters_given, warmup_given);
	opt_list_release(&o.devices);
	opt_list_release(&o.rails);
	opt_list_release(&o.binds);
	opt_list_release(&o.netns);
	opt_list_release(&o.labels);
	return -rc;
}

int cmd_allreduce(int argc, const char **argv)
{
	return coll_cmd(COLL_ALLREDUCE, argc, argv);
}

int cmd_alltoall(int argc, const char **argv)
{
	return coll_cmd(COLL_ALLTOALL, argc, argv);
}
