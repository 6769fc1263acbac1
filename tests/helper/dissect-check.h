/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The invariants of a pkt_dissect() result, checked by test-tool
 * dissect-fuzz and by the libFuzzer target tests/fuzz/fuzz-dissect.c.
 * Only pcap/ and libc are used here, so that the fuzz target links this
 * file with pcap/dissect.c, pcap/roce.c and pcap/macctl.c alone.
 */
#ifndef FS_DISSECT_CHECK_H
#define FS_DISSECT_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "../../pcap/dissect.h"

/*
 * The result k (returned rc) of dissecting the caplen bytes at p, wirelen
 * long on the wire, against what dissect.h promises: a truncated packet
 * names the layer cut and needs more than it has; the layers found are a
 * chain (UDP on IP on the link type's layer, a BTH only on UDP to the
 * RoCE port, only the headers its opcode calls for, in order); offsets and
 * lengths stay within caplen; flags agree with the fields.  Returns NULL
 * when all hold, else a description of the first one broken (a static
 * buffer).
 */
const char *dissect_check(const uint8_t *p, size_t caplen, size_t wirelen, int linktype,
			  const struct pkt_opts *opts, int rc, const struct pkt *k);

/*
 * The packet dissected again, each time from a heap buffer of exactly the
 * bytes given: the same result; cut to k->used bytes, the same result
 * (but for what depends on caplen); cut one byte shorter, truncated
 * needing k->used.  NULL, or what broke.  Returns "out of memory" when a
 * copy cannot be made.
 */
const char *dissect_check_cuts(const uint8_t *p, size_t caplen, size_t wirelen, int linktype,
			       const struct pkt_opts *opts, const struct pkt *k);

/*
 * The link types of the fuzzers: selector % DISSECT_FUZZ_LINKS picks one.
 * The last is a link type pkt_dissect() does not know.  The first byte of
 * a libFuzzer input holds the selector in bits 0-2 and 5
 * (dissect_fuzz_byte_selector()), the rest is the packet.
 */
#define DISSECT_FUZZ_LINKS 9
int dissect_fuzz_linktype(unsigned selector);
/* the selector of a link type (0 when not among them) */
unsigned dissect_fuzz_selector(int linktype);
/* a selector into the bits of an input's first byte, and back */
unsigned dissect_fuzz_selector_byte(unsigned selector);
unsigned dissect_fuzz_byte_selector(unsigned byte);

#endif
