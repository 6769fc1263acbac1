/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdio.h>
#include <stdlib.h>

#include "error.h"

static const char *progname = "fabscope";
static int verbosity;

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

int fs_verr(int code, const char *fmt, va_list ap)
{
	char buf[1024];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	fprintf(stderr, "%s: %s\n", progname, buf);
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

void fs_warn(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: warning: %s\n", progname, buf);
}

void fs_info(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s\n", progname, buf);
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
	fprintf(stderr, "%s: %s\n", progname, buf);
}
