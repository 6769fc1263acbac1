/* SPDX-License-Identifier: BSD-2-Clause */
/* Reading results.jsonl (see read.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "read.h"

#define READ_CHUNK (256u << 10)

const char *records_strerror(int rc)
{
	if (rc == RECORDS_ENOTREG)
		return "not a regular file (a FIFO, a device or a directory): give the file 'fabscope run' wrote";
	if (rc == -EFBIG)
		return "larger than any fabscope writes: not read";
	if (rc == -EPROTO)
		return "not JSON";
	return strerror(-rc);
}

/* name in dirfd, for reading, when it is a regular file: its descriptor, or -errno */
static int open_regular(int dirfd, const char *name, int nofollow)
{
	/* (O_NONBLOCK: a FIFO with no writer must not hold the open) */
	int fd = openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0)), e;
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		e = errno;
		close(fd);
		return S_ISREG(st.st_mode) ? -e : RECORDS_ENOTREG;
	}
	if (fcntl(fd, F_SETFL, 0)) {
		e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

int records_open(const char *path)
{
	return open_regular(AT_FDCWD, path, 0);
}

json_t *records_load_json(int dirfd, const char *name, size_t max, int nofollow, int *err, json_error_t *jerr)
{
	int fd = open_regular(dirfd, name, nofollow);
	json_error_t local;
	struct stat st;
	json_t *doc;

	*err = 0;
	if (fd < 0) {
		*err = fd;
		return NULL;
	}
	if (fstat(fd, &st) || (size_t)st.st_size > max) {
		*err = -errno;
		if (!*err || st.st_size > 0)
			*err = -EFBIG;
		close(fd);
		return NULL;
	}
	/* read whole, in chunks: json_loadfd reads a byte a system call (a 16,384-node run.json
	 * of 20 MB: 20 million reads) */
	{
		size_t len = 0, cap = (size_t)st.st_size + 1;
		char *buf = malloc(cap);
		ssize_t n = 0;

		while (buf) {
			if (len == cap - 1) {	/* grew since fstat: still bounded by max */
				char *grown = cap > max ? NULL : realloc(buf, 2 * cap);

				if (!grown) {
					free(buf);
					buf = NULL;
					*err = cap > max ? -EFBIG : -ENOMEM;
					break;
				}
				buf = grown;
				cap *= 2;
			}
			n = read(fd, buf + len, cap - 1 - len);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			len += (size_t)n;
		}
		if (!buf && !*err)
			*err = -ENOMEM;
		if (buf && n < 0) {
			*err = -errno;
			free(buf);
			buf = NULL;
		}
		close(fd);
		if (!buf)
			return NULL;
		doc = json_loadb(buf, len, 0, jerr ? jerr : &local);
		free(buf);
	}
	if (!doc)
		*err = -EPROTO;
	return doc;
}

void records_lines_init(struct records_lines *l, int fd)
{
	memset(l, 0, sizeof(*l));
	l->fd = fd;
}

void records_lines_release(struct records_lines *l)
{
	free(l->buf);
	free(l->line);
	records_lines_init(l, -1);
}

/* more bytes in l->buf: how many (0 at the end), or -errno */
static long fill(struct records_lines *l)
{
	ssize_t n;

	if (!l->buf && !(l->buf = malloc(READ_CHUNK)))
		return -ENOMEM;
	do
		n = read(l->fd, l->buf, READ_CHUNK);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	l->pos = 0;
	l->len = (size_t)n;
	return n;
}

/* bytes into l->line at off (grown as needed, up to max + 1): 0, or -ENOMEM */
static int keep(struct records_lines *l, size_t off, const char *p, size_t n)
{
	if (off + n + 1 > l->line_cap) {
		size_t cap = l->line_cap ? l->line_cap : 4096;
		char *nl;

		while (cap < off + n + 1)
			cap *= 2;
		if (!(nl = realloc(l->line, cap)))
			return -ENOMEM;
		l->line = nl;
		l->line_cap = cap;
	}
	memcpy(l->line + off, p, n);
	l->line[off + n] = 0;
	return 0;
}

long records_line(struct records_lines *l, size_t max, int *over, int *torn)
{
	size_t total = 0;

	*over = *torn = 0;
	for (;;) {
		char *nl;
		size_t take;
		long r;

		if (l->pos == l->len) {
			if ((r = fill(l)) < 0)
				return r;
			if (!r) {	/* the end: a line with no newline is torn */
				*torn = total > 0;
				return (long)total;
			}
		}
		nl = memchr(l->buf + l->pos, '\n', l->len - l->pos);
		take = nl ? (size_t)(nl - (l->buf + l->pos)) + 1 : l->len - l->pos;
		if (!*over && total + take > max)
			*over = 1;	/* read to its end, nothing more of it kept */
		if (!*over && keep(l, total, l->buf + l->pos, take))
			return -ENOMEM;
		total += take;
		l->pos += take;
		if (nl)
			return (long)total;
	}
}

int records_scan_from(const char *dir, off_t from, records_fn fn, void *ctx, struct records_scan_info *si)
{
	return records_scan_range(dir, from, -1, fn, ctx, si);
}

off_t records_line_start(const char *dir, off_t at)
{
	size_t plen = strlen(dir) + sizeof("/results.jsonl");
	char *p = malloc(plen), buf[4096];
	off_t off = at > 0 ? at - 1 : 0;
	int fd;

	if (!p)
		return -ENOMEM;
	if (at <= 0) {
		free(p);
		return 0;
	}
	snprintf(p, plen, "%s/results.jsonl", dir);
	fd = records_open(p);
	free(p);
	if (fd < 0)
		return fd;
	for (;;) {
		ssize_t n = pread(fd, buf, sizeof(buf), off);
		char *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {	/* the end (no line starts at or after at), or an error */
			int e = n < 0 ? -errno : 0;

			if (!e) {
				struct stat st;

				e = fstat(fd, &st) ? -errno : 0;
				off = st.st_size;
			}
			close(fd);
			return e ? e : off;
		}
		if ((nl = memchr(buf, '\n', (size_t)n))) {
			close(fd);
			return off + (nl - buf) + 1;
		}
		off += n;
	}
}

int records_scan_range(const char *dir, off_t from, off_t to, records_fn fn, void *ctx,
		       struct records_scan_info *si)
{
	size_t plen = strlen(dir) + sizeof("/results.jsonl");
	char *p = malloc(plen);
	struct records_lines l;
	long lineno = 0, n;
	int rc = 0, fd, over, torn;

	memset(si, 0, sizeof(*si));
	if (!p)
		return -ENOMEM;
	snprintf(p, plen, "%s/results.jsonl", dir);
	fd = records_open(p);
	free(p);
	if (fd < 0)
		return fd;
	if (from && lseek(fd, from, SEEK_SET) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	records_lines_init(&l, fd);
	while (!rc && (to < 0 || from + si->good < to) &&
	       (n = records_line(&l, RECORDS_LINE_MAX, &over, &torn)) > 0) {
		json_t *rec;

		lineno++;
		if (torn) {	/* cut short: only the last line can be */
			si->torn = 1;
			if (!si->bad)
				si->first_bad = lineno;
			break;
		}
		rec = over ? NULL : json_loadb(l.line, (size_t)n, 0, NULL);
		if (!json_is_object(rec)) {
			if (!si->bad++)
				si->first_bad = lineno;
		} else {
			si->nobj++;
			rc = fn(rec, ctx);
		}
		json_decref(rec);
		si->good += n;
	}
	if (!rc && n < 0)	/* a read that failed: not the end of the file */
		rc = (int)n;
	records_lines_release(&l);
	close(fd);
	return rc;
}

int records_scan(const char *dir, records_fn fn, void *ctx, struct records_scan_info *si)
{
	return records_scan_from(dir, 0, fn, ctx, si);
}
