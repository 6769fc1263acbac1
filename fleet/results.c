/* SPDX-License-Identifier: BSD-2-Clause */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/clock.h"
#include "../core/error.h"
#include "../core/outfile.h"
#include "../records/read.h"
#include "results.h"

#define RES_DIR_MODE 0750
#define RES_FILE_MODE 0640

static char *path_of(const char *dir, const char *name)
{
	size_t len = strlen(dir) + strlen(name) + 2;
	char *p = malloc(len);

	snprintf(p, len, "%s/%s", dir, name);
	return p;
}

static void results_init(struct results *r)
{
	memset(r, 0, sizeof(*r));
	r->dfd = r->fd = r->jfd = r->rfd = -1;
	r->od.fd = -1;
}

#define RES_RESERVE ".space-reserve"

/* keep room for run.json: want bytes allocated (errors ignored: a reserve
 * is a help, not a need) */
static void reserve_grow(struct results *r, off_t want)
{
	if (r->rfd < 0) {
		struct outfile of;

		if (!outfile_create_in(&of, &r->od, RES_RESERVE, RES_FILE_MODE)) {
			if (outfile_publish(&of, 1))
				outfile_abort(&of);
			else
				r->rfd = outfile_take_fd(&of);
		}
	}
	if (r->rfd >= 0 && !r->werr)
		(void)posix_fallocate(r->rfd, 0, want < 65536 ? 65536 : want);
}

static void reserve_release(struct results *r)
{
	if (r->rfd >= 0) {
		if (ftruncate(r->rfd, 0))
			fs_log(1, "cannot release %s/%s: %s", r->dir, RES_RESERVE, strerror(errno));
		close(r->rfd);
		r->rfd = -1;
		unlinkat(r->dfd, RES_RESERVE, 0);
	}
}

/* the directory itself, checked by core/outfile.h (a directory, not a link, ours, writable by no one else) */
static int open_dir(struct results *r, const char *dir, int create)
{
	int rc = outdir_open(&r->od, dir, "results directory", create ? OUTDIR_MAKE | OUTDIR_PRIVATE | OUTDIR_EMPTY : 0);

	if (rc == -FS_EXIT_USAGE && create && outdir_exists(dir) && !r->od.path) {
		struct stat st;

		if (!lstat(dir, &st) && S_ISDIR(st.st_mode))	/* (a link or a file: said) */
			return fs_err_usage("results directory '%s' is not empty: give a new one, or finish that run "
					    "with --resume %s", dir, dir);
	}
	r->dfd = r->od.fd;
	return rc;
}

/* a new file name of the run (it must not be there), open for appending: 0, or -FS_EXIT_ENV said */
static int new_file(struct results *r, const char *name, int *fd)
{
	struct outfile of;
	int rc;

	if ((rc = outfile_create_in(&of, &r->od, name, RES_FILE_MODE)))
		return rc;
	if ((rc = outfile_publish(&of, 0))) {
		outfile_abort(&of);
		return rc;
	}
	*fd = outfile_take_fd(&of);
	if (fcntl(*fd, F_SETFL, O_APPEND))
		return fs_err_env("cannot append to '%s/%s': %s", r->dir, name, strerror(errno));
	return 0;
}

int results_create(struct results *r, const char *dir)
{
	int rc;

	results_init(r);
	if ((rc = open_dir(r, dir, 1)))
		return rc;
	r->dir = strdup(dir);
	if ((rc = new_file(r, "results.jsonl", &r->fd)) || (rc = new_file(r, "jobs.done", &r->jfd)))
		return rc;
	r->run = json_object();
	r->done = json_object();
	r->pending = json_array();
	return 0;
}

/* A record's job into the object of the jobs that have one. */
static int note_job(json_t *rec, void *ctx)
{
	const char *key = json_string_value(json_object_get(rec, "job"));

	return key && json_object_set_new((json_t *)ctx, key, json_true()) ? -ENOMEM : 0;
}

