/* SPDX-License-Identifier: BSD-2-Clause */
/* RoCEv2 packets dissected: see dissect.h (opcodes and AETH in roce.c). */
#include <pcap/dlt.h>
#include <stdio.h>
#include <string.h>

#include "dissect.h"
#include "get.h"
#include "tok.h"

/* ---- names ---- */

int pkt_linktype_known(int linktype)
{
	return pkt_linktype_name(linktype) != NULL;
}

const char *pkt_linktype_name(int linktype)
{
	switch (linktype) {
	case DLT_EN10MB: return "EN10MB";
	case DLT_LINUX_SLL: return "LINUX_SLL";
	case DLT_LINUX_SLL2: return "LINUX_SLL2";
	case DLT_RAW: return "RAW";
	case PKT_LINKTYPE_RAW: return "RAW";
	case DLT_IPV4: return "IPV4";
	case DLT_IPV6: return "IPV6";
	case PKT_LINKTYPE_ERF: return "ERF";
	}
	return NULL;
}

const char *pkt_layer_name(enum pkt_layer l)
{
	static const char *const names[PKT_L_MAX] = {
		[PKT_L_NONE] = "none",
		[PKT_L_ERF] = "erf",
		[PKT_L_ETH] = "ethernet",
		[PKT_L_SLL] = "sll",
		[PKT_L_SLL2] = "sll2",
		[PKT_L_VLAN] = "vlan",
		[PKT_L_MACCTL] = "macctl",
		[PKT_L_LRH] = "lrh",
		[PKT_L_GRH] = "grh",
		[PKT_L_IPV4] = "ipv4",
		[PKT_L_IPV6] = "ipv6",
		[PKT_L_IPV6_EXT] = "ipv6-ext",
		[PKT_L_UDP] = "udp",
		[PKT_L_BTH] = "bth",
		[PKT_L_RDETH] = "rdeth",
		[PKT_L_DETH] = "deth",
		[PKT_L_XRCETH] = "xrceth",
		[PKT_L_FETH] = "feth",
		[PKT_L_RETH] = "reth",
		[PKT_L_ATOMICETH] = "atomiceth",
		[PKT_L_AETH] = "aeth",
		[PKT_L_ATOMICACKETH] = "atomicacketh",
		[PKT_L_IMMDT] = "immdt",
		[PKT_L_IETH] = "ieth",
		[PKT_L_CNP] = "cnp",
	};

	return (unsigned)l < PKT_L_MAX ? names[l] : "?";
}

const char *pkt_flags_str(unsigned flags, char *buf, size_t len)
{
	static const struct tok names[] = {
		{ PKT_F_LINKTYPE, "linktype" },
		{ PKT_F_WIRELEN, "wirelen" },
		{ PKT_F_TAGS, "tags" },
		{ PKT_F_IP_VERSION, "ip-version" },
		{ PKT_F_IP_HDR, "ip-hdr" },
		{ PKT_F_IP_LEN, "ip-len" },
		{ PKT_F_FRAG, "frag" },
		{ PKT_F_FRAG_LATER, "frag-later" },
		{ PKT_F_IPV6_EXT, "ipv6-ext" },
		{ PKT_F_UDP_LEN, "udp-len" },
		{ PKT_F_OPCODE, "opcode" },
		{ PKT_F_TVER, "tver" },
		{ PKT_F_ROCE_LEN, "roce-len" },
		{ PKT_F_ERF, "erf" },
		{ PKT_F_LNH, "lnh" },
		{ PKT_F_GRH_NXT, "grh-next" },
		{ PKT_F_IB_LEN, "ib-len" },
		{ PKT_F_ERF_LEN, "erf-len" },
		{ 0, NULL }
	};
	return tok_flags_str(names, flags, buf, len);
}

const char *pkt_ecn_name(unsigned ecn)
{
	static const char *const names[4] = { "Not-ECT", "ECT(1)", "ECT(0)", "CE" };

	return names[ecn & 3];
}

const char *pkt_sll_type_name(int type)
{
	static const struct tok names[] = {
		{ PKT_SLL_HOST, "host" },
		{ PKT_SLL_BROADCAST, "broadcast" },
		{ PKT_SLL_MULTICAST, "multicast" },
		{ PKT_SLL_OTHERHOST, "otherhost" },
		{ PKT_SLL_OUTGOING, "outgoing" },
		{ 0, NULL }
	};

	return type < 0 ? NULL : tok_find(names, (unsigned)type);
}

int pkt_ackreq(const struct pkt *k)
{
	return pkt_has(k, PKT_L_BTH) && k->roce.bth.ackreq;
}

/* ---- the dissector ---- */

