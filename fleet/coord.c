/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * `fabscope run PLAN`: the coordinator.
 *
 * It launches the agents, authenticates them, and runs the plan's phases
 * round by round.  A round is a set of jobs (a test between two endpoints
 * of one lane) run at once on every lane; a job is a server job on one
 * agent and, once it listens, a client job on the other.  The collectives
 * (kinds allreduce, alltoall) have group jobs instead: per lane, one job
 * whose members are the nodes on that lane in node order (rank i is the
 * i-th); rank 0 starts as the server, and once it listens ranks 1..N-1
 * start as clients pointed at it.  Every lane's group runs at once: one
 * ring per rail, in parallel.  Records stream into the results directory
 * as the agents send them (a group's from rank 0 only).  One poll() loop
 * serves every agent; nothing waits on one agent without a deadline.
 *
 * An agent that closes its connection, or is silent for --agent-timeout,
 * is marked missing: its running jobs fail with a record saying so, its
 * later jobs are skipped with such a record, the run goes on, and the exit
 * code is 4.  --resume DIR runs again the jobs that have no record.
 */
#include <errno.h>
#include <stdarg.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../bench/ptp.h"
#include "../core/builtin.h"
#include "../core/clock.h"
#include "../core/error.h"
#include "../core/net.h"
#include "../core/options.h"
#include "../core/record.h"
#include "../core/units.h"
#include "../collectives/coll.h"
#include "../transport/transport.h"
#include "analyze.h"
#include "coord.h"

/* A member of a group job: rank i of the collective. */
struct cmember {
	int node;
	int started, done, exit;
	char *err;		/* its error, when it failed */
};

struct cjob {
	char key[256];
	const char *test;
	int client, server;	/* a pair (group jobs: client = rank 0's node, server = -1) */
	struct cmember *m;	/* a group job's members by rank, else NULL */
	int nm;
	struct plan_lane lane;
	const struct plan_phase *ph;
	int round;
	int state;		/* 0 not started, 1 waiting to listen, 2 running, 3 finished */
	int srv_done, cli_done, srv_exit, cli_exit, nrec;
	int sampler;		/* pfc: the server that samples the target's port */
	double wrong;		/* a group: wrong elements in rank 0's records */
	char err[512];		/* a pair: the client's error, else the server's; a group: the
				 * first error of a rank other than 0 */
	char err0[512];		/* a group: rank 0's error */
	double budget_s;
	uint64_t deadline_ns, grace_ns;
};

enum { J_IDLE, J_LISTEN, J_RUN, J_FIN };

/* Before it has proved the token, a peer gets no 4 MiB buffers: a register is small. */
#define COORD_JOIN_MAX_MSG (64u << 10)

/* ---- connections ---- */

static int send_to(struct coord *c, int ci, json_t *msg)
{
	struct conn *k = &c->conns[ci];
	int rc;

	if (k->gone) {
		json_decref(msg);
		return -1;
	}
	rc = wire_send(k->fd, msg, 2000);
	json_decref(msg);
	return rc;
}

int coord_add_conn(struct coord *c, int fd, int want_node, const char *peer)
{
	struct conn *k;

	c->conns = realloc(c->conns, (size_t)(c->nconns + 1) * sizeof(*c->conns));
	k = &c->conns[c->nconns];
	memset(k, 0, sizeof(*k));
	k->fd = fd;
	k->node = -1;
	k->want_node = want_node;
	snprintf(k->peer, sizeof(k->peer), "%s", peer ? peer : "?");
	k->opened_ns = k->last_ns = clock_ns();
	net_set_nonblock(fd, 1);
	fleet_nonce(k->nonce);
	c->nconns++;
	if (send_to(c, c->nconns - 1, json_pack("{ss,ss,si,ss}", "type", "challenge", "proto", FLEET_PROTO,
						"version", wire_version(), "nonce", k->nonce))) {
		k->gone = 1;
		close(fd);
	}
	return c->nconns - 1;
}

static void fail_jobs_of(struct coord *c, int node, const char *why);

/* The agent of connection ci is gone (why); its node is missing. */
static void conn_gone(struct coord *c, int ci, const char *why)
{
	struct conn *k = &c->conns[ci];

	if (k->gone)
		return;
	k->gone = 1;
	close(k->fd);
	wire_rd_free(&k->rd);
	if (k->node >= 0) {
		const char *name = c->plan.nodes[k->node].name;

		fs_warn("agent %s is missing: %s", name, why);
		free(c->node_why[k->node]);
		c->node_why[k->node] = strdup(why);
		c->node_conn[k->node] = -1;
		fail_jobs_of(c, k->node, why);
	}
}

static void refuse(struct coord *c, int ci, const char *claimed, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void refuse(struct coord *c, int ci, const char *claimed, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	fs_warn("refused agent '%.64s' from %s: %s", claimed ? claimed : "?", c->conns[ci].peer, why);
	send_to(c, ci, json_pack("{ss,ss}", "type", "error", "message", why));
	c->conns[ci].gone = 1;
	close(c->conns[ci].fd);
	wire_rd_free(&c->conns[ci].rd);
}

void coord_ensure_nodes(struct coord *c)
{
	int i;

	if (c->plan.nnodes <= c->nnodes_cap)
		return;
	c->node_conn = realloc(c->node_conn, (size_t)c->plan.nnodes * sizeof(*c->node_conn));
	c->node_why = realloc(c->node_why, (size_t)c->plan.nnodes * sizeof(*c->node_why));
	for (i = c->nnodes_cap; i < c->plan.nnodes; i++) {
		c->node_conn[i] = -1;
		c->node_why[i] = NULL;
	}
	c->nnodes_cap = c->plan.nnodes;
}

static void on_register(struct coord *c, int ci, json_t *m)
{
	struct conn *k = &c->conns[ci];
	const char *name = json_string_value(json_object_get(m, "node"));
	const char *nonce = json_string_value(json_object_get(m, "nonce"));
	const char *type = json_string_value(json_object_get(m, "type"));
	int version = (int)json_integer_value(json_object_get(m, "version")), node;
	char mac[FLEET_NONCE_HEX + 1];
	json_t *nodes, *info;

	if (type && !strcmp(type, "error")) {	/* the agent refused us */
		const char *msg = json_string_value(json_object_get(m, "message"));

		fs_warn("an agent from %s refused this coordinator: %s", k->peer, msg ? msg : "no reason");
		k->gone = 1;
		close(k->fd);
		return;
	}
	if (!type || strcmp(type, "register") || !name || !nonce || strlen(nonce) != FLEET_NONCE_HEX) {
		refuse(c, ci, name, "expected a register message");
		return;
	}
	{	/* names go into messages, logs and records: no control characters, not too long */
		const char *p;

		for (p = name; *p && (unsigned char)*p >= 0x20 && *p != 0x7f; p++)
			;
		if (*p || p == name || p - name > 255) {
			refuse(c, ci, NULL, "a node name of %zu bytes%s: names are 1 to 255 bytes of text",
			       strlen(name), *p ? " with control characters" : "");
			return;
		}
	}
	if (version != wire_version()) {
		refuse(c, ci, name, "agent %s speaks fleet protocol %d, this coordinator %d: run the same fabscope version everywhere",
		       name, version, wire_version());
		return;
	}
	if (!fleet_mac_ok(c->token, "agent", k->nonce, nonce, json_string_value(json_object_get(m, "mac")))) {
		refuse(c, ci, name, "authentication failed: agent %s has the wrong token (check --token-file / FABSCOPE_TOKEN)", name);
		return;
	}
	node = plan_node_index(&c->plan, name);
	if (k->want_node >= 0 && node != k->want_node) {
		refuse(c, ci, name, "this connection was made for node %s", c->plan.nodes[k->want_node].name);
		return;
	}
	if (node < 0) {
		if (c->plan.hostfile) {
			refuse(c, ci, name, "node %s is not in the hostfile %s", name, c->plan.hostfile);
			return;
		}
		if (c->plan.nnodes >= c->expected) {
			refuse(c, ci, name, "%d agents have joined already, as many as expected", c->expected);
			return;
		}
		node = plan_node_add(&c->plan, name);
		coord_ensure_nodes(c);
	}
	if (c->node_conn[node] >= 0) {
		refuse(c, ci, name, "node %s has joined already (two agents with one name: give --name)", name);
		return;
	}
	if (c->node_why[node] && !strncmp(c->node_why[node], "did not join", 12)) {
		refuse(c, ci, name, "node %s joined too late: it is marked missing", name);
		return;
	}
	fleet_mac(c->token, "coordinator", nonce, k->nonce, mac);
	if (send_to(c, ci, json_pack("{ss,ss,ss,si,si}", "type", "welcome", "mac", mac, "node", name,
				     "heartbeat_ms", FLEET_HEARTBEAT_MS,
				     "silence_ms", units_ms(c->agent_timeout)))) {
		conn_gone(c, ci, "lost while joining");
		return;
	}
	k->authed = 1;
	k->node = node;
	c->node_conn[node] = ci;
	{	/* endpoints: the hostfile's, else the agent's, else its address */
		struct plan_node *n = &c->plan.nodes[node];
		json_t *eps = json_object_get(m, "endpoints"), *e;
		size_t i;

		if (!n->nep) {
			json_array_foreach(eps, i, e) {
				const char *ip = json_string_value(json_object_get(e, "ip"));
				int rail = (int)json_integer_value(json_object_get(e, "rail"));
				int plane = (int)json_integer_value(json_object_get(e, "plane"));

				if (!ip || !plan_lane_ok(rail, plane) || !plan_ip_ok(ip)) {	/* (its --rail refuses these) */
					fs_warn("agent %s: endpoint %d of its registration is not a rail 0-%d, "
						"plane 0-7 and an IP address: left out", name, (int)i,
						PLAN_MAX_LANES - 1);
					continue;
				}
				n->ep = realloc(n->ep, (size_t)(n->nep + 1) * sizeof(*n->ep));
				n->ep[n->nep].rail = rail;
				n->ep[n->nep].plane = plane;
				n->ep[n->nep].ip = strdup(ip);
				n->nep++;
			}
		}
		if (!n->nep) {
			n->ep = calloc(1, sizeof(*n->ep));
			n->ep[0].ip = strdup(strcmp(k->peer, "local") && strchr(k->peer, '.') ? k->peer : "127.0.0.1");
			n->nep = 1;
		}
	}
	nodes = json_object_get(c->res.run, "agents");
	info = json_pack("{ss,ss?,si,ss?,ss,sf}", "node", name,
			 "host", json_string_value(json_object_get(m, "host")),
			 "pid", (int)json_integer_value(json_object_get(m, "pid")),
			 "version", json_string_value(json_object_get(m, "tool_version")),
			 "from", k->peer, "joined_s", (clock_ns() - c->run_start_ns) / 1e9);
	json_array_append_new(nodes, info);
	fs_log(1, "agent %s joined from %s", name, k->peer);
}

/* ---- jobs ---- */

static long job_id(const struct coord *c, const struct cjob *j, int member)
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

static void jobs_clear(struct coord *c)
{
	int i;

	for (i = 0; i < c->njobs; i++) {
		int k;

		for (k = 0; c->jobs[i].m && k < c->jobs[i].nm; k++)
			free(c->jobs[i].m[k].err);
		free(c->jobs[i].m);
	}
	free(c->jobs);
	c->jobs = NULL;
	c->njobs = 0;
}

void coord_lane_name(struct plan_lane l, char *buf, size_t len)
{
	if (l.plane)
		snprintf(buf, len, "rail %d plane %d", l.rail, l.plane);
	else
		snprintf(buf, len, "rail %d", l.rail);
}

static void job_key(char *buf, size_t len, const struct plan_phase *ph, const char *test, int round,
		    struct plan_lane l, const char *a, const char *b)
{
	char lane[32];

	if (l.plane)
		snprintf(lane, sizeof(lane), "rail%d.%d", l.rail, l.plane);
	else
		snprintf(lane, sizeof(lane), "rail%d", l.rail);
	if (b)
		snprintf(buf, len, "%s/%s/r%d/%s/%s>%s", ph->name, test, round + 1, lane, a, b);
	else
		snprintf(buf, len, "%s/%s/r%d/%s/%s", ph->name, test, round + 1, lane, a);
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
	if (j->m) {
		stamp_group(c, rec, j);
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
			char key[300];

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

static void progress(struct coord *c, int final);

static void cancel(struct coord *c, int node, long id)
{
	int ci = node >= 0 ? c->node_conn[node] : -1;

	if (ci >= 0)
		send_to(c, ci, json_pack("{ss,sI}", "type", "cancel", "id", (json_int_t)id));
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

static void job_finish(struct coord *c, struct cjob *j, const char *why)
{
	char msg[700];
	int k;

	if (j->state == J_FIN)
		return;
	if (!why && j->m && group_failed(c, j, msg, sizeof(msg)))
		why = msg;
	else if (!why && j->cli_done && j->cli_exit) {
		snprintf(msg, sizeof(msg), "%s", j->err[0] ? j->err : "the client failed");
		why = msg;
	}
	if (why) {
		job_error_record(c, j, why);
		c->failed_jobs++;
		fs_warn("%s: %s", j->key, why);
	} else if (j->wrong > 0) {
		fs_warn("%s: %.0f wrong element%s: the data check failed (a rank, its NIC or the fabric "
			"corrupted data; see the records' metrics.wrong)", j->key, j->wrong, j->wrong == 1 ? "" : "s");
	}
	if (j->m) {	/* every member still running */
		for (k = 0; k < j->nm; k++)
			if (j->m[k].started && !j->m[k].done)
				cancel(c, j->m[k].node, job_id(c, j, k));
	} else if (j->state == J_LISTEN || j->state == J_RUN) {
		if (!j->srv_done && j->server >= 0)
			cancel(c, j->server, job_id(c, j, 0));
		if (!j->cli_done && j->state == J_RUN && j->server >= 0)
			cancel(c, j->client, job_id(c, j, 1));
	}
	j->state = J_FIN;
	results_job_finished(&c->res, j->key);	/* (its records are in: --resume skips it) */
	if (j->m)
		fs_log(1, "%s: finished, %d record%s", j->key, j->nrec, j->nrec == 1 ? "" : "s");
	c->jobs_done++;
	progress(c, 0);
}

static void fail_jobs_of(struct coord *c, int node, const char *why)
{
	int i;

	for (i = 0; i < c->njobs; i++) {
		struct cjob *j = &c->jobs[i];
		char msg[600];

		if (j->state == J_FIN || !job_has_node(j, node))
			continue;
		snprintf(msg, sizeof(msg), "agent %s missing: %s", c->plan.nodes[node].name, why);
		job_finish(c, j, msg);
	}
}

/* Seconds a job may take before it is called hung (nranks: a group's). */
static double job_budget_s(const struct plan_phase *ph, int nranks)
{
	double d = 2, t = 10;
	const char *v;

	if (plan_is_group(ph)) {
		/* the collectives' own time-out (default 30 s) bounds each of
		 * their waits; the data at a floor of 1 Gb/s a rank and 1 ms a
		 * message step, twice over */
		t = 30;
		if ((v = plan_opt(ph, "timeout", NULL)))
			units_parse_seconds(v, &t);
		return 2 * plan_coll_seconds(ph, nranks, 1, 1e-3) + 3 * t + 10;
	}
	if ((v = plan_opt(ph, "duration", NULL)))
		units_parse_seconds(v, &d);
	if ((v = plan_opt(ph, "timeout", NULL)))
		units_parse_seconds(v, &t);
	if (plan_opt(ph, "iters", NULL) && !plan_opt(ph, "duration", NULL))
		d = 30;	/* a counted run: no duration to go by */
	if (plan_bool(plan_opt(ph, "all", NULL)) == 1)
		d = 23 * (d > 1 ? d : 1);
	if (ph->kind == PLAN_POLARIZATION) {	/* every entropy set is a run of its own */
		int sets = atoi(plan_opt(ph, "sweep", "1"));

		d = (plan_opt(ph, "duration", NULL) ? d : 3) * (sets > 0 ? sets : 1);
	}
	if (ph->kind == PLAN_PFC)	/* before, the load, after */
		d = ph->est_s;
	return d * 1.5 + 3 * t + 10;
}

static json_t *job_opts(const struct plan_phase *ph)
{
	json_t *o = json_object();
	int i;

	for (i = 0; i < ph->nkv; i++)	/* later keys override earlier ones */
		json_object_set_new(o, ph->kv[i].key, json_string(ph->kv[i].val));
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
	return send_to(c, ci, m);
}

/* The agent's deadline for a member started now: what is left of the
 * job's, and 5 s to report. */
static json_int_t deadline_ms(const struct cjob *j)
{
	uint64_t now = clock_ns();

	return (json_int_t)((j->deadline_ns > now ? (j->deadline_ns - now) / 1000000 : 0) + 5000);
}

/* Start member k of a group: rank 0 listens on a free port (role server),
 * the others are pointed at host:port (role client).  0 or -1. */
static int group_send(struct coord *c, struct cjob *j, int k, const char *host, int port)
{
	int node = j->m[k].node;
	const struct plan_endpoint *e = plan_node_ep(&c->plan.nodes[node], j->lane);
	json_t *m;

	m = json_pack("{ss,sI,ss,ss,so,ss,ss,si,si,si,sI}", "type", "job", "id", (json_int_t)job_id(c, j, k),
		      "test", j->test, "role", k ? "client" : "server", "opts", job_opts(j->ph),
		      "bind", e->ip, "node", c->plan.nodes[node].name, "rank", k, "nranks", j->nm,
		      "rail", j->lane.rail, "deadline_ms", deadline_ms(j));
	if (k) {
		json_object_set_new(m, "host", json_string(host));
		json_object_set_new(m, "port", json_integer(port));
	}
	if (send_job(c, node, m))
		return -1;
	j->m[k].started = 1;
	return 0;
}

static void job_start(struct coord *c, struct cjob *j)
{
	json_t *m;
	int srv = j->m ? j->m[0].node : j->server;
	const struct plan_endpoint *e = plan_node_ep(&c->plan.nodes[srv], j->lane);

	j->budget_s = job_budget_s(j->ph, j->nm);
	j->deadline_ns = clock_ns() + (uint64_t)(j->budget_s * 1e9);
	j->state = J_LISTEN;
	if (j->m) {
		fs_log(1, "%s: started, rank 0 on %s, %d ranks", j->key, c->plan.nodes[srv].name, j->nm);
		if (j->nm > COLL_MAX_RANKS) {
			char msg[300];

			snprintf(msg, sizeof(msg), "%d nodes on this lane: a collective takes at most %d ranks "
				 "(run it on a part of the nodes: a smaller hostfile)", j->nm, COLL_MAX_RANKS);
			job_finish(c, j, msg);
			return;
		}
		if (group_send(c, j, 0, NULL, 0)) {
			char msg[400];

			snprintf(msg, sizeof(msg), "cannot reach the agent of %s (rank 0)", c->plan.nodes[srv].name);
			job_finish(c, j, msg);
		}
		return;
	}
	m = json_pack("{ss,sI,ss,ss,so,ss,ss,sI}", "type", "job", "id", (json_int_t)job_id(c, j, 0),
		      "test", j->test, "role", "server", "opts", job_opts(j->ph), "bind", e->ip,
		      "node", c->plan.nodes[j->server].name, "deadline_ms", deadline_ms(j));
	if (j->ph->kind == PLAN_PFC)	/* one sampler of the target's port: its first server */
		json_object_set_new(m, "sample", json_boolean(j->sampler));
	if (send_job(c, j->server, m))
		job_finish(c, j, "cannot reach the server's agent");
}

static void on_listening(struct coord *c, struct cjob *j, int port)
{
	const struct plan_endpoint *se, *ce;
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
				job_finish(c, j, msg);
				return;
			}
		return;
	}
	se = plan_node_ep(&c->plan.nodes[j->server], j->lane);
	ce = plan_node_ep(&c->plan.nodes[j->client], j->lane);
	if (send_job(c, j->client, json_pack("{ss,sI,ss,ss,so,ss,ss,si,ss,sI}", "type", "job",
					     "id", (json_int_t)job_id(c, j, 1),
					     "test", j->test, "role", "client", "opts", job_opts(j->ph),
					     "bind", ce->ip, "host", se->ip, "port", port,
					     "node", c->plan.nodes[j->client].name,
					     "deadline_ms", deadline_ms(j))))
		job_finish(c, j, "cannot reach the client's agent");
}

/* A message about member k of a group job. */
static void on_group_msg(struct coord *c, struct cjob *j, int k, const char *type, json_t *m)
{
	struct cmember *mb = &j->m[k];

	if (!strcmp(type, "listening") && !k) {
		json_t *port = json_object_get(m, "port");

		if (json_is_integer(port))
			on_listening(c, j, (int)json_integer_value(port));
	} else if (!strcmp(type, "record") && !k && j->state != J_FIN) {
		/* only rank 0 measures the collective: one record per size */
		json_t *rec = json_object_get(m, "record");

		if (json_is_object(rec)) {
			double w = record_num(rec, "metrics.wrong", 0);

			if (w > 0)
				j->wrong += w;
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
			job_finish(c, j, j->err0[0] ? j->err0 : "rank 0 ended before it listened");
		else if (all && j->state == J_RUN)
			job_finish(c, j, NULL);
		else if ((!k || code) && !j->grace_ns)
			/* rank 0 is done (the others end once it says bye), or a
			 * rank failed (the others will notice): a little while
			 * for the rest to report */
			j->grace_ns = clock_ns() + 3000000000ull;
	}
}

static void on_agent_msg(struct coord *c, int ci, json_t *m)
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
				job_finish(c, j, NULL);
			}
		}
		return;
	}
	if (!strcmp(type, "error")) {
		const char *msg = json_string_value(json_object_get(m, "message"));

		fs_warn("agent %s: %s", c->plan.nodes[c->conns[ci].node].name, msg ? msg : "error");
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

		if (json_is_integer(port))
			on_listening(c, j, (int)json_integer_value(port));
	} else if (!strcmp(type, "record") && j->state != J_FIN &&
		   (is_client || (j->ph->kind == PLAN_PFC &&	/* the target samples its port too */
				  !strcmp(record_str(json_object_get(m, "record"), "test", ""), "pfc")))) {
		json_t *rec = json_object_get(m, "record");

		if (json_is_object(rec)) {
			stamp(c, rec, j);
			results_append(&c->res, rec);
			j->nrec++;
		}
	} else if (!strcmp(type, "done")) {
		const char *err = json_string_value(json_object_get(m, "error"));
		int code = (int)json_integer_value(json_object_get(m, "exit"));

		if (err && *err && (!j->err[0] || is_client))
			snprintf(j->err, sizeof(j->err), "%s: %s",
				 c->plan.nodes[is_client ? j->client : j->server].name, err);
		if (is_client) {
			j->cli_done = 1;
			j->cli_exit = code;
			if (j->srv_done)
				job_finish(c, j, NULL);
			else
				j->grace_ns = clock_ns() + 3000000000ull;
		} else {
			j->srv_done = 1;
			j->srv_exit = code;
			if (j->state == J_LISTEN)
				job_finish(c, j, j->err[0] ? j->err : "the server ended before it listened");
			else if (j->cli_done)
				job_finish(c, j, NULL);
		}
	}
}

