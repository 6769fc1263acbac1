/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The coordinator's rounds and phases (see coord.c): the jobs of a round
 * on every lane, run at most parallel= at once; the phases in turn, with
 * their time estimate; the progress line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/clock.h"
#include "../core/error.h"
#include "../core/record.h"
#include "../core/testhook.h"
#include "coord-int.h"

/* ---- progress ---- */

static void fmt_eta(double s, char *buf, size_t len)
{
	if (s < 0)
		s = 0;
	if (!(s < 1e9))	/* (an estimate past any run: what an int holds) */
		s = 1e9;
	if (s >= 3600)
		snprintf(buf, len, "%d:%02d:%02d", (int)s / 3600, (int)s / 60 % 60, (int)s % 60);
	else
		snprintf(buf, len, "%d:%02d", (int)s / 60, (int)s % 60);
}

/* ---- time: the cost model as the run learns it, the ETA ---- */

int coord_phase_lanes(const struct coord *c, int pi, struct coord_lanes *cl)
{
	const struct plan_phase *ph = &c->plan.phases[pi];
	int *idx, li;

	memset(cl, 0, sizeof(*cl));
	if (PLAN_PER_NODE(ph->kind)) {
		cl->n = 1;
		cl->nodes[0] = c->plan.nnodes;
		return 0;
	}
	if (!(idx = malloc((size_t)(c->plan.nnodes ? c->plan.nnodes : 1) * sizeof(*idx))))
		return fs_err_env("out of memory for the lanes of [%s]", ph->name);
	cl->n = plan_lanes(&c->plan, ph, cl->lane, PLAN_MAX_LANES);
	for (li = 0; li < cl->n; li++)
		cl->nodes[li] = coord_lane_nodes(c, cl->lane[li], idx);
	free(idx);
	return 0;
}

double coord_phase_est_s(const struct coord *c, int pi, const struct coord_lanes *cl, int t0, int r0)
{
	return plan_phase_cost_s(&c->plan.phases[pi], cl->lane, cl->nodes, cl->n, &c->cost, t0, r0);
}

/* The nodes of job j's lane (its phase's lanes known), else 2 (a re-test's pair: 2) */
static int job_lane_nodes(const struct coord *c, const struct cjob *j)
{
	const struct coord_lanes *cl = c->lanes ? &c->lanes[j->ph - c->plan.phases] : NULL;
	int li;

	if (j->m)
		return j->nm;
	if (j->retest_for)	/* a pair alone */
		return 2;
	for (li = 0; cl && li < cl->n; li++)
		if (cl->lane[li].rail == j->lane.rail && cl->lane[li].plane == j->lane.plane)
			return cl->nodes[li];
	return 2;
}

static double job_engine_at(const struct coord *c, const struct cjob *j, const struct plan_cost *pc)
{
	/* a re-test's: at the size it was found at */
	uint64_t size = j->size_opt[0] ? strtoull(j->size_opt, NULL, 10) : 0;

	return plan_job_engine_s(j->ph, j->load_for ? "load" : j->test, size, j->lane, job_lane_nodes(c, j), pc);
}

double coord_job_engine_s(const struct coord *c, const struct cjob *j)
{
	return job_engine_at(c, j, &c->cost);
}

/* The seconds job j's engine took by the model, at the rate its own
 * records say (else as coord_job_engine_s) */
static double job_engine_took_s(const struct coord *c, const struct cjob *j)
{
	struct plan_cost pc;

	if (!(j->gbps > 0) || !fs_lane_ok(j->lane.rail, j->lane.plane))
		return coord_job_engine_s(c, j);
	pc = c->cost;
	pc.lane_gbps[j->lane.rail][j->lane.plane] = j->gbps;
	pc.lane_from[j->lane.rail][j->lane.plane] = 'm';
	return job_engine_at(c, j, &pc);
}

