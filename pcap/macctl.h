/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * IEEE 802.3 MAC control frames: PFC (802.1Qbb) and PAUSE (802.3x).
 *
 *   0      6      12         12+4k    +2       +4       +6 ... +20
 *   +------+------+-----------+--------+--------+--------+----------+
 *   | dst  | src  | k<=2 tags | 0x8808 | opcode | ...    |          |
 *   +------+------+-----------+--------+--------+--------+----------+
 *     PFC   (opcode 0x0101, 802.1Qbb clause 36 / 802.3 annex 31D):
 *           class-enable vector (2 bytes: high byte reserved, must be 0;
 *           bit p of the low byte enables priority p), then time[0..7],
 *           2 bytes each
 *     PAUSE (opcode 0x0001, 802.3 annex 31B): pause_time (2 bytes)
 *
 * A tag is 4 bytes: a TPID (0x8100 802.1Q, 0x88a8 802.1ad, 0x9100 the
 * older QinQ) and a TCI (PCP:3 DEI:1 VID:12).  Up to two tags are
 * skipped; the outer tag's VLAN id and PCP are kept.  Times are in pause
 * quanta of 512 bit times (macctl_quanta_seconds()); 0 (XON) ends a pause.
 * Every multi-byte field is big-endian.  MAC control frames go to
 * 01:80:c2:00:00:01; another destination is flagged, not refused (802.3x
 * allows the peer's unicast address for PAUSE; a mirror may rewrite it).
 *
 * Reads are bounds-checked against caplen and never go past it.  A frame
 * whose captured bytes stop inside a field the result needs is
 * MACCTL_TRUNCATED: `needed` says how many bytes would have been enough and
 * `at` names the part cut, every other field of the result is cleared.  A
 * frame that is not MAC control needs no more than its Ethernet header and
 * tags.  wirelen (the frame's length on the wire, as pcap gives it) is only
 * judged: a frame shorter than the 60-byte minimum is flagged.
 */
#ifndef FS_MACCTL_H
#define FS_MACCTL_H

#include <stddef.h>
#include <stdint.h>

#define MACCTL_ETHERTYPE 0x8808
#define MACCTL_OP_PAUSE 0x0001
#define MACCTL_OP_PFC 0x0101
#define MACCTL_PRIOS 8
#define MACCTL_MAX_TAGS 2
#define MACCTL_QUANTUM_BITS 512
#define MACCTL_MIN_FRAME 60	/* the 64-byte minimum without its FCS */

/* bytes of each part */
#define MACCTL_ETH_LEN 14
#define MACCTL_TAG_LEN 4
#define MACCTL_OPCODE_LEN 2
#define MACCTL_PFC_LEN 18	/* class-enable vector and eight times */
#define MACCTL_PAUSE_LEN 2

enum macctl_kind {
	MACCTL_NOT,		/* not a MAC control frame (another ethertype) */
	MACCTL_PFC,
	MACCTL_PAUSE,
	MACCTL_OTHER,		/* MAC control with another opcode */
	MACCTL_TRUNCATED,	/* the capture stops inside a needed field */
};

enum macctl_flag {
	MACCTL_F_DST = 1 << 0,		/* MAC control not sent to 01:80:c2:00:00:01 */
	MACCTL_F_RESERVED = 1 << 1,	/* PFC: the class-enable vector's high byte is not 0 */
	MACCTL_F_TAGS = 1 << 2,		/* more than MACCTL_MAX_TAGS tags: not looked into */
	MACCTL_F_SHORT = 1 << 3,	/* wirelen below MACCTL_MIN_FRAME */
};

struct macctl {
	enum macctl_kind kind;
	size_t needed;		/* TRUNCATED: the bytes that would have been enough */
	const char *at;		/* TRUNCATED: the part cut ("ethernet", "vlan", "opcode",
				 * "pfc", "pause"); NULL otherwise */
	uint8_t dst[6], src[6];
	uint16_t ethertype;	/* after the tags */
	int tags;		/* VLAN tags skipped */
	int vlan;		/* outer tag's VLAN id; -1 untagged */
	int pcp;		/* outer (first) tag's priority code point; -1 untagged */
	uint16_t opcode;	/* PFC, PAUSE, OTHER */
	uint8_t enable;		/* PFC: bit p = priority p's time is valid */
	uint8_t reserved;	/* PFC: the vector's high byte (MACCTL_F_RESERVED) */
	uint16_t quanta[MACCTL_PRIOS];	/* PFC: time[0..7]; PAUSE: quanta[0] alone */
	unsigned flags;		/* enum macctl_flag */
};

/*
 * Dissect the caplen bytes at p of a frame wirelen bytes long on the wire
 * into *m.  Returns m->kind.  p may be NULL when caplen is 0.
 */
enum macctl_kind macctl_parse(const uint8_t *p, size_t caplen, size_t wirelen,
			      struct macctl *m);

/* "not-mac-control", "pfc", "pause", "other", "truncated" */
const char *macctl_kind_name(enum macctl_kind k);

/* The opcode's name in 802.3 annex 31A ("PFC", "PAUSE", "GATE", ...); NULL unknown. */
const char *macctl_opcode_name(unsigned opcode);

/* Flags as "dst,reserved"; "none" without flags.  Returns buf. */
const char *macctl_flags_str(unsigned flags, char *buf, size_t len);

/*
 * The time quanta pause quanta last at link_gbps: quanta x 512 bit times.
 * NAN when the speed is unknown (0, negative or NAN).
 */
double macctl_quanta_seconds(unsigned quanta, double link_gbps);

#endif
