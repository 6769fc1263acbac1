/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <math.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "options.h"
#include "units.h"

static void opt_name(const struct opt *o, int as_short, char *buf, size_t len)
{
	if (as_short || !o->long_name)
		snprintf(buf, len, "-%c", o->short_name);
	else
		snprintf(buf, len, "--%s", o->long_name);
}

static int takes_arg(const struct opt *o)
{
	return o->type != OPT_T_BOOL && o->type != OPT_T_COUNTUP && o->type != OPT_T_NOT_HERE;
}

/* An option of this command (not a group heading, not another's flag) */
static int is_option(const struct opt *o)
{
	return o->type != OPT_T_GROUP && o->type != OPT_T_NOT_HERE;
}

/* The flag w (as given) is another tool's: one line that says what to use */
static int not_here(const struct opt *o, const char *w)
{
	return fs_err_usage("unknown option '%s' (%s)", w, o->help);
}

static const char *what_expected(const struct opt *o)
{
	switch (o->type) {
	case OPT_T_INT: return "an integer";
	case OPT_T_COUNT: return "a count (e.g. 5000, 10K, 1M)";
	case OPT_T_SIZE: return "a size (e.g. 4096, 64K, 1M)";
	case OPT_T_SECONDS: return "a number of seconds (e.g. 2, 0.5, 250ms)";
	case OPT_T_NUMBER: return "a number (e.g. 100, 0.5)";
	default: return "a value";
	}
}

static const struct opts_origin *origin;

void opts_set_origin(const struct opts_origin *o)
{
	origin = o;
}

const char *opts_where(const char *long_name, const char *value)
{
	return origin && long_name && value ? origin->where(long_name, value, origin->ctx) : NULL;
}

int opts_err_at(const char *where, const char *fmt, ...)
{
	const char *prog = fs_progname();
	char msg[512];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fs_set_progname(origin ? origin->prog : prog);
	rc = fs_err_usage("%s: %s", where, msg);
	fs_set_progname(prog);
	return rc;
}

static int bad_value(const struct opt *o, int as_short, const char *arg)
{
	char name[64], expected[256];
	const char *where;

	opt_name(o, as_short, name, sizeof(name));
	if ((o->type == OPT_T_INT || o->type == OPT_T_COUNT ||
	     o->type == OPT_T_SIZE) && o->max)
		snprintf(expected, sizeof(expected), "%s from %lld to %lld", what_expected(o), o->min, o->max);
	else if ((o->type == OPT_T_COUNT || o->type == OPT_T_SIZE) && o->min > 0)
		snprintf(expected, sizeof(expected), "%s of at least %lld", what_expected(o), o->min);
	else if (o->type == OPT_T_SECONDS)	/* units_parse_seconds' range */
		snprintf(expected, sizeof(expected), "%s, %s and at most 1e7", what_expected(o),
			 o->min == 1 ? "0 or more" : "more than 0");
	else
		snprintf(expected, sizeof(expected), "%s", what_expected(o));
	if ((where = opts_where(o->long_name, arg)))
		return opts_err_at(where, "give %s", expected);
	return fs_err_usage("invalid value '%s' for option '%s': expected %s", arg, name, expected);
}

static int in_range(const struct opt *o, unsigned long long v)
{
	if ((long long)v < o->min && o->min > 0)
		return 0;
	return !o->max || v <= (unsigned long long)o->max;
}

/* "0", "0.0", "0s", "0ms": zero, as units_parse_seconds writes a duration */
static int zero_seconds(const char *arg)
{
	char *end;
	double v;

	if (!*arg || strpbrk(arg, "xX"))
		return 0;
	errno = 0;
	v = strtod(arg, &end);
	return !errno && end != arg && v == 0 && (!*end || !strcmp(end, "s") || !strcmp(end, "ms"));
}

static int set_value(const struct opt *o, int as_short, const char *arg)
{
	uint64_t u;
	char *end;
	long long ll;

	switch (o->type) {
	case OPT_T_BOOL:
		*(int *)o->value = 1;
		return 0;
	case OPT_T_COUNTUP:
		(*(int *)o->value)++;
		return 0;
	case OPT_T_INT:
		errno = 0;
		ll = strtoll(arg, &end, 10);
		if (errno || end == arg || *end || ll < o->min ||
		    (o->max && ll > o->max) || ll > INT_MAX || ll < INT_MIN)
			return bad_value(o, as_short, arg);
		*(int *)o->value = (int)ll;
		return 0;
	case OPT_T_COUNT:
		if (units_parse_count(arg, &u) || !in_range(o, u))
			return bad_value(o, as_short, arg);
		*(uint64_t *)o->value = u;
		return 0;
	case OPT_T_SIZE:
		if (units_parse_size(arg, &u) || !in_range(o, u))
			return bad_value(o, as_short, arg);
		*(uint64_t *)o->value = u;
		return 0;
	case OPT_T_SECONDS:
		if (o->min == 1 && zero_seconds(arg)) {	/* OPT_SECONDS0: 0 is a value */
			*(double *)o->value = 0;
			return 0;
		}
		if (units_parse_seconds(arg, (double *)o->value))
			return bad_value(o, as_short, arg);
		return 0;
	case OPT_T_NUMBER: {
		char *stop;
		double d;

		errno = 0;
		d = strtod(arg, &stop);
		if (errno || stop == arg || *stop || !(d >= 0) || !isfinite(d))
			return bad_value(o, as_short, arg);
		*(double *)o->value = d;
		return 0;
	}
	case OPT_T_STRING:
		if (o->min && !*arg) {	/* OPT_FILE: "" is no file */
			char name[64];

			opt_name(o, as_short, name, sizeof(name));
			return fs_err_usage("option '%s' takes a path (%s), not an empty string", name, o->argh);
		}
		*(const char **)o->value = arg;
		return 0;
	case OPT_T_LIST: {
		struct opt_list *l = o->value;
		const char **nv = realloc(l->v, (l->n + 1) * sizeof(*nv));

		if (!nv)
			return fs_err_env("out of memory");
		l->v = nv;
		l->v[l->n++] = arg;
		return 0;
	}
	default:
		return 0;
	}
}

