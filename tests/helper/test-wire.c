/* SPDX-License-Identifier: BSD-2-Clause */
/* test-tool wire-recv, wire-send, wire-fuzz: core/wire.c (framed messages) */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../core/alloc.h"
#include "../../core/error.h"
#include "../../core/net.h"
#include "../../core/wire.h"
#include "test-tool.h"

static int parse_uint(const char *s, unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 10);
	return !isdigit((unsigned char)*s) || errno || *end ? -1 : 0;
}

int tool_wire_recv(int argc, const char **argv)
{
	unsigned long long max = WIRE_MAX_MSG, count = 1, timeout = 2000, v;
	int i, rc;

	for (i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--timeout=", 10) && !parse_uint(argv[i] + 10, &v) &&
		    v <= 600000)
			timeout = v;
		else if (!strncmp(argv[i], "--count=", 8) && !parse_uint(argv[i] + 8, &v))
			count = v;
		else if (!parse_uint(argv[i], &v) && i == argc - 1)
			max = v;
		else
			return usage_error("usage: test-tool wire-recv [--timeout=MS] [--count=N] [MAX] <frames");
	}
	/* as the sockets of fabscope are, so that the timeout applies */
	rc = net_set_nonblock(0, 1);
	if (rc)
		return -fs_err_env("stdin: %s", strerror(-rc));
	for (; count && !rc; count--) {
		json_t *msg = (json_t *)&msg;	/* must be overwritten */
		int err = wire_recv(0, &msg, (size_t)max, (int)timeout);

		if (err && msg)
			rc = check_failed("wire_recv failed (%d) but left a message", err);
		else if (err)
			rc = check_failed("%s", wire_strerror(err));
		else if (!json_is_object(msg))
			rc = check_failed("wire_recv returned 0 without an object");
		else
			tool_print_json(msg);
		if (!err)
			json_decref(msg);
	}
	net_set_nonblock(0, 0);
	return rc;
}

