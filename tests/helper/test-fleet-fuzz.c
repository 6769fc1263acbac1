/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tool fleet-fuzz: the fleet control protocol (fleet/fleet.h) against
 * hostile peers, both ways.
 *
 * fleet-fuzz agent N SEED FABSCOPE
 *	A fake coordinator against N real agents, one after another, each
 *	`FABSCOPE agent --fd 3 --name fz --timeout 3` on a socketpair (--timeout 1
 *	for the few that get no challenge or no welcome: it must wait that long,
 *	and no longer).  It gets a challenge (now and then a malformed one, a
 *	bad frame, or none), its register is checked (fields, and its mac over
 *	the nonces, our challenge and itself), then a welcome (now and then
 *	with a wrong or missing mac, one over the nonces only or over another
 *	welcome, an error, a malformed frame, or none; odd heartbeat_ms and
 *	silence_ms), then a stream of hostile but
 *	well-framed objects: random types and fields, job messages with bad,
 *	missing or huge ids, unknown tests and roles, options that are not
 *	allowed or not strings, 100 KB strings, cancels of unknown ids, floods
 *	of pings, nesting just within the parser's limit, and a few valid jobs
 *	that start engines (with floods of labels, deadlines, cancels).  A ping
 *	must then be answered, and the agent is ended one way: the connection
 *	closed, bye, a frame of length 0 or over 4 MiB, a truncated frame, a
 *	malformed body (nesting too deep, a NUL, not an object), random bytes,
 *	or silence after a short silence_ms.
 *	Checks: the agent never dies of a signal (nor of a sanitizer); it exits
 *	with the code its ending calls for (0 bye, 3 refused, 4 a broken or
 *	silent coordinator), within bounded time, saying why on stderr; all it
 *	sends are known messages, for ids it was given; a job message it cannot
 *	run is answered done/exit 2 (or error, without an id) before the next
 *	ping's pong; every ping gets its pong; no process of its jobs outlives
 *	it (found by a tag in their environment); no engine took a host for an
 *	option.
 *
 * fleet-fuzz coord N SEED HOST:PORT TOKEN [AGENT-TIMEOUT]
 *	Hostile agents against a real coordinator (`fabscope run --launcher
 *	external`, with agent-timeout AGENT-TIMEOUT seconds, default 10) that
 *	expects a node named fz (in its hostfile, or as one of -n).  One
 *	connection joins as fz and stays to the end: heartbeats, pongs, and for
 *	each of its jobs a burst of records, listening and done messages for
 *	ids that are not its own, records that are not objects or huge, floods
 *	of heartbeats and junk, then its own job failed (done with a non-zero
 *	exit, or a listening port where nothing listens).  N other connections,
 *	half before the run starts ("phase 1 done" on stdout: start the real
 *	agents then; none takes a slot), half while fz holds its first job (new
 *	names too, refused as all have joined): silent ones, a frame cut short
 *	and left so, garbage, lengths 0 and over 4 MiB, malformed bodies,
 *	messages that are not a register, wrong versions, wrong macs, fz's name
 *	again, names not in the plan, half-closed and reset connections.
 *	Checks: the coordinator's messages are well formed and its welcome
 *	proves the token; a refused connection gets an error message that says
 *	why (none when the register is over the 64 KiB allowed before
 *	authentication) and is closed within 3 s; a silent one is closed within
 *	AGENT-TIMEOUT + 3 s; fz is never dropped and gets bye at the end.  What
 *	the run makes of it all is for the test to check (t0180).
 *
 * Exit codes: 0 ok (a summary line on stdout), 1 a check failed (one line
 * saying which seed and iteration), 2 usage, 3 environment.
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../core/clock.h"
#include "../../core/error.h"
#include "../../core/hmac.h"
#include "../../core/net.h"
#include "../../core/wire.h"
#include "../../fleet/fleet.h"
#include "test-tool.h"

#define MS 1000000ull
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define INJECTED "fz-injected.json"	/* a host that is an option would write it */

static char ctx[128];	/* "seed S agent I" for messages */

static uint64_t below(uint64_t *s, uint64_t n)
{
	return n ? tool_rand(s) % n : 0;
}

static int one_in(uint64_t *s, uint64_t n)
{
	return below(s, n) == 0;
}

