/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A fabric as the hosts see it, against its intended topology (fabscope topo
 * check): what each node saw on its ports (an observation: `fabscope topo
 * show --json`, schema fabscope.topo-show/1) judged against the cables the
 * intent file gives those ports.
 *
 *   errors    not-seen (the design's port was not observed on its node: no
 *             such interface, or one not configured up),
 *             no-link (the port is down or has no carrier: a cable out, or
 *             the far end down), no-neighbour (link up, no LLDP heard: the
 *             switch port sends none, or it was not listened to long
 *             enough), swap (two ports of the design each reach the other's
 *             switch port: one finding for the pair), wrong-rail and
 *             wrong-plane (the neighbour is a switch of another rail or
 *             plane), miscabled (any other neighbour: evidence is the
 *             neighbour and the design's port), slow-link (a link below the
 *             design's speed), drift (a setting in which a port differs from
 *             the majority of the ports of its rail and plane: MTU, driver,
 *             firmware, PCIe speed and width, ECN (roce_np, roce_rp), PFC
 *             priorities, trust mode)
 *   warnings  no-majority (a rail whose ports split evenly on a setting)
 *
 * Only nodes that were observed are judged: `topo check` on one host judges
 * that host's ports.  A value that could not be read is unknown and is never
 * a drift.  Time O(ports log ports), memory O(ports).
 */
#ifndef FS_TOPOLOGY_VERIFY_H
#define FS_TOPOLOGY_VERIFY_H

#include <jansson.h>

#include "check.h"
#include "intent.h"

/* the settings that drift is judged on, in this order (topo_obs.set) */
#define TOPO_SETTINGS { "mtu", "driver", "firmware", "pcie_speed", "pcie_width", "ecn_np", "ecn_rp", "pfc", "trust" }
#define TOPO_NSET 9

struct topo_obs {
	char *node, *iface;
	int up;			/* 1 up, 0 down, -1 unknown */
	int carrier;		/* 1, 0, -1 unknown */
	long speed_mbps;	/* 0: unknown */
	int listened;		/* 1: LLDP was asked for on it */
	char *nsys, *nport;	/* the LLDP neighbour: system name, port ID; NULL: none heard */
	char *set[TOPO_NSET];	/* NULL: unknown */
};

struct topo_obsset {
	struct topo_obs *o;
	size_t n, alloc;
};

/* The ports of one observation document (topo show --json) added to s;
 * what names the source in messages.  0, -FS_EXIT_USAGE (said: not such a
 * document, with what is wrong), -FS_EXIT_ENV out of memory (said). */
int topo_obs_add_json(struct topo_obsset *s, json_t *doc, const char *what);
/* One port (an element of such a document's ports) of node: the same
 * returns */
int topo_obs_add_port(struct topo_obsset *s, const char *node, json_t *port, const char *what);
void topo_obs_release(struct topo_obsset *s);

/* Sort s by node, then interface (topo_verify does); then on a sorted s:
 * the port node:iface, or NULL; 1 when s has a port of node */
void topo_obs_sort(struct topo_obsset *s);
const struct topo_obs *topo_obs_find(const struct topo_obsset *s, const char *node, const char *iface);
int topo_obs_has_node(const struct topo_obsset *s, const char *node);

/* The findings of s against t (s is sorted in place).  0, or -FS_EXIT_ENV said */
int topo_verify(const struct topo *t, struct topo_obsset *s, struct topo_findings *out);

/* The rail of a node's cable (its own rail=, else its leaf's), -1 none */
int topo_link_rail(const struct topo *t, const struct topo_link *l);
int topo_link_plane(const struct topo *t, const struct topo_link *l);

#endif