struct dctx {
	struct get_cursor c;
	struct pkt *k;
	const uint8_t *p;
	size_t wire_end;	/* the packet's end on the wire (at least the cursor's len) */
	size_t base;		/* where the link layer starts (after an ERF header) */
	size_t tend;		/* the transport's end: UDP's, the GRH's or the LRH's */
	uint16_t roce_port;	/* another RoCEv2 port; 0 none */
};

/* n more bytes for layer l: 0, or -1 with the packet marked truncated there */
static int need(struct dctx *d, size_t n, enum pkt_layer l)
{
	if (get_has(&d->c, n))
		return 0;
	d->k->truncated = 1;
	d->k->cut = l;
	d->k->needed = d->c.off + n;
	return -1;
}

static void layer_done(struct dctx *d, enum pkt_layer l)
{
	d->k->layers |= PKT_BIT(l);
}

static int is_tpid(unsigned type)
{
	return type == 0x8100 || type == 0x88a8 || type == 0x9100;
}

/*
 * VLAN tags from the cursor on while type is a TPID: TCI (PCP:3 DEI:1
 * VID:12) and the next type, 4 bytes each; at most PKT_MAX_TAGS of them.
 */
static int dissect_tags(struct dctx *d, uint16_t type)
{
	struct pkt_link *l = &d->k->link;

	while (is_tpid(type)) {
		uint16_t tci;

		if (l->tags == PKT_MAX_TAGS) {
			d->k->flags |= PKT_F_TAGS;
			break;
		}
		if (need(d, PKT_TAG_LEN, PKT_L_VLAN))
			return -1;
		tci = get_be16(&d->c);
		if (!l->tags) {
			l->pcp = tci >> 13;
			l->vlan = tci & 0x0fff;
		}
		l->tags++;
		type = get_be16(&d->c);
		layer_done(d, PKT_L_VLAN);
	}
	l->type = type;
	l->end = d->c.off;
	return 0;
}

/*
 * MAC control frames: macctl_parse() walks the Ethernet header and tags
 * again (with the same rules) and the opcode and body.
 */
static int dissect_macctl(struct dctx *d)
{
	struct pkt *k = d->k;
	size_t body = k->link.end + MACCTL_OPCODE_LEN;

	/* (from the frame's start: after an ERF header, the wire length is the record's) */
	macctl_parse(d->p + d->base, d->c.len - d->base, d->base ? d->wire_end - d->base : k->wirelen, &k->mac);
	switch (k->mac.kind) {
	case MACCTL_TRUNCATED:
		k->truncated = 1;
		k->cut = PKT_L_MACCTL;
		k->needed = d->base + k->mac.needed;
		return -1;
	case MACCTL_PFC:
		body += MACCTL_PFC_LEN;
		break;
	case MACCTL_PAUSE:
		body += MACCTL_PAUSE_LEN;
		break;
	case MACCTL_OTHER:
		break;
	case MACCTL_NOT:	/* not for 0x8808 after the same tags */
		d->c.bad = 1;
		return -1;
	}
	layer_done(d, PKT_L_MACCTL);
	d->c.off = body;
	return -1;
}

static int dissect_eth(struct dctx *d)
{
	struct pkt_link *l = &d->k->link;

	if (need(d, PKT_ETH_LEN, PKT_L_ETH))
		return -1;
	hdr_bytes(&d->c, l->dst, 6);
	hdr_bytes(&d->c, l->src, 6);
	layer_done(d, PKT_L_ETH);
	if (dissect_tags(d, hdr_be16(&d->c)))
		return -1;
	if (l->type == MACCTL_ETHERTYPE && !(d->k->flags & PKT_F_TAGS))
		return dissect_macctl(d);
	return 0;
}

/* the cooked address: kept as the source MAC when it is one */
static void sll_addr(struct dctx *d, uint16_t alen)
{
	uint8_t addr[8];

	get_bytes(&d->c, addr, sizeof(addr));
	d->k->link.sll_addrlen = alen;
	if (alen == 6)
		memcpy(d->k->link.src, addr, 6);
}

static int dissect_sll(struct dctx *d)
{
	struct pkt_link *l = &d->k->link;
	uint16_t alen;

	if (need(d, PKT_SLL_LEN, PKT_L_SLL))
		return -1;
	l->sll_type = get_be16(&d->c);
	l->sll_hatype = get_be16(&d->c);
	alen = get_be16(&d->c);
	sll_addr(d, alen);
	layer_done(d, PKT_L_SLL);
	return dissect_tags(d, get_be16(&d->c));
}

static int dissect_sll2(struct dctx *d)
{
	struct pkt_link *l = &d->k->link;
	uint16_t proto;

	if (need(d, PKT_SLL2_LEN, PKT_L_SLL2))
		return -1;
	proto = get_be16(&d->c);
	get_skip(&d->c, 2);	/* reserved */
	l->sll_ifindex = get_be32(&d->c);
	l->sll_hatype = get_be16(&d->c);
	l->sll_type = get_u8(&d->c);
	sll_addr(d, get_u8(&d->c));
	layer_done(d, PKT_L_SLL2);
	return dissect_tags(d, proto);
}