static int failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int failf(const char *fmt, ...)
{
	char buf[900];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fs_err(FS_EXIT_CHECK, "%s: %s", ctx, buf);
	return -1;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static const char *jstr(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* ---- hostile values ---- */

static const json_int_t edge_ints[] = {
	0, 1, -1, 2, 49, 50, 51, 100, 65535, 65536, INT_MAX, (json_int_t)INT_MAX + 1,
	INT_MIN, (json_int_t)INT_MIN - 1, 4294967296LL, 4294967297LL, LLONG_MAX, LLONG_MIN,
	1000000000000LL, -1000000000000LL,
};

static json_t *str_n(size_t n, char c)
{
	char *b = malloc(n + 1);
	json_t *j;

	memset(b, c, n);
	b[n] = 0;
	j = json_stringn(b, n);
	free(b);
	return j;
}

/* A string: odd characters, formats, options, or (big) up to 100 KB. */
static json_t *odd_string(uint64_t *s, int big)
{
	static const char *const odd[] = {
		"", "x", "%s%s%s%n%x", "\n\r\t\b\f", "\x7f\x01\x1f", "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
		"../../../../etc/passwd", "-h", "--help", "--output=" INJECTED, "bw", "lat", "server",
		"client", "record", "heartbeat", "127.0.0.1", "::1", "1e999", "null", "{\"type\":\"bye\"}",
		"\\u0000", "fz", "\"", "\\",
	};

	if (big && one_in(s, 4))
		return one_in(s, 2) ? str_n(100 * 1024, 'x') : str_n(1 + below(s, 100 * 1024), (char)('a' + below(s, 26)));
	return json_string(odd[below(s, NELEM(odd))]);
}

/* Any JSON value but a string with a NUL (which the receiver's parser refuses:
 * the message would be malformed); big: 100 KB strings at this level. */
static json_t *hostile(uint64_t *s, int depth, int big)
{
	static const double reals[] = { 0.0, -0.0, 0.5, -1.5, 1e308, -1e308, 4.9e-324, 1e19, 3.0 };
	json_t *j;
	uint64_t i, n;

	switch (below(s, depth >= 3 ? 7 : 9)) {
	case 0:
		return json_integer(edge_ints[below(s, NELEM(edge_ints))]);
	case 1:
		return json_integer((json_int_t)tool_rand(s));
	case 2:
		return json_real(reals[below(s, NELEM(reals))]);
	case 3:
	case 4:
		return odd_string(s, big);
	case 5:
		return one_in(s, 2) ? json_boolean(below(s, 2)) : json_null();
	case 6:
		return json_integer((json_int_t)below(s, 10));
	case 7:
		j = json_array();
		n = below(s, 5);
		for (i = 0; i < n; i++)
			json_array_append_new(j, hostile(s, depth + 1, 0));
		return j;
	default:
		j = json_object();
		n = below(s, 5);
		for (i = 0; i < n; i++) {
			json_t *k = odd_string(s, 0);

			json_object_set_new(j, json_string_value(k), hostile(s, depth + 1, 0));
			json_decref(k);
		}
		return j;
	}
}

/* A type that no side acts on. */
static json_t *junk_type(uint64_t *s)
{
	static const char *const t[] = {
		"", "JOB", "Ping", "welcome", "challenge", "register", "listening", "record", "done",
		"pong", "heartbeat", "byebye", "bye ", "nop", "%n%n%n",
	};

	switch (below(s, 4)) {
	case 0:
		return hostile(s, 2, 0);	/* not a string, mostly */
	case 1:
		return str_n(1 + below(s, 100 * 1024), 'j');
	default:
		return json_string(t[below(s, NELEM(t))]);
	}
}

/* Frames the receiver must refuse as a whole: *len bytes in a malloc'd buffer.
 * kind 0: length 0; 1: length over FLEET_MAX_MSG; 2: nesting too deep;
 * 3: a NUL in a string; 4: not an object; 5: not JSON. */
static uint8_t *bad_frame(uint64_t *s, int kind, size_t *len)
{
	static const char *const not_obj[] = { "[]", "1", "\"x\"", "null", "[{\"type\":\"ping\"}]", "true" };
	static const char *const not_json[] = {
		"{", "{\"type\":\"ping\"", "{\"type\":\"ping\"}}", "{'type':'ping'}", "{\"a\":NaN}",
		"{\"type\":\"ping\",\"type\":\"ping\"}", "{\"a\":\"\xff\"}", "{} {}", "\xef\xbb\xbf{}",
	};
	uint8_t *b;
	size_t n = 0, depth, i;

	switch (kind) {
	case 0:
	case 1: {
		static const uint32_t huge[] = { FLEET_MAX_MSG + 1, 0x7fffffffu, 0x80000000u, 0xffffffffu };

		b = malloc(4 + 64);
		put32(b, kind ? huge[below(s, NELEM(huge))] : 0);
		n = 4 + below(s, 64);
		for (i = 4; i < n; i++)
			b[i] = (uint8_t)tool_rand(s);
		*len = n;
		return b;
	}
	case 2:
		depth = 2100 + below(s, 20000);
		b = malloc(4 + 20 + 2 * depth);
		n = 4;
		memcpy(b + n, "{\"type\":\"ping\",\"t\":", 19);
		n += 19;
		memset(b + n, '[', depth);
		n += depth;
		memset(b + n, ']', depth);
		n += depth;
		b[n++] = '}';
		break;
	case 3: {
		static const char t[] = "{\"type\":\"ping\",\"t\":\"a\\u0000b\"}";

		b = malloc(4 + sizeof(t));
		memcpy(b + 4, t, sizeof(t) - 1);
		n = 4 + sizeof(t) - 1;
		if (one_in(s, 2))	/* a raw NUL */
			b[4 + 20] = 0;
		break;
	}
	case 4: {
		const char *t = not_obj[below(s, NELEM(not_obj))];

		b = malloc(4 + strlen(t));
		memcpy(b + 4, t, strlen(t));
		n = 4 + strlen(t);
		break;
	}
	default: {
		const char *t = not_json[below(s, NELEM(not_json))];

		b = malloc(4 + strlen(t));
		memcpy(b + 4, t, strlen(t));
		n = 4 + strlen(t);
		break;
	}
	}
	put32(b, (uint32_t)(n - 4));
	*len = n;
	return b;
}

/* ======================================================================
 * agent: a fake coordinator against real agents
 * ====================================================================== */

enum { JX_ANY, JX_USAGE };

struct fjob {
	json_int_t id;
	int sent, done, expect;
};

#define FZ_MAXJ 512

struct fz {
	pid_t pid;
	int fd, errfd;
	struct wire_rd rd;	/* (rd.mac: the agent's messages are checked after the welcome) */
	struct wire_mac tx;	/* ours, MAC'd after the welcome */
	int eof;		/* the agent's end is closed */
	json_t *ch;		/* our challenge, as sent (the handshake's macs cover it) */
	json_t *reg;		/* its register message */
	int regs;
	struct fjob jobs[FZ_MAXJ];
	int njobs;
	int noid_sent;		/* job messages without an integer id */
	int ports[8], nports;	/* ports its server jobs listen on */
	json_int_t live_t;	/* the t of the ping that must be answered */
	int live_seen;
	long pings_sent, pongs, heartbeats, dones, records, listens, errors;
	uint64_t last_sent_ns;
	char errtail[4096];
	size_t errlen;
	unsigned long errbytes;
};

struct fz_stats {
	unsigned long agents, by_code[5], engines, msgs, jobs;
};

static struct fjob *fz_job(struct fz *z, json_t *idj)
{
	int i;

	if (!json_is_integer(idj))
		return NULL;
	for (i = 0; i < z->njobs; i++)
		if (z->jobs[i].id == json_integer_value(idj))
			return &z->jobs[i];
	return NULL;
}

static void fz_job_sent(struct fz *z, json_int_t id, int expect)
{
	json_t *idj = json_integer(id);
	struct fjob *j = fz_job(z, idj);

	json_decref(idj);
	if (!j && z->njobs < FZ_MAXJ) {
		j = &z->jobs[z->njobs++];
		memset(j, 0, sizeof(*j));
		j->id = id;
		j->expect = expect;
	}
	if (j) {
		j->sent++;
		if (j->expect != expect)
			j->expect = JX_ANY;
	}
}

static void drain_err(struct fz *z)
{
	char buf[4096];
	ssize_t n;

	while (z->errfd >= 0 && (n = read(z->errfd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				break;
			return;
		}
		z->errbytes += (unsigned long)n;
		if ((size_t)n >= sizeof(z->errtail) - 1) {
			memcpy(z->errtail, buf + n - (sizeof(z->errtail) - 1), sizeof(z->errtail) - 1);
			z->errlen = sizeof(z->errtail) - 1;
		} else {
			size_t keep = sizeof(z->errtail) - 1 - (size_t)n;

			if (z->errlen > keep) {
				memmove(z->errtail, z->errtail + z->errlen - keep, keep);
				z->errlen = keep;
			}
			memcpy(z->errtail + z->errlen, buf, (size_t)n);
			z->errlen += (size_t)n;
		}
		z->errtail[z->errlen] = 0;
	}
	close(z->errfd);	/* end of file: the agent and its jobs are gone */
	z->errfd = -1;
}

/* One message from the agent: is it one it may send? */
static int fz_msg(struct fz *z, json_t *m)
{
	const char *type = jstr(m, "type");
	char *text = json_dumps(m, JSON_COMPACT);
	char head[200];
	struct fjob *j;
	json_t *v;
	int rc = 0;

	snprintf(head, sizeof(head), "%s", text ? text : "?");
	free(text);
	if (!type)
		return failf("the agent sent a message without a type: %s", head);
	if (!strcmp(type, "register")) {
		if (z->regs++)
			return failf("the agent registered twice: %s", head);
		z->reg = json_incref(m);
		return 0;
	}
	if (!z->regs && strcmp(type, "error"))	/* an error: another version */
		return failf("the agent sent '%s' before its register: %s", type, head);
	if (!strcmp(type, "heartbeat")) {
		v = json_object_get(m, "jobs");
		if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > FZ_MAXJ)
			rc = failf("a heartbeat without a sane job count: %s", head);
		z->heartbeats++;
	} else if (!strcmp(type, "pong")) {
		v = json_object_get(m, "t");
		if (z->live_t && json_is_integer(v) && json_integer_value(v) == z->live_t &&
		    !strcmp(jstr(m, "id") ? jstr(m, "id") : "", "live"))
			z->live_seen = 1;
		z->pongs++;
	} else if (!strcmp(type, "done")) {
		j = fz_job(z, json_object_get(m, "id"));
		v = json_object_get(m, "exit");
		if (!j)
			rc = failf("done for an id no job message had: %s", head);
		else if (++j->done > j->sent)
			rc = failf("more done messages than job messages for id %lld: %s", (long long)j->id, head);
		else if (!json_is_integer(v) || !json_is_string(json_object_get(m, "error")))
			rc = failf("done without an integer exit and an error string: %s", head);
		else if (j->expect == JX_USAGE && (json_integer_value(v) != FS_EXIT_USAGE || !*jstr(m, "error")))
			rc = failf("a job message it cannot run should be done with exit 2 and why: %s", head);
		z->dones++;
	} else if (!strcmp(type, "listening")) {
		v = json_object_get(m, "port");
		if (!fz_job(z, json_object_get(m, "id")))
			rc = failf("listening for an id no job message had: %s", head);
		else if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 65535)
			rc = failf("listening without a port: %s", head);
		else if (z->nports < (int)NELEM(z->ports))
			z->ports[z->nports++] = (int)json_integer_value(v);
		z->listens++;
	} else if (!strcmp(type, "record")) {
		if (!fz_job(z, json_object_get(m, "id")))
			rc = failf("a record for an id no job message had: %s", head);
		else if (!json_is_object(json_object_get(m, "record")))
			rc = failf("a record that is not an object: %s", head);
		z->records++;
	} else if (!strcmp(type, "progress")) {	/* a job running for over a second (fleet.h) */
		v = json_object_get(m, "progress");
		if (!fz_job(z, json_object_get(m, "id")))
			rc = failf("progress for an id no job message had: %s", head);
		else if (!json_is_object(v) || (json_object_get(v, "bytes") && !json_is_number(json_object_get(v, "bytes"))))
			rc = failf("progress that is not an object with a number of bytes: %s", head);
	} else if (!strcmp(type, "error")) {
		if (!json_is_string(json_object_get(m, "message")))
			rc = failf("an error without a message: %s", head);
		z->errors++;
	} else {
		rc = failf("the agent sent an unknown message: %s", head);
	}
	return rc;
}

/* Read what the agent says (and its stderr) for up to ms: 0, or -1 after a failed check. */
static int fz_pump(struct fz *z, int ms)
{
	struct pollfd p[2] = { { .fd = z->eof ? -1 : z->fd, .events = POLLIN },
			       { .fd = z->errfd, .events = POLLIN } };

	if (poll(p, 2, ms) < 0 && errno != EINTR)
		return failf("poll: %s", strerror(errno));
	if (p[1].revents)
		drain_err(z);
	while (!z->eof && p[0].revents) {
		json_t *m;
		int r = wire_read_some(z->fd, &z->rd, &m, 64u << 20), rc;

		if (r == 0)
			break;
		if (r == -ECONNRESET || r == -EPIPE) {
			z->eof = 1;
			break;
		}
		if (r < 0)
			return failf("the agent sent a bad frame: %s", wire_strerror(r));
		rc = fz_msg(z, m);
		json_decref(m);
		if (rc)
			return rc;
	}
	return 0;
}

/* Send bytes, reading the agent meanwhile: 0, 1 when the agent is gone, -1 after a failed check. */
static int fz_put(struct fz *z, const void *buf, size_t len)
{
	uint64_t deadline = clock_ns() + 10000 * MS;
	const char *p = buf;

	while (len) {
		ssize_t n = send(z->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN)
			return 1;
		if (clock_ns() > deadline)
			return failf("the agent read nothing for 10 s");
		{
			struct pollfd pw = { .fd = z->fd, .events = POLLOUT };

			if (fz_pump(z, 0))
				return -1;
			poll(&pw, 1, 20);
		}
	}
	z->last_sent_ns = clock_ns();
	return 0;
}

/* A frame of this body, with its MAC once the session has one (so that
 * hostile bodies reach the agent's parser, behind the MAC check). */
static int fz_frame(struct fz *z, const char *body, size_t len)
{
	uint8_t h[4], mac[WIRE_MAC_LEN];
	int rc, on = z->tx.on;

	put32(h, (uint32_t)(len + (on ? WIRE_MAC_LEN : 0)));
	if (on) {
		wire_mac_of(&z->tx, body, len, mac);
		z->tx.seq++;
	}
	rc = fz_put(z, h, 4);
	if (!rc)
		rc = fz_put(z, body, len);
	return rc || !on ? rc : fz_put(z, mac, WIRE_MAC_LEN);
}

/* Send a message (the reference is taken). */
static int fz_send(struct fz *z, json_t *m)
{
	char *text;
	int rc;

	if (!m)
		return failf("internal: a message could not be built");
	text = json_dumps(m, JSON_COMPACT);
	json_decref(m);
	if (!text)
		return failf("internal: a message could not be written");
	rc = fz_frame(z, text, strlen(text));
	free(text);
	return rc;
}

static int fz_spawn(struct fz *z, const char *fabscope, const char *token, const char *tag,
		    const char *timeout)
{
	int sv[2], ep[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return fs_err_env("socketpair: %s", strerror(errno));
	if (pipe2(ep, O_CLOEXEC) < 0) {
		close(sv[0]);
		close(sv[1]);
		return fs_err_env("pipe: %s", strerror(errno));
	}
	fflush(NULL);
	z->pid = fork();
	if (z->pid < 0)
		return fs_err_env("fork: %s", strerror(errno));
	if (!z->pid) {
		int keep = fcntl(sv[1], F_DUPFD_CLOEXEC, 10), devnull = open("/dev/null", O_RDWR | O_CLOEXEC);

		dup2(devnull, 0);
		dup2(ep[1], 1);
		dup2(ep[1], 2);
		dup2(keep, 3);	/* without close-on-exec */
		setenv("FABSCOPE_TOKEN", token, 1);
		setenv("FABSCOPE_FUZZ_TAG", tag, 1);
		unsetenv("FABSCOPE_TEST_PROTO_VERSION");
		unsetenv("FABSCOPE_NODE");
		execl(fabscope, fabscope, "agent", "--fd", "3", "--name", "fz", "--timeout", timeout, (char *)NULL);
		fprintf(stderr, "cannot run %s: %s\n", fabscope, strerror(errno));
		_exit(127);
	}
	close(sv[1]);
	close(ep[1]);
	z->fd = sv[0];
	z->errfd = ep[0];
	net_set_nonblock(z->fd, 1);
	net_set_nonblock(z->errfd, 1);
	return 0;
}

/* Processes whose environment holds tag (zombies have none): how many, and the first pid. */
static int tagged(const char *tag, pid_t *first)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	size_t tlen = strlen(tag);
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char path[300], buf[65536];
		ssize_t len;
		int fd;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/environ", e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf));
		close(fd);
		if (len > 0 && memmem(buf, (size_t)len, tag, tlen + 1)) {	/* with its NUL */
			if (!n++)
				*first = (pid_t)atoi(e->d_name);
		}
	}
	closedir(d);
	return n;
}

/* Read (and keep the agent's connection drained) until cond or ms pass: 1 met, 0 not, -1 failed check. */
#define FZ_WAIT(z, ms, cond) ({							\
	uint64_t dl_ = clock_ns() + (uint64_t)(ms) * MS;			\
	int r_ = 0;								\
	while (!(cond)) {							\
		if (clock_ns() > dl_) { r_ = 0; break; }			\
		if (fz_pump(z, 20)) { r_ = -1; break; }				\
		if (fz_keepalive(z)) { r_ = -1; break; }			\
	}									\
	(cond) && r_ == 0 ? 1 : r_;						\
})

static int keepalive_on;

/* While waiting on a welcomed agent: a ping now and then, so that a short
 * silence_ms does not end it. */
static int fz_keepalive(struct fz *z)
{
	if (!keepalive_on || z->eof || clock_ns() - z->last_sent_ns < 300 * MS)
		return 0;
	z->pings_sent++;
	return fz_send(z, json_pack("{ss,ss}", "type", "ping", "t", "keepalive")) < 0 ? -1 : 0;
}

/* ---- the agent's life ---- */

enum ending {
	E_CLOSE, E_BYE, E_ZERO, E_HUGE, E_DEEP, E_NUL, E_NOTOBJ, E_NOTJSON, E_TRUNC, E_RANDOM,
	E_FORGED, E_SILENT, E_NENDINGS
};

static const char *const ending_name[] = {
	"closed", "bye", "a frame of length 0", "a frame over 4 MiB", "nesting too deep",
	"a NUL in a string", "a message that is not an object", "a body that is not JSON",
	"a truncated frame", "random bytes", "a message that fails its MAC", "silence",
};

/* (as many random numbers drawn whatever the outcome, so that a seed
 * replays alike when the timing differs) */
static json_t *job_template(uint64_t *s, json_int_t id, int server, int port)
{
	int lat = one_in(s, 2), size = one_in(s, 2), bad_size = one_in(s, 3), bidi = one_in(s, 4);
	int bidi_on = one_in(s, 2), flows = one_in(s, 4), flows2 = one_in(s, 2), v6 = one_in(s, 8);
	json_t *m = json_pack("{ss,sI,ss,ss,ss,ss}", "type", "job", "id", id, "test", lat ? "lat" : "bw",
			      "role", server ? "server" : "client", "bind", "127.0.0.1", "node", "fz");
	json_t *opts = json_pack("{ss,ss}", "duration", "0.2", "timeout", "2");

	if (size)
		json_object_set_new(opts, "size", json_string(bad_size ? "12x" : "4K"));
	if (bidi)
		json_object_set_new(opts, "bidirectional", json_string(bidi_on ? "1" : "false"));
	if (flows)
		json_object_set_new(opts, "flows", json_string(flows2 ? "2" : "0"));
	json_object_set_new(m, "opts", opts);
	if (!server) {
		json_object_set_new(m, "host", json_string(v6 ? "::1" : "127.0.0.1"));
		json_object_set_new(m, "port", json_integer(port));
	}
	return m;
}

