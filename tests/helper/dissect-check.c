/* SPDX-License-Identifier: BSD-2-Clause */
/* Invariants of pkt_dissect() results: see dissect-check.h. */
#include <pcap/dlt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dissect-check.h"

static const int fuzz_links[DISSECT_FUZZ_LINKS] = {
	DLT_EN10MB, DLT_LINUX_SLL, DLT_LINUX_SLL2, DLT_RAW, PKT_LINKTYPE_RAW,
	DLT_IPV4, DLT_IPV6, PKT_LINKTYPE_ERF, 147 /* DLT_USER0: not known */
};

int dissect_fuzz_linktype(unsigned selector)
{
	return fuzz_links[selector % DISSECT_FUZZ_LINKS];
}

unsigned dissect_fuzz_selector_byte(unsigned selector)
{
	return (selector & 7) | (selector >> 3 & 1) << 5;
}

unsigned dissect_fuzz_byte_selector(unsigned byte)
{
	return (byte & 7) | (byte >> 5 & 1) << 3;
}

unsigned dissect_fuzz_selector(int linktype)
{
	unsigned i;

	for (i = 0; i < DISSECT_FUZZ_LINKS; i++)
		if (fuzz_links[i] == linktype)
			return i;
	return 0;
}

static char msg[512];

#define FAIL(...) do { \
	snprintf(msg, sizeof(msg), __VA_ARGS__); \
	return msg; \
} while (0)

#define B(l) PKT_BIT(PKT_L_##l)
#define LINK_BITS (B(ETH) | B(SLL) | B(SLL2))
#define IB_BITS (B(LRH) | B(GRH))
#define EXT_BITS (B(RDETH) | B(DETH) | B(XRCETH) | B(FETH) | B(RETH) | B(ATOMICETH) | \
		  B(AETH) | B(ATOMICACKETH) | B(IMMDT) | B(IETH) | B(CNP))

static size_t ext_len(int l)
{
	switch (l) {
	case PKT_L_RDETH: return ROCE_RDETH_LEN;
	case PKT_L_DETH: return ROCE_DETH_LEN;
	case PKT_L_XRCETH: return ROCE_XRCETH_LEN;
	case PKT_L_FETH: return ROCE_FETH_LEN;
	case PKT_L_RETH: return ROCE_RETH_LEN;
	case PKT_L_ATOMICETH: return ROCE_ATOMICETH_LEN;
	case PKT_L_AETH: return ROCE_AETH_LEN;
	case PKT_L_ATOMICACKETH: return ROCE_ATOMICACKETH_LEN;
	case PKT_L_IMMDT: return ROCE_IMMDT_LEN;
	case PKT_L_IETH: return ROCE_IETH_LEN;
	case PKT_L_CNP: return ROCE_CNP_LEN;
	}
	return 0;
}

static int erf_eth(unsigned type)
{
	return type == PKT_ERF_TYPE_ETH || type == PKT_ERF_TYPE_COLOR_ETH || type == PKT_ERF_TYPE_DSM_COLOR_ETH ||
	       type == PKT_ERF_TYPE_COLOR_HASH_ETH;
}

/* raw IP: IP at the start (or after an ERF header of an IP record) */
static int is_raw(int linktype, const struct pkt *k)
{
	if (linktype == PKT_LINKTYPE_ERF)
		return k->erf.type == PKT_ERF_TYPE_IPV4 || k->erf.type == PKT_ERF_TYPE_IPV6;
	return linktype == DLT_RAW || linktype == PKT_LINKTYPE_RAW || linktype == DLT_IPV4 ||
	       linktype == DLT_IPV6;
}

/* where the frame ends on the wire */
static size_t frame_wire_end(const struct pkt *k)
{
	if (k->layers & B(ERF))
		return k->erf.end + k->erf.wlen;
	return k->wirelen < k->caplen ? k->caplen : k->wirelen;
}

