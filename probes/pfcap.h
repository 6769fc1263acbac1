/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A live capture of PFC and PAUSE frames on one interface, for
 * `fabscope probe pfc`: per priority and direction, the frames, XOFF and
 * XON frames, the quanta asked for and the time paused.
 *
 * What it can see, and what it cannot: real NICs (mlx5, bnxt, ice, ...)
 * generate and consume PFC and PAUSE frames in the MAC; those never reach
 * the kernel, so a capture on the host sees none of them.  It sees them on
 * software links (veth, bridges, a Soft-RoCE test bed), on a port mirror
 * (SPAN/ERSPAN decapsulated to an interface) and on NICs in a sniffer mode
 * that pass MAC control frames up.  On real NICs the NIC counters
 * (counters.h: rx/tx_prioN_pause, rx/tx_prioN_pause_duration) are the
 * source; this capture is the source where they are absent (veth has no
 * pause counters) and the check of a mirror's view.
 *
 * Capture: libpcap, snaplen 128, immediate mode, not promiscuous, a small
 * buffer, nanosecond timestamps where libpcap has them; filter
 * "ether proto 0x8808 or (vlan and ether proto 0x8808)": untagged and
 * VLAN-tagged MAC control frames.  Two handles on
 * the interface, one for received frames (PCAP_D_IN, rx: the peer paused
 * us) and one for sent frames (PCAP_D_OUT, tx: we paused the peer), read
 * by one thread that polls both and exits when pfcap_stop asks it to.
 * Frames are dissected by pcap/macctl.h.
 *
 * Accounting, per priority p and direction, for each PFC frame whose
 * class-enable vector has bit p (times of priorities not enabled are
 * ignored, as 802.1Qbb says): frames, XOFF frames (time > 0), XON frames
 * (time 0), the sum of the times (quanta); 802.3x PAUSE frames the same in
 * `global`.  Time paused follows the frames in order, on their capture
 * timestamps, at link_gbps: an XOFF at t asking q quanta pauses until
 * t + q x 512 / speed; a later XOFF before then restarts the pause from
 * its own time (the time between counted once); an XON ends a running
 * pause at its own time.  A read includes the pause still running, up to
 * the time of the read.  Without a link speed (0) paused_s is NAN and the
 * frames are still counted.
 *
 * Timestamps are the kernel's receive/send times (CLOCK_REALTIME, as
 * libpcap gives them) and a read's time is CLOCK_REALTIME too: a step of
 * the wall clock during a capture distorts the paused time by as much (a
 * pause is never counted negative).
 *
 * Also counted: every frame the filter passed (frames), PFC, PAUSE and
 * other MAC control opcodes, truncated frames (snaplen or a short frame),
 * and libpcap's own drops (pcap_stats ps_drop, both handles).
 *
 * Errors follow core/error.h: one line naming the interface and what to
 * do; -FS_EXIT_USAGE for a bad argument, -FS_EXIT_ENV for the rest (no
 * such interface, no permission: capturing needs CAP_NET_RAW).
 */
#ifndef FS_PFCAP_H
#define FS_PFCAP_H

#include <stdint.h>

#define PFCAP_PRIOS 8
#define PFCAP_SNAPLEN 128
#define PFCAP_BUFFER (256 * 1024)	/* bytes of kernel ring per handle */
#define PFCAP_FILTER "ether proto 0x8808 or (vlan and ether proto 0x8808)"

enum pfcap_dir { PFCAP_RX, PFCAP_TX };	/* the peer paused us; we paused the peer */

struct pfcap_prio {
	uint64_t frames[2];	/* frames enabling the priority, [PFCAP_RX], [PFCAP_TX] */
	uint64_t xoff[2];	/* ... with a time > 0 */
	uint64_t xon[2];	/* ... with a time of 0 */
	uint64_t quanta[2];	/* the sum of their times */
	double paused_s[2];	/* seconds paused; NAN without a link speed */
};

struct pfcap_counts {
	uint64_t frames;	/* frames the filter passed, both directions */
	uint64_t pfc, pause, other;	/* PFC, 802.3x PAUSE, other MAC control opcodes */
	uint64_t truncated;	/* captured too short to dissect */
	uint64_t dropped;	/* libpcap's drops (its buffer was full) */
	struct pfcap_prio prio[PFCAP_PRIOS];
	struct pfcap_prio global;	/* 802.3x PAUSE: every priority at once */
	double link_gbps;	/* as given to pfcap_start; 0 unknown */
};

struct pfcap;

/*
 * Start capturing on ifname; link_gbps (0: unknown) turns quanta into
 * time.  0 and *out set, or a negative code (nothing left running).
 */
int pfcap_start(struct pfcap **out, const char *ifname, double link_gbps);

/* The counts so far; safe while the capture runs, from any thread. */
void pfcap_read(struct pfcap *c, struct pfcap_counts *out);

/*
 * Stop: the thread reads what the handles still hold, then exits; joined,
 * everything freed.  final (NULL: not wanted) gets the last counts, with
 * running pauses counted up to now.  pfcap_stop(NULL, ...) does nothing.
 */
void pfcap_stop(struct pfcap *c, struct pfcap_counts *final);

#endif
