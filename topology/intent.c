/* SPDX-License-Identifier: BSD-2-Clause */
/* The intended topology: its file, read and written (intent.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "../core/error.h"
#include "../core/names.h"
#include "../core/slurp.h"
#include "dot.h"
#include "intent.h"

static const char *const tier_names[] = { "node", "leaf", "spine", "superspine", "border", "oob" };

const char *topo_tier_name(enum topo_tier t)
{
	return (unsigned)t <= TOPO_OOB ? tier_names[t] : "?";
}

int topo_tier_level(enum topo_tier t)
{
	static const int level[] = { 0, 1, 2, 3, 1, -1 };

	return (unsigned)t <= TOPO_OOB ? level[t] : -1;
}

int topo_link_oob(const struct topo *t, const struct topo_link *l)
{
	return (l->a.sw >= 0 && t->sw[l->a.sw].tier == TOPO_OOB) || (l->b.sw >= 0 && t->sw[l->b.sw].tier == TOPO_OOB);
}

int topo_note_add(struct topo *t, int line, const char *fmt, ...)
{
	va_list ap;
	char *text = NULL;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		text = NULL;
	va_end(ap);
	if (!text || FS_ALLOC_GROW(t->notes, t->nnotes + 1, t->notes_alloc)) {
		free(text);
		return fs_err_env("out of memory reading %s", t->path ? t->path : "the topology");
	}
	t->notes[t->nnotes].line = line;
	t->notes[t->nnotes++].text = text;
	return 0;
}

void topo_init(struct topo *t)
{
	memset(t, 0, sizeof(*t));
}

void topo_release(struct topo *t)
{
	size_t i;

	for (i = 0; i < t->nsw; i++) {
		size_t k;

		free(t->sw[i].name);
		free(t->sw[i].pod);
		for (k = 0; k < t->sw[i].naddr; k++)
			free(t->sw[i].addr[k]);
		free(t->sw[i].addr);
	}
	free(t->byaddr);
	for (i = 0; i < t->nln; i++) {
		free(t->ln[i].a.dev);
		free(t->ln[i].a.port);
		free(t->ln[i].b.dev);
		free(t->ln[i].b.port);
	}
	for (i = 0; i < t->nnotes; i++)
		free(t->notes[i].text);
	free(t->notes);
	free(t->sw);
	free(t->ln);
	free(t->path);
	topo_init(t);
}

int topo_name_ok(const char *s)
{
	size_t n = 0;

	if (!s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')))
		return 0;
	for (; s[n]; n++)
		if (!((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') || (s[n] >= '0' && s[n] <= '9') ||
		      strchr("._-/", s[n])))
			return 0;
	return n <= TOPO_NAME_MAX;
}

double topo_parse_speed(const char *s)
{
	char *end;
	double v;

	if (!s || !(*s >= '0' && *s <= '9'))
		return 0;
	errno = 0;
	v = strtod(s, &end);
	if (errno || !isfinite(v) || v <= 0 || v > 1e6)
		return 0;
	if (!strcmp(end, "G") || !strcmp(end, "g"))
		return v;
	if (!strcmp(end, "M") || !strcmp(end, "m"))
		return v / 1000;
	return 0;
}

int topo_add_switch(struct topo *t, const char *name, enum topo_tier tier, const char *pod, int plane,
		    int rail, int line)
{
	struct topo_switch *s;

	if (FS_ALLOC_GROW(t->sw, t->nsw + 1, t->sw_alloc))
		return fs_err_env("out of memory reading %s", t->path ? t->path : "the topology");
	s = &t->sw[t->nsw];
	memset(s, 0, sizeof(*s));
	if (!(s->name = strdup(name)) || (pod && !(s->pod = strdup(pod)))) {
		free(s->name);
		return fs_err_env("out of memory reading %s", t->path ? t->path : "the topology");
	}
	s->tier = tier;
	s->plane = plane;
	s->rail = rail;
	s->line = line;
	t->nsw++;
	return 0;
}

int topo_add_link(struct topo *t, const char *adev, const char *aport, const char *bdev, const char *bport,
		  int rail, int plane, double speed_gbps, int line)
{
	struct topo_link *l;

	if (FS_ALLOC_GROW(t->ln, t->nln + 1, t->ln_alloc))
		return fs_err_env("out of memory reading %s", t->path ? t->path : "the topology");
	l = &t->ln[t->nln];
	memset(l, 0, sizeof(*l));
	l->a.dev = strdup(adev);
	l->a.port = strdup(aport);
	l->b.dev = strdup(bdev);
	l->b.port = strdup(bport);
	if (!l->a.dev || !l->a.port || !l->b.dev || !l->b.port) {
		free(l->a.dev);
		free(l->a.port);
		free(l->b.dev);
		free(l->b.port);
		return fs_err_env("out of memory reading %s", t->path ? t->path : "the topology");
	}
	l->a.sw = l->b.sw = -1;
	l->rail = rail;
	l->plane = plane;
	l->speed_gbps = speed_gbps;
	l->line = line;
	t->nln++;
	return 0;
}

static int sw_cmp(const void *a, const void *b)
{
	return fs_name_cmp(((const struct topo_switch *)a)->name, ((const struct topo_switch *)b)->name);
}

/* addr in the form inet_ntop writes (IPv4 or IPv6), into buf; -1: not an address */
static int addr_canon(const char *addr, char *buf, size_t len)
{
	unsigned char a[16];

	if (inet_pton(AF_INET, addr, a) == 1)
		return inet_ntop(AF_INET, a, buf, (socklen_t)len) ? 0 : -1;
	if (inet_pton(AF_INET6, addr, a) == 1)
		return inet_ntop(AF_INET6, a, buf, (socklen_t)len) ? 0 : -1;
	return -1;
}

