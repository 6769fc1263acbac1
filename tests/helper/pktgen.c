/* SPDX-License-Identifier: BSD-2-Clause */
/* Synthesized packets for the dissector's tests: see pktgen.h. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <pcap/dlt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../pcap/dissect.h"
#include "pktgen.h"

#define usage_error(...) fs_err_usage(__VA_ARGS__)

static const uint8_t pfc_dst[6] = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x01 };

void pktgen_init(struct pktgen *g, int linktype)
{
	static const uint8_t smac[6] = { 0x02, 0, 0, 0, 0, 0x01 };
	static const uint8_t dmac[6] = { 0x02, 0, 0, 0, 0, 0x02 };

	memset(g, 0, sizeof(*g));
	g->linktype = linktype;
	g->kind = PKTGEN_ROCE;
	memcpy(g->smac, smac, 6);
	memcpy(g->dmac, dmac, 6);
	g->tpid[0] = g->tpid[1] = g->tpid[2] = 0x8100;
	g->ifindex = 1;
	g->ipv6 = linktype == DLT_IPV6;
	if (g->ipv6) {
		inet_pton(AF_INET6, "fd00::1", g->src);
		inet_pton(AF_INET6, "fd00::2", g->dst);
	} else {
		inet_pton(AF_INET, "10.0.0.1", g->src);
		inet_pton(AF_INET, "10.0.0.2", g->dst);
	}
	g->ttl = 64;
	g->iplen = g->udplen = -1;
	g->sport = 49152;
	g->dport = ROCE_UDP_PORT;
	g->opcode = 0x04;	/* RC SEND_ONLY */
	g->pkey = 0xffff;
	g->qpn = 0x11;
	g->cut = g->wirelen = -1;
	g->count = 1;
	g->sec = 1700000000;
	g->slid = 1;
	g->dlid = 2;
	g->erftype = -1;
}

static void v1_gids(struct pktgen *g)
{
	if (!g->ipv6) {
		inet_pton(AF_INET6, "fe80::1", g->src);
		inet_pton(AF_INET6, "fe80::2", g->dst);
	}
	g->ipv6 = 1;
}

/* ---- spec words ---- */

static int parse_num(const char *key, const char *s, unsigned long long max,
		     unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-' || *v > max)
		return usage_error("%s: '%s' is not an integer in [0, %llu]", key, s, max);
	return 0;
}

/* VALUE,VALUE... into v[] (at most max of them, each at most lim) */
static int parse_list(const char *key, const char *s, unsigned long long lim,
		      unsigned long long *v, int max, int *n)
{
	char tmp[128], *tok, *save = NULL;

	if (strlen(s) >= sizeof(tmp))
		return usage_error("%s: '%s' is too long", key, s);
	strcpy(tmp, s);
	*n = 0;
	for (tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*n == max)
			return usage_error("%s: more than %d values", key, max);
		if (parse_num(key, tok, lim, &v[(*n)++]))
			return -FS_EXIT_USAGE;
	}
	if (!*n)
		return usage_error("%s: no value", key);
	return 0;
}

static int parse_mac(const char *key, const char *s, uint8_t *mac)
{
	unsigned b[6];
	char c;
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &c) != 6)
		return usage_error("%s: '%s' is not a MAC address", key, s);
	for (i = 0; i < 6; i++) {
		if (b[i] > 255)
			return usage_error("%s: '%s' is not a MAC address", key, s);
		mac[i] = (uint8_t)b[i];
	}
	return 0;
}

static int parse_addr(struct pktgen *g, const char *key, const char *s, uint8_t *a)
{
	int v6 = strchr(s, ':') != NULL;

	memset(a, 0, 16);
	if (inet_pton(v6 ? AF_INET6 : AF_INET, s, a) != 1)
		return usage_error("%s: '%s' is not an IP address", key, s);
	if (v6 && !g->ipv6)
		g->ipv6 = 1;
	return 0;
}

