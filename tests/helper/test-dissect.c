/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tool dissect, dissect-pcap, pcapgen, dissect-fuzz: pcap/dissect.c
 * (tests/t0240-unit-pcap-dissect.t, tests/t0250-unit-pcap-fuzz.t).
 *
 *   dissect [--linktype N] [--wirelen N] [--port P] [--cuts] HEX
 *                                dissect the packet (hex digits; spaces, ':',
 *                                '.' and '-' skipped) from a heap buffer of
 *                                exactly its length (link type default 1,
 *                                Ethernet); one field per line, the fields of
 *                                the layers found; --cuts: instead, for every
 *                                length L from 0 to the packet's, "L truncated
 *                                LAYER NEEDED" or "L whole LAYERS"
 *   dissect-pcap [--port P] [-v] FILE
 *                                one line per packet of the pcap file: number,
 *                                time, cap=, len=, layers=, then what was
 *                                found (vlan=, src=, dst=, ecn=, sport=,
 *                                dport=, op=, name=, qpn=, psn=, ackreq,
 *                                aeth=, msn=, mac=, truncated=, needed=,
 *                                flags=); -v: instead, "packet N" and the
 *                                fields of dissect, one per line
 *   pcapgen [--link L] [--corpus DIR] OUT SPEC...
 *                                write the packets of the specs (pktgen.h; a
 *                                SPEC "-": one per line from stdin, '#'
 *                                comments) to the pcap file OUT, link L eth
 *                                (default), sll, sll2, raw, ipv4, ipv6 or
 *                                erf (ERF records: Ethernet, InfiniBand with ib);
 *                                --corpus: also each packet as a file of
 *                                DIR for the libFuzzer target (a link
 *                                selector byte, then the captured bytes);
 *                                prints "packets N"
 *   pcapgen --hex [--link L] SPEC...
 *                                instead, print each packet's captured bytes
 *                                in hex, one packet per line
 *   dissect-fuzz [--port P] N SEED
 *                                N packets of every kind and link type
 *                                (pktgen), mutated (bits flipped, bytes
 *                                replaced, cut, extended, random), each
 *                                dissected from a heap buffer of exactly its
 *                                length and checked (dissect-check.h); prints
 *                                counts, exits 1 on a broken invariant
 *
 * Exit codes: 0 ok, 1 a check failed, 2 usage or bad input, 3 environment.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../pcap/dissect.h"
#include "dissect-check.h"
#include "pktgen.h"
#include "test-tool.h"


static const char *addr_str(const struct pkt_ip *ip, const uint8_t *a, char *buf, size_t len)
{
	if (!inet_ntop(ip->version == 4 ? AF_INET : AF_INET6, a, buf, (socklen_t)len))
		snprintf(buf, len, "?");
	return buf;
}

static const char *layers_str(unsigned layers, char sep, char *buf, size_t len)
{
	size_t at = 0;
	int l;

	buf[0] = 0;
	for (l = PKT_L_ETH; l < PKT_L_MAX && at + 1 < len; l++) {
		int n;

		if (!(layers & PKT_BIT(l)))
			continue;
		n = snprintf(buf + at, len - at, "%s%s", at ? (char[]){ sep, 0 } : "",
			     pkt_layer_name((enum pkt_layer)l));
		if (n < 0 || (size_t)n >= len - at)
			break;
		at += (size_t)n;
	}
	if (!at)
		snprintf(buf, len, "none");
	return buf;
}

/* ---- dissect: one field per line ---- */

static void print_aeth(uint8_t syndrome)
{
	enum roce_aeth_kind ak = roce_aeth_kind(syndrome);
	unsigned v = roce_aeth_value(syndrome);
	const char *nak;

	printf("aeth.syndrome 0x%02x\naeth.kind %s\n", syndrome, roce_aeth_kind_name(ak));
	switch (ak) {
	case ROCE_AETH_ACK:
		if (roce_ack_credits(v) < 0)
			printf("aeth.credits %u invalid\n", v);
		else
			printf("aeth.credits %u %ld\n", v, roce_ack_credits(v));
		break;
	case ROCE_AETH_RNR:
		printf("aeth.rnr %u %.2fms\n", v, roce_rnr_timer_ms(v));
		break;
	case ROCE_AETH_NAK:
		nak = roce_nak_name(v);
		printf("aeth.nak %u %s\n", v, nak ? nak : "reserved");
		break;
	case ROCE_AETH_RESERVED:
		printf("aeth.value %u\n", v);
		break;
	}
}