int topo_add_switch_addrs(struct topo *t, size_t sw, const char *list, int line)
{
	struct topo_switch *s = &t->sw[sw];
	const char *p = list;

	for (;;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		char one[INET6_ADDRSTRLEN + 8], buf[INET6_ADDRSTRLEN];

		if (n >= sizeof(one) || (memcpy(one, p, n), one[n] = 0, addr_canon(one, buf, sizeof(buf))))
			return fs_err_usage("%s:%d: addr=%s: give IPv4 or IPv6 addresses, split by commas",
					    t->path ? t->path : "topology", line, list);
		if (FS_ALLOC_GROW(s->addr, s->naddr + 1, s->addr_alloc) || !(s->addr[s->naddr] = strdup(buf)))
			return fs_err_env("out of memory reading %s", t->path ? t->path : "the topology");
		s->naddr++;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

static int addr_cmp(const void *a, const void *b)
{
	return strcmp(((const struct topo_addr *)a)->addr, ((const struct topo_addr *)b)->addr);
}

/* every switch's addresses into t->byaddr, sorted; one switch an address */
static int index_addrs(struct topo *t)
{
	size_t i, k, n = 0;

	free(t->byaddr);
	t->byaddr = NULL;
	t->naddr = 0;
	for (i = 0; i < t->nsw; i++)
		n += t->sw[i].naddr;
	if (!n)
		return 0;
	if (!(t->byaddr = malloc(n * sizeof(*t->byaddr))))
		return fs_err_env("out of memory reading %s", t->path ? t->path : "the topology");
	for (i = 0; i < t->nsw; i++)
		for (k = 0; k < t->sw[i].naddr; k++)
			t->byaddr[t->naddr++] = (struct topo_addr){ t->sw[i].addr[k], (int)i };
	qsort(t->byaddr, n, sizeof(*t->byaddr), addr_cmp);
	for (i = 0; i + 1 < n; i++)
		if (!strcmp(t->byaddr[i].addr, t->byaddr[i + 1].addr)) {
			const struct topo_switch *a = &t->sw[t->byaddr[i].sw], *b = &t->sw[t->byaddr[i + 1].sw];

			if (a->line > b->line) {	/* the later line is the one at fault */
				const struct topo_switch *x = a;

				a = b;
				b = x;
			}
			if (a == b)
				return fs_err_usage("%s:%d: address %s is given to switch %s twice",
						    t->path ? t->path : "topology", a->line, t->byaddr[i].addr, a->name);
			return fs_err_usage("%s:%d: address %s is given to both %s (line %d) and %s: an address "
					    "names one switch", t->path ? t->path : "topology", b->line,
					    t->byaddr[i].addr, a->name, a->line, b->name);
		}
	return 0;
}

int topo_addr_switch(const struct topo *t, const char *addr)
{
	char buf[INET6_ADDRSTRLEN];
	size_t lo = 0, hi = t->naddr;

	if (!addr || addr_canon(addr, buf, sizeof(buf)))
		return -1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(t->byaddr[mid].addr, buf);

		if (!c)
			return t->byaddr[mid].sw;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

int topo_cabled(const struct topo *t, const char *a, const char *b)
{
	size_t i;

	for (i = 0; i < t->nln; i++) {
		const struct topo_link *l = &t->ln[i];

		if ((!strcmp(l->a.dev, a) && !strcmp(l->b.dev, b)) || (!strcmp(l->a.dev, b) && !strcmp(l->b.dev, a)))
			return 1;
	}
	return 0;
}

int topo_switch_index(const struct topo *t, const char *name)
{
	size_t lo = 0, hi = t->nsw;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = fs_name_cmp(t->sw[mid].name, name);

		if (!c)
			return (int)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

int topo_finish(struct topo *t)
{
	size_t i;

	if (t->nsw > 1)
		qsort(t->sw, t->nsw, sizeof(*t->sw), sw_cmp);
	for (i = 0; i + 1 < t->nsw; i++)
		if (!strcmp(t->sw[i].name, t->sw[i + 1].name)) {
			const struct topo_switch *x = t->sw[i].line < t->sw[i + 1].line ? &t->sw[i + 1] : &t->sw[i];

			return fs_err_usage("%s:%d: switch '%s' is declared twice (lines %d and %d)",
					    t->path ? t->path : "topology", x->line, x->name, t->sw[i].line,
					    t->sw[i + 1].line);
		}
	for (i = 0; i < t->nln; i++) {
		struct topo_link *l = &t->ln[i];

		l->a.sw = topo_switch_index(t, l->a.dev);
		l->b.sw = topo_switch_index(t, l->b.dev);
		if (l->a.sw >= 0 && l->b.sw < 0) {	/* the node's end first */
			struct topo_end e = l->a;

			l->a = l->b;
			l->b = e;
		}
	}
	return index_addrs(t);
}

/* ---- the file ---- */

struct rd {
	struct topo *t;
	const char *path;
	int line;
};

/* "K=V" words into the values asked for; 0 or -FS_EXIT_USAGE said */
static int small_int(struct rd *r, const char *k, const char *v, int max, int *out)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || end == v || *end || n < 0 || n > max)
		return fs_err_usage("%s:%d: %s=%s: give a whole number from 0 to %d", r->path, r->line, k, v, max);
	*out = (int)n;
	return 0;
}

static int end_split(struct rd *r, char *w, char **dev, char **port)
{
	char *colon = strchr(w, ':');

	if (!colon || strchr(colon + 1, ':'))
		return fs_err_usage("%s:%d: '%s' is not DEVICE:PORT (e.g. h1:eth2 or leaf1:swp7)", r->path, r->line, w);
	*colon = 0;
	*dev = w;
	*port = colon + 1;
	if (!topo_name_ok(*dev) || !topo_name_ok(*port))
		return fs_err_usage("%s:%d: '%s:%s': a device and a port are names of letters, digits, '.', '_', "
				    "'-', '/' (at most %d bytes)", r->path, r->line, *dev, *port, TOPO_NAME_MAX);
	return 0;
}

static int parse_switch(struct rd *r, char **save)
{
	char *name = strtok_r(NULL, " \t", save), *w, *pod = NULL, *addrs[64];
	int tier = -1, plane = -1, rail = -1, rc = 0, naddrs = 0, i;

	if (!name || !topo_name_ok(name) || strchr(name, '='))
		return fs_err_usage("%s:%d: 'switch' needs a name first (letters, digits, '.', '_', '-', '/'): "
				    "switch NAME tier=leaf|spine|superspine|border|oob [pod=P] [plane=N] [rail=N] [addr=A,B]",
				    r->path, r->line);
	while (!rc && (w = strtok_r(NULL, " \t", save))) {
		char *eq = strchr(w, '='), *v;

		if (!eq)
			return fs_err_usage("%s:%d: '%s' is not key=value", r->path, r->line, w);
		*eq = 0;
		v = eq + 1;
		if (!strcmp(w, "tier")) {
			for (tier = TOPO_LEAF; tier <= TOPO_OOB && strcmp(v, tier_names[tier]); tier++)
				;
			if (tier > TOPO_OOB)
				return fs_err_usage("%s:%d: tier=%s: a switch is a leaf, spine, superspine, border or oob",
						    r->path, r->line, v);
		} else if (!strcmp(w, "pod")) {
			if (!topo_name_ok(v))
				return fs_err_usage("%s:%d: pod=%s is not a name", r->path, r->line, v);
			pod = v;
		} else if (!strcmp(w, "plane")) {
			rc = small_int(r, w, v, 7, &plane);
		} else if (!strcmp(w, "rail")) {
			rc = small_int(r, w, v, 63, &rail);
		} else if (!strcmp(w, "addr")) {	/* (repeatable) */
			if (naddrs == (int)(sizeof(addrs) / sizeof(addrs[0])))
				return fs_err_usage("%s:%d: more than %d addr= on one line: write the addresses "
						    "split by commas", r->path, r->line, naddrs);
			addrs[naddrs++] = v;
		} else {
			return fs_err_usage("%s:%d: unknown key '%s': a switch has tier=, pod=, plane=, rail= and addr=",
					    r->path, r->line, w);
		}
	}
	if (rc)
		return rc;
	if (tier < 0)
		return fs_err_usage("%s:%d: switch %s has no tier=: give leaf, spine, superspine, border or oob", r->path,
				    r->line, name);
	if ((rc = topo_add_switch(r->t, name, (enum topo_tier)tier, pod, plane, rail, r->line)))
		return rc;
	for (i = 0; i < naddrs && !rc; i++)
		rc = topo_add_switch_addrs(r->t, r->t->nsw - 1, addrs[i], r->line);
	return rc;
}

static int parse_link(struct rd *r, char **save)
{
	char *wa = strtok_r(NULL, " \t", save), *wb = strtok_r(NULL, " \t", save), *w;
	char *ad, *ap, *bd, *bp;
	int rail = -1, plane = -1, rc;
	double speed = 0;

	if (!wa || !wb)
		return fs_err_usage("%s:%d: 'link' needs two ends: link DEV:PORT DEV:PORT [rail=N] [plane=N] "
				    "[speed=200G]", r->path, r->line);
	if ((rc = end_split(r, wa, &ad, &ap)) || (rc = end_split(r, wb, &bd, &bp)))
		return rc;
	if (!strcmp(ad, bd) && !strcmp(ap, bp))
		return fs_err_usage("%s:%d: %s:%s is linked to itself", r->path, r->line, ad, ap);
	while ((w = strtok_r(NULL, " \t", save))) {
		char *eq = strchr(w, '='), *v;

		if (!eq)
			return fs_err_usage("%s:%d: '%s' is not key=value", r->path, r->line, w);
		*eq = 0;
		v = eq + 1;
		if (!strcmp(w, "rail"))
			rc = small_int(r, w, v, 63, &rail);
		else if (!strcmp(w, "plane"))
			rc = small_int(r, w, v, 7, &plane);
		else if (!strcmp(w, "speed")) {
			if (!(speed = topo_parse_speed(v)))
				return fs_err_usage("%s:%d: speed=%s: give Gb/s as 200G (or Mb/s as 100M)",
						    r->path, r->line, v);
		} else
			return fs_err_usage("%s:%d: unknown key '%s': a link has rail=, plane= and speed=",
					    r->path, r->line, w);
		if (rc)
			return rc;
	}
	return topo_add_link(r->t, ad, ap, bd, bp, rail, plane, speed, r->line);
}

int topo_load_text(const char *path, char **text)
{
	if (!(*text = fs_slurp(path, TOPO_FILE_MAX)))
		return errno == EFBIG ? fs_err_usage("topology '%s' is over %u MiB: is it a topology file?", path,
						     TOPO_FILE_MAX >> 20) :
		       fs_err_read("topology", path, errno);
	return 0;
}

int topo_read(struct topo *t, const char *path, const char *text)
{
	struct rd r = { .t = t, .path = path };
	char *own = NULL, *dup, *line, *save = NULL;
	int rc = 0;

	topo_release(t);
	if (!(t->path = strdup(path)))
		return fs_err_env("out of memory reading %s", path);
	if (!text) {
		if ((rc = topo_load_text(path, &own)))
			return rc;
		text = own;
	}
	if (topo_is_dot(text)) {
		rc = topo_parse_dot(t, path, text);
		free(own);
		if (!rc && !t->nln)
			rc = fs_err_usage("%s: no cables: write an edge per cable, e.g. \"h1\":\"eth2\" -- \"leaf1\":\"swp1\"",
					  path);
		return rc ? rc : topo_finish(t);
	}
	if (!(dup = strdup(text))) {
		free(own);
		return fs_err_env("out of memory reading %s", path);
	}
	for (line = dup; line && !rc; line = save) {
		char *nl = strchr(line, '\n'), *hash, *w, *wsave = NULL;

		save = nl ? nl + 1 : NULL;
		if (nl)
			*nl = 0;
		r.line++;
		if ((hash = strchr(line, '#')))
			*hash = 0;
		if (!(w = strtok_r(line, " \t\r", &wsave)))
			continue;
		if (!strcmp(w, "switch"))
			rc = parse_switch(&r, &wsave);
		else if (!strcmp(w, "link"))
			rc = parse_link(&r, &wsave);
		else
			rc = fs_err_usage("%s:%d: '%s': a line is 'switch NAME tier=...' or 'link DEV:PORT DEV:PORT ...'",
					  path, r.line, w);
	}
	free(dup);
	free(own);
	if (!rc && !t->nln)
		rc = fs_err_usage("%s: no links: write a line per cable, e.g. 'link h1:eth2 leaf1:swp1 rail=0'", path);
	return rc ? rc : topo_finish(t);
}

/* s for a message: at most 60 bytes, control bytes as \xNN */
static const char *shown(const char *s, char *buf, size_t len)
{
	size_t n = strlen(s);

	fs_escape_ctl(s, n > 60 ? 60 : n, buf, len);
	return buf;
}

int topo_design_ok(const struct topo *t)
{
	char b1[256], b2[256];
	size_t i;

	for (i = 0; i < t->nsw; i++) {
		size_t k;

		if (!topo_name_ok(t->sw[i].name) || (t->sw[i].pod && !topo_name_ok(t->sw[i].pod)))
			return fs_err_usage("switch '%s' (pod '%s'): a name outside fabscope-topology(5)'s grammar "
					    "(letters, digits, '.', '_', '-', '/'): nothing written",
					    shown(t->sw[i].name, b1, sizeof(b1)),
					    shown(t->sw[i].pod ? t->sw[i].pod : "", b2, sizeof(b2)));
		for (k = 0; k < t->sw[i].naddr; k++)	/* (topo_add_switch_addrs makes them so: inet_ntop's) */
			if (!*t->sw[i].addr[k] || t->sw[i].addr[k][strspn(t->sw[i].addr[k], "0123456789abcdefABCDEF.:")])
				return fs_err_usage("switch '%s': address '%s' is no IPv4 or IPv6 address: nothing "
						    "written", shown(t->sw[i].name, b1, sizeof(b1)),
						    shown(t->sw[i].addr[k], b2, sizeof(b2)));
	}
	for (i = 0; i < t->nln; i++) {
		const struct topo_link *l = &t->ln[i];
		const struct topo_end *e[2] = { &l->a, &l->b };
		int k;

		for (k = 0; k < 2; k++)
			if (!topo_name_ok(e[k]->dev) || !topo_name_ok(e[k]->port))
				return fs_err_usage("cable %zu, '%s:%s': a name outside fabscope-topology(5)'s grammar "
						    "(letters, digits, '.', '_', '-', '/'): nothing written", i + 1,
						    shown(e[k]->dev, b1, sizeof(b1)), shown(e[k]->port, b2, sizeof(b2)));
	}
	return 0;
}

int topo_write(const struct topo *t, FILE *f)
{
	size_t i, k;
	int rc;

	if ((rc = topo_design_ok(t)))
		return rc;

	fprintf(f, "# fabscope topology: %zu switches, %zu links (fabscope-topology(5))\n", t->nsw, t->nln);
	for (i = 0; i < t->nsw; i++) {
		const struct topo_switch *s = &t->sw[i];

		fprintf(f, "switch %s tier=%s", s->name, topo_tier_name(s->tier));
		if (s->pod)
			fprintf(f, " pod=%s", s->pod);
		if (s->plane >= 0)
			fprintf(f, " plane=%d", s->plane);
		if (s->rail >= 0)
			fprintf(f, " rail=%d", s->rail);
		for (k = 0; k < s->naddr; k++)
			fprintf(f, "%s%s", k ? "," : " addr=", s->addr[k]);
		fputc('\n', f);
	}
	for (i = 0; i < t->nln; i++) {
		const struct topo_link *l = &t->ln[i];

		fprintf(f, "link %s:%s %s:%s", l->a.dev, l->a.port, l->b.dev, l->b.port);
		if (l->rail >= 0)
			fprintf(f, " rail=%d", l->rail);
		if (l->plane >= 0)
			fprintf(f, " plane=%d", l->plane);
		if (l->speed_gbps > 0)
			fprintf(f, " speed=%gG", l->speed_gbps);
		fputc('\n', f);
	}
	return 0;
}
