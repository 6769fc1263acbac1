/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Listening for LLDP on a host's interfaces, without lldpd: a switch port
 * sends an LLDPDU every 30 s by default (lldpd, most switch OSes), so a
 * listen of a little over that hears every neighbour that speaks LLDP.
 */
#ifndef FS_PCAP_LLDP_LISTEN_H
#define FS_PCAP_LLDP_LISTEN_H

#include "lldp.h"

struct lldp_heard {
	const char *ifname;	/* the caller's */
	int heard;		/* LLDPDUs parsed as LLDP_OK (the last one is in l) */
	int bad;		/* LLDP frames that were not */
	struct lldp l;
};

/*
 * Listen on the n interfaces of h until each has heard an LLDPDU or secs
 * have passed (frames parsed by lldp_parse; promiscuous, since a NIC may
 * not take 01:80:c2:00:00:0e otherwise).  0, or -FS_EXIT_ENV said when an
 * interface cannot be captured on (root, a name that is not there).
 */
int lldp_listen(struct lldp_heard *h, int n, double secs);

#endif