/* ---- the event loop ---- */

static void accept_new(struct coord *c)
{
	for (;;) {
		struct net_addr peer;
		char name[NET_ADDRSTRLEN];
		int fd = net_accept(c->listen_fd, 0, &peer);

		if (fd < 0)
			return;
		net_addr_host(&peer, name, sizeof(name));
		coord_add_conn(c, fd, -1, name);
	}
}

static int coord_poll(struct coord *c, int timeout_ms)
{
	struct pollfd *pfd = malloc((size_t)(c->nconns + 1) * sizeof(*pfd));
	int *which = malloc((size_t)(c->nconns + 1) * sizeof(*which));
	int n = 0, i, rc;
	uint64_t now;

	if (c->listen_fd >= 0) {
		pfd[n].fd = c->listen_fd;
		pfd[n].events = POLLIN;
		which[n++] = -1;
	}
	for (i = 0; i < c->nconns; i++)
		if (!c->conns[i].gone) {
			pfd[n].fd = c->conns[i].fd;
			pfd[n].events = POLLIN;
			which[n++] = i;
		}
	rc = poll(pfd, (nfds_t)n, timeout_ms);
	for (i = 0; rc > 0 && i < n; i++) {
		int ci = which[i];

		if (!pfd[i].revents)
			continue;
		if (ci < 0) {
			accept_new(c);
			continue;
		}
		for (;;) {
			json_t *m;
			int r = wire_read_some(c->conns[ci].fd, &c->conns[ci].rd, &m,
					       c->conns[ci].authed ? FLEET_MAX_MSG : COORD_JOIN_MAX_MSG);

			if (r == 0)
				break;
			if (r < 0) {
				char why[128];

				snprintf(why, sizeof(why), "%s", r == -ECONNRESET ? "its connection closed" :
					 wire_strerror(r));
				if (c->conns[ci].authed)
					conn_gone(c, ci, why);
				else if (!c->conns[ci].gone) {
					if (r != -ECONNRESET)
						fs_warn("a connection from %s sent a bad message before registering (%s): closed",
							c->conns[ci].peer, why);
					c->conns[ci].gone = 1;
					close(c->conns[ci].fd);
					wire_rd_free(&c->conns[ci].rd);
					if (c->conns[ci].want_node >= 0) {
						int node = c->conns[ci].want_node;

						free(c->node_why[node]);
						c->node_why[node] = strdup("its agent ended before joining (see its message above)");
					}
				}
				break;
			}
			c->conns[ci].last_ns = clock_ns();
			if (!c->conns[ci].authed)
				on_register(c, ci, m);
			else
				on_agent_msg(c, ci, m);
			json_decref(m);
			if (c->conns[ci].gone)
				break;
		}
	}
	free(pfd);
	free(which);
	now = clock_ns();
	for (i = 0; i < c->nconns; i++) {	/* silence */
		struct conn *k = &c->conns[i];

		if (k->gone)
			continue;
		if (!k->authed && now - k->opened_ns > (uint64_t)(c->agent_timeout * 1e9)) {
			fs_warn("a connection from %s did not register within %.0f s: closed", k->peer, c->agent_timeout);
			k->gone = 1;
			close(k->fd);
			wire_rd_free(&k->rd);
		} else if (k->authed && now - k->last_ns > (uint64_t)(c->agent_timeout * 1e9)) {
			char why[128];

			snprintf(why, sizeof(why), "silent for %.0f s (no heartbeat)", c->agent_timeout);
			conn_gone(c, i, why);
		}
	}
	if (now - c->last_ping_ns > FLEET_HEARTBEAT_MS * 1000000ull) {
		c->last_ping_ns = now;
		for (i = 0; i < c->nconns; i++)
			if (c->conns[i].authed && !c->conns[i].gone &&
			    send_to(c, i, json_pack("{ss,si}", "type", "ping", "t", 0)))
				conn_gone(c, i, "its connection broke");
	}
	for (i = 0; i < c->njobs; i++) {	/* deadlines */
		struct cjob *j = &c->jobs[i];

		if (j->state == J_FIN || j->state == J_IDLE)
			continue;
		if (j->grace_ns && now > j->grace_ns)
			/* the server lingers: the client is what counts (a group:
			 * rank 0 is done and others linger, or a rank failed and
			 * the rest had a while to report) */
			job_finish(c, j, NULL);
		else if (now > j->deadline_ns) {
			char msg[300];

			snprintf(msg, sizeof(msg), "no result within %.0f s: stopped (a hung agent or engine)",
				 j->budget_s);
			job_finish(c, j, msg);
		}
	}
	return net_stop ? -FS_EXIT_INTERRUPTED : 0;
}

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