static void print_link(const struct pkt *k)
{
	const struct pkt_link *l = &k->link;
	char buf[64];

	if (pkt_has(k, PKT_L_ETH))
		printf("link.dst %s\n", tool_mac_str(l->dst, buf, sizeof(buf)));
	if (pkt_has(k, PKT_L_ETH) || l->sll_addrlen == 6)
		printf("link.src %s\n", tool_mac_str(l->src, buf, sizeof(buf)));
	if (pkt_has(k, PKT_L_SLL) || pkt_has(k, PKT_L_SLL2)) {
		const char *t = pkt_sll_type_name(l->sll_type);

		printf("sll.type %d %s\n", l->sll_type, t ? t : "unknown");
		printf("sll.hatype %u\nsll.addrlen %u\n", l->sll_hatype, l->sll_addrlen);
		if (pkt_has(k, PKT_L_SLL2))
			printf("sll.ifindex %" PRIu32 "\n", l->sll_ifindex);
	}
	if (k->layers & (PKT_BIT(PKT_L_ETH) | PKT_BIT(PKT_L_SLL) | PKT_BIT(PKT_L_SLL2)) &&
	    (k->truncated ? k->cut > PKT_L_VLAN : 1))
		printf("link.type 0x%04x\n", l->type);
	if (pkt_has(k, PKT_L_VLAN))
		printf("link.tags %d\nlink.vlan %d\nlink.pcp %d\n", l->tags, l->vlan, l->pcp);
}

static void print_mac(const struct macctl *m)
{
	const char *name = macctl_opcode_name(m->opcode);
	char buf[64];
	int i;

	printf("mac.kind %s\nmac.opcode 0x%04x %s\n", macctl_kind_name(m->kind), m->opcode,
	       name ? name : "unknown");
	if (m->kind == MACCTL_PFC) {
		printf("mac.enable 0x%02x\nmac.quanta", m->enable);
		for (i = 0; i < MACCTL_PRIOS; i++)
			printf(" %u", m->quanta[i]);
		printf("\n");
	} else if (m->kind == MACCTL_PAUSE) {
		printf("mac.quanta %u\n", m->quanta[0]);
	}
	printf("mac.flags %s\n", macctl_flags_str(m->flags, buf, sizeof(buf)));
}

static void print_ip(const struct pkt *k)
{
	const struct pkt_ip *ip = &k->ip;
	char buf[64];

	printf("ip.version %d\n", ip->version);
	printf("ip.src %s\n", addr_str(ip, ip->src, buf, sizeof(buf)));
	printf("ip.dst %s\n", addr_str(ip, ip->dst, buf, sizeof(buf)));
	printf("ip.hlen %zu\nip.len %zu\nip.end %zu\n", ip->hlen, ip->len, ip->end);
	printf("ip.dscp %u\nip.ecn %u %s\nip.ttl %u\nip.proto %u\n", ip->dscp, ip->ecn,
	       pkt_ecn_name(ip->ecn), ip->ttl, ip->proto);
	if (ip->version == 6)
		printf("ip.flow 0x%05" PRIx32 "\nip.ext %d\n", ip->flow, ip->ext);
	printf("ip.frag %" PRIu32 "%s\n", ip->frag_off, ip->more_frags ? " mf" : "");
}

