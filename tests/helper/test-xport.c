/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tool xport-alloc: transport/transport.c's buffer allocator
 * (tests/t0155-unit-xport-alloc.t).
 *
 *   xport-alloc SIZE...
 *       for each SIZE (bytes), xport_alloc on the TCP transport, every
 *       page written, then a line from /proc/self/smaps for the mapping:
 *       "SIZE len=BYTES thp=0|1 huge_kb=N" - the mapping's length, its
 *       THPeligible flag and its AnonHugePages; then xport_free, and the
 *       mapping must be gone (else exit 1).
 *
 * Exit codes: 0 ok, 1 a check failed, 2 usage, 3 environment.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../transport/transport.h"
#include "test-tool.h"

struct smaps_entry {
	int found;
	unsigned long len, huge_kb;
	int thp;
};

/* The /proc/self/smaps entry of the mapping that starts at p. */
static int smaps_of(const void *p, struct smaps_entry *e)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	int in = 0;

	memset(e, 0, sizeof(*e));
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, v;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = lo == (unsigned long)p;
			if (in) {
				e->found = 1;
				e->len = hi - lo;
			}
			continue;
		}
		if (!in)
			continue;
		if (sscanf(line, "AnonHugePages: %lu kB", &v) == 1)
			e->huge_kb = v;
		else if (sscanf(line, "THPeligible: %lu", &v) == 1)
			e->thp = (int)v;
	}
	fclose(f);
	return 0;
}

int tool_xport_alloc(int argc, const char **argv)
{
	struct xport_params p = { .bind_addr = "127.0.0.1", .timeout_ms = 2000 };
	struct xport *x;
	char err[256];
	int i, rc = 0;

	if (argc < 2)
		return -fs_err_usage("usage: test-tool xport-alloc SIZE...");
	if (xport_open("tcp", &p, &x, err, sizeof(err)))
		return -fs_err_env("%s", err);
	for (i = 1; i < argc && !rc; i++) {
		unsigned long len;
		struct smaps_entry e;
		unsigned char *m;

		if ((rc = tool_parse_ulong("SIZE", argv[i], 1ul << 32, &len)))
			break;	/* the exit code, after one line */
		if (!(m = xport_alloc(x, len))) {
			rc = -fs_err(FS_EXIT_ENV, "xport_alloc(%lu) failed", len);
			break;
		}
		memset(m, 0x5a, len);
		if (smaps_of(m, &e) || !e.found) {
			rc = -fs_err(FS_EXIT_ENV, "no mapping at %p in /proc/self/smaps", (void *)m);
			break;
		}
		printf("%lu len=%lu thp=%d huge_kb=%lu\n", len, e.len, e.thp, e.huge_kb);
		xport_free(x, m, len);
		if (smaps_of(m, &e) == 0 && e.found) {
			fprintf(stderr, "test-tool: xport_free(%lu) left a mapping of %lu bytes\n", len, e.len);
			rc = 1;
		}
	}
	xport_close(x);
	return rc;
}