/* the short form of an opcode's operation name (see pktgen.h) */
static void short_name(const char *op, char *out, size_t len)
{
	static const char *const subst[][2] = {
		{ "rdma_", "" },
		{ "_with_immediate", "_imm" },
		{ "_with_invalidate", "_inv" },
		{ "_request", "_req" },
		{ "_response", "_resp" },
		{ "acknowledge", "ack" },
		{ "compare_swap", "cmp_swap" },
	};
	char tmp[64];
	size_t i;

	snprintf(out, len, "%s", op);
	for (i = 0; i < sizeof(subst) / sizeof(subst[0]); i++) {
		char *at = strstr(out, subst[i][0]);

		if (!at)
			continue;
		snprintf(tmp, sizeof(tmp), "%.*s%s%s", (int)(at - out), out, subst[i][1],
			 at + strlen(subst[i][0]));
		snprintf(out, len, "%s", tmp);
	}
}

/* TRANSPORT OP -> opcode */
static int find_opcode(const char *tr, const char *word, uint8_t *opcode)
{
	unsigned op;

	for (op = 0; op < 256; op++) {
		const char *name = roce_opcode_name(op);
		char lower[64], shrt[64];
		size_t i, tl = strlen(tr);

		if (!name || strncasecmp(name, tr, tl) || name[tl] != ' ')
			continue;
		for (i = 0; name[tl + 1 + i] && i + 1 < sizeof(lower); i++)
			lower[i] = (char)tolower((unsigned char)name[tl + 1 + i]);
		lower[i] = 0;
		short_name(lower, shrt, sizeof(shrt));
		if (!strcmp(word, lower) || !strcmp(word, shrt)) {
			*opcode = (uint8_t)op;
			return 0;
		}
	}
	return usage_error("'%s %s' is not an opcode", tr, word);
}

static int parse_ext(struct pktgen *g, const char *s)
{
	static const char *const names[] = { "hop", "rt", "dst", "frag", "ah" };
	char tmp[128], *tok, *save = NULL;
	size_t i;

	if (strlen(s) >= sizeof(tmp))
		return usage_error("ext: '%s' is too long", s);
	strcpy(tmp, s);
	g->next_ext = 0;
	for (tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (!strcmp(tok, names[i]))
				break;
		if (i == sizeof(names) / sizeof(names[0]))
			return usage_error("ext: '%s' is not hop, rt, dst, frag or ah", tok);
		if (g->next_ext == PKTGEN_MAX_EXT)
			return usage_error("ext: more than %d headers", PKTGEN_MAX_EXT);
		g->ext[g->next_ext++] = (enum pktgen_ext)i;
	}
	g->ipv6 = 1;
	return 0;
}

static int parse_nak(struct pktgen *g, const char *s)
{
	static const char *const names[] = { "seq", "inv", "access", "op", "rd" };
	unsigned long long v;
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i])) {
			g->syndrome = (uint8_t)(0x60 | i);
			return 0;
		}
	if (parse_num("nak", s, 31, &v))
		return -FS_EXIT_USAGE;
	g->syndrome = (uint8_t)(0x60 | v);
	return 0;
}

static int parse_ecn(struct pktgen *g, const char *s)
{
	static const char *const names[] = { "not", "ect1", "ect0", "ce" };
	unsigned long long v;
	size_t i;

	for (i = 0; i < 4; i++)
		if (!strcmp(s, names[i])) {
			g->ecn = (uint8_t)i;
			return 0;
		}
	if (parse_num("ecn", s, 3, &v))
		return -FS_EXIT_USAGE;
	g->ecn = (uint8_t)v;
	return 0;
}

static int parse_time(struct pktgen *g, const char *s)
{
	unsigned long long sec, frac = 0;
	char tmp[32], *dot;
	size_t n;

	if (strlen(s) >= sizeof(tmp))
		return usage_error("time: '%s' is too long", s);
	strcpy(tmp, s);
	dot = strchr(tmp, '.');
	if (dot) {
		*dot++ = 0;
		n = strlen(dot);
		if (!n || n > 6 || strspn(dot, "0123456789") != n)
			return usage_error("time: '%s' is not SEC[.FRAC] (at most 6 decimals)", s);
		frac = strtoull(dot, NULL, 10);	/* decimals: "008" is 8, not octal */
		while (n++ < 6)
			frac *= 10;
	}
	if (parse_num("time", tmp, 1ull << 32, &sec))
		return -FS_EXIT_USAGE;
	g->sec = (long long)sec;
	g->usec = (long long)frac;
	return 0;
}

