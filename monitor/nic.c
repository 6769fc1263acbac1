/* SPDX-License-Identifier: BSD-2-Clause */
#include <dirent.h>
#include <ifaddrs.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/slurp.h"
#include "../probes/counters.h"
#include "nic.h"

struct nic_name {
	const char *name, *help;
	double scale;	/* to base units */
};

static const struct nic_name prio_names[CTR_PRIO_METRICS] = {
	[CTR_RX_PAUSE] = { "fabscope_nic_pfc_received_frames_total", "PFC pause frames received (the peer paused us)", 1 },
	[CTR_TX_PAUSE] = { "fabscope_nic_pfc_sent_frames_total", "PFC pause frames sent (we paused the peer)", 1 },
	[CTR_RX_PAUSE_US] = { "fabscope_nic_pfc_received_pause_seconds_total", "time paused by the peer", 1e-6 },
	[CTR_TX_PAUSE_US] = { "fabscope_nic_pfc_sent_pause_seconds_total", "time we paused the peer", 1e-6 },
	[CTR_RX_DISCARDS] = { "fabscope_nic_receive_buffer_discards_total", "packets dropped for lack of receive buffer", 1 },
};

static const struct nic_name port_names[CTR_PORT_METRICS] = {
	[CTR_ECN_MARKED] = { "fabscope_nic_ecn_marked_packets_total", "RoCE packets received with ECN CE", 1 },
	[CTR_CNP_SENT] = { "fabscope_nic_cnp_sent_total", "congestion notification packets sent", 1 },
	[CTR_CNP_HANDLED] = { "fabscope_nic_cnp_handled_total", "congestion notification packets handled (rate cut)", 1 },
	[CTR_OUT_OF_SEQUENCE] = { "fabscope_nic_out_of_sequence_packets_total", "out-of-sequence packets received", 1 },
	[CTR_PACKET_SEQ_ERR] = { "fabscope_nic_packet_sequence_errors_total", "NAK sequence errors received", 1 },
	[CTR_STORM_WARN] = { "fabscope_nic_pfc_storm_warning_events_total", "PFC storm warnings", 1 },
	[CTR_STORM_ERROR] = { "fabscope_nic_pfc_storm_error_events_total", "PFC storm errors (pausing stopped)", 1 },
	[CTR_RX_DISCARDS_PHY] = { "fabscope_nic_receive_discards_total", "port-wide receive buffer drops", 1 },
	[CTR_XMIT_WAIT] = { "fabscope_nic_port_transmit_wait_total", "InfiniBand port_xmit_wait ticks", 1 },
	[CTR_XMIT_DISCARDS] = { "fabscope_nic_port_transmit_discards_total", "InfiniBand port_xmit_discards", 1 },
};

/* The netdev holding ip, else the loopback one whose prefix holds it (127.0.0.0/8: every
 * address of it is local to lo): 0, or -1 */
static int netdev_of(struct in_addr ip, char *name, size_t len, int *loopback)
{
	struct ifaddrs *ifa, *i;
	int rc = -1;

	if (getifaddrs(&ifa))
		return -1;
	for (int pass = 0; pass < 2 && rc; pass++)
		for (i = ifa; i && rc; i = i->ifa_next) {
			const struct sockaddr_in *a = (const struct sockaddr_in *)i->ifa_addr;
			const struct sockaddr_in *m = (const struct sockaddr_in *)i->ifa_netmask;

			if (!a || a->sin_family != AF_INET || strlen(i->ifa_name) >= len)
				continue;
			if (pass == 0 ? a->sin_addr.s_addr != ip.s_addr
				      : !(i->ifa_flags & IFF_LOOPBACK) || !m ||
					((a->sin_addr.s_addr ^ ip.s_addr) & m->sin_addr.s_addr))
				continue;
			snprintf(name, len, "%s", i->ifa_name);
			*loopback = !!(i->ifa_flags & IFF_LOOPBACK);
			rc = 0;
		}
	freeifaddrs(ifa);
	return rc;
}

