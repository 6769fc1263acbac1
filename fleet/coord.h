/* SPDX-License-Identifier: BSD-2-Clause */
/* The coordinator's state, shared by coord*.c and launch.c. */
#ifndef FS_COORD_H
#define FS_COORD_H

#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "../core/wire.h"
#include "../records/store.h"
#include "../topology/intent.h"
#include "fleet.h"
#include "plan.h"
#include "results.h"

struct conn {
	int fd;
	int node;		/* plan node, -1 until registered */
	int want_node;		/* local/ssh: the node this connection was made for */
	int authed, gone;
	char nonce[AUTH_NONCE_HEX + 1];
	int64_t join_ms;	/* its challenge's (coord.c's challenge_of makes it again) */
	char peer[64];		/* address of a TCP agent, for messages and endpoints */
	struct wire_rd rd;	/* (rd.mac: the agent's messages are checked once it joined) */
	struct wire_mac tx;	/* ours to it, MAC'd once it joined */
	uint64_t opened_ns, last_ns;	/* made; the last message from it */
	uint64_t sent_ns;	/* the last message to it (a keepalive ping goes after a heartbeat of none) */
};

/* What a descriptor is to the event loop (struct coord's fdmap): a
 * connection's index (>= 0), the listener, or an agent's standard error */
#define COORD_FD_NONE INT_MIN
#define COORD_FD_LISTEN (-1)
#define COORD_FD_AERR(node) (-2 - (node))

struct cjob;

/* A phase's lanes and the nodes on each (a phase of jobs a node: one
 * lane, every node), what its cost is computed from. */
struct coord_lanes {
	struct plan_lane lane[PLAN_MAX_LANES];
	int nodes[PLAN_MAX_LANES];
	int n;
};

/* The standard error of an agent the local or ssh launcher started: a pipe
 * the coordinator reads, passing every line on to its own standard error
 * and keeping the last one, so that the cause of an agent that ended
 * before joining (a namespace that is not there, ssh refused) goes into
 * the records, not only onto the terminal. */
#define LAUNCH_ERR_LAST 200	/* the last line kept: at most this many bytes, escaped */
struct agent_err {
	int fd;			/* the pipe's read end, -1 once closed */
	int long_line;		/* the line going on is longer than part: passed on in pieces */
	size_t len;
	char part[1024];	/* the line being read */
	char last[LAUNCH_ERR_LAST + 8];	/* the last line that was not blank, escaped ("" none) */
};

