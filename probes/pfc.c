/* SPDX-License-Identifier: BSD-2-Clause */
/* PFC pause rates, paused fractions, storms and ECN-before-PFC: see pfc.h. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/clock.h"
#include "../core/error.h"
#include "../core/output.h"
#include "pfc.h"

void pfc_params_init(struct pfc_params *p)
{
	p->link_gbps = 0;
	p->quanta = PFC_XOFF_QUANTA;
	p->storm_fraction = PFC_STORM_FRACTION;
	p->storm_intervals = PFC_STORM_INTERVALS;
}

const char *pfc_tri_name(enum pfc_tri t)
{
	return t == PFC_YES ? "yes" : t == PFC_NO ? "no" : "unknown";
}

static double clamp01(double x)
{
	return x < 0 ? 0 : x > 1 ? 1 : x;
}

static const enum ctr_prio_metric frames_of[2] = { CTR_RX_PAUSE, CTR_TX_PAUSE };
static const enum ctr_prio_metric us_of[2] = { CTR_RX_PAUSE_US, CTR_TX_PAUSE_US };

int pfc_interval(const struct ctr_snapshot *a, const struct ctr_snapshot *b,
		 const struct pfc_params *p, struct pfc_interval *iv)
{
	double dt = b->t - a->t;
	int i, prio, d;

	memset(iv, 0, sizeof(*iv));
	iv->t0 = a->t;
	iv->t1 = b->t;
	if (!(dt > 0) || !isfinite(dt))
		return fs_err_usage("snapshot at %.6f s is not later than the one at %.6f s",
				    b->t, a->t);
	for (i = 0; i < CTR_NMETRICS; i++) {
		if (!a->have[i] || !b->have[i])
			continue;
		iv->have[i] = 1;
		if (b->v[i] >= a->v[i]) {
			iv->delta[i] = b->v[i] - a->v[i];
		} else {
			iv->delta[i] = b->v[i];	/* counted since the reset */
			iv->reset[i] = 1;
			iv->resets++;
		}
	}
	for (prio = 0; prio < CTR_PRIOS; prio++) {
		struct pfc_prio_interval *pi = &iv->prio[prio];
		int dis = ctr_prio_idx(prio, CTR_RX_DISCARDS);

		for (d = 0; d < 2; d++) {
			int f = ctr_prio_idx(prio, frames_of[d]), u = ctr_prio_idx(prio, us_of[d]);

			pi->pps[d] = iv->have[f] ? (double)iv->delta[f] / dt : NAN;
			pi->paused[d] = NAN;
			if (iv->have[u]) {
				pi->paused[d] = clamp01((double)iv->delta[u] / 1e6 / dt);
			} else if (iv->have[f] && p->link_gbps > 0) {
				double s = (double)iv->delta[f] * p->quanta * PFC_QUANTUM_BITS /
					   (p->link_gbps * 1e9);

				pi->paused[d] = clamp01(s / dt);
				pi->estimated[d] = 1;
			}
		}
		pi->discards_ps = iv->have[dis] ? (double)iv->delta[dis] / dt : NAN;
	}
	return 0;
}

static int pause_rose(const struct pfc_interval *iv, int prio)
{
	int d;

	for (d = 0; d < 2; d++)
		if (iv->delta[ctr_prio_idx(prio, frames_of[d])] ||
		    iv->delta[ctr_prio_idx(prio, us_of[d])])
			return 1;
	return 0;
}

static int ecn_rose(const struct pfc_interval *iv)
{
	return iv->delta[ctr_port_idx(CTR_ECN_MARKED)] || iv->delta[ctr_port_idx(CTR_CNP_SENT)] ||
	       iv->delta[ctr_port_idx(CTR_CNP_HANDLED)];
}

static enum pfc_tri ecn_first(int ecn_present, int first_ecn, int pause_present, int first_pause)
{
	if (!ecn_present || !pause_present || (first_ecn < 0 && first_pause < 0))
		return PFC_UNKNOWN;
	if (first_ecn >= 0 && (first_pause < 0 || first_ecn < first_pause))
		return PFC_YES;
	return PFC_NO;
}

