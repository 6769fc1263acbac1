/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Suspects named by the cables of the intended topology (report --topology
 * FILE, fabscope-topology(5)): each suspect of a run gains "design", a line
 * saying which ports and links of the design its evidence points at.
 *
 *   node   its NIC port on the rail (and plane): "h4:rail1 -> l2.1:h4"
 *   pair   both ends' ports and, when they sit on different leaves, the
 *          uplinks their flows can take: "h1:rail0 -> l1.0:h1, h3:rail0 ->
 *          l2.0:h3; across l1.0 -> s1|s2 -> l2.0"
 *   lane   the rail's leaves: "rail 1: leaves l1.1, l2.1"
 *
 * A node or rail the design does not have is said so ("h9 rail 1: not in
 * FILE"), never guessed.  report_design_speeds says the design's port and
 * link speeds for "What was tested".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/record.h"
#include "../topology/intent.h"
#include "render.h"
#include "report.h"

/* the cable of node's port on rail (and plane, when >= 0), or NULL */
static const struct topo_link *port_of(const struct topo *t, const char *node, int rail, int plane)
{
	size_t i;

	for (i = 0; i < t->nln; i++) {
		const struct topo_link *l = &t->ln[i];
		int r, p;

		if (l->a.sw >= 0 || l->b.sw < 0 || strcmp(l->a.dev, node) || topo_link_oob(t, l))
			continue;
		r = l->rail >= 0 ? l->rail : t->sw[l->b.sw].rail;
		p = l->plane >= 0 ? l->plane : t->sw[l->b.sw].plane;
		if ((r < 0 ? 0 : r) == rail && (plane < 0 || p < 0 || p == plane))	/* (no rail: a design without) */
			return l;
	}
	return NULL;
}

static void put_port(struct report_buf *b, const struct topo_link *l)
{
	report_bput(b, "%s:%s -> %s:%s", l->a.dev, l->a.port, l->b.dev, l->b.port);
}

/* the switches one tier up from leaf s (its uplinks' other ends), "|"-separated */
static void uplinks(struct report_buf *b, const struct topo *t, int s)
{
	size_t i;
	int n = 0;

	for (i = 0; i < t->nln; i++) {
		const struct topo_link *l = &t->ln[i];
		int o = l->a.sw == s ? l->b.sw : l->b.sw == s ? l->a.sw : -1;

		if (l->a.sw >= 0 && o >= 0 && topo_tier_level(t->sw[o].tier) > topo_tier_level(t->sw[s].tier))
			report_bput(b, "%s%s", n++ ? "|" : "", t->sw[o].name);
	}
	if (!n)
		report_bput(b, "(no uplink in the design)");
}

static void design_pair(struct report_buf *b, const struct topo *t, const char *src, const char *dst, int rail,
			int plane)
{
	const struct topo_link *a = port_of(t, src, rail, plane), *z = port_of(t, dst, rail, plane);

	if (!a || !z) {
		report_bput(b, "%s rail %d: not in %s", a ? dst : src, rail, t->path);
		return;
	}
	put_port(b, a);
	report_bput(b, ", ");
	put_port(b, z);
	if (a->b.sw == z->b.sw) {
		report_bput(b, "; both on leaf %s", a->b.dev);
		return;
	}
	report_bput(b, "; across %s -> ", a->b.dev);
	uplinks(b, t, a->b.sw);
	report_bput(b, " -> %s", z->b.dev);
}

static void design_lane(struct report_buf *b, const struct topo *t, int rail)
{
	char *on = calloc(t->nsw + 1, 1);
	size_t s, i;
	int n = 0;

	report_bput(b, "rail %d: leaves", rail);
	for (i = 0; on && i < t->nln; i++) {	/* the leaves with a node's port of the rail: one pass */
		const struct topo_link *l = &t->ln[i];
		int r = l->b.sw < 0 ? -1 : l->rail >= 0 ? l->rail : t->sw[l->b.sw].rail;

		if (l->a.sw < 0 && l->b.sw >= 0 && !topo_link_oob(t, l) && (r < 0 ? 0 : r) == rail)
			on[l->b.sw] = 1;
	}
	for (s = 0; on && s < t->nsw; s++)
		if (on[s] && topo_tier_level(t->sw[s].tier) == 1)
			report_bput(b, "%s %s", n++ ? "," : "", t->sw[s].name);
	if (!n)
		report_bput(b, " none in %s", t->path);
	free(on);
}

static int design_one(const struct topo *t, json_t *s)
{
	const char *kind = record_str(s, "kind", ""), *node = record_str(s, "node", NULL),
		   *peer = record_str(s, "peer", NULL);
	int rail = record_int(s, "rail", -1, 0, FS_MAX_RAILS - 1), plane = record_int(s, "plane", -1, 0, FS_MAX_PLANES - 1);
	struct report_buf b = { 0 };
	const struct topo_link *l;

	if (rail < 0)
		return 0;
	if (!strcmp(kind, "node") && node) {
		if ((l = port_of(t, node, rail, plane)))
			put_port(&b, l);
		else
			report_bput(&b, "%s rail %d: not in %s", node, rail, t->path);
	} else if (!strcmp(kind, "pair") && node && peer) {
		design_pair(&b, t, node, peer, rail, plane);
	} else if (!strcmp(kind, "lane")) {
		design_lane(&b, t, rail);
	} else {
		return 0;
	}
	if (b.oom || json_object_set_new(s, "design", json_string(b.s))) {
		free(b.s);
		return -1;
	}
	free(b.s);
	return 0;
}

int report_design(struct report *rep, const struct topo *t)
{
	int ri, rc = 0;

	for (ri = 0; ri < rep->nruns && !rc; ri++) {
		json_t *s;
		size_t k;

		json_array_foreach(rep->runs[ri].suspects, k, s)
			if (design_one(t, s)) {
				rc = fs_err_env("out of memory naming the suspects by %s", t->path);
				break;
			}
	}
	return rc;
}

/* the lowest and highest speed of a set of cables, in a and b ("200 Gb/s", "100..400 Gb/s") */
static void speed_range(struct report_buf *b, double lo, double hi)
{
	if (lo == hi)
		report_bput(b, "%.4g Gb/s", lo);
	else
		report_bput(b, "%.4g..%.4g Gb/s", lo, hi);
}

void report_design_speeds(struct report *rep, const struct topo *t)
{
	struct lane {
		int rail, plane;
		double lo, hi;
	} lanes[64];
	struct report_buf b = { 0 };
	double slo = INFINITY, shi = 0;
	size_t i;
	int n = 0, k, one = 1;

	for (i = 0; i < t->nln; i++) {
		const struct topo_link *l = &t->ln[i];
		int r, p;

		if (!(l->speed_gbps > 0))
			continue;
		if (l->a.sw >= 0) {	/* between switches */
			slo = l->speed_gbps < slo ? l->speed_gbps : slo;
			shi = l->speed_gbps > shi ? l->speed_gbps : shi;
			continue;
		}
		if (l->b.sw < 0)
			continue;
		r = l->rail >= 0 ? l->rail : t->sw[l->b.sw].rail;
		p = l->plane >= 0 ? l->plane : t->sw[l->b.sw].plane;
		p = p < 0 ? 0 : p;
		for (k = 0; k < n && (lanes[k].rail != r || lanes[k].plane != p); k++)
			;
		if (k == n && n < 64)
			lanes[n++] = (struct lane){ r, p, l->speed_gbps, l->speed_gbps };
		if (k < n) {
			lanes[k].lo = l->speed_gbps < lanes[k].lo ? l->speed_gbps : lanes[k].lo;
			lanes[k].hi = l->speed_gbps > lanes[k].hi ? l->speed_gbps : lanes[k].hi;
		}
	}
	for (k = 1; k < n; k++)
		one &= lanes[k].lo == lanes[0].lo && lanes[k].hi == lanes[0].hi;
	if (!n) {
		report_bput(&b, "no host cable with speed= in %s", t->path);
	} else if (one) {
		speed_range(&b, lanes[0].lo, lanes[0].hi);
		report_bput(&b, " every host port");
	} else {
		for (k = 0; k < n; k++) {
			char lane[48];

			fs_lane_name(lanes[k].rail, lanes[k].plane, lane, sizeof(lane));
			report_bput(&b, "%s%s ", k ? ", " : "", lane);
			speed_range(&b, lanes[k].lo, lanes[k].hi);
		}
	}
	if (shi > 0) {
		report_bput(&b, "; switch links ");
		speed_range(&b, slo, shi);
	}
	report_bput(&b, " (the design, %s)", t->path);
	snprintf(rep->speeds, sizeof(rep->speeds), "%s", b.s && !b.oom ? b.s : "");
	free(b.s);
}