void coord_learn_job(struct coord *c, const struct cjob *j, uint64_t now)
{
	const struct plan_phase *ph = j->ph;
	double extra;

	/* a job's set-up, from the jobs whose engine runs a time its options
	 * say (a duration), alone on its links: not a count of messages at a
	 * speed the model may not know, a collective's sizes, an incast or a
	 * PFC probe (its senders share the target), a load or what runs beside
	 * one, a node's own job */
	if (j->m || j->load || j->load_for || PLAN_PER_NODE(ph->kind) || ph->kind == PLAN_INCAST ||
	    ph->kind == PLAN_PFC || j->retest_for || !j->start_ns || now < j->start_ns)
		return;
	if (ph->kind != PLAN_POLARIZATION && (plan_opt(ph, "iters", NULL) ||
					      (!strcmp(j->test, "lat") && !plan_opt(ph, "duration", NULL))))
		return;
	extra = (now - j->start_ns) / 1e9 - job_engine_took_s(c, j);
	if (extra < 0)
		extra = 0;
	c->round_extra += extra;
	if (extra > c->round_extra_max)
		c->round_extra_max = extra;
	c->round_extra_n++;
}

void coord_learn_record(struct coord *c, struct cjob *j, json_t *rec)
{
	const struct plan_phase *ph = j->ph;
	double g = record_num(rec, "metrics.bw_gbps", 0), **ng;
	int r = j->lane.rail, p = j->lane.plane, k;

	if (!(g < 1e6))	/* (a record is untrusted: no rate past any link's) */
		g = 0;

	if (!j->m && !strcmp(record_str(rec, "test", ""), "bw") && !strcmp(record_str(rec, "scope", ""), "aggregate") &&
	    !strcmp(record_str(rec, "status", ""), "ok") && g > j->gbps)
		j->gbps = g;	/* (its own time: coord_learn_job) */
	/* a node's speed on a lane: its fastest pair's rate, alone on their
	 * links (a one-off slow pair does not lower it; a slow link lowers
	 * all of the node's) */
	if (j->m || j->load_for || j->retest_for || strcmp(record_str(rec, "test", ""), "bw") ||
	    strcmp(record_str(rec, "scope", ""), "aggregate") || strcmp(record_str(rec, "status", ""), "ok") ||
	    record_num(rec, "msg_size_bytes", 0) < 65536 || !(g > 0) || !fs_lane_ok(r, p) ||
	    (ph->kind != PLAN_PAIRWISE && ph->kind != PLAN_RING && ph->kind != PLAN_PERMUTATION &&
	     ph->kind != PLAN_BISECTION))
		return;
	ng = &c->node_gbps[r * FS_MAX_PLANES + p];
	if (!*ng && !(*ng = calloc((size_t)(c->plan.nnodes ? c->plan.nnodes : 1), sizeof(**ng))))
		return;	/* (no memory: the lane's speed is not learnt) */
	for (k = 0; k < 2; k++) {
		int node = k ? j->server : j->client;

		if (node >= 0 && node < c->plan.nnodes && g > (*ng)[node])
			(*ng)[node] = g;
	}
}

/* The lanes' speeds the records so far say: the slowest node's (the
 * collectives on a lane go at its slowest link's) */
static void learn_lanes(struct coord *c)
{
	int l, i;

	for (l = 0; l < FS_MAX_RAILS * FS_MAX_PLANES; l++) {
		double lo = 0;

		for (i = 0; c->node_gbps[l] && i < c->plan.nnodes; i++)
			if (c->node_gbps[l][i] > 0 && (!lo || c->node_gbps[l][i] < lo))
				lo = c->node_gbps[l][i];
		if (lo > 0) {
			c->cost.lane_gbps[l / FS_MAX_PLANES][l % FS_MAX_PLANES] = lo;
			c->cost.lane_from[l / FS_MAX_PLANES][l % FS_MAX_PLANES] = 'm';
		}
	}
}

/* A round of ph is over: the set-up its jobs cost (coord_learn_job), into the model */
static void learn_round(struct coord *c, const struct plan_phase *ph)
{
	if (c->round_extra_n) {	/* at once: the slowest job's; in waves, each job's */
		c->setup_sum += ph->parallel && c->njobs > ph->parallel ? c->round_extra / c->round_extra_n :
				c->round_extra_max;
		c->setup_n++;
		c->cost.setup_s = c->setup_sum / c->setup_n;
	}
	c->round_extra = c->round_extra_max = 0;
	c->round_extra_n = 0;
	learn_lanes(c);
}

/* Seconds left of the run's phases, now: the round's (its estimate, or
 * what the jobs' engines say of their share done, when that is longer),
 * then the rest (estimated when the round started).  A job's share is
 * projected from its pace since its engine's first report, the job's
 * start and connecting left out. */
