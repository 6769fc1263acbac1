/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the parts of the plan code share, and no other file: plan-keys.c
 * (the keys a plan may set), plan.c (the plan file), plan-hosts.c (the
 * hostfile and the nodes) and plan-sched.c (lanes, rounds, pairs).
 */
#ifndef FS_PLAN_INT_H
#define FS_PLAN_INT_H

#include "plan.h"

/* plan-keys.c: the kinds' names, by enum plan_kind */
extern const char *const plan_kind_names[];
/* Engine keys only the probes take (polarization's; pfc's), and those of
 * kind = pfc; NULL-terminated, as are the others. */
extern const char *const plan_probe_only[];
extern const char *const plan_pfc_keys[];
extern const char *const plan_pfc_only[];
/* Engine keys the collectives take, and those only they take. */
extern const char *const plan_coll_keys[];
extern const char *const plan_coll_only[];
extern const char *const plan_topo_keys[];
/* plan_coll_keys, as a message lists them */
#define COLL_KEYS_TEXT "algo, minbytes, maxbytes, stepfactor, warmup, iters, chunk, flows, tx-depth, " \
	"tclass, no-check, transport, timeout, ib-port, gid-index, mtu, qp-timeout, poll, corrupt"
/* The key a mistyped plan key most likely meant ("did you mean"), by the
 * command line's rule (opts_near): among own (NULL-terminated: the
 * section's keys) and the engine keys; NULL when none is near. */
const char *plan_key_suggest(const char *key, const char *const *own);
/* The same for the value of kind = */
const char *plan_kind_suggest(const char *kind);
/* Is s one of the NULL-terminated list? */
int plan_in_list(const char *const *list, const char *s);

/* plan.c: s without its leading and trailing white space (s is cut short). */
char *plan_trim(char *s);
/* A whole text file, NUL-terminated (malloc'ed), or NULL with errno set
 * (EILSEQ: it holds a NUL byte). */
/* plans and hostfiles are read whole, at most this large (fs_slurp) */
#define PLAN_FILE_MAX (256u << 20)

#endif
