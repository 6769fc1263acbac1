/* SPDX-License-Identifier: BSD-2-Clause */
/* `fabscope run`: options, --dry-run, --resume, and the run from start to end. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "../core/builtin.h"
#include "../core/clock.h"
#include "../core/error.h"
#include "../core/hmac.h"
#include "../core/net.h"
#include "../core/options.h"
#include "../core/record.h"
#include "../core/units.h"
#include "../collectives/coll.h"
#include "../records/analyze.h"
#include "../records/read.h"
#include "coord.h"

static const char *const run_usage[] = {
	"fabscope run PLAN [options]",
	"fabscope run --resume DIR [options]",
	"fabscope run --dry-run PLAN [--hostfile FILE] [-n N]",
	NULL,
};

static const char run_about[] =
	"Run a plan across many nodes: launch an agent on each, run the plan's phases round by\n"
	"round on every rail at once, and write a results directory (run.json, results.jsonl\n"
	"flushed record by record).  At the end it prints a summary per phase and rail and the\n"
	"suspects: a node slow with every peer, a slow pair (its path), a slow rail; and any\n"
	"wrong data a collective found, as a failure.  Before that it measures each latency\n"
	"pair suspect again (at most --retest-max of them, one at a time): a pair fast on its\n"
	"re-test is listed as not confirmed, not as a suspect.\n"
	"\n"
	"PLAN is an INI file: [global] then one section per phase.  [global] keys: hostfile,\n"
	"nodes, launcher, label (repeatable), agent-timeout, join-timeout, token-file, listen,\n"
	"ssh, agent-cmd, seed, and any test option below as the phases' default.  Phase keys:\n"
	"kind (pairwise: N-1 rounds of N/2 disjoint pairs; ring; permutation: count random\n"
	"derangements; bisection: the first half against the second, both ways; incast: every\n"
	"node to target; ping: the control channel's round trip; polarization and pfc: the\n"
	"probes, with their own keys, see 'fabscope probe'; allreduce and alltoall: one round,\n"
	"per lane one collective of the nodes on it (rank i the i-th), every lane at once),\n"
	"test (bw, lat or bw,lat; none for the collectives), count, seed, target, rails (e.g.\n"
	"0,1), parallel (at most N tests at once in a round, e.g. 1 for latency on busy hosts),\n"
	"and the options of 'fabscope bw' and 'fabscope lat' by their long names: transport,\n"
	"op, size, all, flows, iters, duration, warmup, bidirectional, sport, tx-depth, cq-mod,\n"
	"post-list, tclass, device, ib-port, gid-index, mtu, sl, flow-label, inline, poll,\n"
	"timeout; those of 'fabscope allreduce' for the collectives: algo, minbytes, maxbytes,\n"
	"stepfactor, warmup, iters, chunk, flows, tx-depth, tclass, no-check, transport,\n"
	"timeout, ib-port, gid-index, mtu, qp-timeout, poll, corrupt (testing).\n"
	"\n"
	"A hostfile has a node per line: NAME [netns=NS] [ssh=DEST] [railK=IP] [railK/P=IP].\n"
	"Tests pair endpoints of the same rail and plane.  Without a hostfile, -n N agents\n"
	"join and report their own endpoints (--rail), or their address is rail 0.\n"
	"\n"
	"Exit codes: 0 all measured, 1 a collective's data check found wrong data, 2 bad plan\n"
	"or options, 3 environment, 4 an agent was missing or a test failed (the run went on;\n"
	"results.jsonl says which; 4 wins over 1), 130 interrupted (finish it with --resume DIR).";

/* --retest-max's default: a few seconds of latency tests at the end */
#define RUN_RETEST_MAX 8

static int opt_launcher_ok(const char *l)
{
	return launch_known(l) ? 0 : fs_err_usage("unknown launcher '%s': use local, ssh, slurm, mpi or external", l);
}

static void dir_of(const char *path, char *out, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (slash)
		snprintf(out, len, "%.*s", (int)(slash - path), path);
	else
		snprintf(out, len, ".");
}

/* --dry-run of a collective phase: one round, a group per lane, every
 * lane at once; per lane its ranks in order (rank i is the i-th node). */
