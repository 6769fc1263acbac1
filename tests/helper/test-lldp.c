/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tool lldp, lldp-fuzz: pcap/lldp.c (tests/t0225-unit-lldp.t).
 *
 *   lldp HEX            one Ethernet frame, in a heap buffer of exactly its
 *                       length (so that ASan sees a read past it): a field a line
 *   lldp-fuzz N SEED    N random LLDPDUs of every TLV kind: each parsed whole
 *                       (every field as built), at every cut (truncated, or not
 *                       LLDP inside the Ethernet header, never more), and with
 *                       random bytes changed (any verdict, every string
 *                       printable and within its buffer); one line of counts,
 *                       exit 1 at the first frame that breaks a rule
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/alloc.h"
#include "../../pcap/lldp.h"
#include "test-tool.h"

static void print_str(const char *name, const char *s)
{
	printf("%s %s\n", name, *s ? s : "-");
}

static void print_lldp(const struct lldp *l)
{
	char m[32];

	printf("kind %s\n", lldp_kind_name(l->kind));
	printf("why %s\n", l->why ? l->why : "-");
	if (l->kind == LLDP_NOT)
		return;
	printf("src %s\n", tool_mac_str(l->src, m, sizeof(m)));
	printf("chassis %d %s\n", l->chassis_subtype, *l->chassis ? l->chassis : "-");
	printf("port %d %s\n", l->port_subtype, *l->port ? l->port : "-");
	printf("ttl %d\n", l->ttl);
	print_str("port_desc", l->port_desc);
	print_str("sys_name", l->sys_name);
	print_str("sys_desc", l->sys_desc);
	print_str("mgmt", l->mgmt);
	printf("max_frame %d\n", l->max_frame);
	printf("tlvs %d\n", l->tlvs);
}

/* ---- lldp-fuzz ---- */

struct built {
	uint8_t *f;
	size_t len, cap;	/* (FS_ALLOC_GROW's alloc) */
	char sys_name[256];
	size_t name_len;
	int ttl, max_frame;
};

static void put(struct built *b, const void *p, size_t n)
{
	if (FS_ALLOC_GROW(b->f, b->len + n, b->cap))
		abort();
	memcpy(b->f + b->len, p, n);
	b->len += n;
}

static void put_tlv(struct built *b, int type, const uint8_t *v, size_t n)
{
	uint8_t h[2] = { (uint8_t)(type << 1 | (int)(n >> 8)), (uint8_t)(n & 0xff) };

	put(b, h, 2);
	put(b, v, n);
}

/* a valid frame: Ethernet (0-2 tags), chassis (MAC), port (name), TTL, then some of the rest */
static void build(struct built *b, uint64_t *rng)
{
	static const uint8_t dst[6] = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e };
	uint8_t v[300], src[6] = { 0x02, 0, 0, 0, 0, 0x0b };
	int tags = (int)(tool_rand(rng) % 3), i;
	size_t n;

	b->len = 0;
	put(b, dst, 6);
	put(b, src, 6);
	for (i = 0; i < tags; i++)
		put(b, (const uint8_t[]){ 0x81, 0x00, 0x20, 0x05 }, 4);
	put(b, (const uint8_t[]){ 0x88, 0xcc }, 2);
	v[0] = 4;
	for (i = 1; i < 7; i++)
		v[i] = (uint8_t)tool_rand(rng);
	put_tlv(b, 1, v, 7);
	v[0] = 5;
	n = 1 + tool_rand(rng) % 40;
	for (i = 1; i <= (int)n; i++)
		v[i] = (uint8_t)('a' + tool_rand(rng) % 26);
	put_tlv(b, 2, v, n + 1);
	b->ttl = (int)(tool_rand(rng) % 65536);
	put_tlv(b, 3, (const uint8_t[]){ (uint8_t)(b->ttl >> 8), (uint8_t)b->ttl }, 2);
	b->name_len = tool_rand(rng) % 256;	/* any bytes: escaped */
	for (i = 0; i < (int)b->name_len; i++)
		v[i] = (uint8_t)tool_rand(rng);
	put_tlv(b, 5, v, b->name_len);
	memcpy(b->sys_name, v, b->name_len);
	put_tlv(b, 8, (const uint8_t[]){ 5, 1, 10, 0, 0, 1, 2, 0, 0, 0, 1, 0 }, 12);
	b->max_frame = (int)(tool_rand(rng) % 65536);
	put_tlv(b, 127, (const uint8_t[]){ 0x00, 0x12, 0x0f, 4, (uint8_t)(b->max_frame >> 8), (uint8_t)b->max_frame },
		6);
	put_tlv(b, 0, v, 0);
}