/* flags (words without '=') */
static int pktgen_flag(struct pktgen *g, const char *w)
{
	if (!strcmp(w, "ipv6")) {
		if (!g->ipv6) {
			inet_pton(AF_INET6, "fd00::1", g->src);
			inet_pton(AF_INET6, "fd00::2", g->dst);
		}
		g->ipv6 = 1;
	} else if (!strcmp(w, "v1")) {
		g->v1 = 1;
		v1_gids(g);
	} else if (!strcmp(w, "ib")) {
		g->ib = 1;
	} else if (!strcmp(w, "grh")) {
		g->grh = 1;
		v1_gids(g);
	} else if (!strcmp(w, "mf")) {
		g->mf = 1;
	} else if (!strcmp(w, "se")) {
		g->se = 1;
	} else if (!strcmp(w, "m")) {
		g->m = 1;
	} else if (!strcmp(w, "ackreq")) {
		g->ackreq = 1;
	} else if (!strcmp(w, "fecn")) {
		g->fecn = 1;
	} else if (!strcmp(w, "becn")) {
		g->becn = 1;
	} else {
		return usage_error("'%s' is not a word of a packet spec", w);
	}
	return 0;
}

/* KEY=NUMBER words: where each goes and its largest value */
struct num_key {
	const char *key;
	unsigned long long max;
	size_t off;
	int size;		/* bytes of the field: 1, 2, 4, 8; 0: size_t; -1: long */
};

#define K(name, max, field) { name, max, offsetof(struct pktgen, field), \
			      (int)sizeof(((struct pktgen *)0)->field) }
#define KL(name, max, field) { name, max, offsetof(struct pktgen, field), -1 }
#define KZ(name, max, field) { name, max, offsetof(struct pktgen, field), 0 }

static const struct num_key num_keys[] = {
	K("pcp", 7, pcp),
	K("type", 0xffff, ethertype),
	K("sll_type", 0xffff, sll_type),
	K("ifindex", 0xffffffff, ifindex),
	K("ttl", 255, ttl),
	K("dscp", 63, dscp),
	K("flow", 0xfffff, flow),
	K("id", 0xffff, id),
	K("sport", 0xffff, sport),
	K("dport", 0xffff, dport),
	K("op", 255, opcode),
	K("tver", 15, tver),
	K("pad", 3, pad),
	K("pkey", 0xffff, pkey),
	K("qpn", 0xffffff, qpn),
	K("psn", 0xffffff, psn),
	K("eecnxt", 0xffffff, eecnxt),
	K("qkey", 0xffffffff, qkey),
	K("sqpn", 0xffffff, sqpn),
	K("xrcsrq", 0xffffff, xrcsrq),
	K("feth", 0xffffffff, feth),
	K("va", ~0ull, va),
	K("rkey", 0xffffffff, rkey),
	K("dmalen", 0xffffffff, dmalen),
	K("swap", ~0ull, swap),
	K("cmp", ~0ull, cmp),
	K("syndrome", 255, syndrome),
	K("msn", 0xffffff, msn),
	K("orig", ~0ull, orig),
	K("imm", 0xffffffff, imm),
	K("quanta", 0xffff, quanta),
	K("slid", 0xffff, slid),
	K("dlid", 0xffff, dlid),
	K("sl", 15, sl),
	K("vl", 15, vl),
	K("erfext", PKT_MAX_ERF_EXT + 2, erfext),
	K("erfpad", 64, erfpad),
	K("erftype", 127, erftype),
	KZ("len", PKTGEN_MAX, len),
	KL("cut", 65535, cut),
	KL("wirelen", 65535, wirelen),
	KL("iplen", 65535, iplen),
	KL("udplen", 65535, udplen),
	K("count", 1000000, count),
	{ NULL, 0, 0, 0 }
};

