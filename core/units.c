/* SPDX-License-Identifier: BSD-2-Clause */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "units.h"

static int parse_scaled(const char *s, uint64_t *out, uint64_t base)
{
	const char *suffix;
	char *end;
	unsigned long long v;
	uint64_t mult = 1;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	suffix = end;
	if (*suffix) {
		int shift = 0;

		switch (toupper((unsigned char)*suffix)) {
		case 'K': shift = 1; break;
		case 'M': shift = 2; break;
		case 'G': shift = 3; break;
		case 'T': shift = 4; break;
		case 'B': shift = 0; break;
		default: return -1;
		}
		if (shift) {
			suffix++;
			while (shift--)
				mult *= base;
			/* accept K, KB, KiB (all binary for sizes) */
			if (base == 1024 && (!strcasecmp(suffix, "ib") ||
					     !strcasecmp(suffix, "b")))
				suffix = "";
		} else {
			suffix++;	/* a bare "B" */
		}
		if (*suffix)
			return -1;
	}
	if (v && mult > UINT64_MAX / v)
		return -1;
	*out = v * mult;
	return 0;
}

int units_parse_size(const char *s, uint64_t *out)
{
	return parse_scaled(s, out, 1024);
}

int units_parse_count(const char *s, uint64_t *out)
{
	size_t n = s ? strlen(s) : 0;

	/* counts take K/M/G only, never a "B" */
	if (n && (s[n - 1] == 'b' || s[n - 1] == 'B'))
		return -1;
	return parse_scaled(s, out, 1000);
}

int units_parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s || strpbrk(s, "xX"))	/* strtod would take hex */
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s)
		return -1;
	if (!strcmp(end, "ms"))
		v /= 1000.0;
	else if (*end && strcmp(end, "s"))
		return -1;
	if (!(v > 0) || v > 1e7)
		return -1;
	*out = v;
	return 0;
}

int units_ms(double s)
{
	double ms = ceil(s * 1000);

	return ms < 1 ? 1 : ms > INT_MAX ? INT_MAX : (int)ms;
}

void units_format_size(uint64_t v, char *buf, size_t len)
{
	static const char suf[] = "KMGT";
	int i = -1;

	while (v && !(v % 1024) && i < 3) {
		v /= 1024;
		i++;
	}
	if (i < 0)
		snprintf(buf, len, "%llu", (unsigned long long)v);
	else
		snprintf(buf, len, "%llu%c", (unsigned long long)v, suf[i]);
}
