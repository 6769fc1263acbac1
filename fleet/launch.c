/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Launchers: how `fabscope run` starts its agents with what clusters
 * already have.
 *
 *   local     one agent per node on this host, each a child process (this
 *             binary, or --agent-cmd); a node
 *             with netns= runs inside that namespace (ip netns exec).  The
 *             control channel is a socketpair, so namespaces need no route
 *             to the coordinator.
 *   ssh       ssh DEST fabscope agent --stdio, one per node, in parallel; the
 *             protocol runs over ssh's stdin/stdout (no port to open).
 *   slurm     srun -n N fabscope agent --connect HOST:PORT
 *   mpi       mpirun -np N fabscope agent --connect HOST:PORT
 *   external  nothing: agents started elsewhere (a DaemonSet, by hand)
 *             connect with the token.
 * The token never appears in an argument vector: local agents, and ssh
 * agents when the coordinator has no --token-file (a shared path), read it
 * as the first line of their control channel (--token-stdin); slurm and mpi
 * agents find it in the environment (FABSCOPE_TOKEN), which srun and
 * mpirun forward.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../core/alloc.h"
#include "../core/clock.h"
#include "../core/error.h"
#include "../core/shquote.h"
#include "coord.h"

/* descriptors besides the agents': the results, the plan, the listener, stdio, ... */
#define LAUNCH_FD_SPARE 64
/* while agents start, the event loop turns this often (launch_meanwhile) */
#define LAUNCH_TURN_MS 50

static const char *const names[] = { "local", "ssh", "slurm", "mpi", "external", NULL };

int launch_known(const char *name)
{
	int i;

	for (i = 0; names[i]; i++)
		if (!strcmp(names[i], name))
			return 1;
	return 0;
}

int launch_uses_listener(const char *name)
{
	return strcmp(name, "local") && strcmp(name, "ssh");
}

/* Split a command string on blanks (no quoting rules beyond that); the
 * words point into *buf, which the caller frees once the command runs. */
static int split_words(const char *s, const char **argv, int max, char **buf)
{
	char *save = NULL, *w;
	int n = 0;

	*buf = strdup(s ? s : "");
	for (w = strtok_r(*buf, " \t", &save); w && n < max; w = strtok_r(NULL, " \t", &save))
		argv[n++] = w;
	return n;
}

/* ---- the spawner ---- */

static void child_exec(const struct coord *c, const char *const *argv, int child_fd, int as_stdio, int env_token,
		       int err_fd) __attribute__((noreturn));

/*
 * Starting an agent is a fork and an exec, and a fork copies the parent's
 * descriptor table (and the exec, or our close_range, drops it again): the
 * coordinator holds two descriptors an agent, so forking the Nth local
 * agent from it costs O(N), and N agents O(N^2) (starting 8,192 agents,
 * a sixth of the CPU went to that).  So the local and ssh launchers fork
 * their agents from a spawner, a child made before any agent's descriptor
 * exists, which holds only its control socket (a SOCK_SEQPACKET pair): a
 * request is an agent's argv and descriptors (SCM_RIGHTS), the answer its
 * pid.  The spawner reaps nothing: when the launch is over it exits, and
 * its children, the agents (those that ended already too), become the
 * coordinator's (PR_SET_CHILD_SUBREAPER), which waits for them as before.
 */
#define SPAWN_MAX_MSG 16384
#define SPAWN_MAX_ARGS 64

struct spawn_req {
	int32_t as_stdio, has_child, has_err, argc;
	char words[SPAWN_MAX_MSG];	/* argc strings, each ending in NUL */
};

/* The spawner's life: a request in, an agent forked, its pid out; at the
 * end of the socket, the end. */
