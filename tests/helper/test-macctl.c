/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tool macctl, macctl-fuzz: pcap/macctl.c (tests/t0220-unit-macctl.t).
 *
 *   macctl [--wirelen N] [--link-gbps G] [--cuts] HEX
 *                                dissect the frame (hex digits; spaces, ':', '.'
 *                                and '-' are skipped) from a heap buffer of
 *                                exactly its length; one field per line:
 *                                kind, needed, at, caplen, wirelen, dst, src,
 *                                tags, vlan, pcp, ethertype, opcode, enable,
 *                                reserved, quanta, flags ("-" where it has
 *                                none); --link-gbps: then time_s, the quanta
 *                                in seconds at G Gb/s (macctl_quanta_seconds);
 *                                --cuts: instead, for every length L from 0
 *                                to the frame's, the frame cut there: "L
 *                                truncated NEEDED AT", "L whole" (the result
 *                                of the whole frame) or "L KIND differs"
 *   macctl-fuzz N SEED           N random and mutated frames, each in a heap
 *                                buffer of exactly its captured length, the
 *                                result checked against a second, simpler
 *                                walk of the bytes and against the frame cut
 *                                at the end of the fields it used; prints the
 *                                count per kind, exits 1 on a broken invariant
 *
 * Exit codes: 0 ok, 1 a check failed, 2 usage, 3 environment.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../pcap/macctl.h"
#include "test-tool.h"


#define FRAME_MAX 256

static int parse_double(const char *opt, const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	if (errno || end == s || *end || !(*v >= 0) || !isfinite(*v))
		return usage_error("%s: '%s' is not a non-negative number", opt, s);
	return 0;
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* ---- macctl ---- */

static void print_macctl(const struct macctl *m, size_t caplen, size_t wirelen, double gbps)
{
	int tr = m->kind == MACCTL_TRUNCATED, mc = m->kind != MACCTL_NOT && !tr;
	char buf[64];
	int i;

	printf("kind %s\n", macctl_kind_name(m->kind));
	if (tr)
		printf("needed %zu\nat %s\n", m->needed, m->at);
	else
		printf("needed -\nat -\n");
	printf("caplen %zu\nwirelen %zu\n", caplen, wirelen);
	if (tr) {
		printf("dst -\nsrc -\ntags -\nvlan -\npcp -\nethertype -\n");
	} else {
		printf("dst %s\n", tool_mac_str(m->dst, buf, sizeof(buf)));
		printf("src %s\n", tool_mac_str(m->src, buf, sizeof(buf)));
		printf("tags %d\n", m->tags);
		if (m->vlan < 0)
			printf("vlan -\npcp -\n");
		else
			printf("vlan %d\npcp %d\n", m->vlan, m->pcp);
		printf("ethertype 0x%04x\n", m->ethertype);
	}
	if (mc)
		printf("opcode 0x%04x %s\n", m->opcode,
		       macctl_opcode_name(m->opcode) ? macctl_opcode_name(m->opcode) : "unknown");
	else
		printf("opcode -\n");
	if (m->kind == MACCTL_PFC) {
		printf("enable 0x%02x", m->enable);
		for (i = 0; i < MACCTL_PRIOS; i++)
			if (m->enable & (1u << i))
				printf(" %d", i);
		printf("\nreserved 0x%02x\nquanta", m->reserved);
		for (i = 0; i < MACCTL_PRIOS; i++)
			printf(" %u", m->quanta[i]);
		printf("\n");
	} else if (m->kind == MACCTL_PAUSE) {
		printf("enable -\nreserved -\nquanta %u\n", m->quanta[0]);
	} else {
		printf("enable -\nreserved -\nquanta -\n");
	}
	printf("flags %s\n", tr ? "-" : macctl_flags_str(m->flags, buf, sizeof(buf)));
	if (gbps < 0)
		return;
	printf("time_s");
	if (m->kind == MACCTL_PFC)
		for (i = 0; i < MACCTL_PRIOS; i++)
			printf(" %.9g", macctl_quanta_seconds(m->quanta[i], gbps));
	else if (m->kind == MACCTL_PAUSE)
		printf(" %.9g", macctl_quanta_seconds(m->quanta[0], gbps));
	else
		printf(" -");
	printf("\n");
}

static void parse_copy(const uint8_t *b, size_t len, size_t wirelen, struct macctl *m);

/* The frame cut at every length from 0 to its own, each from a heap buffer of that length */
static void print_cuts(const uint8_t *b, size_t len, size_t wirelen, const struct macctl *whole)
{
	struct macctl m;
	size_t l;

	for (l = 0; l <= len; l++) {
		parse_copy(b, l, wirelen, &m);
		if (m.kind == MACCTL_TRUNCATED)
			printf("%zu truncated %zu %s\n", l, m.needed, m.at);
		else if (!memcmp(&m, whole, sizeof(m)))
			printf("%zu whole\n", l);
		else
			printf("%zu %s differs\n", l, macctl_kind_name(m.kind));
	}
}

static int cmd_macctl(int argc, const char **argv)
{
	unsigned long wl = 0;
	double gbps = -1;
	int have_wl = 0, cuts = 0, rc;
	const char *hex = NULL;
	struct macctl m;
	uint8_t *b = NULL;
	size_t len = 0;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--wirelen") && i + 1 < argc) {
			if (tool_parse_ulong("--wirelen", argv[++i], 65535, &wl))
				return FS_EXIT_USAGE;
			have_wl = 1;
		} else if (!strcmp(argv[i], "--cuts")) {
			cuts = 1;
		} else if (!strcmp(argv[i], "--link-gbps") && i + 1 < argc) {
			if (parse_double("--link-gbps", argv[++i], &gbps))
				return FS_EXIT_USAGE;
		} else if (!hex) {
			hex = argv[i];
		} else {
			hex = NULL;
			break;
		}
	}
	if (!hex)
		return usage_error("usage: test-tool macctl [--wirelen N] [--link-gbps G] [--cuts] HEX");
	rc = tool_parse_hex(hex, &b, &len);
	if (rc)
		return rc;
	if (!have_wl)
		wl = len;
	macctl_parse(b, len, wl, &m);
	if (cuts)
		print_cuts(b, len, wl, &m);
	else
		print_macctl(&m, len, wl, gbps);
	free(b);
	return 0;
}

