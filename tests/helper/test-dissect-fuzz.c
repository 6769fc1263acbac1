/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tool dissect-fuzz [--port P] N SEED: pcap/dissect.c against N
 * packets of every kind and link type built by pktgen with random fields,
 * then mutated: bits flipped, bytes replaced (mostly in the headers), cut
 * by a snaplen, extended, replaced by random bytes, given another link
 * type or a wire length that disagrees.  Each is dissected from a heap
 * buffer of exactly its captured length (so that ASan sees a read past
 * it) and checked with dissect_check() and dissect_check_cuts().  Prints
 * the counts of what was seen; exits 1 on the first broken invariant,
 * printing the packet in hex.
 */
#include <errno.h>
#include <pcap/dlt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../pcap/dissect.h"
#include "dissect-check.h"
#include "pktgen.h"
#include "test-tool.h"


static unsigned rng_below(uint64_t *s, unsigned n)
{
	return n ? (unsigned)(tool_rand(s) % n) : 0;
}

static uint8_t random_opcode(uint64_t *s)
{
	unsigned op;

	switch (rng_below(s, 8)) {
	case 0:
		return ROCE_OP_CNP;
	case 1:
		return (uint8_t)tool_rand(s);	/* reserved ones too */
	default:
		do
			op = rng_below(s, 256);
		while (!roce_opcode_valid(op));
		return (uint8_t)op;
	}
}

/* a valid packet of a random kind on a random known link type */
static void random_packet(uint64_t *s, struct pktgen *g, uint16_t port)
{
	static const uint16_t tpids[] = { 0x8100, 0x88a8, 0x9100 };
	int lt = dissect_fuzz_linktype(rng_below(s, DISSECT_FUZZ_LINKS - 1)), i;
	int linked = lt == DLT_EN10MB || lt == DLT_LINUX_SLL || lt == DLT_LINUX_SLL2 || lt == PKT_LINKTYPE_ERF;
	unsigned k = rng_below(s, 20);

	pktgen_init(g, lt);
	if (lt == PKT_LINKTYPE_ERF) {	/* Ethernet or InfiniBand records, extension headers, padding */
		g->ib = !rng_below(s, 3);
		g->grh = g->ib && rng_below(s, 2);
		g->erfext = rng_below(s, 4) ? rng_below(s, 3) : rng_below(s, PKT_MAX_ERF_EXT + 3);
		g->erfpad = rng_below(s, 3) ? 0 : rng_below(s, 16);
		if (!rng_below(s, 8))
			g->erftype = (int)rng_below(s, 32);
		g->slid = (uint16_t)tool_rand(s);
		g->dlid = (uint16_t)tool_rand(s);
		g->sl = (uint8_t)rng_below(s, 16);
		g->vl = (uint8_t)rng_below(s, 16);
		if (g->ib)
			linked = 0;
	}
	if (linked && !rng_below(s, 6))
		g->v1 = 1;	/* RoCE v1: GRH on type 0x8915 */
	if (linked && k == 0)
		g->kind = PKTGEN_PFC;
	else if (linked && k == 1)
		g->kind = PKTGEN_PAUSE;
	else if (linked && k == 2)
		g->kind = PKTGEN_ETHER;
	else if (k == 3 && !g->ib)
		g->kind = PKTGEN_UDP;
	else if (k == 4 && !g->ib)
		g->kind = PKTGEN_TCP;
	if (g->kind != PKTGEN_ROCE)
		g->v1 = 0;
	if (linked && rng_below(s, 3) == 0) {
		g->tags = 1 + (int)rng_below(s, 3);
		for (i = 0; i < g->tags; i++) {
			g->tpid[i] = tpids[rng_below(s, 3)];
			g->vlan[i] = (uint16_t)rng_below(s, 4096);
		}
		g->pcp = (uint8_t)rng_below(s, 8);
	}
	g->sll_type = (int)rng_below(s, 6);
	g->ifindex = (uint32_t)tool_rand(s);
	g->prio_enable = (uint8_t)tool_rand(s);
	g->quanta = (uint16_t)tool_rand(s);
	g->ethertype = (uint16_t)tool_rand(s);
	g->ipv6 = lt == DLT_IPV6 || g->v1 || g->grh ? 1 : lt == DLT_IPV4 ? 0 : (int)rng_below(s, 2);
	if (g->ipv6) {
		for (i = 0; i < 16; i++) {
			g->src[i] = (uint8_t)tool_rand(s);
			g->dst[i] = (uint8_t)tool_rand(s);
		}
		if (!rng_below(s, 3)) {
			g->next_ext = 1 + (int)rng_below(s, rng_below(s, 8) ? 3 : PKTGEN_MAX_EXT);
			for (i = 0; i < g->next_ext; i++)
				g->ext[i] = (enum pktgen_ext)rng_below(s, 5);
		}
		g->flow = (uint32_t)rng_below(s, 1u << 20);
	} else if (!rng_below(s, 4)) {
		g->ipopts = 4 * rng_below(s, 11);
	}
	if (!rng_below(s, 10)) {
		g->frag = 8 * rng_below(s, 3);
		g->mf = (int)rng_below(s, 2);
	}
	g->dscp = (uint8_t)rng_below(s, 64);
	g->ecn = (uint8_t)rng_below(s, 4);
	g->ttl = (uint8_t)tool_rand(s);
	g->id = (uint16_t)tool_rand(s);
	g->sport = (uint16_t)tool_rand(s);
	if (g->kind == PKTGEN_UDP)
		g->dport = (uint16_t)tool_rand(s);
	else if (port && !rng_below(s, 4))
		g->dport = port;
	g->opcode = random_opcode(s);
	g->se = (int)rng_below(s, 2);
	g->m = (int)rng_below(s, 2);
	g->ackreq = (int)rng_below(s, 2);
	g->fecn = (int)rng_below(s, 2);
	g->becn = (int)rng_below(s, 2);
	g->tver = rng_below(s, 16) ? 0 : (uint8_t)rng_below(s, 16);
	g->pad = (uint8_t)rng_below(s, 4);
	g->pkey = (uint16_t)tool_rand(s);
	g->qpn = (uint32_t)tool_rand(s) & ROCE_PSN_MASK;
	g->psn = rng_below(s, 4) ? (uint32_t)tool_rand(s) & ROCE_PSN_MASK :
		 ROCE_PSN_MASK - rng_below(s, 3);
	g->eecnxt = (uint32_t)tool_rand(s) & 0xffffff;
	g->qkey = (uint32_t)tool_rand(s);
	g->sqpn = (uint32_t)tool_rand(s) & 0xffffff;
	g->xrcsrq = (uint32_t)tool_rand(s) & 0xffffff;
	g->feth = (uint32_t)tool_rand(s);
	g->va = tool_rand(s);
	g->rkey = (uint32_t)tool_rand(s);
	g->dmalen = (uint32_t)tool_rand(s);
	g->swap = tool_rand(s);
	g->cmp = tool_rand(s);
	g->syndrome = (uint8_t)tool_rand(s);
	g->msn = (uint32_t)tool_rand(s) & 0xffffff;
	g->orig = tool_rand(s);
	g->imm = (uint32_t)tool_rand(s);
	g->len = rng_below(s, 8) ? rng_below(s, 65) : rng_below(s, 1200);
}

