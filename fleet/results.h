/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The results directory of `fabscope run`:
 *
 *   run.json       what ran: plan and hostfile text, launcher, options, labels,
 *                  nodes and their agents, phases and their progress, suspects,
 *                  start/end times and status.  Replaced atomically (write a
 *                  temporary file, fsync, rename), so it is always whole.
 *   results.jsonl  one record per line, appended with one write(2) per record
 *                  as it arrives (O_APPEND), fsync'd at the end of each round.
 *                  A killed coordinator leaves every line it wrote whole; a
 *                  line cut by a crash of the machine is dropped by --resume.
 *
 *   jobs.done      the key of every job that finished (with its records, or
 *                  its error record), a line each, appended when it finishes.
 *   results.partial.jsonl
 *                  written by --resume: the records of jobs that had not
 *                  finished (the first sizes of an interrupted sweep), moved
 *                  out of results.jsonl because those jobs run again whole.
 *
 * Every record of a run carries "job", a key naming the phase, test, round,
 * lane and pair it measured; --resume skips the jobs in jobs.done (a run
 * without the file, from an older fabscope: the jobs that have a record).
 */
#ifndef FS_RESULTS_H
#define FS_RESULTS_H

#include <jansson.h>

struct results {
	char *dir;
	int fd;			/* results.jsonl */
	int jfd;		/* jobs.done */
	json_t *run;		/* run.json's content */
	json_t *done;		/* {job key: true} of the jobs finished */
	long nrec;		/* records in results.jsonl */
};

/* Create dir (it must not exist, or be empty) and results.jsonl. */
int results_create(struct results *r, const char *dir);
/* Open an existing run for --resume: load run.json, index the jobs done,
 * set aside the records of the jobs that did not finish, drop a torn last
 * line. */
int results_resume(struct results *r, const char *dir);
/* Write run.json now (atomically). */
int results_save(struct results *r);
/* Append one record (a line). */
int results_append(struct results *r, json_t *rec);
/* The job of this key finished: its line in jobs.done; it is done. */
int results_job_finished(struct results *r, const char *key);
int results_sync(struct results *r);
int results_job_done(const struct results *r, const char *key);
void results_close(struct results *r);
/* Every record of results.jsonl, in order (for the analysis); *skipped: how
 * many lines are not records, *first_skipped (may be NULL): the first's number. */
json_t *results_load_all(const char *dir, long *skipped, long *first_skipped);

#endif