/* ---- macctl-fuzz ---- */

static unsigned rng_below(uint64_t *s, unsigned n)
{
	return n ? (unsigned)(tool_rand(s) % n) : 0;
}

static int is_tpid(unsigned t)
{
	return t == 0x8100 || t == 0x88a8 || t == 0x9100;
}

/*
 * The expected result, from a walk of the bytes written apart from
 * macctl.c: offsets counted by hand, every read preceded by a length check.
 */
struct ref {
	enum macctl_kind kind;
	size_t needed;		/* truncated: bytes wanted; else the end of the fields used */
	int tags, vlan, pcp, too_many;
	unsigned type, op;
	size_t body;		/* where the PFC/PAUSE fields start */
};

static void ref_walk(const uint8_t *b, size_t len, struct ref *r)
{
	size_t off = 14;
	unsigned type;

	memset(r, 0, sizeof(*r));
	r->vlan = r->pcp = -1;
	r->kind = MACCTL_TRUNCATED;
	if (len < 14) {
		r->needed = 14;
		return;
	}
	type = be16(b + 12);
	while (is_tpid(type)) {
		if (r->tags == 2) {
			r->too_many = 1;
			break;
		}
		if (len < off + 4) {
			r->needed = off + 4;
			return;
		}
		if (!r->tags) {
			r->pcp = b[off] >> 5;
			r->vlan = be16(b + off) & 0xfff;
		}
		type = be16(b + off + 2);
		off += 4;
		r->tags++;
	}
	r->type = type;
	if (type != 0x8808) {
		r->kind = MACCTL_NOT;
		r->needed = off;
		return;
	}
	if (len < off + 2) {
		r->needed = off + 2;
		return;
	}
	r->op = be16(b + off);
	off += 2;
	r->body = off;
	if (r->op == 0x0101)
		r->needed = off + 18;
	else if (r->op == 0x0001)
		r->needed = off + 2;
	else
		r->needed = off;
	if (len < r->needed)
		return;
	r->kind = r->op == 0x0101 ? MACCTL_PFC : r->op == 0x0001 ? MACCTL_PAUSE : MACCTL_OTHER;
}

