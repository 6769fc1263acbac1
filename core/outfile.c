/* SPDX-License-Identifier: BSD-2-Clause */
/* The one way fabscope creates a file or a directory (outfile.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "error.h"
#include "outfile.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

static int shared_asked(void)
{
	const char *e = getenv("FABSCOPE_SHARED_DIRS");

	return e && !strcmp(e, "1");
}

/* the checks, on the opened directory */
static int dir_checks(int fd, const char *path, const char *what, unsigned flags)
{
	struct stat st;

	if (fstat(fd, &st))
		return fs_err_env("cannot open %s '%s': %s", what, path, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return fs_err_usage("%s '%s' is not a directory: give a directory", what, path);
	if (st.st_uid != geteuid() && st.st_uid != 0)
		return fs_err_env("%s '%s' belongs to another user (uid %u): give one of your own", what, path,
				  (unsigned)st.st_uid);
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX) && !shared_asked())
		return fs_err_env("%s '%s' can be written by other users (mode %04o): give a directory only you can "
				  "write to, make it sticky (chmod +t), or set FABSCOPE_SHARED_DIRS=1", what, path,
				  (unsigned)(st.st_mode & 07777));
	if (flags & OUTDIR_EMPTY) {
		int dup_fd = dup(fd);
		DIR *dir = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
		struct dirent *e;
		int empty = 1;

		if (!dir) {
			if (dup_fd >= 0)
				close(dup_fd);
			return fs_err_env("cannot read %s '%s': %s", what, path, strerror(errno));
		}
		while ((e = readdir(dir)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				empty = 0;
		closedir(dir);
		if (!empty)
			return -FS_EXIT_USAGE;	/* (the caller says what to do instead) */
	}
	return 0;
}

/* why dirfd/path could not be opened as a directory: one line */
static int open_failed(int dirfd, const char *name, const char *path, const char *what, int err, unsigned flags)
{
	struct stat st;

	if ((err == ELOOP || err == ENOTDIR) && !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) &&
	    S_ISLNK(st.st_mode))
		return fs_err_usage("%s '%s' is a symbolic link: give the directory itself", what, path);
	if (err == ENOTDIR)
		return fs_err_usage("%s '%s' is a file, not a directory: give a directory%s", what, path,
				    (flags & OUTDIR_MAKE) ? " (one that is missing is made)" : "");
	return fs_err_env("cannot open %s '%s': %s", what, path, strerror(err));
}

static int dir_at(struct outdir *d, int dirfd, const char *name, const char *path, const char *what,
		  unsigned flags)
{
	int rc;

	d->fd = -1;
	d->path = NULL;
	if ((flags & OUTDIR_MAKE) && mkdirat(dirfd, name, (flags & OUTDIR_PRIVATE) ? 0750 : 0777) &&
	    errno != EEXIST)
		return errno == ENOENT ? fs_err_usage("cannot create %s '%s': %s", what, path, strerror(errno)) :
		       fs_err_env("cannot create %s '%s': %s", what, path, strerror(errno));
	d->fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d->fd < 0)
		return open_failed(dirfd, name, path, what, errno, flags);
	if ((rc = dir_checks(d->fd, path, what, flags)) || !(d->path = strdup(path))) {
		close(d->fd);
		d->fd = -1;
		return rc ? rc : fs_err_env("out of memory");
	}
	return 0;
}

int outdir_open(struct outdir *d, const char *path, const char *what, unsigned flags)
{
	if (!*path) {
		d->fd = -1;
		d->path = NULL;
		return fs_err_usage("%s is an empty path: give a directory", what);
	}
	return dir_at(d, AT_FDCWD, path, path, what, flags);
}

/* one component: no '/', not . or .. */
static int name_ok(const char *name)
{
	return *name && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..");
}

static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);

	if (p)
		snprintf(p, n, "%s%s%s", strcmp(dir, ".") ? dir : "", strcmp(dir, ".") ? "/" : "", name);
	return p;
}

int outdir_open_in(struct outdir *d, const struct outdir *parent, const char *name, const char *what,
		   unsigned flags)
{
	char *path = join(parent->path, name);
	int rc;

	if (!path) {
		d->fd = -1;
		d->path = NULL;
		return fs_err_env("out of memory");
	}
	rc = name_ok(name) ? dir_at(d, parent->fd, name, path, what, flags) :
	     fs_err_usage("%s '%s' is not a name in '%s'", what, name, parent->path);
	free(path);
	return rc;
}

