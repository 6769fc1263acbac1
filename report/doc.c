/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The report's section model and its Markdown and HTML back ends (doc.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/alloc.h"
#include "doc.h"

enum rdoc_type {
	RN_HEADING, RN_PARA, RN_LIST, RN_TABLE, RN_PLOT,	/* blocks: depth 0 */
	RN_ITEM, RN_HEAD, RN_ROW,				/* depth 1 */
	RN_CELL,						/* depth 2 */
	RN_TEXT, RN_LIT, RN_BOLD, RN_CODE, RN_VERDICT, RN_SYM,	/* spans: below their container */
};

struct rdoc_node {
	unsigned char type, kind, only, strong;
	int depth;
	int level;		/* a heading's; a verdict's pass */
	char *text;		/* a span's text; an item's class; a plot's file */
	char *alt;		/* a symbol's HTML; a plot's title */
	char *path;		/* a plot's SVG */
};

/* ---- building ---- */

void rdoc_init(struct rdoc *d)
{
	memset(d, 0, sizeof(*d));
	d->only = RDOC_BOTH;
}

void rdoc_release(struct rdoc *d)
{
	size_t i;

	for (i = 0; i < d->nr; i++) {
		free(d->node[i].text);
		free(d->node[i].alt);
		free(d->node[i].path);
	}
	free(d->node);
	rdoc_init(d);
}

void rdoc_only(struct rdoc *d, unsigned only)
{
	d->only = only;
}

static char *dup_or_null(struct rdoc *d, const char *s)
{
	char *p;

	if (!s)
		return NULL;
	if (!(p = strdup(s)))
		d->oom = 1;
	return p;
}

/* a new node of type at depth, or NULL (d->oom) */
static struct rdoc_node *add(struct rdoc *d, enum rdoc_type type, int depth)
{
	struct rdoc_node *n;

	if (FS_ALLOC_GROW(d->node, d->nr + 1, d->alloc)) {
		d->oom = 1;
		return NULL;
	}
	n = &d->node[d->nr++];
	memset(n, 0, sizeof(*n));
	n->type = (unsigned char)type;
	n->only = (unsigned char)d->only;
	n->depth = depth;
	return n;
}

void rdoc_heading(struct rdoc *d, int level)
{
	struct rdoc_node *n = add(d, RN_HEADING, 0);

	if (n)
		n->level = level;
	d->span_depth = 1;
}

void rdoc_para(struct rdoc *d, int note)
{
	struct rdoc_node *n = add(d, RN_PARA, 0);

	if (n)
		n->level = note;
	d->span_depth = 1;
}

void rdoc_list(struct rdoc *d)
{
	add(d, RN_LIST, 0);
}

void rdoc_item(struct rdoc *d, const char *cls)
{
	struct rdoc_node *n = add(d, RN_ITEM, 1);

	if (n)
		n->text = dup_or_null(d, cls);
	d->span_depth = 2;
}

void rdoc_table(struct rdoc *d)
{
	add(d, RN_TABLE, 0);
}

void rdoc_head(struct rdoc *d)
{
	add(d, RN_HEAD, 1);
}

void rdoc_row(struct rdoc *d)
{
	add(d, RN_ROW, 1);
}

void rdoc_cell(struct rdoc *d, enum rdoc_kind kind, int strong)
{
	struct rdoc_node *n = add(d, RN_CELL, 2);

	if (n) {
		n->kind = (unsigned char)kind;
		n->strong = !!strong;
	}
	d->span_depth = 3;
}

void rdoc_plot(struct rdoc *d, const char *file, const char *title, const char *path)
{
	struct rdoc_node *n = add(d, RN_PLOT, 0);

	if (n) {
		n->text = dup_or_null(d, file);
		n->alt = dup_or_null(d, title);
		n->path = dup_or_null(d, path);
	}
}

static struct rdoc_node *span(struct rdoc *d, enum rdoc_type type, const char *s)
{
	struct rdoc_node *n = add(d, type, d->span_depth);

	if (n)
		n->text = dup_or_null(d, s);
	return n;
}

