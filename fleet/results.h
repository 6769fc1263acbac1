/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The results directory of `fabscope run`:
 *
 *   run.json       what ran: plan and hostfile text, launcher, options, labels,
 *                  nodes and their agents, phases and their progress, suspects,
 *                  start/end times and status.  Replaced atomically (write a
 *                  temporary file, fsync, rename), so it is always whole.
 *   results.jsonl  one record per line (read with records/read.h), appended with one write(2) per record
 *                  as it arrives (O_APPEND), fsync'd at the end of each round.
 *                  A killed coordinator leaves every line it wrote whole; a
 *                  line cut by a crash of the machine is dropped by --resume.
 *
 *   jobs.done      the key of every job that finished (with its records, or
 *                  its error record), a line each, written only once those
 *                  records are on disk (results.jsonl fsync'd first, at least
 *                  every second and at the end of each round).
 *   results.partial.jsonl
 *                  written by --resume: the records of jobs that had not
 *                  finished (the first sizes of an interrupted sweep), moved
 *                  out of results.jsonl because those jobs run again whole.
 *
 * Every record of a run carries "job", a key naming the phase, test, round,
 * lane and pair it measured; --resume skips the jobs in jobs.done (a run
 * without the file, from an older fabscope: the jobs that have a record).
 *
 * Nothing is lost silently: a record that cannot be written (a full disk) is
 * cut back to the last whole line, no job is listed done after it, and the
 * run stops (results_failed) so that --resume, once there is space, runs
 * every job without a record.  A file .space-reserve holds twice the size
 * of run.json (at least 64 KiB) allocated while the run goes, and is given
 * up when the disk is full, so that run.json can still say so.  The directory is made 0750 (an existing one
 * must be empty, a directory, not a symbolic link, and the user's), its
 * files 0640 (the umask may make both stricter); every file is opened
 * relative to the directory with O_NOFOLLOW, new ones with O_EXCL, the
 * temporary file of run.json under a unique name.
 */
#ifndef FS_RESULTS_H
#define FS_RESULTS_H

#include <jansson.h>

#include "../core/outfile.h"

struct results {
	char *dir;
	struct outdir od;	/* the directory, opened once and checked (core/outfile.h) */
	int dfd;		/* od.fd */
	int fd;			/* results.jsonl */
	int jfd;		/* jobs.done */
	int rfd;		/* .space-reserve: room kept for the last run.json */
	int werr;		/* errno of the first write that failed: nothing more is written */
	long lost;		/* records not written since */
	json_t *pending;	/* keys of finished jobs, for jobs.done after the next sync */
	unsigned long long synced_ns;	/* when results_sync last ran */
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
/* The job of this key finished: it is done, and its line goes to jobs.done
 * at the next results_sync (not once a write failed: it runs again). */
int results_job_finished(struct results *r, const char *key);
/* fsync results.jsonl, then write and fsync the pending lines of jobs.done. */
int results_sync(struct results *r);
/* results_sync when a second has passed since the last one. */
void results_sync_due(struct results *r);
/* 0, or -FS_EXIT_ENV once a write failed (the run must stop). */
int results_failed(const struct results *r);
int results_job_done(const struct results *r, const char *key);
void results_close(struct results *r);

#endif
