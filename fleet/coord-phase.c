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
#include "coord-int.h"

/* ---- progress ---- */

static void fmt_eta(double s, char *buf, size_t len)
{
	if (s < 0)
		s = 0;
	if (s >= 3600)
		snprintf(buf, len, "%d:%02d:%02d", (int)s / 3600, (int)s / 60 % 60, (int)s % 60);
	else
		snprintf(buf, len, "%d:%02d", (int)s / 60, (int)s % 60);
}

void coord_progress(struct coord *c, int final)
{
	char eta[32], notrun[48] = "";

	if (!c->phase_name)
		return;
	fmt_eta(c->est_left_s, eta, sizeof(eta));
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

				coord_lane_name(lanes[li], lane, sizeof(lane));
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
		j->deadline_ns = clock_ns() + (uint64_t)(c->agent_timeout * 1e9);
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

int coord_run_phases(struct coord *c)
{
	int pi, rc = 0;
	json_t *phases = json_object_get(c->res.run, "phases");
	double *est = calloc((size_t)c->plan.nphases + 1, sizeof(*est));

	c->nphases = c->plan.nphases;
	for (pi = c->plan.nphases - 1; pi >= 0; pi--) {	/* est[pi]: phases pi.. */
		struct plan_phase *ph = &c->plan.phases[pi];

		est[pi] = est[pi + 1] + ph->est_s * ph->ntests * plan_rounds(ph, c->plan.nnodes);
	}
	c->est_left_s = est[0];
	for (pi = 0; pi < c->plan.nphases && !rc; pi++) {
		struct plan_phase *ph = &c->plan.phases[pi];
		int t, r, maxr;
		uint64_t t0 = clock_ns();
		json_t *pj;

		if (ph->skip)	/* (said when the agents had joined) */
			continue;
		maxr = phase_rounds(c, ph);
		c->phase_i = pi;
		c->phase_name = ph->name;
		c->nrounds = maxr * ph->ntests;
		if (!maxr)
			fs_warn("phase %s: fewer than 2 nodes on every lane: nothing to run", ph->name);
		for (t = 0; t < ph->ntests && !rc; t++)
			for (r = 0; r < maxr && !rc; r++) {
				uint64_t rt0 = clock_ns();

				c->round_i = t * maxr + r;
				rc = run_round(c, ph, ph->tests[t], r);
				if (c->njobs) {	/* the rounds left, at the pace of this one */
					double took = (clock_ns() - rt0) / 1e9;

					c->est_left_s = (c->nrounds - c->round_i - 1) * took + est[pi + 1];
					coord_progress(c, rc ? 2 : 1);
				}
			}
		pj = json_pack("{ss,ss,si,sf}", "name", ph->name, "kind", plan_kind_name(ph->kind),
			       "rounds", c->nrounds, "seconds", (clock_ns() - t0) / 1e9);
		json_object_set_new(pj, "status", json_string(rc ? "interrupted" : "done"));
		json_array_append_new(phases, pj);
		results_save(&c->res);
	}
	c->phase_name = NULL;
	coord_jobs_clear(c);
	free(est);
	return rc;
}