static void dry_run_group(struct coord *c, int pi, const struct plan_phase *ph, int *idx)
{
	struct plan_lane lanes[PLAN_MAX_LANES];
	int nl = plan_lanes(&c->plan, ph, lanes, PLAN_MAX_LANES), li, i, jobs = 0;

	for (li = 0; li < nl; li++)
		jobs += coord_lane_nodes(c, lanes[li], idx) >= 2;
	printf("[%d] %s: %s, %d round on %d lane%s, %d job%s (a group of ranks per lane, every lane at once)\n",
	       pi + 1, ph->name, plan_kind_name(ph->kind), jobs ? 1 : 0, nl, nl == 1 ? "" : "s", jobs,
	       jobs == 1 ? "" : "s");
	for (li = 0; li < nl; li++) {
		int n = coord_lane_nodes(c, lanes[li], idx);
		char lane[32];

		coord_lane_name(lanes[li], lane, sizeof(lane));
		if (n < 2) {
			printf("    %s: %d node%s: skipped (a collective needs 2 ranks)\n", lane, n, n == 1 ? "" : "s");
			continue;
		}
		printf("    %s: %d ranks%s:", lane, n,
		       n > COLL_MAX_RANKS ? " (over the collectives' limit: this job will fail)" : "");
		for (i = 0; i < n && i < 16; i++)	/* ranks 0.., in rank order */
			printf(" %s", c->plan.nodes[idx[i]].name);
		if (n > 16)
			printf(" ... %s (%d more)", c->plan.nodes[idx[n - 1]].name, n - 16);
		putchar('\n');
	}
}

/* --dry-run: the schedule, every round generated and checked. */
static int dry_run(struct coord *c)
{
	struct plan *p = &c->plan;
	int pi, i, *idx = malloc((size_t)p->nnodes * sizeof(int)) , *seen = calloc((size_t)p->nnodes, sizeof(int));
	struct plan_pair *pairs = malloc((size_t)(2 * p->nnodes + 2) * sizeof(*pairs));
	struct plan_lane lanes[PLAN_MAX_LANES];
	int nl = plan_lanes(p, NULL, lanes, PLAN_MAX_LANES), stamp = 0;
	uint64_t t0 = clock_ns();
	double est = 0;

	if (!p->hostfile) {	/* agents report their endpoints when they join */
		for (i = 0; i < p->nnodes; i++) {
			p->nodes[i].ep = calloc(1, sizeof(*p->nodes[i].ep));
			p->nodes[i].ep[0].ip = strdup("-");
			p->nodes[i].nep = 1;
		}
		nl = plan_lanes(p, NULL, lanes, PLAN_MAX_LANES);
		printf("plan %s: %d nodes (no hostfile: one lane assumed)\n", p->path, p->nnodes);
	} else {
		printf("plan %s: %d nodes, %d lane%s\n", p->path, p->nnodes, nl, nl == 1 ? "" : "s");
	}
	for (pi = 0; pi < p->nphases; pi++) {
		struct plan_phase *ph = &p->phases[pi];
		int nlp = plan_lanes(p, ph, lanes, PLAN_MAX_LANES), li, r, rounds = 0, *prev = NULL, nprev = -1;
		long long jobs = 0, pairs_checked = 0;
		uint64_t pt0 = clock_ns();

		if (ph->kind == PLAN_PING) {
			printf("[%d] %s: ping, 1 round, %d agents\n", pi + 1, ph->name, p->nnodes);
			continue;
		}
		if (plan_is_group(ph)) {
			dry_run_group(c, pi, ph, idx);
			est += ph->est_s;
			continue;
		}
		for (li = 0; li < nlp; li++) {
			int n = coord_lane_nodes(c, lanes[li], idx), nr = plan_rounds(ph, n), target = 0;
			int same = prev && nprev == n && !memcmp(prev, idx, (size_t)n * sizeof(int));

			if (nr > rounds)
				rounds = nr;
			if (ph->target)
				for (i = 0; i < n; i++)
					if (!strcmp(p->nodes[idx[i]].name, ph->target))
						target = i;
			for (r = 0; r < nr; r++) {
				int np, k;

				/* a lane with the same nodes as the last one has the same
				 * pairs: count them, do not generate them again */
				if (same && ph->kind != PLAN_PERMUTATION) {
					jobs += plan_round_pairs(ph, 0, 0, 0, pairs) * 0 +
						(ph->kind == PLAN_PAIRWISE ? n / 2 :
						 ph->kind == PLAN_RING ? (n == 2 ? 1 : n) :
						 ph->kind == PLAN_BISECTION ? 2 * (n / 2) : n - 1);
					continue;
				}
				np = plan_round_pairs(ph, n, r, target, pairs);
				jobs += np;
				pairs_checked += np;
				if (ph->kind == PLAN_PAIRWISE) {	/* disjoint pairs, or it is a bug */
					stamp++;
					for (k = 0; k < np; k++) {
						if (seen[pairs[k].client] == stamp || seen[pairs[k].server] == stamp ||
						    pairs[k].client == pairs[k].server) {
							free(idx);
							free(seen);
							free(pairs);
							return fs_err(FS_EXIT_CHECK, "internal error: round %d of %s is not disjoint", r + 1, ph->name);
						}
						seen[pairs[k].client] = seen[pairs[k].server] = stamp;
					}
				}
			}
			free(prev);
			prev = malloc((size_t)(n ? n : 1) * sizeof(int));
			memcpy(prev, idx, (size_t)n * sizeof(int));
			nprev = n;
		}
		free(prev);
		est += ph->est_s * ph->ntests * rounds;
		/* the run runs the rounds of each test in turn (bw's, then
		 * lat's): its "round i/N" counts them all, and so does this */
		{
			char per[64] = "";

			if (ph->ntests > 1 && rounds)
				snprintf(per, sizeof(per), " (%d of each test, %s then %s)", rounds, ph->tests[0],
					 ph->tests[1]);
			printf("[%d] %s: %s %s, %d round%s%s on %d lane%s, %lld jobs per test (%lld pairs generated in %.3f s)\n",
			       pi + 1, ph->name, plan_kind_name(ph->kind), ph->ntests == 2 ? "bw,lat" : ph->tests[0],
			       rounds * ph->ntests, rounds * ph->ntests == 1 ? "" : "s", per, nlp, nlp == 1 ? "" : "s",
			       jobs, pairs_checked, (clock_ns() - pt0) / 1e9);
		}
	}
	printf("estimated time: %.0f s; schedule generated in %.3f s\n", est, (clock_ns() - t0) / 1e9);
	free(idx);
	free(seen);
	free(pairs);
	return 0;
}