struct coord {
	struct plan plan;
	struct results res;
	const char *launcher;
	char *token;
	const char *token_file;
	int token_env;		/* the token came from $FABSCOPE_TOKEN */
	int readable_token;	/* --allow-readable-token (passed on to ssh agents) */
	int listen_fd;
	uint64_t accept_paused_ns;	/* no accept before this (out of descriptors: EMFILE); 0 none */
	int emfile_said;	/* running out of descriptors was said */
	long shed;		/* listener connections closed unregistered since it was last said */
	uint64_t shed_said_ns;	/* when that was last said */
	char shed_why[160];	/* why the last one was */
	char advertise[300];	/* HOST:PORT agents connect to */
	struct conn *conns;	/* live connections (gone ones are compacted away in coord_poll) */
	int nconns, conns_cap;
	int ngone;		/* connections gone and not compacted away yet */
	int njoined;		/* nodes whose agent joined and is connected */
	int npending;		/* local/ssh connections that have neither registered nor ended */
	int epfd;		/* the event loop's epoll set, -1 before the first descriptor */
	int *fdmap;		/* fd -> COORD_FD_* or a connection index */
	size_t fdmap_alloc;
	uint64_t last_tick_ns;	/* the last walk over connections and jobs (coord_poll) */
	/* listener connections that have neither registered nor ended (anyone's:
	 * bounded, coord.c), and an index below which there is none */
	int nunreg, unreg_from;
	int *node_conn;		/* node -> conn index, -1 */
	char **node_why;	/* node -> why it is missing (NULL: fine) */
	char **node_noverbs;	/* node -> why its agent cannot use verbs, from its
				 * registration (NULL: it can): no verbs job runs there */
	int nnodes_cap;
	int expected;		/* agents the launcher starts */
	pid_t *pids;		/* launcher processes (0: reaped) */
	int npids;
	size_t pids_alloc;
	uint64_t launch_turn_ns, launch_said_ns;	/* (launch.c: the loop's turns while starting agents) */
	int spawner_fd;		/* launch.c's spawner of local and ssh agents while they start, else -1 */
	pid_t spawner_pid;
	struct agent_err *aerr;	/* local and ssh: by node, else NULL */
	int naerr;
	char self[4096];	/* this binary */
	const char *agent_cmd, *ssh_cmd, *launcher_args, *listen, *advertise_host;
	double agent_timeout, join_timeout;
	/* the join ends then: --join-timeout from when the launcher started
	 * (each challenge says how long is left, so that agents wait for it) */
	uint64_t join_deadline_ns;
	json_t *labels;
	const char *run_id;
	int tty, verbose;
	int failed_jobs, missing;
	int notrun_jobs;	/* of failed_jobs: not run, a node could not use the transport */
	json_t *causes;		/* the failures said: {cause: {n, job}} (coord_job_finish) */
	struct cjob *jobs;
	int njobs;
	size_t jobs_alloc;
	/* of c->jobs: those running that count against parallel=, the first
	 * that may not have started (coord_run_jobs starts them in order) */
	int jobs_running, first_idle;
	unsigned jobs_gen;	/* a new set of jobs (coord_jobs_clear) */
	/* the jobs of each node (coord_fail_jobs_of): node n's are
	 * nj_list[nj_first[n] .. nj_first[n + 1]), for the set of jobs
	 * nj_gen, nj_njobs and nj_nnodes say; built when one is needed */
	int *nj_first, *nj_list;
	unsigned nj_gen;
	int nj_njobs, nj_nnodes;
	/* job ids of a round: id_base + id_stride * job + member (member:
	 * 0 the server, 1 the client of a pair; the rank in a group) */
	long id_base, id_stride;
	uint64_t last_ping_ns;
	/* progress */
	const char *phase_name;
	int phase_i, nphases, round_i, nrounds;
	int jobs_done;		/* of c->jobs, finished (coord_job_finish) */
	uint64_t run_start_ns;
	/* time (coord-phase.c): the cost model (plan.h) as the run learns it
	 * (its lanes' speeds from its bw records: the slowest node's fastest
	 * pair, node_gbps; a job's set-up from its jobs'
	 * times: what the slowest job of a round cost beyond its engine, or of
	 * a round run in waves the mean, round_extra* while the round runs,
	 * then setup_sum over setup_n rounds); each phase's lanes, and its
	 * estimate at the start; the ETA: of the round running (started at
	 * round_ns), and of all after it, at the pace of the phase so far
	 * (ph_act_done over what the model says now of its rounds done, less
	 * ph_skipped_s: those that had no job to run) */
	struct plan_cost cost;
	double setup_sum, round_extra, round_extra_max;
	int setup_n, round_extra_n;
	double *node_gbps[FS_MAX_RAILS * FS_MAX_PLANES];	/* by lane, by node: its pairs' fastest */
	struct coord_lanes *lanes;	/* by phase (NULL: not yet known) */
	double *est_phase;
	double eta_round_s, eta_after_s, ph_act_done, ph_skipped_s;
	uint64_t round_ns, shown_ns;
	/* the records, read once: by the re-test of the suspects, then on from
	 * there by the analysis at the end */
	struct rstore recs;
	const struct topo *design;	/* [global] topology, read (NULL: none): polarization verdicts */
};

/* launch.c: start the agents of c->launcher (connections for local and
 * ssh go into c->conns); 0 or -exit code. */
int launch_agents(struct coord *c);
/* Wait for (and if need be stop) the launcher processes, at the end. */
void launch_reap(struct coord *c, int force);
/* Have all the launcher processes exited (reaped here)?  *status: the first
 * non-zero exit status seen (128 + signal), left as it was when none. */
int launch_exited(struct coord *c, int *status);
/* Read what the agent of node wrote on its standard error (aerr): pass
 * its lines on, keep the last. */
