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

#include <jansson.h>
#include <sys/types.h>

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
 * when the file cannot be opened (-ENOENT when there is none). */
int records_scan(const char *dir, records_fn fn, void *ctx, struct records_scan_info *si);
/* The same from the byte offset from on (a line's start: an earlier scan's
 * good); si's counts and line numbers are of what this scan read. */
int records_scan_from(const char *dir, off_t from, records_fn fn, void *ctx, struct records_scan_info *si);

#endif
