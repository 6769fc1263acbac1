/* SPDX-License-Identifier: BSD-2-Clause */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/error.h"
#include "results.h"

static char *path_of(const char *dir, const char *name)
{
	size_t len = strlen(dir) + strlen(name) + 2;
	char *p = malloc(len);

	snprintf(p, len, "%s/%s", dir, name);
	return p;
}

static int dir_is_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int empty = 1;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			empty = 0;
	closedir(d);
	return empty;
}

int results_create(struct results *r, const char *dir)
{
	char *p;

	memset(r, 0, sizeof(*r));
	r->fd = r->jfd = -1;
	if (mkdir(dir, 0777) && errno != EEXIST)
		return fs_err_env("cannot create results directory '%s': %s", dir, strerror(errno));
	{
		struct stat st;

		if (!stat(dir, &st) && !S_ISDIR(st.st_mode))
			return fs_err_usage("results directory '%s' is a file: give a directory (a new one)", dir);
	}
	if (!dir_is_empty(dir))
		return fs_err_usage("results directory '%s' is not empty: give a new one, or finish that run with --resume %s",
				    dir, dir);
	r->dir = strdup(dir);
	p = path_of(dir, "results.jsonl");
	r->fd = open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
	free(p);
	if (r->fd < 0)
		return fs_err_env("cannot create '%s/results.jsonl': %s", dir, strerror(errno));
	p = path_of(dir, "jobs.done");
	r->jfd = open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
	free(p);
	if (r->jfd < 0)
		return fs_err_env("cannot create '%s/jobs.done': %s", dir, strerror(errno));
	r->run = json_object();
	r->done = json_object();
	return 0;
}

/* What scan() saw in results.jsonl. */
struct scan_info {
	off_t good;		/* the offset after the last whole line */
	long torn;		/* 1: the last line is cut short (a crash) */
	long bad, first_bad;	/* whole lines that are not JSON objects; the first's number */
	long nobj;		/* records */
};

/* Read results.jsonl: its records into recs (or NULL), the jobs that have
 * one into done (or NULL), and what it holds into *si. */
static int scan(const char *dir, json_t *recs, json_t *done, struct scan_info *si)
{
	char *p = path_of(dir, "results.jsonl"), *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f = fopen(p, "r");
	long lineno = 0;

	free(p);
	memset(si, 0, sizeof(*si));
	if (!f)
		return -errno;
	while ((n = getline(&line, &cap, f)) > 0) {
		json_t *rec;

		lineno++;
		if (line[n - 1] != '\n') {	/* cut short: only the last line can be */
			si->torn = 1;
			if (!si->bad)
				si->first_bad = lineno;
			break;
		}
		rec = json_loadb(line, (size_t)n, 0, NULL);
		if (!json_is_object(rec)) {
			if (!si->bad++)
				si->first_bad = lineno;
		} else {
			const char *key = json_string_value(json_object_get(rec, "job"));

			if (key && done)
				json_object_set_new(done, key, json_true());
			if (recs)
				json_array_append(recs, rec);
			si->nobj++;
		}
		json_decref(rec);
		si->good += n;
	}
	free(line);
	fclose(f);
	return 0;
}

/* The keys of jobs.done: NULL when the file is not there (a run of an
 * older fabscope), else an object (maybe empty). */
static json_t *read_finished(const char *dir, int *err)
{
	char *p = path_of(dir, "jobs.done"), *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f = fopen(p, "r");
	json_t *keys;

	free(p);
	*err = 0;
	if (!f) {
		*err = errno == ENOENT ? 0 : errno;
		return NULL;
	}
	keys = json_object();
	while ((n = getline(&line, &cap, f)) > 0)
		if (line[n - 1] == '\n') {	/* (a line cut by a crash: its job did not finish) */
			line[n - 1] = 0;
			if (*line)
				json_object_set_new(keys, line, json_true());
		}
	if (ferror(f))
		*err = errno ? errno : EIO;
	free(line);
	fclose(f);
	return keys;
}

/*
 * Move the records of jobs that never finished (killed or interrupted in
 * the middle: a collective's first sizes, a sweep's first messages) out of
 * results.jsonl into results.partial.jsonl, so that the job runs again
 * whole and no reader sees its sizes twice.  The kept lines go to a
 * temporary file renamed over results.jsonl.  The number moved, or -errno.
 */
