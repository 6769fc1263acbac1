/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The gnuplot runner (plot.c): the templates of plots/ into SVG files, for
 * the report and for pcap.
 *
 * Nothing from data or paths becomes gnuplot code.  gnuplot gets its
 * variables in -e as literals made by plot_gnuplot_quote (the one quoting
 * function: tests/t0280's fuzz sends random strings through real gnuplot
 * and sees each come back as it went in), runs in the folder of the plot
 * (so its data files are bare names, never paths), writes the SVG to its
 * standard output (a file made by core/outfile.h: gnuplot opens no file
 * for writing), and its messages to a log beside it.
 */
#ifndef FS_PLOTS_PLOT_H
#define FS_PLOTS_PLOT_H

#include <stddef.h>

#include "../core/outfile.h"

/* The folder of the gnuplot templates (FABSCOPE_PLOTS, a build tree the binary runs from, or
 * DATADIR/plots): 0, or -1. */
int plot_find_templates(char *out, size_t len);
/* where the templates were looked for, for messages: $FABSCOPE_PLOTS, else
 * the compiled-in DATADIR/plots */
const char *plot_templates_default(void);
/*
 * in as a gnuplot string literal, quotes included, into out (len its size,
 * at least 3): double-quoted, every byte but letters, digits and " ._-,:/+=()"
 * written as an octal escape, \0ooo (after "\0" gnuplot reads up to three
 * digits: a digit after the escape is never taken into it).  Inside double
 * quotes gnuplot would run a backquoted command, and a single-quoted string
 * cannot start with a quote; an escape is neither: the string gnuplot gets
 * is in, byte for byte (a newline too, which no line of a loaded file then
 * holds).  Cut to fit,
 * never inside an escape or a UTF-8 character: the literal is always
 * closed.  Its length.
 */
size_t plot_gnuplot_quote(const char *in, char *out, size_t len);
/* "NAME=LITERAL; " (plot_gnuplot_quote) and "NAME=NUMBER; " appended to vars (len its size);
 * name is the caller's constant */
void plot_var_str(char *vars, size_t len, const char *name, const char *value);
void plot_var_num(char *vars, size_t len, const char *name, double value);
/*
 * gnuplot -e VARS TDIR/TMPL in the folder dir, at most 10 s, the SVG into
 * dir/svg (made as outfile.h makes files: whole or not there): 0 when it
 * was written, else -1 and why (gnuplot's first line of error: its whole
 * log is left in dir/svg.log).
 */
int plot_gnuplot(const char *tdir, const char *tmpl, const char *vars, const struct outdir *dir, const char *svg,
		 char *why, size_t wlen);

#endif
