/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The NIC counters of the monitor's lanes, read at each scrape through the
 * PFC probe's counters (probes/counters.h: ethtool statistics,
 * hw_counters, InfiniBand port counters), named as the Prometheus
 * ecosystem names such things: _total counters, base units (pause time in
 * seconds), and the labels node_exporter and rdma_exporter use, device (the
 * RDMA device, else the netdev) and port (the RDMA port, 1 for a netdev
 * without one), with the lane's rail and plane and, per priority, priority:
 *
 *   fabscope_nic_pfc_received_frames_total{priority}   PFC frames received
 *   fabscope_nic_pfc_sent_frames_total{priority}       PFC frames sent
 *   fabscope_nic_pfc_received_pause_seconds_total{priority}   paused by the peer
 *   fabscope_nic_pfc_sent_pause_seconds_total{priority}       pausing the peer
 *   fabscope_nic_receive_buffer_discards_total{priority}
 *   fabscope_nic_ecn_marked_packets_total   fabscope_nic_cnp_sent_total
 *   fabscope_nic_cnp_handled_total          fabscope_nic_out_of_sequence_packets_total
 *   fabscope_nic_packet_sequence_errors_total
 *   fabscope_nic_pfc_storm_warning_events_total  fabscope_nic_pfc_storm_error_events_total
 *   fabscope_nic_receive_discards_total     (port-wide)
 *   fabscope_nic_port_transmit_wait_total   (InfiniBand port_xmit_wait, ticks)
 *   fabscope_nic_port_transmit_discards_total
 *   fabscope_nic_counters_sources{device,port,rail,plane}   gauge: sources opened
 *
 * A metric appears only where a source of the NIC gives it (a veth gives
 * none of them; its sources gauge says it was opened).  A lane whose
 * netdev has no counters is left out, with one warning at start; a lane
 * on the loopback device (a test's 127.0.0.0/8 addresses) has no NIC and
 * is left out quietly, unless a fixture root is given.
 */
#ifndef FS_MON_NIC_H
#define FS_MON_NIC_H

#include <net/if.h>

#include "expo.h"
#include "peers.h"

struct counters;

struct mon_nic {
	int rail, plane;
	char netdev[IF_NAMESIZE];
	char device[64];
	int port;
	struct counters *c;
};

struct mon_nics {
	struct mon_nic n[MON_MAX_LANES];
	int count;
	char node[256];
};

/* Open the counters of every lane's netdev (the one holding its address);
 * root: NULL for this host, else a fixture tree (probes/counters.h). */
void mon_nics_open(struct mon_nics *ns, const struct mon_peers *mp, const char *root);
void mon_nics_release(struct mon_nics *ns);
/* Read them all and write their series into b. */
void mon_nics_expo(struct mon_nics *ns, struct mon_buf *b);

#endif
