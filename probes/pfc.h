/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * PFC pause: what a series of counter snapshots (counters.h) says about
 * priority flow control on a port.
 *
 * Between two snapshots, per priority and direction (rx: PFC frames the
 * peer sent us, we were paused; tx: frames we sent, we paused the peer):
 *   - pause frames per second;
 *   - the fraction of the interval paused: the pause-duration delta
 *     (microseconds, mlx5's rx/tx_prioN_pause_duration) over the interval,
 *     clamped to [0, 1].  A driver that counts only frames gets an
 *     estimate, said to be one: each frame asks for `quanta` pause quanta
 *     of 512 bit times (IEEE 802.1Qbb) at the link speed, frames x quanta x
 *     512 / speed, clamped to [0, 1].  A switch refreshes XOFF before it
 *     expires and sends XON (quanta 0) to end a pause early, so frames x
 *     0xffff quanta is an upper bound; without a link speed there is no
 *     estimate;
 *   - a counter that went down (a driver reload, a counter reset, a wrap)
 *     gives no negative rate: the interval counts its new value (what was
 *     counted since the reset, a lower bound) and flags the reset.
 *
 * Over the series:
 *   - storm: the fraction paused above storm_fraction (0.99) for at least
 *     storm_intervals (3) intervals in a row, in one direction, as switch
 *     PFC watchdogs judge a queue that stays paused (rx: a peer or switch
 *     keeps pausing us; tx: this NIC keeps pausing the fabric, a stuck
 *     receiver).  An interval of unknown fraction breaks a run.  mlx5's own
 *     judgement, tx_pause_storm_warning_events / _error_events, is reported
 *     beside it;
 *   - ECN before PFC: the first interval in which ECN-marked RoCE packets
 *     or CNPs (sent or handled) rose comes strictly before the first one in
 *     which the priority's pauses (frames or duration, either direction)
 *     rose, or ECN/CNP rose and pauses never did: yes.  Pauses first, in
 *     the same interval, or without ECN/CNP at all: no.  Without ECN/CNP
 *     counters or pause counters, or when neither rose: unknown.  Congestion
 *     control (DCQCN) should act before the lossless fallback.
 *
 * Every function here but pfc_sample is a pure function of its arguments.
 */
#ifndef FS_PFC_H
#define FS_PFC_H

#include <stdint.h>

#include "counters.h"

#define PFC_STORM_FRACTION 0.99
#define PFC_STORM_INTERVALS 3
#define PFC_QUANTUM_BITS 512
#define PFC_XOFF_QUANTA 0xffff

struct pfc_params {
	double link_gbps;	/* for estimates from frame counts; 0: none */
	unsigned quanta;	/* quanta each frame asks for (PFC_XOFF_QUANTA) */
	double storm_fraction;	/* an interval paused more than this counts */
	int storm_intervals;	/* so many in a row make a storm */
};

void pfc_params_init(struct pfc_params *p);

enum pfc_dir { PFC_RX, PFC_TX };	/* the peer paused us; we paused the peer */

struct pfc_prio_interval {
	double pps[2];		/* pause frames per second; NAN: no counter */
	double paused[2];	/* fraction of the interval paused; NAN: unknown */
	int estimated[2];	/* paused[] from frames x quanta, not a duration */
	double discards_ps;	/* NAN: no counter */
};

struct pfc_interval {
	double t0, t1;
	uint64_t delta[CTR_NMETRICS];		/* counted in the interval */
	unsigned char have[CTR_NMETRICS];	/* both snapshots have the counter */
	unsigned char reset[CTR_NMETRICS];	/* it went down; delta is its new value */
	int resets;
	struct pfc_prio_interval prio[CTR_PRIOS];
};

/* The interval from a to b: 0, or -FS_EXIT_USAGE when b is not later. */
int pfc_interval(const struct ctr_snapshot *a, const struct ctr_snapshot *b,
		 const struct pfc_params *p, struct pfc_interval *iv);

enum pfc_tri { PFC_UNKNOWN = -1, PFC_NO = 0, PFC_YES = 1 };

const char *pfc_tri_name(enum pfc_tri t);	/* "unknown", "no", "yes" */

struct pfc_prio_verdict {
	int present;			/* the priority has a pause counter */
	uint64_t frames[2];		/* pause frames over the series */
	double pps_avg[2], pps_max[2];	/* NAN without a counter */
	double paused_avg[2], paused_max[2];	/* NAN when unknown */
	int estimated[2];		/* some interval's fraction was estimated */
	int storm[2];
	int storm_run[2];		/* longest run of intervals over storm_fraction */
	int storm_from[2];		/* its first interval; -1 */
	int first_pause;		/* first interval with pauses rising; -1 */
	enum pfc_tri ecn_first;
	uint64_t discards;
};

struct pfc_verdict {
	int intervals;
	double seconds;
	struct pfc_prio_verdict prio[CTR_PRIOS];
	int ecn_present;		/* ECN-marked or CNP counters exist */
	int first_ecn;			/* first interval with ECN marks or CNPs rising; -1 */
	int first_pause;		/* the earliest of the priorities'; -1 */
	enum pfc_tri ecn_first;		/* over all priorities */
	int storm;			/* some priority, some direction */
	uint64_t total[CTR_NMETRICS];	/* over the series */
	unsigned char have[CTR_NMETRICS];	/* in some interval */
	int resets;			/* counters that went down, over the series */
};

/* Judge n intervals (n >= 1). */
int pfc_judge(const struct pfc_interval *iv, int n, const struct pfc_params *p,
	      struct pfc_verdict *v);

/* One line for a human about a priority, and one about the port. */
void pfc_prio_text(const struct pfc_verdict *v, const struct pfc_params *p, int prio,
		   char *buf, size_t len);
void pfc_port_text(const struct pfc_verdict *v, char *buf, size_t len);

/* ---- series and the sampler ---- */

struct pfc_series {
	struct ctr_snapshot *s;
	int n, alloc;
};

void pfc_series_release(struct pfc_series *ser);
int pfc_series_add(struct pfc_series *ser, const struct ctr_snapshot *s);
/* The n - 1 intervals of a series into *out (malloc'd), their number in *n. */
int pfc_series_intervals(const struct pfc_series *ser, const struct pfc_params *p,
			 struct pfc_interval **out, int *n);

/*
 * Called after each sample (i from 0); a non-zero return ends the sampling
 * (negative: as an error).  The command starts and stops its load here.
 */
typedef int (*pfc_tick_fn)(void *arg, int i, const struct ctr_snapshot *s);

/*
 * Read c every interval_s seconds (absolute deadlines on CLOCK_MONOTONIC; a
 * read late past a deadline moves the next ones, never bunches them),
 * count samples (0: until *stop or tick ends it), appended to out.  stop
 * (NULL: none) is a flag a signal handler sets, core/net.h's net_stop.
 * 0 when done, -FS_EXIT_INTERRUPTED when *stop ended it, or a negative
 * code; the samples taken stay in out.
 */
int pfc_sample(struct counters *c, double interval_s, int count, volatile int *stop,
	       pfc_tick_fn tick, void *arg, struct pfc_series *out);

#endif
