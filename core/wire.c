/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hmac.h"
#include "net.h"
#include "testhook.h"
#include "wire.h"

int wire_version(void)
{
	const char *e = fs_test_env("FABSCOPE_TEST_PROTO_VERSION");

	return e && *e ? atoi(e) : WIRE_VERSION;
}

void wire_mac_start(struct wire_mac *m, const uint8_t key[WIRE_MAC_LEN], uint8_t dir)
{
	memcpy(m->key, key, WIRE_MAC_LEN);
	m->seq = 0;
	m->dir = dir;
	m->bad = 0;
	m->on = 1;
}

/* the MAC of message number m->seq with this body */
void wire_mac_of(const struct wire_mac *m, const void *body, size_t len, uint8_t out[WIRE_MAC_LEN])
{
	uint8_t head[9];
	struct hmac_part parts[2] = { { head, sizeof(head) }, { body, len } };
	int i;

	head[0] = m->dir;
	for (i = 0; i < 8; i++)
		head[1 + i] = (uint8_t)(m->seq >> (56 - 8 * i));
	hmac_sha256_parts(m->key, WIRE_MAC_LEN, parts, 2, out);
}

int wire_send_mac(int fd, struct wire_mac *tx, json_t *msg, int timeout_ms)
{
	char *text;
	size_t len, flen;
	uint8_t *buf;
	int rc, mac = tx && tx->on;

	if (!json_is_object(msg))
		return -EINVAL;	/* messages are objects */
	text = json_dumps(msg, JSON_COMPACT);
	if (!text)
		return -ENOMEM;
	len = strlen(text);
	flen = len + (mac ? WIRE_MAC_LEN : 0);
	buf = malloc(flen + 4);
	if (!buf) {
		free(text);
		return -ENOMEM;
	}
	buf[0] = (uint8_t)(flen >> 24);
	buf[1] = (uint8_t)(flen >> 16);
	buf[2] = (uint8_t)(flen >> 8);
	buf[3] = (uint8_t)flen;
	memcpy(buf + 4, text, len);
	if (mac) {
		wire_mac_of(tx, text, len, buf + 4 + len);
		tx->seq++;	/* (sent or not: a message cut short leaves the channel broken anyway) */
	}
	rc = net_write_full(fd, buf, flen + 4, timeout_ms);
	free(buf);
	free(text);
	return rc;
}

int wire_send(int fd, json_t *msg, int timeout_ms)
{
	return wire_send_mac(fd, NULL, msg, timeout_ms);
}

static int parse_body(const char *buf, size_t len, json_t **msg)
{
	json_t *j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL);

	if (!j || !json_is_object(j)) {
		json_decref(j);
		return -EPROTO;
	}
	*msg = j;
	return 0;
}

/* How many of p[0..n) are printable ASCII, from the start */
static size_t text_prefix(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n && p[i] >= 0x20 && p[i] < 0x7f; i++)
		;
	return i;
}

/* "it began '...'" when p starts with 4 or more printable bytes: 1, else 0 */
static int say_text(const uint8_t *p, size_t n, char *what, size_t len)
{
	size_t t = text_prefix(p, n);

	if (t < 4)
		return 0;
	if (t > WIRE_WHAT_TEXT)
		t = WIRE_WHAT_TEXT;
	snprintf(what, len, "it began '%.*s'", (int)t, (const char *)p);
	return 1;
}

/* Describe a header that is no message: its bytes, and what is readable at
 * once after them (without waiting: the error is certain already). */
static void say_bad_header(int fd, const uint8_t hdr[4], size_t hlen, size_t max,
			   char *what, size_t len)
{
	uint8_t p[WIRE_WHAT_TEXT];
	size_t n = 4;
	ssize_t r;

	memcpy(p, hdr, 4);
	if (text_prefix(p, 4) == 4) {
		r = recv(fd, p + 4, sizeof(p) - 4, MSG_DONTWAIT);
		n += r > 0 ? (size_t)r : 0;
	}
	if (say_text(p, n, what, len))
		return;
	if (!hlen)
		snprintf(what, len, "an empty message");
	else
		snprintf(what, len, "its length field says %zu bytes, over the %zu-byte limit",
			 hlen, max);
}

int wire_recv_what(int fd, json_t **msg, size_t max, int timeout_ms, char *what, size_t wlen)
{
	uint8_t hdr[4];
	size_t len;
	char *buf;
	int rc;

	*msg = NULL;
	if (what && wlen)
		what[0] = 0;
	rc = net_read_full(fd, hdr, 4, timeout_ms);
	if (rc)
		return rc;
	len = (size_t)hdr[0] << 24 | (size_t)hdr[1] << 16 |
	      (size_t)hdr[2] << 8 | hdr[3];
	if (!len || len > max) {
		if (what && wlen)
			say_bad_header(fd, hdr, len, max, what, wlen);
		return -EMSGSIZE;
	}
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	rc = net_read_full(fd, buf, len, timeout_ms);
	if (rc) {
		free(buf);
		return rc;
	}
	rc = parse_body(buf, len, msg);
	if (rc && what && wlen && !say_text((const uint8_t *)buf, len, what, wlen))
		snprintf(what, wlen, "a body that is not a JSON object");
	free(buf);
	return rc;
}

