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
#include "../records/polar.h"
#include "../topology/intent.h"
#include "coord.h"
#include "run-topo.h"

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
	"wrong data a collective found, as a failure.  Before that it measures every suspect\n"
	"again (at most --retest-max of them, within --retest-time, one at a time): a pair\n"
	"again and each end with a fresh peer, a node with two fresh peers, a lane on other\n"
	"pairs; a suspect fine on its re-test is listed as not confirmed, not as a suspect.\n"
	"--dry-run estimates each phase's time from its keys and the lanes' speeds (the plan's\n"
	"topology); the run records each estimate next to what the phase took (run.json), and its\n"
	"ETA learns from what the run measures.  A test is judged by its progress: one that moves\n"
	"nothing (no record, no bytes) past its time is stopped as hung, saying what it did last.\n"
	"\n"
	"PLAN is an INI file: [global] then one section per phase.  [global] keys: hostfile,\n"
	"nodes, launcher, label (repeatable), agent-timeout, join-timeout, token-file, listen,\n"
	"ssh, agent-cmd, mpirun, srun, seed, retest-max, retest-time, topology (the intended\n"
	"design: its cables' speeds are the estimate's), and any test option below as the\n"
	"phases' default.  Phase keys:\n"
	"kind (pairwise: N-1 rounds of N/2 disjoint pairs; ring; permutation: count random\n"
	"derangements; bisection: the first half against the second, both ways; incast: every\n"
	"node to target; ping: the control channel's round trip; polarization and pfc: the\n"
	"probes, with their own keys, see 'fabscope probe'; allreduce and alltoall: one round,\n"
	"per lane one collective of the nodes on it (rank i the i-th), every lane at once),\n"
	"test (bw, lat or bw,lat; none for the collectives), count, seed, target, rails (e.g.\n"
	"0,1), parallel (at most N tests at once in a round, e.g. 1 for latency on busy hosts),\n"
	"load (bw, with test = lat and a duration: each lat test beside a bw test of its pair),\n"
	"and the options of 'fabscope bw' and 'fabscope lat' by their long names: transport,\n"
	"op, size, all, flows, iters, duration, warmup, bidirectional, sport, tx-depth, cq-mod,\n"
	"post-list, tclass, device, ib-port, gid-index, mtu, sl, flow-label, inline, poll,\n"
	"timeout; those of 'fabscope allreduce' for the collectives: algo, minbytes, maxbytes,\n"
	"stepfactor, warmup, iters, chunk, flows, tx-depth, tclass, no-check, transport,\n"
	"timeout, ib-port, gid-index, mtu, qp-timeout, poll, corrupt (testing).\n"
	"\n"
	"A hostfile has a node per line: NAME [netns=NS] [ssh=DEST] [railK=IP] [railK/P=IP]\n"
	"[leaf=SWITCH] [pod=POD].\n"
	"Tests pair endpoints of the same rail and plane.  Without a hostfile, -n N agents\n"
	"join and report their own endpoints (--rail), or their address is rail 0.\n"
	"\n"
	"Exit codes: 0 all measured, 1 a collective's data check found wrong data, 2 bad plan\n"
	"or options, 3 environment, 4 an agent was missing or a test failed (the run went on;\n"
	"results.jsonl says which; 4 wins over 1), 130 interrupted (finish it with --resume DIR).";

/* --retest-max's and --retest-time's defaults: a few suspects, two minutes at the end */
#define RUN_RETEST_MAX 8
#define RUN_RETEST_TIME 120

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

struct run_opts;

/* A time for people: "0.44 s", "27.3 s", "129 s (2:09)" */
static void fmt_secs(double s, char *buf, size_t len)
{
	if (s < 1)
		snprintf(buf, len, "%.2g s", s);
	else if (s < 60)
		snprintf(buf, len, "%.1f s", s);
	else if (s < 3600)
		snprintf(buf, len, "%.0f s (%d:%02d)", s, (int)(s + 0.5) / 60, (int)(s + 0.5) % 60);
	else if (s < 1e9)
		snprintf(buf, len, "%.0f s (%d:%02d:%02d)", s, (int)(s + 0.5) / 3600, (int)(s + 0.5) / 60 % 60,
			 (int)(s + 0.5) % 60);
	else	/* (past what an int holds) */
		snprintf(buf, len, "%.3g s", s);
}

/* Phase pi's estimate (coord_phase_est_s), for people into buf; 0 when
 * its lanes cannot be had (out of memory: said). */
static double dry_run_est(struct coord *c, int pi, char *buf, size_t len)
{
	struct coord_lanes cl;
	double s;

	buf[0] = 0;
	if (coord_phase_lanes(c, pi, &cl))
		return 0;
	s = coord_phase_est_s(c, pi, &cl, 0, 0);
	fmt_secs(s, buf, len);
	return s;
}

/* --dry-run's last lines: the time, and what it takes the lanes' speeds
 * and a job's set-up to be */
static void dry_run_time(struct coord *c, const struct run_opts *ro, double est);

/* --dry-run of a collective phase: one round, a group per lane, every
 * lane at once; per lane its ranks in order (rank i is the i-th node). */
