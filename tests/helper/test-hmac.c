/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tool hmac: core/hmac.c through small commands (tests/t0160-unit-hmac.t).
 *
 *   mac [--hex-key] [--hex-msg] [--hex] [--split=N] [--trunc=N] KEY [MSG]
 *       HMAC-SHA256 of MSG (stdin without it) under KEY, in hex; --hex is
 *       both --hex-key and --hex-msg; --split=N: through hmac_sha256_parts,
 *       the message in pieces of N bytes (and an empty one); --trunc=N: the
 *       first N bytes only
 *   equal HEX HEX            hmac_equal of the two: "equal" or "differ"
 *   equal-check              hmac_equal of equal buffers of every length
 *                            0..65 (and a difference just past the end), of
 *                            every single-bit difference, of all bytes
 *                            different: "ok CHECKS"
 *   unhex LEN HEX...         hmac_unhex of each into LEN bytes: their hex
 *                            again, or "error" (then the output must be
 *                            untouched, else exit 1)
 *   random N                 N bytes from hmac_random, in hex
 *   random --check N         N bytes into a zeroed buffer: "ok N" unless 64
 *                            zero bytes in a row are left (a part not filled)
 *   random --interrupt N     the same under SIGALRM every 50 us (no
 *                            SA_RESTART): getrandom returns short or EINTR
 *   canon                    core/auth.c's canonical text (auth_canon: what
 *                            the fleet handshake's macs cover) of the JSON
 *                            text on stdin, parsed as the wire parses it
 *
 * Exit codes: 0 ok, 1 a check failed, 2 usage or bad input, 3 environment.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "../../core/auth.h"
#include "../../core/error.h"
#include "../../core/hmac.h"
#include "test-tool.h"

#define env_error(...) (-fs_err_env(__VA_ARGS__))

/* a decimal argument in [0, max], or -1 */
static long parse_num(const char *s, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > max)
		return -1;
	return v;
}

struct bytes {
	uint8_t *p;	/* NULL when len is 0 */
	size_t len;
};

/* all of fd (what is there: a file, or stdin) */
static int read_fd(int fd, const char *what, struct bytes *b)
{
	size_t cap = 0;
	ssize_t n;

	b->p = NULL;
	b->len = 0;
	for (;;) {
		if (b->len == cap) {
			uint8_t *p;

			cap = cap ? 2 * cap : 65536;
			p = realloc(b->p, cap);
			if (!p) {
				free(b->p);
				b->p = NULL;
				return env_error("out of memory");
			}
			b->p = p;
		}
		n = read(fd, b->p + b->len, cap - b->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(b->p);
			b->p = NULL;
			return env_error("read %s: %s", what, strerror(errno));
		}
		if (!n)
			break;
		b->len += (size_t)n;
	}
	if (!b->len) {
		free(b->p);
		b->p = NULL;
	} else {	/* to its exact size, for ASan */
		uint8_t *p = realloc(b->p, b->len);

		if (p)
			b->p = p;
	}
	return 0;
}

static int read_stdin(struct bytes *b)
{
	return read_fd(0, "stdin", b);
}

/* an argument as bytes, or its hex decoded: 0, or a usage error */
static int arg_bytes(const char *arg, int hex, struct bytes *b)
{
	size_t len = strlen(arg);

	b->p = NULL;
	b->len = 0;
	if (hex) {
		if (len % 2)
			return usage_error("odd number of hex digits in '%s'", arg);
		len /= 2;
	}
	if (!len)
		return 0;
	b->p = malloc(len);
	if (!b->p)
		return env_error("out of memory");
	b->len = len;
	if (!hex)
		memcpy(b->p, arg, len);
	else if (hmac_unhex(arg, b->p, len)) {
		free(b->p);
		b->p = NULL;
		return usage_error("not hex: '%s'", arg);
	}
	return 0;
}

/* print len bytes as hex, through hmac_hex into a buffer of the exact size */
static int print_hex(const uint8_t *p, size_t len)
{
	char *s = malloc(2 * len + 1);
	size_t n;

	if (!s)
		return env_error("out of memory");
	hmac_hex(p, len, s);
	n = strlen(s);
	if (n != 2 * len) {
		free(s);
		return check_failed("hmac_hex: %zu characters for %zu bytes", n, len);
	}
	printf("%s\n", s);
	free(s);
	return 0;
}

/* ---- mac ---- */