/* The keys of jobs.done: NULL when the file is not there (a run of an
 * older fabscope), else an object (maybe empty). */
static json_t *read_finished(const char *dir, int *err)
{
	char *p = path_of(dir, "jobs.done");
	struct records_lines l;
	int fd = p ? records_open(p) : -ENOMEM, over, torn;
	json_t *keys;
	long n;

	free(p);
	*err = 0;
	if (fd < 0) {
		*err = fd == -ENOENT ? 0 : fd;
		return NULL;
	}
	keys = json_object();
	records_lines_init(&l, fd);
	while ((n = records_line(&l, 4096, &over, &torn)) > 0)
		if (!over && !torn) {	/* (a line cut by a crash: its job did not finish; a key is short) */
			l.line[n - 1] = 0;
			if (*l.line)
				json_object_set_new(keys, l.line, json_true());
		}
	if (n < 0)
		*err = (int)n;
	records_lines_release(&l);
	close(fd);
	return keys;
}

/*
 * Move the records of jobs that never finished (killed or interrupted in
 * the middle: a collective's first sizes, a sweep's first messages) out of
 * results.jsonl into results.partial.jsonl, so that the job runs again
 * whole and no reader sees its sizes twice.  The kept lines go to a
 * temporary file renamed over results.jsonl.  The number moved, or -errno.
 */
static FILE *fdopen_or_close(int fd, const char *mode)
{
	FILE *f = fd >= 0 ? fdopen(fd, mode) : NULL;

	if (!f && fd >= 0)
		close(fd);
	return f;
}

/* (*said: the error was said, by core/outfile.h) */
static long set_aside(const struct results *r, const json_t *finished, long *kept, int *said)
{
	char *p = path_of(r->dir, "results.jsonl");
	int in = p ? records_open(p) : -ENOMEM, pfd, over, torn;
	struct outfile of = { .fd = -1 };
	struct records_lines l;
	FILE *out = NULL, *part = NULL;
	long moved = 0, rc, n = 0;

	free(p);
	*kept = 0;
	*said = 0;
	records_lines_init(&l, in);
	if (in < 0) {
		rc = in == -ENOENT ? 0 : in;
		goto done;
	}
	if (outfile_create_in(&of, &r->od, "results.jsonl", RES_FILE_MODE)) {
		*said = 1;
		rc = -EIO;
		goto done;
	}
	if (!(out = outfile_stream(&of))) {
		rc = -errno;
		goto done;
	}
	/* (appended to: an earlier --resume's records stay) */
	pfd = outfile_append_in(&r->od, "results.partial.jsonl", RES_FILE_MODE);
	*said = pfd < 0;
	part = pfd >= 0 ? fdopen_or_close(pfd, "a") : NULL;
	if (!part) {
		rc = pfd >= 0 ? -errno : -EIO;
		goto done;
	}
	while ((n = records_line(&l, RECORDS_LINE_MAX, &over, &torn)) > 0) {
		json_t *rec;
		const char *key;

		if (torn)
			break;	/* torn: dropped */
		if (over)
			continue;	/* (no record: fabscope writes none so long) dropped */
		rec = json_loadb(l.line, (size_t)n, 0, NULL);
		key = json_string_value(json_object_get(rec, "job"));
		if (json_is_object(rec) && key && !json_object_get(finished, key)) {
			fwrite(l.line, 1, (size_t)n, part);
			moved++;
		} else {	/* (a line that is no record stays, as it was) */
			fwrite(l.line, 1, (size_t)n, out);
			*kept += json_is_object(rec);
		}
		json_decref(rec);
	}
	if (n < 0 || fflush(part) || fsync(fileno(part)) || fflush(out) || fsync(fileno(out))) {
		rc = n < 0 ? n : -(errno ? errno : EIO);
		goto done;
	}
	if (!moved) {	/* nothing to set aside: results.jsonl stays as it is */
		rc = 0;
		goto done;
	}
	if (outfile_commit(&of, 0)) {
		*said = 1;
		rc = -EIO;
	} else {
		rc = moved;
	}
done:
	records_lines_release(&l);
	if (in >= 0)
		close(in);
	outfile_abort(&of);
	if (part)
		fclose(part);
	return rc;
}

