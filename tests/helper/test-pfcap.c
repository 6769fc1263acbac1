/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tool pfc-inject, pfcap: PFC frames sent through a raw socket, and
 * probes/pfcap.c capturing them (tests/t2410-netns-pfc-capture.t).
 *
 *   pfc-inject IF [--count N] [--gap-us U] [--vlan ID] [--src MAC]
 *              [--pause Q | --opcode OP | PRIO=QUANTA...]
 *                                send N MAC control frames (60 bytes, to
 *                                01:80:c2:00:00:01, from IF's address or MAC)
 *                                through an AF_PACKET socket on IF, at least
 *                                U microseconds apart: PFC with each
 *                                PRIO=QUANTA in its enable vector (QUANTA 0:
 *                                XON), an 802.3x PAUSE of Q quanta, or an
 *                                opcode OP with a zero body; prints "sent N"
 *   pfcap IF SECONDS LINK_GBPS [--ready FILE] [--interval S]
 *                                capture for SECONDS or until SIGTERM/SIGINT
 *                                (FILE created once the capture runs), then
 *                                print the final counts as one JSON object on
 *                                one line ("final": true); --interval: a
 *                                pfcap_read line every S seconds before it
 *                                ("final": false; "t": seconds since the start)
 *
 * Exit codes: 0 ok, 1 a check failed, 2 usage, 3 environment.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <linux/if_packet.h>

#include "../../core/clock.h"
#include "../../core/error.h"
#include "../../pcap/macctl.h"
#include "../../probes/pfcap.h"
#include "test-tool.h"


#define FRAME_LEN 60

static const uint8_t macctl_dst[6] = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x01 };

static int parse_double(const char *opt, const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	if (errno || end == s || *end || !(*v >= 0) || !isfinite(*v))
		return usage_error("%s: '%s' is not a non-negative number", opt, s);
	return 0;
}

static void put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* ---- pfc-inject ---- */

static int parse_mac(const char *s, uint8_t *mac)
{
	unsigned v[6];
	char tail;
	int i;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
		   &tail) != 6)
		return usage_error("--src: '%s' is not a MAC address (aa:bb:cc:dd:ee:ff)", s);
	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)v[i];
	return 0;
}

struct inject {
	const char *ifname;
	unsigned long count, gap_us, vlan, pause, opcode;
	int have_vlan, have_pause, have_opcode, have_src;
	uint8_t src[6];
	uint8_t enable;
	uint16_t quanta[8];
};

static int inject_args(int argc, const char **argv, struct inject *in)
{
	int i;

	in->count = 1;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		unsigned long prio, q;
		char *eq;

		if (!strncmp(a, "--", 2) && !v)
			return usage_error("%s needs a value", a);
		if (!strcmp(a, "--count")) {
			if (tool_parse_ulong(a, v, 1000000, &in->count))
				return FS_EXIT_USAGE;
		} else if (!strcmp(a, "--gap-us")) {
			if (tool_parse_ulong(a, v, 60000000, &in->gap_us))
				return FS_EXIT_USAGE;
		} else if (!strcmp(a, "--vlan")) {
			if (tool_parse_ulong(a, v, 4095, &in->vlan))
				return FS_EXIT_USAGE;
			in->have_vlan = 1;
		} else if (!strcmp(a, "--pause")) {
			if (tool_parse_ulong(a, v, 0xffff, &in->pause))
				return FS_EXIT_USAGE;
			in->have_pause = 1;
		} else if (!strcmp(a, "--opcode")) {
			if (tool_parse_ulong(a, v, 0xffff, &in->opcode))
				return FS_EXIT_USAGE;
			in->have_opcode = 1;
		} else if (!strcmp(a, "--src")) {
			if (parse_mac(v, in->src))
				return FS_EXIT_USAGE;
			in->have_src = 1;
		} else if (!strncmp(a, "--", 2)) {
			return usage_error("unknown option '%s'", a);
		} else if (!in->ifname) {
			in->ifname = a;
			continue;
		} else if ((eq = strchr(a, '='))) {
			char p[16];

			if ((size_t)(eq - a) >= sizeof(p))
				return usage_error("'%s' is not PRIO=QUANTA", a);
			memcpy(p, a, (size_t)(eq - a));
			p[eq - a] = 0;
			if (tool_parse_ulong("PRIO", p, 7, &prio) || tool_parse_ulong("QUANTA", eq + 1, 0xffff, &q))
				return FS_EXIT_USAGE;
			in->enable |= (uint8_t)(1u << prio);
			in->quanta[prio] = (uint16_t)q;
			continue;
		} else {
			return usage_error("'%s' is not PRIO=QUANTA", a);
		}
		i++;
	}
	if (!in->ifname || in->have_pause + in->have_opcode + !!in->enable != 1)
		return usage_error("usage: test-tool pfc-inject IF [--count N] [--gap-us U] [--vlan ID] "
				   "[--src MAC] --pause Q | --opcode OP | PRIO=QUANTA...");
	return 0;
}