static const uint8_t std_dst[6] = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x01 };

/* m, from buf[0..len) on a wire of wirelen bytes, against the walk r */
static int check_result(unsigned long it, const uint8_t *b, size_t len, size_t wirelen,
			const struct macctl *m, const struct ref *r)
{
	struct macctl zero;
	unsigned want_flags = 0;
	int i;

	if (m->kind != r->kind)
		return check_failed("frame %lu (%zu bytes): kind %s, expected %s", it, len,
				    macctl_kind_name(m->kind), macctl_kind_name(r->kind));
	if (m->kind == MACCTL_TRUNCATED) {
		memset(&zero, 0, sizeof(zero));
		zero.kind = MACCTL_TRUNCATED;
		zero.vlan = zero.pcp = -1;
		zero.needed = m->needed;
		zero.at = m->at;
		if (m->needed != r->needed || m->needed <= len || !m->at)
			return check_failed("frame %lu (%zu bytes): truncated needing %zu (at %s), expected %zu",
					    it, len, m->needed, m->at ? m->at : "NULL", r->needed);
		if (memcmp(&zero, m, sizeof(zero)))
			return check_failed("frame %lu: a truncated result has fields", it);
		return 0;
	}
	if (m->needed || m->at)
		return check_failed("frame %lu: %s result with needed %zu", it,
				    macctl_kind_name(m->kind), m->needed);
	if (memcmp(m->dst, b, 6) || memcmp(m->src, b + 6, 6))
		return check_failed("frame %lu: addresses differ from the frame's", it);
	if (m->tags != r->tags || m->vlan != r->vlan || m->pcp != r->pcp ||
	    m->ethertype != r->type)
		return check_failed("frame %lu: tags %d vlan %d pcp %d type 0x%04x, expected %d %d %d 0x%04x",
				    it, m->tags, m->vlan, m->pcp, m->ethertype,
				    r->tags, r->vlan, r->pcp, r->type);
	if (r->too_many)
		want_flags |= MACCTL_F_TAGS;
	if (wirelen < 60)
		want_flags |= MACCTL_F_SHORT;
	if (m->kind != MACCTL_NOT && memcmp(b, std_dst, 6))
		want_flags |= MACCTL_F_DST;
	if (m->kind == MACCTL_PFC && b[r->body])
		want_flags |= MACCTL_F_RESERVED;
	if (m->flags != want_flags)
		return check_failed("frame %lu: flags 0x%x, expected 0x%x", it, m->flags, want_flags);
	if (m->kind == MACCTL_NOT && m->opcode)
		return check_failed("frame %lu: not MAC control, with opcode 0x%04x", it, m->opcode);
	if (m->kind != MACCTL_NOT && m->opcode != r->op)
		return check_failed("frame %lu: opcode 0x%04x, expected 0x%04x", it, m->opcode, r->op);
	if ((m->kind == MACCTL_PFC) != (m->opcode == MACCTL_OP_PFC && m->kind != MACCTL_NOT) ||
	    (m->kind == MACCTL_PAUSE) != (m->opcode == MACCTL_OP_PAUSE && m->kind != MACCTL_NOT))
		return check_failed("frame %lu: kind %s with opcode 0x%04x", it,
				    macctl_kind_name(m->kind), m->opcode);
	if (m->kind == MACCTL_PFC) {
		if (m->reserved != b[r->body] || m->enable != b[r->body + 1])
			return check_failed("frame %lu: enable vector differs", it);
		for (i = 0; i < 8; i++)
			if (m->quanta[i] != be16(b + r->body + 2 + 2 * i))
				return check_failed("frame %lu: time[%d] %u, frame says %u", it, i,
						    m->quanta[i], be16(b + r->body + 2 + 2 * i));
	} else {
		if (m->enable || m->reserved)
			return check_failed("frame %lu: %s with an enable vector", it,
					    macctl_kind_name(m->kind));
		for (i = m->kind == MACCTL_PAUSE; i < 8; i++)
			if (m->quanta[i])
				return check_failed("frame %lu: %s with time[%d]", it,
						    macctl_kind_name(m->kind), i);
		if (m->kind == MACCTL_PAUSE && m->quanta[0] != be16(b + r->body))
			return check_failed("frame %lu: pause time %u, frame says %u", it,
					    m->quanta[0], be16(b + r->body));
	}
	return 0;
}

