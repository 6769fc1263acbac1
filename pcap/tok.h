/* SPDX-License-Identifier: BSD-2-Clause */
/* Value-to-name tables of the dissectors (tcpdump's "tok" idea, our own code). */
#ifndef FS_PCAP_TOK_H
#define FS_PCAP_TOK_H

#include <stddef.h>

struct tok {
	unsigned v;
	const char *s;
};

/* The name of v in a table ended by { 0, NULL }; NULL when it has none. */
const char *tok_find(const struct tok *t, unsigned v);
/* The names of the bits set in flags, "a,b"; "none" without; cut to len. */
const char *tok_flags_str(const struct tok *t, unsigned flags, char *buf, size_t len);

#endif