/* A job message the agent must refuse (done, exit 2; error without an integer id). */
static json_t *bad_job(uint64_t *s, struct fz *z)
{
	static const char *const bad_keys[] = {
		"output", "json", "server", "port", "help", "", "--size", "size ", "Size", "label",
		"verbose", "once", "node", "bind",
	};
	json_t *m = job_template(s, 0, !one_in(s, 3), 1), *idj;
	int what = (int)below(s, 8), n, i;

	switch (below(s, 5)) {	/* the id */
	case 0:
		json_object_del(m, "id");
		break;
	case 1:
		json_object_set_new(m, "id", hostile(s, 1, 1));
		break;
	case 2:
		json_object_set_new(m, "id", json_integer(edge_ints[below(s, NELEM(edge_ints))]));
		break;
	default:
		json_object_set_new(m, "id", json_integer((json_int_t)tool_rand(s)));
		break;
	}
	switch (what) {
	case 0:		/* the test */
		if (one_in(s, 3))
			json_object_del(m, "test");
		else
			json_object_set_new(m, "test", one_in(s, 2) ? hostile(s, 1, 1) : json_string("BW"));
		if (json_is_string(json_object_get(m, "test")) &&
		    (!strcmp(jstr(m, "test"), "bw") || !strcmp(jstr(m, "test"), "lat")))
			json_object_set_new(m, "test", json_string("iperf"));
		break;
	case 1:		/* the role */
		if (one_in(s, 3))
			json_object_del(m, "role");
		else
			json_object_set_new(m, "role", one_in(s, 2) ? hostile(s, 1, 1) : json_string("master"));
		if (json_is_string(json_object_get(m, "role")) &&
		    (!strcmp(jstr(m, "role"), "server") || !strcmp(jstr(m, "role"), "client")))
			json_object_set_new(m, "role", json_string("both"));
		break;
	case 2:		/* a client without host or port */
		json_object_set_new(m, "role", json_string("client"));
		if (one_in(s, 2))
			json_object_del(m, "host");
		else if (one_in(s, 2))
			json_object_del(m, "port");
		else
			json_object_set_new(m, "port", one_in(s, 2) ? json_string("18520") : json_real(18520.0));
		if (!json_object_get(m, "host") && one_in(s, 2))
			json_object_set_new(m, "host", json_null());
		break;
	case 3:		/* an option not allowed */
	case 4:
		json_object_set_new(json_object_get(m, "opts"), bad_keys[below(s, NELEM(bad_keys))],
				    hostile(s, 1, 1));
		break;
	case 5:		/* an allowed option, not a string */
		do {
			json_object_set_new(json_object_get(m, "opts"), one_in(s, 2) ? "size" : "duration",
					    hostile(s, 1, 0));
		} while (json_is_string(json_object_get(json_object_get(m, "opts"), "size")) ||
			 json_is_string(json_object_get(json_object_get(m, "opts"), "duration")));
		break;
	case 6:		/* thousands of options, one of them not allowed */
		n = 100 + (int)below(s, 3000);
		for (i = 0; i < n; i++) {
			char k[32];

			snprintf(k, sizeof(k), "k%d", i);
			json_object_set_new(json_object_get(m, "opts"), k, json_string("1"));
		}
		break;
	default:	/* a 100 KB option name */
		{
			json_t *k = str_n(100 * 1024, 'o');

			json_object_set_new(json_object_get(m, "opts"), json_string_value(k), json_string("1"));
			json_decref(k);
		}
		break;
	}
	if (one_in(s, 4))	/* labels, deadline, node: are not looked at before the refusal */
		json_object_set_new(m, "labels", hostile(s, 1, 0));
	if (one_in(s, 4))
		json_object_set_new(m, "deadline_ms", hostile(s, 1, 0));
	if (one_in(s, 4))
		json_object_set_new(m, "node", hostile(s, 0, 1));
	if (what <= 2 && one_in(s, 6))	/* opts that are not an object, on top */
		json_object_set_new(m, "opts", hostile(s, 1, 0));
	idj = json_object_get(m, "id");
	if (json_is_integer(idj))
		fz_job_sent(z, json_integer_value(idj), JX_USAGE);
	else
		z->noid_sent++;
	return m;
}

/* A job the agent runs: an engine (a server on any port, or a client of one
 * of those, or of a port where nothing listens), with hostile extras. */
static json_t *good_job(uint64_t *s, struct fz *z, json_int_t id)
{
	int coin = one_in(s, 2), far = one_in(s, 4), server = !z->nports || coin;
	uint64_t pick = tool_rand(s);
	json_t *m = job_template(s, id, server, z->nports && !far ? z->ports[pick % (uint64_t)z->nports] : 1);
	int i, n;

	if (one_in(s, 2)) {	/* labels: many */
		json_t *l = json_object();

		n = (int)below(s, 2) ? 1 + (int)below(s, 8) : 60 + (int)below(s, 400);
		for (i = 0; i < n; i++) {
			char k[32];

			snprintf(k, sizeof(k), "l%d", i);
			json_object_set_new(l, k, i % 7 == 3 ? hostile(s, 2, 0) : json_string("v"));
		}
		json_object_set_new(m, "labels", l);
	}
	if (one_in(s, 3)) {
		static const json_int_t dl[] = { 1, 50, 100000, -1, 0, LLONG_MAX, LLONG_MIN, INT_MAX };

		json_object_set_new(m, "deadline_ms", one_in(s, 5) ? json_string("soon") : json_integer(dl[below(s, NELEM(dl))]));
	}
	if (one_in(s, 6))
		json_object_set_new(m, "node", odd_string(s, 1));
	if (one_in(s, 6))
		json_object_set_new(m, "bind", json_string(one_in(s, 2) ? "" : "127.0.0.2"));
	if (!server && one_in(s, 6))	/* an option where the host goes */
		json_object_set_new(m, "host", json_string("--output=" INJECTED));
	if (one_in(s, 6))
		json_object_set_new(m, "opts", one_in(s, 2) ? json_string("x") : json_array());
	fz_job_sent(z, id, JX_ANY);
	return m;
}

/* One message of the stream (none of them may end the agent). */
static int fz_stream_one(uint64_t *s, struct fz *z, int *engines, json_int_t *next_id, struct fz_stats *st)
{
	json_t *m;
	int k = (int)below(s, 20), i, n, rc = 0;

	st->msgs++;
	if (k < 5) {		/* a job it cannot run */
		st->jobs++;
		return fz_send(z, bad_job(s, z));
	}
	if (k == 5 && *engines < 3) {	/* a job it runs */
		(*engines)++;
		st->engines++;
		st->jobs++;
		return fz_send(z, good_job(s, z, (*next_id)++));
	}
	if (k <= 8) {		/* ping */
		m = json_pack("{ss}", "type", "ping");
		if (!one_in(s, 4))
			json_object_set_new(m, "t", hostile(s, 0, 1));
		if (one_in(s, 2))
			json_object_set_new(m, "id", hostile(s, 0, 1));
		z->pings_sent++;
		return fz_send(z, m);
	}
	if (k == 9) {		/* a flood of pings */
		n = 20 + (int)below(s, 300);
		for (i = 0; i < n && !rc; i++) {
			z->pings_sent++;
			rc = fz_send(z, json_pack("{ss,si}", "type", "ping", "t", i));
		}
		return rc;
	}
	if (k <= 11) {		/* cancel */
		m = json_pack("{ss}", "type", "cancel");
		if (z->njobs && one_in(s, 2))
			json_object_set_new(m, "id", json_integer(z->jobs[below(s, (uint64_t)z->njobs)].id));
		else if (!one_in(s, 5))
			json_object_set_new(m, "id", hostile(s, 0, 1));
		return fz_send(z, m);
	}
	if (k == 12) {		/* error */
		m = json_pack("{ss}", "type", "error");
		if (!one_in(s, 4))
			json_object_set_new(m, "message", hostile(s, 0, 1));
		return fz_send(z, m);
	}
	if (k <= 15) {		/* junk types and fields */
		m = json_object();
		if (!one_in(s, 5))
			json_object_set_new(m, "type", junk_type(s));
		n = (int)below(s, 6);
		for (i = 0; i < n; i++) {
			static const char *const keys[] = { "id", "t", "message", "opts", "test", "x", "" };

			json_object_set_new(m, keys[below(s, NELEM(keys))], hostile(s, 0, 1));
		}
		return fz_send(z, m);
	}
	if (k == 16 && one_in(s, 3)) {	/* big: up to 3 MiB */
		m = json_pack("{ss,so}", "type", "noise", "pad", str_n(1 + below(s, 3u << 20), 'p'));
		return fz_send(z, m);
	}
	if (k == 17) {		/* nesting the parser still takes */
		size_t depth = 1 + below(s, 2000), len = 0;
		char *b = malloc(2 * depth + 64);

		len += (size_t)sprintf(b, "{\"type\":\"%s\",\"t\":", one_in(s, 2) ? "ping" : "nest");
		if (b[9] == 'p')
			z->pings_sent++;
		memset(b + len, '[', depth);
		len += depth;
		memset(b + len, ']', depth);
		len += depth;
		b[len++] = '}';
		rc = fz_frame(z, b, len);
		free(b);
		return rc;
	}
	/* bursts of whitespace-padded and key-reordered pings */
	{
		static const char *const raw[] = {
			"  {\"t\":1,\"type\":\"ping\"}  ", "\n{\"type\":\"ping\"}\n", "{\"type\":\"ping\",\"t\":{}}",
			"{\"type\":\"ping\",\"t\":\"\\u00e9\\ud83d\\ude00\"}",
		};
		const char *t = raw[below(s, NELEM(raw))];

		z->pings_sent++;
		return fz_frame(z, t, strlen(t));
	}
}

struct welcome_v {
	json_t *hb, *silence;
	int eff_hb, eff_silence;	/* what the agent makes of them */
};

/* The agent's reading of heartbeat_ms and silence_ms (clamped, see agent.c). */
static int clamp_ms(json_t *v, int dflt, json_int_t lo, json_int_t hi)
{
	json_int_t x;

	if (!json_is_integer(v))
		return dflt;
	x = json_integer_value(v);
	return (int)(x < lo ? lo : x > hi ? hi : x);
}

static void welcome_values(uint64_t *s, struct welcome_v *w, int short_silence)
{
	static const json_int_t v[] = {
		1000, 5000, 0, -5, 49, 50, 100, INT_MAX, (json_int_t)INT_MAX / 2 + 1, 4294967296LL,
		4294967297LL, 1LL << 40, LLONG_MAX, LLONG_MIN, INT_MIN,
	};

	if (short_silence) {
		w->hb = json_integer(one_in(s, 2) ? 50 : 100);
		w->silence = json_integer(one_in(s, 2) ? 200 : 400);
	} else {
		w->hb = one_in(s, 4) ? NULL : one_in(s, 5) ? hostile(s, 1, 0) : json_integer(v[below(s, NELEM(v))]);
		w->silence = one_in(s, 4) ? NULL : one_in(s, 5) ? hostile(s, 1, 0) : json_integer(v[below(s, NELEM(v))]);
	}
	w->eff_hb = clamp_ms(w->hb, FLEET_HEARTBEAT_MS, 50, 60000);
	w->eff_silence = clamp_ms(w->silence, FLEET_SILENCE_MS, 0, 86400000);
	if (w->eff_silence < 2 * w->eff_hb)
		w->eff_silence = 2 * w->eff_hb;
}

/* One agent's case: what the steps of fz_one share. */
struct fz_case {
	struct fz z;
	uint64_t *s;
	unsigned long it;
	const char *fabscope;
	struct fz_stats *st;
	char tag[96], token[128], cn[AUTH_NONCE_HEX + 1], how[160];
	int want, bound_ms, min_ms, engines, silent;
	json_int_t next_id;
	uint64_t t_end;		/* when the agent was given its ending: its exit is timed from it */
	enum ending end;
};

/* A step returns a negative code (a failed check, or -exit code), or one of these: go on
 * with the next step, or the agent has had its ending (wait for its exit). */
enum { FZ_NEXT = 0, FZ_ENDED = 1 };

static int fz_ended(struct fz_case *c, int want, const char *how)
{
	snprintf(c->how, sizeof(c->how), "%s", how);
	c->want = want;
	c->t_end = clock_ns();
	return FZ_ENDED;
}

/* No challenge, or no welcome: it must wait for its --timeout 1, and no longer. */
static int fz_no_reply(struct fz_case *c, const char *how)
{
	c->min_ms = 900;
	c->bound_ms = 7000;
	return fz_ended(c, FS_EXIT_PEER, how);
}

/* The agent started on a socketpair; 0, or the negative exit code (nothing to release). */
static int fz_case_start(struct fz_case *c, uint64_t *s, unsigned long it, const char *fabscope,
			 struct fz_stats *st)
{
	int rc;

	memset(c, 0, sizeof(*c));
	c->s = s;
	c->it = it;
	c->fabscope = fabscope;
	c->st = st;
	c->z.fd = c->z.errfd = -1;
	c->want = -1;
	c->bound_ms = 6000;
	c->next_id = 7000000000LL;
	c->end = E_CLOSE;
	keepalive_on = 0;
	snprintf(c->tag, sizeof(c->tag), "FABSCOPE_FUZZ_TAG=fleet-fuzz-%d-%lu", (int)getpid(), it);
	snprintf(c->token, sizeof(c->token), "fuzz-token-%lu-%016llx", it, (unsigned long long)tool_rand(s));
	c->silent = one_in(s, 25) ? 1 + (int)below(s, 2) : 0;	/* 1: no challenge, 2: no welcome */
	rc = fz_spawn(&c->z, fabscope, c->token, c->tag + strlen("FABSCOPE_FUZZ_TAG="), c->silent ? "1" : "3");
	if (rc)
		return rc;
	st->agents++;
	return 0;
}