static void spawner_main(const struct coord *c, int ctl)
{
	for (;;) {
		struct spawn_req q;
		char cbuf[CMSG_SPACE(2 * sizeof(int))];
		struct iovec iov = { &q, sizeof(q) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
				     .msg_controllen = sizeof(cbuf) };
		struct cmsghdr *cm;
		const char *argv[SPAWN_MAX_ARGS + 1];
		int fds[2] = { -1, -1 }, nfd = 0, i, k = 0;
		ssize_t n = recvmsg(ctl, &mh, MSG_CMSG_CLOEXEC);
		int32_t pid = -EPROTO;
		size_t off = 0, hdr = offsetof(struct spawn_req, words);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(0);
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
				for (i = 0; i < (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int)) && nfd < 2; i++)
					memcpy(&fds[nfd++], CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
		/* (from our own coordinator; checked all the same) */
		if ((size_t)n > hdr && q.argc > 0 && q.argc <= SPAWN_MAX_ARGS && nfd == !!q.has_child + !!q.has_err) {
			for (i = 0; i < q.argc && hdr + off < (size_t)n; i++) {
				size_t len = strnlen(q.words + off, (size_t)n - hdr - off);

				if (hdr + off + len >= (size_t)n)
					break;
				argv[k++] = q.words + off;
				off += len + 1;
			}
			argv[k] = NULL;
			if (k == q.argc) {
				pid = fork();
				if (!pid)
					child_exec(c, argv, q.has_child ? fds[0] : -1, q.as_stdio, 0,
						   q.has_err ? fds[nfd - 1] : -1);
				if (pid < 0)
					pid = -errno;
			}
		}
		for (i = 0; i < nfd; i++)
			close(fds[i]);
		if (send(ctl, &pid, sizeof(pid), MSG_NOSIGNAL) != sizeof(pid))
			_exit(0);
	}
}

/* The spawner, for the local and ssh launchers; when it cannot be made,
 * the agents are forked from here (slower for thousands of them, the same
 * otherwise). */
static void spawner_start(struct coord *c)
{
	pid_t parent = getpid();
	int sv[2];

	c->spawner_fd = -1;
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return;
	fflush(NULL);
	c->spawner_pid = fork();
	if (c->spawner_pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return;
	}
	if (!c->spawner_pid) {	/* the spawner: our socket, stdio, nothing else */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0);
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_DFL);
		if (sv[1] > 3)
			close_range(3, (unsigned)sv[1] - 1, 0);
		close_range((unsigned)sv[1] + 1, ~0u, 0);
		spawner_main(c, sv[1]);
	}
	close(sv[1]);
	c->spawner_fd = sv[0];
}

