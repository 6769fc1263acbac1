/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tool quote-fuzz: the quoting functions that keep data from becoming
 * code of another language, fuzzed against the real interpreter
 * (tests/t0280-unit-quote-fuzz.t).
 *
 *   quote-fuzz gnuplot N SEED   N random strings (quotes, backslashes, ';',
 *                               backquotes, '@', '$', newlines and other
 *                               control bytes, UTF-8, bytes over 0x7f, and
 *                               pieces of gnuplot that would run a command)
 *                               quoted by plot_gnuplot_quote, each printed
 *                               by real gnuplot (print s, in batches): each
 *                               must come back as it went in, byte for byte;
 *                               the same with the literal cut to a random
 *                               size (a prefix must come back, cut at a
 *                               whole character); each literal holds no
 *                               byte gnuplot makes anything of (a quote,
 *                               '`', '@', '$', a control byte) but in an
 *                               escape; and no command may have run (no
 *                               file CANARY in the directory gnuplot ran in).
 *                               One line of counts; exit 1 at the first
 *                               string that did not come back, shown.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../plots/plot.h"
#include "test-tool.h"

#define QF_MAX 48		/* bytes of a string, before quoting */
#define QF_BATCH 150		/* strings a gnuplot run prints */

static const char *const pieces[] = {
	"'", "''", "\"", "\\", ";", "`", "@", "$", "#", "\n", "\r", "\t", "\x01", "\x1b", "\x7f",
	"\xc3\xa9", "\xe4\xb8\xad", "\xf0\x9f\x98\x80", "\xff", "\x80", "\xc3",
	"system('touch CANARY')", "'; system(\"touch CANARY\"); x='", "`touch CANARY`", "@s",
	"\n!touch CANARY\n", "' . system('touch CANARY') . '", "x=1", " ", "a", "Z", "0", "q'",
};

static void random_string(uint64_t *seed, char *out)
{
	size_t n = 0, k = tool_rand(seed) % 8;

	while (k-- > 0) {
		const char *p = pieces[tool_rand(seed) % (sizeof(pieces) / sizeof(pieces[0]))];
		char byte[2] = { (char)(1 + tool_rand(seed) % 255), 0 };

		if (tool_rand(seed) % 4 == 0)
			p = byte;
		if (n + strlen(p) > QF_MAX)
			break;
		memcpy(out + n, p, strlen(p));
		n += strlen(p);
	}
	out[n] = 0;
}

/* what gnuplot must print for the literal q: its body, escapes decoded; -1 when q is not a
 * closed literal of plain bytes and \ooo escapes only */
static int decode(const char *q, char *out)
{
	size_t i, o = 0, n = strlen(q);

	if (n < 2 || q[0] != '"' || q[n - 1] != '"')
		return -1;
	for (i = 1; i + 1 < n; i++) {
		if (q[i] == '\\') {	/* \0ooo */
			if (i + 5 >= n || q[i + 1] != '0' || q[i + 2] < '0' || q[i + 2] > '3' || q[i + 3] < '0' ||
			    q[i + 3] > '7' || q[i + 4] < '0' || q[i + 4] > '7')
				return -1;
			out[o++] = (char)((q[i + 2] - '0') * 64 + (q[i + 3] - '0') * 8 + (q[i + 4] - '0'));
			i += 4;
		} else if (q[i] == '"' || q[i] == '`' || q[i] == '@' || q[i] == '$' || (unsigned char)q[i] < 0x20 ||
			   (unsigned char)q[i] >= 0x7f) {
			return -1;	/* (no byte that means anything to gnuplot is left as it is) */
		} else {
			out[o++] = q[i];
		}
	}
	out[o] = 0;
	return 0;
}

/* the literal is all of in, or a prefix of it when cut (and then one cut at a whole character) */
static int prefix_of(const char *lit, const char *in, int cut)
{
	char want[5 * QF_MAX + 8];
	size_t n;

	if (decode(lit, want))
		return 0;
	n = strlen(want);
	if (strncmp(want, in, n))
		return 0;
	if (!cut)
		return !in[n];
	if (((unsigned char)in[n] & 0xc0) == 0x80) {	/* a continuation byte next: of a lead before the cut? */
		size_t k = n;

		while (k > 0 && n - k < 3 && ((unsigned char)want[k - 1] & 0xc0) == 0x80)
			k--;
		/* (a lead byte takes up to 3 continuation bytes, as plot_gnuplot_quote reads them) */
		if (k > 0 && (unsigned char)want[k - 1] >= 0xc0 && n - (k - 1) < 4)
			return 0;
	}
	return 1;
}

