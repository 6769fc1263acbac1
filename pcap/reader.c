/* SPDX-License-Identifier: BSD-2-Clause */
/* Capture files read fast: see reader.h. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reader.h"

#define PCAP_MAGIC_US 0xa1b2c3d4u
#define PCAP_MAGIC_NS 0xa1b23c4du
#define REC_MAX (16u << 20)	/* a record longer than this is not a packet */
#define WINDOW ((size_t)8 << 20)	/* mapped ahead in one go, dropped behind */
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22	/* Linux 5.14 */
#endif

/*
 * The window ahead of off gets its page tables in one call (cheaper than a
 * fault per page), the one behind is dropped from this process (the page
 * cache keeps it): the resident size stays about two windows, whatever the
 * size of the file.  Both are hints: a kernel without them faults as usual.
 */
static void slide(struct reader *r)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), from, len, behind;

	from = r->win_end;
	len = from < r->size ? (r->size - from < WINDOW ? r->size - from : WINDOW) : 0;
	if (len)
		madvise((void *)(r->map + from), len, MADV_POPULATE_READ);
	r->win_end = from + len;
	behind = r->off > WINDOW ? (r->off - WINDOW) / page * page : 0;
	if (behind > r->dropped) {
		madvise((void *)(r->map + r->dropped), behind - r->dropped, MADV_DONTNEED);
		r->dropped = behind;
	}
}

static uint32_t get32(const struct reader *r, size_t off)
{
	uint32_t v;

	memcpy(&v, r->map + off, 4);
	return r->swapped ? __builtin_bswap32(v) : v;
}

static int open_mapped(struct reader *r, const char *path)
{
	struct stat st;
	uint32_t magic;
	void *m;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < 24) {
		close(fd);
		return -1;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	r->map = m;
	r->size = (size_t)st.st_size;
	memcpy(&magic, r->map, 4);
	if (magic == PCAP_MAGIC_US || magic == PCAP_MAGIC_NS) {
		r->swapped = 0;
	} else if (__builtin_bswap32(magic) == PCAP_MAGIC_US || __builtin_bswap32(magic) == PCAP_MAGIC_NS) {
		r->swapped = 1;
		magic = __builtin_bswap32(magic);
	} else {
		munmap((void *)r->map, r->size);
		r->map = NULL;
		return -1;	/* pcapng or something else: libpcap's to read */
	}
	r->nano = magic == PCAP_MAGIC_NS;
	r->snaplen = get32(r, 16);
	r->linktype = (int)(get32(r, 20) & 0x03ffffff);	/* the low bits: FCS length above */
	r->off = 24;
	r->mapped = 1;
	madvise((void *)r->map, r->size, MADV_SEQUENTIAL);
	slide(r);
	return 0;
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

		if (r->off == r->size)
			return 0;
		if (r->off + 65536 > r->win_end && r->win_end < r->size)
			slide(r);
		if (r->size - r->off < 16) {
			snprintf(r->err, sizeof(r->err), "a record header cut after %zu of 16 bytes",
				 r->size - r->off);
			return -1;
		}
		cap = get32(r, r->off + 8);
		len = get32(r, r->off + 12);
		if (cap > REC_MAX) {
			snprintf(r->err, sizeof(r->err), "a record of %u bytes at offset %zu: not a packet", cap,
				 r->off);
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
	if (r->map)
		munmap((void *)r->map, r->size);
	if (r->h)
		pcap_close(r->h);	/* closes r->fp too */
	memset(r, 0, sizeof(*r));
}
