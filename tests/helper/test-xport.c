/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tool xport-alloc: transport/transport.c's buffer allocator
 * (tests/t0155-unit-xport-alloc.t).
 *
 *   xport-alloc SIZE...
 *       for each SIZE (bytes), xport_alloc on the TCP transport, every
 *       page written, then a line from /proc/self/smaps for the mapping
 *       that holds the buffer: "SIZE len=BYTES thp=0|1 huge_kb=N" - the
 *       bytes from the buffer's start to the mapping's end, its THPeligible
 *       flag and its AnonHugePages; then xport_free, and no mapping may hold
 *       the buffer's first or last byte (else exit 1).
 *
 *       The kernel merges a new anonymous mapping with a neighbour of the
 *       same kind (seen under ASan, whose own mappings lie around it): the
 *       mapping that holds the buffer may then start below it or end above
 *       it, so a buffer below 2 MiB shows at least its whole pages, not
 *       exactly them.  From 2 MiB on, xport_alloc's madvise gives the
 *       buffer a mapping of its own, and len is exact.
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
	unsigned long lo, hi, huge_kb;
	int thp;
};

/* The /proc/self/smaps entry of the mapping that holds address a. */
static int smaps_of(const void *a, struct smaps_entry *e)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	unsigned long at = (unsigned long)a;
	char line[512];
	int in = 0;

	memset(e, 0, sizeof(*e));
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, v;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = lo <= at && at < hi;
			if (in) {
				e->found = 1;
				e->lo = lo;
				e->hi = hi;
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
		printf("%lu len=%lu thp=%d huge_kb=%lu\n", len, e.hi - (unsigned long)m, e.thp, e.huge_kb);
		xport_free(x, m, len);
		if ((smaps_of(m, &e) == 0 && e.found) || (smaps_of(m + len - 1, &e) == 0 && e.found)) {
			fprintf(stderr, "test-tool: xport_free(%lu) left %#lx-%#lx mapped\n", len, e.lo, e.hi);
			rc = 1;
		}
	}
	xport_close(x);
	return rc;
}
