/* SPDX-License-Identifier: BSD-2-Clause */
/* A live capture of PFC and PAUSE frames: see pfcap.h. */
#include <errno.h>
#include <math.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include "../core/clock.h"
#include "../core/error.h"
#include "../pcap/live.h"
#include "../pcap/macctl.h"
#include "pfcap.h"

#define PFCAP_POLL_MS 50		/* the thread looks at the stop flag this often */
#define PFCAP_STATS_NS 100000000ull	/* and at pcap's drop counts */
#define PFCAP_DISPATCH_MAX 64		/* buffers read per wake-up, so a flood cannot starve it */
#define PFCAP_GLOBAL PFCAP_PRIOS	/* the pause state of 802.3x PAUSE */

/* One priority's (or PAUSE's) pause in one direction, times in seconds from c->base_ns. */
struct pause_state {
	int active;		/* a pause was asked for and not yet ended by an XON */
	double start, until;	/* it runs from start, until (unless refreshed or ended) */
	double len;		/* until - start, as asked (added whole when it runs out) */
	double acc;		/* seconds of pauses over */
};

struct pfcap_side {
	struct pfcap *c;
	pcap_t *h;
	int fd;			/* pcap_get_selectable_fd; -1 once the handle failed */
	enum pfcap_dir dir;
	int nano;		/* timestamps in nanoseconds (else microseconds) */
	uint64_t drops;		/* pcap_stats ps_drop, cumulative */
};

struct pfcap {
	char ifname[IF_NAMESIZE];
	double link_gbps;
	uint64_t base_ns;	/* CLOCK_REALTIME at the start: times are relative to it */
	struct pfcap_side side[2];
	int wake;		/* eventfd: pfcap_stop wakes the thread */
	atomic_int stop;
	pthread_t thread;
	int thread_started;

	pthread_mutex_t lock;	/* guards what follows */
	struct pfcap_counts counts;	/* paused_s not kept here: see pause[] */
	struct pause_state pause[PFCAP_PRIOS + 1][2];
};

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* seconds since the start; earlier times (a wall clock step) come out negative */
static double rel_seconds(const struct pfcap *c, uint64_t ns)
{
	return ns >= c->base_ns ? (double)(ns - c->base_ns) / 1e9 :
				  -((double)(c->base_ns - ns) / 1e9);
}

/* ---- pause accounting ---- */

/* A pause that ran out by t is over. */
static void pause_settle(struct pause_state *s, double t)
{
	if (s->active && s->until <= t) {
		s->acc += s->len;
		s->active = 0;
	}
}

/* The running pause is cut at t (by a new XOFF, or an XON). */
static void pause_cut(struct pause_state *s, double t)
{
	pause_settle(s, t);
	if (s->active) {
		s->acc += fmax(0, t - s->start);
		s->active = 0;
	}
}

static void pause_xoff(struct pause_state *s, double t, double seconds)
{
	pause_cut(s, t);
	s->active = 1;
	s->start = t;
	s->until = t + seconds;
	s->len = seconds;
}

/* Seconds paused up to now, the running pause included. */
static double pause_so_far(const struct pause_state *s, double now)
{
	double run = 0;

	if (s->active && s->until <= now)
		run = s->len;
	else if (s->active)
		run = fmax(0, now - s->start);
	return s->acc + run;
}

/* One priority's time from a frame, in direction d at time t. */
static void count_time(struct pfcap *c, struct pfcap_prio *pp, struct pause_state *st,
		       enum pfcap_dir d, unsigned quanta, double t)
{
	pp->frames[d]++;
	pp->quanta[d] += quanta;
	if (quanta)
		pp->xoff[d]++;
	else
		pp->xon[d]++;
	if (!(c->link_gbps > 0))
		return;
	if (quanta)
		pause_xoff(st, t, macctl_quanta_seconds(quanta, c->link_gbps));
	else
		pause_cut(st, t);
}

