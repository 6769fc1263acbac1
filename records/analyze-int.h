/* SPDX-License-Identifier: BSD-2-Clause */
/* What analyze.c and retest.c share, and no other file. */
#ifndef FS_ANALYZE_INT_H
#define FS_ANALYZE_INT_H

#include <jansson.h>
#include <stddef.h>

#include "store.h"

int analyze_dbl_cmp(const void *a, const void *b);
/* The median of v[0..n) (0 for none; NAN when out of memory). */
double analyze_median(const double *v, int n);
/* Is v "low" (bw, allreduce, alltoall: under low_frac x ref; lat: over
 * ref / low_frac)? */
int analyze_is_low(const char *test, double v, double ref, double low_frac);
/* A suspect's id: what its re-tests' records name (retest_for). */
void analyze_suspect_id(char *buf, size_t len, const char *kind, const char *phase, const char *test,
			int rail, int plane, double size, const char *node, const char *peer);
/* retest.c: each suspect of sus (taken) gains retest {status: confirmed |
 * not-confirmed | failed | not-retested, ...} and confirmation (a line);
 * those not confirmed go to *not_confirmed (new); the rest is returned. */
json_t *analyze_judge_retests(const struct rstore *st, json_t *sus, double low_frac, json_t *info,
			      json_t **not_confirmed);

#endif
