/* SPDX-License-Identifier: BSD-2-Clause */
/* test-tool shquote [--len N] WORD...: the words quoted for sh (core/shquote.c), one line */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../core/shquote.h"
#include "test-tool.h"

int tool_shquote(int argc, const char **argv)
{
	char buf[65536] = "";
	size_t len = sizeof(buf);
	int i = 1;

	if (argc > 2 && !strcmp(argv[1], "--len")) {
		len = (size_t)atoi(argv[2]);
		if (len < 1 || len > sizeof(buf))
			return usage_error("--len takes 1 to %zu", sizeof(buf));
		i = 3;
	}
	for (; i < argc; i++)
		if (sh_quote_append(buf, len, argv[i])) {
			printf("%s\n", buf);
			fprintf(stderr, "test-tool shquote: word %d does not fit in %zu bytes\n", i, len);
			return 1;
		}
	printf("%s\n", buf);
	return 0;
}
