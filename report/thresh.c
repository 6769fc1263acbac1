/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The thresholds file (fabscope-thresholds(5)) as read: INI, a section a
 * thing judged, a key = value a line, '#' or ';' comments.  [phase NAME]
 * sections hold one phase's own limits, over the global ones.  Every key
 * is known (a typo is refused, not ignored: a gate that is not there would
 * pass), given once, and its value checked for what it is: a count, a
 * fraction of 0 to 1, a non-negative number, fail/off, or fail alone
 * ([polarization] polarized: a polarized probe always fails the run's
 * integrity, verdict.c; the key says so again, and "off" would be a gate
 * that is not there).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../records/read.h"
#include "report.h"

enum tval { T_NUM, T_FRAC, T_COUNT, T_FAILOFF, T_FAIL };

static const struct {
	const char *sec, *key;
	enum tval val;
} known[] = {
	{ "bw", "line_rate_gbps", T_NUM }, { "bw", "min_fraction", T_FRAC }, { "bw", "min_gbps", T_NUM },
	{ "lat", "p50_us_max", T_NUM }, { "lat", "p99_us_max", T_NUM },
	{ "run", "max_missing", T_COUNT }, { "run", "max_failed", T_COUNT }, { "run", "max_suspects", T_COUNT },
	{ "suspects", "max_confirmed", T_COUNT }, { "suspects", "max_unconfirmed", T_COUNT },
	{ "pfc", "storm", T_FAILOFF }, { "pfc", "max_paused", T_FRAC }, { "pfc", "max_pps", T_NUM },
	{ "polarization", "polarized", T_FAIL }, { "polarization", "inconclusive", T_FAILOFF },
	{ "model", "pair_fraction", T_FRAC }, { "model", "aggregate_fraction", T_FRAC },
	{ "allreduce", "min_busbw_gbps", T_NUM }, { "alltoall", "min_busbw_gbps", T_NUM },
	{ "phase", "min_gbps", T_NUM }, { "phase", "min_fraction", T_FRAC }, { "phase", "p50_us_max", T_NUM },
	{ "phase", "p99_us_max", T_NUM }, { "phase", "min_busbw_gbps", T_NUM },
	{ "phase", "pair_fraction", T_FRAC }, { "phase", "aggregate_fraction", T_FRAC },
};

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

/* a plan's phase name: letters, digits, '-', '_' and '.' (fabscope-plan(5)) */
static int phase_name_ok(const char *s)
{
	if (!*s || strlen(s) >= sizeof(((struct tkv *)0)->phase))
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("-_.", *s))
			return 0;
	return 1;
}

/* the kind of value [sec] key takes; -1: no such key */
static int key_val(const char *sec, const char *key)
{
	size_t i;

	if (!strcmp(sec, "bw") && !strncmp(key, "rail", 4) && isdigit((unsigned char)key[4])) {
		for (i = 5; key[i]; i++)
			if (!isdigit((unsigned char)key[i]))
				return -1;
		return T_NUM;	/* rail3 = 200: one rail's line rate */
	}
	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(known[i].sec, sec) && !strcmp(known[i].key, key))
			return (int)known[i].val;
	return -1;
}

/* "[bw]" or "[phase NAME]" at line: into sec and phase */
static int section(const struct thresholds *t, char *s, int line, char *sec, size_t slen, char *phase, size_t plen)
{
	char *e = strchr(s, ']'), *name;

	if (!e || e[1])
		return fs_err_usage("%s:%d: malformed section header", t->path, line);
	*e = 0;
	s = trim(s + 1);
	phase[0] = 0;
	if (strncmp(s, "phase", 5) || (s[5] && !isspace((unsigned char)s[5]))) {
		snprintf(sec, slen, "%s", s);
		return 0;
	}
	name = trim(s + 5);
	if (!*name)
		return fs_err_usage("%s:%d: [phase] needs the phase's name: [phase NAME], NAME as in the plan", t->path,
				    line);
	if (!phase_name_ok(name))
		return fs_err_usage("%s:%d: [phase %s]: a phase's name has letters, digits, '-', '_' and '.'",
				    t->path, line, name);
	snprintf(sec, slen, "phase");
	snprintf(phase, plen, "%s", name);
	return 0;
}

/* the value of key (of kind val) at line into kv->v */
static int value(const struct thresholds *t, struct tkv *kv, int val, char *text, int line)
{
	char *end;

	if (val == T_FAIL && strcmp(text, "fail"))
		return fs_err_usage("%s:%d: %s = '%s': a polarized probe always fails the run's integrity; give "
				    "'fail', or leave the key out", t->path, line, kv->key, text);
	if (val == T_FAILOFF || val == T_FAIL) {	/* a word, not a number: 1 fail, 0 off */
		if (strcmp(text, "fail") && strcmp(text, "off"))
			return fs_err_usage("%s:%d: %s = '%s': give 'fail' or 'off'", t->path, line, kv->key, text);
		kv->v = !strcmp(text, "fail");
		return 0;
	}
	kv->v = strtod(text, &end);
	if (end == text || *end || !isfinite(kv->v) || kv->v < 0)
		return fs_err_usage("%s:%d: '%s' is not a non-negative number", t->path, line, text);
	if (val == T_FRAC && kv->v > 1)
		return fs_err_usage("%s:%d: %s = %s: give a fraction, 0 to 1", t->path, line, kv->key, text);
	if (val == T_COUNT && kv->v != floor(kv->v))
		return fs_err_usage("%s:%d: %s = %s: give a whole number (a count)", t->path, line, kv->key, text);
	return 0;
}