static void progress(struct coord *c, int final)
{
	char eta[32];

	if (!c->phase_name)
		return;
	fmt_eta(c->est_left_s, eta, sizeof(eta));
	if (c->tty) {
		fprintf(stderr, "\r\033[K[%d/%d] %s: round %d/%d, %d/%d jobs, ETA %s", c->phase_i + 1,
			c->nphases, c->phase_name, c->round_i + 1, c->nrounds, c->jobs_done, c->njobs, eta);
		if (final)
			fputc('\n', stderr);
		fflush(stderr);
	} else if (final == 2) {	/* interrupted (or stopped) in the round */
		fprintf(stderr, "fabscope run: [%d/%d] %s: round %d/%d stopped, %d of %d jobs finished, "
			"%d failed so far\n", c->phase_i + 1, c->nphases, c->phase_name, c->round_i + 1,
			c->nrounds, c->jobs_done, c->njobs, c->failed_jobs);
	} else if (final) {
		fprintf(stderr, "fabscope run: [%d/%d] %s: round %d/%d done, %d jobs, %d failed so far, ETA %s\n",
			c->phase_i + 1, c->nphases, c->phase_name, c->round_i + 1, c->nrounds, c->njobs,
			c->failed_jobs, eta);
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

static int run_round(struct coord *c, struct plan_phase *ph, const char *test, int r)
{
	struct plan_lane lanes[PLAN_MAX_LANES];
	int nl = plan_lanes(&c->plan, ph, lanes, PLAN_MAX_LANES), li, i, rc = 0;
	int *idx = malloc((size_t)c->plan.nnodes * sizeof(int));
	struct plan_pair *pairs = malloc((size_t)(2 * c->plan.nnodes + 2) * sizeof(*pairs));

	/* ids of this round start past the last round's */
	c->id_base += (c->id_stride > 2 ? c->id_stride : 2) * ((long)c->njobs + 1);
	jobs_clear(c);
	c->id_stride = 2;
	c->jobs_done = 0;
	if (ph->kind == PLAN_PING)
		nl = 1;
	for (li = 0; li < nl; li++) {
		int n, np, target = 0;

		if (plan_is_group(ph)) {	/* one job: every node of the lane, a rank each */
			struct cjob *j;

			n = coord_lane_nodes(c, lanes[li], idx);
			if (n < 2) {
				char lane[32];

				coord_lane_name(lanes[li], lane, sizeof(lane));
				fs_info("%s: %s has %s: no %s on it", ph->name, lane,
					n ? "one node only" : "no node", test);
				continue;
			}
			c->jobs = realloc(c->jobs, (size_t)(c->njobs + 1) * sizeof(*c->jobs));
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
				job_key(j->key, sizeof(j->key), ph, test, r, lanes[li], ranks, NULL);
			}
			if (results_job_done(&c->res, j->key))
				continue;	/* --resume: measured already */
			j->m = calloc((size_t)n, sizeof(*j->m));
			j->nm = n;
			for (i = 0; i < n; i++)
				j->m[i].node = idx[i];
			if (n > c->id_stride)
				c->id_stride = n;
			c->njobs++;
			continue;
		}
		if (ph->kind == PLAN_PING) {
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
		c->jobs = realloc(c->jobs, (size_t)(c->njobs + np) * sizeof(*c->jobs));
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
			job_key(j->key, sizeof(j->key), ph, test, r, lanes[li], c->plan.nodes[cl].name,
				sv >= 0 ? c->plan.nodes[sv].name : NULL);
			if (results_job_done(&c->res, j->key))
				continue;	/* --resume: measured already */
			j->sampler = !i;	/* the pairs of an incast round share the server */
			c->njobs++;
		}
	}
	free(idx);
	free(pairs);
	if (!c->njobs)
		return 0;
	progress(c, 0);
	for (;;) {	/* start the jobs, at most ph->parallel at once, until all are done */
		int left = 0, running = 0;

		for (i = 0; i < c->njobs; i++) {
			left += c->jobs[i].state != J_FIN;
			running += c->jobs[i].state == J_LISTEN || c->jobs[i].state == J_RUN;
		}
		for (i = 0; i < c->njobs && (!ph->parallel || running < ph->parallel); i++) {
			struct cjob *j = &c->jobs[i];
			int missing, k;

			if (j->state != J_IDLE)
				continue;
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
				job_finish(c, j, msg);
				continue;
			}
			running++;
			if (ph->kind == PLAN_PING) {
				j->state = J_RUN;
				j->budget_s = c->agent_timeout;
				j->deadline_ns = clock_ns() + (uint64_t)(c->agent_timeout * 1e9);
				if (send_to(c, c->node_conn[j->client],
					    json_pack("{ss,sI,sI}", "type", "ping", "id", (json_int_t)job_id(c, j, 1),
						      "t", (json_int_t)clock_ns())))
					conn_gone(c, c->node_conn[j->client], "its connection broke");
				continue;
			}
			job_start(c, j);
		}
		if (!left)
			break;
		if ((rc = coord_poll(c, 100)))
			break;
	}
	results_sync(&c->res);
	return rc;
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
		struct plan_lane lanes[PLAN_MAX_LANES];
		int nl = plan_lanes(&c->plan, ph, lanes, PLAN_MAX_LANES), t, r, li, maxr = 0;
		int *idx = malloc((size_t)c->plan.nnodes * sizeof(int));
		uint64_t t0 = clock_ns();
		json_t *pj;

		if (ph->skip) {	/* (said when the agents had joined) */
			free(idx);
			continue;
		}
		for (li = 0; li < nl; li++) {
			int rr = plan_rounds(ph, coord_lane_nodes(c, lanes[li], idx));

			if (rr > maxr)
				maxr = rr;
		}
		free(idx);
		if (ph->kind == PLAN_PING)
			maxr = 1;
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
					progress(c, rc ? 2 : 1);
				}
			}
		pj = json_pack("{ss,ss,si,sf}", "name", ph->name, "kind", plan_kind_name(ph->kind),
			       "rounds", c->nrounds, "seconds", (clock_ns() - t0) / 1e9);
		json_object_set_new(pj, "status", json_string(rc ? "interrupted" : "done"));
		json_array_append_new(phases, pj);
		results_save(&c->res);
	}
	c->phase_name = NULL;
	jobs_clear(c);
	free(est);
	return rc;
}

