/* SPDX-License-Identifier: BSD-2-Clause */
/* `fabscope version`: the version and the transports built in. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../core/builtin.h"
#include "../core/error.h"
#include "../core/options.h"
#include "../core/testhook.h"
#include "../core/version.h"
#include "transport.h"

int cmd_version(int argc, const char **argv)
{
	static const char *const usage[] = { "fabscope version [--json]", NULL };
	int json = 0, nargs = 0, rc;
	const struct opt opts[] = {
		OPT_BOOL(0, "json", &json, "print a JSON object: version, transports, test_hooks"),
		OPT_END(),
	};

	rc = argc > 1 ? opts_parse(argc, argv, opts, usage, "Show the version and the transports built in.", &nargs) : 0;
	if (rc)
		return rc == OPTS_HELP ? 0 : -rc;
	if (nargs)
		return -fs_err_usage("version takes no arguments: '%s' is one too many", argv[0]);
	if (json) {
		json_t *t = json_array(), *v;
		char *s, names[256];
		const char *p;

		snprintf(names, sizeof(names), "%s", xport_names());
		for (p = strtok(names, ", "); p; p = strtok(NULL, ", "))
			json_array_append_new(t, json_string(p));
		v = json_pack("{s:s, s:s, s:o, s:b}", "tool", "fabscope", "version", FABSCOPE_VERSION,
			      "transports", t, "test_hooks", FS_TEST_HOOKS);
		s = json_dumps(v, JSON_COMPACT);
		printf("%s\n", s ? s : "{}");
		free(s);
		json_decref(v);
		return 0;
	}
	printf("fabscope %s (transports: %s)%s\n", FABSCOPE_VERSION, xport_names(),
	       FS_TEST_HOOKS ? " (test hooks: a test build, not for production)" : "");
	return 0;
}
