/* SPDX-License-Identifier: BSD-2-Clause */
/* Capture files read fast: see reader.h. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "reader.h"

#define PCAP_MAGIC_US 0xa1b2c3d4u
#define PCAP_MAGIC_NS 0xa1b23c4du
#define REC_MAX (1u << 20)	/* a record longer than this is not a packet (snap lengths: 256 KiB) */
#define BUF_SIZE ((size_t)8 << 20)	/* read() this much at a time, records parsed in place */

static uint32_t get32(const struct reader *r, size_t off)
{
	uint32_t v;

	memcpy(&v, r->map + off, 4);
	return r->swapped ? __builtin_bswap32(v) : v;
}

/* More of the file into the buffer: what is left of it moved to its front. */
static int refill(struct reader *r)
{
	size_t left = r->size - r->off;
	ssize_t n;

	memmove(r->buf, r->buf + r->off, left);
	r->size = left;
	r->off = 0;
	while (r->size < BUF_SIZE) {
		n = read(r->fd, r->buf + r->size, BUF_SIZE - r->size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(r->err, sizeof(r->err), "reading: %s", strerror(errno));
			return -1;
		}
		if (!n) {
			r->eof = 1;
			break;
		}
		r->size += (size_t)n;
	}
	r->map = r->buf;
	return 0;
}

static int open_mapped(struct reader *r, const char *path)
{
	uint32_t magic;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	r->buf = malloc(BUF_SIZE);
	if (!r->buf) {
		close(fd);
		return -1;
	}
	r->fd = fd;
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	if (refill(r) || r->size < 24)
		goto not_ours;
	memcpy(&magic, r->map, 4);
	if (magic == PCAP_MAGIC_US || magic == PCAP_MAGIC_NS) {
		r->swapped = 0;
	} else if (__builtin_bswap32(magic) == PCAP_MAGIC_US || __builtin_bswap32(magic) == PCAP_MAGIC_NS) {
		r->swapped = 1;
		magic = __builtin_bswap32(magic);
	} else {
		goto not_ours;	/* pcapng or something else: libpcap's to read */
	}
	r->nano = magic == PCAP_MAGIC_NS;
	r->snaplen = get32(r, 16);
	r->linktype = (int)(get32(r, 20) & 0x03ffffff);	/* the low bits: FCS length above */
	r->off = 24;
	r->mapped = 1;
	return 0;
not_ours:
	close(fd);
	free(r->buf);
	r->buf = NULL;
	r->map = NULL;
	r->fd = -1;
	r->size = r->off = 0;
	r->err[0] = 0;
	return -1;
}

int reader_open(struct reader *r, const char *path)
{
	char eb[PCAP_ERRBUF_SIZE] = "";

	memset(r, 0, sizeof(*r));
	if (!open_mapped(r, path))
		return 0;
	r->fp = fopen(path, "rb");
	if (!r->fp) {
		snprintf(r->err, sizeof(r->err), "%s", strerror(errno));
		return -1;
	}
	setvbuf(r->fp, NULL, _IOFBF, 1 << 20);
	r->h = pcap_fopen_offline_with_tstamp_precision(r->fp, PCAP_TSTAMP_PRECISION_NANO, eb);
	if (!r->h) {
		fclose(r->fp);
		r->fp = NULL;
		snprintf(r->err, sizeof(r->err), "%s", eb);
		return -1;
	}
	r->nano = pcap_get_tstamp_precision(r->h) == PCAP_TSTAMP_PRECISION_NANO;
	r->linktype = pcap_datalink(r->h);
	r->snaplen = (uint32_t)pcap_snapshot(r->h);
	return 0;
}

int reader_next(struct reader *r, struct pcap_pkthdr *hdr, const uint8_t **data)
{
	if (r->mapped) {
		uint32_t cap, len;

		if (r->size - r->off < 16 + REC_MAX && !r->eof && refill(r))
			return -1;
		if (r->off == r->size)
			return 0;
		if (r->size - r->off < 16) {
			snprintf(r->err, sizeof(r->err), "a record header cut after %zu of 16 bytes",
				 r->size - r->off);
			return -1;
		}
		cap = get32(r, r->off + 8);
		len = get32(r, r->off + 12);
		if (cap > REC_MAX) {
			snprintf(r->err, sizeof(r->err), "a record of %u bytes: not a packet", cap);
			return -1;
		}
		if (r->size - r->off - 16 < cap) {
			snprintf(r->err, sizeof(r->err), "a record of %u bytes cut after %zu", cap,
				 r->size - r->off - 16);
			return -1;
		}
		hdr->ts.tv_sec = (time_t)get32(r, r->off);
		hdr->ts.tv_usec = (suseconds_t)get32(r, r->off + 4);
		hdr->caplen = cap;
		hdr->len = len;
		*data = r->map + r->off + 16;
		r->off += 16 + (size_t)cap;
		return 1;
	}
	for (;;) {
		struct pcap_pkthdr *h;
		const u_char *d;
		int rc = pcap_next_ex(r->h, &h, &d);

		if (rc == 0)
			continue;
		if (rc == PCAP_ERROR_BREAK)
			return 0;
		if (rc < 0) {
			snprintf(r->err, sizeof(r->err), "%s", pcap_geterr(r->h));
			return -1;
		}
		*hdr = *h;
		*data = d;
		return 1;
	}
}

pcap_t *reader_pcap(struct reader *r)
{
	if (!r->h)
		r->h = pcap_open_dead(r->linktype, r->snaplen ? (int)r->snaplen : 262144);
	return r->h;
}

void reader_close(struct reader *r)
{
	if (r->mapped && r->fd >= 0)
		close(r->fd);
	free(r->buf);
	if (r->h)
		pcap_close(r->h);	/* closes r->fp too */
	memset(r, 0, sizeof(*r));
}
