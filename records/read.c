/* SPDX-License-Identifier: BSD-2-Clause */
/* Reading results.jsonl (see read.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read.h"

int records_scan(const char *dir, records_fn fn, void *ctx, struct records_scan_info *si)
{
	size_t plen = strlen(dir) + sizeof("/results.jsonl");
	char *p = malloc(plen), *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f;
	long lineno = 0;
	int rc = 0;

	memset(si, 0, sizeof(*si));
	if (!p)
		return -ENOMEM;
	snprintf(p, plen, "%s/results.jsonl", dir);
	f = fopen(p, "r");
	free(p);
	if (!f)
		return -errno;
	while (!rc && (n = getline(&line, &cap, f)) > 0) {
		json_t *rec;

		lineno++;
		if (line[n - 1] != '\n') {	/* cut short: only the last line can be */
			si->torn = 1;
			if (!si->bad)
				si->first_bad = lineno;
			break;
		}
		rec = json_loadb(line, (size_t)n, 0, NULL);
		if (!json_is_object(rec)) {
			if (!si->bad++)
				si->first_bad = lineno;
		} else {
			si->nobj++;
			rc = fn(rec, ctx);
		}
		json_decref(rec);
		si->good += n;
	}
	free(line);
	fclose(f);
	return rc;
}

static int append_one(json_t *rec, void *ctx)
{
	return json_array_append((json_t *)ctx, rec) ? -ENOMEM : 0;
}

json_t *records_load_all(const char *dir, long *skipped, long *first_skipped)
{
	json_t *recs = json_array();
	struct records_scan_info si;

	if (!recs || records_scan(dir, append_one, recs, &si)) {
		json_decref(recs);
		return NULL;
	}
	*skipped = si.torn + si.bad;
	if (first_skipped)
		*first_skipped = si.first_bad;
	return recs;
}
