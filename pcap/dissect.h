/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * RoCEv2 packets dissected from captured bytes, every layer into one flat
 * struct pkt (no allocation): the link layer, IPv4/IPv6, UDP and, on UDP
 * port 4791, the InfiniBand transport headers; MAC control frames (PFC,
 * PAUSE) through macctl_parse() in the same call.
 *
 * Link types (libpcap's DLT_ values, pcap/dlt.h):
 *   DLT_EN10MB      Ethernet II, up to two tags (802.1Q 0x8100, 802.1ad
 *                   0x88a8, 0x9100), as in macctl.h
 *   DLT_LINUX_SLL   cooked v1: packet type 2, ARPHRD 2, address length 2,
 *                   address 8, protocol 2 (16 bytes)
 *   DLT_LINUX_SLL2  cooked v2: protocol 2, reserved 2, ifindex 4, ARPHRD 2,
 *                   packet type 1, address length 1, address 8 (20 bytes)
 *   DLT_RAW, LINKTYPE_RAW (101)  IPv4 or IPv6 by the version nibble
 *   DLT_IPV4, DLT_IPV6           IP of that version
 *   DLT_ERF (197)   Endace ERF records, as NIC sniffers (ibdump) and capture
 *                   cards write them: a 16-byte header - timestamp 8 (little
 *                   endian), type 1 (bit 7: extension headers follow), flags
 *                   1, rlen 2 (the record's length, header included), lctr 2,
 *                   wlen 2 (the frame's length on the wire), all big endian
 *                   but the timestamp - then 8 bytes per extension header
 *                   while bit 7 of the first byte of the one before is set
 *                   (at most PKT_MAX_ERF_EXT), then by the type: Ethernet (2,
 *                   and the colored 11, 16, 20) 2 bytes of offset and pad and
 *                   the frame; InfiniBand (21) the LRH; IPv4 (22) and IPv6
 *                   (23) the datagram.  The frame is read to the record's end
 *                   (rlen) or its wire length (wlen), whichever comes first;
 *                   other types are flagged PKT_F_ERF and not looked into
 * A cooked protocol that is a VLAN TPID is followed by TCI and type, as on
 * Ethernet.
 *
 * RoCE v1 (IBA vol 1 annex A16) is Ethernet type 0x8915 carrying a GRH and
 * the BTH; native InfiniBand is an LRH, a GRH when the LRH says so, and the
 * BTH:
 *
 *   LRH (8)   VL:4 LVer:4 | SL:4 resv:2 LNH:2 | DLID 16 | resv:5 PktLen:11 | SLID 16
 *             LNH 3: a GRH follows, 2: the BTH, 0 and 1: raw (not IBA
 *             transport: PKT_F_LNH); PktLen in 4-byte words from the LRH to
 *             the VCRC (the ICRC in, the VCRC out)
 *   GRH (40)  IPVer:4 TClass:8 FlowLabel:20 | PayLen 16 | NxtHdr 8 | HopLmt 8 |
 *             SGID 16 | DGID 16; NxtHdr 0x1b: the BTH follows (else
 *             PKT_F_GRH_NXT); PayLen: the bytes after the GRH, ICRC included
 * The transport's end - the UDP datagram's for RoCEv2, the GRH payload's
 * for RoCE v1, the LRH packet's on InfiniBand - places the payload and
 * the ICRC; a length beyond the wire (or short of the headers) is flagged
 * PKT_F_IB_LEN and the wire's end used.  Flows of RoCE v1 and routed
 * InfiniBand are keyed by the GIDs, of local InfiniBand by the LIDs.
 *
 * RoCEv2 (IBA vol 1 annex A17) is UDP to port 4791 carrying, in order:
 *
 *   BTH (12)  0       1                 2..3    4          5..7    8        9..11
 *            +-------+-----------------+-------+----------+-------+--------+-----+
 *            |OpCode |SE|M|PadCnt|TVer | P_Key |F|B|resv6 |DestQP |A|resv7 | PSN |
 *            +-------+-----------------+-------+----------+-------+--------+-----+
 *   RDETH (4)        resv8, EE-context 24                 RD
 *   DETH (8)         Q_Key 32, resv8, source QP 24        UD; RD requests
 *   XRCETH (4)       resv8, XRC SRQ 24                    XRC requests
 *   FETH (4)         flush type and level                 FLUSH
 *   RETH (16)        VA 64, R_Key 32, DMA length 32       WRITE first/only, READ
 *                                                         request, FLUSH, ATOMIC WRITE
 *   AtomicETH (28)   VA 64, R_Key 32, swap/add 64, compare 64   CmpSwap, FetchAdd
 *   AETH (4)         syndrome 8, MSN 24                   ACK, atomic ACK, READ
 *                                                         response first/last/only
 *   AtomicAckETH (8) original remote data 64              atomic ACK
 *   ImmDt (4)        immediate data                       ..._WITH_IMMEDIATE
 *   IETH (4)         R_Key to invalidate                  SEND ..._WITH_INVALIDATE
 *   payload, PadCnt pad bytes, ICRC (4)
 *
 * The opcode's top three bits are its transport: RC 0x00, UC 0x20, RD 0x40,
 * UD 0x60, CNP 0x80, XRC 0xa0, 0xc0..0xff manufacturer specific; the low
 * five bits its operation (IBA vol 1 table 38 "OpCode field"; FLUSH 0x1c and
 * ATOMIC WRITE 0x1d from the memory placement extensions of IBA 1.5).  A
 * CNP (opcode 0x81, the RoCEv2 annex) is a BTH, 16 reserved bytes and the ICRC;
 * its DestQP is the QP to slow down.  An opcode reserved for its transport
 * is flagged PKT_F_OPCODE and taken to carry nothing past the BTH.
 *
 * Untrusted bytes: every read is bounds-checked against caplen (pcap/get.h)
 * and never goes past it.  A packet whose captured bytes stop inside a
 * header comes back with the layers before it, `truncated` set, `cut` the
 * layer cut and `needed` the bytes that would have taken the dissection
 * past the point where it stopped (a raw IP packet of no bytes: ipv4,
 * needing the 1 byte of the version nibble).  A packet not truncated says
 * in `used` where its last header read ends: cut there, it dissects the
 * same (but for the payload captured); one byte shorter, it is truncated
 * needing `used` (tests/helper/dissect-check.c holds it to that).  A
 * payload cut by the snaplen is not truncation: the headers are all there,
 * roce.payload_cap says how much of the payload was captured and
 * roce.icrc_cap whether the ICRC was.  Lengths are judged against the wire
 * length: an IP or UDP length that claims more than the packet has on the
 * wire is flagged and the wire's end used instead; lengths only place the
 * payload and the ICRC, reads go by caplen alone.
 */
#ifndef FS_PCAP_DISSECT_H
#define FS_PCAP_DISSECT_H

#include <stddef.h>
#include <stdint.h>

#include "macctl.h"

#define PKT_LINKTYPE_RAW 101	/* LINKTYPE_RAW in files; DLT_RAW is 12 or 14 */
#define PKT_LINKTYPE_ERF 197	/* DLT_ERF */
#define PKT_ERF_TYPE_ETH 2
#define PKT_ERF_TYPE_COLOR_ETH 11
#define PKT_ERF_TYPE_DSM_COLOR_ETH 16
#define PKT_ERF_TYPE_COLOR_HASH_ETH 20
#define PKT_ERF_TYPE_INFINIBAND 21
#define PKT_ERF_TYPE_IPV4 22
#define PKT_ERF_TYPE_IPV6 23
#define ROCE_UDP_PORT 4791
#define ROCE_PSN_MASK 0xffffffu

/* bytes of each part */
#define PKT_ETH_LEN 14
#define PKT_TAG_LEN 4
#define PKT_SLL_LEN 16
#define PKT_SLL2_LEN 20
#define PKT_IPV4_LEN 20
#define PKT_IPV6_LEN 40
#define PKT_UDP_LEN 8
#define PKT_ERF_LEN 16
#define PKT_ERF_EXT_LEN 8
#define PKT_ERF_ETH_PAD 2
#define PKT_LRH_LEN 8
#define PKT_GRH_LEN 40
#define PKT_ETHERTYPE_ROCE_V1 0x8915
#define PKT_GRH_NXT_IBA 0x1b
#define ROCE_BTH_LEN 12
#define ROCE_RDETH_LEN 4
#define ROCE_DETH_LEN 8
#define ROCE_XRCETH_LEN 4
#define ROCE_FETH_LEN 4
#define ROCE_RETH_LEN 16
#define ROCE_ATOMICETH_LEN 28
#define ROCE_AETH_LEN 4
#define ROCE_ATOMICACKETH_LEN 8
#define ROCE_IMMDT_LEN 4
#define ROCE_IETH_LEN 4
#define ROCE_CNP_LEN 16		/* reserved bytes after a CNP's BTH */
#define ROCE_ICRC_LEN 4
#define ROCE_OP_CNP 0x81

/* The layers, in the order they can appear; PKT_BIT(l) is l's bit in pkt.layers. */
enum pkt_layer {
	PKT_L_NONE,
	PKT_L_ERF,		/* the ERF record header, its extension headers and pad */
	PKT_L_ETH,
	PKT_L_SLL,
	PKT_L_SLL2,
	PKT_L_VLAN,		/* one or two tags */
	PKT_L_MACCTL,		/* MAC control: pkt.mac */
	PKT_L_LRH,		/* InfiniBand local route header */
	PKT_L_GRH,		/* global route header (RoCE v1, routed InfiniBand) */
	PKT_L_IPV4,		/* with its options */
	PKT_L_IPV6,		/* the fixed header */
	PKT_L_IPV6_EXT,		/* extension headers */
	PKT_L_UDP,
	PKT_L_BTH,
	PKT_L_RDETH,
	PKT_L_DETH,
	PKT_L_XRCETH,
	PKT_L_FETH,
	PKT_L_RETH,
	PKT_L_ATOMICETH,
	PKT_L_AETH,
	PKT_L_ATOMICACKETH,
	PKT_L_IMMDT,
	PKT_L_IETH,
	PKT_L_CNP,		/* the reserved bytes of a CNP */
	PKT_L_MAX
};
#define PKT_BIT(l) (1u << (l))

enum pkt_flag {
	PKT_F_LINKTYPE = 1 << 0,	/* a link type not known: nothing dissected */
	PKT_F_WIRELEN = 1 << 1,		/* wirelen below caplen: caplen taken for it */
	PKT_F_TAGS = 1 << 2,		/* more than two VLAN tags: not looked into */
	PKT_F_IP_VERSION = 1 << 3,	/* the version nibble is not the one expected */
	PKT_F_IP_HDR = 1 << 4,		/* IPv4 header length below 20 (no IPv4 layer) or
					 * above the total length: not dissected further */
	PKT_F_IP_LEN = 1 << 5,		/* IP length beyond the wire (or 0): the wire's end used */
	PKT_F_FRAG = 1 << 6,		/* an IP fragment, the first: dissected on */
	PKT_F_FRAG_LATER = 1 << 7,	/* a fragment after the first: not dissected further */
	PKT_F_IPV6_EXT = 1 << 8,	/* more than PKT_MAX_EXT IPv6 extension headers:
					 * not dissected further */
	PKT_F_UDP_LEN = 1 << 9,		/* UDP length below 8, beyond the IP payload's or
					 * short of it: the shorter end used */
	PKT_F_OPCODE = 1 << 10,		/* an opcode reserved for its transport */
	PKT_F_TVER = 1 << 11,		/* BTH TVer not 0 */
	PKT_F_ROCE_LEN = 1 << 12,	/* headers, pad and ICRC longer than the UDP payload */
	PKT_F_ERF = 1 << 13,		/* an ERF record type not read (or more than
					 * PKT_MAX_ERF_EXT extension headers) */
	PKT_F_LNH = 1 << 14,		/* LRH LNH raw: no IBA transport */
	PKT_F_GRH_NXT = 1 << 15,	/* GRH next header not the IBA transport (0x1b) */
	PKT_F_IB_LEN = 1 << 16,		/* LRH PktLen or GRH PayLen beyond the wire or short
					 * of the headers: the wire's end used */
	PKT_F_ERF_LEN = 1 << 17,	/* ERF rlen shorter than its headers: not used */
};

#define PKT_MAX_TAGS 2
#define PKT_MAX_EXT 8	/* IPv6 extension headers skipped at most */
#define PKT_MAX_ERF_EXT 8	/* ERF extension headers skipped at most */

/* SLL/SLL2 packet types (the direction seen by the capturing host) */
enum pkt_sll_type {
	PKT_SLL_HOST = 0,	/* to us */
	PKT_SLL_BROADCAST = 1,
	PKT_SLL_MULTICAST = 2,
	PKT_SLL_OTHERHOST = 3,	/* to someone else, seen in promiscuous mode */
	PKT_SLL_OUTGOING = 4,	/* sent by us */
};

struct pkt_link {
	uint8_t dst[6], src[6];	/* Ethernet; cooked: src = the address when 6 bytes long */
	uint16_t type;		/* ethertype (cooked: protocol) after the tags */
	int tags;		/* VLAN tags skipped */
	int vlan, pcp;		/* outer tag's VLAN id and PCP; -1 untagged */
	int sll_type;		/* cooked: enum pkt_sll_type (or another value); -1 */
	uint16_t sll_hatype;	/* cooked: ARPHRD_ type */
	uint32_t sll_ifindex;	/* SLL2: interface index */
	uint16_t sll_addrlen;	/* cooked: the address length as given */
	size_t end;		/* where the link layer ends (the network header starts) */
};

struct pkt_ip {
	int version;		/* 4 or 6; 0 without IP */
	size_t off;		/* where the header starts */
	size_t hlen;		/* IPv4: IHL x 4; IPv6: 40 + extension headers */
	size_t len;		/* IPv4 total length; IPv6 40 + payload length, as given */
	size_t end;		/* the datagram's end as trusted (PKT_F_IP_LEN) */
	uint8_t src[16], dst[16];	/* IPv4 in the first 4 bytes */
	uint8_t tos;		/* IPv4 TOS, IPv6 traffic class */
	uint8_t dscp, ecn;	/* tos >> 2, tos & 3 */
	uint8_t ttl;		/* TTL, hop limit */
	uint8_t proto;		/* IPv4 protocol; IPv6 next header after the extensions */
	uint16_t id;		/* IPv4 identification; IPv6 fragment id's low 16 bits */
	uint32_t flow;		/* IPv6 flow label */
	uint32_t frag_off;	/* fragment offset in bytes */
	int more_frags;		/* MF */
	int ext;		/* IPv6 extension headers skipped */
};

struct pkt_udp {
	size_t off;
	uint16_t sport, dport, len, csum;
	size_t end;		/* the datagram's end as trusted (PKT_F_UDP_LEN) */
};

struct pkt_erf {
	uint8_t type;		/* the record type, bit 7 (extension headers) cleared */
	uint8_t flags;
	uint16_t rlen, wlen;
	int ext;		/* extension headers skipped */
	size_t end;		/* where the record's frame starts */
};

struct pkt_ib {
	size_t lrh_off;		/* PKT_L_LRH */
	uint8_t vl, lver, sl, lnh;
	uint16_t dlid, slid;
	uint16_t pktlen;	/* in 4-byte words */
	size_t grh_off;		/* PKT_L_GRH */
	uint8_t tclass, nxthdr, hoplmt;
	uint32_t flow;		/* 20 bits */
	uint16_t paylen;
	uint8_t sgid[16], dgid[16];
};

struct roce_bth {
	uint8_t opcode;
	uint8_t se, m, pad, tver;
	uint16_t pkey;
	uint8_t fecn, becn, ackreq;
	uint32_t dqpn;		/* 24 bits */
	uint32_t psn;		/* 24 bits */
};

struct pkt_roce {
	size_t off;		/* where the BTH starts */
	size_t end;		/* the transport's end as trusted: UDP, GRH or LRH (see above) */
	struct roce_bth bth;
	uint32_t eecnxt;	/* RDETH */
	uint32_t qkey, sqpn;	/* DETH */
	uint32_t xrcsrq;	/* XRCETH */
	uint32_t feth;		/* FETH, as a whole */
	uint64_t va;		/* RETH or AtomicETH */
	uint32_t rkey;		/* RETH, AtomicETH or IETH */
	uint32_t dma_len;	/* RETH */
	uint64_t swap_add, compare;	/* AtomicETH */
	uint8_t syndrome;	/* AETH */
	uint32_t msn;		/* AETH, 24 bits */
	uint64_t orig;		/* AtomicAckETH: original remote data */
	uint32_t imm;		/* ImmDt */
	size_t hdr_end;		/* the end of the transport headers: payload_off */
	size_t payload_off;
	size_t payload_len;	/* transport's end - headers - pad - ICRC (0 with PKT_F_ROCE_LEN) */
	size_t payload_cap;	/* of it, captured */
	int icrc_cap;		/* the ICRC is within caplen */
	uint32_t icrc;		/* when captured (not verified) */
};

struct pkt {
	int linktype;
	size_t caplen, wirelen;
	size_t len;		/* the bytes dissected: caplen, after an ERF header cut to
				 * the record's rlen and the frame's wlen */
	unsigned layers;	/* PKT_BIT() of each layer dissected whole */
	unsigned flags;		/* enum pkt_flag */
	int truncated;		/* the capture stops inside a header */
	enum pkt_layer cut;	/* truncated: the layer cut; PKT_L_NONE otherwise */
	size_t needed;		/* truncated: the bytes that would have been enough */
	size_t used;		/* not truncated: the end of the last header read */
	struct pkt_erf erf;	/* PKT_L_ERF */
	struct pkt_link link;
	struct macctl mac;	/* PKT_L_MACCTL (on truncation: mac.at names the part) */
	struct pkt_ip ip;
	struct pkt_udp udp;
	struct pkt_ib ib;	/* PKT_L_LRH, PKT_L_GRH */
	struct pkt_roce roce;
};

/* Options of pkt_dissect_opts(); a zeroed struct is the default. */
struct pkt_opts {
	uint16_t roce_port;	/* another UDP destination port carrying RoCEv2 (0: none) */
};

/*
 * Dissect the caplen bytes at p, a packet wirelen bytes long on the wire
 * with link type linktype (DLT_*), into *out.  Returns 0, or -1 for a link
 * type it does not know (out->flags has PKT_F_LINKTYPE, nothing else set).
 * p may be NULL when caplen is 0.
 */
int pkt_dissect(const uint8_t *p, size_t caplen, size_t wirelen, int linktype,
		struct pkt *out);
int pkt_dissect_opts(const uint8_t *p, size_t caplen, size_t wirelen, int linktype,
		     const struct pkt_opts *opts, struct pkt *out);

static inline int pkt_has(const struct pkt *k, enum pkt_layer l)
{
	return !!(k->layers & PKT_BIT(l));
}

/*
 * What the flow table (flow.h) takes of a packet, in one small struct.
 * pkt_brief_of() makes it from a dissected packet; pkt_brief_fast() makes
 * it straight from the bytes of the common packet - Ethernet without tags,
 * IPv4 without options or fragments, UDP to the RoCE port, every length
 * consistent, a defined opcode with its headers all captured - and
 * declines (returns 0) anything else, which is then dissected whole.  For
 * a packet it takes, its brief is the one pkt_brief_of() makes of the
 * dissection (tests/helper/dissect-check.c holds it to that); it exists
 * because a struct pkt is large and the common packet needs little of it.
 */
enum pkt_addr {
	PKT_ADDR_NONE,
	PKT_ADDR_IPV4,
	PKT_ADDR_IPV6,
	PKT_ADDR_GID,		/* a GRH's (RoCE v1, routed InfiniBand): IPv6-shaped */
	PKT_ADDR_LID,		/* an LRH's, without a GRH */
};

struct pkt_brief {
	size_t wirelen;
	unsigned layers, flags;	/* as in struct pkt */
	int truncated;
	enum pkt_layer cut;
	int ip_version;		/* 4, 6; 0 without IP */
	enum pkt_addr addr;	/* what src and dst hold */
	uint8_t src[16], dst[16];	/* IPv4 and LIDs (big endian) in the first 4 or 2
					 * bytes, the rest 0 */
	uint8_t ecn;
	uint16_t sport;
	uint8_t opcode, ackreq;	/* BTH */
	uint32_t dqpn, psn;
	size_t payload_len;
	uint32_t dma_len;	/* RETH */
	uint8_t syndrome;	/* AETH */
	const struct macctl *mac;	/* PKT_L_MACCTL: the struct pkt's; NULL otherwise */
};

void pkt_brief_of(const struct pkt *k, struct pkt_brief *b);
int pkt_brief_fast(const uint8_t *p, size_t caplen, size_t wirelen, int linktype,
		   const struct pkt_opts *opts, struct pkt_brief *b);

/* The link types pkt_dissect() knows: 1, else 0 */
int pkt_linktype_known(int linktype);
/* "EN10MB", "LINUX_SLL", "LINUX_SLL2", "RAW", "IPV4", "IPV6", "ERF"; NULL unknown */
const char *pkt_linktype_name(int linktype);
/* "ethernet", "vlan", "sll", ..., "bth", "reth", ..., "cnp"; "none" */
const char *pkt_layer_name(enum pkt_layer l);
/* Flags as "ip-len,frag"; "none" without flags.  Returns buf. */
const char *pkt_flags_str(unsigned flags, char *buf, size_t len);
/* "Not-ECT", "ECT(1)", "ECT(0)", "CE" for the two ECN bits */
const char *pkt_ecn_name(unsigned ecn);
/* "host", "broadcast", "multicast", "otherhost", "outgoing"; NULL another */
const char *pkt_sll_type_name(int type);
/* the BTH AckReq bit of a RoCE packet (0 without a BTH) */
int pkt_ackreq(const struct pkt *k);

/* ---- opcodes ---- */

enum roce_transport {
	ROCE_RC, ROCE_UC, ROCE_RD, ROCE_UD, ROCE_CNP, ROCE_XRC, ROCE_VENDOR,
};

enum roce_position {
	ROCE_POS_NONE,		/* CNP, a reserved opcode */
	ROCE_POS_FIRST,
	ROCE_POS_MIDDLE,
	ROCE_POS_LAST,
	ROCE_POS_ONLY,
};

/* "RC SEND_FIRST", "UD SEND_ONLY_WITH_IMMEDIATE", "CNP", ...; NULL when reserved */
const char *roce_opcode_name(unsigned op);
/* whether the opcode is defined (not reserved for its transport) */
int roce_opcode_valid(unsigned op);
enum roce_transport roce_transport(unsigned op);
/* "RC", "UC", "RD", "UD", "CNP", "XRC", "vendor" */
const char *roce_transport_name(enum roce_transport t);
/* The headers after the BTH, PKT_BIT()s of PKT_L_RDETH..PKT_L_CNP; 0 when reserved */
unsigned roce_opcode_headers(unsigned op);
/* a request (requester to responder): SEND, WRITE, READ request, atomics, FLUSH, RESYNC */
int roce_is_request(unsigned op);
/* a response: READ responses, acknowledges, atomic acknowledges */
int roce_is_response(unsigned op);
int roce_is_read_response(unsigned op);
/* an acknowledge or atomic acknowledge (AETH without payload) */
int roce_is_ack(unsigned op);
/* the opcode carries payload (SEND, WRITE, READ responses, ATOMIC WRITE) */
int roce_has_payload(unsigned op);
enum roce_position roce_position(unsigned op);
/* "first", "middle", "last", "only", "none" */
const char *roce_position_name(enum roce_position pos);

/* ---- AETH (IBA vol 1 9.3.5, tables 43-45) ---- */

enum roce_aeth_kind {
	ROCE_AETH_ACK = 0,	/* syndrome 000xxxxx: ACK, xxxxx the credit count code */
	ROCE_AETH_RNR = 1,	/* 001xxxxx: RNR NAK, xxxxx the timer code */
	ROCE_AETH_RESERVED = 2,	/* 010xxxxx */
	ROCE_AETH_NAK = 3,	/* 011xxxxx: NAK, xxxxx the NAK code */
};

enum roce_nak {
	ROCE_NAK_PSN_SEQ = 0,	/* PSN sequence error */
	ROCE_NAK_INVALID_REQ = 1,
	ROCE_NAK_REMOTE_ACCESS = 2,
	ROCE_NAK_REMOTE_OP = 3,	/* remote operational error */
	ROCE_NAK_INVALID_RD_REQ = 4,
};

/* A syndrome's kind (bit 7, reserved, is ignored) and its low five bits */
enum roce_aeth_kind roce_aeth_kind(uint8_t syndrome);
unsigned roce_aeth_value(uint8_t syndrome);
/* "ack", "rnr-nak", "reserved", "nak" */
const char *roce_aeth_kind_name(enum roce_aeth_kind k);
/* "psn-seq-error", "invalid-request", "remote-access-error", "remote-op-error",
 * "invalid-rd-request"; NULL for the reserved codes 5..31 */
const char *roce_nak_name(unsigned code);
/* ACK credit count code -> credits (0, 1, 2, 3, 4, 6, 8, 12, ... 32768); -1 for
 * 31, "invalid" (the responder does not do end-to-end credits) */
long roce_ack_credits(unsigned code);
/* RNR NAK timer code -> the minimum RNR NAK timer in ms: 0 -> 655.36, 1 -> 0.01,
 * 2 -> 0.02, ..., 31 -> 491.52 */
double roce_rnr_timer_ms(unsigned code);

#endif
