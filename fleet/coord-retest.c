/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The re-test at the end of a run (see coord.c, analyze.c): a latency pair
 * suspect stands on one measurement, which a busy host can spoil.  Before
 * the agents are sent away, the coordinator measures each latency pair
 * suspect again, the same test with the same options on the same lane,
 * through the agents the run already has, one job at a time (nothing else
 * runs beside it), at most max of them.  The re-test's records carry
 * retest_of (the key of the job they repeat) and a job key of their own
 * (KEY/retest: --resume does not run one twice); analyze.c judges them.
 * A suspect of a phase under load (load = bw) is not re-tested: alone,
 * its test would be idle.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../core/record.h"
#include "../core/testhook.h"
#include "../records/analyze.h"
#include "coord-int.h"

static const struct plan_phase *phase_named(const struct coord *c, const char *name)
{
	int i;

	for (i = 0; name && i < c->plan.nphases; i++)
		if (!strcmp(c->plan.phases[i].name, name))
			return &c->plan.phases[i];
	return NULL;
}

/* A test build's FABSCOPE_TEST_RETEST_HOLD=FILE: create FILE, then keep
 * serving the agents until it is removed (a test changes the fabric
 * between the run's phases and the re-test).  0 or -exit code. */
static int test_hold(struct coord *c)
{
	const char *path = fs_test_env("FABSCOPE_TEST_RETEST_HOLD");
	struct stat st;
	int fd, rc = 0;

	if (!path || !*path)
		return 0;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return fs_err_env("cannot create the re-test hold file '%s': %s", path, strerror(errno));
	close(fd);
	fs_info("re-test held until %s is removed", path);
	while (!lstat(path, &st))
		if ((rc = coord_poll(c, 100)))
			break;
	return rc;
}

/* Why the suspect s cannot be re-tested (NULL: it can); its job in *j. */
static const char *retest_job(struct coord *c, json_t *s, struct cjob *j, char *why, size_t len)
{
	const char *src = record_str(s, "node", NULL), *dst = record_str(s, "peer", NULL);
	const char *key = record_str(s, "job", NULL);
	const struct plan_phase *ph = phase_named(c, record_str(s, "phase", NULL));
	int a = src ? plan_node_index(&c->plan, src) : -1, b = dst ? plan_node_index(&c->plan, dst) : -1, swap = !strcmp(record_str(s, "dir", ""), "s2c");
	struct plan_lane lane = { (int)record_num(s, "rail", 0), (int)record_num(s, "plane", 0) };
	int cl = swap ? b : a, sv = swap ? a : b;

	if (!ph || a < 0 || b < 0 || !key) {
		snprintf(why, len, "its job is not one of this plan's");
		return why;
	}
	if (ph->load) {	/* the re-test runs alone: idle, no repeat of a latency under load */
		snprintf(why, len, "measured under a %s load: alone, a re-test would be idle", ph->load);
		return why;
	}
	if (c->node_conn[cl] < 0 || c->node_conn[sv] < 0) {
		snprintf(why, len, "agent %s missing", c->plan.nodes[c->node_conn[cl] < 0 ? cl : sv].name);
		return why;
	}
	if (!plan_node_ep(&c->plan.nodes[cl], lane) || !plan_node_ep(&c->plan.nodes[sv], lane)) {
		snprintf(why, len, "its lane is not in the hostfile");
		return why;
	}
	memset(j, 0, sizeof(*j));
	j->test = "lat";
	j->client = cl;
	j->server = sv;
	j->lane = lane;
	j->ph = ph;
	j->round = (int)record_num(s, "round", 1) - 1;
	j->retest_of = key;
	snprintf(j->key, sizeof(j->key), "%s/retest", key);
	return NULL;
}

int coord_retest(struct coord *c, int max, json_t *info)
{
	json_t *sus, *nc, *s;
	json_t *skipped = json_object();
	size_t k;
	int rc = 0, n = 0;

	json_object_set_new(info, "max", json_integer(max));
	json_object_set_new(info, "skipped", skipped);
	if (rstore_load(&c->recs, c->res.dir, NULL, NULL) < 0) {
		json_object_set_new(info, "retested", json_integer(0));
		return 0;	/* (the analysis after says the same) */
	}
	sus = analyze_suspects_retest(&c->recs, ANALYZE_LOW_FRAC, NULL, &nc);
	coord_jobs_clear(c);
	c->id_stride = 2;
	json_array_foreach(sus, k, s) {
		const char *key = record_str(s, "job", NULL), *why;
		char buf[300];
		struct cjob j;

		if (strcmp(record_str(s, "kind", ""), "pair") || strcmp(record_str(s, "test", ""), "lat") ||
		    strcmp(record_str(s, "retest.status", ""), "not-retested"))
			continue;	/* not a latency pair, or re-tested already (--resume) */
		if (n >= max) {
			snprintf(buf, sizeof(buf), "over --retest-max %d", max);
			why = buf;
		} else {
			why = retest_job(c, s, &j, buf, sizeof(buf));
		}
		if (!why && results_job_done(&c->res, j.key)) {
			snprintf(buf, sizeof(buf), "its re-test left no record");
			why = buf;
		}
		if (why) {
			if (key)
				json_object_set_new(skipped, key, json_string(why));
			fs_log(1, "%s: not re-tested: %s", key ? key : "?", why);
			continue;
		}
		if (FS_ALLOC_GROW(c->jobs, (size_t)c->njobs + 1, c->jobs_alloc)) {
			rc = fs_err_env("out of memory for the re-tests of %s", c->res.dir);
			break;
		}
		c->jobs[c->njobs++] = j;
		n++;
	}
	json_object_set_new(info, "retested", json_integer(n));
	if (n && !rc) {
		fs_info("re-testing %d latency suspect%s, one at a time (at most --retest-max %d)", n,
			n == 1 ? "" : "s", max);
		if (!(rc = test_hold(c)))
			rc = coord_run_jobs(c, 1);
	}
	coord_jobs_clear(c);	/* (before sus goes: the jobs point into it) */
	json_decref(sus);
	json_decref(nc);
	return rc;
}