static const char *check_erf(int linktype, const struct pkt *k)
{
	const struct pkt_erf *e = &k->erf;
	unsigned L = k->layers;

	if (linktype != PKT_LINKTYPE_ERF) {
		static const struct pkt_erf zero;

		if ((L & B(ERF)) || memcmp(e, &zero, sizeof(zero)) || (k->flags & (PKT_F_ERF | PKT_F_ERF_LEN)) ||
		    k->len != k->caplen)
			FAIL("ERF on link type %d", linktype);
		return NULL;
	}
	if (k->len > k->caplen)
		FAIL("ERF: %zu bytes dissected of %zu", k->len, k->caplen);
	if (!(L & B(ERF))) {
		if (L)
			FAIL("layers 0x%x without the ERF header", L);
		if (!k->truncated && !(k->flags & PKT_F_ERF))
			FAIL("no ERF header, yet neither truncated nor flagged");
		return NULL;
	}
	if (e->type > 127 || e->ext > PKT_MAX_ERF_EXT)
		FAIL("ERF type %u with %d extension headers", e->type, e->ext);
	if ((k->flags & PKT_F_ERF) && !(erf_eth(e->type) || e->type == PKT_ERF_TYPE_INFINIBAND ||
					 e->type == PKT_ERF_TYPE_IPV4 || e->type == PKT_ERF_TYPE_IPV6)) {
		if (L != B(ERF))
			FAIL("layers 0x%x above an ERF record of type %u", L, e->type);
		return NULL;
	}
	if (k->flags & PKT_F_ERF)
		FAIL("flag erf on ERF type %u", e->type);
	if (e->end != PKT_ERF_LEN + (size_t)e->ext * PKT_ERF_EXT_LEN + (erf_eth(e->type) ? PKT_ERF_ETH_PAD : 0))
		FAIL("ERF frame at %zu after %d extension headers", e->end, e->ext);
	if (!!(k->flags & PKT_F_ERF_LEN) != (e->rlen < e->end))
		FAIL("flag erf-len disagrees: rlen %u, frame at %zu", e->rlen, e->end);
	if (k->len > e->end + e->wlen || (e->rlen >= e->end && k->len > e->rlen))
		FAIL("ERF: %zu bytes dissected past rlen %u or the frame's wlen %u", k->len, e->rlen, e->wlen);
	if ((L & ~B(ERF)) && !(L & (erf_eth(e->type) ? B(ETH) : e->type == PKT_ERF_TYPE_INFINIBAND ? B(LRH) :
				   B(IPV4) | B(IPV6))))
		FAIL("layers 0x%x in an ERF record of type %u", L, e->type);
	return NULL;
}

/* LRH and GRH against where they sit and what they say */
static const char *check_ib(int linktype, const struct pkt *k)
{
	const struct pkt_ib *ib = &k->ib;
	unsigned L = k->layers;

	if (L & B(LRH)) {
		if (linktype != PKT_LINKTYPE_ERF || k->erf.type != PKT_ERF_TYPE_INFINIBAND || ib->lrh_off != k->erf.end)
			FAIL("an LRH at %zu outside an ERF InfiniBand record", ib->lrh_off);
		if (ib->pktlen > 0x7ff || ib->vl > 15 || ib->sl > 15 || ib->lnh > 3 || ib->lver > 15)
			FAIL("LRH fields out of range");
		if (!!(k->flags & PKT_F_LNH) != (ib->lnh < 2))
			FAIL("flag lnh disagrees with LNH %u", ib->lnh);
		if ((L & B(GRH)) && ib->lnh != 3)
			FAIL("a GRH after LNH %u", ib->lnh);
		if (ib->lnh < 2 && (L & ~(B(ERF) | B(LRH))))
			FAIL("layers 0x%x after a raw LRH", L);
	} else if (k->flags & PKT_F_LNH) {
		FAIL("flag lnh without an LRH");
	}
	if (L & B(GRH)) {
		size_t at = (L & B(LRH)) ? ib->lrh_off + PKT_LRH_LEN : k->link.end;

		if (!(L & B(LRH)) && (k->link.type != PKT_ETHERTYPE_ROCE_V1 || !(L & LINK_BITS)))
			FAIL("a GRH on type 0x%04x", k->link.type);
		if (ib->grh_off != at || ib->flow > 0xfffff)
			FAIL("a GRH at %zu, expected at %zu (or its flow label out of range)", ib->grh_off, at);
		if (!!(k->flags & PKT_F_GRH_NXT) != (ib->nxthdr != PKT_GRH_NXT_IBA))
			FAIL("flag grh-next disagrees with next header 0x%02x", ib->nxthdr);
		if (ib->nxthdr != PKT_GRH_NXT_IBA && (L & (B(BTH) | EXT_BITS)))
			FAIL("a BTH after GRH next header 0x%02x", ib->nxthdr);
	} else if (k->flags & PKT_F_GRH_NXT) {
		FAIL("flag grh-next without a GRH");
	}
	if ((L & IB_BITS) && (L & (B(IPV4) | B(IPV6) | B(UDP))))
		FAIL("IP or UDP with an LRH or GRH");
	if ((k->flags & PKT_F_IB_LEN) && !(L & IB_BITS))
		FAIL("flag ib-len without an LRH or GRH");
	return NULL;
}