static void dry_run_group(struct coord *c, int pi, const struct plan_phase *ph, int *idx, const char *est)
{
	struct plan_lane lanes[PLAN_MAX_LANES];
	int nl = plan_lanes(&c->plan, ph, lanes, PLAN_MAX_LANES), li, i, jobs = 0;

	for (li = 0; li < nl; li++)
		jobs += coord_lane_nodes(c, lanes[li], idx) >= 2;
	printf("[%d] %s: %s, %d round on %d lane%s, %d job%s (a group of ranks per lane, every lane at once); "
	       "about %s\n", pi + 1, ph->name, plan_kind_name(ph->kind), jobs ? 1 : 0, nl, nl == 1 ? "" : "s", jobs,
	       jobs == 1 ? "" : "s", est);
	for (li = 0; li < nl; li++) {
		int n = coord_lane_nodes(c, lanes[li], idx);
		char lane[32];

		fs_lane_name(lanes[li].rail, lanes[li].plane, lane, sizeof(lane));
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
static int dry_run(struct coord *c, const struct run_opts *ro)
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
		char pest[48];

		est += dry_run_est(c, pi, pest, sizeof(pest));
		if (PLAN_PER_NODE(ph->kind)) {
			printf("[%d] %s: %s, 1 round, %d agents; about %s\n", pi + 1, ph->name, plan_kind_name(ph->kind),
			       p->nnodes, pest);
			continue;
		}
		if (plan_is_group(ph)) {
			dry_run_group(c, pi, ph, idx, pest);
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
					jobs += plan_round_jobs(ph, n);
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
		/* the run runs the rounds of each test in turn (bw's, then
		 * lat's): its "round i/N" counts them all, and so does this */
		{
			char per[64] = "";

			if (ph->ntests > 1 && rounds)
				snprintf(per, sizeof(per), " (%d of each test, %s then %s)", rounds, ph->tests[0],
					 ph->tests[1]);
			printf("[%d] %s: %s %s, %d round%s%s on %d lane%s, %lld jobs per test (%lld pairs generated in %.3f s); "
			       "about %s\n", pi + 1, ph->name, plan_kind_name(ph->kind),
			       ph->ntests == 2 ? "bw,lat" : ph->tests[0], rounds * ph->ntests, rounds * ph->ntests == 1 ? "" : "s",
			       per, nlp, nlp == 1 ? "" : "s", jobs, pairs_checked, (clock_ns() - pt0) / 1e9, pest);
			if (ph->load)
				printf("    under load: each lat job beside a %s job of its pair, started first (%lld "
				       "load jobs: a %g s warm-up, then %g s measured; the lat job %g s after its "
				       "load)\n", ph->load, jobs, PLAN_LOAD_SETTLE_S, ph->load_s, PLAN_LOAD_SETTLE_S);
		}
	}
	dry_run_time(c, ro, est);
	printf("schedule generated in %.3f s\n", (clock_ns() - t0) / 1e9);
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

/* What the command line says, and what the steps of a run hand on. */
struct run_opts {
	const char *out_dir, *resume, *hostfile, *launcher, *token_file, *plan_path;
	const char **argv;
	int nargs, nodes, dry, verbose, no_retest, retest_max;
	double agent_timeout, join_timeout, retest_time;
	struct opt_list labels;
	char run_id[64], hf_path[2 * PATH_MAX + 2];
	json_t *retest_info;	/* run.json's retest (NULL: no agent came) */
	long wrong_recs;	/* records with wrong data, and the elements of them */
	double wrong_elems;
	struct topo design;	/* [global] topology: the cabling its topology phases are judged by */
	int have_design, cabling_errors;
	struct rpolar_counts polar;	/* the polarization probes' verdicts */
	char topo_path[2 * PATH_MAX + 2];
	char *topo_text;	/* the design's text as read: run.json's topology, for the history */
};

static void dry_run_time(struct coord *c, const struct run_opts *ro, double est)
{
	struct plan_lane lanes[PLAN_MAX_LANES];
	int nl = plan_lanes(&c->plan, NULL, lanes, PLAN_MAX_LANES), li, known = 0;
	double lo = 0, hi = 0;
	char t[48], sp[400];
	size_t n;

	for (li = 0; li < nl; li++) {	/* the lanes whose speed the design gives */
		double g = plan_cost_gbps(&c->cost, lanes[li]);

		if (c->cost.lane_from[lanes[li].rail][lanes[li].plane] != 'd')
			continue;
		lo = !known || g < lo ? g : lo;
		hi = !known || g > hi ? g : hi;
		known++;
	}
	if (!known)
		snprintf(sp, sizeof(sp), "lanes taken at %g Gb/s (no link speeds known: give [global] topology, "
			 "a design with its cables' speed=)", c->cost.gbps);
	else if (lo == hi)
		snprintf(sp, sizeof(sp), "lanes at %g Gb/s (%.200s's links)", lo, ro->topo_path);
	else
		snprintf(sp, sizeof(sp), "lanes at %g to %g Gb/s (%.200s's links)", lo, hi, ro->topo_path);
	n = strlen(sp);
	if (known && known < nl)
		snprintf(sp + n, sizeof(sp) - n, ", %d other%s taken at %g Gb/s", nl - known, nl - known == 1 ? "" : "s",
			 c->cost.gbps);
	fmt_secs(est, t, sizeof(t));
	printf("estimated time: %s for the phases; %s, %g s to set up a job\n", t, sp, c->cost.setup_s);
	if (!ro->no_retest && ro->retest_max)
		printf("    and at most %.0f s more to re-test suspects, if there are any (--retest-time)\n",
		       ro->retest_time);
}

/* The options into c and ro: 0, OPTS_HELP (the help printed), or
 * -FS_EXIT_USAGE after the message. */
static int run_options(struct coord *c, struct run_opts *ro, int argc, const char **argv)
{
	struct opt tab[] = {
		OPT_GROUP("Run"),
		OPT_FILE('o', "output", &ro->out_dir, "DIR", "results directory, new or empty (default: fabscope-run-<time>)"),
		OPT_FILE(0, "resume", &ro->resume, "DIR", "finish an interrupted run: the jobs without a record in DIR"),
		OPT_BOOL(0, "dry-run", &ro->dry, "print the schedule (every round generated and checked) and each phase's estimated time, and exit"),
		OPT_LIST(0, "label", &ro->labels, "K=V", "label every record, e.g. lb=ecmp (repeatable; adds to the plan's)"),
		OPT_BOOL(0, "no-retest", &ro->no_retest, "do not measure the suspects again at the end"),
		OPT_INT(0, "retest-max", &ro->retest_max, "K", "re-test at most K suspects (default 8; 0: none)", 0, 1000),
		OPT_SECONDS(0, "retest-time", &ro->retest_time, "SECONDS", "re-test for at most this long (default 120)"),
		OPT_GROUP("Agents"),
		OPT_STRING(0, "launcher", &ro->launcher, "NAME", "local (default), ssh, slurm, mpi or external"),
		OPT_FILE(0, "hostfile", &ro->hostfile, "FILE", "the nodes (overrides the plan's hostfile)"),
		OPT_INT('n', "nodes", &ro->nodes, "N", "agents to start or wait for when there is no hostfile", 1, 1 << 20),
		OPT_FILE(0, "token-file", &ro->token_file, "FILE", "shared secret (default: $FABSCOPE_TOKEN; local, ssh, slurm and mpi make one up if neither is given)"),
		OPT_BOOL(0, "allow-readable-token", &c->readable_token, "accept a token file that others can read (a warning instead of exit 3; ssh agents are told the same)"),
		OPT_STRING(0, "listen", &c->listen, "ADDR[:PORT]", "where agents connect in (slurm, mpi, external; default: every address, a free port)"),
		OPT_STRING(0, "advertise", &c->advertise_host, "HOST", "the address agents are told to connect to (default: the listen address, else the host name)"),
		OPT_STRING(0, "ssh", &c->ssh_cmd, "CMD", "ssh command for the ssh launcher (default: ssh -o BatchMode=yes)"),
		OPT_FILE(0, "agent-cmd", &c->agent_cmd, "PATH", "the fabscope the agents run, local ones too (default: this one)"),
		OPT_STRING(0, "launcher-args", &c->launcher_args, "ARGS", "more arguments for srun or mpirun, e.g. '--overcommit'"),
		OPT_SECONDS(0, "agent-timeout", &ro->agent_timeout, "SECONDS", "an agent silent this long is missing (default 10)"),
		OPT_SECONDS(0, "join-timeout", &ro->join_timeout, "SECONDS", "wait this long for agents to join (default 30)"),
		OPT_VERBOSE(&ro->verbose),
		OPT_END(),
	};
	int rc = opts_parse(argc, argv, tab, run_usage, run_about, &ro->nargs);

	if (rc)
		return rc;
	ro->argv = argv;
	fs_set_verbosity(ro->verbose);
	fs_set_progname("fabscope run");
	c->verbose = ro->verbose;
	if (ro->resume && ro->nargs)
		return fs_err_usage("--resume DIR takes the plan from DIR/run.json: give no PLAN");
	if (!ro->resume && ro->nargs != 1)
		return fs_err_usage(ro->nargs ? "give one PLAN" : "missing PLAN: give a plan file (see --help), or --resume DIR");
	if (ro->resume && ro->dry)
		return fs_err_usage("--dry-run is for a PLAN, not --resume");
	if (ro->launcher)
		return opt_launcher_ok(ro->launcher);
	return 0;
}

/* --resume: the plan, the hostfile and the options the run was started
 * with (what the command line does not give again). */
static int run_resume_plan(struct coord *c, struct run_opts *ro)
{
	json_t *pl, *opts_json;
	const char *id;
	int rc;

	if ((rc = results_resume(&c->res, ro->resume)))
		return rc;
	pl = json_object_get(c->res.run, "plan");
	ro->plan_path = json_string_value(json_object_get(pl, "path"));
	if (!ro->plan_path || !json_string_value(json_object_get(pl, "text")))
		return fs_err_usage("cannot resume '%s': run.json has no plan", ro->resume);
	if ((rc = plan_parse(&c->plan, ro->plan_path, json_string_value(json_object_get(pl, "text")))))
		return rc;
	opts_json = json_object_get(c->res.run, "options");
	if (!ro->launcher)
		ro->launcher = json_string_value(json_object_get(opts_json, "launcher"));
	if (!ro->nodes)
		ro->nodes = (int)json_integer_value(json_object_get(opts_json, "nodes"));
	if (!ro->token_file)
		ro->token_file = json_string_value(json_object_get(opts_json, "token_file"));
	if (!c->ssh_cmd)
		c->ssh_cmd = json_string_value(json_object_get(opts_json, "ssh"));
	if (!c->launcher_args)
		c->launcher_args = json_string_value(json_object_get(opts_json, "launcher_args"));
	if (!c->agent_cmd)
		c->agent_cmd = json_string_value(json_object_get(opts_json, "agent_cmd"));
	if (!c->listen)
		c->listen = json_string_value(json_object_get(opts_json, "listen"));
	pl = json_object_get(c->res.run, "hostfile");
	if (json_string_value(json_object_get(pl, "text")) &&
	    (rc = plan_hostfile(&c->plan, json_string_value(json_object_get(pl, "path")),
				json_string_value(json_object_get(pl, "text")))))
		return rc;
	if (!ro->agent_timeout)
		ro->agent_timeout = json_real_value(json_object_get(opts_json, "agent_timeout"));
	if (!ro->join_timeout)
		ro->join_timeout = json_real_value(json_object_get(opts_json, "join_timeout"));
	id = json_string_value(json_object_get(c->res.run, "id"));
	snprintf(ro->run_id, sizeof(ro->run_id), "%s", id ? id : "resumed");
	return 0;
}

/* A new run: the plan file, and its hostfile (the command line's, else
 * the plan's, relative to the plan). */
static int run_read_plan(struct coord *c, struct run_opts *ro)
{
	char plan_dir[PATH_MAX];
	const char *h;
	int rc;

	ro->plan_path = ro->argv[0];
	if ((rc = plan_load(&c->plan, ro->plan_path)))
		return rc;
	dir_of(ro->plan_path, plan_dir, sizeof(plan_dir));
	if (!ro->hostfile && (h = plan_global(&c->plan, "hostfile", NULL))) {
		if (h[0] == '/')
			snprintf(ro->hf_path, sizeof(ro->hf_path), "%s", h);
		else
			snprintf(ro->hf_path, sizeof(ro->hf_path), "%s/%s", plan_dir, h);
		ro->hostfile = ro->hf_path;
	}
	if (ro->hostfile && (rc = plan_hostfile(&c->plan, ro->hostfile, NULL)))
		return rc;
	if ((h = plan_global(&c->plan, "topology", NULL))) {	/* read now: a bad design stops the run before it starts */
		snprintf(ro->topo_path, sizeof(ro->topo_path), h[0] == '/' ? "%s%s" : "%s/%s", h[0] == '/' ? "" : plan_dir,
			 h);
		topo_init(&ro->design);
		ro->have_design = 1;
		if ((rc = topo_load_text(ro->topo_path, &ro->topo_text)) ||
		    (rc = topo_read(&ro->design, ro->topo_path, ro->topo_text)))
			return rc;
		c->design = &ro->design;	/* the polarization phases' verdicts too */
	}
	make_run_id(ro->run_id, sizeof(ro->run_id));
	return 0;
}

/* A [global] duration of the plan (agent-timeout, join-timeout) into *v
 * unless the command line gave it */
static int run_global_seconds(struct coord *c, const struct run_opts *ro, const char *key, double *v)
{
	const char *s = plan_global(&c->plan, key, NULL);

	if (!*v && s && units_parse_seconds(s, v))
		return fs_err_usage("%s: %s '%s' is not a duration", ro->plan_path, key, s);
	return 0;
}

/* The settings: the command line's, then the plan's [global], then the
 * defaults; and the nodes expected. */
static int run_settings(struct coord *c, struct run_opts *ro)
{
	int rc;

	if (!ro->launcher)
		ro->launcher = plan_global(&c->plan, "launcher", "local");
	if ((rc = opt_launcher_ok(ro->launcher)))
		return rc;
	c->launcher = ro->launcher;
	if (!ro->nodes && plan_global(&c->plan, "nodes", NULL)) {
		uint64_t n = 0;	/* checked when the plan was read */

		units_parse_count(plan_global(&c->plan, "nodes", "0"), &n);
		ro->nodes = (int)n;
	}
	if (!ro->token_file)
		ro->token_file = plan_global(&c->plan, "token-file", NULL);
	if (!c->ssh_cmd)
		c->ssh_cmd = plan_global(&c->plan, "ssh", NULL);
	if (!c->agent_cmd)
		c->agent_cmd = plan_global(&c->plan, "agent-cmd", NULL);
	if (!c->listen)
		c->listen = plan_global(&c->plan, "listen", NULL);
	if (!c->launcher_args)
		c->launcher_args = plan_global(&c->plan, !strcmp(ro->launcher, "mpi") ? "mpirun" : "srun", NULL);
	if ((rc = run_global_seconds(c, ro, "agent-timeout", &ro->agent_timeout)) ||
	    (rc = run_global_seconds(c, ro, "join-timeout", &ro->join_timeout)) ||
	    (rc = run_global_seconds(c, ro, "retest-time", &ro->retest_time)))
		return rc;
	if (ro->retest_max < 0 && plan_global(&c->plan, "retest-max", NULL)) {
		const char *v = plan_global(&c->plan, "retest-max", NULL);
		uint64_t n;

		if (units_parse_count(v, &n) || n > 1000)
			return fs_err_usage("%s: retest-max '%s': give a count of suspects, 0 to 1000", ro->plan_path, v);
		ro->retest_max = (int)n;
	}
	if (ro->retest_max < 0)
		ro->retest_max = RUN_RETEST_MAX;
	if (!(ro->retest_time > 0))
		ro->retest_time = RUN_RETEST_TIME;
	c->agent_timeout = ro->agent_timeout > 0 ? ro->agent_timeout : 10;
	c->join_timeout = ro->join_timeout > 0 ? ro->join_timeout : 30;
	if (c->plan.hostfile) {
		if (ro->nodes && ro->nodes != c->plan.nnodes)
			return fs_err_usage("-n %d, but the hostfile %s has %d nodes", ro->nodes, c->plan.hostfile,
					    c->plan.nnodes);
		c->expected = c->plan.nnodes;
		return 0;
	}
	if (!strcmp(ro->launcher, "ssh"))
		return fs_err_usage("the ssh launcher needs a hostfile (--hostfile, or hostfile = in the plan)");
	if (!ro->nodes)
		return fs_err_usage("how many nodes? give a hostfile, or -n N (nodes = N in the plan)");
	c->expected = ro->nodes;
	return 0;
}

/* The labels of every record: the plan's, then the command line's (a
 * resumed run's, then the new command line's). */
static int run_labels(struct coord *c, struct run_opts *ro)
{
	json_t *cl, *prev = ro->resume ? json_object_get(c->res.run, "labels") : NULL;
	const char *bad;
	int i;

	c->labels = json_is_object(prev) ? json_deep_copy(prev) : json_object();
	for (i = 0; i < c->plan.nglobal; i++) {
		const struct plan_kv *kv = &c->plan.global[i];

		/* (each checked by plan_parse at its line) */
		if (!strcmp(kv->key, "label") && record_label_add(c->labels, kv->val))
			return fs_err_usage("%s:%d: label '%s': give KEY=VALUE", ro->plan_path, kv->line, kv->val);
	}
	if (record_labels(&ro->labels, &cl, &bad))
		return fs_err_usage(RECORD_LABEL_ERR, bad);
	json_object_update(c->labels, cl);
	json_decref(cl);
	return 0;
}

/* What is checked before anything starts (the dry run too: what the real
 * run would refuse, it refuses): the phases, the labels, the nodes. */
static int run_check(struct coord *c, struct run_opts *ro)
{
	int rc;

	if ((rc = coord_check_phases(c)) || (rc = run_labels(c, ro)))
		return rc;
	plan_cost_init(&c->cost);	/* the model of time: the design's speeds when there is one */
	if (ro->have_design)
		plan_cost_design(&c->cost, &ro->design);
	if (!c->plan.hostfile && (!strcmp(ro->launcher, "local") || ro->dry)) {
		if ((rc = plan_nodes_anon(&c->plan, ro->nodes)))	/* node0, node1, ... */
			return rc;
		if (!strcmp(ro->launcher, "local") && (rc = coord_check_targets(c, 0)))
			return rc;
	}
	return 0;
}

/* --resume of a finished run: nothing to start agents for; its verdict
 * stands. */
static int run_nothing_left(struct coord *c, struct run_opts *ro)
{
	json_t *polar;
	long failed;

	rstore_load(&c->recs, c->res.dir, NULL, NULL);	/* (what cannot be read: nothing failed) */
	ro->wrong_recs = analyze_wrong(&c->recs, &ro->wrong_elems);
	failed = c->recs.nfailed;
	if (failed)
		return fs_err_peer("nothing left to run: every job of %s has finished (%ld records), %ld of them "
				   "failed (see %s/results.jsonl); no agent started", ro->resume, c->res.nrec, failed,
				   ro->resume);
	if (ro->wrong_recs)
		return fs_err(FS_EXIT_CHECK, "nothing left to run: every job of %s has finished (%ld records), "
			      "%.0f wrong element%s in %ld of them: a collective's data check failed; no agent "
			      "started", ro->resume, c->res.nrec, ro->wrong_elems, ro->wrong_elems == 1 ? "" : "s",
			      ro->wrong_recs);
	polar = rpolar_deciding(c->recs.polar);
	rpolar_count(polar, &ro->polar);
	json_decref(polar);
	if (ro->polar.polarized || ro->polar.inconclusive)
		return fs_err(FS_EXIT_CHECK, "nothing left to run: every job of %s has finished (%ld records); of its "
			      "%d polarization probe%s, %d polarized and %d without a verdict; no agent started",
			      ro->resume, c->res.nrec, ro->polar.probes, ro->polar.probes == 1 ? "" : "s",
			      ro->polar.polarized, ro->polar.inconclusive);
	fs_info("nothing left to run: every job of %s has finished (%ld records); no agent started",
		ro->resume, c->res.nrec);
	return 0;
}

/* The token: the file's or $FABSCOPE_TOKEN, else one for this run only
 * (the launcher hands it on). */
static int run_token(struct coord *c, const struct run_opts *ro)
{
	uint8_t raw[24];

	c->token_file = ro->token_file;
	if (ro->token_file || getenv("FABSCOPE_TOKEN"))
		return auth_token(ro->token_file, c->readable_token, &c->token);
	if (!strcmp(ro->launcher, "external"))
		return fs_err_usage("agents started elsewhere need the token: give --token-file FILE or set FABSCOPE_TOKEN");
	if (!(c->token = malloc(2 * sizeof(raw) + 1)))
		return fs_err_env("out of memory for a token");
	if (hmac_random(raw, sizeof(raw)))
		return fs_err_env("no random numbers for a token (getrandom failed)");
	hmac_hex(raw, sizeof(raw), c->token);
	return 0;
}

/* The results directory, new (run.json's facts of the run) or resumed. */
static int run_results_dir(struct coord *c, struct run_opts *ro)
{
	char def[128], now[40];
	json_t *run;
	int rc;

	if (ro->resume) {
		run = c->res.run;
		clock_iso8601(now, sizeof(now));
		if (!json_object_get(run, "resumed"))
			json_object_set_new(run, "resumed", json_array());
		json_array_append_new(json_object_get(run, "resumed"), json_string(now));
		json_object_set_new(run, "status", json_string("running"));
		fs_info("resuming %s: %ld records there already", ro->resume, c->res.nrec);
		return 0;
	}
	if (!ro->out_dir) {
		snprintf(def, sizeof(def), "fabscope-run-%.15s", ro->run_id);
		ro->out_dir = def;
	}
	rc = results_create(&c->res, ro->out_dir);
	ro->out_dir = NULL;	/* (def is gone after this) */
	if (rc)
		return rc;
	run = c->res.run;
	clock_iso8601(now, sizeof(now));
	json_object_set_new(run, "schema", json_string("fabscope.run/1"));
	json_object_set_new(run, "id", json_string(ro->run_id));
	json_object_set_new(run, "version", json_string(FABSCOPE_VERSION));
	json_object_set_new(run, "started", json_string(now));
	json_object_set_new(run, "status", json_string("running"));
	json_object_set_new(run, "plan", json_pack("{ss,ss}", "path", ro->plan_path, "text", c->plan.text));
	if (c->plan.hostfile)
		json_object_set_new(run, "hostfile", json_pack("{ss,ss}", "path", c->plan.hostfile,
							       "text", c->plan.hostfile_text));
	if (ro->topo_text)	/* the design of this night, as it was read: what `history add` keeps */
		json_object_set_new(run, "topology", json_pack("{ss,ss}", "path", ro->topo_path, "text", ro->topo_text));
	json_object_set_new(run, "options", json_pack("{ss,si,ss?,ss?,ss?,ss?,ss?,sf,sf}",
		"launcher", ro->launcher, "nodes", ro->nodes, "token_file", ro->token_file, "ssh", c->ssh_cmd,
		"launcher_args", c->launcher_args, "agent_cmd", c->agent_cmd, "listen", c->listen,
		"agent_timeout", c->agent_timeout, "join_timeout", c->join_timeout));
	return 0;
}

/* Before the agents: this binary, the signals, the node tables, and the
 * listening socket of the launchers whose agents connect in. */
static int run_start(struct coord *c, const struct run_opts *ro)
{
	ssize_t n = readlink("/proc/self/exe", c->self, sizeof(c->self) - 1);
	int rc;

	if (n <= 0)
		snprintf(c->self, sizeof(c->self), "fabscope");
	signal(SIGPIPE, SIG_IGN);
	net_stop_on_signals();
	c->tty = isatty(2);
	c->run_start_ns = clock_ns();
	if ((rc = coord_ensure_nodes(c, c->plan.nnodes)))
		return rc;
	if (launch_uses_listener(ro->launcher) && (rc = coord_listen(c)))
		return rc;
	return 0;
}

/* The agents, the phases, and the latency pair suspects measured again
 * while the agents are here. */
static int run_phases(struct coord *c, struct run_opts *ro)
{
	int rc;

	c->join_deadline_ns = clock_ns() + (uint64_t)(c->join_timeout * 1e9);
	if ((rc = launch_agents(c)) || (rc = coord_join(c)))
		return rc;
	json_object_set_new(c->res.run, "nodes", coord_nodes_json(c));
	json_object_set_new(c->res.run, "join_seconds", json_real((clock_ns() - c->run_start_ns) / 1e9));
	fs_info("%d of %d agents joined in %.1f s", c->expected - c->missing, c->expected,
		(clock_ns() - c->run_start_ns) / 1e9);
	results_save(&c->res);
	if (!(rc = coord_check_targets(c, 1)) &&	/* the names of joined agents too */
	    !(rc = coord_planned(c))) {
		coord_check_transports(c);
		rc = coord_run_phases(c);
	}
	ro->retest_info = json_object();
	if (ro->no_retest || !ro->retest_max)
		json_object_set_new(ro->retest_info, "off", json_string(ro->no_retest ? "--no-retest" :
									"retest-max 0"));
	else if (rc)
		json_object_set_new(ro->retest_info, "off", json_string(rc == -FS_EXIT_INTERRUPTED ?
			"the run was interrupted" : "the run stopped"));
	else
		rc = coord_retest(c, ro->retest_max, ro->retest_time, ro->retest_info);
	return rc;
}

/* bye to every agent, and their connections closed */
static void run_stop_agents(struct coord *c)
{
	json_t *bye = json_pack("{ss}", "type", "bye");
	int i;

	for (i = 0; i < c->nconns; i++)
		if (c->conns[i].authed && !c->conns[i].gone)
			wire_send_mac(c->conns[i].fd, &c->conns[i].tx, bye, 1000);
	json_decref(bye);
	launch_reap(c, 0);
	for (i = 0; i < c->nconns; i++)
		if (!c->conns[i].gone) {
			close(c->conns[i].fd);
			wire_rd_release(&c->conns[i].rd);
		}
	if (c->listen_fd >= 0)
		close(c->listen_fd);
	if (c->epfd >= 0)
		close(c->epfd);
	c->epfd = c->listen_fd = -1;
}

/* run.json's end of the run: its status (rc: how the run went), what
 * it found and what the coordinator cost. */
static void run_json_end(struct coord *c, const struct run_opts *ro, int rc)
{
	json_t *run = c->res.run;
	struct rusage ru;
	char ended[40], st[160];

	json_object_set_new(run, "nodes", coord_nodes_json(c));
	clock_iso8601(ended, sizeof(ended));
	json_object_set_new(run, "finished", json_string(ended));
	results_sync(&c->res);	/* (the last jobs.done lines, unless a write failed) */
	if (c->res.werr) {
		snprintf(st, sizeof(st), "failed: %s", c->res.werr == ENOSPC ? "disk full" : strerror(c->res.werr));
		json_object_set_new(run, "status", json_string(st));
	} else {
		json_object_set_new(run, "status", json_string(rc == -FS_EXIT_INTERRUPTED ? "interrupted" :
							       rc ? "failed" : "finished"));
	}
	json_object_set_new(run, "failed_jobs", json_integer(c->failed_jobs));
	json_object_set_new(run, "not_run_jobs", json_integer(c->notrun_jobs));	/* (of failed_jobs) */
	json_object_set_new(run, "wrong_records", json_integer(ro->wrong_recs));
	if (!getrusage(RUSAGE_SELF, &ru))	/* what the coordinator itself cost: for sizing large runs */
		json_object_set_new(run, "coordinator", json_pack("{sI,sf}",
			"max_rss_kib", (json_int_t)ru.ru_maxrss,
			"cpu_seconds", ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
				       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6));
	json_object_set_new(run, "missing_agents", json_integer(c->missing));
}

/* The analysis, of every record in the directory (of every record, so
 * that a resumed run still fails its check): the summary, the suspects,
 * and run.json's end. */
static void run_analysis(struct coord *c, struct run_opts *ro, int rc)
{
	json_t *suspects, *not_confirmed = NULL, *polar, *pj;

	/* on from what the re-test read (everything, when it did not) */
	if (rstore_load(&c->recs, c->res.dir, NULL, NULL) == -ENOMEM)
		fs_err_env("out of memory reading %s/results.jsonl: the analysis has what was read", c->res.dir);
	if (!ro->retest_info)	/* (no agent came: nothing was measured) */
		ro->retest_info = json_object();
	suspects = analyze_suspects_retest(&c->recs, ANALYZE_LOW_FRAC, ro->retest_info, &not_confirmed);
	ro->wrong_recs = analyze_wrong(&c->recs, &ro->wrong_elems);
	polar = rpolar_deciding(c->recs.polar);
	rpolar_count(polar, &ro->polar);
	if (c->recs.nrec) {
		analyze_summary(stdout, &c->recs);
		analyze_print(stdout, suspects, not_confirmed);
		rpolar_print(stdout, polar);	/* a verdict of the fabric, beside its suspects */
	}
	if ((pj = rpolar_json(polar)))
		json_object_set_new(c->res.run, "polarization", pj);
	json_decref(polar);
	ro->cabling_errors = -1;
	if (ro->have_design)
		run_topo_judge(c->res.dir, &ro->design, c->res.run, stdout, &ro->cabling_errors);
	json_object_set_new(c->res.run, "suspects", suspects);
	json_object_set_new(c->res.run, "not_confirmed", not_confirmed);
	json_object_set(c->res.run, "retest", ro->retest_info);
	run_json_end(c, ro, rc);
	results_save(&c->res);
	printf("results: %s (%ld records)\n", c->res.dir, c->res.nrec);
}

/* The run's exit: a write that failed, then agents missing or jobs
 * failed, then jobs not run for a node that cannot use their transport (3),
 * then wrong data; rc (0 or -FS_EXIT_*) when none of them. */
static int run_verdict(struct coord *c, const struct run_opts *ro, int rc)
{
	coord_say_repeats(c);
	if (c->res.werr)	/* nothing measured is lost: what was written stays, the rest runs again */
		rc = fs_err_env("results directory %s %s%s: %ld records written, %ld not; run 'fabscope run --resume %s' "
				"after %s", c->res.dir, c->res.werr == ENOSPC ? "full" : "cannot be written: ",
				c->res.werr == ENOSPC ? "" : strerror(c->res.werr), c->res.nrec, c->res.lost, c->res.dir,
				c->res.werr == ENOSPC ? "freeing space" : "fixing that");
	else if (!rc && (c->missing || c->failed_jobs > c->notrun_jobs))
		rc = fs_err_peer("%d agent(s) missing, %d job(s) failed%s%s: see %s/results.jsonl", c->missing,
				 c->failed_jobs - c->notrun_jobs, c->notrun_jobs ? " and more not run (no verbs)" : "",
				 ro->wrong_recs ? ", and wrong data" : "", c->res.dir);
	else if (!rc && c->notrun_jobs)
		rc = fs_err_env("%d job(s) of transport = verbs not run: nodes that cannot use verbs, said above (the "
				"rest ran%s: see %s/results.jsonl); give those nodes RDMA, or transport = tcp",
				c->notrun_jobs, ro->wrong_recs ? ", with wrong data" : "", c->res.dir);
	else if (!rc && ro->wrong_recs)
		rc = fs_err(FS_EXIT_CHECK, "%.0f wrong element%s in %ld record%s: a collective's data check "
			    "failed (see the failed lines above and %s/results.jsonl)", ro->wrong_elems,
			    ro->wrong_elems == 1 ? "" : "s", ro->wrong_recs, ro->wrong_recs == 1 ? "" : "s", c->res.dir);
	else if (!rc && ro->cabling_errors > 0)
		rc = fs_err(FS_EXIT_CHECK, "%d cabling error%s against %s (the cabling: lines above)",
			    ro->cabling_errors, ro->cabling_errors == 1 ? "" : "s", ro->topo_path);
	else if (!rc && ro->polar.polarized)
		rc = fs_err(FS_EXIT_CHECK, "%d of %d polarization probe%s polarized (the polarization: lines above)",
			    ro->polar.polarized, ro->polar.probes, ro->polar.probes == 1 ? "" : "s");
	else if (!rc && ro->polar.inconclusive)
		rc = fs_err(FS_EXIT_CHECK, "%d of %d polarization probe%s gave no verdict (the polarization: lines "
			    "above say why, and what to give)", ro->polar.inconclusive, ro->polar.probes,
			    ro->polar.probes == 1 ? "" : "s");
	if (rc == -FS_EXIT_INTERRUPTED)
		fs_warn("interrupted: finish the run with 'fabscope run --resume %s'", c->res.dir);
	return rc;
}

/* Everything the run holds; close_res: the results directory too. */
static void run_release(struct coord *c, struct run_opts *ro, int close_res)
{
	int i;

	if (close_res && c->res.dir)
		results_close(&c->res);
	json_decref(ro->retest_info);
	if (ro->have_design)
		topo_release(&ro->design);
	free(ro->topo_text);
	rstore_release(&c->recs);
	free(c->lanes);
	free(c->est_phase);
	for (i = 0; i < FS_MAX_RAILS * FS_MAX_PLANES; i++)
		free(c->node_gbps[i]);
	for (i = 0; i < c->nnodes_cap; i++) {
		free(c->node_why[i]);
		free(c->node_noverbs[i]);
	}
	free(c->node_why);
	free(c->node_noverbs);
	json_decref(c->causes);
	free(c->node_conn);
	free(c->conns);
	free(c->fdmap);
	free(c->pids);
	free(c->nj_first);
	free(c->nj_list);
	free(c->jobs);
	free(c->token);
	json_decref(c->labels);
	plan_release(&c->plan);
	opt_list_release(&ro->labels);
}

/* From the results directory on: the agents, the phases, the analysis. */
static int run_run(struct coord *c, struct run_opts *ro)
{
	int rc;

	json_object_set(c->res.run, "labels", c->labels);
	json_object_set_new(c->res.run, "agents", json_array());
	json_object_set_new(c->res.run, "phases", json_array());
	c->run_id = ro->run_id;
	if ((rc = results_save(&c->res)) || (rc = run_start(c, ro)))
		return rc;
	rc = run_phases(c, ro);
	run_stop_agents(c);
	run_analysis(c, ro, rc);
	return run_verdict(c, ro, rc);
}

int cmd_run(int argc, const char **argv)
{
	struct coord c = { .listen_fd = -1, .epfd = -1, .spawner_fd = -1, .agent_timeout = 10, .join_timeout = 30 };
	struct run_opts ro = { .retest_max = -1 };
	int rc = run_options(&c, &ro, argc, argv), close_res = 1;

	if (rc == OPTS_HELP) {
		opt_list_release(&ro.labels);
		return 0;
	}
	/* the plan: from the file, or from the run being resumed */
	if (!rc)
		rc = ro.resume ? run_resume_plan(&c, &ro) : run_read_plan(&c, &ro);
	if (!rc)
		rc = run_settings(&c, &ro);
	if (!rc) {
		close_res = 0;
		rc = run_check(&c, &ro);
	}
	if (!rc && ro.dry) {
		rc = dry_run(&c, &ro);
	} else if (!rc && ro.resume && !retest_due(&c, ro.no_retest || !ro.retest_max) && resume_all_done(&c)) {
		/* a finished run: its verdict stands (unless its re-test
		 * of the suspects is still to come) */
		close_res = 1;
		rc = run_nothing_left(&c, &ro);
	} else if (!rc && !(rc = run_token(&c, &ro)) && !(rc = run_results_dir(&c, &ro))) {
		close_res = 1;
		rc = run_run(&c, &ro);
	}
	run_release(&c, &ro, close_res);
	return -rc;
}
