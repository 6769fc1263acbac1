/* SPDX-License-Identifier: BSD-2-Clause */
/* fabscope topo check and topo discover (judge.h). */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../core/names.h"
#include "../topology/check.h"
#include "../topology/verify.h"
#include "judge.h"

/* one observation file into s */
static int obs_load(struct topo_obsset *s, const char *path)
{
	json_error_t jerr;
	json_t *doc;
	FILE *f = fopen(path, "re");
	int rc;

	if (!f)
		return fs_err_read("observation", path, errno);
	doc = json_loadf(f, JSON_REJECT_DUPLICATES, &jerr);
	fclose(f);
	if (!doc)
		return fs_err_usage("%s:%d: not JSON (%s): give what 'fabscope topo show --json' writes", path,
				    jerr.line, jerr.text);
	rc = topo_obs_add_json(s, doc, path);
	json_decref(doc);
	return rc;
}

/* the design's ports of node that are interfaces here (the others are not-seen) */
static int design_ifaces(const struct topo *t, const struct discover_opts *o, const char *node, const char ***out,
			 int *n, int *in_design)
{
	size_t i;

	*out = fs_reallocarray(NULL, t->nln + 1, sizeof(**out));
	*n = *in_design = 0;
	if (!*out)
		return fs_err_env("out of memory");
	for (i = 0; i < t->nln; i++) {
		const struct topo_link *l = &t->ln[i];
		char path[700];

		if (l->a.sw >= 0 || strcmp(l->a.dev, node))
			continue;
		(*in_design)++;
		snprintf(path, sizeof(path), "%s/class/net/%s", o->sysfs, l->a.port);
		if (!access(path, F_OK))
			(*out)[(*n)++] = l->a.port;
	}
	return 0;
}

/* this host observed now, as the design's node o->node (default: the host name) */
static int obs_here(const struct topo *t, const struct discover_opts *o, struct topo_obsset *s)
{
	char host[256] = "";
	struct discover_opts here = *o;
	const char **ifaces;
	json_t *doc;
	int n, in_design, rc;

	if (!here.node) {
		gethostname(host, sizeof(host) - 1);
		here.node = host;
	}
	if ((rc = design_ifaces(t, &here, here.node, &ifaces, &n, &in_design)))
		return rc;
	if (!in_design) {
		free(ifaces);
		return fs_err_usage("%s has no node '%s': give --node NAME (this host's name in the design), or "
				    "the observations (topo show --json) to judge", t->path, here.node);
	}
	if (!n) {	/* nothing to observe: every port of the design is missing here */
		free(ifaces);
		doc = json_pack("{ss,ss,ss,sf,s[]}", "schema", "fabscope.topo-show/1", "node", here.node, "source",
				here.source, "listen_s", here.listen_s, "ports");
	} else {
		rc = topo_observe(&here, ifaces, n, 0, &doc);
		free(ifaces);
		if (rc)
			return rc;
	}
	rc = topo_obs_add_json(s, doc, "this host's observation");
	json_decref(doc);
	return rc;
}

/* observed devices that the design has (*judged: hosts, and switches whose LLDP view was given); a
 * warning per one it does not have */
static int count_nodes(const struct topo *t, const struct topo_obsset *s, struct topo_findings *fs, size_t *judged)
{
	const char **dn = fs_reallocarray(NULL, 2 * t->nln + 1, sizeof(*dn));
	size_t i, n = 0;
	int oom = 0;

	*judged = 0;
	if (!dn)
		return fs_err_env("out of memory");
	for (i = 0; i < t->nln; i++) {
		dn[n++] = t->ln[i].a.dev;
		dn[n++] = t->ln[i].b.dev;
	}
	qsort(dn, n, sizeof(*dn), fs_name_pcmp);
	for (i = 0; i < s->n; i++) {	/* s is sorted by node */
		const char *node = s->o[i].node;

		if (i && !strcmp(s->o[i - 1].node, node))
			continue;
		if (n && bsearch(&node, dn, n, sizeof(*dn), fs_name_pcmp))
			(*judged)++;
		else
			oom |= topo_finding_add(fs, 0, "unknown-node", 0, "%s was observed but is no device of the "
						"design: its ports are not judged", node) < 0;
	}
	free(dn);
	if (oom)
		return fs_err_env("out of memory");
	topo_findings_sort(fs);
	return 0;
}

static void check_print(const struct topo *t, const struct topo_findings *fs, size_t nodes, size_t ports, int json)
{
	if (json) {
		json_t *doc = json_pack("{ss,ss,si,si,si,si,so}", "schema", "fabscope.topo-verify/1", "intent",
					t->path, "nodes", (int)nodes, "ports", (int)ports, "errors", fs->errors,
					"warnings", (int)fs->n - fs->errors, "findings", topo_findings_json(fs));

		json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(doc);
		return;
	}
	topo_findings_print(fs, t->path, stdout);
	printf("%s: %zu node%s, %zu port%s observed: %d error%s, %d warning%s\n", t->path, nodes,
	       nodes == 1 ? "" : "s", ports, ports == 1 ? "" : "s", fs->errors, fs->errors == 1 ? "" : "s",
	       (int)fs->n - fs->errors, (int)fs->n - fs->errors == 1 ? "" : "s");
}