/* Per priority and direction: rates, fractions and the longest run over the threshold */
static void judge_dir(const struct pfc_interval *iv, int n, const struct pfc_params *p,
		      int prio, int d, struct pfc_prio_verdict *pv)
{
	double sum_pps = 0, sum_paused = 0, max_pps = NAN, max_paused = NAN;
	int k, npps = 0, npaused = 0, run = 0;

	pv->storm_from[d] = -1;
	for (k = 0; k < n; k++) {
		const struct pfc_prio_interval *pi = &iv[k].prio[prio];
		int f = ctr_prio_idx(prio, frames_of[d]);

		if (iv[k].have[f])
			pv->frames[d] += iv[k].delta[f];
		if (!isnan(pi->pps[d])) {
			sum_pps += pi->pps[d];
			npps++;
			if (isnan(max_pps) || pi->pps[d] > max_pps)
				max_pps = pi->pps[d];
		}
		if (isnan(pi->paused[d])) {
			run = 0;
			continue;
		}
		sum_paused += pi->paused[d];
		npaused++;
		if (isnan(max_paused) || pi->paused[d] > max_paused)
			max_paused = pi->paused[d];
		pv->estimated[d] |= pi->estimated[d];
		run = pi->paused[d] > p->storm_fraction ? run + 1 : 0;
		if (run > pv->storm_run[d]) {
			pv->storm_run[d] = run;
			pv->storm_from[d] = k - run + 1;
		}
	}
	pv->pps_avg[d] = npps ? sum_pps / npps : NAN;
	pv->pps_max[d] = max_pps;
	pv->paused_avg[d] = npaused ? sum_paused / npaused : NAN;
	pv->paused_max[d] = max_paused;
	pv->storm[d] = p->storm_intervals > 0 && pv->storm_run[d] >= p->storm_intervals;
}

int pfc_judge(const struct pfc_interval *iv, int n, const struct pfc_params *p,
	      struct pfc_verdict *v)
{
	int k, i, prio, d, any_pause = 0;

	memset(v, 0, sizeof(*v));
	v->first_ecn = v->first_pause = -1;
	if (n < 1)
		return fs_err_usage("no interval to judge: take two samples at least");
	v->intervals = n;
	v->seconds = iv[n - 1].t1 - iv[0].t0;
	for (k = 0; k < n; k++) {
		for (i = 0; i < CTR_NMETRICS; i++) {
			v->total[i] += iv[k].delta[i];
			v->have[i] |= iv[k].have[i];
		}
		v->resets += iv[k].resets;
		if (v->first_ecn < 0 && ecn_rose(&iv[k]))
			v->first_ecn = k;
	}
	v->ecn_present = v->have[ctr_port_idx(CTR_ECN_MARKED)] ||
			 v->have[ctr_port_idx(CTR_CNP_SENT)] ||
			 v->have[ctr_port_idx(CTR_CNP_HANDLED)];
	for (prio = 0; prio < CTR_PRIOS; prio++) {
		struct pfc_prio_verdict *pv = &v->prio[prio];

		pv->first_pause = -1;
		for (d = 0; d < 2; d++)
			pv->present |= v->have[ctr_prio_idx(prio, frames_of[d])] |
				       v->have[ctr_prio_idx(prio, us_of[d])];
		for (d = 0; d < 2; d++) {
			judge_dir(iv, n, p, prio, d, pv);
			v->storm |= pv->storm[d];
		}
		for (k = 0; k < n && pv->first_pause < 0; k++)
			if (pause_rose(&iv[k], prio))
				pv->first_pause = k;
		pv->discards = v->total[ctr_prio_idx(prio, CTR_RX_DISCARDS)];
		pv->ecn_first = ecn_first(v->ecn_present, v->first_ecn, pv->present, pv->first_pause);
		any_pause |= pv->present;
		if (pv->first_pause >= 0 && (v->first_pause < 0 || pv->first_pause < v->first_pause))
			v->first_pause = pv->first_pause;
	}
	v->ecn_first = ecn_first(v->ecn_present, v->first_ecn, any_pause, v->first_pause);
	return 0;
}

/* ---- text ---- */

struct sbuf {
	char *p;
	size_t len, used;
};

static void sb_add(struct sbuf *b, const char *fmt, ...) FS_PRINTF(2, 3);

