/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdio.h>
#include <time.h>

#include "clock.h"

void clock_iso8601(char *buf, int len)
{
	struct timespec ts;
	struct tm tm;
	char tmp[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(tmp, sizeof(tmp), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03ldZ", tmp, ts.tv_nsec / 1000000);
}