void opt_list_release(struct opt_list *l)
{
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

void opts_usage_short(const char *const *usage)
{
	int i;

	for (i = 0; usage && usage[i]; i++)
		fprintf(stderr, "%s %s\n", i ? "   or:" : "usage:", usage[i]);
	fprintf(stderr, "Try '%s --help' for the options.\n", fs_progname());
}

static void print_wrapped(const char *text, int indent, int col)
{
	const char *p = text;
	int pos = col;

	while (*p) {
		const char *w = p;
		int wl;

		while (*w == ' ')
			w++;
		wl = (int)strcspn(w, " \n");
		if (pos > indent && pos + 1 + wl > 79) {
			printf("\n%*s", indent, "");
			pos = indent;
		} else if (pos > indent) {
			putchar(' ');
			pos++;
		} else if (pos < indent) {
			printf("%*s", indent - pos, "");
			pos = indent;
		}
		printf("%.*s", wl, w);
		pos += wl;
		p = w + wl;
		if (*p == '\n') {
			printf("\n");
			pos = 0;
			p++;
		}
	}
	printf("\n");
}

void opts_help(const struct opt *opts, const char *const *usage,
	       const char *about)
{
	const struct opt *o;
	int i;

	for (i = 0; usage && usage[i]; i++)
		printf("%s %s\n", i ? "   or:" : "usage:", usage[i]);
	if (about)
		printf("\n%s\n", about);
	for (o = opts; o && o->type != OPT_T_END; o++) {
		char lhs[96];
		int n = 0;

		if (o->type == OPT_T_GROUP) {
			printf("\n%s\n", o->help);
			continue;
		}
		if (o->type == OPT_T_NOT_HERE)
			continue;
		n += snprintf(lhs + n, sizeof(lhs) - n, "    ");
		if (o->short_name)
			n += snprintf(lhs + n, sizeof(lhs) - n, "-%c%s",
				      o->short_name, o->long_name ? ", " : "");
		else
			n += snprintf(lhs + n, sizeof(lhs) - n, "    ");
		if (o->long_name)
			n += snprintf(lhs + n, sizeof(lhs) - n, "--%s",
				      o->long_name);
		if (takes_arg(o))
			n += snprintf(lhs + n, sizeof(lhs) - n, " %s",
				      o->argh ? o->argh : "VALUE");
		printf("%s", lhs);
		if (n >= 30) {
			printf("\n");
			n = 0;
		}
		print_wrapped(o->help, 30, n);
	}
	printf("\n    -h, --help                show this help\n");
}

static const struct opt *find_long(const struct opt *opts, const char *name,
				   size_t len)
{
	const struct opt *o;

	for (o = opts; o->type != OPT_T_END; o++)
		if (o->long_name && strlen(o->long_name) == len &&
		    !strncmp(o->long_name, name, len))
			return o;
	return NULL;
}

static const struct opt *find_short(const struct opt *opts, int c)
{
	const struct opt *o;

	for (o = opts; o->type != OPT_T_END; o++)
		if (o->type != OPT_T_GROUP && o->short_name == c)
			return o;
	return NULL;
}

/* Edit distance of a and b (insert, delete, replace, swap two neighbours),
 * both shorter than 64 bytes, else a large number. */
int opts_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	int d[64][64];

	if (la >= 64 || lb >= 64)
		return 1000;
	for (i = 0; i <= la; i++)
		d[i][0] = (int)i;
	for (j = 0; j <= lb; j++)
		d[0][j] = (int)j;
	for (i = 1; i <= la; i++)
		for (j = 1; j <= lb; j++) {
			int v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[la][lb];
}

void opts_near_init(struct opts_near *n, const char *name)
{
	memset(n, 0, sizeof(*n));
	n->name = name;
	n->len = strlen(name);
	n->bd = 3;
}

void opts_near_offer(struct opts_near *n, const char *word)
{
	int d;

	if (!strcmp(word, n->prefixed ? n->prefixed : ""))
		return;	/* (offered twice: still the only one) */
	if (n->len >= 2 && !strncmp(word, n->name, n->len)) {
		n->prefixed = word;
		n->nprefixed++;
	}
	d = opts_distance(n->name, word);
	if (d < n->bd && 2 * (size_t)d < n->len) {
		n->bd = d;
		n->best = word;
	}
}

const char *opts_near_best(const struct opts_near *n)
{
	return n->nprefixed == 1 ? n->prefixed : n->best;
}

/* The long option that name most likely meant (opts_near's rule); NULL. */
static const char *suggest(const struct opt *opts, const char *name)
{
	const struct opt *o;
	struct opts_near n;

	opts_near_init(&n, name);
	for (o = opts; o->type != OPT_T_END; o++)
		if (o->long_name && is_option(o))
			opts_near_offer(&n, o->long_name);
	return opts_near_best(&n);
}

static int unknown(const struct opt *opts, const char *const *usage, const char *what)
{
	const char *s = what[1] == '-' ? suggest(opts, what + 2) : NULL;

	if (s)
		fs_err_usage("unknown option '%s'; did you mean '--%s'?", what, s);
	else
		fs_err_usage("unknown option '%s'", what);
	opts_usage_short(usage);
	return -FS_EXIT_USAGE;
}

static int missing_arg(const struct opt *o, int as_short)
{
	char name[64];

	opt_name(o, as_short, name, sizeof(name));
	return fs_err_usage("option '%s' requires %s", name, what_expected(o));
}

/*
 * The value of o is the next word, w: refuse one that is an option of this
 * command ("--plot --json" is a forgotten value, not a file named --json).
 * A value that begins with '-' can still be given as --name=VALUE or -xVALUE.
 */
static int value_is_option(const struct opt *opts, const struct opt *o, int as_short, const char *w)
{
	char name[64];
	int known;

	if (w[0] != '-' || !w[1])
		return 0;
	if (w[1] == '-') {
		const struct opt *k = find_long(opts, w + 2, strcspn(w + 2, "="));

		known = !w[2] || !strcmp(w + 2, "help") || (k && is_option(k));
	} else {
		const struct opt *k = find_short(opts, w[1]);

		known = w[1] == 'h' || (k && is_option(k));
	}
	if (!known)
		return 0;
	opt_name(o, as_short, name, sizeof(name));
	fs_err_usage("option '%s' requires %s, but the next word is the option '%s' "
		     "(a value that begins with '-': write %s%s%s)", name, what_expected(o), w,
		     o->long_name ? "--" : name, o->long_name ? o->long_name : "",
		     o->long_name ? "=VALUE" : "VALUE");
	return 1;
}

int opts_parse(int argc, const char **argv, const struct opt *opts,
	       const char *const *usage, const char *about, int *nargs)
{
	int i, npos = 0, only_args = 0, rc;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (only_args || a[0] != '-' || !a[1]) {
			argv[npos++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			only_args = 1;
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			opts_help(opts, usage, about);
			return OPTS_HELP;
		}
		if (a[1] == '-') {
			const char *name = a + 2, *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			const struct opt *o = find_long(opts, name, len);
			const char *val = eq ? eq + 1 : NULL;

			if (!o) {
				char what[96];

				snprintf(what, sizeof(what), "--%.*s", (int)len, name);
				return unknown(opts, usage, what);
			}
			if (o->type == OPT_T_NOT_HERE) {
				char what[96];

				snprintf(what, sizeof(what), "--%.*s", (int)len, name);
				return not_here(o, what);
			}
			if (!takes_arg(o)) {
				if (val)
					return fs_err_usage("option '--%s' takes no value", o->long_name);
			} else if (!val) {
				if (i + 1 >= argc)
					return missing_arg(o, 0);
				if (value_is_option(opts, o, 0, argv[i + 1]))
					return -FS_EXIT_USAGE;
				val = argv[++i];
			}
			rc = set_value(o, 0, val);
			if (rc)
				return rc;
			continue;
		}
		/* one or more short options */
		for (const char *p = a + 1; *p; p++) {
			const struct opt *o = find_short(opts, *p);

			if (!o) {
				char what[3] = { '-', *p, 0 };

				return unknown(opts, usage, what);
			}
			if (o->type == OPT_T_NOT_HERE) {
				char what[3] = { '-', *p, 0 };

				return not_here(o, what);
			}
			if (takes_arg(o)) {
				const char *val = p[1] ? p + 1 : NULL;

				if (!val) {
					if (i + 1 >= argc)
						return missing_arg(o, 1);
					if (value_is_option(opts, o, 1, argv[i + 1]))
						return -FS_EXIT_USAGE;
					val = argv[++i];
				}
				rc = set_value(o, 1, val);
				if (rc)
					return rc;
				break;
			}
			rc = set_value(o, 1, NULL);
			if (rc)
				return rc;
		}
	}
	*nargs = npos;
	return 0;
}
