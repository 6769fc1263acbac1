/* SPDX-License-Identifier: BSD-2-Clause */
/* One order of names: natural, exact identity (names.h). */
#include <string.h>

#include "names.h"

static int digit(char c)
{
	return c >= '0' && c <= '9';
}

/* natural order alone: digit runs by their value, other bytes by value; a
 * digit run against another byte as its first digit is (any digit: the
 * other byte is below '0' or above '9' either way) */
static int natural(const char *a, const char *b)
{
	while (*a && *b) {
		if (digit(*a) && digit(*b)) {
			const char *x = a, *y = b;
			size_t lx, ly;

			while (*x == '0' && digit(x[1]))
				x++;
			while (*y == '0' && digit(y[1]))
				y++;
			for (a = x; digit(*a); a++)
				;
			for (b = y; digit(*b); b++)
				;
			lx = (size_t)(a - x);
			ly = (size_t)(b - y);
			if (lx != ly)
				return lx < ly ? -1 : 1;
			if (memcmp(x, y, lx))
				return memcmp(x, y, lx) < 0 ? -1 : 1;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	return *a ? 1 : *b ? -1 : 0;
}

int fs_name_cmp(const char *a, const char *b)
{
	int c = natural(a, b);

	return c ? c : strcmp(a, b);
}

int fs_name_pcmp(const void *a, const void *b)
{
	return fs_name_cmp(*(const char *const *)a, *(const char *const *)b);
}
