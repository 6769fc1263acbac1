/* SPDX-License-Identifier: BSD-2-Clause */
/* Summary and suspects of a run's records (see analyze.c for the rules). */
#ifndef FS_ANALYZE_H
#define FS_ANALYZE_H

#include <jansson.h>
#include <stdio.h>

#include "store.h"

#define ANALYZE_LOW_FRAC 0.5

/* [{id, kind: node|pair|lane|pfc-storm|pfc-before-ecn|wrong-data, phase,
 *   test, rail, plane, msg_size_bytes, sizes, node, peer, value,
 *   lane_median, reference, evidence, retest, confirmation}]; wrong-data (a
 * collective's check found wrong elements) is a failure, the rest suspects.
 * The re-tests (records with retest_for, or an older directory's
 * retest_of) are judged (retest.c): each suspect gains retest {status:
 * confirmed|not-confirmed|failed|not-retested, ...} and confirmation (a
 * line); one not confirmed goes to *not_confirmed (new) instead.
 * retest_info: run.json's retest object ({off: WHY} | {max: K, skipped:
 * {ID: WHY}}), for why a suspect was not re-tested; NULL when unknown (an
 * older directory, or the coordinator asking what to re-test). */
json_t *analyze_suspects_retest(const struct rstore *st, double low_frac, json_t *retest_info,
				json_t **not_confirmed);
/* The suspects ("suspect: [phase] evidence; confirmation"), then the pairs
 * not confirmed ("not confirmed: ..."; may be NULL). */
void analyze_print(FILE *f, json_t *suspects, json_t *not_confirmed);
/* One line per phase, test and lane: pairs, min, median, max; for the
 * collectives one per phase, test, lane and size: busbw, algbw, time, wrong. */
void analyze_summary(FILE *f, const struct rstore *st);
/* How many records of the collectives found wrong data; their wrong
 * elements in *elements. */
long analyze_wrong(const struct rstore *st, double *elements);

#endif