/* gnuplot -e PROG in dir, its standard output into out (cap bytes): 0, or -1 */
static int run_gnuplot(const char *dir, const char *prog, char *out, size_t cap)
{
	int p[2], st = 0;
	size_t len = 0;
	pid_t pid;

	if (pipe(p))
		return -1;
	if ((pid = fork()) < 0)
		return -1;
	if (!pid) {
		int null = open("/dev/null", O_RDWR);

		if (null < 0 || dup2(null, 0) < 0 || dup2(p[1], 1) < 0 || chdir(dir))
			_exit(126);
		execlp("gnuplot", "gnuplot", "-e", prog, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	for (;;) {
		ssize_t r = read(p[0], out + len, cap - 1 - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(p[0]);
	out[len] = 0;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}

static void show(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f || *s == '\\')
			fprintf(stderr, "\\x%02x", (unsigned char)*s);
		else
			fputc(*s, stderr);
}

/* one batch: n literals printed by one gnuplot, what came back against what went in */
static int gnuplot_batch(const char *dir, char (*lit)[5 * QF_MAX + 8], int n, int *bad)
{
	size_t cap = (size_t)n * (8 * QF_MAX + 64) + 64, used = 0, at = 0;
	char *prog = malloc(cap), *out = malloc(cap), want[5 * QF_MAX + 8];
	int i, rc = 0;

	if (!prog || !out)
		abort();
	used += (size_t)snprintf(prog, cap, "set print '-'; ");
	for (i = 0; i < n; i++)
		used += (size_t)snprintf(prog + used, cap - used, "s%d=%s; print s%d; ", i, lit[i], i);
	if (run_gnuplot(dir, prog, out, cap)) {
		fprintf(stderr, "test-tool quote-fuzz: gnuplot failed on a batch\n");
		rc = -1;
	}
	for (i = 0; !rc && i < n; i++) {	/* (a string may hold newlines: by offsets, not lines) */
		size_t w;

		decode(lit[i], want);
		w = strlen(want);
		if (strncmp(out + at, want, w) || out[at + w] != '\n') {
			*bad = i;
			rc = -1;
			break;
		}
		at += w + 1;
	}
	if (!rc && out[at]) {
		fprintf(stderr, "test-tool quote-fuzz: gnuplot printed more than it was given\n");
		rc = -1;
	}
	free(prog);
	free(out);
	return rc;
}

static int fuzz_gnuplot(unsigned long n, uint64_t seed, const char *dir)
{
	static char in[QF_BATCH][QF_MAX + 1], lit[QF_BATCH][5 * QF_MAX + 8];
	unsigned long done = 0, cut = 0;
	struct stat st;
	int bad = -1;

	while (done < n) {
		int k, m = n - done < QF_BATCH ? (int)(n - done) : QF_BATCH;

		for (k = 0; k < m; k++) {
			size_t len = sizeof(lit[k]);

			random_string(&seed, in[k]);
			if (tool_rand(&seed) % 3 == 0) {	/* cut: a whole prefix, closed */
				len = 3 + tool_rand(&seed) % 24;
				cut++;
			}
			plot_gnuplot_quote(in[k], lit[k], len);
			if (!prefix_of(lit[k], in[k], len < sizeof(lit[k]))) {
				fprintf(stderr, "test-tool quote-fuzz: the literal is not what it quotes: ");
				show(lit[k]);
				fputc('\n', stderr);
				return 1;
			}
			if (strlen(lit[k]) >= len) {
				fprintf(stderr, "test-tool quote-fuzz: a literal that is not closed within %zu bytes: ", len);
				show(lit[k]);
				fputc('\n', stderr);
				return 1;
			}
		}
		if (gnuplot_batch(dir, lit, m, &bad)) {
			if (bad >= 0) {
				fprintf(stderr, "test-tool quote-fuzz: did not come back as it went in: ");
				show(in[bad]);
				fprintf(stderr, " (quoted ");
				show(lit[bad]);
				fprintf(stderr, ")\n");
			}
			return 1;
		}
		done += (unsigned long)m;
	}
	if (!stat("CANARY", &st) || chdir(dir) || !stat("CANARY", &st)) {
		fprintf(stderr, "test-tool quote-fuzz: a command ran: CANARY exists\n");
		return 1;
	}
	printf("quote-fuzz gnuplot: %lu strings (%lu cut) through gnuplot, each came back as it went in; no "
	       "command ran\n", done, cut);
	return 0;
}

int tool_quote_fuzz(int argc, const char **argv)
{
	unsigned long n, seed;
	int rc;

	if (argc != 4 && argc != 5)
		return usage_error("usage: test-tool quote-fuzz gnuplot N SEED [DIR]");
	if ((rc = tool_parse_ulong("N", argv[2], 1000000, &n)) || (rc = tool_parse_ulong("SEED", argv[3], ~0ul, &seed)))
		return -rc;
	if (!strcmp(argv[1], "gnuplot"))
		return fuzz_gnuplot(n, seed, argc == 5 ? argv[4] : ".");
	return usage_error("quote-fuzz: no language '%s' (gnuplot)", argv[1]);
}