/* ---- set-up ---- */

/* Every phase's options through the engines' own parser, before anything
 * starts: a bad value is a usage error naming the plan and the phase. */
int coord_check_targets(struct coord *c, int joined)
{
	int pi, i;

	for (pi = 0; pi < c->plan.nphases; pi++) {
		struct plan_phase *ph = &c->plan.phases[pi];

		for (i = 0; ph->target && i < c->plan.nnodes; i++)
			if (!strcmp(c->plan.nodes[i].name, ph->target))
				break;
		if (ph->target && i == c->plan.nnodes && joined && c->missing) {
			/* it may be one that did not join: the other phases run */
			fs_warn("[%s]: its target '%s' is not one of the agents that joined "
				"(%d did not): the phase is skipped", ph->name, ph->target, c->missing);
			ph->skip = 1;
		} else if (ph->target && i == c->plan.nnodes)
			return fs_err_usage("%s: target '%s' of [%s] is not %s (the first is '%s')",
					    c->plan.path, ph->target, ph->name,
					    joined ? "one of the agents that joined" : "a node of the plan",
					    c->plan.nnodes ? c->plan.nodes[0].name : "none");
	}
	return 0;
}

/* opts_origin for a phase's engine options: the line the value was written on */
struct value_origin {
	const char *path;
	const struct plan_phase *ph;
	char buf[1200];
};

