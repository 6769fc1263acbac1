/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tool promtext, promtext-fuzz: monitor/promtext.c's reading of the
 * Prometheus text format (tests/t0425-unit-promtext.t).
 *
 *   promtext FILE           every sample of FILE, a line each: NAME, its labels
 *                           as name=value (values with \n and \\ written so), the
 *                           value (%.17g); or the error line, exit 1
 *   promtext-fuzz FILE N SEED   N texts made from FILE: bytes changed, inserted
 *                           or dropped, lines cut or repeated, a quote or brace
 *                           added; each read into a buffer of exactly its length
 *                           (a heap block: ASan sees a read past it), every
 *                           sample's strings checked for their bounds (names,
 *                           values NUL-terminated and within PROM_NAME_MAX, at
 *                           most PROM_MAX_LABELS labels); one line of counts
 */
#include <stdlib.h>
#include <string.h>

#include "../../model/fabric.h"
#include "../../monitor/promtext.h"
#include "test-tool.h"

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n;

	*len = 0;
	if (!f)
		return NULL;
	do {
		char *nb;

		cap = cap ? 2 * cap : 65536;
		if (!(nb = realloc(buf, cap))) {
			free(buf);
			fclose(f);
			return NULL;
		}
		buf = nb;
		n = fread(buf + *len, 1, cap - *len, f);
		*len += n;
	} while (*len == cap);
	fclose(f);
	return buf;
}

static void put_escaped(const char *s)
{
	for (; *s; s++) {
		if (*s == '\n')
			fputs("\\n", stdout);
		else if (*s == '\\')
			fputs("\\\\", stdout);
		else
			putchar(*s);
	}
}

static int print_sample(void *ctx, const struct prom_sample *s)
{
	int i;

	printf("%s", s->name);
	for (i = 0; i < s->nlabels; i++) {
		printf(" %s=", s->label[i].name);
		put_escaped(s->label[i].value);
	}
	printf(" %.17g\n", s->value);
	return 0;
}

struct fuzz_counts {
	long samples, bad;
};

static int check_sample(void *ctx, const struct prom_sample *s)
{
	struct fuzz_counts *c = ctx;
	int i;

	c->samples++;
	if (s->nlabels > PROM_MAX_LABELS || strlen(s->name) > PROM_NAME_MAX)
		c->bad++;
	for (i = 0; i < s->nlabels; i++)
		if (strlen(s->label[i].name) > PROM_NAME_MAX || strlen(s->label[i].value) > PROM_NAME_MAX)
			c->bad++;
	return 0;
}

static size_t mutate(const char *in, size_t len, char *out, size_t cap, uint64_t *rng)
{
	static const char bytes[] = "{}\",=\\\n #\x80\xff\xc3\x00 0.5e+Inf";
	size_t n = len < cap ? len : cap, k, m = 1 + fab_rand(rng) % 8;

	memcpy(out, in, n);
	for (k = 0; k < m && n; k++) {
		size_t at = fab_rand(rng) % n;

		switch (fab_rand(rng) % 6) {
		case 0:	/* a byte changed */
			out[at] = (char)fab_rand(rng);
			break;
		case 1:	/* one of the format's own bytes put in */
			out[at] = bytes[fab_rand(rng) % (sizeof(bytes) - 1)];
			break;
		case 2:	/* a byte dropped */
			memmove(out + at, out + at + 1, n - at - 1);
			n--;
			break;
		case 3:	/* cut here */
			n = at;
			break;
		case 4:	/* a run repeated (a long line, many labels) */
			if (n < cap) {
				size_t run = 1 + fab_rand(rng) % 64, times = fab_rand(rng) % 2000;

				while (times-- && n + run < cap && at + run <= n) {
					memmove(out + at + run, out + at, n - at);
					n += run;
				}
			}
			break;
		default:	/* a byte inserted */
			if (n < cap) {
				memmove(out + at + 1, out + at, n - at);
				out[at] = bytes[fab_rand(rng) % (sizeof(bytes) - 1)];
				n++;
			}
			break;
		}
	}
	return n;
}

static int fuzz(const char *path, unsigned long runs, uint64_t rng)
{
	size_t len, cap, i;
	char *text = read_file(path, &len), *work, err[256];
	struct fuzz_counts c = { 0, 0 };
	long ok = 0, refused = 0;

	if (!text)
		return usage_error("cannot read %s", path);
	cap = len + 2 * PROM_LINE_MAX;
	if (!(work = malloc(cap)))
		return -FS_EXIT_ENV;
	for (i = 0; i < runs; i++) {
		size_t n = mutate(text, len, work, cap, &rng);
		char *exact = malloc(n ? n : 1);	/* exactly its length: a read past it is ASan's */
		int rc;

		if (!exact)
			return -FS_EXIT_ENV;
		memcpy(exact, work, n);
		err[0] = 0;
		rc = prom_parse(exact, n, check_sample, &c, err, sizeof(err));
		free(exact);
		if (rc && (!*err || strchr(err, '\n')))
			return check_failed("run %zu: refused without one line of error", i);
		rc ? refused++ : ok++;
	}
	free(work);
	free(text);
	printf("runs %lu read %ld refused %ld samples %ld out-of-bounds %ld\n", runs, ok, refused, c.samples, c.bad);
	return c.bad ? check_failed("%ld strings out of their bounds", c.bad) : 0;
}

int tool_promtext(int argc, const char **argv)
{
	char err[256];
	size_t len;
	char *text;
	int rc;

	if (argc == 4 && !strcmp(argv[0], "promtext-fuzz"))
		return fuzz(argv[1], strtoul(argv[2], NULL, 10), strtoull(argv[3], NULL, 10));
	if (argc != 2)
		return usage_error("usage: test-tool promtext FILE | promtext-fuzz FILE N SEED");
	if (!(text = read_file(argv[1], &len)))
		return usage_error("cannot read %s", argv[1]);
	rc = prom_parse(text, len, print_sample, NULL, err, sizeof(err));
	free(text);
	if (rc) {
		printf("error: %s\n", err);
		return 1;
	}
	return 0;
}
