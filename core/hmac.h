/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * HMAC-SHA256 (RFC 2104) for the control protocol: an agent proves that it
 * holds the shared token by answering a random nonce with HMAC-SHA256(token,
 * nonce), and every message after the handshake carries a MAC under a
 * session key.  The primitive is Nettle's (Debian's nettle-dev); this header
 * is the small interface fabscope uses, with constant-time comparison of
 * MACs, lowercase hex in and out (digests and nonces travel as hex strings in
 * the JSON messages), and random bytes from the kernel for nonces.
 */
#ifndef FS_HMAC_H
#define FS_HMAC_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32		/* digest bytes */

/* HMAC-SHA256 of msg under key; any key length.  key and msg may be NULL
 * when their length is 0. */
void hmac_sha256(const void *key, size_t keylen, const void *msg, size_t msglen,
		 uint8_t out[SHA256_LEN]);
/* The same of the concatenation of n parts (no copy of them is made). */
struct hmac_part {
	const void *p;
	size_t len;
};
void hmac_sha256_parts(const void *key, size_t keylen, const struct hmac_part *parts, size_t n,
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
