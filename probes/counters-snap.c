/* SPDX-License-Identifier: BSD-2-Clause */
/* Counter snapshot files, written and read in the metrics' names: see counters.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "counters-int.h"

/* ---- snapshot files ---- */

int ctr_snapshot_write(FILE *f, const struct ctr_snapshot *s)
{
	char name[48];
	int i;

	fprintf(f, "fabscope-counters 1\ntime %.9f\n", s->t);
	for (i = 0; i < CTR_NMETRICS; i++)
		if (s->have[i])
			fprintf(f, "%s %" PRIu64 "\n", ctr_metric_name(i, name, sizeof(name)), s->v[i]);
	return ferror(f) ? -FS_EXIT_ENV : 0;
}

int ctr_snapshot_read(const char *path, struct ctr_snapshot *s)
{
	unsigned long lineno = 0;
	char line[256], tmp[48];
	int version = 0, have_time = 0, rc = 0;
	FILE *f;

	memset(s, 0, sizeof(*s));
	f = fopen(path, "re");
	if (!f)
		return fs_err_read("counter snapshot", path, errno);
	while (fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);
		char *key = line, *val;
		int idx;

		lineno++;
		if (len && line[len - 1] == '\n')
			line[--len] = 0;
		else if (!feof(f)) {
			rc = fs_err_usage("%s:%lu: line too long", path, lineno);
			goto out;
		}
		if (!len || line[0] == '#')
			continue;
		val = strchr(line, ' ');
		if (!val) {
			rc = fs_err_usage("%s:%lu: malformed line '%s' (want 'name value')",
					  path, lineno, ctr_shown(line, tmp, sizeof(tmp)));
			goto out;
		}
		*val++ = 0;
		if (!version) {
			if (strcmp(key, "fabscope-counters") || strcmp(val, "1")) {
				rc = fs_err_usage("%s: not a counter snapshot (version 1)", path);
				goto out;
			}
			version = 1;
			continue;
		}
		if (!strcmp(key, "time")) {
			char *end;

			errno = 0;
			s->t = strtod(val, &end);
			if (errno || end == val || *end || !(s->t >= 0)) {
				rc = fs_err_usage("%s:%lu: bad time '%s'", path, lineno,
						  ctr_shown(val, tmp, sizeof(tmp)));
				goto out;
			}
			have_time = 1;
			continue;
		}
		idx = ctr_metric_parse(key);
		if (idx < 0) {
			rc = fs_err_usage("%s:%lu: unknown metric '%s'", path, lineno,
					  ctr_shown(key, tmp, sizeof(tmp)));
			goto out;
		}
		if (s->have[idx] || ctr_parse_u64(val, &s->v[idx])) {
			rc = fs_err_usage("%s:%lu: %s of '%s'", path, lineno,
					  s->have[idx] ? "second value" : "bad value",
					  ctr_shown(key, tmp, sizeof(tmp)));
			goto out;
		}
		s->have[idx] = 1;
	}
	if (!version || !have_time)
		rc = fs_err_usage("%s: %s", path, !version ? "empty, not a counter snapshot" :
				  "no time line");
out:
	fclose(f);
	return rc;
}
