/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Parsing and printing of sizes, counts and durations given on the command
 * line.  Sizes use binary multiples, as perftest and fio do: 64K = 65536,
 * 1M = 1048576; "KiB"/"MiB"/"GiB" and "B" spellings are accepted too.
 */
#ifndef FS_UNITS_H
#define FS_UNITS_H

#include <stdint.h>
#include <stddef.h>

/* 0 on success; -1 when s is not a size (empty, junk, overflow). */
int units_parse_size(const char *s, uint64_t *out);
/* A non-negative integer with an optional K/M/G (x1000) suffix. */
int units_parse_count(const char *s, uint64_t *out);
/* Seconds as a decimal number, optional "s" or "ms" suffix; > 0. */
int units_parse_seconds(const char *s, double *out);
/* Seconds as a poll()/timeout in milliseconds: at least 1 (0 would not
 * wait at all), at most INT_MAX (1e7 s would overflow an int). */
int units_ms(double s);
/* 65536 -> "64K", 3 -> "3", 1572864 -> "1536K" (exact, never rounded). */
void units_format_size(uint64_t v, char *buf, size_t len);

#endif