int results_resume(struct results *r, const char *dir)
{
	char *p = path_of(dir, "run.json");
	json_error_t jerr;
	json_t *finished;
	struct records_scan_info si;
	long kept = 0, moved = 0;
	int rc, jerrno;

	results_init(r);
	r->pending = json_array();
	if ((rc = open_dir(r, dir, 0))) {
		free(p);
		return rc;
	}
	{	/* (a regular file, bounded, not through a link) */
		int err;

		r->run = records_load_json(r->dfd, "run.json", RECORDS_RUN_MAX, 1, &err, &jerr);
		if (err && err != -EPROTO)
			snprintf(jerr.text, sizeof(jerr.text), "%s", records_strerror(err));
	}
	free(p);
	if (!json_is_object(r->run))
		return fs_err_usage("cannot resume '%s': no readable run.json (%s)", dir, jerr.text);
	r->dir = strdup(dir);
	finished = read_finished(dir, &jerrno);
	if (jerrno)
		return fs_err_env("cannot read '%s/jobs.done': %s", dir, records_strerror(jerrno));
	r->done = json_object();
	rc = records_scan(dir, note_job, r->done, &si);
	if (rc && rc != -ENOENT)
		return fs_err_env("cannot read '%s/results.jsonl': %s", dir, records_strerror(rc));
	if (finished) {	/* the jobs that finished; the others run again */
		const char *key;
		json_t *v;
		long m = 0;
		int said = 0;

		json_object_foreach(r->done, key, v)	/* a job with records that did not finish? */
			if (!json_object_get(finished, key)) {
				m = set_aside(r, finished, &kept, &said);
				break;
			}

		json_decref(r->done);
		r->done = finished;
		if (m < 0 && said)
			return -FS_EXIT_ENV;
		if (m < 0)
			return fs_err_env("cannot set aside the records of unfinished jobs in '%s': %s", dir,
					  strerror((int)-m));
		moved = m;
		if (moved)
			si.torn = 0;	/* (the rewrite dropped it) */
	}
	p = path_of(dir, "results.jsonl");
	r->fd = outfile_append_in(&r->od, "results.jsonl", RES_FILE_MODE);
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
		return r->fd;	/* (said) */
	if (moved)
		fs_warn("%s: %ld record(s) of jobs that did not finish moved to results.partial.jsonl; "
			"those jobs run again", dir, moved);
	r->jfd = outfile_append_in(&r->od, "jobs.done", RES_FILE_MODE);
	if (r->jfd < 0)
		return r->jfd;	/* (said) */
	if (!finished) {	/* an older run: a job with a record is done */
		json_t *v;
		const char *key;

		json_object_foreach(r->done, key, v)
			json_array_append_new(r->pending, json_string(key));
		if ((rc = results_sync(r)))
			return rc;
	}
	r->nrec = moved ? kept : si.nobj;
	return 0;
}

