/* SPDX-License-Identifier: BSD-2-Clause */
/* Argument parsing and samples shared by the test-tool commands: see test-tool.h. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "test-tool.h"

int tool_parse_ulong(const char *opt, const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 0);
	if (errno || end == s || *end || *s == '-' || *v > max)
		return -fs_err_usage("%s: '%s' is not an integer in [0, %lu]", opt, s, max);
	return 0;
}

static int hex_val(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int tool_parse_hex(const char *s, uint8_t **out, size_t *len)
{
	size_t n = 0, i = 0;
	const char *p;
	uint8_t *b;
	int hi = -1;

	for (p = s; *p; p++)
		if (hex_val(*p) >= 0)
			n++;
		else if (!strchr(" :.-\n\t", *p))
			return -fs_err_usage("'%c' is not a hex digit", *p);
	if (n % 2)
		return -fs_err_usage("the packet has an odd number of hex digits (%zu)", n);
	*len = n / 2;
	*out = NULL;
	if (!*len)
		return 0;
	b = malloc(*len);
	if (!b)
		return -fs_err_env("out of memory");
	for (p = s; *p; p++) {
		int v = hex_val(*p);

		if (v < 0)
			continue;
		if (hi < 0) {
			hi = v;
		} else {
			b[i++] = (uint8_t)(hi << 4 | v);
			hi = -1;
		}
	}
	*out = b;
	return 0;
}

const char *tool_mac_str(const uint8_t *m, char *buf, size_t len)
{
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
	return buf;
}

void tool_samples_release(struct tool_samples *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->alloc = 0;
}

static int tool_samples_push(struct tool_samples *s, uint64_t v)
{
	if (s->n == s->alloc) {
		size_t na = s->alloc ? 2 * s->alloc : 1024;
		uint64_t *nv = realloc(s->v, na * sizeof(*nv));

		if (!nv)
			return -fs_err_env("out of memory");
		s->v = nv;
		s->alloc = na;
	}
	s->v[s->n++] = v;
	return 0;
}

/* One non-negative integer per line; empty lines are skipped. */
int tool_read_samples(FILE *f, struct tool_samples *s)
{
	char line[64];
	unsigned long lineno = 0;

	while (fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);
		unsigned long long v;
		char *end;

		lineno++;
		if (len && line[len - 1] == '\n')
			line[--len] = 0;
		else if (!feof(f))
			return usage_error("line %lu: too long", lineno);
		if (!len)
			continue;
		errno = 0;
		v = strtoull(line, &end, 10);
		if (!isdigit((unsigned char)line[0]) || errno || *end)
			return usage_error("line %lu: '%s' is not a non-negative integer",
					   lineno, line);
		if (tool_samples_push(s, v))
			return FS_EXIT_ENV;
	}
	return 0;
}

void tool_print_json(json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);

	printf("%s\n", s ? s : "(null)");
	free(s);
}

uint64_t tool_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}
