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
#define LEAD (16 + (size_t)READER_REC_MAX)	/* room in front of a chunk for a record begun before it */

/*
 * A chunk's record begun before it fits in front of it whatever the chunk's
 * size: reader_next() moves on while what is left is under 16 bytes or
 * under a record of at most READER_REC_MAX, so under LEAD bytes.
 */

static uint32_t get32(const struct reader *r, size_t off)
{
	uint32_t v;

	memcpy(&v, r->map + off, 4);
	return r->swapped ? __builtin_bswap32(v) : v;
}

/* A chunk of the file: full, or short at its end or at a failed read. */
static void fill_chunk(int fd, struct reader_chunk *c)
{
	uint8_t *data = c->mem + LEAD;
	ssize_t n;

	c->len = 0;
	c->eof = c->err = 0;
	while (c->len < READER_CHUNK) {
		n = read(fd, data + c->len, READER_CHUNK - c->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			c->err = errno;
			return;
		}
		if (!n) {
			c->eof = 1;
			return;
		}
		c->len += (size_t)n;
	}
}

/*
 * On to the next chunk, what is left of this one (the start of a record)
 * copied in front of it.
 */
static void next_chunk(struct reader *r)
{
	size_t left = r->size - r->off;
	struct reader_chunk *c = &r->chunk[(r->cur + 1) % READER_CHUNKS];

	fill_chunk(r->fd, c);
	memcpy(c->mem + LEAD - left, r->map + r->off, left);
	r->map = c->mem + LEAD - left;
	r->size = left + c->len;
	r->off = 0;
	r->eof = c->eof || c->err;
	r->rerr = c->err;
	r->cur++;
}

static void free_chunks(struct reader *r)
{
	int i;

	for (i = 0; i < READER_CHUNKS; i++) {
		free(r->chunk[i].mem);
		r->chunk[i].mem = NULL;
	}
}

static int open_mapped(struct reader *r, const char *path)
{
	uint32_t magic;
	int fd = open(path, O_RDONLY | O_CLOEXEC), i;

	if (fd < 0)
		return -1;
	r->fd = fd;
	for (i = 0; i < READER_CHUNKS; i++)
		if (!(r->chunk[i].mem = malloc(LEAD + READER_CHUNK)))
			goto not_ours;
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	fill_chunk(fd, &r->chunk[0]);
	r->map = r->chunk[0].mem + LEAD;
	r->size = r->chunk[0].len;
	r->eof = r->chunk[0].eof || r->chunk[0].err;
	r->rerr = r->chunk[0].err;
	if (r->size < 24)
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
	free_chunks(r);
	r->map = NULL;
	r->fd = -1;
	r->size = r->off = 0;
	r->eof = r->rerr = 0;
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
		int e = errno;

		snprintf(r->err, sizeof(r->err), "%s", strerror(e));
		r->env = e != ENOENT && e != ENOTDIR && e != EISDIR && e != ENAMETOOLONG && e != ELOOP;
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
		uint32_t cap = 0, len;
		size_t left;

		for (;;) {	/* a whole record, or the end */
			left = r->size - r->off;
			if (left >= 16) {
				cap = get32(r, r->off + 8);
				if (cap > READER_REC_MAX) {
					snprintf(r->err, sizeof(r->err), "a record of %u bytes: not a packet", cap);
					return -1;
				}
				if (left - 16 >= cap)
					break;
			}
			if (!r->eof) {
				next_chunk(r);
				continue;
			}
			if (r->rerr) {
				snprintf(r->err, sizeof(r->err), "reading: %s", strerror(r->rerr));
				return -1;
			}
			if (!left)
				return 0;
			if (left < 16)
				snprintf(r->err, sizeof(r->err), "a record header cut after %zu of 16 bytes", left);
			else
				snprintf(r->err, sizeof(r->err), "a record of %u bytes cut after %zu", cap, left - 16);
			return -1;
		}
		len = get32(r, r->off + 12);
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
	free_chunks(r);
	if (r->h)
		pcap_close(r->h);	/* closes r->fp too */
	memset(r, 0, sizeof(*r));
}
