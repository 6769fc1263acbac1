/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The gnuplot runner beside its templates (the .gp files of this folder),
 * for the report's plots and pcap's: find the templates, run gnuplot on
 * one of them without a shell, bounded, and see that it wrote its SVG.
 *
 * The templates are found in $FABSCOPE_PLOTS, else in a build tree the
 * binary runs from (plots/ or ../plots/ of its directory, with O=DIR), else
 * in FABSCOPE_DATADIR/plots, the directory compiled in (make DATADIR=...,
 * /usr/share/fabscope for the Debian package).  Each gnuplot run is
 * bounded (10 s).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../core/clock.h"
#include "plot.h"

#ifndef FABSCOPE_DATADIR
#define FABSCOPE_DATADIR "/usr/local/share/fabscope"
#endif

const char *plot_templates_default(void)
{
	static char buf[PATH_MAX + 32];
	const char *env = getenv("FABSCOPE_PLOTS");

	if (env && *env) {	/* (then it is the only place looked in) */
		snprintf(buf, sizeof(buf), "%s (FABSCOPE_PLOTS)", env);
		return buf;
	}
	return FABSCOPE_DATADIR "/plots";
}

int plot_find_templates(char *out, size_t len)
{
	const char *env = getenv("FABSCOPE_PLOTS");
	char exe[PATH_MAX], try[PATH_MAX + 64], *slash;
	const char *rel[] = { "/plots", "/../plots" };
	ssize_t n;
	size_t i;
	struct stat st;

	if (env && *env) {
		snprintf(out, len, "%s", env);
		snprintf(try, sizeof(try), "%s/lanes.gp", env);
		return stat(try, &st) ? -1 : 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	slash = n > 0 ? (exe[n] = 0, strrchr(exe, '/')) : NULL;
	if (slash) {
		*slash = 0;
		/* a build tree: its Makefile beside the templates, so that an
		 * installed binary never takes /usr/plots for its own */
		for (i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
			snprintf(try, sizeof(try), "%s%s/../Makefile", exe, rel[i]);
			if (stat(try, &st))
				continue;
			snprintf(try, sizeof(try), "%s%s/lanes.gp", exe, rel[i]);
			if (!stat(try, &st)) {
				snprintf(out, len, "%s%s", exe, rel[i]);
				return 0;
			}
		}
	}
	snprintf(try, sizeof(try), "%s/plots/lanes.gp", FABSCOPE_DATADIR);
	if (stat(try, &st))
		return -1;
	snprintf(out, len, "%s/plots", FABSCOPE_DATADIR);
	return 0;
}

/* the first line of what gnuplot said (its log, fd), for a message */
static void first_line(int fd, char *line, size_t len)
{
	ssize_t n = pread(fd, line, len - 1, 0);

	line[n > 0 ? n : 0] = 0;
	line[strcspn(line, "\n")] = 0;
}

/* the child: in dir, the SVG on standard output, the log on standard error */
static void gnuplot_child(const struct outdir *dir, int svg, int log, const char *vars, const char *path)
{
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (null < 0 || dup2(null, 0) < 0 || dup2(svg, 1) < 0 || dup2(log, 2) < 0 || fchdir(dir->fd))
		_exit(126);
	execlp("gnuplot", "gnuplot", "-e", vars, path, (char *)NULL);
	_exit(127);
}

/* wait for pid, at most until deadline (then killed): its status, or -1 after the deadline */
static int gnuplot_wait(pid_t pid, uint64_t deadline)
{
	int st_w = 0;

	for (;;) {
		struct timespec ts = { 0, 20000000 };
		pid_t w = waitpid(pid, &st_w, WNOHANG);

		if (w == pid)
			return st_w;
		if (clock_ns() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &st_w, 0);
			return -1;
		}
		nanosleep(&ts, NULL);
	}
}