static const char *check_link(int linktype, const struct pkt *k)
{
	unsigned L = k->layers;
	unsigned want = linktype == DLT_EN10MB ? B(ETH) : linktype == DLT_LINUX_SLL ? B(SLL) :
			linktype == DLT_LINUX_SLL2 ? B(SLL2) :
			linktype == PKT_LINKTYPE_ERF && (L & B(ERF)) && erf_eth(k->erf.type) ? B(ETH) : 0;

	if ((L & LINK_BITS) & ~want)
		FAIL("link layers 0x%x on link type %d", L & LINK_BITS, linktype);
	if (want && (L & ~B(ERF)) && !(L & want))
		FAIL("layers 0x%x without the link layer of link type %d", L, linktype);
	if (!want && (L & (B(VLAN) | B(MACCTL))))
		FAIL("VLAN or MAC control on raw IP");
	if (L & B(VLAN)) {
		if (k->link.tags < 1 || k->link.tags > PKT_MAX_TAGS)
			FAIL("%d VLAN tags", k->link.tags);
		if (k->link.vlan < 0 || k->link.vlan > 4095 || k->link.pcp < 0 || k->link.pcp > 7)
			FAIL("VLAN %d PCP %d", k->link.vlan, k->link.pcp);
	} else if (k->link.tags || k->link.vlan != -1 || k->link.pcp != -1) {
		FAIL("VLAN fields without a tag");
	}
	if ((k->flags & PKT_F_TAGS) && k->link.tags != PKT_MAX_TAGS)
		FAIL("flag tags with %d tags", k->link.tags);
	if (L & B(MACCTL)) {
		if (!(L & B(ETH)) || k->link.type != MACCTL_ETHERTYPE)
			FAIL("MAC control without Ethernet type 0x8808");
		if (k->mac.kind != MACCTL_PFC && k->mac.kind != MACCTL_PAUSE &&
		    k->mac.kind != MACCTL_OTHER)
			FAIL("MAC control of kind %s", macctl_kind_name(k->mac.kind));
		if (k->mac.tags != k->link.tags || k->mac.vlan != k->link.vlan ||
		    k->mac.pcp != k->link.pcp || k->mac.ethertype != k->link.type)
			FAIL("macctl saw other tags than the dissector");
		if (L & ~(B(ERF) | LINK_BITS | B(VLAN) | B(MACCTL)))
			FAIL("layers above MAC control");
	}
	if (k->cut == PKT_L_MACCTL && k->mac.kind != MACCTL_TRUNCATED)
		FAIL("cut in MAC control, which is %s", macctl_kind_name(k->mac.kind));
	return NULL;
}

