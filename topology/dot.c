/* SPDX-License-Identifier: BSD-2-Clause */
/* The intended topology as a Graphviz graph (dot.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "dot.h"

#define DOT_ID_MAX 1024	/* an ID or attribute value; names are shorter still (TOPO_NAME_MAX) */
#define DOT_ATTRS 16	/* attributes of one statement that are kept */

enum tok { T_EOF, T_ID, T_LBRACE, T_RBRACE, T_LBRACK, T_RBRACK, T_EQ, T_SEMI, T_COMMA, T_COLON, T_EDGE, T_BAD };

struct lex {
	const char *p, *path;
	int line;
	enum tok tok;
	char id[DOT_ID_MAX + 1];
	int quoted;
};

/* blanks and comments; a '#' line is a comment only at the start of a line */
static void skip(struct lex *x)
{
	for (;;) {
		const char *p = x->p;

		if (*p == '\n') {
			x->line++;
			x->p++;
		} else if (isspace((unsigned char)*p)) {
			x->p++;
		} else if (p[0] == '/' && p[1] == '/') {
			x->p = strchr(p, '\n') ? strchr(p, '\n') : p + strlen(p);
		} else if (p[0] == '#') {
			x->p = strchr(p, '\n') ? strchr(p, '\n') : p + strlen(p);
		} else if (p[0] == '/' && p[1] == '*') {
			const char *e = strstr(p + 2, "*/");

			for (p += 2; *p && p != e; p++)
				x->line += *p == '\n';
			x->p = e ? e + 2 : p;
		} else {
			return;
		}
	}
}

static int id_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '-' || c == '/';
}

/* a quoted ID: \" is a quote, a backslash before a newline joins lines */
static enum tok quoted(struct lex *x)
{
	size_t n = 0;
	int start = x->line;

	for (x->p++; *x->p && *x->p != '"'; x->p++) {
		char c = *x->p;

		if (c == '\\' && x->p[1] == '"')
			c = *++x->p;
		else if (c == '\\' && x->p[1] == '\n') {
			x->p++;
			x->line++;
			continue;
		}
		if (c == '\n')
			x->line++;
		if (n == DOT_ID_MAX)
			break;
		x->id[n++] = c;
	}
	if (*x->p != '"') {	/* said at the line the quote opens */
		x->line = start;
		return T_BAD;
	}
	x->p++;
	x->id[n] = 0;
	x->quoted = 1;
	return T_ID;
}

static enum tok next(struct lex *x)
{
	static const char single[] = "{}[]=;,:";
	static const enum tok kinds[] = { T_LBRACE, T_RBRACE, T_LBRACK, T_RBRACK, T_EQ, T_SEMI, T_COMMA, T_COLON };
	const char *s;
	size_t n = 0;

	skip(x);
	x->quoted = 0;
	x->id[0] = 0;
	if (!*x->p)
		return x->tok = T_EOF;
	if ((x->p[0] == '-' && (x->p[1] == '-' || x->p[1] == '>'))) {
		x->p += 2;
		return x->tok = T_EDGE;
	}
	if ((s = strchr(single, *x->p))) {
		x->p++;
		return x->tok = kinds[s - single];
	}
	if (*x->p == '"')
		return x->tok = quoted(x);
	while (id_char(*x->p) && !(x->p[0] == '-' && (x->p[1] == '-' || x->p[1] == '>'))) {
		if (n == DOT_ID_MAX)
			return x->tok = T_BAD;
		x->id[n++] = *x->p++;
	}
	x->id[n] = 0;
	return x->tok = n ? T_ID : T_BAD;
}

static int bad(struct lex *x, const char *what)
{
	if (x->tok == T_BAD)
		return fs_err_usage("%s:%d: not DOT here (an unclosed quote, an ID over %d bytes, or a character "
				    "DOT does not take): %s", x->path, x->line, DOT_ID_MAX, what);
	return fs_err_usage("%s:%d: %s", x->path, x->line, what);
}

static int kw(const struct lex *x, const char *word)
{
	return x->tok == T_ID && !x->quoted && !strcasecmp(x->id, word);
}