static void on_packet(u_char *arg, const struct pcap_pkthdr *hdr, const u_char *bytes)
{
	struct pfcap_side *side = (struct pfcap_side *)arg;
	struct pfcap *c = side->c;
	enum pfcap_dir d = side->dir;
	uint64_t ns = (uint64_t)hdr->ts.tv_sec * 1000000000ull +
		      (uint64_t)hdr->ts.tv_usec * (side->nano ? 1u : 1000u);
	double t = rel_seconds(c, ns);
	struct macctl m;
	int p;

	macctl_parse(bytes, hdr->caplen, hdr->len, &m);
	pthread_mutex_lock(&c->lock);
	c->counts.frames++;
	switch (m.kind) {
	case MACCTL_PFC:
		c->counts.pfc++;
		for (p = 0; p < PFCAP_PRIOS; p++)
			if (m.enable & (1u << p))
				count_time(c, &c->counts.prio[p], &c->pause[p][d], d,
					   m.quanta[p], t);
		break;
	case MACCTL_PAUSE:
		c->counts.pause++;
		count_time(c, &c->counts.global, &c->pause[PFCAP_GLOBAL][d], d,
			   m.quanta[0], t);
		break;
	case MACCTL_OTHER:
		c->counts.other++;
		break;
	case MACCTL_TRUNCATED:
		c->counts.truncated++;
		break;
	case MACCTL_NOT:	/* the filter let it through: a tag we do not skip */
		break;
	}
	pthread_mutex_unlock(&c->lock);
}

/* ---- the capture thread ---- */

static void side_drain(struct pfcap_side *s)
{
	int i, n;

	if (s->fd < 0)
		return;
	for (i = 0; i < PFCAP_DISPATCH_MAX; i++) {
		n = pcap_dispatch(s->h, -1, on_packet, (u_char *)s);
		if (n == 0 || n == PCAP_ERROR_BREAK)
			return;
		if (n < 0) {
			fs_warn("capture of %s frames on '%s' stopped: %s",
				s->dir == PFCAP_RX ? "received" : "sent", s->c->ifname,
				pcap_geterr(s->h));
			s->fd = -1;
			return;
		}
	}
}

static void side_stats(struct pfcap_side *s)
{
	struct pcap_stat st;

	if (s->fd >= 0 && !pcap_stats(s->h, &st)) {
		pthread_mutex_lock(&s->c->lock);
		s->drops = st.ps_drop;
		pthread_mutex_unlock(&s->c->lock);
	}
}

static void *pfcap_thread(void *arg)
{
	struct pfcap *c = arg;
	uint64_t next_stats = 0;
	int d;

	while (!atomic_load(&c->stop)) {
		struct pollfd pfd[3] = {
			{ .fd = c->side[0].fd, .events = POLLIN },
			{ .fd = c->side[1].fd, .events = POLLIN },
			{ .fd = c->wake, .events = POLLIN },
		};

		if (poll(pfd, 3, PFCAP_POLL_MS) < 0 && errno != EINTR) {
			fs_warn("capture on '%s' stopped: poll: %s", c->ifname, strerror(errno));
			break;
		}
		for (d = 0; d < 2; d++)
			if (pfd[d].revents)
				side_drain(&c->side[d]);
		if (clock_ns() >= next_stats) {
			side_stats(&c->side[0]);
			side_stats(&c->side[1]);
			next_stats = clock_ns() + PFCAP_STATS_NS;
		}
	}
	/* what arrived before the stop */
	for (d = 0; d < 2; d++) {
		side_drain(&c->side[d]);
		side_stats(&c->side[d]);
	}
	return NULL;
}

/* ---- start, read, stop ---- */

static int side_open(struct pfcap *c, enum pfcap_dir d)
{
	struct pfcap_side *s = &c->side[d];
	char eb[PCAP_ERRBUF_SIZE] = "";
	const char *ifname = c->ifname;
	int rc;

	s->c = c;
	s->dir = d;
	s->fd = -1;
	{
		struct live_opts lo = { .snaplen = PFCAP_SNAPLEN, .buffer = PFCAP_BUFFER, .immediate = 1,
					.nano = 1 };

		rc = live_open(&s->h, ifname, &lo, &s->nano);
		if (rc)
			return rc;
	}
	if (pcap_datalink(s->h) != DLT_EN10MB)
		return fs_err_env("'%s' is not an Ethernet interface (link type %s): no PFC there",
				  ifname, pcap_datalink_val_to_name(pcap_datalink(s->h)) ?
				  pcap_datalink_val_to_name(pcap_datalink(s->h)) : "unknown");
	if (pcap_setdirection(s->h, d == PFCAP_RX ? PCAP_D_IN : PCAP_D_OUT))
		return fs_err_env("capturing on '%s': cannot tell sent from received frames: %s",
				  ifname, pcap_geterr(s->h));
	if ((rc = live_filter(s->h, ifname, PFCAP_FILTER)))
		return rc;
	if (pcap_setnonblock(s->h, 1, eb))
		return fs_err_env("capturing on '%s': %s", ifname, eb);
	s->fd = pcap_get_selectable_fd(s->h);
	if (s->fd < 0)
		return fs_err_env("capturing on '%s': libpcap gives no descriptor to poll", ifname);
	return 0;
}

