/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Fabrics of a named shape: see shape.h.
 */
#include <stdio.h>
#include <string.h>

#include "../core/error.h"
#include "shape.h"

#define SHAPE_MAX_SWITCHES 200000

static int plane_fabric(struct topo *t, const struct shape_opts *o, int plane, int rail_only)
{
	char a[64], b[64], pod[32], ap[64], bp[64];
	const char *sfx = plane ? ".1" : "";	/* plane 1's leaves and host ports */
	int g, r, k, x, i, p, rc = 0;
	int gpp = o->groups / o->pods;	/* groups a pod */
	int nspines = rail_only ? o->rails * o->spines : o->pods * o->spines;
	double up = o->uplink_gbps > 0 ? o->uplink_gbps : o->gbps;

	for (g = 1; g <= o->groups && !rc; g++) {
		p = (g - 1) / gpp + 1;
		snprintf(pod, sizeof(pod), "p%d", p);
		for (r = 0; r < o->rails && !rc; r++) {
			snprintf(a, sizeof(a), "l%d.%d%s", g, r, sfx);
			rc = topo_add_switch(t, a, TOPO_LEAF, o->pods > 1 ? pod : NULL, plane, r, 0);
		}
	}
	int k0 = plane * nspines, x0 = plane * (o->pods > 1 ? o->supers : 0);	/* plane 1 numbers after */

	for (k = 1; k <= nspines && !rc; k++) {
		snprintf(a, sizeof(a), "s%d", k0 + k);
		snprintf(pod, sizeof(pod), "p%d", (k - 1) / o->spines + 1);
		rc = topo_add_switch(t, a, TOPO_SPINE, o->pods > 1 ? pod : NULL, plane,
				     rail_only ? (k - 1) / o->spines : -1, 0);
	}
	for (x = 1; x <= (o->pods > 1 ? o->supers : 0) && !rc; x++) {
		snprintf(a, sizeof(a), "x%d", x0 + x);
		rc = topo_add_switch(t, a, TOPO_SUPERSPINE, NULL, plane, -1, 0);
	}
	/* a rail at a time: hosts to leaves, leaves to spines (a rail's cables next to each other, as the
	 * model's solve of a rail's flows visits them) */
	for (r = 0; r < o->rails && !rc; r++) {
		for (i = 1; i <= o->groups * o->hosts && !rc; i++) {
			g = (i - 1) / o->hosts + 1;
			snprintf(a, sizeof(a), "h%d", i);
			snprintf(ap, sizeof(ap), "rail%d%s", r, sfx);
			snprintf(b, sizeof(b), "l%d.%d%s", g, r, sfx);
			rc = topo_add_link(t, a, ap, b, a, r, plane, o->gbps, 0);
		}
		for (g = 1; g <= o->groups && !rc; g++) {
			int first;

			p = (g - 1) / gpp + 1;
			first = rail_only ? r * o->spines + 1 : (p - 1) * o->spines + 1;
			snprintf(a, sizeof(a), "l%d.%d%s", g, r, sfx);
			for (k = first; k < first + o->spines && !rc; k++) {
				snprintf(b, sizeof(b), "s%d", k0 + k);
				rc = topo_add_link(t, a, b, b, a, -1, -1, up, 0);
			}
		}
	}
	/* spines to superspines */
	for (k = 1; k <= nspines && o->pods > 1 && !rc; k++) {
		snprintf(a, sizeof(a), "s%d", k0 + k);
		for (x = 1; x <= o->supers && !rc; x++) {
			snprintf(b, sizeof(b), "x%d", x0 + x);
			snprintf(ap, sizeof(ap), "x%d", x0 + x);
			snprintf(bp, sizeof(bp), "s%d", k0 + k);
			rc = topo_add_link(t, a, ap, b, bp, -1, -1, up, 0);
		}
	}
	return rc;
}

int shape_make(struct topo *t, const struct shape_opts *o)
{
	int rail_only = !strcmp(o->shape, "rail-only"), dual = !strcmp(o->shape, "dual-plane"), rc;
	long nsw;

	if (!rail_only && !dual && strcmp(o->shape, "leaf-spine"))
		return fs_err_usage("--shape %s: give leaf-spine, rail-only or dual-plane", o->shape);
	if (o->groups < 1 || o->hosts < 1 || o->rails < 1 || o->spines < 1 || o->pods < 1)
		return fs_err_usage("--shape: groups, hosts, rails, spines and pods are 1 or more");
	if (o->groups % o->pods)
		return fs_err_usage("--shape: %d groups do not split into %d pods", o->groups, o->pods);
	if (o->pods > 1 && o->supers < 1)
		return fs_err_usage("--shape: %d pods need superspines (--superspines N)", o->pods);
	if (o->pods > 1 && rail_only)
		return fs_err_usage("--shape rail-only: pods are not modelled (a rail-only fabric has one tier "
				    "of spines per rail)");
	if (o->gbps <= 0)
		return fs_err_usage("--shape needs the cables' speed: --speed GBPS");
	nsw = (long)(dual ? 2 : 1) * ((long)o->groups * o->rails + (long)(rail_only ? o->rails : o->pods) * o->spines +
				       (o->pods > 1 ? o->supers : 0));
	if (nsw > SHAPE_MAX_SWITCHES || (long)o->groups * o->hosts > 1000000)
		return fs_err_usage("--shape: %ld switches, %ld hosts: too large to model here", nsw,
				    (long)o->groups * o->hosts);
	rc = plane_fabric(t, o, 0, rail_only);
	if (!rc && dual)
		rc = plane_fabric(t, o, 1, 0);
	return rc ? rc : topo_finish(t);
}
