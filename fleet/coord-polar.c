/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The polarization phase's verdicts in the coordinator: each record of a
 * probe judged again with the plan's design before it is written (the
 * agents' probes have no design: its paths and rates, and its switches'
 * addresses naming the traced hops, are the coordinator's), and a probe
 * that exits 1 only for its verdict (polarized, or none) is no failed job:
 * its records carry the verdict, and the run's summary and exit status
 * say it (run.c, records/polar.c).
 */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/record.h"
#include "coord-int.h"

void coord_polar_record(struct coord *c, struct cjob *j, json_t *rec)
{
	const char *scope = record_str(rec, "scope", "");
	const char *v;

	if (j->ph->kind != PLAN_POLARIZATION || strcmp(record_str(rec, "test", ""), "polarization"))
		return;
	if (c->design && !strcmp(scope, "set")) {
		struct polar_judgment *pj = realloc(j->pj, ((size_t)j->npj + 1) * sizeof(*pj));

		if (pj) {
			j->pj = pj;
			if (!polar_judge_record(rec, c->design, &j->pj[j->npj]))
				j->npj++;
		}
	} else if (c->design && !strcmp(scope, "sweep") && j->npj) {
		polar_judge_sweep(rec, j->pj, j->npj);
	}
	if (!(v = record_str(rec, "verdict", NULL)))
		return;
	j->verdicts++;
	j->failing = !strcmp(v, "polarized") || !strcmp(v, "inconclusive");
	snprintf(j->verdict, sizeof(j->verdict), "%s", record_str(rec, "verdict_text", v));
	if (strlen(j->verdict) == sizeof(j->verdict) - 1)
		memcpy(j->verdict + sizeof(j->verdict) - 5, "...", 4);
}

int coord_polar_verdict_exit(struct coord *c, struct cjob *j)
{
	(void)c;
	if (j->ph->kind != PLAN_POLARIZATION || j->cli_exit != FS_EXIT_CHECK || !j->verdicts)
		return 0;
	if (j->failing)	/* (the design may have judged it "not polarized" since) */
		fs_warn("%s: %s", j->key, j->verdict);
	return 1;
}