static double coord_eta(const struct coord *c, uint64_t now)
{
	double left = c->eta_round_s - (now - c->round_ns) / 1e9;
	int i;

	for (i = 0; i < c->njobs; i++) {
		const struct cjob *j = &c->jobs[i];
		double rest, moved = j->frac - j->frac0;

		if (j->state != J_RUN || !(moved > 0.05 && j->frac < 1) || j->frac_ns <= j->frac0_ns)
			continue;
		rest = (j->frac_ns - j->frac0_ns) / 1e9 * (1 - j->frac) / moved - (now - j->frac_ns) / 1e9;
		if (rest > left)
			left = rest;
	}
	return (left > 0 ? left : 0) + c->eta_after_s;
}

void coord_progress(struct coord *c, int final)
{
	char eta[32], notrun[48] = "";
	uint64_t now = clock_ns();

	/* (nothing to show: the ETA, a walk over the round's jobs, is not
	 * made; a job's end redraws a terminal's line at most ten times a
	 * second: a round of 16,384 jobs is not 16,384 walks of them) */
	if (!c->phase_name || (!final && (!c->tty || now - c->shown_ns < 100000000ull)))
		return;
	c->shown_ns = now;
	fmt_eta(coord_eta(c, now), eta, sizeof(eta));
	if (c->notrun_jobs)	/* (coord_check_transports said why) */
		snprintf(notrun, sizeof(notrun), ", %d not run", c->notrun_jobs);
	if (c->tty) {
		fprintf(stderr, "\r\033[K[%d/%d] %s: round %d/%d, %d/%d jobs, ETA %s", c->phase_i + 1,
			c->nphases, c->phase_name, c->round_i + 1, c->nrounds, c->jobs_done, c->njobs, eta);
		if (final)
			fputc('\n', stderr);
		fflush(stderr);
	} else if (final == 2) {	/* interrupted (or stopped) in the round */
		fprintf(stderr, "fabscope run: [%d/%d] %s: round %d/%d stopped, %d of %d jobs finished, "
			"%d failed%s so far\n", c->phase_i + 1, c->nphases, c->phase_name, c->round_i + 1,
			c->nrounds, c->jobs_done, c->njobs, c->failed_jobs - c->notrun_jobs, notrun);
	} else if (final) {
		fprintf(stderr, "fabscope run: [%d/%d] %s: round %d/%d done, %d jobs, %d failed%s so far, ETA %s\n",
			c->phase_i + 1, c->nphases, c->phase_name, c->round_i + 1, c->nrounds, c->njobs,
			c->failed_jobs - c->notrun_jobs, notrun, eta);
	}
}

/* ---- phases ---- */

/* Nodes that have lane l, in plan order. */
int coord_lane_nodes(const struct coord *c, struct plan_lane l, int *out)
{
	int i, n = 0;

	for (i = 0; i < c->plan.nnodes; i++)
		if (plan_node_ep(&c->plan.nodes[i], l))
			out[n++] = i;
	return n;
}

/* The lat job j, the last of c->jobs (room for one more), gets its load:
 * a bw job of the same pair and lane, put before it (started first). */
static void add_load(struct coord *c, struct cjob *j)
{
	struct cjob lat = *j;

	j->test = "bw";	/* the engine; its key says "load" */
	j->sampler = 0;
	coord_job_key(j->key, sizeof(j->key), j->ph, "load", j->round, j->lane, c->plan.nodes[j->client].name,
		      c->plan.nodes[j->server].name);
	j->load_for = c->njobs + 2;
	lat.load = c->njobs + 1;
	c->jobs[++c->njobs] = lat;
}

/* The jobs of round r of test in c->jobs, those done already (--resume)
 * left out; quiet: no word of lanes that have too few nodes.  0, or
 * -FS_EXIT_ENV when out of memory. */