static void print_roce(const struct pkt *k)
{
	const struct pkt_roce *r = &k->roce;
	const struct roce_bth *b = &r->bth;
	const char *name = roce_opcode_name(b->opcode);

	printf("bth.opcode 0x%02x %s\n", b->opcode, name ? name : "reserved");
	printf("bth.transport %s\n", roce_transport_name(roce_transport(b->opcode)));
	printf("bth.position %s\n", roce_position_name(roce_position(b->opcode)));
	printf("bth.class %s%s%s\n", roce_is_request(b->opcode) ? "request" :
	       roce_is_response(b->opcode) ? "response" : "-",
	       roce_is_read_response(b->opcode) ? " read-response" : "",
	       roce_is_ack(b->opcode) ? " ack" : "");
	printf("bth.se %u\nbth.m %u\nbth.pad %u\nbth.tver %u\nbth.pkey 0x%04x\n", b->se, b->m,
	       b->pad, b->tver, b->pkey);
	printf("bth.fecn %u\nbth.becn %u\nbth.dqpn 0x%06" PRIx32 "\nbth.ackreq %u\n", b->fecn,
	       b->becn, b->dqpn, b->ackreq);
	printf("bth.psn %" PRIu32 "\n", b->psn);
	if (pkt_has(k, PKT_L_RDETH))
		printf("rdeth.eecnxt 0x%06" PRIx32 "\n", r->eecnxt);
	if (pkt_has(k, PKT_L_DETH))
		printf("deth.qkey 0x%08" PRIx32 "\ndeth.sqpn 0x%06" PRIx32 "\n", r->qkey, r->sqpn);
	if (pkt_has(k, PKT_L_XRCETH))
		printf("xrceth.xrcsrq 0x%06" PRIx32 "\n", r->xrcsrq);
	if (pkt_has(k, PKT_L_FETH))
		printf("feth 0x%08" PRIx32 "\n", r->feth);
	if (pkt_has(k, PKT_L_RETH))
		printf("reth.va 0x%016" PRIx64 "\nreth.rkey 0x%08" PRIx32 "\nreth.dmalen %" PRIu32 "\n",
		       r->va, r->rkey, r->dma_len);
	if (pkt_has(k, PKT_L_ATOMICETH))
		printf("atomiceth.va 0x%016" PRIx64 "\natomiceth.rkey 0x%08" PRIx32
		       "\natomiceth.swap 0x%016" PRIx64 "\natomiceth.cmp 0x%016" PRIx64 "\n",
		       r->va, r->rkey, r->swap_add, r->compare);
	if (pkt_has(k, PKT_L_AETH)) {
		print_aeth(r->syndrome);
		printf("aeth.msn %" PRIu32 "\n", r->msn);
	}
	if (pkt_has(k, PKT_L_ATOMICACKETH))
		printf("atomicacketh.orig 0x%016" PRIx64 "\n", r->orig);
	if (pkt_has(k, PKT_L_IMMDT))
		printf("immdt 0x%08" PRIx32 "\n", r->imm);
	if (pkt_has(k, PKT_L_IETH))
		printf("ieth.rkey 0x%08" PRIx32 "\n", r->rkey);
	if (k->truncated)
		return;
	printf("payload.off %zu\npayload.len %zu\npayload.cap %zu\n", r->payload_off,
	       r->payload_len, r->payload_cap);
	if (r->icrc_cap)
		printf("icrc 0x%08" PRIx32 "\n", r->icrc);
	else
		printf("icrc -\n");
}

static void print_pkt(const struct pkt *k)
{
	const char *lt = pkt_linktype_name(k->linktype);
	char buf[256];

	printf("linktype %d %s\ncaplen %zu\nwirelen %zu\n", k->linktype, lt ? lt : "unknown",
	       k->caplen, k->wirelen);
	printf("layers %s\n", layers_str(k->layers, ' ', buf, sizeof(buf)));
	if (k->truncated)
		printf("truncated %s needed %zu\nused -\n", pkt_layer_name(k->cut), k->needed);
	else
		printf("truncated no\nused %zu\n", k->used);
	printf("flags %s\n", pkt_flags_str(k->flags, buf, sizeof(buf)));
	print_link(k);
	if (pkt_has(k, PKT_L_MACCTL))
		print_mac(&k->mac);
	if (k->ip.version)
		print_ip(k);
	if (pkt_has(k, PKT_L_UDP))
		printf("udp.sport %u\nudp.dport %u\nudp.len %u\nudp.end %zu\n", k->udp.sport,
		       k->udp.dport, k->udp.len, k->udp.end);
	if (pkt_has(k, PKT_L_BTH))
		print_roce(k);
}

static void print_cuts(const uint8_t *b, size_t len, size_t wirelen, int linktype,
		       const struct pkt_opts *opts)
{
	char buf[256];
	struct pkt k;
	size_t l;

	for (l = 0; l <= len; l++) {
		uint8_t *c = l ? malloc(l) : NULL;

		if (l && !c) {
			fs_err_env("out of memory");
			return;
		}
		if (l)
			memcpy(c, b, l);
		pkt_dissect_opts(c, l, wirelen, linktype, opts, &k);
		free(c);
		if (k.truncated)
			printf("%zu truncated %s %zu\n", l, pkt_layer_name(k.cut), k.needed);
		else
			printf("%zu whole %s\n", l, layers_str(k.layers, ',', buf, sizeof(buf)));
	}
}