static const char *value_where(const char *key, const char *val, void *ctx)
{
	struct value_origin *vo = ctx;
	int i;

	for (i = 0; i < vo->ph->nkv; i++)	/* in argv's order: the first such is the one refused */
		if (!strcmp(vo->ph->kv[i].key, key) && !strcmp(vo->ph->kv[i].val, val)) {
			snprintf(vo->buf, sizeof(vo->buf), "%s:%d: %s '%s' of [%s]", vo->path,
				 vo->ph->kv[i].line, key, val, vo->ph->name);
			return vo->buf;
		}
	return NULL;
}

int coord_check_phases(struct coord *c)
{
	int pi, t, i;

	/* without a hostfile, agents started by slurm, mpirun or by hand
	 * bring their names when they join: their targets are checked then */
	if (c->plan.nnodes && (i = coord_check_targets(c, 0)))
		return i;
	for (pi = 0; c->plan.nnodes && pi < c->plan.nphases; pi++) {	/* rails no node has */
		const struct plan_phase *ph = &c->plan.phases[pi];
		int r, n, e, has;

		for (r = 0; r < ph->nrails; r++) {
			for (n = 0, has = 0; n < c->plan.nnodes && !has; n++)
				for (e = 0; e < c->plan.nodes[n].nep; e++)
					has |= c->plan.nodes[n].ep[e].rail == ph->rails[r];
			if (!has)
				fs_warn("%s: [%s] rails: no node has rail %d: it is not tested", c->plan.path,
					ph->name, ph->rails[r]);
		}
	}
	ptp_check_only = 1;
	for (pi = 0; pi < c->plan.nphases; pi++) {
		struct plan_phase *ph = &c->plan.phases[pi];

		for (t = 0; t < ph->ntests; t++) {
			const char *argv[80];
			char *bufs[70], prog[600];
			struct value_origin vo;
			struct opts_origin origin = { value_where, &vo, "fabscope run" };
			int argc = 0, nb = 0, rc, is_bool;

			if (plan_is_group(ph)) {	/* plan.c checked the values; the transport is left */
				const char *tr = plan_opt(ph, "transport", "tcp");

				if (!xport_find(tr)) {
					ptp_check_only = 0;
					return fs_err_usage("%s: transport '%s' of [%s]: built in are %s", c->plan.path,
							    tr, ph->name, xport_names());
				}
				if (strcmp(tr, "verbs") && (plan_opt(ph, "ib-port", NULL) || plan_opt(ph, "gid-index", NULL) ||
							    plan_opt(ph, "mtu", NULL) || plan_opt(ph, "qp-timeout", NULL))) {
					ptp_check_only = 0;	/* as the ranks would say */
					return fs_err_usage("%s: [%s] runs over %s: ib-port, gid-index, mtu and "
							    "qp-timeout are for transport = verbs", c->plan.path, ph->name, tr);
				}
				continue;
			}
			if (ph->kind == PLAN_PING || ph->kind == PLAN_POLARIZATION || ph->kind == PLAN_PFC)
				continue;	/* (the probe checks its options when it runs) */
			argv[argc++] = ph->tests[t];
			argv[argc++] = "127.0.0.1";
			for (i = 0; i < ph->nkv && nb < 60; i++) {
				size_t len = strlen(ph->kv[i].key) + strlen(ph->kv[i].val) + 4;

				if (!plan_key_for(ph->kv[i].key, ph->tests[t]))
					continue;	/* [global]'s default for other kinds */
				plan_engine_key(ph->kv[i].key, &is_bool);
				bufs[nb] = malloc(len);
				if (is_bool)
					snprintf(bufs[nb], len, "--%s", ph->kv[i].key);
				else
					snprintf(bufs[nb], len, "--%s=%s", ph->kv[i].key, ph->kv[i].val);
				if (is_bool && plan_bool(ph->kv[i].val) == 0)
					free(bufs[nb]);
				else
					argv[argc++] = bufs[nb++];
			}
			argv[argc] = NULL;
			snprintf(prog, sizeof(prog), "fabscope run: %s [%s]", c->plan.path, ph->name);
			fs_set_progname(prog);
			vo.path = c->plan.path;
			vo.ph = ph;
			opts_set_origin(&origin);
			rc = !strcmp(ph->tests[t], "bw") ? cmd_bw(argc, argv) : cmd_lat(argc, argv);
			opts_set_origin(NULL);
			fs_set_progname("fabscope run");
			for (i = 0; i < nb; i++)
				free(bufs[i]);
			if (rc) {
				ptp_check_only = 0;
				return -rc;
			}
		}
	}
	ptp_check_only = 0;
	return 0;
}

