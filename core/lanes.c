/* SPDX-License-Identifier: BSD-2-Clause */
/* Rails and planes (lanes.h). */
#include <stdio.h>

#include "lanes.h"

void fs_lane_name(int rail, int plane, char *buf, size_t len)
{
	if (plane)
		snprintf(buf, len, "rail %d plane %d", rail, plane);
	else
		snprintf(buf, len, "rail %d", rail);
}
