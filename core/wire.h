/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The control wire format: each message is a 4-byte big-endian length
 * followed by that many bytes of UTF-8 JSON text (one object).  Every
 * message carries "type"; the first message each way carries "proto" and
 * "version" (see WIRE_VERSION).  Lengths above the receiver's bound are
 * refused before anything is allocated.
 */
#ifndef FS_WIRE_H
#define FS_WIRE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define WIRE_VERSION 2	/* 2: bw/lat --sport and --inline reach the server, lat --op read, "alive" */
#define WIRE_MAX_MSG (1u << 20)	/* default bound on one message */

/* 0, or -errno: -ETIMEDOUT, -ECONNRESET (peer closed), -EMSGSIZE, -EPROTO. */
int wire_send(int fd, json_t *msg, int timeout_ms);
int wire_recv(int fd, json_t **msg, size_t max, int timeout_ms);
/*
 * wire_recv() that, when the bytes that came are no message of this format
 * (-EMSGSIZE, -EPROTO), also says in what[len] how they looked, for an error
 * line: "it began 'SSH-2.0-OpenSSH_9.6'" when they start as text (another
 * service's greeting or error page; what is readable at once is shown, up to
 * WIRE_WHAT_TEXT bytes), else "its length field says 4294967295 bytes, over
 * the 1048576-byte limit", "an empty message" or "a body that is not a JSON
 * object".  On any other return what is "".
 */
#define WIRE_WHAT_TEXT 40
int wire_recv_what(int fd, json_t **msg, size_t max, int timeout_ms, char *what, size_t len);
/*
 * Incremental reading for event loops (the coordinator serves many agents
 * from one poll()): wire_read_some() reads what a non-blocking fd has and
 * returns 1 with *msg when a whole message arrived, 0 when more bytes are
 * needed (call again when the fd is readable), or -errno as wire_recv().
 * One call returns at most one message; call it until it returns 0.
 */
struct wire_rd {
	uint8_t hdr[4];
	size_t hlen;		/* header bytes read */
	char *buf;		/* body, once the header is complete */
	size_t len, got;
};
int wire_read_some(int fd, struct wire_rd *r, json_t **msg, size_t max);
void wire_rd_free(struct wire_rd *r);

/* Human words for a wire_* error: "timed out", "connection closed by peer". */
const char *wire_strerror(int err);

/* The protocol version this binary speaks (FABSCOPE_TEST_PROTO_VERSION in the
 * environment of a test build overrides it, for tests of the mismatch path). */
int wire_version(void);

#endif
