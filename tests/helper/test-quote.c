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
#include "../../report/doc.h"
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

/* ---- Markdown: report/doc.c's report_md_text, through cmark-gfm ---- */

#define MF_MAX 40
#define MF_BATCH 100
#define MF_CTX 6	/* paragraph, heading, list item, table cell, image alt, bold */

static const char *const md_pieces[] = {
	"<img src=x onerror=alert(1)>", "x](y)", "[", "]", "![a](b)", "**", "__", "_", "*", "`", "```",
	"~~", "~", "|", "\\", "&amp;", "&lt;", "&#60;", "#", "##", "- ", "+ ", "1. ", "1) ", "> ", "=",
	"===", "---", "***", "    ", "  ", "\t", "\n", "\r", "<http://x>", "<a@b.c>", "$x$", "{", "}",
	"(", ")", "!", ":", ".", "0", "9", "a", "Z", "\xc3\xa9", "\xe4\xb8\xad", "\xf0\x9f\x98\x80",
	" ", "<", ">", "\"", "'", "&", "<!-- c -->", "<script>", "\\[", "\\*", " #", "#x",
};

static void md_string(uint64_t *seed, char *out)
{
	size_t n = 0, k = 1 + tool_rand(seed) % 6;

	while (k-- > 0) {
		const char *p = md_pieces[tool_rand(seed) % (sizeof(md_pieces) / sizeof(md_pieces[0]))];

		if (n + strlen(p) > MF_MAX)
			break;
		memcpy(out + n, p, strlen(p));
		n += strlen(p);
	}
	out[n] = 0;
	/* (ends with a character that is not blank: what cmark trims at the end of a block is no markup,
	 * and the checks below need not guess it) */
	if (!n || (unsigned char)out[n - 1] <= 0x20)
		strcpy(out + n, "z");
}

/* s as the text cmark gives back: control bytes as spaces, & < > " as entities; trimmed
 * both ends when trim */
static void md_expect(const char *s, int trim, char *out, size_t len)
{
	size_t o = 0, a = 0, b = strlen(s);

	while (trim && a < b && (unsigned char)s[a] <= 0x20)
		a++;
	while (trim && b > a && (unsigned char)s[b - 1] <= 0x20)
		b--;
	for (; a < b && o + 8 < len; a++) {
		unsigned char c = (unsigned char)s[a];

		o += (size_t)snprintf(out + o, len - o, "%s", c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" :
				      c == '"' ? "&quot;" : "");
		if (!strchr("&<>\"", c) || !c)
			out[o++] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
	}
	out[o] = 0;
}

/* context k of s, escaped, into the document f */
static void md_block(FILE *f, const char *s, int k)
{
	switch (k) {
	case 0: report_md_text(f, s, 1); break;
	case 1: fputs("## ", f); report_md_text(f, s, 1); break;
	case 2: fputs("- ", f); report_md_text(f, s, 1); break;
	case 3: fputs("| h |\n|---|\n| ", f); report_md_text(f, s, 0); fputs(" |", f); break;
	case 4: fputs("![", f); report_md_text(f, s, 0); fputs("](p.svg)", f); break;
	default: fputs("a **", f); report_md_text(f, s, 0); fputs("** b", f); break;
	}
}

/* what cmark must give for context k of s (bold: either form, alt the other) */
static void md_want(const char *s, int k, char *out, char *alt, size_t len)
{
	char e[8 * MF_MAX + 64], t[8 * MF_MAX + 64];

	md_expect(s, 0, e, sizeof(e));
	md_expect(s, 1, t, sizeof(t));
	alt[0] = 0;
	switch (k) {
	case 0: snprintf(out, len, "<p>%s</p>\n", e); break;
	case 1: snprintf(out, len, "<h2>%s</h2>\n", e); break;
	case 2: snprintf(out, len, "<ul>\n<li>%s</li>\n</ul>\n", e); break;
	case 3: snprintf(out, len, "<table>\n<thead>\n<tr>\n<th>h</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>%s</td>\n"
			 "</tr>\n</tbody>\n</table>\n", t); break;
	case 4: snprintf(out, len, "<p><img src=\"p.svg\" alt=\"%s\" /></p>\n", e); break;
	default:
		snprintf(out, len, "<p>a <strong>%s</strong> b</p>\n", e);
		snprintf(alt, len, "<p>a **%s** b</p>\n", e);
		break;
	}
}

