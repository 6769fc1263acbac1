/* SPDX-License-Identifier: BSD-2-Clause */
/* The intended topology as Slurm's topology.conf (slurm.c says how). */
#ifndef FS_TOPOLOGY_SLURM_H
#define FS_TOPOLOGY_SLURM_H

#include <stdio.h>

#include "intent.h"

/* topology.conf of the cables of one rail and plane to f: 0, or
 * -FS_EXIT_USAGE said when no node is cabled there, -FS_EXIT_ENV */
int topo_slurm_write(const struct topo *t, int rail, int plane, FILE *f);

#endif
