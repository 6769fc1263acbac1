/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A reader of the Prometheus text exposition format (version 0.0.4), for
 * the bytes the agents' /metrics answer: untrusted, so bounded and checked.
 *
 *   # HELP name text            (skipped)
 *   # TYPE name counter|gauge|histogram|summary|untyped   (skipped)
 *   # any other comment         (skipped)
 *   name{label="value",...} value [timestamp]
 *
 * A name is [a-zA-Z_:][a-zA-Z0-9_:]*, a label name [a-zA-Z_][a-zA-Z0-9_]*;
 * a label value is between double quotes, with \\, \" and \n its only
 * escapes, and must be valid UTF-8 (checked: a byte that is not is an
 * error); a trailing comma before '}' is allowed, a label given twice is
 * not.  The value is a float as strtod reads it in the C locale, or NaN,
 * +Inf, -Inf; the timestamp (milliseconds) is read and not used.  Lines
 * end with '\n' (a '\r' before it is taken away); the last line may lack it.
 *
 * Bounds: a line at most PROM_LINE_MAX bytes, at most PROM_MAX_LABELS
 * labels, a name or label value at most PROM_NAME_MAX bytes; the body's own
 * size is the caller's to bound (monitor analyze: --max-body).  Nothing is
 * allocated per line: the sample handed to the callback lives in the
 * reader's buffer until the next line.
 */
#ifndef FS_MONITOR_PROMTEXT_H
#define FS_MONITOR_PROMTEXT_H

#include <stddef.h>

#define PROM_LINE_MAX 65536
#define PROM_MAX_LABELS 32
#define PROM_NAME_MAX 1024

struct prom_label {
	const char *name, *value;
};

struct prom_sample {
	const char *name;
	struct prom_label label[PROM_MAX_LABELS];
	int nlabels;
	double value;
	long line;
};

/* the value of label name in s, or NULL */
const char *prom_label(const struct prom_sample *s, const char *name);

/*
 * Read text[0 .. len): fn(ctx, sample) for every sample, in order; a
 * non-zero return of fn stops the reading and is returned.  0 read to the
 * end; -1 the text is not the format, with what and where (line, column)
 * in err: "line 12: a label value is not closed".
 */
int prom_parse(const char *text, size_t len, int (*fn)(void *ctx, const struct prom_sample *s), void *ctx,
	       char *err, size_t errlen);

#endif
