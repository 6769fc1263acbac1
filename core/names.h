/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Names of devices, nodes, ports and switches compared one way everywhere:
 * natural order (runs of digits compare as numbers, so "h2" < "h10" and
 * "l1.9" < "l1.10"), and identity exact: two names compare equal only when
 * they are the same bytes.  "h01" and "h1" have the same natural key; the
 * one that sorts first bytewise comes first ("h01" < "h1"), so they are
 * two names next to each other, never one.
 *
 * Every place that sorts names or searches a sorted list of them uses this
 * order (a search with any other compare misses what the sort put
 * elsewhere), and every place that groups them tests identity with it.
 */
#ifndef FS_NAMES_H
#define FS_NAMES_H

/* <0, 0, >0 as strcmp: 0 exactly when strcmp(a, b) is 0 */
int fs_name_cmp(const char *a, const char *b);

/* The same over two elements of an array of `const char *`, for qsort and
 * bsearch */
int fs_name_pcmp(const void *a, const void *b);

#endif