/* A challenge of another protocol, without a nonce of 64 characters, of another version,
 * or a bad frame instead; then closed. */
static int fz_bad_challenge(struct fz_case *c)
{
	uint64_t *s = c->s;
	json_t *m = json_pack("{ss,ss,si}", "type", "challenge", "proto", FLEET_PROTO, "version", wire_version());
	int what = (int)below(s, 7), want = FS_EXIT_PEER, rc;
	const char *how;

	auth_nonce(c->cn);
	json_object_set_new(m, "nonce", json_string(c->cn));
	switch (what) {
	case 0:
		json_object_set_new(m, "proto", one_in(s, 2) ? json_string("fabscope-fleet2") : hostile(s, 0, 1));
		if (json_is_string(json_object_get(m, "proto")) && !strcmp(jstr(m, "proto"), FLEET_PROTO))
			json_object_del(m, "proto");
		how = "a challenge of another protocol";
		break;
	case 1:
		if (one_in(s, 2))
			json_object_del(m, "nonce");
		else
			json_object_set_new(m, "nonce", one_in(s, 2) ? json_string("abcd") : hostile(s, 0, 1));
		if (json_is_string(json_object_get(m, "nonce")) && strlen(jstr(m, "nonce")) == AUTH_NONCE_HEX)
			json_object_set_new(m, "nonce", json_string(""));
		how = "a challenge without a nonce of 64 characters";
		break;
	case 2: {	/* a version it does not speak: it says so (error) and exits 3 */
		static const json_int_t vv[] = { 0, 2, -1, 99, INT_MAX, INT_MIN };

		if (one_in(s, 3))
			json_object_del(m, "version");
		else
			json_object_set_new(m, "version", one_in(s, 3) ? json_string("1") : json_integer(vv[below(s, NELEM(vv))]));
		want = FS_EXIT_ENV;
		how = "a challenge of another version";
		break;
	}
	default: {	/* a bad frame instead */
		size_t len;
		uint8_t *b = bad_frame(s, what - 3 + (int)below(s, 3), &len);

		json_decref(m);
		m = NULL;
		rc = fz_put(&c->z, b, len);
		free(b);
		if (rc < 0)
			return rc;
		how = "a bad frame for a challenge";
		break;
	}
	}
	if (m && (rc = fz_send(&c->z, m)) < 0)
		return rc;
	shutdown(c->z.fd, SHUT_WR);
	return fz_ended(c, want, how);
}

/* A truncated challenge, or random bytes, then closed. */
static int fz_truncated_challenge(struct fz_case *c)
{
	uint8_t b[64];
	size_t n = 1 + below(c->s, sizeof(b));
	int i, rc;

	for (i = 0; i < (int)n; i++)
		b[i] = (uint8_t)tool_rand(c->s);
	if (one_in(c->s, 2))
		put32(b, (uint32_t)(20 + below(c->s, 1000)));	/* a length, then too few bytes */
	if ((rc = fz_put(&c->z, b, n)) < 0)
		return rc;
	shutdown(c->z.fd, SHUT_WR);
	return fz_ended(c, FS_EXIT_PEER, "a truncated challenge");
}

/* A valid challenge: our nonce, hex or not, and extra fields. */
static int fz_valid_challenge(struct fz_case *c)
{
	json_t *m;
	int i, rc;

	if (one_in(c->s, 4)) {
		for (i = 0; i < AUTH_NONCE_HEX; i++)
			c->cn[i] = (char)('g' + below(c->s, 20));
		c->cn[AUTH_NONCE_HEX] = 0;
	} else {
		auth_nonce(c->cn);
	}
	m = json_pack("{ss,ss,si,ss}", "type", "challenge", "proto", FLEET_PROTO,
		      "version", wire_version(), "nonce", c->cn);
	if (one_in(c->s, 3))
		json_object_set_new(m, "extra", hostile(c->s, 0, 1));
	c->z.ch = json_incref(m);
	rc = fz_send(&c->z, m);
	return rc < 0 ? rc : FZ_NEXT;
}

/* 1. the challenge: none, a bad one, a truncated one, or a valid one */
static int fz_challenge(struct fz_case *c)
{
	int k = (int)below(c->s, 100);

	if (c->silent == 1)
		return fz_no_reply(c, "no challenge");
	if (k < 16)
		return fz_bad_challenge(c);
	if (k < 20)
		return fz_truncated_challenge(c);
	return fz_valid_challenge(c);
}

/* No register after a valid challenge: could it not be run at all? */
static int fz_no_register(struct fz_case *c)
{
	struct fz *z = &c->z;
	int status = 0;

	if (z->eof) {
		uint64_t dl = clock_ns() + 3000 * MS;

		while (clock_ns() < dl && waitpid(z->pid, &status, WNOHANG) == 0)
			usleep(10000);
		if (waitpid(z->pid, NULL, WNOHANG) < 0) {	/* reaped above */
			z->pid = 0;
			if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
				return fs_err_env("cannot run %s", c->fabscope);
		}
	}
	return failf("no register within 8 s after a valid challenge%s", z->eof ? " (it closed)" : "");
}

/* The handshake's mac of role, over the nonces and our challenge, its register and m
 * (NULL: the first two only), as the coordinator makes it: 0, or -1 said */
static int fz_hs_mac(struct fz_case *c, const char *token, const char *role, json_t *m, char *mac)
{
	const char *an = jstr(c->z.reg, "nonce");
	json_t *hs[3] = { c->z.ch, c->z.reg, m };
	int agent = !strcmp(role, "agent");

	if (auth_mac_msgs(token, role, agent ? c->cn : an, agent ? an : c->cn, hs, m ? 3 : 2, mac))
		return failf("internal: out of memory for a mac");
	return 0;
}

/* 2. its register: in time, with its fields, and its mac over the nonces, our challenge
 * and itself */
static int fz_register(struct fz_case *c)
{
	struct fz *z = &c->z;
	json_t *r, *eps;
	const char *an;
	uint8_t raw[AUTH_NONCE_HEX / 2];
	int rc = FZ_WAIT(z, 8000, z->reg || z->eof);

	if (rc < 0)
		return rc;
	if (!z->reg)
		return fz_no_register(c);
	r = z->reg;
	eps = json_object_get(r, "endpoints");
	an = jstr(r, "nonce");
	if (!jstr(r, "proto") || strcmp(jstr(r, "proto"), FLEET_PROTO) ||
	    json_integer_value(json_object_get(r, "version")) != wire_version() ||
	    !jstr(r, "tool_version") || !an || hmac_unhex(an, raw, sizeof(raw)) ||
	    !jstr(r, "node") || strcmp(jstr(r, "node"), "fz") || !jstr(r, "host") ||
	    json_integer_value(json_object_get(r, "pid")) != z->pid || !json_is_array(eps))
		return failf("a register without the fields it must have");
	{
		json_t *hs[2] = { c->z.ch, r };

		if (!auth_mac_msgs_ok(c->token, "agent", c->cn, an, hs, 2, jstr(r, "mac")))
			return failf("the register's mac does not prove the token over the handshake");
	}
	return FZ_NEXT;
}

/* A mac of welcome m, but not the right one: of the wrong role, of the nonces swapped, of
 * another token, over the nonces only (as protocol 4 had it), over another welcome (a field
 * changed after the mac was made), or random. */
static int wrong_welcome_mac(struct fz_case *c, const char *an, json_t *m, char *mac)
{
	json_t *other;
	int rc = 0;

	switch (below(c->s, 6)) {
	case 0:
		rc = fz_hs_mac(c, c->token, "agent", m, mac);
		break;
	case 1:
		auth_mac(c->token, "coordinator", c->cn, an, mac);
		break;
	case 2:
		rc = fz_hs_mac(c, "not-the-token", "coordinator", m, mac);
		break;
	case 3:
		auth_mac(c->token, "coordinator", an, c->cn, mac);
		break;
	case 4:
		other = json_deep_copy(m);
		json_object_set_new(other, "silence_ms", json_integer(1 + (json_int_t)below(c->s, 100000)));
		rc = fz_hs_mac(c, c->token, "coordinator", other, mac);
		json_decref(other);
		break;
	default:
		auth_nonce(mac);
		break;
	}
	return rc;
}

/* No mac, or one that is not 64 hex digits. */
static int mangled_welcome_mac(struct fz_case *c, json_t *m)
{
	uint64_t *s = c->s;
	char mac[AUTH_NONCE_HEX + 1];

	if (fz_hs_mac(c, c->token, "coordinator", m, mac))
		return -1;
	if (one_in(s, 3)) {
		mac[63] = 0;
		json_object_set_new(m, "mac", json_string(mac));
	} else if (one_in(s, 2)) {
		mac[10] = 'g';
		json_object_set_new(m, "mac", json_string(mac));
	} else if (one_in(s, 2)) {
		json_object_set_new(m, "mac", hostile(s, 0, 1));
		if (json_is_string(json_object_get(m, "mac")))
			json_object_set_new(m, "mac", json_integer(1));
	}
	return 0;
}

/* A welcome it must refuse (a wrong mac or none, an error, another message), or a bad
 * frame for one. */
static int fz_refused_welcome(struct fz_case *c)
{
	uint64_t *s = c->s;
	const char *an = jstr(c->z.reg, "nonce"), *how;
	char mac[AUTH_NONCE_HEX + 1];
	json_t *m = json_pack("{ss,ss}", "type", "welcome", "node", "fz");
	int what = (int)below(s, 6), want = FS_EXIT_ENV, rc;

	switch (what) {
	case 0:
		if (wrong_welcome_mac(c, an, m, mac))
			return -1;
		json_object_set_new(m, "mac", json_string(mac));
		how = "a welcome with a wrong mac";
		break;
	case 1:
		if (mangled_welcome_mac(c, m))
			return -1;
		how = "a welcome without a mac";
		break;
	case 2:		/* an error */
		json_object_set_new(m, "type", json_string("error"));
		if (!one_in(s, 3))
			json_object_set_new(m, "message", hostile(s, 0, 1));
		how = "an error for a welcome";
		break;
	case 3:		/* not a welcome */
		if (one_in(s, 2))
			json_object_del(m, "type");
		else
			json_object_set_new(m, "type", junk_type(s));
		if (json_is_string(json_object_get(m, "type")) && !strcmp(jstr(m, "type"), "welcome"))
			json_object_del(m, "type");
		if (fz_hs_mac(c, c->token, "coordinator", m, mac))
			return -1;
		json_object_set_new(m, "mac", json_string(mac));
		how = "another message for a welcome";
		break;
	default: {	/* a bad frame */
		size_t len;
		uint8_t *b = bad_frame(s, (int)below(s, 6), &len);

		json_decref(m);
		m = NULL;
		rc = fz_put(&c->z, b, len);
		free(b);
		if (rc < 0)
			return rc;
		shutdown(c->z.fd, SHUT_WR);
		want = FS_EXIT_PEER;
		how = "a bad frame for a welcome";
		break;
	}
	}
	if (what < 2) {	/* a welcome that fails its mac: the agent says why under the session's MAC */
		uint8_t key[WIRE_MAC_LEN];

		auth_session_key(c->token, c->cn, an, key);
		wire_mac_start(&c->z.rd.mac, key, 'a');
	}
	if (m && (rc = fz_send(&c->z, m)) < 0)
		return rc;
	return fz_ended(c, want, how);
}

/* A valid welcome (its mac in either case, odd heartbeat_ms and silence_ms), with the
 * ending drawn; then the session's MACs, both ways. */
static int fz_valid_welcome(struct fz_case *c)
{
	uint64_t *s = c->s;
	struct welcome_v w;
	char mac[AUTH_NONCE_HEX + 1];
	uint8_t key[WIRE_MAC_LEN];
	json_t *m;
	int i, rc;

	c->end = (enum ending)below(s, E_NENDINGS);	/* E_SILENT: a short silence_ms, cheap */
	welcome_values(s, &w, c->end == E_SILENT);
	if (c->end != E_SILENT && w.eff_silence < 2000)
		c->end = E_SILENT;	/* it may give up on us in any pause */
	m = json_pack("{ss,ss}", "type", "welcome", "node", "fz");
	if (w.hb)
		json_object_set_new(m, "heartbeat_ms", w.hb);
	if (w.silence)
		json_object_set_new(m, "silence_ms", w.silence);
	if (fz_hs_mac(c, c->token, "coordinator", m, mac)) {
		json_decref(m);
		return -1;
	}
	if (one_in(s, 4))	/* the agent reads hex in either case */
		for (i = 0; mac[i]; i++)
			if (mac[i] >= 'a' && mac[i] <= 'f')
				mac[i] = (char)(mac[i] - 'a' + 'A');
	json_object_set_new(m, "mac", json_string(mac));
	if ((rc = fz_send(&c->z, m)) < 0)
		return rc;
	if (rc)
		return failf("the agent went away after a valid welcome");
	auth_session_key(c->token, c->cn, jstr(c->z.reg, "nonce"), key);
	wire_mac_start(&c->z.tx, key, 'c');
	wire_mac_start(&c->z.rd.mac, key, 'a');
	keepalive_on = c->end != E_SILENT;
	return FZ_NEXT;
}