int topo_cmd_check(const struct topo *t, const struct discover_opts *o, const char *const *obs, int nobs, int json)
{
	struct topo_obsset s = { 0 };
	struct topo_findings fs;
	size_t nodes = 0;
	int i, rc = 0;

	for (i = 0; i < nobs && !rc; i++)
		rc = obs_load(&s, obs[i]);
	if (!rc && !nobs)
		rc = obs_here(t, o, &s);
	if (!rc)
		rc = topo_verify(t, &s, &fs);
	if (rc) {
		topo_obs_release(&s);
		return rc;
	}
	if ((rc = count_nodes(t, &s, &fs, &nodes)) == 0 && !nodes)
		rc = fs_err_usage("no observed node is a node of %s (the observations name %s%s): nothing to judge",
				  t->path, s.n ? s.o[0].node : "no port", s.n > 1 ? ", ..." : "");
	if (!rc) {
		check_print(t, &fs, nodes, s.n, json);
		rc = fs.errors ? -FS_EXIT_CHECK : 0;
	}
	topo_findings_release(&fs);
	topo_obs_release(&s);
	return rc;
}

/* ---- discover ---- */

/* a port that heard a neighbour */
struct seen {
	const char *node, *iface, *sys, *port;
	long speed_mbps;
	int rail;
};

static int seen_sys_cmp(const void *a, const void *b)
{
	const struct seen *x = a, *y = b;
	int c = fs_name_cmp(x->sys, y->sys);

	return c ? c : x->rail - y->rail;
}

/* rails by interface name: the index of each port's name among the sorted distinct names */
static int rails_by_name(struct seen *v, size_t n)
{
	const char **names = fs_reallocarray(NULL, n + 1, sizeof(*names));
	size_t i, k = 0;

	if (!names)
		return -1;
	for (i = 0; i < n; i++)
		names[i] = v[i].iface;
	qsort(names, n, sizeof(*names), fs_name_pcmp);
	for (i = 0; i < n; i++)
		if (!i || strcmp(names[i], names[k - 1]))
			names[k++] = names[i];
	for (i = 0; i < n; i++) {	/* past rail 63 (the format's last): no rail */
		v[i].rail = (int)((const char **)bsearch(&v[i].iface, names, k, sizeof(*names), fs_name_pcmp) - names);
		if (v[i].rail > 63)
			v[i].rail = -1;
	}
	free(names);
	return 0;
}

/* each leaf with the rail most of its ports have (v sorted by sys, rail), then every cable */
static int discover_build(struct topo *t, struct seen *v, size_t n)
{
	size_t i, j, start, best, bestn, run;
	int rc = 0;

	for (start = 0; start < n && !rc; start = i) {
		best = start, bestn = 0, run = 0;
		for (i = start; i < n && !strcmp(v[i].sys, v[start].sys); i++) {
			run = i > start && v[i].rail == v[i - 1].rail ? run + 1 : 1;
			if (run > bestn)
				bestn = run, best = i;
		}
		rc = topo_add_switch(t, v[start].sys, TOPO_LEAF, NULL, -1, v[best].rail, 0);
		for (j = start; j < i && !rc; j++)	/* a port off its leaf's rail keeps its own */
			rc = topo_add_link(t, v[j].node, v[j].iface, v[j].sys, v[j].port,
					   v[j].rail == v[best].rail ? -1 : v[j].rail, -1, v[j].speed_mbps / 1000.0, 0);
	}
	return rc ? rc : topo_finish(t);
}

/* the ports with a neighbour whose names the format takes; the others said as comments to f */
static size_t discover_seen(const struct topo_obsset *s, struct seen *v, FILE *f)
{
	size_t i, n = 0;

	for (i = 0; i < s->n; i++) {
		const struct topo_obs *o = &s->o[i];

		if (i && !strcmp(o->node, s->o[i - 1].node) && !strcmp(o->iface, s->o[i - 1].iface))
			continue;	/* a node observed twice: its first observation */
		/* (o->node and o->iface are names: topo_obs_add_port took no other) */
		if (!o->nsys)
			fprintf(f, "# %s:%s: no neighbour heard\n", o->node, o->iface);
		else if (!topo_name_ok(o->node) || !topo_name_ok(o->iface) || !topo_name_ok(o->nsys) ||
			 !topo_name_ok(o->nport))
			fprintf(f, "# %s:%s: a neighbour whose names this format does not take\n", o->node, o->iface);
		else
			v[n++] = (struct seen){ o->node, o->iface, o->nsys, o->nport, o->speed_mbps, -1 };
	}
	return n;
}

int topo_cmd_discover(const char *const *obs, int nobs, FILE *f)
{
	struct topo_obsset s = { 0 };
	struct seen *v = NULL;
	struct topo t;
	size_t n = 0;
	int i, rc = 0;

	topo_init(&t);
	for (i = 0; i < nobs && !rc; i++)
		rc = obs_load(&s, obs[i]);
	if (!rc)
		topo_obs_sort(&s);
	if (!rc && !(v = fs_reallocarray(NULL, s.n + 1, sizeof(*v))))
		rc = fs_err_env("out of memory");
	if (!rc) {
		fprintf(f, "# written by fabscope topo discover from %d observation%s: a leaf per LLDP neighbour, a\n"
			"# rail per interface name; the switches above the leaves are not seen from the hosts\n",
			nobs, nobs == 1 ? "" : "s");
		n = discover_seen(&s, v, f);
		if (!n)
			rc = fs_err_usage("no port of the observations heard a neighbour: nothing to write");
	}
	if (!rc && rails_by_name(v, n))
		rc = fs_err_env("out of memory");
	if (!rc) {
		qsort(v, n, sizeof(*v), seen_sys_cmp);
		rc = discover_build(&t, v, n);
	}
	if (!rc)
		rc = topo_write(&t, f);
	free(v);
	topo_release(&t);
	topo_obs_release(&s);
	return rc;
}