/* the datagram's end from a length the header gives, judged against the wire */
static size_t ip_end(struct dctx *d, size_t off, size_t len)
{
	if (!len || off + len > d->wire_end) {
		d->k->flags |= PKT_F_IP_LEN;
		return d->wire_end;
	}
	return off + len;
}

static void ip_tos(struct pkt_ip *ip, uint8_t tos)
{
	ip->tos = tos;
	ip->dscp = tos >> 2;
	ip->ecn = tos & 3;
}

/*
 * IPv4 (RFC 791):
 *   0        1      2..3     4..5  6..7          8    9      10..11  12..15 16..19
 *   +--------+------+--------+-----+-------------+----+------+-------+------+------+
 *   |Ver|IHL | TOS  | total  | id  |R|DF|MF|frag | TTL| proto| csum  | src  | dst  | options
 *   +--------+------+--------+-----+-------------+----+------+-------+------+------+
 */
static int dissect_ipv4(struct dctx *d)
{
	struct pkt_ip *ip = &d->k->ip;
	size_t off = d->c.off, hlen;
	uint8_t vihl, tos;
	uint16_t total, frag;

	if (need(d, PKT_IPV4_LEN, PKT_L_IPV4))
		return -1;
	vihl = hdr_u8(&d->c);
	tos = hdr_u8(&d->c);
	total = hdr_be16(&d->c);
	if (vihl >> 4 != 4) {
		d->k->flags |= PKT_F_IP_VERSION;
		d->c.off = off + PKT_IPV4_LEN;
		return -1;
	}
	hlen = (size_t)(vihl & 0x0f) * 4;
	if (hlen < PKT_IPV4_LEN) {
		d->k->flags |= PKT_F_IP_HDR;
		d->c.off = off + PKT_IPV4_LEN;
		return -1;
	}
	ip->id = hdr_be16(&d->c);
	frag = hdr_be16(&d->c);
	ip->ttl = hdr_u8(&d->c);
	ip->proto = hdr_u8(&d->c);
	hdr_skip(&d->c, 2);	/* header checksum, not verified */
	hdr_bytes(&d->c, ip->src, 4);
	hdr_bytes(&d->c, ip->dst, 4);
	if (need(d, hlen - PKT_IPV4_LEN, PKT_L_IPV4))
		return -1;
	hdr_skip(&d->c, hlen - PKT_IPV4_LEN);	/* options */
	layer_done(d, PKT_L_IPV4);
	ip->version = 4;
	ip->off = off;
	ip->hlen = hlen;
	ip->len = total;
	ip_tos(ip, tos);
	ip->frag_off = (uint32_t)(frag & 0x1fff) * 8;
	ip->more_frags = !!(frag & 0x2000);
	if (total && total < hlen) {
		d->k->flags |= PKT_F_IP_HDR;
		ip->end = off + hlen;
		return -1;
	}
	ip->end = ip_end(d, off, total);
	if (ip->frag_off) {
		d->k->flags |= PKT_F_FRAG_LATER;
		return -1;
	}
	if (ip->more_frags)
		d->k->flags |= PKT_F_FRAG;
	return 0;
}

enum {
	IPPROTO_HOPOPTS_ = 0,
	IPPROTO_UDP_ = 17,
	IPPROTO_ROUTING_ = 43,
	IPPROTO_FRAGMENT_ = 44,
	IPPROTO_AH_ = 51,
	IPPROTO_DSTOPTS_ = 60,
};

/*
 * IPv6 extension headers (RFC 8200 4.3-4.6, RFC 4302 for AH): next header
 * 1, then a length: (len + 1) x 8 bytes for hop-by-hop, routing and
 * destination options, (len + 2) x 4 for AH; a fragment header is 8 bytes:
 * next 1, reserved 1, offset:13 res:2 M:1, identification 4.  Every one is
 * at least 8 bytes long.
 */
static int dissect_ipv6_ext(struct dctx *d, uint8_t *next, size_t *end)
{
	struct pkt_ip *ip = &d->k->ip;

	for (;;) {
		uint8_t nh = *next, after, hl;
		size_t elen = 8;

		if (nh != IPPROTO_HOPOPTS_ && nh != IPPROTO_ROUTING_ && nh != IPPROTO_FRAGMENT_ &&
		    nh != IPPROTO_AH_ && nh != IPPROTO_DSTOPTS_)
			return 0;
		if (ip->ext == PKT_MAX_EXT) {
			d->k->flags |= PKT_F_IPV6_EXT;
			return -1;
		}
		if (need(d, 8, PKT_L_IPV6_EXT))
			return -1;
		after = get_u8(&d->c);
		hl = get_u8(&d->c);
		if (nh == IPPROTO_FRAGMENT_) {
			uint16_t w = get_be16(&d->c);

			ip->id = (uint16_t)get_be32(&d->c);
			ip->frag_off = (uint32_t)(w >> 3) * 8;
			ip->more_frags = w & 1;
		} else {
			elen = nh == IPPROTO_AH_ ? ((size_t)hl + 2) * 4 : ((size_t)hl + 1) * 8;
			if (need(d, elen - 2, PKT_L_IPV6_EXT))
				return -1;
			get_skip(&d->c, elen - 2);
		}
		*next = after;
		*end = d->c.off;
		ip->ext++;
		layer_done(d, PKT_L_IPV6_EXT);
		if (ip->frag_off) {
			d->k->flags |= PKT_F_FRAG_LATER;
			return -1;
		}
		if (ip->more_frags)
			d->k->flags |= PKT_F_FRAG;
	}
}

