/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A polarization record judged (polar.h's rules) from what it holds and,
 * where there is one, the intended topology.
 *
 * The record holds the measurements: flows, every flow's entropy value and
 * rate (entropy[].value, .gbps) and, when traced, its path (entropy[].path:
 * the address that answered each TTL, "*" for none, the destination's
 * last; .path_complete: the destination answered), and what was given
 * (params.paths, link_rate_gbps, host_rate_gbps), src and dst.  Judging
 * writes the rest: every flow's sharing, the rates' figures (metrics), the
 * collision groups, the traced paths (trace, and links when the design
 * names the hops), the verdict, what it stands on (evidence), why there is
 * none (verdict_reason, likely_cause) and its line (verdict_text).  The
 * same record and design give the same verdict: the probe judges its own
 * record so, and `fabscope run` again with its plan's design.
 *
 * The design (topology/intent.h) gives what params lack: the number of
 * equal-cost paths, the rate of one at their narrowest tier and the hosts'
 * link (topology/ecmp.h, between the nodes src.node and dst.node on the
 * lane src.rail, src.plane: 0, 0 when not said); and, with its switches'
 * addresses (addr=), the name of every traced hop: then every link
 * between two hops must be one of its cables (the first from src.node, the
 * last to dst.node, when they are its nodes) and every path one of its
 * equal-cost paths, and the paths used are counted exactly.
 */
#ifndef FS_PROBES_POLAR_JUDGE_H
#define FS_PROBES_POLAR_JUDGE_H

#include <jansson.h>

#include "../topology/intent.h"
#include "polar.h"

struct polar_judgment {
	struct polar_result r;
	struct polar_traces t;
	char trace_line[600];	/* "traced: ..." for a person; empty when not traced */
};

/* Judge rec (a polarization record of scope "set") in place, with design
 * (may be NULL); the figures into *j.  0, or -1 when rec has no flows to
 * judge (left as it was). */
int polar_judge_record(json_t *rec, const struct topo *design, struct polar_judgment *j);

/* Judge rec (of scope "sweep") from its n sets, judged already. */
void polar_judge_sweep(json_t *rec, const struct polar_judgment *sets, int n);

#endif
