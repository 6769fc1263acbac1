/* SPDX-License-Identifier: BSD-2-Clause */
/* Tokens, nonces and MACs (see auth.h). */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/clock.h"
#include "../core/error.h"
#include "../core/hmac.h"
#include "auth.h"

int auth_token(const char *path, int readable_ok, char **token)
{
	char buf[AUTH_TOKEN_MAX + 2];
	size_t n;
	FILE *f;

	*token = NULL;
	if (!path) {
		const char *e = getenv("FABSCOPE_TOKEN");

		if (!e || !*e)
			return fs_err_usage("no token: give --token-file FILE or set FABSCOPE_TOKEN "
					    "(the same secret for the coordinator and every agent)");
		if (strlen(e) > AUTH_TOKEN_MAX)
			return fs_err_usage("FABSCOPE_TOKEN is longer than %d bytes", AUTH_TOKEN_MAX);
		*token = strdup(e);
		return 0;
	}
	f = fopen(path, "r");
	if (!f)
		return fs_err_env("cannot read token file '%s': %s", path, strerror(errno));
	{	/* a secret others can read is no secret: refused unless the user says so */
		struct stat st;

		if (!fstat(fileno(f), &st) && (st.st_mode & 077)) {
			if (!readable_ok) {
				fclose(f);
				return fs_err_env("token file '%s' can be read or written by others (mode %04o): chmod 600 it, "
						  "or give --allow-readable-token", path, (unsigned)(st.st_mode & 07777));
			}
			fs_warn("token file '%s' can be read or written by others (mode %04o), accepted "
				"(--allow-readable-token)", path, (unsigned)(st.st_mode & 07777));
		}
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	if (n > AUTH_TOKEN_MAX)
		return fs_err_usage("token file '%s' is longer than %d bytes", path, AUTH_TOKEN_MAX);
	buf[n] = 0;
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))	/* one trailing newline is not the secret */
		buf[--n] = 0;
	if (!n || strlen(buf) != n)
		return fs_err_usage("token file '%s' is empty or not text", path);
	*token = strdup(buf);
	return 0;
}

int auth_token_fd(int fd, int timeout_ms, char **token)
{
	char buf[AUTH_TOKEN_MAX + 1];
	size_t n = 0;
	uint64_t end = clock_ns() + (uint64_t)timeout_ms * 1000000ull;

	*token = NULL;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t now = clock_ns();
		ssize_t r;
		int pr;

		if (now >= end)
			return fs_err_peer("no token on the control channel within %d ms (--token-stdin)", timeout_ms);
		pr = poll(&p, 1, (int)((end - now) / 1000000ull) + 1);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			continue;
		r = read(fd, buf + n, 1);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0)
			return fs_err_peer("the control channel closed before the token's line (--token-stdin)");
		if (buf[n] == '\n')
			break;
		if (++n > AUTH_TOKEN_MAX)
			return fs_err_usage("the token on the control channel is longer than %d bytes", AUTH_TOKEN_MAX);
	}
	while (n && buf[n - 1] == '\r')
		n--;
	buf[n] = 0;
	if (!n || strlen(buf) != n)
		return fs_err_usage("the token on the control channel is empty or not text (--token-stdin)");
	*token = strdup(buf);
	return *token ? 0 : fs_err_env("out of memory");
}

int auth_nonce(char out[AUTH_NONCE_HEX + 1])
{
	uint8_t raw[AUTH_NONCE_HEX / 2];
	int rc = hmac_random(raw, sizeof(raw));

	if (rc)
		return rc;
	hmac_hex(raw, sizeof(raw), out);
	return 0;
}

int auth_nonce_ok(const char *n)
{
	uint8_t raw[AUTH_NONCE_HEX / 2];

	return n && !hmac_unhex(n, raw, sizeof(raw));
}

char *auth_canon(json_t *m)
{
	json_t *c = json_is_object(m) ? json_copy(m) : json_incref(m);	/* (a shallow copy) */
	char *s;

	if (!c)
		return NULL;
	if (json_is_object(c))
		json_object_del(c, "mac");
	s = json_dumps(c, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	json_decref(c);
	return s;
}

#define AUTH_MAX_MSGS 8

/* The raw mac of role over the nonces and n messages: 0, or -ENOMEM */
static int mac_raw(const char *token, const char *role, const char *n1, const char *n2, json_t *const *msgs,
		   size_t n, uint8_t out[SHA256_LEN])
{
	struct hmac_part parts[6 + 2 * AUTH_MAX_MSGS];
	char *canon[AUTH_MAX_MSGS];
	size_t k = 0, i;
	int rc = 0;

	if (n > AUTH_MAX_MSGS)
		return -EINVAL;
	parts[k++] = (struct hmac_part){ "fabscope-", 9 };
	parts[k++] = (struct hmac_part){ role, strlen(role) };
	parts[k++] = (struct hmac_part){ "\n", 1 };
	parts[k++] = (struct hmac_part){ n1, strlen(n1) };
	parts[k++] = (struct hmac_part){ "\n", 1 };
	parts[k++] = (struct hmac_part){ n2, strlen(n2) };
	for (i = 0; i < n; i++) {
		canon[i] = auth_canon(msgs[i]);
		if (!canon[i])
			rc = -ENOMEM;
		parts[k++] = (struct hmac_part){ "\n", 1 };
		parts[k++] = (struct hmac_part){ canon[i], canon[i] ? strlen(canon[i]) : 0 };
	}
	if (!rc)
		hmac_sha256_parts(token, strlen(token), parts, k, out);
	for (i = 0; i < n; i++)
		free(canon[i]);
	return rc;
}

void auth_mac(const char *token, const char *role, const char *n1, const char *n2,
	      char out[AUTH_NONCE_HEX + 1])
{
	uint8_t raw[SHA256_LEN];

	mac_raw(token, role, n1, n2, NULL, 0, raw);	/* (no message: nothing to allocate) */
	hmac_hex(raw, sizeof(raw), out);
}

int auth_mac_msgs(const char *token, const char *role, const char *n1, const char *n2, json_t *const *msgs,
		  size_t n, char out[AUTH_NONCE_HEX + 1])
{
	uint8_t raw[SHA256_LEN];
	int rc = mac_raw(token, role, n1, n2, msgs, n, raw);

	if (!rc)
		hmac_hex(raw, sizeof(raw), out);
	return rc;
}

void auth_session_key(const char *token, const char *cnonce, const char *anonce, uint8_t key[32])
{
	mac_raw(token, "session", cnonce, anonce, NULL, 0, key);
}

int auth_mac_ok(const char *token, const char *role, const char *n1, const char *n2,
		 const char *mac)
{
	return auth_mac_msgs_ok(token, role, n1, n2, NULL, 0, mac);
}

int auth_mac_msgs_ok(const char *token, const char *role, const char *n1, const char *n2, json_t *const *msgs,
		     size_t n, const char *mac)
{
	uint8_t want[SHA256_LEN], got[SHA256_LEN];

	if (!mac || strlen(mac) != 2 * SHA256_LEN || hmac_unhex(mac, got, sizeof(got)) ||
	    mac_raw(token, role, n1, n2, msgs, n, want))
		return 0;
	return hmac_equal(want, got, sizeof(want));
}