/* --resume: was the run interrupted before its re-test of the suspects was
 * over, which this one (not --no-retest: off) is to do?  A run.json without
 * the step's "retest" is one that never reached it; an interrupted one may
 * have been in it (a resume finishes it, and the run's status with it). */
static int retest_due(struct coord *c, int off)
{
	json_t *rt = json_object_get(c->res.run, "retest");
	const char *st = json_string_value(json_object_get(c->res.run, "status"));

	if (off)
		return 0;
	return !json_is_object(rt) || (st && !strcmp(st, "interrupted"));
}

/* --resume: has every job of the run finished already?  Its nodes are the
 * hostfile's, else those that joined it (run.json's, with the endpoints
 * they reported); when one of those was missing, what it would run is not
 * known before it joins, and the answer is no. */
static int resume_all_done(struct coord *c)
{
	json_t *nodes = json_object_get(c->res.run, "nodes"), *n, *e;
	struct plan_node *saved = c->plan.nodes, *tmp;
	size_t nn = json_array_size(nodes), i, j;
	int nsaved = c->plan.nnodes, ok = 1;
	long left = -1;

	if (c->plan.hostfile)
		return coord_jobs_left(c) == 0;
	if (!nn || nn > (1u << 20) || !(tmp = calloc(nn, sizeof(*tmp))))
		return 0;
	json_array_foreach(nodes, i, n) {
		json_t *eps = json_object_get(n, "endpoints");
		const char *st = json_string_value(json_object_get(n, "status"));

		tmp[i].name = (char *)json_string_value(json_object_get(n, "name"));
		tmp[i].ep = calloc(json_array_size(eps) + 1, sizeof(*tmp[i].ep));
		if (!tmp[i].name || !st || strcmp(st, "ok") || !tmp[i].ep) {
			ok = 0;
			break;
		}
		json_array_foreach(eps, j, e) {
			json_t *r = json_object_get(e, "rail"), *pl = json_object_get(e, "plane");

			if (!json_is_integer(r) || !json_is_integer(pl) ||
			    !fs_lane_ok((int)json_integer_value(r), (int)json_integer_value(pl)) ||
			    json_integer_value(r) != (int)json_integer_value(r) ||
			    json_integer_value(pl) != (int)json_integer_value(pl)) {
				ok = 0;
				break;
			}
			tmp[i].ep[j].rail = (int)json_integer_value(r);
			tmp[i].ep[j].plane = (int)json_integer_value(pl);
			tmp[i].ep[j].ip = (char *)"-";
			tmp[i].nep++;
		}
		if (!ok)
			break;
	}
	if (ok) {	/* the jobs of the nodes that ran it */
		c->plan.nodes = tmp;
		c->plan.nnodes = (int)nn;
		left = coord_jobs_left(c);
		c->plan.nodes = saved;
		c->plan.nnodes = nsaved;
	}
	for (i = 0; i < nn; i++)
		free(tmp[i].ep);
	free(tmp);
	return left == 0;
}

static void make_run_id(char *buf, size_t len)
{
	uint8_t r[3];
	char hex[7];
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	if (hmac_random(r, sizeof(r)))
		memset(r, 0, sizeof(r));
	hmac_hex(r, sizeof(r), hex);
	snprintf(buf, len, "%04d%02d%02d-%02d%02d%02d-%s", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
		 tm.tm_hour, tm.tm_min, tm.tm_sec, hex);
}

