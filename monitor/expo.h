/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the monitor says: the Prometheus text exposition of /metrics
 * (format 0.0.4) and the JSON lines of --jsonl, both from the engine's
 * cells, so the two cannot disagree.
 *
 * Series (every one with the label node, this agent's name: a scrape of
 * many agents, or the agents' lines merged, stay apart without relabelling):
 *
 *   fabscope_probe_sent_total{node,peer,rail,plane,sport_bucket}     counter
 *   fabscope_probe_lost_total{node,peer,rail,plane,sport_bucket}     counter
 *   fabscope_probe_rtt_seconds{node,peer,rail,plane,sport_bucket}    histogram
 *       (_bucket{le} with monitor/hist.h's boundaries, _sum, _count)
 *   fabscope_probe_unreachable_total{node,peer,rail,plane}           counter
 *       (probes the peer's host refused: no agent there; they count lost too)
 *       (those four with --transport udp or both; with verbs or both, the UD
 *       probes' under names of their own, the same labels:)
 *   fabscope_probe_ud_sent_total, fabscope_probe_ud_lost_total,
 *   fabscope_probe_ud_rtt_seconds{node,peer,rail,plane,sport_bucket}
 *   fabscope_probe_ud_unresolved_total{node,peer,rail,plane}         counter
 *       (UD probes not sent: the peer's responder QP not known)
 *   fabscope_monitor_ud_lane_info{node,rail,plane,device,port,qpn,
 *                                 clock="device"|"software"} 1     a lane
 *   fabscope_monitor_ud_address_handles_total{node,rail,plane,
 *                                 event="created"|"replaced"}      counter
 *   fabscope_monitor_ud_echoed_total{node}, _ud_send_errors_total{node},
 *   fabscope_monitor_ud_refused_total{node,what="request"|"reply"},
 *   fabscope_monitor_ud_questions_total{node,result="asked"|"answered"}
 *   fabscope_monitor_info{node,version} 1
 *   fabscope_monitor_peers{node,kind="leaf"|"cross"}                 gauge
 *   fabscope_monitor_lanes{node}                                     gauge
 *   fabscope_monitor_echoed_total{node}                              counter
 *   fabscope_monitor_refused_total{node,what="request"|"reply"}      counter
 *   fabscope_monitor_send_errors_total{node}                         counter
 *   fabscope_monitor_reloads_total{node,result="ok"|"error"}         counter
 *   fabscope_monitor_rate_per_peer{node} (probes/s per peer and lane),
 *   fabscope_monitor_timeout_seconds{node}, fabscope_monitor_sport_buckets{node} gauges
 *   and the NIC counters of monitor/nic.h.
 *
 * plane is "0" on a single-plane fabric (a lane's plane, always given);
 * rail and plane are the hostfile's numbers, peer the peer's name there.
 * The cardinality is the engine's cells (peers x lanes x buckets, of each
 * transport probed), each a sent, a lost and MON_HIST_BUCKETS + 2
 * histogram series.  The UD series have names of their own, not a label:
 * the UDP series stay what they were (dashboards, alerts and `monitor
 * analyze`, which reads fabscope_probe_*, see the same series).
 *
 * Each JSON line has "transport": "udp" or "verbs".
 */
#ifndef FS_MON_EXPO_H
#define FS_MON_EXPO_H

#include <stddef.h>

#include "../core/error.h"
#include "probe.h"

struct mon_buf {
	char *p;
	size_t len, alloc;
	int failed;		/* out of memory: p holds what fitted */
};

void mon_buf_printf(struct mon_buf *b, const char *fmt, ...) FS_PRINTF(2, 3);
/* s as a label value: \, " and newline escaped */
void mon_buf_label(struct mon_buf *b, const char *s);
void mon_buf_release(struct mon_buf *b);

/* The probe and engine series of e into b; the caller holds e->lock. */
void mon_expo_probes(struct mon_buf *b, struct mon_engine *e);

/*
 * One JSON line per cell that sent in the interval (schema fabscope.monitor/1:
 * time, node, peer, transport, rail, plane, sport_bucket, interval_s, sent, lost,
 * rtt_count, rtt_sum_s, rtt_buckets: the interval's counts per bucket of
 * monitor/hist.h, +Inf last), the interval being the difference from prev
 * (as many cells as e's, or NULL: since the start); the caller holds e->lock.
 */
void mon_expo_jsonl(struct mon_buf *b, struct mon_engine *e, const struct mon_cell *prev, double interval_s);

#endif