static int round_jobs(struct coord *c, struct plan_phase *ph, const char *test, int r, int quiet)
{
	struct plan_lane lanes[PLAN_MAX_LANES];
	int nl = plan_lanes(&c->plan, ph, lanes, PLAN_MAX_LANES), li, i;
	int *idx = malloc((size_t)(c->plan.nnodes ? c->plan.nnodes : 1) * sizeof(int));
	struct plan_pair *pairs = malloc((size_t)(2 * c->plan.nnodes + 2) * sizeof(*pairs));
	int rc = 0;

	if (!idx || !pairs)
		nl = 0, rc = fs_err_env("out of memory for the jobs of [%s]", ph->name);
	if (PLAN_PER_NODE(ph->kind) && !rc)
		nl = 1;
	for (li = 0; li < nl; li++) {
		int n, np, target = 0;

		if (plan_is_group(ph)) {	/* one job: every node of the lane, a rank each */
			struct cjob *j;

			n = coord_lane_nodes(c, lanes[li], idx);
			if (n < 2) {
				char lane[32];

				fs_lane_name(lanes[li].rail, lanes[li].plane, lane, sizeof(lane));
				if (!quiet)
					fs_info("%s: %s has %s: no %s on it", ph->name, lane,
						n ? "one node only" : "no node", test);
				continue;
			}
			if (FS_ALLOC_GROW(c->jobs, (size_t)c->njobs + 1, c->jobs_alloc)) {
				rc = fs_err_env("out of memory for the jobs of [%s]", ph->name);
				break;
			}
			j = &c->jobs[c->njobs];
			memset(j, 0, sizeof(*j));
			j->test = test;
			j->client = idx[0];
			j->server = -1;
			j->lane = lanes[li];
			j->ph = ph;
			j->round = r;
			{
				char ranks[32];

				snprintf(ranks, sizeof(ranks), "%d-ranks", n);
				coord_job_key(j->key, sizeof(j->key), ph, test, r, lanes[li], ranks, NULL);
			}
			if (results_job_done(&c->res, j->key))
				continue;	/* --resume: measured already */
			j->m = calloc((size_t)n, sizeof(*j->m));
			if (!j->m) {
				rc = fs_err_env("out of memory for the jobs of [%s]", ph->name);
				break;
			}
			j->nm = n;
			for (i = 0; i < n; i++)
				j->m[i].node = idx[i];
			if (n > c->id_stride)
				c->id_stride = n;
			c->njobs++;
			continue;
		}
		if (PLAN_PER_NODE(ph->kind)) {
			n = c->plan.nnodes;
			for (i = 0; i < n; i++)
				idx[i] = i;
			np = n;
			for (i = 0; i < n; i++)
				pairs[i].client = i, pairs[i].server = -1;
			lanes[0].rail = lanes[0].plane = 0;
		} else {
			n = coord_lane_nodes(c, lanes[li], idx);
			if (r >= plan_rounds(ph, n))
				continue;
			if (ph->target) {
				for (i = 0; i < n; i++)
					if (!strcmp(c->plan.nodes[idx[i]].name, ph->target))
						target = i;
			}
			np = plan_round_pairs(ph, n, r, target, pairs);
		}
		/* (a loaded lat job comes with its load: two jobs a pair) */
		if (FS_ALLOC_GROW(c->jobs, (size_t)c->njobs + 2 * (size_t)np, c->jobs_alloc)) {
			rc = fs_err_env("out of memory for the jobs of [%s]", ph->name);
			break;
		}
		for (i = 0; i < np; i++) {
			struct cjob *j = &c->jobs[c->njobs];
			int cl = idx[pairs[i].client], sv = pairs[i].server >= 0 ? idx[pairs[i].server] : -1;

			memset(j, 0, sizeof(*j));
			j->test = test;
			j->client = cl;
			j->server = sv;
			j->lane = lanes[li];
			j->ph = ph;
			j->round = r;
			coord_job_key(j->key, sizeof(j->key), ph, test, r, lanes[li], c->plan.nodes[cl].name,
				sv >= 0 ? c->plan.nodes[sv].name : NULL);
			if (results_job_done(&c->res, j->key))
				continue;	/* --resume: measured already (its load too) */
			j->sampler = !i;	/* the pairs of an incast round share the server */
			if (ph->load && sv >= 0)
				add_load(c, j);
			c->njobs++;
		}
	}
	free(idx);
	free(pairs);
	return rc;
}

static int run_round(struct coord *c, struct plan_phase *ph, const char *test, int r)
{
	int rc;

	coord_jobs_clear(c);	/* (ids of this round start past the last round's) */
	c->id_stride = 2;
	if ((rc = round_jobs(c, ph, test, r, 0)))
		return rc;
	if (!c->njobs)
		return 0;
	c->shown_ns = 0;	/* (a new round's line is drawn at once) */
	coord_progress(c, 0);
	return coord_run_jobs(c, ph->parallel);
}

/* A job of a verbs phase with a node that cannot use verbs is not run:
 * finished at once with its error record, not warned (coord_check_transports
 * said it once).  1 when it was so. */
