/* SPDX-License-Identifier: BSD-2-Clause */
/* Clocks: a monotonic nanosecond clock for measurements, UTC for records. */
#ifndef FS_CLOCK_H
#define FS_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Milliseconds left until deadline_ns (a clock_ns() value), at least 0. */
static inline int clock_ms_left(uint64_t deadline_ns)
{
	uint64_t now = clock_ns();

	if (now >= deadline_ns)
		return 0;
	return (int)((deadline_ns - now + 999999) / 1000000);
}

/* UTC time of day as ISO 8601 with milliseconds: 2026-11-29T20:21:36.123Z */
void clock_iso8601(char *buf, int len);

#endif
