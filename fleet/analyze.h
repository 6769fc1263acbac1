/* SPDX-License-Identifier: BSD-2-Clause */
/* Summary and suspects of a run's records (see analyze.c for the rules). */
#ifndef FS_ANALYZE_H
#define FS_ANALYZE_H

#include <jansson.h>
#include <stdio.h>

#define ANALYZE_LOW_FRAC 0.5

/* [{kind: node|pair|lane|pfc-storm|pfc-before-ecn|wrong-data, phase, test,
 *   rail, plane, node, peer, value, lane_median, evidence}]; wrong-data (a
 *   collective's check found wrong elements) is a failure, the rest suspects */
json_t *analyze_suspects(json_t *records, double low_frac);
void analyze_print(FILE *f, json_t *suspects);
/* One line per phase, test and lane: pairs, min, median, max; for the
 * collectives one per phase, test, lane and size: busbw, algbw, time, wrong. */
void analyze_summary(FILE *f, json_t *records);
/* How many records of the collectives found wrong data; their wrong
 * elements in *elements. */
long analyze_wrong(json_t *records, double *elements);

#endif