/*
 * IPv6 (RFC 8200):
 *   0..3                         4..5         6     7          8..23  24..39
 *   +----------------------------+------------+-----+----------+------+------+
 *   |Ver:4|traffic class:8|flow:20| payload len| next| hop limit| src  | dst  | extensions
 *   +----------------------------+------------+-----+----------+------+------+
 */
static int dissect_ipv6(struct dctx *d)
{
	struct pkt_ip *ip = &d->k->ip;
	size_t off = d->c.off;
	uint32_t w;
	uint16_t plen;
	uint8_t next;
	size_t end;
	int rc;

	if (need(d, PKT_IPV6_LEN, PKT_L_IPV6))
		return -1;
	w = get_be32(&d->c);
	if (w >> 28 != 6) {
		d->k->flags |= PKT_F_IP_VERSION;
		d->c.off = off + PKT_IPV6_LEN;
		return -1;
	}
	plen = get_be16(&d->c);
	next = get_u8(&d->c);
	ip->ttl = get_u8(&d->c);
	get_bytes(&d->c, ip->src, 16);
	get_bytes(&d->c, ip->dst, 16);
	layer_done(d, PKT_L_IPV6);
	ip->version = 6;
	ip->off = off;
	ip->len = PKT_IPV6_LEN + (size_t)plen;
	ip_tos(ip, (uint8_t)(w >> 20));
	ip->flow = w & 0xfffff;
	ip->end = ip_end(d, off, plen ? ip->len : 0);
	end = d->c.off;
	rc = dissect_ipv6_ext(d, &next, &end);
	/* the next header and the length through the extension headers skipped whole */
	ip->proto = next;
	ip->hlen = end - off;
	return rc;
}

/* UDP (RFC 768): sport 2, dport 2, length 2, checksum 2 */
static int dissect_udp(struct dctx *d)
{
	struct pkt_udp *u = &d->k->udp;
	size_t off = d->c.off, avail;

	if (need(d, PKT_UDP_LEN, PKT_L_UDP))
		return -1;
	u->off = off;
	u->sport = hdr_be16(&d->c);
	u->dport = hdr_be16(&d->c);
	u->len = hdr_be16(&d->c);
	u->csum = hdr_be16(&d->c);
	layer_done(d, PKT_L_UDP);
	avail = d->k->ip.end > off ? d->k->ip.end - off : 0;
	if (u->len < PKT_UDP_LEN || u->len > avail) {
		d->k->flags |= PKT_F_UDP_LEN;
		u->end = off + avail;
	} else {
		if (u->len < avail)
			d->k->flags |= PKT_F_UDP_LEN;
		u->end = off + u->len;
	}
	return 0;
}

/* the BTH (12 bytes, see dissect.h) */
static int dissect_bth(struct dctx *d)
{
	struct roce_bth *b = &d->k->roce.bth;
	uint8_t v;

	if (need(d, ROCE_BTH_LEN, PKT_L_BTH))
		return -1;
	d->k->roce.off = d->c.off;
	b->opcode = hdr_u8(&d->c);
	v = hdr_u8(&d->c);
	b->se = v >> 7;
	b->m = (v >> 6) & 1;
	b->pad = (v >> 4) & 3;
	b->tver = v & 0x0f;
	b->pkey = hdr_be16(&d->c);
	v = hdr_u8(&d->c);
	b->fecn = v >> 7;
	b->becn = (v >> 6) & 1;
	b->dqpn = hdr_be24(&d->c);
	b->ackreq = hdr_u8(&d->c) >> 7;
	b->psn = hdr_be24(&d->c);
	layer_done(d, PKT_L_BTH);
	d->k->roce.end = d->tend;
	if (b->tver)
		d->k->flags |= PKT_F_TVER;
	return 0;
}

