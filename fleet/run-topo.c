/* SPDX-License-Identifier: BSD-2-Clause */
/* A run's cabling against its intended topology (run-topo.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../core/error.h"
#include "../core/record.h"
#include "../records/read.h"
#include "../topology/check.h"
#include "../topology/verify.h"
#include "run-topo.h"

struct scan {
	struct topo_obsset s;
	int rc;
	long line;
};

static int one(json_t *rec, void *ctx)
{
	struct scan *sc = ctx;
	char what[64];

	sc->line++;
	if (strcmp(record_str(rec, "test", ""), "topology") || strcmp(record_str(rec, "status", ""), "ok"))
		return 0;
	snprintf(what, sizeof(what), "results.jsonl line %ld", sc->line);
	sc->rc = topo_obs_add_port(&sc->s, record_str(rec, "src.node", NULL), json_object_get(rec, "port"), what);
	return sc->rc == -FS_EXIT_ENV ? 1 : 0;	/* a bad record is said and left out */
}

int run_topo_judge(const char *dir, const struct topo *t, json_t *run, FILE *f, int *errors)
{
	struct scan sc = { .rc = 0 };
	struct records_scan_info si;
	struct topo_findings fs;
	size_t i;
	int rc = records_scan(dir, one, &sc, &si);

	*errors = -1;
	if (rc < 0 && rc != -ENOENT)
		rc = fs_err_env("cannot read %s/results.jsonl: %s", dir, records_strerror(rc));
	else
		rc = sc.rc == -FS_EXIT_ENV ? sc.rc : 0;
	if (rc || !sc.s.n) {
		topo_obs_release(&sc.s);
		return rc;
	}
	if ((rc = topo_verify(t, &sc.s, &fs))) {
		topo_obs_release(&sc.s);
		return rc;
	}
	for (i = 0; i < fs.n; i++)
		fprintf(f, "cabling: %s:%d: %s: %s\n", t->path, fs.f[i].line, fs.f[i].error ? "error" : "warning",
			fs.f[i].text);
	fprintf(f, "cabling: %s: %zu port%s observed: %d error%s, %d warning%s\n", t->path, sc.s.n,
		sc.s.n == 1 ? "" : "s", fs.errors, fs.errors == 1 ? "" : "s", (int)fs.n - fs.errors,
		(int)fs.n - fs.errors == 1 ? "" : "s");
	json_object_set_new(run, "cabling", json_pack("{ss,si,si,si,so}", "intent", t->path, "ports", (int)sc.s.n,
						      "errors", fs.errors, "warnings", (int)fs.n - fs.errors,
						      "findings", topo_findings_json(&fs)));
	*errors = fs.errors;
	topo_findings_release(&fs);
	topo_obs_release(&sc.s);
	return 0;
}
