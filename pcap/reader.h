/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Reading a capture file packet by packet, fast.  A classic pcap file
 * (either byte order, microsecond or nanosecond timestamps) is read in
 * blocks of BUF_SIZE (8 MiB) and its records walked in place: no copy per
 * packet, no call per packet into libpcap, and the memory of one buffer
 * whatever the size of the file (mapping the file instead measured slower
 * here: a TLB miss per page under virtualization costs more than the
 * kernel's copy).  Anything else (pcapng, compressed) goes through
 * libpcap's offline reader.  Every record header is checked against the
 * end of the data: a record that runs past the end of the file (a capture
 * cut short) ends the reading with an error message, after every whole
 * record before it; a record longer than 1 MiB is not a packet (snap
 * lengths stop at 256 KiB) and ends it too.
 */
#ifndef FS_PCAP_READER_H
#define FS_PCAP_READER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <pcap/pcap.h>

struct reader {
	int mapped;		/* the fast path: classic pcap read in blocks */
	const uint8_t *map;
	size_t size, off;
	int fd, eof;
	uint8_t *buf;		/* the buffered part of the file; map points at it */
	int swapped;
	uint32_t snaplen;
	int nano;		/* timestamps' fractions are nanoseconds */
	int linktype;
	pcap_t *h;		/* libpcap's reader, or a dead handle for filters */
	FILE *fp;
	char err[PCAP_ERRBUF_SIZE + 64];
};

/* 0, or -1 with r->err saying why the file is not a capture. */
int reader_open(struct reader *r, const char *path);
/*
 * The next packet: 1 with *hdr (ts.tv_usec holds nanoseconds when r->nano)
 * and *data, 0 at the end, -1 when the file ends inside a record (r->err).
 */
int reader_next(struct reader *r, struct pcap_pkthdr *hdr, const uint8_t **data);
/* A handle to compile filters for this file's link type. */
pcap_t *reader_pcap(struct reader *r);
void reader_close(struct reader *r);

#endif
