/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * `fabscope agent`: the per-node agent of `fabscope run`.
 *
 * It connects to (or is handed a connection from) the coordinator, proves
 * the shared token, says who it is, and then runs jobs.  Each job is the
 * very engine of `fabscope bw`, `lat`, `probe`, or one rank of
 * `fabscope allreduce` or `alltoall`, run in a child process
 * (fork, no exec) with its records going to a pipe as JSON lines
 * (out_set_sink_fd), which the agent forwards as they come.  A child is its own
 * process group, so a cancelled or overdue job is killed whole, and a job
 * that crashes takes nothing else with it.  Heartbeats go out every second
 * while jobs run; a coordinator silent for too long ends the agent (exit 4).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/builtin.h"
#include "../core/clock.h"
#include "../core/error.h"
#include "../core/net.h"
#include "../core/options.h"
#include "../core/output.h"
#include "../core/units.h"
#include "../core/wire.h"
#include "../collectives/coll.h"
#include "../transport/transport.h"
#include "fleet.h"
#include "plan.h"

#define AGENT_MAX_JOBS 512
#define AGENT_LINE_MAX (1u << 20)

struct job {
	long id;
	pid_t pid;
	int out_fd, err_fd;
	char *line;		/* partial JSON line from out_fd */
	size_t len, cap;
	char err[512];		/* last line on stderr */
	char errpart[512];
	size_t errlen;
	int status, reaped;
	/* stopped when past its deadline and silent (no line: no record, no
	 * progress) for stall_ns, as the coordinator judges it (fleet.h) */
	uint64_t deadline_ns, stall_ns, heard_ns, kill_ns;
};

struct agent {
	int rfd, wfd;
	const char *name;
	char *token;
	struct job *jobs[AGENT_MAX_JOBS];
	int njobs;
	int heartbeat_ms, silence_ms;
	uint64_t last_heard_ns, last_sent_ns;
	int timeout_ms;
	struct wire_mac tx, rx;	/* the session's MACs, from the welcome on */
};

static const char *const agent_usage[] = {
	"fabscope agent --connect HOST:PORT [options]",
	"fabscope agent --stdio [options]",
	"fabscope agent --fd N [options]",
	NULL,
};

static int send_msg(struct agent *a, json_t *msg)
{
	int rc = wire_send_mac(a->wfd, &a->tx, msg, a->timeout_ms);

	json_decref(msg);
	if (rc)
		return fs_err_peer("lost the coordinator: %s", wire_strerror(rc));
	a->last_sent_ns = clock_ns();
	return 0;
}

/* ---- jobs ---- */

static void job_free(struct job *j)
{
	if (j->out_fd >= 0)
		close(j->out_fd);
	if (j->err_fd >= 0)
		close(j->err_fd);
	free(j->line);
	free(j);
}

static const char *json_str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* A topology job's argv: topo show --records, with the plan's keys of it */
static const char **topo_argv(json_t *m, const char *node, char *why, size_t len)
{
	json_t *opts = json_object_get(m, "opts"), *v;
	const char *key, **argv = calloc(8 + json_object_size(opts), sizeof(*argv));
	char buf[512];
	int argc = 0;

	if (!argv) {
		snprintf(why, len, "out of memory");
		return NULL;
	}
	argv[argc++] = strdup("topo");
	argv[argc++] = strdup("show");
	argv[argc++] = strdup("--records");
	snprintf(buf, sizeof(buf), "--node=%s", json_str(m, "node") ? json_str(m, "node") : node);
	argv[argc++] = strdup(buf);
	json_object_foreach(opts, key, v) {
		if (!plan_engine_key(key, NULL) || !json_is_string(v)) {
			snprintf(why, len, "option '%s' is not one a plan may set", key);
			for (argc = 0; argv[argc]; argc++)
				free((void *)argv[argc]);
			free(argv);
			return NULL;
		}
		if (!plan_key_for(key, "topology"))
			continue;
		snprintf(buf, sizeof(buf), "--%s=%s", strcmp(key, "lldp-listen") ? key : "listen",
			 json_string_value(v));
		argv[argc++] = strdup(buf);
	}
	return argv;
}