static const char *check_ip(int linktype, const struct pkt *k)
{
	unsigned L = k->layers;
	const struct pkt_ip *ip = &k->ip;
	size_t wire_end = frame_wire_end(k);

	if ((L & B(IPV4)) && (L & B(IPV6)))
		FAIL("both IPv4 and IPv6");
	if (!(L & (B(IPV4) | B(IPV6)))) {
		if (L & (B(IPV6_EXT) | B(UDP)))
			FAIL("layers 0x%x without IP", L);
		if ((L & (B(BTH) | EXT_BITS)) && !(L & IB_BITS))
			FAIL("layers 0x%x without IP, LRH or GRH", L);
		if (ip->version)
			FAIL("IP version %d without IP", ip->version);
		return NULL;
	}
	if (ip->version != ((L & B(IPV4)) ? 4 : 6))
		FAIL("IP version %d in layers 0x%x", ip->version, L);
	if (linktype == DLT_IPV4 && ip->version != 4)
		FAIL("IPv6 on an IPv4 link");
	if (linktype == DLT_IPV6 && ip->version != 6)
		FAIL("IPv4 on an IPv6 link");
	if (!is_raw(linktype, k) &&
	    (k->link.type != (ip->version == 4 ? 0x0800 : 0x86dd) || ip->off != k->link.end))
		FAIL("IPv%d at %zu on type 0x%04x ending at %zu", ip->version, ip->off,
		     k->link.type, k->link.end);
	if (is_raw(linktype, k) && ip->off != (linktype == PKT_LINKTYPE_ERF ? k->erf.end : 0))
		FAIL("raw IP at %zu", ip->off);
	if (linktype == PKT_LINKTYPE_ERF && is_raw(linktype, k) &&
	    ip->version != (k->erf.type == PKT_ERF_TYPE_IPV4 ? 4 : 6))
		FAIL("IPv%d in an ERF record of type %u", ip->version, k->erf.type);
	if (ip->off + ip->hlen > k->len)
		FAIL("IP header %zu+%zu past caplen %zu", ip->off, ip->hlen, k->caplen);
	if (ip->version == 4 && (ip->hlen < PKT_IPV4_LEN || ip->hlen > 60 || ip->hlen % 4))
		FAIL("IPv4 header length %zu", ip->hlen);
	if (ip->end > wire_end)
		FAIL("IP end %zu past the wire's %zu", ip->end, wire_end);
	if (ip->end < ip->off + (ip->version == 4 ? ip->hlen : PKT_IPV6_LEN))
		FAIL("IP end %zu inside its header", ip->end);
	if (ip->tos != (ip->dscp << 2 | ip->ecn) || ip->ecn > 3 || ip->flow > 0xfffff)
		FAIL("TOS 0x%02x DSCP %u ECN %u flow 0x%x", ip->tos, ip->dscp, ip->ecn, ip->flow);
	if (L & B(IPV6_EXT)) {
		if (ip->version != 6 || ip->ext < 1 || ip->ext > PKT_MAX_EXT)
			FAIL("%d extension headers on IPv%d", ip->ext, ip->version);
	} else if (ip->ext) {
		FAIL("%d extension headers without the layer", ip->ext);
	}
	if ((k->flags & PKT_F_FRAG_LATER) && (!ip->frag_off || (L & B(UDP))))
		FAIL("a later fragment at %u, dissected on", ip->frag_off);
	if (L & B(UDP)) {
		if (ip->proto != 17 || k->udp.off != ip->off + ip->hlen)
			FAIL("UDP at %zu on protocol %u, IP header ending at %zu", k->udp.off,
			     ip->proto, ip->off + ip->hlen);
		if (k->udp.off + PKT_UDP_LEN > k->len)
			FAIL("UDP header past caplen");
		if (k->udp.end > ip->end && k->udp.end > k->udp.off)
			FAIL("UDP end %zu past the IP end %zu", k->udp.end, ip->end);
		if (!(k->flags & PKT_F_UDP_LEN) && k->udp.end != k->udp.off + k->udp.len)
			FAIL("UDP end %zu is not its length %u", k->udp.end, k->udp.len);
	} else if (L & (B(BTH) | EXT_BITS)) {
		FAIL("RoCE without UDP");
	}
	return NULL;
}

