/* SPDX-License-Identifier: BSD-2-Clause */
/* IEEE 802.1AB LLDP frames (lldp.h). */
#include <stdio.h>
#include <string.h>

#include "get.h"
#include "lldp.h"

#define ETH_LEN 14
#define TAG_LEN 4
#define MAX_TAGS 2

enum {
	TLV_END = 0, TLV_CHASSIS = 1, TLV_PORT = 2, TLV_TTL = 3, TLV_PORT_DESC = 4, TLV_SYS_NAME = 5,
	TLV_SYS_DESC = 6, TLV_CAPS = 7, TLV_MGMT = 8, TLV_ORG = 127,
};

const char *lldp_kind_name(enum lldp_kind k)
{
	static const char *const n[] = { "not", "ok", "bad", "truncated" };

	return (unsigned)k < 4 ? n[k] : "?";
}

/* n bytes at p as printable text into out (size LLDP_TEXT_MAX or more) */
static void text(const uint8_t *p, size_t n, char *out, size_t outlen)
{
	size_t i, o = 0;

	for (i = 0; i < n && o + 5 <= outlen; i++) {
		if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\')
			out[o++] = (char)p[i];
		else
			o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", p[i]);
	}
	out[o] = 0;
}

static void mac(const uint8_t *p, char *out, size_t outlen)
{
	snprintf(out, outlen, "%02x:%02x:%02x:%02x:%02x:%02x", p[0], p[1], p[2], p[3], p[4], p[5]);
}

/* an IANA-family address (1 IPv4, 2 IPv6, 6 a MAC) of n bytes at p; 0, or -1 when it is none of those */
static int addr(const uint8_t *p, size_t n, char *out, size_t outlen)
{
	if (n == 5 && p[0] == 1)
		snprintf(out, outlen, "%u.%u.%u.%u", p[1], p[2], p[3], p[4]);
	else if (n == 17 && p[0] == 2) {
		size_t i, o = 0;

		for (i = 0; i < 16; i += 2)
			o += (size_t)snprintf(out + o, outlen - o, "%s%x", i ? ":" : "", be16_at(p + 1 + i));
	} else if (n == 7 && p[0] == 6)
		mac(p + 1, out, outlen);
	else
		return -1;
	return 0;
}

/* chassis or port ID: subtype, then the ID as MAC (mac_sub), address (4 or 5) or text */
static void id(const uint8_t *v, size_t n, int mac_sub, int addr_sub, int *subtype, char *out)
{
	*subtype = v[0];
	if (v[0] == mac_sub && n == 7)
		mac(v + 1, out, LLDP_TEXT_MAX);
	else if (v[0] != addr_sub || addr(v + 1, n - 1, out, LLDP_TEXT_MAX))
		text(v + 1, n - 1, out, LLDP_TEXT_MAX);
}

static enum lldp_kind bad(struct lldp *o, enum lldp_kind k, const char *why)
{
	o->kind = k;
	o->why = why;
	return k;
}

/* the Ethernet header and up to two VLAN tags: 1 when the frame is LLDP, the cursor at its LLDPDU */
static int ethernet(struct get_cursor *c, struct lldp *o)
{
	uint16_t type;
	int tags = 0;

	if (!get_has(c, ETH_LEN))
		return 0;
	get_skip(c, 6);
	get_bytes(c, o->src, 6);
	type = get_be16(c);
	while ((type == 0x8100 || type == 0x88a8 || type == 0x9100) && tags++ < MAX_TAGS && get_has(c, TAG_LEN)) {
		get_skip(c, 2);
		type = get_be16(c);
	}
	return type == LLDP_ETHERTYPE;
}

/* one TLV's value into o; NULL, or why the LLDPDU breaks a rule */
static const char *tlv(struct lldp *o, int type, const uint8_t *v, size_t n, unsigned *seen)
{
	if (o->tlvs == 1 && type != TLV_CHASSIS)
		return "the first TLV is not the chassis ID";
	if (o->tlvs == 2 && type != TLV_PORT)
		return "the second TLV is not the port ID";
	if (o->tlvs == 3 && type != TLV_TTL)
		return "the third TLV is not the TTL";
	if (type >= TLV_CHASSIS && type <= TLV_MGMT) {
		if (*seen & 1u << type)
			return "a TLV that may appear once appears twice";
		*seen |= 1u << type;
	}
	switch (type) {
	case TLV_CHASSIS:
	case TLV_PORT:
		if (n < 2 || n > 256)
			return "a chassis or port ID of a length outside 2..256";
		if (type == TLV_CHASSIS)
			id(v, n, 4, 5, &o->chassis_subtype, o->chassis);
		else
			id(v, n, 3, 4, &o->port_subtype, o->port);
		break;
	case TLV_TTL:
		if (n < 2)
			return "a TTL shorter than 2 bytes";
		o->ttl = be16_at(v);
		break;
	case TLV_PORT_DESC:
		text(v, n, o->port_desc, sizeof(o->port_desc));
		break;
	case TLV_SYS_NAME:
		text(v, n, o->sys_name, sizeof(o->sys_name));
		break;
	case TLV_SYS_DESC:
		text(v, n, o->sys_desc, sizeof(o->sys_desc));
		break;
	case TLV_MGMT:	/* address string length (1 + address), family, address, ... */
		if (n >= 2 && v[0] >= 2 && (size_t)v[0] + 1 <= n)
			addr(v + 1, v[0], o->mgmt, sizeof(o->mgmt));
		break;
	case TLV_ORG:
		if (n >= 6 && v[0] == 0x00 && v[1] == 0x12 && v[2] == 0x0f && v[3] == 4)
			o->max_frame = be16_at(v + 4);
		break;
	}
	return NULL;
}

enum lldp_kind lldp_parse(const uint8_t *frame, size_t caplen, struct lldp *out)
{
	struct get_cursor c = get_cursor_init(frame, caplen);
	unsigned seen = 0;

	memset(out, 0, sizeof(*out));
	out->chassis_subtype = out->port_subtype = out->ttl = out->max_frame = -1;
	if (!ethernet(&c, out))
		return bad(out, LLDP_NOT, NULL);
	for (;;) {
		const uint8_t *v;
		const char *why;
		int type;
		size_t n;

		if (!get_has(&c, 2))
			return bad(out, LLDP_TRUNCATED, out->tlvs ? "cut between TLVs, before the end TLV" :
							     "cut before the first TLV");
		n = get_be16(&c);
		type = (int)(n >> 9);
		n &= 0x1ff;
		out->tlvs++;
		if (!(v = get_take(&c, n)))
			return bad(out, LLDP_TRUNCATED, "cut inside a TLV");
		if (type == TLV_END)
			break;
		if ((why = tlv(out, type, v, n, &seen)))
			return bad(out, LLDP_BAD, why);
	}
	if (out->tlvs < 4)	/* the end TLV came before the three that must be there */
		return bad(out, LLDP_BAD, "the LLDPDU ends before its chassis ID, port ID and TTL");
	return bad(out, LLDP_OK, NULL);
}
