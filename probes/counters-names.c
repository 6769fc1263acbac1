/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The counters' names: the normalized metrics' names ("prio3.rx_pause",
 * "port.ecn_marked") and the per-driver maps from raw counter names to
 * metrics (see counters.h).
 */
#include <stdio.h>
#include <string.h>

#include "counters-int.h"

/* ---- metric names ---- */

static const char *const prio_names[CTR_PRIO_METRICS] = {
	[CTR_RX_PAUSE] = "rx_pause",
	[CTR_TX_PAUSE] = "tx_pause",
	[CTR_RX_PAUSE_US] = "rx_pause_us",
	[CTR_TX_PAUSE_US] = "tx_pause_us",
	[CTR_RX_DISCARDS] = "rx_discards",
};

static const char *const port_names[CTR_PORT_METRICS] = {
	[CTR_ECN_MARKED] = "ecn_marked",
	[CTR_CNP_SENT] = "cnp_sent",
	[CTR_CNP_HANDLED] = "cnp_handled",
	[CTR_OUT_OF_SEQUENCE] = "out_of_sequence",
	[CTR_PACKET_SEQ_ERR] = "packet_seq_err",
	[CTR_STORM_WARN] = "storm_warning",
	[CTR_STORM_ERROR] = "storm_error",
	[CTR_RX_DISCARDS_PHY] = "rx_discards_phy",
	[CTR_XMIT_WAIT] = "xmit_wait",
	[CTR_XMIT_DISCARDS] = "xmit_discards",
};

const char *ctr_metric_name(int idx, char *buf, size_t len)
{
	int p = CTR_PRIOS * CTR_PRIO_METRICS;

	if (idx < 0 || idx >= CTR_NMETRICS)
		snprintf(buf, len, "?");
	else if (idx < p)
		snprintf(buf, len, "prio%d.%s", idx / CTR_PRIO_METRICS,
			 prio_names[idx % CTR_PRIO_METRICS]);
	else
		snprintf(buf, len, "port.%s", port_names[idx - p]);
	return buf;
}

int ctr_metric_parse(const char *name)
{
	int i;

	if (!strncmp(name, "prio", 4) && name[4] >= '0' && name[4] < '0' + CTR_PRIOS &&
	    name[5] == '.') {
		for (i = 0; i < CTR_PRIO_METRICS; i++)
			if (!strcmp(name + 6, prio_names[i]))
				return ctr_prio_idx(name[4] - '0', (enum ctr_prio_metric)i);
		return -1;
	}
	if (!strncmp(name, "port.", 5))
		for (i = 0; i < CTR_PORT_METRICS; i++)
			if (!strcmp(name + 5, port_names[i]))
				return ctr_port_idx((enum ctr_port_metric)i);
	return -1;
}

/* ---- name maps (struct ctr_name, struct ctr_map: counters-int.h) ---- */

#define PRIO(pat, m) { pat, 1, m }
#define PORT(pat, m) { pat, 0, m }

/* mlx5_core ethtool -S: Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst */
static const struct ctr_name mlx5_ethtool[] = {
	PRIO("rx_prio%p_pause", CTR_RX_PAUSE),
	PRIO("tx_prio%p_pause", CTR_TX_PAUSE),
	PRIO("rx_prio%p_pause_duration", CTR_RX_PAUSE_US),	/* microseconds */
	PRIO("tx_prio%p_pause_duration", CTR_TX_PAUSE_US),
	PRIO("rx_prio%p_discards", CTR_RX_DISCARDS),
	PORT("tx_pause_storm_warning_events", CTR_STORM_WARN),
	PORT("tx_pause_storm_error_events", CTR_STORM_ERROR),
	PORT("rx_discards_phy", CTR_RX_DISCARDS_PHY),
	{ NULL, 0, 0 }
};

/* mlx5_ib ports/N/hw_counters (the q counters and the congestion counters) */
static const struct ctr_name mlx5_hw[] = {
	PORT("np_ecn_marked_roce_packets", CTR_ECN_MARKED),
	PORT("np_cnp_sent", CTR_CNP_SENT),
	PORT("rp_cnp_handled", CTR_CNP_HANDLED),
	PORT("out_of_sequence", CTR_OUT_OF_SEQUENCE),
	PORT("packet_seq_err", CTR_PACKET_SEQ_ERR),
	{ NULL, 0, 0 }
};

/* rdma_rxe (soft-RoCE) hw_counters: rxe_hw_counters.c; out_of_sequence before 4.19 */
static const struct ctr_name rxe_hw[] = {
	PORT("out_of_seq_request", CTR_OUT_OF_SEQUENCE),
	PORT("out_of_sequence", CTR_OUT_OF_SEQUENCE),
	PORT("rcvd_seq_err", CTR_PACKET_SEQ_ERR),
	{ NULL, 0, 0 }
};

/* InfiniBand PMA port counters: the same names for every driver */
const struct ctr_name ctr_ib_port[] = {
	PORT("port_xmit_wait", CTR_XMIT_WAIT),
	PORT("port_xmit_discards", CTR_XMIT_DISCARDS),
	{ NULL, 0, 0 }
};

static const char *const mlx5_drivers[] = { "mlx5_core", "mlx5e_rep", "mlx5_ib", NULL };
static const char *const rxe_drivers[] = { "rdma_rxe", "rxe", NULL };

static const struct ctr_map maps[] = {
	{ "mlx5", mlx5_drivers, "mlx5_", mlx5_ethtool, mlx5_hw },
	{ "rxe", rxe_drivers, "rxe", NULL, rxe_hw },
};

#define NMAPS (sizeof(maps) / sizeof(maps[0]))

const struct ctr_map *ctr_map_by_driver(const char *driver)
{
	size_t i, j;

	for (i = 0; i < NMAPS; i++) {
		if (!strcmp(maps[i].name, driver))
			return &maps[i];
		for (j = 0; maps[i].drivers[j]; j++)
			if (!strcmp(maps[i].drivers[j], driver))
				return &maps[i];
	}
	return NULL;
}

const struct ctr_map *ctr_map_by_rdma_name(const char *dev)
{
	size_t i;

	for (i = 0; i < NMAPS; i++)
		if (!strncmp(dev, maps[i].rdma_prefix, strlen(maps[i].rdma_prefix)))
			return &maps[i];
	return NULL;
}

/* The priority matched (0 for a name without one), or -1. */
static int name_match(const char *pat, const char *name)
{
	const char *ph = strstr(pat, "%p");
	size_t pre;

	if (!ph)
		return strcmp(pat, name) ? -1 : 0;
	pre = (size_t)(ph - pat);
	if (strncmp(pat, name, pre))
		return -1;
	if (name[pre] < '0' || name[pre] >= '0' + CTR_PRIOS)
		return -1;
	return strcmp(ph + 2, name + pre + 1) ? -1 : name[pre] - '0';
}

/* The metric index a raw name maps to in tbl (NULL: none), or -1. */
int ctr_map_name(const struct ctr_name *tbl, const char *name)
{
	int p;

	for (; tbl && tbl->pat; tbl++) {
		p = name_match(tbl->pat, name);
		if (p < 0)
			continue;
		return tbl->prio ? ctr_prio_idx(p, (enum ctr_prio_metric)tbl->metric) :
				   ctr_port_idx((enum ctr_port_metric)tbl->metric);
	}
	return -1;
}