/* every string NUL-terminated inside its buffer and printable */
static int strings_ok(const struct lldp *l)
{
	const char *s[] = { l->chassis, l->port, l->port_desc, l->sys_name, l->sys_desc };
	size_t i, j;

	for (i = 0; i < 5; i++) {
		if (!memchr(s[i], 0, LLDP_TEXT_MAX))
			return 0;
		for (j = 0; s[i][j]; j++)
			if (s[i][j] < 0x20 || s[i][j] > 0x7e)
				return 0;
	}
	return memchr(l->mgmt, 0, sizeof(l->mgmt)) != NULL;
}

/* the escaped text of n bytes, as lldp.c should write it */
static void escaped(const char *p, size_t n, char *out)
{
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)p[i];

		if (ch >= 0x20 && ch < 0x7f && ch != '\\')
			out[o++] = (char)ch;
		else
			o += (size_t)sprintf(out + o, "\\x%02x", ch);
	}
	out[o] = 0;
}

static int fuzz_one(struct built *b, uint64_t *rng, long *counts)
{
	static struct lldp l;
	char want[LLDP_TEXT_MAX];
	uint8_t *copy;
	size_t cut, k;

	build(b, rng);
	if (lldp_parse(b->f, b->len, &l) != LLDP_OK || l.ttl != b->ttl || l.max_frame != b->max_frame ||
	    strcmp(l.mgmt, "10.0.0.1") || l.chassis_subtype != 4 || l.port_subtype != 5)
		return check_failed("a valid frame was not read as built (%s: %s)", lldp_kind_name(l.kind),
				    l.why ? l.why : "fields differ");
	escaped(b->sys_name, b->name_len, want);
	if (strcmp(l.sys_name, want) || !strings_ok(&l))
		return check_failed("the system name is not the bytes escaped");
	counts[LLDP_OK]++;
	for (cut = 0; cut < b->len; cut++) {	/* every cut, in a buffer of exactly that length */
		enum lldp_kind kd;

		if (!(copy = malloc(cut ? cut : 1)))
			abort();
		memcpy(copy, b->f, cut);
		kd = lldp_parse(copy, cut, &l);
		free(copy);
		if (kd != LLDP_TRUNCATED && kd != LLDP_NOT)
			return check_failed("a frame cut at %zu of %zu bytes is %s", cut, b->len, lldp_kind_name(kd));
		if (!strings_ok(&l))
			return check_failed("a cut frame left a string unterminated or unprintable");
		counts[kd]++;
	}
	for (k = 0; k < 8; k++) {	/* random bytes changed */
		size_t i, flips = 1 + tool_rand(rng) % 4;

		if (!(copy = malloc(b->len)))
			abort();
		memcpy(copy, b->f, b->len);
		for (i = 0; i < flips; i++)
			copy[tool_rand(rng) % b->len] = (uint8_t)tool_rand(rng);
		counts[lldp_parse(copy, b->len, &l)]++;
		free(copy);
		if (!strings_ok(&l))
			return check_failed("a mutated frame left a string unterminated or unprintable");
	}
	return 0;
}

static int cmd_lldp_fuzz(int argc, const char **argv)
{
	unsigned long n, seed, i;
	long counts[4] = { 0 };
	struct built b = { 0 };
	uint64_t rng;
	int rc = 0;

	if (argc != 3)
		return usage_error("usage: test-tool lldp-fuzz N SEED");
	if ((rc = tool_parse_ulong("N", argv[1], 10000000, &n)) || (rc = tool_parse_ulong("SEED", argv[2], ~0ul, &seed)))
		return -rc;
	rng = seed;
	for (i = 0; i < n && !rc; i++)
		rc = fuzz_one(&b, &rng, counts);
	free(b.f);
	if (!rc)
		printf("lldp-fuzz: %lu frames: ok %ld, bad %ld, truncated %ld, not %ld\n", n, counts[LLDP_OK],
		       counts[LLDP_BAD], counts[LLDP_TRUNCATED], counts[LLDP_NOT]);
	return rc;
}

int tool_lldp(int argc, const char **argv)
{
	struct lldp l;
	uint8_t *f = NULL;
	size_t len = 0;
	int rc;

	if (!strcmp(argv[0], "lldp-fuzz"))
		return cmd_lldp_fuzz(argc, argv);
	if (argc != 2)
		return usage_error("usage: test-tool lldp HEX");
	if ((rc = tool_parse_hex(argv[1], &f, &len)))
		return -rc;
	lldp_parse(f, len, &l);
	free(f);
	print_lldp(&l);
	return 0;
}
