/* SPDX-License-Identifier: BSD-2-Clause */
/* A fabric as the hosts see it, against its intended topology (verify.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../core/names.h"
#include "verify.h"

static const char *const set_names[TOPO_NSET] = TOPO_SETTINGS;

/* ---- observations ---- */

static void obs_free(struct topo_obs *o)
{
	int k;

	free(o->node);
	free(o->iface);
	free(o->nsys);
	free(o->nport);
	for (k = 0; k < TOPO_NSET; k++)
		free(o->set[k]);
}

void topo_obs_release(struct topo_obsset *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		obs_free(&s->o[i]);
	free(s->o);
	memset(s, 0, sizeof(*s));
}

/* a value as text: a string, a number, an array of numbers ("3,5"); NULL
 * for null or absent (unknown) */
static char *value_text(json_t *v)
{
	char buf[256];
	size_t i, len = 0;
	json_t *e;

	if (json_is_string(v))
		return strdup(json_string_value(v));
	if (json_is_integer(v)) {
		snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
		return strdup(buf);
	}
	if (json_is_real(v)) {
		snprintf(buf, sizeof(buf), "%g", json_real_value(v));
		return strdup(buf);
	}
	if (!json_is_array(v))
		return NULL;
	buf[0] = 0;
	json_array_foreach(v, i, e) {
		if (!json_is_integer(e) || len + 24 > sizeof(buf))
			return NULL;
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%lld", i ? "," : "",
					(long long)json_integer_value(e));
	}
	return strdup(json_array_size(v) ? buf : "none");
}

static int tri(json_t *v)
{
	return json_is_boolean(v) ? json_is_true(v) : -1;
}

static int obs_port(struct topo_obs *o, const char *node, json_t *p)
{
	const char *iface = json_string_value(json_object_get(p, "iface"));
	const char *state = json_string_value(json_object_get(p, "state"));
	json_t *nb = json_object_get(p, "neighbor"), *set = json_object_get(p, "settings"), *v;
	int k;

	memset(o, 0, sizeof(*o));
	if (!iface || !*iface)
		return 1;
	o->up = !state || !*state || !strcmp(state, "unknown") ? -1 : !strcmp(state, "up");
	o->carrier = tri(json_object_get(p, "carrier"));
	v = json_object_get(p, "speed_mbps");
	o->speed_mbps = json_is_integer(v) && json_integer_value(v) > 0 ? (long)json_integer_value(v) : 0;
	o->listened = !json_is_false(json_object_get(p, "listened"));
	if (!(o->node = strdup(node)) || !(o->iface = strdup(iface)))
		return -1;
	if (json_is_object(nb)) {
		const char *sys = json_string_value(json_object_get(nb, "sys_name"));
		const char *port = json_string_value(json_object_get(nb, "port"));

		if (!(o->nsys = strdup(sys ? sys : "")) || !(o->nport = strdup(port ? port : "")))
			return -1;
	}
	for (k = 0; k < TOPO_NSET; k++) {
		v = k ? json_object_get(set, set_names[k]) : json_object_get(p, "mtu");
		if (v && !json_is_null(v) && !(o->set[k] = value_text(v)))
			return -1;
	}
	return 0;
}

int topo_obs_add_json(struct topo_obsset *s, json_t *doc, const char *what)
{
	const char *schema = json_string_value(json_object_get(doc, "schema"));
	const char *node = json_string_value(json_object_get(doc, "node"));
	json_t *ports = json_object_get(doc, "ports"), *p;
	size_t i;

	if (!schema || strcmp(schema, "fabscope.topo-show/1"))
		return fs_err_usage("%s: not what 'fabscope topo show --json' writes (no schema "
				    "fabscope.topo-show/1)", what);
	if (!node || !*node || !json_is_array(ports))
		return fs_err_usage("%s: no node name or no ports", what);
	json_array_foreach(ports, i, p) {
		char w[600];
		int rc;

		snprintf(w, sizeof(w), "%s: port %zu", what, i + 1);
		if ((rc = topo_obs_add_port(s, node, p, w)))
			return rc;
	}
	return 0;
}

