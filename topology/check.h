/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What an intended topology says against itself (fabscope topo check-file):
 * findings, each an error or a warning with the line it is about.
 *
 *   errors    port-twice (a port in two cables), no-switch (a cable between
 *             two nodes, or to a device never declared a switch), no-rail (a
 *             node's port with no rail, its leaf declaring none either, in a
 *             design that gives rails), wrong-rail (a port of rail K on a leaf
 *             of another rail, or a leaf of a rail-optimized design serving
 *             two rails), rail-leaves (a node's rail and plane reaching two
 *             leaf groups: two leaves not joined by a peer link), cross-plane
 *             (a cable between planes)
 *   warnings  tier (a node on a spine, a cable that skips a tier), unused (a
 *             switch with no cable), function (a device whose function the
 *             reader did not know: kept as a node), lanes (a design without
 *             rails: one lane per leaf group, said once)
 *
 * Peer links (between two switches of one level) and loopbacks (a port to
 * another of the same switch) are cables like any: a port in two of them is
 * port-twice.  Out-of-band cables (an end on an oob switch) are checked as
 * cables, never for tiers, rails or planes.
 */
#ifndef FS_TOPOLOGY_CHECK_H
#define FS_TOPOLOGY_CHECK_H

#include <jansson.h>
#include <stdio.h>

#include "../core/error.h"
#include "intent.h"

struct topo_finding {
	int error;		/* 1 error, 0 warning */
	const char *kind;	/* "port-twice", ... (static) */
	int line;		/* of the intent file; 0: none */
	char *text;
};

struct topo_findings {
	struct topo_finding *f;
	size_t n, alloc;
	int errors;
};

/* Add a finding (text as printf): 0, or -1 out of memory (nothing added) */
int topo_finding_add(struct topo_findings *fs, int error, const char *kind, int line, const char *fmt, ...)
	FS_PRINTF(5, 6);
/* In line order, then by text */
void topo_findings_sort(struct topo_findings *fs);
/* The findings of t into out (in line order); 0, or -FS_EXIT_ENV said */
int topo_check(const struct topo *t, struct topo_findings *out);
void topo_findings_release(struct topo_findings *fs);
/* "PATH:LINE: error: TEXT" a line each */
void topo_findings_print(const struct topo_findings *fs, const char *path, FILE *f);
json_t *topo_findings_json(const struct topo_findings *fs);

#endif
