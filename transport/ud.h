/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Datagram endpoints on verbs UD queue pairs, for probes (`fabscope
 * monitor --transport verbs`): small messages to and from a (GID, QP
 * number) without a connection, each send with the address handle of its
 * destination and flow label.
 *
 * An endpoint is one RDMA port, found from an IPv4 address as the verbs
 * transport finds it (the device and port whose RoCEv2 GID table holds the
 * address: verbs.c), with one completion queue and, on it:
 *
 *   - the responder QP (UD_RESPONDER), whose number peers send requests to;
 *   - nqps probe QPs (0 .. nqps - 1), each with its own UDP source port
 *     where the provider takes it from the QP (rxe, see below).
 *
 * Every QP has the QKey given to ud_open and receives into buffers of its
 * own (UD_MSG_MAX bytes after the 40-byte GRH); a message longer is
 * refused as malformed, never copied past its buffer.
 *
 * UDP source ports (ECMP entropy): RoCE v2 providers that follow the
 * kernel's convention take a UD message's port from the flow label of its
 * address handle (rdma_flow_label_to_udp_sport(): mlx5, which libmlx5
 * writes into each address vector), so a probe's port is chosen by its
 * address handle: ud_send caches one per (destination, flow label), at most
 * max_ahs; when a new one is needed another without a send in flight is
 * destroyed, taken in turn by a clock hand (and the send refused, -EAGAIN,
 * when every one has a send in flight).  rxe (Linux 6.1) takes a UD QP's port from its QP
 * number instead, whatever the address handle says, which is why the
 * probe QPs are many: a probe sent from QP i leaves from QP i's port there.
 *
 * Completion times (ud_comp.t_ns): from the device where it gives them
 * (ibv_create_cq_ex with IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK, in
 * ns; else IBV_WC_EX_WITH_COMPLETION_TIMESTAMP in the device's cycles,
 * turned into ns with its hca_core_clock), both the send's and the
 * receive's, so that a round trip is device time; else (rxe has none) a
 * plain completion queue and CLOCK_REALTIME when the completion is polled,
 * and ud_info says so (clock, clock_why).  Poll as soon as ud_fd is readable for software
 * time to be near the arrival.
 *
 * Bounds: per QP 64 receives and 64 sends in flight (the responder 512 of
 * each); a send beyond is refused (-EAGAIN).  Memory: (nqps + 1) x 128 x
 * (UD_MSG_MAX + 40) bytes registered, plus the address handles.
 *
 * Without rdma-core (WITH_VERBS=no) every call but ud_built fails: ud_open
 * says why in err and returns -ENOSYS.
 */
#ifndef FS_UD_H
#define FS_UD_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#define UD_MSG_MAX 64
#define UD_RESPONDER (-1)

enum ud_clock { UD_CLOCK_SOFTWARE, UD_CLOCK_DEVICE };

struct ud_ep;

struct ud_info {
	char dev[64];		/* the RDMA device */
	int port, gid_index;
	uint32_t resp_qpn;	/* the responder QP's number */
	int nqps;		/* probe QPs */
	enum ud_clock clock;	/* where ud_comp.t_ns comes from */
	char clock_why[160];	/* software: why the device's is not used */
	uint64_t ah_created;	/* address handles made */
	uint64_t ah_replaced;	/* of them, destroyed to make room (the cache is too small when it grows) */
	uint64_t failed;	/* completions in error */
	char first_failure[160];	/* the first of them: its status, QP and kind ("" while none) */
};

/* One completion */
struct ud_comp {
	int qp;			/* UD_RESPONDER or a probe QP's index */
	int send;		/* 1: a send of ours completed; 0: a message came */
	int ok;			/* its status was success */
	uint64_t tag;		/* send: ud_send's tag */
	uint64_t t_ns;		/* device ns (UD_CLOCK_DEVICE), else CLOCK_REALTIME ns at the poll */
	uint32_t src_ip;	/* received: the sender's IPv4 address (network order) from the GRH; 0: none */
	uint32_t src_qpn;	/* received: the sender's QP */
	size_t len;		/* received: the message's bytes (without the GRH) */
	unsigned char data[UD_MSG_MAX];
};

/* 1 when this build has verbs; else 0 and why (one line) in why. */
int ud_built(char *why, size_t len);
/*
 * An endpoint on the RDMA port whose RoCE v2 GID is ip, with nqps probe QPs
 * (1 .. 1024) and the responder, all with qkey, and at most max_ahs
 * address handles.  0, or -errno with one line in err (no device has the
 * address, the port is down, a QP or the memory could not be made).
 */
int ud_open(struct ud_ep **out, struct in_addr ip, int nqps, uint32_t qkey, size_t max_ahs, char *err,
	    size_t errlen);
/* NULL is fine */
void ud_close(struct ud_ep *ep);
const struct ud_info *ud_info(const struct ud_ep *ep);
/* Readable (poll, epoll) when a completion may wait: then ud_poll. */
int ud_fd(const struct ud_ep *ep);
/*
 * Send len (at most UD_MSG_MAX) bytes from QP qp to the QP dqpn at the
 * RoCE v2 IPv4 address dst, with flow label flow_label (20 bits: the UDP
 * source port on providers that take it from the address handle); tag
 * comes back in the send's completion.  0, or -errno (-EAGAIN: too many in
 * flight on that QP, or every address handle busy).
 */
int ud_send(struct ud_ep *ep, int qp, struct in_addr dst, uint32_t dqpn, uint32_t flow_label, const void *msg,
	    size_t len, uint64_t tag);
/* Up to max completions into out (the receives posted again): how many, or -errno. */
int ud_poll(struct ud_ep *ep, struct ud_comp *out, int max);
/* The flow label whose image (rdma_flow_label_to_udp_sport) is the UDP port 49152 + (port mod 16384) */
uint32_t ud_flow_label_of_sport(int port);

#endif
