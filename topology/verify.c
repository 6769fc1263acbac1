/* SPDX-License-Identifier: BSD-2-Clause */
/* A fabric as the hosts see it, against its intended topology (verify.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../core/lanes.h"
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
	{	/* names go into findings and design files: a newline must not make a line of its own */
		const char *iface = json_string_value(json_object_get(port, "iface"));
		const char *bad = !topo_name_ok(node) ? node : iface && *iface && !topo_name_ok(iface) ? iface : NULL;
		char b[256];

		if (bad) {
			fs_escape_ctl(bad, strlen(bad) > 60 ? 60 : strlen(bad), b, sizeof(b));
			return fs_err_usage("%s: %s '%s' is not a name of fabscope-topology(5) (letters, digits, '.', "
					    "'_', '-', '/'): not judged", what, bad == node ? "node" : "interface", b);
		}
	}
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

/* an end of a cable of the design */
struct dend {
	const char *dev, *port;
	size_t link;
	int side;		/* 0: the cable's a, 1: its b */
};

static int dend_cmp(const void *a, const void *b)
{
	const struct dend *x = a, *y = b;
	int c = fs_name_cmp(x->dev, y->dev);

	return c ? c : fs_name_cmp(x->port, y->port);
}

struct vfy {
	const struct topo *t;
	struct topo_obsset *s;
	struct topo_findings *out;
	const struct topo_obs **seen;	/* per cable end (2 * link + side) of an observed device: its port */
	struct dend *ends;	/* every end of every cable, by device and port */
	size_t nends;
	int oom;
};

#define say(v, error, kind, line, ...) ((v)->oom |= topo_finding_add((v)->out, error, kind, line, __VA_ARGS__) < 0)

static const struct topo_end *end_of(const struct topo_link *l, int side)
{
	return side ? &l->b : &l->a;
}

/* the design's cable end at dev:port, or NULL */
static const struct dend *design_at(const struct vfy *v, const char *dev, const char *port)
{
	struct dend key = { dev, port, 0, 0 };

	return v->nends ? bsearch(&key, v->ends, v->nends, sizeof(*v->ends), dend_cmp) : NULL;
}