/* The engine's argv for a job message; NULL (and why) when it is bad. */
static const char **job_argv(json_t *m, const char *node, char *why, size_t len)
{
	const char *test = json_str(m, "test"), *role = json_str(m, "role");
	const char *bind = json_str(m, "bind"), *host = json_str(m, "host");
	json_t *opts = json_object_get(m, "opts"), *v;
	const char *key, **argv;
	int argc = 0, server, coll, many = 0;
	char buf[512];

	if (!test || (strcmp(test, "bw") && strcmp(test, "lat") && strcmp(test, "polarization") &&
		      strcmp(test, "pfc") && strcmp(test, "allreduce") && strcmp(test, "alltoall") &&
		      strcmp(test, "topology"))) {
		snprintf(why, len, "unknown test '%s'", test ? test : "(none)");
		return NULL;
	}
	if (!strcmp(test, "topology"))	/* this node's own ports: no peer */
		return topo_argv(m, node, why, len);
	if (!role || (strcmp(role, "server") && strcmp(role, "client"))) {
		snprintf(why, len, "unknown role '%s'", role ? role : "(none)");
		return NULL;
	}
	server = !strcmp(role, "server");
	if (!server && (!host || !json_is_integer(json_object_get(m, "port")))) {
		snprintf(why, len, "a client job needs host and port");
		return NULL;
	}
	coll = !strcmp(test, "allreduce") || !strcmp(test, "alltoall");
	if (coll) {	/* a rank: rank 0 is the server, the others its clients */
		json_int_t rank = json_integer_value(json_object_get(m, "rank"));
		json_int_t nranks = json_integer_value(json_object_get(m, "nranks"));

		if (!json_is_integer(json_object_get(m, "rank")) || !json_is_integer(json_object_get(m, "nranks")) ||
		    nranks < 2 || nranks > COLL_MAX_RANKS || rank < 0 || rank >= nranks || (rank == 0) != server) {
			snprintf(why, len, "a %s job needs rank and nranks (rank 0 the server, 2 to %d ranks)",
				 test, COLL_MAX_RANKS);
			return NULL;
		}
	}
	/* room for every option and every label, and the NULL after them */
	argv = calloc(64 + json_object_size(opts) + json_object_size(json_object_get(m, "labels")),
		      sizeof(*argv));
	if (!strcmp(test, "polarization") && server) {
		test = "bw";	/* the probe's flows go to a bw server */
		v = json_object_get(opts, "sweep");	/* several sets: one client each */
		many = json_is_string(v) && atoi(json_string_value(v)) > 1;
	}
	if (!strcmp(test, "pfc") && server && json_is_false(json_object_get(m, "sample")))
		test = "bw";	/* the target's port is sampled by its first server */
	if (!strcmp(test, "polarization") || !strcmp(test, "pfc")) {
		argv[argc++] = strdup("probe");
		argv[argc++] = strdup(test);
	} else {
		argv[argc++] = strdup(test);
	}
	if (coll) {
		json_t *rail = json_object_get(m, "rail");

		snprintf(buf, sizeof(buf), "--rank=%lld",
			 (long long)json_integer_value(json_object_get(m, "rank")));
		argv[argc++] = strdup(buf);
		snprintf(buf, sizeof(buf), "--nranks=%lld",
			 (long long)json_integer_value(json_object_get(m, "nranks")));
		argv[argc++] = strdup(buf);
		if (server)	/* any free port, said to the coordinator (listening) */
			snprintf(buf, sizeof(buf), "--port=0");
		else	/* an IPv6 root in brackets: --root splits at the last colon */
			snprintf(buf, sizeof(buf), strchr(host, ':') ? "--root=[%s]:%lld" : "--root=%s:%lld", host,
				 (long long)json_integer_value(json_object_get(m, "port")));
		argv[argc++] = strdup(buf);
		if (json_is_integer(rail) && json_integer_value(rail) >= 0) {
			snprintf(buf, sizeof(buf), "--rail=%lld", (long long)json_integer_value(rail));
			argv[argc++] = strdup(buf);
		}
	} else if (server && !strcmp(test, "pfc")) {
		argv[argc++] = strdup("--serve");
		argv[argc++] = strdup("--port=0");
	} else if (server) {
		argv[argc++] = strdup("--server");
		if (!many)	/* (else the coordinator ends it when its client is done) */
			argv[argc++] = strdup("--once");
		argv[argc++] = strdup("--port=0");
	} else {
		argv[argc++] = strdup(host);
		snprintf(buf, sizeof(buf), "--port=%lld",
			 (long long)json_integer_value(json_object_get(m, "port")));
		argv[argc++] = strdup(buf);
	}
	if (bind) {
		snprintf(buf, sizeof(buf), "--bind=%s", bind);
		argv[argc++] = strdup(buf);
	}
	snprintf(buf, sizeof(buf), "--node=%s", json_str(m, "node") ? json_str(m, "node") : node);
	argv[argc++] = strdup(buf);
	json_object_foreach(opts, key, v) {
		int is_bool;

		if (!plan_engine_key(key, &is_bool) || !json_is_string(v)) {
			snprintf(why, len, "option '%s' is not one a plan may set", key);
			goto bad;
		}
		if (!plan_key_for(key, test))
			continue;	/* an option of the other side's engine */
		if (is_bool) {
			const char *s = json_string_value(v);

			if (plan_bool(s) == 0)	/* (the coordinator's plan refused neither) */
				continue;
			snprintf(buf, sizeof(buf), "--%s", key);
		} else {
			snprintf(buf, sizeof(buf), "--%s=%s", key, json_string_value(v));
		}
		argv[argc++] = strdup(buf);
	}
	{
		json_t *labels = json_object_get(m, "labels"), *lv;

		json_object_foreach(labels, key, lv) {
			if (!json_is_string(lv))
				continue;
			snprintf(buf, sizeof(buf), "--label=%s=%s", key, json_string_value(lv));
			argv[argc++] = strdup(buf);
		}
	}
	return argv;
bad:
	for (argc = 0; argv[argc]; argc++)
		free((void *)argv[argc]);
	free(argv);
	return NULL;
}

/* The engines a job runs, by argv[0]. */
static const struct {
	const char *name, *progname;
	int (*fn)(int argc, const char **argv);
} engines[] = {
	{ "bw", "fabscope bw", cmd_bw },
	{ "lat", "fabscope lat", cmd_lat },
	{ "probe", "fabscope probe", cmd_probe },
	{ "allreduce", "fabscope allreduce", cmd_allreduce },
	{ "alltoall", "fabscope alltoall", cmd_alltoall },
	{ "topo", "fabscope topo", cmd_topo },
};

