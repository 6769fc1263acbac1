/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The gnuplot runner (plot.c): the templates of plots/ into SVG files, for
 * the report and for pcap.
 */
#ifndef FS_PLOTS_PLOT_H
#define FS_PLOTS_PLOT_H

#include <stddef.h>

/* The folder of the gnuplot templates (FABSCOPE_PLOTS, a build tree the binary runs from, or
 * DATADIR/plots): 0, or -1. */
int plot_find_templates(char *out, size_t len);
/* where the templates were looked for, for messages: $FABSCOPE_PLOTS, else
 * the compiled-in DATADIR/plots */
const char *plot_templates_default(void);
/* in, for a single-quoted string of gnuplot's -e: quotes and backslashes become '_' */
void plot_gnuplot_quote(const char *in, char *out, size_t len);
/* gnuplot -e VARS TDIR/TMPL, at most 10 s: 0 when SVG was written, else -1 and why. */
int plot_gnuplot(const char *tdir, const char *tmpl, const char *vars, const char *svg, char *why,
		 size_t wlen);

#endif
