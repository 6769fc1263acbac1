/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tool topo-fuzz FILE N SEED: topology/intent.c and dot.c reading N
 * texts made from FILE (our format or a DOT graph): bytes changed, tokens of
 * either grammar inserted (quotes, braces, brackets, edges, comments), the
 * text cut; each read from a heap buffer of exactly its length plus its
 * terminating NUL, and must be read or refused (exit 2), never anything
 * else.  One line of counts (tests/t0400-cli-topo.t; its messages go to
 * stderr).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../core/slurp.h"
#include "../../topology/intent.h"
#include "test-tool.h"

static const char *const toks[] = { "\"", "--", "->", "[", "]", "{", "}", ":", "=", ";", ",", "/*", "*/", "//",
				    "#", "\n", "\\", "graph ", "subgraph ", "function=leaf ", "rail=", "link ",
				    "switch ", "tier=spine ", " ", "\\\"", "\0" };

/* src with 1 to 3 changes at random places: a token inserted, a byte dropped or changed */
static char *mutate(const char *src, size_t len, uint64_t *rng, size_t *out_len)
{
	size_t n = len, k, pos;
	char *t = malloc(len + 3 * 32 + 1);

	if (!t)
		abort();
	memcpy(t, src, len);
	for (k = 1 + tool_rand(rng) % 3; k; k--) {
		const char *tk = toks[tool_rand(rng) % (sizeof(toks) / sizeof(toks[0]))];
		size_t tl = *tk ? strlen(tk) : 1;

		pos = n ? tool_rand(rng) % n : 0;
		switch (tool_rand(rng) % 3) {
		case 0:
			memmove(t + pos + tl, t + pos, n - pos);
			memcpy(t + pos, tk, tl);
			n += tl;
			break;
		case 1:
			if (n) {
				memmove(t + pos, t + pos + 1, n - pos - 1);
				n--;
			}
			break;
		default:
			if (n)
				t[pos] = (char)(1 + tool_rand(rng) % 255);
		}
	}
	if (tool_rand(rng) % 8 == 0)
		n = tool_rand(rng) % (n + 1);
	*out_len = n;
	return t;
}

int tool_topo(int argc, const char **argv)
{
	unsigned long n, seed, i;
	long counts[2] = { 0 };
	uint64_t rng;
	size_t len;
	char *src;
	int rc;

	if (argc != 4)
		return usage_error("usage: test-tool topo-fuzz FILE N SEED");
	if ((rc = tool_parse_ulong("N", argv[2], 10000000, &n)) || (rc = tool_parse_ulong("SEED", argv[3], ~0ul, &seed)))
		return -rc;
	if (!(src = fs_slurp(argv[1], TOPO_FILE_MAX)))
		return -fs_err_read("topology", argv[1], errno);
	len = strlen(src);
	rng = seed;
	for (i = 0; i < n; i++) {
		size_t tl;
		char *t = mutate(src, len, &rng, &tl), *exact = malloc(tl + 1);
		struct topo tp;

		memcpy(exact, t, tl);
		exact[tl] = 0;
		free(t);
		topo_init(&tp);
		rc = topo_read(&tp, "fuzz", exact);
		topo_release(&tp);
		free(exact);
		if (rc && rc != -FS_EXIT_USAGE) {
			fprintf(stderr, "topo-fuzz: text %lu: %d, neither read nor refused\n", i, rc);
			free(src);
			return 1;
		}
		counts[!rc]++;
	}
	free(src);
	printf("topo-fuzz: %lu texts: refused %ld, read %ld\n", n, counts[0], counts[1]);
	return 0;
}