struct attrs {
	int n;
	char k[DOT_ATTRS][64], v[DOT_ATTRS][DOT_ID_MAX + 1];
};

/* src into dst, cut to fit */
static void copy(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);

	memcpy(dst, src, n);
	dst[n] = 0;
}

static const char *attr(const struct attrs *a, const char *k)
{
	int i;

	for (i = 0; i < a->n; i++)
		if (!strcmp(a->k[i], k))
			return a->v[i];
	return NULL;
}

/* [k=v, k=v; ...]... after the statement (x->tok at '[' or after) */
static int attr_list(struct lex *x, struct attrs *a)
{
	a->n = 0;
	while (x->tok == T_LBRACK) {
		next(x);
		while (x->tok != T_RBRACK) {
			char k[64];

			if (x->tok != T_ID)
				return bad(x, "an attribute is NAME=VALUE inside [ ]");
			copy(k, sizeof(k), x->id);
			if (next(x) != T_EQ || next(x) != T_ID)
				return bad(x, "an attribute is NAME=VALUE inside [ ]");
			if (a->n < DOT_ATTRS) {
				copy(a->k[a->n], sizeof(a->k[a->n]), k);
				memcpy(a->v[a->n], x->id, sizeof(x->id));
				a->n++;
			}
			if (next(x) == T_COMMA || x->tok == T_SEMI)
				next(x);
		}
		next(x);
	}
	return 0;
}

/* a whole number 0..max from an attribute, -1 when not given */
static int small(struct lex *x, int line, const struct attrs *a, const char *k, int max, int *out)
{
	const char *v = attr(a, k);
	char *end;
	long n;

	*out = -1;
	if (!v)
		return 0;
	n = strtol(v, &end, 10);
	if (!*v || *end || n < 0 || n > max)
		return fs_err_usage("%s:%d: %s=\"%s\": a whole number from 0 to %d", x->path, line, k, v, max);
	*out = (int)n;
	return 0;
}

/* PTM's and NVIDIA Air's functions (topology_converter's too), as tiers; TOPO_NODE: a node */
static const struct {
	const char *fn;
	enum topo_tier tier;
} functions[] = {
	{ "leaf", TOPO_LEAF }, { "tor", TOPO_LEAF }, { "spine", TOPO_SPINE }, { "superspine", TOPO_SUPERSPINE },
	{ "super-spine", TOPO_SUPERSPINE }, { "exit", TOPO_BORDER }, { "border", TOPO_BORDER },
	{ "oob-switch", TOPO_OOB }, { "host", TOPO_NODE }, { "server", TOPO_NODE }, { "oob-server", TOPO_NODE },
};

/* a device's statement: a switch when its function says so, a node when it says so or says nothing;
 * a function not known is kept as a node, with a note */
static int dot_node(struct lex *x, struct topo *t, const char *name, const struct attrs *a, int line)
{
	const char *fn = attr(a, "function");
	int plane, rail, rc;
	size_t i;

	for (i = 0; fn && i < sizeof(functions) / sizeof(functions[0]); i++)
		if (!strcasecmp(fn, functions[i].fn))
			break;
	if (!fn || (i < sizeof(functions) / sizeof(functions[0]) && functions[i].tier == TOPO_NODE))
		return 0;
	if (i == sizeof(functions) / sizeof(functions[0]))
		return topo_note_add(t, line, "%s: function \"%s\" is none fabscope knows (leaf, tor, spine, superspine, "
				     "exit, border, oob-switch, host, server, oob-server): kept as a node", name, fn);
	if ((rc = small(x, line, a, "plane", 7, &plane)) || (rc = small(x, line, a, "rail", 63, &rail)))
		return rc;
	if (!topo_name_ok(name) || (attr(a, "pod") && !topo_name_ok(attr(a, "pod"))))
		return fs_err_usage("%s:%d: '%s': a name is letters, digits, '.', '_', '-' and '/', at most %d bytes",
				    x->path, line, topo_name_ok(name) ? attr(a, "pod") : name, TOPO_NAME_MAX);
	if ((rc = topo_add_switch(t, name, functions[i].tier, attr(a, "pod"), plane, rail, line)))
		return rc;
	return attr(a, "addr") ? topo_add_switch_addrs(t, t->nsw - 1, attr(a, "addr"), line) : 0;
}

