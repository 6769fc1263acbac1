/* SPDX-License-Identifier: BSD-2-Clause */
/* Growing arrays (see alloc.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "alloc.h"

void *fs_reallocarray(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, n && size ? n * size : 1);
}

int fs_grow(void **p, size_t *alloc, size_t nr, size_t size)
{
	size_t want = *alloc < 16 ? 16 : *alloc + *alloc / 2;
	void *np;

	if (nr <= *alloc)
		return 0;
	if (want < nr || want < *alloc)	/* (or it wrapped) */
		want = nr;
	if (!(np = fs_reallocarray(*p, want, size)))
		return -ENOMEM;
	*p = np;
	*alloc = want;
	return 0;
}