static int noverbs(struct coord *c, struct cjob *j)
{
	int node = -1, k;
	char msg[600];

	if (!coord_phase_verbs(j->ph))
		return 0;
	if (j->m) {
		for (k = 0; k < j->nm && node < 0; k++)
			if (c->node_noverbs[j->m[k].node])
				node = j->m[k].node;
	} else if (c->node_noverbs[j->client]) {
		node = j->client;
	} else if (j->server >= 0 && c->node_noverbs[j->server]) {
		node = j->server;
	}
	if (node < 0)
		return 0;
	snprintf(msg, sizeof(msg), "not run: %s cannot use verbs: %s", c->plan.nodes[node].name,
		 c->node_noverbs[node]);
	j->state = J_RUN;	/* so that the record is written */
	j->notrun = 1;
	c->notrun_jobs++;
	coord_job_finish(c, j, msg);
	return 1;
}

/* Start job j (idle, and its turn): its agents are there, or it fails
 * at once saying who is missing */
static void start_job(struct coord *c, struct cjob *j)
{
	int missing, k;

	if (noverbs(c, j))
		return;
	missing = c->node_conn[j->client] < 0 ? j->client :
		  j->server >= 0 && c->node_conn[j->server] < 0 ? j->server : -1;
	for (k = 0; j->m && k < j->nm && missing < 0; k++)
		if (c->node_conn[j->m[k].node] < 0)
			missing = j->m[k].node;
	if (missing >= 0) {
		char msg[600];

		snprintf(msg, sizeof(msg), "agent %s missing: %s", c->plan.nodes[missing].name,
			 c->node_why[missing] ? c->node_why[missing] : "not connected");
		j->state = J_RUN;	/* so that the record is written */
		coord_job_finish(c, j, msg);
		return;
	}
	if (!j->load) {	/* (a lat job and its load are one test: the load counts) */
		c->jobs_running++;
		j->counted = 1;
	}
	if (j->ph->kind == PLAN_PING) {
		j->state = J_RUN;
		j->budget_s = c->agent_timeout;
		j->start_ns = j->heard_ns = clock_ns();
		j->deadline_ns = j->start_ns + (uint64_t)(c->agent_timeout * 1e9);
		if (coord_send_to(c, c->node_conn[j->client],
			    json_pack("{ss,sI,sI}", "type", "ping", "id", (json_int_t)coord_job_id(c, j, 1),
				      "t", (json_int_t)clock_ns())))
			coord_conn_gone(c, c->node_conn[j->client], "its connection broke");
		return;
	}
	coord_job_start(c, j);
}

/* Start what may start, in order from the first job that has not: at
 * most parallel running (0: no limit); a lat job under load once its load
 * has run PLAN_LOAD_SETTLE_S, whatever parallel says.  The first job not
 * started is remembered, so that the walks of a round cost about what
 * they start, not the whole round each time. */
static void start_jobs(struct coord *c, int parallel)
{
	int i;

	for (i = c->first_idle; i < c->njobs; i++) {
		struct cjob *j = &c->jobs[i];

		if (j->state == J_IDLE && j->load) {	/* under load: once the load has settled */
			const struct cjob *l = &c->jobs[j->load - 1];

			if (l->state != J_RUN || clock_ns() < l->run_ns + (uint64_t)(PLAN_LOAD_SETTLE_S * 1e9))
				continue;	/* (a load that ended first failed this job) */
		} else if (j->state == J_IDLE && parallel && c->jobs_running >= parallel) {
			/* the rest wait their turn (a lat job under load comes after
			 * its load, which has not started either) */
			break;
		}
		if (j->state == J_IDLE)
			start_job(c, j);
		if (i == c->first_idle && j->state != J_IDLE)
			c->first_idle++;
	}
}

int coord_run_jobs(struct coord *c, int parallel)
{
	uint64_t walked = 0;
	int rc = 0, done_seen = -1;

	for (;;) {	/* start the jobs, at most parallel at once, until all are done */
		/* again when a job has finished (room for the next), or a tick on
		 * (a load may have settled) */
		if (c->jobs_done != done_seen || clock_ns() - walked > 100000000ull) {
			done_seen = c->jobs_done;
			walked = clock_ns();
			start_jobs(c, parallel);
		}
		if (c->jobs_done >= c->njobs)
			break;
		if (c->tty && c->phase_name && clock_ns() - c->shown_ns >= 1000000000ull)
			coord_progress(c, 0);	/* the ETA counts down */
		if ((rc = coord_poll(c, 100)))
			break;
	}
	results_sync(&c->res);
	return rc;
}

