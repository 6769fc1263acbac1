/* SPDX-License-Identifier: BSD-2-Clause */
/* The polarization probe's verdicts in a run's records: see polar.h. */
#include <string.h>

#include "../core/record.h"
#include "polar.h"

json_t *rpolar_brief(json_t *rec)
{
	static const char *const keys[] = {
		"test", "phase", "job", "scope", "src", "dst", "params", "verdict", "evidence", "verdict_reason",
		"likely_cause", "verdict_text", NULL,
	};
	json_t *b = json_object(), *v;
	int i;

	for (i = 0; keys[i]; i++)
		if ((v = json_object_get(rec, keys[i])))
			json_object_set(b, keys[i], v);
	if ((v = record_get(rec, "metrics.paths_used")))
		json_object_set_new(b, "metrics", json_pack("{sO}", "paths_used", v));
	if ((v = record_get(rec, "trace.paths")))
		json_object_set_new(b, "trace", json_pack("{sO}", "paths", v));
	return b;
}

json_t *rpolar_deciding(json_t *recs)
{
	json_t *swept = json_object(), *out = json_array(), *rec;
	size_t i;

	json_array_foreach(recs, i, rec)	/* the jobs that have a sweep's record */
		if (!strcmp(record_str(rec, "scope", ""), "sweep") && record_str(rec, "job", NULL))
			json_object_set_new(swept, record_str(rec, "job", ""), json_true());
	json_array_foreach(recs, i, rec) {
		const char *job = record_str(rec, "job", NULL), *scope = record_str(rec, "scope", "");

		if (!record_str(rec, "verdict", NULL) || strcmp(record_str(rec, "test", "polarization"), "polarization"))
			continue;
		if (!strcmp(scope, "sweep") || !job || !json_object_get(swept, job))
			json_array_append(out, rec);
	}
	json_decref(swept);
	return out;
}

void rpolar_count(json_t *deciding, struct rpolar_counts *n)
{
	json_t *rec;
	size_t i;

	memset(n, 0, sizeof(*n));
	json_array_foreach(deciding, i, rec) {
		const char *v = record_str(rec, "verdict", "");

		n->probes++;
		if (!strcmp(v, "polarized"))
			n->polarized++;
		else if (!strcmp(v, "not polarized"))
			n->not_polarized++;
		else if (!strcmp(v, "inconclusive"))
			n->inconclusive++;
		else
			n->unknown++;
	}
}

void rpolar_who(json_t *rec, char *buf, size_t len)
{
	int rail = record_int(rec, "src.rail", -1, 0, FS_MAX_RAILS - 1);
	int plane = record_int(rec, "src.plane", 0, 0, FS_MAX_PLANES - 1);
	size_t off = (size_t)snprintf(buf, len, "%s -> %s", record_str(rec, "src.node", record_str(rec, "src.ip", "?")),
				      record_str(rec, "dst.node", record_str(rec, "dst.ip", "?")));

	if (rail >= 0 && off < len)
		off += (size_t)snprintf(buf + off, len - off, " rail %d", rail);
	if (rail >= 0 && plane > 0 && off < len)
		snprintf(buf + off, len - off, " plane %d", plane);
}

void rpolar_print(FILE *f, json_t *deciding)
{
	struct rpolar_counts n;
	json_t *rec;
	size_t i;
	char who[300];

	rpolar_count(deciding, &n);
	if (!n.probes)
		return;
	json_array_foreach(deciding, i, rec) {
		const char *phase = record_str(rec, "phase", NULL);

		rpolar_who(rec, who, sizeof(who));
		fprintf(f, "polarization: %s%s%s%s: %s\n", phase ? "[" : "", phase ? phase : "", phase ? "] " : "", who,
			record_str(rec, "verdict_text", record_str(rec, "verdict", "?")));
	}
	fprintf(f, "polarization: %d probe%s: %d polarized, %d not polarized, %d without a verdict", n.probes,
		n.probes == 1 ? "" : "s", n.polarized, n.not_polarized, n.inconclusive);
	if (n.unknown)
		fprintf(f, ", %d not judged (no number of paths)", n.unknown);
	fputc('\n', f);
}

json_t *rpolar_json(json_t *deciding)
{
	struct rpolar_counts n;
	json_t *v = json_array(), *rec;
	size_t i;

	rpolar_count(deciding, &n);
	if (!n.probes) {
		json_decref(v);
		return NULL;
	}
	json_array_foreach(deciding, i, rec)
		json_array_append_new(v, json_pack("{sO?,sO?,sO?,sO?,sO?,sO?,sO?,sO?,sO?,sO?}",
			"phase", json_object_get(rec, "phase"), "job", json_object_get(rec, "job"),
			"src", record_get(rec, "src.node"), "dst", record_get(rec, "dst.node"),
			"rail", record_get(rec, "src.rail"), "plane", record_get(rec, "src.plane"),
			"verdict", json_object_get(rec, "verdict"), "evidence", json_object_get(rec, "evidence"),
			"verdict_reason", json_object_get(rec, "verdict_reason"),
			"text", json_object_get(rec, "verdict_text")));
	return json_pack("{si,si,si,si,si,so}", "probes", n.probes, "polarized", n.polarized, "not_polarized",
			 n.not_polarized, "inconclusive", n.inconclusive, "unknown", n.unknown, "verdicts", v);
}
