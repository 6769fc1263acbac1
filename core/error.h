/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Errors and exit codes.
 *
 * Every fabscope error is one line on stderr: what failed, on what, and what
 * to do about it.
 *
 * Return codes, one rule for the whole tree:
 *   - A command (the cmd_* of core/builtin.h) returns its exit status, an
 *     FS_EXIT_* value, never a negative number.  Only main() exits.
 *   - A function that prints its own message (one of the fs_err*() helpers
 *     below) returns their value: 0, or a negative exit code -FS_EXIT_*.  A
 *     verdict is such a code too (-FS_EXIT_CHECK), never a positive 1, so
 *     that a command ends with `return -rc;`.
 *   - A function that leaves the message to its caller returns 0 or -errno
 *     and says so in its header comment (the transport ops, records_scan,
 *     fs_grow); its caller says what failed and returns -FS_EXIT_*.
 *   Nothing returns a positive error: a value > 0 is a count or a size.
 */
#ifndef FS_ERROR_H
#define FS_ERROR_H

#include <stdarg.h>
#include <stddef.h>

enum fs_exit {
	FS_EXIT_OK = 0,		/* success */
	FS_EXIT_CHECK = 1,	/* a check or threshold failed */
	FS_EXIT_USAGE = 2,	/* bad command line or input file */
	FS_EXIT_ENV = 3,	/* environment: device, permission, dependency, version */
	FS_EXIT_PEER = 4,	/* peer or agent failure: refused, timeout, went away */
	FS_EXIT_INCOMPLETE = 5,	/* report: no verdict, something measured was not judged (no criterion) */
	FS_EXIT_INTERRUPTED = 130,	/* SIGINT/SIGTERM; what was measured is kept */
};

#define FS_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* The name messages are prefixed with ("fabscope" or "fabscope bw"). */
void fs_set_progname(const char *name);
const char *fs_progname(void);

/* Print "PROG: MSG" and return -code. */
int fs_err(int code, const char *fmt, ...) FS_PRINTF(2, 3);
int fs_verr(int code, const char *fmt, va_list ap);
#define fs_err_usage(...) fs_err(FS_EXIT_USAGE, __VA_ARGS__)
#define fs_err_env(...)   fs_err(FS_EXIT_ENV, __VA_ARGS__)
#define fs_err_peer(...)  fs_err(FS_EXIT_PEER, __VA_ARGS__)

/* in[0..n) into out as text safe for a terminal: a control byte (NUL too;
 * but tab) written \xNN; cut to fit outlen; returns out's length */
size_t fs_escape_ctl(const char *in, size_t n, char *out, size_t outlen);

/* The message of the last fs_err*() ("" before any): what a record that
 * was cut short says happened */
const char *fs_last_error(void);

/* "cannot read WHAT 'PATH': REASON" for a file that could not be read
 * (err: its errno; EILSEQ: not a text file): -FS_EXIT_USAGE when the path
 * is wrong (not there, a directory), else -FS_EXIT_ENV (permission, I/O). */
int fs_err_read(const char *what, const char *path, int err);
/* "PROG: warning: MSG" */
void fs_warn(const char *fmt, ...) FS_PRINTF(1, 2);
/* "PROG: MSG" on stderr, only when the verbosity is at least level. */
void fs_log(int level, const char *fmt, ...) FS_PRINTF(2, 3);
void fs_set_verbosity(int level);
int fs_verbosity(void);

/* A plain message ("PROG: MSG") to stderr, for the server's per-client log. */
void fs_info(const char *fmt, ...) FS_PRINTF(1, 2);

/*
 * A progress line on stderr, only when stderr is a terminal: "PROG: MSG"
 * rewritten in place (no newline), for a run that is long.  Once
 * fs_progress_enable() has found a terminal, every message above starts by
 * erasing the line - in this process and in the processes it forks later,
 * which share the terminal - so that none is glued to a progress line.
 * fs_progress_clear() erases it before other output (a table on the same
 * terminal).  fs_progress_enable() returns whether progress is shown.
 */
int fs_progress_enable(void);
void fs_progress(const char *fmt, ...) FS_PRINTF(1, 2);
void fs_progress_clear(void);

#endif