/* The rounds of a phase: the most of any lane's (ping: one) */
static int phase_rounds(struct coord *c, const struct plan_phase *ph)
{
	struct plan_lane lanes[PLAN_MAX_LANES];
	int nl = plan_lanes(&c->plan, ph, lanes, PLAN_MAX_LANES), li, maxr = 0;
	int *idx = malloc((size_t)(c->plan.nnodes ? c->plan.nnodes : 1) * sizeof(int));

	for (li = 0; li < nl; li++) {
		int rr = plan_rounds(ph, coord_lane_nodes(c, lanes[li], idx));

		if (rr > maxr)
			maxr = rr;
	}
	free(idx);
	return PLAN_PER_NODE(ph->kind) ? 1 : maxr;
}

long coord_jobs_left(struct coord *c)
{
	long left = 0;
	int pi, t, r;

	for (pi = 0; pi < c->plan.nphases; pi++) {
		struct plan_phase *ph = &c->plan.phases[pi];
		int maxr = ph->skip ? 0 : phase_rounds(c, ph);

		for (t = 0; t < ph->ntests; t++)
			for (r = 0; r < maxr; r++) {	/* as run_round makes them */
				int rc = round_jobs(c, ph, ph->tests[t], r, 1);

				left += c->njobs;
				coord_jobs_clear(c);
				if (rc)
					return -1;
			}
	}
	return left;
}

int coord_planned(struct coord *c)
{
	json_t *planned = json_array(), *done = c->res.done, *none = json_object();
	int pi, t, r, rc = 0;

	if (!planned || !none) {
		json_decref(planned);
		json_decref(none);
		return fs_err_env("out of memory listing the jobs of the plan");
	}
	c->res.done = none;	/* every job, those done before --resume too */
	for (pi = 0; pi < c->plan.nphases && !rc; pi++) {
		struct plan_phase *ph = &c->plan.phases[pi];
		int maxr = phase_rounds(c, ph);
		json_t *tests = json_array();
		long jobs = 0;

		for (t = 0; t < ph->ntests && !rc; t++) {
			json_array_append_new(tests, json_string(ph->tests[t]));
			for (r = 0; r < maxr && !rc; r++) {	/* as run_round makes them */
				rc = round_jobs(c, ph, ph->tests[t], r, 1);
				jobs += c->njobs;
				coord_jobs_clear(c);
			}
		}
		json_array_append_new(planned, json_pack("{ss,ss,so,sI,sb}", "name", ph->name, "kind",
							 plan_kind_name(ph->kind), "tests", tests, "jobs",
							 (json_int_t)jobs, "skipped", ph->skip));
	}
	c->res.done = done;
	json_decref(none);
	if (rc) {
		json_decref(planned);
		return rc;
	}
	json_object_set_new(c->res.run, "planned", planned);
	return results_save(&c->res);
}

/* The run's time at its start: each phase's lanes (c->lanes, kept for
 * the ETA and the re-tests) and estimate (c->est_phase).  0 or -exit. */
static int coord_time_start(struct coord *c)
{
	int pi, rc;

	c->lanes = calloc((size_t)c->plan.nphases + 1, sizeof(*c->lanes));
	c->est_phase = calloc((size_t)c->plan.nphases + 1, sizeof(*c->est_phase));
	if (!c->lanes || !c->est_phase)
		return fs_err_env("out of memory for the estimate of %d phases", c->plan.nphases);
	for (pi = 0; pi < c->plan.nphases; pi++) {
		if ((rc = coord_phase_lanes(c, pi, &c->lanes[pi])))
			return rc;
		if (!c->plan.phases[pi].skip)
			c->est_phase[pi] = coord_phase_est_s(c, pi, &c->lanes[pi], 0, 0);
	}
	return 0;
}

/* The ETA's parts (c->eta_round_s, eta_after_s) when round r of test t
 * of phase pi starts (running: 1) or has ended (0): the round, the rest of
 * the phase and the later phases, as the model says now (what the run has
 * learnt), the phase's at its pace so far: what its rounds done took over
 * what the model says now they take (rounds --resume skipped left out). */
