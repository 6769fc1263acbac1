/* SPDX-License-Identifier: BSD-2-Clause */
/* Reading results.jsonl (see read.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read.h"

int records_scan_from(const char *dir, off_t from, records_fn fn, void *ctx, struct records_scan_info *si)
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
	if (from && fseeko(f, from, SEEK_SET)) {
		rc = -errno;
		fclose(f);
		return rc;
	}
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

int records_scan(const char *dir, records_fn fn, void *ctx, struct records_scan_info *si)
{
	return records_scan_from(dir, 0, fn, ctx, si);
}
