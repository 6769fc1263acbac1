/* SPDX-License-Identifier: BSD-2-Clause */
/* InfiniBand transport opcodes and AETH syndromes, for RoCEv2: see dissect.h. */
#include <stddef.h>

#include "dissect.h"

/* ---- opcodes ---- */

enum op_flag {
	OP_REQ = 1 << 0,	/* requester to responder */
	OP_RESP = 1 << 1,	/* responder to requester */
	OP_READ = 1 << 2,	/* an RDMA READ response */
	OP_ACK = 1 << 3,	/* an acknowledge, atomic or not */
	OP_DATA = 1 << 4,	/* carries payload */
};

struct roce_op {
	const char *name;	/* NULL: reserved */
	unsigned hdrs;		/* PKT_BIT()s of the headers after the BTH */
	unsigned flags;		/* enum op_flag */
	enum roce_position pos;
};

#define H(x) PKT_BIT(PKT_L_##x)
#define OP(code, name, hdrs, flags, pos) [code] = { name, hdrs, flags, ROCE_POS_##pos }

/*
 * IBA vol 1 table 38 (OpCode field) with the headers of each opcode
 * (9.2-9.4), FLUSH and ATOMIC WRITE from the memory placement extensions
 * (IBA 1.5), the CNP from the RoCEv2 annex (A17).  Every RD packet has an
 * RDETH and every RD request a DETH; XRC requests have an XRCETH; UD
 * packets have a DETH.  Checked against tshark in
 * tests/t0240-unit-pcap-dissect.t.
 */