static int copy_fd(int from, int to)
{
	char buf[65536];
	ssize_t n;

	while ((n = read(from, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		for (char *p = buf; n > 0;) {
			ssize_t w = write(to, p, (size_t)n);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return -1;
			p += w;
			n -= w;
		}
	}
	return 0;
}

/*
 * wire_send writes to sockets only (send(2) with MSG_NOSIGNAL): send into a
 * socketpair, and a child copies what comes out of it to stdout.
 */
int tool_wire_send(int argc, const char **argv)
{
	int sv[2], i, rc = 0, status;
	json_t **msgs;
	pid_t pid;

	if (argc < 2)
		return usage_error("usage: test-tool wire-send JSON...");
	msgs = calloc((size_t)argc, sizeof(*msgs));
	if (!msgs)
		return -fs_err_env("out of memory");
	for (i = 1; i < argc; i++) {
		json_error_t err;

		msgs[i] = json_loads(argv[i], JSON_DECODE_ANY, &err);
		if (!msgs[i]) {
			rc = usage_error("invalid JSON '%s': %s", argv[i], err.text);
			goto out;
		}
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		rc = -fs_err_env("socketpair: %s", strerror(errno));
		goto out;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		rc = -fs_err_env("fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		goto out;
	}
	if (!pid) {
		close(sv[0]);
		_exit(copy_fd(sv[1], 1) ? 1 : 0);
	}
	close(sv[1]);
	for (i = 1; i < argc && !rc; i++) {
		int err = wire_send(sv[0], msgs[i], 10000);

		if (err)
			rc = check_failed("wire_send: %s", wire_strerror(err));
	}
	close(sv[0]);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		rc = check_failed("copying the frames to stdout failed");
out:
	for (i = 1; i < argc; i++)
		json_decref(msgs[i]);
	free(msgs);
	return rc;
}

static uint64_t rng_below(uint64_t *s, uint64_t n)
{
	return n ? tool_rand(s) % n : 0;
}

static json_t *rand_string(uint64_t *s)
{
	static const char *const pieces[] = {
		"a", "b", "z", "0", " ", "\"", "\\", "/", "\n", "\t", "\x01", "\x1f",
		"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "type", "version",
	};
	char buf[128] = "";
	size_t n = rng_below(s, 8), i;

	for (i = 0; i < n; i++)
		strcat(buf, pieces[rng_below(s, sizeof(pieces) / sizeof(pieces[0]))]);
	return json_string(buf);
}

static json_t *rand_object(uint64_t *s, int depth);

static json_t *rand_value(uint64_t *s, int depth)
{
	json_t *j;
	uint64_t i, n;

	switch (rng_below(s, depth >= 4 ? 5 : 7)) {
	case 0:
		return json_integer((json_int_t)tool_rand(s));
	case 1:
		return json_real(ldexp((double)(int64_t)tool_rand(s),
				       (int)rng_below(s, 200) - 100));
	case 2:
		return rand_string(s);
	case 3:
		return rng_below(s, 3) ? json_boolean(rng_below(s, 2)) : json_null();
	case 4:
		return json_integer((json_int_t)rng_below(s, 100));
	case 5:
		j = json_array();
		n = rng_below(s, 5);
		for (i = 0; i < n; i++)
			json_array_append_new(j, rand_value(s, depth + 1));
		return j;
	default:
		return rand_object(s, depth + 1);
	}
}

static json_t *rand_object(uint64_t *s, int depth)
{
	json_t *o = json_object();
	uint64_t i, n = rng_below(s, 6);

	for (i = 0; i < n; i++) {
		json_t *k = rand_string(s);

		json_object_set_new(o, json_string_value(k), rand_value(s, depth + 1));
		json_decref(k);
	}
	return o;
}

struct fuzz_buf {
	uint8_t *p;
	size_t len, alloc;
};

static void fb_put(struct fuzz_buf *b, const void *data, size_t n)
{
	if (b->len + n > b->alloc) {
		if (FS_ALLOC_GROW(b->p, b->len + n, b->alloc)) {
			fs_err_env("out of memory");
			exit(FS_EXIT_ENV);
		}
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

static void fb_header(struct fuzz_buf *b, uint32_t len)
{
	uint8_t h[4] = {
		(uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8), (uint8_t)len
	};

	fb_put(b, h, 4);
}

static void fb_frame(struct fuzz_buf *b, const char *body, size_t len)
{
	fb_header(b, (uint32_t)len);
	fb_put(b, body, len);
}

enum fuzz_kind {
	FZ_SEND,	/* wire_send a random object: must come back equal */
	FZ_MUTATE,	/* a valid frame with body bytes changed */
	FZ_TRUNCATE,	/* a valid frame cut short: connection closed */
	FZ_TRAILER,	/* a valid frame and more bytes: left unread */
	FZ_HEADER,	/* a random length and some random bytes */
	FZ_RANDOM,	/* random bytes */
	FZ_SPECIAL,	/* nesting, duplicates, scalars, bad UTF-8, NUL */
	FZ_NKINDS
};

#define FUZZ_MAX_INPUT 60000	/* below a pipe's capacity: written before reading */

/* A hand-made body for FZ_SPECIAL; *want is the result it must give. */
static void special_body(uint64_t *s, struct fuzz_buf *body, int *want)
{
	static const char *const fixed[] = {
		"{\"a\":1,\"a\":2}", "{\"type\":\"x\",\"type\":\"x\"}", "[]", "[{}]",
		"1", "\"str\"", "null", "true", "{}x", "{} {}", "{\"a\":\"\xff\"}",
		"{\"a\":\"\xc3\"}", "{\"a\":1", "{\"a\":1}}", "{'a':1}", "{\"a\":NaN}",
		"{\"a\":1e99999}", "{\"a\":-}", "\xef\xbb\xbf{}",
	};
	uint64_t pick = rng_below(s, 4), n, i;

	if (pick == 0) {	/* deep arrays: never an object */
		n = 1 + rng_below(s, FUZZ_MAX_INPUT / 2 - 8);
		for (i = 0; i < n; i++)
			fb_put(body, "[", 1);
		for (i = 0; i < n; i++)
			fb_put(body, "]", 1);
		*want = -EPROTO;
	} else if (pick == 1) {	/* deep objects: an object unless too deep for the parser */
		n = 1 + rng_below(s, 5000);
		for (i = 0; i < n; i++)
			fb_put(body, "{\"a\":", 5);
		fb_put(body, "1", 1);
		for (i = 0; i < n; i++)
			fb_put(body, "}", 1);
		*want = 1;	/* either */
	} else if (pick == 2) {	/* an object with a NUL byte somewhere */
		char t[] = "{\"key\":\"value\"}";
		size_t at = (size_t)rng_below(s, sizeof(t) - 1);

		t[at] = 0;
		fb_put(body, t, sizeof(t) - 1);
		*want = -EPROTO;
	} else {
		const char *t = fixed[rng_below(s, sizeof(fixed) / sizeof(fixed[0]))];

		fb_put(body, t, strlen(t));
		*want = -EPROTO;
	}
}

struct fuzz_stats {
	unsigned long ok, too_large, closed, malformed;
};

/*
 * Feed one input through wire_recv on a pipe and check the result against
 * what the frame says: too short for a header or a body -> closed, length
 * 0 or above max -> too large, else an object or malformed, as jansson
 * would parse the body; never more than the frame read.
 */
static int fuzz_one(unsigned long iter, const struct fuzz_buf *in, size_t max,
		    int want, json_t *sent, struct fuzz_stats *st)
{
	json_t *msg = (json_t *)&msg, *ref = NULL;
	size_t len = 0, left = 0, expect_left;
	int fds[2], rc, expect;
	char buf[4096];
	ssize_t n;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return -fs_err_env("pipe: %s", strerror(errno));
	if (in->len && write(fds[1], in->p, in->len) != (ssize_t)in->len) {
		close(fds[0]);
		close(fds[1]);
		return -fs_err_env("write to pipe: %s", strerror(errno));
	}
	close(fds[1]);
	rc = wire_recv(fds[0], &msg, max, 1000);
	while ((n = read(fds[0], buf, sizeof(buf))) > 0)
		left += (size_t)n;
	close(fds[0]);

	if (in->len >= 4)
		len = (size_t)in->p[0] << 24 | (size_t)in->p[1] << 16 |
		      (size_t)in->p[2] << 8 | in->p[3];
	expect_left = 0;
	if (in->len < 4) {
		expect = -ECONNRESET;
	} else if (!len || len > max) {
		expect = -EMSGSIZE;
		expect_left = in->len - 4;
	} else if (in->len - 4 < len) {
		expect = -ECONNRESET;
	} else {
		ref = json_loadb((const char *)in->p + 4, len, JSON_REJECT_DUPLICATES, NULL);
		expect = json_is_object(ref) ? 0 : -EPROTO;
		expect_left = in->len - 4 - len;
	}
	if (rc && msg) {
		rc = check_failed("input %lu: wire_recv returned %d with a message", iter, rc);
		goto out;
	}
	if (!rc && !json_is_object(msg)) {
		rc = check_failed("input %lu: wire_recv returned 0 without an object", iter);
		goto out;
	}
	if (rc != expect || (want <= 0 && rc != want)) {
		rc = check_failed("input %lu (%zu bytes, length %zu, max %zu): got %d (%s), expected %d",
				  iter, in->len, len, max, rc, rc ? wire_strerror(rc) : "ok",
				  want <= 0 ? want : expect);
		goto out;
	}
	/* wire_recv reads the header, then (when the length is acceptable) the body */
	if (expect != -ECONNRESET && left != expect_left) {
		rc = check_failed("input %lu: %zu bytes left unread, expected %zu",
				  iter, left, expect_left);
		goto out;
	}
	if (!rc && (!json_equal(msg, ref) || (sent && !json_equal(msg, sent)))) {
		rc = check_failed("input %lu: the message read is not the one sent", iter);
		goto out;
	}
	switch (rc) {
	case 0: st->ok++; break;
	case -EMSGSIZE: st->too_large++; break;
	case -ECONNRESET: st->closed++; break;
	default: st->malformed++; break;
	}
	rc = 0;
out:
	if (msg != (json_t *)&msg)
		json_decref(msg);
	json_decref(ref);
	return rc;
}

/* wire_send over a socketpair, wire_recv on the other end */
static int fuzz_send(unsigned long iter, json_t *obj, struct fuzz_stats *st)
{
	json_t *msg = NULL;
	int sv[2], rc;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -fs_err_env("socketpair: %s", strerror(errno));
	rc = wire_send(sv[0], obj, 1000);
	if (!rc)
		rc = wire_recv(sv[1], &msg, WIRE_MAX_MSG, 1000);
	close(sv[0]);
	close(sv[1]);
	if (rc) {
		rc = check_failed("input %lu: send/recv: %s", iter, wire_strerror(rc));
	} else if (!json_equal(msg, obj)) {
		rc = check_failed("input %lu: the message read is not the one sent", iter);
	} else {
		st->ok++;
		rc = 0;
	}
	json_decref(msg);
	return rc;
}

int tool_wire_fuzz(int argc, const char **argv)
{
	static const size_t maxes[] = { 1, 16, 100, 4096, WIRE_MAX_MSG };
	unsigned long long iters, seed;
	struct fuzz_stats st = { 0 };
	struct fuzz_buf in = { 0 }, body = { 0 };
	uint64_t s;
	unsigned long it;
	int rc = 0;

	if (argc != 3 || parse_uint(argv[1], &iters) || parse_uint(argv[2], &seed))
		return usage_error("usage: test-tool wire-fuzz N SEED");
	s = seed;
	for (it = 0; it < iters && !rc; it++) {
		enum fuzz_kind kind = (enum fuzz_kind)rng_below(&s, FZ_NKINDS);
		size_t max = maxes[rng_below(&s, sizeof(maxes) / sizeof(maxes[0]))];
		json_t *obj = rand_object(&s, 0), *sent = NULL;
		char *text = json_dumps(obj, JSON_COMPACT);
		size_t tlen = text ? strlen(text) : 0, i, n;
		int want = 1;	/* 1: whatever the frame says */

		in.len = body.len = 0;
		if (!text) {
			rc = check_failed("input %lu: json_dumps failed", it);
			json_decref(obj);
			break;
		}
		switch (kind) {
		case FZ_SEND:
			rc = fuzz_send(it, obj, &st);
			goto next;
		case FZ_MUTATE:
			fb_frame(&in, text, tlen);
			n = 1 + rng_below(&s, 4);
			for (i = 0; i < n && tlen; i++) {
				static const char bytes[] = "{}[]\":,\\ 0e-\x80\xff";
				size_t at = 4 + (size_t)rng_below(&s, tlen);

				if (rng_below(&s, 2))
					in.p[at] ^= (uint8_t)(1u << rng_below(&s, 8));
				else
					in.p[at] = (uint8_t)bytes[rng_below(&s, sizeof(bytes) - 1)];
			}
			max = WIRE_MAX_MSG;
			break;
		case FZ_TRUNCATE:
			fb_frame(&in, text, tlen);
			in.len = (size_t)rng_below(&s, in.len);
			max = WIRE_MAX_MSG;
			want = -ECONNRESET;
			break;
		case FZ_TRAILER:
			fb_frame(&in, text, tlen);
			n = 1 + rng_below(&s, 64);
			for (i = 0; i < n; i++) {
				uint8_t c = (uint8_t)tool_rand(&s);

				fb_put(&in, &c, 1);
			}
			max = WIRE_MAX_MSG;
			want = 0;
			sent = obj;
			break;
		case FZ_HEADER: {
			static const uint32_t lens[] = {
				0, 1, 2, 15, 16, 17, 99, 100, 101, WIRE_MAX_MSG,
				WIRE_MAX_MSG + 1, 0x7fffffff, 0x80000000, 0xffffffff
			};
			uint32_t len = rng_below(&s, 2) ? lens[rng_below(&s, 14)] :
							 (uint32_t)tool_rand(&s);

			fb_header(&in, len);
			n = rng_below(&s, 128);
			for (i = 0; i < n; i++) {
				uint8_t c = (uint8_t)tool_rand(&s);

				fb_put(&in, &c, 1);
			}
			break;
		}
		case FZ_RANDOM:
			n = rng_below(&s, 64);
			for (i = 0; i < n; i++) {
				uint8_t c = (uint8_t)tool_rand(&s);

				/* small lengths now and then, so that some bodies are read */
				if (i < 2 && rng_below(&s, 2))
					c = 0;
				fb_put(&in, &c, 1);
			}
			break;
		case FZ_SPECIAL:
			special_body(&s, &body, &want);
			fb_frame(&in, (const char *)body.p, body.len);
			max = WIRE_MAX_MSG;
			break;
		default:
			break;
		}
		if (in.len > FUZZ_MAX_INPUT)
			in.len = FUZZ_MAX_INPUT;
		rc = fuzz_one(it, &in, max, want, sent, &st);
next:
		free(text);
		json_decref(obj);
	}
	free(in.p);
	free(body.p);
	if (rc)
		return rc;	/* (fuzz_one returns exit codes) */
	printf("inputs %llu\nok %lu\ntoo large %lu\nclosed %lu\nmalformed %lu\n",
	       iters, st.ok, st.too_large, st.closed, st.malformed);
	return 0;
}
