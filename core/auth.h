/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Tokens, nonces and MACs: how the two ends of a control channel (the fleet
 * protocol of fleet/fleet.h, bw/lat's optional --token-file) prove a shared
 * secret without sending it, and the session key that authenticates every
 * message after the handshake (core/wire.h's wire_mac).
 */
#ifndef FS_AUTH_H
#define FS_AUTH_H

#include <stdint.h>

#define AUTH_NONCE_HEX 64
#define AUTH_TOKEN_MAX 4096

/* The shared token: from path (if given), else $FABSCOPE_TOKEN.  0 and a
 * malloc'd token, or -exit code after one line naming what to do.  A file
 * that others may read or write is refused (exit 3) unless readable_ok. */
int auth_token(const char *path, int readable_ok, char **token);
/* The token as the first line read from fd (a launcher's control channel:
 * --token-stdin), one byte at a time so that nothing after it is taken,
 * within timeout_ms.  0 and a malloc'd token, or -exit code. */
int auth_token_fd(int fd, int timeout_ms, char **token);
/* A fresh nonce: AUTH_NONCE_HEX hex characters and a NUL. */
int auth_nonce(char out[AUTH_NONCE_HEX + 1]);
/* 1 if n (may be NULL) is a nonce as auth_nonce makes them: exactly
 * AUTH_NONCE_HEX hex characters; else 0. */
int auth_nonce_ok(const char *n);
/* mac of role ("agent" or "coordinator") over the two nonces, in hex. */
void auth_mac(const char *token, const char *role, const char *n1, const char *n2,
	      char out[AUTH_NONCE_HEX + 1]);
/* Constant-time check of a received mac against the expected one. */
int auth_mac_ok(const char *token, const char *role, const char *n1, const char *n2,
		const char *mac);
/* The session key of one connection, HMAC-SHA256(token, "fabscope-session\n"
 * challenge-nonce "\n" agent-nonce): every message after the welcome carries
 * a MAC under it (wire_mac), so that none can be injected, changed,
 * replayed, reordered or dropped unseen. */
void auth_session_key(const char *token, const char *cnonce, const char *anonce, uint8_t key[32]);

#endif
