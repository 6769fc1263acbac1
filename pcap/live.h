/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Opening a live libpcap capture with one clear line for each way it fails:
 * no such interface in this network namespace, no CAP_NET_RAW, the
 * interface down, settings refused.  Used by the PFC probe's capture and by
 * `fabscope capture`.
 */
#ifndef FS_LIVE_H
#define FS_LIVE_H

#include <pcap/pcap.h>

struct live_opts {
	int snaplen;
	int buffer;		/* kernel ring bytes; 0: libpcap's default */
	int promisc;
	int immediate;		/* deliver packets as they come, not in full buffers */
	int nano;		/* ask for nanosecond timestamps (*nano says whether given) */
};

/*
 * pcap_create + settings + pcap_activate on ifname.  0 and *out, or
 * -FS_EXIT_ENV after one line on stderr (and nothing open).  *nano (may be
 * NULL): 1 when timestamps are in nanoseconds.
 */
int live_open(pcap_t **out, const char *ifname, const struct live_opts *o, int *nano);

/* Compile and set a BPF filter: 0, or -FS_EXIT_USAGE naming the filter. */
int live_filter(pcap_t *h, const char *ifname, const char *filter);

#endif