/* 3. the welcome: none, one it must refuse, or a valid one */
static int fz_welcome(struct fz_case *c)
{
	int k = (int)below(c->s, 100);

	if (c->silent == 2)
		return fz_no_reply(c, "no welcome");
	if (k < 18)
		return fz_refused_welcome(c);
	return fz_valid_welcome(c);
}

/* After the stream the agent lives on: the live ping is answered, every ping before it
 * too, and every job message it refused. */
static int fz_live(struct fz_case *c)
{
	struct fz *z = &c->z;
	long pings;	/* up to the live one (keepalives may follow it) */
	int j, rc;

	z->live_t = 0x5eed0000LL + (json_int_t)c->it;
	pings = ++z->pings_sent;
	if ((rc = fz_send(z, json_pack("{ss,sI,ss}", "type", "ping", "t", z->live_t, "id", "live"))) < 0)
		return rc;
	rc = FZ_WAIT(z, 10000, z->live_seen || z->eof);
	if (rc < 0)
		return rc;
	if (!z->live_seen)
		return failf("no pong within 10 s after the stream%s", z->eof ? " (it went away)" : "");
	if (z->pongs < pings)
		return failf("%ld pings, %ld pongs", pings, z->pongs);
	if (z->errors < z->noid_sent)
		return failf("%d job messages without an id, %ld errors", z->noid_sent, z->errors);
	for (j = 0; j < z->njobs; j++)
		if (z->jobs[j].expect == JX_USAGE && z->jobs[j].done < z->jobs[j].sent)
			return failf("job %lld: not answered before a later ping", (long long)z->jobs[j].id);
	if (c->engines && one_in(c->s, 2))	/* let the engines run a while */
		if ((rc = FZ_WAIT(z, 100 + (int)below(c->s, 400), z->eof)) < 0)
			return rc;
	return FZ_NEXT;
}

/* 4. the stream: hostile but well-framed messages (a short silence_ms may end it) */
static int fz_stream(struct fz_case *c)
{
	struct fz *z = &c->z;
	int k = c->end == E_SILENT ? (int)below(c->s, 4) : 1 + (int)below(c->s, 60), i, rc;

	for (i = 0; i < k; i++) {
		if ((rc = fz_stream_one(c->s, z, &c->engines, &c->next_id, c->st)) < 0)
			return rc;
		if (rc > 0 || z->eof) {
			if (c->end == E_SILENT)
				break;	/* a short silence_ms may end it: fine */
			return failf("the agent went away in the middle of the stream (message %d of %d)", i + 1, k);
		}
		if ((rc = fz_pump(z, 0)) < 0)
			return rc;
	}
	return c->end == E_SILENT ? FZ_NEXT : fz_live(c);
}

/* The ending E_ZERO..E_NOTJSON: a frame refused as a whole.  Lengths are refused before
 * any MAC; a bad body comes with a good MAC, so that the parser behind it is what
 * refuses it. */
static int fz_end_bad_frame(struct fz_case *c)
{
	size_t len;
	uint8_t *b = bad_frame(c->s, c->end - E_ZERO, &len);
	int rc;

	rc = c->end == E_ZERO || c->end == E_HUGE ? fz_put(&c->z, b, len) : fz_frame(&c->z, (char *)b + 4, len - 4);
	free(b);
	return rc;
}

/* E_FORGED: a ping injected (a MAC of another key), replayed (an old number) or changed. */
static int fz_end_forged(struct fz_case *c)
{
	json_t *m = json_pack("{ss,sI}", "type", "ping", "t", (json_int_t)42);
	char *t = json_dumps(m, JSON_COMPACT);
	size_t tl = strlen(t);
	uint8_t h[4], mac[WIRE_MAC_LEN];
	struct wire_mac f = c->z.tx;
	int how = (int)below(c->s, 3), rc;

	if (how == 1 && !f.seq)
		how = 0;	/* (nothing to replay yet) */
	if (how == 0)
		memset(f.key, 0x5a, sizeof(f.key));
	else if (how == 1 && f.seq)
		f.seq--;
	wire_mac_of(&f, t, tl, mac);
	if (how == 2)
		t[tl / 2] ^= 1;	/* the body changed on the way */
	put32(h, (uint32_t)(tl + WIRE_MAC_LEN));
	rc = fz_put(&c->z, h, 4);
	if (!rc)
		rc = fz_put(&c->z, t, tl);
	if (!rc)
		rc = fz_put(&c->z, mac, WIRE_MAC_LEN);
	free(t);
	json_decref(m);
	return rc;
}

/* E_TRUNC: a frame cut short (in its length, or its body), then closed. */
static int fz_end_truncated(struct fz_case *c)
{
	json_t *m = json_pack("{ss,ss}", "type", "ping", "t", "cut");
	char *t = json_dumps(m, JSON_COMPACT);
	uint8_t h[4];
	size_t hn = one_in(c->s, 3) ? 1 + below(c->s, 3) : 4;
	int rc;

	put32(h, (uint32_t)strlen(t) + (one_in(c->s, 2) ? 0 : 1000));
	rc = fz_put(&c->z, h, hn);
	if (!rc && hn == 4)
		rc = fz_put(&c->z, t, below(c->s, strlen(t)));
	free(t);
	json_decref(m);
	shutdown(c->z.fd, SHUT_WR);
	return rc;
}

/* E_RANDOM: random bytes, then closed. */
static int fz_end_random(struct fz_case *c)
{
	uint8_t b[256];
	size_t n = 1 + below(c->s, sizeof(b));
	int i, rc;

	for (i = 0; i < (int)n; i++)
		b[i] = (uint8_t)tool_rand(c->s);
	rc = fz_put(&c->z, b, n);
	shutdown(c->z.fd, SHUT_WR);
	return rc;
}

/* 5. the end drawn with the welcome */
static int fz_ending(struct fz_case *c)
{
	int rc = 0;

	keepalive_on = 0;
	snprintf(c->how, sizeof(c->how), "%s", ending_name[c->end]);
	c->want = c->end == E_BYE ? 0 : FS_EXIT_PEER;
	c->t_end = clock_ns();
	switch (c->end) {
	case E_CLOSE:
		shutdown(c->z.fd, SHUT_WR);
		break;
	case E_BYE:
		rc = fz_send(&c->z, one_in(c->s, 3) ? json_pack("{ss,so}", "type", "bye", "why", hostile(c->s, 0, 1)) :
				     json_pack("{ss}", "type", "bye"));
		break;
	case E_ZERO:
	case E_HUGE:
	case E_DEEP:
	case E_NUL:
	case E_NOTOBJ:
	case E_NOTJSON:
		rc = fz_end_bad_frame(c);
		break;
	case E_FORGED:
		rc = fz_end_forged(c);
		break;
	case E_TRUNC:
		rc = fz_end_truncated(c);
		break;
	case E_RANDOM:
		rc = fz_end_random(c);
		break;
	default:	/* E_SILENT: we say nothing; the agent gives up after silence_ms */
		c->bound_ms = 6000;
		break;
	}
	return rc < 0 ? rc : FZ_ENDED;
}

/* Its last words are on stderr: read them all; one must say why it exited. */
static int fz_last_words(struct fz_case *c)
{
	struct fz *z = &c->z;
	uint64_t dl = clock_ns() + 3000 * MS;

	while ((z->errfd >= 0 || !z->eof) && clock_ns() < dl)
		if (fz_pump(z, 20) < 0)
			return -1;
	if (c->want && !strstr(z->errtail, "fabscope agent: "))
		return failf("the agent exited %d after %s without a line saying why", c->want, c->how);
	if (c->want < 5)
		c->st->by_code[c->want]++;
	return 0;
}

/* 6. it exits, in time, with the code the ending calls for, saying why */
static int fz_exit_check(struct fz_case *c)
{
	struct fz *z = &c->z;
	uint64_t dl = c->t_end + (uint64_t)c->bound_ms * MS;
	int status = 0;

	while (waitpid(z->pid, &status, WNOHANG) == 0) {
		if (clock_ns() > dl) {
			kill(z->pid, SIGKILL);
			waitpid(z->pid, &status, 0);
			z->pid = 0;
			return failf("the agent did not exit within %.1f s after %s", c->bound_ms / 1000.0, c->how);
		}
		if (fz_pump(z, 10) < 0)
			return -1;
	}
	z->pid = 0;
	if (WIFSIGNALED(status))
		return failf("the agent died of signal %d after %s", WTERMSIG(status), c->how);
	if (WEXITSTATUS(status) == 127)
		return fs_err_env("cannot run %s", c->fabscope);
	if (WEXITSTATUS(status) != c->want)
		return failf("the agent exited %d after %s, expected %d", WEXITSTATUS(status), c->how, c->want);
	if (c->min_ms && clock_ns() - c->t_end < (uint64_t)c->min_ms * MS)
		return failf("the agent gave up after %.1f s of %s, before its --timeout 1",
			     (clock_ns() - c->t_end) / 1e9, c->how);
	return fz_last_words(c);
}

/* 7. nothing of its jobs is left, and no job took a host for an option */
static int fz_leftovers(struct fz_case *c)
{
	pid_t p = 0;
	int n = 0, tries;

	for (tries = 0; tries < 30 && (n = tagged(c->tag, &p)); tries++)
		usleep(100000);
	if (n)
		return failf("%d process(es) of its jobs outlived the agent (pid %d, after %s)", n, (int)p, c->how);
	if (!access(INJECTED, F_OK))
		return failf("a job's host was taken for an option: %s was written", INJECTED);
	return 0;
}

/* The agent and what is left of its jobs killed; after a failed check, its last words. */
static void fz_case_release(struct fz_case *c, int failed)
{
	struct fz *z = &c->z;

	if (z->pid > 0) {
		kill(z->pid, SIGKILL);
		waitpid(z->pid, NULL, 0);
	}
	if (failed) {
		pid_t p = 0;

		while (tagged(c->tag, &p) && p > 0) {	/* ours, by pid */
			kill(p, SIGKILL);
			usleep(10000);
			p = 0;
		}
		if (z->errfd >= 0)
			fz_pump(z, 100);
		if (z->errlen)
			fprintf(stderr, "%s: the agent's last words:\n%s\n", ctx, z->errtail);
	}
	if (z->fd >= 0)
		close(z->fd);
	if (z->errfd >= 0)
		close(z->errfd);
	wire_rd_release(&z->rd);
	json_decref(z->ch);
	json_decref(z->reg);
}

/* The life of one agent; 0, or -1 (a failed check), or -exit code. */
static int fz_one(uint64_t *s, unsigned long it, const char *fabscope, struct fz_stats *st)
{
	struct fz_case c;
	int rc;

	rc = fz_case_start(&c, s, it, fabscope, st);
	if (rc)
		return rc;
	rc = fz_challenge(&c);
	if (rc == FZ_NEXT)
		rc = fz_register(&c);
	if (rc == FZ_NEXT)
		rc = fz_welcome(&c);
	if (rc == FZ_NEXT)
		rc = fz_stream(&c);
	if (rc == FZ_NEXT)
		rc = fz_ending(&c);
	if (rc == FZ_ENDED)
		rc = fz_exit_check(&c);
	if (!rc)
		rc = fz_leftovers(&c);
	fz_case_release(&c, rc);
	return rc;
}

static int fuzz_agent(unsigned long n, unsigned long long seed, const char *fabscope)
{
	struct fz_stats st;
	uint64_t s = seed;
	unsigned long it;
	int rc = 0;

	memset(&st, 0, sizeof(st));
	if (access(fabscope, X_OK))
		return fs_err_env("cannot run '%s': %s", fabscope, strerror(errno)) ? FS_EXIT_ENV : 0;
	unlink(INJECTED);
	for (it = 0; it < n && !rc; it++) {
		snprintf(ctx, sizeof(ctx), "seed %llu agent %lu", seed, it);
		rc = fz_one(&s, it, fabscope, &st);
	}
	if (rc)
		return -rc;	/* -1: a check failed */
	printf("agents %lu exit0 %lu exit3 %lu exit4 %lu engines %lu jobs %lu messages %lu\n", st.agents,
	       st.by_code[0], st.by_code[3], st.by_code[4], st.engines, st.jobs, st.msgs);
	return 0;
}