static size_t inject_frame(const struct inject *in, uint8_t *b)
{
	size_t off = 12;
	int i;

	memset(b, 0, FRAME_LEN);
	memcpy(b, macctl_dst, 6);
	memcpy(b + 6, in->src, 6);
	if (in->have_vlan) {
		put16(b + off, 0x8100);
		put16(b + off + 2, (unsigned)in->vlan);
		off += 4;
	}
	put16(b + off, MACCTL_ETHERTYPE);
	off += 2;
	if (in->have_pause) {
		put16(b + off, MACCTL_OP_PAUSE);
		put16(b + off + 2, (unsigned)in->pause);
	} else if (in->have_opcode) {
		put16(b + off, (unsigned)in->opcode);
	} else {
		put16(b + off, MACCTL_OP_PFC);
		b[off + 3] = in->enable;
		for (i = 0; i < 8; i++)
			put16(b + off + 4 + 2 * i, in->quanta[i]);
	}
	return FRAME_LEN;
}

static void ts_add_us(struct timespec *t, unsigned long us)
{
	t->tv_sec += (time_t)(us / 1000000);
	t->tv_nsec += (long)(us % 1000000) * 1000;
	if (t->tv_nsec >= 1000000000) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000;
	}
}

static int cmd_pfc_inject(int argc, const char **argv)
{
	struct inject in = { 0 };
	struct sockaddr_ll sll = { 0 };
	struct ifreq ifr = { 0 };
	struct timespec next;
	uint8_t frame[FRAME_LEN];
	unsigned long sent;
	unsigned idx;
	int fd, rc = 0;
	size_t len;

	if (inject_args(argc, argv, &in))
		return FS_EXIT_USAGE;
	if (strlen(in.ifname) >= IF_NAMESIZE)
		return usage_error("interface name '%s' is longer than %d bytes", in.ifname,
				   IF_NAMESIZE - 1);
	idx = if_nametoindex(in.ifname);
	if (!idx)
		return -fs_err_env("no interface '%s' in this network namespace", in.ifname);
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0 && errno == EPERM)
		return -fs_err_env("sending on '%s' needs CAP_NET_RAW: run as root", in.ifname);
	if (fd < 0)
		return -fs_err_env("sending on '%s': socket: %s", in.ifname, strerror(errno));
	if (!in.have_src) {
		strcpy(ifr.ifr_name, in.ifname);
		if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
			rc = -fs_err_env("address of '%s': %s", in.ifname, strerror(errno));
			goto out;
		}
		memcpy(in.src, ifr.ifr_hwaddr.sa_data, 6);
	}
	sll.sll_family = AF_PACKET;
	sll.sll_ifindex = (int)idx;
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		rc = -fs_err_env("sending on '%s': bind: %s", in.ifname, strerror(errno));
		goto out;
	}
	len = inject_frame(&in, frame);
	for (sent = 0; sent < in.count; sent++) {
		/* at least the gap from one frame to the next, never bunched up after a delay */
		if (sent) {
			ts_add_us(&next, in.gap_us);
			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
				;
		}
		if (send(fd, frame, len, 0) != (ssize_t)len) {
			if (errno == ENETDOWN)
				rc = -fs_err_env("'%s' is down: bring it up (ip link set %s up)",
						 in.ifname, in.ifname);
			else
				rc = -fs_err_env("sending on '%s': %s", in.ifname, strerror(errno));
			goto out;
		}
		clock_gettime(CLOCK_MONOTONIC, &next);
	}
	printf("sent %lu\n", sent);
out:
	close(fd);
	return rc;
}

