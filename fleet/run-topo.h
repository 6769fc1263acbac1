/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A run's cabling against its plan's intended topology ([global] topology =
 * FILE, fabscope-topology(5)): the records of its topology phases (a port
 * each, what `topo show` saw on the node) judged as `fabscope topo check`
 * judges them; every finding said as "cabling: FILE:LINE: error: TEXT",
 * then a line of counts, and kept in run.json's "cabling".
 */
#ifndef FS_FLEET_RUN_TOPO_H
#define FS_FLEET_RUN_TOPO_H

#include <jansson.h>

#include "../topology/intent.h"

/* Judge the topology records of dir/results.jsonl against t; their
 * findings into run (run.json's object) and on f.  *errors: the findings at
 * error level (-1: no port was observed, nothing judged).  0, or -FS_EXIT_*
 * said. */
int run_topo_judge(const char *dir, const struct topo *t, json_t *run, FILE *f, int *errors);

#endif
