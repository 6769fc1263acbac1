/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Synthesized packets for the tests of pcap/dissect.c: test-tool pcapgen
 * writes them to pcap files from a line-oriented spec, dissect-fuzz and
 * the libFuzzer seed corpus start from them.
 *
 * A spec is one packet: a kind and KEY=VALUE words, separated by blanks.
 *
 *   kinds   rc|uc|rd|ud|xrc OP   an opcode of that transport, by its name
 *                                in lower case ("rdma_write_first") or short
 *                                ("write_first": no "rdma_", "imm" for
 *                                "with_immediate", "inv" for
 *                                "with_invalidate", "req", "resp", "ack"
 *                                for "acknowledge", "cmp_swap")
 *           ack                  RC ACKNOWLEDGE (nak=, rnr=, credits=)
 *           cnp                  opcode 0x81 and its 16 reserved bytes
 *           bth op=N             any opcode; headers as roce_opcode_headers()
 *           udp                  UDP to dport= (default 53), len= bytes
 *           tcp                  TCP (ACK) to dport= (default 80), len= bytes
 *           pfc prio=P[,P] quanta=Q      PFC (Ethernet only)
 *           pause quanta=Q              802.3x PAUSE (Ethernet only)
 *           eth type=T                  another ethertype, len= bytes
 *   IP      ipv6 (default IPv4), src= dst= (a ':' makes it IPv6), ttl=,
 *           dscp=, ecn=not|ect1|ect0|ce|0..3, flow=, id=,
 *           ipopts=N (IPv4 option bytes, multiple of 4),
 *           ext=hop,rt,dst,frag,ah (IPv6 extension headers, in order),
 *           frag=OFF (bytes, multiple of 8), mf
 *   link    vlan=ID[,ID] pcp=P tpid=T[,T] (up to 3 tags), smac=, dmac=,
 *           sll_type=N, ifindex=N
 *   UDP     sport= (49152), dport= (4791 for RoCE)
 *   RoCE v1 v1: Ethernet type 0x8915, a GRH and the BTH (no IP, no UDP);
 *           src= and dst= are the GIDs (default fe80::1 and fe80::2)
 *   IB      ib: native InfiniBand (link erf only: an ERF InfiniBand record),
 *           an LRH (slid= dlid= sl= vl=, LNH 2) and the BTH; grh: a GRH
 *           between them (LNH 3; src= dst= the GIDs); a VCRC after the
 *           ICRC.  PktLen counts whole 4-byte words
 *   ERF     (link erf) erfext=N extension headers, erfpad=N bytes of
 *           record padding after the frame, erftype=T another record type
 *   BTH     qpn= psn= pkey= (0xffff) se m ackreq fecn becn tver= pad=
 *   headers eecnxt= qkey= sqpn= xrcsrq= feth= va= rkey= dmalen= swap=
 *           cmp= syndrome= nak=seq|inv|access|op|rd|N rnr=CODE
 *           credits=CODE msn= orig= imm=
 *   payload len=N (bytes, default 0)
 *   capture cut=N (captured length), wirelen=N (the wire length recorded),
 *           iplen=N udplen=N (lengths written in the headers), count=N
 *           (N packets, the PSN one more each, wrapping at 2^24),
 *           time=SEC[.FRAC]
 * Numbers are decimal or 0x hex.  Ethernet frames are padded to 60 bytes.
 * The ICRC is written as zeroes.
 */
#ifndef FS_PKTGEN_H
#define FS_PKTGEN_H

#include <stddef.h>
#include <stdint.h>

#define PKTGEN_MAX 2048		/* the largest packet built */
#define PKTGEN_MAX_EXT 12	/* IPv6 extension headers at most */

enum pktgen_kind {
	PKTGEN_ROCE,
	PKTGEN_UDP,
	PKTGEN_PFC,
	PKTGEN_PAUSE,
	PKTGEN_ETHER,
	PKTGEN_TCP,
};

enum pktgen_ext { PKTGEN_HOP, PKTGEN_RT, PKTGEN_DST, PKTGEN_FRAG, PKTGEN_AH };

struct pktgen {
	int linktype;		/* DLT_ */
	enum pktgen_kind kind;
	/* link */
	uint8_t smac[6], dmac[6];
	int tags;
	uint16_t vlan[3], tpid[3];
	uint8_t pcp;
	uint16_t ethertype;	/* PKTGEN_ETHER */
	int sll_type;
	uint32_t ifindex;
	/* IP */
	int ipv6;
	uint8_t src[16], dst[16];
	uint8_t ttl, dscp, ecn;
	uint32_t flow;
	uint16_t id;
	unsigned ipopts;
	int next_ext;
	enum pktgen_ext ext[PKTGEN_MAX_EXT];
	uint32_t frag;
	int mf;
	long iplen, udplen;	/* -1: the true length */
	/* UDP */
	uint16_t sport, dport;
	/* RoCE v1, InfiniBand, ERF */
	int v1, ib, grh;
	uint16_t slid, dlid;
	uint8_t sl, vl;
	unsigned erfext, erfpad;
	int erftype;		/* -1: by the packet */
	/* BTH and after */
	uint8_t opcode;
	int se, m, ackreq, fecn, becn;
	uint8_t tver, pad;
	uint16_t pkey;
	uint32_t qpn, psn;
	uint32_t eecnxt, qkey, sqpn, xrcsrq, feth, rkey, dmalen, msn, imm;
	uint64_t va, swap, cmp, orig;
	uint8_t syndrome;
	/* MAC control */
	uint8_t prio_enable;
	uint16_t quanta;
	/* payload and capture */
	size_t len;
	long cut, wirelen;	/* -1: all of it; the built length */
	unsigned long count;
	long long sec, usec;
};

/* The defaults: an RC SEND_ONLY from 10.0.0.1:49152 to 10.0.0.2:4791 on Ethernet */
void pktgen_init(struct pktgen *g, int linktype);

/* One word of a spec applied to g: 0, or -FS_EXIT_USAGE with a message printed */
int pktgen_word(struct pktgen *g, const char *word);
/* A whole spec (the kind first): 0 or -FS_EXIT_USAGE */
int pktgen_parse(struct pktgen *g, const char *spec);

/*
 * The packet into buf (PKTGEN_MAX bytes): returns its length on the wire,
 * or 0 when it does not fit; *caplen the bytes to record (cut=) and
 * *wirelen the wire length to record (wirelen=, else the length).
 */
size_t pktgen_build(const struct pktgen *g, uint8_t *buf, size_t *caplen, size_t *wirelen);

#endif
