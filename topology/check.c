/* SPDX-License-Identifier: BSD-2-Clause */
/* An intended topology checked against itself (check.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../core/names.h"
#include "check.h"

struct chk {
	const struct topo *t;
	struct topo_findings *out;
	int oom;
	int rail_less;		/* no leaf and no node cable gives a rail: a lane per leaf group */
	int *group;		/* per switch: its leaf group (itself, or a leaf peer-linked to it) */
};

int topo_finding_add(struct topo_findings *o, int error, const char *kind, int line, const char *fmt, ...)
{
	va_list ap;
	char *text = NULL;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		text = NULL;
	va_end(ap);
	if (!text || FS_ALLOC_GROW(o->f, o->n + 1, o->alloc)) {
		free(text);
		return -1;
	}
	o->f[o->n].error = error;
	o->f[o->n].kind = kind;
	o->f[o->n].line = line;
	o->f[o->n].text = text;
	o->n++;
	o->errors += error;
	return 0;
}

#define find(c, error, kind, line, ...) \
	((c)->oom |= topo_finding_add((c)->out, error, kind, line, __VA_ARGS__) < 0)

/* one end of a cable, for sorting */
struct pend {
	const char *dev, *port;
	int line;
};

static int pend_cmp(const void *a, const void *b)
{
	const struct pend *x = a, *y = b;
	int c = fs_name_cmp(x->dev, y->dev);

	if (!c)
		c = fs_name_cmp(x->port, y->port);
	return c ? c : x->line - y->line;
}

static void ports_twice(struct chk *c)
{
	const struct topo *t = c->t;
	struct pend *e = fs_reallocarray(NULL, t->nln * 2 + 1, sizeof(*e));
	size_t i, n = 0;

	if (!e) {
		c->oom = 1;
		return;
	}
	for (i = 0; i < t->nln; i++) {
		e[n++] = (struct pend){ t->ln[i].a.dev, t->ln[i].a.port, t->ln[i].line };
		e[n++] = (struct pend){ t->ln[i].b.dev, t->ln[i].b.port, t->ln[i].line };
	}
	qsort(e, n, sizeof(*e), pend_cmp);
	for (i = 1; i < n; i++)
		if (!strcmp(e[i].dev, e[i - 1].dev) && !strcmp(e[i].port, e[i - 1].port))
			find(c, 1, "port-twice", e[i].line, "%s:%s is cabled twice (lines %d and %d): a port takes one cable",
			     e[i].dev, e[i].port, e[i - 1].line, e[i].line);
	free(e);
}

/* a node's port on a rail and plane, and the leaf it reaches */
struct nport {
	const char *node;
	int rail, plane, sw, line;
};

static int nport_cmp(const void *a, const void *b)
{
	const struct nport *x = a, *y = b;
	int c = fs_name_cmp(x->node, y->node);

	if (!c)
		c = x->rail - y->rail;
	if (!c)
		c = x->plane - y->plane;
	return c ? c : x->line - y->line;
}

/* a rail-optimized leaf serves one rail: the rails of each leaf's node ports */
static void leaf_rails(struct chk *c, struct nport *p, size_t n, int rail_optimized)
{
	const struct topo *t = c->t;
	int *first = fs_reallocarray(NULL, t->nsw + 1, sizeof(*first)), *line = NULL;
	size_t i;

	if (!first || !(line = fs_reallocarray(NULL, t->nsw + 1, sizeof(*line)))) {
		free(first);
		c->oom = 1;
		return;
	}
	for (i = 0; i < t->nsw; i++)
		first[i] = -1;
	for (i = 0; i < n && rail_optimized; i++) {
		int s = p[i].sw;

		if (t->sw[s].rail >= 0)
			continue;	/* (a leaf with rail= is judged port by port) */
		if (first[s] < 0) {
			first[s] = p[i].rail;
			line[s] = p[i].line;
		} else if (first[s] != p[i].rail && first[s] != -2) {
			find(c, 1, "wrong-rail", p[i].line, "leaf %s serves rail %d (line %d) and rail %d: a leaf of a "
			     "rail-optimized design serves one rail", t->sw[s].name, first[s], line[s], p[i].rail);
			first[s] = -2;	/* said once */
		}
	}
	free(first);
	free(line);
}

