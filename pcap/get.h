/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Bounds-checked big-endian reads over captured bytes, shared by the
 * dissectors of pcap/ (tcpdump's GET_ macros are the model).
 *
 * A get_cursor walks the len bytes at p from off.  get_has() says whether
 * n more bytes are there; a dissector asks it first, reports truncation
 * when the answer is no, and only then reads.  The getters check again
 * anyway: a read past the end returns 0 (zeroes for get_bytes), leaves the
 * offset where it was and sets `bad`, which a dissector treats as its own
 * bug (every read should have been asked for).  Nothing here ever reads
 * past p + len.
 */
#ifndef FS_PCAP_GET_H
#define FS_PCAP_GET_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct get_cursor {
	const uint8_t *p;
	size_t len, off;
	int bad;
};

/* Big-endian fields at p, which the caller has checked are there */
static inline uint16_t be16_at(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t be24_at(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static inline uint32_t be32_at(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A cursor over len bytes at p (none when p is NULL) */
static inline struct get_cursor get_cursor_init(const uint8_t *p, size_t len)
{
	struct get_cursor c = { .p = p, .len = p ? len : 0 };

	return c;
}

static inline int get_has(const struct get_cursor *c, size_t n)
{
	return c->off <= c->len && c->len - c->off >= n;
}

/* The n bytes from off, or NULL (and the cursor bad) when they are not all there */
static inline const uint8_t *get_take(struct get_cursor *c, size_t n)
{
	const uint8_t *q;

	if (!get_has(c, n)) {
		c->bad = 1;
		return NULL;
	}
	q = c->p + c->off;
	c->off += n;
	return q;
}

static inline uint8_t get_u8(struct get_cursor *c)
{
	const uint8_t *q = get_take(c, 1);

	return q ? q[0] : 0;
}

static inline uint16_t get_be16(struct get_cursor *c)
{
	const uint8_t *q = get_take(c, 2);

	return q ? be16_at(q) : 0;
}

static inline uint32_t get_be24(struct get_cursor *c)
{
	const uint8_t *q = get_take(c, 3);

	return q ? be24_at(q) : 0;
}

static inline uint32_t get_be32(struct get_cursor *c)
{
	const uint8_t *q = get_take(c, 4);

	return q ? be32_at(q) : 0;
}

static inline uint64_t get_be64(struct get_cursor *c)
{
	uint64_t hi = get_be32(c);

	return hi << 32 | get_be32(c);
}

static inline void get_bytes(struct get_cursor *c, uint8_t *out, size_t n)
{
	const uint8_t *q = get_take(c, n);

	if (q)
		memcpy(out, q, n);
	else
		memset(out, 0, n);
}

static inline void get_skip(struct get_cursor *c, size_t n)
{
	get_take(c, n);
}

/*
 * Reads inside a header whose length was checked whole first (dissect.c's
 * need(), like tcpdump's ND_TCHECK_LEN before its EXTRACT_ macros): no
 * test per field, which is most of the cost of a packet otherwise.  A
 * caller that reads past what it checked is a bug; builds with
 * GET_PARANOID (SANITIZE=1, the fuzzers) abort on one.
 */
#ifdef GET_PARANOID
#include <stdlib.h>
#define GET_HDR_CHECK(c, n) do { if (!get_has((c), (n))) abort(); } while (0)
#else
#define GET_HDR_CHECK(c, n) do { } while (0)
#endif

static inline const uint8_t *hdr_take(struct get_cursor *c, size_t n)
{
	const uint8_t *q = c->p + c->off;

	GET_HDR_CHECK(c, n);
	c->off += n;
	return q;
}

static inline uint8_t hdr_u8(struct get_cursor *c)
{
	return hdr_take(c, 1)[0];
}

static inline uint16_t hdr_be16(struct get_cursor *c)
{
	return be16_at(hdr_take(c, 2));
}

static inline uint32_t hdr_be24(struct get_cursor *c)
{
	return be24_at(hdr_take(c, 3));
}

static inline uint32_t hdr_be32(struct get_cursor *c)
{
	return be32_at(hdr_take(c, 4));
}

static inline uint64_t hdr_be64(struct get_cursor *c)
{
	uint64_t hi = hdr_be32(c);

	return hi << 32 | hdr_be32(c);
}

static inline void hdr_bytes(struct get_cursor *c, uint8_t *out, size_t n)
{
	memcpy(out, hdr_take(c, n), n);
}

static inline void hdr_skip(struct get_cursor *c, size_t n)
{
	hdr_take(c, n);
}

#endif
