/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * HMAC-SHA256 through Nettle (Debian's nettle-dev), and the helpers around it
 * (see hmac.h).  No cryptographic primitive is implemented here.
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include <nettle/hmac.h>
#include <nettle/memops.h>
#include <nettle/sha2.h>

#include "hmac.h"

_Static_assert(SHA256_LEN == SHA256_DIGEST_SIZE, "SHA256_LEN is SHA-256's digest size");

void hmac_sha256(const void *key, size_t keylen, const void *msg, size_t msglen,
		 uint8_t out[SHA256_LEN])
{
	struct hmac_sha256_ctx ctx;

	hmac_sha256_set_key(&ctx, keylen, key);
	if (msglen)
		hmac_sha256_update(&ctx, msglen, msg);
	hmac_sha256_digest(&ctx, SHA256_DIGEST_SIZE, out);
	memset(&ctx, 0, sizeof(ctx));	/* (a copy of the key's pads) */
}

void hmac_sha256_parts(const void *key, size_t keylen, const struct hmac_part *parts, size_t n,
		       uint8_t out[SHA256_LEN])
{
	struct hmac_sha256_ctx ctx;
	size_t i;

	hmac_sha256_set_key(&ctx, keylen, key);
	for (i = 0; i < n; i++)
		if (parts[i].len)
			hmac_sha256_update(&ctx, parts[i].len, parts[i].p);
	hmac_sha256_digest(&ctx, SHA256_DIGEST_SIZE, out);
	memset(&ctx, 0, sizeof(ctx));
}

int hmac_equal(const uint8_t *a, const uint8_t *b, size_t len)
{
	return len ? memeql_sec(a, b, len) : 1;	/* (time depends on len only) */
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