static long set_aside(const char *dir, const json_t *finished, long *kept)
{
	char *p = path_of(dir, "results.jsonl"), *tmp = path_of(dir, ".results.jsonl.tmp");
	char *pp = path_of(dir, "results.partial.jsonl"), *line = NULL;
	FILE *in = fopen(p, "r"), *out = NULL, *part = NULL;
	size_t cap = 0;
	ssize_t n;
	long moved = 0, rc;

	*kept = 0;
	if (!in) {
		rc = errno == ENOENT ? 0 : -errno;
		goto done;
	}
	out = fopen(tmp, "w");
	part = fopen(pp, "a");	/* (appended to: an earlier --resume's records stay) */
	if (!out || !part) {
		rc = -errno;
		goto done;
	}
	while ((n = getline(&line, &cap, in)) > 0) {
		json_t *rec;
		const char *key;

		if (line[n - 1] != '\n')
			break;	/* torn: dropped */
		rec = json_loadb(line, (size_t)n, 0, NULL);
		key = json_string_value(json_object_get(rec, "job"));
		if (json_is_object(rec) && key && !json_object_get(finished, key)) {
			fwrite(line, 1, (size_t)n, part);
			moved++;
		} else {	/* (a line that is no record stays, as it was) */
			fwrite(line, 1, (size_t)n, out);
			*kept += json_is_object(rec);
		}
		json_decref(rec);
	}
	if (ferror(in) || fflush(part) || fsync(fileno(part)) || fflush(out) || fsync(fileno(out))) {
		rc = -(errno ? errno : EIO);
		goto done;
	}
	if (!moved) {	/* nothing to set aside: results.jsonl stays as it is */
		rc = 0;
		goto done;
	}
	rc = rename(tmp, p) ? -errno : moved;
done:
	if (in)
		fclose(in);
	if (out)
		fclose(out);
	if (part)
		fclose(part);
	if (rc <= 0)
		unlink(tmp);
	free(line);
	free(p);
	free(tmp);
	free(pp);
	return rc;
}

int results_resume(struct results *r, const char *dir)
{
	char *p = path_of(dir, "run.json");
	json_error_t jerr;
	json_t *finished;
	struct scan_info si;
	long kept = 0, moved = 0;
	int rc, jerrno;

	memset(r, 0, sizeof(*r));
	r->fd = r->jfd = -1;
	r->run = json_load_file(p, 0, &jerr);
	free(p);
	if (!json_is_object(r->run))
		return fs_err_usage("cannot resume '%s': no readable run.json (%s)", dir, jerr.text);
	r->dir = strdup(dir);
	finished = read_finished(dir, &jerrno);
	if (jerrno)
		return fs_err_env("cannot read '%s/jobs.done': %s", dir, strerror(jerrno));
	r->done = json_object();
	rc = scan(dir, NULL, r->done, &si);
	if (rc && rc != -ENOENT)
		return fs_err_env("cannot read '%s/results.jsonl': %s", dir, strerror(-rc));
	if (finished) {	/* the jobs that finished; the others run again */
		const char *key;
		json_t *v;
		long m = 0;

		json_object_foreach(r->done, key, v)	/* a job with records that did not finish? */
			if (!json_object_get(finished, key)) {
				m = set_aside(dir, finished, &kept);
				break;
			}

		json_decref(r->done);
		r->done = finished;
		if (m < 0)
			return fs_err_env("cannot set aside the records of unfinished jobs in '%s': %s", dir,
					  strerror((int)-m));
		moved = m;
		if (moved)
			si.torn = 0;	/* (the rewrite dropped it) */
	}
	p = path_of(dir, "results.jsonl");
	r->fd = open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
	if (r->fd >= 0 && si.torn) {
		/* a line cut by a crash: keep everything before it */
		if (ftruncate(r->fd, si.good))
			fs_warn("cannot drop the torn last line of %s: %s", p, strerror(errno));
		else
			fs_warn("%s: dropped its torn last line (cut short by a crash)", p);
	}
	if (si.bad)
		fs_warn("%s: %ld line(s) that are not records, the first at line %ld: left as they are "
			"(readers skip them)", p, si.bad, si.first_bad);
	free(p);
	if (r->fd < 0)
		return fs_err_env("cannot append to '%s/results.jsonl': %s", dir, strerror(errno));
	if (moved)
		fs_warn("%s: %ld record(s) of jobs that did not finish moved to results.partial.jsonl; "
			"those jobs run again", dir, moved);
	p = path_of(dir, "jobs.done");
	r->jfd = open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
	free(p);
	if (r->jfd < 0)
		return fs_err_env("cannot append to '%s/jobs.done': %s", dir, strerror(errno));
	if (!finished) {	/* an older run: a job with a record is done */
		json_t *v;
		const char *key;

		json_object_foreach(r->done, key, v)
			if (results_job_finished(r, key))
				return -FS_EXIT_ENV;
	}
	r->nrec = moved ? kept : si.nobj;
	return 0;
}

