/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The localization's verdicts out: Prometheus text and JSON lines (see
 * localize.h).  Every name written comes from the design, whose names are
 * checked when it is read (topo_name_ok: letters, digits, '.', '_', '-',
 * '/'), so none needs escaping in a label value.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "localize.h"

enum loc_kind { LOC_LINK, LOC_NIC, LOC_HOST };

static enum loc_kind elem_kind(const struct loc_net *n, uint32_t el)
{
	return el < n->nic0 ? LOC_LINK : el < n->host0 ? LOC_NIC : LOC_HOST;
}

static const char *const kind_name[] = { "link", "nic", "host" };

/* a link's lane: its switches' rail and plane (the leaf's, where one end is a leaf), else -1 */
static void link_lane(const struct loc_net *n, uint32_t el, int *rail, int *plane)
{
	const struct topo_link *l = &n->t->ln[el / 2];
	const struct topo_switch *a = &n->t->sw[l->a.sw], *b = &n->t->sw[l->b.sw];

	*rail = l->rail >= 0 ? l->rail : a->rail >= 0 ? a->rail : b->rail;
	*plane = l->plane >= 0 ? l->plane : a->plane >= 0 ? a->plane : b->plane;
}

static void link_ends(const struct loc_net *n, uint32_t el, const char **from, const char **to)
{
	const struct topo_link *l = &n->t->ln[el / 2];

	*from = el & 1 ? l->b.dev : l->a.dev;
	*to = el & 1 ? l->a.dev : l->b.dev;
}

static void lane_str(char *buf, size_t len, int v)
{
	if (v >= 0)
		snprintf(buf, len, "%d", v);
	else
		buf[0] = 0;
}

int loc_write_prom(FILE *f, const struct loc_net *n, const struct loc_track *t)
{
	static const char *const help[] = {
		"A directed link between two switches that the monitor's probes name faulty (1 while named)",
		"A NIC port (and its cable) that the monitor's probes name faulty (1 while named)",
		"A host whose probes fail on every lane: not a fabric fault (1 while named)",
	};
	static const char *const metric[] = { "fabscope_link_suspect", "fabscope_nic_suspect",
					      "fabscope_host_suspect" };
	int k;
	size_t i;

	for (k = LOC_LINK; k <= LOC_HOST; k++) {
		fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", metric[k], help[k], metric[k]);
		for (i = 0; i < t->nnamed; i++) {
			uint32_t el = t->named[i];
			char r[16], p[16];

			if ((int)elem_kind(n, el) != k)
				continue;
			if (k == LOC_LINK) {
				const char *from, *to;
				int rail, plane;

				link_ends(n, el, &from, &to);
				link_lane(n, el, &rail, &plane);
				lane_str(r, sizeof(r), rail);
				lane_str(p, sizeof(p), plane);
				fprintf(f, "%s{from=\"%s\",to=\"%s\",rail=\"%s\",plane=\"%s\"} 1\n", metric[k], from, to, r, p);
			} else if (k == LOC_NIC) {
				const struct loc_port *pt = &n->ports[el - n->nic0];

				fprintf(f, "%s{node=\"%s\",rail=\"%d\",plane=\"%d\"} 1\n", metric[k], n->hosts[pt->host],
					pt->rail, pt->plane);
			} else {
				fprintf(f, "%s{node=\"%s\"} 1\n", metric[k], n->hosts[el - n->host0]);
			}
		}
	}
	return ferror(f) ? -1 : 0;
}

/* the element's own fields into o */
static int elem_json(json_t *o, const struct loc_net *n, uint32_t el)
{
	enum loc_kind k = elem_kind(n, el);
	int rc = json_object_set_new(o, "kind", json_string(kind_name[k]));

	if (k == LOC_LINK) {
		const char *from, *to;
		int rail, plane;

		link_ends(n, el, &from, &to);
		link_lane(n, el, &rail, &plane);
		rc |= json_object_set_new(o, "from", json_string(from));
		rc |= json_object_set_new(o, "to", json_string(to));
		rc |= json_object_set_new(o, "rail", rail >= 0 ? json_integer(rail) : json_null());
		rc |= json_object_set_new(o, "plane", plane >= 0 ? json_integer(plane) : json_null());
	} else if (k == LOC_NIC) {
		const struct loc_port *p = &n->ports[el - n->nic0];

		rc |= json_object_set_new(o, "node", json_string(n->hosts[p->host]));
		rc |= json_object_set_new(o, "rail", json_integer(p->rail));
		rc |= json_object_set_new(o, "plane", json_integer(p->plane));
	} else {
		rc |= json_object_set_new(o, "node", json_string(n->hosts[el - n->host0]));
	}
	return rc;
}