static void spanv(struct rdoc *d, enum rdoc_type type, const char *fmt, va_list ap)
{
	struct rdoc_node *n = add(d, type, d->span_depth);

	if (n && vasprintf(&n->text, fmt, ap) < 0) {
		n->text = NULL;
		d->oom = 1;
	}
}

void rdoc_text(struct rdoc *d, const char *s)
{
	span(d, RN_TEXT, s);
}

void rdoc_lit(struct rdoc *d, const char *s)
{
	span(d, RN_LIT, s);
}

void rdoc_spanf(struct rdoc *d, int lit, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	spanv(d, lit ? RN_LIT : RN_TEXT, fmt, ap);
	va_end(ap);
}

void rdoc_bold(struct rdoc *d, const char *s)
{
	span(d, RN_BOLD, s);
}

void rdoc_code(struct rdoc *d, const char *s)
{
	span(d, RN_CODE, s);
}

void rdoc_verdict(struct rdoc *d, int pass, const char *s)
{
	struct rdoc_node *n = span(d, RN_VERDICT, s);

	if (n)
		n->level = pass;
}

void rdoc_sym(struct rdoc *d, const char *md, const char *html)
{
	struct rdoc_node *n = span(d, RN_SYM, md);

	if (n)
		n->alt = dup_or_null(d, html);
}

void rdoc_cellf(struct rdoc *d, enum rdoc_kind kind, int strong, const char *fmt, ...)
{
	va_list ap;

	rdoc_cell(d, kind, strong);
	va_start(ap, fmt);
	spanv(d, RN_TEXT, fmt, ap);
	va_end(ap);
}

/* ---- escaping ---- */

/*
 * Text in Markdown: the one escaping function of the Markdown report, for
 * every name, label, phase, path, reason, verdict and plot title (and
 * every span of text: report/ writes nothing else as it stands but string
 * literals, ci/check-tree's rule "markup").  CommonMark makes a literal
 * character of any ASCII punctuation after a backslash, so:
 *   - \ ` * _ [ ] < & | ~ $ are escaped wherever they are (escapes, code,
 *     emphasis, links and images, HTML and autolinks, entities, table
 *     cells, GFM's strikethrough, the math of some viewers): no tag, link,
 *     image or span can be opened, nor a cell closed;
 *   - a control character (a newline) is a space: the text stays on its
 *     line;
 *   - at_start (the text begins a paragraph, a heading or a list item),
 *     what would open a block there: leading blanks (the first written
 *     &#32;: four would make a code block), '>', and '-', '+', '#', '='
 *     before a blank, the end or the same character (a list, a heading, a
 *     rule), digits then '.' or ')' before a blank or the end (a numbered
 *     list), and a run of '#' that ends it after a blank (a heading's
 *     closing sequence, which would be dropped).
 * A viewer may still trim the blanks around a cell or a paragraph, and
 * link a bare URL or e-mail address (GFM's autolink extension): neither is
 * markup of ours.  tests/t0280 fuzzes it through cmark-gfm in a paragraph,
 * a heading, a list item, a table cell, bold and an image's alt text.
 */
void report_md_text(FILE *f, const char *s, int at_start)
{
	size_t n = strlen(s), lead = 0, i, d = 0, hash = 0;

	while (at_start && lead < n && ((unsigned char)s[lead] <= 0x20 || s[lead] == 0x7f))
		lead++;
	while (at_start && lead + d < n && s[lead + d] >= '0' && s[lead + d] <= '9')
		d++;
	while (at_start && hash < n && s[n - 1 - hash] == '#')	/* a heading's closing "  ##" */
		hash++;
	if (hash == n || (hash && (unsigned char)s[n - 1 - hash] > 0x20 && s[n - 1 - hash] != 0x7f))
		hash = 0;
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		int starts = at_start && i == lead;
		int next_blank = i + 1 >= n || (unsigned char)s[i + 1] <= 0x20 || s[i + 1] == 0x7f;

		if (at_start && i == 0 && lead)
			fputs("&#32;", f);
		else if (ch < 0x20 || ch == 0x7f)
			fputc(' ', f);
		else if (strchr("\\`*_[]<&|~$", ch) || (starts && ch == '>') ||
			 (starts && strchr("-+#=", ch) && (next_blank || s[i + 1] == (char)ch)) ||
			 (d && i == lead + d && (ch == '.' || ch == ')') && next_blank) || (hash && i == n - hash))
			fprintf(f, "\\%c", ch);
		else
			fputc(ch, f);
	}
}

