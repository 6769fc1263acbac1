/* SPDX-License-Identifier: BSD-2-Clause */
/* A whole text file into memory (slurp.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slurp.h"

char *fs_slurp(const char *path, size_t max)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int e = 0;

	if (!f)
		return NULL;
	for (;;) {	/* a loop, not the file's size: a pipe or /proc has none */
		size_t n;

		if (cap - len < 65536) {	/* (len <= max here: what is over max ends the loop below) */
			char *nb = realloc(buf, cap = cap ? cap * 2 : 65536 + 1);

			if (!nb) {
				e = ENOMEM;
				break;
			}
			buf = nb;
		}
		errno = 0;
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
		if (len > max) {
			e = EFBIG;
			break;
		}
		if (n == 0) {
			if (ferror(f))	/* (EISDIR for a directory) */
				e = errno ? errno : EIO;
			break;
		}
	}
	fclose(f);
	if (!e && memchr(buf, 0, len))
		e = EILSEQ;
	if (e) {
		free(buf);
		errno = e;
		return NULL;
	}
	buf[len] = 0;
	return buf;
}
