/*
 * transport/tcp-info.c - a TCP flow's counters from the kernel's TCP_INFO.
 *
 * Apart from tcp.c: <linux/tcp.h> has the fields of newer kernels
 * (tcpi_reord_seen, tcpi_rcv_ooopack: Linux 4.19, 5.4) and cannot be
 * included beside glibc's <netinet/tcp.h>.  A kernel older than the header
 * returns a shorter struct: the fields past its length stay unknown.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include "transport.h"
#include "tcp.h"

#define HAVE_FIELD(len, f) (offsetof(struct tcp_info, f) + sizeof(((struct tcp_info *)0)->f) <= (len))

int tcp_fd_stats(int fd, struct xport_flow_stats *st)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0)
		return -errno;
	if (HAVE_FIELD(len, tcpi_total_retrans))
		st->retrans = ti.tcpi_total_retrans;
	if (HAVE_FIELD(len, tcpi_segs_in)) {
		st->tx_segs = ti.tcpi_segs_out;
		st->rx_segs = ti.tcpi_segs_in;
	}
	if (HAVE_FIELD(len, tcpi_reord_seen))
		st->reord_seen = ti.tcpi_reord_seen;
	if (HAVE_FIELD(len, tcpi_rcv_ooopack))
		st->rx_ooo = ti.tcpi_rcv_ooopack;
	return 0;
}
