/* SPDX-License-Identifier: BSD-2-Clause */
/* `fabscope capture`: record RoCEv2 and PFC traffic into pcap files. */
#ifndef FS_CAPTURE_H
#define FS_CAPTURE_H

int cmd_capture(int argc, const char **argv);

#endif