static const char *check_roce(const struct pkt_opts *opts, const struct pkt *k)
{
	const struct pkt_roce *r = &k->roce;
	unsigned L = k->layers, want, ext = L & EXT_BITS;
	uint16_t port = opts ? opts->roce_port : 0;
	size_t end;
	int l;

	if (!(L & B(BTH))) {
		static const struct pkt_roce zero;

		if (ext)
			FAIL("extended headers 0x%x without a BTH", ext);
		if (memcmp(r, &zero, sizeof(zero)))
			FAIL("RoCE fields set without a BTH");
		if (k->flags & (PKT_F_OPCODE | PKT_F_TVER | PKT_F_ROCE_LEN))
			FAIL("RoCE flags without a BTH");
		return NULL;
	}
	if (L & B(UDP)) {
		if (k->udp.dport != ROCE_UDP_PORT && !(port && k->udp.dport == port))
			FAIL("a BTH on UDP port %u", k->udp.dport);
		if (r->off != k->udp.off + PKT_UDP_LEN || r->end != k->udp.end)
			FAIL("BTH at %zu ending at %zu, UDP at %zu ending at %zu", r->off, r->end, k->udp.off,
			     k->udp.end);
	} else if (L & B(GRH)) {
		if (r->off != k->ib.grh_off + PKT_GRH_LEN)
			FAIL("BTH at %zu, GRH at %zu", r->off, k->ib.grh_off);
	} else if (!(L & B(LRH)) || k->ib.lnh != 2 || r->off != k->ib.lrh_off + PKT_LRH_LEN) {
		FAIL("BTH at %zu after neither UDP, a GRH nor an LRH of LNH 2", r->off);
	}
	if (!(L & B(UDP))) {
		size_t tend = frame_wire_end(k);

		if (!(k->flags & PKT_F_IB_LEN))
			tend = (L & B(LRH)) ? k->ib.lrh_off + (size_t)k->ib.pktlen * 4 :
			       k->ib.grh_off + PKT_GRH_LEN + k->ib.paylen;
		if (r->end != tend || r->end > frame_wire_end(k))
			FAIL("BTH's transport ending at %zu, expected %zu (wire %zu)", r->end, tend,
			     frame_wire_end(k));
	}
	if (r->bth.dqpn > ROCE_PSN_MASK || r->bth.psn > ROCE_PSN_MASK || r->bth.pad > 3 ||
	    r->bth.tver > 15 || r->msn > 0xffffff || r->sqpn > 0xffffff ||
	    r->eecnxt > 0xffffff || r->xrcsrq > 0xffffff)
		FAIL("a 24-bit (or smaller) field out of range");
	if (!!(k->flags & PKT_F_OPCODE) != !roce_opcode_valid(r->bth.opcode))
		FAIL("flag opcode disagrees on opcode 0x%02x", r->bth.opcode);
	if (!!(k->flags & PKT_F_TVER) != !!r->bth.tver)
		FAIL("flag tver disagrees with TVer %u", r->bth.tver);
	want = roce_opcode_headers(r->bth.opcode);
	if (ext & ~want)
		FAIL("headers 0x%x where opcode 0x%02x calls for 0x%x", ext, r->bth.opcode, want);
	if (k->truncated) {
		if (k->cut < PKT_L_BTH) {
			FAIL("cut in %s above a BTH", pkt_layer_name(k->cut));
		} else if (k->cut > PKT_L_BTH) {
			if (!(want & PKT_BIT(k->cut)))
				FAIL("cut in %s, not a header of opcode 0x%02x",
				     pkt_layer_name(k->cut), r->bth.opcode);
			if (ext != (want & (PKT_BIT(k->cut) - 1)))
				FAIL("headers 0x%x before the cut %s of 0x%x", ext,
				     pkt_layer_name(k->cut), want);
		}
		if (r->payload_len || r->payload_cap || r->icrc_cap || r->hdr_end)
			FAIL("payload fields of a truncated packet");
		return NULL;
	}
	if (ext != want)
		FAIL("headers 0x%x of opcode 0x%02x calling for 0x%x", ext, r->bth.opcode, want);
	end = r->off + ROCE_BTH_LEN;
	for (l = PKT_L_RDETH; l <= PKT_L_CNP; l++)
		if (want & PKT_BIT(l))
			end += ext_len(l);
	if (r->hdr_end != end || r->payload_off != end || k->used != end)
		FAIL("headers end at %zu, payload at %zu, used %zu; expected %zu", r->hdr_end,
		     r->payload_off, k->used, end);
	if (r->payload_cap > r->payload_len || r->payload_off + r->payload_cap > k->len)
		FAIL("payload %zu+%zu (%zu captured) past caplen %zu", r->payload_off,
		     r->payload_len, r->payload_cap, k->len);
	if (r->payload_off + r->payload_cap < k->len && r->payload_cap < r->payload_len)
		FAIL("payload captured %zu of %zu with bytes left", r->payload_cap, r->payload_len);
	if (k->flags & PKT_F_ROCE_LEN) {
		if (r->payload_len || r->icrc_cap)
			FAIL("payload or ICRC of a packet too short for its headers");
	} else {
		end = r->hdr_end + r->payload_len + r->bth.pad + ROCE_ICRC_LEN;
		if (end != r->end)
			FAIL("headers, payload, pad and ICRC end at %zu, the transport at %zu", end,
			     r->end);
		if (r->icrc_cap != (r->end <= k->len))
			FAIL("ICRC captured %d with the transport ending at %zu of %zu", r->icrc_cap,
			     r->end, k->len);
	}
	return NULL;
}