int results_save(struct results *r)
{
	char *p = path_of(r->dir, "run.json"), *tmp = path_of(r->dir, ".run.json.tmp");
	int fd, rc = 0;
	char *text = json_dumps(r->run, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0 || !text) {
		rc = fs_err_env("cannot write '%s': %s", tmp, strerror(errno));
	} else {
		size_t len = strlen(text), off = 0;

		while (off < len) {
			ssize_t n = write(fd, text + off, len - off);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			off += (size_t)n;
		}
		if (off < len || write(fd, "\n", 1) != 1 || fsync(fd))
			rc = fs_err_env("cannot write '%s': %s", tmp, strerror(errno));
	}
	if (fd >= 0)
		close(fd);
	if (!rc && rename(tmp, p))
		rc = fs_err_env("cannot replace '%s': %s", p, strerror(errno));
	free(text);
	free(p);
	free(tmp);
	return rc;
}

int results_append(struct results *r, json_t *rec)
{
	char *text = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER);
	size_t len, off = 0;

	if (!text)
		return fs_err_env("cannot encode a record");
	len = strlen(text);
	text[len] = '\n';	/* over the NUL: the line goes out in one write */
	while (off < len + 1) {
		ssize_t n = write(r->fd, text + off, len + 1 - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(text);
			return fs_err_env("cannot append to %s/results.jsonl: %s", r->dir,
					  n < 0 ? strerror(errno) : "short write");
		}
		off += (size_t)n;
	}
	free(text);
	r->nrec++;
	return 0;
}

int results_job_finished(struct results *r, const char *key)
{
	size_t len = strlen(key);
	char *line = malloc(len + 2);
	ssize_t n;

	if (!line)
		return fs_err_env("out of memory");
	memcpy(line, key, len);
	line[len] = '\n';
	line[len + 1] = 0;
	do	/* one write: a line is whole or not there */
		n = r->jfd >= 0 ? write(r->jfd, line, len + 1) : (ssize_t)len + 1;
	while (n < 0 && errno == EINTR);
	free(line);
	if (n != (ssize_t)len + 1)
		return fs_err_env("cannot append to %s/jobs.done: %s", r->dir,
				  n < 0 ? strerror(errno) : "short write");
	json_object_set_new(r->done, key, json_true());
	return 0;
}

int results_sync(struct results *r)
{
	if (r->jfd >= 0 && fdatasync(r->jfd) && errno != EINVAL)
		return fs_err_env("cannot sync %s/jobs.done: %s", r->dir, strerror(errno));
	return r->fd >= 0 && fdatasync(r->fd) && errno != EINVAL ?
	       fs_err_env("cannot sync %s/results.jsonl: %s", r->dir, strerror(errno)) : 0;
}

int results_job_done(const struct results *r, const char *key)
{
	return json_object_get(r->done, key) != NULL;
}

void results_close(struct results *r)
{
	if (r->fd >= 0)
		close(r->fd);
	if (r->jfd >= 0)
		close(r->jfd);
	json_decref(r->run);
	json_decref(r->done);
	free(r->dir);
	memset(r, 0, sizeof(*r));
	r->fd = r->jfd = -1;
}

json_t *results_load_all(const char *dir, long *skipped, long *first_skipped)
{
	json_t *recs = json_array();
	struct scan_info si;

	if (scan(dir, recs, NULL, &si)) {
		json_decref(recs);
		return NULL;
	}
	*skipped = si.torn + si.bad;
	if (first_skipped)
		*first_skipped = si.first_bad;
	return recs;
}
