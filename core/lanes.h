/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Rails and planes: a lane is one (rail, plane) of a node's NICs.  Rail K is
 * NIC K of every server (leaf K in a rail-optimized fabric); plane P is the
 * independent fabric a port reaches in a multi-plane design (0 when there is
 * one).  Hostfiles, agents' --rail, rail maps (devices --rail-map) and plans
 * are all bounded by these, checked in one place.
 */
#ifndef FS_LANES_H
#define FS_LANES_H

#include <stddef.h>

#define FS_MAX_RAILS 64
#define FS_MAX_PLANES 8

/* 1 if rail and plane are within the limits above, else 0. */
static inline int fs_lane_ok(int rail, int plane)
{
	return rail >= 0 && rail < FS_MAX_RAILS && plane >= 0 && plane < FS_MAX_PLANES;
}

/*
 * A lane as every message, table and plot names it: "rail 1", or "rail 1
 * plane 1" (plane 0, the only one of a single-plane fabric, is not said).
 */
void fs_lane_name(int rail, int plane, char *buf, size_t len);

#endif
