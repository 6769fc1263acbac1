/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The probe counters' increases over an interval from a Prometheus
 * server's HTTP query API: see promql.h.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../report/push.h"
#include "promql.h"
#include "promtext.h"

/* text percent-encoded for a URL's query (unreserved characters kept) into out */
static void pct(char *out, size_t len, const char *s)
{
	size_t o = 0;

	for (; *s && o + 4 < len; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("-._~", c))
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, len - o, "%%%02X", c);
	}
	out[o] = 0;
}

/* one result of the vector: its labels and value as a sample of name, into the scrape */
static int one_result(struct scrape *s, const char *name, json_t *r, long i, long *bad)
{
	json_t *metric = json_object_get(r, "metric"), *value = json_object_get(r, "value"), *v;
	struct prom_sample m = { .name = name, .line = i + 1 };
	const char *key, *text;
	char *end;
	int rc;

	if (!json_is_object(metric) || !json_is_array(value) || !json_is_string(json_array_get(value, 1))) {
		(*bad)++;
		return 0;
	}
	json_object_foreach(metric, key, v) {
		if (!strcmp(key, "__name__") || !json_is_string(v) || m.nlabels == PROM_MAX_LABELS)
			continue;
		m.label[m.nlabels++] = (struct prom_label){ key, json_string_value(v) };
	}
	text = json_string_value(json_array_get(value, 1));
	m.value = strtod(text, &end);
	if (!*text || *end) {
		(*bad)++;
		return 0;
	}
	if (m.value != m.value)	/* NaN: no samples in the window */
		return 0;
	rc = scrape_sample(s, &m);
	if (rc == 1)
		(*bad)++;
	return rc == 2 ? -1 : 0;
}

static int query(struct scrape *s, const char *base, const char *expr, const char *name, double at,
		 const struct promql_opts *o)
{
	char q[1024], url[4096], why[160] = "";
	json_t *doc = NULL, *res;
	json_error_t je;
	size_t len, i;
	long bad = 0;
	char *body;
	int rc;

	pct(q, sizeof(q), expr);
	if (at > 0)
		snprintf(url, sizeof(url), "%s/api/v1/query?query=%s&time=%.3f", base, q, at);
	else
		snprintf(url, sizeof(url), "%s/api/v1/query?query=%s", base, q);
	if ((rc = push_fetch(url, o->max_body, o->timeout_ms, &body, &len)))
		return rc;
	doc = json_loadb(body, len, 0, &je);
	free(body);
	res = json_object_get(json_object_get(doc, "data"), "result");
	if (!doc)
		snprintf(why, sizeof(why), "not JSON (%.100s)", je.text);
	else if (strcmp(json_string_value(json_object_get(doc, "status")) ?: "", "success"))
		snprintf(why, sizeof(why), "status %s: %.100s", json_string_value(json_object_get(doc, "status")) ?: "none",
			 json_string_value(json_object_get(doc, "error")) ?: "");
	else if (strcmp(json_string_value(json_object_get(json_object_get(doc, "data"), "resultType")) ?: "", "vector") ||
		 !json_is_array(res))
		snprintf(why, sizeof(why), "not an instant vector");
	if (*why) {
		json_decref(doc);
		return fs_err_peer("%s: %s answered %s; give the Prometheus server's base URL (http://HOST:9090)", expr,
				   base, why);
	}
	for (i = 0; i < json_array_size(res); i++)
		if (one_result(s, name, json_array_get(res, i), (long)i, &bad)) {
			json_decref(doc);
			return fs_err_env("out of memory reading %s", expr);
		}
	if (bad)
		fs_warn("%s: %ld of %zu series without the probe labels or a number; left out", expr, bad,
			json_array_size(res));
	json_decref(doc);
	return 0;
}

int promql_interval(struct scrape *s, const char *base, double at, const struct promql_opts *o)
{
	static const char *const names[] = { "fabscope_probe_sent_total", "fabscope_probe_lost_total",
					     "fabscope_probe_rtt_seconds_count", "fabscope_probe_rtt_seconds_bucket" };
	char expr[256], b[2048];
	size_t n = strlen(base);
	int i, rc;

	while (n && base[n - 1] == '/')
		n--;
	snprintf(b, sizeof(b), "%.*s", (int)n, base);
	scrape_begin(s);
	s->increases = 1;
	for (i = 0; i < (s->slow_s > 0 ? 4 : 2); i++) {
		/* the range a whole number of seconds: Prometheus' duration syntax */
		snprintf(expr, sizeof(expr), "increase(%s[%lds])", names[i], (long)(o->window_s + 0.5));
		s->source = expr;
		rc = query(s, b, expr, names[i], at, o);
		s->source = NULL;
		if (rc)
			return rc;
	}
	return 0;
}
