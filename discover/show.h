/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fabscope topo show: what this host sees of its cables - per interface its
 * state, speed and MTU (sysfs), and the LLDP neighbour heard on it (the
 * switch's system name, port ID and description, chassis ID, management
 * address, maximum frame size), by listening with libpcap for a bounded
 * time (pcap/lldp-listen.h); no lldpd is needed on the host.
 */
#ifndef FS_DISCOVER_SHOW_H
#define FS_DISCOVER_SHOW_H

struct opt_list;

/* ifaces (none: every interface that is up, but lo); 0 or -FS_EXIT_* said */
int topo_show(const struct opt_list *ifaces, double listen_s, int json);

#endif
