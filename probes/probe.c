/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * `fabscope probe PROBE`: the dispatch to the probes (probe-polar.c,
 * probe-pfc.c), and the child processes they run the bw engine in (its
 * records read back as JSON lines).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/builtin.h"
#include "../core/clock.h"
#include "../core/error.h"
#include "../core/output.h"
#include "probe.h"

/* Fork `fabscope ARGV` (bw) with its records on a pipe (recs) or on our own sink. */
int probe_child_start(struct probe_child *ch, const char **argv, int argc, int pipe_records, const char *prog)
{
	int out[2] = { -1, -1 };

	ch->fd = -1;
	if (pipe_records && pipe2(out, O_CLOEXEC))
		return fs_err_env("pipe: %s", strerror(errno));
	fflush(NULL);
	ch->pid = fork();
	if (ch->pid < 0) {
		int e = errno;

		if (pipe_records) {
			close(out[0]);
			close(out[1]);
		}
		return fs_err_env("fork: %s", strerror(e));
	}
	if (!ch->pid) {
		int devnull = open("/dev/null", O_WRONLY);

		dup2(devnull, 1);
		if (pipe_records) {
			dup2(out[1], 3);
			out_set_sink_fd(3);
		}
		fs_set_progname(prog);
		_exit(cmd_bw(argc, argv));
	}
	if (pipe_records) {
		close(out[1]);
		ch->fd = out[0];
	}
	return 0;
}

/* Its JSON lines into recs (NULL: dropped). */
static void probe_child_records(const char *buf, size_t len, json_t *recs)
{
	const char *p = buf, *end = buf + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		json_t *rec = json_loadb(p, n, 0, NULL);

		if (recs && json_is_object(rec) && json_object_get(rec, "schema"))
			json_array_append(recs, rec);
		json_decref(rec);
		p += n + 1;
	}
}

/* The child's progress lines among buf[*from..len) (whole lines only),
 * passed on to our own sink: fabscope run watches the probe by them (its
 * flows are the child's); *from moves past what was looked at. */
static void probe_child_progress(const char *buf, size_t len, size_t *from)
{
	static const char key[] = "{\"progress\":";

	while (*from < len) {
		const char *p = buf + *from, *nl = memchr(p, '\n', len - *from);
		json_t *line;

		if (!nl)
			return;
		*from += (size_t)(nl - p) + 1;
		if ((size_t)(nl - p) < sizeof(key) - 1 || memcmp(p, key, sizeof(key) - 1))
			continue;
		line = json_loadb(p, (size_t)(nl - p), 0, NULL);
		if (json_is_object(json_object_get(line, "progress")))
			out_sink_event("progress", json_incref(json_object_get(line, "progress")));
		json_decref(line);
	}
}

/*
 * Wait for the child at most wait_s seconds, then end it; its records into
 * recs (NULL: dropped).  The pipe is read while it runs (a child writing
 * more than a pipe holds would otherwise wait on us for ever).  Its exit
 * status as a negative FS_EXIT code, or 0.
 */
int probe_child_finish(struct probe_child *ch, double wait_s, json_t *recs)
{
	uint64_t deadline = clock_ns() + (uint64_t)(wait_s * 1e9);
	char *buf = NULL;
	size_t len = 0, cap = 0, seen = 0;
	int st = 0, i, done = 0;
	pid_t r;

	if (ch->pid <= 0)
		return 0;
	while (ch->fd >= 0 && clock_ns() < deadline) {	/* until EOF: it exited or closed it */
		struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
		int left = (int)((deadline - clock_ns()) / 1000000);
		ssize_t n;

		if (poll(&pfd, 1, left > 0 ? left : 0) <= 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (len + 65536 > cap) {
			char *nb = realloc(buf, cap = cap ? 2 * cap : 131072);

			if (!nb)
				break;
			buf = nb;
		}
		n = read(ch->fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(ch->fd);
			ch->fd = -1;
			break;
		}
		len += (size_t)n;
		probe_child_progress(buf, len, &seen);
	}
	for (;;) {	/* its exit, within what is left of the time */
		r = waitpid(ch->pid, &st, WNOHANG);
		if (r == ch->pid) {
			done = 1;
			break;
		}
		if (r < 0 && errno != EINTR)
			break;
		if (clock_ns() >= deadline)
			break;
		usleep(20000);
	}
	if (!done && r >= 0) {
		kill(ch->pid, SIGTERM);
		for (i = 0; i < 100 && !(r = waitpid(ch->pid, &st, WNOHANG)); i++)
			usleep(20000);
		if (!r) {
			kill(ch->pid, SIGKILL);
			while ((r = waitpid(ch->pid, &st, 0)) < 0 && errno == EINTR)
				;
		}
		done = r == ch->pid;
	}
	if (ch->fd >= 0) {
		close(ch->fd);
		ch->fd = -1;
	}
	probe_child_records(buf ? buf : "", len, recs);
	free(buf);
	ch->pid = 0;
	if (!done)
		return -FS_EXIT_PEER;	/* (not ours to wait for any more: it is gone) */
	if (WIFEXITED(st))
		return -WEXITSTATUS(st);
	return -FS_EXIT_PEER;
}

int cmd_probe(int argc, const char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		FILE *f = argc < 2 ? stderr : stdout;

		fprintf(f, "usage: fabscope probe polarization HOST [options]\n"
			   "   or: fabscope probe pfc [HOST | --serve] [options]\n\n"
			   "Probes:\n"
			   "   polarization  ECMP hash polarization: K flows with distinct entropy, their rates,\n"
			   "                 the paths they used against uniform hashing\n"
			   "   pfc           PFC pauses on a port before, during and after an incast load: pause\n"
			   "                 rates and time paused per priority, storms, ECN/CNP before PFC\n"
			   "'fabscope probe PROBE --help' shows a probe's options.\n");
		return argc < 2 ? FS_EXIT_USAGE : 0;
	}
	if (!strcmp(argv[1], "polarization"))
		return probe_polarization(argc - 1, argv + 1);
	if (!strcmp(argv[1], "pfc"))
		return probe_pfc(argc - 1, argv + 1);
	fs_err_usage("no such probe '%s': try polarization or pfc", argv[1]);
	return FS_EXIT_USAGE;
}