/* The spawner's agent: its pid, or -errno */
static pid_t spawner_spawn(struct coord *c, const char *const *argv, int child_fd, int as_stdio, int err_fd)
{
	struct spawn_req q = { .as_stdio = as_stdio, .has_child = child_fd >= 0, .has_err = err_fd >= 0 };
	char cbuf[CMSG_SPACE(2 * sizeof(int))];
	struct iovec iov = { &q, 0 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	int fds[2], nfd = 0;
	size_t off = 0;
	int32_t pid;
	ssize_t n;

	for (; argv[q.argc]; q.argc++) {
		size_t len = strlen(argv[q.argc]) + 1;

		if (q.argc == SPAWN_MAX_ARGS || off + len > sizeof(q.words))
			return -E2BIG;
		memcpy(q.words + off, argv[q.argc], len);
		off += len;
	}
	iov.iov_len = offsetof(struct spawn_req, words) + off;
	if (child_fd >= 0)
		fds[nfd++] = child_fd;
	if (err_fd >= 0)
		fds[nfd++] = err_fd;
	if (nfd) {
		struct cmsghdr *cm;

		mh.msg_control = cbuf;
		mh.msg_controllen = CMSG_SPACE((size_t)nfd * sizeof(int));
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN((size_t)nfd * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, (size_t)nfd * sizeof(int));
	}
	do
		n = sendmsg(c->spawner_fd, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	do
		n = recv(c->spawner_fd, &pid, sizeof(pid), 0);
	while (n < 0 && errno == EINTR);
	return n == sizeof(pid) ? pid : n < 0 ? -errno : -EPIPE;
}

/* The launch is over: the spawner ends, and its children are ours */
static void spawner_stop(struct coord *c)
{
	if (c->spawner_fd < 0)
		return;
	close(c->spawner_fd);
	c->spawner_fd = -1;
	while (waitpid(c->spawner_pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/* In a new child: become argv, with child_fd as its stdin/stdout
 * (as_stdio) or as fd 3, err_fd (if any) as its standard error, and no
 * other descriptor of ours.  Never returns. */
static void child_exec(const struct coord *c, const char *const *argv, int child_fd, int as_stdio, int env_token,
		       int err_fd)
{
	int fd, lo = as_stdio || child_fd < 0 ? 3 : 4;
	long max = sysconf(_SC_OPEN_MAX);

	if (err_fd >= 0)
		dup2(err_fd, 2);
	if (as_stdio) {
		dup2(child_fd, 0);
		dup2(child_fd, 1);
	} else if (child_fd == 3) {
		fcntl(3, F_SETFD, 0);	/* dup2 onto itself would keep CLOEXEC */
	} else if (child_fd >= 0) {
		dup2(child_fd, 3);
	} else {
		int devnull = open("/dev/null", 0);

		dup2(devnull, 0);
	}
	/* nothing else of ours leaks into the agent: one call, where the kernel has it */
	if (close_range((unsigned)lo, ~0u, 0))
		for (fd = lo; fd < (max > 0 && max < (1 << 20) ? max : 1 << 20); fd++)
			close(fd);
	if (env_token)
		setenv("FABSCOPE_TOKEN", c->token, 1);
	else
		unsetenv("FABSCOPE_TOKEN");
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_IGN);	/* ^C is the coordinator's to handle */
	execvp(argv[0], (char *const *)argv);
	fprintf(stderr, "fabscope run: cannot run '%s': %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* Start argv (see child_exec), from this process or, when there is one,
 * from the spawner.  The token goes in the environment only for launchers
 * whose agents cannot be handed it otherwise (srun, mpirun forward
 * FABSCOPE_TOKEN); local and ssh agents read it from their control
 * channel (--token-stdin, send_token).  The pid, or -errno. */
static pid_t spawn(struct coord *c, const char *const *argv, int child_fd, int as_stdio, int env_token,
		   int err_fd)
{
	pid_t pid;

	if (FS_ALLOC_GROW(c->pids, (size_t)c->npids + 1, c->pids_alloc))
		return -ENOMEM;	/* (before the fork: every child is reaped) */
	if (c->spawner_fd >= 0 && !env_token) {
		if ((pid = spawner_spawn(c, argv, child_fd, as_stdio, err_fd)) < 0)
			return pid;
	} else {
		fflush(NULL);
		pid = fork();
		if (pid < 0)
			return -errno;
		if (!pid)
			child_exec(c, argv, child_fd, as_stdio, env_token, err_fd);
	}
	c->pids[c->npids++] = pid;
	return pid;
}

/* ---- the agents' standard error ---- */

/* A pipe for the standard error of the agent of node: its write end in
 * *wfd (the child's), or -1 when none could be made (the agent then
 * writes on ours, as before). */
static void err_pipe(struct coord *c, int node, int *wfd)
{
	int p[2], i;

	*wfd = -1;
	if (!c->aerr) {
		c->aerr = calloc((size_t)c->plan.nnodes, sizeof(*c->aerr));
		if (!c->aerr)
			return;
		c->naerr = c->plan.nnodes;
		for (i = 0; i < c->naerr; i++)
			c->aerr[i].fd = -1;
	}
	if (node >= c->naerr || pipe2(p, O_CLOEXEC))
		return;
	fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
	if (coord_watch(c, p[0], COORD_FD_AERR(node))) {
		close(p[0]);
		close(p[1]);
		return;
	}
	c->aerr[node].fd = p[0];
	*wfd = p[1];
}

static void write_all(int fd, const char *b, size_t n)
{
	while (n) {
		ssize_t w = write(fd, b, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;	/* (our standard error is gone: nothing to tell) */
		b += w;
		n -= (size_t)w;
	}
}

/* s[0..n) as one line of text for a record: printable ASCII as is, a
 * backslash doubled, any other byte as \xNN; at most LAUNCH_ERR_LAST
 * bytes, "..." when cut. */
static void err_escape(const char *s, size_t n, char *out)
{
	size_t i, o = 0;

	while (n && (s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		char e[8];
		int el;

		if (ch == '\\')
			el = snprintf(e, sizeof(e), "\\\\");
		else if (ch >= 0x20 && ch < 0x7f)
			el = snprintf(e, sizeof(e), "%c", ch);
		else
			el = snprintf(e, sizeof(e), "\\x%02x", ch);
		if (o + (size_t)el > LAUNCH_ERR_LAST - 3) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		memcpy(out + o, e, (size_t)el);
		o += (size_t)el;
	}
	out[o] = 0;
}

/* A line (or the piece of one that filled the buffer) is complete */
static void err_line(struct agent_err *a, int nl)
{
	char shown[4 * sizeof(a->part) + 1];
	size_t i;

	/* an agent's words reach the terminal as ours do: no control byte
	 * (an ESC sequence of a remote node's) raw */
	write_all(2, shown, fs_escape_ctl(a->part, a->len, shown, sizeof(shown)));
	if (nl)
		write_all(2, "\n", 1);
	for (i = 0; i < a->len && (a->part[i] == ' ' || a->part[i] == '\t' || a->part[i] == '\r'); i++)
		;
	if (i < a->len && !a->long_line)	/* a blank line keeps the last one */
		err_escape(a->part, a->len, a->last);
	a->long_line = !nl;
	a->len = 0;
}

void launch_err_read(struct coord *c, int node)
{
	struct agent_err *a;
	char buf[4096];
	int turns;

	if (!c->aerr || node < 0 || node >= c->naerr || (a = &c->aerr[node])->fd < 0)
		return;
	/* what a pipe holds (64 KiB), so that one agent that writes without
	 * end does not hold the coordinator here */
	for (turns = 0; turns < 16; turns++) {
		ssize_t n = read(a->fd, buf, sizeof(buf)), i;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {	/* every writer is gone: the last piece is a line */
			if (a->len)
				err_line(a, 1);
			coord_unwatch_close(c, a->fd);
			a->fd = -1;
			return;
		}
		for (i = 0; i < n; i++) {
			if (buf[i] == '\n') {
				err_line(a, 1);
				continue;
			}
			if (a->len == sizeof(a->part))
				err_line(a, 0);
			a->part[a->len++] = buf[i];
		}
	}
}

const char *launch_err_last(struct coord *c, int node)
{
	if (!c->aerr || node < 0 || node >= c->naerr)
		return NULL;
	launch_err_read(c, node);
	return c->aerr[node].last[0] ? c->aerr[node].last : NULL;
}

/* The token as the first line of a new control channel, for an agent started
 * with --token-stdin: never in an argument vector or environment that ps shows.
 * The socket pair is new and empty, so the write does not block. */
static int send_token(const struct coord *c, int fd)
{
	size_t n = strlen(c->token);
	struct iovec iov[2] = { { (void *)c->token, n }, { (void *)"\n", 1 } };
	ssize_t w = writev(fd, iov, 2);

	if (w >= 0 && w != (ssize_t)(n + 1))
		errno = EIO;	/* (short: not a reason of the peer's) */
	return w == (ssize_t)(n + 1) ? 0 : -1;
}

/* While the agents are being started (thousands take a while): every
 * LAUNCH_TURN_MS, a turn of the event loop that does not wait, so that
 * those started already join as the rest start, and a word every 5 s.
 * 0, or -FS_EXIT_INTERRUPTED. */
static int launch_meanwhile(struct coord *c, int started)
{
	uint64_t now = clock_ns();
	int rc;

	if (now - c->launch_turn_ns < LAUNCH_TURN_MS * 1000000ull)
		return 0;
	c->launch_turn_ns = now;
	if (now - c->launch_said_ns > 5000000000ull) {
		if (c->launch_said_ns)
			fs_info("started %d of %d agents, %d joined (%.0f s)", started, c->plan.nnodes, c->njoined,
				(now - c->run_start_ns) / 1e9);
		c->launch_said_ns = now;
	}
	rc = coord_poll(c, 0);
	return rc == -FS_EXIT_INTERRUPTED ? rc : 0;	/* (a write that failed stops the run at the join) */
}

static int launch_local(struct coord *c)
{
	int i, rc;

	for (i = 0; i < c->plan.nnodes; i++) {
		const struct plan_node *n = &c->plan.nodes[i];
		const char *argv[64];
		char *words = NULL;
		int sv[2], k = 0, nw, efd;
		pid_t pid;

		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
			return fs_err_env("socketpair: %s", strerror(errno));
		if (n->netns) {
			argv[k++] = "ip";
			argv[k++] = "netns";
			argv[k++] = "exec";
			argv[k++] = n->netns;
		}
		/* --agent-cmd: as the other launchers, the command that starts
		 * the agent (words, e.g. a wrapper or sudo), else this binary */
		nw = c->agent_cmd ? split_words(c->agent_cmd, argv + k, 48, &words) : 0;
		k += nw;
		if (!nw)
			argv[k++] = c->self;
		argv[k++] = "agent";
		argv[k++] = "--fd=3";
		argv[k++] = "--token-stdin";
		argv[k++] = "--name";
		argv[k++] = n->name;
		if (c->verbose)
			argv[k++] = "-v";
		argv[k] = NULL;
		err_pipe(c, i, &efd);
		pid = spawn(c, argv, sv[1], 0, 0, efd);
		free(words);
		close(sv[1]);
		if (efd >= 0)
			close(efd);
		if (pid < 0) {
			close(sv[0]);
			return fs_err_env("cannot start an agent: %s", strerror((int)-pid));
		}
		/* an agent that ended at once (its command failed) is missing,
		 * with its last words, as one that ends before joining */
		if (send_token(c, sv[0]) && errno != EPIPE && errno != ECONNRESET) {
			close(sv[0]);
			return fs_err_env("cannot hand the token to the agent of %s: %s", n->name, strerror(errno));
		}
		coord_add_conn(c, sv[0], i, n->netns ? n->netns : "local");
		if ((rc = launch_meanwhile(c, i + 1)))
			return rc;
	}
	return 0;
}

/* The remote command of an ssh agent.  sshd hands it to the user's shell,
 * so every word is quoted (sh_quote_append): the agent command (split on
 * blanks, --agent-cmd), the node's name, the token file.  0, or -1 when it
 * does not fit. */
static int ssh_remote_cmd(const struct coord *c, const struct plan_node *n, char *out, size_t len)
{
	const char *agent = c->agent_cmd ? c->agent_cmd : c->self;
	char *words, *w, *save = NULL;
	int rc = 0;

	out[0] = 0;
	if (snprintf(out, len, "exec") >= (int)len)
		return -1;
	if (!(words = strdup(agent)))
		return -1;
	for (w = strtok_r(words, " \t", &save); w && !rc; w = strtok_r(NULL, " \t", &save))
		rc |= sh_quote_append(out, len, w);
	free(words);
	rc |= rc ? 0 : sh_quote_append(out, len, "agent");
	rc |= rc ? 0 : sh_quote_append(out, len, "--stdio");
	rc |= rc ? 0 : sh_quote_append(out, len, "--name");
	rc |= rc ? 0 : sh_quote_append(out, len, n->name);
	if (c->token_file) {	/* a shared path */
		rc |= rc ? 0 : sh_quote_append(out, len, "--token-file");
		rc |= rc ? 0 : sh_quote_append(out, len, c->token_file);
		if (c->readable_token)
			rc |= rc ? 0 : sh_quote_append(out, len, "--allow-readable-token");
	} else {		/* else the first line ssh carries to its stdin */
		rc |= rc ? 0 : sh_quote_append(out, len, "--token-stdin");
	}
	if (c->verbose)
		rc |= rc ? 0 : sh_quote_append(out, len, "-v");
	return rc ? -1 : 0;
}

static int launch_ssh(struct coord *c)
{
	int i, rc;

	for (i = 0; i < c->plan.nnodes; i++) {
		const struct plan_node *n = &c->plan.nodes[i];
		const char *argv[64], *dest = n->ssh ? n->ssh : n->name;
		char remote[8192], *words;
		int sv[2], k, efd;
		pid_t pid;

		/* checked when the hostfile was read; again here, since an ssh
		 * destination that is an option would be ssh's, not a host */
		if (!plan_ssh_dest_ok(dest))
			return fs_err_usage("node %s: '%s' is not an ssh destination", n->name, dest);
		if (ssh_remote_cmd(c, n, remote, sizeof(remote)))
			return fs_err_usage("node %s: the agent's command for ssh is too long (--agent-cmd)", n->name);
		k = split_words(c->ssh_cmd ? c->ssh_cmd : "ssh -o BatchMode=yes", argv, 48, &words);
		argv[k++] = "--";	/* what follows is the destination, never an option */
		argv[k++] = dest;
		argv[k++] = remote;
		argv[k] = NULL;
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
			free(words);
			return fs_err_env("socketpair: %s", strerror(errno));
		}
		err_pipe(c, i, &efd);
		pid = spawn(c, argv, sv[1], 1, 0, efd);
		free(words);
		close(sv[1]);
		if (efd >= 0)
			close(efd);
		if (pid < 0) {
			close(sv[0]);
			return fs_err_env("cannot run ssh: %s", strerror((int)-pid));
		}
		if (!c->token_file && send_token(c, sv[0]) && errno != EPIPE && errno != ECONNRESET) {
			close(sv[0]);
			return fs_err_env("cannot hand the token to ssh for %s: %s", n->name, strerror(errno));
		}
		coord_add_conn(c, sv[0], i, dest);
		if ((rc = launch_meanwhile(c, i + 1)))
			return rc;
	}
	return 0;
}

static int launch_connecting(struct coord *c)
{
	const char *argv[96];
	char np[32], *words;
	int k = 0;
	pid_t pid;

	snprintf(np, sizeof(np), "%d", c->expected);
	if (!strcmp(c->launcher, "external")) {
		fs_info("waiting for %d agents: start them with '%s agent --connect %s%s%s' and the token",
			c->expected, c->self, c->advertise, c->token_file ? " --token-file " : "",
			c->token_file ? c->token_file : "");
		return 0;
	}
	if (!strcmp(c->launcher, "slurm")) {
		argv[k++] = "srun";
		argv[k++] = "-n";
		argv[k++] = np;
		argv[k++] = "--kill-on-bad-exit=0";
	} else {
		argv[k++] = "mpirun";
		argv[k++] = "-np";
		argv[k++] = np;
		argv[k++] = "-x";
		argv[k++] = "FABSCOPE_TOKEN";
	}
	k += split_words(c->launcher_args, argv + k, 64, &words);
	argv[k++] = c->agent_cmd ? c->agent_cmd : c->self;
	argv[k++] = "agent";
	argv[k++] = "--connect";
	argv[k++] = c->advertise;
	if (c->verbose)
		argv[k++] = "-v";
	argv[k] = NULL;
	pid = spawn(c, argv, -1, 0, 1, -1);
	free(words);
	if (pid < 0)
		return fs_err_env("cannot run %s: %s", argv[0], strerror((int)-pid));
	fs_log(1, "started %s (pid %d) for %d agents", argv[0], (int)pid, c->expected);
	return 0;
}

/* The coordinator holds a descriptor an agent (its connection) and, for
 * local and ssh agents, one more (the pipe of its standard error): the
 * open files limit is raised to that, as far as the hard limit allows,
 * else the run stops before it starts, saying what to set. */
static int launch_fd_limit(struct coord *c)
{
	int each = launch_uses_listener(c->launcher) ? 1 : 2;
	rlim_t need = (rlim_t)c->expected * (rlim_t)each + LAUNCH_FD_SPARE;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= need)
		return 0;
	if (rl.rlim_max >= need) {
		rl.rlim_cur = need;
		if (!setrlimit(RLIMIT_NOFILE, &rl)) {
			fs_log(1, "open files limit raised to %llu for %d agents", (unsigned long long)need, c->expected);
			return 0;
		}
	}
	return fs_err_env("%d agents need %llu open files in the coordinator (%d each and %d more), over the limit "
			  "of %llu (hard limit %llu): raise it (ulimit -n %llu)", c->expected, (unsigned long long)need,
			  each, LAUNCH_FD_SPARE, (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max,
			  (unsigned long long)need);
}

int launch_agents(struct coord *c)
{
	int rc;

	if ((rc = launch_fd_limit(c)))
		return rc;
	if (launch_uses_listener(c->launcher))
		return launch_connecting(c);
	spawner_start(c);
	rc = !strcmp(c->launcher, "local") ? launch_local(c) : launch_ssh(c);
	spawner_stop(c);
	return rc;
}

int launch_exited(struct coord *c, int *status)
{
	int i, left = 0;

	for (i = 0; i < c->npids; i++) {
		int st;

		if (c->pids[i] <= 0)
			continue;
		if (waitpid(c->pids[i], &st, WNOHANG) != c->pids[i]) {
			left++;
			continue;
		}
		c->pids[i] = 0;
		if (!*status)
			*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	}
	return c->npids && !left;
}

const char *launch_program(const struct coord *c)
{
	return !strcmp(c->launcher, "slurm") ? "srun" : !strcmp(c->launcher, "mpi") ? "mpirun" :
	       !strcmp(c->launcher, "ssh") ? "ssh" : c->launcher;
}

void launch_reap(struct coord *c, int force)
{
	uint64_t deadline = clock_ns() + (force ? 0 : 5000000000ull);
	int i, left;

	do {
		for (i = 0; i < c->naerr; i++)	/* their last words, and no agent blocked writing them */
			launch_err_read(c, i);
		left = 0;
		for (i = 0; i < c->npids; i++) {
			int st;

			if (c->pids[i] <= 0)
				continue;
			if (waitpid(c->pids[i], &st, WNOHANG) == c->pids[i]) {
				if (WIFEXITED(st) && WEXITSTATUS(st) && WEXITSTATUS(st) != 4)
					fs_log(1, "launcher process %d exited with %d", (int)c->pids[i], WEXITSTATUS(st));
				c->pids[i] = 0;
			} else {
				left++;
			}
		}
		if (left && clock_ns() < deadline) {
			struct timespec ts = { 0, 50000000 };

			nanosleep(&ts, NULL);
		}
	} while (left && clock_ns() < deadline);
	if (left) {	/* still there: SIGTERM, then SIGKILL (a stopped process
			 * only dies of that) */
		for (i = 0; i < c->npids; i++)
			if (c->pids[i] > 0)
				kill(c->pids[i], SIGTERM);
		deadline = clock_ns() + 2000000000ull;
		do {
			struct timespec ts = { 0, 50000000 };

			left = 0;
			for (i = 0; i < c->npids; i++)
				if (c->pids[i] > 0) {
					if (waitpid(c->pids[i], NULL, WNOHANG) == c->pids[i])
						c->pids[i] = 0;
					else
						left++;
				}
			if (left)
				nanosleep(&ts, NULL);
		} while (left && clock_ns() < deadline);
		for (i = 0; i < c->npids; i++)
			if (c->pids[i] > 0) {
				kill(c->pids[i], SIGKILL);
				waitpid(c->pids[i], NULL, 0);
				c->pids[i] = 0;
			}
	}
	c->npids = 0;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;	/* (orphans of our agents that came to us, the subreaper of the spawner's children) */
	for (i = 0; i < c->naerr; i++) {	/* what is left, and the pipes */
		launch_err_read(c, i);
		if (c->aerr[i].fd >= 0) {	/* (a process of the agent's still has it) */
			if (c->aerr[i].len)
				err_line(&c->aerr[i], 1);
			coord_unwatch_close(c, c->aerr[i].fd);
		}
	}
	free(c->aerr);
	c->aerr = NULL;
	c->naerr = 0;
}
