/* SPDX-License-Identifier: BSD-2-Clause */
/* Summary and suspects of a run's records (see analyze.c for the rules). */
#ifndef FS_ANALYZE_H
#define FS_ANALYZE_H

#include <jansson.h>
#include <stdio.h>

#define ANALYZE_LOW_FRAC 0.5

/* [{kind: node|pair|lane, phase, test, rail, plane, node, peer, value,
 *   lane_median, evidence}] */
json_t *analyze_suspects(json_t *records, double low_frac);
void analyze_print(FILE *f, json_t *suspects);
/* One line per phase, test and lane: pairs, min, median, max. */
void analyze_summary(FILE *f, json_t *records);

#endif