/* every cable with a node at one end: tier, rail and plane of its switch */
static void node_ports(struct chk *c)
{
	const struct topo *t = c->t;
	struct nport *p = fs_reallocarray(NULL, t->nln + 1, sizeof(*p));
	size_t i, n = 0;
	int rail_optimized = 0;

	if (!p) {
		c->oom = 1;
		return;
	}
	for (i = 0; i < t->nsw; i++)
		rail_optimized |= t->sw[i].tier == TOPO_LEAF && t->sw[i].rail >= 0;
	for (i = 0; i < t->nln; i++) {
		const struct topo_link *l = &t->ln[i];
		const struct topo_switch *s;
		int rail;

		if (l->a.sw >= 0 || l->b.sw < 0 || topo_link_oob(t, l))
			continue;	/* switch to switch, no switch (said), out-of-band */
		s = &t->sw[l->b.sw];
		rail = l->rail >= 0 ? l->rail : s->rail;
		if (topo_tier_level(s->tier) != 1)
			find(c, 0, "tier", l->line, "node %s is cabled to %s %s: nodes go to leaves", l->a.dev,
			     topo_tier_name(s->tier), s->name);
		if (rail < 0 && c->rail_less) {
			rail = 0;	/* one lane per leaf group */
		} else if (rail < 0) {
			find(c, 1, "no-rail", l->line, "%s:%s has no rail: give rail=K on the link (or on leaf %s)",
			     l->a.dev, l->a.port, s->name);
			continue;
		}
		if (s->rail >= 0 && s->rail != rail) {	/* said once: not again as a rail on two leaves */
			find(c, 1, "wrong-rail", l->line, "%s:%s is rail %d but leaf %s serves rail %d", l->a.dev,
			     l->a.port, rail, s->name, s->rail);
			continue;
		}
		if (l->plane >= 0 && s->plane >= 0 && l->plane != s->plane) {
			find(c, 1, "cross-plane", l->line, "%s:%s is plane %d but %s is in plane %d", l->a.dev, l->a.port,
			     l->plane, s->name, s->plane);
			continue;
		}
		p[n++] = (struct nport){ l->a.dev, rail, l->plane >= 0 ? l->plane : s->plane, l->b.sw, l->line };
	}
	qsort(p, n, sizeof(*p), nport_cmp);
	for (i = 1; i < n; i++)	/* (two leaves joined by a peer link are one group: a bond, one lane) */
		if (!strcmp(p[i].node, p[i - 1].node) && p[i].rail == p[i - 1].rail &&
		    p[i].plane == p[i - 1].plane && c->group[p[i].sw] != c->group[p[i - 1].sw])
			find(c, 1, "rail-leaves", p[i].line, "%s rail %d%s reaches two switches: %s (line %d) and %s",
			     p[i].node, p[i].rail, p[i].plane > 0 ? " (a plane)" : "", t->sw[p[i - 1].sw].name,
			     p[i - 1].line, t->sw[p[i].sw].name);
	leaf_rails(c, p, n, rail_optimized);
	free(p);
}

static void switch_links(struct chk *c)
{
	const struct topo *t = c->t;
	char *used = calloc(t->nsw + 1, 1);
	size_t i;

	if (!used) {
		c->oom = 1;
		return;
	}
	for (i = 0; i < t->nln; i++) {
		const struct topo_link *l = &t->ln[i];
		const struct topo_switch *a, *b;

		if (l->a.sw >= 0)
			used[l->a.sw] = 1;
		if (l->b.sw >= 0)
			used[l->b.sw] = 1;
		if (l->b.sw < 0) {
			find(c, 1, "no-switch", l->line, "%s:%s -- %s:%s: neither end is a switch (declare it with "
			     "'switch NAME tier=...')", l->a.dev, l->a.port, l->b.dev, l->b.port);
			continue;
		}
		if (l->a.sw < 0 || l->a.sw == l->b.sw || topo_link_oob(t, l))
			continue;	/* a node's (node_ports), a loopback, out-of-band: cables, no tiers */
		a = &t->sw[l->a.sw];
		b = &t->sw[l->b.sw];
		if (a->plane >= 0 && b->plane >= 0 && a->plane != b->plane)
			find(c, 1, "cross-plane", l->line, "%s (plane %d) -- %s (plane %d): a cable between planes",
			     a->name, a->plane, b->name, b->plane);
		if (abs(topo_tier_level(a->tier) - topo_tier_level(b->tier)) > 1)	/* (one level: a peer link) */
			find(c, 0, "tier", l->line, "%s %s -- %s %s: switches are cabled to the next tier, or to a "
			     "peer of their own", topo_tier_name(a->tier), a->name, topo_tier_name(b->tier), b->name);
	}
	for (i = 0; i < t->nsw; i++)
		if (!used[i])
			find(c, 0, "unused", t->sw[i].line, "switch %s has no cable", t->sw[i].name);
	free(used);
}

