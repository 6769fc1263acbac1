/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The files of `fabscope capture` (capture.c), and the user it captures as.
 *
 * Run as root, capture gives root up once the device is open (as tcpdump's
 * -Z): it forks first, and the child opens the device, then switches to an
 * unprivileged user (nobody, or -Z USER) with no capability and no way to
 * gain one (PR_SET_NO_NEW_PRIVS) before it reads a packet or writes a file.  The parent keeps root for
 * one thing only: making the capture's files, in the directory checked
 * before the capture began (core/outfile.h: never through a link, under a
 * temporary name renamed into place), and removing the oldest of a ring.
 * The child asks for file N over a socket pair and gets its descriptor
 * back; it cannot name any other file.  The parent passes SIGINT, SIGTERM
 * and SIGHUP on to the child and ends with its exit status.
 *
 * With -Z root, or run by another user, nothing is forked: the files are
 * made in the one process, the same way.
 */
#ifndef FS_CAPTURE_FILES_H
#define FS_CAPTURE_FILES_H

#include <stddef.h>
#include <sys/types.h>

#include "../core/outfile.h"

struct capfiles {
	int sock;		/* to the process that makes the files (-1: this one makes them) */
	struct outdir dir;	/* where they go (in the process that makes them) */
	const char *file;	/* -w FILE as given */
	const char *base;	/* its name in dir */
	int ring;		/* -C: FILE.0, FILE.1, ... */
};

/* Check FILE's directory: 0, or -FS_EXIT_* said. */
int capfiles_open(struct capfiles *cf, const char *file, int ring);
/* The name of file n (FILE, or FILE.N in a ring) as given, for messages. */
void capfiles_name(const struct capfiles *cf, int n, char *buf, size_t len);
/* A new file n, in place (an old one of that name replaced): 0 and its descriptor in *fd, or
 * -FS_EXIT_ENV (said by the process that made it). */
int capfiles_new(struct capfiles *cf, int n, int *fd);
/* Remove file n of the ring (errors but "not there" said as warnings). */
void capfiles_remove(struct capfiles *cf, int n);
void capfiles_close(struct capfiles *cf);

/*
 * The user to capture as: -Z USER (user NULL: nobody when run as root, else
 * no switch).  *uid and *gid; *drop 0 when nothing changes (root stays root
 * with -Z root; another user cannot switch).  0, or -FS_EXIT_* said (no
 * such user; a user other than oneself asked for without root).
 */
int capfiles_user(const char *user, uid_t *uid, gid_t *gid, int *drop);
/*
 * Fork, before the device is opened: the parent never holds it.  The child
 * returns 0 (it opens the device, then gives root up with capfiles_drop;
 * its files are asked of the parent); the parent serves it until it ends
 * and returns 1 with the child's exit status in *status.  -FS_EXIT_ENV said
 * when the fork or the socket pair fails.
 */
int capfiles_split(struct capfiles *cf, int *status);
/* The child: uid and gid, no supplementary group, no capability, none to be
 * gained (PR_SET_NO_NEW_PRIVS), and root checked gone: 0, or -FS_EXIT_ENV said. */
int capfiles_drop(uid_t uid, gid_t gid);

#endif