static void sb_add(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->used >= b->len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->used, b->len - b->used, fmt, ap);
	va_end(ap);
	if (n > 0)
		b->used += (size_t)n;
}

static void sb_pct(struct sbuf *b, double x)
{
	if (isnan(x))
		sb_add(b, "-");
	else
		sb_add(b, "%.1f%%", 100 * x);
}

static const char *ecn_reason(const struct pfc_verdict *v, int present, int first_pause,
			      char *buf, size_t len)
{
	if (!v->ecn_present)
		snprintf(buf, len, "no ECN/CNP counters");
	else if (!present)
		snprintf(buf, len, "no pause counters");
	else if (v->first_ecn < 0 && first_pause < 0)
		snprintf(buf, len, "neither ECN/CNP nor pauses rose");
	else if (v->first_ecn < 0)
		snprintf(buf, len, "pauses from interval %d, ECN/CNP never", first_pause);
	else if (first_pause < 0)
		snprintf(buf, len, "ECN/CNP from interval %d, pauses never", v->first_ecn);
	else
		snprintf(buf, len, "ECN/CNP from interval %d, pauses from %d%s", v->first_ecn,
			 first_pause, v->first_ecn == first_pause ? ", the same" : "");
	return buf;
}

void pfc_prio_text(const struct pfc_verdict *v, const struct pfc_params *p, int prio,
		   char *buf, size_t len)
{
	static const char *const dir[2] = { "paused by the peer", "pausing the peer" };
	const struct pfc_prio_verdict *pv = &v->prio[prio];
	struct sbuf b = { buf, len, 0 };
	char why[96];
	int d, storms = 0;

	buf[0] = 0;
	sb_add(&b, "prio %d:", prio);
	if (!pv->present) {
		sb_add(&b, " no pause counters");
		return;
	}
	for (d = 0; d < 2; d++) {
		sb_add(&b, "%s %s", d ? ";" : "", dir[d]);
		if (isnan(pv->pps_avg[d]) && isnan(pv->paused_avg[d])) {
			sb_add(&b, ": no counters");
			continue;
		}
		if (isnan(pv->pps_avg[d]))
			sb_add(&b, " (frames not counted)");
		else
			sb_add(&b, " %.1f frames/s", pv->pps_avg[d]);
		if (isnan(pv->paused_avg[d])) {
			sb_add(&b, ", time paused unknown");
			continue;
		}
		sb_add(&b, ", ");
		sb_pct(&b, pv->paused_avg[d]);
		sb_add(&b, " of the time (max ");
		sb_pct(&b, pv->paused_max[d]);
		sb_add(&b, ")%s", pv->estimated[d] ? " estimated from frames" : "");
	}
	for (d = 0; d < 2; d++) {
		if (!pv->storm[d])
			continue;
		sb_add(&b, "; PFC STORM: %s over %.0f%% for %d intervals from interval %d",
		       dir[d], 100 * p->storm_fraction, pv->storm_run[d], pv->storm_from[d]);
		storms++;
	}
	if (!storms)
		sb_add(&b, isnan(pv->paused_max[PFC_RX]) && isnan(pv->paused_max[PFC_TX]) ?
		       "; storm unknown (time paused not known)" : "; no storm");
	sb_add(&b, "; ECN before PFC: %s (%s)", pfc_tri_name(pv->ecn_first),
	       ecn_reason(v, pv->present, pv->first_pause, why, sizeof(why)));
}

