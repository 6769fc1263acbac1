/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fabscope topo check and topo discover: observations of the hosts (topo
 * show --json, or this host observed now) against an intent file, and an
 * intent file made from observations.
 *
 *   topo check INTENT [OBS.json...]   the findings of topology/verify.h;
 *                                     no OBS: this host (--node) observed now
 *   topo discover OBS.json...         an intent file from what was seen: a
 *                                     leaf per neighbour system name, a rail
 *                                     per interface name
 */
#ifndef FS_DISCOVER_JUDGE_H
#define FS_DISCOVER_JUDGE_H

#include <stdio.h>

#include "../topology/intent.h"
#include "show.h"

/* Text or (json) the fabscope.topo-verify/1 document on stdout.  0, or
 * -FS_EXIT_CHECK (an error found), other -FS_EXIT_* said. */
int topo_cmd_check(const struct topo *t, const struct discover_opts *o, const char *const *obs, int nobs,
		   int json);

/* The intent file seen by the observations obs[0..nobs), to f.  0 or
 * -FS_EXIT_* said. */
int topo_cmd_discover(const char *const *obs, int nobs, FILE *f);

#endif
