/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tool fleet-sim: N agents in one process, over the real fleet protocol
 * (fleet/fleet.h), against a real coordinator (`fabscope run --launcher
 * external`), so that the coordinator alone is measured and tested with as
 * many agents as a fleet has (16,384) without as many processes.
 *
 * fleet-sim --connect HOST:PORT -n N [--prefix NAME] [--window W] [--timeout S]
 *
 *	Each simulated agent connects over TCP, takes the challenge (proto,
 *	version, nonce, join_ms), registers as NAME<i> (default sim<i>, i from
 *	0) with its mac over both nonces, the challenge and the register,
 *	checks the welcome's mac over all three, and from
 *	then on MACs every message it sends and checks every one it gets, under
 *	the session key, as `fabscope agent` does.  It waits for its welcome as
 *	long as the challenge's join_ms says (and no longer), sends a heartbeat
 *	when it has sent nothing for heartbeat_ms, answers each ping with a pong
 *	(t and id as they came: a ping phase's answer, which the coordinator
 *	turns into the phase's record), answers a job with done, exit 3 and
 *	"a simulated agent runs no engine" (it measures nothing, so it claims
 *	nothing), and ends at bye.  At most W (default 1000) connections at a
 *	time wait for their challenge; --timeout (default 30 s) bounds the
 *	connect and the challenge of each.
 *
 *	Stdout: one JSON object, {"agents", "joined", "pongs", "jobs",
 *	"byes", "failed", "welcome_wait_max_s", "join_ms_min", "seconds"};
 *	stderr: the first few failures, one line each, and how many others.
 *
 * Exit codes: 0 every agent joined and ended with bye, 1 one or more did
 * not (refused, dropped, timed out: said), 2 usage, 3 environment.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../core/auth.h"
#include "../../core/clock.h"
#include "../../core/error.h"
#include "../../core/net.h"
#include "../../core/wire.h"
#include "../../fleet/fleet.h"
#include "test-tool.h"

#define SIM_MS 1000000ull
#define SIM_SHOW_ERRORS 5

enum sim_state { SA_IDLE, SA_CONNECT, SA_CHALLENGE, SA_WELCOME, SA_LIVE, SA_BYE, SA_FAILED };

struct sim_agent {
	int fd;
	enum sim_state st;
	char cn[AUTH_NONCE_HEX + 1], an[AUTH_NONCE_HEX + 1];
	json_t *hs[2];		/* the handshake until the welcome: challenge, register */
	struct wire_rd rd;	/* rd.mac: the coordinator's messages, once welcomed */
	struct wire_mac tx;
	uint64_t until_ns;	/* what it waits for (connect, challenge, welcome) ends then */
	uint64_t registered_ns, last_sent_ns, last_heard_ns;
	int heartbeat_ms, silence_ms;
	int send_err;		/* a send of a joined agent failed (-errno): it reads on for a bye */
};

struct sim {
	struct sim_agent *a;
	int n, window, ep, timeout_ms;
	const char *prefix;
	char *token;
	struct net_addr dst;
	int next;		/* the next agent to connect */
	int waiting;		/* connections that have not had their challenge */
	int joined, byes, failed, ended;
	long pongs, jobs;
	long join_ms_min;
	double welcome_wait_max;
	int shown;
};

/* What agent i keeps of its handshake, released */
static void sim_hs_release(struct sim_agent *a)
{
	json_decref(a->hs[0]);
	json_decref(a->hs[1]);
	a->hs[0] = a->hs[1] = NULL;
}

static void sim_fail(struct sim *s, int i, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void sim_fail(struct sim *s, int i, const char *fmt, ...)
{
	struct sim_agent *a = &s->a[i];
	va_list ap;

	if (a->st == SA_FAILED || a->st == SA_BYE)
		return;
	if (a->st <= SA_CHALLENGE && a->st != SA_IDLE)
		s->waiting--;
	a->st = SA_FAILED;
	s->failed++;
	s->ended++;
	if (a->fd >= 0) {
		close(a->fd);	/* (epoll forgets it) */
		a->fd = -1;
	}
	wire_rd_release(&a->rd);
	sim_hs_release(a);
	if (s->shown++ < SIM_SHOW_ERRORS) {
		fprintf(stderr, "test-tool fleet-sim: %s%d: ", s->prefix, i);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
}

static void sim_end(struct sim *s, int i)
{
	struct sim_agent *a = &s->a[i];

	a->st = SA_BYE;
	s->byes++;
	s->ended++;
	close(a->fd);
	a->fd = -1;
	wire_rd_release(&a->rd);
	sim_hs_release(a);
}

/* Send m (taken) from agent i.  A joined agent whose send fails reads on:
 * the coordinator closes once it has said bye, and a bye read after a send
 * that failed is the end, not a failure (sim_readable says which). */
static int sim_send(struct sim *s, int i, json_t *m)
{
	struct sim_agent *a = &s->a[i];
	int rc = wire_send_mac(a->fd, &a->tx, m, s->timeout_ms);

	json_decref(m);
	if (rc) {
		if (a->st == SA_LIVE)
			a->send_err = rc;
		else
			sim_fail(s, i, "cannot send to the coordinator: %s", wire_strerror(rc));
		return -1;
	}
	a->last_sent_ns = clock_ns();
	return 0;
}

/* Start the connections the window has room for. */
static void sim_connect_more(struct sim *s)
{
	while (s->next < s->n && s->waiting < s->window) {
		int i = s->next++, one = 1;
		struct sim_agent *a = &s->a[i];
		struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT, .data.u32 = (uint32_t)i };

		a->fd = socket(s->dst.ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (a->fd < 0) {
			sim_fail(s, i, "socket: %s (raise ulimit -n: every agent holds one)", strerror(errno));
			continue;
		}
		setsockopt(a->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		a->st = SA_CONNECT;
		s->waiting++;
		a->until_ns = clock_ns() + (uint64_t)s->timeout_ms * SIM_MS;
		if ((connect(a->fd, (struct sockaddr *)&s->dst.ss, s->dst.len) && errno != EINPROGRESS) ||
		    epoll_ctl(s->ep, EPOLL_CTL_ADD, a->fd, &ev)) {
			sim_fail(s, i, "cannot connect to the coordinator: %s", strerror(errno));
			continue;
		}
	}
}

static const char *jstr(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static void sim_on_challenge(struct sim *s, int i, json_t *m)
{
	struct sim_agent *a = &s->a[i];
	json_t *jm = json_object_get(m, "join_ms");
	char mac[AUTH_NONCE_HEX + 1], name[128];
	const char *cn = jstr(m, "nonce");
	long join_ms;

	if (!jstr(m, "type") || strcmp(jstr(m, "type"), "challenge") || !jstr(m, "proto") ||
	    strcmp(jstr(m, "proto"), FLEET_PROTO) || !auth_nonce_ok(cn)) {
		sim_fail(s, i, "the coordinator's first message is no challenge");
		return;
	}
	if (json_integer_value(json_object_get(m, "version")) != wire_version()) {
		sim_fail(s, i, "the coordinator speaks fleet protocol %lld, this tool %d",
			 (long long)json_integer_value(json_object_get(m, "version")), wire_version());
		return;
	}
	if (!json_is_integer(jm) || json_integer_value(jm) < 0) {
		sim_fail(s, i, "the challenge does not say how long the join waits (join_ms)");
		return;
	}
	join_ms = (long)json_integer_value(jm);
	if (join_ms < s->join_ms_min || s->join_ms_min < 0)
		s->join_ms_min = join_ms;
	memcpy(a->cn, cn, sizeof(a->cn));
	if (auth_nonce(a->an)) {
		sim_fail(s, i, "no random numbers (getrandom failed)");
		return;
	}
	snprintf(name, sizeof(name), "%s%d", s->prefix, i);
	s->waiting--;
	a->st = SA_WELCOME;
	a->registered_ns = clock_ns();
	/* as the agent: its welcome may take as long as the join allows */
	a->until_ns = a->registered_ns + (uint64_t)join_ms * SIM_MS + (uint64_t)s->timeout_ms * SIM_MS;
	a->hs[0] = json_incref(m);
	a->hs[1] = json_pack("{ss,ss,si,ss,ss,ss,ss,si,ss,s[]}", "type", "register", "proto", FLEET_PROTO,
			     "version", wire_version(), "tool_version", "fleet-sim", "nonce", a->an, "node", name,
			     "host", "fleet-sim", "pid", (int)getpid(), "slot", "0", "endpoints");
	if (!a->hs[1] || auth_mac_msgs(s->token, "agent", a->cn, a->an, a->hs, 2, mac) ||
	    json_object_set_new(a->hs[1], "mac", json_string(mac))) {
		sim_fail(s, i, "out of memory for its register");
		return;
	}
	sim_send(s, i, json_incref(a->hs[1]));
}

static void sim_on_welcome(struct sim *s, int i, json_t *m)
{
	struct sim_agent *a = &s->a[i];
	json_t *hs[3] = { a->hs[0], a->hs[1], m };
	int proven = auth_mac_msgs_ok(s->token, "coordinator", a->an, a->cn, hs, 3, jstr(m, "mac"));
	uint8_t key[WIRE_MAC_LEN];
	double waited;

	if (!jstr(m, "type") || strcmp(jstr(m, "type"), "welcome")) {
		sim_fail(s, i, "refused%s: %s", proven ? "" : " (by a peer that did not prove the token)",
			 jstr(m, "message") ? jstr(m, "message") : "no welcome");
		return;
	}
	if (!proven) {
		sim_fail(s, i, "the welcome does not prove the token over the handshake");
		return;
	}
	sim_hs_release(a);
	auth_session_key(s->token, a->cn, a->an, key);
	wire_mac_start(&a->tx, key, 'a');
	wire_mac_start(&a->rd.mac, key, 'c');
	memset(key, 0, sizeof(key));
	a->heartbeat_ms = (int)json_integer_value(json_object_get(m, "heartbeat_ms"));
	a->silence_ms = (int)json_integer_value(json_object_get(m, "silence_ms"));
	if (a->heartbeat_ms < 50)
		a->heartbeat_ms = FLEET_HEARTBEAT_MS;
	if (a->silence_ms < 2 * a->heartbeat_ms)
		a->silence_ms = 2 * a->heartbeat_ms;
	a->st = SA_LIVE;
	a->last_heard_ns = a->last_sent_ns = clock_ns();
	waited = (a->last_heard_ns - a->registered_ns) / 1e9;
	if (waited > s->welcome_wait_max)
		s->welcome_wait_max = waited;
	s->joined++;
}

/* A message of the coordinator to a joined agent. */
static void sim_on_live(struct sim *s, int i, json_t *m)
{
	const char *type = jstr(m, "type");

	if (!type)
		return;
	if (!strcmp(type, "ping")) {
		if (!sim_send(s, i, json_pack("{ss,sO?,sO?}", "type", "pong", "t", json_object_get(m, "t"),
					      "id", json_object_get(m, "id"))) &&
		    json_is_integer(json_object_get(m, "id")))
			s->pongs++;	/* (a keepalive ping has no id) */
	} else if (!strcmp(type, "job")) {
		json_t *id = json_object_get(m, "id");

		if (json_is_integer(id) && !sim_send(s, i, json_pack("{ss,sO,si,ss}", "type", "done", "id", id,
								      "exit", FS_EXIT_ENV, "error",
								      "a simulated agent runs no engine")))
			s->jobs++;
	} else if (!strcmp(type, "bye")) {
		sim_end(s, i);
	} else if (!strcmp(type, "error")) {
		sim_fail(s, i, "the coordinator said: %s", jstr(m, "message") ? jstr(m, "message") : "error");
	}
}

static void sim_readable(struct sim *s, int i)
{
	struct sim_agent *a = &s->a[i];

	for (;;) {
		json_t *m;
		int r;

		if (a->st == SA_CONNECT) {
			int err = 0;
			socklen_t len = sizeof(err);

			getsockopt(a->fd, SOL_SOCKET, SO_ERROR, &err, &len);
			if (err) {
				sim_fail(s, i, "cannot connect to the coordinator: %s", strerror(err));
				return;
			}
			a->st = SA_CHALLENGE;
		}
		r = wire_read_some(a->fd, &a->rd, &m, FLEET_MAX_MSG);
		if (!r && !a->send_err)
			return;
		if (!r || r < 0) {
			if (a->send_err)
				sim_fail(s, i, "cannot send to the coordinator: %s (and no bye)", wire_strerror(a->send_err));
			else
				sim_fail(s, i, "%s: %s", a->st == SA_LIVE ? "lost the coordinator" :
					 a->st == SA_WELCOME ? "no welcome" : "no challenge",
					 r == -ECONNRESET ? "the coordinator closed the connection" : wire_strerror(r));
			return;
		}
		a->last_heard_ns = clock_ns();
		if (a->st == SA_CHALLENGE)
			sim_on_challenge(s, i, m);
		else if (a->st == SA_WELCOME)
			sim_on_welcome(s, i, m);
		else
			sim_on_live(s, i, m);
		json_decref(m);
		if (a->st >= SA_BYE)
			return;
	}
}

/* A heartbeat, as the agent sends one */
static void sim_heartbeat(struct sim *s, int i)
{
	if (sim_send(s, i, json_pack("{ss,si}", "type", "heartbeat", "jobs", 0)))
		sim_readable(s, i);	/* (a bye, or the failure said) */
}

/* Heartbeats, and the waits that ran out: once every 100 ms, over every agent. */
static void sim_timers(struct sim *s)
{
	uint64_t now = clock_ns();
	int i;

	for (i = 0; i < s->next; i++) {
		struct sim_agent *a = &s->a[i];

		if (a->st == SA_LIVE) {
			if (now - a->last_heard_ns > (uint64_t)a->silence_ms * SIM_MS)
				sim_readable(s, i);	/* (what came is read before silence is judged, as the agent does) */
			if (a->st != SA_LIVE)
				continue;
			if (now - a->last_heard_ns > (uint64_t)a->silence_ms * SIM_MS)
				sim_fail(s, i, "the coordinator has been silent for %d ms", a->silence_ms);
			else if (now - a->last_sent_ns >= (uint64_t)a->heartbeat_ms * SIM_MS)
				sim_heartbeat(s, i);
		} else if (a->st >= SA_CONNECT && a->st <= SA_WELCOME && now > a->until_ns) {
			sim_fail(s, i, "%s within %.1f s", a->st == SA_WELCOME ? "no welcome (after registering)" :
				 a->st == SA_CHALLENGE ? "no challenge" : "no connection",
				 (now - (a->st == SA_WELCOME ? a->registered_ns : a->until_ns -
					 (uint64_t)s->timeout_ms * SIM_MS)) / 1e9);
		}
	}
}

static int sim_run(struct sim *s)
{
	struct epoll_event ev[256];
	uint64_t last_timers = 0;

	while (s->ended < s->n) {
		int k, got;

		sim_connect_more(s);
		got = epoll_wait(s->ep, ev, 256, 50);
		if (got < 0 && errno != EINTR)
			return -fs_err_env("epoll_wait: %s", strerror(errno));
		for (k = 0; k < got; k++) {
			int i = (int)ev[k].data.u32;

			if (s->a[i].fd < 0)
				continue;
			if (s->a[i].st == SA_CONNECT && (ev[k].events & EPOLLOUT)) {
				struct epoll_event in = { .events = EPOLLIN, .data.u32 = (uint32_t)i };

				epoll_ctl(s->ep, EPOLL_CTL_MOD, s->a[i].fd, &in);
			}
			sim_readable(s, i);
		}
		if (clock_ns() - last_timers > 100 * SIM_MS) {
			last_timers = clock_ns();
			sim_timers(s);
		}
	}
	return 0;
}

static int sim_num(const char *opt, const char *val, unsigned long max, int *out)
{
	unsigned long v;
	int rc = tool_parse_ulong(opt, val, max, &v);

	if (!rc)
		*out = (int)v;
	return rc;
}

static int sim_args(struct sim *s, int argc, const char **argv)
{
	const char *connect_to = NULL, *colon;
	char host[256], err[256];
	int i, rc = 0, port = 0, timeout_s = 30;

	for (i = 1; i < argc && !rc; i += 2) {
		const char *arg = argv[i], *val = argv[i + 1];

		if (!val)
			return usage_error("%s needs a value (usage: fleet-sim --connect HOST:PORT -n N "
					   "[--prefix NAME] [--window W] [--timeout S])", arg);
		if (!strcmp(arg, "--connect"))
			connect_to = val;
		else if (!strcmp(arg, "--prefix"))
			s->prefix = val;
		else if (!strcmp(arg, "-n"))
			rc = sim_num(arg, val, 1 << 20, &s->n);
		else if (!strcmp(arg, "--window"))
			rc = sim_num(arg, val, 1 << 20, &s->window);
		else if (!strcmp(arg, "--timeout"))
			rc = sim_num(arg, val, 3600, &timeout_s);
		else
			return usage_error("unknown option '%s'", arg);
	}
	if (rc)
		return rc;
	if (!connect_to || s->n < 1 || s->window < 1 || timeout_s < 1)
		return usage_error("give --connect HOST:PORT and -n N (N, --window and --timeout at least 1)");
	s->timeout_ms = timeout_s * 1000;
	colon = strrchr(connect_to, ':');
	if (!colon || colon == connect_to || sim_num("--connect's port", colon + 1, 65535, &port) || !port)
		return usage_error("--connect '%s': write HOST:PORT", connect_to);
	snprintf(host, sizeof(host), "%.*s", (int)(colon - connect_to), connect_to);
	if (net_resolve(host, port, 0, &s->dst, err, sizeof(err)))
		return usage_error("--connect '%s': %s", connect_to, err);
	return 0;
}

/* The summary on stdout: one JSON object */
static void sim_report(const struct sim *s, double seconds)
{
	json_t *o = json_pack("{si,si,sI,sI,si,si,sf,sI,sf}", "agents", s->n, "joined", s->joined, "pongs",
			      (json_int_t)s->pongs, "jobs", (json_int_t)s->jobs, "byes", s->byes, "failed", s->failed,
			      "welcome_wait_max_s", s->welcome_wait_max, "join_ms_min", (json_int_t)s->join_ms_min,
			      "seconds", seconds);

	if (o && !json_dumpf(o, stdout, JSON_COMPACT))
		putchar('\n');
	json_decref(o);
}

int tool_fleet_sim(int argc, const char **argv)
{
	struct sim s = { .window = 1000, .timeout_ms = 30000, .prefix = "sim", .join_ms_min = -1 };
	struct rlimit rl;
	uint64_t t0;
	int rc, i;

	if ((rc = sim_args(&s, argc, argv)))
		return rc;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < (rlim_t)s.n + 16)
		return -fs_err_env("open files limit %llu is too low for %d agents (one socket each): "
				   "raise ulimit -n to %d or more", (unsigned long long)rl.rlim_cur, s.n, s.n + 16);
	if ((rc = auth_token(NULL, 0, &s.token)))
		return -rc;
	s.a = calloc((size_t)s.n, sizeof(*s.a));
	s.ep = epoll_create1(EPOLL_CLOEXEC);
	if (!s.a || s.ep < 0) {
		free(s.token);
		free(s.a);
		return -fs_err_env("cannot set up %d agents: %s", s.n, s.a ? strerror(errno) : "out of memory");
	}
	for (i = 0; i < s.n; i++)
		s.a[i].fd = -1;
	t0 = clock_ns();
	rc = sim_run(&s);
	sim_report(&s, (clock_ns() - t0) / 1e9);
	if (s.shown > SIM_SHOW_ERRORS)
		fprintf(stderr, "test-tool fleet-sim: and %d other failures\n", s.shown - SIM_SHOW_ERRORS);
	for (i = 0; i < s.n; i++)
		if (s.a[i].fd >= 0) {
			close(s.a[i].fd);
			wire_rd_release(&s.a[i].rd);
			sim_hs_release(&s.a[i]);
		}
	close(s.ep);
	free(s.a);
	free(s.token);
	if (rc)
		return rc;
	if (s.failed)
		return check_failed("%d of %d agents did not join and end with bye (the first %d are above)", s.failed,
				    s.n, s.failed < SIM_SHOW_ERRORS ? s.failed : SIM_SHOW_ERRORS);
	return 0;
}