static int finding_cmp(const void *a, const void *b)
{
	const struct topo_finding *x = a, *y = b;

	if (x->line != y->line)
		return x->line - y->line;
	return strcmp(x->text, y->text);
}

void topo_findings_sort(struct topo_findings *fs)
{
	if (fs->n > 1)
		qsort(fs->f, fs->n, sizeof(*fs->f), finding_cmp);
}

/* the leaf groups (union-find over the peer links of level-1 switches), and whether rails are given */
static void groups(struct chk *c)
{
	const struct topo *t = c->t;
	size_t i;

	if (!(c->group = fs_reallocarray(NULL, t->nsw + 1, sizeof(*c->group)))) {
		c->oom = 1;
		return;
	}
	c->rail_less = 1;
	for (i = 0; i < t->nsw; i++) {
		c->group[i] = (int)i;
		c->rail_less &= t->sw[i].rail < 0 || topo_tier_level(t->sw[i].tier) != 1;
	}
	for (i = 0; i < t->nln; i++) {
		const struct topo_link *l = &t->ln[i];
		int x = l->a.sw, y = l->b.sw;

		if (topo_link_oob(t, l) || y < 0)
			continue;
		if (x < 0) {
			c->rail_less &= l->rail < 0;
			continue;
		}
		if (topo_tier_level(t->sw[x].tier) != 1 || topo_tier_level(t->sw[y].tier) != 1)
			continue;
		while (c->group[x] != x)
			x = c->group[x] = c->group[c->group[x]];
		while (c->group[y] != y)
			y = c->group[y] = c->group[c->group[y]];
		c->group[x > y ? x : y] = x < y ? x : y;
	}
	for (i = 0; i < t->nsw; i++) {	/* every switch straight to its group's root */
		int r = (int)i;

		while (c->group[r] != r)
			r = c->group[r];
		c->group[i] = r;
	}
}

/* what reading said (a function not known), and a design without rails */
static void notes(struct chk *c)
{
	size_t i;

	for (i = 0; i < c->t->nnotes; i++)
		find(c, 0, "function", c->t->notes[i].line, "%s", c->t->notes[i].text);
	if (c->rail_less)
		find(c, 0, "lanes", 0, "no leaf or node cable gives a rail: one lane per leaf group (the ports of a node "
		     "on a leaf, or on leaves joined by peer links, are one lane, rail 0)");
}

int topo_check(const struct topo *t, struct topo_findings *out)
{
	struct chk c = { .t = t, .out = out };

	memset(out, 0, sizeof(*out));
	groups(&c);
	if (!c.oom) {
		ports_twice(&c);
		switch_links(&c);
		node_ports(&c);
		notes(&c);
	}
	free(c.group);
	if (c.oom) {
		topo_findings_release(out);
		return fs_err_env("out of memory checking %s", t->path ? t->path : "the topology");
	}
	topo_findings_sort(out);
	return 0;
}

void topo_findings_release(struct topo_findings *fs)
{
	size_t i;

	for (i = 0; i < fs->n; i++)
		free(fs->f[i].text);
	free(fs->f);
	memset(fs, 0, sizeof(*fs));
}

void topo_findings_print(const struct topo_findings *fs, const char *path, FILE *f)
{
	size_t i;

	for (i = 0; i < fs->n; i++)
		fprintf(f, "%s:%d: %s: %s\n", path, fs->f[i].line, fs->f[i].error ? "error" : "warning", fs->f[i].text);
}

json_t *topo_findings_json(const struct topo_findings *fs)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < fs->n; i++)
		json_array_append_new(a, json_pack("{ss,ss,si,ss}", "level", fs->f[i].error ? "error" : "warning",
						   "kind", fs->f[i].kind, "line", fs->f[i].line, "text", fs->f[i].text));
	return a;
}
