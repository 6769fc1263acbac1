/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The Prometheus text exposition format, read: see promtext.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "promtext.h"

struct reader {
	const char *p, *end;	/* the line, without its end */
	const char *line0;
	char buf[PROM_LINE_MAX + 2 * PROM_MAX_LABELS + 8];	/* names and unescaped values, NUL-terminated */
	size_t used;
	char *err;
	size_t errlen;
	long line;
};

static int fail(struct reader *r, const char *what)
{
	snprintf(r->err, r->errlen, "line %ld, column %ld: %s", r->line, (long)(r->p - r->line0) + 1, what);
	return -1;
}

static int name_start(unsigned char c, int colon)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':');
}

static int name_char(unsigned char c, int colon)
{
	return name_start(c, colon) || (c >= '0' && c <= '9');
}

static void skip_blanks(struct reader *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t'))
		r->p++;
}

/* a name into buf: its start, or NULL (said) */
static const char *read_name(struct reader *r, int colon, const char *what)
{
	const char *s = r->p;
	char *o = r->buf + r->used;
	size_t n;

	if (r->p >= r->end || !name_start((unsigned char)*r->p, colon))
		return fail(r, what), NULL;
	while (r->p < r->end && name_char((unsigned char)*r->p, colon))
		r->p++;
	n = (size_t)(r->p - s);
	if (n > PROM_NAME_MAX)
		return fail(r, "a name longer than 1024 bytes"), NULL;
	memcpy(o, s, n);
	o[n] = 0;
	r->used += n + 1;
	return o;
}

/* the length of the UTF-8 sequence at p (at most end), 0 when it is not one */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
	size_t n, i;
	unsigned cp;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	if ((size_t)(end - p) < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

/* a quoted label value, unescaped into buf */
static const char *read_value(struct reader *r)
{
	char *o = r->buf + r->used, *start = o;

	if (r->p >= r->end || *r->p != '"')
		return fail(r, "a label value must begin with '\"'"), NULL;
	r->p++;
	while (r->p < r->end && *r->p != '"') {
		size_t n;

		if ((size_t)(o - start) >= PROM_NAME_MAX)
			return fail(r, "a label value longer than 1024 bytes"), NULL;
		if (*r->p == '\\') {
			if (r->p + 1 >= r->end)
				break;
			r->p++;
			if (*r->p == 'n')
				*o++ = '\n';
			else if (*r->p == '\\' || *r->p == '"')
				*o++ = *r->p;
			else
				return fail(r, "a label value's escape is not \\\\, \\\" or \\n"), NULL;
			r->p++;
			continue;
		}
		if (!(n = utf8_len((const unsigned char *)r->p, (const unsigned char *)r->end)))
			return fail(r, "a label value is not valid UTF-8"), NULL;
		if ((size_t)(o - start) + n > PROM_NAME_MAX)
			return fail(r, "a label value longer than 1024 bytes"), NULL;
		memcpy(o, r->p, n);
		o += n;
		r->p += n;
	}
	if (r->p >= r->end)
		return fail(r, "a label value is not closed"), NULL;
	r->p++;
	*o = 0;
	r->used += (size_t)(o - start) + 1;
	return start;
}

static int read_labels(struct reader *r, struct prom_sample *s)
{
	r->p++;	/* '{' */
	for (;;) {
		const char *name, *value;
		int i;

		skip_blanks(r);
		if (r->p < r->end && *r->p == '}')
			break;
		if (s->nlabels == PROM_MAX_LABELS)
			return fail(r, "more than 32 labels");
		if (!(name = read_name(r, 0, "a label name was expected")))
			return -1;
		skip_blanks(r);
		if (r->p >= r->end || *r->p != '=')
			return fail(r, "'=' was expected after a label name");
		r->p++;
		skip_blanks(r);
		if (!(value = read_value(r)))
			return -1;
		for (i = 0; i < s->nlabels; i++)
			if (!strcmp(s->label[i].name, name))
				return fail(r, "a label given twice");
		s->label[s->nlabels++] = (struct prom_label){ name, value };
		skip_blanks(r);
		if (r->p < r->end && *r->p == ',') {
			r->p++;
			continue;
		}
		if (r->p >= r->end || *r->p != '}')
			return fail(r, "',' or '}' was expected after a label");
		break;
	}
	r->p++;	/* '}' */
	return 0;
}

/* a float: strtod's forms in the C locale, NaN, +Inf, -Inf; one token */
static int read_float(struct reader *r, double *v)
{
	char tok[64], *endp;
	size_t n = 0;

	while (r->p + n < r->end && r->p[n] != ' ' && r->p[n] != '\t')
		n++;
	if (!n || n >= sizeof(tok))
		return fail(r, n ? "a value longer than 63 bytes" : "a value was expected");
	memcpy(tok, r->p, n);
	tok[n] = 0;
	if (!strcmp(tok, "NaN"))
		*v = NAN;
	else if (!strcmp(tok, "+Inf") || !strcmp(tok, "Inf"))
		*v = INFINITY;
	else if (!strcmp(tok, "-Inf"))
		*v = -INFINITY;
	else if (strspn(tok, "0123456789+-.eE") != n || (*v = strtod(tok, &endp), *endp))
		return fail(r, "the value is not a number");
	r->p += n;
	return 0;
}

static int read_sample(struct reader *r, struct prom_sample *s)
{
	double ts;

	s->nlabels = 0;
	s->line = r->line;
	r->used = 0;
	if (!(s->name = read_name(r, 1, "a metric name was expected")))
		return -1;
	skip_blanks(r);
	if (r->p < r->end && *r->p == '{' && read_labels(r, s))
		return -1;
	skip_blanks(r);
	if (read_float(r, &s->value))
		return -1;
	skip_blanks(r);
	if (r->p < r->end && read_float(r, &ts))
		return -1;
	skip_blanks(r);
	if (r->p < r->end)
		return fail(r, "more after the timestamp");
	return 0;
}

const char *prom_label(const struct prom_sample *s, const char *name)
{
	int i;

	for (i = 0; i < s->nlabels; i++)
		if (!strcmp(s->label[i].name, name))
			return s->label[i].value;
	return NULL;
}

int prom_parse(const char *text, size_t len, int (*fn)(void *ctx, const struct prom_sample *s), void *ctx,
	       char *err, size_t errlen)
{
	struct reader *r = malloc(sizeof(*r));
	struct prom_sample *s = malloc(sizeof(*s));
	const char *p = text, *end = text + len;
	int rc = 0;

	if (!r || !s) {
		snprintf(err, errlen, "out of memory reading the metrics");
		free(r);
		free(s);
		return -1;
	}
	r->err = err;
	r->errlen = errlen;
	r->line = 0;
	while (p < end && !rc) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;

		r->line++;
		r->line0 = r->p = p;
		r->end = le > p && le[-1] == '\r' ? le - 1 : le;
		p = nl ? nl + 1 : end;
		if (r->end - r->p > PROM_LINE_MAX) {
			rc = fail(r, "a line longer than 65536 bytes");
			break;
		}
		if (memchr(r->p, 0, (size_t)(r->end - r->p))) {
			rc = fail(r, "a NUL byte");
			break;
		}
		skip_blanks(r);
		if (r->p == r->end || *r->p == '#')
			continue;
		if (read_sample(r, s))
			rc = -1;
		else
			rc = fn(ctx, s);
	}
	free(r);
	free(s);
	return rc;
}