static const size_t ext_len[PKT_L_MAX] = {
	[PKT_L_RDETH] = ROCE_RDETH_LEN,
	[PKT_L_DETH] = ROCE_DETH_LEN,
	[PKT_L_XRCETH] = ROCE_XRCETH_LEN,
	[PKT_L_FETH] = ROCE_FETH_LEN,
	[PKT_L_RETH] = ROCE_RETH_LEN,
	[PKT_L_ATOMICETH] = ROCE_ATOMICETH_LEN,
	[PKT_L_AETH] = ROCE_AETH_LEN,
	[PKT_L_ATOMICACKETH] = ROCE_ATOMICACKETH_LEN,
	[PKT_L_IMMDT] = ROCE_IMMDT_LEN,
	[PKT_L_IETH] = ROCE_IETH_LEN,
	[PKT_L_CNP] = ROCE_CNP_LEN,
};

/* one extended transport header, whose bytes are all there */
static void read_ext(struct dctx *d, enum pkt_layer l)
{
	struct pkt_roce *r = &d->k->roce;
	struct get_cursor *c = &d->c;

	switch (l) {
	case PKT_L_RDETH:
		r->eecnxt = hdr_be32(c) & 0xffffff;
		break;
	case PKT_L_DETH:
		r->qkey = hdr_be32(c);
		r->sqpn = hdr_be32(c) & 0xffffff;
		break;
	case PKT_L_XRCETH:
		r->xrcsrq = hdr_be32(c) & 0xffffff;
		break;
	case PKT_L_FETH:
		r->feth = hdr_be32(c);
		break;
	case PKT_L_RETH:
		r->va = hdr_be64(c);
		r->rkey = hdr_be32(c);
		r->dma_len = hdr_be32(c);
		break;
	case PKT_L_ATOMICETH:
		r->va = hdr_be64(c);
		r->rkey = hdr_be32(c);
		r->swap_add = hdr_be64(c);
		r->compare = hdr_be64(c);
		break;
	case PKT_L_AETH:
		r->syndrome = hdr_u8(c);
		r->msn = hdr_be24(c);
		break;
	case PKT_L_ATOMICACKETH:
		r->orig = hdr_be64(c);
		break;
	case PKT_L_IMMDT:
		r->imm = hdr_be32(c);
		break;
	case PKT_L_IETH:
		r->rkey = hdr_be32(c);
		break;
	default:		/* CNP: reserved */
		hdr_skip(c, ext_len[l]);
		break;
	}
}

/*
 * The headers the opcode calls for, in layer order (which is their order
 * in the packet), then where the payload lies: from the headers' end to
 * the UDP datagram's, less the pad and the ICRC.
 */
static int dissect_roce(struct dctx *d)
{
	struct pkt_roce *r = &d->k->roce;
	unsigned hdrs = roce_opcode_headers(r->bth.opcode), m;
	size_t trailer, end = r->end;
	int l;

	if (!roce_opcode_valid(r->bth.opcode))
		d->k->flags |= PKT_F_OPCODE;
	/* the set bits only, lowest (first in the packet) first: most opcodes
	 * have one extension header or none, and this runs for every packet */
	m = hdrs & ((PKT_BIT(PKT_L_CNP) << 1) - PKT_BIT(PKT_L_RDETH));
	for (; m; m &= m - 1) {
		l = __builtin_ctz(m);
		if (need(d, ext_len[l], (enum pkt_layer)l))
			return -1;
		read_ext(d, (enum pkt_layer)l);
		layer_done(d, (enum pkt_layer)l);
	}
	r->hdr_end = r->payload_off = d->c.off;
	trailer = (size_t)r->bth.pad + ROCE_ICRC_LEN;
	if (end < r->hdr_end || end - r->hdr_end < trailer) {
		d->k->flags |= PKT_F_ROCE_LEN;
		return 0;
	}
	r->payload_len = end - r->hdr_end - trailer;
	r->payload_cap = d->c.len - r->hdr_end;
	if (r->payload_cap > r->payload_len)
		r->payload_cap = r->payload_len;
	if (end <= d->c.len) {
		struct get_cursor ic = get_cursor_init(d->p, d->c.len);

		ic.off = end - ROCE_ICRC_LEN;
		r->icrc = get_be32(&ic);
		r->icrc_cap = !ic.bad;
		d->c.bad |= ic.bad;
	}
	return 0;
}

static int is_roce_port(const struct dctx *d, uint16_t port)
{
	return port == ROCE_UDP_PORT || (d->roce_port && port == d->roce_port);
}

/* from the network layer up */
static void dissect_ip(struct dctx *d, int version)
{
	if (version == 4 ? dissect_ipv4(d) : dissect_ipv6(d))
		return;
	if (d->k->ip.proto != IPPROTO_UDP_ || dissect_udp(d))
		return;
	d->tend = d->k->udp.end;
	if (!is_roce_port(d, d->k->udp.dport) || dissect_bth(d))
		return;
	dissect_roce(d);
}

