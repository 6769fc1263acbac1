/* SPDX-License-Identifier: BSD-2-Clause */
/* MAC control frames (PFC, PAUSE): see macctl.h. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "get.h"
#include "tok.h"
#include "macctl.h"

static const uint8_t macctl_dst[6] = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x01 };

/* IEEE 802.3 annex 31A */
static const struct tok opcodes[] = {
	{ 0x0001, "PAUSE" },
	{ 0x0002, "GATE" },
	{ 0x0003, "REPORT" },
	{ 0x0004, "REGISTER_REQ" },
	{ 0x0005, "REGISTER" },
	{ 0x0006, "REGISTER_ACK" },
	{ 0x0101, "PFC" },
	{ 0xfffe, "EXTENSION" },
	{ 0, NULL }
};

static const struct tok tpids[] = {
	{ 0x8100, "802.1Q" },
	{ 0x88a8, "802.1ad" },
	{ 0x9100, "QinQ" },
	{ 0, NULL }
};

static void macctl_clear(struct macctl *m)
{
	memset(m, 0, sizeof(*m));
	m->kind = MACCTL_NOT;
	m->vlan = -1;
	m->pcp = -1;
}

static enum macctl_kind truncated(struct macctl *m, size_t needed, const char *at)
{
	macctl_clear(m);
	m->kind = MACCTL_TRUNCATED;
	m->needed = needed;
	m->at = at;
	return m->kind;
}

/* n more bytes for part `at`, or the result is truncated */
#define NEED(c, m, n, at) do { \
	if (!get_has(c, n)) \
		return truncated(m, (c)->off + (n), at); \
} while (0)

static void parse_pfc(struct get_cursor *c, struct macctl *m)
{
	int i;

	m->reserved = get_u8(c);
	m->enable = get_u8(c);
	for (i = 0; i < MACCTL_PRIOS; i++)
		m->quanta[i] = get_be16(c);
	if (m->reserved)
		m->flags |= MACCTL_F_RESERVED;
}

enum macctl_kind macctl_parse(const uint8_t *p, size_t caplen, size_t wirelen,
			      struct macctl *m)
{
	struct get_cursor c = get_cursor_init(p, caplen);
	uint16_t type;

	macctl_clear(m);
	NEED(&c, m, MACCTL_ETH_LEN, "ethernet");
	get_bytes(&c, m->dst, 6);
	get_bytes(&c, m->src, 6);
	type = get_be16(&c);
	while (tok_find(tpids, type)) {
		uint16_t tci;

		if (m->tags == MACCTL_MAX_TAGS) {
			m->flags |= MACCTL_F_TAGS;
			break;
		}
		NEED(&c, m, MACCTL_TAG_LEN, "vlan");
		tci = get_be16(&c);
		if (!m->tags) {
			m->pcp = tci >> 13;
			m->vlan = tci & 0x0fff;
		}
		m->tags++;
		type = get_be16(&c);
	}
	m->ethertype = type;
	if (wirelen < MACCTL_MIN_FRAME)
		m->flags |= MACCTL_F_SHORT;
	if (type != MACCTL_ETHERTYPE)
		goto done;

	NEED(&c, m, MACCTL_OPCODE_LEN, "opcode");
	m->opcode = get_be16(&c);
	if (memcmp(m->dst, macctl_dst, sizeof(macctl_dst)))
		m->flags |= MACCTL_F_DST;
	switch (m->opcode) {
	case MACCTL_OP_PFC:
		NEED(&c, m, MACCTL_PFC_LEN, "pfc");
		parse_pfc(&c, m);
		m->kind = MACCTL_PFC;
		break;
	case MACCTL_OP_PAUSE:
		NEED(&c, m, MACCTL_PAUSE_LEN, "pause");
		m->quanta[0] = get_be16(&c);
		m->kind = MACCTL_PAUSE;
		break;
	default:
		m->kind = MACCTL_OTHER;
		break;
	}
done:
	/* every read above was checked first: a bad cursor is a bug here */
	if (c.bad)
		return truncated(m, c.off + 1, "internal");
	return m->kind;
}

const char *macctl_kind_name(enum macctl_kind k)
{
	switch (k) {
	case MACCTL_NOT: return "not-mac-control";
	case MACCTL_PFC: return "pfc";
	case MACCTL_PAUSE: return "pause";
	case MACCTL_OTHER: return "other";
	case MACCTL_TRUNCATED: return "truncated";
	}
	return "?";
}

const char *macctl_opcode_name(unsigned opcode)
{
	return tok_find(opcodes, opcode);
}

const char *macctl_flags_str(unsigned flags, char *buf, size_t len)
{
	static const struct tok names[] = {
		{ MACCTL_F_DST, "dst" },
		{ MACCTL_F_RESERVED, "reserved" },
		{ MACCTL_F_TAGS, "tags" },
		{ MACCTL_F_SHORT, "short" },
		{ 0, NULL }
	};
	return tok_flags_str(names, flags, buf, len);
}

double macctl_quanta_seconds(unsigned quanta, double link_gbps)
{
	if (!(link_gbps > 0))
		return NAN;
	return (double)quanta * MACCTL_QUANTUM_BITS / (link_gbps * 1e9);
}
