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
	r->fd = -1;
	if (mkdir(dir, 0777) && errno != EEXIST)
		return fs_err_env("cannot create results directory '%s': %s", dir, strerror(errno));
	if (!dir_is_empty(dir))
		return fs_err_usage("results directory '%s' is not empty: give a new one, or finish that run with --resume %s",
				    dir, dir);
	r->dir = strdup(dir);
	p = path_of(dir, "results.jsonl");
	r->fd = open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
	free(p);
	if (r->fd < 0)
		return fs_err_env("cannot create '%s/results.jsonl': %s", dir, strerror(errno));
	r->run = json_object();
	r->done = json_object();
	return 0;
}

/* Read results.jsonl: records (or NULL to only count) and the offset after
 * the last whole line.  Lines that are not JSON objects count as torn. */
static int scan(const char *dir, json_t *recs, json_t *done, off_t *good, long *torn)
{
	char *p = path_of(dir, "results.jsonl"), *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f = fopen(p, "r");
	off_t off = 0;

	free(p);
	*good = 0;
	*torn = 0;
	if (!f)
		return -errno;
	while ((n = getline(&line, &cap, f)) > 0) {
		json_t *rec;

		if (line[n - 1] != '\n') {	/* cut short: only the last line can be */
			(*torn)++;
			break;
		}
		rec = json_loadb(line, (size_t)n, 0, NULL);
		if (!json_is_object(rec)) {
			(*torn)++;
			json_decref(rec);
		} else {
			const char *key = json_string_value(json_object_get(rec, "job"));

			if (key && done)
				json_object_set_new(done, key, json_true());
			if (recs)
				json_array_append(recs, rec);
			json_decref(rec);
		}
		off += n;
		*good = off;
	}
	free(line);
	fclose(f);
	return 0;
}

int results_resume(struct results *r, const char *dir)
{
	char *p = path_of(dir, "run.json");
	json_error_t jerr;
	long torn;
	off_t good;
	int rc;

	memset(r, 0, sizeof(*r));
	r->fd = -1;
	r->run = json_load_file(p, 0, &jerr);
	free(p);
	if (!json_is_object(r->run))
		return fs_err_usage("cannot resume '%s': no readable run.json (%s)", dir, jerr.text);
	r->dir = strdup(dir);
	r->done = json_object();
	rc = scan(dir, NULL, r->done, &good, &torn);
	if (rc == -ENOENT)
		good = 0;
	else if (rc)
		return fs_err_env("cannot read '%s/results.jsonl': %s", dir, strerror(-rc));
	p = path_of(dir, "results.jsonl");
	r->fd = open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
	if (r->fd >= 0 && torn) {
		/* a line cut by a crash: keep everything before it */
		if (ftruncate(r->fd, good))
			fs_warn("cannot drop the torn last line of %s: %s", p, strerror(errno));
		else
			fs_warn("%s: dropped %ld torn line(s) at the end", p, torn);
	}
	free(p);
	if (r->fd < 0)
		return fs_err_env("cannot append to '%s/results.jsonl': %s", dir, strerror(errno));
	r->nrec = (long)json_object_size(r->done);
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
	const char *key = json_string_value(json_object_get(rec, "job"));
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
	if (key)
		json_object_set_new(r->done, key, json_true());
	r->nrec++;
	return 0;
}

int results_sync(struct results *r)
{
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
	json_decref(r->run);
	json_decref(r->done);
	free(r->dir);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

json_t *results_load_all(const char *dir, long *torn)
{
	json_t *recs = json_array();
	off_t good;

	if (scan(dir, recs, NULL, &good, torn)) {
		json_decref(recs);
		return NULL;
	}
	return recs;
}