void pfc_port_text(const struct pfc_verdict *v, char *buf, size_t len)
{
	static const struct {
		enum ctr_port_metric m;
		const char *label;
	} items[] = {
		{ CTR_ECN_MARKED, "ECN-marked" }, { CTR_CNP_SENT, "CNPs sent" },
		{ CTR_CNP_HANDLED, "CNPs handled" }, { CTR_OUT_OF_SEQUENCE, "out of sequence" },
		{ CTR_PACKET_SEQ_ERR, "sequence NAKs" }, { CTR_RX_DISCARDS_PHY, "rx discards" },
		{ CTR_STORM_WARN, "NIC storm warnings" }, { CTR_STORM_ERROR, "NIC storm errors" },
	};
	struct sbuf b = { buf, len, 0 };
	char why[96];
	size_t i;
	int shown = 0;

	buf[0] = 0;
	sb_add(&b, "port: %d intervals, %.3f s", v->intervals, v->seconds);
	for (i = 0; i < sizeof(items) / sizeof(items[0]); i++) {
		int idx = ctr_port_idx(items[i].m);

		if (!v->have[idx])
			continue;
		sb_add(&b, "%s %s %llu", shown++ ? "," : ";", items[i].label,
		       (unsigned long long)v->total[idx]);
	}
	if (v->resets)
		sb_add(&b, "; %d counter reset%s (counted from their new values)", v->resets,
		       v->resets == 1 ? "" : "s");
	sb_add(&b, "; ECN before PFC: %s (%s)", pfc_tri_name(v->ecn_first),
	       ecn_reason(v, 1, v->first_pause, why, sizeof(why)));
}

/* ---- series and the sampler ---- */

void pfc_series_release(struct pfc_series *ser)
{
	free(ser->s);
	ser->s = NULL;
	ser->n = ser->alloc = 0;
}

int pfc_series_add(struct pfc_series *ser, const struct ctr_snapshot *s)
{
	if (ser->n == ser->alloc) {
		int na = ser->alloc ? 2 * ser->alloc : 16;
		struct ctr_snapshot *ns;

		if (na > 10000000)
			return fs_err_env("too many samples");
		ns = realloc(ser->s, (size_t)na * sizeof(*ns));
		if (!ns)
			return fs_err_env("out of memory");
		ser->s = ns;
		ser->alloc = na;
	}
	ser->s[ser->n++] = *s;
	return 0;
}

int pfc_series_intervals(const struct pfc_series *ser, const struct pfc_params *p,
			 struct pfc_interval **out, int *n)
{
	struct pfc_interval *iv;
	int k, rc;

	*out = NULL;
	*n = 0;
	if (ser->n < 2)
		return fs_err_usage("%d sample%s: two at least make an interval", ser->n,
				    ser->n == 1 ? "" : "s");
	iv = calloc((size_t)ser->n - 1, sizeof(*iv));
	if (!iv)
		return fs_err_env("out of memory");
	for (k = 0; k + 1 < ser->n; k++) {
		rc = pfc_interval(&ser->s[k], &ser->s[k + 1], p, &iv[k]);
		if (rc) {
			free(iv);
			return rc;
		}
	}
	*out = iv;
	*n = ser->n - 1;
	return 0;
}

static void ts_add(struct timespec *t, double s)
{
	long long ns = (long long)(s * 1e9);

	t->tv_sec += (time_t)(ns / 1000000000);
	t->tv_nsec += (long)(ns % 1000000000);
	if (t->tv_nsec >= 1000000000) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000;
	}
}

static int ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

int pfc_sample(struct counters *c, double interval_s, int count, volatile int *stop,
	       pfc_tick_fn tick, void *arg, struct pfc_series *out)
{
	struct timespec next, now;
	struct ctr_snapshot s;
	int i, rc;

	if (!(interval_s >= 0.001 && interval_s <= 86400))
		return fs_err_usage("sampling interval %g s out of range [0.001, 86400]", interval_s);
	if (count < 0)
		return fs_err_usage("invalid sample count %d", count);
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (i = 0; !count || i < count; i++) {
		if (i) {
			ts_add(&next, interval_s);
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (ts_before(&next, &now))
				next = now;	/* late: from now on, no catching up */
			while ((rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL)) ==
			       EINTR && !(stop && *stop))
				;
		}
		if (stop && *stop)
			return -FS_EXIT_INTERRUPTED;
		rc = counters_read(c, &s);
		if (!rc)
			rc = pfc_series_add(out, &s);
		if (rc)
			return rc;
		if (out_progress_due(clock_ns()))	/* fabscope run's watch (core/output.h) */
			out_progress(0, count ? (double)(i + 1) / count : -1, "sample %d%s%.0d", i + 1,
				     count ? " of " : "", count);
		if (tick) {
			rc = tick(arg, i, &s);
			if (rc)
				return rc < 0 ? rc : 0;
		}
	}
	return 0;
}
