/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * NIC and RDMA counters behind one interface, for the PFC probe.
 *
 * Sources, each read from a root path ("/" the live system, else a fixture
 * tree laid out like it, so that tests need no NIC):
 *   - ethtool statistics of a netdev: the SIOCETHTOOL ioctl, ETHTOOL_GSSET_INFO
 *     for the size of the ETH_SS_STATS string set, ETHTOOL_GSTRINGS for its
 *     names, ETHTOOL_GSTATS for the values (ETHTOOL_GDRVINFO names the
 *     driver).  Under a fixture root the file ROOT/ethtool/IFNAME stands in:
 *     "name: value" lines, as `ethtool -S` prints them;
 *   - ROOT/sys/class/infiniband/DEV/ports/N/hw_counters/NAME: the RDMA
 *     driver's counters (mlx5_ib: np_ecn_marked_roce_packets, np_cnp_sent,
 *     rp_cnp_handled, out_of_sequence, packet_seq_err, ...);
 *   - ROOT/sys/class/infiniband/DEV/ports/N/counters/NAME: the InfiniBand
 *     port (PMA) counters every RDMA driver has (port_xmit_wait, ...).
 *
 * A per-driver name map turns raw names into normalized metrics: per
 * priority p (0..7) PFC frames received and sent, pause duration received
 * and sent (microseconds, where the driver counts it: mlx5's
 * rx/tx_prioN_pause_duration), receive-buffer discards; per port ECN-marked
 * RoCE packets, CNPs sent and handled, out-of-sequence packets, NAK sequence
 * errors, PFC storm warning and error events, port-wide receive discards,
 * InfiniBand transmit wait and transmit discards.  Names no map knows are
 * ignored.  The first source to give a metric owns it (ethtool, then
 * hw_counters, then counters).
 *
 * Each source picks its map by its own driver (soft-RoCE's rxe sits on a
 * veth, mlx5_ib on mlx5_core): for ethtool ETHTOOL_GDRVINFO's (live) or
 * the basename of the link ROOT/sys/class/net/IFNAME/device/driver
 * (fixture); for the RDMA folders the basename of
 * ROOT/sys/class/infiniband/DEV/device/driver, else a guess from the
 * device's name (mlx5_0, rxe0).  ctr_opts.driver overrides them all.  A
 * driver without a map still opens: nothing of it maps (counters_mapped()
 * says how many did), and ctr_ethtool_stats() lists its raw counters.  The
 * InfiniBand port counters are the same for every driver.
 *
 * Bounds: string set sizes above CTR_MAX_STATS are refused; the kernel
 * writes as many strings and values as the driver counts at the time of
 * the call, whatever the caller asked for, so the buffers are sized with
 * room to spare and a count that changed between calls is read again;
 * names are at most ETH_GSTRING_LEN bytes, NUL-terminated here; file values
 * are decimal unsigned 64-bit integers, anything else is an error naming
 * the file (and line).
 *
 * Errors follow core/error.h: one line on stderr, a negative FS_EXIT_* code
 * returned (-FS_EXIT_USAGE for bad options or a malformed fixture or
 * snapshot file, -FS_EXIT_ENV for a missing device, interface or counter
 * set, or a failed ioctl).
 */
#ifndef FS_COUNTERS_H
#define FS_COUNTERS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CTR_PRIOS 8
#define CTR_MAX_STATS 65536	/* string set entries accepted from a driver */
#define CTR_NAME_MAX 32		/* ETH_GSTRING_LEN: a raw name's bytes, NUL included */

enum ctr_prio_metric {
	CTR_RX_PAUSE,		/* PFC frames received: the peer paused us */
	CTR_TX_PAUSE,		/* PFC frames sent: we paused the peer */
	CTR_RX_PAUSE_US,	/* time paused by the peer, microseconds */
	CTR_TX_PAUSE_US,	/* time we paused the peer, microseconds */
	CTR_RX_DISCARDS,	/* packets dropped for lack of receive buffer */
	CTR_PRIO_METRICS
};

enum ctr_port_metric {
	CTR_ECN_MARKED,		/* RoCE packets received with CE (notification point) */
	CTR_CNP_SENT,		/* CNPs sent (notification point) */
	CTR_CNP_HANDLED,	/* CNPs handled (reaction point: rate cut) */
	CTR_OUT_OF_SEQUENCE,	/* out-of-sequence packets received (responder) */
	CTR_PACKET_SEQ_ERR,	/* NAK sequence errors received (requester) */
	CTR_STORM_WARN,		/* the NIC sent pauses for long: tx_pause_storm_warning_events */
	CTR_STORM_ERROR,	/* ... so long that it stopped pausing: tx_pause_storm_error_events */
	CTR_RX_DISCARDS_PHY,	/* port-wide receive buffer drops */
	CTR_XMIT_WAIT,		/* InfiniBand port_xmit_wait, ticks */
	CTR_XMIT_DISCARDS,	/* InfiniBand port_xmit_discards */
	CTR_PORT_METRICS
};