/* 1 when the design has a cable of device dev */
static int device_known(const struct vfy *v, const char *dev)
{
	size_t lo = 0, hi = v->nends;

	while (lo < hi) {	/* the first end of dev or after it */
		size_t mid = lo + (hi - lo) / 2;

		if (fs_name_cmp(v->ends[mid].dev, dev) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < v->nends && !strcmp(v->ends[lo].dev, dev);
}

static int reaches(const struct topo_obs *o, const struct topo_end *e)
{
	return o && o->nsys && !strcmp(o->nsys, e->dev) && !strcmp(o->nport, e->port);
}

/* end k of cable li reaches something else than its design says */
static void wrong_neighbour(struct vfy *v, size_t li, int k, char *said)
{
	const struct topo *t = v->t;
	const struct topo_link *l = &t->ln[li];
	const struct topo_end *e = end_of(l, k), *far = end_of(l, !k);
	const struct topo_obs *o = v->seen[2 * li + k];
	const struct dend *x = design_at(v, o->nsys, o->nport);
	const struct topo_link *m = x ? &t->ln[x->link] : NULL;
	const struct topo_end *partner = m ? end_of(m, !x->side) : NULL;	/* the other end of the cable reached */
	int nodes = l->a.sw < 0 && (!m || m->a.sw < 0);	/* two node cables: rails and planes judged */
	int rail = topo_link_rail(t, l), plane = topo_link_plane(t, l), sw = topo_switch_index(t, o->nsys);

	if (m && m != l && reaches(v->seen[2 * x->link + !x->side], far)) {
		if (said[x->link])
			return;
		said[x->link] = 1;
		say(v, 1, "swap", l->line, "%s:%s and %s:%s are swapped: %s:%s reaches %s port %s and %s:%s reaches "
		    "%s port %s; the design (lines %d and %d) has them the other way round", e->dev, e->port,
		    partner->dev, partner->port, e->dev, e->port, o->nsys, o->nport, partner->dev, partner->port,
		    far->dev, far->port, l->line, m->line);
		return;
	}
	if (!m && sw < 0 && !device_known(v, o->nsys)) {
		say(v, 1, "miscabled", l->line, "%s:%s reaches %s port %s, a device the design does not have; the "
		    "design says %s port %s", e->dev, e->port, *o->nsys ? o->nsys : "(no system name)", o->nport,
		    far->dev, far->port);
		return;
	}
	{
		int orail = m ? topo_link_rail(t, m) : sw >= 0 ? t->sw[sw].rail : -1;
		int oplane = m ? topo_link_plane(t, m) : sw >= 0 ? t->sw[sw].plane : -1;

		if (nodes && rail >= 0 && orail >= 0 && rail != orail)
			say(v, 1, "wrong-rail", l->line, "%s:%s (rail %d) reaches %s port %s, on rail %d; the design says "
			    "%s port %s", e->dev, e->port, rail, o->nsys, o->nport, orail, far->dev, far->port);
		else if (nodes && plane >= 0 && oplane >= 0 && plane != oplane)
			say(v, 1, "wrong-plane", l->line, "%s:%s (plane %d) reaches %s port %s, in plane %d; the design "
			    "says %s port %s", e->dev, e->port, plane, o->nsys, o->nport, oplane, far->dev, far->port);
		else
			say(v, 1, "miscabled", l->line, "%s:%s reaches %s port %s%s%s%s; the design says %s port %s",
			    e->dev, e->port, o->nsys, o->nport, m ? " (the design's port for " : "",
			    m ? partner->dev : "", m ? ")" : "", far->dev, far->port);
	}
}

/* end k of cable i, observed: its state, neighbour and speed; 1 when a finding was said */
static int judge_end(struct vfy *v, size_t i, int k, char *said)
{
	const struct topo_link *l = &v->t->ln[i];
	const struct topo_end *e = end_of(l, k), *far = end_of(l, !k);
	const struct topo_obs *o = v->seen[2 * i + k];

	if (o->up == 0 && o->carrier < 0) {	/* (sysfs has no carrier of a port configured down) */
		say(v, 1, "no-link", l->line, "%s:%s is configured down on the host (ip link set %s up), so its cable "
		    "to %s port %s cannot be seen", e->dev, e->port, e->port, far->dev, far->port);
		return 1;
	}
	if (o->up == 0 || o->carrier == 0) {
		say(v, 1, "no-link", l->line, "%s:%s is %s: a cable out, or %s port %s down (the design's neighbour)",
		    e->dev, e->port, o->carrier == 0 ? "without carrier" : "down", far->dev, far->port);
		return 1;
	}
	if (l->speed_gbps > 0 && o->speed_mbps > 0 && o->speed_mbps + 0.5 < l->speed_gbps * 1000)
		say(v, 1, "slow-link", l->line, "%s:%s is up at %g Gb/s; the design says %g Gb/s", e->dev, e->port,
		    o->speed_mbps / 1000.0, l->speed_gbps);
	if (!o->nsys) {
		if (o->listened)
			say(v, 1, "no-neighbour", l->line, "%s:%s is up but no LLDP was heard on it: %s port %s sends none "
			    "(LLDP off on the switch: the likelier cause, the link being up), or it was not listened "
			    "to for long enough", e->dev, e->port, far->dev, far->port);
		return o->listened;
	}
	if (reaches(o, far))
		return 0;
	said[i] = 1;
	wrong_neighbour(v, i, k, said);
	return 1;
}

/* every cable end of an observed device (a host, or a switch whose LLDP view was given), against the
 * design: a cable is said once, from its first end that has something to say */
static void cables(struct vfy *v)
{
	const struct topo *t = v->t;
	char *said = calloc(t->nln + 1, 1);
	size_t i;
	int k;

	if (!said) {
		v->oom = 1;
		return;
	}
	for (i = 0; i < t->nln; i++)
		for (k = 0; k < 2; k++) {
			const struct topo_end *e = end_of(&t->ln[i], k), *far = end_of(&t->ln[i], !k);
			const struct topo_obs *o;

			if (said[i] || !topo_obs_has_node(v->s, e->dev))
				continue;
			if (!(o = topo_obs_find(v->s, e->dev, e->port))) {
				say(v, 1, "not-seen", t->ln[i].line, "%s:%s was not observed on %s: no such interface, or it "
				    "is not configured up (the design cables it to %s port %s)", e->dev, e->port, e->dev,
				    far->dev, far->port);
				said[i] = 1;
				continue;
			}
			v->seen[2 * i + k] = o;
		}
	for (i = 0; i < t->nln; i++)
		for (k = 0; k < 2 && !said[i]; k++)
			if (v->seen[2 * i + k] && judge_end(v, i, k, said))
				said[i] = 1;
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
	if (rail >= 0)
		fs_lane_name(rail, plane > 0 ? plane : 0, buf, len);
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
		const struct topo_obs *o = v->seen[2 * i];	/* a node's end comes first */

		if (t->ln[i].a.sw >= 0 || t->ln[i].b.sw < 0 || topo_link_oob(t, &t->ln[i]))
			continue;	/* the settings of NICs of the fabric: not a switch's, not management ports */
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
	v.seen = calloc(2 * t->nln + 1, sizeof(*v.seen));
	v.ends = fs_reallocarray(NULL, 2 * t->nln + 1, sizeof(*v.ends));
	if (!v.seen || !v.ends) {
		free(v.seen);
		free(v.ends);
		return fs_err_env("out of memory checking the fabric against %s", t->path ? t->path : "the design");
	}
	for (i = 0; i < t->nln; i++) {
		v.ends[v.nends++] = (struct dend){ t->ln[i].a.dev, t->ln[i].a.port, i, 0 };
		v.ends[v.nends++] = (struct dend){ t->ln[i].b.dev, t->ln[i].b.port, i, 1 };
	}
	qsort(v.ends, v.nends, sizeof(*v.ends), dend_cmp);
	cables(&v);
	drift(&v);
	free(v.seen);
	free(v.ends);
	if (v.oom) {
		topo_findings_release(out);
		return fs_err_env("out of memory checking the fabric against %s", t->path ? t->path : "the design");
	}
	topo_findings_sort(out);
	return 0;
}
