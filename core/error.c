/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"

static const char *progname = "fabscope";
static int verbosity;
static int progress_tty;	/* stderr is a terminal that progress lines go to */
static int progress_shown;	/* one is on it now (this process's) */

void fs_set_progname(const char *name)
{
	progname = name;
}

const char *fs_progname(void)
{
	return progname;
}

void fs_set_verbosity(int level)
{
	verbosity = level;
}

int fs_verbosity(void)
{
	return verbosity;
}

size_t fs_escape_ctl(const char *in, size_t n, char *out, size_t outlen)
{
	const unsigned char *p = (const unsigned char *)in;
	size_t i, o = 0;

	for (i = 0; i < n && o + 5 < outlen; i++) {
		if ((p[i] < 0x20 && p[i] != '\t') || p[i] == 0x7f) {
			snprintf(out + o, outlen - o, "\\x%02x", p[i]);
			o += 4;
		} else {
			out[o++] = (char)p[i];
		}
	}
	if (outlen)
		out[o] = 0;
	return o;
}

/* Messages carry text from files and peers (names, paths, what a peer sent):
 * a control byte is written as \xNN, so that none reaches a terminal or a
 * log raw (an ESC sequence, a forged second line). */
static void put_line(const char *prefix, const char *msg)
{
	char out[4 * 1024 + 1];

	fs_escape_ctl(msg, strlen(msg), out, sizeof(out));
	/* (a forked rank does not know whether its parent's line is up) */
	fprintf(stderr, "%s%s: %s%s\n", progress_tty ? "\r\033[K" : "", progname, prefix, out);
	progress_shown = 0;
}

static char last_error[1024];

const char *fs_last_error(void)
{
	return last_error;
}

int fs_verr(int code, const char *fmt, va_list ap)
{
	char buf[1024];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	snprintf(last_error, sizeof(last_error), "%s", buf);
	put_line("", buf);
	fflush(stderr);
	return -code;
}

int fs_err(int code, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = fs_verr(code, fmt, ap);
	va_end(ap);
	return rc;
}

int fs_err_read(const char *what, const char *path, int err)
{
	/* the path is wrong: not there, not a file (a usage error); there but
	 * not ours to read (permission, I/O): the environment */
	int usage = err == ENOENT || err == ENOTDIR || err == EISDIR || err == ENAMETOOLONG ||
		    err == ELOOP || err == EILSEQ;

	return fs_err(usage ? FS_EXIT_USAGE : FS_EXIT_ENV, "cannot read %s%s'%s': %s", what ? what : "",
		      what ? " " : "", path, err == EILSEQ ? "it is not a text file" :
		      err == EISDIR ? "it is a directory" : strerror(err ? err : EIO));
}

void fs_warn(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	put_line("warning: ", buf);
}

void fs_info(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	put_line("", buf);
	fflush(stderr);
}

void fs_log(int level, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	if (verbosity < level)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	put_line("", buf);
}

int fs_progress_enable(void)
{
	progress_tty = isatty(2);
	return progress_tty;
}

void fs_progress(const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	if (!progress_tty)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "\r\033[K%s: %s", progname, buf);
	fflush(stderr);
	progress_shown = 1;
}

void fs_progress_clear(void)
{
	if (!progress_shown)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	progress_shown = 0;
}
