/* SPDX-License-Identifier: BSD-2-Clause */
/* A whole text file into memory: plans, hostfiles, topology files. */
#ifndef FS_SLURP_H
#define FS_SLURP_H

#include <stddef.h>

/* The file at path, NUL-terminated, malloc'd; NULL with errno set: the
 * open's or read's (EISDIR for a directory), EFBIG over max bytes, EILSEQ
 * when it holds a NUL byte (not a text file), ENOMEM. */
char *fs_slurp(const char *path, size_t max);

#endif