static void set_num(struct pktgen *g, const struct num_key *k, unsigned long long v)
{
	char *at = (char *)g + k->off;

	switch (k->size) {
	case 1: { uint8_t x = (uint8_t)v; memcpy(at, &x, 1); break; }
	case 2: { uint16_t x = (uint16_t)v; memcpy(at, &x, 2); break; }
	case 4: { uint32_t x = (uint32_t)v; memcpy(at, &x, 4); break; }
	case 8: { uint64_t x = v; memcpy(at, &x, 8); break; }
	case 0: { size_t x = (size_t)v; memcpy(at, &x, sizeof(x)); break; }
	default: { long x = (long)v; memcpy(at, &x, sizeof(x)); break; }
	}
}

int pktgen_word(struct pktgen *g, const char *w)
{
	const char *eq = strchr(w, '=');
	const struct num_key *k;
	unsigned long long v, list[8];
	char key[32];
	int n = 0, i;

	if (!eq)
		return pktgen_flag(g, w);
	if ((size_t)(eq - w) >= sizeof(key))
		return usage_error("'%s' is not a word of a packet spec", w);
	memcpy(key, w, (size_t)(eq - w));
	key[eq - w] = 0;
	eq++;
	if (!strcmp(key, "src"))
		return parse_addr(g, key, eq, g->src);
	if (!strcmp(key, "dst"))
		return parse_addr(g, key, eq, g->dst);
	if (!strcmp(key, "smac"))
		return parse_mac(key, eq, g->smac);
	if (!strcmp(key, "dmac"))
		return parse_mac(key, eq, g->dmac);
	if (!strcmp(key, "ecn"))
		return parse_ecn(g, eq);
	if (!strcmp(key, "ext"))
		return parse_ext(g, eq);
	if (!strcmp(key, "nak"))
		return parse_nak(g, eq);
	if (!strcmp(key, "time"))
		return parse_time(g, eq);
	if (!strcmp(key, "vlan") || !strcmp(key, "tpid") || !strcmp(key, "prio")) {
		int prio = key[0] == 'p';

		if (parse_list(key, eq, prio ? 7 : key[0] == 'v' ? 4095 : 0xffff, list,
			       prio ? 8 : 3, &n))
			return -FS_EXIT_USAGE;
		for (i = 0; i < n; i++) {
			if (prio)
				g->prio_enable |= (uint8_t)(1u << list[i]);
			else if (key[0] == 'v')
				g->vlan[i] = (uint16_t)list[i];
			else
				g->tpid[i] = (uint16_t)list[i];
		}
		if (key[0] == 'v')
			g->tags = n;
		return 0;
	}
	if (!strcmp(key, "rnr") || !strcmp(key, "credits")) {
		if (parse_num(key, eq, 31, &v))
			return -FS_EXIT_USAGE;
		g->syndrome = (uint8_t)((key[0] == 'r' ? 0x20 : 0) | v);
		return 0;
	}
	if (!strcmp(key, "ipopts")) {
		if (parse_num(key, eq, 40, &v) || v % 4)
			return usage_error("ipopts: '%s' is not a multiple of 4 up to 40", eq);
		g->ipopts = (unsigned)v;
		return 0;
	}
	if (!strcmp(key, "frag")) {
		if (parse_num(key, eq, 65528, &v) || v % 8)
			return usage_error("frag: '%s' is not a multiple of 8 up to 65528", eq);
		g->frag = (uint32_t)v;
		return 0;
	}
	for (k = num_keys; k->key; k++)
		if (!strcmp(k->key, key))
			break;
	if (!k->key)
		return usage_error("'%s' is not a word of a packet spec", w);
	if (parse_num(key, eq, k->max, &v))
		return -FS_EXIT_USAGE;
	set_num(g, k, v);
	return 0;
}

static int is_transport(const char *w)
{
	return !strcmp(w, "rc") || !strcmp(w, "uc") || !strcmp(w, "rd") || !strcmp(w, "ud") ||
	       !strcmp(w, "xrc");
}