/* parse b[0..len) from a heap copy of exactly len bytes */
static void parse_copy(const uint8_t *b, size_t len, size_t wirelen, struct macctl *m)
{
	uint8_t *copy = len ? malloc(len) : NULL;

	if (len && !copy) {
		fs_err_env("out of memory");
		exit(FS_EXIT_ENV);
	}
	if (len)
		memcpy(copy, b, len);
	macctl_parse(copy, len, wirelen, m);
	free(copy);
}

/* A valid frame to start from: PFC, PAUSE, another opcode or ethertype, 0 to 3 tags. */
static size_t gen_frame(uint64_t *s, uint8_t *b)
{
	static const unsigned tpid[] = { 0x8100, 0x88a8, 0x9100 };
	static const unsigned ops[] = { 0x0002, 0x0003, 0x0006, 0xfffe, 0x0000, 0x0100, 0x0102 };
	size_t off = 12, len, i;
	unsigned tags = rng_below(s, 10), pick = rng_below(s, 20), t;

	tags = tags < 5 ? 0 : tags < 8 ? 1 : tags < 9 ? 2 : 3;
	memset(b, 0, FRAME_MAX);
	if (rng_below(s, 8))
		memcpy(b, std_dst, 6);
	else
		for (i = 0; i < 6; i++)
			b[i] = (uint8_t)tool_rand(s);
	for (i = 6; i < 12; i++)
		b[i] = (uint8_t)tool_rand(s);
	for (t = 0; t < tags; t++) {
		put16(b + off, tpid[rng_below(s, 3)]);
		put16(b + off + 2, (unsigned)tool_rand(s));
		off += 4;
	}
	put16(b + off, pick < 18 ? 0x8808 : pick == 18 ? 0x0800 : (unsigned)tool_rand(s));
	off += 2;
	pick = rng_below(s, 20);
	put16(b + off, pick < 10 ? 0x0101 : pick < 16 ? 0x0001 :
		       pick < 19 ? ops[rng_below(s, 7)] : (unsigned)tool_rand(s));
	off += 2;
	/* the body: a vector with now and then the reserved byte set, times of every size */
	b[off] = rng_below(s, 10) ? 0 : (uint8_t)tool_rand(s);
	b[off + 1] = (uint8_t)tool_rand(s);
	for (i = 0; i < 8; i++) {
		static const unsigned times[] = { 0, 1, 0xffff, 0x8000, 1000 };

		put16(b + off + 2 + 2 * i, rng_below(s, 2) ? times[rng_below(s, 5)] :
							    (unsigned)tool_rand(s));
	}
	len = 60;
	if (!rng_below(s, 4))
		len += rng_below(s, 68);
	return len;
}

