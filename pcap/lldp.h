/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * IEEE 802.1AB LLDP: who is at the other end of a cable, as the switch says.
 *
 *   0      6      12         12+4k    +2
 *   +------+------+-----------+--------+--------------------------------+
 *   | dst  | src  | k<=2 tags | 0x88cc | TLV TLV ... TLV(end)           |
 *   +------+------+-----------+--------+--------------------------------+
 *   TLV: type (7 bits) and length (9 bits) in 2 bytes, then length bytes
 *     1 chassis ID   subtype (1 byte), then 1..255 bytes: 4 a MAC, 5 a
 *                    network address (IANA family 1 IPv4, 2 IPv6), 7 local
 *                    text, 1-3, 6 other text
 *     2 port ID      subtype, then 1..255 bytes: 3 a MAC, 4 a network
 *                    address, 5 an interface name, 7 local text, ...
 *     3 TTL          2 bytes, seconds
 *     4 port description, 5 system name, 6 system description: text
 *     7 system capabilities (4 bytes), 8 management address
 *     127 organizationally specific: OUI (3), subtype (1), info; IEEE 802.3
 *         (00-12-0f) subtype 4 is the maximum frame size (2 bytes)
 *     0 end of LLDPDU (length 0)
 *   The first three TLVs must be chassis ID, port ID and TTL, in that order
 *   (802.1AB-2016 8.2); each of them and of 4-8 at most once.
 *
 * Reads are bounds-checked against caplen (pcap/get.h).  Strings are kept
 * printable: bytes that are not printable ASCII are written \xNN, so a
 * name from the wire is safe in a terminal, a report and JSON.  A frame
 * cut inside its LLDPDU is LLDP_TRUNCATED with what was read before the
 * cut; one that breaks the rules above is LLDP_BAD with the reason.
 */
#ifndef FS_PCAP_LLDP_H
#define FS_PCAP_LLDP_H

#include <stddef.h>
#include <stdint.h>

#define LLDP_ETHERTYPE 0x88cc
#define LLDP_TEXT_MAX (4 * 255 + 1)	/* 255 bytes, each \xNN at worst */

enum lldp_kind {
	LLDP_NOT,		/* not an LLDP frame (another ethertype, or not Ethernet) */
	LLDP_OK,
	LLDP_BAD,		/* LLDP that breaks a rule: why says which */
	LLDP_TRUNCATED,		/* the capture stops inside the LLDPDU */
};

struct lldp {
	enum lldp_kind kind;
	const char *why;		/* LLDP_BAD, LLDP_TRUNCATED: what; else NULL */
	uint8_t src[6];			/* the sender's MAC */
	int chassis_subtype, port_subtype;	/* -1: absent */
	char chassis[LLDP_TEXT_MAX];	/* "02:00:00:00:00:0b", "10.0.0.1", or the text */
	char port[LLDP_TEXT_MAX];
	int ttl;			/* seconds; -1 absent */
	char port_desc[LLDP_TEXT_MAX];	/* "" when absent */
	char sys_name[LLDP_TEXT_MAX];
	char sys_desc[LLDP_TEXT_MAX];
	char mgmt[48];			/* the first management address (IPv4/IPv6/MAC), "" */
	int max_frame;			/* IEEE 802.3 maximum frame size; -1 absent */
	int tlvs;			/* TLVs read, the end one too */
};

/* Dissect the caplen bytes of an Ethernet frame into *out (always filled). */
enum lldp_kind lldp_parse(const uint8_t *frame, size_t caplen, struct lldp *out);
const char *lldp_kind_name(enum lldp_kind k);

#endif