/* The RDMA device and port of a netdev (ROOT/sys/class/net/IF/device/infiniband/, dev_port) */
static void rdma_of(struct mon_nic *n, const char *root)
{
	char path[PATH_MAX], *s;
	struct dirent *d;
	DIR *dir;

	snprintf(n->device, sizeof(n->device), "%s", n->netdev);
	n->port = 1;
	snprintf(path, sizeof(path), "%s/sys/class/net/%s/device/infiniband", root ? root : "", n->netdev);
	if ((dir = opendir(path))) {
		while ((d = readdir(dir)))
			if (d->d_name[0] != '.' && strlen(d->d_name) < sizeof(n->device)) {
				snprintf(n->device, sizeof(n->device), "%s", d->d_name);
				break;
			}
		closedir(dir);
	}
	snprintf(path, sizeof(path), "%s/sys/class/net/%s/dev_port", root ? root : "", n->netdev);
	if ((s = fs_slurp(path, 1 << 20))) {
		long v = strtol(s, NULL, 10);

		if (v >= 0 && v < 256)
			n->port = (int)v + 1;
		free(s);
	}
}

void mon_nics_open(struct mon_nics *ns, const struct mon_peers *mp, const char *root)
{
	memset(ns, 0, sizeof(*ns));
	snprintf(ns->node, sizeof(ns->node), "%s", mp->self);
	for (int l = 0; l < mp->nlanes; l++) {
		struct mon_nic *n = &ns->n[ns->count];
		struct ctr_opts co = { .root = root };
		int loopback = 0;

		n->rail = mp->lane[l].rail;
		n->plane = mp->lane[l].plane;
		if (netdev_of(mp->lane[l].ip, n->netdev, sizeof(n->netdev), &loopback)) {
			fs_log(1, "rail %d: no netdev holds its address: its NIC counters are left out", n->rail);
			continue;
		}
		if (loopback && !root)
			continue;	/* a loopback lane (a test's) has no NIC, nor counters */
		co.ifname = n->netdev;
		if (counters_open(&n->c, &co)) {
			fs_warn("rail %d (%s): no NIC counters: they are left out", n->rail, n->netdev);
			continue;
		}
		rdma_of(n, root);
		ns->count++;
	}
}

void mon_nics_release(struct mon_nics *ns)
{
	for (int i = 0; i < ns->count; i++)
		counters_free(ns->n[i].c);
	ns->count = 0;
}

static void labels(struct mon_buf *b, const struct mon_nics *ns, const struct mon_nic *n)
{
	mon_buf_printf(b, "{node=\"");
	mon_buf_label(b, ns->node);
	mon_buf_printf(b, "\",device=\"");
	mon_buf_label(b, n->device);
	mon_buf_printf(b, "\",port=\"%d\",rail=\"%d\",plane=\"%d\"", n->port, n->rail, n->plane);
}

/* One metric of every NIC that has it (every priority of a per-priority one), under one HELP/TYPE */
static void one_metric(struct mon_nics *ns, struct mon_buf *b, const struct ctr_snapshot *s, int m, int per_prio)
{
	const struct nic_name *nm = per_prio ? &prio_names[m] : &port_names[m];
	int said = 0;

	for (int p = 0; p < (per_prio ? CTR_PRIOS : 1); p++) {
		int idx = per_prio ? ctr_prio_idx(p, (enum ctr_prio_metric)m) : ctr_port_idx((enum ctr_port_metric)m);

		for (int i = 0; i < ns->count; i++) {
			if (!s[i].have[idx])
				continue;
			if (!said)
				mon_buf_printf(b, "# HELP %s %s\n# TYPE %s counter\n", nm->name, nm->help, nm->name);
			said = 1;
			mon_buf_printf(b, "%s", nm->name);
			labels(b, ns, &ns->n[i]);
			if (per_prio)
				mon_buf_printf(b, ",priority=\"%d\"", p);
			mon_buf_printf(b, "} %.9g\n", (double)s[i].v[idx] * nm->scale);
		}
	}
}

void mon_nics_expo(struct mon_nics *ns, struct mon_buf *b)
{
	struct ctr_snapshot s[MON_MAX_LANES];

	if (!ns->count)
		return;
	for (int i = 0; i < ns->count; i++)
		if (counters_read(ns->n[i].c, &s[i]))
			memset(&s[i], 0, sizeof(s[i]));
	mon_buf_printf(b, "# HELP fabscope_nic_counters_sources NIC counter sources opened (ethtool, hw_counters, port counters)\n"
		       "# TYPE fabscope_nic_counters_sources gauge\n");
	for (int i = 0; i < ns->count; i++) {
		mon_buf_printf(b, "fabscope_nic_counters_sources");
		labels(b, ns, &ns->n[i]);
		mon_buf_printf(b, "} %d\n", counters_sources(ns->n[i].c));
	}
	for (int m = 0; m < CTR_PRIO_METRICS; m++)
		one_metric(ns, b, s, m, 1);
	for (int m = 0; m < CTR_PORT_METRICS; m++)
		one_metric(ns, b, s, m, 0);
}