int outdir_of_file(struct outdir *d, const char *file, const char *what)
{
	const char *slash = strrchr(file, '/');
	char *dir;
	int rc;

	if (!slash)
		return outdir_open(d, ".", what, 0);
	dir = slash == file ? strdup("/") : strndup(file, (size_t)(slash - file));
	if (!dir) {
		d->fd = -1;
		d->path = NULL;
		return fs_err_env("out of memory");
	}
	rc = outdir_open(d, dir, what, 0);
	free(dir);
	return rc;
}

void outdir_close(struct outdir *d)
{
	if (d->fd >= 0)
		close(d->fd);
	free(d->path);
	d->fd = -1;
	d->path = NULL;
}

int outdir_exists(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* ---- files ---- */

static void random_hex(char *out, size_t n)
{
	unsigned char b[8];
	size_t i;

	if (getrandom(b, sizeof(b), GRND_NONBLOCK) != (ssize_t)sizeof(b)) {	/* (never at run time) */
		unsigned long long x = clock_ns() ^ ((unsigned long long)getpid() << 32);

		memcpy(b, &x, sizeof(b));
	}
	for (i = 0; i < sizeof(b) && 2 * i + 2 < n; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

static void of_release(struct outfile *of)
{
	free(of->name);
	free(of->path);
	of->name = of->path = NULL;
	of->tmp[0] = 0;
	outdir_close(&of->own);
	of->dir = NULL;
}

/*
 * What has the name already: nothing or a regular file (1: make the file
 * as above); a device or a FIFO (0: written as it is, opened without
 * O_CREAT, nothing made or renamed); else -FS_EXIT_ENV said (a link is not
 * followed, nor replaced: /dev/stdout is one).
 */
static int existing(struct outfile *of)
{
	struct stat st;
	int rc;

	if (fstatat(of->dir->fd, of->name, &st, AT_SYMLINK_NOFOLLOW))
		return 1;
	if (S_ISREG(st.st_mode))
		return 1;
	if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
		of->fd = openat(of->dir->fd, of->name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
		if (of->fd >= 0) {
			of->published = 1;
			return 0;
		}
		rc = fs_err_env("cannot write '%s': %s", of->path, strerror(errno));
	} else {
		rc = fs_err_env("cannot write '%s': it is %s, never followed nor replaced: give the file itself",
				of->path, S_ISLNK(st.st_mode) ? "a symlink" : S_ISDIR(st.st_mode) ? "a directory" :
				"not a regular file");
	}
	of_release(of);
	return rc;
}

/* name in d, under its temporary name (tmp_only: never put in place); of->own is left as it is */
static int create_in(struct outfile *of, const struct outdir *d, const char *name, mode_t mode, int tmp_only)
{
	int tries, err = 0;

	of->dir = d;
	of->fd = -1;
	of->f = NULL;
	of->published = 0;
	of->tmp_only = tmp_only;
	of->name = strdup(name);
	of->path = join(d->path, name);
	of->tmp[0] = 0;
	if (!of->name || !of->path) {
		of_release(of);
		return fs_err_env("out of memory");
	}
	if (!name_ok(name)) {
		int rc = fs_err_usage("'%s' names no file in '%s'", name, d->path);

		of_release(of);
		return rc;
	}
	if (!tmp_only && (err = existing(of)) <= 0)
		return err;
	for (tries = 0; tries < 16 && of->fd < 0; tries++) {
		char hex[20];

		random_hex(hex, sizeof(hex));
		snprintf(of->tmp, sizeof(of->tmp), ".%.60s.%s", name, hex);
		of->fd = openat(d->fd, of->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		err = errno;
		if (of->fd < 0 && err != EEXIST)
			break;
	}
	if (of->fd < 0) {
		int rc = fs_err_env("cannot write '%s': %s", of->path, strerror(err));

		of->tmp[0] = 0;
		of_release(of);
		return rc;
	}
	return 0;
}

int outfile_create_in(struct outfile *of, const struct outdir *d, const char *name, mode_t mode)
{
	of->own.fd = -1;
	of->own.path = NULL;
	return create_in(of, d, name, mode, 0);
}

int outfile_temp_in(struct outfile *of, const struct outdir *d, const char *name, mode_t mode)
{
	of->own.fd = -1;
	of->own.path = NULL;
	return create_in(of, d, name, mode, 1);
}

int outfile_create(struct outfile *of, const char *path, mode_t mode)
{
	const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
	int rc;

	of->fd = -1;
	of->f = NULL;
	of->name = of->path = NULL;
	of->tmp[0] = 0;
	of->dir = NULL;
	of->own.fd = -1;
	of->own.path = NULL;
	if (!name_ok(name))
		return fs_err_usage("'%s' names no file: give a file name", path);
	if ((rc = outdir_of_file(&of->own, path, "the directory of")))
		return rc;
	return create_in(of, &of->own, name, mode, 0);
}

FILE *outfile_stream(struct outfile *of)
{
	if (!of->f && of->fd >= 0)
		of->f = fdopen(of->fd, "w");
	return of->f;
}

/* renameat2, or link+unlink where the file system has no RENAME_NOREPLACE */
static int move_into_place(const struct outfile *of, int replace)
{
	if (replace)
		return renameat(of->dir->fd, of->tmp, of->dir->fd, of->name) ? -errno : 0;
	if (!renameat2(of->dir->fd, of->tmp, of->dir->fd, of->name, RENAME_NOREPLACE))
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	if (linkat(of->dir->fd, of->tmp, of->dir->fd, of->name, 0))
		return -errno;
	unlinkat(of->dir->fd, of->tmp, 0);
	return 0;
}

int outfile_publish(struct outfile *of, int replace)
{
	int rc;

	if (of->published)
		return 0;
	if (of->tmp_only)
		return fs_err_env("cannot write '%s': a temporary file is never put in place", of->path);
	if ((rc = move_into_place(of, replace)))
		return fs_err_env("cannot write '%s': %s", of->path, rc == -EEXIST ? "it is there already" :
				  strerror(-rc));
	of->published = 1;
	of->tmp[0] = 0;
	return 0;
}

int outfile_commit(struct outfile *of, int sync)
{
	int err = 0, rc = 0;

	if (of->f) {
		if (fflush(of->f) || ferror(of->f))
			err = errno ? errno : EIO;
	}
	if (!err && sync && fsync(of->fd) && errno != EINVAL)	/* (a device: nothing to sync) */
		err = errno;
	if (of->f) {
		if (fclose(of->f) && !err)
			err = errno ? errno : EIO;
	} else if (of->fd >= 0 && close(of->fd) && !err) {
		err = errno;
	}
	of->f = NULL;
	of->fd = -1;
	if (!err && of->tmp_only)
		err = EINVAL;
	if (!err && !of->published && (rc = move_into_place(of, 1)))
		err = -rc;
	if (err) {
		rc = fs_err_env("cannot write '%s': %s", of->path, strerror(err));
		if (!of->published && of->tmp[0])
			unlinkat(of->dir->fd, of->tmp, 0);
	}
	of_release(of);
	return rc;
}

void outfile_abort(struct outfile *of)
{
	if (!of || (!of->name && of->fd < 0))
		return;
	if (of->f)
		fclose(of->f);
	else if (of->fd >= 0)
		close(of->fd);
	of->f = NULL;
	of->fd = -1;
	if (!of->published && of->tmp[0] && of->dir)
		unlinkat(of->dir->fd, of->tmp, 0);
	of_release(of);
}

int outfile_take_fd(struct outfile *of)
{
	int fd = of->fd;

	of->fd = -1;
	of->f = NULL;
	of_release(of);
	return fd;
}

int outfile_append_in(const struct outdir *d, const char *name, mode_t mode)
{
	struct outfile of;
	int tries, rc;

	for (tries = 0; tries < 4; tries++) {
		int fd = openat(d->fd, name, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		struct stat st;

		if (fd >= 0) {
			if (!fstat(fd, &st) && S_ISREG(st.st_mode) && !fcntl(fd, F_SETFL, O_APPEND))
				return fd;
			close(fd);
			return fs_err_env("cannot append to '%s/%s': not a regular file", d->path, name);
		}
		if (errno == ELOOP)
			return fs_err_env("cannot append to '%s/%s': it is a symlink, never followed", d->path, name);
		if (errno != ENOENT)
			return fs_err_env("cannot append to '%s/%s': %s", d->path, name, strerror(errno));
		if ((rc = outfile_create_in(&of, d, name, mode)))
			return rc;
		if (!move_into_place(&of, 0))
			return outfile_take_fd(&of);
		outfile_abort(&of);	/* made meanwhile: open that one */
	}
	return fs_err_env("cannot append to '%s/%s': it keeps changing", d->path, name);
}
