/* SPDX-License-Identifier: BSD-2-Clause */
#include <string.h>

#include "shquote.h"

int sh_quote_append(char *out, size_t len, const char *s)
{
	size_t at = strlen(out), start = at;

	if (at && at < len)
		out[at++] = ' ';
	if (at < len)
		out[at++] = '\'';
	for (; *s && at < len; s++) {
		if (*s != '\'') {
			out[at++] = *s;
			continue;
		}
		if (len - at < 4)
			break;
		memcpy(out + at, "'\\''", 4);
		at += 4;
	}
	if (*s || at + 2 > len) {	/* the closing quote and the NUL */
		out[start] = 0;
		return -1;
	}
	out[at++] = '\'';
	out[at] = 0;
	return 0;
}