/* pkt_brief_fast(), when it takes the packet, says what pkt_brief_of() says of k */
static const char *check_brief(const uint8_t *p, size_t caplen, size_t wirelen, int linktype,
			       const struct pkt_opts *opts, const struct pkt *k)
{
	struct pkt_brief f, b;

	if (!pkt_brief_fast(p, caplen, wirelen, linktype, opts, &f))
		return NULL;
	pkt_brief_of(k, &b);
	if (f.wirelen != b.wirelen || f.layers != b.layers || f.flags != b.flags || f.truncated != b.truncated ||
	    f.cut != b.cut || f.ip_version != b.ip_version || f.addr != b.addr || memcmp(f.src, b.src, 16) || memcmp(f.dst, b.dst, 16))
		FAIL("brief: the fast path's layers 0x%x flags 0x%x, the dissector's 0x%x 0x%x (or the addresses)",
		     f.layers, f.flags, b.layers, b.flags);
	if (f.ecn != b.ecn || f.sport != b.sport || f.opcode != b.opcode || f.ackreq != b.ackreq ||
	    f.dqpn != b.dqpn || f.psn != b.psn || f.payload_len != b.payload_len || f.dma_len != b.dma_len ||
	    f.syndrome != b.syndrome || f.mac != b.mac)
		FAIL("brief: the fast path's opcode 0x%02x QP 0x%06x PSN 0x%06x payload %zu, the dissector's "
		     "0x%02x 0x%06x 0x%06x %zu (or ECN, port, AckReq, RETH, AETH)", f.opcode, f.dqpn, f.psn,
		     f.payload_len, b.opcode, b.dqpn, b.psn, b.payload_len);
	return NULL;
}