void launch_err_read(struct coord *c, int node);
/* The last line the agent of node wrote on its standard error, once what
 * is there is read (escaped, bounded), or NULL. */
const char *launch_err_last(struct coord *c, int node);
/* The program a launcher runs ("srun", "mpirun", "ssh"), for messages. */
const char *launch_program(const struct coord *c);
/* Is NAME a launcher? */
int launch_known(const char *name);
/* Does the launcher's agent connect in over TCP? */
int launch_uses_listener(const char *name);
/* A connection object for fd (authentication starts at once: its
 * challenge goes out); its index, or -1 (closed, said). */
int coord_add_conn(struct coord *c, int fd, int want_node, const char *peer);
/* Watch fd in the event loop as what (a connection's index, COORD_FD_LISTEN,
 * COORD_FD_AERR(node)): 0 or -errno. */
int coord_watch(struct coord *c, int fd, int what);
/* Stop watching fd, and close it. */
void coord_unwatch_close(struct coord *c, int fd);
/* One turn of the event loop, waiting up to timeout_ms: new connections,
 * messages, and at most every 100 ms silences, pings, the jobs' deadlines.
 * 0, or -exit code: -FS_EXIT_INTERRUPTED once the run is stopped, that of
 * a record that could not be written. */
int coord_poll(struct coord *c, int timeout_ms);

/* coord-check.c: once the agents have joined, say once per cause which
 * nodes cannot use verbs (their agents said why when they registered) and
 * which verbs phases leave them out; nothing when no phase uses verbs. */
void coord_check_transports(struct coord *c);
/* Does phase ph move its data over verbs (its transport; not ping or
 * topology)? */
int coord_phase_verbs(const struct plan_phase *ph);
/* coord-job.c: after the run, one line per failure said more than once:
 * how many more jobs failed so (each has its error record). */
void coord_say_repeats(struct coord *c);

/* coord.c, coord-check.c, coord-phase.c, coord-job.c */
/* c->node_conn, c->node_why and c->node_noverbs for at least n nodes (grown
 * geometrically: no pointer into them is kept across a join): 0,
 * or -FS_EXIT_ENV (said). */
int coord_ensure_nodes(struct coord *c, int n);
/* Every phase's options, as its tests will see them; targets when the
 * nodes' names are known.  0 or -exit code, with one line said. */
int coord_check_phases(struct coord *c);
/* Every phase's target is a node of the plan (joined: of the agents that
 * joined, which name themselves when there is no hostfile; with agents
 * missing, a phase whose target is not among them is skipped, said). */
int coord_check_targets(struct coord *c, int joined);
int coord_listen(struct coord *c);
int coord_join(struct coord *c);
/* run.json's "planned": each phase of the plan (name, kind, tests) with the
 * jobs it holds on the nodes that joined, those done before a --resume
 * too, and whether it is skipped (a target missing, too few nodes): what
 * the report holds jobs.done against.  0, or -FS_EXIT_ENV said. */
int coord_planned(struct coord *c);
int coord_run_phases(struct coord *c);
/* coord-retest.c: measure the suspects of the records so far again (at
 * most max of them, within time_s seconds, one at a time, through the
 * joined agents); what it did goes into info (run.json's retest: max,
 * time_s, retested, seconds, skipped {ID: WHY}).  0 or -exit code
 * (interrupted, a write failed). */
int coord_retest(struct coord *c, int max, double time_s, json_t *info);
/* How many jobs of the plan have not finished (--resume: none in jobs.done),
 * on the nodes and endpoints of c->plan as they are; -1 when out of memory
 * (said). */
long coord_jobs_left(struct coord *c);
json_t *coord_nodes_json(struct coord *c);
int coord_lane_nodes(const struct coord *c, struct plan_lane l, int *out);
/* coord-phase.c: phase pi's lanes into *cl (0, or -FS_EXIT_ENV said); the
 * seconds its rounds take from test t0's round r0 on at c->cost. */
int coord_phase_lanes(const struct coord *c, int pi, struct coord_lanes *cl);
double coord_phase_est_s(const struct coord *c, int pi, const struct coord_lanes *cl, int t0, int r0);

#endif