/* cmark-gfm (tables, strikethrough; raw HTML passed through, so that any would show) on doc */
static char *run_cmark(const char *doc, size_t dlen)
{
	char tmp[] = "/tmp/fabscope-md-XXXXXX";
	int fd = mkstemp(tmp), p[2], st = 0;
	size_t cap = 1 << 20, len = 0;
	char *out = malloc(cap);
	pid_t pid;

	if (fd < 0 || !out || write(fd, doc, dlen) != (ssize_t)dlen || pipe(p) || (pid = fork()) < 0)
		abort();
	if (!pid) {
		if (dup2(fd, 0) < 0 || lseek(0, 0, SEEK_SET) || dup2(p[1], 1) < 0)
			_exit(126);
		execlp("cmark-gfm", "cmark-gfm", "--unsafe", "-e", "table", "-e", "strikethrough", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	close(fd);
	unlink(tmp);
	for (;;) {
		ssize_t r;

		if (len + 65536 > cap) {
			char *grown = realloc(out, cap *= 2);

			if (!grown)
				abort();
			out = grown;
		}
		r = read(p[0], out + len, cap - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(p[0]);
	out[len] = 0;
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "test-tool quote-fuzz: cmark-gfm failed (%s)\n",
			WIFEXITED(st) && WEXITSTATUS(st) == 127 ? "not installed?" : "exit");
		free(out);
		return NULL;
	}
	return out;
}

static int md_batch(char (*in)[MF_MAX + 2], int n)
{
	char *doc = NULL, *out, *at, marker[64], want[16 * MF_MAX + 256], alt[16 * MF_MAX + 256];
	size_t dlen = 0;
	FILE *f = open_memstream(&doc, &dlen);
	int i, k, rc = 0;

	if (!f)
		abort();
	for (i = 0; i < n; i++)
		for (k = 0; k < MF_CTX; k++) {
			md_block(f, in[i], k);
			fprintf(f, "\n\nSEP%dx%d\n\n", i, k);
		}
	fclose(f);
	if (!(out = run_cmark(doc, dlen))) {
		free(doc);
		return -1;
	}
	at = out;
	for (i = 0; i < n && !rc; i++)
		for (k = 0; k < MF_CTX && !rc; k++) {
			char *end;

			snprintf(marker, sizeof(marker), "<p>SEP%dx%d</p>\n", i, k);
			md_want(in[i], k, want, alt, sizeof(want));
			if (!(end = strstr(at, marker)) ||
			    !(((size_t)(end - at) == strlen(want) && !strncmp(at, want, strlen(want))) ||
			      (*alt && (size_t)(end - at) == strlen(alt) && !strncmp(at, alt, strlen(alt))))) {
				fprintf(stderr, "test-tool quote-fuzz: markdown context %d did not come back as text: ", k);
				show(in[i]);
				fprintf(stderr, "\n  wanted: ");
				show(want);
				fprintf(stderr, "\n  got:    ");
				if (end)
					*end = 0;
				show(at);
				fputc('\n', stderr);
				rc = -1;
				break;
			}
			at = end + strlen(marker);
		}
	free(out);
	free(doc);
	return rc;
}

static int fuzz_markdown(unsigned long n, uint64_t seed)
{
	static char in[MF_BATCH][MF_MAX + 2];
	unsigned long done = 0;

	while (done < n) {
		int k, m = n - done < MF_BATCH ? (int)(n - done) : MF_BATCH;

		for (k = 0; k < m; k++)
			md_string(&seed, in[k]);
		if (md_batch(in, m))
			return 1;
		done += (unsigned long)m;
	}
	printf("quote-fuzz markdown: %lu strings, each in %d places of a Markdown document, came back from "
	       "cmark-gfm as text: no tag, link, image, list, heading or code\n", done, MF_CTX);
	return 0;
}

int tool_quote_fuzz(int argc, const char **argv)
{
	unsigned long n, seed;
	int rc;

	if (argc != 4 && argc != 5)
		return usage_error("usage: test-tool quote-fuzz gnuplot|markdown N SEED [DIR]");
	if ((rc = tool_parse_ulong("N", argv[2], 1000000, &n)) || (rc = tool_parse_ulong("SEED", argv[3], ~0ul, &seed)))
		return -rc;
	if (!strcmp(argv[1], "gnuplot"))
		return fuzz_gnuplot(n, seed, argc == 5 ? argv[4] : ".");
	if (!strcmp(argv[1], "markdown"))
		return fuzz_markdown(n, seed);
	return usage_error("quote-fuzz: no language '%s' (gnuplot, markdown)", argv[1]);
}
