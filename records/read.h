/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Reading a results directory's records (results.jsonl, one JSON object a
 * line; see fleet/results.h for how `fabscope run` writes it).  Every
 * consumer of records uses this: the coordinator's end-of-run analysis, its
 * --resume, `fabscope report`.
 *
 * records_scan streams: one record at a time goes to the callback and is
 * released after it, so that reading holds one line, not the file.  A last
 * line cut short (a crash of the machine) ends the scan and is counted as
 * torn; a whole line that is not a JSON object is counted as bad and
 * skipped.
 */
#ifndef FS_RECORDS_READ_H
#define FS_RECORDS_READ_H

#include <errno.h>
#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * The files of a results directory are untrusted input: a reader opens
 * only a regular file (a FIFO would hang it, /dev/zero feed it forever:
 * both are refused, RECORDS_ENOTREG), bounds every line at
 * RECORDS_LINE_MAX (a longer one is read past, never held, and counted
 * as not a record) and checks every read (an error is the scan's -errno,
 * never a short file taken for a whole one).
 */
#define RECORDS_LINE_MAX (16u << 20)	/* a record is at most a wire message (4 MiB), JSON-escaped */
#define RECORDS_ENOTREG (-ENOTSUP)	/* what records_scan returns for a file that is not a regular one */

/* "not a regular file (...)" for RECORDS_ENOTREG, "over ... bytes" for -EFBIG, "not JSON" for
 * -EPROTO, else strerror(-rc) */
const char *records_strerror(int rc);

/* path opened for reading when it is a regular file: its descriptor, or -errno
 * (RECORDS_ENOTREG: there, but a FIFO, a device, a directory, a socket) */
int records_open(const char *path);

/*
 * run.json and such: the JSON document of name in dirfd (AT_FDCWD: name is a
 * path; nofollow: not through a link), a regular file of at most max bytes.
 * The value, or NULL and *err: -errno, RECORDS_ENOTREG, -EFBIG (over max),
 * -EPROTO (not JSON: jerr, when not NULL, says why).
 */
#define RECORDS_RUN_MAX (256u << 20)
json_t *records_load_json(int dirfd, const char *name, size_t max, int nofollow, int *err, json_error_t *jerr);

/* Lines of a file, bounded (records_line). */
struct records_lines {
	int fd;
	char *buf;		/* read ahead */
	size_t pos, len;
	char *line;		/* the last line, NUL-terminated (not when it was over the bound) */
	size_t line_cap;
};

void records_lines_init(struct records_lines *l, int fd);
/* the buffers freed; fd is the caller's */
void records_lines_release(struct records_lines *l);
/*
 * The next line: its length in the file (its newline counted; 0 at the
 * end), or -errno.  l->line holds it (NUL-terminated, the newline kept)
 * when *over is 0; a line of more than max bytes is read to its end and
 * *over set, nothing of it kept.  *torn: the file ended before a newline.
 */
long records_line(struct records_lines *l, size_t max, int *over, int *torn);

/* What records_scan saw. */
struct records_scan_info {
	off_t good;		/* the offset after the last whole line */
	long torn;		/* 1: the last line is cut short */
	long bad, first_bad;	/* whole lines that are not JSON objects; the first one's number
				 * (or the torn line's, when no line is bad) */
	long nobj;		/* records */
};

/* Called with each record in file order; a non-zero return stops the scan
 * and is records_scan's return value.  The record is borrowed: take a
 * reference (json_incref) to keep it. */
typedef int (*records_fn)(json_t *rec, void *ctx);

/* Read DIR/results.jsonl.  0, the callback's non-zero return, or -errno
 * when the file cannot be opened (-ENOENT when there is none) or read
 * (RECORDS_ENOTREG: not a regular file).  A line over RECORDS_LINE_MAX is
 * counted as bad. */
int records_scan(const char *dir, records_fn fn, void *ctx, struct records_scan_info *si);
/* The same from the byte offset from on (a line's start: an earlier scan's
 * good); si's counts and line numbers are of what this scan read. */
int records_scan_from(const char *dir, off_t from, records_fn fn, void *ctx, struct records_scan_info *si);
/* The same for the lines that start before the offset to (-1: the end of the file), so
 * that threads can read one file's parts (history add); from is a line's start. */
int records_scan_range(const char *dir, off_t from, off_t to, records_fn fn, void *ctx,
		       struct records_scan_info *si);
/* The offset of the first line of DIR/results.jsonl that starts at or after at (the file's
 * size when none does), or -errno: where a part of the file for records_scan_range begins. */
off_t records_line_start(const char *dir, off_t at);

#endif