static int cmd_mac(int argc, const char **argv)
{
	int hex_key = 0, hex_msg = 0, i, rc;
	long trunc = SHA256_LEN, split = 0;
	struct bytes key, msg;
	uint8_t mac[SHA256_LEN];

	for (i = 1; i < argc && !strncmp(argv[i], "--", 2); i++) {
		if (!strcmp(argv[i], "--hex")) {
			hex_key = hex_msg = 1;
		} else if (!strcmp(argv[i], "--hex-key")) {
			hex_key = 1;
		} else if (!strcmp(argv[i], "--hex-msg")) {
			hex_msg = 1;
		} else if (!strncmp(argv[i], "--split=", 8)) {
			split = parse_num(argv[i] + 8, 1 << 20);
			if (split < 1)
				return usage_error("bad piece size '%s'", argv[i] + 8);
		} else if (!strncmp(argv[i], "--trunc=", 8)) {
			trunc = parse_num(argv[i] + 8, SHA256_LEN);
			if (trunc < 1)
				return usage_error("bad length '%s' (1..%d)", argv[i] + 8,
						   SHA256_LEN);
		} else {
			return usage_error("unknown option '%s'", argv[i]);
		}
	}
	if (argc - i < 1 || argc - i > 2)
		return usage_error("usage: test-tool hmac mac [--hex-key] [--hex-msg] "
				   "[--hex] [--split=N] [--trunc=N] KEY [MSG]");
	rc = arg_bytes(argv[i], hex_key, &key);
	if (rc)
		return rc;
	if (i + 1 < argc)
		rc = arg_bytes(argv[i + 1], hex_msg, &msg);
	else if (hex_msg)
		rc = usage_error("--hex-msg takes the message as an argument");
	else
		rc = read_stdin(&msg);
	if (rc) {
		free(key.p);
		return rc;
	}
	if (split) {	/* through hmac_sha256_parts, in pieces of split bytes */
		size_t n = msg.len / (size_t)split + 2, k = 0, off;
		struct hmac_part *parts = calloc(n, sizeof(*parts));

		if (!parts)
			return usage_error("out of memory");
		parts[k++] = (struct hmac_part){ NULL, 0 };	/* an empty part too */
		for (off = 0; off < msg.len; off += (size_t)split)
			parts[k++] = (struct hmac_part){ msg.p + off,
							 msg.len - off < (size_t)split ? msg.len - off : (size_t)split };
		hmac_sha256_parts(key.p, key.len, parts, k, mac);
		free(parts);
	} else {
		hmac_sha256(key.p, key.len, msg.p, msg.len, mac);
	}
	free(key.p);
	free(msg.p);
	return print_hex(mac, (size_t)trunc);
}

/* ---- equal ---- */

static int cmd_equal(int argc, const char **argv)
{
	struct bytes a, b;
	int rc, eq;

	if (argc != 3)
		return usage_error("usage: test-tool hmac equal HEX HEX");
	rc = arg_bytes(argv[1], 1, &a);
	if (rc)
		return rc;
	rc = arg_bytes(argv[2], 1, &b);
	if (rc) {
		free(a.p);
		return rc;
	}
	if (a.len != b.len) {
		free(a.p);
		free(b.p);
		return usage_error("lengths differ: %zu and %zu bytes", a.len, b.len);
	}
	eq = hmac_equal(a.p, b.p, a.len);
	free(a.p);
	free(b.p);
	if (eq != 0 && eq != 1)
		return check_failed("hmac_equal returned %d", eq);
	printf("%s\n", eq ? "equal" : "differ");
	return 0;
}

static int cmd_equal_check(int argc, const char **argv)
{
	uint8_t a[66], b[66];
	uint64_t seed = 1;
	unsigned long checks = 0;
	size_t len, i;
	int bit;

	if (argc != 1)
		return usage_error("usage: test-tool hmac equal-check");
	memset(a, 0, sizeof(a));
	for (len = 0; len <= 65; len++) {
		for (i = 0; i < len; i++)
			a[i] = (uint8_t)tool_rand(&seed);
		memcpy(b, a, len);
		/* a difference past len is not looked at */
		b[len] = (uint8_t)~a[len];
		if (hmac_equal(a, b, len) != 1)
			return check_failed("len %zu: equal buffers differ", len);
		checks++;
		for (i = 0; i < len; i++)
			for (bit = 0; bit < 8; bit++) {
				b[i] ^= (uint8_t)(1u << bit);
				if (hmac_equal(a, b, len) != 0)
					return check_failed("len %zu: byte %zu bit %d: equal",
							    len, i, bit);
				b[i] ^= (uint8_t)(1u << bit);
				checks++;
			}
		if (len) {	/* every byte different */
			for (i = 0; i < len; i++)
				b[i] = (uint8_t)~a[i];
			if (hmac_equal(a, b, len) != 0)
				return check_failed("len %zu: all bytes differ: equal", len);
			checks++;
		}
	}
	printf("ok %lu\n", checks);
	return 0;
}

/* ---- unhex ---- */