void report_html_escape(FILE *f, const char *s)
{
	for (; *s; s++)
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*s, f);
		}
}

/* ---- the walk both back ends share ---- */

/* a node being written: what it is in, and for a row how many cells it had */
struct frame {
	const struct rdoc_node *n, *in;
	int cells;
	int kids;		/* the nodes opened in it so far */
	int first;		/* the first thing in its container */
};

struct backend {
	unsigned only;
	void (*open)(FILE *f, const struct frame *fr);
	void (*close)(FILE *f, const struct frame *fr);
};

/* the nodes of d in order, those not for be left out with what is inside them */
static void walk(const struct rdoc *d, const struct backend *be, FILE *f)
{
	struct frame st[8];
	int top = 0;
	size_t i = 0;

	while (i < d->nr) {
		const struct rdoc_node *n = &d->node[i];

		while (top && st[top - 1].n->depth >= n->depth) {
			top--;
			be->close(f, &st[top]);
		}
		if (!(n->only & be->only)) {	/* skip it and what it holds */
			for (i++; i < d->nr && d->node[i].depth > n->depth; i++)
				;
			continue;
		}
		if (n->type == RN_CELL && top)
			st[top - 1].cells++;
		if (top < (int)(sizeof(st) / sizeof(st[0]))) {
			st[top].n = n;
			st[top].in = top ? st[top - 1].n : NULL;
			st[top].cells = 0;
			st[top].kids = 0;
			st[top].first = !top || !st[top - 1].kids++;
			be->open(f, &st[top]);
			top++;
		}
		i++;
	}
	while (top) {
		top--;
		be->close(f, &st[top]);
	}
}

/* ---- Markdown ---- */

static void md_open(FILE *f, const struct frame *fr)
{
	const struct rdoc_node *n = fr->n;

	switch (n->type) {
	case RN_HEADING: fprintf(f, "%.*s ", n->level, "######"); break;
	case RN_ITEM: fputs("- ", f); break;
	case RN_HEAD: case RN_ROW: fputc('|', f); break;
	case RN_CELL: fputs(n->strong ? " **" : n->kind == RDOC_EMPTY ? "" : " ", f); break;
	case RN_PLOT:	/* (the file: a name report/plots.c made, its characters plain) */
		fputs("![", f);
		report_md_text(f, n->alt, 0);
		fputs("](plots/", f);
		report_md_text(f, n->text, 0);
		fputs(")\n\n", f);
		break;
	case RN_TEXT: case RN_VERDICT: case RN_CODE:
		report_md_text(f, n->text, fr->first && fr->in && fr->in->type != RN_CELL);
		break;
	case RN_LIT: case RN_SYM: fputs(n->text, f); break;	/* (string literals of report/ only) */
	case RN_BOLD: fputs("**", f); report_md_text(f, n->text, 0); fputs("**", f); break;
	default: break;
	}
}

static void md_close(FILE *f, const struct frame *fr)
{
	const struct rdoc_node *n = fr->n;
	int cells = fr->cells;

	switch (n->type) {
	case RN_HEADING: case RN_PARA: fputs("\n\n", f); break;
	case RN_LIST: case RN_TABLE: case RN_ITEM: case RN_ROW: fputc('\n', f); break;
	case RN_HEAD:
		fputs("\n|", f);
		while (cells-- > 0)
			fputs("---|", f);
		fputc('\n', f);
		break;
	case RN_CELL: fputs(n->strong ? "** |" : " |", f); break;
	default: break;
	}
}

