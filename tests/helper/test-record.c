/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tool record, get, labels, lat-us, derive, render: core/record.c, and
 * records through core/output.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../core/options.h"
#include "../../core/output.h"
#include "../../core/record.h"
#include "../../core/stats.h"
#include "test-tool.h"

/* Set a dotted path ("metrics.lat_us.p50") to v, making objects on the way. */
static int set_path(json_t *rec, const char *path, json_t *v)
{
	const char *dot;

	while ((dot = strchr(path, '.'))) {
		char key[64];
		json_t *next;

		if ((size_t)(dot - path) >= sizeof(key))
			goto bad;
		memcpy(key, path, (size_t)(dot - path));
		key[dot - path] = 0;
		next = json_object_get(rec, key);
		if (!next) {
			next = json_object();
			json_object_set_new(rec, key, next);
		}
		if (!json_is_object(next))
			goto bad;
		rec = next;
		path = dot + 1;
	}
	if (!json_object_set_new(rec, path, v))
		return 0;
	v = NULL;
bad:
	json_decref(v);
	return -1;
}

int tool_record(int argc, const char **argv)
{
	json_t *rec;
	int i;

	if (argc < 2)
		return usage_error("usage: test-tool record TEST [PATH=JSON...]");
	rec = record_new(argv[1]);
	if (!rec)
		return check_failed("record_new('%s') returned NULL", argv[1]);
	for (i = 2; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		char path[128];
		json_t *v;

		if (!eq || (size_t)(eq - argv[i]) >= sizeof(path)) {
			json_decref(rec);
			return usage_error("'%s' is not PATH=JSON", argv[i]);
		}
		memcpy(path, argv[i], (size_t)(eq - argv[i]));
		path[eq - argv[i]] = 0;
		v = json_loads(eq + 1, JSON_DECODE_ANY, NULL);
		if (!v || set_path(rec, path, v)) {
			json_decref(rec);
			return usage_error("cannot set '%s'", argv[i]);
		}
	}
	tool_print_json(rec);
	json_decref(rec);
	return 0;
}

static json_t *load_arg(const char *text)
{
	json_error_t err;
	json_t *j = json_loads(text, 0, &err);

	if (!j)
		fs_err_usage("invalid JSON '%s': %s", text, err.text);
	return j;
}

int tool_get(int argc, const char **argv)
{
	json_t *rec;
	int i;

	if (argc < 2)
		return usage_error("usage: test-tool get JSON PATH...");
	rec = load_arg(argv[1]);
	if (!rec)
		return FS_EXIT_USAGE;
	for (i = 2; i < argc; i++) {
		json_t *v = record_get(rec, argv[i]);
		char *s = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;

		printf("%s %s num=%.15g str=%s\n", argv[i], s ? s : "(absent)",
		       record_num(rec, argv[i], -1), record_str(rec, argv[i], "(none)"));
		free(s);
	}
	json_decref(rec);
	return 0;
}

int tool_labels(int argc, const char **argv)
{
	struct opt_list l = { argv + 1, argc - 1 };
	const char *bad = NULL;
	json_t *o = NULL;

	if (record_labels(&l, &o, &bad))
		return check_failed("bad label '%s'", bad ? bad : "(null)");
	tool_print_json(o);
	json_decref(o);
	return 0;
}

int tool_lat_us(int argc, const char **argv)
{
	struct tool_samples smp = { 0 };
	struct stats s;
	json_t *j;
	size_t k;
	int rc;

	if (argc > 1)
		return usage_error("usage: test-tool lat-us <samples");
	if (stats_init(&s))
		return -fs_err_env("out of memory");
	rc = tool_read_samples(stdin, &smp);
	if (!rc) {
		for (k = 0; k < smp.n; k++)
			stats_add(&s, smp.v[k]);
		j = record_lat_us(&s);
		tool_print_json(j);
		json_decref(j);
	}
	stats_release(&s);
	tool_samples_release(&smp);
	return rc;
}

int tool_derive(int argc, const char **argv)
{
	json_t *tmpl, *r;

	if (argc != 3)
		return usage_error("usage: test-tool derive JSON SCOPE");
	tmpl = load_arg(argv[1]);
	if (!tmpl)
		return FS_EXIT_USAGE;
	r = record_derive(tmpl, argv[2]);
	/* what bw.c does to each per-flow record */
	if (json_is_object(json_object_get(r, "src")))
		json_object_set_new(json_object_get(r, "src"), "port", json_integer(1));
	tool_print_json(r);
	tool_print_json(tmpl);
	json_decref(r);
	json_decref(tmpl);
	return 0;
}

int tool_render(int argc, const char **argv)
{
	const char *fmt = NULL, *file = NULL, *comment = NULL;
	json_error_t err;
	json_t *recs, *rec;
	struct out o;
	size_t idx;
	int i, gbits = 0, extra = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--gbits"))
			gbits = 1;
		else if (!strncmp(argv[i], "--comment=", 10))
			comment = argv[i] + 10;
		else if (!fmt)
			fmt = argv[i];
		else if (!file)
			file = argv[i];
		else
			extra = 1;
	}
	if (extra || !fmt || !file || (strcmp(fmt, "text") && strcmp(fmt, "json")))
		return usage_error("usage: test-tool render text|json FILE [--gbits] [--comment=TEXT]");
	recs = json_load_file(file, 0, &err);
	if (!recs)
		return usage_error("unable to read '%s': %s", file, err.text);
	if (!json_is_array(recs)) {
		json_decref(recs);
		return usage_error("'%s' does not hold a JSON array", file);
	}
	out_init(&o, strcmp(fmt, "json") ? OUT_TEXT : OUT_JSON, stdout);
	o.gbits = gbits;
	if (comment)
		out_comment(&o, "%s", comment);
	json_array_foreach(recs, idx, rec)
		out_record(&o, rec);
	out_finish(&o);
	json_decref(recs);
	return 0;
}