/* An error before anything ran: free what was loaded, return the exit code. */
static int run_fail(struct coord *c, struct opt_list *labels, int rc)
{
	if (c->res.dir)
		results_close(&c->res);
	plan_free(&c->plan);
	opt_list_release(labels);
	return rc < 0 ? -rc : rc;
}

int cmd_run(int argc, const char **argv)
{
	struct coord c = { .listen_fd = -1, .agent_timeout = 10, .join_timeout = 30 };
	const char *out_dir = NULL, *resume = NULL, *hostfile = NULL, *launcher = NULL;
	const char *token_file = NULL;
	struct opt_list labels = { 0 };
	int nodes = 0, dry = 0, verbose = 0, nargs, rc, i;
	double agent_timeout = 0, join_timeout = 0;
	char run_id[64], started[40], plan_dir[PATH_MAX], hf_path[2 * PATH_MAX + 2];
	json_t *records, *suspects, *opts_json;
	const char *plan_path;
	long wrong_recs = 0;
	double wrong_elems = 0;
	int no_retest = 0, retest_max = RUN_RETEST_MAX;
	json_t *retest_info = NULL, *not_confirmed = NULL;
	struct opt tab[] = {
		OPT_GROUP("Run"),
		OPT_FILE('o', "output", &out_dir, "DIR", "results directory, new or empty (default: fabscope-run-<time>)"),
		OPT_FILE(0, "resume", &resume, "DIR", "finish an interrupted run: the jobs without a record in DIR"),
		OPT_BOOL(0, "dry-run", &dry, "print the schedule (every round generated and checked) and exit"),
		OPT_LIST(0, "label", &labels, "K=V", "label every record, e.g. lb=ecmp (repeatable; adds to the plan's)"),
		OPT_BOOL(0, "no-retest", &no_retest, "do not measure the latency pair suspects again at the end"),
		OPT_INT(0, "retest-max", &retest_max, "K", "re-test at most K latency pair suspects (default 8; 0: none)", 0, 1000),
		OPT_GROUP("Agents"),
		OPT_STRING(0, "launcher", &launcher, "NAME", "local (default), ssh, slurm, mpi or external"),
		OPT_FILE(0, "hostfile", &hostfile, "FILE", "the nodes (overrides the plan's hostfile)"),
		OPT_INT('n', "nodes", &nodes, "N", "agents to start or wait for when there is no hostfile", 1, 1 << 20),
		OPT_FILE(0, "token-file", &token_file, "FILE", "shared secret (default: $FABSCOPE_TOKEN; local, ssh, slurm and mpi make one up if neither is given)"),
		OPT_BOOL(0, "allow-readable-token", &c.readable_token, "accept a token file that others can read (a warning instead of exit 3; ssh agents are told the same)"),
		OPT_STRING(0, "listen", &c.listen, "ADDR[:PORT]", "where agents connect in (slurm, mpi, external; default: every address, a free port)"),
		OPT_STRING(0, "advertise", &c.advertise_host, "HOST", "the address agents are told to connect to (default: the listen address, else the host name)"),
		OPT_STRING(0, "ssh", &c.ssh_cmd, "CMD", "ssh command for the ssh launcher (default: ssh -o BatchMode=yes)"),
		OPT_FILE(0, "agent-cmd", &c.agent_cmd, "PATH", "the fabscope the agents run, local ones too (default: this one)"),
		OPT_STRING(0, "launcher-args", &c.launcher_args, "ARGS", "more arguments for srun or mpirun, e.g. '--overcommit'"),
		OPT_SECONDS(0, "agent-timeout", &agent_timeout, "SECONDS", "an agent silent this long is missing (default 10)"),
		OPT_SECONDS(0, "join-timeout", &join_timeout, "SECONDS", "wait this long for agents to join (default 30)"),
		OPT_VERBOSE(&verbose),
		OPT_END(),
	};

	rc = opts_parse(argc, argv, tab, run_usage, run_about, &nargs);
	if (rc)
		return rc == OPTS_HELP ? 0 : -rc;
	fs_set_verbosity(verbose);
	fs_set_progname("fabscope run");
	c.verbose = verbose;
	if (resume && nargs)
		return run_fail(&c, &labels, fs_err_usage("--resume DIR takes the plan from DIR/run.json: give no PLAN"));
	if (!resume && nargs != 1)
		return run_fail(&c, &labels, fs_err_usage(nargs ? "give one PLAN" : "missing PLAN: give a plan file (see --help), or --resume DIR"));
	if (resume && dry)
		return run_fail(&c, &labels, fs_err_usage("--dry-run is for a PLAN, not --resume"));
	if (launcher && (rc = opt_launcher_ok(launcher)))
		return run_fail(&c, &labels, rc);
	/* the plan: from the file, or from the run being resumed */
	if (resume) {
		json_t *pl;

		if ((rc = results_resume(&c.res, resume)))
			return run_fail(&c, &labels, rc);
		pl = json_object_get(c.res.run, "plan");
		plan_path = json_string_value(json_object_get(pl, "path"));
		if (!plan_path || !json_string_value(json_object_get(pl, "text")))
			return run_fail(&c, &labels, fs_err_usage("cannot resume '%s': run.json has no plan", resume));
		if ((rc = plan_parse(&c.plan, plan_path, json_string_value(json_object_get(pl, "text")))))
			return run_fail(&c, &labels, rc);
		opts_json = json_object_get(c.res.run, "options");
		if (!launcher)
			launcher = json_string_value(json_object_get(opts_json, "launcher"));
		if (!nodes)
			nodes = (int)json_integer_value(json_object_get(opts_json, "nodes"));
		if (!token_file)
			token_file = json_string_value(json_object_get(opts_json, "token_file"));
		if (!c.ssh_cmd)
			c.ssh_cmd = json_string_value(json_object_get(opts_json, "ssh"));
		if (!c.launcher_args)
			c.launcher_args = json_string_value(json_object_get(opts_json, "launcher_args"));
		if (!c.agent_cmd)
			c.agent_cmd = json_string_value(json_object_get(opts_json, "agent_cmd"));
		if (!c.listen)
			c.listen = json_string_value(json_object_get(opts_json, "listen"));
		pl = json_object_get(c.res.run, "hostfile");
		if (json_string_value(json_object_get(pl, "text")) &&
		    (rc = plan_hostfile(&c.plan, json_string_value(json_object_get(pl, "path")),
					json_string_value(json_object_get(pl, "text")))))
			return run_fail(&c, &labels, rc);
		if (!agent_timeout)
			agent_timeout = json_real_value(json_object_get(opts_json, "agent_timeout"));
		if (!join_timeout)
			join_timeout = json_real_value(json_object_get(opts_json, "join_timeout"));
		snprintf(run_id, sizeof(run_id), "%s", json_string_value(json_object_get(c.res.run, "id")) ?
			 json_string_value(json_object_get(c.res.run, "id")) : "resumed");
	} else {
		plan_path = argv[0];
		if ((rc = plan_load(&c.plan, plan_path)))
			return run_fail(&c, &labels, rc);
		dir_of(plan_path, plan_dir, sizeof(plan_dir));
		if (!hostfile && plan_global(&c.plan, "hostfile", NULL)) {
			const char *h = plan_global(&c.plan, "hostfile", NULL);

			if (h[0] == '/')
				snprintf(hf_path, sizeof(hf_path), "%s", h);
			else
				snprintf(hf_path, sizeof(hf_path), "%s/%s", plan_dir, h);
			hostfile = hf_path;
		}
		if (hostfile && (rc = plan_hostfile(&c.plan, hostfile, NULL)))
			return run_fail(&c, &labels, rc);
		make_run_id(run_id, sizeof(run_id));
	}
	/* settings: command line, then the plan's [global], then defaults */
	if (!launcher)
		launcher = plan_global(&c.plan, "launcher", "local");
	if ((rc = opt_launcher_ok(launcher)))
		return run_fail(&c, &labels, rc);
	c.launcher = launcher;
	if (!nodes && plan_global(&c.plan, "nodes", NULL)) {
		uint64_t n = 0;	/* checked when the plan was read */

		units_parse_count(plan_global(&c.plan, "nodes", "0"), &n);
		nodes = (int)n;
	}
	if (!token_file)
		token_file = plan_global(&c.plan, "token-file", NULL);
	if (!c.ssh_cmd)
		c.ssh_cmd = plan_global(&c.plan, "ssh", NULL);
	if (!c.agent_cmd)
		c.agent_cmd = plan_global(&c.plan, "agent-cmd", NULL);
	if (!c.listen)
		c.listen = plan_global(&c.plan, "listen", NULL);
	if (!c.launcher_args)
		c.launcher_args = plan_global(&c.plan, !strcmp(launcher, "mpi") ? "mpirun" : "srun", NULL);
	if (!agent_timeout && plan_global(&c.plan, "agent-timeout", NULL) &&
	    units_parse_seconds(plan_global(&c.plan, "agent-timeout", NULL), &agent_timeout))
		return run_fail(&c, &labels, fs_err_usage("%s: agent-timeout '%s' is not a duration", plan_path,
							  plan_global(&c.plan, "agent-timeout", "")));
	if (!join_timeout && plan_global(&c.plan, "join-timeout", NULL) &&
	    units_parse_seconds(plan_global(&c.plan, "join-timeout", NULL), &join_timeout))
		return run_fail(&c, &labels, fs_err_usage("%s: join-timeout '%s' is not a duration", plan_path,
							  plan_global(&c.plan, "join-timeout", "")));
	c.agent_timeout = agent_timeout > 0 ? agent_timeout : 10;
	c.join_timeout = join_timeout > 0 ? join_timeout : 30;
	if (c.plan.hostfile) {
		if (nodes && nodes != c.plan.nnodes)
			return run_fail(&c, &labels, fs_err_usage("-n %d, but the hostfile %s has %d nodes", nodes,
								  c.plan.hostfile, c.plan.nnodes));
		c.expected = c.plan.nnodes;
	} else {
		if (!strcmp(launcher, "ssh"))
			return run_fail(&c, &labels, fs_err_usage("the ssh launcher needs a hostfile "
								  "(--hostfile, or hostfile = in the plan)"));
		if (!nodes)
			return run_fail(&c, &labels, fs_err_usage("how many nodes? give a hostfile, "
								  "or -n N (nodes = N in the plan)"));
		c.expected = nodes;
	}
	/* the dry run too: what the real run would refuse, it refuses */
	if ((rc = coord_check_phases(&c)))
		goto out_plan;
	/* labels: the plan's, then the command line's (a resumed run's, then
	 * the new command line's) */
	c.labels = resume && json_is_object(json_object_get(c.res.run, "labels")) ?
		   json_deep_copy(json_object_get(c.res.run, "labels")) : json_object();
	for (i = 0; i < c.plan.nglobal; i++)
		if (!strcmp(c.plan.global[i].key, "label")) {
			const char *eq = strchr(c.plan.global[i].val, '=');

			if (!eq || eq == c.plan.global[i].val) {
				rc = fs_err_usage("%s:%d: label '%s': write label = KEY=VALUE", plan_path,
						  c.plan.global[i].line, c.plan.global[i].val);
				goto out_plan;
			}
			{
				char *k = strndup(c.plan.global[i].val, (size_t)(eq - c.plan.global[i].val));

				json_object_set_new(c.labels, k, json_string(eq + 1));
				free(k);
			}
		}
	{
		json_t *cl;
		const char *bad;

		if (record_labels(&labels, &cl, &bad)) {
			rc = fs_err_usage(RECORD_LABEL_ERR, bad);
			goto out_plan;
		}
		json_object_update(c.labels, cl);
		json_decref(cl);
	}
	if (!c.plan.hostfile && (!strcmp(launcher, "local") || dry)) {
		if ((rc = plan_nodes_anon(&c.plan, nodes)))	/* node0, node1, ... */
			goto out_plan;
		if (!strcmp(launcher, "local") && (rc = coord_check_targets(&c, 0)))
			goto out_plan;
	}
	if (dry) {
		rc = dry_run(&c);
		json_decref(c.labels);
		plan_free(&c.plan);
		opt_list_release(&labels);
		return -rc;
	}
	/* a finished run: nothing to start agents for; its verdict stands
	 * (unless its re-test of the suspects is still to come) */
	if (resume && !retest_due(&c, no_retest || !retest_max) && resume_all_done(&c)) {
		long torn = 0, failed = 0;
		json_t *all = records_load_all(c.res.dir, &torn, NULL), *r;
		size_t k;

		wrong_recs = analyze_wrong(all, &wrong_elems);
		json_array_foreach(all, k, r) {
			const char *st = json_string_value(json_object_get(r, "status"));

			failed += st && strcmp(st, "ok");
		}
		json_decref(all);
		if (failed)
			rc = fs_err_peer("nothing left to run: every job of %s has finished (%ld records), %ld of them "
					 "failed (see %s/results.jsonl); no agent started", resume, c.res.nrec, failed,
					 resume);
		else if (wrong_recs)
			rc = fs_err(FS_EXIT_CHECK, "nothing left to run: every job of %s has finished (%ld records), "
				    "%.0f wrong element%s in %ld of them: a collective's data check failed; no agent "
				    "started", resume, c.res.nrec, wrong_elems, wrong_elems == 1 ? "" : "s", wrong_recs);
		else
			fs_info("nothing left to run: every job of %s has finished (%ld records); no agent started",
				resume, c.res.nrec);
		goto out_res;
	}
	/* the token */
	c.token_file = token_file;
	if (token_file || getenv("FABSCOPE_TOKEN")) {
		if ((rc = auth_token(token_file, c.readable_token, &c.token)))
			goto out_plan;
	} else if (!strcmp(launcher, "external")) {
		rc = fs_err_usage("agents started elsewhere need the token: give --token-file FILE or set FABSCOPE_TOKEN");
		goto out_plan;
	} else {	/* one for this run only; the launcher hands it on */
		uint8_t raw[24];

		if (!(c.token = malloc(2 * sizeof(raw) + 1))) {
			rc = fs_err_env("out of memory for a token");
			goto out_plan;
		}
		if (hmac_random(raw, sizeof(raw))) {
			rc = fs_err_env("no random numbers for a token (getrandom failed)");
			goto out_plan;
		}
		hmac_hex(raw, sizeof(raw), c.token);
	}
	/* the results directory */
	if (!resume) {
		char def[128];

		if (!out_dir) {
			snprintf(def, sizeof(def), "fabscope-run-%.15s", run_id);
			out_dir = def;
		}
		if ((rc = results_create(&c.res, out_dir)))
			goto out_plan;
		clock_iso8601(started, sizeof(started));
		json_object_set_new(c.res.run, "schema", json_string("fabscope.run/1"));
		json_object_set_new(c.res.run, "id", json_string(run_id));
		json_object_set_new(c.res.run, "version", json_string(FABSCOPE_VERSION));
		json_object_set_new(c.res.run, "started", json_string(started));
		json_object_set_new(c.res.run, "status", json_string("running"));
		json_object_set_new(c.res.run, "plan", json_pack("{ss,ss}", "path", plan_path, "text", c.plan.text));
		if (c.plan.hostfile)
			json_object_set_new(c.res.run, "hostfile", json_pack("{ss,ss}", "path", c.plan.hostfile,
									     "text", c.plan.hostfile_text));
		json_object_set_new(c.res.run, "options", json_pack("{ss,si,ss?,ss?,ss?,ss?,ss?,sf,sf}",
			"launcher", launcher, "nodes", nodes, "token_file", token_file, "ssh", c.ssh_cmd,
			"launcher_args", c.launcher_args, "agent_cmd", c.agent_cmd, "listen", c.listen,
			"agent_timeout", c.agent_timeout, "join_timeout", c.join_timeout));
	} else {
		char now[40];

		clock_iso8601(now, sizeof(now));
		json_array_append_new(json_object_get(c.res.run, "resumed") ? json_object_get(c.res.run, "resumed") :
				      (json_object_set_new(c.res.run, "resumed", json_array()),
				       json_object_get(c.res.run, "resumed")), json_string(now));
		json_object_set_new(c.res.run, "status", json_string("running"));
		fs_info("resuming %s: %ld records there already", resume, c.res.nrec);
	}
	json_object_set(c.res.run, "labels", c.labels);
	json_object_set_new(c.res.run, "agents", json_array());
	json_object_set_new(c.res.run, "phases", json_array());
	c.run_id = run_id;
	if ((rc = results_save(&c.res)))
		goto out_res;
	/* agents */
	{
		ssize_t n = readlink("/proc/self/exe", c.self, sizeof(c.self) - 1);

		if (n <= 0)
			snprintf(c.self, sizeof(c.self), "fabscope");
	}
	signal(SIGPIPE, SIG_IGN);
	net_stop_on_signals();
	c.tty = isatty(2);
	c.run_start_ns = clock_ns();
	if ((rc = coord_ensure_nodes(&c, c.plan.nnodes)))
		goto out_res;
	if (launch_uses_listener(launcher) && (rc = coord_listen(&c)))
		goto out_res;
	if ((rc = launch_agents(&c)) || (rc = coord_join(&c)))
		goto out_agents;
	json_object_set_new(c.res.run, "nodes", coord_nodes_json(&c));
	json_object_set_new(c.res.run, "join_seconds", json_real((clock_ns() - c.run_start_ns) / 1e9));
	fs_info("%d of %d agents joined in %.1f s", c.expected - c.missing, c.expected,
		(clock_ns() - c.run_start_ns) / 1e9);
	results_save(&c.res);
	if (!(rc = coord_check_targets(&c, 1)))	/* the names of joined agents too */
		rc = coord_run_phases(&c);
	/* the latency pair suspects, measured again while the agents are here */
	retest_info = json_object();
	if (no_retest || !retest_max)
		json_object_set_new(retest_info, "off", json_string(no_retest ? "--no-retest" : "--retest-max 0"));
	else if (rc)
		json_object_set_new(retest_info, "off", json_string(rc == -FS_EXIT_INTERRUPTED ?
			"the run was interrupted" : "the run stopped"));
	else
		rc = coord_retest(&c, retest_max, retest_info);
out_agents:
	{
		json_t *bye = json_pack("{ss}", "type", "bye");

		for (i = 0; i < c.nconns; i++)
			if (c.conns[i].authed && !c.conns[i].gone)
				wire_send_mac(c.conns[i].fd, &c.conns[i].tx, bye, 1000);
		json_decref(bye);
	}
	launch_reap(&c, 0);
	for (i = 0; i < c.nconns; i++)
		if (!c.conns[i].gone) {
			close(c.conns[i].fd);
			wire_rd_free(&c.conns[i].rd);
		}
	if (c.listen_fd >= 0)
		close(c.listen_fd);
	{	/* the analysis, of every record in the directory */
		long torn = 0;
		char ended[40];

		records = records_load_all(c.res.dir, &torn, NULL);
		if (!retest_info)	/* (no agent came: nothing was measured) */
			retest_info = json_object();
		suspects = analyze_suspects_retest(records, ANALYZE_LOW_FRAC, retest_info, &not_confirmed);
		/* of every record, so that a resumed run still fails its check */
		wrong_recs = analyze_wrong(records, &wrong_elems);
		if (json_array_size(records)) {
			analyze_summary(stdout, records);
			analyze_print(stdout, suspects, not_confirmed);
		}
		json_object_set_new(c.res.run, "suspects", suspects);
		json_object_set_new(c.res.run, "not_confirmed", not_confirmed);
		json_object_set(c.res.run, "retest", retest_info);
		json_object_set_new(c.res.run, "nodes", coord_nodes_json(&c));
		clock_iso8601(ended, sizeof(ended));
		json_object_set_new(c.res.run, "finished", json_string(ended));
		results_sync(&c.res);	/* (the last jobs.done lines, unless a write failed) */
		if (c.res.werr) {
			char st[160];

			snprintf(st, sizeof(st), "failed: %s", c.res.werr == ENOSPC ? "disk full" : strerror(c.res.werr));
			json_object_set_new(c.res.run, "status", json_string(st));
		} else {
			json_object_set_new(c.res.run, "status", json_string(rc == -FS_EXIT_INTERRUPTED ? "interrupted" :
									    rc ? "failed" : "finished"));
		}
		json_object_set_new(c.res.run, "failed_jobs", json_integer(c.failed_jobs));
		json_object_set_new(c.res.run, "wrong_records", json_integer(wrong_recs));
		{	/* what the coordinator itself cost: for sizing large runs */
			struct rusage ru;

			if (!getrusage(RUSAGE_SELF, &ru))
				json_object_set_new(c.res.run, "coordinator", json_pack("{sI,sf}",
					"max_rss_kib", (json_int_t)ru.ru_maxrss,
					"cpu_seconds", ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
						       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6));
		}
		json_object_set_new(c.res.run, "missing_agents", json_integer(c.missing));
		json_decref(records);
		results_save(&c.res);
		printf("results: %s (%ld records)\n", c.res.dir, c.res.nrec);
	}
	if (c.res.werr)	/* nothing measured is lost: what was written stays, the rest runs again */
		rc = fs_err_env("results directory %s %s%s: %ld records written, %ld not; run 'fabscope run --resume %s' "
				"after %s", c.res.dir, c.res.werr == ENOSPC ? "full" : "cannot be written: ",
				c.res.werr == ENOSPC ? "" : strerror(c.res.werr), c.res.nrec, c.res.lost, c.res.dir,
				c.res.werr == ENOSPC ? "freeing space" : "fixing that");
	else if (!rc && (c.missing || c.failed_jobs))
		rc = fs_err_peer("%d agent(s) missing, %d job(s) failed%s: see %s/results.jsonl", c.missing,
				 c.failed_jobs, wrong_recs ? ", and wrong data" : "", c.res.dir);
	else if (!rc && wrong_recs)
		rc = fs_err(FS_EXIT_CHECK, "%.0f wrong element%s in %ld record%s: a collective's data check "
			    "failed (see the failed lines above and %s/results.jsonl)", wrong_elems,
			    wrong_elems == 1 ? "" : "s", wrong_recs, wrong_recs == 1 ? "" : "s", c.res.dir);
	if (rc == -FS_EXIT_INTERRUPTED)
		fs_warn("interrupted: finish the run with 'fabscope run --resume %s'", c.res.dir);
out_res:
	results_close(&c.res);
out_plan:
	json_decref(retest_info);
	for (i = 0; i < c.nnodes_cap; i++)
		free(c.node_why[i]);
	free(c.node_why);
	free(c.node_conn);
	free(c.conns);
	free(c.jobs);
	free(c.token);
	json_decref(c.labels);
	plan_free(&c.plan);
	opt_list_release(&labels);
	return rc < 0 ? -rc : rc;
}