int pktgen_parse(struct pktgen *g, const char *spec)
{
	char tmp[1024], *tok, *save = NULL, tr[8];
	int rc;

	if (strlen(spec) >= sizeof(tmp))
		return usage_error("packet spec too long: '%.40s...'", spec);
	strcpy(tmp, spec);
	tok = strtok_r(tmp, " \t", &save);
	if (!tok)
		return usage_error("empty packet spec");
	if (is_transport(tok)) {
		snprintf(tr, sizeof(tr), "%s", tok);
		tok = strtok_r(NULL, " \t", &save);
		if (!tok)
			return usage_error("'%s' wants an opcode name", tr);
		if (find_opcode(tr, tok, &g->opcode))
			return -FS_EXIT_USAGE;
	} else if (!strcmp(tok, "ack")) {
		g->opcode = 0x11;
	} else if (!strcmp(tok, "cnp")) {
		g->opcode = ROCE_OP_CNP;
	} else if (!strcmp(tok, "bth")) {
		g->kind = PKTGEN_ROCE;
	} else if (!strcmp(tok, "udp")) {
		g->kind = PKTGEN_UDP;
		g->dport = 53;
	} else if (!strcmp(tok, "tcp")) {
		g->kind = PKTGEN_TCP;
		g->dport = 80;
	} else if (!strcmp(tok, "pfc") || !strcmp(tok, "pause")) {
		g->kind = tok[1] == 'f' ? PKTGEN_PFC : PKTGEN_PAUSE;
		memcpy(g->dmac, pfc_dst, 6);
	} else if (!strcmp(tok, "eth")) {
		g->kind = PKTGEN_ETHER;
		g->ethertype = 0x88b5;	/* local experimental */
	} else {
		return usage_error("'%s' is not a packet kind (rc|uc|rd|ud|xrc OP, ack, cnp, bth, "
				   "udp, tcp, pfc, pause, eth)", tok);
	}
	while ((tok = strtok_r(NULL, " \t", &save)))
		if ((rc = pktgen_word(g, tok)))
			return rc;
	if ((g->kind == PKTGEN_PFC || g->kind == PKTGEN_PAUSE || g->kind == PKTGEN_ETHER ||
	     g->tags || g->v1) && g->linktype != DLT_EN10MB && g->linktype != DLT_LINUX_SLL &&
	    g->linktype != DLT_LINUX_SLL2 && !(g->linktype == PKT_LINKTYPE_ERF && !g->ib))
		return usage_error("'%s': no link layer to carry it", spec);
	if ((g->ib || g->grh) && (!g->ib || g->linktype != PKT_LINKTYPE_ERF || g->kind != PKTGEN_ROCE || g->v1 || g->tags))
		return usage_error("'%s': ib and grh are InfiniBand RoCE packets in ERF records (--link erf)", spec);
	if (g->ipv6 && g->linktype == DLT_IPV4)
		return usage_error("'%s': IPv6 on an IPv4 link", spec);
	if (!g->ipv6 && g->linktype == DLT_IPV6)
		return usage_error("'%s': IPv4 on an IPv6 link", spec);
	return 0;
}

/* ---- building ---- */

struct wbuf {
	uint8_t *b;
	size_t off;
	int over;
};

static void put8(struct wbuf *w, unsigned v)
{
	if (w->off >= PKTGEN_MAX) {
		w->over = 1;
		return;
	}
	w->b[w->off++] = (uint8_t)v;
}

static void put16(struct wbuf *w, unsigned v)
{
	put8(w, v >> 8);
	put8(w, v);
}

static void put24(struct wbuf *w, uint32_t v)
{
	put8(w, v >> 16);
	put16(w, v & 0xffff);
}

static void put32(struct wbuf *w, uint32_t v)
{
	put16(w, v >> 16);
	put16(w, v & 0xffff);
}

static void put64(struct wbuf *w, uint64_t v)
{
	put32(w, (uint32_t)(v >> 32));
	put32(w, (uint32_t)v);
}

static void putn(struct wbuf *w, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		put8(w, p[i]);
}

static void fill(struct wbuf *w, size_t n, unsigned v)
{
	size_t i;

	for (i = 0; i < n; i++)
		put8(w, v == 256 ? i & 0xff : v);
}

static void patch16(struct wbuf *w, size_t at, unsigned v)
{
	if (at + 2 <= PKTGEN_MAX) {
		w->b[at] = (uint8_t)(v >> 8);
		w->b[at + 1] = (uint8_t)v;
	}
}

