/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tool trace: probes/trace.c, the path of TCP 5-tuples (tests/t2300-netns-trace.t).
 *
 *   trace SRC SPORT DST DPORT [--max-ttl N] [--timeout MS] [--probes N] [--pause MS]
 *         [--patient] [--settle MS] [--many SPORT,SPORT,...]
 *
 * SRC is an IPv4 address of this host, or - for the one the kernel picks
 * towards DST.  Without --many: trace_tcp of SPORT, printing one line per hop,
 * "TTL ADDR RTT" (RTT in microseconds; "TTL * *" for a hop that did not
 * answer), then "reached" or "not reached".  With --many: trace_tcp_many of
 * SPORT and the ports of the list (A-B is a range), in that order, all at
 * once; each trace is printed as above after a line "sport N".
 * Exit codes as trace_tcp's: 0 (reached or not), 2 usage, 3 environment (no
 * CAP_NET_RAW, no route; one line on stderr), 130 interrupted (what was seen
 * is printed).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../core/net.h"
#include "../../probes/trace.h"
#include "test-tool.h"

#define TRACE_USAGE "usage: test-tool trace SRC SPORT DST DPORT [--max-ttl N] [--timeout MS] " \
	"[--probes N] [--pause MS] [--patient] [--settle MS] [--many SPORT,SPORT,...]"
#define MAX_PORTS 4096

static int parse_num(const char *s, long lo, long hi, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 10);
	return errno || end == s || *end || *v < lo || *v > hi ? -1 : 0;
}

/* "1,2,10-20" appended to ports[*n] */
static int parse_ports(const char *list, int *ports, int *n)
{
	char *copy = strdup(list), *tok, *save = NULL;
	int rc = 0;

	if (!copy)
		return -fs_err_env("out of memory");
	for (tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
		char *dash = strchr(tok, '-');
		long a, b;

		if (dash)
			*dash = 0;
		if (parse_num(tok, 1, 65535, &a) || (dash && parse_num(dash + 1, a, 65535, &b))) {
			rc = usage_error("bad port list '%s' (want PORT,PORT or A-B, ports 1..65535)", list);
			break;
		}
		if (!dash)
			b = a;
		for (; a <= b; a++) {
			if (*n == MAX_PORTS) {
				rc = usage_error("more than %d ports", MAX_PORTS);
				break;
			}
			ports[(*n)++] = (int)a;
		}
	}
	free(copy);
	return rc;
}

static void print_result(const struct trace_result *r)
{
	int h;

	for (h = 0; h < r->nhops; h++) {
		const struct trace_hop *hop = &r->hop[h];

		if (hop->addr[0])
			printf("%d %s %.1f\n", hop->ttl, hop->addr, hop->rtt_us);
		else
			printf("%d * *\n", hop->ttl);
	}
	printf("%s\n", r->reached ? "reached" : "not reached");
}

int tool_trace(int argc, const char **argv)
{
	struct trace_opts o = { 0 };
	const char *pos[4];
	int npos = 0, i, rc, n = 0, many = 0;
	static int ports[MAX_PORTS];
	struct trace_result *r;
	char err[256];
	long v, sport, dport;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--patient")) {	/* ask a TTL again while answers come */
			o.patient = 1;
			continue;
		}
		if (!strcmp(a, "--max-ttl") || !strcmp(a, "--timeout") || !strcmp(a, "--probes") ||
		    !strcmp(a, "--pause") || !strcmp(a, "--settle") || !strcmp(a, "--many")) {
			if (i + 1 == argc)
				return usage_error("%s needs a value", a);
			if (!strcmp(a, "--many")) {
				many = 1;
				n = n ? n : 1;	/* ports[0] is SPORT */
				rc = parse_ports(argv[++i], ports, &n);
				if (rc)
					return rc;
				continue;
			}
			if (parse_num(argv[++i], 1, 600000, &v))
				return usage_error("bad %s '%s'", a, argv[i]);
			if (!strcmp(a, "--max-ttl")) {
				if (v > TRACE_MAX_HOPS)
					return usage_error("--max-ttl %ld: at most %d", v, TRACE_MAX_HOPS);
				o.max_ttl = (int)v;
			} else if (!strcmp(a, "--timeout")) {
				o.timeout_ms = (int)v;
			} else if (!strcmp(a, "--probes")) {
				if (v > TRACE_MAX_PROBES)
					return usage_error("--probes %ld: at most %d", v, TRACE_MAX_PROBES);
				o.probes_per_hop = (int)v;
			} else if (!strcmp(a, "--settle")) {
				o.settle_ms = (int)v;
			} else {
				o.pause_ms = (int)v;
			}
		} else if (a[0] == '-' && a[1]) {
			return usage_error("unknown option '%s'", a);
		} else if (npos < 4) {
			pos[npos++] = a;
		} else {
			return usage_error("%s", TRACE_USAGE);
		}
	}
	if (npos != 4)
		return usage_error("%s", TRACE_USAGE);
	if (parse_num(pos[1], 1, 65535, &sport))
		return usage_error("bad source port '%s' (1 to 65535)", pos[1]);
	if (parse_num(pos[3], 1, 65535, &dport))
		return usage_error("bad destination port '%s' (1 to 65535)", pos[3]);
	ports[0] = (int)sport;
	if (!n)
		n = 1;
	r = calloc((size_t)n, sizeof(*r));
	if (!r)
		return -fs_err_env("out of memory");
	net_stop_on_signals();
	rc = trace_tcp_many(strcmp(pos[0], "-") ? pos[0] : NULL, ports, n, pos[2], (int)dport,
			    &o, r, err, sizeof(err));
	if (!rc || rc == -FS_EXIT_INTERRUPTED) {
		for (i = 0; i < n; i++) {
			if (many)
				printf("sport %d\n", ports[i]);
			print_result(&r[i]);
		}
	}
	if (rc == -FS_EXIT_INTERRUPTED)
		fs_err(FS_EXIT_INTERRUPTED, "interrupted");
	else if (rc)
		fs_err(-rc, "%s", err);
	free(r);
	return -rc;
}
