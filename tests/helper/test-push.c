/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tool push: report/push.c through small commands (tests/t0190-unit-push.t).
 *
 *   push [OPTS] gateway URL JOB [INSTANCE] <BODY
 *                            push_gateway: PUT the metrics text on stdin
 *   push [OPTS] webhook URL <JSON
 *                            push_webhook: POST the JSON text on stdin
 *   push name S...           push_metric_name of each, one a line
 *   push label S...          push_label_name of each, one a line
 *   push value S...          push_label_value of each, one a line
 *
 * OPTS (anywhere before the arguments): --timeout=MS --retries=N
 * --backoff=MS --user-agent=S -v (log each failed attempt).  Pushes print
 * nothing on success; the exit code is push's: 0, 2 (usage: a malformed
 * URL), 4 (the endpoint failed), 130 (SIGINT/SIGTERM).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/error.h"
#include "../../core/net.h"
#include "../../report/push.h"
#include "test-tool.h"


#define PUSH_USAGE "usage: test-tool push [--timeout=MS] [--retries=N] [--backoff=MS] " \
	"[--user-agent=S] [-v] gateway URL JOB [INSTANCE] | webhook URL | name|label|value S..."
#define STDIN_MAX (64u << 20)

static int parse_int(const char *s, int *v)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(s, &end, 10);
	if (errno || end == s || *end || n < -1 || n > 1000000000L)
		return -1;
	*v = (int)n;
	return 0;
}

/* All of stdin as a string (a NUL byte in it is an error): 0 or -FS_EXIT_*. */
static int read_stdin(char **out)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap), *nb;
	ssize_t n;

	if (!buf)
		return fs_err_env("out of memory");
	for (;;) {
		if (len + 1 == cap) {
			if (cap >= STDIN_MAX) {
				free(buf);
				return fs_err_usage("stdin: more than %u bytes", STDIN_MAX);
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				return fs_err_env("out of memory");
			}
			buf = nb;
			cap *= 2;
		}
		n = read(0, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			return fs_err_env("reading stdin: %s", strerror(errno));
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	buf[len] = 0;
	if (strlen(buf) != len) {
		free(buf);
		return fs_err_usage("stdin: a NUL byte in the text");
	}
	*out = buf;
	return 0;
}

static int print_each(char *(*fn)(const char *), int argc, const char **argv)
{
	int i;

	for (i = 0; i < argc; i++) {
		char *s = fn(argv[i]);

		if (!s)
			return -fs_err_env("out of memory");
		printf("%s\n", s);
		free(s);
	}
	return 0;
}

int tool_push(int argc, const char **argv)
{
	struct push_opts o = PUSH_OPTS_INIT;
	const char *cmd;
	char *body = NULL;
	int i, rc;

	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		const char *a = argv[i];

		if (!strncmp(a, "--timeout=", 10)) {
			if (parse_int(a + 10, &o.timeout_ms))
				return usage_error("bad %s", a);
		} else if (!strncmp(a, "--retries=", 10)) {
			if (parse_int(a + 10, &o.retries))
				return usage_error("bad %s", a);
		} else if (!strncmp(a, "--backoff=", 10)) {
			if (parse_int(a + 10, &o.backoff_ms))
				return usage_error("bad %s", a);
		} else if (!strncmp(a, "--user-agent=", 13)) {
			o.user_agent = a + 13;
		} else if (!strcmp(a, "-v")) {
			fs_set_verbosity(fs_verbosity() + 1);
		} else if (!strcmp(a, "--")) {
			i++;
			break;
		} else {
			return usage_error("unknown option '%s'; " PUSH_USAGE, a);
		}
	}
	if (i >= argc)
		return usage_error(PUSH_USAGE);
	cmd = argv[i++];
	argc -= i;
	argv += i;

	if (!strcmp(cmd, "name"))
		return print_each(push_metric_name, argc, argv);
	if (!strcmp(cmd, "label"))
		return print_each(push_label_name, argc, argv);
	if (!strcmp(cmd, "value"))
		return print_each(push_label_value, argc, argv);
	if (!strcmp(cmd, "gateway")) {
		if (argc < 2 || argc > 3)
			return usage_error(PUSH_USAGE);
		o.job = argv[1];
		o.instance = argc > 2 ? argv[2] : NULL;
	} else if (!strcmp(cmd, "webhook")) {
		if (argc != 1)
			return usage_error(PUSH_USAGE);
	} else {
		return usage_error("unknown push command '%s'; " PUSH_USAGE, cmd);
	}
	rc = read_stdin(&body);
	if (rc)
		return -rc;
	net_stop_on_signals();
	if (!strcmp(cmd, "gateway"))
		rc = push_gateway(argv[0], body, &o);
	else
		rc = push_webhook(argv[0], body, &o);
	free(body);
	return -rc;
}