int topo_obs_add_port(struct topo_obsset *s, const char *node, json_t *port, const char *what)
{
	int rc;

	if (!node || !*node)
		return fs_err_usage("%s: no node name", what);
	if (FS_ALLOC_GROW(s->o, s->n + 1, s->alloc))
		return fs_err_env("out of memory reading %s", what);
	rc = obs_port(&s->o[s->n], node, port);
	if (rc < 0) {
		obs_free(&s->o[s->n]);
		return fs_err_env("out of memory reading %s", what);
	}
	if (rc > 0) {
		obs_free(&s->o[s->n]);
		return fs_err_usage("%s has no iface", what);
	}
	s->n++;
	return 0;
}

/* ---- the judgement ---- */

int topo_link_rail(const struct topo *t, const struct topo_link *l)
{
	return l->rail >= 0 ? l->rail : l->b.sw >= 0 ? t->sw[l->b.sw].rail : -1;
}

int topo_link_plane(const struct topo *t, const struct topo_link *l)
{
	return l->plane >= 0 ? l->plane : l->b.sw >= 0 ? t->sw[l->b.sw].plane : -1;
}

static int obs_cmp(const void *a, const void *b)
{
	const struct topo_obs *x = a, *y = b;
	int c = fs_name_cmp(x->node, y->node);

	return c ? c : fs_name_cmp(x->iface, y->iface);
}

void topo_obs_sort(struct topo_obsset *s)
{
	if (s->n > 1)
		qsort(s->o, s->n, sizeof(*s->o), obs_cmp);
}

const struct topo_obs *topo_obs_find(const struct topo_obsset *s, const char *node, const char *iface)
{
	struct topo_obs key = { .node = (char *)node, .iface = (char *)iface };

	return s->n ? bsearch(&key, s->o, s->n, sizeof(*s->o), obs_cmp) : NULL;
}

