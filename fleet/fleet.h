/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The fleet control protocol: between `fabscope run` (the coordinator) and
 * `fabscope agent`, over one stream (TCP, or a socket the launcher made:
 * ssh's stdio, a socketpair), in the wire format of core/wire.h.
 *
 *   coordinator -> agent   challenge {proto, version, nonce, join_ms}
 *   agent -> coordinator   register  {proto, version, tool_version, nonce, mac,
 *                                     node, host, pid, slot, endpoints: [{rail, plane, ip}],
 *                                     unusable: {TRANSPORT: why}}
 *                          (unusable: the transports this host cannot open, e.g. verbs
 *                          without RDMA in its kernel, and why in one line; absent: none;
 *                          the coordinator runs no job of that transport on the node)
 *   coordinator -> agent   welcome   {mac, node, heartbeat_ms, silence_ms}  | error {message, mac}
 *
 *   mac (agent)       = HMAC-SHA256(token, "fabscope-agent\n" NONCE_C "\n" NONCE_A
 *                                          "\n" C(challenge) "\n" C(register))
 *   mac (coordinator) = HMAC-SHA256(token, "fabscope-coordinator\n" NONCE_A "\n" NONCE_C
 *                                          "\n" C(challenge) "\n" C(register) "\n" C(answer))
 *
 * Both sides prove the token without sending it; nonces are 32 random
 * bytes in hex, so a recorded exchange cannot be replayed.  C(m) is m's
 * canonical text (core/auth.h's auth_canon: m without "mac", compact JSON,
 * keys sorted), made from the message as parsed, so each mac covers every
 * field of the handshake as both sides saw it: the challenge's join_ms, the
 * register's node, endpoints and every other member, the welcome's
 * heartbeat_ms and silence_ms, an error's message.  A field changed on the
 * way, added or left out fails the mac: the register is refused, or the
 * agent refuses the welcome (and tells the coordinator why under the
 * session's MAC).  The coordinator's error carries its mac when the
 * register had a nonce; the agent names an error whose mac fails as a
 * refusal by a peer that did not prove the token.  A version mismatch or a
 * wrong mac is answered with an error message naming the problem, logged
 * on both sides, and the connection is closed.
 *
 * join_ms is how long the coordinator's join goes on from the moment it
 * sent the challenge (0 once it is over: --join-timeout from when the
 * launcher started).  The agent waits for its welcome that long, plus its
 * own --timeout for the answer to travel: a coordinator busy welcoming
 * thousands of agents is not a gone one, and every registration is
 * answered (welcome, or an error saying why) while the coordinator runs.
 *
 * Then, in any order:
 *   coordinator -> agent   job {id, test, role: server|client, opts: {long option: value},
 *                               bind, host, port, node, deadline_ms, stall_ms}
 *                          (allreduce/alltoall: also rank, nranks, rail; rank 0 is the
 *                          server, whose listening port the other ranks get as host:port)
 *                          cancel {id}   ping {t}   bye
 *   agent -> coordinator   listening {id, port}       (a server job is ready)
 *                          record {id, record}         (one per measurement, as measured)
 *                          progress {id, progress: {bytes, what, frac}}
 *                                                      (a running job, at most one a second:
 *                                                      core/output.h)
 *                          done {id, exit, error}      (the job ended; error: its last message)
 *                          pong {t}   heartbeat {jobs}
 *
 * Every message is bounded by FLEET_MAX_MSG; every wait has a timeout.  The
 * agent sends a heartbeat when it has sent nothing for heartbeat_ms (the
 * coordinator says a quarter of silence_ms, at least FLEET_HEARTBEAT_MS);
 * the coordinator pings an agent it has sent nothing for a quarter of
 * silence_ms: four chances each way before the other gives up, after
 * silence_ms of nothing (a message that came and is not read yet is not
 * silence: a busy coordinator reads before it judges).
 * A job is judged by its progress, not by a clock alone: it is hung once
 * it is past its deadline and nothing of it (a record, a progress report,
 * its listening) has come for stall_ms; the coordinator stops it then
 * (fleet/coord-job.c, once it has read what the job's agents sent), and
 * the agent kills it 5 s later if it is still there.  A heartbeat or pong
 * says the agent lives, not that a job of it moves: it keeps the
 * connection, never a job.  Both sides speak the same version exactly (the
 * handshake refuses another), so each knows stall_ms and progress.
 */
#ifndef FS_FLEET_H
#define FS_FLEET_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/auth.h"

#define FLEET_PROTO "fabscope-fleet"
#define FLEET_MAX_MSG (4u << 20)
#define FLEET_HEARTBEAT_MS 1000	/* the least heartbeat_ms the coordinator asks for */
#define FLEET_SILENCE_MS 10000
/* an unusable transport's why, as the coordinator keeps it: at most this many bytes */
#define FLEET_WHY_MAX 300

#endif