int results_save(struct results *r)
{
	struct outfile of;
	int rc = 0;
	char *text = json_dumps(r->run, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	if (r->werr)	/* the disk is full: the reserve makes room for this one */
		reserve_release(r);
	if (!text)
		rc = fs_err_env("cannot write a new run.json in '%s': out of memory", r->dir);
	else if (!(rc = outfile_create_in(&of, &r->od, "run.json", RES_FILE_MODE))) {
		size_t len = strlen(text), off = 0;

		while (off < len) {	/* (a full disk: said by outfile_commit, the temporary file removed) */
			ssize_t n = write(of.fd, text + off, len - off);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			off += (size_t)n;
		}
		if (off < len || write(of.fd, "\n", 1) != 1) {
			rc = fs_err_env("cannot write '%s': %s", of.path, off < len && !errno ? "short write" :
					strerror(errno));
			outfile_abort(&of);
		} else {
			rc = outfile_commit(&of, 1);
		}
	}
	if (!rc && text)
		reserve_grow(r, 2 * (off_t)strlen(text));
	free(text);
	return rc;
}

int results_append(struct results *r, json_t *rec)
{
	char *text;
	size_t len, off = 0;
	off_t start;

	if (r->werr) {	/* the run is stopping: this one is lost, and counted */
		r->lost++;
		return -FS_EXIT_ENV;
	}
	text = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (!text)
		return fs_err_env("cannot encode a record");
	start = lseek(r->fd, 0, SEEK_END);
	len = strlen(text);
	text[len] = '\n';	/* over the NUL: the line goes out in one write */
	while (off < len + 1) {
		ssize_t n = write(r->fd, text + off, len + 1 - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r->werr = n < 0 ? errno : ENOSPC;
			r->lost++;
			free(text);
			/* no torn line: back to the last whole one */
			if (start >= 0 && off && ftruncate(r->fd, start))
				fs_warn("cannot cut %s/results.jsonl back to its last whole line: %s", r->dir,
					strerror(errno));
			return fs_err_env("cannot append to %s/results.jsonl: %s: the run stops", r->dir,
					  strerror(r->werr));
		}
		off += (size_t)n;
	}
	free(text);
	r->nrec++;
	return 0;
}

int results_job_finished(struct results *r, const char *key)
{
	json_object_set_new(r->done, key, json_true());
	if (!r->werr)	/* after a lost record no job is listed: they all run again */
		json_array_append_new(r->pending, json_string(key));
	return 0;
}

int results_sync(struct results *r)
{
	size_t i;

	r->synced_ns = clock_ns();
	if (r->werr)
		return -FS_EXIT_ENV;
	if (r->fd >= 0 && fdatasync(r->fd) && errno != EINVAL) {
		r->werr = errno;
		return fs_err_env("cannot sync %s/results.jsonl: %s: the run stops", r->dir, strerror(errno));
	}
	for (i = 0; r->jfd >= 0 && i < json_array_size(r->pending); i++) {	/* now that they are on disk */
		const char *key = json_string_value(json_array_get(r->pending, i));
		size_t len = strlen(key);
		char *line = malloc(len + 2);
		ssize_t n;

		if (!line)
			return fs_err_env("out of memory");
		memcpy(line, key, len);
		line[len] = '\n';
		do	/* one write: a line is whole or not there */
			n = write(r->jfd, line, len + 1);
		while (n < 0 && errno == EINTR);
		free(line);
		if (n != (ssize_t)len + 1) {
			r->werr = n < 0 ? errno : ENOSPC;
			return fs_err_env("cannot append to %s/jobs.done: %s: the run stops", r->dir, strerror(r->werr));
		}
	}
	json_array_clear(r->pending);
	if (r->jfd >= 0 && fdatasync(r->jfd) && errno != EINVAL) {
		r->werr = errno;
		return fs_err_env("cannot sync %s/jobs.done: %s: the run stops", r->dir, strerror(errno));
	}
	return 0;
}

void results_sync_due(struct results *r)
{
	if (r->pending && json_array_size(r->pending) && clock_ns() - r->synced_ns > 1000000000ull)
		results_sync(r);
}

int results_failed(const struct results *r)
{
	return r->werr ? -FS_EXIT_ENV : 0;
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
	if (r->rfd >= 0 || r->dfd >= 0)
		reserve_release(r);
	outdir_close(&r->od);
	json_decref(r->run);
	json_decref(r->done);
	json_decref(r->pending);
	free(r->dir);
	results_init(r);
}