/* In the job's process: its engine, under the engine's own name. */
static int job_run(int argc, const char **argv)
{
	size_t i;

	for (i = 0; i < sizeof(engines) / sizeof(engines[0]); i++)
		if (!strcmp(engines[i].name, argv[0])) {
			fs_set_progname(engines[i].progname);
			return engines[i].fn(argc, argv);
		}
	return -fs_err_usage("no engine '%s'", argv[0]);
}

/* Close every descriptor from lowest up (the job keeps 0-3 only). */
static void close_from(int lowest)
{
	long max = sysconf(_SC_OPEN_MAX);
	int fd;

	if (max < 0 || max > 65536)
		max = 65536;
	for (fd = lowest; fd < max; fd++)
		close(fd);
}

static int job_start(struct agent *a, json_t *m)
{
	json_t *idj = json_object_get(m, "id");
	long id = (long)json_integer_value(idj);
	char why[256] = "";
	const char **argv;
	int out[2], err[2], i;
	struct job *j;
	pid_t pid, parent;

	if (!json_is_integer(idj))
		return send_msg(a, json_pack("{ss,ss}", "type", "error", "message", "job without an id"));
	if (a->njobs >= AGENT_MAX_JOBS)
		return send_msg(a, json_pack("{ss,sI,si,ss}", "type", "done", "id", (json_int_t)id, "exit",
					     FS_EXIT_ENV, "error", "too many jobs at once on this agent"));
	argv = job_argv(m, a->name, why, sizeof(why));
	if (!argv)
		return send_msg(a, json_pack("{ss,sI,si,ss}", "type", "done", "id", (json_int_t)id, "exit",
					     FS_EXIT_USAGE, "error", why));
	if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
		snprintf(why, sizeof(why), "pipe: %s", strerror(errno));
		goto fail;
	}
	fflush(NULL);
	parent = getpid();
	pid = fork();
	if (pid < 0) {
		snprintf(why, sizeof(why), "fork: %s", strerror(errno));
		close(out[0]);
		close(out[1]);
		close(err[0]);
		close(err[1]);
		goto fail;
	}
	if (!pid) {	/* the job */
		int devnull = open("/dev/null", O_RDWR), argc = 0, rc;

		/* the job dies with its agent, also when the agent is killed
		 * with SIGKILL and cannot stop it (a --once server would wait
		 * for its client for ever) */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(FS_EXIT_PEER);
		setpgid(0, 0);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		dup2(devnull, 0);
		dup2(devnull, 1);
		dup2(err[1], 2);
		dup2(out[1], 3);
		close_from(4);
		out_set_sink_fd(3);
		while (argv[argc])
			argc++;
		rc = job_run(argc, argv);
		fflush(NULL);
		_exit(rc);
	}
	/* the group exists before anything can signal it (the child may not have run yet) */
	setpgid(pid, pid);
	close(out[1]);
	close(err[1]);
	for (i = 0; argv[i]; i++)
		free((void *)argv[i]);
	free(argv);
	j = calloc(1, sizeof(*j));
	j->id = id;
	j->pid = pid;
	j->out_fd = out[0];
	j->err_fd = err[0];
	net_set_nonblock(j->out_fd, 1);
	net_set_nonblock(j->err_fd, 1);
	{
		json_int_t ms = json_integer_value(json_object_get(m, "deadline_ms"));
		json_int_t st = json_integer_value(json_object_get(m, "stall_ms"));

		j->heard_ns = clock_ns();
		j->deadline_ns = ms > 0 ? j->heard_ns + (uint64_t)ms * 1000000ull : 0;
		j->stall_ns = st > 0 && st < 86400000 ? (uint64_t)st * 1000000ull : 0;
	}
	a->jobs[a->njobs++] = j;
	fs_log(1, "job %ld: %s %s (pid %d)", id, json_str(m, "test"), json_str(m, "role"), (int)pid);
	return 0;
fail:
	for (i = 0; argv[i]; i++)
		free((void *)argv[i]);
	free(argv);
	return send_msg(a, json_pack("{ss,sI,si,ss}", "type", "done", "id", (json_int_t)id, "exit",
				     FS_EXIT_ENV, "error", why));
}

static void job_kill(struct job *j, const char *why)
{
	if (j->reaped || j->kill_ns)
		return;
	snprintf(j->err, sizeof(j->err), "%s", why);
	kill(-j->pid, SIGTERM);
	j->kill_ns = clock_ns() + 2000000000ull;	/* then SIGKILL */
}

/* One JSON line from a job: {"listening": port}, {"progress": {...}}
 * (core/output.h) or a record. */
static int job_line(struct agent *a, struct job *j, char *line)
{
	json_t *o = json_loads(line, JSON_REJECT_DUPLICATES, NULL), *port, *prog;

	if (!o || !json_is_object(o)) {
		json_decref(o);
		fs_warn("job %ld wrote a line that is not JSON; ignored", j->id);
		return 0;
	}
	j->heard_ns = clock_ns();
	port = json_object_get(o, "listening");
	prog = json_object_get(o, "progress");
	if ((port || prog) && json_object_size(o) == 1) {
		int rc = send_msg(a, json_pack("{ss,sI,sO}", "type", port ? "listening" : "progress", "id",
					       (json_int_t)j->id, port ? "port" : "progress", port ? port : prog));

		json_decref(o);
		return rc;
	}
	return send_msg(a, json_pack("{ss,sI,so}", "type", "record", "id", (json_int_t)j->id, "record", o));
}