/* mutate b (len bytes of a PKTGEN_MAX buffer): the new length; *wirelen, *linktype */
static size_t mutate(uint64_t *s, uint8_t *b, size_t len, size_t *wirelen, int *linktype)
{
	unsigned n, i;

	switch (rng_below(s, 8)) {
	case 0:		/* as built */
	case 1:
		break;
	case 2:		/* bits flipped */
		n = 1 + rng_below(s, 4);
		for (i = 0; i < n && len; i++)
			b[rng_below(s, (unsigned)len)] ^= (uint8_t)(1u << rng_below(s, 8));
		break;
	case 3:		/* bytes replaced, mostly in the headers */
		n = 1 + rng_below(s, 4);
		for (i = 0; i < n && len; i++)
			b[rng_below(s, rng_below(s, 4) ? (len < 100 ? (unsigned)len : 100) :
				       (unsigned)len)] = (uint8_t)tool_rand(s);
		break;
	case 4:		/* cut by a snaplen: the wire length stays */
	case 5:
		len = rng_below(s, (unsigned)len + 1);
		break;
	case 6:		/* extended */
		n = 1 + rng_below(s, 64);
		for (i = 0; i < n && len < PKTGEN_MAX; i++)
			b[len++] = (uint8_t)tool_rand(s);
		*wirelen = len;
		break;
	default:	/* random bytes */
		len = rng_below(s, 120);
		for (i = 0; i < len; i++)
			b[i] = (uint8_t)tool_rand(s);
		*wirelen = len;
		break;
	}
	if (!rng_below(s, 16))
		*wirelen = rng_below(s, 2) ? len + rng_below(s, 1500) : rng_below(s, (unsigned)len + 1);
	if (!rng_below(s, 32))
		*linktype = dissect_fuzz_linktype(rng_below(s, DISSECT_FUZZ_LINKS));
	return len;
}