static int cmd_unhex(int argc, const char **argv)
{
	long len;
	int i;

	if (argc < 3)
		return usage_error("usage: test-tool hmac unhex LEN HEX...");
	len = parse_num(argv[1], 1L << 20);
	if (len < 0)
		return usage_error("bad length '%s'", argv[1]);
	for (i = 2; i < argc; i++) {
		/* both of exactly their size, so that ASan sees a read or write
		 * past either; out starts as a pattern that must survive an error */
		size_t slen = strlen(argv[i]) + 1, k;
		char *hex = malloc(slen);
		uint8_t *out = malloc((size_t)len ? (size_t)len : 1);
		int rc = 0;

		if (!hex || !out) {
			free(hex);
			free(out);
			return env_error("out of memory");
		}
		memcpy(hex, argv[i], slen);
		memset(out, 0xa5, (size_t)len);
		if (hmac_unhex(hex, out, (size_t)len)) {
			for (k = 0; k < (size_t)len; k++)
				if (out[k] != 0xa5)
					rc = check_failed("'%s': error, but output byte %zu written",
							  argv[i], k);
			if (!rc)
				printf("error\n");
		} else {
			rc = print_hex(out, (size_t)len);
		}
		free(hex);
		free(out);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- random ---- */

/* the longest run of zero bytes */
static size_t zero_run(const uint8_t *p, size_t len)
{
	size_t i, run = 0, longest = 0;

	for (i = 0; i < len; i++) {
		run = p[i] ? 0 : run + 1;
		if (run > longest)
			longest = run;
	}
	return longest;
}

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	alarms++;
}

/* SIGALRM every 50 us, without SA_RESTART (on), or no more (off): 0 or -errno */
static int interrupt_timer(int on)
{
	struct itimerval it = { { 0, on ? 50 : 0 }, { 0, on ? 50 : 0 } };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on ? on_alarm : SIG_DFL;
	sigemptyset(&sa.sa_mask);
	if (!on && setitimer(ITIMER_REAL, &it, NULL) < 0)
		return -errno;
	if (sigaction(SIGALRM, &sa, NULL) < 0)
		return -errno;
	if (on && setitimer(ITIMER_REAL, &it, NULL) < 0)
		return -errno;
	return 0;
}

static int cmd_random(int argc, const char **argv)
{
	int check = 0, interrupt = 0, i, rc, rc2;
	long n = -1;
	uint8_t *p;

	for (i = 1; i < argc && !strncmp(argv[i], "--", 2); i++) {
		if (!strcmp(argv[i], "--check"))
			check = 1;
		else if (!strcmp(argv[i], "--interrupt"))
			check = interrupt = 1;
		else
			return usage_error("unknown option '%s'", argv[i]);
	}
	if (i == argc - 1)
		n = parse_num(argv[i], 1L << 27);
	if (n < 0)
		return usage_error("usage: test-tool hmac random [--check | --interrupt] N "
				   "(0..%ld)", 1L << 27);
	p = calloc((size_t)n ? (size_t)n : 1, 1);
	if (!p)
		return env_error("out of memory");
	if (interrupt && (rc = interrupt_timer(1))) {
		free(p);
		return env_error("setitimer: %s", strerror(-rc));
	}
	rc = hmac_random(p, (size_t)n);
	rc2 = interrupt ? interrupt_timer(0) : 0;
	if (rc || rc2) {
		free(p);
		return env_error("%s: %s", rc ? "hmac_random" : "setitimer",
				 strerror(rc ? -rc : -rc2));
	}
	if (check) {	/* 64 zero bytes in a row: a part the call never filled */
		size_t run = zero_run(p, (size_t)n);

		free(p);
		if (run >= 64)
			return check_failed("%zu zero bytes in a row", run);
		printf("ok %ld\n", n);
		if (interrupt)
			fprintf(stderr, "%d signals\n", (int)alarms);
		return 0;
	}
	rc = print_hex(p, (size_t)n);
	free(p);
	return rc;
}

static int cmd_canon(int argc, const char **argv)
{
	json_error_t err;
	json_t *m;
	char *t;

	(void)argv;
	if (argc != 1)
		return usage_error("usage: test-tool hmac canon <JSON");
	m = json_loadf(stdin, JSON_REJECT_DUPLICATES, &err);
	if (!m)
		return usage_error("stdin: not JSON: %s", err.text);
	t = auth_canon(m);
	json_decref(m);
	if (!t)
		return env_error("out of memory");
	puts(t);
	free(t);
	return 0;
}

/* ---- dispatch ---- */

int tool_hmac(int argc, const char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int argc, const char **argv);
	} sub[] = {
		{ "mac", cmd_mac },
		{ "equal", cmd_equal },
		{ "equal-check", cmd_equal_check },
		{ "unhex", cmd_unhex },
		{ "random", cmd_random },
		{ "canon", cmd_canon },
	};
	size_t i;

	if (argc >= 2)
		for (i = 0; i < sizeof(sub) / sizeof(sub[0]); i++)
			if (!strcmp(sub[i].name, argv[1]))
				return sub[i].fn(argc - 1, argv + 1);
	return usage_error("usage: test-tool hmac mac|equal|equal-check|unhex|random|canon ...");
}