static uint16_t ip_csum(const uint8_t *p, size_t n)
{
	uint32_t s = 0;
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* the tags after the link header's protocol field: TCI and the next type each */
static void put_tags(struct wbuf *w, const struct pktgen *g, uint16_t type)
{
	int i;

	for (i = 0; i < g->tags; i++) {
		put16(w, (unsigned)g->pcp << 13 | g->vlan[i]);
		put16(w, i + 1 < g->tags ? g->tpid[i + 1] : type);
	}
}

static void put_link(struct wbuf *w, const struct pktgen *g, uint16_t type)
{
	uint16_t first = g->tags ? g->tpid[0] : type;

	switch (g->linktype) {
	case PKT_LINKTYPE_ERF:	/* an Ethernet record */
	case DLT_EN10MB:
		putn(w, g->dmac, 6);
		putn(w, g->smac, 6);
		put16(w, first);
		break;
	case DLT_LINUX_SLL:
		put16(w, (unsigned)g->sll_type);
		put16(w, 1);	/* ARPHRD_ETHER */
		put16(w, 6);
		putn(w, g->smac, 6);
		fill(w, 2, 0);
		put16(w, first);
		break;
	case DLT_LINUX_SLL2:
		put16(w, first);
		put16(w, 0);
		put32(w, g->ifindex);
		put16(w, 1);
		put8(w, (unsigned)g->sll_type);
		put8(w, 6);
		putn(w, g->smac, 6);
		fill(w, 2, 0);
		break;
	default:
		return;		/* raw IP */
	}
	put_tags(w, g, type);
}

static unsigned ext_proto(enum pktgen_ext e)
{
	static const unsigned protos[] = { 0, 43, 60, 44, 51 };

	return protos[e];
}

static void put_ipv6_ext(struct wbuf *w, const struct pktgen *g)
{
	int i;

	for (i = 0; i < g->next_ext; i++) {
		unsigned next = i + 1 < g->next_ext ? ext_proto(g->ext[i + 1]) : 17;

		put8(w, next);
		switch (g->ext[i]) {
		case PKTGEN_HOP:
		case PKTGEN_DST:
			put8(w, 0);		/* 8 bytes */
			put8(w, 1);		/* PadN */
			put8(w, 4);
			fill(w, 4, 0);
			break;
		case PKTGEN_RT:
			put8(w, 0);
			put8(w, 0);		/* routing type 0 */
			put8(w, 0);		/* segments left */
			fill(w, 4, 0);
			break;
		case PKTGEN_FRAG:
			put8(w, 0);
			put16(w, g->frag | (unsigned)g->mf);
			put32(w, g->id);
			break;
		case PKTGEN_AH:
			put8(w, 1);		/* (1 + 2) x 4 = 12 bytes */
			put16(w, 0);
			put32(w, 0x100);	/* SPI */
			put32(w, 1);		/* sequence */
			break;
		}
	}
}

static void put_roce_hdrs(struct wbuf *w, const struct pktgen *g)
{
	unsigned hdrs = roce_opcode_headers(g->opcode);

	put8(w, g->opcode);
	put8(w, (unsigned)g->se << 7 | (unsigned)g->m << 6 | (unsigned)g->pad << 4 | g->tver);
	put16(w, g->pkey);
	put8(w, (unsigned)g->fecn << 7 | (unsigned)g->becn << 6);
	put24(w, g->qpn);
	put8(w, (unsigned)g->ackreq << 7);
	put24(w, g->psn);
	if (hdrs & PKT_BIT(PKT_L_RDETH))
		put32(w, g->eecnxt);
	if (hdrs & PKT_BIT(PKT_L_DETH)) {
		put32(w, g->qkey);
		put32(w, g->sqpn);
	}
	if (hdrs & PKT_BIT(PKT_L_XRCETH))
		put32(w, g->xrcsrq);
	if (hdrs & PKT_BIT(PKT_L_FETH))
		put32(w, g->feth);
	if (hdrs & PKT_BIT(PKT_L_RETH)) {
		put64(w, g->va);
		put32(w, g->rkey);
		put32(w, g->dmalen);
	}
	if (hdrs & PKT_BIT(PKT_L_ATOMICETH)) {
		put64(w, g->va);
		put32(w, g->rkey);
		put64(w, g->swap);
		put64(w, g->cmp);
	}
	if (hdrs & PKT_BIT(PKT_L_AETH)) {
		put8(w, g->syndrome);
		put24(w, g->msn);
	}
	if (hdrs & PKT_BIT(PKT_L_ATOMICACKETH))
		put64(w, g->orig);
	if (hdrs & PKT_BIT(PKT_L_IMMDT))
		put32(w, g->imm);
	if (hdrs & PKT_BIT(PKT_L_IETH))
		put32(w, g->rkey);
	if (hdrs & PKT_BIT(PKT_L_CNP))
		fill(w, ROCE_CNP_LEN, 0);
}

static void put_ip(struct wbuf *w, const struct pktgen *g)
{
	size_t ip_off = w->off, udp_off;
	int roce = g->kind == PKTGEN_ROCE;

	if (g->ipv6) {
		put32(w, 6u << 28 | (unsigned)(g->dscp << 2 | g->ecn) << 20 | g->flow);
		put16(w, 0);	/* payload length, below */
		put8(w, g->next_ext ? ext_proto(g->ext[0]) : g->kind == PKTGEN_TCP ? 6 : 17);
		put8(w, g->ttl);
		putn(w, g->src, 16);
		putn(w, g->dst, 16);
		put_ipv6_ext(w, g);
	} else {
		put8(w, 0x40 | (5 + g->ipopts / 4));
		put8(w, (unsigned)g->dscp << 2 | g->ecn);
		put16(w, 0);	/* total length, below */
		put16(w, g->id);
		put16(w, g->frag / 8 | (g->mf ? 0x2000u : 0));
		put8(w, g->ttl);
		put8(w, g->kind == PKTGEN_TCP ? 6 : 17);
		put16(w, 0);	/* checksum, below */
		putn(w, g->src, 4);
		putn(w, g->dst, 4);
		fill(w, g->ipopts, 1);	/* NOP options */
	}
	udp_off = w->off;
	put16(w, g->sport);
	put16(w, g->dport);
	if (g->kind == PKTGEN_TCP) {
		put32(w, 1000 + g->psn);	/* sequence */
		put32(w, 1);		/* acknowledgment */
		put16(w, 5u << 12 | 0x10);	/* data offset 5, ACK */
		put16(w, 65535);	/* window */
		put32(w, 0);		/* checksum (not computed), urgent pointer */
	} else {
		put16(w, 0);		/* length, below */
		put16(w, 0);		/* no checksum (RoCEv2 sends 0) */
	}
	if (roce)
		put_roce_hdrs(w, g);
	fill(w, g->len, 256);
	if (roce) {
		fill(w, g->pad, 0);
		fill(w, ROCE_ICRC_LEN, 0);
	}
	if (w->over)
		return;
	if (g->kind != PKTGEN_TCP)
		patch16(w, udp_off + 4, g->udplen >= 0 ? (unsigned)g->udplen : (unsigned)(w->off - udp_off));
	if (g->ipv6) {
		patch16(w, ip_off + 4, g->iplen >= 0 ? (unsigned)g->iplen :
			(unsigned)(w->off - ip_off - PKT_IPV6_LEN));
	} else {
		patch16(w, ip_off + 2, g->iplen >= 0 ? (unsigned)g->iplen :
			(unsigned)(w->off - ip_off));
		patch16(w, ip_off + 10, ip_csum(w->b + ip_off, PKT_IPV4_LEN + g->ipopts));
	}
}

/* a GRH (40 bytes) with the GIDs; its PayLen patched at *paylen_at */
static void put_grh(struct wbuf *w, const struct pktgen *g, size_t *paylen_at)
{
	put32(w, 6u << 28 | (unsigned)(g->dscp << 2 | g->ecn) << 20 | g->flow);
	*paylen_at = w->off;
	put16(w, 0);
	put8(w, PKT_GRH_NXT_IBA);
	put8(w, g->ttl);
	putn(w, g->src, 16);
	putn(w, g->dst, 16);
}

/* the BTH and what follows it: headers, payload, pad, ICRC */
static void put_transport(struct wbuf *w, const struct pktgen *g)
{
	put_roce_hdrs(w, g);
	fill(w, g->len, 256);
	fill(w, g->pad, 0);
	fill(w, ROCE_ICRC_LEN, 0);
}

/* RoCE v1: Ethernet type 0x8915, the GRH, the transport */
static void put_v1(struct wbuf *w, const struct pktgen *g)
{
	size_t at, start;

	put_link(w, g, PKT_ETHERTYPE_ROCE_V1);
	put_grh(w, g, &at);
	start = w->off;
	put_transport(w, g);
	if (!w->over)
		patch16(w, at, (unsigned)(w->off - start));
}

/* InfiniBand: the LRH, a GRH with grh, the transport, the VCRC */
static void put_ib(struct wbuf *w, const struct pktgen *g)
{
	size_t lrh = w->off, at = 0, start = 0;

	put8(w, (unsigned)g->vl << 4);	/* LVer 0 */
	put8(w, (unsigned)g->sl << 4 | (g->grh ? 3u : 2u));
	put16(w, g->dlid);
	put16(w, 0);		/* PktLen, below */
	put16(w, g->slid);
	if (g->grh)
		put_grh(w, g, &at);
	start = w->off;
	put_transport(w, g);
	if (w->over)
		return;
	patch16(w, lrh + 4, (unsigned)((w->off - lrh) / 4) & 0x7ff);
	if (g->grh)
		patch16(w, at, (unsigned)(w->off - start));
	fill(w, 2, 0);		/* VCRC */
}

size_t pktgen_build(const struct pktgen *g, uint8_t *buf, size_t *caplen, size_t *wirelen)
{
	struct wbuf w = { .b = buf };
	size_t frame = 0;
	unsigned e;
	int i, erf = g->linktype == PKT_LINKTYPE_ERF;

	if (erf) {		/* the ERF header: rlen and wlen patched below */
		int type = g->erftype >= 0 ? g->erftype : g->ib ? PKT_ERF_TYPE_INFINIBAND : PKT_ERF_TYPE_ETH;

		put64(&w, 0);	/* timestamp (the pcap record's is used) */
		put8(&w, (unsigned)type | (g->erfext ? 0x80u : 0));
		put8(&w, 0x04);	/* flags: varying record length */
		put16(&w, 0);
		put16(&w, 0);
		put16(&w, 0);
		for (e = 0; e < g->erfext; e++) {
			put8(&w, (e + 1 < g->erfext ? 0x80u : 0) | 0x03);	/* a flow-id-like header */
			fill(&w, 7, 0x11);
		}
		if (!g->ib)
			fill(&w, PKT_ERF_ETH_PAD, 0);
		frame = w.off;
	}
	switch (g->kind) {
	case PKTGEN_PFC:
		put_link(&w, g, MACCTL_ETHERTYPE);
		put16(&w, MACCTL_OP_PFC);
		put8(&w, 0);
		put8(&w, g->prio_enable);
		for (i = 0; i < MACCTL_PRIOS; i++)
			put16(&w, g->prio_enable & (1u << i) ? g->quanta : 0);
		break;
	case PKTGEN_PAUSE:
		put_link(&w, g, MACCTL_ETHERTYPE);
		put16(&w, MACCTL_OP_PAUSE);
		put16(&w, g->quanta);
		break;
	case PKTGEN_ETHER:
		put_link(&w, g, g->ethertype);
		fill(&w, g->len, 256);
		break;
	default:
		if (g->ib) {
			put_ib(&w, g);
			break;
		}
		if (g->v1) {
			put_v1(&w, g);
			break;
		}
		put_link(&w, g, g->ipv6 ? 0x86dd : 0x0800);
		put_ip(&w, g);
		break;
	}
	if ((g->linktype == DLT_EN10MB || (erf && !g->ib)) && w.off - frame < MACCTL_MIN_FRAME)
		fill(&w, MACCTL_MIN_FRAME - (w.off - frame), 0);
	if (erf) {
		size_t flen = w.off - frame;

		fill(&w, g->erfpad, 0);
		if (!w.over) {
			patch16(&w, 10, (unsigned)w.off);	/* rlen */
			patch16(&w, 14, (unsigned)flen);	/* wlen */
		}
	}
	if (w.over)
		return 0;
	*caplen = g->cut >= 0 && (size_t)g->cut < w.off ? (size_t)g->cut : w.off;
	*wirelen = g->wirelen >= 0 ? (size_t)g->wirelen : w.off;
	return w.off;
}