struct end {
	char dev[DOT_ID_MAX + 1], port[DOT_ID_MAX + 1];
};

/* ID [: ID] (x->tok at the ID; after it, at what follows) */
static int node_id(struct lex *x, struct end *e)
{
	memcpy(e->dev, x->id, sizeof(x->id));
	e->port[0] = 0;
	if (next(x) == T_COLON) {
		if (next(x) != T_ID)
			return bad(x, "a port is DEVICE:PORT");
		memcpy(e->port, x->id, sizeof(x->id));
		next(x);
	}
	return 0;
}

static int dot_edge(struct lex *x, struct topo *t, const struct end *a, const struct end *b,
		    const struct attrs *at, int line)
{
	const char *sp = attr(at, "speed");
	double speed = 0;
	int plane, rail, rc;

	if (!*a->port || !*b->port)
		return fs_err_usage("%s:%d: \"%s\" -- \"%s\": a cable joins two ports (\"DEVICE\":\"PORT\")", x->path,
				    line, a->dev, b->dev);
	if (!strcmp(a->dev, b->dev) && !strcmp(a->port, b->port))
		return fs_err_usage("%s:%d: \"%s\":\"%s\" is cabled to itself", x->path, line, a->dev, a->port);
	if ((rc = small(x, line, at, "plane", 7, &plane)) || (rc = small(x, line, at, "rail", 63, &rail)))
		return rc;
	if (sp && (speed = topo_parse_speed(sp)) <= 0)
		return fs_err_usage("%s:%d: speed=\"%s\": give e.g. 200G, 400G or 25000M", x->path, line, sp);
	if (!topo_name_ok(a->dev) || !topo_name_ok(a->port) || !topo_name_ok(b->dev) || !topo_name_ok(b->port))
		return fs_err_usage("%s:%d: \"%s\":\"%s\" -- \"%s\":\"%s\": a name is letters, digits, '.', '_', '-' "
				    "and '/', at most %d bytes", x->path, line, a->dev, a->port, b->dev, b->port,
				    TOPO_NAME_MAX);
	return topo_add_link(t, a->dev, a->port, b->dev, b->port, rail, plane, speed, line);
}

/* one statement (x->tok at its first token); x->tok after it */
static int statement(struct lex *x, struct topo *t)
{
	struct attrs *at = malloc(sizeof(*at));
	struct end *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	int line = x->line, rc = 0;

	if (!at || !a || !b)
		rc = fs_err_env("out of memory reading %s", x->path);
	else if (kw(x, "graph") || kw(x, "node") || kw(x, "edge")) {
		if (next(x) != T_LBRACK)
			rc = bad(x, "graph, node and edge take [attributes]");
		else
			rc = attr_list(x, at);
	} else if (kw(x, "subgraph") || x->tok == T_LBRACE) {
		rc = bad(x, "subgraphs are not read: write every cable as \"DEV\":\"PORT\" -- \"DEV\":\"PORT\"");
	} else if (x->tok != T_ID) {
		rc = bad(x, "a statement is a device, a cable (\"DEV\":\"PORT\" -- \"DEV\":\"PORT\") or NAME=VALUE");
	} else if (!(rc = node_id(x, a))) {
		if (x->tok == T_EQ) {	/* ID = ID: a graph attribute */
			if (next(x) != T_ID)
				rc = bad(x, "NAME=VALUE");
			else
				next(x);
		} else if (x->tok == T_EDGE) {
			if (next(x) != T_ID)
				rc = bad(x, "a cable is \"DEV\":\"PORT\" -- \"DEV\":\"PORT\"");
			else if (!(rc = node_id(x, b)) && x->tok == T_EDGE)
				rc = bad(x, "a chain of edges: write one cable per edge");
			else if (!rc && !(rc = attr_list(x, at)))
				rc = dot_edge(x, t, a, b, at, line);
		} else if (!(rc = attr_list(x, at))) {
			rc = dot_node(x, t, a->dev, at, line);
		}
	}
	if (!rc && (x->tok == T_SEMI || x->tok == T_COMMA))
		next(x);
	free(at);
	free(a);
	free(b);
	return rc;
}