/* ---- pfcap ---- */

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *dir_json(const struct pfcap_prio *p, int d)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:o}",
			 "frames", (json_int_t)p->frames[d], "xoff", (json_int_t)p->xoff[d],
			 "xon", (json_int_t)p->xon[d], "quanta", (json_int_t)p->quanta[d],
			 "paused_s", num_or_null(p->paused_s[d]));
}

static json_t *prio_json(const struct pfcap_prio *p)
{
	return json_pack("{s:o, s:o}", "rx", dir_json(p, PFCAP_RX), "tx", dir_json(p, PFCAP_TX));
}

static int print_counts(const char *ifname, const struct pfcap_counts *c, double t, int final)
{
	json_t *o, *prios = json_array();
	char *text;
	int p;

	for (p = 0; p < PFCAP_PRIOS; p++)
		json_array_append_new(prios, prio_json(&c->prio[p]));
	o = json_pack("{s:s, s:b, s:f, s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o}",
		      "ifname", ifname, "final", final, "t", t, "link_gbps", c->link_gbps,
		      "frames", (json_int_t)c->frames, "pfc", (json_int_t)c->pfc,
		      "pause", (json_int_t)c->pause, "other", (json_int_t)c->other,
		      "truncated", (json_int_t)c->truncated, "dropped", (json_int_t)c->dropped,
		      "prio", prios, "global", prio_json(&c->global));
	text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (!text)
		return -fs_err_env("unable to build the JSON counts");
	printf("%s\n", text);
	fflush(stdout);
	free(text);
	return 0;
}

static volatile sig_atomic_t pfcap_stopped;

static void on_stop_signal(int sig)
{
	pfcap_stopped = 1;
}

/* Sleep until deadline or a stop signal (looked at every 50 ms at least). */
static void sleep_until_ns(uint64_t deadline)
{
	uint64_t now;

	while (!pfcap_stopped && (now = clock_ns()) < deadline) {
		uint64_t ns = deadline - now < 50000000u ? deadline - now : 50000000u;
		struct timespec ts = { 0, (long)ns };

		nanosleep(&ts, NULL);
	}
}

static int cmd_pfcap(int argc, const char **argv)
{
	const char *ready = NULL, *pos[3];
	double seconds, gbps, interval = 0;
	struct sigaction sa = { 0 };
	struct pfcap_counts cnt;
	struct pfcap *c;
	uint64_t t0, end, next;
	int i, npos = 0, rc;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--ready") && i + 1 < argc) {
			ready = argv[++i];
		} else if (!strcmp(argv[i], "--interval") && i + 1 < argc) {
			if (parse_double("--interval", argv[++i], &interval))
				return FS_EXIT_USAGE;
		} else if (npos < 3 && strncmp(argv[i], "--", 2)) {
			pos[npos++] = argv[i];
		} else {
			npos = -1;
			break;
		}
	}
	if (npos != 3)
		return usage_error("usage: test-tool pfcap IF SECONDS LINK_GBPS [--ready FILE] "
				   "[--interval S]");
	if (parse_double("SECONDS", pos[1], &seconds) || parse_double("LINK_GBPS", pos[2], &gbps))
		return FS_EXIT_USAGE;
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	rc = pfcap_start(&c, pos[0], gbps);
	if (rc)
		return -rc;
	t0 = clock_ns();
	if (ready) {
		int fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (fd < 0) {
			pfcap_stop(c, NULL);
			return -fs_err_env("unable to create '%s': %s", ready, strerror(errno));
		}
		close(fd);
	}
	end = t0 + (uint64_t)(seconds * 1e9);
	if (interval > 0) {
		for (next = t0 + (uint64_t)(interval * 1e9); next < end;
		     next += (uint64_t)(interval * 1e9)) {
			sleep_until_ns(next);
			if (pfcap_stopped)
				break;
			pfcap_read(c, &cnt);
			rc = print_counts(pos[0], &cnt, (double)(clock_ns() - t0) / 1e9, 0);
			if (rc) {
				pfcap_stop(c, NULL);
				return rc;
			}
		}
	}
	sleep_until_ns(end);
	pfcap_stop(c, &cnt);
	return print_counts(pos[0], &cnt, (double)(clock_ns() - t0) / 1e9, 1);
}
int tool_pfcap(int argc, const char **argv)
{
	if (!strcmp(argv[0], "pfc-inject"))
		return cmd_pfc_inject(argc, argv);
	return cmd_pfcap(argc, argv);
}