static int cmd_dissect(int argc, const char **argv)
{
	unsigned long lt = DLT_EN10MB, wl = 0, port = 0;
	int have_wl = 0, cuts = 0, rc, i;
	struct pkt_opts opts = { 0 };
	const char *hex = NULL;
	uint8_t *b = NULL;
	struct pkt k;
	size_t len = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--linktype") && i + 1 < argc) {
			if (tool_parse_ulong("--linktype", argv[++i], 65535, &lt))
				return FS_EXIT_USAGE;
		} else if (!strcmp(argv[i], "--wirelen") && i + 1 < argc) {
			if (tool_parse_ulong("--wirelen", argv[++i], 262144, &wl))
				return FS_EXIT_USAGE;
			have_wl = 1;
		} else if (!strcmp(argv[i], "--port") && i + 1 < argc) {
			if (tool_parse_ulong("--port", argv[++i], 65535, &port))
				return FS_EXIT_USAGE;
		} else if (!strcmp(argv[i], "--cuts")) {
			cuts = 1;
		} else if (!hex) {
			hex = argv[i];
		} else {
			hex = NULL;
			break;
		}
	}
	if (!hex)
		return usage_error("usage: test-tool dissect [--linktype N] [--wirelen N] [--port P] "
				   "[--cuts] HEX");
	rc = tool_parse_hex(hex, &b, &len);
	if (rc)
		return rc;
	opts.roce_port = (uint16_t)port;
	if (!have_wl)
		wl = len;
	if (cuts) {
		print_cuts(b, len, wl, (int)lt, &opts);
	} else {
		pkt_dissect_opts(b, len, wl, (int)lt, &opts, &k);
		print_pkt(&k);
	}
	free(b);
	return 0;
}

/* ---- dissect-pcap: one line per packet ---- */

static void print_line(unsigned long n, const struct pcap_pkthdr *h, const struct pkt *k)
{
	char buf[256];

	printf("%lu %lld.%06ld cap=%u len=%u layers=%s", n, (long long)h->ts.tv_sec,
	       (long)h->ts.tv_usec, h->caplen, h->len, layers_str(k->layers, ',', buf, sizeof(buf)));
	if (pkt_has(k, PKT_L_VLAN))
		printf(" vlan=%d", k->link.vlan);
	if (pkt_has(k, PKT_L_MACCTL)) {
		printf(" mac=%s", macctl_kind_name(k->mac.kind));
		if (k->mac.kind == MACCTL_PFC)
			printf(" enable=0x%02x", k->mac.enable);
	}
	if (k->ip.version) {
		printf(" src=%s", addr_str(&k->ip, k->ip.src, buf, sizeof(buf)));
		printf(" dst=%s ecn=%s", addr_str(&k->ip, k->ip.dst, buf, sizeof(buf)),
		       pkt_ecn_name(k->ip.ecn));
	}
	if (pkt_has(k, PKT_L_UDP))
		printf(" sport=%u dport=%u", k->udp.sport, k->udp.dport);
	if (pkt_has(k, PKT_L_BTH)) {
		const struct roce_bth *b = &k->roce.bth;
		const char *name = roce_opcode_name(b->opcode);
		char nm[64];
		size_t i;

		snprintf(nm, sizeof(nm), "%s", name ? name : "reserved");
		for (i = 0; nm[i]; i++)
			if (nm[i] == ' ')
				nm[i] = '_';
		printf(" op=0x%02x name=%s qpn=0x%06" PRIx32 " psn=%" PRIu32, b->opcode, nm, b->dqpn,
		       b->psn);
		if (b->ackreq)
			printf(" ackreq");
		if (b->fecn || b->becn)
			printf(" ecn-bits=%s%s", b->fecn ? "F" : "", b->becn ? "B" : "");
	}
	if (pkt_has(k, PKT_L_AETH)) {
		enum roce_aeth_kind ak = roce_aeth_kind(k->roce.syndrome);
		unsigned v = roce_aeth_value(k->roce.syndrome);
		const char *nak = roce_nak_name(v);

		if (ak == ROCE_AETH_NAK)
			printf(" aeth=nak:%s", nak ? nak : "reserved");
		else if (ak == ROCE_AETH_RNR)
			printf(" aeth=rnr:%.2fms", roce_rnr_timer_ms(v));
		else
			printf(" aeth=%s", roce_aeth_kind_name(ak));
		printf(" msn=%" PRIu32, k->roce.msn);
	}
	if (k->truncated)
		printf(" truncated=%s needed=%zu", pkt_layer_name(k->cut), k->needed);
	if (k->flags)
		printf(" flags=%s", pkt_flags_str(k->flags, buf, sizeof(buf)));
	printf("\n");
}