const char *dissect_check(const uint8_t *p, size_t caplen, size_t wirelen, int linktype,
			  const struct pkt_opts *opts, int rc, const struct pkt *k)
{
	const char *why;

	if (k->linktype != linktype || k->caplen != (p ? caplen : 0) || k->wirelen != wirelen)
		FAIL("link type, caplen or wirelen not kept");
	if (!pkt_linktype_known(linktype)) {
		if (rc != -1 || k->flags != PKT_F_LINKTYPE || k->layers || k->truncated)
			FAIL("unknown link type %d: rc %d, flags 0x%x, layers 0x%x", linktype, rc,
			     k->flags, k->layers);
		return NULL;
	}
	if (rc || (k->flags & PKT_F_LINKTYPE))
		FAIL("known link type %d: rc %d, flags 0x%x", linktype, rc, k->flags);
	if (!!(k->flags & PKT_F_WIRELEN) != (wirelen < k->caplen))
		FAIL("flag wirelen disagrees: wirelen %zu caplen %zu", wirelen, k->caplen);
	if (k->truncated) {
		if (k->cut == PKT_L_NONE || k->cut >= PKT_L_MAX)
			FAIL("truncated without the layer cut: a read not asked for");
		if (k->needed <= k->len)
			FAIL("truncated in %s needing %zu of %zu captured", pkt_layer_name(k->cut),
			     k->needed, k->len);
		if (k->used)
			FAIL("truncated, yet used %zu", k->used);
		if (k->cut != PKT_L_VLAN && k->cut != PKT_L_IPV6_EXT && (k->layers & PKT_BIT(k->cut)))
			FAIL("the layer cut, %s, is also whole", pkt_layer_name(k->cut));
	} else {
		if (k->cut != PKT_L_NONE || k->needed)
			FAIL("not truncated, yet cut in %s needing %zu", pkt_layer_name(k->cut),
			     k->needed);
		if (k->used > k->len)
			FAIL("used %zu of %zu", k->used, k->len);
	}
	if ((why = check_erf(linktype, k)) || (why = check_ib(linktype, k)) || (why = check_link(linktype, k)) || (why = check_ip(linktype, k)) ||
	    (why = check_roce(opts, k)) || (why = check_brief(p, caplen, wirelen, linktype, opts, k)))
		return why;
	return NULL;
}

/* dissected from a heap buffer of exactly len bytes */
static int dissect_copy(const uint8_t *p, size_t len, size_t wirelen, int linktype,
			const struct pkt_opts *opts, struct pkt *out, int *rc)
{
	uint8_t *b = NULL;

	if (len) {
		b = malloc(len);
		if (!b)
			return -1;
		memcpy(b, p, len);
	}
	*rc = pkt_dissect_opts(b, len, wirelen, linktype, opts, out);
	free(b);
	return 0;
}

const char *dissect_check_cuts(const uint8_t *p, size_t caplen, size_t wirelen, int linktype,
			       const struct pkt_opts *opts, const struct pkt *k)
{
	struct pkt a;
	int rc;

	if (dissect_copy(p, caplen, wirelen, linktype, opts, &a, &rc))
		return "out of memory";
	if (memcmp(&a, k, sizeof(a)))
		FAIL("dissected twice, the results differ");
	if (k->truncated || (k->flags & (PKT_F_LINKTYPE | PKT_F_WIRELEN)))
		return NULL;
	if (dissect_copy(p, k->used, wirelen, linktype, opts, &a, &rc))
		return "out of memory";
	a.caplen = k->caplen;
	a.len = k->len;
	a.roce.payload_cap = k->roce.payload_cap;
	a.roce.icrc_cap = k->roce.icrc_cap;
	a.roce.icrc = k->roce.icrc;
	if (memcmp(&a, k, sizeof(a)))
		FAIL("cut to the %zu bytes used, it dissects differently (layers 0x%x, not 0x%x)",
		     k->used, a.layers, k->layers);
	if (!k->used)
		return NULL;
	if (dissect_copy(p, k->used - 1, wirelen, linktype, opts, &a, &rc))
		return "out of memory";
	if (!a.truncated || a.needed != k->used)
		FAIL("cut to %zu bytes, it is %s needing %zu, not truncated needing %zu",
		     k->used - 1, a.truncated ? "truncated" : "whole", a.needed, k->used);
	return NULL;
}
