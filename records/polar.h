/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The polarization probe's verdicts in a run's records, one rule for the
 * run's summary (fleet/run.c), run.json and the report, so that none of
 * them can say another thing: a probe (a job) that ran several entropy
 * sets has its verdict in its sweep's record, else in its set's; a record
 * without a job (not of a run) is a probe of its own.
 */
#ifndef FS_RECORDS_POLAR_H
#define FS_RECORDS_POLAR_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

struct rpolar_counts {
	int probes, polarized, not_polarized, inconclusive, unknown;
};

/* What the verdict of a polarization record needs of it (a new object):
 * phase, job, scope, src, dst, params, verdict, evidence, verdict_reason,
 * likely_cause, verdict_text, metrics.paths_used, trace.paths. */
json_t *rpolar_brief(json_t *rec);
/* Of the polarization records recs (brief or whole), those that carry the
 * probes' verdicts, in their order (a new array of references). */
json_t *rpolar_deciding(json_t *recs);
void rpolar_count(json_t *deciding, struct rpolar_counts *n);
/* "h1 -> h3 rail 0" (or the addresses) of a record */
void rpolar_who(json_t *rec, char *buf, size_t len);
/* A line a probe, "polarization: [PHASE] SRC -> DST LANE: TEXT", then
 * "polarization: N probes: ..." (nothing when there is none). */
void rpolar_print(FILE *f, json_t *deciding);
/* run.json's "polarization": {probes, polarized, not_polarized,
 * inconclusive, unknown (no number of paths: only the count), verdicts:
 * [{phase, job, src, dst, rail, plane, verdict, evidence, verdict_reason,
 * text}]}; NULL when there is none. */
json_t *rpolar_json(json_t *deciding);

#endif