void rdoc_md(const struct rdoc *d, FILE *f)
{
	static const struct backend md = { RDOC_MD, md_open, md_close };

	walk(d, &md, f);
}

/* ---- HTML ---- */

/* the <svg> element of the file at path, inline */
static void html_svg(FILE *f, const char *path)
{
	FILE *s = fopen(path, "r");
	char buf[8192];
	size_t n;
	int started = 0;

	if (!s) {
		fputs("<p class=\"note\">(plot missing)</p>", f);
		return;
	}
	/* drop the XML prolog and doctype: the <svg> element goes inline */
	while (!started && fgets(buf, sizeof(buf), s)) {
		char *p = strstr(buf, "<svg");

		if (p) {
			fputs(p, f);
			started = 1;
		}
	}
	while ((n = fread(buf, 1, sizeof(buf), s)) > 0)
		fwrite(buf, 1, n, f);
	fclose(s);
}

static const char *html_cell_class(const struct rdoc_node *n)
{
	static const char *const cls[] = {
		[RDOC_NUM] = "num", [RDOC_PASS] = "pass", [RDOC_FAIL] = "fail", [RDOC_WARN] = "warn",
	};

	return n->kind < sizeof(cls) / sizeof(cls[0]) ? cls[n->kind] : NULL;
}

/* a header row's cell or a row's title */
static int html_th(const struct frame *fr)
{
	return fr->n->kind == RDOC_TH || (fr->in && fr->in->type == RN_HEAD);
}

static void html_open(FILE *f, const struct frame *fr)
{
	const struct rdoc_node *n = fr->n;

	switch (n->type) {
	case RN_HEADING: fprintf(f, "<h%d>", n->level); break;
	case RN_PARA: fputs(n->level ? "<p class=\"note\">" : "<p>", f); break;
	case RN_LIST: fputs("<ul>\n", f); break;
	case RN_TABLE: fputs("<table>", f); break;
	case RN_ITEM:
		if (n->text)
			fprintf(f, "<li class=\"%s\">", n->text);
		else
			fputs("<li>", f);
		break;
	case RN_HEAD: case RN_ROW: fputs("<tr>", f); break;
	case RN_CELL:
		if (html_th(fr))
			fputs("<th>", f);
		else if (html_cell_class(n))
			fprintf(f, "<td class=\"%s\">", html_cell_class(n));
		else
			fputs("<td>", f);
		break;
	case RN_PLOT:
		fputs("<figure>", f);
		html_svg(f, n->path);
		fputs("<figcaption>", f);
		report_html_escape(f, n->alt);
		fputs("</figcaption></figure>\n", f);
		break;
	case RN_TEXT: case RN_LIT: report_html_escape(f, n->text); break;
	case RN_SYM: fputs(n->alt, f); break;
	case RN_BOLD: fputs("<b>", f); report_html_escape(f, n->text); fputs("</b>", f); break;
	case RN_CODE: fputs("<code>", f); report_html_escape(f, n->text); fputs("</code>", f); break;
	case RN_VERDICT:
		fprintf(f, "<span class=\"verdict %s\">", n->level > 0 ? "pass" : n->level ? "warn" : "fail");
		report_html_escape(f, n->text);
		fputs("</span>", f);
		break;
	default: break;
	}
}

static void html_close(FILE *f, const struct frame *fr)
{
	const struct rdoc_node *n = fr->n;

	switch (n->type) {
	case RN_HEADING: fprintf(f, "</h%d>\n", n->level); break;
	case RN_PARA: fputs("</p>\n", f); break;
	case RN_LIST: fputs("</ul>\n", f); break;
	case RN_TABLE: fputs("</table>\n", f); break;
	case RN_ITEM: fputs("</li>\n", f); break;
	case RN_HEAD: case RN_ROW: fputs("</tr>\n", f); break;
	case RN_CELL: fputs(html_th(fr) ? "</th>" : "</td>", f); break;
	default: break;
	}
}

void rdoc_html(const struct rdoc *d, FILE *f)
{
	static const struct backend html = { RDOC_HTML, html_open, html_close };

	walk(d, &html, f);
}