int coord_listen(struct coord *c)
{
	char host[256] = "", err[256], name[NET_ADDRSTRLEN];
	const char *l = c->listen ? c->listen : "";
	struct net_addr a;
	int port = 0;
	const char *colon = strrchr(l, ':');

	if (colon && !strchr(colon, ']')) {
		snprintf(host, sizeof(host), "%.*s", (int)(colon - l), l);
		port = atoi(colon + 1);
	} else {
		snprintf(host, sizeof(host), "%s", l);
	}
	if (host[0] == '[') {
		memmove(host, host + 1, strlen(host));
		host[strcspn(host, "]")] = 0;
	}
	if (net_resolve(*host ? host : NULL, port, 1, &a, err, sizeof(err)))
		return fs_err_usage("--listen '%s': %s", l, err);
	c->listen_fd = net_listen(&a, 1024);
	if (c->listen_fd < 0)
		return fs_err_env("cannot listen on '%s': %s", l, strerror(-c->listen_fd));
	net_local_addr(c->listen_fd, &a);
	port = net_addr_port(&a);
	if (c->advertise_host)
		snprintf(host, sizeof(host), "%s", c->advertise_host);
	else if (!*host || !strcmp(host, "0.0.0.0") || !strcmp(host, "::"))
		gethostname(host, sizeof(host) - 1);
	snprintf(c->advertise, sizeof(c->advertise), strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);
	net_addr_str(&a, name, sizeof(name));
	fs_log(1, "listening for agents on %s, advertised as %s", name, c->advertise);
	return 0;
}

