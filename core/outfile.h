/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The one way fabscope creates a file or a directory.
 *
 * fabscope runs as root, and writes where its user says: a report's folder,
 * a plot beside a capture, a ring of capture files, a topology export, a
 * results directory.  Every file it makes (and every folder) is made here,
 * so that none is ever written through a link or into a place someone else
 * controls (ci/check-tree refuses an O_CREAT, an fopen for writing or a
 * mkdir anywhere else):
 *
 *   - The directory is checked first (outdir_open): a directory, not a
 *     symbolic link, owned by this user or by root, and writable by nobody
 *     else unless it is sticky (as /tmp: there nobody else can remove or
 *     rename what we make) or FABSCOPE_SHARED_DIRS=1 asks for it.  The
 *     checks are made on the opened directory, and it is used through its
 *     descriptor from then on, so that swapping it for a link afterwards
 *     changes nothing.
 *   - A file is created relative to that descriptor under a random
 *     temporary name (".NAME.RANDOM") with O_CREAT|O_EXCL|O_NOFOLLOW:
 *     nothing that is already there, a planted link least of all, is opened.
 *     A symbolic link (or a directory) at the name is refused, never
 *     followed nor replaced; a device or a FIFO there (/dev/null, a pipe)
 *     is written as it is, nothing made.
 *   - It is renamed into place: once written (outfile_commit: the file is
 *     whole or not there, and a failed write leaves the old one), or at once
 *     for a file that grows while it is read (outfile_publish: a capture,
 *     an --output file).  A rename replaces a link planted at the name; it
 *     never writes through it.
 *
 * Every failure is one line (what, where, why) and -FS_EXIT_ENV, but a path
 * that names no directory (not there and not to be made, a file, a link):
 * -FS_EXIT_USAGE.  A name inside a directory is one path component.
 */
#ifndef FS_OUTFILE_H
#define FS_OUTFILE_H

#include <stdio.h>
#include <sys/types.h>

/* outdir_open's flags */
#define OUTDIR_MAKE  1u		/* make it (mode 0777 less the umask, or 0750 with OUTDIR_PRIVATE) when missing */
#define OUTDIR_EMPTY 2u		/* an existing one must be empty */
#define OUTDIR_PRIVATE 4u	/* made 0750 */

struct outdir {
	int fd;			/* O_DIRECTORY, opened without following a link */
	char *path;		/* as given, for messages */
};

#define OUTDIR_INIT { -1, NULL }

/*
 * Open the directory at path for making files in, checked as above; what
 * names it in messages ("results directory", "-o").  0, or -FS_EXIT_* said.
 */
int outdir_open(struct outdir *d, const char *path, const char *what, unsigned flags);
/* The same for name inside d (one component, made there with OUTDIR_MAKE). */
int outdir_open_in(struct outdir *d, const struct outdir *parent, const char *name, const char *what,
		   unsigned flags);
/* The directory that holds the file at path ("." for a bare name). */
int outdir_of_file(struct outdir *d, const char *file, const char *what);
void outdir_close(struct outdir *d);
/* 1 when path names an existing directory (followed or not), for messages only */
int outdir_exists(const char *path);

struct outfile {
	struct outdir own;	/* the directory, when outfile_create opened it */
	const struct outdir *dir;
	int fd;
	FILE *f;		/* outfile_stream's */
	char *name;		/* its name in dir */
	char *path;		/* dir/name, for messages */
	char tmp[96];		/* its temporary name, until it is renamed into place */
	int published;
	int tmp_only;		/* outfile_temp_in's: never put in place */
};

/*
 * A new file named path (its directory checked, as outdir_of_file), under
 * its temporary name, mode less the umask: 0, or -FS_EXIT_* said.
 */
int outfile_create(struct outfile *of, const char *path, mode_t mode);
/* The same for name in d (borrowed: it must outlive of). */
int outfile_create_in(struct outfile *of, const struct outdir *d, const char *name, mode_t mode);
/*
 * A file that is only ever temporary (data another program reads by its
 * temporary name, of->tmp, and removed by outfile_abort): made as above,
 * name only naming the temporary one (what has the name is not looked at).
 */
int outfile_temp_in(struct outfile *of, const struct outdir *d, const char *name, mode_t mode);
/* A stdio stream on the file (made once; outfile_commit closes it); NULL with errno. */
FILE *outfile_stream(struct outfile *of);
/*
 * Rename it into place now and go on writing: replace 1, over whatever has
 * the name (a file, a planted link); replace 0, only when nothing has it
 * (EEXIST, said).  0, or -FS_EXIT_ENV said.
 */
int outfile_publish(struct outfile *of, int replace);
/*
 * Done: the stream flushed, the file synced (sync 1) and closed, every
 * error checked, and renamed into place over what had its name (unless
 * published).  0, or -FS_EXIT_ENV said (the temporary file removed; what
 * had the name is left as it was).  of is released either way.
 */
int outfile_commit(struct outfile *of, int sync);
/* Given up: closed, and removed unless it was published.  NULL-safe, idempotent. */
void outfile_abort(struct outfile *of);
/* Take the descriptor (the caller closes it), releasing the rest: after outfile_publish. */
int outfile_take_fd(struct outfile *of);

/*
 * For appending: name in d opened O_APPEND, never through a link, when it is
 * a regular file; else made (as outfile_create_in, then published without
 * replacing).  Its descriptor, or -FS_EXIT_* said.
 */
int outfile_append_in(const struct outdir *d, const char *name, mode_t mode);

#endif