static json_t *suspect_json(const struct loc_net *n, const struct loc_suspect *s)
{
	json_t *o = json_object(), *alts = json_array();
	char name[TOPO_NAME_MAX * 2 + 32];
	int i, rc;

	if (!o || !alts) {
		json_decref(o);
		json_decref(alts);
		return NULL;
	}
	rc = elem_json(o, n, s->elem);
	rc |= json_object_set_new(o, "score", json_real(s->score));
	rc |= json_object_set_new(o, "bad_rate", json_real(s->rate));
	rc |= json_object_set_new(o, "probes_through", json_real(s->sent));
	rc |= json_object_set_new(o, "bad_through", json_real(s->bad));
	rc |= json_object_set_new(o, "failing_through", json_integer(s->failing));
	rc |= json_object_set_new(o, "healthy_avoiding", json_integer(s->healthy));
	rc |= json_object_set_new(o, "paths", json_string(s->elem >= n->nic0 ? "not needed" :
							  s->traced ? "traced" : "candidates"));
	for (i = 0; i < s->nalts; i++) {
		loc_elem_name(n, s->alts[i], name, sizeof(name));
		rc |= json_array_append_new(alts, json_string(name));
	}
	if (s->nalts)
		rc |= json_object_set_new(o, "inconclusive_between", alts);
	else
		json_decref(alts);
	if (rc) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int put_line(FILE *f, json_t *o)
{
	char *s = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(6)) : NULL;
	int rc = s && fprintf(f, "%s\n", s) >= 0 ? 0 : -1;

	free(s);
	json_decref(o);
	return rc;
}

static json_t *interval_json(const struct loc_net *n, const struct loc_vote *v, const struct loc_track *t,
			     const char *when)
{
	json_t *o = json_object(), *sus = json_array(), *named = json_array();
	char name[TOPO_NAME_MAX * 2 + 32];
	size_t i;
	int rc = !o || !sus || !named;

	if (rc) {
		json_decref(o);
		json_decref(sus);
		json_decref(named);
		return NULL;
	}
	rc |= json_object_set_new(o, "event", json_string("interval"));
	if (when)
		rc |= json_object_set_new(o, "time", json_string(when));
	rc |= json_object_set_new(o, "interval", json_integer(t->interval));
	rc |= json_object_set_new(o, "groups", json_integer(v->groups));
	rc |= json_object_set_new(o, "failing_groups", json_integer(v->failing));
	rc |= json_object_set_new(o, "probes", json_real(v->sent));
	rc |= json_object_set_new(o, "bad", json_real(v->bad));
	rc |= json_object_set_new(o, "baseline", json_real(v->p0));
	for (i = 0; i < v->ns; i++)
		rc |= json_array_append_new(sus, suspect_json(n, &v->s[i]));
	for (i = 0; i < t->nnamed; i++) {
		loc_elem_name(n, t->named[i], name, sizeof(name));
		rc |= json_array_append_new(named, json_string(name));
	}
	rc |= json_object_set_new(o, "suspects", sus);
	rc |= json_object_set_new(o, "named", named);
	if (rc) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* how a verdict was confirmed, in words */
static void confirmed(char *buf, size_t len, const struct loc_net *n, const struct loc_change *c, int k)
{
	const struct loc_suspect *s = &c->why;
	const char *how = c->elem >= n->host0 ? "every lane of the host" :
			  c->elem >= n->nic0 ? "its NIC's probes on this lane only" :
			  s->traced ? "the failing groups' paths traced" : "the design's candidate paths";

	if (c->named)
		snprintf(buf, len, "a suspect in %d intervals in a row (%s): %ld failing probe groups through it, "
			 "%ld healthy ones avoiding it, %.3g%% of the probes through it bad", k, how, s->failing,
			 s->healthy, 100 * s->rate);
	else
		snprintf(buf, len, "no suspect in %d intervals in a row", k);
}

int loc_write_json(FILE *f, const struct loc_net *n, const struct loc_vote *v, const struct loc_track *t,
		   const char *when, int k)
{
	char why[512];
	size_t i;

	if (put_line(f, interval_json(n, v, t, when)))
		return -1;
	for (i = 0; i < t->nch; i++) {
		const struct loc_change *c = &t->ch[i];
		json_t *o = c->named ? suspect_json(n, &c->why) : json_object();
		int rc = !o;

		if (!rc && !c->named)
			rc |= elem_json(o, n, c->elem);
		if (!rc) {
			confirmed(why, sizeof(why), n, c, k);
			rc |= json_object_set_new(o, "event", json_string(c->named ? "named" : "cleared"));
			if (when)
				rc |= json_object_set_new(o, "time", json_string(when));
			rc |= json_object_set_new(o, "interval", json_integer(t->interval));
			rc |= json_object_set_new(o, "confirmed", json_string(why));
		}
		if (rc) {
			json_decref(o);
			return -1;
		}
		if (put_line(f, o))
			return -1;
	}
	return 0;
}