/* one "key = value" line s of section sec (phase: of [phase NAME]) */
static int key_line(struct thresholds *t, char *s, int line, const char *sec, const char *phase)
{
	char *eq = strchr(s, '='), full[160];
	int i, val;

	if (!eq || !*sec)
		return fs_err_usage("%s:%d: expected key = value inside a [section]", t->path, line);
	*eq = 0;
	s = trim(s);
	if (*phase)
		snprintf(full, sizeof(full), "[phase %s] %s", phase, s);
	else
		snprintf(full, sizeof(full), "%s.%s", sec, s);
	if ((val = key_val(sec, s)) < 0)
		return fs_err_usage("%s:%d: unknown threshold '%s'; see 'fabscope report --help'", t->path, line, full);
	for (i = 0; i < t->n; i++)	/* one value a key: which would win is a guess */
		if (!strcmp(t->kv[i].sec, sec) && !strcmp(t->kv[i].phase, phase) && !strcmp(t->kv[i].key, s))
			return fs_err_usage("%s:%d: '%s' is given already, at line %d", t->path, line, full,
					    t->kv[i].line);
	if (FS_ALLOC_GROW(t->kv, t->n + 1, t->alloc))
		return fs_err_env("out of memory reading %s", t->path);
	memset(&t->kv[t->n], 0, sizeof(t->kv[t->n]));
	snprintf(t->kv[t->n].sec, sizeof(t->kv[t->n].sec), "%s", sec);
	snprintf(t->kv[t->n].phase, sizeof(t->kv[t->n].phase), "%s", phase);
	snprintf(t->kv[t->n].key, sizeof(t->kv[t->n].key), "%s", s);
	t->kv[t->n].line = line;
	if (value(t, &t->kv[t->n], val, trim(eq + 1), line))
		return -FS_EXIT_USAGE;
	t->n++;
	return 0;
}

/* what the file holds, as a whole: min_fraction needs a line rate; something to judge by */
static int whole(const struct thresholds *t)
{
	int i, frac = 0, line = 0, checks = 0;

	for (i = 0; i < t->n; i++) {
		const struct tkv *kv = &t->kv[i];

		frac |= !strcmp(kv->key, "min_fraction");
		line |= !strcmp(kv->sec, "bw") && (!strcmp(kv->key, "line_rate_gbps") || !strncmp(kv->key, "rail", 4));
		checks += strcmp(kv->sec, "bw") || (strcmp(kv->key, "line_rate_gbps") && strncmp(kv->key, "rail", 4));
	}
	if (frac && !line)
		return fs_err_usage("%s: min_fraction needs line_rate_gbps (or railN = GBPS) in [bw]", t->path);
	if (!checks)
		return fs_err_usage(t->n ? "%s: no check in it: line rates (line_rate_gbps, railN) need min_fraction "
				    "to judge by (see 'fabscope report --help')" :
				    "%s: no thresholds in it (see 'fabscope report --help')", t->path);
	return 0;
}

int thresholds_read(struct thresholds *t, const char *path)
{
	FILE *f;
	char line[512], sec[32] = "", phase[64] = "";
	int lineno = 0, rc = 0, fd;

	memset(t, 0, sizeof(*t));
	t->path = path;
	/* a regular file only: a FIFO would hang the report, /dev/zero feed it for ever */
	if ((fd = records_open(path)) == RECORDS_ENOTREG) {	/* a bad thresholds file: usage, as a missing one */
		struct stat st;

		if (!stat(path, &st) && S_ISDIR(st.st_mode))
			return fs_err_read("thresholds", path, EISDIR);
		return fs_err_usage("cannot read thresholds '%s': not a regular file (a FIFO or a device): give the "
				    "thresholds file (fabscope-thresholds(5))", path);
	}
	if (fd < 0)
		return fs_err_read("thresholds", path, -fd);
	if (!(f = fdopen(fd, "r"))) {
		close(fd);
		return fs_err_env("cannot read thresholds '%s': %s", path, strerror(errno));
	}
	while (!rc && fgets(line, sizeof(line), f)) {
		char *s, *c;
		size_t n = strlen(line);

		lineno++;
		if (n == sizeof(line) - 1 && line[n - 1] != '\n' && !feof(f)) {	/* (its rest would be read as a line) */
			rc = fs_err_usage("%s:%d: a line over %zu bytes: thresholds are short 'key = value' lines",
					  path, lineno, sizeof(line) - 2);
			break;
		}
		if ((c = strpbrk(line, "#;")))
			*c = 0;
		s = trim(line);
		if (!*s)
			continue;
		if (*s == '[')
			rc = section(t, s, lineno, sec, sizeof(sec), phase, sizeof(phase));
		else
			rc = key_line(t, s, lineno, sec, phase);
	}
	if (!rc && ferror(f))	/* (a directory: EISDIR) */
		rc = fs_err_read("thresholds", path, errno);
	fclose(f);
	if (!rc)
		rc = whole(t);
	if (rc)
		thresholds_release(t);
	return rc;
}

void thresholds_release(struct thresholds *t)
{
	free(t->kv);
	t->kv = NULL;
	t->n = 0;
	t->alloc = 0;
}

double thresholds_get(const struct thresholds *t, const char *sec, const char *key, double dflt)
{
	int i;

	for (i = 0; t && i < t->n; i++)
		if (!t->kv[i].phase[0] && !strcmp(t->kv[i].sec, sec) && !strcmp(t->kv[i].key, key))
			return t->kv[i].v;
	return dflt;
}

double thresholds_phase(const struct thresholds *t, const char *phase, const char *key)
{
	int i;

	for (i = 0; t && i < t->n; i++)
		if (t->kv[i].phase[0] && !strcmp(t->kv[i].phase, phase) && !strcmp(t->kv[i].key, key))
			return t->kv[i].v;
	return NAN;
}
