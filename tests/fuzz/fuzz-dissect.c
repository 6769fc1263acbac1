/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for pcap/dissect.c and pcap/lldp.c (make fuzz; tests/t0250-unit-pcap-fuzz.t).
 *
 * The first byte of an input is a selector, the rest the captured packet:
 *   bits 0-2, 5  the link type's selector, dissect_fuzz_byte_selector() and
 *             dissect_fuzz_linktype() (ERF among them; the last one not known)
 *   bits 3-4  the wire length: 0 the packet's, 1 longer (a snaplen cut),
 *             2 half of it (shorter than captured), 3 1500 more
 *   bit 7     4789 as another RoCE port (pkt_opts.roce_port)
 * test-tool pcapgen --corpus writes seeds in this form.
 * The packet is read where libFuzzer put it, at the end of its buffer, so
 * that AddressSanitizer reports a read past caplen.  Each result is held
 * to dissect_check() and dissect_check_cuts(); a broken invariant aborts.
 * Every packet then goes through the per-QP flow table (pcap/flow.c) too,
 * one table kept across inputs (so PSN tracking, pairing and latencies see
 * sequences) and started afresh every 4096 inputs to bound its memory.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../../pcap/dissect.h"
#include "../../pcap/flow.h"
#include "../../pcap/lldp.h"
#include "../helper/dissect-check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct flow_table table;
static unsigned long inputs;

static void flows(const struct pkt *k)
{
	int i;

	if (inputs % 4096 == 0) {
		if (inputs) {
			flow_finish(&table);
			for (i = 0; i < table.n; i++)
				(void)flow_lat_percentile(table.v[i], 99);
			flow_table_release(&table);
		}
		if (flow_table_init(&table, 64))
			abort();
	}
	flow_add(&table, k, 1e9 + (double)inputs * 1e-6);
	inputs++;
}

/* the same bytes as an LLDP frame (pcap/lldp.c): every string it keeps printable and ended */
static void lldp_one(const uint8_t *p, size_t n)
{
	static struct lldp l;
	const char *s[] = { l.chassis, l.port, l.port_desc, l.sys_name, l.sys_desc, l.mgmt };
	size_t i, j, max;

	if (lldp_parse(p, n, &l) > LLDP_TRUNCATED)
		abort();
	for (i = 0; i < sizeof(s) / sizeof(*s); i++) {
		max = i == 5 ? sizeof(l.mgmt) : LLDP_TEXT_MAX;
		for (j = 0; j < max && s[i][j]; j++)
			if (s[i][j] < 0x20 || s[i][j] > 0x7e)
				abort();
		if (j == max)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pkt_opts opts = { 0 };
	const uint8_t *p;
	size_t n, wirelen;
	const char *why;
	struct pkt k;
	int linktype, rc;

	if (!size)
		return 0;
	linktype = dissect_fuzz_linktype(dissect_fuzz_byte_selector(data[0]));
	p = size > 1 ? data + 1 : NULL;
	n = size - 1;
	switch ((data[0] >> 3) & 3) {
	case 0: wirelen = n; break;
	case 1: wirelen = n + (n % 97) * 16; break;
	case 2: wirelen = n / 2; break;
	default: wirelen = n + 1500; break;
	}
	if (data[0] & 0x80)
		opts.roce_port = 4789;
	rc = pkt_dissect_opts(p, n, wirelen, linktype, &opts, &k);
	why = dissect_check(p, n, wirelen, linktype, &opts, rc, &k);
	if (!why)
		why = dissect_check_cuts(p, n, wirelen, linktype, &opts, &k);
	if (why) {
		fprintf(stderr, "fuzz-dissect: link type %d, caplen %zu, wirelen %zu: %s\n",
			linktype, n, wirelen, why);
		abort();
	}
	if (!rc)
		flows(&k);
	lldp_one(p, n);
	return 0;
}
