/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Paris-traceroute for exact TCP 5-tuples: which routers a flow crosses.
 *
 * Switches and routers spread flows over equal-cost paths (ECMP) by hashing
 * the 5-tuple (source and destination address, protocol, source and
 * destination port).  A probe that carries the very 5-tuple of a flow hashes
 * like the flow and follows its path; with a TTL of t it dies at the t-th
 * router, which answers with an ICMP time-exceeded message from one of its
 * addresses.  So, per source port, TCP SYN probes of TTL 1, 2, ... name the
 * routers of that flow's path, until the destination itself answers (SYN-ACK
 * from a listening port, RST from a closed one).  Classic traceroute varies
 * the destination port (or, with ICMP, has no ports) and so wanders over
 * several paths; this one never changes a header field that the hash reads.
 *
 * Method:
 *   - probes go out of a raw IPPROTO_TCP socket bound to the source address
 *     (so that source-based routing rules pick the flow's NIC), with IP_TTL
 *     set per probe; the kernel builds the IP header, we build the TCP SYN
 *     (an MSS option, our checksum);
 *   - each probe's sequence number is base + 16 * TTL + attempt, base a
 *     random number per source port and per call: an answer names its probe;
 *   - ICMP time-exceeded and destination-unreachable messages are read on a
 *     raw ICMP socket (ICMP_FILTER: only those two types) and matched by the
 *     TCP header they quote: addresses, ports and sequence number (RFC 792
 *     quotes only 8 bytes of TCP, which holds exactly those);
 *   - SYN-ACK and RST answers of the destination are read on the raw TCP
 *     socket (a BPF filter keeps only SYN, RST or ACK segments from the
 *     destination port) and matched by their acknowledgment number
 *     (our sequence number + 1); a plain ACK of the destination for the
 *     5-tuple is its answer too, for the TTL being probed: what a
 *     connection of that 5-tuple in TIME_WAIT answers a SYN with (the
 *     flows just traced, closed by the server first), or a live one
 *     (RFC 5961's challenge ACK), which carry none of our numbers;
 *   - so concurrent traces, even of the same 5-tuples, do not mix: each
 *     accepts only its own sequence numbers.
 * The destination answering (SYN-ACK or RST, or an ICMP destination-
 * unreachable from the destination address itself, e.g. a firewall's
 * port-unreachable) ends the trace of that port with reached = 1.  A router
 * answering destination-unreachable (no route, an unreachable route) ends it
 * with reached = 0; that router is the last hop.  A hop that does not answer
 * is left empty (addr "") and the trace goes on with the next TTL.
 *
 * Limits and cautions:
 *   - IPv4 only (an IPv6 address is a usage error).
 *   - The sequence number is our own and handshakes are never completed; our
 *     host's kernel, which knows nothing of the SYN, answers the
 *     destination's SYN-ACK with an RST (harmless for a port nobody uses).
 *     But an RST from our host for the 5-tuple of a LIVE connection could
 *     kill it (only if it fell in that connection's window, which is
 *     unlikely but possible); on a live 5-tuple the destination answers
 *     the SYN with a challenge ACK (RFC 5961), taken as its answer (above),
 *     though a stray ACK of that connection could be taken so too, and end
 *     the trace early.  Trace before or after the flows run, or on source
 *     ports nobody uses: the caller decides.
 *   - Answers are rate-limited by the routers: Linux's
 *     net.ipv4.icmp_ratelimit (default 1000 ms per destination, a token
 *     bucket of 6: six answers back to back, then one a second towards our
 *     host) applies to the types of net.ipv4.icmp_ratemask (time-exceeded
 *     and unreachable by default), and net.ipv4.icmp_msgs_per_sec /
 *     icmp_msgs_burst (1000/s, burst 50) cap all ICMP errors of a router
 *     (per network namespace since 6.12).  Hardware switches police ICMP
 *     generation in their control plane too (often far lower).  A hop that
 *     does not answer is probed again up to probes_per_hop times, waiting
 *     timeout_ms, then pause_ms, between rounds; with the default Linux
 *     limit, tracing more than a handful of ports at once through one router
 *     needs a pause_ms of 1000 or more per missing answer, or routers with
 *     icmp_ratelimit=0 (a test bed may set that).
 *   - Routers answer from an address of their own (Linux: the address of
 *     the interface it sends the ICMP out of, unless
 *     icmp_errors_use_inbound_ifaddr=1), so a hop's address names the
 *     router, not necessarily the link the probe came in by.  A router that
 *     does not decrement the TTL (MPLS, some L2 fabrics) is invisible.
 *   - Needs CAP_NET_RAW (root, or setcap cap_net_raw+ep on the binary).
 *
 * Tracing the 5-tuples of flows that just ended (trace_opts.settle_ms): a
 * connection closes after close() returns, and until it has, the destination
 * still sends it ACKs, which a trace would take for its answer at the TTL
 * being probed (a flow "reaching" its destination at TTL 1 from a busy
 * host).  So the trace first waits, up to settle_ms, until no socket of this
 * host (/proc/net/tcp of its network namespace) holds one of the 5-tuples in
 * a state where the peer may still send: only TIME_WAIT (the peer's FIN and
 * every ACK before it came) or none.  Only a plain ACK without FIN or data
 * is ever taken as an answer.
 *
 * Patient tracing (trace_opts.patient): a router that limits its answers
 * (Linux: a burst of 6, then one a second towards one host) answers a few
 * of many ports at once and the rest one a round, so a TTL is asked again,
 * round after round, while the last TRACE_QUIET rounds brought an answer,
 * up to 4 rounds a port and 10 more; only a TTL where TRACE_QUIET rounds in
 * a row brought nothing is given up.  Every port is then traced through
 * such routers, at about one round (timeout_ms + pause_ms) per answer a
 * router owes beyond its burst: 16 ports through one Linux router at its
 * default limit, 10 rounds for each TTL it answers.
 *
 * Every wait is bounded (poll with timeouts): one call takes at most about
 * max_ttl * (probes_per_hop * timeout_ms + (probes_per_hop - 1) * pause_ms),
 * however many ports trace_tcp_many is given (patient: rounds instead of
 * probes_per_hop, at most 4 * ports + 10); a TTL whose answers are all in
 * goes on at once.  SIGINT/SIGTERM (net_stop, core/net.h) ends it
 * early with -FS_EXIT_INTERRUPTED, the results so far in r.
 */
#ifndef FS_TRACE_H
#define FS_TRACE_H

#include <stddef.h>

#define TRACE_MAX_HOPS 16
#define TRACE_MAX_PROBES 10		/* probes_per_hop is at most this */
#define TRACE_DEFAULT_MAX_TTL 8
#define TRACE_DEFAULT_TIMEOUT_MS 1000
#define TRACE_DEFAULT_PROBES 3
#define TRACE_QUIET 3			/* patient: rounds without an answer before a TTL is given up */

struct trace_hop {
	int ttl;		/* 1, 2, ... */
	char addr[64];		/* who answered for this TTL; empty: no answer */
	double rtt_us;		/* probe sent to answer read, microseconds */
	int reached;		/* the answer is the destination's */
};

struct trace_result {
	struct trace_hop hop[TRACE_MAX_HOPS];
	int nhops;		/* hop[0 .. nhops-1]: up to the destination's answer, a
				 * router's unreachable, or the last TTL probed */
	int reached;		/* the destination answered */
};

/* A NULL opts, or a field <= 0, means the default. */
struct trace_opts {
	int max_ttl;		/* highest TTL probed: default 8, at most TRACE_MAX_HOPS */
	int timeout_ms;		/* wait for the answers of one round: default 1000 */
	int probes_per_hop;	/* rounds per TTL while answers are missing: default 3 */
	const char *src_ip;	/* when the src_ip argument is NULL; both NULL: the source
				 * address the kernel would use towards dst_ip */
	int pause_ms;		/* between rounds of one TTL: default timeout_ms / 4,
				 * 10 to 250 ms (a router's rate limit refills meanwhile) */
	int patient;		/* ask a TTL again while answers still come: see below */
	int settle_ms;		/* before the first probe, wait up to this long for this
				 * host's connections of the 5-tuples to end (see below) */
};

/*
 * Trace the path of the TCP 5-tuple (src_ip:sport -> dst_ip:dport) with TCP
 * SYN probes of increasing TTL, as described above.  sport and dport 1..65535;
 * addresses are IPv4 literals.  Fills *r.
 * Returns 0 (whether the destination was reached or not: r->reached), or a
 * negative exit code after writing one line to err (nothing is printed):
 *	-FS_EXIT_USAGE        a bad address or port
 *	-FS_EXIT_ENV          no CAP_NET_RAW ("run as root or give the binary
 *	                      cap_net_raw"), no route to the destination, the
 *	                      source address is not ours, out of memory
 *	-FS_EXIT_INTERRUPTED  SIGINT/SIGTERM (net_stop); r holds what was seen
 */
int trace_tcp(const char *src_ip, int sport, const char *dst_ip, int dport,
	      const struct trace_opts *o, struct trace_result *r, char *err, size_t errlen);

/*
 * Trace several source ports at once (same src/dst/dport): each round sends
 * one probe per port still tracing, so n ports take about as long as one.
 * r has n entries, r[i] for sports[i].  Ports may repeat (each its own trace).
 * Same returns as trace_tcp.
 */
int trace_tcp_many(const char *src_ip, const int *sports, int n, const char *dst_ip,
		   int dport, const struct trace_opts *o, struct trace_result *r,
		   char *err, size_t errlen);

#endif