#define CTR_NMETRICS (CTR_PRIOS * CTR_PRIO_METRICS + CTR_PORT_METRICS)

/* Flat metric index of a per-priority and of a port metric. */
static inline int ctr_prio_idx(int prio, enum ctr_prio_metric m)
{
	return prio * CTR_PRIO_METRICS + (int)m;
}

static inline int ctr_port_idx(enum ctr_port_metric m)
{
	return CTR_PRIOS * CTR_PRIO_METRICS + (int)m;
}

/* "prio3.rx_pause", "port.ecn_marked": the name of metric idx. */
const char *ctr_metric_name(int idx, char *buf, size_t len);
/* The index of a name ctr_metric_name gives, or -1. */
int ctr_metric_parse(const char *name);

/* One reading of every metric. */
struct ctr_snapshot {
	double t;			/* seconds (CLOCK_MONOTONIC from counters_read) */
	uint64_t v[CTR_NMETRICS];
	unsigned char have[CTR_NMETRICS];	/* the source gave this metric */
};

/*
 * Snapshot files, so that a series can be kept and judged later:
 *   fabscope-counters 1
 *   time 12.500000000
 *   prio3.rx_pause 1200
 *   port.ecn_marked 41
 * '#' lines and empty lines are skipped; the first other line is the
 * version line.  read: 0 or -FS_EXIT_USAGE (one line naming file and line).
 */
int ctr_snapshot_write(FILE *f, const struct ctr_snapshot *s);
int ctr_snapshot_read(const char *path, struct ctr_snapshot *s);

/* ---- raw ethtool statistics ---- */

struct ctr_raw {
	size_t n;
	char (*name)[CTR_NAME_MAX];	/* NUL-terminated, at most 31 bytes */
	uint64_t *val;
};

void ctr_raw_release(struct ctr_raw *r);
/*
 * The ethtool statistics of ifname in the current network namespace,
 * through the ioctl; unprivileged.  A device without statistics, a missing
 * interface, a name too long for IFNAMSIZ: one line, -FS_EXIT_ENV (or
 * -FS_EXIT_USAGE for the name).
 */
int ctr_ethtool_stats(const char *ifname, struct ctr_raw *out);
/* The driver's name (ETHTOOL_GDRVINFO), e.g. "mlx5_core", "veth". */
int ctr_ethtool_driver(const char *ifname, char *buf, size_t len);
/*
 * A fixture file of "name: value" lines (an optional "NIC statistics:"
 * header, '#' comments and blank lines skipped), as ctr_ethtool_stats
 * would give them.
 */
int ctr_ethtool_fixture(const char *path, struct ctr_raw *out);

/* ---- the sources behind one handle ---- */

struct ctr_opts {
	const char *root;	/* NULL or "/": the live system; else a fixture tree */
	const char *ifname;	/* netdev for ethtool statistics; NULL: found from rdma_dev */
	const char *rdma_dev;	/* RDMA device; NULL: found from ifname (device/infiniband/) */
	int port;		/* RDMA port; 0: 1 */
	const char *driver;	/* a map ("mlx5", "rxe") or driver name; NULL: detected */
};

struct counters;

/*
 * Open every source the options name or imply.  An interface named but
 * without ethtool statistics, an RDMA device named but absent: errors.  An
 * RDMA device found from the interface is used when its counter folders
 * exist.  At least one source must open.
 */
int counters_open(struct counters **out, const struct ctr_opts *o);
/* Read every source into s (s->t: CLOCK_MONOTONIC seconds at the read). */
int counters_read(struct counters *c, struct ctr_snapshot *s);
void counters_free(struct counters *c);

/* Sources opened (ethtool, hw_counters, counters: at most 3). */
int counters_sources(const struct counters *c);
/* Raw counters that map to a metric, over all sources. */
int counters_mapped(const struct counters *c);
/* The link speed in Gb/s from ROOT/sys/class/net/IFNAME/speed; 0 unknown. */
double counters_link_gbps(const struct counters *c);
/* One line: "ethtool eth2 (mlx5_core, map mlx5: 14 of 1890 mapped), ..." */
void counters_describe(const struct counters *c, char *buf, size_t len);

#endif