/* Drain a job's pipes; returns -exit code on a lost coordinator. */
static int job_read(struct agent *a, struct job *j)
{
	char buf[65536];
	ssize_t n;
	int rc = 0;

	while (j->out_fd >= 0 && !rc) {
		n = read(j->out_fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
				close(j->out_fd);
				j->out_fd = -1;
			}
			break;
		}
		if (j->len + (size_t)n + 1 > j->cap) {
			size_t cap = (j->len + (size_t)n + 1) * 2;
			char *line;

			if (cap > AGENT_LINE_MAX + 65536) {
				job_kill(j, "the job wrote a record line over 1 MiB");
				j->len = 0;
				continue;
			}
			if (!(line = realloc(j->line, cap))) {
				fs_err_env("out of memory for the output of job %ld: it is stopped", j->id);
				job_kill(j, "out of memory for its output");
				j->len = 0;
				continue;
			}
			j->line = line;
			j->cap = cap;
		}
		memcpy(j->line + j->len, buf, (size_t)n);
		j->len += (size_t)n;
		for (;;) {
			char *nl = memchr(j->line, '\n', j->len);
			size_t used;

			if (!nl)
				break;
			*nl = 0;
			used = (size_t)(nl - j->line) + 1;
			rc = job_line(a, j, j->line);
			memmove(j->line, nl + 1, j->len - used);
			j->len -= used;
			if (rc)
				break;
		}
	}
	while (j->err_fd >= 0) {
		ssize_t i;

		n = read(j->err_fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
				close(j->err_fd);
				j->err_fd = -1;
			}
			break;
		}
		for (i = 0; i < n; i++) {
			if (buf[i] == '\n') {
				if (j->errlen) {
					j->errpart[j->errlen] = 0;
					if (!j->kill_ns)	/* a kill's reason stays */
						snprintf(j->err, sizeof(j->err), "%s", j->errpart);
					fs_log(1, "job %ld: %s", j->id, j->errpart);
				}
				j->errlen = 0;
			} else if (j->errlen < sizeof(j->errpart) - 1) {
				j->errpart[j->errlen++] = buf[i];
			}
		}
	}
	return rc;
}

/* Finished jobs (exited and drained) are reported and freed. */
static int jobs_reap(struct agent *a)
{
	int i, rc = 0;
	uint64_t now = clock_ns();

	for (i = 0; i < a->njobs && !rc; i++) {
		struct job *j = a->jobs[i];
		int st;

		if (!j->reaped && waitpid(j->pid, &st, WNOHANG) == j->pid) {
			j->reaped = 1;
			j->status = WIFEXITED(st) ? WEXITSTATUS(st) :
				    WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
			if (WIFSIGNALED(st) && !j->kill_ns)
				snprintf(j->err, sizeof(j->err), "the job died of signal %d", WTERMSIG(st));
		}
		if (!j->reaped) {
			if (j->deadline_ns && now > j->deadline_ns && now - j->heard_ns > j->stall_ns && !j->kill_ns)
				job_kill(j, j->stall_ns ? "the job ran past its deadline without progress and was stopped" :
					 "the job ran past its deadline and was stopped");
			else if (j->kill_ns && now > j->kill_ns)
				kill(-j->pid, SIGKILL);
			continue;
		}
		rc = job_read(a, j);	/* what is left in the pipes */
		if (j->out_fd >= 0 || j->err_fd >= 0) {
			/* a grandchild may hold them open: give up on them */
			if (j->out_fd >= 0)
				close(j->out_fd);
			if (j->err_fd >= 0)
				close(j->err_fd);
			j->out_fd = j->err_fd = -1;
		}
		if (!rc)
			rc = send_msg(a, json_pack("{ss,sI,si,ss}", "type", "done", "id", (json_int_t)j->id,
						   "exit", j->status, "error", j->status ? j->err : ""));
		fs_log(1, "job %ld: exit %d", j->id, j->status);
		job_free(j);
		a->jobs[i] = a->jobs[--a->njobs];
		i--;
	}
	return rc;
}

static void jobs_kill_all(struct agent *a)
{
	int i;

	for (i = 0; i < a->njobs; i++) {
		struct job *j = a->jobs[i];

		if (!j->reaped) {
			kill(-j->pid, SIGKILL);
			waitpid(j->pid, NULL, 0);
		}
		job_free(j);
	}
	a->njobs = 0;
}

/* ---- the coordinator's messages ---- */