/* ======================================================================
 * coord: hostile agents against a real coordinator
 * ====================================================================== */

#define CZ_MAXSILENT 32
#define CZ_MAXJOBS 256

struct silent {
	int fd;
	uint64_t opened_ns;
	int kind;
};

struct mjob {
	json_int_t id;
	int client, answered;
	uint64_t got_ns;
};

struct cz {
	uint64_t *s;
	const char *token;
	struct net_addr dst;
	double agent_timeout;
	/* the member, fz */
	int mfd;
	struct wire_rd mrd;	/* (mrd.mac: the coordinator's messages are checked once fz joined) */
	struct wire_mac mtx;	/* fz's, MAC'd once it joined */
	int mbye, mgone;
	uint64_t m_last_ns;
	struct mjob jobs[CZ_MAXJOBS];
	int njobs;
	json_int_t own[2 * CZ_MAXJOBS];	/* every id fz was given */
	int nown;
	int run_started, hold;
	int plain_name;		/* the next new name is a plain one */
	json_t *hch;		/* the challenge a hostile connection got (its register's mac covers it) */
	/* connections left silent */
	struct silent silent[CZ_MAXSILENT];
	int nsilent;
	/* what happened */
	long conns, refused, closed, silent_closed, jobs_seen, pings, records_sent, msgs;
};

static int cz_is_own(struct cz *c, json_int_t id)
{
	int i;

	for (i = 0; i < c->nown; i++)
		if (c->own[i] == id)
			return 1;
	return 0;
}

/* An id near fz's own that is not one of them: another agent's, or nobody's. */
static json_t *cz_other_id(struct cz *c)
{
	json_int_t id;
	int tries;

	if (one_in(c->s, 6))
		return hostile(c->s, 1, 0);
	for (tries = 0; tries < 100; tries++) {
		id = c->nown ? c->own[below(c->s, (uint64_t)c->nown)] + (json_int_t)below(c->s, 13) - 6 :
			       (json_int_t)below(c->s, 20);
		if (one_in(c->s, 8))
			id = edge_ints[below(c->s, NELEM(edge_ints))];
		if (!cz_is_own(c, id))
			return json_integer(id);
	}
	return json_integer(-12345);
}

/* Send a message on the member's connection (the reference is taken). */
static int cz_msend(struct cz *c, json_t *m)
{
	int rc;

	if (!m)
		return failf("internal: a message could not be built");
	if (c->mgone) {
		json_decref(m);
		return 0;
	}
	rc = wire_send_mac(c->mfd, &c->mtx, m, 5000);
	json_decref(m);
	c->msgs++;
	if (rc == -ETIMEDOUT)
		return failf("the coordinator read nothing from fz for 5 s");
	if (rc)
		c->mgone = 1;	/* checked at the end */
	c->m_last_ns = clock_ns();
	return 0;
}

/* A record: an object with odd fields, now and then huge; or not an object. */
static json_t *cz_record(struct cz *c)
{
	json_t *r;

	if (one_in(c->s, 5))
		return hostile(c->s, 1, 1);
	r = json_pack("{ss,ss,ss}", "test", one_in(c->s, 2) ? "bw" : "lat", "status", one_in(c->s, 2) ? "ok" : "error",
		      "scope", one_in(c->s, 2) ? "aggregate" : "flow");
	json_object_set_new(r, "metrics", one_in(c->s, 3) ? hostile(c->s, 1, 0) :
			    json_pack("{so,so}", "bw_gbps", hostile(c->s, 2, 0), "lat_us", hostile(c->s, 2, 0)));
	if (one_in(c->s, 3)) {
		static const char *const keys[] = { "src", "dst", "labels", "dir", "run", "job", "phase", "round" };

		json_object_set_new(r, keys[below(c->s, NELEM(keys))], hostile(c->s, 1, 1));
	}
	if (one_in(c->s, 10))
		json_object_set_new(r, "pad", str_n(1 + below(c->s, 2u << 20), 'r'));
	return r;
}

/* Hostile messages that are not for fz's own jobs: the coordinator must ignore them. */
static int cz_burst(struct cz *c)
{
	int n = 3 + (int)below(c->s, 30), i, rc = 0;

	/* the extreme ids every time (an id minus the round's first must not overflow) */
	rc = cz_msend(c, json_pack("{ss,sI,si}", "type", "listening", "id", (json_int_t)LLONG_MIN, "port", 1));
	if (!rc)
		rc = cz_msend(c, json_pack("{ss,si,sI}", "type", "pong", "t", 1, "id", (json_int_t)LLONG_MIN));
	if (!rc)
		rc = cz_msend(c, json_pack("{ss,sI,si}", "type", "done", "id", (json_int_t)LLONG_MAX, "exit", 0));
	for (i = 0; i < n && !rc; i++) {
		json_t *m;

		switch (below(c->s, 10)) {
		case 0:
		case 1:
			m = json_pack("{ss,so,so}", "type", "record", "id", cz_other_id(c), "record", cz_record(c));
			break;
		case 2:
			m = json_pack("{ss,so,so}", "type", "listening", "id", cz_other_id(c), "port", hostile(c->s, 1, 0));
			break;
		case 3:
			m = json_pack("{ss,so,so,so}", "type", "done", "id", cz_other_id(c), "exit", hostile(c->s, 1, 0),
				      "error", hostile(c->s, 1, 1));
			break;
		case 4: {	/* a flood of heartbeats */
			int k, f = 20 + (int)below(c->s, 300);

			for (k = 0; k < f && !rc; k++)
				rc = cz_msend(c, json_pack("{ss,so}", "type", "heartbeat", "jobs", one_in(c->s, 3) ?
							   hostile(c->s, 2, 0) : json_integer(k)));
			continue;
		}
		case 5:
			/* t > 0 is a ping phase's send time: for any other job it must be ignored */
			m = json_pack("{ss,so,so}", "type", "pong", "t", one_in(c->s, 2) ? hostile(c->s, 1, 0) :
				      json_integer(1 + (json_int_t)below(c->s, 1000000000)), "id", cz_other_id(c));
			break;
		case 6:
			m = json_pack("{ss,so}", "type", "error", "message", hostile(c->s, 0, 1));
			break;
		case 7:	/* register again, with another name */
			m = json_pack("{ss,ss,si,ss,ss,ss}", "type", "register", "proto", FLEET_PROTO, "version",
				      wire_version(), "node", "fz2", "nonce", "00", "mac", "00");
			break;
		default:
			m = json_object();
			if (!one_in(c->s, 4))
				json_object_set_new(m, "type", junk_type(c->s));
			json_object_set_new(m, "id", cz_other_id(c));
			json_object_set_new(m, "x", hostile(c->s, 0, 1));
			break;
		}
		rc = cz_msend(c, m);
	}
	return rc;
}

/* fz's answer to one of its jobs: hostile, and the job fails. */
static int cz_answer(struct cz *c, struct mjob *j)
{
	static const json_int_t ports[] = { 1, 0, -1, 65536, 70000, 4294967297LL };
	static const json_int_t exits[] = { 1, 2, 3, 4, 127, 255, -1, INT_MIN, 65536, INT_MAX };
	int rc = cz_burst(c), i, n;

	j->answered = 1;
	if (rc)
		return rc;
	if (!j->client) {
		if (one_in(c->s, 2))	/* it listens where nothing does: the real client fails */
			rc = cz_msend(c, json_pack("{ss,sI,sI}", "type", "listening", "id", j->id,
						   "port", ports[below(c->s, NELEM(ports))]));
	} else {
		n = (int)below(c->s, 5);
		for (i = 0; i < n && !rc; i++) {
			c->records_sent++;
			rc = cz_msend(c, json_pack("{ss,sI,so}", "type", "record", "id", j->id, "record", cz_record(c)));
		}
	}
	if (!rc)
		rc = cz_msend(c, json_pack("{ss,sI,sI,so}", "type", "done", "id", j->id,
					   "exit", exits[below(c->s, NELEM(exits))], "error", odd_string(c->s, 1)));
	return rc;
}

/* One message from the coordinator to fz. */
static int cz_mmsg(struct cz *c, json_t *m)
{
	const char *type = jstr(m, "type");
	char *text = json_dumps(m, JSON_COMPACT), head[200];
	json_t *id = json_object_get(m, "id");

	snprintf(head, sizeof(head), "%s", text ? text : "?");
	free(text);
	if (!type)
		return failf("the coordinator sent fz a message without a type: %s", head);
	if (!strcmp(type, "ping")) {
		c->pings++;
		if (json_is_integer(id)) {	/* a ping phase's: answered as an agent does */
			c->run_started = 1;
			if (c->nown < (int)NELEM(c->own))
				c->own[c->nown++] = json_integer_value(id);
			return cz_msend(c, json_pack("{ss,sO?,sO}", "type", "pong", "t", json_object_get(m, "t"), "id", id));
		}
		if (one_in(c->s, 2))
			return cz_msend(c, json_pack("{ss,sO?}", "type", "pong", "t", json_object_get(m, "t")));
		return 0;
	}
	if (!strcmp(type, "job")) {
		const char *role = jstr(m, "role");
		json_t *opts = json_object_get(m, "opts"), *v;
		const char *k;

		if (!json_is_integer(id) || !jstr(m, "test") || !role ||
		    (strcmp(role, "server") && strcmp(role, "client")) || !json_is_object(opts) ||
		    (!strcmp(role, "client") && (!jstr(m, "host") || !json_is_integer(json_object_get(m, "port")))))
			return failf("a job message that is not one: %s", head);
		json_object_foreach(opts, k, v)
			if (!json_is_string(v))
				return failf("a job option that is not a string: %s", head);
		c->run_started = 1;
		c->jobs_seen++;
		if (c->nown < (int)NELEM(c->own))
			c->own[c->nown++] = json_integer_value(id);
		if (c->njobs < CZ_MAXJOBS) {
			struct mjob *j = &c->jobs[c->njobs++];

			j->id = json_integer_value(id);
			j->client = !strcmp(role, "client");
			j->answered = 0;
			j->got_ns = clock_ns();
		}
		return 0;
	}
	if (!strcmp(type, "cancel")) {	/* (also of jobs never sent: their partner was missing) */
		if (!json_is_integer(id))
			return failf("a cancel without an id: %s", head);
		return 0;
	}
	if (!strcmp(type, "bye")) {
		c->mbye = 1;
		return 0;
	}
	if (!strcmp(type, "error"))
		return failf("the coordinator sent fz an error: %s", head);
	return failf("the coordinator sent fz an unknown message: %s", head);
}

/* Serve fz and watch the silent connections for up to ms; with xfd >= 0,
 * return as soon as it is readable (*xready). */
static int cz_serve(struct cz *c, int ms, int xfd, int *xready)
{
	struct pollfd p[2 + CZ_MAXSILENT];
	int n = 0, i, rc = 0;
	uint64_t now;

	if (xready)
		*xready = 0;
	p[n].fd = c->mgone || c->mbye ? -1 : c->mfd;
	p[n++].events = POLLIN;
	p[n].fd = xfd;
	p[n++].events = POLLIN;
	for (i = 0; i < c->nsilent; i++) {
		p[n].fd = c->silent[i].fd;
		p[n++].events = POLLIN;
	}
	if (poll(p, (nfds_t)n, ms) < 0 && errno != EINTR)
		return failf("poll: %s", strerror(errno));
	now = clock_ns();
	if (p[0].revents) {
		for (;;) {
			json_t *m;
			int r = wire_read_some(c->mfd, &c->mrd, &m, 64u << 20);

			if (r == 0)
				break;
			if (r < 0) {
				if (r != -ECONNRESET)
					return failf("the coordinator sent fz a bad frame: %s", wire_strerror(r));
				c->mgone = 1;
				break;
			}
			rc = cz_mmsg(c, m);
			json_decref(m);
			if (rc || c->mbye)
				break;
		}
		if (rc)
			return rc;
	}
	if (xfd >= 0 && p[1].revents && xready)
		*xready = 1;
	for (i = 0; i < c->nsilent; i++) {
		struct silent *k = &c->silent[i];
		char buf[4096];
		ssize_t r = 1;

		if (p[2 + i].revents)
			while ((r = read(k->fd, buf, sizeof(buf))) > 0)
				;
		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {	/* closed by the coordinator */
			if (now - k->opened_ns > (uint64_t)((c->agent_timeout + 3) * 1e9))
				return failf("a silent connection was closed only after %.1f s (agent-timeout %.0f s)",
					     (now - k->opened_ns) / 1e9, c->agent_timeout);
			close(k->fd);
			c->silent_closed++;
			c->silent[i] = c->silent[--c->nsilent];
			p[2 + i] = p[2 + c->nsilent];	/* keep the revents in step */
			i--;
		} else if (now - k->opened_ns > (uint64_t)((c->agent_timeout + 3) * 1e9)) {
			return failf("a silent connection (kind %d) is still open after %.1f s (agent-timeout %.0f s)",
				     k->kind, (now - k->opened_ns) / 1e9, c->agent_timeout);
		}
	}
	if (!c->mgone && !c->mbye && now - c->m_last_ns > 300 * MS)
		rc = cz_msend(c, json_pack("{ss,si}", "type", "heartbeat", "jobs", 0));
	for (i = 0; i < c->njobs && !rc; i++)	/* held no longer than 8 s */
		if (!c->jobs[i].answered && (!c->hold || now - c->jobs[i].got_ns > 8000 * MS))
			rc = cz_answer(c, &c->jobs[i]);
	return rc;
}

