/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Reading a capture file packet by packet, fast.  A classic pcap file
 * (either byte order, microsecond or nanosecond timestamps) is read in
 * chunks of READER_CHUNK bytes into two buffers in turn and its records
 * walked in place: no copy per packet, no call per packet into libpcap,
 * and the memory of two chunks whatever the size of the file (mapping the
 * file instead measured slower here: a TLB miss per page under
 * virtualization costs more than the kernel's copy; so did a second thread
 * reading ahead, the chunks then crossing to the other core's cache).  A
 * record that runs across two chunks is made whole by copying the first
 * part in front of the second.  Anything else (pcapng, compressed) goes
 * through libpcap's offline reader.  Every record header is checked
 * against the end of the data: a record that runs past the end of the
 * file (a capture cut short) ends the reading with an error message, after
 * every whole record before it; a record longer than 1 MiB is not a packet
 * (snap lengths stop at 256 KiB) and ends it too.  A read() that fails
 * ends it the same way, after the whole records before the failure.
 */
#ifndef FS_PCAP_READER_H
#define FS_PCAP_READER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <pcap/pcap.h>

#define READER_REC_MAX (1u << 20)	/* a record longer than this is not a packet */
#define READER_CHUNK ((size_t)256 << 10)	/* read() this much at a time: a chunk stays in the cache */
#define READER_CHUNKS 2			/* the one parsed, the next one */

struct reader_chunk {
	uint8_t *mem;		/* 16 + READER_REC_MAX bytes for a record's start, then the chunk */
	size_t len;		/* bytes of the file read into it */
	int eof;		/* the file ends after them */
	int err;		/* errno of the read() that failed after them; 0 */
};

struct reader {
	int mapped;		/* the fast path: classic pcap read in chunks */
	const uint8_t *map;	/* the bytes being walked: a record begun before, then the chunk */
	size_t size, off;
	int fd, eof, rerr;	/* rerr: the read error after the last byte of map */
	struct reader_chunk chunk[READER_CHUNKS];
	unsigned long cur;	/* chunks done with; chunk[cur % READER_CHUNKS] is walked */
	int swapped;
	uint32_t snaplen;
	int nano;		/* timestamps' fractions are nanoseconds */
	int linktype;
	pcap_t *h;		/* libpcap's reader, or a dead handle for filters */
	FILE *fp;
	char err[PCAP_ERRBUF_SIZE + 64];
	int env;		/* reader_open failed on the system's side (permission, I/O) */
};

/* 0, or -1 with r->err saying why the file is not a capture (r->env: why it
 * could not be opened: permission, I/O; not a missing path or a directory). */
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
