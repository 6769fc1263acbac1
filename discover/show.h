/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fabscope topo show: what this host sees of its cables - per interface its
 * state, carrier, speed and MTU, the settings a host controls that the
 * fabric needs alike on every port of a rail (driver, firmware, PCIe link,
 * ECN per priority), all from sysfs, and the LLDP neighbour on it (the
 * switch's system name, port ID and description, chassis ID, management
 * address, maximum frame size): from a running lldpd (lldpcli), or by
 * listening with libpcap for a bounded time (pcap/lldp-listen.h).
 *
 * The JSON document (schema fabscope.topo-show/1) is an observation that
 * `topo check` judges against an intent file (topology/verify.h).
 */
#ifndef FS_DISCOVER_SHOW_H
#define FS_DISCOVER_SHOW_H

#include <jansson.h>

struct discover_opts {
	double listen_s;
	const char *source;	/* auto (lldpd when its socket answers, else listen), lldpd, listen, none */
	const char *lldpd_socket;
	const char *sysfs;	/* where sysfs is (default /sys): a copy of another host's works too */
	const char *node;	/* the name in the document (default: the host name) */
};

/* The observation of ifaces[0..n) (n 0: every interface configured up, but lo) into
 * *doc; quiet: say nothing on stderr.  0 or -FS_EXIT_* said. */
int topo_observe(const struct discover_opts *o, const char *const *ifaces, int n, int quiet, json_t **doc);

/* topo show: the observation as text, JSON (json 1) or a result record per
 * port (json 2: test "topology", as a plan's topology phase keeps them) on stdout */
int topo_show(const struct discover_opts *o, const char *const *ifaces, int n, int json);

#endif
