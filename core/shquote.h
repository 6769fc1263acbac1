/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef FS_SHQUOTE_H
#define FS_SHQUOTE_H

#include <stddef.h>

/*
 * Quoting for the one place fabscope must hand text to a shell: the remote
 * command of ssh, which sshd runs with the user's shell.  Each word is
 * wrapped in single quotes, a quote inside becoming '\'' (close, an escaped
 * quote, reopen), so that POSIX sh reads the word back byte for byte,
 * whatever it holds ($, `, ;, newlines, spaces).  Nothing else is ever built
 * as shell text from data.
 */

/* Append the quoted word s, preceded by a space unless *out is empty, to
 * the NUL-terminated out of size len; 0, or -1 when it does not fit (out is
 * then left as it was). */
int sh_quote_append(char *out, size_t len, const char *s);

#endif