/* Join as fz. */
static int cz_join(struct cz *c)
{
	char an[AUTH_NONCE_HEX + 1], mac[AUTH_NONCE_HEX + 1], cn[AUTH_NONCE_HEX + 1];
	json_t *m = NULL, *reg, *hs[3];
	int rc, proven;

	c->mfd = net_connect(&c->dst, NULL, 5000);
	if (c->mfd < 0)
		return fs_err_env("cannot reach the coordinator: %s", strerror(-c->mfd));
	rc = wire_recv(c->mfd, &m, FLEET_MAX_MSG, 10000);
	if (rc)
		return failf("no challenge for fz: %s", wire_strerror(rc));
	if (!jstr(m, "type") || strcmp(jstr(m, "type"), "challenge") || !jstr(m, "proto") ||
	    strcmp(jstr(m, "proto"), FLEET_PROTO) || json_integer_value(json_object_get(m, "version")) != wire_version() ||
	    !jstr(m, "nonce") || strlen(jstr(m, "nonce")) != AUTH_NONCE_HEX) {
		json_decref(m);
		return failf("a challenge without the fields it must have");
	}
	memcpy(cn, jstr(m, "nonce"), sizeof(cn));
	auth_nonce(an);
	reg = json_pack("{ss,ss,si,ss,ss,ss,ss,si,ss}", "type", "register", "proto", FLEET_PROTO,
			"version", wire_version(), "tool_version", "fuzz", "nonce", an, "node", "fz",
			"host", "fuzz-host", "pid", (int)getpid(), "slot", "0");
	/* endpoints: rail 0 on loopback, and ones the coordinator must skip */
	json_object_set_new(reg, "endpoints", json_pack("[{si,si,ss},{si,si,ss},{si,si,ss},{si,si,ss},s,{si,si,si},{}]",
							"rail", 0, "plane", 0, "ip", "127.0.0.1",
							"rail", -1, "plane", 0, "ip", "127.0.0.2",
							"rail", 1 << 30, "plane", 0, "ip", "127.0.0.3",
							"rail", 0, "plane", 8, "ip", "127.0.0.4",
							"endpoint",
							"rail", 0, "plane", 0, "ip", 5));
	hs[0] = m;
	hs[1] = reg;
	if (auth_mac_msgs(c->token, "agent", cn, an, hs, 2, mac)) {
		json_decref(reg);
		json_decref(m);
		return failf("internal: out of memory for a mac");
	}
	json_object_set_new(reg, "mac", json_string(mac));
	m = NULL;
	if ((rc = wire_send(c->mfd, reg, 5000))) {
		json_decref(reg);
		json_decref(hs[0]);
		return failf("cannot register fz: %s", wire_strerror(rc));
	}
	rc = wire_recv(c->mfd, &m, FLEET_MAX_MSG, 10000);
	hs[2] = m;
	proven = !rc && auth_mac_msgs_ok(c->token, "coordinator", an, cn, hs, 3, jstr(m, "mac"));
	json_decref(hs[0]);
	json_decref(reg);
	if (rc)
		return failf("no welcome for fz: %s", wire_strerror(rc));
	if (!jstr(m, "type") || strcmp(jstr(m, "type"), "welcome")) {
		char *t = json_dumps(m, JSON_COMPACT);

		rc = failf("fz was not welcomed: %.300s", t ? t : "?");
		free(t);
		json_decref(m);
		return rc;
	}
	if (!proven || !jstr(m, "node") ||
	    strcmp(jstr(m, "node"), "fz") || !json_is_integer(json_object_get(m, "heartbeat_ms")) ||
	    !json_is_integer(json_object_get(m, "silence_ms"))) {
		json_decref(m);
		return failf("the welcome does not prove the token, or lacks its fields");
	}
	json_decref(m);
	{	/* the session's MACs, both ways: the hostile bursts that follow get past
		 * them and reach the coordinator's parser */
		uint8_t key[WIRE_MAC_LEN];

		auth_session_key(c->token, cn, an, key);
		wire_mac_start(&c->mtx, key, 'a');
		wire_mac_start(&c->mrd.mac, key, 'c');
	}
	net_set_nonblock(c->mfd, 1);
	c->m_last_ns = clock_ns();
	printf("joined fz\n");
	fflush(stdout);
	return 0;
}

enum hkind {
	/* never take a slot */
	H_SILENT, H_SLOW, H_HALFCLOSE, H_GARBAGE, H_BADLEN, H_MALFORMED, H_NOTREG, H_VERSION,
	H_BADMAC, H_AGENT_ERROR, H_DUP, H_PIPELINE, H_RST, H_NUL_NAME, H_SAFE_KINDS,
	/* a new name with the right mac: refused only once everyone has joined */
	H_NEWNAME = H_SAFE_KINDS, H_NKINDS
};

static const char *const hkind_name[] = {
	"silent", "slow", "half-closed", "garbage", "bad length", "malformed", "not a register",
	"wrong version", "wrong mac", "an agent's error", "fz again", "pipelined", "reset",
	"a NUL in the name", "a new name",
};

/* A register for the challenge c->hch (its nonce cn): its mac over both and the nonces,
 * right unless bad_mac; node name; the reference is the caller's. */
static json_t *cz_register(struct cz *c, const char *cn, const char *node, int bad_mac)
{
	char an[AUTH_NONCE_HEX + 1], mac[AUTH_NONCE_HEX + 1];
	json_t *m, *hs[2];

	auth_nonce(an);
	m = json_pack("{ss,ss,si,ss,ss,ss,ss,si}", "type", "register", "proto", FLEET_PROTO,
		      "version", wire_version(), "tool_version", "fuzz", "nonce", an, "node", node,
		      "host", "fuzz-host", "pid", 1);
	hs[0] = c->hch;
	hs[1] = m;
	if (!m || auth_mac_msgs(bad_mac ? "wrong-token" : c->token, "agent", cn, an, hs, 2, mac))
		auth_nonce(mac);	/* (out of memory: a wrong one, which the checks would name) */
	json_object_set_new(m, "mac", json_string(mac));
	return m;
}

/* Write all of buf to a hostile connection (the coordinator may close it first). */
static void cz_hput(int fd, const void *buf, size_t len)
{
	net_write_full(fd, buf, len, 3000);
}

/* Send a message (the reference is taken): its length. */
static size_t cz_hsend(int fd, json_t *m)
{
	char *t = json_dumps(m, JSON_COMPACT);
	uint8_t h[4];
	size_t len;

	json_decref(m);
	if (!t)
		return 0;
	len = strlen(t);
	put32(h, (uint32_t)len);
	cz_hput(fd, h, 4);
	cz_hput(fd, t, len);
	free(t);
	return len;
}

/* The coordinator's bound on a message before authentication (COORD_JOIN_MAX_MSG):
 * over it, a connection is closed without an answer. */
#define CZ_JOIN_MAX (64u << 10)

/* Read a hostile connection until the coordinator closes it, within ms,
 * serving fz meanwhile: 1 closed, 0 not, -1 failed check; *errmsg: the
 * message of an error it got (malloc'd), *chal: the challenge's nonce. */
static int cz_hread(struct cz *c, int fd, struct wire_rd *rd, int ms, int until_challenge,
		    char *chal, char **errmsg)
{
	uint64_t dl = clock_ns() + (uint64_t)ms * MS;

	while (clock_ns() < dl) {
		int ready, rc = cz_serve(c, 20, fd, &ready);

		if (rc)
			return rc;
		while (ready) {
			json_t *m;
			int r = wire_read_some(fd, rd, &m, FLEET_MAX_MSG);
			const char *type;

			if (r == 0)
				break;
			if (r < 0)
				return r == -ECONNRESET || r == -EPIPE ? 1 :
				       failf("the coordinator sent a bad frame: %s", wire_strerror(r));
			type = jstr(m, "type");
			if (type && !strcmp(type, "challenge") && !*chal) {
				const char *cn = jstr(m, "nonce");

				if (!cn || strlen(cn) != AUTH_NONCE_HEX || !jstr(m, "proto") ||
				    strcmp(jstr(m, "proto"), FLEET_PROTO)) {
					json_decref(m);
					return failf("a challenge without the fields it must have");
				}
				memcpy(chal, cn, AUTH_NONCE_HEX + 1);
				json_decref(c->hch);
				c->hch = json_incref(m);
			} else if (type && !strcmp(type, "error") && *chal) {
				if (!jstr(m, "message") || !*jstr(m, "message")) {
					json_decref(m);
					return failf("a refusal without a message");
				}
				free(*errmsg);
				*errmsg = strdup(jstr(m, "message"));
			} else {
				char *t = json_dumps(m, JSON_COMPACT);

				json_decref(m);
				failf("a hostile connection got %.300s", t ? t : "?");
				free(t);
				return -1;
			}
			json_decref(m);
			if (until_challenge)
				return 0;
		}
	}
	return 0;
}

/* What cz_hostile_raw did with a connection. */
enum { CZ_KEPT, CZ_SENT, CZ_CHALLENGE };

/* The kinds that send before any challenge, or nothing: CZ_KEPT (kept silent, or closed:
 * nothing more to check), CZ_SENT (the coordinator must close it), CZ_CHALLENGE (the
 * others: they answer the challenge). */
static int cz_hostile_raw(struct cz *c, int fd, int kind)
{
	uint8_t b[512];
	size_t n;
	int i;

	switch (kind) {
	case H_SILENT:
	case H_SLOW:
		if (kind == H_SLOW) {	/* a header and a little of the body, then nothing */
			put32(b, (uint32_t)(100 + below(c->s, one_in(c->s, 2) ? 60000 : FLEET_MAX_MSG - 100)));
			n = 4 + below(c->s, 20);
			for (i = 4; i < (int)n; i++)
				b[i] = '{';
			cz_hput(fd, b, n);
		}
		if (c->nsilent < CZ_MAXSILENT) {
			c->silent[c->nsilent].fd = fd;
			c->silent[c->nsilent].kind = kind;
			c->silent[c->nsilent++].opened_ns = clock_ns();
			return CZ_KEPT;
		}
		close(fd);
		return CZ_KEPT;
	case H_RST: {
		struct linger l = { 1, 0 };

		if (one_in(c->s, 2))
			cz_hput(fd, "\0\0", 2);
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
		close(fd);
		return CZ_KEPT;
	}
	case H_HALFCLOSE:
		if (one_in(c->s, 2)) {
			put32(b, 200);
			cz_hput(fd, b, 4 + below(c->s, 10));
		}
		shutdown(fd, SHUT_WR);
		return CZ_SENT;
	case H_GARBAGE:
		n = 1 + below(c->s, sizeof(b));
		for (i = 0; i < (int)n; i++)
			b[i] = (uint8_t)tool_rand(c->s);
		if (one_in(c->s, 2) && n >= 4)
			put32(b, (uint32_t)below(c->s, 600));
		cz_hput(fd, b, n);
		shutdown(fd, SHUT_WR);
		return CZ_SENT;
	case H_BADLEN:
	case H_MALFORMED: {
		uint8_t *f = bad_frame(c->s, kind == H_BADLEN ? (int)below(c->s, 2) : 2 + (int)below(c->s, 4), &n);

		if (kind == H_MALFORMED && one_in(c->s, 8)) {	/* exactly the bound, of spaces */
			char *big = malloc(FLEET_MAX_MSG);

			memset(big, ' ', FLEET_MAX_MSG);
			put32(b, FLEET_MAX_MSG);
			cz_hput(fd, b, 4);
			cz_hput(fd, big, FLEET_MAX_MSG);
			free(big);
		} else {
			cz_hput(fd, f, n);
		}
		free(f);
		return CZ_SENT;
	}
	default:
		return CZ_CHALLENGE;
	}
}