static int handle(struct agent *a, json_t *m, int *bye)
{
	const char *type = json_str(m, "type");

	if (!type)
		return 0;
	if (!strcmp(type, "job"))
		return job_start(a, m);
	if (!strcmp(type, "ping"))
		return send_msg(a, json_pack("{ss,sO?,sO?}", "type", "pong", "t", json_object_get(m, "t"),
					     "id", json_object_get(m, "id")));
	if (!strcmp(type, "cancel")) {
		long id = (long)json_integer_value(json_object_get(m, "id"));
		int i;

		for (i = 0; i < a->njobs; i++)
			if (a->jobs[i]->id == id)
				job_kill(a->jobs[i], "cancelled by the coordinator");
		return 0;
	}
	if (!strcmp(type, "bye")) {
		*bye = 1;
		return 0;
	}
	if (!strcmp(type, "error")) {
		fs_warn("coordinator: %s", json_str(m, "message") ? json_str(m, "message") : "error");
		return 0;
	}
	fs_log(1, "ignoring a '%s' message from the coordinator", type);
	return 0;
}

/* An integer field of the welcome, within [lo, hi]; dflt when it is not one. */
static int clamp_ms(json_t *v, int dflt, json_int_t lo, json_int_t hi)
{
	json_int_t x;

	if (!json_is_integer(v))
		return dflt;
	x = json_integer_value(v);
	return (int)(x < lo ? lo : x > hi ? hi : x);
}

/* --rail K=IP or K/P=IP, added to eps as the registration carries it: 0,
 * or -exit code with one line said */
static int add_rail(const char *s, json_t *eps)
{
	const char *eq = strchr(s, '=');
	int rail, plane = 0, used = 0;

	if (!eq || !eq[1] ||
	    !((sscanf(s, "%d/%d%n", &rail, &plane, &used) == 2 && s + used == eq) ||
	      (sscanf(s, "%d%n", &rail, &used) == 1 && s + used == eq && !(plane = 0))) ||
	    !isdigit((unsigned char)s[0]))
		return fs_err_usage("--rail '%s': write K=IP or K/P=IP (rail K, plane P)", s);
	if (!fs_lane_ok(rail, plane) ||	/* (< 0: %d overflowed) */
	    (strchr(s, '/') && !isdigit((unsigned char)strchr(s, '/')[1])))
		return fs_err_usage("--rail '%s': rails are 0 to %d, planes 0 to %d", s, FS_MAX_RAILS - 1,
				    FS_MAX_PLANES - 1);
	if (!plan_ip_ok(eq + 1))
		return fs_err_usage("--rail '%s': '%s' is not an IP address (the NIC's on that rail)", s, eq + 1);
	json_array_append_new(eps, json_pack("{si,si,ss}", "rail", rail, "plane", plane, "ip", eq + 1));
	return 0;
}

/* The transports this host cannot open, {name: why}, for the register
 * message (fleet.h): the coordinator then runs none of their jobs here.
 * NULL when there is none: the register then has no unusable (absent:
 * none, as fleet.h says). */
static json_t *unusable_transports(void)
{
	char why[FLEET_WHY_MAX];

	if (!xport_usable("verbs", why, sizeof(why)))
		return NULL;
	return json_pack("{ss}", "verbs", why);
}

/* The coordinator's challenge, checked: 0 with *ch, its nonce in cnonce
 * and how long its join goes on in *join_ms; else -exit code, said (and,
 * for another version, said to the coordinator too) */
static int take_challenge(struct agent *a, json_t **ch, char cnonce[AUTH_NONCE_HEX + 1], int *join_ms)
{
	json_t *m = NULL;
	const char *proto, *cn;
	int rc, version;

	*ch = NULL;
	rc = wire_recv(a->rfd, &m, FLEET_MAX_MSG, a->timeout_ms);
	if (rc)
		return fs_err_peer("no challenge from the coordinator: %s", wire_strerror(rc));
	proto = json_str(m, "proto");
	version = (int)json_integer_value(json_object_get(m, "version"));
	cn = json_str(m, "nonce");
	if (!proto || strcmp(proto, FLEET_PROTO) || !cn || strlen(cn) != AUTH_NONCE_HEX) {
		json_decref(m);
		return fs_err_peer("the peer is not a fabscope coordinator (no '%s' challenge)", FLEET_PROTO);
	}
	memcpy(cnonce, cn, AUTH_NONCE_HEX + 1);
	/* how long the join goes on: the welcome may take that long (clamped
	 * to a day as a 64-bit value, so that a huge one cannot wrap) */
	*join_ms = clamp_ms(json_object_get(m, "join_ms"), 0, 0, 86400000);
	if (version != wire_version()) {
		char msg[256];
		json_t *e;

		snprintf(msg, sizeof(msg), "agent %s speaks fleet protocol %d, the coordinator %d: "
			 "run the same fabscope version everywhere", a->name, wire_version(), version);
		e = json_pack("{ss,ss}", "type", "error", "message", msg);

		wire_send(a->wfd, e, a->timeout_ms);
		json_decref(e);
		json_decref(m);
		return fs_err_env("%s", msg);
	}
	*ch = m;
	return 0;
}

/* The coordinator's answer hs[2] to our register hs[1] (hs[0] its
 * challenge): a welcome whose mac proves the token over all three starts
 * the session's MACs, and 0; else one line saying what came, -exit code */
