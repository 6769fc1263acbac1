/* SPDX-License-Identifier: BSD-2-Clause */
/* test-tool size, count, seconds, fmt-size: core/units.c */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../core/error.h"
#include "../../core/units.h"
#include "test-tool.h"

int tool_size(int argc, const char **argv)
{
	uint64_t v;
	int i;

	for (i = 1; i < argc; i++)
		if (units_parse_size(argv[i], &v))
			printf("error\n");
		else
			printf("%" PRIu64 "\n", v);
	return 0;
}

int tool_count(int argc, const char **argv)
{
	uint64_t v;
	int i;

	for (i = 1; i < argc; i++)
		if (units_parse_count(argv[i], &v))
			printf("error\n");
		else
			printf("%" PRIu64 "\n", v);
	return 0;
}

int tool_seconds(int argc, const char **argv)
{
	double v;
	int i;

	for (i = 1; i < argc; i++)
		if (units_parse_seconds(argv[i], &v))
			printf("error\n");
		else
			printf("%.15g\n", v);
	return 0;
}

int tool_fmt_size(int argc, const char **argv)
{
	char buf[64];
	int i;

	for (i = 1; i < argc; i++) {
		unsigned long long v;
		char *end;

		errno = 0;
		v = strtoull(argv[i], &end, 10);
		if (!isdigit((unsigned char)*argv[i]) || errno || *end)
			return usage_error("'%s' is not a non-negative integer", argv[i]);
		units_format_size(v, buf, sizeof(buf));
		printf("%s\n", buf);
	}
	return 0;
}