/*
 * The GRH (see dissect.h), then the BTH when its next header says so.
 * lrh: an LRH came first, whose PktLen gave the transport's end; else the
 * GRH's PayLen gives it.
 */
static void dissect_grh(struct dctx *d, int lrh)
{
	struct pkt_ib *ib = &d->k->ib;
	size_t off = d->c.off, end;
	uint32_t w;

	if (need(d, PKT_GRH_LEN, PKT_L_GRH))
		return;
	w = get_be32(&d->c);
	if (w >> 28 != 6) {	/* IPVer: a GRH is an IPv6 header's twin */
		d->k->flags |= PKT_F_IP_VERSION;
		d->c.off = off + PKT_GRH_LEN;	/* (read, as dissect_ipv6 reads its) */
		return;
	}
	ib->tclass = (uint8_t)(w >> 20);
	ib->flow = w & 0xfffff;
	ib->paylen = get_be16(&d->c);
	ib->nxthdr = get_u8(&d->c);
	ib->hoplmt = get_u8(&d->c);
	get_bytes(&d->c, ib->sgid, 16);
	get_bytes(&d->c, ib->dgid, 16);
	ib->grh_off = off;
	layer_done(d, PKT_L_GRH);
	if (!lrh) {
		end = off + PKT_GRH_LEN + (size_t)ib->paylen;
		if (end > d->wire_end || !ib->paylen) {
			d->k->flags |= PKT_F_IB_LEN;
			end = d->wire_end;
		}
		d->tend = end;
	}
	if (ib->nxthdr != PKT_GRH_NXT_IBA) {
		d->k->flags |= PKT_F_GRH_NXT;
		return;
	}
	if (dissect_bth(d))
		return;
	dissect_roce(d);
}

/* The LRH (see dissect.h), then a GRH or the BTH as LNH says */
static void dissect_lrh(struct dctx *d)
{
	struct pkt_ib *ib = &d->k->ib;
	size_t off = d->c.off, end;
	uint8_t v;

	if (need(d, PKT_LRH_LEN, PKT_L_LRH))
		return;
	v = get_u8(&d->c);
	ib->vl = v >> 4;
	ib->lver = v & 0x0f;
	v = get_u8(&d->c);
	ib->sl = v >> 4;
	ib->lnh = v & 3;
	ib->dlid = get_be16(&d->c);
	ib->pktlen = get_be16(&d->c) & 0x07ff;
	ib->slid = get_be16(&d->c);
	ib->lrh_off = off;
	layer_done(d, PKT_L_LRH);
	end = off + (size_t)ib->pktlen * 4;
	if (end > d->wire_end || end < off + PKT_LRH_LEN) {
		d->k->flags |= PKT_F_IB_LEN;
		end = d->wire_end;
	}
	d->tend = end;
	if (ib->lnh == 3) {
		dissect_grh(d, 1);
	} else if (ib->lnh == 2) {
		if (!dissect_bth(d))
			dissect_roce(d);
	} else {
		d->k->flags |= PKT_F_LNH;
	}
}

static int erf_is_eth(unsigned type)
{
	return type == PKT_ERF_TYPE_ETH || type == PKT_ERF_TYPE_COLOR_ETH || type == PKT_ERF_TYPE_DSM_COLOR_ETH ||
	       type == PKT_ERF_TYPE_COLOR_HASH_ETH;
}

/*
 * The ERF record header, its extension headers and an Ethernet record's
 * pad (see dissect.h): 0 with the cursor at the frame, its length cut to
 * the record's and the frame's; -1 to stop.
 */
static int dissect_erf(struct dctx *d)
{
	struct pkt_erf *e = &d->k->erf;
	size_t end;
	uint8_t type;
	int more;

	if (need(d, PKT_ERF_LEN, PKT_L_ERF))
		return -1;
	get_skip(&d->c, 8);	/* the timestamp: the pcap record's is used */
	type = get_u8(&d->c);
	e->flags = get_u8(&d->c);
	e->rlen = get_be16(&d->c);
	get_skip(&d->c, 2);	/* loss counter or color */
	e->wlen = get_be16(&d->c);
	e->type = type & 0x7f;
	for (more = type & 0x80; more; e->ext++) {
		if (e->ext == PKT_MAX_ERF_EXT) {
			d->k->flags |= PKT_F_ERF;
			return -1;
		}
		if (need(d, PKT_ERF_EXT_LEN, PKT_L_ERF))
			return -1;
		more = get_u8(&d->c) & 0x80;
		get_skip(&d->c, PKT_ERF_EXT_LEN - 1);
	}
	if (erf_is_eth(e->type)) {
		if (need(d, PKT_ERF_ETH_PAD, PKT_L_ERF))
			return -1;
		get_skip(&d->c, PKT_ERF_ETH_PAD);	/* offset and pad */
	} else if (e->type != PKT_ERF_TYPE_INFINIBAND && e->type != PKT_ERF_TYPE_IPV4 &&
		   e->type != PKT_ERF_TYPE_IPV6) {
		d->k->flags |= PKT_F_ERF;
		layer_done(d, PKT_L_ERF);
		return -1;
	}
	e->end = d->base = d->c.off;
	layer_done(d, PKT_L_ERF);
	if (e->rlen < e->end)
		d->k->flags |= PKT_F_ERF_LEN;
	else if (e->rlen < d->c.len)
		d->c.len = e->rlen;	/* the record's padding is no part of the frame */
	end = e->end + e->wlen;
	if (end < d->c.len)
		d->c.len = end;
	d->wire_end = end;
	return 0;
}