static void coord_eta_at(struct coord *c, int pi, int t, int r, int running)
{
	const struct plan_phase *ph = &c->plan.phases[pi];
	const struct coord_lanes *cl = &c->lanes[pi];
	double round = plan_round_cost_s(ph, ph->tests[t], r, cl->lane, cl->nodes, cl->n, &c->cost);
	double after = coord_phase_est_s(c, pi, cl, t, r + 1);
	double done = coord_phase_est_s(c, pi, cl, 0, 0) - after - (running ? round : 0) - c->ph_skipped_s;
	double pace = c->ph_act_done > 0 && done > 0 ? c->ph_act_done / done : 1;
	int p;

	c->eta_round_s = running ? round * pace : 0;
	c->eta_after_s = after * pace;
	for (p = pi + 1; p < c->plan.nphases; p++)
		if (!c->plan.phases[p].skip)
			c->eta_after_s += coord_phase_est_s(c, p, &c->lanes[p], 0, 0);
	c->round_ns = clock_ns();
}

int coord_run_phases(struct coord *c)
{
	int pi, rc = 0, held = 0;
	json_t *phases = json_object_get(c->res.run, "phases");
	double est_all = 0, act_all = 0;

	c->nphases = c->plan.nphases;
	if ((rc = coord_time_start(c)))
		return rc;
	for (pi = 0; pi < c->plan.nphases; pi++)
		est_all += c->est_phase[pi];
	json_object_set_new(c->res.run, "estimate_s", json_real(est_all));
	for (pi = 0; pi < c->plan.nphases && !rc; pi++) {
		struct plan_phase *ph = &c->plan.phases[pi];
		int t, r, maxr;
		uint64_t t0 = clock_ns();
		double took, est_now;
		json_t *pj;

		if (ph->skip)	/* (said when the agents had joined) */
			continue;
		/* its estimate again, from what the run has measured so far */
		est_now = coord_phase_est_s(c, pi, &c->lanes[pi], 0, 0);
		fs_log(1, "[%s]: about %.1f s (%.1f s at the run's start)", ph->name, est_now, c->est_phase[pi]);
		maxr = phase_rounds(c, ph);
		c->phase_i = pi;
		c->phase_name = ph->name;
		c->nrounds = maxr * ph->ntests;
		c->ph_act_done = c->ph_skipped_s = 0;
		if (!maxr)
			fs_warn("phase %s: fewer than 2 nodes on every lane: nothing to run", ph->name);
		for (t = 0; t < ph->ntests && !rc; t++)
			for (r = 0; r < maxr && !rc; r++) {
				uint64_t rt0 = clock_ns();

				coord_eta_at(c, pi, t, r, 1);
				c->round_i = t * maxr + r;
				rc = run_round(c, ph, ph->tests[t], r);
				learn_round(c, ph);
				if (c->njobs) {	/* the rest, at the pace of the rounds so far */
					c->ph_act_done += (clock_ns() - rt0) / 1e9;
					coord_eta_at(c, pi, t, r, 0);
					coord_progress(c, rc ? 2 : 1);
					/* (a test build: held after the first round that ran) */
					if (!rc && !held++)
						rc = coord_test_hold(c, fs_test_env("FABSCOPE_TEST_ROUND_HOLD"), "next round");
				} else {	/* (--resume: measured already) */
					const struct coord_lanes *cl = &c->lanes[pi];

					c->ph_skipped_s += plan_round_cost_s(ph, ph->tests[t], r, cl->lane, cl->nodes, cl->n,
									     &c->cost);
				}
			}
		took = (clock_ns() - t0) / 1e9;
		act_all += took;
		pj = json_pack("{ss,ss,si,sf,sf,sf,sf}", "name", ph->name, "kind", plan_kind_name(ph->kind),
			       "rounds", c->nrounds, "seconds", took, "estimate_s", c->est_phase[pi],
			       "estimate_start_s", est_now, "actual_s", took);
		json_object_set_new(pj, "status", json_string(rc ? "interrupted" : "done"));
		json_array_append_new(phases, pj);
		json_object_set_new(c->res.run, "actual_s", json_real(act_all));
		results_save(&c->res);
	}
	if (c->setup_n)	/* what a job cost beyond its engine, as measured */
		json_object_set_new(c->res.run, "setup_s", json_real(c->setup_sum / c->setup_n));
	results_save(&c->res);
	c->phase_name = NULL;
	coord_jobs_clear(c);
	return rc;
}