static int take_answer(struct agent *a, json_t *const hs[3], const char *cnonce, const char *nonce)
{
	json_t *m = hs[2];
	const char *type = json_str(m, "type"), *why = json_str(m, "message");
	int proven = auth_mac_msgs_ok(a->token, "coordinator", nonce, cnonce, hs, 3, json_str(m, "mac"));
	uint8_t key[WIRE_MAC_LEN];

	if (!type || strcmp(type, "welcome")) {
		if (proven)
			return fs_err_env("the coordinator refused agent %s: %s", a->name, why ? why : "no reason given");
		return fs_err_env("agent %s was refused by a peer that did not prove the token over the handshake "
				  "(another token, or the handshake was changed on the way): %s", a->name,
				  why ? why : "no reason given");
	}
	/* from here on every message each way carries its MAC (the key is the
	 * token's and both nonces', whatever the welcome says) */
	auth_session_key(a->token, cnonce, nonce, key);
	wire_mac_start(&a->tx, key, 'a');
	wire_mac_start(&a->rx, key, 'c');
	memset(key, 0, sizeof(key));
	if (!proven) {	/* the real coordinator, if it is one, hears why its agent is gone */
		send_msg(a, json_pack("{ss,ss}", "type", "error", "message",
				      "refused the control channel: the welcome failed its MAC (changed on the way, "
				      "or not from a coordinator that holds the token)"));
		return fs_err_env("the coordinator's welcome failed its MAC over the handshake: it was changed on the "
				  "way, or the peer does not hold the token (check --token-file / FABSCOPE_TOKEN on "
				  "both sides)");
	}
	/* clamped as 64-bit values: a huge one must not wrap into a tiny one */
	a->heartbeat_ms = clamp_ms(json_object_get(m, "heartbeat_ms"), a->heartbeat_ms, 50, 60000);
	a->silence_ms = clamp_ms(json_object_get(m, "silence_ms"), a->silence_ms, 0, 86400000);
	if (a->silence_ms < 2 * a->heartbeat_ms)
		a->silence_ms = 2 * a->heartbeat_ms;
	fs_log(1, "joined as %s", a->name);
	return 0;
}

/* The handshake (fleet.h): the challenge, our register with its mac over
 * the challenge and itself, the coordinator's answer with its mac over all
 * three.  0, or -exit code said. */
static int handshake(struct agent *a, json_t *eps, const char *slot)
{
	char nonce[AUTH_NONCE_HEX + 1], mac[AUTH_NONCE_HEX + 1], host[256] = "";
	char cnonce[AUTH_NONCE_HEX + 1];
	json_t *hs[3] = { NULL, NULL, NULL };	/* challenge, register, answer */
	int rc, join_ms = 0, i;
	long long wait_ms;

	if ((rc = take_challenge(a, &hs[0], cnonce, &join_ms)))
		return rc;
	if (auth_nonce(nonce)) {
		rc = fs_err_env("no random numbers (getrandom failed)");
		goto out;
	}
	gethostname(host, sizeof(host) - 1);
	/* every field is in the body before the mac is made over it */
	hs[1] = json_pack("{ss,ss,si,ss,ss,ss,ss,si,ss?,sO,so*}", "type", "register", "proto", FLEET_PROTO,
			  "version", wire_version(), "tool_version", FABSCOPE_VERSION, "nonce", nonce,
			  "node", a->name, "host", host, "pid", (int)getpid(), "slot", slot, "endpoints", eps,
			  "unusable", unusable_transports());
	if (!hs[1] || auth_mac_msgs(a->token, "agent", cnonce, nonce, hs, 2, mac) ||
	    json_object_set_new(hs[1], "mac", json_string(mac))) {
		rc = fs_err_env("out of memory for the register");
		goto out;
	}
	if ((rc = send_msg(a, json_incref(hs[1]))))
		goto out;
	wait_ms = (long long)join_ms + a->timeout_ms;
	rc = wire_recv(a->rfd, &hs[2], FLEET_MAX_MSG, wait_ms > INT_MAX ? INT_MAX : (int)wait_ms);
	if (rc == -ETIMEDOUT)
		rc = fs_err_peer("no answer from the coordinator within %.1f s of registering (its join had %.1f s "
				 "left, and --timeout adds %.1f s): it is stuck or gone", wait_ms / 1e3, join_ms / 1e3,
				 a->timeout_ms / 1e3);
	else if (rc)
		rc = fs_err_peer("no answer from the coordinator after registering: %s", wire_strerror(rc));
	else
		rc = take_answer(a, hs, cnonce, nonce);
out:
	for (i = 0; i < 3; i++)
		json_decref(hs[i]);
	return rc;
}

/* How long the loop may sleep: 100 ms while jobs run (they are reaped and
 * their deadlines kept on the clock); idle, until the next heartbeat is
 * due or the coordinator's silence runs out, so that thousands of idle
 * agents on one host do not wake ten times a second each */
static int idle_wait_ms(const struct agent *a)
{
	uint64_t now = clock_ns(), hb = a->last_sent_ns + (uint64_t)a->heartbeat_ms * 1000000ull;
	uint64_t quiet = a->last_heard_ns + (uint64_t)a->silence_ms * 1000000ull + 1000000ull;
	uint64_t next = hb < quiet ? hb : quiet;

	if (a->njobs)
		return 100;
	return next <= now ? 0 : (int)((next - now + 999999) / 1000000);
}

