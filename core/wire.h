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

#define WIRE_VERSION 1
#define WIRE_MAX_MSG (1u << 20)	/* default bound on one message */

/* 0, or -errno: -ETIMEDOUT, -ECONNRESET (peer closed), -EMSGSIZE, -EPROTO. */
int wire_send(int fd, json_t *msg, int timeout_ms);
int wire_recv(int fd, json_t **msg, size_t max, int timeout_ms);
/* Human words for a wire_* error: "timed out", "connection closed by peer". */
const char *wire_strerror(int err);

/* The protocol version this binary speaks (FABSCOPE_TEST_PROTO_VERSION in the
 * environment overrides it, for tests of the mismatch path). */
int wire_version(void);

#endif
