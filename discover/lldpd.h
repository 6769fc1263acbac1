/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * LLDP neighbours as a running lldpd knows them: `lldpcli -u SOCKET -f json0
 * show neighbors` (run without a shell, its output bounded), read into the
 * same struct lldp the listener fills.  The strings came from the wire
 * through lldpd and are kept printable as lldp_parse keeps them (\xNN).
 */
#ifndef FS_DISCOVER_LLDPD_H
#define FS_DISCOVER_LLDPD_H

#include "../pcap/lldp-listen.h"

#define LLDPD_SOCKET_DEFAULT "/run/lldpd.socket"

/* 1 when a lldpd answers on socket (a Unix socket one can connect to) */
int lldpd_running(const char *socket);

/* Fill h[0..n) (heard or not) from lldpd's table: 0, or -FS_EXIT_ENV said
 * (lldpcli missing, failing, or its output not lldpcli's json0). */
int lldpd_neighbours(const char *socket, struct lldp_heard *h, int n);

/* The same from lldpcli's json0 text (len bytes): 0, or -1 when it is not
 * such a document.  For tests and the fuzzer. */
int lldpd_parse_json0(const char *text, size_t len, struct lldp_heard *h, int n);

#endif
