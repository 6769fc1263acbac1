/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Growing arrays, one way for the whole tree (as git's ALLOC_GROW):
 *
 *	struct thing *v = NULL;
 *	size_t n = 0, alloc = 0;
 *
 *	if (FS_ALLOC_GROW(v, n + 1, alloc))
 *		return fs_err_env("out of memory reading %s", path);
 *	v[n++] = thing;
 *
 * FS_ALLOC_GROW(p, nr, alloc) makes room for at least nr elements of *p:
 * when alloc is short it grows geometrically (by half, at least to nr, 16
 * at first), checks the multiplication for overflow and the realloc for
 * failure, and evaluates to 0, or to -ENOMEM with p and alloc unchanged
 * (still valid, still owned by the caller).  alloc is a size_t lvalue.
 */
#ifndef FS_ALLOC_H
#define FS_ALLOC_H

#include <stddef.h>

/* The function behind the macro: *p of elements of size bytes, *alloc of
 * them allocated, room wanted for nr. */
int fs_grow(void **p, size_t *alloc, size_t nr, size_t size);

#define FS_ALLOC_GROW(p, nr, alloc) \
	((size_t)(nr) <= (alloc) ? 0 : fs_grow((void **)&(p), &(alloc), (nr), sizeof(*(p))))

/* realloc of n elements of size bytes, checked for overflow; NULL (p still
 * valid) when it fails */
void *fs_reallocarray(void *p, size_t n, size_t size);

#endif