static int cmd_dissect_pcap(int argc, const char **argv)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	struct pkt_opts opts = { 0 };
	struct pcap_pkthdr *h;
	const u_char *bytes;
	unsigned long n = 0, port = 0;
	const char *file = NULL;
	pcap_t *pc;
	int i, r, linktype, verbose = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--port") && i + 1 < argc) {
			if (tool_parse_ulong("--port", argv[++i], 65535, &port))
				return FS_EXIT_USAGE;
		} else if (!strcmp(argv[i], "-v")) {
			verbose = 1;
		} else if (!file) {
			file = argv[i];
		} else {
			file = NULL;
			break;
		}
	}
	if (!file)
		return usage_error("usage: test-tool dissect-pcap [--port P] [-v] FILE");
	opts.roce_port = (uint16_t)port;
	pc = pcap_open_offline(file, errbuf);
	if (!pc)
		return usage_error("unable to read '%s': %s", file, errbuf);
	linktype = pcap_datalink(pc);
	while ((r = pcap_next_ex(pc, &h, &bytes)) == 1) {
		struct pkt k;

		pkt_dissect_opts(bytes, h->caplen, h->len, linktype, &opts, &k);
		if (verbose) {
			printf("packet %lu\n", ++n);
			print_pkt(&k);
		} else {
			print_line(++n, h, &k);
		}
	}
	if (r == PCAP_ERROR) {
		r = usage_error("unable to read '%s': %s", file, pcap_geterr(pc));
		pcap_close(pc);
		return r;
	}
	pcap_close(pc);
	return 0;
}

/* ---- pcapgen ---- */

static const struct {
	const char *name;
	int linktype;
} links[] = {
	{ "eth", DLT_EN10MB },
	{ "sll", DLT_LINUX_SLL },
	{ "sll2", DLT_LINUX_SLL2 },
	{ "raw", DLT_RAW },
	{ "ipv4", DLT_IPV4 },
	{ "ipv6", DLT_IPV6 },
	{ "erf", PKT_LINKTYPE_ERF },
};

struct gen_out {
	pcap_dumper_t *d;	/* NULL: print hex */
	const char *corpus;
	unsigned long n;
	long long sec, usec;
	int linktype;
};

static int write_corpus(struct gen_out *o, const uint8_t *b, size_t caplen)
{
	char path[4096];
	uint8_t sel = (uint8_t)dissect_fuzz_selector_byte(dissect_fuzz_selector(o->linktype));
	FILE *f;

	snprintf(path, sizeof(path), "%s/pkt-%05lu", o->corpus, o->n);
	f = fopen(path, "wb");
	if (!f)
		return -fs_err_env("unable to create '%s': %s", path, strerror(errno));
	if (fwrite(&sel, 1, 1, f) != 1 || (caplen && fwrite(b, caplen, 1, f) != 1)) {
		fclose(f);
		return -fs_err_env("unable to write '%s'", path);
	}
	if (fclose(f))
		return -fs_err_env("unable to write '%s'", path);
	return 0;
}