/* H_NOTREG: a message that is not a register, or a register that lacks something. */
static json_t *cz_not_register(struct cz *c, const char *cn)
{
	json_t *m;

	if (one_in(c->s, 2)) {
		static const char *const types[] = { "record", "heartbeat", "done", "listening", "pong", "job", "welcome" };

		m = json_pack("{ss,si}", "type", types[below(c->s, NELEM(types))], "id", 1);
		json_object_set_new(m, "record", cz_record(c));
		return m;
	}
	m = cz_register(c, cn, "fz", 0);
	switch (below(c->s, 4)) {
	case 0:
		json_object_del(m, "node");
		break;
	case 1:
		json_object_set_new(m, "node", hostile(c->s, 1, 0));
		if (json_is_string(json_object_get(m, "node")))
			json_object_del(m, "node");
		break;
	case 2:
		json_object_set_new(m, "nonce", one_in(c->s, 2) ? json_string("abc") : json_integer(1));
		break;
	default:
		json_object_set_new(m, "type", junk_type(c->s));
		if (json_is_string(json_object_get(m, "type")) &&
		    (!strcmp(jstr(m, "type"), "register") || !strcmp(jstr(m, "type"), "error")))
			json_object_del(m, "type");
		break;
	}
	return m;
}

/* H_VERSION: a register of a version it does not speak. */
static json_t *cz_bad_version(struct cz *c, const char *cn)
{
	json_t *m = cz_register(c, cn, one_in(c->s, 2) ? "fz" : "someone", 0);
	static const json_int_t vv[] = { 0, 2, -1, 99, INT_MAX, INT_MIN };

	if (one_in(c->s, 3))
		json_object_del(m, "version");
	else
		json_object_set_new(m, "version", one_in(c->s, 3) ? json_string("1") :
				    json_integer(vv[below(c->s, NELEM(vv))]));
	return m;
}

/* H_BADMAC: a register with no mac, a hostile one, the right one over another nonce, or
 * a wrong one. */
static json_t *cz_bad_mac(struct cz *c, const char *cn)
{
	json_t *m = cz_register(c, cn, one_in(c->s, 2) ? "fz" : "n1", 1);

	switch (below(c->s, 4)) {
	case 0:
		json_object_del(m, "mac");
		break;
	case 1:
		json_object_set_new(m, "mac", hostile(c->s, 1, 1));
		break;
	case 2: {	/* the right token's mac over another nonce, or over the nonces only */
		char mac[AUTH_NONCE_HEX + 1], other[AUTH_NONCE_HEX + 1];
		json_t *hs[2] = { c->hch, m };

		auth_nonce(other);
		if (one_in(c->s, 2))
			auth_mac(c->token, "agent", cn, jstr(m, "nonce"), mac);
		else if (auth_mac_msgs(c->token, "agent", other, jstr(m, "nonce"), hs, 2, mac))
			auth_nonce(mac);
		json_object_set_new(m, "mac", json_string(mac));
		break;
	}
	default:
		break;
	}
	return m;
}

/* H_NEWNAME: a register of a name not in the hostfile, not a name, or over the bound
 * before authentication; the refusal it calls for ("": checked by cz_hostile_closed;
 * NULL: just closed). */
static const char *cz_new_name(struct cz *c, int fd, const char *cn)
{
	const char *want_err = "";
	char name[64];
	json_t *k = NULL;

	switch (c->plain_name ? 0 : below(c->s, 5)) {
	case 0:
		snprintf(name, sizeof(name), "ghost-%llu", (unsigned long long)below(c->s, 1000000));
		break;
	case 1:
		snprintf(name, sizeof(name), "%s", "%s%n\n\tevil");
		break;
	case 2:
		name[0] = 0;
		break;
	case 3:
		k = str_n(256 + below(c->s, 2000), 'N');
		break;
	default:	/* a register over the bound before authentication: just closed */
		k = str_n(100 * 1024, 'N');
		want_err = NULL;
		break;
	}
	cz_hsend(fd, cz_register(c, cn, k ? json_string_value(k) : name, 0));
	json_decref(k);
	return want_err;
}

/* The answer to the challenge (its nonce cn) that kind calls for; the refusal it calls
 * for (NULL: none, as when it is over the bound before authentication). */
static const char *cz_hostile_answer(struct cz *c, int fd, int kind, const char *cn)
{
	switch (kind) {
	case H_NOTREG:
		return cz_hsend(fd, cz_not_register(c, cn)) > CZ_JOIN_MAX ? NULL : "expected a register";
	case H_VERSION:
		return cz_hsend(fd, cz_bad_version(c, cn)) > CZ_JOIN_MAX ? NULL : "fleet protocol";
	case H_BADMAC:
		return cz_hsend(fd, cz_bad_mac(c, cn)) > CZ_JOIN_MAX ? NULL : "authentication failed";
	case H_AGENT_ERROR:
		cz_hsend(fd, one_in(c->s, 2) ? json_pack("{ss,so}", "type", "error", "message", hostile(c->s, 0, 1)) :
			     json_pack("{ss}", "type", "error"));
		return NULL;
	case H_DUP:
	case H_PIPELINE:
		cz_hsend(fd, cz_register(c, cn, "fz", 0));
		if (kind == H_PIPELINE) {	/* and more, as if it had been welcomed */
			int k, f = 5 + (int)below(c->s, 50);

			for (k = 0; k < f; k++)
				cz_hsend(fd, json_pack("{ss,so,so}", "type", one_in(c->s, 2) ? "record" : "done",
						       "id", cz_other_id(c), "record", cz_record(c)));
		}
		return "joined already";
	case H_NUL_NAME: {	/* jansson writes \u0000, which the coordinator's parser refuses */
		json_t *m = cz_register(c, cn, "x", 0);

		json_object_set_new(m, "node", json_stringn("fz\0evil", 7));
		cz_hsend(fd, m);
		return NULL;
	}
	default:
		return cz_new_name(c, fd, cn);
	}
}

/* The coordinator closes it within 3 s, with the refusal want_err calls for: 0, or -1. */
static int cz_hostile_closed(struct cz *c, int fd, struct wire_rd *rd, int kind, const char *want_err,
			     char *cn, char **errmsg)
{
	int rc = cz_hread(c, fd, rd, 3000, 0, cn, errmsg);

	if (rc < 0)
		return rc;
	if (rc == 0)
		return failf("the coordinator left a %s connection open for 3 s", hkind_name[kind]);
	c->closed++;
	if (*errmsg)
		c->refused++;
	if (!want_err)
		return 0;
	if (!*errmsg)
		return failf("a %s connection was closed without an error message", hkind_name[kind]);
	if (kind == H_NEWNAME ? !strstr(*errmsg, "not in the hostfile") && !strstr(*errmsg, "joined already") &&
				!strstr(*errmsg, "names are") :
	    !strstr(*errmsg, want_err))
		return failf("a %s connection was refused with '%s'", hkind_name[kind], *errmsg);
	return 0;
}

/* One hostile connection: 0, 1 (the coordinator is gone: stop), -1 failed check. */
static int cz_hostile(struct cz *c, unsigned long long seed, unsigned long idx, int kind)
{
	struct wire_rd rd;
	char cn[AUTH_NONCE_HEX + 1] = "", *errmsg = NULL;
	const char *want_err = NULL;
	int fd, rc;

	memset(&rd, 0, sizeof(rd));
	snprintf(ctx, sizeof(ctx), "seed %llu connection %lu (%s)", seed, idx, hkind_name[kind]);
	fd = net_connect(&c->dst, NULL, 5000);
	if (fd < 0) {
		if (c->mbye || c->mgone)
			return 1;
		return failf("cannot connect while fz is still in the run: %s", strerror(-fd));
	}
	c->conns++;
	rc = cz_hostile_raw(c, fd, kind);
	if (rc == CZ_KEPT)
		return 0;
	if (rc == CZ_CHALLENGE) {	/* the challenge first: a register answers its nonce */
		rc = cz_hread(c, fd, &rd, 3000, 1, cn, &errmsg);
		if (rc < 0)
			goto out;
		if (!*cn) {
			rc = rc == 1 ? failf("the coordinator closed a new connection without a challenge") :
				       failf("no challenge within 3 s");
			goto out;
		}
		want_err = cz_hostile_answer(c, fd, kind, cn);
	}
	rc = cz_hostile_closed(c, fd, &rd, kind, want_err, cn, &errmsg);
out:
	close(fd);
	wire_rd_release(&rd);
	free(errmsg);
	return rc;
}

static int fuzz_coord(unsigned long n, unsigned long long seed, const char *where, const char *token,
		      double agent_timeout)
{
	struct cz c;
	uint64_t s = seed, dl;
	char host[256], err[256];
	const char *colon = strrchr(where, ':');
	unsigned long i, half = n / 2;
	int rc = 0;

	memset(&c, 0, sizeof(c));
	c.s = &s;
	c.token = token;
	c.agent_timeout = agent_timeout;
	c.mfd = -1;
	if (!colon || colon == where)
		return fs_err_usage("'%s': write HOST:PORT", where) ? FS_EXIT_USAGE : 0;
	snprintf(host, sizeof(host), "%.*s", (int)(colon - where), where);
	if (net_resolve(host, atoi(colon + 1), 0, &c.dst, err, sizeof(err)))
		return fs_err_usage("'%s': %s", where, err) ? FS_EXIT_USAGE : 0;
	snprintf(ctx, sizeof(ctx), "seed %llu fz", seed);
	rc = cz_join(&c);
	/* phase 1: before the run, nothing that could take a slot */
	for (i = 0; i < half && !rc; i++) {
		rc = cz_hostile(&c, seed, i, (int)below(&s, H_SAFE_KINDS));
	}
	if (!rc) {
		printf("phase 1 done\n");
		fflush(stdout);
	}
	/* phase 2: once the run started (everyone joined), fz holding its first job */
	snprintf(ctx, sizeof(ctx), "seed %llu fz", seed);
	c.hold = 1;
	dl = clock_ns() + 60000 * MS;
	while (!rc && !c.run_started && !c.mbye && !c.mgone && clock_ns() < dl)
		rc = cz_serve(&c, 100, -1, NULL);
	if (!rc && !c.run_started)
		rc = failf("the run did not start within 60 s");
	for (; i < n && !rc; i++) {	/* the first: a plain new name, refused */
		c.plain_name = i == half;
		rc = cz_hostile(&c, seed, i, i == half ? H_NEWNAME : (int)below(&s, H_NKINDS));
	}
	if (rc == 1)
		rc = 0;
	c.hold = 0;
	/* to the end of the run */
	snprintf(ctx, sizeof(ctx), "seed %llu fz", seed);
	dl = clock_ns() + 120000 * MS;
	while (!rc && !c.mbye && !c.mgone && clock_ns() < dl)
		rc = cz_serve(&c, 100, -1, NULL);
	if (!rc && !c.mbye)
		rc = failf(c.mgone ? "the coordinator dropped fz without a bye" : "no bye within 120 s");
	for (i = 0; i < (unsigned long)c.nsilent; i++)	/* the coordinator is gone: they are closed */
		close(c.silent[i].fd);
	if (c.mfd >= 0)
		close(c.mfd);
	wire_rd_release(&c.mrd);
	json_decref(c.hch);
	if (rc)
		return -rc;	/* -1: a check failed */
	printf("connections %ld closed %ld refused %ld silent-closed %ld jobs %ld pings %ld records %ld messages %ld\n",
	       c.conns, c.closed, c.refused, c.silent_closed, c.jobs_seen, c.pings, c.records_sent, c.msgs);
	return 0;
}

int tool_fleet_fuzz(int argc, const char **argv)
{
	unsigned long n;
	unsigned long long seed;
	char *end;

	if (argc >= 4) {
		n = strtoul(argv[2], &end, 10);
		if (*end || !*argv[2])
			argc = 0;
		seed = strtoull(argv[3], &end, 10);
		if (*end || !*argv[3])
			argc = 0;
	}
	if (argc == 5 && !strcmp(argv[1], "agent"))
		return fuzz_agent(n, seed, argv[4]);
	if ((argc == 6 || argc == 7) && !strcmp(argv[1], "coord")) {
		double t = argc == 7 ? atof(argv[6]) : 10;

		return fuzz_coord(n, seed, argv[4], argv[5], t > 0 ? t : 10);
	}
	fs_err_usage("usage: test-tool fleet-fuzz agent N SEED FABSCOPE\n"
		     "   or: test-tool fleet-fuzz coord N SEED HOST:PORT TOKEN [AGENT-TIMEOUT]");
	return FS_EXIT_USAGE;
}