static int agent_loop(struct agent *a)
{
	struct wire_rd rd;
	int rc = 0, bye = 0;

	memset(&rd, 0, sizeof(rd));
	rd.mac = a->rx;		/* what the coordinator sends is checked */
	a->last_heard_ns = a->last_sent_ns = clock_ns();
	while (!rc && !bye) {
		struct pollfd pfd[1 + 2 * AGENT_MAX_JOBS];
		int n = 0, i;
		uint64_t now;

		pfd[n].fd = a->rfd;
		pfd[n++].events = POLLIN;
		for (i = 0; i < a->njobs; i++) {
			pfd[n].fd = a->jobs[i]->out_fd;
			pfd[n++].events = POLLIN;
			pfd[n].fd = a->jobs[i]->err_fd;
			pfd[n++].events = POLLIN;
		}
		if (poll(pfd, (nfds_t)n, idle_wait_ms(a)) < 0 && errno != EINTR) {
			rc = fs_err_env("poll: %s", strerror(errno));
			break;
		}
		if (net_stop) {
			rc = -FS_EXIT_INTERRUPTED;
			break;
		}
		if (pfd[0].revents) {
			for (;;) {
				json_t *m;
				int r = wire_read_some(a->rfd, &rd, &m, FLEET_MAX_MSG);

				if (r == 0)
					break;
				if (r == -EBADMSG) {	/* refuse the channel, and say why to the real coordinator */
					send_msg(a, json_pack("{ss,ss}", "type", "error", "message",
							      "refused the control channel: a message from the coordinator failed "
							      "its MAC (tampered with on the way)"));
					rc = fs_err_peer("refused the control channel: a message from the coordinator failed its "
							 "MAC (changed, injected, replayed, reordered or dropped on the way)");
					break;
				}
				if (r < 0) {
					rc = r == -ECONNRESET ?
					     fs_err_peer("the coordinator closed the connection") :
					     fs_err_peer("lost the coordinator: %s", wire_strerror(r));
					break;
				}
				a->last_heard_ns = clock_ns();
				rc = handle(a, m, &bye);
				json_decref(m);
				if (rc || bye)
					break;
			}
		}
		for (i = 0; i < a->njobs && !rc; i++)
			rc = job_read(a, a->jobs[i]);
		if (!rc)
			rc = jobs_reap(a);
		now = clock_ns();
		if (!rc && now - a->last_sent_ns >= (uint64_t)a->heartbeat_ms * 1000000ull)
			rc = send_msg(a, json_pack("{ss,si}", "type", "heartbeat", "jobs", a->njobs));
		if (!rc && now - a->last_heard_ns > (uint64_t)a->silence_ms * 1000000ull)
			rc = fs_err_peer("the coordinator has been silent for %.0f s: giving up",
					 a->silence_ms / 1000.0);
	}
	wire_rd_release(&rd);
	jobs_kill_all(a);
	if (bye)
		fs_log(1, "the coordinator said bye");
	return rc;
}

/* "host:port" or "[v6]:port" */
static int split_hostport(const char *s, char *host, size_t len, int *port)
{
	const char *colon = strrchr(s, ':');
	char *end;
	long p;

	if (!colon || colon == s)
		return -1;
	p = strtol(colon + 1, &end, 10);
	if (*end || p < 1 || p > 65535)
		return -1;
	if (s[0] == '[' && colon[-1] == ']')
		snprintf(host, len, "%.*s", (int)(colon - s - 2), s + 1);
	else
		snprintf(host, len, "%.*s", (int)(colon - s), s);
	*port = (int)p;
	return 0;
}

/* The node's name: --name, $FABSCOPE_NODE, the launcher's idea, the host name. */
static const char *default_name(void)
{
	static char buf[300];
	char host[256] = "";
	const char *e;

	if ((e = getenv("FABSCOPE_NODE")) && *e)
		return e;
	gethostname(host, sizeof(host) - 1);
	if ((e = getenv("SLURM_LOCALID")) && (getenv("SLURM_NTASKS_PER_NODE") || getenv("SLURM_TASKS_PER_NODE"))) {
		const char *tpn = getenv("SLURM_TASKS_PER_NODE");

		if (tpn && strcmp(tpn, "1")) {	/* more than one agent per node */
			snprintf(buf, sizeof(buf), "%s:%s", getenv("SLURMD_NODENAME") ? getenv("SLURMD_NODENAME") : host, e);
			return buf;
		}
	}
	if ((e = getenv("OMPI_COMM_WORLD_LOCAL_SIZE")) && strcmp(e, "1") &&
	    getenv("OMPI_COMM_WORLD_LOCAL_RANK")) {
		snprintf(buf, sizeof(buf), "%s:%s", host, getenv("OMPI_COMM_WORLD_LOCAL_RANK"));
		return buf;
	}
	snprintf(buf, sizeof(buf), "%s", host);
	return buf;
}