static size_t mutate(uint64_t *s, uint8_t *b, size_t len, size_t *wirelen)
{
	unsigned what = rng_below(s, 6), n, i;

	*wirelen = len;
	switch (what) {
	case 0:		/* as generated */
		break;
	case 1:		/* bits flipped */
		n = 1 + rng_below(s, 4);
		for (i = 0; i < n; i++)
			b[rng_below(s, (unsigned)len)] ^= (uint8_t)(1u << rng_below(s, 8));
		break;
	case 2:		/* bytes replaced, mostly in the headers */
		n = 1 + rng_below(s, 4);
		for (i = 0; i < n; i++)
			b[rng_below(s, rng_below(s, 2) ? 40 : (unsigned)len)] = (uint8_t)tool_rand(s);
		break;
	case 3:		/* cut by the snaplen: the wire length stays */
		len = rng_below(s, (unsigned)len + 1);
		break;
	case 4:		/* extended */
		n = 1 + rng_below(s, (unsigned)(FRAME_MAX - len));
		for (i = 0; i < n && len < FRAME_MAX; i++)
			b[len++] = (uint8_t)tool_rand(s);
		*wirelen = len;
		break;
	default:	/* random bytes, short frames */
		len = rng_below(s, 80);
		for (i = 0; i < len; i++)
			b[i] = (uint8_t)tool_rand(s);
		*wirelen = len;
		break;
	}
	/* now and then a wire length that is odd: longer, or shorter than captured */
	if (!rng_below(s, 16))
		*wirelen = rng_below(s, 2) ? len + rng_below(s, 1500) : rng_below(s, (unsigned)len + 1);
	return len;
}

static int cmd_macctl_fuzz(int argc, const char **argv)
{
	unsigned long iters, seed, it, per_kind[MACCTL_TRUNCATED + 1] = { 0 };
	uint8_t frame[FRAME_MAX];
	uint64_t s;
	int k, rc = 0;

	if (argc != 3 || tool_parse_ulong("N", argv[1], 1ul << 40, &iters) ||
	    tool_parse_ulong("SEED", argv[2], (unsigned long)-1, &seed))
		return usage_error("usage: test-tool macctl-fuzz N SEED");
	s = seed;
	for (it = 0; it < iters && !rc; it++) {
		size_t wirelen, len = mutate(&s, frame, gen_frame(&s, frame), &wirelen);
		struct macctl m, again;
		struct ref r;

		ref_walk(frame, len, &r);
		parse_copy(frame, len, wirelen, &m);
		rc = check_result(it, frame, len, wirelen, &m, &r);
		if (rc)
			break;
		parse_copy(frame, len, wirelen, &again);
		if (memcmp(&m, &again, sizeof(m))) {
			rc = check_failed("frame %lu: two parses differ", it);
			break;
		}
		per_kind[m.kind]++;
		if (m.kind == MACCTL_TRUNCATED)
			continue;
		/* exactly the bytes used: the same result; one byte less: truncated there */
		parse_copy(frame, r.needed, wirelen, &again);
		if (memcmp(&m, &again, sizeof(m))) {
			rc = check_failed("frame %lu: cut to the %zu bytes it used, it parses differently",
					  it, r.needed);
			break;
		}
		if (r.needed) {
			parse_copy(frame, r.needed - 1, wirelen, &again);
			if (again.kind != MACCTL_TRUNCATED || again.needed != r.needed)
				rc = check_failed("frame %lu: cut to %zu bytes, it is %s (needing %zu), "
						  "expected truncated needing %zu", it, r.needed - 1,
						  macctl_kind_name(again.kind), again.needed, r.needed);
		}
	}
	if (rc)
		return rc;
	printf("frames %lu\n", iters);
	for (k = 0; k <= MACCTL_TRUNCATED; k++)
		printf("%s %lu\n", macctl_kind_name((enum macctl_kind)k), per_kind[k]);
	return 0;
}
int tool_macctl(int argc, const char **argv)
{
	if (!strcmp(argv[0], "macctl-fuzz"))
		return cmd_macctl_fuzz(argc, argv);
	return cmd_macctl(argc, argv);
}
