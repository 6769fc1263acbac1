/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The report's section model: what a section says, built once, and two
 * back ends that write it as Markdown and as HTML.
 *
 * A model is a sequence of nodes in document order: blocks (headings,
 * paragraphs, lists, tables, plots), in lists items, in tables rows of
 * cells, and in headings, paragraphs, items and cells the spans of text.
 * A section builds it with the calls below; each new block, item, row,
 * cell or span goes where the last one of its container went.
 *
 * The two renderings do not say everything alike (the Markdown report has
 * the pairwise matrices, the HTML one puts the plots inline): rdoc_only()
 * says which back ends the nodes built next are for, and a node left out
 * of a back end takes what is inside it along.
 *
 * Building never fails the caller: when memory runs out the model keeps
 * what it had and remembers it (rdoc.oom).
 */
#ifndef FS_REPORT_DOC_H
#define FS_REPORT_DOC_H

#include <stddef.h>
#include <stdio.h>

/* which back ends a node is for */
#define RDOC_MD   1u
#define RDOC_HTML 2u
#define RDOC_BOTH 3u

/* what a cell holds: HTML gives each its class (th for RDOC_TH) */
enum rdoc_kind {
	RDOC_TEXT,
	RDOC_NUM,	/* a number: aligned right */
	RDOC_PASS,	/* a verdict that passed */
	RDOC_FAIL,	/* a failure */
	RDOC_WARN,	/* no verdict */
	RDOC_TH,	/* a row's title */
	RDOC_EMPTY,	/* nothing, not even a space in Markdown */
};

struct rdoc_node;

struct rdoc {
	struct rdoc_node *node;
	size_t nr, alloc;
	unsigned only;		/* RDOC_*: for the nodes built next */
	int span_depth;		/* where the spans built next go */
	int oom;		/* something could not be kept */
};

void rdoc_init(struct rdoc *d);
/* frees the nodes; d is empty again */
void rdoc_release(struct rdoc *d);

/* the back ends the nodes built from now on are for (RDOC_BOTH at first) */
void rdoc_only(struct rdoc *d, unsigned only);

/* ---- blocks ---- */

void rdoc_heading(struct rdoc *d, int level);
/* note: a remark (HTML: class note) */
void rdoc_para(struct rdoc *d, int note);
void rdoc_list(struct rdoc *d);
/* an item of the last list; cls, when not NULL, is its HTML class */
void rdoc_item(struct rdoc *d, const char *cls);
void rdoc_table(struct rdoc *d);
/* the last table's header row (Markdown: the line under it) */
void rdoc_head(struct rdoc *d);
void rdoc_row(struct rdoc *d);
/* a cell of the last row; strong: in bold in Markdown (a verdict column) */
void rdoc_cell(struct rdoc *d, enum rdoc_kind kind, int strong);
/* a plot: Markdown links plots/file, HTML puts the SVG at path inline */
void rdoc_plot(struct rdoc *d, const char *file, const char *title, const char *path);

/* ---- spans, into the last heading, paragraph, item or cell ---- */

/* text: escaped in both */
void rdoc_text(struct rdoc *d, const char *s);
/* text the Markdown writes as it stands (HTML escapes it): a string literal of report/'s own
 * markup ("**", ": "), never data (ci/check-tree's rule "markup") */
void rdoc_lit(struct rdoc *d, const char *s);
/* printf-style: rdoc_text (lit 0) or rdoc_lit (lit 1) */
void rdoc_spanf(struct rdoc *d, int lit, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define rdoc_textf(d, ...) rdoc_spanf((d), 0, __VA_ARGS__)
#define rdoc_litf(d, ...) rdoc_spanf((d), 1, __VA_ARGS__)
void rdoc_bold(struct rdoc *d, const char *s);
/* code: HTML's <code>; Markdown writes it as text (escaped: a code span could not be) */
void rdoc_code(struct rdoc *d, const char *s);
/* a verdict word: HTML shows it as a badge (pass 1: passed, 0: failed, -1: no verdict), Markdown as text */
void rdoc_verdict(struct rdoc *d, int pass, const char *s);
/* a symbol, spelled md in Markdown and html in HTML (both as they stand) */
void rdoc_sym(struct rdoc *d, const char *md, const char *html);

/* a cell of one span: rdoc_cell, then rdoc_textf */
void rdoc_cellf(struct rdoc *d, enum rdoc_kind kind, int strong, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* ---- back ends ---- */

void rdoc_md(const struct rdoc *d, FILE *f);
void rdoc_html(const struct rdoc *d, FILE *f);

/* The one escaping function of each output (doc.c says what each escapes and why): s as
 * Markdown text, anywhere in a line (a paragraph, a heading, a list item, a table cell,
 * bold, an image's alt text; at_start: the first thing of a paragraph, heading or item):
 * nothing in it becomes markup or HTML */
void report_md_text(FILE *f, const char *s, int at_start);
/* s as HTML text or a double-quoted attribute: & < > " ' escaped */
void report_html_escape(FILE *f, const char *s);

#endif
