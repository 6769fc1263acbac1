/* SPDX-License-Identifier: BSD-2-Clause */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "record.h"
#include "version.h"

json_t *record_new(const char *test)
{
	char now[40];

	clock_iso8601(now, sizeof(now));
	return json_pack("{s:s, s:s, s:s, s:s, s:s}",
			 "schema", RECORD_SCHEMA, "tool", "fabscope",
			 "version", FABSCOPE_VERSION, "time", now,
			 "test", test);
}

/* One piece "k=v" into o: 0, or -1 (no '=', an empty or too long key,
 * not UTF-8). */
static int label_piece(json_t *o, const char *s, size_t len)
{
	const char *eq = memchr(s, '=', len);
	char key[128];

	if (!eq || eq == s || (size_t)(eq - s) >= sizeof(key))
		return -1;
	memcpy(key, s, (size_t)(eq - s));
	key[eq - s] = 0;
	/* (jansson takes UTF-8 only: json_stringn refuses what is not) */
	return json_object_set_new(o, key, json_stringn(eq + 1, len - (size_t)(eq - s) - 1));
}

int record_label_add(json_t *o, const char *text)
{
	const char *p = text;

	for (;;) {
		size_t n = strcspn(p, ",");

		if (label_piece(o, p, n))
			return -1;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

int record_labels(const struct opt_list *l, json_t **out, const char **bad)
{
	json_t *o = json_object();
	int i;

	for (i = 0; l && i < l->n; i++)
		if (record_label_add(o, l->v[i])) {
			*bad = l->v[i];
			json_decref(o);
			return -1;
		}
	*out = o;
	return 0;
}

static json_t *us(double ns)
{
	return json_real(ns / 1000.0);
}

json_t *record_lat_us(const struct stats *s)
{
	json_t *o = json_object();

	json_object_set_new(o, "min", us(s->n ? (double)s->min : 0));
	json_object_set_new(o, "p50", us(stats_percentile(s, 50)));
	json_object_set_new(o, "p90", us(stats_percentile(s, 90)));
	json_object_set_new(o, "p99", us(stats_percentile(s, 99)));
	json_object_set_new(o, "p999", us(stats_percentile(s, 99.9)));
	json_object_set_new(o, "max", us(s->n ? (double)s->max : 0));
	json_object_set_new(o, "avg", us(stats_mean(s)));
	json_object_set_new(o, "stdev", us(stats_stdev(s)));
	return o;
}

json_t *record_derive(json_t *tmpl, const char *scope)
{
	json_t *r = json_deep_copy(tmpl);

	json_object_set_new(r, "scope", json_string(scope));
	return r;
}

json_t *record_get(json_t *rec, const char *path)
{
	char key[64];

	while (rec && *path) {
		size_t n = strcspn(path, ".");

		if (n >= sizeof(key))
			return NULL;
		memcpy(key, path, n);
		key[n] = 0;
		if (json_is_array(rec))	/* "endpoints.0.rail": an index, digits only */
			rec = n && n < 10 && strspn(key, "0123456789") == n ?
			      json_array_get(rec, strtoul(key, NULL, 10)) : NULL;
		else
			rec = json_object_get(rec, key);
		path += n;
		if (*path == '.')
			path++;
	}
	return rec;
}

double record_num(json_t *rec, const char *path, double dflt)
{
	json_t *v = record_get(rec, path);

	return json_is_number(v) ? json_number_value(v) : dflt;
}

int record_int(json_t *rec, const char *path, int dflt, int lo, int hi)
{
	double v = record_num(rec, path, NAN);

	return v >= lo && v <= hi && v == floor(v) ? (int)v : dflt;
}

int record_lane(json_t *rec, int *rail, int *plane)
{
	*rail = record_int(rec, "src.rail", -1, 0, FS_MAX_RAILS - 1);
	*plane = record_int(rec, "src.plane", -1, 0, FS_MAX_PLANES - 1);
	if (*rail < 0 && !record_get(rec, "src.rail"))
		*rail = 0;
	if (*plane < 0 && !record_get(rec, "src.plane"))
		*plane = 0;
	return *rail < 0 || *plane < 0 ? -1 : 0;
}

const char *record_str(json_t *rec, const char *path, const char *dflt)
{
	json_t *v = record_get(rec, path);

	return json_is_string(v) ? json_string_value(v) : dflt;
}
