/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The counters' insides, shared by their parts and no other file:
 * counters.c (the sources behind one handle, small helpers),
 * counters-names.c (metric names, per-driver name maps),
 * counters-ethtool.c (raw ethtool statistics: the ioctl, the fixture file)
 * and counters-snap.c (snapshot files).
 */
#ifndef FS_COUNTERS_INT_H
#define FS_COUNTERS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "counters.h"

/* counters-names.c */

/*
 * A raw name, "%p" standing for one priority digit 0-7; prio: metric is an
 * enum ctr_prio_metric (else an enum ctr_port_metric).
 */
struct ctr_name {
	const char *pat;
	int prio;
	int metric;
};

struct ctr_map {
	const char *name;
	const char *const *drivers;	/* netdev and PCI driver names, NULL-terminated */
	const char *rdma_prefix;	/* RDMA device names this driver gives */
	const struct ctr_name *ethtool, *hw;
};

/* InfiniBand PMA port counters: the same names for every driver */
extern const struct ctr_name ctr_ib_port[];
/* The map of a driver, by the map's name ("mlx5") or a driver's ("mlx5_core"), or NULL. */
const struct ctr_map *ctr_map_by_driver(const char *driver);
/* The map whose RDMA device names dev has ("mlx5_0": mlx5), or NULL. */
const struct ctr_map *ctr_map_by_rdma_name(const char *dev);
/* The metric index a raw name maps to in tbl (NULL: none), or -1. */
int ctr_map_name(const struct ctr_name *tbl, const char *name);

/* counters.c */

/* A device or interface name that is safe in a path: 1..max-1 bytes, no '/' */
int ctr_check_name(const char *what, const char *s, size_t max);
/* Strict decimal u64, surrounding blanks allowed; 0 or -1. */
int ctr_parse_u64(const char *s, uint64_t *out);
/* Printable copy of at most 40 bytes of s, for messages */
const char *ctr_shown(const char *s, char *buf, size_t len);

/* counters-ethtool.c */

/* A socket for the ethtool ioctl (AF_INET, else AF_UNIX); -1 and errno on failure */
int ctr_eth_socket(void);
/* SIOCETHTOOL with data; 0 or -errno */
int ctr_eth_ioctl(int fd, const char *ifname, void *data);
/* n values into vals; 1 when the count changed meanwhile */
int ctr_eth_values(int fd, const char *ifname, size_t n, uint64_t *vals);
/* Names (and values when vals_too) of ifname, retried while the count moves */
int ctr_eth_read_all(int fd, const char *ifname, struct ctr_raw *out, int vals_too);
/* ETHTOOL_GDRVINFO's driver name; 0 or -errno, silently */
int ctr_eth_driver(int fd, const char *ifname, char *buf, size_t len);

#endif