static int gen_spec(struct gen_out *o, const char *spec)
{
	static uint8_t buf[PKTGEN_MAX];
	struct pktgen g;
	unsigned long i;
	int rc;

	pktgen_init(&g, o->linktype);
	g.sec = -1;
	if ((rc = pktgen_parse(&g, spec)))
		return -rc;
	if (g.sec >= 0) {
		o->sec = g.sec;
		o->usec = g.usec;
	}
	for (i = 0; i < g.count; i++) {
		struct pcap_pkthdr h;
		size_t caplen, wirelen, len = pktgen_build(&g, buf, &caplen, &wirelen);

		if (!len)
			return usage_error("'%s': the packet is longer than %d bytes", spec, PKTGEN_MAX);
		memset(&h, 0, sizeof(h));
		h.ts.tv_sec = (time_t)o->sec;
		h.ts.tv_usec = (suseconds_t)o->usec;
		h.caplen = (bpf_u_int32)caplen;
		h.len = (bpf_u_int32)wirelen;
		if (o->d) {
			pcap_dump((u_char *)o->d, &h, buf);
		} else {
			size_t j;

			for (j = 0; j < caplen; j++)
				printf("%02x", buf[j]);
			printf("\n");
		}
		o->n++;
		if (o->corpus && (rc = write_corpus(o, buf, caplen)))
			return rc;
		if (++o->usec == 1000000) {
			o->usec = 0;
			o->sec++;
		}
		g.psn = (g.psn + 1) & ROCE_PSN_MASK;
	}
	return 0;
}

static int gen_stdin(struct gen_out *o)
{
	char line[1024];
	unsigned long lineno = 0;
	int rc;

	while (fgets(line, sizeof(line), stdin)) {
		size_t len = strlen(line);
		char *p = line;

		lineno++;
		if (len && line[len - 1] == '\n')
			line[--len] = 0;
		else if (!feof(stdin))
			return usage_error("line %lu: too long", lineno);
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '#')
			continue;
		if ((rc = gen_spec(o, p)))
			return rc;
	}
	return 0;
}

static int cmd_pcapgen(int argc, const char **argv)
{
	struct gen_out o = { .linktype = DLT_EN10MB, .sec = 1700000000 };
	const char *out = NULL;
	pcap_t *dead;
	int i, rc = 0, hex = 0;
	size_t j;

	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (!strcmp(argv[i], "--link") && i + 1 < argc) {
			i++;
			for (j = 0; j < sizeof(links) / sizeof(links[0]); j++)
				if (!strcmp(argv[i], links[j].name))
					break;
			if (j == sizeof(links) / sizeof(links[0]))
				return usage_error("--link: '%s' is not eth, sll, sll2, raw, ipv4, ipv6 or erf",
						   argv[i]);
			o.linktype = links[j].linktype;
		} else if (!strcmp(argv[i], "--corpus") && i + 1 < argc) {
			o.corpus = argv[++i];
		} else if (!strcmp(argv[i], "--hex")) {
			hex = 1;
		} else {
			break;
		}
	}
	if (i + 2 - hex > argc || (hex && o.corpus))
		return usage_error("usage: test-tool pcapgen [--link L] [--corpus DIR] OUT SPEC..., "
				   "or pcapgen --hex [--link L] SPEC...");
	if (hex) {
		for (; i < argc && !rc; i++)
			rc = !strcmp(argv[i], "-") ? gen_stdin(&o) : gen_spec(&o, argv[i]);
		return rc;
	}
	out = argv[i++];
	dead = pcap_open_dead(o.linktype, 65535);
	if (!dead)
		return -fs_err_env("pcap_open_dead failed");
	o.d = pcap_dump_open(dead, out);
	if (!o.d) {
		rc = -fs_err_env("unable to create '%s': %s", out, pcap_geterr(dead));
		pcap_close(dead);
		return rc;
	}
	for (; i < argc && !rc; i++)
		rc = !strcmp(argv[i], "-") ? gen_stdin(&o) : gen_spec(&o, argv[i]);
	if (pcap_dump_flush(o.d) && !rc)
		rc = -fs_err_env("unable to write '%s'", out);
	pcap_dump_close(o.d);
	pcap_close(dead);
	if (!rc)
		printf("packets %lu\n", o.n);
	return rc;
}

int tool_dissect(int argc, const char **argv)
{
	if (!strcmp(argv[0], "dissect-pcap"))
		return cmd_dissect_pcap(argc, argv);
	if (!strcmp(argv[0], "pcapgen"))
		return cmd_pcapgen(argc, argv);
	if (!strcmp(argv[0], "dissect-fuzz"))
		return tool_dissect_fuzz(argc, argv);
	return cmd_dissect(argc, argv);
}
