/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The re-tests at the end of a run (see coord.c; records/retest.c judges
 * them): every suspect stands on one measurement, which a busy host or a
 * passing burst can spoil.  Before the agents are sent away, the
 * coordinator measures each suspect again, through the agents the run
 * already has, the same test with the phase's options at the size it was
 * found at, on the same lane:
 *
 *   pair   the pair again (same direction), twice, the control between
 *          (again, control, again-2), then each end with two fresh peers:
 *          nodes of the lane that no suspect of the phase names;
 *   node   the node with two fresh peers, one each way;
 *   lane   up to four other pairs of the lane's fresh nodes, at once; a
 *          collective's lane, its collective again;
 *
 * and with them a control: a pair of fresh nodes (of another lane, for a
 * lane), or the collective of another lane, measured the same way, so that
 * a re-test is judged against what the fabric gave at the same moment too:
 * a busy host or fabric slows the control as much, and the suspect is then
 * inconclusive, not confirmed;
 *
 * one suspect at a time, each suspect's jobs one at a time (a lane's pairs
 * at once: they are a round), nothing else running beside them.  Bounded:
 * at most max suspects (--retest-max, [global] retest-max) and, before a
 * suspect is started, its estimated time must fit in what is left of
 * time_s (--retest-time, [global] retest-time).  The records carry
 * retest_for (the suspect's id), retest_role, retest_of (the key of the
 * job they repeat, for a pair's again) and a job key of their own, so
 * --resume does not run one twice.  A suspect of a phase under load (load
 * = bw) is not re-tested: alone, its test would be idle; nor the PFC
 * probe's (its counters are the evidence).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/alloc.h"
#include "../core/clock.h"
#include "../core/error.h"
#include "../core/outfile.h"
#include "../core/record.h"
#include "../core/testhook.h"
#include "../core/units.h"
#include "../records/analyze.h"
#include "coord-int.h"

#define RETEST_FRESH 2		/* fresh peers of a node */
#define RETEST_LANE_PAIRS 4	/* other pairs of a lane */

static const struct plan_phase *phase_named(const struct coord *c, const char *name)
{
	int i;

	for (i = 0; name && i < c->plan.nphases; i++)
		if (!strcmp(c->plan.phases[i].name, name))
			return &c->plan.phases[i];
	return NULL;
}

/* A test build's hold: path, what a hook's environment variable names
 * (fs_test_env: NULL but in a test build, so that the binary of make and
 * the package does not even carry the name), NULL or "": no hold; else
 * create it, then keep serving the agents (their heartbeats, a death)
 * until it is removed: a test acts between two steps of the run (changes
 * the fabric, kills an agent) on a condition, not in a window of time.
 * 0 or -exit code. */
int coord_test_hold(struct coord *c, const char *path, const char *what)
{
	struct outfile of;
	struct stat st;
	int rc = 0;

	if (!path || !*path)
		return 0;
	if ((rc = outfile_create(&of, path, 0600)) || (rc = outfile_commit(&of, 0)))
		return rc;
	fs_info("%s held until %s is removed", what, path);
	while (!lstat(path, &st))
		if ((rc = coord_poll(c, 100)))
			break;
	return rc;
}

/* What the re-tests of one suspect are made of. */
struct rplan {
	json_t *s;			/* the suspect (borrowed) */
	const struct plan_phase *ph;
	const char *test, *id;
	struct plan_lane lane;
	double size;			/* 0: the phase's own */
	int node, peer;			/* plan node indices, -1 */
	int *fresh, nfresh;		/* the lane's nodes no suspect names, from a place the id picks */
	struct plan_lane ctl_lane;	/* a lane's control: on another lane, these nodes */
	int *ctl, nctl;
};

static uint64_t fnv(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* Was the suspect s found at size (its sizes, or its own)? */
static int at_size(json_t *s, double size)
{
	json_t *sizes = json_object_get(s, "sizes"), *v;
	size_t k;

	if (!json_array_size(sizes))
		return record_num(s, "msg_size_bytes", 0) == size;
	json_array_foreach(sizes, k, v)
		if (json_number_value(v) == size)
			return 1;
	return 0;
}

/* Is node named by a suspect of the same phase and test, on lane, at p's size? */
static int under_suspicion(const struct coord *c, json_t *sus, const struct rplan *p, struct plan_lane lane,
			   int node)
{
	const char *name = c->plan.nodes[node].name;
	size_t k;
	json_t *s;

	json_array_foreach(sus, k, s) {
		if (strcmp(record_str(s, "phase", ""), record_str(p->s, "phase", "")) ||
		    strcmp(record_str(s, "test", ""), p->test) || record_int(s, "rail", -1, 0, FS_MAX_RAILS - 1) != lane.rail ||
		    record_int(s, "plane", -1, 0, FS_MAX_PLANES - 1) != lane.plane || !at_size(s, p->size))
			continue;
		if (!strcmp(record_str(s, "node", ""), name) || !strcmp(record_str(s, "peer", ""), name))
			return 1;
	}
	return 0;
}

/* p->fresh: the lane's nodes with an agent here that no suspect of its
 * phase, test and lane names, starting at a place the suspect's id picks
 * (so that the suspects of a night do not all lean on one node, and the
 * same run picks the same ones).  0 or -1 (out of memory). */
static int fresh_nodes(const struct coord *c, json_t *sus, struct rplan *p)
{
	int *idx = malloc((size_t)(c->plan.nnodes ? c->plan.nnodes : 1) * sizeof(*idx)), n, i, start;

	p->fresh = malloc((size_t)(c->plan.nnodes ? c->plan.nnodes : 1) * sizeof(*p->fresh));
	p->ctl = malloc((size_t)(c->plan.nnodes ? c->plan.nnodes : 1) * sizeof(*p->ctl));
	p->nfresh = 0;
	if (!idx || !p->fresh || !p->ctl) {
		free(idx);
		return -1;
	}
	n = coord_lane_nodes(c, p->lane, idx);
	start = n ? (int)(fnv(p->id) % (uint64_t)n) : 0;
	for (i = 0; i < n; i++) {
		int node = idx[(start + i) % n];

		if (node == p->node || node == p->peer || c->node_conn[node] < 0 ||
		    under_suspicion(c, sus, p, p->lane, node))
			continue;
		p->fresh[p->nfresh++] = node;
	}
	free(idx);
	return 0;
}

/* A lane's control: another lane of the phase with two nodes here under no
 * suspicion there (into p->ctl_lane, p->ctl[0..1]), or a collective's other
 * lane with two nodes or more (p->nctl: its nodes); the first such lane in
 * the plan's order.  0 when there is none. */
static int control_lane(const struct coord *c, json_t *sus, struct rplan *p)
{
	struct plan_lane lanes[PLAN_MAX_LANES];
	int nl = plan_lanes(&c->plan, p->ph, lanes, PLAN_MAX_LANES), li, i, n;
	int *idx = malloc((size_t)(c->plan.nnodes ? c->plan.nnodes : 1) * sizeof(*idx));

	if (!idx)
		return 0;
	for (li = 0; li < nl; li++) {
		if (lanes[li].rail == p->lane.rail && lanes[li].plane == p->lane.plane)
			continue;
		n = coord_lane_nodes(c, lanes[li], idx);
		p->nctl = 0;
		for (i = 0; i < n; i++) {
			if (c->node_conn[idx[i]] < 0 || (!plan_is_group(p->ph) && under_suspicion(c, sus, p, lanes[li], idx[i])))
				continue;
			p->ctl[p->nctl++] = idx[i];
			if (!plan_is_group(p->ph) && p->nctl == 2)
				break;
		}
		if (plan_is_group(p->ph) ? p->nctl == n && n >= 2 : p->nctl == 2) {
			p->ctl_lane = lanes[li];
			free(idx);
			return 1;
		}
	}
	free(idx);
	p->nctl = 0;
	return 0;
}

/* Why the suspect s cannot be re-tested (NULL: it can): p filled. */
static const char *plan_of(struct coord *c, json_t *sus, json_t *s, struct rplan *p, char *why, size_t len)
{
	const char *kind = record_str(s, "kind", "");
	const char *node = record_str(s, "node", NULL), *peer = record_str(s, "peer", NULL);

	memset(p, 0, sizeof(*p));
	p->s = s;
	p->id = record_str(s, "id", "");
	p->test = record_str(s, "test", "");
	p->ph = phase_named(c, record_str(s, "phase", NULL));
	p->lane.rail = record_int(s, "rail", 0, 0, FS_MAX_RAILS - 1);
	p->lane.plane = record_int(s, "plane", 0, 0, FS_MAX_PLANES - 1);
	p->size = record_num(s, "msg_size_bytes", 0);
	p->node = node ? plan_node_index(&c->plan, node) : -1;
	p->peer = peer ? plan_node_index(&c->plan, peer) : -1;
	if (!p->ph || (node && p->node < 0) || (peer && p->peer < 0)) {
		snprintf(why, len, "its phase or nodes are not this plan's");
		return why;
	}
	if (p->ph->load) {	/* the re-test runs alone: idle, no repeat of a latency under load */
		snprintf(why, len, "measured under a %s load: alone, a re-test would be idle", p->ph->load);
		return why;
	}
	if ((p->node >= 0 && c->node_conn[p->node] < 0) || (p->peer >= 0 && c->node_conn[p->peer] < 0)) {
		snprintf(why, len, "agent %s missing", c->plan.nodes[p->node >= 0 && c->node_conn[p->node] < 0 ?
								    p->node : p->peer].name);
		return why;
	}
	if (fresh_nodes(c, sus, p)) {
		snprintf(why, len, "out of memory");
		return why;
	}
	if (!strcmp(kind, "node") && p->nfresh < RETEST_FRESH) {
		snprintf(why, len, "fewer than %d nodes of its lane are under no suspicion", RETEST_FRESH);
		return why;
	}
	if (!strcmp(kind, "lane") && !plan_is_group(p->ph) && p->nfresh < 2) {
		snprintf(why, len, "fewer than 2 nodes of its lane are under no suspicion");
		return why;
	}
	if (!strcmp(kind, "lane") && plan_is_group(p->ph) && coord_lane_nodes(c, p->lane, p->fresh) < 2) {
		snprintf(why, len, "fewer than 2 nodes on its lane");
		return why;
	}
	if (!strcmp(kind, "lane"))
		control_lane(c, sus, p);
	return NULL;
}

static void rplan_release(struct rplan *p)
{
	free(p->fresh);
	free(p->ctl);
	p->fresh = p->ctl = NULL;
}

/* A re-test job of p at the end of c->jobs (room for it): client and
 * server (plan nodes), its role, and a key of its own. */
static struct cjob *add_job(struct coord *c, const struct rplan *p, const char *role, int client, int server)
{
	struct plan_lane l = strcmp(role, "control") || strcmp(record_str(p->s, "kind", ""), "lane") ? p->lane :
			     p->ctl_lane;
	struct cjob *j = &c->jobs[c->njobs++];
	char lane[32], sz[32] = "", full[2 * PLAN_NAME_MAX + 600];

	memset(j, 0, sizeof(*j));
	j->test = p->test;
	j->client = client;
	j->server = server;
	j->lane = l;
	j->ph = p->ph;
	j->round = record_int(p->s, "round", 1, 1, 1 << 30) - 1;
	j->retest_for = p->id;
	j->retest_role = role;
	if (p->size > 0)
		snprintf(j->size_opt, sizeof(j->size_opt), "%.0f", p->size);
	snprintf(lane, sizeof(lane), l.plane ? "rail%d.%d" : "rail%d", l.rail, l.plane);
	if (p->size > 0)
		snprintf(sz, sizeof(sz), "@%.0f", p->size);
	/* (two suspects may measure the same pair in the same role: the key names the suspect too,
	 * by a hash of its id, so that --resume tells them apart) */
	snprintf(full, sizeof(full), "%s/%s/retest-%s/%s/%s%s%s%s/%08x", p->ph->name, p->test, role, lane,
		 client >= 0 ? c->plan.nodes[client].name : "", server >= 0 ? ">" : "",
		 server >= 0 ? c->plan.nodes[server].name : "", sz, (unsigned)(fnv(p->id) & 0xffffffffu));
	coord_key_set(j->key, sizeof(j->key), full);
	return j;
}

/* A collective of nodes[0..n) at the end of c->jobs (room for it), in role:
 * 0 or -1 (out of memory). */
static int group_job(struct coord *c, const struct rplan *p, const char *role, const int *nodes, int n)
{
	struct cjob *j = add_job(c, p, role, -1, -1);
	int i;

	if (!(j->m = calloc((size_t)n, sizeof(*j->m))))
		return -1;
	j->nm = n;
	j->server = -1;
	j->client = nodes[0];
	for (i = 0; i < n; i++)
		j->m[i].node = nodes[i];
	if (n > c->id_stride)
		c->id_stride = n;
	return 0;
}

/* The jobs of one suspect in c->jobs; 0, or -1 (out of memory). */
static int suspect_jobs(struct coord *c, const struct rplan *p)
{
	const char *kind = record_str(p->s, "kind", "");
	int i, n = 0;

	if (FS_ALLOC_GROW(c->jobs, (size_t)c->njobs + RETEST_LANE_PAIRS + 7, c->jobs_alloc))
		return -1;
	if (!strcmp(kind, "pair")) {
		/* as first measured: the record's s2c swaps the ends (the server sent) */
		int swap = !strcmp(record_str(p->s, "dir", ""), "s2c");
		struct cjob *j = add_job(c, p, "again", swap ? p->peer : p->node, swap ? p->node : p->peer);
		const char *key = record_str(p->s, "job", NULL);

		j->retest_of = key;
		if (key && !swap) {	/* (an older fabscope's key for the same job: --resume) */
			char full[COORD_KEY_MAX + 16];

			snprintf(full, sizeof(full), "%s/retest", key);
			coord_key_set(j->key, sizeof(j->key), full);
		}
		/* the control between the pair's two re-tests: a burst long enough to spoil both
		 * spoils the control too (records/retest.c) */
		if (p->nfresh >= 2)
			add_job(c, p, "control", p->fresh[0], p->fresh[1]);
		add_job(c, p, "again-2", swap ? p->peer : p->node, swap ? p->node : p->peer);
		/* each end in the place it had, with a fresh peer in the other, two of them where there
		 * are (an end is blamed when slow with both, as a node is) */
		for (i = 0; i < p->nfresh && i < 2; i++)
			add_job(c, p, "src-fresh", swap ? p->fresh[i] : p->node, swap ? p->node : p->fresh[i]);
		for (i = 0; i < p->nfresh && i < 2; i++) {
			int f = p->fresh[p->nfresh > 1 ? 1 - i : 0];

			add_job(c, p, "dst-fresh", swap ? p->peer : f, swap ? f : p->peer);
		}
		return 0;
	}
	if (!strcmp(kind, "node")) {	/* one each way, and the two fresh peers with each other */
		add_job(c, p, "fresh", p->node, p->fresh[0]);
		add_job(c, p, "fresh", p->fresh[1], p->node);
		add_job(c, p, "control", p->fresh[0], p->fresh[1]);
		return 0;
	}
	if (plan_is_group(p->ph)) {	/* the lane's collective again, at its size; another lane's */
		n = coord_lane_nodes(c, p->lane, p->fresh);
		if (group_job(c, p, "lane", p->fresh, n) || (p->nctl && group_job(c, p, "control", p->ctl, p->nctl)))
			return -1;
		return 0;
	}
	for (i = 0; i + 1 < p->nfresh && n < RETEST_LANE_PAIRS; i += 2, n++)
		add_job(c, p, "lane", p->fresh[i], p->fresh[i + 1]);
	if (p->nctl == 2)
		add_job(c, p, "control", p->ctl[0], p->ctl[1]);
	return 0;
}

/* What a suspect's re-test will take: its jobs one after another, each
 * what the run's model of time (plan.h) says of it, at its lane's speed
 * as the run measured it, and the set-up the run's jobs took; a lane's
 * pairs and control are one round. */
static double suspect_est_s(const struct coord *c, int is_lane)
{
	double s = 0, round = 0;
	int i;

	for (i = 0; i < c->njobs; i++) {
		const struct cjob *j = &c->jobs[i];
		double d = coord_job_engine_s(c, j) + c->cost.setup_s;

		if (is_lane && !j->m) {	/* (the round: as long as its longest) */
			if (round < d)
				round = d;
			continue;
		}
		s += d;
	}
	return s + round;
}

/* Run the jobs of one suspect: a lane's pairs and its control at once (a
 * round, on two lanes), the rest one at a time. */
static int run_suspect(struct coord *c)
{
	int i, k = 0;

	for (i = 0; i < c->njobs; i++)
		k += !strcmp(c->jobs[i].retest_role, "lane") && !c->jobs[i].m;
	return coord_run_jobs(c, k ? k + 1 : 1);
}

int coord_retest(struct coord *c, int max, double time_s, json_t *info)
{
	json_t *sus, *nc, *s;
	json_t *skipped = json_object();
	uint64_t t0 = clock_ns();
	size_t k;
	int rc = 0, n = 0, held = 0, asked = 0;
	double est_all = 0;

	json_object_set_new(info, "max", json_integer(max));
	json_object_set_new(info, "time_s", json_real(time_s));
	json_object_set_new(info, "skipped", skipped);
	if (rstore_load(&c->recs, c->res.dir, NULL, NULL) < 0) {
		json_object_set_new(info, "retested", json_integer(0));
		return 0;	/* (the analysis after says the same) */
	}
	sus = analyze_suspects_retest(&c->recs, ANALYZE_LOW_FRAC, NULL, &nc);
	json_array_foreach(sus, k, s) {
		const char *id = record_str(s, "id", ""), *why = NULL;
		char buf[300];
		struct rplan p = { 0 };
		double left = time_s - (clock_ns() - t0) / 1e9, est = 0;
		int first;

		if (strcmp(record_str(s, "retest.status", ""), "not-retested") || !strncmp(record_str(s, "kind", ""), "pfc", 3) ||
		    !strcmp(record_str(s, "kind", ""), "wrong-data"))
			continue;	/* re-tested already (--resume), or no re-test is for it */
		asked++;
		if (n >= max) {
			snprintf(buf, sizeof(buf), "over --retest-max %d", max);
			why = buf;
		} else {
			why = plan_of(c, sus, s, &p, buf, sizeof(buf));
		}
		coord_jobs_clear(c);	/* (the counts of jobs done and running too) */
		c->id_stride = 2;
		if (!why && suspect_jobs(c, &p)) {
			rc = fs_err_env("out of memory for the re-tests of %s", c->res.dir);
			rplan_release(&p);
			break;
		}
		first = 0;
		if (!why && (est = suspect_est_s(c, !strcmp(record_str(s, "kind", ""), "lane"))) > left) {
			snprintf(buf, sizeof(buf), "over the re-test time: %.0f s left of %.0f s (--retest-time), "
				 "it would take about %.0f s", left > 0 ? left : 0, time_s, est);
			why = buf;
		}
		for (first = 0; !why && first < c->njobs && results_job_done(&c->res, c->jobs[first].key); first++)
			;
		if (!why && first == c->njobs) {
			snprintf(buf, sizeof(buf), "its re-test left no record");
			why = buf;
		}
		if (why) {
			json_object_set_new(skipped, id, json_string(why));
			fs_log(1, "%s: not re-tested: %s", id, why);
			rplan_release(&p);
			continue;
		}
		if (!held++) {
			fs_info("re-testing the suspects, one at a time (at most %d, in %.0f s)", max, time_s);
			if ((rc = coord_test_hold(c, fs_test_env("FABSCOPE_TEST_RETEST_HOLD"), "re-test"))) {
				rplan_release(&p);
				break;
			}
		}
		est_all += est;
		fs_log(1, "re-testing %s (%d job%s, about %.1f s)", id, c->njobs, c->njobs == 1 ? "" : "s", est);
		rc = run_suspect(c);
		rplan_release(&p);
		n++;
		if (rc)
			break;
	}
	json_object_set_new(info, "retested", json_integer(n));
	json_object_set_new(info, "seconds", json_real((clock_ns() - t0) / 1e9));
	json_object_set_new(info, "estimate_s", json_real(est_all));	/* of those re-tested */
	if (asked)
		fs_info("re-tested %d of %d suspect%s in %.1f s", n, asked, asked == 1 ? "" : "s", (clock_ns() - t0) / 1e9);
	coord_jobs_clear(c);	/* (before sus goes: the jobs point into it) */
	json_decref(sus);
	json_decref(nc);
	return rc;
}
