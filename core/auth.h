/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Tokens, nonces and MACs: how the two ends of a control channel (the fleet
 * protocol of fleet/fleet.h, bw/lat's optional --token-file) prove a shared
 * secret without sending it, and the session key that authenticates every
 * message after the handshake (core/wire.h's wire_mac).
 */
#ifndef FS_AUTH_H
#define FS_AUTH_H

#include <jansson.h>
#include <stddef.h>
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
/* mac of role (e.g. "ptp-client") over the two nonces, in hex:
 * HMAC-SHA256(token, "fabscope-" role "\n" n1 "\n" n2). */
void auth_mac(const char *token, const char *role, const char *n1, const char *n2,
	      char out[AUTH_NONCE_HEX + 1]);
/* Constant-time check of a received mac (may be NULL) against the expected one. */
int auth_mac_ok(const char *token, const char *role, const char *n1, const char *n2,
		const char *mac);
/*
 * A handshake's mac over its messages too, not only the nonces:
 *
 *   HMAC-SHA256(token, "fabscope-" role "\n" n1 "\n" n2 "\n" C(msgs[0]) ... "\n" C(msgs[n-1]))
 *
 * where C(m) is m's canonical text (auth_canon), so that every field of
 * every message so far is what both ends saw: one changed on the way, added
 * or left out, gives another mac.  Canonical text holds no newline, so the
 * parts cannot be shifted into one another.  0, or -ENOMEM (out not set).
 */
int auth_mac_msgs(const char *token, const char *role, const char *n1, const char *n2, json_t *const *msgs,
		  size_t n, char out[AUTH_NONCE_HEX + 1]);
/* Constant-time check of mac (may be NULL; hex in either case) against
 * auth_mac_msgs' of the same: 1 if it is that mac, else 0. */
int auth_mac_msgs_ok(const char *token, const char *role, const char *n1, const char *n2, json_t *const *msgs,
		     size_t n, const char *mac);
/*
 * m's canonical text, what a handshake's mac covers: m without its "mac"
 * member, as JSON with no whitespace and its members in byte order of their
 * keys (recursively), strings in UTF-8 with only '"', '\\' and the
 * characters below U+0020 escaped (\b \f \n \r \t, else \u00XX in upper
 * case), integers in decimal (jansson's JSON_COMPACT | JSON_SORT_KEYS).
 * Both ends make it from the message as parsed, so what the receiver
 * understood is what is checked.  malloc'd; NULL when out of memory.
 */
char *auth_canon(json_t *m);
/* The session key of one connection, HMAC-SHA256(token, "fabscope-session\n"
 * challenge-nonce "\n" agent-nonce): every message after the welcome carries
 * a MAC under it (wire_mac), so that none can be injected, changed,
 * replayed, reordered or dropped unseen. */
void auth_session_key(const char *token, const char *cnonce, const char *anonce, uint8_t key[32]);

#endif
