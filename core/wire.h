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

#define WIRE_VERSION 5	/* 2: bw/lat --sport and --inline reach the server, lat --op read, "alive";
			 * 3: every fleet message after the welcome carries its MAC;
			 * 4: the fleet challenge says how long the join waits (join_ms),
			 *    and the agent waits that long for its welcome;
			 * 5: the fleet handshake's macs cover its messages' bodies (the
			 *    challenge, the register, the welcome or error), not only
			 *    the nonces */
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
/*
 * Message MACs, for a channel that a handshake has authenticated (the fleet
 * protocol: coordinator and agents).  Once both ends hold the session key,
 * every message carries, after its JSON body and inside its length, a
 * 32-byte HMAC-SHA256 under that key of the direction, the message's number
 * (0, 1, ... each way) and the body.  A message changed, injected, replayed,
 * reordered, or one after a message that was dropped (its number is off),
 * fails its MAC: the receiver stops at it with -EBADMSG and reads nothing
 * more.  The number is implicit: nothing of it travels.
 */
#define WIRE_MAC_LEN 32
struct wire_mac {
	uint8_t key[WIRE_MAC_LEN];
	uint64_t seq;		/* the number of the next message */
	uint8_t dir;		/* the direction's label: 'c' coordinator to agent, 'a' back */
	int on;
	int bad;		/* a message failed: nothing more is accepted */
};
/* From now on MAC (tx) or check (rx) with key, in direction dir. */
void wire_mac_start(struct wire_mac *m, const uint8_t key[WIRE_MAC_LEN], uint8_t dir);
/* The MAC of message number m->seq with this body (for test tools that
 * frame messages by hand). */
void wire_mac_of(const struct wire_mac *m, const void *body, size_t len, uint8_t out[WIRE_MAC_LEN]);
/* wire_send with the MAC of tx when it is on (then tx->seq counts). */
int wire_send_mac(int fd, struct wire_mac *tx, json_t *msg, int timeout_ms);

struct wire_rd {
	uint8_t hdr[4];
	size_t hlen;		/* header bytes read */
	char *buf;		/* body, once the header is complete */
	size_t len, got;
	struct wire_mac mac;	/* checked when on (-EBADMSG); kept by wire_read_some */
};
int wire_read_some(int fd, struct wire_rd *r, json_t **msg, size_t max);
/* Release what a reader holds (the struct is the caller's), its MAC key wiped. */
void wire_rd_release(struct wire_rd *r);

/*
 * For a peer that has proved nothing yet (a TCP socket): a message only once
 * all of it has come, read into buf (cap bytes, the bound), so that such a
 * peer makes us allocate and hold nothing.  1 and *msg, 0 when it has not
 * all come (nothing read; the socket's SO_RCVLOWAT is set to the bytes it
 * needs, so that poll() wakes up once they are there, not for each piece:
 * set it to 4 when the connection is made, and back to 1 once the peer is
 * trusted), or -errno as wire_read_some (-EMSGSIZE over cap).  what (may be
 * NULL) says what came instead of a message, as wire_recv_what's.
 */
int wire_read_whole(int fd, char *buf, size_t cap, json_t **msg, char *what, size_t wlen);

/* Human words for a wire_* error: "timed out", "connection closed by peer". */
const char *wire_strerror(int err);

/* The protocol version this binary speaks (FABSCOPE_TEST_PROTO_VERSION in the
 * environment of a test build overrides it, for tests of the mismatch path). */
int wire_version(void);

#endif