/* raw IP: the version nibble says which */
static void dissect_raw(struct dctx *d)
{
	uint8_t v;

	if (need(d, 1, PKT_L_IPV4))
		return;
	v = d->p[d->c.off] >> 4;
	if (v == 4 || v == 6) {
		dissect_ip(d, v);
		return;
	}
	d->k->flags |= PKT_F_IP_VERSION;
	d->c.off++;
}

static void pkt_clear(struct pkt *k, int linktype, size_t caplen, size_t wirelen)
{
	memset(k, 0, sizeof(*k));
	k->linktype = linktype;
	k->caplen = k->len = caplen;
	k->wirelen = wirelen;
	k->cut = PKT_L_NONE;
	k->link.vlan = k->link.pcp = k->link.sll_type = -1;
}

int pkt_dissect_opts(const uint8_t *p, size_t caplen, size_t wirelen, int linktype,
		     const struct pkt_opts *opts, struct pkt *out)
{
	struct dctx d = {
		.c = get_cursor_init(p, caplen),
		.k = out,
		.p = p,
		.roce_port = opts ? opts->roce_port : 0,
	};

	pkt_clear(out, linktype, d.c.len, wirelen);
	if (!pkt_linktype_known(linktype)) {
		out->flags |= PKT_F_LINKTYPE;
		return -1;
	}
	d.wire_end = wirelen;
	if (wirelen < d.c.len) {
		out->flags |= PKT_F_WIRELEN;
		d.wire_end = d.c.len;
	}
	switch (linktype) {
	case DLT_EN10MB:
		if (dissect_eth(&d))
			goto done;
		break;
	case DLT_LINUX_SLL:
		if (dissect_sll(&d))
			goto done;
		break;
	case DLT_LINUX_SLL2:
		if (dissect_sll2(&d))
			goto done;
		break;
	case DLT_RAW:
	case PKT_LINKTYPE_RAW:
		dissect_raw(&d);
		goto done;
	case DLT_IPV4:
		dissect_ip(&d, 4);
		goto done;
	case DLT_IPV6:
		dissect_ip(&d, 6);
		goto done;
	case PKT_LINKTYPE_ERF:
		if (dissect_erf(&d))
			goto done;
		if (out->erf.type == PKT_ERF_TYPE_INFINIBAND) {
			dissect_lrh(&d);
			goto done;
		}
		if (out->erf.type == PKT_ERF_TYPE_IPV4 || out->erf.type == PKT_ERF_TYPE_IPV6) {
			dissect_ip(&d, out->erf.type == PKT_ERF_TYPE_IPV4 ? 4 : 6);
			goto done;
		}
		if (dissect_eth(&d))
			goto done;
		break;
	}
	if (out->link.type == 0x0800)
		dissect_ip(&d, 4);
	else if (out->link.type == 0x86dd)
		dissect_ip(&d, 6);
	else if (out->link.type == PKT_ETHERTYPE_ROCE_V1 && !(out->flags & PKT_F_TAGS))
		dissect_grh(&d, 0);
done:
	/* every read above was asked for first: a bad cursor is a bug here */
	if (d.c.bad && !out->truncated) {
		out->truncated = 1;
		out->cut = PKT_L_NONE;
		out->needed = d.c.len + 1;
	}
	if (!out->truncated)
		out->used = d.c.off;
	out->len = d.c.len;
	return 0;
}

int pkt_dissect(const uint8_t *p, size_t caplen, size_t wirelen, int linktype,
		struct pkt *out)
{
	return pkt_dissect_opts(p, caplen, wirelen, linktype, NULL, out);
}