int plot_gnuplot(const char *tdir, const char *tmpl, const char *vars, const struct outdir *dir, const char *svg,
		 char *why, size_t wlen)
{
	char path[PATH_MAX + 64], logname[300], line[200];
	struct outfile out, log;
	struct stat st;
	pid_t pid;
	int st_w;

	snprintf(path, sizeof(path), "%s/%s", tdir, tmpl);
	snprintf(logname, sizeof(logname), "%s.log", svg);
	if (outfile_create_in(&out, dir, svg, 0644)) {
		snprintf(why, wlen, "cannot write %s/%s", dir->path, svg);
		return -1;
	}
	if (outfile_create_in(&log, dir, logname, 0644)) {
		outfile_abort(&out);
		snprintf(why, wlen, "cannot write %s/%s", dir->path, logname);
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(why, wlen, "fork: %s", strerror(errno));
		outfile_abort(&out);
		outfile_abort(&log);
		return -1;
	}
	if (!pid)
		gnuplot_child(dir, out.fd, log.fd, vars, path);
	st_w = gnuplot_wait(pid, clock_ns() + 10000000000ull);
	if (st_w == -1)
		snprintf(why, wlen, "gnuplot took over 10 s on %s", tmpl);
	else if (WIFEXITED(st_w) && WEXITSTATUS(st_w) == 127)
		snprintf(why, wlen, "gnuplot is not installed (apt-get install gnuplot-nox)");
	else if (!WIFEXITED(st_w) || WEXITSTATUS(st_w) || fstat(out.fd, &st) || !st.st_size) {
		first_line(log.fd, line, sizeof(line));
		snprintf(why, wlen, "gnuplot failed on %s: %s", tmpl, *line ? line : "no message");
	} else {
		outfile_abort(&log);
		return outfile_commit(&out, 0) ? (snprintf(why, wlen, "cannot write %s/%s", dir->path, svg), -1) : 0;
	}
	outfile_abort(&out);
	if (st_w != -1 && !(WIFEXITED(st_w) && WEXITSTATUS(st_w) == 127))
		outfile_commit(&log, 0);	/* (kept for the whole story) */
	else
		outfile_abort(&log);
	return -1;
}

/* a byte written as it is inside gnuplot's double quotes: nothing gnuplot makes anything of */
static int gp_plain(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr(" ._-,:/+=()", c));
}

size_t plot_gnuplot_quote(const char *in, char *out, size_t len)
{
	size_t o = 0, i = 0;

	if (len < 3) {
		if (len)
			*out = 0;
		return 0;
	}
	out[o++] = '"';
	while (in[i]) {
		size_t k = 1, need = 0, j;

		/* a UTF-8 sequence goes whole or not at all */
		if ((unsigned char)in[i] >= 0xc0)
			while (k < 4 && ((unsigned char)in[i + k] & 0xc0) == 0x80)
				k++;
		for (j = 0; j < k; j++)
			need += gp_plain((unsigned char)in[i + j]) ? 1 : 5;
		if (o + need + 2 > len)
			break;
		for (j = 0; j < k; j++, i++) {
			unsigned char c = (unsigned char)in[i];

			if (gp_plain(c))
				out[o++] = (char)c;
			else
				o += (size_t)snprintf(out + o, len - o, "\\0%03o", c);
		}
	}
	out[o++] = '"';
	out[o] = 0;
	return o;
}

void plot_var_str(char *vars, size_t len, const char *name, const char *value)
{
	size_t used = strlen(vars);
	int n;

	if (used + strlen(name) + 4 >= len)
		return;
	n = snprintf(vars + used, len - used, "%s=", name);
	used += (size_t)n;
	used += plot_gnuplot_quote(value, vars + used, len - used - 2);
	snprintf(vars + used, len - used, "; ");
}

void plot_var_num(char *vars, size_t len, const char *name, double value)
{
	size_t used = strlen(vars);

	snprintf(vars + used, len - used, "%s=%.17g; ", name, isfinite(value) ? value : 0.0);
}