int coord_join(struct coord *c)
{
	uint64_t deadline = clock_ns() + (uint64_t)(c->join_timeout * 1e9), last_say = clock_ns();
	int rc = 0, i, joined = 0, gone = 0, status = 0, listener = launch_uses_listener(c->launcher);
	char why[300];

	for (;;) {
		int pending = 0;

		joined = 0;
		for (i = 0; i < c->plan.nnodes; i++)
			joined += c->node_conn[i] >= 0;
		for (i = 0; i < c->nconns; i++)
			pending += !c->conns[i].gone && !c->conns[i].authed && c->conns[i].want_node >= 0;
		if (joined >= c->expected)
			break;
		/* local/ssh: every connection made has registered or died */
		if (!listener && !pending)
			break;
		/* srun, mpirun: gone, and with them the agents that had not connected */
		if (listener && (gone = launch_exited(c, &status)))
			break;
		if (clock_ns() > deadline)
			break;
		if (clock_ns() - last_say > 5000000000ull) {
			fs_info("%d of %d agents joined", joined, c->expected);
			last_say = clock_ns();
		}
		if ((rc = coord_poll(c, 100)))
			return rc;
	}
	if (!c->plan.hostfile)	/* anonymous nodes that never came */
		while (c->plan.nnodes < c->expected) {
			char name[64];

			snprintf(name, sizeof(name), "agent%d", c->plan.nnodes);
			plan_node_add(&c->plan, name);
			coord_ensure_nodes(c);	/* (the loop below says why) */
		}
	if (!joined) {	/* nothing to run a phase on: say why once, not per job */
		if (gone)
			return fs_err_env("no agent joined: %s exited%s%.0d before any did (its messages are above); "
					  "check --launcher-args and that it can start '%s agent'", launch_program(c),
					  status ? " with status " : "", status, c->agent_cmd ? c->agent_cmd : c->self);
		if (!listener) {	/* their connections are gone: the processes end, a moment after */
			uint64_t until = clock_ns() + 2000000000ull;

			while (!(gone = launch_exited(c, &status)) && clock_ns() < until)
				usleep(20000);
		}
		if (!listener && gone && (status == 126 || status == 127))
			return fs_err_env("no agent joined: %s could not be run (its message is above)",
					  !strcmp(c->launcher, "ssh") ? "ssh" : "the agent");
		snprintf(why, sizeof(why), "%s", c->node_why[0] ? c->node_why[0] :
			 listener ? "did not connect within --join-timeout" : "did not register");
		return fs_err_peer("no agent joined, nothing to run: %s (of %d): %s", c->plan.nodes[0].name,
				   c->plan.nnodes, why);
	}
	for (i = 0; i < c->plan.nnodes; i++)
		if (c->node_conn[i] < 0) {
			if (c->node_why[i])
				snprintf(why, sizeof(why), "did not join: %s", c->node_why[i]);
			else if (gone)
				snprintf(why, sizeof(why), "did not join: %s exited%s%.0d first", launch_program(c),
					 status ? " with status " : "", status);
			else
				snprintf(why, sizeof(why), "did not join within %.0f s", c->join_timeout);
			free(c->node_why[i]);
			c->node_why[i] = strdup(why);
			fs_warn("agent %s is missing: %s", c->plan.nodes[i].name, why);
		}
	return 0;
}

json_t *coord_nodes_json(struct coord *c)
{
	json_t *a = json_array();
	int i, j;

	c->missing = 0;
	for (i = 0; i < c->plan.nnodes; i++)
		c->missing += c->node_why[i] != NULL;
	for (i = 0; i < c->plan.nnodes; i++) {
		const struct plan_node *n = &c->plan.nodes[i];
		json_t *eps = json_array();

		for (j = 0; j < n->nep; j++)
			json_array_append_new(eps, json_pack("{si,si,ss}", "rail", n->ep[j].rail,
							     "plane", n->ep[j].plane, "ip", n->ep[j].ip));
		json_array_append_new(a, json_pack("{ss,so,ss,ss?}", "name", n->name, "endpoints", eps,
						   "status", c->node_why[i] ? "missing" : "ok",
						   "why", c->node_why[i]));
	}
	return a;
}