void pkt_brief_of(const struct pkt *k, struct pkt_brief *b)
{
	memset(b, 0, sizeof(*b));
	b->wirelen = pkt_has(k, PKT_L_ERF) ? k->erf.wlen : k->wirelen;	/* the frame's */
	b->layers = k->layers;
	b->flags = k->flags;
	b->truncated = k->truncated;
	b->cut = k->cut;
	b->ip_version = k->ip.version;
	if (k->ip.version) {
		b->addr = k->ip.version == 4 ? PKT_ADDR_IPV4 : PKT_ADDR_IPV6;
		memcpy(b->src, k->ip.src, 16);
		memcpy(b->dst, k->ip.dst, 16);
	} else if (pkt_has(k, PKT_L_GRH)) {
		b->addr = PKT_ADDR_GID;
		memcpy(b->src, k->ib.sgid, 16);
		memcpy(b->dst, k->ib.dgid, 16);
	} else if (pkt_has(k, PKT_L_LRH)) {
		b->addr = PKT_ADDR_LID;
		b->src[0] = (uint8_t)(k->ib.slid >> 8);
		b->src[1] = (uint8_t)k->ib.slid;
		b->dst[0] = (uint8_t)(k->ib.dlid >> 8);
		b->dst[1] = (uint8_t)k->ib.dlid;
	}
	b->ecn = k->ip.ecn;
	b->sport = k->udp.sport;
	b->opcode = k->roce.bth.opcode;
	b->ackreq = k->roce.bth.ackreq;
	b->dqpn = k->roce.bth.dqpn;
	b->psn = k->roce.bth.psn;
	b->payload_len = k->roce.payload_len;
	b->dma_len = k->roce.dma_len;
	b->syndrome = k->roce.syndrome;
	b->mac = pkt_has(k, PKT_L_MACCTL) ? &k->mac : NULL;
}

/*
 * The common packet, each condition one under which pkt_dissect_opts()
 * would set no flag and stop nowhere: see dissect.h.  Offsets are fixed:
 * Ethernet 0, IPv4 14, UDP 34, BTH 42, the extended headers from 54.
 */
int pkt_brief_fast(const uint8_t *p, size_t caplen, size_t wirelen, int linktype,
		   const struct pkt_opts *opts, struct pkt_brief *b)
{
	enum { IP = PKT_ETH_LEN, UDP = IP + PKT_IPV4_LEN, BTH = UDP + PKT_UDP_LEN, EXT = BTH + ROCE_BTH_LEN };
	size_t total, end, off = EXT, trailer;
	unsigned hdrs, m;
	uint16_t dport;
	uint8_t op;

	if (linktype != DLT_EN10MB || caplen < EXT || wirelen < caplen)
		return 0;
	if (be16_at(p + 12) != 0x0800 || p[IP] != 0x45 || (be16_at(p + IP + 6) & 0x3fff) || p[IP + 9] != 17)
		return 0;	/* not IPv4 untagged; options, a fragment, not UDP */
	total = be16_at(p + IP + 2);
	end = IP + total;
	dport = be16_at(p + UDP + 2);
	if (total < PKT_IPV4_LEN + PKT_UDP_LEN || end > wirelen || be16_at(p + UDP + 4) != total - PKT_IPV4_LEN ||
	    !(dport == ROCE_UDP_PORT || (opts && opts->roce_port && dport == opts->roce_port)))
		return 0;
	op = p[BTH];
	if ((p[BTH + 1] & 0x0f) || !roce_opcode_valid(op))
		return 0;	/* TVer, a reserved opcode */
	b->dma_len = 0;
	b->syndrome = 0;
	hdrs = roce_opcode_headers(op) & ((PKT_BIT(PKT_L_CNP) << 1) - PKT_BIT(PKT_L_RDETH));
	for (m = hdrs; m; m &= m - 1) {
		int l = __builtin_ctz(m);

		if (ext_len[l] > caplen - off)
			return 0;	/* cut: the dissector says where */
		if (l == PKT_L_RETH)
			b->dma_len = be32_at(p + off + 12);
		else if (l == PKT_L_AETH)
			b->syndrome = p[off];
		off += ext_len[l];
	}
	trailer = (size_t)((p[BTH + 1] >> 4) & 3) + ROCE_ICRC_LEN;
	if (end < off || end - off < trailer)
		return 0;	/* the headers longer than the datagram */
	b->wirelen = wirelen;
	b->layers = PKT_BIT(PKT_L_ETH) | PKT_BIT(PKT_L_IPV4) | PKT_BIT(PKT_L_UDP) | PKT_BIT(PKT_L_BTH) | hdrs;
	b->flags = 0;
	b->truncated = 0;
	b->cut = PKT_L_NONE;
	b->ip_version = 4;
	b->addr = PKT_ADDR_IPV4;
	memset(b->src, 0, sizeof(b->src));	/* (not the whole struct: that costs more than the rest) */
	memset(b->dst, 0, sizeof(b->dst));
	memcpy(b->src, p + IP + 12, 4);
	memcpy(b->dst, p + IP + 16, 4);
	b->ecn = p[IP + 1] & 3;
	b->sport = be16_at(p + UDP);
	b->opcode = op;
	b->ackreq = p[BTH + 8] >> 7;
	b->dqpn = be24_at(p + BTH + 5);
	b->psn = be24_at(p + BTH + 9);
	b->payload_len = end - off - trailer;
	b->mac = NULL;
	return 1;
}