static const struct roce_op roce_ops[256] = {
	/* RC */
	OP(0x00, "RC SEND_FIRST", 0, OP_REQ | OP_DATA, FIRST),
	OP(0x01, "RC SEND_MIDDLE", 0, OP_REQ | OP_DATA, MIDDLE),
	OP(0x02, "RC SEND_LAST", 0, OP_REQ | OP_DATA, LAST),
	OP(0x03, "RC SEND_LAST_WITH_IMMEDIATE", H(IMMDT), OP_REQ | OP_DATA, LAST),
	OP(0x04, "RC SEND_ONLY", 0, OP_REQ | OP_DATA, ONLY),
	OP(0x05, "RC SEND_ONLY_WITH_IMMEDIATE", H(IMMDT), OP_REQ | OP_DATA, ONLY),
	OP(0x06, "RC RDMA_WRITE_FIRST", H(RETH), OP_REQ | OP_DATA, FIRST),
	OP(0x07, "RC RDMA_WRITE_MIDDLE", 0, OP_REQ | OP_DATA, MIDDLE),
	OP(0x08, "RC RDMA_WRITE_LAST", 0, OP_REQ | OP_DATA, LAST),
	OP(0x09, "RC RDMA_WRITE_LAST_WITH_IMMEDIATE", H(IMMDT), OP_REQ | OP_DATA, LAST),
	OP(0x0a, "RC RDMA_WRITE_ONLY", H(RETH), OP_REQ | OP_DATA, ONLY),
	OP(0x0b, "RC RDMA_WRITE_ONLY_WITH_IMMEDIATE", H(RETH) | H(IMMDT), OP_REQ | OP_DATA, ONLY),
	OP(0x0c, "RC RDMA_READ_REQUEST", H(RETH), OP_REQ, ONLY),
	OP(0x0d, "RC RDMA_READ_RESPONSE_FIRST", H(AETH), OP_RESP | OP_READ | OP_DATA, FIRST),
	OP(0x0e, "RC RDMA_READ_RESPONSE_MIDDLE", 0, OP_RESP | OP_READ | OP_DATA, MIDDLE),
	OP(0x0f, "RC RDMA_READ_RESPONSE_LAST", H(AETH), OP_RESP | OP_READ | OP_DATA, LAST),
	OP(0x10, "RC RDMA_READ_RESPONSE_ONLY", H(AETH), OP_RESP | OP_READ | OP_DATA, ONLY),
	OP(0x11, "RC ACKNOWLEDGE", H(AETH), OP_RESP | OP_ACK, ONLY),
	OP(0x12, "RC ATOMIC_ACKNOWLEDGE", H(AETH) | H(ATOMICACKETH), OP_RESP | OP_ACK, ONLY),
	OP(0x13, "RC COMPARE_SWAP", H(ATOMICETH), OP_REQ, ONLY),
	OP(0x14, "RC FETCH_ADD", H(ATOMICETH), OP_REQ, ONLY),
	OP(0x16, "RC SEND_LAST_WITH_INVALIDATE", H(IETH), OP_REQ | OP_DATA, LAST),
	OP(0x17, "RC SEND_ONLY_WITH_INVALIDATE", H(IETH), OP_REQ | OP_DATA, ONLY),
	OP(0x1c, "RC FLUSH", H(FETH) | H(RETH), OP_REQ, ONLY),
	OP(0x1d, "RC ATOMIC_WRITE", H(RETH), OP_REQ | OP_DATA, ONLY),
	/* UC */
	OP(0x20, "UC SEND_FIRST", 0, OP_REQ | OP_DATA, FIRST),
	OP(0x21, "UC SEND_MIDDLE", 0, OP_REQ | OP_DATA, MIDDLE),
	OP(0x22, "UC SEND_LAST", 0, OP_REQ | OP_DATA, LAST),
	OP(0x23, "UC SEND_LAST_WITH_IMMEDIATE", H(IMMDT), OP_REQ | OP_DATA, LAST),
	OP(0x24, "UC SEND_ONLY", 0, OP_REQ | OP_DATA, ONLY),
	OP(0x25, "UC SEND_ONLY_WITH_IMMEDIATE", H(IMMDT), OP_REQ | OP_DATA, ONLY),
	OP(0x26, "UC RDMA_WRITE_FIRST", H(RETH), OP_REQ | OP_DATA, FIRST),
	OP(0x27, "UC RDMA_WRITE_MIDDLE", 0, OP_REQ | OP_DATA, MIDDLE),
	OP(0x28, "UC RDMA_WRITE_LAST", 0, OP_REQ | OP_DATA, LAST),
	OP(0x29, "UC RDMA_WRITE_LAST_WITH_IMMEDIATE", H(IMMDT), OP_REQ | OP_DATA, LAST),
	OP(0x2a, "UC RDMA_WRITE_ONLY", H(RETH), OP_REQ | OP_DATA, ONLY),
	OP(0x2b, "UC RDMA_WRITE_ONLY_WITH_IMMEDIATE", H(RETH) | H(IMMDT), OP_REQ | OP_DATA, ONLY),
	/* RD */
	OP(0x40, "RD SEND_FIRST", H(RDETH) | H(DETH), OP_REQ | OP_DATA, FIRST),
	OP(0x41, "RD SEND_MIDDLE", H(RDETH) | H(DETH), OP_REQ | OP_DATA, MIDDLE),
	OP(0x42, "RD SEND_LAST", H(RDETH) | H(DETH), OP_REQ | OP_DATA, LAST),
	OP(0x43, "RD SEND_LAST_WITH_IMMEDIATE", H(RDETH) | H(DETH) | H(IMMDT), OP_REQ | OP_DATA, LAST),
	OP(0x44, "RD SEND_ONLY", H(RDETH) | H(DETH), OP_REQ | OP_DATA, ONLY),
	OP(0x45, "RD SEND_ONLY_WITH_IMMEDIATE", H(RDETH) | H(DETH) | H(IMMDT), OP_REQ | OP_DATA, ONLY),
	OP(0x46, "RD RDMA_WRITE_FIRST", H(RDETH) | H(DETH) | H(RETH), OP_REQ | OP_DATA, FIRST),
	OP(0x47, "RD RDMA_WRITE_MIDDLE", H(RDETH) | H(DETH), OP_REQ | OP_DATA, MIDDLE),
	OP(0x48, "RD RDMA_WRITE_LAST", H(RDETH) | H(DETH), OP_REQ | OP_DATA, LAST),
	OP(0x49, "RD RDMA_WRITE_LAST_WITH_IMMEDIATE", H(RDETH) | H(DETH) | H(IMMDT), OP_REQ | OP_DATA, LAST),
	OP(0x4a, "RD RDMA_WRITE_ONLY", H(RDETH) | H(DETH) | H(RETH), OP_REQ | OP_DATA, ONLY),
	OP(0x4b, "RD RDMA_WRITE_ONLY_WITH_IMMEDIATE", H(RDETH) | H(DETH) | H(RETH) | H(IMMDT), OP_REQ | OP_DATA, ONLY),
	OP(0x4c, "RD RDMA_READ_REQUEST", H(RDETH) | H(DETH) | H(RETH), OP_REQ, ONLY),
	OP(0x4d, "RD RDMA_READ_RESPONSE_FIRST", H(RDETH) | H(AETH), OP_RESP | OP_READ | OP_DATA, FIRST),
	OP(0x4e, "RD RDMA_READ_RESPONSE_MIDDLE", H(RDETH), OP_RESP | OP_READ | OP_DATA, MIDDLE),
	OP(0x4f, "RD RDMA_READ_RESPONSE_LAST", H(RDETH) | H(AETH), OP_RESP | OP_READ | OP_DATA, LAST),
	OP(0x50, "RD RDMA_READ_RESPONSE_ONLY", H(RDETH) | H(AETH), OP_RESP | OP_READ | OP_DATA, ONLY),
	OP(0x51, "RD ACKNOWLEDGE", H(RDETH) | H(AETH), OP_RESP | OP_ACK, ONLY),
	OP(0x52, "RD ATOMIC_ACKNOWLEDGE", H(RDETH) | H(AETH) | H(ATOMICACKETH), OP_RESP | OP_ACK, ONLY),
	OP(0x53, "RD COMPARE_SWAP", H(RDETH) | H(DETH) | H(ATOMICETH), OP_REQ, ONLY),
	OP(0x54, "RD FETCH_ADD", H(RDETH) | H(DETH) | H(ATOMICETH), OP_REQ, ONLY),
	OP(0x55, "RD RESYNC", H(RDETH) | H(DETH), OP_REQ, ONLY),
	OP(0x5c, "RD FLUSH", H(RDETH) | H(DETH) | H(FETH) | H(RETH), OP_REQ, ONLY),
	/* UD */
	OP(0x64, "UD SEND_ONLY", H(DETH), OP_REQ | OP_DATA, ONLY),
	OP(0x65, "UD SEND_ONLY_WITH_IMMEDIATE", H(DETH) | H(IMMDT), OP_REQ | OP_DATA, ONLY),
	/* XRC */
	OP(0xa0, "XRC SEND_FIRST", H(XRCETH), OP_REQ | OP_DATA, FIRST),
	OP(0xa1, "XRC SEND_MIDDLE", H(XRCETH), OP_REQ | OP_DATA, MIDDLE),
	OP(0xa2, "XRC SEND_LAST", H(XRCETH), OP_REQ | OP_DATA, LAST),
	OP(0xa3, "XRC SEND_LAST_WITH_IMMEDIATE", H(XRCETH) | H(IMMDT), OP_REQ | OP_DATA, LAST),
	OP(0xa4, "XRC SEND_ONLY", H(XRCETH), OP_REQ | OP_DATA, ONLY),
	OP(0xa5, "XRC SEND_ONLY_WITH_IMMEDIATE", H(XRCETH) | H(IMMDT), OP_REQ | OP_DATA, ONLY),
	OP(0xa6, "XRC RDMA_WRITE_FIRST", H(XRCETH) | H(RETH), OP_REQ | OP_DATA, FIRST),
	OP(0xa7, "XRC RDMA_WRITE_MIDDLE", H(XRCETH), OP_REQ | OP_DATA, MIDDLE),
	OP(0xa8, "XRC RDMA_WRITE_LAST", H(XRCETH), OP_REQ | OP_DATA, LAST),
	OP(0xa9, "XRC RDMA_WRITE_LAST_WITH_IMMEDIATE", H(XRCETH) | H(IMMDT), OP_REQ | OP_DATA, LAST),
	OP(0xaa, "XRC RDMA_WRITE_ONLY", H(XRCETH) | H(RETH), OP_REQ | OP_DATA, ONLY),
	OP(0xab, "XRC RDMA_WRITE_ONLY_WITH_IMMEDIATE", H(XRCETH) | H(RETH) | H(IMMDT), OP_REQ | OP_DATA, ONLY),
	OP(0xac, "XRC RDMA_READ_REQUEST", H(XRCETH) | H(RETH), OP_REQ, ONLY),
	OP(0xad, "XRC RDMA_READ_RESPONSE_FIRST", H(AETH), OP_RESP | OP_READ | OP_DATA, FIRST),
	OP(0xae, "XRC RDMA_READ_RESPONSE_MIDDLE", 0, OP_RESP | OP_READ | OP_DATA, MIDDLE),
	OP(0xaf, "XRC RDMA_READ_RESPONSE_LAST", H(AETH), OP_RESP | OP_READ | OP_DATA, LAST),
	OP(0xb0, "XRC RDMA_READ_RESPONSE_ONLY", H(AETH), OP_RESP | OP_READ | OP_DATA, ONLY),
	OP(0xb1, "XRC ACKNOWLEDGE", H(AETH), OP_RESP | OP_ACK, ONLY),
	OP(0xb2, "XRC ATOMIC_ACKNOWLEDGE", H(AETH) | H(ATOMICACKETH), OP_RESP | OP_ACK, ONLY),
	OP(0xb3, "XRC COMPARE_SWAP", H(XRCETH) | H(ATOMICETH), OP_REQ, ONLY),
	OP(0xb4, "XRC FETCH_ADD", H(XRCETH) | H(ATOMICETH), OP_REQ, ONLY),
	OP(0xb6, "XRC SEND_LAST_WITH_INVALIDATE", H(XRCETH) | H(IETH), OP_REQ | OP_DATA, LAST),
	OP(0xb7, "XRC SEND_ONLY_WITH_INVALIDATE", H(XRCETH) | H(IETH), OP_REQ | OP_DATA, ONLY),
	/* CNP */
	OP(0x81, "CNP", H(CNP), 0, NONE),
};

