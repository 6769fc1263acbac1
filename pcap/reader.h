/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Reading a capture file packet by packet, fast.  A classic pcap file
 * (either byte order, microsecond or nanosecond timestamps) is read in
 * chunks of READER_CHUNK bytes into a ring of buffers (two; READER_CHUNKS
 * with threads > 1) and its records walked in place: no copy per packet,
 * no call per packet into
 * libpcap, and the memory of the ring whatever the size of the file
 * (mapping the file instead measured slower here: a TLB miss per page
 * under virtualization costs more than the kernel's copy).  With threads
 * > 1 a thread of the reader's own does the read() calls, so the kernel's
 * copy of the next chunks overlaps the parsing of this one; the records
 * are walked by the caller's thread either way, from the same bytes, so
 * what reader_next() returns does not depend on it.  A record that runs
 * across two chunks is made whole by copying the first part in front of
 * the second.  Anything else (pcapng, compressed) goes through libpcap's
 * offline reader, in the caller's thread.  Every record header is checked
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

#include <pthread.h>
#include <pcap/pcap.h>

#define READER_REC_MAX (1u << 20)	/* a record longer than this is not a packet */
#define READER_CHUNK ((size_t)256 << 10)	/* read() this much at a time: a chunk stays in the cache */
#define READER_CHUNKS 4			/* chunks in the ring: the one parsed, the ones read ahead */

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
	unsigned nchunks;	/* in use: READER_CHUNKS threaded, 2 in one thread */
	unsigned long filled, used;	/* chunks filled, chunks done with (the current one is not) */
	int threaded, stop;
	pthread_t thread;
	pthread_mutex_t mu;	/* filled, used and stop, with the threaded reader */
	pthread_cond_t cond;
	int swapped;
	uint32_t snaplen;
	int nano;		/* timestamps' fractions are nanoseconds */
	int linktype;
	pcap_t *h;		/* libpcap's reader, or a dead handle for filters */
	FILE *fp;
	char err[PCAP_ERRBUF_SIZE + 64];
};

/*
 * 0, or -1 with r->err saying why the file is not a capture.  threads: 1
 * reads in the caller's thread, 2 or more in a thread of the reader's.
 */
int reader_open(struct reader *r, const char *path, int threads);
/*
 * The next packet: 1 with *hdr (ts.tv_usec holds nanoseconds when r->nano)
 * and *data, 0 at the end, -1 when the file ends inside a record (r->err).
 */
int reader_next(struct reader *r, struct pcap_pkthdr *hdr, const uint8_t **data);
/* A handle to compile filters for this file's link type. */
pcap_t *reader_pcap(struct reader *r);
void reader_close(struct reader *r);

#endif
