/* SPDX-License-Identifier: BSD-2-Clause */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"

const double mon_hist_le[MON_HIST_FINITE] = {
	1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4,
	1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 0.1, 0.2, 0.5, 1, 2, 5, 10,
};

int mon_hist_bucket(double seconds)
{
	int lo = 0, hi = MON_HIST_FINITE;

	if (isnan(seconds) || seconds < 0)
		return -1;
	while (lo < hi) {	/* the first bound >= seconds */
		int mid = (lo + hi) / 2;

		if (mon_hist_le[mid] >= seconds)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

int mon_hist_add(struct mon_hist *h, double seconds)
{
	int b = mon_hist_bucket(seconds);

	if (b < 0)
		return -1;
	h->b[b]++;
	h->count++;
	if (isfinite(seconds))
		h->sum += seconds;
	return 0;
}

void mon_hist_merge(struct mon_hist *into, const struct mon_hist *from)
{
	for (int i = 0; i < MON_HIST_BUCKETS; i++)
		into->b[i] += from->b[i];
	into->count += from->count;
	into->sum += from->sum;
}

void mon_hist_sub(struct mon_hist *d, const struct mon_hist *a, const struct mon_hist *b)
{
	for (int i = 0; i < MON_HIST_BUCKETS; i++)
		d->b[i] = a->b[i] - b->b[i];
	d->count = a->count - b->count;
	d->sum = a->sum - b->sum;
}

const char *mon_hist_le_str(int i, char *buf, int len)
{
	if (i < 0 || i >= MON_HIST_FINITE) {
		snprintf(buf, (size_t)len, "+Inf");
		return buf;
	}
	for (int prec = 1; prec <= 17; prec++) {	/* Go's 'g', -1: exponent form below 1e-4 only */
		snprintf(buf, (size_t)len, "%.*g", prec, mon_hist_le[i]);
		if (strtod(buf, NULL) == mon_hist_le[i]) {
			snprintf(buf, (size_t)len, "%.*g", prec > 6 ? prec : 6, mon_hist_le[i]);
			break;
		}
	}
	return buf;
}