static void pfcap_free(struct pfcap *c)
{
	int d;

	if (!c)
		return;
	for (d = 0; d < 2; d++)
		if (c->side[d].h)
			pcap_close(c->side[d].h);
	if (c->wake >= 0)
		close(c->wake);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

int pfcap_start(struct pfcap **out, const char *ifname, double link_gbps)
{
	sigset_t all, old;
	struct pfcap *c;
	int rc, d;

	*out = NULL;
	if (!ifname || !*ifname || strchr(ifname, '/'))
		return fs_err_usage("invalid interface name '%s'", ifname ? ifname : "");
	if (strlen(ifname) >= IF_NAMESIZE)
		return fs_err_usage("interface name '%s' is longer than %d bytes", ifname,
				    IF_NAMESIZE - 1);
	if (!(link_gbps >= 0) || !isfinite(link_gbps))
		return fs_err_usage("link speed of '%s': %g Gb/s is not a speed", ifname, link_gbps);

	c = calloc(1, sizeof(*c));
	if (!c)
		return fs_err_env("out of memory");
	c->wake = -1;
	atomic_init(&c->stop, 0);
	pthread_mutex_init(&c->lock, NULL);
	strcpy(c->ifname, ifname);
	c->link_gbps = link_gbps;
	c->counts.link_gbps = link_gbps;
	c->base_ns = realtime_ns();
	for (d = 0; d < 2; d++) {
		rc = side_open(c, (enum pfcap_dir)d);
		if (rc)
			goto fail;
	}
	c->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->wake < 0) {
		rc = fs_err_env("capturing on '%s': eventfd: %s", ifname, strerror(errno));
		goto fail;
	}
	/* signals go to the caller's threads (a command's SIGINT handler), never this one */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&c->thread, NULL, pfcap_thread, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		rc = fs_err_env("capturing on '%s': no thread: %s", ifname, strerror(rc));
		goto fail;
	}
	c->thread_started = 1;
	*out = c;
	return 0;
fail:
	pfcap_free(c);
	return rc;
}

/* The counts with the pauses up to now; under c->lock. */
static void pfcap_counts_at(struct pfcap *c, double now, struct pfcap_counts *out)
{
	int p, d;

	*out = c->counts;
	out->dropped = c->side[0].drops + c->side[1].drops;
	for (p = 0; p <= PFCAP_PRIOS; p++) {
		struct pfcap_prio *pp = p < PFCAP_PRIOS ? &out->prio[p] : &out->global;

		for (d = 0; d < 2; d++)
			pp->paused_s[d] = c->link_gbps > 0 ?
					  pause_so_far(&c->pause[p][d], now) : NAN;
	}
}

void pfcap_read(struct pfcap *c, struct pfcap_counts *out)
{
	double now = rel_seconds(c, realtime_ns());

	pthread_mutex_lock(&c->lock);
	pfcap_counts_at(c, now, out);
	pthread_mutex_unlock(&c->lock);
}

void pfcap_stop(struct pfcap *c, struct pfcap_counts *final)
{
	uint64_t one = 1;
	double now;

	if (!c)
		return;
	now = rel_seconds(c, realtime_ns());
	atomic_store(&c->stop, 1);
	if (write(c->wake, &one, sizeof(one)) < 0) {
		/* the counter is full (cannot be, once) or gone: the poll timeout ends it */
	}
	if (c->thread_started)
		pthread_join(c->thread, NULL);
	if (final) {
		pthread_mutex_lock(&c->lock);
		pfcap_counts_at(c, now, final);
		pthread_mutex_unlock(&c->lock);
	}
	pfcap_free(c);
}