static void dump_hex(const uint8_t *b, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		fprintf(stderr, "%02x", b[i]);
	fprintf(stderr, "\n");
}

/* what the counts are kept of */
enum {
	C_TRUNCATED, C_WHOLE, C_ROCE, C_CNP, C_MACCTL, C_VLAN, C_IPV6_EXT, C_UNKNOWN_LINK,
	C_PAYLOAD_CUT, C_ICRC, C_ERF, C_LRH, C_GRH, C_MAX
};

static const char *const count_names[C_MAX] = {
	"truncated", "whole", "roce", "cnp", "macctl", "vlan", "ipv6-ext", "unknown-link",
	"payload-cut", "icrc-captured", "erf", "lrh", "grh",
};

int tool_dissect_fuzz(int argc, const char **argv)
{
	static uint8_t buf[PKTGEN_MAX];
	unsigned long iters, seed, it, port = 0, counts[C_MAX] = { 0 }, cuts[PKT_L_MAX] = { 0 };
	struct pkt_opts opts = { 0 };
	const char *args[2];
	int nargs = 0, i, rc = 0;
	uint64_t s;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--port") && i + 1 < argc) {
			if (tool_parse_ulong("--port", argv[++i], 65535, &port))
				return FS_EXIT_USAGE;
		} else if (nargs < 2) {
			args[nargs++] = argv[i];
		} else {
			nargs = 3;
			break;
		}
	}
	if (nargs != 2 || tool_parse_ulong("N", args[0], 1ul << 40, &iters) ||
	    tool_parse_ulong("SEED", args[1], (unsigned long)-1, &seed))
		return usage_error("usage: test-tool dissect-fuzz [--port P] N SEED");
	opts.roce_port = (uint16_t)port;
	s = seed;
	for (it = 0; it < iters; it++) {
		struct pktgen g;
		size_t caplen, wirelen, len;
		int linktype, r;
		uint8_t *copy = NULL;
		const char *why;
		struct pkt k;

		random_packet(&s, &g, (uint16_t)port);
		linktype = g.linktype;
		len = pktgen_build(&g, buf, &caplen, &wirelen);
		if (!len)
			return check_failed("packet %lu: pktgen built nothing", it);
		len = mutate(&s, buf, len, &wirelen, &linktype);
		if (len) {
			copy = malloc(len);
			if (!copy)
				return -fs_err_env("out of memory");
			memcpy(copy, buf, len);
		}
		r = pkt_dissect_opts(copy, len, wirelen, linktype, &opts, &k);
		why = dissect_check(copy, len, wirelen, linktype, &opts, r, &k);
		if (!why)
			why = dissect_check_cuts(copy, len, wirelen, linktype, &opts, &k);
		free(copy);
		if (why) {
			rc = check_failed("packet %lu (link type %d, wirelen %zu): %s", it, linktype,
					  wirelen, why);
			dump_hex(buf, len);
			return rc;
		}
		if (r < 0) {
			counts[C_UNKNOWN_LINK]++;
			continue;
		}
		counts[k.truncated ? C_TRUNCATED : C_WHOLE]++;
		cuts[k.cut]++;
		counts[C_ROCE] += pkt_has(&k, PKT_L_BTH);
		counts[C_CNP] += pkt_has(&k, PKT_L_CNP);
		counts[C_MACCTL] += pkt_has(&k, PKT_L_MACCTL);
		counts[C_VLAN] += pkt_has(&k, PKT_L_VLAN);
		counts[C_IPV6_EXT] += pkt_has(&k, PKT_L_IPV6_EXT);
		counts[C_PAYLOAD_CUT] += pkt_has(&k, PKT_L_BTH) && !k.truncated &&
					 k.roce.payload_cap < k.roce.payload_len;
		counts[C_ICRC] += k.roce.icrc_cap;
		counts[C_ERF] += pkt_has(&k, PKT_L_ERF);
		counts[C_LRH] += pkt_has(&k, PKT_L_LRH);
		counts[C_GRH] += pkt_has(&k, PKT_L_GRH);
	}
	printf("packets %lu\n", iters);
	for (i = 0; i < C_MAX; i++)
		printf("%s %lu\n", count_names[i], counts[i]);
	for (i = PKT_L_ERF; i < PKT_L_MAX; i++)
		if (cuts[i])
			printf("cut.%s %lu\n", pkt_layer_name((enum pkt_layer)i), cuts[i]);
	return 0;
}
