/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Table-driven option parsing, in the spirit of git's parse-options.
 *
 * A command describes its options once, in an array of struct opt ending
 * with OPT_END(); the same table parses argv, validates values and renders
 * the complete --help text, so usage can never forget an option.
 *
 * Accepted forms: -x VAL, -xVAL, --long VAL, --long=VAL, bundled booleans
 * (-bv), "--" to end options.  Positional arguments may appear anywhere and
 * are compacted to the front of argv.
 */
#ifndef FS_OPTIONS_H
#define FS_OPTIONS_H

#include <stdint.h>

#include "error.h"

enum opt_type {
	OPT_T_END,
	OPT_T_GROUP,	/* a heading in --help */
	OPT_T_BOOL,	/* int: set to 1 */
	OPT_T_COUNTUP,	/* int: incremented (-v -v) */
	OPT_T_INT,	/* int in [min, max] */
	OPT_T_COUNT,	/* uint64_t count, K/M/G suffixes (x1000) */
	OPT_T_SIZE,	/* uint64_t size, K/M/G suffixes (x1024) */
	OPT_T_SECONDS,	/* double seconds > 0 */
	OPT_T_NUMBER,	/* double >= 0, a plain number (a rate, a fraction) */
	OPT_T_STRING,	/* const char * */
	OPT_T_LIST,	/* struct opt_list: repeatable string */
	OPT_T_NOT_HERE,	/* another command's or tool's option: not in --help;
			 * given, it is one line: "unknown option 'X' (HELP)" */
};

struct opt_list {
	const char **v;
	int n;
};

struct opt {
	enum opt_type type;
	int short_name;
	const char *long_name;
	void *value;
	const char *argh;	/* placeholder in --help, e.g. "SIZE" */
	const char *help;
	long long min, max;	/* range for OPT_T_INT, COUNT and SIZE (max 0: none);
				 * OPT_T_STRING: min 1, not empty (OPT_FILE) */
};

#define OPT_END()                     { OPT_T_END, 0, NULL, NULL, NULL, NULL, 0, 0 }
#define OPT_GROUP(h)                  { OPT_T_GROUP, 0, NULL, NULL, NULL, (h), 0, 0 }
#define OPT_BOOL(s, l, v, h)          { OPT_T_BOOL, (s), (l), (v), NULL, (h), 0, 0 }
#define OPT_VERBOSE(v)                { OPT_T_COUNTUP, 'v', "verbose", (v), NULL, "say more (repeat for more)", 0, 0 }
#define OPT_INT(s, l, v, a, h, lo, hi) { OPT_T_INT, (s), (l), (v), (a), (h), (lo), (hi) }
#define OPT_COUNT(s, l, v, a, h, lo, hi) { OPT_T_COUNT, (s), (l), (v), (a), (h), (lo), (hi) }
#define OPT_SIZE(s, l, v, a, h, lo, hi) { OPT_T_SIZE, (s), (l), (v), (a), (h), (lo), (hi) }
#define OPT_SECONDS(s, l, v, a, h)    { OPT_T_SECONDS, (s), (l), (v), (a), (h), 0, 0 }
#define OPT_NUMBER(s, l, v, a, h)     { OPT_T_NUMBER, (s), (l), (v), (a), (h), 0, 0 }
/* seconds, where 0 is a meaningful value ("none") */
#define OPT_SECONDS0(s, l, v, a, h)   { OPT_T_SECONDS, (s), (l), (v), (a), (h), 1, 0 }
#define OPT_STRING(s, l, v, a, h)     { OPT_T_STRING, (s), (l), (v), (a), (h), 0, 0 }
/* a string that names a file or directory: an empty one is refused */
#define OPT_FILE(s, l, v, a, h)       { OPT_T_STRING, (s), (l), (v), (a), (h), 1, 0 }
#define OPT_LIST(s, l, v, a, h)       { OPT_T_LIST, (s), (l), (v), (a), (h), 0, 0 }
/* A flag users bring from elsewhere (perftest, iperf3, nccl-tests, a sister
 * command): h names what to give here instead, e.g.
 * OPT_NOT_HERE('P', NULL, "iperf3's -P N, parallel streams: here -q N") */
#define OPT_NOT_HERE(s, l, h)         { OPT_T_NOT_HERE, (s), (l), NULL, NULL, (h), 0, 0 }

/* Returned by opts_parse when --help was printed: the command returns 0. */
#define OPTS_HELP 1

/*
 * Parse argv[1..argc-1] (argv[0] is the command name).  On success the
 * positional arguments are moved to argv[0..n-1] and n is stored in *nargs;
 * returns 0, OPTS_HELP after printing help to stdout, or -FS_EXIT_USAGE
 * after printing one error line to stderr (for an unknown option, followed
 * by the usage lines and a pointer to --help).
 * usage: NULL-terminated usage lines; the first without "usage: ".
 * about: a paragraph printed by --help under the usage lines (may be NULL).
 */
int opts_parse(int argc, const char **argv, const struct opt *opts,
	       const char *const *usage, const char *about, int *nargs);

/*
 * Option values written in a file rather than on the command line (a plan's
 * keys, handed to a command as --key=value): where(long_name, value, ctx)
 * says where the value was written, e.g. "plan.ini:5: size '1Q' of [bw]", or
 * NULL when it was not.  A bad value is then reported as "PROG: WHERE: give
 * EXPECTED", PROG standing for the command's own name meanwhile.  NULL: none.
 */
struct opts_origin {
	const char *(*where)(const char *long_name, const char *value, void *ctx);
	void *ctx;
	const char *prog;
};
void opts_set_origin(const struct opts_origin *o);
/* Where --long_name's value was written, when it was (else NULL) ... */
const char *opts_where(const char *long_name, const char *value);
/* ... and a usage error said there: "PROG: WHERE: what fmt says" (exit 2). */
int opts_err_at(const char *where, const char *fmt, ...) FS_PRINTF(2, 3);

/* Full help (usage, about, every option) to stdout. */
void opts_help(const struct opt *opts, const char *const *usage,
	       const char *about);
/* "usage: ..." lines and a pointer to --help, to stderr. */
void opts_usage_short(const char *const *usage);

/* Edit distance of a and b (insert, delete, replace, swap two neighbours);
 * 1000 for words of 64 bytes or more. */
int opts_distance(const char *a, const char *b);

/*
 * The word a mistyped name most likely meant, among candidates offered one
 * by one (options, plan keys): the only one that name begins (of two
 * letters or more), else the nearest within two edits and under half the
 * name's length; NULL when none is.  The same rule everywhere, so that a
 * plan key is guessed as an option is:
 *
 *	struct opts_near n;
 *	opts_near_init(&n, typed);
 *	for (...) opts_near_offer(&n, word);
 *	if ((s = opts_near_best(&n))) ... "did you mean '%s'?"
 */
struct opts_near {
	const char *name;
	size_t len;
	const char *best, *prefixed;
	int bd, nprefixed;
};
void opts_near_init(struct opts_near *n, const char *name);
void opts_near_offer(struct opts_near *n, const char *word);
const char *opts_near_best(const struct opts_near *n);

/* Release what OPT_T_LIST options allocated. */
void opt_list_release(struct opt_list *l);

#endif
