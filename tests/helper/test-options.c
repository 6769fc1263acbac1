/* SPDX-License-Identifier: BSD-2-Clause */
/* test-tool options ARGS...: a table with every option type (core/options.c), parsed and printed */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../../core/error.h"
#include "../../core/options.h"
#include "test-tool.h"

int tool_options(int argc, const char **argv)
{
	int flag = 0, quiet = 0, verbose = 0, num = 7, unbounded = 0;
	uint64_t count = 0, size = 0;
	double secs = 0;
	const char *str = NULL, *out = NULL;
	struct opt_list list = { NULL, 0 };
	const struct opt opts[] = {
		OPT_GROUP("Switches"),
		OPT_BOOL('b', "bool", &flag, "a boolean"),
		OPT_BOOL(0, "quiet", &quiet, "a boolean with a long name only"),
		OPT_VERBOSE(&verbose),
		OPT_GROUP("Values"),
		OPT_INT('i', "int", &num, "N", "an integer from -5 to 100 (default 7)", -5, 100),
		OPT_INT(0, "unbounded", &unbounded, "N", "an integer from 0, without an upper bound", 0, 0),
		OPT_COUNT('n', "count", &count, "N", "a count, e.g. 5000, 10K, 1M", 1, 0),
		OPT_SIZE('s', "size", &size, "SIZE", "a size up to 1G, e.g. 4096, 64K, 1M", 1, 1ll << 30),
		OPT_SECONDS('D', "seconds", &secs, "SECONDS", "a duration, e.g. 2, 0.5, 250ms"),
		OPT_STRING('t', "string", &str, "TEXT", "a string"),
		OPT_LIST('l', "list", &list, "ITEM", "a string that may be given again and again, each kept in order; this help text is long enough to be wrapped"),
		OPT_FILE('o', NULL, &out, "FILE", "an option with a short name only"),
		OPT_END(),
	};
	static const char *const usage[] = {
		"test-tool options [options] [--] [args...]",
		"test-tool options --help",
		NULL
	};
	int rc, nargs = 0, i;

	rc = opts_parse(argc, argv, opts, usage,
			"Parse the arguments with a table that holds every option type,\n"
			"then print each value and each positional argument.", &nargs);
	if (rc == OPTS_HELP) {
		rc = 0;
		goto out;
	}
	if (rc < 0) {
		rc = -rc;
		goto out;
	}
	printf("bool %d\nquiet %d\nverbose %d\nint %d\nunbounded %d\n",
	       flag, quiet, verbose, num, unbounded);
	printf("count %" PRIu64 "\nsize %" PRIu64 "\nseconds %.15g\n", count, size, secs);
	printf("string %s\no %s\n", str ? str : "(unset)", out ? out : "(unset)");
	for (i = 0; i < list.n; i++)
		printf("list %s\n", list.v[i]);
	for (i = 0; i < nargs; i++)
		printf("arg %s\n", argv[i]);
out:
	opt_list_release(&list);
	return rc;
}