#undef OP
#undef H

const char *roce_opcode_name(unsigned op)
{
	return op < 256 ? roce_ops[op].name : NULL;
}

int roce_opcode_valid(unsigned op)
{
	return roce_opcode_name(op) != NULL;
}

enum roce_transport roce_transport(unsigned op)
{
	switch ((op >> 5) & 7) {
	case 0: return ROCE_RC;
	case 1: return ROCE_UC;
	case 2: return ROCE_RD;
	case 3: return ROCE_UD;
	case 4: return ROCE_CNP;
	case 5: return ROCE_XRC;
	}
	return ROCE_VENDOR;
}

const char *roce_transport_name(enum roce_transport t)
{
	switch (t) {
	case ROCE_RC: return "RC";
	case ROCE_UC: return "UC";
	case ROCE_RD: return "RD";
	case ROCE_UD: return "UD";
	case ROCE_CNP: return "CNP";
	case ROCE_XRC: return "XRC";
	case ROCE_VENDOR: return "vendor";
	}
	return "?";
}

static unsigned op_flags(unsigned op)
{
	return op < 256 ? roce_ops[op].flags : 0;
}

unsigned roce_opcode_headers(unsigned op)
{
	return op < 256 ? roce_ops[op].hdrs : 0;
}

int roce_is_request(unsigned op)
{
	return !!(op_flags(op) & OP_REQ);
}

