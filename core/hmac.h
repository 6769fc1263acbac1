/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for the control
 * protocol's challenge: an agent proves that it holds the shared token by
 * answering a random nonce with HMAC-SHA256(token, nonce).  A small, plain
 * implementation so that fabscope needs no crypto library; it is not meant
 * to be fast, and nothing here tries to hide timing except hmac_equal().
 *
 * Helpers around it: constant-time comparison of MACs, lowercase hex in
 * and out (digests and nonces travel as hex strings in the JSON messages),
 * and random bytes from the kernel for nonces.
 */
#ifndef FS_HMAC_H
#define FS_HMAC_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32		/* digest bytes */
#define SHA256_BLOCK 64		/* block bytes (also HMAC's B) */

/* Streaming state: sha256_init, any number of sha256_update, sha256_final. */
struct sha256 {
	uint32_t h[8];			/* intermediate hash value H(i) */
	uint64_t len;			/* message bytes so far */
	uint8_t buf[SHA256_BLOCK];	/* a partial block: buf[0..len % 64) */
};

void sha256_init(struct sha256 *s);
/* data may be NULL when len is 0. */
void sha256_update(struct sha256 *s, const void *data, size_t len);
/* The digest of everything updated since init; s is wiped (init to reuse). */
void sha256_final(struct sha256 *s, uint8_t out[SHA256_LEN]);

/* HMAC-SHA256 of msg under key; any key length (over 64 bytes: hashed first).
 * key and msg may be NULL when their length is 0. */
void hmac_sha256(const void *key, size_t keylen, const void *msg, size_t msglen,
		 uint8_t out[SHA256_LEN]);

/* Constant-time comparison (time depends on len only): 1 if equal, else 0.
 * len 0 is equal. */
int hmac_equal(const uint8_t *a, const uint8_t *b, size_t len);

/* Lowercase hex of len bytes into out (2*len+1 bytes, NUL-terminated). */
void hmac_hex(const uint8_t *in, size_t len, char *out);

/* Parse hex, which must be exactly 2*len hex digits (either case) and then
 * its terminating NUL, into out[len]: 0, or -1 (a non-hex character, a
 * shorter or longer string) with out left untouched. */
int hmac_unhex(const char *hex, uint8_t *out, size_t len);

/* len random bytes from getrandom(2) (blocking until the kernel's pool is
 * ready; retried on EINTR and short reads): 0, or -errno. */
int hmac_random(uint8_t *out, size_t len);

#endif
