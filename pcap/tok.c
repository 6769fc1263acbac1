/* SPDX-License-Identifier: BSD-2-Clause */
/* Value-to-name tables: see tok.h. */
#include <stdio.h>

#include "tok.h"

const char *tok_find(const struct tok *t, unsigned v)
{
	for (; t->s; t++)
		if (t->v == v)
			return t->s;
	return NULL;
}

const char *tok_flags_str(const struct tok *t, unsigned flags, char *buf, size_t len)
{
	size_t at = 0;

	if (!len)
		return buf;
	buf[0] = 0;
	for (; t->s; t++) {
		int n;

		if (!(flags & t->v))
			continue;
		n = snprintf(buf + at, len - at, "%s%s", at ? "," : "", t->s);
		if (n < 0 || (size_t)n >= len - at)
			break;
		at += (size_t)n;
	}
	if (!at)
		snprintf(buf, len, "none");
	return buf;
}
