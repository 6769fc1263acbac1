/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The coordinator's jobs (see coord.c): their ids and keys, what their
 * records carry, starting them, the agents' messages about them, and
 * finishing them (a failed one gets an error record).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/clock.h"
#include "../core/error.h"
#include "../core/record.h"
#include "../core/units.h"
#include "../collectives/coll.h"
#include "coord-int.h"

long coord_job_id(const struct coord *c, const struct cjob *j, int member)
{
	return c->id_base + c->id_stride * (long)(j - c->jobs) + member;
}

/* The job of an id of this round and its member (see struct coord), or -1. */
static int job_of(struct coord *c, long id, int *member)
{
	long rel;

	if (id < c->id_base || c->id_stride < 2)	/* (before subtracting: an agent's id may be LONG_MIN) */
		return -1;
	rel = id - c->id_base;
	if (rel / c->id_stride >= c->njobs)
		return -1;
	*member = (int)(rel % c->id_stride);
	return (int)(rel / c->id_stride);
}

static int job_has_node(const struct cjob *j, int node)
{
	int k;

	if (!j->m)
		return j->client == node || j->server == node;
	for (k = 0; k < j->nm; k++)
		if (j->m[k].node == node)
			return 1;
	return 0;
}

void coord_jobs_clear(struct coord *c)
{
	int i;

	/* the next jobs' ids start past these: a late message about one of
	 * them is not taken for one of the next */
	c->id_base += (c->id_stride > 2 ? c->id_stride : 2) * ((long)c->njobs + 1);

	for (i = 0; i < c->njobs; i++) {
		int k;

		for (k = 0; c->jobs[i].m && k < c->jobs[i].nm; k++)
			free(c->jobs[i].m[k].err);
		free(c->jobs[i].m);
		free(c->jobs[i].pj);
	}
	free(c->jobs);
	c->jobs = NULL;
	c->njobs = 0;
	c->jobs_alloc = 0;
	c->jobs_done = c->jobs_running = c->first_idle = 0;
	c->jobs_gen++;
	free(c->nj_first);
	free(c->nj_list);
	c->nj_first = c->nj_list = NULL;
}

void coord_job_key(char *buf, size_t len, const struct plan_phase *ph, const char *test, int round,
	     struct plan_lane l, const char *a, const char *b)
{
	char lane[32], full[2 * PLAN_NAME_MAX + 600];

	if (l.plane)
		snprintf(lane, sizeof(lane), "rail%d.%d", l.rail, l.plane);
	else
		snprintf(lane, sizeof(lane), "rail%d", l.rail);
	if (b)
		snprintf(full, sizeof(full), "%s/%s/r%d/%s/%s>%s", ph->name, test, round + 1, lane, a, b);
	else
		snprintf(full, sizeof(full), "%s/%s/r%d/%s/%s", ph->name, test, round + 1, lane, a);
	coord_key_set(buf, len, full);
}

