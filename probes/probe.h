/* SPDX-License-Identifier: BSD-2-Clause */
/* `fabscope probe`: the diagnostic probes, polarization and pfc. */
#ifndef FS_PROBE_H
#define FS_PROBE_H

#include <sys/types.h>
#include <jansson.h>

int probe_polarization(int argc, const char **argv);	/* probe-polar.c */
int probe_pfc(int argc, const char **argv);		/* probe-pfc.c */

/* `fabscope bw ARGV` run in a child process */
struct probe_child {
	pid_t pid;
	int fd;		/* its records (JSON lines), or -1 */
};

/* Fork it, its records on a pipe (pipe_records) or on our own sink; prog names it in messages. */
int probe_child_start(struct probe_child *ch, const char **argv, int argc, int pipe_records,
		      const char *prog);
/* Wait for it at most wait_s seconds, then end it; its records into recs (NULL: dropped).
 * Its exit status as a negative FS_EXIT code, or 0. */
int probe_child_finish(struct probe_child *ch, double wait_s, json_t *recs);

#endif
