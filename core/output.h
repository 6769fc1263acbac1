/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Rendering of result records, as text tables or as JSON.
 *
 * A command hands every record to out_record() and calls out_finish() once
 * at the end (also on error paths, so that what was measured is kept).
 * JSON mode writes one valid JSON array on standard output, one record per
 * line, flushed record by record; text mode prints a table whose cells are
 * read from the very same record objects (by path), so the two cannot
 * disagree.  The --output file is a file of records as every file of
 * records is (a run's results.jsonl, fabscope-records(7)): JSON lines, one
 * record a line, each written whole and flushed.
 */
#ifndef FS_OUTPUT_H
#define FS_OUTPUT_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "outfile.h"

enum out_format { OUT_TEXT, OUT_JSON };

struct out {
	enum out_format fmt;
	FILE *f;
	int gbits;		/* text: bandwidth in Gb/s instead of MB/s */
	int nrec;
	const char *last_test;	/* text: header printed for this test */
	FILE *jf;		/* --output: a JSON copy of every record */
	struct outfile jof;	/* jf's file, until it is put in place */
	int jmade;		/* jof is in use */
	int jn;
	int jkeep;		/* jf was a file already: left as it was without a record */
	const char *jpath;	/* its path, for messages */
	int jerr;		/* the first error writing jf (errno; -1: said), or 0 */
};

/*
 * When >= 0, every record also goes to this file descriptor as one JSON
 * line (written whole with one write()).  `fabscope agent` sets it in the
 * child process that runs a job, to carry the records to its coordinator;
 * probe pfc and polarization in the child that runs their bw.  Set it with
 * out_set_sink_fd() (-1: none).
 */
void out_set_sink_fd(int fd);
/* Is a sink set (a job of `fabscope agent`, whose standard output goes nowhere)? */
int out_sink_set(void);
/* The first error (errno) flushing standard output here, or 0: main says it. */
extern int out_stdout_errno;
/* One JSON line {KEY: value} to the sink, when one is set (steals value). */
void out_sink_event(const char *key, json_t *value);

/*
 * Progress of a job, for its coordinator (`fabscope run` judges a job that
 * runs long by whether it still moves: fleet/coord.c).  An engine calls
 * out_progress_due() from its loops, with a time it has read anyway; when
 * it says 1 (a sink is set, and OUT_PROGRESS_MS have passed since the last
 * report), out_progress() sends one line to the sink:
 *   {"progress": {"bytes": BYTES, "what": TEXT}}
 * bytes: what this process has moved so far (sent and received), what:
 * where it is ("size 4 MiB (3 of 9), iteration 2 of 20"); frac, when not
 * negative: the share of its work done, 0 to 1.  Without a sink (a command
 * run by hand) nothing is sent, and out_progress_due() costs a compare.
 */
#define OUT_PROGRESS_MS 1000
int out_progress_due(uint64_t now_ns);
void out_progress(double bytes, double frac, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

void out_init(struct out *o, enum out_format fmt, FILE *f);
/*
 * Also write every record to path, a JSON line each (closed by
 * out_finish): 0, or -FS_EXIT_* said when it cannot be made.  The file is
 * made by core/outfile.h (its directory checked; never written through a
 * link) and put in place by the first record: a run that fails before it
 * has measured anything leaves the results of the last run as they were
 * (and a new file empty).  A device or a FIFO is written as it is;
 * /dev/stdout and /dev/stderr are this process's.
 */
int out_json_file(struct out *o, const char *path);
void out_record(struct out *o, json_t *rec);
/* A comment line in text mode ("# ..."); nothing in JSON mode. */
void out_comment(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Close the JSON array and the --output file: 0, or -FS_EXIT_ENV with one
 * line said when the --output file could not be written (standard output:
 * main checks it). */
int out_finish(struct out *o);

#endif