void coord_key_set(char *buf, size_t len, const char *full)
{
	size_t n = strlen(full);
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a */
	const char *s;

	if (n < len) {
		memcpy(buf, full, n + 1);
		return;
	}
	for (s = full; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	/* its head as it was (the phase's name, whole: the readers take it up to the first '/'),
	 * then "#" and the hash of the whole */
	snprintf(buf, len, "%.*s#%016llx", (int)(len - 18), full, (unsigned long long)h);
}

static void endpoint_of(struct coord *c, json_t *ep, int node, struct plan_lane l)
{
	const struct plan_endpoint *e = plan_node_ep(&c->plan.nodes[node], l);

	json_object_set_new(ep, "node", json_string(c->plan.nodes[node].name));
	if (e && !json_object_get(ep, "ip"))
		json_object_set_new(ep, "ip", json_string(e->ip));
	json_object_set_new(ep, "rail", json_integer(l.rail));
	json_object_set_new(ep, "plane", json_integer(l.plane));
}

/* A group's record: its lane, and every rank's endpoint (the collective's
 * own list, {rank, pos, node, rail, ip}, gains the plane; an error record
 * gets the members').  No src or dst: a collective has no one direction. */
static void stamp_group(struct coord *c, json_t *rec, const struct cjob *j)
{
	json_t *eps = json_object_get(rec, "endpoints"), *e;
	size_t i;
	int k;

	json_object_set_new(rec, "rail", json_integer(j->lane.rail));
	json_object_set_new(rec, "plane", json_integer(j->lane.plane));
	if (!json_object_get(rec, "ranks"))
		json_object_set_new(rec, "ranks", json_integer(j->nm));
	if (!json_is_array(eps)) {
		eps = json_array();
		json_object_set_new(rec, "endpoints", eps);
		for (k = 0; k < j->nm; k++) {
			e = json_pack("{si}", "rank", k);
			endpoint_of(c, e, j->m[k].node, j->lane);
			json_array_append_new(eps, e);
		}
		return;
	}
	json_array_foreach(eps, i, e)
		if (json_is_object(e) && !json_object_get(e, "plane"))
			json_object_set_new(e, "plane", json_integer(j->lane.plane));
}

/* What every record of the run carries. */
static void stamp(struct coord *c, json_t *rec, const struct cjob *j)
{
	json_t *labels = json_object_get(rec, "labels"), *src, *dst;

	if (!json_is_object(labels)) {
		labels = json_object();
		json_object_set_new(rec, "labels", labels);
	}
	json_object_update_missing(labels, c->labels);
	json_object_set_new(rec, "run", json_string(c->run_id));
	json_object_set_new(rec, "phase", json_string(j->ph->name));
	json_object_set_new(rec, "kind", json_string(plan_kind_name(j->ph->kind)));
	json_object_set_new(rec, "round", json_integer(j->round + 1));
	json_object_set_new(rec, "job", json_string(j->key));
	if (j->retest_of)	/* a second look at a suspect, not one of the phase's results */
		json_object_set_new(rec, "retest_of", json_string(j->retest_of));
	if (j->retest_for) {
		json_object_set_new(rec, "retest_for", json_string(j->retest_for));
		json_object_set_new(rec, "retest_role", json_string(j->retest_role));
	}
	if (j->load_for) {	/* the load of a lat job: not one of the phase's results */
		json_object_set_new(rec, "kind", json_string("load"));
		json_object_set_new(rec, "load_for", json_string(c->jobs[j->load_for - 1].key));
	} else if (j->load) {	/* a latency under load: not the idle one */
		json_t *params = json_object_get(rec, "params");

		if (!json_is_object(params))
			json_object_set_new(rec, "params", params = json_object());
		json_object_set_new(params, "load", json_string(j->ph->load));
		json_object_set_new(rec, "load_job", json_string(c->jobs[j->load - 1].key));
	}
	if (j->m) {
		stamp_group(c, rec, j);
		return;
	}
	if (j->ph->kind == PLAN_TOPOLOGY) {	/* a node's own ports, of every lane: only its name */
		json_object_set_new(rec, "src", json_pack("{ss}", "node", c->plan.nodes[j->client].name));
		json_object_del(rec, "dst");
		return;
	}
	src = json_object_get(rec, "src");
	dst = json_object_get(rec, "dst");
	if (!json_is_object(src))
		json_object_set_new(rec, "src", src = json_object());
	if (!json_is_object(dst) && j->server >= 0)
		json_object_set_new(rec, "dst", dst = json_object());
	if (j->server >= 0) {
		/* which end is which: records of the s2c direction, and the pfc
		 * probe's target (which samples its own port), swap them */
		int swap = !strcmp(record_str(rec, "dir", "c2s"), "s2c") ||
			   !strcmp(record_str(rec, "role", ""), "target");

		endpoint_of(c, src, swap ? j->server : j->client, j->lane);
		endpoint_of(c, dst, swap ? j->client : j->server, j->lane);
		if (!strcmp(record_str(rec, "role", ""), "target")) {
			char key[COORD_KEY_MAX + 8];

			/* the target's own port: no peer, and a job key of its own */
			json_object_del(rec, "dst");
			snprintf(key, sizeof(key), "%s:target", j->key);
			json_object_set_new(rec, "job", json_string(key));
		}
	} else {
		endpoint_of(c, src, j->client, j->lane);
	}
}

static void job_error_record(struct coord *c, struct cjob *j, const char *why)
{
	json_t *rec = record_new(j->test);

	json_object_set_new(rec, "status", json_string("error"));
	json_object_set_new(rec, "error", json_string(why));
	json_object_set_new(rec, "transport", json_string(plan_opt(j->ph, "transport", "tcp")));
	stamp(c, rec, j);
	results_append(&c->res, rec);
	json_decref(rec);
}

static void cancel(struct coord *c, int node, long id)
{
	int ci = node >= 0 ? c->node_conn[node] : -1;

	if (ci >= 0)
		coord_send_to(c, ci, json_pack("{ss,sI}", "type", "cancel", "id", (json_int_t)id));
}

/* Did a group job fail, all its members' reports in (or given up on)?
 * Rank 0 speaks for the collective: its exit 1 with wrong elements in its
 * records is a failed data check (the records say so; the run's exit code
 * is 1), not a failed job.  Any other non-zero exit fails the job, with
 * rank 0's error (the root sees every rank and names the one at fault),
 * else the first error another rank reported (the others, cut off, blame
 * rank 0); each names its node.  So does a rank 0 that ended without a
 * record. */
static int group_failed(const struct coord *c, const struct cjob *j, char *msg, size_t len)
{
	int k;

	for (k = 0; k < j->nm; k++) {
		const struct cmember *m = &j->m[k];

		if (!m->done || !m->exit || (!k && m->exit == FS_EXIT_CHECK && j->wrong > 0))
			continue;
		if (j->err0[0]) {
			int r;

			snprintf(msg, len, "%s", j->err0);
			/* and what the rank it names said itself ("rank 3 (h3 rail 1)") */
			for (r = 1; r < j->nm; r++) {
				char who[32];

				snprintf(who, sizeof(who), "rank %d (", r);
				if (j->m[r].err && strstr(j->err0, who)) {
					size_t used = strlen(msg);

					snprintf(msg + used, len - used, "; %s", j->m[r].err);
					break;
				}
			}
		} else if (j->err[0])
			snprintf(msg, len, "%s", j->err);
		else
			snprintf(msg, len, "%s (rank %d) exited with status %d", c->plan.nodes[m->node].name, k,
				 m->exit);
		return 1;
	}
	if (!j->nrec) {
		snprintf(msg, len, "no record from rank 0 (%s)", c->plan.nodes[j->m[0].node].name);
		return 1;
	}
	return 0;
}

/* The load j is over (why: it failed): its lat job, if it is not done,
 * fails: a latency measured partly idle is no latency under load. */
static void load_over(struct coord *c, const struct cjob *j, const char *why)
{
	struct cjob *lat = &c->jobs[j->load_for - 1];
	char msg[1000];

	if (lat->state == J_FIN)
		return;
	if (why)
		snprintf(msg, sizeof(msg), "its load %s failed: %s", j->key, why);
	else
		snprintf(msg, sizeof(msg), "its load %s ended before it %s (the load runs %g s): not measured "
			 "under load throughout", j->key, lat->state == J_IDLE ? "began" : "did", j->ph->load_s);
	coord_job_finish(c, lat, msg);
}

/* What failed a job, without the node that says it ("h2: ", "h2 (rank 3): ")
 * and the command ("fabscope bw: "): the same cause on every node is one. */
static const char *job_cause(const char *why)
{
	const char *p = why, *e = why + strcspn(why, " :");

	if (!strncmp(e, " (rank ", 7) && strchr(e, ')'))
		e = strchr(e, ')') + 1;
	if (e > p && e[0] == ':' && e[1] == ' ')
		p = e + 2;
	if (!strncmp(p, "fabscope ", 9) && (e = strstr(p, ": ")) && e - p < 40)
		p = e + 2;
	return p;
}

/* A failed job's line, once per cause: the first job of a cause says it,
 * the others are counted (coord_say_repeats); every one has its error
 * record.  Past 1000 causes each is said. */
static void warn_once(struct coord *c, const struct cjob *j, const char *why)
{
	const char *cause = job_cause(why);
	json_t *e;

	if (!c->causes)
		c->causes = json_object();
	if ((e = json_object_get(c->causes, cause))) {
		json_object_set_new(e, "n", json_integer(json_integer_value(json_object_get(e, "n")) + 1));
		return;
	}
	if (json_object_size(c->causes) < 1000)
		json_object_set_new(c->causes, cause, json_pack("{si,ss}", "n", 1, "job", j->key));
	fs_warn("%s: %s", j->key, why);
}

void coord_say_repeats(struct coord *c)
{
	const char *cause;
	json_t *e;

	json_object_foreach(c->causes, cause, e) {
		json_int_t n = json_integer_value(json_object_get(e, "n"));

		if (n > 1)
			fs_warn("%lld more job%s failed as %s did (%.120s%s); each has its error record in "
				"%s/results.jsonl", (long long)n - 1, n == 2 ? "" : "s",
				json_string_value(json_object_get(e, "job")), cause, strlen(cause) > 120 ? "..." : "",
				c->res.dir);
	}
}

void coord_job_finish(struct coord *c, struct cjob *j, const char *why)
{
	char msg[700];
	int k;

	if (j->state == J_FIN)
		return;
	if (!why && j->m && group_failed(c, j, msg, sizeof(msg)))
		why = msg;
	else if (!why && j->cli_done && j->cli_exit && !coord_polar_verdict_exit(c, j)) {
		snprintf(msg, sizeof(msg), "%s", j->err[0] ? j->err : "the client failed");
		why = msg;
	}
	if (why) {
		job_error_record(c, j, why);
		c->failed_jobs++;
		if (!j->notrun)
			warn_once(c, j, why);
	} else {
		coord_learn_job(c, j, clock_ns());
	}
	if (!why && j->wrong > 0) {
		fs_warn("%s: %.0f wrong element%s: the data check failed (a rank, its NIC or the fabric "
			"corrupted data; see the records' metrics.wrong)", j->key, j->wrong, j->wrong == 1 ? "" : "s");
	}
	if (j->m) {	/* every member still running */
		for (k = 0; k < j->nm; k++)
			if (j->m[k].started && !j->m[k].done)
				cancel(c, j->m[k].node, coord_job_id(c, j, k));
	} else if (j->state == J_LISTEN || j->state == J_RUN) {
		if (!j->srv_done && j->server >= 0)
			cancel(c, j->server, coord_job_id(c, j, 0));
		if (!j->cli_done && j->state == J_RUN && (j->server >= 0 || j->ph->kind == PLAN_TOPOLOGY))
			cancel(c, j->client, coord_job_id(c, j, 1));
	}
	j->state = J_FIN;
	if (j->counted) {
		c->jobs_running--;
		j->counted = 0;
	}
	results_job_finished(&c->res, j->key);	/* (its records are in: --resume skips it) */
	if (j->m)
		fs_log(1, "%s: finished, %d record%s", j->key, j->nrec, j->nrec == 1 ? "" : "s");
	c->jobs_done++;
	coord_progress(c, 0);
	if (j->load_for)
		load_over(c, j, why);
}

/* How many nodes job j has, and the k-th of them (a pair: its client, then its server) */
static int job_width(const struct cjob *j)
{
	return j->m ? j->nm : j->server >= 0 && j->server != j->client ? 2 : 1;
}

static int job_node(const struct cjob *j, int k)
{
	return j->m ? j->m[k].node : k ? j->server : j->client;
}

/* c->nj_first and c->nj_list for the jobs as they are: 0, or -1 when out
 * of memory (the caller walks every job then) */
static int node_jobs_index(struct coord *c)
{
	int n = c->plan.nnodes, i, k, total = 0, *first, *list, *fill;

	if (c->nj_first && c->nj_gen == c->jobs_gen && c->nj_njobs == c->njobs && c->nj_nnodes == n)
		return 0;
	free(c->nj_first);
	free(c->nj_list);
	c->nj_first = c->nj_list = NULL;
	for (i = 0; i < c->njobs; i++)
		total += job_width(&c->jobs[i]);
	first = calloc((size_t)n + 2, sizeof(*first));
	list = malloc(((size_t)total + 1) * sizeof(*list));
	fill = calloc((size_t)n + 1, sizeof(*fill));
	if (!first || !list || !fill) {
		free(first);
		free(list);
		free(fill);
		return -1;
	}
	for (i = 0; i < c->njobs; i++)	/* counts, then where each node's run starts */
		for (k = 0; k < job_width(&c->jobs[i]); k++)
			first[job_node(&c->jobs[i], k) + 1]++;
	for (i = 0; i < n; i++)
		first[i + 1] += first[i];
	for (i = 0; i < c->njobs; i++)
		for (k = 0; k < job_width(&c->jobs[i]); k++) {
			int node = job_node(&c->jobs[i], k);

			list[first[node] + fill[node]++] = i;
		}
	free(fill);
	c->nj_first = first;
	c->nj_list = list;
	c->nj_gen = c->jobs_gen;
	c->nj_njobs = c->njobs;
	c->nj_nnodes = n;
	return 0;
}

static void fail_job_of(struct coord *c, struct cjob *j, int node, const char *why)
{
	char msg[600];

	if (j->state == J_FIN || !job_has_node(j, node))
		return;
	snprintf(msg, sizeof(msg), "agent %s missing: %s", c->plan.nodes[node].name, why);
	coord_job_finish(c, j, msg);
}

void coord_fail_jobs_of(struct coord *c, int node, const char *why)
{
	int i;

	if (!c->njobs)
		return;
	if (node_jobs_index(c)) {	/* (out of memory: every job looked at) */
		for (i = 0; i < c->njobs; i++)
			fail_job_of(c, &c->jobs[i], node, why);
		return;
	}
	for (i = c->nj_first[node]; i < c->nj_first[node + 1]; i++)
		fail_job_of(c, &c->jobs[c->nj_list[i]], node, why);
}

/* Seconds a job may take before it may be called hung (coord_job_hung). */
static double job_budget_s(const struct coord *c, const struct cjob *j)
{
	const struct plan_phase *ph = j->ph;
	int nranks = j->nm;
	double d = 2, t = 10;
	const char *v;

	if (plan_is_group(ph)) {
		/* the collectives' own time-out (default 30 s) bounds each of
		 * their waits; the data at a floor of 1 Gb/s a rank and 1 ms a
		 * message step, twice over */
		t = 30;
		if ((v = plan_opt(ph, "timeout", NULL)))
			units_parse_seconds(v, &t);
		return 2 * plan_coll_seconds(ph, 0, nranks, 1, 1e-3) + 3 * t + 10;
	}
	if ((v = plan_opt(ph, "timeout", NULL)))
		units_parse_seconds(v, &t);
	if (j->load_for)	/* its warm-up, then its own duration */
		return (PLAN_LOAD_SETTLE_S + ph->load_s) * 1.5 + 3 * t + 10;
	if ((v = plan_opt(ph, "duration", NULL)))
		units_parse_seconds(v, &d);
	if (plan_opt(ph, "iters", NULL) && !plan_opt(ph, "duration", NULL))
		d = 30;	/* a counted run: no duration to go by */
	if (plan_bool(plan_opt(ph, "all", NULL)) == 1)
		d = 23 * (d > 1 ? d : 1);
	if (ph->kind == PLAN_POLARIZATION) {	/* every entropy set is a run of its own */
		int sets = atoi(plan_opt(ph, "sweep", "1")), flows = atoi(plan_opt(ph, "flows", "16"));

		sets = sets > 0 ? sets : 1;
		d = (plan_opt(ph, "duration", NULL) ? d : 3) * sets;
		/* and its traces, through routers that answer one a second past a
		 * burst (probes/trace.h: about a round a flow for each hop every flow
		 * crosses, and a few quiet rounds a TTL) */
		if (plan_bool(plan_opt(ph, "trace", NULL)) == 1)
			d += sets * (8 * 3 * 1.25 + 2 * (flows > 0 ? flows : 16) * 1.25);
	}
	if (ph->kind == PLAN_PFC || ph->kind == PLAN_TOPOLOGY) {
		struct plan_cost floor;	/* the model's, at 1 Gb/s */

		plan_cost_init(&floor);
		floor.gbps = 1;
		if (ph->kind == PLAN_TOPOLOGY)	/* the listening, and lldpcli's own 15 s */
			return plan_job_engine_s(ph, j->test, 0, j->lane, 1, &floor) * 1.5 + 20;
		/* before, the load, after (its drain) */
		d = plan_job_engine_s(ph, j->test, 0, j->lane, c->plan.nnodes, &floor);
	}
	return d * 1.5 + 3 * t + 10;
}

/* Seconds a job may report nothing (no record, no progress) once past its
 * budget: three of its engine's --timeout and 10 s, as the budget's own
 * slack (an engine ends each of its waits within its timeout, or moves
 * bytes, or fails and says so). */
static double job_stall_s(const struct cjob *j)
{
	double t = plan_is_group(j->ph) ? 30 : 10;
	const char *v;

	if ((v = plan_opt(j->ph, "timeout", NULL)))
		units_parse_seconds(v, &t);
	return 3 * t + 10;
}

int coord_job_stalled(const struct cjob *j, uint64_t now)
{
	/* (heard_ns may be past now: a message read after now was taken) */
	return now > j->deadline_ns && now > j->heard_ns && (now - j->heard_ns) / 1e9 > j->stall_s;
}

int coord_job_hung(struct coord *c, struct cjob *j, uint64_t now)
{
	char msg[600];
	double quiet = (now - j->heard_ns) / 1e9;

	if (!coord_job_stalled(j, now))
		return 0;
	if (!j->last[0])
		snprintf(msg, sizeof(msg), "nothing from it within %.0f s (no record, no progress of its engine): "
			 "stopped as hung (the agent or its engine)", (now - j->start_ns) / 1e9);
	else
		snprintf(msg, sizeof(msg), "no progress for %.0f s (no record, no bytes moved), %.0f s after it "
			 "started: stopped as hung (the agent or its engine); last: %s, %.0f s in", quiet,
			 (now - j->start_ns) / 1e9, j->last, (j->heard_ns - j->start_ns) / 1e9);
	coord_job_finish(c, j, msg);
	return 1;
}

/* Something came of job j from member node (what: the progress's own
 * text, else a word of its own), for coord_job_hung. */
static void job_heard(struct coord *c, struct cjob *j, int node, json_t *prog, const char *what)
{
	const char *w = json_string_value(json_object_get(prog, "what"));
	double b = json_number_value(json_object_get(prog, "bytes"));
	char moved[32] = "";

	j->heard_ns = clock_ns();
	if (!w && !what)
		return;
	if (b > 0 && b < 1e18) {
		units_format_size((uint64_t)b, moved, sizeof(moved));
		snprintf(j->last, sizeof(j->last), "%.80s: %.100s, %s moved", c->plan.nodes[node].name,
			 w ? w : what, moved);
	} else {
		snprintf(j->last, sizeof(j->last), "%.80s: %.140s", c->plan.nodes[node].name, w ? w : what);
	}
}

/* The share of its work done that a progress report of job j says */
static void job_frac(struct cjob *j, json_t *prog)
{
	json_t *f = json_object_get(prog, "frac");

	if (!json_is_number(f) || !(json_number_value(f) >= 0 && json_number_value(f) <= 1))
		return;
	j->frac = json_number_value(f);
	j->frac_ns = clock_ns();
	if (!j->frac0_ns) {
		j->frac0 = j->frac;
		j->frac0_ns = j->frac_ns;
	}
}

/* A record of job j came from node's member */
static void job_record_heard(struct coord *c, struct cjob *j, int node, json_t *rec)
{
	char what[96], sz[32];
	double size = record_num(rec, "msg_size_bytes", -1);

	if (size >= 0 && size < 1e18) {	/* (a record is untrusted: a size the cast can hold) */
		units_format_size((uint64_t)size, sz, sizeof(sz));
		snprintf(what, sizeof(what), "record %d (size %s)", j->nrec + 1, sz);
	} else {
		snprintf(what, sizeof(what), "record %d", j->nrec + 1);
	}
	job_heard(c, j, node, NULL, what);
}

static json_t *job_opts(const struct cjob *j)
{
	const struct plan_phase *ph = j->ph;
	json_t *o = json_object();
	char buf[64];
	int i;

	for (i = 0; i < ph->nkv; i++)	/* later keys override earlier ones */
		if (!j->load_for || plan_load_key(ph->kv[i].key))
			json_object_set_new(o, ph->kv[i].key, json_string(ph->kv[i].val));
	if (j->size_opt[0] && j->m) {	/* a re-test: the size it was found at */
		json_object_set_new(o, "minbytes", json_string(j->size_opt));
		json_object_set_new(o, "maxbytes", json_string(j->size_opt));
	} else if (j->size_opt[0]) {
		json_object_set_new(o, "size", json_string(j->size_opt));
		json_object_del(o, "all");
	}
	if (j->load_for) {	/* a load: long enough, past its warm-up when its lat job starts */
		snprintf(buf, sizeof(buf), "%g", ph->load_s);
		json_object_set_new(o, "duration", json_string(buf));
		snprintf(buf, sizeof(buf), "%gs", PLAN_LOAD_SETTLE_S);
		json_object_set_new(o, "warmup", json_string(buf));
	}
	return o;
}

/* Send a job message to node's agent; 0, or -1 (the message is gone). */
static int send_job(struct coord *c, int node, json_t *m)
{
	int ci = c->node_conn[node];

	if (ci < 0) {
		json_decref(m);
		return -1;
	}
	return coord_send_to(c, ci, m);
}

/* The agent's deadline for a member started now: what is left of the
 * job's, and 5 s to report. */
static json_int_t deadline_ms(const struct cjob *j)
{
	uint64_t now = clock_ns();

	return (json_int_t)((j->deadline_ns > now ? (j->deadline_ns - now) / 1000000 : 0) + 5000);
}

/* A job message's deadline_ms and stall_ms (the agent stops a job past
 * the one and silent for the other, 5 s after the coordinator would) */
static void job_times(json_t *m, const struct cjob *j)
{
	json_object_set_new(m, "deadline_ms", json_integer(deadline_ms(j)));
	json_object_set_new(m, "stall_ms", json_integer((json_int_t)(j->stall_s * 1000) + 5000));
}

/* Start member k of a group: rank 0 listens on a free port (role server),
 * the others are pointed at host:port (role client).  0 or -1. */
static int group_send(struct coord *c, struct cjob *j, int k, const char *host, int port)
{
	int node = j->m[k].node;
	const struct plan_endpoint *e = plan_node_ep(&c->plan.nodes[node], j->lane);
	json_t *m;

	m = json_pack("{ss,sI,ss,ss,so,ss,ss,si,si,si}", "type", "job", "id", (json_int_t)coord_job_id(c, j, k),
		      "test", j->test, "role", k ? "client" : "server", "opts", job_opts(j),
		      "bind", e->ip, "node", c->plan.nodes[node].name, "rank", k, "nranks", j->nm,
		      "rail", j->lane.rail);
	job_times(m, j);
	if (k) {
		json_object_set_new(m, "host", json_string(host));
		json_object_set_new(m, "port", json_integer(port));
	}
	if (send_job(c, node, m))
		return -1;
	j->m[k].started = 1;
	return 0;
}

/* A job of one node (topology): the node's agent runs it alone. */
static void solo_start(struct coord *c, struct cjob *j)
{
	json_t *m = json_pack("{ss,sI,ss,ss,so,ss}", "type", "job", "id", (json_int_t)coord_job_id(c, j, 1),
			      "test", j->test, "role", "client", "opts", job_opts(j), "node",
			      c->plan.nodes[j->client].name);

	job_times(m, j);
	j->state = J_RUN;
	j->srv_done = 1;	/* no server: the client's end is the job's */
	fs_log(1, "%s: started on %s", j->key, c->plan.nodes[j->client].name);
	if (send_job(c, j->client, m))
		coord_job_finish(c, j, "cannot reach the node's agent");
}

void coord_job_start(struct coord *c, struct cjob *j)
{
	json_t *m;
	int srv = j->m ? j->m[0].node : j->server;
	const struct plan_endpoint *e;

	j->budget_s = job_budget_s(c, j);
	j->stall_s = job_stall_s(j);
	j->start_ns = j->heard_ns = clock_ns();
	j->last[0] = 0;
	j->deadline_ns = j->start_ns + (uint64_t)(j->budget_s * 1e9);
	if (j->server < 0 && !j->m) {
		solo_start(c, j);
		return;
	}
	e = plan_node_ep(&c->plan.nodes[srv], j->lane);
	j->state = J_LISTEN;
	if (j->load)
		fs_log(1, "%s: started beside its load %s", j->key, c->jobs[j->load - 1].key);
	if (j->m) {
		fs_log(1, "%s: started, rank 0 on %s, %d ranks", j->key, c->plan.nodes[srv].name, j->nm);
		if (j->nm > COLL_MAX_RANKS) {
			char msg[300];

			snprintf(msg, sizeof(msg), "%d nodes on this lane: a collective takes at most %d ranks "
				 "(run it on a part of the nodes: a smaller hostfile)", j->nm, COLL_MAX_RANKS);
			coord_job_finish(c, j, msg);
			return;
		}
		if (group_send(c, j, 0, NULL, 0)) {
			char msg[400];

			snprintf(msg, sizeof(msg), "cannot reach the agent of %s (rank 0)", c->plan.nodes[srv].name);
			coord_job_finish(c, j, msg);
		}
		return;
	}
	m = json_pack("{ss,sI,ss,ss,so,ss,ss}", "type", "job", "id", (json_int_t)coord_job_id(c, j, 0),
		      "test", j->test, "role", "server", "opts", job_opts(j), "bind", e->ip,
		      "node", c->plan.nodes[j->server].name);
	job_times(m, j);
	if (j->ph->kind == PLAN_PFC)	/* one sampler of the target's port: its first server */
		json_object_set_new(m, "sample", json_boolean(j->sampler));
	if (send_job(c, j->server, m))
		coord_job_finish(c, j, "cannot reach the server's agent");
}

static void on_listening(struct coord *c, struct cjob *j, int port)
{
	const struct plan_endpoint *se, *ce;
	json_t *m;
	int k;

	if (j->state != J_LISTEN)
		return;
	j->state = J_RUN;
	if (j->m) {	/* rank 0 is ready: every other rank, pointed at it */
		se = plan_node_ep(&c->plan.nodes[j->m[0].node], j->lane);
		for (k = 1; k < j->nm; k++)
			if (group_send(c, j, k, se->ip, port)) {
				char msg[400];

				snprintf(msg, sizeof(msg), "cannot reach the agent of %s (rank %d)",
					 c->plan.nodes[j->m[k].node].name, k);
				coord_job_finish(c, j, msg);
				return;
			}
		return;
	}
	se = plan_node_ep(&c->plan.nodes[j->server], j->lane);
	ce = plan_node_ep(&c->plan.nodes[j->client], j->lane);
	j->run_ns = clock_ns();
	if (j->load_for)
		fs_log(1, "%s: the load's client started; its lat job %s follows in %g s", j->key,
		       c->jobs[j->load_for - 1].key, PLAN_LOAD_SETTLE_S);
	m = json_pack("{ss,sI,ss,ss,so,ss,ss,si,ss}", "type", "job", "id", (json_int_t)coord_job_id(c, j, 1),
		      "test", j->test, "role", "client", "opts", job_opts(j), "bind", ce->ip, "host", se->ip,
		      "port", port, "node", c->plan.nodes[j->client].name);
	job_times(m, j);
	if (send_job(c, j->client, m))
		coord_job_finish(c, j, "cannot reach the client's agent");
}

/* A message about member k of a group job. */
static void on_group_msg(struct coord *c, struct cjob *j, int k, const char *type, json_t *m)
{
	struct cmember *mb = &j->m[k];

	if (!strcmp(type, "listening") && !k) {
		json_t *port = json_object_get(m, "port");

		job_heard(c, j, mb->node, NULL, "rank 0 listened");
		if (json_is_integer(port))
			on_listening(c, j, (int)json_integer_value(port));
	} else if (!strcmp(type, "progress") && j->state != J_FIN) {
		job_heard(c, j, mb->node, json_object_get(m, "progress"), NULL);
		if (!k)	/* rank 0's share done is the collective's */
			job_frac(j, json_object_get(m, "progress"));
	} else if (!strcmp(type, "record") && !k && j->state != J_FIN) {
		/* only rank 0 measures the collective: one record per size */
		json_t *rec = json_object_get(m, "record");

		if (json_is_object(rec)) {
			double w = record_num(rec, "metrics.wrong", 0);

			if (w > 0)
				j->wrong += w;
			job_record_heard(c, j, mb->node, rec);
			coord_learn_record(c, j, rec);
			stamp(c, rec, j);
			results_append(&c->res, rec);
			j->nrec++;
		}
	} else if (!strcmp(type, "done") && !mb->done) {
		const char *err = json_string_value(json_object_get(m, "error"));
		int code = (int)json_integer_value(json_object_get(m, "exit")), all = 1, i;

		mb->done = 1;
		mb->exit = code;
		fs_log(1, "%s: %s (rank %d) exited with status %d%s%s", j->key, c->plan.nodes[mb->node].name, k,
		       code, err && *err ? ": " : "", err ? err : "");
		if (code && err && *err && !k && !(code == FS_EXIT_CHECK && j->wrong > 0))
			snprintf(j->err0, sizeof(j->err0), "%s (rank 0): %s", c->plan.nodes[mb->node].name, err);
		else if (code && err && *err && k) {
			char e[sizeof(j->err)];

			snprintf(e, sizeof(e), "%s (rank %d): %s", c->plan.nodes[mb->node].name, k, err);
			mb->err = strdup(e);
			if (!j->err[0])
				snprintf(j->err, sizeof(j->err), "%s", e);
		}
		for (i = 0; i < j->nm; i++)
			all &= j->m[i].done || !j->m[i].started;
		if (j->state == J_LISTEN && !k)
			coord_job_finish(c, j, j->err0[0] ? j->err0 : "rank 0 ended before it listened");
		else if (all && j->state == J_RUN)
			coord_job_finish(c, j, NULL);
		else if ((!k || code) && !j->grace_ns)
			/* rank 0 is done (the others end once it says bye), or a
			 * rank failed (the others will notice): a little while
			 * for the rest to report */
			j->grace_ns = clock_ns() + 3000000000ull;
	}
}

void coord_on_agent_msg(struct coord *c, int ci, json_t *m)
{
	const char *type = json_string_value(json_object_get(m, "type"));
	long id = (long)json_integer_value(json_object_get(m, "id"));
	int is_client, ji, k;
	struct cjob *j;

	if (!type)
		return;
	if (!strcmp(type, "heartbeat") || !strcmp(type, "pong")) {
		json_t *t = json_object_get(m, "t");

		if (!strcmp(type, "pong") && json_is_integer(t) && json_integer_value(t) > 0 && c->njobs) {
			/* a ping phase's answer: t is the send time */
			ji = job_of(c, (long)json_integer_value(json_object_get(m, "id")), &is_client);
			if (ji >= 0 && is_client == 1 && c->jobs[ji].ph->kind == PLAN_PING &&
			    c->jobs[ji].state == J_RUN && c->jobs[ji].client == c->conns[ci].node) {
				json_t *rec = record_new("ping");
				double rtt = (clock_ns() - (uint64_t)json_integer_value(t)) / 1e3;

				j = &c->jobs[ji];
				json_object_set_new(rec, "transport", json_string("control"));
				json_object_set_new(rec, "metrics", json_pack("{sf}", "rtt_us", rtt));
				json_object_set_new(rec, "status", json_string("ok"));
				stamp(c, rec, j);
				results_append(&c->res, rec);
				json_decref(rec);
				j->nrec++;
				coord_job_finish(c, j, NULL);
			}
		}
		return;
	}
	if (!strcmp(type, "error")) {
		const char *msg = json_string_value(json_object_get(m, "message"));

		fs_warn("agent %s: %s", c->plan.nodes[c->conns[ci].node].name, msg ? msg : "error");
		if (msg && strstr(msg, "refused the control channel"))	/* it stops: say why it went */
			coord_conn_gone(c, ci, "its control channel was tampered with (it refused a message from "
					"the coordinator that failed its MAC)");
		return;
	}
	ji = job_of(c, id, &k);
	if (ji < 0)
		return;	/* a job of an earlier round, cancelled */
	j = &c->jobs[ji];
	if (j->m) {
		if (k < j->nm && c->conns[ci].node == j->m[k].node)
			on_group_msg(c, j, k, type, m);
		return;
	}
	if (k > 1)
		return;
	is_client = k;
	if (c->conns[ci].node != (is_client ? j->client : j->server))
		return;	/* not that agent's job: ignore */
	if (!strcmp(type, "listening") && !is_client) {
		json_t *port = json_object_get(m, "port");

		job_heard(c, j, j->server, NULL, "its server listened");
		if (json_is_integer(port))
			on_listening(c, j, (int)json_integer_value(port));
	} else if (!strcmp(type, "progress") && j->state != J_FIN) {
		job_heard(c, j, is_client ? j->client : j->server, json_object_get(m, "progress"), NULL);
		if (is_client)
			job_frac(j, json_object_get(m, "progress"));
	} else if (!strcmp(type, "record") && j->state != J_FIN &&
		   (is_client || (j->ph->kind == PLAN_PFC &&	/* the target samples its port too */
				  !strcmp(record_str(json_object_get(m, "record"), "test", ""), "pfc")))) {
		json_t *rec = json_object_get(m, "record");

		if (json_is_object(rec)) {
			job_record_heard(c, j, is_client ? j->client : j->server, rec);
			coord_learn_record(c, j, rec);
			stamp(c, rec, j);
			coord_polar_record(c, j, rec);
			results_append(&c->res, rec);
			j->nrec++;
		}
		if (j->load_for)	/* it comes once the load's traffic has stopped */
			load_over(c, j, NULL);
	} else if (!strcmp(type, "done")) {
		const char *err = json_string_value(json_object_get(m, "error"));
		int code = (int)json_integer_value(json_object_get(m, "exit"));

		if (err && *err && (!j->err[0] || is_client))
			snprintf(j->err, sizeof(j->err), "%s: %s",
				 c->plan.nodes[is_client ? j->client : j->server].name, err);
		if (is_client && j->load_for)	/* its traffic is over */
			load_over(c, j, code ? (j->err[0] ? j->err : "the client failed") : NULL);
		if (is_client) {
			j->cli_done = 1;
			j->cli_exit = code;
			/* a polarization sweep's server serves a client a set: ended here */
			if (j->srv_done || (j->ph->kind == PLAN_POLARIZATION && atoi(plan_opt(j->ph, "sweep", "1")) > 1))
				coord_job_finish(c, j, NULL);
			else
				j->grace_ns = clock_ns() + 3000000000ull;
		} else {
			j->srv_done = 1;
			j->srv_exit = code;
			if (j->state == J_LISTEN)
				coord_job_finish(c, j, j->err[0] ? j->err : "the server ended before it listened");
			else if (j->cli_done)
				coord_job_finish(c, j, NULL);
		}
	}
}
