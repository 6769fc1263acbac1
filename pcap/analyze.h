/* SPDX-License-Identifier: BSD-2-Clause */
/* `fabscope pcap FILE`: the RoCEv2 capture analyzer. */
#ifndef FS_PCAP_ANALYZE_H
#define FS_PCAP_ANALYZE_H

int cmd_pcap(int argc, const char **argv);

#endif