int roce_is_response(unsigned op)
{
	return !!(op_flags(op) & OP_RESP);
}

int roce_is_read_response(unsigned op)
{
	return !!(op_flags(op) & OP_READ);
}

int roce_is_ack(unsigned op)
{
	return !!(op_flags(op) & OP_ACK);
}

int roce_has_payload(unsigned op)
{
	return !!(op_flags(op) & OP_DATA);
}

enum roce_position roce_position(unsigned op)
{
	return op < 256 ? roce_ops[op].pos : ROCE_POS_NONE;
}

const char *roce_position_name(enum roce_position pos)
{
	switch (pos) {
	case ROCE_POS_NONE: return "none";
	case ROCE_POS_FIRST: return "first";
	case ROCE_POS_MIDDLE: return "middle";
	case ROCE_POS_LAST: return "last";
	case ROCE_POS_ONLY: return "only";
	}
	return "?";
}

/* ---- AETH ---- */

enum roce_aeth_kind roce_aeth_kind(uint8_t syndrome)
{
	return (enum roce_aeth_kind)((syndrome >> 5) & 3);
}

unsigned roce_aeth_value(uint8_t syndrome)
{
	return syndrome & 0x1f;
}

const char *roce_aeth_kind_name(enum roce_aeth_kind k)
{
	switch (k) {
	case ROCE_AETH_ACK: return "ack";
	case ROCE_AETH_RNR: return "rnr-nak";
	case ROCE_AETH_RESERVED: return "reserved";
	case ROCE_AETH_NAK: return "nak";
	}
	return "?";
}

const char *roce_nak_name(unsigned code)
{
	static const char *const naks[] = {
		[ROCE_NAK_PSN_SEQ] = "psn-seq-error",
		[ROCE_NAK_INVALID_REQ] = "invalid-request",
		[ROCE_NAK_REMOTE_ACCESS] = "remote-access-error",
		[ROCE_NAK_REMOTE_OP] = "remote-op-error",
		[ROCE_NAK_INVALID_RD_REQ] = "invalid-rd-request",
	};

	return code < sizeof(naks) / sizeof(naks[0]) ? naks[code] : NULL;
}

/*
 * Codes 1..30 of both the ACK credit count (table 44) and the RNR NAK
 * timer (table 45, in units of 10 us) follow one series: 1, 2, 3, 4, then
 * alternately x1.5 and x4/3 (6, 8, 12, 16, ... 32768), 49152 for 31.
 */
static unsigned long aeth_series(unsigned code)
{
	unsigned long v;

	if (code <= 4)
		return code;
	v = 4ul << ((code - 4) / 2);	/* 4, 8, 16, ... at even codes */
	return (code - 4) % 2 ? v + v / 2 : v;
}

long roce_ack_credits(unsigned code)
{
	code &= 0x1f;
	return code == 31 ? -1 : (long)aeth_series(code);
}

double roce_rnr_timer_ms(unsigned code)
{
	code &= 0x1f;
	return (double)(code ? aeth_series(code) : 65536) * 0.01;
}