int topo_is_dot(const char *text)
{
	struct lex x = { .p = text, .line = 1 };

	next(&x);
	return kw(&x, "strict") || kw(&x, "graph") || kw(&x, "digraph");
}

int topo_parse_dot(struct topo *t, const char *path, const char *text)
{
	struct lex *x = calloc(1, sizeof(*x));
	int rc = 0;

	if (!x)
		return fs_err_env("out of memory reading %s", path);
	x->p = text;
	x->path = path;
	x->line = 1;
	next(x);
	if (kw(x, "strict"))
		next(x);
	if (!kw(x, "graph") && !kw(x, "digraph"))
		rc = bad(x, "a DOT file opens with 'graph NAME {'");
	else if (next(x) == T_ID && next(x) != T_LBRACE)
		rc = bad(x, "a DOT file opens with 'graph NAME {'");
	else if (x->tok != T_LBRACE)
		rc = bad(x, "a DOT file opens with 'graph NAME {'");
	for (next(x); !rc && x->tok != T_RBRACE; ) {
		if (x->tok == T_EOF)
			rc = bad(x, "the graph is not closed: a '}' is missing");
		else
			rc = statement(x, t);
	}
	if (!rc && next(x) != T_EOF)
		rc = bad(x, "text after the graph's '}': one graph a file");
	free(x);
	return rc;
}

static void q(FILE *f, const char *s)
{
	fprintf(f, "\"%s\"", s);	/* names hold no quote (topo_name_ok) */
}

int topo_write_dot(const struct topo *t, FILE *f)
{
	size_t i, k;
	int rc;

	if ((rc = topo_design_ok(t)))
		return rc;

	fprintf(f, "// fabscope topology: %zu switches, %zu links (fabscope-topology(5))\ngraph fabric {\n", t->nsw,
		t->nln);
	for (i = 0; i < t->nsw; i++) {
		const struct topo_switch *s = &t->sw[i];

		fputs("  ", f);
		q(f, s->name);
		fprintf(f, " [function=\"%s\"", s->tier == TOPO_BORDER ? "border" : s->tier == TOPO_OOB ? "oob-switch" :
			topo_tier_name(s->tier));
		if (s->pod)
			fprintf(f, " pod=\"%s\"", s->pod);
		if (s->plane >= 0)
			fprintf(f, " plane=\"%d\"", s->plane);
		if (s->rail >= 0)
			fprintf(f, " rail=\"%d\"", s->rail);
		for (k = 0; k < s->naddr; k++)
			fprintf(f, "%s%s", k ? "," : " addr=\"", s->addr[k]);
		fputs(s->naddr ? "\"]\n" : "]\n", f);
	}
	for (i = 0; i < t->nln; i++) {
		const struct topo_link *l = &t->ln[i];
		int attrs = l->rail >= 0 || l->plane >= 0 || l->speed_gbps > 0;

		fputs("  ", f);
		q(f, l->a.dev);
		fputc(':', f);
		q(f, l->a.port);
		fputs(" -- ", f);
		q(f, l->b.dev);
		fputc(':', f);
		q(f, l->b.port);
		if (attrs)
			fputs(" [", f);
		if (l->rail >= 0)
			fprintf(f, "rail=\"%d\"%s", l->rail, l->plane >= 0 || l->speed_gbps > 0 ? " " : "");
		if (l->plane >= 0)
			fprintf(f, "plane=\"%d\"%s", l->plane, l->speed_gbps > 0 ? " " : "");
		if (l->speed_gbps > 0)
			fprintf(f, "speed=\"%gG\"", l->speed_gbps);
		if (attrs)
			fputc(']', f);
		fputc('\n', f);
	}
	fputs("}\n", f);
	return 0;
}