int wire_recv(int fd, json_t **msg, size_t max, int timeout_ms)
{
	return wire_recv_what(fd, msg, max, timeout_ms, NULL, 0);
}

/* ready for the next message; the MAC state stays */
static void rd_next(struct wire_rd *r)
{
	free(r->buf);
	r->buf = NULL;
	r->hlen = r->len = r->got = 0;
}

void wire_rd_release(struct wire_rd *r)
{
	rd_next(r);
	memset(r, 0, sizeof(*r));	/* (the key too) */
}

/* read() into p[0..want), EINTR retried: bytes read, 0 nothing now, -errno */
static ssize_t read_avail(int fd, void *p, size_t want)
{
	for (;;) {
		ssize_t n = read(fd, p, want);

		if (n > 0)
			return n;
		if (n == 0)
			return -ECONNRESET;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		return -errno;
	}
}

int wire_read_whole(int fd, char *buf, size_t cap, json_t **msg, char *what, size_t wlen)
{
	uint8_t hdr[4];
	size_t len;
	ssize_t n;
	int avail = 0, want;

	*msg = NULL;
	do
		n = recv(fd, hdr, 4, MSG_PEEK | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		return -ECONNRESET;
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
	if (n < 4)
		return 0;	/* (SO_RCVLOWAT 4: woken again when the header is whole) */
	len = (size_t)hdr[0] << 24 | (size_t)hdr[1] << 16 | (size_t)hdr[2] << 8 | hdr[3];
	if (!len || len > cap) {
		if (what && wlen && recv(fd, hdr, 4, MSG_DONTWAIT) == 4)	/* (consumed: what follows is shown) */
			say_bad_header(fd, hdr, len, cap, what, wlen);
		return -EMSGSIZE;
	}
	want = (int)(len + 4);
	if (ioctl(fd, FIONREAD, &avail) || avail < want) {
		setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &want, sizeof(want));
		return 0;
	}
	if ((n = recv(fd, hdr, 4, MSG_DONTWAIT)) != 4 || (n = recv(fd, buf, len, MSG_DONTWAIT)) != (ssize_t)len)
		return n < 0 ? -errno : -EIO;
	want = 4;
	setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &want, sizeof(want));
	if (!parse_body(buf, len, msg))
		return 1;
	if (what && wlen && !say_text((const uint8_t *)buf, len, what, wlen))
		snprintf(what, wlen, "a body that is not a JSON object");
	return -EPROTO;
}

int wire_read_some(int fd, struct wire_rd *r, json_t **msg, size_t max)
{
	ssize_t n;
	int rc;

	*msg = NULL;
	if (r->mac.bad)
		return -EBADMSG;
	while (r->hlen < 4) {
		n = read_avail(fd, r->hdr + r->hlen, 4 - r->hlen);
		if (n <= 0)
			return (int)n;
		r->hlen += (size_t)n;
	}
	if (!r->buf) {
		r->len = (size_t)r->hdr[0] << 24 | (size_t)r->hdr[1] << 16 |
			 (size_t)r->hdr[2] << 8 | r->hdr[3];
		if (!r->len || r->len > max)
			return -EMSGSIZE;
		r->buf = malloc(r->len);
		if (!r->buf)
			return -ENOMEM;
		r->got = 0;
	}
	while (r->got < r->len) {
		n = read_avail(fd, r->buf + r->got, r->len - r->got);
		if (n <= 0)
			return (int)n;
		r->got += (size_t)n;
	}
	if (r->mac.on) {	/* the MAC first: nothing of a forged message is parsed */
		uint8_t want[WIRE_MAC_LEN];
		size_t blen = r->len - (r->len >= WIRE_MAC_LEN ? WIRE_MAC_LEN : r->len);

		wire_mac_of(&r->mac, r->buf, blen, want);
		if (r->len < WIRE_MAC_LEN + 1 || !hmac_equal(want, (uint8_t *)r->buf + blen, WIRE_MAC_LEN)) {
			r->mac.bad = 1;
			rd_next(r);
			return -EBADMSG;
		}
		r->mac.seq++;
		rc = parse_body(r->buf, blen, msg);
	} else {
		rc = parse_body(r->buf, r->len, msg);
	}
	rd_next(r);
	return rc ? rc : 1;
}

const char *wire_strerror(int err)
{
	switch (err) {
	case -ETIMEDOUT: return "timed out";
	case -ECONNRESET: return "connection closed by peer";
	case -EMSGSIZE: return "message too large or empty";
	case -EPROTO: return "malformed message (not a JSON object)";
	case -EBADMSG: return "a message failed its MAC: the channel was tampered with (changed, injected, replayed, reordered or dropped messages)";
	default: return strerror(-err);
	}
}
