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

/* gnuplot -e VARS TEMPLATE, bounded; 0 when the SVG was written */
int plot_gnuplot(const char *tdir, const char *tmpl, const char *vars, const char *svg, char *why, size_t wlen)
{
	char path[PATH_MAX + 64], errpath[PATH_MAX + 16];
	uint64_t deadline = clock_ns() + 10000000000ull;
	struct stat st;
	pid_t pid;
	int st_w = 0;

	snprintf(path, sizeof(path), "%s/%s", tdir, tmpl);
	snprintf(errpath, sizeof(errpath), "%s.log", svg);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(why, wlen, "fork: %s", strerror(errno));
		return -1;
	}
	if (!pid) {
		FILE *e = freopen(errpath, "w", stderr);

		(void)e;
		if (!freopen("/dev/null", "r", stdin))
			_exit(126);
		execlp("gnuplot", "gnuplot", "-e", vars, path, (char *)NULL);
		_exit(127);
	}
	for (;;) {
		struct timespec ts = { 0, 20000000 };
		pid_t w = waitpid(pid, &st_w, WNOHANG);

		if (w == pid)
			break;
		if (clock_ns() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &st_w, 0);
			snprintf(why, wlen, "gnuplot took over 10 s on %s", tmpl);
			return -1;
		}
		nanosleep(&ts, NULL);
	}
	if (WIFEXITED(st_w) && WEXITSTATUS(st_w) == 127) {
		snprintf(why, wlen, "gnuplot is not installed (apt-get install gnuplot-nox)");
		return -1;
	}
	if (!WIFEXITED(st_w) || WEXITSTATUS(st_w) || stat(svg, &st) || !st.st_size) {
		FILE *e = fopen(errpath, "r");
		char line[200] = "";

		if (e) {
			if (!fgets(line, sizeof(line), e))
				line[0] = 0;
			fclose(e);
		}
		line[strcspn(line, "\n")] = 0;
		snprintf(why, wlen, "gnuplot failed on %s: %s", tmpl, *line ? line : "no message");
		return -1;
	}
	unlink(errpath);
	return 0;
}

void plot_gnuplot_quote(const char *in, char *out, size_t len)
{
	size_t i;

	for (i = 0; in[i] && i + 1 < len; i++)
		out[i] = in[i] == '\'' || in[i] == '\\' ? '_' : in[i];
	out[i] = 0;
}
