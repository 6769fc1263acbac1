/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * SHA-256 as specified in FIPS 180-4 (sections 4.1.2, 4.2.2, 5.1.1, 5.3.3
 * and 6.2) and HMAC as in RFC 2104 / FIPS 198-1.  Words are big-endian;
 * the state is kept as eight 32-bit words and a byte count.
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <sys/types.h>

#include "hmac.h"

/* memset that the compiler may not drop, for key material going out of scope */
static void wipe(void *p, size_t len)
{
	volatile uint8_t *v = p;

	while (len--)
		*v++ = 0;
}

/* ---- SHA-256 ---- */

/* FIPS 180-4 4.2.2: the first 32 bits of the fractional parts of the cube
 * roots of the first 64 primes */
static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5,
	0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
	0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
	0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5,
	0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

/* FIPS 180-4 5.3.3: the first 32 bits of the fractional parts of the square
 * roots of the first 8 primes */
static const uint32_t H0[8] = {
	0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

static inline uint32_t rotr(uint32_t x, unsigned n)
{
	return (x >> n) | (x << (32 - n));	/* n is 2..25 here, never 0 */
}

/* FIPS 180-4 4.1.2 */
#define CH(x, y, z)  (((x) & (y)) ^ (~(x) & (z)))
#define MAJ(x, y, z) (((x) & (y)) ^ ((x) & (z)) ^ ((y) & (z)))
#define BSIG0(x) (rotr(x, 2) ^ rotr(x, 13) ^ rotr(x, 22))
#define BSIG1(x) (rotr(x, 6) ^ rotr(x, 11) ^ rotr(x, 25))
#define SSIG0(x) (rotr(x, 7) ^ rotr(x, 18) ^ ((x) >> 3))
#define SSIG1(x) (rotr(x, 17) ^ rotr(x, 19) ^ ((x) >> 10))

static uint32_t load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static void store_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* FIPS 180-4 6.2.2: one 512-bit block into the hash value */
static void sha256_block(uint32_t h[8], const uint8_t *block)
{
	uint32_t w[64], a, b, c, d, e, f, g, hh, t1, t2;
	int t;

	for (t = 0; t < 16; t++)
		w[t] = load_be32(block + 4 * t);
	for (t = 16; t < 64; t++)
		w[t] = SSIG1(w[t - 2]) + w[t - 7] + SSIG0(w[t - 15]) + w[t - 16];

	a = h[0], b = h[1], c = h[2], d = h[3];
	e = h[4], f = h[5], g = h[6], hh = h[7];
	for (t = 0; t < 64; t++) {
		t1 = hh + BSIG1(e) + CH(e, f, g) + K[t] + w[t];
		t2 = BSIG0(a) + MAJ(a, b, c);
		hh = g;
		g = f;
		f = e;
		e = d + t1;
		d = c;
		c = b;
		b = a;
		a = t1 + t2;
	}
	h[0] += a, h[1] += b, h[2] += c, h[3] += d;
	h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
	wipe(w, sizeof(w));
}

void sha256_init(struct sha256 *s)
{
	memcpy(s->h, H0, sizeof(s->h));
	s->len = 0;
	memset(s->buf, 0, sizeof(s->buf));
}

void sha256_update(struct sha256 *s, const void *data, size_t len)
{
	const uint8_t *p = data;
	size_t fill = (size_t)(s->len % SHA256_BLOCK), n;

	if (!len)
		return;		/* data may be NULL */
	s->len += len;
	if (fill) {		/* top up the partial block first */
		n = SHA256_BLOCK - fill;
		if (n > len)
			n = len;
		memcpy(s->buf + fill, p, n);
		p += n;
		len -= n;
		if (fill + n < SHA256_BLOCK)
			return;
		sha256_block(s->h, s->buf);
	}
	for (; len >= SHA256_BLOCK; p += SHA256_BLOCK, len -= SHA256_BLOCK)
		sha256_block(s->h, p);
	if (len)
		memcpy(s->buf, p, len);
}

void sha256_final(struct sha256 *s, uint8_t out[SHA256_LEN])
{
	/* FIPS 180-4 5.1.1: a 1 bit, zeros up to 448 mod 512, the length in
	 * bits as a 64-bit big-endian number (lengths are < 2^64 bits) */
	uint64_t bits = s->len * 8;
	size_t fill = (size_t)(s->len % SHA256_BLOCK);
	int i;

	s->buf[fill++] = 0x80;
	if (fill > SHA256_BLOCK - 8) {	/* no room for the length: one more block */
		memset(s->buf + fill, 0, SHA256_BLOCK - fill);
		sha256_block(s->h, s->buf);
		fill = 0;
	}
	memset(s->buf + fill, 0, SHA256_BLOCK - 8 - fill);
	store_be32(s->buf + SHA256_BLOCK - 8, (uint32_t)(bits >> 32));
	store_be32(s->buf + SHA256_BLOCK - 4, (uint32_t)bits);
	sha256_block(s->h, s->buf);
	for (i = 0; i < 8; i++)
		store_be32(out + 4 * i, s->h[i]);
	wipe(s, sizeof(*s));
}

/* ---- HMAC (RFC 2104) ---- */

void hmac_sha256(const void *key, size_t keylen, const void *msg, size_t msglen,
		 uint8_t out[SHA256_LEN])
{
	uint8_t k0[SHA256_BLOCK], pad[SHA256_BLOCK], inner[SHA256_LEN];
	struct sha256 s;
	size_t i;

	/* K0: the key, or its digest when longer than a block, zero-padded */
	memset(k0, 0, sizeof(k0));
	if (keylen > SHA256_BLOCK) {
		sha256_init(&s);
		sha256_update(&s, key, keylen);
		sha256_final(&s, k0);
	} else if (keylen) {
		memcpy(k0, key, keylen);
	}

	/* H((K0 ^ ipad) || msg) */
	for (i = 0; i < SHA256_BLOCK; i++)
		pad[i] = k0[i] ^ 0x36;
	sha256_init(&s);
	sha256_update(&s, pad, sizeof(pad));
	sha256_update(&s, msg, msglen);
	sha256_final(&s, inner);

	/* H((K0 ^ opad) || inner) */
	for (i = 0; i < SHA256_BLOCK; i++)
		pad[i] = k0[i] ^ 0x5c;
	sha256_init(&s);
	sha256_update(&s, pad, sizeof(pad));
	sha256_update(&s, inner, sizeof(inner));
	sha256_final(&s, out);

	wipe(k0, sizeof(k0));
	wipe(pad, sizeof(pad));
	wipe(inner, sizeof(inner));
}

int hmac_equal(const uint8_t *a, const uint8_t *b, size_t len)
{
	volatile uint8_t diff = 0;	/* volatile: no early exit on a mismatch */
	size_t i;

	for (i = 0; i < len; i++)
		diff |= a[i] ^ b[i];
	/* 1 when diff is 0, without a branch: (0 - 1) >> 8 has bit 0 set,
	 * (1..255 - 1) >> 8 does not */
	return (int)(((unsigned)diff - 1) >> 8 & 1);
}

/* ---- hex and random bytes ---- */

void hmac_hex(const uint8_t *in, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * len] = '\0';
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int hmac_unhex(const char *hex, uint8_t *out, size_t len)
{
	size_t i;

	/* check everything first, so that a bad string leaves out untouched;
	 * the NUL of a short string stops the loop (it is not a hex digit) */
	for (i = 0; i < 2 * len; i++)
		if (hexval(hex[i]) < 0)
			return -1;
	if (hex[2 * len] != '\0')
		return -1;
	for (i = 0; i < len; i++)
		out[i] = (uint8_t)(hexval(hex[2 * i]) << 4 | hexval(hex[2 * i + 1]));
	return 0;
}

int hmac_random(uint8_t *out, size_t len)
{
	ssize_t n;

	/* getrandom may return less than asked (over 256 bytes, interrupted by
	 * a signal) or fail with EINTR before any byte: go on until done */
	while (len) {
		n = getrandom(out, len, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		out += n;
		len -= (size_t)n;
	}
	return 0;
}
