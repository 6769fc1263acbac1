/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The coordinator's insides, shared by its parts and no other file:
 * coord.c (the agents' connections, the event loop), coord-job.c (jobs)
 * and coord-phase.c (rounds, phases, progress).
 */
#ifndef FS_COORD_INT_H
#define FS_COORD_INT_H

#include "../probes/polar-judge.h"
#include "coord.h"

/* A member of a group job: rank i of the collective. */
struct cmember {
	int node;
	int started, done, exit;
	char *err;		/* its error, when it failed */
};

/* a job's key: a phase name (PLAN_NAME_MAX), its test, round and lane in full, then
 * the nodes' names, or their hash where those would not fit (coord_job_key) */
#define COORD_KEY_MAX 320

struct cjob {
	char key[COORD_KEY_MAX];
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
	int notrun;		/* not started: a node cannot use its transport (said once) */
	const char *retest_of;	/* a re-test (coord-retest.c): the key of the job it repeats */
	const char *retest_for, *retest_role;	/* a re-test: the suspect's id, its role */
	char size_opt[32];	/* a re-test: the size it was found at (size=, or the
				 * collectives' minbytes= and maxbytes=); "" the phase's */
	int load;		/* a lat job under load: 1 + the index of its load, which
				 * comes before it (0: none) */
	int load_for;		/* a load (a bw job): 1 + the index of the lat job it loads */
	uint64_t run_ns;	/* when its client was started (J_RUN) */
	double wrong;		/* a group: wrong elements in rank 0's records */
	char err[512];		/* a pair: the client's error, else the server's; a group: the
				 * first error of a rank other than 0 */
	char err0[512];		/* a group: rank 0's error */
	/* a job past its deadline (start + budget_s) that nothing (a record,
	 * a progress report, a listening) has come of for stall_s is hung
	 * (coord_poll, once what its agents sent is read); last: what came
	 * last, for that message */
	double budget_s, stall_s;
	uint64_t deadline_ns, grace_ns, start_ns, heard_ns;
	char last[240];
	/* the share of its work done, as its engine said (0: not said): the
	 * first report (frac0 at frac0_ns) and the last (frac at frac_ns) */
	double frac0, frac;
	uint64_t frac0_ns, frac_ns;
	double gbps;		/* the rate of its bw records (the fastest), 0: none */
	/* a polarization job (coord-polar.c) */
	int verdicts;		/* its judged records (each set's, the sweep's) */
	int failing;		/* the last of them is polarized, or without a verdict */
	struct polar_judgment *pj;	/* its sets, judged again with the design (for the sweep's) */
	int npj;
	char verdict[400];	/* the last verdict's line, cut short: the live warning */
	int counted;		/* counted in struct coord's jobs_running */
};

enum { J_IDLE, J_LISTEN, J_RUN, J_FIN };

/* coord.c */
/* Send msg (taken) to the agent of connection ci: 0, or -1 (it is gone,
 * or the send failed). */
int coord_send_to(struct coord *c, int ci, json_t *msg);
/* The agent of connection ci is gone (why): its node is missing and its
 * jobs fail. */
void coord_conn_gone(struct coord *c, int ci, const char *why);

/* coord-job.c */
/* The id of member of job j (see struct coord). */
long coord_job_id(const struct coord *c, const struct cjob *j, int member);
/* Free the jobs of the last round. */
void coord_jobs_clear(struct coord *c);
/* A job's key ("phase/test/rROUND/LANE/a>b", or ".../a" without b): its
 * name in records, messages and --resume. */
void coord_job_key(char *buf, size_t len, const struct plan_phase *ph, const char *test, int round,
	     struct plan_lane l, const char *a, const char *b);
/* full into buf (len at least PLAN_NAME_MAX + 40) as a job's key: as it is when it fits, else
 * its head and the hash of the whole ("...#0123456789abcdef"): one key per full key, and the
 * same in every run (--resume) */
void coord_key_set(char *buf, size_t len, const char *full);
/* Start a job: its server (a group: rank 0), which then listens.  A lat
 * job under load is started once its load has run PLAN_LOAD_SETTLE_S
 * (coord_run_jobs); a load that ends before its lat job fails that job. */
void coord_job_start(struct coord *c, struct cjob *j);
/* A job is over: failed when why is given (an error record), else as its
 * members reported; what still runs of it is cancelled. */
void coord_job_finish(struct coord *c, struct cjob *j, const char *why);
/* Fail every unfinished job that has node (missing: why). */
void coord_fail_jobs_of(struct coord *c, int node, const char *why);
/* A message from the registered agent of connection ci. */
void coord_on_agent_msg(struct coord *c, int ci, json_t *m);
/* Job j is hung at now (see struct cjob), by what has been read of it */
int coord_job_stalled(const struct cjob *j, uint64_t now);
/* Stop job j if it is hung at now: 1 stopped, else 0. */
int coord_job_hung(struct coord *c, struct cjob *j, uint64_t now);

/* coord-polar.c */
/* A polarization record of j, stamped, before it is written: judged again
 * with the plan's design (c->design, when there is one: the probe had
 * none), counted, its line kept. */
void coord_polar_record(struct coord *c, struct cjob *j, json_t *rec);
/* Did j's client fail only by its verdict (exit 1, polarized or no verdict,
 * with the records that say so)?  Then j did not fail: the records and the
 * run's summary carry the verdict.  Says it, once. */
int coord_polar_verdict_exit(struct coord *c, struct cjob *j);

/* coord-phase.c */
/* The progress line (final: 1 the round is done, 2 it was stopped); 0:
 * on a terminal only, at most ten times a second. */
void coord_progress(struct coord *c, int final);
/* What the run learns of its time from job j, finished now without a
 * failure: a job's set-up (coord->cost: what it took beyond its engine's
 * time at the rate of its own records); from a record of it, its lane's
 * speed (and its own rate, j->gbps). */
void coord_learn_job(struct coord *c, const struct cjob *j, uint64_t now);
void coord_learn_record(struct coord *c, struct cjob *j, json_t *rec);
/* The seconds job j's engine takes, by the model at what the run knows */
double coord_job_engine_s(const struct coord *c, const struct cjob *j);
/* Run the jobs of c->jobs until all are done, at most parallel (0: no
 * limit) at once; 0, or -exit code (interrupted, a write failed). */
int coord_run_jobs(struct coord *c, int parallel);
/* A test build's hold: path (fs_test_env of a hook; NULL or "": none)
 * created, the agents served until it is removed; what: what is held, for
 * the line that says so.  0 or -exit code. */
int coord_test_hold(struct coord *c, const char *path, const char *what);

#endif