int topo_obs_has_node(const struct topo_obsset *s, const char *node)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {	/* the first port of node or after it */
		size_t mid = lo + (hi - lo) / 2;

		if (fs_name_cmp(s->o[mid].node, node) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->n && !strcmp(s->o[lo].node, node);
}

/* a switch port of the design and the node cable it is for */
struct swport {
	const char *sw, *port;
	size_t link;
};

static int swport_cmp(const void *a, const void *b)
{
	const struct swport *x = a, *y = b;
	int c = fs_name_cmp(x->sw, y->sw);

	return c ? c : fs_name_cmp(x->port, y->port);
}

struct vfy {
	const struct topo *t;
	struct topo_obsset *s;
	struct topo_findings *out;
	const struct topo_obs **seen;	/* per link: its observation (node cables of observed nodes) */
	struct swport *sp;
	size_t nsp;
	int oom;
};

#define say(v, error, kind, line, ...) ((v)->oom |= topo_finding_add((v)->out, error, kind, line, __VA_ARGS__) < 0)

/* the node cable the design has on switch port sw:port, or -1 */
static long design_at(const struct vfy *v, const char *sw, const char *port)
{
	struct swport key = { sw, port, 0 }, *f;

	f = v->nsp ? bsearch(&key, v->sp, v->nsp, sizeof(*v->sp), swport_cmp) : NULL;
	return f ? (long)f->link : -1;
}

static int reaches(const struct topo_obs *o, const struct topo_end *e)
{
	return o && o->nsys && !strcmp(o->nsys, e->dev) && !strcmp(o->nport, e->port);
}

/* a port that reaches something else than its design says */
static void wrong_neighbour(struct vfy *v, size_t li, char *said)
{
	const struct topo *t = v->t;
	const struct topo_link *l = &t->ln[li];
	const struct topo_obs *o = v->seen[li];
	long other = design_at(v, o->nsys, o->nport);
	int sw = topo_switch_index(t, o->nsys), rail = topo_link_rail(t, l), plane = topo_link_plane(t, l);

	if (other >= 0 && (size_t)other != li && reaches(v->seen[other], &l->b)) {
		const struct topo_link *m = &t->ln[other];

		if (said[other])
			return;
		said[other] = 1;
		say(v, 1, "swap", l->line, "%s:%s and %s:%s are swapped: %s:%s reaches %s port %s and %s:%s reaches "
		    "%s port %s; the design (lines %d and %d) has them the other way round", l->a.dev, l->a.port,
		    m->a.dev, m->a.port, l->a.dev, l->a.port, o->nsys, o->nport, m->a.dev, m->a.port, l->b.dev,
		    l->b.port, l->line, m->line);
		return;
	}
	if (sw < 0) {
		say(v, 1, "miscabled", l->line, "%s:%s reaches %s port %s, a device the design does not have; the "
		    "design says %s port %s", l->a.dev, l->a.port, *o->nsys ? o->nsys : "(no system name)", o->nport,
		    l->b.dev, l->b.port);
		return;
	}
	{
		int orail = other >= 0 ? topo_link_rail(t, &t->ln[other]) : t->sw[sw].rail;
		int oplane = other >= 0 ? topo_link_plane(t, &t->ln[other]) : t->sw[sw].plane;

		if (rail >= 0 && orail >= 0 && rail != orail)
			say(v, 1, "wrong-rail", l->line, "%s:%s (rail %d) reaches %s port %s, on rail %d; the design says "
			    "%s port %s", l->a.dev, l->a.port, rail, o->nsys, o->nport, orail, l->b.dev, l->b.port);
		else if (plane >= 0 && oplane >= 0 && plane != oplane)
			say(v, 1, "wrong-plane", l->line, "%s:%s (plane %d) reaches %s port %s, in plane %d; the design "
			    "says %s port %s", l->a.dev, l->a.port, plane, o->nsys, o->nport, oplane, l->b.dev, l->b.port);
		else
			say(v, 1, "miscabled", l->line, "%s:%s reaches %s port %s%s%s%s; the design says %s port %s",
			    l->a.dev, l->a.port, o->nsys, o->nport, other >= 0 ? " (the design's port for " : "",
			    other >= 0 ? t->ln[other].a.dev : "", other >= 0 ? ")" : "", l->b.dev, l->b.port);
	}
}

/* state, neighbour and speed of every observed node cable */
static void cables(struct vfy *v)
{
	const struct topo *t = v->t;
	char *said = calloc(t->nln + 1, 1);
	size_t i;

	if (!said) {
		v->oom = 1;
		return;
	}
	for (i = 0; i < t->nln; i++) {
		const struct topo_link *l = &t->ln[i];
		const struct topo_obs *o;

		if (l->a.sw >= 0 || l->b.sw < 0 || !topo_obs_has_node(v->s, l->a.dev))
			continue;
		if (!(o = topo_obs_find(v->s, l->a.dev, l->a.port))) {
			say(v, 1, "not-seen", l->line, "%s:%s was not observed on %s: no such interface, or it is not "
			    "configured up (the design cables it to %s port %s)", l->a.dev, l->a.port, l->a.dev,
			    l->b.dev, l->b.port);
			continue;
		}
		v->seen[i] = o;
	}
	for (i = 0; i < t->nln; i++) {
		const struct topo_link *l = &t->ln[i];
		const struct topo_obs *o = v->seen[i];

		if (!o || said[i])
			continue;
		if (o->up == 0 && o->carrier < 0) {	/* (sysfs has no carrier of a port configured down) */
			say(v, 1, "no-link", l->line, "%s:%s is configured down on the host (ip link set %s up), so "
			    "its cable to %s port %s cannot be seen", l->a.dev, l->a.port, l->a.port, l->b.dev,
			    l->b.port);
			continue;
		}
		if (o->up == 0 || o->carrier == 0) {
			say(v, 1, "no-link", l->line, "%s:%s is %s: a cable out, or %s port %s down (the design's "
			    "neighbour)", l->a.dev, l->a.port, o->carrier == 0 ? "without carrier" : "down", l->b.dev,
			    l->b.port);
			continue;
		}
		if (l->speed_gbps > 0 && o->speed_mbps > 0 && o->speed_mbps + 0.5 < l->speed_gbps * 1000)
			say(v, 1, "slow-link", l->line, "%s:%s is up at %g Gb/s; the design says %g Gb/s", l->a.dev,
			    l->a.port, o->speed_mbps / 1000.0, l->speed_gbps);
		if (!o->nsys) {
			if (o->listened)
				say(v, 1, "no-neighbour", l->line, "%s:%s is up but no LLDP was heard on it: %s port %s "
				    "sends none (LLDP off on the switch: the likelier cause, the link being up), or "
				    "it was not listened to for long enough", l->a.dev, l->a.port, l->b.dev, l->b.port);
			continue;
		}
		if (!reaches(o, &l->b)) {
			said[i] = 1;
			wrong_neighbour(v, i, said);
		}
	}
	free(said);
}

/* one known setting of one observed node cable */
struct sval {
	int rail, plane, key;
	const char *val;
	size_t link;
};

static int sval_cmp(const void *a, const void *b)
{
	const struct sval *x = a, *y = b;
	int c = x->rail != y->rail ? x->rail - y->rail : x->plane != y->plane ? x->plane - y->plane : x->key - y->key;

	if (!c)
		c = strcmp(x->val, y->val);
	return c ? c : (x->link > y->link) - (x->link < y->link);
}

static void rail_name(char *buf, size_t len, int rail, int plane)
{
	if (plane > 0)
		snprintf(buf, len, "rail %d plane %d", rail, plane);
	else if (rail >= 0)
		snprintf(buf, len, "rail %d", rail);
	else
		snprintf(buf, len, "the ports without a rail");
}

/* one group (rail, plane, key): g[0..n) sorted by value */
static void drift_group(struct vfy *v, const struct sval *g, size_t n)
{
	const struct topo *t = v->t;
	size_t i, run = 1, best = 0, bestn = 0, ties = 0;
	char rn[64];

	if (n < 3)
		return;	/* two ports: which one is off cannot be told */
	for (i = 1; i <= n; i++, run++)
		if (i == n || strcmp(g[i].val, g[i - 1].val)) {
			if (run > bestn)
				bestn = run, best = i - run, ties = 0;
			else if (run == bestn)
				ties++;
			run = 0;
		}
	if (bestn == n)
		return;
	rail_name(rn, sizeof(rn), g[0].rail, g[0].plane);
	if (ties || bestn * 2 <= n) {
		say(v, 0, "no-majority", t->ln[g[0].link].line, "%s: %s differs among its %zu ports with no majority "
		    "(%zu of them have %s)", rn, set_names[g[0].key], n, bestn, g[best].val);
		return;
	}
	for (i = 0; i < n; i++) {
		const struct topo_link *l = &t->ln[g[i].link];

		if (i >= best && i < best + bestn)
			continue;
		say(v, 1, "drift", l->line, "%s:%s (%s): %s %s, where %zu of the %zu ports of %s have %s", l->a.dev,
		    l->a.port, rn, set_names[g[i].key], g[i].val, bestn, n, rn, g[best].val);
	}
}

static void drift(struct vfy *v)
{
	const struct topo *t = v->t;
	struct sval *sv = fs_reallocarray(NULL, t->nln * TOPO_NSET + 1, sizeof(*sv));
	size_t i, n = 0, start;
	int k;

	if (!sv) {
		v->oom = 1;
		return;
	}
	for (i = 0; i < t->nln; i++) {
		const struct topo_obs *o = v->seen[i];

		if (!o || o->up == 0 || o->carrier == 0)
			continue;	/* a port down says no setting of the fabric */
		for (k = 0; k < TOPO_NSET; k++)
			if (o->set[k] && *o->set[k])
				sv[n++] = (struct sval){ topo_link_rail(t, &t->ln[i]), topo_link_plane(t, &t->ln[i]), k,
							 o->set[k], i };
	}
	qsort(sv, n, sizeof(*sv), sval_cmp);
	for (start = 0, i = 1; i <= n; i++)
		if (i == n || sv[i].rail != sv[start].rail || sv[i].plane != sv[start].plane || sv[i].key != sv[start].key) {
			drift_group(v, sv + start, i - start);
			start = i;
		}
	free(sv);
}

int topo_verify(const struct topo *t, struct topo_obsset *s, struct topo_findings *out)
{
	struct vfy v = { .t = t, .s = s, .out = out };
	size_t i;

	memset(out, 0, sizeof(*out));
	topo_obs_sort(s);
	v.seen = calloc(t->nln + 1, sizeof(*v.seen));
	v.sp = fs_reallocarray(NULL, t->nln + 1, sizeof(*v.sp));
	if (!v.seen || !v.sp) {
		free(v.seen);
		free(v.sp);
		return fs_err_env("out of memory checking the fabric against %s", t->path ? t->path : "the design");
	}
	for (i = 0; i < t->nln; i++)
		if (t->ln[i].a.sw < 0 && t->ln[i].b.sw >= 0)
			v.sp[v.nsp++] = (struct swport){ t->ln[i].b.dev, t->ln[i].b.port, i };
	qsort(v.sp, v.nsp, sizeof(*v.sp), swport_cmp);
	cables(&v);
	drift(&v);
	free(v.seen);
	free(v.sp);
	if (v.oom) {
		topo_findings_release(out);
		return fs_err_env("out of memory checking the fabric against %s", t->path ? t->path : "the design");
	}
	topo_findings_sort(out);
	return 0;
}