int cmd_agent(int argc, const char **argv)
{
	const char *connect_to = NULL, *name = NULL, *token_file = NULL;
	int fd = -1, stdio_mode = 0, token_stdin = 0, readable_token = 0, verbose = 0, nargs, rc, i;
	double timeout_s = 10;
	struct opt_list rails = { 0 };
	json_t *eps = NULL;	/* --rail's, for the registration */
	struct agent a = { .rfd = -1, .wfd = -1, .heartbeat_ms = FLEET_HEARTBEAT_MS,
			   .silence_ms = FLEET_SILENCE_MS };
	const char *slot;
	struct opt tab[] = {
		OPT_GROUP("Connection (one of)"),
		OPT_STRING(0, "connect", &connect_to, "HOST:PORT", "connect to the coordinator (launchers slurm, mpi, external)"),
		OPT_BOOL(0, "stdio", &stdio_mode, "speak the protocol on stdin/stdout (launcher ssh)"),
		OPT_INT(0, "fd", &fd, "N", "speak the protocol on an inherited socket (launcher local)", 0, 1 << 20),
		OPT_GROUP("Identity"),
		OPT_STRING(0, "name", &name, "NAME", "this node's name (default: $FABSCOPE_NODE, else the host name, with the local rank under srun/mpirun when there are several per host)"),
		OPT_LIST(0, "rail", &rails, "K=IP", "endpoint of rail K (K/P=IP: rail K, plane P) when the hostfile does not give it (repeatable)"),
		OPT_FILE(0, "token-file", &token_file, "FILE", "the shared secret (default: $FABSCOPE_TOKEN)"),
		OPT_BOOL(0, "allow-readable-token", &readable_token, "accept a --token-file that others can read (a warning instead of exit 3)"),
		OPT_BOOL(0, "token-stdin", &token_stdin, "read the secret as the first line of the control channel (--stdio or --fd: what the ssh and local launchers do, so that it is in no argument list or environment)"),
		OPT_SECONDS(0, "timeout", &timeout_s, "SECONDS", "give up on a silent coordinator while joining: on its challenge, and on its welcome beyond the time its join allows (default 10)"),
		OPT_VERBOSE(&verbose),
		OPT_END(),
	};
	static const char about[] =
		"The per-node agent of 'fabscope run'.  Launchers start it; it can also be started by\n"
		"hand or by a DaemonSet ('--launcher external' on the coordinator).  It proves the shared\n"
		"token, reports its endpoints, runs the engines the coordinator asks for (bw, lat, the\n"
		"probes, a rank of allreduce or alltoall), and forwards every record as it is measured.\n"
		"It exits when the coordinator says bye (0), goes away or stays silent (4), or refuses\n"
		"it (3).";

	rc = opts_parse(argc, argv, tab, agent_usage, about, &nargs);
	if (rc) {	/* (out: frees what --rail collected) */
		rc = rc == OPTS_HELP ? 0 : rc;
		goto out;
	}
	fs_set_verbosity(verbose);
	if (nargs)
		rc = fs_err_usage("unexpected argument '%s'", argv[0]);
	else if (!!connect_to + stdio_mode + (fd >= 0) != 1)
		rc = fs_err_usage("give exactly one of --connect HOST:PORT, --stdio, --fd N");
	else if (token_stdin && (connect_to || token_file))
		rc = fs_err_usage("--token-stdin is for --stdio and --fd, without --token-file");
	eps = json_array();
	for (i = 0; !rc && i < rails.n; i++)	/* before anything is started */
		rc = add_rail(rails.v[i], eps);
	if (rc)
		goto out;
	a.name = name ? name : default_name();
	if (!plan_name_ok(a.name)) {
		rc = fs_err_usage("%s '%s' is not a node name: give --name NAME (letters, digits, '.', '_', ':', '-'; "
				  "at most %d bytes)", name ? "--name" : "the node name", a.name, PLAN_NAME_MAX);
		goto out;
	}
	a.timeout_ms = units_ms(timeout_s);
	if (!token_stdin && (rc = auth_token(token_file, readable_token, &a.token)))
		goto out;
	signal(SIGPIPE, SIG_IGN);
	net_stop_on_signals();
	if (connect_to) {
		char host[256], err[256], nm[NET_ADDRSTRLEN];
		struct net_addr dst;
		int port;

		if (split_hostport(connect_to, host, sizeof(host), &port)) {
			rc = fs_err_usage("--connect '%s': write HOST:PORT", connect_to);
			goto out;
		}
		if (net_resolve(host, port, 0, &dst, err, sizeof(err))) {
			rc = fs_err_usage("--connect '%s': %s", connect_to, err);
			goto out;
		}
		net_addr_str(&dst, nm, sizeof(nm));
		a.rfd = a.wfd = net_connect(&dst, NULL, a.timeout_ms);
		if (a.rfd < 0) {
			rc = fs_err_peer("cannot reach the coordinator at %s: %s", nm,
					 a.rfd == -ETIMEDOUT ? "timed out" : strerror(-a.rfd));
			goto out;
		}
	} else if (stdio_mode) {
		a.rfd = 0;
		a.wfd = dup(1);
		dup2(2, 1);	/* nothing else may write into the protocol */
	} else {
		if (fcntl(fd, F_GETFD) < 0) {	/* not inherited: a wrong number, not a peer's failure */
			rc = fs_err_usage("--fd %d: no such open file descriptor (the local launcher passes 3)", fd);
			goto out;
		}
		a.rfd = a.wfd = fd;
	}
	if (token_stdin && (rc = auth_token_fd(a.rfd, a.timeout_ms, &a.token)))
		goto out;
	net_set_nonblock(a.rfd, 1);
	net_set_nonblock(a.wfd, 1);
	slot = getenv("FABSCOPE_SLOT");
	rc = handshake(&a, eps, slot);
	if (!rc)
		rc = agent_loop(&a);
out:
	free(a.token);
	json_decref(eps);
	opt_list_release(&rails);
	return -rc;
}
